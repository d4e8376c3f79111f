/* kernels/cpu/gemm_bf16.c - products of matrices that hold bf16 values on
 * the CPU's bf16 units, through oneDNN's matmul (Newton-Schulz in bf16,
 * muon.ns_dtype=bf16).
 *
 * The operands are floats whose low 16 bits are zero (bf16 values, as
 * core/bf16.h leaves them): they are copied into bf16 buffers without loss,
 * and oneDNN multiplies them and sums the products in float, as a bf16 GEMM
 * does in PyTorch; the result is the float sum, scaled by alpha. The same as
 * sgemm on the floats but for the order of the additions. Only where the CPU
 * has bf16 instructions (oneDNN's effective ISA avx512_core_bf16 or later):
 * elsewhere (and in a build without oneDNN, OB_HAVE_DNNL unset, or with
 * OB_CPU_BF16_GEMM=openblas in the environment) the op takes OpenBLAS's
 * sgemm, or ssyrk for a Gram product, on the floats.
 *
 * A primitive is built (JIT-compiled) per shape, transposes, strides, batch
 * and alpha, and kept in a small cache: Newton-Schulz repeats a few shapes. */
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "kernels/cpu/cpu.h"

#ifdef OB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>

#define PRIM_CACHE 32 /* polar_express alone brings 8 alphas per shape */

typedef struct prim_key {
    int ta, tb, m, n, k, lda, ldb, ldc, batch;
    int64_t sa, sb, sc;
    float alpha;
} prim_key;

typedef struct prim_entry {
    prim_key key;
    dnnl_primitive_t prim;
    dnnl_memory_desc_t a_md, b_md, c_md;
} prim_entry;

/* One engine, stream, cache and pair of bf16 buffers per process, behind a
 * lock: products of the CPU backend run one at a time (each on every thread). */
static struct {
    pthread_mutex_t lock;
    int state; /* 0 unknown, 1 usable, -1 not */
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    prim_entry cache[PRIM_CACHE];
    int n_cached, next;
    uint16_t *buf[2];
    size_t cap[2];
} g_bf16 = {.lock = PTHREAD_MUTEX_INITIALIZER};

int ob_cpu_bf16_gemm_available(void)
{
    pthread_mutex_lock(&g_bf16.lock);
    if (g_bf16.state == 0) {
        const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
        const char *force = getenv("OB_CPU_BF16_GEMM"); /* "openblas": as without bf16 units */
        const int bf16 = ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) ==
                             (unsigned)dnnl_cpu_isa_avx512_core_bf16 &&
                         !(force && !strcmp(force, "openblas"));
        g_bf16.state = -1;
        if (bf16 && dnnl_engine_create(&g_bf16.eng, dnnl_cpu, 0) == dnnl_success) {
            if (dnnl_stream_create(&g_bf16.stream, g_bf16.eng, dnnl_stream_default_flags) == dnnl_success)
                g_bf16.state = 1;
            else
                dnnl_engine_destroy(g_bf16.eng);
        }
    }
    const int ok = g_bf16.state == 1;
    pthread_mutex_unlock(&g_bf16.lock);
    return ok;
}

static int key_eq(const prim_key *a, const prim_key *b)
{
    return a->ta == b->ta && a->tb == b->tb && a->m == b->m && a->n == b->n && a->k == b->k && a->lda == b->lda &&
           a->ldb == b->ldb && a->ldc == b->ldc && a->batch == b->batch && a->sa == b->sa && a->sb == b->sb &&
           a->sc == b->sc && a->alpha == b->alpha;
}

/* dims (batch, rows, cols) of a row-major operand stored with leading
 * dimension ld and batch stride s, read transposed when t. */
static dnnl_status_t operand_md(dnnl_memory_desc_t *md, int batch, int rows, int cols, int t, int ld, int64_t s,
                                dnnl_data_type_t type)
{
    const dnnl_dims_t dims = {batch, rows, cols};
    const dnnl_dims_t strides = {s, t ? 1 : ld, t ? ld : 1};
    return dnnl_memory_desc_init_by_strides(md, 3, dims, type, strides);
}

static ob_status prim_build(const prim_key *k, prim_entry *pe, ob_err *e)
{
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = operand_md(&pe->a_md, k->batch, k->m, k->k, k->ta, k->lda, k->sa, dnnl_bf16);
    if (s == dnnl_success) s = operand_md(&pe->b_md, k->batch, k->k, k->n, k->tb, k->ldb, k->sb, dnnl_bf16);
    if (s == dnnl_success) s = operand_md(&pe->c_md, k->batch, k->m, k->n, 0, k->ldc, k->sc, dnnl_f32);
    if (s == dnnl_success) s = dnnl_matmul_desc_init(&desc, &pe->a_md, &pe->b_md, NULL, &pe->c_md);
    if (s == dnnl_success) s = dnnl_primitive_attr_create(&attr);
    if (s == dnnl_success && k->alpha != 1.0f) s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &k->alpha);
    if (s == dnnl_success) s = dnnl_primitive_desc_create(&pd, &desc, attr, g_bf16.eng, NULL);
    if (s == dnnl_success) s = dnnl_primitive_create(&pe->prim, pd);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success)
        return ob_fail(e, OB_ERR_BACKEND, "cpu gemm_sb_bf16: oneDNN cannot build a %dx%dx%d matmul (batch %d): status %d",
                       k->m, k->n, k->k, k->batch, (int)s);
    pe->key = *k;
    return OB_OK;
}

