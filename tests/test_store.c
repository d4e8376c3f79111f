/* tests/test_store.c - the SQLite store: round trip of every column, schema
 * version and application id, results/schema.sql agreeing with the embedded
 * schema, batched writes (one commit per batch, counted with a commit hook),
 * atomic batches, and refusal of foreign, garbage, newer and missing files
 * without changing them. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "results/store.h"

static char dir[256];

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* A regular file's bytes (NULL for a folder or a missing file). */
static char *slurp(const char *path, long *len)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return NULL;
    return check_slurp(NULL, path, len);
}

static long long q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q;
    long long v = -999;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    else
        fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return v;
}

static double q_real(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q;
    double v = -999;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_type(q, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    return v;
}

static void q_text(sqlite3 *db, const char *sql, char *out, size_t n)
{
    sqlite3_stmt *q;
    out[0] = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
        sqlite3_column_text(q, 0))
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
}

static int commits;
static int on_commit(void *arg)
{
    (void)arg;
    commits++;
    return 0;
}

/* Every table/index of a database as one string, for comparing schemas. */
static void schema_of(sqlite3 *db, char *out, size_t n)
{
    sqlite3_stmt *q;
    out[0] = 0;
    size_t used = 0;
    sqlite3_prepare_v2(db,
                       "SELECT type, name, coalesce(sql, '') FROM sqlite_master "
                       "WHERE name NOT LIKE 'sqlite_%' ORDER BY name", -1, &q, NULL);
    while (sqlite3_step(q) == SQLITE_ROW) {
        int w = snprintf(out + used, n - used, "%s %s %s\n", sqlite3_column_text(q, 0),
                         sqlite3_column_text(q, 1), sqlite3_column_text(q, 2));
        if (w > 0 && (size_t)w < n - used) used += (size_t)w;
    }
    sqlite3_finalize(q);
}

/* A store opened with OB_STORE_CREATE at dir/name (its path also in path[n]
 * unless path is NULL); NULL, with a failed check, when it cannot be. */
static ob_store *open_created(const char *name, char *path, size_t n)
{
    char p[512];
    path_in(p, sizeof p, name);
    if (path) snprintf(path, n, "%s", p);
    ob_err e = {0};
    ob_store *s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_CREATE, &s, &e), &e);
    return s;
}

/* q_int / q_real / q_text of "SELECT expr FROM runs WHERE id = id". */
static void run_sql(char *sql, size_t n, const char *expr, int64_t id)
{
    snprintf(sql, n, "SELECT %s FROM runs WHERE id = %lld", expr, (long long)id);
}

static long long run_int(sqlite3 *db, const char *expr, int64_t id)
{
    char sql[512];
    run_sql(sql, sizeof sql, expr, id);
    return q_int(db, sql);
}

static double run_real(sqlite3 *db, const char *expr, int64_t id)
{
    char sql[512];
    run_sql(sql, sizeof sql, expr, id);
    return q_real(db, sql);
}

static void run_text(sqlite3 *db, const char *expr, int64_t id, char *out, size_t n)
{
    char sql[512];
    run_sql(sql, sizeof sql, expr, id);
    q_text(db, sql, out, n);
}

