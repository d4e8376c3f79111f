/* results/dataset.c - loading runs and curves for analysis (see dataset.h).
 *
 * The database does the selection (latest finished run per cell, with a window
 * function) and the JSON work (json_remove of "lr", json_tree to find the
 * hyperparameters that tell configurations apart); this file only collects the
 * rows and builds the labels.
 */
#include "results/dataset.h"
#include "results/store.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_text(sqlite3_stmt *q, int col)
{
    const unsigned char *t = sqlite3_column_text(q, col);
    return strdup(t ? (const char *)t : "");
}
static double col_real(sqlite3_stmt *q, int col)
{
    int t = sqlite3_column_type(q, col);
    if (t == SQLITE_NULL) return NAN;
    if (t == SQLITE_TEXT) {
        /* text in a number's column (a hand-edited or another tool's
         * database: 'Infinity', 'NaN', '1e999'): read as C reads it, and
         * anything else as unknown, never as SQLite's 0.0 */
        const char *v = (const char *)sqlite3_column_text(q, col), *end = v;
        double x = v ? strtod(v, (char **)&end) : NAN;
        while (end && (*end == ' ' || *end == '\t')) end++;
        return v && end != v && *end == 0 ? x : NAN;
    }
    if (t == SQLITE_BLOB) return NAN; /* bytes, not a number (SQLite would read 0.0) */
    return sqlite3_column_double(q, col);
}
static int64_t col_int(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, col);
}

static ob_status db_fail(sqlite3 *db, ob_err *e, const char *what)
{
    int code = sqlite3_errcode(db) & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) /* the file, not this program: bad input */
        return ob_fail(e, OB_ERR_INPUT, "%s: %s (the file is damaged: use an intact copy or another database; "
                                        "it was left unchanged)", what, sqlite3_errmsg(db));
    const char *m = sqlite3_errmsg(db);
    if (code == SQLITE_ERROR && (!strncmp(m, "no such table", 13) || !strncmp(m, "no such column", 14)))
        return ob_fail(e, OB_ERR_INPUT, "%s: %s (the database lacks part of optbench's schema: a table or column "
                                        "was dropped, or another program made it; use an intact copy)", what, m);
    return ob_fail(e, OB_ERR_DB, "%s: %s", what, m);
}

static ob_status no_mem(ob_err *e, const char *what)
{
    return ob_fail(e, OB_ERR_NOMEM, "out of memory %s", what);
}

/* ---- labels ---------------------------------------------------------------- */

typedef struct kvs {
    int n;
    char **k, **v;
} kvs;

static void kvs_free(kvs *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->k[i]);
        free(a->v[i]);
    }
    free(a->k);
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* The leaves of a JSON object as key=value text ("$.train.clip_norm" -> "clip_norm");
 * out is empty after a failure. */
static ob_status json_leaves(sqlite3 *db, const char *json, kvs *out, ob_err *e)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT fullkey, CASE type WHEN 'true' THEN 'true' WHEN 'false' THEN "
                           "'false' WHEN 'null' THEN 'null' WHEN 'real' THEN printf('%.9g', atom) "
                           "ELSE CAST(atom AS TEXT) END FROM json_tree(?1) "
                           "WHERE json_valid(?1) AND type NOT IN ('object', 'array')",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(db, e, "reading hyperparameters");
    sqlite3_bind_text(q, 1, json, -1, SQLITE_STATIC);
    int cap = 0, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (out->n == cap) {
            int ncap = cap ? 2 * cap : 16;
            char **k2 = realloc(out->k, (size_t)ncap * sizeof *out->k);
            if (!k2) goto nomem;
            out->k = k2;
            char **v2 = realloc(out->v, (size_t)ncap * sizeof *out->v);
            if (!v2) goto nomem;
            out->v = v2;
            cap = ncap;
        }
        const char *path = (const char *)sqlite3_column_text(q, 0);
        const char *v = (const char *)sqlite3_column_text(q, 1);
        /* SQLite quotes some keys in a path ($.train."clip_norm"): unquote */
        char kb[256];
        size_t kl = 0;
        for (const char *c = path ? path : "?"; *c && kl + 1 < sizeof kb; c++)
            if (*c != '"') kb[kl++] = *c;
        kb[kl] = 0;
        const char *k = kb;
        if (!strncmp(k, "$.", 2)) k += 2;
        out->k[out->n] = strdup(k);
        out->v[out->n] = strdup(v ? v : "");
        if (!out->k[out->n] || !out->v[out->n]) {
            free(out->k[out->n]);
            free(out->v[out->n]);
            goto nomem;
        }
        out->n++;
    }
    if (rc != SQLITE_DONE) { /* settings cut short would read as defaults */
        ob_status st = db_fail(db, e, "reading hyperparameters");
        sqlite3_finalize(q);
        kvs_free(out);
        return st;
    }
    sqlite3_finalize(q);
    /* "train.clip_norm" reads "clip_norm", unless the optimizer has a key of
     * that name too (adamw_sf's warmup_steps and train.warmup_steps) */
    for (int i = 0; i < out->n; i++) {
        if (strncmp(out->k[i], "train.", 6)) continue;
        int clash = 0;
        for (int j = 0; j < out->n && !clash; j++) clash = !strcmp(out->k[j], out->k[i] + 6);
        if (!clash) memmove(out->k[i], out->k[i] + 6, strlen(out->k[i] + 6) + 1);
    }
    return OB_OK;
nomem:
    sqlite3_finalize(q);
    kvs_free(out);
    return no_mem(e, "reading hyperparameters");
}

static const char *kvs_get(const kvs *a, const char *k)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->k[i], k)) return a->v[i];
    return "-";
}

/* Labels for n configurations of one name. present is (n, nb): present[u * nb
 * + b] when configuration u occurs in bucket b (a workload). A key tells
 * configurations apart when two configurations present in the same bucket
 * differ in it; the label is the name plus those keys' values ("adam
 * beta2=0.95"). Keys that differ only between buckets (settings that follow
 * the workload) stay out, so one configuration has one label everywhere. */
