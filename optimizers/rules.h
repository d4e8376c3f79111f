/* optimizers/rules.h - per-element update rules, compiled by gcc and nvcc.
 *
 * Each elementwise optimizer is one OB_HD static inline function that updates
 * a single parameter element and its state. The CPU backend loops over it
 * (kernels/cpu), the CUDA backend calls it from one fused multi-tensor kernel
 * (kernels/cuda): the two backends cannot drift apart.
 *
 * Conventions: g has already been multiplied by the clip scale; constants
 * that do not change during a run live in ob_rule (passed by value), values
 * that change per step (lr, bias corrections, products of per-step factors)
 * in ob_rule_step, computed once per step on the host and read from device
 * memory. No rule calls anything host-only. Semantics follow torch.optim
 * unless a rule says otherwise.
 *
 * Matrix optimizers (Muon, ROOT) use three rules of this file around their
 * Newton-Schulz iteration: a momentum rule that writes the matrix to
 * orthogonalize into the "p" slot (a workspace, not the parameters), and
 * OB_RULE_MATRIX_APPLY, which reads the orthogonalized matrix from state
 * role 0 and updates the parameters.
 *
 * SOAP (optimizers/soap.c) runs Adam in a rotated basis between GEMMs: its
 * rules take g as given (no clip scale: the gradient was clipped when it was
 * copied into the workspace with OB_RULE_COPY), and every write of its state
 * (preconditioners, bases, moments) goes through a rule, so a step the guard
 * skips changes nothing there either.
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
    float guard;         /* set before the step: 1 a non-finite step is skipped (skip,
                            rollback, stop), 0 it is applied (train.on_nonfinite = none) */
    float spike;         /* OB_SPIKE_LOSS | OB_SPIKE_GRAD when the spike guard skips the step, else 0 */
} ob_step_stats;

/* The spike guard (llm.c's outlier detector): a finite step whose loss, or
 * gradient norm, lies more than z standard deviations above the mean of the
 * previous `window` finite steps' values is skipped. Lives in device memory;
 * finish_stats reads and updates it, one thread, no host synchronisation.
 * Every finite step enters the window, skipped ones too (a lasting change of
 * level is absorbed instead of skipping for ever), so the window is a
 * function of the trajectory alone. Scored only once the window is full; a
 * window of identical values scores 0. */
#define OB_SPIKE_WINDOW_MAX 1024
enum { OB_SPIKE_LOSS = 1, OB_SPIKE_GRAD = 2 };
typedef struct ob_spike {
    float loss[OB_SPIKE_WINDOW_MAX]; /* ring buffers: value of finite step k at k % window */
    float norm[OB_SPIKE_WINDOW_MAX];
    int64_t seen;                    /* finite steps entered */
    int32_t window;                  /* 2..OB_SPIKE_WINDOW_MAX */
    float z_loss, z_grad;            /* thresholds; 0: that score is off */
    int32_t pad_;
} ob_spike;

/* d * d + acc rounded twice, as the C11 build computes it: nvcc would fuse
 * it into one FMA (the same arithmetic on both backends). */
#ifdef __CUDA_ARCH__
#define OB_SQ_ADD(acc, d) __dadd_rn((acc), __dmul_rn((d), (d)))
#else
#define OB_SQ_ADD(acc, d) ((acc) + (d) * (d))
#endif
/* a * b + c (doubles) rounded twice, likewise: the rules run from kernels
 * compiled without --fmad=false (trust_scale's) need it spelt out. */
#ifdef __CUDA_ARCH__
#define OB_DMUL_ADD(a, b, c) __dadd_rn(__dmul_rn((a), (b)), (c))
#else
#define OB_DMUL_ADD(a, b, c) ((a) * (b) + (c))
#endif

/* The spike guard's floor of the standard deviation, relative to the
 * window's mean: a float's rounding is 6e-8 of it, so a window that differs
 * only by rounding (a plateau, a deterministic loss) has a standard deviation
 * of an ulp or two, and the next ulp would score 10 or more. */
#define OB_SPIKE_SD_FLOOR 1e-5

/* z-score of x against the n values of ring (population standard deviation,
 * two passes in index order: the same arithmetic on both backends), the
 * deviation at least OB_SPIKE_SD_FLOOR x |mean|; 0 for a window of zeros. */
OB_HD static inline double ob_spike_z(const float *ring, int n, float x)
{
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < n; i++) mean += (double)ring[i];
    mean /= (double)n;
    for (int i = 0; i < n; i++) {
        double d = (double)ring[i] - mean;
        var = OB_SQ_ADD(var, d);
    }
    double sd = sqrt(var / (double)n);
    const double sd_floor = OB_SPIKE_SD_FLOOR * fabs(mean);
    if (sd < sd_floor) sd = sd_floor;
    return sd > 0.0 ? ((double)x - mean) / sd : 0.0;
}

/* Which scores of the spike guard flag this finite step (OB_SPIKE_* bits),
 * and the scores in z[0] (loss) and z[1] (gradient norm), NaN where not
 * scored; then the step enters the window. */
