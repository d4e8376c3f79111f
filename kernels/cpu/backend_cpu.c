/* kernels/cpu/backend_cpu.c - the CPU backend: plain C loops with OpenMP and
 * OpenBLAS for matrix products. Device memory is host memory (64-byte aligned). */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/nn_cpu.h"

/* Loops shorter than this run on one thread: forking costs more than it saves. */
#define PAR_MIN 32768

/* Whether OpenBLAS may be called from inside a parallel region: its OpenMP
 * build then runs the call on the calling thread alone, its sequential build
 * always does. Its pthread build would run its own pool under every calling
 * thread. Set when the backend opens. */
static int cpu_blas_nests;

/* "cpu: 2 threads, OpenBLAS 0.3.21 (Cooperlake kernels), conv avx512": which
 * kernels ran (OpenBLAS picks them per CPU, OPENBLAS_CORETYPE overrides; the
 * convolution's path, OB_CPU_CONV overrides) is part of what a result means. */
static int cpu_probe(int index, char *desc, size_t n)
{
    (void)index;
    char version[32] = "";
    const char *config = openblas_get_config(); /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    if (config && !strncmp(config, "OpenBLAS ", 9)) sscanf(config + 9, "%31s", version);
    const char *core = openblas_get_corename();
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    int len = snprintf(desc, n, "cpu: %d thread%s, OpenBLAS%s%s (%s kernels), conv %s", threads,
                       threads == 1 ? "" : "s", version[0] ? " " : "", version, core ? core : "unknown",
                       ob_cpu_conv_path_name(ob_cpu_conv_path_now()));
    /* how OpenMP's threads wait, where the environment sets it: passive
     * waits change step times by 2x idle and 10x or more on a busy machine
     * (docs/ci-gate.md), so runs made so are another device for compare's timing */
    static const char *const waits[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"};
    for (int i = 0, first = 1; i < 2; i++) {
        const char *v = getenv(waits[i]);
        if (!v || !*v || len < 0 || (size_t)len >= n) continue;
        len += snprintf(desc + len, n - (size_t)len, "%s%s=%.24s", first ? "; OpenMP waits: " : ", ", waits[i], v);
        first = 0;
    }
    /* bf16 products moved off the bf16 units by hand run at fp32's speed */
    const char *bf16 = getenv("OB_CPU_BF16_GEMM");
    if (bf16 && *bf16 && len >= 0 && (size_t)len < n)
        snprintf(desc + len, n - (size_t)len, "; OB_CPU_BF16_GEMM=%.24s", bf16);
    return 1;
}

typedef struct cpu_impl {
    struct timespec marks[OB_TIMER_SLOTS];
} cpu_impl;

static ob_status cpu_open(ob_device *dev, int index, ob_err *e)
{
    (void)index;
    cpu_probe(0, dev->desc, sizeof dev->desc);
    const int blas_mode = openblas_get_parallel();
    cpu_blas_nests = blas_mode == OPENBLAS_OPENMP || blas_mode == OPENBLAS_SEQUENTIAL;
    dev->impl = calloc(1, sizeof(cpu_impl));
    if (!dev->impl) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    return OB_OK;
}

static void cpu_close(ob_device *dev)
{
    free(dev->impl);
    dev->impl = NULL;
}

static ob_status cpu_timer_mark(ob_device *dev, int slot, ob_err *e)
{
    if (slot < 0 || slot >= OB_TIMER_SLOTS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "timer slot %d out of range", slot);
    clock_gettime(CLOCK_MONOTONIC, &((cpu_impl *)dev->impl)->marks[slot]);
    return OB_OK;
}

static ob_status cpu_timer_read(ob_device *dev, int a, int b, double *ms, ob_err *e)
{
    if (a < 0 || a >= OB_TIMER_SLOTS || b < 0 || b >= OB_TIMER_SLOTS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "timer slot out of range");
    const struct timespec *m = ((cpu_impl *)dev->impl)->marks;
    *ms = (double)(m[b].tv_sec - m[a].tv_sec) * 1e3 + (double)(m[b].tv_nsec - m[a].tv_nsec) * 1e-6;
    return OB_OK;
}

/* Buffers of 2 MB and more start on a 2 MB boundary and ask for transparent
 * huge pages (where the kernel's setting is "madvise", the common default;
 * "always" gives them anyway, "never" ignores the request). The optimizer's
 * step streams four to six such arrays at once: with 4 KB pages it pays a
 * TLB miss every 4 KB of each, and the steps of AdamW and SGD over 10M
 * parameters took 11-18% longer (2 threads, medians of 10 alternated runs). PyTorch's CPU
 * allocator does the same under THP_MEM_ALLOC_ENABLE=1. */
static ob_status cpu_alloc(ob_device *dev, size_t bytes, void **out, ob_err *e)
{
    (void)dev;
    const size_t huge = (size_t)2 << 20;
    const int big = bytes >= huge;
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = NULL;
    if (posix_memalign(&p, big ? huge : 64, rounded) != 0 || !p)
        return ob_fail(e, OB_ERR_NOMEM, "out of memory allocating %zu bytes", bytes);
#ifdef MADV_HUGEPAGE
    if (big) (void)madvise(p, rounded / huge * huge, MADV_HUGEPAGE);
#endif
    memset(p, 0, rounded);
    *out = p;
    return OB_OK;
}

static void cpu_release(ob_device *dev, void *p)
{
    (void)dev;
    free(p);
}

/* A large copy of disjoint ranges is split over the OpenMP threads: one
 * thread's memcpy does not reach a multi-core machine's memory bandwidth (the
 * optimizer step, the snapshots and bench-step's copy reference all run on
 * every thread). Overlapping ranges take memmove. */
static ob_status cpu_memcpy(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e)
{
    (void)dev;
    (void)e;
    enum { PAR_BYTES = 4 << 20, CHUNK = 1 << 20 };
    char *d = dst;
    const char *sp = src;
    if (bytes < PAR_BYTES || (d < sp + bytes && sp < d + bytes)) {
        if (bytes) memmove(dst, src, bytes);
        return OB_OK;
    }
    const int64_t nc = (int64_t)((bytes + CHUNK - 1) / CHUNK);
#pragma omp parallel for
    for (int64_t c = 0; c < nc; c++) {
        size_t lo = (size_t)c * CHUNK, n = bytes - lo < CHUNK ? bytes - lo : CHUNK;
        memcpy(d + lo, sp + lo, n);
    }
    return OB_OK;
}

static ob_status cpu_sync(ob_device *dev, ob_err *e)
{
    (void)dev;
    (void)e;
    return OB_OK;
}

/* Replicas on the CPU share the host's memory: the group needs no state of
 * its own (a non-NULL token), and the sum runs on the calling thread. */
static ob_status cpu_group_open(ob_device *const *devs, int n, void **group, ob_err *e)
{
    (void)devs;
    if (n < 1) return ob_fail(e, OB_ERR_INPUT, "a replica group needs at least one device");
    static int token;
    *group = &token;
    return OB_OK;
}

/* Each element summed in replica order (((b0 + b1) + b2) + ...), then
 * written to every replica: the same bits however the loop is split. */
static ob_status cpu_group_sum(void *group, ob_device *const *devs, int n, float *const *bufs, int64_t count,
                               ob_err *e)
{
    (void)group;
    (void)devs;
    (void)e;
    if (n < 2) return OB_OK;
#pragma omp parallel for if (count > PAR_MIN)
    for (int64_t i = 0; i < count; i++) {
        float s = bufs[0][i];
        for (int r = 1; r < n; r++) s += bufs[r][i];
        for (int r = 0; r < n; r++) bufs[r][i] = s;
    }
    return OB_OK;
}

static void cpu_group_close(void *group)
{
    (void)group;
}

static ob_status cpu_fill(ob_device *dev, float *x, float v, int64_t n, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) x[i] = v;
    return OB_OK;
}

