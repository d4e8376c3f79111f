/* workloads/bert_data.c - the synthetic language of the bert workload: its
 * construction, sampling with BERT-style masking, and the exact Bayes-optimal
 * masked-token loss by forward-backward (see bert_data.h for the model). */
#include <math.h>
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
    free(g->unigram);
    free(g->unigram_cdf);
    memset(g, 0, sizeof *g);
}

ob_status ob_lang_build(ob_lang *g, const ob_lang_config *cfg, uint64_t data_seed, ob_err *e)
{
    memset(g, 0, sizeof *g);
    const int V = cfg->vocab, S = cfg->topics, K = cfg->branch;
    if (V < 3) return ob_fail(e, OB_ERR_INPUT, "bert: vocab=%d is too small (at least 3: two tokens and [MASK])", V);
    if (S < 1) return ob_fail(e, OB_ERR_INPUT, "bert: topics=%d must be at least 1", S);
    if (K < 1 || K >= V - 1)
        return ob_fail(e, OB_ERR_INPUT, "bert: branch=%d must be in [1, vocab-2] = [1, %d]", K, V - 2);
    if (cfg->mask_token_frac + cfg->random_token_frac > 1.0 + 1e-12)
        return ob_fail(e, OB_ERR_INPUT, "bert: mask_token_frac + random_token_frac = %g exceeds 1",
                       cfg->mask_token_frac + cfg->random_token_frac);
    g->cfg = *cfg;
    g->n_real = V - 1;
    g->mask_id = V - 1;
    const int R = g->n_real;
    g->succ = malloc((size_t)R * K * sizeof *g->succ);
    g->trans = malloc((size_t)S * R * K * sizeof *g->trans);
    g->trans_cdf = malloc((size_t)S * R * K * sizeof *g->trans_cdf);
    g->unigram = malloc((size_t)R * sizeof *g->unigram);
    g->unigram_cdf = malloc((size_t)R * sizeof *g->unigram_cdf);
    unsigned char *used = calloc((size_t)R, 1);
    if (!g->succ || !g->trans || !g->trans_cdf || !g->unigram || !g->unigram_cdf || !used) {
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
        }
    return OB_OK;
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
            int is_t = unit_u32(q.v[0]) < p;
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

static double vec_sum(const double *v, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    return s;
}

static void vec_scale(double *v, int64_t n, double a)
{
    for (int64_t i = 0; i < n; i++) v[i] *= a;
}

/* Topic mixing of a (S, R) array in place: out(s,x) = cs a(s,x) + co sum_s' a(s',x). */
static void mix_topics(const ob_lang *g, double *a)
{
    const int S = g->cfg.topics, R = g->n_real;
    if (S == 1) return;
    const double co = g->cfg.topic_switch / (S - 1), cs = 1.0 - g->cfg.topic_switch - co;
    for (int x = 0; x < R; x++) {
        double tot = 0.0;
        for (int s = 0; s < S; s++) tot += a[(int64_t)s * R + x];
        for (int s = 0; s < S; s++) a[(int64_t)s * R + x] = cs * a[(int64_t)s * R + x] + co * tot;
    }
}

ob_status ob_lang_seq_nll(const ob_lang *g, int T, const int32_t *x, const int32_t *y, const uint8_t *tgt,
                          double *nll, int *n_targets, ob_err *e)
{
    const int S = g->cfg.topics, K = g->cfg.branch, R = g->n_real;
    const int64_t SR = (int64_t)S * R;
    int nt = 0;
    for (int t = 0; t < T; t++) nt += tgt[t] != 0;
    *n_targets = nt;
    *nll = 0.0;
    if (nt == 0) return OB_OK;
    /* a: forward message, m: prediction, bt: backward message, h: scratch, store: m at targets */
    double *a = malloc((size_t)SR * sizeof *a), *m = malloc((size_t)SR * sizeof *m);
    double *bt = malloc((size_t)SR * sizeof *bt), *h = malloc((size_t)SR * sizeof *h);
    double *store = malloc((size_t)nt * (size_t)SR * sizeof *store);
    if (!a || !m || !bt || !h || !store) {
        free(a);
        free(m);
        free(bt);
        free(h);
        free(store);
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for the loss floor");
    }
    /* Forward: m_t = prediction of (topic, token) at t from y_<t; a_t = m_t e_t. */
    int slot = 0;
    for (int t = 0; t < T; t++) {
        if (t == 0) {
            for (int s = 0; s < S; s++)
                for (int v = 0; v < R; v++) m[(int64_t)s * R + v] = g->unigram[v] / S;
        } else {
            mix_topics(g, a);
            memset(m, 0, (size_t)SR * sizeof *m);
            for (int s = 0; s < S; s++) {
                const double *as = a + (int64_t)s * R;
                double *ms = m + (int64_t)s * R;
                for (int v = 0; v < R; v++) {
                    double gv = as[v];
                    if (gv == 0.0) continue;
                    const int32_t *sv = g->succ + (int64_t)v * K;
                    const double *pv = g->trans + ((int64_t)s * R + v) * K;
                    for (int k = 0; k < K; k++) ms[sv[k]] += gv * pv[k];
                }
            }
        }
        if (tgt[t]) memcpy(store + (int64_t)slot++ * SR, m, (size_t)SR * sizeof *m);
        double base, delta;
        emission(g, y[t], 0, &base, &delta);
        for (int64_t i = 0; i < SR; i++) a[i] = m[i] * base;
        if (delta != 0.0)
            for (int s = 0; s < S; s++) a[(int64_t)s * R + y[t]] += m[(int64_t)s * R + y[t]] * delta;
        double z = vec_sum(a, SR);
        vec_scale(a, SR, 1.0 / z);
    }
    /* Backward: bt_t(s, v) = P(y_>t | topic s, token v at t), rescaled. */
    for (int64_t i = 0; i < SR; i++) bt[i] = 1.0;
    double total = 0.0;
    for (int t = T - 1; t >= 0; t--) {
        if (tgt[t]) {
            const double *mt = store + (int64_t)--slot * SR;
            double base, delta, zt = 0.0, pt = 0.0;
            emission(g, y[t], 1, &base, &delta);
            for (int v = 0; v < R; v++) {
                double q = 0.0;
                for (int s = 0; s < S; s++) q += mt[(int64_t)s * R + v] * bt[(int64_t)s * R + v];
                q *= base + (v == y[t] ? delta : 0.0);
                zt += q;
                if (v == x[t]) pt = q;
            }
            total += -log(pt / zt);
        }
        if (t == 0) break;
        /* h(s, v) = e_t(v) bt(s, v); bt(s, u) = sum_k A_s(u, succ) h(s, succ); mix topics. */
        double base, delta;
        emission(g, y[t], 0, &base, &delta);
        for (int64_t i = 0; i < SR; i++) h[i] = bt[i] * base;
        if (delta != 0.0)
            for (int s = 0; s < S; s++) h[(int64_t)s * R + y[t]] += bt[(int64_t)s * R + y[t]] * delta;
        for (int s = 0; s < S; s++) {
            const double *hs = h + (int64_t)s * R;
            double *bs = bt + (int64_t)s * R;
            for (int u = 0; u < R; u++) {
                const int32_t *su = g->succ + (int64_t)u * K;
                const double *pu = g->trans + ((int64_t)s * R + u) * K;
                double acc = 0.0;
                for (int k = 0; k < K; k++) acc += pu[k] * hs[su[k]];
                bs[u] = acc;
            }
        }
        mix_topics(g, bt);
        double z = vec_sum(bt, SR);
        vec_scale(bt, SR, (double)SR / z);
    }
    *nll = total;
    free(a);
    free(m);
    free(bt);
    free(h);
    free(store);
    return OB_OK;
}

ob_status ob_lang_floor(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int n, int T,
                        double *floor_out, ob_err *e)
{
    double *nll = calloc((size_t)(n > 0 ? n : 1), sizeof *nll);
    int *cnt = calloc((size_t)(n > 0 ? n : 1), sizeof *cnt);
    ob_status *st = calloc((size_t)(n > 0 ? n : 1), sizeof *st);
    if (!nll || !cnt || !st) {
        free(nll);
        free(cnt);
        free(st);
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of memory for the loss floor");
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        int32_t *x = malloc((size_t)T * sizeof *x), *y = malloc((size_t)T * sizeof *y);
        uint8_t *tg = malloc((size_t)T);
        if (!x || !y || !tg) {
            st[i] = OB_ERR_NOMEM;
        } else {
            ob_lang_sample(g, seed, stream, first + (uint64_t)i, T, x, y, tg);
            ob_err ignore;
            st[i] = ob_lang_seq_nll(g, T, x, y, tg, &nll[i], &cnt[i], &ignore);
        }
        free(x);
        free(y);
        free(tg);
    }
    double tot = 0.0;
    long long c = 0;
    ob_status s = OB_OK;
    for (int i = 0; i < n; i++) {
        if (st[i] != OB_OK) s = st[i];
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
