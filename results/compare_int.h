/* results/compare_int.h - what compare.c (the verdicts) and compare_out.c
 * (their text, Markdown and JUnit) share. Internal to results/. */
#ifndef OB_RESULTS_COMPARE_INT_H
#define OB_RESULTS_COMPARE_INT_H

#include <stddef.h>
#include <stdio.h>

#include "results/compare.h"

/* The seeds whose change is infinite, in words: "now finite (diverged
 * before)", "now diverged on 2 of 3 seeds (finite before)" when the median
 * is infinite (sign: 1 when its value is now not finite, -1 when now finite,
 * whichever sign the change has), else "1 of 3 seeds now finite, 1 now
 * diverged" (sign 0). word: what a value that is not finite means. */
void ob_cmp_infinite_text(const ob_cmp_quantity *q, int sign, const char *word, char *buf, size_t n);

/* A change in a report: relative ones in percent with dig decimals
 * ("+1.5%"), absolute ones (dig < 0) as "+0.0123". */
static inline const char *ob_cmp_change_text(double v, int dig, char *buf, size_t n)
{
    if (dig >= 0) snprintf(buf, n, "%+.*f%%", dig, 100 * v);
    else snprintf(buf, n, "%+.4g", v);
    return buf;
}

/* Did more seeds at the judged lr newly diverge (or end non-finite) than
 * newly converge? Rounding alone moves the edge of stability both ways, so
 * a seed that now diverges offsets one that now converges; the final loss,
 * which counts both as infinite changes, judges them then. */
static inline int ob_cmp_new_divergences(const ob_cmp_group *g) { return g->n_new_diverged > g->loss.n_to_finite; }

/* Did more cells at lrs below the judged one newly diverge than newly
 * converge? There a larger lr trains on both sides, so the edge of
 * stability is not what moved. */
static inline int ob_cmp_new_divergences_below(const ob_cmp_group *g) { return g->n_new_diverged_below > g->n_to_finite_below; }

#endif
