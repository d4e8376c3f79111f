/* harness/cmd_run.c - `optbench run` and `optbench list`. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cpu_share.h"
#include "harness/checkpoint.h"
#include "harness/commands.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/resume.h"
#include "harness/run.h"
#include "harness/search.h"
#include "harness/signals.h"
#include "results/store.h"

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench run [CONFIG.yaml] [options]\n\n"
            "Runs every cell of workloads x optimizers x learning rates x seeds and records\n"
            "each run (curve, held-out metrics, step time, peak memory, and the share of the\n"
            "CPUs other processes kept busy meanwhile) in an SQLite database. Runs go seed by\n"
            "seed, every optimizer and lr taking a turn (--dry-run lists the order), so that a\n"
            "machine's drift slows them alike. Flags override the config file.\n\n"
            "options:\n"
            "  --workloads A,B        workloads to run (optbench list shows them)\n"
            "  --optimizers X,Y       optimizers to run\n"
            "  --lrs 0.001,0.01       learning rates (default: each optimizer's default lr); FROM:TO:N\n"
            "                         is N log-spaced from FROM to TO (1e-5:1e2:36, DeepOBS's grid);\n"
            "                         a range, log:1e-4..1e-1 (log-uniform) or 1e-4..1e-2, is\n"
            "                         searched with --trials: each trial draws its own lr\n"
            "  --seeds N | A,B | A..B N seeds 0..N-1, the listed seeds, or seeds A to B (default 1)\n"
            "  --steps N              training steps per run (default 200)\n"
            "  --eval-every N         held-out evaluation every N steps (default: at the end)\n"
            "  --confirm-seeds N      after the sweep, run N fresh seeds at each pair's best lr\n"
            "                         (lowest median final loss): the report's confirmation table\n"
            "                         is free of the bias of picking the best lr on the same seeds\n"
            "                         (default 0: no confirmation)\n"
            "  --confirm-configs all|best\n"
            "                         with sweeps: confirm every configuration's best lr (all,\n"
            "                         the default) or each optimizer's best configuration only\n"
            "                         (best: the one with the lowest median final loss at its\n"
            "                         best lr, on each workload; a search's best trial)\n"
            "  --db FILE              database to create or add to (default optbench.db)\n"
            "  --backend B            cpu, cuda or auto (default auto: cuda when a device is present)\n"
            "  --set OWNER.KEY=VALUE  a hyperparameter: adam.beta2=0.95, quadratic.dim=50,\n"
            "                         train.clip_norm=1 (repeatable; OWNER is an optimizer,\n"
            "                         a workload, 'train' for the pipeline settings, or 'all'\n"
            "                         for every optimizer that has the key, whose own setting\n"
            "                         wins: all.filter_bias_and_bn=true; it replaces a config\n"
            "                         file's value; a key once per command)\n"
            "  --sweep OWNER.KEY=V1,V2,...\n"
            "                         sweep a hyperparameter besides the lr: each value is a\n"
            "                         configuration of its own (adam.beta2=0.95,0.999;\n"
            "                         train.clip_norm=0,1; quadratic.cond=100,10000), with its\n"
            "                         own lr sweep and seeds; several sweeps make a grid\n"
            "                         (repeatable; config: 'sweep: {adam: {beta2: [...]}}');\n"
            "                         a range, adam.beta1=0.8..0.99 (uniform), log:1e-5..1e-1\n"
            "                         (log-uniform) or log1m:0.9..0.9999 (1 - value log-uniform),\n"
            "                         is searched with --trials\n"
            "  --trials N             quasi-random search: each optimizer's ranged sweeps, and\n"
            "                         train's (train.warmup_steps=0..100), take N points of a\n"
            "                         scrambled Halton sequence together (N configurations,\n"
            "                         each with its own lr sweep and seeds; default: no search)\n"
            "  --search-seed N        another draw of the search's points (default 0); independent\n"
            "                         searches of the same ranges take different seeds\n"
            "  --search-draws D       the sequence's scrambling: 2 (default, nested), or 1, that\n"
            "                         of searches stored before 2026-12-06 (--resume of such a\n"
            "                         search takes 1 by itself)\n"
            "  --studies K            K independent searches of N trials each, of search seeds\n"
            "                         S, S+1, ... (AlgoPerf's studies): the tuned profile takes,\n"
            "                         on each workload, the median of each one's fastest trial\n"
            "                         (default 1)\n"
            "  --exclude W:O[,O...]   leave the pairs (workload W, optimizer O) out of the matrix\n"
            "                         (repeatable; adds to the config's 'exclude: {W: [O, ...]}')\n"
            "  --name NAME            name of this benchmark in the database (default: the config\n"
            "                         file's name:, else 'optbench')\n"
            "  --dry-run              print the matrix and the parameter routing, run nothing\n"
            "                         (with --resume: which benchmark it would continue, and how\n"
            "                         many cells are finished, to continue and to start)\n"
            "  --print-config         print the effective configuration (config file and flags)\n"
            "                         as YAML that `optbench run FILE` reads, run nothing\n\n"
            "The routing of every workload x optimizer pair is checked before anything runs: a\n"
            "routing rule that fails is bad input. A pair whose optimizer's own lr reaches no\n"
            "parameter (muon on quadratic or rosenbrock: all goes to its AdamW group, whose lr\n"
            "is adamw_lr) gets a warning; leave such pairs out with --exclude.\n\n"
            "surviving faults and sharing the work:\n"
            "  --checkpoint-every N   checkpoint every N steps (default %d; 0: only on a stop)\n"
            "  --checkpoint-keep K    newest checkpoints kept per run (default %d)\n"
            "  --checkpoint-dir DIR   where checkpoints go (default: DB.ckpt/ beside the database)\n"
            "  --resume               continue this matrix in the database: skip finished cells,\n"
            "                         continue interrupted ones from their newest valid checkpoint,\n"
            "                         finish (or, with --confirm-seeds, add or extend) the\n"
            "                         confirmation stage; on a merged database also add the cells\n"
            "                         of a shard that was not merged; a matrix grown from an earlier\n"
            "                         benchmark (another optimizer, more lrs, seeds or trials) keeps\n"
            "                         its runs and runs only the new cells (starts a new benchmark\n"
            "                         when none matches)\n"
            "  --shard K/N            run only the cells whose index is K mod N (default: from\n"
            "                         SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) and\n"
            "                         SLURM_ARRAY_TASK_COUNT when set); a shard skips the\n"
            "                         confirmation stage (merge, then --resume)\n"
            "  --devices 0,1,...      one cell per device at a time, concurrently (default: one\n"
            "                         cell at a time on the backend's first device)\n"
            "  --data-parallel N      each run on N devices (data_parallel, default 1, at most\n"
            "                         16; bert and cnn only): its batch split over them,\n"
            "                         gradients summed (NCCL on CUDA); with --devices, runs\n"
            "                         take N listed devices each\n"
            "  --dump-params DIR      (debugging) write each finished cell's parameters to\n"
            "                         DIR/cell-INDEX.f32\n\n"
            "SIGINT, SIGTERM or SIGHUP (a closed terminal; not under nohup): the current step\n"
            "finishes, the run is checkpointed and marked interrupted, and optbench exits\n"
            "130 / 143 / 129; a second SIGINT stops at once.\n\n"
            "exit status: 0 all cells done or diverged, 1 a cell failed, 2 bad input,\n"
            "130/143/129 stopped by SIGINT/SIGTERM/SIGHUP (continue with --resume)\n",
            OB_CKPT_EVERY_DEFAULT, OB_CKPT_KEEP_DEFAULT);
}

/* The flags of run; value: whether a value follows. */
typedef struct run_flag {
    const char *name;
    int value;
} run_flag;

