/* harness/matrix.c - configuration -> validated cells (see matrix.h). */
#include "harness/matrix.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cellspec.h"
#include "harness/search.h"

/* The owner of settings for every optimizer of the matrix that has the key
 * ('--set all.filter_bias_and_bn=true'); an optimizer's own setting of the
 * key wins. */
#define OB_ALL_OPTIMIZERS "all"

static ob_status apply_settings(const ob_config *c, const char *owner, ob_hp_values *hv, ob_err *e)
{
    const ob_optimizer_def *od = ob_optimizer_find(owner);
    for (int i = 0; i < c->n_settings && od; i++) { /* all's first: the optimizer's own come after */
        const ob_setting *s = &c->settings[i];
        if (strcmp(s->owner, OB_ALL_OPTIMIZERS) != 0 || s->sweep || ob_hp_index(od->hp, od->n_hp, s->key) < 0)
            continue;
        if (ob_optim_hp_set(od, hv, s->key, s->value, e) != OB_OK)
            return ob_err_prefix(e, "%s: all.%s: ", s->origin, s->key);
    }
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (strcmp(s->owner, owner) != 0 || s->sweep) continue; /* sweeps: apply_sweep */
        if (ob_optim_is_option(od, s->key)) continue; /* text settings: ob_cell_make_optim */
        ob_status st = od ? ob_optim_hp_set(od, hv, s->key, s->value, e) : ob_hp_set(hv, owner, s->key, s->value, e);
        if (st != OB_OK) return ob_err_prefix(e, "%s: ", s->origin);
    }
    return OB_OK;
}

/* Each setting's value alone, on its owner's defaults, in the order given:
 * of two bad values the first in the file is the one told. (Together, and
 * text settings, sweeps and "all", are checked where they are applied.) */
static ob_status check_each_setting(const ob_config *c, ob_err *e)
{
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (s->sweep || !strcmp(s->owner, OB_ALL_OPTIMIZERS)) continue;
        ob_hp_values hv;
        ob_status st = OB_OK;
        const ob_optimizer_def *od = ob_optimizer_find(s->owner);
        const ob_workload_def *wd = od ? NULL : ob_workload_find(s->owner);
        if (od) {
            if (ob_optim_is_option(od, s->key)) continue;
            ob_hp_defaults(&hv, od->hp, od->n_hp);
            st = ob_optim_hp_set(od, &hv, s->key, s->value, e);
        } else if (wd) {
            ob_hp_defaults(&hv, wd->hp, wd->n_hp);
            st = ob_hp_set(&hv, s->owner, s->key, s->value, e);
        } else if (!strcmp(s->owner, "train")) {
            ob_hp_defaults(&hv, ob_train_hp_defs, ob_train_hp_count);
            st = ob_hp_set(&hv, s->owner, s->key, s->value, e);
        }
        if (st != OB_OK) return ob_err_prefix(e, "%s: ", s->origin);
    }
    return OB_OK;
}

/* ---- where a failed check's setting came from ------------------------------ */

static const ob_setting *find_setting(const ob_config *c, const char *owner, const char *key)
{
    const ob_setting *found = NULL;
    for (int i = 0; i < c->n_settings; i++)
        if (!strcmp(c->settings[i].owner, owner) && !strcmp(c->settings[i].key, key)) found = &c->settings[i];
    return found;
}

/* Append text to e's message, as far as it fits; returns e->status. */
static ob_status err_append(ob_err *e, const char *text)
{
    size_t l = strlen(e->msg);
    snprintf(e->msg + l, sizeof e->msg - l, "%s", text);
    return e->status;
}

static int name_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '.';
}

/* The setting that msg names first: of the settings of c, the one whose
 * "OWNER.KEY" ("rprop.step_size_min", "bert-tiny.dim"; "all.KEY" as any
 * "NAME.KEY") occurs earliest in msg as a whole word (the last given on a tie,
 * as it is the one in effect); NULL if msg names none. */
static const ob_setting *named_setting(const ob_config *c, const char *msg)
{
    const ob_setting *best = NULL;
    const char *best_at = NULL;
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *x = &c->settings[i];
        char name[sizeof x->owner + sizeof x->key + 1];
        const int all = !strcmp(x->owner, "all");
        snprintf(name, sizeof name, "%s.%s", all ? "" : x->owner, x->key);
        size_t n = strlen(name);
        for (const char *p = strstr(msg, name); p; p = strstr(p + 1, name)) {
            const int left_ok = all ? p > msg && name_char(p[-1]) : !(p > msg && name_char(p[-1]));
            if (!left_ok || isalnum((unsigned char)p[n]) || p[n] == '_') continue;
            if (!best_at || p <= best_at) {
                best = x;
                best_at = p;
            }
            break;
        }
    }
    return best;
}

/* Where the settings of owner (and of also, if not NULL) came from: "--set",
 * "c.yaml:4, --sweep"; "" for none. */
static void origins_of(const ob_config *c, const char *owner, const char *also, char *where, size_t n)
{
    size_t wl = 0;
    where[0] = 0;
    for (int i = 0; i < c->n_settings && wl + 80 < n; i++) {
        const ob_setting *x = &c->settings[i];
        if (strcmp(x->owner, owner) && (!also || strcmp(x->owner, also))) continue;
        if (strstr(where, x->origin)) continue;
        wl += (size_t)snprintf(where + wl, n - wl, "%s%s", wl ? ", " : "", x->origin);
    }
}

/* Whether msg starts with the place of one of c's settings ("c.yaml:6: ..."). */
static int msg_located(const ob_config *c, const char *msg)
{
    for (int i = 0; i < c->n_settings; i++) {
        size_t ol = strlen(c->settings[i].origin);
        if (ol && !strncmp(msg, c->settings[i].origin, ol) && msg[ol] == ':') return 1;
    }
    return 0;
}

/* A check of owner's settings failed (e): put the place of the setting the
 * message names first, else where (the places of all of owner's settings,
 * "" for none), before it. */
static void locate_err(const ob_config *c, const char *where, ob_err *e)
{
    if (msg_located(c, e->msg)) return;
    const ob_setting *at = named_setting(c, e->msg);
    if (at) ob_err_prefix(e, "%s: ", at->origin);
    else if (where[0]) ob_err_prefix(e, "%s: ", where);
}

/* ---- sweeps of hyperparameters other than the lr ---------------------------- */

static int n_values(const char *list)
{
    int n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    return n;
}

/* Value k of a comma-separated list. */
static void nth_value(const char *list, int k, char *out, size_t n)
{
    const char *p = list;
    for (; k > 0 && p; k--) {
        p = strchr(p, ',');
        if (p) p++;
    }
    size_t len = p ? strcspn(p, ",") : 0;
    if (len >= n) len = n - 1;
    memcpy(out, p ? p : "", len);
    out[len] = '\0';
}

/* Whether a sweep's value is a range ("0.8..0.99", "log:1e-5..1e-1"): its
 * configurations are the trials of a quasi-random search (harness/search.h). */
static int is_range(const ob_setting *s)
{
    ob_range r;
    ob_err e;
    return n_values(s->value) == 1 && ob_range_parse(s->value, &r, &e) != 0;
}

/* The number of owner's ranged sweeps, and the product of the numbers of
 * values of its listed ones (1 without). */
static int n_ranges(const ob_config *c, const char *owner)
{
    int n = 0;
    for (int i = 0; i < c->n_settings; i++)
        n += c->settings[i].sweep && !strcmp(c->settings[i].owner, owner) && is_range(&c->settings[i]);
    return n;
}

static int64_t list_size(const ob_config *c, const char *owner)
{
    int64_t n = 1;
    for (int i = 0; i < c->n_settings && n <= 1000000; i++) {
        const ob_setting *s = &c->settings[i];
        if (s->sweep && !strcmp(s->owner, owner) && !is_range(s)) n *= n_values(s->value);
    }
    return n;
}

/* Whether optimizer opt's lrs are a range of the search (parsed into r). */
static int lr_range(const ob_config *c, const char *opt, ob_range *r)
{
    const ob_lr_list *l = ob_config_lrs_for(c, opt);
    ob_err e;
    return l && l->range[0] && ob_range_parse(l->range, r, &e) > 0;
}

/* How many configurations the sweeps of owner make: the product of the
 * numbers of values of its listed sweeps, times the trials where the
 * search has ranges to draw (1 without sweeps): an optimizer's own ranged
 * keys or train's, which are searched with each optimizer's, or its lrs'
 * range (train's own configurations are its listed ones alone). */
static int64_t sweep_size(const ob_config *c, const char *owner)
{
    int64_t n = list_size(c, owner);
    if (!ob_optimizer_find(owner)) return n; /* train's, a workload's: listed values alone */
    ob_range r;
    const int searched = n_ranges(c, owner) > 0 || n_ranges(c, "train") > 0 || lr_range(c, owner, &r);
    if (searched && c->trials > 0) n *= c->trials * (c->studies > 1 ? c->studies : 1);
    return n;
}

