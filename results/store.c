/* results/store.c - the SQLite store (see store.h and results/schema.sql).
 *
 * Opening is careful: before anything is written, the file is checked to be
 * either missing (created), an empty file / empty SQLite database (initialized),
 * or an optbench database of a schema this build knows (application_id and
 * user_version read through a read-only connection). Anything else is refused
 * with OB_ERR_INPUT and the file is left exactly as it was. Writes use
 * statements prepared once per store and kept in it; a matrix of runs and each
 * batch of curve points go in one transaction each (WAL, synchronous=NORMAL).
 */
#include "results/store.h"
#include "results/store_int.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The schema: the same text as results/schema.sql (tests/test_store.c checks
 * that the two create identical tables). */
static const char schema_sql[] =
    "-- results/schema.sql - the optbench results database, schema version 6.\n"
    "--\n"
    "-- An optbench database is an SQLite file with PRAGMA application_id = 0x4f424e43\n"
    "-- ('OBNC') and PRAGMA user_version = the schema version; the meta table repeats\n"
    "-- both in readable form. results/store.c embeds exactly this text (a unit test\n"
    "-- checks that the two agree) and creates it in one transaction. The database runs\n"
    "-- in WAL mode. Times are UTC ISO-8601 text (\"2024-05-01T12:00:00.000Z\"); a value\n"
    "-- that was not measured is NULL (the C API uses NaN, or -1 for diverged_step).\n"
    "\n"
    "CREATE TABLE IF NOT EXISTS meta (\n"
    "    key   TEXT PRIMARY KEY,       -- 'application', 'schema_version', 'created_by'\n"
    "    value TEXT NOT NULL\n"
    ");\n"
    "\n"
    "-- One row per invocation of `optbench run` (a nightly job adds one per night).\n"
    "CREATE TABLE IF NOT EXISTS benchmarks (\n"
    "    id          INTEGER PRIMARY KEY,\n"
    "    name        TEXT,             -- config name or a label given on the command line\n"
    "    config      TEXT,             -- the effective configuration (YAML text)\n"
    "    git_rev     TEXT,             -- revision of the optbench source that ran it (\"-dirty\": with edits)\n"
    "    host        TEXT,\n"
    "    backend     TEXT,             -- cpu | cuda\n"
    "    device      TEXT,             -- e.g. \"CPU (2 threads)\" or the GPU name\n"
    "    created_at  TEXT NOT NULL,\n"
    "    finished_at TEXT,             -- NULL while running or when interrupted\n"
    "    shard       TEXT,             -- \"K/N\" when this process ran shard K of N (v2)\n"
    "    provenance  TEXT              -- JSON: the sources of a merged benchmark (v2)\n"
    ");\n"
    "\n"
    "-- One row per cell of the matrix (workload x optimizer x hyperparameters x lr x seed).\n"
    "CREATE TABLE IF NOT EXISTS runs (\n"
    "    id              INTEGER PRIMARY KEY,\n"
    "    benchmark_id    INTEGER REFERENCES benchmarks(id),\n"
    "    cell            INTEGER,      -- index in the expanded matrix; a confirmation\n"
    "                                  -- run: N + pair * 1000 + fresh seed (N cells)\n"
    "                                  -- -id: a retired confirmation run (kept; the\n"
    "                                  -- sweep grew: another lr is best, or its seed\n"
    "                                  -- is now a seed of the sweep)\n"
    "    workload        TEXT NOT NULL,\n"
    "    workload_params TEXT,         -- JSON object\n"
    "    optimizer       TEXT NOT NULL,\n"
    "    hparams         TEXT,         -- JSON object: optimizer hyperparameters and training settings\n"
    "    lr              REAL NOT NULL,\n"
    "    seed            INTEGER NOT NULL,\n"
    "    backend         TEXT,\n"
    "    device          TEXT,\n"
    "    status          TEXT NOT NULL DEFAULT 'pending'\n"
    "                    CHECK (status IN ('pending','running','done','diverged','failed','interrupted')),\n"
    "    steps           INTEGER,      -- planned number of steps\n"
    "    steps_done      INTEGER,\n"
    "    final_loss      REAL,         -- mean training loss over the last 10% of steps\n"
    "    best_loss       REAL,         -- lowest training loss seen\n"
    "    eval_loss       REAL,         -- final held-out loss\n"
    "    eval_metric     REAL,         -- final held-out metric (accuracy for classifiers)\n"
    "    loss_floor      REAL,         -- the workload's irreducible loss, when known\n"
    "    peak_mem_bytes  INTEGER,      -- high-water mark of backend allocations\n"
    "    state_bytes     INTEGER,      -- bytes of optimizer state\n"
    "    step_ms_median  REAL,         -- per-step time after warm-up, recording excluded\n"
    "    step_ms_p90     REAL,\n"
    "    items_per_sec   REAL,         -- examples (or tokens) per second\n"
    "    diverged_step   INTEGER,      -- first step judged diverged; NULL when not\n"
    "    wall_s          REAL,         -- wall time of the whole run\n"
    "    started_at      TEXT,\n"
    "    finished_at     TEXT,\n"
    "    error           TEXT,         -- message of a failed run\n"
    "    origin          TEXT,         -- merged runs: \"FILE:run ID\" it was copied from (v2)\n"
    "    stage           TEXT,         -- NULL: a cell of the sweep; 'confirm': a fresh seed at its\n"
    "                                  -- pair's best lr, run after the sweep (v3)\n"
    "    device_mem_bytes INTEGER,     -- largest device memory in use as the driver reports it: the\n"
    "                                  -- whole device (context, library workspaces, other processes);\n"
    "                                  -- NULL on the CPU (v3)\n"
    "    step_ms_mean    REAL,         -- mean per-step time after warm-up, recording excluded: beside\n"
    "                                  -- the median, it counts steps that are slow now and then (v4)\n"
    "    opt_ms_median   REAL,         -- the optimizer's part of a step (from the gradients, summed\n"
    "    opt_ms_mean     REAL,         -- over the replicas, to the updated parameters), same steps (v4)\n"
    "    git_rev         TEXT,         -- revision of the optbench that ran it (\"A, then B\": continued\n"
    "                                  -- by another); NULL: the benchmark's (v5)\n"
    "    host            TEXT,         -- machine that ran it, the same way (v5)\n"
    "    other_cpu       REAL          -- share of the CPUs it could run on (0..1) that other processes\n"
    "                                  -- kept busy while it ran (a run under 0.25 s: from an earlier\n"
    "                                  -- run's start; a run continued: the last process's part);\n"
    "                                  -- NULL: unknown (v6)\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS runs_by_cell ON runs (workload, optimizer, lr, seed);\n"
    "CREATE INDEX IF NOT EXISTS runs_by_benchmark ON runs (benchmark_id);\n"
    "-- a benchmark's run of a cell (--resume, the confirmation stage); made on\n"
    "-- opening for writing where an earlier optbench's database lacks it\n"
    "CREATE INDEX IF NOT EXISTS runs_by_benchmark_cell ON runs (benchmark_id, cell);\n"
    "\n"
    "-- Training curve: one row per recorded step.\n"
    "CREATE TABLE IF NOT EXISTS curves (\n"
    "    run_id    INTEGER NOT NULL REFERENCES runs(id),\n"
    "    step      INTEGER NOT NULL,\n"
    "    loss      REAL,\n"
    "    grad_norm REAL,\n"
    "    lr        REAL,               -- learning rate in effect (after the schedule)\n"
    "    PRIMARY KEY (run_id, step)\n"
    ") WITHOUT ROWID;\n"
    "\n"
    "-- Held-out evaluations: one row per evaluation; every run that finished without diverging has\n"
    "-- one at its final step (the only one when eval_every is 0).\n"
    "CREATE TABLE IF NOT EXISTS evals (\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "    step   INTEGER NOT NULL,\n"
    "    loss   REAL,\n"
    "    metric REAL,\n"
    "    PRIMARY KEY (run_id, step)\n"
    ") WITHOUT ROWID;\n"
    "\n"
    "-- Things that happened during a run: skipped steps, divergence, rollbacks.\n"
    "CREATE TABLE IF NOT EXISTS events (\n"
    "    id     INTEGER PRIMARY KEY,\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "    step   INTEGER,\n"
    "    kind   TEXT NOT NULL,\n"
    "    detail TEXT\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id);\n";

