/* tests/test_harness.c - configuration parsing (YAML and flags), matrix
 * expansion and validation (and its limits: 4096 configurations of an
 * optimizer, a million cells), curve statistics, the steps that count in the
 * step-time statistics (a warm-up after the start and after every resume),
 * the order cells run in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness/cellspec.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/run.h"
#include "harness/search.h"

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
    /* quoted, YAML's null spellings are text; a plain value continued on
     * the next line is one value (no '- ' in it) */
    CHECK_OK(load(&c, "name: \"Null\"\nworkloads: quadratic,\n  rosenbrock\noptimizers: [sgd]\n", &e), &e);
    CHECK(!strcmp(c.name, "Null") && c.n_workloads == 2 && !strcmp(c.workloads[1], "rosenbrock"));
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
    {
        char longkey[1300];
        int l = snprintf(longkey, sizeof longkey, "workloads: quadratic\noptimizers: sgd\n");
        memset(longkey + l, 'k', 1100);
        snprintf(longkey + l + 1100, sizeof longkey - (size_t)l - 1100, ": 3\n");
        expect_bad(longkey, "t.yaml:3:1: a key of 1100 characters; YAML reads keys of at most 1024");
    }
    expect_bad("workloads: quadratic\noptimizers: sgd\nhparams: {sgd: {<<: {momentum: 0.9}}}\n",
               "t.yaml:3: '<<' (YAML 1.1's merge key) is not read in the settings of 'sgd': write the keys out");
    expect_bad("workloads: quadratic\noptimizers: sgd\nlrs: [0.1, .inf]\n", "t.yaml:3: learning rate '.inf' is not a finite number");
    expect_bad("workloads: quadratic\noptimizers: adma\n", "unknown optimizer 'adma' (did you mean 'adam'?)");
    expect_bad("workloads: quadratc\noptimizers: adam\n", "unknown workload 'quadratc' (did you mean 'quadratic'?)");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams:\n  adam: {beta2: 1.5}\n", "t.yaml:4: adam.beta2 = 1.5 is out of range");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams:\n  adam: {betta2: 0.9}\n", "did you mean 'beta2'");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams:\n  adamm: {beta2: 0.9}\n", "'adamm' is not an optimizer, a workload, 'train' or 'all' (did you mean 'adam'?)");
    expect_bad("workloads: quadratic\noptimizers: adam\nworkload_params:\n  quadratic: {dim: -3}\n", "quadratic.dim = -3 is out of range");
    /* of two bad values the first in the file is told, whoever owns them */
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\ntrain: {clip_norm: 1}\nhparams:\n  sgd: {momentum: 1.5}\n"
               "workload_params:\n  quadratic: {dim: -5}\n",
               "t.yaml:5: sgd.momentum = 1.5 is out of range");
    expect_bad("workloads: quadratic\noptimizers: adam\nbackend: tpu\n", "backend 'tpu'");
    expect_bad("workloads: [quadratic\n", "t.yaml:1:12: the '[' here is not closed");
    /* a syntax error at the line of the mistake, not where the parser gave up,
     * in plain words */
    expect_bad("workloads: [quadratic]\noptimizers:sgd\n\n\n# comment\nsteps: 5\n",
               "t.yaml:2:1: 'optimizers:sgd' has no ': ' (a key needs a colon and a space: 'optimizers: sgd')");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nsteps 5\n", "t.yaml:3:1: 'steps 5' has no ': '");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nhparams:\n  sgd:\n    momentum 0.9\n    dampening: 0\n",
               "t.yaml:5:5: 'momentum 0.9' has no ': ' (a key needs a colon and a space: 'momentum: 0.9')");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nhparams:\n\tsgd: {momentum: 0.9}\n",
               "t.yaml:4:1: a tab character; YAML indents with spaces only: replace the tab with spaces");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nhparams:\n  sgd:\n    momentum: 0.9\n   dampening: 0\n",
               "t.yaml:6:4: this line is indented to column 4, which lines up with nothing above it");
    expect_bad("workloads: [quadratic]\noptimizers: [muon]\nhparams:\n  muon:\n    route:\n"
               "      - \"tag=vector -> adamw\"\n      momentum: 0.9\n",
               "t.yaml:7:7: this line is in the column of the list's items (line 6) but is not an item");
    /* a list item where a key could start, after a key with its value */
    expect_bad("workloads: quadratic\n- rosenbrock\noptimizers: [sgd]\n",
               "t.yaml:2:1: a list item in the column of the mapping's keys (line 1), after a key that has its value");
    expect_bad("workloads: [quadratic]\nhparams:\n  sgd: {momentum: 0.9}\n  - adam\n",
               "t.yaml:4:3: a list item in the column of the mapping's keys (line 3)");
    /* an item indented deeper than the one above: YAML joins it to that one */
    expect_bad("workloads:\n  - quadratic\n   - rosenbrock\noptimizers: [sgd]\n",
               "t.yaml:2: workloads: 'quadratic - rosenbrock' is one value of lines 2 to 3: a '- ' item indented "
               "deeper than the item above it continues that item");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nlrs:\n  - 0.1\n    - 0.2\n",
               "t.yaml:4: lrs: '0.1 - 0.2' is one value of lines 4 to 5");
    /* YAML's null, in each of its spellings, is no name; quoted it is one */
    {
        const char *nulls[] = {"", " ~", " null", " Null", " NULL"};
        for (int i = 0; i < 5; i++) {
            char text[128];
            snprintf(text, sizeof text, "workloads: [quadratic]\noptimizers: [sgd]\nname:%s\n", nulls[i]);
            expect_bad(text, "t.yaml:3: name is empty");
        }
    }
    expect_bad("workloads: [quadratic, rosenbrock\noptimizers: [sgd]\nsteps: 5\n",
               "t.yaml:1:12: the '[' here is not closed: end the list with ']'");
    expect_bad("name: \"nightly\nworkloads: [quadratic]\nsteps: 5\n",
               "t.yaml:1:7: the quoted text that starts here is not closed");
    expect_bad("name: a: b\n", "t.yaml:1:8: a second ': ' on one line");
    expect_bad("workloads: @quadratic\noptimizers: [sgd]\n",
               "t.yaml:1:12: a value cannot start with '@' in YAML: put the value in quotes");
    expect_bad("workloads: `quadratic\noptimizers: [sgd]\n", "t.yaml:1:12: a value cannot start with '`' in YAML");
    expect_bad("workloads: \"quadratic\"]\noptimizers: [sgd]\n",
               "t.yaml:1:23: unexpected ']' after the value (a bracket or quote too many?)");
    /* a tab on a line of its own, after a plain value */
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nsteps: 10\n\t\n",
               "t.yaml:4:1: a tab character; YAML indents with spaces only");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nsteps: *nope\n",
               "t.yaml:3:8: '*' starts an alias in YAML, and no anchor ('&NAME') of that name comes before it");
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nname: \"\\xZZ\"\n",
               "t.yaml:3:10: a backslash escape that YAML does not know in double quotes");
    /* a NUL from an escape would end the text there: the name read as empty */
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nname: \"\\u0000x\"\n",
               "t.yaml:3:7: a NUL character (an escape \\0 or \\u0000) in a value: remove it");
    /* a byte that is not UTF-8: at its own line and column, not 1:1 */
    expect_bad("workloads: [quadratic]\noptimizers: [sgd]\nname: caf\xe9\n", "t.yaml:3:10: not UTF-8 text");
    /* columns in characters, after a byte-order mark; a character YAML
     * forbids is not an encoding error */
    expect_bad("\xEF\xBB\xBFname: \xC3\xA9\xFF\n", "t.yaml:1:8: not UTF-8 text: invalid leading UTF-8 octet (byte 0xFF)");
    expect_bad("name: a\x1b" "b\n", "t.yaml:1:8: control characters are not allowed (character U+001B); remove it");
    expect_bad("- a\n- b\n", "must be a mapping");
    expect_bad("workloads: quadratic,quadratic\noptimizers: adam\n", "listed twice");
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: {adam: [0.1, 0.1]}\n", "t.yaml:3: learning rate 0.1 is listed twice");
    /* one float apart: one lr to a reader (both labelled 0.3) */
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: [0.3, 0.3000000001]\n",
               "t.yaml:3: learning rate 0.3 is listed twice ('0.3' and '0.3000000001'");
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
    {
        /* route rules are part of a run's identity: all of them stored, or
         * the matrix refused (never a text cut short) */
        char text[12000];
        size_t l = (size_t)snprintf(text, sizeof text, "workloads: bert-tiny\noptimizers: [muon]\nhparams:\n  muon:\n"
                                                       "    route:\n");
        for (int i = 0; i < 31; i++)
            l += (size_t)snprintf(text + l, sizeof text - l,
                                  "      - \"name=h%d.attn.proj.weight_of_a_long_name* & tag=matrix & ndim=2 -> adamw\"\n",
                                  i);
        CHECK_OK(load(&c, text, &e), &e);
        CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
        char w[OB_SPEC_WL_JSON], oj[OB_SPEC_OPT_JSON];
        ob_run_spec sp;
        CHECK(m.n == 1 && m.cells[0].n_options == 31);
        CHECK_OK(ob_cell_spec(&c, &m.cells[0], NULL, "", w, oj, &sp, &e), &e);
        CHECK_MSG(strstr(oj, "\"route=name=h30.attn.proj.weight_of_a_long_name* & tag=matrix & ndim=2 -> adamw\"]") &&
                      oj[strlen(oj) - 1] == '}',
                  "the 31st rule is not in the stored text: ...%s", strlen(oj) > 120 ? oj + strlen(oj) - 120 : oj);
        ob_matrix_free(&m);
        ob_config_free(&c);
        /* 32 long rules: more than a run's text holds */
        l = (size_t)snprintf(text, sizeof text, "workloads: bert-tiny\noptimizers: [muon]\nhparams:\n  muon:\n"
                                                "    route:\n");
        for (int i = 0; i < 32; i++)
            l += (size_t)snprintf(text + l, sizeof text - l,
                                  "      - \"name=h%d.attn.proj.weight_xxxxxxxxxxxxxxxxxxxxxxxxxxx* & tag=matrix & ndim=2 & "
                                  "name=h%d.attn.proj.weight_xxxxxxxxxxxxxxxxxxxxxxxxxxx* -> adamw\"\n",
                                  i, i);
        expect_bad(text, "muon's 32 text settings (route rules, coeff_file; the first at t.yaml:6) make its run's "
                         "settings text over the 4095 characters");
    }
    expect_bad("workloads: quadratic\noptimizers: [muon]\nhparams:\n  muon: {route: \"name=a* & tag=matrix & ndim=2 & "
               "name=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
               "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb* -> adamw\"}\n",
               "characters long, more than the 159 a rule holds; shorten it");
    expect_bad("workloads: quadratic\noptimizers: [root]\nhparams:\n  root: {coeff_file: /nonexistent/c.tsv}\n",
               "t.yaml:4: root.coeff_file: cannot open '/nonexistent/c.tsv'");
    /* outside the matrix: the setting's place first, then that its owner is not in the matrix */
    expect_bad("workloads: quadratic\noptimizers: [sgd]\nhparams:\n  root: {coeff_file: /nonexistent/c.tsv}\n",
               "t.yaml:4: root.coeff_file: cannot open '/nonexistent/c.tsv': No such file or directory (root is not "
               "in this matrix; its settings are checked all the same)");
}

