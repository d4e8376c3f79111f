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

enum {
    ST_BEGIN_BENCH,
    ST_FINISH_BENCH,
    ST_ADD_RUN,
    ST_RUN_STARTED,
    ST_CURVE,
    ST_EVAL,
    ST_EVENT,
    ST_FINISH_RUN,
    ST_SWEEP_TEXTS,
    ST_COUNT
};

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

struct ob_store {
    sqlite3 *db;
    int readonly;
    int had_wal;                /* NAME-wal or NAME-shm existed when a read-only store opened */
    sqlite3_stmt *st[ST_COUNT]; /* prepared on first use, finalized at close */
    int tx_depth;               /* open write transactions: the outermost BEGINs and COMMITs */
    int tx_failed;              /* an inner one failed: the outermost rolls back */
    char path[512];
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

static ob_status db_fail(ob_store *s, ob_err *e, const char *what)
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

static ob_status stmt(ob_store *s, int which, sqlite3_stmt **out, ob_err *e)
{
    if (s->readonly)
        return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    if (!s->st[which] &&
        sqlite3_prepare_v3(s->db, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT, &s->st[which],
                           NULL) != SQLITE_OK)
        return db_fail(s, e, "preparing a statement");
    sqlite3_reset(s->st[which]);
    sqlite3_clear_bindings(s->st[which]);
    *out = s->st[which];
    return OB_OK;
}

/* Bind helpers: NULL text, NaN reals and negative "absent" integers become SQL NULL. */
static void bind_text(sqlite3_stmt *q, int i, const char *v)
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

static ob_status step_done(ob_store *s, sqlite3_stmt *q, ob_err *e, const char *what)
{
    int rc = sqlite3_step(q);
    ob_status st = OB_OK;
    if (rc != SQLITE_DONE) st = db_fail(s, e, what);
    sqlite3_reset(q);
    return st;
}

/* A write transaction. Another process holding the write lock longer than the
 * busy timeout (a long transaction of a concurrent `optbench run`) is waited
 * out a few more times before giving up: concurrent writers lose nothing.
 * Transactions nest: inside ob_store_tx_begin (or another begin) only the
 * outermost one talks to SQLite, and a failure anywhere rolls all back. */
#define OB_STORE_BUSY_RETRIES 6
static ob_status begin(ob_store *s, ob_err *e)
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
            return db_fail(s, e, "starting a write transaction");
        sqlite3_sleep(100 * (i + 1));
    }
}

static ob_status commit_or_rollback(ob_store *s, ob_status st, ob_err *e)
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
    return begin(s, e);
}

ob_status ob_store_tx_end(ob_store *s, ob_status st, ob_err *e)
{
    if (s->tx_depth <= 0) return st;
    return commit_or_rollback(s, st, e);
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

/* SQLite's check of every page of db (quick_check): its first complaint (owned), or NULL where it finds
 * none, or could not run for another reason than damage. */
static char *page_damage(sqlite3 *db)
{
    char *bad = NULL;
    sqlite3_stmt *q = NULL;
    int qc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &q, NULL);
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
     * Check the whole file's structure first (quick_check reads every
     * page once) and refuse a damaged one. */
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
    return OB_OK;
}

static ob_status create_schema(ob_store *s, ob_err *e)
{
    OB_TRY(begin(s, e));
    /* Another process may have created it between the probe and this lock. */
    sqlite3_stmt *q = NULL;
    long long app = 0, ver = 0, objects = 0;
    ob_status st = OB_OK;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT (SELECT application_id FROM pragma_application_id), "
                           "(SELECT user_version FROM pragma_user_version), "
                           "(SELECT count(*) FROM sqlite_master)", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        st = db_fail(s, e, "reading the schema version");
    } else {
        app = sqlite3_column_int64(q, 0);
        ver = sqlite3_column_int64(q, 1);
        objects = sqlite3_column_int64(q, 2);
    }
    sqlite3_finalize(q);
    if (st == OB_OK && (uint32_t)app == (uint32_t)OB_APPLICATION_ID && ver == OB_SCHEMA_VERSION)
        return commit_or_rollback(s, OB_OK, e);
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
    return commit_or_rollback(s, st, e);
}

