/* tests/test_gnuplot_jobs.c - ob_gnuplot_run_all: scripts run concurrently,
 * each one's exit status where it belongs, one failure among them reported
 * as such, gnuplot.log in script order however the processes finished, and
 * a SIGTERM or SIGINT while they run ends and reaps every one of them (an
 * ignored SIGINT stays ignored). fork failing for want of processes or
 * memory (ob_gnuplot_fork replaced) while others run makes the script wait
 * and start later; where none runs, or for another reason, the script fails
 * and gnuplot.log says why in its place. A stop that comes just as the
 * last script is done is not lost.
 *
 * The "gnuplot" here is a shell script that runs its argument with sh, so
 * the scripts can coordinate through files and no gnuplot is needed: script
 * 0 waits until script 1 has started, which only happens when two run at
 * once, and then finishes last. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "plots/figures.h"

static void write_file(const char *dir, const char *name, const char *text, int exec)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
    if (exec) chmod(p, 0755);
}

static int exists(const char *dir, const char *name)
{
    char p[1200];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

/* no child's own log is left beside gnuplot.log */
static int job_logs_left(const char *dir)
{
    int n = 0;
    for (int i = 0; i < 8; i++) {
        char name[64];
        snprintf(name, sizeof name, ".gnuplot-%d.log", i);
        n += exists(dir, name);
    }
    return n;
}

static void remove_started(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/t2.started", dir);
    remove(p);
}

static void make_scripts(const char *dir, const char *gnuplot)
{
    char fake[1300];
    snprintf(fake, sizeof fake, "#!/bin/sh\nexec sh \"$1\"\n");
    write_file(dir, gnuplot, fake, 1);
    /* up to 10 s for script 1 to start: with one process at a time it never
     * does while script 0 runs */
    write_file(dir, "s0.gp",
               "touch s0.started\ni=0\n"
               "while [ ! -e s1.started ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
               "[ -e s1.started ] && echo '0: ran beside 1' >&2\n"
               "sleep 0.3\necho 'log 0'\n",
               0);
    write_file(dir, "s1.gp", "touch s1.started\necho 'log 1'\n", 0);
    write_file(dir, "s2.gp", "echo 'log 2: an error' >&2\nexit 1\n", 0);
    write_file(dir, "s3.gp", "echo 'log 3'\n", 0);
}

static void test_concurrent(const char *dir)
{
    char gp[1200];
    snprintf(gp, sizeof gp, "%s/gnuplot", dir);
    make_scripts(dir, "gnuplot");
    char *scripts[] = {"s0.gp", "s1.gp", "s2.gp", "s3.gp"};
    int rc[4], sig = -1;
    ob_err e = {0};
    CHECK_OK(ob_gnuplot_run_all(gp, dir, scripts, 4, 3, rc, &sig, &e), &e);
    CHECK(sig == 0);
    CHECK_MSG(rc[0] == 0 && rc[1] == 0 && rc[2] == 1 && rc[3] == 0, "rc %d %d %d %d", rc[0], rc[1], rc[2], rc[3]);
    char *log = check_slurp(dir, "gnuplot.log", NULL);
    CHECK_MSG(log && !strcmp(log, "0: ran beside 1\nlog 0\nlog 1\nlog 2: an error\nlog 3\n"),
              "gnuplot.log:\n%s", log ? log : "(missing)");
    free(log);
    CHECK(job_logs_left(dir) == 0);
    errno = 0;
    CHECK_MSG(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "a child is left");
}

/* a second call appends to gnuplot.log, as ob_gnuplot_run does */
static void test_appends(const char *dir)
{
    char gp[1200];
    snprintf(gp, sizeof gp, "%s/gnuplot", dir);
    char *scripts[] = {"s3.gp"};
    int rc[1], sig = -1;
    ob_err e = {0};
    CHECK_OK(ob_gnuplot_run_all(gp, dir, scripts, 1, 1, rc, &sig, &e), &e);
    char *log = check_slurp(dir, "gnuplot.log", NULL);
    CHECK(log && strstr(log, "log 3\nlog 3\n") && strstr(log, "0: ran beside 1\n") == log);
    free(log);
}