/* Coordinate dim of trial g of the search: with studies, study g / trials
 * takes point g % trials of search seed search_seed + study (a study is the
 * search another --search-seed runs). */
static double search_u(const ob_config *c, int64_t g, int dim)
{
    const int64_t study = c->studies > 1 ? g / c->trials : 0;
    return ob_search_point_drawn(c->studies > 1 ? g % c->trials : g, dim, c->search_seed + study,
                                 c->search_draws > 0 ? (int)c->search_draws : OB_SEARCH_DRAWS);
}

/* The table of owner's hyperparameters: an optimizer's or train's (NULL
 * for another owner, a workload's, which takes no ranges). */
static const ob_hp_def *owner_defs(const char *owner, int *n)
{
    const ob_optimizer_def *od = ob_optimizer_find(owner);
    if (od) {
        *n = od->n_hp;
        return od->hp;
    }
    *n = ob_train_hp_count;
    return strcmp(owner, "train") ? NULL : ob_train_hp_defs;
}

/* Configuration v (0 <= v < sweep_size) of owner's sweeps: calls fn with
 * each swept key and its value, from the last key to the first. The keys are
 * in name order, whatever the order they were given in (a reordered config
 * is the same matrix, so --resume finds it); the first varies slowest. With
 * ranges, the trial varies slowest of all: v = trial x (the listed sweeps'
 * configurations) + the listed sweeps' configuration, and the ranged keys
 * take the trial's point of the search, one dimension each in name order,
 * from dimension dim0 on. trial < 0: from v, as for an optimizer; train's
 * sweeps take the trial of the optimizer's configuration (train_swept). */
typedef ob_status (*sweep_fn)(const ob_setting *s, const char *value, void *arg, ob_err *e);

static ob_status each_swept_at(const ob_config *c, const char *owner, int64_t v, int64_t trial, int dim0,
                               sweep_fn fn, void *arg, ob_err *e)
{
    const ob_setting *sw[OB_CFG_MAX_SETTINGS];
    int n_sw = 0;
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (!s->sweep || strcmp(s->owner, owner)) continue;
        int j = n_sw++;
        for (; j > 0 && strcmp(sw[j - 1]->key, s->key) > 0; j--) sw[j] = sw[j - 1];
        sw[j] = s;
    }
    int64_t lists = 1;
    int dim[OB_CFG_MAX_SETTINGS], n_dim = 0;
    for (int i = 0; i < n_sw; i++) {
        dim[i] = is_range(sw[i]) ? dim0 + n_dim++ : -1;
        if (dim[i] < 0) lists *= n_values(sw[i]->value);
    }
    if (trial < 0) trial = v / lists;
    v %= lists;
    int n_defs = 0;
    const ob_hp_def *defs = n_dim ? owner_defs(owner, &n_defs) : NULL;
    for (int i = n_sw - 1; i >= 0; i--) {
        const ob_setting *s = sw[i];
        char val[sizeof s->value];
        if (dim[i] >= 0) {
            ob_range r;
            ob_err pe;
            int k = defs ? ob_hp_index(defs, n_defs, s->key) : -1;
            (void)ob_range_parse(s->value, &r, &pe); /* check_sweeps took it */
            ob_range_value(&r, k >= 0 ? &defs[k] : NULL, search_u(c, trial, dim[i]), val, sizeof val);
        } else {
            int n = n_values(s->value);
            nth_value(s->value, (int)(v % n), val, sizeof val);
            v /= n;
        }
        OB_TRY(fn(s, val, arg, e));
    }
    return OB_OK;
}

static ob_status each_swept(const ob_config *c, const char *owner, int64_t v, sweep_fn fn, void *arg, ob_err *e)
{
    return each_swept_at(c, owner, v, -1, 0, fn, arg, e);
}

/* train's sweeps in configuration variant of optimizer opt (its own
 * configuration variant / train's count, train's variant % that count): its
 * ranged keys take the optimizer's trial, in the dimensions after the
 * optimizer's own ranged keys. */
static ob_status train_swept(const ob_config *c, const char *opt, int64_t variant, sweep_fn fn, void *arg, ob_err *e)
{
    const int64_t nt = sweep_size(c, "train");
    return each_swept_at(c, "train", variant % nt, variant / nt / list_size(c, opt), n_ranges(c, opt), fn, arg, e);
}

/* The lr of configuration variant of optimizer od where its lrs are a range
 * (NAN where they are not): the trial's point in the dimension after the
 * optimizer's and train's ranged keys. */
static double trial_lr(const ob_config *c, const ob_optimizer_def *od, int64_t variant)
{
    ob_range r;
    if (!lr_range(c, od->name, &r)) return NAN;
    const int64_t trial = variant / sweep_size(c, "train") / list_size(c, od->name);
    const int k = ob_hp_index(od->hp, od->n_hp, "lr");
    char v[64];
    ob_range_value(&r, k >= 0 ? &od->hp[k] : NULL, search_u(c, trial, n_ranges(c, od->name) + n_ranges(c, "train")),
                   v, sizeof v);
    return strtod(v, NULL);
}

static ob_status set_swept(const ob_setting *s, const char *value, void *arg, ob_err *e)
{
    if (ob_hp_set(arg, s->owner, s->key, value, e) != OB_OK)
        return ob_err_prefix(e, "%s: %s", s->origin, s->origin[0] == '-' ? "" : "sweep: ");
    return OB_OK;
}

/* Whether two configurations are the same run: every value written the
 * same in a run's hyperparameters (its identity; 0.95 and 0.9500000001
 * are one text), and the spike guard's window too when the guard is off in
 * both (a run leaves its keys out then). */
static int same_values(const ob_hp_values *a, const ob_hp_values *b)
{
    int w = ob_hp_index(a->defs, a->n, "spike_window");
    int off = w >= 0 && ob_hp_get(a, "spike_z_loss") == 0 && ob_hp_get(a, "spike_z_grad") == 0 &&
              ob_hp_get(b, "spike_z_loss") == 0 && ob_hp_get(b, "spike_z_grad") == 0;
    for (int i = 0; i < a->n; i++) {
        if (a->v[i] == b->v[i] || (off && i == w)) continue;
        char ta[64], tb[64];
        ob_hp_format(&a->defs[i], a->v[i], ta, sizeof ta);
        ob_hp_format(&b->defs[i], b->v[i], tb, sizeof tb);
        if (strcmp(ta, tb)) return 0;
    }
    return 1;
}

static ob_status apply_sweep(const ob_config *c, const char *owner, int64_t v, ob_hp_values *hv, ob_err *e)
{
    return each_swept(c, owner, v, set_swept, hv, e);
}

typedef struct sweep_text {
    char *buf;
    size_t n, l;
    int raw;                  /* the values as written ("0.950"), not as labelled ("0.95") */
    const ob_hp_values *hv;   /* the cell's values of the owner's table: labelled as a run records them */
} sweep_text;

static ob_status text_swept(const ob_setting *s, const char *value, void *arg, ob_err *e)
{
    (void)e;
    sweep_text *t = arg;
    /* each_swept goes from the last sweep to the first: prepend */
    char item[400], num[64];
    /* values as a run records them and the report labels them (a float
     * "%.9g", an integer in full): "1e-3" reads "0.001" in both */
    int k_hp = t->raw || !t->hv ? -1 : ob_hp_index(t->hv->defs, t->hv->n, s->key);
    if (k_hp >= 0) {
        ob_hp_format(&t->hv->defs[k_hp], t->hv->v[k_hp], num, sizeof num);
        value = num;
    }
    int k = snprintf(item, sizeof item, "%s=%s%s", s->key, value, t->l ? " " : "");
    if (k > 0 && t->l + (size_t)k + 1 <= t->n) {
        memmove(t->buf + k, t->buf, t->l + 1);
        memcpy(t->buf, item, (size_t)k);
        t->l += (size_t)k;
    }
    return OB_OK;
}

static void sweep_text_of(const ob_config *c, const ob_cell *cell, int part, int raw, char *buf, size_t n)
{
    ob_err e;
    const int64_t nt = sweep_size(c, "train");
    char wl[512] = "", opt[512] = "", train[512] = "";
    sweep_text tw = {wl, sizeof wl, 0, raw, &cell->wl_hp}, to = {opt, sizeof opt, 0, raw, &cell->opt_hp},
               tt = {train, sizeof train, 0, raw, &cell->train_hp};
    if (part != OB_SWEEP_OPTIMIZER) (void)each_swept(c, cell->wl->name, cell->wl_variant, text_swept, &tw, &e);
    if (part != OB_SWEEP_WORKLOAD) {
        (void)each_swept(c, cell->opt->name, cell->variant / nt, text_swept, &to, &e);
        (void)train_swept(c, cell->opt->name, cell->variant, text_swept, &tt, &e);
    }
    snprintf(buf, n, "%s%s%s%s%s", wl, wl[0] && (opt[0] || train[0]) ? " " : "", opt, opt[0] && train[0] ? " " : "",
             train);
}

