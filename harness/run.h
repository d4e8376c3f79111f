/* harness/run.h - the run loop: every cell of a matrix, on one device, into
 * one store. A cell that fails or diverges is recorded as such and the
 * matrix goes on; only a failing store stops it. */
#ifndef OB_HARNESS_RUN_H
#define OB_HARNESS_RUN_H

#include "harness/config.h"
#include "harness/matrix.h"
#include "kernels/backend.h"
#include "results/store.h"

typedef struct ob_run_summary {
    int done, diverged, failed, interrupted;
    int64_t bench_id;
} ob_run_summary;

/* Steps excluded from step-time statistics at the start of every run. */
#define OB_WARMUP_STEPS 5
/* Steps whose records are kept on the device between copies to the host. */
#define OB_FLUSH_STEPS 64

ob_status ob_run_matrix(const ob_config *c, const ob_matrix *m, ob_device *dev, ob_store *store,
                        ob_run_summary *sum, ob_err *e);

/* Statistics of a finished curve (exposed for tests). final = mean of the
 * finite losses over the last 10% of the steps (at least one step). */
void ob_curve_summary(const double *loss, int64_t n, double *final_loss, double *best_loss);
/* Quantile q in [0,1] of x (n > 0) with linear interpolation; x is sorted in place. */
double ob_quantile_inplace(double *x, int64_t n, double q);

#endif
