/* harness/config.c - the benchmark configuration: YAML (libyaml document
 * API, so every node has its line) and flag-form parsing. See config.h. */
#include "harness/config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/hparams.h"
#include "harness/search.h"

void ob_config_init(ob_config *c)
{
    memset(c, 0, sizeof *c);
    c->steps = 200;
    c->checkpoint_every = OB_CKPT_EVERY_DEFAULT;
    c->checkpoint_keep = OB_CKPT_KEEP_DEFAULT;
    c->data_parallel = 1;
    strcpy(c->backend, "auto");
    strcpy(c->name, "optbench");
}

void ob_config_free(ob_config *c)
{
    free(c->text);
    c->text = NULL;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    size_t k = 0;
    while (s[k] == ' ' || s[k] == '\t') k++;
    if (k) memmove(s, s + k, n - k + 1);
}

/* Split list at commas into items (trimmed, in place in buf). An empty
 * item ("0.1,,0.2", a comma at an end) is an error; a list that is empty
 * (or blank) as a whole gives *n = 0. */
static ob_status split_items(const char *list, char *buf, size_t bufsz, char **items, int max, int *n,
                             const char *what, const char *origin, ob_err *e)
{
    *n = 0;
    if (strlen(list) >= bufsz) return ob_fail(e, OB_ERR_INPUT, "%s: %s list too long", origin, what);
    strcpy(buf, list);
    if (!buf[strspn(buf, " \t")]) return OB_OK; /* empty as a whole: the caller says so */
    int pos = 0;
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        trim(p);
        pos++;
        if (!*p)
            return ob_fail(e, OB_ERR_INPUT, "%s: '%s': item %d is empty (two commas, or a comma at an end)",
                           origin, list, pos);
        if (*n == max) return ob_fail(e, OB_ERR_INPUT, "%s: more than %d %s", origin, max, what);
        items[(*n)++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    return OB_OK;
}

ob_status ob_config_set_names(char (*dst)[64], int *n, const char *list, const char *what,
                              const char *origin, ob_err *e)
{
    char buf[2048], *items[OB_CFG_MAX_LIST];
    int k = 0;
    *n = 0;
    OB_TRY(split_items(list, buf, sizeof buf, items, OB_CFG_MAX_LIST, &k, what, origin, e));
    for (int j = 0; j < k; j++) {
        const char *tok = items[j];
        if (strlen(tok) >= 64) return ob_fail(e, OB_ERR_INPUT, "%s: %s name '%s' is too long", origin, what, tok);
        for (int i = 0; i < *n; i++)
            if (!strcmp(dst[i], tok))
                return ob_fail(e, OB_ERR_INPUT, "%s: '%s' is listed twice in the %s", origin, tok, what);
        strcpy(dst[(*n)++], tok);
    }
    if (*n == 0) return ob_fail(e, OB_ERR_INPUT, "%s: the list of %s is empty", origin, what);
    return OB_OK;
}

/* LO..HI, the whole list: the lr searched with trials (harness/search.h);
 * the list holds its low end. */
static ob_status lr_range(ob_lr_list *l, const char *tok, const ob_range *rg, int k, const char *origin, ob_err *e)
{
    if (k > 1)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rates: the range %s is one of %d items; a range is "
                       "the only one (each trial draws its lr from it)", origin, tok, k);
    if (!(rg->lo > 0) || rg->scale == OB_RANGE_LOG1M)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rates: the range %s must lie above 0, linear or log "
                       "(log:1e-4..1e-1)", origin, tok);
    if (strlen(tok) >= sizeof l->range)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rates: the range %s is too long", origin, tok);
    snprintf(l->range, sizeof l->range, "%s", tok);
    l->v[l->n++] = rg->lo;
    return OB_OK;
}

/* Point i of the n of a grid from a to b: exact at the ends; 3 significant
 * digits between, so that the lrs print and match cleanly. */
static double lr_grid_point(double a, double b, int i, int n)
{
    if (i == 0) return a;
    if (i == n - 1) return b;
    char r[32];
    snprintf(r, sizeof r, "%.3g", a * pow(b / a, (double)i / (n - 1)));
    return strtod(r, NULL);
}

/* Read the grid FROM:TO:N in tok into *a, *b and *nn (N as read, whole and
 * >= 2, but not yet checked against the room left in the list). */
static ob_status lr_grid_parse(const char *tok, double *a, double *b, double *nn, const char *origin, ob_err *e)
{
    char t[128];
    if (strlen(tok) >= sizeof t)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning-rate grid '%.40s...' is too long", origin, tok);
    snprintf(t, sizeof t, "%s", tok);
    char *c1 = strchr(t, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || strchr(c2 + 1, ':'))
        return ob_fail(e, OB_ERR_INPUT, "%s: '%s' is not a learning-rate grid FROM:TO:N (e.g. 1e-4:1e-1:7)",
                       origin, tok);
    *c1 = *c2 = '\0';
    if (ob_parse_double(t, a) != 0 || ob_parse_double(c1 + 1, b) != 0 || ob_parse_double(c2 + 1, nn) != 0 ||
        !(*a > 0) || !(*b > *a) || !isfinite(*b) || *nn != floor(*nn) || *nn < 2)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning-rate grid '%s': FROM:TO:N needs 0 < FROM < TO and a "
                       "whole N >= 2 (e.g. 1e-4:1e-1:7)", origin, tok);
    return OB_OK;
}

/* A:B:N, N points log-spaced from A to B, each from tok. */
static ob_status lr_grid(ob_lr_list *l, const char **from, const char *tok, const char *origin, ob_err *e)
{
    double a = 0, b = 0, nn = 0;
    OB_TRY(lr_grid_parse(tok, &a, &b, &nn, origin, e));
    if (l->n + nn > OB_CFG_MAX_LIST)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rates: at most %d in all", origin, OB_CFG_MAX_LIST);
    const int n = (int)nn;
    for (int i = 0; i < n; i++) {
        from[l->n] = tok;
        l->v[l->n++] = lr_grid_point(a, b, i, n);
    }
    return OB_OK;
}

/* One lr, a finite number > 0, from tok. */
static ob_status lr_value(ob_lr_list *l, const char **from, const char *tok, const char *origin, ob_err *e)
{
    double v;
    int prc = ob_parse_double(tok, &v);
    if (prc != 0 || !isfinite(v)) {
        if (prc == -2)
            return ob_fail(e, OB_ERR_INPUT, "%s: learning rate '%s' is out of range (a double holds "
                           "about 1e-308 to 1e308)", origin, tok);
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rate '%s' is not a %snumber", origin, tok,
                       prc == 0 ? "finite " : "");
    }
    if (v <= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rate %s must be > 0", origin, tok);
    if (l->n == OB_CFG_MAX_LIST)
        return ob_fail(e, OB_ERR_INPUT, "%s: learning rates: at most %d in all", origin, OB_CFG_MAX_LIST);
    from[l->n] = tok;
    l->v[l->n++] = v;
    return OB_OK;
}

/* Item tok of the k of an lr list: a range, a grid or one lr; from gets tok
 * for each lr it adds (not for a range, the list's only lr). */
static ob_status lr_item(ob_lr_list *l, const char **from, const char *tok, int k, const char *origin, ob_err *e)
{
    ob_range rg;
    int kind = strstr(tok, "..") ? ob_range_parse(tok, &rg, e) : 0;
    if (kind < 0) return ob_err_prefix(e, "%s: learning rates: ", origin);
    if (kind > 0) return lr_range(l, tok, &rg, k, origin, e);
    if (strchr(tok, ':')) return lr_grid(l, from, tok, origin, e);
    return lr_value(l, from, tok, origin, e);
}

/* An lr twice would run its cells twice, and the statistics would count
 * each seed twice (0.1,1e-2:1e-1:2 repeats 0.1; a grid's inner points
 * round to 3 digits, so 1:1.01:5 repeats itself). Two that agree to the 6
 * digits runs and reports label them with (0.3 and 0.3000000001, one float
 * apart or none) are one lr to a reader. */