static ob_status make_labels(sqlite3 *db, const char *name, char **jsons, int n, const char *present,
                             int nb, char **labels, ob_err *e)
{
    kvs *kv = calloc((size_t)n + 1, sizeof *kv);
    if (!kv) return no_mem(e, "labelling the runs");
    ob_status st = OB_OK;
    for (int i = 0; i < n && st == OB_OK && n > 1; i++) st = json_leaves(db, jsons[i], &kv[i], e);
    /* the union of keys, in order of first appearance */
    int nk = 0, capk = 0;
    const char **keys = NULL;
    char *dist = NULL;
    for (int j = 0; j < n && st == OB_OK; j++)
        for (int a = 0; a < kv[j].n; a++) {
            int seen = 0;
            for (int t = 0; t < nk && !seen; t++) seen = !strcmp(keys[t], kv[j].k[a]);
            if (seen) continue;
            if (nk == capk) {
                int ncap = capk ? 2 * capk : 32;
                const char **k2 = realloc(keys, (size_t)ncap * sizeof *keys);
                if (!k2) {
                    st = no_mem(e, "labelling the runs");
                    break;
                }
                keys = k2;
                capk = ncap;
            }
            keys[nk++] = kv[j].k[a];
        }
    if (st == OB_OK && !(dist = calloc((size_t)nk + 1, 1))) st = no_mem(e, "labelling the runs");
    for (int t = 0; t < nk && st == OB_OK; t++)
        for (int b = 0; b < nb && !dist[t]; b++)
            for (int u = 0; u < n && !dist[t]; u++)
                for (int v = u + 1; v < n && !dist[t]; v++)
                    if (present[u * nb + b] && present[v * nb + b] &&
                        strcmp(kvs_get(&kv[u], keys[t]), kvs_get(&kv[v], keys[t])))
                        dist[t] = 1;
    for (int i = 0; i < n && st == OB_OK; i++) {
        char buf[512];
        size_t len = (size_t)snprintf(buf, sizeof buf, "%s", name);
        for (int t = 0; t < nk && len < sizeof buf; t++)
            if (dist[t] && strcmp(kvs_get(&kv[i], keys[t]), "-")) /* absent: a key its version did not write */
                len += (size_t)snprintf(buf + len, sizeof buf - len, " %s=%s", keys[t], kvs_get(&kv[i], keys[t]));
        for (char *c = buf; *c; c++)
            if (*c == ',' || *c == '"' || *c == '\n' || *c == '\\') *c = ';';
        if (!(labels[i] = strdup(buf))) st = no_mem(e, "labelling the runs");
    }
    /* Configurations in one bucket that still share a label (not JSON): number them. */
    for (int i = 0; i < n && st == OB_OK; i++)
        for (int j = i + 1; j < n && st == OB_OK; j++) {
            int together = 0;
            for (int b = 0; b < nb; b++) together |= present[i * nb + b] && present[j * nb + b];
            if (together && !strcmp(labels[i], labels[j])) {
                char buf[600];
                snprintf(buf, sizeof buf, "%s #%d", labels[j], j + 1);
                char *l = strdup(buf);
                if (!l) {
                    st = no_mem(e, "labelling the runs");
                    break;
                }
                free(labels[j]);
                labels[j] = l;
            }
        }
    for (int i = 0; i < n; i++) kvs_free(&kv[i]);
    free(kv);
    free(keys);
    free(dist);
    return st;
}

/* Index of label, appending it (with its name) when new; -1 when out of memory. */
static int add_label(char ***labels, char ***names, int *n, const char *label, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*labels)[i], label)) return i;
    char **l2 = realloc(*labels, (size_t)(*n + 1) * sizeof **labels);
    if (!l2) return -1;
    *labels = l2;
    char **n2 = realloc(*names, (size_t)(*n + 1) * sizeof **names);
    if (!n2) return -1;
    *names = n2;
    char *l = strdup(label), *nm = strdup(name);
    if (!l || !nm) {
        free(l);
        free(nm);
        return -1;
    }
    (*labels)[*n] = l;
    (*names)[*n] = nm;
    return (*n)++;
}

/* Does a number start at s[i]: a digit, or '-' or '.' before one where a
 * value begins (after '=', ' ', ',', '(' or at the start: "beta2=-0.5",
 * not the hyphen of "bert-2")? */
static int number_at(const char *s, size_t i)
{
    const unsigned char c = (unsigned char)s[i];
    if (c >= '0' && c <= '9') return 1;
    if ((c != '-' && c != '.') || !(s[i + 1] >= '0' && s[i + 1] <= '9')) return 0;
    return i == 0 || strchr("= ,(", s[i - 1]) != NULL;
}

/* Labels in order, their numbers by value: "adamw weight_decay=1e-05" before
 * "adamw weight_decay=0.001", "sgd momentum=9" before "sgd momentum=10"
 * (strcmp put both the other way round), so that tables, legends and the
 * shades of a sweep's configurations follow the swept values; equal values
 * written apart (0.1, 0.10) by their text. */
static int cmp_label(const char *a, const char *b)
{
    size_t i = 0, j = 0;
    while (a[i] && b[j]) {
        /* a digit continuing a word on both sides ("adam2") is compared as text */
        const int na = number_at(a, i) && !(i > 0 && isalpha((unsigned char)a[i - 1])),
                  nb = number_at(b, j) && !(j > 0 && isalpha((unsigned char)b[j - 1]));
        /* a number before anything else at the same place (one rule for
         * every pair, so that the order is one: "x=0" < "x=.5" < "x=.a") */
        if (na != nb) return na ? -1 : 1;
        if (na && nb) {
            char *ea, *eb;
            const double va = strtod(a + i, &ea), vb = strtod(b + j, &eb);
            if (va != vb && !isnan(va) && !isnan(vb)) return va < vb ? -1 : 1;
            const size_t la = (size_t)(ea - (a + i)), lb = (size_t)(eb - (b + j));
            const int t = strncmp(a + i, b + j, la < lb ? la : lb);
            if (t || la != lb) return t ? t : la < lb ? -1 : 1;
            i += la;
            j += lb;
            continue;
        }
        if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++;
        j++;
    }
    return a[i] ? 1 : b[j] ? -1 : 0;
}

static int cmp_str(const void *a, const void *b) { return cmp_label(*(char *const *)a, *(char *const *)b); }

/* Distinct strings of a list: index of s, appending it when new; -1 when out of memory. */
static int intern(char ***list, int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*list)[i], s)) return i;
    char **l2 = realloc(*list, (size_t)(*n + 1) * sizeof **list);
    if (!l2) return -1;
    *list = l2;
    (*list)[*n] = (char *)s;
    return (*n)++;
}

/* d's workload labels (and names) sorted by cmp_label, each run's wl
 * following its label. */
