/* harness/merge.c - combine results databases into a new one (see merge.h).
 *
 * Rows are copied column by column by name (the columns the input and the
 * output share), so inputs of an older schema version merge too. The whole
 * output is written in one transaction.
 */
#include "harness/merge.h"
#include "harness/config.h"
#include "harness/cellspec.h"
#include "harness/matrix.h"
#include "harness/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/store.h"

/* ---- a growing string, for the provenance JSON ---------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t len)
{
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + len + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...) OB_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k < sizeof tmp) {
        sb_put(b, tmp, (size_t)k);
        return;
    }
    char *big = malloc((size_t)k + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)k);
    free(big);
}

/* A JSON string (or null). */
static void sb_json(sbuf *b, const char *s)
{
    if (!s) {
        sb_put(b, "null", 4);
        return;
    }
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            sb_put(b, esc, 2);
        } else if (*p < 0x20) {
            sb_printf(b, "\\u%04x", *p);
        } else {
            sb_put(b, (const char *)p, 1);
        }
    }
    sb_put(b, "\"", 1);
}

/* ---- inputs --------------------------------------------------------------- */

typedef struct src_bench {
    int64_t id;
    char *name, *config, *git_rev, *host, *backend, *device, *created_at, *finished_at, *shard,
        *provenance;
    int runs, taken;
} src_bench;

typedef struct source {
    const char *path;
    ob_store *store;
    sqlite3 *db;
    src_bench *b;
    int nb;
} source;

/* A candidate run: where it is, its cell key and what decides between duplicates. */
typedef struct cand {
    int src;
    int64_t run_id, bench_id, cell;
    char *key;         /* cell identity */
    char *label;       /* for messages: workload optimizer lr seed */
    char status[16];
    int rank;
    int order;         /* position in the inputs, for ties */
    int64_t steps_done, diverged_step;
    double final_loss;
    int chosen;
} cand;

/* Column i's text, copied (NULL for NULL; *oom set where the copy failed,
 * which must not read as a column without a value). */
static char *dup_col(sqlite3_stmt *q, int i, int *oom)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    char *c = t ? strdup((const char *)t) : NULL;
    if (t && !c) *oom = 1;
    return c;
}

static int status_rank(const char *s)
{
    if (!strcmp(s, "done") || !strcmp(s, "diverged")) return 3;
    if (!strcmp(s, "failed")) return 2;
    if (!strcmp(s, "interrupted") || !strcmp(s, "running")) return 1;
    return 0;
}

static ob_status sql_fail(sqlite3 *db, const char *path, const char *what, ob_err *e)
{
    int rc = sqlite3_extended_errcode(db) & 0xff;
    const char *m = sqlite3_errmsg(db);
    return ob_fail(e, OB_ERR_DB, "database '%s': %s: %s%s", path, what, m,
                   rc == SQLITE_FULL || rc == SQLITE_IOERR
                       ? " (is the disk full, or failing? nothing was merged: the incomplete output was removed "
                         "and the inputs are unchanged; make room and merge again)"
                       : "");
}

/* Folds db's write-ahead log into its file and empties it (a checkpoint
 * that must complete). */
static ob_status fold_log(sqlite3 *db, const char *path, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    ob_status s = OB_OK;
    if (sqlite3_prepare_v2(db, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &q, NULL) != SQLITE_OK)
        return sql_fail(db, path, "writing the merged database", e);
    const int rc = sqlite3_step(q);
    if (rc != SQLITE_ROW) s = sql_fail(db, path, "writing the merged database", e);
    else if (sqlite3_column_int(q, 0) != 0)
        s = ob_fail(e, OB_ERR_IO, "database '%s': writing the merged database: its log could not be folded in "
                    "(another process holds it?); nothing was merged", path);
    sqlite3_finalize(q);
    return s;
}

/* sql_fail for an input database: one without a table or column of the
 * schema (dropped by hand, or another program's) is bad input. */
static ob_status src_fail(sqlite3 *db, const char *path, const char *what, ob_err *e)
{
    const char *m = sqlite3_errmsg(db);
    if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_ERROR &&
        (!strncmp(m, "no such table", 13) || !strncmp(m, "no such column", 14)))
        return ob_fail(e, OB_ERR_INPUT, "database '%s': %s: %s (the database lacks part of optbench's schema: a "
                       "table or column was dropped, or another program made it; use an intact copy; nothing was "
                       "merged)", path, what, m);
    return sql_fail(db, path, what, e);
}

/* Does table have column col in db? */
static int has_column(sqlite3 *db, const char *table, const char *col)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) return 0;
    sqlite3_bind_text(q, 1, col, -1, SQLITE_STATIC);
    int yes = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return yes;
}

/* The matrix fingerprint a benchmark records ("" when none): a shard's
 * own, or a merged benchmark's (that of its shards, which agree). */
static void shard_matrix(const src_bench *b, char out[32])
{
    out[0] = '\0';
    const char *m = b->provenance ? strstr(b->provenance, "\"matrix\":\"") : NULL;
    if (m) sscanf(m + 10, "%31[0-9a-f]", out);
}

/* Notes on the shards given (all inputs plain shards of one matrix): a
 * shard found in two files (a copy: each cell is kept once, so nothing is
 * counted twice, but the copy may stand for a shard not given), and the
 * shards of the matrix that no input holds (their cells are missing from
 * the merged database until merged in or run with --resume). */
static void note_shards(const source *src, int n, FILE *log)
{
    enum { MAX_N = 4096 };
    int total = 0, plain = 1;
    for (int i = 0; i < n && plain; i++)
        for (int k = 0; k < src[i].nb && plain; k++) {
            int kk, nn;
            const char *sh = src[i].b[k].shard;
            if (!sh || sscanf(sh, "%d/%d", &kk, &nn) != 2 || nn < 1 || nn > MAX_N || (total && nn != total)) plain = 0;
            else total = nn;
        }
    if (!plain || !total || !log) return;
    int *where = malloc((size_t)total * sizeof *where); /* the input holding each shard, -1: none */
    if (!where) return;
    for (int k = 0; k < total; k++) where[k] = -1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < src[i].nb; k++) {
            int kk = 0, nn = 0;
            if (sscanf(src[i].b[k].shard, "%d/%d", &kk, &nn) != 2 || kk < 0 || kk >= total) continue;
            if (where[kk] >= 0 && where[kk] != i)
                fprintf(log, "optbench: merge: note: shard %d/%d is in both '%s' and '%s' (a copy?): each cell is "
                             "kept once\n", kk, total, src[where[kk]].path, src[i].path);
            else where[kk] = i;
        }
    char list[256] = "";
    int missing = 0;
    for (int k = 0; k < total; k++)
        if (where[k] < 0) {
            size_t l = strlen(list);
            if (missing < 8) snprintf(list + l, sizeof list - l, "%s%d/%d", missing ? ", " : "", k, total);
            else if (missing == 8) snprintf(list + l, sizeof list - l, ", ...");
            missing++;
        }
    if (missing)
        fprintf(log, "optbench: merge: note: %d of the %d shards %s not given (%s): their cells are not in the "
                     "merged database; merge it again with them, or run the matrix with --resume on it to add them\n",
                missing, total, missing == 1 ? "was" : "were", list);
    free(where);
}

