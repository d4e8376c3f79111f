/* workloads/bert_data.c - the synthetic language of the bert workload: its
 * construction, sampling with BERT-style masking, and the exact Bayes-optimal
 * masked-token loss by forward-backward (see bert_data.h for the model). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "workloads/bert_data.h"

/* Uniform double in (0, 1) from one 32-bit word. */
static double unit_u32(uint32_t w)
{
    return ((double)w + 0.5) * (1.0 / 4294967296.0);
}

static uint32_t below_u32(uint32_t w, uint32_t n)
{
    return (uint32_t)(((uint64_t)w * n) >> 32);
}

/* First index i with cdf[i] > u (cdf increasing, cdf[n-1] == 1). */
static int cdf_search(const double *cdf, int n, double u)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void ob_lang_free(ob_lang *g)
{
    free(g->succ);
    free(g->trans);
    free(g->trans_cdf);
    free(g->trans_rks);
    free(g->unigram);
    free(g->unigram_cdf);
    memset(g, 0, sizeof *g);
}

ob_lang_config ob_lang_config_of(const ob_hp_values *hp)
{
    ob_lang_config lc = {
        .vocab = (int)ob_hp_get(hp, "vocab"),
        .topics = (int)ob_hp_get(hp, "topics"),
        .branch = (int)ob_hp_get(hp, "branch"),
        .zipf = ob_hp_get(hp, "zipf"),
        .topic_switch = ob_hp_get(hp, "topic_switch"),
        .topic_spread = ob_hp_get(hp, "topic_spread"),
        .mask_prob = ob_hp_get(hp, "mask_prob"),
        .mask_token_frac = ob_hp_get(hp, "mask_token_frac"),
        .random_token_frac = ob_hp_get(hp, "random_token_frac"),
    };
    return lc;
}

int ob_lang_target_cap(int n, double p)
{
    double cap = n * p + 8.0 * sqrt(n * p * (1.0 - p)) + 16.0;
    return cap >= n ? n : (int)cap;
}

ob_status ob_lang_build(ob_lang *g, const ob_lang_config *cfg, uint64_t data_seed, ob_err *e)
{
    memset(g, 0, sizeof *g);
    const int V = cfg->vocab, S = cfg->topics, K = cfg->branch;
    if (V < 3) return ob_fail(e, OB_ERR_INPUT, "vocab = %d is too small (at least 3: two tokens and [MASK])", V);
    if (S < 1) return ob_fail(e, OB_ERR_INPUT, "topics = %d must be at least 1", S);
    if (K < 1 || K >= V - 1)
        return ob_fail(e, OB_ERR_INPUT, "branch = %d must be in [1, vocab - 2] = [1, %d]", K, V - 2);
    if (cfg->mask_token_frac + cfg->random_token_frac > 1.0 + 1e-12)
        return ob_fail(e, OB_ERR_INPUT, "mask_token_frac + random_token_frac = %g exceeds 1",
                       cfg->mask_token_frac + cfg->random_token_frac);
    g->cfg = *cfg;
    g->data_seed = data_seed;
    g->n_real = V - 1;
    g->mask_id = V - 1;
    const int R = g->n_real;
    g->succ = malloc((size_t)R * K * sizeof *g->succ);
    g->trans = malloc((size_t)S * R * K * sizeof *g->trans);
    g->trans_cdf = malloc((size_t)S * R * K * sizeof *g->trans_cdf);
    g->trans_rks = malloc((size_t)S * R * K * sizeof *g->trans_rks);
    g->unigram = malloc((size_t)R * sizeof *g->unigram);
    g->unigram_cdf = malloc((size_t)R * sizeof *g->unigram_cdf);
    unsigned char *used = calloc((size_t)R, 1);
    if (!g->succ || !g->trans || !g->trans_cdf || !g->trans_rks || !g->unigram || !g->unigram_cdf || !used) {
        free(used);
        ob_lang_free(g);
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for a language of %d tokens", V);
    }
    double z = 0.0;
    for (int r = 0; r < R; r++) z += g->unigram[r] = pow(r + 1.0, -cfg->zipf);
    double c = 0.0;
    for (int r = 0; r < R; r++) {
        g->unigram[r] /= z;
        c += g->unigram[r];
        g->unigram_cdf[r] = c;
    }
    g->unigram_cdf[R - 1] = 1.0;
    /* Successors: K distinct draws from u (rejection, then the first unused). */
    for (int v = 0; v < R; v++) {
        int32_t *sv = g->succ + (int64_t)v * K;
        int have = 0;
        for (uint64_t a = 0; have < K && a < (uint64_t)64 * K; a++) {
            uint32_t w = ob_philox(data_seed, OB_STREAM_WORLD, (uint64_t)v * 65536u + a).v[0];
            int cand = cdf_search(g->unigram_cdf, R, unit_u32(w));
            if (!used[cand]) {
                used[cand] = 1;
                sv[have++] = cand;
            }
        }
        for (int cand = 0; have < K && cand < R; cand++)
            if (!used[cand]) {
                used[cand] = 1;
                sv[have++] = cand;
            }
        for (int k = 0; k < K; k++) used[sv[k]] = 0;
    }
    free(used);
    /* Per-topic log-normal weights over the successors. */
    for (int s = 0; s < S; s++)
        for (int v = 0; v < R; v++) {
            int64_t row = ((int64_t)s * R + v) * K;
            double tot = 0.0;
            for (int k = 0; k < K; k++) {
                double n = ob_rng_normal(data_seed, OB_STREAM_WORLD + 1, (uint64_t)(row + k));
                tot += g->trans[row + k] = exp(cfg->topic_spread * n);
            }
            double cum = 0.0;
            for (int k = 0; k < K; k++) {
                g->trans[row + k] /= tot;
                cum += g->trans[row + k];
                g->trans_cdf[row + k] = cum;
            }
            g->trans_cdf[row + K - 1] = 1.0;
            for (int k = 0; k < K; k++) g->trans_rks[((int64_t)v * K + k) * S + s] = g->trans[row + k];
        }
    return OB_OK;
}