void ob_cell_sweep_text(const ob_config *c, const ob_cell *cell, int part, char *buf, size_t n)
{
    sweep_text_of(c, cell, part, 0, buf, n);
}

/* Whether two cells of one optimizer hold the same settings but for the lr
 * (values compared; the lr's own key skipped). */
static int same_but_lr(const ob_cell *a, const ob_cell *b)
{
    if (a->study != b->study || a->opt_hp.n != b->opt_hp.n || a->train_hp.n != b->train_hp.n ||
        a->n_options != b->n_options)
        return 0;
    for (int i = 0; i < a->opt_hp.n; i++)
        if (strcmp(a->opt_hp.defs[i].name, "lr") && a->opt_hp.v[i] != b->opt_hp.v[i]) return 0;
    for (int i = 0; i < a->train_hp.n; i++)
        if (a->train_hp.v[i] != b->train_hp.v[i]) return 0;
    for (int i = 0; i < a->n_options; i++)
        if (a->options[i] != b->options[i]) return 0;
    return 1;
}

int ob_cell_same_pair(const ob_cell *a, const ob_cell *b)
{
    if (a->wl != b->wl || a->wl_variant != b->wl_variant || a->opt != b->opt) return 0;
    /* the trials of an lr searched alone (--lrs LO..HI with --trials) are
     * configurations that differ in the lr only: one configuration at
     * several lrs, as the report reads them */
    return a->variant == b->variant || same_but_lr(a, b);
}

/* A ranged sweep (harness/search.h): of an optimizer's or train's number,
 * alone in its sweep, its ends valid values of the key, searched with
 * trials; the items of a listed sweep are no ranges. hv: the owner's
 * defaults. */
static ob_status check_range(const ob_config *c, const ob_setting *s, ob_hp_values *hv, ob_err *e)
{
    const int n = n_values(s->value);
    ob_range r;
    for (int k = 0; k < n; k++) {
        char val[sizeof s->value];
        nth_value(s->value, k, val, sizeof val);
        int kind = ob_range_parse(val, &r, e);
        if (kind < 0) return ob_err_prefix(e, "%s: %s%s.%s: ", s->origin, s->origin[0] == '-' ? "" : "sweep: ",
                                           s->owner, s->key);
        if (kind > 0 && n > 1)
            return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s: the range %s is one of %d values; a range is a sweep's only "
                           "value (the search draws its values from it)", s->origin, s->owner, s->key, val, n);
    }
    if (!is_range(s)) return OB_OK;
    int n_defs = 0;
    const ob_hp_def *defs = owner_defs(s->owner, &n_defs);
    if (!defs)
        return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s = %s is a range, which only an optimizer's settings and train's "
                       "take (a search over the optimizers' configurations); list %s's values instead (V1,V2,...)",
                       s->origin, s->owner, s->key, s->value, s->owner);
    int ki = ob_hp_index(defs, n_defs, s->key);
    if (ki < 0) return set_swept(s, "0", hv, e); /* the unknown key's message, with a "did you mean" */
    const ob_hp_def *d = &defs[ki];
    (void)ob_range_parse(s->value, &r, e);
    if (d->kind != OB_HP_FLOAT && d->kind != OB_HP_INT)
        return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s takes %s, not a number: it cannot be a range; list its values",
                       s->origin, s->owner, s->key, d->kind == OB_HP_BOOL ? "true or false" : "a name");
    if (d->kind == OB_HP_INT && (r.scale == OB_RANGE_LOG1M || r.lo != floor(r.lo) || r.hi != floor(r.hi)))
        return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s is an integer: its range needs whole ends, linear or log (%s)",
                       s->origin, s->owner, s->key, s->value);
    char end[64], note[sizeof s->value + 48];
    snprintf(note, sizeof note, " (an end of the range %s)", s->value);
    snprintf(end, sizeof end, "%.17g", r.lo);
    if (set_swept(s, end, hv, e) != OB_OK) return err_append(e, note);
    snprintf(end, sizeof end, "%.17g", r.hi);
    if (set_swept(s, end, hv, e) != OB_OK) return err_append(e, note);
    /* an optimizer's search draws its own ranged keys and train's */
    const int dims = n_ranges(c, s->owner) + (strcmp(s->owner, "train") ? n_ranges(c, "train") : 0);
    if (dims > OB_SEARCH_MAX_DIMS)
        return ob_fail(e, OB_ERR_INPUT, "%s: %s has %d ranged sweeps%s; a search takes at most %d", s->origin,
                       s->owner, dims, strcmp(s->owner, "train") ? ", train's included" : "", OB_SEARCH_MAX_DIMS);
    if (c->trials <= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s = %s is a range: give the number of points to search it at, "
                       "trials: N in the config or --trials N (16 say), or list values instead", s->origin,
                       s->owner, s->key, s->value);
    return OB_OK;
}

/* Every value of every sweep is a valid value of its key; text settings
 * (route, coeff_file, ...) cannot be swept. */
static ob_status check_sweeps(const ob_config *c, ob_err *e)
{
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (!s->sweep) continue;
        const ob_workload_def *wd = ob_workload_find(s->owner);
        const ob_optimizer_def *od = ob_optimizer_find(s->owner);
        if (ob_optim_is_option(od, s->key))
            return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s is a text setting; it cannot be swept", s->origin, s->owner,
                           s->key);
        ob_hp_values hv;
        if (!strcmp(s->owner, "train")) ob_hp_defaults(&hv, ob_train_hp_defs, ob_train_hp_count);
        else if (wd) ob_hp_defaults(&hv, wd->hp, wd->n_hp);
        else if (od) ob_hp_defaults(&hv, od->hp, od->n_hp);
        else continue; /* check_owners refuses it */
        if (!strcmp(s->key, "lr") && od)
            return ob_fail(e, OB_ERR_INPUT, "%s: %s.lr is swept with 'lrs' (--lrs), not with a sweep", s->origin,
                           s->owner);
        OB_TRY(check_range(c, s, &hv, e));
        if (is_range(s)) continue;
        for (int k = 0; k < n_values(s->value); k++) {
            char val[sizeof s->value];
            nth_value(s->value, k, val, sizeof val);
            OB_TRY(set_swept(s, val, &hv, e));
        }
    }
    return OB_OK;
}