static ob_status sort_wl_labels(ob_dataset *d, ob_err *e)
{
    const int n = d->n_wl;
    int *order = malloc((size_t)n * sizeof *order), *at = malloc((size_t)n * sizeof *at);
    char **labels = malloc((size_t)n * sizeof *labels), **names = malloc((size_t)n * sizeof *names);
    if (!order || !at || !labels || !names) {
        free(order);
        free(at);
        free(labels);
        free(names);
        return no_mem(e, "labelling the runs");
    }
    /* by insertion, stable (a workload has a few parameter sets) */
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && cmp_label(d->wl_labels[order[j - 1]], d->wl_labels[i]) > 0; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    for (int i = 0; i < n; i++) {
        labels[i] = d->wl_labels[order[i]];
        names[i] = d->wl_names[order[i]];
        at[order[i]] = i;
    }
    memcpy(d->wl_labels, labels, (size_t)n * sizeof *labels);
    memcpy(d->wl_names, names, (size_t)n * sizeof *names);
    for (int r = 0; r < d->n; r++) d->runs[r].wl = at[d->runs[r].wl];
    free(order);
    free(at);
    free(labels);
    free(names);
    return OB_OK;
}

/* The runs i..j-1, those of one workload (the runs come ordered by it): its
 * distinct parameter sets (one bucket) labelled, added to d's workload
 * labels, and each run's wl. cfg: scratch of d->n entries. */
static ob_status label_workload(sqlite3 *db, ob_dataset *d, int i, int j, int *cfg, ob_err *e)
{
    ob_status st = OB_OK;
    char **u = NULL;
    int nu = 0;
    for (int r = i; r < j && st == OB_OK; r++)
        if ((cfg[r] = intern(&u, &nu, d->runs[r].wl_key)) < 0) st = no_mem(e, "labelling the runs");
    char *present = malloc((size_t)nu + 1);
    char **labels = calloc((size_t)nu + 1, sizeof *labels);
    if (st == OB_OK && (!present || !labels)) st = no_mem(e, "labelling the runs");
    if (st == OB_OK) {
        memset(present, 1, (size_t)nu + 1);
        st = make_labels(db, d->runs[i].workload, u, nu, present, 1, labels, e);
    }
    for (int r = i; r < j && st == OB_OK; r++)
        if ((d->runs[r].wl = add_label(&d->wl_labels, &d->wl_names, &d->n_wl, labels[cfg[r]],
                                       d->runs[i].workload)) < 0)
            st = no_mem(e, "labelling the runs");
    for (int c = 0; labels && c < nu; c++) free(labels[c]);
    free(labels);
    free(present);
    free(u);
    return st;
}

/* The optimizer of run i, over all workloads (its buckets): its distinct
 * configurations labelled, added to glabels and gnames (*ng of them), and
 * for each of its runs r from i on, the index of r's label there
 * (run_label[r]) and done[r] set. cfg: scratch of d->n entries. */
static ob_status label_optimizer(sqlite3 *db, ob_dataset *d, int i, int *cfg, int *run_label, char *done,
                                 char ***glabels, char ***gnames, int *ng, ob_err *e)
{
    ob_status st = OB_OK;
    const char *name = d->runs[i].optimizer;
    char **u = NULL;
    int nu = 0;
    for (int r = i; r < d->n && st == OB_OK; r++)
        if (!strcmp(d->runs[r].optimizer, name) && (cfg[r] = intern(&u, &nu, d->runs[r].opt_key)) < 0)
            st = no_mem(e, "labelling the runs");
    int nb = d->n_wl;
    char *present = calloc((size_t)nu * nb + 1, 1);
    char **labels = calloc((size_t)nu + 1, sizeof *labels);
    if (st == OB_OK && (!present || !labels)) st = no_mem(e, "labelling the runs");
    for (int r = i; r < d->n && st == OB_OK; r++)
        if (!strcmp(d->runs[r].optimizer, name)) present[cfg[r] * nb + d->runs[r].wl] = 1;
    if (st == OB_OK) st = make_labels(db, name, u, nu, present, nb, labels, e);
    for (int r = i; r < d->n && st == OB_OK; r++)
        if (!strcmp(d->runs[r].optimizer, name)) {
            if ((run_label[r] = add_label(glabels, gnames, ng, labels[cfg[r]], name)) < 0)
                st = no_mem(e, "labelling the runs");
            done[r] = 1;
        }
    for (int c = 0; labels && c < nu; c++) free(labels[c]);
    free(labels);
    free(present);
    free(u);
    return st;
}

/* d's optimizer labels and names: the ng labels the runs were given
 * (glabels, their names gnames), copied and sorted by cmp_label; each run's
 * opt follows its label (run_label[r], its index in glabels). */
static ob_status sort_opt_labels(ob_dataset *d, char **glabels, char **gnames, int ng, const int *run_label,
                                 ob_err *e)
{
    ob_status st = OB_OK;
    d->opt_labels = calloc((size_t)ng + 1, sizeof *d->opt_labels);
    d->opt_names = calloc((size_t)ng + 1, sizeof *d->opt_names);
    if (!d->opt_labels || !d->opt_names) return no_mem(e, "labelling the runs");
    /* the entries are NULL until set, which ob_dataset_free takes */
    d->n_opt = ng;
    for (int i = 0; i < ng && st == OB_OK; i++)
        if (!(d->opt_labels[i] = strdup(glabels[i]))) st = no_mem(e, "labelling the runs");
    if (st != OB_OK) return st;
    qsort(d->opt_labels, (size_t)ng, sizeof *d->opt_labels, cmp_str);
    for (int i = 0; i < ng && st == OB_OK; i++)
        for (int g = 0; g < ng; g++)
            if (!strcmp(d->opt_labels[i], glabels[g]) && !(d->opt_names[i] = strdup(gnames[g])))
                st = no_mem(e, "labelling the runs");
    if (st != OB_OK) return st;
    for (int r = 0; r < d->n; r++) d->runs[r].opt = ob_dataset_find_opt(d, glabels[run_label[r]]);
    return OB_OK;
}

/* Assign r->wl and r->opt and fill the label lists. Runs are ordered by
 * workload, workload_params, optimizer, opt_key. */
