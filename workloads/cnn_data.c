/* workloads/cnn_data.c - smooth random class templates for the cnn workload
 * (see cnn_data.h). Built once on the host in double, then stored as float. */
#include <math.h>
#include <stdlib.h>

#include "core/rng.h"
#include "workloads/cnn_data.h"

/* One smooth periodic field f (H, W, C) from (seed, stream), zero mean, unit RMS. */
static void smooth_field(double *f, int H, int W, int C, uint64_t seed, uint64_t stream)
{
    const int64_t n = (int64_t)H * W * C;
    for (int64_t i = 0; i < n; i++) f[i] = 0.0;
    for (int c = 0; c < C; c++)
        for (int j = 0; j < OB_CNN_WAVES; j++) {
            ob_u32x4 r = ob_philox(seed, stream, (uint64_t)c * 1024u + (uint64_t)j);
            int fy = (int)(((uint64_t)r.v[0] * 7u) >> 32) - 3;
            int fx = (int)(((uint64_t)r.v[1] * 7u) >> 32) - 3;
            if (fy == 0 && fx == 0) fx = 1;
            double phase = 6.283185307179586 * ob_u32_to_unit(r.v[2]);
            double amp = ob_rng_normal(seed, stream + 8, (uint64_t)c * 1024u + (uint64_t)j) /
                         sqrt((double)(fy * fy + fx * fx));
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    f[((int64_t)y * W + x) * C + c] +=
                        amp * cos(6.283185307179586 * ((double)fy * y / H + (double)fx * x / W) + phase);
        }
    double mean = 0.0, ss = 0.0;
    for (int64_t i = 0; i < n; i++) mean += f[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++) {
        f[i] -= mean;
        ss += f[i] * f[i];
    }
    double inv = ss > 0 ? 1.0 / sqrt(ss / (double)n) : 1.0;
    for (int64_t i = 0; i < n; i++) f[i] *= inv;
}

ob_status ob_cnn_templates(float *out, int K, int H, int W, int C, int pairs, double confusion,
                           uint64_t data_seed, ob_err *e)
{
    const int64_t n = (int64_t)H * W * C;
    double *f = malloc((size_t)n * sizeof *f), *r = malloc((size_t)n * sizeof *r);
    if (!f || !r) {
        free(f);
        free(r);
        return ob_fail(e, OB_ERR_NOMEM, "cnn: out of memory for the class templates");
    }
    for (int k = 0; k < K; k++) {
        int confusable = (k % 2 == 1) && (k / 2 < pairs);
        if (confusable) {
            /* the partner's template plus a faint field, renormalized */
            smooth_field(f, H, W, C, data_seed, OB_STREAM_WORLD + 16 + 16 * (uint64_t)(k - 1));
            smooth_field(r, H, W, C, data_seed, OB_STREAM_WORLD + 16 + 16 * (uint64_t)k + 1);
            double ss = 0.0;
            for (int64_t i = 0; i < n; i++) {
                f[i] += confusion * r[i];
                ss += f[i] * f[i];
            }
            double inv = 1.0 / sqrt(ss / (double)n);
            for (int64_t i = 0; i < n; i++) f[i] *= inv;
        } else {
            smooth_field(f, H, W, C, data_seed, OB_STREAM_WORLD + 16 + 16 * (uint64_t)k);
        }
        for (int64_t i = 0; i < n; i++) out[k * n + i] = (float)f[i];
    }
    free(f);
    free(r);
    return OB_OK;
}