/* Whether a position is a target: its own counter's draw on stream + 1,
 * apart from the token chain (ob_lang_count_targets counts without it). */
static inline int target_draw(ob_u32x4 q, double p)
{
    return unit_u32(q.v[0]) < p;
}

void ob_lang_sample(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t index, int T, int32_t *x,
                    int32_t *y, uint8_t *tgt)
{
    const int S = g->cfg.topics, K = g->cfg.branch, R = g->n_real;
    const double p = g->cfg.mask_prob, mf = g->cfg.mask_token_frac, rf = g->cfg.random_token_frac;
    int s = 0, prev = 0;
    for (int t = 0; t < T; t++) {
        uint64_t ctr = index * (uint64_t)T + (uint64_t)t;
        ob_u32x4 r = ob_philox(seed, stream, ctr);
        int tok;
        if (t == 0) {
            s = (int)below_u32(r.v[1], (uint32_t)S);
            tok = cdf_search(g->unigram_cdf, R, unit_u32(r.v[2]));
        } else {
            if (S > 1 && unit_u32(r.v[0]) < g->cfg.topic_switch)
                s = (s + 1 + (int)below_u32(r.v[1], (uint32_t)(S - 1))) % S;
            int64_t row = ((int64_t)s * R + prev) * K;
            tok = g->succ[(int64_t)prev * K + cdf_search(g->trans_cdf + row, K, unit_u32(r.v[2]))];
        }
        prev = tok;
        if (x) x[t] = tok;
        if (y || tgt) {
            ob_u32x4 q = ob_philox(seed, stream + 1, ctr);
            int is_t = target_draw(q, p);
            int in = tok;
            if (is_t) {
                double u = unit_u32(q.v[1]);
                if (u < mf)
                    in = g->mask_id;
                else if (u < mf + rf)
                    in = (int)below_u32(q.v[2], (uint32_t)R);
            }
            if (y) y[t] = in;
            if (tgt) tgt[t] = (uint8_t)is_t;
        }
    }
}

