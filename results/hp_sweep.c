/* results/hp_sweep.c - the sensitivity to swept hyperparameters besides
 * the lr (see hp_sweep.h): which keys of the optimizer labels were swept,
 * and the lines and scatters of each workload's groups along them. */
#include "results/hp_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HP_MAX_TOKENS 64
/* The bytes a group's label is split into tokens in; a line's label is
 * built in twice as many. */
#define HP_BN 1024

/* Length of the key of a " key=" token at p (a letter or _, then letters,
 * digits, _ or .; followed by '='), 0 when p starts none. */
static size_t hp_key_len(const char *p)
{
    size_t j = 0;
    if (!((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || p[0] == '_')) return 0;
    while ((p[j] >= 'a' && p[j] <= 'z') || (p[j] >= 'A' && p[j] <= 'Z') || (p[j] >= '0' && p[j] <= '9') ||
           p[j] == '_' || p[j] == '.')
        j++;
    return p[j] == '=' ? j : 0;
}

/* The " key=value" tokens of a label after its optimizer name, split in place
 * in buf (a value runs to the next " key=", so a text value may hold blanks);
 * returns how many, -1 when the label is not of that form (another name, a
 * label numbered for being ambiguous "adam #3", too many keys). */
static int hp_tokens(const char *label, const char *name, char *buf, size_t bn, char **k, char **v)
{
    size_t nl = strlen(name);
    if (strncmp(label, name, nl)) return -1;
    snprintf(buf, bn, "%s", label + nl);
    size_t len = strlen(buf);
    const char *hash = strrchr(buf, '#');
    if (hash && hash > buf && hash[-1] == ' ' && hash[1]) {
        const char *c = hash + 1;
        while (*c >= '0' && *c <= '9') c++;
        if (!*c) return -1;
    }
    size_t start[HP_MAX_TOKENS + 1], klen[HP_MAX_TOKENS + 1];
    int n = 0;
    for (size_t t = 0; t < len; t++) {
        if (buf[t] != ' ') continue;
        size_t kl = hp_key_len(buf + t + 1);
        if (!kl) continue;
        if (n == HP_MAX_TOKENS) return -1;
        start[n] = t;
        klen[n++] = kl;
    }
    if (len > 0 && (n == 0 || start[0] != 0)) return -1;
    for (int m = 0; m < n; m++) {
        k[m] = buf + start[m] + 1;
        v[m] = k[m] + klen[m] + 1;
    }
    for (int m = 0; m < n; m++) {
        k[m][klen[m]] = 0;
        if (m + 1 < n) buf[start[m + 1]] = 0;
    }
    /* a trial's study (run studies: K) names the search it is of, not a setting */
    int kept = 0;
    for (int m = 0; m < n; m++)
        if (strcmp(k[m], "search.study")) k[kept] = k[m], v[kept++] = v[m];
    return kept;
}

int ob_hp_diverged_everywhere(const ob_group *g) { return g->best < 0 && g->n_diverged > 0; }

static int hp_num(const char *v, double *out)
{
    if (!*v) return 0;
    char *end = NULL;
    double x = strtod(v, &end);
    if (*end || !isfinite(x)) return 0;
    *out = x;
    return 1;
}

static int cmp_hp_point(const void *a, const void *b)
{
    const ob_hp_point *x = a, *y = b;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return x->group - y->group;
}

/* Sorts l's points by value; the number of distinct values. */
static int hp_distinct(ob_hp_line *l)
{
    qsort(l->p, (size_t)l->n, sizeof *l->p, cmp_hp_point);
    int distinct = 0;
    for (int i = 0; i < l->n; i++) distinct += i == 0 || l->p[i].value != l->p[i - 1].value;
    return distinct;
}

/* Whether the groups of line l ran at lrs of their own (a searched lr:
 * each configuration at its one lr, not all the same): then they differ in
 * the lr as well as in the figure's key, and are no line. */
static int hp_lr_varies(const ob_stats *s, const ob_hp_line *l)
{
    double lr = NAN;
    for (int i = 0; i < l->n; i++) {
        const ob_group *g = &s->g[l->p[i].group];
        if (g->n_lr != 1) return 0;
        if (isnan(lr)) lr = g->lrs[0].lr;
        else if (g->lrs[0].lr != lr) return 1;
    }
    return 0;
}

/* The nl lines of one figure (each with room for every group's point: a
 * group is a point of one line at most): an optimizer none of whose lines
 * has two distinct values (with the lr alike: hp_lr_varies) gets its
 * points gathered into its first line,
 * relabelled "NAME (each configuration)" and marked scatter; its other
 * lines are left empty (the caller drops them). */
static ob_status hp_scatter_lines(const ob_dataset *d, const ob_stats *s, ob_hp_line *lines, int nl, ob_err *e)
{
    for (int l = 0; l < nl; l++) {
        if (lines[l].n == 0 || lines[l].scatter) continue;
        const char *name = d->opt_names[s->g[lines[l].p[0].group].opt];
        int has_line = 0, total = 0;
        for (int m = 0; m < nl; m++) {
            if (lines[m].n == 0 || strcmp(d->opt_names[s->g[lines[m].p[0].group].opt], name)) continue;
            has_line |= hp_distinct(&lines[m]) >= 2 && !hp_lr_varies(s, &lines[m]);
            total += lines[m].n;
        }
        if (has_line || total < 2) continue;
        char *label = malloc(strlen(name) + 32);
        if (!label) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        for (int m = l + 1; m < nl; m++) {
            if (lines[m].n == 0 || strcmp(d->opt_names[s->g[lines[m].p[0].group].opt], name)) continue;
            memcpy(lines[l].p + lines[l].n, lines[m].p, (size_t)lines[m].n * sizeof *lines[m].p);
            lines[l].n += lines[m].n;
            lines[m].n = 0;
        }
        sprintf(label, "%s (each configuration)", name); /* no comma: gnuplot splits the CSV at each */
        free(lines[l].label);
        lines[l].label = label;
        lines[l].scatter = 1;
    }
    return OB_OK;
}

/* The searched lr (lrs LO..HI with trials): on workload w, each optimizer
 * whose configurations with a finished run (two or more) each ran at one
 * lr, not all the same, is a scatter of them against their lr, in a figure
 * of key "lr" added to out. */
static ob_status hp_lr_scatter(const ob_dataset *d, const ob_stats *s, int w, ob_hp_sweeps *out, ob_err *e)
{
    ob_hp_line *lines = calloc((size_t)s->n_g + 1, sizeof *lines);
    if (!lines) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    int nl = 0;
    ob_status st = OB_OK;
    for (int k = 0; k < s->n_g && st == OB_OK; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || g->n_finished == 0) continue;
        const char *name = d->opt_names[g->opt];
        int seen = 0; /* its optimizer's line is made already */
        for (int l = 0; l < nl && !seen; l++) seen = !strcmp(d->opt_names[s->g[lines[l].p[0].group].opt], name);
        if (seen) continue;
        int n = 0, one_lr = 1;
        double lo = INFINITY, hi = -INFINITY;
        for (int j = 0; j < s->n_g; j++) {
            const ob_group *h = &s->g[j];
            if (h->wl != w || h->n_finished == 0 || strcmp(d->opt_names[h->opt], name)) continue;
            n++;
            one_lr &= h->n_lr == 1;
            if (h->n_lr >= 1 && h->lrs[0].lr < lo) lo = h->lrs[0].lr;
            if (h->n_lr >= 1 && h->lrs[0].lr > hi) hi = h->lrs[0].lr;
        }
        if (n < 2 || !one_lr || !(hi > lo)) continue;
        ob_hp_line *ln = &lines[nl];
        ln->p = malloc((size_t)n * sizeof *ln->p);
        ln->label = malloc(strlen(name) + 32);
        if (!ln->p || !ln->label) {
            free(ln->p);
            free(ln->label);
            st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
            break;
        }
        sprintf(ln->label, "%s (each configuration)", name);
        ln->scatter = 1;
        for (int j = 0; j < s->n_g; j++) {
            const ob_group *h = &s->g[j];
            if (h->wl == w && h->n_finished > 0 && !strcmp(d->opt_names[h->opt], name))
                ln->p[ln->n++] = (ob_hp_point){j, h->lrs[0].lr};
        }
        qsort(ln->p, (size_t)ln->n, sizeof *ln->p, cmp_hp_point);
        nl++;
    }
    if (st == OB_OK && nl > 0) {
        ob_hp_fig *nf = realloc(out->f, (size_t)(out->n + 1) * sizeof *out->f);
        char *key = strdup("lr");
        if (nf) out->f = nf;
        if (!nf || !key) {
            free(key);
            st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        } else {
            out->f[out->n++] = (ob_hp_fig){.wl = w, .key = key, .n_lines = nl, .lines = lines};
            return OB_OK;
        }
    }
    for (int l = 0; l < nl; l++) {
        free(lines[l].label);
        free(lines[l].p);
    }
    free(lines);
    return st;
}