/* Runs evaluated every N steps and every M steps would mix two evaluation
 * schedules in one benchmark (and --resume of it could not tell which to
 * keep): the sources' stored configurations must agree on eval_every. One
 * stored before optbench wrote its effective configuration says nothing. */
static ob_status check_same_eval_every(source *src, int n, ob_err *e)
{
    const char *fpath = NULL;
    int64_t first = -1, fid = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < src[i].nb; k++) {
            int64_t v = ob_config_text_eval_every(src[i].b[k].config);
            if (v < 0) continue;
            if (first < 0) {
                first = v;
                fpath = src[i].path;
                fid = src[i].b[k].id;
            } else if (v != first) {
                return ob_fail(e, OB_ERR_INPUT,
                               "merge: '%s' (benchmark %lld) was run with eval_every %lld and '%s' (benchmark "
                               "%lld) with eval_every %lld: their runs would mix two evaluation schedules; merge "
                               "shards run with one --eval-every",
                               fpath, (long long)fid, (long long)first, src[i].path, (long long)src[i].b[k].id,
                               (long long)v);
            }
        }
    return OB_OK;
}

/* Whether text holds a line equal to line[0..len). */
static int has_line(const char *text, const char *line, size_t len)
{
    while (*text) {
        const size_t l = strcspn(text, "\n");
        if (l == len && !memcmp(text, line, len)) return 1;
        text += l + (text[l] == '\n');
    }
    return 0;
}

/* The first line of a that b lacks, into t (printable, cut to fit); 0 when none. */
static int first_missing(const char *a, const char *b, char *t, size_t n)
{
    while (*a) {
        const size_t l = strcspn(a, "\n");
        if (!has_line(b, a, l)) {
            char raw[96];
            snprintf(raw, sizeof raw, "%.*s", (int)(l < sizeof raw - 1 ? l : sizeof raw - 1), a);
            ob_printable(raw, t, n);
            return 1;
        }
        a += l + (a[l] == '\n');
    }
    return 0;
}

/* Where two stored configurations differ, into out: the first line of each
 * that the other lacks ("'lrs: [0.01]' in the second only"), so that a key
 * one of them lacks is named rather than the line that follows it; "" when
 * either is missing or they hold the same lines. */
static void config_difference(const char *a, const char *b, char *out, size_t n)
{
    out[0] = '\0';
    if (!a || !b) return;
    char ta[128], tb[128];
    const int in_a = first_missing(a, b, ta, sizeof ta), in_b = first_missing(b, a, tb, sizeof tb);
    if (in_a && in_b) snprintf(out, n, "'%s' in the first and '%s' in the second", ta, tb);
    else if (in_a) snprintf(out, n, "'%s' in the first only", ta);
    else if (in_b) snprintf(out, n, "'%s' in the second only", tb);
}

/* The matrix of benchmark b (of source s) as this build expands its stored
 * configuration: its fingerprint into fp (ob_matrix_fingerprint's), and each
 * cell's key as load_source makes a sweep run's (texts over this build's
 * defaults) into *keys (owned, *n_keys of them). 0: the configuration does
 * not load or expand here. */
static int rebuilt_matrix(const source *s, const src_bench *b, char fp[32], char ***keys, int *n_keys)
{
    *keys = NULL;
    *n_keys = 0;
    fp[0] = '\0';
    if (!b->config) return 0;
    ob_config *c = malloc(sizeof *c);
    ob_matrix m = {0};
    ob_err e = {0};
    sqlite3_stmt *q = NULL;
    if (!c) return 0;
    ob_config_init(c);
    int ok = ob_config_load_text(c, b->config, "stored configuration", &e) == OB_OK;
    /* a search stored without search_draws is an earlier build's: draws 1 */
    if (ok && c->trials > 0 && c->search_draws == 0) c->search_draws = 1;
    ok = ok && ob_matrix_expand(c, &m, NULL, &e) == OB_OK && m.n > 0 &&
             sqlite3_prepare_v2(s->db,
                                "SELECT " OB_STORE_CANON_SQL("1", "?2", "?1") ", " OB_STORE_CANON_SQL("0", "?4", "?3"),
                                -1, &q, NULL) == SQLITE_OK &&
             (*keys = calloc((size_t)m.n, sizeof **keys)) != NULL;
    for (int i = 0; ok && i < m.n; i++) {
        char w[OB_SPEC_WL_JSON], o[OB_SPEC_OPT_JSON];
        ob_run_spec sp;
        if (!(ok = ob_cell_spec(c, &m.cells[i], NULL, "", w, o, &sp, &e) == OB_OK)) break;
        sqlite3_reset(q);
        sqlite3_bind_text(q, 1, sp.workload, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, sp.workload_params, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, sp.optimizer, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 4, sp.hparams, -1, SQLITE_STATIC);
        ok = sqlite3_step(q) == SQLITE_ROW;
        const char *cw = ok ? (const char *)sqlite3_column_text(q, 0) : NULL;
        const char *ch = ok ? (const char *)sqlite3_column_text(q, 1) : NULL;
        size_t kl = strlen(sp.workload) + strlen(cw ? cw : "") + strlen(sp.optimizer) + strlen(ch ? ch : "") + 160;
        ok = ok && ((*keys)[i] = malloc(kl)) != NULL;
        if (ok)
            snprintf((*keys)[i], kl, "%s\x1f%s\x1f%s\x1f%s\x1f%a\x1f%lld\x1f%lld\x1f", sp.workload, cw ? cw : "",
                     sp.optimizer, ch ? ch : "", sp.lr, (long long)sp.seed, (long long)sp.steps);
        *n_keys = i + 1;
    }
    if (ok) {
        char text[96];
        const char *at = ob_matrix_fingerprint(c, &m, text, sizeof text, &e) == OB_OK ? strstr(text, "\"matrix\":\"")
                                                                                        : NULL;
        if (!at || sscanf(at + 10, "%31[0-9a-f]", fp) != 1) ok = 0;
    }
    sqlite3_finalize(q);
    ob_matrix_free(&m);
    ob_config_free(c);
    free(c);
    if (!ok) fp[0] = '\0';
    return ok;
}

static void free_keys(char **keys, int n)
{
    for (int i = 0; keys && i < n; i++) free(keys[i]);
    free(keys);
}

/* Shards whose fingerprints differ may yet be of one matrix: run by two
 * builds of which one added a setting, they hashed different texts. They
 * are when this build expands every such benchmark's stored configuration
 * to one matrix and each of their sweep runs is that matrix's cell at its
 * index (workload, optimizer, lr, seed and steps the same, the texts over
 * this build's defaults). Then fp gets this build's fingerprint of it;
 * else why says what differs ("" when the configurations do not expand
 * here). */