static const run_flag run_flags[] = {
    {"--workloads", 1},        {"--optimizers", 1},      {"--lrs", 1},           {"--seeds", 1},
    {"--steps", 1},            {"--eval-every", 1},      {"--db", 1},            {"--backend", 1},
    {"--set", 1},              {"--exclude", 1},         {"--name", 1},          {"--dry-run", 0},
    {"--checkpoint-every", 1}, {"--checkpoint-keep", 1}, {"--checkpoint-dir", 1}, {"--resume", 0},
    {"--shard", 1},            {"--devices", 1},         {"--dump-params", 1},   {"--help", 0},
    {"--confirm-seeds", 1},    {"--sweep", 1},           {"--trials", 1},        {"--print-config", 0},
    {"--data-parallel", 1},    {"--confirm-configs", 1}, {"--search-seed", 1},   {"--studies", 1},
    {"--search-draws", 1},
};
#define N_RUN_FLAGS (int)(sizeof run_flags / sizeof run_flags[0])

static const run_flag *find_flag(const char *a)
{
    for (int i = 0; i < N_RUN_FLAGS; i++)
        if (!strcmp(a, run_flags[i].name)) return &run_flags[i];
    return NULL;
}

/* An argument that is an option ("--x", "-x"), not a value or a file. */
static int is_option(const char *a)
{
    return a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.';
}

/* Check the shape of the command line before anything is read: every option
 * is known, and one that takes a value has one (a word starting with "--" is
 * the next option, not a value). *config gets the config file (or NULL). */
/* A word of the command line that is no option, no option's value and no
 * file: a list written with spaces (--optimizers sgd adam), or a name
 * without its flag (run quadratic ...), is not a missing config file.
 * flag is the option whose value came just before the word (or NULL). */
static ob_status stray_word(const char *a, const char *flag, const char *value, ob_err *e)
{
    const char *kind = ob_workload_find(a) ? "workload" : ob_optimizer_find(a) ? "optimizer" : NULL;
    const char *want = ob_workload_find(a) ? "--workloads" : "--optimizers";
    if (kind && flag && !strcmp(flag, want))
        return ob_fail(e, OB_ERR_INPUT, "'%s' is %s %s name, not a config file: lists are comma-separated, without "
                       "spaces (%s %s,%s)", a, kind[0] == 'o' ? "an" : "a", kind, flag, value, a);
    if (kind)
        return ob_fail(e, OB_ERR_INPUT, "'%s' is %s %s name, not a config file: give it with %s (%s %s; lists are "
                       "comma-separated)", a, kind[0] == 'o' ? "an" : "a", kind, want, want, a);
    if (flag && (!strcmp(flag, "--set") || !strcmp(flag, "--sweep") || !strcmp(flag, "--exclude")) &&
        strchr(a, !strcmp(flag, "--exclude") ? ':' : '='))
        return ob_fail(e, OB_ERR_INPUT, "'%s' is not a config file: each setting takes a %s of its own (%s %s)", a,
                       flag, flag, a);
    static const char *const lists[] = {"--workloads", "--optimizers", "--lrs", "--seeds", "--devices"};
    int is_list = 0;
    for (int i = 0; flag && i < (int)(sizeof lists / sizeof lists[0]); i++) is_list |= !strcmp(flag, lists[i]);
    if (is_list)
        return ob_fail(e, OB_ERR_INPUT, "config file '%s' does not exist (run takes one CONFIG.yaml; every other "
                       "argument is an --option; if '%s' belongs to %s, lists are comma-separated: %s %s,%s)", a, a,
                       flag, flag, value, a);
    if (flag && strcmp(flag, "--set") && strcmp(flag, "--sweep") && strcmp(flag, "--exclude"))
        return ob_fail(e, OB_ERR_INPUT, "config file '%s' does not exist (run takes one CONFIG.yaml; every other "
                       "argument is an --option; %s takes one value: if '%s %s' is one, quote it: %s '%s %s')", a,
                       flag, value, a, flag, value, a);
    return ob_fail(e, OB_ERR_INPUT, "config file '%s' does not exist (run takes one CONFIG.yaml; every other "
                   "argument is an --option)", a);
}

/* Whether a word that names no file is meant as a config file: a path or
 * a YAML file's name (which keeps the message of a missing file). */
static int looks_like_config(const char *a)
{
    size_t n = strlen(a);
    return strchr(a, '/') || (n > 5 && !strcmp(a + n - 5, ".yaml")) || (n > 4 && !strcmp(a + n - 4, ".yml"));
}

static ob_status check_args(int argc, char **argv, const char **config, ob_err *e)
{
    *config = NULL;
    const char *valued = NULL; /* the option whose value is argv[i - 1] */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *after = valued;
        valued = NULL;
        if (!is_option(a)) {
            struct stat sb;
            if (stat(a, &sb) != 0 && errno == ENOENT && !looks_like_config(a))
                return stray_word(a, after, after ? argv[i - 1] : NULL, e);
            if (*config)
                return ob_fail(e, OB_ERR_INPUT, "more than one config file given ('%s' and '%s')", *config, a);
            *config = a;
            continue;
        }
        const run_flag *f = find_flag(a);
        if (!f) {
            const char *eq = strchr(a, '=');
            char head[64];
            if (eq && (size_t)(eq - a) < sizeof head) {
                memcpy(head, a, (size_t)(eq - a));
                head[eq - a] = '\0';
                if (find_flag(head) && find_flag(head)->value)
                    return ob_fail(e, OB_ERR_INPUT, "unknown option '%s' (write '%s %s')", a, head, eq + 1);
            }
            /* report's and history's --out, spelling-wise nearer to --set */
            if (!strcmp(a, "--out") || !strncmp(a, "--out=", 6))
                return ob_fail(e, OB_ERR_INPUT, "unknown option '%s' (run writes a database: --db FILE; "
                               "optbench report --db FILE --out DIR writes its tables and figures)", a);
            const char *names[N_RUN_FLAGS];
            for (int k = 0; k < N_RUN_FLAGS; k++) names[k] = run_flags[k].name;
            const char *near = ob_closest_name(a, names, N_RUN_FLAGS);
            if (near) return ob_fail(e, OB_ERR_INPUT, "unknown option '%s' (did you mean '%s'?)", a, near);
            return ob_fail(e, OB_ERR_INPUT, "unknown option '%s' (see optbench run --help)", a);
        }
        if (!f->value) continue;
        if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] == '-'))
            return ob_fail(e, OB_ERR_INPUT, "%s needs a value%s%s%s (see optbench run --help)", a,
                           i + 1 < argc ? "; the next argument '" : "", i + 1 < argc ? argv[i + 1] : "",
                           i + 1 < argc ? "' is an option" : "");
        valued = a;
        i++;
    }
    return OB_OK;
}

