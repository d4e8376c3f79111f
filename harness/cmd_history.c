/* harness/cmd_history.c - `optbench history`: one metric over the benchmarks
 * of a database (a nightly job appends one benchmark per night) or of several
 * (--db repeated: a database per night), by date and git revision, printed as
 * a table and, with --out, written as history.csv with a gnuplot script
 * (history.gp) rendered to PNG, SVG and PDF for trend charts.
 *
 * Each benchmark is summarized on its own with results/stats (the value of a
 * workload x optimizer series is the statistic at that night's best lr). A
 * series is one workload with one set of workload parameters and one optimizer
 * configuration (hyperparameters), labelled as the report over all the runs
 * read labels them (ob_dataset_join: as one database holding them all would):
 * "quadratic noise=2 adam"; a night that ran another problem starts another
 * series instead of looking like a jump. Colours are the
 * report's, one per optimizer configuration; point types tell workloads apart.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core/cpu_share.h"
#include "core/hparams.h"
#include "harness/commands.h"
#include "plots/figures.h"
#include "plots/report.h"
#include "plots/style.h"
#include "results/dataset.h"
#include "results/csv.h"
#include "results/stats.h"
#include "results/store.h"
#include "workloads/workload.h"

/* Which way a metric improves, as the header and the plot title say it. */
enum { LOWER = -1, NO_DIRECTION = 0, HIGHER = 1, WORKLOAD_METRIC = 2 /* the workloads' metric decides */ };

typedef struct metric_def {
    const char *name, *label;
    int needs_curves, better;
} metric_def;

static const metric_def metrics[] = {
    {"final_loss", "median final training loss at the best lr", 0, LOWER},
    {"eval_loss", "median held-out loss at the best lr", 0, LOWER},
    {"eval_metric", "median held-out metric at the best lr", 0, WORKLOAD_METRIC},
    {"best_lr", "best learning rate", 0, NO_DIRECTION}, /* a setting, neither better nor worse */
    {"step_ms", "median step time (ms)", 0, LOWER},
    {"peak_mem", "peak memory (bytes)", 0, LOWER},
    {"state_bytes", "optimizer state (bytes)", 0, LOWER},
    {"divergence_rate", "fraction of runs that diverged", 0, LOWER},
    {"steps_to_target", "steps to the target loss (each night's default target, or --target)", 1, LOWER},
    {"step_ms_mean", "mean step time (ms): slow steps now and then included", 0, LOWER},
    {"opt_ms", "median time of the optimizer's part of a step (ms)", 0, LOWER},
    {"steps_to_heldout_target", "steps to the held-out target loss (runs evaluated during training; as "
     "steps_to_target)", 1, LOWER},
    {"steps_to_metric_target", "steps to the held-out target metric (accuracy; as report --heldout-on metric)", 1,
     LOWER},
};
#define N_METRICS (int)(sizeof metrics / sizeof metrics[0])

static double metric_value(int m, const ob_group *g)
{
    switch (m) {
    case 0: return g->final.median;
    case 1: return g->eval_loss.median;
    case 2: return g->eval_metric.median;
    case 3: return g->best_lr;
    case 4: return g->step_ms_median;
    case 5: return g->peak_mem_bytes >= 0 ? (double)g->peak_mem_bytes : NAN;
    case 6: return g->state_bytes >= 0 ? (double)g->state_bytes : NAN;
    case 7: return g->div_rate;
    case 9: return g->step_ms_mean;
    case 10: return g->opt_ms_median;
    case 11:
    case 12: return g->ev.steps;
    default: return g->tt_steps;
    }
}

/* Is metric m a time (step_ms, step_ms_mean, opt_ms), which a busy machine
 * moves? */
static int metric_is_time(int m) { return m == 4 || m == 9 || m == 10; }

static void history_usage(FILE *f)
{
    fprintf(f, "usage: optbench history --db FILE [--db FILE ...] [--metric NAME] [--workload W] [--optimizer O]\n"
               "                        [--last N] [--out DIR] [--target WORKLOAD=LOSS|VALUE ...]\n\n"
               "Prints one metric per benchmark (by date and git revision) for each workload x optimizer;\n"
               "with --out, writes DIR/history.csv and DIR/history.gp and renders history.png/.svg/.pdf.\n"
               "--db given several times reads those databases as one history (a database per night, as\n"
               "the nightly recipe keeps them): their benchmarks by date, each named DATABASE:ID (2:1 is\n"
               "benchmark 1 of the second --db), the series labelled over the runs of all of them. A file\n"
               "given twice, or two copies of one database (a baseline copied from a night), is refused.\n"
               "--last N shows the N latest benchmarks alone (their series labelled as over all of them).\n"
               "A series is one workload with one set of workload parameters and one number of steps,\n"
               "and one optimizer with one set of hyperparameters: a benchmark run with e.g. --set\n"
               "quadratic.noise=2 gets its own series (\"quadratic noise=2 adam\"), never a point in\n"
               "another. --workload takes a workload name (all its series) or a workload label\n"
               "(\"quadratic noise=2\"), --optimizer an optimizer name or label (\"adam beta2=0.95\").\n"
               "Colours are the report's, one per optimizer.\n"
               "--target WORKLOAD=LOSS (repeatable, as in report) fixes the target of steps_to_target for\n"
               "that workload (of steps_to_heldout_target and steps_to_metric_target: the held-out target,\n"
               "as report's --eval-target; steps_to_metric_target's is WORKLOAD=VALUE, a value of the metric\n"
               "such as an accuracy); without it each night's target is that night's default (1.1 x\n"
               "its best upper-median final loss, 0.9 x the best lower-median metric, or halfway to it), so\n"
               "a series can move because another optimizer did. The step times (step_ms, step_ms_mean,\n"
               "opt_ms) are a night's runs on a quiet machine where it has some; '*' marks a night whose\n"
               "timed runs of that series all met a busy machine (other processes kept 25%% or more of its\n"
               "CPUs busy: runs.other_cpu).\n\n"
               "metrics:\n");
    for (int i = 0; i < N_METRICS; i++) fprintf(f, "  %-24s %s%s\n", metrics[i].name, metrics[i].label, i ? "" : " (default)");
}

typedef struct series {
    char *label;   /* "workload optimizer", the labels of the whole database */
    int wl, opt;   /* label indices in the whole database's dataset */
    double *v;     /* (n_bench,) */
    unsigned char *busy; /* (n_bench,) 1: a step time of runs that all met a busy machine */
} series;

/* " (lower is better)", " (higher is better)" or "" (no direction: the best
 * lr; a held-out metric that is not an accuracy in every series shown, or
 * of a workload this build does not know). */
static const char *direction(int m, const series *ser, int ns, int nb, const ob_dataset *all)
{
    int b = metrics[m].better;
    if (b == WORKLOAD_METRIC) {
        int n = 0, acc = 0;
        for (int j = 0; j < ns; j++) {
            int has = 0;
            for (int k = 0; k < nb && !has; k++) has = !isnan(ser[j].v[k]);
            if (!has) continue; /* a workload without a metric */
            const ob_workload_def *w = ob_workload_find(all->wl_names[ser[j].wl]);
            n++;
            acc += w && w->metric_name && !strcmp(w->metric_name, "accuracy");
        }
        b = n > 0 && acc == n ? HIGHER : NO_DIRECTION;
    }
    return b == LOWER ? " (lower is better)" : b == HIGHER ? " (higher is better)" : "";
}

/* colours and dash types per optimizer configuration are the report's
 * (style.h); point types go by workload label here: filled circle, square,
 * triangles, diamond, pentagon */
static const int history_points[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 12, 14};
#define HISTORY_POINTS 12

/* Too many series for one legend (the nightly config's 68): one panel per
 * workload label, each with its own y axis (log where its values span two
 * decades), and below them one legend of the optimizers (colour and dashes;
 * the panel says the workload). */
#define HISTORY_PANEL_SERIES 16

/* The figure title's line on the busy machine's mark, where it has one. */
static const char *const busy_title = "\n*: that night's timed runs of the series all met a busy machine";

/* s as a gnuplot double-quoted string */
static void gp_quoted(FILE *f, const char *s)
{
    char q[1200];
    ob_gp_str(s, q, sizeof q);
    fprintf(f, "\"%s\"", q);
}

/* What the steps of write_panels share: the series, their colours and dashes, the layout */
typedef struct panels {
    FILE *f;
    const series *ser;
    int ns, nb;
    const ob_dataset *all;
    const ob_colour *colours;
    const int *dashes;
    int col0;         /* history.csv's column of the first series (1-based) */
    int *seen;        /* (all->n_opt) 1: the optimizer configuration is shown; NULL when out of memory */
    int nw, no;       /* the workload labels and optimizer configurations shown */
    int cols, rows, key_cols, key_rows;
    int title_px, panel_px, key_px, height; /* pixels at 1000 wide: title 50, panels 300 each, legend 24 a row */
    int rotate;       /* x tics rotated: many benchmarks */
    double top, ph;   /* the top of the panels and a panel's height, as fractions of the height */
} panels;

/* Counts the workload labels shown (series are sorted by them) and marks the configurations shown. */
static void panels_count(panels *p)
{
    p->nw = 0;
    p->no = 0;
    for (int j = 0; j < p->ns; j++)
        if (!j || p->ser[j].wl != p->ser[j - 1].wl) p->nw++;
    p->seen = calloc((size_t)(p->all->n_opt > 0 ? p->all->n_opt : 1), sizeof *p->seen);
    for (int j = 0; j < p->ns; j++)
        if (p->seen && !p->seen[p->ser[j].opt]) {
            p->seen[p->ser[j].opt] = 1;
            p->no++;
        }
}

/* Lays out the grid of panels, the legend's rows under them and the figure's height. */
static void panels_layout(panels *p)
{
    p->cols = p->nw <= 1 ? 1 : p->nw <= 4 ? 2 : 3;
    p->rows = (p->nw + p->cols - 1) / p->cols;
    p->key_cols = 6;
    p->key_rows = (p->no + p->key_cols - 1) / p->key_cols;
    p->title_px = 50;
    p->panel_px = 300;
    p->key_px = 24 * p->key_rows + 20;
    p->height = p->title_px + p->rows * p->panel_px + p->key_px;
    p->rotate = p->nb > 16;
    p->top = 1.0 - (double)p->title_px / p->height;
    p->ph = (double)p->panel_px / p->height;
}