static ob_status migrate(ob_store *s, int from, ob_err *e)
{
    if (from >= OB_SCHEMA_VERSION) return OB_OK;
    OB_TRY(begin(s, e));
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
    return commit_or_rollback(s, st, e);
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
        st = db_fail(s, e, "reading the schema");
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
        st = db_fail(s, e, "opening the database");
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
        OB_TRY(begin(s, e));
        st = commit_or_rollback(s, exec(s, sql, e), e);
    }
    sqlite3_stmt *q = NULL;
    if (st == OB_OK) {
        if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'database_id'", -1, &q, NULL) != SQLITE_OK)
            st = db_fail(s, e, "reading the database's id");
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
    OB_TRY(stmt(s, ST_BEGIN_BENCH, &q, e));
    bind_text(q, 1, name);
    bind_text(q, 2, config_text);
    bind_text(q, 3, git_rev);
    bind_text(q, 4, host);
    bind_text(q, 5, backend);
    bind_text(q, 6, device);
    OB_TRY(step_done(s, q, e, "recording the benchmark"));
    if (bench_id) *bench_id = sqlite3_last_insert_rowid(s->db);
    return OB_OK;
}

static ob_status update_one(ob_store *s, sqlite3_stmt *q, const char *what, int64_t id, ob_err *e)
{
    OB_TRY(step_done(s, q, e, what));
    if (sqlite3_changes(s->db) != 1)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%s: no row with id %lld in '%s'", what,
                                (long long)id, s->path);
    return OB_OK;
}

ob_status ob_store_finish_benchmark(ob_store *s, int64_t bench_id, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(stmt(s, ST_FINISH_BENCH, &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    return update_one(s, q, "finishing the benchmark", bench_id, e);
}

/* The bindings of ST_ADD_RUN for one run. */
static void bind_spec(sqlite3_stmt *q, int64_t bench_id, const ob_run_spec *r, const char *stage)
{
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (bench_id > 0) sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, r->cell);
    bind_text(q, 3, r->workload);
    bind_text(q, 4, r->workload_params);
    bind_text(q, 5, r->optimizer);
    bind_text(q, 6, r->hparams);
    sqlite3_bind_double(q, 7, r->lr);
    sqlite3_bind_int64(q, 8, r->seed);
    bind_text(q, 9, r->backend);
    bind_text(q, 10, r->device);
    sqlite3_bind_int64(q, 11, r->steps);
    bind_text(q, 12, stage);
}

ob_status ob_store_add_runs(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n,
                            int64_t *ids, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(stmt(s, ST_ADD_RUN, &q, e));
    for (int i = 0; i < n; i++)
        if (!specs[i].workload || !specs[i].optimizer)
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "run spec %d has no workload/optimizer", i);
    OB_TRY(begin(s, e));
    ob_status st = OB_OK;
    for (int i = 0; i < n && st == OB_OK; i++) {
        bind_spec(q, bench_id, &specs[i], specs[i].stage);
        st = step_done(s, q, e, "adding runs");
        if (st == OB_OK && ids) ids[i] = sqlite3_last_insert_rowid(s->db);
    }
    return commit_or_rollback(s, st, e);
}