/* Migrations: migrations[v] brings a database from schema version v+1 to v+2.
 * 1 -> 2: provenance of sharded and merged benchmarks (columns appended, so a
 * migrated database has the same columns in the same order as a new one).
 * 2 -> 3: runs.stage, the confirmation runs after a sweep; runs.device_mem_bytes.
 * 3 -> 4: runs.step_ms_mean, opt_ms_median, opt_ms_mean.
 * 4 -> 5: runs.git_rev, runs.host (a benchmark continued or grown by another
 * build or machine holds runs of several).
 * 5 -> 6: runs.other_cpu (step times measured on a busy machine). */
static const char *const migrations[] = {
    "ALTER TABLE benchmarks ADD COLUMN shard TEXT;"
    "ALTER TABLE benchmarks ADD COLUMN provenance TEXT;"
    "ALTER TABLE runs ADD COLUMN origin TEXT;",
    "ALTER TABLE runs ADD COLUMN stage TEXT;"
    "ALTER TABLE runs ADD COLUMN device_mem_bytes INTEGER;",
    "ALTER TABLE runs ADD COLUMN step_ms_mean REAL;"
    "ALTER TABLE runs ADD COLUMN opt_ms_median REAL;"
    "ALTER TABLE runs ADD COLUMN opt_ms_mean REAL;",
    "ALTER TABLE runs ADD COLUMN git_rev TEXT;"
    "ALTER TABLE runs ADD COLUMN host TEXT;",
    "ALTER TABLE runs ADD COLUMN other_cpu REAL;",
};
#define N_MIGRATIONS 5


static const char *const stmt_sql[ST_COUNT] = {
    [ST_BEGIN_BENCH] =
        "INSERT INTO benchmarks (name, config, git_rev, host, backend, device, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    [ST_FINISH_BENCH] =
        "UPDATE benchmarks SET finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
    [ST_ADD_RUN] =
        "INSERT INTO runs (benchmark_id, cell, workload, workload_params, optimizer, hparams, "
        "lr, seed, backend, device, status, steps, stage) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', ?11, ?12)",
    [ST_RUN_STARTED] =
        "UPDATE runs SET status = 'running', started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
        "WHERE id = ?1",
    [ST_CURVE] = "INSERT OR REPLACE INTO curves (run_id, step, loss, grad_norm, lr) "
                 "VALUES (?1, ?2, ?3, ?4, ?5)",
    [ST_EVAL] = "INSERT OR REPLACE INTO evals (run_id, step, loss, metric) VALUES (?1, ?2, ?3, ?4)",
    [ST_EVENT] = "INSERT INTO events (run_id, step, kind, detail) VALUES (?1, ?2, ?3, ?4)",
    [ST_FINISH_RUN] =
        "UPDATE runs SET status = ?2, steps_done = ?3, final_loss = ?4, best_loss = ?5, "
        "eval_loss = ?6, eval_metric = ?7, loss_floor = ?8, peak_mem_bytes = ?9, "
        "state_bytes = ?10, step_ms_median = ?11, step_ms_p90 = ?12, items_per_sec = ?13, "
        "diverged_step = ?14, wall_s = ?15, error = ?16, device_mem_bytes = ?17, step_ms_mean = ?18, "
        "opt_ms_median = ?19, opt_ms_mean = ?20, other_cpu = ?21, "
        "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
    [ST_SWEEP_TEXTS] = "SELECT workload_params, hparams FROM runs WHERE benchmark_id = ?1 AND cell = ?2 AND "
                       "stage IS NULL ORDER BY id LIMIT 1",
};


/* What a full disk (or a file size limit) looks like to SQLite. */
static const char *io_hint(ob_store *s)
{
    int rc = sqlite3_extended_errcode(s->db) & 0xff;
    return rc == SQLITE_FULL || rc == SQLITE_IOERR
               ? " (is the disk full? the transaction was rolled back; what was stored before is kept)"
               : "";
}

/* The system's error behind a database that could not be opened, where it
 * is the machine's rather than the file's (out of file descriptors or
 * memory, an I/O error); 0 else. */
static int open_errno(sqlite3 *db)
{
    const int err = db ? sqlite3_system_errno(db) : ENOMEM;
    return err == EMFILE || err == ENFILE || err == ENOMEM || err == EIO ? err : 0;
}

ob_status ob_st_db_fail(ob_store *s, ob_err *e, const char *what)
{
    return ob_fail(e, OB_ERR_DB, "database '%s': %s: %s%s", s->path, what, sqlite3_errmsg(s->db), io_hint(s));
}

static ob_status exec(ob_store *s, const char *sql, ob_err *e)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        ob_fail(e, OB_ERR_DB, "database '%s': %s%s", s->path, msg ? msg : sqlite3_errmsg(s->db), io_hint(s));
        sqlite3_free(msg);
        return OB_ERR_DB;
    }
    return OB_OK;
}

/* One-off statements (not on a hot path): prepared per call. */
ob_status ob_st_prep(ob_store *s, const char *sql, sqlite3_stmt **q, ob_err *e)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, q, NULL) != SQLITE_OK) {
        sqlite3_finalize(*q);
        *q = NULL;
        return ob_st_db_fail(s, e, "preparing a statement");
    }
    return OB_OK;
}

ob_status ob_st_stmt(ob_store *s, int which, sqlite3_stmt **out, ob_err *e)
{
    if (s->readonly)
        return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    if (!s->st[which] &&
        sqlite3_prepare_v3(s->db, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT, &s->st[which],
                           NULL) != SQLITE_OK)
        return ob_st_db_fail(s, e, "preparing a statement");
    sqlite3_reset(s->st[which]);
    sqlite3_clear_bindings(s->st[which]);
    *out = s->st[which];
    return OB_OK;
}

