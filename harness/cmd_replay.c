/* harness/cmd_replay.c - `optbench replay`: apply an optimizer to a recorded
 * gradient sequence and write the parameters after every step.
 *
 * This is the conformance path (against PyTorch, JAX, a paper): the same
 * pipeline as a training run (ob_optim_route/setup/step, on the CPU backend
 * unless --backend says otherwise)
 * over a layout of one tensor, tagged matrix when it is 2-D (so Muon and ROOT
 * route it to their main group), conv when 4-D, vector otherwise.
 * Inputs are CSV (libcsv); the output has 9 significant digits, enough to
 * round-trip float32.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/commands.h"
#include "kernels/backend.h"
#include "optimizers/optim.h"
#include "optimizers/rows.h"

static void replay_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench replay --optimizer NAME --shape RxC|N --init FILE --grads FILE --out FILE\n"
            "                       [--set k=v,k=v] [--route RULE] [--backend cpu|cuda|auto]\n\n"
            "Applies an optimizer to a recorded gradient sequence and writes the parameters\n"
            "after every step: a check of optbench against another framework.\n\n"
            "  --optimizer NAME  any optimizer of `optbench list`\n"
            "  --shape S         parameter shape: 8x6 (a matrix), 40 (a vector), or up to 4 dims\n"
            "  --init FILE       one CSV row: the initial parameters, row-major\n"
            "  --grads FILE      one CSV row per step: the gradient of that step\n"
            "  --out FILE        one CSV row per step: the parameters after it ('-': stdout)\n"
            "  --set k=v,...     optimizer hyperparameters (lr=0.01,beta2=0.95); train.KEY=V for\n"
            "                    pipeline settings (train.clip_norm=1, train.schedule=cosine);\n"
            "                    text settings too (coeff_file=FILE for root)\n"
            "  --route RULE      a routing rule of muon or root, e.g. 'tag=matrix -> adamw' (repeatable)\n"
            "  --backend B       where the steps run (default cpu)\n\n"
            "exit status: 0 ok, 1 failure, 2 bad input (the message names file, line, column)\n");
}

/* At most this many elements: every step's row of the CSV files holds them all. */
#define REPLAY_MAX_NUMEL ((int64_t)1 << 31)

static int parse_shape(const char *s, int *ndim, int64_t *shape)
{
    *ndim = 0;
    const char *p = s;
    int64_t numel = 1;
    while (*p) {
        if (*ndim == OB_MAX_DIMS) return -1;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v <= 0 || errno || v > REPLAY_MAX_NUMEL / numel) return -1;
        numel *= v;
        shape[(*ndim)++] = v;
        p = end;
        if (*p == 'x') {
            p++;
            if (!*p) return -1;
        } else if (*p) {
            return -1;
        }
    }
    return *ndim > 0 ? 0 : -1;
}

/* k=v,k=v: train.KEY to the training settings, known hyperparameters to the
 * optimizer, anything else is a text setting given to the optimizer later. */
static ob_status apply_sets(const char *list, const ob_optimizer_def *d, ob_hp_values *hp, ob_hp_values *train,
                            char (*text)[2][1024], int *n_text, ob_err *e)
{
    char buf[4096];
    if (strlen(list) >= sizeof buf) return ob_fail(e, OB_ERR_INPUT, "--set: list too long");
    strcpy(buf, list);
    const char *seen[256];
    int n_seen = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        if (!*tok)
            return ob_fail(e, OB_ERR_INPUT, "--set: an empty setting in '%s' (two commas, or one at an end): "
                           "write key=value items separated by single commas", list);
        char *eq = strchr(tok, '=');
        if (!eq) return ob_fail(e, OB_ERR_INPUT, "--set: '%s' has no '=' (expected key=value)", tok);
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        size_t on = strlen(d->name);
        if (!strncmp(k, d->name, on) && k[on] == '.') k += on + 1; /* adam.beta2 as run writes it: beta2 */
        /* a key given twice would keep one of its values without a word (as
         * run, where that is bad input too); route rules are a list */
        for (int i = 0; i < n_seen && strcmp(k, "route") != 0; i++) /* route rules add up */
            if (!strcmp(seen[i], k))
                return ob_fail(e, OB_ERR_INPUT, "--set: %s is given twice; give each key once", k);
        if (n_seen < (int)(sizeof seen / sizeof *seen)) seen[n_seen++] = k;
        if (!strncmp(k, "train.", 6)) {
            OB_TRY(ob_hp_set(train, "train", k + 6, v, e));
        } else if (ob_hp_index(d->hp, d->n_hp, k) >= 0 || !ob_optim_is_option(d, k)) {
            OB_TRY(ob_optim_hp_set(d, hp, k, v, e));
        } else {
            if (*n_text == 8) return ob_fail(e, OB_ERR_INPUT, "--set: too many text settings");
            snprintf(text[*n_text][0], sizeof text[0][0], "%s", k);
            snprintf(text[*n_text][1], sizeof text[0][1], "%s", v);
            (*n_text)++;
        }
    }
    return OB_OK;
}

