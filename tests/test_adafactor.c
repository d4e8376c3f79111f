/* tests/test_adafactor.c - Adafactor (optimizers/adafactor.c) against a
 * float64 reference written here from torch.optim.Adafactor's algorithm
 * (its single-tensor path): a matrix, a matrix with one row, a 4-D tensor
 * factored over its last two dimensions (batch 6), and a vector; with weight
 * decay, gradients whose scale changes by decades (the floors eps1 and eps2
 * and the clipping by d all take effect in some steps) and a step with no
 * gradient. scripts/conformance_torch.py compares with torch itself where
 * PyTorch >= 2.5 is installed.
 */
#include <float.h>
#include <string.h>

#include "check.h"
#include "core/layout.h"
#include "core/rng.h"
#include "optimizers/optim.h"
#include "optim_rig.h"

#define NT 4
#define STEPS 30

static const int t_nd[NT] = {2, 2, 4, 1};
static const int64_t t_shape[NT][4] = {{5, 7}, {1, 9}, {2, 3, 4, 5}, {6}};
static const double LR = 0.05, DECAY = -0.8, EPS1 = FLT_EPSILON, EPS2 = 1e-3, D = 1.0, WD = 0.1;

typedef struct ref {
    int nd;
    int64_t numel, batch, R, C;
    double *p, *row, *col, *var;
} ref;

static void ref_step(ref *t, const double *g, int step)
{
    const int64_t N = t->numel;
    const double w = pow(step, DECAY), rho = fmin(LR, 1 / sqrt(step));
    double pn = 0;
    for (int64_t i = 0; i < N; i++) pn += t->p[i] * t->p[i];
    const double alpha = fmax(EPS2, sqrt(pn) / sqrt((double)N)) * rho;
    for (int64_t i = 0; i < N; i++) t->p[i] *= 1 - LR * WD;
    double *u = malloc((size_t)N * sizeof *u);
    if (t->nd >= 2) {
        const int64_t B = t->batch, R = t->R, C = t->C;
        for (int64_t b = 0; b < B; b++) {
            for (int64_t r = 0; r < R; r++) {
                double m = 0;
                for (int64_t c = 0; c < C; c++) m += g[(b * R + r) * C + c] * g[(b * R + r) * C + c];
                t->row[b * R + r] += w * (m / C - t->row[b * R + r]);
            }
            for (int64_t c = 0; c < C; c++) {
                double m = 0;
                for (int64_t r = 0; r < R; r++) m += g[(b * R + r) * C + c] * g[(b * R + r) * C + c];
                t->col[b * C + c] += w * (m / R - t->col[b * C + c]);
            }
            double mean = 0;
            for (int64_t r = 0; r < R; r++) mean += t->row[b * R + r];
            mean = fmax(mean / R, EPS1);
            for (int64_t r = 0; r < R; r++)
                for (int64_t c = 0; c < C; c++) {
                    double v = fmax(t->row[b * R + r] * t->col[b * C + c] / mean, EPS1 * EPS1);
                    u[(b * R + r) * C + c] = g[(b * R + r) * C + c] / sqrt(v);
                }
        }
    } else {
        for (int64_t i = 0; i < N; i++) {
            t->var[i] += w * (g[i] * g[i] - t->var[i]);
            u[i] = g[i] / sqrt(fmax(t->var[i], EPS1 * EPS1));
        }
    }
    double un = 0;
    for (int64_t i = 0; i < N; i++) un += u[i] * u[i];
    const double denom = fmax(1.0, sqrt(un) / (sqrt((double)N) * D));
    for (int64_t i = 0; i < N; i++) t->p[i] -= alpha / denom * u[i];
    free(u);
}

static void run_case(void)
{
    ob_err e;
    char sets[160];
    snprintf(sets, sizeof sets, "lr=%g,beta2_decay=%g,eps2=%g,d=%g,weight_decay=%g", LR, DECAY, EPS2, D, WD);
    rig r;
    rig_open_tensors(&r, "adafactor", sets, NT, t_nd, t_shape, STEPS);
    ob_optim *o = r.opt;
    const ob_layout lay = r.lay;
    float *p = r.p, *g = r.g, *loss = r.loss;
    ref rt[NT];
    for (int i = 0; i < NT; i++) {
        ref *t = &rt[i];
        memset(t, 0, sizeof *t);
        t->nd = t_nd[i];
        t->numel = lay.t[i].numel;
        if (t->nd >= 2) {
            t->R = t_shape[i][t->nd - 2];
            t->C = t_shape[i][t->nd - 1];
            t->batch = t->numel / (t->R * t->C);
            t->row = calloc((size_t)(t->batch * t->R), sizeof(double));
            t->col = calloc((size_t)(t->batch * t->C), sizeof(double));
        } else {
            t->var = calloc((size_t)t->numel, sizeof(double));
        }
        t->p = calloc((size_t)t->numel, sizeof(double));
        for (int64_t j = 0; j < t->numel; j++) {
            p[lay.t[i].offset + j] = ob_rng_normal(5, (uint64_t)i, (uint64_t)j) * (i == 1 ? 1e-4f : 1.0f);
            t->p[j] = p[lay.t[i].offset + j];
        }
    }
    double worst = 0;
    for (int step = 1; step <= STEPS; step++) {
        /* scales from 1e-5 to 10; step 7 has no gradient at all */
        const float scale = step == 7 ? 0.0f : powf(10.0f, (float)(step % 7) - 5.0f);
        for (int i = 0; i < NT; i++) {
            double *gd = malloc((size_t)rt[i].numel * sizeof *gd);
            for (int64_t j = 0; j < rt[i].numel; j++) {
                float gj = scale * ob_rng_normal(13 + (uint64_t)step, (uint64_t)i, (uint64_t)j);
                g[lay.t[i].offset + j] = gj;
                gd[j] = gj;
            }
            ref_step(&rt[i], gd, step);
            free(gd);
        }
        CHECK_OK(ob_optim_step(o, p, g, loss, step, NULL, &e), &e);
        for (int i = 0; i < NT; i++)
            for (int64_t j = 0; j < rt[i].numel; j++) {
                double dd = fabs(p[lay.t[i].offset + j] - rt[i].p[j]) / fmax(1.0, fabs(rt[i].p[j]));
                if (dd > worst) worst = dd;
            }
    }
    printf("adafactor vs float64 reference, %d steps: max scaled |p - p_ref| = %.3g\n", STEPS, worst);
    CHECK_MSG(worst < 1e-5, "max scaled |p - p_ref| = %g", worst);
    for (int i = 0; i < NT; i++) {
        free(rt[i].p);
        free(rt[i].row);
        free(rt[i].col);
        free(rt[i].var);
    }
    rig_close(&r);
}

int main(void)
{
    run_case();
    return check_done();
}
