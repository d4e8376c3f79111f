/* optimizers/pipeline.c - routing, statistics, guard and fused update: the
 * step every optimizer runs through (see optim.h), the matrix groups of Muon
 * and ROOT, and the non-finite guard's rollback snapshots. */
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
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
    {"schedule", OB_HP_ENUM, 0, 0, 4, 0, 0, "constant|warmup|cosine|warmup_cosine|wsd",
     "learning-rate schedule (wsd: warmup, stable, linear decay)"},
    {"warmup_steps", OB_HP_INT, 0, 0, 1e12, 0, 0, NULL,
     "steps of linear warmup from lr/warmup_steps to lr (warmup, warmup_cosine, wsd)"},
    {"min_lr", OB_HP_FLOAT, 0.0, 0.0, INFINITY, 0, 0, NULL,
     "learning rate the decay ends at (cosine, warmup_cosine, wsd)"},
    {"decay_frac", OB_HP_FLOAT, 0.2, 0.0, 1.0, 0, 0, NULL,
     "fraction of the run spent in wsd's final linear decay"},
    {"on_nonfinite", OB_HP_ENUM, 0, 0, 3, 0, 0, "skip|rollback|stop|none",
     "a step with a non-finite gradient or loss: skip it, restore the last good snapshot, end the run as diverged, "
     "or (none) apply it as torch.optim does and end the run as diverged"},
    {"snapshot_every", OB_HP_INT, 100, 1, 1e12, 0, 0, NULL,
     "on_nonfinite=rollback: steps between snapshots of parameters and optimizer state"},
    /* the spike guard: these keys stay last (a run's hparams leave them out
     * while the guard is off, see train_json in harness/run.c) */
    {"spike_z_loss", OB_HP_FLOAT, 0.0, 0.0, INFINITY, 0, 0, NULL,
     "skip a step whose loss is more than this many standard deviations above the mean of the last "
     "spike_window finite steps' losses (llm.c's outlier detector; 0: off)"},
    {"spike_z_grad", OB_HP_FLOAT, 0.0, 0.0, INFINITY, 0, 0, NULL,
     "the same for the gradient norm (before clipping; 0: off)"},
    {"spike_window", OB_HP_INT, 128, 2, OB_SPIKE_WINDOW_MAX, 0, 0, NULL,
     "finite steps the spike scores compare against; none is scored before the window is full"},
};
const int ob_train_hp_count = (int)(sizeof ob_train_hp_defs / sizeof ob_train_hp_defs[0]);


/* Workspace of a matrix group: matrices per batch are capped so that one batch
 * holds at most this many floats (unless a single matrix is larger). */
#define WS_BATCH_FLOATS ((int64_t)1 << 24)

static const ob_optimizer_def *const registry[] = {
    &ob_opt_sgd, &ob_opt_adam, &ob_opt_adamw, &ob_opt_nadam, &ob_opt_radam, &ob_opt_adamax,
    &ob_opt_adagrad, &ob_opt_adadelta, &ob_opt_rmsprop, &ob_opt_lion, &ob_opt_muon, &ob_opt_root,
    &ob_opt_adamw_sf, &ob_opt_sgd_sf, &ob_opt_soap, &ob_opt_adafactor, &ob_opt_rprop, &ob_opt_asgd,
    &ob_opt_lamb, &ob_opt_lars, &ob_opt_ademamix, &ob_opt_adabelief,
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

size_t ob_optimizer_defaults_json(const ob_optimizer_def *d, char *buf, size_t n)
{
    ob_hp_values hv, t;
    ob_hp_defaults(&hv, d->hp, d->n_hp);
    for (int i = 0; i < d->n_absent; i++) { /* what the builds before such a key did */
        const int k = ob_hp_index(d->hp, d->n_hp, d->absent[i].key);
        if (k >= 0) hv.v[k] = d->absent[i].value;
    }
    ob_hp_defaults(&t, ob_train_hp_defs, ob_train_hp_count);
    char tj[1024];
    const size_t lt = ob_hp_to_json(&t, tj, sizeof tj), l = ob_hp_to_json(&hv, buf, n);
    if (lt >= sizeof tj || l >= n) return l + lt + 10; /* too long: buf holds only a start */
    /* {...} + ,"train":{...} : the last '}' makes way for the training settings */
    const int k = snprintf(buf + l - 1, n - (l - 1), "%s\"train\":%s}", l > 2 ? "," : "", tj);
    return l - 1 + (size_t)k;
}

ob_status ob_optimizer_unknown(const char *name, ob_err *e)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    const char *names[64];
    for (int i = 0; i < n && i < 64; i++) names[i] = all[i]->name;
    return ob_fail_unknown(e, "optimizer", name, names, n < 64 ? n : 64);
}

double ob_optim_hp(const ob_optim *o, const char *name)
{
    return ob_hp_get(&o->hp, name);
}

void ob_optim_beta_rule(const ob_optim *o, int kind, ob_rule *r)
{
    *r = (ob_rule){0};
    r->kind = kind;
    ob_rule_betas(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->decoupled_wd = ob_hp_index(o->hp.defs, o->hp.n, "decoupled_weight_decay") >= 0 &&
                      ob_optim_hp(o, "decoupled_weight_decay") != 0;
    r->n_state = 2;
}

double ob_optim_train_hp(const ob_optim *o, const char *name)
{
    return ob_hp_get(&o->train, name);
}

void ob_optim_event(ob_optim *o, int64_t step, const char *kind, const char *fmt, ...)
{
    if (o->n_events == OB_OPTIM_MAX_EVENTS) { /* nobody pops: keep the newest */
        memmove(&o->events[0], &o->events[1], (OB_OPTIM_MAX_EVENTS - 1) * sizeof o->events[0]);
        o->n_events--;
    }
    ob_queued_event *ev = &o->events[o->n_events++];
    ev->step = step;
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev->detail, sizeof ev->detail, fmt, ap);
    va_end(ap);
}

/* ---- groups and routing -------------------------------------------------- */

static int n_group_names(const ob_optimizer_def *d)
{
    int n = 0;
    if (!d->groups) return 1;
    while (d->groups[n]) n++;
    return n;
}

static const char *group_name(const ob_optimizer_def *d, int g)
{
    if (!d->groups) return g == 0 ? d->name : "?";
    return g < n_group_names(d) ? d->groups[g] : "?";
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    size_t k = 0;
    while (s[k] == ' ' || s[k] == '\t') k++;
    memmove(s, s + k, n - k + 1);
}