static ob_status lrs_distinct(const ob_lr_list *l, const char *const *from, const char *origin, ob_err *e)
{
    for (int i = 0; i < l->n; i++)
        for (int j = 0; j < i; j++) {
            char a[32], b[32];
            snprintf(a, sizeof a, "%.6g", l->v[i]);
            snprintf(b, sizeof b, "%.6g", l->v[j]);
            if (l->v[i] != l->v[j] && strcmp(a, b)) continue;
            if (from[i] == from[j])
                return ob_fail(e, OB_ERR_INPUT, "%s: learning-rate grid '%s' gives %.6g twice: its points round to 3 "
                               "significant digits (use fewer points or a wider range)", origin, from[i], l->v[i]);
            return ob_fail(e, OB_ERR_INPUT, "%s: learning rate %.6g is listed twice ('%s' and '%s'; give each lr once)",
                           origin, l->v[i], from[j], from[i]);
        }
    return OB_OK;
}

ob_status ob_config_set_lrs(ob_lr_list *l, const char *list, const char *origin, ob_err *e)
{
    char buf[2048], *items[OB_CFG_MAX_LIST];
    const char *from[OB_CFG_MAX_LIST]; /* the item each lr came from */
    int k = 0;
    l->n = 0;
    snprintf(l->origin, sizeof l->origin, "%s", origin);
    OB_TRY(split_items(list, buf, sizeof buf, items, OB_CFG_MAX_LIST, &k, "learning rates", origin, e));
    l->range[0] = '\0';
    for (int j = 0; j < k; j++) OB_TRY(lr_item(l, from, items[j], k, origin, e));
    if (l->n == 0) return ob_fail(e, OB_ERR_INPUT, "%s: the list of learning rates is empty", origin);
    return lrs_distinct(l, from, origin, e);
}

ob_status ob_config_parse_int(const char *s, int64_t lo, int64_t hi, const char *what, const char *origin,
                              int64_t *out, ob_err *e)
{
    double v;
    if (ob_parse_double(s, &v) != 0 || v != floor(v))
        return ob_fail(e, OB_ERR_INPUT, "%s: %s '%s' is not a whole number", origin, what, s);
    if (v < (double)lo)
        return ob_fail(e, OB_ERR_INPUT, "%s: %s must be >= %lld (got %s)", origin, what, (long long)lo, s);
    if (v > (double)hi)
        return ob_fail(e, OB_ERR_INPUT, "%s: %s %s is out of range (max %lld)", origin, what, s, (long long)hi);
    *out = (int64_t)v;
    return OB_OK;
}

/* "3" means seeds 0,1,2; "4,9" (or is_list) lists them; "7..9" is 7,8,9. */
ob_status ob_config_set_seeds(ob_config *c, const char *text, int is_list, const char *origin, ob_err *e)
{
    snprintf(c->origin_seeds, sizeof c->origin_seeds, "%s", origin);
    const char *dots = strstr(text, "..");
    if (!is_list && dots && !strchr(text, ',')) {
        char lo_s[64];
        size_t ll = (size_t)(dots - text);
        if (ll == 0 || ll >= sizeof lo_s)
            return ob_fail(e, OB_ERR_INPUT, "%s: seeds '%s' is not a range A..B", origin, text);
        memcpy(lo_s, text, ll);
        lo_s[ll] = '\0';
        int64_t lo = 0, hi = 0;
        OB_TRY(ob_config_parse_int(lo_s, 0, OB_CFG_MAX_SEED, "first seed of the range", origin, &lo, e));
        OB_TRY(ob_config_parse_int(dots + 2, lo, OB_CFG_MAX_SEED, "last seed of the range", origin, &hi, e));
        if (hi - lo + 1 > OB_CFG_MAX_LIST) return ob_fail(e, OB_ERR_INPUT, "%s: at most %d seeds", origin, OB_CFG_MAX_LIST);
        c->n_seeds = (int)(hi - lo + 1);
        for (int i = 0; i < c->n_seeds; i++) c->seeds[i] = lo + i;
        return OB_OK;
    }
    if (!is_list && !strchr(text, ',')) {
        int64_t n = 0;
        OB_TRY(ob_config_parse_int(text, 0, OB_CFG_MAX_SEED, "seeds (a count, or a list like 4,9)", origin, &n, e));
        if (n == 0)
            return ob_fail(e, OB_ERR_INPUT,
                           "%s: seeds 0: one number is a count of seeds (seeds 0..N-1), at least 1; for seed 0 "
                           "alone write 0..0 (in a config file also seeds: [0])", origin);
        if (n > OB_CFG_MAX_LIST) return ob_fail(e, OB_ERR_INPUT, "%s: at most %d seeds", origin, OB_CFG_MAX_LIST);
        c->n_seeds = (int)n;
        for (int i = 0; i < n; i++) c->seeds[i] = i;
        return OB_OK;
    }
    char buf[2048], *items[OB_CFG_MAX_LIST];
    int k = 0;
    c->n_seeds = 0;
    OB_TRY(split_items(text, buf, sizeof buf, items, OB_CFG_MAX_LIST, &k, "seeds", origin, e));
    for (int j = 0; j < k; j++) {
        int64_t s = 0;
        OB_TRY(ob_config_parse_int(items[j], 0, OB_CFG_MAX_SEED, "seed", origin, &s, e));
        for (int i = 0; i < c->n_seeds; i++)
            if (c->seeds[i] == s) return ob_fail(e, OB_ERR_INPUT, "%s: seed %lld is listed twice", origin, (long long)s);
        c->seeds[c->n_seeds++] = s;
    }
    if (c->n_seeds == 0) return ob_fail(e, OB_ERR_INPUT, "%s: the list of seeds is empty", origin);
    return OB_OK;
}

/* A setting (sweep 0) or a sweep (1: value lists the values). */
static ob_status add_setting(ob_config *c, const char *owner, const char *key, const char *value, int sweep,
                             const char *origin, ob_err *e)
{
    if (strlen(owner) >= 64 || strlen(key) >= 64 || strlen(value) >= sizeof c->settings[0].value)
        return ob_fail(e, OB_ERR_INPUT, "%s: setting '%s.%s' is too long (at most %zu characters)", origin, owner, key,
                       sizeof c->settings[0].value - 1);
    /* the benchmark stores its configuration as YAML, which is Unicode text */
    if (ob_utf8_check(owner) >= 0 || ob_utf8_check(key) >= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: a setting's name is not UTF-8 text", origin);
    long bad = ob_utf8_check(value);
    if (bad >= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s: the value of %s.%s is not UTF-8 text (byte %ld); give it as UTF-8 "
                       "(a file name too: rename the file)", origin, owner, key, bad + 1);
    /* A later setting of the same key replaces an earlier one (flags over
     * file); routing rules accumulate, in order, the file's and the
     * command line's each (the command line's replace the file's, below). */
    const int flag = !strcmp(origin, "--set") || !strcmp(origin, "--sweep");
    for (int i = 0; strcmp(key, "route") != 0 && i < c->n_settings; i++) {
        ob_setting *s = &c->settings[i];
        if (!strcmp(s->owner, owner) && !strcmp(s->key, key)) {
            /* in one file a key has one value or one sweep (flags replace the file's) */
            if (!s->flag && !flag)
                return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s is %s in this file (also at %s); keep one", origin, owner,
                               key, s->sweep == sweep ? (sweep ? "swept twice" : "set twice") : "both set and swept",
                               s->origin);
            /* on the command line too: a later flag would silently drop the other */
            if (s->flag && flag)
                return ob_fail(e, OB_ERR_INPUT, "%s: %s.%s is %s on the command line; give %s", origin, owner, key,
                               s->sweep != sweep ? "both set (--set) and swept (--sweep)"
                               : sweep           ? "swept twice (--sweep)"
                                                 : "set twice (--set)",
                               s->sweep != sweep ? "one of the two" : "it once");
            snprintf(s->value, sizeof s->value, "%s", value);
            snprintf(s->origin, sizeof s->origin, "%s", origin);
            s->sweep = sweep;
            s->flag = flag;
            return OB_OK;
        }
    }
    if (flag && !strcmp(key, "route")) {
        /* the command line's rules of an owner replace the file's (flags
         * over file: the first match wins, so a rule added after them could
         * go unused); they add up among themselves */
        int j = 0;
        for (int i = 0; i < c->n_settings; i++) {
            const ob_setting *t = &c->settings[i];
            if (!t->flag && !strcmp(t->owner, owner) && !strcmp(t->key, "route")) continue;
            if (j != i) c->settings[j] = c->settings[i];
            j++;
        }
        c->n_settings = j;
    }
    if (c->n_settings == OB_CFG_MAX_SETTINGS) return ob_fail(e, OB_ERR_INPUT, "%s: too many settings", origin);
    /* An owner's routing rules stay together, in order: a rule given after
     * another setting of the owner goes right after its last rule, so the
     * settings read the same written back as YAML (route: [...] is one key). */
    int at = c->n_settings;
    if (!strcmp(key, "route"))
        for (int i = c->n_settings - 1; i >= 0; i--)
            if (!strcmp(c->settings[i].owner, owner) && !strcmp(c->settings[i].key, "route")) {
                at = i + 1;
                break;
            }
    memmove(&c->settings[at + 1], &c->settings[at], (size_t)(c->n_settings - at) * sizeof c->settings[0]);
    c->n_settings++;
    ob_setting *s = &c->settings[at];
    snprintf(s->owner, sizeof s->owner, "%s", owner);
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->value, sizeof s->value, "%s", value);
    snprintf(s->origin, sizeof s->origin, "%s", origin);
    s->sweep = sweep;
    s->flag = flag;
    return OB_OK;
}

