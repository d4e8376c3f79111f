/* optimizers/ns_study.h - how well Newton-Schulz orthogonalizes, and fitting
 * shape-specific coefficients (`optbench ortho`).
 *
 * Samples are (batch, rows, cols) matrices on the device: Gaussian, or with a
 * heavy-tailed spectrum (L diag(s) R, L and R random with orthonormal columns
 * / rows, s log-normal). The reference is the exact polar factor U V^T of each
 * sample (the backend's SVD slot, computed in double). The error of a
 * coefficient set is ||NS(A) - U V^T||_F / ||U V^T||_F after normalizing A by
 * its Frobenius norm, as Muon does.
 *
 * Fitting uses a property of the iteration: on A = U S V^T it acts on each
 * singular value alone (NS(A) = U p(S) V^T with p the composed quintic), so
 * the error is sqrt(mean_i (p(s_i / ||A||_F) - 1)^2) up to rounding. The
 * search (Nelder-Mead over (a, b, c)) evaluates that on the samples' singular
 * values; the result is then measured with the real iteration.
 */
#ifndef OB_OPTIMIZERS_NS_STUDY_H
#define OB_OPTIMIZERS_NS_STUDY_H

#include "kernels/backend.h"

typedef enum ob_spectrum { OB_SPECTRUM_GAUSSIAN = 0, OB_SPECTRUM_HEAVY } ob_spectrum;

typedef struct ob_ortho_set {
    ob_device *dev;
    int batch, rows, cols, k;   /* k = min(rows, cols) */
    int64_t stride;             /* floats per matrix in the buffers (ob_ns_stride) */
    float *a;                   /* (batch, stride) samples, device */
    float *q;                   /* their polar factors, device */
    double *sv;                 /* (batch, k) singular values / ||A||_F, host */
    float *x, *x2, *ga, *gb;    /* Newton-Schulz workspace, device */
    float *scratch;             /* device floats for dot products */
    int bf16;                   /* measure the iteration in bf16 (ob_ns_iterate); 0 from ob_ortho_make */
} ob_ortho_set;

typedef struct ob_ortho_stats {
    double err_mean, err_max;   /* relative Frobenius error against U V^T */
    double sv_min, sv_max;      /* singular values of NS(A) over the batch */
} ob_ortho_stats;

/* Draw batch samples (seed, spectrum) and their exact polar factors. */
ob_status ob_ortho_make(ob_device *dev, ob_spectrum spec, int batch, int rows, int cols, uint64_t seed,
                        ob_ortho_set *s, ob_err *e);
void ob_ortho_free(ob_ortho_set *s);
/* steps iterations on every sample, iteration k with the triple
 * abc[3 min(k, n_abc - 1) ..], measured against U V^T. */
ob_status ob_ortho_measure(ob_ortho_set *s, const float *abc, int n_abc, int steps, ob_ortho_stats *out,
                           ob_err *e);
/* The error predicted from the singular values alone (mean over the batch),
 * triples as for ob_ortho_measure. */
double ob_ortho_scalar_error(const ob_ortho_set *s, const double *abc, int n_abc, int steps);
/* Nelder-Mead from start; returns the number of evaluations, out the best. */
int ob_ortho_fit(const ob_ortho_set *s, int steps, const double start[3], int max_evals, double out[3]);
/* A fitted triple as a coefficient file keeps it: each value rounded to six
 * decimals (the file's), then to float. Measured, printed with "%.6f" and
 * appended (ob_ns_coeffs_append), it is one value, the one root reads back
 * (exactly, for |value| < 16: a float there is within half a unit of the
 * sixth decimal of its text). */
void ob_ortho_file_abc(const double in[3], float out[3]);

#endif
