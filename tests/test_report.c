/* tests/test_report.c - `optbench report` on the reference database: every
 * documented CSV file exists and reads back through libcsv's parser with the
 * right values (quoting of commas, quotes and newlines included), the gnuplot
 * scripts read those CSVs and write PNG and SVG, summary.md and index.html hold
 * the ranked tables, gnuplot renders every figure when installed, and bad
 * databases are refused. */
#include <csv.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "plots/figures.h"
#include "plots/report.h"
#include "plots/latex.h"
#include "results/dataset.h"
#include "results/csv.h"
#include "results/export.h"
#include "test_stats_db.h"

/* ---- a CSV file read back with libcsv ---------------------------------------- */

typedef struct table {
    int rows, cols;       /* rows include the header */
    char **cell;          /* (rows, cols) */
    int cap, row_cols, bad_width;
} table;

static void on_field(void *s, size_t len, void *data)
{
    table *t = data;
    int r = t->rows, c = t->row_cols++;
    if (r == 0) t->cols = t->row_cols; /* the header decides the width */
    if (c >= t->cols) {
        t->bad_width = 1;
        return;
    }
    int need = r * t->cols + c + 1;
    if (need > t->cap) {
        int cap = 2 * need + 64;
        t->cell = realloc(t->cell, (size_t)cap * sizeof *t->cell);
        for (int i = t->cap; i < cap; i++) t->cell[i] = NULL;
        t->cap = cap;
    }
    char *v = malloc(len + 1);
    memcpy(v, s, len);
    v[len] = 0;
    t->cell[r * t->cols + c] = v;
}

static void on_row(int ch, void *data)
{
    (void)ch;
    table *t = data;
    if (t->rows > 0 && t->row_cols != t->cols) t->bad_width = 1;
    t->rows++;
    t->row_cols = 0;
}

static int read_table(const char *dir, const char *name, table *t)
{
    memset(t, 0, sizeof *t);
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    struct csv_parser cp;
    csv_init(&cp, CSV_STRICT | CSV_STRICT_FINI);
    char buf[4096];
    size_t n;
    int ok = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (csv_parse(&cp, buf, n, on_field, on_row, t) != n) ok = -1;
    if (csv_fini(&cp, on_field, on_row, t) != 0) ok = -1;
    csv_free(&cp);
    fclose(f);
    return ok || t->bad_width ? -1 : 0;
}

static const char *cell(const table *t, int r, const char *col)
{
    for (int c = 0; c < t->cols; c++)
        if (t->cell[c] && !strcmp(t->cell[c], col)) return t->cell[r * t->cols + c] ? t->cell[r * t->cols + c] : "";
    return NULL;
}

/* Row index where column a == va and column b == vb, -1 when none. */
static int find_row(const table *t, const char *a, const char *va, const char *b, const char *vb)
{
    for (int r = 1; r < t->rows; r++) {
        const char *x = cell(t, r, a), *y = b ? cell(t, r, b) : NULL;
        if (x && !strcmp(x, va) && (!b || (y && !strcmp(y, vb)))) return r;
    }
    return -1;
}

static void free_table(table *t)
{
    for (int i = 0; i < t->rows * t->cols && i < t->cap; i++) free(t->cell[i]);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

static char *slurp(const char *dir, const char *name) { return check_slurp(dir, name, NULL); }

static int file_starts(const char *dir, const char *name, const char *magic, size_t n)
{
    char *b = slurp(dir, name);
    int ok = b && strlen(b) >= n && !memcmp(b, magic, n);
    free(b);
    return ok;
}

static double num_of(const char *s) { return s && *s ? strtod(s, NULL) : NAN; }

/* summary.tex: n_tables tables, each row with as many cells as its column
 * spec, every '&' of a row a column separator (labels escaped). Returns the
 * number of tables. */
static int check_tex(const char *out, int want_cols_min)
{
    char *t = slurp(out, "summary.tex");
    CHECK_MSG(t != NULL, "no summary.tex");
    if (!t) return 0;
    int tables = 0, cols = 0, rows = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        char *spec = strstr(line, "\\begin{tabular}{@{}");
        if (spec) {
            tables++;
            cols = 0;
            for (char *c = spec + strlen("\\begin{tabular}{@{}"); *c && *c != '@'; c++) cols += *c == 'r' || *c == 'l' || *c == 'c';
            CHECK_MSG(cols >= want_cols_min, "a tabular of %d columns", cols);
            continue;
        }
        size_t l = strlen(line);
        if (cols && l > 2 && !strcmp(line + l - 2, "\\\\")) {
            int amp = 0;
            for (size_t i = 0; i < l; i++) amp += line[i] == '&' && (i == 0 || line[i - 1] != '\\');
            /* \multicolumn{k} is k cells */
            for (char *m = strstr(line, "\\multicolumn{"); m; m = strstr(m + 1, "\\multicolumn{"))
                amp += atoi(m + strlen("\\multicolumn{")) - 1;
            CHECK_MSG(amp == cols - 1, "a row of %d cells in a tabular of %d: %s", amp + 1, cols, line);
            rows++;
        }
        if (strstr(line, "\\end{tabular}")) cols = 0;
    }
    CHECK(rows > tables);
    free(t);
    return tables;
}

/* Options for the report of db into out: the default statistics, not rendered. */
static void report_opts(ob_report_opts *o, const char *db, const char *out)
{
    memset(o, 0, sizeof *o);
    ob_stats_opts_default(&o->stats);
    o->db_path = db;
    o->out_dir = out;
    o->no_render = 1;
}

/* The report of db into out with the default options, not rendered. */
static void write_report(const char *db, const char *out, ob_report_result *res)
{
    ob_report_opts o;
    report_opts(&o, db, out);
    ob_err e = {0};
    CHECK_OK(ob_report_write(&o, res, &e), &e);
}

/* The store of db opened with flags (OB_STORE_CREATE or OB_STORE_EXISTING);
 * NULL when it does not open. */
static ob_store *open_store(const char *db, ob_open_mode flags)
{
    ob_err e = {0};
    ob_store *st = NULL;
    CHECK_OK(ob_store_open(db, flags, &st, &e), &e);
    return st;
}

/* A new, empty database at db (an old one removed), open. */
static ob_store *new_store(const char *db)
{
    remove(db);
    return open_store(db, OB_STORE_CREATE);
}

/* The reference database built at db, open to add runs to. */
static ob_store *reference_store(const char *db)
{
    CHECK(fx_build_reference(db) == 0);
    return open_store(db, OB_STORE_EXISTING);
}

