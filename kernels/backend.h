/* kernels/backend.h - the compute backend: one const table of operations.
 *
 * Everything above kernels/ computes through an ob_device, whose ops table is
 * either the CPU one (kernels/cpu: plain C, OpenBLAS/LAPACKE, OpenMP) or the
 * CUDA one (kernels/cuda: cuBLAS, cuSOLVER). The table is built with
 * designated initializers (ggml style); a slot may be NULL when a backend
 * lacks the op, and callers check with OB_HAS(dev, op) or get
 * OB_ERR_UNSUPPORTED from OB_REQUIRE(dev, op, e). Pointers passed to ops are device
 * pointers from ob_dev_alloc (plain host memory on the CPU backend).
 *
 * Matrices are row-major. GEMM follows the BLAS convention on row-major data:
 * C(m,n) = alpha * op(A)(m,k) * op(B)(k,n) + beta * C.
 *
 * No header of a GPU toolkit is included here or above.
 */
#ifndef OB_KERNELS_BACKEND_H
#define OB_KERNELS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/ob.h"
#include "optimizers/rules.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ob_device ob_device;

#define OB_TIMER_SLOTS 512

/* Arguments of the synth_images op. Image b of a batch is image number
 * index0 + b of (seed, stream): its label, circular shift (dy, dx) in
 * [-max_shift, max_shift] and contrast in [contrast_lo, contrast_hi] come from
 * ob_philox(seed, stream, index0 + b); its pixels are
 *   out[b,y,x,c] = contrast * templates[label, (y-dy) mod H, (x-dx) mod W, c]
 *                  + noise * ob_rng_normal(seed, stream + 1, (index0 + b) * H*W*C + (y*W + x)*C + c)
 * so every backend draws the same images (core/rng.h). */
typedef struct ob_image_synth {
    int B, H, W, C, K;
    int max_shift;
    float noise, contrast_lo, contrast_hi;
    uint64_t seed, stream, index0;
} ob_image_synth;

/* rows per partial sum of cols_sumsq (see there) */
#define OB_SUMSQ_ROW_BLOCK 64

/* elementwise_step_batch's strides: p, g, each state role, then the per-step
 * scalars (in ob_rule_step units) at OB_BATCH_STEP. */
#define OB_BATCH_STEP (2 + OB_RULE_MAX_STATE)
#define OB_BATCH_STRIDES (3 + OB_RULE_MAX_STATE)

/* batched_normalize's flags */
#define OB_NORM_ADD_EPS 1 /* divide by ||x|| + eps, not max(||x||, eps) */
#define OB_NORM_BF16 2    /* as torch on a bf16 tensor (see batched_normalize) */

/* The table of a backend's ops: its name, then function pointers only
 * (tests/test_cuda_ops.c's table_gaps walks it as an array of them to find
 * an op the CPU has and CUDA lacks; a data member here would misalign it). */