static ob_status parse_route(const ob_optimizer_def *d, const char *text, ob_route_rule *r, ob_err *e)
{
    memset(r, 0, sizeof *r);
    snprintf(r->text, sizeof r->text, "%s", text);
    const char *arrow = strstr(text, "->");
    if (strlen(text) >= sizeof r->text)
        return ob_fail(e, OB_ERR_INPUT, "%s: route '%s' is %zu characters long, more than the %zu a rule holds; "
                       "shorten it (a name pattern with * matches several names)", d->name, text, strlen(text),
                       sizeof r->text - 1);
    if (!arrow)
        return ob_fail(e, OB_ERR_INPUT, "%s: route '%s' is not of the form 'MATCH -> GROUP' "
                       "(e.g. 'tag=embedding -> adamw')", d->name, text);
    char match[160], target[64];
    snprintf(match, sizeof match, "%.*s", (int)(arrow - text), text);
    snprintf(target, sizeof target, "%s", arrow + 2);
    trim(match);
    trim(target);
    r->group = -1;
    if (!strcmp(target, "main")) r->group = 0;
    for (int g = 0; g < n_group_names(d) && r->group < 0; g++)
        if (!strcmp(target, group_name(d, g))) r->group = g;
    if (r->group < 0) {
        /* as `optbench list` names them; "main" is the first group's other name */
        char names[160] = "";
        for (int g = 0; g < n_group_names(d); g++) {
            if (g) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, group_name(d, g), sizeof names - strlen(names) - 1);
            if (!g) strncat(names, " (or 'main')", sizeof names - strlen(names) - 1);
        }
        return ob_fail(e, OB_ERR_INPUT, "%s: route '%s': no group '%s' (groups: %s)", d->name, text, target,
                       names);
    }
    if (!strcmp(match, "*")) return OB_OK;
    char *save = NULL;
    for (char *term = strtok_r(match, " \t&,", &save); term; term = strtok_r(NULL, " \t&,", &save)) {
        char *eq = strchr(term, '=');
        if (!eq)
            return ob_fail(e, OB_ERR_INPUT, "%s: route '%s': term '%s' is not key=value (keys: tag, ndim, name)",
                           d->name, text, term);
        *eq = '\0';
        const char *key = term, *val = eq + 1;
        if (!strcmp(key, "name")) {
            if (strlen(val) >= sizeof r->pattern)
                return ob_fail(e, OB_ERR_INPUT, "%s: route '%s': pattern too long", d->name, text);
            strcpy(r->pattern, val);
            continue;
        }
        int is_tag = !strcmp(key, "tag"), is_ndim = !strcmp(key, "ndim");
        if (!is_tag && !is_ndim)
            return ob_fail(e, OB_ERR_INPUT, "%s: route '%s': unknown key '%s' (keys: tag, ndim, name)", d->name,
                           text, key);
        char vals[128];
        snprintf(vals, sizeof vals, "%s", val);
        char *s2 = NULL;
        for (char *v = strtok_r(vals, "|", &s2); v; v = strtok_r(NULL, "|", &s2)) {
            if (is_tag) {
                int t = ob_tag_parse(v);
                if (t < 0) {
                    char known[128] = "";
                    for (int k = 0; k < OB_TAG_COUNT; k++) {
                        if (k) strncat(known, ", ", sizeof known - strlen(known) - 1);
                        strncat(known, ob_tag_name((ob_tag)k), sizeof known - strlen(known) - 1);
                    }
                    return ob_fail(e, OB_ERR_INPUT, "%s: route '%s': unknown tag '%s' (tags: %s)", d->name, text,
                                   v, known);
                }
                r->tags |= 1u << t;
            } else {
                double nd;
                if (ob_parse_double(v, &nd) != 0 || nd != floor(nd) || nd < 1 || nd > OB_MAX_DIMS)
                    return ob_fail(e, OB_ERR_INPUT, "%s: route '%s': ndim '%s' is not in 1..%d", d->name, text, v,
                                   OB_MAX_DIMS);
                r->ndims |= 1u << (int)nd;
            }
        }
    }
    return OB_OK;
}

static int route_matches(const ob_route_rule *r, const ob_tensor *t)
{
    if (r->tags && !(r->tags & (1u << t->tag))) return 0;
    if (r->ndims && !(r->ndims & (1u << t->ndim))) return 0;
    if (r->pattern[0] && fnmatch(r->pattern, t->name, 0) != 0) return 0;
    return 1;
}

int ob_optim_n_routes(const ob_optim *o) { return o->n_routes; }

int ob_optim_group_takes_lr(const ob_optim *o, int g)
{
    return o->def->group_takes_lr ? o->def->group_takes_lr(o, g) : g == 0;
}

int ob_optim_route_matches_any(const ob_optim *o, int k, const ob_layout *l)
{
    if (k < 0 || k >= o->n_routes) return 0;
    for (int i = 0; i < l->n; i++)
        if (route_matches(&o->routes[k], &l->t[i])) return 1;
    return 0;
}

ob_status ob_optim_add_route(ob_optim *o, const char *rule, ob_err *e)
{
    if (o->n_routes == OB_MAX_ROUTES)
        return ob_fail(e, OB_ERR_INPUT, "%s: at most %d routing rules", o->def->name, OB_MAX_ROUTES);
    OB_TRY(parse_route(o->def, rule, &o->routes[o->n_routes], e));
    o->n_routes++;
    return OB_OK;
}

int ob_optim_is_option(const ob_optimizer_def *d, const char *key)
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

ob_status ob_optim_hp_set(const ob_optimizer_def *d, ob_hp_values *hv, const char *key, const char *text,
                          ob_err *e)
{
    char keys[160];
    snprintf(keys, sizeof keys, "route%s%s", d->options ? "," : "", d->options ? d->options : "");
    return ob_hp_set_named(hv, d->name, key, text, keys, e);
}

ob_status ob_optim_set_option(ob_optim *o, const char *key, const char *value, ob_err *e)
{
    if (!strcmp(key, "route")) return ob_optim_add_route(o, value, e); /* its messages name "muon: route" */
    if (o->def->set_option && ob_optim_is_option(o->def, key)) {
        ob_status st = o->def->set_option(o, key, value, e);
        /* name the setting unless the message does */
        size_t ol = strlen(o->def->name);
        if (st != OB_OK && (strncmp(e->msg, o->def->name, ol) ||
                            (e->msg[ol] != ':' && e->msg[ol] != ' ' && e->msg[ol] != '.')))
            ob_err_prefix(e, "%s.%s: ", o->def->name, key);
        return st;
    }
    return ob_fail(e, OB_ERR_INPUT, "%s has no text setting '%s' (it has: route%s%s)", o->def->name, key,
                   o->def->options ? ", " : "", o->def->options ? o->def->options : "");
}

static int group_plan(const ob_optim *o, int g, ob_matrix_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    return o->def->group_matrix ? o->def->group_matrix(o, g, plan) : 0;
}

static void tensor_desc(const ob_tensor *t, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "'%s' (tag %s, shape ", t->name, ob_tag_name(t->tag));
    for (int d = 0; d < t->ndim && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
    if (len < n) snprintf(buf + len, n - len, ")");
}