/* sql run on the database at db, outside the store. */
static void db_exec(const char *db, const char *sql)
{
    sqlite3 *q = NULL;
    CHECK(sqlite3_open(db, &q) == SQLITE_OK);
    CHECK(sqlite3_exec(q, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(q);
}

static void test_tables(const char *db, const char *out)
{
    ob_report_result res;
    write_report(db, out, &res);
    CHECK(check_tex(out, 6) == 3); /* two workloads' and the profile's */
    /* how settled the best lrs are, under a workload's table */
    char *md0 = slurp(out, "summary.md");
    const char *how = md0 ? strstr(md0, "Best lr under resamples of the seeds: how settled") : NULL;
    CHECK_MSG(how && strstr(how + 1, "\n\nBest lr under resamples of the seeds: ") &&
                  strstr(how + 1, " in all 2000 (3 seeds make 10 distinct resamples: the shares are coarse)."),
              "%s", md0 ? md0 : "no summary.md");
    free(md0);
    /* rosen adam's lr range (one lr) is not measured, marked and explained */
    char *tex = slurp(out, "summary.tex");
    /* the profile's areas by rank, with the seeds' interval and share of the largest */
    CHECK_MSG(tex && strstr(tex, "\\label{tab:optbench-profile}") &&
                  strstr(tex, "Rank & Optimizer & Area & 95\\% (seeds) & Largest in & Workloads won \\\\") &&
                  strstr(tex, "    1 & adam & 0.583 & [0.583, 0.583] & 100\\% & 1 of 2 \\\\") &&
                  strstr(tex, "    2 & sgd & 0.500 & [0.500, 0.500] & 0\\% & 1 of 2 \\\\"),
              "%s", tex ? tex : "no summary.tex");
    CHECK(tex && strstr(tex, "--$^\\ddagger$") && strstr(tex, "$^\\ddagger$: lr range not measured") &&
          !strstr(tex, "$\\geq$ 0 "));
    free(tex);
    char esc[128];
    ob_latex_escape("a_b&c%d$e#f{g}h~i^j\\k", esc, sizeof esc);
    CHECK_MSG(!strcmp(esc, "a\\_b\\&c\\%d\\$e\\#f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k"),
              "escaped: %s", esc);
    CHECK(res.n_runs == 24 && res.n_groups == 4 && res.n_figures > 0 && res.n_rendered == 0);

    int nd;
    const ob_file_doc *docs = ob_export_docs(&nd);
    for (int i = 0; i < nd; i++) {
        table t;
        /* files written only when there is something to write (and where they are tested) */
        static const char *const only_with[][2] = {
            {"confirm.csv", "confirmation runs (test_confirm)"},
            {"time_to_heldout_target.csv", "evaluations during training (tests/cli/report.sh)"},
            {"best_configuration.csv", "sweeps (tests/cli/sweep_figure.sh)"},
            {"hp_sweep.csv", "sweeps besides the lr (test_report_figures)"},
            {"profile_tuned.csv", "several configurations of an optimizer (tests/cli/search.sh)"},
            {"profile_tuned_area.csv", "several configurations of an optimizer (tests/cli/search.sh)"},
            {"profile_tuned_picks.csv", "several configurations of an optimizer (tests/cli/search.sh)"},
            {"profile_tuned_band.csv", "several configurations of an optimizer (tests/cli/search.sh)"},
            {"tuning_budget.csv", "several configurations of an optimizer (tests/cli/search.sh)"},
        };
        int skip = 0;
        for (size_t k = 0; k < sizeof only_with / sizeof only_with[0] && !skip; k++) {
            if (strcmp(docs[i].name, only_with[k][0])) continue;
            char *b = slurp(out, only_with[k][0]);
            CHECK_MSG(b == NULL, "%s written without %s", only_with[k][0], only_with[k][1]);
            free(b);
            skip = 1;
        }
        if (skip) continue;
        CHECK_MSG(read_table(out, docs[i].name, &t) == 0, "%s does not parse as CSV", docs[i].name);
        /* every run here has the defaults: settings.csv is its header (its rows: tests/cli/sweep.sh) */
        const int want = !strcmp(docs[i].name, "settings.csv") ? 1 : 2;
        CHECK_MSG(want == 1 ? t.rows == 1 : t.rows >= 2, "%s has %d rows", docs[i].name, t.rows);
        free_table(&t);
    }

    table t;
    CHECK(read_table(out, "summary.csv", &t) == 0);
    int r = find_row(&t, "workload", "quad", "optimizer", "adam");
    CHECK(r > 0);
    if (r > 0) {
        CHECK(!strcmp(cell(&t, r, "rank"), "1"));
        CHECK(num_of(cell(&t, r, "best_lr")) == 0.01);
        CHECK(num_of(cell(&t, r, "final_median")) == 1.0);
        CHECK(num_of(cell(&t, r, "final_ci_lo")) == 0.8 && num_of(cell(&t, r, "final_ci_hi")) == 1.2);
        /* min-max of 3 seeds holds the median with probability 1 - 2^-2, not 95% */
        CHECK(num_of(cell(&t, r, "final_ci_coverage")) == 0.75 && num_of(cell(&t, r, "eval_loss_ci_coverage")) == 0.75 &&
              num_of(cell(&t, r, "eval_metric_ci_coverage")) == 0.75);
        /* each coverage right after its interval */
        for (int c = 0; c + 1 < t.cols; c++)
            if (strlen(t.cell[c]) > 6 && !strcmp(t.cell[c] + strlen(t.cell[c]) - 6, "_ci_hi")) {
                char want[64];
                snprintf(want, sizeof want, "%.*s_ci_coverage", (int)strlen(t.cell[c]) - 6, t.cell[c]);
                CHECK_MSG(!strcmp(t.cell[c + 1], want), "%s follows %s", t.cell[c + 1], t.cell[c]);
            }
        CHECK(num_of(cell(&t, r, "eval_metric_median")) == 0.9);
        /* no seed diverged at the best lr: the worst finite one is the max */
        CHECK(num_of(cell(&t, r, "final_max_finite")) == num_of(cell(&t, r, "final_max")));
        /* a share of resamples of the seeds */
        CHECK(num_of(cell(&t, r, "best_lr_share")) > 0 && num_of(cell(&t, r, "best_lr_share")) <= 1);
        /* lr 0.1 is within 10% of the best but a seed diverged there: a closed range */
        CHECK(!strcmp(cell(&t, r, "lr_width_open"), "0"));
        CHECK_NEAR(num_of(cell(&t, r, "lr_width_decades")), log(1.1) / log(4.0), 1e-12);
        CHECK_NEAR(num_of(cell(&t, r, "divergence_rate")), 1.0 / 9, 1e-15);
        CHECK(num_of(cell(&t, r, "first_diverged_lr")) == 0.1);
    }
    r = find_row(&t, "workload", "quad", "optimizer", "sgd");
    CHECK(r > 0 && !strcmp(cell(&t, r, "rank"), "2") && !strcmp(cell(&t, r, "failed"), "1"));
    CHECK(r > 0 && !strcmp(cell(&t, r, "lr_width_unmeasured"), ""));
    /* rosen adam: one lr, so no lr range (not ">= 0"), and the CSV says why */
    r = find_row(&t, "workload", "rosen", "optimizer", "adam");
    CHECK(r > 0 && !strcmp(cell(&t, r, "lr_width_decades"), "") && !strcmp(cell(&t, r, "lr_width_unmeasured"), "one_lr"));
    /* no width, so neither open nor closed */
    CHECK(r > 0 && !strcmp(cell(&t, r, "lr_width_open"), ""));
    free_table(&t);

    /* runs.csv: text quoted by libcsv survives commas, quotes and newlines */
    CHECK(read_table(out, "runs.csv", &t) == 0);
    r = find_row(&t, "status", "failed", NULL, NULL);
    CHECK(r > 0);
    if (r > 0) {
        CHECK_MSG(!strcmp(cell(&t, r, "error"), FX_ERROR_TEXT), "error read back as '%s'", cell(&t, r, "error"));
        CHECK(!strcmp(cell(&t, r, "hparams"), "{\"lr\":0.01,\"train\":{\"clip_norm\":0}}"));
        CHECK(!strcmp(cell(&t, r, "final_loss"), "")); /* not measured: empty */
    }
    r = find_row(&t, "status", "diverged", "optimizer", "adam");
    CHECK(r > 0 && !strcmp(cell(&t, r, "diverged_step"), "7"));
    /* a diverged run's values as the statistics count them: the worst, not empty */
    CHECK(r > 0 && !strcmp(cell(&t, r, "final_loss"), "inf") && !strcmp(cell(&t, r, "eval_loss"), "inf") &&
          !strcmp(cell(&t, r, "eval_metric"), "-inf"));
    r = find_row(&t, "status", "pending", NULL, NULL);
    CHECK(r > 0 && !strcmp(cell(&t, r, "final_loss"), "") && !strcmp(cell(&t, r, "eval_loss"), ""));
    CHECK(t.rows == 25);
    /* the whole run's wall time, as stored (1 s for each run the fixture finished) */
    int n_done = 0;
    for (int k = 1; k < t.rows; k++)
        if (!strcmp(cell(&t, k, "status"), "done")) {
            n_done++;
            CHECK_MSG(!strcmp(cell(&t, k, "wall_s"), "1"), "run %s: wall_s '%s'", cell(&t, k, "run_id"),
                      cell(&t, k, "wall_s"));
        }
    CHECK(n_done > 0);
    free_table(&t);

    CHECK(read_table(out, "time_to_target.csv", &t) == 0);
    r = find_row(&t, "workload", "quad", "optimizer", "sgd");
    CHECK(r > 0 && !strcmp(cell(&t, r, "censored"), "1") && !strcmp(cell(&t, r, "steps"), "inf"));
    /* a censored time has no interval, so no coverage of one */
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "steps_ci_coverage"), "") && !strcmp(cell(&t, r, "step_time_ci_coverage"), ""),
              "censored: coverage '%s', '%s'", r > 0 ? cell(&t, r, "steps_ci_coverage") : "?",
              r > 0 ? cell(&t, r, "step_time_ci_coverage") : "?");
    r = find_row(&t, "workload", "quad", "optimizer", "adam");
    CHECK(r > 0 && !strcmp(cell(&t, r, "steps"), "14") && num_of(cell(&t, r, "lr")) == 0.1 &&
          !strcmp(cell(&t, r, "target_source"), "default"));
    /* 3 seeds: the range holds the median with 0.75, its times' with more */
    CHECK(r > 0 && num_of(cell(&t, r, "steps_ci_coverage")) == 0.75 &&
          num_of(cell(&t, r, "step_time_ci_coverage")) > 0.75);
    free_table(&t);

    CHECK(read_table(out, "lr_sweep.csv", &t) == 0);
    CHECK(t.rows == 1 + 3 + 3 + 1 + 1);
    for (int i = 1; i < t.rows; i++)
        if (!strcmp(cell(&t, i, "workload"), "quad") && !strcmp(cell(&t, i, "optimizer"), "sgd") &&
            num_of(cell(&t, i, "lr")) == 0.1)
            CHECK(!strcmp(cell(&t, i, "final_median"), "inf") && !strcmp(cell(&t, i, "diverged"), "3") &&
                  !strcmp(cell(&t, i, "final_min"), ""));
    free_table(&t);

    CHECK(read_table(out, "curves_best.csv", &t) == 0);
    r = find_row(&t, "workload", "quad", "optimizer", "adam");
    CHECK(r > 0 && !strcmp(cell(&t, r, "step"), "0") && !strcmp(cell(&t, r, "seeds"), "3"));
    /* step 0 of adam at lr 0.01: L = f + 10 for f = 1.0, 1.2, 0.8 */
    CHECK(r > 0 && num_of(cell(&t, r, "loss_median")) == 11 && num_of(cell(&t, r, "loss_min")) == 10.8 &&
          num_of(cell(&t, r, "loss_max")) == 11.2);
    CHECK(t.rows == 1 + 4 * 50);
    free_table(&t);

    CHECK(read_table(out, "profile.csv", &t) == 0);
    CHECK(t.cols == 3 && !strcmp(t.cell[0], "tau") && !strcmp(t.cell[1], "adam") && !strcmp(t.cell[2], "sgd"));
    CHECK(t.rows == 302);
    free_table(&t);

    CHECK(read_table(out, "bars_time_to_target.csv", &t) == 0);
    r = find_row(&t, "workload", "quad", NULL, NULL);
    /* sgd never reached the target: inf, as in time_to_target.csv (empty is for a pair not run) */
    CHECK(r > 0 && !strcmp(cell(&t, r, "sgd"), "inf") && num_of(cell(&t, r, "adam")) == 0.028);
    free_table(&t);

    /* the recorded series carry the run's stage */
    static const char *const series_files[] = {"curves.csv", "evals.csv"};
    for (int i = 0; i < 2; i++) {
        CHECK(read_table(out, series_files[i], &t) == 0);
        CHECK(t.rows > 1 && !strcmp(t.cell[t.cols - 1], "stage"));
        for (int k = 1; k < t.rows; k++) CHECK(!strcmp(cell(&t, k, "stage"), "sweep"));
        free_table(&t);
    }

    /* scripts */
    char *gp = slurp(out, "loss_quad.gp");
    CHECK(gp && strstr(gp, "load 'style.gp'") && strstr(gp, "'curves_best.csv'") &&
          strstr(gp, "set output 'loss_quad.png'") && strstr(gp, "set output 'loss_quad.svg'") &&
          strstr(gp, "set xlabel \"step\"") && strstr(gp, "title \"adam (lr 0.01)\""));
    free(gp);
    gp = slurp(out, "lr_quad.gp");
    CHECK(gp && strstr(gp, "set logscale x") && strstr(gp, "'lr_sweep.csv'") &&
          strstr(gp, "k of n seeds diverged"));
    free(gp);
    gp = slurp(out, "style.gp");
    CHECK(gp && strstr(gp, "pngcairo") && strstr(gp, "set datafile separator comma") && strstr(gp, "# adam"));
    free(gp);
    static const char *const scripts[] = {"eval_loss_quad.gp", "eval_metric_quad.gp",
                                          "step_time.gp", "memory_peak.gp", "memory_state.gp",
                                          "time_to_target.gp", "profile.gp"};
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", out, scripts[i]);
        CHECK_MSG(access(p, R_OK) == 0, "%s missing", scripts[i]);
    }
    /* rosen has no metric: no metric figure; one lr: no lr figure */
    char p[600];
    snprintf(p, sizeof p, "%s/lr_rosen.gp", out);
    CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/eval_metric_rosen.gp", out);
    CHECK(access(p, F_OK) != 0);

    /* documents */
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "## Workload quad") && strstr(md, "| 1 | adam | 0.01 | 3 | 1 | - | 0.8 - 1.2 |") &&
          strstr(md, "| 2 | sgd |") && strstr(md, "not reached") && strstr(md, "gnuplot loss_quad.gp") &&
          strstr(md, "runs.csv") && strstr(md, "Runs that did not finish"));
    CHECK(md && strstr(md, "| not measured (one lr) |") && !strstr(md, "| >= 0 |"));
    /* quad sgd's pending run: its place rests on what finished, and says so */
    CHECK(md && strstr(md, "| 2 | sgd | 0.01 (1 of 11 runs not finished) |"));
    /* the runs' step times within a group (2.00, 2.01, 2.02 ms): a spread of 1%, steady */
    CHECK_MSG(md && strstr(md, "| step ms (p90) | step ms (mean) | optimizer ms | runs differ |") && !strstr(md, "(unsteady)"), "%s", "cost table");
    free(md);
    char *html = slurp(out, "index.html");
    CHECK(html && strstr(html, "<!DOCTYPE html>") && strstr(html, "<td>adam</td>") &&
          strstr(html, "Not rendered") && strstr(html, "&quot;x&quot;") && strstr(html, "</html>"));
    free(html);
}

