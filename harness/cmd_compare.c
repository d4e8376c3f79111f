/* harness/cmd_compare.c - `optbench compare`: the nightly regression gate.
 * Exit status 0 (no regression), 1 (regression), 2 (no verdict: unusable
 * input, an unreadable database, a report file not written). The
 * judgement is results/compare.c; this file parses flags and writes files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/hparams.h"
#include "harness/commands.h"
#include "results/compare.h"
#include "results/store.h"

static void compare_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench compare --baseline A.db --candidate B.db [options]\n\n"
            "Matches runs by workload, workload parameters (e.g. --set quadratic.noise=2 makes\n"
            "other cells), optimizer, hyperparameters, lr, seed and steps and reports, per workload x\n"
            "optimizer, whether final loss, held-out metric, step time and memory got worse,\n"
            "better or stayed within noise. Confirmation runs (run --confirm-seeds) are left out.\n\n"
            "Final loss and held-out metric are judged at the baseline's best lr, paired over\n"
            "seeds: worse when the 95%% bootstrap interval of the median change lies above 0 and\n"
            "the change exceeds the tolerance (with up to 5 seeds: worse on every seed). A seed\n"
            "newly diverged there (or with a non-finite final loss) is a regression.\n"
            "Step time is each run's median (p50) step time, paired over the matched cells the\n"
            "same way: worse when the median slowdown exceeds --time-tol and shows on the cells\n"
            "together. Cells whose p90 step time is more than %.0f%% above their median on one side\n"
            "only (a busy machine) are left out; a group with mostly such cells is shown as\n"
            "'unsteady, not judged'. Step times are comparable only between runs on the same,\n"
            "otherwise idle machine: use --time-tol off when the baseline ran on another machine\n"
            "(another CI runner, CPU or GPU), when either ran beside other work (a shared or\n"
            "virtual machine, parallel jobs), or when the note says every group moved together.\n\n"
            "options:\n"
            "  --loss-tol F        minimum relative change of final loss that counts (default 0.05)\n"
            "  --metric-tol F      minimum absolute change of the held-out metric (default 0.01)\n"
            "  --time-tol F|off    minimum relative change of step time that counts (default 0.10);\n"
            "                      off: step time is not judged (see above)\n"
            "  --time-floor MS     cells whose median step time is under MS milliseconds on both\n"
            "                      sides are not timed (default 0.05: they time the harness)\n"
            "  --no-memory         do not judge memory (default: any increase is worse)\n"
            "  --strict            cells present on one side only fail the comparison\n"
            "  --baseline-benchmark ID|latest|all   runs of the baseline to use (default all)\n"
            "  --candidate-benchmark ID|latest|all  runs of the candidate to use (default all)\n"
            "  --markdown FILE     write a Markdown summary (for a CI job summary)\n"
            "  --junit FILE        write JUnit XML, one test case per workload x optimizer\n"
            "  --quiet             print only the verdict line\n\n"
            "exit status: 0 no regression, 1 regression, 2 no verdict (unusable input, an\n"
            "unreadable database, a report file that could not be written)\n",
            100 * OB_TIME_UNSTEADY);
}

static int parse_bench(const char *v, int64_t *out)
{
    double x;
    if (!strcmp(v, "latest")) *out = -1;
    else if (!strcmp(v, "all")) *out = 0;
    else if (ob_parse_double(v, &x) == 0 && x >= 1 && x == (double)(long long)x) *out = (int64_t)x;
    else return -1;
    return 0;
}

static int parse_nonneg(const char *flag, const char *v, double *out)
{
    if (ob_parse_double(v, out) != 0 || !(*out >= 0) || !isfinite(*out))
        return ob_cli_error(2, "compare: %s '%s' is not a non-negative number", flag, v);
    return 0;
}

int ob_cmd_compare(int argc, char **argv)
{
    ob_compare_opts o;
    ob_compare_opts_default(&o);
    const char *base = NULL, *cand = NULL, *md = NULL, *junit = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            compare_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-memory")) {
            o.check_memory = 0;
            continue;
        }
        if (!strcmp(a, "--strict")) {
            o.strict = 1;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            return ob_cli_error(2, "compare: unexpected argument '%s' (see optbench compare --help)", a);
        static const char *const valued[] = {"--baseline", "--candidate", "--markdown", "--junit", "--loss-tol",
                                             "--metric-tol", "--time-tol", "--time-floor", "--baseline-benchmark",
                                             "--candidate-benchmark"};
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known |= !strcmp(a, valued[k]);
        if (!known) return ob_cli_error(2, "compare: unknown option '%s' (see optbench compare --help)", a);
        if (i + 1 >= argc) return ob_cli_error(2, "compare: %s needs a value", a);
        const char *v = argv[++i];
        int rc = 0;
        if (!strcmp(a, "--baseline")) base = v;
        else if (!strcmp(a, "--candidate")) cand = v;
        else if (!strcmp(a, "--markdown")) md = v;
        else if (!strcmp(a, "--junit")) junit = v;
        else if (!strcmp(a, "--loss-tol")) rc = parse_nonneg(a, v, &o.loss_tol);
        else if (!strcmp(a, "--metric-tol")) rc = parse_nonneg(a, v, &o.metric_tol);
        else if (!strcmp(a, "--time-floor")) rc = parse_nonneg(a, v, &o.time_floor_ms);
        else if (!strcmp(a, "--time-tol")) {
            if (!strcmp(v, "off")) o.time_tol = -1;
            else rc = parse_nonneg(a, v, &o.time_tol);
        } else if (!strcmp(a, "--baseline-benchmark")) {
            if (parse_bench(v, &o.base_bench)) rc = ob_cli_error(2, "compare: %s '%s' is not an id, 'latest' or 'all'", a, v);
        } else if (!strcmp(a, "--candidate-benchmark")) {
            if (parse_bench(v, &o.cand_bench)) rc = ob_cli_error(2, "compare: %s '%s' is not an id, 'latest' or 'all'", a, v);
        } else
            rc = ob_cli_error(2, "compare: unknown option '%s' (see optbench compare --help)", a);
        if (rc) return rc;
    }
    if (!base || !cand) {
        compare_usage(stderr);
        return ob_cli_error(2, "compare: --baseline and --candidate are required");
    }
    ob_err e = {0};
    ob_store *sb = NULL, *sc = NULL;
    ob_status st = ob_store_open(base, OB_STORE_READONLY, &sb, &e);
    if (st != OB_OK) return ob_cli_error(2, "compare: baseline: %s", e.msg);
    st = ob_store_open(cand, OB_STORE_READONLY, &sc, &e);
    if (st != OB_OK) {
        ob_store_close(sb);
        return ob_cli_error(2, "compare: candidate: %s", e.msg);
    }
    ob_compare c;
    st = ob_compare_dbs(ob_store_db(sb), ob_store_db(sc), &o, &c, &e);
    ob_store_close(sb);
    ob_store_close(sc);
    if (st != OB_OK) return ob_cli_error(2, "compare: %s", e.msg); /* no verdict: never 1, a regression */
    if (!quiet) ob_compare_print(&c, stdout);
    int rc = c.regression ? 1 : 0;
    const char *paths[2] = {md, junit};
    for (int k = 0; k < 2; k++) {
        if (!paths[k]) continue;
        FILE *f = fopen(paths[k], "w");
        if (!f) {
            rc = ob_cli_error(2, "compare: cannot write '%s': %s", paths[k], strerror(errno));
            continue;
        }
        if (k == 0) ob_compare_markdown(&c, base, cand, f);
        else ob_compare_junit(&c, f);
        if (ferror(f) | fclose(f)) rc = ob_cli_error(2, "compare: writing '%s' failed", paths[k]);
    }
    printf("optbench compare: %s (%d matched cell%s, %d group%s: %d worse, %d better; %d cell%s only in the "
           "baseline, %d only in the candidate)\n",
           c.regression ? "REGRESSION" : "no regression", c.n_matched, c.n_matched == 1 ? "" : "s", c.n_g,
           c.n_g == 1 ? "" : "s", c.n_worse, c.n_better, c.n_only_base, c.n_only_base == 1 ? "" : "s",
           c.n_only_cand);
    ob_compare_free(&c);
    return rc;
}
