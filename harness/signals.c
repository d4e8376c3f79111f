/* harness/signals.c - clean stops on SIGINT and SIGTERM (see signals.h).
 * The handler only stores the signal number (async-signal-safe); the second
 * SIGINT calls _exit, which is async-signal-safe too. */
#include "harness/signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t pending;
static struct sigaction old_int, old_term;
static int installed;

static void on_signal(int sig)
{
    if (pending && sig == SIGINT) {
        static const char msg[] = "\noptbench: second interrupt: stopping now\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        _exit(128 + SIGINT);
    }
    if (!pending) {
        static const char msg[] =
            "\noptbench: stopping after this step (checkpoint, then exit); interrupt again to stop now\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
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
    installed = 1;
}

void ob_signals_restore(void)
{
    if (!installed) return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
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

void ob_signal_clear(void)
{
    pending = 0;
}