static void test_render(const char *db, const char *out)
{
    char gp[1024];
    if (!ob_gnuplot_find(gp, sizeof gp)) {
        printf("gnuplot not installed: rendering not tested\n");
        return;
    }
    ob_report_opts o;
    report_opts(&o, db, out);
    o.no_render = 0;
    ob_report_result res;
    ob_err e = {0};
    CHECK_OK(ob_report_write(&o, &res, &e), &e);
    CHECK(res.gnuplot_found && res.n_rendered == res.n_figures && res.n_render_failed == 0);
    static const char *const stems[] = {"loss_quad", "lr_quad", "eval_loss_quad", "eval_metric_quad",
                                        "loss_rosen", "step_time", "memory_peak", "time_to_target", "profile"};
    /* PDF where this gnuplot has the pdfcairo terminal (Debian's gnuplot-nox has) */
    int pdfcairo = system("gnuplot -e 'set terminal' 2>&1 | grep -q pdfcairo") == 0;
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++) {
        char png[300], svg[300], pdf[300];
        snprintf(png, sizeof png, "%s.png", stems[i]);
        snprintf(svg, sizeof svg, "%s.svg", stems[i]);
        snprintf(pdf, sizeof pdf, "%s.pdf", stems[i]);
        CHECK_MSG(file_starts(out, png, "\x89PNG", 4), "%s is not a PNG", png);
        char *s = slurp(out, svg);
        CHECK_MSG(s && strstr(s, "<svg") && strstr(s, "</svg>"), "%s is not an SVG", svg);
        free(s);
        if (pdfcairo) CHECK_MSG(file_starts(out, pdf, "%PDF", 4), "%s is not a PDF", pdf);
    }
    char *html = slurp(out, "index.html");
    CHECK(html && strstr(html, "<img src=\"loss_quad.png\"") && !strstr(html, "Not rendered"));
    CHECK(html && !strstr(html, "loss_quad.pdf") == !pdfcairo);
    free(html);
    char *md = slurp(out, "summary.md");
    CHECK(md && !strstr(md, "[PDF](loss_quad.pdf)") == !pdfcairo);
    free(md);
}

static void test_refusals(const char *dir)
{
    char db[600], out[600];
    snprintf(out, sizeof out, "%s/never", dir);
    ob_report_opts o;
    report_opts(&o, db, out);
    ob_report_result res;
    ob_err e = {0};
    /* a text file */
    snprintf(db, sizeof db, "%s/notes.txt", dir);
    FILE *f = fopen(db, "w");
    fputs("hello, world\n", f);
    fclose(f);
    CHECK(ob_report_write(&o, &res, &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "notes.txt") != NULL);
    /* a missing file */
    snprintf(db, sizeof db, "%s/missing.db", dir);
    CHECK(ob_report_write(&o, &res, &e) == OB_ERR_INPUT);
    CHECK(access(db, F_OK) != 0);
    /* an optbench database without runs */
    snprintf(db, sizeof db, "%s/empty.db", dir);
    ob_store_close(open_store(db, OB_STORE_CREATE));
    CHECK(ob_report_write(&o, &res, &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "no runs") != NULL);
    CHECK(access(out, F_OK) != 0); /* nothing written */
}

/* With confirmation runs (fx_add_confirm): confirm.csv, the runs' stage,
 * and a confirmation table per workload in summary.md. */
static void test_confirm(const char *db, const char *out)
{
    CHECK(fx_build_reference(db) == 0 && fx_add_confirm(db) == 0);
    /* a GPU's driver-reported device memory on two runs of quad/adam: the
     * group's largest, and a column of the cost table */
    db_exec(db, "UPDATE runs SET device_mem_bytes = 3000000000 WHERE id = 2; "
                "UPDATE runs SET device_mem_bytes = 2000000000 WHERE id = 4;");
    ob_report_result res;
    write_report(db, out, &res);
    table ct;
    CHECK(read_table(out, "cost.csv", &ct) == 0);
    int cr = find_row(&ct, "workload", "quad", "optimizer", "adam");
    CHECK(cr > 0 && num_of(cell(&ct, cr, "device_mem_bytes")) == 3e9);
    cr = find_row(&ct, "workload", "quad", "optimizer", "sgd");
    CHECK(cr > 0 && !strcmp(cell(&ct, cr, "device_mem_bytes"), ""));
    free_table(&ct);
    CHECK(check_tex(out, 6) == 3);
    char *tex = slurp(out, "summary.tex");
    CHECK(tex && strstr(tex, "& Confirmed \\\\") && strstr(tex, "& \\textbf{1.300} \\\\"));
    CHECK(tex && strstr(tex, "Confirmed: the median final loss of 2 to 3 fresh seeds"));
    free(tex);
    CHECK(res.n_runs == 31 && res.n_groups == 4);
    table t;
    CHECK(read_table(out, "confirm.csv", &t) == 0);
    CHECK(t.rows == 4); /* header + quad adam, quad sgd, rosen adam */
    int r = find_row(&t, "workload", "quad", "optimizer", "adam");
    CHECK(r > 0);
    if (r > 0) {
        CHECK(!strcmp(cell(&t, r, "rank"), "1") && !strcmp(cell(&t, r, "lr_is_best"), "1"));
        CHECK(!strcmp(cell(&t, r, "seeds"), "3") && !strcmp(cell(&t, r, "sweep_seeds"), "3"));
        CHECK_NEAR(num_of(cell(&t, r, "final_median")), 1.3, 1e-12);
        CHECK(num_of(cell(&t, r, "sweep_final_median")) == 1.0);
        CHECK_NEAR(num_of(cell(&t, r, "change")), 0.3, 1e-12);
        CHECK(num_of(cell(&t, r, "final_ci_coverage")) == 0.75);
    }
    /* the lr figure reads confirm.csv's diverged and final_max_finite by number */
    CHECK(t.cols >= 29 && !strcmp(t.cell[27], "diverged") && !strcmp(t.cell[28], "final_max_finite"));
    char *lgp = slurp(out, "lr_quad.gp");
    CHECK(lgp && strstr(lgp, "(valid(29) ? $29 : $7)") && strstr(lgp, "&& $28 > 0 ?"));
    free(lgp);
    r = find_row(&t, "workload", "rosen", "optimizer", "adam");
    CHECK(r > 0 && !strcmp(cell(&t, r, "lr_is_best"), "0") && num_of(cell(&t, r, "lr")) == 0.03 &&
          !strcmp(cell(&t, r, "change"), "") && !strcmp(cell(&t, r, "rank"), "") &&
          !strcmp(cell(&t, r, "sweep_final_median"), ""));
    r = find_row(&t, "workload", "quad", "optimizer", "sgd");
    CHECK(r > 0 && !strcmp(cell(&t, r, "diverged"), "1") && num_of(cell(&t, r, "final_max_finite")) == 2.0 &&
          !strcmp(cell(&t, r, "not_fresh"), "1") && !strcmp(cell(&t, r, "rank"), ""));
    free_table(&t);
    CHECK(read_table(out, "runs.csv", &t) == 0);
    int n_confirm = 0;
    char confirm_ids[7][32];
    for (int i = 1; i < t.rows; i++)
        if (!strcmp(cell(&t, i, "stage"), "confirm") && n_confirm < 7)
            snprintf(confirm_ids[n_confirm++], sizeof confirm_ids[0], "%s", cell(&t, i, "run_id"));
    CHECK(n_confirm == 7);
    free_table(&t);
    /* curves.csv and evals.csv: the same stage as runs.csv, row by row */
    static const char *const series_files[] = {"curves.csv", "evals.csv"};
    for (int f = 0; f < 2; f++) {
        CHECK(read_table(out, series_files[f], &t) == 0);
        int n_conf_rows = 0;
        for (int i = 1; i < t.rows; i++) {
            int is_conf = 0;
            for (int k = 0; k < n_confirm; k++) is_conf |= !strcmp(cell(&t, i, "run_id"), confirm_ids[k]);
            CHECK_MSG(!strcmp(cell(&t, i, "stage"), is_conf ? "confirm" : "sweep"), "%s row %d", series_files[f], i);
            n_conf_rows += is_conf;
        }
        CHECK(n_conf_rows > 0);
        free_table(&t);
    }
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "7 of the runs are confirmation runs"));
    CHECK(md && strstr(md, "| device memory (driver) |") && strstr(md, "2.79 GiB"));
    /* a table under quad (adam +30.0%) and under rosen (not the best lr) */
    CHECK(md && strstr(md, "| 1 | adam | 0.01 | 3 | 1.3 |") && strstr(md, "+30.0%"));
    CHECK(md && strstr(md, "0.03 (not this sweep's best lr, 0.01: an earlier benchmark's; not ranked)"));
    /* quad sgd: the fresh seeds' median is inf (one of two diverged): listed, not ranked */
    CHECK(md && strstr(md, "| - | sgd | 0.01 | 2 | inf | - | 2 - inf | 1 / 2 | 2.2 (3) | - |"));
    CHECK(md && strstr(md, "1 confirmation run of quad is left out: its seed is also a seed of the sweep"));
    /* rosen sgd: nothing to confirm */
    CHECK(md && strstr(md, "| - | sgd | not confirmed (no fresh seeds ran) |"));
    free(md);
    /* the same folder for a database without confirmation runs: no stale confirm.csv */
    CHECK(fx_build_reference(db) == 0);
    write_report(db, out, &res);
    char *stale = slurp(out, "confirm.csv");
    CHECK_MSG(stale == NULL, "a stale confirm.csv was left in the report folder");
    free(stale);
}

