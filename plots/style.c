/* plots/style.c - see style.h. */
#include "plots/style.h"

#include <string.h>

#include "optimizers/optim.h"

/* One colour per optimizer of the registry, in its order (sgd, adam, adamw,
 * nadam, radam, adamax, adagrad, adadelta, rmsprop, lion, muon, root,
 * adamw_sf, sgd_sf, soap, adafactor, rprop, asgd): the first ten are the
 * common "tab10"; the pairs most often compared (adam and adamw, muon and
 * root, sgd and sgd_sf) are far apart. Series differ by marker and dash
 * type as well (style.gp), so close colours still tell apart. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000080", "#000000",
                                      "#00a087", "#f0a0c0", "#a05000", "#6a3d9a", "#808000", "#4daf4a"};
#define N_PALETTE (int)(sizeof palette / sizeof palette[0])

/* The registry place of an optimizer name, -1 if unknown. */
static int registry_index(const char *name)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    for (int i = 0; i < n; i++)
        if (name && !strcmp(all[i]->name, name)) return i;
    return -1;
}

/* The colour slot of configuration i when it is its optimizer's first and
 * the registry knows the optimizer, else -1. */
static int own_slot(const char *const *names, int i)
{
    int k = registry_index(names[i]);
    for (int j = 0; j < i && k >= 0; j++)
        if (names[j] && !strcmp(names[j], names[i])) k = -1;
    return k < N_PALETTE ? k : -1;
}

void ob_series_colours(const char *const *opt_names, int n, const char **out)
{
    int taken[N_PALETTE] = {0};
    for (int i = 0; i < n; i++) {
        int k = own_slot(opt_names, i);
        out[i] = k >= 0 ? palette[k] : NULL;
        if (k >= 0) taken[k] = 1;
    }
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (out[i]) continue;
        while (next < N_PALETTE && taken[next]) next++;
        if (next == N_PALETTE) { /* every colour in use: they repeat, in order */
            memset(taken, 0, sizeof taken);
            next = 0;
        }
        taken[next] = 1;
        out[i] = palette[next++];
    }
}