void ob_lang_batch(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int B, int T,
                   int32_t *input, int32_t *tgt_pos, int32_t *tgt_tok, int *M)
{
    int32_t xs[4096];
    uint8_t ts[4096];
    int32_t *x = T <= 4096 ? xs : malloc((size_t)T * sizeof *x);
    uint8_t *tg = T <= 4096 ? ts : malloc((size_t)T);
    int m = 0;
    for (int b = 0; b < B; b++) {
        ob_lang_sample(g, seed, stream, first + (uint64_t)b, T, x, input + (int64_t)b * T, tg);
        for (int t = 0; t < T; t++)
            if (tg[t]) {
                tgt_pos[m] = b * T + t;
                tgt_tok[m] = x[t];
                m++;
            }
    }
    *M = m;
    if (x != xs) free(x);
    if (tg != ts) free(tg);
}

int ob_lang_count_targets(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int B, int T)
{
    const double p = g->cfg.mask_prob;
    const uint64_t c0 = first * (uint64_t)T, n = (uint64_t)(B > 0 ? B : 0) * (uint64_t)T;
    int m = 0;
    for (uint64_t i = 0; i < n; i++) m += target_draw(ob_philox(seed, stream + 1, c0 + i), p);
    return m;
}

/* Emission weights of the observed y over all real x, as (delta, base):
 * e(y|x) = base + delta [x == y] (y real) or base (y == MASK). */
static void emission(const ob_lang *g, int y, int target, double *base, double *delta)
{
    const double p = g->cfg.mask_prob, mf = g->cfg.mask_token_frac, rf = g->cfg.random_token_frac;
    const double kf = 1.0 - mf - rf;
    if (target) {
        *base = y == g->mask_id ? mf : rf / g->n_real;
        *delta = y == g->mask_id ? 0.0 : kf;
    } else {
        *base = y == g->mask_id ? p * mf : p * rf / g->n_real;
        *delta = y == g->mask_id ? 0.0 : (1.0 - p) + p * kf;
    }
}

/* Forward-backward over nb sequences at once. Messages are (R, S, nb)
 * arrays, sequences innermost: every transition probability read from memory
 * serves the nb sequences (the chain's tables are megabytes for a large
 * vocabulary, so one sequence at a time is bound by memory bandwidth). */
#define FB_BATCH 8

/* Topic mixing in place: out(x,s,j) = cs a(x,s,j) + co sum_s' a(x,s',j). */
static void mix_topics(const ob_lang *g, double *a, int nb)
{
    const int S = g->cfg.topics, R = g->n_real;
    if (S == 1) return;
    const double co = g->cfg.topic_switch / (S - 1), cs = 1.0 - g->cfg.topic_switch - co;
    for (int x = 0; x < R; x++) {
        double *ax = a + (int64_t)x * S * nb, tot[FB_BATCH] = {0};
        for (int s = 0; s < S; s++)
            for (int j = 0; j < nb; j++) tot[j] += ax[s * nb + j];
        for (int s = 0; s < S; s++)
            for (int j = 0; j < nb; j++) ax[s * nb + j] = cs * ax[s * nb + j] + co * tot[j];
    }
}

/* a = m * e_t per sequence (emission of y[j*T + t]), then each sequence's
 * slice of a (and, when norm_to is not NULL, rescaled to sum to norm_to). */
static void apply_emission(const ob_lang *g, double *a, const double *m, int nb, int T, int t, const int32_t *y,
                           double norm_to)
{
    const int S = g->cfg.topics, R = g->n_real;
    double base[FB_BATCH], delta[FB_BATCH], z[FB_BATCH] = {0};
    for (int j = 0; j < nb; j++) emission(g, y[(int64_t)j * T + t], 0, &base[j], &delta[j]);
    for (int64_t vs = 0; vs < (int64_t)R * S; vs++)
        for (int j = 0; j < nb; j++) {
            double v = m[vs * nb + j] * base[j];
            a[vs * nb + j] = v;
            z[j] += v;
        }
    for (int j = 0; j < nb; j++) {
        int yj = y[(int64_t)j * T + t];
        if (delta[j] == 0.0) continue;
        for (int s = 0; s < S; s++) {
            int64_t i = ((int64_t)yj * S + s) * nb + j;
            a[i] += m[i] * delta[j];
            z[j] += m[i] * delta[j];
        }
    }
    for (int j = 0; j < nb; j++) z[j] = norm_to / z[j];
    for (int64_t vs = 0; vs < (int64_t)R * S; vs++)
        for (int j = 0; j < nb; j++) a[vs * nb + j] *= z[j];
}

