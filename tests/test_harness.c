/* tests/test_harness.c - configuration parsing (YAML and flags), matrix
 * expansion and validation, curve statistics. */
#include <string.h>

#include "check.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/run.h"

static ob_status load(ob_config *c, const char *text, ob_err *e)
{
    ob_config_init(c);
    return ob_config_load_text(c, text, "t.yaml", e);
}

static void test_yaml_ok(void)
{
    ob_config c;
    ob_err e;
    CHECK_OK(load(&c,
                  "name: nightly\n"
                  "workloads: [quadratic, rosenbrock]\n"
                  "optimizers: sgd,adam\n"
                  "lrs: [0.001, 0.01]\n"
                  "seeds: 3\n"
                  "steps: 50\n"
                  "eval_every: 10\n"
                  "backend: cpu\n"
                  "hparams:\n  adam: {beta2: 0.95}\n"
                  "workload_params:\n  quadratic: {dim: 20}\n"
                  "train: {clip_norm: 1.5}\n",
                  &e),
             &e);
    CHECK(c.n_workloads == 2 && !strcmp(c.workloads[1], "rosenbrock"));
    CHECK(c.n_optimizers == 2 && !strcmp(c.optimizers[1], "adam"));
    CHECK(c.n_seeds == 3 && c.seeds[2] == 2);
    CHECK(c.steps == 50 && c.eval_every == 10 && !strcmp(c.backend, "cpu"));
    CHECK(c.n_settings == 3);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == 2 * 2 * 2 * 3);
    /* order: workload, optimizer, lr, seed */
    CHECK(!strcmp(m.cells[0].wl->name, "quadratic") && !strcmp(m.cells[0].opt->name, "sgd"));
    CHECK(m.cells[1].seed == 1 && m.cells[3].lr == 0.01 && m.cells[6].opt == ob_optimizer_find("adam"));
    CHECK(!strcmp(m.cells[12].wl->name, "rosenbrock"));
    CHECK_NEAR(ob_hp_get(&m.cells[6].opt_hp, "beta2"), 0.95, 0);
    CHECK_NEAR(ob_hp_get(&m.cells[6].opt_hp, "lr"), 0.001, 0);
    CHECK_NEAR(ob_hp_get(&m.cells[0].wl_hp, "dim"), 20, 0);
    CHECK_NEAR(ob_hp_get(&m.cells[13].wl_hp, "dim"), 10, 0); /* rosenbrock default */
    CHECK_NEAR(ob_hp_get(&m.cells[5].train_hp, "clip_norm"), 1.5, 0);
    for (int i = 0; i < m.n; i++) CHECK(m.cells[i].index == i);
    ob_matrix_free(&m);
    ob_config_free(&c);

    /* per-optimizer lr lists and explicit seeds */
    CHECK_OK(load(&c, "workloads: quadratic\noptimizers: [sgd, adam]\nlrs: {sgd: [0.1, 0.2], adam: [0.001]}\nseeds: [5]\n", &e), &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == 3 && m.cells[0].seed == 5 && m.cells[1].lr == 0.2 && m.cells[2].lr == 0.001);
    ob_matrix_free(&m);
    ob_config_free(&c);
}

static void expect_bad(const char *text, const char *needle)
{
    ob_config c;
    ob_err e;
    ob_err_clear(&e);
    ob_status s = load(&c, text, &e);
    if (s == OB_OK) {
        ob_matrix m;
        s = ob_matrix_expand(&c, &m, NULL, &e);
        if (s == OB_OK) ob_matrix_free(&m);
    }
    CHECK_MSG(s == OB_ERR_INPUT, "accepted: %s", text);
    CHECK_MSG(strstr(e.msg, needle) != NULL, "message '%s' lacks '%s'", e.msg, needle);
    ob_config_free(&c);
}

