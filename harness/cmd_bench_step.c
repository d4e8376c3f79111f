/* harness/cmd_bench_step.c - `optbench bench-step`: the optimizer step alone.
 *
 * Builds a synthetic layout of K same-shaped 2-D tensors totalling about N
 * parameters, runs it through the real pipeline (ob_optim_step: gradient
 * statistics, guard, clip scale, the fused update per group, matrix updates),
 * and times many steps with the backend's timers (CUDA events on the GPU, the
 * monotonic clock on the CPU), reporting the median over repeats.
 *
 * Bandwidth is counted against the optimizer's minimal traffic: each
 * parameter read and written, its gradient read, each state float read and
 * written once, i.e. 12 + 8 * (state floats per parameter) bytes:
 *
 *   SGD 12 | SGD+momentum, Lion, Adagrad, RMSprop, Muon 20 | Adam, AdamW 28 | AMSGrad 36
 *
 * The state floats come from what the optimizer allocated
 * (ob_optim_state_bytes), so the table follows the optimizer's settings.
 * The same run measures a device-to-device copy moving the same number of
 * bytes (read + written) and reports the step's fraction of that bandwidth.
 * On the CPU the copy is memcpy split over the threads; a CPU reads each
 * line it writes before writing it (write-allocate), which an in-place
 * update does not pay extra for, so there the fraction can exceed 1.
 * The pipeline also reads the gradients once for the global statistics
 * (4 more bytes per parameter) unless train.on_nonfinite = none, where they
 * are summed inside the update; the time of that pass alone is reported too.
 *
 * Two gradient buffers drawn independently alternate from step to step. With
 * one constant gradient the optimizer state would settle on a fixed point in
 * float arithmetic, stop changing, and no longer be written back (the CUDA
 * update skips unchanged stores): fewer bytes than any real training step.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hparams.h"
#include "core/layout.h"
#include "core/rng.h"
#include "harness/commands.h"
#include "kernels/backend.h"
#include "optimizers/optim.h"

#define BS_MAX_REPEATS 64

typedef struct bs_args {
    const char *optimizer;
    const char *backend;
    int64_t params;
    int64_t tensors;
    int biases;         /* --biases: a bias of C floats after each tensor */
    int64_t rows, cols; /* from --shape, else derived */
    int64_t iters;      /* per repeat; 0 = automatic */
    int repeats;
    int warmup;
    const char *sets[32];
    int n_sets;
} bs_args;

static void bs_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench bench-step --optimizer NAME (--params N | --shape RxC) [--tensors K]\n"
            "                           [--biases] [--backend cpu|cuda|auto] [--iters I] [--repeats R]\n"
            "                           [--warmup W] [--set KEY=VALUE ...]\n\n"
            "Times the optimizer step alone (the whole pipeline: gradient statistics, guard,\n"
            "clipping, update) on K synthetic 2-D tensors totalling about N parameters, and\n"
            "reports ms/step, the bandwidth of the optimizer's minimal traffic (bytes read and\n"
            "written per parameter: 12 + 8 x state floats) and its fraction of a device-to-device\n"
            "copy measured in the same run.\n\n"
            "  --params N     total parameters (suffixes k, M, G: 100M, 1G)\n"
            "  --tensors K    number of tensors (default 1), each RxC with R = floor(sqrt(N/K)),\n"
            "                 C = floor((N/K)/R)\n"
            "  --shape RxC    shape of each tensor instead of --params\n"
            "  --biases       a bias of C floats after each tensor (1-D, tagged bias), as in a\n"
            "                 model's linear layers: with filter_bias_and_bn=true and a weight\n"
            "                 decay, the step alternates between decayed and undecayed spans\n"
            "  --iters I      steps per timed repeat (default: about 50 ms of work per repeat)\n"
            "  --repeats R    timed repeats, the median is reported (default 5)\n"
            "  --warmup W     untimed steps first (default 3)\n"
            "  --set K=V[,K=V...]  optimizer or training hyperparameters, as in run: lr=0.01,\n"
            "                 adamw.weight_decay=0.1, train.on_nonfinite=none (the prefixes optional);\n"
            "                 text settings too (root.coeff_file=FILE, muon.route=RULE)\n\n"
            "The last line is machine-readable: 'result: key=value ...'.\n");
}