/* sig (SIGTERM or SIGINT) from the first script: both running scripts
 * (which would sleep 30 s) are ended and reaped, the third is never started,
 * the handler that was there before is back */
static void test_stop(const char *dir, int sig_sent)
{
    char gp[1200], t0[128];
    snprintf(gp, sizeof gp, "%s/gnuplot", dir);
    signal(sig_sent, SIG_DFL); /* a test run in the background may start with SIGINT ignored */
    snprintf(t0, sizeof t0, "kill -%s $PPID\nexec sleep 30\n", sig_sent == SIGINT ? "INT" : "TERM");
    write_file(dir, "t0.gp", t0, 0);
    write_file(dir, "t1.gp", "exec sleep 30\n", 0);
    write_file(dir, "t2.gp", "touch t2.started\n", 0);
    char *scripts[] = {"t0.gp", "t1.gp", "t2.gp"};
    int rc[3], sig = -1;
    ob_err e = {0};
    ob_status st = ob_gnuplot_run_all(gp, dir, scripts, 3, 2, rc, &sig, &e);
    CHECK_MSG(st == OB_ERR_INTERRUPTED && sig == sig_sent, "status %d, signal %d: %s", (int)st, sig, e.msg);
    CHECK(strstr(e.msg, sig_sent == SIGINT ? "SIGINT" : "SIGTERM") != NULL);
    CHECK(rc[2] == OB_GNUPLOT_RUNNING && !exists(dir, "t2.started"));
    errno = 0;
    CHECK_MSG(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "a child is left");
    CHECK(job_logs_left(dir) == 0);
    struct sigaction now;
    sigaction(sig_sent, NULL, &now);
    CHECK(now.sa_handler == SIG_DFL);
    remove_started(dir);
}

/* an ignored SIGINT stays ignored: the scripts all run to the end */
static void test_ignored(const char *dir)
{
    char gp[1200];
    snprintf(gp, sizeof gp, "%s/gnuplot", dir);
    signal(SIGINT, SIG_IGN);
    write_file(dir, "t0.gp", "kill -INT $PPID\nsleep 0.2\n", 0);
    char *scripts[] = {"t0.gp", "s3.gp", "t2.gp"};
    int rc[3], sig = -1;
    ob_err e = {0};
    CHECK_OK(ob_gnuplot_run_all(gp, dir, scripts, 3, 2, rc, &sig, &e), &e);
    CHECK(sig == 0 && rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && exists(dir, "t2.started"));
    struct sigaction now;
    sigaction(SIGINT, NULL, &now);
    CHECK(now.sa_handler == SIG_IGN);
    signal(SIGINT, SIG_DFL);
    remove_started(dir);
}

/* ob_gnuplot_fork for the tests: call k fails with fork_errs[k] where that
 * is not 0, first creating fork_go[k] (where not NULL) in fork_dir, which a
 * script waits for, so that it is still running when that call fails, and
 * sending the process fork_raise[k] where that is not 0 */
enum { FORK_CALLS_MAX = 16 };
static int fork_calls, fork_errs[FORK_CALLS_MAX], fork_raise[FORK_CALLS_MAX];
static const char *fork_go[FORK_CALLS_MAX];
static const char *fork_dir;

static pid_t failing_fork(void)
{
    const int k = fork_calls++;
    if (k < FORK_CALLS_MAX && fork_errs[k]) {
        if (fork_go[k]) write_file(fork_dir, fork_go[k], "", 0);
        if (fork_raise[k]) raise(fork_raise[k]);
        errno = fork_errs[k];
        return -1;
    }
    return fork();
}

