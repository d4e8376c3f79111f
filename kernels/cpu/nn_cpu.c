/* kernels/cpu/nn_cpu.c - transformer layers and cross-entropy on the CPU.
 *
 * The CPU bodies of the "neural-network layers" slots of kernels/backend.h
 * used by the bert workload: token/position embedding, LayerNorm, bias,
 * GELU, the head split/merge permutations of attention, row softmax, row
 * gather/scatter and softmax cross-entropy. Matrix products are not here:
 * the workloads call the backend's gemm (OpenBLAS). OpenMP runs over
 * independent outputs; every reduction is summed in a fixed order (reductions
 * over rows use OB_CPU_RED_CHUNKS chunks combined in order), so the results do
 * not depend on the number of threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/nn_cpu.h"

/* Loops with less work than this run on one thread. */
#define NN_PAR_MIN 16384

/* exp(x) in float that the compiler vectorizes (libm's expf/tanhf are
 * scalar calls): x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, two-part ln2),
 * e^r by its degree-7 Taylor polynomial (relative error below 2e-7, about
 * one ulp), 2^n through the exponent bits. x is clamped to [-87, 88]: e^-87
 * is 1.6e-38 (softmax underflows to that instead of 0); an infinite x gives
 * NaN (only a diverged run has one). Deterministic. */
static inline float nn_expf(float x)
{
    float lo = x < -87.0f ? 1.0f : 0.0f; /* clamp by arithmetic: the loops stay vectorizable */
    x = x + lo * (-87.0f - x);
    float hi = x > 88.0f ? 1.0f : 0.0f;
    x = x + hi * (88.0f - x);
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = x - n * 0.693145751953125f;
    r = r - n * 1.42860682030941723e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f + r * (0.0416666679f + r * (0.00833333377f +
                                                                    r * (0.00138888892f + r * 0.000198412701f))))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* tanh(u) = 1 - 2 / (e^{2u} + 1); absolute error about 1e-7. */
static inline float nn_tanhf(float u)
{
    return 1.0f - 2.0f / (nn_expf(2.0f * u) + 1.0f);
}

ob_status ob_cpu_embedding_forward(ob_device *dev, float *out, const int32_t *tokens, const float *wte,
                                   const float *wpe, int N, int T, int C, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int n = 0; n < N; n++) {
        float *o = out + (int64_t)n * C;              /* (C) */
        const float *we = wte + (int64_t)tokens[n] * C; /* (C) */
        if (wpe) {
            const float *pe = wpe + (int64_t)(n % T) * C;
            for (int c = 0; c < C; c++) o[c] = we[c] + pe[c];
        } else {
            memcpy(o, we, (size_t)C * sizeof *o);
        }
    }
    return OB_OK;
}

/* Deterministic without atomics: each thread owns a block of channels and
 * walks the rows in order. */
#define EMB_CB 16
ob_status ob_cpu_embedding_backward(ob_device *dev, float *dwte, float *dwpe, const float *dout,
                                    const int32_t *tokens, int N, int T, int C, int V, ob_err *e)
{
    (void)dev;
    (void)e;
    (void)V;
    int nb = (C + EMB_CB - 1) / EMB_CB;
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int cb = 0; cb < nb; cb++) {
        int c0 = cb * EMB_CB, c1 = c0 + EMB_CB < C ? c0 + EMB_CB : C;
        for (int n = 0; n < N; n++) {
            const float *d = dout + (int64_t)n * C;
            float *gw = dwte + (int64_t)tokens[n] * C;
            for (int c = c0; c < c1; c++) gw[c] += d[c];
            if (dwpe) {
                float *gp = dwpe + (int64_t)(n % T) * C;
                for (int c = c0; c < c1; c++) gp[c] += d[c];
            }
        }
    }
    return OB_OK;
}

ob_status ob_cpu_layernorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int N, int C, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (int64_t)n * C; /* (C) */
        float *o = out + (int64_t)n * C;
        float m = 0.0f;
        for (int c = 0; c < C; c++) m += x[c];
        m /= (float)C;
        float v = 0.0f;
        for (int c = 0; c < C; c++) {
            float d = x[c] - m;
            v += d * d;
        }
        v /= (float)C;
        float s = 1.0f / sqrtf(v + 1e-5f);
        for (int c = 0; c < C; c++) o[c] = (x[c] - m) * s * w[c] + b[c];
        mean[n] = m;
        rstd[n] = s;
    }
    return OB_OK;
}

/* One pass over fixed row chunks: dinp rows, and per-chunk partial sums of
 * dw = sum dout * xhat, db = sum dout, combined in chunk order. */