OB_HD static inline int ob_spike_check(ob_spike *sp, float loss, float norm, float z[2])
{
    int flags = 0;
    const int w = sp->window;
    z[0] = z[1] = NAN;
    if (sp->seen >= w) {
        if (sp->z_loss > 0.0f) {
            double s = ob_spike_z(sp->loss, w, loss);
            z[0] = (float)s;
            if (s > (double)sp->z_loss) flags |= OB_SPIKE_LOSS;
        }
        if (sp->z_grad > 0.0f) {
            double s = ob_spike_z(sp->norm, w, norm);
            z[1] = (float)s;
            if (s > (double)sp->z_grad) flags |= OB_SPIKE_GRAD;
        }
    }
    const int k = (int)(sp->seen % w);
    sp->loss[k] = loss;
    sp->norm[k] = norm;
    sp->seen++;
    return flags;
}

/* One training step as recorded in the curve; filled on the device, copied to
 * the host in batches. */
typedef struct ob_step_record {
    float loss;
    float grad_norm;
    float lr;
    float skipped; /* OB_REC_NONFINITE: the step saw a non-finite gradient or loss (skipped
                      by the guard, or applied as is with train.on_nonfinite = none);
                      1 + OB_SPIKE_* bits: skipped by the spike guard; 0 otherwise */
    float spike_z[2]; /* the spike guard's scores of the loss and the gradient norm (NaN: not scored) */
} ob_step_record;

/* ob_step_record.skipped: 0 applied, 1 non-finite, 1 + OB_SPIKE_* bits a
 * spike (2 loss, 3 gradient norm, 4 both) */
enum { OB_REC_NONFINITE = 1 };

/* The guard and the clip scale, from the accumulated statistics and the loss
 * (torch.nn.utils.clip_grad_norm_: scale = clip / (norm + 1e-6), capped at 1),
 * and the spike guard's verdict when sp is not NULL (a finite step only). */
OB_HD static inline void ob_stats_finish(ob_step_stats *st, const float *loss, float clip_norm, ob_spike *sp,
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
    float z[2] = {NAN, NAN};
    int spike = sp && !bad ? ob_spike_check(sp, *loss, norm, z) : 0;
    st->spike = (float)spike;
    st->skip = (bad && st->guard != 0.0f) || spike ? 1.0f : 0.0f;
    if (rec) {
        rec->loss = *loss;
        rec->grad_norm = st->grad_norm;
        rec->skipped = bad ? (float)OB_REC_NONFINITE : spike ? (float)(OB_REC_NONFINITE + spike) : 0.0f;
        rec->spike_z[0] = z[0];
        rec->spike_z[1] = z[1];
    }
}

typedef enum ob_rule_kind {
    OB_RULE_SGD = 0,      /* s0 = momentum buffer */
    OB_RULE_ADAM,         /* s0 = exp_avg, s1 = exp_avg_sq, s2 = max_exp_avg_sq (amsgrad); AdamW */
    OB_RULE_NADAM,        /* s0 = exp_avg, s1 = exp_avg_sq */
    OB_RULE_RADAM,        /* s0 = exp_avg, s1 = exp_avg_sq */
    OB_RULE_ADAMAX,       /* s0 = exp_avg, s1 = exp_inf */
    OB_RULE_ADAGRAD,      /* s0 = sum of squares (starts at initial_accumulator_value) */
    OB_RULE_ADADELTA,     /* s0 = square_avg, s1 = acc_delta */
    OB_RULE_RMSPROP,      /* s0 = square_avg, then grad_avg (centered), then momentum buffer */
    OB_RULE_LION,         /* s0 = exp_avg */
    OB_RULE_MUON_MOMENTUM,/* p = out (workspace), s0 = momentum buffer; lerp momentum */
    OB_RULE_ROOT_MOMENTUM,/* p = out (workspace), s0 = momentum buffer; M = mu M + g */
    OB_RULE_MATRIX_APPLY, /* p = parameters, s0 = orthogonalized update O (read only) */
    OB_RULE_ADAMW_SF,     /* p = y, s0 = z, s1 = exp_avg_sq (schedule-free AdamW) */
    OB_RULE_SGD_SF,       /* p = y, s0 = z (schedule-free SGD) */
    OB_RULE_COPY,         /* p = g (c[0] != 0: g times the clip scale); a workspace or a commit */
    OB_RULE_LERP,         /* p = lerp(p, g, c[0]) as torch.lerp (g taken as is) */
    OB_RULE_SOAP_ADAM,    /* p = out (workspace), g = rotated gradient, s0 = exp_avg, s1 = exp_avg_sq */
    OB_RULE_SOAP_APPLY,   /* p = parameters, s0 = the update rotated back (read only) */
    OB_RULE_AF_VAR,       /* p = a second-moment estimate, g = its new mean (c[0] != 0: g^2); lerp by step c[1] */
    OB_RULE_AF_VEC,       /* p = out (workspace), g = gradient, s0 = variance (read): g / sqrt(max(v, eps^2)) */
    OB_RULE_AF_APPLY,     /* p = parameters, s0 = preconditioned gradient u (read): decay, then -c[0] u */
    OB_RULE_RPROP,        /* s0 = prev (the last gradient kept), s1 = step size (starts at lr) */
    OB_RULE_ASGD,         /* s0 = ax, the average */
    OB_RULE_LAMB,         /* p = out (workspace), s0 = exp_avg, s1 = exp_avg_sq, s2 = parameters (read) */
    OB_RULE_LARS,         /* s0 = momentum buffer; step c[0] = the tensor's trust ratio */
    OB_RULE_ADEMAMIX,     /* s0 = exp_avg_fast, s1 = exp_avg_slow, s2 = exp_avg_sq */
    OB_RULE_ADABELIEF,    /* s0 = exp_avg, s1 = exp_avg_var (eps included), s2 = max_exp_avg_var (amsgrad) */
    OB_RULE_COUNT
} ob_rule_kind;

