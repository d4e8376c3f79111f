/* harness/resume.c - the benchmark `run --resume` continues (see resume.h). */
#include "harness/resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/cellspec.h"
#include "harness/locks.h"
#include "harness/run.h"
#include "harness/search.h"

ob_status ob_resume_keep_texts(ob_store *store, int64_t bench_id, ob_run_spec *specs, int n,
                               const unsigned char *relaxed, char (*wjson)[OB_SPEC_WL_JSON], char (*ojson)[OB_SPEC_OPT_JSON],
                               ob_err *e)
{
    int kept = 0;
    char keys[512] = "";
    for (int k = 0; k < n; k++) {
        if (!relaxed[k]) continue;
        char w[OB_SPEC_WL_JSON], o[OB_SPEC_OPT_JSON];
        int found = 0;
        OB_TRY(ob_store_sweep_texts(store, bench_id, specs[k].cell, w, sizeof w, o, sizeof o, &found, e));
        if (!found || (!strcmp(w, specs[k].workload_params) && !strcmp(o, specs[k].hparams))) continue;
        if (!kept++) {
            char kw[256] = "", ko[256] = "";
            ob_store_equivalent(store, w, specs[k].workload_params, specs[k].workload_defaults, kw, sizeof kw);
            ob_store_equivalent(store, o, specs[k].hparams, specs[k].hparams_defaults, ko, sizeof ko);
            snprintf(keys, sizeof keys, "%s%s%s", kw, kw[0] && ko[0] ? ", " : "", ko);
        }
        memcpy(wjson[k], w, sizeof w);
        memcpy(ojson[k], o, sizeof o);
        specs[k].workload_params = wjson[k];
        specs[k].hparams = ojson[k];
    }
    if (kept && keys[0])
        fprintf(stderr,
                "optbench: note: --resume: %d of benchmark %lld's cells were stored by a build without the settings "
                "%s (added since, run at their defaults, which keep what that build did): continued, with the "
                "settings they were stored with\n",
                kept, (long long)bench_id, keys);
    else if (kept)
        fprintf(stderr,
                "optbench: note: --resume: %d of benchmark %lld's cells were stored with settings texts that differ "
                "from this build's only by keys at their defaults (a setting another build had or lacked): "
                "continued, with the texts they were stored with\n",
                kept, (long long)bench_id);
    return OB_OK;
}

/* Where a grown matrix puts an earlier benchmark's confirmation runs: the
 * pair (as confirm_stage counts them) of each of the process's cells (its
 * shard's, in order) into pair, and the plan for ob_store_find_grown. */
static void grow_plan(const ob_config *c, const ob_matrix *m, int *pair, ob_grow_plan *plan)
{
    for (int i = 0, j = 0, p = -1; i < m->n; i++) {
        if (i == 0 || !ob_cell_same_pair(&m->cells[i], &m->cells[i - 1])) p++;
        if (ob_config_in_shard(c, m->cells[i].index)) pair[j++] = p;
    }
    *plan = (ob_grow_plan){pair, m->n, OB_CFG_MAX_CONFIRM, 0};
    ob_matrix_confirm_plan(m, &plan->confirm_seed0);
}

ob_status ob_resume_find(const ob_config *c, const ob_matrix *m, ob_store *store, const ob_run_spec *specs, int n,
                         int64_t *ids, unsigned char *relaxed, ob_resume_found *f, ob_err *e)
{
    memset(f, 0, sizeof *f);
    char shard[64] = "";
    if (c->shard_n > 0) snprintf(shard, sizeof shard, "%d/%d", c->shard_k, c->shard_n);
    OB_TRY(ob_store_find_benchmark(store, shard[0] ? shard : NULL, specs, n, &f->bench, ids, relaxed, f->why,
                                   sizeof f->why, e));
    if (f->bench || shard[0]) return OB_OK; /* a shard continues only its own matrix */
    int *pair = malloc(((size_t)n + 1) * sizeof *pair);
    if (!pair) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n);
    ob_grow_plan plan;
    grow_plan(c, m, pair, &plan); /* the unsharded matrix: specs[k] is m->cells[k] */
    char note[600] = "";
    ob_status s =
        ob_store_find_grown(store, specs, n, &plan, &f->bench, ids, &f->held, &f->to_retire, note, sizeof note, e);
    free(pair);
    /* what keeps the newest from being grown says more than how its cells differ */
    if (s == OB_OK && !f->bench && note[0]) snprintf(f->why, sizeof f->why, "%s", note);
    f->grown = s == OB_OK && f->bench != 0;
    if (!f->grown)
        for (int k = 0; k < n; k++) ids[k] = 0;
    return s;
}