static void failing_fork_set(const char *dir)
{
    fork_calls = 0;
    memset(fork_errs, 0, sizeof fork_errs);
    memset(fork_go, 0, sizeof fork_go);
    memset(fork_raise, 0, sizeof fork_raise);
    fork_dir = dir;
    ob_gnuplot_fork = failing_fork;
}

/* a folder of its own under dir, with the stand-in gnuplot and scripts
 * u0.gp to u3.gp: uK.gp waits (up to 10 s) for goK where told to, then
 * writes 'log K' */
static void make_limit_dir(char *sub, size_t n, const char *dir, const char *name, int wait0, int wait1)
{
    snprintf(sub, n, "%s/%s", dir, name);
    CHECK(mkdir(sub, 0755) == 0);
    write_file(sub, "gnuplot", "#!/bin/sh\nexec sh \"$1\"\n", 1);
    for (int k = 0; k < 4; k++) {
        char name_k[16], text[256];
        snprintf(name_k, sizeof name_k, "u%d.gp", k);
        if ((k == 0 && wait0) || (k == 1 && wait1))
            snprintf(text, sizeof text,
                     "i=0\nwhile [ ! -e go%d ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\necho 'log %d'\n",
                     k, k);
        else snprintf(text, sizeof text, "echo 'log %d'\n", k);
        write_file(sub, name_k, text, 0);
    }
}

/* fork fails with EAGAIN and then ENOMEM while scripts run, as under a
 * limit on the user's processes: the script is started once one of the
 * running ones has ended, and every script is drawn */
static void test_fork_limit(const char *dir)
{
    char sub[1200], gp[1300];
    make_limit_dir(sub, sizeof sub, dir, "limit", 1, 1);
    snprintf(gp, sizeof gp, "%s/gnuplot", sub);
    failing_fork_set(sub);
    /* u0 and u1 start; u2's fork fails twice: first with both running (then
     * u0 may end), then with u1 still running (then it may end too) */
    fork_errs[2] = EAGAIN;
    fork_go[2] = "go0";
    fork_errs[3] = ENOMEM;
    fork_go[3] = "go1";
    char *scripts[] = {"u0.gp", "u1.gp", "u2.gp", "u3.gp"};
    int rc[4], sig = -1;
    ob_err e = {0};
    CHECK_OK(ob_gnuplot_run_all(gp, sub, scripts, 4, 4, rc, &sig, &e), &e);
    ob_gnuplot_fork = fork;
    CHECK(sig == 0);
    CHECK_MSG(rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && rc[3] == 0, "rc %d %d %d %d", rc[0], rc[1], rc[2], rc[3]);
    CHECK_MSG(fork_calls == 6, "%d calls of fork", fork_calls);
    char *log = check_slurp(sub, "gnuplot.log", NULL);
    CHECK_MSG(log && !strcmp(log, "log 0\nlog 1\nlog 2\nlog 3\n"), "gnuplot.log:\n%s", log ? log : "(missing)");
    free(log);
    CHECK(job_logs_left(sub) == 0);
    errno = 0;
    CHECK_MSG(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "a child is left");
}

/* fork fails with EAGAIN where none of the scripts runs, and with another
 * errno where one does: those scripts fail at once, the reason in their
 * place in gnuplot.log, and the others are drawn */