ob_status ob_optim_route(ob_optim *o, ob_layout *l, ob_err *e)
{
    const ob_optimizer_def *d = o->def;
    ob_route_rule defaults[16];
    int n_def = 0;
    int explicit_only = ob_hp_index(o->hp.defs, o->hp.n, "routing") >= 0 && ob_optim_hp(o, "routing") != 0;
    if (!explicit_only) {
        static const char *const everything[] = {"* -> main", NULL};
        const char *const *dr = d->default_routes ? d->default_routes : everything;
        for (; *dr && n_def < 16; dr++) OB_TRY(parse_route(d, *dr, &defaults[n_def++], e));
    }
    for (int i = 0; i < l->n; i++) {
        ob_tensor *t = &l->t[i];
        t->group = -1;
        for (int k = 0; k < o->n_routes && t->group < 0; k++)
            if (route_matches(&o->routes[k], t)) t->group = o->routes[k].group;
        for (int k = 0; k < n_def && t->group < 0; k++)
            if (route_matches(&defaults[k], t)) t->group = defaults[k].group;
        char desc[160];
        tensor_desc(t, desc, sizeof desc);
        if (t->group < 0)
            return ob_fail(e, OB_ERR_INPUT,
                           "%s: parameter %s matches no routing rule%s; add one, e.g. route 'name=%s -> %s'",
                           d->name, desc, explicit_only ? " (routing = explicit)" : "", t->name,
                           group_name(d, n_group_names(d) - 1));
        ob_matrix_plan plan;
        if (group_plan(o, t->group, &plan) && t->ndim != 2 && t->ndim != 4)
            return ob_fail(e, OB_ERR_INPUT,
                           "%s: parameter %s is routed to the matrix group '%s', which updates 2-D matrices "
                           "(and 4-D conv kernels) only; route it elsewhere, e.g. 'name=%s -> %s'",
                           d->name, desc, group_name(d, t->group), t->name,
                           group_name(d, n_group_names(d) - 1));
    }
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
        int count = 0;
        for (int i = 0; i < l->n; i++) count += l->t[i].group == g;
        if (!count) continue;
        ob_matrix_plan plan;
        int mat = group_plan(o, g, &plan);
        len += (size_t)snprintf(buf + len, n - len, "    group %d (%s%s):", g, group_name(o->def, g),
                                mat ? ", Newton-Schulz on matrices" : "");
        for (int i = 0; i < l->n && len < n; i++) {
            if (l->t[i].group != g) continue;
            char shape[64] = "";
            size_t sl = 0;
            for (int d = 0; d < l->t[i].ndim; d++)
                sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%s%lld", d ? "x" : "",
                                       (long long)l->t[i].shape[d]);
            /* filter_bias_and_bn takes the decay of such a tensor in any group but a matrix group */
            const int nd = !mat && ob_optim_filters_decay(o) && ob_no_decay_tensor(&l->t[i]);
            len += (size_t)snprintf(buf + len, n - len, " %s[%s %s%s]", l->t[i].name, shape,
                                    ob_tag_name(l->t[i].tag), nd ? ", no decay" : "");
        }
        if (len < n) len += (size_t)snprintf(buf + len, n - len, "\n");
    }
}

/* ---- creation and setup --------------------------------------------------- */

