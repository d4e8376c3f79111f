/* results/store_resume.c - the store's side of --resume, shards and merge
 * (see store.h): which stored benchmark a matrix continues, whether stored
 * settings are those of the current build, a grown matrix's cells, and the
 * state of single runs. */
#include "results/store.h"
#include "results/store_int.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ob_status ob_store_set_benchmark_origin(ob_store *s, int64_t bench_id, const char *shard,
                                        const char *provenance, ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "UPDATE benchmarks SET shard = ?2, provenance = ?3 WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    ob_st_bind_text(q, 2, shard);
    ob_st_bind_text(q, 3, provenance);
    ob_status st = ob_st_step_done(s, q, e, "recording the benchmark's shard");
    sqlite3_finalize(q);
    return st;
}

static int text_eq(sqlite3_stmt *q, int col, const char *v)
{
    const char *t = (const char *)sqlite3_column_text(q, col);
    if (!t || !v) return !t && !v;
    return strcmp(t, v) == 0;
}

const char *ob_store_defaults_text(const struct ob_optimizer_def *od, const struct ob_workload_def *wd)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        const void *def;
        char json[4096];
    } tab[64];
    static int n_tab;
    const void *def = od ? (const void *)od : (const void *)wd;
    const char *out = NULL;
    if (!def) return NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < n_tab && !out; i++)
        if (tab[i].def == def) out = tab[i].json;
    if (!out && n_tab < 64) {
        if (od) ob_optimizer_defaults_json(od, tab[n_tab].json, sizeof tab[n_tab].json);
        else ob_workload_defaults_json(wd, tab[n_tab].json, sizeof tab[n_tab].json);
        tab[n_tab].def = def;
        out = tab[n_tab++].json;
    }
    pthread_mutex_unlock(&mu);
    return out; /* kept for the process, never changed once made */
}

/* ob_defaults(kind, name) (ob_store_sql_defaults). */
static void sql_defaults(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *name = (const char *)sqlite3_value_text(argv[1]);
    const int kind = sqlite3_value_int(argv[0]);
    const ob_optimizer_def *od = name && kind == 0 ? ob_optimizer_find(name) : NULL;
    const ob_workload_def *wd = name && kind == 1 ? ob_workload_find(name) : NULL;
    const char *t = ob_store_defaults_text(od, wd);
    char buf[4096];
    if (!t && (od || wd)) { /* past the 64 kept */
        if (od) ob_optimizer_defaults_json(od, buf, sizeof buf);
        else ob_workload_defaults_json(wd, buf, sizeof buf);
        t = buf;
    }
    if (t) sqlite3_result_text(cx, t, -1, SQLITE_TRANSIENT);
    else sqlite3_result_null(cx);
}

int ob_store_sql_defaults(sqlite3 *db)
{
    return sqlite3_create_function(db, "ob_defaults", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_defaults, NULL,
                                   NULL);
}

int ob_store_equivalent(ob_store *s, const char *stored, const char *current, const char *defaults, char *added,
                        size_t added_n)
{
    if (added && added_n) added[0] = '\0';
    if (!stored || !current || !defaults) return 0;
    /* each side's leaves (fullkey, value); a leaf not at its default must be
     * on the other side with the same value (values compare as SQLite
     * values: numbers exactly, by value) */
    static const char *const sql =
        "WITH s(k, v) AS (SELECT fullkey, atom FROM json_tree(?1) WHERE type NOT IN ('object', 'array')), "
        "c(k, v, name) AS (SELECT fullkey, atom, CASE WHEN path = '$' THEN key ELSE substr(path, 3) || '.' || key END "
        "FROM json_tree(?2) WHERE type NOT IN ('object', 'array')) "
        "SELECT NOT EXISTS (SELECT 1 FROM s WHERE (json_type(?3, s.k) IS NULL OR json_extract(?3, s.k) IS NOT s.v) "
        "AND NOT EXISTS (SELECT 1 FROM c WHERE c.k = s.k AND c.v IS s.v)) "
        "AND NOT EXISTS (SELECT 1 FROM c WHERE (json_type(?3, c.k) IS NULL OR json_extract(?3, c.k) IS NOT c.v) "
        "AND NOT EXISTS (SELECT 1 FROM s WHERE s.k = c.k AND s.v IS c.v)), "
        "(SELECT group_concat(name, ', ') FROM (SELECT name FROM c WHERE k NOT IN (SELECT k FROM s) ORDER BY k))";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return 0;
    }
    ob_st_bind_text(q, 1, stored);
    ob_st_bind_text(q, 2, current);
    ob_st_bind_text(q, 3, defaults);
    /* malformed JSON fails the step: not the same */
    const int eq = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
    if (eq && added && added_n && sqlite3_column_text(q, 1))
        snprintf(added, added_n, "%s", (const char *)sqlite3_column_text(q, 1));
    sqlite3_finalize(q);
    return eq;
}

/* ob_store_equivalent with the last answer kept: a matrix's cells repeat
 * their texts (every seed of an lr has the same), so each pair of texts is
 * compared once in a row. */
typedef struct equiv_memo {
    char *stored, *current;
    const char *defaults;
    int eq;
} equiv_memo;