/* A whole-number flag value in [lo, hi]. */
static ob_status flag_int(const char *flag, const char *v, int64_t lo, int64_t hi, int64_t *out, ob_err *e)
{
    double d;
    if (ob_parse_double(v, &d) != 0 || d != floor(d) || d < (double)lo)
        return ob_fail(e, OB_ERR_INPUT, "%s '%s': expected a whole number >= %lld", flag, v, (long long)lo);
    if (d > (double)hi)
        return ob_fail(e, OB_ERR_INPUT, "%s '%s': out of range (max %lld)", flag, v, (long long)hi);
    *out = (int64_t)d;
    return OB_OK;
}

/* data_parallel > 1: every workload of the matrix splits its batch into
 * that many parts, and --devices lists whole groups of devices. */
static ob_status check_data_parallel(const ob_config *c, const ob_matrix *m, ob_err *e)
{
    const int dp = c->data_parallel;
    if (dp <= 1) return OB_OK;
    /* where data_parallel was given: a config file's line or the flag */
    char at[300] = "";
    if (c->origin_data_parallel[0]) snprintf(at, sizeof at, "%s: ", c->origin_data_parallel);
    if (c->n_devices > 0 && c->n_devices % dp != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "--devices lists %d devices, and each run takes data_parallel = %d of them: list a "
                       "multiple of %d",
                       c->n_devices, dp, dp);
    for (int i = 0; i < m->n; i++) {
        const ob_cell *cell = &m->cells[i];
        if (!cell->wl->create_replica)
            return ob_fail(e, OB_ERR_INPUT,
                           "%sdata_parallel = %d: workload %s has no batch to split over replicas; leave it "
                           "out, or run it with data_parallel: 1",
                           at, dp, cell->wl->name);
        int64_t b = (int64_t)ob_hp_get(&cell->wl_hp, "batch");
        if (b % dp != 0)
            return ob_fail(e, OB_ERR_INPUT,
                           "%sdata_parallel = %d: workload %s has batch=%lld, which does not split into %d "
                           "equal parts; set %s.batch to a multiple of %d",
                           at, dp, cell->wl->name, (long long)b, dp, cell->wl->name, dp);
    }
    return OB_OK;
}

/* What the lines of a dry run share: the lrs in words, seeds, confirmation plan, whether it sweeps. */
typedef struct dry_plan {
    char lrs[48];  /* "3 lrs", "the lrs of each" or "the lr each trial draws" */
    int lr_search; /* an lr range (--lrs LO..HI with --trials): each trial draws its lr */
    int n_seeds;
    int64_t seed0; /* the confirmation's first seed */
    int pairs;     /* the (workload, optimizer) pairs or configurations */
    int swept;
} dry_plan;

/* The plan of a dry run: its lrs in words, its seeds, the confirmation's pairs and first seed. */
static void dry_plan_make(const ob_config *c, const ob_matrix *m, dry_plan *p)
{
    int n_lr = -1; /* the lrs per optimizer when all have as many, else 0 */
    for (int o = 0; o < c->n_optimizers; o++) {
        const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[o]);
        int k = l ? l->n : 1;
        n_lr = n_lr < 0 || n_lr == k ? k : 0;
    }
    /* an lr range (--lrs LO..HI with --trials): each trial draws its lr */
    p->lr_search = 0;
    for (int o = 0; o < c->n_optimizers; o++) {
        const ob_lr_list *l = ob_config_lrs_for(c, c->optimizers[o]);
        p->lr_search |= l && l->range[0];
    }
    if (p->lr_search) snprintf(p->lrs, sizeof p->lrs, "the lr each trial draws");
    else if (n_lr > 0) snprintf(p->lrs, sizeof p->lrs, "%d lr%s", n_lr, n_lr == 1 ? "" : "s");
    else snprintf(p->lrs, sizeof p->lrs, "the lrs of each");
    p->n_seeds = c->n_seeds ? c->n_seeds : 1;
    p->seed0 = 0;
    p->pairs = ob_matrix_confirm_plan(m, &p->seed0);
    p->swept = 0;
    for (int i = 0; i < c->n_settings; i++) p->swept |= c->settings[i].sweep;
}

/* The first line: the cells and what they are made of, and their steps. */
static void print_matrix_size(const ob_config *c, const ob_matrix *m, const dry_plan *p)
{
    const int n_seeds = p->n_seeds, pairs = p->pairs;
    printf("%d cell%s (", m->n, m->n == 1 ? "" : "s");
    if (p->swept) printf("%d configuration%s of ", pairs, pairs == 1 ? "" : "s");
    printf("%d workload%s x %d optimizer%s", c->n_workloads, c->n_workloads == 1 ? "" : "s", c->n_optimizers,
           c->n_optimizers == 1 ? "" : "s");
    if (p->lr_search && !p->swept) {
        /* the lr searched alone: trials of one configuration each */
        const long long ns = c->studies > 1 ? (long long)c->studies : 1;
        printf(" x %lld trials", (long long)c->trials * ns);
        if (ns > 1) printf(" (%lld studies of %lld)", ns, (long long)c->trials);
        printf(", each at the lr it draws, x %d seed%s", n_seeds, n_seeds == 1 ? "" : "s");
        if (m->n_excluded_pairs)
            printf(", less %d excluded (workload, optimizer) pair%s", m->n_excluded_pairs,
                   m->n_excluded_pairs == 1 ? "" : "s");
        printf(")");
    } else if (p->swept) {
        if (m->n_excluded_pairs)
            printf(" less %d excluded pair%s", m->n_excluded_pairs, m->n_excluded_pairs == 1 ? "" : "s");
        printf(" and the sweeps below, x %s x %d seed%s)", p->lrs, n_seeds, n_seeds == 1 ? "" : "s");
    } else {
        printf(" x %s x %d seed%s", p->lrs, n_seeds, n_seeds == 1 ? "" : "s");
        if (m->n_excluded_pairs)
            printf(", less %d excluded (workload, optimizer) pair%s", m->n_excluded_pairs,
                   m->n_excluded_pairs == 1 ? "" : "s");
        printf(")");
    }
    printf(", %lld steps each\n", (long long)c->steps);
}

/* The configurations confirm_configs best confirms: one per (workload configuration, optimizer). */
static int count_best(const ob_matrix *m)
{
    int n_best = 0;
    for (int i = 0; i < m->n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = m->cells[j].wl == m->cells[i].wl && m->cells[j].wl_variant == m->cells[i].wl_variant &&
                   m->cells[j].opt == m->cells[i].opt;
        n_best += !seen;
    }
    return n_best;
}

