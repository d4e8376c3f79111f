/* tests/test_report_figures.c - the report's figures in the corner cases:
 * time to target when every optimizer, some or none reach the target (only
 * reached optimizers are ranked; the figure names every optimizer in its
 * legend, marks "not reached", places every workload group; with nothing
 * reached anywhere it is not drawn and the report says why), a zero-byte
 * optimizer state marked "0 B", held-out figures of a database whose evals
 * table is empty (not drawn, a note, no failed gnuplot), and an output folder
 * given with a trailing slash. When gnuplot is installed every figure the
 * page shows must render to a non-empty PNG. Sweeps besides the lr: the
 * hp_sweep.csv rows (each configuration at its own best lr, lines grouped by
 * the optimizer and its other swept keys, a configuration diverged at every
 * lr marked), one hp_ figure per workload and key, listed after the lr
 * figure; without sweeps neither; 0 and positive values spanning decades on
 * a log axis, 0 set apart. Series that coincide stay visible: a marker shape
 * and dash type per optimizer (style.gp), markers on the profile's curves,
 * the legend laid out to fit its longest entry. Bar times over decades:
 * each tic in its own unit. A database whose runs of a workload mix runs with
 * and without a mean step time: time to target there from the median, said.
 * The step time, memory and time-to-target figures are dot plots (style.gp's
 * colour and shape per optimizer), an optimizer diverged at every lr is
 * "diverged at every lr" there and keeps its entry in the end-of-training
 * held-out figure, whose loss axis stays at or above 0; bars_*.csv byte
 * counts are integers. */
#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "check.h"
#include "plots/figures.h"
#include "optimizers/optim.h"
#include "plots/report.h"
#include "plots/style.h"
#include "results/store.h"
#include "test_stats_db.h"

static char *slurp(const char *dir, const char *name) { return check_slurp(dir, name, NULL); }

/* A figure's script up to its SVG and PDF parts: what the PNG draws (the
 * PDF's part lays the lr figure's labels out again for its width). */
static char *slurp_png(const char *dir, const char *name)
{
    char *gp = slurp(dir, name), *end = gp ? strstr(gp, "\n# the same figure as SVG") : NULL;
    if (end) end[1] = 0;
    return gp;
}

static int exists(const char *dir, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* Is there a line starting with prefix that contains part? */
static int row_has(const char *text, const char *prefix, const char *part)
{
    for (const char *p = text; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!strncmp(p, prefix, strlen(prefix))) {
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            if (strstr(line, part)) return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Every <img src="X.png"> of index.html is a non-empty file. */
static void check_pngs_of_page(const char *out)
{
    char *html = slurp(out, "index.html");
    CHECK(html != NULL);
    int n = 0;
    for (const char *p = html; p && (p = strstr(p, "<img src=\"")); n++) {
        p += strlen("<img src=\"");
        const char *q = strchr(p, '"');
        char name[300];
        snprintf(name, sizeof name, "%.*s", (int)(q - p), p);
        char path[700];
        snprintf(path, sizeof path, "%s/%s", out, name);
        struct stat sb;
        CHECK_MSG(stat(path, &sb) == 0 && sb.st_size > 0, "%s is missing or empty", name);
        p = q;
    }
    CHECK(n > 0);
    free(html);
}

/* A new database at path (an old one removed) with one benchmark, name,
 * begun: the store, and the benchmark's id in *bench. */
static ob_store *fresh_bench(const char *path, const char *name, int64_t *bench)
{
    ob_err e = {0};
    ob_store *s = NULL;
    remove(path);
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &s, &e), &e);
    CHECK_OK(ob_store_begin_benchmark(s, name, "steps: 50\n", "rev0", "testhost", "cpu", "test", bench, &e), &e);
    return s;
}

/* Workloads: wa (every optimizer reaches its default target), wb (none: the
 * median of two seeds is censored when one never gets there), wc (adam only).
 * sgd keeps no state (0 bytes); lion reaches the target nowhere. */
static void build_db(const char *path)
{
    ob_err e = {0};
    int64_t bench = 0;
    ob_store *s = fresh_bench(path, "corners", &bench);
    struct {
        const char *wl, *opt;
        double f0, f1, T;
        int64_t state;
    } rows[] = {
        {"wa", "adam", 1.0, 1.0, 10, 800},  {"wa", "sgd", 1.05, 1.05, 30, 0},
        {"wb", "adam", 1.0, 2.0, 10, 800},  {"wb", "sgd", 1.2, 2.4, 10, 0},  {"wb", "lion", 1.3, 2.6, 10, 400},
        {"wc", "adam", 1.0, 1.0, 10, 800},  {"wc", "sgd", 1.0, 3.0, 10, 0},  {"wc", "lion", 1.1, 3.0, 10, 400},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        for (int seed = 0; seed < 2; seed++)
            fx_add(s, bench, &(fx_run){rows[i].wl, rows[i].opt, NULL, 0.01, seed, "done",
                                       seed ? rows[i].f1 : rows[i].f0, rows[i].T, 1.0, 1.5, 4096,
                                       rows[i].state, 1.5, NAN, 0});
    ob_store_finish_benchmark(s, bench, &e);
    ob_store_close(s);
}

static ob_status report(const char *db, const char *out, int render, ob_stats_opts *so,
                        ob_report_result *res, char *logbuf, size_t logn, ob_err *e)
{
    ob_report_opts o;
    memset(&o, 0, sizeof o);
    if (so) o.stats = *so;
    else ob_stats_opts_default(&o.stats);
    o.db_path = db;
    o.out_dir = out;
    o.no_render = !render;
    FILE *log = tmpfile();
    o.log = log;
    ob_status st = ob_report_write(&o, res, e);
    if (logbuf && log) {
        rewind(log);
        size_t n = fread(logbuf, 1, logn - 1, log);
        logbuf[n] = 0;
    }
    if (log) fclose(log);
    return st;
}

/* A database and report of their own: dir/NAME.db, with one benchmark NAME
 * begun (fixture_begin) to add runs to, reported into dir/NAME
 * (fixture_report). */
typedef struct fixture {
    char db[600], out[600];
    int64_t bench;
    ob_store *s;
} fixture;

static ob_store *fixture_begin(fixture *f, const char *dir, const char *name)
{
    snprintf(f->db, sizeof f->db, "%s/%s.db", dir, name);
    snprintf(f->out, sizeof f->out, "%s/%s", dir, name);
    f->bench = 0;
    f->s = fresh_bench(f->db, name, &f->bench);
    return f->s;
}

/* The benchmark finished, the store closed, and the report written with the
 * default options (rendered when render). */
static void fixture_report(fixture *f, int render, ob_report_result *res)
{
    ob_err e = {0};
    ob_store_finish_benchmark(f->s, f->bench, &e);
    ob_store_close(f->s);
    f->s = NULL;
    CHECK_OK(report(f->db, f->out, render, NULL, res, NULL, 0, &e), &e);
}

/* The default statistics options with a given target loss val[i] on
 * workload wl[i], for n workloads (the arrays outlive the options). */
static ob_stats_opts with_targets(int n, const char **wl, const double *val)
{
    ob_stats_opts so;
    ob_stats_opts_default(&so);
    so.n_targets = n;
    so.target_wl = wl;
    so.target_val = val;
    return so;
}

static void test_time_to_target(const char *db, const char *dir, int have_gnuplot)
{
    char out[600];
    snprintf(out, sizeof out, "%s/tt/", dir); /* trailing slash on purpose */
    ob_report_result res;
    ob_err e = {0};
    char log[4096];
    /* The default target (1.1 x the best upper-median final loss) is reached by a majority
     * of the seeds of the optimizer that set it; on wb a given target below every run's
     * loss leaves nothing reached. */
    const char *tw[] = {"wb"};
    double tv[] = {0.9};
    ob_stats_opts so = with_targets(1, tw, tv);
    CHECK_OK(report(db, out, have_gnuplot, &so, &res, log, sizeof log, &e), &e);
    CHECK_MSG(!strstr(log, "//"), "a path with a double slash in: %s", log);
    CHECK(res.n_render_failed == 0);
    if (have_gnuplot) CHECK(res.n_rendered == res.n_figures);

    char *csv = slurp(out, "time_to_target.csv");
    CHECK(csv != NULL);
    /* only the optimizers that reached the target have a rank */
    CHECK(row_has(csv, "\"wa\",", "\"adam\",1,"));
    CHECK(row_has(csv, "\"wa\",", "\"sgd\",2,"));      /* reached, second */
    CHECK(row_has(csv, "\"wb\",", "\"adam\",,inf,inf,,1")); /* censored: no rank */
    CHECK(row_has(csv, "\"wc\",", "\"adam\",1,"));
    CHECK(count_of(csv, ",,inf,inf,,1") == 5);          /* wb: 3, wc: sgd and lion */
    free(csv);

    char *md = slurp(out, "summary.md");
    CHECK(md != NULL);
    CHECK(md && strstr(md, "| rank | optimizer | steps to target | training time (est.) | at lr |"));
    CHECK(md && strstr(md, "| - | adam | not reached"));
    CHECK(md && strstr(md, "| - | lion | not reached"));
    CHECK(md && strstr(md, "No optimizer reached the target on wb"));
    CHECK(md && !strstr(md, "No optimizer reached the target on wc"));
    CHECK(md && !strstr(md, "from median step times")); /* every run has its mean */
    free(md);

    char *gp = slurp(out, "time_to_target.gp");
    CHECK(gp != NULL);
    /* every optimizer in the legend, even lion without a single bar */
    CHECK(gp && strstr(gp, "title \"adam\"") && strstr(gp, "title \"sgd\"") && strstr(gp, "title \"lion\""));
    /* every workload group at its own place, also wb where nothing reached */
    CHECK(gp && strstr(gp, "(\"wa\" 0, \"wb\" 1, \"wc\" 2)"));
    CHECK(gp && count_of(gp, "set label \"not reached\"") == 5);
    free(gp);

    gp = slurp(out, "memory_state.gp");
    CHECK(gp && count_of(gp, "set label \"0 B\"") == 3);
    free(gp);

    /* the profile (wa and wc; wb's target nobody reached): lion was not run
     * on wa, which counts as not reached there, and every output says so */
    csv = slurp(out, "profile_area.csv");
    CHECK(csv && strstr(csv, "\"optimizer\",\"area\",\"rank\",\"workloads\",\"workloads_run\",\"area_lo\","
                             "\"area_hi\",\"first_share\"\n"));
    CHECK_MSG(csv && strstr(csv, "\n\"lion\",0,3,2,1,0,0.487") && strstr(csv, "\n\"adam\",1,1,2,2,1,1,1\n"), "%s",
              csv ? csv : "no profile_area.csv");
    free(csv);
    gp = slurp(out, "profile.gp");
    CHECK(gp && strstr(gp, "title \"lion (area 0.000, ran 1 of 2)\"") && strstr(gp, "title \"adam (area 1.000)\""));
    /* a band under each curve, from profile_band.csv's two columns of it, and its legend entry */
    CHECK(gp && count_of(gp, "with filledcurves lt ") == count_of(gp, "NaN with linespoints") &&
          strstr(gp, "'profile_band.csv' skip 1 using 1:2:3 with filledcurves lt 1 notitle") &&
          strstr(gp, "title \"shade: the seeds' noise, 95%\""));
    free(gp);
    /* adam is the fastest on both workloads in every resample: its curve is 1, band and all */
    csv = slurp(out, "profile_band.csv");
    CHECK_MSG(csv && strstr(csv, "\"tau\",\"adam lo\",\"adam hi\",") && strstr(csv, "\n1,1,1,") &&
                  strstr(csv, "\n4,1,1,"),
              "%s", csv ? csv : "no profile_band.csv");
    free(csv);
    md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "Not run everywhere: of the 2 workloads in the profile, lion ran on 1. On the others it "
                           "counts as not reaching the target"));
    CHECK(md && strstr(md, "| 3 | lion | 0.000 | [0.000, 0.487] | 0% | 1 of 2 | 0 of 2 | 0 |"));
    free(md);
    gp = slurp(out, "profile.gp");
    CHECK(gp && !strstr(gp, "logscale x") && !strstr(gp, "log scale)"));
    free(gp);

    /* past tau 16: taus even in log(tau), a log2 axis, and the caption says the area is over tau itself */
    char out64[640];
    snprintf(out64, sizeof out64, "%s64", out);
    so.tau_max = 64;
    CHECK_OK(report(db, out64, have_gnuplot, &so, &res, NULL, 0, &e), &e);
    CHECK(res.n_render_failed == 0);
    gp = slurp(out64, "profile.gp");
    CHECK(gp && strstr(gp, "set logscale x 2\n") && strstr(gp, "set xrange [1:64]") && strstr(gp, ", log scale)\""));
    free(gp);
    csv = slurp(out64, "profile.csv");
    /* the first two taus and the last: rows after the header, each starting with its tau */
    double t1 = 0, t2 = 0, tlast = 0;
    const char *row2 = csv ? strchr(csv, '\n') : NULL;
    if (row2) sscanf(row2 + 1, "%lf", &t1);
    if (row2 && strchr(row2 + 1, '\n')) sscanf(strchr(row2 + 1, '\n') + 1, "%lf", &t2);
    for (const char *l = csv; l && (l = strchr(l, '\n')) && l[1]; l++) sscanf(l + 1, "%lf", &tlast);
    CHECK_MSG(t1 == 1 && fabs(t2 - pow(64, 1.0 / 300)) < 1e-12 && tlast == 64, "taus %g, %.17g ... %g", t1, t2,
              tlast);
    free(csv);
    md = slurp(out64, "summary.md");
    CHECK(md && strstr(md, "over tau in [1, 64] (the axis is logarithmic past tau 16, the area is over tau itself"));
    free(md);

    if (have_gnuplot) {
        check_pngs_of_page(out);
        char *html = slurp(out, "index.html");
        CHECK(html && !strstr(html, "Not rendered"));
        free(html);
    }
}

static void test_nothing_reached(const char *db, const char *dir, int have_gnuplot)
{
    char out[600];
    snprintf(out, sizeof out, "%s/none", dir);
    const char *wl[] = {"wa", "wb", "wc"};
    double val[] = {0.001, 0.001, 0.001};
    ob_stats_opts so = with_targets(3, wl, val);
    ob_report_result res;
    ob_err e = {0};
    CHECK_OK(report(db, out, have_gnuplot, &so, &res, NULL, 0, &e), &e);
    /* skipped: time to target, the profile and the three lr figures (one lr each) */
    CHECK(res.n_render_failed == 0 && res.n_skipped == 5);
    CHECK(!exists(out, "time_to_target.gp") && !exists(out, "profile.gp"));
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "*Time to target: Not drawn: no optimizer reached the target loss"));
    CHECK(md && strstr(md, "*Performance profile: Not drawn:"));
    CHECK(md && !strstr(md, "gnuplot time_to_target.gp"));
    CHECK(md && !strstr(md, "| 1 | adam | not reached"));
    free(md);
    char *csv = slurp(out, "time_to_target.csv");
    CHECK(csv && count_of(csv, ",,inf,inf,,1") == 8);
    free(csv);
    if (have_gnuplot) check_pngs_of_page(out);
}

/* A target the loss already met before training (here a given one, far
 * above every loss of wa): wa's time to target is not ranked, its rows say
 * so in the CSV, its bars are marked and it stays out of the profile. */