/* An optimizer that diverged at every lr: its runs' final and held-out
 * values in runs.csv are the worst (inf, and -inf for the metric) where the
 * workload has them (rosen has no metric: empty), and lr_sweep.csv's held-out
 * medians over those seeds are the worst too, as its final_median is. */
static void test_all_diverged(const char *db, const char *out)
{
    ob_store *st = reference_store(db);
    if (!st) return;
    for (int seed = 0; seed < 2; seed++) {
        fx_add(st, 0, &(fx_run){"quad", "lion", NULL, 0.01, seed, "diverged", 0, 20, 1, 1, 1, 1, 1, 1, 0});
        fx_add(st, 0, &(fx_run){"rosen", "lion", NULL, 0.01, seed, "diverged", 0, 20, 1, 1, 1, 1, 1, 1, 0});
    }
    ob_store_close(st);
    ob_report_result res;
    write_report(db, out, &res);
    table t;
    CHECK(read_table(out, "runs.csv", &t) == 0);
    int n = 0;
    for (int i = 1; i < t.rows; i++) {
        if (strcmp(cell(&t, i, "optimizer"), "lion")) continue;
        int quad = !strcmp(cell(&t, i, "workload"), "quad");
        n++;
        CHECK(!strcmp(cell(&t, i, "final_loss"), "inf") && !strcmp(cell(&t, i, "eval_loss"), "inf"));
        CHECK_MSG(!strcmp(cell(&t, i, "eval_metric"), quad ? "-inf" : ""), "eval_metric '%s'", cell(&t, i, "eval_metric"));
    }
    CHECK(n == 4);
    free_table(&t);
    CHECK(read_table(out, "lr_sweep.csv", &t) == 0);
    int r = find_row(&t, "workload", "quad", "optimizer", "lion");
    CHECK(r > 0 && !strcmp(cell(&t, r, "final_median"), "inf") && !strcmp(cell(&t, r, "eval_loss_median"), "inf") &&
          !strcmp(cell(&t, r, "eval_metric_median"), "-inf"));
    r = find_row(&t, "workload", "rosen", "optimizer", "lion");
    CHECK(r > 0 && !strcmp(cell(&t, r, "eval_loss_median"), "inf") && !strcmp(cell(&t, r, "eval_metric_median"), ""));
    free_table(&t);
    /* no finished run that did not diverge: no rank (empty, not 0) */
    CHECK(read_table(out, "summary.csv", &t) == 0);
    r = find_row(&t, "workload", "quad", "optimizer", "lion");
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "rank"), ""), "all diverged: rank '%s'", r > 0 ? cell(&t, r, "rank") : "");
    free_table(&t);
}

/* The lr range at the grid's edge with a tolerance of 0 is not measured
 * (not ">= 0"), the caption gives the tolerance used; a seed that finished
 * without a finite loss, not diverged, is counted in lr_sweep.csv's nonfinite,
 * ends the lr range and takes the lr figure's band away as a diverged one. */