static int equivalent_memo(ob_store *s, equiv_memo *m, const char *stored, const char *current, const char *defaults)
{
    if (m->stored && stored && current && m->defaults == defaults && !strcmp(m->stored, stored) &&
        !strcmp(m->current, current))
        return m->eq;
    const int eq = ob_store_equivalent(s, stored, current, defaults, NULL, 0);
    free(m->stored);
    free(m->current);
    m->stored = stored ? strdup(stored) : NULL;
    m->current = current ? strdup(current) : NULL;
    if (!m->stored || !m->current) {
        free(m->stored);
        free(m->current);
        m->stored = m->current = NULL;
    }
    m->defaults = defaults;
    m->eq = eq;
    return eq;
}

ob_status ob_store_sweep_texts(ob_store *s, int64_t bench_id, int64_t cell, char *wl, size_t wl_n, char *hp,
                               size_t hp_n, int *found, ob_err *e)
{
    *found = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_stmt(s, ST_SWEEP_TEXTS, &q, e)); /* once per cell of a benchmark: prepared once */
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, cell);
    ob_status st = OB_OK;
    const int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        const char *w = (const char *)sqlite3_column_text(q, 0), *h = (const char *)sqlite3_column_text(q, 1);
        /* a text that does not fit is not cut: the caller keeps its own */
        *found = w && h && strlen(w) < wl_n && strlen(h) < hp_n;
        if (*found) {
            memcpy(wl, w, strlen(w) + 1);
            memcpy(hp, h, strlen(h) + 1);
        }
    } else if (rc != SQLITE_DONE) {
        st = ob_st_db_fail(s, e, "reading a run's settings");
    }
    sqlite3_reset(q); /* ends its read */
    return st;
}

/* The texts of stored run qr (cell), its workload parameters and
 * hyperparameters, against those of r, the matrix's i-th cell: where they
 * differ, how into what (left empty where they do not). Texts that differ
 * only by keys at their defaults (a key added since) are the same where
 * relaxed is given, and relaxed[i] then says whether they did. */
static void texts_difference(ob_store *s, sqlite3_stmt *qr, int64_t cell, const ob_run_spec *r, int i,
                             unsigned char *relaxed, equiv_memo *memo, char *what, size_t what_n)
{
    const int wl_eq = text_eq(qr, 3, r->workload_params),
              hp_eq = text_eq(qr, 5, r->hparams);
    const int wl_ok = wl_eq || (relaxed && equivalent_memo(s, &memo[0], (const char *)sqlite3_column_text(qr, 3),
                                                           r->workload_params, r->workload_defaults));
    const int hp_ok = hp_eq || (relaxed && equivalent_memo(s, &memo[1], (const char *)sqlite3_column_text(qr, 5),
                                                           r->hparams, r->hparams_defaults));
    if (!wl_ok)
        snprintf(what, what_n, "its cell %lld has other workload parameters", (long long)cell);
    else if (!hp_ok)
        snprintf(what, what_n, "its cell %lld has other hyperparameters", (long long)cell);
    else if (relaxed)
        relaxed[i] = !wl_eq || !hp_eq;
}

/* Stored run qr (cell) against r, the matrix's i-th cell: its cell index,
 * workload, optimizer, lr, seed, steps and then texts (texts_difference,
 * which relaxed and memo are for); where they differ, how into what (left
 * empty where they do not). */
static void run_difference(ob_store *s, sqlite3_stmt *qr, int64_t cell, const ob_run_spec *r, int i,
                           unsigned char *relaxed, equiv_memo *memo, char *what, size_t what_n)
{
    if (cell != r->cell)
        snprintf(what, what_n, cell > r->cell ? "it lacks cell %lld" : "its cell %lld is not in this matrix",
                 (long long)(cell > r->cell ? r->cell : cell));
    else if (!text_eq(qr, 2, r->workload) || !text_eq(qr, 4, r->optimizer))
        /* another list of workloads or optimizers shifts the cells */
        snprintf(what, what_n, "its cell %lld is %s on %s, this matrix's is %s on %s", (long long)cell,
                 (const char *)sqlite3_column_text(qr, 4), (const char *)sqlite3_column_text(qr, 2), r->optimizer,
                 r->workload);
    else if (sqlite3_column_double(qr, 6) != r->lr)
        snprintf(what, what_n, "its cell %lld has lr %g, this matrix %g", (long long)cell,
                 sqlite3_column_double(qr, 6), r->lr);
    else if (sqlite3_column_int64(qr, 7) != r->seed)
        snprintf(what, what_n, "its cell %lld has seed %lld, this matrix %lld", (long long)cell,
                 (long long)sqlite3_column_int64(qr, 7), (long long)r->seed);
    else if (sqlite3_column_int64(qr, 8) != r->steps)
        snprintf(what, what_n, "its cell %lld has %lld steps, this matrix %lld", (long long)cell,
                 (long long)sqlite3_column_int64(qr, 8), (long long)r->steps);
    else
        texts_difference(s, qr, cell, r, i, relaxed, memo, what, what_n);
}

/* The sweep runs of benchmark b (merged: of merged shards), read with qr,
 * against the matrix's n cells specs, in cell order: each run's id into
 * run_ids (0 for a cell a merged benchmark lacks), relaxed as
 * texts_difference says. *ok is 1 where they are the same cells, else 0
 * with how they differ in diff; a failed read is an error. */