ob_status ob_cpu_layernorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int N, int C, ob_err *e)
{
    (void)dev;
    int nch = ob_cpu_red_nchunks(N);
    double *part = calloc((size_t)nch * 2 * (size_t)C, sizeof *part); /* (nch, 2, C) */
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "layernorm_backward: out of memory");
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int ch = 0; ch < nch; ch++) {
        int n0 = (int)((int64_t)N * ch / nch), n1 = (int)((int64_t)N * (ch + 1) / nch);
        double *pw = part + (size_t)ch * 2 * (size_t)C, *pb = pw + C;
        for (int n = n0; n < n1; n++) {
            const float *x = inp + (int64_t)n * C, *d = dout + (int64_t)n * C;
            float *dx = dinp + (int64_t)n * C;
            float m = mean[n], s = rstd[n];
            float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
            for (int c = 0; c < C; c++) {
                float xh = (x[c] - m) * s;
                float dn = w[c] * d[c];
                dnorm_mean += dn;
                dnorm_norm_mean += dn * xh;
                pw[c] += (double)d[c] * xh;
                pb[c] += d[c];
            }
            dnorm_mean /= (float)C;
            dnorm_norm_mean /= (float)C;
            for (int c = 0; c < C; c++) {
                float xh = (x[c] - m) * s;
                float dn = w[c] * d[c];
                dx[c] += (dn - dnorm_mean - xh * dnorm_norm_mean) * s;
            }
        }
    }
    for (int c = 0; c < C; c++) {
        double sw = 0, sb = 0;
        for (int ch = 0; ch < nch; ch++) {
            sw += part[(size_t)ch * 2 * (size_t)C + c];
            sb += part[(size_t)ch * 2 * (size_t)C + C + c];
        }
        dw[c] += (float)sw;
        db[c] += (float)sb;
    }
    free(part);
    return OB_OK;
}

ob_status ob_cpu_bias_add(ob_device *dev, float *x, const float *b, int N, int C, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int n = 0; n < N; n++) {
        float *r = x + (int64_t)n * C;
        for (int c = 0; c < C; c++) r[c] += b[c];
    }
    return OB_OK;
}

ob_status ob_cpu_bias_backward(ob_device *dev, float *db, const float *dout, int N, int C, ob_err *e)
{
    (void)dev;
    int nch = ob_cpu_red_nchunks(N);
    double *part = calloc((size_t)nch * (size_t)C, sizeof *part); /* (nch, C) */
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "bias_backward: out of memory");
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int ch = 0; ch < nch; ch++) {
        int n0 = (int)((int64_t)N * ch / nch), n1 = (int)((int64_t)N * (ch + 1) / nch);
        double *p = part + (size_t)ch * (size_t)C;
        for (int n = n0; n < n1; n++) {
            const float *d = dout + (int64_t)n * C;
            for (int c = 0; c < C; c++) p[c] += d[c];
        }
    }
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int ch = 0; ch < nch; ch++) s += part[(size_t)ch * (size_t)C + c];
        db[c] += (float)s;
    }
    free(part);
    return OB_OK;
}

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */

ob_status ob_cpu_gelu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for simd if (n > NN_PAR_MIN)
    for (int64_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + nn_tanhf(GELU_K * (x + 0.044715f * x * x * x)));
    }
    return OB_OK;
}

ob_status ob_cpu_gelu_backward(ob_device *dev, float *dinp, const float *inp, const float *dout, int64_t n,
                               ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for simd if (n > NN_PAR_MIN)
    for (int64_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = GELU_K * (x + 0.044715f * x * x * x);
        float t = nn_tanhf(u);
        float sech2 = 1.0f - t * t;
        float g = 0.5f * (1.0f + t) + 0.5f * x * sech2 * GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] = g * dout[i];
    }
    return OB_OK;
}

/* src (B,T,nsec,NH,HS) -> dst (nsec,B,NH,T,HS) */
ob_status ob_cpu_heads_split(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                             int HS, ob_err *e)
{
    (void)dev;
    (void)e;
    int64_t C = (int64_t)NH * HS, sec = (int64_t)B * T * C;
#pragma omp parallel for if ((int64_t)B * T * nsec * C > NN_PAR_MIN)
    for (int bt = 0; bt < B * T; bt++) {
        int b = bt / T, t = bt % T;
        const float *row = src + (int64_t)bt * nsec * C;
        for (int s = 0; s < nsec; s++)
            for (int h = 0; h < NH; h++) {
                float *d = dst + s * sec + (((int64_t)b * NH + h) * T + t) * HS;
                const float *r = row + s * C + (int64_t)h * HS;
                for (int i = 0; i < HS; i++) d[i] = r[i];
            }
    }
    return OB_OK;
}