static int in_list(const char (*names)[64], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

/* Exclusions name a known workload and optimizer; one whose pair is not in
 * the matrix is noted, like a setting for an owner that is not in it. */
static ob_status check_excludes(const ob_config *c, FILE *notes, ob_err *e)
{
    for (int i = 0; i < c->n_excludes; i++) {
        const ob_exclude *x = &c->excludes[i];
        if (!ob_workload_find(x->workload)) {
            ob_workload_unknown(x->workload, e);
            return ob_err_prefix(e, "%s: %s", x->origin, x->origin[0] == '-' ? "" : "exclude: ");
        }
        if (!ob_optimizer_find(x->optimizer)) {
            ob_optimizer_unknown(x->optimizer, e);
            return ob_err_prefix(e, "%s: %s", x->origin, x->origin[0] == '-' ? "" : "exclude: ");
        }
        const char *missing = !in_list(c->workloads, c->n_workloads, x->workload)     ? x->workload
                              : !in_list(c->optimizers, c->n_optimizers, x->optimizer) ? x->optimizer
                                                                                        : NULL;
        if (missing && notes)
            fprintf(notes, "optbench: note: %s: '%s' is not in this matrix; exclusion of %s x %s is unused\n",
                    x->origin, missing, x->workload, x->optimizer);
    }
    return OB_OK;
}

static int owner_known(const char *owner)
{
    return !strcmp(owner, "train") || !strcmp(owner, OB_ALL_OPTIMIZERS) || ob_optimizer_find(owner) ||
           ob_workload_find(owner);
}

/* A setting of every optimizer (all.KEY): a hyperparameter (not the lr, not
 * a text setting), set, not swept, that some optimizer has; *used: one of
 * the matrix's optimizers has it. */
static ob_status check_all_setting(const ob_config *c, const ob_setting *s, int *used, ob_err *e)
{
    if (s->sweep)
        return ob_fail(e, OB_ERR_INPUT, "%s: all.%s: a setting of every optimizer cannot be swept; sweep it per "
                       "optimizer (--sweep adam.%s=...)", s->origin, s->key, s->key);
    if (!strcmp(s->key, "lr"))
        return ob_fail(e, OB_ERR_INPUT, "%s: all.lr: give the learning rates with 'lrs' (--lrs), or an "
                       "optimizer's own lr (adam.lr)", s->origin);
    int no;
    const ob_optimizer_def *const *o = ob_optimizers(&no);
    const char *names[1024];
    int n = 0, any = 0;
    *used = 0;
    if (!strcmp(s->key, "route")) { /* route rules: a text setting of every optimizer */
        const char *eg = c->n_optimizers > 0 ? c->optimizers[0] : "adamw";
        return ob_fail(e, OB_ERR_INPUT, "%s: all.route: route rules are a text setting, given per optimizer "
                       "(%s.route=...)", s->origin, eg);
    }
    for (int k = 0; k < no; k++) {
        if (ob_optim_is_option(o[k], s->key))
            return ob_fail(e, OB_ERR_INPUT, "%s: all.%s is a text setting of %s; give it per optimizer (%s.%s=...)",
                           s->origin, s->key, o[k]->name, o[k]->name, s->key);
        const int has = ob_hp_index(o[k]->hp, o[k]->n_hp, s->key) >= 0;
        any |= has;
        if (has && in_list(c->optimizers, c->n_optimizers, o[k]->name)) *used = 1;
        for (int j = 0; j < o[k]->n_hp && n < 1024; j++) names[n++] = o[k]->hp[j].name;
    }
    if (!any) {
        const char *near = ob_closest_name(s->key, names, n);
        return ob_fail(e, OB_ERR_INPUT, "%s: all.%s: no optimizer has a setting '%s'%s%s%s (optbench list shows "
                       "each one's)", s->origin, s->key, s->key, near ? " (did you mean '" : "", near ? near : "",
                       near ? "'?)" : "");
    }
    return OB_OK;
}

static ob_status check_owners(const ob_config *c, FILE *notes, ob_err *e)
{
    for (int i = 0; i < c->n_settings; i++) {
        const ob_setting *s = &c->settings[i];
        if (!strcmp(s->owner, OB_ALL_OPTIMIZERS)) {
            int used = 0;
            OB_TRY(check_all_setting(c, s, &used, e));
            if (!used && notes)
                fprintf(notes, "optbench: note: %s: no optimizer of this matrix has '%s'; setting all.%s is unused\n",
                        s->origin, s->key, s->key);
            continue;
        }
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
                           "%s: setting '%s.%s': '%s' is not an optimizer, a workload, 'train' or 'all'%s%s%s",
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

/* The text settings of optimizer od (route rules, coeff_file, ...), in order. */
static ob_status text_settings(const ob_config *c, const ob_optimizer_def *od, const ob_setting **opts, int *n,
                               ob_err *e)
{
    *n = 0;
    for (int i = 0; i < c->n_settings; i++) {
        if (strcmp(c->settings[i].owner, od->name) || !ob_optim_is_option(od, c->settings[i].key) || c->settings[i].sweep)
            continue;
        if (*n == OB_MAX_CELL_OPTIONS)
            return ob_fail(e, OB_ERR_INPUT, "%s: more than %d text settings for %s", c->settings[i].origin,
                           OB_MAX_CELL_OPTIONS, od->name);
        opts[(*n)++] = &c->settings[i];
    }
    return OB_OK;
}

/* Settings of an optimizer or workload that is not in the matrix are unused
 * (check_owners notes them), but checked all the same: a misspelt key or a
 * value out of range is an error now, not when the owner joins the matrix. */
static ob_status check_unused_settings(const ob_config *c, const ob_hp_values *train, ob_err *e)
{
    for (int i = 0; i < c->n_settings; i++) {
        const char *owner = c->settings[i].owner;
        if (!strcmp(owner, "train") || in_list(c->optimizers, c->n_optimizers, owner) ||
            in_list(c->workloads, c->n_workloads, owner))
            continue;
        int first = 1; /* each owner once */
        for (int j = 0; j < i && first; j++) first = strcmp(c->settings[j].owner, owner) != 0;
        if (!first) continue;
        ob_hp_values hv;
        const ob_workload_def *wd = ob_workload_find(owner);
        if (wd) {
            ob_hp_defaults(&hv, wd->hp, wd->n_hp);
            OB_TRY(apply_settings(c, owner, &hv, e));
            continue;
        }
        const ob_optimizer_def *od = ob_optimizer_find(owner);
        if (!od) continue; /* check_owners refused it */
        ob_hp_defaults(&hv, od->hp, od->n_hp);
        OB_TRY(apply_settings(c, owner, &hv, e));
        ob_cell probe = {.opt = od, .train_hp = *train};
        OB_TRY(text_settings(c, od, probe.options, &probe.n_options, e));
        /* each configuration of its sweeps, as the matrix would make them */
        for (int64_t v = 0; v < sweep_size(c, owner) && v < OB_MAX_CONFIGURATIONS; v++) {
            probe.opt_hp = hv;
            OB_TRY(apply_sweep(c, owner, v, &probe.opt_hp, e));
            ob_optim *made = NULL;
            ob_status st = ob_cell_make_optim(&probe, &made, e);
            ob_optim_destroy(made);
            if (st != OB_OK) {
                char note[160];
                locate_err(c, "", e);
                snprintf(note, sizeof note, " (%s is not in this matrix; its settings are checked all the same)",
                         owner);
                return err_append(e, note);
            }
        }
    }
    return OB_OK;
}

/* A schedule that decays to train.min_lr (thp) needs every lr the optimizer
 * od runs at (its lr list l, else its own lr in ohp) to be at least min_lr:
 * the check names the lrs below it and where min_lr was set. *lowest gets
 * the smallest of those lrs. */
static ob_status check_min_lr(const ob_config *c, const ob_optimizer_def *od, const ob_lr_list *l,
                              const ob_hp_values *ohp, const ob_hp_values *thp, double *lowest, ob_err *e)
{
    const int n = l ? l->n : 1;
    const int flag = l && l->origin[0] == '-';
    char below[256] = "", all[512] = "";
    size_t bl = 0, al = 0;
    int n_below = 0;
    const double min_lr = ob_hp_get(thp, "min_lr");
    *lowest = INFINITY;
    for (int k = 0; k < n; k++) {
        const double lr = l ? l->v[k] : ob_hp_get(ohp, "lr");
        if (lr < *lowest) *lowest = lr;
        if (al < sizeof all) al += (size_t)snprintf(all + al, sizeof all - al, "%s%g", !k ? "" : flag ? "," : ", ", lr);
        if (!ob_schedule_decays(thp) || lr >= min_lr) continue;
        if (bl < sizeof below)
            bl += (size_t)snprintf(below + bl, sizeof below - bl, "%s%g", n_below ? ", " : "", lr);
        n_below++;
    }
    if (!n_below) return OB_OK;
    const ob_setting *at = find_setting(c, "train", "min_lr");
    const ob_setting *lr_at = l ? NULL : find_setting(c, od->name, "lr");
    char src[800];
    if (l && l->range[0] && flag) /* a searched lr: its one value is the range's low end */
        snprintf(src, sizeof src, "the low end of %s %s", l->origin, l->range);
    else if (l && l->range[0])
        snprintf(src, sizeof src, "the low end of the lr range %s at %s", l->range, l->origin);
    else if (flag) snprintf(src, sizeof src, "of %s %s", l->origin, all);
    else if (l) snprintf(src, sizeof src, "of the lrs %s at %s", all, l->origin);
    else if (lr_at) snprintf(src, sizeof src, "%s.lr, set at %s", od->name, lr_at->origin);
    else snprintf(src, sizeof src, "its default; --lrs or 'lrs:' gives others");
    return ob_fail(e, OB_ERR_INPUT,
                   "%s%strain.min_lr = %g is above %s's learning rate%s %s (%s); give a min_lr of at most %g%s, or "
                   "leave it out",
                   at ? at->origin : "", at ? ": " : "", min_lr, od->name, n_below > 1 ? "s" : "", below, src, *lowest,
                   l && l->range[0] ? " (below every lr of the range)" : n > 1 ? " (below every lr of the sweep)" : "");
}

/* What the cells of optimizer od on configuration wv of workload wd share
 * (add_optimizer_cells): od's values before its sweeps, its text settings,
 * lrs and seeds, and each configuration made so far. */
typedef struct opt_cells {
    const ob_config *c;
    const ob_workload_def *wd;
    int wv;                     /* the workload's configuration, */
    const ob_hp_values *whp;    /* and its hyperparameters */
    const ob_optimizer_def *od;
    const ob_hp_values *train;  /* train's hyperparameters before its sweeps */
    ob_hp_values base;          /* od's defaults and settings before its sweeps */
    const ob_setting *opts[OB_MAX_CELL_OPTIONS];
    int n_opts;                 /* od's text settings */
    const ob_lr_list *l;        /* od's lrs; NULL: its own lr */
    int n_lr, n_seeds;
    int li;                     /* the index of lr among od's hyperparameters, -1 without one */
    int64_t n_train, n_conf;    /* configurations of train's sweeps; of od's and train's together */
    ob_cell *confs;             /* each configuration's probe (with more than one), to find two that are one run */
} opt_cells;

/* One configuration of od's and train's sweeps. */
typedef struct opt_conf {
    ob_hp_values ohp, thp;      /* od's hyperparameters and train's */
    ob_cell probe;              /* its cell, at the lowest lr that will run (or the drawn one) */
    double drawn;               /* a searched lr: the configuration's own; NAN otherwise */
    char conf[512];             /* its sweeps' values as written, for messages */
    char where[300];            /* where od's and train's settings were given */
} opt_conf;

/* The part of oc that is the same for each configuration: od's values and
 * text settings, its lrs and seeds, the room for its configurations. */
static ob_status opt_cells_init(opt_cells *oc, ob_err *e)
{
    const ob_config *c = oc->c;
    const ob_optimizer_def *od = oc->od;
    ob_hp_defaults(&oc->base, od->hp, od->n_hp);
    OB_TRY(apply_settings(c, od->name, &oc->base, e));
    OB_TRY(text_settings(c, od, oc->opts, &oc->n_opts, e));
    oc->l = ob_config_lrs_for(c, od->name);
    oc->n_lr = oc->l ? oc->l->n : 1;
    oc->n_seeds = c->n_seeds ? c->n_seeds : 1;
    oc->n_train = sweep_size(c, "train");
    oc->li = ob_hp_index(od->hp, od->n_hp, "lr");
    oc->n_conf = sweep_size(c, od->name) * oc->n_train;
    oc->confs = oc->n_conf > 1 ? calloc((size_t)oc->n_conf, sizeof *oc->confs) : NULL;
    if (oc->n_conf > 1 && !oc->confs) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    return OB_OK;
}

/* Configuration ov into cf: od's and train's values, the study it is a
 * trial of, its cell, and the texts its messages quote. */
static ob_status conf_probe(const opt_cells *oc, int64_t ov, opt_conf *cf, ob_err *e)
{
    const ob_config *c = oc->c;
    const char *name = oc->od->name;
    cf->ohp = oc->base;
    cf->thp = *oc->train;
    OB_TRY(apply_sweep(c, name, ov / oc->n_train, &cf->ohp, e));
    OB_TRY(train_swept(c, name, ov, set_swept, &cf->thp, e));
    /* the study of a searched configuration: its trial / trials */
    const int64_t per_trial = oc->n_train * list_size(c, name);
    const int study = c->studies > 1 && sweep_size(c, name) > list_size(c, name)
                          ? (int)(ov / per_trial / c->trials)
                          : -1;
    cf->probe = (ob_cell){.wl = oc->wd, .wl_variant = oc->wv, .opt = oc->od, .variant = (int)ov, .study = study,
                          .opt_hp = cf->ohp, .train_hp = cf->thp, .n_options = oc->n_opts};
    memcpy(cf->probe.options, oc->opts, (size_t)oc->n_opts * sizeof oc->opts[0]);
    sweep_text_of(c, &cf->probe, OB_SWEEP_ALL, 1, cf->conf, sizeof cf->conf); /* messages quote the values as written */
    origins_of(c, name, "train", cf->where, sizeof cf->where);
    return OB_OK;
}

/* Whether configuration ov makes an optimizer: the schedule's min_lr
 * against the lrs that will run, then od's own check of its values at the
 * lowest of them (or the drawn one); a failure says where and in which
 * configuration. */
static ob_status conf_check(const opt_cells *oc, int64_t ov, opt_conf *cf, ob_err *e)
{
    /* the schedule's min_lr against the lrs that will run (the probe's own lr is
     * the optimizer's default; each cell has its own) */
    double lowest;
    ob_status st = check_min_lr(oc->c, oc->od, oc->l, &cf->ohp, &cf->thp, &lowest, e);
    /* a searched lr: the configuration's own (two trials apart in the lr alone are two configurations) */
    cf->drawn = trial_lr(oc->c, oc->od, ov);
    if (st == OB_OK && oc->li >= 0) {
        cf->probe.opt_hp.v[oc->li] = isnan(cf->drawn) ? lowest : cf->drawn;
        cf->probe.opt_hp.set[oc->li] = 1;
    }
    ob_optim *made = NULL;
    if (st == OB_OK) st = ob_cell_make_optim(&cf->probe, &made, e);
    ob_optim_destroy(made);
    if (st != OB_OK) {
        /* the place first: of the setting the message names ("--set: rprop.step_size_min = 10 ..."),
         * unless it names its place already ("c.yaml:6: muon: route ...") */
        locate_err(oc->c, cf->where, e);
        if (cf->conf[0]) {
            char note[600];
            snprintf(note, sizeof note, " (in %s's configuration %s)", oc->od->name, cf->conf);
            err_append(e, note);
        }
    }
    return st;
}

/* Why configuration cf and an earlier one, prev, are one run, for the
 * message that refuses them. */
static const char *same_run_cause(const opt_cells *oc, const opt_conf *cf, const ob_cell *prev)
{
    const ob_config *c = oc->c;
    int spike = ob_hp_get(&cf->thp, "spike_window") != ob_hp_get(&prev->train_hp, "spike_window");
    /* two trials of a search whose ranges, rounded, gave the same values */
    ob_range lr_r;
    int searched = c->trials > 0 && (n_ranges(c, oc->od->name) > 0 || n_ranges(c, "train") > 0 ||
                                     lr_range(c, oc->od->name, &lr_r));
    return spike ? " (train.spike_window does nothing while spike_z_loss and spike_z_grad are 0)"
           : searched ? " (two trials of the search drew the same values, as rounded: an integer range with "
                        "fewer values than the trials, or a range too narrow for them; widen the range or "
                        "take fewer trials)"
                      : " (the same as a run records them: one value written twice, or values that agree in 9 "
                        "significant digits); list each value once";
}

/* Configuration ov against each before it: two of one study with the same
 * values are one run, refused. */
static ob_status conf_unique(const opt_cells *oc, int64_t ov, const opt_conf *cf, ob_err *e)
{
    for (int64_t k = 0; k < ov && oc->confs; k++) {
        const ob_cell *prev = &oc->confs[k];
        /* two studies may draw the same point: two configurations (a study's number is part of a run) */
        if (prev->study == cf->probe.study && same_values(&prev->opt_hp, &cf->probe.opt_hp) &&
            same_values(&prev->train_hp, &cf->probe.train_hp)) {
            char other[512];
            sweep_text_of(oc->c, prev, OB_SWEEP_ALL, 1, other, sizeof other);
            return ob_fail(e, OB_ERR_INPUT,
                           "%s%sthe sweeps make two configurations of %s that are one run: %s and %s%s", cf->where,
                           cf->where[0] ? ": " : "", oc->od->name, other, cf->conf, same_run_cause(oc, cf, prev));
        }
    }
    return OB_OK;
}

/* The cells of configuration ov into m: each lr, then each seed. */
static void add_conf_cells(const opt_cells *oc, int64_t ov, const opt_conf *cf, ob_matrix *m)
{
    const ob_config *c = oc->c;
    for (int k = 0; k < oc->n_lr; k++)
        for (int s = 0; s < oc->n_seeds; s++) {
            ob_cell *cell = &m->cells[m->n];
            *cell = cf->probe;
            cell->index = m->n++;
            cell->wl = oc->wd;
            cell->wl_variant = oc->wv;
            cell->variant = (int)ov;
            cell->wl_hp = *oc->whp;
            cell->lr = !isnan(cf->drawn) ? cf->drawn : oc->l ? oc->l->v[k] : ob_hp_get(&cf->ohp, "lr");
            cell->seed = c->n_seeds ? c->seeds[s] : 0;
            if (oc->li >= 0) {
                cell->opt_hp.v[oc->li] = cell->lr;
                cell->opt_hp.set[oc->li] = 1;
            }
        }
}

/* The cells of optimizer od on configuration wv of workload wd (hyperparameters
 * whp): each configuration of od's sweeps and train's, then lr, then seed.
 * The settings of every configuration are validated, also of an excluded pair. */
static ob_status add_optimizer_cells(const ob_config *c, const ob_workload_def *wd, int wv, const ob_hp_values *whp,
                                     const ob_optimizer_def *od, const ob_hp_values *train, ob_matrix *m, ob_err *e)
{
    opt_cells oc = {.c = c, .wd = wd, .wv = wv, .whp = whp, .od = od, .train = train};
    OB_TRY(opt_cells_init(&oc, e));
    ob_status st = OB_OK;
    for (int64_t ov = 0; ov < oc.n_conf && st == OB_OK; ov++) {
        opt_conf cf;
        if ((st = conf_probe(&oc, ov, &cf, e)) != OB_OK || (st = conf_check(&oc, ov, &cf, e)) != OB_OK) break;
        st = conf_unique(&oc, ov, &cf, e);
        if (oc.confs) oc.confs[ov] = cf.probe;
        if (st != OB_OK || ob_config_excluded(c, wd->name, od->name)) continue;
        add_conf_cells(&oc, ov, &cf, m);
    }
    free(oc.confs);
    return st;
}

/* The names of the matrix: each workload and optimizer known (a misspelt
 * workload told at once, not after the missing optimizers), at least one
 * of each, and the optimizer of each lr list known (one that is not in the
 * matrix: a note). */
static ob_status check_names(const ob_config *c, FILE *notes, ob_err *e)
{
    for (int i = 0; i < c->n_workloads; i++)
        if (!ob_workload_find(c->workloads[i])) {
            ob_workload_unknown(c->workloads[i], e);
            return c->origin_workloads[0] ? ob_err_prefix(e, "%s: ", c->origin_workloads) : e->status;
        }
    for (int i = 0; i < c->n_optimizers; i++)
        if (!ob_optimizer_find(c->optimizers[i])) {
            ob_optimizer_unknown(c->optimizers[i], e);
            return c->origin_optimizers[0] ? ob_err_prefix(e, "%s: ", c->origin_optimizers) : e->status;
        }
    if (c->n_workloads == 0)
        return ob_fail(e, OB_ERR_INPUT, "no workloads given (--workloads or 'workloads:' in the config)");
    if (c->n_optimizers == 0)
        return ob_fail(e, OB_ERR_INPUT, "no optimizers given (--optimizers or 'optimizers:' in the config)");
    for (int i = 0; i < c->n_lr_lists; i++) {
        const ob_lr_list *l = &c->lrs[i];
        if (!l->optimizer[0]) continue;
        if (!ob_optimizer_find(l->optimizer)) {
            ob_optimizer_unknown(l->optimizer, e);
            return ob_err_prefix(e, "%s: lrs: ", l->origin);
        }
        if (!in_list(c->optimizers, c->n_optimizers, l->optimizer) && notes)
            fprintf(notes, "optbench: note: %s: '%s' is not in this matrix; its lrs are unused\n", l->origin,
                    l->optimizer);
    }
    return OB_OK;
}

/* lrs per optimizer and none for all: an optimizer without a list of
 * its own runs at one lr, its own, which the config does not show; a
 * note on notes says which. */
static void note_own_lr(const ob_config *c, FILE *notes)
{
    const ob_lr_list *per = NULL;
    int global = 0;
    for (int i = 0; i < c->n_lr_lists; i++) {
        if (!c->lrs[i].optimizer[0]) global = 1;
        else if (!per) per = &c->lrs[i];
    }
    for (int i = 0; per && !global && notes && i < c->n_optimizers; i++) {
        const ob_optimizer_def *od = ob_optimizer_find(c->optimizers[i]);
        if (!od || ob_config_lrs_for(c, od->name)) continue;
        ob_hp_values hv;
        ob_err ignored = {0};
        ob_hp_defaults(&hv, od->hp, od->n_hp);
        if (apply_settings(c, od->name, &hv, &ignored) != OB_OK) continue; /* told below */
        fprintf(notes, "optbench: note: %s: lrs lists none for %s: it runs at its lr alone, %g (give %s: [...] to "
                       "sweep it)\n", per->origin, od->name, ob_hp_get(&hv, "lr"), od->name);
    }
}

/* An optimizer's own lr (adam.lr) where lrs gives its lrs too: the cells
 * would run at lrs' alone, so the setting would be ignored; refused. */
static ob_status check_own_lr(const ob_config *c, ob_err *e)
{
    for (int i = 0; i < c->n_optimizers; i++) {
        const ob_setting *s = find_setting(c, c->optimizers[i], "lr");
        const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[i]);
        if (!s || s->sweep || !l) continue; /* a sweep of the lr is refused with its own message */
        return ob_fail(e, OB_ERR_INPUT, "%s: %s.lr = %s, but the lrs given at %s are %s's learning rates too, and "
                       "its cells would run at those alone; give one of the two: leave %s.lr out, or give lrs per "
                       "optimizer (lrs: {%s: [%s], ...} in a config: an optimizer it leaves out runs at its own lr)",
                       s->origin, s->owner, s->value, l->origin, s->owner, s->owner, s->owner, s->value);
    }
    return OB_OK;
}

/* The search's settings: lrs searched only with trials, within the
 * search's dimensions; search_seed, search_draws and studies only with a
 * search, studies of at most OB_MAX_TRIALS configurations in all; trials
 * only with a range to search. */
static ob_status check_search(const ob_config *c, ob_err *e)
{
    for (int i = 0; i < c->n_optimizers; i++) { /* lrs searched: with trials, within the search's dimensions */
        ob_range r;
        if (!lr_range(c, c->optimizers[i], &r)) continue;
        const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[i]);
        if (c->trials <= 0)
            return ob_fail(e, OB_ERR_INPUT, "%s: the lrs of %s, %s, are a range: give the number of points to search "
                           "it at, trials: N in the config or --trials N (16 say), or list lrs instead", l->origin,
                           c->optimizers[i], l->range);
        if (n_ranges(c, c->optimizers[i]) + n_ranges(c, "train") + 1 > OB_SEARCH_MAX_DIMS)
            return ob_fail(e, OB_ERR_INPUT, "%s: %s's search has more than %d ranges, its lr's included", l->origin,
                           c->optimizers[i], OB_SEARCH_MAX_DIMS);
    }
    if (c->search_seed != 0 && c->trials <= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: search_seed = %lld, but there is no search (no trials): give trials and "
                       "ranges, or leave search_seed out", c->origin_search_seed, (long long)c->search_seed);
    if (c->search_draws > 0 && c->trials <= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: search_draws = %lld, but there is no search (no trials): give trials "
                       "and ranges, or leave search_draws out", c->origin_search_draws, (long long)c->search_draws);
    if (c->studies > 1 && c->trials <= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: studies = %lld, but there is no search (no trials): give trials and "
                       "ranges, or leave studies out", c->origin_studies, (long long)c->studies);
    if (c->studies > 1 && c->trials * c->studies > OB_MAX_TRIALS)
        return ob_fail(e, OB_ERR_INPUT, "%s: studies = %lld of %lld trials each make %lld configurations of an "
                       "optimizer, more than %d: take fewer trials or studies", c->origin_studies,
                       (long long)c->studies, (long long)c->trials, (long long)(c->studies * c->trials), OB_MAX_TRIALS);
    if (c->trials > 0) {
        int ranged = 0;
        for (int i = 0; i < c->n_settings; i++) ranged |= c->settings[i].sweep && is_range(&c->settings[i]);
        for (int i = 0; i < c->n_optimizers; i++) {
            ob_range r;
            ranged |= lr_range(c, c->optimizers[i], &r);
        }
        if (!ranged)
            return ob_fail(e, OB_ERR_INPUT, "%s: trials = %lld, but no sweep is a range, so there is nothing to "
                           "search: give ranges (--sweep adam.beta1=0.8..0.99, log:1e-5..1e-1 for a log-uniform "
                           "one) or leave trials out", c->origin_trials[0] ? c->origin_trials : "trials",
                           (long long)c->trials);
    }
    return OB_OK;
}

/* The matrix's size into *total (cells): at most OB_MAX_CONFIGURATIONS
 * configurations of an owner and 1000000 cells, not every pair excluded
 * (the excluded ones counted in m->n_excluded_pairs). */
static ob_status count_cells(const ob_config *c, ob_matrix *m, double *total, ob_err *e)
{
    int n_seeds = c->n_seeds ? c->n_seeds : 1;
    const int64_t n_train = sweep_size(c, "train");
    for (int i = 0; i < c->n_optimizers + c->n_workloads; i++) {
        int is_opt = i < c->n_optimizers;
        const char *owner = is_opt ? c->optimizers[i] : c->workloads[i - c->n_optimizers];
        int64_t n_conf = sweep_size(c, owner) * (is_opt ? n_train : 1);
        if (n_conf > OB_MAX_CONFIGURATIONS)
            return ob_fail(e, OB_ERR_INPUT, "the sweeps make %s%lld configurations of %s; at most %d",
                           n_conf > 1000000 ? "over " : "", (long long)(n_conf > 1000000 ? 1000000 : n_conf), owner,
                           OB_MAX_CONFIGURATIONS);
    }
    *total = 0;
    for (int w = 0; w < c->n_workloads; w++)
        for (int o = 0; o < c->n_optimizers; o++) {
            if (ob_config_excluded(c, c->workloads[w], c->optimizers[o])) {
                m->n_excluded_pairs++;
                continue;
            }
            const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[o]);
            *total += (double)sweep_size(c, c->workloads[w]) * (double)sweep_size(c, c->optimizers[o]) *
                      (double)n_train * (l ? l->n : 1) * n_seeds;
        }
    if (*total == 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: every (workload, optimizer) pair is excluded; the matrix is empty",
                       c->excludes[0].origin);
    if (*total > 1000000)
        return ob_fail(e, OB_ERR_INPUT, "the matrix has %.0f cells%s; at most 1000000", *total,
                       *total >= 1e12 ? " or more" : "");
    return OB_OK;
}

