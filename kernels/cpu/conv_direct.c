/* kernels/cpu/conv_direct.c - direct convolution on CPUs with AVX-512.
 *
 * A stride-1 convolution of NHWC images with zero padding, computed without
 * im2col: the forward pass, the input gradient and the kernel gradient, each a
 * register-blocked loop nest over the image with the channels in 16-lane
 * AVX-512 vectors. OpenBLAS (0.3.21, Debian 12) runs its AVX2 kernels on CPUs
 * it does not know (AMD Zen 4/5), at about half of what the AVX-512 units do;
 * these kernels reach the AVX-512 rate and skip im2col's column matrix (9x the
 * input for a 3x3 kernel) and col2im.
 *
 *   forward      out[b,oy,ox,co] = sum_{ky,kx,ci} inp[b, oy+ky-pad, ox+kx-pad, ci] * w[co,ci,ky,kx]
 *   input grad   the same loop nest on dout with the kernel flipped and its
 *                channels swapped, padding K-1-pad (exact for stride 1)
 *   kernel grad  dw[co,ci,ky,kx] += sum_{b,oy,ox} dout[b,oy,ox,co] * inp[b, oy+ky-pad, ox+kx-pad, ci]
 *
 * Microkernels: the forward one holds an (8 consecutive output pixels, rows
 * and images flattened) x (32 output channels) tile in 16 zmm registers and,
 * per (tap, input channel), loads two kernel
 * vectors and broadcasts 8 input scalars (16 FMAs). The kernel-gradient one
 * holds (8 input channels) x (32 output channels) of one tap and, per pixel,
 * loads two dout vectors and broadcasts 8 input scalars. Edge pixels read a
 * zero row instead of the image; channel counts that are not multiples of 32
 * use masked loads and stores (or zero-padded packed kernels).
 *
 * Determinism: every output element (out, dinp) is computed by one task; the
 * kernel gradient is split into tiles (tap, 8 input channels, 32 output
 * channels), each owned by one thread, which sums the pixels of the images in
 * order: in registers within a group of images (about 256 output pixels; the
 * grouping depends on the shape only), in one float per tile element across
 * groups. No result depends on the thread count.
 *
 * Availability: x86-64 with GCC or Clang and a CPU (and OS) with AVX-512F,
 * checked at run time; elsewhere ob_cpu_conv_direct_ok says no and the caller
 * keeps im2col + gemm.
 */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/cpu/nn_cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONV_DIRECT_X86 1
#include <immintrin.h>
#else
#define CONV_DIRECT_X86 0
#endif

int ob_cpu_conv_direct_ok(int Cin, int Cout, int K, int stride, int pad)
{
#if CONV_DIRECT_X86
    if (Cin < 1 || Cout < 1 || K < 1 || stride != 1 || pad < 0 || pad > K - 1) return 0;
    return __builtin_cpu_supports("avx512f") != 0;
#else
    (void)Cin, (void)Cout, (void)K, (void)stride, (void)pad;
    return 0;
#endif
}

#if CONV_DIRECT_X86

#define TGT __attribute__((target("avx512f")))
#define DP 8  /* output pixels per forward tile */
#define DV 2  /* 16-lane vectors per tile: 32 output channels */
#define DR 8  /* input channels per kernel-gradient tile */
#define CB (16 * DV)
#define PG 16       /* pixel blocks per forward task */
#define DW_PIX 256  /* output pixels per image group of the kernel gradient */
#define CONV_PACK_PAR 16384 /* kernel (un)packing runs on all threads above this many floats */

static int round_up(int x, int m) { return (x + m - 1) / m * m; }

static __mmask16 lane_mask(int valid) /* the first min(max(valid, 0), 16) lanes */
{
    return valid >= 16 ? (__mmask16)0xFFFF : valid <= 0 ? (__mmask16)0 : (__mmask16)((1u << valid) - 1u);
}