typedef struct ob_backend_ops {
    const char *name; /* "cpu", "cuda" */

    /* --- device and memory (required) --- */
    /* Is device `index` of this backend present and able to run this build?
     * desc gets a human description. Touches no other device (CUDA: no
     * context on device 0 for a process that runs on device 3). */
    int (*probe)(int index, char *desc, size_t n);
    ob_status (*open)(ob_device *dev, int index, ob_err *e);
    void (*close)(ob_device *dev);
    ob_status (*alloc)(ob_device *dev, size_t bytes, void **out, ob_err *e);
    void (*release)(ob_device *dev, void *p);
    ob_status (*upload)(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e);
    ob_status (*download)(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e);
    ob_status (*copy)(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e);
    ob_status (*sync)(ob_device *dev, ob_err *e);
    /* Bytes free / total on the device as the driver reports them (optional). */
    ob_status (*mem_info)(ob_device *dev, size_t *free_b, size_t *total_b, ob_err *e);

    /* --- data-parallel replicas (optional) ---
     * A run may span n devices of one backend, one model replica each
     * (harness/run.c). make_current makes dev the calling thread's device
     * before work is queued on it (CUDA: cudaSetDevice; NULL where every op
     * carries its device). group_open prepares a sum over devs[0..n);
     * group_sum replaces bufs[r][0..count) on every replica r by the sum over
     * all replicas (an all-reduce: NCCL on CUDA; on the CPU summed in replica
     * order, so the same bits every time), queued on each device's timeline
     * without waiting for it. */
    ob_status (*make_current)(ob_device *dev, ob_err *e);
    ob_status (*group_open)(ob_device *const *devs, int n, void **group, ob_err *e);
    ob_status (*group_sum)(void *group, ob_device *const *devs, int n, float *const *bufs, int64_t count,
                           ob_err *e);
    void (*group_close)(void *group);

    /* --- timing (required): marks on the device's timeline, read later ---
     * timer_mark records "now" in slot (0 <= slot < OB_TIMER_SLOTS) without
     * waiting; timer_read gives the milliseconds between two marks, waiting
     * for them when needed. CPU: the monotonic clock; CUDA: events. */
    ob_status (*timer_mark)(ob_device *dev, int slot, ob_err *e);
    ob_status (*timer_read)(ob_device *dev, int slot_begin, int slot_end, double *ms, ob_err *e);

    /* --- elementwise and reductions --- */
    ob_status (*fill)(ob_device *dev, float *x, float v, int64_t n, ob_err *e);
    /* y = a*x + b*y */
    ob_status (*axpby)(ob_device *dev, int64_t n, float a, const float *x, float b, float *y, ob_err *e);
    /* (optional; Newton-Schulz in bf16 requires it) x[i] = x[i] rounded to
     * bf16 and kept as a float (core/bf16.h: PyTorch's rounding, so the
     * backends agree bit for bit). */
    ob_status (*round_bf16)(ob_device *dev, float *x, int64_t n, ob_err *e);
    /* x[i] = mean + std * N(0,1)(seed, stream, offset + i) */
    ob_status (*rng_normal)(ob_device *dev, float *x, int64_t n, uint64_t seed, uint64_t stream,
                            uint64_t offset, float mean, float std, ob_err *e);
    /* *out (device) = sum x[i]*y[i], accumulated in double. */
    ob_status (*dot)(ob_device *dev, int64_t n, const float *x, const float *y, float *out, ob_err *e);

    /* --- BLAS --- */
    ob_status (*gemm)(ob_device *dev, int trans_a, int trans_b, int m, int n, int k, float alpha,
                      const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc,
                      ob_err *e);
    ob_status (*gemm_strided_batched)(ob_device *dev, int trans_a, int trans_b, int m, int n, int k,
                                      float alpha, const float *A, int lda, int64_t stride_a,
                                      const float *B, int ldb, int64_t stride_b, float beta, float *C,
                                      int ldc, int64_t stride_c, int batch, ob_err *e);
    /* (optional) gemm_strided_batched of operands that hold bf16 values
     * (floats with zero low halves), as a bf16 GEMM computes it: the exact
     * products summed in float, times alpha; beta must be 0. On bf16 units
     * where there are some (the CPU's through oneDNN; CUDA's tensor cores),
     * else as sgemm (on the CPU a Gram product, A == B and one of them
     * transposed, as ssyrk): the same sums, in another order. Newton-Schulz
     * in bf16 takes it when the backend has it. */
    ob_status (*gemm_sb_bf16)(ob_device *dev, int trans_a, int trans_b, int m, int n, int k, float alpha,
                              const float *A, int lda, int64_t stride_a, const float *B, int ldb, int64_t stride_b,
                              float beta, float *C, int ldc, int64_t stride_c, int batch, ob_err *e);
    /* (optional) Gram products of a batch: C_b = alpha A_b A_b^T + beta C_b
     * (trans 0, A_b (n,k)) or alpha A_b^T A_b + beta C_b (trans 1, A_b (k,n)),
     * A_b = A + b*stride_a, C_b (n,n) = C + b*stride_c; both triangles of C_b are
     * written and equal. About half the flops of the same gemm; Newton-Schulz
     * takes it for X X^T and for A A (A symmetric) when the backend has it. */
    ob_status (*syrk_strided_batched)(ob_device *dev, int trans, int n, int k, float alpha, const float *A,
                                      int lda, int64_t stride_a, float beta, float *C, int ldc, int64_t stride_c,
                                      int batch, ob_err *e);

    /* --- optimizer pipeline --- */
    /* stats->sumsq += sum g^2, stats->nonfinite += count(!isfinite(g)) over n. */
    ob_status (*grad_stats)(ob_device *dev, const float *g, int64_t n, ob_step_stats *stats, ob_err *e);
    /* From sumsq/nonfinite and the loss: grad_norm, clip_scale, skip; clip_norm <= 0
     * means no clipping; spike (device memory, or NULL: off) the spike guard's
     * window, scored and updated. Also fills rec->{loss, grad_norm, skipped}. */
    ob_status (*finish_stats)(ob_device *dev, ob_step_stats *stats, const float *loss, float clip_norm,
                              ob_spike *spike, ob_step_record *rec, ob_err *e);
    /* One fused pass of an elementwise rule over n floats: p, g and the state
     * roles s[0..rule->n_state-1]. Reads clip scale and skip from stats and the
     * per-step scalars from sc, both in device memory. */
    ob_status (*elementwise_step)(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                  const ob_step_stats *stats, float *p, const float *g,
                                  float *const *s, int64_t n, ob_err *e);
    /* (optional) elementwise_step that also adds its range's gradient
     * statistics to stats (as grad_stats), reading g once. The pipeline uses it
     * when nothing must be known before the update (train.on_nonfinite = none,
     * no clipping) and calls finish_stats after the update. */
    ob_status (*elementwise_step_stats)(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                        ob_step_stats *stats, float *p, const float *g, float *const *s,
                                        int64_t n, ob_err *e);
    /* (optional) elementwise_step over count segments of n floats: segment b
     * is p + b*stride[0], g + b*stride[1] and s[k] + b*stride[2 + k] (strides
     * in floats; segments do not overlap), with the per-step scalars
     * sc + b*stride[OB_BATCH_STEP] (0: one sc for all); OB_BATCH_STRIDES
     * entries. The same values as count calls of
     * elementwise_step, in one pass (one launch on CUDA): same-shape tensors
     * spaced evenly in the arenas. */
    ob_status (*elementwise_step_batch)(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                        const ob_step_stats *stats, float *p, const float *g, float *const *s,
                                        int64_t n, int64_t count, const int64_t *stride, ob_err *e);
    /* (optional) elementwise_step_batch, then per segment b the sums of
     * squares, in double, of its state role 2 (a role the rule reads only,
     * such as LAMB's parameters) into sq[b] and of its target after the step
     * into sq[count + b] (device memory, floats): the values of
     * elementwise_step_batch followed by batched_sumsq over each, sums
     * included (the CPU sums each chunk while the step has it in cache, in
     * batched_sumsq's chunks: the same bits; CUDA fuses LAMB's rule, its
     * sums in a fixed order of their own, bitwise repeatable and within
     * rounding of batched_sumsq's). With the guard's skip the arrays stay as
     * they are and their sums are still taken. */
    ob_status (*elementwise_step_batch_sumsq)(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                              const ob_step_stats *stats, float *p, const float *g,
                                              float *const *s, int64_t n, int64_t count, const int64_t *stride,
                                              float *sq, ob_err *e);
    /* elementwise_step (with_stats: elementwise_step_stats) over n floats
     * cut into n_span spans that alternate between the rule and the rule
     * without its weight decay (filter_bias_and_bn): span k is [bound[k],
     * bound[k + 1]) and has no decay when k + nd0 is odd. bound (n_span + 1
     * entries, device memory) runs from 0 to n, each bound a multiple of 4
     * (CUDA's 16-byte loads take one rule per 4 floats; the layout aligns
     * tensors to 16 floats). The same values as one call per span, in one
     * pass (one launch on CUDA); the statistics are those of the whole range
     * (as grad_stats over it). */
    ob_status (*elementwise_step_spans)(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                        ob_step_stats *stats, float *p, const float *g, float *const *s,
                                        int64_t n, const int64_t *bound, int n_span, int nd0, int with_stats,
                                        ob_err *e);

    /* --- matrix optimizers (optional; Muon and ROOT require them) ---
     * Each works on a batch of vectors x_b = x + b*stride (b < batch) of n floats. */
    /* x_b /= (OB_NORM_ADD_EPS ? ||x_b|| + eps : max(||x_b||, eps)); the norm is
     * summed in double in a fixed order (bitwise repeatable). With
     * OB_NORM_BF16, as torch divides a bf16 tensor by its norm: x_b, the
     * norm, the divisor and the quotients rounded to bf16 (core/bf16.h), the
     * quotient x / d itself (not x * (1/d)). */
    ob_status (*batched_normalize)(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                   float eps, int flags, ob_err *e);
    /* out[b] (device, float) = sum of x_b^2 in double: on the CPU in dot's
     * order (the same bits as dot(x_b, x_b)), on CUDA in a fixed order of its
     * own (bitwise repeatable). batch <= 65535 (CUDA's grid, as for
     * batched_normalize). */
    ob_status (*batched_sumsq)(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride, float *out,
                               ob_err *e);
    /* out[b] (device) = the q-quantile of |x_b|, linear interpolation between
     * order statistics (numpy's default). A selection (radix select over the float
     * bits), never a sort. work: batch*stride floats of scratch. */
    ob_status (*abs_quantile)(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride,
                              double q, float *out, float *work, ob_err *e);
    /* x_b = clamp(x_b, -(thr[b] + add), thr[b] + add); thr in device memory. */
    ob_status (*clamp_abs)(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                           const float *thr, float add, ob_err *e);
    /* (optional) The most floats a batch of same-shape items of item_floats
     * each (a Muon or ROOT bucket, an Adafactor or SOAP run) should span in
     * one workspace: on the CPU what keeps a batch's passes in the caches.
     * NULL: as many as the optimizer's own limit allows (a GPU wants them
     * all in one launch). */
    int64_t (*batch_floats)(const ob_device *dev, int64_t item_floats);

    /* --- studies (optional) --- */
    /* Reduced SVD of the row-major (rows x cols) A, computed in double: singular
     * values s (min(rows, cols), descending) and, when q != NULL, the polar factor
     * Q = U V^T (rows x cols). All pointers device memory; A is not modified. */
    ob_status (*svd_polar)(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                           ob_err *e);

    /* --- eigenbases (SOAP) --- */
    /* dst (n, A, B) = src (A, n, B) with the first two axes swapped:
     * dst[i][a][b] = src[a][i][b]. dst and src do not overlap. */
    ob_status (*swap01)(ob_device *dev, float *dst, const float *src, int64_t A, int64_t n, int64_t B, ob_err *e);
    /* Eigenvectors of the symmetric (n,n) A + 1e-30 I, in float32 (LAPACK
     * ssyevd / cusolverDnSsyevd): row j of S (n,n) is the unit eigenvector of
     * the j-th largest eigenvalue (descending order). A is not modified.
     * A with a non-finite entry gives S all NaN (and OB_OK), so a NaN that
     * reaches SOAP's preconditioner diverges the run on either backend.
     * OB_ERR_BACKEND when the solver fails to converge; may synchronize. */
    ob_status (*sym_eigvecs)(ob_device *dev, int n, const float *A, float *S, ob_err *e);
    /* Orthonormal basis by Householder QR, in float32: M (n,n) is the matrix
     * whose column j is row j of W (W is M stored column-major); row j of S
     * (n,n) is column j of Q where M = Q R (LAPACK sgeqrf + sorgqr /
     * cusolverDnSgeqrf + cusolverDnSorgqr). W is not modified. No host
     * synchronization on CUDA. */
    ob_status (*qr_orth)(ob_device *dev, int n, const float *W, float *S, ob_err *e);
    /* perm (n int32) orders est[j] = sum_i S[j][i] * T[j][i] (accumulated in
     * double, i ascending) descending: perm[0] is the j of the largest est.
     * Ties keep ascending j; a NaN est ranks below every number. Always a
     * permutation of 0..n-1. No host synchronization on CUDA. */
    ob_status (*eig_order)(ob_device *dev, int n, const float *S, const float *T, int32_t *perm, ob_err *e);
    /* (optional) the three above over count matrices side by side, matrix b
     * at A, W, S, T + b * its stride (in floats) and perm + b * n: the same
     * values as count calls (on the CPU the matrices are shared out over the
     * threads, each solved as a lone one is). Matrices of a batch do not
     * overlap. */
    ob_status (*sym_eigvecs_batch)(ob_device *dev, int n, int count, const float *A, int64_t sa, float *S,
                                   int64_t ss, ob_err *e);
    ob_status (*qr_orth_batch)(ob_device *dev, int n, int count, const float *W, int64_t sw, float *S, int64_t ss,
                               ob_err *e);
    ob_status (*eig_order_batch)(ob_device *dev, int n, int count, const float *S, int64_t ss, const float *T,
                                 int64_t st, int32_t *perm, ob_err *e);

    /* --- Adafactor (factored second moments) --- */
    /* out[r] = alpha * sum_c x[r][c]^2 for the rows of x (rows, cols), each
     * sum in double in ascending c, then times alpha and rounded to float. */
    ob_status (*rows_sumsq)(ob_device *dev, const float *x, int64_t rows, int64_t cols, float alpha, float *out,
                            ob_err *e);
    /* out[b][c] = alpha * sum_r x[b][r][c]^2 for x (batch, rows, cols), each
     * sum in double: the rows in consecutive blocks of OB_SUMSQ_ROW_BLOCK,
     * each block summed in ascending r from 0.0, the block sums added in
     * ascending order from 0.0; then times alpha and rounded to float. (The
     * blocks let a GPU spread a few long columns over many threads.) */
    ob_status (*cols_sumsq)(ob_device *dev, const float *x, int64_t batch, int64_t rows, int64_t cols, float alpha,
                            float *out, ob_err *e);
    /* torch.optim.Adafactor's factored preconditioning of g (batch, rows,
     * cols) with row (batch, rows) and col (batch, cols):
     *   m_b = max((float)(sum_r row[b][r] in double, ascending r) / rows, eps1)
     *   v = row[b][r] * col[b][c] (float);  v = v / m_b (float);  v = max(v, eps1 * eps1)
     *   u[b][r][c] = g[b][r][c] * (1.0f / sqrtf(v))
     * u may not alias g. */
    ob_status (*adafactor_precond)(ob_device *dev, const float *g, const float *row, const float *col,
                                   int64_t batch, int64_t rows, int64_t cols, float eps1, float *u, ob_err *e);
    /* ob_adafactor_scale (optimizers/rules.h) on the device for count tensors
     * of numel elements each, one thread per tensor: dst[b] = *src with
     * dst[b].c[0] the step scale of tensor b from ||p_b||^2 = sq[b] and
     * ||u_b||^2 = sq[count + b]. No host synchronisation. */
    ob_status (*adafactor_scale)(ob_device *dev, const ob_rule_step *src, const float *sq, int count, int64_t numel,
                                 float d, ob_rule_step *dst, ob_err *e);
    /* ob_trust_scale (optimizers/rules.h) on the device for count tensors,
     * one thread per tensor: dst[b] = *src with dst[b].c[0] from tensor b's
     * trust ratio, sq[b] = ||p_b||^2 and sq[count + b] = ||x_b||^2 (LAMB's
     * update, LARS's gradient: its clip scale read from st, which LAMB
     * ignores and may be NULL). No host synchronisation. */
    ob_status (*trust_scale)(ob_device *dev, const ob_rule_step *src, const float *sq, int count,
                             const ob_trust *t, const ob_step_stats *st, ob_rule_step *dst, ob_err *e);

    /* --- workload kernels (optional; a workload checks before use) --- */
    /* Rosenbrock in n dims: loss (device) and gradient g. */
    ob_status (*rosenbrock)(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e);

    /* --- neural-network layers (optional; the bert and cnn workloads) ---
     * llm.c-style forward/backward pairs over flat float buffers, shapes in the
     * comments, row-major; images are NHWC. Index arrays (tokens, positions,
     * targets, labels) are int32 device arrays. Backward ops ACCUMULATE (+=) into
     * parameter gradients (dw, db, dwte, ...; the workload zeroes the gradient
     * arena once per step) and OVERWRITE activation gradients (dinp, ...) unless
     * the comment says "+=". Every reduction has a fixed order (no float atomics,
     * no thread-count dependence): bitwise repeatable. */
    /* out (N,C) = wte[tokens[n]] + wpe[n % T]; wpe may be NULL. */
    ob_status (*embedding_forward)(ob_device *dev, float *out, const int32_t *tokens, const float *wte,
                                   const float *wpe, int N, int T, int C, ob_err *e);
    /* dwte (V,C) += scatter of dout (N,C) by tokens; dwpe (T,C) += dout by n % T (may be NULL). */
    ob_status (*embedding_backward)(ob_device *dev, float *dwte, float *dwpe, const float *dout,
                                    const int32_t *tokens, int N, int T, int C, int V, ob_err *e);
    /* out (N,C) = (inp - mean) * rstd * w + b per row (eps 1e-5); mean, rstd (N) kept for backward. */
    ob_status (*layernorm_forward)(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int N, int C, ob_err *e);
    /* dinp (N,C) +=, dw (C) +=, db (C) += from dout (N,C). */
    ob_status (*layernorm_backward)(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int N, int C, ob_err *e);
    /* x (N,C) += b (C) on every row. */
    ob_status (*bias_add)(ob_device *dev, float *x, const float *b, int N, int C, ob_err *e);
    /* db (C) += column sums of dout (N,C). */
    ob_status (*bias_backward)(ob_device *dev, float *db, const float *dout, int N, int C, ob_err *e);
    /* GELU, tanh approximation: out (n) = gelu(inp); out may alias inp. */
    ob_status (*gelu_forward)(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e);
    /* dinp (n) = gelu'(inp) * dout; dinp may alias dout. */
    ob_status (*gelu_backward)(ob_device *dev, float *dinp, const float *inp, const float *dout, int64_t n,
                               ob_err *e);
    /* src (B,T,nsec,NH,HS) -> dst (nsec,B,NH,T,HS): qkv rows to per-head q|k|v (nsec 3);
     * also the backward of heads_merge. */
    ob_status (*heads_split)(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                             int HS, ob_err *e);
    /* src (nsec,B,NH,T,HS) -> dst (B,T,nsec,NH,HS): per-head outputs back to rows (nsec 1);
     * also the backward of heads_split. */
    ob_status (*heads_merge)(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                             int HS, ob_err *e);
    /* x (R,L) = softmax of each row, in place (no mask: bidirectional attention). */
    ob_status (*softmax_forward)(ob_device *dev, float *x, int R, int L, ob_err *e);
    /* dx (R,L) = y * (dy - sum_row(dy * y)) with y the softmax output; dx may alias dy. */
    ob_status (*softmax_backward)(ob_device *dev, float *dx, const float *dy, const float *y, int R, int L,
                                  ob_err *e);
    /* out (M,C) = inp[idx[m]] rows of inp (N,C). */
    ob_status (*rows_gather)(ob_device *dev, float *out, const float *inp, const int32_t *idx, int M, int C,
                             ob_err *e);
    /* dinp[idx[m]] (rows of (N,C)) += dout (M,C); the idx are distinct. */
    ob_status (*rows_scatter_add)(ob_device *dev, float *dinp, const float *dout, const int32_t *idx, int M,
                                  int C, ob_err *e);
    /* Softmax cross-entropy of logits (M,V) against targets (M): probs (M,V) (may
     * alias logits), losses (M) = -log p[target], *loss (device) = mean of losses
     * (0 when M == 0), *correct (device, may be NULL) = count of argmax == target
     * (first maximum). Sums in double, in row order. */
    ob_status (*xent_forward)(ob_device *dev, float *probs, float *losses, const float *logits,
                              const int32_t *targets, int M, int V, float *loss, float *correct, ob_err *e);
    /* dlogits (M,V) = (probs - onehot(targets)) * scale (scale = 1/M for a mean); may alias probs. */
    ob_status (*xent_backward)(ob_device *dev, float *dlogits, const float *probs, const int32_t *targets,
                               int M, int V, float scale, ob_err *e);
    /* col (B*Ho*Wo, K*K*Cin) from inp (B,H,W,Cin), zero padding; column order
     * (ky, kx, ci) (contiguous channels): it matches a kernel laid out (Cout, K, K, Cin)
     * (a (Cout, Cin, K, K) tensor goes through heads_split(.., Cout, Cin, 1, K*K, 1) first).
     * Ho = (H + 2 pad - K) / stride + 1. */
    ob_status (*im2col)(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e);
    /* dinp (B,H,W,Cin) = sum of the dcol (B*Ho*Wo, K*K*Cin) entries that read each pixel. */
    ob_status (*col2im)(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e);
    /* (optional, all three or none) A direct convolution, for a backend with a
     * faster path than im2col + gemm for some shapes (the CPU: stride 1 on an
     * AVX-512 or AVX2 CPU); conv_supported says for which, at run time. Kernels
     * (Cout, Cin, K, K), images NHWC, zero padding, Ho = (H + 2 pad - K) / stride + 1. */
    int (*conv_supported)(const ob_device *dev, int Cin, int Cout, int K, int stride, int pad);
    /* out (B,Ho,Wo,Cout) = conv of inp (B,H,W,Cin) with w. */
    ob_status (*conv_forward)(ob_device *dev, float *out, const float *inp, const float *w, int B, int H, int W,
                              int Cin, int Cout, int K, int stride, int pad, ob_err *e);
    /* From dout (B,Ho,Wo,Cout): dinp (B,H,W,Cin) overwritten (skipped when NULL), dw (Cout,Cin,K,K) +=. */
    ob_status (*conv_backward)(ob_device *dev, float *dinp, float *dw, const float *dout, const float *inp,
                               const float *w, int B, int H, int W, int Cin, int Cout, int K, int stride, int pad,
                               ob_err *e);
    /* Group norm of inp (B,HW,C) over (HW, C/G) per (b, g), eps 1e-5, then * w (C) + b (C);
     * mean, rstd (B,G) kept for backward. */
    ob_status (*groupnorm_forward)(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int B, int HW, int C, int G, ob_err *e);
    /* dinp (B,HW,C) = (overwritten), dw (C) +=, db (C) += from dout (B,HW,C). */
    ob_status (*groupnorm_backward)(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int B, int HW, int C, int G, ob_err *e);
    /* out (n) = max(inp, 0); may alias. */
    ob_status (*relu_forward)(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e);
    /* dinp (n) = dout * (out > 0), out the forward's output; dinp may alias dout. */
    ob_status (*relu_backward)(ob_device *dev, float *dinp, const float *out, const float *dout, int64_t n,
                               ob_err *e);
    /* 2x2 max pooling, stride 2: inp (B,H,W,C) -> out (B,H/2,W/2,C) (H, W even). */
    ob_status (*maxpool2_forward)(ob_device *dev, float *out, const float *inp, int B, int H, int W, int C,
                                  ob_err *e);
    /* dinp (B,H,W,C) = dout routed to the first maximum of each window, 0 elsewhere. */
    ob_status (*maxpool2_backward)(ob_device *dev, float *dinp, const float *dout, const float *inp, int B,
                                   int H, int W, int C, ob_err *e);
    /* Global average pooling: out (B,C) = mean over HW of inp (B,HW,C). */
    ob_status (*avgpool_forward)(ob_device *dev, float *out, const float *inp, int B, int HW, int C,
                                 ob_err *e);
    /* dinp (B,HW,C) = dout (B,C) / HW. */
    ob_status (*avgpool_backward)(ob_device *dev, float *dinp, const float *dout, int B, int HW, int C,
                                  ob_err *e);
    /* Class-conditional synthetic images (see struct ob_image_synth; a is host memory):
     * out (B,H,W,C), labels (B), from templates (K,H,W,C). */
    ob_status (*synth_images)(ob_device *dev, const struct ob_image_synth *a, float *out, int32_t *labels,
                              const float *templates, ob_err *e);
} ob_backend_ops;
#ifndef __cplusplus
_Static_assert(sizeof(ob_backend_ops) % sizeof(void (*)(void)) == 0 && sizeof(const char *) == sizeof(void (*)(void)),
               "ob_backend_ops: a name, then function pointers only");
