/* optimizers/newton_schulz.h - Newton-Schulz orthogonalization on the backend,
 * and the coefficient tables of Muon and ROOT.
 *
 * The quintic iteration X <- a X + (b A + c A^2) X with A = X X^T (for a wide
 * X; X <- a X + X (b A + c A^2) with A = X^T X for a tall one, which is the
 * same iteration on X^T without transposing anything) pushes the singular
 * values of a normalized X towards 1, approximating the polar factor U V^T.
 * It runs on a batch of same-shape matrices with strided-batched GEMMs.
 *
 * Coefficient files (root's coeff_file, `optbench ortho --fit --append`) are
 * tab-separated lines "rows cols a b c"; '#' starts a comment. A shape is
 * keyed by (min dim, max dim), so 512x2048 and 2048x512 share a line.
 */
#ifndef OB_OPTIMIZERS_NEWTON_SCHULZ_H
#define OB_OPTIMIZERS_NEWTON_SCHULZ_H

#include <stdint.h>

#include "core/ob.h"
#include "kernels/backend.h"

typedef struct ob_ns_coeff {
    int64_t dmin, dmax;
    float abc[3];
} ob_ns_coeff;

/* Muon's fixed coefficients (3.4445, -4.7750, 2.0315). */
extern const float ob_ns_muon_abc[3];

/* Most per-iteration triples a schedule holds; iterations past the last
 * triple repeat it. */
#define OB_NS_MAX_SCHEDULE 8

/* Polar Express (Amsel, Persson, Musco, Gower 2025, arXiv 2505.16932,
 * Algorithm 1): a different quintic per iteration, each optimal in the sup
 * norm for the singular-value interval the previous ones leave, so the
 * iteration converges (the fixed Muon quintic plateaus near 0.3 error).
 * Algorithm 1 normalizes X0 = G / (1.01 ||G||_F + 1e-7) and divides the first
 * seven triples by the safety factor 1.01 (a/1.01, b/1.01^3, c/1.01^5); the
 * eighth, (1.875, -1.25, 0.375), repeats from then on. Fills abc with the 8
 * triples, the normalization's 1.01 folded into the first (see
 * ob_ns_fold_scale), so that X0 = G / ||G||_F as for the other sets; returns 8. */
int ob_ns_polar_express(float abc[][3]);
/* The triple of p(x / s) from that of p(x): (a/s, b/s^3, c/s^5), computed in
 * double. Running it on X equals running the original on X / s. */
void ob_ns_fold_scale(float abc[3], double s);

/* The ROOT authors' table: 1 and abc when (dmin, dmax) is tabulated, else 0. */
int ob_ns_root_lookup(int64_t dmin, int64_t dmax, float abc[3]);
/* Lookup in a loaded table (the last line for a shape wins). */
int ob_ns_table_lookup(const ob_ns_coeff *t, int n, int64_t dmin, int64_t dmax, float abc[3]);
/* Read a coefficient file (libcsv, tab-separated); *out is malloc'ed. Bad
 * lines are OB_ERR_INPUT naming file:line. */
ob_status ob_ns_coeffs_load(const char *path, ob_ns_coeff **out, int *n, ob_err *e);
/* Append "rows cols a b c" (and a comment line when comment != NULL). */
ob_status ob_ns_coeffs_append(const char *path, int64_t rows, int64_t cols, const float abc[3],
                              const char *comment, ob_err *e);

/* Floats per matrix in a workspace: n rounded up to 16 (64-byte aligned rows). */
static inline int64_t ob_ns_stride(int64_t n)
{
    return (n + 15) / 16 * 16;
}

/* steps iterations on x: (batch, rows, cols) at stride sx, already normalized.
 * x2: the same size; a, b: (batch, s, s) at stride ss with s = min(rows, cols).
 * Step k uses the triple abc[3*min(k, n_abc-1)..]. *out is x or x2, whichever
 * holds the result. Everything is device memory.
 * bf16: as torch.optim.Muon iterates on its bf16 copy of the update (x
 * already bf16, as batched_normalize's OB_NORM_BF16 leaves it):
 * A = X X^T, B = addmm(A, A, A, beta=b, alpha=c), X = addmm(X, B, X, beta=a),
 * each a float sum rounded to bf16 once, as torch's bf16 matmul and addmm
 * round them; it needs the backend's gemm_sb_bf16 and round_bf16. */
ob_status ob_ns_iterate(ob_device *dev, float *x, float *x2, float *a, float *b, int batch,
                        int64_t rows, int64_t cols, int64_t sx, int64_t ss, const float *abc,
                        int n_abc, int steps, int bf16, float **out, ob_err *e);

#endif
