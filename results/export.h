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

/* One CSV file being written. */
typedef struct ob_csv {
    FILE *f;
    int col;                  /* fields written in the current row */
    char path[1024];
} ob_csv;

ob_status ob_csv_open(ob_csv *c, const char *dir, const char *name, const char *const *header,
                      int n_header, ob_err *e);
void ob_csv_str(ob_csv *c, const char *s);     /* quoted by csv_fwrite; NULL is empty */
void ob_csv_num(ob_csv *c, double v);          /* NaN is empty, +-inf is "inf"/"-inf" */
void ob_csv_int(ob_csv *c, int64_t v);
void ob_csv_opt_int(ob_csv *c, int64_t v);     /* negative is empty (unknown) */
void ob_csv_row(ob_csv *c);                    /* end the row */
ob_status ob_csv_close(ob_csv *c, ob_err *e);  /* reports a failed write */

/* Shortest decimal text of v that reads back as v ("" for NaN, "inf"). */
void ob_fmt_num(double v, char *buf, size_t n);

/* A file-name-safe form of a label ("adam beta2=0.95" -> "adam_beta2-0.95"). */
void ob_slug(const char *label, char *out, size_t n);

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

/* Sensitivity to the swept hyperparameters besides the lr (run --sweep).
 * For each workload label and each key of the optimizer labels ("adam
 * beta2=0.95 clip_norm=1": keys beta2 and clip_norm): the groups of that
 * workload whose label holds the key with a numeric value make lines, one per
 * optimizer name and values of its other keys ("adam clip_norm=1"); a line
 * needs at least 2 distinct values of the key. An optimizer none of whose
 * lines has 2 (its keys were searched together, so every configuration
 * differs in the other keys as well) gets one scatter of all its
 * configurations instead, labelled "NAME (each configuration)". Workload parameters are no
 * such key (a swept one makes workload labels of their own). A label numbered
 * for being ambiguous ("adam #3") and a group without a finished run are left
 * out. Points are ordered by value; lines and keys by first appearance in
 * group order. hp_sweep.csv is written from exactly these, and only when
 * there is one. */
typedef struct ob_hp_point {
    int group;                /* index into s->g */
    double value;             /* the key's value */
} ob_hp_point;
typedef struct ob_hp_line {
    char *label;              /* optimizer name plus its other keys' values */
    int n;
    ob_hp_point *p;           /* (n,) ascending value */
    int scatter;              /* 1: the configurations differ in other keys too (a quasi-random
                               * search draws them together): points, not a line */
} ob_hp_line;
typedef struct ob_hp_fig {
    int wl;
    char *key;
    int n_lines;
    ob_hp_line *lines;
} ob_hp_fig;
typedef struct ob_hp_sweeps {
    int n;
    ob_hp_fig *f;
} ob_hp_sweeps;
ob_status ob_hp_sweeps_find(const ob_dataset *d, const ob_stats *s, ob_hp_sweeps *out, ob_err *e);
void ob_hp_sweeps_free(ob_hp_sweeps *h);
/* A group for which no lr has a finite median although runs finished there
 * (half its seeds or more diverged at every lr): no point, a mark. */
int ob_hp_diverged_everywhere(const ob_group *g);

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
