/* plots/style.c - see style.h. */
#include "plots/style.h"

#include <string.h>

#include "optimizers/optim.h"

/* One colour per optimizer of the registry, in its order (sgd, adam, adamw,
 * nadam, radam, adamax, adagrad, adadelta, rmsprop, lion, muon, root,
 * adamw_sf, sgd_sf, soap, adafactor, rprop, asgd): the first ten are the
 * common "tab10". No black: the figures draw their annotations (the loss
 * floor, legend keys of marks) in black. Series differ by marker and dash
 * type as well (style.gp), so the closer pairs still tell apart. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000080", "#b8005c",
                                      "#00a087", "#6baed6", "#5e3c99", "#a05000", "#808000", "#f0a0c0"};
#define N_PALETTE (int)(sizeof palette / sizeof palette[0])
/* Colours no optimizer owns, for further configurations of an optimizer
 * (swept hyperparameters): so a colour keeps meaning one optimizer. Each
 * was picked, in this order, as the colour of moderate lightness and
 * saturation (CIELAB L* 30-70, chroma under 70) farthest from the palette
 * and the spares before it: every one is at least 30 CIELAB units (Delta
 * E 1976) from any other colour here, where the palette's closest pair
 * (#9467bd, #5e3c99) is 19 apart. */
static const char *const spare[] = {"#335522", "#ff8877", "#2288ff", "#bbaa77", "#554466", "#005555"};
#define N_SPARE (int)(sizeof spare / sizeof spare[0])

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
    /* the others: the spare colours, then those of optimizers not in the
     * figure, then every colour again, in order */
    int next_spare = 0, next = 0;
    for (int i = 0; i < n; i++) {
        if (out[i]) continue;
        if (next_spare < N_SPARE) {
            out[i] = spare[next_spare++];
            continue;
        }
        while (next < N_PALETTE && taken[next]) next++;
        if (next == N_PALETTE) { /* every colour in use: they repeat, in order */
            memset(taken, 0, sizeof taken);
            next = 0;
        }
        taken[next] = 1;
        out[i] = palette[next++];
    }
}