/* src (nsec,B,NH,T,HS) -> dst (B,T,nsec,NH,HS) */
ob_status ob_cpu_heads_merge(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                             int HS, ob_err *e)
{
    (void)dev;
    (void)e;
    int64_t C = (int64_t)NH * HS, sec = (int64_t)B * T * C;
#pragma omp parallel for if ((int64_t)B * T * nsec * C > NN_PAR_MIN)
    for (int bt = 0; bt < B * T; bt++) {
        int b = bt / T, t = bt % T;
        float *row = dst + (int64_t)bt * nsec * C;
        for (int s = 0; s < nsec; s++)
            for (int h = 0; h < NH; h++) {
                float *d = row + s * C + (int64_t)h * HS;
                const float *r = src + s * sec + (((int64_t)b * NH + h) * T + t) * HS;
                for (int i = 0; i < HS; i++) d[i] = r[i];
            }
    }
    return OB_OK;
}

ob_status ob_cpu_softmax_forward(ob_device *dev, float *x, int R, int L, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)R * L > NN_PAR_MIN)
    for (int r = 0; r < R; r++) {
        float *row = x + (int64_t)r * L; /* (L) */
        float mx = -INFINITY;
        for (int i = 0; i < L; i++) mx = row[i] > mx ? row[i] : mx;
#pragma omp simd
        for (int i = 0; i < L; i++) row[i] = nn_expf(row[i] - mx);
        float s = 0.0f;
        for (int i = 0; i < L; i++) s += row[i];
        float inv = 1.0f / s;
        for (int i = 0; i < L; i++) row[i] *= inv;
    }
    return OB_OK;
}

ob_status ob_cpu_softmax_backward(ob_device *dev, float *dx, const float *dy, const float *y, int R, int L,
                                  ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)R * L > NN_PAR_MIN)
    for (int r = 0; r < R; r++) {
        const float *yr = y + (int64_t)r * L, *dyr = dy + (int64_t)r * L;
        float *dxr = dx + (int64_t)r * L;
        float s = 0.0f;
        for (int i = 0; i < L; i++) s += dyr[i] * yr[i];
        for (int i = 0; i < L; i++) dxr[i] = yr[i] * (dyr[i] - s);
    }
    return OB_OK;
}

ob_status ob_cpu_rows_gather(ob_device *dev, float *out, const float *inp, const int32_t *idx, int M, int C,
                             ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)M * C > NN_PAR_MIN)
    for (int m = 0; m < M; m++)
        memcpy(out + (int64_t)m * C, inp + (int64_t)idx[m] * C, (size_t)C * sizeof(float));
    return OB_OK;
}

ob_status ob_cpu_rows_scatter_add(ob_device *dev, float *dinp, const float *dout, const int32_t *idx, int M,
                                  int C, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)M * C > NN_PAR_MIN)
    for (int m = 0; m < M; m++) {
        float *d = dinp + (int64_t)idx[m] * C;
        const float *s = dout + (int64_t)m * C;
        for (int c = 0; c < C; c++) d[c] += s[c];
    }
    return OB_OK;
}

ob_status ob_cpu_xent_forward(ob_device *dev, float *probs, float *losses, const float *logits,
                              const int32_t *targets, int M, int V, float *loss, float *correct, ob_err *e)
{
    (void)dev;
    unsigned char *hit = correct ? malloc(M > 0 ? (size_t)M : 1) : NULL;
    if (correct && !hit) return ob_fail(e, OB_ERR_NOMEM, "xent_forward: out of memory");
#pragma omp parallel for if ((int64_t)M * V > NN_PAR_MIN)
    for (int m = 0; m < M; m++) {
        const float *l = logits + (int64_t)m * V; /* (V) */
        float *p = probs + (int64_t)m * V;
        int t = targets[m];
        float mx = -INFINITY;
        int arg = 0;
        for (int v = 0; v < V; v++)
            if (l[v] > mx) {
                mx = l[v];
                arg = v;
            }
        float lt = l[t]; /* before p overwrites an aliased l */
#pragma omp simd
        for (int v = 0; v < V; v++) p[v] = nn_expf(l[v] - mx);
        double s = 0.0;
        for (int v = 0; v < V; v++) s += p[v];
        losses[m] = (float)(log(s) - (double)(lt - mx));
        float inv = (float)(1.0 / s);
        for (int v = 0; v < V; v++) p[v] *= inv;
        if (hit) hit[m] = arg == t;
    }
    double s = 0.0, c = 0.0;
    for (int m = 0; m < M; m++) {
        s += losses[m];
        if (hit) c += hit[m];
    }
    *loss = M > 0 ? (float)(s / M) : 0.0f;
    if (correct) *correct = (float)c;
    free(hit);
    return OB_OK;
}

ob_status ob_cpu_xent_backward(ob_device *dev, float *dlogits, const float *probs, const int32_t *targets,
                               int M, int V, float scale, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)M * V > NN_PAR_MIN)
    for (int m = 0; m < M; m++) {
        const float *p = probs + (int64_t)m * V;
        float *d = dlogits + (int64_t)m * V;
        for (int v = 0; v < V; v++) d[v] = p[v] * scale;
        d[targets[m]] -= scale;
    }
    return OB_OK;
}