static void test_flags(void)
{
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK(ob_config_add_set(&c, "adam.beta2=0.95", "--set", &e) == OB_OK);
    /* a key given twice on the command line: bad input, not the later one silently */
    CHECK(ob_config_add_set(&c, "adam.beta2=0.9", "--set", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "adam.beta2 is set twice (--set) on the command line") != NULL);
    CHECK(c.n_settings == 1 && !strcmp(c.settings[0].value, "0.95"));
    /* a flag replaces a config file's setting */
    CHECK(ob_config_add_setting(&c, "adam", "eps", "1e-6", "t.yaml:3", &e) == OB_OK);
    CHECK(ob_config_add_set(&c, "adam.eps=1e-7", "--set", &e) == OB_OK);
    CHECK(c.n_settings == 2 && !strcmp(c.settings[1].value, "1e-7") && c.settings[1].flag);
    CHECK(ob_config_add_set(&c, "beta2=0.95", "--set", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "OWNER.KEY=VALUE") != NULL);
    CHECK(ob_config_add_set(&c, "adam.beta2=", "--set", &e) == OB_ERR_INPUT);
    CHECK(ob_config_set_seeds(&c, "4,9", 0, "--seeds", &e) == OB_OK && c.n_seeds == 2 && c.seeds[1] == 9);
    CHECK(ob_config_set_seeds(&c, "0", 0, "--seeds", &e) == OB_ERR_INPUT);
    CHECK(ob_config_set_seeds(&c, "2", 0, "--seeds", &e) == OB_OK && c.n_seeds == 2 && c.seeds[1] == 1);
    /* a log-spaced lr grid FROM:TO:N, ends exact, 3 significant digits between */
    {
        ob_lr_list l;
        memset(&l, 0, sizeof l);
        CHECK(ob_config_set_lrs(&l, "1e-4:1e-1:7", "--lrs", &e) == OB_OK && l.n == 7);
        CHECK(l.v[0] == 1e-4 && l.v[1] == 0.000316 && l.v[3] == 0.00316 && l.v[6] == 0.1);
        CHECK(ob_config_set_lrs(&l, "0.5,1e-3:1e-2:2", "--lrs", &e) == OB_OK && l.n == 3 && l.v[0] == 0.5 &&
              l.v[2] == 1e-2);
        CHECK(ob_config_set_lrs(&l, "1e-1:1e-4:7", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "FROM < TO"));
        CHECK(ob_config_set_lrs(&l, "1e-4:1e-1:1", "--lrs", &e) == OB_ERR_INPUT);
        CHECK(ob_config_set_lrs(&l, "1e-4:1e-1", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "FROM:TO:N"));
        CHECK(ob_config_set_lrs(&l, "1e-5:1e2:65", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "at most"));
        /* a grid of 64 and one more lr: refused, not written past the list */
        CHECK(ob_config_set_lrs(&l, "1e-5:1:64,0.5", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "at most 64"));
        /* an lr twice, also through a grid's rounded point */
        CHECK(ob_config_set_lrs(&l, "0.1,0.1", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "0.1 is listed twice"));
        CHECK(ob_config_set_lrs(&l, "0.1,1e-2:1e-1:2", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "listed twice"));
        CHECK(ob_config_set_lrs(&l, "1e-3:1e-1:3,0.0100", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "0.01 is listed twice"));
        /* a grid too fine for 3 digits repeats itself: told as such */
        CHECK(ob_config_set_lrs(&l, "1:1.01:5", "--lrs", &e) == OB_ERR_INPUT &&
              strstr(e.msg, "grid '1:1.01:5' gives 1 twice: its points round to 3 significant digits"));
    }
    /* a range: one seed alone, or a block */
    CHECK(ob_config_set_seeds(&c, "7..7", 0, "--seeds", &e) == OB_OK && c.n_seeds == 1 && c.seeds[0] == 7);
    CHECK(ob_config_set_seeds(&c, "10..13", 0, "--seeds", &e) == OB_OK && c.n_seeds == 4 && c.seeds[0] == 10 &&
          c.seeds[3] == 13);
    CHECK(ob_config_set_seeds(&c, "9..7", 0, "--seeds", &e) == OB_ERR_INPUT && strstr(e.msg, ">= 9"));
    CHECK(ob_config_set_seeds(&c, "..7", 0, "--seeds", &e) == OB_ERR_INPUT && strstr(e.msg, "not a range"));
    ob_config_free(&c);
}

/* The text written to the temporary stream f (closed). */
static void read_back(FILE *f, char *buf, size_t n)
{
    rewind(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

static void test_bad_values(void)
{
    /* an empty item is an error, not skipped */
    expect_bad("workloads: quadratic\noptimizers: sgd\nlrs: \"0.1,,0.2\"\n", "t.yaml:3: '0.1,,0.2': item 2 is empty");
    expect_bad("workloads: quadratic,\noptimizers: sgd\n", "t.yaml:1: 'quadratic,': item 2 is empty");
    expect_bad("workloads: quadratic\noptimizers: sgd\nseeds: \"1,,2\"\n", "item 2 is empty");
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK(ob_config_set_lrs(&c.lrs[0], "0.1,,0.2", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "item 2 is empty"));
    CHECK(ob_config_set_lrs(&c.lrs[0], ",0.1", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "item 1 is empty"));
    CHECK(ob_config_set_lrs(&c.lrs[0], " ", "--lrs", &e) == OB_ERR_INPUT && strstr(e.msg, "is empty"));
    CHECK(ob_config_set_devices(&c, "0,,1", "--devices", &e) == OB_ERR_INPUT && strstr(e.msg, "item 2 is empty"));
    CHECK(ob_config_set_devices(&c, "0, 1", "--devices", &e) == OB_OK && c.n_devices == 2 && c.devices[1] == 1);
    CHECK(ob_config_set_devices(&c, "5000", "--devices", &e) == OB_ERR_INPUT && strstr(e.msg, "out of range (max 1023)"));
    ob_config_free(&c);
    /* a whole number out of range says so */
    expect_bad("workloads: quadratic\noptimizers: sgd\nsteps: 99999999999999999999\n",
               "t.yaml:3: steps 99999999999999999999 is out of range (max 1000000000000)");
    expect_bad("workloads: quadratic\noptimizers: sgd\ncheckpoint_keep: 101\n", "checkpoint_keep 101 is out of range (max 100)");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsteps: 1.5\n", "t.yaml:3: steps '1.5' is not a whole number");
    /* unknown names in the lists carry file:line like every other config error */
    expect_bad("workloads: quadratic\noptimizers: [sgd, adamm]\n", "t.yaml:2: unknown optimizer 'adamm' (did you mean 'adam'?)");
    expect_bad("name: x\nworkloads: [quadratc]\noptimizers: [sgd]\n", "t.yaml:2: unknown workload 'quadratc'");
}

static void test_lrs_note(void)
{
    ob_config c;
    ob_err e;
    CHECK_OK(load(&c, "workloads: quadratic\noptimizers: adam\nlrs:\n  adam: [0.01]\n  sgd: [0.1]\n", &e), &e);
    FILE *notes = tmpfile();
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, notes, &e), &e);
    CHECK(m.n == 1);
    ob_matrix_free(&m);
    char buf[1024];
    read_back(notes, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "optbench: note: t.yaml:5: 'sgd' is not in this matrix; its lrs are unused") != NULL, "%s", buf);
    ob_config_free(&c);
}

