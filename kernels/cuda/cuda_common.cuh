/* kernels/cuda/cuda_common.cuh - shared by the files of the CUDA backend:
 * the backend-private device state, error checking that turns every CUDA,
 * cuBLAS and cuSOLVER failure into an ob_err naming the op, and launch sizes.
 *
 * Every op runs on the device's one stream (cuda_impl.stream): ops are
 * ordered among themselves, and nothing waits for the GPU except download,
 * sync, timer_read and the release of memory.
 */
#ifndef OB_KERNELS_CUDA_COMMON_CUH
#define OB_KERNELS_CUDA_COMMON_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <stdint.h>

#include "kernels/backend.h"

/* Uploads up to OB_CU_STAGE_CHUNKS slots of OB_CU_STAGE_BYTES (per-step
 * scalars, zeroed statistics, a batch of token ids: 1 MiB, bert's tokens up
 * to a batch of 262,144) go through pinned staging slots, a slot's worth at
 * a time, so that they are truly asynchronous and never make the host wait
 * for the stream (a copy from pageable memory may). A slot is reused once
 * its copy has completed: the host runs at most 64 slots ahead. */
#define OB_CU_STAGE_SLOTS 64
#define OB_CU_STAGE_BYTES 65536
#define OB_CU_STAGE_CHUNKS 16

/* Deterministic reductions: a grid whose size depends only on n, each thread
 * summing a fixed set of elements in order, a fixed tree within the block,
 * then one block combining the partial sums in block order. */
#define OB_CU_RED_THREADS 256
#define OB_CU_RED_MAX_BLOCKS 1024
/* Slots of the occupancy cache (a power of two): above the kernels that
 * cu_grid_resident sizes (the fused step alone has an instance per rule kind,
 * state count and statistics switch, about 300), so each asks the runtime once. */
#define OB_CU_OCC_BITS 10
#define OB_CU_OCC_SLOTS (1u << OB_CU_OCC_BITS)

typedef struct cuda_impl {
    cudaStream_t stream;
    cublasHandle_t blas;
    cusolverDnHandle_t solver; /* created on first use */
    int sm_count;
    int matmul;                /* fp32 GEMM precision, torch.set_float32_matmul_precision's levels:
                                  0 highest (fp32), 1 high (TF32 tensor cores), 2 medium (bf16
                                  tensor cores, fp32 accumulation); OPTBENCH_MATMUL_PRECISION */
    cudaEvent_t marks[OB_TIMER_SLOTS];
    double *red_part;          /* (2 * OB_CU_RED_MAX_BLOCKS) partial sums */
    void *scratch;             /* grow-only scratch of ops that need more (ob_cu_scratch) */
    size_t scratch_bytes;
    float *solve_ws;           /* grow-only workspace of the eigenbasis solvers (sym_eigvecs,
                                  qr_orth): cuSOLVER's lwork, then tau or the eigenvalues */
    size_t solve_ws_bytes;
    int *solve_info;           /* their devInfo, then sym_eigvecs' non-finite flag (two ints) */
    unsigned char *stage;      /* pinned (OB_CU_STAGE_SLOTS * OB_CU_STAGE_BYTES), or NULL */
    cudaEvent_t stage_ev[OB_CU_STAGE_SLOTS];
    int stage_pending[OB_CU_STAGE_SLOTS];
    int stage_next;
    /* resident blocks per SM of kernels launched with cu_grid_resident: an
       open-addressing table keyed by the kernel's address (NULL: free) */
    const void *occ_fn[OB_CU_OCC_SLOTS];
    int occ_blocks[OB_CU_OCC_SLOTS];
} cuda_impl;

static inline cuda_impl *cu_impl(ob_device *dev)
{
    return (cuda_impl *)dev->impl;
}

ob_status ob_cu_fail(ob_err *e, cudaError_t err, const char *op, const char *call, const char *file,
                     int line);
ob_status ob_cublas_fail(ob_err *e, cublasStatus_t st, const char *op, const char *call,
                         const char *file, int line);
ob_status ob_cusolver_fail(ob_err *e, cusolverStatus_t st, const char *op, const char *call,
                           const char *file, int line);