void ob_hp_sweeps_free(ob_hp_sweeps *h)
{
    for (int i = 0; i < h->n; i++) {
        ob_hp_fig *f = &h->f[i];
        for (int l = 0; l < f->n_lines; l++) {
            free(f->lines[l].label);
            free(f->lines[l].p);
        }
        free(f->lines);
        free(f->key);
    }
    free(h->f);
    memset(h, 0, sizeof *h);
}

/* The work space of ob_hp_sweeps_find, for its ng groups. */
typedef struct hp_scratch {
    size_t ng;
    char *bufs;        /* (ng * HP_BN) each group's label, split in place by hp_tokens */
    char **ks, **vs;   /* (ng * HP_MAX_TOKENS) each group's keys and values */
    int *nt;           /* (ng) each group's number of tokens, -1 when it has none to plot */
    const char **keys; /* (ng * HP_MAX_TOKENS) the distinct keys of one workload */
    ob_hp_line *lines; /* (ng) the lines of one figure */
    char *rest;        /* (2 * HP_BN) the label of a line being looked up */
} hp_scratch;

/* Allocates h's arrays for ng groups; out of memory, those allocated are
 * left in h for hp_scratch_free. */
static ob_status hp_scratch_alloc(hp_scratch *h, size_t ng, ob_err *e)
{
    h->ng = ng;
    h->bufs = malloc(ng * HP_BN);
    h->ks = malloc(ng * HP_MAX_TOKENS * sizeof *h->ks);
    h->vs = malloc(ng * HP_MAX_TOKENS * sizeof *h->vs);
    h->nt = malloc(ng * sizeof *h->nt);
    h->keys = malloc(ng * HP_MAX_TOKENS * sizeof *h->keys);
    h->lines = malloc(ng * sizeof *h->lines);
    h->rest = malloc(2 * HP_BN);
    if (!h->bufs || !h->ks || !h->vs || !h->nt || !h->keys || !h->lines || !h->rest)
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    return OB_OK;
}