static void test_met_at_start(const char *db, const char *dir, int have_gnuplot)
{
    char out[600];
    snprintf(out, sizeof out, "%s/atstart", dir);
    const char *wl[] = {"wa"};
    double val[] = {1e9};
    ob_stats_opts so = with_targets(1, wl, val);
    ob_report_result res;
    ob_err e = {0};
    CHECK_OK(report(db, out, have_gnuplot, &so, &res, NULL, 0, &e), &e);
    CHECK(res.n_render_failed == 0);
    char *csv = slurp(out, "time_to_target.csv");
    int n_wa = csv ? count_of(csv, "\n\"wa\",") : 0;
    CHECK_MSG(n_wa > 0 && csv && count_of(csv, ",1,1,,,,,,,,\n") == n_wa &&
                  count_of(csv, ",1,0,\"mean\",") + count_of(csv, ",0,0,\"mean\",") > 0,
              "%s", csv ? csv : "");
    CHECK(csv && row_has(csv, "\"wa\",", "\"adam\",,,,,1,1"));
    free(csv);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "Time to target: not ranked. The target loss 1e+09 (given) is at or above the loss at the "
                           "first recorded step") && strstr(md, "`--target wa=LOSS`"));
    free(md);
    char *gp = slurp(out, "time_to_target.gp");
    CHECK_MSG(gp && count_of(gp, "set label \"target met at start\"") == n_wa, "%d marks for %d groups",
              gp ? count_of(gp, "set label \"target met at start\"") : -1, n_wa);
    free(gp);
    gp = slurp(out, "profile.gp");
    CHECK(gp && strstr(gp, "Performance profile over 2 workloads"));
    free(gp);
    if (have_gnuplot) check_pngs_of_page(out);
}

/* A database whose evals table is empty (written before the end-of-run
 * evaluation was stored there) still has runs.eval_loss: the held-out figure
 * has no rows to draw, so it is not drawn, with a note. */
static void test_no_eval_rows(const char *db, const char *dir, int have_gnuplot)
{
    ob_err e = {0};
    ob_store *s = NULL;
    CHECK_OK(ob_store_open(db, OB_STORE_EXISTING, &s, &e), &e);
    CHECK(sqlite3_exec(ob_store_db(s), "DELETE FROM evals", NULL, NULL, NULL) == SQLITE_OK);
    ob_store_close(s);
    char out[600];
    snprintf(out, sizeof out, "%s/noevals", dir);
    /* a stale empty PNG and a failing script of an earlier report go */
    CHECK(ob_mkdirs(out, &e) == OB_OK);
    char p[700];
    snprintf(p, sizeof p, "%s/eval_loss_wa.png", out);
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
    snprintf(p, sizeof p, "%s/.optbench-report", out);
    f = fopen(p, "w");
    if (f) {
        fputs("eval_loss_wa.png\neval_loss_wa.gp\n", f);
        fclose(f);
    }
    ob_report_result res;
    CHECK_OK(report(db, out, have_gnuplot, NULL, &res, NULL, 0, &e), &e);
    /* skipped: the three held-out figures and the three lr figures (one lr each) */
    CHECK(res.n_render_failed == 0 && res.n_skipped == 6);
    CHECK(!exists(out, "eval_loss_wa.gp") && !exists(out, "eval_loss_wa.png"));
    char *md = slurp(out, "summary.md");
    CHECK(md && count_of(md, "*Held-out loss: Not drawn:") == 3);
    CHECK(md && !strstr(md, "gnuplot eval_loss_wa.gp"));
    free(md);
    if (have_gnuplot) check_pngs_of_page(out);
}

/* A database merged from shards of an older optbench (no mean step time,
 * schema < 4) and a newer one: on wa sgd's runs have no mean, adam's do (5 ms
 * against a median of 1 ms). Time to target on wa is from the median step
 * times of both, and the workload's paragraph, the profile's and the bar
 * figure's caption say so; wc, where every run has its mean, says nothing.
 * On wb adam's two seeds end at 1.0 and 2.0: the default target is 1.1 x
 * the upper of the two, 2.2, which both reach (1.1 x their median, 1.65,
 * one of them never would: a majority of the seeds must reach it). */
static void test_mixed_means(const char *dir)
{
    char db[600], out[600];
    snprintf(db, sizeof db, "%s/mixed.db", dir);
    snprintf(out, sizeof out, "%s/mixed", dir);
    build_db(db);
    ob_err e = {0};
    ob_store *s = NULL;
    CHECK_OK(ob_store_open(db, OB_STORE_EXISTING, &s, &e), &e);
    if (!s) return;
    CHECK(sqlite3_exec(ob_store_db(s),
                       "UPDATE runs SET step_ms_mean = NULL WHERE workload = 'wa' AND optimizer = 'sgd';"
                       "UPDATE runs SET step_ms_mean = 5 WHERE workload = 'wa' AND optimizer = 'adam'",
                       NULL, NULL, NULL) == SQLITE_OK);
    ob_store_close(s);
    ob_report_result res;
    CHECK_OK(report(db, out, 0, NULL, &res, NULL, 0, &e), &e);
    char *md = slurp(out, "summary.md");
    CHECK(md != NULL);
    CHECK(md && count_of(md, "Note: time to target from median step times: some runs predate the mean "
                             "(schema < 4), so every optimizer on wa is timed") == 1);
    CHECK(md && count_of(md, "Note: time to target from median step times") == 1); /* not on wc */
    CHECK(md && count_of(md, "ranked by estimated training time, steps x median step time") == 1);
    CHECK(md && strstr(md, "In the profile, training time from median step times on 1 workload (wa): some of its "
                           "runs"));
    CHECK(md && strstr(md, "Time to target from median step times on wa: some runs there predate"));
    /* the profile's caption too */
    CHECK(md && strstr(md, "(3 used). Training time from median step times on wa: some runs there predate"));
    CHECK(md && !strstr(md, "No optimizer reached the target on wb"));
    free(md);
    char *csv = slurp(out, "time_to_target.csv");
    CHECK(csv && count_of(csv, ",\"median\",") == 2 && count_of(csv, ",\"mean\",") == 6);
    /* wa: adam (T 10) at 1 ms per step by its median, not 5 ms by its mean */
    CHECK(csv && row_has(csv, "\"wa\",", "\"adam\",1,"));
    free(csv);
}

/* Sweeps besides the lr: on quad, adam with beta1 in {0.8, 0.9} x beta2 in
 * {0.9, 0.99, 0.999} (beta1 0.9 beta2 0.9 diverges at every lr; beta1 0.8
 * beta2 0.999 is best at lr 0.1, the others at 0.01) and sgd with momentum
 * in {0.5, 0.9}; on flat one configuration of each (no line there). */
static void build_sweep_db(const char *path)
{
    ob_err e = {0};
    int64_t bench = 0;
    ob_store *s = fresh_bench(path, "hp", &bench);
    static const double lrs[2] = {0.01, 0.1};
    struct {
        const char *wl, *opt, *extra;
        double m; /* median final loss at lr 0.01 (x 1.5 at 0.1); NaN: diverged */
        double m_hi; /* at lr 0.1 when not 1.5 m */
    } cfg[] = {
        {"quad", "adam", "\"beta1\":0.8,\"beta2\":0.9", 2.0, NAN},
        {"quad", "adam", "\"beta1\":0.8,\"beta2\":0.99", 1.5, NAN},
        {"quad", "adam", "\"beta1\":0.8,\"beta2\":0.999", 1.25, 1.0},
        {"quad", "adam", "\"beta1\":0.9,\"beta2\":0.9", NAN, NAN},
        {"quad", "adam", "\"beta1\":0.9,\"beta2\":0.99", 1.75, NAN},
        {"quad", "adam", "\"beta1\":0.9,\"beta2\":0.999", 1.0, NAN},
        {"quad", "sgd", "\"momentum\":0.5", 3.0, NAN},
        {"quad", "sgd", "\"momentum\":0.9", 2.5, NAN},
        {"flat", "adam", "\"beta1\":0.9,\"beta2\":0.99", 0.5, NAN},
        {"flat", "sgd", "\"momentum\":0.9", 0.75, NAN},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++)
        for (int l = 0; l < 2; l++)
            for (int seed = 0; seed < 2; seed++) {
                double m = l == 0 ? cfg[i].m : isnan(cfg[i].m_hi) ? 1.5 * cfg[i].m : cfg[i].m_hi;
                double f = m + (seed ? 0.25 : -0.25);
                fx_add(s, bench, &(fx_run){cfg[i].wl, cfg[i].opt, cfg[i].extra, lrs[l], seed,
                                           isnan(m) ? "diverged" : "done", f, 10, 1.0, 1.5, 4096, 800, f + 0.5,
                                           NAN, 0});
            }
    ob_store_finish_benchmark(s, bench, &e);
    ob_store_close(s);
}