/* Check a CUDA runtime call inside an op named `op`; return the error status. */
#define OB_CU(e, op, call)                                                              \
    do {                                                                                \
        cudaError_t ob_cu_err_ = (call);                                                \
        if (ob_cu_err_ != cudaSuccess)                                                  \
            return ob_cu_fail((e), ob_cu_err_, (op), #call, __FILE__, __LINE__);        \
    } while (0)
/* The calls that create something (memory, events, library handles) or ask
 * about memory act on the calling thread's current GPU, whatever dev says.
 * Each runs between ob_cu_enter, which makes dev's GPU current where it is
 * not and returns the one that was, and ob_cu_leave, which puts that one
 * back: a caller that forgot to select a replica's GPU (data parallel)
 * cannot place them on another GPU, and finds its own selection unchanged.
 * Not on the hot path. */
static inline int ob_cu_enter(const ob_device *dev)
{
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) {
        (void)cudaGetLastError();
        prev = -1;
    }
    if (prev != dev->index && cudaSetDevice(dev->index) != cudaSuccess) (void)cudaGetLastError();
    return prev;
}
/* prev is a GPU this thread selected before: opening a device selects it
 * (cudaSetDevice in open, which makes its context), and the backend's calls
 * run on the threads that opened their devices, so putting prev back makes
 * no new context. */
static inline void ob_cu_leave(const ob_device *dev, int prev)
{
    if (prev >= 0 && prev != dev->index && cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
}
/* After a kernel launch: configuration errors and errors of earlier work. */
#define OB_CU_LAUNCHED(e, op) OB_CU(e, op, cudaGetLastError())
#define OB_CUBLAS(e, op, call)                                                          \
    do {                                                                                \
        cublasStatus_t ob_cb_st_ = (call);                                              \
        if (ob_cb_st_ != CUBLAS_STATUS_SUCCESS)                                         \
            return ob_cublas_fail((e), ob_cb_st_, (op), #call, __FILE__, __LINE__);     \
    } while (0)
#define OB_CUSOLVER(e, op, call)                                                        \
    do {                                                                                \
        cusolverStatus_t ob_cs_st_ = (call);                                            \
        if (ob_cs_st_ != CUSOLVER_STATUS_SUCCESS)                                       \
            return ob_cusolver_fail((e), ob_cs_st_, (op), #call, __FILE__, __LINE__);   \
    } while (0)

/* Blocks for a grid-stride loop over `work` items with `threads` per block:
 * enough to fill the device (8 blocks of 256 per SM), never more than needed. */
static inline unsigned cu_grid(const ob_device *dev, int64_t work, int threads)
{
    int64_t need = (work + threads - 1) / threads;
    int64_t cap = (int64_t)((const cuda_impl *)dev->impl)->sm_count * (2048 / threads);
    if (cap < 1) cap = 1;
    if (need < 1) need = 1;
    return (unsigned)(need < cap ? need : cap);
}

/* Blocks of a deterministic reduction over n items: a function of n alone. */
static inline unsigned cu_red_blocks(int64_t n)
{
    int64_t b = (n + OB_CU_RED_THREADS * 16 - 1) / (OB_CU_RED_THREADS * 16);
    if (b < 1) b = 1;
    if (b > OB_CU_RED_MAX_BLOCKS) b = OB_CU_RED_MAX_BLOCKS;
    return (unsigned)b;
}

/* Blocks for a grid-stride kernel: enough for `work` items, at most what the
 * SMs hold at once for this kernel (its registers decide: a 48-register
 * kernel of 256 threads fits 5 blocks per SM, not 8), so the grid is one wave
 * and no SM idles through a partial second wave. The count is kept per
 * device and kernel, for the block size it was first asked with (each
 * kernel is launched with one: a caller with another must not share it),
 * and asked of dev's GPU (ob_cu_enter: a replica whose GPU the caller left
 * unselected does not cache another GPU's count). */
static inline unsigned cu_grid_resident(ob_device *dev, const void *fn, int64_t work, int threads)
{
    cuda_impl *c = (cuda_impl *)dev->impl;
    int per_sm = 0;
    /* Fibonacci hashing of the address (the product's top bits), then linear
     * probing to the kernel's slot or a free one */
    const unsigned mask = OB_CU_OCC_SLOTS - 1;
    const unsigned h = (unsigned)(((uint64_t)(uintptr_t)fn * 0x9E3779B97F4A7C15ull) >> (64 - OB_CU_OCC_BITS));
    unsigned slot = mask + 1;
    for (unsigned k = 0; k <= mask; k++) {
        const unsigned i = (h + k) & mask;
        if (c->occ_fn[i] == fn) {
            per_sm = c->occ_blocks[i];
            break;
        }
        if (!c->occ_fn[i]) {
            slot = i;
            break;
        }
    }
    if (per_sm == 0) {
        const int prev = ob_cu_enter(dev);
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, 0) != cudaSuccess || per_sm < 1) {
            (void)cudaGetLastError();
            per_sm = 1;
        }
        ob_cu_leave(dev, prev);
        if (slot <= mask) { /* a full table asks each time (it holds more kernels than optbench has) */
            c->occ_fn[slot] = fn;
            c->occ_blocks[slot] = per_sm;
        }
    }
    int64_t need = (work + threads - 1) / threads, cap = (int64_t)c->sm_count * per_sm;
    if (need < 1) need = 1;
    return (unsigned)(need < cap ? need : cap);
}

static inline int cu_aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* Sum (a, b) over the block in a fixed tree; thread 0 gets the totals.
 * blockDim.x must be OB_CU_RED_THREADS. */
static __device__ __forceinline__ void cu_block_sum2(double &a, double &b)
{
    __shared__ double sa[OB_CU_RED_THREADS / 32], sb[OB_CU_RED_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, o);
        b += __shfl_down_sync(0xffffffffu, b, o);
    }
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        sa[w] = a;
        sb[w] = b;
    }
    __syncthreads();
    if (w == 0) {
        a = lane < OB_CU_RED_THREADS / 32 ? sa[lane] : 0.0;
        b = lane < OB_CU_RED_THREADS / 32 ? sb[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_down_sync(0xffffffffu, a, o);
            b += __shfl_down_sync(0xffffffffu, b, o);
        }
    }
    __syncthreads(); /* sa/sb may be reused by a second call */
}