/* The hyperparameters of configuration wv of workload wd into whp: its
 * defaults, then the settings, then the values of its sweeps. */
static ob_status workload_hp(const ob_config *c, const ob_workload_def *wd, int64_t wv, ob_hp_values *whp, ob_err *e)
{
    ob_hp_defaults(whp, wd->hp, wd->n_hp);
    OB_TRY(apply_settings(c, wd->name, whp, e));
    return apply_sweep(c, wd->name, wv, whp, e);
}

/* The cells of workload wd into m: each of its configurations (two that
 * are one problem, the same values written differently, refused) with the
 * cells of every optimizer on it (add_optimizer_cells). */
static ob_status add_workload_cells(const ob_config *c, const ob_workload_def *wd, const ob_hp_values *train,
                                    ob_matrix *m, ob_err *e)
{
    for (int64_t wv = 0; wv < sweep_size(c, wd->name); wv++) {
        ob_hp_values whp;
        OB_TRY(workload_hp(c, wd, wv, &whp, e));
        for (int64_t k = 0; k < wv; k++) { /* one run twice: the same value written differently */
            ob_hp_values other;
            OB_TRY(workload_hp(c, wd, k, &other, e));
            if (same_values(&other, &whp)) {
                char where[300];
                origins_of(c, wd->name, NULL, where, sizeof where);
                return ob_fail(e, OB_ERR_INPUT,
                               "%s%sthe sweeps make two configurations of %s that are one problem (the same values "
                               "written differently); list each value once",
                               where, where[0] ? ": " : "", wd->name);
            }
        }
        for (int o = 0; o < c->n_optimizers; o++)
            OB_TRY(add_optimizer_cells(c, wd, (int)wv, &whp, ob_optimizer_find(c->optimizers[o]), train, m, e));
    }
    return OB_OK;
}

