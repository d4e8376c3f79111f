/* optimizers/pipeline.c - routing, statistics, guard and fused update: the
 * step every optimizer runs through (see optim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizers/optim_impl.h"

const ob_hp_def ob_train_hp_defs[] = {
    {"clip_norm", OB_HP_FLOAT, 0.0, 0.0, INFINITY, 0, 0, NULL,
     "clip gradients to this global L2 norm (0: no clipping)"},
    {"diverge_factor", OB_HP_FLOAT, 1e4, 1.0, INFINITY, 1, 0, NULL,
     "a run whose loss exceeds this multiple of its first loss is diverged"},
    {"max_bad_steps", OB_HP_INT, 10, 1, 1e9, 0, 0, NULL,
     "consecutive non-finite (skipped) steps after which a run is diverged"},
};
const int ob_train_hp_count = (int)(sizeof ob_train_hp_defs / sizeof ob_train_hp_defs[0]);

static const ob_optimizer_def *const registry[] = {
    &ob_opt_sgd,
    &ob_opt_adam,
};

const ob_optimizer_def *const *ob_optimizers(int *n)
{
    *n = (int)(sizeof registry / sizeof registry[0]);
    return registry;
}

const ob_optimizer_def *ob_optimizer_find(const char *name)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(all[i]->name, name) == 0) return all[i];
    return NULL;
}

ob_status ob_optimizer_unknown(const char *name, ob_err *e)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    const char *names[64];
    char list[512] = "";
    for (int i = 0; i < n && i < 64; i++) {
        names[i] = all[i]->name;
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, all[i]->name, sizeof list - strlen(list) - 1);
    }
    const char *near = ob_closest_name(name, names, n < 64 ? n : 64);
    if (near)
        return ob_fail(e, OB_ERR_INPUT, "unknown optimizer '%s' (did you mean '%s'?)", name, near);
    return ob_fail(e, OB_ERR_INPUT, "unknown optimizer '%s'; known: %s", name, list);
}

double ob_optim_hp(const ob_optim *o, const char *name)
{
    return ob_hp_get(&o->hp, name);
}

double ob_optim_train_hp(const ob_optim *o, const char *name)
{
    return ob_hp_get(&o->train, name);
}

ob_status ob_optim_create(const ob_optimizer_def *d, const ob_hp_values *hp,
                          const ob_hp_values *train, ob_optim **out, ob_err *e)
{
    ob_optim *o = calloc(1, sizeof *o);
    if (!o) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    o->def = d;
    o->hp = *hp;
    o->train = *train;
    *out = o;
    return OB_OK;
}

ob_status ob_optim_route(ob_optim *o, ob_layout *l, ob_err *e)
{
    if (o->def->route) return o->def->route(o, l, e);
    for (int i = 0; i < l->n; i++) l->t[i].group = 0;
    return OB_OK;
}

void ob_optim_describe_routing(const ob_optim *o, const ob_layout *l, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    int max_g = -1;
    for (int i = 0; i < l->n; i++)
        if (l->t[i].group > max_g) max_g = l->t[i].group;
    for (int g = 0; g <= max_g && len < n; g++) {
        ob_rule rule;
        ob_err ignore;
        const char *what = o->def->name;
        if (o->def->group_rule && o->def->group_rule(o, g, &rule, &ignore) == OB_OK)
            what = rule.kind == OB_RULE_ADAM ? (rule.decoupled_wd ? "adamw" : "adam") : o->def->name;
        len += (size_t)snprintf(buf + len, n - len, "    group %d (%s):", g, what);
        for (int i = 0; i < l->n && len < n; i++) {
            if (l->t[i].group != g) continue;
            char shape[64] = "";
            size_t sl = 0;
            for (int d = 0; d < l->t[i].ndim; d++)
                sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%s%lld", d ? "x" : "",
                                       (long long)l->t[i].shape[d]);
            len += (size_t)snprintf(buf + len, n - len, " %s[%s]", l->t[i].name, shape);
        }
        if (len < n) len += (size_t)snprintf(buf + len, n - len, "\n");
    }
}

ob_status ob_optim_setup(ob_optim *o, ob_device *dev, const ob_layout *l, ob_err *e)
{
    o->dev = dev;
    o->layout = l;
    o->n_groups = l->n_groups;
    o->state_bytes = 0;
    OB_TRY(ob_dev_alloc(dev, sizeof(ob_step_stats), (void **)&o->stats_dev, e));
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        gr->begin = l->group_begin[g];
        gr->end = l->group_end[g];
        OB_TRY(o->def->group_rule(o, g, &gr->rule, e));
        size_t bytes = (size_t)(gr->end - gr->begin) * sizeof(float);
        for (int k = 0; k < gr->rule.n_state; k++) {
            OB_TRY(ob_dev_alloc(dev, bytes, (void **)&gr->state[k], e));
            o->state_bytes += bytes;
        }
        OB_TRY(ob_dev_alloc(dev, sizeof(ob_rule_step), (void **)&gr->step_dev, e));
    }
    return OB_OK;
}

void ob_optim_set_total_steps(ob_optim *o, int64_t total_steps)
{
    o->total_steps = total_steps;
}

int ob_optim_pop_event(ob_optim *o, int64_t *step, char *kind, size_t kind_n, char *detail,
                       size_t detail_n)
{
    (void)o;
    (void)step;
    (void)kind;
    (void)kind_n;
    (void)detail;
    (void)detail_n;
    return 0;
}

double ob_optim_lr(const ob_optim *o, int64_t t)
{
    (void)t;
    return ob_optim_hp(o, "lr");
}

ob_status ob_optim_step(ob_optim *o, float *params, const float *grads, const float *loss,
                        int64_t t, ob_step_record *rec, ob_err *e)
{
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    const ob_step_stats zero = {0};
    OB_TRY(ops->upload(dev, o->stats_dev, &zero, sizeof zero, e));
    OB_TRY(ops->grad_stats(dev, grads, o->layout->total, o->stats_dev, e));
    OB_TRY(ops->finish_stats(dev, o->stats_dev, loss, (float)ob_optim_train_hp(o, "clip_norm"), rec, e));
    double lr = ob_optim_lr(o, t);
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        ob_rule_step s;
        memset(&s, 0, sizeof s);
        o->def->group_step(o, g, t, lr, &s);
        OB_TRY(ops->upload(dev, gr->step_dev, &s, sizeof s, e));
        float *st[OB_RULE_MAX_STATE] = {0};
        for (int k = 0; k < gr->rule.n_state; k++) st[k] = gr->state[k];
        OB_TRY(ops->elementwise_step(dev, &gr->rule, gr->step_dev, o->stats_dev, params + gr->begin,
                                     grads + gr->begin, st, gr->end - gr->begin, e));
    }
    return OB_OK;
}

size_t ob_optim_state_bytes(const ob_optim *o)
{
    return o->state_bytes;
}

void ob_optim_destroy(ob_optim *o)
{
    if (!o) return;
    if (o->dev) {
        ob_dev_free(o->dev, o->stats_dev);
        for (int g = 0; g < o->n_groups; g++) {
            for (int k = 0; k < OB_RULE_MAX_STATE; k++) ob_dev_free(o->dev, o->group[g].state[k]);
            ob_dev_free(o->dev, o->group[g].step_dev);
        }
    }
    free(o);
}