/* The confirmation (--confirm-seeds) after the matrix: its seeds and runs. */
static void print_confirmation(const ob_config *c, const ob_matrix *m, const dry_plan *p)
{
    if (c->confirm_seeds <= 0) return;
    const int pairs = p->pairs;
    long long n = (long long)c->confirm_seeds;
    printf("then confirmation: %lld fresh seed%s (", n, n == 1 ? "" : "s");
    if (n == 1) printf("seed %lld", (long long)p->seed0);
    else printf("seeds %lld..%lld", (long long)p->seed0, (long long)p->seed0 + n - 1);
    int n_best = count_best(m);
    if (c->confirm_best && p->swept && n_best < pairs)
        printf(") at the best lr of each optimizer's best configuration on each workload (%d of the %d "
               "configurations, chosen after the sweep: confirm_configs best): up to %lld more runs%s\n",
               n_best, pairs, n * n_best, c->shard_n > 0 ? " (not run by a shard: it needs the whole sweep)" : "");
    else
        printf(") at the best lr of each of %d %s%s: up to %lld more runs%s\n", pairs,
               p->swept ? "configuration" : "pair", pairs == 1 ? "" : "s", n * pairs,
               c->shard_n > 0 ? " (not run by a shard: it needs the whole sweep)" : "");
}

/* The swept settings, one line each with where it was given. */
static void print_sweeps(const ob_config *c)
{
    int any_sweep = 0;
    for (int i = 0; i < c->n_settings; i++)
        if (c->settings[i].sweep) {
            if (!any_sweep++) printf("sweeps (each value a configuration of its own, with its own lrs and seeds):\n");
            printf("  %s.%s = %s  (%s)\n", c->settings[i].owner, c->settings[i].key, c->settings[i].value,
                   c->settings[i].origin);
        }
}

/* The search (--trials) and its studies, when there is one. */
static void print_search(const ob_config *c, int swept)
{
    if (c->trials <= 0) return;
    char seed[64] = "";
    if (c->search_seed) snprintf(seed, sizeof seed, " of seed %lld", (long long)c->search_seed);
    printf("search: %lld trials of each optimizer's %s, drawn together from a scrambled Halton sequence%s  "
           "(%s)\n", (long long)c->trials,
           swept ? "ranged sweeps, train's included (LO..HI above)" : "lr range (--lrs)", seed, c->origin_trials);
    if (c->studies > 1)
        printf("studies: %lld searches of %lld trials each, of search seeds %lld to %lld (AlgoPerf's studies)  "
               "(%s)\n", (long long)c->studies, (long long)c->trials, (long long)c->search_seed,
               (long long)(c->search_seed + c->studies - 1), c->origin_studies);
}

/* The table of this process's cells (its shard's), each with its turn (ob_cells_run_order). */
static void print_cells(const ob_config *c, const ob_matrix *m, int swept)
{
    const ob_cell **mine = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof *mine);
    int *order = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof *order);
    int *turn = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof *turn);
    int n_mine = 0;
    for (int i = 0; mine && i < m->n; i++)
        if (ob_config_in_shard(c, m->cells[i].index)) mine[n_mine++] = &m->cells[i];
    if (mine && order && turn) {
        ob_cells_run_order(mine, n_mine, m->cells, m->n, order);
        for (int t = 0; t < n_mine; t++) turn[order[t]] = t + 1;
    }
    printf("%6s  %5s  %-14s %-10s %-10s %6s%s\n", "cell", "turn", "workload", "optimizer", "lr", "seed",
           swept ? "  configuration" : "");
    if (c->shard_n > 0) printf("shard %d/%d: the cells whose index is %d mod %d\n", c->shard_k, c->shard_n, c->shard_k, c->shard_n);
    for (int k = 0; mine && k < n_mine; k++) {
        const ob_cell *x = mine[k];
        char conf[512] = "";
        if (swept) ob_cell_sweep_text(c, x, OB_SWEEP_ALL, conf, sizeof conf);
        printf("%6lld  %5d  %-14s %-10s %-10g %6lld%s%s\n", (long long)x->index, turn ? turn[k] : 0, x->wl->name,
               x->opt->name, x->lr, (long long)x->seed, swept ? "  " : "", conf);
    }
    printf("(turn: the order the cells run in, seed by seed, optimizers and lrs taking turns)\n");
    free(mine);
    free(order);
    free(turn);
}

static void print_dry_run(const ob_config *c, const ob_matrix *m)
{
    dry_plan p;
    dry_plan_make(c, m, &p);
    print_matrix_size(c, m, &p);
    print_confirmation(c, m, &p);
    print_sweeps(c);
    print_search(c, p.swept);
    print_cells(c, m, p.swept);
    /* Routing: which parameter goes to which group, per workload x optimizer
     * (checked before: this cannot fail on the input) */
    ob_err e;
    ob_err_clear(&e);
    if (ob_matrix_check_routing(c, m, NULL, stdout, &e) != OB_OK) printf("  %s\n", e.msg);
}

/* Can the runs make and write the folder path? Its missing part is made to
 * see, then removed again (deepest first, each only while empty): a refusal
 * later, of the database say, must leave nothing behind, and the runs make
 * the folder when they first write into it. who names the setting. */
static ob_status check_run_folder(const char *path, const char *who, ob_err *e)
{
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", path);
    if (len >= sizeof buf) return ob_fail(e, OB_ERR_INPUT, "folder name too long: '%.60s...'", path);
    while (len > 1 && buf[len - 1] == '/') buf[--len] = '\0';
    /* the first missing prefix ends at buf[miss] ('/' or the end) */
    size_t miss = len + 1;
    struct stat sb;
    for (size_t i = 1; i <= len && miss > len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (stat(buf, &sb) != 0) miss = i;
        buf[i] = c;
    }
    ob_err sub = {0};
    ob_status st = ob_mkdir_p(buf, &sub);
    int err = 0;
    if (st == OB_OK && access(buf, W_OK | X_OK) != 0) err = errno;
    if (st == OB_OK && miss <= len) {
        /* remove what was made: the whole path, then each parent up to the
         * first one that was missing */
        for (size_t i = len;; i--) {
            if (buf[i] == '/' || buf[i] == '\0') {
                char c = buf[i];
                buf[i] = '\0';
                int gone = rmdir(buf) == 0;
                buf[i] = c;
                if (!gone || i <= miss) break;
            }
            if (i == 0) break;
        }
    }
    if (st != OB_OK)
        return ob_fail(e, OB_ERR_INPUT, "%s; give %s a folder that can be written", sub.msg, who);
    if (err)
        return ob_fail(e, OB_ERR_INPUT, "cannot write into '%s': %s; give %s a folder that can be written", path,
                       strerror(err), who);
    return OB_OK;
}

/* A whole-number flag value in [lo, hi] into an int. */
static ob_status flag_small_int(const char *flag, const char *v, int64_t lo, int64_t hi, int *out, ob_err *e)
{
    int64_t x = 0;
    OB_TRY(flag_int(flag, v, lo, hi, &x, e));
    *out = (int)x;
    return OB_OK;
}

/* A folder flag's value into dst (n bytes): not empty, and short enough to
 * leave 64 bytes for the names the runs write under it. */
static ob_status flag_folder(const char *flag, const char *v, char *dst, size_t n, ob_err *e)
{
    if (!*v || strlen(v) >= n - 64) return ob_fail(e, OB_ERR_INPUT, "%s '%s': empty or too long", flag, v);
    snprintf(dst, n, "%s", v);
    return OB_OK;
}

/* --db's value into cfg: not empty, and short enough for the names kept
 * beside it. */