/* Writes the script's comment, common settings, the loop over terminals and the multiplot's title. */
static void panels_head(const panels *p, const char *mlabel, const char *better)
{
    fprintf(p->f,
            "# history.gp - %s per benchmark: one panel per workload, one line per optimizer.\n"
            "# Reads history.csv (%s, then one column per\n"
            "# series). Run `gnuplot history.gp` in this folder to redraw history.png, .svg and .pdf.\n"
            "# A series is one workload with one set of its parameters and one optimizer\n"
            "# configuration; colours and dashes are the report's (one per optimizer). %d series\n"
            "# are too many for one legend: each workload has a panel of its own, with its own y axis,\n"
            "# and x tics name the benchmark id (history.csv has each one's date and revision).\n"
            "set datafile separator comma\n"
            "set grid xtics ytics lc rgb \"#dddddd\" lt 1 dt 1\n"
            "set border 3\n"
            "set ytics nomirror\n"
            "set offsets 0.3, 0.3, 0, 0\n"
            "do for [T = 1:3] {\n"
            "    if (T == 1) {\n"
            "        if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "            set terminal pngcairo size 1000,%d font \"Sans,11\" noenhanced\n"
            "        } else {\n"
            "            set terminal png size 1000,%d noenhanced\n"
            "        }\n"
            "        set output 'history.png'\n"
            "        PS = 1.0\n"
            "    }\n"
            "    if (T == 2) {\n"
            "        set terminal svg size 1000,%d dynamic font \"Sans,12\" background rgb \"white\" noenhanced\n"
            "        set output 'history.svg'\n"
            "    }\n"
            "    if (T == 3) {\n"
            "        # the same figure as PDF (vector, for papers), where gnuplot has pdfcairo: PDF_WIDTH\n"
            "        # inches wide (gnuplot -e 'PDF_WIDTH = 3.3' history.gp), as high as the panels need\n"
            "        if (strstrt(GPVAL_TERMINALS, \"pdfcairo\") == 0) { break }\n"
            "        PDF_WIDTH = exists(\"PDF_WIDTH\") ? PDF_WIDTH : 6.5\n"
            "        set terminal pdfcairo size PDF_WIDTH, PDF_WIDTH * %g \\\n"
            "            font sprintf(\"Sans,%%g\", PDF_WIDTH < 4.5 ? 6 : 8) fontscale 0.75 linewidth 0.6 noenhanced\n"
            "        set output 'history.pdf'\n"
            "        PS = 0.5\n"
            "    }\n"
            "    set multiplot title ",
            mlabel, p->col0 > 5 ? "benchmark, created_at, git_rev, label, database" : "benchmark_id, created_at, git_rev, label",
            p->ns, p->height, p->height, p->height, (double)p->height / 1000.0);
    char title[512];
    int busy = 0;
    for (int j = 0; j < p->ns && !busy; j++)
        for (int b = 0; b < p->nb; b++) busy |= p->ser[j].busy[b];
    snprintf(title, sizeof title, "%s over %d benchmark%s%s\nx: benchmark id (history.csv: its date and revision)%s",
             mlabel, p->nb, p->nb == 1 ? "" : "s", better, busy ? busy_title : "");
    gp_quoted(p->f, title);
    fprintf(p->f, "\n");
}

/* Marks with '*' above each value of series [j, j2) of a night whose timed
 * runs of that series all met a busy machine (the table's mark), in the
 * series' colour; x0: the x of history.csv's first row (0 where the plot
 * reads the header as the series' title, 1 where it reads it as a row);
 * indent: the script's at that point. Returns how many. */
static int busy_labels(FILE *f, const series *ser, int j, int j2, int nb, int x0, const ob_colour *colours,
                       const char *indent)
{
    int n = 0;
    for (int k = j; k < j2; k++)
        for (int b = 0; b < nb; b++) {
            const double v = ser[k].v[b];
            if (!ser[k].busy[b] || !(v > 0) || !isfinite(v)) continue;
            fprintf(f, "%sset label \"*\" at first %d, first %.9g offset 0,0.8 center front tc rgb \"%s\"\n", indent,
                    x0 + b, v, colours ? colours[ser[k].opt].hex : "#0077bb");
            n++;
        }
    return n;
}

/* Returns the end of the panel's series from j on, with the range of their positive finite values. */
static int panel_series(const panels *p, int j, double *lo, double *hi, int *any)
{
    int j2 = j;
    *lo = NAN;
    *hi = NAN;
    *any = 0;
    while (j2 < p->ns && p->ser[j2].wl == p->ser[j].wl) {
        for (int b = 0; b < p->nb; b++) {
            double v = p->ser[j2].v[b];
            *any |= isfinite(v);
            if (!(v > 0) || !isfinite(v)) continue;
            if (isnan(*lo) || v < *lo) *lo = v;
            if (isnan(*hi) || v > *hi) *hi = v;
        }
        j2++;
    }
    return j2;
}

/* Writes panel w (the series from j on of one workload label; returned: their end), log y over two decades. */
static int write_panel(const panels *p, int w, int j)
{
    FILE *f = p->f;
    double lo, hi;
    int any;
    const int j2 = panel_series(p, j, &lo, &hi, &any);
    const int r = w / p->cols, c = w % p->cols;
    const int logy = !isnan(lo) && hi / lo >= 100;
    fprintf(f,
            "    set origin %.4f, %.4f\n"
            "    set size %.4f, %.4f\n"
            "    set title ",
            (double)c / p->cols, p->top - (r + 1) * p->ph, 1.0 / p->cols, p->ph);
    char ptitle[300];
    snprintf(ptitle, sizeof ptitle, "%s%s", p->all->wl_labels[p->ser[j].wl], logy ? " (log scale)" : "");
    gp_quoted(f, ptitle);
    fprintf(f,
            "\n"
            "    %s\n"
            "    unset key\n"
            "    set xtics nomirror%s\n"
            "%s",
            logy ? "set logscale y" : "unset logscale y", p->rotate ? " rotate by 90 right" : "",
            any ? "    unset label\n    set ytics nomirror\n"
                : "    unset label\n    set label 1 \"no finite value\\n(see the table)\" at graph 0.5, 0.5 center\n"
                  "    unset ytics\n");
    busy_labels(f, p->ser, j, j2, p->nb, 1, p->colours, "    ");
    fprintf(f, "    plot");
    /* every panel over every benchmark, so they line up: the rows 1 to nb
     * (0 is the header) and the offsets */
    fprintf(f, " [0.7:%d.3]", p->nb);
    if (!any) {
        /* no finite value (a target nobody reached, a metric the workload
         * has not): gnuplot would stop at a plot without a point ("x range
         * is invalid"); the frame with its x tics, invisible points, and why */
        fprintf(f, " [0:1] 'history.csv' using 0:($0 > 0 ? 0.5 : NaN):xtic(\"#\" . strcol(1)) with points "
                   "lc rgb \"white\" pt 7 ps 0 notitle\n");
        return j2;
    }
    for (int k = j; k < j2; k++) {
        int o = p->ser[k].opt;
        fprintf(f,
                "%s 'history.csv' using 0:%d%s with linespoints lw 2 lc rgb \"%s\" dt %d pt %d ps PS notitle",
                k > j ? ", \\\n        " : "", p->col0 + k, k > j ? "" : ":xtic(\"#\" . strcol(1))",
                p->colours ? p->colours[o].hex : "#0077bb", p->dashes ? p->dashes[o] : 1,
                history_points[p->ser[k].wl % HISTORY_POINTS]);
    }
    fprintf(f, "\n");
    return j2;
}

/* Writes the legend: a frame of its own under the panels, with nothing drawn in it. */
static void panels_legend(const panels *p)
{
    FILE *f = p->f;
    fprintf(f,
            "    set origin 0, 0\n"
            "    set size 1, %.4f\n"
            "    unset title\n"
            "    unset ylabel\n"
            "    unset label\n"
            "    unset logscale y\n"
            "    unset border\n"
            "    unset tics\n"
            "    unset grid\n"
            "    set xrange [0:1]\n"
            "    set yrange [0:1]\n"
            "    set key center center horizontal Left reverse maxcols %d samplen 4 width 4\n"
            "    plot",
            (double)p->key_px / p->height, p->key_cols);
    int first = 1;
    for (int o = 0; o < p->all->n_opt; o++) {
        if (p->seen && !p->seen[o]) continue;
        fprintf(f, "%s -1 with lines lw 2 lc rgb \"%s\" dt %d title ", first ? "" : ", \\\n        ",
                p->colours ? p->colours[o].hex : "#0077bb", p->dashes ? p->dashes[o] : 1);
        gp_quoted(f, p->all->opt_labels[o]);
        first = 0;
    }
}

/* Closes the multiplot and sets back what the legend unset, for the next terminal. */
static void panels_tail(FILE *f)
{
    fprintf(f,
            "\n"
            "    unset multiplot\n"
            "    set output\n"
            "    set border 3\n"
            "    set tics\n"
            "    set xtics nomirror\n"
            "    set ytics nomirror\n"
            "    set grid xtics ytics lc rgb \"#dddddd\" lt 1 dt 1\n"
            "    set autoscale xy\n"
            "}\n");
}

/* Writes the figure as one panel per workload label shown, with one legend of the optimizers under them. */
static void write_panels(FILE *f, const series *ser, int ns, int nb, int col0, const ob_dataset *all,
                         const ob_colour *colours, const int *dashes, const char *mlabel, const char *better)
{
    panels p = {.f = f, .ser = ser, .ns = ns, .nb = nb, .all = all, .colours = colours, .dashes = dashes,
                .col0 = col0};
    panels_count(&p);
    panels_layout(&p);
    panels_head(&p, mlabel, better);
    for (int j = 0, w = 0; j < ns; w++) j = write_panel(&p, w, j);
    panels_legend(&p);
    panels_tail(f);
    free(p.seen);
}

/* One figure, a line per series (HISTORY_PANEL_SERIES or fewer, or all of one
 * workload's), titled in the legend; its y axis log scale where the values
 * span two decades. */
