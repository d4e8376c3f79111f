/* kernels/cpu/conv_direct.c - direct convolution on x86-64 CPUs with AVX-512 or AVX2.
 *
 * A stride-1 convolution of NHWC images with zero padding, computed without
 * im2col: the forward pass, the input gradient and the kernel gradient, each a
 * register-blocked loop nest over the image with the channels in vector
 * lanes. OpenBLAS (0.3.21, Debian 12) runs its AVX2 kernels on CPUs it does
 * not know (AMD Zen 4/5), at about half of what the AVX-512 units do; these
 * kernels reach the AVX-512 rate and skip im2col's column matrix (9x the input
 * for a 3x3 kernel) and col2im. On CPUs without AVX-512 (AMD Zen 1-3, most
 * Intel desktop and laptop chips) the AVX2 build of the same kernels skips
 * them too, and the skinny sgemm of small channel counts.
 *
 *   forward      out[b,oy,ox,co] = sum_{ky,kx,ci} inp[b, oy+ky-pad, ox+kx-pad, ci] * w[co,ci,ky,kx]
 *   input grad   the same loop nest on dout with the kernel flipped and its
 *                channels swapped, padding K-1-pad (exact for stride 1)
 *   kernel grad  dw[co,ci,ky,kx] += sum_{b,oy,ox} dout[b,oy,ox,co] * inp[b, oy+ky-pad, ox+kx-pad, ci]
 *
 * Two builds of the kernels: this file under target("avx512f") (16-lane
 * vectors), and once more from conv_direct_avx2.c under target("avx2,fma")
 * (8 lanes, 16 registers); the rest of the program stays baseline x86-64.
 * Tiles, DV = 2 vectors of channels each:
 *
 *              forward tile (DP x CB)     kernel-gradient tile (DR x CB)   accumulators
 *   AVX-512    8 pixels x 32 channels     8 in x 32 out channels           16 of 32 zmm
 *   AVX2       6 pixels x 16 channels     6 in x 16 out channels           12 of 16 ymm
 *
 * The forward microkernel, per (tap, input channel), loads the DV kernel
 * vectors and broadcasts DP input scalars (DP x DV FMAs); the kernel-gradient
 * one holds (DR input channels) x (CB output channels) of one tap and, per
 * pixel, loads DV dout vectors and broadcasts DR input scalars. AVX2's 16
 * registers hold 12 accumulators, the 2 loaded vectors and the broadcast;
 * 16-channel blocks fit the usual channel counts (multiples of 16) where
 * 24-channel ones (4 pixels x 3 vectors) would waste a third of 32. A block
 * of pixels in one output row whose taps are all inside the image runs each
 * kernel row's taps and channels as one loop of K*Ci (contiguous in the image
 * row and in the packed kernel; few input channels waste no loop overhead).
 * Edge pixels read a zero row instead of the image; channel counts that are
 * not multiples of CB use masked loads and stores (or zero-padded packed
 * kernels).
 *
 * Determinism: every output element (out, dinp) is computed by one task; the
 * kernel gradient is split into tiles (tap, DR input channels, CB output
 * channels), each owned by one thread, which sums the pixels of the images in
 * order: in registers within a group of images (about 256 output pixels; the
 * grouping depends on the shape only), in one float per tile element across
 * groups. No result depends on the thread count. Nor on the build: each
 * element is the same chain of FMAs in the same order in both (the tiles only
 * decide which lane and register hold it, and for a finite kernel an FMA of
 * the zero row adds nothing, like a skipped border tap), so the AVX2 and
 * AVX-512 paths give the same bits.
 *
 * Availability and choice: x86-64 with GCC or Clang, checked at run time.
 * The path (ob_cpu_conv_path_now) is AVX-512 where the CPU (and OS) has
 * AVX-512F, else AVX2 where it has AVX2 and FMA, else im2col + gemm
 * (ob_cpu_conv_direct_ok says no and the caller keeps it); the environment
 * variable OB_CPU_CONV (auto, avx512, avx2, im2col; read once) forces one, a
 * path the CPU cannot run or an unknown value meaning auto.
 */
#include <stdatomic.h>
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

#if CONV_DIRECT_X86