/* Bind helpers: NULL text, NaN reals and negative "absent" integers become SQL NULL. */
void ob_st_bind_text(sqlite3_stmt *q, int i, const char *v)
{
    if (v) sqlite3_bind_text(q, i, v, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(q, i);
}
static void bind_real(sqlite3_stmt *q, int i, double v)
{
    if (isnan(v)) sqlite3_bind_null(q, i);
    else sqlite3_bind_double(q, i, v);
}
static void bind_opt_int(sqlite3_stmt *q, int i, int64_t v)
{
    if (v < 0) sqlite3_bind_null(q, i);
    else sqlite3_bind_int64(q, i, v);
}

ob_status ob_st_step_done(ob_store *s, sqlite3_stmt *q, ob_err *e, const char *what)
{
    int rc = sqlite3_step(q);
    ob_status st = OB_OK;
    if (rc != SQLITE_DONE) st = ob_st_db_fail(s, e, what);
    sqlite3_reset(q);
    return st;
}

/* A write transaction. Another process holding the write lock longer than the
 * busy timeout (a long transaction of a concurrent `optbench run`) is waited
 * out a few more times before giving up: concurrent writers lose nothing.
 * Transactions nest: inside ob_store_tx_begin (or another begin) only the
 * outermost one talks to SQLite, and a failure anywhere rolls all back. */
#define OB_STORE_BUSY_RETRIES 6
ob_status ob_st_begin(ob_store *s, ob_err *e)
{
    if (s->tx_depth > 0) {
        s->tx_depth++;
        return OB_OK;
    }
    for (int i = 0;; i++) {
        int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            s->tx_depth = 1;
            s->tx_failed = 0;
            return OB_OK;
        }
        if ((rc & 0xff) != SQLITE_BUSY || i == OB_STORE_BUSY_RETRIES)
            return ob_st_db_fail(s, e, "starting a write transaction");
        sqlite3_sleep(100 * (i + 1));
    }
}

ob_status ob_st_commit_or_rollback(ob_store *s, ob_status st, ob_err *e)
{
    if (s->tx_depth > 1) {
        s->tx_depth--;
        if (st != OB_OK) s->tx_failed = 1;
        return st;
    }
    s->tx_depth = 0;
    if (st == OB_OK && s->tx_failed)
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "a nested write to '%s' failed and was not reported", s->path);
    if (st == OB_OK) st = exec(s, "COMMIT", e);
    if (st != OB_OK && !sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->tx_failed = 0;
    return st;
}

ob_status ob_store_tx_begin(ob_store *s, ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    return ob_st_begin(s, e);
}

ob_status ob_store_tx_end(ob_store *s, ob_status st, ob_err *e)
{
    if (s->tx_depth <= 0) return st;
    return ob_st_commit_or_rollback(s, st, e);
}

/* ---- opening --------------------------------------------------------------- */

typedef struct probe {
    int exists;       /* the file exists */
    int fresh;        /* missing, empty, or an SQLite db with no objects: initialize */
    int version;      /* user_version of an existing optbench db */
} probe;

/* A read-only connection to a WAL database creates NAME-wal and NAME-shm when
 * they are missing, and cannot remove them when it closes: SQLite leaves that
 * to a read-write connection. So where they were not there before and may be
 * removed, a read-write connection that only reads closes after it: as the
 * last connection it removes them (a checkpoint of an empty log writes
 * nothing), and while another process has the database open they stay. */
static int wal_present(const char *path)
{
    char p[600];
    struct stat sb;
    snprintf(p, sizeof p, "%s-wal", path);
    if (stat(p, &sb) == 0) return 1;
    snprintf(p, sizeof p, "%s-shm", path);
    return stat(p, &sb) == 0;
}

static int folder_writable(const char *path);

static int journal_present(const char *path)
{
    char p[600];
    struct stat sb;
    snprintf(p, sizeof p, "%s-journal", path);
    return stat(p, &sb) == 0;
}

/* The size of NAME-wal: 0 when it is empty or absent. */
static long long wal_bytes(const char *path)
{
    char p[600];
    struct stat sb;
    snprintf(p, sizeof p, "%s-wal", path);
    return stat(p, &sb) == 0 ? (long long)sb.st_size : 0;
}

/* Removes NAME-wal and NAME-shm that this process's reading made (had 0:
 * they were not there before), or an empty NAME-wal and its NAME-shm left by
 * a reader that was killed (had 1): nothing to write back, so the database
 * file stays as it is. A log with content that was there before is a
 * writer's, and stays. */
static void tidy_wal(const char *path, int had)
{
    if ((had && wal_bytes(path) != 0) || !wal_present(path) || access(path, W_OK) != 0) return;
    if (!folder_writable(path)) return;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 200);
        sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    }
    sqlite3_close(db);
}

/* Can this process create files in path's folder? */
static int folder_writable(const char *path)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    return access(slash ? dir : ".", W_OK) == 0;
}

/* Whether the file's header says it is in WAL mode (read and write
 * versions 2, bytes 18 and 19). */
static int wal_mode_file(const char *path)
{
    unsigned char h[20];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    if (f) fclose(f);
    return n == sizeof h && h[18] == 2 && h[19] == 2;
}

/* sqlite3_open_v2, except that a read-only open of a WAL database in a folder
 * this process cannot write, with neither NAME-wal nor NAME-journal beside it,
 * opens it immutable: SQLite would need to create NAME-shm there, and with no
 * log the file holds every committed write and nothing half done (a
 * NAME-journal, a write cut off, still goes the usual way: only a writer can
 * roll it back). */
static int open_db(const char *path, int flags, sqlite3 **db)
{
    char side[600];
    struct stat sb;
    int logged = 0;
    snprintf(side, sizeof side, "%s-wal", path);
    logged |= stat(side, &sb) == 0;
    snprintf(side, sizeof side, "%s-journal", path);
    logged |= stat(side, &sb) == 0;
    if (flags != SQLITE_OPEN_READONLY || logged || folder_writable(path) || !wal_mode_file(path))
        return sqlite3_open_v2(path, db, flags, NULL);
    char uri[2048];
    size_t n = (size_t)snprintf(uri, sizeof uri, "file:");
    while (path[0] == '/' && path[1] == '/') path++; /* "file://x" would name a host */
    for (const unsigned char *c = (const unsigned char *)path; *c && n + 4 < sizeof uri; c++) {
        if (isalnum(*c) || strchr("/._~-", *c)) uri[n++] = (char)*c;
        else n += (size_t)snprintf(uri + n, sizeof uri - n, "%%%02X", *c);
    }
    snprintf(uri + n, sizeof uri - n, "?immutable=1");
    return sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
}

/* Opens path with flags and reads its application id, schema version and
 * number of schema objects. SQLITE_OK, or an error code with *db left open
 * (when not NULL) for its message. */
