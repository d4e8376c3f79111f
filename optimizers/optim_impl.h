/* optimizers/optim_impl.h - the optimizer object, for files of optimizers/.
 * Not part of the harness's view (optim.h). */
#ifndef OB_OPTIMIZERS_OPTIM_IMPL_H
#define OB_OPTIMIZERS_OPTIM_IMPL_H

#include "optimizers/optim.h"

typedef struct ob_group {
    int64_t begin, end;                  /* float range in the arenas */
    ob_rule rule;
    float *state[OB_RULE_MAX_STATE];     /* device arrays of the whole layout size, or NULL */
    ob_rule_step *step_dev;              /* per-step scalars in device memory */
} ob_group;

struct ob_optim {
    const ob_optimizer_def *def;
    ob_hp_values hp;
    ob_hp_values train;
    ob_device *dev;
    const ob_layout *layout;
    int n_groups;
    ob_group group[OB_MAX_GROUPS];
    ob_step_stats *stats_dev;
    size_t state_bytes;
    int64_t total_steps;
};

/* Hyperparameter of the optimizer / of training by name (must exist). */
double ob_optim_hp(const ob_optim *o, const char *name);
double ob_optim_train_hp(const ob_optim *o, const char *name);

/* Optimizers of the library, defined in their own files. */
extern const ob_optimizer_def ob_opt_sgd;
extern const ob_optimizer_def ob_opt_adam;

#endif
