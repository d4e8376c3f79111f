/* plots/latex.h - the report's summary tables for a paper: summary.tex.
 *
 * One booktabs table per workload (\input{summary.tex} in a document that
 * loads booktabs): each optimizer at its best lr, ranked by the median final
 * loss over seeds, with its min-max range, the held-out loss and metric and
 * the lr range; the lowest median in bold; the confirmed median of fresh
 * seeds (run --confirm-seeds) in a column of its own when the workload has
 * them. With sweeps, each optimizer at its best configuration per workload,
 * and where some optimizer has several configurations the tuning table
 * (the tuning budget's ends and the tuned optimizers' profile areas).
 * Labels are escaped for LaTeX; +inf (diverged) is $\infty$, a value
 * not measured is --.
 */
#ifndef OB_PLOTS_LATEX_H
#define OB_PLOTS_LATEX_H

#include <stdio.h>

#include "core/ob.h"
#include "results/dataset.h"
#include "results/stats.h"

/* Write summary.tex into dir. */
ob_status ob_latex_write(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e);
/* The tables to f (what summary.tex holds); nothing written when it fails. */
ob_status ob_latex_tables(const ob_dataset *d, const ob_stats *s, FILE *f, ob_err *e);
/* s with LaTeX's special characters escaped, into out (n bytes, truncated). */
void ob_latex_escape(const char *s, char *out, size_t n);

#endif
