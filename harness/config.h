/* harness/config.h - what to run: the benchmark configuration.
 *
 * A configuration comes from a YAML file (libyaml), from flags, or both
 * (flags override the file). It names the matrix (workloads x optimizers x
 * learning rates x seeds), the run length, the backend and the database, and
 * carries hyperparameter settings addressed as OWNER.KEY where OWNER is an
 * optimizer, a workload or `train` (the pipeline settings). Every setting
 * remembers where it came from (file:line or the flag) for error messages.
 *
 * YAML form (every key optional except what the flags do not give):
 *   name: nightly
 *   workloads: [quadratic, rosenbrock]      # or "quadratic,rosenbrock"
 *   optimizers: [sgd, adam]
 *   lrs: [0.001, 0.01, 0.1]                 # or per optimizer: {sgd: [0.1], adam: [0.001]}
 *   seeds: 3                                # 0,1,2; or a list [4, 9]
 *   steps: 200
 *   eval_every: 50
 *   backend: auto                           # cpu | cuda | auto
 *   db: results.db
 *   hparams: {adam: {beta2: 0.95}}          # per optimizer
 *   workload_params: {quadratic: {dim: 50}} # per workload
 *   train: {clip_norm: 1.0}                 # pipeline settings for every run
 *   checkpoint_every: 1000                  # steps between checkpoints (0: only on a stop)
 *   checkpoint_keep: 2                      # newest checkpoints kept per run
 *   checkpoint_dir: ckpt/                   # default: DB.ckpt/ beside the database
 *   exclude: {quadratic: [muon, root]}      # (workload, optimizer) pairs left out
 *   confirm_seeds: 5                        # then 5 fresh seeds at each pair's best lr
 *   confirm_configs: best                   # ... of each optimizer's best configuration only
 *   sweep: {adam: {beta2: [0.95, 0.999]}}   # more configurations: each value, or with
 *   trials: 16                              # ranges (beta1: 0.8..0.99), 16 points of a
 *                                           # quasi-random search (harness/search.h)
 *   search_seed: 1                          # another draw of the search's points
 *   search_draws: 1                         # the scrambling of searches stored before 2026-12-06
 *   studies: 3                              # 3 searches (seeds search_seed, +1, +2): AlgoPerf's studies
 *   data_parallel: 2                        # devices per run, its batch split over them
 * Resume, sharding and devices are flags only (--resume, --shard K/N,
 * --devices 0,1); with no --shard, Slurm's SLURM_ARRAY_TASK_ID and
 * SLURM_ARRAY_TASK_COUNT give the shard (ob_config_shard_from_env).
 */
#ifndef OB_HARNESS_CONFIG_H
#define OB_HARNESS_CONFIG_H

#include <stdint.h>

#include "core/ob.h"

#define OB_CFG_MAX_LIST 64
#define OB_CFG_MAX_SETTINGS 256
#define OB_CFG_MAX_DEVICES 64
#define OB_CFG_MAX_REPLICAS 16           /* data_parallel */
#define OB_CKPT_EVERY_DEFAULT 1000
#define OB_CKPT_KEEP_DEFAULT 2
#define OB_CFG_MAX_EXCLUDES 128
#define OB_CFG_MAX_STEPS 1000000000000LL    /* steps, eval_every, checkpoint_every */
#define OB_CFG_MAX_SEED 9000000000000000LL  /* seeds are exact in a double below 2^53 */
#define OB_CFG_MAX_CONFIRM 1000             /* confirm_seeds */
#define OB_MAX_TRIALS 4096                  /* trials (= OB_MAX_CONFIGURATIONS of an optimizer) */
#define OB_MAX_STUDIES 64                   /* studies: searches of other seeds (trials x studies <= OB_MAX_TRIALS) */

typedef struct ob_setting {
    char owner[64];
    char key[64];
    char value[256];  /* a sweep: its values, comma-separated */
    char origin[256]; /* "config.yaml:12" or "--set" */
    int sweep;        /* 1: swept (--sweep, 'sweep:'): the matrix runs each value */
    int flag;         /* 1: given on the command line (--set, --sweep), 0: by a config file */
} ob_setting;