/* The working memory of lang_nll_block: messages (R, S, FB_BATCH) and the
 * positions where some sequence has a target. */
typedef struct fb_work {
    double *a, *m, *bt, *h; /* forward message, prediction, backward message, scratch */
    double *store;          /* m at the positions with a target, ntot of them */
    uint8_t *tany;          /* some sequence has a target at t */
    int *slot_of;           /* t's index in store, -1 where no sequence has a target */
    int ntot;
} fb_work;

/* Doubles in one message: (R, S, FB_BATCH). */
static int64_t msg_len(const ob_lang *g)
{
    return (int64_t)g->n_real * g->cfg.topics * FB_BATCH;
}

/* Frees what w holds (its pointers may be NULL). */
static void fb_free(fb_work *w)
{
    free(w->a);
    free(w->m);
    free(w->bt);
    free(w->h);
    free(w->store);
    free(w->tany);
    free(w->slot_of);
}

/* Allocates w's messages and store (w->ntot predictions); 0 when one of
 * them is out of memory (fb_free frees the others). */
static int fb_alloc_messages(const ob_lang *g, fb_work *w)
{
    const int64_t W = msg_len(g);
    w->a = malloc((size_t)W * sizeof *w->a);
    w->m = malloc((size_t)W * sizeof *w->m);
    w->bt = malloc((size_t)W * sizeof *w->bt);
    w->h = malloc((size_t)W * sizeof *w->h);
    w->store = malloc((size_t)w->ntot * (size_t)W * sizeof *w->store);
    return w->a && w->m && w->bt && w->h && w->store;
}

/* Zeroes nll[j] and counts the targets of each of the FB_BATCH sequences
 * tgt (each of length T) into cnt[j]. */
static void count_targets(int T, const uint8_t *tgt, double *nll, int *cnt)
{
    enum { nb = FB_BATCH };
    for (int j = 0; j < nb; j++) {
        cnt[j] = 0;
        nll[j] = 0.0;
        for (int t = 0; t < T; t++) cnt[j] += tgt[(int64_t)j * T + t] != 0;
    }
}

/* Marks the positions where some sequence has a target: w->tany[t] (zero
 * on entry), w->slot_of[t] their index in store (-1 elsewhere) and w->ntot
 * their number. Returns whether there is any. */
static int mark_targets(int T, const uint8_t *tgt, fb_work *w)
{
    enum { nb = FB_BATCH };
    int any_t = 0;
    for (int t = 0; t < T; t++) {
        for (int j = 0; j < nb; j++) w->tany[t] |= tgt[(int64_t)j * T + t] != 0;
        w->slot_of[t] = w->tany[t] ? w->ntot++ : -1;
        any_t |= w->tany[t];
    }
    return any_t;
}

/* The prediction m of the first position: the unigram, spread evenly over
 * the topics. */
static void predict_first(const ob_lang *g, double *m)
{
    enum { nb = FB_BATCH };
    const int S = g->cfg.topics, R = g->n_real;
    for (int v = 0; v < R; v++)
        for (int i = 0; i < S * nb; i++) m[(int64_t)v * S * nb + i] = g->unigram[v] / S;
}

/* The prediction m of the next position from the forward message a (topics
 * mixed): m(succ, s) = sum over the tokens v of a(v, s) A_s(v, succ). */
static void predict_next(const ob_lang *g, const double *a, double *m)
{
    enum { nb = FB_BATCH };
    const int S = g->cfg.topics, K = g->cfg.branch, R = g->n_real;
    memset(m, 0, (size_t)msg_len(g) * sizeof *m);
    for (int v = 0; v < R; v++) {
        const double *av = a + (int64_t)v * S * nb;
        const int32_t *sv = g->succ + (int64_t)v * K;
        const double *pv = g->trans_rks + (int64_t)v * K * S;
        for (int k = 0; k < K; k++) {
            double *ms = m + (int64_t)sv[k] * S * nb;
            const double *pk = pv + (int64_t)k * S;
            for (int s2 = 0; s2 < S; s2++) {
                const double w = pk[s2];
#pragma omp simd
                for (int j = 0; j < nb; j++) ms[s2 * nb + j] += av[s2 * nb + j] * w;
            }
        }
    }
}