static void test_exclude(void)
{
    ob_config c;
    ob_err e;
    CHECK_OK(load(&c,
                  "workloads: [quadratic, rosenbrock, cnn-tiny]\noptimizers: [sgd, muon, root]\nlrs: [0.1, 0.2]\n"
                  "seeds: 2\nexclude:\n  quadratic: [muon, root]\n  rosenbrock: \"muon,root\"\n  bert-tiny: [sgd]\n",
                  &e),
             &e);
    CHECK(c.n_excludes == 5 && !strcmp(c.excludes[0].origin, "t.yaml:6") && !strcmp(c.excludes[2].origin, "t.yaml:7"));
    FILE *notes = tmpfile();
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, notes, &e), &e);
    CHECK(m.n == (3 * 3 - 4) * 2 * 2 && m.n_excluded_pairs == 4);
    for (int i = 0; i < m.n; i++) {
        CHECK(m.cells[i].index == i);
        CHECK(!(strcmp(m.cells[i].wl->name, "cnn-tiny") && strcmp(m.cells[i].opt->name, "sgd")));
    }
    CHECK(!strcmp(m.cells[4].wl->name, "rosenbrock") && !strcmp(m.cells[8].opt->name, "sgd"));
    char buf[1024];
    read_back(notes, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "t.yaml:8: 'bert-tiny' is not in this matrix; exclusion of bert-tiny x sgd is unused"), "%s", buf);
    /* every pair routes; no pair is left whose lr reaches nothing */
    FILE *warn = tmpfile();
    CHECK_OK(ob_matrix_check_routing(&c, &m, warn, NULL, &e), &e);
    read_back(warn, buf, sizeof buf);
    CHECK_MSG(buf[0] == '\0', "%s", buf);
    ob_matrix_free(&m);
    ob_config_free(&c);

    /* flag form, and a repeat is no error */
    ob_config_init(&c);
    CHECK_OK(ob_config_add_exclude_text(&c, "quadratic:muon, root", "--exclude", &e), &e);
    CHECK_OK(ob_config_add_exclude_text(&c, "quadratic:muon", "--exclude", &e), &e);
    CHECK(c.n_excludes == 2 && ob_config_excluded(&c, "quadratic", "root") && !ob_config_excluded(&c, "root", "quadratic"));
    CHECK(ob_config_add_exclude_text(&c, "quadratic", "--exclude", &e) == OB_ERR_INPUT && strstr(e.msg, "WORKLOAD:OPTIMIZER"));
    CHECK(ob_config_add_exclude_text(&c, "quadratic:muon,,root", "--exclude", &e) == OB_ERR_INPUT);
    ob_config_free(&c);

    expect_bad("workloads: quadratic\noptimizers: [sgd, muon]\nexclude:\n  quadratic: [sgd,\n    muonn]\n",
               "t.yaml:5: exclude: unknown optimizer 'muonn' (did you mean 'muon'?)");
    expect_bad("workloads: quadratic\noptimizers: [sgd, muon]\nexclude:\n  quadratc: [muon]\n",
               "t.yaml:4: exclude: unknown workload 'quadratc' (did you mean 'quadratic'?)");
    expect_bad("workloads: quadratic\noptimizers: [sgd, muon]\nexclude:\n  quadratic: [muon, sgd]\n",
               "every (workload, optimizer) pair is excluded");
    expect_bad("workloads: quadratic\noptimizers: sgd\nexclude: [quadratic]\n", "t.yaml:3: exclude (workload: [optimizer, ...]) must be a mapping");
    expect_bad("workloads: quadratic\noptimizers: sgd\nexclude:\n  quadratic: []\n", "t.yaml:4: exclude: 'quadratic' has an empty list");
    /* an excluded pair's settings are still checked */
    expect_bad("workloads: quadratic\noptimizers: [sgd, muon]\nexclude: {quadratic: [muon]}\n"
               "hparams:\n  muon: {route: \"tag=matrx -> adamw\"}\n",
               "t.yaml:5: muon: route");
}

/* Expand text and check the routing of every pair; the warnings in warn. */
static ob_status route_all(const char *text, char *warn, size_t n, ob_err *e)
{
    ob_config c;
    ob_matrix m;
    ob_status s = load(&c, text, e);
    if (s == OB_OK) s = ob_matrix_expand(&c, &m, NULL, e);
    if (s == OB_OK) {
        FILE *w = tmpfile();
        s = ob_matrix_check_routing(&c, &m, w, NULL, e);
        read_back(w, warn, n);
        ob_matrix_free(&m);
    }
    ob_config_free(&c);
    return s;
}

static void test_routing_check(void)
{
    char warn[4096];
    ob_err e;
    /* a rule that fails on a workload is bad input naming the rule and its line */
    ob_status s = route_all("workloads: [cnn-tiny, quadratic]\noptimizers: [muon]\nhparams:\n  muon:\n"
                            "    route: [\"tag=matrix -> muon\",\n            \"tag=vector -> muon\"]\n",
                            warn, sizeof warn, &e);
    CHECK(s == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "t.yaml:6: routing rule 'tag=vector -> muon' of muon fails on quadratic: muon: parameter 'x'"),
              "%s", e.msg);
    /* explicit routing that leaves a parameter without a rule names where it was set */
    s = route_all("workloads: quadratic\noptimizers: [root]\nhparams:\n  root:\n    routing: explicit\n"
                  "    route: [\"tag=matrix -> root\"]\n",
                  warn, sizeof warn, &e);
    CHECK(s == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "t.yaml:5: root.routing=explicit on quadratic: root: parameter 'x'") &&
                  strstr(e.msg, "matches no routing rule"),
              "%s", e.msg);
    /* a workload's settings that do not go together: where, both settings, what to do */
    s = route_all("workloads: [bert-tiny]\noptimizers: [adam]\nworkload_params:\n  bert-tiny:\n    dim: 65\n", warn,
                  sizeof warn, &e);
    CHECK(s == OB_ERR_INPUT);
    CHECK_MSG(!strcmp(e.msg, "t.yaml:5: bert-tiny.dim = 65 is not a multiple of bert-tiny.heads = 4; set dim to a "
                             "multiple of 4 (e.g. 64) or heads to a divisor of 65"),
              "%s", e.msg);
    s = route_all("workloads: [cnn-tiny]\noptimizers: [adam]\nsweep: {cnn-tiny: {groups: [4, 3]}}\n", warn, sizeof warn,
                  &e);
    CHECK(s == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "t.yaml:3: cnn-tiny.groups = 3 does not divide the 16 channels of unit 0; set groups to a "
                            "divisor of cnn-tiny.width = 16") &&
                  strstr(e.msg, "(in cnn-tiny's configuration groups=3)"),
              "%s", e.msg);
    /* a swept lr that reaches no parameter: one warning per such pair, each
     * lr said once (two seeds) */
    CHECK_OK(route_all("workloads: [quadratic, cnn-tiny]\noptimizers: [sgd, muon]\nlrs: [0.01, 0.1]\nseeds: 2\n", warn,
                       sizeof warn, &e),
             &e);
    CHECK_MSG(strstr(warn, "optbench: warning: quadratic x muon: muon's lr reaches no parameter (1 tensor went to its "
                           "'adamw' group, which uses muon.adamw_lr = 0.0003), so its lrs 0.01, 0.1 give identical runs; "
                           "tune muon.adamw_lr instead") != NULL,
              "%s", warn);
    CHECK_MSG(strstr(warn, "exclude: {quadratic: [muon]}") != NULL, "%s", warn);
    CHECK_MSG(strstr(warn, "cnn-tiny") == NULL && strstr(warn, "sgd") == NULL, "%s", warn);
    /* routing everything to the AdamW group on purpose is warned about too,
     * where that group has an lr of its own */
    CHECK_OK(route_all("workloads: cnn-tiny\noptimizers: root\n"
                       "hparams: {root: {route: \"* -> adamw\", adamw_style: separate}}\n",
                       warn, sizeof warn, &e),
             &e);
    CHECK_MSG(strstr(warn, "cnn-tiny x root: root's lr reaches no parameter") != NULL, "%s", warn);
    /* root's own AdamW group (adamw_style=moonlight) takes root's lr */
    CHECK_OK(route_all("workloads: cnn-tiny\noptimizers: root\nhparams: {root: {route: \"* -> adamw\"}}\n", warn,
                       sizeof warn, &e),
             &e);
    CHECK_MSG(strstr(warn, "lr reaches no parameter") == NULL, "%s", warn);
    /* with it, an lr or a weight decay of the group's own is bad input */
    s = route_all("workloads: cnn-tiny\noptimizers: root\nhparams: {root: {adamw_lr: 0.01}}\n", warn, sizeof warn, &e);
    CHECK(s == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "root.adamw_lr = 0.01 has no effect with root.adamw_style = moonlight (its AdamW group "
                            "takes root.lr); set root.lr, or root.adamw_style=separate"),
              "%s", e.msg);
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

/* Which steps count in the step-time statistics: not the first
 * OB_WARMUP_STEPS of the run, nor of any process that resumed it from a
 * checkpoint. A run of 30 steps resumed after steps 12 and 14 (the second
 * resume inside the first one's warm-up): steps 1-5, 13-14 and 15-19 are
 * warm-ups at 100 ms (optimizer 50 ms), the others take 1 ms (0.5 ms). */