/* One gradient value into the statistics: a += g^2 when finite, else b += 1. */
static __device__ __forceinline__ void cu_gstat_one(float v, double &a, double &b)
{
    if (isfinite(v))
        a += (double)v * v;
    else
        b += 1.0;
}

/* What the final pass of a reduction does with the totals (a, b). */
enum cu_red_epilogue {
    CU_RED_STORE_FLOAT = 0, /* out_f[0] = (float)a */
    CU_RED_ADD_STATS = 1    /* stats->sumsq += a; stats->nonfinite += b */
};

/* Scratch device memory of at least `bytes` for the op in progress (valid until
 * the next call; grows by reallocation, which waits for the device). */
ob_status ob_cu_scratch(ob_device *dev, size_t bytes, void **out, ob_err *e);

/* Second pass: combine `blocks` partial pairs (part[2*i], part[2*i+1]) in order. */
ob_status ob_cu_reduce_finish(ob_device *dev, int blocks, int epilogue, float *out_f,
                              ob_step_stats *stats, const char *op, ob_err *e);

/* Row chunks of the column reductions of the layer backward passes: the same
 * boundaries as the CPU (OB_CPU_RED_CHUNKS), N * c / nch, so the sums agree. */
#define OB_CU_COL_CHUNKS 64

/* Column sums (nn_cuda.cu): mode 0 LayerNorm (dw += sum dout*xhat, db += sum dout),
 * 1 bias (db only), 2 group norm (mean/rstd per (row / HW, column / (C/G))). */
ob_status ob_cu_colsums(ob_device *dev, int mode, float *dw, float *db, const float *dout, const float *inp,
                        const float *mean, const float *rstd, int64_t N, int C, int HW, int G, const char *op,
                        ob_err *e);
/* The layer slots of nn_cuda.cu and conv_cuda.cu. */
void ob_cu_fill_nn_ops(ob_backend_ops *o);
void ob_cu_fill_conv_ops(ob_backend_ops *o);

/* Per-file op implementations collected into the table in backend_cuda.cu. */
/* data-parallel replicas (group_cuda.cu) */
ob_status ob_cu_make_current(ob_device *dev, ob_err *e);
ob_status ob_cu_group_open(ob_device *const *devs, int n, void **group, ob_err *e);
ob_status ob_cu_group_sum(void *group, ob_device *const *devs, int n, float *const *bufs, int64_t count,
                          ob_err *e);
void ob_cu_group_close(void *group);