static int same_matrix_here(const source *src, int n, const cand *cands, int nc, char fp[32], char *why, size_t why_n)
{
    fp[0] = why[0] = '\0';
    int ok = 1;
    for (int i = 0; i < n && ok; i++)
        for (int k = 0; k < src[i].nb && ok; k++) {
            const src_bench *b = &src[i].b[k];
            char mine[32], here[32];
            shard_matrix(b, mine);
            if (!mine[0]) continue;
            char **keys = NULL;
            int nk = 0;
            ok = rebuilt_matrix(&src[i], b, here, &keys, &nk);
            if (ok && fp[0] && strcmp(fp, here)) {
                snprintf(why, why_n, "their stored configurations give different matrices here too");
                ok = 0;
            }
            if (ok) snprintf(fp, 32, "%s", here);
            for (int j = 0; j < nc && ok; j++) {
                const cand *c = &cands[j];
                if (c->src != i || c->bench_id != b->id) continue;
                const char *stage = strrchr(c->key, '\x1f');
                if (stage && !strcmp(stage + 1, "confirm")) continue; /* not in the fingerprint */
                if (c->cell < 0 || c->cell >= nk || strcmp(c->key, keys[c->cell])) {
                    snprintf(why, why_n, "run %lld of '%s' (%s) is not cell %lld of the matrix its configuration "
                             "gives here, even over this build's defaults",
                             (long long)c->run_id, src[i].path, c->label, (long long)c->cell);
                    ok = 0;
                }
            }
            free_keys(keys, nk);
        }
    if (!ok) fp[0] = '\0';
    return ok && fp[0];
}

/* Shards of one matrix record one fingerprint; shards of different run
 * commands (another sweep, lr list, setting, step count) would mix two
 * matrices, each configuration with a part of its seeds. The fingerprint
 * they share goes to matrix ("" when none), for the merged benchmark.
 * Shards whose fingerprints differ are of one matrix where this build finds
 * them so (same_matrix_here: two builds, one of which added a setting);
 * matrix then gets this build's fingerprint and a note says so. */
static ob_status check_same_matrix(source *src, int n, const cand *cands, int nc, char matrix[32], FILE *log,
                                   ob_err *e)
{
    const source *fs = NULL;
    const src_bench *fb = NULL;
    char first[32] = "", mine[32];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < src[i].nb; k++) {
            shard_matrix(&src[i].b[k], mine);
            if (!mine[0]) continue;
            if (!first[0]) {
                snprintf(first, sizeof first, "%s", mine);
                fs = &src[i];
                fb = &src[i].b[k];
            } else if (strcmp(first, mine)) {
                char here[32], why[400], diff[320], said[480] = "";
                if (same_matrix_here(src, n, cands, nc, here, why, sizeof why)) {
                    if (log)
                        fprintf(log, "optbench: merge: note: the shards record different matrix fingerprints ('%s', "
                                     "benchmark %lld, and '%s', benchmark %lld: run by builds whose settings "
                                     "differ), but this build expands their configurations to one matrix and every "
                                     "run is its cell, over this build's defaults: merged as one matrix\n",
                                fs->path, (long long)fb->id, src[i].path, (long long)src[i].b[k].id);
                    snprintf(matrix, 32, "%s", here);
                    return OB_OK;
                }
                config_difference(fb->config, src[i].b[k].config, diff, sizeof diff);
                if (diff[0]) snprintf(said, sizeof said, "; their configurations differ: %s", diff);
                else if (why[0]) snprintf(said, sizeof said, "; %s", why);
                return ob_fail(e, OB_ERR_INPUT,
                               "merge: '%s' (benchmark %lld, %s%s) and '%s' (benchmark %lld, %s%s) are "
                               "shards of different matrices (their cells differ: another --sweep, --lrs, --set, "
                               "--steps or config%s); merge the shards of one run command",
                               fs->path, (long long)fb->id, fb->shard ? "shard " : "merged", fb->shard ? fb->shard : "",
                               src[i].path, (long long)src[i].b[k].id, src[i].b[k].shard ? "shard " : "merged",
                               src[i].b[k].shard ? src[i].b[k].shard : "", said);
            }
        }
    snprintf(matrix, 32, "%s", first);
    return OB_OK;
}

/* Copies the benchmark row at q into b (*oom set where a copy failed). */
static void read_bench(src_bench *b, sqlite3_stmt *q, int *oom)
{
    memset(b, 0, sizeof *b);
    b->id = sqlite3_column_int64(q, 0);
    b->name = dup_col(q, 1, oom);
    b->config = dup_col(q, 2, oom);
    b->git_rev = dup_col(q, 3, oom);
    b->host = dup_col(q, 4, oom);
    b->backend = dup_col(q, 5, oom);
    b->device = dup_col(q, 6, oom);
    b->created_at = dup_col(q, 7, oom);
    b->finished_at = dup_col(q, 8, oom);
    b->shard = dup_col(q, 9, oom);
    b->provenance = dup_col(q, 10, oom);
}

/* Reads the benchmarks of source s into s->b (shard and provenance NULL where its schema lacks them). */
static ob_status load_benchmarks(source *s, ob_err *e)
{
    int v2 = has_column(s->db, "benchmarks", "shard");
    const char *bsql = v2 ? "SELECT id, name, config, git_rev, host, backend, device, created_at, finished_at, "
                            "shard, provenance FROM benchmarks ORDER BY id"
                          : "SELECT id, name, config, git_rev, host, backend, device, created_at, finished_at, "
                            "NULL, NULL FROM benchmarks ORDER BY id";
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, bsql, -1, &q, NULL) != SQLITE_OK)
        return src_fail(s->db, s->path, "reading its benchmarks", e);
    int rc = SQLITE_DONE, oom = 0;
    while (!oom && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        src_bench *nb = realloc(s->b, (size_t)(s->nb + 1) * sizeof *nb);
        if (!nb) {
            sqlite3_finalize(q);
            return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        }
        s->b = nb;
        read_bench(&s->b[s->nb++], q, &oom);
    }
    sqlite3_finalize(q);
    if (oom) return ob_fail(e, OB_ERR_NOMEM, "out of memory reading the benchmarks of '%s'", s->path);
    if (rc != SQLITE_DONE) return src_fail(s->db, s->path, "reading its benchmarks", e);
    return OB_OK;
}

/* Prepares the query of db's runs, a cell's texts over this build's defaults (stage NULL before schema 3). */
static int prepare_runs(sqlite3 *db, sqlite3_stmt **q)
{
    /* runs.stage (schema 3): a confirmation run is another cell than a sweep
     * run of the same lr and seed. A cell's texts are read over this build's
     * defaults: one cell run by two builds, of which one added a setting, is
     * one cell. */
#define TEXTS                                                                                                     \
    OB_STORE_CANON_SQL("1", "workload_params", "workload") ", optimizer, " OB_STORE_CANON_SQL("0", "hparams",      \
                                                                                             "optimizer")
    return sqlite3_prepare_v2(db,
                              has_column(db, "runs", "stage")
                                  ? "SELECT id, benchmark_id, workload, " TEXTS ", lr, seed, steps, status, "
                                    "steps_done, final_loss, diverged_step, cell, stage FROM runs ORDER BY id"
                                  : "SELECT id, benchmark_id, workload, " TEXTS ", lr, seed, steps, status, "
                                    "steps_done, final_loss, diverged_step, cell, NULL FROM runs ORDER BY id",
                              -1, q, NULL);
#undef TEXTS
}

/* Refuses run run_id of source s (its row at q: wl, op and lr read) without a workload, an optimizer or a
 * learning rate (finite, above 0). */
