/* harness/config_emit.c - a configuration written back as YAML (see
 * ob_config_to_yaml in config.h), through libyaml's emitter, which quotes
 * whatever a plain scalar cannot carry. */
#include "harness/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "harness/search.h"
#include "workloads/workload.h"

typedef struct sink {
    char *buf;
    size_t len, cap;
    int nomem;
} sink;

static int sink_write(void *data, unsigned char *bytes, size_t n)
{
    sink *k = data;
    if (k->len + n + 1 > k->cap) {
        size_t cap = k->cap ? k->cap : 1024;
        while (k->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(k->buf, cap);
        if (!nb) {
            k->nomem = 1;
            return 0;
        }
        k->buf = nb;
        k->cap = cap;
    }
    memcpy(k->buf + k->len, bytes, n);
    k->len += n;
    k->buf[k->len] = '\0';
    return 1;
}

typedef struct out {
    yaml_emitter_t em;
    int failed;
    char bad[201];   /* a text the emitter refused (not UTF-8), copied: it may be a caller's local buffer */
} out;

static void emit(out *o, yaml_event_t *ev, int made)
{
    if (o->failed) {
        if (made) yaml_event_delete(ev);
        return;
    }
    if (!made || !yaml_emitter_emit(&o->em, ev)) o->failed = 1;
}

static void str(out *o, const char *s)
{
    yaml_event_t ev;
    int made = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                            YAML_ANY_SCALAR_STYLE);
    if (!made && !o->failed) snprintf(o->bad, sizeof o->bad, "%s", s);
    emit(o, &ev, made);
}

static void i64(out *o, int64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)v);
    str(o, t);
}

/* The shortest text that reads back as exactly v. */
static void num(out *o, double v)
{
    char t[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if (strtod(t, NULL) == v) break;
    }
    str(o, t);
}

static void map_begin(out *o, int flow)
{
    yaml_event_t ev;
    emit(o, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                     flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

static void map_end(out *o)
{
    yaml_event_t ev;
    emit(o, &ev, yaml_mapping_end_event_initialize(&ev));
}

static void seq_begin(out *o)
{
    yaml_event_t ev;
    emit(o, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE));
}

static void seq_end(out *o)
{
    yaml_event_t ev;
    emit(o, &ev, yaml_sequence_end_event_initialize(&ev));
}

static void names(out *o, const char (*v)[64], int n)
{
    seq_begin(o);
    for (int i = 0; i < n; i++) str(o, v[i]);
    seq_end(o);
}

static void lr_list(out *o, const ob_lr_list *l)
{
    if (l->range[0]) { /* a range of the search: one scalar */
        str(o, l->range);
        return;
    }
    seq_begin(o);
    for (int i = 0; i < l->n; i++) num(o, l->v[i]);
    seq_end(o);
}

/* The comma-separated values of a sweep, one item each. */
static void sweep_values(out *o, const char *values)
{
    seq_begin(o);
    char item[sizeof ((ob_setting *)0)->value];
    for (const char *p = values;;) {
        const char *q = strchr(p, ',');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n >= sizeof item) n = sizeof item - 1;
        memcpy(item, p, n);
        item[n] = '\0';
        str(o, item);
        if (!q) break;
        p = q + 1;
    }
    seq_end(o);
}

enum owner_kind { OWN_OPTIMIZER, OWN_WORKLOAD, OWN_TRAIN };

static int owner_kind(const char *owner)
{
    if (!strcmp(owner, "train")) return OWN_TRAIN;
    return ob_workload_find(owner) ? OWN_WORKLOAD : OWN_OPTIMIZER;
}

/* The first setting of owner (of the kind sweep) at index i: it stands for
 * the owner's group, written once. */
static int first_of_owner(const ob_config *c, int i, int sweep)
{
    for (int j = 0; j < i; j++)
        if (c->settings[j].sweep == sweep && !strcmp(c->settings[j].owner, c->settings[i].owner)) return 0;
    return 1;
}

/* The settings (not swept) of one owner as a mapping; routing rules, which
 * may be several, as one list in their order. */
static void owner_settings(out *o, const ob_config *c, const char *owner)
{
    map_begin(o, 0);
    int route_done = 0;
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (s->sweep || strcmp(s->owner, owner)) continue;
        if (!strcmp(s->key, "route")) {
            if (route_done) continue;
            route_done = 1;
            str(o, "route");
            seq_begin(o);
            for (int j = i; j < c->n_settings; j++)
                if (!c->settings[j].sweep && !strcmp(c->settings[j].owner, owner) &&
                    !strcmp(c->settings[j].key, "route"))
                    str(o, c->settings[j].value);
            seq_end(o);
            continue;
        }
        str(o, s->key);
        str(o, s->value);
    }
    map_end(o);
}