/* "100M", "1e8", "2G", "4096" -> count; -1 when malformed. */
static int64_t bs_parse_count(const char *s)
{
    char buf[64];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n + 1);
    double mult = 1;
    char last = buf[n - 1];
    if (last == 'k' || last == 'K') mult = 1e3;
    if (last == 'm' || last == 'M') mult = 1e6;
    if (last == 'g' || last == 'G' || last == 'b' || last == 'B') mult = 1e9;
    if (mult != 1) buf[n - 1] = '\0';
    double v;
    if (ob_parse_double(buf, &v) != 0 || !(v >= 0) || v * mult > 9e15) return -1;
    v *= mult;
    if (v != floor(v)) return -1;
    return (int64_t)v;
}

/* --shape RxC into a; 0, or 2 after printing what is wrong. strtoll, not
 * sscanf: a number too large for long long is refused. */
static int bs_parse_shape(const char *v, bs_args *a)
{
    char *end;
    errno = 0;
    long long r = strtoll(v, &end, 10), c = 0;
    int ok = end != v && *end == 'x';
    if (ok) {
        const char *p = end + 1;
        c = strtoll(p, &end, 10);
        ok = end != p && *end == '\0';
    }
    if (!ok || errno == ERANGE || r < 1 || c < 1)
        return ob_cli_error(2, "bench-step: --shape '%s' is not RxC (e.g. 1024x1024)", v);
    a->rows = r;
    a->cols = c;
    return 0;
}

/* The flags that go together, and the shape of --params N over K tensors
 * (R = floor(sqrt(N/K)), C = floor((N/K)/R)): 0, or 2 after printing what is
 * wrong. */
static int bs_check(bs_args *a)
{
    if (!a->optimizer) return ob_cli_error(2, "bench-step: --optimizer NAME is required (see --help)");
    if (a->params < 0 && !a->rows) return ob_cli_error(2, "bench-step: --params N or --shape RxC is required");
    if (a->params >= 0 && a->rows)
        return ob_cli_error(2, "bench-step: give --params N (with --tensors K) or --shape RxC (with --tensors K), "
                               "not both");
    if (a->rows && (double)a->rows * (double)a->cols * (double)a->tensors > 9e15)
        return ob_cli_error(2, "bench-step: --shape %lldx%lld with --tensors %lld is more than 9e15 parameters",
                            (long long)a->rows, (long long)a->cols, (long long)a->tensors);
    if (!a->rows) {
        int64_t per = a->params / a->tensors;
        if (per < 1)
            return ob_cli_error(2, "bench-step: --params %lld is fewer than --tensors %lld", (long long)a->params,
                                (long long)a->tensors);
        int64_t r = (int64_t)floor(sqrt((double)per));
        while (r > 1 && r * r > per) r--;
        while ((r + 1) * (r + 1) <= per) r++;
        a->rows = r;
        a->cols = per / r;
    }
    return 0;
}

static int bs_parse(int argc, char **argv, bs_args *a)
{
    memset(a, 0, sizeof *a);
    a->backend = "auto";
    a->tensors = 1;
    a->repeats = 5;
    a->warmup = 3;
    a->params = -1;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            bs_usage(stdout);
            return -1;
        }
        if (!strcmp(k, "--biases")) {
            a->biases = 1;
            continue;
        }
        static const char *const opts[] = {"--optimizer", "--backend", "--params", "--tensors", "--shape",
                                           "--iters",     "--repeats", "--warmup", "--set"};
        if (ob_cli_valued_option("bench-step", argc, argv, i, opts, OB_CLI_COUNT(opts), OB_CLI_COUNT(opts))) return 2;
        const char *v = argv[++i];
        int64_t x;
        if (!strcmp(k, "--optimizer")) {
            a->optimizer = v;
        } else if (!strcmp(k, "--backend")) {
            a->backend = v;
        } else if (!strcmp(k, "--params")) {
            if ((x = bs_parse_count(v)) < 1)
                return ob_cli_error(2, "bench-step: --params '%s' is not a positive count (a whole number, or one "
                                    "with k, M or G after it: 4096, 10M, 1G)", v);
            a->params = x;
        } else if (!strcmp(k, "--tensors")) {
            if ((x = bs_parse_count(v)) < 1 || x > 10000000)
                return ob_cli_error(2, "bench-step: --tensors '%s' is not a count in [1, 1e7]", v);
            a->tensors = x;
        } else if (!strcmp(k, "--shape")) {
            if (bs_parse_shape(v, a)) return 2;
        } else if (!strcmp(k, "--iters")) {
            if ((x = bs_parse_count(v)) < 1 || x > 1000000)
                return ob_cli_error(2, "bench-step: --iters '%s' is not a count in [1, 1e6]", v);
            a->iters = x;
        } else if (!strcmp(k, "--repeats")) {
            if ((x = bs_parse_count(v)) < 1 || x > BS_MAX_REPEATS)
                return ob_cli_error(2, "bench-step: --repeats '%s' is not in [1, %d]", v, BS_MAX_REPEATS);
            a->repeats = (int)x;
        } else if (!strcmp(k, "--warmup")) {
            if ((x = bs_parse_count(v)) < 0 || x > 100000)
                return ob_cli_error(2, "bench-step: --warmup '%s' is not a count in [0, 1e5]", v);
            a->warmup = (int)x;
        } else if (!strcmp(k, "--set")) {
            if (a->n_sets >= (int)(sizeof a->sets / sizeof a->sets[0]))
                return ob_cli_error(2, "bench-step: too many --set");
            a->sets[a->n_sets++] = v;
        }
    }
    return bs_check(a);
}

