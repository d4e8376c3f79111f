/* harness/resume.h - which earlier benchmark `run --resume` continues.
 *
 * The newest benchmark of the database whose runs are exactly this matrix's
 * cells (ob_store_find_benchmark), or else the newest whose runs this matrix
 * holds among more (a grown matrix: more lrs, seeds, trials, configurations,
 * optimizers or workloads, or its cells in another order;
 * ob_store_find_grown), whose runs then take this matrix's cell numbers.
 * Settings texts are compared over this build's defaults, so a benchmark an
 * earlier build stored before a setting existed is continued; its cells keep
 * their stored texts.
 */
#ifndef OB_HARNESS_RESUME_H
#define OB_HARNESS_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "harness/cellspec.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "results/store.h"

/* The cells of benchmark bench_id that --resume matched (relaxed[k] 1) by
 * their settings, maybe not their texts (a key this build added, at its
 * default, is missing from the stored runs): those whose texts differ keep
 * the stored ones (into wjson[k] and ojson[k], which specs[k] then points
 * to), so that the benchmark's runs, its checkpoints and confirmation runs go
 * on with one text each. A note names the keys, once. */
ob_status ob_resume_keep_texts(ob_store *store, int64_t bench_id, ob_run_spec *specs, int n,
                               const unsigned char *relaxed, char (*wjson)[OB_SPEC_WL_JSON], char (*ojson)[OB_SPEC_OPT_JSON],
                               ob_err *e);

/* Which benchmark --resume continues, the database unchanged: the newest of
 * this process's shard (or unsharded) whose runs are exactly specs' cells
 * (the process's cells of m, in order; ids[k] its run of cell k, relaxed[k]
 * 1 where it matched by settings, not texts), else, unsharded, the newest
 * whose runs this matrix holds among more (grown 1; held: how many of the
 * cells it has, ids[k] 0 for the others; to_retire: its confirmation runs
 * the grown sweep would retire). bench 0: none, why says why the newest is
 * not. run.c chooses with it in one write transaction; the preview
 * (ob_run_resume_preview, run.h) only reads. */
typedef struct ob_resume_found {
    int64_t bench;
    int grown, held, to_retire;
    char why[600];
} ob_resume_found;
ob_status ob_resume_find(const ob_config *c, const ob_matrix *m, ob_store *store, const ob_run_spec *specs, int n,
                         int64_t *ids, unsigned char *relaxed, ob_resume_found *f, ob_err *e);

/* --resume of a search whose draws are not given (search_draws): where no
 * benchmark of c->db continues this build's draws but one continues the
 * draws of builds before 2026-12-06 (search_draws 1, which a search those
 * builds stored took), c->search_draws becomes 1 and *m that matrix, with a
 * note; otherwise both stay. Reads the database only. */
ob_status ob_resume_search_draws(ob_config *c, ob_matrix *m, ob_err *e);

/* The benchmark a grown matrix continues (f from ob_resume_find, grown): its
 * runs take this matrix's cells, in the caller's transaction, and ids[k] is
 * 0 for each cell it lacks (the caller adds them). A benchmark another
 * process is running is not renumbered under it: bad input, nothing
 * changed. */
ob_status ob_resume_grow(const ob_config *c, const ob_matrix *m, ob_store *store, const ob_run_spec *specs, int n,
                         const ob_resume_found *f, int64_t *ids, ob_err *e);

#endif