/* hparams (kind OWN_OPTIMIZER) or workload_params (OWN_WORKLOAD) */
static void settings_section(out *o, const ob_config *c, int kind, const char *key)
{
    int any = 0;
    for (int i = 0; i < c->n_settings && !any; i++)
        any = !c->settings[i].sweep && owner_kind(c->settings[i].owner) == kind;
    if (!any) return;
    str(o, key);
    map_begin(o, 0);
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (s->sweep || owner_kind(s->owner) != kind || !first_of_owner(c, i, 0)) continue;
        str(o, s->owner);
        owner_settings(o, c, s->owner);
    }
    map_end(o);
}

/* lrs: the global list alone, else each optimizer's (its own or the global one; none: its default lr). */
static void lrs_section(out *o, const ob_config *c)
{
    int per_opt = 0, global = 0;
    for (int i = 0; i < c->n_lr_lists; i++) {
        if (c->lrs[i].optimizer[0]) per_opt = 1;
        else global = 1;
    }
    if (global && !per_opt) {
        str(o, "lrs");
        lr_list(o, ob_config_lrs_for(c, ""));
    } else if (per_opt) {
        int any = 0;
        for (int k = 0; k < c->n_optimizers && !any; k++) any = ob_config_lrs_for(c, c->optimizers[k]) != NULL;
        if (!any) return;
        str(o, "lrs");
        map_begin(o, 0);
        for (int k = 0; k < c->n_optimizers; k++) {
            const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[k]);
            if (!l) continue;
            str(o, c->optimizers[k]);
            lr_list(o, l);
        }
        map_end(o);
    }
}

/* What each run is: seeds, steps, eval_every, the confirmation and the backend. */
static void runs_section(out *o, const ob_config *c)
{
    if (c->n_seeds > 0) {
        str(o, "seeds");
        seq_begin(o);
        for (int i = 0; i < c->n_seeds; i++) i64(o, c->seeds[i]);
        seq_end(o);
    }
    str(o, "steps");
    i64(o, c->steps);
    str(o, "eval_every");
    i64(o, c->eval_every);
    if (c->confirm_seeds > 0) {
        str(o, "confirm_seeds");
        i64(o, c->confirm_seeds);
    }
    if (c->confirm_best) {
        str(o, "confirm_configs");
        str(o, "best");
    }
    str(o, "backend");
    str(o, c->backend);
}

/* train: the training settings (not swept), when there are any. */
static void train_section(out *o, const ob_config *c)
{
    int any_train = 0;
    for (int i = 0; i < c->n_settings; i++) any_train |= !c->settings[i].sweep && !strcmp(c->settings[i].owner, "train");
    if (!any_train) return;
    str(o, "train");
    owner_settings(o, c, "train");
}

/* The swept settings of the owner of setting i (its first) as a mapping. */
static void owner_sweeps(out *o, const ob_config *c, int i)
{
    const ob_setting *s = &c->settings[i];
    map_begin(o, 0);
    for (int j = i; j < c->n_settings; j++) {
        if (!c->settings[j].sweep || strcmp(c->settings[j].owner, s->owner)) continue;
        str(o, c->settings[j].key);
        if (strchr(c->settings[j].value, ',') || !strstr(c->settings[j].value, ".."))
            sweep_values(o, c->settings[j].value);
        else str(o, c->settings[j].value); /* a range: one scalar */
    }
    map_end(o);
}

/* sweep: every owner's swept settings, when there are any. */
static void sweep_section(out *o, const ob_config *c)
{
    int any_sweep = 0;
    for (int i = 0; i < c->n_settings; i++) any_sweep |= c->settings[i].sweep;
    if (!any_sweep) return;
    str(o, "sweep");
    map_begin(o, 0);
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (!s->sweep || !first_of_owner(c, i, 1)) continue;
        str(o, s->owner);
        owner_sweeps(o, c, i);
    }
    map_end(o);
}

/* The search: trials, search_seed, search_draws and studies, each when set. */
static void search_section(out *o, const ob_config *c)
{
    if (c->trials > 0) {
        str(o, "trials");
        i64(o, c->trials);
    }
    if (c->search_seed != 0) {
        str(o, "search_seed");
        i64(o, c->search_seed);
    }
    if (c->trials > 0) {
        /* always, so that a stored search says which draws it took (a text
         * without it is an earlier build's, of draws 1) */
        str(o, "search_draws");
        i64(o, c->search_draws > 0 ? c->search_draws : OB_SEARCH_DRAWS);
    }
    if (c->studies > 1) {
        str(o, "studies");
        i64(o, c->studies);
    }
}