/* "1 tensor", "2 tensors" */
static const char *plural(int64_t n, const char *one, const char *many) { return n == 1 ? one : many; }

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Times `iters` calls of a step function per repeat; returns the median ms per call. */
typedef ob_status (*bs_fn)(void *ctx, int64_t i, ob_err *e);

static ob_status bs_time(ob_device *dev, bs_fn fn, void *ctx, int64_t *counter, int repeats, int64_t iters,
                         double *med, double *lo, double *hi, ob_err *e)
{
    double ms[BS_MAX_REPEATS];
    for (int r = 0; r < repeats; r++) {
        OB_TRY(dev->ops->timer_mark(dev, 2 * r, e));
        for (int64_t i = 0; i < iters; i++) OB_TRY(fn(ctx, (*counter)++, e));
        OB_TRY(dev->ops->timer_mark(dev, 2 * r + 1, e));
    }
    for (int r = 0; r < repeats; r++) {
        OB_TRY(dev->ops->timer_read(dev, 2 * r, 2 * r + 1, &ms[r], e));
        ms[r] /= (double)iters;
    }
    qsort(ms, (size_t)repeats, sizeof ms[0], cmp_double);
    *med = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    *lo = ms[0];
    *hi = ms[repeats - 1];
    return OB_OK;
}

typedef struct bs_ctx {
    ob_device *dev;
    ob_optim *opt;
    float *params, *grads, *grads2, *loss;
    ob_step_record *rec;
    ob_step_stats *stats;
    int64_t total;
    void *copy_a, *copy_b;
    size_t copy_bytes;
} bs_ctx;

static ob_status bs_step(void *p, int64_t i, ob_err *e)
{
    bs_ctx *c = p;
    return ob_optim_step(c->opt, c->params, i % 2 ? c->grads2 : c->grads, c->loss, i + 1, c->rec, e);
}

static ob_status bs_stats(void *p, int64_t i, ob_err *e)
{
    bs_ctx *c = p;
    (void)i;
    const ob_backend_ops *ops = c->dev->ops;
    OB_TRY(ops->grad_stats(c->dev, c->grads, c->total, c->stats, e));
    return ops->finish_stats(c->dev, c->stats, c->loss, 0.0f, NULL, NULL, e);
}

static ob_status bs_copy(void *p, int64_t i, ob_err *e)
{
    bs_ctx *c = p;
    /* alternate directions so that neither buffer stays hot in a cache */
    if (i % 2) return c->dev->ops->copy(c->dev, c->copy_a, c->copy_b, c->copy_bytes, e);
    return c->dev->ops->copy(c->dev, c->copy_b, c->copy_a, c->copy_bytes, e);
}

/* Iterations per repeat: about target_ms of work, measured on growing runs. */
static ob_status bs_pick_iters(ob_device *dev, bs_fn fn, void *ctx, int64_t *counter, double target_ms,
                               int64_t *iters, ob_err *e)
{
    int64_t n = 1;
    for (;;) {
        double med, lo, hi;
        OB_TRY(bs_time(dev, fn, ctx, counter, 1, n, &med, &lo, &hi, e));
        double total = med * (double)n;
        if (total >= target_ms / 4 || n >= 10000) {
            int64_t k = med > 0 ? (int64_t)(target_ms / med) : 10000;
            *iters = k < 1 ? 1 : (k > 10000 ? 10000 : k);
            return OB_OK;
        }
        n *= 4;
    }
}

