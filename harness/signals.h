/* harness/signals.h - clean stops on SIGINT, SIGTERM and SIGHUP.
 *
 * While installed, the first SIGINT, SIGTERM or SIGHUP (a closed terminal,
 * an ssh session that dropped) only raises a flag: the run loop finishes the
 * step it is in, records it, writes a checkpoint, marks the run `interrupted`
 * and returns; `optbench run` then exits 130 (SIGINT), 143 (SIGTERM) or 129
 * (SIGHUP). A second SIGINT stops the process at once (exit 130): the
 * database stays consistent because every write is one transaction, and the
 * checkpoints because each is renamed into place complete. A SIGHUP that was
 * ignored when the handlers were installed (nohup) stays ignored.
 */
#ifndef OB_HARNESS_SIGNALS_H
#define OB_HARNESS_SIGNALS_H

/* Install the handlers (idempotent) / restore the previous ones. */
void ob_signals_install(void);
void ob_signals_restore(void);
/* The signal that asked for a stop, 0 when none. */
int ob_signal_pending(void);
/* Exit status for a stop by signal sig: 128 + sig (130, 143, 129). */
int ob_signal_exit_code(int sig);
/* "SIGINT", "SIGTERM" or "SIGHUP" (the stops these handlers take). */
const char *ob_signal_name(int sig);
/* Forget a pending stop (tests). */
void ob_signal_clear(void);

#endif