static int probe_query(const char *path, int flags, sqlite3 **db, long long *app, long long *ver,
                       long long *objects)
{
    int rc = open_db(path, flags, db);
    if (rc != SQLITE_OK) return rc;
    sqlite3_busy_timeout(*db, 5000);
    sqlite3_stmt *q = NULL;
    rc = sqlite3_prepare_v2(*db,
                            "SELECT (SELECT application_id FROM pragma_application_id), "
                            "(SELECT user_version FROM pragma_user_version), "
                            "(SELECT count(*) FROM sqlite_master)",
                            -1, &q, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        *app = sqlite3_column_int64(q, 0);
        *ver = sqlite3_column_int64(q, 1);
        *objects = sqlite3_column_int64(q, 2);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    return rc;
}

/* A file of 0 bytes, or an SQLite database without tables, opened to be
 * read: `run` makes one as it starts, so most likely one was stopped then. */
static ob_status fail_empty(const char *path, ob_err *e)
{
    return ob_fail(e, OB_ERR_INPUT,
                   "database '%s' holds no results yet: it is empty (an optbench run stopped as it created it, "
                   "or a file made by another program); `optbench run` with --resume and this --db fills it",
                   path);
}

static ob_status probe_file(const char *path, ob_open_mode mode, probe *p, ob_err *e);

int ob_store_empty(const char *path)
{
    probe p;
    ob_err e;
    return probe_file(path, OB_STORE_CREATE, &p, &e) == OB_OK && p.exists && p.fresh;
}

/* A path stat failed on (err: its errno): a missing file is fresh where mode creates it, else refused. */
static ob_status probe_missing(const char *path, ob_open_mode mode, int err, probe *p, ob_err *e)
{
    if (err != ENOENT) return ob_fail(e, OB_ERR_INPUT, "database '%s': %s", path, strerror(err));
    if (mode != OB_STORE_CREATE) return ob_fail(e, OB_ERR_INPUT, "database '%s' does not exist", path);
    p->fresh = 1;
    return OB_OK;
}

/* An empty file or an empty SQLite database: fresh where mode creates it, else refused as empty. */
static ob_status probe_empty(const char *path, ob_open_mode mode, probe *p, ob_err *e)
{
    if (mode != OB_STORE_CREATE) return fail_empty(path, e);
    p->fresh = 1;
    return OB_OK;
}

/* Reads up to the first 100 bytes of the regular file at path into hdr (*n: how many were read). */
static ob_status read_header(const char *path, const struct stat *sb, unsigned char hdr[100], size_t *n, ob_err *e)
{
    if (!S_ISREG(sb->st_mode))
        return ob_fail(e, OB_ERR_INPUT, "database '%s' is not a regular file", path);
    FILE *f = fopen(path, "rb");
    if (!f) return ob_fail(e, OB_ERR_INPUT, "cannot read database '%s': %s", path, strerror(errno));
    *n = fread(hdr, 1, 100, f);
    fclose(f);
    return OB_OK;
}

/* Refuses a file whose header (n bytes of it) is not an SQLite database's, or one cut short inside a page. */
static ob_status check_header(const char *path, ob_open_mode mode, const struct stat *sb, const unsigned char *hdr,
                              size_t n, ob_err *e)
{
    if (n < 100 || memcmp(hdr, "SQLite format 3", 16) != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "'%s' is not an SQLite database, so not an optbench results database "
                       "(left unchanged)", path);
    /* A file cut short inside a page: SQLite reads the missing bytes as
     * zeros, and its read-only check need not notice (a row of zeros breaks
     * a CHECK that only a writer's check tests), so the pages are counted
     * here. SQLite writes whole pages only. */
    const unsigned page = (unsigned)hdr[16] << 8 | hdr[17];
    const long long page_size = page == 1 ? 65536 : (long long)page;
    if (mode != OB_STORE_AGAIN && page_size >= 512 && (long long)sb->st_size % page_size != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "database '%s' is damaged: its %lld bytes are not a whole number of its %lld-byte pages, "
                       "so it was cut short (a copy or a download that stopped; use an intact copy, e.g. a backup "
                       "or the shard's own copy; `sqlite3 '%s' .recover` may save what is left, into a new file; "
                       "it was left unchanged)",
                       path, (long long)sb->st_size, page_size, path);
    return OB_OK;
}

/* A hot journal stopped the read-only probe: rolls it back through a read-write connection and reads the
 * file again. On failure *db is closed and the log tidied. */
static ob_status roll_back_journal(const char *path, int had_wal, sqlite3 **db, long long *app, long long *ver,
                                   long long *objects, ob_err *e)
{
    /* A process stopped in the middle of a write (a kill while the file
     * was being created) left a hot journal, NAME-journal, which only a
     * writer can roll back: roll it back, restoring the last committed
     * state, as any SQLite writer would, instead of refusing the file. */
    sqlite3_close(*db);
    *db = NULL;
    if (access(path, W_OK) == 0 && probe_query(path, SQLITE_OPEN_READWRITE, db, app, ver, objects) == SQLITE_OK)
        return OB_OK;
    ob_fail(e, OB_ERR_INPUT,
            "database '%s' cannot be read: a process stopped while writing it left '%s-journal', "
            "which only a writer can roll back (%s); make the file writable and run again",
            path, path, *db ? sqlite3_errmsg(*db) : "the file is not writable");
    sqlite3_close(*db);
    tidy_wal(path, had_wal);
    return OB_ERR_INPUT;
}

/* The probe could not open db for want of the machine's resources (open_errno): an I/O error. */
static ob_status fail_probe_machine(const char *path, sqlite3 *db, ob_err *e)
{
    const int err = open_errno(db);
    return ob_fail(e, OB_ERR_IO, "database '%s' cannot be opened: %s (%s; the database was left "
                   "unchanged: run again once the machine has them)", path,
                   db ? sqlite3_errmsg(db) : "out of memory", strerror(err));
}

/* The probe could not read db: the file is damaged, the disk full, or its folder read-only with a log beside. */
static ob_status fail_probe_read(const char *path, sqlite3 *db, ob_err *e)
{
    int code = db ? sqlite3_errcode(db) & 0xff : 0;
    int corrupt = code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
    /* an I/O error here is the disk's, not the file's: SQLite could not
     * create or size NAME-shm beside a WAL database (a full disk) */
    int io = code == SQLITE_IOERR || code == SQLITE_FULL;
    return ob_fail(e, io ? OB_ERR_IO : OB_ERR_INPUT, "database '%s' cannot be read: %s%s", path,
            db ? sqlite3_errmsg(db) : "out of memory",
            corrupt ? " (the file is damaged or incomplete, e.g. cut short by a copy: use an intact copy "
                      "or another database; it was left unchanged)"
            : io ? " (is the disk full? SQLite needs room for NAME-shm beside a database in WAL mode, also "
                   "to read it; the database was left unchanged: make room and run again)"
            : !folder_writable(path) && wal_present(path)
                ? " (its folder is read-only, and SQLite needs to create NAME-shm beside a database with a "
                  "write-ahead log, NAME-wal: copy the database with its -wal file to a writable folder)"
            : !folder_writable(path) && journal_present(path)
                ? " (its folder is read-only, and NAME-journal beside it, left by a write that was cut off, "
                  "needs a writer to roll it back: copy the database with its -journal file to a writable "
                  "folder)"
                : "");
}

/* Reads the SQLite file's application id, schema version and number of schema objects through a read-only
 * connection (a read-write one where a hot journal needs rolling back). On success *db stays open; on
 * failure it is closed and the log tidied. */
static ob_status probe_read(const char *path, int had_wal, sqlite3 **db, long long *app, long long *ver,
                            long long *objects, ob_err *e)
{
    int rc = probe_query(path, SQLITE_OPEN_READONLY, db, app, ver, objects);
    if (rc != SQLITE_OK && *db && sqlite3_extended_errcode(*db) == SQLITE_READONLY_ROLLBACK)
        return roll_back_journal(path, had_wal, db, app, ver, objects, e);
    if (rc == SQLITE_OK) return OB_OK;
    ob_status st = open_errno(*db) ? fail_probe_machine(path, *db, e) : fail_probe_read(path, *db, e);
    sqlite3_close(*db);
    tidy_wal(path, had_wal);
    return st;
}

/* SQLite's check of every page and index of db (integrity_check): its first complaint (owned), or NULL where it finds
 * none, or could not run for another reason than damage. */
static char *page_damage(sqlite3 *db)
{
    char *bad = NULL;
    sqlite3_stmt *q = NULL;
    /* integrity_check, not quick_check: an index out of step with its table
     * (a stray write into an index page) passes quick_check and would be
     * written to; the indexes are on the small tables, so it costs little
     * more (0.10-0.12 s against 0.08-0.09 s for 25 MB of curves) */
    int qc = sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &q, NULL);
    if (qc == SQLITE_OK) qc = sqlite3_step(q);
    if (qc == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(q, 0);
        if (r && strcmp(r, "ok") != 0) bad = strdup(r);
    } else if ((sqlite3_errcode(db) & 0xff) == SQLITE_CORRUPT || (sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB) {
        bad = strdup(sqlite3_errmsg(db));
    } /* anything else (a lock held too long, say) is left to the open that follows */
    sqlite3_finalize(q);
    return bad;
}

/* Refuses a database whose pages SQLite's check found damaged (bad: its complaint, freed here). */
static ob_status fail_damaged(const char *path, char *bad, ob_err *e)
{
    for (char *c = bad; *c; c++)
        if (*c == '\n') *c = ' ';
    const char *head = "*** in database main *** ";
    if (strncmp(bad, head, strlen(head)) == 0) memmove(bad, bad + strlen(head), strlen(bad) - strlen(head) + 1);
    ob_fail(e, OB_ERR_INPUT,
            "database '%s' is damaged: SQLite's check of its pages says: %s (use an intact copy, "
            "e.g. a backup or the shard's own copy; `sqlite3 '%s' .recover` may save what is "
            "left, into a new file; it was left unchanged)",
            path, bad, path);
    free(bad);
    return OB_ERR_INPUT;
}

/* Checks the pages of an optbench database (not for OB_STORE_AGAIN, nor where OB_DB_CHECK is off). On
 * failure db is closed and the log tidied. */
static ob_status probe_pages(const char *path, ob_open_mode mode, sqlite3 *db, int had_wal, long long app,
                             ob_err *e)
{
    if (mode == OB_STORE_AGAIN || (uint32_t)app != (uint32_t)OB_APPLICATION_ID) return OB_OK;
    const char *env = getenv("OB_DB_CHECK");
    if (env && !strcmp(env, "off")) return OB_OK;
    if (env && *env && strcmp(env, "on") != 0) {
        sqlite3_close(db);
        tidy_wal(path, had_wal);
        return ob_fail(e, OB_ERR_INPUT,
                       "the environment's OB_DB_CHECK='%.40s' is neither on nor off: unset it (or write "
                       "on) to have each database's pages checked when it is opened, off to skip that "
                       "check (database '%s' was not opened)",
                       env, path);
    }
    /* A damaged page inside a table (a bad disk, a copy cut short and
     * patched, a stray write) need not stop SQLite from reading the rest:
     * a scan may end early or skip rows, and report, compare and merge
     * would give numbers from part of the curves as if from all of them.
     * Check the whole file's structure first (integrity_check reads every
     * page once, and compares each index with its table) and refuse a
     * damaged one. */
    char *bad = page_damage(db);
    if (!bad) return OB_OK;
    fail_damaged(path, bad, e);
    sqlite3_close(db);
    tidy_wal(path, had_wal);
    return OB_ERR_INPUT;
}

/* What a readable SQLite file is from its application id, schema version and number of schema objects. */
static ob_status probe_kind(const char *path, ob_open_mode mode, long long app, long long ver, long long objects,
                            probe *p, ob_err *e)
{
    if ((uint32_t)app != (uint32_t)OB_APPLICATION_ID) {
        if (app == 0 && ver == 0 && objects == 0) return probe_empty(path, mode, p, e);
        return ob_fail(e, OB_ERR_INPUT,
                       "'%s' is an SQLite database but not an optbench results database "
                       "(application_id 0x%08x, expected 0x%08x); left unchanged",
                       path, (unsigned)app, (unsigned)OB_APPLICATION_ID);
    }
    if (ver > OB_SCHEMA_VERSION)
        return ob_fail(e, OB_ERR_INPUT,
                       "database '%s' has schema version %lld, newer than this optbench "
                       "understands (%d); use a newer optbench", path, ver, OB_SCHEMA_VERSION);
    if (ver < 1)
        return ob_fail(e, OB_ERR_INPUT,
                       "database '%s' is marked as optbench but has no schema version; "
                       "it is damaged or was not written by optbench", path);
    p->version = (int)ver;
    return OB_OK;
}

/* Decide what the file at path is without writing to it. */
static ob_status probe_file(const char *path, ob_open_mode mode, probe *p, ob_err *e)
{
    memset(p, 0, sizeof *p);
    struct stat sb;
    if (stat(path, &sb) != 0) return probe_missing(path, mode, errno, p, e);
    p->exists = 1;
    unsigned char hdr[100];
    size_t n = 0;
    OB_TRY(read_header(path, &sb, hdr, &n, e));
    if (n == 0) return probe_empty(path, mode, p, e);
    OB_TRY(check_header(path, mode, &sb, hdr, n, e));

    /* An SQLite file: ask it, through a read-only connection, what it holds. */
    int had_wal = wal_present(path);
    sqlite3 *db = NULL;
    long long app = 0, ver = 0, objects = 0;
    OB_TRY(probe_read(path, had_wal, &db, &app, &ver, &objects, e));
    OB_TRY(probe_pages(path, mode, db, had_wal, app, e));
    sqlite3_close(db);
    tidy_wal(path, had_wal);
    return probe_kind(path, mode, app, ver, objects, p, e);
}

/* Writing needs the file and its folder (SQLite keeps NAME-wal and NAME-shm
 * beside it): say so before SQLite gives a less direct message. */
static ob_status check_writable(const char *path, ob_err *e)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, W_OK) != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "database '%s' is read-only (%s); optbench writes results into it: make it "
                       "writable or give another --db (nothing was changed)", path, strerror(errno));
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (access(dir, F_OK) != 0 && errno == ENOENT)
        return ob_fail(e, OB_ERR_INPUT,
                       "the folder '%s' of database '%s' does not exist: create it (mkdir -p '%s') or put "
                       "the database elsewhere", dir, path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "the folder '%s' of database '%s' is not writable (%s); SQLite keeps its "
                       "journal files beside the database: make the folder writable or put the database in "
                       "one that is (nothing was changed)", dir, path,
                       strerror(errno));
    /* NAME-wal and NAME-shm that this user cannot write (left by another
     * user's read, which could not remove them): SQLite would say only
     * "attempt to write a readonly database" */
    static const char *const side[2] = {"-wal", "-shm"};
    for (int k = 0; k < 2; k++) {
        char f[1100];
        snprintf(f, sizeof f, "%s%s", path, side[k]);
        if (stat(f, &sb) != 0 || access(f, W_OK) == 0) continue;
        const long long wb = wal_bytes(path);
        return ob_fail(e, OB_ERR_INPUT,
                       "database '%s': '%s' is not writable by this user (it belongs to uid %ld: left by a read "
                       "as that user, say), and SQLite writes through it; %s (nothing was changed)", path, f,
                       (long)sb.st_uid,
                       wb == 0 ? "the log is empty: have '-wal' and '-shm' beside the database removed (by their "
                                 "owner, or an administrator) while no optbench uses it"
                               : "the log holds writes not yet in the database: have their owner fold them in "
                                 "(sqlite3 DATABASE 'pragma wal_checkpoint(truncate)'), then remove '-wal' and "
                                 "'-shm'");
    }
    return OB_OK;
}

