/* harness/matrix.c - configuration -> validated cells (see matrix.h). */
#include "harness/matrix.h"

#include <stdlib.h>
#include <string.h>

/* Is key a text setting of optimizer d ("route", or listed in d->options)? */
static int is_option(const ob_optimizer_def *d, const char *key)
{
    if (!d) return 0;
    if (!strcmp(key, "route")) return 1;
    if (!d->options) return 0;
    size_t lk = strlen(key);
    for (const char *p = d->options; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == lk && !strncmp(p, key, lk)) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static ob_status apply_settings(const ob_config *c, const char *owner, ob_hp_values *hv, ob_err *e)
{
    const ob_optimizer_def *od = ob_optimizer_find(owner);
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (strcmp(s->owner, owner) != 0) continue;
        if (is_option(od, s->key)) continue; /* text settings: ob_cell_make_optim */
        if (ob_hp_set(hv, owner, s->key, s->value, e) != OB_OK) return ob_err_prefix(e, "%s: ", s->origin);
    }
    return OB_OK;
}

static int owner_known(const char *owner)
{
    return !strcmp(owner, "train") || ob_optimizer_find(owner) || ob_workload_find(owner);
}

static ob_status check_owners(const ob_config *c, FILE *notes, ob_err *e)
{
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (!owner_known(s->owner)) {
            int nw, no;
            const ob_workload_def *const *w = ob_workloads(&nw);
            const ob_optimizer_def *const *o = ob_optimizers(&no);
            const char *names[160];
            int n = 0;
            names[n++] = "train";
            for (int k = 0; k < nw && n < 160; k++) names[n++] = w[k]->name;
            for (int k = 0; k < no && n < 160; k++) names[n++] = o[k]->name;
            const char *near = ob_closest_name(s->owner, names, n);
            return ob_fail(e, OB_ERR_INPUT,
                           "%s: setting '%s.%s': '%s' is not an optimizer, a workload or 'train'%s%s%s",
                           s->origin, s->owner, s->key, s->owner, near ? " (did you mean '" : "",
                           near ? near : "", near ? "'?)" : "");
        }
        int used = !strcmp(s->owner, "train");
        for (int k = 0; k < c->n_optimizers; k++) used |= !strcmp(c->optimizers[k], s->owner);
        for (int k = 0; k < c->n_workloads; k++) used |= !strcmp(c->workloads[k], s->owner);
        if (!used && notes)
            fprintf(notes, "optbench: note: %s: '%s' is not in this matrix; setting %s.%s is unused\n",
                    s->origin, s->owner, s->owner, s->key);
    }
    return OB_OK;
}