static void test_lr_range_edges(const char *db, const char *out)
{
    ob_store *st = reference_store(db);
    if (!st) return;
    for (int seed = 0; seed < 3; seed++) {
        /* lion: best at the grid's lower edge, the next lr finite and worse */
        fx_add(st, 0, &(fx_run){"quad", "lion", NULL, 0.01, seed, "done", 1.0, 20, 1, 1, 1, 1, 1, 0.5, 0});
        fx_add(st, 0, &(fx_run){"quad", "lion", NULL, 0.1, seed, "done", 2.0, 20, 1, 1, 1, 1, 1, 0.5, 0});
        /* adagrad: best inside the grid; at 0.1 the third seed ends on NaN */
        fx_add(st, 0, &(fx_run){"quad", "adagrad", NULL, 0.001, seed, "done", 1.05, 20, 1, 1, 1, 1, 1, 0.5, 0});
        fx_add(st, 0, &(fx_run){"quad", "adagrad", NULL, 0.01, seed, "done", 1.0, 20, 1, 1, 1, 1, 1, 0.5, 0});
        fx_add(st, 0, &(fx_run){"quad", "adagrad", NULL, 0.1, seed, "done", seed == 2 ? NAN : 1.0 + 0.02 * seed, 20, 1,
                                1, 1, 1, 1, 0.5, 0});
    }
    ob_store_close(st);

    for (int tol0 = 0; tol0 < 2; tol0++) {
        ob_report_opts o;
        report_opts(&o, db, out);
        if (tol0) o.stats.tol = 0;
        ob_report_result res;
        ob_err e = {0};
        CHECK_OK(ob_report_write(&o, &res, &e), &e);
        table t;
        CHECK(read_table(out, "summary.csv", &t) == 0);
        int r = find_row(&t, "workload", "quad", "optimizer", "lion");
        if (tol0)
            CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "lr_width_decades"), "") &&
                          !strcmp(cell(&t, r, "lr_width_unmeasured"), "edge_zero_tolerance"),
                      "lion at tol 0: '%s' '%s'", r > 0 ? cell(&t, r, "lr_width_decades") : "",
                      r > 0 ? cell(&t, r, "lr_width_unmeasured") : "");
        else /* 1.1 is a tenth of the way from 1 to 2: a tenth of the decade */
            CHECK(r > 0 && !strcmp(cell(&t, r, "lr_width_unmeasured"), "") &&
                  !strcmp(cell(&t, r, "lr_width_open"), "1") &&
                  fabs(num_of(cell(&t, r, "lr_width_decades")) - log10(1.1) / log10(2.0)) < 1e-9);
        /* adagrad: the range stops at 0.01 (a seed at 0.1 has no finite loss)
         * and runs to the grid's lower edge: one decade, a lower bound */
        r = find_row(&t, "workload", "quad", "optimizer", "adagrad");
        if (!tol0)
            CHECK_MSG(r > 0 && num_of(cell(&t, r, "best_lr")) == 0.01 && !strcmp(cell(&t, r, "lr_width_open"), "1") &&
                          fabs(num_of(cell(&t, r, "lr_width_decades")) - 1.0) < 1e-12,
                      "adagrad: width %s", r > 0 ? cell(&t, r, "lr_width_decades") : "");
        free_table(&t);
        char *md = slurp(out, "summary.md"), *tex = slurp(out, "summary.tex");
        CHECK(md && tex);
        if (md && tex) {
            CHECK(!tol0 || (strstr(md, "not measured (grid edge, tolerance 0)") && !strstr(md, "| >= 0 |")));
            CHECK(strstr(tex, tol0 ? "within 0\\% of the best" : "within 10\\% of the best"));
            /* three equal medians of 1 share rank 1 and the next is 4th; in bold
             * the lowest median and every median whose [min, max] overlaps
             * its range, not sgd's [2, 2.4]; measured values keep 4 digits */
            CHECK_MSG(strstr(tex, "1 & adagrad & 0.01 & \\textbf{1.000} {\\scriptsize [1.000, 1.000]} & ") &&
                          strstr(tex, "1 & adam & 0.01 & \\textbf{1.000} {\\scriptsize [0.8000, 1.200]} & ") &&
                          strstr(tex, "1 & lion & 0.01$^\\dagger$ & \\textbf{1.000} ") &&
                          strstr(tex, "4 & sgd & 0.01 & 2.200 {\\scriptsize [2.000, 2.400]} & "),
                      "summary.tex:\n%s", tex);
            /* the runs that diverged over every lr, the last column */
            CHECK(strstr(tex, "& 1 / 9 \\\\\n") && strstr(tex, "& 3 / 9 \\\\\n") &&
                  strstr(tex, "diverged: runs that diverged, of the runs over every lr"));
            CHECK(strstr(tex, "in bold the lowest and every median whose interval overlaps the lowest's, which these "
                              "seeds do not tell apart from it (the interval: [min, max] up to 8 seeds"));
            /* the shared rank in the text and paired.csv too */
            CHECK(strstr(md, "Seed by seed at the best lrs: adagrad (1) vs adam (1) lower on 1 of 3 seeds"));
            char *pc = slurp(out, "paired.csv");
            CHECK(pc && strstr(pc, "\"quad\",\"sweep\",1,\"adam\",1,\"lion\",") &&
                  strstr(pc, "\"quad\",\"sweep\",1,\"lion\",4,\"sgd\","));
            free(pc);
        }
        free(md);
        free(tex);
    }

    table t;
    CHECK(read_table(out, "lr_sweep.csv", &t) == 0);
    int seen = 0;
    for (int i = 1; i < t.rows; i++) {
        if (strcmp(cell(&t, i, "optimizer"), "adagrad")) continue;
        const int at_01 = num_of(cell(&t, i, "lr")) == 0.1;
        seen++;
        CHECK_MSG(!strcmp(cell(&t, i, "nonfinite"), at_01 ? "1" : "0"), "adagrad lr %s nonfinite '%s'",
                  cell(&t, i, "lr"), cell(&t, i, "nonfinite"));
        CHECK(!strcmp(cell(&t, i, "diverged"), "0"));
        /* the median of 1, 1.02 and +inf; the range over the two finite seeds */
        if (at_01) CHECK(num_of(cell(&t, i, "final_max")) == 1.02 && !strcmp(cell(&t, i, "final_median"), "1.02"));
    }
    CHECK(seen == 3);
    CHECK(t.cols == 16 && !strcmp(t.cell[14], "nonfinite") && !strcmp(t.cell[15], "best_share"));
    free_table(&t);
    /* in runs.csv that seed's final loss is the worst, +inf, as the statistics count it */
    CHECK(read_table(out, "runs.csv", &t) == 0);
    seen = 0;
    for (int i = 1; i < t.rows; i++)
        if (!strcmp(cell(&t, i, "optimizer"), "adagrad") && num_of(cell(&t, i, "lr")) == 0.1 &&
            !strcmp(cell(&t, i, "seed"), "2")) {
            seen++;
            CHECK_MSG(!strcmp(cell(&t, i, "status"), "done") && !strcmp(cell(&t, i, "final_loss"), "inf"),
                      "adagrad 0.1 seed 2: %s, final loss '%s'", cell(&t, i, "status"), cell(&t, i, "final_loss"));
        }
    CHECK(seen == 1);
    free_table(&t);
    /* the band's predicate reads both columns */
    char *gp = slurp(out, "lr_quad.gp");
    CHECK(gp && strstr(gp, "$6 == 0 && $15 == 0 ? cut($8)"));
    free(gp);
    /* sgd 0.9 lower: 1.3 [1.1, 1.5] ranks 4th, its range overlapping adam's
     * [0.8, 1.2], so it is in bold too: a tie with the lowest, not a finding */
    db_exec(db, "UPDATE runs SET final_loss = final_loss - 0.9 WHERE workload = 'quad' AND optimizer = 'sgd'");
    ob_report_result res;
    write_report(db, out, &res);
    char *tex = slurp(out, "summary.tex");
    CHECK_MSG(tex && strstr(tex, "4 & sgd & 0.01 & \\textbf{1.300} {\\scriptsize [1.100, 1.500]} & "), "%s",
              tex ? tex : "(none)");
    /* and ranges apart are not called a finding either (3 seeds: 2 / C(6, 3)) */
    CHECK(tex && strstr(tex, "nor are ranges apart a test: with 3 seeds two optimizers alike have ranges apart 1 "
                             "time in 10"));
    free(tex);
    db_exec(db, "UPDATE runs SET final_loss = final_loss + 0.9 WHERE workload = 'quad' AND optimizer = 'sgd'");
    /* adam's seed of 1.2 diverged: still ranked 1 (median 1), its range now
     * unbounded above, which the caption says bolds the others */
    db_exec(db, "UPDATE runs SET status = 'diverged' WHERE workload = 'quad' AND optimizer = 'adam' AND lr = 0.01 "
                "AND final_loss = 1.2");
    write_report(db, out, &res);
    tex = slurp(out, "summary.tex");
    CHECK_MSG(tex && strstr(tex, "1 & adam & 0.01 & \\textbf{1.000} {\\scriptsize [0.8000, $\\infty$]}") &&
                  strstr(tex, "a diverged seed makes the lowest's interval unbounded"),
              "%s", tex ? tex : "(none)");
    free(tex);
    db_exec(db, "UPDATE runs SET status = 'done' WHERE workload = 'quad' AND optimizer = 'adam' AND lr = 0.01 "
                "AND final_loss = 1.2");
}

/* Seeds that diverged at the best lr: curves_best.csv counts them as +inf
 * from their last point on (the median is over every seed, the band over
 * those still training, the diverged column counts them), the loss figure's
 * legend says how many, and its x axis ends at the workload's own last step. */
static void test_diverged_curves(const char *db, const char *out)
{
    ob_store *st = new_store(db);
    if (!st) return;
    /* finals 1, 2, 3 (curves final + (20 - t) / 2 before step 20); seeds 3
     * and 4 diverged, their curves cut after step 4 */
    int64_t ids[5];
    for (int seed = 0; seed < 5; seed++)
        ids[seed] = fx_add(st, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, seed < 3 ? "done" : "diverged",
                                            1.0 + seed, 20, 1, 1, 1, 1, 1, 1, 30});
    ob_store_close(st);
    char sql[200];
    snprintf(sql, sizeof sql, "DELETE FROM curves WHERE run_id IN (%lld, %lld) AND step > 4", (long long)ids[3],
             (long long)ids[4]);
    db_exec(db, sql);
    ob_report_result res;
    write_report(db, out, &res);
    table t;
    CHECK(read_table(out, "curves_best.csv", &t) == 0);
    int seen = 0;
    for (int r = 1; r < t.rows; r++) {
        int step = atoi(cell(&t, r, "step"));
        CHECK(!strcmp(cell(&t, r, "seeds"), "5"));
        if (step == 2) { /* every seed still training: 10, 11, 12 and 102, 102 */
            seen++;
            CHECK(num_of(cell(&t, r, "loss_median")) == 12 && num_of(cell(&t, r, "loss_max")) == 102);
            CHECK(!strcmp(cell(&t, r, "diverged"), "0"));
        }
        if (step == 25) { /* 1, 2, 3 and two diverged: the median is the third */
            seen++;
            CHECK_MSG(num_of(cell(&t, r, "loss_median")) == 3 && num_of(cell(&t, r, "loss_min")) == 1 &&
                          num_of(cell(&t, r, "loss_max")) == 3,
                      "step 25: median %s, band %s to %s", cell(&t, r, "loss_median"), cell(&t, r, "loss_min"),
                      cell(&t, r, "loss_max"));
            CHECK(!strcmp(cell(&t, r, "diverged"), "2"));
        }
    }
    CHECK(seen == 2);
    free_table(&t);
    char *gp = slurp(out, "loss_W.gp");
    CHECK_MSG(gp && strstr(gp, "set xrange [0:30]") && strstr(gp, "(lr 0.01, 2 of 5 diverged)") &&
                  strstr(gp, "over seeds still training"),
              "loss_W.gp:\n%s", gp ? gp : "(missing)");
    free(gp);
    /* the seeds that diverged at the best lr, in the tables */
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "| 1 | adam | 0.01 | 5 (2 diverged) | 3 |"));
    free(md);
    char *tex = slurp(out, "summary.tex");
    CHECK(tex && strstr(tex, "{\\scriptsize (2 of 5 diverged)} & "));
    free(tex);
}

/* Runs of one group from two code revisions: the report and its log line
 * say their statistics pool them; one revision says nothing. A group with no
 * finished run is not "all diverged". */
