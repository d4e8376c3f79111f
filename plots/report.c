/* plots/report.c - `optbench report` (see report.h): load, compute, export,
 * write the figure scripts, render them, and write summary.md and index.html.
 *
 * The two documents are written side by side through a tiny writer
 * (plots/doc.h) so they always hold the same tables: Markdown for a CI job
 * summary or a repository, HTML with the figures inline for a browser.
 */
#include "plots/report.h"
#include "core/cpu_share.h"
#include "core/fs.h"
#include "plots/doc.h"
#include "plots/doc_profile.h"
#include "plots/latex.h"
#include "plots/publish.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plots/figures.h"
#include "results/dataset.h"
#include "results/export.h"
#include "results/store.h"
#include "workloads/workload.h"

void ob_path_trim(const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s", path);
    size_t l = strlen(out);
    while (l > 1 && out[l - 1] == '/') out[--l] = '\0';
}

ob_status ob_mkdirs(const char *path, ob_err *e)
{
    ob_status st = ob_mkdir_p(path, e);
    if (st == OB_OK) return OB_OK;
    /* a folder the user may not write, or a path through a file: bad input;
     * a full disk or an I/O error: a failure */
    int err = errno;
    if (err != EACCES && err != EPERM && err != EROFS && err != ENOTDIR && err != ENAMETOOLONG && err != ENOENT)
        return st;
    if (e) {
        e->status = OB_ERR_INPUT;
        size_t l = strlen(e->msg);
        snprintf(e->msg + l, sizeof e->msg - l, " (give --out a folder that can be written)");
    }
    return OB_ERR_INPUT;
}

/* ---- number formatting for the documents ----------------------------------- */

/* How a workload's target was set, for the text. */
static const char *target_rule(const ob_stats *s, int w)
{
    return s->target_given[w]      ? "given"
         : s->target_halfway[w]    ? "halfway from the starting loss to the best upper-median final loss, which "
                                     "1.1 x the best would not ask for"
                                   : "1.1 x the best upper-median final loss";
}

static const char *num(double v, char *buf, size_t n)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, "%.4g", v);
    return buf;
}

static const char *bytes_text(int64_t b, char *buf, size_t n)
{
    if (b < 0) snprintf(buf, n, "-");
    else if (b >= 1024LL * 1024 * 1024) snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024LL * 1024) snprintf(buf, n, "%.2f MiB", b / (1024.0 * 1024));
    else if (b >= 1024) snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else snprintf(buf, n, "%lld B", (long long)b);
    return buf;
}

static const char *secs_text(double s, char *buf, size_t n)
{
    if (isnan(s)) snprintf(buf, n, "-");
    else if (isinf(s)) snprintf(buf, n, "not reached");
    else if (s < 1) snprintf(buf, n, "%.3g ms", s * 1000);
    else if (s < 120) snprintf(buf, n, "%.3g s", s);
    else snprintf(buf, n, "%.3g min", s / 60);
    return buf;
}

/* ---- the documents ------------------------------------------------------------ */

static const char css[] =
    "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;"
    "margin:2em auto;padding:0 1em;color:#222;line-height:1.45}"
    "h1{border-bottom:2px solid #ddd;padding-bottom:.3em}h2{margin-top:2em;border-bottom:1px solid #eee}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}"
    "th,td{border:1px solid #ddd;padding:.3em .6em;vertical-align:top}th{background:#f5f5f5}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#fafafa}"
    "figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}"
    "figcaption{font-size:.9em;color:#444;margin-top:.4em}.src{color:#888}"
    "figure.missing div{padding:2em;background:#fff3f3;border:1px dashed #c99}"
    "p.skipped{font-size:.9em;color:#555;background:#f7f7f7;border-left:3px solid #ccc;padding:.4em .8em}"
    "code{background:#f3f3f3;padding:0 .2em}";

typedef struct bench_info {
    int n;
    char first[256], last[256];
} bench_info;

static int bench_by_id(const void *a, const void *b)
{
    const int64_t x = (*(const ob_bench *const *)a)->id, y = (*(const ob_bench *const *)b)->id;
    return (x > y) - (x < y);
}

/* The benchmarks of the report (its one benchmark, or every one with runs),
 * a line each for the first five by id. */
/* One benchmark's line, in Markdown or HTML (esc: the escaper of the user's text). */
static void bench_line(FILE *f, void (*esc)(FILE *, const char *), const ob_bench *b)
{
    /* the device description names the backend first ("cpu: 2 threads, ..."): not twice */
    const char *be = b->backend, *dv = b->device;
    size_t bel = strlen(be);
    int dup = !strncmp(dv, be, bel) && dv[bel] == ':';
    fprintf(f, "Benchmark #%lld", (long long)b->id);
    if (b->name[0]) fputc(' ', f); /* "" when it has none */
    esc(f, b->name);
    fprintf(f, ": revision %s on ", b->git_rev);
    esc(f, b->host);
    fputs(" (", f);
    if (!dup) {
        esc(f, be);
        fputs(", ", f);
    }
    esc(f, dv);
    fprintf(f, "), started %s, %s%s.", b->created_at, b->finished_at ? "finished " : "not finished",
            b->finished_at ? b->finished_at : "");
}

static void describe_benchmarks(sqlite3 *db, const ob_dataset *d, ob_doc *dc)
{
    ob_bench_list bl;
    ob_err e = {0};
    if (ob_bench_list_load(db, &bl, &e) != OB_OK) return;
    const ob_bench **b = malloc(((size_t)bl.n + 1) * sizeof *b);
    int n = 0;
    for (int i = 0; b && i < bl.n; i++)
        if (d->benchmark_id <= 0 || bl.b[i].id == d->benchmark_id) b[n++] = &bl.b[i];
    /* ob_bench_list_load lists them oldest first */
    if (n > 1) qsort(b, (size_t)n, sizeof *b, bench_by_id);
    for (int i = 0; i < n && i < 5; i++) {
        bench_line(dc->md, ob_doc_md_text_esc, b[i]);
        fputs("\n\n", dc->md);
        fputs("<p>", dc->html);
        bench_line(dc->html, ob_doc_html_esc, b[i]);
        fputs("</p>\n", dc->html);
    }
    if (n > 5) ob_doc_p(dc, "... and %d more benchmarks in this database.", n - 5);
    free(b);
    ob_bench_list_free(&bl);
}

/* text after the text in buf (cap bytes): as much of it as fits, buf
 * staying terminated, so that parts added one by one read as one snprintf
 * of them all would write them. */
static void note_add(char *buf, size_t cap, const char *text)
{
    size_t l = strlen(buf);
    snprintf(buf + l, cap - l, "%s", text);
}

/* Groups whose runs come from more than one code revision, machine or
 * device: their statistics pool those runs (a database filled over a code
 * change, or merged from shards run elsewhere), and their step times are of
 * different machines. Into note (cap bytes), "" when none: how many groups,
 * and the first one's revisions, machines or devices. Returns the number of
 * such groups; -1 when out of memory. */
static int mixed_provenance(sqlite3 *db, const ob_dataset *d, const ob_stats *s, char *note, size_t cap)
{
    note[0] = '\0';
    ob_bench_list bl;
    ob_err e = {0};
    if (ob_bench_list_load(db, &bl, &e) != OB_OK)
        /* a database whose benchmarks cannot be read leaves nothing to tell them apart by: say nothing */
        return e.status == OB_ERR_NOMEM ? -1 : 0;
    /* what can differ between runs, each with the words around its first two values in the note */
    static const char *const kinds[3][3] = {
        {"revisions ", " and ", ""}, {"machines ", " and ", ""}, {"devices '", "' and '", "'"}};
    int mixed = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        /* the first two revisions, machines and devices of the group's runs */
        const char *seen[3][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
        for (int i = 0; i < d->n; i++) {
            const ob_rrun *r = &d->runs[i];
            /* the sweep's runs: the confirmation runs enter no other statistic */
            if (r->wl != g->wl || r->opt != g->opt || !r->finished || r->confirm) continue;
            const ob_bench *b = ob_bench_list_find(&bl, r->benchmark_id);
            /* the run's own revision and machine (schema 5), else its benchmark's */
            const char *x[3] = {r->git_rev[0] ? r->git_rev : b ? b->git_rev : "?",
                                r->host[0] ? r->host : b ? b->host : "?", r->device[0] ? r->device : r->backend};
            for (int j = 0; j < 3; j++) {
                if (!seen[j][0]) seen[j][0] = x[j];
                else if (!seen[j][1] && strcmp(seen[j][0], x[j])) seen[j][1] = x[j];
            }
        }
        if (!seen[0][1] && !seen[1][1] && !seen[2][1]) continue;
        if (mixed++) continue;
        /* "W / O: revisions A and B; machines C and D; devices 'E' and 'F'", the kinds that differ */
        note_add(note, cap, d->wl_labels[g->wl]);
        note_add(note, cap, " / ");
        note_add(note, cap, d->opt_labels[g->opt]);
        note_add(note, cap, ": ");
        int parts = 0;
        for (int j = 0; j < 3; j++) {
            if (!seen[j][1]) continue;
            if (parts++) note_add(note, cap, "; ");
            note_add(note, cap, kinds[j][0]);
            note_add(note, cap, seen[j][0]);
            note_add(note, cap, kinds[j][1]);
            note_add(note, cap, seen[j][1]);
            note_add(note, cap, kinds[j][2]);
        }
    }
    ob_bench_list_free(&bl);
    return mixed;
}

/* The rankings in a few lines, for a terminal or a CI log: at most
 * PRINT_RANKED optimizers (configurations) a line. */
#define PRINT_RANKED 10
static ob_status print_ranking(FILE *f, const ob_dataset *d, const ob_stats *s, ob_err *e)
{
    ob_status st = OB_OK;
    int *rank = malloc(((size_t)s->n_g + 1) * sizeof *rank), *crank = malloc(((size_t)s->n_g + 1) * sizeof *crank);
    int *order = malloc(((size_t)s->n_g + 1) * sizeof *order);
    if (!rank || !crank || !order) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory ranking the optimizers");
        goto out;
    }
    ob_stats_rank(s, rank);
    ob_stats_confirm_rank(s, crank);
    fprintf(f, "ranking by median final loss at each optimizer's best lr (the report has the spread):\n");
    int wmax = 0;
    for (int w = 0; w < d->n_wl; w++)
        if ((int)strlen(d->wl_labels[w]) > wmax) wmax = (int)strlen(d->wl_labels[w]);
    int edges = 0, fewest = 0; /* ranked at a grid's edge; the fewest seeds a place rests on */
    for (int w = 0; w < d->n_wl; w++)
        for (int stage = 0; stage < 2; stage++) {
            int n = ob_stats_ranked(s, stage ? crank : rank, w, order, s->n_g);
            if (stage && n == 0) continue;
            char b[64];
            fprintf(f, "  %-*s %s", wmax, stage ? "" : d->wl_labels[w], stage ? "fresh seeds: " : "");
            /* a line each: the first PRINT_RANKED of a long ranking (a search's trials), then how many more */
            for (int i = 0; i < n && i < PRINT_RANKED; i++) {
                const ob_group *g = &s->g[order[i]];
                /* its best lr the smallest or largest it ran: a better one may lie beyond */
                const int edge = !stage && g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1);
                const int seeds = stage ? g->n_confirm : g->lrs[g->best].n_finished;
                edges += edge;
                if (seeds > 0 && (!fewest || seeds < fewest)) fewest = seeds;
                fprintf(f, "%s%d %s%s %s", i ? ", " : "", (stage ? crank : rank)[order[i]], d->opt_labels[g->opt],
                        edge ? "*" : "", num(stage ? g->conf_final.median : g->final.median, b, sizeof b));
                /* seeds that diverged at the lr it is ranked at */
                const int nd = stage ? g->conf_n_diverged : g->lrs[g->best].n_diverged;
                if (nd) fprintf(f, " (%d of %d diverged)", nd, stage ? g->n_confirm : g->lrs[g->best].n_finished);
                /* a benchmark still running or stopped: a place on part of its grid */
                if (!stage && g->n_unfinished)
                    fprintf(f, " (%d of %d runs not finished)", g->n_unfinished, g->n_runs);
            }
            if (n > PRINT_RANKED) fprintf(f, ", and %d more (summary.md ranks them all)", n - PRINT_RANKED);
            int n_unranked = 0;
            if (!stage)
                for (int k = 0; k < s->n_g; k++)
                    if (s->g[k].wl == w && rank[k] == 0 && n_unranked++ < PRINT_RANKED)
                        /* unranked: no finite median at any lr, because its runs diverged
                         * or because none has finished yet (a benchmark still running) */
                        fprintf(f, "%s%s: %s", n++ ? "; " : "", d->opt_labels[s->g[k].opt],
                                ob_group_no_best(&s->g[k]));
            if (n_unranked > PRINT_RANKED) fprintf(f, "; and %d more unranked", n_unranked - PRINT_RANKED);
            fprintf(f, "\n");
        }
    if (edges)
        fprintf(f, "  *: its best lr is the smallest or largest it ran; a better one may lie beyond (the lr "
                   "figures)\n");
    if (fewest && fewest < 5)
        fprintf(f, "  a place rests on as few as %d seed%s: neighbours closer than their spread are not told apart, "
                   "and farther ones not surely either (summary.md compares them seed by seed)\n", fewest,
                fewest == 1 ? "" : "s");
out:
    free(rank);
    free(crank);
    free(order);
    return st;
}

