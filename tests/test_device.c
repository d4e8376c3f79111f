/* tests/test_device.c - backend selection and tracked device memory. */
#include <string.h>

#include "check.h"
#include "kernels/backend.h"

int main(void)
{
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    CHECK(!strcmp(dev.ops->name, "cpu") && dev.bytes_in_use == 0 && dev.bytes_peak == 0);
    void *a, *b;
    CHECK_OK(ob_dev_alloc(&dev, 1000, &a, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, 3000, &b, &e), &e);
    CHECK(((uintptr_t)a % 64) == 0 && ((uintptr_t)b % 64) == 0);
    CHECK(dev.bytes_in_use == 4000 && dev.bytes_peak == 4000);
    ob_dev_free(&dev, b);
    CHECK(dev.bytes_in_use == 1000 && dev.bytes_peak == 4000);
    ob_dev_reset_peak(&dev);
    CHECK(dev.bytes_peak == 1000);
    CHECK_OK(ob_dev_alloc(&dev, 500, &b, &e), &e);
    CHECK(dev.bytes_peak == 1500);
    /* memory comes zeroed */
    const unsigned char *z = b;
    int zero = 1;
    for (int i = 0; i < 500; i++) zero &= z[i] == 0;
    CHECK(zero);
    ob_device_close(&dev); /* frees what is left */

    CHECK(ob_device_open(&dev, "tpu", 0, &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "unknown backend 'tpu'") != NULL);
    /* auto always opens something: CUDA with a device, else the CPU */
    CHECK_OK(ob_device_open(&dev, "auto", 0, &e), &e);
    CHECK(dev.desc[0] != '\0');
    ob_device_close(&dev);
    /* a CUDA build loads its backend module (GPU or not) */
    CHECK_MSG(!ob_cuda_backend_built() || ob_cuda_backend_ops(), "%s", ob_cuda_backend_missing());
    if (!ob_cuda_backend_ops()) {
        CHECK(ob_device_open(&dev, "cuda", 0, &e) == OB_ERR_INPUT);
        CHECK(strstr(e.msg, ob_cuda_backend_missing()) != NULL);
        if (!ob_cuda_backend_built()) CHECK(strstr(e.msg, "this build has no CUDA backend") != NULL);
    }
    return check_done();
}
