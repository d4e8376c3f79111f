/* results/store_int.h - what the store's files share (store.c: opening,
 * the schema and writing runs; store_resume.c: resume, shards, merge and a
 * grown matrix): the store itself, its prepared statements and the helpers
 * that run them. Internal to results/. */
#ifndef OB_RESULTS_STORE_INT_H
#define OB_RESULTS_STORE_INT_H

#include <sqlite3.h>

#include "results/store.h"

/* The statements a store prepares once and keeps (ob_st_stmt) */
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

struct ob_store {
    sqlite3 *db;
    int readonly;
    int had_wal;                /* NAME-wal or NAME-shm existed when a read-only store opened */
    sqlite3_stmt *st[ST_COUNT]; /* prepared on first use, finalized at close */
    int tx_depth;               /* open write transactions: the outermost BEGINs and COMMITs */
    int tx_failed;              /* an inner one failed: the outermost rolls back */
    char path[512];
};

/* A write transaction, waiting out another process's a few times;
 * transactions nest, and only the outermost one talks to SQLite. Ended by
 * ob_st_commit_or_rollback: COMMIT where st is OB_OK and no inner one
 * failed, else ROLLBACK; returns st, or the commit's failure. */
ob_status ob_st_begin(ob_store *s, ob_err *e);
ob_status ob_st_commit_or_rollback(ob_store *s, ob_status st, ob_err *e);

/* The bindings of ST_ADD_RUN for one run. */
void ob_st_bind_spec(sqlite3_stmt *q, int64_t bench_id, const ob_run_spec *r, const char *stage);

/* Bind helpers: NULL text, NaN reals and negative "absent" integers become SQL NULL. */
void ob_st_bind_text(sqlite3_stmt *q, int i, const char *v);

/* Fails with SQLite's message about what (and a hint where the disk is full). */
ob_status ob_st_db_fail(ob_store *s, ob_err *e, const char *what);

/* One-off statements (not on a hot path): prepared per call. */
ob_status ob_st_prep(ob_store *s, const char *sql, sqlite3_stmt **q, ob_err *e);

/* Steps q to its end (SQLITE_DONE) and resets it; a failure says what. */
ob_status ob_st_step_done(ob_store *s, sqlite3_stmt *q, ob_err *e, const char *what);

/* The kept statement which (ST_*), prepared on first use. */
ob_status ob_st_stmt(ob_store *s, int which, sqlite3_stmt **out, ob_err *e);

/* Runs q, which must change exactly one row (id: the row, for the message). */
ob_status ob_st_update_one(ob_store *s, sqlite3_stmt *q, const char *what, int64_t id, ob_err *e);

#endif
