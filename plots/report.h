/* plots/report.h - `optbench report`: a results database to a report folder.
 *
 * The folder gets the CSV tables (results/export.h), one gnuplot script per
 * figure plus style.gp (plots/figures.h), the rendered PNG and SVG files when
 * gnuplot is installed, summary.md (the tables, ranked), index.html (the
 * same with the figures inline) and summary.tex (plots/latex.h).
 */
#ifndef OB_PLOTS_REPORT_H
#define OB_PLOTS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "core/ob.h"
#include "results/stats.h"

typedef struct ob_report_opts {
    const char *db_path;
    const char *out_dir;
    int64_t benchmark_id;   /* 0: every run (latest per cell), -1: latest benchmark, >0: that one */
    ob_stats_opts stats;
    int no_render;          /* write scripts only, even when gnuplot is installed */
    int jobs;               /* gnuplot processes at once; 0: ob_gnuplot_jobs_default() */
    double pdf_width;       /* the PDFs' width in inches; 0: a page's text width (OB_PDF_TEXT_WIDTH) */
    FILE *log;              /* progress lines; NULL for none */
    FILE *ranking;          /* a short ranking per workload (for a terminal or CI log); NULL for none */
} ob_report_opts;

typedef struct ob_report_result {
    int n_runs, n_groups, n_figures, n_rendered, n_render_failed;
    int n_skipped;          /* figures not drawn because they would have no data (a note instead) */
    int gnuplot_found;
    int stop_signal;        /* SIGINT or SIGTERM that stopped the report (OB_ERR_INTERRUPTED), else 0 */
} ob_report_result;

/* A SIGINT or SIGTERM while gnuplot renders the figures (most of a report's
 * time) ends the gnuplot processes and waits for them, removes the hidden
 * folder the report was written into and returns OB_ERR_INTERRUPTED with
 * res->stop_signal set: the output folder is left as it was. */
ob_status ob_report_write(const ob_report_opts *o, ob_report_result *res, ob_err *e);

/* path without trailing slashes ("report/" -> "report"; "/" stays), for joining */
void ob_path_trim(const char *path, char *out, size_t n);

/* mkdir -p */
ob_status ob_mkdirs(const char *path, ob_err *e);

/* The longest output folder name (bytes) of report and history: the paths
 * of the files written in it, and of report's hidden folder beside them,
 * are built in fixed buffers that then have room for every file name. */
#define OB_OUT_DIR_MAX 900

#endif