/* The optimizer's settings from --set KEY=VALUE[,KEY=VALUE...]: KEY may
 * carry the optimizer's name or 'train.' in front, as in `optbench run
 * --set`; its text settings (root.coeff_file, muon.route) into text, to be
 * given once the optimizer exists. */
typedef struct bs_settings {
    ob_hp_values hp, train;
    char text[8][2][512];
    int n_text;
} bs_settings;

static ob_status bs_set_one(const ob_optimizer_def *def, const char *key, const char *val, bs_settings *st, ob_err *e)
{
    int to_train = 0;
    size_t on = strlen(def->name);
    if (!strncmp(key, "train.", 6)) {
        key += 6;
        to_train = 1;
    } else if (!strncmp(key, def->name, on) && key[on] == '.') {
        key += on + 1;
    } else if (ob_hp_index(def->hp, def->n_hp, key) < 0 && ob_hp_index(ob_train_hp_defs, ob_train_hp_count, key) >= 0) {
        to_train = 1;
    }
    if (to_train) return ob_hp_set(&st->train, "train", key, val, e);
    if (ob_hp_index(def->hp, def->n_hp, key) < 0 && ob_optim_is_option(def, key)) {
        if (st->n_text == 8) return ob_fail(e, OB_ERR_INPUT, "--set: at most 8 text settings");
        snprintf(st->text[st->n_text][0], sizeof st->text[0][0], "%s", key);
        snprintf(st->text[st->n_text][1], sizeof st->text[0][1], "%s", val);
        st->n_text++;
        return OB_OK;
    }
    return ob_optim_hp_set(def, &st->hp, key, val, e);
}

static ob_status bs_settings_read(const bs_args *a, const ob_optimizer_def *def, bs_settings *st, ob_err *e)
{
    ob_hp_defaults(&st->hp, def->hp, def->n_hp);
    ob_hp_defaults(&st->train, ob_train_hp_defs, ob_train_hp_count);
    st->n_text = 0;
    char seen[64][64]; /* keys given so far: one given twice is refused, as run refuses it (routing rules add up) */
    int n_seen = 0;
    for (int i = 0; i < a->n_sets; i++) {
        char list[512];
        if (strlen(a->sets[i]) >= sizeof list) return ob_fail(e, OB_ERR_INPUT, "--set '%s': too long", a->sets[i]);
        snprintf(list, sizeof list, "%s", a->sets[i]);
        char *save = NULL;
        for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(item, '=');
            if (!eq || eq == item) return ob_fail(e, OB_ERR_INPUT, "--set '%s' is not KEY=VALUE", item);
            *eq = '\0';
            for (int k = 0; k < n_seen && strcmp(item, "route") != 0; k++)
                if (!strcmp(seen[k], item))
                    return ob_fail(e, OB_ERR_INPUT, "--set: %s is set twice; give it once", item);
            if (n_seen < 64 && strlen(item) < sizeof seen[0]) snprintf(seen[n_seen++], sizeof seen[0], "%s", item);
            OB_TRY(bs_set_one(def, item, eq + 1, st, e));
        }
    }
    return OB_OK;
}

/* The K tensors (and their biases) of the synthetic layout, the optimizer
 * over them with its text settings, and the arenas: parameters N(0, 0.02),
 * two gradient buffers N(0, 1e-3) (finite, never zero), the loss 1. */
