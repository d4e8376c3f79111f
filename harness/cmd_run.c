/* harness/cmd_run.c - `optbench run` and `optbench list`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/commands.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/run.h"
#include "harness/signals.h"
#include "results/store.h"

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench run [CONFIG.yaml] [options]\n\n"
            "Runs every cell of workloads x optimizers x learning rates x seeds and records\n"
            "each run (curve, held-out metrics, step time, peak memory) in an SQLite database.\n"
            "Flags override the config file.\n\n"
            "options:\n"
            "  --workloads A,B        workloads to run (optbench list shows them)\n"
            "  --optimizers X,Y       optimizers to run\n"
            "  --lrs 0.001,0.01       learning rates (default: each optimizer's default lr)\n"
            "  --seeds N | A,B        N seeds 0..N-1, or the listed seeds (default 1)\n"
            "  --steps N              training steps per run (default 200)\n"
            "  --eval-every N         held-out evaluation every N steps (default: at the end)\n"
            "  --db FILE              database to create or add to (default optbench.db)\n"
            "  --backend B            cpu, cuda or auto (default auto: cuda when a device is present)\n"
            "  --set OWNER.KEY=VALUE  a hyperparameter: adam.beta2=0.95, quadratic.dim=50,\n"
            "                         train.clip_norm=1 (repeatable; OWNER is an optimizer,\n"
            "                         a workload, or 'train' for the pipeline settings)\n"
            "  --name NAME            name of this benchmark in the database\n"
            "  --dry-run              print the matrix and the parameter routing, run nothing\n\n"
            "surviving faults and sharing the work:\n"
            "  --checkpoint-every N   checkpoint every N steps (default %d; 0: only on a stop)\n"
            "  --checkpoint-keep K    newest checkpoints kept per run (default %d)\n"
            "  --checkpoint-dir DIR   where checkpoints go (default: DB.ckpt/ beside the database)\n"
            "  --resume               continue this matrix in the database: skip finished cells,\n"
            "                         continue interrupted ones from their newest valid checkpoint\n"
            "                         (starts a new benchmark when none matches)\n"
            "  --shard K/N            run only the cells whose index is K mod N (default: from\n"
            "                         SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set)\n"
            "  --devices 0,1,...      one cell per device at a time, concurrently\n"
            "  --dump-params DIR      (debugging) write each finished cell's parameters to\n"
            "                         DIR/cell-INDEX.f32\n\n"
            "SIGINT or SIGTERM: the current step finishes, the run is checkpointed and marked\n"
            "interrupted, and optbench exits 130 / 143; a second SIGINT stops at once.\n\n"
            "exit status: 0 all cells done or diverged, 1 a cell failed, 2 bad input,\n"
            "130/143 stopped by SIGINT/SIGTERM (continue with --resume)\n",
            OB_CKPT_EVERY_DEFAULT, OB_CKPT_KEEP_DEFAULT);
}

static int need_arg(int i, int argc, char **argv)
{
    if (i + 1 >= argc) {
        ob_cli_error(2, "%s needs a value (see optbench run --help)", argv[i]);
        return 0;
    }
    return 1;
}

static void print_dry_run(const ob_config *c, const ob_matrix *m)
{
    printf("%d cells (%d workloads x %d optimizers x lrs x %d seeds), %lld steps each\n", m->n,
           c->n_workloads, c->n_optimizers, c->n_seeds ? c->n_seeds : 1, (long long)c->steps);
    printf("%6s  %-14s %-10s %-10s %6s\n", "cell", "workload", "optimizer", "lr", "seed");
    if (c->shard_n > 0) printf("shard %d/%d: the cells whose index is %d mod %d\n", c->shard_k, c->shard_n, c->shard_k, c->shard_n);
    for (int i = 0; i < m->n; i++) {
        const ob_cell *x = &m->cells[i];
        if (c->shard_n > 0 && x->index % c->shard_n != c->shard_k) continue;
        printf("%6lld  %-14s %-10s %-10g %6lld\n", (long long)x->index, x->wl->name, x->opt->name, x->lr,
               (long long)x->seed);
    }
    /* Routing: which parameter goes to which group, per workload x optimizer. */
    ob_device dev;
    ob_err e;
    if (ob_device_open(&dev, "cpu", 0, &e) != OB_OK) return;
    printf("\nparameter routing:\n");
    for (int i = 0; i < m->n; i++) {
        const ob_cell *x = &m->cells[i];
        int first = 1;
        for (int j = 0; j < i; j++)
            if (m->cells[j].wl == x->wl && m->cells[j].opt == x->opt) first = 0;
        if (!first) continue;
        ob_workload *w = NULL;
        ob_optim *o = NULL;
        ob_layout l;
        ob_layout_init(&l);
        char buf[8192];
        if (x->wl->create(x->wl, &x->wl_hp, &dev, (uint64_t)x->seed, &w, &e) == OB_OK &&
            w->vt->describe(w, &l, &e) == OB_OK &&
            ob_cell_make_optim(x, &o, &e) == OB_OK &&
            ob_optim_route(o, &l, &e) == OB_OK) {
            ob_optim_describe_routing(o, &l, buf, sizeof buf);
            printf("  %s x %s: %d tensors, %lld parameters\n%s", x->wl->name, x->opt->name, l.n,
                   (long long)ob_layout_numel(&l), buf);
        } else {
            printf("  %s x %s: %s\n", x->wl->name, x->opt->name, e.msg);
        }
        ob_optim_destroy(o);
        if (w) w->vt->destroy(w);
        ob_layout_free(&l);
    }
    ob_device_close(&dev);
}