/* Count the data rows of csv whose first fields are prefix. */
static int rows_with(const char *csv, const char *prefix)
{
    int n = 0;
    for (const char *p = csv; p && *p;) {
        if (!strncmp(p, prefix, strlen(prefix))) n++;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return n;
}

static void test_hp_sweep(const char *dir, int have_gnuplot)
{
    char db[600], out[600];
    snprintf(db, sizeof db, "%s/hp.db", dir);
    snprintf(out, sizeof out, "%s/hp", dir);
    build_sweep_db(db);
    ob_report_result res;
    ob_err e = {0};
    CHECK_OK(report(db, out, have_gnuplot, NULL, &res, NULL, 0, &e), &e);
    CHECK(res.n_render_failed == 0);
    if (have_gnuplot) CHECK(res.n_rendered == res.n_figures);

    char *csv = slurp(out, "hp_sweep.csv");
    CHECK(csv != NULL);
    static const char hdr[] = "\"workload\",\"key\",\"line\",\"value\",\"best_lr\",\"seeds\",\"final_median\","
                              "\"final_min\",\"final_max\",\"diverged_runs\",\"finished_runs\","
                              "\"diverged_everywhere\",\"optimizer\"\n";
    CHECK(csv && !strncmp(csv, hdr, strlen(hdr)));
    /* beta2: a line per beta1, three values each */
    CHECK(rows_with(csv, "\"quad\",\"beta2\",\"adam beta1=0.8\",") == 3);
    CHECK(rows_with(csv, "\"quad\",\"beta2\",\"adam beta1=0.9\",") == 3);
    /* beta1: a line per beta2, two values each */
    CHECK(rows_with(csv, "\"quad\",\"beta1\",\"adam beta2=0.9\",") == 2);
    CHECK(rows_with(csv, "\"quad\",\"beta1\",\"adam beta2=0.99\",") == 2);
    CHECK(rows_with(csv, "\"quad\",\"beta1\",\"adam beta2=0.999\",") == 2);
    CHECK(rows_with(csv, "\"quad\",\"momentum\",\"sgd\",") == 2);
    /* nothing else: no line on flat (one configuration each), clip_norm is not swept */
    CHECK(rows_with(csv, "\"") == 14 + 1);
    CHECK(rows_with(csv, "\"flat\"") == 0 && !strstr(csv, "clip_norm"));
    /* each configuration at its own best lr; rows in value order */
    CHECK(row_has(csv, "\"quad\",\"beta2\",\"adam beta1=0.8\",0.999,",
                  ",0.1,2,1,0.75,1.25,0,4,0,\"adam beta1=0.8 beta2=0.999\""));
    CHECK(row_has(csv, "\"quad\",\"beta2\",\"adam beta1=0.8\",0.9,",
                  ",0.01,2,2,1.75,2.25,0,4,0,\"adam beta1=0.8 beta2=0.9\""));
    CHECK(strstr(csv, "\"adam beta1=0.8\",0.9,") < strstr(csv, "\"adam beta1=0.8\",0.99,") &&
          strstr(csv, "\"adam beta1=0.8\",0.99,") < strstr(csv, "\"adam beta1=0.8\",0.999,"));
    /* every lr diverged: no best lr, marked */
    CHECK(row_has(csv, "\"quad\",\"beta2\",\"adam beta1=0.9\",0.9,", ",,0,,,,4,4,1,\"adam beta1=0.9 beta2=0.9\""));
    CHECK(row_has(csv, "\"quad\",\"momentum\",\"sgd\",0.5,", ",0.01,2,3,2.75,3.25,0,4,0,\"sgd momentum=0.5\""));
    free(csv);

    /* one figure per (workload, key), reading hp_sweep.csv, a line per group */
    char *gp = slurp(out, "hp_quad_beta2.gp");
    CHECK(gp != NULL);
    CHECK(gp && strstr(gp, "'hp_sweep.csv'") && strstr(gp, "quad: final loss at the best lr vs beta2"));
    CHECK(gp && strstr(gp, "sel(l) = strcol(1) eq \"quad\" && strcol(2) eq \"beta2\" && strcol(3) eq l"));
    CHECK(gp && count_of(gp, "with linespoints") == 2 && strstr(gp, "title \"adam beta1=0.8\"") &&
          strstr(gp, "title \"adam beta1=0.9\""));
    /* beta2 0.9, 0.99, 0.999: the axis is 1 - beta2 on a log scale, reversed,
     * the tics naming the values */
    CHECK(gp && strstr(gp, "set logscale x") && strstr(gp, "XV(v) = 1 - v") && strstr(gp, "using (XV($4))") &&
          strstr(gp, "set xtics (\"0.9\" 0.0999999") && strstr(gp, "(spaced by 1 - value, log scale)"));
    {
        double a = NAN, b = NAN;
        const char *xr = gp ? strstr(gp, "set xrange [") : NULL;
        CHECK(xr && sscanf(xr, "set xrange [%lf:%lf]", &a, &b) == 2 && a > b && b > 0);
    }
    /* the configuration that diverged at every lr: an x along the top, in a
     * strip above the points; room below the lowest point too */
    CHECK(gp && strstr(gp, "$12 == 1") && strstr(gp, "title \"x at the top: every lr diverged\""));
    CHECK(gp && strstr(gp, ", graph 0.05   # and room below the lowest point\n"));
    free(gp);
    gp = slurp(out, "hp_quad_beta1.gp");
    /* beta1 0.8, 0.9: less than a decade of 1 - value apart, a linear axis of the values */
    CHECK(gp && strstr(gp, "unset logscale x") && strstr(gp, "XV(v) = v") && strstr(gp, "set xtics (\"0.8\" 0.8"));
    /* the line of beta2 0.9 has its beta1 0.9 diverged everywhere: a mark */
    CHECK(gp && count_of(gp, "with linespoints") == 3 && strstr(gp, "title \"adam beta2=0.999\"") &&
          count_of(gp, "$12 == 1") == 1);
    free(gp);
    gp = slurp(out, "hp_quad_momentum.gp");
    CHECK(gp && count_of(gp, "with linespoints") == 1 && strstr(gp, "title \"sgd\"") && !strstr(gp, "$12 == 1"));
    /* gnuplot's axis, with room above and below the points (one at a tic's value would sit on the border) */
    CHECK(gp && strstr(gp, "set offsets 0, 0, graph 0.05, graph 0.05\n"));
    free(gp);
    CHECK(!exists(out, "hp_flat_beta2.gp") && !exists(out, "hp_flat_momentum.gp") &&
          !exists(out, "hp_quad_clip_norm.gp"));

    /* listed under its workload, after the lr figure; the file documented */
    char *md = slurp(out, "summary.md");
    CHECK(md != NULL);
    if (md) {
        const char *lr = strstr(md, "lr_quad.gp"), *hp = strstr(md, "hp_quad_beta2.gp"),
                   *flat = strstr(md, "lr_flat.gp");
        CHECK(lr && hp && flat && lr < hp && (hp < flat) == (lr < flat));
        CHECK(strstr(md, "Sensitivity to beta2") && strstr(md, "Sensitivity to momentum"));
        CHECK(strstr(md, "| hp_sweep.csv |"));
    }
    free(md);
    char *html = slurp(out, "index.html");
    CHECK(html && strstr(html, "hp_quad_beta1.gp"));
    free(html);
    if (have_gnuplot) {
        check_pngs_of_page(out);
        CHECK(exists(out, "hp_quad_beta2.png") && exists(out, "hp_quad_beta2.svg"));
        html = slurp(out, "index.html");
        CHECK(html && !strstr(html, "Not rendered"));
        free(html);
    }
}

/* A configuration of the hp_ fixtures: its optimizer, its settings (JSON
 * members) and the one lr it ran at, with 2 seeds. */
typedef struct hp_cfg {
    const char *opt, *extra;
    double lr;
} hp_cfg;

/* A database of workload wl's configurations cfg[0..n) in DIR/NAME.db, its
 * report in DIR/NAME; the report's hp_sweep.csv (to free; NULL without). */
static char *hp_fixture_csv(const char *dir, const char *name, const char *wl, const hp_cfg *cfg, size_t n)
{
    char db[600], out[600];
    snprintf(db, sizeof db, "%s/%s.db", dir, name);
    snprintf(out, sizeof out, "%s/%s", dir, name);
    ob_err e = {0};
    int64_t bench = 0;
    ob_store *s = fresh_bench(db, name, &bench);
    for (size_t i = 0; i < n; i++)
        for (int seed = 0; seed < 2; seed++) {
            const double f = 1.0 + 0.25 * (double)i + (seed ? 0.125 : -0.125);
            fx_add(s, bench, &(fx_run){wl, cfg[i].opt, cfg[i].extra, cfg[i].lr, seed, "done", f, 10, 1.0, 1.5, 4096,
                                       800, f + 0.5, NAN, 0});
        }
    ob_store_finish_benchmark(s, bench, &e);
    ob_store_close(s);
    ob_report_result res;
    CHECK_OK(report(db, out, 0, NULL, &res, NULL, 0, &e), &e);
    return slurp(out, "hp_sweep.csv");
}

/* A setting swept over a text and a number beside another number (the text
 * holds a blank followed by a digit: "x 1", one value, not a token " 1"):
 * the other number's lines, one per value of the setting, and no line or
 * figure of the setting, whose one numeric value makes no line; and, on the
 * same key, an optimizer with a line beside one whose configurations make
 * none (each a point of a line of its own), which is a scatter of its
 * configurations. */
static void test_hp_sweep_text(const char *dir)
{
    static const hp_cfg cfg[] = {
        {"adam", "\"beta2\":0.9,\"mode\":\"x 1\"", 0.01}, {"adam", "\"beta2\":0.99,\"mode\":\"x 1\"", 0.01},
        {"adam", "\"beta2\":0.9,\"mode\":2", 0.01},       {"adam", "\"beta2\":0.99,\"mode\":2", 0.01},
        {"adamw", "\"beta1\":0.8,\"beta2\":0.9", 0.01},   {"adamw", "\"beta1\":0.9,\"beta2\":0.99", 0.01},
    };
    char *csv = hp_fixture_csv(dir, "hptext", "txt", cfg, sizeof cfg / sizeof *cfg);
    CHECK(csv != NULL);
    CHECK(rows_with(csv, "\"txt\",\"beta2\",\"adam mode=x 1\",") == 2);
    CHECK(rows_with(csv, "\"txt\",\"beta2\",\"adam mode=2\",") == 2);
    CHECK(row_has(csv, "\"txt\",\"beta2\",\"adam mode=x 1\",0.99,", "\"adam beta2=0.99 mode=x 1\""));
    CHECK(rows_with(csv, "\"txt\",\"beta2\",\"adamw (each configuration)\",") == 2);
    CHECK(rows_with(csv, "\"txt\",\"beta1\",\"adamw (each configuration)\",") == 2);
    CHECK(rows_with(csv, "\"txt\",\"mode\"") == 0);
    CHECK(rows_with(csv, "\"") == 8 + 1);
    free(csv);
    char path[700];
    snprintf(path, sizeof path, "%s/hptext/hp_txt_mode.gp", dir);
    CHECK(access(path, F_OK) != 0);
}

/* A searched lr: an optimizer whose configurations each ran at one lr of
 * their own is a scatter against the lr (its last configuration at the
 * smallest lr: the largest is not the last one's); one with a configuration
 * run at several lrs (a grid) is not. */
static void test_hp_lr_scatter(const char *dir)
{
    static const hp_cfg cfg[] = {
        {"adamw", "\"beta1\":0.7", 0.03},   {"adamw", "\"beta1\":0.8", 0.1},   {"adamw", "\"beta1\":0.9", 0.01},
        {"sgd", "\"momentum\":0.5", 0.01}, {"sgd", "\"momentum\":0.5", 0.1}, {"sgd", "\"momentum\":0.9", 0.03},
    };
    char *csv = hp_fixture_csv(dir, "hplr", "lrs", cfg, sizeof cfg / sizeof *cfg);
    CHECK(csv != NULL);
    CHECK(rows_with(csv, "\"lrs\",\"lr\",\"adamw (each configuration)\",") == 3);
    CHECK(row_has(csv, "\"lrs\",\"lr\",\"adamw (each configuration)\",0.01,", "\"adamw beta1=0.9\""));
    CHECK(rows_with(csv, "\"lrs\",\"lr\",\"sgd") == 0);
    free(csv);
}

/* Without sweeps: no hp_sweep.csv, no hp_ figure (also none left from an
 * earlier report into the folder: the files its list names and this report
 * does not write are removed; a file no report wrote stays). */
static void test_no_hp_sweep(const char *db, const char *dir)
{
    char out[600];
    snprintf(out, sizeof out, "%s/nohp", dir);
    ob_err e = {0};
    CHECK(ob_mkdirs(out, &e) == OB_OK);
    static const char *const planted[] = {"hp_sweep.csv", "hp_gone_beta2.png", "mine.csv", ".optbench-report"};
    for (int i = 0; i < 4; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", out, planted[i]);
        FILE *f = fopen(p, "w");
        if (f && i == 3) fputs("hp_sweep.csv\nhp_gone_beta2.png\n../outside.csv\nsummary.md\n", f);
        if (f) fclose(f);
    }
    /* staging folders of stopped reports: a dead process's, untouched for an
     * hour, goes; a live process's (this one) stays */
    char dead[700], live[700];
    snprintf(dead, sizeof dead, "%s/.optbench-report-999999999-abcdef", out);
    snprintf(live, sizeof live, "%s/.optbench-report-%ld-abcdef", out, (long)getpid());
    CHECK(mkdir(dead, 0755) == 0 && mkdir(live, 0755) == 0);
    char junk[800];
    snprintf(junk, sizeof junk, "%s/runs.csv", dead);
    FILE *fj = fopen(junk, "w");
    if (fj) fclose(fj);
    struct utimbuf hour_ago = {time(NULL) - 3600, time(NULL) - 3600};
    CHECK(utime(dead, &hour_ago) == 0 && utime(live, &hour_ago) == 0);
    /* a dead process's of this host and PID namespace goes at once; one of
     * another (a container sharing the host's name, a folder shared between
     * machines: its process cannot be asked) stays for ten minutes */
    char here[700], there[700], host[256] = "", ns[128] = "";
    CHECK(gethostname(host, sizeof host - 1) == 0);
    ssize_t nsl = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ns[nsl > 0 ? nsl : 0] = 0;
    snprintf(here, sizeof here, "%s/.optbench-report-999999998-abcdef", out);
    snprintf(there, sizeof there, "%s/.optbench-report-999999997-abcdef", out);
    CHECK(mkdir(here, 0755) == 0 && mkdir(there, 0755) == 0);
    for (int k = 0; k < 2; k++) {
        char hp[800];
        snprintf(hp, sizeof hp, "%s/.host", k ? there : here);
        FILE *fh = fopen(hp, "w");
        if (fh) {
            if (k) fprintf(fh, "%s %s\n", host, "pid:[1]"); /* another PID namespace of this host */
            else fprintf(fh, "%s %s\n", host, ns);
            fclose(fh);
        }
    }
    /* the dead report of this host was stopped while it moved its files in:
     * summary.csv, which it moved and listed, is a report's, not someone's */
    {
        char pl[800], ps[800];
        snprintf(pl, sizeof pl, "%s/.optbench-report", here);
        snprintf(ps, sizeof ps, "%s/summary.csv", out);
        FILE *fl = fopen(pl, "w"), *fs = fopen(ps, "w");
        if (fl) {
            fputs("summary.csv\n", fl);
            fclose(fl);
        }
        if (fs) fclose(fs);
    }
    char outside[700];
    snprintf(outside, sizeof outside, "%s/outside.csv", dir);
    FILE *fo = fopen(outside, "w");
    if (fo) fclose(fo);
    ob_report_result res;
    CHECK_OK(report(db, out, 0, NULL, &res, NULL, 0, &e), &e);
    CHECK(!exists(out, "hp_sweep.csv") && !exists(out, "hp_gone_beta2.png"));
    CHECK(exists(out, "mine.csv") && exists(dir, "outside.csv") && exists(out, "summary.md"));
    /* the new list names what this report wrote, and nothing else */
    char *list = slurp(out, ".optbench-report");
    CHECK(list && strstr(list, "summary.md\n") && strstr(list, "runs.csv\n") && !strstr(list, "mine.csv") &&
          !strstr(list, "hp_sweep.csv") && !strstr(list, ".optbench-report"));
    free(list);
    /* no staging folder of this report is left behind, the dead one is gone */
    DIR *dp = opendir(out);
    int staged = 0;
    for (struct dirent *de; dp && (de = readdir(dp));) staged += !strncmp(de->d_name, ".optbench-report-", 17);
    if (dp) closedir(dp);
    struct stat sb;
    CHECK_MSG(staged == 2 && stat(live, &sb) == 0 && stat(dead, &sb) != 0 && stat(here, &sb) != 0 &&
                  stat(there, &sb) == 0,
              "%d staging folders", staged);
    CHECK(!exists(out, ".host"));
    rmdir(live);
    char hp[800];
    snprintf(hp, sizeof hp, "%s/.host", there);
    remove(hp);
    rmdir(there);
    char *md = slurp(out, "summary.md");
    CHECK(md && !strstr(md, "`hp_") && !strstr(md, "(hp_") && !strstr(md, "Sensitivity to"));
    free(md);
}

/* An optimizer whose final loss lies far above where training started (rprop
 * on bert-tiny) would squeeze every other line of the lr figure into its
 * bottom: the y axis stops at 1.5 x the initial loss (the largest first loss
 * of the runs that did not diverge) and the lr whose median is above it is a
 * triangle at the top edge, for that optimizer only. Without such a point:
 * no cap. */
static void test_lr_off_scale(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "offscale");
    const char *out = fix.out;
    /* curves L(t) = final + max(0, T - t) / 2: first losses 6 and 6.2 (good),
     * 6 (set below: it rose to a final 20 at lr 0.01) and 7 (bad), 100 and 100
     * (gone: diverged at both lrs, not counted; its median is infinite: an x,
     * no triangle); the largest first loss 7, the cap 10.5 */
    const struct {
        const char *opt, *status;
        double lr, final, T;
    } rows[] = {{"good", "done", 0.01, 1.0, 10}, {"good", "done", 0.1, 1.2, 10}, {"bad", "done", 0.01, 20, 0},
                {"bad", "done", 0.1, 2.0, 10},   {"gone", "diverged", 0.01, 0, 0}, {"gone", "diverged", 0.1, 0, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int64_t id = fx_add(s, fix.bench, &(fx_run){"w", rows[i].opt, NULL, rows[i].lr, 0, rows[i].status,
                                                    rows[i].final, rows[i].T, 1.0, 1.5, 4096, 0, 1.5, NAN, 0});
        if (i == 2) { /* bad at lr 0.01 started at 6 like the others and ended at 20 */
            char sql[128];
            snprintf(sql, sizeof sql, "UPDATE curves SET loss = 6 WHERE run_id = %lld AND step = 0", (long long)id);
            CHECK(sqlite3_exec(ob_store_db(s), sql, NULL, NULL, NULL) == SQLITE_OK);
        }
    }
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    char *gp = slurp(out, "lr_w.gp");
    CHECK(gp && strstr(gp, "CAP = 10.5\n") && strstr(gp, "set yrange [0:"));
    CHECK(gp && count_of(gp, "$7 > CAP && $7 < 1e308 ? CAP : NaN") == 1 && strstr(gp, "sel(\"bad\") && $7 > CAP"));
    CHECK(gp && strstr(gp, "title \"x k/n at the top: k of n seeds diverged\""));
    CHECK(gp && strstr(gp, "title \"triangle: off the scale\""));
    /* one row of marks, gone's (good and bad have none), named at its right;
     * the cap's dotted line parts it from the data, "diverged" beside it */
    CHECK(gp && count_of(gp, "at graph 1, second ") == 1 && strstr(gp, "set label \"gone\" at graph 1, second ") &&
          strstr(gp, "set rmargin ") && strstr(gp, "set label \"diverged\" at graph 0, second ") &&
          !strstr(gp, "set offsets"));
    CHECK(gp && count_of(gp, "axes x1y2 with points") == 1 && strstr(gp, "sel(\"gone\") && $6 + $15 > 0 ? "));
    /* the lines and bands stop at the cap, on its dotted line, and the tics end there */
    CHECK(gp && strstr(gp, "cut(v) = v > CAP && v < 1e308 ? CAP : v") && strstr(gp, "set arrow from graph 0, first CAP") &&
          strstr(gp, ", 10.5\n") && strstr(gp, "set ytics "));
    CHECK(gp && count_of(gp, "? cut($7) : NaN) with linespoints") == count_of(gp, "with linespoints") &&
          count_of(gp, "$6 == 0 && $15 == 0 ? cut($9) : NaN) with filledcurves") == count_of(gp, "with filledcurves"));
    free(gp);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "stops at 1.5 times the initial loss"));
    free(md);
    CHECK(!exists(dir, "tt/lr_wa.gp")); /* test_time_to_target's report: one lr, no lr figure */
}

/* The lr figure where seeds diverged at some lrs (7 seeds at 0.001, 0.0012,
 * ..., 0.0018; 0, 3, 4, 5 and 5 of them diverged, the survivors at the last
 * lrs below the best lr's median): the median counts a diverged seed as +inf
 * (a gap where most diverged), the band is drawn only where no seed diverged
 * (elsewhere its top is +inf) and the best lr's spread, an lr alone between
 * grid's end and divergence, is a bar; each x along the top says how many of
 * the seeds diverged; every swept lr of a narrow grid is a labelled tic; the
 * legend names the best lr and that it is at the grid's edge. A second
 * workload on a 10-point grid over three decades: its best lr, 0.464, is a
 * labelled tic. */