static ob_status create_schema(ob_store *s, ob_err *e)
{
    OB_TRY(ob_st_begin(s, e));
    /* Another process may have created it between the probe and this lock. */
    sqlite3_stmt *q = NULL;
    long long app = 0, ver = 0, objects = 0;
    ob_status st = OB_OK;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT (SELECT application_id FROM pragma_application_id), "
                           "(SELECT user_version FROM pragma_user_version), "
                           "(SELECT count(*) FROM sqlite_master)", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        st = ob_st_db_fail(s, e, "reading the schema version");
    } else {
        app = sqlite3_column_int64(q, 0);
        ver = sqlite3_column_int64(q, 1);
        objects = sqlite3_column_int64(q, 2);
    }
    sqlite3_finalize(q);
    if (st == OB_OK && (uint32_t)app == (uint32_t)OB_APPLICATION_ID && ver == OB_SCHEMA_VERSION)
        return ob_st_commit_or_rollback(s, OB_OK, e);
    if (st == OB_OK && (app != 0 || ver != 0 || objects != 0))
        st = ob_fail(e, OB_ERR_INPUT, "database '%s' changed while being opened; not touching it",
                     s->path);
    if (st == OB_OK) st = exec(s, schema_sql, e);
    if (st == OB_OK) {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "PRAGMA application_id = %d; PRAGMA user_version = %d;"
                 "INSERT INTO meta (key, value) VALUES ('application', 'optbench'),"
                 " ('schema_version', '%d'), ('created_by', 'optbench %s');",
                 (int)OB_APPLICATION_ID, OB_SCHEMA_VERSION, OB_SCHEMA_VERSION,
#ifdef OB_VERSION
                 OB_VERSION
#else
                 "?"
#endif
        );
        st = exec(s, sql, e);
    }
    return ob_st_commit_or_rollback(s, st, e);
}