ob_status ob_store_run_started(ob_store *s, int64_t run_id, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(stmt(s, ST_RUN_STARTED, &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    return update_one(s, q, "marking the run started", run_id, e);
}

static ob_status prep(ob_store *s, const char *sql, sqlite3_stmt **q, ob_err *e);

ob_status ob_store_run_provenance(ob_store *s, int64_t run_id, const char *git_rev, const char *host, int continued,
                                  ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    sqlite3_stmt *q = NULL;
    /* continued by the same: unchanged; by another: ", then X" (once per change) */
    OB_TRY(prep(s,
                "UPDATE runs SET "
                "git_rev = CASE WHEN NOT ?4 OR git_rev IS NULL THEN ?2 WHEN git_rev = ?2 OR "
                "substr(git_rev, -length(', then ' || ?2)) = ', then ' || ?2 THEN git_rev "
                "ELSE git_rev || ', then ' || ?2 END, "
                "host = CASE WHEN NOT ?4 OR host IS NULL THEN ?3 WHEN host = ?3 OR "
                "substr(host, -length(', then ' || ?3)) = ', then ' || ?3 THEN host "
                "ELSE host || ', then ' || ?3 END WHERE id = ?1",
                &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    bind_text(q, 2, git_rev);
    bind_text(q, 3, host);
    sqlite3_bind_int(q, 4, continued != 0);
    ob_status st = update_one(s, q, "recording the run's revision and host", run_id, e);
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_append(ob_store *s, int64_t run_id, const ob_curve_point *pts, int n_pts,
                          const ob_eval_point *evals, int n_evals, const ob_event *events,
                          int n_events, ob_err *e)
{
    if (n_pts <= 0 && n_evals <= 0 && n_events <= 0) return OB_OK;
    sqlite3_stmt *qc = NULL, *qe = NULL, *qv = NULL;
    OB_TRY(stmt(s, ST_CURVE, &qc, e));
    OB_TRY(stmt(s, ST_EVAL, &qe, e));
    OB_TRY(stmt(s, ST_EVENT, &qv, e));
    OB_TRY(begin(s, e));
    ob_status st = OB_OK;
    for (int i = 0; i < n_pts && st == OB_OK; i++) {
        sqlite3_bind_int64(qc, 1, run_id);
        sqlite3_bind_int64(qc, 2, pts[i].step);
        bind_real(qc, 3, pts[i].loss);
        bind_real(qc, 4, pts[i].grad_norm);
        bind_real(qc, 5, pts[i].lr);
        st = step_done(s, qc, e, "appending curve points");
    }
    for (int i = 0; i < n_evals && st == OB_OK; i++) {
        sqlite3_bind_int64(qe, 1, run_id);
        sqlite3_bind_int64(qe, 2, evals[i].step);
        bind_real(qe, 3, evals[i].loss);
        bind_real(qe, 4, evals[i].metric);
        st = step_done(s, qe, e, "appending evaluations");
    }
    for (int i = 0; i < n_events && st == OB_OK; i++) {
        sqlite3_clear_bindings(qv);
        sqlite3_bind_int64(qv, 1, run_id);
        sqlite3_bind_int64(qv, 2, events[i].step);
        bind_text(qv, 3, events[i].kind ? events[i].kind : "event");
        bind_text(qv, 4, events[i].detail);
        st = step_done(s, qv, e, "appending events");
    }
    return commit_or_rollback(s, st, e);
}

ob_status ob_store_finish_run(ob_store *s, int64_t run_id, const ob_run_result *r, ob_err *e)
{
    if (!r->status || !ob_store_status_known(r->status))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "run %lld: unknown status '%s'",
                                (long long)run_id, r->status ? r->status : "(null)");
    sqlite3_stmt *q = NULL;
    OB_TRY(stmt(s, ST_FINISH_RUN, &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    bind_text(q, 2, r->status);
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
    bind_text(q, 16, r->error);
    bind_opt_int(q, 17, r->device_mem_bytes > 0 ? r->device_mem_bytes : -1);
    bind_real(q, 18, r->step_ms_mean);
    bind_real(q, 19, r->opt_ms_median);
    bind_real(q, 20, r->opt_ms_mean);
    bind_real(q, 21, r->other_cpu);
    return update_one(s, q, "recording the run's result", run_id, e);
}

/* ---- resume, sharding and merge ------------------------------------------ */

/* One-off statements (not on a hot path): prepared per call. */
static ob_status prep(ob_store *s, const char *sql, sqlite3_stmt **q, ob_err *e)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, q, NULL) != SQLITE_OK) {
        sqlite3_finalize(*q);
        *q = NULL;
        return db_fail(s, e, "preparing a statement");
    }
    return OB_OK;
}

ob_status ob_store_set_benchmark_origin(ob_store *s, int64_t bench_id, const char *shard,
                                        const char *provenance, ob_err *e)
{
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    sqlite3_stmt *q = NULL;
    OB_TRY(prep(s, "UPDATE benchmarks SET shard = ?2, provenance = ?3 WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    bind_text(q, 2, shard);
    bind_text(q, 3, provenance);
    ob_status st = step_done(s, q, e, "recording the benchmark's shard");
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
    bind_text(q, 1, stored);
    bind_text(q, 2, current);
    bind_text(q, 3, defaults);
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
    OB_TRY(stmt(s, ST_SWEEP_TEXTS, &q, e)); /* once per cell of a benchmark: prepared once */
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
        st = db_fail(s, e, "reading a run's settings");
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
    if (*ok && rc != SQLITE_DONE) return db_fail(s, e, "reading the runs of a benchmark");
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
    OB_TRY(prep(s, "SELECT id, merged FROM (SELECT id, shard, CASE WHEN json_valid(provenance) THEN "
                   "json_extract(provenance, '$.sources') IS NOT NULL ELSE 0 END AS merged FROM benchmarks) "
                   "WHERE shard IS ?1 AND (NOT merged OR ?1 IS NULL) ORDER BY id DESC LIMIT 64",
                &qb, e));
    ob_status st = prep(s, "SELECT id, cell, workload, workload_params, optimizer, hparams, lr, "
                           "seed, steps FROM runs WHERE benchmark_id = ?1 AND stage IS NULL "
                           "ORDER BY cell, id", &qr, e);
    bind_text(qb, 1, shard);
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
    if (st == OB_OK && !*bench_id && rc != SQLITE_DONE) st = db_fail(s, e, "looking for the benchmark to continue");
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
    OB_TRY(prep(s, "UPDATE runs SET cell = -id, status = CASE WHEN status IN ('pending', 'interrupted') "
                   "THEN 'failed' ELSE status END, error = CASE WHEN status IN ('pending', 'interrupted') "
                   "THEN ?2 ELSE error END WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, id);
    bind_text(q, 2, why);
    ob_status st = step_done(s, q, e, "retiring a confirmation run");
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
    OB_TRY(prep(s,
                "SELECT id, stage IS NOT NULL, workload, " OB_STORE_CANON_SQL("1", "workload_params", "workload")
                ", optimizer, " OB_STORE_CANON_SQL("0", "hparams", "optimizer") ", lr, steps, seed, cell "
                "FROM runs WHERE benchmark_id = ?1 ORDER BY stage IS NOT NULL, cell, id", &q, e));
    /* a run of a search of one study kept as the first of several: named so
     * (its text then is the one the search of K studies stores) */
    ob_status st = apply ? prep(s, "UPDATE runs SET cell = ?2, hparams = CASE WHEN ?3 AND json_valid(hparams) AND "
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
        st = step_done(s, qu, e, "renumbering the runs of a grown benchmark");
    }
    if (st == OB_OK && !bad && rc != SQLITE_DONE) st = db_fail(s, e, "reading the runs of a benchmark");
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
        prep(s, "SELECT " OB_STORE_CANON_SQL("1", "?2", "?1") ", " OB_STORE_CANON_SQL("0", "?4", "?3"), &q, e);
    for (int k = 0; k < n && st == OB_OK; k++) {
        const ob_run_spec *r = &specs[k];
        sqlite3_reset(q);
        bind_text(q, 1, r->workload);
        bind_text(q, 2, r->workload_params);
        bind_text(q, 3, r->optimizer);
        bind_text(q, 4, r->hparams);
        if (sqlite3_step(q) != SQLITE_ROW) {
            st = db_fail(s, e, "reading this matrix's settings");
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
    ob_status st = prep(s, "SELECT id FROM benchmarks WHERE shard IS NULL ORDER BY id DESC LIMIT 64", &qb, e);
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
    if (st == OB_OK && !*bench_id && rc != SQLITE_DONE) st = db_fail(s, e, "looking for the benchmark to continue");
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
    ob_status st = begin(s, e);
    if (st == OB_OK)
        st = grow_candidate(s, bench_id, specs, v, n, plan, run_ids, &held, retired, 1, &ok, why, sizeof why, e);
    if (st == OB_OK && !ok)
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "benchmark %lld is no longer part of this matrix: %s",
                              (long long)bench_id, why);
    idents_free(v, n);
    return commit_or_rollback(s, st, e);
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
    OB_TRY(prep(s, sql, &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_status st = OB_OK;
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(q, 0);
        snprintf(buf, n, "%s", t ? (const char *)t : "");
    } else if (rc == SQLITE_DONE) {
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "no run %lld in '%s'", (long long)run_id, s->path);
    } else {
        st = db_fail(s, e, what);
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
    OB_TRY(prep(s, "SELECT other_cpu FROM runs WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_status st = OB_OK;
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_type(q, 0) != SQLITE_NULL) *share = sqlite3_column_double(q, 0);
    } else if (rc == SQLITE_DONE) {
        st = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "no run %lld in '%s'", (long long)run_id, s->path);
    } else {
        st = db_fail(s, e, "reading a run's share of busy CPUs");
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
    OB_TRY(begin(s, e));
    ob_status st = OB_OK;
    for (size_t i = 0; i < sizeof sql / sizeof sql[0] && st == OB_OK; i++) {
        sqlite3_stmt *q = NULL;
        st = prep(s, sql[i], &q, e);
        if (st != OB_OK) break;
        sqlite3_bind_int64(q, 1, run_id);
        sqlite3_bind_int64(q, 2, after < 0 ? -1 : after);
        st = step_done(s, q, e, "preparing a run to resume");
        sqlite3_finalize(q);
    }
    return commit_or_rollback(s, st, e);
}

ob_status ob_store_read_losses(ob_store *s, int64_t run_id, int64_t upto, double *loss, int64_t *n,
                               ob_err *e)
{
    *n = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(prep(s, "SELECT step, loss FROM curves WHERE run_id = ?1 AND step BETWEEN 1 AND ?2 "
                   "ORDER BY step", &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    sqlite3_bind_int64(q, 2, upto);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t step = sqlite3_column_int64(q, 0);
        if (step != *n + 1) break; /* a gap: only the leading steps count */
        loss[(*n)++] = sqlite3_column_type(q, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 1);
    }
    ob_status st = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? OB_OK : db_fail(s, e, "reading a curve");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_unfinished_runs(ob_store *s, int64_t bench_id, int sweep_only, int *n, ob_err *e)
{
    *n = 0;
    sqlite3_stmt *q = NULL;
    /* a retired run (cell -id) is no cell of the matrix */
    OB_TRY(prep(s, "SELECT count(*) FROM runs WHERE benchmark_id = ?1 AND "
                   "status IN ('pending', 'running', 'interrupted') AND (?2 = 0 OR stage IS NULL) AND "
                   "(cell IS NULL OR cell >= 0)", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int(q, 2, sweep_only);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) *n = sqlite3_column_int(q, 0);
    else st = db_fail(s, e, "counting unfinished runs");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_set_benchmark_config(ob_store *s, int64_t bench_id, const char *config, ob_err *e)
{
    sqlite3_stmt *q = NULL;
    OB_TRY(prep(s, "UPDATE benchmarks SET config = ?2 WHERE id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    bind_text(q, 2, config);
    ob_status st = update_one(s, q, "recording the benchmark's configuration", bench_id, e);
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
    OB_TRY(prep(s, sql, &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    ob_status st = OB_OK;
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
        *out = strdup((const char *)sqlite3_column_text(q, 0));
        if (!*out) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        st = db_fail(s, e, what);
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
    OB_TRY(prep(s, "SELECT coalesce(max(step), 0) FROM curves WHERE run_id = ?1", &q, e));
    sqlite3_bind_int64(q, 1, run_id);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) *step = sqlite3_column_int64(q, 0);
    else st = db_fail(s, e, "reading a run's last step");
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
    OB_TRY(prep(s, "SELECT (SELECT min(v.step) FROM evals v JOIN runs r ON r.id = v.run_id "
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
        st = db_fail(s, e, "reading a benchmark's evaluation steps");
    }
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_sweep_finals(ob_store *s, int64_t bench_id, int64_t cell_lo, int64_t cell_hi, double *lr,
                                double *final, int cap, int *n, ob_err *e)
{
    *n = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(prep(s, "SELECT lr, status, final_loss FROM runs WHERE benchmark_id = ?1 AND stage IS NULL "
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
    ob_status st = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? OB_OK : db_fail(s, e, "reading the sweep's results");
    sqlite3_finalize(q);
    return st;
}

ob_status ob_store_confirm_runs(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n, int64_t *ids,
                                int *added, int *retired, ob_err *e)
{
    *added = 0;
    *retired = 0;
    sqlite3_stmt *qf = NULL, *qa = NULL;
    OB_TRY(stmt(s, ST_ADD_RUN, &qa, e));
    OB_TRY(prep(s, "SELECT id, workload, optimizer, lr, seed FROM runs WHERE benchmark_id = ?1 AND "
                   "stage = 'confirm' AND cell = ?2 ORDER BY id LIMIT 1", &qf, e));
    /* one write transaction: a second process finishing the sweep at the same
     * moment waits here, then finds the runs this one added */
    ob_status st = begin(s, e);
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
            st = db_fail(s, e, "looking for confirmation runs");
            break;
        }
        bind_spec(qa, bench_id, r, "confirm");
        st = step_done(s, qa, e, "adding confirmation runs");
        if (st == OB_OK) {
            ids[i] = sqlite3_last_insert_rowid(s->db);
            (*added)++;
        }
    }
    sqlite3_finalize(qf);
    return commit_or_rollback(s, st, e);
}

ob_status ob_store_retire_confirm_cells(ob_store *s, int64_t bench_id, int64_t lo, int64_t hi, int *retired,
                                       ob_err *e)
{
    *retired = 0;
    if (s->readonly) return ob_fail(e, OB_ERR_INPUT, "database '%s' is open read-only", s->path);
    sqlite3_stmt *q = NULL;
    OB_TRY(prep(s, "SELECT id FROM runs WHERE benchmark_id = ?1 AND stage = 'confirm' AND cell BETWEEN ?2 AND ?3 "
                   "ORDER BY id", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, lo);
    sqlite3_bind_int64(q, 3, hi);
    int64_t ids[OB_STORE_RETIRE_MAX];
    int n = 0, rc = SQLITE_DONE;
    while (n < OB_STORE_RETIRE_MAX && (rc = sqlite3_step(q)) == SQLITE_ROW) ids[n++] = sqlite3_column_int64(q, 0);
    ob_status st = rc == SQLITE_ROW || rc == SQLITE_DONE ? OB_OK : db_fail(s, e, "finding confirmation runs to retire");
    sqlite3_finalize(q);
    if (st != OB_OK || n == 0) return st;
    st = begin(s, e);
    for (int i = 0; i < n && st == OB_OK; i++)
        st = retire_run(s, ids[i], "retired before it finished: another configuration is confirmed now", e);
    st = commit_or_rollback(s, st, e);
    if (st == OB_OK) *retired = n;
    return st;
}

ob_status ob_store_confirm_depth(ob_store *s, int64_t bench_id, int64_t cell_base, int64_t stride, int *depth,
                                 ob_err *e)
{
    *depth = 0;
    sqlite3_stmt *q = NULL;
    OB_TRY(prep(s, "SELECT max((cell - ?2) % ?3) + 1 FROM runs WHERE benchmark_id = ?1 AND stage = 'confirm' "
                   "AND cell >= ?2", &q, e));
    sqlite3_bind_int64(q, 1, bench_id);
    sqlite3_bind_int64(q, 2, cell_base);
    sqlite3_bind_int64(q, 3, stride);
    ob_status st = OB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) *depth = sqlite3_column_type(q, 0) == SQLITE_NULL ? 0 : sqlite3_column_int(q, 0);
    else st = db_fail(s, e, "counting confirmation runs");
    sqlite3_finalize(q);
    return st;
}
