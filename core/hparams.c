/* core/hparams.c - typed hyperparameters (see hparams.h). */
#include "core/hparams.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ob_hp_defaults(ob_hp_values *hv, const ob_hp_def *defs, int n)
{
    memset(hv, 0, sizeof *hv);
    hv->defs = defs;
    hv->n = n;
    for (int i = 0; i < n && i < OB_HP_MAX; i++) hv->v[i] = defs[i].def;
}

int ob_hp_index(const ob_hp_def *defs, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(defs[i].name, name) == 0) return i;
    return -1;
}

double ob_hp_get(const ob_hp_values *hv, const char *name)
{
    int i = ob_hp_index(hv->defs, hv->n, name);
    return i < 0 ? NAN : hv->v[i];
}

int ob_parse_double(const char *s, double *out)
{
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    /* YAML's spellings of the special floats: read as what they are, so that the
       message says "not a finite number", not "not a number" */
    static const char *const yaml_special[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
                                               "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN"};
    for (size_t i = 0; i < sizeof yaml_special / sizeof *yaml_special; i++)
        if (strcmp(s, yaml_special[i]) == 0) {
            *out = i >= 9 ? NAN : s[0] == '-' ? -INFINITY : INFINITY;
            return 0;
        }
    /* strtod reads hexadecimal ("0x10" is 16), which no setting means */
    const char *d = s + (*s == '+' || *s == '-');
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0') return -1;
    if (errno == ERANGE) return -2; /* too large, or too small for a normal double */
    *out = v;
    return 0;
}

int ob_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            /* a swap of two neighbours counts as one edit (Damerau) */
            if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}

const char *ob_closest_name(const char *word, const char *const *cands, int n)
{
    const char *best = NULL;
    int bd = 1 << 30;
    for (int i = 0; i < n; i++) {
        int dd = ob_edit_distance(word, cands[i]);
        if (dd < bd) {
            bd = dd;
            best = cands[i];
        }
    }
    size_t lw = strlen(word);
    int limit = lw <= 4 ? 1 : (lw <= 8 ? 2 : 3);
    if (bd <= limit) return best;
    /* a name cut short ("mom", "filter_bias"): the one candidate it begins */
    const char *only = NULL;
    for (int i = 0; i < n && lw >= 3; i++)
        if (!strncmp(cands[i], word, lw)) {
            if (only) return NULL; /* more than one: no guess */
            only = cands[i];
        }
    return only;
}

ob_status ob_fail_unknown(ob_err *e, const char *what, const char *name, const char *const *known, int n)
{
    const char *near = ob_closest_name(name, known, n);
    char shown[256];
    name = ob_printable(name, shown, sizeof shown);
    if (near) return ob_fail(e, OB_ERR_INPUT, "unknown %s '%s' (did you mean '%s'?)", what, name, near);
    char list[512] = "";
    for (int i = 0; i < n; i++) {
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, known[i], sizeof list - strlen(list) - 1);
    }
    return ob_fail(e, OB_ERR_INPUT, "unknown %s '%s'; known: %s", what, name, list);
}

static int enum_index(const char *choices, const char *text)
{
    int idx = 0;
    const char *p = choices;
    size_t lt = strlen(text);
    while (p && *p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == lt && strncmp(p, text, len) == 0) return idx;
        idx++;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

static void enum_name(const char *choices, int index, char *buf, size_t n)
{
    const char *p = choices;
    for (int i = 0; p && i < index; i++) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (!p) {
        snprintf(buf, n, "%d", index);
        return;
    }
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len >= n) len = n - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
}

void ob_hp_format(const ob_hp_def *d, double v, char *buf, size_t n)
{
    switch (d->kind) {
    case OB_HP_BOOL: snprintf(buf, n, "%s", v != 0 ? "true" : "false"); break;
    case OB_HP_INT: snprintf(buf, n, "%lld", (long long)v); break;
    case OB_HP_ENUM: enum_name(d->choices, (int)v, buf, n); break;
    default: snprintf(buf, n, "%.9g", v); break;
    }
}

static void range_text(const ob_hp_def *d, char *buf, size_t n)
{
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%.9g", d->min); /* every digit of a bound such as 4194304 */
    snprintf(hi, sizeof hi, "%.9g", d->max);
    if (isinf(d->max))
        snprintf(buf, n, "%s %s", d->min_open ? ">" : ">=", lo);
    else
        snprintf(buf, n, "in %s%s, %s%s", d->min_open ? "(" : "[", lo, hi, d->max_open ? ")" : "]");
}

/* A hint for a key or value that a space or a second setting got into:
 * "adam.beta2 = 0.9" gives the key 'beta2 ' and the value ' 0.9', and
 * "beta2=0.9,eps=1e-8" as one setting the value '0.9,eps=1e-8'. */
static const char *setting_hint(const char *s)
{
    size_t n = strlen(s);
    if (n && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1])))
        return " (write a setting without spaces around '=': key=value)";
    if (strchr(s, '=')) return " (one setting per --set: --set a=1 --set b=2)";
    return "";
}

ob_status ob_hp_set(ob_hp_values *hv, const char *owner, const char *key,
                    const char *text, ob_err *e)
{
    return ob_hp_set_named(hv, owner, key, text, NULL, e);
}