ob_status ob_optim_create(const ob_optimizer_def *d, const ob_hp_values *hp,
                          const ob_hp_values *train, ob_optim **out, ob_err *e)
{
    *out = NULL;
    OB_TRY(ob_schedule_check(train, ob_hp_get(hp, "lr"), e));
    ob_optim *o = calloc(1, sizeof *o);
    if (!o) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    o->def = d;
    o->hp = *hp;
    o->train = *train;
    o->guard_mode = (int)ob_hp_get(train, "on_nonfinite");
    o->snap_t = -1;
    if (d->host_state_bytes && !(o->host = calloc(1, d->host_state_bytes))) {
        free(o);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    *out = o;
    return OB_OK;
}

/* Bucket the tensors of matrix group g by matrix shape, in layout order. */
static ob_status build_buckets(ob_optim *o, int g, const ob_layout *l, int64_t *ws_x, int64_t *ws_s,
                               int *ws_count, ob_err *e)
{
    ob_group *gr = &o->group[g];
    int n = 0;
    for (int i = 0; i < l->n; i++) n += l->t[i].group == g;
    gr->members = malloc((size_t)(n ? n : 1) * sizeof *gr->members);
    gr->buckets = malloc((size_t)(n ? n : 1) * sizeof *gr->buckets);
    unsigned char *done = calloc((size_t)l->n + 1, 1);
    if (!gr->members || !gr->buckets || !done) {
        free(done);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    int m = 0;
    gr->n_buckets = 0;
    for (int i = 0; i < l->n; i++) {
        if (l->t[i].group != g || done[i]) continue;
        int64_t rows, cols;
        ob_tensor_matrix_dims(&l->t[i], &rows, &cols);
        int64_t sx = ob_ns_stride(rows * cols);
        int64_t dmin = rows < cols ? rows : cols, dmax = rows < cols ? cols : rows;
        int64_t ss = ob_ns_stride(dmin * dmin);
        int64_t cap64 = ob_batch_budget(o->dev, sx, WS_BATCH_FLOATS) / sx;
        /* at most 65535 matrices (a CUDA grid's y dimension in the batched ops) */
        int cap = (int)(cap64 < 1 ? 1 : cap64 > 65535 ? 65535 : cap64), same = 0;
        for (int j = i; j < l->n; j++) {
            int64_t r2, c2;
            if (l->t[j].group != g || done[j]) continue;
            ob_tensor_matrix_dims(&l->t[j], &r2, &c2);
            same += r2 == rows && c2 == cols;
        }
        cap = ob_balanced_cap(same, cap);
        ob_bucket *b = NULL;
        for (int j = i; j < l->n; j++) {
            int64_t r2, c2;
            if (l->t[j].group != g || done[j]) continue;
            ob_tensor_matrix_dims(&l->t[j], &r2, &c2);
            if (r2 != rows || c2 != cols) continue;
            if (!b || b->count == cap) {
                b = &gr->buckets[gr->n_buckets++];
                memset(b, 0, sizeof *b);
                b->rows = rows;
                b->cols = cols;
                b->first = m;
                b->n_abc = gr->plan.coeffs(o, dmin, dmax, b->abc);
                switch (gr->plan.lr_adjust) {
                case OB_LR_ADJUST_ORIGINAL: b->lr_scale = (float)sqrt(fmax(1.0, (double)rows / (double)cols)); break;
                case OB_LR_ADJUST_MATCH_RMS: b->lr_scale = (float)(0.2 * sqrt((double)dmax)); break;
                default: b->lr_scale = 1.0f; break;
                }
            }
            gr->members[m++] = j;
            b->count++;
            done[j] = 1;
            if ((int64_t)b->count * sx > *ws_x) *ws_x = (int64_t)b->count * sx;
            if ((int64_t)b->count * ss > *ws_s) *ws_s = (int64_t)b->count * ss;
            if (b->count > *ws_count) *ws_count = b->count;
        }
    }
    free(done);
    return OB_OK;
}

ob_status ob_optim_check(const ob_optim *o, ob_err *e)
{
    int n = 0;
    while (o->def->groups && o->def->groups[n]) n++;
    for (int g = 0; g < (n ? n : 1); g++) {
        ob_rule r;
        OB_TRY(o->def->group_rule(o, g, &r, e));
    }
    return OB_OK;
}

typedef struct {
    int64_t offset;
    int no_decay;
} tensor_mark;

static int mark_by_offset(const void *a, const void *b)
{
    const tensor_mark *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* filter_bias_and_bn in elementwise group g: its tensors in arena order,
 * neighbours of one kind merged into a span, the bounds uploaded for
 * elementwise_step_spans. Nothing when the group has no weight decay to
 * take, or when every tensor keeps it. */
static ob_status decay_spans(ob_optim *o, int g, const ob_layout *l, ob_err *e)
{
    ob_group *gr = &o->group[g];
    if (!ob_optim_filters_decay(o) || gr->rule.weight_decay == 0.0f) return OB_OK;
    tensor_mark *t = malloc((size_t)(l->n ? l->n : 1) * sizeof *t);
    int64_t *bound = malloc((size_t)(l->n + 1) * sizeof *bound);
    ob_status st = OB_OK;
    if (!t || !bound) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        goto out;
    }
    int n = 0, any = 0;
    for (int i = 0; i < l->n; i++)
        if (l->t[i].group == g) {
            t[n++] = (tensor_mark){l->t[i].offset, ob_no_decay_tensor(&l->t[i])};
            any |= t[n - 1].no_decay;
        }
    if (!any) goto out;
    qsort(t, (size_t)n, sizeof *t, mark_by_offset);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || t[i - 1].no_decay != t[i].no_decay) bound[m++] = i == 0 ? 0 : t[i].offset - gr->begin;
    bound[m] = gr->end - gr->begin;
    gr->n_span = m;
    gr->span_nd0 = t[0].no_decay;
    st = OB_REQUIRE(o->dev, elementwise_step_spans, e);
    if (st == OB_OK) st = ob_dev_alloc(o->dev, (size_t)(m + 1) * sizeof *bound, (void **)&gr->span_bound, e);
    if (st == OB_OK) st = o->dev->ops->upload(o->dev, gr->span_bound, bound, (size_t)(m + 1) * sizeof *bound, e);
out:
    free(t);
    free(bound);
    return st;
}

ob_status ob_optim_setup(ob_optim *o, ob_device *dev, const ob_layout *l, ob_err *e)
{
    o->dev = dev;
    o->layout = l;
    o->n_groups = l->n_groups;
    o->state_bytes = 0;
    OB_TRY(ob_dev_alloc(dev, sizeof(ob_step_stats), (void **)&o->stats_dev, e));
    const double z_loss = ob_optim_train_hp(o, "spike_z_loss"), z_grad = ob_optim_train_hp(o, "spike_z_grad");
    if (z_loss > 0 || z_grad > 0) {
        ob_spike *sp = calloc(1, sizeof *sp);
        if (!sp) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        sp->window = (int32_t)ob_optim_train_hp(o, "spike_window");
        sp->z_loss = (float)z_loss;
        sp->z_grad = (float)z_grad;
        ob_status s = ob_dev_alloc(dev, sizeof *sp, (void **)&o->spike_dev, e);
        if (s == OB_OK) s = dev->ops->upload(dev, o->spike_dev, sp, sizeof *sp, e);
        free(sp);
        OB_TRY(s);
    }
    int64_t ws_x = 0, ws_s = 0;
    int ws_count = 0, need_thr = 0;
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        gr->begin = l->group_begin[g];
        gr->end = l->group_end[g];
        OB_TRY(o->def->group_rule(o, g, &gr->rule, e));
        gr->is_matrix = group_plan(o, g, &gr->plan);
        int64_t n = gr->end - gr->begin;
        if (n == 0) continue; /* a group no parameter was routed to */
        size_t bytes = (size_t)n * sizeof(float);
        for (int k = 0; k < gr->rule.n_state; k++) {
            OB_TRY(ob_dev_alloc(dev, bytes, (void **)&gr->state[k], e));
            if (gr->rule.state_init[k] != 0.0f)
                OB_TRY(dev->ops->fill(dev, gr->state[k], gr->rule.state_init[k], n, e));
            o->state_bytes += bytes;
        }
        OB_TRY(ob_dev_alloc(dev, sizeof(ob_rule_step), (void **)&gr->step_dev, e));
        if (o->def->custom_setup) {
            OB_TRY(o->def->custom_setup(o, g, &gr->is_custom, e));
            o->state_bytes += (size_t)gr->aux_floats * sizeof(float);
        }
        if (gr->is_matrix) {
            OB_TRY(OB_REQUIRE(dev, batched_normalize, e));
            if (gr->plan.ns_bf16) {
                OB_TRY(OB_REQUIRE(dev, gemm_sb_bf16, e));
                OB_TRY(OB_REQUIRE(dev, round_bf16, e));
            }
            if (gr->plan.quantile > 0) {
                OB_TRY(OB_REQUIRE(dev, abs_quantile, e));
                OB_TRY(OB_REQUIRE(dev, clamp_abs, e));
                need_thr = 1;
            }
            OB_TRY(build_buckets(o, g, l, &ws_x, &ws_s, &ws_count, e));
        } else if (!gr->is_custom) {
            OB_TRY(decay_spans(o, g, l, e));
        }
    }
    if (ws_x > 0) {
        OB_TRY(ob_dev_alloc(dev, (size_t)ws_x * sizeof(float), (void **)&o->ws_x, e));
        OB_TRY(ob_dev_alloc(dev, (size_t)ws_x * sizeof(float), (void **)&o->ws_x2, e));
        OB_TRY(ob_dev_alloc(dev, (size_t)ws_s * sizeof(float), (void **)&o->ws_a, e));
        OB_TRY(ob_dev_alloc(dev, (size_t)ws_s * sizeof(float), (void **)&o->ws_b, e));
        if (need_thr) OB_TRY(ob_dev_alloc(dev, (size_t)ws_count * sizeof(float), (void **)&o->ws_thr, e));
    }
    if (o->guard_mode == OB_GUARD_ROLLBACK) {
        OB_TRY(ob_dev_alloc(dev, (size_t)l->total * sizeof(float), (void **)&o->snap_params, e));
        if (o->spike_dev) OB_TRY(ob_dev_alloc(dev, sizeof(ob_spike), (void **)&o->snap_spike, e));
        if (o->host && !o->snap_host && !(o->snap_host = calloc(1, o->def->host_state_bytes)))
            return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        for (int g = 0; g < o->n_groups; g++) {
            ob_group *gr = &o->group[g];
            for (int k = 0; k < gr->rule.n_state && gr->end > gr->begin; k++)
                OB_TRY(ob_dev_alloc(dev, (size_t)(gr->end - gr->begin) * sizeof(float),
                                    (void **)&o->snap_state[g][k], e));
            if (gr->aux_floats > 0)
                OB_TRY(ob_dev_alloc(dev, (size_t)gr->aux_floats * sizeof(float), (void **)&gr->snap_aux, e));
        }
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
    if (o->n_events == 0) return 0;
    const ob_queued_event *ev = &o->events[0];
    *step = ev->step;
    snprintf(kind, kind_n, "%s", ev->kind);
    snprintf(detail, detail_n, "%s", ev->detail);
    memmove(&o->events[0], &o->events[1], (size_t)(o->n_events - 1) * sizeof o->events[0]);
    o->n_events--;
    return 1;
}

int ob_optim_stopped(const ob_optim *o, int64_t *step, char *why, size_t why_n)
{
    if (!o->stopped) return 0;
    if (step) *step = o->stopped_step;
    if (why) snprintf(why, why_n, "%s", o->stopped_why);
    return 1;
}

double ob_optim_lr(const ob_optim *o, int64_t t)
{
    return ob_schedule_lr(&o->train, ob_optim_hp(o, "lr"), t, o->total_steps);
}

double ob_optim_lr_in_effect(const ob_optim *o, int64_t t)
{
    return ob_optim_lr(o, t) * (o->def->lr_factor ? o->def->lr_factor(o, t) : 1.0);
}

/* ---- the step ------------------------------------------------------------- */

ob_status ob_optim_ew_batch(ob_optim *o, const ob_rule_step *step, const ob_rule *r, float *p, const float *g,
                            float *const *s, int64_t n, int64_t count, const int64_t *stride, ob_err *e)
{
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    if (ops->elementwise_step_batch)
        return ops->elementwise_step_batch(dev, r, step, o->stats_dev, p, g, s, n, count, stride, e);
    for (int64_t b = 0; b < count; b++) {
        float *sb[OB_RULE_MAX_STATE] = {0};
        for (int k = 0; k < r->n_state && k < OB_RULE_MAX_STATE; k++) sb[k] = s[k] ? s[k] + b * stride[2 + k] : NULL;
        OB_TRY(ops->elementwise_step(dev, r, step + b * stride[OB_BATCH_STEP], o->stats_dev, p + b * stride[0],
                                     g + b * stride[1], sb, n, e));
    }
    return OB_OK;
}

int ob_balanced_cap(int total, int cap)
{
    if (cap < 1 || total <= cap) return cap < 1 ? 1 : cap;
    const int batches = (total + cap - 1) / cap;
    return (total + batches - 1) / batches;
}

int64_t ob_batch_budget(const ob_device *dev, int64_t item_floats, int64_t limit)
{
    if (!dev->ops->batch_floats) return limit;
    const int64_t b = dev->ops->batch_floats(dev, item_floats);
    return b < limit ? b : limit;
}

/* How many of the items from j on (of item i's shape, not yet in a run)
 * keep one spacing in the arenas and in aux: the most a run opened at j
 * can hold. */
static int segment_len(const ob_run_items *it, const unsigned char *done, int i, int j)
{
    int64_t prev_off, prev_aux, size, sp = 0, sa = 0;
    it->where(it->ctx, j, &prev_off, &prev_aux, &size);
    int len = 1;
    for (int k = j + 1; k < it->n; k++) {
        if (done[k] || !it->same(it->ctx, i, k)) continue;
        int64_t off, aux;
        it->where(it->ctx, k, &off, &aux, &size);
        if (len == 1) {
            sp = off - prev_off;
            sa = aux - prev_aux;
        } else if (off - prev_off != sp || aux - prev_aux != sa) {
            break;
        }
        len++;
        prev_off = off;
        prev_aux = aux;
    }
    return len;
}

ob_status ob_make_runs(const ob_device *dev, const ob_run_items *it, int64_t budget, ob_run *runs, int *n_runs,
                       ob_err *e)
{
    const int n = it->n;
    unsigned char *done = calloc((size_t)(n > 0 ? n : 1), 1);
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    char *sorted = malloc((size_t)(n > 0 ? n : 1) * it->size);
    if (!done || !order || !sorted) {
        free(done);
        free(order);
        free(sorted);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    int m = 0;
    *n_runs = 0;
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        int64_t off, aux, size;
        it->where(it->ctx, i, &off, &aux, &size);
        const int64_t sz = size > 0 ? size : 1;
        int64_t cap = ob_batch_budget(dev, sz, budget) / sz, prev_off = 0, prev_aux = 0;
        cap = cap < 1 ? 1 : cap > 65535 ? 65535 : cap;
        ob_run *r = NULL;
        int run_cap = 1;
        for (int j = i; j < n; j++) {
            if (done[j] || (j != i && !it->same(it->ctx, i, j))) continue;
            it->where(it->ctx, j, &off, &aux, &size);
            const int64_t dp = off - prev_off, da = aux - prev_aux;
            if (r && r->count < run_cap && (r->count == 1 || (dp == r->sp && da == r->sa))) {
                if (r->count == 1) {
                    r->sp = dp;
                    r->sa = da;
                }
                r->count++;
            } else {
                r = &runs[(*n_runs)++];
                *r = (ob_run){.first = m, .count = 1};
                run_cap = ob_balanced_cap(segment_len(it, done, i, j), (int)cap);
            }
            order[m++] = j;
            done[j] = 1;
            prev_off = off;
            prev_aux = aux;
        }
    }
    for (int k = 0; k < n; k++)
        memcpy(sorted + (size_t)k * it->size, (char *)it->base + (size_t)order[k] * it->size, it->size);
    memcpy(it->base, sorted, (size_t)n * it->size);
    free(done);
    free(order);
    free(sorted);
    return OB_OK;
}

static int size_runs_same(const void *ctx, int i, int j)
{
    const ob_layout *l = ((const void *const *)ctx)[0];
    const int *index = ((const void *const *)ctx)[1];
    const unsigned char *kind = ((const void *const *)ctx)[2];
    return l->t[index[i]].numel == l->t[index[j]].numel && (!kind || kind[index[i]] == kind[index[j]]);
}

int ob_no_decay_tensor(const ob_tensor *t)
{
    return t->ndim <= 1 || t->tag == OB_TAG_BIAS || t->tag == OB_TAG_NORM;
}

int ob_optim_filters_decay(const ob_optim *o)
{
    return ob_hp_index(o->hp.defs, o->hp.n, "filter_bias_and_bn") >= 0 && ob_optim_hp(o, "filter_bias_and_bn") != 0;
}

ob_status ob_no_decay_marks(const ob_optim *o, int g, unsigned char **marks, ob_err *e)
{
    const ob_layout *l = o->layout;
    *marks = NULL;
    if (!ob_optim_filters_decay(o)) return OB_OK;
    *marks = calloc((size_t)(l->n ? l->n : 1), 1);
    if (!*marks) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < l->n; i++) (*marks)[i] = l->t[i].group == g && ob_no_decay_tensor(&l->t[i]);
    return OB_OK;
}