static void test_step_times(void)
{
    const int64_t seg[] = {0, 12, 14};
    enum { N = 30 };
    double ms[N], oms[N];
    int want_timed = 0;
    for (int64_t i = 0; i < N; i++) {
        int warm = i < 5 || (i >= 12 && i < 19);
        CHECK_MSG(ob_step_timed(i, seg, 3) == !warm, "step %lld", (long long)i + 1);
        want_timed += !warm;
        ms[i] = warm ? 100 : 1;
        oms[i] = warm ? 50 : 0.5;
    }
    ob_step_times t;
    ob_step_times_of(ms, oms, N, seg, 3, &t);
    CHECK_MSG(t.n_timed == want_timed && t.mean == 1 && t.median == 1 && t.p90 == 1, "%lld timed, mean %g, p90 %g",
              (long long)t.n_timed, t.mean, t.p90);
    CHECK(t.opt_mean == 0.5 && t.opt_median == 0.5);
    /* no segments given: the run's own warm-up alone */
    CHECK(ob_step_timed(4, NULL, 0) == 0 && ob_step_timed(5, NULL, 0) == 1 && ob_step_timed(12, NULL, 0) == 1);
    ob_step_times_of(ms, oms, N, NULL, 0, &t);
    CHECK(t.n_timed == N - 5 && t.median == 1 && t.mean > 1);
    /* optimizer times unknown before the resume (a checkpoint without them) */
    for (int i = 0; i < 12; i++) oms[i] = NAN;
    oms[20] = 2.5;
    ob_step_times_of(ms, oms, N, seg, 3, &t);
    CHECK_NEAR(t.opt_mean, (2.5 + 0.5 * 10) / 11, 1e-12);
    /* ended within a warm-up: nothing timed */
    ob_step_times_of(ms, oms, 5, seg, 3, &t);
    CHECK(t.n_timed == 0 && isnan(t.mean) && isnan(t.median) && isnan(t.p90) && isnan(t.opt_mean));
    ob_step_times_of(ms, oms, 17, seg, 3, &t); /* steps 6-12 */
    CHECK(t.n_timed == 7 && t.mean == 1);
}

/* Sweeps of hyperparameters besides the lr: the grid's order (the first
 * sweep slowest; workload, optimizer, train), each configuration's values,
 * the pairs, the label text, what replaces what, and bad sweeps. */
/* train.min_lr is checked against the lrs that run, not the optimizer's default */
static void test_min_lr(void)
{
    ob_config c;
    ob_matrix m;
    ob_err e;
    CHECK_OK(load(&c, "workloads: quadratic\noptimizers: adam\nlrs: [0.1, 0.3]\ntrain: {schedule: cosine, min_lr: 0.01}\n",
                  &e),
             &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == 2 && m.cells[0].lr == 0.1 && m.cells[1].lr == 0.3);
    ob_matrix_free(&m);
    ob_config_free(&c);
    /* from flags, a sweep of min_lr included */
    ob_config_init(&c);
    CHECK_OK(ob_config_set_lrs(&c.lrs[0], "0.1", "--lrs", &e), &e);
    c.n_lr_lists = 1;
    snprintf(c.workloads[0], sizeof c.workloads[0], "quadratic");
    snprintf(c.optimizers[0], sizeof c.optimizers[0], "adam");
    c.n_workloads = c.n_optimizers = 1;
    CHECK_OK(ob_config_add_set(&c, "train.schedule=cosine", "--set", &e), &e);
    CHECK_OK(ob_config_add_sweep(&c, "train.min_lr=0.001,0.01", "--sweep", &e), &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == 2);
    ob_matrix_free(&m);
    ob_config_free(&c);
    /* one swept lr below min_lr: that lr, and where min_lr was set */
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: [0.1, 0.003]\ntrain: {schedule: cosine, min_lr: 0.01}\n",
               "t.yaml:4: train.min_lr = 0.01 is above adam's learning rate 0.003 (of the lrs 0.1, 0.003 at t.yaml:3); "
               "give a min_lr of at most 0.003 (below every lr of the sweep), or leave it out");
    /* a searched lr: the range, not the one value drawn from it */
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: log:1e-4..1e-1\ntrials: 4\n"
               "train: {schedule: cosine, min_lr: 0.001}\n",
               "t.yaml:5: train.min_lr = 0.001 is above adam's learning rate 0.0001 (the low end of the lr range "
               "log:1e-4..1e-1 at t.yaml:3); give a min_lr of at most 0.0001 (below every lr of the range)");
    expect_bad("workloads: quadratic\noptimizers: adam\ntrain: {schedule: wsd, min_lr: 0.01}\n",
               "t.yaml:3: train.min_lr = 0.01 is above adam's learning rate 0.001 (its default;");
    /* a schedule that does not decay: min_lr has no effect (not compared with the lr) */
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: [0.1]\ntrain: {min_lr: 0.01}\n",
               "train.min_lr = 0.01 has no effect with train.schedule = constant");
    /* each cell keeps its own check */
    CHECK_OK(load(&c, "workloads: quadratic\noptimizers: adam\nlrs: [0.1, 0.3]\ntrain: {schedule: cosine, min_lr: 0.01}\n",
                  &e),
             &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    if (m.n == 2) {
        ob_cell low = m.cells[0];
        low.lr = 0.001;
        low.opt_hp.v[ob_hp_index(low.opt_hp.defs, low.opt_hp.n, "lr")] = 0.001;
        ob_optim *o = NULL;
        CHECK(ob_cell_make_optim(&low, &o, &e) == OB_ERR_INPUT && strstr(e.msg, "above the learning rate 0.001"));
        ob_optim_destroy(o);
    }
    ob_matrix_free(&m);
    ob_config_free(&c);
}

/* settings that do not go together: the place of the setting first, its owner once */
static void test_consistency_messages(void)
{
    ob_config c;
    ob_matrix m;
    ob_err e;
    ob_config_init(&c);
    snprintf(c.workloads[0], sizeof c.workloads[0], "quadratic");
    snprintf(c.optimizers[0], sizeof c.optimizers[0], "rprop");
    c.n_workloads = c.n_optimizers = 1;
    CHECK_OK(ob_config_add_set(&c, "rprop.step_size_min=10", "--set", &e), &e);
    CHECK_OK(ob_config_add_set(&c, "rprop.step_size_max=1", "--set", &e), &e);
    CHECK(ob_matrix_expand(&c, &m, NULL, &e) == OB_ERR_INPUT);
    CHECK_MSG(!strcmp(e.msg, "--set: rprop.step_size_min = 10 is above rprop.step_size_max = 1; set them so that "
                             "step_size_min <= step_size_max"),
              "%s", e.msg);
    ob_config_free(&c);
    /* a train setting is not blamed on the optimizer */
    expect_bad("workloads: quadratic\noptimizers: sgd\nhparams: {sgd: {momentum: 0.9}}\n"
               "train:\n  schedule: cosine\n  warmup_steps: 3\n",
               "t.yaml:6: train.warmup_steps = 3 has no effect with train.schedule = cosine");
    ob_config cc;
    CHECK_OK(load(&cc, "workloads: quadratic\noptimizers: sgd\ntrain: {schedule: cosine, warmup_steps: 3}\n", &e), &e);
    CHECK(ob_matrix_expand(&cc, &m, NULL, &e) == OB_ERR_INPUT);
    CHECK_MSG(!strncmp(e.msg, "t.yaml:3: train.warmup_steps", 28), "%s", e.msg);
    ob_config_free(&cc);
    expect_bad("workloads: quadratic\noptimizers: sgd\nhparams: {sgd: {nesterov: true, momentum: 0.9, dampening: 0.5}}\n",
               "t.yaml:3: sgd.nesterov = true needs sgd.dampening = 0 (it is 0.5)");
}

/* all.KEY: a setting of every optimizer of the matrix that has the key; an
 * optimizer's own setting of it wins; one without the key runs as it would */