#define OB_RULE_MAX_STATE 3

/* ob_rule.flags */
#define OB_RULE_CENTERED 1   /* rmsprop: centered */
#define OB_RULE_EPS_RAW 2    /* adam: eps added to sqrt(v) before the bias correction (Moonlight's AdamW) */
#define OB_RULE_SKIP_DECAY 2 /* soap apply: no weight decay (filter_bias_and_bn) */
#define OB_RULE_FIXED_DECAY 1 /* adabelief: decoupled decay p *= c[0] = 1 - wd, without the lr */

typedef struct ob_rule {
    int kind;          /* ob_rule_kind */
    int n_state;       /* state roles used (s0..) */
    int nesterov;
    int amsgrad;
    int decoupled_wd;  /* AdamW-style p *= 1 - lr*wd instead of g += wd*p */
    int flags;         /* rule-specific switches (OB_RULE_CENTERED, OB_RULE_EPS_RAW) */
    float weight_decay;
    float momentum;
    float dampening;
    float beta1, beta2;
    /* 1 - beta1, 1 - beta2, 1 - momentum, 1 - dampening: computed in double
     * from the setting, then rounded, as torch computes 1 - beta from a
     * Python float (1.0f - (float)beta2 is 1.36e-3 off at beta2 = 0.99999);
     * set with ob_rule_betas and ob_rule_momentum */
    float omb1, omb2, omm, omd;
    float eps;
    float c[6];        /* rule-specific constants (see each rule) */
    float state_init[OB_RULE_MAX_STATE]; /* value each state role starts at (setup only) */
} ob_rule;

typedef struct ob_rule_step {
    float lr;
    float t;           /* step number, 1-based, as torch counts */
    float bc1;         /* 1 - beta1^t */
    float bc2;         /* 1 - beta2^t */
    float c[4];        /* rule-specific per-step scalars (see each rule) */
} ob_rule_step;

/* torch's lerp: start + w (end - start), computed from the nearer end. */
OB_HD static inline float ob_lerp(float start, float end, float w)
{
    return w < 0.5f ? start + w * (end - start) : end - (end - start) * (1.0f - w);
}

/* A rule's decays and their complements (ob_rule.omb1 ...). */
static inline void ob_rule_betas(ob_rule *r, double beta1, double beta2)
{
    r->beta1 = (float)beta1;
    r->beta2 = (float)beta2;
    r->omb1 = (float)(1.0 - beta1);
    r->omb2 = (float)(1.0 - beta2);
}

static inline void ob_rule_momentum(ob_rule *r, double momentum, double dampening)
{
    r->momentum = (float)momentum;
    r->dampening = (float)dampening;
    r->omm = (float)(1.0 - momentum);
    r->omd = (float)(1.0 - dampening);
}

/* Weight decay of the torch optimizers with an L2 penalty (returns the new g)
 * or, with decoupled_wd, AdamW's p *= 1 - lr*wd. */
OB_HD static inline float ob_rule_weight_decay(const ob_rule *r, const ob_rule_step *s, float *p, float g)
{
    if (r->weight_decay != 0.0f) {
        if (r->decoupled_wd)
            *p *= 1.0f - s->lr * r->weight_decay;
        else
            g += r->weight_decay * *p;
    }
    return g;
}

/* torch.optim.SGD (the first step copies g into the momentum buffer) */
OB_HD static inline void ob_rule_sgd(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                     float *buf)
{
    if (r->weight_decay != 0.0f) g += r->weight_decay * *p;
    if (r->momentum != 0.0f) {
        float b = (s->t <= 1.0f) ? g : r->momentum * *buf + r->omd * g;
        *buf = b;
        g = r->nesterov ? g + r->momentum * b : b;
    }
    *p -= s->lr * g;
}

/* torch.optim.Adam (weight decay as L2) and AdamW (decoupled), amsgrad. */
OB_HD static inline void ob_rule_adam(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                      float *m, float *v, float *vmax)
{
    g = ob_rule_weight_decay(r, s, p, g);
    float mm = ob_lerp(*m, g, r->omb1); /* torch: exp_avg.lerp_(g, 1-beta1) */
    float vv = r->beta2 * *v + r->omb2 * g * g; /* exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1-beta2) */
    *m = mm;
    *v = vv;
    float vhat = vv;
    if (r->amsgrad) {
        vhat = *vmax > vv ? *vmax : vv;
        *vmax = vhat;
    }
    float step_size = s->lr / s->bc1;
    /* OB_RULE_EPS_RAW: m / (sqrt(v) + eps) x lr sqrt(bc2) / bc1, as Moonlight's
     * AdamW (and the ROOT authors' code) computes it */
    float denom = (r->flags & OB_RULE_EPS_RAW) ? (sqrtf(vhat) + r->eps) / sqrtf(s->bc2)
                                               : sqrtf(vhat) / sqrtf(s->bc2) + r->eps;
    *p -= step_size * (mm / denom);
}

/* torch.optim.NAdam. Per step: c[0] = lr (1 - mu_t) / (1 - prod_{i<=t} mu_i),
 * c[1] = lr mu_{t+1} / (1 - prod_{i<=t+1} mu_i), bc2; mu_t = beta1 (1 - 0.5 * 0.96^(t psi)). */