static ob_status migrate(ob_store *s, int from, ob_err *e)
{
    if (from >= OB_SCHEMA_VERSION) return OB_OK;
    OB_TRY(ob_st_begin(s, e));
    ob_status st = OB_OK;
    for (int v = from; v < OB_SCHEMA_VERSION && st == OB_OK; v++) {
        /* v >= 1: probe_file refuses a database without a schema version */
        /* cppcheck-suppress negativeIndex */
        if (v - 1 >= N_MIGRATIONS || !migrations[v - 1]) {
            st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "no migration from schema version %d", v);
            break;
        }
        st = exec(s, migrations[v - 1], e);
        if (st != OB_OK && (sqlite3_errcode(s->db) & 0xff) == SQLITE_ERROR) /* the tables, not the disk */
            st = ob_fail(e, OB_ERR_INPUT,
                         "database '%s' says it is of schema version %d, but its tables do not match that "
                         "version (%s): it was changed by hand or by another program; use an intact copy or "
                         "another --db (nothing was changed)", s->path, from, sqlite3_errmsg(s->db));
    }
    if (st == OB_OK) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "PRAGMA user_version = %d; UPDATE meta SET value = '%d' WHERE key = 'schema_version';",
                 OB_SCHEMA_VERSION, OB_SCHEMA_VERSION);
        st = exec(s, sql, e);
    }
    return ob_st_commit_or_rollback(s, st, e);
}

/* A database that says it is optbench's, at the current version, yet lacks
 * a table or column of the schema (dropped by hand, or made by another
 * program that set the same ids) would fail at its first write, after a
 * benchmark and a run were recorded: refuse it before anything is written.
 * The schema's tables and columns are read from the schema itself, made in
 * a database in memory. */
