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

void ob_hybrid_adamw_rule(const ob_optim *o, ob_rule *r)
{
    ob_adam_rule(r, ob_optim_hp(o, "adamw_beta1"), ob_optim_hp(o, "adamw_beta2"), ob_optim_hp(o, "adamw_eps"),
                 ob_optim_hp(o, "adamw_wd"), 1, 0);
}

void ob_hybrid_adamw_step(const ob_optim *o, int64_t t, double lr_scale, ob_rule_step *s)
{
    ob_adam_step(s, lr_scale * ob_optim_hp(o, "adamw_lr"), t, ob_optim_hp(o, "adamw_beta1"),
                 ob_optim_hp(o, "adamw_beta2"));
}
