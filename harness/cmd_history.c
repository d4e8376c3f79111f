/* harness/cmd_history.c - `optbench history`: one metric over the benchmarks
 * of a database (a nightly job appends one benchmark per night), by date and
 * git revision, printed as a table and, with --out, written as history.csv
 * with a gnuplot script (history.gp) rendered to PNG, SVG and PDF for trend charts.
 *
 * Each benchmark is summarized on its own with results/stats (the value of a
 * workload x optimizer series is the statistic at that night's best lr). A
 * series is one workload with one set of workload parameters and one optimizer
 * configuration (hyperparameters), labelled as the report over the whole
 * database labels them ("quadratic noise=2 adam"): a night that ran another
 * problem starts another series instead of looking like a jump. Colours are the
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

#include "core/hparams.h"
#include "harness/commands.h"
#include "plots/figures.h"
#include "plots/report.h"
#include "plots/style.h"
#include "results/dataset.h"
#include "results/export.h"
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

static void history_usage(FILE *f)
{
    fprintf(f, "usage: optbench history --db FILE [--metric NAME] [--workload W] [--optimizer O] [--out DIR]\n"
               "                        [--target WORKLOAD=LOSS ...]\n\n"
               "Prints one metric per benchmark (by date and git revision) for each workload x optimizer;\n"
               "with --out, writes DIR/history.csv and DIR/history.gp and renders history.png/.svg/.pdf.\n"
               "A series is one workload with one set of workload parameters and one optimizer with one\n"
               "set of hyperparameters: a benchmark run with e.g. --set quadratic.noise=2 gets its own\n"
               "series (\"quadratic noise=2 adam\"), never a point in another. --workload takes a\n"
               "workload name (all its series) or a workload label (\"quadratic noise=2\"), --optimizer an\n"
               "optimizer name or label (\"adam beta2=0.95\"). Colours are the report's, one per optimizer.\n"
               "--target WORKLOAD=LOSS (repeatable, as in report) fixes the target of steps_to_target for\n"
               "that workload (of steps_to_heldout_target and steps_to_metric_target: the held-out target,\n"
               "as report's --eval-target); without it each night's target is that night's default (1.1 x\n"
               "its best upper-median final loss, 0.9 x the best lower-median metric, or halfway to it), so\n"
               "a series can move because another optimizer did.\n\n"
               "metrics:\n");
    for (int i = 0; i < N_METRICS; i++) fprintf(f, "  %-24s %s%s\n", metrics[i].name, metrics[i].label, i ? "" : " (default)");
}

/* Has d a workload of that name or label? */
static int dataset_has_workload(const ob_dataset *d, const char *name)
{
    for (int w = 0; w < d->n_wl; w++)
        if (!strcmp(name, d->wl_labels[w]) || !strcmp(name, d->wl_names[w])) return 1;
    return 0;
}