static void write_figure(FILE *f, const series *ser, int ns, int nb, int col0, const ob_colour *colours,
                         const int *dashes, const char *mlabel, const char *better)
{
    double lo = NAN, hi = NAN;
    for (int j = 0; j < ns; j++)
        for (int b = 0; b < nb; b++) {
            double v = ser[j].v[b];
            if (!(v > 0) || !isfinite(v)) continue;
            if (isnan(lo) || v < lo) lo = v;
            if (isnan(hi) || v > hi) hi = v;
        }
    const int logy = !isnan(lo) && hi / lo >= 100;
    /* tick labels: date and time, then benchmark id and revision; many
     * benchmarks get one rotated line each */
    const int rotate = nb > 12;
    fprintf(f,
            "# history.gp - %s per benchmark, one line per workload x optimizer.\n"
            "# Reads history.csv (%s, then one column per\n"
            "# series). Run `gnuplot history.gp` in this folder to redraw history.png, .svg and .pdf.\n"
            "# A series is one workload with one set of its parameters and one optimizer\n"
            "# configuration; colours are the report's (one per optimizer), point types the workload.\n"
            "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "    set terminal pngcairo size 1000,620 font \"Sans,11\" noenhanced\n"
            "} else {\n"
            "    set terminal png size 1000,620 noenhanced\n"
            "}\n"
            "set output 'history.png'\n"
            "PS = 1.1   # point size\n"
            "set datafile separator comma\n"
            "set title \"%s over %d benchmark%s%s\"\n"
            "set xlabel \"benchmark (UTC date and time, #%s%s)\" offset 0,-1\n"
            "set bmargin %d\n"
            "set ylabel \"%s%s\"\n"
            "%s\n"
            "# the report's look (its style.gp): a grid, the left and bottom borders, tics out there\n"
            "set grid xtics ytics lc rgb \"#dddddd\" lt 1 dt 1\n"
            "set border 3\n"
            "set ytics nomirror\n"
            "set xtics nomirror%s\n"
            "set key below left Left reverse maxrows 4 samplen 4 width 4\n"
            "set offsets 0.3, 0.3, 0, 0\n"
            "%s\n",
            mlabel, col0 > 5 ? "benchmark, created_at, git_rev, label, database" : "benchmark_id, created_at, git_rev, label",
            mlabel, nb, nb == 1 ? "" : "s", better, col0 > 5 ? "database:id" : "id", rotate ? "; revisions in history.csv" : " and git revision", rotate ? 11 : 8,
            mlabel, logy ? " (log scale)" : "", logy ? "set logscale y" : "unset logscale y",
            rotate ? " rotate by 40 right\nset lmargin 16" : "",
            rotate ? "tick(i, d, r) = d[1:16] . \" #\" . i"
                   : "tick(i, d, r) = d[1:16] . \"\\n#\" . i . \" \" . r[1:8]");
    if (busy_labels(f, ser, 0, ns, nb, 0, colours, "")) {
        char title[512];
        snprintf(title, sizeof title, "%s over %d benchmark%s%s%s", mlabel, nb, nb == 1 ? "" : "s", better,
                 busy_title);
        fprintf(f, "set title ");
        gp_quoted(f, title);
        fprintf(f, "\n");
    }
    fprintf(f, "plot");
    for (int j = 0; j < ns; j++) {
        int o = ser[j].opt;
        const char *colour = "#0077bb"; /* sgd's, should the colours be missing */
        if (colours) colour = colours[o].hex;
        fprintf(f,
                "%s 'history.csv' using 0:%d%s with linespoints lw 2 lc rgb \"%s\" dt %d pt %d ps PS "
                "title columnheader(%d)",
                j ? ", \\\n    " : "", col0 + j,
                j ? "" : ":xtic(tick(strcol(1), strcol(2), strcol(3)))",
                colour, dashes ? dashes[o] : 1,
                history_points[ser[j].wl % HISTORY_POINTS], col0 + j);
    }
    fprintf(f,
            "\n"
            "\n# the same figure as SVG\n"
            "set terminal svg size 1000,620 dynamic font \"Sans,12\" background rgb \"white\" noenhanced\n"
            "set output 'history.svg'\n"
            "replot\n"
            "set output\n");
    ob_gp_write_pdf(f, "history", rotate ? "    PS = 0.5\n    set key height 1\n    set bmargin 14\n"
                                          : "    PS = 0.5\n    set key height 1\n    set bmargin 11\n");
}

/* The run of the whole database with r's workload, workload parameters,
 * optimizer and optimizer configuration; -1 when none. */
static int find_like(const ob_dataset *all, const ob_rrun *r)
{
    for (int i = 0; i < all->n; i++) {
        const ob_rrun *a = &all->runs[i];
        if (!strcmp(a->workload, r->workload) && !strcmp(a->wl_key, r->wl_key) &&
            !strcmp(a->optimizer, r->optimizer) && !strcmp(a->opt_key, r->opt_key))
            return i;
    }
    return -1;
}

static int cmp_series(const void *a, const void *b)
{
    const series *x = a, *y = b;
    return x->wl != y->wl ? x->wl - y->wl : x->opt - y->opt;
}

/* created_at to the minute, "2026-12-03 07:20": its first 16 characters,
 * counted as SQLite's substr counts them (a byte of 0xc0 or above with the
 * continuation bytes after it is one), the first 'T' a space. NULL when out
 * of memory. */
static char *minute_date(const char *created_at)
{
    const unsigned char *z = (const unsigned char *)created_at;
    for (int k = 0; k < 16 && *z; k++)
        if (*z++ >= 0xc0)
            while ((*z & 0xc0) == 0x80) z++;
    char *date = strndup(created_at, (size_t)(z - (const unsigned char *)created_at));
    char *t = date ? strchr(date, 'T') : NULL;
    if (t) *t = ' ';
    return date;
}

/* ---- the command line --------------------------------------------------------- */

enum { HISTORY_MAX_TARGETS = 64 };

typedef struct history_args {
    const char **db_paths;             /* (n_db,) each --db, in the order given */
    int n_db;
    const char *db_path;               /* the first, which messages of one database name */
    const char *out;                   /* --out DIR (out_buf); NULL: the table alone */
    char out_buf[OB_OUT_DIR_MAX + 1];  /* DIR without its trailing slashes ("history/": "history") */
    const char *wl_filter, *opt_filter; /* --workload, --optimizer; NULL: all */
    int last;                          /* --last N: the N latest benchmarks; 0: all */
    int metric;                        /* --metric: its index in metrics[] */
    /* --target WORKLOAD=LOSS, in the order given: the workload labels (copied
     * out of argv, cut at the last '='), the losses as given and as numbers */
    int n_targets;
    char target_buf[HISTORY_MAX_TARGETS][256];
    const char *target_wl[HISTORY_MAX_TARGETS], *target_given[HISTORY_MAX_TARGETS];
    double target_val[HISTORY_MAX_TARGETS];
} history_args;

/* The parsers print their messages themselves and return the exit status,
 * as ob_cli_valued_option does: a message quotes an argument, which may be
 * longer than an ob_err holds. */

/* --target's value v, added to a's targets: 0, or the exit status of the
 * message printed. on_metric: --metric is steps_to_metric_target, whose
 * target is a value of the held-out metric (an accuracy), not a loss. */
static int parse_target(history_args *a, const char *v, int on_metric)
{
    const char *what = on_metric ? "VALUE" : "LOSS", *the = on_metric ? "the value" : "the loss",
               *eg = on_metric ? "0.9" : "0.05";
    const char *eq = strrchr(v, '='); /* a label may hold '=': "quadratic cond=100=0.05" */
    if (!eq || eq == v)
        return ob_cli_error(2, "history: --target '%s' is not WORKLOAD=%s (e.g. --target %s=%s)", v, what,
                            !eq && *v && strlen(v) < 64 ? v : on_metric ? "cnn-tiny" : "quadratic", eg);
    const size_t wl_len = (size_t)(eq - v);
    if (wl_len >= sizeof a->target_buf[0])
        return ob_cli_error(2, "history: --target '%s': the workload is %zu bytes long; at most %zu (give the "
                            "workload's name: its target is then that of each of its labels)", v, wl_len,
                            sizeof a->target_buf[0] - 1);
    double x;
    const int bad = ob_parse_double(eq + 1, &x);
    if (bad == -2)
        return ob_cli_error(2, "history: --target '%s': %s '%s' is beyond the range of a double (about 1e-308 to "
                            "1e308 in size); give a finite number (e.g. --target %.*s=%s)", v, the, eq + 1,
                            (int)wl_len, v, eg);
    if (bad)
        return ob_cli_error(2, "history: --target '%s': %s '%s' is not a number (WORKLOAD=%s, e.g. --target %.*s=%s)",
                            v, the, eq + 1, what, (int)wl_len, v, eg);
    if (!isfinite(x))
        return ob_cli_error(2, "history: --target '%s': %s must be a finite number (e.g. --target %.*s=%s)", v, the,
                            (int)wl_len, v, eg);
    for (int k = 0; k < a->n_targets; k++)
        if (strlen(a->target_wl[k]) == wl_len && !strncmp(a->target_wl[k], v, wl_len))
            return ob_cli_error(2, "history: --target for %s is given twice (%s and %s); give it once",
                                a->target_wl[k], a->target_given[k], eq + 1);
    if (a->n_targets >= HISTORY_MAX_TARGETS)
        return ob_cli_error(2, "history: more than %d --target options", HISTORY_MAX_TARGETS);
    const int n = a->n_targets++;
    snprintf(a->target_buf[n], sizeof a->target_buf[n], "%.*s", (int)wl_len, v);
    a->target_wl[n] = a->target_buf[n];
    a->target_given[n] = eq + 1;
    a->target_val[n] = x;
    return 0;
}

/* --metric's value v, as its index in metrics[], into *m: 0, or the exit
 * status of the message printed */