static void test_provenance(const char *db, const char *out)
{
    ob_err e = {0};
    ob_store *st = new_store(db);
    if (!st) return;
    int64_t b1 = 0, b2 = 0;
    CHECK_OK(ob_store_begin_benchmark(st, "first", "", "rev0", "host0", "cpu", "test", &b1, &e), &e);
    for (int seed = 0; seed < 3; seed++) {
        fx_add(st, b1, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1.0 + seed, 10, 1, 1, 1, 1, 1, 1, 20});
        fx_add(st, b1, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 2.0 + seed, 10, 1, 1, 1, 1, 1, 1, 20});
        fx_add(st, b1, &(fx_run){"W", "lion", NULL, 0.01, seed, "pending", 0, 0, NAN, NAN, -1, -1, NAN, NAN, 20});
    }
    CHECK_OK(ob_store_begin_benchmark(st, "second", "", "rev1", "host0", "cpu", "test", &b2, &e), &e);
    for (int seed = 3; seed < 5; seed++)
        fx_add(st, b2, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1.0 + seed, 10, 1, 1, 1, 1, 1, 1, 20});
    ob_store_close(st);
    char logbuf[4096] = "";
    FILE *log = fmemopen(logbuf, sizeof logbuf - 1, "w");
    ob_report_opts o;
    report_opts(&o, db, out);
    o.log = log;
    o.ranking = log;
    ob_report_result res;
    CHECK_OK(ob_report_write(&o, &res, &e), &e);
    if (log) fclose(log);
    CHECK_MSG(strstr(logbuf, "warning: 1 workload x optimizer group pools runs of more than one code revision, "
                             "machine or device (W / adam: revisions rev0 and rev1)"),
              "log:\n%s", logbuf);
    CHECK_MSG(strstr(logbuf, "lion: no run finished"), "log:\n%s", logbuf);
    char *md = slurp(out, "summary.md");
    CHECK(md && strstr(md, "Pooled provenance: in 1 of the 3 workload x optimizer groups the runs come from more "
                           "than one code revision, machine or device (W / adam: revisions rev0 and rev1)"));
    CHECK(md && strstr(md, "| - | lion | none (no run finished) |"));
    CHECK(md && strstr(md, "run --confirm-seeds N to rerun each best lr on N fresh seeds"));
    free(md);
    char *tex = slurp(out, "summary.tex");
    CHECK(tex && strstr(tex, "-- & lion & none (no run finished) & "));
    free(tex);
    /* one revision: nothing said */
    db_exec(db, "UPDATE benchmarks SET git_rev = 'rev0'");
    /* and confirmation runs of another revision: they enter no other statistic */
    st = open_store(db, OB_STORE_EXISTING);
    if (!st) return;
    int64_t b3 = 0;
    CHECK_OK(ob_store_begin_benchmark(st, "third", "", "rev9", "host9", "cpu", "test", &b3, &e), &e);
    fx_add_stage(st, b3, &(fx_run){"W", "adam", NULL, 0.01, 7, "done", 1.5, 10, 1, 1, 1, 1, 1, 1, 20}, "confirm");
    ob_store_close(st);
    write_report(db, out, &res);
    md = slurp(out, "summary.md");
    CHECK(md && !strstr(md, "Pooled provenance"));
    CHECK(md && strstr(md, "1 of the runs are confirmation runs"));
    /* how settled the best lrs are: explained once, and said under each workload's table */
    CHECK(md && strstr(md, "Best lr under resamples of the seeds: how settled each best lr is.") &&
          strstr(md, " (summary.csv's best_lr_share, lr_sweep.csv's best_share)."));
    /* ... and said under a workload's table only where an optimizer ran two lrs or more */
    const char *how = md ? strstr(md, "Best lr under resamples of the seeds: how settled") : NULL;
    CHECK(how && !strstr(how + 1, "Best lr under resamples of the seeds: "));
    /* the Files table's notes whole, however long (summary.csv's ends with its last column) */
    CHECK(md && strstr(md, "divergence_rate, first_diverged_lr, above_start (finished runs, not diverged, whose final "
                           "loss is above their loss at the first step: blown up below the divergence threshold, "
                           "train.diverge_factor), final_max_finite (") &&
          strstr(md, "as lr_sweep.csv's final_max there; empty when none did), best_lr_share (") &&
          strstr(md, "in which it keeps the lowest median final loss; empty without a best lr) |"));
    free(md);
    /* a run's own revision and machine (a benchmark continued or grown by
     * another build) count over its benchmark's: one sgd run continued
     * elsewhere pools the sgd group, and runs.csv names them */
    st = open_store(db, OB_STORE_EXISTING);
    if (!st) return;
    CHECK_OK(ob_store_run_provenance(st, 2, "rev0", "host0", 0, &e), &e);
    CHECK_OK(ob_store_run_provenance(st, 2, "rev5", "host5", 1, &e), &e);
    ob_store_close(st);
    write_report(db, out, &res);
    md = slurp(out, "summary.md");
    CHECK_MSG(md && strstr(md, "(W / sgd: revisions rev0, then rev5 and rev0; machines host0, then host5 and host0)"),
              "%s", md ? strstr(md, "Pooled") : "");
    free(md);
    char *csv = slurp(out, "runs.csv");
    /* restarts, retired, other_cpu (0: the result as the test wrote it) */
    CHECK(csv && strstr(csv, ",\"rev0, then rev5\",\"host0, then host5\",0,0,0\n"));
    free(csv);
}

/* Runs that met a busy machine (runs.other_cpu at OB_BUSY_SHARE or more):
 * the opening counts them; a group where they are all of the timed runs is
 * marked 'busy' in the cost table, with a note; a group with quiet runs is
 * timed by those alone, with a note counting the runs left out. */
static void test_busy_runs(const char *db, const char *out)
{
    ob_err e = {0};
    ob_store *st = new_store(db);
    if (!st) return;
    int64_t b = 0;
    CHECK_OK(ob_store_begin_benchmark(st, "busy", "", "rev0", "host0", "cpu", "test", &b, &e), &e);
    for (int seed = 0; seed < 3; seed++) {
        fx_add(st, b, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1.0 + seed, 10, 1, 1, 1, 1, 1, 1, 20});
        fx_add(st, b, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 2.0 + seed, 10, 1, 1, 1, 1, 1, 1, 20});
    }
    ob_store_close(st);
    db_exec(db, "UPDATE runs SET other_cpu = CASE WHEN optimizer = 'adam' THEN 0.6 "
                "WHEN optimizer = 'sgd' AND seed = 0 THEN 0.3 ELSE 0.01 END");
    /* sgd's runs: 2 ms median steps, 2.5 ms for the busy one */
    db_exec(db, "UPDATE runs SET step_ms_median = CASE WHEN seed = 0 THEN 2.5 ELSE 2 END WHERE optimizer = 'sgd'");
    ob_report_result res;
    write_report(db, out, &res);
    char *md = slurp(out, "summary.md");
    CHECK_MSG(md && strstr(md, "4 of the finished runs ran while other processes kept 25% or more of the machine's "
                               "CPUs busy (up to 60%; runs.csv's other_cpu column names them)"),
              "%s", md ? md : "");
    CHECK_MSG(md && strstr(md, "| +0% (busy) |") &&
                  strstr(md, "Note: in 1 group every timed run met a busy machine") &&
                  strstr(md, "Note: 1 run that met a busy machine (other processes kept 25% or more of the CPUs "
                             "busy while it ran; runs.csv's other_cpu) is left out of the times of 1 group, which "
                             "are from its runs on a quiet machine."),
              "%s", md ? strstr(md, "## Cost") : "");
    /* sgd's one busy run of three: the group's row has no mark, and its
     * step time is the two quiet runs' (2 ms, not the median 2 of all
     * three either way: the spread tells, +0%, not +25%) */
    const char *sgd = md ? strstr(md, "| W | sgd |") : NULL;
    char row[512] = "";
    if (sgd) snprintf(row, sizeof row, "%.*s", (int)strcspn(sgd, "\n"), sgd);
    CHECK_MSG(sgd && !strstr(row, "busy") && strstr(row, "| +0% |"), "%s", row);
    free(md);
    char *csv = slurp(out, "runs.csv");
    CHECK(csv && strstr(csv, ",0.6\n") && strstr(csv, ",0.01\n"));
    free(csv);
    /* quiet: none of it */
    db_exec(db, "UPDATE runs SET other_cpu = NULL");
    write_report(db, out, &res);
    md = slurp(out, "summary.md");
    CHECK(md && !strstr(md, "finished runs ran while other processes") && !strstr(md, "(busy)") &&
          !strstr(md, "timed run met a busy machine") && !strstr(md, "that met a busy machine (other"));
    free(md);
}

/* summary.tex's bold with 9 seeds. adam, the lowest (median 1.04), has a
 * diverged seed, so its [min, max] is unbounded. lion ran other seeds than
 * adam's, so the intervals of the medians decide, the order statistics that
 * hold them with 95% ([x2, x8] of 9), not [min, max]: adam's is [1.01,
 * 1.07], lion's [1.07, 1.13] touches it (bold). sgd ran adam's seeds, so
 * they are compared seed by seed: adam lower on 8 of 9 (its diverged seed
 * the ninth), two-sided sign test p = 20/512 < 5%: not bold, though sgd's
 * min, 1.05, lies in adam's range. */
static void test_tex_intervals(const char *db, const char *out)
{
    ob_err e = {0};
    ob_store *st = new_store(db);
    if (!st) return;
    int64_t b = 0;
    CHECK_OK(ob_store_begin_benchmark(st, "nine", "", "rev0", "host0", "cpu", "test", &b, &e), &e);
    for (int seed = 0; seed < 9; seed++) {
        fx_add(st, b, &(fx_run){"W", "adam", NULL, 0.01, seed, seed == 8 ? "diverged" : "done", 1.0 + 0.01 * seed,
                                10, 1, 1, 1, 1, 1, 1, 20});
        fx_add(st, b, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", seed ? 1.09 + 0.01 * seed : 1.05, 10, 1, 1, 1,
                                1, 1, 1, 20});
        fx_add(st, b, &(fx_run){"W", "lion", NULL, 0.01, 100 + seed, "done", 1.06 + 0.01 * seed, 10, 1, 1, 1, 1, 1,
                                1, 20});
    }
    ob_store_close(st);
    ob_report_result res;
    write_report(db, out, &res);
    char *tex = slurp(out, "summary.tex");
    CHECK_MSG(tex &&
                  strstr(tex, "1 & adam & 0.01 & \\textbf{1.040} {\\scriptsize [1.000, $\\infty$]} {\\scriptsize (1 of "
                              "9 diverged)} & ") &&
                  strstr(tex, "2 & lion & 0.01 & \\textbf{1.100} {\\scriptsize [1.060, 1.140]} & ") &&
                  strstr(tex, "3 & sgd & 0.01 & 1.130 {\\scriptsize [1.050, 1.170]} & "),
              "%s", tex ? tex : "(none)");
    /* the caption says both rules, and what the interval is; adam's is
     * bounded: no word on an unbounded one */
    CHECK_MSG(tex && strstr(tex, "every median these seeds do not tell apart from it seed by seed") &&
                  strstr(tex, "sign test rejects a tie at 5\\%, a diverged seed counting as the higher loss); with "
                              "fewer than 6 seeds in common, every median whose interval overlaps the lowest's") &&
                  strstr(tex, "(the interval: [min, max] up to 8 seeds, from 9 the order statistics that hold the "
                              "median with probability 95\\% or more)") &&
                  !strstr(tex, "interval unbounded"),
              "%s", tex ? tex : "(none)");
    free(tex);
}