static void test_create_and_round_trip(void)
{
    char p[512];
    ob_err e = {0};
    ob_store *s = open_created("rt.db", p, sizeof p);
    if (!s) return;
    sqlite3 *db = ob_store_db(s);
    CHECK(q_int(db, "PRAGMA user_version") == OB_SCHEMA_VERSION);
    CHECK(q_int(db, "PRAGMA application_id") == OB_APPLICATION_ID);
    char txt[256];
    q_text(db, "PRAGMA journal_mode", txt, sizeof txt);
    CHECK(!strcmp(txt, "wal"));
    q_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", txt, sizeof txt);
    CHECK(atoi(txt) == OB_SCHEMA_VERSION);
    q_text(db, "SELECT value FROM meta WHERE key = 'application'", txt, sizeof txt);
    CHECK(!strcmp(txt, "optbench"));

    int64_t bench = 0;
    CHECK_OK(ob_store_begin_benchmark(s, "nightly", "steps: 10\n", "abc123", "host1", "cpu",
                                      "CPU", &bench, &e), &e);
    CHECK(bench > 0);
    ob_run_spec specs[2] = {
        {.cell = 0, .workload = "quadratic", .workload_params = "{\"dim\":8}", .optimizer = "adam",
         .hparams = "{\"beta2\":0.95}", .lr = 0.01, .seed = 3, .backend = "cpu", .device = "CPU",
         .steps = 100},
        {.cell = 1, .workload = "rosenbrock", .workload_params = "{}", .optimizer = "sgd",
         .hparams = "{\"momentum\":0.9}", .lr = 1e-3, .seed = 0, .backend = "cpu", .device = "CPU",
         .steps = 50},
    };
    int64_t ids[2] = {0, 0};
    CHECK_OK(ob_store_add_runs(s, bench, specs, 2, ids, &e), &e);
    CHECK(ids[0] > 0 && ids[1] == ids[0] + 1);
    CHECK(q_int(db, "SELECT count(*) FROM runs WHERE status = 'pending'") == 2);
    CHECK_OK(ob_store_run_started(s, ids[0], &e), &e);

    ob_curve_point pts[3] = {{0, 4.0, 2.0, 0.01}, {1, 3.0, 1.5, 0.01}, {2, 2.5, NAN, 0.005}};
    ob_eval_point ev[1] = {{2, 2.75, 0.5}};
    ob_event evt[1] = {{1, "skipped_step", "non-finite gradient (3 values)"}};
    CHECK_OK(ob_store_append(s, ids[0], pts, 3, ev, 1, evt, 1, &e), &e);
    ob_run_result r = {.status = "done", .steps_done = 100, .final_loss = 2.5, .best_loss = 2.25,
                       .eval_loss = 2.75, .eval_metric = 0.5, .loss_floor = NAN,
                       .peak_mem_bytes = 123456789012LL, .device_mem_bytes = 80000000000LL,
                       .state_bytes = 64, .step_ms_median = 1.5,
                       .step_ms_p90 = 2.5, .items_per_sec = NAN, .diverged_step = -1,
                       .wall_s = 0.25, .error = NULL};
    CHECK_OK(ob_store_finish_run(s, ids[0], &r, &e), &e);
    ob_run_result r2 = {.status = "diverged", .steps_done = 7, .final_loss = INFINITY,
                        .best_loss = 1.0, .eval_loss = NAN, .eval_metric = NAN, .loss_floor = NAN,
                        .peak_mem_bytes = 10, .state_bytes = 0, .step_ms_median = NAN,
                        .step_ms_p90 = NAN, .items_per_sec = NAN, .diverged_step = 7,
                        .wall_s = 0.1, .error = "loss is not finite"};
    CHECK_OK(ob_store_finish_run(s, ids[1], &r2, &e), &e);
    CHECK_OK(ob_store_finish_benchmark(s, bench, &e), &e);
    /* An unknown status is a bug in the caller, refused. */
    ob_run_result bad = r;
    bad.status = "finished";
    CHECK(ob_store_finish_run(s, ids[0], &bad, &e) == OB_ERR_INTERNAL);
    /* Updating a run that does not exist is an error, not a silent no-op. */
    CHECK(ob_store_run_started(s, 999999, &e) != OB_OK);
    ob_store_close(s);

    /* Reopen read-only and read everything back. */
    s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_READONLY, &s, &e), &e);
    if (!s) return;
    db = ob_store_db(s);
    run_text(db, "workload || '|' || optimizer || '|' || hparams || '|' || workload_params || '|' || status",
             ids[0], txt, sizeof txt);
    CHECK_MSG(!strcmp(txt, "quadratic|adam|{\"beta2\":0.95}|{\"dim\":8}|done"), "%s", txt);
    CHECK(run_real(db, "lr", ids[0]) == 0.01);
    CHECK(run_int(db, "peak_mem_bytes", ids[0]) == 123456789012LL);
    /* the driver's device memory: recorded; unknown (the CPU's 0 or -1) is NULL */
    CHECK(run_int(db, "device_mem_bytes", ids[0]) == 80000000000LL);
    CHECK(run_int(db, "device_mem_bytes IS NULL", ids[1]) == 1);
    CHECK(run_real(db, "final_loss", ids[0]) == 2.5);
    CHECK(run_int(db, "loss_floor IS NULL AND items_per_sec IS NULL AND diverged_step IS NULL AND "
                      "error IS NULL AND finished_at IS NOT NULL AND started_at IS NOT NULL",
                  ids[0]) == 1);
    CHECK(run_int(db, "diverged_step", ids[1]) == 7);
    CHECK(isinf(run_real(db, "final_loss", ids[1])));
    run_text(db, "error", ids[1], txt, sizeof txt);
    CHECK(!strcmp(txt, "loss is not finite"));
    CHECK(q_int(db, "SELECT count(*) FROM curves") == 3);
    CHECK(q_real(db, "SELECT sum(loss) FROM curves") == 9.5);
    CHECK(q_int(db, "SELECT count(*) FROM curves WHERE grad_norm IS NULL") == 1);
    CHECK(q_real(db, "SELECT lr FROM curves WHERE step = 2") == 0.005);
    CHECK(q_real(db, "SELECT metric FROM evals WHERE step = 2") == 0.5);
    q_text(db, "SELECT kind || ':' || step || ':' || detail FROM events", txt, sizeof txt);
    CHECK(!strcmp(txt, "skipped_step:1:non-finite gradient (3 values)"));
    q_text(db, "SELECT name || '|' || config || '|' || git_rev || '|' || host FROM benchmarks", txt,
           sizeof txt);
    CHECK(!strcmp(txt, "nightly|steps: 10\n|abc123|host1"));
    CHECK(q_int(db, "SELECT finished_at IS NOT NULL FROM benchmarks") == 1);
    CHECK(q_int(db, "SELECT count(*) FROM runs WHERE benchmark_id = 1") == 2);
    /* A read-only store refuses writes. */
    int64_t b2;
    CHECK(ob_store_begin_benchmark(s, "x", NULL, NULL, NULL, NULL, NULL, &b2, &e) == OB_ERR_INPUT);
    ob_store_close(s);

    /* Reopening with CREATE keeps the data (no re-creation). */
    s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_CREATE, &s, &e), &e);
    if (s) {
        CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM runs") == 2);
        CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM meta") == 3);
        ob_store_close(s);
    }
}