static void test_yaml_bad(void)
{
    expect_bad("workloads: quadratic\noptimizers: sgd\nstesp: 10\n", "t.yaml:3: unknown key 'stesp' (did you mean 'steps'?)");
    expect_bad("workloads: quadratic\nworkloads: rosenbrock\noptimizers: sgd\n", "t.yaml:2: key 'workloads' appears twice");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsteps: [1, 2]\n", "t.yaml:3: steps must be a single value");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsteps: 0\n", "steps must be >= 1");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsteps: ten\n", "not a whole number");
    expect_bad("workloads: []\noptimizers: sgd\n", "empty");
    expect_bad("workloads: quadratic\noptimizers: sgd\nlrs: [0.1, 0]\n", "t.yaml:3: learning rate 0 must be > 0");
    expect_bad("workloads: quadratic\noptimizers: sgd\nlrs: [0.1, abc]\n", "'abc' is not a number");
    expect_bad("workloads: quadratic\noptimizers: adma\n", "unknown optimizer 'adma' (did you mean 'adam'?)");
    expect_bad("workloads: quadratc\noptimizers: adam\n", "unknown workload 'quadratc' (did you mean 'quadratic'?)");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams:\n  adam: {beta2: 1.5}\n", "t.yaml:4: adam.beta2 = 1.5 is out of range");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams:\n  adam: {betta2: 0.9}\n", "did you mean 'beta2'");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams:\n  adamm: {beta2: 0.9}\n", "'adamm' is not an optimizer, a workload or 'train' (did you mean 'adam'?)");
    expect_bad("workloads: quadratic\noptimizers: adam\nworkload_params:\n  quadratic: {dim: -3}\n", "quadratic.dim = -3 is out of range");
    expect_bad("workloads: quadratic\noptimizers: adam\nbackend: tpu\n", "backend 'tpu'");
    expect_bad("workloads: [quadratic\n", "YAML syntax error");
    expect_bad("- a\n- b\n", "must be a mapping");
    expect_bad("workloads: quadratic,quadratic\noptimizers: adam\n", "listed twice");
}

static void test_text_options(void)
{
    ob_config c;
    ob_err e;
    CHECK_OK(load(&c,
                  "workloads: quadratic\noptimizers: [muon]\n"
                  "hparams:\n  muon:\n    route: [\"tag=vector -> adamw\"]\n    momentum: 0.9\n",
                  &e),
             &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == 1 && m.cells[0].n_options == 1 && !strcmp(m.cells[0].options[0]->key, "route"));
    CHECK_NEAR(ob_hp_get(&m.cells[0].opt_hp, "momentum"), 0.9, 0);
    ob_optim *o = NULL;
    CHECK_OK(ob_cell_make_optim(&m.cells[0], &o, &e), &e);
    ob_optim_destroy(o);
    ob_matrix_free(&m);
    ob_config_free(&c);
    expect_bad("workloads: quadratic\noptimizers: [muon]\nhparams:\n  muon: {route: \"tag=matrix => adamw\"}\n",
               "t.yaml:4: muon: route");
    expect_bad("workloads: quadratic\noptimizers: [root]\nhparams:\n  root: {coeff_file: /nonexistent/c.tsv}\n",
               "t.yaml:4:");
}

static void test_flags(void)
{
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK(ob_config_add_set(&c, "adam.beta2=0.95", "--set", &e) == OB_OK);
    CHECK(ob_config_add_set(&c, "adam.beta2=0.9", "--set", &e) == OB_OK);
    CHECK(c.n_settings == 1 && !strcmp(c.settings[0].value, "0.9"));
    CHECK(ob_config_add_set(&c, "beta2=0.95", "--set", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "OWNER.KEY=VALUE") != NULL);
    CHECK(ob_config_add_set(&c, "adam.beta2=", "--set", &e) == OB_ERR_INPUT);
    CHECK(ob_config_set_seeds(&c, "4,9", 0, "--seeds", &e) == OB_OK && c.n_seeds == 2 && c.seeds[1] == 9);
    CHECK(ob_config_set_seeds(&c, "0", 0, "--seeds", &e) == OB_ERR_INPUT);
    CHECK(ob_config_set_seeds(&c, "2", 0, "--seeds", &e) == OB_OK && c.n_seeds == 2 && c.seeds[1] == 1);
    ob_config_free(&c);
}

static void test_stats(void)
{
    double loss[20];
    for (int i = 0; i < 20; i++) loss[i] = 20 - i; /* 20 .. 1 */
    double f, b;
    ob_curve_summary(loss, 20, &f, &b);
    CHECK_NEAR(f, 1.5, 1e-12); /* mean of the last 2 */
    CHECK_NEAR(b, 1, 0);
    loss[19] = NAN;
    ob_curve_summary(loss, 20, &f, &b);
    CHECK_NEAR(f, 2, 1e-12);
    ob_curve_summary(loss, 5, &f, &b); /* tail of one step */
    CHECK_NEAR(f, 16, 0);
    double q[5] = {5, 1, 4, 2, 3};
    CHECK_NEAR(ob_quantile_inplace(q, 5, 0.5), 3, 0);
    CHECK_NEAR(ob_quantile_inplace(q, 5, 0.9), 4.6, 1e-12);
}

int main(void)
{
    test_yaml_ok();
    test_yaml_bad();
    test_text_options();
    test_flags();
    test_stats();
    return check_done();
}
