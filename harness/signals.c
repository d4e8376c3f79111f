/* harness/signals.c - clean stops on SIGINT, SIGTERM and SIGHUP (see
 * signals.h). The handler only stores the signal number (async-signal-safe);
 * a SIGINT after the first signal calls _exit, which is async-signal-safe
 * too; a second SIGTERM or SIGHUP changes nothing. */
#include "harness/signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t pending;
static struct sigaction old_int, old_term, old_hup;
static int installed, hup_taken;

static void on_signal(int sig)
{
    if (pending && sig == SIGINT) {
        static const char msg[] = "\noptbench: second interrupt: stopping now\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        _exit(128 + SIGINT);
    }
    if (!pending) {
        /* a second SIGTERM is not a request to hurry: a batch system may send
         * it to every process of a job, some twice */
        static const char msg_int[] =
            "\noptbench: stopping after this step (checkpoint, then exit); interrupt again to stop now\n";
        static const char msg_term[] =
            "\noptbench: SIGTERM: stopping after this step (checkpoint, then exit); SIGINT stops now\n";
        static const char msg_hup[] =
            "\noptbench: SIGHUP: stopping after this step (checkpoint, then exit); SIGINT stops now\n";
        ssize_t w = sig == SIGINT    ? write(STDERR_FILENO, msg_int, sizeof msg_int - 1)
                    : sig == SIGHUP ? write(STDERR_FILENO, msg_hup, sizeof msg_hup - 1)
                                    : write(STDERR_FILENO, msg_term, sizeof msg_term - 1);
        (void)w;
        pending = sig;
    }
}

void ob_signals_install(void)
{
    if (installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    /* under nohup SIGHUP is ignored, so that the run outlives its terminal:
     * it stays so */
    hup_taken = sigaction(SIGHUP, NULL, &old_hup) == 0 && old_hup.sa_handler != SIG_IGN &&
                sigaction(SIGHUP, &sa, NULL) == 0;
    installed = 1;
}

void ob_signals_restore(void)
{
    if (!installed) return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (hup_taken) sigaction(SIGHUP, &old_hup, NULL);
    hup_taken = 0;
    installed = 0;
}

int ob_signal_pending(void)
{
    return (int)pending;
}

int ob_signal_exit_code(int sig)
{
    return 128 + sig;
}

const char *ob_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
}

void ob_signal_clear(void)
{
    pending = 0;
}