ob_status ob_config_set_confirm_configs(ob_config *c, const char *value, const char *origin, ob_err *e)
{
    if (strcmp(value, "all") && strcmp(value, "best"))
        return ob_fail(e, OB_ERR_INPUT, "%s: confirm_configs '%s' is not one of all (every configuration's best lr, "
                       "the default), best (each optimizer's best configuration only)", origin, value);
    c->confirm_best = !strcmp(value, "best");
    return OB_OK;
}

ob_status ob_config_set_name(ob_config *c, const char *name, const char *origin, ob_err *e)
{
    if (!*name) {
        if (!strcmp(origin, "--name"))
            return ob_fail(e, OB_ERR_INPUT, "--name is empty: give the benchmark a name (e.g. --name nightly), or "
                           "leave --name out for the name 'optbench'");
        return ob_fail(e, OB_ERR_INPUT, "%s: name is empty: give the benchmark a name, or remove the key for the "
                       "name 'optbench'", origin);
    }
    if (strlen(name) >= sizeof c->name)
        return ob_fail(e, OB_ERR_INPUT, "%s: the name is %zu bytes long; at most %zu", origin, strlen(name),
                       sizeof c->name - 1);
    long bad = ob_utf8_check(name);
    if (bad >= 0) return ob_fail(e, OB_ERR_INPUT, "%s: the name is not UTF-8 text (byte %ld)", origin, bad + 1);
    snprintf(c->name, sizeof c->name, "%s", name);
    return OB_OK;
}

ob_status ob_config_add_setting(ob_config *c, const char *owner, const char *key, const char *value,
                                const char *origin, ob_err *e)
{
    return add_setting(c, owner, key, value, 0, origin, e);
}

ob_status ob_config_add_sweep_values(ob_config *c, const char *owner, const char *key, const char *values,
                                     const char *origin, ob_err *e)
{
    if (!strcmp(key, "route"))
        return ob_fail(e, OB_ERR_INPUT, "%s: %s.route cannot be swept (routing rules are text, not a value)",
                       origin, owner);
    char buf[2048], *items[OB_CFG_MAX_LIST], what[160];
    int n = 0;
    snprintf(what, sizeof what, "values of %s.%s", owner, key);
    OB_TRY(split_items(values, buf, sizeof buf, items, OB_CFG_MAX_LIST, &n, what, origin, e));
    if (n == 0) return ob_fail(e, OB_ERR_INPUT, "%s: the sweep of %s.%s has no values", origin, owner, key);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(items[i], items[j]))
                return ob_fail(e, OB_ERR_INPUT, "%s: the sweep of %s.%s lists '%s' twice", origin, owner, key,
                               items[i]);
    char joined[sizeof c->settings[0].value];
    size_t l = 0;
    for (int i = 0; i < n; i++) {
        size_t k = strlen(items[i]);
        if (l + k + 2 > sizeof joined)
            return ob_fail(e, OB_ERR_INPUT, "%s: the values of the sweep of %s.%s are too long", origin, owner, key);
        if (i) joined[l++] = ',';
        memcpy(joined + l, items[i], k + 1);
        l += k;
    }
    return add_setting(c, owner, key, joined, 1, origin, e);
}

/* OWNER.KEY=REST -> owner, key, rest (what names the form in messages) */
static ob_status split_assignment(const char *assignment, const char *origin, const char *example, char owner[64],
                                  char key[64], const char **rest, ob_err *e)
{
    const char *eq = strchr(assignment, '=');
    const char *dot = strchr(assignment, '.');
    if (!eq || !dot || dot > eq || dot == assignment || dot + 1 == eq)
        return ob_fail(e, OB_ERR_INPUT, "%s '%s': expected %s", origin, assignment, example);
    size_t lo = (size_t)(dot - assignment), lk = (size_t)(eq - dot - 1);
    if (lo >= 64 || lk >= 64) return ob_fail(e, OB_ERR_INPUT, "%s '%s': name too long", origin, assignment);
    memcpy(owner, assignment, lo);
    owner[lo] = '\0';
    memcpy(key, dot + 1, lk);
    key[lk] = '\0';
    if (!eq[1]) return ob_fail(e, OB_ERR_INPUT, "%s '%s': the value is empty", origin, assignment);
    *rest = eq + 1;
    return OB_OK;
}

ob_status ob_config_add_sweep(ob_config *c, const char *assignment, const char *origin, ob_err *e)
{
    char owner[64], key[64];
    const char *values = NULL;
    OB_TRY(split_assignment(assignment, origin, "OWNER.KEY=V1,V2,..., e.g. adam.beta2=0.95,0.999", owner, key,
                            &values, e));
    return ob_config_add_sweep_values(c, owner, key, values, origin, e);
}

ob_status ob_config_add_set(ob_config *c, const char *assignment, const char *origin, ob_err *e)
{
    char owner[64], key[64];
    const char *value = NULL;
    OB_TRY(split_assignment(assignment, origin, "OWNER.KEY=VALUE, e.g. adam.beta2=0.95 or train.clip_norm=1", owner,
                            key, &value, e));
    return ob_config_add_setting(c, owner, key, value, origin, e);
}

ob_status ob_config_set_shard(ob_config *c, const char *text, const char *origin, ob_err *e)
{
    const char *slash = strchr(text, '/');
    char a[32], b[32];
    size_t la = slash ? (size_t)(slash - text) : 0;
    double k, n;
    if (!slash || la == 0 || la >= sizeof a || strlen(slash + 1) >= sizeof b)
        return ob_fail(e, OB_ERR_INPUT, "%s '%s': expected K/N, e.g. 0/4 (shard K of N, 0 <= K < N)",
                       origin, text);
    memcpy(a, text, la);
    a[la] = '\0';
    snprintf(b, sizeof b, "%s", slash + 1);
    if (ob_parse_double(a, &k) != 0 || ob_parse_double(b, &n) != 0 || k != floor(k) || n != floor(n) ||
        n < 1 || n > 1e6 || k < 0 || k >= n)
        return ob_fail(e, OB_ERR_INPUT, "%s '%s': expected K/N with whole numbers 0 <= K < N <= 1000000",
                       origin, text);
    c->shard_k = (int)k;
    c->shard_n = (int)n;
    snprintf(c->shard_origin, sizeof c->shard_origin, "%s", origin);
    return OB_OK;
}