/* out (B,Ho,Wo,Co) = convolution of inp (B,H,W,Ci) with the packed kernel
 * wp (K*K, Ci, CoP) (CoP = Co rounded up to 32, zero columns), stride 1,
 * zero padding pad; Ho = H + 2 pad - K + 1. zero: Ci zeros. The B*Ho*Wo
 * output pixels, flattened, go in blocks of DP (a block may span rows and
 * images, so small maps waste no lanes); a task is PG blocks, for which every
 * 32-channel block of the kernel is applied in turn (its inputs stay in
 * cache). Pixels outside the image read the zero row. */
/* One task of conv_pixels (a function of its own under the AVX-512 target:
 * the body of an OpenMP region is outlined by the compiler, and clang does
 * not give the outlined function the enclosing function's target). */
TGT __attribute__((noinline)) static void conv_pixels_task(float *out, const float *inp, const float *wp,
                                                           const float *zero, int B, int H, int W, int Ci, int Co,
                                                           int CoP, int K, int pad, int64_t task)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1, ncb = CoP / CB;
    const int64_t hwo = (int64_t)Ho * Wo, npix = B * hwo, nblk = (npix + DP - 1) / DP;
    (void)B;
    {
        const int64_t pb1 = (task + 1) * PG < nblk ? (task + 1) * PG : nblk;
        for (int cb = 0; cb < ncb; cb++) {
            const int c0 = cb * CB;
            const __mmask16 m0 = lane_mask(Co - c0), m1 = lane_mask(Co - c0 - 16);
            for (int64_t pb = task * PG; pb < pb1; pb++) {
                const int64_t q0 = pb * DP;
                const int np = npix - q0 < DP ? (int)(npix - q0) : DP;
                const int64_t b0 = q0 / hwo;
                const int rem0 = (int)(q0 - b0 * hwo), oy0 = rem0 / Wo, ox0 = rem0 % Wo;
                const int row = np == DP && ox0 + DP <= Wo; /* DP pixels of one output row */
                const float *img0 = inp + b0 * H * W * Ci;
                __m512 acc[DP][DV];
#pragma GCC unroll 8
                for (int p = 0; p < DP; p++)
#pragma GCC unroll 2
                    for (int v = 0; v < DV; v++) acc[p][v] = _mm512_setzero_ps();
                for (int ky = 0; ky < K; ky++) {
                    for (int kx = 0; kx < K; kx++) {
                        const float *ip[DP]; /* the pixel each output pixel reads at this tap, or zeros */
                        if (row) {
                            const int iy = oy0 + ky - pad;
                            if (iy < 0 || iy >= H) continue; /* a border row: nothing to add */
                            const float *r = img0 + (int64_t)iy * W * Ci;
#pragma GCC unroll 8
                            for (int p = 0; p < DP; p++) {
                                const int ix = ox0 + p + kx - pad;
                                ip[p] = ix >= 0 && ix < W ? r + (int64_t)ix * Ci : zero;
                            }
                        } else { /* the block spans rows or images, or ends the batch */
                            int any = 0;
                            for (int p = 0; p < DP; p++) {
                                const int64_t q = q0 + p, b = q / hwo;
                                const int rem = (int)(q - b * hwo);
                                const int iy = rem / Wo + ky - pad, ix = rem % Wo + kx - pad;
                                const int in = p < np && iy >= 0 && iy < H && ix >= 0 && ix < W;
                                ip[p] = in ? inp + ((b * H + iy) * W + ix) * Ci : zero;
                                any |= in;
                            }
                            if (!any) continue;
                        }
                        const float *wk = wp + (int64_t)(ky * K + kx) * Ci * CoP + c0; /* (Ci, CoP) */
                        for (int ci = 0; ci < Ci; ci++, wk += CoP) {
                            const __m512 w0 = _mm512_loadu_ps(wk), w1 = _mm512_loadu_ps(wk + 16);
#pragma GCC unroll 8
                            for (int p = 0; p < DP; p++) {
                                const __m512 x = _mm512_set1_ps(ip[p][ci]);
                                acc[p][0] = _mm512_fmadd_ps(x, w0, acc[p][0]);
                                acc[p][1] = _mm512_fmadd_ps(x, w1, acc[p][1]);
                            }
                        }
                    }
                }
                float *o = out + q0 * Co + c0;
#pragma GCC unroll 8
                for (int p = 0; p < DP; p++) {
                    if (p >= np) break;
                    _mm512_mask_storeu_ps(o + (int64_t)p * Co, m0, acc[p][0]);
                    _mm512_mask_storeu_ps(o + (int64_t)p * Co + 16, m1, acc[p][1]);
                }
            }
        }
    }
}

