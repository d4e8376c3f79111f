/* plots/fig_int.h - what the files of the report's figures share (figures.c,
 * which writes them all, and fig_*.c, one figure family each): the script being
 * written, the report's list of figures, value ranges and log axes, and each
 * family's entry. Internal to plots/: not installed, not included elsewhere. */
#ifndef OB_PLOTS_FIG_INT_H
#define OB_PLOTS_FIG_INT_H

#include <stddef.h>
#include <stdio.h>

#include "core/ob.h"
#include "plots/figures.h"
#include "results/dataset.h"
#include "results/csv.h"
#include "results/export.h"
#include "results/hp_sweep.h"
#include "results/stats.h"

/* The PNG's and SVG's size in pixels. */
#define FIG_W 1000
#define FIG_H 620

/* A figure's script being written: NAME.gp, its stem NAME. */
typedef struct script {
    FILE *f;
    int no_key;     /* the figure has no legend */
    char *relayout; /* NULL, or the PDF's settings for its width (gp_write_pdf), malloc'd */
    char stem[256];
    char path[1024];
} script;

/* Opens dir/STEM.gp (sc), with its header: what it draws, what it reads,
 * style.gp and the PNG's output. */
ob_status ob_fig_script_open(script *sc, const char *dir, const char *stem, const char *what, const char *reads,
                      ob_err *e);
/* Ends the script: the same figure as SVG and as PDF (ob_gp_write_pdf, with
 * sc->relayout), and closes it. */
ob_status ob_fig_script_close(script *sc, ob_err *e);
/* Adds a figure (stem, workload label index wl or -1, title, caption) to out. */
ob_status ob_fig_add(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title, const char *fmt, ...)
    OB_PRINTF(6, 7);
/* Adds a figure not drawn to out->skipped, its caption saying why. */
ob_status ob_fig_add_skipped(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
                      const char *why);
/* The legend's columns and rows for n entries up to longest characters. */
void ob_fig_key_fit(script *sc, int n, size_t longest);

/* Positive finite range of values, for the log-scale decision. */
typedef struct range {
    double lo, hi;
} range;
/* v added to r where positive and finite. */
void ob_fig_range_add(range *r, double v);
/* y tics of a log axis over values within a decade or so (r), with the
 * strip (a share of the plot's height) above them; 0 where they span more. */
int ob_fig_narrow_log_ytics(FILE *f, const range *r, double strip);
/* Log scale when the values span two decades or more. */
int ob_fig_spans_decades(const range *r);

/* A log axis autoscaled with offsets (room around the points): gnuplot
 * widens the data's range to whole decades, adds the offsets and widens to
 * whole decades again, so that data over 3 decades took 6 and left a third
 * of the plot empty. Only the offsets, then. */
#define LOG_NOEXTEND_LINE "set autoscale yfix   # the offsets' room around the points, not whole decades beyond it"
#define LOG_NOEXTEND LOG_NOEXTEND_LINE "\n"

/* An lr as the figures write it (3 significant digits). */
void ob_fig_lr_text(double lr, char *buf, size_t n);
/* The line type (style.gp) of optimizer configuration o's optimizer as a
 * whole: its own colour, marker and dashes. */
int ob_fig_own_lt(const ob_dataset *d, int o);

/* More lines than this on a loss or held-out figure (the nightly config's
 * 18 optimizers): their min-max bands, each translucent, lie over one
 * another until they hide the lines in one opaque blur, so the figure
 * draws the medians alone (the CSVs keep min and max). */
#define BAND_MAX_LINES 8

/* After a curve's "lr 0.03" in a legend: ", grid edge" where the best lr is at
 * the grid's edge; ", 3 of 7 diverged" where seeds of it diverged (into buf). */
const char *ob_fig_edge_note(const ob_group *g);
const char *ob_fig_diverged_note(const ob_dataset *d, const ob_group *g, char *buf, size_t n);

/* More configurations on a workload than its curve figures can show apart:
 * the figures then draw each optimizer's best configuration. */
#define FIG_MAX_CONFIGS 12

/* The y values of workload w's lr figure, which the hyperparameter figures
 * of w follow (fig_lr.c). */
range ob_fig_lr_yrange(const ob_stats *s, int w, int *any, int *any_div, int *any_conf);

/* The figure families, each of them in dir, added to out (or to out->skipped,
 * with why, where a figure has nothing to draw). Per workload w (slug: its
 * label in file names): */
ob_status ob_fig_loss(const ob_dataset *d, const ob_stats *s, int w, const char *dir, const char *slug,
                   ob_figures *out, ob_err *e);
ob_status ob_fig_evals(const ob_dataset *d, const ob_stats *s, int w, const char *dir, const char *slug,
                    ob_figures *out, ob_err *e);
ob_status ob_fig_lr(const ob_dataset *d, const ob_stats *s, int w, const char *dir, const char *slug,
                 ob_figures *out, ob_err *e);
ob_status ob_fig_hp(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, const char *dir, const char *slug,
                 ob_figures *out, ob_err *e);
ob_status ob_fig_budget(const ob_dataset *d, const ob_stats *s, int w, int heldout, const char *dir, const char *slug,
                     ob_figures *out, ob_err *e);
/* Over all workloads: the dot plot of kind (0 step time, 1 peak memory,
 * 2 optimizer state, 3 time to target), and the performance profiles. */
ob_status ob_fig_bars(const ob_dataset *d, const ob_stats *s, const char *dir, int kind, ob_figures *out, ob_err *e);
ob_status ob_fig_profile(const ob_dataset *d, const ob_stats *s, const char *dir, ob_figures *out, ob_err *e);

#endif