static ob_status check_schema(ob_store *s, int migrated, ob_err *e)
{
    sqlite3 *ref = NULL;
    sqlite3_stmt *qr = NULL, *qt = NULL, *qc = NULL;
    ob_status st = OB_OK;
    char missing[256] = "";
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sqlite3_exec(ref, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(ref,
                           "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p "
                           "WHERE m.type = 'table' ORDER BY m.name, p.cid", -1, &qr, NULL) != SQLITE_OK) {
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "the schema in memory: %s",
                              ref ? sqlite3_errmsg(ref) : "out of memory");
        goto done;
    }
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1", -1, &qt,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info(?1, 'main') WHERE name = ?2", -1, &qc, NULL) !=
            SQLITE_OK) {
        st = ob_st_db_fail(s, e, "reading the schema");
        goto done;
    }
    int rc;
    while (!missing[0] && (rc = sqlite3_step(qr)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(qr, 0), *c = (const char *)sqlite3_column_text(qr, 1);
        sqlite3_reset(qt);
        sqlite3_bind_text(qt, 1, t, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(qt) != SQLITE_ROW) {
            snprintf(missing, sizeof missing, "no table '%s'", t);
            break;
        }
        sqlite3_reset(qc);
        sqlite3_bind_text(qc, 1, t, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(qc, 2, c, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(qc) != SQLITE_ROW) snprintf(missing, sizeof missing, "no column '%s' in table '%s'", c, t);
    }
    if (missing[0])
        st = ob_fail(e, OB_ERR_INPUT,
                     "database '%s' lacks part of optbench's schema (%s): a table or column was dropped, or "
                     "another program made it; use an intact copy or another --db (%s)",
                     s->path, missing,
                     migrated ? "it was brought to this schema version; nothing else was changed" : "nothing was changed");
done:
    sqlite3_finalize(qr);
    sqlite3_finalize(qt);
    sqlite3_finalize(qc);
    sqlite3_close(ref);
    return st;
}

ob_status ob_store_open(const char *path, ob_open_mode mode, ob_store **out, ob_err *e)
{
    *out = NULL;
    if (!path || !*path) return ob_fail(e, OB_ERR_INPUT, "no database file given");
    if (mode != OB_STORE_READONLY) OB_TRY(check_writable(path, e));
    int had_wal = wal_present(path);
    probe p;
    OB_TRY(probe_file(path, mode, &p, e));

    ob_store *s = calloc(1, sizeof *s);
    if (!s) return ob_fail(e, OB_ERR_NOMEM, "out of memory opening '%s'", path);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->readonly = mode == OB_STORE_READONLY;
    s->had_wal = had_wal;
    int flags = s->readonly ? SQLITE_OPEN_READONLY
                            : SQLITE_OPEN_READWRITE | (mode == OB_STORE_CREATE ? SQLITE_OPEN_CREATE : 0);
    if (open_db(path, flags, &s->db) != SQLITE_OK) {
        const int err = open_errno(s->db);
        ob_status st = err ? ob_fail(e, OB_ERR_IO, "cannot open database '%s': %s (%s; run again once the machine "
                                     "has them)", path, s->db ? sqlite3_errmsg(s->db) : "out of memory", strerror(err))
                           : ob_fail(e, OB_ERR_INPUT, "cannot open database '%s': %s", path,
                                     s->db ? sqlite3_errmsg(s->db) : "out of memory");
        ob_store_close(s);
        return st;
    }
    sqlite3_busy_timeout(s->db, 10000);
    ob_status st = OB_OK;
    if (ob_store_sql_defaults(s->db) != SQLITE_OK) {
        st = ob_st_db_fail(s, e, "opening the database");
        ob_store_close(s);
        return st;
    }
    if (!s->readonly && sqlite3_db_readonly(s->db, "main") == 1) {
        st = ob_fail(e, OB_ERR_INPUT,
                     "database '%s' can only be read here (read-only file system?); optbench "
                     "writes results into it: give another --db (nothing was changed)", path);
        ob_store_close(s);
        return st;
    }
    if (!s->readonly) {
        /* Two processes creating one database at once: switching a new file
         * to WAL and creating the schema need locks that SQLite may refuse
         * at once (SQLITE_BUSY without calling the busy handler); retry for
         * up to about 20 s before giving up. */
        for (int attempt = 0;; attempt++) {
            st = exec(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                         "PRAGMA foreign_keys = ON;", e);
            if (st == OB_OK) st = p.fresh ? create_schema(s, e) : migrate(s, p.version, e);
            if (st == OB_OK || (sqlite3_errcode(s->db) & 0xff) != SQLITE_BUSY || attempt == 200) break;
            sqlite3_sleep(20 + (attempt % 5) * 20);
            if (p.fresh) { /* the other process may have finished creating it */
                probe q;
                if (probe_file(path, mode, &q, e) == OB_OK) p = q;
            }
        }
        if (st == OB_OK) st = check_schema(s, !p.fresh && p.version < OB_SCHEMA_VERSION, e);
        /* an index added within schema version 5 (nothing but SQLite reads it) */
        if (st == OB_OK && !p.fresh)
            st = exec(s, "CREATE INDEX IF NOT EXISTS runs_by_benchmark_cell ON runs (benchmark_id, cell);", e);
    } else {
        st = exec(s, "PRAGMA query_only = ON;", e);
    }
    if (st != OB_OK) {
        ob_store_close(s);
        return st;
    }
    *out = s;
    return OB_OK;
}

void ob_store_close(ob_store *s)
{
    if (!s) return;
    for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(s->st[i]);
    sqlite3_close_v2(s->db);
    if (s->readonly) tidy_wal(s->path, s->had_wal);
    free(s);
}

struct sqlite3 *ob_store_db(ob_store *s) { return s ? s->db : NULL; }

const char *ob_store_path(ob_store *s) { return s ? s->path : ""; }

ob_status ob_store_database_id(ob_store *s, char *buf, size_t n, ob_err *e)
{
    buf[0] = 0;
    ob_status st = OB_OK;
    if (!s->readonly) {
        unsigned char r[8] = {0};
        FILE *f = fopen("/dev/urandom", "rb");
        size_t got = f ? fread(r, 1, sizeof r, f) : 0;
        if (f) fclose(f);
        if (got != sizeof r) { /* no /dev/urandom: the time and process are unique enough here */
            uint64_t x = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32 ^ (uint64_t)clock();
            for (int i = 0; i < 8; i++) r[i] = (unsigned char)(x >> (8 * i));
        }
        char sql[160];
        snprintf(sql, sizeof sql,
                 "INSERT OR IGNORE INTO meta (key, value) VALUES ('database_id', "
                 "'%02x%02x%02x%02x%02x%02x%02x%02x')",
                 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
        OB_TRY(ob_st_begin(s, e));
        st = ob_st_commit_or_rollback(s, exec(s, sql, e), e);
    }
    sqlite3_stmt *q = NULL;
    if (st == OB_OK) {
        if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'database_id'", -1, &q, NULL) != SQLITE_OK)
            st = ob_st_db_fail(s, e, "reading the database's id");
        else if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
            snprintf(buf, n, "%s", (const char *)sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    return st;
}

/* ---- writing ------------------------------------------------------------- */

ob_status ob_store_begin_benchmark(ob_store *s, const char *name, const char *config_text,
                                   const char *git_rev, const char *host, const char *backend,
                                   const char *device, int64_t *bench_id, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_stmt(s, ST_BEGIN_BENCH, &q, e));
    ob_st_bind_text(q, 1, name);
    ob_st_bind_text(q, 2, config_text);
    ob_st_bind_text(q, 3, git_rev);
    ob_st_bind_text(q, 4, host);
    ob_st_bind_text(q, 5, backend);
    ob_st_bind_text(q, 6, device);
    OB_TRY(ob_st_step_done(s, q, e, "recording the benchmark"));
    if (bench_id) *bench_id = sqlite3_last_insert_rowid(s->db);
    return OB_OK;
}

ob_status ob_st_update_one(ob_store *s, sqlite3_stmt *q, const char *what, int64_t id, ob_err *e)
{
    OB_TRY(ob_st_step_done(s, q, e, what));
    if (sqlite3_changes(s->db) != 1)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%s: no row with id %lld in '%s'", what,
                                (long long)id, s->path);
    return OB_OK;
}

ob_status ob_store_finish_benchmark(ob_store *s, int64_t bench_id, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_stmt(s, ST_FINISH_BENCH, &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    return ob_st_update_one(s, q, "finishing the benchmark", bench_id, e);
}

/* The bindings of ST_ADD_RUN for one run. */
void ob_st_bind_spec(sqlite3_stmt *q, int64_t bench_id, const ob_run_spec *r, const char *stage)
{
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (bench_id > 0) sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, r->cell);
    ob_st_bind_text(q, 3, r->workload);
    ob_st_bind_text(q, 4, r->workload_params);
    ob_st_bind_text(q, 5, r->optimizer);
    ob_st_bind_text(q, 6, r->hparams);
    sqlite3_bind_double(q, 7, r->lr);
    sqlite3_bind_int64(q, 8, r->seed);
    ob_st_bind_text(q, 9, r->backend);
    ob_st_bind_text(q, 10, r->device);
    sqlite3_bind_int64(q, 11, r->steps);
    ob_st_bind_text(q, 12, stage);
}

ob_status ob_store_add_runs(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n,
                            int64_t *ids, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_stmt(s, ST_ADD_RUN, &q, e));
    for (int i = 0; i < n; i++)
        if (!specs[i].workload || !specs[i].optimizer)
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "run spec %d has no workload/optimizer", i);
    OB_TRY(ob_st_begin(s, e));
    ob_status st = OB_OK;
    for (int i = 0; i < n && st == OB_OK; i++) {
        ob_st_bind_spec(q, bench_id, &specs[i], specs[i].stage);
        st = ob_st_step_done(s, q, e, "adding runs");
        if (st == OB_OK && ids) ids[i] = sqlite3_last_insert_rowid(s->db);
    }
    return ob_st_commit_or_rollback(s, st, e);
}

