/* core/cpu_share.c - how busy other processes kept this process's CPUs
 * (see cpu_share.h). */
#define _GNU_SOURCE /* sched_getaffinity, cpu_set_t */
#include "core/cpu_share.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* "cpuN user nice system idle iowait irq softirq steal ...": the busy
 * ticks of CPU N into *busy (guest time is in user already). 0, or -1
 * where the line is not one CPU's. */
static int cpu_line(const char *line, int *cpu, double *busy)
{
    if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9') return -1;
    char *end;
    long n = strtol(line + 3, &end, 10);
    unsigned long long v[8] = {0};
    int k = 0;
    for (; k < 8; k++) {
        char *next;
        v[k] = strtoull(end, &next, 10);
        if (next == end) break;
        end = next;
    }
    if (k < 4 || n < 0) return -1; /* user nice system idle at least */
    *cpu = (int)n;
    /* user, nice, system, irq, softirq, steal */
    *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
    return 0;
}

int ob_cpu_stat_parse(const char *text, const unsigned char *mask, int n_mask, double ticks_per_s, ob_cpu_sample *s)
{
    s->n_cpu = 0;
    s->busy_s = 0;
    for (const char *p = text; p && *p;) {
        int cpu;
        double busy;
        if (cpu_line(p, &cpu, &busy) == 0 && (!mask || (cpu < n_mask && mask[cpu]))) {
            s->n_cpu++;
            s->busy_s += busy / ticks_per_s;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return s->n_cpu > 0 ? 0 : -1;
}

/* The whole of /proc/stat (its size is not known before: it is read to
 * its end), NULL where it cannot be read. */
static char *read_proc_stat(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return NULL;
    size_t cap = 1 << 14, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - 1 - len, f);
        if (len < cap - 1) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    const int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    return buf;
}

void ob_cpu_sample_take(ob_cpu_sample *s)
{
    memset(s, 0, sizeof *s);
    struct timespec ts;
    struct rusage ru;
    const long tck = sysconf(_SC_CLK_TCK);
    if (tck <= 0 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0 || getrusage(RUSAGE_SELF, &ru) != 0) return;
#ifdef __linux__
    unsigned char mask[CPU_SETSIZE];
    int n_mask = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++) mask[c] = CPU_ISSET(c, &set) != 0;
        n_mask = CPU_SETSIZE;
    }
#else
    const unsigned char *mask = NULL; /* no /proc/stat either: the sample fails below */
    const int n_mask = 0;
#endif
    char *text = read_proc_stat();
    if (!text) return;
    const int rc = ob_cpu_stat_parse(text, n_mask ? mask : NULL, n_mask, (double)tck, s);
    free(text);
    if (rc != 0) return;
    s->own_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
               1e-6 * (double)ru.ru_stime.tv_usec;
    s->wall_s = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    s->ok = 1;
}

double ob_cpu_share_others(const ob_cpu_sample *a, const ob_cpu_sample *b)
{
    if (!a->ok || !b->ok || a->n_cpu != b->n_cpu || a->n_cpu <= 0) return NAN;
    const double wall = b->wall_s - a->wall_s;
    if (!(wall >= OB_CPU_SHARE_MIN_S)) return NAN;
    const double others = (b->busy_s - a->busy_s) - (b->own_s - a->own_s);
    const double share = others / (wall * a->n_cpu);
    return share < 0 ? 0 : share > 1 ? 1 : share;
}

void ob_cpu_recent_add(ob_cpu_recent *r, const ob_cpu_sample *s)
{
    if (!s->ok) return;
    r->s[r->next] = *s;
    r->next = (r->next + 1) % OB_CPU_RECENT;
    if (r->n < OB_CPU_RECENT) r->n++;
}

double ob_cpu_share_run(const ob_cpu_recent *r, const ob_cpu_sample *start, const ob_cpu_sample *end)
{
    if (start->ok && end->wall_s - start->wall_s >= OB_CPU_SHARE_MIN_S) return ob_cpu_share_others(start, end);
    const ob_cpu_sample *from = NULL;
    for (int i = 0; r && i < r->n; i++) {
        const ob_cpu_sample *c = &r->s[i];
        if (end->wall_s - c->wall_s >= OB_CPU_SHARE_MIN_S && (!from || c->wall_s > from->wall_s)) from = c;
    }
    return from ? ob_cpu_share_others(from, end) : NAN;
}

double ob_cpu_share_join(double prev, double prev_s, double cur, double cur_s)
{
    const int has_prev = !isnan(prev) && prev_s > 0, has_cur = !isnan(cur) && cur_s > 0;
    if (has_prev && has_cur) return (prev * prev_s + cur * cur_s) / (prev_s + cur_s);
    if (has_prev) return prev;
    return isnan(cur) ? prev : cur;
}