static ob_status cpu_axpby(ob_device *dev, int64_t n, float a, const float *x, float b, float *y,
                           ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) y[i] = a * x[i] + b * y[i];
    return OB_OK;
}

static ob_status cpu_rng_normal(ob_device *dev, float *x, int64_t n, uint64_t seed, uint64_t stream,
                                uint64_t offset, float mean, float std, ob_err *e)
{
    (void)dev;
    (void)e;
    const int isa = ob_cpu_rng_isa(OB_CPU_ISA_CURRENT);
    const int64_t chunk = 4096, chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for if (n > PAR_MIN / 8)
    for (int64_t k = 0; k < chunks; k++) {
        const int64_t lo = k * chunk, len = n - lo < chunk ? n - lo : chunk;
        float *xk = x + lo;
        ob_cpu_normals(isa, xk, len, seed, stream, offset + (uint64_t)lo); /* ob_rng_normal's values */
        for (int64_t i = 0; i < len; i++) xk[i] = mean + std * xk[i];
    }
    return OB_OK;
}

/* Sums in double over fixed chunks, combined in chunk order: the result does
 * not depend on the number of threads or their timing (bitwise repeatable). */
#define RED_CHUNK 8192

/* Halves of the eight running sums of the reductions below, four lanes
 * each (GCC's vector types: gcc does not vectorize their scalar forms). One
 * load of four floats widened (a pair of floats, as an earlier version
 * loaded them, was widened one scalar at a time; gcc 12 still widens four
 * in two halves and a lane insert, even for AVX2, which is why x86 CPUs take
 * the intrinsics of reduce_x86.c, with the same order of additions). */
typedef float ob_v4f __attribute__((vector_size(16), aligned(4), may_alias));
typedef double ob_v4d __attribute__((vector_size(32)));
typedef long long ob_v4l __attribute__((vector_size(32)));

/* Macros, not functions: a function passing these 32-byte vectors by value
 * has an ABI that depends on whether AVX is enabled (-Wpsabi). */
#define LOAD4D(x) __builtin_convertvector(*(const ob_v4f *)(x), ob_v4d)
/* the eight lanes of a and b added in the reductions' fixed order */
#define SUM8(a, b) ((((a)[0] + (a)[1]) + ((a)[2] + (a)[3])) + (((b)[0] + (b)[1]) + ((b)[2] + (b)[3])))

/* sum of x[i] y[i] over [lo, hi) in double: element i in running sum
 * (i - lo) mod 8, the eight added in a fixed order, then the tail (each
 * product is exact in double) */
OB_CPU_CLONES static double chunk_dot(const float *x, const float *y, int64_t lo, int64_t hi)
{
    ob_v4d s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
    const int64_t end = lo + (hi - lo) / 8 * 8;
    for (int64_t i = lo; i < end; i += 8) {
        s0 += LOAD4D(x + i) * LOAD4D(y + i);
        s1 += LOAD4D(x + i + 4) * LOAD4D(y + i + 4);
    }
    double t = 0;
    for (int64_t i = end; i < hi; i++) t += (double)x[i] * y[i];
    return SUM8(s0, s1) + t;
}

/* chunk_dot through the vector path of reduce_x86.c where the CPU has one */
static double chunk_dot_fast(const float *x, const float *y, int64_t lo, int64_t hi, int isa)
{
    if (isa == OB_CPU_ISA_GENERIC) return chunk_dot(x, y, lo, hi);
    const int64_t end = lo + (hi - lo) / 8 * 8;
    double t = 0;
    for (int64_t i = end; i < hi; i++) t += (double)x[i] * y[i];
    return ob_cpu_dot8(isa, x, y, lo, end) + t;
}