ob_status ob_store_run_started(ob_store *s, int64_t run_id, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_stmt(s, ST_RUN_STARTED, &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    return ob_st_update_one(s, q, "marking the run started", run_id, e);
}

ob_status ob_store_run_provenance(ob_store *s, int64_t run_id, const char *git_rev, const char *host, int continued,
                                  ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    sqlite3_stmt *q = NULL;
    /* continued by the same: unchanged; by another: ", then X" (once per change) */
    OB_TRY(ob_st_prep(s,
                      "UPDATE runs SET "
                      "git_rev = CASE WHEN NOT ?4 OR git_rev IS NULL THEN ?2 WHEN git_rev = ?2 OR "
                      "substr(git_rev, -length(', then ' || ?2)) = ', then ' || ?2 THEN git_rev "
                      "ELSE git_rev || ', then ' || ?2 END, "
                      "host = CASE WHEN NOT ?4 OR host IS NULL THEN ?3 WHEN host = ?3 OR "
                      "substr(host, -length(', then ' || ?3)) = ', then ' || ?3 THEN host "
                      "ELSE host || ', then ' || ?3 END WHERE id = ?1",
                      &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_st_bind_text(q, 2, git_rev);
    ob_st_bind_text(q, 3, host);
    sqlite3_bind_int(q, 4, continued != 0);
    ob_status st = ob_st_update_one(s, q, "recording the run's revision and host", run_id, e);
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_append(ob_store *s, int64_t run_id, const ob_curve_point *pts, int n_pts,
                          const ob_eval_point *evals, int n_evals, const ob_event *events,
                          int n_events, ob_err *e)
{
    if (n_pts <= 0 && n_evals <= 0 && n_events <= 0) return OB_OK;
    sqlite3_stmt *qc = NULL, *qe = NULL, *qv = NULL;
    OB_TRY(ob_st_stmt(s, ST_CURVE, &qc, e));
    OB_TRY(ob_st_stmt(s, ST_EVAL, &qe, e));
    OB_TRY(ob_st_stmt(s, ST_EVENT, &qv, e));
    OB_TRY(ob_st_begin(s, e));
    ob_status st = OB_OK;
    for (int i = 0; i < n_pts && st == OB_OK; i++) {
        sqlite3_bind_int64(qc, 1, run_id);
        sqlite3_bind_int64(qc, 2, pts[i].step);
        bind_real(qc, 3, pts[i].loss);
        bind_real(qc, 4, pts[i].grad_norm);
        bind_real(qc, 5, pts[i].lr);
        st = ob_st_step_done(s, qc, e, "appending curve points");
    }
    for (int i = 0; i < n_evals && st == OB_OK; i++) {
        sqlite3_bind_int64(qe, 1, run_id);
        sqlite3_bind_int64(qe, 2, evals[i].step);
        bind_real(qe, 3, evals[i].loss);
        bind_real(qe, 4, evals[i].metric);
        st = ob_st_step_done(s, qe, e, "appending evaluations");
    }
    for (int i = 0; i < n_events && st == OB_OK; i++) {
        sqlite3_clear_bindings(qv);
        sqlite3_bind_int64(qv, 1, run_id);
        sqlite3_bind_int64(qv, 2, events[i].step);
        ob_st_bind_text(qv, 3, events[i].kind ? events[i].kind : "event");
        ob_st_bind_text(qv, 4, events[i].detail);
        st = ob_st_step_done(s, qv, e, "appending events");
    }
    return ob_st_commit_or_rollback(s, st, e);
}

ob_status ob_store_finish_run(ob_store *s, int64_t run_id, const ob_run_result *r, ob_err *e)
{
    if (!r->status || !ob_store_status_known(r->status))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "run %lld: unknown status '%s'",
                                (long long)run_id, r->status ? r->status : "(null)");
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_st_stmt(s, ST_FINISH_RUN, &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_st_bind_text(q, 2, r->status);
    sqlite3_bind_int64(q, 3, r->steps_done);
    bind_real(q, 4, r->final_loss);
    bind_real(q, 5, r->best_loss);
    bind_real(q, 6, r->eval_loss);
    bind_real(q, 7, r->eval_metric);
    bind_real(q, 8, r->loss_floor);
    bind_opt_int(q, 9, r->peak_mem_bytes);
    bind_opt_int(q, 10, r->state_bytes);
    bind_real(q, 11, r->step_ms_median);
    bind_real(q, 12, r->step_ms_p90);
    bind_real(q, 13, r->items_per_sec);
    bind_opt_int(q, 14, r->diverged_step);
    bind_real(q, 15, r->wall_s);
    ob_st_bind_text(q, 16, r->error);
    bind_opt_int(q, 17, r->device_mem_bytes > 0 ? r->device_mem_bytes : -1);
    bind_real(q, 18, r->step_ms_mean);
    bind_real(q, 19, r->opt_ms_median);
    bind_real(q, 20, r->opt_ms_mean);
    bind_real(q, 21, r->other_cpu);
    return ob_st_update_one(s, q, "recording the run's result", run_id, e);
}