ob_status ob_cu_fill(ob_device *dev, float *x, float v, int64_t n, ob_err *e);
ob_status ob_cu_axpby(ob_device *dev, int64_t n, float a, const float *x, float b, float *y, ob_err *e);
ob_status ob_cu_round_bf16(ob_device *dev, float *x, int64_t n, ob_err *e);
ob_status ob_cu_rng_normal(ob_device *dev, float *x, int64_t n, uint64_t seed, uint64_t stream,
                           uint64_t offset, float mean, float std, ob_err *e);
ob_status ob_cu_dot(ob_device *dev, int64_t n, const float *x, const float *y, float *out, ob_err *e);
ob_status ob_cu_gemm(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                     int lda, const float *B, int ldb, float beta, float *C, int ldc, ob_err *e);
ob_status ob_cu_gemm_sb(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha,
                        const float *A, int lda, int64_t sa, const float *B, int ldb, int64_t sb,
                        float beta, float *C, int ldc, int64_t sc, int batch, ob_err *e);
ob_status ob_cu_gemm_sb_bf16(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                             int lda, int64_t sa, const float *B, int ldb, int64_t sb, float beta, float *C, int ldc,
                             int64_t sc, int batch, ob_err *e);
ob_status ob_cu_grad_stats(ob_device *dev, const float *g, int64_t n, ob_step_stats *stats, ob_err *e);
ob_status ob_cu_finish_stats(ob_device *dev, ob_step_stats *stats, const float *loss, float clip_norm,
                             ob_spike *spike, ob_step_record *rec, ob_err *e);
ob_status ob_cu_elementwise_step(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                 const ob_step_stats *stats, float *p, const float *g,
                                 float *const *s, int64_t n, ob_err *e);
ob_status ob_cu_elementwise_step_batch(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                       const ob_step_stats *stats, float *p, const float *g, float *const *s,
                                       int64_t n, int64_t count, const int64_t *stride, ob_err *e);
ob_status ob_cu_elementwise_step_batch_sumsq(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                             const ob_step_stats *stats, float *p, const float *g, float *const *s,
                                             int64_t n, int64_t count, const int64_t *stride, float *sq, ob_err *e);
ob_status ob_cu_elementwise_step_spans(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                       ob_step_stats *stats, float *p, const float *g, float *const *s, int64_t n,
                                       const int64_t *bound, int n_span, int nd0, int with_stats, ob_err *e);
ob_status ob_cu_elementwise_step_stats(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                       ob_step_stats *stats, float *p, const float *g, float *const *s, int64_t n,
                                       ob_err *e);
ob_status ob_cu_batched_sumsq(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride, float *out,
                              ob_err *e);
ob_status ob_cu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                  float eps, int flags, ob_err *e);
ob_status ob_cu_abs_quantile(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride,
                             double q, float *out, float *work, ob_err *e);
ob_status ob_cu_clamp_abs(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                          const float *thr, float add, ob_err *e);
ob_status ob_cu_svd_polar(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                          ob_err *e);
ob_status ob_cu_swap01(ob_device *dev, float *dst, const float *src, int64_t A, int64_t n, int64_t B,
                       ob_err *e);
ob_status ob_cu_sym_eigvecs(ob_device *dev, int n, const float *A, float *S, ob_err *e);
ob_status ob_cu_qr_orth(ob_device *dev, int n, const float *W, float *S, ob_err *e);
ob_status ob_cu_eig_order(ob_device *dev, int n, const float *S, const float *T, int32_t *perm, ob_err *e);
ob_status ob_cu_rows_sumsq(ob_device *dev, const float *x, int64_t rows, int64_t cols, float alpha, float *out,
                           ob_err *e);
ob_status ob_cu_cols_sumsq(ob_device *dev, const float *x, int64_t batch, int64_t rows, int64_t cols, float alpha,
                           float *out, ob_err *e);
ob_status ob_cu_adafactor_precond(ob_device *dev, const float *g, const float *row, const float *col,
                                  int64_t batch, int64_t rows, int64_t cols, float eps1, float *u, ob_err *e);
ob_status ob_cu_adafactor_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count, int64_t numel,
                                float d, ob_rule_step *dst, ob_err *e);
ob_status ob_cu_trust_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count,
                            const ob_trust *t, const ob_step_stats *st, ob_rule_step *dst, ob_err *e);
ob_status ob_cu_rosenbrock(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e);

#endif