OB_HD static inline void ob_rule_nadam(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                       float *m, float *v)
{
    g = ob_rule_weight_decay(r, s, p, g);
    float mm = ob_lerp(*m, g, r->omb1);
    float vv = r->beta2 * *v + r->omb2 * g * g;
    *m = mm;
    *v = vv;
    float denom = sqrtf(vv / s->bc2) + r->eps;
    *p -= s->c[0] * (g / denom);
    *p -= s->c[1] * (mm / denom);
}

/* torch.optim.RAdam. Per step: c[1] = 1 when the variance is tractable
 * (rho_t > 5), then c[0] = lr * rect * sqrt(bc2) / bc1 and the step is
 * c[0] m / (sqrt(v) + eps); else c[0] = lr / bc1 and the step is c[0] m. */
OB_HD static inline void ob_rule_radam(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                       float *m, float *v)
{
    g = ob_rule_weight_decay(r, s, p, g);
    float mm = ob_lerp(*m, g, r->omb1);
    float vv = r->beta2 * *v + r->omb2 * g * g;
    *m = mm;
    *v = vv;
    if (s->c[1] != 0.0f)
        *p -= s->c[0] * (mm / (sqrtf(vv) + r->eps));
    else
        *p -= s->c[0] * mm;
}

/* torch.optim.Adamax: u = max(beta2 u, |g| + eps); p -= lr/bc1 * m / u. */
OB_HD static inline void ob_rule_adamax(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                        float *m, float *u)
{
    g = ob_rule_weight_decay(r, s, p, g);
    float mm = ob_lerp(*m, g, r->omb1);
    float a = r->beta2 * *u, b = fabsf(g) + r->eps;
    float uu = a > b ? a : b;
    *m = mm;
    *u = uu;
    *p -= (s->lr / s->bc1) * (mm / uu);
}

/* torch.optim.Adagrad. Per step: c[0] = lr / (1 + (t - 1) lr_decay). */
OB_HD static inline void ob_rule_adagrad(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                         float *sum)
{
    g = ob_rule_weight_decay(r, s, p, g);
    float ss = *sum + g * g;
    *sum = ss;
    *p -= s->c[0] * (g / (sqrtf(ss) + r->eps));
}

/* torch.optim.Adadelta (rho in beta2). */
OB_HD static inline void ob_rule_adadelta(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                          float *sq, float *acc)
{
    g = ob_rule_weight_decay(r, s, p, g);
    const float rho = r->beta2;
    float q = rho * *sq + r->omb2 * g * g;
    float delta = sqrtf(*acc + r->eps) / sqrtf(q + r->eps) * g;
    *sq = q;
    *acc = rho * *acc + r->omb2 * delta * delta;
    *p -= s->lr * delta;
}

/* torch.optim.RMSprop (alpha in beta2). gavg is NULL unless centered, buf NULL
 * unless momentum > 0. Centered: where rounding makes sq - gavg^2 negative (torch
 * takes sqrt and gets NaN) the variance is taken as 0. */
OB_HD static inline void ob_rule_rmsprop_k(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                           float *sq, float *gavg, float *buf, int centered, int with_buf)
{
    g = ob_rule_weight_decay(r, s, p, g);
    const float alpha = r->beta2;
    float q = alpha * *sq + r->omb2 * g * g;
    *sq = q;
    float var = q;
    if (centered) {
        float ga = ob_lerp(*gavg, g, r->omb2); /* grad_avg.lerp_(g, 1-alpha) */
        *gavg = ga;
        var = q - ga * ga;
        if (var < 0.0f) var = 0.0f;
    }
    float avg = sqrtf(var) + r->eps;
    if (with_buf) {
        float b = r->momentum * *buf + g / avg;
        *buf = b;
        *p -= s->lr * b;
    } else {
        *p -= s->lr * (g / avg);
    }
}

/* (the CPU's loops call ob_rule_rmsprop_k with constant switches, so that
 * no test is left in the loop) */
OB_HD static inline void ob_rule_rmsprop(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                         float *sq, float *gavg, float *buf)
{
    ob_rule_rmsprop_k(r, s, p, g, sq, gavg, buf, gavg != 0, buf != 0);
}

/* Lion (Chen et al. 2023): p = p (1 - lr wd) - lr sign(lerp(m, g, 1-beta1));
 * m = lerp(m, g, 1-beta2). sign(0) = 0. */
OB_HD static inline void ob_rule_lion(const ob_rule *r, const ob_rule_step *s, float *p, float g,
                                      float *m)
{
    float c = *m + r->omb1 * (g - *m);
    /* arithmetic on the two comparisons: as a nested selection, gcc 12 left
     * a branch in the loop and did not vectorize it */
    float sg = (float)(c > 0.0f) - (float)(c < 0.0f);
    *p = *p * (1.0f - s->lr * r->weight_decay) - s->lr * sg;
    *m = *m + r->omb2 * (g - *m);
}

/* torch.optim.Rprop: the step size of each element grows by etaplus
 * (c[0]) while the gradient keeps its sign and shrinks by etaminus (c[1])
 * when it flips, within [c[2], c[3]]; after a flip the gradient counts as 0
 * (no move, and the next step neither grows nor shrinks). p -= sign(g) step. */