static void test_lr_diverged_seeds(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "lrdiv");
    const char *out = fix.out;
    static const double lrs[5] = {0.001, 0.0012, 0.0014, 0.0016, 0.0018};
    static const int n_div[5] = {0, 3, 4, 5, 5};
    for (int l = 0; l < 5; l++)
        for (int seed = 0; seed < 7; seed++) {
            int div = seed < n_div[l];
            /* the best lr's median 7.3; the two survivors of 0.0016 and 0.0018 at 6.5 and 6.6 */
            double final = (l == 0 ? 7.0 : l < 3 ? 8.0 : 6.0) + 0.1 * seed;
            fx_add(s, fix.bench, &(fx_run){"w", "sgd", NULL, lrs[l], seed, div ? "diverged" : "done", final, 0, 1.0,
                                           1.5, 4096, 0, 1.5, NAN, 0});
        }
    for (int k = 0; k < 10; k++) {
        double lr = 0.001 * pow(10, k / 3.0);
        char t[32];
        snprintf(t, sizeof t, "%.3g", lr);
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, fix.bench, &(fx_run){"g", "adam", NULL, strtod(t, NULL), seed, "done",
                                           5.0 + abs(k - 8) + 0.1 * seed, 0, 1.0, 1.5, 4096, 0, 1.5, NAN, 0});
    }
    /* a seed that finished without a finite loss (not flagged diverged) is
     * marked as a diverged one is, and the legend and caption say so */
    for (int l = 0; l < 2; l++)
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, fix.bench, &(fx_run){"nf", "adam", NULL, l ? 0.1 : 0.01, seed, "done",
                                           l && seed == 1 ? NAN : 2.0 + 0.1 * seed, 0, 1.0, 1.5, 4096, 0, 1.5, NAN,
                                           0});
    /* one lr, no seed diverged: no k/n labels (gnuplot 5.4 crashed on labels
     * with no point to draw in a file of one row) */
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, fix.bench, &(fx_run){"one", "adam", NULL, 0.01, seed, "done", 1.0 + 0.1 * seed, 0, 1.0, 1.5, 4096,
                                       0, 1.5, NAN, 0});
        /* another optimizer at its own one lr: still no sensitivity */
        fx_add(s, fix.bench, &(fx_run){"one", "sgd", NULL, 0.1, seed, "done", 1.5 + 0.1 * seed, 0, 1.0, 1.5, 4096,
                                       0, 1.5, NAN, 0});
    }
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    /* one lr: no figure (a column of points is no sensitivity), and the
     * report says why */
    char *gp = slurp(out, "lr_one.gp");
    CHECK(!gp && !exists(out, "lr_one.png"));
    free(gp);
    char *md1 = slurp(out, "summary.md");
    CHECK(md1 && strstr(md1, "Not drawn: each optimizer ran at one learning rate, so there is no sensitivity to show"));
    free(md1);
    gp = slurp(out, "lr_w.gp");
    /* the band: only where no seed diverged */
    CHECK(gp && count_of(gp, "with filledcurves") == 1 &&
          strstr(gp, "using 3:(sel(\"sgd\") && $6 == 0 && $15 == 0 ? cut($8) : NaN):(sel(\"sgd\") && $6 == 0 && $15 == 0 ? cut($9) : NaN) with filledcurves"));
    /* the best lr alone between the grid's end and divergence: its spread a bar */
    CHECK(gp && strstr(gp, "sel(\"sgd\") && ($3 == 0.001) ? cut($7) : NaN)") && count_of(gp, "with yerrorbars") == 1);
    /* k/n beside each x */
    CHECK(gp && strstr(gp, ":(sprintf(\"%d/%d\", $6 + $15, $5)) axes x1y2 with labels"));
    CHECK(gp && strstr(gp, "title \"sgd, best lr 0.001 (grid edge)\""));
    free(gp);
    /* every lr of the narrow grid labelled, none an unlabelled tic (in the
     * PNG: a PDF narrow enough labels fewer) */
    gp = slurp_png(out, "lr_w.gp");
    CHECK(gp && strstr(gp, "set xtics (\"0.001\" 0.001, \"0.0012\" ") && strstr(gp, "\"0.0014\" ") &&
          strstr(gp, "\"0.0016\" ") && strstr(gp, "\"0.0018\" ") && !strstr(gp, "\"\" 0.0"));
    free(gp);
    char *csv = slurp(out, "lr_sweep.csv"); /* 5 of 7 diverged: the median is +inf */
    CHECK(csv && strstr(csv, "\"w\",\"sgd\",0.0016,7,7,5,inf,"));
    free(csv);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "labelled k/n: k of its n seeds diverged") && strstr(md, "the band is left out"));
    free(md);
    gp = slurp(out, "lr_nf.gp");
    CHECK(gp && strstr(gp, ":(sprintf(\"%d/%d\", $6 + $15, $5)) axes x1y2 with labels") &&
          strstr(gp, "sel(\"adam\") && $6 + $15 > 0 ? 0.9") && strstr(gp, " : NaN) axes x1y2 with points") &&
          strstr(gp, "title \"x k/n at the top: k of n seeds diverged or ended non-finite\""));
    free(gp);
    gp = slurp(out, "lr_w.gp"); /* diverged seeds alone: the legend says diverged */
    CHECK(gp && strstr(gp, "title \"x k/n at the top: k of n seeds diverged\""));
    free(gp);
    csv = slurp(out, "lr_sweep.csv"); /* 1 of 3 non-finite (+inf): the median is 2.2 */
    CHECK(csv && strstr(csv, "\"nf\",\"adam\",0.1,3,3,0,2.2,"));
    free(csv);
    md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "diverged or finished without a finite loss"));
    free(md);
    gp = slurp(out, "lr_g.gp");
    CHECK(gp && strstr(gp, "\"0.464\" 0.464") && strstr(gp, "title \"adam, best lr 0.464\""));
    free(gp);
}

/* The y value of the strip row that label or plot text at p gives: the
 * number after its "graph " or "? ". */
static double row_y(const char *p, const char *after)
{
    const char *q = p ? strstr(p, after) : NULL;
    return q ? strtod(q + strlen(after), NULL) : NAN;
}

/* The lr figure's strip of divergence marks: a row only for each optimizer
 * with a mark (4 of 13 here, not one per optimizer), far enough apart for an
 * x and its label at the PNG's size, each named at its right in a right
 * margin; the y tics and grid stop at the top of the data, under the strip,
 * where a line parts the two and "diverged" stands beside it. The x tics:
 * the grid's ends and each best lr keep a label where they crowd (a 5-point
 * grid 0.001 to 0.0018 whose best is 0.0012, beside another one to 1: the
 * end 0.001 on a second line: too close even for turned labels), interior
 * lrs do without. On a 36-point grid, where flat labels would crowd, every
 * lr is labelled, turned by 45 degrees. There
 * the k/n labels of neighbouring x's that read the same are one at the right
 * of the run, and a different first one (1/2 before 2/2's) at its left. */
static void test_lr_strip(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "strip");
    const char *out = fix.out;
    static const double lrs[3] = {0.01, 0.1, 1};
    for (int o = 0; o < 13; o++) {
        char name[16];
        snprintf(name, sizeof name, o < 9 ? "ok%d" : "bad%d", o);
        for (int l = 0; l < 3; l++)
            for (int seed = 0; seed < 2; seed++) {
                /* finals 0.01 to 10 (a log axis, first losses up to 30: no cap) */
                double final = 0.01 * pow(10, (o % 9) / 3.0) * (1 + l) + 0.001 * seed;
                fx_add(s, fix.bench, &(fx_run){"w", name, NULL, lrs[l], seed, o < 9 ? "done" : "diverged", final, 40,
                                               1.0, 1.5, 4096, 0, 1.5, NAN, 0});
            }
    }
    static const double narrow[5] = {0.001, 0.0012, 0.0014, 0.0016, 0.0018};
    for (int l = 0; l < 5; l++)
        for (int seed = 0; seed < 2; seed++)
            fx_add(s, fix.bench, &(fx_run){"t", "adam", NULL, narrow[l], seed, "done", (l == 1 ? 1.0 : 2.0) + 0.1 * seed,
                                           0, 1.0, 1.5, 4096, 0, 1.5, NAN, 0});
    for (int l = 0; l < 3; l++)
        for (int seed = 0; seed < 2; seed++)
            fx_add(s, fix.bench, &(fx_run){"t", "sgd", NULL, lrs[l], seed, "done", (l == 1 ? 1.5 : 3.0) + 0.1 * seed, 0,
                                           1.0, 1.5, 4096, 0, 1.5, NAN, 0});
    double lr24 = 0;
    for (int k = 0; k < 36; k++) {
        char t[32];
        snprintf(t, sizeof t, "%.3g", 1e-5 * pow(10, k / 5.0));
        double lr = strtod(t, NULL);
        if (k == 24) lr24 = lr;
        for (int seed = 0; seed < 2; seed++)
            fx_add(s, fix.bench, &(fx_run){"dense", "a", NULL, lr, seed, k > 24 || (k == 24 && seed == 0) ? "diverged" : "done",
                                           1.0 + 0.01 * k + 0.1 * seed, 0, 1.0, 1.5, 4096, 0, 1.5, NAN, 0});
    }
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    char *gp = slurp(out, "lr_w.gp");
    CHECK(gp && count_of(gp, "at graph 1, second ") == 4 && !strstr(gp, "set label \"ok"));
    double ys[4];
    for (int o = 9; o < 13; o++) {
        char label[64], mark[64];
        snprintf(label, sizeof label, "set label \"bad%d\" at graph 1, second ", o);
        snprintf(mark, sizeof mark, "sel(\"bad%d\") && $6 + $15 > 0 ? ", o);
        const char *p = gp ? strstr(gp, label) : NULL;
        double y = row_y(p, ", second "), ym = row_y(gp ? strstr(gp, mark) : NULL, "? ");
        /* its marks on its name's row, in the strip at the top */
        CHECK_MSG(p && strstr(p, "left offset char ") && strstr(p, "font \",8\" tc lt ") && fabs(y - ym) < 1e-3 &&
                      y < 1 && y > 0.6,
                  "bad%d at %g (marks %g)", o, y, ym);
        ys[o - 9] = y;
    }
    /* rows at least 17 px apart in a plot area under 400 px tall */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            CHECK_MSG(fabs(ys[i] - ys[j]) >= 17.0 / 400, "rows at %g and %g", ys[i], ys[j]);
    CHECK(gp && count_of(gp, "axes x1y2 with points") == 4 && strstr(gp, "set rmargin "));
    /* the tics stop at the top of the data, where the line is */
    double bot = NAN, top = NAN, t0 = NAN, step = NAN, tend = NAN, line = NAN;
    const char *p = gp ? strstr(gp, "\nset yrange [") : NULL;
    CHECK(p && sscanf(p, "\nset yrange [%lf:%lf]", &bot, &top) == 2);
    p = gp ? strstr(gp, "\nset ytics ") : NULL;
    CHECK(p && sscanf(p, "\nset ytics %lf, %lf, %lf", &t0, &step, &tend) == 3);
    p = gp ? strstr(gp, "\nset arrow from graph 0, first ") : NULL;
    CHECK(p && sscanf(p, "\nset arrow from graph 0, first %lf", &line) == 1 && strstr(p, "nohead"));
    CHECK_MSG(line == tend && t0 == bot && step == 10 && tend >= 10 && tend < 30 && top > 3 * tend,
              "yrange [%g:%g], ytics %g, %g, %g, line at %g", bot, top, t0, step, tend, line);
    CHECK(gp && strstr(gp, "set label \"diverged\" at graph 0, second ") && !strstr(gp, "set offsets") &&
          strstr(gp, "set logscale y"));
    free(gp);
    /* adam's best 0.0012 and the grid's two ends labelled, 0.001 on a second line */
    gp = slurp_png(out, "lr_t.gp");
    CHECK_MSG(gp && strstr(gp, "\"0.0012\" 0.00119999") && strstr(gp, "\"1\" 1)") && strstr(gp, "\"0.1\" 0.1") &&
                  strstr(gp, "set label 9001 \"0.001\" at first 0.001, graph 0") && strstr(gp, "\"\" 0.0014 1") &&
                  strstr(gp, "set xlabel offset 0, -1"),
              "%s", gp ? gp : "no lr_t.gp");
    free(gp);
    gp = slurp_png(out, "lr_dense.gp");
    char right[96], left[96];
    snprintf(right, sizeof right, "\nKNR_0(x) = x == 100\n");
    snprintf(left, sizeof left, "\nKNL_0(x) = x == %.17g\n", lr24);
    CHECK_MSG(gp && count_of(gp, "with labels left") == 1 && strstr(gp, right) && count_of(gp, "with labels right") == 1 &&
                  strstr(gp, left) && strstr(gp, "sel(\"a\") && $6 + $15 > 0 && KNR_0($3) ? ") &&
                  strstr(gp, "sel(\"a\") && $6 + $15 > 0 && KNL_0($3) ? "),
              "%s", gp ? gp : "no lr_dense.gp");
    /* 36 lrs a fifth of a decade apart: each labelled, the labels turned
     * (flat, they would run into each other), 100 as such */
    CHECK_MSG(gp && strstr(gp, "set xtics rotate by 45 right (\"1e-05\" ") && strstr(gp, ", \"100\" 100)") &&
                  !strstr(gp, "\"\" ") && !strstr(gp, "a second line of lr labels"),
              "%s", gp ? gp : "no lr_dense.gp");
    free(gp);
}

/* The lr figure's PDF at a column's width (3.3 inches, 6-point text): its
 * tic labels, k/n labels and strip laid out for the axis gnuplot draws
 * there, measured in its characters, not for the PNG's. A dense grid (16
 * lrs, 0.001 to 3) whose two largest lrs diverged for a and b: no two
 * labelled tics closer than their text needs (until 2026-12-06 the PNG's
 * labels, turned, 0.002 and 0.003 touched), the k/n label at the right of
 * the grid's last x inside the plot (it ran into the strip's names), the
 * strip's rows a line of text apart (they were 0.7 of one), the names in
 * the right margin after the axis. Drawn by gnuplot, which reports the axis
 * (GPVAL_TERM_*), its range, its tics and the labels as drawn. */
static void test_lr_column_pdf(const char *dir, const char *gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "column");
    static const double lrs[16] = {0.001, 0.002, 0.003, 0.005, 0.007, 0.01, 0.02, 0.03,
                                   0.05,  0.1,   0.2,   0.3,   0.5,   1,    2,    3};
    static const char *const opts[3] = {"a", "b", "c"};
    for (int o = 0; o < 3; o++)
        for (int l = 0; l < 16; l++)
            for (int seed = 0; seed < 3; seed++) {
                const int div = o < 2 && l >= 14;
                const double final = 0.05 + 0.02 * (l - 9 - o) * (l - 9 - o) + 0.01 * seed;
                fx_add(s, fix.bench, &(fx_run){"w", opts[o], NULL, lrs[l], seed, div ? "diverged" : "done", final, 0,
                                               1.0, 1.5, 4096, 0, 1.5, NAN, 0});
            }
    ob_report_result res;
    fixture_report(&fix, gnuplot != NULL, &res);
    CHECK(res.n_render_failed == 0);
    if (!gnuplot) return;
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' -e 'PDF_WIDTH = 3.3' -e \"load 'lr_w.gp'; "
             "print sprintf('AXIS %%.9g H %%.9g', (GPVAL_TERM_XMAX - GPVAL_TERM_XMIN) * GPVAL_TERM_SCALE / GPVAL_TERM_HCHAR, "
             "(GPVAL_TERM_YMAX - GPVAL_TERM_YMIN) * GPVAL_TERM_SCALE / GPVAL_TERM_VCHAR); "
             "print sprintf('XR %%.17g %%.17g Y2 %%.17g %%.17g', GPVAL_X_MIN, GPVAL_X_MAX, GPVAL_Y2_MIN, GPVAL_Y2_MAX); "
             "show xtics; show label; print sprintf('KNR %%d %%d', KNR_0(3), KNR_1(3))\" 2>&1",
             fix.out, gnuplot);
    FILE *p = popen(cmd, "r");
    char *outp = NULL;
    size_t len = 0;
    char line[8192];
    while (p && fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        char *g = realloc(outp, len + l + 1);
        if (!g) break;
        outp = g;
        memcpy(outp + len, line, l + 1);
        len += l;
    }
    if (p) pclose(p);
    double axis = NAN, h = NAN, xmin = NAN, xmax = NAN, y2min = 0, y2max = 1;
    const char *q = outp ? strstr(outp, "AXIS ") : NULL;
    CHECK_MSG(q && sscanf(q, "AXIS %lf H %lf", &axis, &h) == 2 && axis > 30 && axis < 70 && h > 5,
              "gnuplot said: %s", outp ? outp : "nothing");
    q = outp ? strstr(outp, "XR ") : NULL;
    CHECK(q && sscanf(q, "XR %lf %lf Y2 %lf %lf", &xmin, &xmax, &y2min, &y2max) == 4 && xmin > 0 && xmax > xmin &&
          y2max > y2min);
    /* the tics as drawn: every two labelled ones apart by more than their
     * text (turned: its height over sin 45, about 2.3 characters; flat:
     * half of each and a character) */
    const int turned = outp && strstr(outp, "rotated by 45");
    q = outp ? strstr(outp, "explicit list (") : NULL;
    double prev_v = NAN;
    int prev_l = 0, n_lab = 0;
    for (q = q ? q + strlen("explicit list (") : NULL; q && *q == '"';) {
        const char *e = strchr(q + 1, '"');
        if (!e) break;
        const int l = (int)(e - q - 1);
        char *end;
        const double v = strtod(e + 1, &end);
        if (l > 0) {
            n_lab++;
            if (!isnan(prev_v) && xmax > xmin) {
                const double gap = log(v / prev_v) / log(xmax / xmin) * axis;
                const double need = turned ? 2.3 : (l + prev_l) / 2.0 + 1;
                CHECK_MSG(gap >= need, "tic labels at %g and %g: %.2f characters apart, %s, on %.1f", prev_v, v, gap,
                          turned ? "turned" : "flat", axis);
            }
            prev_v = v, prev_l = l;
        }
        q = strchr(end, '"');
        const char *close = strchr(end, ')');
        if (close && q && close < q) break;
    }
    CHECK_MSG(n_lab >= 5, "%d labelled tics", n_lab);
    /* the k/n label ("3/3") right of the x at 3, where there is one, ends
     * inside the plot: a character after the x and 3 long */
    int r0 = 1, r1 = 1;
    q = outp ? strstr(outp, "KNR ") : NULL;
    if (q) sscanf(q, "KNR %d %d", &r0, &r1);
    const double x3 = xmax > xmin ? log(3 / xmin) / log(xmax / xmin) * axis : NAN;
    CHECK_MSG(!(r0 || r1) || x3 + 1 + 3 <= axis + 0.01, "the k/n label at 3 ends at %.2f of %.2f characters",
              x3 + 4, axis);
    /* the rows' names: a line of text apart, after the axis */
    double ya = NAN, yb = NAN;
    for (int o = 0; o < 2; o++) {
        char want[64];
        snprintf(want, sizeof want, "\"%s\" at (graph 1, ", opts[o]);
        const char *lb = outp ? strstr(outp, want) : NULL;
        double y = NAN;
        if (lb) {
            lb += strlen(want);
            /* gnuplot leaves out a coordinate system the same as the previous one's */
            if (!strncmp(lb, "second ", 7)) y = (strtod(lb + 7, NULL) - y2min) / (y2max - y2min);
            else if (!strncmp(lb, "graph ", 6)) y = strtod(lb + 6, NULL);
            else if ((*lb >= '0' && *lb <= '9') || *lb == '.') y = strtod(lb, NULL);
        }
        CHECK_MSG(!isnan(y) && y > 0.5 && y < 1, "%s's name at %g", opts[o], y);
        if (o) yb = y;
        else ya = y;
    }
    CHECK_MSG(fabs(ya - yb) * h >= 1.0, "the strip's rows %.2f lines apart", fabs(ya - yb) * h);
    free(outp);
}