static ob_status build_labels(sqlite3 *db, ob_dataset *d, ob_err *e)
{
    ob_status st = OB_OK;
    int *cfg = calloc((size_t)d->n + 1, sizeof *cfg);
    if (!cfg) return no_mem(e, "labelling the runs");
    /* workloads: per workload name, its distinct parameter sets (one bucket) */
    for (int i = 0; i < d->n && st == OB_OK;) {
        int j = i;
        while (j < d->n && !strcmp(d->runs[j].workload, d->runs[i].workload)) j++;
        st = label_workload(db, d, i, j, cfg, e);
        i = j;
    }
    /* workloads in label order, their numbers by value ("quadratic cond=5"
     * before "quadratic cond=10"), as the optimizers' below: the runs come
     * ordered by their parameters' text */
    if (st == OB_OK && d->n_wl > 1) st = sort_wl_labels(d, e);
    /* optimizers: per optimizer name over all workloads, buckets = workloads */
    char **glabels = NULL, **gnames = NULL;
    int ng = 0;
    int *run_label = calloc((size_t)d->n + 1, sizeof *run_label);
    char *done = calloc((size_t)d->n + 1, 1);
    if (st == OB_OK && (!run_label || !done)) st = no_mem(e, "labelling the runs");
    for (int i = 0; i < d->n && st == OB_OK; i++)
        if (!done[i]) st = label_optimizer(db, d, i, cfg, run_label, done, &glabels, &gnames, &ng, e);
    /* sorted label order: stable colours and table order across reports */
    if (st == OB_OK) st = sort_opt_labels(d, glabels, gnames, ng, run_label, e);
    for (int i = 0; i < ng; i++) {
        free(glabels[i]);
        free(gnames[i]);
    }
    free(glabels);
    free(gnames);
    free(run_label);
    free(done);
    free(cfg);
    return st;
}

/* ---- loading ------------------------------------------------------------- */

/* The id of db's latest benchmark into *id; bad input when its table of
 * benchmarks is empty. */
static ob_status latest_benchmark(sqlite3 *db, int64_t *id, ob_err *e)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT max(id) FROM benchmarks", -1, &q, NULL) != SQLITE_OK)
        return db_fail(db, e, "finding the latest benchmark");
    const int rc = sqlite3_step(q);
    *id = rc == SQLITE_ROW ? col_int(q, 0) : -1;
    if (rc != SQLITE_ROW) { /* a read that failed, not an empty table */
        ob_status st = db_fail(db, e, "finding the latest benchmark");
        sqlite3_finalize(q);
        return st;
    }
    sqlite3_finalize(q);
    if (*id <= 0)
        return ob_fail(e, OB_ERR_INPUT, "its table of benchmarks is empty, so no benchmark is the latest (ask "
                       "for all benchmarks, or use an intact copy)");
    return OB_OK;
}

/* The columns of the runs table that not every database has: 1 where db's has them. */
typedef struct run_cols {
    int stage, dmem, backend, device, mean, opt, prov, cpu;
} run_cols;

/* Which of run_cols's columns db's runs table has. runs.stage and
 * runs.device_mem_bytes are schema version 3: a database of an older
 * optbench, read as it is, has neither; backend and device are read only
 * when present too (a database written by another tool); runs.step_ms_mean
 * is version 4, git_rev and host 5, other_cpu 6. */
static run_cols runs_columns(sqlite3 *db)
{
    run_cols c = {0};
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT sum(name = 'stage'), sum(name = 'device_mem_bytes'), "
                               "sum(name = 'backend'), sum(name = 'device'), sum(name = 'step_ms_mean'), "
                               "sum(name = 'opt_ms_median') + sum(name = 'opt_ms_mean'), "
                               "sum(name = 'git_rev') + sum(name = 'host'), sum(name = 'other_cpu') "
                               "FROM pragma_table_info('runs')", -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW) {
            c.stage = sqlite3_column_int(q, 0) > 0;
            c.dmem = sqlite3_column_int(q, 1) > 0;
            c.backend = sqlite3_column_int(q, 2) > 0;
            c.device = sqlite3_column_int(q, 3) > 0;
            c.mean = sqlite3_column_int(q, 4) > 0;
            c.opt = sqlite3_column_int(q, 5) == 2;
            c.prov = sqlite3_column_int(q, 6) == 2;
            c.cpu = sqlite3_column_int(q, 7) > 0;
        }
        sqlite3_finalize(q);
    }
    return c;
}

/* The query of the runs (of benchmark ?1; 0: every benchmark) into sql (cap
 * bytes), NULL for the columns c says are missing: every run with its row
 * number rn within its cell (1: the run kept, the latest finished one) and
 * the cell's chosen run; its columns are read by read_run. */