static ob_status match_runs(ob_store *s, sqlite3_stmt *qr, int64_t b, int merged, const ob_run_spec *specs, int n,
                            int64_t *run_ids, unsigned char *relaxed, equiv_memo *memo, int *ok, char *diff,
                            size_t diff_n, ob_err *e)
{
    sqlite3_reset(qr);
    sqlite3_bind_int64(qr, 1, b);
    int i = 0, matched = 0, rc = SQLITE_DONE;
    *ok = 1;
    while (*ok && (rc = sqlite3_step(qr)) == SQLITE_ROW) {
        int64_t cell = sqlite3_column_int64(qr, 1);
        /* a merged benchmark may lack cells (a shard's database not
         * merged): they are added when it continues */
        while (merged && i < n && specs[i].cell < cell) run_ids[i++] = 0;
        if (i >= n) {
            *ok = 0;
            snprintf(diff, diff_n, "it has more cells than this matrix (%d)", n);
            break;
        }
        char what[300] = "";
        run_difference(s, qr, cell, &specs[i], i, relaxed, memo, what, sizeof what);
        if (what[0]) {
            *ok = 0;
            snprintf(diff, diff_n, "%s", what);
            break;
        }
        run_ids[i++] = sqlite3_column_int64(qr, 0);
        matched++;
    }
    if (*ok && rc != SQLITE_DONE) return ob_st_db_fail(s, e, "reading the runs of a benchmark");
    if (*ok && merged)
        while (i < n) run_ids[i++] = 0;
    if (*ok && i != n) {
        *ok = 0;
        snprintf(diff, diff_n, "it has %d cells, this matrix %d", i, n);
    }
    if (*ok && matched == 0) {
        *ok = 0;
        snprintf(diff, diff_n, "it has no cells");
    }
    return OB_OK;
}

ob_status ob_store_find_benchmark(ob_store *s, const char *shard, const ob_run_spec *specs, int n,
                                  int64_t *bench_id, int64_t *run_ids, unsigned char *relaxed, char *why,
                                  size_t why_n, ob_err *e)
{
    *bench_id = 0;
    if (relaxed)
        for (int i = 0; i < n; i++) relaxed[i] = 0;
    if (why && why_n) snprintf(why, why_n, "no earlier benchmark%s%s in '%s'", shard ? " of shard " : "",
                               shard ? shard : "", s->path);
    sqlite3_stmt *qb = NULL, *qr = NULL;
    /* a shard continues its own benchmark; the whole matrix also continues a
     * merged one (the shards' databases merged: its confirmation stage, or
     * the cells a shard left unfinished or a missing shard never ran) */
    /* merged: its provenance lists sources (a shard's own records its matrix) */
    OB_TRY(ob_st_prep(s, "SELECT id, merged FROM (SELECT id, shard, CASE WHEN json_valid(provenance) THEN "
                         "json_extract(provenance, '$.sources') IS NOT NULL ELSE 0 END AS merged FROM benchmarks) "
                         "WHERE shard IS ?1 AND (NOT merged OR ?1 IS NULL) ORDER BY id DESC LIMIT 64",
                      &qb, e));
    ob_status st = ob_st_prep(s, "SELECT id, cell, workload, workload_params, optimizer, hparams, lr, "
                                 "seed, steps FROM runs WHERE benchmark_id = ?1 AND stage IS NULL "
                                 "ORDER BY cell, id", &qr, e);
    ob_st_bind_text(qb, 1, shard);
    equiv_memo memo[2] = {{0}, {0}}; /* workload parameters, hyperparameters */
    int first = 1, rc = SQLITE_DONE;
    while (st == OB_OK && !*bench_id && (rc = sqlite3_step(qb)) == SQLITE_ROW) {
        int64_t b = sqlite3_column_int64(qb, 0);
        int merged = sqlite3_column_int(qb, 1);
        int ok;
        char diff[320] = "";
        st = match_runs(s, qr, b, merged, specs, n, run_ids, relaxed, memo, &ok, diff, sizeof diff, e);
        if (st == OB_OK && ok) *bench_id = b;
        else if (relaxed)
            for (int k = 0; k < n; k++) relaxed[k] = 0;
        if (st == OB_OK && !ok && first && why && why_n)
            snprintf(why, why_n, "the newest benchmark%s%s (%lld) differs: %s", shard ? " of shard " : "",
                     shard ? shard : "", (long long)b, diff);
        first = 0;
    }
    /* a failed step is an error, not "no earlier benchmark" (which would run
     * everything again) */
    if (st == OB_OK && !*bench_id && rc != SQLITE_DONE)
        st = ob_st_db_fail(s, e, "looking for the benchmark to continue");
    sqlite3_finalize(qb);
    sqlite3_finalize(qr);
    for (int k = 0; k < 2; k++) {
        free(memo[k].stored);
        free(memo[k].current);
    }
    return st;
}


/* ---- a grown matrix: --resume of a benchmark whose runs are part of it ---- */

/* Retires run id, a confirmation run: cell -id, kept with its results, at
 * no cell of the matrix; one that had not finished (pending, interrupted)
 * is failed with a reason, as no process will run it (one running goes on,
 * and its results are kept as they come). */
static ob_status retire_run(ob_store *s, int64_t id, const char *why, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "UPDATE runs SET cell = -id, status = CASE WHEN status IN ('pending', 'interrupted') "
                         "THEN 'failed' ELSE status END, error = CASE WHEN status IN ('pending', 'interrupted') "
                         "THEN ?2 ELSE error END WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, id);
    ob_st_bind_text(q, 2, why);
    ob_status st = ob_st_step_done(s, q, e, "retiring a confirmation run");
    sqlite3_finalize(q);
    return st;
}




/* A run's identity (what --resume, compare and history know a run by) and
 * where it is among the specs. */
typedef struct run_ident {
    const char *workload, *params, *optimizer, *hparams;
    double lr;
    int64_t steps, seed;
    int k;
} run_ident;

