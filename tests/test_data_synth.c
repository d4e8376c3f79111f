/* tests/test_data_synth.c - the synthetic data of the bert and cnn workloads.
 *
 * bert: the exact Bayes-optimal masked-token loss (forward-backward) against
 * brute-force enumeration of every (topic, token) path on tiny chains; the
 * sampler against the chain's exact probabilities and the masking rates; a
 * batch's targets against its sequences. cnn: the templates are normalized and
 * the confusable pairs alike; synth_images is a pure function of (seed,
 * stream, index), whatever the batch boundaries. */
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "workloads/bert_data.h"
#include "workloads/cnn_data.h"

static double trans_prob(const ob_lang *g, int s, int u, int v)
{
    const int K = g->cfg.branch;
    for (int k = 0; k < K; k++)
        if (g->succ[u * K + k] == v) return g->trans[((int64_t)s * g->n_real + u) * K + k];
    return 0.0;
}

static double topic_prob(const ob_lang *g, int from, int to)
{
    int S = g->cfg.topics;
    if (S == 1) return 1.0;
    return from == to ? 1.0 - g->cfg.topic_switch : g->cfg.topic_switch / (S - 1);
}

/* P(x, topics) of a whole path. */
static double path_prob(const ob_lang *g, int T, const int *x, const int *s)
{
    double p = g->unigram[x[0]] / g->cfg.topics;
    for (int t = 1; t < T; t++) p *= topic_prob(g, s[t - 1], s[t]) * trans_prob(g, s[t], x[t - 1], x[t]);
    return p;
}

static double emit(const ob_lang *g, int y, int x, int target)
{
    const double p = g->cfg.mask_prob, mf = g->cfg.mask_token_frac, rf = g->cfg.random_token_frac;
    const double kf = 1.0 - mf - rf;
    double tgt = (y == g->mask_id ? mf : rf / g->n_real + (y == x ? kf : 0.0));
    return target ? tgt : (1.0 - p) * (y == x) + p * tgt;
}

/* Brute force: sum over targets i of -log P(x_i | y, i target). */
static double brute_nll(const ob_lang *g, int T, const int32_t *x, const int32_t *y, const uint8_t *tg)
{
    const int R = g->n_real, S = g->cfg.topics;
    int64_t nx = 1, ns = 1;
    for (int t = 0; t < T; t++) nx *= R, ns *= S;
    double total = 0.0;
    int xs[16], ss[16];
    for (int i = 0; i < T; i++) {
        if (!tg[i]) continue;
        double post[64] = {0};
        for (int64_t a = 0; a < nx; a++) {
            int64_t q = a;
            for (int t = 0; t < T; t++) xs[t] = (int)(q % R), q /= R;
            double e = 1.0;
            for (int t = 0; t < T; t++) e *= emit(g, y[t], xs[t], t == i);
            if (e == 0.0) continue;
            for (int64_t b = 0; b < ns; b++) {
                int64_t r = b;
                for (int t = 0; t < T; t++) ss[t] = (int)(r % S), r /= S;
                post[xs[i]] += e * path_prob(g, T, xs, ss);
            }
        }
        double z = 0.0;
        for (int v = 0; v < R; v++) z += post[v];
        total += -log(post[x[i]] / z);
    }
    return total;
}

static void test_floor_brute(int vocab, int topics, int branch, int T, double mask_prob, double mf, double rf)
{
    ob_lang g;
    ob_err e;
    ob_lang_config cfg = {.vocab = vocab, .topics = topics, .branch = branch, .zipf = 1.1, .topic_switch = 0.2,
                          .topic_spread = 1.5, .mask_prob = mask_prob, .mask_token_frac = mf,
                          .random_token_frac = rf};
    CHECK_OK(ob_lang_build(&g, &cfg, 5, &e), &e);
    int checked = 0;
    double worst = 0.0;
    for (uint64_t idx = 0; idx < 40 && checked < 12; idx++) {
        int32_t x[16], y[16];
        uint8_t tg[16];
        ob_lang_sample(&g, 17, OB_STREAM_EVAL, idx, T, x, y, tg);
        double nll;
        int nt;
        CHECK_OK(ob_lang_seq_nll(&g, T, x, y, tg, &nll, &nt, &e), &e);
        if (nt == 0) continue;
        double ref = brute_nll(&g, T, x, y, tg);
        worst = fmax(worst, fabs(nll - ref) / fmax(1.0, fabs(ref)));
        checked++;
    }
    CHECK_MSG(checked >= 8, "only %d sequences with targets", checked);
    CHECK_MSG(worst < 1e-9, "forward-backward vs brute force (V %d, S %d, K %d, T %d): rel. error %g", vocab,
              topics, branch, T, worst);
    ob_lang_free(&g);
}