/* One build's kernels: out (B,Ho,Wo,Co) from inp (B,H,W,Ci) and the packed
 * kernel wp (K*K, Ci, CoP), and the kernel gradient accm (K*K, CiR, CoP);
 * CoP a multiple of cb, CiR of dr (see conv_pixels and conv_dw). */
typedef void conv_pixels_fn(float *out, const float *inp, const float *wp, const float *zero, int B, int H, int W,
                            int Ci, int Co, int CoP, int K, int pad);
typedef void conv_dw_fn(float *accm, const float *dout, const float *inp, int B, int H, int W, int Ci, int Co,
                        int CiR, int CoP, int K, int pad);
typedef struct conv_kernels {
    int cb, dr;
    conv_pixels_fn *pixels;
    conv_dw_fn *dw;
} conv_kernels;
extern const conv_kernels ob_cpu_conv_kernels_avx512, ob_cpu_conv_kernels_avx2;

/* ---- the vector ISA of this build ---- */
#ifdef CONV_DIRECT_AVX2_BUILD
#define TGT __attribute__((target("avx2,fma")))
#define VL 8 /* lanes */
#define DP 6 /* output pixels per forward tile */
#define DR 6 /* input channels per kernel-gradient tile */
#define KERNELS ob_cpu_conv_kernels_avx2
typedef __m256 vec;
typedef __m256i vmask;
#define v_zero _mm256_setzero_ps
#define v_load _mm256_loadu_ps
#define v_store _mm256_storeu_ps
#define v_set1 _mm256_set1_ps
#define v_fma _mm256_fmadd_ps
#define v_loadm(m, p) _mm256_maskload_ps((p), (m))
#define v_storem(p, m, v) _mm256_maskstore_ps((p), (m), (v))
TGT static inline vmask lane_mask(int valid) /* the first min(max(valid, 0), 8) lanes */
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#else
#define TGT __attribute__((target("avx512f")))
#define VL 16
#define DP 8
#define DR 8
#define KERNELS ob_cpu_conv_kernels_avx512
typedef __m512 vec;
typedef __mmask16 vmask;
#define v_zero _mm512_setzero_ps
#define v_load _mm512_loadu_ps
#define v_store _mm512_storeu_ps
#define v_set1 _mm512_set1_ps
#define v_fma _mm512_fmadd_ps
#define v_loadm(m, p) _mm512_maskz_loadu_ps((m), (p))
#define v_storem(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
static vmask lane_mask(int valid) /* the first min(max(valid, 0), 16) lanes */
{
    return valid >= 16 ? (__mmask16)0xFFFF : valid <= 0 ? (__mmask16)0 : (__mmask16)((1u << valid) - 1u);
}
#endif

#define DV 2 /* vectors per tile row */
#define CB (VL * DV)
#define PG 16       /* pixel blocks per forward task */
#define DW_PIX 256  /* output pixels per image group of the kernel gradient */

/* acc (DP pixels x CB channels) += sum over j < n of the input scalars
 * ip[p][j] times the kernel rows wk + j CoP, j in order. */
TGT static inline __attribute__((always_inline)) void tile_fma(vec acc[DP][DV], const float *const ip[DP],
                                                                const float *wk, int n, int CoP)
{
    for (int j = 0; j < n; j++, wk += CoP) {
        const vec w0 = v_load(wk), w1 = v_load(wk + VL);
#pragma GCC unroll 8
        for (int p = 0; p < DP; p++) {
            const vec x = v_set1(ip[p][j]);
            acc[p][0] = v_fma(x, w0, acc[p][0]);
            acc[p][1] = v_fma(x, w1, acc[p][1]);
        }
    }
}

/* The convolution conv_pixels computes (see there). */
typedef struct pix_conv {
    float *out;
    const float *inp, *wp, *zero;
    int H, W, Ci, Co, CoP, K, pad, Wo;
    int64_t hwo, npix;
} pix_conv;

/* acc += the taps of DP output pixels q0.. in one output row, channels c0..:
 * per kernel row, one image row, whose pixels left or right of the image read
 * the zero row (a kernel row above or below the image adds nothing); where no
 * tap is left or right of it ("inner"), the row's taps and input channels are
 * one run of K*Ci floats, in the image and in the packed kernel alike. */