static void size_runs_where(const void *ctx, int i, int64_t *off, int64_t *aux, int64_t *size)
{
    const ob_layout *l = ((const void *const *)ctx)[0];
    const int *index = ((const void *const *)ctx)[1];
    *off = *aux = l->t[index[i]].offset;
    *size = l->t[index[i]].numel;
}

ob_status ob_size_runs_make(const ob_optim *o, int g, int64_t cap, const unsigned char *kind, ob_size_runs *sr,
                            ob_err *e)
{
    const ob_layout *l = o->layout;
    const ob_group *gr = &o->group[g];
    *sr = (ob_size_runs){0};
    int n = 0;
    for (int i = 0; i < l->n; i++) n += l->t[i].group == g;
    sr->index = malloc((size_t)(n ? n : 1) * sizeof *sr->index);
    sr->run = malloc((size_t)(n ? n : 1) * sizeof *sr->run);
    if (!sr->index || !sr->run) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    int64_t max_numel = 1;
    for (int i = 0; i < l->n; i++) {
        if (l->t[i].group != g) continue;
        sr->index[sr->n++] = i;
        if (l->t[i].numel > max_numel) max_numel = l->t[i].numel;
    }
    int64_t budget = gr->end - gr->begin;
    if (cap > 0 && budget > cap) budget = cap;
    if (budget < max_numel) budget = max_numel;
    const void *ctx[3] = {l, sr->index, kind};
    const ob_run_items items = {sr->index, sizeof *sr->index, sr->n, ctx, size_runs_same, size_runs_where};
    OB_TRY(ob_make_runs(o->dev, &items, budget, sr->run, &sr->n_runs, e));
    sr->max_count = 1;
    for (int ri = 0; ri < sr->n_runs; ri++) {
        const ob_run *r = &sr->run[ri];
        const int64_t nf = r->count * l->t[sr->index[r->first]].numel;
        if (nf > sr->max_floats) sr->max_floats = nf;
        if (r->count > sr->max_count) sr->max_count = r->count;
    }
    return OB_OK;
}