/* The cells with text settings (route rules): each must fit the text a
 * run stores (ob_cell_spec). */
static ob_status check_cell_texts(const ob_config *c, const ob_matrix *m, ob_err *e)
{
    for (int i = 0; i < m->n; i++) {
        char w[OB_SPEC_WL_JSON], o[OB_SPEC_OPT_JSON];
        ob_run_spec sp;
        if (m->cells[i].n_options) OB_TRY(ob_cell_spec(c, &m->cells[i], NULL, "", w, o, &sp, e));
    }
    return OB_OK;
}

ob_status ob_matrix_expand(const ob_config *c, ob_matrix *m, FILE *notes, ob_err *e)
{
    memset(m, 0, sizeof *m);
    OB_TRY(check_names(c, notes, e)); /* names first */
    note_own_lr(c, notes);
    OB_TRY(check_excludes(c, notes, e));
    OB_TRY(check_owners(c, NULL, e));
    OB_TRY(check_each_setting(c, e));

    ob_hp_values train;
    ob_hp_defaults(&train, ob_train_hp_defs, ob_train_hp_count);
    OB_TRY(apply_settings(c, "train", &train, e));
    OB_TRY(check_sweeps(c, e));
    if (c->confirm_best && c->confirm_seeds == 0 && !c->resume)
        return ob_fail(e, OB_ERR_INPUT, "%s: confirm_configs = best, but no confirmation seeds: give confirm_seeds N "
                       "(--confirm-seeds N) or leave confirm_configs out", c->origin_confirm_configs);
    OB_TRY(check_search(c, e));
    OB_TRY(check_own_lr(c, e));
    OB_TRY(check_unused_settings(c, &train, e));
    OB_TRY(check_owners(c, notes, e)); /* valid: now note the unused ones */

    double total = 0;
    OB_TRY(count_cells(c, m, &total, e));
    m->cells = calloc((size_t)total, sizeof *m->cells);
    if (!m->cells) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %.0f cells", total);
    ob_status st = OB_OK;
    for (int w = 0; w < c->n_workloads && st == OB_OK; w++)
        st = add_workload_cells(c, ob_workload_find(c->workloads[w]), &train, m, e);
    if (st == OB_OK) st = check_cell_texts(c, m, e);
    if (st != OB_OK) {
        ob_matrix_free(m);
        return e->status;
    }
    return OB_OK;
}

