/* kernels/cpu/cpu.h - CPU kernels shared between the files of kernels/cpu. */
#ifndef OB_KERNELS_CPU_H
#define OB_KERNELS_CPU_H

#include "kernels/backend.h"

/* A function compiled three times, for AVX-512F, AVX2 and the baseline SSE2;
 * an ifunc picks the widest the CPU has when the program loads. The builds
 * give the same bits: ISO C mode contracts no multiply-add, and what
 * vectorizes is independent elements, never the order of a sum. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OB_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OB_CPU_CLONES
#endif

/* reduce_x86.c: the vector bodies of the sums in double (see backend_cpu.c
 * for their order). ob_cpu_reduce_isa(OB_CPU_ISA_AUTO) picks the widest the
 * CPU has (the default); a path the CPU has can be forced (the tests run each
 * in turn), one it lacks is ignored; OB_CPU_ISA_CURRENT changes nothing.
 * Returns the path now in use. */
enum { OB_CPU_ISA_CURRENT = -2, OB_CPU_ISA_AUTO = -1, OB_CPU_ISA_GENERIC = 0, OB_CPU_ISA_AVX2 = 1, OB_CPU_ISA_AVX512 = 2 };
int ob_cpu_reduce_isa(int want);
/* The choice behind ob_cpu_reduce_isa and ob_cpu_rng_isa: *slot holds the
 * path in use (-1: not chosen yet); supported(isa) says whether this CPU and
 * build can run one; auto takes the widest supported. */
int ob_cpu_isa_choose(_Atomic int *slot, int want, int (*supported)(int));
/* Over [lo, end), (end - lo) a multiple of 8, in the eight running sums'
 * order: the sum of squares with no finiteness test (a non-finite value
 * makes the result non-finite, and nothing else can: a finite float's square
 * is at most 2^256, so a chunk's sum cannot overflow), and the dot product. NaN
 * for OB_CPU_ISA_GENERIC: the caller's portable loop does that path. */
double ob_cpu_sumsq8(int isa, const float *g, int64_t lo, int64_t end);
double ob_cpu_dot8(int isa, const float *x, const float *y, int64_t lo, int64_t end);

/* rng_x86.c: out[i] = ob_rng_normal(seed, stream, index0 + i) for i < n, bit
 * for bit, on the path isa, one that ob_cpu_rng_isa returned
 * (OB_CPU_ISA_GENERIC: the scalar function; AVX2: four lanes at a time with
 * glibc's vector log and cos, a value recomputed by the scalar function
 * wherever the two could round to different floats).
 * Returns how many values were recomputed. ob_cpu_rng_isa chooses the path as
 * ob_cpu_reduce_isa does (AVX2 where the CPU has AVX2 and FMA and the build
 * found libmvec). */
int ob_cpu_rng_isa(int want);
int64_t ob_cpu_normals(int isa, float *out, int64_t n, uint64_t seed, uint64_t stream, uint64_t index0);

ob_status ob_cpu_rosenbrock(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e);

/* matrix_cpu.c: the matrix-optimizer and study ops (see backend.h) */
ob_status ob_cpu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                   float eps, int flags, ob_err *e);
ob_status ob_cpu_round_bf16(ob_device *dev, float *x, int64_t n, ob_err *e);

/* gemm_bf16.c: gemm_sb_bf16 through oneDNN, where the build has it and the
 * CPU has bf16 instructions (ob_cpu_bf16_gemm_available) */
int ob_cpu_bf16_gemm_available(void);
ob_status ob_cpu_gemm_sb_bf16(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                              int lda, int64_t sa, const float *B, int ldb, int64_t sb, float beta, float *C, int ldc,
                              int64_t sc, int batch, ob_err *e);
ob_status ob_cpu_abs_quantile(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride,
                              double q, float *out, float *work, ob_err *e);
ob_status ob_cpu_clamp_abs(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                           const float *thr, float add, ob_err *e);
ob_status ob_cpu_svd_polar(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                           ob_err *e);
ob_status ob_cpu_swap01(ob_device *dev, float *dst, const float *src, int64_t A, int64_t n, int64_t B,
                        ob_err *e);
ob_status ob_cpu_sym_eigvecs(ob_device *dev, int n, const float *A, float *S, ob_err *e);
ob_status ob_cpu_qr_orth(ob_device *dev, int n, const float *W, float *S, ob_err *e);
ob_status ob_cpu_eig_order(ob_device *dev, int n, const float *S, const float *T, int32_t *perm, ob_err *e);
ob_status ob_cpu_sym_eigvecs_batch(ob_device *dev, int n, int count, const float *A, int64_t sa, float *S,
                                   int64_t ss, ob_err *e);
ob_status ob_cpu_qr_orth_batch(ob_device *dev, int n, int count, const float *W, int64_t sw, float *S, int64_t ss,
                               ob_err *e);
ob_status ob_cpu_eig_order_batch(ob_device *dev, int n, int count, const float *S, int64_t ss, const float *T,
                                 int64_t st, int32_t *perm, ob_err *e);
ob_status ob_cpu_rows_sumsq(ob_device *dev, const float *x, int64_t rows, int64_t cols, float alpha, float *out,
                            ob_err *e);
ob_status ob_cpu_cols_sumsq(ob_device *dev, const float *x, int64_t batch, int64_t rows, int64_t cols, float alpha,
                            float *out, ob_err *e);
ob_status ob_cpu_adafactor_precond(ob_device *dev, const float *g, const float *row, const float *col,
                                   int64_t batch, int64_t rows, int64_t cols, float eps1, float *u, ob_err *e);
ob_status ob_cpu_adafactor_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count, int64_t numel,
                                 float d, ob_rule_step *dst, ob_err *e);
ob_status ob_cpu_trust_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count,
                             const ob_trust *t, const ob_step_stats *st, ob_rule_step *dst, ob_err *e);

#endif
