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
 *
 * The per-element loops are marked omp simd (GCC's -O2 cost model does not
 * vectorize a loop of unknown length) and, on x86-64 with GCC, every op is
 * compiled three times by target_clones: AVX-512F, AVX2 and the baseline
 * SSE2 (GCC clones the OpenMP bodies too; an ifunc picks the widest the CPU
 * has when the program loads). Row sums run several rows side by side (see
 * nn_rows). All builds give the same bits as one row at a time in plain
 * scalar code: ISO C mode contracts no multiply-add, and the loops vectorize
 * only across independent elements or rows, never the order of a sum. On a
 * bert-small step at one thread these ops went from about 20% of the time
 * to about 6% (nearly all the rest is sgemm).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/nn_cpu.h"

/* Loops with less work than this run on one thread. */
#define NN_PAR_MIN 16384

#define NN_CLONES OB_CPU_CLONES /* kernels/cpu/cpu.h */

/* exp(x) in float that the compiler vectorizes (libm's expf/tanhf are
 * scalar calls): x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, two-part ln2),
 * e^r by its degree-7 Taylor polynomial (relative error below 2e-7, about
 * one ulp), 2^n through the exponent bits. x is clamped to [-87, 88]: e^-87
 * is 1.6e-38 (softmax underflows to that instead of 0), e^88 is 1.7e38, also
 * for an infinite x; NaN stays NaN. Deterministic. */
static inline float nn_expf(float x)
{
    /* the clamp selects bit patterns through masks: exact for every x (x +
     * lo * (-87 - x) is not, -87 - x rounds once |x| passes 2^27 and e^-3e8
     * came out -2e35), and gcc vectorizes it in every clone (a ?: select or
     * a blend by a 0/1 weight it turns into a branch outside AVX-512) */
    int32_t xb, lob, hib;
    const float lo = -87.0f, hi = 88.0f;
    memcpy(&xb, &x, sizeof xb);
    memcpy(&lob, &lo, sizeof lob);
    memcpy(&hib, &hi, sizeof hib);
    const int32_t below = -(int32_t)(x < lo), above = -(int32_t)(x > hi); /* all ones or zero */
    xb = (xb & ~below) | (lob & below);
    xb = (xb & ~above) | (hib & above);
    memcpy(&x, &xb, sizeof x);
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

/* Row sums are dependent chains of adds, bound by the add latency one row
 * at a time. The forward row ops (LayerNorm, softmax, cross-entropy)
 * therefore take NN_RB rows at a time and run their sums side by side, the
 * rows as the lanes (a sum is never split within a row): each row is still
 * summed in its index order, so the bits are those of one row at a time, for
 * any ISA. (The backward ops measured faster one row at a time inside a bert
 * step: there they are bound by memory, and NN_RB rows of two inputs spill
 * the row pointers.)
 * nn_rows points rows[r] at row r0 + r of x (rows of n floats), repeating
 * the last row where r0 + r >= R (the repeats are computed and not stored);
 * it returns the number of real rows. */
#define NN_RB 8 /* the "GCC unroll 8" pragmas below unroll loops over it */
static inline int nn_rows(const float *x, int64_t n, int r0, int R, const float **rows)
{
    int nr = R - r0 < NN_RB ? R - r0 : NN_RB;
    for (int r = 0; r < NN_RB; r++) rows[r] = x + (int64_t)(r0 + (r < nr ? r : nr - 1)) * n;
    return nr;
}

NN_CLONES
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
#pragma omp simd
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
NN_CLONES
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
#pragma omp simd
            for (int c = c0; c < c1; c++) gw[c] += d[c];
            if (dwpe) {
                float *gp = dwpe + (int64_t)(n % T) * C;
#pragma omp simd
                for (int c = c0; c < c1; c++) gp[c] += d[c];
            }
        }
    }
    return OB_OK;
}

NN_CLONES
ob_status ob_cpu_layernorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int N, int C, ob_err *e)
{
    (void)dev;
    (void)e;
    int nblk = (N + NN_RB - 1) / NN_RB;
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int blk = 0; blk < nblk; blk++) {
        const float *x[NN_RB]; /* NN_RB rows of (C) */
        int n0 = blk * NN_RB, nr = nn_rows(inp, C, n0, N, x);
        float m[NN_RB], v[NN_RB];
        for (int r = 0; r < NN_RB; r++) m[r] = v[r] = 0.0f;
        for (int c = 0; c < C; c++)
#pragma GCC unroll 8
            for (int r = 0; r < NN_RB; r++) m[r] += x[r][c];
        for (int r = 0; r < NN_RB; r++) m[r] /= (float)C;
        for (int c = 0; c < C; c++)
#pragma GCC unroll 8
            for (int r = 0; r < NN_RB; r++) {
                float d = x[r][c] - m[r];
                v[r] += d * d;
            }
        for (int r = 0; r < nr; r++) {
            const float *xr = x[r];
            float *o = out + (int64_t)(n0 + r) * C; /* (C) */
            float mr = m[r], s = 1.0f / sqrtf(v[r] / (float)C + 1e-5f);
#pragma omp simd
            for (int c = 0; c < C; c++) o[c] = (xr[c] - mr) * s * w[c] + b[c];
            mean[n0 + r] = mr;
            rstd[n0 + r] = s;
        }
    }
    return OB_OK;
}

