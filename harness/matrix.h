/* harness/matrix.h - expansion of a configuration into cells.
 *
 * A cell is one run: (workload, optimizer, lr, seed) with the fully resolved
 * hyperparameters of the workload, the optimizer and the training pipeline.
 * Order: workload, its swept configurations, optimizer, its swept
 * configurations (its own sweeps, then train's), lr, seed (the cell index
 * is the position in that order, stable for a given configuration; without
 * sweeps every pair has one configuration); the pairs (workload, optimizer)
 * the configuration excludes have no cells. A "pair" below is one
 * configuration of a workload with one configuration of an optimizer. Expansion
 * validates every name and every setting, so nothing runs or is written
 * when any of them is wrong; ob_matrix_check_routing then validates the
 * parameter routing of every pair.
 */
#ifndef OB_HARNESS_MATRIX_H
#define OB_HARNESS_MATRIX_H

#include <stdio.h>

#include "core/hparams.h"
#include "harness/config.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

#define OB_MAX_CELL_OPTIONS 32
#define OB_MAX_CONFIGURATIONS 4096 /* of one workload, or of one optimizer (its sweeps times train's) */

typedef struct ob_cell {
    int64_t index;
    const ob_workload_def *wl;
    const ob_optimizer_def *opt;
    double lr;
    int64_t seed;
    int wl_variant, variant; /* configuration of the workload's sweeps; of the optimizer's and train's */
    int study;               /* with studies (config studies > 1), the search the configuration is a trial
                              * of (0 ..); -1 otherwise */
    ob_hp_values wl_hp, opt_hp, train_hp;
    /* text settings of the optimizer (route rules, coeff_file), in order;
     * they point into the configuration, which outlives the matrix */
    int n_options;
    const ob_setting *options[OB_MAX_CELL_OPTIONS];
} ob_cell;

typedef struct ob_matrix {
    ob_cell *cells;
    int n;
    int n_excluded_pairs; /* (workload, optimizer) pairs of the lists left out by 'exclude' */
} ob_matrix;

/* Notes (settings for owners that are not in the matrix) go to notes (may be NULL). */
ob_status ob_matrix_expand(const ob_config *c, ob_matrix *m, FILE *notes, ob_err *e);
void ob_matrix_free(ob_matrix *m);
/* Route the parameters of every (workload, optimizer) pair of m, as each
 * run will, on a description of the workload made on the CPU (no parameters
 * are allocated), before anything is run or written. A routing rule that
 * fails is OB_ERR_INPUT naming the rule and where it was given (config
 * file:line or --set); so is a workload setting the workload refuses.
 * Warnings go to warn (may be NULL): a pair whose optimizer's own lr reaches
 * no parameter (muon or root on a workload without hidden matrices: every
 * parameter in the AdamW group), so that its lrs label identical runs.
 * With describe non-NULL, each pair's routing is printed there (--dry-run). */
ob_status ob_matrix_check_routing(const ob_config *c, const ob_matrix *m, FILE *warn, FILE *describe, ob_err *e);
/* The confirmation stage's plan (run --confirm-seeds): the number of
 * (workload, optimizer) pairs, and the first fresh seed, one past the largest
 * seed of the matrix. */
int ob_matrix_confirm_plan(const ob_matrix *m, int64_t *first_seed);
/* The order to run cells in (an index into cells for each turn): the cells
 * of one workload configuration stay together, in the order given, and
 * within them runs go seed by seed, each seed's runs of every optimizer and
 * lr in turn, in the order given for the first seed of the stage, reversed
 * for the second, and so on. A machine whose speed drifts during a matrix
 * then slows every optimizer's runs alike (a linear drift cancels over each
 * pair of seeds) instead of the optimizers that ran last, and a matrix
 * stopped half way holds whole lr sweeps of every optimizer for the seeds
 * it got to. cells need not be the whole stage (a shard, a resume's
 * unfinished cells): all (n_all cells; NULL: cells itself) is the whole
 * stage, whose seeds decide which turns are reversed, so that a part runs
 * in the order of the whole. The cells of a workload configuration must be
 * consecutive, as in a matrix. */
void ob_cells_run_order(const ob_cell *const *cells, int n, const ob_cell *all, int n_all, int *order);
/* Whether a and b are runs of one pair (same configurations of workload and
 * optimizer; configurations that differ in the lr alone, the trials of an lr
 * searched on its own, are one). */
int ob_cell_same_pair(const ob_cell *a, const ob_cell *b);
/* The swept values of the cell's configurations, "cond=100 beta2=0.95
 * clip_norm=1" ("" without sweeps): of the workload and the optimizer
 * (OB_SWEEP_ALL), or of one of them. Numbers read as the report labels them
 * ("%.9g": a sweep value "1e-3" is "0.001"). */
enum { OB_SWEEP_ALL = 0, OB_SWEEP_WORKLOAD = 1, OB_SWEEP_OPTIMIZER = 2 };
void ob_cell_sweep_text(const ob_config *c, const ob_cell *cell, int part, char *buf, size_t n);
/* The cell's optimizer: created with its hyperparameters, text settings applied. */
ob_status ob_cell_make_optim(const ob_cell *cell, ob_optim **out, ob_err *e);

#endif