static ob_status cpu_dot(ob_device *dev, int64_t n, const float *x, const float *y, float *out,
                         ob_err *e)
{
    (void)dev;
    (void)e;
    int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK;
    double stack[64], *part = nc <= 64 ? stack : malloc((size_t)nc * sizeof *part);
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int isa = ob_cpu_reduce_isa(OB_CPU_ISA_CURRENT);
#pragma omp parallel for if (n > PAR_MIN)
    for (int64_t c = 0; c < nc; c++) {
        int64_t hi = (c + 1) * RED_CHUNK < n ? (c + 1) * RED_CHUNK : n;
        part[c] = chunk_dot_fast(x, y, c * RED_CHUNK, hi, isa);
    }
    double s = 0;
    for (int64_t c = 0; c < nc; c++) s += part[c];
    if (part != stack) free(part);
    *out = (float)s;
    return OB_OK;
}

/* cpu_dot(x_b, x_b) for each b, the chunks of every x_b spread over the threads. */
static ob_status cpu_batched_sumsq(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride, float *out,
                                   ob_err *e)
{
    (void)dev;
    if (batch <= 0) return OB_OK;
    const int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK, total = nc * batch;
    double stack[64], *part = total <= 64 ? stack : malloc((size_t)total * sizeof *part);
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int isa = ob_cpu_reduce_isa(OB_CPU_ISA_CURRENT);
#pragma omp parallel for if (n * batch > PAR_MIN && total > 1)
    for (int64_t w = 0; w < total; w++) {
        const int64_t b = w / nc, c = w % nc;
        const float *xb = x + b * stride;
        int64_t hi = (c + 1) * RED_CHUNK < n ? (c + 1) * RED_CHUNK : n;
        part[w] = chunk_dot_fast(xb, xb, c * RED_CHUNK, hi, isa);
    }
    for (int b = 0; b < batch; b++) {
        double s = 0;
        for (int64_t c = 0; c < nc; c++) s += part[b * nc + c];
        out[b] = (float)s;
    }
    if (part != stack) free(part);
    return OB_OK;
}

/* C = 0 over m rows of n (row stride ldc). OpenBLAS runs a product with
 * beta = 0 as a separate pass that zeroes C (its beta kernel), then adds the
 * product to C; clearing C here with memset (which streams the stores) and
 * passing beta = 1 leaves the same additions, so the same bits, and was 9% of
 * bert-tiny's step in that beta kernel. par: rows split over the threads. */
static void zero_c(float *C, int m, int n, int ldc, int par)
{
    if (ldc == n) {
        const int64_t total = (int64_t)m * n;
        if (par && total > PAR_MIN) {
            const int64_t step = 16384; /* floats per piece, a multiple of a cache line */
#pragma omp parallel for
            for (int64_t i = 0; i < total; i += step)
                memset(C + i, 0, (size_t)(total - i < step ? total - i : step) * sizeof *C);
        } else {
            memset(C, 0, (size_t)total * sizeof *C);
        }
        return;
    }
#pragma omp parallel for if (par && (int64_t)m * n > PAR_MIN)
    for (int r = 0; r < m; r++) memset(C + (int64_t)r * ldc, 0, (size_t)n * sizeof *C);
}

/* The beta to pass OpenBLAS for a product into C (m rows of n, stride ldc):
 * beta = 0 becomes zero_c and beta = 1. Called outside any parallel region
 * with par = 1, inside one (a team's products) with par = 0. */
static float blas_beta(float beta, float *C, int m, int n, int ldc, int par)
{
    if (beta != 0.0f) return beta;
    zero_c(C, m, n, ldc, par);
    return 1.0f;
}

/* cblas_sgemm, row-major, through blas_beta */
static void sgemm_rm(CBLAS_TRANSPOSE TA, CBLAS_TRANSPOSE TB, int m, int n, int k, float alpha, const float *A,
                     int lda, const float *B, int ldb, float beta, float *C, int ldc, int par)
{
    beta = blas_beta(beta, C, m, n, ldc, par);
    cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static ob_status cpu_gemm(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha,
                          const float *A, int lda, const float *B, int ldb, float beta, float *C,
                          int ldc, ob_err *e)
{
    (void)dev;
    (void)e;
    sgemm_rm(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda, B, ldb, beta,
             C, ldc, 1);
    return OB_OK;
}

/* Products below this many multiply-adds are too small for OpenBLAS to split
 * well over threads: bert-small's per-head 128 x 128 x 64 attention products
 * ran at a third of its large products' rate on two threads. */
#define GEMM_SMALL_MACS (1LL << 22)

/* A batch of same-shape products (attention heads, Newton-Schulz on
 * same-shape matrices) runs one product per thread when the products are
 * small or there are several per thread; otherwise the products run in turn,
 * each on every thread. The choice depends only on the shapes and the thread
 * count, so results are the same run to run at a fixed thread count (as
 * everywhere on the CPU, another thread count may change low bits: OpenBLAS
 * rounds a product split over threads differently from the same product on
 * one). Returns the team size for one product per thread, or 0 for the
 * products in turn. The team is at most GEMM_BATCH_THREADS: each OpenBLAS
 * call in flight holds one of a fixed set of buffers, sized by the thread
 * count OpenBLAS was built for, and OpenBLAS aborts when none is left. */
#define GEMM_BATCH_THREADS 32
static int cpu_batch_per_thread(int batch, int64_t macs)
{
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    if (!cpu_blas_nests || threads < 2 || batch < 2 || !(macs < GEMM_SMALL_MACS || batch >= 4 * threads)) return 0;
    if (threads > GEMM_BATCH_THREADS) threads = GEMM_BATCH_THREADS;
    return threads < batch ? threads : batch;
#else
    (void)batch;
    (void)macs;
    return 0;
#endif
}

static ob_status cpu_gemm_sb(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha,
                             const float *A, int lda, int64_t sa, const float *B, int ldb, int64_t sb,
                             float beta, float *C, int ldc, int64_t sc, int batch, ob_err *e)
{
    (void)dev;
    (void)e;
    const CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    const int team = cpu_batch_per_thread(batch, (int64_t)m * n * k);
    if (team) {
#pragma omp parallel for schedule(static) num_threads(team)
        for (int i = 0; i < batch; i++)
            sgemm_rm(TA, TB, m, n, k, alpha, A + i * sa, lda, B + i * sb, ldb, beta, C + i * sc, ldc, 0);
    } else {
        /* not a parallel region, not even an inactive one: OpenBLAS's OpenMP
         * build runs a call made inside any region on one thread */
        for (int i = 0; i < batch; i++)
            sgemm_rm(TA, TB, m, n, k, alpha, A + i * sa, lda, B + i * sb, ldb, beta, C + i * sc, ldc, 1);
    }
    return OB_OK;
}

/* OpenBLAS ssyrk fills the upper triangle; the lower one is copied from it
 * in 32 x 32 tiles (a row-by-column copy of a large matrix misses the cache
 * on every read). */
static void syrk_full(int trans, int n, int k, float alpha, const float *A, int lda, float beta, float *c, int ldc,
                      int par)
{
    enum { TILE = 32 };
    beta = blas_beta(beta, c, n, n, ldc, par);
    cblas_ssyrk(CblasRowMajor, CblasUpper, trans ? CblasTrans : CblasNoTrans, n, k, alpha, A, lda, beta, c, ldc);
    for (int i0 = 0; i0 < n; i0 += TILE)
        for (int j0 = 0; j0 <= i0; j0 += TILE) {
            int i1 = i0 + TILE < n ? i0 + TILE : n, j1 = j0 + TILE < n ? j0 + TILE : n;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1 && j < i; j++) c[(int64_t)i * ldc + j] = c[(int64_t)j * ldc + i];
        }
}