/* Forward: m_t = prediction of (token, topic) at t from y_<t, kept in
 * w->store where some sequence has a target; a_t = m_t e_t. */
static void forward_pass(const ob_lang *g, int T, const int32_t *y, fb_work *w)
{
    enum { nb = FB_BATCH };
    const int64_t W = msg_len(g);
    for (int t = 0; t < T; t++) {
        if (t == 0) {
            predict_first(g, w->m);
        } else {
            mix_topics(g, w->a, nb);
            predict_next(g, w->a, w->m);
        }
        if (w->tany[t]) memcpy(w->store + (int64_t)w->slot_of[t] * W, w->m, (size_t)W * sizeof *w->m);
        apply_emission(g, w->a, w->m, nb, T, t, y, 1.0);
    }
}

/* nll[j] += -log P(x_j | y_j) at t for each sequence j with a target at t,
 * from the prediction mt and the backward message bt of t. */
static void add_target_nll(const ob_lang *g, int T, int t, const int32_t *x, const int32_t *y, const uint8_t *tgt,
                           const double *mt, const double *bt, double *nll)
{
    enum { nb = FB_BATCH };
    const int S = g->cfg.topics, R = g->n_real;
    for (int j = 0; j < nb; j++) {
        if (!tgt[(int64_t)j * T + t]) continue;
        int yj = y[(int64_t)j * T + t], xj = x[(int64_t)j * T + t];
        double base, delta, zt = 0.0, pt = 0.0;
        emission(g, yj, 1, &base, &delta);
        for (int v = 0; v < R; v++) {
            double q = 0.0;
            for (int s2 = 0; s2 < S; s2++) {
                int64_t i = ((int64_t)v * S + s2) * nb + j;
                q += mt[i] * bt[i];
            }
            q *= base + (v == yj ? delta : 0.0);
            zt += q;
            if (v == xj) pt = q;
        }
        nll[j] += -log(pt / zt);
    }
}

/* bt(u, s) = sum_k A_s(u, succ) h(succ, s): the backward message of the
 * position before h's. */
static void step_back_transition(const ob_lang *g, const double *h, double *bt)
{
    enum { nb = FB_BATCH };
    const int S = g->cfg.topics, K = g->cfg.branch, R = g->n_real;
    for (int u = 0; u < R; u++) {
        const int32_t *su = g->succ + (int64_t)u * K;
        const double *pu = g->trans_rks + (int64_t)u * K * S;
        double *bu = bt + (int64_t)u * S * nb;
        for (int i = 0; i < S * nb; i++) bu[i] = 0.0;
        for (int k = 0; k < K; k++) {
            const double *hk = h + (int64_t)su[k] * S * nb, *pk = pu + (int64_t)k * S;
            for (int s2 = 0; s2 < S; s2++) {
                const double w = pk[s2];
#pragma omp simd
                for (int j = 0; j < nb; j++) bu[s2 * nb + j] += w * hk[s2 * nb + j];
            }
        }
    }
}

/* Rescales each sequence's slice of bt to mean 1. */
static void rescale_mean_one(const ob_lang *g, double *bt)
{
    enum { nb = FB_BATCH };
    const int S = g->cfg.topics, R = g->n_real;
    double z[FB_BATCH] = {0};
    for (int64_t vs = 0; vs < (int64_t)R * S; vs++)
        for (int j = 0; j < nb; j++) z[j] += bt[vs * nb + j];
    for (int j = 0; j < nb; j++) z[j] = (double)R * S / z[j];
    for (int64_t vs = 0; vs < (int64_t)R * S; vs++)
        for (int j = 0; j < nb; j++) bt[vs * nb + j] *= z[j];
}

/* Backward: bt_t(v, s) = P(y_>t | token v, topic s at t), rescaled; at each
 * position with a target, the targets' nll from w->store's prediction and
 * bt_t. */
