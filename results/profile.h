/* results/profile.h - the performance profiles of ob_stats_compute (within
 * results/: stats.c computes the groups, profile.c their profiles). */
#ifndef OB_RESULTS_PROFILE_H
#define OB_RESULTS_PROFILE_H

#include "results/stats.h"

/* The performance profile (ob_stats taus, rho, area, in_profile) of the
 * groups' times to target, the profile's workloads each optimizer has sweep
 * runs on (profile_ran), the tuned optimizers' profile (tuned_*) and the
 * bootstrap of their areas (n_boot, area_lo, ...). gi (n_wl x n_opt): the
 * group of each workload and optimizer label, -1 for none. OB_ERR_NOMEM or
 * OB_OK. */
ob_status ob_stats_profiles(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, const int *gi, ob_err *e);

#endif