ob_status ob_trust_runs_make(ob_optim *o, int g, int64_t cap, ob_trust_runs *t, ob_err *e)
{
    ob_device *dev = o->dev;
    *t = (ob_trust_runs){0};
    OB_TRY(OB_REQUIRE(dev, batched_sumsq, e));
    OB_TRY(OB_REQUIRE(dev, trust_scale, e));
    t->adapt_nd = ob_optim_hp(o, "always_adapt") != 0;
    t->adapt = ob_optim_hp(o, "weight_decay") != 0 || t->adapt_nd;
    OB_TRY(ob_no_decay_marks(o, g, &t->no_decay, e));
    OB_TRY(ob_size_runs_make(o, g, cap, t->no_decay, &t->runs, e));
    OB_TRY(ob_dev_alloc(dev, (size_t)(2 * t->runs.max_count) * sizeof(float), (void **)&t->sq, e));
    return ob_dev_alloc(dev, (size_t)(t->runs.n ? t->runs.n : 1) * sizeof(ob_rule_step), (void **)&t->tstep, e);
}

void ob_trust_runs_free(ob_optim *o, ob_trust_runs *t)
{
    ob_dev_free(o->dev, t->sq);
    ob_dev_free(o->dev, t->tstep);
    ob_size_runs_free(&t->runs);
    free(t->no_decay);
    *t = (ob_trust_runs){0};
}

void ob_size_runs_free(ob_size_runs *sr)
{
    free(sr->index);
    free(sr->run);
    *sr = (ob_size_runs){0};
}

/* How many of the members from[i..count) lie at one spacing in the arenas
 * (*d floats apart; 0 for a run of one): the next run of a bucket, which
 * one batched pass covers. Same-shape tensors of a model's layers are such
 * a run (spaced by a layer's size), as are tensors stored one after another. */
static int member_run(const ob_layout *l, const int *from, int i, int count, int64_t *d)
{
    *d = 0;
    if (i + 1 >= count) return 1;
    *d = l->t[from[i + 1]].offset - l->t[from[i]].offset;
    int j = i + 2;
    while (j < count && l->t[from[j]].offset - l->t[from[j - 1]].offset == *d) j++;
    return j - i;
}

/* Momentum -> [clamp] -> normalize -> Newton-Schulz -> update, bucket by
 * bucket; the momentum and the update in one batched pass per run of
 * evenly spaced members (member_run). */
static ob_status matrix_group_step(ob_optim *o, ob_group *gr, float *params, const float *grads, ob_err *e)
{
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    const ob_layout *l = o->layout;
    const ob_matrix_plan *pl = &gr->plan;
    for (int bi = 0; bi < gr->n_buckets; bi++) {
        const ob_bucket *b = &gr->buckets[bi];
        const int64_t n = b->rows * b->cols;
        const int64_t sx = ob_ns_stride(n);
        const int64_t dmin = b->rows < b->cols ? b->rows : b->cols;
        const int64_t ss = ob_ns_stride(dmin * dmin);
        const int *mem = gr->members + b->first;
        for (int i = 0, k; i < b->count; i += k) {
            int64_t d;
            k = member_run(l, mem, i, b->count, &d);
            const ob_tensor *t = &l->t[mem[i]];
            float *st[OB_RULE_MAX_STATE] = {gr->state[0] + (t->offset - gr->begin), NULL, NULL};
            const int64_t stride[OB_BATCH_STRIDES] = {sx, d, d, 0, 0, 0};
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &gr->rule, o->ws_x + i * sx, grads + t->offset, st, n, k, stride,
                                     e));
        }
        if (pl->quantile > 0) {
            OB_TRY(ops->abs_quantile(dev, o->ws_x, b->count, n, sx, pl->quantile, o->ws_thr, o->ws_x2, e));
            OB_TRY(ops->clamp_abs(dev, o->ws_x, b->count, n, sx, o->ws_thr, pl->quantile_add, e));
        }
        OB_TRY(ops->batched_normalize(dev, o->ws_x, b->count, n, sx, pl->norm_eps,
                                      (pl->norm_add_eps ? OB_NORM_ADD_EPS : 0) | (pl->ns_bf16 ? OB_NORM_BF16 : 0), e));
        float *res;
        OB_TRY(ob_ns_iterate(dev, o->ws_x, o->ws_x2, o->ws_a, o->ws_b, b->count, b->rows, b->cols, sx, ss,
                             &b->abc[0][0], b->n_abc, pl->ns_steps, pl->ns_bf16, &res, e));
        ob_rule apply = {0};
        apply.kind = OB_RULE_MATRIX_APPLY;
        apply.n_state = 1;
        apply.weight_decay = pl->weight_decay;
        apply.c[0] = b->lr_scale;
        for (int i = 0, k; i < b->count; i += k) {
            int64_t d;
            k = member_run(l, mem, i, b->count, &d);
            const ob_tensor *t = &l->t[mem[i]];
            float *st[OB_RULE_MAX_STATE] = {res + i * sx, NULL, NULL};
            const int64_t stride[OB_BATCH_STRIDES] = {d, d, sx, 0, 0, 0};
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &apply, params + t->offset, grads + t->offset, st, n, k, stride, e));
        }
    }
    return OB_OK;
}

