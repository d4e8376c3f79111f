/* harness/search.h - quasi-random search over ranges of hyperparameters.
 *
 * A sweep whose value is a range ("0.8..0.99", "log:1e-5..1e-1",
 * "log1m:0.9..0.9999") is not a list of configurations: with 'trials: N'
 * (--trials N) an optimizer's ranged keys take N points of one scrambled
 * Halton sequence together, one dimension per key, as AlgoPerf's external
 * tuning does (quasi-random search, Bousquet et al. 2017). Trial t of a
 * matrix is the same point whatever N is, so a search with more trials
 * starts with the configurations of one with fewer.
 *
 * The sequence: the radical inverse of the trial index in the dimension's
 * prime base (2, 3, 5, ... in the order of the keys' names), its digits
 * scrambled by Owen's nested scrambling: digit j mapped by a random
 * permutation of 0..base-1 (an affine one, a*d + b mod base) drawn from
 * Philox for digit position j and the index's digits before it, with a
 * fixed key, so every build makes the same points; a search seed draws
 * other permutations. The first base^k points keep one point in each of
 * base^k strata; the scrambling breaks the correlations between dimensions
 * of large bases that the plain Halton sequence has over its first points,
 * and gives each point digits of its own past its index's, so two search
 * seeds draw different points (in base 2 the draws of builds before
 * 2026-12-06, one permutation per digit position, are the same 2^k values
 * at 2^k trials up to their low digits: draws 1, which the searches those
 * builds stored keep; see search_draws in config.h).
 */
#ifndef OB_HARNESS_SEARCH_H
#define OB_HARNESS_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/hparams.h"
#include "core/ob.h"

#define OB_SEARCH_MAX_DIMS 32 /* ranged keys of one optimizer */

typedef enum ob_range_scale {
    OB_RANGE_LIN,   /* uniform in the value */
    OB_RANGE_LOG,   /* uniform in log(value): lo > 0 */
    OB_RANGE_LOG1M  /* uniform in log(1 - value): hi < 1 (beta2 near 1) */
} ob_range_scale;

typedef struct ob_range {
    ob_range_scale scale;
    double lo, hi; /* lo < hi */
} ob_range;

/* Whether text is a range: 0 when it holds no ".." (a plain value), 1 when
 * it is a well-formed range (into r), OB_ERR_INPUT's -1 otherwise, with a
 * message in e that names what is wrong ("the range 'x..1' ..."). */
int ob_range_parse(const char *text, ob_range *r, ob_err *e);

/* Point i (>= 0) of the scrambled Halton sequence in dimension dim
 * (0 <= dim < OB_SEARCH_MAX_DIMS): in [0, 1). */
double ob_search_point(int64_t i, int dim);
/* The same in the sequence of search seed seed (search_seed, --search-seed):
 * another draw of the digits' permutations, so another set of points of the
 * same evenness (seed 0: ob_search_point's). Independent searches of the
 * same ranges (AlgoPerf's studies) take different seeds. */
double ob_search_point_seeded(int64_t i, int dim, int64_t seed);
/* The draws of this build, OB_SEARCH_DRAWS (2: nested scrambling), or of
 * earlier builds (draws 1: one permutation per digit position), which a
 * search they stored is continued with. */
#define OB_SEARCH_DRAWS 2
double ob_search_point_drawn(int64_t i, int dim, int64_t seed, int draws);

/* The value at u in [0, 1) of range r for a hyperparameter of kind d->kind
 * (OB_HP_FLOAT or OB_HP_INT), as the text a setting takes ("%.9g"), within
 * [lo, hi]. Rounded so that the labels stay short: on a linear range to a
 * step of 10^floor(log10((hi - lo) / 100)), on a log range to 3 significant
 * digits (more where the range spans less than a decade, so that the
 * rounding stays under about 1% of the range's log-width); an integer to
 * the nearest integer. */
void ob_range_value(const ob_range *r, const ob_hp_def *d, double u, char *out, size_t n);

#endif