static int parse_metric(const char *v, int *m)
{
    for (int k = 0; k < N_METRICS; k++)
        if (!strcmp(v, metrics[k].name)) {
            *m = k;
            return 0;
        }
    const char *names[N_METRICS];
    for (int k = 0; k < N_METRICS; k++) names[k] = metrics[k].name;
    const char *near = ob_closest_name(v, names, N_METRICS);
    char list[400];
    size_t l = 0;
    list[0] = 0;
    for (int k = 0; k < N_METRICS && l + 40 < sizeof list; k++)
        l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "", names[k]);
    return ob_cli_error(2, "history: unknown metric '%s'%s%s%s; the metrics: %s", v, near ? " (did you mean '" : "",
                        near ? near : "", near ? "'?)" : "", list);
}

/* argv into a: 0; -1 after --help, the usage printed; else the exit status of
 * the message printed. Options are taken in order: one that is wrong before
 * --help is reported instead of the usage. */
static int history_parse(int argc, char **argv, history_args *a)
{
    memset(a, 0, sizeof *a);
    static const char *const opts[] = {"--db", "--out", "--workload", "--optimizer", "--metric", "--target", "--last"};
    /* the metric, wherever --metric is given: it says what a --target
     * before it is (a loss, or a value of the held-out metric) */
    int on_metric = 0, metric_given = 0;
    for (int i = 1; i + 1 < argc; i++)
        for (int k = 0; k < OB_CLI_COUNT(opts); k++)
            if (!strcmp(argv[i], opts[k])) {
                if (!strcmp(argv[i], "--metric")) {
                    metric_given = 1;
                    on_metric = !strcmp(argv[i + 1], "steps_to_metric_target");
                }
                i++;
                break;
            }
    if (!(a->db_paths = malloc((size_t)argc * sizeof *a->db_paths))) /* room for every --db */
        return ob_cli_error(1, "history: out of memory");
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            history_usage(stdout);
            return -1;
        }
        if (ob_cli_valued_option("history", argc, argv, i, opts, OB_CLI_COUNT(opts), OB_CLI_COUNT(opts))) return 2;
        const char *v = argv[++i];
        int rc = 0;
        if (!strcmp(k, "--db")) {
            a->db_paths[a->n_db++] = v;
            if (!a->db_path) a->db_path = v;
        } else if (!strcmp(k, "--out")) {
            if (!*v) /* an unset shell variable, say */
                return ob_cli_error(2, "history: --out is empty: give the folder for its files (e.g. --out "
                                       "history/), or leave --out out for a table alone");
            if (strlen(v) > OB_OUT_DIR_MAX)
                return ob_cli_error(2, "history: the output folder name is %zu bytes long; at most %d (give a "
                                       "shorter --out)", strlen(v), OB_OUT_DIR_MAX);
            snprintf(a->out_buf, sizeof a->out_buf, "%s", v);
            for (size_t n = strlen(a->out_buf); n > 1 && a->out_buf[n - 1] == '/'; n--) a->out_buf[n - 1] = 0;
            a->out = a->out_buf;
        } else if (!strcmp(k, "--workload") || !strcmp(k, "--optimizer")) {
            const int wl = !strcmp(k, "--workload");
            if (!*v)
                return ob_cli_error(2, "history: %s is empty: give %s name or label (e.g. %s %s), or leave %s out "
                                       "for all", k, wl ? "a workload" : "an optimizer", k, wl ? "quadratic" : "adam",
                                    k);
            *(wl ? &a->wl_filter : &a->opt_filter) = v;
        } else if (!strcmp(k, "--target")) {
            rc = parse_target(a, v, on_metric);
        } else if (!strcmp(k, "--last")) {
            double x;
            if (ob_parse_double(v, &x) != 0 || !(x >= 1 && x <= 1e9) || x != (double)(int)x)
                return ob_cli_error(2, "history: --last '%s' is not a whole number of benchmarks from 1 (e.g. --last 30: "
                                       "the 30 latest)", v);
            a->last = (int)x;
        } else if (!strcmp(k, "--metric")) {
            rc = parse_metric(v, &a->metric);
        }
        if (rc) return rc;
    }
    if (!a->db_path)
        return ob_cli_error(2, "history: --db is required (the results database FILE, or one --db per database; see "
                               "optbench history --help)");
    if (a->n_targets && strncmp(metrics[a->metric].name, "steps_to_", 9)) {
        char takes[200];
        size_t l = 0;
        takes[0] = 0;
        for (int k = 0, n = 0; k < N_METRICS; k++)
            if (!strncmp(metrics[k].name, "steps_to_", 9))
                l += (size_t)snprintf(takes + l, sizeof takes - l, "%s%s", n++ ? ", " : "", metrics[k].name);
        return ob_cli_error(2, "history: --target sets the target of the steps_to_ metrics (%s); %s%s%s has "
                               "none (give one of those with --metric, or leave --target out)", takes,
                            metric_given ? "--metric " : "", metrics[a->metric].name,
                            metric_given ? "" : " (the default metric)");
    }
    return 0;
}

/* ---- the series, from the database -------------------------------------------- */

/* The benchmarks of the databases and the series shown, a value of each per
 * benchmark. */
typedef struct history {
    ob_bench_list bl;     /* the benchmarks with runs of every database, oldest first */
    int nb;               /* bl.n */
    int nb_read;          /* the benchmarks with runs read, --last's left out too */
    int *bfile;           /* (nb,) the database of each, its index in --db order */
    int nf;               /* the databases read (--db) */
    unsigned char *empty; /* (nf,) 1: the database holds no benchmark with runs (left out, with a note) */
    char **bname;         /* (nb,) what names each: its id, "2:1" (database 2's benchmark 1) where there
                           * are several databases */
    char **bdate, **brev; /* (nb,) each one's date to the minute and revision, for the table and the CSV */
    ob_dataset all;       /* every run of every database (have_all): its labels name the series */
    int have_all;
    series *ser;          /* (ns,) in the whole database's order once collected */
    int ns;
    /* what --workload and --optimizer took, each on its own, to say which
     * did not match when no run matches both: wl_seen, opt_seen, and the
     * optimizer labels (of all) run on a workload --workload takes */
    int wl_seen, opt_seen;
    unsigned char *opt_on_wl; /* (all.n_opt,) */
    /* the workload and optimizer labels (of all) that the benchmarks shown
     * ran, which --last may make fewer than all's */
    unsigned char *wl_shown, *opt_shown; /* (all.n_wl,), (all.n_opt,) */
} history;

static void history_free(history *h)
{
    if (h->have_all) ob_dataset_free(&h->all);
    for (int j = 0; j < h->ns; j++) {
        free(h->ser[j].label);
        free(h->ser[j].v);
        free(h->ser[j].busy);
    }
    free(h->ser);
    free(h->opt_on_wl);
    free(h->wl_shown);
    free(h->opt_shown);
    for (int b = 0; h->bdate && h->brev && h->bname && b < h->nb; b++) {
        free(h->bdate[b]);
        free(h->brev[b]);
        free(h->bname[b]);
    }
    free(h->bdate);
    free(h->brev);
    free(h->bname);
    free(h->bfile);
    free(h->empty);
    ob_bench_list_free(&h->bl);
}

/* A revision as the table shows it: at most 12 digits, and "-dirty" where
 * the tree had edits (the build records "1a2b3c4d5e6f-dirty": the digits are
 * cut, never the suffix). NULL when out of memory. */
static char *short_rev(const char *git_rev)
{
    const char *gr = git_rev ? git_rev : "";
    const size_t gl = strlen(gr);
    const int dirty = gl >= 6 && !strcmp(gr + gl - 6, "-dirty");
    const size_t digits = dirty ? gl - 6 : gl;
    char rev[40];
    snprintf(rev, sizeof rev, "%.*s%s", (int)(digits < 12 ? digits : 12), gr, dirty ? "-dirty" : "");
    return strdup(rev);
}

/* h's bname, bdate and brev, from its benchmarks */
static ob_status label_benchmarks(history *h, ob_err *e)
{
    h->bname = calloc((size_t)h->nb + 1, sizeof *h->bname);
    h->bdate = calloc((size_t)h->nb + 1, sizeof *h->bdate);
    h->brev = calloc((size_t)h->nb + 1, sizeof *h->brev);
    if (!h->bname || !h->bdate || !h->brev) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int b = 0; b < h->nb; b++) {
        char name[48];
        if (h->nf > 1) snprintf(name, sizeof name, "%d:%lld", h->bfile[b] + 1, (long long)h->bl.b[b].id);
        else snprintf(name, sizeof name, "%lld", (long long)h->bl.b[b].id);
        h->bname[b] = strdup(name);
        h->bdate[b] = minute_date(h->bl.b[b].created_at);
        h->brev[b] = short_rev(h->bl.b[b].git_rev);
        if (!h->bname[b] || !h->bdate[b] || !h->brev[b]) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    return OB_OK;
}

/* The label in d (a benchmark's runs) of the workload that all (every run
 * read) labels target: a benchmark alone may call "quadratic" what all calls
 * "quadratic noise=2". NULL when d has none. */
static const char *own_label(const ob_dataset *d, const ob_dataset *all, const char *target)
{
    for (int w = 0; w < d->n_wl; w++)
        for (int r = 0; r < d->n; r++) {
            if (d->runs[r].wl != w) continue;
            const int like = find_like(all, &d->runs[r]);
            if (like >= 0 && !strcmp(all->wl_labels[all->runs[like].wl], target)) return d->wl_labels[w];
            break; /* the runs of one label share its workload's configuration */
        }
    return NULL;
}

/* The statistics of one benchmark's runs d, with the --target values of the
 * workloads it ran (the training or the held-out targets, as the metric
 * reads them): a target given by a workload's name, or by the label all
 * (every run read, as the table prints it) gives a configuration of it. */
