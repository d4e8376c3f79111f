/* harness/cellspec.c - a cell's run spec and settings texts (see cellspec.h). */
#include "harness/cellspec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hparams.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

/* The optimizer's text settings (route rules, coeff_file), in order, as
 * ',"options":["route=...",...]' (empty when none): they are part of the
 * cell's identity, in the database and for --resume. Returns the text's
 * length, as snprintf (n or more: buf holds only its start). */
static size_t options_json(const ob_cell *cell, char *buf, size_t n)
{
    size_t l = 0;
#define PUT_CH(ch) ((void)(l + 1 < n ? (buf[l] = (ch), buf[l + 1] = '\0') : 0), l++)
    if (n) buf[0] = '\0';
    for (int i = 0; i < cell->n_options; i++) {
        const ob_setting *o = cell->options[i];
        for (const char *p = i ? ",\"" : ",\"options\":[\""; *p; p++) PUT_CH(*p);
        for (int part = 0; part < 3; part++)
            for (const char *p = part == 0 ? o->key : part == 1 ? "=" : o->value; *p; p++) {
                if (*p == '"' || *p == '\\') PUT_CH('\\');
                if ((unsigned char)*p >= 0x20) PUT_CH(*p);
            }
        PUT_CH('"');
    }
    if (cell->n_options) PUT_CH(']');
#undef PUT_CH
    return l;
}

/* The training settings' JSON. The spike guard's keys (the last of
 * ob_train_hp_defs) are left out while the guard is off, so that a run
 * without it keeps the text it had before the guard existed: resume, compare
 * and history know a run by this text. */
static size_t train_json(const ob_hp_values *train, char *buf, size_t n)
{
    ob_hp_values t = *train;
    int k = ob_hp_index(t.defs, t.n, "spike_z_loss");
    if (k >= 0 && ob_hp_get(train, "spike_z_loss") == 0 && ob_hp_get(train, "spike_z_grad") == 0) t.n = k;
    return ob_hp_to_json(&t, buf, n);
}

ob_status ob_cell_spec(const ob_config *c, const ob_cell *cell, const ob_device *dev, const char *devices_desc,
                       char wjson[OB_SPEC_WL_JSON], char ojson[OB_SPEC_OPT_JSON], ob_run_spec *spec, ob_err *e)
{
    char opt[OB_SPEC_HP_JSON], train[OB_SPEC_TRAIN_JSON], optj[OB_SPEC_OPT_JSON];
    /* the keys' texts: their sizes are the registry's (test_registry checks they fit) */
    if (ob_hp_to_json(&cell->wl_hp, wjson, OB_SPEC_WL_JSON) >= OB_SPEC_WL_JSON ||
        ob_hp_to_json(&cell->opt_hp, opt, sizeof opt) >= sizeof opt ||
        train_json(&cell->train_hp, train, sizeof train) >= sizeof train)
        return ob_fail(e, OB_ERR_INTERNAL, "%s on %s: the settings' JSON text is longer than this build holds",
                       cell->opt->name, cell->wl->name);
    opt[strlen(opt) - 1] = '\0'; /* drop '}' and merge the training settings */
    const size_t n_optj = options_json(cell, optj, sizeof optj);
    /* a trial of one of several searches (studies): which one, part of the
     * run's identity (two studies may draw the same point) */
    char study[48] = "";
    if (cell->study >= 0) snprintf(study, sizeof study, ",\"search\":{\"study\":%d}", cell->study);
    /* (study 0's is OB_STORE_STUDY0, which stores and merges read as a search of one study) */
    const int len = n_optj >= sizeof optj ? -1
                                          : snprintf(ojson, OB_SPEC_OPT_JSON, "%s,\"train\":%s%s%s}", opt, train, optj, study);
    if (len < 0 || len >= OB_SPEC_OPT_JSON) /* route rules and coeff_file are the user's: bad input */
        return ob_fail(e, OB_ERR_INPUT,
                       "%s's %d text settings (route rules, coeff_file; the first at %s) make its run's settings "
                       "text over the %d characters a run is stored with; give fewer or shorter route rules",
                       cell->opt->name, cell->n_options, cell->n_options ? cell->options[0]->origin : "?",
                       OB_SPEC_OPT_JSON - 1);
    *spec = (ob_run_spec){
        .cell = cell->index,
        .workload = cell->wl->name,
        .workload_params = wjson,
        .optimizer = cell->opt->name,
        .hparams = ojson,
        .lr = cell->lr,
        .seed = cell->seed,
        .backend = dev ? dev->ops->name : c->backend,
        .device = devices_desc, /* the device text of the run (ob_run_matrix) */
        .steps = c->steps,
        .workload_defaults = ob_store_defaults_text(NULL, cell->wl),
        .hparams_defaults = ob_store_defaults_text(cell->opt, NULL),
    };
    return OB_OK;
}

ob_status ob_cell_set_build(const ob_config *c, const ob_matrix *m, const ob_device *dev, const char *devices_desc,
                            ob_cell_set *set, ob_err *e)
{
    memset(set, 0, sizeof *set);
    int n = 0;
    for (int i = 0; i < m->n; i++) n += ob_config_in_shard(c, m->cells[i].index);
    const size_t cap = (size_t)n + 1; /* a shard may hold none */
    set->cells = calloc(cap, sizeof *set->cells);
    set->specs = calloc(cap, sizeof *set->specs);
    set->ids = calloc(cap, sizeof *set->ids);
    set->wjson = calloc(cap, sizeof *set->wjson);
    set->ojson = calloc(cap, sizeof *set->ojson);
    if (!set->cells || !set->specs || !set->ids || !set->wjson || !set->ojson)
        return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n);
    for (int i = 0; i < m->n; i++) {
        const ob_cell *cell = &m->cells[i];
        if (!ob_config_in_shard(c, cell->index)) continue;
        const int k = set->n;
        OB_TRY(ob_cell_spec(c, cell, dev, devices_desc, set->wjson[k], set->ojson[k], &set->specs[k], e));
        set->cells[k] = cell;
        set->n++;
    }
    return OB_OK;
}

void ob_cell_set_free(ob_cell_set *set)
{
    free(set->cells);
    free(set->specs);
    free(set->ids);
    free(set->wjson);
    free(set->ojson);
    memset(set, 0, sizeof *set);
}

ob_status ob_matrix_fingerprint(const ob_config *c, const ob_matrix *m, char *buf, size_t n, ob_err *e)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < m->n; i++) {
        char w[OB_SPEC_WL_JSON], o[OB_SPEC_OPT_JSON], id[OB_SPEC_WL_JSON + OB_SPEC_OPT_JSON + 400];
        ob_run_spec sp;
        OB_TRY(ob_cell_spec(c, &m->cells[i], NULL, "", w, o, &sp, e));
        int k = snprintf(id, sizeof id, "%s\x1f%s\x1f%s\x1f%s\x1f%a\x1f%lld\x1f%lld\x1e", sp.workload, sp.workload_params,
                         sp.optimizer, sp.hparams, sp.lr, (long long)sp.seed, (long long)sp.steps);
        for (int j = 0; j < k && j < (int)sizeof id; j++) {
            h ^= (unsigned char)id[j];
            h *= 1099511628211ull;
        }
    }
    snprintf(buf, n, "{\"matrix\":\"%016llx\",\"cells\":%d}", (unsigned long long)h, m->n);
    return OB_OK;
}
