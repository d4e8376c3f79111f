/* plots/doc_profile.h - the report's section on the performance profiles
 * (summary.md and index.html, through doc.h's writer). Internal to plots/. */
#ifndef OB_PLOTS_DOC_PROFILE_H
#define OB_PLOTS_DOC_PROFILE_H

#include <sqlite3.h>

#include "plots/doc.h"
#include "results/dataset.h"
#include "results/stats.h"

/* Which of the section's figures stem is: 1 the profile's, with time to
 * target (shown beside it), 2 the tuned optimizers' profile, 0 another. */
int ob_doc_profile_stem(const char *stem);

/* "Across workloads: time to target and performance profile": the profile's
 * table with what qualifies it (optimizers not run everywhere, median-timed
 * or noisy workloads, shared first places, near misses) and the seeds' noise
 * in its areas, its figures (rendered[f] for figs->f[f], as ob_doc_figure),
 * and the tuned optimizers' profile where there were several configurations;
 * db: the database, for the searches the configurations come from. */
void ob_doc_profile(sqlite3 *db, ob_doc *dc, const ob_dataset *d, const ob_stats *s, const ob_figures *figs,
                    const int *rendered);

#endif