static void runs_query(char *sql, size_t cap, const run_cols *c)
{
    snprintf(sql, cap,
             "SELECT id, benchmark_id, cell, workload, coalesce(workload_params, '{}'), optimizer, "
             " coalesce(hparams, '{}'), "
             " CASE WHEN json_valid(hparams) THEN json_remove(hk_, '$.lr') ELSE hk_ END AS opt_key, "
             " lr, seed, status, error, steps, steps_done, diverged_step, peak_mem_bytes, state_bytes, "
             " final_loss, best_loss, eval_loss, eval_metric, loss_floor, step_ms_median, step_ms_p90, "
             " items_per_sec, wall_s, rn, stage_, dmem_, "
             " (SELECT count(*) FROM events v WHERE v.run_id = rr.id AND v.kind = 'skipped_step'), "
             " (SELECT count(*) FROM events v WHERE v.run_id = rr.id AND v.kind = 'spike_skipped'), "
             " (SELECT count(*) FROM events v WHERE v.run_id = rr.id AND v.kind = 'optimizer' "
             "  AND v.detail LIKE 'rollback:%%'), "
             " coalesce(backend_, ''), coalesce(device_, ''), "
             " CASE WHEN json_valid(workload_params) AND steps IS NOT NULL "
             "  THEN json_set(wk_, '$.steps', steps) ELSE coalesce(workload_params, '{}') END, "
             " chosen_, mean_, optmed_, optmean_, "
             " (SELECT count(*) FROM events v WHERE v.run_id = rr.id AND v.kind = 'resumed'), "
             " coalesce(rev_, ''), coalesce(host_, ''), "
             " (SELECT count(*) FROM events v WHERE v.run_id = rr.id AND v.kind = 'restarted'), "
             /* its study: as stored by a matrix of several (config studies), else
              * 0 for a run of a search (a benchmark with trials), one study, so
              * that searches stored as benchmarks of their own are studies too */
             " coalesce(CASE WHEN json_valid(hparams) THEN json_extract(hparams, '$.search.study') END, "
             "  CASE WHEN (SELECT config FROM benchmarks b WHERE b.id = rr.benchmark_id) "
             "   GLOB ('*' || char(10) || 'trials: [1-9]*') THEN 0 END), "
             " CASE WHEN json_valid(workload_params) THEN wk_ ELSE coalesce(workload_params, '{}') END, "
             " cpu_ "
             "FROM (SELECT *, %s AS stage_, %s AS dmem_, %s AS backend_, %s AS device_, %s AS mean_, "
             "      %s AS optmed_, %s AS optmean_, %s AS rev_, %s AS host_, %s AS cpu_, "
             "      row_number() OVER cw AS rn, first_value(id) OVER cw AS chosen_ "
             /* a run's texts over this build's defaults (ob_defaults): a key
              * added since it was stored reads as its default */
             "      FROM (SELECT *, CASE WHEN json_valid(hparams) THEN json_patch(coalesce(ob_defaults(0, optimizer), "
             "            '{}'), hparams) ELSE coalesce(hparams, '') END AS hk_, "
             "            CASE WHEN json_valid(workload_params) THEN json_patch(coalesce(ob_defaults(1, workload), "
             "            '{}'), workload_params) ELSE coalesce(workload_params, '') END AS wk_ "
             "            FROM runs WHERE ?1 = 0 OR benchmark_id = ?1) "
             "      WINDOW cw AS (PARTITION BY workload, wk_, steps, optimizer, hk_, lr, seed, coalesce(%s, '') "
             "                    ORDER BY status IN ('done', 'diverged') DESC, id DESC)) AS rr "
             "ORDER BY workload, wk_, steps, optimizer, opt_key, lr, seed, id",
             c->stage ? "stage" : "NULL", c->dmem ? "device_mem_bytes" : "NULL", c->backend ? "backend" : "NULL",
             c->device ? "device" : "NULL", c->mean ? "step_ms_mean" : "NULL", c->opt ? "opt_ms_median" : "NULL",
             c->opt ? "opt_ms_mean" : "NULL", c->prov ? "git_rev" : "NULL", c->prov ? "host" : "NULL",
             c->cpu ? "other_cpu" : "NULL", c->stage ? "stage" : "NULL");
}

/* The numbers of the row of q (runs_query's) into r: counts, losses, times,
 * memory, its study, and whether it is a confirmation run, diverged or
 * finished (from r->status, read before). */
static void read_run_numbers(sqlite3_stmt *q, ob_rrun *r)
{
    r->steps = col_int(q, 12);
    r->steps_done = col_int(q, 13);
    r->diverged_step = col_int(q, 14);
    r->peak_mem_bytes = col_int(q, 15);
    r->state_bytes = col_int(q, 16);
    r->final_loss = col_real(q, 17);
    r->best_loss = col_real(q, 18);
    r->eval_loss = col_real(q, 19);
    r->eval_metric = col_real(q, 20);
    r->loss_floor = col_real(q, 21);
    r->step_ms_median = col_real(q, 22);
    r->step_ms_p90 = col_real(q, 23);
    r->step_ms_mean = col_real(q, 36);
    r->opt_ms_median = col_real(q, 37);
    r->opt_ms_mean = col_real(q, 38);
    r->items_per_sec = col_real(q, 24);
    r->wall_s = col_real(q, 25);
    r->other_cpu = col_real(q, 45);
    r->device_mem_bytes = col_int(q, 28);
    r->n_skip_nonfinite = sqlite3_column_int64(q, 29);
    r->n_skip_spike = sqlite3_column_int64(q, 30);
    r->n_rollback = sqlite3_column_int64(q, 31);
    r->n_resumed = sqlite3_column_int64(q, 39);
    r->n_restarted = sqlite3_column_int64(q, 42);
    {
        /* a study index as run writes it (0 .. OB_MAX_STUDIES - 1); anything else (a hand-edited
         * database) none */
        const sqlite3_int64 st = sqlite3_column_type(q, 43) == SQLITE_INTEGER ? sqlite3_column_int64(q, 43) : -1;
        r->study = st >= 0 && st < 64 ? (int)st : -1;
    }
    r->confirm = sqlite3_column_type(q, 27) == SQLITE_TEXT &&
                 !strcmp((const char *)sqlite3_column_text(q, 27), "confirm");
    r->diverged = !strcmp(r->status, "diverged");
    r->finished = r->diverged || !strcmp(r->status, "done");
}

/* The row of q (runs_query's) into r, cleared first; 0, or -1 out of memory
 * (r holds what was copied, which ob_dataset_free frees). */
static int read_run(sqlite3_stmt *q, ob_rrun *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(q, 0);
    r->first_loss = NAN; /* ob_dataset_load_curve_info */
    r->benchmark_id = col_int(q, 1);
    r->cell = col_int(q, 2);
    r->workload = dup_text(q, 3);
    r->workload_params = dup_text(q, 4);
    r->optimizer = dup_text(q, 5);
    r->hparams = dup_text(q, 6);
    r->opt_key = dup_text(q, 7);
    r->lr = col_real(q, 8);
    r->seed = col_int(q, 9);
    r->status = dup_text(q, 10);
    r->error = sqlite3_column_type(q, 11) == SQLITE_NULL ? NULL : dup_text(q, 11);
    r->backend = dup_text(q, 32);
    r->device = dup_text(q, 33);
    r->wl_key = dup_text(q, 34);
    r->git_rev = dup_text(q, 40);
    r->host = dup_text(q, 41);
    r->wl_params = dup_text(q, 44);
    /* counted, but cleared first: ob_dataset_free frees what got copied */
    if (!r->workload || !r->workload_params || !r->optimizer || !r->hparams || !r->opt_key || !r->status ||
        !r->backend || !r->device || !r->wl_key || !r->git_rev || !r->host || !r->wl_params ||
        (sqlite3_column_type(q, 11) != SQLITE_NULL && !r->error))
        return -1;
    read_run_numbers(q, r);
    return 0;
}

/* The runs of q (runs_query's, bound) into d: each cell's kept run, the
 * others counted (n_masked, n_superseded). Stops at a run whose lr is not
 * a learning rate (*bad 1, its id and lr into *bad_id and *bad_lr: any id,
 * 0 too, as an edited row may have) and out of memory (*oom 1). Returns
 * sqlite3_step's last code. */