/* The lr figure on gnuplot's own log axis (no divergence, no cap), final
 * losses from 0.006 to 11: room around the points, not whole decades beyond
 * them (widened to decades, offset and widened again, it ran from 1e-4 to
 * 1000). */
static void test_lr_log_axis(const char *dir, const char *gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "logaxis");
    const struct {
        const char *opt;
        double lr, final;
    } rows[] = {{"a", 0.01, 11}, {"a", 0.1, 2}, {"b", 0.01, 0.05}, {"b", 0.1, 0.006}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        fx_add(s, fix.bench, &(fx_run){"w", rows[i].opt, NULL, rows[i].lr, 0, "done", rows[i].final, 0, 1.0, 1.5,
                                       4096, 0, NAN, NAN, 0});
    ob_report_result res;
    fixture_report(&fix, gnuplot != NULL, &res);
    CHECK(res.n_render_failed == 0);
    char *gp = slurp(fix.out, "lr_w.gp");
    CHECK(gp && strstr(gp, "set logscale y") && strstr(gp, "set offsets 0, 0, graph 0.05, graph 0.05\n") &&
          strstr(gp, "set autoscale yfix") && !strstr(gp, "set yrange"));
    free(gp);
    if (!gnuplot) return;
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' -e \"load 'lr_w.gp'; print GPVAL_Y_MIN, GPVAL_Y_MAX\" 2>&1", fix.out,
             gnuplot);
    FILE *p = popen(cmd, "r");
    double lo = NAN, hi = NAN;
    char line[512];
    while (p && fgets(line, sizeof line, p))
        if (sscanf(line, "%lf %lf", &lo, &hi) != 2) lo = hi = NAN;
    if (p) pclose(p);
    /* 5% of the 3.3 decades on each side: 0.0041 to 16.3 */
    CHECK_MSG(lo > 0.003 && lo < 0.006 && hi > 11 && hi < 25, "y axis %g to %g", lo, hi);
}

/* The held-out metric figure names the metric as the report's table does:
 * "accuracy" for a workload known to measure it (cnn-tiny), "metric" for
 * one that optbench does not know. */
static void test_metric_name(const char *dir)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "metric");
    const char *out = fix.out;
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, fix.bench, &(fx_run){"cnn-tiny", "adam", NULL, 0.01, seed, "done", 1.0, 10, 1.0, 1.5, 4096, 0, 1.5,
                                       0.8 + 0.01 * seed, 0});
        fx_add(s, fix.bench, &(fx_run){"w", "adam", NULL, 0.01, seed, "done", 1.0, 10, 1.0, 1.5, 4096, 0, 1.5,
                                       0.8 + 0.01 * seed, 0});
    }
    ob_report_result res;
    fixture_report(&fix, 0, &res);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "| held-out accuracy |") && strstr(md, "| held-out metric |"));
    CHECK(md && !strstr(md, "accuracy for classifiers"));
    free(md);
    char *gp = slurp(out, "eval_metric_cnn-tiny.gp");
    CHECK_MSG(gp && strstr(gp, "set ylabel \"held-out accuracy\"") && strstr(gp, "held-out accuracy at the end"),
              "%s", gp ? gp : "no eval_metric_cnn-tiny.gp");
    free(gp);
    gp = slurp(out, "eval_metric_w.gp");
    CHECK(gp && strstr(gp, "set ylabel \"held-out metric\"") && !strstr(gp, "accuracy"));
    free(gp);
}

/* Every optimizer gets its own marker shape and dash type as well as a colour
 * (style.gp), so lines that lie on top of each other (adam and adamw where
 * weight decay does not matter) still show both, in colour and in grey: no
 * two series share shape and dashes, no filled shape is drawn after its open
 * twin (it would hide it), no filled square (it would cover a circle), none
 * is a mark the figures use for something else (x: diverged, star: fresh
 * seeds, open circle: best lr), and the lr figure's series take them from
 * style.gp. Reads the reports of test_hp_sweep (8 optimizer labels, swept
 * configurations among them), test_time_to_target and test_lr_off_scale. */
static int filled(int pt) { return pt == 5 || pt == 7 || pt == 9 || pt == 11 || pt == 13 || pt == 15; }
/* A marker's outline: an open shape and its filled twin alike. */
static int outline_of(int pt) { return pt == 4 || pt == 5 ? 4 : pt == 6 || pt == 7 ? 6 : pt - pt % 2; }

static void test_series_styles(const char *dir)
{
    char out[600];
    snprintf(out, sizeof out, "%s/hp", dir);
    char *st = slurp(out, "style.gp");
    CHECK(st != NULL);
    int pt[64], dt[64], n = 0;
    char rgb[64][8], opt[64][32];
    for (const char *p = st; p && n < 64 && (p = strstr(p, "\nset linetype ")); p++) {
        const char *eol = strchr(p + 1, '\n');
        const char *q = strstr(p, " pt "), *r = strstr(p, " dt "), *c = strstr(p, " lc rgb \""), *h = strstr(p, "   # ");
        int lt = 0;
        CHECK_MSG(sscanf(p, "\nset linetype %d", &lt) == 1 && lt == n + 1 && q && r && c && h &&
                      (!eol || (q < eol && r < eol && c < eol && h < eol)) && sscanf(q, " pt %d", &pt[n]) == 1 &&
                      sscanf(r, " dt %d", &dt[n]) == 1 && sscanf(c, " lc rgb \"%7[#0-9a-f]\"", rgb[n]) == 1 &&
                      sscanf(h, "   # %31[^ \n]", opt[n]) == 1,
                  "linetype %d without its colour, pt, dt and optimizer", n + 1);
        n++;
    }
    CHECK_MSG(n == 8, "%d linetypes", n);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(pt[i] != 2 && pt[i] != 3 && pt[i] != 6 && pt[i] != 5, "linetype %d: pt %d", i + 1, pt[i]);
        for (int j = i + 1; j < n; j++) {
            CHECK_MSG(pt[i] != pt[j] || dt[i] != dt[j], "linetypes %d and %d look the same", i + 1, j + 1);
            /* colour and marker: every series its own pair, and an optimizer's
             * configurations an outline each (open and filled twins alike) */
            CHECK_MSG(pt[i] != pt[j] || strcmp(rgb[i], rgb[j]), "linetypes %d and %d share %s and pt %d", i + 1,
                      j + 1, rgb[i], pt[i]);
            CHECK_MSG(strcmp(opt[i], opt[j]) || outline_of(pt[i]) != outline_of(pt[j]),
                      "%s's linetypes %d and %d share an outline (pt %d, pt %d)", opt[i], i + 1, j + 1, pt[i], pt[j]);
            /* open shape i, then the filled one of its shape j: that would hide it */
            CHECK_MSG(filled(pt[i]) || pt[j] != pt[i] + 1, "linetype %d (pt %d) hides %d (pt %d)", j + 1, pt[j], i + 1,
                      pt[i]);
        }
    }
    free(st);

    /* the lr figure's series: style.gp's shapes and dashes, no override; the
     * legend's columns fit its longest entry */
    char *gp = slurp(out, "lr_quad.gp");
    CHECK(gp != NULL);
    int n_lines = 0;
    for (const char *p = gp; p && (p = strstr(p, "with linespoints lt ")); p++, n_lines++) {
        const char *end = strstr(p, "title");
        CHECK(end && !memchr(p, '\n', (size_t)(end - p)));
        char el[256];
        snprintf(el, sizeof el, "%.*s", end ? (int)(end - p) : 0, p);
        CHECK_MSG(!strstr(el, " pt ") && !strstr(el, " dt "), "a series overrides its style: %s", el);
    }
    CHECK(n_lines == 8);
    int cols = 0, rows = 0, n_titles = 0;
    size_t longest = 0;
    const char *k = gp ? strstr(gp, "set key maxcols ") : NULL;
    CHECK(k && sscanf(k, "set key maxcols %d maxrows %d", &cols, &rows) == 2);
    /* the legend's entries: the plot's titles */
    for (const char *p = gp ? strstr(gp, "\nplot ") : NULL; p && (p = strstr(p, " title \"")); n_titles++) {
        p += strlen(" title \"");
        const char *q = strchr(p, '"');
        if (q && (size_t)(q - p) > longest) longest = (size_t)(q - p);
    }
    /* "adam beta1=0.8 beta2=0.999" and the like: not three columns of them */
    CHECK_MSG(cols >= 1 && cols * rows >= n_titles && (cols == 1 || cols * (int)(longest + 10) <= 100),
              "key of %d x %d for %d entries up to %zu characters", cols, rows, n_titles, longest);
    CHECK(longest >= 26 && cols <= 2);
    free(gp);

    /* the profile: a marker on each curve at rows of its own (curves at the
     * same value, e.g. 0 for all that never reached, still show each one), the
     * axis a little below 0 */
    gp = slurp(dir, "tt/profile.gp");
    CHECK(gp && strstr(gp, "set yrange [-0.04:"));
    CHECK(gp && strstr(gp, "every 30::0 using 1:2 with points lt 1 ") && strstr(gp, "every 30::7 using 1:3 with points lt 2 ") &&
          strstr(gp, "every 30::14 using 1:4 with points lt 3 "));
    CHECK(gp && count_of(gp, "NaN with linespoints lt ") == 3);
    free(gp);
    /* the dot plots' points: each optimizer's colour and marker shape from
     * style.gp (no pt override); error bars solid, whatever the optimizer's
     * dashes */
    gp = slurp(dir, "tt/step_time.gp");
    CHECK(gp && strstr(gp, "with points lt (i - 1) ps (1.7 * PS) notitle") && count_of(gp, "with points lt ") == 4);
    CHECK(gp && !strstr(gp, " pt "));
    free(gp);
    gp = slurp(dir, "tt/eval_loss_wa.gp");
    CHECK(gp && count_of(gp, "with yerrorbars lt ") == 2 && count_of(gp, " dt 1 ps (1.8 * PS) ") == 2 &&
          !strstr(gp, " pt 7 "));
    free(gp);
    /* an optimizer without a line (every lr diverged) says so in the legend */
    gp = slurp(dir, "offscale/lr_w.gp");
    CHECK(gp && strstr(gp, "title \"gone (diverged at every lr)\"") && strstr(gp, "title \"good, best lr 0.01 (grid edge)\"") &&
          count_of(gp, "(diverged at every lr)") == 1);
    free(gp);
}

static void colour_lab(const char *hex, int cvd, double lab[3]);

/* An optimizer's colour is the same in every report, whatever else it
 * compares and in whatever order; its configurations take shades of it
 * (checked by test_series_shades) in the order listed, one of them the
 * colour itself; optimizers the registry does not know take colours that
 * no optimizer has. */
static void test_series_colours(void)
{
    int n_all;
    const ob_optimizer_def *const *all = ob_optimizers(&n_all);
    const char *names[64];
    ob_colour col[64];
    for (int i = 0; i < n_all && i < 64; i++) names[i] = all[i]->name;
    ob_series_colours(names, n_all, col);
    for (int i = 0; i < n_all; i++)
        for (int j = i + 1; j < n_all; j++)
            CHECK_MSG(strcmp(col[i].hex, col[j].hex) != 0, "%s and %s share %s", names[i], names[j], col[i].hex);
    const char *sgd = col[0].hex, *adam = col[1].hex, *muon = NULL;
    for (int i = 0; i < n_all; i++)
        if (!strcmp(names[i], "muon")) muon = col[i].hex;
    /* another set, another order: the same colours */
    const char *some[] = {"muon", "adam", "sgd"};
    ob_colour c3[3];
    ob_series_colours(some, 3, c3);
    CHECK(!strcmp(c3[0].hex, muon) && !strcmp(c3[1].hex, adam) && !strcmp(c3[2].hex, sgd));
    /* adam swept over three values, and an optimizer unknown to the registry:
     * adam's first keeps adam's colour, no two are alike, and the unknown
     * one's is none of the registry's (none is black either: the figures'
     * annotations are) */
    const char *sw[] = {"adam", "adam", "sgd", "adam", "no_such_optimizer"};
    ob_colour c5[5];
    ob_series_colours(sw, 5, c5);
    CHECK(!strcmp(c5[0].hex, adam) && !strcmp(c5[2].hex, sgd));
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            CHECK_MSG(strcmp(c5[i].hex, c5[j].hex) != 0, "series %d and %d share %s", i, j, c5[i].hex);
    for (int i = 0; i < n_all; i++) {
        CHECK_MSG(strcmp(col[i].hex, "#000000") != 0, "%s is black", names[i]);
        CHECK_MSG(strcmp(c5[4].hex, col[i].hex) != 0, "an unknown optimizer has %s's colour %s", names[i], col[i].hex);
    }
    /* the configurations of an optimizer take its shades dark to light in
     * the order given (a sweep's: by the swept value), whatever stands
     * between them, so that the shade reads as the value; the one at the
     * colour's own lightness is the colour itself, and it wears the
     * optimizer's own marker and dashes (ob_series_family names it); every
     * optimizer of the registry, 1 to 8 configurations */
    for (int o = 0; o < n_all; o++)
        for (int m = 1; m <= 8; m++) {
            const char *fam[16];
            int at[8], nf = 0, own = -1;
            for (int r = 0; r < m; r++) {
                if (r == 1) fam[nf++] = o ? names[0] : names[1]; /* another optimizer between them */
                at[r] = nf;
                fam[nf++] = names[o];
            }
            ob_colour cf[16], sh[8];
            int sf[16], df[16], s1, d1;
            ob_series_colours(fam, nf, cf);
            ob_series_marks(fam, nf, sf, df);
            ob_series_marks(&names[o], 1, &s1, &d1);
            double prev = -1;
            for (int r = 0; r < m; r++) {
                ob_series_shade(col[o].hex, r, m, &sh[r], r ? NULL : &own);
                int rank = -1, count = -1;
                const int fo = ob_series_family(fam, nf, at[r], &rank, &count);
                double lab[3];
                colour_lab(cf[at[r]].hex, 0, lab);
                CHECK_MSG(!strcmp(cf[at[r]].hex, sh[r].hex) && lab[0] > prev,
                          "%s, %d configurations: the %d-th has %s, not shade %d %s", names[o], m, r + 1,
                          cf[at[r]].hex, r, sh[r].hex);
                CHECK_MSG(rank == r && count == m && fo == at[own], "%s: family of %d: rank %d of %d, own %d (want %d)",
                          names[o], r, rank, count, fo, at[own]);
                prev = lab[0];
            }
            CHECK_MSG(!strcmp(cf[at[own]].hex, col[o].hex) && sf[at[own]] == s1 && df[at[own]] == d1,
                      "%s, %d configurations: the %d-th (%s pt %d dt %d) is not its own look (%s pt %d dt %d)",
                      names[o], m, own + 1, cf[at[own]].hex, sf[at[own]], df[at[own]], col[o].hex, s1, d1);
        }
    /* sgd's own colour, mid-lightness, is its middle shade of 3: listed
     * first it went to its first configuration, its darker shade to the
     * second (the shades did not follow the values) */
    {
        const char *sg[] = {"sgd", "sgd", "sgd"};
        ob_colour c3s[3];
        ob_series_colours(sg, 3, c3s);
        CHECK_MSG(strcmp(c3s[0].hex, sgd) && !strcmp(c3s[1].hex, sgd) && strcmp(c3s[2].hex, sgd),
                  "sgd x 3: %s %s %s", c3s[0].hex, c3s[1].hex, c3s[2].hex);
    }
    /* more series than colours: every one gets one */
    const char *many[40];
    ob_colour cm[40];
    for (int i = 0; i < 40; i++) many[i] = "adamw";
    ob_series_colours(many, 40, cm);
    for (int i = 0; i < 40; i++) CHECK(cm[i].hex[0] == '#' && strlen(cm[i].hex) == 7);
}