/* Batches as cpu_gemm_sb does. */
static ob_status cpu_syrk_sb(ob_device *dev, int trans, int n, int k, float alpha, const float *A, int lda,
                             int64_t sa, float beta, float *C, int ldc, int64_t sc, int batch, ob_err *e)
{
    (void)dev;
    (void)e;
    const int team = cpu_batch_per_thread(batch, (int64_t)n * n * k / 2);
    if (team) {
#pragma omp parallel for schedule(static) num_threads(team)
        for (int b = 0; b < batch; b++) syrk_full(trans, n, k, alpha, A + b * sa, lda, beta, C + b * sc, ldc, 0);
    } else {
        for (int b = 0; b < batch; b++) syrk_full(trans, n, k, alpha, A + b * sa, lda, beta, C + b * sc, ldc, 1);
    }
    return OB_OK;
}

/* lanes 4k to 4k+3 of the eight: x[0..3] into acc, their finite count
 * (negated) into fin_neg */
static inline void stats_quad(const float *x, ob_v4d *acc, ob_v4l *fin_neg)
{
    const ob_v4d d = LOAD4D(x);
    /* -1 where finite, 0 for inf and NaN (d - d is then NaN); written so,
     * not as |d| <= FLT_MAX through a mask of the bits, which gcc 12.2 for
     * aarch64 with SVE (-mcpu=neoverse-v1) cannot compile */
    const ob_v4l fin = d - d == (ob_v4d){0, 0, 0, 0};
    *acc += (ob_v4d)((ob_v4l)(d * d) & fin);
    *fin_neg += fin;
}

/* the elements after the last full eight: the sum of squares of the
 * finite ones in index order, and (*bad) the count of the others */
static double tail_stats(const float *g, int64_t lo, int64_t hi, double *bad)
{
    double ts = 0;
    *bad = 0;
    for (int64_t i = lo; i < hi; i++) {
        const float x = g[i];
        if (fabsf(x) <= FLT_MAX)
            ts += (double)x * x;
        else
            *bad += 1;
    }
    return ts;
}

/* out[0] = sum of squares of the finite g[lo..hi), out[1] = count of the
 * others. Eight running sums, element i in sum (i - lo) mod 8, added up in
 * a fixed order at the end (the tail after the last full eight in a sum of
 * its own): a single running sum is a chain of dependent additions (about 4
 * cycles per element), eight side by side are two AVX2 registers (four SSE2
 * ones in the default build). Written with GCC's vector types because gcc
 * does not vectorize the scalar form (it keeps a branch around the
 * conversion of a value that may be a NaN). The order is fixed, so the sums
 * are the same bits in every build and on every thread count (each square
 * is exact in double). */
OB_CPU_CLONES static void chunk_stats(const float *g, int64_t lo, int64_t hi, double *out)
{
    ob_v4d s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
    ob_v4l f0 = {0, 0, 0, 0}, f1 = {0, 0, 0, 0};
    const int64_t end = lo + (hi - lo) / 8 * 8;
    for (int64_t i = lo; i < end; i += 8) {
        stats_quad(g + i, &s0, &f0);
        stats_quad(g + i + 4, &s1, &f1);
    }
    double tbad;
    const double ts = tail_stats(g, end, hi, &tbad);
    const ob_v4l f = f0 + f1;
    const long long finite = -((f[0] + f[1]) + (f[2] + f[3]));
    out[0] = SUM8(s0, s1) + ts;
    out[1] = (double)((end - lo) - finite) + tbad;
}

/* chunk_stats through the vector path of reduce_x86.c where the CPU has one:
 * the sum of squares without the finiteness mask, which only a chunk holding
 * a non-finite value (the sum is then not finite) pays for, by running
 * chunk_stats over it again. Same bits as chunk_stats. */
