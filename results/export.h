/* results/export.h - CSV export of a results database (through libcsv).
 *
 * Every table of the report is a CSV file with a header row: text fields are
 * quoted by libcsv's csv_fwrite, numbers are written plain (shortest form that
 * reads back exactly), an unknown value is an empty field, a diverged value is
 * "inf". Labels contain no commas, so gnuplot (which splits quoted fields at
 * commas) reads every table except the JSON columns at the end of runs.csv.
 * ob_export_docs lists each file with its columns for the report's text.
 */
#ifndef OB_RESULTS_EXPORT_H
#define OB_RESULTS_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "core/ob.h"
#include "results/dataset.h"
#include "results/stats.h"

struct sqlite3;

/* At most this many points per series in the per-figure tables (curves_best, evals_best). */
#define OB_PLOT_MAX_POINTS 2000

/* Write every CSV table of the report into dir. */
ob_status ob_export_tables(struct sqlite3 *db, const ob_dataset *d, const ob_stats *s,
                           const char *dir, ob_err *e);

typedef struct ob_file_doc {
    const char *name, *what, *columns;
} ob_file_doc;
/* The files ob_export_tables writes, with their columns; n gets the count. */
const ob_file_doc *ob_export_docs(int *n);

/* Ranks within each workload (1 = best) by median final loss at the best lr;
 * rank[k] for group k. Unranked (all diverged) groups come last. */
void ob_stats_rank(const ob_stats *s, int *rank); /* 0: unranked (no finite median) */
/* The same by the median final loss of the confirmation runs (0: none, or no
 * finite median). */
void ob_stats_confirm_rank(const ob_stats *s, int *rank);
/* The groups of workload w with rank > 0, in rank order, into order (at most
 * max); returns how many. */
int ob_stats_ranked(const ob_stats *s, const int *rank, int w, int *order, int max);
/* The paired comparison of neighbours in rank order (order[i], order[i + 1]):
 * on the sweep's runs at the best lr (confirm 0) or on the fresh seeds (1). */
ob_status ob_stats_pair_neighbours(const ob_dataset *d, const ob_stats *s, int ka, int kb, int confirm, ob_paired *out,
                                   ob_err *e);
/* Does any group hold confirmation runs? */
int ob_stats_has_confirm(const ob_stats *s);

/* What an optimizer configuration ran with, for readers of a report
 * (settings.csv and the report's Setup table): its settings that differ from
 * this optbench's defaults for that optimizer and for training. */
typedef struct ob_setting_diff {
    char key[96];     /* "weight_decay", "train.clip_norm", "options.0" (a text setting) */
    char value[200];  /* as stored: true, 0.05, "warmup_cosine" */
    char dflt[200];   /* this optbench's default; "" when it has no such setting */
} ob_setting_diff;
/* Optimizer label k's settings (those of its first sweep run, the lr left
 * out: every run of a label holds the same) where they differ from the
 * defaults, in stored order, into *out (malloc'd, NULL when none; *n of
 * them). A setting this optbench does not know (an older or newer database)
 * is listed with an empty default; one it has and the run lacks (added
 * since) is not. Hyperparameters not stored as JSON give one entry with
 * an empty key, whose value says so. */
ob_status ob_settings_diff(struct sqlite3 *db, const ob_dataset *d, int k, ob_setting_diff **out, int *n,
                           ob_err *e);

#endif