static ob_status check_run_row(const source *s, sqlite3_stmt *q, int64_t run_id, const char *wl, const char *op,
                               double lr, const char *st, ob_err *e)
{
    /* what report, compare and history refuse is not copied into a
     * database they would then refuse: an edited or foreign row */
    const int lr_type = sqlite3_column_type(q, 6);
    if ((lr_type != SQLITE_FLOAT && lr_type != SQLITE_INTEGER) || !isfinite(lr) || !(lr > 0) || !wl || !op) {
        const char *lr_text = (const char *)sqlite3_column_text(q, 6);
        char what[160];
        if (!wl || !op) snprintf(what, sizeof what, "no workload or optimizer");
        else if (lr_type == SQLITE_BLOB || lr_type == SQLITE_NULL)
            snprintf(what, sizeof what, "%s as its lr, not a learning rate",
                     lr_type == SQLITE_BLOB ? "a blob" : "NULL");
        else snprintf(what, sizeof what, "lr '%.60s', not a learning rate (finite, above 0)", lr_text);
        return ob_fail(e, OB_ERR_INPUT,
                       "'%s': run %lld has %s: the row was edited or written by another program, and "
                       "report would refuse the merged database; correct that row of the runs table "
                       "(sqlite3 FILE) or leave that database out; nothing was written",
                       s->path, (long long)run_id, what);
    }
    /* the schema's CHECK would refuse it only when the merged database is
     * written, half way through */
    if (st && !ob_store_status_known(st))
        return ob_fail(e, OB_ERR_INPUT,
                       "'%s': run %lld has the status '%.40s', not one of pending, running, done, diverged, failed "
                       "or interrupted: the row was edited or written by another program; correct that row of the "
                       "runs table (sqlite3 FILE) or leave that database out; nothing was written",
                       s->path, (long long)run_id, st);
    return OB_OK;
}

/* The outcome of the run at q into c: its status (st; NULL: pending) and rank, steps done, final loss,
 * step of divergence and cell. */
static void read_outcome(cand *c, sqlite3_stmt *q, const char *st)
{
    snprintf(c->status, sizeof c->status, "%s", st ? st : "pending");
    c->rank = status_rank(c->status);
    c->steps_done = sqlite3_column_type(q, 10) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 10);
    /* a number, or unknown (NULL, or text in a number's column) */
    c->final_loss = sqlite3_column_type(q, 11) == SQLITE_FLOAT || sqlite3_column_type(q, 11) == SQLITE_INTEGER
                        ? sqlite3_column_double(q, 11)
                        : NAN;
    c->diverged_step = sqlite3_column_type(q, 12) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 12);
    c->cell = sqlite3_column_type(q, 13) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 13);
}

/* Reads the run at q of source s (input idx) into candidate c, the order-th one read: its cell key, label
 * and outcome. */
static ob_status read_cand(const source *s, sqlite3_stmt *q, int idx, int order, cand *c, ob_err *e)
{
    memset(c, 0, sizeof *c);
    c->src = idx;
    c->order = order;
    c->run_id = sqlite3_column_int64(q, 0);
    c->bench_id = sqlite3_column_int64(q, 1);
    const char *wl = (const char *)sqlite3_column_text(q, 2);
    const char *wp = (const char *)sqlite3_column_text(q, 3);
    const char *op = (const char *)sqlite3_column_text(q, 4);
    const char *hp = (const char *)sqlite3_column_text(q, 5);
    double lr = sqlite3_column_double(q, 6);
    long long seed = sqlite3_column_int64(q, 7);
    long long steps = sqlite3_column_type(q, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 8);
    const char *st = (const char *)sqlite3_column_text(q, 9);
    OB_TRY(check_run_row(s, q, c->run_id, wl, op, lr, st, e));
    size_t kl = strlen(wl ? wl : "") + strlen(wp ? wp : "") + strlen(op ? op : "") + strlen(hp ? hp : "") + 160;
    c->key = malloc(kl);
    c->label = malloc(256);
    if (!c->key || !c->label) {
        free(c->key);
        free(c->label);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    const char *stage = (const char *)sqlite3_column_text(q, 14);
    snprintf(c->key, kl, "%s\x1f%s\x1f%s\x1f%s\x1f%a\x1f%lld\x1f%lld\x1f%s", wl ? wl : "", wp ? wp : "",
             op ? op : "", hp ? hp : "", lr, seed, steps, stage ? stage : "");
    snprintf(c->label, 256, "%s %s lr=%g seed=%lld", wl ? wl : "?", op ? op : "?", lr, seed);
    read_outcome(c, q, st);
    return OB_OK;
}

/* Reads the runs of source s (input idx) as candidates appended to *cands (*nc of them, room for *cap),
 * counting each in its benchmark's runs. */
static ob_status load_runs(source *s, int idx, cand **cands, int *nc, int *cap, ob_err *e)
{
    sqlite3_stmt *q;
    if (prepare_runs(s->db, &q) != SQLITE_OK) return src_fail(s->db, s->path, "reading its runs", e);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (*nc == *cap) {
            int ncap = *cap ? *cap * 2 : 256;
            cand *n2 = realloc(*cands, (size_t)ncap * sizeof *n2);
            if (!n2) {
                sqlite3_finalize(q);
                return ob_fail(e, OB_ERR_NOMEM, "out of memory");
            }
            *cands = n2;
            *cap = ncap;
        }
        cand *c = &(*cands)[*nc];
        ob_status st = read_cand(s, q, idx, *nc, c, e);
        if (st != OB_OK) {
            sqlite3_finalize(q);
            return st;
        }
        (*nc)++;
        for (int i = 0; i < s->nb; i++)
            if (s->b[i].id == c->bench_id) s->b[i].runs++;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) return src_fail(s->db, s->path, "reading its runs", e);
    return OB_OK;
}

/* Reads source s (input idx): its benchmarks into s->b, its runs as candidates appended to *cands. */
static ob_status load_source(source *s, int idx, cand **cands, int *nc, int *cap, ob_err *e)
{
    OB_TRY(load_benchmarks(s, e));
    return load_runs(s, idx, cands, nc, cap, e);
}

/* Sort: by cell, then best first (rank, then input order). */
static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    int k = strcmp(x->key, y->key);
    if (k) return k;
    if (x->rank != y->rank) return y->rank - x->rank;
    return (x->order > y->order) - (x->order < y->order);
}

/* Output order: by cell index, then input order. */
static int cmp_cell(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->cell != y->cell) return (x->cell > y->cell) - (x->cell < y->cell);
    return (x->order > y->order) - (x->order < y->order);
}

static int same_result(const cand *a, const cand *b)
{
    if (strcmp(a->status, b->status) || a->steps_done != b->steps_done || a->diverged_step != b->diverged_step)
        return 0;
    if (isnan(a->final_loss) || isnan(b->final_loss)) return isnan(a->final_loss) && isnan(b->final_loss);
    return a->final_loss == b->final_loss;
}

/* ---- copying ---------------------------------------------------------------- */

/* Column names of table in db, minus the ones in skip (NULL-terminated). */
static int columns(sqlite3 *db, const char *table, char cols[][64], int max, const char *const *skip)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s') ORDER BY cid", table);
    sqlite3_stmt *q;
    int n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) return 0;
    while (sqlite3_step(q) == SQLITE_ROW && n < max) {
        const char *c = (const char *)sqlite3_column_text(q, 0);
        int skipped = 0;
        for (int i = 0; skip && skip[i]; i++) skipped |= !strcmp(skip[i], c);
        if (!skipped && strlen(c) < 64) snprintf(cols[n++], 64, "%s", c);
    }
    sqlite3_finalize(q);
    return n;
}

#define MAX_COLS 64