static void test_schema_file_matches(void)
{
    const char *src = getenv("OB_SOURCE_DIR");
    char p[512];
    snprintf(p, sizeof p, "%s/results/schema.sql", src ? src : "..");
    long len = 0;
    char *text = slurp(p, &len);
    CHECK_MSG(text != NULL, "cannot read %s", p);
    if (!text) return;
    sqlite3 *mem;
    sqlite3_open(":memory:", &mem);
    CHECK(sqlite3_exec(mem, text, NULL, NULL, NULL) == SQLITE_OK);
    /* its first line names the version the store writes */
    char first[128];
    snprintf(first, sizeof first, "the optbench results database, schema version %d.\n", OB_SCHEMA_VERSION);
    const char *nl = strchr(text, '\n');
    CHECK_MSG(nl && strstr(text, first) && strstr(text, first) < nl, "results/schema.sql's first line: want '%s'",
              first);
    char a[16384], b[16384];
    schema_of(mem, a, sizeof a);
    sqlite3_close(mem);
    free(text);

    ob_store *s = open_created("schema.db", NULL, 0);
    if (!s) return;
    schema_of(ob_store_db(s), b, sizeof b);
    ob_store_close(s);
    CHECK_MSG(strlen(a) > 100 && !strcmp(a, b), "results/schema.sql and the embedded schema differ");
}

static void test_batched_writes(void)
{
    ob_err e = {0};
    ob_store *s = open_created("batch.db", NULL, 0);
    if (!s) return;
    sqlite3 *db = ob_store_db(s);
    enum { NR = 200, NP = 20000 };
    ob_run_spec *specs = calloc(NR, sizeof *specs);
    int64_t *ids = calloc(NR, sizeof *ids);
    for (int i = 0; i < NR; i++)
        specs[i] = (ob_run_spec){.cell = i, .workload = "quadratic", .optimizer = "sgd",
                                 .hparams = "{}", .lr = 0.1, .seed = i, .steps = NP};
    sqlite3_commit_hook(db, on_commit, NULL);
    commits = 0;
    CHECK_OK(ob_store_add_runs(s, 0, specs, NR, ids, &e), &e);
    CHECK_MSG(commits == 1, "add_runs used %d commits", commits);
    CHECK(q_int(db, "SELECT count(*) FROM runs WHERE benchmark_id IS NULL") == NR);

    ob_curve_point *pts = malloc(NP * sizeof *pts);
    for (int i = 0; i < NP; i++) pts[i] = (ob_curve_point){i, 1.0 / (i + 1), 0.5, 0.1};
    commits = 0;
    CHECK_OK(ob_store_append(s, ids[0], pts, NP, NULL, 0, NULL, 0, &e), &e);
    CHECK_MSG(commits == 1, "append of %d points used %d commits", NP, commits);
    CHECK(q_int(db, "SELECT count(*) FROM curves") == NP);
    CHECK(q_int(db, "SELECT max(step) FROM curves") == NP - 1);

    /* Rewriting steps (a resumed run) replaces them instead of failing. */
    pts[0].loss = 42.0;
    CHECK_OK(ob_store_append(s, ids[0], pts, 1, NULL, 0, NULL, 0, &e), &e);
    CHECK(q_real(db, "SELECT loss FROM curves WHERE step = 0") == 42.0);
    CHECK(q_int(db, "SELECT count(*) FROM curves") == NP);

    /* A batch that fails part-way leaves nothing behind (run 999999 does not exist). */
    ob_event evt = {5, "x", NULL};
    ob_status st = ob_store_append(s, 999999, pts, 100, NULL, 0, &evt, 1, &e);
    CHECK(st == OB_ERR_DB);
    CHECK(q_int(db, "SELECT count(*) FROM curves") == NP);
    CHECK(q_int(db, "SELECT count(*) FROM events") == 0);
    /* and the store still works afterwards */
    CHECK_OK(ob_store_append(s, ids[1], pts, 10, NULL, 0, &evt, 1, &e), &e);
    CHECK(q_int(db, "SELECT count(*) FROM curves") == NP + 10);
    sqlite3_commit_hook(db, NULL, NULL);
    ob_store_close(s);
    free(pts);
    free(specs);
    free(ids);
}

