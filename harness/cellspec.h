/* harness/cellspec.h - what the store knows a cell by: its run spec and
 * the JSON texts of its settings.
 *
 * A run is identified (by --resume, compare and history) by its workload and
 * workload parameters, optimizer, hyperparameters and training settings, lr,
 * seed and steps. The parameters and hyperparameters are JSON texts of every
 * key (ob_hp_to_json): the optimizer's keys, then the training settings under
 * "train" (the spike guard's only while it is on, so that runs without it
 * keep the text they had before it existed), its text settings (route rules,
 * coeff_file) under "options", and a study's number under "search". A key a
 * later build adds is absent from an earlier build's texts; the spec carries
 * this build's defaults (ob_optimizer_defaults_json,
 * ob_workload_defaults_json) so that --resume can read it as that default.
 */
#ifndef OB_HARNESS_CELLSPEC_H
#define OB_HARNESS_CELLSPEC_H

#include <stddef.h>

#include "harness/config.h"
#include "harness/matrix.h"
#include "kernels/backend.h"
#include "results/store.h"

/* The run spec of a cell; wjson and ojson receive its JSON texts, which the
 * spec points to (dev NULL: the configuration's backend name). */
void ob_cell_spec(const ob_config *c, const ob_cell *cell, const ob_device *dev, const char *devices_desc,
                  char wjson[1024], char ojson[4096], ob_run_spec *spec);

/* {"matrix":"<FNV-1a 64 of every cell's identity>","cells":N}: what a
 * shard's benchmark records, so that merge can tell the shards of one
 * matrix from those of another (another sweep, lr list or setting). */
void ob_matrix_fingerprint(const ob_config *c, const ob_matrix *m, char *buf, size_t n);

#endif
