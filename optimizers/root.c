/* optimizers/root.c - ROOT (He et al. 2025, "ROOT: Robust Orthogonalized
 * Optimizer", arXiv 2511.20626), the authors' reference step:
 *   M = momentum*M + g; u = nesterov ? g + momentum*M : M
 *   eps = threshold_quantile-quantile of |u| (linear interpolation) + 1e-9;
 *   B = clamp(u, -eps, eps)   (u minus its soft threshold)
 *   X0 = B / (||B||_F + 1e-7); ns_steps Newton-Schulz iterations with
 *   coefficients for the shape (min dim, max dim): coeff_file, then the
 *   authors' table, else Muon's
 *   p *= 1 - lr*wd; p -= lr * 0.2*sqrt(max(rows, cols)) * X
 * The quantile is a selection (the backend's abs_quantile), never a sort.
 * Group 0 holds 2-D matrices (conv kernels as out x in*kh*kw); with the default
 * hybrid routing everything else goes to group 1, an AdamW: by default the
 * authors' (Moonlight's), with root's lr and weight decay, eps 1e-8 added to
 * sqrt(v) before the bias correction (adamw_style=moonlight). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def root_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL,
     "learning rate (the matrices', and the AdamW group's with adamw_style=moonlight)"},
    {"momentum", OB_HP_FLOAT, 0.95, 0, 1, 0, 1, NULL, "momentum factor (M = momentum*M + g)"},
    {"nesterov", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL, "u = g + momentum*M (else u = M)"},
    {"weight_decay", OB_HP_FLOAT, 0.1, 0, INFINITY, 0, 0, NULL,
     "decoupled weight decay: p *= 1 - lr*wd (the AdamW group's too with adamw_style=moonlight)"},
    {"threshold_quantile", OB_HP_FLOAT, 0.9, 0, 1, 1, 0, NULL,
     "clip u at this quantile of |u| (1: no clipping)"},
    {"ns_steps", OB_HP_INT, 5, 1, 99, 0, 0, NULL, "Newton-Schulz iterations"},
    OB_HYBRID_HP(1, 1e-8),
    OB_HP_FILTER_BIAS_AND_BN("weight decay in the AdamW group"),
};

static const char *const root_groups[] = {"root", "adamw", NULL};

/* builds before adamw_style (2026-12-05) gave root's AdamW group settings of
 * its own: their runs, which do not record the key, ran separate */
static const ob_hp_absent root_absent[] = {{"adamw_style", 0}};

static double root_state(const ob_hp_values *hp)
{
    (void)hp;
    return 1.0;
}

static ob_status root_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    if (g == 1) return ob_hybrid_adamw_rule(o, r, e);
    *r = (ob_rule){0};
    r->kind = OB_RULE_ROOT_MOMENTUM;
    ob_rule_momentum(r, ob_optim_hp(o, "momentum"), 0);
    r->nesterov = ob_optim_hp(o, "nesterov") != 0;
    r->n_state = 1;
    return OB_OK;
}

static int root_coeffs(const ob_optim *o, int64_t dmin, int64_t dmax, float abc[][3])
{
    if (ob_ns_table_lookup(o->coeffs, o->n_coeffs, dmin, dmax, abc[0])) return 1;
    if (ob_ns_root_lookup(dmin, dmax, abc[0])) return 1;
    memcpy(abc[0], ob_ns_muon_abc, sizeof ob_ns_muon_abc);
    return 1;
}

static int root_matrix(const ob_optim *o, int g, ob_matrix_plan *p)
{
    if (g != 0) return 0;
    p->quantile = (float)ob_optim_hp(o, "threshold_quantile");
    p->quantile_add = 1e-9f;
    p->norm_eps = 1e-7f;
    p->norm_add_eps = 1;
    p->ns_steps = (int)ob_optim_hp(o, "ns_steps");
    p->lr_adjust = OB_LR_ADJUST_MATCH_RMS;
    p->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    p->coeffs = root_coeffs;
    return 1;
}

static void root_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    if (g == 1) {
        ob_hybrid_adamw_step(o, t, lr_scale, s);
        return;
    }
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

static ob_status root_set_option(ob_optim *o, const char *key, const char *value, ob_err *e)
{
    (void)key; /* only coeff_file */
    ob_ns_coeff *t;
    int n;
    OB_TRY(ob_ns_coeffs_load(value, &t, &n, e));
    free(o->coeffs);
    o->coeffs = t;
    o->n_coeffs = n;
    snprintf(o->coeff_file, sizeof o->coeff_file, "%s", value);
    return OB_OK;
}

const ob_optimizer_def ob_opt_root = {
    .name = "root",
    .summary = "ROOT: outlier-clipped momentum, shape-specific Newton-Schulz (He et al. 2025), AdamW for the rest",
    .hp = root_hp,
    .absent = root_absent,
    .n_absent = 1,
    .n_hp = (int)(sizeof root_hp / sizeof root_hp[0]),
    .state_per_param = root_state,
    .groups = root_groups,
    .default_routes = ob_hybrid_routes,
    .group_takes_lr = ob_hybrid_group_takes_lr,
    .group_rule = root_rule,
    .group_matrix = root_matrix,
    .group_step = root_step,
    .options = "coeff_file",
    .set_option = root_set_option,
};
