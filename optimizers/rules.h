/* optimizers/rules.h - per-element update rules, compiled by gcc and nvcc.
 *
 * Each elementwise optimizer is one OB_HD static inline function that updates
 * a single parameter element and its state. The CPU backend loops over it
 * (kernels/cpu), the CUDA backend calls it from one fused multi-tensor kernel
 * (kernels/cuda): the two backends cannot drift apart.
 *
 * Conventions: g has already been multiplied by the clip scale; constants
 * that do not change during a run live in ob_rule (passed by value), values
 * that change per step (lr, bias corrections) in ob_rule_step (device memory).
 * Semantics follow torch.optim unless a rule says otherwise.
 */
#ifndef OB_OPTIMIZERS_RULES_H
#define OB_OPTIMIZERS_RULES_H

#include <math.h>

#include "core/ob.h"

/* Per-step values in device memory, written by the optimizer pipeline
 * (statistics by the grad_stats/finish_stats ops), read by the fused update:
 * no host synchronisation inside a training step. */
typedef struct ob_step_stats {
    double sumsq;        /* sum of squared finite gradients over every group */
    double nonfinite;    /* count of non-finite gradient values */
    float grad_norm;     /* sqrt(sumsq), set by finish_stats */
    float clip_scale;    /* min(1, clip_norm / (grad_norm + 1e-6)); 1 without clipping */
    float skip;          /* 1 when the step must change nothing (guard) */
    float pad;
} ob_step_stats;

/* One training step as recorded in the curve; filled on the device, copied to
 * the host in batches. */
typedef struct ob_step_record {
    float loss;
    float grad_norm;
    float lr;
    float skipped; /* 1 when the guard skipped this step */
} ob_step_record;

/* The guard and the clip scale, from the accumulated statistics and the loss
 * (torch.nn.utils.clip_grad_norm_: scale = clip / (norm + 1e-6), capped at 1). */
OB_HD static inline void ob_stats_finish(ob_step_stats *st, const float *loss, float clip_norm,
                                         ob_step_record *rec)
{
    float norm = (float)sqrt(st->sumsq);
    int bad = st->nonfinite > 0 || !isfinite(*loss);
    st->grad_norm = bad ? NAN : norm;
    st->clip_scale = 1.0f;
    if (clip_norm > 0.0f && !bad) {
        float c = clip_norm / (norm + 1e-6f);
        st->clip_scale = c < 1.0f ? c : 1.0f;
    }
    st->skip = bad ? 1.0f : 0.0f;
    if (rec) {
        rec->loss = *loss;
        rec->grad_norm = st->grad_norm;
        rec->skipped = st->skip;
    }
}

typedef enum ob_rule_kind {
    OB_RULE_SGD = 0,  /* s0 = momentum buffer */
    OB_RULE_ADAM,     /* s0 = exp_avg, s1 = exp_avg_sq, s2 = max_exp_avg_sq (amsgrad) */
    OB_RULE_COUNT
} ob_rule_kind;

#define OB_RULE_MAX_STATE 3

typedef struct ob_rule {
    int kind;          /* ob_rule_kind */
    int n_state;       /* state roles used (s0..) */
    int nesterov;
    int amsgrad;
    int decoupled_wd;  /* AdamW-style p *= 1 - lr*wd instead of g += wd*p */
    int flags;         /* rule-specific switches */
    float weight_decay;
    float momentum;
    float dampening;
    float beta1, beta2;
    float eps;
    float c[6];        /* rule-specific constants */
} ob_rule;

typedef struct ob_rule_step {
    float lr;
    float t;           /* step number, 1-based, as torch counts */
    float bc1;         /* 1 - beta1^t */
    float bc2;         /* 1 - beta2^t */
    float c[4];        /* rule-specific per-step scalars */
} ob_rule_step;

/* torch.optim.SGD */
OB_HD static inline void ob_rule_sgd(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                     float *buf)
{
    if (r->weight_decay != 0.0f) g += r->weight_decay * *p;
    if (r->momentum != 0.0f) {
        float b = (s->t <= 1.0f) ? g : r->momentum * *buf + (1.0f - r->dampening) * g;
        *buf = b;
        g = r->nesterov ? g + r->momentum * b : b;
    }
    *p -= s->lr * g;
}

/* torch.optim.Adam (weight decay as L2) and AdamW (decoupled), amsgrad. */
OB_HD static inline void ob_rule_adam(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                      float *m, float *v, float *vmax)
{
    if (r->weight_decay != 0.0f) {
        if (r->decoupled_wd)
            *p *= 1.0f - s->lr * r->weight_decay;
        else
            g += r->weight_decay * *p;
    }
    float mm = *m + (1.0f - r->beta1) * (g - *m); /* torch: exp_avg.lerp_(g, 1-beta1) */
    float vv = r->beta2 * *v + (1.0f - r->beta2) * g * g;
    *m = mm;
    *v = vv;
    float vhat = vv;
    if (r->amsgrad) {
        vhat = *vmax > vv ? *vmax : vv;
        *vmax = vhat;
    }
    float step_size = s->lr / s->bc1;
    float denom = sqrtf(vhat) / sqrtf(s->bc2) + r->eps;
    *p -= step_size * (mm / denom);
}

/* Apply rule r to element i. s[k] are the state arrays (NULL beyond n_state). */
OB_HD static inline void ob_rule_apply(const ob_rule *r, const ob_rule_step *s, float clip_scale,
                                       float *p, const float *g, float *const *st, long long i)
{
    float gi = g[i] * clip_scale;
    switch (r->kind) {
    case OB_RULE_SGD: ob_rule_sgd(r, s, &p[i], gi, st[0] ? &st[0][i] : (float *)0); break;
    case OB_RULE_ADAM:
        ob_rule_adam(r, s, &p[i], gi, &st[0][i], &st[1][i], r->amsgrad ? &st[2][i] : (float *)0);
        break;
    default: break;
    }
}

#endif
