/* tests/dev_io.h - device memory from and to the host, for the tests of
 * backend ops: dev_put allocates n floats on d (uploading h when it is not
 * NULL), dev_get downloads n floats; a failure ends the test program with the
 * backend's message. Include after check.h. */
#ifndef OB_TESTS_DEV_IO_H
#define OB_TESTS_DEV_IO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/backend.h"

static inline float *dev_put(ob_device *d, const float *h, int64_t n)
{
    ob_err e;
    float *p = NULL;
    if (ob_dev_alloc(d, (size_t)(n > 0 ? n : 1) * sizeof(float), (void **)&p, &e) != OB_OK) {
        fprintf(stderr, "alloc failed: %s\n", e.msg);
        exit(1);
    }
    if (h && n > 0 && d->ops->upload(d, p, h, (size_t)n * sizeof(float), &e) != OB_OK) {
        fprintf(stderr, "upload failed: %s\n", e.msg);
        exit(1);
    }
    return p;
}

/* bytes of h (not NULL) in a new allocation on d */
static inline void *dev_put_bytes(ob_device *d, const void *h, size_t bytes)
{
    ob_err e;
    void *p = NULL;
    if (ob_dev_alloc(d, bytes, &p, &e) != OB_OK || d->ops->upload(d, p, h, bytes, &e) != OB_OK) {
        fprintf(stderr, "alloc or upload failed: %s\n", e.msg);
        exit(1);
    }
    return p;
}

static inline void dev_get(ob_device *d, float *h, const float *p, int64_t n)
{
    ob_err e;
    if (d->ops->download(d, h, p, (size_t)(n > 0 ? n : 0) * sizeof(float), &e) != OB_OK) {
        fprintf(stderr, "download failed: %s\n", e.msg);
        exit(1);
    }
}

#endif