static void chunk_stats_fast(const float *g, int64_t lo, int64_t hi, double *out, int isa)
{
    if (isa != OB_CPU_ISA_GENERIC) {
        const int64_t end = lo + (hi - lo) / 8 * 8;
        double tbad;
        const double ts = tail_stats(g, end, hi, &tbad);
        const double body = ob_cpu_sumsq8(isa, g, lo, end);
        if (isfinite(body)) {
            out[0] = body + ts;
            out[1] = tbad;
            return;
        }
    }
    chunk_stats(g, lo, hi, out);
}

static ob_status cpu_grad_stats(ob_device *dev, const float *g, int64_t n, ob_step_stats *st,
                                ob_err *e)
{
    (void)dev;
    int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK;
    double stack[128], *part = nc <= 64 ? stack : malloc((size_t)(2 * nc) * sizeof *part);
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int isa = ob_cpu_reduce_isa(OB_CPU_ISA_CURRENT);
#pragma omp parallel for if (n > PAR_MIN)
    for (int64_t c = 0; c < nc; c++)
        chunk_stats_fast(g, c * RED_CHUNK, (c + 1) * RED_CHUNK < n ? (c + 1) * RED_CHUNK : n, part + 2 * c, isa);
    for (int64_t c = 0; c < nc; c++) {
        st->sumsq += part[2 * c];
        st->nonfinite += part[2 * c + 1];
    }
    if (part != stack) free(part);
    return OB_OK;
}

static ob_status cpu_finish_stats(ob_device *dev, ob_step_stats *st, const float *loss,
                                  float clip_norm, ob_spike *spike, ob_step_record *rec, ob_err *e)
{
    (void)dev;
    (void)e;
    ob_stats_finish(st, loss, clip_norm, spike, rec);
    return OB_OK;
}

/* One rule over [lo, hi) of the arrays; the switch sits outside the loops, so
 * each loop body is one inlined rule (always: OB_HD, core/ob.h), and a rule's switches (amsgrad, weight
 * decay, momentum, ...) are tested outside the loop too (SPLIT): inside each
 * copy of the loop the compiler knows their outcome, the body has no branch
 * left, and it vectorizes (in the widest build the CPU has: OB_CPU_CLONES;
 * the rules' square roots and divisions are IEEE in every build, so the bits
 * are the same). */