static ob_status bs_setup(const bs_args *a, const ob_optimizer_def *def, const bs_settings *st, ob_device *dev,
                          ob_layout *lay, ob_optim **opt, bs_ctx *c, ob_err *e)
{
    OB_TRY(ob_device_open(dev, a->backend, 0, e));
    for (int64_t k = 0; k < a->tensors; k++) {
        char name[32];
        snprintf(name, sizeof name, "w%lld", (long long)k);
        int64_t shape[2] = {a->rows, a->cols};
        OB_TRY(ob_layout_add(lay, name, OB_TAG_MATRIX, 2, shape, NULL, e));
        if (a->biases) {
            snprintf(name, sizeof name, "b%lld", (long long)k);
            OB_TRY(ob_layout_add(lay, name, OB_TAG_BIAS, 1, &a->cols, NULL, e));
        }
    }
    OB_TRY(ob_optim_create(def, &st->hp, &st->train, opt, e));
    for (int i = 0; i < st->n_text; i++)
        if (ob_optim_set_option(*opt, st->text[i][0], st->text[i][1], e) != OB_OK) return ob_err_prefix(e, "--set: ");
    OB_TRY(ob_optim_route(*opt, lay, e));
    OB_TRY(ob_layout_finalize(lay, e));
    c->dev = dev;
    c->opt = *opt;
    c->total = lay->total;
    size_t arena = (size_t)lay->total * sizeof(float);
    OB_TRY(ob_dev_alloc(dev, arena, (void **)&c->params, e));
    OB_TRY(ob_dev_alloc(dev, arena, (void **)&c->grads, e));
    OB_TRY(ob_dev_alloc(dev, arena, (void **)&c->grads2, e));
    OB_TRY(ob_dev_alloc(dev, sizeof(float), (void **)&c->loss, e));
    OB_TRY(ob_dev_alloc(dev, sizeof(ob_step_record), (void **)&c->rec, e));
    OB_TRY(ob_dev_alloc(dev, sizeof(ob_step_stats), (void **)&c->stats, e));
    OB_TRY(ob_optim_setup(*opt, dev, lay, e));
    const int64_t total_steps = (int64_t)a->warmup + 2 + (int64_t)a->repeats * (a->iters ? a->iters : 1000);
    ob_optim_set_total_steps(*opt, total_steps);
    OB_TRY(dev->ops->rng_normal(dev, c->params, lay->total, 1, OB_STREAM_INIT, 0, 0.0f, 0.02f, e));
    OB_TRY(dev->ops->rng_normal(dev, c->grads, lay->total, 1, OB_STREAM_NOISE, 0, 0.0f, 1e-3f, e));
    OB_TRY(dev->ops->rng_normal(dev, c->grads2, lay->total, 2, OB_STREAM_NOISE, 0, 0.0f, 1e-3f, e));
    const float one = 1.0f;
    return dev->ops->upload(dev, c->loss, &one, sizeof one, e);
}

/* The copy's buffers: together the same bytes read + written as the step's
 * minimal traffic, halved until the two fit; filled. */
static ob_status bs_copy_buffers(ob_device *dev, double traffic, bs_ctx *c, ob_err *e)
{
    size_t want = (size_t)(traffic / 2);
    if (want < 4096) want = 4096;
    for (;;) {
        ob_err ce;
        if (ob_dev_alloc(dev, want, &c->copy_a, &ce) == OB_OK) {
            if (ob_dev_alloc(dev, want, &c->copy_b, &ce) == OB_OK) break;
            ob_dev_free(dev, c->copy_a);
            c->copy_a = NULL;
        }
        if (want <= ((size_t)1 << 24) || ce.status != OB_ERR_NOMEM)
            return ob_fail(e, ce.status, "bench-step: cannot allocate the copy buffers: %s", ce.msg);
        want /= 2;
    }
    c->copy_bytes = want;
    return dev->ops->fill(dev, c->copy_a, 1.0f, (int64_t)(want / sizeof(float)), e);
}

/* What bench-step measured: each timing's median over the repeats and its
 * min and max, with the counts they were taken over. */
typedef struct bs_times {
    int64_t iters;
    double step_ms, step_lo, step_hi;
    double stats_ms, stats_lo, stats_hi;
    double copy_ms, copy_lo, copy_hi;
    ob_step_record rec; /* the last step's record */
} bs_times;

/* The step (after its warm-up), the gradient-statistics pass alone, timed
 * for as long as the step (its own count of passes, not the step's few),
 * and the copy; then the last step's record. */