/* A copier of one table's rows of a run: SELECT shared columns from the
 * source, INSERT them (plus the fixed leading columns) into the output. */
typedef struct copier {
    sqlite3_stmt *sel, *ins;
    int n; /* shared columns */
} copier;

static ob_status copier_init(copier *cp, sqlite3 *src, const char *src_path, sqlite3 *out, const char *table,
                             const char *key_col, const char *const *fixed, const char *const *skip, ob_err *e)
{
    memset(cp, 0, sizeof cp[0]);
    char scols[MAX_COLS][64], ocols[MAX_COLS][64];
    int ns = columns(src, table, scols, MAX_COLS, skip), no = columns(out, table, ocols, MAX_COLS, skip);
    sbuf sel = {0}, ins = {0}, vals = {0};
    sb_printf(&sel, "SELECT ");
    sb_printf(&ins, "INSERT INTO %s (", table);
    int nf = 0;
    for (; fixed && fixed[nf]; nf++) {
        sb_printf(&ins, "%s%s", nf ? ", " : "", fixed[nf]);
        sb_printf(&vals, "%s?%d", nf ? ", " : "", nf + 1);
    }
    for (int i = 0; i < ns; i++) {
        int shared = 0;
        for (int k = 0; k < no; k++) shared |= !strcmp(scols[i], ocols[k]);
        if (!shared) continue;
        sb_printf(&sel, "%s\"%s\"", cp->n ? ", " : "", scols[i]);
        sb_printf(&ins, "%s\"%s\"", nf + cp->n ? ", " : "", scols[i]);
        sb_printf(&vals, "%s?%d", nf + cp->n ? ", " : "", nf + cp->n + 1);
        cp->n++;
    }
    if (!cp->n) sb_printf(&sel, "NULL");
    sb_printf(&sel, " FROM %s WHERE %s = ?1", table, key_col);
    if (!strcmp(table, "curves") || !strcmp(table, "evals")) sb_printf(&sel, " ORDER BY step");
    else if (!strcmp(table, "events")) sb_printf(&sel, " ORDER BY id");
    sb_printf(&ins, ") VALUES (%s)", vals.p ? vals.p : "");
    ob_status s = OB_OK;
    if (sel.oom || ins.oom || vals.oom) s = ob_fail(e, OB_ERR_NOMEM, "out of memory");
    else if (sqlite3_prepare_v2(src, sel.p, -1, &cp->sel, NULL) != SQLITE_OK)
        s = src_fail(src, src_path, "reading rows to merge", e);
    else if (sqlite3_prepare_v2(out, ins.p, -1, &cp->ins, NULL) != SQLITE_OK)
        s = sql_fail(out, "output", "preparing the merge", e);
    free(sel.p);
    free(ins.p);
    free(vals.p);
    return s;
}

static void copier_free(copier *cp)
{
    sqlite3_finalize(cp->sel);
    sqlite3_finalize(cp->ins);
    memset(cp, 0, sizeof *cp);
}

/* Copy the rows with key_col = key; the fixed leading columns get
 * fixed_text[i] when that is given, else fixed_int[i]. Returns the number of
 * rows, -1 where writing a row failed (the output's error), -2 where reading
 * them did (the input's). */
static int64_t copier_run(copier *cp, int64_t key, const int64_t *fixed_int, const char *const *fixed_text,
                          int nf)
{
    sqlite3_reset(cp->sel);
    sqlite3_bind_int64(cp->sel, 1, key);
    int64_t n = 0;
    int rc;
    while ((rc = sqlite3_step(cp->sel)) == SQLITE_ROW) {
        sqlite3_reset(cp->ins);
        sqlite3_clear_bindings(cp->ins);
        for (int i = 0; i < nf; i++) {
            if (fixed_text && fixed_text[i]) sqlite3_bind_text(cp->ins, i + 1, fixed_text[i], -1, SQLITE_TRANSIENT);
            else sqlite3_bind_int64(cp->ins, i + 1, fixed_int[i]);
        }
        for (int i = 0; i < cp->n; i++) sqlite3_bind_value(cp->ins, nf + i + 1, sqlite3_column_value(cp->sel, i));
        if (sqlite3_step(cp->ins) != SQLITE_DONE) return -1;
        n++;
    }
    return rc == SQLITE_DONE ? n : -2;
}

/* ---- the merge ---------------------------------------------------------------- */

static const char *common(const char *a, const char *b)
{
    if (!a || !b) return a ? a : b;
    return strcmp(a, b) ? "mixed" : a;
}

static void free_sources(source *src, int n)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < src[i].nb; k++) {
            src_bench *b = &src[i].b[k];
            free(b->name);
            free(b->config);
            free(b->git_rev);
            free(b->host);
            free(b->backend);
            free(b->device);
            free(b->created_at);
            free(b->finished_at);
            free(b->shard);
            free(b->provenance);
        }
        free(src[i].b);
        if (src[i].db && !sqlite3_get_autocommit(src[i].db)) sqlite3_exec(src[i].db, "ROLLBACK", NULL, NULL, NULL);
        ob_store_close(src[i].store);
    }
}

/* The merged benchmark's row from the sources' benchmarks into vals (name,
 * config, git_rev, host, backend, device, created_at, finished_at): the
 * first's, each text that differs "mixed" (name given: that name), the
 * earliest start and the latest finish (none while a benchmark or a cell is
 * not finished). *config_differs: the stored configurations are not one. */
static void merged_benchmark(const source *src, int n, const char *name, const ob_merge_report *rep,
                             const char *vals[8], int *config_differs)
{
    const char *bname = name, *config = NULL, *git = NULL, *host = NULL, *backend = NULL, *device = NULL;
    const char *created = NULL, *finished = NULL;
    int first = 1, all_finished = 1;
    *config_differs = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < src[i].nb; k++) {
            const src_bench *b = &src[i].b[k];
            if (first) {
                if (!bname) bname = b->name;
                config = b->config;
                git = b->git_rev;
                host = b->host;
                backend = b->backend;
                device = b->device;
                created = b->created_at;
                finished = b->finished_at;
                first = 0;
            } else {
                if (!name) bname = common(bname, b->name);
                if ((config && b->config && strcmp(config, b->config)) || (!config) != (!b->config))
                    *config_differs = 1;
                git = common(git, b->git_rev);
                host = common(host, b->host);
                backend = common(backend, b->backend);
                device = common(device, b->device);
                if (b->created_at && (!created || strcmp(b->created_at, created) < 0)) created = b->created_at;
                if (b->finished_at && (!finished || strcmp(b->finished_at, finished) > 0)) finished = b->finished_at;
            }
            if (!b->finished_at) all_finished = 0;
        }
    if (!all_finished || rep->unfinished) finished = NULL;
    vals[0] = bname ? bname : "merged";
    vals[1] = config;
    vals[2] = git;
    vals[3] = host;
    vals[4] = backend;
    vals[5] = device;
    vals[6] = created;
    vals[7] = finished;
}

/* Inserts the merged benchmark's row (vals, as merged_benchmark gives them;
 * no start: now) into out; its id into rep->bench_id. */