/* The open of path with mode must fail with OB_ERR_INPUT and leave the bytes as they were. */
static void expect_refused(const char *path, ob_open_mode mode, const char *must_mention)
{
    long len0 = 0, len1 = 0;
    char *before = slurp(path, &len0);
    ob_err e = {0};
    ob_store *s = (ob_store *)1;
    ob_status st = ob_store_open(path, mode, &s, &e);
    CHECK_MSG(st == OB_ERR_INPUT, "%s: status %d (%s)", path, (int)st, e.msg);
    CHECK(s == NULL);
    CHECK_MSG(strstr(e.msg, path) != NULL, "message does not name the file: %s", e.msg);
    if (must_mention) CHECK_MSG(strstr(e.msg, must_mention) != NULL, "'%s' not in: %s", must_mention, e.msg);
    char *after = slurp(path, &len1);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* nothing to compare */
    } else if (before) {
        CHECK_MSG(after && len0 == len1 && !memcmp(before, after, (size_t)len0),
                  "%s changed by a refused open", path);
    } else {
        CHECK_MSG(after == NULL, "%s created by a refused open", path);
    }
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CHECK_MSG(access(wal, F_OK) != 0, "%s created", wal);
    snprintf(wal, sizeof wal, "%s-journal", path);
    CHECK_MSG(access(wal, F_OK) != 0, "%s created", wal);
    free(before);
    free(after);
}

/* ob_store_tx_begin/end around writes that open transactions of their
 * own: one transaction, committed or rolled back whole by the outer end. */
static void test_nested_transactions(void)
{
    ob_err e = {0};
    ob_store *s = open_created("nested.db", NULL, 0);
    if (!s) return;
    sqlite3 *db = ob_store_db(s);
    ob_run_spec spec = {.cell = 0, .workload = "quadratic", .optimizer = "sgd", .hparams = "{}", .lr = 0.1, .steps = 5};
    int64_t bench = 0, id = 0;
    for (int fail = 1; fail >= 0; fail--) {
        CHECK_OK(ob_store_tx_begin(s, &e), &e);
        CHECK_OK(ob_store_begin_benchmark(s, "n", "steps: 5\n", "r", "h", "cpu", "CPU", &bench, &e), &e);
        CHECK_OK(ob_store_add_runs(s, bench, &spec, 1, &id, &e), &e);
        CHECK_MSG(!sqlite3_get_autocommit(db), "the inner writes ended the outer transaction (fail=%d)", fail);
        ob_status st = fail ? ob_fail(&e, OB_ERR_INPUT, "a later step failed") : OB_OK;
        st = ob_store_tx_end(s, st, &e);
        CHECK(fail ? st == OB_ERR_INPUT : st == OB_OK);
        CHECK_MSG(q_int(db, "SELECT count(*) FROM benchmarks") == !fail &&
                      q_int(db, "SELECT count(*) FROM runs") == !fail,
                  "fail=%d: %lld benchmarks", fail, q_int(db, "SELECT count(*) FROM benchmarks"));
    }
    ob_store_close(s);
}

