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
 * and alpha, and kept in a small cache: Newton-Schulz repeats a few shapes.
 * Two of its three products a step are Gram products (X X^T, and A A^T with
 * A symmetric): from order 384 on those compute the tiles on and above the
 * diagonal and mirror the rest, as OpenBLAS's ssyrk does on the fp32 path. */
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
    /* one matrix: any stride past it (oneDNN takes a batch stride of 0 for
     * a layout of its own and runs its reference code, 1000x slower) */
    const dnnl_dim_t bs = batch > 1 ? s : (dnnl_dim_t)(t ? cols : rows) * ld;
    const dnnl_dims_t strides = {bs, t ? 1 : ld, t ? ld : 1};
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

/* Run a cached product on operands a and b (bf16) into c (float). */
static ob_status prim_run(const prim_entry *pe, uint16_t *a, uint16_t *b, float *c, ob_err *e)
{
    dnnl_memory_t am = NULL, bm = NULL, cm = NULL;
    dnnl_status_t s = dnnl_memory_create(&am, &pe->a_md, g_bf16.eng, a);
    if (s == dnnl_success) s = dnnl_memory_create(&bm, &pe->b_md, g_bf16.eng, b);
    if (s == dnnl_success) s = dnnl_memory_create(&cm, &pe->c_md, g_bf16.eng, c);
    if (s == dnnl_success) {
        const dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
        s = dnnl_primitive_execute(pe->prim, g_bf16.stream, 3, args);
        if (s == dnnl_success) s = dnnl_stream_wait(g_bf16.stream);
    }
    if (am) dnnl_memory_destroy(am);
    if (bm) dnnl_memory_destroy(bm);
    if (cm) dnnl_memory_destroy(cm);
    if (s != dnnl_success)
        return ob_fail(e, OB_ERR_BACKEND, "cpu gemm_sb_bf16: oneDNN's %dx%dx%d matmul failed: status %d",
                       pe->key.m, pe->key.n, pe->key.k, (int)s);
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
    return prim_run(pe, a16, b16, C, e);
}

/* The tiles of C below the diagonal from those above it, C[i][j] = C[j][i]
 * for j left of row i's tile (t rows and columns a tile), in squares of 32
 * so that both sides are read a few cache lines at a time. */
static void gram_mirror(float *C, int ldc, int64_t sc, int batch, int m, int t)
{
    const int sq = (m + 31) / 32;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < batch; b++)
        for (int r = 0; r < sq; r++) {
            float *c = C + (int64_t)b * sc;
            const int r0 = r * 32, r1 = r0 + 32 < m ? r0 + 32 : m;
            for (int c0 = 0; c0 < r1; c0 += 32)
                for (int i = r0; i < r1; i++) {
                    const int left = i / t * t, c1 = c0 + 32 < left ? c0 + 32 : left;
                    for (int j = c0; j < c1; j++) c[(int64_t)i * ldc + j] = c[(int64_t)j * ldc + i];
                }
        }
}

/* How many tiles a side a Gram product of order m is cut into: about 256
 * rows each from 768 on, two from 384, else none. oneDNN's matmul on a
 * tile runs at nearly its whole-matrix rate down to 256, while the saving,
 * (nt - 1) / 2nt of the work, grows with nt (2026-12-06, AVX512-BF16, 2
 * threads, one product: 1024 x 1024 x 1024 5.1 -> 4.4 ms, 768 x 768 x 3072
 * 8.7 -> 6.5, 2048 x 2048 x 2048 42.7 -> 32.9; at 256 nothing is gained). */
static int gram_tiles(int m)
{
    return m >= 768 ? 4 : m >= 384 ? 2 : 1;
}

/* A Gram product (B == A, read with the other transpose: op(A) op(A)^T,
 * symmetric) in nt x nt tiles of C, only those on and above the diagonal
 * computed, the rest mirrored: (nt + 1) / 2nt of the products' work. The
 * tiles' sums are oneDNN's, as the whole product's, in an order that may
 * differ from it (so may a float's last bits: the order is a GEMM's own
 * choice either way). */
static ob_status bf16_gram_locked(int ta, int m, int k, float alpha, const float *A, int lda, int64_t sa, float *C,
                                  int ldc, int64_t sc, int batch, int nt, ob_err *e)
{
    const size_t na = (size_t)(batch - 1) * (size_t)sa + (size_t)(ta ? k : m) * (size_t)lda;
    uint16_t *a16 = NULL;
    OB_TRY(to_bf16(0, A, na, &a16, e));
    const int t = (m + nt - 1) / nt;
    for (int i = 0; i * t < m; i++)
        for (int j = i; j * t < m; j++) {
            const int r0 = i * t, c0 = j * t;
            const int mi = m - r0 < t ? m - r0 : t, nj = m - c0 < t ? m - c0 : t;
            const prim_key key = {ta, !ta, mi, nj, k, lda, lda, ldc, batch, sa, sa, sc, alpha};
            prim_entry *pe;
            OB_TRY(prim_get(&key, &pe, e));
            /* op(A)'s rows r0.. and op(A)^T's columns c0..: rows of A, or its columns when ta */
            uint16_t *ap = a16 + (ta ? (size_t)r0 : (size_t)r0 * (size_t)lda);
            uint16_t *bp = a16 + (ta ? (size_t)c0 : (size_t)c0 * (size_t)lda);
            OB_TRY(prim_run(pe, ap, bp, C + (size_t)r0 * (size_t)ldc + (size_t)c0, e));
        }
    gram_mirror(C, ldc, sc, batch, m, t);
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
        const int nt = A == B && lda == ldb && sa == sb && m == n && ta != tb ? gram_tiles(m) : 1;
        pthread_mutex_lock(&g_bf16.lock);
        ob_status st = nt > 1 ? bf16_gram_locked(ta, m, k, alpha, A, lda, sa, C, ldc, sc, batch, nt, e)
                              : bf16_gemm_locked(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, e);
        pthread_mutex_unlock(&g_bf16.lock);
        return st;
    }
#endif
    return gemm_f32(dev, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, e);
}