/* One paragraph: neighbours in a ranking compared seed by seed. */
/* "3 non-finite steps skipped (1 rolled back), 2 spikes skipped (2 of 3
 * seeds)" for the runs idx[0..n-1]; "" when the guard did nothing there. */
static void guard_text(const ob_dataset *d, const int *idx, int n, char *buf, size_t len)
{
    long long nf = 0, sp = 0, rb = 0;
    int seeds = 0;
    for (int i = 0; i < n; i++) {
        const ob_rrun *r = &d->runs[idx[i]];
        nf += r->n_skip_nonfinite;
        sp += r->n_skip_spike;
        rb += r->n_rollback;
        seeds += r->n_skip_nonfinite + r->n_skip_spike + r->n_rollback > 0;
    }
    buf[0] = '\0';
    if (!seeds) return;
    size_t l = 0;
    if (nf) {
        l += (size_t)snprintf(buf + l, len - l, "%lld non-finite step%s skipped", nf, nf == 1 ? "" : "s");
        if (rb) l += (size_t)snprintf(buf + l, len - l, " (%lld rolled back)", rb);
    }
    if (sp) l += (size_t)snprintf(buf + l, len - l, "%s%lld spike%s skipped", l ? ", " : "", sp, sp == 1 ? "" : "s");
    snprintf(buf + l, len - l, " (%d of %d seeds)", seeds, n);
}

/* What the guard did in the runs at each optimizer's best lr on workload w,
 * and on its fresh seeds: a ranked run that trained on fewer batches than
 * its steps says so. Nothing when it did nothing. */
static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The workloads in a line for the Setup section: each one's planned steps
 * and the sweep's seeds (v: room for d->n values). */
static void setup_workloads(const ob_dataset *d, double *v, char *wl, size_t cap)
{
    size_t len = 0;
    wl[0] = '\0';
    for (int w = 0; w < d->n_wl && len < cap; w++) {
        int m = 0;
        int64_t steps = -1;
        for (int i = 0; i < d->n; i++)
            if (d->runs[i].wl == w && !d->runs[i].confirm) {
                v[m++] = (double)d->runs[i].seed;
                if (d->runs[i].steps > steps) steps = d->runs[i].steps;
            }
        qsort(v, (size_t)m, sizeof *v, cmp_double);
        int seeds = 0;
        for (int i = 0; i < m; i++) seeds += i == 0 || v[i] != v[i - 1];
        len += (size_t)snprintf(wl + len, cap - len, "%s%s, %lld steps, %d seed%s", w ? "; " : "",
                                d->wl_labels[w], (long long)steps, seeds, seeds == 1 ? "" : "s");
    }
}

/* An optimizer configuration's n settings other than the defaults, sd, in
 * words: "key value (default x)", a text setting as it is, its study. */
static void setup_settings(const ob_setting_diff *sd, int n, char *set, size_t cap)
{
    size_t sl = 0;
    set[0] = '\0';
    for (int i = 0; i < n && sl < cap; i++) {
        const char *sep = i ? ", " : "";
        if (!sd[i].key[0] || !strncmp(sd[i].key, "options.", 8)) /* unknown; a text setting ("route=...") */
            sl += (size_t)snprintf(set + sl, cap - sl, "%s%s", sep, sd[i].value);
        else if (!strcmp(sd[i].key, "search.study")) /* which of the matrix's searches (studies) */
            sl += (size_t)snprintf(set + sl, cap - sl, "%sstudy %s of the search", sep, sd[i].value);
        else if (!sd[i].dflt[0])
            sl += (size_t)snprintf(set + sl, cap - sl, "%s%s %s (not a setting of this optbench)", sep,
                                   sd[i].key, sd[i].value);
        else
            sl += (size_t)snprintf(set + sl, cap - sl, "%s%s %s (default %s)", sep, sd[i].key, sd[i].value,
                                   sd[i].dflt);
    }
}

/* Optimizer configuration k's learning rates in the sweep, in words: each
 * of them, or the smallest to the largest where there are more than 8 (v:
 * room for d->n values). Returns how many there are. */
static int setup_lrs(const ob_dataset *d, int k, double *v, char *lrs, size_t cap)
{
    char b1[64], b2[64];
    int m = 0;
    for (int i = 0; i < d->n; i++)
        if (d->runs[i].opt == k && !d->runs[i].confirm) v[m++] = d->runs[i].lr;
    qsort(v, (size_t)m, sizeof *v, cmp_double);
    int u = 0;
    for (int i = 0; i < m; i++)
        if (u == 0 || v[i] != v[u - 1]) v[u++] = v[i];
    size_t ll = 0;
    lrs[0] = '\0';
    if (u > 8)
        snprintf(lrs, cap, "%s to %s (%d values)", num(v[0], b1, sizeof b1), num(v[u - 1], b2, sizeof b2), u);
    else
        for (int i = 0; i < u && ll < cap; i++)
            ll += (size_t)snprintf(lrs + ll, cap - ll, "%s%s", i ? ", " : "", num(v[i], b1, sizeof b1));
    return u;
}

/* Optimizer configuration k's row of the Setup table: its settings other
 * than the defaults and its learning rates (v: room for d->n values). */
static ob_status setup_row(sqlite3 *db, const ob_dataset *d, int k, double *v, ob_doc *dc, ob_err *e)
{
    ob_setting_diff *sd = NULL;
    int n = 0;
    const ob_status st = ob_settings_diff(db, d, k, &sd, &n, e);
    if (st != OB_OK) return st;
    char set[1536], lrs[512];
    setup_settings(sd, n, set, sizeof set);
    free(sd);
    const int u = setup_lrs(d, k, v, lrs, sizeof lrs);
    ob_doc_cell(dc, "%s", d->opt_labels[k]);
    ob_doc_cell(dc, "%s", n ? set : "the defaults");
    ob_doc_cell(dc, "%s", u ? lrs : "-");
    ob_doc_row_end(dc);
    return OB_OK;
}

/* The Setup section: each workload's steps and seeds, and each optimizer
 * configuration's learning rates and the settings it ran with where they
 * differ from this optbench's defaults (settings.csv), so that a reader
 * of the rankings knows the recipes compared. */
static ob_status doc_setup(sqlite3 *db, const ob_dataset *d, ob_doc *dc, ob_err *e)
{
    ob_doc_h(dc, 2, "Setup");
    double *v = malloc(((size_t)d->n + 1) * sizeof *v);
    if (!v) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    char wl[2048];
    setup_workloads(d, v, wl, sizeof wl);
    ob_doc_p(dc, "Workloads: %s (confirmation seeds not counted). Each optimizer configuration below ran with "
              "the settings listed, where they differ from this optbench's defaults for it and for training "
              "(settings.csv; runs.csv's hparams holds every value), at each of its learning rates and with "
              "every seed, on the workloads it ran.", wl);
    static const char *const hdr[] = {"optimizer", "settings other than the defaults", "learning rates"};
    ob_doc_table(dc, 3, hdr);
    ob_status st = OB_OK;
    for (int k = 0; k < d->n_opt && st == OB_OK; k++) st = setup_row(db, d, k, v, dc, e);
    ob_doc_table_end(dc);
    free(v);
    return st;
}

static void doc_guard(ob_doc *dc, const ob_dataset *d, const ob_stats *s, int w)
{
    char text[4096];
    size_t l = 0;
    for (int k = 0; k < s->n_g && l + 400 < sizeof text; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w) continue;
        char sweep[160], fresh[160];
        guard_text(d, g->best_runs, g->n_best_runs, sweep, sizeof sweep);
        guard_text(d, g->conf_runs, g->n_conf_runs, fresh, sizeof fresh);
        if (!sweep[0] && !fresh[0]) continue;
        l += (size_t)snprintf(text + l, sizeof text - l, "%s%s: %s%s%s", l ? "; " : "", d->opt_labels[g->opt],
                              sweep[0] ? sweep : "none in the sweep", fresh[0] ? ", on the fresh seeds " : "", fresh);
    }
    if (l)
        ob_doc_p(dc, "The guard at the best lrs: %s. Such runs trained on fewer batches than their steps (a skipped "
                  "step changes neither parameters nor optimizer state; a rolled-back one also undoes the steps "
                  "since the last snapshot); runs.csv counts them per run and the database's events table lists "
                  "each step.",
              text);
}

/* More neighbouring pairs than this in a ranking: a table rather than a
 * sentence (which also had room for about 3,000 characters only). */
#define PAIRED_TABLE_PAIRS 8

static ob_status doc_paired(ob_doc *dc, const ob_dataset *d, const ob_stats *s, const int *rank, int w, int confirm,
                            ob_err *e)
{
    int order[512];
    int n = ob_stats_ranked(s, rank, w, order, 512);
    if (n < 2) return OB_OK;
    if (n - 1 > PAIRED_TABLE_PAIRS) {
        /* more pairs than a sentence reads well (the nightly config's 17):
         * a table, a row per pair, every pair however many there are */
        ob_doc_p(dc, "Seed by seed%s, each optimizer against the next in the ranking:",
              confirm ? " on the fresh seeds" : " at the best lrs");
        static const char *const hdr[] = {"optimizer a (rank)", "optimizer b (rank)", "a lower on", "median change, a vs b"};
        ob_doc_table(dc, 4, hdr);
        int max_n = 0;
        for (int i = 0; i + 1 < n; i++) {
            ob_paired pr;
            OB_TRY(ob_stats_pair_neighbours(d, s, order[i], order[i + 1], confirm, &pr, e));
            if (pr.n > max_n) max_n = pr.n;
            ob_doc_cell(dc, "%s (%d)", d->opt_labels[s->g[order[i]].opt], rank[order[i]]);
            ob_doc_cell(dc, "%s (%d)", d->opt_labels[s->g[order[i + 1]].opt], rank[order[i + 1]]);
            ob_doc_cell(dc, "%d of %d seed%s", pr.a_lower, pr.n, pr.n == 1 ? "" : "s");
            if (isinf(pr.median_rel)) ob_doc_cell(dc, "+inf (diverged on half the seeds or more)");
            else if (!isnan(pr.median_rel)) ob_doc_cell(dc, "%+.1f%%", 100 * pr.median_rel);
            else ob_doc_cell(dc, "-");
            ob_doc_row_end(dc);
        }
        ob_doc_table_end(dc);
        ob_doc_p(dc, "(%s.)",
              max_n >= 6 ? "sign-test p in paired.csv"
                         : "fewer than 6 seeds: no such count is significant at 5% (two-sided); paired.csv");
        return OB_OK;
    }
    char buf[3072];
    size_t l = 0;
    l += (size_t)snprintf(buf + l, sizeof buf - l, "Seed by seed%s: ",
                          confirm ? " on the fresh seeds" : " at the best lrs");
    int max_n = 0;
    for (int i = 0; i + 1 < n && l + 200 < sizeof buf; i++) {
        ob_paired pr;
        OB_TRY(ob_stats_pair_neighbours(d, s, order[i], order[i + 1], confirm, &pr, e));
        if (pr.n > max_n) max_n = pr.n;
        char med[64] = "";
        if (isinf(pr.median_rel)) snprintf(med, sizeof med, ", median +inf (diverged on half the seeds or more)");
        else if (!isnan(pr.median_rel)) snprintf(med, sizeof med, ", median %+.1f%%", 100 * pr.median_rel);
        l += (size_t)snprintf(buf + l, sizeof buf - l, "%s%s (%d) vs %s (%d) lower on %d of %d seed%s%s",
                              i ? "; " : "", d->opt_labels[s->g[order[i]].opt], rank[order[i]],
                              d->opt_labels[s->g[order[i + 1]].opt], rank[order[i + 1]], pr.a_lower, pr.n,
                              pr.n == 1 ? "" : "s",
                              med);
    }
    if (l + 120 < sizeof buf)
        snprintf(buf + l, sizeof buf - l, " (%s).",
                 max_n >= 6 ? "sign-test p in paired.csv"
                            : "fewer than 6 seeds: no such count is significant at 5% (two-sided); paired.csv");
    ob_doc_p(dc, "%s", buf);
    return OB_OK;
}

/* The time of a group to the target, of the training loss or held out */
/* How far above the target a final loss ended (ob_group.tt_miss): "ended
 * 0.6% above", "ended 58% above", "ended at 18x the target". */
static const char *miss_text(double miss, char *buf, size_t n)
{
    if (miss < 0.1) snprintf(buf, n, "ended %.1f%% above", 100 * miss);
    else if (miss < 9) snprintf(buf, n, "ended %.0f%% above", 100 * miss);
    else snprintf(buf, n, "ended at %.0fx the target", 1 + miss);
    return buf;
}

/* r[0], r[1]: the least and the most of the probabilities c seen (NaN: none). */
static void cover_range(double *r, double c)
{
    if (isnan(c)) return;
    if (c < r[0]) r[0] = c;
    if (c > r[1]) r[1] = c;
}

/* fmt with the probability, "75%", or "75% to 98%", where some interval of
 * r's holds its median with probability under 95% (fewer than 6 values);
 * "" else. */
static void cover_text(const double *r, const char *fmt, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!(r[0] < 0.95)) return;
    char p[64];
    if (r[1] - r[0] < 0.005) snprintf(p, sizeof p, "%.0f%%", 100 * r[0]);
    else snprintf(p, sizeof p, "%.0f%% to %.0f%%", 100 * r[0], 100 * r[1]);
    snprintf(buf, n, fmt, p);
}

/* A workload's time-to-target table as its steps build it: its groups in
 * order with their ranks, and what the rows leave for the notes under it. */