static ob_status bench_stats(sqlite3 *db, const history_args *a, const ob_dataset *all, ob_dataset *d, ob_stats *s,
                             ob_err *e)
{
    ob_stats_opts so;
    ob_stats_opts_default(&so);
    const char *bwl[HISTORY_MAX_TARGETS];
    double bval[HISTORY_MAX_TARGETS];
    int bn = 0;
    for (int k = 0; k < a->n_targets; k++) {
        const char *wl = NULL;
        for (int w = 0; w < d->n_wl && !wl; w++)
            if (!strcmp(d->wl_names[w], a->target_wl[k])) wl = a->target_wl[k];
        if (!wl) wl = own_label(d, all, a->target_wl[k]);
        if (wl) {
            bwl[bn] = wl;
            bval[bn++] = a->target_val[k];
        }
    }
    const metric_def *md = &metrics[a->metric];
    const int on_metric = !strcmp(md->name, "steps_to_metric_target"),
              held_out = on_metric || !strcmp(md->name, "steps_to_heldout_target");
    so.heldout_metric = on_metric;
    if (held_out) {
        so.n_ev_targets = bn;
        so.ev_target_wl = bwl;
        so.ev_target_val = bval;
    } else {
        so.n_targets = bn;
        so.target_wl = bwl;
        so.target_val = bval;
    }
    /* steps to target reads each run's curve once from the database,
     * not every curve of the benchmark at once */
    return md->needs_curves ? ob_stats_compute_db(db, NULL, d, &so, 0, s, e) : ob_stats_compute(d, &so, s, e);
}

/* Does --workload take the group g of a benchmark's runs d, whose workload
 * label in the whole database is gw? It names a label of the whole
 * database, a name, or a label of the benchmark's own. */
static int wl_wanted(const history_args *a, const ob_dataset *all, int gw, const ob_dataset *d, const ob_group *g)
{
    return !a->wl_filter || !strcmp(a->wl_filter, all->wl_labels[gw]) || !strcmp(a->wl_filter, all->wl_names[gw]) ||
           !strcmp(a->wl_filter, d->wl_labels[g->wl]);
}

/* Does --optimizer take it, its optimizer label in the whole database go? */
static int opt_wanted(const history_args *a, const ob_dataset *all, int go, const ob_dataset *d, const ob_group *g)
{
    return !a->opt_filter || !strcmp(a->opt_filter, all->opt_labels[go]) ||
           !strcmp(a->opt_filter, all->opt_names[go]) || !strcmp(a->opt_filter, d->opt_labels[g->opt]);
}

/* The index of the series of workload label gw and optimizer label go,
 * added (no value yet in any benchmark) when h has none; -1 when out of
 * memory. */
static int series_of(history *h, int gw, int go)
{
    for (int j = 0; j < h->ns; j++)
        if (h->ser[j].wl == gw && h->ser[j].opt == go) return j;
    char label[512];
    snprintf(label, sizeof label, "%s %s", h->all.wl_labels[gw], h->all.opt_labels[go]);
    series *ser2 = realloc(h->ser, (size_t)(h->ns + 1) * sizeof *h->ser);
    if (ser2) h->ser = ser2;
    char *lab = strdup(label);
    double *v = malloc((size_t)h->nb * sizeof(double));
    unsigned char *busy = calloc((size_t)h->nb + 1, 1);
    if (!ser2 || !lab || !v || !busy) {
        free(lab);
        free(v);
        free(busy);
        return -1;
    }
    series *s = &h->ser[h->ns];
    s->label = lab;
    s->wl = gw;
    s->opt = go;
    s->v = v;
    s->busy = busy;
    for (int j = 0; j < h->nb; j++) s->v[j] = NAN;
    return h->ns++;
}

/* Benchmark b's value of each series it has, from its statistics s (of its
 * runs d); a series first seen is added. */
static ob_status add_values(const history_args *a, history *h, int b, const ob_dataset *d, const ob_stats *s,
                            ob_err *e)
{
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        /* the group's runs share workload parameters and optimizer configuration */
        int run = -1;
        for (int r = 0; r < d->n && run < 0; r++)
            if (d->runs[r].wl == g->wl && d->runs[r].opt == g->opt) run = r;
        int like = run < 0 ? -1 : find_like(&h->all, &d->runs[run]);
        if (like < 0) continue;
        int gw = h->all.runs[like].wl, go = h->all.runs[like].opt;
        const int wl_ok = wl_wanted(a, &h->all, gw, d, g), opt_ok = opt_wanted(a, &h->all, go, d, g);
        h->wl_seen |= wl_ok;
        h->opt_seen |= opt_ok;
        h->wl_shown[gw] = h->opt_shown[go] = 1;
        if (wl_ok) h->opt_on_wl[go] = 1;
        if (!wl_ok || !opt_ok) continue;
        int j = series_of(h, gw, go);
        if (j < 0) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        h->ser[j].v[b] = metric_value(a->metric, g);
        h->ser[j].busy[b] = metric_is_time(a->metric) && ob_group_busy(g);
    }
    return OB_OK;
}

/* Benchmark b's values: each benchmark is summarized on its own, from its
 * database db (path, for messages). */
static ob_status collect_bench(sqlite3 *db, const char *path, const history_args *a, history *h, int b, ob_err *e)
{
    ob_dataset d;
    if (ob_dataset_load(db, h->bl.b[b].id, &d, e) != OB_OK) return ob_err_prefix(e, "database '%s': ", path);
    ob_stats s;
    if (bench_stats(db, a, &h->all, &d, &s, e) != OB_OK) {
        ob_dataset_free(&d);
        return ob_err_prefix(e, "database '%s': ", path);
    }
    ob_status st = add_values(a, h, b, &d, &s, e);
    ob_stats_free(&s);
    ob_dataset_free(&d);
    return st;
}

/* Is database f (open as store) one read before it: the same file given
 * twice, or a copy of one (a copy keeps the database id)? Then bad input,
 * saying which. ids: (nf, 17) each database's id read so far ("" none). */
static ob_status check_twice(const history_args *a, int f, ob_store *store, char (*ids)[17], ob_err *e)
{
    if (a->n_db == 1) return OB_OK;
    struct stat sf;
    const int have_stat = stat(a->db_paths[f], &sf) == 0;
    /* a database without the id (or its table: written by an older optbench) is told apart by its file alone */
    ob_err ignored;
    if (ob_store_database_id(store, ids[f], sizeof ids[f], &ignored) != OB_OK) ids[f][0] = 0;
    for (int g = 0; g < f; g++) {
        struct stat sg;
        if (have_stat && stat(a->db_paths[g], &sg) == 0 && sf.st_dev == sg.st_dev && sf.st_ino == sg.st_ino)
            return ob_fail(e, OB_ERR_INPUT, "--db '%s' is --db '%s' again (one file given twice); give each "
                           "database once", a->db_paths[f], a->db_paths[g]);
        if (ids[f][0] && !strcmp(ids[f], ids[g]))
            return ob_fail(e, OB_ERR_INPUT, "'%s' and '%s' are copies of one database (database id %s; a copy "
                           "keeps it), and their benchmarks would count twice; give one of them (a baseline "
                           "copied from a night is that night)", a->db_paths[g], a->db_paths[f], ids[f]);
    }
    return OB_OK;
}

/* Database f's benchmarks with runs, added to h's (their database f), and
 * all its runs into *part (each cell's latest: they label the series); 0
 * benchmarks marks it empty, and so does, among several databases, a file
 * that holds nothing yet (a night that died as it created it). */
static ob_status read_database(const history_args *a, int f, history *h, ob_dataset *part, char (*ids)[17],
                               ob_err *e)
{
    const char *path = a->db_paths[f];
    if (a->n_db > 1 && ob_store_empty(path)) {
        h->empty[f] = 1;
        return OB_OK;
    }
    ob_store *store = NULL;
    OB_TRY(ob_store_open(path, OB_STORE_READONLY, &store, e));
    sqlite3 *db = ob_store_db(store);
    ob_bench_list bl = {0};
    ob_status st = check_twice(a, f, store, ids, e);
    if (st == OB_OK && (st = ob_bench_list_load(db, &bl, e)) != OB_OK) ob_err_prefix(e, "database '%s': ", path);
    if (st == OB_OK && bl.n > 0) {
        ob_bench *b2 = realloc(h->bl.b, (size_t)(h->bl.n + bl.n) * sizeof *b2);
        int *f2 = b2 ? realloc(h->bfile, (size_t)(h->bl.n + bl.n) * sizeof *f2) : NULL;
        if (b2) h->bl.b = b2;
        if (f2) h->bfile = f2;
        if (!b2 || !f2) {
            st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        } else {
            /* moved: the list's texts are h's now */
            memcpy(h->bl.b + h->bl.n, bl.b, (size_t)bl.n * sizeof *bl.b);
            for (int k = 0; k < bl.n; k++) h->bfile[h->bl.n + k] = f;
            h->bl.n += bl.n;
            free(bl.b);
            bl.b = NULL;
            bl.n = 0;
        }
    } else if (st == OB_OK) {
        h->empty[f] = 1;
    }
    ob_bench_list_free(&bl);
    if (st == OB_OK && !h->empty[f] && (st = ob_dataset_load(db, 0, part, e)) != OB_OK)
        ob_err_prefix(e, "database '%s': ", path);
    ob_store_close(store);
    return st;
}

/* A benchmark's place in the history: its date, database and id, and its index before sorting */
typedef struct bench_key {
    const char *created_at;
    int file, idx;
    int64_t id;
} bench_key;