typedef struct series {
    char *label;   /* "workload optimizer", the labels of the whole database */
    int wl, opt;   /* label indices in the whole database's dataset */
    double *v;     /* (n_bench,) */
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

/* s as a gnuplot double-quoted string */
static void gp_quoted(FILE *f, const char *s)
{
    char q[1200];
    ob_gp_str(s, q, sizeof q);
    fprintf(f, "\"%s\"", q);
}

static void write_panels(FILE *f, const series *ser, int ns, int nb, const ob_dataset *all, const ob_colour *colours,
                         const int *dashes, const char *mlabel, const char *better)
{
    /* the workload labels shown, in series order (series are sorted by workload label) */
    int nw = 0, no = 0;
    for (int j = 0; j < ns; j++)
        if (!j || ser[j].wl != ser[j - 1].wl) nw++;
    int *seen = calloc((size_t)(all->n_opt > 0 ? all->n_opt : 1), sizeof *seen);
    for (int j = 0; j < ns; j++)
        if (seen && !seen[ser[j].opt]) {
            seen[ser[j].opt] = 1;
            no++;
        }
    const int cols = nw <= 1 ? 1 : nw <= 4 ? 2 : 3, rows = (nw + cols - 1) / cols;
    const int key_cols = 6, key_rows = (no + key_cols - 1) / key_cols;
    /* pixels at 1000 wide: title 50, panels 300 each, legend 24 a row */
    const int title_px = 50, panel_px = 300, key_px = 24 * key_rows + 20;
    const int height = title_px + rows * panel_px + key_px;
    const int rotate = nb > 16;
    fprintf(f,
            "# history.gp - %s per benchmark: one panel per workload, one line per optimizer.\n"
            "# Reads history.csv (benchmark_id, created_at, git_rev, label, then one column per\n"
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
            mlabel, ns, height, height, height, (double)height / 1000.0);
    char title[512];
    snprintf(title, sizeof title, "%s over %d benchmarks%s\nx: benchmark id (history.csv: its date and revision)",
             mlabel, nb, better);
    gp_quoted(f, title);
    fprintf(f, "\n");
    const double top = 1.0 - (double)title_px / height, ph = (double)panel_px / height;
    int w = -1;
    for (int j = 0; j < ns; j++) {
        if (j && ser[j].wl == ser[j - 1].wl) continue;
        w++;
        /* the panel's series: j .. j2 - 1 */
        int j2 = j;
        double lo = NAN, hi = NAN;
        while (j2 < ns && ser[j2].wl == ser[j].wl) {
            for (int b = 0; b < nb; b++) {
                double v = ser[j2].v[b];
                if (!(v > 0) || !isfinite(v)) continue;
                if (isnan(lo) || v < lo) lo = v;
                if (isnan(hi) || v > hi) hi = v;
            }
            j2++;
        }
        const int r = w / cols, c = w % cols;
        const int logy = !isnan(lo) && hi / lo >= 100;
        fprintf(f,
                "    set origin %.4f, %.4f\n"
                "    set size %.4f, %.4f\n"
                "    set title ",
                (double)c / cols, top - (r + 1) * ph, 1.0 / cols, ph);
        char ptitle[300];
        snprintf(ptitle, sizeof ptitle, "%s%s", all->wl_labels[ser[j].wl], logy ? " (log scale)" : "");
        gp_quoted(f, ptitle);
        fprintf(f,
                "\n"
                "    %s\n"
                "    unset key\n"
                "    set xtics nomirror%s\n"
                "    plot",
                logy ? "set logscale y" : "unset logscale y", rotate ? " rotate by 90 right" : "");
        for (int k = j; k < j2; k++) {
            int o = ser[k].opt;
            fprintf(f,
                    "%s 'history.csv' using 0:%d%s with linespoints lw 2 lc rgb \"%s\" dt %d pt %d ps PS notitle",
                    k > j ? ", \\\n        " : "", 5 + k, k > j ? "" : ":xtic(\"#\" . strcol(1))",
                    colours ? colours[o].hex : "#0077bb", dashes ? dashes[o] : 1,
                    history_points[ser[k].wl % HISTORY_POINTS]);
        }
        fprintf(f, "\n");
    }
    /* the legend: a frame of its own under the panels, with nothing drawn in it */
    fprintf(f,
            "    set origin 0, 0\n"
            "    set size 1, %.4f\n"
            "    unset title\n"
            "    unset ylabel\n"
            "    unset logscale y\n"
            "    unset border\n"
            "    unset tics\n"
            "    unset grid\n"
            "    set xrange [0:1]\n"
            "    set yrange [0:1]\n"
            "    set key center center horizontal Left reverse maxcols %d samplen 4 width 4\n"
            "    plot",
            (double)key_px / height, key_cols);
    int first = 1;
    for (int o = 0; o < all->n_opt; o++) {
        if (seen && !seen[o]) continue;
        fprintf(f, "%s -1 with lines lw 2 lc rgb \"%s\" dt %d title ", first ? "" : ", \\\n        ",
                colours ? colours[o].hex : "#0077bb", dashes ? dashes[o] : 1);
        gp_quoted(f, all->opt_labels[o]);
        first = 0;
    }
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
    free(seen);
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

int ob_cmd_history(int argc, char **argv)
{
    static const char *const single[] = {"--db", "--metric", "--workload", "--optimizer", "--out"};
    ob_cli_once("history", argc, argv, single, OB_CLI_COUNT(single));
    const char *db_path = NULL, *out = NULL, *wl_filter = NULL, *opt_filter = NULL;
    int m = 0;
    /* --target WORKLOAD=LOSS: the workload labels point into argv */
    enum { MAX_TARGETS = 64 };
    char twl_buf[MAX_TARGETS][256];
    const char *twl[MAX_TARGETS], *tgiven[MAX_TARGETS]; /* tgiven: the loss as given */
    double tval[MAX_TARGETS];
    int nt = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            history_usage(stdout);
            return 0;
        }
        static const char *const opts[] = {"--db", "--out", "--workload", "--optimizer", "--metric", "--target"};
        if (ob_cli_valued_option("history", argc, argv, i, opts, OB_CLI_COUNT(opts), OB_CLI_COUNT(opts))) return 2;
        const char *v = argv[++i];
        if (!strcmp(a, "--db")) db_path = v;
        else if (!strcmp(a, "--out")) {
            if (strlen(v) > OB_OUT_DIR_MAX)
                return ob_cli_error(2, "history: the output folder name is %zu bytes long; at most %d (give a "
                                       "shorter --out)", strlen(v), OB_OUT_DIR_MAX);
            out = v;
        }
        else if (!strcmp(a, "--workload")) wl_filter = v;
        else if (!strcmp(a, "--optimizer")) opt_filter = v;
        else if (!strcmp(a, "--target")) {
            const char *eq = strrchr(v, '='); /* a label may hold '=': "quadratic cond=100=0.05" */
            double x;
            if (!eq || eq == v || ob_parse_double(eq + 1, &x) != 0 || (size_t)(eq - v) >= sizeof twl_buf[0])
                return ob_cli_error(2, "history: --target '%s' is not WORKLOAD=LOSS (e.g. --target bert-tiny=4.2)", v);
            if (!isfinite(x))
                return ob_cli_error(2, "history: --target '%s': the loss must be a finite number (e.g. --target "
                                    "%.*s=0.05)", v, (int)(eq - v), v);
            for (int k = 0; k < nt; k++)
                if (strlen(twl[k]) == (size_t)(eq - v) && !strncmp(twl[k], v, (size_t)(eq - v)))
                    return ob_cli_error(2, "history: --target for %s is given twice (%s and %s); give it once",
                                        twl[k], tgiven[k], eq + 1);
            if (nt >= MAX_TARGETS) return ob_cli_error(2, "history: more than %d --target options", MAX_TARGETS);
            snprintf(twl_buf[nt], sizeof twl_buf[nt], "%.*s", (int)(eq - v), v);
            twl[nt] = twl_buf[nt];
            tgiven[nt] = eq + 1;
            tval[nt++] = x;
        } else if (!strcmp(a, "--metric")) {
            m = -1;
            for (int k = 0; k < N_METRICS; k++)
                if (!strcmp(v, metrics[k].name)) m = k;
            if (m < 0) {
                const char *names[N_METRICS];
                for (int k = 0; k < N_METRICS; k++) names[k] = metrics[k].name;
                const char *near = ob_closest_name(v, names, N_METRICS);
                char list[400];
                size_t l = 0;
                list[0] = 0;
                for (int k = 0; k < N_METRICS && l + 40 < sizeof list; k++)
                    l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "", names[k]);
                return ob_cli_error(2, "history: unknown metric '%s'%s%s%s; the metrics: %s", v,
                                    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", list);
            }
        }
    }
    if (!db_path)
        return ob_cli_error(2, "history: --db is required (the results database FILE; see optbench history --help)");
    ob_err e = {0};
    ob_store *store = NULL;
    if (ob_store_open(db_path, OB_STORE_READONLY, &store, &e) != OB_OK)
        return ob_cli_error(ob_exit_code(e.status), "history: %s", e.msg);
    sqlite3 *db = ob_store_db(store);
    int rc = 0;
    ob_bench_list bl = {0};
    int nb = 0;
    char **bdate = NULL, **brev = NULL;
    series *ser = NULL;
    int ns = 0;
    ob_dataset all;
    int have_all = 0;
    if (ob_bench_list_load(db, &bl, &e) != OB_OK) {
        rc = ob_cli_error(ob_exit_code(e.status), "history: database '%s': %s", db_path, e.msg);
        goto done;
    }
    nb = bl.n;
    /* each benchmark's date to the minute and the start of its revision, for the table and the CSV */
    bdate = calloc((size_t)nb + 1, sizeof *bdate);
    brev = calloc((size_t)nb + 1, sizeof *brev);
    if (!bdate || !brev) {
        rc = ob_cli_error(1, "history: out of memory");
        goto done;
    }
    for (int b = 0; b < nb; b++) {
        bdate[b] = minute_date(bl.b[b].created_at);
        /* 12 digits of the revision, and "-dirty" where the tree had edits */
        const char *gr = bl.b[b].git_rev ? bl.b[b].git_rev : "";
        const size_t gl = strlen(gr);
        const int dirty = gl > 18 && !strcmp(gr + gl - 6, "-dirty");
        char rev[40];
        snprintf(rev, sizeof rev, "%.12s%s", gr, dirty ? "-dirty" : "");
        brev[b] = strdup(rev);
        if (!bdate[b] || !brev[b]) {
            rc = ob_cli_error(1, "history: out of memory");
            goto done;
        }
    }
    if (nb == 0) {
        rc = ob_cli_error(2, "history: database '%s' holds no benchmark with runs", db_path);
        goto done;
    }
    /* the labels of the whole database: they tell workload parameters and
     * optimizer configurations apart wherever the benchmarks differ in them */
    if (ob_dataset_load(db, 0, &all, &e) != OB_OK) {
        rc = ob_cli_error(ob_exit_code(e.status), "history: database '%s': %s", db_path, e.msg);
        goto done;
    }
    have_all = 1;
    if (ob_stats_check_targets(&all, nt, twl, tval, "--target", &e) != OB_OK) {
        rc = ob_cli_error(2, "history: %s", e.msg);
        goto done;
    }
    for (int b = 0; b < nb && rc == 0; b++) {
        ob_dataset d;
        ob_stats s;
        if (ob_dataset_load(db, bl.b[b].id, &d, &e) != OB_OK) {
            rc = ob_cli_error(ob_exit_code(e.status), "history: database '%s': %s", db_path, e.msg);
            break;
        }
        ob_stats_opts so;
        ob_stats_opts_default(&so);
        /* the targets of the workloads this benchmark ran */
        const char *bwl[MAX_TARGETS];
        double bval[MAX_TARGETS];
        int bn = 0;
        for (int k = 0; k < nt; k++)
            if (dataset_has_workload(&d, twl[k])) {
                bwl[bn] = twl[k];
                bval[bn++] = tval[k];
            }
        const int on_metric = !strcmp(metrics[m].name, "steps_to_metric_target"),
                  held_out = on_metric || !strcmp(metrics[m].name, "steps_to_heldout_target");
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
        if ((metrics[m].needs_curves ? ob_stats_compute_db(db, NULL, &d, &so, 0, &s, &e)
                                     : ob_stats_compute(&d, &so, &s, &e)) != OB_OK) {
            rc = ob_cli_error(ob_exit_code(e.status), "history: database '%s': %s", db_path, e.msg);
            ob_dataset_free(&d);
            break;
        }
        for (int k = 0; k < s.n_g; k++) {
            const ob_group *g = &s.g[k];
            /* the group's runs share workload parameters and optimizer configuration */
            int run = -1;
            for (int r = 0; r < d.n && run < 0; r++)
                if (d.runs[r].wl == g->wl && d.runs[r].opt == g->opt) run = r;
            int like = run < 0 ? -1 : find_like(&all, &d.runs[run]);
            if (like < 0) continue;
            int gw = all.runs[like].wl, go = all.runs[like].opt;
            const char *wl = all.wl_labels[gw], *op = all.opt_labels[go];
            if ((wl_filter && strcmp(wl_filter, wl) && strcmp(wl_filter, all.wl_names[gw]) &&
                 strcmp(wl_filter, d.wl_labels[g->wl])) ||
                (opt_filter && strcmp(opt_filter, op) && strcmp(opt_filter, all.opt_names[go]) &&
                 strcmp(opt_filter, d.opt_labels[g->opt])))
                continue;
            int idx = -1;
            for (int j = 0; j < ns; j++)
                if (ser[j].wl == gw && ser[j].opt == go) idx = j;
            if (idx < 0) {
                char label[512];
                snprintf(label, sizeof label, "%s %s", wl, op);
                series *ser2 = realloc(ser, (size_t)(ns + 1) * sizeof *ser);
                if (ser2) ser = ser2;
                char *lab = strdup(label);
                double *v = malloc((size_t)nb * sizeof(double));
                if (!ser2 || !lab || !v) {
                    free(lab);
                    free(v);
                    rc = ob_cli_error(1, "history: out of memory");
                    break;
                }
                ser[ns].label = lab;
                ser[ns].wl = gw;
                ser[ns].opt = go;
                ser[ns].v = v;
                for (int j = 0; j < nb; j++) ser[ns].v[j] = NAN;
                idx = ns++;
            }
            ser[idx].v[b] = metric_value(m, g);
        }
        ob_stats_free(&s);
        ob_dataset_free(&d);
    }
    if (rc) goto done;
    if (ns == 0) {
        /* what there is to ask for: the labels of the whole database */
        char have[1024] = "";
        size_t hl = 0;
        int n_have = opt_filter ? all.n_opt : all.n_wl;
        for (int i = 0; i < n_have && hl + 80 < sizeof have; i++)
            hl += (size_t)snprintf(have + hl, sizeof have - hl, "%s'%s'", i ? ", " : "",
                                   opt_filter ? all.opt_labels[i] : all.wl_labels[i]);
        rc = ob_cli_error(2, "history: no runs match%s%s%s%s; the database has %s %s%s", wl_filter ? " workload " : "",
                          wl_filter ? wl_filter : "", opt_filter ? " optimizer " : "", opt_filter ? opt_filter : "",
                          opt_filter ? "the optimizers" : "the workloads", have, hl + 80 >= sizeof have ? ", ..." : "");
        goto done;
    }
    /* series in the whole database's order: workload label, then optimizer label */
    qsort(ser, (size_t)ns, sizeof *ser, cmp_series);
    /* the table: each column as wide as its label */
    const char *better = direction(m, ser, ns, nb, &all);
    /* the folder first: no table printed above an error that writes nothing */
    if (out) {
        /* the files it writes: never the database it reads, another
         * database, or a folder of that name (checked before the folder is
         * made: a folder not there yet holds none of them) */
        static const char *const written[] = {"history.csv", "history.gp", "history.png", "history.svg",
                                              "history.pdf", "gnuplot.log"};
        const char *const inputs[1] = {db_path}, *const what[1] = {"the database it reads (--db)"};
        for (size_t k = 0; k < sizeof written / sizeof *written; k++) {
            char path[OB_OUT_DIR_MAX + 32], msg[OB_OUT_DIR_MAX * 3 + 256];
            snprintf(path, sizeof path, "%s/%s", out, written[k]);
            if (ob_cli_output_check(msg, sizeof msg, "its file", path, inputs, what, 1)) {
                rc = ob_cli_error(2, "history: --out '%s': %s; nothing was written (or give --out another folder)",
                                  out, msg);
                goto done;
            }
        }
        if (ob_mkdirs(out, &e) != OB_OK) {
            rc = ob_cli_error(ob_exit_code(e.status), "history: %s", e.msg);
            goto done;
        }
        if (access(out, W_OK) != 0) {
            rc = ob_cli_error(2, "history: cannot write into '%s': %s (give another --out)", out, strerror(errno));
            goto done;
        }
    }
    printf("%s over %d benchmarks in %s%s\n", metrics[m].label, nb, db_path, better);
    if (!strncmp(metrics[m].name, "steps_to_", 9)) {
        if (nt) {
            printf("targets fixed by --target:");
            for (int k = 0; k < nt; k++) printf("%s %s=%g", k ? "," : "", twl[k], tval[k]);
            printf("; any other workload: each night's default target\n");
        } else {
            const int on_metric = !strcmp(metrics[m].name, "steps_to_metric_target");
            printf("note: each night's target is that night's default (%s, or halfway to it), so a series moves "
                   "when another optimizer does; --target WORKLOAD=%s fixes it\n",
                   on_metric ? "0.9 x its best lower-median final held-out metric"
                   : strcmp(metrics[m].name, "steps_to_target") ? "1.1 x its best upper-median final held-out loss"
                                                                : "1.1 x its best upper-median final loss",
                   on_metric ? "VALUE" : "LOSS");
        }
    }
    if (ns > HISTORY_PANEL_SERIES) {
        /* a column per series would make lines thousands of characters long
         * (the nightly config's 68 series): a row per series instead, a
         * column per benchmark, headed by its id, date and revision */
        int lw = 10;
        for (int j = 0; j < ns; j++)
            if ((int)strlen(ser[j].label) > lw) lw = (int)strlen(ser[j].label);
        printf("%-*s", lw, "bench");
        for (int b = 0; b < nb; b++) printf("  %18lld", (long long)bl.b[b].id);
        printf("\n%-*s", lw, "date (UTC)");
        for (int b = 0; b < nb; b++) printf("  %18s", bdate[b]);
        printf("\n%-*s", lw, "revision");
        for (int b = 0; b < nb; b++) printf("  %18s", brev[b]);
        printf("\n");
        for (int j = 0; j < ns; j++) {
            printf("%-*s", lw, ser[j].label);
            for (int b = 0; b < nb; b++) {
                char buf[64];
                if (isnan(ser[j].v[b])) snprintf(buf, sizeof buf, "-");
                else snprintf(buf, sizeof buf, "%.5g", ser[j].v[b]);
                printf("  %18s", buf);
            }
            printf("\n");
        }
    } else {
        printf("%-6s %-17s %-13s", "bench", "date (UTC)", "revision");
        for (int j = 0; j < ns; j++) printf("  %*s", (int)strlen(ser[j].label) > 10 ? (int)strlen(ser[j].label) : 10,
                                            ser[j].label);
        printf("\n");
        for (int b = 0; b < nb; b++) {
            printf("%-6lld %-17s %-13s", (long long)bl.b[b].id, bdate[b], brev[b]);
            for (int j = 0; j < ns; j++) {
                char buf[64];
                if (isnan(ser[j].v[b])) snprintf(buf, sizeof buf, "-");
                else snprintf(buf, sizeof buf, "%.5g", ser[j].v[b]);
                printf("  %*s", (int)strlen(ser[j].label) > 10 ? (int)strlen(ser[j].label) : 10, buf);
            }
            printf("\n");
        }
    }
    /* say why a workload or an optimizer has more than one series */
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < ns; j++) {
            const char *name = pass ? all.opt_names[ser[j].opt] : all.wl_names[ser[j].wl];
            int first = 1, several = 0;
            for (int k = 0; k < ns; k++) {
                const char *nk = pass ? all.opt_names[ser[k].opt] : all.wl_names[ser[k].wl];
                int same_label = pass ? ser[k].opt == ser[j].opt : ser[k].wl == ser[j].wl;
                if (strcmp(nk, name)) continue;
                if (k < j) first = 0;
                if (!same_label) several = 1;
            }
            if (!first || !several) continue;
            printf("note: %s ran with different %s across these benchmarks; each set is its own series (",
                   name, pass ? "hyperparameters" : "workload parameters or numbers of steps");
            int any = 0;
            for (int k = 0; k < ns; k++) {
                const char *nk = pass ? all.opt_names[ser[k].opt] : all.wl_names[ser[k].wl];
                const char *lk = pass ? all.opt_labels[ser[k].opt] : all.wl_labels[ser[k].wl];
                int dup = 0;
                for (int q2 = 0; q2 < k; q2++)
                    dup |= pass ? ser[q2].opt == ser[k].opt : ser[q2].wl == ser[k].wl;
                if (strcmp(nk, name) || dup) continue;
                printf("%s'%s'", any++ ? ", " : "", lk);
            }
            printf("), so a change between them is a different problem, not a regression\n");
        }
    if (out) {
        const char **hdr = malloc((size_t)(ns + 4) * sizeof *hdr);
        if (!hdr) {
            rc = ob_cli_error(1, "history: out of memory");
            goto done;
        }
        hdr[0] = "benchmark_id";
        hdr[1] = "created_at";
        hdr[2] = "git_rev";
        hdr[3] = "label";
        for (int j = 0; j < ns; j++) hdr[4 + j] = ser[j].label;
        /* history.csv and history.gp are written under working names and
         * renamed in once both are whole: a failed write (a full disk) leaves
         * the previous ones */
        char csv_part[1100], csv_path[1100];
        snprintf(csv_part, sizeof csv_part, "%s/.history.csv.part", out);
        snprintf(csv_path, sizeof csv_path, "%s/history.csv", out);
        ob_csv c;
        ob_status st = ob_csv_open(&c, out, ".history.csv.part", hdr, ns + 4, &e);
        free(hdr);
        for (int b = 0; b < nb && st == OB_OK; b++) {
            char lab[128];
            snprintf(lab, sizeof lab, "%s #%lld %s", bdate[b], (long long)bl.b[b].id, brev[b]);
            ob_csv_int(&c, bl.b[b].id);
            ob_csv_str(&c, bdate[b]);
            ob_csv_str(&c, brev[b]);
            ob_csv_str(&c, lab);
            for (int j = 0; j < ns; j++) ob_csv_num(&c, ser[j].v[b]);
            ob_csv_row(&c);
        }
        if (st == OB_OK) st = ob_csv_close(&c, &e);
        else ob_csv_close(&c, NULL);
        if (st != OB_OK) {
            unlink(csv_part);
            rc = ob_cli_error(1, "history: %s (the previous history.csv, if any, is kept)", e.msg);
            goto done;
        }
        /* log scale when the series span two decades */
        double lo = NAN, hi = NAN;
        for (int j = 0; j < ns; j++)
            for (int b = 0; b < nb; b++) {
                double v = ser[j].v[b];
                if (!(v > 0) || !isfinite(v)) continue;
                if (isnan(lo) || v < lo) lo = v;
                if (isnan(hi) || v > hi) hi = v;
            }
        int any_value = 0;
        for (int j = 0; j < ns && !any_value; j++)
            for (int b = 0; b < nb && !any_value; b++) any_value = isfinite(ser[j].v[b]);
        if (!any_value) {
            /* gnuplot has nothing to draw (a metric these workloads do not have) */
            if (rename(csv_part, csv_path) != 0) {
                rc = ob_cli_error(1, "history: cannot name '%s': %s", csv_path, strerror(errno));
                unlink(csv_part);
                goto done;
            }
            printf("optbench: wrote %s/history.csv; no plot: no benchmark has a value of %s for these series\n",
                   out, metrics[m].name);
            goto done;
        }
        char gpp[1024], gp_part[1100];
        snprintf(gpp, sizeof gpp, "%s/history.gp", out);
        snprintf(gp_part, sizeof gp_part, "%s/.history.gp.part", out);
        FILE *f = fopen(gp_part, "w");
        if (!f) {
            rc = ob_cli_error(1, "history: cannot write '%s': %s", gp_part, strerror(errno));
            unlink(csv_part);
            goto done;
        }
        /* each optimizer in its colour of every report (when out of memory, one colour) */
        ob_colour *colours = malloc((size_t)(all.n_opt > 0 ? all.n_opt : 1) * sizeof *colours);
        int *dashes = malloc((size_t)(all.n_opt > 0 ? all.n_opt : 1) * sizeof *dashes);
        if (colours) ob_series_colours((const char *const *)all.opt_names, all.n_opt, colours);
        if (dashes) ob_series_marks((const char *const *)all.opt_names, all.n_opt, NULL, dashes);
        int n_wl_shown = ns > 0;
        for (int j = 1; j < ns; j++) n_wl_shown += ser[j].wl != ser[j - 1].wl;
        if (ns > HISTORY_PANEL_SERIES && n_wl_shown > 1) {
            write_panels(f, ser, ns, nb, &all, colours, dashes, metrics[m].label, better);
            free(colours);
            free(dashes);
            goto written;
        }
        /* tick labels: date and time, then benchmark id and revision; many
         * benchmarks get one rotated line each */
        const int rotate = nb > 12;
        fprintf(f,
                "# history.gp - %s per benchmark, one line per workload x optimizer.\n"
                "# Reads history.csv (benchmark_id, created_at, git_rev, label, then one column per\n"
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
                "set title \"%s over %d benchmarks%s\"\n"
                "set xlabel \"benchmark (UTC date and time, #id%s)\" offset 0,-1\n"
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
                "%s\n"
                "plot",
                metrics[m].label, metrics[m].label, nb, better,
                rotate ? "; revisions in history.csv" : " and git revision", rotate ? 11 : 8, metrics[m].label, !isnan(lo) && hi / lo >= 100 ? " (log scale)" : "",
                !isnan(lo) && hi / lo >= 100 ? "set logscale y" : "unset logscale y",
                rotate ? " rotate by 40 right\nset lmargin 16" : "",
                rotate ? "tick(i, d, r) = d[1:16] . \" #\" . i"
                       : "tick(i, d, r) = d[1:16] . \"\\n#\" . i . \" \" . r[1:8]");
        for (int j = 0; j < ns; j++) {
            int o = ser[j].opt;
            const char *colour = "#0077bb"; /* sgd's, should the colours be missing */
            if (colours) colour = colours[o].hex;
            fprintf(f,
                    "%s 'history.csv' using 0:%d%s with linespoints lw 2 lc rgb \"%s\" dt %d pt %d ps PS "
                    "title columnheader(%d)",
                    j ? ", \\\n    " : "", 5 + j,
                    j ? "" : ":xtic(tick(strcol(1), strcol(2), strcol(3)))",
                    colour, dashes ? dashes[o] : 1,
                    history_points[ser[j].wl % HISTORY_POINTS], 5 + j);
        }
        free(colours);
        free(dashes);
        fprintf(f,
                "\n"
                "\n# the same figure as SVG\n"
                "set terminal svg size 1000,620 dynamic font \"Sans,12\" background rgb \"white\" noenhanced\n"
                "set output 'history.svg'\n"
                "replot\n"
                "set output\n");
        ob_gp_write_pdf(f, "history", rotate ? "    PS = 0.5\n    set key height 1\n    set bmargin 14\n"
                                              : "    PS = 0.5\n    set key height 1\n    set bmargin 11\n");
    written:
        errno = 0;
        if (ferror(f) | fclose(f)) {
            rc = ob_cli_error(1, "history: writing '%s' failed: %s (the previous history.csv and history.gp, if "
                                 "any, are kept)", gpp, errno ? strerror(errno) : "write error");
            unlink(gp_part);
            unlink(csv_part);
            goto done;
        }
        if (rename(csv_part, csv_path) != 0) {
            rc = ob_cli_error(1, "history: cannot name '%s': %s (the previous history.csv and history.gp, if any, "
                                 "are kept)", csv_path, strerror(errno));
            unlink(gp_part);
            unlink(csv_part);
            goto done;
        }
        if (rename(gp_part, gpp) != 0) {
            rc = ob_cli_error(1, "history: cannot name '%s': %s (history.csv is the new one, history.gp, if any, "
                                 "the previous)", gpp, strerror(errno));
            unlink(gp_part);
            goto done;
        }
        char gp[1024];
        if (!ob_gnuplot_find(gp, sizeof gp)) {
            printf("optbench: gnuplot not found on PATH: wrote %s/history.csv and history.gp; run "
                   "`gnuplot history.gp` there to draw it\n", out);
        } else if (ob_gnuplot_run(gp, out, "history.gp") != 0) {
            rc = ob_cli_error(1, "history: gnuplot failed on %s/history.gp (see %s/gnuplot.log)", out, out);
        } else {
            char pdf[1100];
            snprintf(pdf, sizeof pdf, "%s/history.pdf", out);
            struct stat sb;
            int has_pdf = stat(pdf, &sb) == 0 && sb.st_size > 0;
            printf("optbench: wrote %s/history.csv, history.gp, history.png%s history.svg%s\n", out,
                   has_pdf ? "," : " and", has_pdf ? " and history.pdf" : "");
        }
    }
done:
    if (have_all) ob_dataset_free(&all);
    for (int j = 0; j < ns; j++) {
        free(ser[j].label);
        free(ser[j].v);
    }
    free(ser);
    for (int b = 0; bdate && brev && b < nb; b++) {
        free(bdate[b]);
        free(brev[b]);
    }
    free(bdate);
    free(brev);
    ob_bench_list_free(&bl);
    ob_store_close(store);
    return rc;
}