ob_status ob_config_shard_from_env(ob_config *c, int *used, ob_err *e)
{
    if (used) *used = 0;
    if (c->shard_n > 0) return OB_OK;
    const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
    const char *min = getenv("SLURM_ARRAY_TASK_MIN");
    if (!id || !count || !*id || !*count) return OB_OK;
    double k, n, m = 0;
    if (ob_parse_double(id, &k) != 0 || k != floor(k) || ob_parse_double(count, &n) != 0 || n != floor(n) ||
        (min && *min && (ob_parse_double(min, &m) != 0 || m != floor(m))))
        return ob_fail(e, OB_ERR_INPUT,
                       "SLURM_ARRAY_TASK_ID='%s' / SLURM_ARRAY_TASK_COUNT='%s' are not whole numbers", id, count);
    k -= m;
    if (n < 1 || n > 1e6 || k < 0 || k >= n)
        return ob_fail(e, OB_ERR_INPUT,
                       "SLURM_ARRAY_TASK_ID=%s (minus SLURM_ARRAY_TASK_MIN=%s) is outside 0..%g of "
                       "SLURM_ARRAY_TASK_COUNT=%s; submit with --array=0-%g, or give --shard K/N",
                       id, min && *min ? min : "0", n - 1, count, n - 1);
    c->shard_k = (int)k;
    c->shard_n = (int)n;
    snprintf(c->shard_origin, sizeof c->shard_origin, "SLURM_ARRAY_TASK_ID");
    if (used) *used = 1;
    return OB_OK;
}

ob_status ob_config_set_devices(ob_config *c, const char *list, const char *origin, ob_err *e)
{
    char buf[1024], *items[OB_CFG_MAX_DEVICES];
    int k = 0;
    c->n_devices = 0;
    OB_TRY(split_items(list, buf, sizeof buf, items, OB_CFG_MAX_DEVICES, &k, "devices", origin, e));
    for (int j = 0; j < k; j++) {
        int64_t d = 0;
        OB_TRY(ob_config_parse_int(items[j], 0, 1023, "device index", origin, &d, e));
        for (int i = 0; i < c->n_devices; i++)
            if (c->devices[i] == d)
                return ob_fail(e, OB_ERR_INPUT, "%s: device %s is listed twice", origin, items[j]);
        c->devices[c->n_devices++] = (int)d;
    }
    if (c->n_devices == 0) return ob_fail(e, OB_ERR_INPUT, "%s: the list of devices is empty", origin);
    return OB_OK;
}

ob_status ob_config_add_exclude(ob_config *c, const char *workload, const char *optimizer, const char *origin,
                                ob_err *e)
{
    if (!*workload || !*optimizer)
        return ob_fail(e, OB_ERR_INPUT, "%s: exclude: a workload and an optimizer name are needed", origin);
    if (strlen(workload) >= 64 || strlen(optimizer) >= 64)
        return ob_fail(e, OB_ERR_INPUT, "%s: exclude: name too long", origin);
    if (ob_config_excluded(c, workload, optimizer)) return OB_OK;
    if (c->n_excludes == OB_CFG_MAX_EXCLUDES)
        return ob_fail(e, OB_ERR_INPUT, "%s: exclude: more than %d pairs", origin, OB_CFG_MAX_EXCLUDES);
    ob_exclude *x = &c->excludes[c->n_excludes++];
    snprintf(x->workload, sizeof x->workload, "%s", workload);
    snprintf(x->optimizer, sizeof x->optimizer, "%s", optimizer);
    snprintf(x->origin, sizeof x->origin, "%s", origin);
    return OB_OK;
}

ob_status ob_config_add_exclude_text(ob_config *c, const char *text, const char *origin, ob_err *e)
{
    const char *colon = strchr(text, ':');
    char wl[64];
    size_t lw = colon ? (size_t)(colon - text) : 0;
    if (!colon || lw == 0 || lw >= sizeof wl || !colon[1])
        return ob_fail(e, OB_ERR_INPUT, "%s '%s': expected WORKLOAD:OPTIMIZER[,OPTIMIZER...], e.g. quadratic:muon,root",
                       origin, text);
    memcpy(wl, text, lw);
    wl[lw] = '\0';
    trim(wl);
    char buf[2048], *items[OB_CFG_MAX_LIST];
    int k = 0;
    OB_TRY(split_items(colon + 1, buf, sizeof buf, items, OB_CFG_MAX_LIST, &k, "optimizers", origin, e));
    if (k == 0) return ob_fail(e, OB_ERR_INPUT, "%s '%s': no optimizer after ':'", origin, text);
    for (int i = 0; i < k; i++) OB_TRY(ob_config_add_exclude(c, wl, items[i], origin, e));
    return OB_OK;
}

const ob_exclude *ob_config_excluded(const ob_config *c, const char *workload, const char *optimizer)
{
    for (int i = 0; i < c->n_excludes; i++)
        if (!strcmp(c->excludes[i].workload, workload) && !strcmp(c->excludes[i].optimizer, optimizer))
            return &c->excludes[i];
    return NULL;
}

const ob_lr_list *ob_config_lrs_for(const ob_config *c, const char *optimizer)
{
    const ob_lr_list *global = NULL;
    for (int i = 0; i < c->n_lr_lists; i++) {
        if (!strcmp(c->lrs[i].optimizer, optimizer)) return &c->lrs[i];
        if (!c->lrs[i].optimizer[0]) global = &c->lrs[i];
    }
    return global;
}

/* ---- YAML ------------------------------------------------------------------ */

typedef struct ycx {
    yaml_document_t *doc;
    const char *path;
    ob_config *c;
    ob_err *e;
} ycx;

static void where(const ycx *y, const yaml_node_t *n, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%lu", y->path, (unsigned long)n->start_mark.line + 1);
}

static const char *kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

static const char *scalar(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* A plain scalar over several lines with " - " in it: YAML joins the lines
 * of a plain value, so a '- ' item indented deeper than the item above
 * becomes part of that item ("sgd - adam"), which no name or number is. */
static ob_status joined_item(const ycx *y, const yaml_node_t *n, const char *key)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        n->end_mark.line == n->start_mark.line || !strstr(scalar(n), " - "))
        return OB_OK;
    char shown[256];
    return ob_fail(y->e, OB_ERR_INPUT, "%s:%lu: %s: '%s' is one value of lines %lu to %lu: a '- ' item indented "
                   "deeper than the item above it continues that item; start the items in one column", y->path,
                   (unsigned long)n->start_mark.line + 1, key, ob_printable(scalar(n), shown, sizeof shown),
                   (unsigned long)n->start_mark.line + 1, (unsigned long)n->end_mark.line + 1);
}

/* A scalar, or a list of scalars joined by commas. */
static ob_status list_text(const ycx *y, const yaml_node_t *n, const char *key, char *out, size_t len)
{
    char at[256];
    where(y, n, at, sizeof at);
    if (n->type == YAML_SCALAR_NODE) {
        OB_TRY(joined_item(y, n, key));
        if (strlen(scalar(n)) >= len) return ob_fail(y->e, OB_ERR_INPUT, "%s: %s: value too long", at, key);
        strcpy(out, scalar(n));
        return OB_OK;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return ob_fail(y->e, OB_ERR_INPUT, "%s: %s must be a list or a comma-separated string, not %s", at, key, kind_name(n));
    out[0] = '\0';
    size_t used = 0;
    int count = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *item = yaml_document_get_node(y->doc, *it);
        if (item->type != YAML_SCALAR_NODE) {
            where(y, item, at, sizeof at);
            return ob_fail(y->e, OB_ERR_INPUT, "%s: %s: each entry must be a scalar, not %s", at, key, kind_name(item));
        }
        OB_TRY(joined_item(y, item, key));
        size_t l = strlen(scalar(item));
        if (used + l + 2 >= len) return ob_fail(y->e, OB_ERR_INPUT, "%s: %s: list too long", at, key);
        if (count++) out[used++] = ',';
        memcpy(out + used, scalar(item), l + 1);
        used += l;
    }
    if (count == 0) return ob_fail(y->e, OB_ERR_INPUT, "%s: %s is an empty list", at, key);
    return OB_OK;
}

/* A scalar that YAML reads as null: nothing after the ':', '~' or null. */
static int null_scalar(const yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL"));
}

static ob_status want_scalar(const ycx *y, const yaml_node_t *n, const char *key)
{
    if (n->type == YAML_SCALAR_NODE) return OB_OK;
    char at[256];
    where(y, n, at, sizeof at);
    return ob_fail(y->e, OB_ERR_INPUT, "%s: %s must be a single value, not %s", at, key, kind_name(n));
}

/* Iterate a mapping, rejecting duplicate keys. */
typedef ob_status (*pair_fn)(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg);