/* Sampled paths follow the chain: empirical P(x0, x1, x2) against the exact
 * marginal, and the masking rates. */
static void test_sampler(void)
{
    ob_lang g;
    ob_err e;
    ob_lang_config cfg = {.vocab = 4, .topics = 2, .branch = 2, .zipf = 1.0, .topic_switch = 0.3,
                          .topic_spread = 1.0, .mask_prob = 0.15, .mask_token_frac = 0.8,
                          .random_token_frac = 0.1};
    CHECK_OK(ob_lang_build(&g, &cfg, 9, &e), &e);
    const int T = 3, R = 3, n = 200000;
    double cnt[27] = {0}, tgts = 0, masks = 0, randoms = 0, keeps = 0;
    int clean_ok = 1;
    for (int i = 0; i < n; i++) {
        int32_t x[3], y[3];
        uint8_t tg[3];
        ob_lang_sample(&g, 1, OB_STREAM_DATA, (uint64_t)i, T, x, y, tg);
        cnt[(x[0] * R + x[1]) * R + x[2]] += 1;
        for (int t = 0; t < T; t++) {
            if (!tg[t]) {
                clean_ok &= y[t] == x[t];
                continue;
            }
            tgts++;
            if (y[t] == g.mask_id)
                masks++;
            else if (y[t] == x[t])
                keeps++;
            else
                randoms++;
        }
    }
    CHECK(clean_ok);
    double worst = 0.0;
    for (int a = 0; a < 27; a++) {
        int xs[3] = {a / 9, (a / 3) % 3, a % 3}, ss[3];
        double p = 0.0;
        for (int b = 0; b < 8; b++) {
            ss[0] = b & 1, ss[1] = (b >> 1) & 1, ss[2] = (b >> 2) & 1;
            p += path_prob(&g, T, xs, ss);
        }
        double sd = sqrt(p * (1 - p) / n) + 1e-9;
        worst = fmax(worst, fabs(cnt[a] / n - p) / sd);
    }
    CHECK_MSG(worst < 5.0, "sampler vs chain: %.1f standard deviations", worst);
    double nt = (double)n * T;
    CHECK_NEAR(tgts / nt, 0.15, 0.003);
    CHECK_NEAR(masks / tgts, 0.8, 0.01);
    /* a random token equals the original 1/3 of the time: it then reads as "kept" */
    CHECK_NEAR(randoms / tgts, 0.1 * 2.0 / 3.0, 0.01);
    CHECK_NEAR(keeps / tgts, 0.1 + 0.1 / 3.0, 0.01);
    ob_lang_free(&g);
}