#endif

struct ob_device {
    const ob_backend_ops *ops;
    void *impl;              /* backend-private state */
    int index;
    char desc[256];          /* "cpu: 2 threads, OpenBLAS ..." / "cuda: NVIDIA H200 (sm_90)" */
    size_t bytes_in_use;     /* through ob_dev_alloc */
    size_t bytes_peak;       /* high-water mark of bytes_in_use */
    struct ob_alloc_rec *allocs;
    int n_allocs, cap_allocs;
};

#define OB_HAS(dev, op) ((dev)->ops->op != NULL)

/* Backends compiled into this build. */
extern const ob_backend_ops ob_cpu_backend;
/* The CUDA backend, loaded on first use (kernels/cuda/load.c); NULL when
 * this build has none or it cannot be loaded: ob_cuda_backend_missing says
 * why ("" when it is loaded). */
const ob_backend_ops *ob_cuda_backend_ops(void);
const char *ob_cuda_backend_missing(void);
/* 1 when this build has a CUDA backend (loaded or not). */
int ob_cuda_backend_built(void);

/* Open by name: "cpu", "cuda", "auto" (cuda when a device is present). */
ob_status ob_device_open(ob_device *dev, const char *backend, int index, ob_err *e);
void ob_device_close(ob_device *dev);

/* Tracked allocation (bytes_in_use / bytes_peak); memory is zeroed. */
ob_status ob_dev_alloc(ob_device *dev, size_t bytes, void **out, ob_err *e);
void ob_dev_free(ob_device *dev, void *p);
void ob_dev_reset_peak(ob_device *dev);
/* OB_OK when present, else OB_ERR_UNSUPPORTED naming the backend and op;
 * called through OB_REQUIRE(dev, op, e) (a slot's presence, not the function
 * pointer itself: ISO C has no conversion of one to const void *). */
ob_status ob_dev_require(const ob_device *dev, int present, const char *op, ob_err *e);
#define OB_REQUIRE(dev, op, e) ob_dev_require((dev), OB_HAS(dev, op), #op, (e))

#ifdef __cplusplus
}
#endif
#endif