typedef struct tt_table {
    ob_doc *dc;
    const ob_dataset *d;
    const ob_stats *s;
    int w, held_out;
    int n_here, order[512], trank[512]; /* the workload's groups in the table's order, and their ranks */
    int n_reached, n_shared, n_brackets;
    /* the least and most that a bracket holds the median (1 - 2^(1-n) for
     * [min, max] of n <= 5), of the steps' and the step times' intervals */
    double scov[2], tcov[2];
} tt_table;

/* What group k is ordered by within its rank: its time, or its steps where
 * the profile is by steps or it has no time. */
static double tt_key(const tt_table *tb, int k)
{
    const ob_ttt h = ob_group_ttt(&tb->s->g[k], tb->held_out);
    return tb->s->profile_by_steps || isnan(h.time_s) ? h.steps : h.time_s;
}

/* The workload's groups and their ranks (ob_stats_tt_rank: times within
 * the noise share a rank), by rank, then time (or steps); the others follow. */
static void tt_rank_order(tt_table *tb)
{
    const ob_stats *s = tb->s;
    for (int k = 0; k < s->n_g && tb->n_here < 512; k++)
        if (s->g[k].wl == tb->w) {
            tb->trank[tb->n_here] = tb->held_out ? ob_stats_ev_rank(s, k) : ob_stats_tt_rank(s, k);
            tb->order[tb->n_here++] = k;
        }
    for (int i = 1; i < tb->n_here; i++) {
        int v = tb->order[i], rv = tb->trank[i], j = i - 1;
        double tv = tt_key(tb, v);
        while (j >= 0) {
            double tj = tt_key(tb, tb->order[j]);
            if (rv == 0 || (tb->trank[j] > 0 && (tb->trank[j] < rv || (tb->trank[j] == rv && tj <= tv)))) break;
            tb->order[j + 1] = tb->order[j];
            tb->trank[j + 1] = tb->trank[j];
            j--;
        }
        tb->order[j + 1] = v;
        tb->trank[j + 1] = rv;
    }
}

/* The steps-to-target cell of a group that got there, with the interval its
 * rank ties within (the seeds' noise) where there is one. */
static void tt_steps_cell(tt_table *tb, const ob_ttt *t)
{
    ob_doc *dc = tb->dc;
    char b1[64], b2[64], b3[64];
    double lo, hi;
    if (ob_ttt_interval(t, 1, &lo, &hi) && lo < hi) {
        tb->n_brackets++;
        cover_range(tb->scov, t->steps_cover);
        num(lo, b2, sizeof b2);
        if (isinf(hi)) ob_doc_cell(dc, "%s (>= %s: a seed never got there)", num(t->steps, b1, sizeof b1), b2);
        else ob_doc_cell(dc, "%s (%s - %s)", num(t->steps, b1, sizeof b1), b2, num(hi, b3, sizeof b3));
    } else ob_doc_cell(dc, "%s", num(t->steps, b1, sizeof b1));
}

/* The training-time cell of a group that got there, with the interval its
 * rank ties within (the seeds' noise and the timing's) where there is one. */
static void tt_time_cell(tt_table *tb, const ob_ttt *t)
{
    ob_doc *dc = tb->dc;
    char b1[64], b2[64], b3[64];
    double lo, hi;
    if (isfinite(t->time_s) && ob_ttt_interval(t, 0, &lo, &hi) && lo < hi) {
        tb->n_brackets++;
        cover_range(tb->scov, t->steps_cover);
        cover_range(tb->tcov, t->step_ms_cover);
        secs_text(lo, b2, sizeof b2);
        if (isinf(hi)) ob_doc_cell(dc, "%s (>= %s)", secs_text(t->time_s, b1, sizeof b1), b2);
        else ob_doc_cell(dc, "%s (%s - %s)", secs_text(t->time_s, b1, sizeof b1), b2, secs_text(hi, b3, sizeof b3));
    } else ob_doc_cell(dc, "%s", secs_text(t->time_s, b1, sizeof b1));
}

/* A row each for the groups that got there, in rank order. */
static void tt_reached_rows(tt_table *tb)
{
    ob_doc *dc = tb->dc;
    char b1[64];
    for (int i = 0; i < tb->n_here; i++) {
        const ob_group *g = &tb->s->g[tb->order[i]];
        const ob_ttt t = ob_group_ttt(&tb->s->g[tb->order[i]], tb->held_out);
        if (t.censored) continue;
        tb->n_reached++;
        tb->n_shared += (i > 0 && tb->trank[i - 1] == tb->trank[i]) ||
                        (i + 1 < tb->n_here && tb->trank[i + 1] == tb->trank[i]);
        ob_doc_cell(dc, "%d", tb->trank[i]);
        ob_doc_cell(dc, "%s", tb->d->opt_labels[g->opt]);
        /* each with the interval its rank ties within (the seeds' noise,
         * and for the time the timing's too) */
        tt_steps_cell(tb, &t);
        tt_time_cell(tb, &t);
        ob_doc_cell(dc, "%s", num(t.lr, b1, sizeof b1));
        ob_doc_row_end(dc);
    }
}

/* A row each for the groups that did not get there, unranked. */
static void tt_censored_rows(const tt_table *tb)
{
    ob_doc *dc = tb->dc;
    for (int i = 0; i < tb->n_here; i++) {
        const ob_group *g = &tb->s->g[tb->order[i]];
        if (!ob_group_ttt(&tb->s->g[tb->order[i]], tb->held_out).censored) continue;
        ob_doc_cell(dc, "-");
        ob_doc_cell(dc, "%s", tb->d->opt_labels[g->opt]);
        /* how near it came: its upper-median final loss at its best lr */
        if (!tb->held_out && isfinite(g->tt_miss) && g->tt_miss > 0) {
            char b[64];
            ob_doc_cell(dc, "not reached (%s)", miss_text(g->tt_miss, b, sizeof b));
        } else ob_doc_cell(dc, "not reached");
        ob_doc_cell(dc, "not reached");
        ob_doc_cell(dc, "-");
        ob_doc_row_end(dc);
    }
}

/* What a shared rank and the brackets mean, where the table has them. */
static void tt_bracket_note(const tt_table *tb)
{
    ob_doc *dc = tb->dc;
    /* (the held-out table's ranks read as the training table's, above it) */
    if ((tb->n_shared || tb->n_brackets) && !(tb->held_out && !tb->s->target_at_start[tb->w])) {
        char sc[160] = "", tc[160] = "";
        cover_text(tb->scov, ": here %s", sc, sizeof sc);
        cover_text(tb->tcov, " (here one that holds it with probability %s)", tc, sizeof tc);
        if (tb->s->profile_by_steps)
            ob_doc_p(dc, "A rank is 1 + the number of optimizers that got there clearly sooner, so optimizers "
                      "within the seeds' noise share one: in brackets, an interval of the seeds' median first "
                      "step there from their order statistics, the narrowest that holds the median with "
                      "probability 95%% or more ([min, max] from 6 to 8 seeds); with 5 seeds or fewer none "
                      "does, and it is [min, max] (with 3, the first and the last seed to get there), which "
                      "holds it with probability 1 - 2^(1-n) only%s. One ranks ahead of another "
                      "only where its whole interval lies below.",
                  sc);
        else
            ob_doc_p(dc, "A rank is 1 + the number of optimizers that got there clearly sooner, so optimizers "
                      "within the noise share one: in brackets, an interval of the seeds' median first step "
                      "there from their order statistics, the narrowest that holds the median with "
                      "probability 95%% or more ([min, max] from 6 to 8 seeds); with 5 seeds or fewer none "
                      "does, and it is [min, max] (with 3, the first and the last seed to get there), which "
                      "holds it with probability 1 - 2^(1-n) only%s; for the time, its ends x "
                      "those of the same interval of the median step time over the runs%s. One ranks ahead of "
                      "another only where its whole interval lies below.",
                  sc, tc);
    }
}

/* A caution on a ranking by time on timings that say little: unsteady step
 * times, or steps too short to time. */
static void tt_timing_caution(const tt_table *tb)
{
    ob_doc *dc = tb->dc;
    if (!tb->s->profile_by_steps && tb->n_reached > 1) {
        int n_unst = 0, n_tiny = 0;
        for (int i = 0; i < tb->n_here; i++) {
            const ob_group *g = &tb->s->g[tb->order[i]];
            if (ob_group_ttt(&tb->s->g[tb->order[i]], tb->held_out).censored) continue;
            n_unst += g->step_ms_spread > OB_STEP_SPREAD_UNSTEADY || ob_group_busy(g);
            n_tiny += g->step_ms_median < OB_STEP_TINY_MS;
        }
        if (n_unst || n_tiny)
            ob_doc_p(dc, "Caution: %s%s%s, so this order by time may be the machine's noise rather than the "
                      "optimizers'; the steps column, or `--profile-by steps`, ranks by steps.",
                  n_unst ? "the runs' step times differ by more than 25% (unsteady), or every timed run met a busy "
                           "machine, in "
                         : "",
                  n_unst ? (n_unst == 1 ? "one of these groups" : "several of these groups") : "",
                  n_tiny ? (n_unst ? " and some steps take under 50 microseconds, where timing is mostly overhead"
                                   : "some steps take under 50 microseconds, where timing is mostly overhead")
                         : "");
    }
}

/* Why none is ranked, where no optimizer got there, and how to set a
 * looser target. */
static void tt_none_reached(const tt_table *tb)
{
    ob_doc *dc = tb->dc;
    const ob_stats *s = tb->s;
    const int held_out = tb->held_out, w = tb->w;
    if (tb->n_reached == 0 && tb->n_here > 0)
        ob_doc_p(dc, "No optimizer reached the %starget on %s (at no lr did a majority of its seeds' %s get there), "
                  "so none is ranked%s.",
              held_out ? "held-out " : "", tb->d->wl_labels[w],
              !held_out ? "trailing losses" : s->heldout_metric ? "held-out metrics" : "held-out losses",
              (held_out ? s->ev_target_given[w] : s->target_given[w]) ? ""
              : !held_out            ? "; `--target WORKLOAD=LOSS` sets a looser target"
              : s->heldout_metric    ? "; `--eval-target WORKLOAD=VALUE` sets a looser target"
                                     : "; `--eval-target WORKLOAD=LOSS` sets a looser target");
}

/* Workload w's time-to-target table (held_out: to the held-out target),
 * ranked (ob_stats_tt_rank / ob_stats_ev_rank), and the notes on it. */
static void doc_tt_table(ob_doc *dc, const ob_dataset *d, const ob_stats *s, int w, int held_out)
{
    static const char *const thdr[] = {"rank", "optimizer", "steps to target",
                                       "training time (est.)", "at lr"};
    ob_doc_table(dc, 5, thdr);
    tt_table tb = {.dc = dc, .d = d, .s = s, .w = w, .held_out = held_out,
                   .scov = {INFINITY, -INFINITY}, .tcov = {INFINITY, -INFINITY}};
    tt_rank_order(&tb);
    tt_reached_rows(&tb);
    tt_censored_rows(&tb);
    ob_doc_table_end(dc);
    tt_bracket_note(&tb);
    tt_timing_caution(&tb);
    tt_none_reached(&tb);
}

/* The swept values of group g's configuration ("beta2=0.95"), "-" for an
 * optimizer run in one configuration. */
static const char *config_text(const ob_dataset *d, const ob_group *g, int n_configs)
{
    const char *c = n_configs > 1 ? ob_dataset_opt_config(d, g->opt) : NULL;
    return c ? c : "-";
}

/* Each optimizer at its best configuration on workload w, where the matrix
 * swept some optimizer's hyperparameters (ob_stats_best_configs). */
static void doc_configs(ob_doc *dc, const ob_dataset *d, const ob_stats *s, int w)
{
    ob_best_config rows[256];
    int swept = 0;
    const int n = ob_stats_best_configs(d, s, w, rows, 256, &swept);
    if (!swept) return;
    char b1[64], b2[64];
    int any_conf = 0;
    for (int i = 0; i < n; i++) any_conf |= !isnan(s->g[rows[i].best].confirm_lr);
    ob_doc_p(dc, "Each optimizer at its best configuration: the sweeps (--sweep) made several configurations of some "
              "optimizers, each with its own lr sweep; here is each optimizer's configuration with the lowest "
              "median final loss at its best lr, beside its worst (how much the swept settings matter), ordered "
              "by the best. The choice is made on the sweep's own seeds, so its median is optimistic, as the best "
              "lr's is%s.",
          any_conf ? "; the fresh seeds' median (--confirm-seeds, at that configuration's best lr) is the estimate "
                     "to quote"
                   : "; --confirm-seeds runs fresh seeds at each configuration's best lr, the estimate to quote");
    static const char *const hdr[] = {"optimizer",           "best configuration", "configurations", "at lr",
                                      "final loss (median)", "95% CI",             "worst configuration",
                                      "its final loss (median)", "fresh seeds (median)"};
    ob_doc_table(dc, 9, hdr);
    for (int i = 0; i < n; i++) {
        const ob_group *g = &s->g[rows[i].best], *bad = &s->g[rows[i].worst];
        /* every configuration without a finite median: none is the best */
        const int none = g->best < 0 || !isfinite(g->final.median);
        ob_doc_cell(dc, "%s", d->opt_names[g->opt]);
        ob_doc_cell(dc, "%s", none ? "- (none has a finite median)" : config_text(d, g, rows[i].n_configs));
        ob_doc_cell(dc, "%d", rows[i].n_configs);
        ob_doc_cell(dc, "%s", g->best >= 0 ? num(g->best_lr, b1, sizeof b1) : "-");
        ob_doc_cell(dc, "%s", g->best >= 0 ? num(g->final.median, b1, sizeof b1) : ob_group_no_best(g));
        if (!(g->final.ci_cover >= 0.95)) ob_doc_cell(dc, "-");
        else ob_doc_cell(dc, "%s - %s", num(g->final.ci_lo, b1, sizeof b1), num(g->final.ci_hi, b2, sizeof b2));
        ob_doc_cell(dc, "%s", rows[i].n_configs < 2 || none ? "-" : config_text(d, bad, rows[i].n_configs));
        ob_doc_cell(dc, "%s", rows[i].n_configs < 2 ? "-"
                           : bad->best >= 0     ? num(bad->final.median, b1, sizeof b1)
                                                : ob_group_no_best(bad));
        if (isnan(g->confirm_lr)) ob_doc_cell(dc, "-");
        else if (g->confirm_lr != g->best_lr) /* an earlier benchmark's best lr: not this one's estimate */
            ob_doc_cell(dc, "- (fresh seeds at lr %s, not the best)", num(g->confirm_lr, b1, sizeof b1));
        else ob_doc_cell(dc, "%s (%d seeds)", num(g->conf_final.median, b1, sizeof b1), g->conf_final.n);
        ob_doc_row_end(dc);
    }
    ob_doc_table_end(dc);
}