static void backward_pass(const ob_lang *g, int T, const int32_t *x, const int32_t *y, const uint8_t *tgt,
                          fb_work *w, double *nll)
{
    enum { nb = FB_BATCH };
    const int64_t W = msg_len(g);
    for (int64_t i = 0; i < W; i++) w->bt[i] = 1.0;
    for (int t = T - 1; t >= 0; t--) {
        if (w->tany[t]) add_target_nll(g, T, t, x, y, tgt, w->store + (int64_t)w->slot_of[t] * W, w->bt, nll);
        if (t == 0) break;
        /* h = e_t bt; bt(u, s) = sum_k A_s(u, succ) h(succ, s); mix topics; rescale. */
        apply_emission(g, w->h, w->bt, nb, T, t, y, 1.0);
        step_back_transition(g, w->h, w->bt);
        mix_topics(g, w->bt, nb);
        rescale_mean_one(g, w->bt);
    }
}

/* nll[j], cnt[j] for FB_BATCH sequences x, y, tgt (each (FB_BATCH, T)). The
 * batch size is a constant (nb = FB_BATCH in each pass) so that the
 * innermost loops vectorize. */
static ob_status lang_nll_block(const ob_lang *g, int T, const int32_t *x, const int32_t *y, const uint8_t *tgt,
                                double *nll, int *cnt, ob_err *e)
{
    fb_work w = {0};
    w.tany = calloc((size_t)T, 1);
    w.slot_of = malloc((size_t)T * sizeof *w.slot_of);
    count_targets(T, tgt, nll, cnt);
    if (!w.tany || !w.slot_of) {
        fb_free(&w);
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for the loss floor");
    }
    if (!mark_targets(T, tgt, &w)) {
        fb_free(&w);
        return OB_OK;
    }
    if (!fb_alloc_messages(g, &w)) {
        fb_free(&w);
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for the loss floor");
    }
    forward_pass(g, T, y, &w);
    backward_pass(g, T, x, y, tgt, &w, nll);
    fb_free(&w);
    return OB_OK;
}

/* nb <= FB_BATCH sequences: padded with copies of the first, without targets. */
static ob_status lang_nll_batch(const ob_lang *g, int nb, int T, const int32_t *x, const int32_t *y,
                                const uint8_t *tgt, double *nll, int *cnt, ob_err *e)
{
    if (nb == FB_BATCH) return lang_nll_block(g, T, x, y, tgt, nll, cnt, e);
    size_t n = (size_t)FB_BATCH * T;
    int32_t *px = malloc(n * sizeof *px), *py = malloc(n * sizeof *py);
    uint8_t *pt = calloc(n, 1);
    double pn[FB_BATCH];
    int pc[FB_BATCH];
    ob_status s = OB_OK;
    if (!px || !py || !pt) {
        s = ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for the loss floor");
    } else {
        for (int j = 0; j < FB_BATCH; j++) {
            int src = j < nb ? j : 0;
            memcpy(px + (size_t)j * T, x + (size_t)src * T, (size_t)T * sizeof *px);
            memcpy(py + (size_t)j * T, y + (size_t)src * T, (size_t)T * sizeof *py);
            if (j < nb) memcpy(pt + (size_t)j * T, tgt + (size_t)j * T, (size_t)T);
        }
        s = lang_nll_block(g, T, px, py, pt, pn, pc, e);
        for (int j = 0; j < nb; j++) {
            nll[j] = pn[j];
            cnt[j] = pc[j];
        }
    }
    free(px);
    free(py);
    free(pt);
    return s;
}

ob_status ob_lang_seq_nll(const ob_lang *g, int T, const int32_t *x, const int32_t *y, const uint8_t *tgt,
                          double *nll, int *n_targets, ob_err *e)
{
    return lang_nll_batch(g, 1, T, x, y, tgt, nll, n_targets, e);
}

static ob_status lang_floor_compute(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int n,
                                    int T, double *floor_out, ob_err *e);

/* Floors already computed in this process (a matrix creates the same
 * workload for every optimizer, learning rate and seed): the key is the
 * language's configuration and the sequences. */
typedef struct floor_memo {
    ob_lang_config cfg;
    uint64_t data_seed_tag, seed, stream, first;
    int n, T, used;
    double value;
} floor_memo;
#define FLOOR_MEMO_N 8
static floor_memo floor_memo_tab[FLOOR_MEMO_N];
static int floor_memo_next;
static pthread_mutex_t floor_memo_lock = PTHREAD_MUTEX_INITIALIZER;