static void test_refusals(void)
{
    char p[512];
    /* A text file (e.g. a config given by mistake). */
    path_in(p, sizeof p, "garbage.db");
    FILE *f = fopen(p, "wb");
    fputs("workloads: [quadratic]\noptimizers: [adam]\n", f);
    fclose(f);
    expect_refused(p, OB_STORE_CREATE, "not an SQLite database");
    expect_refused(p, OB_STORE_EXISTING, "not an SQLite database");
    expect_refused(p, OB_STORE_READONLY, "not an SQLite database");

    /* A short binary file. */
    path_in(p, sizeof p, "short.db");
    f = fopen(p, "wb");
    fputs("SQLite", f);
    fclose(f);
    expect_refused(p, OB_STORE_CREATE, "not an SQLite database");
    /* SQLite's magic, and less than the 100 bytes of a header */
    static const char magic26[26] = "SQLite format 3\0\x10\0\1\1\0@  ";
    f = fopen(p, "wb");
    fwrite(magic26, 1, sizeof magic26, f);
    fclose(f);
    expect_refused(p, OB_STORE_CREATE, "not an SQLite database");
    expect_refused(p, OB_STORE_READONLY, "not an SQLite database");

    /* Somebody else's SQLite database. */
    path_in(p, sizeof p, "foreign.db");
    sqlite3 *db;
    sqlite3_open(p, &db);
    sqlite3_exec(db, "CREATE TABLE runs(x); INSERT INTO runs VALUES (1);", NULL, NULL, NULL);
    sqlite3_close(db);
    expect_refused(p, OB_STORE_CREATE, "not an optbench results database");
    expect_refused(p, OB_STORE_EXISTING, "not an optbench results database");
    expect_refused(p, OB_STORE_READONLY, "not an optbench results database");

    /* An optbench database from a newer version. */
    ob_store *s = open_created("newer.db", p, sizeof p);
    ob_store_close(s);
    sqlite3_open(p, &db);
    sqlite3_exec(db, "PRAGMA user_version = 99; PRAGMA journal_mode = DELETE;", NULL, NULL, NULL);
    sqlite3_close(db);
    expect_refused(p, OB_STORE_CREATE, "newer");
    expect_refused(p, OB_STORE_READONLY, "newer");

    /* The same in WAL mode: refused, left byte for byte as it was, and no
     * NAME-wal or NAME-shm left beside it (a read-only connection creates
     * them and cannot remove them; the store does) */
    sqlite3_open(p, &db);
    sqlite3_exec(db, "PRAGMA journal_mode = WAL;", NULL, NULL, NULL);
    sqlite3_close(db);
    long len0 = 0, len1 = 0;
    char *before = slurp(p, &len0);
    expect_refused(p, OB_STORE_READONLY, "newer");
    expect_refused(p, OB_STORE_EXISTING, "newer");
    char *after = slurp(p, &len1);
    CHECK(before && after && len0 == len1 && !memcmp(before, after, (size_t)len0));
    free(before);
    free(after);
    char side[600];
    struct stat sb;
    snprintf(side, sizeof side, "%s-wal", p);
    CHECK_MSG(stat(side, &sb) != 0, "%s left behind", side);
    snprintf(side, sizeof side, "%s-shm", p);
    CHECK_MSG(stat(side, &sb) != 0, "%s left behind", side);

    /* Missing files are only created in CREATE mode. */
    path_in(p, sizeof p, "missing.db");
    expect_refused(p, OB_STORE_EXISTING, "does not exist");
    expect_refused(p, OB_STORE_READONLY, "does not exist");

    /* A folder that does not exist. */
    path_in(p, sizeof p, "no/such/folder.db");
    expect_refused(p, OB_STORE_CREATE, "does not exist: create it");

    /* A directory. */
    expect_refused(dir, OB_STORE_CREATE, "not a regular file");

    /* An SQLite database without tables (a run stopped as it created it):
     * read, it holds no results yet, and says what fills it */
    path_in(p, sizeof p, "tableless.db");
    sqlite3_open(p, &db);
    sqlite3_exec(db, "PRAGMA journal_mode = WAL;", NULL, NULL, NULL);
    sqlite3_close(db);
    expect_refused(p, OB_STORE_READONLY, "holds no results yet: it is empty (an optbench run stopped as it created it");
    CHECK(ob_store_empty(p));

    /* An empty file is a fine place to create a store. */
    path_in(p, sizeof p, "empty.db");
    f = fopen(p, "wb");
    fclose(f);
    expect_refused(p, OB_STORE_EXISTING, "holds no results yet");
    CHECK(ob_store_empty(p));
    ob_err e = {0};
    s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_CREATE, &s, &e), &e);
    if (s) {
        CHECK(q_int(ob_store_db(s), "PRAGMA user_version") == OB_SCHEMA_VERSION);
        ob_store_close(s);
    }
    CHECK(ob_store_open("", OB_STORE_CREATE, &s, &e) == OB_ERR_INPUT);
}

/* Confirmation runs: added once however often asked for, another run in a
 * cell refused, invisible to the resume match, counted apart from the sweep. */