/* CIELAB (D65) of colour "#rrggbb" as seen with normal vision (cvd 0) or
 * with protanopia, deuteranopia or tritanopia (cvd 1, 2, 3): Machado,
 * Oliveira and Fernandes (2009), severity 1, applied in linear RGB. */
static void colour_lab(const char *hex, int cvd, double lab[3])
{
    static const double sim[4][3][3] = {
        {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
        {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
        {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
        {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
    };
    static const double to_xyz[3][3] = {
        {0.4124564, 0.3575761, 0.1804375}, {0.2126729, 0.7151522, 0.0721750}, {0.0193339, 0.1191920, 0.9503041}};
    static const double white[3] = {0.95047, 1.0, 1.08883};
    unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
    double rgb[3], l[3], f[3];
    for (int c = 0; c < 3; c++) {
        double u = ((v >> (16 - 8 * c)) & 0xff) / 255.0;
        rgb[c] = u <= 0.04045 ? u / 12.92 : pow((u + 0.055) / 1.055, 2.4);
    }
    for (int r = 0; r < 3; r++) {
        l[r] = 0;
        for (int c = 0; c < 3; c++) l[r] += sim[cvd][r][c] * rgb[c];
        l[r] = l[r] < 0 ? 0 : l[r] > 1 ? 1 : l[r];
    }
    for (int r = 0; r < 3; r++) {
        double t = 0;
        for (int c = 0; c < 3; c++) t += to_xyz[r][c] * l[c];
        t /= white[r];
        f[r] = t > 216.0 / 24389 ? cbrt(t) : t * 24389.0 / 3132 + 4.0 / 29;
    }
    lab[0] = 116 * f[1] - 16, lab[1] = 500 * (f[0] - f[1]), lab[2] = 200 * (f[1] - f[2]);
}

/* Delta E 1976 between two colours in vision cvd (see colour_lab). */
static double colour_de(const char *a, const char *b, int cvd)
{
    double la[3], lb[3];
    colour_lab(a, cvd, la);
    colour_lab(b, cvd, lb);
    return sqrt((la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) +
                (la[2] - lb[2]) * (la[2] - lb[2]));
}

/* The colours stay apart for readers with a colour-vision deficiency (the
 * bounds plots/style.c states): the default benchmark's six optimizers at
 * least 20 Delta E 1976 apart in normal vision and under simulated
 * protanopia, deuteranopia and tritanopia; all of the registry's at least 20
 * apart in normal vision and 10 under each simulation, and so is every
 * spare colour (a swept configuration's) from them and from each other;
 * every colour of CIELAB lightness 30-70, readable on white. */
static void test_series_colours_cvd(void)
{
    static const char *const vision[] = {"normal vision", "protanopia", "deuteranopia", "tritanopia"};
    static const char *const six[] = {"sgd", "adam", "adamw", "lion", "muon", "root"};
    int n_all;
    const ob_optimizer_def *const *all = ob_optimizers(&n_all);
    const char *names[64];
    ob_colour col[64], c6[6];
    CHECK(n_all <= 64);
    for (int i = 0; i < n_all && i < 64; i++) names[i] = all[i]->name;
    ob_series_colours(names, n_all, col);
    ob_series_colours(six, 6, c6);
    for (int v = 0; v < 4; v++)
        for (int i = 0; i < 6; i++)
            for (int j = i + 1; j < 6; j++) {
                double d = colour_de(c6[i].hex, c6[j].hex, v);
                CHECK_MSG(d >= 20, "%s and %s are %.1f apart in %s", six[i], six[j], d, vision[v]);
            }
    /* the registry's colours, then the spares (optimizers it does not know) */
    const int n_spare = ob_series_spare_count();
    const char *cols[64 + 8], *unknown[8] = {"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"};
    ob_colour csp[8];
    CHECK(n_spare >= 1 && n_spare <= 8);
    ob_series_colours(unknown, n_spare, csp);
    int n = 0;
    for (int i = 0; i < n_all && i < 64; i++) cols[n++] = col[i].hex;
    for (int k = 0; k < n_spare && k < 8; k++) cols[n++] = csp[k].hex;
    for (int i = 0; i < n; i++) {
        double lab[3];
        colour_lab(cols[i], 0, lab);
        CHECK_MSG(lab[0] >= 30 && lab[0] <= 70, "%s has L* %.1f", cols[i], lab[0]);
        for (int j = i + 1; j < n; j++)
            for (int v = 0; v < 4; v++) {
                double d = colour_de(cols[i], cols[j], v);
                CHECK_MSG(d >= (v ? 10 : 20), "%s and %s are %.1f apart in %s", cols[i], cols[j], d, vision[v]);
            }
    }
}

/* Shades of an optimizer's colour (its further configurations): the same
 * hue, lightness within L* 28-76 and, for up to 5 configurations, at
 * least 9 Delta E apart in normal vision and under each simulated
 * deficiency (where lightness is what is left); the colour itself among
 * them, darker ones below it; every optimizer of the registry. */
static void test_series_shades(void)
{
    static const char *const vision[] = {"normal vision", "protanopia", "deuteranopia", "tritanopia"};
    int n_all;
    const ob_optimizer_def *const *all = ob_optimizers(&n_all);
    const char *names[64];
    ob_colour col[64];
    CHECK(n_all <= 64);
    for (int i = 0; i < n_all && i < 64; i++) names[i] = all[i]->name;
    ob_series_colours(names, n_all, col);
    for (int o = 0; o < n_all; o++)
        for (int m = 2; m <= 8; m++) {
            ob_colour sh[8];
            double lab[8][3], base[3];
            int own = -1;
            colour_lab(col[o].hex, 0, base);
            for (int k = 0; k < m; k++) {
                ob_series_shade(col[o].hex, k, m, &sh[k], k ? NULL : &own);
                colour_lab(sh[k].hex, 0, lab[k]);
            }
            CHECK_MSG(own >= 0 && own < m && !strcmp(sh[own].hex, col[o].hex), "%s: shade %d of %d is not its colour",
                      names[o], own, m);
            for (int k = 0; k < m; k++) {
                CHECK_MSG(lab[k][0] >= 27.5 && lab[k][0] <= 76.5, "%s shade %d/%d %s: L* %.1f", names[o], k, m,
                          sh[k].hex, lab[k][0]);
                if (k) CHECK_MSG(lab[k][0] > lab[k - 1][0] + 4, "%s shades %d/%d not lighter", names[o], k, m);
                /* the hue of the colour, and a good part of its chroma (sRGB has
                 * less of it at the ends of the span) */
                double c0 = hypot(base[1], base[2]), ck = hypot(lab[k][1], lab[k][2]);
                CHECK_MSG(ck >= 0.4 * c0, "%s shade %d/%d %s: chroma %.1f of %.1f", names[o], k, m, sh[k].hex, ck, c0);
                if (c0 > 10 && ck > 10) {
                    double dh = fabs(atan2(lab[k][2], lab[k][1]) - atan2(base[2], base[1])) * 180 / M_PI;
                    if (dh > 180) dh = 360 - dh;
                    CHECK_MSG(dh < 8, "%s shade %d/%d %s: hue %.1f degrees off", names[o], k, m, sh[k].hex, dh);
                }
                for (int j = 0; m <= 5 && j < k; j++)
                    for (int v = 0; v < 4; v++) {
                        double d = colour_de(sh[j].hex, sh[k].hex, v);
                        CHECK_MSG(d >= 9, "%s shades %d and %d of %d are %.1f apart in %s", names[o], j, k, m, d,
                                  vision[v]);
                    }
            }
        }
}

/* An optimizer's marker and dashes are the same in every report, whatever
 * else it compares and in whatever order; no two of the registry's
 * optimizers share both; in the order figures draw them (alphabetical), no
 * filled marker comes after its open twin; further configurations take open
 * shapes and dashes no other series of the figure has. */
static void test_series_marks(void)
{
    int n_all;
    const ob_optimizer_def *const *all = ob_optimizers(&n_all);
    const char *names[64];
    int sh[64], da[64];
    CHECK(n_all <= 64);
    for (int i = 0; i < n_all && i < 64; i++) names[i] = all[i]->name;
    /* alphabetical, as a report draws them */
    for (int i = 1; i < n_all; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    ob_series_marks(names, n_all, sh, da);
    for (int i = 0; i < n_all; i++) {
        CHECK_MSG(sh[i] != 2 && sh[i] != 3 && sh[i] != 5 && sh[i] != 6 && sh[i] >= 4 && sh[i] <= 15, "%s: pt %d",
                  names[i], sh[i]);
        CHECK_MSG(da[i] == 1 || da[i] == 2 || da[i] == 4 || da[i] == 5, "%s: dt %d", names[i], da[i]);
        for (int j = i + 1; j < n_all; j++) {
            CHECK_MSG(sh[i] != sh[j] || da[i] != da[j], "%s and %s look the same", names[i], names[j]);
            CHECK_MSG(filled(sh[i]) || sh[j] != sh[i] + 1, "%s (pt %d) hides %s (pt %d)", names[j], sh[j], names[i],
                      sh[i]);
        }
    }
    /* the same marks in a smaller set, in another order */
    int k_sgd = -1, k_adam = -1, k_muon = -1;
    for (int i = 0; i < n_all; i++) {
        if (!strcmp(names[i], "sgd")) k_sgd = i;
        if (!strcmp(names[i], "adam")) k_adam = i;
        if (!strcmp(names[i], "muon")) k_muon = i;
    }
    CHECK(k_sgd >= 0 && k_adam >= 0 && k_muon >= 0);
    CHECK(sh[k_sgd] == 7 && da[k_sgd] == 1); /* as docs/reports.md says: sgd solid, filled circles */
    /* the default benchmark's six: six shapes (the dot plots have no lines) */
    const char *six[] = {"sgd", "adam", "adamw", "lion", "muon", "root"};
    int s6[6];
    ob_series_marks(six, 6, s6, NULL);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++) CHECK_MSG(s6[i] != s6[j], "%s and %s share pt %d", six[i], six[j], s6[i]);
    const char *some[] = {"muon", "adam", "sgd"};
    int s3[3], d3[3];
    ob_series_marks(some, 3, s3, d3);
    CHECK(s3[0] == sh[k_muon] && d3[0] == da[k_muon] && s3[1] == sh[k_adam] && d3[1] == da[k_adam] &&
          s3[2] == sh[k_sgd] && d3[2] == da[k_sgd]);
    /* adam swept over three values, and an optimizer the registry does not
     * know: adam's first keeps adam's marks, the others open shapes, and no
     * two of the five alike */
    const char *sw[] = {"adam", "adam", "adam", "adamw", "no_such_optimizer"};
    int s5[5], d5[5];
    ob_series_marks(sw, 5, s5, d5);
    CHECK(s5[0] == sh[k_adam] && d5[0] == da[k_adam]);
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++) {
            CHECK_MSG(s5[i] != s5[j] || d5[i] != d5[j], "series %d and %d look the same", i, j);
            CHECK_MSG(filled(s5[i]) || s5[j] != s5[i] + 1, "series %d (pt %d) hides %d (pt %d)", j, s5[j], i, s5[i]);
        }
    for (int i = 1; i < 5; i++)
        if (i != 3) CHECK_MSG(!filled(s5[i]), "series %d: pt %d", i, s5[i]);
    /* each optimizer of the registry swept over 2 to 8 configurations
     * beside the default benchmark's six (in label order, as figures draw
     * them): no two series share colour and marker shape, or shape and
     * dashes; none is drawn filled over its open twin; up to 6
     * configurations of the optimizer have an outline each, its own among
     * them (an open shape and its filled twin count as one: at the figures'
     * line width a small open triangle on a solid line reads as filled) */
    static const char *const six_sorted[] = {"adam", "adamw", "lion", "muon", "root", "sgd"};
    for (int o = 0; o < n_all; o++)
        for (int m = 2; m <= 8; m++) {
            const char *fig[16];
            int nf = 0, placed = 0;
            for (int q = 0; q <= 6; q++) {
                if (!placed && (q == 6 || strcmp(names[o], six_sorted[q]) <= 0)) {
                    for (int r = 0; r < m; r++) fig[nf++] = names[o];
                    placed = 1;
                }
                if (q < 6 && strcmp(names[o], six_sorted[q])) fig[nf++] = six_sorted[q];
            }
            ob_colour cf[16];
            int sf[16], df[16], s1, d1;
            ob_series_colours(fig, nf, cf);
            ob_series_marks(fig, nf, sf, df);
            ob_series_marks(&names[o], 1, &s1, &d1);
            int own_seen = 0;
            for (int i = 0; i < nf; i++) own_seen += !strcmp(fig[i], names[o]) && sf[i] == s1 && df[i] == d1;
            CHECK_MSG(own_seen == 1, "%s x %d: its own marks %d times", names[o], m, own_seen);
            for (int i = 0; i < nf; i++) {
                CHECK_MSG(sf[i] >= 4 && sf[i] <= 15 && sf[i] != 5 && sf[i] != 6, "%s x %d: series %d pt %d",
                          names[o], m, i, sf[i]);
                for (int j = i + 1; j < nf; j++) {
                    CHECK_MSG(strcmp(cf[i].hex, cf[j].hex) || sf[i] != sf[j],
                              "%s x %d: series %d and %d (%s, %s) share %s and pt %d", names[o], m, i, j, fig[i],
                              fig[j], cf[i].hex, sf[i]);
                    CHECK_MSG(sf[i] != sf[j] || df[i] != df[j], "%s x %d: series %d and %d share pt %d dt %d",
                              names[o], m, i, j, sf[i], df[i]);
                    CHECK_MSG(filled(sf[i]) || sf[j] != sf[i] + 1, "%s x %d: series %d (pt %d) hides %d (pt %d)",
                              names[o], m, j, sf[j], i, sf[i]);
                    if (m <= 6 && !strcmp(fig[i], names[o]) && !strcmp(fig[j], names[o]))
                        CHECK_MSG(outline_of(sf[i]) != outline_of(sf[j]),
                                  "%s x %d: configurations %d and %d share an outline (pt %d, pt %d)", names[o], m, i,
                                  j, sf[i], sf[j]);
                }
            }
        }
    /* more series than combinations: every one gets one; 40 configurations
     * of one optimizer have 40 shades, and no two share shade and shape */
    const char *many[40];
    int dm[40], smany[40];
    ob_colour cmany[40];
    for (int i = 0; i < 40; i++) many[i] = "adamw";
    ob_series_marks(many, 40, NULL, dm);
    for (int i = 0; i < 40; i++) CHECK(dm[i] == 1 || dm[i] == 2 || dm[i] == 4 || dm[i] == 5);
    ob_series_marks(many, 40, smany, NULL);
    ob_series_colours(many, 40, cmany);
    for (int i = 0; i < 40; i++)
        for (int j = i + 1; j < 40; j++)
            CHECK_MSG(strcmp(cmany[i].hex, cmany[j].hex) || smany[i] != smany[j], "adamw x 40: %d and %d share %s pt %d",
                      i, j, cmany[i].hex, smany[i]);
}

/* A hyperparameter swept over 0 and positive values spanning decades
 * (weight_decay 0, 1e-4, 1e-3, 1e-2): on a linear axis 0, 1e-4 and 1e-3 would
 * sit on top of each other, their points and tic labels too; the axis is log,
 * 0 drawn a decade left of 1e-4, its tic reading "0", a break mark between. */
static void test_hp_zero_log(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "wd");
    const char *out = fix.out;
    static const double wds[] = {0, 1e-4, 1e-3, 1e-2};
    for (int i = 0; i < 4; i++)
        for (int l = 0; l < 2; l++)
            for (int seed = 0; seed < 2; seed++) {
                char extra[64];
                snprintf(extra, sizeof extra, "\"weight_decay\":%g", wds[i]);
                double f = 1.0 + i * 0.1 + l * 0.5 + seed * 0.05;
                fx_add(s, fix.bench, &(fx_run){"quad", "adamw", extra, l ? 0.1 : 0.01, seed, "done", f, 10, 1.0, 1.5,
                                               4096, 800, f + 0.5, NAN, 0});
            }
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    char *gp = slurp(out, "hp_quad_weight_decay.gp");
    CHECK(gp != NULL);
    double z = NAN, t0 = NAN, lo = NAN, hi = NAN, brk = NAN;
    const char *p;
    CHECK(gp && strstr(gp, "set logscale x") && strstr(gp, "(log scale; 0 set apart at the left)"));
    CHECK(gp && (p = strstr(gp, "XV(v) = v > 0 ? v : ")) && sscanf(p, "XV(v) = v > 0 ? v : %lf", &z) == 1);
    CHECK_NEAR(z, 1e-5, 1e-12);
    CHECK(gp && (p = strstr(gp, "set xtics (\"0\" ")) && sscanf(p, "set xtics (\"0\" %lf", &t0) == 1);
    CHECK_NEAR(t0, z, 1e-12);
    CHECK(gp && strstr(gp, "\"0.0001\" 0.0001") && strstr(gp, "\"0.01\" 0.01"));
    CHECK(gp && (p = strstr(gp, "set xrange [")) && sscanf(p, "set xrange [%lf:%lf]", &lo, &hi) == 2 && lo < z &&
          hi > 0.01);
    CHECK(gp && (p = strstr(gp, "set label \"//\" at first ")) && sscanf(p, "set label \"//\" at first %lf", &brk) == 1 &&
          brk > z && brk < 1e-4);
    free(gp);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "0, which a log scale cannot show, is drawn a decade left of the smallest positive value"));
    free(md);
    if (have_gnuplot) CHECK(exists(out, "hp_quad_weight_decay.png"));
}