static ob_status bs_measure(const bs_args *a, ob_device *dev, bs_ctx *c, bs_times *t, ob_err *e)
{
    const double target_ms = !strcmp(dev->ops->name, "cpu") ? 200.0 : 50.0;
    int64_t counter = 0;
    for (int i = 0; i < a->warmup; i++) OB_TRY(bs_step(c, counter++, e));
    t->iters = a->iters;
    if (!t->iters) OB_TRY(bs_pick_iters(dev, bs_step, c, &counter, target_ms, &t->iters, e));
    OB_TRY(bs_time(dev, bs_step, c, &counter, a->repeats, t->iters, &t->step_ms, &t->step_lo, &t->step_hi, e));
    int64_t sc = 0, stats_iters = t->iters;
    OB_TRY(bs_stats(c, sc++, e));
    if (!a->iters) OB_TRY(bs_pick_iters(dev, bs_stats, c, &sc, target_ms, &stats_iters, e));
    OB_TRY(bs_time(dev, bs_stats, c, &sc, a->repeats, stats_iters, &t->stats_ms, &t->stats_lo, &t->stats_hi, e));
    int64_t cc = 0, copy_iters = 0;
    OB_TRY(bs_copy(c, cc++, e));
    OB_TRY(bs_pick_iters(dev, bs_copy, c, &cc, target_ms, &copy_iters, e));
    OB_TRY(bs_time(dev, bs_copy, c, &cc, a->repeats, copy_iters, &t->copy_ms, &t->copy_lo, &t->copy_hi, e));
    OB_TRY(dev->ops->sync(dev, e));
    /* the run must have stayed finite: the last record is not a skipped step */
    return dev->ops->download(dev, &t->rec, c->rec, sizeof t->rec, e);
}

/* The report's lines: layout, step, traffic, copy, fraction, the stats
 * pass, memory, warnings, and the one-line result. */
static void bs_print(const bs_args *a, const ob_optimizer_def *def, const bs_settings *st, const ob_device *dev,
                     const ob_layout *lay, const ob_optim *opt, const bs_ctx *c, const bs_times *t, ob_err *e)
{
    const int64_t n_params = ob_layout_numel(lay);
    const double state_floats = (double)ob_optim_state_bytes(opt) / sizeof(float) / (double)lay->total;
    const double bytes_per_param = 12.0 + 8.0 * state_floats;
    const double traffic = bytes_per_param * (double)n_params;
    const int is_cpu = !strcmp(dev->ops->name, "cpu");
    const double gbs = traffic / (t->step_ms * 1e-3) / 1e9;
    const double copy_gbs = 2.0 * (double)c->copy_bytes / (t->copy_ms * 1e-3) / 1e9;
    const double stats_gbs = 4.0 * (double)n_params / (t->stats_ms * 1e-3) / 1e9;
    size_t free_b = 0, total_b = 0;
    if (dev->ops->mem_info) (void)dev->ops->mem_info((ob_device *)dev, &free_b, &total_b, e);

    printf("bench-step: %s on %s\n", def->name, dev->desc);
    char bias_note[64] = "";
    if (a->biases) snprintf(bias_note, sizeof bias_note, ", each with a bias of %lld", (long long)a->cols);
    printf("  layout     %lld %s of %lldx%lld%s = %lld %s (%lld %s with padding)\n", (long long)a->tensors,
           plural(a->tensors, "tensor", "tensors"), (long long)a->rows, (long long)a->cols, bias_note,
           (long long)n_params, plural(n_params, "parameter", "parameters"), (long long)lay->total,
           plural(lay->total, "float", "floats"));
    printf("  step       %.4f ms (median of %d %s of %lld %s; min %.4f, max %.4f)\n", t->step_ms, a->repeats,
           plural(a->repeats, "repeat", "repeats"), (long long)t->iters, plural(t->iters, "step", "steps"), t->step_lo,
           t->step_hi);
    printf("  traffic    %.0f B/param minimal (%.2f state floats/param) -> %.1f GB/s\n", bytes_per_param,
           state_floats, gbs);
    printf("  copy       %.1f GB/s (%s, %.3f GB copied, counted read + written; %.4f ms, min %.4f, max %.4f)\n",
           copy_gbs, is_cpu ? "memcpy over the threads" : "device-to-device", (double)c->copy_bytes / 1e9,
           t->copy_ms, t->copy_lo, t->copy_hi);
    const double frac = gbs / copy_gbs;
    /* a CPU copy reads each line it writes first (write-allocate): 3 lines
     * moved for the 2 counted, so an in-place update can reach 1.5 of it */
    printf("  fraction   %.3f of the copy bandwidth%s\n", frac,
           frac < 0.05 ? " (far below the copy: the step is bound by arithmetic, such as Newton-Schulz's "
                         "products, or by its fixed cost on so few parameters, not by memory; the fraction counts "
                         "only the elementwise traffic)"
           : is_cpu && frac > 1.0 && frac <= 1.5
               ? " (above 1: the copy reads each line it writes first, an in-place update does not)"
               : "");
    /* with no guard and no clipping the statistics are summed inside the update */
    const int fused_stats = (int)ob_hp_get(&st->train, "on_nonfinite") == OB_GUARD_NONE &&
                            ob_hp_get(&st->train, "clip_norm") <= 0.0 && dev->ops->elementwise_step_stats;
    printf("  stats pass %.4f ms alone (min %.4f, max %.4f; gradient norm and non-finite count, %.1f GB/s)%s\n",
           t->stats_ms, t->stats_lo, t->stats_hi, stats_gbs, fused_stats ? "; this step sums them inside the update" : "");
    if (!fused_stats && t->step_ms > t->stats_ms)
        printf("  update     ~%.4f ms without the stats pass (step - stats) -> %.3f of the copy bandwidth\n",
               t->step_ms - t->stats_ms, traffic / ((t->step_ms - t->stats_ms) * 1e-3) / 1e9 / copy_gbs);
    printf("  memory     peak %.3f GB through the allocator, state %.3f GB\n", (double)dev->bytes_peak / 1e9,
           (double)ob_optim_state_bytes(opt) / 1e9);
    if (t->rec.skipped != 0.0f) printf("  warning    the last step saw a non-finite gradient or loss\n");
    /* figures a busy machine made: repeats far apart, or a step faster than
     * the copy allows */
    const double spread = fmax(t->step_hi / t->step_lo, fmax(t->copy_hi / t->copy_lo, t->stats_hi / t->stats_lo));
    if (spread > 1.25 || (is_cpu ? frac > 1.5 : frac > 1.05))
        printf("  warning    %s: the machine was busy or changed speed, so these figures are not its own; "
               "rerun on an idle machine%s\n",
               spread > 1.25 ? "the repeats differ by more than 25% (the max over the min above)"
                             : "the step moved its bytes faster than the copy could",
               a->repeats < 5 ? ", with more --repeats" : "");
    printf("result: optimizer=%s backend=%s params=%lld tensors=%lld shape=%lldx%lld ms=%.6f gbps=%.3f "
           "copy_gbps=%.3f fraction=%.4f bytes_per_param=%.0f stats_ms=%.6f peak_bytes=%zu biases=%d\n",
           def->name, dev->ops->name, (long long)n_params, (long long)a->tensors, (long long)a->rows,
           (long long)a->cols, t->step_ms, gbs, copy_gbs, gbs / copy_gbs, bytes_per_param, t->stats_ms,
           dev->bytes_peak, a->biases);
}