static ob_status insert_benchmark(sqlite3 *out, const char *out_path, const char *const vals[8],
                                  ob_merge_report *rep, ob_err *e)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(out,
                           "INSERT INTO benchmarks (name, config, git_rev, host, backend, device, created_at, "
                           "finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                           "coalesce(?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), ?8)",
                           -1, &q, NULL) != SQLITE_OK)
        return sql_fail(out, out_path, "recording the merged benchmark", e);
    for (int i = 0; i < 8; i++) {
        if (vals[i]) sqlite3_bind_text(q, i + 1, vals[i], -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(q, i + 1);
    }
    int rc = sqlite3_step(q);
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) return sql_fail(out, out_path, "recording the merged benchmark", e);
    rep->bench_id = sqlite3_last_insert_rowid(out);
    return OB_OK;
}

/* The copiers of each source into out: cp[i][0] of its runs, cp[i][1..3] of
 * their curves, evaluations and events; qo[i] reads a run's origin where
 * source i records one (NULL else). */
static ob_status open_copiers(sqlite3 *out, const source *src, int n, copier (*cp)[4], sqlite3_stmt **qo,
                              ob_err *e)
{
    static const char *const skip_run[] = {"id", "benchmark_id", "origin", NULL};
    static const char *const fix_run[] = {"benchmark_id", "origin", NULL};
    static const char *const skip_child[] = {"run_id", "id", NULL};
    static const char *const fix_child[] = {"run_id", NULL};
    static const char *const child[3] = {"curves", "evals", "events"};
    ob_status s = OB_OK;
    for (int i = 0; i < n && s == OB_OK; i++) {
        s = copier_init(&cp[i][0], src[i].db, src[i].path, out, "runs", "id", fix_run, skip_run, e);
        for (int t = 0; t < 3 && s == OB_OK; t++)
            s = copier_init(&cp[i][t + 1], src[i].db, src[i].path, out, child[t], "run_id", fix_child,
                            skip_child, e);
        if (s == OB_OK && has_column(src[i].db, "runs", "origin") &&
            sqlite3_prepare_v2(src[i].db, "SELECT origin FROM runs WHERE id = ?1", -1, &qo[i], NULL) != SQLITE_OK)
            s = src_fail(src[i].db, src[i].path, "reading run origins", e);
    }
    return s;
}

/* Copies run c of source sc (its copiers cp, its origin query qo) into out
 * as a run of the merged benchmark, its origin "FILE:run ID" (followed by
 * the origin it records), with its curves, evaluations and events; sc's
 * benchmark of the run counts it as taken once the run is copied. */
static ob_status copy_run(sqlite3 *out, const char *out_path, source *sc, copier *cp, sqlite3_stmt *qo,
                          const cand *c, const ob_merge_report *rep, ob_err *e)
{
    char origin[1400];
    snprintf(origin, sizeof origin, "%s:run %lld", sc->path, (long long)c->run_id);
    if (qo) {
        sqlite3_reset(qo);
        sqlite3_bind_int64(qo, 1, c->run_id);
        if (sqlite3_step(qo) == SQLITE_ROW && sqlite3_column_type(qo, 0) != SQLITE_NULL) {
            size_t l = strlen(origin);
            snprintf(origin + l, sizeof origin - l, " <- %s", (const char *)sqlite3_column_text(qo, 0));
        }
    }
    const int64_t fi[2] = {rep->bench_id, 0};
    const char *ft[2] = {NULL, origin};
    const int64_t got = copier_run(&cp[0], c->run_id, fi, ft, 2);
    if (got != 1)
        return got == -2  ? src_fail(sc->db, sc->path, "reading a run", e)
               : got == -1 ? sql_fail(out, out_path, "copying a run", e)
                           : ob_fail(e, OB_ERR_INTERNAL, "merge: run %lld of '%s' read as %lld rows",
                                     (long long)c->run_id, sc->path, (long long)got);
    int64_t new_id = sqlite3_last_insert_rowid(out);
    ob_status s = OB_OK;
    for (int t = 1; t < 4 && s == OB_OK; t++) {
        const int64_t r = copier_run(&cp[t], c->run_id, &new_id, NULL, 1);
        if (r == -2) s = src_fail(sc->db, sc->path, "reading curves, evaluations and events", e);
        else if (r < 0) s = sql_fail(out, out_path, "copying curves, evaluations and events", e);
    }
    for (int b = 0; b < sc->nb; b++)
        if (sc->b[b].id == c->bench_id) sc->b[b].taken++;
    return s;
}

/* The chosen runs into out in cell order (cands sorted so), each with its
 * curves, evaluations and events (copy_run); a signal stops the copy. */
static ob_status copy_runs(sqlite3 *out, const char *out_path, source *src, int n, cand *cands, int nc,
                           const ob_merge_report *rep, ob_err *e)
{
    copier(*cp)[4] = calloc((size_t)n, sizeof *cp);
    sqlite3_stmt **qo = calloc((size_t)n, sizeof *qo);
    ob_status s = cp && qo ? open_copiers(out, src, n, cp, qo, e) : ob_fail(e, OB_ERR_NOMEM, "out of memory");
    if (nc > 1) qsort(cands, (size_t)nc, sizeof *cands, cmp_cell);
    for (int k = 0; k < nc && s == OB_OK; k++) {
        const cand *c = &cands[k];
        if (!c->chosen) continue;
        const int sig = ob_signal_pending(); /* SIGINT, SIGTERM (a job's end) or SIGHUP: stop, leave nothing */
        if (sig) {
            s = ob_fail(e, OB_ERR_INTERRUPTED, "stopped by %s before it finished: nothing was merged (its working "
                        "file was removed; the inputs are unchanged)", ob_signal_name(sig));
            break;
        }
        s = copy_run(out, out_path, &src[c->src], cp[c->src], qo[c->src], c, rep, e);
    }
    for (int i = 0; i < n && cp && qo; i++) {
        sqlite3_finalize(qo[i]);
        for (int t = 0; t < 4; t++) copier_free(&cp[i][t]);
    }
    free(cp);
    free(qo);
    return s;
}

/* The merged benchmark's provenance (JSON) into p: the build that merged,
 * the shards' matrix, the counts, each source benchmark (its file, row,
 * runs and runs taken, its own provenance) and the conflicts. */
static void provenance_json(sbuf *p, const source *src, int n, const char *matrix, int config_differs,
                            const sbuf *conflicts, const ob_merge_report *rep)
{
    sb_printf(p, "{\"merged_by\":\"optbench %s\",", OB_VERSION);
    if (matrix[0]) sb_printf(p, "\"matrix\":\"%s\",", matrix); /* the shards' matrix, for a later merge */
    sb_printf(p, "\"cells\":%d,\"duplicates\":%d,\"unfinished\":%d,", rep->cells, rep->duplicates, rep->unfinished);
    sb_printf(p, "\"configs_differ\":%s,\"sources\":[", config_differs ? "true" : "false");
    int nsrc = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < src[i].nb; k++) {
            const src_bench *b = &src[i].b[k];
            sb_printf(p, "%s{\"file\":", nsrc++ ? "," : "");
            sb_json(p, src[i].path);
            sb_printf(p, ",\"benchmark\":%lld,\"name\":", (long long)b->id);
            sb_json(p, b->name);
            const struct {
                const char *key, *value;
            } text[] = {{"shard", b->shard},          {"host", b->host},
                        {"git_rev", b->git_rev},      {"backend", b->backend},
                        {"device", b->device},        {"created_at", b->created_at},
                        {"finished_at", b->finished_at}};
            for (size_t t = 0; t < sizeof text / sizeof text[0]; t++) {
                sb_printf(p, ",\"%s\":", text[t].key);
                sb_json(p, text[t].value);
            }
            sb_printf(p, ",\"runs\":%d,\"taken\":%d,\"provenance\":", b->runs, b->taken);
            /* a merged input's own provenance, as it is (it is JSON we wrote) */
            if (b->provenance && b->provenance[0] == '{') sb_put(p, b->provenance, strlen(b->provenance));
            else sb_json(p, b->provenance);
            sb_printf(p, "}");
        }
    sb_printf(p, "],\"conflicts\":[%s]}", conflicts->p ? conflicts->p : "");
}