OB_HD static inline void ob_rule_rprop(const ob_rule *r, float *p, float g, float *prev, float *step)
{
    const float s = g * *prev;
    const float f = s > 0.0f ? r->c[0] : s < 0.0f ? r->c[1] : 1.0f;
    float st = *step * f;
    st = st < r->c[2] ? r->c[2] : st; /* clamp_(min, max) */
    st = st > r->c[3] ? r->c[3] : st;
    *step = st;
    g = f == r->c[1] ? 0.0f : g;
    /* torch.sign (0, -0 and NaN stay) as two selections, the second on g < 0:
     * written as one nested selection, gcc 12 leaves a branch in the loop and
     * does not vectorize it */
    const float pos = g > 0.0f ? 1.0f : g;
    const float sg = g < 0.0f ? -1.0f : pos;
    *p = *p + -1.0f * (sg * st);
    *prev = g;
}

/* torch.optim.ASGD: g += wd p; p *= 1 - lambd eta; p -= eta g; then the
 * average ax moves to p with weight mu (ax = p while mu is 1). Per step:
 * c[0] = eta_t = lr / (1 + lambd lr (t-1))^alpha, c[1] = mu_t = 1 / max(1,
 * t-1-t0) (torch computes both at the end of the previous step); lambd in
 * the rule's c[0]. */
OB_HD static inline void ob_rule_asgd(const ob_rule *r, const ob_rule_step *s, float *p, float g, float *ax)
{
    if (r->weight_decay != 0.0f) g = g + r->weight_decay * *p;
    const float eta = s->c[0], mu = s->c[1];
    float q = *p * (1.0f - r->c[0] * eta);
    q = q + -eta * g;
    *p = q;
    *ax = mu != 1.0f ? *ax + (q - *ax) * mu : q;
}

/* Schedule-free AdamW (Defazio et al. 2024, schedulefree.AdamWScheduleFree):
 * p holds y, the point gradients are taken at; z the base sequence (it starts
 * at the parameters: the pipeline copies them in before the first update).
 * v = beta2 v + (1 - beta2) g^2; u = g / (sqrt(v / bc2) + eps) + wd y;
 * y = lerp(y, z, ckp1) + c[1] u; z = z - lr u, with the per-step ckp1 =
 * s->c[0] (the averaging weight) and c[1] = lr (beta1 (1 - ckp1) - 1). The
 * average x, where the model is evaluated, is lerp(y, z, 1 - 1/beta1). */
OB_HD static inline void ob_rule_adamw_sf(const ob_rule *r, const ob_rule_step *s, float *p, float g, float *z,
                                          float *v)
{
    float vv = *v * r->beta2 + r->omb2 * (g * g);
    *v = vv;
    float u = g / (sqrtf(vv / s->bc2) + r->eps);
    if (r->weight_decay != 0.0f) u += r->weight_decay * *p;
    float y = ob_lerp(*p, *z, s->c[0]);
    *p = y + s->c[1] * u;
    *z = *z - s->lr * u;
}

/* Schedule-free SGD (schedulefree.SGDScheduleFree): p holds y, z the base
 * sequence (starting at the parameters), as for adamw_sf. u = g + wd y;
 * y = lerp(y, z, ckp1) + c[1] u; z = z - lr u, with ckp1 = s->c[0] and
 * c[1] = lr (momentum (1 - ckp1) - 1). The average x, where the model is
 * evaluated, is lerp(y, z, 1 - 1/momentum). */
OB_HD static inline void ob_rule_sgd_sf(const ob_rule *r, const ob_rule_step *s, float *p, float g, float *z)
{
    float u = g;
    if (r->weight_decay != 0.0f) u += r->weight_decay * *p;
    float y = ob_lerp(*p, *z, s->c[0]);
    *p = y + s->c[1] * u;
    *z = *z - s->lr * u;
}

/* torch.optim.Muon's momentum: M = lerp(M, g, 1-mu); out = nesterov ? lerp(g, M, mu) : M. */
OB_HD static inline void ob_rule_muon_momentum(const ob_rule *r, float *out, float g, float *mbuf)
{
    float mm = ob_lerp(*mbuf, g, r->omm);
    *mbuf = mm;
    *out = r->nesterov ? ob_lerp(g, mm, r->momentum) : mm;
}

/* ROOT's momentum: M = mu M + g; out = nesterov ? g + mu M : M. */
OB_HD static inline void ob_rule_root_momentum(const ob_rule *r, float *out, float g, float *mbuf)
{
    float mm = r->momentum * *mbuf + g;
    *mbuf = mm;
    *out = r->nesterov ? g + r->momentum * mm : mm;
}

/* The update of an orthogonalized matrix O: p = p (1 - lr wd) - lr c[0] O,
 * c[0] the shape's learning-rate scale (per tensor). */
OB_HD static inline void ob_rule_matrix_apply(const ob_rule *r, const ob_rule_step *s, float *p,
                                              const float *o)
{
    *p = *p * (1.0f - s->lr * r->weight_decay) - s->lr * r->c[0] * *o;
}

/* SOAP's Adam in the eigenbasis (the authors' soap.py): m = b1 m + (1-b1) g,
 * v = b2 v + (1-b2) g^2, out = m / (sqrt(v) + eps); the bias corrections
 * are in the step size of OB_RULE_SOAP_APPLY. */
OB_HD static inline void ob_rule_soap_adam(const ob_rule *r, float *out, float g, float *m, float *v)
{
    float mm = *m * r->beta1 + r->omb1 * g;
    float vv = *v * r->beta2 + r->omb2 * (g * g);
    *m = mm;
    *v = vv;
    *out = mm / (sqrtf(vv) + r->eps);
}