static void test_fork_fails(const char *dir)
{
    char sub[1200], gp[1300];
    make_limit_dir(sub, sizeof sub, dir, "nofork", 0, 1);
    snprintf(gp, sizeof gp, "%s/gnuplot", sub);
    failing_fork_set(sub);
    fork_errs[0] = EAGAIN; /* u0: nothing runs */
    fork_errs[2] = ENOSYS; /* u2: u1 runs, but waiting would not help */
    fork_go[2] = "go1";
    char *scripts[] = {"u0.gp", "u1.gp", "u2.gp", "u3.gp"};
    int rc[4], sig = -1;
    ob_err e = {0};
    CHECK_OK(ob_gnuplot_run_all(gp, sub, scripts, 4, 2, rc, &sig, &e), &e);
    ob_gnuplot_fork = fork;
    CHECK(sig == 0);
    CHECK_MSG(rc[0] == -1 && rc[1] == 0 && rc[2] == -1 && rc[3] == 0, "rc %d %d %d %d", rc[0], rc[1], rc[2],
              rc[3]);
    CHECK_MSG(fork_calls == 4, "%d calls of fork", fork_calls);
    char want[512];
    snprintf(want, sizeof want,
             "u0.gp: could not start gnuplot: %s\nlog 1\nu2.gp: could not start gnuplot: %s\nlog 3\n",
             strerror(EAGAIN), strerror(ENOSYS));
    char *log = check_slurp(sub, "gnuplot.log", NULL);
    CHECK_MSG(log && !strcmp(log, want), "gnuplot.log:\n%s", log ? log : "(missing)");
    free(log);
    CHECK(job_logs_left(sub) == 0);
    errno = 0;
    CHECK_MSG(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "a child is left");

    /* ob_gnuplot_run too says why in gnuplot.log */
    failing_fork_set(sub);
    fork_errs[0] = EAGAIN;
    CHECK(ob_gnuplot_run(gp, sub, "u3.gp") == -1);
    ob_gnuplot_fork = fork;
    snprintf(want, sizeof want, "\nu3.gp: could not start gnuplot: %s\n", strerror(EAGAIN));
    log = check_slurp(sub, "gnuplot.log", NULL);
    CHECK_MSG(log && strlen(log) > strlen(want) && !strcmp(log + strlen(log) - strlen(want), want),
              "gnuplot.log:\n%s", log ? log : "(missing)");
    free(log);
}

/* a SIGTERM that comes after the last look for a stop (here while the last
 * script's fork fails, when nothing runs any more: the loop then ends
 * without waiting, the signal still blocked) is not lost: it stops the
 * rendering as one that came earlier does, and the handler that was there
 * before is back */
static void test_late_stop(const char *dir)
{
    char sub[1200], gp[1300];
    make_limit_dir(sub, sizeof sub, dir, "latestop", 0, 0);
    snprintf(gp, sizeof gp, "%s/gnuplot", sub);
    signal(SIGTERM, SIG_DFL);
    failing_fork_set(sub);
    fork_errs[1] = ENOSYS;
    fork_raise[1] = SIGTERM;
    char *scripts[] = {"u0.gp", "u1.gp"};
    int rc[2], sig = -1;
    ob_err e = {0};
    ob_status st = ob_gnuplot_run_all(gp, sub, scripts, 2, 1, rc, &sig, &e);
    ob_gnuplot_fork = fork;
    CHECK_MSG(st == OB_ERR_INTERRUPTED && sig == SIGTERM, "status %d, signal %d: %s", (int)st, sig, e.msg);
    CHECK(strstr(e.msg, "SIGTERM") != NULL);
    CHECK_MSG(fork_calls == 2 && rc[0] == 0 && rc[1] == -1, "%d calls of fork, rc %d %d", fork_calls, rc[0], rc[1]);
    errno = 0;
    CHECK_MSG(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "a child is left");
    CHECK(job_logs_left(sub) == 0);
    struct sigaction now;
    sigaction(SIGTERM, NULL, &now);
    CHECK(now.sa_handler == SIG_DFL);
}

static void test_jobs_default(void)
{
    int n = ob_gnuplot_jobs_default();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(n >= 1 && n <= OB_GNUPLOT_JOBS_MAX);
    CHECK(cpus < 1 || n == (cpus < OB_GNUPLOT_JOBS_MAX ? cpus : OB_GNUPLOT_JOBS_MAX));
}

int main(void)
{
    char dir[] = "/tmp/ob_test_gnuplot_jobs_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_concurrent(dir);
    test_appends(dir);
    test_stop(dir, SIGTERM);
    test_stop(dir, SIGINT);
    test_ignored(dir);
    test_fork_limit(dir);
    test_fork_fails(dir);
    test_late_stop(dir);
    test_jobs_default();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