/* Workload w's time to the held-out target, where its runs were evaluated
 * during training (ob_stats.ev_every). */
static void doc_heldout(ob_doc *dc, const ob_dataset *d, const ob_stats *s, int w)
{
    if (s->ev_no_metric && s->ev_no_metric[w]) {
        ob_doc_p(dc, "Time to the held-out target: none. It is on the held-out metric here (report --heldout-on "
                  "metric), and %s has none; report --heldout-on loss times the held-out loss.",
              d->wl_labels[w]);
        return;
    }
    if (!s->ev_every || !s->ev_every[w]) return;
    char b1[64], b2[64], what[96], rule[512];
    const char *q = strchr(d->wl_labels[w], ' ') ? "'" : "";
    /* the held-out loss, or the metric by its name (report --heldout-on metric) */
    const ob_workload_def *wdef = ob_workload_find(d->wl_names[w]);
    snprintf(what, sizeof what, "held-out %s",
             !s->heldout_metric ? "loss" : wdef && wdef->metric_name ? wdef->metric_name : "metric");
    const int met = s->heldout_metric;
    const char *med = met ? "lower-median" : "upper-median", *val = met ? "VALUE" : "LOSS";
    if (s->ev_target_given[w]) snprintf(rule, sizeof rule, "given");
    else if (s->ev_target_halfway[w])
        snprintf(rule, sizeof rule, "halfway from the %s at step 0 to the best %s final %s, which %s the best would "
                 "not ask for", what, med, what, met ? "0.9 x" : "1.1 x");
    else snprintf(rule, sizeof rule, "%s the best %s final %s", met ? "0.9 x" : "1.1 x", med, what);
    if (isnan(s->ev_target[w])) {
        ob_doc_p(dc, "Time to the held-out target: none (no lr of any optimizer has a finite %s final %s to set it "
                  "from; `--eval-target %s%s=%s%s` sets one).",
              med, what, q, d->wl_labels[w], val, q);
        return;
    }
    if (s->ev_target_at_start[w]) {
        ob_doc_p(dc, "Time to the held-out target: not ranked. The held-out target %s (%s) is at or %s the %s at "
                  "step 0 (median %s over the runs), so every optimizer meets it at once. Set one %s it with "
                  "`--eval-target %s%s=%s%s`.",
              num(s->ev_target[w], b1, sizeof b1), rule, met ? "below" : "above", what,
              num(s->ev_start[w], b2, sizeof b2), met ? "above" : "below", q, d->wl_labels[w], val, q);
        return;
    }
    ob_doc_p(dc, "Time to the held-out target (AlgoPerf's measure, time to a validation target): target %s %s (%s). "
              "A seed gets there at its first evaluation with a %s at or %s it, so steps are counted in "
              "evaluations, every %lld steps here; the lr, the majority of seeds, the step time and the ranks as "
              "for the training loss above.",
          what, num(s->ev_target[w], b1, sizeof b1), rule, what, met ? "above" : "below",
          (long long)s->ev_every[w]);
    doc_tt_table(dc, d, s, w, 1);
}

/* The time the report says it was generated, into when (n bytes): now, or
 * SOURCE_DATE_EPOCH (the reproducible-builds convention), so that the same
 * database gives the same report, byte for byte, at any time. */
static void generated_when(char *when, size_t n)
{
    time_t now = time(NULL);
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long fixed = sde && *sde ? strtoll(sde, &end, 10) : -1;
    if (end && *end == '\0' && fixed >= 0) now = (time_t)fixed;
    strftime(when, n, "%Y-%m-%d %H:%M UTC", gmtime(&now));
}

/* "3 workloads", or "2 workloads (5 configurations)" where a swept workload
 * has several configurations: the workloads by name, into buf (n bytes). */
static void workloads_text(const ob_dataset *d, char *buf, size_t n)
{
    int n_names = 0;
    for (int w = 0; w < d->n_wl; w++) {
        int seen = 0;
        for (int v = 0; v < w && !seen; v++) seen = !strcmp(d->wl_names[v], d->wl_names[w]);
        n_names += !seen;
    }
    if (n_names == d->n_wl) snprintf(buf, n, "%d workload%s", d->n_wl, d->n_wl == 1 ? "" : "s");
    else snprintf(buf, n, "%d workload%s (%d configurations)", n_names, n_names == 1 ? "" : "s", d->n_wl);
}

/* The title and what the database holds: runs by outcome, over what
 * workloads and optimizers, when and by which optbench. */
static void opening_database(ob_doc *dc, const ob_report_opts *o, const ob_dataset *d)
{
    ob_doc_h(dc, 1, "optbench report");
    int n_done = 0, n_div = 0, n_fail = 0, n_other = 0;
    for (int i = 0; i < d->n; i++) {
        if (!strcmp(d->runs[i].status, "done")) n_done++;
        else if (d->runs[i].diverged) n_div++;
        else if (!strcmp(d->runs[i].status, "failed")) n_fail++;
        else n_other++;
    }
    char when[64];
    generated_when(when, sizeof when);
    char wls[96];
    workloads_text(d, wls, sizeof wls);
    ob_doc_p(dc, "Database %s, %d runs over %s and %d optimizer configurations: %d done, "
              "%d diverged, %d failed, %d not finished. Generated %s by optbench %s.",
          o->db_path, d->n, wls, d->n_opt, n_done, n_div, n_fail, n_other, when,
#ifdef OB_VERSION
          OB_VERSION
#else
          "?"
#endif
    );
}

/* The confirmation runs, with those retired by a grown matrix and those
 * left out for not being fresh. Returns their number. */
static int opening_confirmation(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    int n_confirm_runs = 0, n_retired = 0;
    for (int i = 0; i < d->n; i++) n_confirm_runs += d->runs[i].confirm;
    /* retired by a grown matrix (run --resume): at no cell (-id) */
    for (int i = 0; i < d->n; i++) n_retired += d->runs[i].confirm && d->runs[i].cell < 0;
    int n_not_fresh = 0;
    for (int k = 0; k < s->n_g; k++) n_not_fresh += s->g[k].conf_seed_overlap;
    if (n_confirm_runs) {
        char nf[200] = "";
        if (n_not_fresh)
            snprintf(nf, sizeof nf, " %d of them %s left out below: %s seed is also a seed of a sweep in this "
                                    "database, so %s not fresh.",
                     n_not_fresh, n_not_fresh == 1 ? "is" : "are", n_not_fresh == 1 ? "its" : "their",
                     n_not_fresh == 1 ? "it is" : "they are");
        char rt[400] = "";
        if (n_retired)
            snprintf(rt, sizeof rt, " %d of them %s retired when the sweep grew (run --resume of a larger "
                                    "matrix): %s an lr that is no longer the best or ran a seed the sweep runs now; "
                                    "kept in the database, the tables use the others.",
                     n_retired, n_retired == 1 ? "was" : "were", n_retired == 1 ? "it confirms" : "they confirm");
        ob_doc_p(dc, "%d of the runs are confirmation runs: seeds at each optimizer's best lr, run after "
                  "the sweep (run --confirm-seeds). Every statistic but the confirmation tables is of the sweep "
                  "alone.%s%s", n_confirm_runs, rt, nf);
    }
    return n_confirm_runs;
}

/* The runs that were stopped and continued from a checkpoint, and those
 * that started over for want of one. */
static void opening_resumed(ob_doc *dc, const ob_dataset *d)
{
    int n_res = 0;
    long long n_stops = 0;
    for (int i = 0; i < d->n; i++) n_res += d->runs[i].n_resumed > 0, n_stops += d->runs[i].n_resumed;
    if (n_res)
        ob_doc_p(dc, "%d of the runs %s stopped and continued from a checkpoint (%lld time%s in all; runs.csv's "
                  "resumes column names them): a continued run's curve and results are those of an "
                  "uninterrupted one (on the CPU bit for bit, on the same device text), and its step times "
                  "leave out the first 5 steps of each process that ran it.",
              n_res, n_res == 1 ? "was" : "were", n_stops, n_stops == 1 ? "" : "s");
    int n_over = 0;
    for (int i = 0; i < d->n; i++) n_over += d->runs[i].n_restarted > 0;
    if (n_over)
        ob_doc_p(dc, "%d of the runs %s begun, stopped without a usable checkpoint and started over (runs.csv's "
                  "restarts column names them): their steps until the stop were done again, which the "
                  "benchmark's wall time holds but their results do not.",
              n_over, n_over == 1 ? "was" : "were");
}

/* The runs whose step times are a busy machine's: other processes kept
 * OB_BUSY_SHARE or more of their CPUs busy while they ran. */
static void opening_busy(ob_doc *dc, const ob_dataset *d)
{
    int n_busy = 0;
    double most = 0;
    for (int i = 0; i < d->n; i++) {
        const ob_rrun *r = &d->runs[i];
        if (!r->finished || !(r->other_cpu >= OB_BUSY_SHARE)) continue;
        n_busy++;
        most = fmax(most, r->other_cpu);
    }
    if (n_busy)
        ob_doc_p(dc, "%d of the finished runs ran while other processes kept %.0f%% or more of the machine's CPUs "
                  "busy (up to %.0f%%; runs.csv's other_cpu column names them): their step times are a busy "
                  "machine's, so an optimizer's step time, cost and time to target come from its runs on a "
                  "quiet machine where it has some, and from these where it has none (marked 'busy' in the "
                  "cost table); their losses are not affected.",
              n_busy, 100 * OB_BUSY_SHARE, 100 * most);
}

/* The runs not counted: older runs of cells run again, and later runs that
 * failed where an earlier one finished. */
static void opening_not_counted(ob_doc *dc, const ob_dataset *d)
{
    if (d->n_superseded)
        ob_doc_p(dc, "%d older run%s of cells that were run again %s not counted (the latest finished run of "
                  "each cell is).", d->n_superseded, d->n_superseded == 1 ? "" : "s",
              d->n_superseded == 1 ? "is" : "are");
    if (d->n_masked)
        ob_doc_p(dc, "%d later run%s that failed or did not finish %s not counted, because an earlier run of the "
                  "same cell finished and stands for it (report --benchmark ID shows one benchmark alone).",
              d->n_masked, d->n_masked == 1 ? "" : "s", d->n_masked == 1 ? "is" : "are");
}

/* The groups whose runs pool several revisions, machines or devices
 * (mixed_provenance: n_mixed of them, the first as mixed_note says). */
static void opening_pooled(ob_doc *dc, const ob_stats *s, int n_mixed, const char *mixed_note)
{
    if (n_mixed > 0)
        ob_doc_p(dc, "Pooled provenance: in %d of the %d workload x optimizer groups the runs come from more than "
                  "one code revision, machine or device (%s%s), and every statistic of such a group pools them: "
                  "a change of code between them, or another machine's step times, is inside its medians. "
                  "`report --benchmark ID` (or `latest`) reports one benchmark alone.",
              n_mixed, s->n_g, n_mixed > 1 ? "the first: " : "", mixed_note);
}

/* Why the figures were not rendered, where they were not. */
static void opening_not_rendered(ob_doc *dc, const ob_report_opts *o, int gnuplot_found)
{
    if (o->no_render)
        ob_doc_p(dc, "The figures were not rendered (report --no-render): run `gnuplot NAME.gp` for each script "
                  "in this folder.");
    else if (!gnuplot_found)
        ob_doc_p(dc, "gnuplot was not found, so the figures are not rendered: install gnuplot and run "
                  "`gnuplot NAME.gp` for each script in this folder.");
}

/* The report's opening: what the database holds (runs by outcome, over what
 * workloads and optimizers, when and by which optbench), then what a reader
 * should know before the tables: confirmation runs, runs that were resumed,
 * rerun or left out, the benchmarks, pooled provenance and whether the
 * figures were drawn. Returns the number of confirmation runs, which the
 * next section's first paragraph mentions. */
static int doc_opening(sqlite3 *db, ob_doc *dc, const ob_report_opts *o, const ob_dataset *d, const ob_stats *s,
                       int gnuplot_found, int n_mixed, const char *mixed_note)
{
    opening_database(dc, o, d);
    const int n_confirm_runs = opening_confirmation(dc, d, s);
    opening_resumed(dc, d);
    opening_busy(dc, d);
    opening_not_counted(dc, d);
    describe_benchmarks(db, d, dc);
    opening_pooled(dc, s, n_mixed, mixed_note);
    opening_not_rendered(dc, o, gnuplot_found);
    return n_confirm_runs;
}