static int memo_match(const floor_memo *f, const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int n,
                      int T)
{
    const ob_lang_config *a = &f->cfg, *b = &g->cfg;
    int same = a->vocab == b->vocab && a->topics == b->topics && a->branch == b->branch && a->zipf == b->zipf &&
               a->topic_switch == b->topic_switch && a->topic_spread == b->topic_spread &&
               a->mask_prob == b->mask_prob && a->mask_token_frac == b->mask_token_frac &&
               a->random_token_frac == b->random_token_frac;
    return f->used && same && f->data_seed_tag == g->data_seed &&
           f->seed == seed && f->stream == stream && f->first == first && f->n == n && f->T == T;
}

ob_status ob_lang_floor(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int n, int T,
                        double *floor_out, ob_err *e)
{
    pthread_mutex_lock(&floor_memo_lock);
    for (int i = 0; i < FLOOR_MEMO_N; i++)
        if (memo_match(&floor_memo_tab[i], g, seed, stream, first, n, T)) {
            *floor_out = floor_memo_tab[i].value;
            pthread_mutex_unlock(&floor_memo_lock);
            return OB_OK;
        }
    pthread_mutex_unlock(&floor_memo_lock);
    OB_TRY(lang_floor_compute(g, seed, stream, first, n, T, floor_out, e));
    pthread_mutex_lock(&floor_memo_lock);
    floor_memo *f = &floor_memo_tab[floor_memo_next];
    floor_memo_next = (floor_memo_next + 1) % FLOOR_MEMO_N;
    memset(f, 0, sizeof *f);
    f->cfg = g->cfg;
    f->data_seed_tag = g->data_seed;
    f->seed = seed;
    f->stream = stream;
    f->first = first;
    f->n = n;
    f->T = T;
    f->value = *floor_out;
    f->used = 1;
    pthread_mutex_unlock(&floor_memo_lock);
    return OB_OK;
}

static ob_status lang_floor_compute(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int n, int T,
                                    double *floor_out, ob_err *e)
{
    const int nbatch = (n + FB_BATCH - 1) / FB_BATCH;
    double *nll = calloc((size_t)(n > 0 ? n : 1), sizeof *nll);
    int *cnt = calloc((size_t)(n > 0 ? n : 1), sizeof *cnt);
    ob_status *st = calloc((size_t)(nbatch > 0 ? nbatch : 1), sizeof *st);
    if (!nll || !cnt || !st) {
        free(nll);
        free(cnt);
        free(st);
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for the loss floor");
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int bi = 0; bi < nbatch; bi++) {
        int i0 = bi * FB_BATCH, nb = n - i0 < FB_BATCH ? n - i0 : FB_BATCH;
        int32_t *x = malloc((size_t)nb * T * sizeof *x), *y = malloc((size_t)nb * T * sizeof *y);
        uint8_t *tg = malloc((size_t)nb * T);
        if (!x || !y || !tg) {
            st[bi] = OB_ERR_NOMEM;
        } else {
            for (int j = 0; j < nb; j++)
                ob_lang_sample(g, seed, stream, first + (uint64_t)(i0 + j), T, x + (int64_t)j * T,
                               y + (int64_t)j * T, tg + (int64_t)j * T);
            ob_err ignore;
            st[bi] = lang_nll_batch(g, nb, T, x, y, tg, nll + i0, cnt + i0, &ignore);
        }
        free(x);
        free(y);
        free(tg);
    }
    double tot = 0.0;
    long long c = 0;
    ob_status s = OB_OK;
    for (int bi = 0; bi < nbatch; bi++)
        if (st[bi] != OB_OK) s = st[bi];
    for (int i = 0; i < n; i++) {
        tot += nll[i];
        c += cnt[i];
    }
    free(nll);
    free(cnt);
    free(st);
    if (s != OB_OK) return ob_fail(e, s, "bert: out of memory computing the loss floor");
    *floor_out = c > 0 ? tot / (double)c : NAN;
    return OB_OK;
}