/* Oldest first: by date (as stored), then by the databases' order, then by id. */
static int cmp_bench(const void *x, const void *y)
{
    const bench_key *a = x, *b = y;
    const int c = strcmp(a->created_at, b->created_at);
    if (c) return c;
    if (a->file != b->file) return a->file < b->file ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* h's benchmarks of every database in one order, oldest first */
static ob_status sort_benchmarks(history *h, ob_err *e)
{
    const size_t n = (size_t)h->bl.n, m = n > 0 ? n : 1;
    bench_key *key = malloc(m * sizeof *key);
    int *bfile = malloc(m * sizeof *bfile);
    ob_bench *b = malloc(m * sizeof *b);
    if (!key || !bfile || !b) {
        free(key);
        free(bfile);
        free(b);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < n; k++)
        key[k] = (bench_key){h->bl.b[k].created_at, h->bfile[k], (int)k, h->bl.b[k].id};
    qsort(key, n, sizeof *key, cmp_bench);
    for (size_t k = 0; k < n; k++) {
        b[k] = h->bl.b[key[k].idx];
        bfile[k] = key[k].file;
    }
    free(h->bl.b);
    free(h->bfile);
    h->bl.b = b;
    h->bfile = bfile;
    free(key);
    return OB_OK;
}

/* --last N: h's N latest benchmarks kept (n 0: all), the others freed */
static ob_status keep_last(history *h, int n, ob_err *e)
{
    const int drop = h->bl.n - n;
    if (n <= 0 || drop <= 0) return OB_OK;
    /* the dropped ones in a list of their own, which frees their texts */
    ob_bench_list gone = {malloc((size_t)drop * sizeof *gone.b), drop};
    if (!gone.b) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    memcpy(gone.b, h->bl.b, (size_t)drop * sizeof *gone.b);
    ob_bench_list_free(&gone);
    memmove(h->bl.b, h->bl.b + drop, (size_t)n * sizeof *h->bl.b);
    memmove(h->bfile, h->bfile + drop, (size_t)n * sizeof *h->bfile);
    h->bl.n = n;
    return OB_OK;
}

/* The benchmarks of the databases (the --last latest) and the series a asks
 * for, in the order of all their runs (workload label, then optimizer
 * label); none (h->ns 0) when the filters match no run. The series are
 * labelled over every benchmark read, --last's left out too: a label does
 * not change as the window moves on. */
static ob_status collect_series(const history_args *a, history *h, ob_err *e)
{
    h->nf = a->n_db;
    h->empty = calloc((size_t)h->nf, 1);
    ob_dataset *parts = calloc((size_t)h->nf, sizeof *parts);
    char (*ids)[17] = calloc((size_t)h->nf, sizeof *ids);
    ob_status st = h->empty && parts && ids ? OB_OK : ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int f = 0; f < h->nf && st == OB_OK; f++) st = read_database(a, f, h, &parts[f], ids, e);
    free(ids);
    if (st == OB_OK) {
        /* the labels of all the runs: they tell workload parameters and
         * optimizer configurations apart wherever the benchmarks differ in
         * them, as one database holding them all would */
        st = ob_dataset_join(parts, h->nf, &h->all, e);
        h->have_all = st == OB_OK;
    } else if (parts) {
        for (int f = 0; f < h->nf; f++) ob_dataset_free(&parts[f]);
    }
    free(parts);
    OB_TRY(st);
    h->nb_read = h->bl.n;
    if (h->bl.n == 0)
        return h->nf == 1 ? ob_fail(e, OB_ERR_INPUT, "database '%s' holds no benchmark with runs", a->db_path)
                          : ob_fail(e, OB_ERR_INPUT, "none of the %d databases holds a benchmark with runs", h->nf);
    OB_TRY(sort_benchmarks(h, e));
    OB_TRY(keep_last(h, a->last, e));
    h->nb = h->bl.n;
    OB_TRY(label_benchmarks(h, e));
    h->opt_on_wl = calloc((size_t)(h->all.n_opt > 0 ? h->all.n_opt : 1), 1);
    h->opt_shown = calloc((size_t)(h->all.n_opt > 0 ? h->all.n_opt : 1), 1);
    h->wl_shown = calloc((size_t)(h->all.n_wl > 0 ? h->all.n_wl : 1), 1);
    if (!h->opt_on_wl || !h->opt_shown || !h->wl_shown) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    /* a --target naming no workload: bad input (exit 2); out of memory there: exit 1 */
    OB_TRY(ob_stats_check_targets(&h->all, a->n_targets, a->target_wl, a->target_val, "--target", e));
    /* each benchmark from its database, a database opened once for its
     * benchmarks in a row (one database: once) */
    ob_store *store = NULL;
    int open_f = -1;
    for (int b = 0; b < h->nb && st == OB_OK; b++) {
        if (h->bfile[b] != open_f) {
            ob_store_close(store);
            store = NULL;
            open_f = h->bfile[b];
            if ((st = ob_store_open(a->db_paths[open_f], OB_STORE_READONLY, &store, e)) != OB_OK) break;
        }
        st = collect_bench(ob_store_db(store), a->db_paths[open_f], a, h, b, e);
    }
    ob_store_close(store);
    OB_TRY(st);
    if (h->ns > 0) qsort(h->ser, (size_t)h->ns, sizeof *h->ser, cmp_series);
    return OB_OK;
}

/* What there is to ask for when nothing matched: the labels of the whole
 * database, quoted, into buf (n bytes, at least 8), its optimizers'
 * (optimizers 1) or its workloads', those only marks (only NULL: all). A
 * list too long for buf ends in ", ..." (only then). */
static void list_labels(char *buf, size_t n, const ob_dataset *all, int optimizers, const unsigned char *only)
{
    size_t hl = 0;
    int shown = 0;
    buf[0] = 0;
    const int n_have = optimizers ? all->n_opt : all->n_wl;
    for (int i = 0; i < n_have; i++) {
        if (only && !only[i]) continue;
        const char *lab = optimizers ? all->opt_labels[i] : all->wl_labels[i];
        int more = 0; /* another label after this one: keep room for ", ..." */
        for (int k = i + 1; k < n_have && !more; k++) more = !only || only[k];
        if (hl + strlen(lab) + 4 + (more ? 5 : 0) >= n) {
            snprintf(buf + hl, n - hl, "%s...", shown ? ", " : "");
            return;
        }
        hl += (size_t)snprintf(buf + hl, n - hl, "%s'%s'", shown++ ? ", " : "", lab);
    }
}

/* The message when no run matches --workload and --optimizer: which of them
 * matched nothing, and what there is instead; its exit status. */
static int print_no_match(const history_args *a, const history *h)
{
    /* with --last, what the benchmarks shown have (the databases may have more) */
    const int window = h->nb < h->nb_read;
    char wls[1024], opts[1024], has[96];
    list_labels(wls, sizeof wls, &h->all, 0, window ? h->wl_shown : NULL);
    list_labels(opts, sizeof opts, &h->all, 1, window ? h->opt_shown : NULL);
    const int no_wl = a->wl_filter && !h->wl_seen, no_opt = a->opt_filter && !h->opt_seen;
    if (window) snprintf(has, sizeof has, "the %d latest benchmarks (--last) have", h->nb);
    else snprintf(has, sizeof has, "%s", h->nf > 1 ? "the databases have" : "the database has");
    const char *its = window || h->nf > 1 ? "their" : "its";
    if (no_wl && no_opt)
        return ob_cli_error(2, "history: no runs match: %s no workload '%s' (--workload) and no optimizer '%s' "
                            "(--optimizer); %s workloads: %s; %s optimizers: %s", has, a->wl_filter, a->opt_filter,
                            its, wls, its, opts);
    if (no_wl)
        return ob_cli_error(2, "history: no runs match: %s no workload '%s' (--workload; a name or a label); %s "
                            "workloads: %s", has, a->wl_filter, its, wls);
    if (no_opt)
        return ob_cli_error(2, "history: no runs match: %s no optimizer '%s' (--optimizer; a name or a label); %s "
                            "optimizers: %s", has, a->opt_filter, its, opts);
    if (a->wl_filter && a->opt_filter) {
        list_labels(opts, sizeof opts, &h->all, 1, h->opt_on_wl);
        return ob_cli_error(2, "history: no runs match: no run of workload '%s' is of optimizer '%s'%s; the "
                            "optimizers run on '%s': %s", a->wl_filter, a->opt_filter,
                            window ? " in the latest benchmarks (--last)" : "", a->wl_filter, opts);
    }
    if (h->nf > 1) return ob_cli_error(2, "history: no benchmark of the %d databases has a run to show", h->nf);
    return ob_cli_error(2, "history: no benchmark of '%s' has a run to show", a->db_path);
}

/* ---- the table ---------------------------------------------------------------- */

/* The table's heading: the metric, and for steps to a target, which targets. */
static void print_heading(const history_args *a, const history *h, const char *better)
{
    const metric_def *md = &metrics[a->metric];
    char nb[64];
    if (h->nb == 1 && h->nb_read > 1)
        snprintf(nb, sizeof nb, "the latest of %d benchmarks", h->nb_read);
    else if (h->nb < h->nb_read)
        snprintf(nb, sizeof nb, "the %d latest of %d benchmarks", h->nb, h->nb_read);
    else
        snprintf(nb, sizeof nb, "%d benchmark%s", h->nb, h->nb == 1 ? "" : "s");
    if (h->nf == 1) {
        printf("%s over %s in %s%s\n", md->label, nb, a->db_path, better);
    } else {
        printf("%s over %s in %d databases%s\n", md->label, nb, h->nf, better);
        printf("benchmarks named DATABASE:ID, the databases numbered in --db order:");
        for (int f = 0; f < h->nf; f++) printf("%s %d %s", f ? "," : "", f + 1, a->db_paths[f]);
        printf("\n");
        for (int f = 0; f < h->nf; f++)
            if (h->empty[f]) printf("note: database %d, %s, holds no benchmark with runs\n", f + 1, a->db_paths[f]);
    }
    if (strncmp(md->name, "steps_to_", 9)) return;
    if (a->n_targets) {
        printf("targets fixed by --target:");
        for (int k = 0; k < a->n_targets; k++) printf("%s %s=%g", k ? "," : "", a->target_wl[k], a->target_val[k]);
        printf("; any other workload: each night's default target\n");
        return;
    }
    const int on_metric = !strcmp(md->name, "steps_to_metric_target");
    printf("note: each night's target is that night's default (%s, or halfway to it), so a series moves "
           "when another optimizer does; --target WORKLOAD=%s fixes it\n",
           on_metric ? "0.9 x its best lower-median final held-out metric"
           : strcmp(md->name, "steps_to_target") ? "1.1 x its best upper-median final held-out loss"
                                                  : "1.1 x its best upper-median final loss",
           on_metric ? "VALUE" : "LOSS");
}

/* v as a cell of the table: "-" where the benchmark has no value */
static void format_value(char *buf, size_t n, double v)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.5g", v);
}

/* Does any value of h's table carry the busy machine's mark? */
static int any_busy(const history *h)
{
    for (int j = 0; j < h->ns; j++)
        for (int b = 0; b < h->nb; b++)
            if (h->ser[j].busy[b]) return 1;
    return 0;
}

/* Benchmark b's value of series s as the table prints it: a step time of
 * runs that all met a busy machine marked with '*', the others followed
 * by a space where the table has such marks (marks: any_busy), so that the
 * numbers stay aligned */
static void cell_value(char *buf, size_t n, const series *s, int b, int marks)
{
    format_value(buf, n, s->v[b]);
    if (strlen(buf) + 1 < n && marks) strcat(buf, s->busy[b] ? "*" : " ");
}