static ob_status bs_run(const bs_args *a, ob_err *e)
{
    const ob_optimizer_def *def = ob_optimizer_find(a->optimizer);
    if (!def) return ob_optimizer_unknown(a->optimizer, e);
    bs_settings *st = malloc(sizeof *st);
    if (!st) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    ob_device dev;
    memset(&dev, 0, sizeof dev);
    ob_layout lay;
    ob_layout_init(&lay);
    ob_optim *opt = NULL;
    bs_ctx c;
    memset(&c, 0, sizeof c);
    bs_times t;
    memset(&t, 0, sizeof t);
    ob_status s = bs_settings_read(a, def, st, e);
    if (s == OB_OK) s = bs_setup(a, def, st, &dev, &lay, &opt, &c, e);
    if (s == OB_OK) {
        const double state_floats = (double)ob_optim_state_bytes(opt) / sizeof(float) / (double)lay.total;
        const double traffic = (12.0 + 8.0 * state_floats) * (double)ob_layout_numel(&lay);
        s = bs_copy_buffers(&dev, traffic, &c, e);
    }
    if (s == OB_OK) s = bs_measure(a, &dev, &c, &t, e);
    if (s == OB_OK) bs_print(a, def, st, &dev, &lay, opt, &c, &t, e);
    ob_optim_destroy(opt);
    ob_layout_free(&lay);
    if (dev.ops) ob_device_close(&dev);
    free(st);
    return s;
}

int ob_cmd_bench_step(int argc, char **argv)
{
    static const char *const single[] = {"--optimizer", "--params", "--tensors", "--shape", "--backend",
                                         "--iters", "--repeats", "--warmup"};
    ob_cli_once("bench-step", argc, argv, single, OB_CLI_COUNT(single));
    bs_args a;
    int rc = bs_parse(argc, argv, &a);
    if (rc < 0) return 0; /* --help */
    if (rc) return rc;
    ob_err e;
    ob_err_clear(&e);
    ob_status s = bs_run(&a, &e);
    if (s != OB_OK) return ob_cli_error(ob_exit_code(s), "bench-step: %s", e.msg);
    return 0;
}
