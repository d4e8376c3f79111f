/* harness/cellspec.c - a cell's run spec and settings texts (see cellspec.h). */
#include "harness/cellspec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/hparams.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

/* The optimizer's text settings (route rules, coeff_file), in order, as
 * ',"options":["route=...",...]' (empty when none): they are part of the
 * cell's identity, in the database and for --resume. */
static void options_json(const ob_cell *cell, char *buf, size_t n)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < cell->n_options && l + 8 < n; i++) {
        const ob_setting *o = cell->options[i];
        l += (size_t)snprintf(buf + l, n - l, "%s\"", i ? "," : ",\"options\":[");
        char kv[400];
        snprintf(kv, sizeof kv, "%s=%s", o->key, o->value);
        for (const char *p = kv; *p && l + 8 < n; p++) {
            if (*p == '"' || *p == '\\') buf[l++] = '\\';
            if ((unsigned char)*p >= 0x20) buf[l++] = *p;
        }
        if (l + 3 < n) buf[l++] = '"';
        buf[l] = '\0';
    }
    if (cell->n_options && l + 2 < n) snprintf(buf + l, n - l, "]");
}

/* The training settings' JSON. The spike guard's keys (the last of
 * ob_train_hp_defs) are left out while the guard is off, so that a run
 * without it keeps the text it had before the guard existed: resume, compare
 * and history know a run by this text. */
static void train_json(const ob_hp_values *train, char *buf, size_t n)
{
    ob_hp_values t = *train;
    int k = ob_hp_index(t.defs, t.n, "spike_z_loss");
    if (k >= 0 && ob_hp_get(train, "spike_z_loss") == 0 && ob_hp_get(train, "spike_z_grad") == 0) t.n = k;
    ob_hp_to_json(&t, buf, n);
}

void ob_cell_spec(const ob_config *c, const ob_cell *cell, const ob_device *dev, const char *devices_desc,
                  char wjson[1024], char ojson[4096], ob_run_spec *spec)
{
    char opt[1400], train[600], optj[2000];
    ob_hp_to_json(&cell->wl_hp, wjson, 1024);
    ob_hp_to_json(&cell->opt_hp, opt, sizeof opt);
    train_json(&cell->train_hp, train, sizeof train);
    opt[strlen(opt) - 1] = '\0'; /* drop '}' and merge the training settings */
    options_json(cell, optj, sizeof optj);
    /* a trial of one of several searches (studies): which one, part of the
     * run's identity (two studies may draw the same point) */
    char study[48] = "";
    if (cell->study >= 0) snprintf(study, sizeof study, ",\"search\":{\"study\":%d}", cell->study);
    snprintf(ojson, 4096, "%s,\"train\":%s%s%s}", opt, train, optj, study);
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
}

void ob_matrix_fingerprint(const ob_config *c, const ob_matrix *m, char *buf, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < m->n; i++) {
        char w[1024], o[4096], id[5400];
        ob_run_spec sp;
        ob_cell_spec(c, &m->cells[i], NULL, "", w, o, &sp);
        int k = snprintf(id, sizeof id, "%s\x1f%s\x1f%s\x1f%s\x1f%a\x1f%lld\x1f%lld\x1e", sp.workload, sp.workload_params,
                         sp.optimizer, sp.hparams, sp.lr, (long long)sp.seed, (long long)sp.steps);
        for (int j = 0; j < k && j < (int)sizeof id; j++) {
            h ^= (unsigned char)id[j];
            h *= 1099511628211ull;
        }
    }
    snprintf(buf, n, "{\"matrix\":\"%016llx\",\"cells\":%d}", (unsigned long long)h, m->n);
}
