/* tests/wl_export.c - one training step of a bert or cnn workload on the CPU
 * backend, written out for scripts/models_torch.py to recompute in PyTorch.
 *
 *   wl_export WORKLOAD OUTDIR [--set k=v,...] [--seed N] [--step N] [--perturb X]
 *
 * Opens the workload with the settings, initialises its parameters from the
 * seed, adds perturb * N(0, 1) (a fixed stream of its own) to every 1-D tensor
 * (biases, LayerNorm and group-norm gains and shifts, which start at 0 or 1
 * and would otherwise test little), runs train_step at the step, and writes
 * into OUTDIR (which must exist):
 *   meta.json    workload, settings, seed, step, loss, the tensor table
 *                (name, shape, offset, numel) and the arena size in floats;
 *   params.f32   the parameter arena, grads.f32 the gradient arena (float32,
 *                native byte order, `total` floats each, padding included);
 *   bert: tokens.i32 (batch*seq input tokens), pos.i32 and tgt.i32 (the
 *         flat positions and clean tokens of the loss's targets; meta "M");
 *   cnn:  images.f32 (batch, image, image, channels) NHWC, labels.i32.
 * The batch is drawn again through the public generators exactly as the
 * workload draws it (bert: ob_lang_build and ob_lang_batch with the run seed
 * and OB_STREAM_DATA, capped at the workload's Mcap; cnn: ob_cnn_templates
 * and the backend's synth_images op); the loss that PyTorch computes from it
 * checks that it is the same batch. A tool, not a test: exit 0 on success, 1
 * with a message otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "workloads/bert_data.h"
#include "workloads/cnn_data.h"
#include "workloads/workload.h"

static void die(const char *what, const ob_err *e)
{
    fprintf(stderr, "wl_export: %s%s%s\n", what, e ? ": " : "", e ? e->msg : "");
    exit(1);
}

static void write_file(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (bytes && fwrite(p, 1, bytes, f) != bytes) || fclose(f) != 0) {
        fprintf(stderr, "wl_export: cannot write %s\n", path);
        exit(1);
    }
}

/* bert's batch of the step (world 1): as bert_train_step draws it. */
static int bert_batch(const ob_hp_values *hv, uint64_t seed, int64_t step, int32_t **tok, int32_t **pos,
                      int32_t **tgt, int *M)
{
    ob_err e;
    const int B = (int)ob_hp_get(hv, "batch"), T = (int)ob_hp_get(hv, "seq");
    const ob_lang_config lc = ob_lang_config_of(hv);
    ob_lang g;
    if (ob_lang_build(&g, &lc, (uint64_t)ob_hp_get(hv, "data_seed"), &e) != OB_OK) die("ob_lang_build", &e);
    const int N = B * T;
    *tok = malloc((size_t)N * sizeof **tok);
    *pos = malloc((size_t)N * sizeof **pos);
    *tgt = malloc((size_t)N * sizeof **tgt);
    if (!*tok || !*pos || !*tgt) die("out of memory", NULL);
    ob_lang_batch(&g, seed, OB_STREAM_DATA, (uint64_t)step * (uint64_t)B, B, T, *tok, *pos, *tgt, M);
    /* the targets beyond the cap are left out of the loss, as bert.c does */
    const int mcap = ob_lang_target_cap(N, lc.mask_prob);
    if (*M > mcap) *M = mcap;
    ob_lang_free(&g);
    return N;
}