static ob_status each_pair(const ycx *y, const yaml_node_t *map, const char *what, pair_fn fn, void *arg)
{
    char at[256];
    if (map->type != YAML_MAPPING_NODE) {
        where(y, map, at, sizeof at);
        return ob_fail(y->e, OB_ERR_INPUT, "%s: %s must be a mapping (key: value), not %s", at, what, kind_name(map));
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
        if (k->type != YAML_SCALAR_NODE) {
            where(y, k, at, sizeof at);
            return ob_fail(y->e, OB_ERR_INPUT, "%s: keys of %s must be plain names", at, what);
        }
        if (!strcmp(scalar(k), "<<") && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            where(y, k, at, sizeof at);
            return ob_fail(y->e, OB_ERR_INPUT, "%s: '<<' (YAML 1.1's merge key) is not read in %s: write the "
                           "keys out (an anchor and alias, &name and *name, may repeat a whole value)", at, what);
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = yaml_document_get_node(y->doc, q->key);
            if (k2->type == YAML_SCALAR_NODE && !strcmp(scalar(k2), scalar(k))) {
                where(y, k, at, sizeof at);
                return ob_fail(y->e, OB_ERR_INPUT, "%s: key '%s' appears twice in %s (first at line %lu)", at,
                               scalar(k), what, (unsigned long)k2->start_mark.line + 1);
            }
        }
        OB_TRY(fn(y, k, v, arg));
    }
    return OB_OK;
}

static ob_status owner_values(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    const char *owner = arg;
    char at[256];
    where(y, k, at, sizeof at);
    /* route: a list of rules, each its own setting, in order */
    if (!strcmp(scalar(k), "route") && v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            yaml_node_t *item = yaml_document_get_node(y->doc, *it);
            where(y, item, at, sizeof at);
            OB_TRY(want_scalar(y, item, "route"));
            OB_TRY(ob_config_add_setting(y->c, owner, "route", scalar(item), at, y->e));
        }
        return OB_OK;
    }
    if (v->type == YAML_SEQUENCE_NODE) { /* several values are a sweep, not a setting */
        where(y, v, at, sizeof at);
        return ob_fail(y->e, OB_ERR_INPUT,
                       "%s: %s.%s must be a single value, not a list (to run each value, sweep it: "
                       "'sweep: {%s: {%s: [...]}}' or --sweep %s.%s=V1,V2)",
                       at, owner, scalar(k), owner, scalar(k), owner, scalar(k));
    }
    OB_TRY(want_scalar(y, v, scalar(k)));
    return ob_config_add_setting(y->c, owner, scalar(k), scalar(v), at, y->e);
}

/* sweep: {OWNER: {KEY: [V1, V2, ...]}} */
static ob_status sweep_values(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    const char *owner = arg;
    char at[256], text[2048], what[160];
    where(y, v, at, sizeof at);
    snprintf(what, sizeof what, "sweep: %s.%s", owner, scalar(k));
    OB_TRY(list_text(y, v, what, text, sizeof text));
    return ob_config_add_sweep_values(y->c, owner, scalar(k), text, at, y->e);
}

static ob_status sweep_map(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    (void)arg;
    char what[128];
    const char *dot = strchr(scalar(k), '.');
    if (v->type != YAML_MAPPING_NODE && dot && dot > scalar(k) && dot[1]) {
        char at[256];
        where(y, k, at, sizeof at);
        return ob_fail(y->e, OB_ERR_INPUT, "%s: sweep: '%s' is OWNER.KEY, which the config writes nested: "
                       "sweep: {%.*s: {%s: [...]}} (--sweep %s=V1,V2 on the command line)", at, scalar(k),
                       (int)(dot - scalar(k)), scalar(k), dot + 1, scalar(k));
    }
    snprintf(what, sizeof what, "the sweep of '%s'", scalar(k));
    return each_pair(y, v, what, sweep_values, (void *)scalar(k));
}

static ob_status owner_map(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    (void)arg;
    char what[128];
    snprintf(what, sizeof what, "the settings of '%s'", scalar(k));
    return each_pair(y, v, what, owner_values, (void *)scalar(k));
}

static ob_status lr_map(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    (void)arg;
    char at[256], text[2048];
    ob_config *c = y->c;
    where(y, v, at, sizeof at);
    OB_TRY(list_text(y, v, "lrs", text, sizeof text));
    if (c->n_lr_lists == OB_CFG_MAX_LIST) return ob_fail(y->e, OB_ERR_INPUT, "%s: too many lr lists", at);
    ob_lr_list *l = &c->lrs[c->n_lr_lists];
    memset(l, 0, sizeof *l);
    snprintf(l->optimizer, sizeof l->optimizer, "%s", scalar(k));
    OB_TRY(ob_config_set_lrs(l, text, at, y->e));
    c->n_lr_lists++;
    return OB_OK;
}

/* exclude: {WORKLOAD: [OPTIMIZER, ...]}; each name keeps its own line */
static ob_status exclude_map(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    (void)arg;
    char at[256], text[2048];
    if (v->type == YAML_SEQUENCE_NODE) {
        if (v->data.sequence.items.start == v->data.sequence.items.top) {
            where(y, v, at, sizeof at);
            return ob_fail(y->e, OB_ERR_INPUT, "%s: exclude: '%s' has an empty list of optimizers", at, scalar(k));
        }
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            yaml_node_t *item = yaml_document_get_node(y->doc, *it);
            where(y, item, at, sizeof at);
            OB_TRY(want_scalar(y, item, "each entry of exclude"));
            OB_TRY(ob_config_add_exclude(y->c, scalar(k), scalar(item), at, y->e));
        }
        return OB_OK;
    }
    where(y, v, at, sizeof at);
    OB_TRY(list_text(y, v, "exclude", text, sizeof text));
    char buf[2048], *items[OB_CFG_MAX_LIST];
    int n = 0;
    OB_TRY(split_items(text, buf, sizeof buf, items, OB_CFG_MAX_LIST, &n, "optimizers", at, y->e));
    if (n == 0) return ob_fail(y->e, OB_ERR_INPUT, "%s: exclude: '%s' has an empty list of optimizers", at, scalar(k));
    for (int i = 0; i < n; i++) OB_TRY(ob_config_add_exclude(y->c, scalar(k), items[i], at, y->e));
    return OB_OK;
}

static const char *const top_keys[] = {"name", "workloads", "optimizers", "lrs", "seeds", "steps",
                                       "eval_every", "backend", "db", "hparams", "workload_params", "train",
                                       "checkpoint_every", "checkpoint_keep", "checkpoint_dir", "exclude",
                                       "confirm_seeds", "confirm_configs", "sweep", "trials", "search_seed",
                                       "search_draws", "studies", "data_parallel"};

/* name: the benchmark's name (a null value, nothing after the ':', reads as
 * empty, which ob_config_set_name rejects). */
static ob_status top_name(const ycx *y, const yaml_node_t *v, const char *at)
{
    OB_TRY(want_scalar(y, v, "name"));
    return ob_config_set_name(y->c, null_scalar(v) ? "" : scalar(v), at, y->e);
}

/* workloads or optimizers (key): the names into dst and *n, with where they
 * were given in origin. */
static ob_status top_names(const ycx *y, const char *key, const yaml_node_t *v, char (*dst)[64], int *n,
                           char *origin, size_t origin_len, const char *at)
{
    char text[2048];
    OB_TRY(list_text(y, v, key, text, sizeof text));
    snprintf(origin, origin_len, "%s", at);
    return ob_config_set_names(dst, n, text, key, at, y->e);
}

/* lrs: a mapping gives each optimizer its own list; a list (or one value)
 * is the list of the optimizers without one, in place of such a list set
 * before. */
static ob_status top_lrs(const ycx *y, const yaml_node_t *v, const char *at)
{
    ob_config *c = y->c;
    char text[2048];
    if (v->type == YAML_MAPPING_NODE && v->data.mapping.pairs.start == v->data.mapping.pairs.top)
        return ob_fail(y->e, OB_ERR_INPUT, "%s: lrs is an empty mapping (give {optimizer: [lr, ...]} or a list)", at);
    if (v->type == YAML_MAPPING_NODE) return each_pair(y, v, "lrs", lr_map, NULL);
    OB_TRY(list_text(y, v, "lrs", text, sizeof text));
    ob_lr_list *l = NULL;
    for (int i = 0; i < c->n_lr_lists; i++)
        if (!c->lrs[i].optimizer[0]) l = &c->lrs[i];
    if (!l) l = &c->lrs[c->n_lr_lists++];
    memset(l, 0, sizeof *l);
    return ob_config_set_lrs(l, text, at, y->e);
}