static void test_all_optimizers(void)
{
    ob_config c;
    ob_err e;
    CHECK_OK(load(&c,
                  "workloads: [quadratic]\noptimizers: [sgd, rprop, adamw]\n"
                  "hparams:\n  adamw: {weight_decay: 0.2}\n  all: {filter_bias_and_bn: true, weight_decay: 0.1}\n",
                  &e),
             &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK_MSG(m.n == 3, "%d cells", m.n);
    for (int i = 0; i < m.n && m.n == 3; i++) {
        const ob_cell *x = &m.cells[i];
        const char *name = x->opt->name;
        if (!strcmp(name, "rprop"))
            CHECK(isnan(ob_hp_get(&x->opt_hp, "filter_bias_and_bn")) && isnan(ob_hp_get(&x->opt_hp, "weight_decay")));
        else
            CHECK_MSG(ob_hp_get(&x->opt_hp, "filter_bias_and_bn") == 1 &&
                          ob_hp_get(&x->opt_hp, "weight_decay") == (!strcmp(name, "adamw") ? 0.2 : 0.1),
                      "%s: filter %g, weight_decay %g", name, ob_hp_get(&x->opt_hp, "filter_bias_and_bn"),
                      ob_hp_get(&x->opt_hp, "weight_decay"));
    }
    ob_matrix_free(&m);
    ob_config_free(&c);
    /* the same from the command line */
    ob_config_init(&c);
    CHECK_OK(ob_config_set_names(c.workloads, &c.n_workloads, "quadratic", "workloads", "--workloads", &e), &e);
    CHECK_OK(ob_config_set_names(c.optimizers, &c.n_optimizers, "sgd,lion", "optimizers", "--optimizers", &e), &e);
    CHECK_OK(ob_config_add_set(&c, "all.weight_decay=0.05", "--set", &e), &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == 2 && ob_hp_get(&m.cells[0].opt_hp, "weight_decay") == 0.05 &&
          ob_hp_get(&m.cells[1].opt_hp, "weight_decay") == 0.05);
    ob_matrix_free(&m);
    ob_config_free(&c);
    static const char head[] = "workloads: quadratic\noptimizers: [sgd, adam]\n";
    char text[512];
    snprintf(text, sizeof text, "%shparams: {all: {weight_decya: 0.1}}\n", head);
    expect_bad(text, "t.yaml:3: all.weight_decya: no optimizer has a setting 'weight_decya' (did you mean 'weight_decay'?)");
    snprintf(text, sizeof text, "%shparams: {all: {lr: 0.1}}\n", head);
    expect_bad(text, "all.lr: give the learning rates with 'lrs'");
    snprintf(text, sizeof text, "%shparams: {all: {coeff_file: x.tsv}}\n", head);
    expect_bad(text, "all.coeff_file is a text setting of root; give it per optimizer");
    snprintf(text, sizeof text, "%shparams: {all: {route: \"x\"}}\n", head);
    expect_bad(text, "all.route: route rules are a text setting, given per optimizer (");
    snprintf(text, sizeof text, "%ssweep: {all: {weight_decay: [0, 0.1]}}\n", head);
    expect_bad(text, "all.weight_decay: a setting of every optimizer cannot be swept");
    snprintf(text, sizeof text, "%shparams: {all: {momentum: 1.5}}\n", head);
    expect_bad(text, "t.yaml:3: all.momentum: ");
}

static void test_sweeps(void)
{
    ob_config c;
    ob_err e;
    CHECK_OK(load(&c,
                  "workloads: [quadratic]\noptimizers: [sgd, adam]\nlrs: [0.01, 0.1]\nseeds: 2\n"
                  "hparams: {adam: {eps: 1e-6}}\n"
                  "sweep:\n  adam: {beta2: [0.9, 0.99, 0.999], beta1: \"0.8,0.9\"}\n"
                  "  train: {clip_norm: [0, 1]}\n  quadratic: {cond: [10, 1000]}\n",
                  &e),
             &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    /* per workload configuration: sgd 2 (train) + adam 3 x 2 x 2, x 2 lrs x 2 seeds */
    CHECK_MSG(m.n == 2 * (2 + 12) * 4, "%d cells", m.n);
    int64_t seed0;
    CHECK(ob_matrix_confirm_plan(&m, &seed0) == 2 * 14 && seed0 == 2);
    if (m.n == 112) {
        const ob_cell *x = &m.cells[0];
        CHECK(x->wl_variant == 0 && x->variant == 0 && !strcmp(x->opt->name, "sgd"));
        CHECK(ob_hp_get(&x->wl_hp, "cond") == 10 && ob_hp_get(&x->train_hp, "clip_norm") == 0);
        x = &m.cells[4]; /* sgd, clip_norm 1 */
        CHECK(x->variant == 1 && ob_hp_get(&x->train_hp, "clip_norm") == 1 && ob_cell_same_pair(x, &m.cells[7]) &&
              !ob_cell_same_pair(x, &m.cells[3]));
        /* adam: its keys in name order whatever the order given (beta1
         * slowest, then beta2), then train's clip_norm; each with the fixed eps */
        const double want[12][3] = {{0.9, 0.8, 0},   {0.9, 0.8, 1},   {0.99, 0.8, 0}, {0.99, 0.8, 1},
                                    {0.999, 0.8, 0}, {0.999, 0.8, 1}, {0.9, 0.9, 0},  {0.9, 0.9, 1},
                                    {0.99, 0.9, 0},  {0.99, 0.9, 1},  {0.999, 0.9, 0}, {0.999, 0.9, 1}};
        for (int v = 0; v < 12; v++) {
            x = &m.cells[8 + 4 * v];
            CHECK_MSG(x->variant == v && ob_hp_get(&x->opt_hp, "beta2") == want[v][0] &&
                          ob_hp_get(&x->opt_hp, "beta1") == want[v][1] &&
                          ob_hp_get(&x->train_hp, "clip_norm") == want[v][2] &&
                          ob_hp_get(&x->opt_hp, "eps") == 1e-6 && x->lr == 0.01,
                      "adam configuration %d", v);
        }
        char text[256];
        ob_cell_sweep_text(&c, &m.cells[8 + 4 * 5], OB_SWEEP_ALL, text, sizeof text);
        CHECK_MSG(!strcmp(text, "cond=10 beta1=0.8 beta2=0.999 clip_norm=1"), "'%s'", text);
        x = &m.cells[56]; /* the second workload configuration */
        CHECK(x->wl_variant == 1 && ob_hp_get(&x->wl_hp, "cond") == 1000 && x->index == 56);
    }
    ob_matrix_free(&m);
    /* a sweep of one value is a configuration, not a search's range */
    {
        ob_config c1;
        ob_matrix m1;
        CHECK_OK(load(&c1, "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01, 0.1]\nsweep:\n  sgd: {momentum: [0.5]}\n",
                      &e),
                 &e);
        CHECK_OK(ob_matrix_expand(&c1, &m1, NULL, &e), &e);
        CHECK_MSG(m1.n == 2 && m1.cells[0].lr == 0.01 && m1.cells[1].lr == 0.1 &&
                      ob_hp_get(&m1.cells[1].opt_hp, "momentum") == 0.5 && m1.cells[1].study < 0,
                  "%d cells", m1.n);
        ob_matrix_free(&m1);
        ob_config_free(&c1);
    }
    /* the sweeps given in another order: the same matrix, cell by cell */
    {
        ob_config c2;
        CHECK_OK(load(&c2,
                      "workloads: [quadratic]\noptimizers: [sgd, adam]\nlrs: [0.01, 0.1]\nseeds: 2\n"
                      "hparams: {adam: {eps: 1e-6}}\n"
                      "sweep:\n  quadratic: {cond: [10, 1000]}\n  train: {clip_norm: [0, 1]}\n"
                      "  adam: {beta1: \"0.8,0.9\", beta2: [0.9, 0.99, 0.999]}\n",
                      &e),
                 &e);
        ob_matrix m2;
        CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
        CHECK_OK(ob_matrix_expand(&c2, &m2, NULL, &e), &e);
        int same = m.n == m2.n;
        for (int i = 0; same && i < m.n; i++)
            same = !memcmp(m.cells[i].opt_hp.v, m2.cells[i].opt_hp.v, sizeof m.cells[i].opt_hp.v) &&
                   !memcmp(m.cells[i].train_hp.v, m2.cells[i].train_hp.v, sizeof m.cells[i].train_hp.v) &&
                   !memcmp(m.cells[i].wl_hp.v, m2.cells[i].wl_hp.v, sizeof m.cells[i].wl_hp.v);
        CHECK(same);
        ob_matrix_free(&m);
        ob_matrix_free(&m2);
        ob_config_free(&c2);
    }
    /* a later --set replaces the sweep of its key, a later sweep a setting */
    CHECK_OK(ob_config_add_set(&c, "adam.beta2=0.95", "--set", &e), &e);
    CHECK_OK(ob_config_add_sweep(&c, "adam.eps=1e-8,1e-6", "--sweep", &e), &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK_MSG(m.n == 2 * (2 + 8) * 4, "%d cells", m.n);
    if (m.n == 80) CHECK(ob_hp_get(&m.cells[8].opt_hp, "beta2") == 0.95 && ob_hp_get(&m.cells[8].opt_hp, "eps") == 1e-8);
    ob_matrix_free(&m);
    ob_config_free(&c);

    /* bad sweeps: the value and where it was given */
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep:\n  adam: {beta2: [0.9, 1.5]}\n",
               "t.yaml:4: sweep: adam.beta2 = 1.5 is out of range");
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep: {adam: {beta2: [0.9, 0.9]}}\n", "lists '0.9' twice");
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep: {adam: {lr: [0.1, 1]}}\n", "swept with 'lrs'");
    expect_bad("workloads: quadratic\noptimizers: muon\nsweep: {muon: {route: [a, b]}}\n", "cannot be swept");
    expect_bad("workloads: quadratic\noptimizers: root\nsweep: {root: {coeff_file: [a, b]}}\n", "text setting");
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep: {adam: {betta2: [0.9]}}\n", "betta2");
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep: {adam: {beta2: []}}\n", "empty");
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep: {adam: [0.9]}\n", "mapping");
    /* one run twice; settings that do not go together; set and swept in one file */
    expect_bad("workloads: quadratic\noptimizers: adam\nsweep: {adam: {beta2: [0.95, 0.950]}}\n",
               "two configurations of adam that are one run: beta2=0.95 and beta2=0.950");
    /* ... with lrs given too (each configuration then probed at the lowest lr, not the default) */
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: [0.01, 0.1]\nsweep: {adam: {beta2: [0.95, 0.950]}}\n",
               "two configurations of adam that are one run: beta2=0.95 and beta2=0.950");
    expect_bad("workloads: quadratic\noptimizers: adam\nlrs: [0.01]\nsweep: {train: {clip_norm: [1, 1.0]}}\n",
               "two configurations of adam that are one run");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsweep: {train: {spike_window: [16, 32]}}\n",
               "spike_window does nothing while");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsweep: {quadratic: {cond: [100, 1e2]}}\n",
               "two configurations of quadratic that are one problem");
    expect_bad("workloads: quadratic\noptimizers: sgd\nsweep: {sgd: {nesterov: [true, false]}}\n",
               "t.yaml:3: sgd.nesterov = true needs sgd.momentum > 0 (it is 0); give a momentum (e.g. sgd.momentum = "
               "0.9), or leave nesterov off (in sgd's configuration nesterov=true)");
    /* two settings of one line: the place named once */
    expect_bad("workloads: quadratic\noptimizers: sgd\nhparams: {sgd: {nesterov: true, dampening: 0}}\n",
               "t.yaml:3: sgd.nesterov = true needs sgd.momentum > 0 (it is 0); give a momentum");
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams: {adam: {beta2: 0.9}}\n"
               "sweep: {adam: {beta2: [0.95, 0.99]}}\n",
               "t.yaml:4: adam.beta2 is both set and swept in this file (also at t.yaml:3)");
    expect_bad("workloads: quadratic\noptimizers: adam\ntrain: {clip_norm: 1}\nhparams: {train: {clip_norm: 2}}\n",
               "t.yaml:4: train.clip_norm is set twice in this file (also at t.yaml:3)");
    /* an optimizer outside the matrix: each configuration of its sweeps is checked */
    expect_bad("workloads: quadratic\noptimizers: adam\nhparams: {sgd: {nesterov: true}}\n"
               "sweep: {sgd: {momentum: [0, 0.9]}}\n",
               "t.yaml:3: sgd.nesterov = true needs sgd.momentum > 0 (it is 0); give a momentum (e.g. sgd.momentum = "
               "0.9), or leave nesterov off (sgd is not in this matrix; its settings are checked all the same)");
    {
        ob_config ok;
        CHECK_OK(load(&ok, "workloads: quadratic\noptimizers: adam\nhparams: {sgd: {nesterov: true}}\n"
                           "sweep: {sgd: {momentum: [0.5, 0.9]}}\n", &e), &e);
        ob_matrix mm;
        CHECK_OK(ob_matrix_expand(&ok, &mm, NULL, &e), &e);
        ob_matrix_free(&mm);
        ob_config_free(&ok);
    }
    ob_config_init(&c);
    CHECK(ob_config_add_sweep(&c, "adam.beta2", "--sweep", &e) == OB_ERR_INPUT && strstr(e.msg, "V1,V2"));
    ob_config_free(&c);
}

