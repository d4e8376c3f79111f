/* optimizers/schedule.c - learning-rate schedules (host arithmetic, once per
 * step; every group's lr follows the same factor).
 *
 * With i = t - 1 the 0-based step, T the run's steps, W = warmup_steps:
 *   constant       lr
 *   warmup         lr * (i + 1) / W for i < W, then lr
 *   cosine         min_lr + (lr - min_lr) * (1 + cos(pi * i / T)) / 2
 *   warmup_cosine  the warmup, then the cosine over the remaining T - W steps
 *                  with r = (i - W) / (T - W)
 *   wsd            warmup, stable at lr, then a linear decay over the last
 *                  D = round(decay_frac * T) steps: lr + (min_lr - lr) * r,
 *                  r = (i - (T - D)) / D
 * The decay ratio r runs over [0, 1): the first decay step has the full lr,
 * min_lr is where the curve would be one step past the end (the convention of
 * torch's CosineAnnealingLR with T_max = T and of nanoGPT).
 */
#include <math.h>

#include "optimizers/optim_impl.h"

enum { SCHED_CONSTANT, SCHED_WARMUP, SCHED_COSINE, SCHED_WARMUP_COSINE, SCHED_WSD };

double ob_schedule_lr(const ob_hp_values *train, double lr, int64_t t, int64_t total)
{
    int kind = (int)ob_hp_get(train, "schedule");
    int64_t w = (int64_t)ob_hp_get(train, "warmup_steps");
    double min_lr = ob_hp_get(train, "min_lr");
    int64_t i = t - 1;
    if (i < 0) i = 0;
    if (kind == SCHED_CONSTANT) return lr;
    if (kind == SCHED_COSINE) w = 0;
    if (i < w) return lr * (double)(i + 1) / (double)w;
    if (kind == SCHED_WARMUP || total <= 0) return lr;
    if (kind == SCHED_WSD) {
        int64_t d = (int64_t)llround(ob_hp_get(train, "decay_frac") * (double)total);
        int64_t start = total - d;
        if (start < w) start = w;
        if (i < start || total <= start) return lr;
        double r = (double)(i - start) / (double)(total - start);
        if (r > 1) r = 1;
        return lr + (min_lr - lr) * r;
    }
    /* cosine, warmup_cosine */
    if (total <= w) return lr;
    double r = (double)(i - w) / (double)(total - w);
    if (r > 1) r = 1;
    return min_lr + (lr - min_lr) * 0.5 * (1.0 + cos(M_PI * r));
}

int ob_schedule_decays(const ob_hp_values *train)
{
    int kind = (int)ob_hp_get(train, "schedule");
    return kind != SCHED_CONSTANT && kind != SCHED_WARMUP;
}

ob_status ob_schedule_check(const ob_hp_values *train, double lr, ob_err *e)
{
    int kind = (int)ob_hp_get(train, "schedule");
    const ob_hp_def *d = &train->defs[ob_hp_index(train->defs, train->n, "schedule")];
    char name[32];
    ob_hp_format(d, kind, name, sizeof name);
    int iw = ob_hp_index(train->defs, train->n, "warmup_steps");
    int im = ob_hp_index(train->defs, train->n, "min_lr");
    int idf = ob_hp_index(train->defs, train->n, "decay_frac");
    if (train->set[iw] && train->v[iw] > 0 && (kind == SCHED_CONSTANT || kind == SCHED_COSINE))
        return ob_fail(e, OB_ERR_INPUT,
                       "train.warmup_steps = %g has no effect with train.schedule = %s; "
                       "use warmup, warmup_cosine or wsd",
                       train->v[iw], name);
    if (train->set[im] && train->v[im] != 0 && (kind == SCHED_CONSTANT || kind == SCHED_WARMUP))
        return ob_fail(e, OB_ERR_INPUT,
                       "train.min_lr = %g has no effect with train.schedule = %s; "
                       "use cosine, warmup_cosine or wsd",
                       train->v[im], name);
    if (train->set[idf] && kind != SCHED_WSD)
        return ob_fail(e, OB_ERR_INPUT, "train.decay_frac has no effect with train.schedule = %s; use wsd",
                       name);
    if (train->v[im] > lr && ob_schedule_decays(train))
        return ob_fail(e, OB_ERR_INPUT, "train.min_lr = %g is above the learning rate %g", train->v[im], lr);
    return OB_OK;
}