static void test_confirm_runs(void)
{
    ob_err e = {0};
    ob_store *s = open_created("confirm.db", NULL, 0);
    if (!s) return;
    int64_t bench = 0;
    CHECK_OK(ob_store_begin_benchmark(s, "b", "", "rev", "host", "cpu", "CPU", &bench, &e), &e);
    ob_run_spec sweep[2] = {
        {.cell = 0, .workload = "quadratic", .workload_params = "{}", .optimizer = "sgd", .hparams = "{}",
         .lr = 0.1, .seed = 0, .steps = 10},
        {.cell = 1, .workload = "quadratic", .workload_params = "{}", .optimizer = "sgd", .hparams = "{}",
         .lr = 0.01, .seed = 0, .steps = 10},
    };
    int64_t ids[2];
    CHECK_OK(ob_store_add_runs(s, bench, sweep, 2, ids, &e), &e);
    ob_run_result done = {.status = "done", .steps_done = 10, .final_loss = 0.5, .best_loss = 0.5,
                          .eval_loss = NAN, .eval_metric = NAN, .loss_floor = NAN, .peak_mem_bytes = -1,
                          .state_bytes = -1, .step_ms_median = NAN, .step_ms_p90 = NAN, .items_per_sec = NAN,
                          .diverged_step = -1, .wall_s = 1};
    ob_run_result div = done;
    div.status = "diverged";
    div.final_loss = NAN;
    CHECK_OK(ob_store_finish_run(s, ids[0], &div, &e), &e);
    CHECK_OK(ob_store_finish_run(s, ids[1], &done, &e), &e);
    double lr[4], fin[4];
    int n = 0;
    CHECK_OK(ob_store_sweep_finals(s, bench, 0, 1, lr, fin, 4, &n, &e), &e);
    CHECK(n == 2 && lr[0] == 0.1 && isinf(fin[0]) && lr[1] == 0.01 && fin[1] == 0.5);

    ob_run_spec conf[2] = {sweep[1], sweep[1]};
    conf[0].cell = 2;
    conf[0].seed = 1;
    conf[1].cell = 3;
    conf[1].seed = 2;
    conf[0].stage = conf[1].stage = "confirm";
    int64_t cid[2] = {0, 0}, cid2[2] = {0, 0};
    int added = -1, retired = -1;
    CHECK_OK(ob_store_confirm_runs(s, bench, conf, 2, cid, &added, &retired, &e), &e);
    CHECK(added == 2 && retired == 0 && cid[0] > 0 && cid[1] > cid[0]);
    CHECK_OK(ob_store_confirm_runs(s, bench, conf, 2, cid2, &added, &retired, &e), &e);
    CHECK(added == 0 && retired == 0 && cid2[0] == cid[0] && cid2[1] == cid[1]);
    CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM runs WHERE stage = 'confirm'") == 2);
    /* another seed in an existing cell: refused, nothing added */
    ob_run_spec other[2] = {conf[0], conf[1]};
    other[1].seed = 7;
    other[0].cell = 4;
    CHECK(ob_store_confirm_runs(s, bench, other, 2, cid2, &added, &retired, &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "another (workload, optimizer, seed)") != NULL);
    CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM runs") == 4);
    /* the best lr moved (the sweep grew, a failed cell ran again): the run of
     * the other lr in a cell is retired (kept, cell -id), the new one added */
    ob_run_spec moved[2] = {conf[0], conf[1]};
    moved[0].lr = moved[1].lr = 0.1;
    int64_t cid3[2] = {0, 0};
    CHECK_OK(ob_store_confirm_runs(s, bench, moved, 2, cid3, &added, &retired, &e), &e);
    CHECK(added == 2 && retired == 2 && cid3[0] > cid[1] && cid3[1] > cid3[0]);
    CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM runs WHERE stage = 'confirm' AND cell = -id AND lr = 0.01") == 2);
    CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM runs WHERE stage = 'confirm' AND cell IN (2, 3) AND lr = 0.1") == 2);
    /* the moved ones are kept where they are on a second call */
    CHECK_OK(ob_store_confirm_runs(s, bench, moved, 2, cid2, &added, &retired, &e), &e);
    CHECK(added == 0 && retired == 0 && cid2[0] == cid3[0] && cid2[1] == cid3[1]);
    /* the retired ones had not run: failed, saying why (no process runs them) */
    CHECK(q_int(ob_store_db(s), "SELECT count(*) FROM runs WHERE cell < 0 AND status = 'failed' AND "
                                "error LIKE 'retired before it finished: %'") == 2);
    /* unfinished: the sweep's none, the whole benchmark's the two new ones */
    int open = -1;
    CHECK_OK(ob_store_unfinished_runs(s, bench, 1, &open, &e), &e);
    CHECK(open == 0);
    CHECK_OK(ob_store_unfinished_runs(s, bench, 0, &open, &e), &e);
    CHECK(open == 2);
    /* a retired run someone still runs is not waited for */
    CHECK(sqlite3_exec(ob_store_db(s), "UPDATE runs SET status = 'running' WHERE cell < 0", NULL, NULL, NULL) ==
          SQLITE_OK);
    CHECK_OK(ob_store_unfinished_runs(s, bench, 0, &open, &e), &e);
    CHECK(open == 2);
    /* --resume matches the sweep alone */
    int64_t found = 0, rids[2];
    CHECK_OK(ob_store_find_benchmark(s, NULL, sweep, 2, &found, rids, NULL, NULL, 0, &e), &e);
    CHECK(found == bench && rids[0] == ids[0] && rids[1] == ids[1]);
    ob_store_close(s);
}

/* A grown matrix (ob_store_find_grown, ob_store_grow): an earlier
 * benchmark each of whose runs is one of the matrix's cells is found
 * without a write, then its runs take the matrix's cells, confirmation runs
 * too (at base + pair * stride + fresh seed index), and one whose seed the
 * grown sweep runs is retired; a benchmark with a run the matrix lacks or
 * with two runs of one cell is not, and why says so. */