/* seeds: a count, a range or a list (a YAML list is always a list). */
static ob_status top_seeds(const ycx *y, const yaml_node_t *v, const char *at)
{
    char text[2048];
    OB_TRY(list_text(y, v, "seeds", text, sizeof text));
    return ob_config_set_seeds(y->c, text, v->type == YAML_SEQUENCE_NODE, at, y->e);
}

/* A whole number from lo to hi into *out; where it was given goes to
 * origin first, when there is one (NULL: none is kept). */
static ob_status top_int64(const ycx *y, const char *key, const yaml_node_t *v, int64_t lo, int64_t hi,
                           int64_t *out, char *origin, size_t origin_len, const char *at)
{
    OB_TRY(want_scalar(y, v, key));
    if (origin) snprintf(origin, origin_len, "%s", at);
    return ob_config_parse_int(scalar(v), lo, hi, key, at, out, y->e);
}

/* A whole number from lo to hi into the int *out, left alone on an error. */
static ob_status top_int(const ycx *y, const char *key, const yaml_node_t *v, int64_t lo, int64_t hi, int *out,
                         const char *at)
{
    int64_t n = 0;
    OB_TRY(want_scalar(y, v, key));
    OB_TRY(ob_config_parse_int(scalar(v), lo, hi, key, at, &n, y->e));
    *out = (int)n;
    return OB_OK;
}

/* confirm_configs: which configurations the confirmation stage runs. */
static ob_status top_confirm_configs(const ycx *y, const yaml_node_t *v, const char *at)
{
    ob_config *c = y->c;
    OB_TRY(want_scalar(y, v, "confirm_configs"));
    snprintf(c->origin_confirm_configs, sizeof c->origin_confirm_configs, "%s", at);
    return ob_config_set_confirm_configs(c, scalar(v), at, y->e);
}

/* backend: cpu, cuda or auto. */
static ob_status top_backend(const ycx *y, const yaml_node_t *v, const char *at)
{
    ob_config *c = y->c;
    OB_TRY(want_scalar(y, v, "backend"));
    const char *b = scalar(v);
    if (strcmp(b, "cpu") && strcmp(b, "cuda") && strcmp(b, "auto"))
        return ob_fail(y->e, OB_ERR_INPUT, "%s: backend '%s' is not one of cpu, cuda, auto", at, b);
    snprintf(c->backend, sizeof c->backend, "%s", b);
    return OB_OK;
}

/* db: the database file, not empty and short enough for the checkpoint
 * paths made beside it. */
static ob_status top_db(const ycx *y, const yaml_node_t *v, const char *at)
{
    ob_config *c = y->c;
    OB_TRY(want_scalar(y, v, "db"));
    if (null_scalar(v) || !*scalar(v))
        return ob_fail(y->e, OB_ERR_INPUT, "%s: db is empty: give the database file (e.g. db: results.db), or "
                       "remove the key for ./optbench.db", at);
    if (strlen(scalar(v)) >= sizeof c->db - 64) /* room for DB.ckpt/run-N/... beside it */
        return ob_fail(y->e, OB_ERR_INPUT, "%s: db: the path is %zu bytes long; at most %zu (give a shorter path)", at,
                       strlen(scalar(v)), sizeof c->db - 65);
    snprintf(c->db, sizeof c->db, "%s", scalar(v));
    return OB_OK;
}

/* checkpoint_dir: the folder of the checkpoints, not empty and short enough
 * for the paths made in it. */
static ob_status top_checkpoint_dir(const ycx *y, const yaml_node_t *v, const char *at)
{
    ob_config *c = y->c;
    OB_TRY(want_scalar(y, v, "checkpoint_dir"));
    if (!*scalar(v) || strlen(scalar(v)) >= sizeof c->checkpoint_dir - 64)
        return ob_fail(y->e, OB_ERR_INPUT, "%s: checkpoint_dir is empty or too long", at);
    snprintf(c->checkpoint_dir, sizeof c->checkpoint_dir, "%s", scalar(v));
    return OB_OK;
}

/* A key that is none of top_keys: the error names the closest known key,
 * or all of them when none is close. */
static ob_status top_unknown(const ycx *y, const char *key, const char *at)
{
    const char *near = ob_closest_name(key, top_keys, (int)(sizeof top_keys / sizeof top_keys[0]));
    char shown[300];
    key = ob_printable(key, shown, sizeof shown); /* a character that shows as nothing, shown */
    if (near) return ob_fail(y->e, OB_ERR_INPUT, "%s: unknown key '%s' (did you mean '%s'?)", at, key, near);
    return ob_fail(y->e, OB_ERR_INPUT,
                   "%s: unknown key '%s'; known keys: name, workloads, optimizers, lrs, seeds, steps, "
                   "eval_every, backend, db, hparams, workload_params, train, checkpoint_every, "
                   "checkpoint_keep, checkpoint_dir, exclude, confirm_seeds, confirm_configs, sweep, trials, "
                   "search_seed, search_draws, studies, data_parallel",
                   at, key);
}

/* One top-level key of the configuration: each is read by its own function
 * above, its errors naming the file and line of the key. */
static ob_status top_pair(const ycx *y, const yaml_node_t *k, const yaml_node_t *v, void *arg)
{
    (void)arg;
    ob_config *c = y->c;
    const char *key = scalar(k);
    char at[256];
    where(y, k, at, sizeof at);
    if (!strcmp(key, "name")) return top_name(y, v, at);
    if (!strcmp(key, "workloads"))
        return top_names(y, key, v, c->workloads, &c->n_workloads, c->origin_workloads, sizeof c->origin_workloads, at);
    if (!strcmp(key, "optimizers"))
        return top_names(y, key, v, c->optimizers, &c->n_optimizers, c->origin_optimizers,
                         sizeof c->origin_optimizers, at);
    if (!strcmp(key, "lrs")) return top_lrs(y, v, at);
    if (!strcmp(key, "seeds")) return top_seeds(y, v, at);
    if (!strcmp(key, "steps"))
        return top_int64(y, key, v, 1, OB_CFG_MAX_STEPS, &c->steps, c->origin_steps, sizeof c->origin_steps, at);
    if (!strcmp(key, "eval_every")) return top_int64(y, key, v, 0, OB_CFG_MAX_STEPS, &c->eval_every, NULL, 0, at);
    if (!strcmp(key, "confirm_seeds"))
        return top_int64(y, key, v, 0, OB_CFG_MAX_CONFIRM, &c->confirm_seeds, c->origin_confirm,
                         sizeof c->origin_confirm, at);
    if (!strcmp(key, "confirm_configs")) return top_confirm_configs(y, v, at);
    if (!strcmp(key, "search_seed"))
        return top_int64(y, key, v, 0, OB_CFG_MAX_SEED, &c->search_seed, c->origin_search_seed,
                         sizeof c->origin_search_seed, at);
    if (!strcmp(key, "search_draws"))
        return top_int64(y, key, v, 1, OB_SEARCH_DRAWS, &c->search_draws, c->origin_search_draws,
                         sizeof c->origin_search_draws, at);
    if (!strcmp(key, "studies"))
        return top_int64(y, key, v, 1, OB_MAX_STUDIES, &c->studies, c->origin_studies, sizeof c->origin_studies, at);
    if (!strcmp(key, "trials"))
        return top_int64(y, key, v, 1, OB_MAX_TRIALS, &c->trials, c->origin_trials, sizeof c->origin_trials, at);
    if (!strcmp(key, "backend")) return top_backend(y, v, at);
    if (!strcmp(key, "db")) return top_db(y, v, at);
    if (!strcmp(key, "checkpoint_every"))
        return top_int64(y, key, v, 0, OB_CFG_MAX_STEPS, &c->checkpoint_every, NULL, 0, at);
    if (!strcmp(key, "data_parallel")) {
        OB_TRY(top_int(y, key, v, 1, OB_CFG_MAX_REPLICAS, &c->data_parallel, at));
        snprintf(c->origin_data_parallel, sizeof c->origin_data_parallel, "%s", at);
        return OB_OK;
    }
    if (!strcmp(key, "checkpoint_keep")) return top_int(y, key, v, 1, 100, &c->checkpoint_keep, at);
    if (!strcmp(key, "checkpoint_dir")) return top_checkpoint_dir(y, v, at);
    if (!strcmp(key, "hparams") || !strcmp(key, "workload_params")) return each_pair(y, v, key, owner_map, NULL);
    if (!strcmp(key, "train")) return each_pair(y, v, key, owner_values, (void *)"train");
    if (!strcmp(key, "exclude")) return each_pair(y, v, "exclude (workload: [optimizer, ...])", exclude_map, NULL);
    if (!strcmp(key, "sweep")) return each_pair(y, v, "sweep (owner: {key: [value, ...]})", sweep_map, NULL);
    return top_unknown(y, key, at);
}