/* What the steps of a replay share: its inputs, the rows read, the device, layout and optimizer. */
typedef struct replay_job {
    const char *backend, *shape_s, *init_path, *grads_path, *out_path;
    const char **routes;
    int n_routes;
    const ob_optimizer_def *d;
    int ndim;
    int64_t shape[OB_MAX_DIMS];
    int64_t numel;
    ob_hp_values hp, train;
    char text[8][2][1024];
    int n_text;
    ob_rows init, grads;
    ob_device dev;
    ob_layout lay;
    ob_optim *o;
    FILE *out;
    float *p, *g, *loss;
    ob_step_record *rec;
    float *host;
} replay_job;

/* The optimizer, the shape, the --out path and the --set values, checked before any file is read. */
static ob_status replay_settings(replay_job *j, const char *opt_name, const char *sets, ob_err *e)
{
    j->d = ob_optimizer_find(opt_name);
    if (!j->d) return ob_optimizer_unknown(opt_name, e);
    if (parse_shape(j->shape_s, &j->ndim, j->shape) != 0)
        return ob_fail(e, OB_ERR_INPUT, "--shape '%s' is not a shape like 8x6 or 40 (of at most 2^31 elements)",
                       j->shape_s);
    j->numel = 1;
    for (int i = 0; i < j->ndim; i++) j->numel *= j->shape[i];
    if (strcmp(j->out_path, "-")) { /* never over an input, a database or a folder */
        const char *const inputs[2] = {j->init_path, j->grads_path};
        static const char *const what[2] = {"the --init file", "the --grads file"};
        char msg[1024];
        if (ob_cli_output_check(msg, sizeof msg, "--out", j->out_path, inputs, what, 2))
            return ob_fail(e, OB_ERR_INPUT, "%s", msg);
    }
    ob_hp_defaults(&j->hp, j->d->hp, j->d->n_hp);
    ob_hp_defaults(&j->train, ob_train_hp_defs, ob_train_hp_count);
    j->n_text = 0;
    if (sets) OB_TRY(apply_sets(sets, j->d, &j->hp, &j->train, j->text, &j->n_text, e));
    return OB_OK;
}

/* The --init and --grads rows read; on success they (and an empty layout) are freed by replay_finish. */
static ob_status replay_read(replay_job *j, ob_err *e)
{
    OB_TRY(ob_rows_read(j->init_path, ',', &j->init, e));
    ob_status st = ob_rows_read(j->grads_path, ',', &j->grads, e);
    if (st != OB_OK) {
        ob_rows_free(&j->init);
        return st;
    }
    ob_layout_init(&j->lay);
    return OB_OK;
}

/* The rows against the shape: one init row, gradient rows of numel values, all within float's range. */
static ob_status replay_check_rows(const replay_job *j, ob_err *e)
{
    const ob_rows *init = &j->init, *grads = &j->grads;
    const int64_t numel = j->numel;
    if (init->n != 1 || init->len[0] != numel)
        return ob_fail(e, OB_ERR_INPUT, "%s: expected one row of %lld values (shape %s); found %d row%s%s",
                       j->init_path, (long long)numel, j->shape_s, init->n, init->n == 1 ? "" : "s",
                       init->n == 1 ? (init->len[0] < numel ? " that is too short" : " that is too long") : "");
    if (grads->n == 0) return ob_fail(e, OB_ERR_INPUT, "%s: no gradient rows", j->grads_path);
    for (int r = 0; r < grads->n; r++)
        if (grads->len[r] != numel)
            return ob_fail(e, OB_ERR_INPUT, "%s:%d: %d values; the shape %s needs %lld", j->grads_path,
                           grads->line[r], grads->len[r], j->shape_s, (long long)numel);
    /* the steps run in float: a value past float's range would be inf */
    for (int r = -1; r < grads->n; r++) {
        const ob_rows *rows = r < 0 ? init : grads;
        const int k = r < 0 ? 0 : r;
        for (int64_t i = 0; i < numel; i++)
            if (isinf((float)rows->v[k][i])) /* rounds past float's largest, 3.40282347e38 */
                return ob_fail(e, OB_ERR_INPUT, "%s:%d: column %lld: %.9g is out of range for a float (the steps "
                               "run in float32: at most about 3.4028235e38 in magnitude)",
                               r < 0 ? j->init_path : j->grads_path, rows->line[k], (long long)i + 1, rows->v[k][i]);
    }
    return OB_OK;
}