typedef struct ob_lr_list {
    char optimizer[64]; /* "" for the global list */
    int n;
    double v[OB_CFG_MAX_LIST];
    char origin[256];
    char range[128];    /* "" or a range ("log:1e-4..1e-1"): with trials each configuration draws its one lr
                         * in the quasi-random search (n 1, v[0] the range's low end) */
} ob_lr_list;

/* A (workload, optimizer) pair left out of the matrix. */
typedef struct ob_exclude {
    char workload[64];
    char optimizer[64];
    char origin[256];
} ob_exclude;

typedef struct ob_config {
    char name[128];
    char path[1024];            /* config file, "" when flags only */
    char *text;                 /* the config file's text (stored with the benchmark) */
    int n_workloads, n_optimizers, n_seeds, n_lr_lists;
    char workloads[OB_CFG_MAX_LIST][64];
    char optimizers[OB_CFG_MAX_LIST][64];
    int64_t seeds[OB_CFG_MAX_LIST];
    ob_lr_list lrs[OB_CFG_MAX_LIST]; /* [0] may be the global list */
    int64_t steps;
    int64_t eval_every;         /* 0: at the end only */
    int64_t confirm_seeds;      /* > 0: after the sweep, this many fresh seeds at each pair's best lr */
    char origin_confirm[256];
    int confirm_best;           /* 1: the confirmation stage runs only each optimizer's best configuration
                                 * (confirm_configs: best), not every configuration's best lr */
    char origin_confirm_configs[256];
    int64_t trials;             /* > 0: points of the quasi-random search over ranged sweeps (harness/search.h) */
    char origin_trials[256];
    int64_t search_seed;        /* the search's sequence (0: the fixed one; another seed, other points) */
    char origin_search_seed[256];
    int64_t search_draws;       /* the scrambling's version (harness/search.h): 0 unset, this build's
                                 * (OB_SEARCH_DRAWS, 2); 1: that of searches stored before 2026-12-06,
                                 * which --resume takes by itself for such a benchmark */
    char origin_search_draws[256];
    int64_t studies;            /* > 1: that many searches, study s of search seed search_seed + s, each of
                                 * trials points (AlgoPerf's studies); 0 or 1: one */
    char origin_studies[256];
    char backend[16];
    char db[1024];
    int n_settings;
    ob_setting settings[OB_CFG_MAX_SETTINGS];
    /* where each list came from, for messages */
    char origin_workloads[256], origin_optimizers[256], origin_seeds[256], origin_steps[256];
    char origin_data_parallel[256]; /* "" when data_parallel was not given */
    /* checkpoints, resume, sharding, devices (harness/run.c, cell.c) */
    int64_t checkpoint_every;   /* steps between checkpoints; 0: only on a clean stop */
    int checkpoint_keep;        /* newest checkpoints kept per run (>= 1) */
    char checkpoint_dir[1024];  /* "": DB.ckpt beside the database */
    int resume;                 /* continue the matching benchmark of the database */
    int shard_k, shard_n;       /* run the cells with index % shard_n == shard_k; n 0: all */
    char shard_origin[64];      /* "--shard" or "SLURM_ARRAY_TASK_ID" */
    int n_devices;              /* > 0: one cell per device at a time, concurrently */
    int devices[OB_CFG_MAX_DEVICES];
    int data_parallel;          /* devices per run, one model replica each (1: none) */
    char dump_params[1024];     /* debugging: write each finished cell's parameters here */
    int n_excludes;             /* pairs left out of the matrix (names checked by ob_matrix_expand) */
    ob_exclude excludes[OB_CFG_MAX_EXCLUDES];
} ob_config;

void ob_config_init(ob_config *c);
void ob_config_free(ob_config *c);
/* Load a YAML file into c (on top of what c holds). */
ob_status ob_config_load_file(ob_config *c, const char *path, ob_err *e);
/* Parse YAML text (path names it in messages). */
ob_status ob_config_load_text(ob_config *c, const char *text, const char *path, ob_err *e);

/* Flag-form parsers (also used by the YAML loader for string values). */
ob_status ob_config_set_names(char (*dst)[64], int *n, const char *list, const char *what,
                              const char *origin, ob_err *e);