static void test_batch(void)
{
    ob_lang g;
    ob_err e;
    ob_lang_config cfg = {.vocab = 50, .topics = 3, .branch = 4, .zipf = 1.1, .topic_switch = 0.05,
                          .topic_spread = 1.5, .mask_prob = 0.3, .mask_token_frac = 0.8,
                          .random_token_frac = 0.1};
    CHECK_OK(ob_lang_build(&g, &cfg, 2, &e), &e);
    const int B = 4, T = 16;
    int32_t in[64], pos[64], tok[64], x[16], y[16];
    uint8_t tg[16];
    int M;
    ob_lang_batch(&g, 3, OB_STREAM_DATA, 8, B, T, in, pos, tok, &M);
    int m = 0, ok = 1;
    for (int b = 0; b < B; b++) {
        ob_lang_sample(&g, 3, OB_STREAM_DATA, 8 + (uint64_t)b, T, x, y, tg);
        for (int t = 0; t < T; t++) {
            ok &= in[b * T + t] == y[t] && x[t] >= 0 && x[t] < g.n_real;
            if (tg[t]) {
                ok &= m < M && pos[m] == b * T + t && tok[m] == x[t];
                m++;
            }
        }
    }
    CHECK(ok && m == M && M > 0);
    /* counting the targets draws the same flags as the batch does, for any
     * run of sequences (none too) */
    CHECK(ob_lang_count_targets(&g, 3, OB_STREAM_DATA, 8, B, T) == M);
    for (int f = 0; f < 3; f++)
        for (int n = 0; n <= 3; n++) {
            int Mn;
            ob_lang_batch(&g, 3, OB_STREAM_DATA, 8 + (uint64_t)f, n, T, in, pos, tok, &Mn);
            CHECK_MSG(ob_lang_count_targets(&g, 3, OB_STREAM_DATA, 8 + (uint64_t)f, n, T) == Mn,
                      "sequences %d .. %d: counted %d, batch %d", 8 + f, 8 + f + n - 1,
                      ob_lang_count_targets(&g, 3, OB_STREAM_DATA, 8 + (uint64_t)f, n, T), Mn);
        }
    /* the floor is below the entropy of the unigram and positive */
    double fl;
    CHECK_OK(ob_lang_floor(&g, 3, OB_STREAM_EVAL, 0, 64, T, &fl, &e), &e);
    double h = 0.0;
    for (int v = 0; v < g.n_real; v++) h -= g.unigram[v] * log(g.unigram[v]);
    CHECK_MSG(fl > 0.0 && fl < 0.8 * h, "floor %g, unigram entropy %g", fl, h);
    /* ... and it is the mean over the targets of each sequence's own
     * likelihood (checked by enumeration above), whichever sequences share a
     * block of the forward-backward with it: 21 sequences are two full
     * blocks of 8 different ones and a block of 5 padded (a floor not yet
     * remembered: another first sequence) */
    double fl21, tot = 0.0;
    int cnt = 0;
    CHECK_OK(ob_lang_floor(&g, 3, OB_STREAM_EVAL, 100, 21, T, &fl21, &e), &e);
    for (int i = 0; i < 21; i++) {
        double nll;
        int c;
        ob_lang_sample(&g, 3, OB_STREAM_EVAL, 100 + (uint64_t)i, T, x, y, tg);
        CHECK_OK(ob_lang_seq_nll(&g, T, x, y, tg, &nll, &c, &e), &e);
        tot += nll;
        cnt += c;
    }
    CHECK_MSG(cnt > 0 && fabs(fl21 - tot / cnt) <= 1e-12 * fabs(fl21), "floor %.17g, its sequences one by one %.17g",
              fl21, tot / cnt);
    ob_lang_free(&g);
}

/* every value of a batch is the specified one, bit for bit: contrast x the
 * circularly shifted template + noise x ob_rng_normal of the pixel's index */
static int images_exact(const ob_image_synth *a, const float *x, const int32_t *l, const float *tpl)
{
    const int H = a->H, W = a->W, C = a->C;
    const int64_t img = (int64_t)H * W * C;
    const uint32_t span = (uint32_t)(2 * a->max_shift + 1);
    int exact = 1;
    for (int b = 0; b < a->B; b++) {
        const uint64_t id = a->index0 + (uint64_t)b;
        ob_u32x4 r = ob_philox(a->seed, a->stream, id);
        int lab = (int)(((uint64_t)r.v[0] * (uint32_t)a->K) >> 32);
        int dy = (int)(((uint64_t)r.v[1] * span) >> 32) - a->max_shift;
        int dx = (int)(((uint64_t)r.v[2] * span) >> 32) - a->max_shift;
        float contrast = a->contrast_lo + (a->contrast_hi - a->contrast_lo) * ob_u32_to_unit(r.v[3]);
        exact &= l[b] == lab;
        for (int y = 0; y < H; y++)
            for (int xx = 0; xx < W; xx++)
                for (int c = 0; c < C; c++) {
                    int64_t pix = ((int64_t)y * W + xx) * C + c;
                    float t = tpl[lab * img + (((y - dy) % H + H) % H * W + ((xx - dx) % W + W) % W) * C + c];
                    float want = contrast * t + a->noise * ob_rng_normal(a->seed, a->stream + 1, id * img + pix);
                    exact &= memcmp(&want, &x[b * img + pix], sizeof want) == 0;
                }
    }
    return exact;
}

