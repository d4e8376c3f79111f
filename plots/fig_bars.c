/* plots/fig_bars.c - the dot plots over all workloads (from bars_*.csv): step
 * time, peak memory, optimizer state and time to target. */
#include "plots/fig_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The slots of the dot plots' groups: one per label (configuration), or,
 * with more than FIG_MAX_CONFIGS labels of which some optimizer has several
 * (a sweep or a search), one per optimizer, its point on each workload from
 * one of its configurations there, picked by pick_config. */
typedef struct bar_slots {
    int n;             /* slots in each workload's group */
    int reduced;       /* 1: one slot per optimizer */
    int *lab;          /* (n_wl x n) the label at slot j of workload w; -1: none ran there */
    int *lt;           /* (n) the slot's line type (colour, marker): its first label's, label + 1 */
    const char **name; /* (n) the legend's entry */
} bar_slots;

static void bar_slots_free(bar_slots *b)
{
    free(b->lab);
    free(b->lt);
    free(b->name);
}

/* The group of optimizer i (ob_stats' tuned index) that the dot plot of
 * kind draws on workload w, -1 where it has none: for the time to target
 * (kind 3) the configuration that got there soonest (the tuned profile's
 * pick when that is on training time; ties: the first label), else one that
 * got there untimed, else one whose runs did not all diverge, else any; for
 * the others, the best configuration (the lowest median final loss at its
 * best lr: the report's table, best_configuration.csv). */
static int pick_config(const ob_dataset *d, const ob_stats *s, int w, int i, int kind, const ob_best_config *rows,
                       int n_rows)
{
    const char *name = d->opt_names[s->tuned_first[i]];
    int best = -1;
    for (int r = 0; r < n_rows && best < 0; r++)
        if (!strcmp(d->opt_names[s->g[rows[r].best].opt], name)) best = rows[r].best;
    if (kind != 3 || best < 0) return best;
    int pick = -1, tier = 5;
    for (int o = 0; o < d->n_opt; o++) {
        if (strcmp(d->opt_names[o], name)) continue;
        const ob_group *g = ob_stats_group(s, w, o);
        if (!g) continue;
        const int all_div = g->n_finished > 0 && g->n_diverged == g->n_finished;
        const int t = !g->tt_censored && isfinite(g->tt_time_s) ? 1 : !g->tt_censored ? 2 : !all_div ? 3 : 4;
        const int k = (int)(g - s->g);
        if (t < tier || (t == 1 && tier == 1 && g->tt_time_s < s->g[pick].tt_time_s)) tier = t, pick = k;
    }
    return pick >= 0 ? pick : best;
}