ob_status ob_optim_ew(ob_optim *o, const ob_rule_step *step, const ob_rule *r, float *p, const float *g, float *s0,
                      int64_t n, ob_err *e)
{
    float *st[OB_RULE_MAX_STATE] = {s0, NULL, NULL};
    return o->dev->ops->elementwise_step(o->dev, r, step, o->stats_dev, p, g, st, n, e);
}

/* Copy params, every state role, the optimizer's host state and the spike
 * guard's window into the snapshot (to = 1) or back: after a rollback the
 * window is the one of the restored step, so the restored step's level of
 * loss is no spike. */
static ob_status snapshot_copy(ob_optim *o, float *params, int to, ob_err *e)
{
    ob_device *dev = o->dev;
    size_t pb = (size_t)o->layout->total * sizeof(float);
    OB_TRY(dev->ops->copy(dev, to ? o->snap_params : params, to ? params : o->snap_params, pb, e));
    if (o->spike_dev)
        OB_TRY(dev->ops->copy(dev, to ? o->snap_spike : o->spike_dev, to ? o->spike_dev : o->snap_spike,
                              sizeof(ob_spike), e));
    if (o->host)
        memcpy(to ? o->snap_host : o->host, to ? o->host : o->snap_host, o->def->host_state_bytes);
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        size_t bytes = (size_t)(gr->end - gr->begin) * sizeof(float);
        for (int k = 0; k < gr->rule.n_state && bytes; k++)
            OB_TRY(dev->ops->copy(dev, to ? o->snap_state[g][k] : gr->state[k],
                                  to ? gr->state[k] : o->snap_state[g][k], bytes, e));
        if (gr->aux_floats > 0)
            OB_TRY(dev->ops->copy(dev, to ? gr->snap_aux : gr->aux, to ? gr->aux : gr->snap_aux,
                                  (size_t)gr->aux_floats * sizeof(float), e));
    }
    return OB_OK;
}

/* rollback / stop: the host learns whether step t was bad and acts on it. A
 * step the spike guard skipped is not bad: nothing is rolled back, only the
 * update count, as for any skip this mode sees. */
static ob_status guard_after(ob_optim *o, float *params, int64_t t, ob_err *e)
{
    ob_step_stats st;
    OB_TRY(o->dev->ops->download(o->dev, &st, o->stats_dev, sizeof st, e));
    if (st.skip != 0.0f && st.spike != 0.0f) {
        o->t--; /* the update did not happen */
        return OB_OK;
    }
    if (st.skip == 0.0f) {
        o->bad_streak = 0;
        int64_t every = (int64_t)ob_optim_train_hp(o, "snapshot_every");
        if (o->guard_mode == OB_GUARD_ROLLBACK && o->t % every == 0) {
            OB_TRY(snapshot_copy(o, params, 1, e));
            o->snap_t = o->t;
            o->snap_step = t;
        }
        return OB_OK;
    }
    o->t--; /* the update did not happen */
    o->bad_streak++;
    char what[64];
    if (st.nonfinite > 0)
        snprintf(what, sizeof what, "%.0f non-finite gradient values", st.nonfinite);
    else
        snprintf(what, sizeof what, "a non-finite loss");
    int64_t max_bad = (int64_t)ob_optim_train_hp(o, "max_bad_steps");
    if (o->guard_mode == OB_GUARD_STOP) {
        o->stopped = 1;
        o->stopped_step = t;
        snprintf(o->stopped_why, sizeof o->stopped_why, "%s at step %lld (train.on_nonfinite = stop)", what,
                 (long long)t);
        ob_optim_event(o, t, "stopped", "%s", o->stopped_why);
        return OB_OK;
    }
    OB_TRY(snapshot_copy(o, params, 0, e));
    o->t = o->snap_t;
    ob_optim_event(o, t, "rollback",
                   "%s at step %lld: parameters and optimizer state restored from step %lld", what,
                   (long long)t, (long long)o->snap_step);
    if (o->bad_streak >= max_bad) {
        o->stopped = 1;
        o->stopped_step = t - o->bad_streak + 1;
        snprintf(o->stopped_why, sizeof o->stopped_why,
                 "%lld consecutive non-finite steps despite rollback (train.max_bad_steps = %lld)",
                 (long long)o->bad_streak, (long long)max_bad);
        ob_optim_event(o, o->stopped_step, "stopped", "%s", o->stopped_why);
    }
    return OB_OK;
}

ob_status ob_optim_step(ob_optim *o, float *params, const float *grads, const float *loss,
                        int64_t t, ob_step_record *rec, ob_err *e)
{
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    if (o->guard_mode == OB_GUARD_ROLLBACK && o->snap_t < 0) {
        OB_TRY(snapshot_copy(o, params, 1, e));
        o->snap_t = o->t;
        o->snap_step = t - 1;
    }
    const float clip_norm = (float)ob_optim_train_hp(o, "clip_norm");
    /* With no guard and no clipping nothing has to be known before the update:
     * the statistics are then summed by the update kernels themselves (one
     * read of the gradients instead of two) and finished after it. */
    const int fused =
        o->guard_mode == OB_GUARD_NONE && clip_norm <= 0.0f && !o->spike_dev && ops->elementwise_step_stats;
    ob_step_stats init;
    memset(&init, 0, sizeof init);
    init.clip_scale = 1.0f;
    init.guard = o->guard_mode == OB_GUARD_NONE ? 0.0f : 1.0f;
    OB_TRY(ops->upload(dev, o->stats_dev, &init, sizeof init, e));
    if (!fused) {
        OB_TRY(ops->grad_stats(dev, grads, o->layout->total, o->stats_dev, e));
        OB_TRY(ops->finish_stats(dev, o->stats_dev, loss, clip_norm, o->spike_dev, rec, e));
    }
    double lr = ob_optim_lr_in_effect(o, t);
    if (rec) {
        float lrf = (float)lr;
        OB_TRY(ops->upload(dev, &rec->lr, &lrf, sizeof lrf, e));
    }
    if (o->stopped) {
        if (fused) OB_TRY(ops->finish_stats(dev, o->stats_dev, loss, clip_norm, o->spike_dev, rec, e));
        return OB_OK;
    }
    if (o->t == 0 && o->def->first_step) OB_TRY(o->def->first_step(o, params, e));
    o->t++;
    double base = ob_optim_hp(o, "lr");
    double lr_scale = base > 0 ? lr / base : 1.0;
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        if (gr->end == gr->begin) continue;
        ob_rule_step s;
        memset(&s, 0, sizeof s);
        o->def->group_step(o, g, o->t, lr_scale, &s);
        OB_TRY(ops->upload(dev, gr->step_dev, &s, sizeof s, e));
        if (gr->is_matrix || gr->is_custom) {
            if (fused) OB_TRY(ops->grad_stats(dev, grads + gr->begin, gr->end - gr->begin, o->stats_dev, e));
            if (gr->is_custom)
                OB_TRY(o->def->custom_step(o, g, params, grads, e));
            else
                OB_TRY(matrix_group_step(o, gr, params, grads, e));
        } else {
            /* one pass over the group, its spans (filter_bias_and_bn) included */
            float *st[OB_RULE_MAX_STATE] = {0};
            for (int k = 0; k < gr->rule.n_state; k++) st[k] = gr->state[k];
            const float *gg = grads + gr->begin;
            float *pg = params + gr->begin;
            const int64_t n = gr->end - gr->begin;
            if (gr->span_bound)
                OB_TRY(ops->elementwise_step_spans(dev, &gr->rule, gr->step_dev, o->stats_dev, pg, gg, st, n,
                                                   gr->span_bound, gr->n_span, gr->span_nd0, fused, e));
            else if (fused)
                OB_TRY(ops->elementwise_step_stats(dev, &gr->rule, gr->step_dev, o->stats_dev, pg, gg, st, n, e));
            else
                OB_TRY(ops->elementwise_step(dev, &gr->rule, gr->step_dev, o->stats_dev, pg, gg, st, n, e));
        }
    }
    if (fused) OB_TRY(ops->finish_stats(dev, o->stats_dev, loss, clip_norm, o->spike_dev, rec, e));
    if (o->guard_mode == OB_GUARD_ROLLBACK || o->guard_mode == OB_GUARD_STOP) OB_TRY(guard_after(o, params, t, e));
    return OB_OK;
}