static void conv_pixels(float *out, const float *inp, const float *wp, const float *zero, int B, int H, int W,
                        int Ci, int Co, int CoP, int K, int pad)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int64_t npix = B * (int64_t)Ho * Wo, nblk = (npix + DP - 1) / DP, ntask = (nblk + PG - 1) / PG;
#pragma omp parallel for schedule(static)
    for (int64_t task = 0; task < ntask; task++)
        conv_pixels_task(out, inp, wp, zero, B, H, W, Ci, Co, CoP, K, pad, task);
}

/* One kernel-gradient tile over images [0, nimg) of a group: a (DR ci rows
 * of CoP floats, 32 co) = (first ? 0 : a) + the sum over the output pixels
 * whose input pixel at this tap is inside the image, image by image in pixel
 * order (in registers). clamp: some of the DR channels are past Ci (they read
 * channel Ci-1 and are never stored). */
TGT static inline __attribute__((always_inline)) void dw_tile(float *a, int CoP, int first, const float *dout,
                                                               const float *inp, int nimg, int H, int W, int Ci,
                                                               int Co, int K, int pad, int ky, int kx, int ci0,
                                                               int c0, int clamp)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int oy0 = pad - ky > 0 ? pad - ky : 0, oy1 = H + pad - ky < Ho ? H + pad - ky : Ho;
    const int ox0 = pad - kx > 0 ? pad - kx : 0, ox1 = W + pad - kx < Wo ? W + pad - kx : Wo;
    const __mmask16 m0 = lane_mask(Co - c0), m1 = lane_mask(Co - c0 - 16);
    __m512 acc[DR][DV];