int ob_cmd_run(int argc, char **argv)
{
    ob_config cfg;
    ob_config_init(&cfg);
    ob_err e;
    ob_err_clear(&e);
    int dry = 0, rc = 0;
    /* The config file first, so that flags override it whatever their order. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] == '-') {
            if (strcmp(argv[i], "--dry-run") != 0 && strcmp(argv[i], "--resume") != 0)
                i++; /* skip the flag's value */
            continue;
        }
        if (cfg.path[0]) {
            ob_config_free(&cfg);
            return ob_cli_error(2, "more than one config file given ('%s' and '%s')", cfg.path, argv[i]);
        }
        if (ob_config_load_file(&cfg, argv[i], &e) != OB_OK) goto fail;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] != '-') continue;
        if (!strcmp(a, "--dry-run")) {
            dry = 1;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            cfg.resume = 1;
            continue;
        }
        if (!need_arg(i, argc, argv)) {
            ob_config_free(&cfg);
            return 2;
        }
        const char *v = argv[++i];
        ob_status s = OB_OK;
        if (!strcmp(a, "--workloads")) s = ob_config_set_names(cfg.workloads, &cfg.n_workloads, v, "workloads", "--workloads", &e);
        else if (!strcmp(a, "--optimizers")) s = ob_config_set_names(cfg.optimizers, &cfg.n_optimizers, v, "optimizers", "--optimizers", &e);
        else if (!strcmp(a, "--lrs")) {
            /* the flag replaces every list of the file */
            cfg.n_lr_lists = 1;
            memset(&cfg.lrs[0], 0, sizeof cfg.lrs[0]);
            s = ob_config_set_lrs(&cfg.lrs[0], v, "--lrs", &e);
        } else if (!strcmp(a, "--seeds")) s = ob_config_set_seeds(&cfg, v, 0, "--seeds", &e);
        else if (!strcmp(a, "--steps") || !strcmp(a, "--eval-every")) {
            double d;
            int steps = !strcmp(a, "--steps");
            if (ob_parse_double(v, &d) != 0 || d != floor(d) || d < (steps ? 1 : 0) || d > 1e12)
                s = ob_fail(&e, OB_ERR_INPUT, "%s '%s': expected a whole number %s", a, v, steps ? ">= 1" : ">= 0");
            else if (steps) cfg.steps = (int64_t)d;
            else cfg.eval_every = (int64_t)d;
        } else if (!strcmp(a, "--db")) snprintf(cfg.db, sizeof cfg.db, "%s", v);
        else if (!strcmp(a, "--backend")) {
            if (strcmp(v, "cpu") && strcmp(v, "cuda") && strcmp(v, "auto"))
                s = ob_fail(&e, OB_ERR_INPUT, "--backend '%s': use cpu, cuda or auto", v);
            else snprintf(cfg.backend, sizeof cfg.backend, "%s", v);
        } else if (!strcmp(a, "--set")) s = ob_config_add_set(&cfg, v, "--set", &e);
        else if (!strcmp(a, "--name")) snprintf(cfg.name, sizeof cfg.name, "%s", v);
        else if (!strcmp(a, "--checkpoint-every") || !strcmp(a, "--checkpoint-keep")) {
            double d;
            int every = !strcmp(a, "--checkpoint-every");
            if (ob_parse_double(v, &d) != 0 || d != floor(d) || d < (every ? 0 : 1) || d > (every ? 1e12 : 100))
                s = ob_fail(&e, OB_ERR_INPUT, "%s '%s': expected a whole number %s", a, v,
                            every ? ">= 0" : "in 1..100");
            else if (every) cfg.checkpoint_every = (int64_t)d;
            else cfg.checkpoint_keep = (int)d;
        } else if (!strcmp(a, "--checkpoint-dir")) {
            if (!*v || strlen(v) >= sizeof cfg.checkpoint_dir - 64)
                s = ob_fail(&e, OB_ERR_INPUT, "--checkpoint-dir '%s': empty or too long", v);
            else snprintf(cfg.checkpoint_dir, sizeof cfg.checkpoint_dir, "%s", v);
        } else if (!strcmp(a, "--shard")) s = ob_config_set_shard(&cfg, v, "--shard", &e);
        else if (!strcmp(a, "--devices")) s = ob_config_set_devices(&cfg, v, "--devices", &e);
        else if (!strcmp(a, "--dump-params")) {
            if (!*v || strlen(v) >= sizeof cfg.dump_params - 64)
                s = ob_fail(&e, OB_ERR_INPUT, "--dump-params '%s': empty or too long", v);
            else snprintf(cfg.dump_params, sizeof cfg.dump_params, "%s", v);
        }
        else s = ob_fail(&e, OB_ERR_INPUT, "unknown option '%s' (see optbench run --help)", a);
        if (s != OB_OK) goto fail;
    }
    if (!cfg.db[0]) snprintf(cfg.db, sizeof cfg.db, "optbench.db");
    int from_env = 0;
    if (ob_config_shard_from_env(&cfg, &from_env, &e) != OB_OK) goto fail;

    ob_matrix m;
    if (ob_matrix_expand(&cfg, &m, stderr, &e) != OB_OK) goto fail;
    if (cfg.shard_n > 0)
        fprintf(stderr, "optbench: shard %d/%d%s: the cells whose index is %d mod %d\n", cfg.shard_k, cfg.shard_n,
                from_env ? " (from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT)" : "", cfg.shard_k, cfg.shard_n);
    if (cfg.n_devices > 0 && !strcmp(cfg.backend, "auto")) {
        /* one backend for every device: take it now */
        const ob_backend_ops *cu = ob_cuda_backend_ops();
        char d[256];
        snprintf(cfg.backend, sizeof cfg.backend, "%s", cu && cu->probe(d, sizeof d) ? "cuda" : "cpu");
    }
    if (cfg.n_devices > 0 && !strcmp(cfg.backend, "cpu") && !dry)
        fprintf(stderr,
                "optbench: note: --devices with the cpu backend: %d cells at a time share the CPU cores "
                "(the cpu backend has one device; each listed index is one more worker)\n",
                cfg.n_devices);
    if (dry) {
        print_dry_run(&cfg, &m);
        ob_matrix_free(&m);
        ob_config_free(&cfg);
        return 0;
    }

    ob_device dev;
    memset(&dev, 0, sizeof dev);
    int first_dev = cfg.n_devices > 0 ? cfg.devices[0] : 0;
    if (ob_device_open(&dev, cfg.backend, first_dev, &e) != OB_OK) {
        ob_matrix_free(&m);
        goto fail;
    }
    if (cfg.n_devices > 0) {
        /* each worker opens its own device; this one only checked the first */
        fprintf(stderr, "optbench: backend %s -> %s, devices", cfg.backend, dev.ops->name);
        for (int i = 0; i < cfg.n_devices; i++) fprintf(stderr, "%s%d", i ? "," : " ", cfg.devices[i]);
        fprintf(stderr, " (%s)\n", dev.desc);
        ob_device_close(&dev);
    }
    ob_store *store = NULL;
    if (ob_store_open(cfg.db, OB_STORE_CREATE, &store, &e) != OB_OK) {
        if (cfg.n_devices == 0) ob_device_close(&dev);
        ob_matrix_free(&m);
        goto fail;
    }
    if (cfg.n_devices == 0) fprintf(stderr, "optbench: backend %s -> %s (%s)\n", cfg.backend, dev.ops->name, dev.desc);
    fprintf(stderr, "optbench: %d cells, %lld steps each, into %s\n", m.n, (long long)cfg.steps, cfg.db);
    ob_run_summary sum;
    ob_signals_install();
    ob_status s = ob_run_matrix(&cfg, &m, cfg.n_devices > 0 ? NULL : &dev, store, &sum, &e);
    ob_signals_restore();
    ob_store_close(store);
    if (cfg.n_devices == 0) ob_device_close(&dev);
    ob_matrix_free(&m);
    if (s == OB_ERR_INTERRUPTED && sum.stop_signal) {
        ob_config_free(&cfg);
        ob_cli_error(1, "%s", e.msg);
        return ob_signal_exit_code(sum.stop_signal);
    }
    if (s != OB_OK) goto fail;
    fprintf(stderr, "optbench: %d done, %d diverged, %d failed", sum.done, sum.diverged, sum.failed);
    if (sum.skipped) fprintf(stderr, ", %d finished before", sum.skipped);
    if (sum.resumed) fprintf(stderr, ", %d continued from a checkpoint", sum.resumed);
    if (sum.busy) fprintf(stderr, ", %d left to another process", sum.busy);
    fprintf(stderr, "; benchmark %lld in %s\n", (long long)sum.bench_id, cfg.db);
    fprintf(stderr, "optbench: next: optbench report --db %s --out report/\n", cfg.db);
    rc = sum.failed ? 1 : 0;
    ob_config_free(&cfg);
    return rc;