static int str_cmp(const char *a, const char *b)
{
    if (!a || !b) return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

/* By workload, parameters and optimizer (depth 1), then hyperparameters, lr
 * and steps (2: the identity but the seed), then the seed (3). */
static int ident_cmp(const run_ident *a, const run_ident *b, int depth)
{
    int c;
    if ((c = str_cmp(a->workload, b->workload)) || (c = str_cmp(a->params, b->params)) ||
        (c = str_cmp(a->optimizer, b->optimizer)) || depth < 2)
        return c;
    if ((c = str_cmp(a->hparams, b->hparams))) return c;
    if (a->lr != b->lr) return a->lr < b->lr ? -1 : 1;
    if (a->steps != b->steps) return a->steps < b->steps ? -1 : 1;
    if (depth < 3) return 0;
    return (a->seed > b->seed) - (a->seed < b->seed);
}

static int cmp_ident_k(const void *pa, const void *pb)
{
    const run_ident *a = pa, *b = pb;
    int c = ident_cmp(a, b, 3);
    return c ? c : (a->k > b->k) - (a->k < b->k);
}

/* The first of v[0..n) (sorted) not below key at depth; n when none. */
static int lower_bound(const run_ident *v, int n, const run_ident *key, int depth)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ident_cmp(&v[mid], key, depth) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* What grow_candidate's matching of its stored runs shares */
typedef struct grow_ctx {
    ob_store *s;
    const ob_run_spec *specs;
    const run_ident *v;          /* the specs' identities, sorted */
    int n;
    const ob_grow_plan *plan;
    int64_t *run_ids;            /* (n) the stored run of each spec, 0 for none */
    int *held, *retired;
    int apply;
    char *why;
    size_t why_n;
} grow_ctx;

enum { GROW_MATCHED, GROW_SKIP, GROW_BAD };

/* Sweep run id (r; what: its text for messages) of the stored benchmark:
 * GROW_MATCHED with the cell of its spec in this matrix (and the spec, k_spec),
 * or GROW_BAD (c->why) where it is not in the matrix or its cell is taken. */
static int grow_sweep_run(grow_ctx *c, int64_t id, const run_ident *r, const char *what, int64_t *cell, int *k_spec)
{
    const int at = lower_bound(c->v, c->n, r, 3);
    if (at == c->n || ident_cmp(&c->v[at], r, 3) != 0) {
        snprintf(c->why, c->why_n, "its run %lld (%s) is not in this matrix", (long long)id, what);
        return GROW_BAD;
    }
    const int k = c->v[at].k;
    if (c->run_ids[k]) {
        snprintf(c->why, c->why_n, "it holds two runs of one cell (%s: runs %lld and %lld)", what,
                 (long long)c->run_ids[k], (long long)id);
        return GROW_BAD;
    }
    c->run_ids[k] = id;
    (*c->held)++;
    *cell = c->specs[k].cell;
    *k_spec = k;
    return GROW_MATCHED;
}

/* Confirmation run id (r, stored at stored_cell) of the stored benchmark:
 * GROW_MATCHED with its cell in this matrix (its pair's cell for its fresh
 * seed) and the spec of its sweep cell (k_spec); GROW_SKIP where it was
 * retired before, or is retired now (retired by *st's write where
 * c->apply); GROW_BAD (c->why) where this matrix has no place for it. */
static int grow_confirm_run(grow_ctx *c, int64_t id, const run_ident *r, int64_t stored_cell, const char *what,
                            int64_t *cell, int *k_spec, ob_status *st, ob_err *e)
{
    /* A confirmation run keeps its place where it still has one: where this
     * matrix adds runs of its optimizer on its workload configuration (other
     * lrs, seeds or configurations there), the confirmation stage runs again
     * and retires it if it confirms another lr. One whose seed the sweep now
     * runs (more seeds) is retired now: kept, at no cell of the matrix (-id).
     * One retired before stays so. The sweep's runs came first: a cell not
     * matched now is new. */
    if (stored_cell < 0) return GROW_SKIP;
    const int at = lower_bound(c->v, c->n, r, 2);
    const int64_t j = r->seed - c->plan->confirm_seed0;
    /* below the fresh seeds: retired where the grown sweep runs that seed */
    const int at3 = j < 0 ? lower_bound(c->v, c->n, r, 3) : c->n;
    const int swept = j < 0 && at3 < c->n && ident_cmp(&c->v[at3], r, 3) == 0;
    if (at == c->n || ident_cmp(&c->v[at], r, 2) != 0 || j >= c->plan->confirm_stride || (j < 0 && !swept)) {
        snprintf(c->why, c->why_n, "its confirmation run %lld (%s) is not one of this matrix's%s", (long long)id,
                 what, j < 0 && at < c->n ? " (its seed is neither a fresh seed nor one of the sweep's)" : "");
        return GROW_BAD;
    }
    if (j < 0) {
        (*c->retired)++;
        if (c->apply) *st = retire_run(c->s, id, "retired before it finished: the grown sweep runs its seed", e);
        return GROW_SKIP;
    }
    *cell = c->plan->confirm_base + (int64_t)c->plan->pair[c->v[at].k] * c->plan->confirm_stride + j;
    *k_spec = c->v[at].k;
    return GROW_MATCHED;
}

/* Whether benchmark b's runs are all part of this matrix (see
 * ob_store_find_grown; v: the specs' identities, sorted); with apply, each
 * takes its cell in this matrix. */
static ob_status grow_candidate(ob_store *s, int64_t b, const ob_run_spec *specs, const run_ident *v, int n,
                                const ob_grow_plan *plan, int64_t *run_ids, int *held, int *retired, int apply, int *ok,
                                char *why, size_t why_n, ob_err *e)
{
    *ok = 0;
    *held = 0;
    *retired = 0;
    grow_ctx c = {.s = s, .specs = specs, .v = v, .n = n, .plan = plan, .run_ids = run_ids, .held = held,
                  .retired = retired, .apply = apply, .why = why, .why_n = why_n};
    sqlite3_stmt *q = NULL, *qu = NULL;
    OB_TRY(ob_st_prep(s,
                      "SELECT id, stage IS NOT NULL, workload, " OB_STORE_CANON_SQL("1", "workload_params", "workload")
                      ", optimizer, " OB_STORE_CANON_SQL("0", "hparams", "optimizer") ", lr, steps, seed, cell "
                      "FROM runs WHERE benchmark_id = ?1 ORDER BY stage IS NOT NULL, cell, id", &q, e));
    /* a run of a search of one study kept as the first of several: named so
     * (its text then is the one the search of K studies stores) */
    ob_status st = apply ? ob_st_prep(s,
                                      "UPDATE runs SET cell = ?2, hparams = CASE WHEN ?3 AND json_valid(hparams) AND "
                                      "json_type(hparams, '$.search') IS NULL THEN json_set(hparams, '$.search', "
                                      "json('" OB_STORE_STUDY0 "')) ELSE hparams END WHERE id = ?1",
                                      &qu, e)
                         : OB_OK;
    sqlite3_bind_int64(q, 1, b);
    for (int i = 0; i < n; i++) run_ids[i] = 0;
    int rc = SQLITE_DONE, bad = 0;
    while (st == OB_OK && !bad && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const int64_t id = sqlite3_column_int64(q, 0);
        const run_ident r = {(const char *)sqlite3_column_text(q, 2), (const char *)sqlite3_column_text(q, 3),
                             (const char *)sqlite3_column_text(q, 4), (const char *)sqlite3_column_text(q, 5),
                             sqlite3_column_double(q, 6), sqlite3_column_int64(q, 7), sqlite3_column_int64(q, 8),
                             -1};
        char what[200];
        snprintf(what, sizeof what, "%s on %s, lr %g, seed %lld", r.optimizer ? r.optimizer : "?",
                 r.workload ? r.workload : "?", r.lr, (long long)r.seed);
        int64_t cell = 0;
        int k_spec = 0; /* the spec whose texts it has (a confirmation run's sweep cell) */
        const int m = !sqlite3_column_int(q, 1)
                          ? grow_sweep_run(&c, id, &r, what, &cell, &k_spec)
                          : grow_confirm_run(&c, id, &r, sqlite3_column_int64(q, 9), what, &cell, &k_spec, &st, e);
        bad = m == GROW_BAD;
        if (m != GROW_MATCHED || !apply) continue;
        const char *h = specs[k_spec].hparams;
        sqlite3_reset(qu);
        sqlite3_bind_int64(qu, 1, id);
        sqlite3_bind_int64(qu, 2, cell);
        sqlite3_bind_int(qu, 3, h && strstr(h, ",\"search\":" OB_STORE_STUDY0) != NULL);
        st = ob_st_step_done(s, qu, e, "renumbering the runs of a grown benchmark");
    }
    if (st == OB_OK && !bad && rc != SQLITE_DONE) st = ob_st_db_fail(s, e, "reading the runs of a benchmark");
    if (st == OB_OK && !bad && *held == 0) snprintf(why, why_n, "it has no cells");
    else if (st == OB_OK && !bad) *ok = 1;
    sqlite3_finalize(q);
    sqlite3_finalize(qu);
    return st;
}

static void idents_free(run_ident *v, int n)
{
    for (int k = 0; v && k < n; k++) {
        free((char *)v[k].params);
        free((char *)v[k].hparams);
    }
    free(v);
}

/* The specs' identities, their texts over the defaults (owned: idents_free),
 * sorted. */
static ob_status sorted_idents(ob_store *s, const ob_run_spec *specs, int n, run_ident **out, ob_err *e)
{
    run_ident *v = calloc((size_t)n + 1, sizeof *v);
    if (!v) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n);
    sqlite3_stmt *q = NULL;
    ob_status st =
        ob_st_prep(s, "SELECT " OB_STORE_CANON_SQL("1", "?2", "?1") ", " OB_STORE_CANON_SQL("0", "?4", "?3"), &q, e);
    for (int k = 0; k < n && st == OB_OK; k++) {
        const ob_run_spec *r = &specs[k];
        sqlite3_reset(q);
        ob_st_bind_text(q, 1, r->workload);
        ob_st_bind_text(q, 2, r->workload_params);
        ob_st_bind_text(q, 3, r->optimizer);
        ob_st_bind_text(q, 4, r->hparams);
        if (sqlite3_step(q) != SQLITE_ROW) {
            st = ob_st_db_fail(s, e, "reading this matrix's settings");
            break;
        }
        const char *w = (const char *)sqlite3_column_text(q, 0), *h = (const char *)sqlite3_column_text(q, 1);
        v[k] = (run_ident){r->workload, w ? strdup(w) : NULL, r->optimizer, h ? strdup(h) : NULL, r->lr, r->steps,
                           r->seed, k};
        if ((w && !v[k].params) || (h && !v[k].hparams)) st = ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n);
    }
    sqlite3_finalize(q);
    if (st != OB_OK) {
        idents_free(v, n);
        return st;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_ident_k);
    *out = v;
    return OB_OK;
}