/* SOAP's update: p -= c[0] u (c[0] = lr sqrt(1 - b2^k) / (1 - b1^k)), then
 * the decay p -= c[1] p (c[1] = lr wd) on the updated p, in soap.py's order;
 * none with OB_RULE_SKIP_DECAY. */
OB_HD static inline void ob_rule_soap_apply(const ob_rule *r, const ob_rule_step *s, float *p, const float *u)
{
    float q = *p + -s->c[0] * *u;
    *p = (r->flags & OB_RULE_SKIP_DECAY) ? q : q + -s->c[1] * q;
}

/* Adafactor's step scale of one tensor (torch.optim.Adafactor), from
 * sq[0] = ||p||^2 (before the weight decay) and sq[1] = ||u||^2 of its
 * preconditioned gradient u: *dst = *src with
 *   dst->c[0] = alpha / denom,  alpha = max(eps2, ||p|| / sqrt(numel)) rho_t,
 *   denom = max(1, ||u|| / (sqrt(numel) d)),
 * src->c[2] = rho_t = min(lr, 1/sqrt(t)), src->c[3] = eps2. In double, as
 * torch's .item() values are Python floats. Run by one thread of the
 * backend's adafactor_scale op: no host synchronisation. */
OB_HD static inline void ob_adafactor_scale(const ob_rule_step *src, const float *sq, long long numel, float d,
                                            ob_rule_step *dst)
{
    const double rn = sqrt((double)numel);
    double rms_p = sqrt((double)sq[0]) / rn;
    double alpha = (rms_p > (double)src->c[3] ? rms_p : (double)src->c[3]) * (double)src->c[2];
    double ratio = sqrt((double)sq[1]) / (rn * (double)d);
    double denom = ratio > 1.0 ? ratio : 1.0;
    *dst = *src;
    dst->c[0] = (float)(alpha / denom);
}

/* The layer-wise trust ratio of LAMB and LARS (optimizers/lamb.c, lars.c). */
typedef enum ob_trust_kind { OB_TRUST_LAMB = 0, OB_TRUST_LARS = 1 } ob_trust_kind;
typedef struct ob_trust {
    int kind;    /* ob_trust_kind */
    int clip;    /* LAMBC / LARC: clip the ratio (see ob_trust_scale) */
    float coeff; /* LARS: the trust coefficient */
    float wd;    /* LARS: the weight decay */
    float eps;   /* LARS: added to the denominator */
} ob_trust;

/* The trust ratio of one tensor from sq[0] = ||p||^2 and sq[1] = ||x||^2
 * (LAMB: x = its update u; LARS: its gradient g, before the clip scale
 * clip_scale is applied, so ||x|| = clip_scale ||g||), as timm's Lamb and
 * Lars compute it in float32; 1 where either norm is not > 0 (a NaN norm
 * too, as their torch.where):
 *   LAMB: r = ||p|| / ||u||, at most 1 with clip; dst->c[0] = lr r
 *   LARS: r = coeff ||p|| / (||g|| + wd ||p|| + eps), with clip min(r / lr, 1);
 *         dst->c[0] = r
 * *dst = *src otherwise. The norms come from double sums and are rounded to
 * float; LARS's denominator is summed in double, its product and sum
 * rounded each (OB_DMUL_ADD: nvcc would fuse them into an FMA, which can
 * round the float ratio differently). Run by one thread of the backend's
 * trust_scale op: no host synchronisation. */
OB_HD static inline void ob_trust_scale(const ob_rule_step *src, const float *sq, const ob_trust *t, float clip_scale,
                                        ob_rule_step *dst)
{
    const float wn = (float)sqrt((double)sq[0]);
    const float xn = t->kind == OB_TRUST_LARS ? (float)(sqrt((double)sq[1]) * (double)clip_scale)
                                              : (float)sqrt((double)sq[1]);
    float r = 1.0f;
    *dst = *src;
    if (t->kind == OB_TRUST_LARS) {
        if (wn > 0.0f && xn > 0.0f)
            r = (t->coeff * wn) / (float)(OB_DMUL_ADD((double)wn, (double)t->wd, (double)xn) + (double)t->eps);
        if (t->clip) {
            r = r / src->lr;
            if (r > 1.0f) r = 1.0f;
        }
        dst->c[0] = r;
    } else {
        if (wn > 0.0f && xn > 0.0f) r = wn / xn;
        if (t->clip && r > 1.0f) r = 1.0f;
        dst->c[0] = src->lr * r;
    }
}

/* torch.lerp(p, g, w) (ob_lerp) with the rule's weight c[0]. */
OB_HD static inline void ob_rule_lerp(const ob_rule *r, float *p, float g)
{
    *p = ob_lerp(*p, g, r->c[0]);
}

/* torch.optim.Adafactor (optimizers/adafactor.c). Its second-moment
 * estimates (a vector's variance, a matrix's row and column means of g^2)
 * move by lerp with weight 1 - beta2_t = t^beta2_decay (step c[1]); a
 * vector's preconditioned gradient is g / sqrt(max(v, eps1^2)) (eps1 in
 * r->eps); the update decays p by lr wd, then adds -c[0] u, c[0] = alpha /
 * denom from ob_adafactor_scale. g is taken as given (the clipped gradient
 * is copied first, as for SOAP). */
OB_HD static inline void ob_rule_af_var(const ob_rule *r, const ob_rule_step *s, float *v, float g)
{
    *v = ob_lerp(*v, r->c[0] != 0.0f ? g * g : g, s->c[1]);
}