/* Final loss, the best lr, the ranks and the median's interval; n_confirm_runs
 * picks what it says of the sweep's optimism. */
static void how_final_loss(ob_doc *dc, int n_confirm_runs)
{
    ob_doc_p(dc, "Final loss: a run's mean training loss over its last 10%% of steps (a tenth of its steps rounded "
              "down, at least one: under 20 steps, its last step alone). Each optimizer is "
              "shown at its best learning rate, the one with the lowest median final loss over seeds "
              "(a diverged seed counts as infinitely bad). Optimizers are ranked by that median (equal "
              "medians, as of two optimizers that compute the same, share a rank); one with no finite median at any lr has no rank. That median is optimistic: the seeds that picked "
              "the best lr also score it, and an lr that won partly by its seeds' luck does less well on new "
              "ones (%s). The 'seeds' column gives how many seeds that median "
              "is over, and how many of them diverged: with two it is their mean, and rankings whose min-max "
              "ranges overlap are not a finding. The 95%% interval of the median is distribution-free: two order statistics of the "
              "seeds' values, the closest pair that holds the median with probability 95%% or more whatever "
              "the distribution (from 6 to 8 seeds that is the min-max range, from 9 the second smallest "
              "to the second largest, and so on). With 5 seeds or fewer no pair does: min-max holds the "
              "median with probability 1 - 2^(1-n) only (75%% at 3 seeds, 94%% at 5), so the interval is "
              "shown as '-' there: run more seeds for an interval.",
          n_confirm_runs ? "the confirmation tables below rerun each best lr on fresh seeds"
                         : "run --confirm-seeds N to rerun each best lr on N fresh seeds");
}

/* The lr range, the loss at half and twice the best lr, the seeds' CV and
 * the diverged runs, with the tolerance o sets. */
static void how_lr_range(ob_doc *dc, const ob_report_opts *o)
{
    ob_doc_p(dc, "lr range: the width, in decades (factors of 10), of the learning-rate range around the "
              "best lr whose median final loss is within %g%% of %s and where no seed diverged or ended "
              "without a finite loss, found "
              "by interpolation between grid points as for the loss at 0.5x / 2x lr; a value marked >= reaches "
              "the edge of the tried grid and is a lower bound; 'not measured (grid edge, next lr diverged)': the "
              "best lr is the smallest or largest tried and a seed diverged (or ended without a finite loss) at "
              "the lr next to it, so the range "
              "is that one lr within the grid and unknown beyond it ('not measured (one lr)': one lr was tried; "
              "'not measured (lrs not finished)': one lr has finished runs and the others none yet; "
              "'not measured (grid edge, tolerance 0)': the best lr is at the edge and the tolerance is 0, from "
              "--tol 0 or a best median loss of 0, so the range within the grid is that lr alone%s); "
              "a best lr marked (grid edge) is the smallest or "
              "largest lr tried, so a wider grid may find a better one. Loss at 0.5x / 2x lr: the median final loss "
              "at half and twice the best lr, interpolated between the grid lrs around it with log(loss) linear "
              "in log(lr) (the loss itself where one of them is <= 0; - when outside the grid, or next to a "
              "grid lr where half the seeds or more diverged: between an lr that trains and one that "
              "diverges the loss is not known; inf where half or twice is itself a grid lr where half the "
              "seeds or more diverged). Seed CV: "
              "standard deviation / mean of the final loss over seeds at the best lr. Diverged runs: those "
              "whose loss passed train.diverge_factor times their first loss or stopped being finite; 'N more "
              "ended above their start' counts finished runs short of that whose final loss is above their loss at "
              "the first step (they blew up, or did not train).",
          100 * o->stats.tol,
          o->stats.tol_of_progress
              ? "the progress training made, from the workload's loss before training (its median over the runs' "
                "first recorded steps) down to the best median (report --tol-of progress: a tolerance that adding a "
                "constant to the loss leaves where it is)"
              : "the best (report --tol-of progress makes it a fraction of the progress from the loss before "
                "training instead, which adding a constant to the loss leaves where it is)",
          o->stats.tol_of_progress ? "; 'not measured (no progress)': the best median is not below the loss "
                                     "before training, so there is no progress to take a fraction of"
                                   : "");
}

/* The configurations of sweeps and searches, where there are several. */
static void how_configurations(ob_doc *dc, const ob_stats *s)
{
    if (s->n_tuned > 0)
        ob_doc_p(dc, "Configurations: sweeps or a quasi-random search (run --sweep, --trials) made several "
                  "configurations of some optimizers. Each configuration is ranked, timed and profiled as an "
                  "optimizer of its own, labelled with its swept values; per optimizer, each workload's table of "
                  "the optimizer at its best configuration, the tuning budget (the best final loss among k of its "
                  "configurations, and the best held-out value where the workload was evaluated) and the profile of the tuned optimizers (each at its fastest configuration) "
                  "sum them up. A best of several configurations picked on the same seeds is optimistic, the more "
                  "so the more configurations there were; run --confirm-seeds (with --confirm-configs best, at "
                  "each optimizer's best configuration alone) gives fresh seeds there.");
}

/* The seed-by-seed comparison of neighbours in a ranking. */
static void how_seed_by_seed(ob_doc *dc)
{
    ob_doc_p(dc, "Seed by seed: the runs of one seed share their initialization and data order across "
              "optimizers, so neighbours in a ranking are also compared seed by seed, which pairs away each "
              "seed's own luck: on how many seeds the better-ranked one had the lower final loss, and the median "
              "of its final loss over the other's, minus 1 (a diverged seed's loss is infinite: -100%% where only "
              "the other diverged, +inf where only this one did). A lower loss on every one of n seeds has a two-sided "
              "sign-test p of 2/2^n: 0.5 with 2 seeds, 0.25 with 3, below 0.05 only from 6 seeds.");
}

/* The best lr's share of the resamples of the seeds. */
static void how_best_lr_share(ob_doc *dc)
{
    ob_doc_p(dc, "Best lr under resamples of the seeds: how settled each best lr is. %d times, an optimizer's "
              "seeds are drawn again, as many as it ran, with replacement (a seed's runs at every lr together: "
              "they share initialization and data order), and the lr with the lowest median final loss picked "
              "again; a workload's paragraph under its table names the best lrs that another lr takes in some "
              "of these resamples, and how often (summary.csv's best_lr_share, lr_sweep.csv's best_share). "
              "With few seeds the resamples are few distinct sets of them (3 from 2 seeds, 10 from 3): a best "
              "lr kept in all of them is then no proof that more seeds would pick it too.",
          OB_PROFILE_BOOT);
}

/* Time to the training-loss target, and the ranks by it. */
static void how_time_to_target(ob_doc *dc)
{
    ob_doc_p(dc, "Time to target: a run's trailing loss at a step is its training loss averaged over "
              "the last 10%% of its recorded steps (the window of the final loss). Each seed's time to "
              "target is the first step at which its trailing loss is at or below the workload's target "
              "(by default 1.1 x the best upper-median final loss there: each optimizer's middle seed at its "
              "best lr, the upper of the two middle ones with an even count, so that a majority of its seeds "
              "got there; but at least halfway from the loss before training to that best, so that one step's "
              "noise does not get there); a seed that never gets there has none, and one that diverged counts by its steps "
              "until it stopped, so it got there if it did before. Per lr, the steps to target are the step "
              "by which a strict majority of the seeds got there (the upper median of their times: the "
              "middle one of 3 seeds, the later of 2, the third of 4), as AlgoPerf takes the median of "
              "each trial's own time: one lucky seed does not carry the others. Each optimizer is "
              "shown at the lr that got there in the fewest steps (ties: the smaller lr). Training time is "
              "those steps x the optimizer's mean step time on the workload, the median over its runs at "
              "every lr (a step's work does not depend on the lr, so the runs of one lr that met a busy "
              "machine neither pick the lr nor set the time; where some of its runs met a busy machine, "
              "other processes on 25%% or more of the CPUs, and others did not, the others alone; recording and "
              "evaluation excluded; the mean counts steps that are slow now and then, such as SOAP's refreshes; "
              "on a workload where some run predates the mean step time, a database of schema < 4 or one merged "
              "from its shards and newer ones, every optimizer there is timed by its median step time instead, "
              "never the one by the mean and the other by the median, and the workload's paragraph says so). "
              "'not reached' means censored: at no lr did a majority of the "
              "seeds get there within the run. Only optimizers that reached the target are ranked; the "
              "others are listed after them without a rank. A rank is 1 + the number of optimizers that got "
              "there clearly sooner: those whose whole interval lies below, by steps the distribution-free interval "
              "of the seeds' median first step there (the narrowest of their order statistics that holds it with "
              "probability 95%% or more; with 5 seeds or fewer none does, and it is [min, max], which holds it "
              "with probability 1 - 2^(1-n): 50%%, 75%%, 88%%, 94%% with 2 to 5 seeds), by time its ends x those "
              "of the same interval of the median step time over the runs; so optimizers within the noise of the "
              "seeds and of the timing share a rank (with 3 seeds and equal step times, one is ahead where "
              "each of its seeds got there before every seed of the other: two equal optimizers get different "
              "ranks 1 time in 10, a given one ahead of the other 1 time in 20).");
}

/* Time to the held-out target, where some workload was evaluated during
 * training. */
static void how_heldout(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    int evaluated = 0;
    for (int w = 0; w < d->n_wl; w++) evaluated |= s->ev_every[w] > 0;
    if (evaluated)
        ob_doc_p(dc, "%s %s",
              s->heldout_metric
                  ? "Time to the held-out target (on workloads evaluated during training that have a held-out "
                    "metric): the same, for the held-out metric (accuracy: higher is better; report --heldout-on "
                    "metric), as AlgoPerf scores time to a validation target. A seed gets there at its first "
                    "evaluation with a metric at or above the workload's held-out target (no trailing mean: an "
                    "evaluation averages its own batches), so its steps are counted in evaluations; by default "
                    "the target is 0.9 x the best lower-median final metric over the optimizers and each of their "
                    "lrs, but at least halfway from the metric at step 0 (report --eval-target sets one)."
                  : "Time to the held-out target (on workloads evaluated during training): the same, for the "
                    "held-out loss, as AlgoPerf scores time to a validation target. A seed gets there at its first "
                    "evaluation with a held-out loss at or below the workload's held-out target (no trailing mean: "
                    "an evaluation averages its own batches), so its steps are counted in evaluations; by default "
                    "the target is 1.1 x the best upper-median final held-out loss over the optimizers and each of "
                    "their lrs, but at least halfway from the held-out loss at step 0 (report --eval-target sets "
                    "one; report --heldout-on metric puts it on the held-out accuracy).",
              s->profile_heldout ? "The performance profile below is on it (report --profile-on heldout)."
                                 : "The performance profile stays on the training loss (report --profile-on "
                                   "heldout puts it on this).");
}

/* "How to read this report": the definitions behind every column and
 * ranking below. n_confirm_runs (doc_opening) picks what the first paragraph
 * says of the sweep's optimism: where the fresh seeds are, or how to run them. */
static void doc_how_to_read(ob_doc *dc, const ob_report_opts *o, const ob_dataset *d, const ob_stats *s,
                            int n_confirm_runs)
{
    ob_doc_h(dc, 2, "How to read this report");
    how_final_loss(dc, n_confirm_runs);
    how_lr_range(dc, o);
    how_configurations(dc, s);
    how_seed_by_seed(dc);
    how_best_lr_share(dc);
    how_time_to_target(dc);
    how_heldout(dc, d, s);
}

/* A workload's table of the optimizers at their best lr, ranked by the
 * sweep's median final loss (rank from ob_stats_rank), the unranked last;
 * metric_hdr names the held-out metric's column. */