static ob_status flag_db(ob_config *cfg, const char *v, ob_err *e)
{
    if (!*v)
        return ob_fail(e, OB_ERR_INPUT, "--db is empty: give the database file (e.g. --db results.db), or "
                       "leave --db out for ./optbench.db");
    if (strlen(v) >= sizeof cfg->db - 64) /* room for DB.ckpt/run-N/... beside it */
        return ob_fail(e, OB_ERR_INPUT, "--db: the path is %zu bytes long; at most %zu (give a shorter path)",
                       strlen(v), sizeof cfg->db - 65);
    snprintf(cfg->db, sizeof cfg->db, "%s", v);
    return OB_OK;
}

/* --backend's value into cfg: cpu, cuda or auto. */
static ob_status flag_backend(ob_config *cfg, const char *v, ob_err *e)
{
    if (strcmp(v, "cpu") && strcmp(v, "cuda") && strcmp(v, "auto"))
        return ob_fail(e, OB_ERR_INPUT, "--backend '%s': use cpu, cuda or auto", v);
    snprintf(cfg->backend, sizeof cfg->backend, "%s", v);
    return OB_OK;
}

/* The whole-number flags, each with its range; those whose origin is kept
 * record the flag's name there before the value is read (--data-parallel's
 * once it is read). 1 when a is one of them, its status in *s; else 0. */
static int apply_number_flag(ob_config *cfg, const char *a, const char *v, ob_err *e, ob_status *s)
{
    const struct {
        const char *name;
        int64_t lo, hi;
        int64_t *out;
        char (*origin)[256]; /* NULL: not kept */
    } flags[] = {
        {"--steps", 1, OB_CFG_MAX_STEPS, &cfg->steps, NULL},
        {"--eval-every", 0, OB_CFG_MAX_STEPS, &cfg->eval_every, NULL},
        {"--confirm-seeds", 0, OB_CFG_MAX_CONFIRM, &cfg->confirm_seeds, &cfg->origin_confirm},
        {"--search-seed", 0, OB_CFG_MAX_SEED, &cfg->search_seed, &cfg->origin_search_seed},
        {"--search-draws", 1, OB_SEARCH_DRAWS, &cfg->search_draws, &cfg->origin_search_draws},
        {"--studies", 1, OB_MAX_STUDIES, &cfg->studies, &cfg->origin_studies},
        {"--trials", 1, OB_MAX_TRIALS, &cfg->trials, &cfg->origin_trials},
        {"--checkpoint-every", 0, OB_CFG_MAX_STEPS, &cfg->checkpoint_every, NULL},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (strcmp(a, flags[i].name)) continue;
        if (flags[i].origin) snprintf(*flags[i].origin, sizeof *flags[i].origin, "%s", flags[i].name);
        *s = flag_int(a, v, flags[i].lo, flags[i].hi, flags[i].out, e);
        return 1;
    }
    if (!strcmp(a, "--checkpoint-keep")) {
        *s = flag_small_int(a, v, 1, 100, &cfg->checkpoint_keep, e);
    } else if (!strcmp(a, "--data-parallel")) {
        *s = flag_small_int(a, v, 1, OB_CFG_MAX_REPLICAS, &cfg->data_parallel, e);
        if (*s == OB_OK) snprintf(cfg->origin_data_parallel, sizeof cfg->origin_data_parallel, "--data-parallel");
    } else {
        return 0;
    }
    return 1;
}

/* The matrix's lists, which replace the config file's: --workloads,
 * --optimizers (both keeping the flag as their origin), --lrs and --seeds.
 * 1 when a is one of them, its status in *s; else 0. */
static int apply_list_flag(ob_config *cfg, const char *a, const char *v, ob_err *e, ob_status *s)
{
    if (!strcmp(a, "--workloads")) {
        snprintf(cfg->origin_workloads, sizeof cfg->origin_workloads, "--workloads");
        *s = ob_config_set_names(cfg->workloads, &cfg->n_workloads, v, "workloads", "--workloads", e);
    } else if (!strcmp(a, "--optimizers")) {
        snprintf(cfg->origin_optimizers, sizeof cfg->origin_optimizers, "--optimizers");
        *s = ob_config_set_names(cfg->optimizers, &cfg->n_optimizers, v, "optimizers", "--optimizers", e);
    } else if (!strcmp(a, "--lrs")) {
        /* the flag replaces every list of the file */
        cfg->n_lr_lists = 1;
        memset(&cfg->lrs[0], 0, sizeof cfg->lrs[0]);
        *s = ob_config_set_lrs(&cfg->lrs[0], v, "--lrs", e);
    } else if (!strcmp(a, "--seeds")) {
        *s = ob_config_set_seeds(cfg, v, 0, "--seeds", e);
    } else {
        return 0;
    }
    return 1;
}

/* The flags whose value ob_config reads as it reads the file's, with the
 * flag as its origin (--confirm-configs also keeps it in its origin first).
 * 1 when a is one of them, its status in *s; else 0. */
static int apply_setting_flag(ob_config *cfg, const char *a, const char *v, ob_err *e, ob_status *s)
{
    const struct {
        const char *name;
        ob_status (*set)(ob_config *c, const char *value, const char *origin, ob_err *e);
        char (*origin)[256]; /* NULL: not kept */
    } flags[] = {
        {"--confirm-configs", ob_config_set_confirm_configs, &cfg->origin_confirm_configs},
        {"--set", ob_config_add_set, NULL},
        {"--sweep", ob_config_add_sweep, NULL},
        {"--name", ob_config_set_name, NULL},
        {"--exclude", ob_config_add_exclude_text, NULL},
        {"--shard", ob_config_set_shard, NULL},
        {"--devices", ob_config_set_devices, NULL},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (strcmp(a, flags[i].name)) continue;
        if (flags[i].origin) snprintf(*flags[i].origin, sizeof *flags[i].origin, "%s", flags[i].name);
        *s = flags[i].set(cfg, v, flags[i].name, e);
        return 1;
    }
    return 0;
}

/* One flag of the command line with its value v (a flag that takes one)
 * into cfg. */
static ob_status apply_flag(ob_config *cfg, const char *a, const char *v, ob_err *e)
{
    ob_status s = OB_OK;
    if (apply_list_flag(cfg, a, v, e, &s) || apply_number_flag(cfg, a, v, e, &s) ||
        apply_setting_flag(cfg, a, v, e, &s))
        return s;
    if (!strcmp(a, "--db")) return flag_db(cfg, v, e);
    if (!strcmp(a, "--backend")) return flag_backend(cfg, v, e);
    if (!strcmp(a, "--checkpoint-dir")) return flag_folder(a, v, cfg->checkpoint_dir, sizeof cfg->checkpoint_dir, e);
    if (!strcmp(a, "--dump-params")) return flag_folder(a, v, cfg->dump_params, sizeof cfg->dump_params, e);
    return ob_fail(e, OB_ERR_INPUT, "unknown option '%s' (see optbench run --help)", a);
}

/* The command line into cfg: the config file it names first, then its
 * flags, so that flags override the file whatever their order. */
