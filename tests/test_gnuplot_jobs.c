/* tests/test_gnuplot_jobs.c - ob_gnuplot_run_all: scripts run concurrently,
 * each one's exit status where it belongs, one failure among them reported
 * as such, gnuplot.log in script order however the processes finished, and
 * a SIGTERM or SIGINT while they run ends and reaps every one of them (an
 * ignored SIGINT stays ignored).
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
    test_jobs_default();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
