/* tests/test_cpu_share.c - the share of this process's CPUs that other
 * processes kept busy (core/cpu_share.h): /proc/stat's CPU lines parsed
 * for the CPUs of a mask (user, nice, system, irq, softirq and steal
 * count; idle and iowait do not); the share between two samples, less
 * this process's own time, clamped to [0, 1], unknown for a short window,
 * a failed sample or CPUs that changed; a short run measured from the
 * newest earlier start far enough back (none: unknown), the oldest of
 * OB_CPU_RECENT starts giving way; and, on this machine, a child
 * process that spins is seen, while this process's own spinning is its
 * own time. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/cpu_share.h"

static const char stat_text[] =
    "cpu  600 60 300 9000 90 30 30 30 0 0\n"
    "cpu0 100 10 50 3000 30 5 5 5 0 0\n"
    "cpu1 200 20 100 3000 30 10 10 10 0 0\n"
    "cpu2 300 30 150 3000 30 15 15 15 7 7\n"
    "intr 12345 0 0\n"
    "ctxt 999\n"
    "cpu_x 1 2 3 4\n";

static void test_parse(void)
{
    ob_cpu_sample s;
    /* every CPU: busy = user + nice + system + irq + softirq + steal */
    CHECK(ob_cpu_stat_parse(stat_text, NULL, 0, 100, &s) == 0);
    CHECK(s.n_cpu == 3);
    CHECK_NEAR(s.busy_s, (100 + 10 + 50 + 15 + 200 + 20 + 100 + 30 + 300 + 30 + 150 + 45) / 100.0, 1e-12);
    /* CPUs 0 and 2 of the mask; CPU 5 is not in the text */
    const unsigned char mask[6] = {1, 0, 1, 0, 0, 1};
    CHECK(ob_cpu_stat_parse(stat_text, mask, 6, 100, &s) == 0);
    CHECK(s.n_cpu == 2);
    CHECK_NEAR(s.busy_s, (175 + 525) / 100.0, 1e-12);
    /* a mask shorter than the CPUs: those past it are not ours */
    CHECK(ob_cpu_stat_parse(stat_text, mask, 1, 100, &s) == 0 && s.n_cpu == 1);
    /* no CPU line of the mask, or none at all */
    const unsigned char other[1] = {0};
    CHECK(ob_cpu_stat_parse(stat_text, other, 1, 100, &s) == -1);
    CHECK(ob_cpu_stat_parse("cpu  1 2 3 4\nintr 5\n", NULL, 0, 100, &s) == -1);
    CHECK(ob_cpu_stat_parse("", NULL, 0, 100, &s) == -1);
    CHECK(ob_cpu_stat_parse("cpu0 1 2\n", NULL, 0, 100, &s) == -1); /* too few fields */
}

static void test_share(void)
{
    ob_cpu_sample a = {.ok = 1, .n_cpu = 2, .busy_s = 10, .own_s = 1, .wall_s = 100};
    ob_cpu_sample b = {.ok = 1, .n_cpu = 2, .busy_s = 11.5, .own_s = 1.5, .wall_s = 101};
    /* 1.5 s busy, 0.5 of it ours, over 1 s of 2 CPUs */
    CHECK_NEAR(ob_cpu_share_others(&a, &b), 0.5, 1e-12);
    b.own_s = 2.6; /* more of our own than the CPUs counted (ticks): none */
    CHECK(ob_cpu_share_others(&a, &b) == 0);
    b.own_s = 1;
    b.busy_s = 20; /* more than the CPUs hold (ticks): all */
    CHECK(ob_cpu_share_others(&a, &b) == 1);
    b.busy_s = 11.5;
    b.wall_s = 100 + OB_CPU_SHARE_MIN_S * 0.99; /* too short to tell */
    CHECK(isnan(ob_cpu_share_others(&a, &b)));
    b.wall_s = 101;
    b.n_cpu = 3; /* the affinity changed */
    CHECK(isnan(ob_cpu_share_others(&a, &b)));
    b.n_cpu = 2;
    b.ok = 0;
    CHECK(isnan(ob_cpu_share_others(&a, &b)));
    CHECK(isnan(ob_cpu_share_others(&a, &a))); /* no time passed */
}

/* A sample at wall time t with busy seconds b on 2 CPUs, none of them ours. */
static ob_cpu_sample at(double t, double b)
{
    return (ob_cpu_sample){.ok = 1, .n_cpu = 2, .busy_s = b, .own_s = 0, .wall_s = t};
}