static void test_images(void)
{
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    const int K = 6, H = 10, W = 12, C = 3;
    const int64_t img = (int64_t)H * W * C;
    float *tpl = malloc((size_t)(K * img) * sizeof *tpl);
    CHECK_OK(ob_cnn_templates(tpl, K, H, W, C, 2, 0.3, 4, &e), &e);
    for (int k = 0; k < K; k++) {
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < img; i++) s += tpl[k * img + i], s2 += (double)tpl[k * img + i] * tpl[k * img + i];
        CHECK_NEAR(s / img, 0.0, 1e-5);
        CHECK_NEAR(s2 / img, 1.0, 1e-4);
    }
    double c01 = 0, c23 = 0, c45 = 0;
    for (int64_t i = 0; i < img; i++) {
        c01 += (double)tpl[i] * tpl[img + i];
        c23 += (double)tpl[2 * img + i] * tpl[3 * img + i];
        c45 += (double)tpl[4 * img + i] * tpl[5 * img + i];
    }
    c01 /= img, c23 /= img, c45 /= img;
    CHECK_MSG(c01 > 0.9 && c23 > 0.9 && fabs(c45) < 0.8, "pair correlations %g %g, unpaired %g", c01, c23, c45);
    /* partition invariance: images 3..5 of a batch of 6 == a batch of 3 from index 3 */
    ob_image_synth a = {.B = 6, .H = H, .W = W, .C = C, .K = K, .max_shift = 3, .noise = 0.7f, .contrast_lo = 0.5f,
                        .contrast_hi = 1.5f, .seed = 21, .stream = OB_STREAM_DATA, .index0 = 0};
    float *x6 = malloc((size_t)(6 * img) * sizeof *x6), *x3 = malloc((size_t)(3 * img) * sizeof *x3);
    int32_t l6[6], l3[3];
    CHECK_OK(dev.ops->synth_images(&dev, &a, x6, l6, tpl, &e), &e);
    a.B = 3;
    a.index0 = 3;
    CHECK_OK(dev.ops->synth_images(&dev, &a, x3, l3, tpl, &e), &e);
    CHECK(memcmp(x6 + 3 * img, x3, (size_t)(3 * img) * sizeof *x3) == 0);
    CHECK(memcmp(l6 + 3, l3, sizeof l3) == 0);
    {
        ob_image_synth a6 = a;
        a6.B = 6, a6.index0 = 0;
        CHECK_MSG(images_exact(&a6, x6, l6, tpl), "synth_images differs from its specified values");
    }
    /* long rows (303 values) */
    {
        ob_image_synth w = a;
        w.B = 2, w.H = 3, w.W = 101, w.C = 3, w.K = 1;
        float *tw = malloc((size_t)(w.H * w.W * w.C) * sizeof *tw);
        float *xw = malloc((size_t)(2 * w.H * w.W * w.C) * sizeof *xw);
        int32_t lw[2];
        for (int i = 0; i < w.H * w.W * w.C; i++) tw[i] = (float)i * 0.01f;
        CHECK_OK(dev.ops->synth_images(&dev, &w, xw, lw, tw, &e), &e);
        CHECK_MSG(images_exact(&w, xw, lw, tw), "synth_images differs from its specified values in long rows");
        free(tw), free(xw);
    }
    /* noise-free images are shifted, scaled templates */
    a.noise = 0.0f;
    a.B = 1;
    a.index0 = 5;
    CHECK_OK(dev.ops->synth_images(&dev, &a, x3, l3, tpl, &e), &e);
    double best = 0;
    for (int dy = -3; dy <= 3; dy++)
        for (int dx = -3; dx <= 3; dx++) {
            double dot = 0, nn = 0;
            for (int y = 0; y < H; y++)
                for (int xx = 0; xx < W; xx++)
                    for (int c = 0; c < C; c++) {
                        float t = tpl[l3[0] * img + (((y - dy + H) % H) * W + (xx - dx + W) % W) * C + c];
                        dot += (double)t * x3[(y * W + xx) * C + c];
                        nn += (double)x3[(y * W + xx) * C + c] * x3[(y * W + xx) * C + c];
                    }
            best = fmax(best, dot / sqrt(nn * img));
        }
    CHECK_NEAR(best, 1.0, 1e-5);
    /* labels cover the classes */
    int seen[6] = {0};
    int32_t lab[200];
    float *big = malloc((size_t)(200 * img) * sizeof *big);
    a.B = 200;
    a.index0 = 0;
    CHECK_OK(dev.ops->synth_images(&dev, &a, big, lab, tpl, &e), &e);
    for (int i = 0; i < 200; i++) seen[lab[i]]++;
    for (int k = 0; k < K; k++) CHECK(seen[k] > 15);
    free(big), free(tpl), free(x6), free(x3);
    ob_device_close(&dev);
}

int main(void)
{
    test_floor_brute(4, 2, 2, 5, 0.5, 0.5, 0.3);  /* every emission kind */
    test_floor_brute(5, 1, 3, 5, 0.4, 0.8, 0.1);  /* one topic */
    test_floor_brute(4, 3, 2, 4, 0.6, 0.0, 0.5);  /* no [MASK] at all */
    test_floor_brute(3, 2, 1, 6, 0.5, 0.8, 0.1);  /* deterministic successors */
    test_sampler();
    test_batch();
    test_images();
    return check_done();
}