/* ---- routing of every (workload, optimizer) pair ---------------------------- */

static int n_groups(const ob_optimizer_def *d)
{
    int n = 0;
    while (d->groups && d->groups[n]) n++;
    return n ? n : 1;
}

static const char *group_label(const ob_optimizer_def *d, int g)
{
    return d->groups && g < n_groups(d) ? d->groups[g] : d->name;
}

/* The cell's optimizer, routed on l; *out (may be NULL) keeps it. */
static ob_status route_cell(const ob_cell *x, ob_layout *l, ob_optim **out, ob_err *e)
{
    ob_optim *o = NULL;
    ob_status s = ob_cell_make_optim(x, &o, e);
    if (s == OB_OK) s = ob_optim_route(o, l, e);
    if (s == OB_OK && out) *out = o;
    else ob_optim_destroy(o);
    return s;
}

/* Routing x's parameters failed (e): name the user's rule that did it. With
 * hybrid routing (forced for the search, so that no parameter is left
 * without a rule) the first k rules fail for the first time when rule k
 * sends a parameter where it cannot go. When none does, explicit routing
 * left a parameter without a rule: name where routing=explicit was set. */
static ob_status blame_route(const ob_config *c, const ob_cell *x, ob_layout *l, ob_err *e)
{
    ob_cell probe = *x;
    int ri = ob_hp_index(x->opt->hp, x->opt->n_hp, "routing");
    if (ri >= 0) {
        probe.opt_hp.v[ri] = 0; /* hybrid */
        probe.opt_hp.set[ri] = 1;
    }
    int n_route = 0;
    for (int i = 0; i < x->n_options; i++) n_route += !strcmp(x->options[i]->key, "route");
    for (int k = 1; k <= n_route; k++) {
        const ob_setting *rule = NULL;
        probe.n_options = 0;
        for (int i = 0, seen = 0; i < x->n_options; i++) {
            if (!strcmp(x->options[i]->key, "route")) {
                if (seen++ >= k) continue;
                rule = x->options[i];
            }
            probe.options[probe.n_options++] = x->options[i];
        }
        ob_err e2;
        ob_err_clear(&e2);
        if (route_cell(&probe, l, NULL, &e2) != OB_OK)
            return ob_fail(e, e2.status, "%s: routing rule '%s' of %s fails on %s: %s", rule->origin, rule->value,
                           x->opt->name, x->wl->name, e2.msg);
    }
    const ob_setting *how = ri >= 0 ? find_setting(c, x->opt->name, "routing") : NULL;
    if (how)
        return ob_err_prefix(e, "%s: %s.routing=%s on %s: ", how->origin, x->opt->name, how->value, x->wl->name);
    return ob_err_prefix(e, "%s x %s: ", x->wl->name, x->opt->name);
}

/* The optimizer's own lr reaches no parameter of the pair (cells [first,
 * end) of m): say so, which group the parameters went to, what to do. */
static void warn_lr_unused(const ob_matrix *m, int first, int end, const ob_layout *l, FILE *warn)
{
    const ob_cell *x = &m->cells[first];
    const ob_optimizer_def *d = x->opt;
    char went[512] = "", lrs[512] = "";
    size_t wl = 0, ll = 0;
    int n_lr = 0;
    for (int g = 1; g < n_groups(d) && wl < sizeof went; g++) {
        int count = 0;
        for (int i = 0; i < l->n; i++) count += l->t[i].group == g;
        if (!count) continue;
        char hp[96], val[64] = "", uses[256] = "";
        snprintf(hp, sizeof hp, "%s_lr", group_label(d, g));
        int hi = ob_hp_index(d->hp, d->n_hp, hp);
        if (hi >= 0) {
            ob_hp_format(&d->hp[hi], x->opt_hp.v[hi], val, sizeof val);
            snprintf(uses, sizeof uses, ", which uses %s.%s = %s", d->name, hp, val);
        }
        wl += (size_t)snprintf(went + wl, sizeof went - wl, "%s%d tensor%s went to its '%s' group%s", wl ? "; " : "",
                               count, count == 1 ? "" : "s", group_label(d, g), uses);
    }
    for (int i = first; i < end && ll < sizeof lrs; i++) {
        if (i > first && m->cells[i].lr == m->cells[i - 1].lr) continue;
        ll += (size_t)snprintf(lrs + ll, sizeof lrs - ll, "%s%g", n_lr ? ", " : "", m->cells[i].lr);
        n_lr++;
    }
    char tune[160] = "";
    if (ob_hp_index(d->hp, d->n_hp, "adamw_lr") >= 0)
        snprintf(tune, sizeof tune, "tune %s.adamw_lr instead (--sweep %s.adamw_lr=V1,V2,...) or ", d->name,
                 d->name);
    fprintf(warn,
            "optbench: warning: %s x %s: %s's lr reaches no parameter (%s), so %s%s%s; %s"
            "leave the pair out (exclude: {%s: [%s]} in the config, or --exclude %s:%s)\n",
            x->wl->name, d->name, d->name, went, n_lr > 1 ? "its lrs " : "its lr ", lrs,
            n_lr > 1 ? " give identical runs" : " is not used by its runs", tune, x->wl->name, d->name,
            x->wl->name, d->name);
}

/* The user's routing rules seen over the matrix's pairs: a rule that matches
 * no parameter of any workload is most likely a misspelt name or tag. */