TGT static inline __attribute__((always_inline)) void taps_row(vec acc[DP][DV], const pix_conv *c, int64_t q0,
                                                                int c0)
{
    const int H = c->H, W = c->W, Ci = c->Ci, CoP = c->CoP, K = c->K, pad = c->pad;
    const int64_t b0 = q0 / c->hwo;
    const int rem0 = (int)(q0 - b0 * c->hwo), oy0 = rem0 / c->Wo, ox0 = rem0 % c->Wo;
    const int inner = ox0 >= pad && ox0 + DP + K - 1 - pad <= W;
    const float *img0 = c->inp + b0 * H * W * Ci, *ip[DP];
    for (int ky = 0; ky < K; ky++) {
        const int iy = oy0 + ky - pad;
        if (iy < 0 || iy >= H) continue;
        const float *r = img0 + (int64_t)iy * W * Ci, *wk = c->wp + (int64_t)ky * K * Ci * CoP + c0;
        if (inner) {
#pragma GCC unroll 8
            for (int p = 0; p < DP; p++) ip[p] = r + (int64_t)(ox0 + p - pad) * Ci;
            tile_fma(acc, ip, wk, K * Ci, CoP);
            continue;
        }
        for (int kx = 0; kx < K; kx++, wk += (int64_t)Ci * CoP) {
#pragma GCC unroll 8
            for (int p = 0; p < DP; p++) {
                const int ix = ox0 + p + kx - pad;
                ip[p] = ix >= 0 && ix < W ? r + (int64_t)ix * Ci : c->zero;
            }
            tile_fma(acc, ip, wk, Ci, CoP);
        }
    }
}

/* acc += the taps of output pixels q0.. (np of them) that span rows or
 * images, channels c0..: each pixel finds its own input pixel per tap, the
 * zero row outside the image (a tap outside it for all np adds nothing). */
TGT static inline __attribute__((always_inline)) void taps_span(vec acc[DP][DV], const pix_conv *c, int64_t q0,
                                                                 int np, int c0)
{
    const int H = c->H, W = c->W, Ci = c->Ci, CoP = c->CoP, K = c->K, pad = c->pad;
    const float *img[DP], *ip[DP];
    int oy[DP], ox[DP];
#pragma GCC unroll 8
    for (int p = 0; p < DP; p++) {
        const int64_t q = q0 + (p < np ? p : 0), b = q / c->hwo;
        const int rem = (int)(q - b * c->hwo);
        img[p] = c->inp + b * H * W * Ci, oy[p] = rem / c->Wo, ox[p] = rem % c->Wo;
    }
    for (int ky = 0; ky < K; ky++)
        for (int kx = 0; kx < K; kx++) {
            int any = 0;
#pragma GCC unroll 8
            for (int p = 0; p < DP; p++) {
                const int iy = oy[p] + ky - pad, ix = ox[p] + kx - pad;
                const int in = p < np && iy >= 0 && iy < H && ix >= 0 && ix < W;
                ip[p] = in ? img[p] + ((int64_t)iy * W + ix) * Ci : c->zero;
                any |= in;
            }
            if (any) tile_fma(acc, ip, c->wp + (int64_t)(ky * K + kx) * Ci * CoP + c0, Ci, CoP);
        }
}

/* The DP x CB tile of output pixels q0.. and channels c0.. (the taps (ky, kx)
 * and input channels summed in order), stored with masks m0, m1. row (a
 * constant): the DP pixels lie in one output row. */
TGT static inline __attribute__((always_inline)) void pixel_block(const pix_conv *c, int64_t q0, int c0, vmask m0,
                                                                   vmask m1, const int row)
{
    const int np = c->npix - q0 < DP ? (int)(c->npix - q0) : DP;
    vec acc[DP][DV];
#pragma GCC unroll 8
    for (int p = 0; p < DP; p++)
#pragma GCC unroll 2
        for (int v = 0; v < DV; v++) acc[p][v] = v_zero();
    if (row)
        taps_row(acc, c, q0, c0);
    else
        taps_span(acc, c, q0, np, c0);
    float *o = c->out + q0 * c->Co + c0;
#pragma GCC unroll 8
    for (int p = 0; p < DP; p++) {
        if (p >= np) break;
        v_storem(o + (int64_t)p * c->Co, m0, acc[p][0]);
        v_storem(o + (int64_t)p * c->Co + VL, m1, acc[p][1]);
    }
}