/* summary.tex's bold seed by seed with 6 seeds: sgd's [min, max] overlaps
 * adam's, the lowest's, but sgd is higher on each of the 6 seeds (p = 1/32):
 * not bold; lion higher on 5 of them and lower on one (p = 0.22): bold. */
static void test_tex_paired(const char *db, const char *out)
{
    ob_err e = {0};
    ob_store *st = new_store(db);
    if (!st) return;
    int64_t b = 0;
    CHECK_OK(ob_store_begin_benchmark(st, "six", "", "rev0", "host0", "cpu", "test", &b, &e), &e);
    for (int seed = 0; seed < 6; seed++) {
        const double a = 1.0 + 0.1 * seed;
        fx_add(st, b, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", a, 10, 1, 1, 1, 1, 1, 1, 20});
        fx_add(st, b, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", a + 0.05, 10, 1, 1, 1, 1, 1, 1, 20});
        fx_add(st, b, &(fx_run){"W", "lion", NULL, 0.01, seed, "done", seed == 5 ? a - 0.01 : a + 0.02, 10, 1, 1, 1,
                                1, 1, 1, 20});
    }
    ob_store_close(st);
    ob_report_result res;
    write_report(db, out, &res);
    char *tex = slurp(out, "summary.tex");
    CHECK_MSG(tex && strstr(tex, "1 & adam & 0.01 & \\textbf{1.250} {\\scriptsize [1.000, 1.500]} & ") &&
                  strstr(tex, "2 & lion & 0.01 & \\textbf{1.270} {\\scriptsize [1.020, 1.490]} & ") &&
                  strstr(tex, "3 & sgd & 0.01 & 1.300 {\\scriptsize [1.050, 1.550]} & ") &&
                  strstr(tex, "every median these seeds do not tell apart from it seed by seed") &&
                  !strstr(tex, "seeds in common") && !strstr(tex, "interval overlaps"),
              "%s", tex ? tex : "(none)");
    free(tex);
    /* adam's seed 5 diverged: adam still lowest (median 1.25), lower on 5 of
     * 6 against sgd now (p = 0.22): sgd in bold for that seed, not for
     * adam's range, now unbounded */
    db_exec(db, "UPDATE runs SET status = 'diverged' WHERE optimizer = 'adam' AND seed = 5");
    write_report(db, out, &res);
    tex = slurp(out, "summary.tex");
    CHECK_MSG(tex && strstr(tex, "1 & adam & 0.01 & \\textbf{1.250} {\\scriptsize [1.000, $\\infty$]}") &&
                  strstr(tex, "3 & sgd & 0.01 & \\textbf{1.300} ") && !strstr(tex, "interval unbounded"),
              "%s", tex ? tex : "(none)");
    free(tex);
}

/* The benchmarks the report and history tell apart by: those with runs,
 * oldest first, "?" for what the database does not know (an empty name; no
 * end for one not finished). */
static void test_bench_list(const char *db)
{
    ob_err e = {0};
    ob_store *st = new_store(db);
    if (!st) return;
    int64_t b1 = 0, b2 = 0, b3 = 0;
    CHECK_OK(ob_store_begin_benchmark(st, "first", "", "rev0", "host0", "cpu", "test", &b1, &e), &e);
    fx_add(st, b1, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 20});
    CHECK_OK(ob_store_finish_benchmark(st, b1, &e), &e);
    CHECK_OK(ob_store_begin_benchmark(st, "second", "", NULL, NULL, "cpu", "test", &b2, &e), &e);
    fx_add(st, b2, &(fx_run){"W", "adam", NULL, 0.01, 1, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 20});
    CHECK_OK(ob_store_begin_benchmark(st, "no runs", "", "rev3", "host3", "cpu", "test", &b3, &e), &e);
    ob_store_close(st);
    sqlite3 *q = NULL;
    CHECK(sqlite3_open(db, &q) == SQLITE_OK);
    /* the first benchmark dated after the second: the date orders them, not the id */
    CHECK(sqlite3_exec(q, "UPDATE benchmarks SET created_at = '2030-01-02T00:00:00.000Z' WHERE name = 'first'",
                       NULL, NULL, NULL) == SQLITE_OK);
    /* the second without a name or a backend */
    CHECK(sqlite3_exec(q, "UPDATE benchmarks SET name = NULL, backend = NULL WHERE name = 'second'", NULL, NULL,
                       NULL) == SQLITE_OK);
    ob_bench_list bl;
    CHECK_OK(ob_bench_list_load(q, &bl, &e), &e);
    CHECK_MSG(bl.n == 2, "%d benchmarks", bl.n);
    if (bl.n == 2) {
        CHECK(bl.b[0].id == b2 && !strcmp(bl.b[0].git_rev, "?") && !strcmp(bl.b[0].host, "?"));
        CHECK(bl.b[1].id == b1 && !strcmp(bl.b[1].git_rev, "rev0") && !strcmp(bl.b[1].host, "host0") &&
              !strcmp(bl.b[1].created_at, "2030-01-02T00:00:00.000Z"));
        CHECK(ob_bench_list_find(&bl, b1) == &bl.b[1] && !ob_bench_list_find(&bl, b3));
        /* no name: empty; no backend: "?"; not finished: NULL */
        CHECK(!strcmp(bl.b[0].name, "") && !strcmp(bl.b[0].backend, "?") && !strcmp(bl.b[0].device, "test") &&
              !bl.b[0].finished_at);
        CHECK(!strcmp(bl.b[1].name, "first") && !strcmp(bl.b[1].backend, "cpu") && bl.b[1].finished_at &&
              bl.b[1].finished_at[0]);
    }
    ob_bench_list_free(&bl);
    CHECK(bl.n == 0 && !bl.b);
    /* a benchmarks table without a column it reads: bad input, said so */
    CHECK(sqlite3_exec(q, "ALTER TABLE benchmarks RENAME COLUMN host TO machine", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(ob_bench_list_load(q, &bl, &e) == OB_ERR_INPUT && bl.n == 0 && !bl.b);
    CHECK_MSG(strstr(e.msg, "reading the benchmarks: no such column: host"), "%s", e.msg);
    sqlite3_close(q);
}

/* The database and report folder of the test named name: dir/NAME.db and
 * dir/NAME (512 bytes each). */
/* The columns of runs.csv, summary.csv, lr_sweep.csv, cost.csv and
 * curves_best.csv hold the values they are named for: a run's step times and
 * byte counts, a best lr at the grid's top (open above; the loss at half the
 * best lr measured, at double not), the best lr's row marked, a metric
 * not recorded left empty, the range over
 * one seed left empty with its coverage, a loss of +inf in a run that did not
 * diverge not counted as diverged, and a curve of 4001 steps thinned to at
 * most OB_PLOT_MAX_POINTS rows that keep its last step, and paired.csv's
 * pairs of the sweep and of the confirmation runs. */
static void test_export_columns(const char *db, const char *out)
{
    ob_store *st = new_store(db);
    if (!st) return;
    static const double lrs[3] = {0.001, 0.01, 0.1}, finals[3] = {4.0, 1.05, 1.0};
    int64_t top = 0;
    for (int l = 0; l < 3; l++)
        for (int seed = 0; seed < 3; seed++) {
            int64_t id = fx_add(st, 0, &(fx_run){"Q", "adam", NULL, lrs[l], seed, "done", finals[l], 20, 2.0 + 0.5 * seed,
                                                 4.0, 4096, 800, 1.5, 0.5, 0});
            if (l == 2 && seed == 0) top = id;
        }
    /* confirmation runs of two optimizers at their best lr: a pair of the confirm stage */
    for (int seed = 0; seed < 3; seed++) {
        fx_add(st, 0, &(fx_run){"Q", "lion", NULL, 0.1, seed, "done", 2.0, 20, 2.0, 4.0, 4096, 800, 1.5, 0.5, 0});
        fx_add_stage(st, 0, &(fx_run){"Q", "adam", NULL, 0.1, 10 + seed, "done", 1.0 + 0.1 * seed, 20, 2.0, 4.0, 4096, 800,
                                      1.5, 0.5, 0}, "confirm");
        fx_add_stage(st, 0, &(fx_run){"Q", "lion", NULL, 0.1, 10 + seed, "done", 2.0 + 0.1 * seed, 20, 2.0, 4.0, 4096, 800,
                                      1.5, 0.5, 0}, "confirm");
    }
    /* sgd: one seed diverged, the other finished without a held-out loss */
    fx_add(st, 0, &(fx_run){"Q", "sgd", NULL, 0.1, 0, "done", 3.0, 20, 2.0, 4.0, 4096, 800, NAN, NAN, 0});
    fx_add(st, 0, &(fx_run){"Q", "sgd", NULL, 0.1, 1, "diverged", 0, 20, 2.0, 4.0, 4096, 800, NAN, NAN, 0});
    fx_add(st, 0, &(fx_run){"R", "adam", NULL, 0.01, 0, "done", 0.5, 10, 2.0, 3.0, 4096, 800, 0.8, NAN, 0});
    fx_add(st, 0, &(fx_run){"L", "adam", NULL, 0.01, 0, "done", 0.5, 10, 2.0, 3.0, 4096, 800, 0.8, NAN, 4001});
    ob_store_close(st);
    char sql[200];
    snprintf(sql, sizeof sql, "UPDATE curves SET loss = 9e999 WHERE run_id = %lld AND step = 3", (long long)top);
    db_exec(db, sql);
    db_exec(db, "UPDATE runs SET step_ms_mean = 10 * step_ms_mean");
    ob_report_result res;
    write_report(db, out, &res);

    table t;
    CHECK(read_table(out, "runs.csv", &t) == 0);
    int r = find_row(&t, "workload", "Q", "optimizer", "adam");
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "step_ms_median"), "2") && !strcmp(cell(&t, r, "step_ms_p90"), "4") &&
                  !strcmp(cell(&t, r, "peak_mem_bytes"), "4096") && !strcmp(cell(&t, r, "state_bytes"), "800"),
              "runs.csv: step ms %s, p90 %s, peak %s, state %s", r > 0 ? cell(&t, r, "step_ms_median") : "",
              r > 0 ? cell(&t, r, "step_ms_p90") : "", r > 0 ? cell(&t, r, "peak_mem_bytes") : "",
              r > 0 ? cell(&t, r, "state_bytes") : "");
    free_table(&t);

    /* a metric the workload does not have: empty, not 0 */
    CHECK(read_table(out, "evals.csv", &t) == 0);
    r = find_row(&t, "workload", "R", "optimizer", "adam");
    CHECK_MSG(r > 0 && num_of(cell(&t, r, "eval_loss")) == 0.8 && !strcmp(cell(&t, r, "eval_metric"), ""),
              "evals.csv: loss %s, metric '%s'", r > 0 ? cell(&t, r, "eval_loss") : "", r > 0 ? cell(&t, r, "eval_metric") : "");
    free_table(&t);

    CHECK(read_table(out, "summary.csv", &t) == 0);
    r = find_row(&t, "workload", "Q", "optimizer", "adam");
    CHECK(r > 0 && num_of(cell(&t, r, "best_lr")) == 0.1);
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "lr_width_open"), "1") && num_of(cell(&t, r, "lr_width_decades")) >= 1,
              "best lr at the top of the grid: width %s, open '%s'", r > 0 ? cell(&t, r, "lr_width_decades") : "",
              r > 0 ? cell(&t, r, "lr_width_open") : "");
    const double half = r > 0 ? num_of(cell(&t, r, "loss_at_half_lr")) : NAN;
    CHECK_MSG(half > 1.0 && half < 1.05 && !strcmp(cell(&t, r, "loss_at_double_lr"), ""),
              "loss at half the best lr %s, at double '%s'", r > 0 ? cell(&t, r, "loss_at_half_lr") : "",
              r > 0 ? cell(&t, r, "loss_at_double_lr") : "");
    /* one seed: no interval, so no coverage either */
    r = find_row(&t, "workload", "R", "optimizer", "adam");
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "final_ci_lo"), "") && !strcmp(cell(&t, r, "final_ci_coverage"), ""),
              "one seed: ci_lo '%s', coverage '%s'", r > 0 ? cell(&t, r, "final_ci_lo") : "",
              r > 0 ? cell(&t, r, "final_ci_coverage") : "");
    free_table(&t);

    CHECK(read_table(out, "lr_sweep.csv", &t) == 0);
    int best = 0;
    for (int i = 1; i < t.rows; i++)
        if (!strcmp(cell(&t, i, "workload"), "Q") && !strcmp(cell(&t, i, "optimizer"), "adam")) {
            const int is_top = num_of(cell(&t, i, "lr")) == 0.1;
            CHECK_MSG(!strcmp(cell(&t, i, "is_best"), is_top ? "1" : "0"), "lr %s is_best %s", cell(&t, i, "lr"),
                      cell(&t, i, "is_best"));
            best += is_top;
        }
    CHECK(best == 1);
    /* not every seed diverged: no worst value stands in for the held-out loss not recorded */
    r = find_row(&t, "workload", "Q", "optimizer", "sgd");
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "diverged"), "1") && !strcmp(cell(&t, r, "eval_loss_median"), ""),
              "sgd: eval_loss_median '%s'", r > 0 ? cell(&t, r, "eval_loss_median") : "");
    free_table(&t);

    CHECK(read_table(out, "cost.csv", &t) == 0);
    r = find_row(&t, "workload", "Q", "optimizer", "adam");
    CHECK_MSG(r > 0 && num_of(cell(&t, r, "step_ms_median")) < num_of(cell(&t, r, "step_ms_p90")),
              "cost.csv: step ms %s, p90 %s", r > 0 ? cell(&t, r, "step_ms_median") : "", r > 0 ? cell(&t, r, "step_ms_p90") : "");

    /* the bar chart of step times shows the median, as cost.csv */
    char med[64] = "";
    if (r > 0) snprintf(med, sizeof med, "%s", cell(&t, r, "step_ms_median"));
    free_table(&t);
    CHECK(read_table(out, "bars_step_ms.csv", &t) == 0);
    r = find_row(&t, "workload", "Q", NULL, NULL);
    CHECK_MSG(r > 0 && med[0] && !strcmp(cell(&t, r, "adam"), med), "bars_step_ms.csv: %s, cost.csv: %s",
              r > 0 ? cell(&t, r, "adam") : "", med);
    free_table(&t);
    /* one run: no spread of step times, so no interval bar */
    CHECK(read_table(out, "bars_time_to_target_range.csv", &t) == 0);
    r = find_row(&t, "workload", "R", NULL, NULL);
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "adam lo"), "") && !strcmp(cell(&t, r, "adam hi"), ""),
              "R: '%s' to '%s'", r > 0 ? cell(&t, r, "adam lo") : "", r > 0 ? cell(&t, r, "adam hi") : "");
    free_table(&t);

    /* the time to the target's interval, low end first */
    CHECK(read_table(out, "time_to_target.csv", &t) == 0);
    r = find_row(&t, "workload", "Q", "optimizer", "adam");
    CHECK_MSG(r > 0 && num_of(cell(&t, r, "time_lo_s")) < num_of(cell(&t, r, "time_hi_s")), "time %s to %s",
              r > 0 ? cell(&t, r, "time_lo_s") : "", r > 0 ? cell(&t, r, "time_hi_s") : "");
    free_table(&t);

    CHECK(read_table(out, "curves_best.csv", &t) == 0);
    int rows_l = 0, last_l = 0, seen3 = 0;
    for (int i = 1; i < t.rows; i++) {
        const char *wl = cell(&t, i, "workload");
        if (!strcmp(wl, "L")) {
            rows_l++;
            last_l |= !strcmp(cell(&t, i, "step"), "4000");
        }
        if (!strcmp(wl, "Q") && !strcmp(cell(&t, i, "step"), "3")) {
            seen3 = 1; /* +inf in a seed that did not diverge: in the median, not counted as diverged */
            CHECK_MSG(!strcmp(cell(&t, i, "diverged"), "0") && !strcmp(cell(&t, i, "seeds"), "3"),
                      "step 3: diverged '%s'", cell(&t, i, "diverged"));
        }
    }
    CHECK_MSG(rows_l > 1000 && rows_l <= OB_PLOT_MAX_POINTS && last_l, "4001 steps: %d rows, last step %s", rows_l,
              last_l ? "kept" : "missing");
    CHECK(seen3);
    free_table(&t);
    char *pc = slurp(out, "paired.csv");
    CHECK_MSG(pc && strstr(pc, "\"Q\",\"sweep\",1,\"adam\",2,\"lion\",3,") &&
                  strstr(pc, "\"Q\",\"confirm\",1,\"adam\",2,\"lion\",3,"),
              "paired.csv:\n%s", pc ? pc : "(missing)");
    free(pc);
    CHECK(read_table(out, "evals_best.csv", &t) == 0);
    r = find_row(&t, "workload", "R", NULL, NULL);
    CHECK_MSG(r > 0 && !strcmp(cell(&t, r, "eval_metric_median"), "") && num_of(cell(&t, r, "eval_loss_median")) == 0.8,
              "evals_best.csv: metric '%s'", r > 0 ? cell(&t, r, "eval_metric_median") : "");
    free_table(&t);
}

