/* tests/test_quantile.c - the backend's |x| quantile (radix selection) against
 * a sorted reference with numpy's linear interpolation, on random inputs, on
 * inputs full of ties, with zeros and negative zeros, batched with a stride;
 * and the clamp and per-matrix normalization that ROOT and Muon use. */
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/backend.h"

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* numpy.quantile(|x|, q), method 'linear', in double */
static double ref_quantile(const float *x, int64_t n, double q)
{
    float *s = malloc((size_t)n * sizeof *s);
    for (int64_t i = 0; i < n; i++) s[i] = fabsf(x[i]);
    qsort(s, (size_t)n, sizeof *s, cmp_float);
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    double v = lo + 1 < n ? s[lo] + ((double)s[lo + 1] - s[lo]) * (pos - (double)lo) : s[lo];
    free(s);
    return v;
}

static void check_batch(ob_device *dev, float *x, int batch, int64_t n, int64_t stride, double q, const char *what)
{
    ob_err e;
    float *out, *work;
    CHECK_OK(ob_dev_alloc(dev, (size_t)batch * sizeof(float), (void **)&out, &e), &e);
    CHECK_OK(ob_dev_alloc(dev, (size_t)batch * stride * sizeof(float), (void **)&work, &e), &e);
    float *copy = malloc((size_t)batch * stride * sizeof *copy);
    memcpy(copy, x, (size_t)batch * stride * sizeof *copy);
    CHECK_OK(dev->ops->abs_quantile(dev, x, batch, n, stride, q, out, work, &e), &e);
    CHECK_MSG(memcmp(copy, x, (size_t)batch * stride * sizeof *copy) == 0, "%s: input changed", what);
    for (int b = 0; b < batch; b++) {
        double want = ref_quantile(x + b * stride, n, q);
        CHECK_MSG(fabs(out[b] - want) <= 1e-6 * fabs(want) + 1e-30, "%s, q=%g, matrix %d of %d (n=%lld): %.9g vs %.9g",
                  what, q, b, batch, (long long)n, (double)out[b], want);
    }
    free(copy);
    ob_dev_free(dev, out);
    ob_dev_free(dev, work);
}

static void test_random(ob_device *dev)
{
    const int64_t sizes[] = {1, 2, 3, 10, 257, 4096, 100003};
    const double qs[] = {0.0, 0.1, 0.5, 0.9, 0.999, 1.0};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        float *x = malloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++) x[i] = ob_rng_normal(7, (uint64_t)s, (uint64_t)i) * (i % 7 == 0 ? 100.0f : 1.0f);
        for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) check_batch(dev, x, 1, n, n, qs[k], "random");
        free(x);
    }
}

static void test_ties(ob_device *dev)
{
    /* few distinct magnitudes, both signs, zeros and -0: order statistics repeat */
    int64_t n = 1001;
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = ob_rng_below(3, 1, (uint64_t)i, 5);
        float v = k == 0 ? 0.0f : (float)k * 0.25f;
        x[i] = (i & 1) ? -v : v;
        if (k == 0 && (i & 2)) x[i] = -0.0f;
    }
    for (int k = 0; k <= 20; k++) check_batch(dev, x, 1, n, n, k / 20.0, "ties");
    for (int64_t i = 0; i < n; i++) x[i] = -3.5f; /* all equal */
    check_batch(dev, x, 1, n, n, 0.9, "all equal");
    free(x);
}

static void test_batched_and_clamp(ob_device *dev)
{
    const int batch = 5;
    const int64_t n = 37, stride = 48;
    float *x = calloc((size_t)(batch * stride), sizeof *x);
    for (int b = 0; b < batch; b++)
        for (int64_t i = 0; i < stride; i++)
            x[b * stride + i] = i < n ? (float)(b + 1) * ob_rng_normal(11, (uint64_t)b, (uint64_t)i) : 1e30f;
    check_batch(dev, x, batch, n, stride, 0.9, "batched (padding ignored)");
    ob_err e;
    float thr[5];
    float *work = malloc((size_t)(batch * stride) * sizeof *work);
    CHECK_OK(dev->ops->abs_quantile(dev, x, batch, n, stride, 0.9, thr, work, &e), &e);
    CHECK_OK(dev->ops->clamp_abs(dev, x, batch, n, stride, thr, 1e-9f, &e), &e);
    for (int b = 0; b < batch; b++) {
        int above = 0;
        for (int64_t i = 0; i < n; i++) above += fabsf(x[b * stride + i]) > thr[b] + 1e-9f;
        CHECK_MSG(above == 0, "matrix %d: %d values above the threshold", b, above);
    }
    /* normalization: ||x_b|| = 1 (max(norm, eps)); a zero matrix stays zero */
    memset(x + 2 * stride, 0, (size_t)stride * sizeof *x);
    CHECK_OK(dev->ops->batched_normalize(dev, x, batch, n, stride, 1e-7f, 0, &e), &e);
    for (int b = 0; b < batch; b++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += (double)x[b * stride + i] * x[b * stride + i];
        CHECK_NEAR(s, b == 2 ? 0.0 : 1.0, 1e-5);
    }
    free(work);
    free(x);
}

int main(void)
{
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    test_random(&dev);
    test_ties(&dev);
    test_batched_and_clamp(&dev);
    ob_device_close(&dev);
    return check_done();
}