/* exclude: the optimizers left out of each workload, when there are any. */
static void exclude_section(out *o, const ob_config *c)
{
    if (c->n_excludes <= 0) return;
    str(o, "exclude");
    map_begin(o, 0);
    for (int i = 0; i < c->n_excludes; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++) first = strcmp(c->excludes[j].workload, c->excludes[i].workload) != 0;
        if (!first) continue;
        str(o, c->excludes[i].workload);
        seq_begin(o);
        for (int j = i; j < c->n_excludes; j++)
            if (!strcmp(c->excludes[j].workload, c->excludes[i].workload)) str(o, c->excludes[j].optimizer);
        seq_end(o);
    }
    map_end(o);
}

static void emit_config(out *o, const ob_config *c)
{
    yaml_event_t ev;
    emit(o, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    emit(o, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
    map_begin(o, 0);
    str(o, "name");
    str(o, c->name);
    str(o, "workloads");
    names(o, c->workloads, c->n_workloads);
    str(o, "optimizers");
    names(o, c->optimizers, c->n_optimizers);
    lrs_section(o, c);
    runs_section(o, c);
    settings_section(o, c, OWN_OPTIMIZER, "hparams");
    settings_section(o, c, OWN_WORKLOAD, "workload_params");
    train_section(o, c);
    sweep_section(o, c);
    search_section(o, c);
    exclude_section(o, c);
    str(o, "checkpoint_every");
    i64(o, c->checkpoint_every);
    str(o, "checkpoint_keep");
    i64(o, c->checkpoint_keep);
    if (c->data_parallel > 1) {
        str(o, "data_parallel");
        i64(o, c->data_parallel);
    }
    map_end(o);
    emit(o, &ev, yaml_document_end_event_initialize(&ev, 1));
    emit(o, &ev, yaml_stream_end_event_initialize(&ev));
}

ob_status ob_config_to_yaml(const ob_config *c, char **text, ob_err *e)
{
    *text = NULL;
    sink k = {0};
    static const char head[] = OB_CONFIG_HEAD " (config file and flags)\n";
    sink_write(&k, (unsigned char *)head, sizeof head - 1);
    out o;
    memset(&o, 0, sizeof o);
    if (!yaml_emitter_initialize(&o.em)) {
        free(k.buf);
        return ob_fail(e, OB_ERR_NOMEM, "cannot initialise the YAML emitter");
    }
    yaml_emitter_set_output(&o.em, sink_write, &k);
    yaml_emitter_set_unicode(&o.em, 1);
    yaml_emitter_set_width(&o.em, 100);
    emit_config(&o, c);
    int failed = o.failed || k.nomem;
    const char *why = o.em.problem;
    ob_status s = OB_OK;
    if (failed && k.nomem)
        s = ob_fail(e, OB_ERR_NOMEM, "out of memory writing the configuration");
    else if (failed && o.bad[0])
        s = ob_fail(e, OB_ERR_INPUT, "the configuration cannot be written as YAML: '%s' is not UTF-8 text", o.bad);
    else if (failed)
        s = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "writing the configuration as YAML: %s", why ? why : "emitter error");
    yaml_emitter_delete(&o.em);
    if (s != OB_OK) {
        free(k.buf);
        return s;
    }
    if (k.len && k.buf[k.len - 1] != '\n') sink_write(&k, (unsigned char *)"\n", 1);
    if (k.nomem) {
        free(k.buf);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory writing the configuration");
    }
    *text = k.buf;
    return OB_OK;
}

/* A setting of a text ob_config_to_yaml wrote (0 eval_every, 1
 * confirm_seeds); -1 for any other text or none. */
static int64_t text_setting(const char *text, int which)
{
    if (!text || strncmp(text, OB_CONFIG_HEAD, strlen(OB_CONFIG_HEAD)) != 0) return -1;
    ob_config *c = malloc(sizeof *c);
    if (!c) return -1;
    int64_t v = -1;
    ob_err e;
    ob_err_clear(&e);
    ob_config_init(c);
    if (ob_config_load_text(c, text, "stored configuration", &e) == OB_OK) v = which ? c->confirm_seeds : c->eval_every;
    ob_config_free(c);
    free(c);
    return v;
}

int64_t ob_config_text_eval_every(const char *text)
{
    return text_setting(text, 0);
}

int64_t ob_config_text_confirm_seeds(const char *text)
{
    return text_setting(text, 1);
}
