/* core/cpu_share.h - how busy other processes kept this process's CPUs.
 *
 * A step time measured while other processes ran on the same CPUs says as
 * much about them as about the code. Two samples taken around a run give
 * the share of the CPUs this process may run on (its affinity mask) that
 * other processes kept busy in between: the CPUs' busy time from
 * /proc/stat (user, nice, system, irq, softirq and steal: time the
 * hypervisor gave to another machine counts too) less this process's own
 * CPU time (getrusage, every thread: its OpenMP workers, and any other cell
 * it runs at the same time), divided by the wall time and the number of
 * CPUs. 0 is a machine with nothing else on it, 1 one whose every CPU was
 * busy with other work all along.
 *
 * /proc/stat counts in clock ticks (10 ms), so a window of W seconds on n
 * CPUs is known to about n x 0.01 / (W x n) = 0.01 / W: windows shorter than
 * OB_CPU_SHARE_MIN_S give no figure. A run shorter than that is measured
 * over the shortest window that ends with it and is long enough, from the
 * start of an earlier run of the same process (ob_cpu_recent): the machine
 * around it rather than under it alone, which is what a matrix of short runs
 * (a nightly's) can know. Where /proc/stat cannot be read (not Linux), no
 * window gives a figure. */
#ifndef OB_CPU_SHARE_H
#define OB_CPU_SHARE_H

#define OB_CPU_SHARE_MIN_S 0.25 /* shortest window with a figure (+-0.04 at most) */
/* the share from which a run's step times are a busy machine's (compare
 * leaves them out, the report counts them): half a CPU of two */
#define OB_BUSY_SHARE 0.25

typedef struct ob_cpu_sample {
    int ok;        /* 0: /proc/stat or getrusage could not be read */
    int n_cpu;     /* CPUs of the affinity mask found in /proc/stat */
    double busy_s; /* their busy time since boot, seconds */
    double own_s;  /* this process's CPU time (user + system), seconds */
    double wall_s; /* CLOCK_MONOTONIC */
} ob_cpu_sample;

/* Takes a sample now; s->ok says whether it could. */
void ob_cpu_sample_take(ob_cpu_sample *s);

/* The share, in [0, 1], of the CPUs that other processes kept busy
 * between two samples of this process; NaN where either sample failed,
 * the CPUs changed, or the window is shorter than OB_CPU_SHARE_MIN_S. */
double ob_cpu_share_others(const ob_cpu_sample *a, const ob_cpu_sample *b);

/* The start samples of a process's recent runs, for the share of a run too
 * short to be measured alone (see above). */
#define OB_CPU_RECENT 64
typedef struct ob_cpu_recent {
    ob_cpu_sample s[OB_CPU_RECENT]; /* the newest OB_CPU_RECENT, in any order */
    int n, next;
} ob_cpu_recent;

/* Adds a run's start sample (one that failed is not kept); the oldest
 * gives way once there are OB_CPU_RECENT. */
void ob_cpu_recent_add(ob_cpu_recent *r, const ob_cpu_sample *s);

/* The share of a run that started at start and ended at end: over the run
 * where it lasted OB_CPU_SHARE_MIN_S or more, else from the newest start in
 * r at least that long before end; NaN where there is none. */
double ob_cpu_share_run(const ob_cpu_recent *r, const ob_cpu_sample *start, const ob_cpu_sample *end);

/* The share of a run continued from a checkpoint: the earlier processes'
 * part (prev, over prev_s seconds of the run's wall time) and this one's
 * (cur, over cur_s), weighted by their wall times; either alone where the
 * other is NaN or its time is not positive. */
double ob_cpu_share_join(double prev, double prev_s, double cur, double cur_s);

/* Parses /proc/stat's text into *s (busy time of the CPUs in mask, a
 * byte per CPU index, n_mask of them; NULL: every CPU): 0, or -1 where
 * the text holds none of them. For the tests. */
int ob_cpu_stat_parse(const char *text, const unsigned char *mask, int n_mask, double ticks_per_s, ob_cpu_sample *s);

#endif