static int read_runs(sqlite3_stmt *q, ob_dataset *d, int *oom, int *bad, int64_t *bad_id, double *bad_lr)
{
    int cap = 0, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (sqlite3_column_int64(q, 26) > 1) {
            /* a row later than the one kept is a run that failed or did not
             * finish, set aside for an earlier finished run of its cell */
            if (sqlite3_column_int64(q, 0) > sqlite3_column_int64(q, 35)) d->n_masked++;
            else d->n_superseded++;
            continue;
        }
        if (d->n == cap) {
            int ncap = cap ? 2 * cap : 64;
            ob_rrun *runs = realloc(d->runs, (size_t)ncap * sizeof *d->runs);
            if (!runs) {
                *oom = 1;
                break;
            }
            d->runs = runs;
            cap = ncap;
        }
        ob_rrun *r = &d->runs[d->n++];
        if (read_run(q, r) != 0) {
            *oom = 1;
            break;
        }
        if (!(isfinite(r->lr) && r->lr > 0)) { /* run refuses such lrs: an edited or foreign row */
            *bad = 1;
            *bad_id = r->id;
            *bad_lr = r->lr;
            break;
        }
    }
    return rc;
}

ob_status ob_dataset_load(sqlite3 *db, int64_t benchmark_id, ob_dataset *d, ob_err *e)
{
    memset(d, 0, sizeof *d);
    if (benchmark_id < 0) OB_TRY(latest_benchmark(db, &benchmark_id, e));
    d->benchmark_id = benchmark_id;
    const run_cols cols = runs_columns(db);
    char sql[4096];
    runs_query(sql, sizeof sql, &cols);
    sqlite3_stmt *q;
    if (ob_store_sql_defaults(db) != SQLITE_OK) return db_fail(db, e, "reading runs");
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) return db_fail(db, e, "reading runs");
    sqlite3_bind_int64(q, 1, benchmark_id);
    int oom = 0, bad = 0;
    int64_t bad_lr_id = 0;
    double bad_lr = 0;
    const int rc = read_runs(q, d, &oom, &bad, &bad_lr_id, &bad_lr);
    sqlite3_finalize(q);
    if (bad && !oom) {
        ob_dataset_free(d);
        return ob_fail(e, OB_ERR_INPUT, "run %lld has lr %g, not a learning rate (optbench stores only finite lrs "
                       "above 0: the row was edited or written by another program); correct that row of the "
                       "runs table (sqlite3 FILE), or use another database; nothing was changed",
                       (long long)bad_lr_id, bad_lr);
    }
    if (oom || rc != SQLITE_DONE) {
        ob_dataset_free(d);
        return oom ? no_mem(e, "reading runs") : db_fail(db, e, "reading runs");
    }
    ob_status st = build_labels(db, d, e);
    if (st != OB_OK) ob_dataset_free(d);
    return st;
}

/* Two runs in runs_query's order (workload, its parameters, steps,
 * optimizer, configuration, lr, seed), then by the part they came from and
 * their id: byte order, as SQLite's BINARY collation orders text. */
static int cmp_joined(const ob_rrun *a, int pa, const ob_rrun *b, int pb)
{
    int c;
    if ((c = strcmp(a->workload, b->workload)) || (c = strcmp(a->wl_params, b->wl_params))) return c;
    if (a->steps != b->steps) return a->steps < b->steps ? -1 : 1;
    if ((c = strcmp(a->optimizer, b->optimizer)) || (c = strcmp(a->opt_key, b->opt_key))) return c;
    if (a->lr != b->lr) return a->lr < b->lr ? -1 : 1;
    if (a->seed != b->seed) return a->seed < b->seed ? -1 : 1;
    if (pa != pb) return pa < pb ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

ob_status ob_dataset_join(ob_dataset *parts, int n, ob_dataset *out, ob_err *e)
{
    memset(out, 0, sizeof *out);
    if (n == 1) { /* labelled as they are: moved whole */
        *out = parts[0];
        out->benchmark_id = 0;
        memset(&parts[0], 0, sizeof parts[0]);
        return OB_OK;
    }
    int total = 0;
    for (int p = 0; p < n; p++) total += parts[p].n;
    /* each part's runs come in runs_query's order: merged, part by part */
    ob_rrun *runs = malloc((size_t)(total > 0 ? total : 1) * sizeof *runs);
    int *at = calloc((size_t)n + 1, sizeof *at);
    sqlite3 *mem = NULL;
    ob_status st = OB_OK;
    if (!runs || !at) st = no_mem(e, "joining the databases' runs");
    else if (sqlite3_open(":memory:", &mem) != SQLITE_OK) /* its JSON functions label the runs */
        st = ob_fail(e, OB_ERR_NOMEM, "joining the databases' runs: SQLite could not open a database in memory");
    if (st != OB_OK) {
        free(runs);
        free(at);
        sqlite3_close(mem);
        for (int p = 0; p < n; p++) ob_dataset_free(&parts[p]);
        return st;
    }
    for (int k = 0; k < total; k++) {
        int best = -1;
        for (int p = 0; p < n; p++)
            if (at[p] < parts[p].n &&
                (best < 0 || cmp_joined(&parts[p].runs[at[p]], p, &parts[best].runs[at[best]], best) < 0))
                best = p;
        runs[k] = parts[best].runs[at[best]++];
    }
    for (int p = 0; p < n; p++) {
        out->n_superseded += parts[p].n_superseded;
        out->n_masked += parts[p].n_masked;
        parts[p].n = 0; /* moved: freed with out */
        ob_dataset_free(&parts[p]);
    }
    free(at);
    out->runs = runs;
    out->n = total;
    st = build_labels(mem, out, e);
    sqlite3_close(mem);
    if (st != OB_OK) ob_dataset_free(out);
    return st;
}

/* Read run id's curve with q (SELECT step, loss ... WHERE run_id = ?1 ORDER
 * BY step) into *step and *loss (*cap points allocated, grown as needed):
 * *n points. */
static ob_status read_curve(sqlite3 *db, sqlite3_stmt *q, int64_t id, int64_t **step, double **loss, int64_t *n,
                            int64_t *cap, ob_err *e)
{
    *n = 0;
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, id);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (*n == *cap) {
            int64_t ncap = *cap ? 2 * *cap : 256;
            int64_t *s2 = realloc(*step, (size_t)ncap * sizeof **step);
            if (s2) *step = s2;
            double *l2 = s2 ? realloc(*loss, (size_t)ncap * sizeof **loss) : NULL;
            if (l2) *loss = l2;
            if (!l2) {
                sqlite3_reset(q);
                return no_mem(e, "reading curves");
            }
            *cap = ncap;
        }
        (*step)[*n] = sqlite3_column_int64(q, 0);
        (*loss)[*n] = col_real(q, 1);
        (*n)++;
    }
    if (rc != SQLITE_DONE) return db_fail(db, e, "reading curves");
    sqlite3_reset(q);
    return OB_OK;
}