/* The matrix's limits: at most 4096 configurations of an optimizer (its sweeps
 * times train's; 16 x 16 x 16 is allowed, 16 x 16 x 17 is not) and at most
 * 1000000 cells (refused before anything is allocated). */
static void test_matrix_limits(void)
{
    char text[1024], list[3][128];
    for (int k = 0; k < 3; k++) {
        size_t len = 0;
        for (int i = 0; i < 16; i++)
            len += (size_t)snprintf(list[k] + len, sizeof list[k] - len, "%s%s%d", i ? ", " : "", k == 2 ? "" : "0.",
                                    k == 2 ? i + 1 : k ? 80 + i : 50 + i);
    }
    snprintf(text, sizeof text,
             "workloads: quadratic\noptimizers: adam\nsweep:\n  adam: {beta1: [%s], beta2: [%s]}\n"
             "  train: {clip_norm: [%s]}\n",
             list[0], list[1], list[2]);
    ob_config c;
    ob_err e;
    ob_matrix m;
    CHECK_OK(load(&c, text, &e), &e);
    ob_status st = ob_matrix_expand(&c, &m, NULL, &e);
    CHECK_MSG(st == OB_OK && m.n == 4096, "4096 configurations: %s (%d cells)", st == OB_OK ? "" : e.msg,
              st == OB_OK ? m.n : 0);
    if (st == OB_OK) ob_matrix_free(&m);
    ob_config_free(&c);
    char more[1100];
    snprintf(more, sizeof more, "%.*s, 17]}\n", (int)strlen(text) - 3, text); /* a 17th clip_norm */
    expect_bad(more, "the sweeps make 4352 configurations of adam; at most 4096");
    /* 4096 x 16 lrs x 16 seeds */
    snprintf(more, sizeof more, "%slrs: [%s]\nseeds: 0..15\n", text, list[2]);
    expect_bad(more, "the matrix has 1048576 cells; at most 1000000");
}

/* The run order: per workload configuration, seed by seed, the cells of
 * every optimizer and lr in turn, every other seed's turn reversed; every
 * cell once; a subset (a resume's unfinished cells) keeps the same rules. */
static void test_run_order(void)
{
    const char *text = "workloads: [quadratic, rosenbrock]\noptimizers: [sgd, adam]\nlrs: [0.01, 0.1]\nseeds: 3\n"
                       "sweep: {quadratic: {cond: [10, 100]}}\n";
    ob_config c;
    ob_err e;
    ob_matrix m;
    CHECK_OK(load(&c, text, &e), &e);
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK_MSG(m.n == 36, "36 cells: %d", m.n); /* 3 workload configurations x 2 x 2 lrs x 3 seeds */
    const ob_cell *cells[36];
    int order[36], seen[36] = {0};
    if (m.n != 36) return;
    for (int i = 0; i < m.n; i++) cells[i] = &m.cells[i];
    ob_cells_run_order(cells, m.n, NULL, 0, order);
    for (int i = 0; i < m.n; i++) {
        CHECK(order[i] >= 0 && order[i] < m.n);
        if (order[i] >= 0 && order[i] < m.n) seen[order[i]]++;
    }
    int once = 1;
    for (int i = 0; i < m.n; i++) once &= seen[i] == 1;
    CHECK_MSG(once, "every cell runs once");
    /* three workload configurations of 12 cells, in matrix order; within
     * each, seed 0's 4 runs (sgd 0.01, sgd 0.1, adam 0.01, adam 0.1), seed
     * 1's reversed, seed 2's as seed 0's */
    static const char *const want_opt[12] = {"sgd", "sgd", "adam", "adam", "adam", "adam",
                                       "sgd", "sgd", "sgd", "sgd", "adam", "adam"};
    static const double want_lr[12] = {0.01, 0.1, 0.01, 0.1, 0.1, 0.01, 0.1, 0.01, 0.01, 0.1, 0.01, 0.1};
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 12; t++) {
            const ob_cell *x = cells[order[b * 12 + t]], *first = cells[b * 12];
            CHECK_MSG(x->wl == first->wl && x->wl_variant == first->wl_variant, "turn %d: workload block %d",
                      b * 12 + t, b);
            CHECK_MSG(x->seed == t / 4, "turn %d: seed %lld, want %d", b * 12 + t, (long long)x->seed, t / 4);
            CHECK_MSG(!strcmp(x->opt->name, want_opt[t % 12]) && x->lr == want_lr[t % 12],
                      "turn %d: %s lr=%g, want %s lr=%g", b * 12 + t, x->opt->name, x->lr, want_opt[t % 12],
                      want_lr[t % 12]);
        }
    /* a resume's subset: rosenbrock only, seeds 1 and 2 of adam, seed 2 of sgd */
    const ob_cell *sub[8];
    int ns = 0, so[8];
    for (int i = 24; i < 36; i++)
        if ((!strcmp(m.cells[i].opt->name, "adam") && m.cells[i].seed >= 1) ||
            (!strcmp(m.cells[i].opt->name, "sgd") && m.cells[i].seed == 2))
            sub[ns++] = &m.cells[i];
    CHECK(ns == 6);
    /* as part of the whole matrix: the whole order, less the cells not given
     * (seed 1 reversed, seed 2 not, as in the whole) */
    ob_cells_run_order(sub, ns, m.cells, m.n, so);
    int k = 0;
    for (int t = 0; t < m.n; t++) {
        const ob_cell *x = cells[order[t]];
        int in = 0;
        for (int j = 0; j < ns; j++) in |= sub[j] == x;
        if (!in) continue;
        CHECK_MSG(k < ns && sub[so[k]] == x, "subset turn %d: cell %lld, want cell %lld (the whole order's)", k,
                  k < ns ? (long long)sub[so[k]]->index : -1LL, (long long)x->index);
        k++;
    }
    CHECK(k == ns);
    /* alone (all NULL): its own seeds decide, seed 1 first and forward,
     * seed 2 (sgd 0.01, sgd 0.1, adam 0.01, adam 0.1) reversed */
    ob_cells_run_order(sub, ns, NULL, 0, so);
    static const char *const sub_opt[6] = {"adam", "adam", "adam", "adam", "sgd", "sgd"};
    static const double sub_lr[6] = {0.01, 0.1, 0.1, 0.01, 0.1, 0.01};
    for (int t = 0; t < ns && t < 6; t++)
        CHECK_MSG(!strcmp(sub[so[t]]->opt->name, sub_opt[t]) && sub[so[t]]->lr == sub_lr[t] &&
                      sub[so[t]]->seed == (t < 2 ? 1 : 2),
                  "subset turn %d: %s lr=%g seed %lld", t, sub[so[t]]->opt->name, sub[so[t]]->lr,
                  (long long)sub[so[t]]->seed);
    ob_cells_run_order(sub, 0, NULL, 0, so); /* nothing to order */
    ob_matrix_free(&m);
    ob_config_free(&c);
}

/* Quasi-random search (harness/search.h): ranges, the scrambled Halton
 * points, their values, the trials' configurations in the matrix, and bad
 * ranges. */