OB_CPU_CLONES static void rule_span(const ob_rule *rule, const ob_rule_step *sc, float clip, float *p, const float *g,
                      float *const *st3, int64_t lo, int64_t hi)
{
    const ob_rule r = *rule;
    const ob_rule_step step = *sc;
    float *s0 = st3[0], *s1 = st3[1], *s2 = st3[2];
    const int centered = (r.flags & OB_RULE_CENTERED) != 0;
    float *ga = centered ? s1 : NULL, *mb = r.momentum != 0.0f ? (centered ? s2 : s1) : NULL;
    const int wd = r.weight_decay != 0.0f, first = step.t <= 1.0f, mom = r.momentum != 0.0f;
    const int near_z = step.c[0] >= 0.5f; /* ob_lerp's branch in the schedule-free rules */
#define LOOP(call) for (int64_t i = lo; i < hi; i++) call
#define SPLIT(cond, stmt) \
    if (cond) {           \
        stmt;             \
    } else {              \
        stmt;             \
    }
    switch (r.kind) {
    case OB_RULE_SGD:
        SPLIT(wd, SPLIT(mom, SPLIT(first, SPLIT(r.nesterov, LOOP(ob_rule_sgd(&r, &step, &p[i], g[i] * clip,
                                                                         s0 ? &s0[i] : NULL))))));
        break;
    case OB_RULE_ADAM: {
        const int eps_raw = (r.flags & OB_RULE_EPS_RAW) != 0;
        SPLIT(eps_raw, SPLIT(wd, SPLIT(r.decoupled_wd, SPLIT(r.amsgrad, LOOP(ob_rule_adam(&r, &step, &p[i], g[i] * clip,
                                                                                        &s0[i], &s1[i],
                                                                                        r.amsgrad ? &s2[i] : NULL))))));
        break;
    }
    case OB_RULE_NADAM:
        SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_nadam(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i]))));
        break;
    case OB_RULE_RADAM:
        SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_radam(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i]))));
        break;
    case OB_RULE_ADAMAX:
        SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_adamax(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i]))));
        break;
    case OB_RULE_ADAGRAD: SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_adagrad(&r, &step, &p[i], g[i] * clip, &s0[i])))); break;
    case OB_RULE_ADADELTA: SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_adadelta(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i])))); break;
    case OB_RULE_RMSPROP:
        /* the rule's switches as constants, so that its tests of them fold */
        if (ga && mb) {
            SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_rmsprop_k(&r, &step, &p[i], g[i] * clip, &s0[i], &ga[i], &mb[i], 1, 1))));
        } else if (ga) {
            SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_rmsprop_k(&r, &step, &p[i], g[i] * clip, &s0[i], &ga[i], NULL, 1, 0))));
        } else if (mb) {
            SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_rmsprop_k(&r, &step, &p[i], g[i] * clip, &s0[i], NULL, &mb[i], 0, 1))));
        } else {
            SPLIT(wd, SPLIT(r.decoupled_wd, LOOP(ob_rule_rmsprop_k(&r, &step, &p[i], g[i] * clip, &s0[i], NULL, NULL, 0, 0))));
        }
        break;
    case OB_RULE_LION: LOOP(ob_rule_lion(&r, &step, &p[i], g[i] * clip, &s0[i])); break;
    case OB_RULE_MUON_MOMENTUM:
        SPLIT(r.nesterov, LOOP(ob_rule_muon_momentum(&r, &p[i], g[i] * clip, &s0[i])));
        break;
    case OB_RULE_ROOT_MOMENTUM:
        SPLIT(r.nesterov, LOOP(ob_rule_root_momentum(&r, &p[i], g[i] * clip, &s0[i])));
        break;
    case OB_RULE_MATRIX_APPLY: LOOP(ob_rule_matrix_apply(&r, &step, &p[i], &s0[i])); break;
    case OB_RULE_ADAMW_SF:
        SPLIT(wd, SPLIT(near_z, LOOP(ob_rule_adamw_sf(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i]))));
        break;
    case OB_RULE_SGD_SF: SPLIT(wd, SPLIT(near_z, LOOP(ob_rule_sgd_sf(&r, &step, &p[i], g[i] * clip, &s0[i])))); break;
    case OB_RULE_COPY:
        if (r.c[0] != 0.0f)
            LOOP(p[i] = g[i] * clip);
        else
            LOOP(p[i] = g[i]);
        break;
    case OB_RULE_LERP: LOOP(ob_rule_lerp(&r, &p[i], g[i])); break;
    case OB_RULE_SOAP_ADAM: LOOP(ob_rule_soap_adam(&r, &p[i], g[i], &s0[i], &s1[i])); break;
    case OB_RULE_SOAP_APPLY: LOOP(ob_rule_soap_apply(&r, &step, &p[i], &s0[i])); break;
    case OB_RULE_AF_VAR: LOOP(ob_rule_af_var(&r, &step, &p[i], g[i])); break;
    case OB_RULE_AF_VEC: LOOP(ob_rule_af_vec(&r, &p[i], g[i], &s0[i])); break;
    case OB_RULE_AF_APPLY: LOOP(ob_rule_af_apply(&r, &step, &p[i], &s0[i])); break;
    case OB_RULE_RPROP: LOOP(ob_rule_rprop(&r, &p[i], g[i] * clip, &s0[i], &s1[i])); break;
    case OB_RULE_ASGD:
        SPLIT(wd, SPLIT(step.c[1] != 1.0f, LOOP(ob_rule_asgd(&r, &step, &p[i], g[i] * clip, &s0[i]))));
        break;
    case OB_RULE_LAMB:
        SPLIT(wd, SPLIT(r.c[0] != 0.0f, LOOP(ob_rule_lamb(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i], &s2[i]))));
        break;
    case OB_RULE_LARS:
        SPLIT(wd, SPLIT(mom, SPLIT(first, SPLIT(r.nesterov, LOOP(ob_rule_lars(&r, &step, &p[i], g[i] * clip,
                                                                          s0 ? &s0[i] : NULL))))));
        break;
    case OB_RULE_ADEMAMIX: LOOP(ob_rule_ademamix(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i], &s2[i])); break;
    case OB_RULE_ADABELIEF: {
        /* the decay's forms (none, fixed, L2 or decoupled) and amsgrad split;
         * the step's phase (adaptive, SGD, none) is two selections on
         * per-step scalars, which vectorize as they are */
        const int fixed = (r.flags & OB_RULE_FIXED_DECAY) != 0;
#define ADABELIEF LOOP(ob_rule_adabelief(&r, &step, &p[i], g[i] * clip, &s0[i], &s1[i], r.amsgrad ? &s2[i] : NULL))
        if (!wd) {
            SPLIT(r.amsgrad, ADABELIEF);
        } else if (fixed) {
            SPLIT(r.amsgrad, ADABELIEF);
        } else {
            SPLIT(r.decoupled_wd, SPLIT(r.amsgrad, ADABELIEF));
        }
#undef ADABELIEF
        break;
    }
    default:
        for (int64_t i = lo; i < hi; i++) ob_rule_apply(&r, &step, clip, p, g, (float **)st3, i);
        break;
    }
#undef SPLIT
#undef LOOP
}

/* The span of a decay table (elementwise_step_spans) that holds element i:
 * the k with bound[k] <= i < bound[k + 1]. */