/* out (B,Ho,Wo,Co) = convolution of inp (B,H,W,Ci) with the packed kernel
 * wp (K*K, Ci, CoP) (CoP = Co rounded up to CB, zero columns), stride 1,
 * zero padding pad; Ho = H + 2 pad - K + 1. zero: Ci zeros. The B*Ho*Wo
 * output pixels, flattened, go in blocks of DP (a block may span rows and
 * images, so small maps waste no lanes); a task is PG blocks, for which every
 * CB-channel block of the kernel is applied in turn (its inputs stay in
 * cache). */
/* One task of conv_pixels (a function of its own under the vector target:
 * the body of an OpenMP region is outlined by the compiler, and clang does
 * not give the outlined function the enclosing function's target). */
TGT __attribute__((noinline)) static void conv_pixels_task(const pix_conv *c, int64_t task)
{
    const int64_t nblk = (c->npix + DP - 1) / DP, pb1 = (task + 1) * PG < nblk ? (task + 1) * PG : nblk;
    for (int c0 = 0; c0 < c->CoP; c0 += CB) {
        const vmask m0 = lane_mask(c->Co - c0), m1 = lane_mask(c->Co - c0 - VL);
        for (int64_t q0 = task * PG * DP; q0 < pb1 * DP; q0 += DP) {
            const int ox0 = (int)(q0 % c->hwo % c->Wo);
            if (c->npix - q0 >= DP && ox0 + DP <= c->Wo) /* DP pixels of one output row */
                pixel_block(c, q0, c0, m0, m1, 1);
            else
                pixel_block(c, q0, c0, m0, m1, 0);
        }
    }
}

static void conv_pixels(float *out, const float *inp, const float *wp, const float *zero, int B, int H, int W,
                        int Ci, int Co, int CoP, int K, int pad)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const pix_conv c = {out, inp, wp, zero, H, W, Ci, Co, CoP, K, pad, Wo, (int64_t)Ho * Wo, (int64_t)B * Ho * Wo};
    const int64_t nblk = (c.npix + DP - 1) / DP, ntask = (nblk + PG - 1) / PG;
#pragma omp parallel for schedule(static)
    for (int64_t task = 0; task < ntask; task++) conv_pixels_task(&c, task);
}

/* One kernel-gradient tile over images [0, nimg) of a group: a (DR ci rows
 * of CoP floats, CB co) = (first ? 0 : a) + the sum over the output pixels
 * whose input pixel at this tap is inside the image, image by image in pixel
 * order (in registers). clamp: some of the DR channels are past Ci (they read
 * channel Ci-1 and are never stored). tail: some of the CB channels are past
 * Co (masked loads of dout). */
TGT static inline __attribute__((always_inline)) void dw_tile(float *a, int CoP, int first, const float *dout,
                                                               const float *inp, int nimg, int H, int W, int Ci,
                                                               int Co, int K, int pad, int ky, int kx, int ci0,
                                                               int c0, int clamp, int tail)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int oy0 = pad - ky > 0 ? pad - ky : 0, oy1 = H + pad - ky < Ho ? H + pad - ky : Ho;
    const int ox0 = pad - kx > 0 ? pad - kx : 0, ox1 = W + pad - kx < Wo ? W + pad - kx : Wo;
    const vmask m0 = lane_mask(Co - c0), m1 = lane_mask(Co - c0 - VL);
    vec acc[DR][DV];
#pragma GCC unroll 8
    for (int r = 0; r < DR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < DV; v++) acc[r][v] = first ? v_zero() : v_load(a + (int64_t)r * CoP + VL * v);
    int off[DR];
