/* tests/test_registry.c - what every optimizer and workload of the
 * registries must have, so that adding one and forgetting a part fails here,
 * by name, rather than somewhere else or not at all: a name, a summary,
 * hyperparameter tables with unique names ("lr" first for an optimizer, with
 * a lower bound of 0 left open), the hooks a run calls, the state in words or
 * floats, a colour and marker of its own in the figures (plots/style.c), a
 * place in the nightly config (with its lrs), and the README's count; and
 * that its state, its own host state included, is all in the blobs a
 * checkpoint keeps. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "harness/cellspec.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "optimizers/optim.h"
#include "optimizers/optim_impl.h"
#include "optim_rig.h"
#include "plots/style.h"
#include "workloads/workload.h"

/* No two entries of the table share a name. */
static void unique_hp(const char *owner, const ob_hp_def *hp, int n)
{
    for (int i = 0; i < n; i++) {
        CHECK_MSG(hp[i].name && hp[i].name[0] && hp[i].help && hp[i].help[0], "%s: hyperparameter %d has no name or help",
                  owner, i);
        for (int j = i + 1; j < n; j++)
            CHECK_MSG(!hp[i].name || !hp[j].name || strcmp(hp[i].name, hp[j].name) != 0,
                      "%s: hyperparameter '%s' twice", owner, hp[i].name);
    }
}

static void test_optimizers(void)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        const ob_optimizer_def *o = all[i];
        CHECK_MSG(o->name && o->name[0] && o->summary && o->summary[0], "optimizer %d: no name or summary", i);
        const char *name = o->name ? o->name : "?";
        for (int j = i + 1; j < n; j++) CHECK_MSG(strcmp(name, all[j]->name) != 0, "optimizer '%s' twice", name);
        CHECK_MSG(o->hp && o->n_hp >= 1 && o->n_hp <= OB_HP_MAX, "%s: no hyperparameter table", name);
        if (!o->hp || o->n_hp < 1) continue;
        CHECK_MSG(!strcmp(o->hp[0].name, "lr") && o->hp[0].min == 0 && o->hp[0].min_open && o->hp[0].def > 0,
                  "%s: its first hyperparameter must be lr, > 0", name);
        unique_hp(name, o->hp, o->n_hp);
        CHECK_MSG(o->group_rule && o->group_step, "%s: no group_rule or group_step", name);
        CHECK_MSG(o->state_per_param || (o->state_text && o->state_text[0]), "%s: its state neither in floats nor in words",
                  name);
        CHECK_MSG(!o->host_state_rebuilds || o->host_state_bytes > 0, "%s: host_state_rebuilds without host state",
                  name);
    }
    const char *what = NULL, *missing = ob_series_style_missing(&what);
    CHECK_MSG(!missing, "optimizer '%s' lacks %s", missing, what ? what : "");
}

/* Steps from..to of r with gradients of step s; a NaN in one at step nan_at. */
static void host_steps(rig *r, int from, int to, int nan_at)
{
    ob_err e;
    for (int s = from; s <= to; s++) {
        for (int64_t i = 0; i < r->lay.total; i++) r->g[i] = 0.1f * sinf((float)(7 * s + 3 * i));
        if (s == nan_at) r->g[1] = NAN;
        CHECK_OK(ob_optim_step(r->opt, r->p, r->g, r->loss, s, r->rec, &e), &e);
    }
}

/* Every optimizer, under the rollback guard: after 6 steps, its blobs
 * (what a checkpoint keeps) copied into a fresh one restore its host state
 * (ob_optimizer_def.host_state_bytes, blob "optim.host", and the snapshot's
 * "guard.snap_host") byte for byte, and the two continue bit for bit,
 * through a rollback. An optimizer that kept state outside the blobs would
 * drift here. */