static ob_status read_command_line(int argc, char **argv, ob_config *cfg, int *dry, int *print_config, ob_err *e)
{
    const char *config = NULL;
    OB_TRY(check_args(argc, argv, &config, e));
    if (config) OB_TRY(ob_config_load_file(cfg, config, e));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!is_option(a)) continue;
        if (!strcmp(a, "--dry-run")) *dry = 1;
        else if (!strcmp(a, "--print-config")) *print_config = 1;
        else if (!strcmp(a, "--resume")) cfg->resume = 1;
        else OB_TRY(apply_flag(cfg, a, argv[++i], e));
    }
    if (*dry && *print_config)
        return ob_fail(e, OB_ERR_INPUT, "--dry-run and --print-config print different things (the matrix; the "
                       "effective configuration as YAML, to save as a file): give one");
    if (!cfg->db[0]) snprintf(cfg->db, sizeof cfg->db, "optbench.db");
    return OB_OK;
}

/* The matrix of cfg, checked whole before anything is written: every
 * pair's routing, data parallelism, and (--resume of a search an earlier
 * build stored) its draws. On failure m holds nothing. */
static ob_status build_matrix(ob_config *cfg, ob_matrix *m, ob_err *e)
{
    OB_TRY(ob_matrix_expand(cfg, m, stderr, e));
    ob_status s = ob_matrix_check_routing(cfg, m, stderr, NULL, e);
    if (s == OB_OK) s = check_data_parallel(cfg, m, e);
    if (s == OB_OK) s = ob_resume_search_draws(cfg, m, e);
    if (s != OB_OK) ob_matrix_free(m);
    return s;
}

/* Notes on the configuration as it will run: the shard, an eval_every past
 * the steps, --devices on the CPU. With --devices, an auto backend is
 * chosen here, one for every device. */
static void note_setup(ob_config *cfg, int from_env, int dry)
{
    if (cfg->shard_n > 0)
        fprintf(stderr, "optbench: shard %d/%d%s: the cells whose index is %d mod %d\n", cfg->shard_k, cfg->shard_n,
                from_env ? " (from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT)" : "", cfg->shard_k, cfg->shard_n);
    if (cfg->n_devices > 0 && !strcmp(cfg->backend, "auto")) {
        /* one backend for every device: take it now */
        const ob_backend_ops *cu = ob_cuda_backend_ops();
        char d[256];
        snprintf(cfg->backend, sizeof cfg->backend, "%s",
                 cu && cu->probe(cfg->devices[0], d, sizeof d) ? "cuda" : "cpu");
    }
    if (cfg->eval_every > cfg->steps)
        fprintf(stderr,
                "optbench: note: eval_every %lld is more than the %lld steps of a run: each run is evaluated at "
                "its end only (as eval_every 0)\n", (long long)cfg->eval_every, (long long)cfg->steps);
    if (cfg->n_devices > 0 && !strcmp(cfg->backend, "cpu") && !dry)
        fprintf(stderr,
                "optbench: note: --devices with the cpu backend: %d cells at a time share the CPU cores, each on "
                "its share of the threads, which its runs record as their device (the cpu backend has one device; "
                "each listed index is one more worker; a result's bits follow its thread count)\n",
                cfg->n_devices / (cfg->data_parallel > 1 ? cfg->data_parallel : 1));
}

/* The checkpoints' folder: a file in its place would fail only at the first
 * checkpoint, after runs were stored. */