ob_status ob_matrix_expand(const ob_config *c, ob_matrix *m, FILE *notes, ob_err *e)
{
    memset(m, 0, sizeof *m);
    if (c->n_workloads == 0)
        return ob_fail(e, OB_ERR_INPUT, "no workloads given (--workloads or 'workloads:' in the config)");
    if (c->n_optimizers == 0)
        return ob_fail(e, OB_ERR_INPUT, "no optimizers given (--optimizers or 'optimizers:' in the config)");
    for (int i = 0; i < c->n_workloads; i++)
        if (!ob_workload_find(c->workloads[i])) return ob_workload_unknown(c->workloads[i], e);
    for (int i = 0; i < c->n_optimizers; i++)
        if (!ob_optimizer_find(c->optimizers[i])) return ob_optimizer_unknown(c->optimizers[i], e);
    for (int i = 0; i < c->n_lr_lists; i++)
        if (c->lrs[i].optimizer[0] && !ob_optimizer_find(c->lrs[i].optimizer)) {
            ob_optimizer_unknown(c->lrs[i].optimizer, e);
            return ob_err_prefix(e, "%s: lrs: ", c->lrs[i].origin);
        }
    OB_TRY(check_owners(c, notes, e));

    ob_hp_values train;
    ob_hp_defaults(&train, ob_train_hp_defs, ob_train_hp_count);
    OB_TRY(apply_settings(c, "train", &train, e));

    int n_seeds = c->n_seeds ? c->n_seeds : 1;
    int64_t total = 0;
    for (int o = 0; o < c->n_optimizers; o++) {
        const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[o]);
        total += (int64_t)c->n_workloads * (l ? l->n : 1) * n_seeds;
    }
    if (total > 1000000) return ob_fail(e, OB_ERR_INPUT, "the matrix has %lld cells; at most 1000000", (long long)total);
    m->cells = calloc((size_t)total, sizeof *m->cells);
    if (!m->cells) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %lld cells", (long long)total);

    for (int w = 0; w < c->n_workloads; w++) {
        const ob_workload_def *wd = ob_workload_find(c->workloads[w]);
        ob_hp_values whp;
        ob_hp_defaults(&whp, wd->hp, wd->n_hp);
        if (apply_settings(c, wd->name, &whp, e) != OB_OK) goto fail;
        for (int o = 0; o < c->n_optimizers; o++) {
            const ob_optimizer_def *od = ob_optimizer_find(c->optimizers[o]);
            ob_hp_values ohp;
            ob_hp_defaults(&ohp, od->hp, od->n_hp);
            if (apply_settings(c, od->name, &ohp, e) != OB_OK) goto fail;
            const ob_setting *opts[OB_MAX_CELL_OPTIONS];
            int n_opts = 0;
            for (int i = 0; i < c->n_settings; i++) {
                if (strcmp(c->settings[i].owner, od->name) || !is_option(od, c->settings[i].key)) continue;
                if (n_opts == OB_MAX_CELL_OPTIONS) {
                    ob_fail(e, OB_ERR_INPUT, "%s: more than %d text settings for %s", c->settings[i].origin,
                            OB_MAX_CELL_OPTIONS, od->name);
                    goto fail;
                }
                opts[n_opts++] = &c->settings[i];
            }
            const ob_lr_list *l = ob_config_lrs_for(c, od->name);
            int n_lr = l ? l->n : 1;
            for (int k = 0; k < n_lr; k++) {
                double lr = l ? l->v[k] : ob_hp_get(&ohp, "lr");
                if (k == 0) { /* validate the text settings once per optimizer */
                    ob_cell probe = {.opt = od, .opt_hp = ohp, .train_hp = train, .n_options = n_opts};
                    memcpy(probe.options, opts, (size_t)n_opts * sizeof opts[0]);
                    ob_optim *made = NULL;
                    ob_status st = ob_cell_make_optim(&probe, &made, e);
                    ob_optim_destroy(made);
                    if (st != OB_OK) goto fail;
                }
                for (int s = 0; s < n_seeds; s++) {
                    ob_cell *cell = &m->cells[m->n];
                    cell->index = m->n;
                    cell->wl = wd;
                    cell->opt = od;
                    cell->lr = lr;
                    cell->seed = c->n_seeds ? c->seeds[s] : 0;
                    cell->wl_hp = whp;
                    cell->opt_hp = ohp;
                    cell->train_hp = train;
                    cell->n_options = n_opts;
                    memcpy(cell->options, opts, (size_t)n_opts * sizeof opts[0]);
                    int li = ob_hp_index(od->hp, od->n_hp, "lr");
                    if (li >= 0) {
                        cell->opt_hp.v[li] = lr;
                        cell->opt_hp.set[li] = 1;
                    }
                    m->n++;
                }
            }
        }
    }
    return OB_OK;
fail:
    ob_matrix_free(m);
    return e->status;
}

ob_status ob_cell_make_optim(const ob_cell *cell, ob_optim **out, ob_err *e)
{
    *out = NULL;
    OB_TRY(ob_optim_create(cell->opt, &cell->opt_hp, &cell->train_hp, out, e));
    for (int i = 0; i < cell->n_options; i++) {
        const ob_setting *s = cell->options[i];
        if (ob_optim_set_option(*out, s->key, s->value, e) != OB_OK) {
            ob_optim_destroy(*out);
            *out = NULL;
            return ob_err_prefix(e, "%s: ", s->origin);
        }
    }
    return OB_OK;
}

void ob_matrix_free(ob_matrix *m)
{
    free(m->cells);
    m->cells = NULL;
    m->n = 0;
}
