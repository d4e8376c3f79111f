/* optimizers/muon.c - Muon with the semantics of torch.optim.Muon (PyTorch >= 2.9):
 *   M = lerp(M, g, 1 - momentum); u = nesterov ? lerp(g, M, momentum) : M
 *   X0 = u / max(||u||_F, eps); ns_steps Newton-Schulz iterations with (a, b, c)
 *   (in fp32; ns_dtype=bf16: in bf16 as torch's, ob_ns_iterate)
 *   (ns_coeffs=polar_express: Polar Express's triple per iteration, arXiv
 *   2505.16932 Algorithm 1, with its X0 = u / (1.01 ||u||_F + eps); an
 *   extension, not part of torch.optim.Muon)
 *   p *= 1 - lr*wd; p -= lr * scale * X, scale = sqrt(max(1, rows/cols))
 *   (adjust_lr=original) or 0.2 * sqrt(max(rows, cols)) (match_rms_adamw).
 * Group 0 holds 2-D matrices (conv kernels as out x in*kh*kw); with the default
 * hybrid routing everything else goes to group 1, an AdamW. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def muon_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL,
     "learning rate of the matrices (and of the AdamW group with adamw_style=moonlight)"},
    {"momentum", OB_HP_FLOAT, 0.95, 0, 1, 0, 1, NULL, "momentum factor"},
    {"nesterov", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL, "Nesterov momentum"},
    {"weight_decay", OB_HP_FLOAT, 0.1, 0, INFINITY, 0, 0, NULL,
     "decoupled weight decay: p *= 1 - lr*wd (the AdamW group's too with adamw_style=moonlight)"},
    {"ns_steps", OB_HP_INT, 5, 1, 99, 0, 0, NULL, "Newton-Schulz iterations"},
    {"eps", OB_HP_FLOAT, 1e-7, 0, INFINITY, 1, 0, NULL, "X0 = u / max(||u||_F, eps)"},
    {"ns_a", OB_HP_FLOAT, 3.4445, -INFINITY, INFINITY, 0, 0, NULL, "Newton-Schulz coefficient a"},
    {"ns_b", OB_HP_FLOAT, -4.7750, -INFINITY, INFINITY, 0, 0, NULL, "Newton-Schulz coefficient b"},
    {"ns_c", OB_HP_FLOAT, 2.0315, -INFINITY, INFINITY, 0, 0, NULL, "Newton-Schulz coefficient c"},
    {"ns_coeffs", OB_HP_ENUM, 0, 0, 1, 0, 0, "fixed|polar_express",
     "fixed: (ns_a, ns_b, ns_c) every iteration (torch); polar_express: a triple per iteration (arXiv 2505.16932)"},
    {"ns_dtype", OB_HP_ENUM, 0, 0, 1, 0, 0, "fp32|bf16",
     "X0 and the Newton-Schulz iteration in fp32, or in bf16 as torch.optim.Muon runs them (grad.bfloat16(): "
     "every product and sum rounded to bf16)"},
    {"adjust_lr", OB_HP_ENUM, 0, 0, 1, 0, 0, "original|match_rms_adamw",
     "lr scale per matrix: sqrt(max(1, rows/cols)) or 0.2*sqrt(max(rows, cols))"},
    OB_HYBRID_HP(0, 1e-10),
    OB_HP_FILTER_BIAS_AND_BN("weight decay in the AdamW group"),
};

static const char *const muon_groups[] = {"muon", "adamw", NULL};

static double muon_state(const ob_hp_values *hp)
{
    (void)hp;
    return 1.0;
}

static int muon_polar_express(const ob_optim *o);

static ob_status muon_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    if (g == 1) return ob_hybrid_adamw_rule(o, r, e);
    /* polar_express brings its own triples: a fixed triple set beside it would be ignored */
    static const char *const fixed[] = {"ns_a", "ns_b", "ns_c"};
    for (int k = 0; k < 3 && muon_polar_express(o); k++) {
        const int i = ob_hp_index(o->hp.defs, o->hp.n, fixed[k]);
        if (i >= 0 && o->hp.set[i])
            return ob_fail(e, OB_ERR_INPUT,
                           "%s.%s = %g has no effect with %s.ns_coeffs = polar_express (a triple of its own per "
                           "iteration); leave %s out, or set %s.ns_coeffs=fixed to iterate with (ns_a, ns_b, ns_c)",
                           o->def->name, fixed[k], o->hp.v[i], o->def->name, fixed[k], o->def->name);
    }
    *r = (ob_rule){0};
    r->kind = OB_RULE_MUON_MOMENTUM;
    ob_rule_momentum(r, ob_optim_hp(o, "momentum"), 0);
    r->nesterov = ob_optim_hp(o, "nesterov") != 0;
    r->n_state = 1;
    return OB_OK;
}

static int muon_polar_express(const ob_optim *o)
{
    return ob_optim_hp(o, "ns_coeffs") != 0;
}

static int muon_coeffs(const ob_optim *o, int64_t dmin, int64_t dmax, float abc[][3])
{
    (void)dmin;
    (void)dmax;
    if (muon_polar_express(o)) return ob_ns_polar_express(abc);
    abc[0][0] = (float)ob_optim_hp(o, "ns_a");
    abc[0][1] = (float)ob_optim_hp(o, "ns_b");
    abc[0][2] = (float)ob_optim_hp(o, "ns_c");
    return 1;
}

static int muon_matrix(const ob_optim *o, int g, ob_matrix_plan *p)
{
    if (g != 0) return 0;
    if (muon_polar_express(o)) {
        /* u / (1.01 ||u|| + eps) = (u / (||u|| + eps/1.01)) / 1.01; the last
         * division is folded into the first triple (ob_ns_polar_express) */
        p->norm_eps = (float)(ob_optim_hp(o, "eps") / 1.01);
        p->norm_add_eps = 1;
    } else {
        p->norm_eps = (float)ob_optim_hp(o, "eps");
        p->norm_add_eps = 0;
    }
    p->ns_bf16 = ob_optim_hp(o, "ns_dtype") != 0;
    p->ns_steps = (int)ob_optim_hp(o, "ns_steps");
    p->lr_adjust = ob_optim_hp(o, "adjust_lr") != 0 ? OB_LR_ADJUST_MATCH_RMS : OB_LR_ADJUST_ORIGINAL;
    p->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    p->coeffs = muon_coeffs;
    return 1;
}

static void muon_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    if (g == 1) {
        ob_hybrid_adamw_step(o, t, lr_scale, s);
        return;
    }
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

const ob_optimizer_def ob_opt_muon = {
    .name = "muon",
    .summary = "Muon: orthogonalized momentum by Newton-Schulz (torch.optim.Muon), AdamW for the rest",
    .hp = muon_hp,
    .n_hp = (int)(sizeof muon_hp / sizeof muon_hp[0]),
    .state_per_param = muon_state,
    .groups = muon_groups,
    .default_routes = ob_hybrid_routes,
    .group_takes_lr = ob_hybrid_group_takes_lr,
    .group_rule = muon_rule,
    .group_matrix = muon_matrix,
    .group_step = muon_step,
};