/* The device, layout and optimizer (text settings, routes) set up; initial parameters and loss uploaded. */
static ob_status replay_setup(replay_job *j, ob_err *e)
{
    ob_tag tag = j->ndim == 2 ? OB_TAG_MATRIX : j->ndim == 4 ? OB_TAG_CONV : OB_TAG_VECTOR;
    ob_device *dev = &j->dev;
    OB_TRY(ob_device_open(dev, j->backend, 0, e));
    OB_TRY(ob_layout_add(&j->lay, "param", tag, j->ndim, j->shape, NULL, e));
    OB_TRY(ob_optim_create(j->d, &j->hp, &j->train, &j->o, e));
    for (int i = 0; i < j->n_text; i++) {
        ob_status st = ob_optim_set_option(j->o, j->text[i][0], j->text[i][1], e);
        if (st != OB_OK) {
            ob_err_prefix(e, "--set: ");
            return st;
        }
    }
    for (int i = 0; i < j->n_routes; i++) OB_TRY(ob_optim_add_route(j->o, j->routes[i], e));
    OB_TRY(ob_optim_route(j->o, &j->lay, e));
    OB_TRY(ob_layout_finalize(&j->lay, e));
    size_t bytes = (size_t)j->lay.total * sizeof(float);
    OB_TRY(ob_dev_alloc(dev, bytes, (void **)&j->p, e));
    OB_TRY(ob_dev_alloc(dev, bytes, (void **)&j->g, e));
    OB_TRY(ob_dev_alloc(dev, sizeof(float), (void **)&j->loss, e));
    OB_TRY(ob_dev_alloc(dev, sizeof(ob_step_record), (void **)&j->rec, e));
    OB_TRY(ob_optim_setup(j->o, dev, &j->lay, e));
    ob_optim_set_total_steps(j->o, j->grads.n);
    j->host = malloc((size_t)j->numel * sizeof *j->host);
    if (!j->host) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int64_t off = j->lay.t[0].offset;
    for (int64_t i = 0; i < j->numel; i++) j->host[i] = (float)j->init.v[0][i];
    OB_TRY(dev->ops->upload(dev, j->p + off, j->host, (size_t)j->numel * sizeof *j->host, e));
    const float zero = 0.0f;
    return dev->ops->upload(dev, j->loss, &zero, sizeof zero, e);
}

/* --out opened, then one step per gradient row, each writing the parameters after it. */
static ob_status replay_steps(replay_job *j, ob_err *e)
{
    ob_device *dev = &j->dev;
    const int64_t numel = j->numel, off = j->lay.t[0].offset;
    float *host = j->host;
    j->out = strcmp(j->out_path, "-") ? fopen(j->out_path, "w") : stdout;
    if (!j->out) { /* a missing or read-only folder is the path's fault; a full or failing disk is not */
        int en = errno;
        return ob_fail(e, en == ENOSPC || en == EIO || en == EDQUOT ? OB_ERR_IO : OB_ERR_INPUT,
                       "--out: cannot write '%s': %s", j->out_path, strerror(en));
    }
    for (int t = 1; t <= j->grads.n; t++) {
        for (int64_t i = 0; i < numel; i++) host[i] = (float)j->grads.v[t - 1][i];
        OB_TRY(dev->ops->upload(dev, j->g + off, host, (size_t)numel * sizeof *host, e));
        OB_TRY(ob_optim_step(j->o, j->p, j->g, j->loss, t, j->rec, e));
        OB_TRY(dev->ops->download(dev, host, j->p + off, (size_t)numel * sizeof *host, e));
        for (int64_t i = 0; i < numel; i++) fprintf(j->out, "%s%.9g", i ? "," : "", (double)host[i]);
        fputc('\n', j->out);
    }
    /* the standard output is not closed here: flush it to learn whether it was written */
    if (j->out == stdout && fflush(j->out) != 0)
        return ob_fail(e, OB_ERR_IO, "error writing the standard output: %s", strerror(errno));
    if (ferror(j->out)) return ob_fail(e, OB_ERR_IO, "error writing '%s'", j->out_path);
    return OB_OK;
}