/* Frees h's arrays (not what the lines in them point to). */
static void hp_scratch_free(hp_scratch *h)
{
    free(h->bufs);
    free(h->ks);
    free(h->vs);
    free(h->nt);
    free(h->keys);
    free(h->lines);
    free(h->rest);
}

/* Splits the label of each group with a finished run into its key=value
 * tokens (hp_tokens); the other groups get none (nt -1). */
static void hp_group_tokens(const ob_dataset *d, const ob_stats *s, hp_scratch *h)
{
    for (size_t k = 0; k < h->ng; k++) {
        const ob_group *g = &s->g[k];
        h->nt[k] = g->n_finished > 0 && d->opt_names && d->opt_names[g->opt]
                       ? hp_tokens(d->opt_labels[g->opt], d->opt_names[g->opt], h->bufs + k * HP_BN, HP_BN,
                                   h->ks + k * HP_MAX_TOKENS, h->vs + k * HP_MAX_TOKENS)
                       : -1;
    }
}

/* The keys of workload w's groups into h->keys, each once, in order of first
 * appearance; returns how many. */
static int hp_workload_keys(const ob_stats *s, hp_scratch *h, int w)
{
    int nk = 0;
    for (size_t k = 0; k < h->ng; k++) {
        if (s->g[k].wl != w) continue;
        for (int t = 0; t < h->nt[k]; t++) {
            const char *key = h->ks[k * HP_MAX_TOKENS + t];
            int seen = 0;
            for (int u = 0; u < nk && !seen; u++) seen = !strcmp(h->keys[u], key);
            if (!seen) h->keys[nk++] = key;
        }
    }
    return nk;
}

/* The label of group k's line in h->rest: its optimizer name and the values
 * of its keys other than token at ("adam clip_norm=1"). */
static void hp_line_label(const ob_dataset *d, const ob_stats *s, hp_scratch *h, size_t k, int at)
{
    char **kk = h->ks + k * HP_MAX_TOKENS, **vv = h->vs + k * HP_MAX_TOKENS;
    size_t len = (size_t)snprintf(h->rest, 2 * HP_BN, "%s", d->opt_names[s->g[k].opt]);
    for (int t = 0; t < h->nt[k] && len < 2 * HP_BN; t++)
        if (t != at) len += (size_t)snprintf(h->rest + len, 2 * HP_BN - len, " %s=%s", kk[t], vv[t]);
}

/* Sets *l to the line of the *nl in h->lines labelled h->rest, adding it
 * (no points yet, room for a point of each group) when there is none. Out of
 * memory, the new line is counted in *nl all the same, for the caller to
 * free what of it was allocated. */
static ob_status hp_line_find(hp_scratch *h, int *nl, int *l, ob_err *e)
{
    ob_hp_line *lines = h->lines;
    int i = 0;
    while (i < *nl && strcmp(lines[i].label, h->rest)) i++;
    *l = i;
    if (i < *nl) return OB_OK;
    lines[i].label = strdup(h->rest);
    lines[i].p = malloc(h->ng * sizeof *lines[i].p);
    lines[i].n = 0;
    lines[i].scatter = 0;
    (*nl)++;
    if (!lines[i].label || !lines[i].p) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    return OB_OK;
}