static void test_state_round_trip(void)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    for (int oi = 0; oi < n; oi++) {
        const ob_optimizer_def *d = all[oi];
        rig r[2];
        for (int k = 0; k < 2; k++) {
            ob_err e;
            memset(&r[k], 0, sizeof r[k]);
            CHECK_OK(ob_device_open(&r[k].dev, "cpu", 0, &e), &e);
            ob_layout_init(&r[k].lay);
            const int64_t w[2] = {4, 6}, b[1] = {6};
            CHECK_OK(ob_layout_add(&r[k].lay, "w", OB_TAG_MATRIX, 2, w, NULL, &e), &e);
            CHECK_OK(ob_layout_add(&r[k].lay, "b", OB_TAG_BIAS, 1, b, NULL, &e), &e);
            rig_setup_layout(&r[k], d->name, NULL, "on_nonfinite=rollback,snapshot_every=2", 20);
            for (int64_t i = 0; i < r[k].lay.total; i++) r[k].p[i] = 0.05f * (float)(i % 7) - 0.1f;
        }
        host_steps(&r[0], 1, 6, 0);
        ob_state_blob ba[64], bb[64];
        int na = ob_optim_state_blobs(r[0].opt, ba, 64), nb = ob_optim_state_blobs(r[1].opt, bb, 64);
        CHECK_MSG(na == nb && na <= 64, "%s: %d and %d state blobs", d->name, na, nb);
        int have_host = 0, have_snap = 0;
        for (int i = 0; i < na && i < 64 && na == nb; i++) {
            CHECK_MSG(!strcmp(ba[i].name, bb[i].name) && ba[i].bytes == bb[i].bytes, "%s: blob %s", d->name,
                      ba[i].name);
            memcpy(bb[i].ptr, ba[i].ptr, ba[i].bytes); /* (the CPU backend's device memory is the host's) */
            have_host += !strcmp(ba[i].name, "optim.host") && ba[i].bytes == d->host_state_bytes;
            have_snap += !strcmp(ba[i].name, "guard.snap_host") && ba[i].bytes == d->host_state_bytes;
        }
        memcpy(r[1].p, r[0].p, (size_t)r[0].lay.total * sizeof(float));
        if (d->host_state_bytes) {
            CHECK_MSG(have_host == 1 && have_snap == 1, "%s: its host state is not in the blobs (%d, %d)", d->name,
                      have_host, have_snap);
            CHECK_MSG(!memcmp(r[0].opt->host, r[1].opt->host, d->host_state_bytes) &&
                          !memcmp(r[0].opt->snap_host, r[1].opt->snap_host, d->host_state_bytes),
                      "%s: its host state did not come back byte for byte", d->name);
        } else {
            CHECK_MSG(!have_host && !have_snap && !r[0].opt->host, "%s: host state blobs without host_state_bytes",
                      d->name);
        }
        host_steps(&r[0], 7, 12, 9);
        host_steps(&r[1], 7, 12, 9);
        CHECK_MSG(!memcmp(r[0].p, r[1].p, (size_t)r[0].lay.total * sizeof(float)),
                  "%s: the restored optimizer drifted", d->name);
        if (d->host_state_bytes)
            CHECK_MSG(!memcmp(r[0].opt->host, r[1].opt->host, d->host_state_bytes), "%s: host state drifted", d->name);
        rig_close(&r[0]);
        rig_close(&r[1]);
    }
}

static void test_workloads(void)
{
    int n;
    const ob_workload_def *const *all = ob_workloads(&n);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        const ob_workload_def *w = all[i];
        CHECK_MSG(w->name && w->name[0] && w->summary && w->summary[0] && w->create, "workload %d: no name, summary or create",
                  i);
        const char *name = w->name ? w->name : "?";
        for (int j = i + 1; j < n; j++) CHECK_MSG(strcmp(name, all[j]->name) != 0, "workload '%s' twice", name);
        if (w->n_hp) unique_hp(name, w->hp, w->n_hp);
    }
}

/* The text of the file at the source tree's path rel (NULL when unreadable). */
static char *source_text(const char *rel)
{
    const char *root = getenv("OB_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    size_t len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    if (buf) buf[len] = 0;
    fclose(f);
    return buf;
}

/* The longest JSON text (ob_hp_to_json) the table's values can make: each
 * key at its widest value (a float's %.9g at most 16 characters, an int's
 * 20, the longest choice of an enum). */
static size_t widest_json(const ob_hp_def *hp, int n)
{
    size_t len = 2; /* {} */
    for (int i = 0; i < n; i++) {
        size_t w = hp[i].kind == OB_HP_BOOL ? 5 : hp[i].kind == OB_HP_INT ? 20 : 16;
        if (hp[i].kind == OB_HP_ENUM) {
            w = 0;
            for (const char *p = hp[i].choices; p && *p;) {
                const char *bar = strchr(p, '|');
                const size_t l = bar ? (size_t)(bar - p) : strlen(p);
                if (l > w) w = l;
                p = bar ? bar + 1 : NULL;
            }
            w += 2; /* quoted */
        }
        len += (i ? 1 : 0) + strlen(hp[i].name) + 3 + w;
    }
    return len;
}

/* Every run's settings texts fit what a run spec holds (harness/cellspec.h):
 * a table grown past them would be cut (ob_cell_spec refuses such a run). */
static void test_spec_sizes(void)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    const size_t train = widest_json(ob_train_hp_defs, ob_train_hp_count);
    CHECK_MSG(train < OB_SPEC_TRAIN_JSON, "the training settings' JSON may take %zu characters, over %d", train,
              OB_SPEC_TRAIN_JSON - 1);
    for (int i = 0; i < n; i++) {
        const size_t w = widest_json(all[i]->hp, all[i]->n_hp);
        CHECK_MSG(w < OB_SPEC_HP_JSON, "%s: its settings' JSON may take %zu characters, over %d", all[i]->name, w,
                  OB_SPEC_HP_JSON - 1);
        char buf[OB_SPEC_OPT_JSON];
        CHECK_MSG(ob_optimizer_defaults_json(all[i], buf, sizeof buf) < sizeof buf, "%s: its defaults' text is cut",
                  all[i]->name);
        /* and the whole text, with a study's number, leaves room for route rules */
        CHECK_MSG(w + train + 64 < OB_SPEC_OPT_JSON / 2, "%s: its settings leave little room for route rules",
                  all[i]->name);
    }
    const ob_workload_def *const *wl = ob_workloads(&n);
    for (int i = 0; i < n; i++) {
        const size_t w = widest_json(wl[i]->hp, wl[i]->n_hp);
        CHECK_MSG(w < OB_SPEC_WL_JSON, "%s: its parameters' JSON may take %zu characters, over %d", wl[i]->name, w,
                  OB_SPEC_WL_JSON - 1);
    }
    /* the bound is a bound: a table at its widest values */
    ob_hp_values hv;
    ob_hp_defaults(&hv, ob_train_hp_defs, ob_train_hp_count);
    for (int i = 0; i < hv.n; i++)
        if (hv.defs[i].kind == OB_HP_FLOAT) hv.v[i] = -1.23456789e-300;
    char buf[OB_SPEC_TRAIN_JSON];
    const size_t got = ob_hp_to_json(&hv, buf, sizeof buf);
    CHECK_MSG(got <= train && got == strlen(buf), "train JSON %zu characters, bound %zu", got, train);
}