ob_status ob_hp_set_named(ob_hp_values *hv, const char *owner, const char *key, const char *text,
                          const char *text_keys, ob_err *e)
{
    char key_buf[128], text_buf[256];
    const char *key_hint = setting_hint(key), *text_hint = setting_hint(text);
    int i = ob_hp_index(hv->defs, hv->n, key);
    key = ob_printable(key, key_buf, sizeof key_buf);
    text = ob_printable(text, text_buf, sizeof text_buf);
    if (i < 0) {
        const char *names[OB_HP_MAX + 8] = {0};
        char tk[160] = "";
        int nn = 0;
        for (int k = 0; k < hv->n; k++) names[nn++] = hv->defs[k].name;
        if (text_keys && strlen(text_keys) < sizeof tk) { /* the text settings are candidates too */
            strcpy(tk, text_keys);
            for (char *p = tk; p && *p && nn < OB_HP_MAX + 8;) {
                names[nn++] = p;
                p = strchr(p, ',');
                if (p) *p++ = '\0';
            }
        }
        const char *near = ob_closest_name(key, names, nn);
        char all[512] = "";
        for (int k = 0; k < hv->n; k++) {
            strncat(all, hv->defs[k].name, sizeof all - strlen(all) - 3);
            if (k + 1 < hv->n) strncat(all, ", ", sizeof all - strlen(all) - 1);
        }
        if (key_hint[0])
            return ob_fail(e, OB_ERR_INPUT, "%s has no hyperparameter '%s'%s", owner, key, key_hint);
        if (near) /* named as what it is near: a hyperparameter or a text setting */
            return ob_fail(e, OB_ERR_INPUT, "%s has no %s '%s' (did you mean '%s'?)", owner,
                           ob_hp_index(hv->defs, hv->n, near) >= 0 ? "hyperparameter" : "setting", key, near);
        if (text_keys && *text_keys)
            return ob_fail(e, OB_ERR_INPUT, "%s has no setting '%s'; its hyperparameters: %s; its text settings: %s",
                           owner, key, all, text_keys);
        return ob_fail(e, OB_ERR_INPUT, "%s has no hyperparameter '%s'; it has: %s", owner, key, all);
    }
    const ob_hp_def *d = &hv->defs[i];
    double v;
    if (d->kind == OB_HP_BOOL) {
        if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes") || !strcmp(text, "on"))
            v = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no") || !strcmp(text, "off"))
            v = 0;
        else
            return ob_fail(e, OB_ERR_INPUT, "%s.%s: '%s' is not a boolean (use true or false)%s",
                           owner, key, text, text_hint);
    } else if (d->kind == OB_HP_ENUM) {
        int k = enum_index(d->choices, text);
        if (k < 0)
            return ob_fail(e, OB_ERR_INPUT, "%s.%s: '%s' is not one of %s%s", owner, key, text, d->choices,
                           text_hint);
        v = k;
    } else {
        int prc = ob_parse_double(text, &v);
        if (prc == -2)
            return ob_fail(e, OB_ERR_INPUT, "%s.%s: '%s' is out of range for a double (about 1e-308 to 1e308 "
                           "in magnitude, or 0)", owner, key, text);
        if (prc != 0)
            return ob_fail(e, OB_ERR_INPUT, "%s.%s: '%s' is not a number%s", owner, key, text, text_hint);
        if (!isfinite(v))
            return ob_fail(e, OB_ERR_INPUT, "%s.%s: '%s' is not a finite number", owner, key, text);
        if (d->kind == OB_HP_INT && v != floor(v))
            return ob_fail(e, OB_ERR_INPUT, "%s.%s: '%s' is not a whole number", owner, key, text);
        int bad_lo = d->min_open ? !(v > d->min) : !(v >= d->min);
        int bad_hi = d->max_open ? !(v < d->max) : !(v <= d->max);
        if (bad_lo || bad_hi) {
            char r[96];
            range_text(d, r, sizeof r);
            return ob_fail(e, OB_ERR_INPUT, "%s.%s = %s is out of range: it must be %s",
                           owner, key, text, r);
        }
    }
    hv->v[i] = v;
    hv->set[i] = 1;
    return OB_OK;
}

ob_status ob_hp_set_list(ob_hp_values *hv, const char *owner, const char *list, ob_err *e)
{
    char buf[2048];
    if (strlen(list) >= sizeof buf)
        return ob_fail(e, OB_ERR_INPUT, "settings list too long");
    strcpy(buf, list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return ob_fail(e, OB_ERR_INPUT, "setting '%s' has no '=' (expected key=value)", tok);
        *eq = '\0';
        OB_TRY(ob_hp_set(hv, owner, tok, eq + 1, e));
    }
    return OB_OK;
}

size_t ob_hp_to_json(const ob_hp_values *hv, char *buf, size_t n)
{
    size_t len = 0; /* the length of the whole text, also past n */
#define OB_JSON_PUT(...) \
    (len += (size_t)snprintf(len < n ? buf + len : NULL, len < n ? n - len : 0, __VA_ARGS__))
    if (n) buf[0] = '\0';
    OB_JSON_PUT("{");
    for (int i = 0; i < hv->n; i++) {
        char val[64];
        ob_hp_format(&hv->defs[i], hv->v[i], val, sizeof val);
        int quoted = hv->defs[i].kind == OB_HP_ENUM;
        OB_JSON_PUT("%s\"%s\":%s%s%s", i ? "," : "", hv->defs[i].name, quoted ? "\"" : "", val, quoted ? "\"" : "");
    }
    OB_JSON_PUT("}");
#undef OB_JSON_PUT
    return len;
}