/* Step times over decades (2 us on one workload, 200 ms on another): the log
 * axis is in seconds and each decade's tic names its own unit, not "1e-05"
 * of one unit for all. */
static void test_bar_time_units(const char *dir)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "units");
    const char *out = fix.out;
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, fix.bench, &(fx_run){"fast", "adam", NULL, 0.01, seed, "done", 1.0, 10, 0.002, 0.003, 4096, 800, 1.5,
                                       NAN, 0});
        fx_add(s, fix.bench, &(fx_run){"slow", "adam", NULL, 0.01, seed, "done", 1.0, 10, 200, 210, 4096, 800, 1.5, NAN,
                                       0});
    }
    ob_report_result res;
    fixture_report(&fix, 0, &res);
    char *gp = slurp(out, "step_time.gp");
    CHECK(gp && strstr(gp, "set logscale y") && strstr(gp, "set ylabel \"time per step (log scale)\""));
    CHECK(gp && strstr(gp, "set ytics (") && strstr(gp, "\"1 us\" ") && strstr(gp, "\"10 us\" ") &&
          strstr(gp, "\"1 ms\" 0.001") && strstr(gp, "\"100 ms\" ") && strstr(gp, "\"1 s\" 1"));
    CHECK(gp && strstr(gp, "using ($0 + off(i)):(column(i) < 1e308 ? column(i) / 1000 : NaN) with points")); /* ms to s */
    free(gp);
}

/* The dot plots' marks stand on end a slot apart: with 16 optimizers on 4
 * workloads (880 / 68 = 12.9 pixels a slot) in a smaller font, 10 points,
 * so that neighbours do not run into each other; with few optimizers in
 * the terminal's own. */
static void test_bar_marks_crowded(const char *dir)
{
    for (int many = 0; many < 2; many++) {
        fixture fix;
        ob_store *s = fixture_begin(&fix, dir, many ? "marks16" : "marks2");
        const char *out = fix.out;
        const int n_opt = many ? 16 : 2;
        static const char *const wl[] = {"wa", "wb", "wc", "wd"};
        for (int w = 0; w < 4; w++)
            for (int o = 0; o < n_opt; o++) {
                char name[16];
                snprintf(name, sizeof name, "o%02d", o);
                /* the last optimizer diverged at once everywhere: "every run diverged" */
                fx_add(s, fix.bench, &(fx_run){wl[w], name, NULL, 0.01, 0, o == n_opt - 1 ? "diverged" : "done",
                                               1.0 + 0.01 * o, 10, 1.0, 1.5, 4096, 800, 1.5, NAN, 0});
            }
        CHECK(sqlite3_exec(ob_store_db(s), "UPDATE runs SET step_ms_median = NULL, step_ms_p90 = NULL, "
                                           "step_ms_mean = NULL WHERE status = 'diverged'",
                           NULL, NULL, NULL) == SQLITE_OK);
        ob_report_result res;
        fixture_report(&fix, 0, &res);
        char *gp = slurp(out, "step_time.gp");
        CHECK_MSG(gp && count_of(gp, "set label \"every run diverged\"") == 4, "%s", gp ? gp : "");
        if (many) CHECK(gp && count_of(gp, "rotate by 90 left front tc rgb \"#999999\" font \",10\"\n") == 4);
        else CHECK(gp && !strstr(gp, "font \",") && count_of(gp, "rotate by 90 left front tc rgb \"#999999\"\n") == 4);
        free(gp);
    }
}

/* Times to target within the timing noise share a rank: adam (step times 1
 * and 1.4 ms) and sgd (1.1 and 1.2 ms) reach the target in the same steps,
 * (13), their intervals overlap, so both rank 1 though sgd's median is faster;
 * lion (3 and 3.2 ms) is clearly behind both: rank 3. The table shows each
 * interval, the CSVs hold it, and the figure draws it as a bar. */
static void test_tt_noise(const char *dir)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "ttnoise");
    static const struct { const char *opt; double ms[2]; } rows[] = {
        {"adam", {1.0, 1.4}}, {"sgd", {1.1, 1.2}}, {"lion", {3.0, 3.2}}};
    for (int i = 0; i < 3; i++)
        for (int seed = 0; seed < 2; seed++)
            fx_add(s, fix.bench, &(fx_run){"w", rows[i].opt, NULL, 0.01, seed, "done", 1.0, 10, rows[i].ms[seed],
                                           rows[i].ms[seed], 4096, 800, 1.5, NAN, 0});
    ob_report_result res;
    fixture_report(&fix, 0, &res);
    char *md = slurp(fix.out, "summary.md");
    CHECK_MSG(md && strstr(md, "| 1 | sgd | 13 | 14.9 ms (14.3 ms - 15.6 ms) | 0.01 |") &&
                  strstr(md, "| 1 | adam | 13 | 15.6 ms (13 ms - 18.2 ms) | 0.01 |") &&
                  strstr(md, "| 3 | lion | 13 | 40.3 ms (39 ms - 41.6 ms) | 0.01 |") &&
                  strstr(md, "optimizers within the noise share one") &&
                  /* adam and sgd share rank 1: the profile's win by a hair is said to be one */
                  strstr(md, "On 1 of these workloads (w) optimizers share rank 1 in the time-to-target table"),
              "%s", md ? md : "");
    free(md);
    char *csv = slurp(fix.out, "time_to_target.csv");
    CHECK(csv && row_has(csv, "\"w\",", "\"adam\",1,13,"));
    CHECK(csv && row_has(csv, "\"w\",", "\"sgd\",1,13,"));
    CHECK(csv && row_has(csv, "\"w\",", "\"lion\",3,"));
    free(csv);
    csv = slurp(fix.out, "bars_time_to_target_range.csv");
    CHECK_MSG(csv && strstr(csv, "\"workload\",\"adam lo\",\"adam hi\",\"lion lo\",\"lion hi\",\"sgd lo\",\"sgd hi\"\n"
                                "\"w\",0.013,"),
              "%s", csv ? csv : "");
    free(csv);
    char *gp = slurp(fix.out, "time_to_target.gp");
    CHECK(gp && strstr(gp, "plot for [i=2:4] 'bars_time_to_target_range.csv' skip 1 using ($0 + off(i)):") &&
          strstr(gp, "with yerrorbars lt (i - 1) pt -1 lw 1 notitle"));
    free(gp);
}

/* An optimizer that misses the target: its table row says by how much its
 * upper-median final loss ended above it, time_to_target.csv's
 * final_above_target has it, and one that missed by under 5% is named under
 * the performance profile as a near miss (b: 1.12 against the target 1.1,
 * 1.8% above; c: 3.0, far; a set the target and got there). */
static void test_near_miss(const char *dir)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "nearmiss");
    static const struct { const char *opt; double final; } rows[] = {{"a", 1.0}, {"b", 1.12}, {"c", 3.0}};
    for (int i = 0; i < 3; i++)
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, fix.bench, &(fx_run){"w", rows[i].opt, NULL, 0.01, seed, "done", rows[i].final, 10, 1.0, 1.0,
                                           4096, 800, 1.5, NAN, 0});
    ob_report_result res;
    fixture_report(&fix, 0, &res);
    char *md = slurp(fix.out, "summary.md");
    CHECK_MSG(md && strstr(md, "| - | b | not reached (ended 1.8% above) | not reached | - |") &&
                  strstr(md, "| - | c | not reached (ended 173% above) | not reached | - |") &&
                  strstr(md, "Near misses (an upper-median final loss at the best lr less than 5% above the "
                             "workload's target): b on w, 1.8% above. The profile counts it as not reaching") &&
                  !strstr(md, "c on w,"),
              "%s", md ? md : "");
    free(md);
    char *csv = slurp(fix.out, "time_to_target.csv");
    CHECK_MSG(csv && strstr(csv, ",\"final_above_target\",") && row_has(csv, "\"w\",", "\"a\",1,") &&
                  strstr(csv, ",0.018181818181818") && strstr(csv, ",1.7272727272727"),
              "%s", csv ? csv : "");
    const char *a = csv ? strstr(csv, "\"a\",1,") : NULL;
    /* a got there: empty, then its intervals' coverage (3 seeds: 75%) */
    const char *nl = a ? strchr(a, '\n') : NULL;
    CHECK(nl && nl - a > 11 && !strncmp(nl - 11, ",,0.75,0.75", 11));
    free(csv);
}

/* The seeds' noise ties ranks too: adam's seeds reach the target at steps
 * 11 and 13 and one never does (its loss stays at 5), so its upper median,
 * 13, is early but its interval is open above; sgd's seeds reach it at 23,
 * 25 and 27. Neither interval lies wholly below the other's: both
 * rank 1, though adam's time is half sgd's. The table shows the intervals
 * (">= ..." where open), the CSVs hold inf as the open end, and the figure
 * draws that bar to the top of the plot and says so. */
static void test_tt_seeds(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "ttseeds");
    static const struct { const char *opt; double T[3], final[3], ms[3]; } rows[] = {
        {"adam", {8, 10, 12}, {1, 1, 5}, {1.0, 1.2, 1.1}}, {"sgd", {20, 22, 24}, {1, 1, 1}, {1.0, 1.0, 1.0}}};
    for (int i = 0; i < 2; i++)
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, fix.bench, &(fx_run){"w", rows[i].opt, NULL, 0.01, seed, "done", rows[i].final[seed],
                                           rows[i].T[seed], rows[i].ms[seed], rows[i].ms[seed], 4096, 800, 1.5,
                                           NAN, 0});
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    char *md = slurp(fix.out, "summary.md");
    CHECK_MSG(md && strstr(md, "| 1 | adam | ") && strstr(md, "| 1 | sgd | ") &&
                  strstr(md, ": a seed never got there) | ") && strstr(md, "optimizers within the noise share one"),
              "%s", md ? md : "");
    free(md);
    char *csv = slurp(fix.out, "time_to_target.csv");
    CHECK_MSG(csv && row_has(csv, "\"w\",", "\"adam\",1,") && row_has(csv, "\"w\",", "\"sgd\",1,") &&
              strstr(csv, "\"w\",1.1,\"default\",\"adam\",1,13,0.0143,0.01,0,0,\"mean\",0.011,inf,11,inf,,0.75,0.75\n") &&
              strstr(csv, "\"w\",1.1,\"default\",\"sgd\",1,25,0.025,0.01,0,0,\"mean\",0.023,0.027,23,27,,0.75,0.75\n"),
              "%s", csv ? csv : "");
    free(csv);
    csv = slurp(fix.out, "bars_time_to_target_range.csv");
    CHECK_MSG(csv && strstr(csv, "\"workload\",\"adam lo\",\"adam hi\",\"sgd lo\",\"sgd hi\"\n\"w\",") &&
                  strstr(csv, ",inf,"),
              "%s", csv ? csv : "");
    free(csv);
    char *gp = slurp(fix.out, "time_to_target.gp");
    CHECK(gp && strstr(gp, "hi(c) = column(c) < 1e308 ? column(c) / ") && strstr(gp, ":(hi(2 * i - 1)) with yerrorbars") &&
          strstr(gp, ":(0):(up(2 * i - 1)) with vectors head"));
    free(gp);
    char *html = slurp(fix.out, "index.html");
    CHECK(html && strstr(html, "An arrow to the top of the plot is an interval open above: a seed in it never "
                               "got there."));
    free(html);
}

/* The step time, memory and time-to-target figures are dot plots: a point
 * per optimizer in its colour and marker shape (style.gp's linetype), not a
 * bar whose length on a log axis would mean nothing. An optimizer whose
 * every run diverged is "diverged at every lr" there, not "not reached", and
 * the end-of-training held-out figure gives it an x-axis entry with an x at
 * the top instead of dropping it; that figure's axis does not run below 0.
 * The bars_*.csv files hold byte counts as integers (python's int() reads
 * them), times at full precision. */