ob_status ob_resume_grow(const ob_config *c, const ob_matrix *m, ob_store *store, const ob_run_spec *specs, int n,
                         const ob_resume_found *f, int64_t *ids, ob_err *e)
{
    const int64_t bench = f->bench;
    /* a process running it, maybe between two cells, holds its lock */
    int fd = -1;
    OB_TRY(ob_lock_bench(ob_store_path(store), bench, 1, &fd, e));
    if (fd < 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "--resume: this matrix grew from benchmark %lld of '%s', which another process is running: "
                       "its cells cannot be renumbered under it; let that process finish (or stop it), then run "
                       "this again",
                       (long long)bench, ob_store_path(store));
    /* tested, not kept (the lock this process runs under is taken after
     * the growth), and its file gone: no one else held it */
    ob_unlock_bench(ob_store_path(store), bench, fd);
    for (int k = 0; k < n; k++) {
        char owner[400], who[320];
        if (!ids[k] || !ob_lock_run_held(ob_store_path(store), ids[k], owner, sizeof owner)) continue;
        ob_lock_owner_text(owner, who, sizeof who);
        return ob_fail(e, OB_ERR_INPUT,
                       "--resume: this matrix grew from benchmark %lld of '%s', which another process is running "
                       "(%s runs its run %lld): its cells cannot be renumbered under it; let that process finish "
                       "(or stop it), then run this again",
                       (long long)bench, ob_store_path(store), who, (long long)ids[k]);
    }
    int *pair = malloc(((size_t)n + 1) * sizeof *pair);
    if (!pair) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n);
    ob_grow_plan plan;
    grow_plan(c, m, pair, &plan);
    int retired = 0;
    ob_status s = ob_store_grow(store, bench, specs, n, &plan, ids, &retired, e);
    free(pair);
    if (s != OB_OK) return s;
    if (retired)
        fprintf(stderr, "optbench: --resume: %d of benchmark %lld's confirmation runs ran a seed that the grown "
                        "sweep runs now: retired (kept in the database, at no cell of the matrix); the confirmation "
                        "stage runs fresh seeds again\n",
                retired, (long long)bench);
    if (f->held == n)
        fprintf(stderr, "optbench: --resume: benchmark %lld holds this matrix's %d cells in another order: "
                        "renumbered\n", (long long)bench, n);
    else
        fprintf(stderr, "optbench: --resume: benchmark %lld holds %d of this matrix's %d cells (the matrix "
                        "grew): the %d others are added to it\n",
                (long long)bench, f->held, n, n - f->held);
    return OB_OK;
}

/* The process's cells of m, and the benchmark --resume would continue with
 * them (read only): for the preview and for the choice of a stored search's
 * draws. Free with lookup_free. */
typedef struct lookup {
    ob_cell_set set;
    unsigned char *relaxed;
    ob_resume_found f;
} lookup;

static void lookup_free(lookup *l)
{
    ob_cell_set_free(&l->set);
    free(l->relaxed);
}

static ob_status lookup_find(const ob_config *c, const ob_matrix *m, ob_store *store, lookup *l, ob_err *e)
{
    memset(l, 0, sizeof *l);
    OB_TRY(ob_cell_set_build(c, m, NULL, "", &l->set, e));
    if (!(l->relaxed = calloc((size_t)l->set.n + 1, 1)))
        return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", l->set.n);
    return ob_resume_find(c, m, store, l->set.specs, l->set.n, l->set.ids, l->relaxed, &l->f, e);
}