static void doc_ranked_table(ob_doc *dc, const ob_dataset *d, const ob_stats *s, const int *rank, int w,
                             const char *metric_hdr)
{
    char b1[64], b2[64];
    const char *const hdr[] = {"rank", "optimizer", "best lr", "seeds", "final loss (median)",
                               "95% CI", "min - max", "held-out loss", metric_hdr,
                               "lr range (decades)", "loss at 0.5x / 2x lr (interpolated)",
                               "seed CV", "diverged runs (every lr)", "first diverged lr"};
    ob_doc_table(dc, 14, hdr);
    /* ranked first, then the unranked (rank 0) */
    for (int r = 1; r <= s->n_g + 1; r++)
        for (int k = 0; k < s->n_g; k++) {
            const ob_group *g = &s->g[k];
            if (g->wl != w || rank[k] != (r <= s->n_g ? r : 0)) continue;
            if (rank[k] > 0) ob_doc_cell(dc, "%d", r);
            else ob_doc_cell(dc, "-");
            ob_doc_cell(dc, "%s", d->opt_labels[g->opt]);
            char unfinished[64] = ""; /* a benchmark still running or stopped: what it rests on */
            if (g->n_unfinished)
                snprintf(unfinished, sizeof unfinished, " (%d of %d runs not finished)", g->n_unfinished,
                         g->n_runs);
            if (g->best < 0) ob_doc_cell(dc, "none (%s)", ob_group_no_best(g));
            else if (g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1))
                ob_doc_cell(dc, "%s (grid edge)%s", num(g->best_lr, b1, sizeof b1), unfinished);
            else ob_doc_cell(dc, "%s%s", num(g->best_lr, b1, sizeof b1), unfinished);
            if (g->best >= 0 && g->lrs[g->best].n_diverged)
                ob_doc_cell(dc, "%d (%d diverged)", g->final.n, g->lrs[g->best].n_diverged);
            else ob_doc_cell(dc, "%d", g->final.n);
            ob_doc_cell(dc, "%s", num(g->final.median, b1, sizeof b1));
            if (!(g->final.ci_cover >= 0.95)) ob_doc_cell(dc, "-");
            else ob_doc_cell(dc, "%s - %s", num(g->final.ci_lo, b1, sizeof b1), num(g->final.ci_hi, b2, sizeof b2));
            if (isnan(g->final.min) && isnan(g->final.max)) ob_doc_cell(dc, "-");
            else ob_doc_cell(dc, "%s - %s", num(g->final.min, b1, sizeof b1), num(g->final.max, b2, sizeof b2));
            ob_doc_cell(dc, "%s", num(g->eval_loss.median, b1, sizeof b1));
            ob_doc_cell(dc, "%s", num(g->eval_metric.median, b1, sizeof b1));
            if (g->width_unmeasured == OB_WIDTH_EDGE_DIVERGED)
                ob_doc_cell(dc, "not measured (grid edge, next lr diverged)");
            else if (g->width_unmeasured == OB_WIDTH_ONE_LR)
                ob_doc_cell(dc, "not measured (one lr)");
            else if (g->width_unmeasured == OB_WIDTH_UNFINISHED)
                ob_doc_cell(dc, "not measured (lrs not finished)");
            else if (g->width_unmeasured == OB_WIDTH_EDGE_NO_TOL)
                ob_doc_cell(dc, "not measured (grid edge, tolerance 0)");
            else if (g->width_unmeasured == OB_WIDTH_NO_PROGRESS)
                ob_doc_cell(dc, "not measured (no progress)");
            else
                ob_doc_cell(dc, "%s%s", (g->width_open_lo || g->width_open_hi) && !isnan(g->width_decades) ? ">= " : "",
                         isnan(g->width_decades) ? "-" : (snprintf(b1, sizeof b1, "%.3g", g->width_decades), b1));
            ob_doc_cell(dc, "%s / %s", num(g->loss_half, b1, sizeof b1), num(g->loss_double, b2, sizeof b2));
            ob_doc_cell(dc, "%s", isnan(g->seed_cv) ? "-" : isinf(g->seed_cv) ? "inf"
                               : (snprintf(b1, sizeof b1, "%.1f%%", 100 * g->seed_cv), b1));
            if (g->n_above_start) /* blown up below the divergence threshold */
                ob_doc_cell(dc, "%d / %d (%d more ended above their start)", g->n_diverged, g->n_finished,
                         g->n_above_start);
            else ob_doc_cell(dc, "%d / %d", g->n_diverged, g->n_finished);
            ob_doc_cell(dc, "%s", num(g->first_div_lr, b1, sizeof b1));
            ob_doc_row_end(dc);
        }
    ob_doc_table_end(dc);
}

/* The confirmation table's introduction: what the fresh seeds are and why
 * their ranking is the one to quote (max_seeds: the most seeds a row has). */
static void confirm_intro(ob_doc *dc, int max_seeds)
{
    ob_doc_p(dc, "Confirmation: fresh seeds run at each optimizer's best lr after the sweep, ranked by their "
              "median final loss. The sweep's median at its best lr is optimistic: that lr won partly "
              "because its seeds happened to do well, and the fresh seeds do not share that luck, so where "
              "the two rankings differ, this one is the estimate to quote%s. change = confirmed median / "
              "sweep median - 1: that optimism, and partly how the fresh seeds differ from the sweep's.",
          max_seeds <= 3 ? " (with 3 seeds or fewer, rankings whose min-max ranges overlap are not a "
                           "finding here either)"
                         : "");
}

/* Group g's row of the confirmation table: its fresh seeds beside the
 * sweep's median at its best lr; rank: its place, 0 where it has none. */
static void confirm_row(ob_doc *dc, const ob_dataset *d, const ob_group *g, int rank)
{
    char b1[64], b2[64];
    int at_best = g->confirm_lr == g->best_lr;
    if (rank > 0) ob_doc_cell(dc, "%d", rank);
    else ob_doc_cell(dc, "-");
    ob_doc_cell(dc, "%s", d->opt_labels[g->opt]);
    if (at_best) ob_doc_cell(dc, "%s", num(g->confirm_lr, b1, sizeof b1));
    else ob_doc_cell(dc, "%s (not this sweep's best lr, %s: an earlier benchmark's; not ranked)",
                  num(g->confirm_lr, b1, sizeof b1), num(g->best_lr, b2, sizeof b2));
    ob_doc_cell(dc, "%d", g->conf_final.n);
    ob_doc_cell(dc, "%s", num(g->conf_final.median, b1, sizeof b1));
    if (!(g->conf_final.ci_cover >= 0.95)) ob_doc_cell(dc, "-");
    else ob_doc_cell(dc, "%s - %s", num(g->conf_final.ci_lo, b1, sizeof b1), num(g->conf_final.ci_hi, b2, sizeof b2));
    if (isnan(g->conf_final.min) && isnan(g->conf_final.max)) ob_doc_cell(dc, "-");
    else ob_doc_cell(dc, "%s - %s", num(g->conf_final.min, b1, sizeof b1), num(g->conf_final.max, b2, sizeof b2));
    ob_doc_cell(dc, "%d / %d", g->conf_n_diverged, g->conf_final.n);
    if (at_best) ob_doc_cell(dc, "%s (%d)", num(g->final.median, b1, sizeof b1), g->final.n);
    else ob_doc_cell(dc, "-");
    if (at_best && isfinite(g->final.median) && g->final.median != 0 && isfinite(g->conf_final.median))
        ob_doc_cell(dc, "%+.1f%%", 100 * (g->conf_final.median / g->final.median - 1));
    else ob_doc_cell(dc, "-");
    ob_doc_cell(dc, "%s", num(g->conf_eval_loss.median, b1, sizeof b1));
    ob_doc_cell(dc, "%s", num(g->conf_eval_metric.median, b1, sizeof b1));
    ob_doc_row_end(dc);
}

/* Group g's row of the confirmation table where it has nothing confirmed:
 * why not. */
static void confirm_none_row(ob_doc *dc, const ob_dataset *d, const ob_group *g)
{
    ob_doc_cell(dc, "-");
    ob_doc_cell(dc, "%s", d->opt_labels[g->opt]);
    if (g->best < 0) ob_doc_cell(dc, "none (%s: nothing to confirm)", ob_group_no_best(g));
    else if (g->conf_seed_overlap)
        ob_doc_cell(dc, "not confirmed (its confirmation runs are left out: not fresh, see below)");
    else ob_doc_cell(dc, "not confirmed (no fresh seeds ran)");
    for (int c = 0; c < 9; c++) ob_doc_cell(dc, "-");
    ob_doc_row_end(dc);
}

/* Workload w's confirmation table: the confirmed groups in crank's order
 * (the unranked after them), then those with nothing confirmed. */
static void confirm_table(ob_doc *dc, const ob_dataset *d, const ob_stats *s, const int *crank, int w,
                          const char *metric_hdr)
{
    static const char *const fhdr[] = {"rank", "optimizer", "lr", "seeds", "final loss (median)",
                                       "95% CI", "min - max", "diverged", "sweep median (seeds)", "change",
                                       "held-out loss", "held-out metric"};
    const char *fh[12];
    memcpy(fh, fhdr, sizeof fh);
    fh[11] = metric_hdr;
    ob_doc_table(dc, 12, fh);
    for (int r = 1; r <= s->n_g + 1; r++)
        for (int k = 0; k < s->n_g; k++) {
            const ob_group *g = &s->g[k];
            if (g->wl != w || isnan(g->confirm_lr) || crank[k] != (r <= s->n_g ? r : 0)) continue;
            confirm_row(dc, d, g, crank[k] > 0 ? r : 0);
        }
    /* the optimizers with nothing to confirm */
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || !isnan(g->confirm_lr)) continue;
        confirm_none_row(dc, d, g);
    }
    ob_doc_table_end(dc);
}

/* A workload's confirmation table: the fresh seeds at each optimizer's best
 * lr, ranked by crank (ob_stats_confirm_rank), their seed-by-seed comparison,
 * and the confirmation runs left out for not being fresh. */
static ob_status doc_confirmation(ob_doc *dc, const ob_dataset *d, const ob_stats *s, const int *crank, int w,
                                  const char *metric_hdr, ob_err *e)
{
    int n_conf = 0, n_overlap = 0, max_seeds = 0;
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == w) {
            n_conf += !isnan(s->g[k].confirm_lr);
            n_overlap += s->g[k].conf_seed_overlap;
            if (s->g[k].conf_final.n > max_seeds) max_seeds = s->g[k].conf_final.n;
        }
    if (n_conf) {
        confirm_intro(dc, max_seeds);
        confirm_table(dc, d, s, crank, w, metric_hdr);
        const ob_status st = doc_paired(dc, d, s, crank, w, 1, e);
        if (st != OB_OK) return st;
    }
    if (n_overlap)
        ob_doc_p(dc, "%d confirmation run%s of %s %s left out: %s seed is also a seed of the sweep (a sweep "
                  "that grew runs it now, or another benchmark in this database swept it), so it helped pick "
                  "the lr and is not fresh; --benchmark latest reports one benchmark alone.",
              n_overlap, n_overlap == 1 ? "" : "s", d->wl_labels[w], n_overlap == 1 ? "is" : "are",
              n_overlap == 1 ? "its" : "their");
    return OB_OK;
}

/* A workload's time to its training-loss target: the target and what ranks
 * by it, then the table; or, where the loss met the target before training,
 * why there is no ranking. */
static void doc_time_to_target(ob_doc *dc, const ob_dataset *d, const ob_stats *s, int w)
{
    char b1[64];
    if (s->target_at_start[w]) {
        char bs[64];
        ob_doc_p(dc, "Time to target: not ranked. The target loss %s (%s) is at or above the loss at the first "
                  "recorded step, before any update (median %s over the runs), so every optimizer meets it "
                  "at once and a ranking would only order one step's timing noise. Train longer, or set a "
                  "target below the starting loss with `--target %s%s=LOSS%s`.",
              num(s->target[w], b1, sizeof b1),
              target_rule(s, w), num(s->start_loss[w], bs, sizeof bs),
              strchr(d->wl_labels[w], ' ') ? "'" : "", d->wl_labels[w], strchr(d->wl_labels[w], ' ') ? "'" : "");
        return;
    }
    ob_doc_p(dc, "Time to target: target loss %s (%s); ranked by %s.", num(s->target[w], b1, sizeof b1),
          target_rule(s, w),
          s->profile_by_steps ? "steps (--profile-by steps)"
          : s->tt_by_median[w] ? "estimated training time, steps x median step time (--profile-by steps "
                                 "ranks by steps, which a busy machine cannot distort)"
                               : "estimated training time, steps x mean step time (--profile-by steps "
                                 "ranks by steps, which a busy machine cannot distort)");
    if (s->tt_by_median[w])
        ob_doc_p(dc, "Note: time to target from median step times: some runs predate the mean (schema < 4), so "
                  "every optimizer on %s is timed by the median over its runs, at every lr, of their median step time, "
                  "which leaves out steps that are slow now and then (such as SOAP's refreshes).",
              d->wl_labels[w]);
    doc_tt_table(dc, d, s, w, 0);
}

/* How settled workload w's best lrs are (ob_group.best_lr_share): the
 * groups whose best lr another lr takes in some resamples of the seeds,
 * with the lrs that take it; nothing where no group has two lrs. */
static void doc_best_lr_shares(ob_doc *dc, const ob_dataset *d, const ob_stats *s, int w)
{
    char moved[1200] = "", b1[32], b2[32], one[600];
    int n_swept = 0, n_moved = 0, max_seeds = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || g->best < 0 || g->n_lr < 2 || isnan(g->best_lr_share)) continue;
        n_swept++;
        if (g->final.n > max_seeds) max_seeds = g->final.n;
        if (g->best_lr_share >= 1) continue;
        /* the best lr's share, then the two lrs that take it most often */
        int alt[2] = {-1, -1};
        for (int i = 0; i < g->n_lr; i++) {
            const double sh = g->lrs[i].best_share;
            if (i == g->best || !(sh > 0)) continue;
            if (alt[0] < 0 || sh > g->lrs[alt[0]].best_share) alt[1] = alt[0], alt[0] = i;
            else if (alt[1] < 0 || sh > g->lrs[alt[1]].best_share) alt[1] = i;
        }
        int l = snprintf(one, sizeof one, "%s %s in %.0f%% (", d->opt_labels[g->opt], num(g->best_lr, b1, sizeof b1),
                         100 * g->best_lr_share);
        for (int a = 0; a < 2 && alt[a] >= 0 && l > 0 && (size_t)l < sizeof one; a++)
            l += snprintf(one + l, sizeof one - (size_t)l, "%s%s in %.0f%%", a ? ", " : "",
                          num(g->lrs[alt[a]].lr, b2, sizeof b2), 100 * g->lrs[alt[a]].best_share);
        /* the groups while they fit whole, then "..." once */
        const size_t len = strlen(moved);
        if (n_moved++ < 8 && l > 0 && (size_t)l + 1 < sizeof one && len + (size_t)l + 12 < sizeof moved)
            snprintf(moved + len, sizeof moved - len, "%s%s)", len ? "; " : "", one);
        else if (!strstr(moved, "...") && len + 6 < sizeof moved)
            snprintf(moved + len, sizeof moved - len, "%s...", len ? "; " : "");
    }
    if (n_swept == 0) return;
    char sets[96] = "";
    if (max_seeds == 1)
        snprintf(sets, sizeof sets, " (one seed: every resample is that seed)");
    else if (max_seeds <= 5)
        snprintf(sets, sizeof sets, " (%d seeds make %d distinct resamples%s)", max_seeds, ob_stat_resample_sets(max_seeds),
                 max_seeds <= 3 ? ": the shares are coarse" : "");
    if (n_moved == n_swept)
        ob_doc_p(dc, "Best lr under resamples of the seeds: %s, of %d resamples%s.", moved, OB_PROFILE_BOOT, sets);
    else if (n_moved)
        ob_doc_p(dc, "Best lr under resamples of the seeds: %s; every other best lr keeps the lowest median in all "
                  "%d%s.", moved, OB_PROFILE_BOOT, sets);
    else
        ob_doc_p(dc, "Best lr under resamples of the seeds: every best lr keeps the lowest median in all %d%s.",
              OB_PROFILE_BOOT, sets);
}