typedef struct rule_seen {
    const ob_setting *rule;
    int matched, n_pairs;
    char example[160]; /* a parameter name of a workload it was tried on */
    const char *workload; /* the first workload it was tried on */
} rule_seen;

#define MAX_RULES_SEEN 64

static void note_rules(const ob_cell *x, const ob_optim *o, const ob_layout *l, rule_seen *seen, int *n_seen)
{
    for (int i = 0, k = 0; i < x->n_options; i++) {
        if (strcmp(x->options[i]->key, "route")) continue;
        int j = 0;
        while (j < *n_seen && seen[j].rule != x->options[i]) j++;
        if (j == *n_seen) {
            if (*n_seen == MAX_RULES_SEEN) return;
            memset(&seen[j], 0, sizeof seen[j]);
            seen[j].rule = x->options[i];
            seen[j].workload = x->wl->name;
            (*n_seen)++;
        }
        seen[j].n_pairs++;
        seen[j].matched |= ob_optim_route_matches_any(o, k, l);
        if (!seen[j].example[0] && l->n > 0) {
            /* a name with a dot shows the naming best */
            int t = 0;
            while (t < l->n - 1 && !strchr(l->t[t].name, '.')) t++;
            snprintf(seen[j].example, sizeof seen[j].example, "%s", l->t[t].name);
        }
        k++;
    }
}

static ob_status check_pair(const ob_config *c, const ob_matrix *m, int first, int end, ob_device *dev, FILE *warn,
                            FILE *describe, rule_seen *seen, int *n_seen, ob_err *e)
{
    const ob_cell *x = &m->cells[first];
    ob_workload *w = NULL;
    ob_optim *o = NULL;
    ob_layout l;
    ob_layout_init(&l);
    /* the workload's swept configuration, "quadratic cond=100" */
    char wl_label[600], conf[512] = "";
    sweep_text t = {conf, sizeof conf, 0, 1, NULL}; /* for messages: as written */
    (void)each_swept(c, x->wl->name, x->wl_variant, text_swept, &t, e);
    snprintf(wl_label, sizeof wl_label, "%s%s%s", x->wl->name, conf[0] ? " " : "", conf);
    ob_status s = x->wl->create(x->wl, &x->wl_hp, dev, (uint64_t)x->seed, &w, e);
    if (s == OB_OK) s = w->vt->describe(w, &l, e);
    if (s != OB_OK) {
        if (s != OB_ERR_INPUT) { /* not the input's fault (memory): each run records it */
            if (describe) fprintf(describe, "  %s x %s: %s\n", wl_label, x->opt->name, e->msg);
            s = OB_OK;
        } else {
            /* the place of the setting the message names ("c.yaml:6: bert-tiny.dim = 65 ...") */
            char where[300];
            origins_of(c, x->wl->name, NULL, where, sizeof where);
            locate_err(c, where, e);
            if (conf[0]) {
                char note[600];
                snprintf(note, sizeof note, " (in %s's configuration %s)", x->wl->name, conf);
                err_append(e, note);
            }
        }
        goto done;
    }
    s = route_cell(x, &l, &o, e);
    if (s == OB_ERR_INPUT) s = blame_route(c, x, &l, e);
    if (s != OB_OK) goto done;
    if (describe) {
        char buf[8192];
        ob_optim_describe_routing(o, &l, buf, sizeof buf);
        fprintf(describe, "  %s x %s: %d tensor%s, %lld parameters\n%s", wl_label, x->opt->name, l.n,
                l.n == 1 ? "" : "s", (long long)ob_layout_numel(&l), buf);
    }
    note_rules(x, o, &l, seen, n_seen);
    /* does any parameter go to a group whose lr is the swept one? */
    int lr_used = 0;
    for (int i = 0; i < l.n && !lr_used; i++) lr_used = ob_optim_group_takes_lr(o, l.t[i].group);
    if (warn && n_groups(x->opt) > 1 && !lr_used && l.n > 0) warn_lr_unused(m, first, end, &l, warn);
done:
    ob_optim_destroy(o);
    if (w) w->vt->destroy(w);
    ob_layout_free(&l);
    return s;
}

ob_status ob_matrix_check_routing(const ob_config *c, const ob_matrix *m, FILE *warn, FILE *describe, ob_err *e)
{
    ob_device dev;
    memset(&dev, 0, sizeof dev);
    OB_TRY(ob_device_open(&dev, "cpu", 0, e));
    if (describe) fprintf(describe, "\nparameter routing:\n");
    ob_status s = OB_OK;
    rule_seen seen[MAX_RULES_SEEN];
    int n_seen = 0;
    /* the cells of a pair are consecutive (order: workload, optimizer, lr,
     * seed); the routing does not depend on the numbers a sweep varies, so
     * an optimizer's first configuration stands for all of them */
    for (int i = 0, end; i < m->n && s == OB_OK; i = end) {
        for (end = i + 1; end < m->n && ob_cell_same_pair(&m->cells[end], &m->cells[i]);)
            end++;
        if (m->cells[i].variant == 0) s = check_pair(c, m, i, end, &dev, warn, describe, seen, &n_seen, e);
    }
    ob_device_close(&dev);
    for (int j = 0; j < n_seen && s == OB_OK && warn; j++)
        if (!seen[j].matched)
            fprintf(warn,
                    "optbench: warning: %s: routing rule '%s' of %s matches no parameter of %s%s (parameter "
                    "names look like '%s'; `optbench run --dry-run` lists them with their tags)\n",
                    seen[j].rule->origin, seen[j].rule->value, seen[j].rule->owner,
                    seen[j].n_pairs == 1 ? "" : "any workload", seen[j].n_pairs == 1 ? seen[j].workload : "",
                    seen[j].example);
    return s;
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
            return ob_err_prefix(e, "%s: ", s->origin); /* the message names the setting */
        }
    }
    if (ob_optim_check(*out, e) != OB_OK) {
        ob_optim_destroy(*out);
        *out = NULL;
        return e->status;
    }
    return OB_OK;
}

void ob_matrix_free(ob_matrix *m)
{
    free(m->cells);
    m->cells = NULL;
    m->n = 0;
}

int ob_matrix_confirm_plan(const ob_matrix *m, int64_t *first_seed)
{
    int64_t seed0 = 0;
    int pairs = 0;
    for (int i = 0; i < m->n; i++) {
        if (m->cells[i].seed + 1 > seed0) seed0 = m->cells[i].seed + 1;
        pairs += i == 0 || !ob_cell_same_pair(&m->cells[i], &m->cells[i - 1]);
    }
    *first_seed = seed0;
    return pairs;
}

typedef struct run_key {
    int block; /* workload configuration, by its first appearance */
    int64_t seed;
    int at; /* position in the cells given */
} run_key;

static int cmp_run_key(const void *pa, const void *pb)
{
    const run_key *a = pa, *b = pb;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->seed != b->seed) return a->seed < b->seed ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

static int cmp_i64(const void *pa, const void *pb)
{
    const int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

void ob_cells_run_order(const ob_cell *const *cells, int n, const ob_cell *all, int n_all, int *order)
{
    for (int i = 0; i < n; i++) order[i] = i; /* without memory for the order: the cells as given */
    const int n_ref = all ? n_all : n;
    run_key *k = malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
    int64_t *seeds = malloc((size_t)(n_ref > 0 ? n_ref : 1) * sizeof *seeds);
    if (!k || !seeds) {
        free(k);
        free(seeds);
        return;
    }
    /* the distinct seeds of the stage, in order: a seed's rank there decides
     * whether its turn is reversed, so that a resume's or a shard's cells run
     * in the order of the whole stage */
    for (int i = 0; i < n_ref; i++) seeds[i] = all ? all[i].seed : cells[i]->seed;
    qsort(seeds, (size_t)n_ref, sizeof *seeds, cmp_i64);
    int n_seeds = 0;
    for (int i = 0; i < n_ref; i++)
        if (n_seeds == 0 || seeds[i] != seeds[n_seeds - 1]) seeds[n_seeds++] = seeds[i];
    for (int i = 0, b = 0; i < n; i++) {
        if (i > 0 && (cells[i]->wl != cells[i - 1]->wl || cells[i]->wl_variant != cells[i - 1]->wl_variant)) b++;
        k[i] = (run_key){b, cells[i]->seed, i};
    }
    qsort(k, (size_t)n, sizeof *k, cmp_run_key);
    /* the seeds of a block in turn, the cells of every other seed reversed */
    for (int i = 0; i < n;) {
        int end = i + 1;
        while (end < n && k[end].block == k[i].block && k[end].seed == k[i].seed) end++;
        const int64_t *at = bsearch(&k[i].seed, seeds, (size_t)n_seeds, sizeof *seeds, cmp_i64);
        const int odd = at ? (int)((at - seeds) & 1) : 0;
        for (int j = i; j < end; j++) order[j] = k[odd ? end - 1 - (j - i) : j].at;
        i = end;
    }
    free(k);
    free(seeds);
}