static void test_run_window(void)
{
    ob_cpu_recent r = {0};
    const ob_cpu_sample end = at(11, 1);
    /* a run long enough: its own window, whatever else is there */
    ob_cpu_sample start = at(10, 0);
    CHECK_NEAR(ob_cpu_share_run(&r, &start, &end), 0.5, 1e-12);
    /* a short run (0.1 s) and no earlier start far enough back: unknown */
    start = at(10.9, 0.9);
    CHECK(isnan(ob_cpu_share_run(&r, &start, &end)));
    ob_cpu_sample s = at(10.8, 0.5); /* 0.2 s before the end: too near */
    ob_cpu_recent_add(&r, &s);
    ob_cpu_recent_add(&r, &start);
    CHECK(isnan(ob_cpu_share_run(&r, &start, &end)));
    s = at(10, 0); /* added later, older: the window from it */
    ob_cpu_recent_add(&r, &s);
    CHECK_NEAR(ob_cpu_share_run(&r, &start, &end), 0.5, 1e-12);
    s = at(10.7, 0.94); /* 0.3 s before the end: the newest far enough back */
    ob_cpu_recent_add(&r, &s);
    CHECK_NEAR(ob_cpu_share_run(&r, &start, &end), 0.06 / (0.3 * 2), 1e-9);
    /* a failed sample is not kept */
    ob_cpu_sample bad = at(10.6, 0);
    bad.ok = 0;
    ob_cpu_recent_add(&r, &bad);
    CHECK(r.n == 4);
    /* past OB_CPU_RECENT starts the oldest give way */
    for (int i = 0; i < OB_CPU_RECENT; i++) {
        s = at(10.9 + 0.001 * i, 0.9);
        ob_cpu_recent_add(&r, &s);
    }
    CHECK(r.n == OB_CPU_RECENT);
    CHECK(isnan(ob_cpu_share_run(&r, &start, &end)));
}

/* A run continued from a checkpoint: its parts weighted by their wall
 * times; one part alone where the other has no share or no time. */
static void test_join(void)
{
    CHECK_NEAR(ob_cpu_share_join(0.8, 3, 0.0, 1), 0.6, 1e-12);
    CHECK_NEAR(ob_cpu_share_join(0.2, 1, 0.6, 1), 0.4, 1e-12);
    CHECK(ob_cpu_share_join(0.8, 3, NAN, 1) == 0.8);   /* this part too short to measure */
    CHECK(ob_cpu_share_join(NAN, 3, 0.1, 1) == 0.1);   /* the earlier part has none (a SIGKILL) */
    CHECK(ob_cpu_share_join(0.8, 0, 0.1, 1) == 0.1);   /* the earlier part took no time */
    CHECK(ob_cpu_share_join(0.8, NAN, 0.1, NAN) == 0.1);
    CHECK(ob_cpu_share_join(0.8, NAN, NAN, NAN) == 0.8);
    CHECK(isnan(ob_cpu_share_join(NAN, 1, NAN, 1)));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void spin(double seconds)
{
    volatile double x = 0;
    for (const double end = now() + seconds; now() < end;)
        for (int i = 0; i < 100000; i++) x += 1e-9;
}

static void test_live(void)
{
    ob_cpu_sample a, b;
    ob_cpu_sample_take(&a);
    if (!a.ok) {
        printf("no /proc/stat here: the live part is not run\n");
        return;
    }
    CHECK(a.n_cpu >= 1 && a.busy_s > 0 && a.wall_s > 0);
    /* a child spinning for 0.6 s while this process sleeps: at least a
     * third of one CPU's worth seen (it gets a whole CPU on an idle machine;
     * other work here only adds to the share) */
    pid_t pid = fork();
    if (pid == 0) {
        spin(0.6);
        _exit(0);
    }
    CHECK(pid > 0);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    ob_cpu_sample_take(&b);
    const double share = ob_cpu_share_others(&a, &b);
    printf("a child spinning 0.6 s on %d CPU(s): share %.3f (own %.3f s)\n", a.n_cpu, share, b.own_s - a.own_s);
    CHECK_MSG(share >= 0.33 / a.n_cpu && share <= 1, "share %.3f on %d CPUs", share, a.n_cpu);
    /* this process spinning: its own time, as much as the machine gave it
     * (a busy one gives less: not checked more closely) */
    ob_cpu_sample_take(&a);
    spin(0.4);
    ob_cpu_sample_take(&b);
    CHECK_MSG(b.own_s - a.own_s > 0.02, "own time %.3f s after spinning 0.4 s", b.own_s - a.own_s);
    const double mine = ob_cpu_share_others(&a, &b);
    printf("this process spinning 0.4 s: share %.3f\n", mine);
    CHECK(mine >= 0 && mine <= 1);
}

int main(void)
{
    test_parse();
    test_share();
    test_run_window();
    test_join();
    test_live();
    return check_done();
}