#pragma GCC unroll 8
    for (int r = 0; r < DR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < DV; v++)
            acc[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(a + (int64_t)r * CoP + 16 * v);
    int off[DR];
#pragma GCC unroll 8
    for (int r = 0; r < DR; r++) off[r] = clamp && ci0 + r >= Ci ? Ci - 1 - ci0 : r;
    for (int i = 0; i < nimg; i++) {
        const float *di = dout + (int64_t)i * Ho * Wo * Co, *xi = inp + (int64_t)i * H * W * Ci;
        for (int oy = oy0; oy < oy1; oy++) {
            const float *d = di + ((int64_t)oy * Wo + ox0) * Co + c0;
            const float *x = xi + ((int64_t)(oy + ky - pad) * W + ox0 + kx - pad) * Ci + ci0;
            for (int ox = ox0; ox < ox1; ox++, d += Co, x += Ci) {
                const __m512 d0 = _mm512_maskz_loadu_ps(m0, d), d1 = _mm512_maskz_loadu_ps(m1, d + 16);
#pragma GCC unroll 8
                for (int r = 0; r < DR; r++) {
                    const __m512 xr = _mm512_set1_ps(clamp ? x[off[r]] : x[r]);
                    acc[r][0] = _mm512_fmadd_ps(xr, d0, acc[r][0]);
                    acc[r][1] = _mm512_fmadd_ps(xr, d1, acc[r][1]);
                }
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < DR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < DV; v++) _mm512_storeu_ps(a + (int64_t)r * CoP + 16 * v, acc[r][v]);
}

/* acc (K*K, CiR, CoP) = sum over all images of the kernel gradient in the
 * packed order (tap, ci, co); dout (B,Ho,Wo,Co), inp (B,H,W,Ci). Images go
 * in groups of about DW_PIX output pixels (the group size depends on the
 * shape only); tiles are split between the threads in contiguous ranges, and
 * each thread walks the groups in order and, per group, its tiles (the group
 * stays in cache). */
/* Thread t of nt in conv_dw (its own AVX-512 function, see conv_pixels_task). */
TGT __attribute__((noinline)) static void conv_dw_thread(float *accm, const float *dout, const float *inp, int B,
                                                         int H, int W, int Ci, int Co, int CiR, int CoP, int K,
                                                         int pad, int t, int nt)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int nrb = CiR / DR, ncb = CoP / CB, ntiles = K * K * nrb * ncb;
    const int per = (DW_PIX + Ho * Wo - 1) / (Ho * Wo), ng = per < B ? per : B; /* images per group */
    {
        const int t0 = (int)((int64_t)ntiles * t / nt), t1 = (int)((int64_t)ntiles * (t + 1) / nt);
        for (int b = 0; b < B; b += ng) {
            const int nimg = B - b < ng ? B - b : ng;
            const float *db = dout + (int64_t)b * Ho * Wo * Co, *xb = inp + (int64_t)b * H * W * Ci;
            for (int ti = t0; ti < t1; ti++) {
                const int tap = ti / (nrb * ncb), rb = ti / ncb % nrb, cb = ti % ncb;
                const int ky = tap / K, kx = tap % K, ci0 = rb * DR, c0 = cb * CB;
                float *a = accm + ((int64_t)tap * CiR + ci0) * CoP + c0; /* (DR, CoP) */
                if (ci0 + DR <= Ci)
                    dw_tile(a, CoP, b == 0, db, xb, nimg, H, W, Ci, Co, K, pad, ky, kx, ci0, c0, 0);
                else
                    dw_tile(a, CoP, b == 0, db, xb, nimg, H, W, Ci, Co, K, pad, ky, kx, ci0, c0, 1);
            }
        }
    }
}

static void conv_dw(float *accm, const float *dout, const float *inp, int B, int H, int W, int Ci, int Co, int CiR,
                    int CoP, int K, int pad)
{
#pragma omp parallel
    {
#ifdef _OPENMP
        const int nt = omp_get_num_threads(), t = omp_get_thread_num();
#else
        const int nt = 1, t = 0;
#endif
        conv_dw_thread(accm, dout, inp, B, H, W, Ci, Co, CiR, CoP, K, pad, t, nt);
    }
}

/* inp (B,H,W,Cin), w (Cout,Cin,K,K) -> out (B,Ho,Wo,Cout), stride 1. */
ob_status ob_cpu_conv_forward(ob_device *dev, float *out, const float *inp, const float *w, int B, int H, int W,
                              int Cin, int Cout, int K, int stride, int pad, ob_err *e)
{
    (void)dev;
    if (!ob_cpu_conv_direct_ok(Cin, Cout, K, stride, pad))
        return ob_fail(e, OB_ERR_UNSUPPORTED, "conv_forward: no direct kernel for K %d stride %d pad %d", K, stride,
                       pad);
    const int CoP = round_up(Cout, CB), KK = K * K;
    float *wp = calloc((size_t)KK * Cin * CoP, sizeof *wp); /* (K*K, Cin, CoP) */
    float *zero = calloc((size_t)Cin, sizeof *zero);
    if (!wp || !zero) {
        free(wp);
        free(zero);
        return ob_fail(e, OB_ERR_NOMEM, "conv_forward: out of memory");
    }
#pragma omp parallel for if ((int64_t)Cout * Cin * KK > CONV_PACK_PAR)
    for (int co = 0; co < Cout; co++)
        for (int ci = 0; ci < Cin; ci++)
            for (int t = 0; t < KK; t++) wp[((int64_t)t * Cin + ci) * CoP + co] = w[((int64_t)co * Cin + ci) * KK + t];
    conv_pixels(out, inp, wp, zero, B, H, W, Cin, Cout, CoP, K, pad);
    free(wp);
    free(zero);
    return OB_OK;
}

/* dout (B,Ho,Wo,Cout) -> dinp (B,H,W,Cin) overwritten (skipped when NULL),
 * dw (Cout,Cin,K,K) +=; inp and w as in the forward pass; stride 1. */
ob_status ob_cpu_conv_backward(ob_device *dev, float *dinp, float *dw, const float *dout, const float *inp,
                               const float *w, int B, int H, int W, int Cin, int Cout, int K, int stride, int pad,
                               ob_err *e)
{
    (void)dev;
    if (!ob_cpu_conv_direct_ok(Cin, Cout, K, stride, pad))
        return ob_fail(e, OB_ERR_UNSUPPORTED, "conv_backward: no direct kernel for K %d stride %d pad %d", K, stride,
                       pad);
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1, KK = K * K;
    if (B < 1 || Ho < 1 || Wo < 1) {
        if (dinp) memset(dinp, 0, (size_t)B * H * W * Cin * sizeof *dinp);
        return OB_OK;
    }
    const int CiP = round_up(Cin, CB), CiR = round_up(Cin, DR), CoP = round_up(Cout, CB);
    float *wt = dinp ? calloc((size_t)KK * Cout * CiP, sizeof *wt) : NULL; /* (K*K, Cout, CiP) */
    float *zero = calloc((size_t)Cout, sizeof *zero);
    float *accm = malloc((size_t)KK * CiR * CoP * sizeof *accm); /* (K*K, CiR, CoP) */
    if ((dinp && !wt) || !zero || !accm) {
        free(wt);
        free(zero);
        free(accm);
        return ob_fail(e, OB_ERR_NOMEM, "conv_backward: out of memory");
    }
    if (dinp) {
        /* the flipped kernel with in and out swapped: tap (K-1-ky, K-1-kx), (co, ci) */
#pragma omp parallel for if ((int64_t)Cout * Cin * KK > CONV_PACK_PAR)
        for (int co = 0; co < Cout; co++)
            for (int ci = 0; ci < Cin; ci++)
                for (int t = 0; t < KK; t++)
                    wt[((int64_t)(KK - 1 - t) * Cout + co) * CiP + ci] = w[((int64_t)co * Cin + ci) * KK + t];
        conv_pixels(dinp, dout, wt, zero, B, Ho, Wo, Cout, Cin, CiP, K, K - 1 - pad);
    }
    conv_dw(accm, dout, inp, B, H, W, Cin, Cout, CiR, CoP, K, pad);
#pragma omp parallel for if ((int64_t)Cout * Cin * KK > CONV_PACK_PAR)
    for (int co = 0; co < Cout; co++)
        for (int ci = 0; ci < Cin; ci++)
            for (int t = 0; t < KK; t++)
                dw[((int64_t)co * Cin + ci) * KK + t] += accm[((int64_t)t * CiR + ci) * CoP + co];
    free(wt);
    free(zero);
    free(accm);
    return OB_OK;
}

#else /* !CONV_DIRECT_X86 */

ob_status ob_cpu_conv_forward(ob_device *dev, float *out, const float *inp, const float *w, int B, int H, int W,
                              int Cin, int Cout, int K, int stride, int pad, ob_err *e)
{
    (void)dev, (void)out, (void)inp, (void)w, (void)B, (void)H, (void)W, (void)Cin, (void)Cout, (void)K,
        (void)stride, (void)pad;
    return ob_fail(e, OB_ERR_UNSUPPORTED, "conv_forward: no direct kernel in this build");
}

ob_status ob_cpu_conv_backward(ob_device *dev, float *dinp, float *dw, const float *dout, const float *inp,
                               const float *w, int B, int H, int W, int Cin, int Cout, int K, int stride, int pad,
                               ob_err *e)
{
    (void)dev, (void)dinp, (void)dw, (void)dout, (void)inp, (void)w, (void)B, (void)H, (void)W, (void)Cin,
        (void)Cout, (void)K, (void)stride, (void)pad;
    return ob_fail(e, OB_ERR_UNSUPPORTED, "conv_backward: no direct kernel in this build");
}

#endif