static ob_status bar_slots_make(const ob_dataset *d, const ob_stats *s, int kind, bar_slots *b, ob_err *e)
{
    memset(b, 0, sizeof *b);
    b->reduced = d->n_opt > FIG_MAX_CONFIGS && s->n_tuned > 0;
    b->n = b->reduced ? s->n_tuned : d->n_opt;
    b->lab = malloc(((size_t)d->n_wl * b->n + 1) * sizeof *b->lab);
    b->lt = malloc(((size_t)b->n + 1) * sizeof *b->lt);
    b->name = malloc(((size_t)b->n + 1) * sizeof *b->name);
    ob_best_config *rows = b->reduced ? malloc(((size_t)s->n_g + 1) * sizeof *rows) : NULL;
    if (!b->lab || !b->lt || !b->name || (b->reduced && !rows)) {
        free(rows);
        bar_slots_free(b);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    for (int j = 0; j < b->n; j++) {
        const int o = b->reduced ? s->tuned_first[j] : j;
        b->lt[j] = b->reduced ? ob_fig_own_lt(d, o) : o + 1;
        b->name[j] = b->reduced ? d->opt_names[o] : d->opt_labels[o];
    }
    for (int w = 0; w < d->n_wl; w++) {
        int swept = 0;
        const int n_rows = b->reduced ? ob_stats_best_configs(d, s, w, rows, s->n_g, &swept) : 0;
        for (int j = 0; j < b->n; j++) {
            int lab = j;
            if (b->reduced) {
                const int k = pick_config(d, s, w, j, kind, rows, n_rows);
                lab = k >= 0 ? s->g[k].opt : -1;
            } else if (!ob_stats_group(s, w, j)) {
                lab = -1;
            }
            b->lab[w * b->n + j] = lab;
        }
    }
    free(rows);
    return OB_OK;
}

/* x position of optimizer o's point in the group of workload w, and the
 * width of one slot: each workload is a group of n_opt slots plus one slot of
 * gap, centred on x = w (the row index of the bars_*.csv tables). */
static double bar_slot(int n_opt) { return 1.0 / (n_opt + 1); }
static double bar_x(int w, int o, int n_opt) { return w + (o - (n_opt - 1) / 2.0) * bar_slot(n_opt); }

/* The dot plots' stems, tables and titles, by kind (ob_fig_bars): 0 step
 * time, 1 peak memory, 2 optimizer state, 3 time to target. */
static const char *const bar_stems[] = {"step_time", "memory_peak", "memory_state", "time_to_target"};
static const char *const bar_files[] = {"bars_step_ms.csv", "bars_peak_mem.csv", "bars_state_bytes.csv",
                                        "bars_time_to_target.csv"};
static const char *const bar_titles[] = {"Step time", "Peak memory", "Optimizer state", "Time to target"};

/* One dot plot as ob_fig_bars lays it out: its slots, what each shows, how
 * many of each there are, and the y axis. what[w * b.n + j], what slot j of
 * workload w shows: 0 nothing, 1 a point, 2 a zero value (a "0 B" mark), 3
 * not reached, 4 reached but untimed, 5 a pair left out of the matrix (a
 * "not run" mark), 6 runs without the value (a "no data" mark: every run
 * diverged before the warm-up ended, say), 7 a workload whose target the
 * loss met before training (time to target not ranked), 8 not reached
 * because every run diverged, at every lr (ob_group_no_best's "every run
 * diverged"), which "not reached" would tell as merely slow, 9 runs without
 * the value that all diverged (before the first timed step, say: "every run
 * diverged" rather than "no data"). */
typedef struct bar_fig {
    int kind;
    bar_slots b;
    int *what;
    range r; /* the values drawn, time intervals' ends included */
    int n_bars, n_zero, n_unreached, n_untimed, n_groups, n_notrun, n_atstart;
    int n_alldiv, n_ranges, n_open;
    double scale;     /* the axis's unit in the table's */
    const char *unit; /* its name ("" for milliseconds of step time) */
    int logy;
    int time_tics; /* a log axis of times whose tics name their own units */
    double ytop;   /* the top of the y range */
    char yrange[128];
} bar_fig;

/* Slot m of the time to target for group g on workload w (bf->what's
 * codes), counted, its time and interval added to bf->r. */
static void bars_what_tt(const ob_stats *s, int w, const ob_group *g, bar_fig *bf, int *m)
{
    if (s->target_at_start[w]) *m = 7, bf->n_atstart++;
    else if (g->tt_censored && g->n_finished > 0 && g->n_diverged == g->n_finished) *m = 8, bf->n_alldiv++;
    else if (g->tt_censored) *m = 3, bf->n_unreached++;
    else if (!isfinite(g->tt_time_s)) *m = 4, bf->n_untimed++;
    else *m = 1, bf->n_bars++;
    if (*m == 1) ob_fig_range_add(&bf->r, g->tt_time_s);
    double lo, hi;
    if (*m == 1 && ob_group_tt_interval(g, 0, &lo, &hi) && lo < hi) { /* its interval, drawn as a bar */
        ob_fig_range_add(&bf->r, lo);
        if (isfinite(hi)) ob_fig_range_add(&bf->r, hi);
        else bf->n_open++; /* a seed never got there: the bar runs to the top */
        bf->n_ranges++;
    }
}

/* Slot m of step time, peak memory or optimizer state for group g (bf->what's
 * codes), counted, its value added to bf->r. */
static void bars_what_value(const ob_group *g, bar_fig *bf, int *m)
{
    const int kind = bf->kind;
    double v = kind == 0 ? g->step_ms_median
             : kind == 1 ? (g->peak_mem_bytes >= 0 ? (double)g->peak_mem_bytes : NAN)
                         : (g->state_bytes >= 0 ? (double)g->state_bytes : NAN);
    if (!isfinite(v) || v < 0) {
        /* where every run diverged (within the untimed first steps, say), the mark says so */
        *m = g->n_finished > 0 && g->n_diverged == g->n_finished ? 9 : 6;
        bf->n_alldiv += *m == 9;
        return;
    }
    if (v == 0) *m = 2, bf->n_zero++;
    else *m = 1, bf->n_bars++;
    ob_fig_range_add(&bf->r, v);
}

/* bf->what for every slot of every workload, with its counts and range. */
static void bars_classify(const ob_dataset *d, const ob_stats *s, bar_fig *bf)
{
    const int n_col = bf->b.n;
    for (int w = 0; w < d->n_wl; w++)
        for (int j = 0; j < n_col; j++) {
            const int o = bf->b.lab[w * n_col + j];
            const ob_group *g = o >= 0 ? ob_stats_group(s, w, o) : NULL;
            int *m = &bf->what[w * n_col + j];
            if (!g) {
                *m = 5, bf->n_notrun++;
                continue;
            }
            bf->n_groups++;
            if (bf->kind == 3) bars_what_tt(s, w, g, bf, m);
            else bars_what_value(g, bf, m);
        }
}

/* The dot plot with nothing to draw: its note in the report, why (none
 * where no optimizer ran on any workload). */
static ob_status bars_not_drawn(const bar_fig *bf, ob_figures *out, ob_err *e)
{
    static const char *const why[] = {
        "Not drawn: no run recorded a step time.",
        "Not drawn: no run recorded its peak memory.",
        "Not drawn: no run recorded its optimizer state size.",
        ("Not drawn: no optimizer reached the target loss on any workload (see the time-to-target "
         "tables), so there is no time to show.")};
    const int kind = bf->kind;
    if (kind == 3 && bf->n_atstart == bf->n_groups)
        return ob_fig_add_skipped(out, e, bar_stems[kind], -1, bar_titles[kind],
                           "Not drawn: on every workload the loss met the target before training (see the "
                           "time-to-target paragraphs), so no time to target ranks anything.");
    return bf->n_groups > 0 ? ob_fig_add_skipped(out, e, bar_stems[kind], -1, bar_titles[kind], why[kind]) : OB_OK;
}

/* The y axis's unit for the largest value (bf->scale, bf->unit). */
static void bars_unit(bar_fig *bf)
{
    const int kind = bf->kind;
    const range *r = &bf->r;
    bf->scale = 1;
    bf->unit = "";
    if (kind == 1 || kind == 2) {
        double hi = isnan(r->hi) ? 0 : r->hi;
        if (hi >= 1024.0 * 1024 * 1024) bf->scale = 1024.0 * 1024 * 1024, bf->unit = "GiB";
        else if (hi >= 1024.0 * 1024) bf->scale = 1024.0 * 1024, bf->unit = "MiB";
        else if (hi >= 1024.0) bf->scale = 1024.0, bf->unit = "KiB";
        else bf->unit = "bytes";
    } else if (kind == 3) {
        double hi = isnan(r->hi) ? 0 : r->hi;
        if (hi < 1e-3) bf->scale = 1e-6, bf->unit = "microseconds";
        else if (hi < 1) bf->scale = 1e-3, bf->unit = "milliseconds";
        else if (hi >= 120) bf->scale = 60, bf->unit = "minutes";
        else bf->unit = "seconds";
    } else if (kind == 0 && !isnan(r->hi) && r->hi < 0.1) {
        bf->scale = 1e-3, bf->unit = "microseconds"; /* steps of microseconds: "2.5", not "0.0025" ms */
    }
}

/* The y axis: log or not, tics in units of their own, its top and its
 * range as a gnuplot line (bf->yrange). */
static void bars_y_range(bar_fig *bf)
{
    const range *r = &bf->r;
    const int kind = bf->kind;
    bf->logy = ob_fig_spans_decades(r);
    /* times over decades (a step of microseconds next to one of 100 ms): one
     * unit for the whole axis would read "1e-05 minutes"; the axis is in
     * seconds and each decade's tic names its own unit ("10 us", "100 ms") */
    bf->time_tics = bf->logy && (kind == 0 || kind == 3);
    if (bf->time_tics) bf->scale = kind == 0 ? 1000 : 1; /* bars_step_ms.csv holds ms, bars_time_to_target.csv s */
    const double scale = bf->scale;
    bf->ytop = isnan(r->hi) ? 1 : bf->logy ? r->hi / scale * 2.5 : r->hi / scale * 1.12;
    /* a log axis reaches the decade above its highest point, so that a tic
     * labels the axis above it (2.9 s under a "10 s", not above "1 s" alone) */
    if (!isnan(r->hi) && bf->logy && r->hi > 0) {
        const double decade = pow(10, ceil(log10(r->hi / scale) - 1e-9));
        if (decade > bf->ytop) bf->ytop = decade * 1.05;
    }
    if (isnan(r->hi)) snprintf(bf->yrange, sizeof bf->yrange, "set yrange [0:1]");
    else if (bf->logy) snprintf(bf->yrange, sizeof bf->yrange, "set yrange [%.6g:%.6g]", r->lo / scale / 2.5, bf->ytop);
    else snprintf(bf->yrange, sizeof bf->yrange, "set yrange [0:%.6g]", bf->ytop);
}

/* Opens the dot plot's script. */
static ob_status bars_open(script *sc, const char *dir, const bar_fig *bf, ob_err *e)
{
    static const char *const what_txt[] = {"median time per training step", "peak memory",
                                           "optimizer state size", "training time to reach the target loss"};
    char reads[256];
    snprintf(reads, sizeof reads, "%s (workload, then one column per optimizer; empty or inf = no point)%s",
             bar_files[bf->kind],
             bf->n_ranges ? " and bars_time_to_target_range.csv (each time's interval, a bar)" : "");
    return ob_fig_script_open(sc, dir, bar_stems[bf->kind], what_txt[bf->kind], reads, e);
}

/* The dot plot's title, y label and slot width. */
static void bars_header(FILE *f, const bar_fig *bf)
{
    const int kind = bf->kind;
    char tt_title[400];
    snprintf(tt_title, sizeof tt_title,
             "Training time to reach the target loss, at the lr that got there in the fewest steps\\n"
             "(those steps x the mean step time%s%s)",
             bf->n_unreached ? "; \\\"not reached\\\": most seeds never did" : "",
             bf->n_alldiv ? "; \\\"diverged at every lr\\\": every run did" : "");
    const char *title = kind == 0 ? "Time per training step (median over runs; recording and evaluation excluded)"
                      : kind == 1 ? "Peak memory per run: optbench's own allocations (parameters, gradients, optimizer state, activations)"
                      : kind == 2 ? "Optimizer state size"
                                  : tt_title;
    char ylabel[128];
    if (bf->time_tics) snprintf(ylabel, sizeof ylabel, "%s", kind == 0 ? "time per step" : "training time");
    else if (kind == 0) snprintf(ylabel, sizeof ylabel, "%s per step", bf->unit[0] ? bf->unit : "milliseconds");
    else if (kind == 3) snprintf(ylabel, sizeof ylabel, "%s of training", bf->unit);
    else snprintf(ylabel, sizeof ylabel, "%s (%s)", kind == 1 ? "peak memory" : "optimizer state", bf->unit);
    fprintf(f,
            "set title \"%s\"\n"
            "set ylabel \"%s%s\"\n"
            "unset xlabel\n"
            "# a dot plot: one group of points per workload (row r of the table at x = r), one slot per\n"
            "# optimizer, each point in its optimizer's colour and marker shape (style.gp)\n"
            "slot = %.17g\n",
            title, ylabel, bf->logy ? " (log scale)" : "", bar_slot(bf->b.n));
}

/* Which column of the table each slot draws: with one slot per optimizer,
 * gnuplot arrays of each slot's column on each workload (C) and line type
 * (LT); and each slot's x offset in its group, off(). */
static void bars_columns(FILE *f, const ob_dataset *d, const bar_fig *bf)
{
    const bar_slots *b = &bf->b;
    const int n_col = b->n;
    if (!b->reduced) {
        fprintf(f, "off(i) = (i - 2 - (%d - 1) / 2.0) * slot   # column i is optimizer i - 1\n", n_col);
        return;
    }
    /* slot j draws, in row r of the table, column C[j]'s (r + 1)-th word:
     * the column of the configuration it shows on that workload */
    fprintf(f,
            "# one slot per optimizer (%d configurations would crowd each group): in each workload's row,\n"
            "# the column of the configuration it shows there, C[j]'s word r + 1 for row r (0: not run);\n"
            "# LT[j]: the line type (colour, marker) of the optimizer's own configuration (its own colour)\n"
            "array C[%d]\n",
            d->n_opt, n_col);
    for (int j = 0; j < n_col; j++) {
        fprintf(f, "C[%d] = \"", j + 1);
        for (int w = 0; w < d->n_wl; w++) {
            const int o = b->lab[w * n_col + j];
            fprintf(f, "%s%d", w ? " " : "", o >= 0 ? o + 2 : 0);
        }
        fprintf(f, "\"   # %s\n", b->name[j]);
    }
    fprintf(f, "array LT[%d] = [", n_col);
    for (int j = 0; j < n_col; j++) fprintf(f, "%s%d", j ? ", " : "", b->lt[j]);
    fprintf(f, "]\n"
               "c(j) = int(word(C[j], int($0) + 1))\n"
               "off(j) = (j - 1 - (%d - 1) / 2.0) * slot   # slot j is optimizer j\n",
            n_col);
}

/* The y tics of a log axis of times: each decade in its own unit. */
static void bars_time_tics(FILE *f, const bar_fig *bf)
{
    fprintf(f, "set ytics (");
    int k0 = (int)floor(log10(bf->r.lo / bf->scale / 2.5)), k1 = (int)ceil(log10(bf->r.hi / bf->scale * 2.5));
    for (int k = k0; k <= k1; k++) {
        double v = pow(10, k);
        char t[32];
        if (k < -6) snprintf(t, sizeof t, "%g ns", v * 1e9);
        else if (k < -3) snprintf(t, sizeof t, "%g us", v * 1e6);
        else if (k < 0) snprintf(t, sizeof t, "%g ms", v * 1e3);
        else snprintf(t, sizeof t, "%g s", v);
        fprintf(f, "%s\"%s\" %.17g", k > k0 ? ", " : "", t, v);
    }
    fprintf(f, ")\n");
}

/* The dot plot's axes: the workloads along x (their labels turned when
 * they would run into each other), the y axis's scale, range and tics. */
static void bars_axes(FILE *f, const ob_dataset *d, const bar_fig *bf)
{
    size_t label_chars = 0; /* the workload labels side by side: rotated when they would run into each other */
    for (int w = 0; w < d->n_wl; w++) label_chars += strlen(d->wl_labels[w]) + 2;
    fprintf(f,
            "set xrange [-0.5:%d.5]\n"
            "set xtics nomirror scale 0%s (",
            d->n_wl - 1,
            d->n_wl > 5 || label_chars > 90 ? " rotate by -25" : "");
    for (int w = 0; w < d->n_wl; w++) {
        char wq[512];
        ob_gp_str(d->wl_labels[w], wq, sizeof wq);
        fprintf(f, "%s\"%s\" %d", w ? ", " : "", wq, w);
    }
    fprintf(f, ")\n"
               "set grid noxtics ytics\n"
               "%s\n"
               "%s\n",
            bf->logy ? "set logscale y\nset format y \"%g\"" : "unset logscale y", bf->yrange);
    if (bf->time_tics) bars_time_tics(f, bf);
}

/* A faint guide line through each slot (a point far above the axis is
 * still read against its workload and its neighbours), a darker one
 * between workloads. */
static void bars_guides(FILE *f, const ob_dataset *d, int n_col)
{
    fprintf(f, "# guide lines: each optimizer's slot, and the gaps between workloads\n");
    for (int w = 0; w < d->n_wl; w++) {
        for (int j = 0; j < n_col; j++)
            fprintf(f, "set arrow from first %.6g, graph 0 to first %.6g, graph 1 nohead back lc rgb \"#e4e4e4\" lw 1 dt 1\n",
                    bar_x(w, j, n_col), bar_x(w, j, n_col));
        if (w + 1 < d->n_wl)
            fprintf(f, "set arrow from first %d.5, graph 0 to first %d.5, graph 1 nohead back lc rgb \"#b0b0b0\" lw 1 dt 1\n",
                    w, w);
    }
}

/* Marks for the slots that have no point: "0 B", "not reached", "not
 * run" and the others of bf->what. */
static void bars_marks(FILE *f, const ob_dataset *d, const bar_fig *bf)
{
    const int n_col = bf->b.n;
    /* the marks stand on end side by side, a slot apart: about 880 pixels of
     * the PNG's plot over all the slots; where that is narrower than the
     * terminal's font (11 points, about 14 pixels a line) a smaller one, so
     * that neighbours do not run into each other (22 optimizers on 4
     * workloads: 9.6 pixels, 7 points) */
    const double slot_px = 880.0 / ((double)d->n_wl * (n_col + 1));
    char font[32] = "";
    if (slot_px < 14) snprintf(font, sizeof font, " font \",%d\"", slot_px * 0.8 < 6 ? 6 : (int)(slot_px * 0.8));
    for (int w = 0; w < d->n_wl; w++)
        for (int j = 0; j < n_col; j++) {
            int m = bf->what[w * n_col + j];
            double x = bar_x(w, j, n_col);
            if (m == 2) /* on a linear axis its point is at 0: the mark above it */
                fprintf(f, "set label \"0 B\" at first %.6g, graph %s center front tc lt %d\n", x,
                        bf->logy ? "0.025" : "0.07", bf->b.lt[j]);
            else if (m == 3 || m == 4 || m == 8)
                fprintf(f, "set label \"%s\" at first %.6g, graph 0.02 rotate by 90 left front tc lt %d%s\n",
                        m == 3 ? "not reached" : m == 8 ? "diverged at every lr" : "step time unknown", x, bf->b.lt[j],
                        font);
            else if (m == 7)
                fprintf(f, "set label \"target met at start\" at first %.6g, graph 0.02 rotate by 90 left front tc rgb \"#999999\"%s\n",
                        x, font);
            else if (m == 5 || m == 6 || m == 9)
                fprintf(f, "set label \"%s\" at first %.6g, graph 0.02 rotate by 90 left front tc rgb \"#999999\"%s\n",
                        m == 5 ? "not run" : m == 9 ? "every run diverged" : "no data", x, font);
        }
}

/* The dot plot's legend and plot command: the time intervals' bars and
 * arrows under the points, the points, and a legend entry for every
 * optimizer, also one without a single point. */
static void bars_plot(script *sc, const bar_fig *bf)
{
    FILE *f = sc->f;
    const bar_slots *b = &bf->b;
    const int n_col = b->n;
    const double scale = bf->scale;
    size_t key_len = 0;
    for (int j = 0; j < n_col; j++)
        if (strlen(b->name[j]) > key_len) key_len = strlen(b->name[j]);
    ob_fig_key_fit(sc, n_col, key_len);
    /* always an expression: a column without a value (an optimizer that
     * reached the target nowhere) is then undefined points, not a gnuplot
     * warning that it has none; an infinite time (not reached, inf in the
     * CSV) draws no point either. Each slot's column: i, or with one slot
     * per optimizer c(j), its configuration's on the row's workload (0: none) */
    const char *col = b->reduced ? "c(j)" : "i", *it = b->reduced ? "j" : "i";
    const char *has = b->reduced ? "c(j) > 0 && " : "", *lt = b->reduced ? "LT[j]" : "(i - 1)";
    const int it0 = b->reduced ? 1 : 2, it1 = b->reduced ? n_col : n_col + 1;
    /* lt: the optimizer's colour and marker shape (pt) from style.gp */
    if (bf->n_ranges) /* an interval open above (a seed never got there, inf in the CSV) is an arrow to the top */
        fprintf(f, "top = %.6g  # the top of the y range\n"
                   "hi(c) = column(c) < 1e308 ? column(c) / %.17g : NaN\n"
                   "up(c) = column(c) < 1e308 ? NaN : top - column(c - 1) / %.17g\n",
                bf->ytop, scale, scale);
    fprintf(f, "plot ");
    if (bf->n_ranges) /* first, under the points: each time's interval, the noise that ties ranks */
        fprintf(f,
                "for [%s=%d:%d] 'bars_time_to_target_range.csv' skip 1 using ($0 + off(%s)):"
                "(%scolumn(2 * %s - 2) / %.17g%s):(column(2 * %s - 2) / %.17g):"
                "(hi(2 * %s - 1)) with yerrorbars lt %s pt -1 lw 1 notitle, \\\n  ",
                it, it0, it1, it, b->reduced ? "c(j) > 0 ? " : "", col, scale, b->reduced ? " : NaN" : "", col,
                scale, col, lt);
    if (bf->n_open)
        fprintf(f,
                "for [%s=%d:%d] 'bars_time_to_target_range.csv' skip 1 using ($0 + off(%s)):"
                "(%scolumn(2 * %s - 2) / %.17g%s):(0):(up(2 * %s - 1)) with vectors head size screen 0.008,25 "
                "filled lt %s lw 1 notitle, \\\n  ",
                it, it0, it1, it, b->reduced ? "c(j) > 0 ? " : "", col, scale, b->reduced ? " : NaN" : "", col, lt);
    fprintf(f,
            "for [%s=%d:%d] '%s' skip 1 using ($0 + off(%s)):(%scolumn(%s) < 1e308 ? column(%s) / %.17g : NaN) "
            "with points lt %s ps (1.7 * PS) notitle",
            it, it0, it1, bar_files[bf->kind], it, has, col, col, scale, lt);
    /* the legend names every optimizer, also one without a single point */
    for (int j = 0; j < n_col; j++) {
        char oq[512];
        ob_gp_str(b->name[j], oq, sizeof oq);
        fprintf(f, ", \\\n  NaN with points lt %d ps (1.7 * PS) title \"%s\"", b->lt[j], oq);
    }
    fprintf(f, "\n");
}

/* The caption's note on the marks of the time to target (not reached,
 * diverged, untimed, met at the start) or on the "0 B" marks, into extra
 * (n bytes; "" where there are none). */
static void bars_marks_note(const bar_fig *bf, char *extra, size_t n)
{
    const int kind = bf->kind;
    extra[0] = 0;
    const char *atstart = bf->n_atstart ? " \"target met at start\": the loss was at or below the workload's target "
                                          "before any update, so its times are not shown." : "";
    if (kind == 3 && (bf->n_unreached || bf->n_alldiv || bf->n_untimed || bf->n_atstart))
        snprintf(extra, n, "%s%s%s%s",
                 !bf->n_unreached ? ""
                 : bf->b.reduced  ? " \"not reached\" marks an optimizer of which no majority of the seeds reached the "
                                    "target at any learning rate, in any configuration: it has no time to show."
                                  : " \"not reached\" marks an optimizer of which no majority of the seeds reached the "
                                    "target at any learning rate: it has no time to show.",
                 bf->n_alldiv ? " \"diverged at every lr\": every run of the optimizer there diverged, so it has no "
                                "time to show." : "",
                 bf->n_untimed ? " \"step time unknown\": reached, but no step time was recorded." : "", atstart);
    else if (bf->n_zero)
        snprintf(extra, n,
                 " \"0 B\" marks an optimizer that %s (for example sgd without momentum)%s.",
                 kind == 2 ? "keeps no state" : "allocated nothing",
                 bf->logy ? ": 0 has no place on the log scale, so it has no point" : ", its point at 0");
}

/* The caption's note on the "not run" and "no data" marks ("" without). */
static const char *bars_notrun_note(const ob_dataset *d, const bar_fig *bf)
{
    int n_nodata = 0;
    for (int i = 0; i < d->n_wl * bf->b.n; i++) n_nodata += bf->what[i] == 6;
    return bf->n_notrun && n_nodata ? " \"not run\": the pair was left out of the matrix; \"no data\": "
                                      "its runs recorded no value (every run diverged within the warm-up, say)."
           : bf->n_notrun ? " \"not run\": the pair was left out of the matrix."
           : n_nodata     ? " \"no data\": its runs recorded no value (every run diverged within the "
                            "warm-up, say)."
                          : "";
}

/* The caption's note on how the times were taken, into note (n bytes; ""
 * where there is nothing to say): time to target from median step times
 * where some run predates the mean, and step times a busy machine moved
 * (the cost table marks them, and so does the figure). */
static void bars_timing_note(const ob_dataset *d, const ob_stats *s, int kind, char *note, size_t n)
{
    char names[160];
    const int n_median = kind == 3 ? ob_stats_median_timed(d, s, 0, names, sizeof names) : 0;
    note[0] = 0;
    if (n_median)
        snprintf(note, n,
                 " Time to target from median step times on %s: some runs there predate the mean (schema < 4), so "
                 "every optimizer there is timed by its median.", names);
    int n_unsteady = 0;
    for (int k = 0; (kind == 0 || kind == 3) && k < s->n_g; k++)
        n_unsteady += s->g[k].step_ms_spread > OB_STEP_SPREAD_UNSTEADY;
    if (n_unsteady) {
        const size_t l = strlen(note);
        snprintf(note + l, n - l,
                 " %d of the workload x optimizer groups ran at unsteady speeds (their runs' median step times "
                 "differ by more than %.0f%%: a busy machine; \"unsteady\" in the cost table): their %s the "
                 "machine's load as much as the optimizer's.",
                 n_unsteady, 100 * OB_STEP_SPREAD_UNSTEADY, kind == 0 ? "step times show" : "times to target show");
    }
}

/* The caption's note on the time intervals' bars and arrows ("" without). */
static const char *bars_ranges_note(const bar_fig *bf)
{
    if (!bf->n_ranges) return "";
    return bf->n_open ? " A bar through a point spans the time's interval (that of the seeds' "
                        "steps x that of the median step time over the runs: the 95% interval of "
                        "each median, or with 5 seeds or runs or fewer their min to max, which "
                        "holds the median with probability 1 - 2^(1-n) only, 75% at 3): the noise "
                        "within which the tables tie ranks. An arrow to the top of the plot is an "
                        "interval open above: a seed in it never got there."
                      : " A bar through a point spans the time's interval (that of the seeds' "
                        "steps x that of the median step time over the runs: the 95% interval of "
                        "each median, or with 5 seeds or runs or fewer their min to max, which "
                        "holds the median with probability 1 - 2^(1-n) only, 75% at 3): the noise "
                        "within which the tables tie ranks.";
}

/* The dot plot in the report: its caption and its notes. */
static ob_status bars_caption(const ob_dataset *d, const ob_stats *s, const bar_fig *bf, ob_figures *out, ob_err *e)
{
    static const char *const caps[] = {
        "Median time of one training step (forward, backward and optimizer update; the first "
        "steps are a warm-up and not counted), per workload and optimizer, over its runs on a quiet machine "
        "where it has some (the cost table's).",
        "Peak memory: the high-water mark of optbench's own allocations during a run (parameters, gradients, "
        "activations, optimizer state, workspaces; on a GPU, device memory), per workload and optimizer.",
        "Bytes of optimizer state (momentum, second moments, ...) per workload and optimizer.",
        "Estimated training time until the smoothed training loss reaches the workload's target (see the "
        "time-to-target tables): steps to target (the step by which a strict majority of the seeds had first "
        "got there, so one lucky seed does not carry the others) times the mean step time (slow steps, such as "
        "a refresh every k steps, included), at the learning rate that got there first."};
    const int kind = bf->kind;
    char extra[600], median_note[800], reduced[500] = "";
    bars_marks_note(bf, extra, sizeof extra);
    const char *notrun = bars_notrun_note(d, bf);
    bars_timing_note(d, s, kind, median_note, sizeof median_note);
    if (bf->b.reduced)
        snprintf(reduced, sizeof reduced,
                 " With %d configurations, each optimizer is one point per workload: %s; every configuration's "
                 "value is in %s.",
                 d->n_opt,
                 kind == 3 ? "its configuration that got there soonest (profile_tuned_picks.csv names it where "
                             "the profile is on the training time, the default)"
                           : "its best configuration there (the lowest median final loss at its best lr, "
                             "best_configuration.csv)",
                 bar_files[kind]);
    const char *alldiv = kind != 3 && bf->n_alldiv ? " \"every run diverged\": the optimizer's runs there all diverged "
                                                     "before recording a value (a run's first steps are not timed)."
                                                   : "";
    return ob_fig_add(out, e, bar_stems[kind], -1, bar_titles[kind], "%s%s%s%s%s%s%s%s%s", caps[kind],
                   " Each optimizer is a point in its colour and marker shape (as in the legend), side by side "
                   "within each workload's group.",
                   reduced, bars_ranges_note(bf), extra, median_note, notrun, alldiv,
                   bf->logy ? " The y axis is logarithmic." : "");
}

/* The script of the dot plot bf, written into dir. */
static ob_status bars_script(const ob_dataset *d, const bar_fig *bf, const char *dir, ob_err *e)
{
    script sc;
    OB_TRY(bars_open(&sc, dir, bf, e));
    bars_header(sc.f, bf);
    bars_columns(sc.f, d, bf);
    bars_axes(sc.f, d, bf);
    bars_guides(sc.f, d, bf->b.n);
    bars_marks(sc.f, d, bf);
    bars_plot(&sc, bf);
    return ob_fig_script_close(&sc, e);
}

/* A dot plot over all workloads of kind 0: step time, 1: peak memory, 2:
 * optimizer state, 3: time to target. A dot plot, not bars: on a log axis a
 * bar's length depends on where the axis happens to start, so it means
 * nothing; a point per optimizer, its colour and marker shape from
 * style.gp, reads by its position alone and tells the optimizers apart in
 * grey and to a colour-blind reader too. */
ob_status ob_fig_bars(const ob_dataset *d, const ob_stats *s, const char *dir, int kind,
                   ob_figures *out, ob_err *e)
{
    if (d->n_opt == 0 || d->n_wl == 0) return OB_OK;
    bar_fig bf;
    memset(&bf, 0, sizeof bf);
    bf.kind = kind;
    bf.r = (range){NAN, NAN};
    OB_TRY(bar_slots_make(d, s, kind, &bf.b, e));
    bf.what = calloc((size_t)d->n_wl * bf.b.n, sizeof *bf.what);
    if (!bf.what) {
        bar_slots_free(&bf.b);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    bars_classify(d, s, &bf);
    ob_status st;
    if (bf.n_groups == 0 || (bf.n_bars == 0 && bf.n_zero == 0)) {
        st = bars_not_drawn(&bf, out, e);
    } else {
        bars_unit(&bf);
        bars_y_range(&bf);
        st = bars_script(d, &bf, dir, e);
        if (st == OB_OK) st = bars_caption(d, s, &bf, out, e);
    }
    free(bf.what);
    bar_slots_free(&bf.b);
    return st;
}