/* --out closed, all the job holds freed: st, or the failure to close --out when st is OB_OK. */
static ob_status replay_finish(replay_job *j, ob_status st, ob_err *e)
{
    if (j->out && j->out != stdout && fclose(j->out) != 0 && st == OB_OK)
        st = ob_fail(e, OB_ERR_IO, "error writing '%s': %s", j->out_path, strerror(errno));
    free(j->host);
    ob_optim_destroy(j->o);
    ob_layout_free(&j->lay);
    if (j->dev.ops) ob_device_close(&j->dev);
    ob_rows_free(&j->init);
    ob_rows_free(&j->grads);
    return st;
}

static ob_status replay(const char *backend, const char *opt_name, const char *shape_s, const char *sets, const char **routes,
                        int n_routes, const char *init_path, const char *grads_path, const char *out_path,
                        ob_err *e)
{
    replay_job j = {.backend = backend, .shape_s = shape_s, .init_path = init_path, .grads_path = grads_path,
                    .out_path = out_path, .routes = routes, .n_routes = n_routes};
    OB_TRY(replay_settings(&j, opt_name, sets, e));
    OB_TRY(replay_read(&j, e));
    ob_status st = replay_check_rows(&j, e);
    if (st == OB_OK) st = replay_setup(&j, e);
    if (st == OB_OK) st = replay_steps(&j, e);
    return replay_finish(&j, st, e);
}

int ob_cmd_replay(int argc, char **argv)
{
    static const char *const single[] = {"--optimizer", "--shape", "--init", "--grads", "--out", "--backend"};
    ob_cli_once("replay", argc, argv, single, OB_CLI_COUNT(single));
    const char *opt = NULL, *shape = NULL, *init = NULL, *grads = NULL, *outp = NULL, *backend = "cpu";
    const char *routes[16];
    int n_routes = 0;
    char sets[4096] = "";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            replay_usage(stdout);
            return 0;
        }
        static const char *const opts[] = {"--optimizer", "--shape",   "--init", "--grads",
                                           "--out",       "--backend", "--set",  "--route"};
        if (ob_cli_valued_option("replay", argc, argv, i, opts, OB_CLI_COUNT(opts), OB_CLI_COUNT(opts))) return 2;
        const char *v = argv[++i];
        if (!strcmp(a, "--optimizer"))
            opt = v;
        else if (!strcmp(a, "--shape"))
            shape = v;
        else if (!strcmp(a, "--init"))
            init = v;
        else if (!strcmp(a, "--grads"))
            grads = v;
        else if (!strcmp(a, "--out"))
            outp = v;
        else if (!strcmp(a, "--backend"))
            backend = v;
        else if (!strcmp(a, "--set")) {
            if (strlen(sets) + strlen(v) + 2 >= sizeof sets) return ob_cli_error(2, "--set: too long");
            if (sets[0]) strcat(sets, ",");
            strcat(sets, v);
        } else if (!strcmp(a, "--route")) {
            if (n_routes == 16) return ob_cli_error(2, "--route: at most 16");
            routes[n_routes++] = v;
        }
    }
    const char *missing = !opt ? "--optimizer" : !shape ? "--shape" : !init ? "--init" : !grads ? "--grads"
                        : !outp ? "--out" : NULL;
    if (missing) return ob_cli_error(2, "replay needs %s (see optbench replay --help)", missing);
    ob_err e;
    ob_err_clear(&e);
    ob_status st = replay(backend, opt, shape, sets[0] ? sets : NULL, routes, n_routes, init, grads, outp, &e);
    if (st != OB_OK) return ob_cli_error(ob_exit_code(st), "replay: %s", e.msg);
    return 0;
}
