/* results/hp_sweep.h - the sensitivity to swept hyperparameters besides
 * the lr, for its figures (plots/fig_hp.c) and hp_sweep.csv. */
#ifndef OB_RESULTS_HP_SWEEP_H
#define OB_RESULTS_HP_SWEEP_H

#include "core/ob.h"
#include "results/dataset.h"
#include "results/stats.h"

/* Sensitivity to the swept hyperparameters besides the lr (run --sweep).
 * For each workload label and each key of the optimizer labels ("adam
 * beta2=0.95 clip_norm=1": keys beta2 and clip_norm): the groups of that
 * workload whose label holds the key with a numeric value make lines, one per
 * optimizer name and values of its other keys ("adam clip_norm=1"); a line
 * needs at least 2 distinct values of the key. An optimizer none of whose
 * lines has 2 (its keys were searched together, so every configuration
 * differs in the other keys as well) gets one scatter of all its
 * configurations instead, labelled "NAME (each configuration)". Workload parameters are no
 * such key (a swept one makes workload labels of their own). A label numbered
 * for being ambiguous ("adam #3") and a group without a finished run are left
 * out. Points are ordered by value; lines and keys by first appearance in
 * group order. hp_sweep.csv is written from exactly these, and only when
 * there is one. */
typedef struct ob_hp_point {
    int group;                /* index into s->g */
    double value;             /* the key's value */
} ob_hp_point;
typedef struct ob_hp_line {
    char *label;              /* optimizer name plus its other keys' values */
    int n;
    ob_hp_point *p;           /* (n,) ascending value */
    int scatter;              /* 1: the configurations differ in other keys too (a quasi-random
                               * search draws them together): points, not a line */
} ob_hp_line;
typedef struct ob_hp_fig {
    int wl;
    char *key;
    int n_lines;
    ob_hp_line *lines;
} ob_hp_fig;
typedef struct ob_hp_sweeps {
    int n;
    ob_hp_fig *f;
} ob_hp_sweeps;
ob_status ob_hp_sweeps_find(const ob_dataset *d, const ob_stats *s, ob_hp_sweeps *out, ob_err *e);
void ob_hp_sweeps_free(ob_hp_sweeps *h);
/* A group for which no lr has a finite median although runs finished there
 * (half its seeds or more diverged at every lr): no point, a mark. */
int ob_hp_diverged_everywhere(const ob_group *g);

#endif