static const char curve_sql[] = "SELECT step, loss FROM curves WHERE run_id = ?1 ORDER BY step";

ob_status ob_dataset_load_curve_info(sqlite3 *db, ob_dataset *d, ob_err *e)
{
    sqlite3_stmt *q;
    /* the first row of the run's curve, as ob_dataset_load_curves reads it */
    if (sqlite3_prepare_v2(db, "SELECT loss FROM curves WHERE run_id = ?1 ORDER BY step LIMIT 1", -1, &q, NULL) !=
        SQLITE_OK)
        return db_fail(db, e, "reading curves");
    for (int i = 0; i < d->n; i++) {
        ob_rrun *r = &d->runs[i];
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, r->id);
        const int rc = sqlite3_step(q);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            sqlite3_finalize(q);
            return db_fail(db, e, "reading curves");
        }
        r->first_loss = rc == SQLITE_ROW ? col_real(q, 0) : NAN;
    }
    sqlite3_finalize(q);
    if (sqlite3_prepare_v2(db, "SELECT count(*), count(loss), count(metric) FROM evals WHERE run_id = ?1",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(db, e, "reading evals");
    for (int i = 0; i < d->n; i++) {
        ob_rrun *r = &d->runs[i];
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, r->id);
        if (sqlite3_step(q) != SQLITE_ROW) {
            sqlite3_finalize(q);
            return db_fail(db, e, "reading evals");
        }
        r->n_evals = sqlite3_column_int64(q, 0);
        r->n_eval_loss = sqlite3_column_int64(q, 1);
        r->n_eval_metric = sqlite3_column_int64(q, 2);
    }
    sqlite3_finalize(q);
    return OB_OK;
}

ob_status ob_dataset_load_curves_of(sqlite3 *db, ob_dataset *d, const int *idx, int n, ob_err *e)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, curve_sql, -1, &q, NULL) != SQLITE_OK) return db_fail(db, e, "reading curves");
    ob_status st = OB_OK;
    for (int k = 0; k < n && st == OB_OK; k++) {
        ob_rrun *r = &d->runs[idx[k]];
        free(r->c_step);
        free(r->c_loss);
        r->c_step = NULL;
        r->c_loss = NULL;
        r->n_curve = 0;
        r->has_curve = 0;
        int64_t cap = 0;
        st = read_curve(db, q, r->id, &r->c_step, &r->c_loss, &r->n_curve, &cap, e);
        if (st == OB_OK) {
            r->has_curve = 1;
            r->first_loss = r->n_curve > 0 ? r->c_loss[0] : NAN;
            /* no room for points that will not come: a report keeps these
             * curves to the end */
            if (r->n_curve > 0 && r->n_curve < cap) {
                int64_t *s2 = realloc(r->c_step, (size_t)r->n_curve * sizeof *r->c_step);
                if (s2) r->c_step = s2;
                double *l2 = realloc(r->c_loss, (size_t)r->n_curve * sizeof *r->c_loss);
                if (l2) r->c_loss = l2;
            }
        }
    }
    sqlite3_finalize(q);
    return st;
}

ob_status ob_dataset_load_curves(sqlite3 *db, ob_dataset *d, ob_err *e)
{
    int *all = malloc(((size_t)d->n + 1) * sizeof *all);
    if (!all) return no_mem(e, "reading curves");
    for (int i = 0; i < d->n; i++) all[i] = i;
    ob_status st = ob_dataset_load_curves_of(db, d, all, d->n, e);
    free(all);
    return st != OB_OK ? st : ob_dataset_load_curve_info(db, d, e);
}

struct ob_curve_reader {
    sqlite3 *db;
    sqlite3_stmt *q, *qe[2]; /* curves; evals' loss and metric (prepared at their first read) */
    int64_t *step, *e_step;
    double *loss, *e_loss;
    int64_t cap, e_cap;
    int64_t reads;
    int failed;
};

ob_status ob_curve_reader_open(sqlite3 *db, ob_curve_reader **cr, ob_err *e)
{
    *cr = calloc(1, sizeof **cr);
    if (!*cr) return no_mem(e, "reading curves");
    (*cr)->db = db;
    if (sqlite3_prepare_v2(db, curve_sql, -1, &(*cr)->q, NULL) != SQLITE_OK) {
        ob_status st = db_fail(db, e, "reading curves");
        ob_curve_reader_close(*cr);
        *cr = NULL;
        return st;
    }
    return OB_OK;
}

ob_status ob_curve_reader_get(ob_curve_reader *cr, const ob_rrun *r, const int64_t **step, const double **loss,
                              int64_t *n, ob_err *e)
{
    if (r->has_curve) {
        *step = r->c_step;
        *loss = r->c_loss;
        *n = r->n_curve;
        return OB_OK;
    }
    *step = NULL;
    *loss = NULL;
    *n = 0;
    ob_status st = read_curve(cr->db, cr->q, r->id, &cr->step, &cr->loss, n, &cr->cap, e);
    if (st != OB_OK) {
        cr->failed = 1;
        *n = 0;
        return st;
    }
    cr->reads++;
    *step = cr->step;
    *loss = cr->loss;
    return OB_OK;
}

ob_status ob_curve_reader_evals(ob_curve_reader *cr, const ob_rrun *r, int metric, const int64_t **step,
                                const double **val, int64_t *n, ob_err *e)
{
    static const char *const sql[2] = {"SELECT step, loss FROM evals WHERE run_id = ?1 ORDER BY step",
                                       "SELECT step, metric FROM evals WHERE run_id = ?1 ORDER BY step"};
    metric = metric != 0;
    *step = NULL;
    *val = NULL;
    *n = 0;
    ob_status st = OB_OK;
    if (!cr->qe[metric] && sqlite3_prepare_v2(cr->db, sql[metric], -1, &cr->qe[metric], NULL) != SQLITE_OK)
        st = db_fail(cr->db, e, "reading evals");
    if (st == OB_OK) st = read_curve(cr->db, cr->qe[metric], r->id, &cr->e_step, &cr->e_loss, n, &cr->e_cap, e);
    if (st != OB_OK) {
        cr->failed = 1;
        *n = 0;
        return st;
    }
    *step = cr->e_step;
    *val = cr->e_loss;
    return OB_OK;
}