/* cnn's images and labels of the step (world 1): as cnn_train_step draws them. */
static void cnn_batch(ob_device *dev, const ob_hp_values *hv, uint64_t seed, int64_t step, float *img,
                      int32_t *lab)
{
    ob_err e;
    const int B = (int)ob_hp_get(hv, "batch"), S = (int)ob_hp_get(hv, "image"), C = (int)ob_hp_get(hv, "channels");
    const int K = (int)ob_hp_get(hv, "classes");
    const int64_t per = (int64_t)S * S * C;
    float *th = malloc((size_t)(K * per) * sizeof *th), *td, *id;
    int32_t *ld;
    if (!th) die("out of memory", NULL);
    if (ob_cnn_templates(th, K, S, S, C, (int)ob_hp_get(hv, "confusable_pairs"), ob_hp_get(hv, "confusion"),
                         (uint64_t)ob_hp_get(hv, "data_seed"), &e) != OB_OK)
        die("ob_cnn_templates", &e);
    if (ob_dev_alloc(dev, (size_t)(K * per) * sizeof(float), (void **)&td, &e) != OB_OK ||
        ob_dev_alloc(dev, (size_t)(B * per) * sizeof(float), (void **)&id, &e) != OB_OK ||
        ob_dev_alloc(dev, (size_t)B * sizeof(int32_t), (void **)&ld, &e) != OB_OK ||
        dev->ops->upload(dev, td, th, (size_t)(K * per) * sizeof(float), &e) != OB_OK)
        die("device", &e);
    ob_image_synth a = {
        .B = B, .H = S, .W = S, .C = C, .K = K, .max_shift = (int)ob_hp_get(hv, "max_shift"),
        .noise = (float)ob_hp_get(hv, "noise"), .contrast_lo = (float)ob_hp_get(hv, "contrast_lo"),
        .contrast_hi = (float)ob_hp_get(hv, "contrast_hi"),
        .seed = seed, .stream = OB_STREAM_DATA, .index0 = (uint64_t)step * (uint64_t)B,
    };
    if (dev->ops->synth_images(dev, &a, id, ld, td, &e) != OB_OK ||
        dev->ops->download(dev, img, id, (size_t)(B * per) * sizeof(float), &e) != OB_OK ||
        dev->ops->download(dev, lab, ld, (size_t)B * sizeof(int32_t), &e) != OB_OK)
        die("synth_images", &e);
    ob_dev_free(dev, td);
    ob_dev_free(dev, id);
    ob_dev_free(dev, ld);
    free(th);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: wl_export WORKLOAD OUTDIR [--set k=v,...] [--seed N] [--step N] [--perturb X]\n");
        return 1;
    }
    const char *name = argv[1], *dir = argv[2], *sets = "";
    uint64_t seed = 1;
    int64_t step = 0;
    double perturb = 0.0;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) die("an option without its value", NULL);
        if (strcmp(argv[i], "--set") == 0) sets = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--step") == 0) step = strtoll(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--perturb") == 0) perturb = strtod(argv[++i], NULL);
        else die("unknown option (--set, --seed, --step, --perturb)", NULL);
    }
    const ob_workload_def *d = ob_workload_find(name);
    if (!d) die("unknown workload", NULL);
    const int is_bert = strncmp(name, "bert", 4) == 0, is_cnn = strncmp(name, "cnn", 3) == 0;
    if (!is_bert && !is_cnn) die("only the bert and cnn workloads are exported", NULL);
    ob_err e;
    ob_device dev;
    ob_layout lay;
    ob_workload *w;
    ob_hp_values hv;
    if (ob_device_open(&dev, "cpu", 0, &e) != OB_OK) die("cpu device", &e);
    ob_hp_defaults(&hv, d->hp, d->n_hp);
    if (*sets && ob_hp_set_list(&hv, name, sets, &e) != OB_OK) die("settings", &e);
    if (d->create(d, &hv, &dev, seed, &w, &e) != OB_OK) die("create", &e);
    ob_layout_init(&lay);
    if (w->vt->describe(w, &lay, &e) != OB_OK) die("describe", &e);
    for (int i = 0; i < lay.n; i++) lay.t[i].group = 0;
    if (ob_layout_finalize(&lay, &e) != OB_OK) die("layout", &e);
    const size_t bytes = (size_t)lay.total * sizeof(float);
    float *p, *g, *loss;
    if (ob_dev_alloc(&dev, bytes, (void **)&p, &e) != OB_OK || ob_dev_alloc(&dev, bytes, (void **)&g, &e) != OB_OK ||
        ob_dev_alloc(&dev, sizeof(float), (void **)&loss, &e) != OB_OK)
        die("alloc", &e);
    if (dev.ops->fill(&dev, p, 0.0f, lay.total, &e) != OB_OK) die("fill", &e);
    if (w->vt->setup(w, &lay, &e) != OB_OK) die("setup", &e);
    if (w->vt->init_params(w, p, &e) != OB_OK) die("init_params", &e);
    float *ph = malloc(bytes), *gh = malloc(bytes);
    if (!ph || !gh) die("out of memory", NULL);
    if (dev.ops->download(&dev, ph, p, bytes, &e) != OB_OK) die("download", &e);
    for (int i = 0; i < lay.n; i++) {
        const ob_tensor *t = &lay.t[i];
        if (t->ndim != 1 || perturb == 0.0) continue;
        for (int64_t j = 0; j < t->numel; j++)
            ph[t->offset + j] += (float)(perturb * ob_rng_normal(seed, OB_STREAM_MISC + 0x100 + (uint64_t)i, (uint64_t)j));
    }
    float lh;
    if (dev.ops->upload(&dev, p, ph, bytes, &e) != OB_OK || w->vt->train_step(w, p, g, step, loss, &e) != OB_OK ||
        dev.ops->download(&dev, gh, g, bytes, &e) != OB_OK || dev.ops->download(&dev, &lh, loss, sizeof lh, &e) != OB_OK)
        die("train_step", &e);
    write_file(dir, "params.f32", ph, bytes);
    write_file(dir, "grads.f32", gh, bytes);

    int M = -1;
    if (is_bert) {
        int32_t *tok, *pos, *tgt;
        int N = bert_batch(&hv, seed, step, &tok, &pos, &tgt, &M);
        write_file(dir, "tokens.i32", tok, (size_t)N * sizeof *tok);
        write_file(dir, "pos.i32", pos, (size_t)M * sizeof *pos);
        write_file(dir, "tgt.i32", tgt, (size_t)M * sizeof *tgt);
        free(tok);
        free(pos);
        free(tgt);
    } else {
        const int B = (int)ob_hp_get(&hv, "batch"), S = (int)ob_hp_get(&hv, "image");
        const int64_t n = (int64_t)B * S * S * (int64_t)ob_hp_get(&hv, "channels");
        float *img = malloc((size_t)n * sizeof *img);
        int32_t *lab = malloc((size_t)B * sizeof *lab);
        if (!img || !lab) die("out of memory", NULL);
        cnn_batch(&dev, &hv, seed, step, img, lab);
        write_file(dir, "images.f32", img, (size_t)n * sizeof *img);
        write_file(dir, "labels.i32", lab, (size_t)B * sizeof *lab);
        free(img);
        free(lab);
    }

    char hj[4096], path[4096];
    ob_hp_to_json(&hv, hj, sizeof hj);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) die("cannot write meta.json", NULL);
    fprintf(f, "{\"workload\": \"%s\", \"settings\": %s, \"seed\": %llu, \"step\": %lld, \"perturb\": %.17g,\n",
            name, hj, (unsigned long long)seed, (long long)step, perturb);
    fprintf(f, " \"loss\": %.9g, \"total\": %lld, \"M\": %d,\n \"tensors\": [\n", (double)lh, (long long)lay.total, M);
    for (int i = 0; i < lay.n; i++) {
        const ob_tensor *t = &lay.t[i];
        fprintf(f, "  {\"name\": \"%s\", \"shape\": [", t->name);
        for (int k = 0; k < t->ndim; k++) fprintf(f, "%s%lld", k ? ", " : "", (long long)t->shape[k]);
        fprintf(f, "], \"offset\": %lld, \"numel\": %lld}%s\n", (long long)t->offset, (long long)t->numel,
                i + 1 < lay.n ? "," : "");
    }
    fprintf(f, " ]}\n");
    if (fclose(f) != 0) die("cannot write meta.json", NULL);
    free(ph);
    free(gh);
    ob_dev_free(&dev, p);
    ob_dev_free(&dev, g);
    ob_dev_free(&dev, loss);
    w->vt->destroy(w);
    ob_layout_free(&lay);
    ob_device_close(&dev);
    return 0;
}