static void test_find_grown(void)
{
    ob_err e = {0};
    ob_store *s = open_created("grown.db", NULL, 0);
    if (!s) return;
    sqlite3 *db = ob_store_db(s);
    int64_t bench = 0, ids[2], conf_id[1], found = -1, rid[6];
    CHECK_OK(ob_store_begin_benchmark(s, "b", "", "rev", "host", "cpu", "CPU", &bench, &e), &e);
#define SPEC(c, o, l, sd) {.cell = (c), .workload = "quadratic", .workload_params = "{}", .optimizer = (o), \
                           .hparams = "{}", .lr = (l), .seed = (sd), .steps = 10}
    ob_run_spec old[2] = {SPEC(0, "sgd", 0.1, 0), SPEC(1, "sgd", 0.01, 0)};
    CHECK_OK(ob_store_add_runs(s, bench, old, 2, ids, &e), &e);
    /* a confirmation run of sgd at lr 0.01, fresh seed 1 (its pair 0, base 2) */
    ob_run_spec conf = SPEC(2, "sgd", 0.01, 1);
    conf.stage = "confirm";
    int added = 0, retired = -1;
    CHECK_OK(ob_store_confirm_runs(s, bench, &conf, 1, conf_id, &added, &retired, &e), &e);
    /* grown: adam before sgd, sgd's cells in another order; pairs: adam 0, sgd 1 */
    ob_run_spec grown[3] = {SPEC(0, "adam", 0.1, 0), SPEC(1, "sgd", 0.01, 0), SPEC(2, "sgd", 0.1, 0)};
    const int pair[3] = {0, 1, 1};
    ob_grow_plan plan = {pair, 3, 1000, 1};
    int held = -1;
    char why[400] = "";
    CHECK_OK(ob_store_find_grown(s, grown, 3, &plan, &found, rid, &held, &retired, why, sizeof why, &e), &e);
    CHECK_MSG(found == bench && held == 2 && rid[0] == 0 && rid[1] == ids[1] && rid[2] == ids[0], "found %lld held %d: %s",
              (long long)found, held, why);
    /* nothing written yet */
    CHECK(q_int(db, "SELECT count(*) FROM runs WHERE stage IS NULL AND cell <> id - 1") == 0);
    CHECK_OK(ob_store_grow(s, bench, grown, 3, &plan, rid, &retired, &e), &e);
    CHECK(retired == 0);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT cell FROM runs WHERE id = %lld", (long long)ids[0]);
    CHECK(q_int(db, sql) == 2);
    snprintf(sql, sizeof sql, "SELECT cell FROM runs WHERE id = %lld", (long long)ids[1]);
    CHECK(q_int(db, sql) == 1);
    snprintf(sql, sizeof sql, "SELECT cell FROM runs WHERE id = %lld", (long long)conf_id[0]);
    CHECK_MSG(q_int(db, sql) == 3 + 1 * 1000 + 0, "the confirmation run's cell is %lld", q_int(db, sql));

    /* a matrix without the run at lr 0.1: not found, the run named */
    ob_run_spec fewer[2] = {SPEC(0, "adam", 0.1, 0), SPEC(1, "sgd", 0.01, 0)};
    CHECK_OK(ob_store_find_grown(s, fewer, 2, &plan, &found, rid, &held, &retired, why, sizeof why, &e), &e);
    CHECK_MSG(found == 0 && held == 0 && strstr(why, "(sgd on quadratic, lr 0.1, seed 0) is not in this matrix"),
              "%s", why);
    /* more lrs of sgd, which could change the lr its confirmation run
     * confirms: found; the run keeps its place (the confirmation stage
     * retires it if the best lr moves) */
    ob_run_spec more[4] = {SPEC(0, "adam", 0.1, 0), SPEC(1, "sgd", 0.001, 0), SPEC(2, "sgd", 0.01, 0),
                           SPEC(3, "sgd", 0.1, 0)};
    const int pair4[4] = {0, 1, 1, 1};
    ob_grow_plan plan4 = {pair4, 4, 1000, 1};
    CHECK_OK(ob_store_find_grown(s, more, 4, &plan4, &found, rid, &held, &retired, why, sizeof why, &e), &e);
    CHECK_MSG(found == bench && held == 2 && rid[1] == 0, "%s", why);
    /* more seeds: the confirmation seed 1 is now the sweep's (the first
     * fresh seed is 2): found, and growing retires that run (cell -id) */
    ob_run_spec seeds2[6] = {SPEC(0, "adam", 0.1, 0), SPEC(1, "adam", 0.1, 1), SPEC(2, "sgd", 0.01, 0),
                             SPEC(3, "sgd", 0.01, 1), SPEC(4, "sgd", 0.1, 0), SPEC(5, "sgd", 0.1, 1)};
    const int pair6[6] = {0, 0, 1, 1, 1, 1};
    ob_grow_plan later = {pair6, 6, 1000, 2};
    CHECK_OK(ob_store_find_grown(s, seeds2, 6, &later, &found, rid, &held, &retired, why, sizeof why, &e), &e);
    CHECK_MSG(found == bench && held == 2 && retired == 1, "%s", why);
    CHECK_OK(ob_store_grow(s, bench, seeds2, 6, &later, rid, &retired, &e), &e);
    CHECK(retired == 1);
    snprintf(sql, sizeof sql, "SELECT cell FROM runs WHERE id = %lld", (long long)conf_id[0]);
    CHECK_MSG(q_int(db, sql) == -conf_id[0], "the retired run's cell is %lld", q_int(db, sql));
    /* a retired run stays so when the matrix grows again, and is not in the way */
    CHECK_OK(ob_store_find_grown(s, seeds2, 6, &later, &found, rid, &held, &retired, why, sizeof why, &e), &e);
    CHECK_MSG(found == bench && held == 2, "%s", why);
    CHECK_OK(ob_store_grow(s, bench, seeds2, 6, &later, rid, &retired, &e), &e);
    CHECK(retired == 0 && q_int(db, sql) == -conf_id[0]);
    /* two runs of one cell (an edited database): not found */
    int64_t dup[1];
    CHECK_OK(ob_store_add_runs(s, bench, &old[0], 1, dup, &e), &e);
    CHECK_OK(ob_store_find_grown(s, grown, 3, &plan, &found, rid, &held, &retired, why, sizeof why, &e), &e);
    CHECK_MSG(found == 0 && strstr(why, "it holds two runs of one cell"), "%s", why);
