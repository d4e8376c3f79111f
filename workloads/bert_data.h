/* workloads/bert_data.h - the synthetic language of the bert workload and its
 * Bayes-optimal masked-token loss.
 *
 * The language is a hidden Markov chain over (topic, token):
 *   - tokens 0..V-2 are real, V-1 is the [MASK] token;
 *   - every real token v has `branch` successors, drawn without replacement
 *     from a Zipf-like unigram u(r) ~ 1/(r+1)^zipf (so frequent tokens are
 *     frequent successors and the token frequencies are Zipf-like);
 *   - each of `topics` topics has its own log-normal weights (spread sigma) over
 *     the same successor lists: A_s(v, succ[v][k]) = trans[s][v][k];
 *   - a sequence starts with a uniform topic and a token from u; at each next
 *     position the topic switches to a uniformly chosen other topic with
 *     probability topic_switch, then the token follows A_topic(previous, .).
 * The topic is never observed and persists over many tokens: predicting a
 * masked token well needs the neighbours (the chain) and the whole sequence
 * (the topic), which is the long-range structure a model can learn.
 *
 * Masking follows BERT (HuggingFace's collator): every position independently
 * is a target with probability mask_prob; a target's input token becomes
 * [MASK] with probability mask_token_frac, a uniformly random real token with
 * probability random_token_frac, and stays itself otherwise.
 *
 * Randomness: sequence i of (seed, stream) uses ob_philox(seed, stream,
 * i*T + t) for its tokens and ob_philox(seed, stream + 1, i*T + t) for its
 * masking, so any batch is a pure function of (seed, stream, index) and the
 * same on every backend. The language itself comes from (data_seed,
 * OB_STREAM_WORLD).
 *
 * Loss floor: with independent masking, the corrupted input y is an HMM
 * observation of the chain with emission
 *   e(y|x) = (1-p) [y=x] + p (m [y=MASK] + r/(V-1) [y real] + k [y=x]),
 * (p mask_prob, m/r/k the mask/random/keep fractions) at every position, and
 *   e_T(y|x) = m [y=MASK] + r/(V-1) [y real] + k [y=x]
 * at a position known to be a target. The posterior of a target's token given
 * the whole corrupted sequence, P(x_i | y, i is a target), follows exactly
 * from forward-backward over the (topic, token) chain; the mean of
 * -log P(x_i | ...) over the targets of a stream is the Bayes-optimal
 * masked-token loss (ob_lang_floor).
 */
#ifndef OB_WORKLOADS_BERT_DATA_H
#define OB_WORKLOADS_BERT_DATA_H

#include <stdint.h>

#include "core/hparams.h"
#include "core/ob.h"

typedef struct ob_lang_config {
    int vocab;                /* V: embedding rows; real tokens 0..V-2, [MASK] = V-1 */
    int topics;               /* S >= 1 */
    int branch;               /* successors per token, 1 <= K < V-1 */
    double zipf;              /* unigram exponent */
    double topic_switch;      /* probability of a topic change per position */
    double topic_spread;      /* sigma of the log-normal successor weights */
    double mask_prob;         /* p */
    double mask_token_frac;   /* m */
    double random_token_frac; /* r; keep = 1 - m - r */
} ob_lang_config;

typedef struct ob_lang {
    ob_lang_config cfg;
    uint64_t data_seed;   /* the language's seed */
    int n_real;           /* V - 1 */
    int mask_id;          /* V - 1 */
    int32_t *succ;        /* (n_real, K) successor tokens */
    double *trans;        /* (S, n_real, K) transition probabilities, rows sum to 1 */
    double *trans_cdf;    /* (S, n_real, K) cumulative, last entry 1 */
    double *trans_rks;    /* (n_real, K, S) the same probabilities, topics innermost (floor) */
    double *unigram;      /* (n_real) start distribution u */
    double *unigram_cdf;  /* (n_real) */
} ob_lang;

/* The language of a bert workload's settings (vocab, topics, branch, zipf,
 * topic_switch, topic_spread, mask_prob, mask_token_frac, random_token_frac). */
ob_lang_config ob_lang_config_of(const ob_hp_values *hp);
/* The most targets a batch of n tokens keeps, masked with probability p:
 * n p + 8 standard deviations + 16, at most n (the rare excess is left out
 * of the loss). */
int ob_lang_target_cap(int n, double p);

/* Build the language from data_seed; cfg is validated (OB_ERR_INPUT). */
ob_status ob_lang_build(ob_lang *g, const ob_lang_config *cfg, uint64_t data_seed, ob_err *e);
void ob_lang_free(ob_lang *g);

/* Sequence `index` of (seed, stream), length T: clean tokens x (T), the
 * model's corrupted input y (T) and the target flags tgt (T). Any may be NULL
 * except where a later one needs it (y and tgt need x internally: pass x). */
void ob_lang_sample(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t index, int T, int32_t *x,
                    int32_t *y, uint8_t *tgt);

/* A batch of B sequences, indices first .. first+B-1: input tokens (B*T),
 * the flat positions b*T + t of the targets (in order) and their clean
 * tokens; *M receives the number of targets (<= B*T). */
void ob_lang_batch(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int B, int T,
                   int32_t *input, int32_t *tgt_pos, int32_t *tgt_tok, int *M);

/* The number of targets in sequences first .. first+B-1 (ob_lang_batch's
 * *M) without drawing their tokens: a position's target flag is a draw of
 * its own, apart from the token chain, so counting costs one Philox block per
 * position instead of a whole sample. */
int ob_lang_count_targets(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int B, int T);

/* Sum over the targets of one sequence of -log P(x_i | y, i is a target),
 * exact by forward-backward; *n_targets receives their number. */
ob_status ob_lang_seq_nll(const ob_lang *g, int T, const int32_t *x, const int32_t *y, const uint8_t *tgt,
                          double *nll, int *n_targets, ob_err *e);

/* Mean Bayes-optimal masked-token loss over sequences first .. first+n-1 of
 * (seed, stream) (NaN when they hold no target). OpenMP over sequences, summed
 * in sequence order; remembered for the process (the same language and
 * sequences are not computed twice: a matrix of runs shares one floor). */
ob_status ob_lang_floor(const ob_lang *g, uint64_t seed, uint64_t stream, uint64_t first, int n, int T,
                        double *floor_out, ob_err *e);

#endif