/* configs/nightly.yaml, read as `run` reads it, runs every optimizer
 * ("every optimizer on the four CI-sized workloads"), each with lrs of its
 * own, and its header's run count is the matrix's; the README counts the
 * optimizers. */
static void test_docs(void)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    const char *root = getenv("OB_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/nightly.yaml", root ? root : ".");
    ob_config *c = malloc(sizeof *c);
    ob_matrix m = {0};
    ob_err e = {0};
    CHECK(c != NULL);
    if (!c) return;
    ob_config_init(c);
    CHECK_OK(ob_config_load_file(c, path, &e), &e);
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int k = 0; k < c->n_optimizers; k++) found |= !strcmp(c->optimizers[k], all[i]->name);
        CHECK_MSG(found, "configs/nightly.yaml: optimizers: lacks %s", all[i]->name);
        const ob_lr_list *l = ob_config_lrs_for(c, all[i]->name);
        CHECK_MSG(l && !strcmp(l->optimizer, all[i]->name), "configs/nightly.yaml: lrs: lacks %s", all[i]->name);
    }
    char *y = source_text("configs/nightly.yaml");
    CHECK_MSG(y != NULL, "cannot read configs/nightly.yaml (OB_SOURCE_DIR)");
    if (ob_matrix_expand(c, &m, NULL, &e) == OB_OK) {
        char said[64];
        snprintf(said, sizeof said, ": %d runs (", m.n);
        CHECK_MSG(y && strstr(y, said), "configs/nightly.yaml: its header does not say '%s' (the matrix's count)",
                  said);
        ob_matrix_free(&m);
    } else {
        CHECK_MSG(0, "configs/nightly.yaml: %s", e.msg);
    }
    free(y);
    ob_config_free(c);
    free(c);
    /* every optimizer has an end-to-end reference: a case of
     * tests/test_optim_ref.c, a test of its own (tests/test_NAME.c), or a
     * place in scripts/conformance_torch.py's list (against torch.optim) */
    char *ref = source_text("tests/test_optim_ref.c"), *conf = source_text("scripts/conformance_torch.py");
    CHECK_MSG(ref && conf, "cannot read tests/test_optim_ref.c or scripts/conformance_torch.py (OB_SOURCE_DIR)");
    const char *opts = conf ? strstr(conf, "\n    opts = [") : NULL;
    const char *opts_end = opts ? strstr(opts, "if a.only") : NULL;
    for (int i = 0; ref && opts && opts_end && i < n; i++) {
        char pat[96], own[128];
        snprintf(pat, sizeof pat, "\", \"%s\", \"", all[i]->name); /* {"case", "NAME", "shape", ... */
        int found = strstr(ref, pat) != NULL;
        snprintf(pat, sizeof pat, "\"%s\"", all[i]->name);
        const char *at = strstr(opts, pat);
        found |= at && at < opts_end;
        snprintf(own, sizeof own, "tests/test_%s.c", all[i]->name);
        char *t = found ? NULL : source_text(own);
        found |= t != NULL;
        free(t);
        CHECK_MSG(found, "optimizer %s has no end-to-end reference: a case in tests/test_optim_ref.c, a "
                  "tests/test_%s.c, or a place in scripts/conformance_torch.py's opts", all[i]->name, all[i]->name);
    }
    free(ref);
    free(conf);
    char *readme = source_text("README.md");
    CHECK_MSG(readme != NULL, "cannot read README.md (OB_SOURCE_DIR)");
    char count[64];
    snprintf(count, sizeof count, "Its %d optimizers", n);
    CHECK_MSG(readme && strstr(readme, count), "README.md does not say '%s'", count);
    free(readme);
}

int main(void)
{
    test_optimizers();
    test_state_round_trip();
    test_workloads();
    test_spec_sizes();
    test_docs();
    return check_done();
}
