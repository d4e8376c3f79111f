/* harness/progress.c - progress lines (see progress.h). */
#include "harness/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ob_progress {
    FILE *out;
    int tty;
    int n_cells, cell;
    int64_t steps_per_cell, steps_before; /* steps finished in earlier cells */
    double t0, cell_t0;
    char label[1400];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

ob_progress *ob_progress_new(int n_cells, int64_t steps_per_cell, FILE *out)
{
    ob_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->out = out;
    p->tty = isatty(fileno(out));
    p->n_cells = n_cells;
    p->steps_per_cell = steps_per_cell;
    p->t0 = now_s();
    return p;
}

void ob_progress_cell_begin(ob_progress *p, int cell, const char *workload, const char *optimizer,
                            double lr, int64_t seed)
{
    if (!p) return;
    p->cell = cell;
    p->cell_t0 = now_s();
    snprintf(p->label, sizeof p->label, "%s %s lr=%g seed=%lld", workload, optimizer, lr, (long long)seed);
}

static void fmt_eta(double s, char *buf, size_t n)
{
    if (!isfinite(s) || s < 0) snprintf(buf, n, "?");
    else if (s < 90) snprintf(buf, n, "%.0fs", s);
    else if (s < 5400) snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else snprintf(buf, n, "%.0fh%02.0fm", floor(s / 3600), fmod(s / 60, 60));
}

void ob_progress_cell_step(ob_progress *p, int64_t step, int64_t steps, double loss)
{
    if (!p || !p->tty) return;
    double t = now_s();
    double rate = step / fmax(t - p->cell_t0, 1e-9);
    int64_t total = (int64_t)p->n_cells * p->steps_per_cell;
    int64_t finished = p->steps_before + step;
    double eta = (t - p->t0) / (double)finished * (double)(total - finished);
    char eta_s[32];
    fmt_eta(eta, eta_s, sizeof eta_s);
    fprintf(p->out, "\r\033[K[%d/%d] %s  step %lld/%lld  loss %.4g  %.0f steps/s  ETA %s", p->cell + 1,
            p->n_cells, p->label, (long long)step, (long long)steps, loss, rate, eta_s);
    fflush(p->out);
}

void ob_progress_cell_end(ob_progress *p, const char *status, double final_loss, int64_t steps_done,
                          int64_t diverged_step, double wall_s, const char *error)
{
    if (!p) return;
    p->steps_before += p->steps_per_cell;
    char what[300];
    if (!strcmp(status, "done"))
        snprintf(what, sizeof what, "done  final loss %.4g", final_loss);
    else if (!strcmp(status, "diverged"))
        snprintf(what, sizeof what, "diverged at step %lld", (long long)diverged_step);
    else
        snprintf(what, sizeof what, "%s: %s", status, error ? error : "");
    fprintf(p->out, "%s[%d/%d] %s: %s  (%lld steps, %.2f s)\n", p->tty ? "\r\033[K" : "", p->cell + 1,
            p->n_cells, p->label, what, (long long)steps_done, wall_s);
    fflush(p->out);
}

void ob_progress_free(ob_progress *p)
{
    free(p);
}