OB_HD static inline void ob_rule_af_vec(const ob_rule *r, float *out, float g, const float *v)
{
    const float e2 = r->eps * r->eps;
    float x = *v < e2 ? e2 : *v; /* as torch's clamp_(min): a NaN stays NaN */
    *out = g * (1.0f / sqrtf(x));
}

OB_HD static inline void ob_rule_af_apply(const ob_rule *r, const ob_rule_step *s, float *p, const float *u)
{
    float q = r->weight_decay != 0.0f ? *p * (1.0f - s->lr * r->weight_decay) : *p;
    *p = q + -s->c[0] * *u;
}

/* LAMB's update direction (optimizers/lamb.c), as timm's Lamb and apex's
 * FusedLAMB compute it: m = lerp(m, g, 1 - beta1) (c[0] != 0: grad
 * averaging; else beta1 m + g), v = beta2 v + (1 - beta2) g^2,
 *   u = (m / bc1) / (sqrt(v) / c[1] + eps) + wd p,   c[1] = sqrt(bc2)
 * (bc1 = bc2 = 1 without bias correction). p is read, not written. */
OB_HD static inline void ob_rule_lamb(const ob_rule *r, const ob_rule_step *s, float *out, float g, float *m,
                                      float *v, const float *p)
{
    const float mm = r->c[0] != 0.0f ? ob_lerp(*m, g, r->omb1) : r->beta1 * *m + g;
    const float vv = r->beta2 * *v + r->omb2 * g * g;
    *m = mm;
    *v = vv;
    const float denom = sqrtf(vv) / s->c[1] + r->eps;
    float u = (mm / s->bc1) / denom;
    if (r->weight_decay != 0.0f) u += r->weight_decay * *p;
    *out = u;
}

/* LARS (optimizers/lars.c) as timm's Lars: d = (g + wd p) c[0] (c[0] the
 * tensor's trust ratio from ob_trust_scale, 1 where it is not adapted), then
 * torch.optim.SGD's momentum on d (the first update copies d into the
 * buffer; dampening; Nesterov) and p -= lr d. */
OB_HD static inline void ob_rule_lars(const ob_rule *r, const ob_rule_step *s, float *p, float g, float *buf)
{
    float d = r->weight_decay != 0.0f ? g + r->weight_decay * *p : g;
    d = d * s->c[0];
    if (r->momentum != 0.0f) {
        const float b = (s->t <= 1.0f) ? d : r->momentum * *buf + r->omd * d;
        *buf = b;
        d = r->nesterov ? d + r->momentum * b : b;
    }
    *p -= s->lr * d;
}

/* AdEMAMix (optimizers/ademamix.c) as the authors' PyTorch code (Pagliardini
 * et al. 2024): a fast EMA m1 (beta1), a slow EMA m2 (beta3, warmed up per
 * step) and Adam's second moment v; u = (m1 / bc1 + alpha m2) / (sqrt(v) /
 * sqrt(bc2) + eps) + wd p, then p -= lr u. Constants c[0] = 1 - beta1, c[1] =
 * 1 - beta2 (in double, then float, as torch takes them); per step c[0] =
 * beta3_t, c[1] = 1 - beta3_t, c[2] = alpha_t, c[3] = sqrt(bc2). */
OB_HD static inline void ob_rule_ademamix(const ob_rule *r, const ob_rule_step *s, float *p, float g, float *m1,
                                          float *m2, float *v)
{
    const float a = *m1 * r->beta1 + r->c[0] * g;
    const float b = *m2 * s->c[0] + s->c[1] * g;
    const float vv = *v * r->beta2 + r->c[1] * g * g;
    *m1 = a;
    *m2 = b;
    *v = vv;
    const float denom = sqrtf(vv) / s->c[3] + r->eps;
    const float u = (a / s->bc1 + s->c[2] * b) / denom + r->weight_decay * *p;
    *p -= s->lr * u;
}

/* AdaBelief (Zhuang et al. 2020) as adabelief-pytorch 0.2's AdaBelief: Adam
 * whose second moment s is the EMA of (g - m)^2, the belief in the observed
 * gradient, m the new first moment, with eps added into it at every step and
 * stored so (the package's exp_avg_var.add_(eps) is in place, so eps
 * accumulates in s): s = beta2 s + (1 - beta2) (g - m)^2 + eps. The decay
 * comes first: L2 (g += wd p), decoupled (p *= 1 - lr wd) or, with
 * OB_RULE_FIXED_DECAY, p *= c[0] (the rule's c[0] = 1 - wd, rounded from
 * double as the package's factor is). Per step: where c[1] != 0 the adaptive
 * step p -= c[0] m / (sqrt(s) / c[3] + eps), c[3] = sqrt(bc2), or 1 for the
 * rectified step (whose bias correction is in c[0]); where c[1] == 0 the
 * rectified rule's SGD phase p -= c[0] m; and where c[2] == 0 no move at all
 * (that phase without degenerated_to_sgd: m and s still move, and the
 * decay). c[0] is the step size times lr, in double on the host. amsgrad (the
 * unrectified step only: the package's rectified step divides by sqrt(s),
 * not by its maximum) keeps vmax = max(vmax, s) and divides by sqrt(vmax). */