static ob_status check_checkpoint_place(const ob_config *cfg, ob_err *e)
{
    char ck[1200];
    if (cfg->checkpoint_dir[0]) snprintf(ck, sizeof ck, "%s", cfg->checkpoint_dir);
    else snprintf(ck, sizeof ck, "%s.ckpt", cfg->db);
    struct stat sb;
    if (stat(ck, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return ob_fail(e, OB_ERR_INPUT, "the checkpoints' folder '%s' is a file: give another checkpoint_dir "
                       "(--checkpoint-dir DIR), or move the file", ck);
    return OB_OK;
}

/* --dry-run: the matrix, and with --resume what it would do with the
 * database (read only). */
static ob_status dry_run(const ob_config *cfg, const ob_matrix *m, ob_err *e)
{
    print_dry_run(cfg, m);
    if (!cfg->resume) return OB_OK;
    struct stat sb;
    if (stat(cfg->db, &sb) != 0) {
        printf("--resume: no database '%s' yet; it would start a new benchmark\n", cfg->db);
        return OB_OK;
    }
    if (ob_store_empty(cfg->db)) {
        printf("--resume: database '%s' holds no results yet (a run stopped as it created it); it would "
               "start a new benchmark\n", cfg->db);
        return OB_OK;
    }
    ob_store *st = NULL;
    char line[1400];
    ob_status s = ob_store_open(cfg->db, OB_STORE_READONLY, &st, e);
    if (s == OB_OK) s = ob_run_resume_preview(cfg, m, st, line, sizeof line, e);
    if (s == OB_OK) printf("%s\n", line);
    ob_store_close(st);
    return s;
}

/* The folders the runs write into, tried now: one that cannot be made is
 * bad input before anything is stored, not runs failed or stopped midway. */
static ob_status check_run_folders(const ob_config *cfg, ob_err *e)
{
    if (cfg->checkpoint_dir[0])
        OB_TRY(check_run_folder(cfg->checkpoint_dir,
                                "the checkpoints (--checkpoint-dir, or checkpoint_dir in a config)", e));
    if (cfg->dump_params[0]) OB_TRY(check_run_folder(cfg->dump_params, "--dump-params", e));
    return OB_OK;
}

/* The device the cells run on (with --devices, the first is opened to
 * check it, said, and closed: each worker opens its own). */
static ob_status open_device(const ob_config *cfg, const char *asked, ob_device *dev, ob_err *e)
{
    memset(dev, 0, sizeof *dev);
    int first_dev = cfg->n_devices > 0 ? cfg->devices[0] : 0;
    OB_TRY(ob_device_open(dev, cfg->backend, first_dev, e));
    if (cfg->n_devices > 0) {
        fprintf(stderr, "optbench: backend %s -> %s, devices", asked, dev->ops->name);
        for (int i = 0; i < cfg->n_devices; i++) fprintf(stderr, "%s%d", i ? "," : " ", cfg->devices[i]);
        fprintf(stderr, " (%s)\n", dev->desc);
        ob_device_close(dev);
    }
    return OB_OK;
}

/* The run's banner, once the database is open: the device, the matrix. */
static void print_banner(const ob_config *cfg, const ob_matrix *m, const char *asked, const ob_device *dev)
{
    if (cfg->n_devices == 0)
        fprintf(stderr, "optbench: backend %s -> %s (%s)\n", cfg->backend, dev->ops->name, dev->desc);
    if (!strcmp(asked, "auto") && ob_cuda_backend_built() && !ob_cuda_backend_ops())
        fprintf(stderr, "optbench: note: %s\n", ob_cuda_backend_missing());
    fprintf(stderr, "optbench: %d cell%s, %lld steps each, into %s\n", m->n, m->n == 1 ? "" : "s",
            (long long)cfg->steps, cfg->db);
    if (cfg->data_parallel > 1)
        fprintf(stderr, "optbench: each run on %d data-parallel replicas%s\n", cfg->data_parallel,
                cfg->n_devices == 0 && !strcmp(dev->ops->name, "cpu") ? " (on the CPU one after another: no faster)"
                                                                      : "");
}

/* The last lines: what became of the cells, and the command to report. */
static void print_summary(const ob_config *cfg, const ob_run_summary *sum)
{
    fprintf(stderr, "optbench: %d done, %d diverged, %d failed", sum->done, sum->diverged, sum->failed);
    if (sum->skipped) fprintf(stderr, ", %d finished before", sum->skipped);
    if (sum->resumed) fprintf(stderr, ", %d continued from a checkpoint", sum->resumed);
    if (sum->restarted) fprintf(stderr, ", %d started over (no usable checkpoint)", sum->restarted);
    if (sum->retried) fprintf(stderr, ", %d failed before and run again", sum->retried);
    if (sum->busy) fprintf(stderr, ", %d run by another process", sum->busy);
    fprintf(stderr, "; benchmark %lld in %s\n", (long long)sum->bench_id, cfg->db);
    if (sum->on_busy_machine)
        fprintf(stderr, "optbench: note: %d of the runs met a busy machine: other processes kept %.0f%% or more of "
                        "its CPUs busy (up to %.0f%%; runs.other_cpu), so their step times are that work's as "
                        "much as the optimizers'; compare leaves them out, and report and history time an optimizer "
                        "by its runs on a quiet machine where it has some\n",
                sum->on_busy_machine, 100 * OB_BUSY_SHARE, 100 * sum->busy_most);
    /* a command to paste: the path quoted for a shell where it needs it */
    int plain = cfg->db[0] != '\0';
    for (const char *p = cfg->db; *p && plain; p++) plain = isalnum((unsigned char)*p) || strchr("_./-+:,=@%", *p);
    fprintf(stderr, "optbench: next: optbench report --db ");
    if (plain) fputs(cfg->db, stderr);
    else {
        fputc('\'', stderr);
        for (const char *p = cfg->db; *p; p++) *p == '\'' ? fputs("'\\''", stderr) : fputc(*p, stderr);
        fputc('\'', stderr);
    }
    fprintf(stderr, " --out report/\n");
}

/* The matrix run on the device into the database: the exit status (that of
 * a stopping signal, 1 when a cell failed), or -1 with e set. */
static int run_it(ob_config *cfg, ob_matrix *m, const char *asked, ob_err *e)
{
    ob_device dev;
    if (open_device(cfg, asked, &dev, e) != OB_OK) return -1;
    ob_store *store = NULL;
    if (ob_store_open(cfg->db, OB_STORE_CREATE, &store, e) != OB_OK) {
        if (cfg->n_devices == 0) ob_device_close(&dev);
        return -1;
    }
    print_banner(cfg, m, asked, &dev);
    ob_run_summary sum;
    ob_signals_install();
    ob_status s = ob_run_matrix(cfg, m, cfg->n_devices > 0 ? NULL : &dev, store, &sum, e);
    /* after a stop the handlers stay until the last line is out: a second
     * SIGTERM (a batch system may send two) must not cut it short */
    if (!(s == OB_ERR_INTERRUPTED && sum.stop_signal)) ob_signals_restore();
    ob_store_close(store);
    if (cfg->n_devices == 0) ob_device_close(&dev);
    if (s == OB_ERR_INTERRUPTED && sum.stop_signal) {
        ob_cli_error(1, "%s", e->msg);
        ob_signals_restore();
        return ob_signal_exit_code(sum.stop_signal);
    }
    ob_signals_restore();
    if (s != OB_OK) return -1;
    print_summary(cfg, &sum);
    return sum.failed ? 1 : 0;
}

int ob_cmd_run(int argc, char **argv)
{
    static const char *const single[] = {"--workloads", "--optimizers", "--lrs", "--seeds", "--steps",
                                         "--eval-every", "--confirm-seeds", "--confirm-configs", "--trials",
                                         "--search-seed", "--search-draws", "--studies",
                                         "--db", "--backend", "--name",
                                         "--checkpoint-every", "--checkpoint-keep", "--checkpoint-dir", "--shard",
                                         "--devices", "--data-parallel", "--dump-params"};
    ob_cli_once(NULL, argc, argv, single, OB_CLI_COUNT(single));
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout);
            return 0;
        }
    ob_config cfg;
    ob_config_init(&cfg);
    ob_err e;
    ob_err_clear(&e);
    int dry = 0, print_config = 0, from_env = 0, rc = -1;
    ob_matrix m;
    if (read_command_line(argc, argv, &cfg, &dry, &print_config, &e) != OB_OK ||
        ob_config_shard_from_env(&cfg, &from_env, &e) != OB_OK || build_matrix(&cfg, &m, &e) != OB_OK)
        goto out;
    if (print_config) {
        char *y = NULL;
        ob_matrix_free(&m);
        if (ob_config_to_yaml(&cfg, &y, &e) == OB_OK) {
            fputs(y, stdout);
            rc = 0;
        }
        free(y);
        goto out;
    }
    char asked[sizeof cfg.backend]; /* as given, for the banner: "auto -> cuda" */
    snprintf(asked, sizeof asked, "%s", cfg.backend);
    note_setup(&cfg, from_env, dry);
    if (check_checkpoint_place(&cfg, &e) == OB_OK) {
        if (dry) rc = dry_run(&cfg, &m, &e) == OB_OK ? 0 : -1;
        else if (check_run_folders(&cfg, &e) == OB_OK) rc = run_it(&cfg, &m, asked, &e);
    }
    ob_matrix_free(&m);
out:
    ob_config_free(&cfg);
    return rc >= 0 ? rc : ob_cli_error(ob_exit_code(e.status), "%s", e.msg);
}

/* ---- list ------------------------------------------------------------------ */

typedef struct list_widths {
    int name, value, kind;
} list_widths;

static const char *hp_kind(const ob_hp_def *d)
{
    switch (d->kind) {
    case OB_HP_BOOL: return "bool";
    case OB_HP_INT: return "int";
    case OB_HP_ENUM: return "enum";
    default: return "float";
    }
}

static void widen(list_widths *w, const char *name, const char *value, const char *kind)
{
    int n = (int)strlen(name), v = (int)strlen(value), k = (int)strlen(kind);
    if (n > w->name) w->name = n;
    if (v > w->value) w->value = v;
    if (k > w->kind) w->kind = k;
}

static void widen_hparams(list_widths *w, const ob_hp_def *d, int n)
{
    for (int i = 0; i < n; i++) {
        char v[64];
        ob_hp_format(&d[i], d[i].def, v, sizeof v);
        widen(w, d[i].name, v, hp_kind(&d[i]));
    }
}

static void print_row(const list_widths *w, const char *name, const char *value, const char *kind,
                      const char *choices, const char *help)
{
    printf("      %-*s  %-*s  %-*s  %s%s%s%s\n", w->name, name, w->value, value, w->kind, kind,
           choices ? "one of " : "", choices ? choices : "", choices && help && *help ? "; " : "", help ? help : "");
}