/* The byte of text at a parser mark (line and column from 0, columns in
 * characters; the parser skips a byte-order mark and counts "\r\n", "\r"
 * and "\n" as one line break each). */
static const char *mark_ptr(const char *text, yaml_mark_t m)
{
    const char *s = strncmp(text, "\xEF\xBB\xBF", 3) ? text : text + 3;
    for (size_t line = 0; line < m.line && *s; s++) {
        if (*s == '\r' && s[1] == '\n') s++;
        if (*s == '\n' || *s == '\r') line++;
    }
    for (size_t col = 0; col < m.column && *s && *s != '\n' && *s != '\r'; col++) {
        s++;
        while (((unsigned char)*s & 0xC0) == 0x80) s++;
    }
    return s;
}

/* The rest of the line from s, without trailing blanks or a comment, into
 * buf (cut to fit). */
static void line_text(const char *s, char *buf, size_t n)
{
    size_t len = 0;
    while (s[len] && s[len] != '\n' && s[len] != '\r') len++;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
            len = i;
            break;
        }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    if (len >= n) len = n - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
}

/* A key without ': ' (key text at line:col): the message, with the line as it
 * should read ('steps 5' -> 'steps: 5', 'optimizers:sgd' -> 'optimizers: sgd'). */
static ob_status missing_colon(const char *at, const char *path, unsigned long l, unsigned long col, ob_err *e)
{
    char text[64], fix[80];
    line_text(at, text, sizeof text);
    const char *colon = strchr(text, ':');
    size_t ws = strcspn(text, " \t");
    if (colon && colon[1] && colon[1] != ' ')
        snprintf(fix, sizeof fix, "%.*s %s", (int)(colon - text + 1), text, colon + 1);
    else if (text[ws])
        snprintf(fix, sizeof fix, "%.*s: %s", (int)ws, text, text + ws + strspn(text + ws, " \t"));
    else
        snprintf(fix, sizeof fix, "%s: VALUE", text);
    return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: '%s' has no ': ' (a key needs a colon and a space: '%s')", path, l,
                   col, text, fix);
}

/* Does the line above the mark (blank and comment lines aside) lack the
 * ': ' of its key? (The parser reads such a line on as text, and stops at the
 * next line.) If so, the message is made and 1 returned. */
static int above_lacks_colon(const char *text, yaml_mark_t pm, const char *path, ob_err *e)
{
    for (size_t k = pm.line; k-- > 0;) {
        yaml_mark_t m = pm;
        m.line = k;
        m.column = 0;
        const char *s = mark_ptr(text, m);
        const size_t in = strspn(s, " ");
        char t[256];
        line_text(s + in, t, sizeof t);
        if (!t[0]) continue;
        size_t n = strlen(t);
        if (t[0] == '-' || strstr(t, ": ") || strstr(t, ":\t") || t[n - 1] == ':') return 0;
        missing_colon(s + in, path, (unsigned long)k + 1, (unsigned long)in + 1, e);
        return 1;
    }
    return 0;
}

/* The line of the parser's problem mark: where it starts (*line), its
 * indentation (*indent) and the mark's place in text (returned). */
static const char *problem_line(const yaml_parser_t *p, const char *text, const char **line, size_t *indent)
{
    yaml_mark_t bol = p->problem_mark;
    bol.column = 0;
    *line = mark_ptr(text, bol);
    *indent = strspn(*line, " ");
    return mark_ptr(text, p->problem_mark);
}

/* syntax_error's "mapping values are not allowed": a value holding ': ',
 * a key above without its ':', or a line indented deeper than its key. */
static ob_status mapping_value_error(const yaml_parser_t *p, const char *text, const char *path, ob_err *e)
{
    const yaml_mark_t pm = p->problem_mark;
    const unsigned long pl = (unsigned long)pm.line + 1, pc = (unsigned long)pm.column + 1;
    const char *line;
    size_t indent;
    const char *here = problem_line(p, text, &line, &indent);
    /* a second ': ' on the key's own line: a value holding ': ' */
    const char *kc = strstr(line, ": ");
    if (!kc) kc = strstr(line, ":\t");
    if (kc && kc < here)
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a second ': ' on one line: a value that holds ': ' must be "
                       "in quotes (e.g. 'name: \"a: b\"')", path, pl, pc);
    /* the line above (blank and comment lines aside) lacks its ':' */
    if (above_lacks_colon(text, pm, path, e)) return OB_ERR_INPUT;
    return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a key where none can start: this line is indented deeper than "
                   "the key above it (keys of one mapping start in the same column), or a line above lacks ': ' "
                   "after its key", path, pl, (unsigned long)indent + 1);
}

/* syntax_error's line that lines up with no key (or list item) above it
 * (the parser's "did not find expected key" or '-' at a line's start). */
static ob_status misindented_error(const yaml_parser_t *p, const char *text, const char *path, ob_err *e)
{
    const yaml_mark_t pm = p->problem_mark, cm = p->context_mark;
    const unsigned long pl = (unsigned long)pm.line + 1, pc = (unsigned long)pm.column + 1;
    const unsigned long cl = (unsigned long)cm.line + 1, cc = (unsigned long)cm.column + 1;
    /* deeper than the keys: the line above may be a key without ':' */
    if (pm.column > cm.column && above_lacks_colon(text, pm, path, e)) return OB_ERR_INPUT;
    const int list = strstr(p->problem, "'-'") != NULL;
    const char *here = mark_ptr(text, pm);
    if (!list && pm.column == cm.column && here[0] == '-' && (here[1] == ' ' || here[1] == '\n' || !here[1]))
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a list item in the column of the mapping's keys (line %lu), after a "
                       "key that has its value: a list's items follow a key with nothing after its ':' "
                       "('optimizers:', then '- sgd' and '- adam' on lines of their own), or go in brackets "
                       "('optimizers: [sgd, adam]')",
                       path, pl, pc, cl);
    if (list && pm.column == cm.column)
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: this line is in the column of the list's items (line %lu) "
                       "but is not an item: start it with '- ', or indent it as the key that holds the list",
                       path, pl, pc, cl);
    return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: this line is indented to column %lu, which lines up with nothing "
                   "above it (the %s at line %lu has its %s at column %lu): the %s of one %s start in the same "
                   "column", path, pl, pc, pc, list ? "list" : "mapping", cl, list ? "items" : "keys", cc,
                   list ? "items" : "keys", list ? "list" : "mapping");
}

/* A syntax error of the parser, at the line where the mistake is (the
 * parser's problem mark is often where it gave up: the line after a key
 * without ':', the end of the file after an unclosed quote), with the usual
 * causes said in plain words. */