int64_t ob_curve_reader_reads(const ob_curve_reader *cr) { return cr->reads; }

int ob_curve_reader_failed(const ob_curve_reader *cr) { return cr->failed; }

void ob_curve_reader_close(ob_curve_reader *cr)
{
    if (!cr) return;
    sqlite3_finalize(cr->q);
    sqlite3_finalize(cr->qe[0]);
    sqlite3_finalize(cr->qe[1]);
    free(cr->step);
    free(cr->loss);
    free(cr->e_step);
    free(cr->e_loss);
    free(cr);
}

/* Column col as a copy; "?" for a NULL (a column without a value, or
 * SQLite out of memory converting it). */
static char *dup_or_unknown(sqlite3_stmt *q, int col)
{
    const unsigned char *t = sqlite3_column_text(q, col);
    return strdup(t ? (const char *)t : "?");
}

ob_status ob_bench_list_load(sqlite3 *db, ob_bench_list *l, ob_err *e)
{
    memset(l, 0, sizeof *l);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT id, git_rev, host, created_at, coalesce(name, ''), backend, device, finished_at "
                               "FROM benchmarks WHERE id IN (SELECT DISTINCT benchmark_id FROM runs) "
                               "ORDER BY created_at, id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(db, e, "reading the benchmarks");
    int rc = SQLITE_DONE, cap = 0, oom = 0;
    while (!oom && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (l->n == cap) {
            int ncap = cap ? 2 * cap : 16;
            ob_bench *b2 = realloc(l->b, (size_t)ncap * sizeof *l->b);
            if (!b2) {
                oom = 1;
                break;
            }
            l->b = b2;
            cap = ncap;
        }
        ob_bench *b = &l->b[l->n++];
        b->id = sqlite3_column_int64(q, 0);
        b->git_rev = dup_or_unknown(q, 1);
        b->host = dup_or_unknown(q, 2);
        b->created_at = dup_or_unknown(q, 3);
        b->name = dup_or_unknown(q, 4);
        b->backend = dup_or_unknown(q, 5);
        b->device = dup_or_unknown(q, 6);
        const int finished = sqlite3_column_type(q, 7) != SQLITE_NULL;
        const unsigned char *fin = finished ? sqlite3_column_text(q, 7) : NULL;
        b->finished_at = fin ? strdup((const char *)fin) : NULL;
        oom = !b->git_rev || !b->host || !b->created_at || !b->name || !b->backend || !b->device ||
              (finished && !b->finished_at);
    }
    sqlite3_finalize(q);
    if (oom || rc != SQLITE_DONE) {
        ob_bench_list_free(l);
        return oom ? no_mem(e, "reading the benchmarks") : db_fail(db, e, "reading the benchmarks");
    }
    return OB_OK;
}

const ob_bench *ob_bench_list_find(const ob_bench_list *l, int64_t id)
{
    for (int i = 0; i < l->n; i++)
        if (l->b[i].id == id) return &l->b[i];
    return NULL;
}

void ob_bench_list_free(ob_bench_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->b[i].git_rev);
        free(l->b[i].host);
        free(l->b[i].created_at);
        free(l->b[i].name);
        free(l->b[i].backend);
        free(l->b[i].device);
        free(l->b[i].finished_at);
    }
    free(l->b);
    memset(l, 0, sizeof *l);
}

static void rrun_free(ob_rrun *r)
{
    free(r->workload);
    free(r->workload_params);
    free(r->optimizer);
    free(r->hparams);
    free(r->opt_key);
    free(r->status);
    free(r->error);
    free(r->backend);
    free(r->device);
    free(r->git_rev);
    free(r->host);
    free(r->wl_key);
    free(r->wl_params);
    free(r->c_step);
    free(r->c_loss);
}

int ob_dataset_drop_confirm(ob_dataset *d, int *n_unfinished)
{
    int k = 0, dropped = 0;
    if (n_unfinished) *n_unfinished = 0;
    for (int i = 0; i < d->n; i++) {
        if (d->runs[i].confirm) {
            if (n_unfinished && d->runs[i].cell >= 0 && !d->runs[i].finished && strcmp(d->runs[i].status, "failed"))
                (*n_unfinished)++;
            rrun_free(&d->runs[i]);
            dropped++;
        } else {
            d->runs[k++] = d->runs[i];
        }
    }
    d->n = k;
    return dropped;
}

void ob_dataset_free(ob_dataset *d)
{
    for (int i = 0; i < d->n; i++) rrun_free(&d->runs[i]);
    free(d->runs);
    for (int i = 0; i < d->n_wl; i++) {
        free(d->wl_labels[i]);
        free(d->wl_names[i]);
    }
    for (int i = 0; i < d->n_opt; i++) {
        free(d->opt_labels[i]);
        free(d->opt_names[i]);
    }
    free(d->wl_labels);
    free(d->wl_names);
    free(d->opt_labels);
    free(d->opt_names);
    memset(d, 0, sizeof *d);
}

int ob_dataset_find_wl(const ob_dataset *d, const char *label)
{
    for (int i = 0; i < d->n_wl; i++)
        if (!strcmp(d->wl_labels[i], label)) return i;
    return -1;
}

int ob_dataset_find_opt(const ob_dataset *d, const char *label)
{
    for (int i = 0; i < d->n_opt; i++)
        if (!strcmp(d->opt_labels[i], label)) return i;
    return -1;
}

const char *ob_dataset_opt_name(const ob_dataset *d, int opt)
{
    return d->opt_names && d->opt_names[opt] ? d->opt_names[opt] : d->opt_labels[opt];
}

const char *ob_dataset_opt_config(const ob_dataset *d, int opt)
{
    const char *label = d->opt_labels[opt];
    const size_t n = strlen(d->opt_names[opt]);
    return strncmp(label, d->opt_names[opt], n) || label[n] != ' ' ? NULL : label + n + 1;
}