static void print_hparams(const list_widths *w, const ob_hp_def *d, int n)
{
    for (int i = 0; i < n; i++) {
        char v[64];
        ob_hp_format(&d[i], d[i].def, v, sizeof v);
        print_row(w, d[i].name, v, hp_kind(&d[i]), d[i].kind == OB_HP_ENUM ? d[i].choices : NULL, d[i].help);
    }
}

/* The text settings of an optimizer (set with --set, not numbers): route
 * where it has more than one group, and those of d->options. */
static int text_settings(const ob_optimizer_def *d, char (*names)[64], const char **helps, int max, char *groups,
                         size_t gn)
{
    int n = 0;
    groups[0] = '\0';
    for (int g = 0; d->groups && d->groups[g]; g++)
        snprintf(groups + strlen(groups), gn - strlen(groups), "%s%s", g ? ", " : "", d->groups[g]);
    if (d->groups && d->groups[0] && d->groups[1] && n < max) {
        snprintf(names[n], sizeof names[n], "route");
        helps[n++] = "a rule 'MATCH -> GROUP', tried before the default routing (repeatable; a list in a config)";
    }
    char opts[256];
    snprintf(opts, sizeof opts, "%s", d->options ? d->options : "");
    char *save = NULL;
    for (char *k = strtok_r(opts, ",", &save); k && n < max; k = strtok_r(NULL, ",", &save)) {
        snprintf(names[n], sizeof names[n], "%s", k);
        helps[n++] = !strcmp(k, "coeff_file")
                         ? "TSV file of Newton-Schulz coefficients per matrix shape, tried before the built-in "
                           "table (e.g. configs/root_coeffs.example.tsv)"
                         : "text setting";
    }
    return n;
}

/* Whether section `name` is listed: all when no names were given. */
static int listed(char *const *names, int n, const char *name)
{
    if (n == 0) return 1;
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

/* list's arguments: the names into only (*n_only of them); -1 to go on,
 * else the exit status (0 after --help). */
static int list_args(int argc, char **argv, char **only, int *n_only)
{
    *n_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: optbench list [NAME...]\n\nPrints every workload and optimizer with its hyperparameters\n"
                   "(name, default, type, meaning), the text settings of the optimizers that have\n"
                   "them (route, coeff_file), each optimizer's state size per parameter, and the\n"
                   "training settings. NAMEs (workloads, optimizers, or 'train' for the training\n"
                   "settings) list only those: optbench list lamb lars train\n");
            return 0;
        }
        if (is_option(argv[i]))
            return ob_cli_error(2, "unknown option '%s' (optbench list takes none but --help)", argv[i]);
        if (!ob_workload_find(argv[i]) && !ob_optimizer_find(argv[i]) && strcmp(argv[i], "train")) {
            int nw, no;
            const ob_workload_def *const *w = ob_workloads(&nw);
            const ob_optimizer_def *const *o = ob_optimizers(&no);
            const char *known[129];
            int nk = 0;
            for (int k = 0; k < nw && nk < 64; k++) known[nk++] = w[k]->name;
            for (int k = 0; k < no && nk < 128; k++) known[nk++] = o[k]->name;
            known[nk++] = "train";
            ob_err e;
            ob_fail_unknown(&e, "workload or optimizer", argv[i], known, nk);
            return ob_cli_error(2, "list: %s", e.msg);
        }
        only[(*n_only)++] = argv[i];
    }
    return -1;
}

/* One set of column widths for the whole listing. */
static list_widths list_all_widths(const ob_workload_def *const *w, int nw, const ob_optimizer_def *const *o, int no)
{
    list_widths lw = {0, 0, 0};
    widen(&lw, "name", "default", "type");
    for (int i = 0; i < nw; i++) widen_hparams(&lw, w[i]->hp, w[i]->n_hp);
    for (int i = 0; i < no; i++) {
        widen_hparams(&lw, o[i]->hp, o[i]->n_hp);
        char names[8][64];
        const char *helps[8];
        char groups[256];
        int nt = text_settings(o[i], names, helps, 8, groups, sizeof groups);
        for (int k = 0; k < nt; k++) widen(&lw, names[k], "-", "text");
    }
    widen_hparams(&lw, ob_train_hp_defs, ob_train_hp_count);
    return lw;
}

/* One optimizer's entry: its summary, state, hyperparameters and text settings. */
static void list_optimizer(const list_widths *lw, const ob_optimizer_def *od)
{
    ob_hp_values hv;
    ob_hp_defaults(&hv, od->hp, od->n_hp);
    double sp = od->state_per_param ? od->state_per_param(&hv) : NAN;
    printf("  %s - %s\n", od->name, od->summary);
    if (isfinite(sp))
        printf("      state: %g float%s per parameter (%g bytes) with the defaults\n", sp, sp == 1 ? "" : "s", sp * 4);
    else if (od->state_text)
        printf("      state: %s\n", od->state_text);
    print_hparams(lw, od->hp, od->n_hp);
    char names[8][64];
    const char *helps[8];
    char groups[256];
    int nt = text_settings(od, names, helps, 8, groups, sizeof groups);
    for (int k = 0; k < nt; k++) {
        char help[512];
        if (!strcmp(names[k], "route"))
            snprintf(help, sizeof help, "%s; groups: %s", helps[k], groups);
        else
            snprintf(help, sizeof help, "%s", helps[k]);
        print_row(lw, names[k], "-", "text", NULL, help);
    }
    printf("\n");
}

int ob_cmd_list(int argc, char **argv)
{
    char **only = argv + 1;
    int n_only, rc = list_args(argc, argv, only, &n_only);
    if (rc >= 0) return rc;
    int nw, no;
    const ob_workload_def *const *w = ob_workloads(&nw);
    const ob_optimizer_def *const *o = ob_optimizers(&no);
    const list_widths lw = list_all_widths(w, nw, o, no);
    int any = 0;
    for (int i = 0; i < nw; i++) any |= listed(only, n_only, w[i]->name);
    if (any) {
        printf("WORKLOADS (set with --set WORKLOAD.KEY=VALUE)\n\n");
        print_row(&lw, "name", "default", "type", NULL, "meaning");
        printf("\n");
    }
    for (int i = 0; i < nw; i++) {
        if (!listed(only, n_only, w[i]->name)) continue;
        printf("  %s - %s\n", w[i]->name, w[i]->summary);
        print_hparams(&lw, w[i]->hp, w[i]->n_hp);
        printf("\n");
    }
    any = 0;
    for (int i = 0; i < no; i++) any |= listed(only, n_only, o[i]->name);
    if (any) {
        printf("OPTIMIZERS (set with --set OPTIMIZER.KEY=VALUE, or all.KEY=VALUE for every optimizer that has KEY; state "
               "= floats kept per parameter)\n\n");
        print_row(&lw, "name", "default", "type", NULL, "meaning");
        printf("\n");
    }
    for (int i = 0; i < no; i++)
        if (listed(only, n_only, o[i]->name)) list_optimizer(&lw, o[i]);
    if (listed(only, n_only, "train")) {
        printf("TRAINING SETTINGS (set with --set train.KEY=VALUE or 'train:' in the config)\n\n");
        print_row(&lw, "name", "default", "type", NULL, "meaning");
        print_hparams(&lw, ob_train_hp_defs, ob_train_hp_count);
    }
    return 0;
}