static void test_search(void)
{
    ob_err e;
    ob_range r;
    CHECK(ob_range_parse("0.9", &r, &e) == 0 && ob_range_parse("1e-3", &r, &e) == 0);
    CHECK(ob_range_parse("0.8..0.99", &r, &e) == 1 && r.scale == OB_RANGE_LIN && r.lo == 0.8 && r.hi == 0.99);
    CHECK(ob_range_parse("log:1e-5..1e-1", &r, &e) == 1 && r.scale == OB_RANGE_LOG && r.lo == 1e-5);
    CHECK(ob_range_parse("log1m:0.9..0.9999", &r, &e) == 1 && r.scale == OB_RANGE_LOG1M && r.hi == 0.9999);
    CHECK(ob_range_parse("lin:-1..1", &r, &e) == 1 && r.scale == OB_RANGE_LIN && r.lo == -1);
    const char *bad[][2] = {{"0.9..0.8", "empty or reversed"}, {"1..1", "empty or reversed"},
                            {"log:0..1", "LO must be above 0"}, {"log1m:0.5..1", "HI must be below 1"},
                            {"0.1..", "not LO..HI"},          {"..0.1", "not LO..HI"},
                            {"log:1e-3", "not LO..HI"},       {"a..b", "must be numbers"},
                            {"0.1..nan", "must be numbers"},  {"-inf..1", "must be numbers"},
                            {"nan..1", "must be numbers"},    {"-.inf..0.5", "must be numbers"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ob_err_clear(&e);
        CHECK_MSG(ob_range_parse(bad[i][0], &r, &e) < 0 && strstr(e.msg, bad[i][1]), "%s: '%s'", bad[i][0], e.msg);
    }
    /* the points: in [0, 1); the first p^k of a dimension of base p one in
     * each of p^k strata (the scrambling permutes digits: a bijection), and
     * the first 6 of dimensions 0 and 1 (bases 2 and 3) one in each cell of
     * a 2 x 3 grid; the same every call */
    const int base[4] = {2, 3, 5, 7}, count[4] = {16, 27, 25, 49};
    for (int dim = 0; dim < 4; dim++) {
        int hit[64] = {0}, ok = 1;
        for (int i = 0; i < count[dim]; i++) {
            double u = ob_search_point(i, dim);
            ok &= u >= 0 && u < 1 && u == ob_search_point(i, dim);
            hit[(int)(u * count[dim])]++;
        }
        for (int k = 0; k < count[dim]; k++) ok &= hit[k] == 1;
        CHECK_MSG(ok, "dimension %d (base %d): the first %d points are not one per stratum", dim, base[dim],
                  count[dim]);
    }
    {
        int cell[6] = {0}, ok = 1;
        for (int i = 0; i < 6; i++) cell[(int)(ob_search_point(i, 0) * 2) * 3 + (int)(ob_search_point(i, 1) * 3)]++;
        for (int k = 0; k < 6; k++) ok &= cell[k] == 1;
        CHECK(ok);
        /* another seed: other points, of the same evenness; seed 0 the fixed sequence */
        int differ = 0, strata = 1, hit8[8] = {0};
        for (int i = 0; i < 8; i++) {
            const double u = ob_search_point_seeded(i, 0, 7);
            differ += u != ob_search_point(i, 0);
            hit8[(int)(u * 8)]++;
            strata &= ob_search_point_seeded(i, 3, 0) == ob_search_point(i, 3);
        }
        for (int k = 0; k < 8; k++) strata &= hit8[k] == 1;
        CHECK_MSG(differ >= 6 && strata, "seed 7: %d of 8 points differ", differ);
        /* scrambled: not the plain radical inverse (0, 1/2, 1/4, ...) */
        CHECK(ob_search_point(0, 0) != 0 || ob_search_point(1, 0) != 0.5);
        /* far dimensions too: every point in [0, 1) */
        for (int i = 0; i < 200; i++) ok &= ob_search_point(i, OB_SEARCH_MAX_DIMS - 1) < 1;
        CHECK(ok);
    }
    {
        /* two search seeds draw different lrs: with one scrambling per digit
         * position (draws 1) the first 8 points of base 2 are the same 8
         * strata's, and seeds 17 and 21 gave the same 8 lrs of
         * log:1e-4..1e-1 to 3 digits; nested scrambling gives each point low
         * digits of its own */
        const ob_hp_def lrdef = {"lr", OB_HP_FLOAT, 0, 0, 1e9, 0, 0, NULL, ""};
        const ob_range lr = {OB_RANGE_LOG, 1e-4, 1e-1};
        for (int draws = 1; draws <= OB_SEARCH_DRAWS; draws++) {
            char a[8][32], b[8][32];
            for (int i = 0; i < 8; i++) {
                ob_range_value(&lr, &lrdef, ob_search_point_drawn(i, 0, 17, draws), a[i], sizeof a[i]);
                ob_range_value(&lr, &lrdef, ob_search_point_drawn(i, 0, 21, draws), b[i], sizeof b[i]);
            }
            int shared = 0;
            for (int i = 0; i < 8; i++)
                for (int j = 0; j < 8; j++) shared += !strcmp(a[i], b[j]);
            if (draws == 1) CHECK_MSG(shared == 8, "draws 1 (kept for stored searches): %d of 8 lrs shared", shared);
            else CHECK_MSG(shared == 0, "draws %d: seeds 17 and 21 share %d of 8 lrs", draws, shared);
        }
        /* draws 1 stay those of the builds that stored searches with them
         * (dimension 0 at seed 0 and dimension 1 at seed 5, as they drew) */
        static const double was0[4] = {0.20179282425851852, 0.70179282425851852, 0.45179282425851852,
                                       0.95179282425851852};
        static const double was1[3] = {0.92589581042134395, 0.59256247708801069, 0.2592291437546772};
        int same = 1;
        for (int i = 0; i < 4; i++) same &= fabs(ob_search_point_drawn(i, 0, 0, 1) - was0[i]) < 1e-15;
        for (int i = 0; i < 3; i++) same &= fabs(ob_search_point_drawn(i, 1, 5, 1) - was1[i]) < 1e-15;
        CHECK(same);
        /* draws 2: the first 2^k (3^k) points still one per stratum, at other seeds too */
        for (int seed = 0; seed < 4; seed++) {
            int h2[16] = {0}, h3[9] = {0}, ok = 1;
            for (int i = 0; i < 16; i++) h2[(int)(ob_search_point_drawn(i, 0, seed, 2) * 16)]++;
            for (int i = 0; i < 9; i++) h3[(int)(ob_search_point_drawn(i, 1, seed, 2) * 9)]++;
            for (int k = 0; k < 16; k++) ok &= h2[k] == 1;
            for (int k = 0; k < 9; k++) ok &= h3[k] == 1;
            CHECK_MSG(ok, "seed %d: the first 16 (9) points are not one per stratum", seed);
        }
    }
    /* values: rounded for short labels, within the range, ends reached */
    const ob_hp_def fdef = {"x", OB_HP_FLOAT, 0, -1e9, 1e9, 0, 0, NULL, ""};
    const ob_hp_def idef = {"n", OB_HP_INT, 0, 0, 1e9, 0, 0, NULL, ""};
    char v[64];
    ob_range lin = {OB_RANGE_LIN, 0.8, 0.99}, lg = {OB_RANGE_LOG, 1e-4, 1e-1}, l1m = {OB_RANGE_LOG1M, 0.9, 0.9999},
             narrow = {OB_RANGE_LOG, 0.5, 0.6}, ints = {OB_RANGE_LIN, 1, 4}, ilog = {OB_RANGE_LOG, 1, 1000};
    ob_range_value(&lin, &fdef, 0, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.8"), "%s", v);
    ob_range_value(&lin, &fdef, 0.99999999, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.99"), "%s", v);
    ob_range_value(&lin, &fdef, 0.5, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.895"), "%s", v); /* a step of 0.001 */
    ob_range_value(&lg, &fdef, 0.5, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.00316"), "%s", v); /* 10^-2.5, 3 digits */
    ob_range_value(&lg, &fdef, 1.0 / 3, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.001"), "%s", v);
    ob_range_value(&l1m, &fdef, 0, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.9"), "%s", v);
    ob_range_value(&l1m, &fdef, 0.5, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.99684"), "%s", v); /* 1 - 10^-2.5 */
    ob_range_value(&l1m, &fdef, 0.25, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.9822"), "%s", v); /* 1 - 10^-1.75, 3 digits */
    ob_range_value(&narrow, &fdef, 0.5, v, sizeof v);
    CHECK_MSG(!strcmp(v, "0.5477"), "%s", v); /* a range of a fifth of a decade: 4 digits */
    int seen[5] = {0};
    for (int k = 0; k < 40; k++) {
        ob_range_value(&ints, &idef, k / 40.0, v, sizeof v);
        int n = atoi(v);
        if (n >= 1 && n <= 4) seen[n]++;
        else seen[0]++;
    }
    CHECK_MSG(seen[0] == 0 && seen[1] == 10 && seen[2] == 10 && seen[3] == 10 && seen[4] == 10, "%d %d %d %d %d",
              seen[0], seen[1], seen[2], seen[3], seen[4]);
    ob_range_value(&ilog, &idef, 0.5, v, sizeof v);
    CHECK_MSG(!strcmp(v, "32"), "%s", v);

    /* the matrix: trials x the listed sweeps; the ranged keys move together */
    ob_config c;
    CHECK_OK(load(&c,
                  "workloads: [quadratic]\noptimizers: [sgd, adamw]\nlrs: [0.01, 0.1]\ntrials: 8\n"
                  "sweep:\n  adamw: {weight_decay: \"log:1e-4..1e-1\", beta1: 0.8..0.99, amsgrad: [false, true]}\n",
                  &e),
             &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK_MSG(m.n == 2 + 8 * 2 * 2, "%d cells", m.n);
    if (m.n == 34) {
        int ok = 1;
        for (int t = 0; t < 8; t++)
            for (int a = 0; a < 2; a++) {
                const ob_cell *x = &m.cells[2 + (t * 2 + a) * 2];
                /* beta1 the first key in name order: dimension 0; weight_decay dimension 1 */
                ob_range_value(&(ob_range){OB_RANGE_LIN, 0.8, 0.99}, &fdef, ob_search_point(t, 0), v, sizeof v);
                ok &= ob_hp_get(&x->opt_hp, "beta1") == atof(v);
                ob_range_value(&(ob_range){OB_RANGE_LOG, 1e-4, 1e-1}, &fdef, ob_search_point(t, 1), v, sizeof v);
                ok &= ob_hp_get(&x->opt_hp, "weight_decay") == atof(v);
                ok &= ob_hp_get(&x->opt_hp, "amsgrad") == a && x->variant == t * 2 + a;
                ok &= x->lr == 0.01 && m.cells[3 + (t * 2 + a) * 2].lr == 0.1 &&
                      ob_cell_same_pair(x, &m.cells[3 + (t * 2 + a) * 2]);
            }
        CHECK(ok);
        char text[256];
        ob_cell_sweep_text(&c, &m.cells[2], OB_SWEEP_ALL, text, sizeof text);
        ob_range_value(&(ob_range){OB_RANGE_LIN, 0.8, 0.99}, &fdef, ob_search_point(0, 0), v, sizeof v);
        char want[128];
        snprintf(want, sizeof want, "amsgrad=false beta1=%s weight_decay=", v);
        CHECK_MSG(!strncmp(text, want, strlen(want)), "'%s'", text);
    }
    /* more trials begin with the fewer trials' configurations */
    {
        ob_config c2;
        CHECK_OK(load(&c2,
                      "workloads: [quadratic]\noptimizers: [sgd, adamw]\nlrs: [0.01, 0.1]\ntrials: 3\n"
                      "sweep:\n  adamw: {beta1: 0.8..0.99, amsgrad: [false, true], weight_decay: \"log:1e-4..1e-1\"}\n",
                      &e),
                 &e);
        ob_matrix m2;
        CHECK_OK(ob_matrix_expand(&c2, &m2, NULL, &e), &e);
        int same = m2.n == 2 + 3 * 4;
        for (int i = 0; same && i < m2.n; i++) same = !memcmp(m.cells[i].opt_hp.v, m2.cells[i].opt_hp.v, sizeof m.cells[i].opt_hp.v);
        CHECK(same);
        ob_matrix_free(&m2);
        ob_config_free(&c2);
    }
    ob_matrix_free(&m);
    ob_config_free(&c);
    /* bad searches: what, where, what to do */
    const char *head = "workloads: [quadratic]\noptimizers: [adamw]\n";
    char text[512];
    const char *bads[][2] = {
        {"sweep: {adamw: {beta1: 0.8..0.99}}\n", "t.yaml:3: adamw.beta1 = 0.8..0.99 is a range: give the number of points"},
        {"trials: 4\n", "t.yaml:3: trials = 4, but no sweep is a range"},
        {"trials: 4\nsweep: {adamw: {beta1: [0.8..0.9, 0.95]}}\n", "a range is a sweep's only value"},
        {"trials: 4\nsweep: {adamw: {beta1: 0.8..1.5}}\n", "adamw.beta1 = 1.5 is out of range: it must be in [0, 1) (an end of the range 0.8..1.5)"},
        {"trials: 4\nsweep: {adamw: {beta1: 0.9..0.8}}\n", "t.yaml:4: sweep: adamw.beta1: the range '0.9..0.8' is empty or reversed"},
        {"trials: 4\nsweep: {adamw: {amsgrad: 0..1}}\n", "adamw.amsgrad takes true or false, not a number"},
        {"trials: 4\nsweep: {quadratic: {cond: 10..100}}\n", "which only an optimizer's settings and train's take"},
        {"trials: 4\nsweep: {adamw: {betta1: 0.1..0.5}}\n", "did you mean 'beta1'"},
        {"trials: 0\nsweep: {adamw: {beta1: 0.8..0.99}}\n", "trials"},
        {"trials: 5000\nsweep: {adamw: {beta1: 0.8..0.99}}\n", "trials"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        snprintf(text, sizeof text, "%s%s", head, bads[i][0]);
        expect_bad(text, bads[i][1]);
    }
    /* two trials that round to one configuration */
    expect_bad("workloads: [quadratic]\noptimizers: [adamw]\nlrs: [0.01]\ntrials: 4\ntrain: {schedule: warmup}\n"
               "sweep: {train: {warmup_steps: 1..2}}\n",
               "two trials of the search drew the same values");
    /* train's ranges are searched with each optimizer's: sgd gets the trials too, adamw's draw both */
    {
        ob_config c3;
        CHECK_OK(load(&c3,
                      "workloads: [quadratic]\noptimizers: [sgd, adamw]\nlrs: [0.01]\ntrials: 4\n"
                      "train: {schedule: warmup}\nsweep:\n  adamw: {beta1: 0.8..0.99}\n"
                      "  train: {warmup_steps: 0..20, clip_norm: [0, 1]}\n",
                      &e),
                 &e);
        ob_matrix m3;
        CHECK_OK(ob_matrix_expand(&c3, &m3, NULL, &e), &e);
        CHECK_MSG(m3.n == 4 * 2 + 4 * 2, "%d cells", m3.n);
        if (m3.n == 16) {
            int ok = 1;
            const ob_hp_def wdef = {"w", OB_HP_INT, 0, 0, 1e9, 0, 0, NULL, ""};
            for (int t = 0; t < 4; t++)
                for (int cn = 0; cn < 2; cn++) {
                    const ob_cell *s1 = &m3.cells[t * 2 + cn], *a1 = &m3.cells[8 + t * 2 + cn];
                    /* sgd: warmup_steps in dimension 0; adamw: beta1 0, warmup_steps 1 */
                    ob_range_value(&(ob_range){OB_RANGE_LIN, 0, 20}, &wdef, ob_search_point(t, 0), v, sizeof v);
                    ok &= ob_hp_get(&s1->train_hp, "warmup_steps") == atof(v);
                    ob_range_value(&(ob_range){OB_RANGE_LIN, 0, 20}, &wdef, ob_search_point(t, 1), v, sizeof v);
                    ok &= ob_hp_get(&a1->train_hp, "warmup_steps") == atof(v);
                    ob_range_value(&(ob_range){OB_RANGE_LIN, 0.8, 0.99}, &fdef, ob_search_point(t, 0), v, sizeof v);
                    ok &= ob_hp_get(&a1->opt_hp, "beta1") == atof(v);
                    ok &= ob_hp_get(&s1->train_hp, "clip_norm") == cn && ob_hp_get(&a1->train_hp, "clip_norm") == cn;
                }
            CHECK(ok);
            char text3[256];
            ob_cell_sweep_text(&c3, &m3.cells[8], OB_SWEEP_ALL, text3, sizeof text3);
            CHECK_MSG(!strncmp(text3, "beta1=", 6) && strstr(text3, " clip_norm=0 warmup_steps="), "'%s'", text3);
        }
        ob_matrix_free(&m3);
        ob_config_free(&c3);
    }
    /* the lr searched: each trial draws its lr in the dimension after the
     * optimizer's and train's ranged keys; sgd's lrs a list */
    {
        ob_config c4;
        CHECK_OK(load(&c4,
                      "workloads: [quadratic]\noptimizers: [sgd, adamw]\ntrials: 5\n"
                      "lrs: {sgd: [0.01, 0.1], adamw: \"log:1e-4..1e-1\"}\n"
                      "sweep:\n  adamw: {beta1: 0.8..0.99}\n",
                      &e),
                 &e);
        ob_matrix m4;
        CHECK_OK(ob_matrix_expand(&c4, &m4, NULL, &e), &e);
        CHECK_MSG(m4.n == 2 + 5, "%d cells", m4.n);
        if (m4.n == 7) {
            int ok = m4.cells[0].lr == 0.01 && m4.cells[1].lr == 0.1;
            const ob_hp_def lrdef = {"lr", OB_HP_FLOAT, 0.001, 0, 1e9, 1, 0, NULL, ""};
            for (int t = 0; t < 5; t++) {
                const ob_cell *x = &m4.cells[2 + t];
                ob_range_value(&(ob_range){OB_RANGE_LOG, 1e-4, 1e-1}, &lrdef, ob_search_point(t, 1), v, sizeof v);
                ok &= x->lr == atof(v) && ob_hp_get(&x->opt_hp, "lr") == x->lr && x->variant == t;
                ob_range_value(&(ob_range){OB_RANGE_LIN, 0.8, 0.99}, &fdef, ob_search_point(t, 0), v, sizeof v);
                ok &= ob_hp_get(&x->opt_hp, "beta1") == atof(v);
            }
            CHECK(ok);
        }
        ob_matrix_free(&m4);
        ob_config_free(&c4);
    }
    expect_bad("workloads: [quadratic]\noptimizers: [adamw]\nlrs: \"log:1e-4..1e-1\"\n",
               "t.yaml:3: the lrs of adamw, log:1e-4..1e-1, are a range: give the number of points");
    expect_bad("workloads: [quadratic]\noptimizers: [adamw]\ntrials: 3\nlrs: [0.1, \"log:1e-4..1e-1\"]\n",
               "a range is the only one");
    expect_bad("workloads: [quadratic]\noptimizers: [adamw]\ntrials: 3\nlrs: \"0..0.1\"\n", "must lie above 0");
    expect_bad("workloads: [quadratic]\noptimizers: [adamw]\ntrials: 3\nlrs: \"log:0.1..1e-4\"\n",
               "empty or reversed");
    expect_bad("workloads: [quadratic]\noptimizers: [adamw]\nsearch_seed: 3\n",
               "t.yaml:3: search_seed = 3, but there is no search");
    /* an integer key: whole ends, not log1m */
    expect_bad("workloads: [quadratic]\noptimizers: [soap]\ntrials: 4\nsweep: {soap: {precondition_frequency: 1.5..10}}\n",
               "is an integer: its range needs whole ends");
}

int main(void)
{
    test_yaml_ok();
    test_yaml_bad();
    test_text_options();
    test_flags();
    test_bad_values();
    test_lrs_note();
    test_exclude();
    test_routing_check();
    test_min_lr();
    test_consistency_messages();
    test_stats();
    test_step_times();
    test_sweeps();
    test_search();
    test_all_optimizers();
    test_matrix_limits();
    test_run_order();
    return check_done();
}
