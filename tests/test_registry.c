/* tests/test_registry.c - what every optimizer and workload of the
 * registries must have, so that adding one and forgetting a part fails here,
 * by name, rather than somewhere else or not at all: a name, a summary,
 * hyperparameter tables with unique names ("lr" first for an optimizer, with
 * a lower bound of 0 left open), the hooks a run calls, the state in words or
 * floats, a colour and marker of its own in the figures (plots/style.c), a
 * place in the nightly config (with its lrs), and the README's count. */
#include <string.h>

#include "check.h"
#include "optimizers/optim.h"
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
    }
    const char *what = NULL, *missing = ob_series_style_missing(&what);
    CHECK_MSG(!missing, "optimizer '%s' lacks %s", missing, what ? what : "");
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

/* configs/nightly.yaml runs every optimizer ("every optimizer on the four
 * CI-sized workloads"), each with its lrs; the README counts them. */
static void test_docs(void)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    char *y = source_text("configs/nightly.yaml");
    CHECK_MSG(y != NULL, "cannot read configs/nightly.yaml (OB_SOURCE_DIR)");
    const char *line = y ? strstr(y, "\noptimizers: [") : NULL;
    const char *lrs = y ? strstr(y, "\nlrs:") : NULL;
    CHECK(line && lrs);
    for (int i = 0; line && lrs && i < n; i++) {
        char tok[96], key[96];
        const char *eol = strchr(line + 1, '\n');
        int found = 0;
        /* the name as a whole entry of the list: "[name," ", name," ", name]" */
        for (const char *sep = "[ "; *sep && !found; sep++)
            for (const char *end = ",]"; *end && !found; end++) {
                snprintf(tok, sizeof tok, "%c%s%c", *sep, all[i]->name, *end);
                const char *at = strstr(line, tok);
                found = at && (!eol || at < eol);
            }
        CHECK_MSG(found, "configs/nightly.yaml: optimizers: lacks %s", all[i]->name);
        snprintf(key, sizeof key, "\n  %s:", all[i]->name);
        CHECK_MSG(strstr(lrs, key) != NULL, "configs/nightly.yaml: lrs: lacks %s", all[i]->name);
    }
    free(y);
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
    test_workloads();
    test_docs();
    return check_done();
}