/* Records the provenance (provenance_json) on the merged benchmark's row. */
static ob_status record_provenance(sqlite3 *out, const char *out_path, const source *src, int n, const char *matrix,
                                   int config_differs, const sbuf *conflicts, const ob_merge_report *rep, ob_err *e)
{
    sbuf p = {0};
    provenance_json(&p, src, n, matrix, config_differs, conflicts, rep);
    if (p.oom) {
        free(p.p);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(out, "UPDATE benchmarks SET provenance = ?2 WHERE id = ?1", -1, &q, NULL) != SQLITE_OK) {
        free(p.p);
        return sql_fail(out, out_path, "recording the provenance", e);
    }
    sqlite3_bind_int64(q, 1, rep->bench_id);
    sqlite3_bind_text(q, 2, p.p, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(q);
    sqlite3_finalize(q);
    free(p.p);
    if (rc != SQLITE_DONE) return sql_fail(out, out_path, "recording the provenance", e);
    return OB_OK;
}

/* The merged database's contents into out (in its transaction): the merged
 * benchmark's row, the chosen runs with their curves, evaluations and
 * events, and the provenance. */
static ob_status write_output(sqlite3 *out, const char *out_path, source *src, int n, cand *cands, int nc,
                              const char *name, const char *matrix, const sbuf *conflicts, ob_merge_report *rep,
                              ob_err *e)
{
    const char *vals[8];
    int config_differs;
    merged_benchmark(src, n, name, rep, vals, &config_differs);
    OB_TRY(insert_benchmark(out, out_path, vals, rep, e));
    OB_TRY(copy_runs(out, out_path, src, n, cands, nc, rep, e));
    return record_provenance(out, out_path, src, n, matrix, config_differs, conflicts, rep, e);
}

/* Makes a new name in OUT's folder durable (fsync of the folder). */
static void sync_folder(const char *out)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* OUT must not exist (an empty file, mktemp's, may), and each input must
 * exist and be given once (by any of its names). */
static ob_status check_paths(const char *out, const char *const *inputs, int n, ob_err *e)
{
    struct stat sb;
    if (stat(out, &sb) == 0 && !(S_ISREG(sb.st_mode) && sb.st_size == 0))
        return ob_fail(e, OB_ERR_INPUT,
                       "merge: '%s' already exists; merge writes a new database (nothing was changed)", out);
    for (int i = 0; i < n; i++) {
        char ri[PATH_MAX];
        if (!realpath(inputs[i], ri))
            return ob_fail(e, OB_ERR_INPUT, "merge: input '%s': %s", inputs[i], strerror(errno));
        for (int k = 0; k < i; k++) {
            char rk[PATH_MAX];
            if (realpath(inputs[k], rk) && !strcmp(ri, rk))
                return ob_fail(e, OB_ERR_INPUT, "merge: '%s' is given twice", inputs[i]);
        }
    }
    return OB_OK;
}

/* Opens each input (read-only, in a read transaction kept to the end of the
 * merge) and reads its benchmarks and its runs into *cands (load_source),
 * counting them in rep. */
static ob_status open_sources(source *src, const char *const *inputs, int n, cand **cands, int *nc,
                              ob_merge_report *rep, ob_err *e)
{
    int cap = 0;
    ob_status s = OB_OK;
    for (int i = 0; i < n && s == OB_OK; i++) {
        src[i].path = inputs[i];
        s = ob_store_open(inputs[i], OB_STORE_READONLY, &src[i].store, e);
        if (s != OB_OK) break;
        src[i].db = ob_store_db(src[i].store);
        /* one snapshot of each input from its first read to the end of the
         * merge: a shard still being written is read as it was at one
         * moment, so what is counted is what is copied */
        if (sqlite3_exec(src[i].db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
            s = src_fail(src[i].db, inputs[i], "starting a read transaction", e);
            break;
        }
        s = load_source(&src[i], i, cands, nc, &cap, e);
        rep->benchmarks += src[i].nb;
    }
    rep->sources = n;
    rep->runs_in = *nc;
    return s;
}

/* Two finished runs of one cell that disagree: best kept, o dropped. Told
 * on log and added to conflicts (for the provenance). */
static void note_conflict(const source *src, const cand *best, const cand *o, ob_merge_report *rep, sbuf *conflicts,
                          FILE *log)
{
    rep->conflicts++;
    char a[160], b[160];
    snprintf(a, sizeof a, "%s, %lld steps, final loss %.9g", best->status, (long long)best->steps_done,
             best->final_loss);
    snprintf(b, sizeof b, "%s, %lld steps, final loss %.9g", o->status, (long long)o->steps_done, o->final_loss);
    if (log)
        fprintf(log,
                "optbench: merge: conflict: %s: %s run %lld (%s) and %s run %lld (%s) disagree; "
                "kept the first\n",
                best->label, src[best->src].path, (long long)best->run_id, a, src[o->src].path,
                (long long)o->run_id, b);
    sb_printf(conflicts, "%s{\"cell\":", rep->conflicts > 1 ? "," : "");
    sb_json(conflicts, best->label);
    char ka[1300], kb[1300];
    snprintf(ka, sizeof ka, "%s:run %lld", src[best->src].path, (long long)best->run_id);
    snprintf(kb, sizeof kb, "%s:run %lld", src[o->src].path, (long long)o->run_id);
    sb_printf(conflicts, ",\"kept\":");
    sb_json(conflicts, ka);
    sb_printf(conflicts, ",\"kept_result\":");
    sb_json(conflicts, a);
    sb_printf(conflicts, ",\"dropped\":");
    sb_json(conflicts, kb);
    sb_printf(conflicts, ",\"dropped_result\":");
    sb_json(conflicts, b);
    sb_printf(conflicts, "}");
}

/* Decides each cell's run: the best (cands sorted by cmp_cand) is chosen,
 * the others count as duplicates, and two finished ones that disagree as a
 * conflict (note_conflict). */
static ob_status choose_runs(const source *src, cand *cands, int nc, ob_merge_report *rep, sbuf *conflicts,
                             FILE *log, ob_err *e)
{
    if (nc > 1) qsort(cands, (size_t)nc, sizeof *cands, cmp_cand); /* cands is NULL without runs */
    for (int i = 0; i < nc;) {
        int j = i + 1;
        while (j < nc && !strcmp(cands[j].key, cands[i].key)) j++;
        cand *best = &cands[i];
        best->chosen = 1;
        rep->cells++;
        if (best->rank < 2) rep->unfinished++;
        for (int k = i + 1; k < j; k++) {
            const cand *o = &cands[k];
            rep->duplicates++;
            if (best->rank == 3 && o->rank == 3 && !same_result(best, o))
                note_conflict(src, best, o, rep, conflicts, log);
        }
        i = j;
    }
    if (conflicts->oom) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    return OB_OK;
}

/* Creates the merged database under its working name part (*created set
 * where it was); an error names OUT, the name the user gave, not part. */
static ob_status create_output(const char *out, const char *part, ob_store **os, int *created, ob_err *e)
{
    unlink(part); /* a leftover of an earlier process with this pid */
    ob_status s = ob_store_open(part, OB_STORE_CREATE, os, e);
    *created = s == OB_OK;
    char *at = e && s != OB_OK ? strstr(e->msg, part) : NULL;
    if (at) /* say OUT, the name the user gave, not the working name */
        memmove(at + strlen(out), at + strlen(part), strlen(at + strlen(part)) + 1);
    return s;
}

/* Writes the merge into os: a database id of its own, then the contents
 * (write_output) in one transaction, then its log folded into its file. */
static ob_status fill_output(ob_store *os, const char *out, source *src, int n, cand *cands, int nc,
                             const char *name, const char *matrix, const sbuf *conflicts, ob_merge_report *rep,
                             ob_err *e)
{
    /* an id of its own, as a run's database has: compare knows a copy of it */
    char id[40];
    OB_TRY(ob_store_database_id(os, id, sizeof id, e));
    sqlite3 *odb = ob_store_db(os);
    ob_status s = OB_OK;
    if (sqlite3_exec(odb, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        s = sql_fail(odb, out, "starting the merge", e);
    if (s == OB_OK) s = write_output(odb, out, src, n, cands, nc, name, matrix, conflicts, rep, e);
    if (s == OB_OK && sqlite3_exec(odb, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        s = sql_fail(odb, out, "committing the merge", e);
    if (s != OB_OK) sqlite3_exec(odb, "ROLLBACK", NULL, NULL, NULL);
    /* the log folded into the file now, where a failure (a full disk) has
     * a cause: the close that would fold it reports none, and keeps the
     * log, which the working file's removal below would lose */
    if (s == OB_OK) s = fold_log(odb, out, e);
    return s;
}

/* What the close of the working file part left: a log not folded in is a
 * merge not written whole. */
static ob_status check_written_whole(const char *part, const char *out, ob_err *e)
{
    char wal[PATH_MAX + 48];
    struct stat ws;
    snprintf(wal, sizeof wal, "%s-wal", part);
    if (stat(wal, &ws) == 0 && ws.st_size > 0)
        return ob_fail(e, OB_ERR_IO, "merge: the merged database could not be written whole (its log was not "
                       "folded into '%s': is the disk full, or failing?); nothing was merged: the incomplete output "
                       "was removed and the inputs are unchanged; make room and merge again", out);
    return OB_OK;
}

/* Gives the complete working file part the name OUT. */
static ob_status name_output(const char *part, const char *out, ob_err *e)
{
    /* link() refuses an OUT made meanwhile, where rename() would replace it;
     * on a file system without hard links, rename() once OUT is still absent */
    struct stat ob;
    int linked = stat(out, &ob) == 0 && S_ISREG(ob.st_mode) && ob.st_size == 0
                     ? rename(part, out) == 0 /* an empty file given as OUT (mktemp's) is replaced */
                     : link(part, out) == 0;
    if (!linked && (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS || errno == EMLINK) &&
        stat(out, &ob) != 0 && errno == ENOENT)
        linked = rename(part, out) == 0;
    if (!linked)
        return errno == EEXIST ? ob_fail(e, OB_ERR_INPUT,
                                         "merge: '%s' was created by something else while the merge ran; "
                                         "merge writes a new database (that file was left as it is)", out)
                               : ob_fail(e, OB_ERR_IO, "merge: cannot name the merged database '%s': %s", out,
                                         strerror(errno));
    sync_folder(out);
    return OB_OK;
}

/* Names on log the working files that merges into OUT killed part way (or
 * whose machine stopped) left, other than this merge's own, part. */
static void note_leftovers(const char *out, const char *part, FILE *log)
{
    char pat[PATH_MAX + 16];
    snprintf(pat, sizeof pat, "%s.merging-*", out);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *f = g.gl_pathv[i], *tail = f + strlen(out) + 9;
        /* this merge's own file, and any merge's -wal, -shm and -journal files, are not listed
         * (another merge's file whose number starts with this one's pid is) */
        if (!strcmp(f, part) || strchr(tail, '-')) continue;
        char wal[PATH_MAX + 24];
        snprintf(wal, sizeof wal, "%s-wal", f);
        const int has_wal = access(wal, F_OK) == 0;
        fprintf(log, "optbench: merge: note: '%s' is the working file of a merge into '%s' that did not "
                     "finish (killed, or its machine stopped); remove it%s once no merge runs\n", f, out,
                has_wal ? " with its -wal and -shm files" : "");
    }
    globfree(&g);
}

/* Removes the working file part with its -wal, -shm and -journal files:
 * the output under its working name, moved to OUT already, or incomplete. */
static void remove_working(const char *part)
{
    char p[PATH_MAX + 48];
    unlink(part);
    snprintf(p, sizeof p, "%s-wal", part);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", part);
    unlink(p);
    snprintf(p, sizeof p, "%s-journal", part);
    unlink(p);
}

ob_status ob_merge(const char *out, const char *const *inputs, int n, const char *name, FILE *log,
                   ob_merge_report *rep, ob_err *e)
{
    memset(rep, 0, sizeof *rep);
    if (n < 1) return ob_fail(e, OB_ERR_INPUT, "merge: no input databases given");
    OB_TRY(check_paths(out, inputs, n, e));
    source *src = calloc((size_t)n, sizeof *src);
    if (!src) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    cand *cands = NULL;
    int nc = 0;
    ob_status s = open_sources(src, inputs, n, &cands, &nc, rep, e);
    char matrix[32] = "";
    if (s == OB_OK) s = check_same_matrix(src, n, cands, nc, matrix, log, e);
    if (s == OB_OK) s = check_same_eval_every(src, n, e);
    if (s == OB_OK) note_shards(src, n, log);
    sbuf conflicts = {0};
    if (s == OB_OK) s = choose_runs(src, cands, nc, rep, &conflicts, log, e);
    /* The merged database is written under a name of its own beside OUT and
     * takes OUT's name only once it is complete: a merge killed (or whose
     * machine died) part way leaves no OUT that looks like a merge with
     * missing or no runs, and no OUT that a second merge refuses. */
    char part[PATH_MAX + 40];
    snprintf(part, sizeof part, "%s.merging-%ld", out, (long)getpid());
    ob_store *os = NULL;
    int created = 0;
    if (s == OB_OK) s = create_output(out, part, &os, &created, e);
    if (s == OB_OK) s = fill_output(os, out, src, n, cands, nc, name, matrix, &conflicts, rep, e);
    ob_store_close(os); /* the last connection */
    if (s == OB_OK && created) s = check_written_whole(part, out, e);
    if (s == OB_OK && created) s = name_output(part, out, e);
    if (created && log) note_leftovers(out, part, log); /* a merge into OUT that was killed left its working file */
    if (created) remove_working(part);
    free(conflicts.p);
    for (int i = 0; i < nc; i++) {
        free(cands[i].key);
        free(cands[i].label);
    }
    free(cands);
    free_sources(src, n);
    free(src);
    return s;
}
