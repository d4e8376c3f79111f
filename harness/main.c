/* harness/main.c - the `optbench` program: dispatch to a subcommand. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/hparams.h"
#include "harness/commands.h"
#include "kernels/backend.h"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static const command commands[] = {
    {"run", ob_cmd_run, "run a matrix of workloads x optimizers x learning rates x seeds"},
    {"list", ob_cmd_list, "list workloads and optimizers with their hyperparameters (or those named)"},
    {"report", ob_cmd_report, "write CSV tables, gnuplot scripts and plots from a database"},
    {"compare", ob_cmd_compare, "compare a candidate database against a baseline (regression gate)"},
    {"history", ob_cmd_history, "print and plot a metric over the benchmarks of one database or several"},
    {"replay", ob_cmd_replay, "apply an optimizer to a recorded gradient sequence (conformance)"},
    {"ortho", ob_cmd_ortho, "Newton-Schulz orthogonalization accuracy study"},
    {"merge", ob_cmd_merge, "combine shard databases into one (each cell once, with provenance)"},
    {"bench-step", ob_cmd_bench_step, "time the optimizer step alone and its memory bandwidth"},
};
#define N_COMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f,
            "optbench %s - benchmark deep-learning optimizers honestly\n\n"
            "usage: optbench COMMAND [options]   (optbench COMMAND --help for each)\n\n"
            "commands:\n",
            OB_VERSION);
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].help);
    fprintf(f,
            "\nexample:\n"
            "  optbench run --workloads quadratic,rosenbrock --optimizers sgd,adam \\\n"
            "               --lrs 0.001,0.01,0.1 --seeds 3 --steps 200 --db results.db\n"
            "  optbench report --db results.db --out report/\n\n"
            "environment:\n"
            "  OB_DB_CHECK=off    skip the page check of each database opened (PRAGMA\n"
            "                     integrity_check reads the whole file; a damaged one is\n"
            "                     refused); default on\n"
            "  OB_CPU_CONV        the CPU's convolution: auto, avx512, avx2 or im2col\n"
            "  OB_CPU_BF16_GEMM=openblas\n"
            "                     bf16 products (muon.ns_dtype=bf16) on OpenBLAS, not on the CPU's\n"
            "                     bf16 units through oneDNN; recorded in each run's device text\n"
            "  OMP_WAIT_POLICY, GOMP_SPINCOUNT\n"
            "                     how the CPU's threads wait (passive: faster on a busy machine,\n"
            "                     slower idle); recorded in each run's device text where set\n"
            "  OPTBENCH_MATMUL_PRECISION\n"
            "                     highest (fp32, default), high (TF32) or medium (bf16) on a GPU\n"
            "  OPTBENCH_TF32=1    as OPTBENCH_MATMUL_PRECISION=high (which wins where both are set)\n"
            "  OPTBENCH_CUDA_MODULE\n"
            "                     the CUDA backend module to load (default: optbench-cuda.so beside\n"
            "                     the program, where a CUDA build puts it)\n"
            "  SOURCE_DATE_EPOCH  the time reports say they were generated\n\n"
            "exit status: 0 success, 1 failure, 2 bad input\n");
}

/* What a command prints (a ranking, a comparison, a table) is its result: a
 * standard output that could not take it (a full disk, a closed pipe
 * without SIGPIPE, /dev/full) must not end in exit status 0, as if a CI
 * log or a redirected file held it all. */
static int finish_stdout(const char *name, int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int err = errno;
    if (bad || ferror(stdout)) {
        fprintf(stderr, "optbench: %s: could not write its output to standard output (%s): the output is "
                        "incomplete; check where it goes (a full disk?) and run again\n",
                name, err ? strerror(err) : "write error");
        /* compare's 1 is a verdict (a regression), which an incomplete output
         * does not give: 2, no verdict, as for a report it cannot write */
        if (!strcmp(name, "compare")) return 2;
        return rc == 0 ? 1 : rc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return finish_stdout("--help", 0);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("optbench %s\n", OB_VERSION);
        /* said, not loaded: --version starts where the CUDA libraries are missing too */
        printf("%s\n", ob_cuda_backend_built() ? "CUDA backend: optbench-cuda.so beside the program (or "
                                                 "OPTBENCH_CUDA_MODULE), loaded when a command asks for a CUDA device"
                                               : "CUDA backend: none in this build (CPU only)");
        return finish_stdout("--version", 0);
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return finish_stdout(commands[i].name, commands[i].fn(argc - 1, argv + 1));
    const char *names[N_COMMANDS];
    for (int i = 0; i < N_COMMANDS; i++) names[i] = commands[i].name;
    const char *near = ob_closest_name(argv[1], names, N_COMMANDS);
    if (near)
        fprintf(stderr, "optbench: unknown command '%s' (did you mean '%s'?)\n", argv[1], near);
    else
        fprintf(stderr, "optbench: unknown command '%s' (run 'optbench --help' for the list)\n", argv[1]);
    return 2;
}