static int span_at(const int64_t *bound, int n_span, int64_t i)
{
    int lo = 0, hi = n_span - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (bound[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The update of [lo, hi), each piece of a span with its rule: with the
 * decay (rule) or without (nd). */
static void rule_spans(const ob_rule *rule, const ob_rule *nd, const ob_rule_step *sc, float clip, float *p,
                       const float *g, float *const *st3, int64_t lo, int64_t hi, const int64_t *bound, int n_span,
                       int nd0)
{
    if (!bound) {
        rule_span(rule, sc, clip, p, g, st3, lo, hi);
        return;
    }
    for (int k = span_at(bound, n_span, lo); k < n_span && bound[k] < hi; k++) {
        const int64_t a = bound[k] > lo ? bound[k] : lo, b = bound[k + 1] < hi ? bound[k + 1] : hi;
        rule_span((k + nd0) & 1 ? nd : rule, sc, clip, p, g, st3, a, b);
    }
}

/* elementwise_step, elementwise_step_stats and elementwise_step_spans: one
 * sweep over n floats in chunks of RED_CHUNK, each chunk's gradient
 * statistics (with_stats) summed while it is in cache, in cpu_grad_stats'
 * chunks and order (the same sums, bit for bit, whatever the spans). */
static ob_status ew_sweep(const ob_rule *rule, const ob_rule_step *sc, ob_step_stats *st, float *p, const float *g,
                          float *const *s, int64_t n, const int64_t *bound, int n_span, int nd0, int with_stats,
                          ob_err *e)
{
    const int skip = st->skip != 0.0f;
    if (n <= 0 || (skip && !with_stats)) return OB_OK;
    const float clip = st->clip_scale;
    float *st3[OB_RULE_MAX_STATE] = {0};
    for (int k = 0; k < rule->n_state && k < OB_RULE_MAX_STATE; k++) st3[k] = s[k];
    ob_rule nd = *rule;
    nd.weight_decay = 0.0f;
    const int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK;
    double stack[128], *part = !with_stats || nc <= 64 ? stack : malloc((size_t)(2 * nc) * sizeof *part);
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int isa = ob_cpu_reduce_isa(OB_CPU_ISA_CURRENT);
#pragma omp parallel for if (n > PAR_MIN)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t lo = c * RED_CHUNK, hi = (c + 1) * RED_CHUNK < n ? (c + 1) * RED_CHUNK : n;
        if (with_stats) chunk_stats_fast(g, lo, hi, part + 2 * c, isa);
        if (!skip) rule_spans(rule, &nd, sc, clip, p, g, st3, lo, hi, bound, n_span, nd0);
    }
    if (with_stats)
        for (int64_t c = 0; c < nc; c++) {
            st->sumsq += part[2 * c];
            st->nonfinite += part[2 * c + 1];
        }
    if (part != stack) free(part);
    return OB_OK;
}

static ob_status cpu_elementwise_step(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                      const ob_step_stats *st, float *p, const float *g,
                                      float *const *s, int64_t n, ob_err *e)
{
    (void)dev;
    /* without statistics the sweep only reads st */
    return ew_sweep(rule, sc, (ob_step_stats *)st, p, g, s, n, NULL, 0, 0, 0, e);
}

/* Segment b of a batch: the pointers moved by b strides. */
static void seg_ptrs(const ob_rule *rule, const ob_rule_step *sc, float *p, const float *g, float *const *s,
                     const int64_t *stride, int64_t b, const ob_rule_step **scb, float **pb, const float **gb,
                     float **sb)
{
    *scb = sc + b * stride[OB_BATCH_STEP];
    *pb = p + b * stride[0];
    *gb = g + b * stride[1];
    for (int k = 0; k < OB_RULE_MAX_STATE; k++)
        sb[k] = k < rule->n_state && s[k] ? s[k] + b * stride[2 + k] : NULL;
}

static ob_status cpu_elementwise_step_batch(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                            const ob_step_stats *st, float *p, const float *g, float *const *s,
                                            int64_t n, int64_t count, const int64_t *stride, ob_err *e)
{
    (void)dev;
    (void)e;
    if (st->skip != 0.0f || n <= 0 || count <= 0) return OB_OK;
    const float clip = st->clip_scale;
    const int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK, total = nc * count;
#pragma omp parallel for if (n * count > PAR_MIN)
    for (int64_t w = 0; w < total; w++) {
        const int64_t b = w / nc, c = w % nc;
        float *pb, *sb[OB_RULE_MAX_STATE];
        const float *gb;
        const ob_rule_step *scb;
        seg_ptrs(rule, sc, p, g, s, stride, b, &scb, &pb, &gb, sb);
        rule_span(rule, scb, clip, pb, gb, sb, c * RED_CHUNK, (c + 1) * RED_CHUNK < n ? (c + 1) * RED_CHUNK : n);
    }
    return OB_OK;
}

/* elementwise_step_batch and batched_sumsq of role 2 and of the target, in
 * one sweep: each (segment, chunk) is stepped, then its two sums taken in
 * batched_sumsq's chunks and order (the same bits as the two passes). */
static ob_status cpu_elementwise_step_batch_sumsq(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                                  const ob_step_stats *st, float *p, const float *g, float *const *s,
                                                  int64_t n, int64_t count, const int64_t *stride, float *sq,
                                                  ob_err *e)
{
    (void)dev;
    if (n <= 0 || count <= 0) return OB_OK;
    if (rule->n_state < 3 || !s[2])
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cpu elementwise_step_batch_sumsq: rule kind %d has no role 2",
                                rule->kind);
    const int skip = st->skip != 0.0f;
    const float clip = st->clip_scale;
    const int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK, total = nc * count;
    double stack[128], *part = total <= 64 ? stack : malloc((size_t)(2 * total) * sizeof *part);
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int isa = ob_cpu_reduce_isa(OB_CPU_ISA_CURRENT);
#pragma omp parallel for if (n * count > PAR_MIN && total > 1)
    for (int64_t w = 0; w < total; w++) {
        const int64_t b = w / nc, c = w % nc, lo = c * RED_CHUNK, hi = (c + 1) * RED_CHUNK < n ? (c + 1) * RED_CHUNK : n;
        float *pb, *sb[OB_RULE_MAX_STATE];
        const float *gb;
        const ob_rule_step *scb;
        seg_ptrs(rule, sc, p, g, s, stride, b, &scb, &pb, &gb, sb);
        if (!skip) rule_span(rule, scb, clip, pb, gb, sb, lo, hi);
        part[w] = chunk_dot_fast(sb[2], sb[2], lo, hi, isa);
        part[total + w] = chunk_dot_fast(pb, pb, lo, hi, isa);
    }
    for (int64_t b = 0; b < 2 * count; b++) {
        double x = 0;
        for (int64_t c = 0; c < nc; c++) x += part[b * nc + c];
        sq[b] = (float)x;
    }
    if (part != stack) free(part);
    return OB_OK;
}

static ob_status cpu_elementwise_step_stats(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                            ob_step_stats *st, float *p, const float *g, float *const *s,
                                            int64_t n, ob_err *e)
{
    (void)dev;
    return ew_sweep(rule, sc, st, p, g, s, n, NULL, 0, 0, 1, e);
}

static ob_status cpu_elementwise_step_spans(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                            ob_step_stats *st, float *p, const float *g, float *const *s,
                                            int64_t n, const int64_t *bound, int n_span, int nd0, int with_stats,
                                            ob_err *e)
{
    (void)dev;
    if (n_span < 1 || bound[0] != 0 || bound[n_span] != n)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cpu elementwise_step_spans: %d spans do not cover %lld floats",
                                n_span, (long long)n);
    /* the op's contract, which CUDA's vector loads rely on, checked here */
    for (int k = 1; k < n_span; k++)
        if (bound[k] % 4 || bound[k] <= bound[k - 1])
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL,
                                    "cpu elementwise_step_spans: bound %d (%lld) is not a multiple of 4 past %lld", k,
                                    (long long)bound[k], (long long)bound[k - 1]);
    return ew_sweep(rule, sc, st, p, g, s, n, bound, n_span, nd0, with_stats, e);
}