/* One pass over fixed row chunks: dinp rows, and per-chunk partial sums of
 * dw = sum dout * xhat, db = sum dout, combined in chunk order. */
NN_CLONES
ob_status ob_cpu_layernorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int N, int C, ob_err *e)
{
    (void)dev;
    int nch = ob_cpu_red_nchunks(N);
    /* (nch + 1, 2, C): the chunks' partial sums of dw | db, then their total */
    double *part = calloc((size_t)(nch + 1) * 2 * (size_t)C, sizeof *part);
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
            }
            dnorm_mean /= (float)C;
            dnorm_norm_mean /= (float)C;
#pragma omp simd
            for (int c = 0; c < C; c++) {
                float xh = (x[c] - m) * s;
                float dn = w[c] * d[c];
                dx[c] += (dn - dnorm_mean - xh * dnorm_norm_mean) * s;
                pw[c] += (double)d[c] * xh;
                pb[c] += d[c];
            }
        }
    }
    double *tot = part + (size_t)nch * 2 * (size_t)C; /* (2, C) */
    for (int ch = 0; ch < nch; ch++) {
        const double *p = part + (size_t)ch * 2 * (size_t)C;
#pragma omp simd
        for (int c = 0; c < 2 * C; c++) tot[c] += p[c];
    }
#pragma omp simd
    for (int c = 0; c < C; c++) {
        dw[c] += (float)tot[c];
        db[c] += (float)tot[C + c];
    }
    free(part);
    return OB_OK;
}

NN_CLONES
ob_status ob_cpu_bias_add(ob_device *dev, float *x, const float *b, int N, int C, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int n = 0; n < N; n++) {
        float *r = x + (int64_t)n * C;
#pragma omp simd
        for (int c = 0; c < C; c++) r[c] += b[c];
    }
    return OB_OK;
}

NN_CLONES
ob_status ob_cpu_bias_backward(ob_device *dev, float *db, const float *dout, int N, int C, ob_err *e)
{
    (void)dev;
    int nch = ob_cpu_red_nchunks(N);
    double *part = calloc((size_t)(nch + 1) * (size_t)C, sizeof *part); /* (nch + 1, C): chunks, total */
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "bias_backward: out of memory");
#pragma omp parallel for if ((int64_t)N * C > NN_PAR_MIN)
    for (int ch = 0; ch < nch; ch++) {
        int n0 = (int)((int64_t)N * ch / nch), n1 = (int)((int64_t)N * (ch + 1) / nch);
        double *p = part + (size_t)ch * (size_t)C;
        for (int n = n0; n < n1; n++) {
            const float *d = dout + (int64_t)n * C;
#pragma omp simd
            for (int c = 0; c < C; c++) p[c] += d[c];
        }
    }
    double *tot = part + (size_t)nch * (size_t)C; /* (C) */
    for (int ch = 0; ch < nch; ch++) {
        const double *p = part + (size_t)ch * (size_t)C;
#pragma omp simd
        for (int c = 0; c < C; c++) tot[c] += p[c];
    }
#pragma omp simd
    for (int c = 0; c < C; c++) db[c] += (float)tot[c];
    free(part);
    return OB_OK;
}

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */

NN_CLONES
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

NN_CLONES
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
NN_CLONES
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
                memcpy(d, r, (size_t)HS * sizeof *d);
            }
    }
    return OB_OK;
}

/* src (nsec,B,NH,T,HS) -> dst (B,T,nsec,NH,HS) */
NN_CLONES
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
                memcpy(d, r, (size_t)HS * sizeof *d);
            }
    }
    return OB_OK;
}

