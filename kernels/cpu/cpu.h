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

ob_status ob_cpu_rosenbrock(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e);

/* matrix_cpu.c: the matrix-optimizer and study ops (see backend.h) */
ob_status ob_cpu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                   float eps, int add_eps, ob_err *e);
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
ob_status ob_cpu_rows_sumsq(ob_device *dev, const float *x, int64_t rows, int64_t cols, float alpha, float *out,
                            ob_err *e);
ob_status ob_cpu_cols_sumsq(ob_device *dev, const float *x, int64_t batch, int64_t rows, int64_t cols, float alpha,
                            float *out, ob_err *e);
ob_status ob_cpu_adafactor_precond(ob_device *dev, const float *g, const float *row, const float *col,
                                   int64_t batch, int64_t rows, int64_t cols, float eps1, float *u, ob_err *e);
ob_status ob_cpu_adafactor_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int64_t numel, float d,
                                 ob_rule_step *dst, ob_err *e);

#endif