/* ob_slug's names for files, and a CSV whose write fails (a full disk) is an
 * error when it is closed */
static void test_slug_and_csv_errors(void)
{
    char s[64];
    ob_slug("adam beta2=0.95", s, sizeof s);
    CHECK_MSG(!strcmp(s, "adam_beta2-0.95"), "%s", s);
    ob_slug("a  (b),c", s, sizeof s);
    CHECK_MSG(!strcmp(s, "a_b_c"), "%s", s);
    ob_slug("abcdef", s, 4);
    CHECK_MSG(!strcmp(s, "abc"), "%s", s);
    struct stat sb;
    if (stat("/dev/full", &sb) != 0) return;
    ob_csv c;
    ob_err e = {0};
    CHECK_OK(ob_csv_open(&c, "/dev", "full", (const char *const[]){"a"}, 1, &e), &e);
    ob_csv_int(&c, 1);
    ob_csv_row(&c);
    CHECK_MSG(ob_csv_close(&c, &e) == OB_ERR_IO && strstr(e.msg, "/dev/full"), "%s", e.msg);
}

static void test_paths(const char *dir, const char *name, char *db, char *out)
{
    snprintf(db, 512, "%s/%s.db", dir, name);
    snprintf(out, 512, "%s/%s", dir, name);
}

int main(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/ob_test_report_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    char db[512], out[512];
    snprintf(db, sizeof db, "%s/ref.db", dir);
    CHECK(fx_build_reference(db) == 0);
    snprintf(out, sizeof out, "%s/report", dir);
    test_tables(db, out);
    snprintf(out, sizeof out, "%s/rendered/sub", dir);
    test_render(db, out);
    test_refusals(dir);
    test_paths(dir, "confirm", db, out);
    test_confirm(db, out);
    test_paths(dir, "diverged", db, out);
    test_diverged_curves(db, out);
    test_paths(dir, "provenance", db, out);
    test_provenance(db, out);
    test_paths(dir, "all_diverged", db, out);
    test_all_diverged(db, out);
    test_paths(dir, "lr_edges", db, out);
    test_lr_range_edges(db, out);
    test_paths(dir, "busy", db, out);
    test_busy_runs(db, out);
    test_tex_intervals(db, out);
    test_tex_paired(db, out);
    test_paths(dir, "columns", db, out);
    test_export_columns(db, out);
    test_slug_and_csv_errors();
    snprintf(db, sizeof db, "%s/benchmarks.db", dir);
    test_bench_list(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (getenv("OB_TEST_KEEP")) printf("kept %s\n", dir); /* to look at the reports */
    else if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