NN_CLONES
ob_status ob_cpu_softmax_forward(ob_device *dev, float *x, int R, int L, ob_err *e)
{
    (void)dev;
    (void)e;
    int nblk = (R + NN_RB - 1) / NN_RB;
#pragma omp parallel for if ((int64_t)R * L > NN_PAR_MIN)
    for (int blk = 0; blk < nblk; blk++) {
        const float *rows[NN_RB]; /* NN_RB rows of (L), see nn_rows */
        int r0 = blk * NN_RB, nr = nn_rows(x, L, r0, R, rows);
        float mx[NN_RB], s[NN_RB];
        for (int r = 0; r < NN_RB; r++) {
            mx[r] = -INFINITY;
            s[r] = 0.0f;
        }
        for (int i = 0; i < L; i++)
#pragma GCC unroll 8
            for (int r = 0; r < NN_RB; r++) mx[r] = rows[r][i] > mx[r] ? rows[r][i] : mx[r];
        for (int r = 0; r < nr; r++) {
            float *row = x + (int64_t)(r0 + r) * L, m = mx[r];
#pragma omp simd
            for (int i = 0; i < L; i++) row[i] = nn_expf(row[i] - m);
        }
        for (int i = 0; i < L; i++)
#pragma GCC unroll 8
            for (int r = 0; r < NN_RB; r++) s[r] += rows[r][i];
        for (int r = 0; r < nr; r++) {
            float *row = x + (int64_t)(r0 + r) * L, inv = 1.0f / s[r];
#pragma omp simd
            for (int i = 0; i < L; i++) row[i] *= inv;
        }
    }
    return OB_OK;
}

NN_CLONES
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
#pragma omp simd
        for (int i = 0; i < L; i++) dxr[i] = yr[i] * (dyr[i] - s);
    }
    return OB_OK;
}

NN_CLONES
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

NN_CLONES
ob_status ob_cpu_rows_scatter_add(ob_device *dev, float *dinp, const float *dout, const int32_t *idx, int M,
                                  int C, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)M * C > NN_PAR_MIN)
    for (int m = 0; m < M; m++) {
        float *d = dinp + (int64_t)idx[m] * C;
        const float *s = dout + (int64_t)m * C;
#pragma omp simd
        for (int c = 0; c < C; c++) d[c] += s[c];
    }
    return OB_OK;
}

NN_CLONES
ob_status ob_cpu_xent_forward(ob_device *dev, float *probs, float *losses, const float *logits,
                              const int32_t *targets, int M, int V, float *loss, float *correct, ob_err *e)
{
    (void)dev;
    unsigned char *hit = correct ? malloc(M > 0 ? (size_t)M : 1) : NULL;
    if (correct && !hit) return ob_fail(e, OB_ERR_NOMEM, "xent_forward: out of memory");
    int nblk = (M + NN_RB - 1) / NN_RB;
#pragma omp parallel for if ((int64_t)M * V > NN_PAR_MIN)
    for (int blk = 0; blk < nblk; blk++) {
        const float *l[NN_RB], *p[NN_RB]; /* NN_RB rows of (V) of logits, probs; see nn_rows */
        int m0 = blk * NN_RB, nr = nn_rows(logits, V, m0, M, l);
        nn_rows(probs, V, m0, M, p);
        float mx[NN_RB], lt[NN_RB];
        int arg[NN_RB];
        double s[NN_RB];
        for (int r = 0; r < NN_RB; r++) {
            mx[r] = -INFINITY;
            arg[r] = 0;
            s[r] = 0.0;
        }
        for (int v = 0; v < V; v++)
#pragma GCC unroll 8
            for (int r = 0; r < NN_RB; r++)
                if (l[r][v] > mx[r]) {
                    mx[r] = l[r][v];
                    arg[r] = v;
                }
        for (int r = 0; r < nr; r++) {
            const float *lr = l[r];
            float *pr = probs + (int64_t)(m0 + r) * V, m = mx[r];
            lt[r] = lr[targets[m0 + r]]; /* before pr overwrites an aliased lr */
#pragma omp simd
            for (int v = 0; v < V; v++) pr[v] = nn_expf(lr[v] - m);
        }
        for (int v = 0; v < V; v++)
#pragma GCC unroll 8
            for (int r = 0; r < NN_RB; r++) s[r] += p[r][v];
        for (int r = 0; r < nr; r++) {
            float *pr = probs + (int64_t)(m0 + r) * V;
            losses[m0 + r] = (float)(log(s[r]) - (double)(lt[r] - mx[r]));
            float inv = (float)(1.0 / s[r]);
#pragma omp simd
            for (int v = 0; v < V; v++) pr[v] *= inv;
            if (hit) hit[m0 + r] = arg[r] == targets[m0 + r];
        }
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

NN_CLONES
ob_status ob_cpu_xent_backward(ob_device *dev, float *dlogits, const float *probs, const int32_t *targets,
                               int M, int V, float scale, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)M * V > NN_PAR_MIN)
    for (int m = 0; m < M; m++) {
        const float *p = probs + (int64_t)m * V;
        float *d = dlogits + (int64_t)m * V;
#pragma omp simd
        for (int v = 0; v < V; v++) d[v] = p[v] * scale;
        d[targets[m]] -= scale;
    }
    return OB_OK;
}