ob_status ob_store_find_grown(ob_store *s, const ob_run_spec *specs, int n, const ob_grow_plan *plan,
                              int64_t *bench_id, int64_t *run_ids, int *held, int *retired, char *why, size_t why_n,
                              ob_err *e)
{
    *retired = 0;
    *bench_id = 0;
    *held = 0;
    if (why && why_n) why[0] = '\0';
    run_ident *v = NULL;
    OB_TRY(sorted_idents(s, specs, n, &v, e));
    sqlite3_stmt *qb = NULL;
    ob_status st = ob_st_prep(s, "SELECT id FROM benchmarks WHERE shard IS NULL ORDER BY id DESC LIMIT 64", &qb, e);
    int rc = SQLITE_DONE, first = 1;
    while (st == OB_OK && !*bench_id && (rc = sqlite3_step(qb)) == SQLITE_ROW) {
        const int64_t b = sqlite3_column_int64(qb, 0);
        char diff[400] = "";
        int ok = 0;
        st = grow_candidate(s, b, specs, v, n, plan, run_ids, held, retired, 0, &ok, diff, sizeof diff, e);
        if (st == OB_OK && ok) *bench_id = b;
        else if (st == OB_OK && first && why && why_n)
            snprintf(why, why_n, "the newest benchmark (%lld) is not part of this matrix: %s", (long long)b, diff);
        first = 0;
    }
    if (st == OB_OK && !*bench_id && rc != SQLITE_DONE)
        st = ob_st_db_fail(s, e, "looking for the benchmark to continue");
    if (st != OB_OK || !*bench_id) *held = *retired = 0;
    sqlite3_finalize(qb);
    idents_free(v, n);
    return st;
}