ob_status ob_config_set_lrs(ob_lr_list *l, const char *list, const char *origin, ob_err *e);
/* "3" is seeds 0,1,2; "4,9" lists them; is_list forces the list reading ("5" = seed 5). */
ob_status ob_config_set_seeds(ob_config *c, const char *text, int is_list, const char *origin, ob_err *e);
/* The benchmark's name: UTF-8, at most 127 bytes. */
ob_status ob_config_set_name(ob_config *c, const char *name, const char *origin, ob_err *e);
/* confirm_configs: "all" (every configuration's best lr) or "best" (each
 * optimizer's best configuration only); anything else is bad input. */
ob_status ob_config_set_confirm_configs(ob_config *c, const char *value, const char *origin, ob_err *e);
/* "owner.key=value" */
ob_status ob_config_add_set(ob_config *c, const char *assignment, const char *origin, ob_err *e);
/* "owner.key=v1,v2,...": a hyperparameter swept like the lr (every value is
 * a configuration of its own). A later setting or sweep of the same key
 * replaces an earlier one. */
ob_status ob_config_add_sweep(ob_config *c, const char *assignment, const char *origin, ob_err *e);
ob_status ob_config_add_sweep_values(ob_config *c, const char *owner, const char *key, const char *values,
                                     const char *origin, ob_err *e);
ob_status ob_config_add_setting(ob_config *c, const char *owner, const char *key, const char *value,
                                const char *origin, ob_err *e);

/* A whole number in [lo, hi]: "ORIGIN: WHAT 'S' is not a whole number",
 * "... must be >= LO", "... is out of range (max HI)". */
ob_status ob_config_parse_int(const char *s, int64_t lo, int64_t hi, const char *what, const char *origin,
                              int64_t *out, ob_err *e);

/* Leave the pair (workload, optimizer) out of the matrix (a repeat is no
 * error). The names are checked by ob_matrix_expand. */
ob_status ob_config_add_exclude(ob_config *c, const char *workload, const char *optimizer, const char *origin,
                                ob_err *e);
/* Flag form: "WORKLOAD:OPTIMIZER[,OPTIMIZER...]". */
ob_status ob_config_add_exclude_text(ob_config *c, const char *text, const char *origin, ob_err *e);
/* The exclusion of (workload, optimizer), or NULL when the pair is in the matrix. */
const ob_exclude *ob_config_excluded(const ob_config *c, const char *workload, const char *optimizer);

/* "K/N" with 0 <= K < N. */
ob_status ob_config_set_shard(ob_config *c, const char *text, const char *origin, ob_err *e);
/* With no shard set: SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN when
 * set) of SLURM_ARRAY_TASK_COUNT, when both are in the environment. *used
 * (may be NULL) says whether they were. */
ob_status ob_config_shard_from_env(ob_config *c, int *used, ob_err *e);
/* "0,1,3": device indices, no repeats. */
ob_status ob_config_set_devices(ob_config *c, const char *list, const char *origin, ob_err *e);

/* c as a YAML configuration (malloc'd text in *text) that loads into the same
 * matrix and settings: name, the lists, steps, eval_every, confirm_seeds,
 * backend, settings and sweeps (optimizers' under hparams, workloads' under
 * workload_params), exclusions, checkpoint_every and checkpoint_keep. Not
 * written: db, checkpoint_dir and the flag-only settings (resume, shard,
 * devices), which say where and how a run goes, not what it is. */
ob_status ob_config_to_yaml(const ob_config *c, char **text, ob_err *e);
/* The first line of that text. */
#define OB_CONFIG_HEAD "# optbench run: the effective configuration"
/* The eval_every of a text ob_config_to_yaml wrote; -1 for any other text
 * (a config file's, stored by an older optbench) or none. */
int64_t ob_config_text_eval_every(const char *text);
/* The confirm_seeds of such a text; -1 as above. */
int64_t ob_config_text_confirm_seeds(const char *text);
/* Learning rates for an optimizer: its own list, else the global one; NULL if neither. */
const ob_lr_list *ob_config_lrs_for(const ob_config *c, const char *optimizer);
/* Whether this process runs the cell of that index: every cell, or with
 * --shard K/N those whose index is K mod N. */
static inline int ob_config_in_shard(const ob_config *c, int64_t index)
{
    return c->shard_n <= 0 || index % c->shard_n == c->shard_k;
}

#endif
