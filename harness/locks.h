/* harness/locks.h - the lock files that let several processes share one
 * database's matrix.
 *
 * Locks are flock(2) locks on files beside the database, in DB.ckpt/:
 *   run-ID/lock            a run's lock, held exclusively by the process that
 *                          runs the cell; the file names it (pid, host) and
 *                          its checkpoint folder, for messages and for the
 *                          process that continues the cell after it died;
 *   benchmark-ID.lock      a benchmark's lock, held shared by every process
 *                          running its cells from the transaction that chose
 *                          the benchmark to its exit; a matrix that grew from
 *                          the benchmark tests it exclusively before it
 *                          renumbers the benchmark's cells.
 * A lock file may be removed by whichever process finishes with it while
 * another opens it: a lock taken on a file that is no longer the one at its
 * path is let go and taken again, so two processes never both hold one.
 * Each function returns a status or an answer; none exits. */
#ifndef OB_HARNESS_LOCKS_H
#define OB_HARNESS_LOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "core/ob.h"

/* Where a run's lock lives: beside the database, whatever --checkpoint-dir
 * says, so that every process writing this database sees it (with the
 * default checkpoint folder it is that folder). */
void ob_lock_run_dir(const char *db_path, int64_t run_id, char *buf, size_t n);

/* The benchmark's lock, beside the runs' (DB.ckpt/benchmark-ID.lock): a
 * process running the benchmark's cells holds it shared from the moment it
 * chose the benchmark (in the transaction that chose it) to its end, also
 * between two cells, when it holds no run's lock; a matrix that grew from
 * the benchmark renumbers its cells only where no process holds it. */
void ob_lock_bench_path(const char *db_path, int64_t bench_id, char *buf, size_t n);

/* Take the benchmark's lock, shared (waiting while a growing process tests
 * it) or, with exclusive, without waiting: *fd holds it, or -1 when another
 * process holds it (exclusive only). The file at the path is the lock: one
 * removed and made again while this process waited is taken again. */
ob_status ob_lock_bench(const char *db_path, int64_t bench_id, int exclusive, int *fd, ob_err *e);

/* Let the benchmark's lock go; its file too when no other process holds it. */
void ob_unlock_bench(const char *db_path, int64_t bench_id, int fd);

/* Take the cell's lock (DIR/lock): 1 taken (*fd holds it), 0 another
 * process has it (or *s says what failed). owner (n bytes) receives what the
 * lock file says of the process that holds it, or held it last (a dead one
 * whose cell this takes over): "pid P host H\ncheckpoints DIR\n". Taken, the
 * file is rewritten to name this process and its checkpoint folder ckdir.
 *
 * A finished run's lock file and folder are removed (run.c's ob_run_remove_run_files) by
 * whichever process finishes it, possibly while another opens them: the
 * folder is made again when it vanished, and a lock taken on a file that is
 * no longer the one at its path (removed, and made again by a third process)
 * is let go and taken again, so two processes never both hold a cell. */
int ob_lock_cell(const char *dir, const char *ckdir, int *fd, char *owner, size_t n, ob_err *e, ob_status *s);

/* "pid P host H" of an owner text (ob_lock_cell), for messages. */
void ob_lock_owner_text(const char *owner, char *buf, size_t n);

/* The checkpoint folder an owner text names, when it is this run's
 * (ends in /run-ID) and not dir: where a process that stopped, run with
 * another --checkpoint-dir, left its checkpoints. "" otherwise. */
void ob_lock_owner_ckdir(const char *owner, int64_t run_id, const char *dir, char *buf, size_t n);

/* Whether another process holds run_id's lock now (owner: what its lock
 * file says). The lock is tried and let go at once; a missing lock file is
 * no holder. */
int ob_lock_run_held(const char *db_path, int64_t run_id, char *owner, size_t n);

#endif