#pragma GCC unroll 8
    for (int r = 0; r < DR; r++) off[r] = clamp && ci0 + r >= Ci ? Ci - 1 - ci0 : r;
    for (int i = 0; i < nimg; i++) {
        const float *di = dout + (int64_t)i * Ho * Wo * Co, *xi = inp + (int64_t)i * H * W * Ci;
        for (int oy = oy0; oy < oy1; oy++) {
            const float *d = di + ((int64_t)oy * Wo + ox0) * Co + c0;
            const float *x = xi + ((int64_t)(oy + ky - pad) * W + ox0 + kx - pad) * Ci + ci0;
            for (int ox = ox0; ox < ox1; ox++, d += Co, x += Ci) {
                const vec d0 = tail ? v_loadm(m0, d) : v_load(d), d1 = tail ? v_loadm(m1, d + VL) : v_load(d + VL);
#pragma GCC unroll 8
                for (int r = 0; r < DR; r++) {
                    const vec xr = v_set1(clamp ? x[off[r]] : x[r]);
                    acc[r][0] = v_fma(xr, d0, acc[r][0]);
                    acc[r][1] = v_fma(xr, d1, acc[r][1]);
                }
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < DR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < DV; v++) v_store(a + (int64_t)r * CoP + VL * v, acc[r][v]);
}

/* acc (K*K, CiR, CoP) = sum over all images of the kernel gradient in the
 * packed order (tap, ci, co); dout (B,Ho,Wo,Co), inp (B,H,W,Ci). Images go
 * in groups of about DW_PIX output pixels (the group size depends on the
 * shape only); tiles are split between the threads in contiguous ranges, and
 * each thread walks the groups in order and, per group, its tiles (the group
 * stays in cache). */
/* Thread t of nt in conv_dw (its own vector function, see conv_pixels_task). */
TGT __attribute__((noinline)) static void conv_dw_thread(float *accm, const float *dout, const float *inp, int B,
                                                         int H, int W, int Ci, int Co, int CiR, int CoP, int K,
                                                         int pad, int t, int nt)
{
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int nrb = CiR / DR, ncb = CoP / CB, ntiles = K * K * nrb * ncb;
    const int per = (DW_PIX + Ho * Wo - 1) / (Ho * Wo), ng = per < B ? per : B; /* images per group */
    const int t0 = (int)((int64_t)ntiles * t / nt), t1 = (int)((int64_t)ntiles * (t + 1) / nt);
    for (int b = 0; b < B; b += ng) {
        const int nimg = B - b < ng ? B - b : ng;
        const float *db = dout + (int64_t)b * Ho * Wo * Co, *xb = inp + (int64_t)b * H * W * Ci;
        for (int ti = t0; ti < t1; ti++) {
            const int tap = ti / (nrb * ncb), rb = ti / ncb % nrb, cb = ti % ncb;
            const int ky = tap / K, kx = tap % K, ci0 = rb * DR, c0 = cb * CB;
            float *a = accm + ((int64_t)tap * CiR + ci0) * CoP + c0; /* (DR, CoP) */
#define DW_TILE(clamp, tail) dw_tile(a, CoP, b == 0, db, xb, nimg, H, W, Ci, Co, K, pad, ky, kx, ci0, c0, clamp, tail)
            if (c0 + CB <= Co) {
                if (ci0 + DR <= Ci) DW_TILE(0, 0);
                else DW_TILE(1, 0);
            } else {
                if (ci0 + DR <= Ci) DW_TILE(0, 1);
                else DW_TILE(1, 1);
            }
#undef DW_TILE
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

const conv_kernels KERNELS = {CB, DR, conv_pixels, conv_dw};

#endif /* CONV_DIRECT_X86 */

/* ---- the path and the entry points (in the AVX-512 build: this file compiled on its own) ---- */
#ifndef CONV_DIRECT_AVX2_BUILD

#define CONV_PACK_PAR 16384 /* kernel (un)packing runs on all threads above this many floats */

static const char *const conv_path_names[] = {"im2col", "avx2", "avx512"};

const char *ob_cpu_conv_path_name(ob_cpu_conv_path p)
{
    return p >= OB_CPU_CONV_IM2COL && p <= OB_CPU_CONV_AVX512 ? conv_path_names[p] : "?";
}

ob_cpu_conv_path ob_cpu_conv_choose(const char *name)
{
#if CONV_DIRECT_X86
    const int has512 = __builtin_cpu_supports("avx512f") != 0;
    const int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const ob_cpu_conv_path best = has512 ? OB_CPU_CONV_AVX512 : has2 ? OB_CPU_CONV_AVX2 : OB_CPU_CONV_IM2COL;
    if (!name) return best;
    if (!strcmp(name, "im2col")) return OB_CPU_CONV_IM2COL;
    if (!strcmp(name, "avx2") && has2) return OB_CPU_CONV_AVX2;
    if (!strcmp(name, "avx512") && has512) return OB_CPU_CONV_AVX512;
    return best;
#else
    (void)name;
    return OB_CPU_CONV_IM2COL;
#endif
}

static atomic_int conv_path = -1; /* an ob_cpu_conv_path; -1 until the first use */

ob_cpu_conv_path ob_cpu_conv_path_now(void)
{
    int p = atomic_load_explicit(&conv_path, memory_order_relaxed);
    if (p < 0) { /* the first use: OB_CPU_CONV, unless a racing call settled it first */
        int unset = -1;
        p = (int)ob_cpu_conv_choose(getenv("OB_CPU_CONV"));
        if (!atomic_compare_exchange_strong(&conv_path, &unset, p)) p = unset;
    }
    return (ob_cpu_conv_path)p;
}

ob_cpu_conv_path ob_cpu_conv_force(const char *name)
{
    const ob_cpu_conv_path p = ob_cpu_conv_choose(name);
    atomic_store(&conv_path, (int)p);
    return p;
}

static int conv_shape_ok(int Cin, int Cout, int K, int stride, int pad)
{
    return Cin >= 1 && Cout >= 1 && K >= 1 && stride == 1 && pad >= 0 && pad <= K - 1;
}

int ob_cpu_conv_direct_ok(int Cin, int Cout, int K, int stride, int pad)
{
    return conv_shape_ok(Cin, Cout, K, stride, pad) && ob_cpu_conv_path_now() != OB_CPU_CONV_IM2COL;
}

#if CONV_DIRECT_X86

/* *kn: the kernels of the path in effect; OB_ERR_UNSUPPORTED where it is
 * im2col or the shape is not one of theirs. */
static ob_status conv_kernels_for(const conv_kernels **kn, const char *what, int Cin, int Cout, int K, int stride,
                                  int pad, ob_err *e)
{
    const ob_cpu_conv_path p = ob_cpu_conv_path_now();
    if (p == OB_CPU_CONV_IM2COL || !conv_shape_ok(Cin, Cout, K, stride, pad))
        return ob_fail(e, OB_ERR_UNSUPPORTED, "%s: no direct kernel for K %d stride %d pad %d (path %s)", what, K,
                       stride, pad, ob_cpu_conv_path_name(p));
    *kn = p == OB_CPU_CONV_AVX512 ? &ob_cpu_conv_kernels_avx512 : &ob_cpu_conv_kernels_avx2;
    return OB_OK;
}

static int round_up(int x, int m) { return (x + m - 1) / m * m; }

/* inp (B,H,W,Cin), w (Cout,Cin,K,K) -> out (B,Ho,Wo,Cout), stride 1. */
ob_status ob_cpu_conv_forward(ob_device *dev, float *out, const float *inp, const float *w, int B, int H, int W,
                              int Cin, int Cout, int K, int stride, int pad, ob_err *e)
{
    (void)dev;
    const conv_kernels *kn = NULL;
    OB_TRY(conv_kernels_for(&kn, "conv_forward", Cin, Cout, K, stride, pad, e));
    const int CoP = round_up(Cout, kn->cb), KK = K * K;
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
    kn->pixels(out, inp, wp, zero, B, H, W, Cin, Cout, CoP, K, pad);
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
    const conv_kernels *kn = NULL;
    OB_TRY(conv_kernels_for(&kn, "conv_backward", Cin, Cout, K, stride, pad, e));
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1, KK = K * K;
    if (B < 1 || Ho < 1 || Wo < 1) {
        if (dinp) memset(dinp, 0, (size_t)B * H * W * Cin * sizeof *dinp);
        return OB_OK;
    }
    const int CiP = round_up(Cin, kn->cb), CiR = round_up(Cin, kn->dr), CoP = round_up(Cout, kn->cb);
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
        kn->pixels(dinp, dout, wt, zero, B, Ho, Wo, Cout, Cin, CiP, K, K - 1 - pad);
    }
    kn->dw(accm, dout, inp, B, H, W, Cin, Cout, CiR, CoP, K, pad);
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

#endif /* CONV_DIRECT_X86 */
#endif /* !CONV_DIRECT_AVX2_BUILD */