/* The cached primitive of this product, built into the oldest slot when
 * missing (a slot whose build failed stays empty: batch 0 matches nothing). */
static ob_status prim_get(const prim_key *k, prim_entry **out, ob_err *e)
{
    for (int i = 0; i < g_bf16.n_cached; i++)
        if (key_eq(&g_bf16.cache[i].key, k)) {
            *out = &g_bf16.cache[i];
            return OB_OK;
        }
    prim_entry *pe = &g_bf16.cache[g_bf16.next];
    if (pe->prim) dnnl_primitive_destroy(pe->prim);
    memset(pe, 0, sizeof *pe);
    g_bf16.next = (g_bf16.next + 1) % PRIM_CACHE;
    if (g_bf16.n_cached < PRIM_CACHE) g_bf16.n_cached++;
    OB_TRY(prim_build(k, pe, e));
    *out = pe;
    return OB_OK;
}

/* The operand's floats as bf16 in buffer slot (grown as needed): the high
 * halves, rounded as core/bf16.h rounds (exact for bf16 values). */
static ob_status to_bf16(int slot, const float *x, size_t n, uint16_t **out, ob_err *e)
{
    if (n > g_bf16.cap[slot]) {
        uint16_t *b = realloc(g_bf16.buf[slot], n * sizeof *b);
        if (!b) return ob_fail(e, OB_ERR_NOMEM, "out of memory (%zu bf16 values)", n);
        g_bf16.buf[slot] = b;
        g_bf16.cap[slot] = n;
    }
    uint16_t *b = g_bf16.buf[slot];
#pragma omp parallel for if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        const float r = ob_bf16_round(x[i]);
        uint32_t u;
        memcpy(&u, &r, sizeof u);
        b[i] = (uint16_t)(u >> 16);
    }
    *out = b;
    return OB_OK;
}

static ob_status bf16_gemm_locked(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
                                  int64_t sa, const float *B, int ldb, int64_t sb, float *C, int ldc, int64_t sc,
                                  int batch, ob_err *e)
{
    const prim_key key = {ta, tb, m, n, k, lda, ldb, ldc, batch, sa, sb, sc, alpha};
    prim_entry *pe;
    OB_TRY(prim_get(&key, &pe, e));
    /* the floats each operand spans: the last matrix's rows (columns when
     * read transposed) end at its leading dimension */
    const size_t na = (size_t)(batch - 1) * (size_t)sa + (size_t)(ta ? k : m) * (size_t)lda;
    const size_t nb = (size_t)(batch - 1) * (size_t)sb + (size_t)(tb ? n : k) * (size_t)ldb;
    uint16_t *a16 = NULL, *b16 = NULL;
    OB_TRY(to_bf16(0, A, na, &a16, e));
    if (B == A && nb <= na) b16 = a16; /* X X^T: one copy */
    else OB_TRY(to_bf16(1, B, nb, &b16, e));
    dnnl_memory_t am = NULL, bm = NULL, cm = NULL;
    dnnl_status_t s = dnnl_memory_create(&am, &pe->a_md, g_bf16.eng, a16);
    if (s == dnnl_success) s = dnnl_memory_create(&bm, &pe->b_md, g_bf16.eng, b16);
    if (s == dnnl_success) s = dnnl_memory_create(&cm, &pe->c_md, g_bf16.eng, C);
    if (s == dnnl_success) {
        const dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
        s = dnnl_primitive_execute(pe->prim, g_bf16.stream, 3, args);
        if (s == dnnl_success) s = dnnl_stream_wait(g_bf16.stream);
    }
    if (am) dnnl_memory_destroy(am);
    if (bm) dnnl_memory_destroy(bm);
    if (cm) dnnl_memory_destroy(cm);
    if (s != dnnl_success)
        return ob_fail(e, OB_ERR_BACKEND, "cpu gemm_sb_bf16: oneDNN's %dx%dx%d matmul failed: status %d", m, n, k,
                       (int)s);
    return OB_OK;
}

#else

int ob_cpu_bf16_gemm_available(void)
{
    return 0;
}

#endif

/* Without bf16 units: OpenBLAS, a Gram product (A == B, one side
 * transposed) through the syrk slot at half the flops. */
static ob_status gemm_f32(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
                          int64_t sa, const float *B, int ldb, int64_t sb, float *C, int ldc, int64_t sc, int batch,
                          ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    if (A == B && lda == ldb && sa == sb && m == n && ta != tb && ops->syrk_strided_batched)
        return ops->syrk_strided_batched(dev, ta, m, k, alpha, A, lda, sa, 0.0f, C, ldc, sc, batch, e);
    return ops->gemm_strided_batched(dev, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, 0.0f, C, ldc, sc, batch, e);
}

ob_status ob_cpu_gemm_sb_bf16(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                              int lda, int64_t sa, const float *B, int ldb, int64_t sb, float beta, float *C, int ldc,
                              int64_t sc, int batch, ob_err *e)
{
    if (beta != 0.0f)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cpu gemm_sb_bf16: beta %g (only 0: C is written, not read)",
                                (double)beta);
    if (m <= 0 || n <= 0 || batch <= 0) return OB_OK;
#ifdef OB_HAVE_DNNL
    if (k > 0 && ob_cpu_bf16_gemm_available()) {
        pthread_mutex_lock(&g_bf16.lock);
        ob_status st = bf16_gemm_locked(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, e);
        pthread_mutex_unlock(&g_bf16.lock);
        return st;
    }
#endif
    return gemm_f32(dev, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, e);
}
