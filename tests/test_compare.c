/* tests/test_compare.c - the regression gate against planted changes:
 * identical databases and within-noise changes pass; worse loss on every
 * seed, a slower step, more memory, a worse held-out metric and a newly failed
 * cell are flagged; mixed changes stay within noise; improvements are called
 * better; one-sided cells are listed (and fail only with strict); databases
 * with nothing in common are unusable input. Step time: a slowdown with
 * unsteady timing (a busy machine) is not judged, nor is one where a side's
 * runs ran at different speeds (a machine with a fast and a slow mode); one
 * that does not show on the cells together is within noise, a shift of
 * every group is noted; cells
 * run on different devices are left out of step time (and, on another
 * backend, of peak memory) with a note, unless time_across_devices. The
 * text table shows memory in KiB/MiB and keeps its columns aligned; every
 * row names the lr judged (and the candidate's own best lr when it moved).
 * The reports of a comparison that could not run say why, escaped. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "results/compare.h"
#include "results/store.h"
#include "test_stats_db.h"

typedef struct mod {
    double loss_mul[3];      /* quad/adam final loss, per seed */
    double metric_add;       /* quad/adam held-out metric */
    double time_mul;         /* rosen/sgd step time */
    int64_t mem_add;         /* quad/sgd peak memory */
    int fail_seed;           /* rosen/adam lr 0.1: this seed failed (-1 none) */
    int drop_cell;           /* leave out quad/sgd lr 0.01 seed 2 */
    int extra_cell;          /* add quad/sgd lr 1 seed 0 */
    double noise[3];         /* every final loss x (1 + noise[seed]) */
    const char *adam_extra;  /* more hyperparameters of adam (a newly added one) */
    double time_seed[3];     /* rosen/sgd step time (p50 and p90), per seed */
    double p90_mul;          /* rosen/sgd p90 step time only (unsteady timing) */
    double time_all;         /* every cell's step time (p50 and p90) */
    int steps;               /* planned steps of every run (0: 20) */
    double lr01_mul;         /* quad/adam final loss at lr 0.1 (its best lr) */
    int rosen_sgd_diverged;  /* rosen/sgd diverged at every lr */
    int rosen_sgd_div_seeds; /* rosen/sgd diverged at every lr on these seeds (bit s: seed s) */
    double mean_seed[3];     /* rosen/sgd mean step time only, x this per seed (0: 1; slow steps) */
    double mean_all;         /* every run's mean step time only, x this (0: 1; a busy machine's stalls) */
} mod;

static void plant(const char *path, const char *sql);

static mod none(void)
{
    mod m = {{1, 1, 1}, 0, 1, 0, -1, 0, 0, {0, 0, 0}, NULL, {1, 1, 1}, 1, 1, 0, 1, 0, 0, {0, 0, 0}, 0};
    return m;
}

/* A new results database at path (a file already there removed first); exits
 * when it cannot be created. */
static ob_store *new_db(const char *path)
{
    ob_err e = {0};
    ob_store *s = NULL;
    remove(path);
    if (ob_store_open(path, OB_STORE_CREATE, &s, &e) != OB_OK) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    return s;
}

static void build(const char *path, const mod *m)
{
    ob_store *s = new_db(path);
    static const char *const wls[2] = {"quad", "rosen"}, *const opts[2] = {"adam", "sgd"};
    static const double lrs[2] = {0.01, 0.1};
    for (int w = 0; w < 2; w++)
        for (int o = 0; o < 2; o++)
            for (int l = 0; l < 2; l++)
                for (int seed = 0; seed < 3; seed++) {
                    if (m->drop_cell && w == 0 && o == 1 && l == 0 && seed == 2) continue;
                    double f = 1.0 + 2 * w + o - 0.5 * l + 0.01 * seed;
                    f *= 1 + m->noise[seed];
                    double metric = w == 0 ? 0.8 + 0.01 * seed : NAN;
                    double ms = (o == 0 ? 2.0 : 1.0) + 0.01 * seed;
                    int64_t peak = o == 0 ? 4096 : 2048;
                    if (w == 0 && o == 0) {
                        f *= m->loss_mul[seed] * (l == 1 ? m->lr01_mul : 1);
                        metric += m->metric_add;
                    }
                    if (w == 1 && o == 1) ms *= m->time_mul * m->time_seed[seed];
                    ms *= m->time_all;
                    double p90 = ms * 1.2 * (w == 1 && o == 1 ? m->p90_mul : 1);
                    if (w == 0 && o == 1) peak += m->mem_add;
                    const char *status = w == 1 && o == 0 && l == 1 && seed == m->fail_seed ? "failed"
                                       : w == 1 && o == 1 && (m->rosen_sgd_diverged || (m->rosen_sgd_div_seeds >> seed & 1))
                                           ? "diverged"
                                           : "done";
                    fx_add(s, 0, &(fx_run){wls[w], opts[o], o == 0 ? m->adam_extra : NULL, lrs[l], seed, status, f, 5, ms, p90,
                                           peak, o == 0 ? 800 : 400, f + 0.1, metric, m->steps ? m->steps : 20});
                }
    if (m->extra_cell)
        fx_add(s, 0, &(fx_run){"quad", "sgd", NULL, 1.0, 0, "done", 9, 5, 1, 1.2, 2048, 400, 9.1, 0.5, 20});
    ob_store_close(s);
    for (int seed = 0; seed < 3; seed++)
        if (m->mean_seed[seed] != 0) {
            char sql[256];
            snprintf(sql, sizeof sql,
                     "UPDATE runs SET step_ms_mean = step_ms_mean * %.17g "
                     "WHERE workload = 'rosen' AND optimizer = 'sgd' AND seed = %d",
                     m->mean_seed[seed], seed);
            plant(path, sql);
        }
    if (m->mean_all != 0) {
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE runs SET step_ms_mean = step_ms_mean * %.17g", m->mean_all);
        plant(path, sql);
    }
}

/* SQL run on a built database: where its runs ran (runs.backend, runs.device). */
static void plant(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", path, msg ? msg : db ? sqlite3_errmsg(db) : "cannot open");
        exit(1);
    }
    sqlite3_close(db);
}

static char last_err[1024]; /* run_cmp's error message, empty on success */

static ob_compare run_cmp(const char *a, const char *b, const ob_compare_opts *o, ob_status *st)
{
    ob_err e = {0};
    ob_store *sa = NULL, *sb = NULL;
    ob_compare c;
    memset(&c, 0, sizeof c);
    ob_store_open(a, OB_STORE_READONLY, &sa, &e);
    ob_store_open(b, OB_STORE_READONLY, &sb, &e);
    *st = ob_compare_dbs(ob_store_db(sa), ob_store_db(sb), o, &c, &e);
    if (*st != OB_OK) printf("compare: %s\n", e.msg);
    snprintf(last_err, sizeof last_err, "%s", *st != OB_OK ? e.msg : "");
    ob_store_close(sa);
    ob_store_close(sb);
    return c;
}

/* The database b built from m and changed by the SQL sql (NULL: none), then
 * compared with a (the baseline). */
static ob_compare cmp_planted(const char *a, const char *b, const mod *m, const char *sql, const ob_compare_opts *o,
                              ob_status *st)
{
    build(b, m);
    if (sql) plant(b, sql);
    return run_cmp(a, b, o, st);
}

/* The database b built from m, then compared with a (the baseline). */
static ob_compare cmp_built(const char *a, const char *b, const mod *m, const ob_compare_opts *o, ob_status *st)
{
    return cmp_planted(a, b, m, NULL, o, st);
}

/* c written by ob_compare_print, _markdown or _junit (what) into the file p,
 * read back into buf: the tests check what a user opens. */
/* The file p, as written by a report writer, into buf. */
static void read_back(FILE *f, const char *p, char *buf, size_t cap)
{
    fclose(f);
    f = fopen(p, "r");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

static void render(const ob_compare *c, const char *what, const char *p, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(p, "w");
    if (!f) return;
    if (!strcmp(what, "markdown")) ob_compare_markdown(c, "base.db", "cand.db", f);
    else if (!strcmp(what, "junit")) ob_compare_junit(c, f);
    else ob_compare_print(c, f);
    read_back(f, p, buf, cap);
}

/* The text table of c into buf (empty when it cannot be written). */
static void print_to(const ob_compare *c, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = tmpfile();
    if (!f) return;
    ob_compare_print(c, f);
    rewind(f);
    buf[fread(buf, 1, cap - 1, f)] = 0;
    fclose(f);
}

/* The memory cell of a group's row in the text table. */
static void memory_line(const ob_cmp_group *g, char *out, size_t n)
{
    out[0] = 0;
    if (!g) return;
    ob_compare c;
    memset(&c, 0, sizeof c);
    c.g = (ob_cmp_group *)g;
    c.n_g = 1;
    c.time_shift = NAN;
    char buf[2048];
    print_to(&c, buf, sizeof buf);
    if (!buf[0]) return;
    /* the header's "memory" column, in the second line */
    char *row = strchr(buf, '\n');
    const char *h = strstr(buf, "memory"), *v = strstr(buf, "verdict");
    if (!row || !h || !v) return;
    row++;
    size_t a = (size_t)(h - buf), b = (size_t)(v - buf);
    if (strlen(row) < b) return;
    snprintf(out, n, "%.*s", (int)(b - a), row + a);
    for (size_t i = strlen(out); i > 0 && out[i - 1] == ' '; i--) out[i - 1] = 0;
}

/* The cell under column head (up to the column next_head) of the text table's
 * row for workload wl and optimizer opt, trailing spaces cut; "" when absent. */
static void table_cell(const char *table, const char *head, const char *next_head, const char *wl,
                       const char *opt, char *out, size_t n)
{
    out[0] = 0;
    char h[64], row[128];
    snprintf(h, sizeof h, "  %s  ", head);
    const char *eol = strchr(table, '\n'), *a = strstr(table, h), *b = strstr(table, next_head);
    if (!eol || !a || !b || a > eol || b > eol || b < a) return;
    size_t ca = (size_t)(a + 2 - table), cb = (size_t)(b - table);
    for (const char *line = eol + 1; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
        size_t k = strlen(wl);
        if (strncmp(line, wl, k) != 0 || line[k] != ' ') continue;
        const char *q = line + k;
        while (*q == ' ') q++;
        if (strncmp(q, opt, strlen(opt)) != 0 || q[strlen(opt)] != ' ') continue;
        const char *end = strchr(line, '\n');
        if (!end || (size_t)(end - line) < cb) return;
        snprintf(row, sizeof row, "%.*s", (int)(cb - ca), line + ca);
        for (size_t i = strlen(row); i > 0 && row[i - 1] == ' '; i--) row[i - 1] = 0;
        snprintf(out, n, "%s", row);
        return;
    }
}

/* 1 when a report shows no infinite value ("+inf", "-inf", "inf%", "-> inf"). */
static int no_inf(const char *buf)
{
    return !strstr(buf, "+inf") && !strstr(buf, "-inf") && !strstr(buf, " inf") && !strstr(buf, "inf%");
}

/* The report of a comparison that could not run, as a user opens it. */
static void render_error(const char *what, const char *msg, const char *p, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(p, "w");
    if (!f) return;
    if (!strcmp(what, "markdown")) ob_compare_markdown_error(msg, "base.db", NULL, f);
    else ob_compare_junit_error(msg, f);
    read_back(f, p, buf, cap);
}

static const ob_cmp_group *grp(const ob_compare *c, const char *wl, const char *opt)
{
    for (int i = 0; i < c->n_g; i++)
        if (!strcmp(c->g[i].workload, wl) && !strcmp(c->g[i].optimizer, opt)) return &c->g[i];
    return NULL;
}

/* Edges of the verdicts, each on databases of its own in dir: an effect equal
 * to the tolerance (relative or absolute) does not exceed it; a loss below 0
 * changes relative to its magnitude, so a higher loss is worse; equal medians
 * of the baseline's final loss give the smaller lr, not the one whose cells
 * sort first; a cell under the time floor on one side only is timed, and one
 * group alone moving is no machine-wide shift; exactly half the cells
 * unsteady still leaves the step time judged, and exactly half with a mean
 * still judges the mean; the groups judged on their mean being half the
 * timed groups (not most) keeps their mean verdicts. */
/* Step time of runs that met a busy machine (runs.other_cpu at
 * OB_BUSY_SHARE or more on either side): rosen/sgd 3x slower with every
 * candidate run busy, or every baseline run, is not judged and is no
 * regression, named so in the row, with a note; below the share it is a
 * regression; one busy cell of six is left out, the rest judged. */
static void test_busy(const char *dir)
{
    char base[512], cand[512], p[600], buf[16384];
    snprintf(base, sizeof base, "%s/busy_base.db", dir);
    snprintf(cand, sizeof cand, "%s/busy_cand.db", dir);
    snprintf(p, sizeof p, "%s/busy_machine.txt", dir);
    mod m = none();
    build(base, &m);
    ob_compare_opts o;
    ob_compare_opts_default(&o);
    ob_status st;
    m.time_mul = 3;
    const char *rs = "WHERE workload = 'rosen' AND optimizer = 'sgd'";
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE runs SET other_cpu = 0.6 %s", rs);
    ob_compare c = cmp_planted(base, cand, &m, sql, &o, &st);
    const ob_cmp_group *g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && c.n_time_not_judged == 1 && c.n_time_busy == 1);
    CHECK(g && g->time_not_judged && g->time_busy_most && g->time_busy == 6 && g->time_cells == 6 &&
          g->time.v == OB_NODATA && g->time_mean.v == OB_NODATA && fabs(g->busy_cand - 0.6) < 1e-12 &&
          g->busy_base == 0 && fabs(g->time.effect - 2) < 1e-9);
    render(&c, "print", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "+200.0% on a busy machine, not judged") &&
                  strstr(buf, "note: step time not judged in 1 group: most of its cells ran while other processes "
                              "kept 25% or more of the machine's CPUs busy") &&
                  strstr(buf, "e.g. sgd on rosen: up to 0% in the baseline, 60% in the candidate") &&
                  !strstr(buf, "unsteady"),
              "%s", buf);
    ob_compare_free(&c);

    /* the baseline's runs busy instead (3x slower there: the candidate is faster) */
    mod q = none();
    build(cand, &q);
    plant(cand, sql);
    mod slow = m;
    build(base, &slow);
    c = run_cmp(cand, base, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.n_better == 0 && g && g->time_busy_most && g->time.v == OB_NODATA &&
          fabs(g->busy_base - 0.6) < 1e-12);
    ob_compare_free(&c);
    build(base, &q);

    /* below the share: the machine was quiet enough, a regression */
    snprintf(sql, sizeof sql, "UPDATE runs SET other_cpu = 0.2 %s", rs);
    c = cmp_planted(base, cand, &m, sql, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && g && g->time.v == OB_WORSE && g->time_busy == 0 && c.n_time_busy == 0);
    ob_compare_free(&c);

    /* one busy cell of six: left out, the other five judged, a note counts it */
    snprintf(sql, sizeof sql, "UPDATE runs SET other_cpu = 0.9 %s AND lr = 0.1 AND seed = 0", rs);
    c = cmp_planted(base, cand, &m, sql, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && g && g->time.v == OB_WORSE && g->time_busy == 1 && !g->time_not_judged &&
          g->time.n == 5);
    render(&c, "print", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "note: 1 cell of the groups judged was left out of step time: a run of it met a busy "
                          "machine"),
              "%s", buf);
    ob_compare_free(&c);
}