/* How many characters s has (UTF-8: every byte that does not continue a
 * character starts one); a column is as wide as its characters, not its
 * bytes (a date or label with a non-ASCII character in it). */
static int text_width(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) n += (*p & 0xc0) != 0x80;
    return n;
}

/* s in a column of width characters: padded with spaces on its right
 * (left 1) or on its left */
static void print_cell(const char *s, int width, int left)
{
    const int pad = width > text_width(s) ? width - text_width(s) : 0;
    printf("%*s%s%*s", left ? 0 : pad, "", s, left ? pad : 0, "");
}

static int max_int(int a, int b) { return a > b ? a : b; }

/* A row per series, a column per benchmark, headed by its id, date and
 * revision: a column per series would make lines thousands of characters
 * long (the nightly config's 68 series). The benchmarks' columns are 18
 * wide, or as wide as the widest cell. */
static void print_rows_by_series(const history *h)
{
    const int marks = any_busy(h);
    int lw = 10, cw = 18;
    for (int j = 0; j < h->ns; j++) lw = max_int(lw, text_width(h->ser[j].label));
    for (int b = 0; b < h->nb; b++) {
        char buf[64];
        cw = max_int(cw, max_int(text_width(h->bname[b]), max_int(text_width(h->bdate[b]), text_width(h->brev[b]))));
        for (int j = 0; j < h->ns; j++) {
            cell_value(buf, sizeof buf, &h->ser[j], b, marks);
            cw = max_int(cw, text_width(buf));
        }
    }
    print_cell("bench", lw, 1);
    for (int b = 0; b < h->nb; b++) printf("  %*s", cw, h->bname[b]);
    printf("\n");
    print_cell("date (UTC)", lw, 1);
    for (int b = 0; b < h->nb; b++) {
        printf("  ");
        print_cell(h->bdate[b], cw, 0);
    }
    printf("\n");
    print_cell("revision", lw, 1);
    for (int b = 0; b < h->nb; b++) {
        printf("  ");
        print_cell(h->brev[b], cw, 0);
    }
    printf("\n");
    for (int j = 0; j < h->ns; j++) {
        print_cell(h->ser[j].label, lw, 1);
        for (int b = 0; b < h->nb; b++) {
            char buf[64];
            cell_value(buf, sizeof buf, &h->ser[j], b, marks);
            printf("  %*s", cw, buf);
        }
        printf("\n");
    }
}

/* a column of the table: as wide as its series' label, at least 10 */
static int column_width(const series *s) { return max_int(text_width(s->label), 10); }

/* A row per benchmark, a column per series. The id, date and revision
 * columns are 6, 17 and 13 wide, or as wide as their widest cell (a dirty
 * revision: 18). */
static void print_rows_by_benchmark(const history *h)
{
    const int marks = any_busy(h);
    int iw = 6, dw = 17, rw = 13;
    for (int b = 0; b < h->nb; b++) {
        iw = max_int(iw, text_width(h->bname[b]));
        dw = max_int(dw, text_width(h->bdate[b]));
        rw = max_int(rw, text_width(h->brev[b]));
    }
    print_cell("bench", iw, 1);
    printf(" ");
    print_cell("date (UTC)", dw, 1);
    printf(" ");
    print_cell("revision", rw, 1);
    for (int j = 0; j < h->ns; j++) {
        printf("  ");
        print_cell(h->ser[j].label, column_width(&h->ser[j]), 0);
    }
    printf("\n");
    for (int b = 0; b < h->nb; b++) {
        print_cell(h->bname[b], iw, 1);
        printf(" ");
        print_cell(h->bdate[b], dw, 1);
        printf(" ");
        print_cell(h->brev[b], rw, 1);
        for (int j = 0; j < h->ns; j++) {
            char buf[64];
            cell_value(buf, sizeof buf, &h->ser[j], b, marks);
            printf("  %*s", column_width(&h->ser[j]), buf);
        }
        printf("\n");
    }
}

/* Series k's workload (by_opt 0) or optimizer (by_opt 1): its label index
 * in the whole database, its name and its label. */
static int part_of(const history *h, int k, int by_opt) { return by_opt ? h->ser[k].opt : h->ser[k].wl; }
static const char *part_name(const history *h, int k, int by_opt)
{
    return by_opt ? h->all.opt_names[h->ser[k].opt] : h->all.wl_names[h->ser[k].wl];
}
static const char *part_label(const history *h, int k, int by_opt)
{
    return by_opt ? h->all.opt_labels[h->ser[k].opt] : h->all.wl_labels[h->ser[k].wl];
}

/* What the table's '*' means, where it has one. */
static void print_busy_note(const history *h)
{
    if (any_busy(h))
        printf("note: * marks a benchmark whose timed runs of that series all met a busy machine (other "
               "processes kept %.0f%% or more of the CPUs busy while they ran; runs.other_cpu): its step time is "
               "that machine's as much as the code's (where some of them did not, the step time is theirs)\n",
               100 * OB_BUSY_SHARE);
}

/* Says why a workload or an optimizer has more than one series: a note for
 * each name that several labels share, listing them. */
static void print_split_notes(const history *h)
{
    for (int by_opt = 0; by_opt < 2; by_opt++)
        for (int j = 0; j < h->ns; j++) {
            const char *name = part_name(h, j, by_opt);
            int first = 1, several = 0;
            for (int k = 0; k < h->ns; k++) {
                if (strcmp(part_name(h, k, by_opt), name)) continue;
                if (k < j) first = 0;
                if (part_of(h, k, by_opt) != part_of(h, j, by_opt)) several = 1;
            }
            if (!first || !several) continue;
            printf("note: %s ran with different %s across these benchmarks; each set is its own series (",
                   name, by_opt ? "hyperparameters" : "workload parameters or numbers of steps");
            int any = 0;
            for (int k = 0; k < h->ns; k++) {
                int dup = 0;
                for (int q = 0; q < k; q++) dup |= part_of(h, q, by_opt) == part_of(h, k, by_opt);
                if (strcmp(part_name(h, k, by_opt), name) || dup) continue;
                printf("%s'%s'", any++ ? ", " : "", part_label(h, k, by_opt));
            }
            printf("), so a change between them is a different problem, not a regression\n");
        }
}

/* ---- the files of --out ------------------------------------------------------- */

/* Is one of the files written into DIR (--out) a database read, another
 * database or a folder? Then 2, and msg (n bytes) says which; 1 out of
 * memory; 0 none. Checked before the folder is made: a folder not there
 * yet holds none of them. */
static int out_file_taken(const history_args *a, char *msg, size_t n)
{
    static const char *const written[] = {"history.csv", "history.gp", "history.png", "history.svg", "history.pdf",
                                          "gnuplot.log"};
    const char **what = malloc((size_t)a->n_db * sizeof *what);
    if (!what) return 1;
    for (int f = 0; f < a->n_db; f++) what[f] = a->n_db > 1 ? "a database it reads (--db)" : "the database it reads (--db)";
    int taken = 0;
    for (size_t k = 0; k < sizeof written / sizeof *written && !taken; k++) {
        char path[OB_OUT_DIR_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", a->out, written[k]);
        if (ob_cli_output_check(msg, n, "its file", path, a->db_paths, what, a->n_db)) taken = 2;
    }
    free(what);
    return taken;
}

static ob_status make_out_folder(const char *out, ob_err *e)
{
    OB_TRY(ob_mkdirs(out, e));
    if (access(out, W_OK) != 0)
        return ob_fail(e, OB_ERR_INPUT, "cannot write into '%s': %s (give another --out)", out, strerror(errno));
    return OB_OK;
}

/* history.csv's column (1-based) of the first series: after the
 * benchmark's id, date, revision and tick label, and with several databases
 * the database's file. */
static int history_col0(const history *h) { return h->nf > 1 ? 6 : 5; }

/* The working file of history.csv, csv_part: a row per benchmark (its id,
 * or with several databases its name "2:1" (database 2's benchmark 1), date,
 * revision, tick label, and with several databases the database's file as
 * given), a column per series. Removed when its
 * write fails. */
static ob_status write_csv(const history_args *a, const char *csv_part, const history *h, ob_err *e)
{
    const int several = h->nf > 1, nc = history_col0(h) - 1;
    const char **hdr = malloc((size_t)(h->ns + nc) * sizeof *hdr);
    if (!hdr) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    hdr[0] = several ? "benchmark" : "benchmark_id";
    hdr[1] = "created_at";
    hdr[2] = "git_rev";
    hdr[3] = "label";
    if (several) hdr[4] = "database";
    for (int j = 0; j < h->ns; j++) hdr[nc + j] = h->ser[j].label;
    ob_csv c;
    ob_status st = ob_csv_open(&c, a->out, ".history.csv.part", hdr, h->ns + nc, e);
    free(hdr);
    for (int b = 0; b < h->nb && st == OB_OK; b++) {
        char lab[128];
        snprintf(lab, sizeof lab, "%s #%s %s", h->bdate[b], h->bname[b], h->brev[b]);
        if (several) ob_csv_str(&c, h->bname[b]);
        else ob_csv_int(&c, h->bl.b[b].id);
        ob_csv_str(&c, h->bdate[b]);
        ob_csv_str(&c, h->brev[b]);
        ob_csv_str(&c, lab);
        if (several) ob_csv_str(&c, a->db_paths[h->bfile[b]]);
        for (int j = 0; j < h->ns; j++) ob_csv_num(&c, h->ser[j].v[b]);
        ob_csv_row(&c);
    }
    if (st == OB_OK) st = ob_csv_close(&c, e);
    else ob_csv_close(&c, NULL);
    if (st == OB_OK) return OB_OK;
    unlink(csv_part);
    ob_err cause = *e;
    return ob_fail(e, OB_ERR_IO, "%s (the previous history.csv, if any, is kept)", cause.msg);
}

/* The working file of history.gp, gp_part: the report's colours and dashes
 * per optimizer configuration, point types per workload label; a panel per
 * workload where the series are too many for one legend. On failure gp_part
 * and csv_part are removed. */
static ob_status write_gp(const history_args *a, const history *h, const char *better, const char *gp_part,
                          const char *gpp, const char *csv_part, ob_err *e)
{
    FILE *f = fopen(gp_part, "w");
    if (!f) {
        ob_fail(e, OB_ERR_IO, "cannot write history.gp: opening its working file '%s' failed: %s (the previous "
                "history.csv and history.gp, if any, are kept)", gp_part, strerror(errno));
        unlink(csv_part);
        return OB_ERR_IO;
    }
    /* each optimizer in its colour of every report (when out of memory, one colour) */
    const ob_dataset *all = &h->all;
    ob_colour *colours = malloc((size_t)(all->n_opt > 0 ? all->n_opt : 1) * sizeof *colours);
    int *dashes = malloc((size_t)(all->n_opt > 0 ? all->n_opt : 1) * sizeof *dashes);
    if (colours) ob_series_colours((const char *const *)all->opt_names, all->n_opt, colours);
    if (dashes) ob_series_marks((const char *const *)all->opt_names, all->n_opt, NULL, dashes);
    int n_wl_shown = h->ns > 0;
    for (int j = 1; j < h->ns; j++) n_wl_shown += h->ser[j].wl != h->ser[j - 1].wl;
    const char *mlabel = metrics[a->metric].label;
    if (h->ns > HISTORY_PANEL_SERIES && n_wl_shown > 1)
        write_panels(f, h->ser, h->ns, h->nb, history_col0(h), all, colours, dashes, mlabel, better);
    else
        write_figure(f, h->ser, h->ns, h->nb, history_col0(h), colours, dashes, mlabel, better);
    free(colours);
    free(dashes);
    errno = 0;
    if (ferror(f) | fclose(f)) {
        ob_fail(e, OB_ERR_IO, "writing '%s' failed: %s (the previous history.csv and history.gp, if any, are kept)",
                gpp, errno ? strerror(errno) : "write error");
        unlink(gp_part);
        unlink(csv_part);
        return OB_ERR_IO;
    }
    return OB_OK;
}

/* A few of the command's file names, as a message lists them */
typedef struct file_list {
    const char *v[8];
    int n;
} file_list;

/* l's names into buf (n bytes): "history.png", "history.png and
 * history.svg", "history.gp, history.png and history.svg" */
static const char *join_files(char *buf, size_t n, const file_list *l)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < l->n && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i == 0 ? "" : i == l->n - 1 ? " and " : ", ", l->v[i]);
    return buf;
}

