/* optimizers/hybrid.c - what the hybrid matrix optimizers (muon, root) share:
 * the default routing and their AdamW group for everything that is not a
 * hidden matrix (biases, norms, embeddings, the output head). */
#include <math.h>

#include "optimizers/optim_impl.h"

const char *const ob_hybrid_routes[] = {
    "tag=matrix ndim=2 -> main",
    "tag=conv ndim=4 -> main",
    "* -> adamw",
    NULL,
};

/* adamw_style: 1 for moonlight (the optimizer's lr and weight_decay) */
static int moonlight(const ob_optim *o)
{
    return ob_optim_hp(o, "adamw_style") == 1;
}

ob_status ob_hybrid_adamw_rule(const ob_optim *o, ob_rule *r, ob_err *e)
{
    const int ml = moonlight(o);
    if (ml) {
        static const char *const own[][2] = {{"adamw_lr", "lr"}, {"adamw_wd", "weight_decay"}};
        for (int k = 0; k < 2; k++) {
            int i = ob_hp_index(o->hp.defs, o->hp.n, own[k][0]);
            if (i >= 0 && o->hp.set[i])
                return ob_fail(e, OB_ERR_INPUT,
                               "%s.%s = %g has no effect with %s.adamw_style = moonlight (its AdamW group takes "
                               "%s.%s); set %s.%s, or %s.adamw_style=separate for a group with settings of its own",
                               o->def->name, own[k][0], o->hp.v[i], o->def->name, o->def->name, own[k][1],
                               o->def->name, own[k][1], o->def->name);
        }
    }
    ob_adam_rule(r, ob_optim_hp(o, "adamw_beta1"), ob_optim_hp(o, "adamw_beta2"), ob_optim_hp(o, "adamw_eps"),
                 ob_optim_hp(o, ml ? "weight_decay" : "adamw_wd"), 1, 0);
    if (ml) r->flags |= OB_RULE_EPS_RAW;
    return OB_OK;
}

int ob_hybrid_group_takes_lr(const ob_optim *o, int g)
{
    return g == 0 || moonlight(o);
}

void ob_hybrid_adamw_step(const ob_optim *o, int64_t t, double lr_scale, ob_rule_step *s)
{
    ob_adam_step(s, lr_scale * ob_optim_hp(o, moonlight(o) ? "lr" : "adamw_lr"), t, ob_optim_hp(o, "adamw_beta1"),
                 ob_optim_hp(o, "adamw_beta2"));
}
