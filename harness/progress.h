/* harness/progress.h - what the user sees while a matrix runs. On a
 * terminal: one live line per cell (cell k/N, step, loss, steps/s, ETA of the
 * matrix), rewritten in place. In a pipe or CI log: one plain line per
 * finished cell. */
#ifndef OB_HARNESS_PROGRESS_H
#define OB_HARNESS_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

typedef struct ob_progress ob_progress;

ob_progress *ob_progress_new(int n_cells, int64_t steps_per_cell, FILE *out);
void ob_progress_cell_begin(ob_progress *p, int cell, const char *workload, const char *optimizer,
                            double lr, int64_t seed);
void ob_progress_cell_step(ob_progress *p, int64_t step, int64_t steps, double loss);
void ob_progress_cell_end(ob_progress *p, const char *status, double final_loss, int64_t steps_done,
                          int64_t diverged_step, double wall_s, const char *error);
void ob_progress_free(ob_progress *p);

#endif