ob_status ob_resume_search_draws(ob_config *c, ob_matrix *m, ob_err *e)
{
    struct stat sb;
    if (!c->resume || c->trials <= 0 || c->search_draws > 0 || stat(c->db, &sb) != 0 || ob_store_empty(c->db))
        return OB_OK;
    ob_store *st = NULL;
    OB_TRY(ob_store_open(c->db, OB_STORE_READONLY, &st, e));
    lookup now, was;
    ob_status s = lookup_find(c, m, st, &now, e);
    const int64_t found_now = now.f.bench;
    lookup_free(&now);
    if (s != OB_OK || found_now) goto out;
    ob_matrix m1;
    c->search_draws = 1;
    if ((s = ob_matrix_expand(c, &m1, NULL, e)) != OB_OK) {
        c->search_draws = 0;
        goto out;
    }
    s = lookup_find(c, &m1, st, &was, e);
    const int64_t found_was = was.f.bench;
    lookup_free(&was);
    if (s == OB_OK && found_was) {
        ob_matrix_free(m);
        *m = m1;
        fprintf(stderr,
                "optbench: note: --resume: benchmark %lld is a search drawn as builds before 2026-12-06 drew (one "
                "scrambling per digit position, search_draws 1): it continues with those draws (a new search "
                "takes search_draws %d)\n",
                (long long)found_was, OB_SEARCH_DRAWS);
    } else {
        ob_matrix_free(&m1);
        c->search_draws = 0;
    }
out:
    ob_store_close(st);
    return s;
}

ob_status ob_run_resume_preview(const ob_config *c, const ob_matrix *m, ob_store *store, char *buf, size_t n,
                                ob_err *e)
{
    lookup lk;
    ob_status s = lookup_find(c, m, store, &lk, e);
    if (s != OB_OK) goto out;
    const int k = lk.set.n;
    const int64_t *ids = lk.set.ids;
    const unsigned char *relaxed = lk.relaxed;
    const ob_resume_found f = lk.f;
    if (!f.bench) {
        snprintf(buf, n, "--resume: %s; it would start a new benchmark", f.why);
        goto out;
    }
    int n_relaxed = 0;
    for (int j = 0; j < k; j++) n_relaxed += relaxed[j];
    int finished = 0, cont = 0, start = 0, held = 0;
    for (int j = 0; j < k && s == OB_OK; j++) {
        char status[32] = "";
        if (!ids[j]) {
            start++;
            continue;
        }
        held++;
        if ((s = ob_store_run_status(store, ids[j], status, sizeof status, e)) != OB_OK) break;
        if (ob_store_status_finished(status)) finished++;
        else if (!strcmp(status, "pending")) start++;
        else cont++;
    }
    if (s != OB_OK) goto out;
    size_t l = (size_t)snprintf(buf, n, "--resume: it would continue benchmark %lld", (long long)f.bench);
    if (f.grown && held < k && l < n)
        l += (size_t)snprintf(buf + l, n - l, ", which holds %d of this matrix's %d cells (the matrix grew)", held, k);
    else if (f.grown && l < n)
        l += (size_t)snprintf(buf + l, n - l, ", which holds this matrix's cells in another order");
    if (l < n)
        l += (size_t)snprintf(buf + l, n - l, ": %d of %d cells finished, %d to continue, %d to start", finished, k,
                              cont, start);
    if (n_relaxed && l < n)
        l += (size_t)snprintf(buf + l, n - l, " (%d stored without settings this build added, at their defaults)",
                              n_relaxed);
    if (f.to_retire && l < n)
        snprintf(buf + l, n - l, "; %d confirmation run%s whose seed the grown sweep runs would be retired",
                 f.to_retire, f.to_retire == 1 ? "" : "s");
out:
    lookup_free(&lk);
    return s;
}