static void test_edges(const char *dir)
{
    char base[512], cand[512];
    snprintf(base, sizeof base, "%s/edge_base.db", dir);
    snprintf(cand, sizeof cand, "%s/edge_cand.db", dir);
    mod m = none();
    build(base, &m);
    ob_compare_opts o;
    ob_compare_opts_default(&o);
    ob_status st;
    ob_compare c;
    const ob_cmp_group *g;

    /* 30% worse on every seed; then a tolerance of exactly that effect, and an
     * absolute floor of exactly the median difference */
    m.loss_mul[0] = m.loss_mul[1] = m.loss_mul[2] = 1.3;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && g && g->loss.v == OB_WORSE);
    const double effect = g ? g->loss.effect : 0.3, abs_effect = g ? g->loss.abs_effect : 0.153;
    ob_compare_free(&c);
    o.loss_tol = effect;
    c = run_cmp(base, cand, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK_MSG(st == OB_OK && !c.regression && g && g->loss.v == OB_SAME && !g->loss.unsure,
              "effect %.17g at a tolerance of itself: verdict %d", effect, g ? (int)g->loss.v : -1);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);
    o.loss_abs_tol = abs_effect;
    c = run_cmp(base, cand, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK_MSG(st == OB_OK && !c.regression && g && g->loss.v == OB_SAME && g->loss.under_abs,
              "median difference %.17g at an absolute floor of itself: verdict %d", abs_effect,
              g ? (int)g->loss.v : -1);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);

    /* losses below 0: -1.01 -> -0.707 is higher, 30% of |baseline| worse */
    static const char neg[] = "UPDATE runs SET final_loss = -final_loss WHERE workload = 'quad' AND optimizer = 'adam'";
    m = none();
    build(base, &m);
    plant(base, neg);
    m.loss_mul[0] = m.loss_mul[1] = m.loss_mul[2] = 0.7;
    c = cmp_planted(base, cand, &m, neg, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK_MSG(st == OB_OK && c.regression && g && g->loss.v == OB_WORSE && fabs(g->loss.effect - 0.3) < 1e-9,
              "negative losses: verdict %d, effect %g", g ? (int)g->loss.v : -1, g ? g->loss.effect : NAN);
    ob_compare_free(&c);

    /* lrs 1e-5 and 1e-4 with equal medians in the baseline (1e-4's cells sort
     * first by their text): judged at 1e-5, where the candidate is worse */
    {
        ob_store *sb = new_db(base), *sc = new_db(cand);
        for (int seed = 0; seed < 3; seed++)
            for (int l = 0; l < 2; l++) {
                const double lr = l ? 1e-4 : 1e-5;
                fx_add(sb, 0, &(fx_run){"quad", "adam", NULL, lr, seed, "done", 1.0, 5, 1, 1.2, 4096, 800, 1.1, 0.8, 20});
                fx_add(sc, 0, &(fx_run){"quad", "adam", NULL, lr, seed, "done", l ? 1.0 : 1.3, 5, 1, 1.2, 4096, 800, 1.1,
                                        0.8, 20});
            }
        ob_store_close(sb);
        ob_store_close(sc);
        c = run_cmp(base, cand, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK_MSG(st == OB_OK && g && g->best_lr == 1e-5 && g->loss.v == OB_WORSE && c.regression,
                  "tied lrs: judged at %g", g ? g->best_lr : NAN);
        ob_compare_free(&c);
    }

    /* a floor of 2.5 ms: every cell under it on both sides but rosen/sgd, 1 ms
     * in the baseline and 3 ms in the candidate: timed, and worse; the one
     * group judged is no machine-wide shift */
    m = none();
    build(base, &m);
    m.time_mul = 3;
    o.time_floor_ms = 2.5;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK_MSG(st == OB_OK && c.regression && g && g->time.v == OB_WORSE && g->time.n == 6 && g->time_fast == 0,
              "under the floor on one side: verdict %d over %d cells, %d fast", g ? (int)g->time.v : -1,
              g ? g->time.n : -1, g ? g->time_fast : -1);
    g = grp(&c, "quad", "adam");
    CHECK(g && g->time.v == OB_NODATA && g->time_fast == 6);
    CHECK_MSG(isnan(c.time_shift), "time shift %g from one group", c.time_shift);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);

    /* rosen/sgd 3x slower; its cells at lr 0.1 unsteady in the candidate
     * (p90 1.6 x p50): 3 of 6, not more than half, so judged on the other 3 */
    c = cmp_planted(base, cand, &m,
                    "UPDATE runs SET step_ms_p90 = step_ms_median * 1.6 WHERE workload = 'rosen' AND "
                    "optimizer = 'sgd' AND lr = 0.1",
                    &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK_MSG(st == OB_OK && g && g->time_unsteady == 3 && !g->time_not_judged && g->time.n == 3 &&
                  g->time.v == OB_WORSE,
              "half unsteady: %d unsteady, not judged %d, %d judged", g ? g->time_unsteady : -1,
              g ? g->time_not_judged : -1, g ? g->time.n : -1);
    ob_compare_free(&c);

    /* the mean 40% up on rosen/sgd's cells, known at lr 0.01 only: 3 of the
     * 6 timed cells, at least half, so the mean is judged */
    m = none();
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.4;
    c = cmp_planted(base, cand, &m,
                    "UPDATE runs SET step_ms_mean = NULL WHERE workload = 'rosen' AND optimizer = 'sgd' AND lr = 0.1",
                    &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK_MSG(st == OB_OK && g && g->time_mean.n == 3 && g->time_mean.v == OB_WORSE && c.regression,
              "means on half the cells: %d judged, verdict %d", g ? g->time_mean.n : -1,
              g ? (int)g->time_mean.v : -1);
    ob_compare_free(&c);

    /* every mean 40% up, the medians as they were, and the means known for
     * quad/adam and rosen/sgd only: two workloads and two optimizers, but 2 of
     * the 4 timed groups, not most of them: their verdicts stand */
    m = none();
    m.mean_all = 1.4;
    c = cmp_planted(base, cand, &m,
                    "UPDATE runs SET step_ms_mean = NULL WHERE (workload = 'quad' AND optimizer = 'sgd') OR "
                    "(workload = 'rosen' AND optimizer = 'adam')",
                    &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK_MSG(st == OB_OK && c.regression && !c.mean_shift_spread && c.n_time_mean_machine == 0 && g &&
                  g->time_mean.v == OB_WORSE && isnan(c.time_shift),
              "half the timed groups: spread %d, set aside %d", c.mean_shift_spread, c.n_time_mean_machine);
    ob_compare_free(&c);
}

int main(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/ob_test_compare_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    char base[512], cand[512];
    snprintf(base, sizeof base, "%s/base.db", dir);
    snprintf(cand, sizeof cand, "%s/cand.db", dir);
    mod m = none();
    build(base, &m);
    ob_compare_opts o;
    ob_compare_opts_default(&o);
    ob_status st;
    ob_compare c;

    /* identical */
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && !c.regression && c.n_matched == 24 && c.n_g == 4 && c.n_worse == 0 && c.n_better == 0);
    for (int i = 0; i < c.n_g; i++) {
        CHECK(c.g[i].overall == OB_SAME && c.g[i].loss.v == OB_SAME && c.g[i].loss.effect == 0);
        CHECK(c.g[i].best_lr == 0.1 && c.g[i].loss.n == 3);
    }
    const ob_cmp_group *g = grp(&c, "quad", "adam");
    CHECK(g && !g->metric_is_loss && g->metric.v == OB_SAME);
    g = grp(&c, "rosen", "adam");
    CHECK(g && g->metric_is_loss); /* no metric on rosen: held-out loss judged */
    {
        /* the table's held-out column names its quantity: a metric this build
         * does not know as "metric", the held-out loss as "loss" */
        char *text = NULL;
        size_t len = 0;
        FILE *mf = open_memstream(&text, &len);
        if (mf) {
            ob_compare_print(&c, mf);
            fclose(mf);
        }
        const char *quad = text ? strstr(text, "\nquad ") : NULL, *rosen = text ? strstr(text, "\nrosen ") : NULL;
        CHECK_MSG(quad && rosen && strstr(quad, " metric +0") && strstr(rosen, " loss +0.0%"), "%s", text ? text : "");
        free(text);
    }
    ob_compare_free(&c);

    /* within noise: +2%, -1%, +3% on every final loss, step time +5% */
    m = none();
    m.noise[0] = 0.02, m.noise[1] = -0.01, m.noise[2] = 0.03;
    m.time_mul = 1.05;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && !c.regression && c.n_worse == 0);
    g = grp(&c, "quad", "adam");
    CHECK(g && g->loss.v == OB_SAME && fabs(g->loss.effect - 0.02) < 1e-9);
    g = grp(&c, "rosen", "sgd");
    CHECK(g && g->time.v == OB_SAME && fabs(g->time.effect - 0.05) < 1e-9);
    ob_compare_free(&c);

    /* planted regression: adam on quad 30% worse on every seed, sgd on rosen 50% slower */
    m = none();
    m.loss_mul[0] = m.loss_mul[1] = m.loss_mul[2] = 1.3;
    m.time_mul = 1.5;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && c.regression && c.n_worse == 2);
    g = grp(&c, "quad", "adam");
    CHECK(g && g->loss.v == OB_WORSE && g->overall == OB_WORSE);
    CHECK(g && fabs(g->loss.effect - 0.3) < 1e-9 && fabs(g->loss.ci_lo - 0.3) < 1e-9);
    /* the change is the median of the per-seed changes, the values each
     * side's median: labelled so (the two need not agree) */
    CHECK_MSG(g && strstr(g->detail, "final loss at lr 0.1 worse: median per-seed change +30.0% over 3 seeds "
                                     "(range +30.0% to +30.0%, a 75% interval); medians 0.51 -> 0.663"),
              "%s", g ? g->detail : "");
    g = grp(&c, "rosen", "sgd");
    CHECK_MSG(g && g->time.v == OB_WORSE && g->loss.v == OB_SAME &&
              strstr(g->detail, "step time worse: median per-cell change +50% over 6 cells (95% CI +50% to +50%, "
                                "tolerance 10%); medians 1.01 ms -> 1.515 ms (each cell's step time is its run's "
                                "median)"),
              "%s", g ? g->detail : "");
    g = grp(&c, "quad", "sgd");
    CHECK(g && g->overall == OB_SAME);
    /* the reports say so */
    char p[600];
    snprintf(p, sizeof p, "%s/cmp.md", dir);
    FILE *f = NULL;
    char buf[16384];
    size_t n = 0;
    render(&c, "markdown", p, buf, sizeof buf);
    CHECK(strstr(buf, "## optbench compare: regression") && strstr(buf, "| quad | adam |") &&
          strstr(buf, "**worse**") && strstr(buf, "What got worse"));
    /* a verdict of 3 seeds: the note says what it rests on */
    CHECK_MSG(strstr(buf, "1 verdict on the final loss or held-out metric rests on fewer than 6 seeds (down to 3): "
                          "there, worse (or better) means that every seed moved the same way"),
              "%s", buf);
    snprintf(p, sizeof p, "%s/cmp.xml", dir);
    render(&c, "junit", p, buf, sizeof buf);
    CHECK(strstr(buf, "<testsuites") && strstr(buf, "tests=\"5\" failures=\"2\"") &&
          strstr(buf, "rests on fewer than 6 seeds") &&
          strstr(buf, "<testcase classname=\"optbench.quad\" name=\"adam\"") &&
          strstr(buf, "<failure type=\"regression\""));
    ob_compare_free(&c);

    /* the tolerance decides: at loss_tol 0.5 a 30% change is noise */
    o.loss_tol = 0.5;
    o.time_tol = -1;
    c = run_cmp(base, cand, &o, &st);
    CHECK(st == OB_OK && !c.regression);
    g = grp(&c, "rosen", "sgd");
    CHECK(g && g->time.v == OB_NODATA);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);

    /* the absolute floor: the 30% regression of quad / adam is a median
     * difference of 0.153 (0.51 -> 0.663); a floor of 0.2 makes it the
     * same, with a note, one of 0.1 does not */
    m = none();
    m.loss_mul[0] = m.loss_mul[1] = m.loss_mul[2] = 1.3;
    o.loss_abs_tol = 0.2;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && !c.regression && g && g->loss.v == OB_SAME && g->loss.under_abs && !g->loss.unsure);
    CHECK(g && fabs(g->loss.abs_effect - 0.153) < 1e-9 && fabs(g->loss.effect - 0.3) < 1e-9);
    print_to(&c, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "1 loss verdict counted as the same: the median difference of the seeds' losses is within "
                          "--loss-abs-tol 0.2"),
              "%s", buf);
    render(&c, "markdown", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "exceeds 5.0% and the median difference 0.2 (absolute, --loss-abs-tol)"), "%s", buf);
    ob_compare_free(&c);
    o.loss_abs_tol = 0.1;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && c.regression && g && g->loss.v == OB_WORSE && !g->loss.under_abs);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);

    /* mixed: +30%, -30%, 0 -> the interval spans 0: within noise */
    m = none();
    m.loss_mul[0] = 1.3, m.loss_mul[1] = 0.7, m.loss_mul[2] = 1.0;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && !c.regression && g && g->loss.v == OB_SAME && g->loss.ci_lo < 0 && g->loss.ci_hi > 0);
    ob_compare_free(&c);

    /* better on every seed */
    m = none();
    m.loss_mul[0] = m.loss_mul[1] = m.loss_mul[2] = 0.7;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && !c.regression && c.n_better == 1 && g && g->loss.v == OB_BETTER && g->overall == OB_BETTER);
    ob_compare_free(&c);

    /* one byte more peak memory is worse (exact); --no-memory ignores it */
    m = none();
    m.mem_add = 1;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "sgd");
    CHECK(st == OB_OK && c.regression && g && g->peak_mem.v == OB_WORSE && g->peak_mem.cand == 2049);
    ob_compare_free(&c);
    o.check_memory = 0;
    c = run_cmp(base, cand, &o, &st);
    CHECK(st == OB_OK && !c.regression);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);

    /* held-out metric (accuracy) 0.05 lower on every seed */
    m = none();
    m.metric_add = -0.05;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && c.regression && g && g->metric.v == OB_WORSE && fabs(g->metric.effect + 0.05) < 1e-9);
    CHECK_MSG(g && strstr(g->detail, "held-out metric worse: median per-seed change -0.05 over 3 seeds (range "
                                     "-0.05 to -0.05, a 75% interval); medians 0.81 -> 0.76"),
              "%s", g ? g->detail : "");
    /* a candidate run without the held-out metric (not diverged, no
     * evaluation) leaves its seed's pair out */
    plant(cand, "UPDATE runs SET eval_metric = NULL WHERE workload = 'quad' AND "
                "optimizer = 'adam' AND seed = 2");
    ob_compare_free(&c);
    c = run_cmp(base, cand, &o, &st);
    g = grp(&c, "quad", "adam");
    CHECK_MSG(st == OB_OK && g && g->metric.n == 2 && fabs(g->metric.effect + 0.05) < 1e-9,
              "%d pairs, effect %g", g ? g->metric.n : -1, g ? g->metric.effect : NAN);
    ob_compare_free(&c);

    /* a cell that finished before fails now */
    m = none();
    m.fail_seed = 1;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "adam");
    CHECK(st == OB_OK && c.regression && g && g->n_new_failures == 1 && g->overall == OB_WORSE);
    /* the failed cell (at the judged lr 0.1) is a failure, not a divergence: out of the final loss's pairs */
    CHECK_MSG(g && g->n_new_diverged == 0 && g->loss.n == 2 && !strstr(g->detail, "diverged"), "%d diverged, %d pairs",
              g ? g->n_new_diverged : -1, g ? g->loss.n : -1);
    ob_compare_free(&c);
    /* ... or has not finished yet (a stopped candidate, a dead machine): not
     * a regression of the code, but no verdict either (incomplete: exit
     * status 2), told apart from a failure, with a note saying to finish it */
    plant(cand, "UPDATE runs SET status = 'interrupted' WHERE status = 'failed'");
    c = run_cmp(base, cand, &o, &st);
    g = grp(&c, "rosen", "adam");
    CHECK(st == OB_OK && !c.regression && c.incomplete && c.n_cand_unfinished == 1 && g &&
          g->n_new_failures == 0 && g->n_new_unfinished == 1 && g->overall != OB_WORSE);
    {
        char text[8192];
        print_to(&c, text, sizeof text);
        CHECK_MSG(strstr(text, "no verdict (not finished)") && !strstr(text, "new failures") && !strstr(text, "WORSE") &&
                      strstr(text, "1 matched cell finished in the baseline is not finished in the candidate"),
                  "%s", text);
    }
    {
        char *xml = NULL, *md = NULL;
        size_t xl = 0, ml = 0;
        FILE *jf = open_memstream(&xml, &xl), *mf = open_memstream(&md, &ml);
        if (jf && mf) {
            ob_compare_junit(&c, jf);
            ob_compare_markdown(&c, "b.db", "c.db", mf);
            fclose(jf);
            fclose(mf);
        }
        CHECK_MSG(xml && strstr(xml, "failures=\"0\" errors=\"1\"") && strstr(xml, "<error type=\"not finished\""),
                  "%s", xml ? xml : "");
        CHECK_MSG(md && strstr(md, "## optbench compare: no verdict (the candidate is not finished)"), "%s", md ? md : "");
        free(xml);
        free(md);
    }
    ob_compare_free(&c);
    /* with something else worse as well, a regression */
    plant(cand, "UPDATE runs SET final_loss = final_loss * 2 WHERE workload = 'quad' AND optimizer = 'adam'");
    c = run_cmp(base, cand, &o, &st);
    CHECK(st == OB_OK && c.regression && !c.incomplete && c.n_cand_unfinished == 1);
    ob_compare_free(&c);

    /* the candidate lacks the cells of the baseline's best lr (another lr
     * grid): judged at the best of the matched lrs, the row and a note say
     * that the baseline's own best has no match */
    m = none();
    c = cmp_planted(base, cand, &m, "DELETE FROM runs WHERE workload = 'quad' AND optimizer = 'adam' AND lr = 0.1", &o,
                    &st);
    g = grp(&c, "quad", "adam");
    CHECK(st == OB_OK && g && g->best_lr == 0.01 && g->base_best_unmatched == 0.1);
    CHECK(grp(&c, "quad", "sgd") && isnan(grp(&c, "quad", "sgd")->base_best_unmatched));

    {
        char text[8192];
        print_to(&c, text, sizeof text);
        CHECK_MSG(strstr(text, "0.01 (best matched; base best 0.1 unmatched)") &&
                      strstr(text, "1 group is judged at the best of the matched lrs, not the baseline's own best lr, "
                                   "whose cells have no match in the candidate (adam on quad: best 0.1, judged at 0.01)"),
                  "%s", text);
    }
    ob_compare_free(&c);
    /* fewer seeds in the candidate, every lr there: nothing unmatched,
     * although the matched seeds' medians pick another lr than all of the
     * baseline's (lr 0.01: 2, 2, 1; lr 0.1: 1, 2.9, 3; all seeds: 0.01, the
     * two matched: 0.1) */
    {
        char base2[512], cand2[512];
        snprintf(base2, sizeof base2, "%s/base_seeds.db", dir);
        snprintf(cand2, sizeof cand2, "%s/cand_seeds.db", dir);
        static const char *const finals =
            "UPDATE runs SET final_loss = CASE WHEN lr = 0.01 THEN (CASE seed WHEN 2 THEN 1 ELSE 2 END) "
            "ELSE (CASE seed WHEN 0 THEN 1 WHEN 1 THEN 2.9 ELSE 3 END) END "
            "WHERE workload = 'quad' AND optimizer = 'adam'";
        build(base2, &m);
        plant(base2, finals);
        build(cand2, &m);
        plant(cand2, finals);
        plant(cand2, "DELETE FROM runs WHERE workload = 'quad' AND optimizer = 'adam' AND seed = 2");
        c = run_cmp(base2, cand2, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK_MSG(st == OB_OK && g && g->best_lr == 0.1 && isnan(g->base_best_unmatched), "judged at %g, unmatched %g",
                  g ? g->best_lr : NAN, g ? g->base_best_unmatched : NAN);
        ob_compare_free(&c);
    }

    /* one-sided cells: listed, not a regression unless strict */
    m = none();
    m.drop_cell = 1;
    m.extra_cell = 1;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && !c.regression && c.n_only_base == 1 && c.n_only_cand == 1 && c.n_matched == 23);
    CHECK(c.n_only_base == 1 && !strcmp(c.only_base[0].workload, "quad") && c.only_base[0].seed == 2 &&
          c.only_base[0].lr == 0.01);
    CHECK(c.n_only_cand == 1 && c.only_cand[0].lr == 1.0);
    ob_compare_free(&c);
    o.strict = 1;
    c = run_cmp(base, cand, &o, &st);
    CHECK(st == OB_OK && c.regression && c.n_worse == 0);
    ob_compare_free(&c);
    ob_compare_opts_default(&o);

    /* adam gained a hyperparameter: its cells still pair up (noted), nothing is one-sided */
    m = none();
    m.adam_extra = "\"new_knob\":1";
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && !c.regression && c.n_matched == 24 && c.n_relaxed == 12 && c.n_only_base == 0 &&
          c.n_only_cand == 0 && c.n_g == 4);
    CHECK_MSG(strstr(c.relaxed_note, "adam on quad: new_knob (absent) in the baseline, 1 in the candidate"),
              "relaxed note: %s", c.relaxed_note);
    ob_compare_free(&c);

    /* runs of another length are other cells: nothing matches, and the message says why */
    m = none();
    m.steps = 30;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_ERR_INPUT && c.n_matched == 0);
    CHECK_MSG(strstr(last_err, "ran 20 steps in the baseline, 30 in the candidate"), "message: %s", last_err);
    ob_compare_free(&c);

    /* step time on a busy machine: rosen/sgd 13x slower with p90 at 1.6x p50 (the
     * baseline's 1.2x): unsteady, so not judged and not a regression */
    m = none();
    m.time_mul = 13;
    m.p90_mul = 1.6 / 1.2;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && c.n_worse == 0 && c.n_time_not_judged == 1);
    CHECK(g && g->time.v == OB_NODATA && g->time_not_judged && g->time_unsteady == 6 && g->time_cells == 6);
    CHECK(g && fabs(g->time.effect - 12) < 1e-9); /* the raw change is still shown */
    snprintf(p, sizeof p, "%s/busy.txt", dir);
    render(&c, "print", p, buf, sizeof buf);
    CHECK(strstr(buf, "+1200.0% unsteady, not judged") && strstr(buf, "note: step time not judged in 1 group"));
    ob_compare_free(&c);
    /* the same slowdown with steady timing (p90 scaled alike) is a regression */
    m.p90_mul = 1;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && g && g->time.v == OB_WORSE && !g->time_not_judged &&
          fabs(g->time.effect - 12) < 1e-9 && strstr(g->detail, "step time worse: median per-cell change +1200%"));
    ob_compare_free(&c);

    /* a slowdown that does not show on the cells together: +20% on seeds 0
     * and 1, -3% on seed 2 (the ratio of the medians would say +20%; the
     * candidate's runs 22.5% apart, under the spread that is not judged) */
    m = none();
    m.time_seed[0] = m.time_seed[1] = 1.2;
    m.time_seed[2] = 0.97;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time.v == OB_SAME && g->time.n == 6 && g->time.ci_lo < 0 &&
          !g->time_apart && fabs(g->time_spread_cand - (1.2 * 1.01 / (0.97 * 1.02) - 1)) < 1e-9);
    ob_compare_free(&c);
    /* +50% on seeds 0 and 1, -10% on seed 2: the candidate's runs 65% apart
     * (2% in the baseline): the machine took turns between a fast and a slow
     * mode, so step time is not judged */
    m.time_seed[0] = m.time_seed[1] = 1.5;
    m.time_seed[2] = 0.9;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_apart && g->time_not_judged && g->time.v == OB_NODATA &&
          g->time_mean.v == OB_NODATA && c.n_time_not_judged == 1);
    ob_compare_free(&c);
    /* the same the other way round: a baseline whose seeds 0 and 2 ran in a
     * fast mode (0.65x), against a candidate 10% slower than the slow mode on
     * every run. Paired, every cell is slower (+9% to +69%), and without
     * the spread rule this was a regression; the baseline's runs are 55%
     * apart, the candidate's 2%: not judged */
    {
        char base_modes[512];
        snprintf(base_modes, sizeof base_modes, "%s/base_modes.db", dir);
        mod bm = none();
        bm.time_seed[0] = bm.time_seed[2] = 0.65;
        build(base_modes, &bm);
        m = none();
        m.time_mul = 1.1;
        c = cmp_built(base_modes, cand, &m, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK_MSG(st == OB_OK && !c.regression && g && g->time_apart && g->time.v == OB_NODATA &&
                      fabs(g->time_spread_base - (1.01 / 0.65 - 1)) < 1e-9 && g->time_spread_cand < 0.03,
                  "fast and slow modes: regression %d, apart %d, spreads %g %g", c.regression, g ? g->time_apart : -1,
                  g ? g->time_spread_base : NAN, g ? g->time_spread_cand : NAN);
        snprintf(p, sizeof p, "%s/modes.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "unsteady across runs, not judged") &&
                      strstr(buf, "step time not judged in 1 group whose runs of one side ran at different speeds") &&
                      strstr(buf, "e.g. sgd on rosen: 55% in the baseline, 2% in the candidate") &&
                      !strstr(buf, "most of its cells ran with unsteady"),
                  "%s", buf);
        ob_compare_free(&c);
        /* a candidate 50% slower in the same fast and slow modes is still a regression */
        m = none();
        m.time_seed[0] = m.time_seed[2] = 0.65 * 1.5;
        m.time_seed[1] = 1.5;
        c = cmp_built(base_modes, cand, &m, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && c.regression && g && !g->time_apart && g->time.v == OB_WORSE &&
              fabs(g->time.effect - 0.5) < 1e-9);
        ob_compare_free(&c);
    }
    /* +50% on every seed is */
    m = none();
    m.time_seed[0] = m.time_seed[1] = m.time_seed[2] = 1.5;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && g && g->time.v == OB_WORSE && fabs(g->time.effect - 0.5) < 1e-9);
    CHECK(isnan(c.time_shift)); /* one group moved, not the machine */
    ob_compare_free(&c);

    /* a step slow every k-th time: the median and p90 as they were, the mean
     * +40% on every seed (at both lrs): worse, through the mean */
    m = none();
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.4;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && c.n_worse == 1 && g && g->overall == OB_WORSE);
    CHECK(g && g->time.v == OB_SAME && g->time_mean.v == OB_WORSE && g->time_mean.n == 6 &&
          fabs(g->time_mean.effect - 0.4) < 1e-9);
    CHECK_MSG(g && strstr(g->detail, "mean step time worse: median per-cell change +40% over 6 cells") &&
                  strstr(g->detail, "the median step time's +0%: some steps are much slower"),
              "%s", g ? g->detail : "");
    snprintf(p, sizeof p, "%s/slowsteps.txt", dir);
    render(&c, "print", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "+0.0% [+0.0%, +0.0%] same; mean +40.0% [+40.0%, +40.0%] worse"), "%s", buf);
    g = grp(&c, "quad", "sgd");
    CHECK(g && g->time_mean.v == OB_SAME && g->time_mean.n == 6);
    ob_compare_free(&c);
    /* ... on two seeds of three only (a busy moment, not the code): within noise */
    m.mean_seed[2] = 1;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_mean.v == OB_SAME && g->overall == OB_SAME);
    ob_compare_free(&c);
    /* fewer slow steps now: better through the mean */
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 0.7;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_mean.v == OB_BETTER && g->overall == OB_BETTER);
    ob_compare_free(&c);
    /* the mean's own tolerance (20%): +15% on every cell is within it, not
     * within the median's 10% */
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.15;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_mean.v == OB_SAME && fabs(g->time_mean.effect - 0.15) < 1e-9);
    ob_compare_free(&c);
    {
        ob_compare_opts o2 = o;
        o2.time_mean_tol = 0.1;
        c = run_cmp(base, cand, &o2, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && c.regression && g && g->time_mean.v == OB_WORSE);
        CHECK_MSG(g && strstr(g->detail, "tolerance 10%), the median step time's +0%"), "%s", g ? g->detail : "");
        ob_compare_free(&c);
        o2.time_mean_tol = -1; /* off: the median alone */
        c = run_cmp(base, cand, &o2, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && !c.regression && g && g->time_mean.v == OB_NODATA && g->time.v == OB_SAME);
        ob_compare_free(&c);
    }
    /* more than a tenth of the steps slow: the candidate's p90 rises, every
     * cell is unsteady and the median is not judged; the median held, so the
     * mean still is, and the slowdown is a regression */
    m = none();
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.4;
    m.p90_mul = 1.6 / 1.2;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && g && g->time_not_judged && g->time_unsteady == 6);
    CHECK(g && g->time.v == OB_NODATA && g->time_mean.v == OB_WORSE && g->time_mean.n == 6 &&
          fabs(g->time_mean.effect - 0.4) < 1e-9);
    CHECK_MSG(g && strstr(g->detail, "the median step time's +0% (unsteady): some steps are much slower"), "%s",
              g ? g->detail : "");
    snprintf(p, sizeof p, "%s/unsteadymean.txt", dir);
    render(&c, "print", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "+0.0% unsteady, not judged; mean +40.0% [+40.0%, +40.0%] worse") &&
                  strstr(buf, "the mean step time still is in 1 of them"),
              "%s", buf);
    snprintf(p, sizeof p, "%s/unsteadymean.md", dir);
    render(&c, "markdown", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "+0.0% unsteady, not judged; mean +40.0% [+40.0%, +40.0%] worse"), "%s", buf);
    ob_compare_free(&c);
    /* the same with the median 13x (a slower, busier machine): the mean
     * stays out, and the note does not say it was judged */
    m.time_mul = 13;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_not_judged && g->time_mean.v == OB_NODATA);
    snprintf(p, sizeof p, "%s/unsteadynomean.txt", dir);
    render(&c, "print", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "note: step time not judged in 1 group") && !strstr(buf, "still is"), "%s", buf);
    ob_compare_free(&c);
    /* ... and with +30% (a busier machine): left out whatever --time-tol is,
     * a wider tolerance does not let more cells into the mean */
    m.time_mul = 1.3;
    m.p90_mul = 2 / 1.2;
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.4;
    build(cand, &m);
    {
        ob_compare_opts o2 = o;
        o2.time_tol = 0.5;
        c = run_cmp(base, cand, &o2, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && !c.regression && g && g->time_not_judged && g->time_mean.v == OB_NODATA &&
              g->time_mean_cells == 6);
        ob_compare_free(&c);
    }
    /* a mostly unsteady group where the median held in 2 cells of 6 only
     * (seed 2's): those few do not decide the mean */
    m = none();
    m.time_seed[0] = m.time_seed[1] = 1.3;
    m.p90_mul = 2 / 1.2;
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.5;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_not_judged && g->time_mean.v == OB_NODATA);
    ob_compare_free(&c);
    /* steps under the floor on both sides: neither the median nor the mean
     * is judged, though the means rose above the floor (one stall of a few
     * ms lifts a microsecond step's mean over any floor) */
    m = none();
    m.mean_seed[0] = 1.6;
    build(cand, &m);
    {
        ob_compare_opts o2 = o;
        o2.time_floor_ms = 1.5; /* rosen/sgd steps are 1 ms, seed 0's means now 1.6 ms */
        c = run_cmp(base, cand, &o2, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && !c.regression && g && g->time_fast == 6 && g->time.v == OB_NODATA &&
              g->time_mean.v == OB_NODATA);
        ob_compare_free(&c);
    }
    /* every run's mean +30%, no median moved: the machine's stalls cannot
     * be told from the code, so the means' verdicts are inconclusive, and a
     * note says why */
    m = none();
    m.mean_all = 1.3;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && !c.regression && c.n_worse == 0 && isnan(c.time_shift) &&
          fabs(c.time_mean_shift - 0.3) < 1e-9 && c.n_time_mean_machine == 4);
    g = grp(&c, "rosen", "sgd");
    CHECK(g && g->time_mean.v == OB_SAME && g->time_mean.unsure && g->time_mean_machine && g->overall == OB_SAME);
    snprintf(p, sizeof p, "%s/meanshift.txt", dir);
    render(&c, "print", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "same; mean +30.0% [+30.0%, +30.0%] inconclusive (every judged group's)") &&
                  strstr(buf, "note: the mean step time rose beyond 20% in every group where it was judged (by "
                              "+30.0% in the middle one): short stalls of a busy machine") &&
                  strstr(buf, "inconclusive in 4 groups"),
              "%s", buf);
    snprintf(p, sizeof p, "%s/meanshift.md", dir);
    render(&c, "markdown", p, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "mean +30.0% [+30.0%, +30.0%] inconclusive (every judged group's)"), "%s", buf);
    snprintf(p, sizeof p, "%s/meanshift.xml", dir);
    render(&c, "junit", p, buf, sizeof buf); /* the note as a test case, where a CI shows it */
    CHECK_MSG(strstr(buf, "tests=\"5\" failures=\"0\"") && strstr(buf, "name=\"mean step time moved in every group\"") &&
                  strstr(buf, "inconclusive in 4 groups"),
              "%s", buf);
    ob_compare_free(&c);
    /* ... also where two groups (two workloads, two optimizers) are judged
     * on their mean and the other two have no step time on either side:
     * the groups judged are most of the timed groups, not of all groups */
    {
        static const char untimed[] = "UPDATE runs SET step_ms_median = NULL, step_ms_p90 = NULL, step_ms_mean = NULL "
                                      "WHERE (workload = 'quad' AND optimizer = 'sgd') OR "
                                      "(workload = 'rosen' AND optimizer = 'adam')";
        mod m0 = none();
        build(base, &m0);
        plant(base, untimed);
        c = cmp_planted(base, cand, &m, untimed, &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK_MSG(st == OB_OK && !c.regression && c.mean_shift_spread && c.n_time_mean_machine == 2 && g &&
                      g->time_cells == 0,
                  "regression %d, spread %d, %d set aside", c.regression, c.mean_shift_spread,
                  c.n_time_mean_machine);
        ob_compare_free(&c);
        build(base, &m0);
    }
    /* ... also where one group's median moved a little without a verdict
     * (+12% on 4 cells of 6: inconclusive): its mean is set aside too */
    m.time_seed[0] = m.time_seed[1] = 1.12;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && c.n_time_mean_machine == 4 && g && g->time.v == OB_SAME &&
          g->time.unsure && g->time_mean_machine);
    ob_compare_free(&c);
    /* ... but not where every group judged on its mean is one optimizer's:
     * that is the optimizer's slow steps, and the verdicts stand */
    {
        char base1[600], cand1[600];
        snprintf(base1, sizeof base1, "%s/base_sgd.db", dir);
        snprintf(cand1, sizeof cand1, "%s/cand_sgd.db", dir);
        mod m0 = none();
        build(base1, &m0);
        m0.mean_all = 1.3;
        build(cand1, &m0);
        plant(base1, "DELETE FROM runs WHERE optimizer = 'adam'");
        plant(cand1, "DELETE FROM runs WHERE optimizer = 'adam'");
        c = run_cmp(base1, cand1, &o, &st);
        CHECK(st == OB_OK && c.regression && c.n_worse == 2 && c.n_time_mean_machine == 0 && !c.mean_shift_spread &&
              fabs(c.time_mean_shift - 0.3) < 1e-9);
        snprintf(p, sizeof p, "%s/meanshift1.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "the verdicts stand (the groups judged on their mean are one optimizer's or one "
                              "workload's, or too few of them)"),
                  "%s", buf);
        ob_compare_free(&c);
    }
    /* ... unless the median moved with it in one group: that group's mean
     * (and median) stand */
    m.time_seed[0] = m.time_seed[1] = m.time_seed[2] = 1.5;
    c = cmp_built(base, cand, &m, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && c.regression && c.n_worse == 1 && c.n_time_mean_machine == 3 && g &&
          g->time.v == OB_WORSE && g->time_mean.v == OB_WORSE && !g->time_mean_machine);
    g = grp(&c, "quad", "sgd"); /* the others' medians held */
    CHECK(g && g->time_mean.v == OB_SAME && g->time_mean.unsure && g->time_mean_machine);
    ob_compare_free(&c);
    /* one group's mean alone: its verdict stands (tested above: slow steps) */
    /* a baseline merged from an older optbench's shard: rosen/sgd has a
     * mean in 1 cell of 6 on one side, too few to judge it */
    m = none();
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.7;
    build(cand, &m);
    {
        char base1[600];
        snprintf(base1, sizeof base1, "%s/base_mixed.db", dir);
        mod m0 = none();
        build(base1, &m0);
        plant(base1, "UPDATE runs SET step_ms_mean = NULL WHERE workload = 'rosen' AND optimizer = 'sgd' "
                     "AND NOT (seed = 0 AND lr = 0.1)");
        c = run_cmp(base1, cand, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && !c.regression && g && g->time_mean.v == OB_NODATA && g->time_mean_cells == 6);
        ob_compare_free(&c);
    }
    /* a baseline of an older optbench (no mean recorded): the mean is not judged */
    m = none();
    m.mean_seed[0] = m.mean_seed[1] = m.mean_seed[2] = 1.4;
    build(cand, &m);
    snprintf(p, sizeof p, "%s/nomean.db", dir);
    {
        mod m0 = none();
        build(p, &m0);
    }
    plant(p, "UPDATE runs SET step_ms_mean = NULL");
    c = run_cmp(p, cand, &o, &st);
    g = grp(&c, "rosen", "sgd");
    CHECK(st == OB_OK && !c.regression && g && g->time_mean.v == OB_NODATA && g->time.v == OB_SAME);
    ob_compare_free(&c);

    /* every step 3x slower: each group is worse, and the note names a machine-wide shift */
    m = none();
    m.time_all = 3;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && c.regression && c.n_worse == 4 && fabs(c.time_shift - 2) < 1e-9);
    render(&c, "print", p, buf, sizeof buf);
    CHECK(strstr(buf, "note: step time moved the same way in every group (median +200.0%)") &&
          strstr(buf, "--time-tol off"));
    ob_compare_free(&c);

    /* timing steadiness */
    CHECK(!ob_compare_time_unsteady(1, 1.2, 13, 15.6)); /* slower, same spread */
    CHECK(ob_compare_time_unsteady(1, 1.02, 13, 18.6)); /* the candidate's p90 43% above its median */
    CHECK(ob_compare_time_unsteady(13, 18.6, 1, 1.02)); /* the baseline's */
    CHECK(!ob_compare_time_unsteady(1, 1.3, 1, 1.35));  /* both unsteady alike: compared */
    CHECK(!ob_compare_time_unsteady(1, NAN, 2, NAN));   /* unknown p90: steady */

    /* bytes for people */
    char bb[32];
    CHECK(!strcmp(ob_compare_bytes(512, 0, bb, sizeof bb), "512 B"));
    CHECK(!strcmp(ob_compare_bytes(17489828, 0, bb, sizeof bb), "16.7 MiB"));
    CHECK(!strcmp(ob_compare_bytes(4096, 1, bb, sizeof bb), "+4.00 KiB"));
    CHECK(!strcmp(ob_compare_bytes(-2048, 1, bb, sizeof bb), "-2.00 KiB"));
    CHECK(!strcmp(ob_compare_bytes(1.5 * 1024 * 1024 * 1024, 0, bb, sizeof bb), "1.50 GiB"));
    CHECK(!strcmp(ob_compare_bytes(300 * 1024, 0, bb, sizeof bb), "300 KiB"));
    CHECK(!strcmp(ob_compare_bytes(NAN, 0, bb, sizeof bb), "-"));

    /* the text table: memory in KiB/MiB, and long values keep the columns (and
     * the verdicts) aligned; Markdown and JUnit say the same */
    m = none();
    m.mem_add = 17493924 - 2048;
    m.loss_mul[0] = m.loss_mul[1] = m.loss_mul[2] = 0.8;
    m.time_mul = 13;
    c = cmp_built(base, cand, &m, &o, &st);
    CHECK(st == OB_OK && c.regression);
    f = fopen(p, "w");
    ob_compare_print(&c, f);
    fclose(f);
    f = fopen(p, "r");
    {
        char line[1024];
        int col = -1, rows = 0, aligned = 1;
        while (fgets(line, sizeof line, f) && strncmp(line, "note", 4)) {
            char *v = strstr(line, "verdict");
            if (col < 0 && v) {
                col = (int)(v - line);
                continue;
            }
            rows++;
            /* the verdict starts at the header's column, after two spaces */
            aligned &= col > 2 && (int)strlen(line) > col && line[col - 1] == ' ' && line[col - 2] == ' ' &&
                       line[col] != ' ' &&
                       (!strncmp(line + col, "same", 4) || !strncmp(line + col, "WORSE", 5) ||
                        !strncmp(line + col, "better", 6));
        }
        CHECK_MSG(rows == 4 && aligned, "rows %d, verdict column %d", rows, col);
    }
    rewind(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    /* under the table, why each worse group is worse (the bytes exact there) */
    char *worse_lines = strstr(buf, "\nwhat got worse:\n");
    CHECK_MSG(worse_lines && strstr(worse_lines, "\n  quad / sgd: peak memory 2.00 KiB -> 16.7 MiB (+16.7 MiB; 2048 -> "
                                                 "17493924 bytes)\n") &&
                  strstr(worse_lines, "\n  rosen / sgd: step time worse: "),
              "%s", buf);
    if (worse_lines) *worse_lines = 0;
    CHECK(strstr(buf, "peak 2.00 KiB -> 16.7 MiB worse") && !strstr(buf, "17493924"));
    CHECK(strstr(buf, "-20.0% [-20.0%, -20.0%] better"));
    snprintf(p, sizeof p, "%s/cmp.md", dir);
    render(&c, "markdown", p, buf, sizeof buf);
    CHECK(strstr(buf, "| quad | sgd | 0.1 | +0.0% [+0.0%, +0.0%] same | ") &&
          strstr(buf, " | peak 2.00 KiB -> 16.7 MiB worse | **worse** |") &&
          strstr(buf, "- quad / sgd: peak memory 2.00 KiB -> 16.7 MiB (+16.7 MiB; 2048 -> 17493924 bytes)") &&
          strstr(buf, "| quad | adam | 0.1 | -20.0% [-20.0%, -20.0%] better |"));
    snprintf(p, sizeof p, "%s/cmp.xml", dir);
    render(&c, "junit", p, buf, sizeof buf);
    CHECK(strstr(buf, "tests=\"5\" failures=\"2\"") &&
          strstr(buf, "memory peak 2.00 KiB -&gt; 16.7 MiB worse</system-out>") &&
          strstr(buf, "step time worse: median per-cell change +1200% over 6 cells"));
    ob_compare_free(&c);
    /* a change too small for the rounding shows as the difference:
     * 17489828 -> 17493924 bytes */
    {
        char base2[512];
        snprintf(base2, sizeof base2, "%s/base2.db", dir);
        m = none();
        m.mem_add = 17489828 - 2048;
        build(base2, &m);
        m.mem_add += 4096;
        c = cmp_built(base2, cand, &m, &o, &st);
        g = grp(&c, "quad", "sgd");
        char mt[96];
        memory_line(g, mt, sizeof mt);
        CHECK_MSG(st == OB_OK && c.regression && !strcmp(mt, "peak 16.7 MiB (+4.00 KiB) worse"), "%s", mt);
        CHECK(g && strstr(g->detail, "peak memory 16.7 MiB -> 16.7 MiB (+4.00 KiB; 17489828 -> 17493924 bytes)"));
        ob_compare_free(&c);
    }

    /* the lr judged is in every row: the text table, Markdown and JUnit */
    {
        char cell[96];
        m = none();
        c = cmp_built(base, cand, &m, &o, &st);
        snprintf(p, sizeof p, "%s/lr.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "lr", "final loss", "quad", "adam", cell, sizeof cell);
        CHECK_MSG(st == OB_OK && !strcmp(cell, "0.1"), "lr cell '%s'", cell);
        table_cell(buf, "lr", "final loss", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "0.1"), "lr cell '%s'", cell);
        CHECK(!strstr(buf, "note: lr")); /* nothing to explain when the winners agree */
        snprintf(p, sizeof p, "%s/lr.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK(strstr(buf, "| workload | optimizer | lr | final loss |") && strstr(buf, "| quad | adam | 0.1 | +0.0% "));
        snprintf(p, sizeof p, "%s/lr.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK(strstr(buf, "<system-out>6 matched cells; lr 0.1; final loss +0.0%"));
        ob_compare_free(&c);

        /* the candidate's own best lr moved (quad/adam 3x worse at 0.1, now
         * best at 0.01): judged at the baseline's 0.1, the other one named */
        m.lr01_mul = 3;
        c = cmp_built(base, cand, &m, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK(st == OB_OK && c.regression && g && g->best_lr == 0.1 && g->cand_best_lr == 0.01 && g->lr_from == 0 &&
              g->loss.v == OB_WORSE);
        g = grp(&c, "quad", "sgd");
        CHECK(g && g->best_lr == 0.1 && g->cand_best_lr == 0.1);
        snprintf(p, sizeof p, "%s/lr.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "lr", "final loss", "quad", "adam", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "0.1 (cand best 0.01)"), "lr cell '%s'", cell);
        table_cell(buf, "lr", "final loss", "quad", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "0.1"), "lr cell '%s'", cell);
        CHECK(strstr(buf, "note: lr is where final loss and held-out were judged, on both sides") &&
              strstr(buf, "\"cand best X\": the candidate's own best lr is X"));
        snprintf(p, sizeof p, "%s/lr.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK(strstr(buf, "| quad | adam | 0.1 (cand best 0.01) | +200.0% ") && strstr(buf, "| quad | sgd | 0.1 | "));
        snprintf(p, sizeof p, "%s/lr.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK(strstr(buf, "<system-out>6 matched cells; lr 0.1 (cand best 0.01); final loss +200.0%"));
        ob_compare_free(&c);

        /* a baseline diverged at every lr: the candidate's best is judged and
         * says so; diverged on both sides: the smallest lr */
        char base3[512];
        snprintf(base3, sizeof base3, "%s/base3.db", dir);
        m = none();
        m.rosen_sgd_diverged = 1;
        build(base3, &m);
        m.rosen_sgd_diverged = 0;
        c = cmp_built(base3, cand, &m, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->lr_from == 1 && g->best_lr == 0.1 && g->overall == OB_BETTER);
        snprintf(p, sizeof p, "%s/lr.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "lr", "final loss", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "0.1 (cand best)"), "lr cell '%s'", cell);
        CHECK(strstr(buf, "\"cand best\": the baseline has no finite final loss at any lr"));
        /* converging now reads so in every report, never as an infinite change */
        table_cell(buf, "final loss", "held-out", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "now finite (diverged before) better"), "final loss cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/div.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "| rosen | sgd | 0.1 (cand best) | now finite (diverged before) better | ") &&
                  no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/div.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "lr 0.1 (cand best); final loss now finite (diverged before) better;") &&
                  no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* the reverse: diverged now */
        c = run_cmp(cand, base3, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->overall == OB_WORSE && g->loss.n_to_inf == 3);
        snprintf(p, sizeof p, "%s/div.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "final loss", "held-out", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "now diverged (finite before) worse"), "final loss cell '%s'", cell);
        snprintf(p, sizeof p, "%s/div.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "| rosen | sgd | 0.1 | now diverged (finite before) worse | ") &&
                  strstr(buf, "- rosen / sgd: 3 seeds at lr 0.1 diverged or ended with a non-finite loss") &&
                  no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/div.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "final loss now diverged (finite before) worse;") && no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* some seeds only: counted, the finite part of the interval shown */
        char cand4[512];
        snprintf(cand4, sizeof cand4, "%s/cand4.db", dir);
        m = none();
        m.rosen_sgd_div_seeds = 1; /* seed 0 */
        c = cmp_built(cand, cand4, &m, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->overall == OB_WORSE && g->loss.n_to_inf == 1 && g->loss.n == 3);
        snprintf(p, sizeof p, "%s/div.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "final loss", "held-out", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "+0.0% (1 of 3 seeds now diverged) worse"), "final loss cell '%s'", cell);
        ob_compare_free(&c);
        m.rosen_sgd_div_seeds = 3; /* seeds 0 and 1: the median diverged */
        c = cmp_built(cand, cand4, &m, &o, &st);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "final loss", "held-out", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strncmp(cell, "now diverged on 2 of 3 seeds (finite before) ", 45), "final loss cell '%s'", cell);
        ob_compare_free(&c);
        c = run_cmp(cand4, cand, &o, &st);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "final loss", "held-out", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strncmp(cell, "now finite on 2 of 3 seeds (diverged before) ", 45), "final loss cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        c = run_cmp(base3, base3, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->lr_from == 2 && g->best_lr == 0.01 && g->overall == OB_SAME);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "lr", "final loss", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "0.01 (smallest)"), "lr cell '%s'", cell);
        ob_compare_free(&c);
    }

    /* held-out at the best lr: a seed diverged on one side only counts as the
     * worst value there (held-out loss +inf, metric -inf), as in the report
     * and the final loss, never left out; diverged on both sides, no change.
     * The texts say which way, for the metric (higher is better) too. */
    {
        char cell[96], hd1[512], hd2[512];
        snprintf(hd1, sizeof hd1, "%s/hd1.db", dir);
        snprintf(hd2, sizeof hd2, "%s/hd2.db", dir);
        static const char *const div_adam0 =
            "UPDATE runs SET status = 'diverged' WHERE workload = 'quad' AND optimizer = 'adam' AND lr = 0.1 AND seed = 0";
        /* a metric (quad): the candidate diverged on seed 0 only */
        m = none();
        c = cmp_planted(base, hd1, &m, div_adam0, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK_MSG(st == OB_OK && g && !g->metric_is_loss && g->metric.n == 3 && g->metric.n_to_inf == 1 &&
                  g->metric.n_to_finite == 0 && g->metric.v == OB_SAME && g->metric.effect == 0 &&
                  isinf(g->metric.ci_lo) && g->metric.ci_lo < 0 && g->overall == OB_WORSE,
                  "n %d to_inf %d to_finite %d", g ? g->metric.n : -1, g ? g->metric.n_to_inf : -1,
                  g ? g->metric.n_to_finite : -1);
        snprintf(p, sizeof p, "%s/hd.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "quad", "adam", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "metric +0 (1 of 3 seeds now diverged) worse"), "held-out cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* the same with the other seeds' metric 0.05 lower: worse, over 3 seeds */
        m.metric_add = -0.05;
        c = cmp_planted(base, hd1, &m, div_adam0, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK(st == OB_OK && g && g->metric.v == OB_WORSE && g->metric.n == 3 && fabs(g->metric.effect + 0.05) < 1e-9);
        CHECK_MSG(g && strstr(g->detail, "held-out metric worse: median per-seed change -0.05 over 3 seeds (range "
                                         "-0.05 and below, a 75% interval); medians 0.81 -> 0.76"),
                  "%s", g ? g->detail : "");
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "quad", "adam", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "metric -0.05 (1 of 3 seeds now diverged) worse"), "held-out cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/hd.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, " | metric -0.05 (1 of 3 seeds now diverged) worse | ") && no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/hd.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "held-out metric -0.05 (1 of 3 seeds now diverged) worse;") && no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* every seed diverged in the candidate: the median is worst, told in words */
        m = none();
        c = cmp_planted(base, hd1, &m,
                        "UPDATE runs SET status = 'diverged' WHERE workload = 'quad' AND optimizer = 'adam' "
                        "AND lr = 0.1", &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK(st == OB_OK && g && !g->metric_is_loss && g->metric.v == OB_WORSE && g->metric.n == 3 &&
              g->metric.n_to_inf == 3 && isinf(g->metric.cand) && fabs(g->metric.base - 0.81) < 1e-9);
        snprintf(p, sizeof p, "%s/hd.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "quad", "adam", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "metric now diverged (finite before) worse"), "held-out cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/hd.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK_MSG(no_inf(buf), "%s", buf);
        snprintf(p, sizeof p, "%s/hd.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "held-out metric now diverged (finite before) worse;") && no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* the baseline diverged on seed 0 only: now finite there, not "now diverged" */
        build(hd2, &m);
        plant(hd2, div_adam0);
        c = run_cmp(hd2, base, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK(st == OB_OK && g && g->metric.n == 3 && g->metric.n_to_finite == 1 && g->metric.n_to_inf == 0 &&
              g->metric.v == OB_SAME);
        snprintf(p, sizeof p, "%s/hd.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "quad", "adam", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "metric +0 (1 of 3 seeds now finite) same"), "held-out cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* diverged on both sides: no change, over every seed */
        c = run_cmp(hd2, hd2, &o, &st);
        g = grp(&c, "quad", "adam");
        CHECK(st == OB_OK && g && g->metric.n == 3 && g->metric.n_to_finite == 0 && g->metric.n_to_inf == 0 &&
              g->metric.v == OB_SAME && g->metric.effect == 0 && g->metric.ci_lo == 0 && g->metric.ci_hi == 0);
        ob_compare_free(&c);
        /* no metric (rosen): the held-out loss, diverged seed 0 in the candidate */
        m = none();
        m.rosen_sgd_div_seeds = 1;
        c = cmp_built(base, hd1, &m, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->metric_is_loss && g->metric.n == 3 && g->metric.n_to_inf == 1 &&
              g->metric.v == OB_SAME && g->metric.abs_effect == 0);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "loss +0.0% (1 of 3 seeds now diverged) worse"), "held-out cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        ob_compare_free(&c);
        /* ... the baseline's seed 0 diverged instead */
        c = run_cmp(hd1, base, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->metric_is_loss && g->metric.n == 3 && g->metric.n_to_finite == 1 &&
              g->metric.n_to_inf == 0);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "loss +0.0% (1 of 3 seeds now finite) same"), "held-out cell '%s'", cell);
        ob_compare_free(&c);
        /* ... and on both sides: no change; with --loss-abs-tol too */
        ob_compare_opts oa = o;
        oa.loss_abs_tol = 1e-9;
        c = run_cmp(hd1, hd1, &oa, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->metric_is_loss && g->metric.n == 3 && g->metric.v == OB_SAME &&
              g->metric.effect == 0 && g->metric.abs_effect == 0 && !g->metric.under_abs);
        ob_compare_free(&c);
        /* every seed diverged in the candidate: held-out loss worse, past the floor */
        m = none();
        m.rosen_sgd_diverged = 1;
        c = cmp_built(base, hd1, &m, &oa, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && g && g->metric_is_loss && g->metric.v == OB_WORSE && g->metric.n == 3 &&
              isinf(g->metric.abs_effect) && !g->metric.under_abs);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "held-out", "step time", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "loss now diverged (finite before) worse"), "held-out cell '%s'", cell);
        CHECK_MSG(no_inf(buf), "%s", buf);
        ob_compare_free(&c);
    }

    /* no verdict: the reports say why, escaped for each format; bytes that are
     * not UTF-8 and control characters do not reach them */
    {
        const char *why = "candidate: database 'x<&\"\xff\x01_*|.db' does not exist";
        snprintf(p, sizeof p, "%s/err.xml", dir);
        render_error("junit", why, p, buf, sizeof buf);
        CHECK(strstr(buf, "<testsuites name=\"optbench compare\" tests=\"1\" failures=\"0\" errors=\"1\">") &&
              strstr(buf, "<error type=\"no verdict\" message=\"candidate: database &apos;x&lt;&amp;&quot;? "
                          "_*|.db&apos; does not exist\">") &&
              strstr(buf, "</error>") && !strchr(buf, '\xff') && !strchr(buf, '\x01'));
        /* U+FFFE and U+FFFF are UTF-8 but not XML characters: one '?' each;
         * other characters of more than a byte pass whole */
        render_error("junit", "database '\xef\xbf\xbe\xc3\xa9\xef\xbf\xbfx.db' does not exist", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "message=\"database &apos;?\xc3\xa9?x.db&apos; does not exist\">"), "%s", buf);
        snprintf(p, sizeof p, "%s/err.md", dir);
        render_error("markdown", why, p, buf, sizeof buf);
        CHECK_MSG(!strncmp(buf, "## optbench compare: no verdict\n\n", 33) &&
                  strstr(buf, "compare could not run: candidate: database 'x&lt;&amp;\"? \\_\\*\\|.db' "
                              "does not exist\n") &&
                  strstr(buf, "Baseline base.db, candidate (not given).") && !strchr(buf, '\xff'),
                  "%s", buf);
    }

    /* a group of more than 512 matched cells: each side's median step time is
     * over all of them (257 cells at lr 0.01 of 1 ms, 257 at lr 0.1 of 3 ms:
     * 2 ms), not over the 512 that sort first (1 ms) */
    {
        char big[512];
        snprintf(big, sizeof big, "%s/big.db", dir);
        ob_store *s = new_db(big);
        for (int l = 0; l < 2; l++)
            for (int seed = 0; seed < 257; seed++)
                fx_add(s, 0, &(fx_run){"quad", "sgd", NULL, l ? 0.1 : 0.01, seed, "done", 1.0 + 0.001 * seed, 5,
                                       l ? 3.0 : 1.0, l ? 3.3 : 1.1, 2048, 400, 1.1, NAN, 2});
        ob_store_close(s);
        c = run_cmp(big, big, &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK_MSG(st == OB_OK && g && g->n_matched == 514 && g->time.n == 514 && g->time.base == 2.0 &&
                      g->time.cand == 2.0 && g->loss.n == 257,
                  "step time medians %g -> %g ms over %d cells", g ? g->time.base : NAN, g ? g->time.cand : NAN,
                  g ? g->time.n : 0);
        ob_compare_free(&c);
    }

    /* a later run of a cell that failed, set aside for the cell's earlier
     * finished run: counted, and told, as its failure is not judged */
    {
        static const char *const later =
            "CREATE TEMP TABLE t AS SELECT * FROM runs WHERE id IN (SELECT min(id) FROM runs%s);"
            "UPDATE t SET id = id + (SELECT max(id) FROM runs), status = 'failed', final_loss = NULL;"
            "INSERT INTO runs SELECT * FROM t;";
        char sql[400];
        for (int twice = 0; twice < 2; twice++) {
            snprintf(sql, sizeof sql, later, twice ? " GROUP BY optimizer" : "");
            c = cmp_planted(base, cand, (m = none(), &m), sql, &o, &st);
            CHECK_MSG(st == OB_OK && c.n_masked_cand == 1 + twice && c.n_masked_base == 0 && !c.regression,
                      "%d and %d set aside", c.n_masked_base, c.n_masked_cand);
            snprintf(p, sizeof p, "%s/masked.txt", dir);
            render(&c, "print", p, buf, sizeof buf);
            CHECK_MSG(strstr(buf, twice ? "note: 2 later runs in the candidate database failed or did not finish and "
                                          "were set aside for an earlier finished run of the same cell, so their "
                                          "failures are not judged here (an earlier success stands in for them)\n"
                                        : "note: 1 later run in the candidate database failed or did not finish and "
                                          "was set aside for an earlier finished run of the same cell, so its "
                                          "failure is not judged here (an earlier success stands in for it)\n"),
                      "%s", buf);
            ob_compare_free(&c);
        }
    }

    /* runs on different devices (the CI runner changed): their step times are
     * not compared, unless asked; loss and memory are still judged */
    {
        char cell[96];
        m = none();
        m.time_mul = 3;          /* rosen/sgd 3x slower */
        m.mem_add = 4096;        /* quad/sgd more peak memory */
        c = cmp_planted(base, cand, &m, "UPDATE runs SET device = 'cpu: 8 threads'", &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK_MSG(st == OB_OK && c.n_device_differs == 24 && c.n_backend_differs == 0 && !c.device_mixed &&
                      !strcmp(c.device_base, "cpu: test") && !strcmp(c.device_cand, "cpu: 8 threads"),
                  "%d cells, %s -> %s", c.n_device_differs, c.device_base, c.device_cand);
        CHECK(g && g->time.v == OB_NODATA && g->time_other_device == 6 && g->time_cells == 0 &&
              g->overall == OB_SAME && !strstr(g->detail, "step time"));
        /* another device of the same backend: peak memory is not judged either
         * (kernels and workspaces follow the device), optimizer state is */
        g = grp(&c, "quad", "sgd");
        CHECK(g && g->peak_mem.v == OB_NODATA && g->mem_other_device == 6 && g->state.v == OB_SAME &&
              g->overall == OB_SAME && c.n_worse == 0 && c.n_memdev_differs == 24 && !c.regression);
        snprintf(p, sizeof p, "%s/dev.txt", dir);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "step time", "memory", "rosen", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "other devices, not judged"), "step time cell '%s'", cell);
        CHECK_MSG(strstr(buf, "note: 24 matched cells ran on different devices (baseline: \"cpu: test\"; candidate: "
                              "\"cpu: 8 threads\"): their step times are not compared (--time-across-devices "
                              "compares them anyway); nor is their peak memory (the kernels and workspaces follow "
                              "the device)\n"),
                  "%s", buf);
        snprintf(p, sizeof p, "%s/dev.md", dir);
        render(&c, "markdown", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "| rosen | sgd | 0.1 | +0.0% [+0.0%, +0.0%] same | loss +0.0% [+0.0%, +0.0%] same | "
                              "other devices, not judged | state same; peak: other devices | same |") &&
                      strstr(buf, "\nNote: 24 matched cells ran on different devices (baseline: \"cpu: test\"; "
                                  "candidate: \"cpu: 8 threads\"): their step times are not compared"),
                  "%s", buf);
        snprintf(p, sizeof p, "%s/dev.xml", dir);
        render(&c, "junit", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "tests=\"5\" failures=\"0\"") &&
                      strstr(buf, "<testcase classname=\"optbench.devices\" name=\"cells run on different devices\"") &&
                      strstr(buf, "<system-out>note: 24 matched cells ran on different devices (baseline: "
                                  "&quot;cpu: test&quot;; candidate: &quot;cpu: 8 threads&quot;): their step times"),
                  "%s", buf);
        ob_compare_free(&c);
        /* with step time off, the note says so; a tolerance of 0 is one */
        for (int off = 0; off < 2; off++) {
            ob_compare_opts ot = o;
            ot.time_tol = off ? -1 : 0;
            c = cmp_planted(base, cand, &m, "UPDATE runs SET device = 'cpu: 8 threads'", &ot, &st);
            snprintf(p, sizeof p, "%s/dev_tol.txt", dir);
            render(&c, "print", p, buf, sizeof buf);
            CHECK_MSG(st == OB_OK && strstr(buf, off ? "\"cpu: 8 threads\"): step time is not judged (--time-tol off)"
                                                     : "\"cpu: 8 threads\"): their step times are not compared"),
                      "time_tol %g: %s", ot.time_tol, buf);
            ob_compare_free(&c);
        }
        /* the same device, its OpenMP threads waiting otherwise (the
         * environment's OMP_WAIT_POLICY): step times are another device's,
         * peak memory still compares (here worse) */
        c = cmp_planted(base, cand, &m, "UPDATE runs SET device = 'test; OpenMP waits: OMP_WAIT_POLICY=passive'",
                        &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK_MSG(st == OB_OK && c.n_device_differs == 24 && c.n_memdev_differs == 0 && g &&
                      g->time.v == OB_NODATA && g->time_other_device == 6,
                  "%d cells on other devices, %d for memory (%s -> %s)", c.n_device_differs, c.n_memdev_differs,
                  c.device_base, c.device_cand);
        g = grp(&c, "quad", "sgd");
        CHECK(g && g->mem_other_device == 0 && g->peak_mem.v == OB_WORSE && c.regression);
        ob_compare_free(&c);
        /* ... judged anyway with time_across_devices */
        ob_compare_opts oa = o;
        oa.time_across_devices = 1;
        c = run_cmp(base, cand, &oa, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && c.regression && c.n_device_differs == 24 && g && g->time.v == OB_WORSE &&
              g->time_other_device == 0 && fabs(g->time.effect - 2) < 1e-9);
        render(&c, "print", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "their step times are compared anyway (--time-across-devices)"), "%s", buf);
        ob_compare_free(&c);
        /* the same devices: judged, as before */
        c = cmp_built(base, cand, &m, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && c.regression && c.n_device_differs == 0 && g && g->time.v == OB_WORSE);
        render(&c, "print", p, buf, sizeof buf);
        CHECK(!strstr(buf, "different devices"));
        ob_compare_free(&c);
        /* one seed's cells only on another device: the rest still judged */
        plant(cand, "UPDATE runs SET device = 'cpu: 8 threads' WHERE workload = 'rosen' AND optimizer = 'sgd' "
                    "AND seed = 0");
        c = run_cmp(base, cand, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && c.n_device_differs == 2 && g && g->time_other_device == 2 && g->time.n == 4 &&
              g->time.v == OB_WORSE);
        render(&c, "print", p, buf, sizeof buf);
        CHECK_MSG(strstr(buf, "note: 2 matched cells ran on different devices"), "%s", buf);
        ob_compare_free(&c);
        /* a side that does not say where it ran: not taken as another device */
        plant(cand, "UPDATE runs SET backend = NULL, device = NULL");
        c = run_cmp(base, cand, &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK(st == OB_OK && c.n_device_differs == 0 && g && g->time.v == OB_WORSE);
        ob_compare_free(&c);
        /* another backend: peak memory is not compared either (CPU and GPU
         * figures), optimizer state still is; the flag is about time only */
        c = cmp_planted(base, cand, &m,
                        "UPDATE runs SET backend = 'cuda', device = 'cuda: NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, "
                        "matmul fp32); data parallel over devices 0-1'",
                        &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK(st == OB_OK && !c.regression && c.n_device_differs == 24 && c.n_backend_differs == 24 && g &&
              g->peak_mem.v == OB_NODATA && g->mem_other_backend == 6 && g->state.v == OB_SAME);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "memory", "verdict", "quad", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "state same; peak: other backend"), "memory cell '%s'", cell);
        CHECK_MSG(strstr(buf, "candidate: \"cuda: NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, matmul fp32); data "
                              "parallel over devices 0-1\"): their step times are not compared "
                              "(--time-across-devices compares them anyway); their peak memory is not compared "
                              "(another backend: CPU and GPU memory figures do not compare)\n"),
                  "%s", buf);
        ob_compare_free(&c);
        c = run_cmp(base, cand, &oa, &st);
        g = grp(&c, "quad", "sgd");
        CHECK(st == OB_OK && c.regression && g && g->peak_mem.v == OB_NODATA && g->overall == OB_SAME);
        g = grp(&c, "rosen", "sgd");
        CHECK(g && g->time.v == OB_WORSE);
        ob_compare_free(&c);
        /* the same backend, the batch split over two replicas: each run records
         * one replica's peak, so a larger one is not a regression */
        c = cmp_planted(base, cand, &m,
                        "UPDATE runs SET device = 'cpu: test; data parallel: 2 replicas, one after another', "
                        "peak_mem_bytes = peak_mem_bytes * 2 + 4096",
                        &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK_MSG(st == OB_OK && !c.regression && c.n_device_differs == 24 && c.n_backend_differs == 0 &&
                      c.n_layout_differs == 24 && g && g->peak_mem.v == OB_NODATA && g->mem_other_layout == 6 &&
                      g->mem_other_backend == 0 && g->state.v == OB_SAME,
                  "regression %d, layouts %d", c.regression, c.n_layout_differs);
        render(&c, "print", p, buf, sizeof buf);
        table_cell(buf, "memory", "verdict", "quad", "sgd", cell, sizeof cell);
        CHECK_MSG(!strcmp(cell, "state same; peak: other data-parallel layout"), "memory cell '%s'", cell);
        CHECK_MSG(strstr(buf, "their peak memory is not compared (split over another number of data-parallel "
                              "replicas: each side records one replica's peak)\n"),
                  "%s", buf);
        ob_compare_free(&c);
        /* the same layout on both sides: compared (and here worse) */
        plant(base, "UPDATE runs SET device = 'cpu: test; data parallel: 2 replicas, one after another'");
        c = run_cmp(base, cand, &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK(st == OB_OK && c.regression && c.n_layout_differs == 0 && g && g->peak_mem.v == OB_WORSE);
        ob_compare_free(&c);
        /* two replicas each, on other GPUs: the same layout, compared */
        plant(base, "UPDATE runs SET backend = 'cuda', device = 'cuda: X; data parallel over devices 0-1'");
        plant(cand, "UPDATE runs SET backend = 'cuda', device = 'cuda: X; data parallel over devices 2-3'");
        c = run_cmp(base, cand, &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK(st == OB_OK && c.n_device_differs == 24 && c.n_layout_differs == 0 && g && g->peak_mem.v == OB_WORSE);
        ob_compare_free(&c);
        /* two against four */
        plant(cand, "UPDATE runs SET device = 'cuda: X; data parallel over devices 0-3'");
        c = run_cmp(base, cand, &o, &st);
        g = grp(&c, "quad", "sgd");
        CHECK(st == OB_OK && c.n_layout_differs == 24 && g && g->peak_mem.v == OB_NODATA);
        ob_compare_free(&c);
        mod plain = none();
        build(base, &plain);
        /* a database without the backend and device columns still loads */
        c = cmp_planted(base, cand, &m,
                        "ALTER TABLE runs DROP COLUMN backend; ALTER TABLE runs DROP COLUMN device",
                        &o, &st);
        g = grp(&c, "rosen", "sgd");
        CHECK_MSG(st == OB_OK && c.n_matched == 24 && c.n_device_differs == 0 && g && g->time.v == OB_WORSE, "%s",
                  last_err);
        ob_compare_free(&c);
    }

    /* a number's column holding text (a hand-edited database): 'Infinity' is
     * infinite, a word that is no number is unknown, never SQLite's 0.0
     * (which would read as a far better loss) */
    {
        mod plain = none();
        build(base, &plain);
        ob_status st2;
        ob_compare c2 = cmp_planted(base, cand, &plain,
                                    "UPDATE runs SET final_loss = 'Infinity' WHERE workload = 'quad' AND "
                                    "optimizer = 'sgd'",
                                    &o, &st2);
        const ob_cmp_group *g2 = grp(&c2, "quad", "sgd");
        CHECK_MSG(st2 == OB_OK && c2.regression && g2 && g2->overall == OB_WORSE && g2->loss.v != OB_BETTER,
                  "'Infinity' as text: regression %d", c2.regression);
        ob_compare_free(&c2);
        c2 = cmp_planted(base, cand, &plain,
                         "UPDATE runs SET final_loss = 'oops' WHERE workload = 'quad' AND optimizer = 'sgd'",
                         &o, &st2);
        g2 = grp(&c2, "quad", "sgd");
        CHECK_MSG(st2 == OB_OK && g2 && g2->loss.v != OB_BETTER, "'oops' as text: loss verdict %d",
                  g2 ? (int)g2->loss.v : -1);
        ob_compare_free(&c2);
        /* diverging now at an lr above the judged one (0.1; sgd's 1.0 on
         * quad): a note, not a regression */
        mod extra = none();
        extra.extra_cell = 1;
        build(base, &extra);
        c2 = cmp_planted(base, cand, &extra,
                         "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                         "optimizer = 'sgd' AND lr = 1.0",
                         &o, &st2);
        build(base, &plain);
        g2 = grp(&c2, "quad", "sgd");
        CHECK(st2 == OB_OK && !c2.regression && g2 && g2->n_new_diverged_other == 1 && g2->n_new_diverged == 0 &&
              g2->n_new_diverged_below == 0 && g2->overall != OB_WORSE);
        char p2[600], buf2[8192];
        snprintf(p2, sizeof p2, "%s.txt", cand);
        render(&c2, "print", p2, buf2, sizeof buf2);
        CHECK_MSG(strstr(buf2, "note: 1 cell diverged in the candidate and not in the baseline at lrs above the "
                               "judged one, in 1 group (e.g. sgd on quad)"),
                  "%s", buf2);
        ob_compare_free(&c2);
        /* ... below it (0.01), where a larger lr trains: the edge of
         * stability did not move there; a regression */
        c2 = cmp_planted(base, cand, &plain,
                         "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                         "optimizer = 'adam' AND lr = 0.01",
                         &o, &st2);
        g2 = grp(&c2, "quad", "adam");
        CHECK_MSG(st2 == OB_OK && c2.regression && g2 && g2->n_new_diverged_below == 3 && g2->n_new_diverged == 0 &&
                      g2->n_new_diverged_other == 0 && g2->overall == OB_WORSE,
                  "below: regression %d", c2.regression);
        CHECK_MSG(g2 && strstr(g2->detail, "3 cells at lrs below the judged 0.1 diverged or ended with a non-finite "
                                           "loss in the candidate, not in the baseline (the first: lr 0.01, seed 0): "
                                           "a smaller lr than one that trains"),
                  "%s", g2 ? g2->detail : "");
        render(&c2, "print", p2, buf2, sizeof buf2);
        CHECK_MSG(strstr(buf2, "WORSE (new divergences)"), "%s", buf2);
        ob_compare_free(&c2);
        /* ... unless as many cells there went the other way: one seed of
         * adam at 0.01 diverged in the baseline and trains in the candidate,
         * another the other way round */
        plant(base, "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                    "optimizer = 'adam' AND lr = 0.01 AND seed = 0");
        c2 = cmp_planted(base, cand, &plain,
                         "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                         "optimizer = 'adam' AND lr = 0.01 AND seed = 1",
                         &o, &st2);
        g2 = grp(&c2, "quad", "adam");
        CHECK_MSG(st2 == OB_OK && !c2.regression && g2 && g2->n_new_diverged_below == 1 &&
                      g2->n_to_finite_below == 1 && g2->overall != OB_WORSE,
                  "one each way below: regression %d", c2.regression);
        ob_compare_free(&c2);
        build(base, &plain);
        /* two of three seeds 50% worse, one not: beyond the tolerance, yet the
         * seeds do not settle it: "inconclusive", not "same", and no failure */
        c2 = cmp_planted(base, cand, &plain,
                         "UPDATE runs SET final_loss = final_loss * 1.5 WHERE workload = 'quad' AND "
                         "optimizer = 'adam' AND lr = 0.1 AND seed < 2",
                         &o, &st2);
        g2 = grp(&c2, "quad", "adam");
        CHECK(st2 == OB_OK && !c2.regression && g2 && g2->loss.v == OB_SAME && g2->loss.unsure);
        snprintf(p2, sizeof p2, "%s.txt", cand);
        render(&c2, "print", p2, buf2, sizeof buf2);
        CHECK_MSG(strstr(buf2, "+50.0% [+0.0%, +50.0%] inconclusive"), "%s", buf2);
        ob_compare_free(&c2);
        /* at the judged lr: a regression, said in the Markdown verdict too */
        c2 = cmp_planted(base, cand, &plain,
                         "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                         "optimizer = 'adam' AND lr = 0.1 AND seed = 0",
                         &o, &st2);
        CHECK(st2 == OB_OK && c2.regression);
        snprintf(p2, sizeof p2, "%s.md", cand);
        render(&c2, "markdown", p2, buf2, sizeof buf2);
        CHECK_MSG(strstr(buf2, "| **worse** (new divergences) |"), "%s", buf2);
        ob_compare_free(&c2);
        /* a seed that now diverges there and one that now converges: rounding
         * moves the edge of stability both ways, so they offset; the final
         * loss judges what is left (+inf and -inf among three seeds) */
        plant(base, "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                    "optimizer = 'adam' AND lr = 0.1 AND seed = 1");
        c2 = cmp_planted(base, cand, &plain,
                         "UPDATE runs SET status = 'diverged', final_loss = 1e999 WHERE workload = 'quad' AND "
                         "optimizer = 'adam' AND lr = 0.1 AND seed = 0",
                         &o, &st2);
        g2 = grp(&c2, "quad", "adam");
        CHECK_MSG(st2 == OB_OK && g2 && g2->best_lr == 0.1 && g2->n_new_diverged == 1 && g2->loss.n_to_finite == 1 &&
                      g2->overall != OB_WORSE && !strstr(g2->detail, "diverged"),
                  "%s", g2 ? g2->detail : "");
        ob_compare_free(&c2);
        build(base, &plain);
        build(cand, &plain);
    }

    /* nothing in common: unusable */
    snprintf(cand, sizeof cand, "%s/other.db", dir);
    {
        ob_store *s = new_db(cand);
        fx_add(s, 0, &(fx_run){"other", "adam", NULL, 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 20});
        ob_store_close(s);
    }
    c = run_cmp(base, cand, &o, &st);
    CHECK(st == OB_ERR_INPUT);
    /* an empty optbench database: unusable */
    snprintf(cand, sizeof cand, "%s/empty.db", dir);
    ob_store_close(new_db(cand));
    c = run_cmp(base, cand, &o, &st);
    CHECK(st == OB_ERR_INPUT);

    test_edges(dir);
    test_busy(dir);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
