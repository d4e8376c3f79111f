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
#include <stdint.h>

#include "harness/config.h"
#include "harness/matrix.h"
#include "kernels/backend.h"
#include "results/store.h"

/* The sizes of a run's settings texts: a workload's parameters (JSON of
 * every key), an optimizer's keys alone and the training settings (both
 * bounded by the registry: test_registry checks that every one fits), and
 * the optimizer's whole text, which also holds the user's route rules and
 * coeff_file (too many of them are bad input). */
#define OB_SPEC_WL_JSON 1024
#define OB_SPEC_HP_JSON 1400
#define OB_SPEC_TRAIN_JSON 600
#define OB_SPEC_OPT_JSON 4096

/* The run spec of a cell; wjson and ojson receive its JSON texts, which the
 * spec points to (dev NULL: the configuration's backend name). Text settings
 * too long to store are OB_ERR_INPUT (ob_matrix_expand checks every cell). */
ob_status ob_cell_spec(const ob_config *c, const ob_cell *cell, const ob_device *dev, const char *devices_desc,
                       char wjson[OB_SPEC_WL_JSON], char ojson[OB_SPEC_OPT_JSON], ob_run_spec *spec, ob_err *e);

/* The cells of a matrix that this process runs (all of them, or those of
 * its shard: ob_config_in_shard), each with its spec and the JSON texts the
 * spec points into, and its run (ids, 0 until --resume finds or a benchmark
 * stores it). Free with ob_cell_set_free. */
typedef struct ob_cell_set {
    int n;
    const ob_cell **cells;
    ob_run_spec *specs;
    int64_t *ids;
    char (*wjson)[OB_SPEC_WL_JSON];
    char (*ojson)[OB_SPEC_OPT_JSON];
} ob_cell_set;

/* Builds *set for m's cells in this process's shard (dev and devices_desc
 * as ob_cell_spec's). On failure *set is still safe to free. */
ob_status ob_cell_set_build(const ob_config *c, const ob_matrix *m, const ob_device *dev, const char *devices_desc,
                            ob_cell_set *set, ob_err *e);
void ob_cell_set_free(ob_cell_set *set);

/* {"matrix":"<FNV-1a 64 of every cell's identity>","cells":N}: what a
 * shard's benchmark records, so that merge can tell the shards of one
 * matrix from those of another (another sweep, lr list or setting). */
ob_status ob_matrix_fingerprint(const ob_config *c, const ob_matrix *m, char *buf, size_t n, ob_err *e);

#endif