ob_status ob_store_grow(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n, const ob_grow_plan *plan,
                        int64_t *run_ids, int *retired, ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    run_ident *v = NULL;
    OB_TRY(sorted_idents(s, specs, n, &v, e));
    char why[400] = "";
    int held = 0, ok = 0;
    ob_status st = ob_st_begin(s, e);
    if (st == OB_OK)
        st = grow_candidate(s, bench_id, specs, v, n, plan, run_ids, &held, retired, 1, &ok, why, sizeof why, e);
    if (st == OB_OK && !ok)
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "benchmark %lld is no longer part of this matrix: %s",
                              (long long)bench_id, why);
    idents_free(v, n);
    return ob_st_commit_or_rollback(s, st, e);
}
int ob_store_status_finished(const char *status)
{
    return !strcmp(status, "done") || !strcmp(status, "diverged");
}

int ob_store_status_known(const char *status)
{
    static const char *const known[] = {"pending", "running", "done", "diverged", "failed", "interrupted"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(status, known[i])) return 1;
    return 0;
}

/* One text column of a run (sql selects it by id ?1) into buf; what names it
 * in a failure's message. */
static ob_status run_text(ob_store *s, int64_t run_id, const char *sql, const char *what, char *buf, size_t n,
                          ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, sql, &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_status st = OB_OK;
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(q, 0);
        snprintf(buf, n, "%s", t ? (const char *)t : "");
    } else if (rc == SQLITE_DONE) {
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "no run %lld in '%s'", (long long)run_id, s->path);
    } else {
        st = ob_st_db_fail(s, e, what);
    }
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_run_status(ob_store *s, int64_t run_id, char *status, size_t n, ob_err *e)
{
    return run_text(s, run_id, "SELECT status FROM runs WHERE id = ?1", "reading a run's status", status, n, e);
}

ob_status ob_store_run_other_cpu(ob_store *s, int64_t run_id, double *share, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    *share = NAN;
    OB_TRY(ob_st_prep(s, "SELECT other_cpu FROM runs WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_status st = OB_OK;
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_type(q, 0) != SQLITE_NULL) *share = sqlite3_column_double(q, 0);
    } else if (rc == SQLITE_DONE) {
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "no run %lld in '%s'", (long long)run_id, s->path);
    } else {
        st = ob_st_db_fail(s, e, "reading a run's share of busy CPUs");
    }
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_run_error(ob_store *s, int64_t run_id, char *buf, size_t n, ob_err *e)
{
    return run_text(s, run_id, "SELECT coalesce(error, '') FROM runs WHERE id = ?1", "reading a run's error", buf, n,
                    e);
}

ob_status ob_store_resume_run(ob_store *s, int64_t run_id, int64_t after, ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    static const char *const sql[] = {
        "DELETE FROM curves WHERE run_id = ?1 AND step > ?2",
        "DELETE FROM evals WHERE run_id = ?1 AND step > ?2",
        /* a start over (?2 = -1) keeps the earlier ones' 'restarted' events:
         * each counts a time the run's steps were done again */
        "DELETE FROM events WHERE run_id = ?1 AND (step > ?2 OR step IS NULL OR kind = 'diverged') "
        "AND kind <> 'restarted'",
        "UPDATE runs SET status = 'running', steps_done = max(?2, 0), final_loss = NULL, "
        "best_loss = NULL, eval_loss = NULL, eval_metric = NULL, step_ms_median = NULL, "
        "step_ms_p90 = NULL, step_ms_mean = NULL, opt_ms_median = NULL, opt_ms_mean = NULL, items_per_sec = NULL, diverged_step = NULL, finished_at = NULL, device_mem_bytes = NULL, "
        "error = NULL, origin = CASE WHEN ?2 > 0 THEN origin END, "
        "started_at = coalesce(started_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) "
        "WHERE id = ?1",
    };
    OB_TRY(ob_st_begin(s, e));
    ob_status st = OB_OK;
    for (size_t i = 0; i < sizeof sql / sizeof sql[0] && st == OB_OK; i++) {
        sqlite3_stmt *q = NULL;
        st = ob_st_prep(s, sql[i], &q, e);
        if (st != OB_OK) break;
        sqlite3_bind_int64(q, 1, run_id);
        sqlite3_bind_int64(q, 2, after < 0 ? -1 : after);
        st = ob_st_step_done(s, q, e, "preparing a run to resume");
        sqlite3_finalize(q);
    }
    return ob_st_commit_or_rollback(s, st, e);
}