#undef SPEC
    ob_store_close(s);
}

/* A run's revision and host: a start takes them, a continuation by the same
 * keeps them, by another adds ", then X" once, a start over replaces them. */
static void test_run_provenance(void)
{
    ob_err e = {0};
    ob_store *s = open_created("prov.db", NULL, 0);
    if (!s) return;
    int64_t bench = 0, id = 0;
    CHECK_OK(ob_store_begin_benchmark(s, "b", "", "rev", "host", "cpu", "CPU", &bench, &e), &e);
    ob_run_spec r = {.cell = 0, .workload = "quadratic", .workload_params = "{}", .optimizer = "sgd",
                     .hparams = "{}", .lr = 0.1, .seed = 0, .steps = 10};
    CHECK_OK(ob_store_add_runs(s, bench, &r, 1, &id, &e), &e);
    sqlite3 *db = ob_store_db(s);
    char got[200];
    const char *steps[][4] = {{"A", "h1", "0", "A|h1"},
                              {"A", "h1", "1", "A|h1"},
                              {"B", "h1", "1", "A, then B|h1"},
                              {"B", "h2", "1", "A, then B|h1, then h2"},
                              {"A", "h2", "1", "A, then B, then A|h1, then h2"},
                              {"C", "h3", "0", "C|h3"}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        CHECK_OK(ob_store_run_provenance(s, id, steps[i][0], steps[i][1], steps[i][2][0] == '1', &e), &e);
        sqlite3_stmt *q = NULL;
        got[0] = '\0';
        if (sqlite3_prepare_v2(db, "SELECT git_rev || '|' || host FROM runs", -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
            snprintf(got, sizeof got, "%s", (const char *)sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
        CHECK_MSG(!strcmp(got, steps[i][3]), "step %zu: '%s', want '%s'", i, got, steps[i][3]);
    }
    CHECK(ob_store_run_provenance(s, 999, "A", "h", 0, &e) != OB_OK);
    ob_store_close(s);
}

/* The index of a benchmark's cells (runs_by_benchmark_cell), added within
 * schema version 5: a database made before it gets it when opened for
 * writing, not when opened to read. */
static void test_cell_index(void)
{
    char p[512];
    ob_store *s = open_created("index.db", p, sizeof p);
    if (!s) return;
    static const char *const has = "SELECT count(*) FROM sqlite_master WHERE name = 'runs_by_benchmark_cell'";
    CHECK(q_int(ob_store_db(s), has) == 1);
    CHECK(sqlite3_exec(ob_store_db(s), "DROP INDEX runs_by_benchmark_cell", NULL, NULL, NULL) == SQLITE_OK);
    ob_store_close(s);
    ob_err e = {0};
    s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_READONLY, &s, &e), &e);
    if (s) CHECK(q_int(ob_store_db(s), has) == 0);
    ob_store_close(s);
    s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_EXISTING, &s, &e), &e);
    if (s) CHECK(q_int(ob_store_db(s), has) == 1);
    ob_store_close(s);
}

/* OB_DB_CHECK: off skips the page check, on (or unset) keeps it, anything
 * else is refused naming the variable; a second connection of the process
 * (OB_STORE_AGAIN, a worker thread's) does not check, nor read the variable,
 * again. */
static void test_page_check_setting(void)
{
    char p[512];
    ob_store *s = open_created("check.db", p, sizeof p);
    ob_store_close(s);
    const char *was = getenv("OB_DB_CHECK");
    char *saved = was ? strdup(was) : NULL;
    setenv("OB_DB_CHECK", "sometimes", 1);
    expect_refused(p, OB_STORE_READONLY, "OB_DB_CHECK='sometimes' is neither on nor off");
    expect_refused(p, OB_STORE_EXISTING, "OB_DB_CHECK='sometimes' is neither on nor off");
    ob_err e = {0};
    s = NULL;
    CHECK_OK(ob_store_open(p, OB_STORE_AGAIN, &s, &e), &e);
    if (s) {
        CHECK(sqlite3_db_readonly(ob_store_db(s), "main") == 0);
        ob_store_close(s);
    }
    const char *fine[] = {"on", "off", ""};
    for (int i = 0; i < 3; i++) {
        setenv("OB_DB_CHECK", fine[i], 1);
        s = NULL;
        CHECK_OK(ob_store_open(p, OB_STORE_READONLY, &s, &e), &e);
        ob_store_close(s);
    }
    if (saved) setenv("OB_DB_CHECK", saved, 1);
    else unsetenv("OB_DB_CHECK");
    free(saved);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/ob_test_store_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_create_and_round_trip();
    test_schema_file_matches();
    test_batched_writes();
    test_nested_transactions();
    test_refusals();
    test_confirm_runs();
    test_find_grown();
    test_run_provenance();
    test_page_check_setting();
    test_cell_index();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