/* The files of an earlier run in DIR that this one does not write: of
 * names, those DIR has are removed and added to removed. written: what
 * this run has written, for the message when one cannot be removed. */
static ob_status remove_stale(const char *out, const char *const *names, int n_names, const char *written,
                              file_list *removed, ob_err *e)
{
    for (int k = 0; k < n_names; k++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", out, names[k]);
        if (unlink(path) == 0)
            removed->v[removed->n++] = names[k];
        else if (errno != ENOENT)
            return ob_fail(e, OB_ERR_IO, "cannot remove '%s', of an earlier run: %s (%s; remove it by hand)", path,
                           strerror(errno), written);
    }
    return OB_OK;
}

/* DIR/history.csv and, where a series has a value to draw, DIR/history.gp
 * (*drawn 1). Both are written under working names and renamed in once
 * both are whole: a failed write (a full disk) leaves the previous ones.
 * The figure files of an earlier run that would not match them go:
 * history.png, .svg and .pdf (drawn again from the new history.gp), and
 * where nothing is drawn history.gp too; stale names those removed. */
static ob_status write_files(const history_args *a, const history *h, const char *better, int *drawn,
                             file_list *stale, ob_err *e)
{
    static const char *const figures[] = {"history.gp", "history.png", "history.svg", "history.pdf"};
    const char *out = a->out;
    char csv_part[1100], csv_path[1100], gp_part[1100], gpp[1024];
    snprintf(csv_part, sizeof csv_part, "%s/.history.csv.part", out);
    snprintf(csv_path, sizeof csv_path, "%s/history.csv", out);
    snprintf(gp_part, sizeof gp_part, "%s/.history.gp.part", out);
    snprintf(gpp, sizeof gpp, "%s/history.gp", out);
    *drawn = 0;
    stale->n = 0;
    OB_TRY(write_csv(a, csv_part, h, e));
    int any_value = 0;
    for (int j = 0; j < h->ns && !any_value; j++)
        for (int b = 0; b < h->nb && !any_value; b++) any_value = isfinite(h->ser[j].v[b]);
    if (!any_value) {
        /* gnuplot has nothing to draw (a metric these workloads do not have) */
        if (rename(csv_part, csv_path) != 0) {
            ob_fail(e, OB_ERR_IO, "cannot rename '%s' to '%s': %s (the previous history.csv, if any, is kept)",
                    csv_part, csv_path, strerror(errno));
            unlink(csv_part);
            return OB_ERR_IO;
        }
        return remove_stale(out, figures, 4, "history.csv is the new one", stale, e);
    }
    OB_TRY(write_gp(a, h, better, gp_part, gpp, csv_part, e));
    if (rename(csv_part, csv_path) != 0) {
        ob_fail(e, OB_ERR_IO, "cannot rename '%s' to '%s': %s (the previous history.csv and history.gp, if any, "
                "are kept)", csv_part, csv_path, strerror(errno));
        unlink(gp_part);
        unlink(csv_part);
        return OB_ERR_IO;
    }
    if (rename(gp_part, gpp) != 0) {
        ob_fail(e, OB_ERR_IO, "cannot rename '%s' to '%s': %s (history.csv is the new one; history.gp, if any, is "
                "the previous)", gp_part, gpp, strerror(errno));
        unlink(gp_part);
        return OB_ERR_IO;
    }
    *drawn = 1;
    return remove_stale(out, figures + 1, 3, "history.csv and history.gp are the new ones", stale, e);
}

/* Draws DIR/history.gp with gnuplot where there is one, and says what was
 * written (the images there now are this run's: write_files removed the
 * earlier ones, stale); nonzero when gnuplot failed. */
static int render_plot(const char *out, const file_list *stale)
{
    char gp[1024], list[200];
    if (!ob_gnuplot_find(gp, sizeof gp)) {
        printf("optbench: gnuplot not found on PATH: wrote %s/history.csv and history.gp; run `gnuplot history.gp` "
               "there to draw it%s%s%s\n", out, stale->n ? "; removed the figure of an earlier run (" : "",
               join_files(list, sizeof list, stale), stale->n ? ")" : "");
        return 0;
    }
    if (ob_gnuplot_run(gp, out, "history.gp") != 0) return 1;
    file_list made = {{"history.csv", "history.gp"}, 2}, gone = {{0}, 0};
    for (int k = 0; k < stale->n; k++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", out, stale->v[k]);
        struct stat sb;
        if (stat(path, &sb) != 0 || sb.st_size == 0) gone.v[gone.n++] = stale->v[k];
    }
    static const char *const images[] = {"history.png", "history.svg", "history.pdf"};
    for (int k = 0; k < 3; k++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", out, images[k]);
        struct stat sb;
        if (stat(path, &sb) == 0 && sb.st_size > 0) made.v[made.n++] = images[k];
    }
    printf("optbench: wrote %s/%s", out, join_files(list, sizeof list, &made));
    /* drawn before, not this time (history.pdf by a gnuplot without pdfcairo) */
    if (gone.n)
        printf("; removed the earlier run's %s, which this gnuplot did not draw again",
               join_files(list, sizeof list, &gone));
    printf("\n");
    return 0;
}

int ob_cmd_history(int argc, char **argv)
{
    static const char *const single[] = {"--metric", "--workload", "--optimizer", "--out", "--last"};
    ob_cli_once("history", argc, argv, single, OB_CLI_COUNT(single));
    history_args a;
    int rc = history_parse(argc, argv, &a);
    if (rc) {
        free(a.db_paths);
        return rc < 0 ? 0 : rc;
    }
    ob_err e;
    ob_err_clear(&e);
    history h;
    memset(&h, 0, sizeof h);
    /* the messages that quote a list or several paths are printed here, not
     * passed in an ob_err, whose 1024 bytes would cut a long one */
    ob_status st = collect_series(&a, &h, &e);
    if (st != OB_OK) {
        rc = ob_cli_error(ob_exit_code(st), "history: %s", e.msg);
        goto done;
    }
    if (h.ns == 0) {
        rc = print_no_match(&a, &h);
        goto done;
    }
    const char *better = direction(a.metric, h.ser, h.ns, h.nb, &h.all);
    /* the folder first: no table printed above an error that writes nothing */
    if (a.out) {
        char msg[OB_OUT_DIR_MAX * 3 + 256];
        const int taken = out_file_taken(&a, msg, sizeof msg);
        if (taken) {
            rc = taken == 1 ? ob_cli_error(1, "history: out of memory")
                            : ob_cli_error(2, "history: --out '%s': %s; nothing was written (or give --out another "
                                              "folder)", a.out, msg);
            goto done;
        }
        if ((st = make_out_folder(a.out, &e)) != OB_OK) {
            rc = ob_cli_error(ob_exit_code(st), "history: %s", e.msg);
            goto done;
        }
    }
    print_heading(&a, &h, better);
    if (h.ns > HISTORY_PANEL_SERIES) print_rows_by_series(&h);
    else print_rows_by_benchmark(&h);
    print_busy_note(&h);
    print_split_notes(&h);
    if (a.out) {
        int drawn;
        file_list stale;
        char list[200];
        if ((st = write_files(&a, &h, better, &drawn, &stale, &e)) != OB_OK)
            rc = ob_cli_error(ob_exit_code(st), "history: %s", e.msg);
        else if (!drawn)
            printf("optbench: wrote %s/history.csv; no plot: no benchmark has a value of %s for these series%s%s%s\n",
                   a.out, metrics[a.metric].name, stale.n ? "; removed the figure of an earlier run (" : "",
                   join_files(list, sizeof list, &stale), stale.n ? ")" : "");
        else if (render_plot(a.out, &stale) != 0)
            rc = ob_cli_error(1, "history: gnuplot failed on %s/history.gp (see %s/gnuplot.log)", a.out, a.out);
    }
done:
    history_free(&h);
    free(a.db_paths);
    return rc;
}
