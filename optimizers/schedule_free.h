/* optimizers/schedule_free.h - what the schedule-free optimizers share
 * (Defazio et al. 2024, "The Road Less Scheduled"; the authors' package
 * schedulefree: AdamWScheduleFree is adamw_sf, SGDScheduleFree sgd_sf).
 *
 * Both keep the parameters at y, where gradients are taken, and z (the base
 * sequence, starting at the parameters) in state role 0 of every group; the
 * model is evaluated at the average x = lerp(y, z, 1 - 1/beta), beta their
 * interpolation constant (adamw_sf's beta1, sgd_sf's momentum). Update k
 * (1-based) runs at lr_k = lr * min(1, k / warmup_steps) times the training
 * schedule (train.schedule; constant by default, as the method intends), and
 * its averaging weight is k^r * lr_max^weight_lr_power, lr_max the largest
 * lr_k so far; ckp1 = weight / (sum of the weights so far), 0 while the sum
 * is 0. The weights are a function of k, kept as a running sum in the
 * optimizer's host state (ob_sf_host, host_state_bytes of each definition: a
 * cache like nadam's product, rebuilt from update 1 when the update count
 * goes back or from zeros; checkpoints and rollback snapshots keep it).
 *
 * Each optimizer reads its hyperparameters "lr", "warmup_steps", "r" and
 * "weight_lr_power" (OB_SF_HP declares the last three).
 */
#ifndef OB_OPTIMIZERS_SCHEDULE_FREE_H
#define OB_OPTIMIZERS_SCHEDULE_FREE_H

#include "optimizers/optim_impl.h"

/* Hyperparameters every schedule-free optimizer has, with the package's defaults. */
#define OB_SF_HP                                                                                                 \
    {"warmup_steps", OB_HP_INT, 0, 0, 1e12, 0, 0, NULL, "linear warmup of the lr over this many updates"},     \
    {"r", OB_HP_FLOAT, 0.0, 0, 1e3, 0, 0, NULL,                                                                  \
     "the averaging weight of update k is k^r lr_max^weight_lr_power (lr_max: the largest lr so far, warmup "    \
     "and train.schedule included)"},                                                                            \
    {"weight_lr_power", OB_HP_FLOAT, 2.0, 0, 1e3, 0, 0, NULL, "exponent of lr_max in that weight; 0: no lr weighting"}

/* The host state of a schedule-free optimizer (ob_optim.host; its
 * ob_optimizer_def has .host_state_bytes = sizeof(ob_sf_host) and
 * .host_state_rebuilds = 1): the weights
 * up to update t_cached (0: nothing cached): the largest lr so far, the
 * weight of update t_cached and the sum of the weights. */
typedef struct ob_sf_host {
    int64_t t_cached;
    double lr_max, weight, weight_sum;
} ob_sf_host;

/* The warmup factor of update k (1-based): min(1, k / warmup_steps). Fits
 * ob_optimizer_def.lr_factor. */
double ob_sf_warmup(const ob_optim *o, int64_t k);
/* The lr of update k: the training schedule's, times the warmup. */
double ob_sf_lr(const ob_optim *o, int64_t k);
/* ckp1 of update t (the weight of update t over the sum of the weights up
 * to t); brings the cache in o->host to t. */
double ob_sf_ckp1(ob_optim *o, int64_t t);
/* z (state role 0 of every group) starts at the parameters. Fits
 * ob_optimizer_def.first_step. */
ob_status ob_sf_first_step(ob_optim *o, float *params, ob_err *e);
/* x = lerp(y, z, 1 - 1/beta) = (1/beta) y + (1 - 1/beta) z into out (every
 * float of the layout; y: params, z: state role 0). */
ob_status ob_sf_eval_point(ob_optim *o, const float *params, float *out, double beta, ob_err *e);

#endif
