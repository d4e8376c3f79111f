/* harness/cmd_merge.c - `optbench merge`: shard databases into one. */
#include <stdio.h>
#include <string.h>

#include "harness/commands.h"
#include "harness/config.h"
#include "harness/merge.h"
#include "harness/signals.h"

static void merge_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench merge --out ALL.db SHARD.db [SHARD.db ...] [--name NAME]\n\n"
            "Combines results databases (the shards of a sweep, e.g. one per Slurm array task)\n"
            "into a new database with one benchmark. Each cell (workload, parameters, optimizer,\n"
            "hyperparameters, lr, seed, steps) appears once: a finished run (done or diverged)\n"
            "wins over a failed one, which wins over an interrupted or running one, which wins\n"
            "over a pending one; among equals the first database given wins. Two finished\n"
            "runs of a cell that disagree are reported as conflicts (the first is kept). The merged\n"
            "benchmark's provenance column (JSON) lists every input benchmark: file, shard, host,\n"
            "git revision, device, times and runs taken; each run's origin column says which\n"
            "file and run it came from. The inputs are only read; ALL.db must not exist.\n"
            "Refused (exit 2, nothing written): shards of different matrices (each shard\n"
            "records its matrix's fingerprint: another --sweep, --lrs, --set or --steps), and\n"
            "inputs run with different eval_every. Shards run by two builds, one of which added\n"
            "a setting, merge when this build finds their configurations one matrix and their\n"
            "runs its cells (a setting missing from a run is at its default).\n\n"
            "options:\n"
            "  --out FILE     the new database (required)\n"
            "  --name NAME    name of the merged benchmark (default: the inputs' name)\n\n"
            "exit status: 0 merged (conflicts, if any, reported), 1 failure, 2 bad input\n");
}

int ob_cmd_merge(int argc, char **argv)
{
    static const char *const single[] = {"--out", "--name"};
    ob_cli_once("merge", argc, argv, single, OB_CLI_COUNT(single));
    const char *out = NULL, *name = NULL;
    const char *in[1024];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            merge_usage(stdout);
            return 0;
        }
        char msg[512];
        if (!strcmp(a, "--out") || !strcmp(a, "--name")) {
            if (ob_cli_value_error(msg, sizeof msg, "merge", argc, argv, i)) return ob_cli_error(2, "%s", msg);
            if (!strcmp(a, "--out")) out = argv[++i];
            else name = argv[++i];
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            static const char *const opts[] = {"--out", "--name", "--help"};
            ob_cli_option_error(msg, sizeof msg, "merge", a, opts, 3, 2); /* --help takes no value */
            return ob_cli_error(2, "%s", msg);
        }
        if (n == (int)(sizeof in / sizeof in[0])) return ob_cli_error(2, "merge: more than %d input databases", n);
        in[n++] = a;
    }
    if (name && !*name)
        return ob_cli_error(2, "merge: --name is empty: give the merged benchmark a name, or leave --name out for "
                            "the inputs' name");
    if (name) { /* as run holds a benchmark's name */
        const size_t max = sizeof ((ob_config *)0)->name - 1;
        const long bad = ob_utf8_check(name);
        if (strlen(name) > max)
            return ob_cli_error(2, "merge: --name is %zu bytes long; at most %zu", strlen(name), max);
        if (bad >= 0) return ob_cli_error(2, "merge: --name is not UTF-8 text (byte %ld)", bad + 1);
    }
    if (out && !*out) return ob_cli_error(2, "merge: --out is empty: give the merged database's file");
    if (!out) return ob_cli_error(2, "merge: needs --out FILE (see optbench merge --help)");
    if (n == 0) return ob_cli_error(2, "merge: needs at least one input database (see optbench merge --help)");
    ob_merge_report r;
    ob_err e;
    ob_err_clear(&e);
    /* a stop asked by SIGINT, SIGTERM or SIGHUP ends the copy with nothing left (a second SIGINT at once) */
    ob_signals_install();
    const ob_status ms = ob_merge(out, in, n, name, stderr, &r, &e);
    const int sig = ob_signal_pending();
    ob_signals_restore();
    if (ms != OB_OK)
        return ob_cli_error(ms == OB_ERR_INTERRUPTED && sig ? ob_signal_exit_code(sig) : ob_exit_code(e.status), "%s%s",
                            strncmp(e.msg, "merge: ", 7) ? "merge: " : "", e.msg);
    fprintf(stderr,
            "optbench: merged %d run%s of %d benchmark%s in %d database%s into %s (benchmark %lld): %d cell%s, "
            "%d duplicate%s left out, %d conflict%s%s, %d cell%s not finished\n",
            r.runs_in, r.runs_in == 1 ? "" : "s", r.benchmarks, r.benchmarks == 1 ? "" : "s", r.sources,
            r.sources == 1 ? "" : "s", out, (long long)r.bench_id, r.cells, r.cells == 1 ? "" : "s", r.duplicates,
            r.duplicates == 1 ? "" : "s", r.conflicts, r.conflicts == 1 ? "" : "s",
            r.conflicts ? " (the first run kept; see above)" : "", r.unfinished, r.unfinished == 1 ? "" : "s");
    return 0;
}