/* The section of workload w: its ranked table, the guard's interventions,
 * the seed-by-seed comparison, its configurations, the confirmation, time to
 * the training and held-out targets, and its figures. */
static ob_status doc_workload(ob_doc *dc, const ob_dataset *d, const ob_stats *s, const int *rank, const int *crank,
                              const ob_figures *figs, const int *rendered, int w, ob_err *e)
{
    ob_doc_h(dc, 2, "Workload %s", d->wl_labels[w]);
    /* the metric by its name where the workload is known (accuracy) */
    const ob_workload_def *wdef = ob_workload_find(d->wl_names[w]);
    char metric_hdr[96];
    snprintf(metric_hdr, sizeof metric_hdr, "held-out %s",
             wdef && wdef->metric_name ? wdef->metric_name : "metric");
    doc_ranked_table(dc, d, s, rank, w, metric_hdr);
    doc_best_lr_shares(dc, d, s, w);
    doc_guard(dc, d, s, w);
    ob_status st = doc_paired(dc, d, s, rank, w, 0, e);
    if (st != OB_OK) return st;
    doc_configs(dc, d, s, w);
    if ((st = doc_confirmation(dc, d, s, crank, w, metric_hdr, e)) != OB_OK) return st;
    doc_time_to_target(dc, d, s, w);
    doc_heldout(dc, d, s, w);
    for (int f = 0; f < figs->n; f++)
        if (figs->f[f].wl == w) ob_doc_figure(dc, &figs->f[f], rendered[f]);
    for (int f = 0; f < figs->n_skipped; f++)
        if (figs->skipped[f].wl == w) ob_doc_skipped(dc, &figs->skipped[f]);
    return OB_OK;
}

/* What the cost table's marks counted: groups whose runs' step times
 * differ, whose timed runs all met a busy machine, and the runs that met
 * one left out of groups timed by their runs on a quiet machine. */
typedef struct cost_marks {
    int n_unsteady, n_busy, n_left, n_left_groups;
} cost_marks;

/* The cost section's heading and what its table holds. */
static void cost_intro(ob_doc *dc)
{
    ob_doc_h(dc, 2, "Cost: step time and memory");
    ob_doc_p(dc, "Median, 90th percentile and mean of the time per training step (after a warm-up, at the "
              "run's start and again after each resume from a checkpoint; "
              "recording excluded; each the median over the group's runs, those on a quiet machine where it "
              "has some: a mean above the median is steps "
              "that are much slower now and then, such as a refresh every k steps), the optimizer's part of a "
              "step ('optimizer ms', its median: from the gradients to the updated parameters), the overhead relative to sgd on the same workload (with the same training "
              "settings when the benchmark has them), peak memory (the "
              "high-water mark of optbench's own allocations: parameters, gradients, activations, optimizer "
              "state, workspaces), optimizer state and, on a GPU, the device memory in use as the driver "
              "reports it (the whole device: also the CUDA context and the libraries' workspaces). Rows are ordered by step time within each workload. 'runs "
              "differ' is how much the slowest run's median step time exceeds the fastest's within the "
              "group: the runs do the same work, so more than %.0f%% means the machine's speed changed "
              "during the benchmark (other load, frequency scaling), and step times, overheads and time-to-target rankings there are not a "
              "property of the optimizer (re-time on an idle machine, or rank time to target by steps "
              "with --profile-by steps).", 100 * OB_STEP_SPREAD_UNSTEADY);
}

/* Group g's row of the cost table (any_drv: with the driver's device
 * memory), its marks counted into m. */
static void cost_row(ob_doc *dc, const ob_dataset *d, const ob_group *g, int any_drv, cost_marks *m)
{
    char b1[64];
    ob_doc_cell(dc, "%s", d->wl_labels[g->wl]);
    ob_doc_cell(dc, "%s", d->opt_labels[g->opt]);
    ob_doc_cell(dc, "%s", num(g->step_ms_median, b1, sizeof b1));
    ob_doc_cell(dc, "%s", num(g->step_ms_p90, b1, sizeof b1));
    ob_doc_cell(dc, "%s", num(g->step_ms_mean, b1, sizeof b1));
    ob_doc_cell(dc, "%s", num(g->opt_ms_median, b1, sizeof b1));
    const int busy = ob_group_busy(g);
    m->n_busy += busy;
    if (!busy && g->n_busy) {
        m->n_left += g->n_busy;
        m->n_left_groups++;
    }
    if (isnan(g->step_ms_spread)) ob_doc_cell(dc, "-%s", busy ? " (busy)" : "");
    else {
        int unsteady = g->step_ms_spread > OB_STEP_SPREAD_UNSTEADY;
        m->n_unsteady += unsteady;
        ob_doc_cell(dc, "%+.0f%%%s", 100 * g->step_ms_spread,
                 unsteady && busy ? " (unsteady, busy)" : unsteady ? " (unsteady)" : busy ? " (busy)" : "");
    }
    ob_doc_cell(dc, "%s", isnan(g->overhead_vs_sgd) ? "-"
                       : (snprintf(b1, sizeof b1, "%+.0f%%", 100 * g->overhead_vs_sgd), b1));
    if (isfinite(g->items_per_sec) && g->items_per_sec >= 1e4 && g->items_per_sec < 1e12) {
        /* 4 significant digits, written out: 225900, not 2.259e+05 */
        double mag = pow(10, floor(log10(g->items_per_sec)) - 3);
        ob_doc_cell(dc, "%.0f", round(g->items_per_sec / mag) * mag);
    } else {
        ob_doc_cell(dc, "%s", num(g->items_per_sec, b1, sizeof b1));
    }
    ob_doc_cell(dc, "%s", bytes_text(g->peak_mem_bytes, b1, sizeof b1));
    ob_doc_cell(dc, "%s", bytes_text(g->state_bytes, b1, sizeof b1));
    if (any_drv) ob_doc_cell(dc, "%s", bytes_text(g->device_mem_bytes, b1, sizeof b1));
    ob_doc_row_end(dc);
}

/* The notes under the cost table on what its marks counted. */
static void cost_notes(ob_doc *dc, const cost_marks *m)
{
    if (m->n_unsteady)
        ob_doc_p(dc, "Note: in %d group%s the runs' step times differ by more than %.0f%% (marked "
                  "'unsteady'); their step times and time-to-target rankings reflect the machine, not "
                  "only the optimizer.",
              m->n_unsteady, m->n_unsteady == 1 ? "" : "s", 100 * OB_STEP_SPREAD_UNSTEADY);
    if (m->n_left)
        ob_doc_p(dc, "Note: %d run%s that met a busy machine (other processes kept %.0f%% or more of the CPUs busy "
                  "while %s; runs.csv's other_cpu) %s left out of the times of %d group%s, which are "
                  "from %s runs on a quiet machine.",
              m->n_left, m->n_left == 1 ? "" : "s", 100 * OB_BUSY_SHARE, m->n_left == 1 ? "it ran" : "they ran",
              m->n_left == 1 ? "is" : "are", m->n_left_groups, m->n_left_groups == 1 ? "" : "s",
              m->n_left_groups == 1 ? "its" : "their");
    if (m->n_busy)
        ob_doc_p(dc, "Note: in %d group%s every timed run met a busy machine (marked 'busy': other processes kept "
                  "%.0f%% or more of the CPUs busy while they ran; runs.csv's other_cpu); their step times and "
                  "time-to-target rankings reflect that work, not only the optimizer.",
              m->n_busy, m->n_busy == 1 ? "" : "s", 100 * OB_BUSY_SHARE);
}

/* "Cost: step time and memory": per workload, each optimizer's step times,
 * overhead and memory, fastest first (untimed last), notes on what the
 * marks counted, and the figures drawn across workloads (ob_doc_profile shows
 * the profile's). */
static void doc_cost(ob_doc *dc, const ob_dataset *d, const ob_stats *s, const ob_figures *figs, const int *rendered)
{
    cost_intro(dc);
    static const char *const chdr[] = {"workload", "optimizer", "step ms (median)", "step ms (p90)",
                                       "step ms (mean)", "optimizer ms", "runs differ", "vs sgd", "items/s",
                                       "peak memory", "optimizer state", "device memory (driver)"};
    int any_drv = 0;
    for (int k = 0; k < s->n_g; k++) any_drv |= s->g[k].device_mem_bytes > 0;
    ob_doc_table(dc, any_drv ? 12 : 11, chdr);
    cost_marks m = {0};
    for (int w = 0; w < d->n_wl; w++) {
        int order[512], n_here = 0;
        for (int k = 0; k < s->n_g && n_here < 512; k++)
            if (s->g[k].wl == w) order[n_here++] = k;
        for (int i = 1; i < n_here; i++) {
            int v = order[i], j = i - 1;
            double tv = isnan(s->g[v].step_ms_median) ? INFINITY : s->g[v].step_ms_median;
            while (j >= 0 && (isnan(s->g[order[j]].step_ms_median) ? INFINITY : s->g[order[j]].step_ms_median) > tv) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = v;
        }
        for (int i = 0; i < n_here; i++) cost_row(dc, d, &s->g[order[i]], any_drv, &m);
    }
    ob_doc_table_end(dc);
    cost_notes(dc, &m);
    for (int f = 0; f < figs->n; f++)
        if (figs->f[f].wl < 0 && !ob_doc_profile_stem(figs->f[f].stem)) ob_doc_figure(dc, &figs->f[f], rendered[f]);
    for (int f = 0; f < figs->n_skipped; f++)
        if (figs->skipped[f].wl < 0 && !ob_doc_profile_stem(figs->skipped[f].stem)) ob_doc_skipped(dc, &figs->skipped[f]);
}

/* "Runs that did not finish", with each one's status and error; none when
 * every run finished. */
static void doc_unfinished(ob_doc *dc, const ob_dataset *d)
{
    char b1[64];
    int n_bad = 0;
    for (int i = 0; i < d->n; i++)
        if (!d->runs[i].finished) n_bad++;
    if (n_bad) {
        ob_doc_h(dc, 2, "Runs that did not finish");
        static const char *const fhdr[] = {"run", "workload", "optimizer", "lr", "seed", "status", "error"};
        ob_doc_table(dc, 7, fhdr);
        for (int i = 0; i < d->n; i++) {
            const ob_rrun *r = &d->runs[i];
            if (r->finished) continue;
            ob_doc_cell(dc, "%lld", (long long)r->id);
            ob_doc_cell(dc, "%s", d->wl_labels[r->wl]);
            ob_doc_cell(dc, "%s", d->opt_labels[r->opt]);
            ob_doc_cell(dc, "%s", num(r->lr, b1, sizeof b1));
            ob_doc_cell(dc, "%lld", (long long)r->seed);
            ob_doc_cell(dc, "%s", r->status);
            ob_doc_cell(dc, "%s", r->error ? r->error : "");
            ob_doc_row_end(dc);
        }
        ob_doc_table_end(dc);
    }
}

/* "Files in this folder": the CSV files, figure scripts and LaTeX tables,
 * with the PDFs' size as report --pdf-width sets it. */
static void doc_files(ob_doc *dc, const ob_report_opts *o)
{
    ob_doc_h(dc, 2, "Files in this folder");
    const double pdf_w = o->pdf_width > 0 ? o->pdf_width : OB_PDF_TEXT_WIDTH;
    const int pdf_narrow = pdf_w < 4.5;
    ob_doc_p(dc, "Every table above is a CSV file (text quoted; inf = diverged or never reached: a diverged "
              "run's final and held-out loss are inf and its held-out metric -inf, as the statistics count "
              "them, and a time or number of steps to a target never reached is inf; empty = no value: not "
              "run, not measured, or not defined, as the columns below say). Every figure has a gnuplot script NAME.gp that reads these CSVs; edit "
              "it and run `gnuplot NAME.gp` here to redraw NAME.png, NAME.svg and NAME.pdf (vector, "
              "%g x %.3g inches with %d-point text, for a paper; where gnuplot has pdfcairo). style.gp "
              "holds the shared look (size, fonts, one colour, marker shape and dash type per optimizer; "
              "PDF_WIDTH, the PDFs' width in inches: optbench report --pdf-width). "
              "summary.tex holds the ranked tables for a paper (LaTeX, booktabs: \\input{summary.tex}).",
          pdf_w, pdf_w * (pdf_narrow ? 0.8 : 0.62), pdf_narrow ? 6 : 8);
    static const char *const fh[] = {"file", "contents", "columns"};
    ob_doc_table(dc, 3, fh);
    int nd;
    const ob_file_doc *docs = ob_export_docs(&nd);
    for (int i = 0; i < nd; i++) {
        ob_doc_cell(dc, "%s", docs[i].name);
        ob_doc_cell(dc, "%s", docs[i].what);
        ob_doc_cell(dc, "%s", docs[i].columns);
        ob_doc_row_end(dc);
    }
    ob_doc_table_end(dc);
}