/* ---- state ---------------------------------------------------------------- */

static void blob(ob_state_blob *out, int max, int *n, const char *name, void *ptr, size_t bytes, int on_device)
{
    if (*n < max) {
        snprintf(out[*n].name, sizeof out[*n].name, "%s", name);
        out[*n].ptr = ptr;
        out[*n].bytes = bytes;
        out[*n].on_device = on_device;
        out[*n].optional = 0;
    }
    (*n)++;
}

/* The optimizer's host state (or its snapshot copy): optional in a
 * checkpoint where it rebuilds from zeros (one written before it existed). */
static void host_blob(const ob_optim *o, ob_state_blob *out, int max, int *n, const char *name, void *ptr)
{
    blob(out, max, n, name, ptr, o->def->host_state_bytes, 0);
    if (*n <= max) out[*n - 1].optional = o->def->host_state_rebuilds != 0;
}

int ob_optim_state_blobs(ob_optim *o, ob_state_blob *out, int max)
{
    int n = 0;
    char name[48];
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        size_t bytes = (size_t)(gr->end - gr->begin) * sizeof(float);
        if (!bytes) continue;
        for (int k = 0; k < gr->rule.n_state; k++) {
            snprintf(name, sizeof name, "group%d.state%d", g, k);
            blob(out, max, &n, name, gr->state[k], bytes, 1);
        }
        if (gr->aux_floats > 0) {
            snprintf(name, sizeof name, "group%d.aux", g);
            blob(out, max, &n, name, gr->aux, (size_t)gr->aux_floats * sizeof(float), 1);
        }
    }
    blob(out, max, &n, "optim.t", &o->t, sizeof o->t, 0);
    if (o->host) host_blob(o, out, max, &n, "optim.host", o->host);
    blob(out, max, &n, "guard.bad_streak", &o->bad_streak, sizeof o->bad_streak, 0);
    if (o->spike_dev) blob(out, max, &n, "guard.spike_window", o->spike_dev, sizeof(ob_spike), 1);
    if (o->guard_mode == OB_GUARD_ROLLBACK) {
        blob(out, max, &n, "guard.snap_t", &o->snap_t, sizeof o->snap_t, 0);
        blob(out, max, &n, "guard.snap_step", &o->snap_step, sizeof o->snap_step, 0);
        if (o->snap_host) host_blob(o, out, max, &n, "guard.snap_host", o->snap_host);
        blob(out, max, &n, "guard.snap_params", o->snap_params, (size_t)o->layout->total * sizeof(float), 1);
        if (o->spike_dev) blob(out, max, &n, "guard.snap_spike_window", o->snap_spike, sizeof(ob_spike), 1);
        for (int g = 0; g < o->n_groups; g++) {
            ob_group *gr = &o->group[g];
            size_t bytes = (size_t)(gr->end - gr->begin) * sizeof(float);
            for (int k = 0; k < gr->rule.n_state && bytes; k++) {
                snprintf(name, sizeof name, "guard.snap_group%d.state%d", g, k);
                blob(out, max, &n, name, o->snap_state[g][k], bytes, 1);
            }
            if (gr->aux_floats > 0) {
                snprintf(name, sizeof name, "guard.snap_group%d.aux", g);
                blob(out, max, &n, name, gr->snap_aux, (size_t)gr->aux_floats * sizeof(float), 1);
            }
        }
    }
    return n;
}

size_t ob_optim_state_bytes(const ob_optim *o)
{
    return o->state_bytes;
}

ob_status ob_optim_eval_params(ob_optim *o, float *params, float **at, ob_err *e)
{
    *at = params;
    if (!o || !o->def->eval_point || o->t == 0) return OB_OK;
    if (!o->eval_buf)
        OB_TRY(ob_dev_alloc(o->dev, (size_t)o->layout->total * sizeof(float), (void **)&o->eval_buf, e));
    OB_TRY(o->def->eval_point(o, params, o->eval_buf, e));
    *at = o->eval_buf;
    return OB_OK;
}

void ob_optim_destroy(ob_optim *o)
{
    if (!o) return;
    if (o->dev) {
        ob_dev_free(o->dev, o->eval_buf);
        ob_dev_free(o->dev, o->stats_dev);
        ob_dev_free(o->dev, o->spike_dev);
        for (int g = 0; g < o->n_groups; g++) {
            for (int k = 0; k < OB_RULE_MAX_STATE; k++) {
                ob_dev_free(o->dev, o->group[g].state[k]);
                ob_dev_free(o->dev, o->snap_state[g][k]);
            }
            ob_dev_free(o->dev, o->group[g].step_dev);
            ob_dev_free(o->dev, o->group[g].span_bound);
            if (o->def->custom_release) o->def->custom_release(o, g);
            ob_dev_free(o->dev, o->group[g].aux);
            ob_dev_free(o->dev, o->group[g].snap_aux);
        }
        ob_dev_free(o->dev, o->ws_x);
        ob_dev_free(o->dev, o->ws_x2);
        ob_dev_free(o->dev, o->ws_a);
        ob_dev_free(o->dev, o->ws_b);
        ob_dev_free(o->dev, o->ws_thr);
        ob_dev_free(o->dev, o->snap_params);
        ob_dev_free(o->dev, o->snap_spike);
    }
    for (int g = 0; g < OB_MAX_GROUPS; g++) {
        free(o->group[g].members);
        free(o->group[g].buckets);
    }
    free(o->coeffs);
    free(o->host);
    free(o->snap_host);
    free(o);
}