static ob_status syntax_error(const yaml_parser_t *p, const char *text, const char *path, ob_err *e)
{
    const char *problem = p->problem ? p->problem : "malformed document";
    const char *context = p->context ? p->context : "";
    const yaml_mark_t pm = p->problem_mark, cm = p->context_mark;
    const unsigned long pl = (unsigned long)pm.line + 1, pc = (unsigned long)pm.column + 1;
    const unsigned long cl = (unsigned long)cm.line + 1, cc = (unsigned long)cm.column + 1;
    /* where the line of the problem mark starts, and its first non-blank */
    const char *line;
    size_t indent;
    const char *here = problem_line(p, text, &line, &indent);

    /* a key without ':' (the parser notices at the next line) */
    if (strstr(problem, "could not find expected ':'") && strstr(context, "simple key")) {
        /* libyaml reads a plain key of at most 1024 characters: a longer
         * one has its colon all the same */
        const char *k = mark_ptr(text, cm);
        size_t len = 0;
        while (k[len] && k[len] != '\n' && k[len] != '\r' && !(k[len] == ':' && (k[len + 1] == ' ' || !k[len + 1])))
            len++;
        if (len > 1024 && k[len] == ':')
            return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a key of %zu characters; YAML reads keys of at most 1024: "
                           "no key optbench knows is that long (see optbench run --help)", path, cl, cc, len);
        return missing_colon(k, path, cl, cc, e);
    }
    /* a tab where YAML wants spaces */
    if ((strstr(problem, "cannot start any token") && *here == '\t') || strstr(problem, "found a tab character"))
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a tab character; YAML indents with spaces only: replace the tab "
                       "with spaces", path, pl, pc);
    if (strstr(problem, "undefined alias"))
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: '*' starts an alias in YAML, and no anchor ('&NAME') of that name "
                       "comes before it: put the value in quotes where the '*' is part of the text",
                       path, pl, pc);
    if (strstr(context, "quoted scalar") && (strstr(problem, "hexdecimal") || strstr(problem, "unknown escape")))
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a backslash escape that YAML does not know in double quotes "
                       "(\\x takes two hex digits, \\u four): write the text in single quotes, where a backslash "
                       "is itself, or write the backslash as \\\\", path, pl, pc);
    if (strstr(problem, "cannot start any token") && (*here == '@' || *here == '`'))
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a value cannot start with '%c' in YAML: put the value in quotes",
                       path, pl, pc, *here);
    /* an unclosed quote: the parser reads on to the end of the file */
    if (strstr(context, "quoted scalar") && strstr(problem, "end of stream")) {
        const char q = *mark_ptr(text, cm);
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: the quoted text that starts here is not closed: end it with %c",
                       path, cl, cc, q == '\'' ? '\'' : '"');
    }
    /* an unclosed '[' or '{': the parser reads on to a later line */
    if (strstr(context, "while parsing a flow") && cm.line < pm.line) {
        const char open = *mark_ptr(text, cm), close = open == '{' ? '}' : ']';
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: the '%c' here is not closed: end the %s with '%c' (the parser "
                       "reached line %lu without it)", path, cl, cc, open, open == '{' ? "mapping" : "list", close,
                       pl);
    }
    if (strstr(problem, "mapping values are not allowed")) return mapping_value_error(p, text, path, e);
    /* a line indented so that it lines up with no key (or list item) above */
    if ((strstr(problem, "did not find expected key") || strstr(problem, "did not find expected '-'")) &&
        here == line + indent && cm.line < pm.line)
        return misindented_error(p, text, path, e);
    if (strstr(problem, "did not find expected key") && *here)
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: unexpected '%c' after the value (a bracket or quote too many?)",
                       path, pl, pc, *here);
    if (p->context && cm.line < pm.line)
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: YAML syntax error: %s %s (at line %lu)", path, pl, pc, problem,
                       context, cl);
    return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: YAML syntax error: %s%s%s", path, pl, pc, problem,
                   p->context ? " " : "", context);
}

/* The parser's error, at its line and column. A reader error (a byte that
 * is not UTF-8, or a character YAML does not allow) has no mark: its place
 * is the byte offset into text, its column counted in characters as the
 * parser's are (after a byte-order mark, which the parser skips). */
static ob_status yaml_error(const yaml_parser_t *p, const char *text, const char *path, ob_err *e)
{
    if (p->error == YAML_READER_ERROR) {
        unsigned long line = 1, col = 1;
        size_t i = strncmp(text, "\xEF\xBB\xBF", 3) ? 0 : 3;
        for (; i < p->problem_offset && text[i]; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
                col++;
            }
        }
        const char *what = p->problem ? p->problem : "malformed text";
        char val[48] = "";
        if (strstr(what, "UTF-8")) {
            /* the value is the offending byte */
            if (p->problem_value >= 0) snprintf(val, sizeof val, " (byte 0x%02X)", (unsigned)p->problem_value);
            return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: not UTF-8 text: %s%s; save the file as UTF-8", path, line,
                           col, what, val);
        }
        /* a character YAML forbids (a control character, a lone surrogate): a code point */
        if (p->problem_value >= 0) snprintf(val, sizeof val, " (character U+%04X)", (unsigned)p->problem_value);
        return ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: %s%s; remove it or write it as an escape in a double-quoted "
                       "string", path, line, col, what, val);
    }
    return syntax_error(p, text, path, e);
}

ob_status ob_config_load_text(ob_config *c, const char *text, const char *path, ob_err *e)
{
    /* the parser skips one byte-order mark and takes a second for a stray
     * character ("did not find expected <document start>") */
    if (!strncmp(text, "\xEF\xBB\xBF\xEF\xBB\xBF", 6))
        return ob_fail(e, OB_ERR_INPUT, "%s:1:1: the file starts with two byte-order marks (U+FEFF, an editor's "
                       "mark added to a file that had one): save it with one or none", path);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) return ob_fail(e, OB_ERR_NOMEM, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&parser, &doc)) {
        ob_status s = yaml_error(&parser, text, path, e);
        yaml_parser_delete(&parser);
        return s;
    }
    ob_status s = OB_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    /* an escape such as \0 or \u0000 puts a NUL in a value, which would end
     * its text there (a name read as empty) */
    for (yaml_node_t *n = doc.nodes.start; n && n < doc.nodes.top && s == OB_OK; n++)
        if (n->type == YAML_SCALAR_NODE && strlen(scalar(n)) != n->data.scalar.length)
            s = ob_fail(e, OB_ERR_INPUT, "%s:%lu:%lu: a NUL character (an escape \\0 or \\u0000) in a value: "
                        "remove it", path, (unsigned long)n->start_mark.line + 1,
                        (unsigned long)n->start_mark.column + 1);
    if (s == OB_OK && !root) {
        s = ob_fail(e, OB_ERR_INPUT, "%s: the configuration is empty", path);
    } else if (s == OB_OK) {
        ycx y = {&doc, path, c, e};
        s = each_pair(&y, root, "the configuration", top_pair, NULL);
    }
    yaml_document_delete(&doc);
    if (s == OB_OK) {
        /* one configuration is one YAML document: a second one would be ignored */
        yaml_document_t more;
        if (!yaml_parser_load(&parser, &more)) {
            s = yaml_error(&parser, text, path, e);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&more);
            if (r2)
                s = ob_fail(e, OB_ERR_INPUT,
                            "%s:%lu: a second YAML document ('---'); a configuration is one document", path,
                            (unsigned long)more.start_mark.line + 1);
            yaml_document_delete(&more);
        }
    }
    yaml_parser_delete(&parser);
    return s;
}

ob_status ob_config_load_file(ob_config *c, const char *path, ob_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ob_fail(e, OB_ERR_INPUT, "cannot open config file '%s': %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (16u << 20)) {
                free(buf);
                fclose(f);
                return ob_fail(e, OB_ERR_INPUT, "config file '%s' is larger than 16 MiB", path);
            }
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return ob_fail(e, OB_ERR_NOMEM, "out of memory reading '%s'", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    int bad = ferror(f), err = errno;
    fclose(f);
    if (bad) {
        free(buf);
        if (err == EISDIR)
            return ob_fail(e, OB_ERR_INPUT, "config file '%s' is a folder: give the YAML file (e.g. configs/default.yaml)",
                           path);
        return ob_fail(e, OB_ERR_INPUT, "cannot read config file '%s': %s", path, strerror(err));
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        /* where: line and column (in bytes) of the first NUL */
        size_t at = strlen(buf);
        unsigned long line = 1, col = 1;
        for (size_t i = 0; i < at; i++) {
            if (buf[i] == '\n') line++, col = 1;
            else col++;
        }
        free(buf);
        return ob_fail(e, OB_ERR_INPUT,
                       "%s:%lu:%lu: a NUL byte (0x00): a YAML config is text; remove the byte, or give the YAML "
                       "file if this is another file (a binary, a database)", path, line, col);
    }
    free(c->text);
    c->text = buf;
    snprintf(c->path, sizeof c->path, "%s", path);
    return ob_config_load_text(c, buf, path, e);
}
