/* kernels/backend.h - the compute backend: one const table of operations.
 *
 * Everything above kernels/ computes through an ob_device, whose ops table is
 * either the CPU one (kernels/cpu: plain C, OpenBLAS/LAPACKE, OpenMP) or the
 * CUDA one (kernels/cuda: cuBLAS, cuSOLVER). The table is built with
 * designated initializers (ggml style); a slot may be NULL when a backend
 * lacks the op, and callers check with OB_HAS(dev, op) or get
 * OB_ERR_UNSUPPORTED from ob_dev_require(). Pointers passed to ops are device
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

typedef struct ob_backend_ops {
    const char *name; /* "cpu", "cuda" */

    /* --- device and memory (required) --- */
    /* Is a device of this backend present? desc gets a human description. */
    int (*probe)(char *desc, size_t n);
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

    /* --- optimizer pipeline --- */
    /* stats->sumsq += sum g^2, stats->nonfinite += count(!isfinite(g)) over n. */
    ob_status (*grad_stats)(ob_device *dev, const float *g, int64_t n, ob_step_stats *stats, ob_err *e);
    /* From sumsq/nonfinite and the loss: grad_norm, clip_scale, skip; clip_norm <= 0
     * means no clipping. Also fills rec->{loss, grad_norm, skipped}. */
    ob_status (*finish_stats)(ob_device *dev, ob_step_stats *stats, const float *loss, float clip_norm,
                              ob_step_record *rec, ob_err *e);
    /* One fused pass of an elementwise rule over n floats: p, g and the state
     * roles s[0..rule->n_state-1]. Reads clip scale and skip from stats and the
     * per-step scalars from sc, both in device memory. */
    ob_status (*elementwise_step)(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                  const ob_step_stats *stats, float *p, const float *g,
                                  float *const *s, int64_t n, ob_err *e);

    /* --- workload kernels (optional; a workload checks before use) --- */
    /* Rosenbrock in n dims: loss (device) and gradient g. */
    ob_status (*rosenbrock)(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e);
} ob_backend_ops;

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
const ob_backend_ops *ob_cuda_backend_ops(void); /* NULL when built without CUDA */

/* Open by name: "cpu", "cuda", "auto" (cuda when a device is present). */
ob_status ob_device_open(ob_device *dev, const char *backend, int index, ob_err *e);
void ob_device_close(ob_device *dev);

/* Tracked allocation (bytes_in_use / bytes_peak); memory is zeroed. */
ob_status ob_dev_alloc(ob_device *dev, size_t bytes, void **out, ob_err *e);
void ob_dev_free(ob_device *dev, void *p);
void ob_dev_reset_peak(ob_device *dev);
ob_status ob_dev_require(const ob_device *dev, const void *slot, const char *op, ob_err *e);

#ifdef __cplusplus
}
#endif
#endif