ob_status ob_store_read_losses(ob_store *s, int64_t run_id, int64_t upto, double *loss, int64_t *n,
                               ob_err *e)
{
    *n = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "SELECT step, loss FROM curves WHERE run_id = ?1 AND step BETWEEN 1 AND ?2 "
                         "ORDER BY step", &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    sqlite3_bind_int64(q, 2, upto);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t step = sqlite3_column_int64(q, 0);
        if (step != *n + 1) break; /* a gap: only the leading steps count */
        loss[(*n)++] = sqlite3_column_type(q, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 1);
    }
    ob_status st = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? OB_OK : ob_st_db_fail(s, e, "reading a curve");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_unfinished_runs(ob_store *s, int64_t bench_id, int sweep_only, int *n, ob_err *e)
{
    *n = 0;
    sqlite3_stmt *q = NULL;
    /* a retired run (cell -id) is no cell of the matrix */
    OB_TRY(ob_st_prep(s, "SELECT count(*) FROM runs WHERE benchmark_id = ?1 AND "
                         "status IN ('pending', 'running', 'interrupted') AND (?2 = 0 OR stage IS NULL) AND "
                         "(cell IS NULL OR cell >= 0)", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int(q, 2, sweep_only);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) *n = sqlite3_column_int(q, 0);
    else st = ob_st_db_fail(s, e, "counting unfinished runs");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_set_benchmark_config(ob_store *s, int64_t bench_id, const char *config, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "UPDATE benchmarks SET config = ?2 WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    ob_st_bind_text(q, 2, config);
    ob_status st = ob_st_update_one(s, q, "recording the benchmark's configuration", bench_id, e);
    sqlite3_finalize(q);
    return st;
}

/* The text the query sql (one column, the benchmark's id as ?1) reads, in
 * *out (malloc'd; NULL where it is NULL or there is no such benchmark). */
static ob_status benchmark_text(ob_store *s, const char *sql, int64_t bench_id, char **out, const char *what,
                                ob_err *e)
{
    *out = NULL;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, sql, &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    ob_status st = OB_OK;
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
        *out = strdup((const char *)sqlite3_column_text(q, 0));
        if (!*out) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        st = ob_st_db_fail(s, e, what);
    }
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_benchmark_config(ob_store *s, int64_t bench_id, char **config, ob_err *e)
{
    return benchmark_text(s, "SELECT config FROM benchmarks WHERE id = ?1", bench_id, config,
                          "reading a benchmark's configuration", e);
}

ob_status ob_store_benchmark_device(ob_store *s, int64_t bench_id, char **device, ob_err *e)
{
    return benchmark_text(s, "SELECT device FROM benchmarks WHERE id = ?1", bench_id, device,
                          "reading a benchmark's device", e);
}

ob_status ob_store_curve_steps(ob_store *s, int64_t run_id, int64_t *step, ob_err *e)
{
    *step = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "SELECT coalesce(max(step), 0) FROM curves WHERE run_id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) *step = sqlite3_column_int64(q, 0);
    else st = ob_st_db_fail(s, e, "reading a run's last step");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_eval_schedule(ob_store *s, int64_t bench_id, int64_t *first, int *at_start, int64_t *reached,
                                 ob_err *e)
{
    *first = 0;
    *at_start = 0;
    *reached = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "SELECT (SELECT min(v.step) FROM evals v JOIN runs r ON r.id = v.run_id "
                         "        WHERE r.benchmark_id = ?1 AND r.stage IS NULL AND v.step > 0 AND v.step < r.steps), "
                         "       EXISTS (SELECT 1 FROM evals v JOIN runs r ON r.id = v.run_id "
                         "        WHERE r.benchmark_id = ?1 AND r.stage IS NULL AND v.step = 0), "
                         "       (SELECT coalesce(max(c.step), 0) FROM curves c JOIN runs r ON r.id = c.run_id "
                         "        WHERE r.benchmark_id = ?1 AND r.stage IS NULL AND r.diverged_step IS NULL)",
                      &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) {
        *first = sqlite3_column_int64(q, 0);
        *at_start = sqlite3_column_int(q, 1);
        *reached = sqlite3_column_int64(q, 2);
    } else {
        st = ob_st_db_fail(s, e, "reading a benchmark's evaluation steps");
    }
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_sweep_finals(ob_store *s, int64_t bench_id, int64_t cell_lo, int64_t cell_hi, double *lr,
                                double *final, int cap, int *n, ob_err *e)
{
    *n = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "SELECT lr, status, final_loss FROM runs WHERE benchmark_id = ?1 AND stage IS NULL "
                         "AND cell BETWEEN ?2 AND ?3 ORDER BY cell, id", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, cell_lo);
    sqlite3_bind_int64(q, 3, cell_hi);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW && *n < cap) {
        const char *status = (const char *)sqlite3_column_text(q, 1);
        double f = NAN;
        /* as the report counts them (ob_stat_best_lr's rule): diverged, or
         * finished without a finite final loss (every step of its last 10%
         * skipped as non-finite), is +inf; unfinished is unknown (NaN) */
        if (status && !strcmp(status, "diverged")) f = INFINITY;
        else if (status && !strcmp(status, "done"))
            f = sqlite3_column_type(q, 2) != SQLITE_NULL && isfinite(sqlite3_column_double(q, 2))
                    ? sqlite3_column_double(q, 2)
                    : INFINITY;
        lr[*n] = sqlite3_column_double(q, 0);
        final[(*n)++] = f;
    }
    ob_status st = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? OB_OK : ob_st_db_fail(s, e, "reading the sweep's results");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_confirm_runs(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n, int64_t *ids,
                                int *added, int *retired, ob_err *e)
{
    *added = 0;
    *retired = 0;
    sqlite3_stmt *qf = NULL, *qa = NULL;
    OB_TRY(ob_st_stmt(s, ST_ADD_RUN, &qa, e));
    OB_TRY(ob_st_prep(s, "SELECT id, workload, optimizer, lr, seed FROM runs WHERE benchmark_id = ?1 AND "
                         "stage = 'confirm' AND cell = ?2 ORDER BY id LIMIT 1", &qf, e));
    /* one write transaction: a second process finishing the sweep at the same
     * moment waits here, then finds the runs this one added */
    ob_status st = ob_st_begin(s, e);
    for (int i = 0; i < n && st == OB_OK; i++) {
        const ob_run_spec *r = &specs[i];
        sqlite3_reset(qf);
        sqlite3_bind_int64(qf, 1, bench_id);
        sqlite3_bind_int64(qf, 2, r->cell);
        int rc = sqlite3_step(qf);
        if (rc == SQLITE_ROW) {
            const int64_t old = sqlite3_column_int64(qf, 0);
            if (!text_eq(qf, 1, r->workload) || !text_eq(qf, 2, r->optimizer) ||
                sqlite3_column_int64(qf, 4) != r->seed) {
                st = ob_fail(e, OB_ERR_INPUT,
                             "database '%s': benchmark %lld already holds a confirmation run %lld for cell %lld "
                             "that is another (workload, optimizer, seed) than this one; not adding to it",
                             s->path, (long long)bench_id, (long long)old, (long long)r->cell);
                continue;
            }
            if (sqlite3_column_double(qf, 3) == r->lr) {
                ids[i] = old;
                continue;
            }
            /* it confirms an lr that is no longer the best: retired, kept */
            sqlite3_reset(qf);
            st = retire_run(s, old, "retired before it finished: the sweep's best lr moved", e);
            if (st != OB_OK) break;
            (*retired)++;
        } else if (rc != SQLITE_DONE) {
            st = ob_st_db_fail(s, e, "looking for confirmation runs");
            break;
        }
        ob_st_bind_spec(qa, bench_id, r, "confirm");
        st = ob_st_step_done(s, qa, e, "adding confirmation runs");
        if (st == OB_OK) {
            ids[i] = sqlite3_last_insert_rowid(s->db);
            (*added)++;
        }
    }
    sqlite3_finalize(qf);
    return ob_st_commit_or_rollback(s, st, e);
}

ob_status ob_store_retire_confirm_cells(ob_store *s, int64_t bench_id, int64_t lo, int64_t hi, int *retired,
                                       ob_err *e)
{
    *retired = 0;
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "SELECT id FROM runs WHERE benchmark_id = ?1 AND stage = 'confirm' AND cell BETWEEN ?2 AND ?3 "
                         "ORDER BY id", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, lo);
    sqlite3_bind_int64(q, 3, hi);
    int64_t ids[OB_STORE_RETIRE_MAX];
    int n = 0, rc = SQLITE_DONE;
    while (n < OB_STORE_RETIRE_MAX && (rc = sqlite3_step(q)) == SQLITE_ROW) ids[n++] = sqlite3_column_int64(q, 0);
    ob_status st =
        rc == SQLITE_ROW || rc == SQLITE_DONE ? OB_OK : ob_st_db_fail(s, e, "finding confirmation runs to retire");
    sqlite3_finalize(q);
    if (st != OB_OK || n == 0) return st;
    st = ob_st_begin(s, e);
    for (int i = 0; i < n && st == OB_OK; i++)
        st = retire_run(s, ids[i], "retired before it finished: another configuration is confirmed now", e);
    st = ob_st_commit_or_rollback(s, st, e);
    if (st == OB_OK) *retired = n;
    return st;
}

ob_status ob_store_confirm_depth(ob_store *s, int64_t bench_id, int64_t cell_base, int64_t stride, int *depth,
                                 ob_err *e)
{
    *depth = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_prep(s, "SELECT max((cell - ?2) % ?3) + 1 FROM runs WHERE benchmark_id = ?1 AND stage = 'confirm' "
                         "AND cell >= ?2", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, cell_base);
    sqlite3_bind_int64(q, 3, stride);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) *depth = sqlite3_column_type(q, 0) == SQLITE_NULL ? 0 : sqlite3_column_int(q, 0);
    else st = ob_st_db_fail(s, e, "counting confirmation runs");
    sqlite3_finalize(q);
    return st;
}