OB_HD static inline void ob_rule_adabelief(const ob_rule *r, const ob_rule_step *s, float *p, float g, float *m,
                                           float *v, float *vmax)
{
    if (r->weight_decay != 0.0f && (r->flags & OB_RULE_FIXED_DECAY))
        *p *= r->c[0];
    else
        g = ob_rule_weight_decay(r, s, p, g);
    const float mm = *m * r->beta1 + r->omb1 * g; /* exp_avg.mul_(beta1).add_(g, alpha=1-beta1) */
    const float d = g - mm;
    const float vv = (*v * r->beta2 + r->omb2 * d * d) + r->eps;
    *m = mm;
    *v = vv;
    float vhat = vv;
    if (r->amsgrad) {
        vhat = *vmax > vv ? *vmax : vv;
        *vmax = vhat;
    }
    const float denom = sqrtf(vhat) / s->c[3] + r->eps;
    /* selections, not branches, on values the same for every element of a
     * step: the CPU's loops vectorize them as they are */
    const float u = s->c[1] != 0.0f ? mm / denom : mm;
    const float q = *p - s->c[0] * u;
    *p = s->c[2] != 0.0f ? q : *p;
}

/* Apply rule r to element i. st[k] are the state arrays (NULL beyond n_state). */
OB_HD static inline void ob_rule_apply(const ob_rule *r, const ob_rule_step *s, float clip_scale,
                                       float *p, const float *g, float *const *st, long long i)
{
    float gi = g[i] * clip_scale;
    /* no default: a kind without its case here is a -Wswitch warning, not an
     * optimizer that silently leaves the parameters where they are (the CPU's
     * rule_span and CUDA's step kernels fall back to this switch) */
    switch ((ob_rule_kind)r->kind) {
    case OB_RULE_SGD: ob_rule_sgd(r, s, &p[i], gi, st[0] ? &st[0][i] : (float *)0); break;
    case OB_RULE_ADAM:
        ob_rule_adam(r, s, &p[i], gi, &st[0][i], &st[1][i], r->amsgrad ? &st[2][i] : (float *)0);
        break;
    case OB_RULE_NADAM: ob_rule_nadam(r, s, &p[i], gi, &st[0][i], &st[1][i]); break;
    case OB_RULE_RADAM: ob_rule_radam(r, s, &p[i], gi, &st[0][i], &st[1][i]); break;
    case OB_RULE_ADAMAX: ob_rule_adamax(r, s, &p[i], gi, &st[0][i], &st[1][i]); break;
    case OB_RULE_ADAGRAD: ob_rule_adagrad(r, s, &p[i], gi, &st[0][i]); break;
    case OB_RULE_ADADELTA: ob_rule_adadelta(r, s, &p[i], gi, &st[0][i], &st[1][i]); break;
    case OB_RULE_RMSPROP: {
        int centered = (r->flags & OB_RULE_CENTERED) != 0;
        float *ga = centered ? &st[1][i] : (float *)0;
        float *buf = r->momentum != 0.0f ? &st[centered ? 2 : 1][i] : (float *)0;
        ob_rule_rmsprop(r, s, &p[i], gi, &st[0][i], ga, buf);
        break;
    }
    case OB_RULE_LION: ob_rule_lion(r, s, &p[i], gi, &st[0][i]); break;
    case OB_RULE_MUON_MOMENTUM: ob_rule_muon_momentum(r, &p[i], gi, &st[0][i]); break;
    case OB_RULE_ROOT_MOMENTUM: ob_rule_root_momentum(r, &p[i], gi, &st[0][i]); break;
    case OB_RULE_MATRIX_APPLY: ob_rule_matrix_apply(r, s, &p[i], &st[0][i]); break;
    case OB_RULE_ADAMW_SF: ob_rule_adamw_sf(r, s, &p[i], gi, &st[0][i], &st[1][i]); break;
    case OB_RULE_SGD_SF: ob_rule_sgd_sf(r, s, &p[i], gi, &st[0][i]); break;
    case OB_RULE_COPY: p[i] = r->c[0] != 0.0f ? gi : g[i]; break;
    case OB_RULE_LERP: ob_rule_lerp(r, &p[i], g[i]); break;
    case OB_RULE_SOAP_ADAM: ob_rule_soap_adam(r, &p[i], g[i], &st[0][i], &st[1][i]); break;
    case OB_RULE_SOAP_APPLY: ob_rule_soap_apply(r, s, &p[i], &st[0][i]); break;
    case OB_RULE_AF_VAR: ob_rule_af_var(r, s, &p[i], g[i]); break;
    case OB_RULE_AF_VEC: ob_rule_af_vec(r, &p[i], g[i], &st[0][i]); break;
    case OB_RULE_AF_APPLY: ob_rule_af_apply(r, s, &p[i], &st[0][i]); break;
    case OB_RULE_RPROP: ob_rule_rprop(r, &p[i], gi, &st[0][i], &st[1][i]); break;
    case OB_RULE_ASGD: ob_rule_asgd(r, s, &p[i], gi, &st[0][i]); break;
    case OB_RULE_LAMB: ob_rule_lamb(r, s, &p[i], gi, &st[0][i], &st[1][i], &st[2][i]); break;
    case OB_RULE_LARS: ob_rule_lars(r, s, &p[i], gi, st[0] ? &st[0][i] : (float *)0); break;
    case OB_RULE_ADEMAMIX: ob_rule_ademamix(r, s, &p[i], gi, &st[0][i], &st[1][i], &st[2][i]); break;
    case OB_RULE_ADABELIEF:
        ob_rule_adabelief(r, s, &p[i], gi, &st[0][i], &st[1][i], r->amsgrad ? &st[2][i] : (float *)0);
        break;
    case OB_RULE_COUNT: break;
    }
}

#endif