/* summary.md and index.html, section by section. The sweep's and the
 * confirmation's ranks are computed once, for every workload's tables. */
static ob_status write_docs(sqlite3 *db, const ob_report_opts *o, const ob_dataset *d, const ob_stats *s,
                            const ob_figures *figs, const int *rendered, int gnuplot_found, int n_mixed,
                            const char *mixed_note, ob_doc *dc, ob_err *e)
{
    int *rank = malloc(((size_t)s->n_g + 1) * sizeof *rank);
    int *crank = malloc(((size_t)s->n_g + 1) * sizeof *crank);
    if (!rank || !crank) {
        free(rank);
        free(crank);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    ob_stats_rank(s, rank);
    ob_stats_confirm_rank(s, crank);

    const int n_confirm_runs = doc_opening(db, dc, o, d, s, gnuplot_found, n_mixed, mixed_note);
    doc_how_to_read(dc, o, d, s, n_confirm_runs);
    /* a section that fails ends the documents there: ob_report_write then
     * publishes nothing */
    ob_status st = doc_setup(db, d, dc, e);
    for (int w = 0; w < d->n_wl && st == OB_OK; w++) st = doc_workload(dc, d, s, rank, crank, figs, rendered, w, e);
    if (st == OB_OK) {
        doc_cost(dc, d, s, figs, rendered);
        ob_doc_profile(db, dc, d, s, figs, rendered);
        doc_unfinished(dc, d);
        doc_files(dc, o);
    }
    free(rank);
    free(crank);
    return st;
}

/* After gnuplot ran on figure f with exit status rc: whether it was drawn
 * (1, a PNG with content) or failed (-1; its empty images are removed: the
 * page says what failed), and whether it has a PDF. */
static int figure_outcome(const char *stage, ob_figure *f, int rc)
{
    char png[1400], pdf[1400], svg[1400];
    snprintf(png, sizeof png, "%s/%s.png", stage, f->stem);
    snprintf(pdf, sizeof pdf, "%s/%s.pdf", stage, f->stem);
    snprintf(svg, sizeof svg, "%s/%s.svg", stage, f->stem);
    struct stat sb;
    int rendered = rc == 0 && stat(png, &sb) == 0 && sb.st_size > 0 ? 1 : -1;
    f->has_pdf = rendered > 0 && stat(pdf, &sb) == 0 && sb.st_size > 0;
    if (rendered < 0) {
        if (stat(png, &sb) == 0 && sb.st_size == 0) remove(png);
        if (stat(svg, &sb) == 0 && sb.st_size == 0) remove(svg);
        if (stat(pdf, &sb) == 0 && sb.st_size == 0) remove(pdf);
    }
    return rendered;
}

/* Run every figure's script in the stage, jobs gnuplot processes at once
 * (gnuplot is single-threaded and most of a report's time), and set
 * rendered[] (1 drawn, -1 failed) and the counts in res. */
static ob_status render(const char *gp, const char *stage, ob_figures *figs, int jobs, int *rendered,
                        ob_report_result *res, ob_err *e)
{
    char **scripts = calloc((size_t)figs->n + 1, sizeof *scripts);
    int *rc = calloc((size_t)figs->n + 1, sizeof *rc);
    ob_status st = scripts && rc ? OB_OK : ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int i = 0; st == OB_OK && i < figs->n; i++) {
        size_t l = strlen(figs->f[i].stem) + 4;
        if (!(scripts[i] = malloc(l))) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        else snprintf(scripts[i], l, "%s.gp", figs->f[i].stem);
    }
    if (st == OB_OK) st = ob_gnuplot_run_all(gp, stage, scripts, figs->n, jobs, rc, &res->stop_signal, e);
    for (int i = 0; st == OB_OK && i < figs->n; i++) {
        rendered[i] = figure_outcome(stage, &figs->f[i], rc[i]);
        if (rendered[i] > 0) res->n_rendered++;
        else res->n_render_failed++;
    }
    for (int i = 0; scripts && i < figs->n; i++) free(scripts[i]);
    free(scripts);
    free(rc);
    return st;
}

/* What the steps of a report share: the options and the result, the output
 * folder and the hidden folder (stage) the report is written into, the
 * database and what is read from it, the groups of pooled provenance and
 * the figures with whether each was drawn. */
typedef struct report_job {
    const ob_report_opts *o;
    ob_report_result *res;
    char dir[1024], stage[1100];
    ob_store *store;
    sqlite3 *db;
    ob_dataset d;
    ob_stats s;
    int n_mixed; /* mixed_provenance: the groups that pool runs, and the note on the first */
    char mixed_note[1024];
    ob_figures figs;
    int *rendered;
} report_job;

/* An error where the database, or its benchmark o->benchmark_id, holds no runs. */
static ob_status report_check_runs(const report_job *rj, ob_err *e)
{
    const ob_report_opts *o = rj->o;
    if (rj->d.n > 0) return OB_OK;
    if (o->benchmark_id > 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "database '%s' has no benchmark %lld with runs (optbench history --db %s lists its "
                       "benchmarks)",
                       o->db_path, (long long)o->benchmark_id, o->db_path);
    return ob_fail(e, OB_ERR_INPUT, "database '%s' holds no runs", o->db_path);
}

/* The output folder, and the stage inside it that the report is written
 * into (rj->stage; "" where there is none). */
static ob_status report_stage(report_job *rj, ob_err *e)
{
    ob_status st;
    /* the folder first: no ranking printed above an error that writes nothing */
    if ((st = ob_mkdirs(rj->dir, e)) != OB_OK) return st;
    return ob_report_stage_open(rj->dir, rj->stage, sizeof rj->stage, e);
}

/* The groups whose runs pool several revisions, machines or devices
 * (mixed_provenance), and a warning in the log where there are some. */
static ob_status report_provenance(report_job *rj, ob_err *e)
{
    FILE *log = rj->o->log;
    const int n_mixed = rj->n_mixed =
        mixed_provenance(rj->db, &rj->d, &rj->s, rj->mixed_note, sizeof rj->mixed_note);
    if (n_mixed < 0) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    if (log && n_mixed)
        fprintf(log, "optbench: warning: %d workload x optimizer group%s pool%s runs of more than one code revision, "
                     "machine or device (%s%s); --benchmark ID reports one benchmark alone\n",
                n_mixed, n_mixed == 1 ? "" : "s", n_mixed == 1 ? "s" : "", n_mixed > 1 ? "the first: " : "",
                rj->mixed_note);
    return OB_OK;
}

/* A note in the log of the figures not drawn for want of data, where there
 * are some. */
static void log_skipped(FILE *log, const ob_figures *figs)
{
    if (log && figs->n_skipped) {
        char names[600] = "";
        size_t l = 0;
        for (int i = 0; i < figs->n_skipped && l + 80 < sizeof names; i++)
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", figs->skipped[i].stem);
        fprintf(log, "optbench: note: %d figure%s not drawn, without data to show (%s); index.html says why\n",
                figs->n_skipped, figs->n_skipped == 1 ? "" : "s", names);
    }
}

/* The CSV files, summary.tex and the figures' scripts into the stage, with
 * their counts in the result. */
static ob_status report_files(report_job *rj, ob_err *e)
{
    ob_report_result *res = rj->res;
    ob_status st;
    res->n_runs = rj->d.n;
    res->n_groups = rj->s.n_g;
    if ((st = ob_export_tables(rj->db, &rj->d, &rj->s, rj->stage, e)) != OB_OK) return st;
    if ((st = ob_latex_write(&rj->d, &rj->s, rj->stage, e)) != OB_OK) return st;
    if ((st = ob_figures_write(&rj->d, &rj->s, rj->stage, rj->o->pdf_width, &rj->figs, e)) != OB_OK) return st;
    res->n_figures = rj->figs.n;
    res->n_skipped = rj->figs.n_skipped;
    rj->rendered = calloc((size_t)rj->figs.n + 1, sizeof *rj->rendered);
    if (!rj->rendered) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    log_skipped(rj->o->log, &rj->figs);
    return OB_OK;
}

/* The figures drawn by gnuplot, unless --no-render or it is not found
 * (the log says so, or on how many figures it failed). */
static ob_status report_render(report_job *rj, ob_err *e)
{
    const ob_report_opts *o = rj->o;
    ob_report_result *res = rj->res;
    FILE *log = o->log;
    char gp[1024];
    res->gnuplot_found = ob_gnuplot_find(gp, sizeof gp);
    if (o->no_render) {
        if (log) fprintf(log, "optbench: not rendering (--no-render); run `gnuplot NAME.gp` in %s\n", rj->dir);
    } else if (!res->gnuplot_found) {
        if (log)
            fprintf(log, "optbench: gnuplot not found on PATH: wrote the scripts and CSV files but no "
                         "images; install gnuplot and run `gnuplot NAME.gp` in %s\n", rj->dir);
    } else {
        char logpath[1100];
        snprintf(logpath, sizeof logpath, "%s/gnuplot.log", rj->dir);
        const ob_status st = render(gp, rj->stage, &rj->figs, o->jobs > 0 ? o->jobs : ob_gnuplot_jobs_default(),
                                    rj->rendered, res, e);
        if (st != OB_OK) return st;
        if (log && res->n_render_failed)
            fprintf(log, "optbench: gnuplot failed on %d of %d figures; see %s\n", res->n_render_failed,
                    rj->figs.n, logpath);
    }
    return OB_OK;
}

/* summary.md and index.html into the stage. */
static ob_status report_documents(report_job *rj, ob_err *e)
{
    const ob_report_opts *o = rj->o;
    char p1[sizeof rj->stage + 16], p2[sizeof rj->stage + 16];
    snprintf(p1, sizeof p1, "%s/summary.md", rj->stage);
    snprintf(p2, sizeof p2, "%s/index.html", rj->stage);
    ob_doc dc = {fopen(p1, "w"), fopen(p2, "w"), 0, 0};
    if (!dc.md || !dc.html) {
        const ob_status st = ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", !dc.md ? p1 : p2, strerror(errno));
        if (dc.md) fclose(dc.md);
        if (dc.html) fclose(dc.html);
        return st;
    }
    fprintf(dc.html, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>optbench report</title>\n<style>%s</style></head><body>\n", css);
    ob_status st = write_docs(rj->db, o, &rj->d, &rj->s, &rj->figs, rj->rendered,
                              rj->res->gnuplot_found && !o->no_render, rj->n_mixed, rj->mixed_note, &dc, e);
    fputs("</body></html>\n", dc.html);
    int bad = ferror(dc.md) || ferror(dc.html);
    if (fclose(dc.md) != 0) bad = 1;
    if (fclose(dc.html) != 0) bad = 1;
    if (bad && st == OB_OK) st = ob_fail(e, OB_ERR_IO, "writing the report documents in '%s' failed", rj->dir);
    return st;
}

/* What is left of a report, published or not: its stage removed, the
 * memory freed and the database closed. */
static void report_job_free(report_job *rj)
{
    if (rj->stage[0]) ob_report_stage_remove(rj->stage);
    free(rj->rendered);
    ob_figures_free(&rj->figs);
    ob_stats_free(&rj->s);
    ob_dataset_free(&rj->d);
    ob_store_close(rj->store);
}

ob_status ob_report_write(const ob_report_opts *o, ob_report_result *res, ob_err *e)
{
    memset(res, 0, sizeof *res);
    if (strlen(o->out_dir) > OB_OUT_DIR_MAX)
        return ob_fail(e, OB_ERR_INPUT, "the output folder name is %zu bytes long; at most %d (give a shorter --out)",
                       strlen(o->out_dir), OB_OUT_DIR_MAX);
    report_job rj;
    memset(&rj, 0, sizeof rj);
    rj.o = o;
    rj.res = res;
    ob_path_trim(o->out_dir, rj.dir, sizeof rj.dir);
    OB_TRY(ob_store_open(o->db_path, OB_STORE_READONLY, &rj.store, e));
    rj.db = ob_store_db(rj.store);
    ob_status st = ob_dataset_load(rj.db, o->benchmark_id, &rj.d, e);
    if (st != OB_OK) {
        ob_store_close(rj.store);
        return st == OB_ERR_NOMEM ? st : ob_err_prefix(e, "database '%s': ", o->db_path);
    }
    st = report_check_runs(&rj, e);
    /* the statistics, reading each run's curve once, and the curves the
     * figures and curves_best.csv draw (those of the best lrs): not every
     * curve at once, which for a large database is more memory than it has */
    if (st == OB_OK) st = ob_stats_compute_db(rj.db, o->db_path, &rj.d, &o->stats, 1, &rj.s, e);
    if (st == OB_OK) st = report_stage(&rj, e);
    if (st == OB_OK) st = report_provenance(&rj, e);
    if (st == OB_OK) st = report_files(&rj, e);
    if (st == OB_OK) st = report_render(&rj, e);
    if (st == OB_OK) st = report_documents(&rj, e);
    if (st == OB_OK) st = ob_report_publish(rj.dir, rj.stage, e);
    /* the ranking once the report is in place: none above an error that
     * wrote nothing */
    if (st == OB_OK && o->ranking) st = print_ranking(o->ranking, &rj.d, &rj.s, e);
    report_job_free(&rj);
    return st;
}