/* A batch of same-shape matrices or tensors takes a dozen or more passes
 * over its buffers (Newton-Schulz's products, SOAP's rotations): at most
 * 128K floats (512 KB) per buffer keeps them in the caches, but at least 8
 * items per thread, so that its products of large matrices still run one
 * per thread (cpu_gemm_sb). Measured in docs/optimizers.md (Muon over 1000 tensors
 * of 64x64: 1.4x faster than batches of 16M floats). */
static int64_t cpu_batch_floats(const ob_device *dev, int64_t item_floats)
{
    (void)dev;
    const int64_t cache = (int64_t)1 << 17, per_threads = (int64_t)omp_get_max_threads() * 8 * item_floats;
    return per_threads > cache ? per_threads : cache;
}

static int cpu_conv_supported(const ob_device *dev, int Cin, int Cout, int K, int stride, int pad)
{
    (void)dev;
    return ob_cpu_conv_direct_ok(Cin, Cout, K, stride, pad);
}

const ob_backend_ops ob_cpu_backend = {
    .name = "cpu",
    .probe = cpu_probe,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_memcpy,
    .download = cpu_memcpy,
    .copy = cpu_memcpy,
    .sync = cpu_sync,
    .mem_info = NULL,
    .make_current = NULL,
    .group_open = cpu_group_open,
    .group_sum = cpu_group_sum,
    .group_close = cpu_group_close,
    .timer_mark = cpu_timer_mark,
    .timer_read = cpu_timer_read,
    .fill = cpu_fill,
    .axpby = cpu_axpby,
    .round_bf16 = ob_cpu_round_bf16,
    .rng_normal = cpu_rng_normal,
    .dot = cpu_dot,
    .gemm = cpu_gemm,
    .gemm_strided_batched = cpu_gemm_sb,
    .gemm_sb_bf16 = ob_cpu_gemm_sb_bf16,
    .syrk_strided_batched = cpu_syrk_sb,
    .grad_stats = cpu_grad_stats,
    .finish_stats = cpu_finish_stats,
    .elementwise_step = cpu_elementwise_step,
    .elementwise_step_stats = cpu_elementwise_step_stats,
    .elementwise_step_batch = cpu_elementwise_step_batch,
    .elementwise_step_spans = cpu_elementwise_step_spans,
    .elementwise_step_batch_sumsq = cpu_elementwise_step_batch_sumsq,
    .batched_normalize = ob_cpu_batched_normalize,
    .batched_sumsq = cpu_batched_sumsq,
    .abs_quantile = ob_cpu_abs_quantile,
    .clamp_abs = ob_cpu_clamp_abs,
    .svd_polar = ob_cpu_svd_polar,
    .swap01 = ob_cpu_swap01,
    .sym_eigvecs = ob_cpu_sym_eigvecs,
    .qr_orth = ob_cpu_qr_orth,
    .eig_order = ob_cpu_eig_order,
    .batch_floats = cpu_batch_floats,
    .sym_eigvecs_batch = ob_cpu_sym_eigvecs_batch,
    .qr_orth_batch = ob_cpu_qr_orth_batch,
    .eig_order_batch = ob_cpu_eig_order_batch,
    .rows_sumsq = ob_cpu_rows_sumsq,
    .cols_sumsq = ob_cpu_cols_sumsq,
    .adafactor_precond = ob_cpu_adafactor_precond,
    .adafactor_scale = ob_cpu_adafactor_scale,
    .trust_scale = ob_cpu_trust_scale,
    .rosenbrock = ob_cpu_rosenbrock,
    /* neural-network layers (kernels/cpu/nn_cpu.c, conv_cpu.c) */
    .embedding_forward = ob_cpu_embedding_forward,
    .embedding_backward = ob_cpu_embedding_backward,
    .layernorm_forward = ob_cpu_layernorm_forward,
    .layernorm_backward = ob_cpu_layernorm_backward,
    .bias_add = ob_cpu_bias_add,
    .bias_backward = ob_cpu_bias_backward,
    .gelu_forward = ob_cpu_gelu_forward,
    .gelu_backward = ob_cpu_gelu_backward,
    .heads_split = ob_cpu_heads_split,
    .heads_merge = ob_cpu_heads_merge,
    .softmax_forward = ob_cpu_softmax_forward,
    .softmax_backward = ob_cpu_softmax_backward,
    .rows_gather = ob_cpu_rows_gather,
    .rows_scatter_add = ob_cpu_rows_scatter_add,
    .xent_forward = ob_cpu_xent_forward,
    .xent_backward = ob_cpu_xent_backward,
    .im2col = ob_cpu_im2col,
    .col2im = ob_cpu_col2im,
    .conv_supported = cpu_conv_supported,
    .conv_forward = ob_cpu_conv_forward,
    .conv_backward = ob_cpu_conv_backward,
    .groupnorm_forward = ob_cpu_groupnorm_forward,
    .groupnorm_backward = ob_cpu_groupnorm_backward,
    .relu_forward = ob_cpu_relu_forward,
    .relu_backward = ob_cpu_relu_backward,
    .maxpool2_forward = ob_cpu_maxpool2_forward,
    .maxpool2_backward = ob_cpu_maxpool2_backward,
    .avgpool_forward = ob_cpu_avgpool_forward,
    .avgpool_backward = ob_cpu_avgpool_backward,
    .synth_images = ob_cpu_synth_images,
};