fail:
    ob_config_free(&cfg);
    return ob_cli_error(ob_exit_code(e.status), "%s", e.msg);
}

static void print_hparams(const ob_hp_def *d, int n, const char *indent)
{
    for (int i = 0; i < n; i++) {
        char v[64];
        ob_hp_format(&d[i], d[i].def, v, sizeof v);
        char kind[96];
        if (d[i].kind == OB_HP_ENUM) snprintf(kind, sizeof kind, "one of %s", d[i].choices);
        else snprintf(kind, sizeof kind, "%s", d[i].kind == OB_HP_BOOL ? "bool" : d[i].kind == OB_HP_INT ? "int" : "float");
        printf("%s%-24s %-12s %-22s %s\n", indent, d[i].name, v, kind, d[i].help ? d[i].help : "");
    }
}

int ob_cmd_list(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: optbench list\n\nPrints every workload and optimizer with its hyperparameters\n"
                   "(name, default, type, meaning) and each optimizer's state size per parameter.\n");
            return 0;
        }
        return ob_cli_error(2, "list takes no arguments (got '%s')", argv[i]);
    }
    int nw, no;
    const ob_workload_def *const *w = ob_workloads(&nw);
    const ob_optimizer_def *const *o = ob_optimizers(&no);
    printf("WORKLOADS (set with --set WORKLOAD.KEY=VALUE)\n\n");
    for (int i = 0; i < nw; i++) {
        printf("  %s - %s\n", w[i]->name, w[i]->summary);
        print_hparams(w[i]->hp, w[i]->n_hp, "      ");
        printf("\n");
    }
    printf("OPTIMIZERS (set with --set OPTIMIZER.KEY=VALUE; state = floats kept per parameter)\n\n");
    for (int i = 0; i < no; i++) {
        ob_hp_values hv;
        ob_hp_defaults(&hv, o[i]->hp, o[i]->n_hp);
        double sp = o[i]->state_per_param ? o[i]->state_per_param(&hv) : NAN;
        printf("  %s - %s\n      state: %g floats per parameter (%g bytes) with the defaults\n", o[i]->name,
               o[i]->summary, sp, sp * 4);
        print_hparams(o[i]->hp, o[i]->n_hp, "      ");
        printf("\n");
    }
    printf("TRAINING SETTINGS (set with --set train.KEY=VALUE or 'train:' in the config)\n\n");
    print_hparams(ob_train_hp_defs, ob_train_hp_count, "      ");
    return 0;
}
