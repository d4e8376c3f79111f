/* optimizers/optim.h - the optimizer pipeline, as the harness sees it.
 *
 * One step is a fixed sequence (optax-style composition, decided on the host,
 * executed as few fused passes on the device):
 *   1. routing (once, before the layout is final): every parameter tensor is
 *      assigned to exactly one group; each group is one contiguous range of
 *      the arenas and has its own rule and hyperparameters;
 *   2. global gradient statistics in one pass (norm, count of non-finite);
 *   3. clip scale (clip_norm) and the guard's skip flag, on the device;
 *   4. the update, one fused pass per group (elementwise rules) or the
 *      group's matrix update (Muon, ROOT);
 *   5. the exceptional: a skipped step is recorded; the harness turns runs of
 *      bad steps into divergence.
 *
 * Training settings shared by every optimizer (clipping, guard, divergence)
 * are a hyperparameter table of their own: ob_train_hp_defs.
 */
#ifndef OB_OPTIMIZERS_OPTIM_H
#define OB_OPTIMIZERS_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "core/hparams.h"
#include "core/layout.h"
#include "kernels/backend.h"
#include "optimizers/rules.h"

typedef struct ob_optim ob_optim;
typedef struct ob_optimizer_def ob_optimizer_def;

struct ob_optimizer_def {
    const char *name;
    const char *summary;          /* one line for `optbench list` */
    const ob_hp_def *hp;          /* "lr" first */
    int n_hp;
    /* Floats of optimizer state per parameter for these settings (for a
     * routed optimizer: per parameter of its main group). */
    double (*state_per_param)(const ob_hp_values *hp);
    /* Assign t->group for every tensor (NULL: everything in group 0). */
    ob_status (*route)(ob_optim *o, ob_layout *l, ob_err *e);
    /* Build the elementwise rule of group g (constants for the whole run). */
    ob_status (*group_rule)(const ob_optim *o, int g, ob_rule *rule, ob_err *e);
    /* Per-step scalars of group g at step t (1-based) with scheduled lr. */
    void (*group_step)(const ob_optim *o, int g, int64_t t, double lr, ob_rule_step *s);
};

/* Training settings common to all optimizers (clip_norm, diverge_factor, ...). */
extern const ob_hp_def ob_train_hp_defs[];
extern const int ob_train_hp_count;

const ob_optimizer_def *const *ob_optimizers(int *n);
const ob_optimizer_def *ob_optimizer_find(const char *name);
/* Message for an unknown name, with "did you mean" and the list. */
ob_status ob_optimizer_unknown(const char *name, ob_err *e);

ob_status ob_optim_create(const ob_optimizer_def *d, const ob_hp_values *hp,
                          const ob_hp_values *train, ob_optim **out, ob_err *e);
/* Route every tensor of l to a group (before ob_layout_finalize). */
ob_status ob_optim_route(ob_optim *o, ob_layout *l, ob_err *e);
/* Human summary of the routing: one line per group with its tensors. */
void ob_optim_describe_routing(const ob_optim *o, const ob_layout *l, char *buf, size_t n);
/* Allocate optimizer state on dev for the finalized layout l. */
ob_status ob_optim_setup(ob_optim *o, ob_device *dev, const ob_layout *l, ob_err *e);
/* Step t (1-based): params -= update(grads). loss and rec are device pointers;
 * rec receives loss, grad norm and the skip flag. */
ob_status ob_optim_step(ob_optim *o, float *params, const float *grads, const float *loss,
                        int64_t t, ob_step_record *rec, ob_err *e);
/* Steps the run will take (schedules need it); call before the first step. */
void ob_optim_set_total_steps(ob_optim *o, int64_t total_steps);
/* Events the optimizer raised since the last call (rollback, ...): returns 1
 * and fills the fields while one is pending, 0 when none is left. */
int ob_optim_pop_event(ob_optim *o, int64_t *step, char *kind, size_t kind_n, char *detail,
                       size_t detail_n);
/* Learning rate the schedule gives at step t (host arithmetic). */
double ob_optim_lr(const ob_optim *o, int64_t t);
size_t ob_optim_state_bytes(const ob_optim *o);
void ob_optim_destroy(ob_optim *o);

#endif