/* The lines of key on workload w into h->lines, counted in *nl: each group
 * whose label holds the key with a numeric value is a point of the line of
 * its optimizer name and its other keys' values. */
static ob_status hp_key_lines(const ob_dataset *d, const ob_stats *s, hp_scratch *h, int w, const char *key,
                              int *nl, ob_err *e)
{
    for (size_t k = 0; k < h->ng; k++) {
        if (s->g[k].wl != w) continue;
        char **vv = h->vs + k * HP_MAX_TOKENS;
        int at = -1;
        for (int t = 0; t < h->nt[k] && at < 0; t++)
            if (!strcmp(h->ks[k * HP_MAX_TOKENS + t], key)) at = t;
        double x;
        if (at < 0 || !hp_num(vv[at], &x)) continue;
        hp_line_label(d, s, h, k, at);
        int l;
        OB_TRY(hp_line_find(h, nl, &l, e));
        h->lines[l].p[h->lines[l].n++] = (ob_hp_point){(int)k, x};
    }
    return OB_OK;
}

/* Frees the labels and points of the nl lines. */
static void hp_lines_free(ob_hp_line *lines, int nl)
{
    for (int l = 0; l < nl; l++) {
        free(lines[l].label);
        free(lines[l].p);
    }
}

/* Keeps, at the front of lines, those with two distinct values of the key
 * or more (their points sorted by value) and frees the others; returns how
 * many are kept. */
static int hp_keep_lines(ob_hp_line *lines, int nl)
{
    int kept = 0;
    for (int l = 0; l < nl; l++) {
        if (hp_distinct(&lines[l]) >= 2) lines[kept++] = lines[l];
        else {
            free(lines[l].label);
            free(lines[l].p);
        }
    }
    return kept;
}

/* Adds to out the figure of key on workload w, of a copy of the n lines
 * (which it then owns); out of memory, the lines are freed. */
static ob_status hp_add_fig(ob_hp_sweeps *out, int w, const char *key, ob_hp_line *lines, int n, ob_err *e)
{
    ob_hp_fig *nf = realloc(out->f, (size_t)(out->n + 1) * sizeof *out->f);
    ob_hp_line *ls = malloc((size_t)n * sizeof *ls);
    char *copy = strdup(key);
    if (nf) out->f = nf;
    if (!nf || !ls || !copy) {
        hp_lines_free(lines, n);
        free(ls);
        free(copy);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    memcpy(ls, lines, (size_t)n * sizeof *ls);
    out->f[out->n++] = (ob_hp_fig){.wl = w, .key = copy, .n_lines = n, .lines = ls};
    return OB_OK;
}

/* The figure of key on workload w, added to out when it has a line. A line
 * needs two values of the key or more; an optimizer without such a line
 * (its keys searched together) gets a scatter of its configurations where
 * they have two values. */
static ob_status hp_key_fig(const ob_dataset *d, const ob_stats *s, hp_scratch *h, int w, const char *key,
                            ob_hp_sweeps *out, ob_err *e)
{
    int nl = 0;
    ob_status st = hp_key_lines(d, s, h, w, key, &nl, e);
    if (st == OB_OK) st = hp_scatter_lines(d, s, h->lines, nl, e);
    if (st != OB_OK) {
        hp_lines_free(h->lines, nl);
        return st;
    }
    int kept = hp_keep_lines(h->lines, nl);
    if (!kept) return OB_OK;
    return hp_add_fig(out, w, key, h->lines, kept, e);
}

ob_status ob_hp_sweeps_find(const ob_dataset *d, const ob_stats *s, ob_hp_sweeps *out, ob_err *e)
{
    memset(out, 0, sizeof *out);
    if (s->n_g == 0) return OB_OK;
    hp_scratch h;
    ob_status st = hp_scratch_alloc(&h, (size_t)s->n_g, e);
    if (st == OB_OK) hp_group_tokens(d, s, &h);
    for (int w = 0; w < d->n_wl && st == OB_OK; w++) {
        int nk = hp_workload_keys(s, &h, w);
        for (int u = 0; u < nk && st == OB_OK; u++) st = hp_key_fig(d, s, &h, w, h.keys[u], out, e);
        if (st == OB_OK) st = hp_lr_scatter(d, s, w, out, e);
    }
    hp_scratch_free(&h);
    if (st != OB_OK) ob_hp_sweeps_free(out);
    return st;
}
