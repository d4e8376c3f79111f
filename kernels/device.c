/* kernels/device.c - backend selection and tracked device allocation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"

struct ob_alloc_rec {
    void *p;
    size_t bytes;
};

ob_status ob_device_open(ob_device *dev, const char *backend, int index, ob_err *e)
{
    memset(dev, 0, sizeof *dev);
    /* the CUDA backend is loaded only where it may be used */
    const int cpu = !strcmp(backend, "cpu");
    const ob_backend_ops *cuda = cpu ? NULL : ob_cuda_backend_ops();
    const ob_backend_ops *ops = NULL;
    if (cpu) {
        ops = &ob_cpu_backend;
    } else if (!strcmp(backend, "cuda")) {
        if (!cuda) return ob_fail(e, OB_ERR_INPUT, "--backend cuda: %s", ob_cuda_backend_missing());
        char desc[256];
        if (!cuda->probe(index, desc, sizeof desc))
            return ob_fail(e, OB_ERR_INPUT, "--backend cuda: no usable CUDA device: %s", desc);
        ops = cuda;
    } else if (!strcmp(backend, "auto")) {
        char desc[256];
        ops = (cuda && cuda->probe(index, desc, sizeof desc)) ? cuda : &ob_cpu_backend;
    } else {
        return ob_fail(e, OB_ERR_INPUT, "unknown backend '%s' (use cpu, cuda or auto)", backend);
    }
    dev->ops = ops;
    dev->index = index;
    return ops->open(dev, index, e);
}

void ob_device_close(ob_device *dev)
{
    if (!dev->ops) return;
    for (int i = 0; i < dev->n_allocs; i++) dev->ops->release(dev, dev->allocs[i].p);
    free(dev->allocs);
    dev->allocs = NULL;
    dev->n_allocs = dev->cap_allocs = 0;
    dev->ops->close(dev);
    dev->ops = NULL;
}

ob_status ob_dev_alloc(ob_device *dev, size_t bytes, void **out, ob_err *e)
{
    *out = NULL;
    if (bytes == 0) bytes = 64;
    if (dev->n_allocs == dev->cap_allocs) {
        int cap = dev->cap_allocs ? 2 * dev->cap_allocs : 32;
        struct ob_alloc_rec *a = realloc(dev->allocs, (size_t)cap * sizeof *a);
        if (!a) return ob_fail(e, OB_ERR_NOMEM, "out of host memory for the allocation table");
        dev->allocs = a;
        dev->cap_allocs = cap;
    }
    void *p = NULL;
    OB_TRY(dev->ops->alloc(dev, bytes, &p, e));
    dev->allocs[dev->n_allocs].p = p;
    dev->allocs[dev->n_allocs].bytes = bytes;
    dev->n_allocs++;
    dev->bytes_in_use += bytes;
    if (dev->bytes_in_use > dev->bytes_peak) dev->bytes_peak = dev->bytes_in_use;
    *out = p;
    return OB_OK;
}

void ob_dev_free(ob_device *dev, void *p)
{
    if (!p) return;
    for (int i = 0; i < dev->n_allocs; i++) {
        if (dev->allocs[i].p == p) {
            dev->bytes_in_use -= dev->allocs[i].bytes;
            dev->allocs[i] = dev->allocs[dev->n_allocs - 1];
            dev->n_allocs--;
            dev->ops->release(dev, p);
            return;
        }
    }
}

void ob_dev_reset_peak(ob_device *dev)
{
    dev->bytes_peak = dev->bytes_in_use;
}

ob_status ob_dev_require(const ob_device *dev, int present, const char *op, ob_err *e)
{
    if (present) return OB_OK;
    return ob_fail(e, OB_ERR_UNSUPPORTED, "the %s backend has no '%s' operation", dev->ops->name, op);
}