static void test_dot_plots(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "dots");
    const char *out = fix.out;
    for (int seed = 0; seed < 2; seed++)
        for (int l = 0; l < 2; l++) {
            const double lr = l ? 0.1 : 0.01;
            /* 16605580 bytes: the shortest text of that double is "1.660558e+07" */
            fx_add(s, fix.bench, &(fx_run){"w", "adam", NULL, lr, seed, "done", 1.0 + l, 10, 1.25, 1.5, 16605580,
                                           17555852, 1.5 + 0.1 * seed, NAN, 0});
            fx_add(s, fix.bench, &(fx_run){"w", "sgd", NULL, lr, seed, "done", 1.05 + l, 30, 0.123456789, 0.2,
                                           4096, 0, 2.0, NAN, 0});
            fx_add(s, fix.bench, &(fx_run){"w", "lion", NULL, lr, seed, "diverged", 0, 10, 1.0, 1.5, 4096, 400, 1.5,
                                           NAN, 0});
            /* lion not run on v */
            fx_add(s, fix.bench, &(fx_run){"v", "adam", NULL, lr, seed, "done", 1.0 + l, 10, 1.0, 1.5, 4096, 800,
                                           1.5, NAN, 0});
            fx_add(s, fix.bench, &(fx_run){"v", "sgd", NULL, lr, seed, "done", 1.0 + l, 10, 1.0, 1.5, 4096, 0, 1.5,
                                           NAN, 0});
        }
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);

    char *csv = slurp(out, "bars_peak_mem.csv");
    CHECK_MSG(csv && strstr(csv, "\"w\",16605580,4096,4096\n") && !strstr(csv, "e+"), "%s", csv ? csv : "");
    free(csv);
    csv = slurp(out, "bars_state_bytes.csv");
    CHECK_MSG(csv && strstr(csv, "\"w\",17555852,400,0\n") && strstr(csv, "\"v\",800,,0\n"), "%s", csv ? csv : "");
    free(csv);
    csv = slurp(out, "bars_step_ms.csv");
    CHECK_MSG(csv && strstr(csv, ",0.123456789\n"), "%s", csv ? csv : "");
    free(csv);

    static const char *const dots[] = {"step_time.gp", "memory_peak.gp", "memory_state.gp", "time_to_target.gp"};
    for (int i = 0; i < 4; i++) {
        char *gp = slurp(out, dots[i]);
        CHECK_MSG(gp && strstr(gp, "with points lt (i - 1) ps (1.7 * PS) notitle") && !strstr(gp, "with boxes") &&
                      !strstr(gp, "boxwidth") && count_of(gp, "NaN with points lt ") == 3 &&
                      strstr(gp, "NaN with points lt 2 ps (1.7 * PS) title \"lion\"") &&
                      /* a guide line through each of the 2 x 3 slots, one between the workloads */
                      count_of(gp, "nohead back lc rgb \"#e4e4e4\"") == 6 && count_of(gp, "nohead back lc rgb \"#b0b0b0\"") == 1 &&
                      count_of(gp, "set label \"not run\"") == 1,
                  "%s", dots[i]);
        free(gp);
    }
    char *gp = slurp(out, "time_to_target.gp");
    CHECK(gp && count_of(gp, "set label \"diverged at every lr\"") == 1 && !strstr(gp, "set label \"not reached\"") &&
          strstr(gp, "\\\"diverged at every lr\\\": every run did") && !strstr(gp, "\\\"not reached\\\""));
    free(gp);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "\"diverged at every lr\": every run of the optimizer there diverged") &&
          strstr(md, "Each optimizer is a point in its colour and marker shape"));
    CHECK(md && strstr(md, "has no value: its entry on the x axis says why, with an x at the top"));
    free(md);

    /* the held-out figure: lion's entry in its place (optimizer order), an x
     * in its colour at the top, no series; a loss's axis from 0 at the lowest */
    gp = slurp(out, "eval_loss_w.gp");
    CHECK_MSG(gp && strstr(gp, "(\"adam (0.01)\" 0, \"lion (diverged at every lr)\" 1, \"sgd (0.01)\" 2)") &&
                  strstr(gp, "set xrange [-0.6:2.6]") &&
                  strstr(gp, "set label \"\" at first 1, graph 0.95 point lt 2 pt 2 ") &&
                  count_of(gp, "with yerrorbars lt ") == 2 && !strstr(gp, "sel(\"lion\")") &&
                  strstr(gp, "set yrange [0<*:*]") && !strstr(gp, "plot \\\n, "),
              "%s", gp ? gp : "no eval_loss_w.gp");
    free(gp);
    gp = slurp(out, "eval_loss_v.gp");
    CHECK(gp && strstr(gp, "(\"adam (0.01)\" 0, \"sgd (0.01)\" 1)") && !strstr(gp, "point lt"));
    /* no room below the lowest point that would take the axis under 0 */
    CHECK(gp && strstr(gp, "set yrange [0<*:*]") && strstr(gp, "set offsets 0, 0, graph 0.06, graph 0.06"));
    free(gp);
    /* the lr figure on gnuplot's own axis: room above and below the points */
    gp = slurp(out, "lr_v.gp");
    CHECK(gp && strstr(gp, "set offsets 0, 0, graph 0.05, graph 0.05\n") && !strstr(gp, "set yrange"));
    free(gp);
    if (have_gnuplot) check_pngs_of_page(out);
}

/* An optimizer whose runs all diverged before their first timed step has
 * no step time: "every run diverged" on the step-time figure, said in the
 * caption, not "no data"; one whose runs finished without a value keeps
 * "no data". */
static void test_dot_plots_diverged(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "dots_div");
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, fix.bench, &(fx_run){"w", "adam", NULL, 0.01, seed, "done", 1.0, 10, 1.25, 1.5, 4096, 800, 1.5,
                                       NAN, 0});
        fx_add(s, fix.bench, &(fx_run){"w", "sgd", NULL, 0.01, seed, "diverged", 0, 10, NAN, NAN, 4096, 0, 1.5, NAN,
                                       0});
        fx_add(s, fix.bench, &(fx_run){"w", "lion", NULL, 0.01, seed, "done", 1.2, 10, NAN, NAN, 4096, 400, 1.5, NAN,
                                       0});
    }
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    char *gp = slurp(fix.out, "step_time.gp");
    CHECK_MSG(gp && count_of(gp, "set label \"every run diverged\"") == 1 && count_of(gp, "set label \"no data\"") == 1,
              "%s", gp ? gp : "no step_time.gp");
    free(gp);
    char *md = slurp(fix.out, "summary.md");
    CHECK(md && strstr(md, "\"every run diverged\": the optimizer's runs there all diverged before recording a value") &&
          strstr(md, "\"no data\": its runs recorded no value"));
    free(md);
}

/* The column (1-based) of label in a CSV's header, 0 when not there. */
static int csv_col(const char *csv, const char *label)
{
    char want[128];
    snprintf(want, sizeof want, "\"%s\"", label);
    const char *end = strchr(csv, '\n'), *at = strstr(csv, want);
    if (!at || (end && at > end)) return 0;
    int col = 1;
    for (const char *p = csv; p < at; p++) col += *p == ',';
    return col;
}

/* Past FIG_MAX_CONFIGS configurations the dot plots give each optimizer one
 * slot, its point on each workload from one configuration there: for step
 * time and memory the best (lowest median final loss at its best lr), for
 * the time to target the one that got there soonest. adam has 13
 * configurations: on w beta2=0.904 has the lowest final loss but gets to
 * the target late, 0.908 soonest; on v 0.911 is both; sgd runs on w alone. */
static void test_dot_plots_reduced(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "dots_reduced");
    for (int k = 1; k <= 13; k++) {
        char extra[64];
        snprintf(extra, sizeof extra, "\"beta2\":0.9%02d", k);
        const double ms = 1.0 + 0.1 * k; /* tells the configurations apart in bars_step_ms.csv */
        const double fw = k == 4 ? 0.5 : k == 8 ? 0.52 : 1.0 + 0.01 * k, tw = k == 4 ? 40 : k == 8 ? 2 : 20;
        fx_add(s, fix.bench, &(fx_run){"w", "adam", extra, 0.01, 0, "done", fw, tw, ms, ms, 4096, 800, fw, NAN, 0});
        fx_add(s, fix.bench, &(fx_run){"v", "adam", extra, 0.01, 0, "done", k == 11 ? 0.4 : 1.0, k == 11 ? 3 : 20, ms,
                                       ms, 4096, 800, 1.0, NAN, 0});
    }
    fx_add(s, fix.bench, &(fx_run){"w", "sgd", NULL, 0.01, 0, "done", 2.0, 20, 0.5, 0.5, 2048, 0, 2.0, NAN, 0});
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);

    char *csv = slurp(fix.out, "bars_step_ms.csv");
    CHECK(csv != NULL);
    if (!csv) return;
    const int c4 = csv_col(csv, "adam beta2=0.904"), c8 = csv_col(csv, "adam beta2=0.908"),
              c11 = csv_col(csv, "adam beta2=0.911"), csgd = csv_col(csv, "sgd");
    const int v_first = strstr(csv, "\n\"v\",") < strstr(csv, "\n\"w\",");
    CHECK_MSG(c4 > 1 && c8 > 1 && c11 > 1 && csgd > 1 && count_of(csv, ",") == 3 * 14, "%s", csv); /* every config */
    static const char *const dots[] = {"step_time.gp", "memory_peak.gp", "memory_state.gp", "time_to_target.gp"};
    /* each slot in its optimizer's own colour: adam's that of the configuration
     * at its colour's lightness among the 13 shades (the second: the first is
     * as dark as shades go), sgd's its one */
    const char *names[14];
    for (int k = 0; k < 13; k++) names[k] = "adam";
    names[13] = "sgd";
    const int lt_adam = ob_series_family(names, 14, 0, NULL, NULL) + 1;
    char lts[64], adam_key[96];
    snprintf(lts, sizeof lts, "array LT[2] = [%d, 14]\n", lt_adam);
    snprintf(adam_key, sizeof adam_key, "NaN with points lt %d ps (1.7 * PS) title \"adam\"", lt_adam);
    CHECK_MSG(lt_adam == 2, "adam's own among 13: lt %d", lt_adam);
    for (int i = 0; i < 4; i++) {
        char *gp = slurp(fix.out, dots[i]);
        char adam[64], sgd[64];
        const int cw = i == 3 ? c8 : c4;
        snprintf(adam, sizeof adam, "C[1] = \"%d %d\"   # adam\n", v_first ? c11 : cw, v_first ? cw : c11);
        snprintf(sgd, sizeof sgd, "C[2] = \"%d %d\"   # sgd\n", v_first ? 0 : csgd, v_first ? csgd : 0);
        CHECK_MSG(gp && strstr(gp, "array C[2]\n") && strstr(gp, adam) && strstr(gp, sgd) &&
                      strstr(gp, lts) && strstr(gp, "with points lt LT[j] ps (1.7 * PS) notitle") &&
                      count_of(gp, "NaN with points lt ") == 2 && strstr(gp, adam_key) &&
                      strstr(gp, "NaN with points lt 14 ps (1.7 * PS) title \"sgd\"") &&
                      count_of(gp, "nohead back lc rgb \"#e4e4e4\"") == 4 && count_of(gp, "set label \"not run\"") == 1,
                  "%s: want %s and %s in\n%s", dots[i], adam, sgd, gp ? gp : "nothing");
        free(gp);
    }
    free(csv);
    /* the profile: each optimizer's configuration with the largest area */
    char *area = slurp(fix.out, "profile_area.csv");
    char best[64] = "", want[160];
    double top = -1;
    for (const char *l = area ? strstr(area, "\n\"adam ") : NULL; l; l = strstr(l + 1, "\n\"adam ")) {
        char lab[64];
        double a;
        if (sscanf(l + 2, "%63[^\"]\",%lf", lab, &a) == 2 && a > top) top = a, snprintf(best, sizeof best, "%s", lab);
    }
    free(area);
    snprintf(want, sizeof want, "title \"%s (area %.3f, best of 13)\"", best, top);
    char *gp = slurp(fix.out, "profile.gp");
    CHECK_MSG(top > 0 && gp && count_of(gp, "NaN with linespoints") == 2 && strstr(gp, want) &&
                  strstr(gp, "title \"sgd (area ") && strstr(gp, "at its best single configuration"),
              "want %s in %s", want, gp ? gp : "nothing");
    /* each curve's band from the same label's columns of profile_band.csv */
    int n_steps = 0;
    for (const char *l = gp ? strstr(gp, "'profile.csv' skip 1 using 1:") : NULL; l;
         l = strstr(l + 1, "'profile.csv' skip 1 using 1:")) {
        int col;
        char band[96];
        if (sscanf(l, "'profile.csv' skip 1 using 1:%d with steps", &col) != 1) continue;
        n_steps++;
        snprintf(band, sizeof band, "'profile_band.csv' skip 1 using 1:%d:%d with filledcurves", 2 * col - 2,
                 2 * col - 1);
        CHECK_MSG(strstr(gp, band), "the curve of column %d without its band (%s)", col, band);
    }
    CHECK(n_steps == 2 && count_of(gp, "with filledcurves lt ") == 2);
    free(gp);
    char *md = slurp(fix.out, "summary.md");
    CHECK(md && strstr(md, "With 14 configurations, it draws each optimizer at its configuration with the largest"));
    CHECK(md && count_of(md, "With 14 configurations, each optimizer is one point per workload") == 4 &&
          strstr(md, "its configuration that got there soonest"));
    free(md);
    if (have_gnuplot) check_pngs_of_page(fix.out);
}

/* The loss floor: a dashed line where it lies near the curves, a legend
 * entry alone where drawing it would stretch the axis far below them (bert's
 * entropy floor under losses near the vocabulary's log). */
static void test_loss_floor(const char *dir, int have_gnuplot)
{
    fixture fix;
    ob_store *s = fixture_begin(&fix, dir, "floor");
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, fix.bench, &(fx_run){"near", "adam", NULL, 0.01, seed, "done", 1.0 + 0.1 * seed, 10, 1.0, 1.5,
                                       4096, 0, 1.5, NAN, 0});
        fx_add(s, fix.bench, &(fx_run){"far", "adam", NULL, 0.01, seed, "done", 4.0 + 0.1 * seed, 10, 1.0, 1.5,
                                       4096, 0, 1.5, NAN, 0});
    }
    CHECK(sqlite3_exec(ob_store_db(s),
                       "UPDATE runs SET loss_floor = CASE workload WHEN 'near' THEN 0.9 ELSE -50 END",
                       NULL, NULL, NULL) == SQLITE_OK);
    ob_report_result res;
    fixture_report(&fix, have_gnuplot, &res);
    CHECK(res.n_render_failed == 0);
    char *gp = slurp(fix.out, "loss_near.gp");
    CHECK_MSG(gp && strstr(gp, "0.90000000000000002 with lines lc rgb \"black\" lw 1.5 dt 2 title \"loss floor (0.9)\"") &&
                  !strstr(gp, "keyentry"),
              "%s", gp ? gp : "(none)");
    free(gp);
    gp = slurp(fix.out, "loss_far.gp");
    CHECK_MSG(gp && strstr(gp, "keyentry with lines lc rgb \"black\" lw 1.5 dt 2 title \"loss floor -50 (far below: "
                               "not drawn)\"") && !strstr(gp, "-50 with lines"),
              "%s", gp ? gp : "(none)");
    free(gp);
    char *md = slurp(fix.out, "summary.md");
    CHECK(md && strstr(md, "The dashed line is the workload's loss floor") &&
          strstr(md, "lies far below the curves: drawn, it would squeeze them"));
    free(md);
}

int main(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/ob_test_report_fig_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    char db[512];
    snprintf(db, sizeof db, "%s/corners.db", dir);
    build_db(db);
    char gp[1024];
    int have_gnuplot = ob_gnuplot_find(gp, sizeof gp);
    if (!have_gnuplot) printf("gnuplot not installed: rendering not tested\n");
    test_time_to_target(db, dir, have_gnuplot);
    test_met_at_start(db, dir, have_gnuplot);
    test_nothing_reached(db, dir, have_gnuplot);
    test_no_hp_sweep(db, dir);
    test_no_eval_rows(db, dir, have_gnuplot);
    test_hp_sweep(dir, have_gnuplot);
    test_hp_sweep_text(dir);
    test_hp_lr_scatter(dir);
    test_lr_off_scale(dir, have_gnuplot);
    test_lr_diverged_seeds(dir, have_gnuplot);
    test_lr_strip(dir, have_gnuplot);
    test_lr_log_axis(dir, have_gnuplot ? gp : NULL);
    test_lr_column_pdf(dir, have_gnuplot ? gp : NULL);
    test_metric_name(dir);
    test_series_styles(dir);
    test_series_colours();
    test_series_colours_cvd();
    test_series_shades();
    test_series_marks();
    test_hp_zero_log(dir, have_gnuplot);
    test_bar_time_units(dir);
    test_bar_marks_crowded(dir);
    test_tt_noise(dir);
    test_near_miss(dir);
    test_tt_seeds(dir, have_gnuplot);
    test_mixed_means(dir);
    test_loss_floor(dir, have_gnuplot);
    test_dot_plots(dir, have_gnuplot);
    test_dot_plots_diverged(dir, have_gnuplot);
    test_dot_plots_reduced(dir, have_gnuplot);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (getenv("OB_TEST_KEEP")) printf("kept %s\n", dir); /* to look at the figures */
    else if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
