/* optimizers/optim.h - the optimizer pipeline, as the harness sees it.
 *
 * One step is a fixed sequence (optax-style composition, decided on the host,
 * executed as few fused passes on the device):
 *   1. routing (once, before the layout is final): every parameter tensor is
 *      assigned to exactly one group; each group is one contiguous range of
 *      the arenas and has its own rule and hyperparameters;
 *   2. global gradient statistics in one pass (norm, count of non-finite);
 *   3. clip scale (clip_norm) and the guard's skip flag, on the device;
 *      (with on_nonfinite = none and no clipping nothing is needed before the
 *      update: 2 is then summed inside the update kernels and 3 follows 4);
 *   4. the update, one fused pass per group (elementwise rules) or, for a
 *      matrix group (Muon, ROOT), momentum into a workspace, Newton-Schulz on
 *      batches of same-shape matrices (strided-batched GEMM), then the update;
 *   5. the exceptional: a skipped step is recorded; the harness turns runs of
 *      bad steps into divergence; on_nonfinite = rollback restores the last
 *      good snapshot, stop ends the run (ob_optim_stopped); none applies the
 *      step as torch.optim does and the harness ends the run as diverged.
 *
 * Training settings shared by every optimizer (schedule, clipping, guard,
 * divergence) are a hyperparameter table of their own: ob_train_hp_defs.
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
typedef struct ob_matrix_plan ob_matrix_plan; /* optim_impl.h */

/* A key added with a default that changes what earlier builds did: their
 * runs, which do not record it, ran with value. */
typedef struct ob_hp_absent {
    const char *key;
    double value;
} ob_hp_absent;

struct ob_optimizer_def {
    const char *name;
    const char *summary;          /* one line for `optbench list` */
    const ob_hp_def *hp;          /* "lr" first */
    const ob_hp_absent *absent;   /* keys whose absence from a stored run means other than their default */
    int n_absent;
    int n_hp;
    /* Floats of optimizer state per parameter for these settings (for a
     * routed optimizer: per parameter of its main group). */
    double (*state_per_param)(const ob_hp_values *hp);
    /* the state in words, for `list`, where it is not so many floats per
     * parameter (state_per_param NULL) */
    const char *state_text;
    /* Names of the groups (NULL-terminated; NULL: one group named like the
     * optimizer). Group 0 is the main group; "main" names it too. */
    const char *const *groups;
    /* Routing rules that follow the user's (NULL-terminated; NULL: "* -> main").
     * An optimizer with an enum hyperparameter routing=hybrid|explicit drops
     * them when it is explicit. */
    const char *const *default_routes;
    /* Does group g's lr follow the optimizer's lr, so that a sweep of lr
     * moves it (ob_optim_group_takes_lr)? NULL: group 0's alone. */
    int (*group_takes_lr)(const ob_optim *o, int g);
    /* Build the elementwise rule of group g (constants for the whole run). For
     * a matrix group: the momentum rule that feeds Newton-Schulz. */
    ob_status (*group_rule)(const ob_optim *o, int g, ob_rule *rule, ob_err *e);
    /* Matrix groups (Muon, ROOT): fill the plan and return 1; 0 for an
     * elementwise group. NULL: every group is elementwise. */
    int (*group_matrix)(const ob_optim *o, int g, ob_matrix_plan *plan);
    /* Per-step scalars of group g at update t (1-based); lr_scale is the
     * schedule's factor (scheduled lr / lr) that every group's lr follows. */
    void (*group_step)(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s);
    /* Settings that are text, not numbers (NULL: none): "coeff_file". */
    const char *options;
    ob_status (*set_option)(ob_optim *o, const char *key, const char *value, ob_err *e);
    /* (optional) Before the first update (update count 0, again after a
     * rollback to it): state that starts from the parameters. */
    ob_status (*first_step)(ob_optim *o, float *params, ob_err *e);
    /* (optional) The point the model is evaluated at, when it is not the
     * parameters (schedule-free: the average x): written into out. */
    ob_status (*eval_point)(ob_optim *o, const float *params, float *out, ob_err *e);
    /* (optional) The optimizer's own factor on the scheduled lr at update t
     * (schedule-free's warmup), for the lr the curves record. */
    double (*lr_factor)(const ob_optim *o, int64_t t);
    /* (optional) Groups with a step of their own (SOAP): custom_setup returns
     * *is_custom = 1 for such a group g, after allocating its state beyond
     * the rule's roles in ob_group.aux (checkpointed and rolled back like the
     * roles) and its scratch in ob_group.priv; custom_step then runs its
     * update (the rule's roles are allocated as for any group);
     * custom_release frees what setup put in priv. */
    ob_status (*custom_setup)(ob_optim *o, int g, int *is_custom, ob_err *e);
    ob_status (*custom_step)(ob_optim *o, int g, float *params, const float *grads, ob_err *e);
    void (*custom_release)(ob_optim *o, int g);
    /* (optional) Host-side state of the optimizer's own, a struct of its
     * file (nadam's running product, the schedule-free weights): so many
     * bytes, allocated zeroed with the optimizer, at ob_optim.host. The
     * pipeline checkpoints it (blob "optim.host") and keeps it in rollback
     * snapshots like the state roles. It may change only in group_step,
     * first_step and custom_step, and a skipped update still counts (the
     * skip mode decides on the device), so it can be a function of the update
     * count and the hyperparameters, not of the gradients.
     * host_state_rebuilds = 1: it is a cache of such a function that
     * rebuilds itself from zeros, so a checkpoint written before the
     * optimizer had it resumes with it zeroed, bit for bit; 0: such a
     * checkpoint is refused (the run starts over). */
    size_t host_state_bytes;
    int host_state_rebuilds;
};

/* Training settings common to all optimizers (clip_norm, diverge_factor, ...). */
extern const ob_hp_def ob_train_hp_defs[];
extern const int ob_train_hp_count;
/* The values of train.on_nonfinite, in the order of its enum. */
enum ob_guard_mode { OB_GUARD_SKIP = 0, OB_GUARD_ROLLBACK = 1, OB_GUARD_STOP = 2, OB_GUARD_NONE = 3 };

const ob_optimizer_def *const *ob_optimizers(int *n);
const ob_optimizer_def *ob_optimizer_find(const char *name);
/* Message for an unknown name, with "did you mean" and the list. */
ob_status ob_optimizer_unknown(const char *name, ob_err *e);
/* A run's hyperparameter text (JSON) with every key at its default: the
 * optimizer's keys, then the training settings under "train" (each key the
 * spike guard writes only when on included). A stored run that lacks a key
 * ran before the key existed, at what its default does: --resume, report
 * and history read such a run as if it held the key at this default. A key
 * whose default changed what earlier builds did (ob_optimizer_def.absent:
 * root's adamw_style) is at what they did instead. Returns the text's
 * length, as snprintf (n or more: buf holds only its start). */
size_t ob_optimizer_defaults_json(const ob_optimizer_def *d, char *buf, size_t n);

ob_status ob_optim_create(const ob_optimizer_def *d, const ob_hp_values *hp,
                          const ob_hp_values *train, ob_optim **out, ob_err *e);
/* Routing rules, added before ob_optim_route and tried in the order given,
 * before the optimizer's defaults; the first match decides. The form is
 * "MATCH -> GROUP": MATCH is "*" or terms joined by spaces, '&' or ',':
 *   tag=T[|T...]   (matrix, bias, norm, embedding, head, conv, vector)
 *   ndim=N[|N...]
 *   name=GLOB      (fnmatch pattern on the parameter name, e.g. "*.bias")
 * GROUP is one of the optimizer's groups ("main", "muon", "adamw", ...).
 * Example: ob_optim_add_route("tag=embedding|head -> adamw"). A bad rule is
 * OB_ERR_INPUT naming it. */
ob_status ob_optim_add_route(ob_optim *o, const char *rule, ob_err *e);
/* ob_hp_set on d's hyperparameters hv; an unknown key's message also names
 * d's text settings (a misspelt "coeff_filex" suggests "coeff_file"). */
ob_status ob_optim_hp_set(const ob_optimizer_def *d, ob_hp_values *hv, const char *key, const char *text,
                          ob_err *e);
/* Is key a text setting of d: "route", or one of the keys of d->options? */
int ob_optim_is_option(const ob_optimizer_def *d, const char *key);
/* Text-valued settings (the keys of def->options, e.g. root's coeff_file),
 * and "route" (same as ob_optim_add_route). OB_ERR_INPUT for an unknown key;
 * a failure names the setting ("root.coeff_file: cannot open ..."). */
ob_status ob_optim_set_option(ob_optim *o, const char *key, const char *value, ob_err *e);
/* Route every tensor of l to a group (before ob_layout_finalize). A
 * parameter no rule matches, or a non-matrix in a matrix group, is
 * OB_ERR_INPUT naming it. */
ob_status ob_optim_route(ob_optim *o, ob_layout *l, ob_err *e);
/* How many user routing rules o has (ob_optim_add_route), and whether rule k
 * matches any tensor of l (whether or not an earlier rule took it first). */
int ob_optim_n_routes(const ob_optim *o);
/* Does group g's lr follow the optimizer's lr (ob_optimizer_def.group_takes_lr)? */
int ob_optim_group_takes_lr(const ob_optim *o, int g);
int ob_optim_route_matches_any(const ob_optim *o, int k, const ob_layout *l);
/* Human summary of the routing: one line per group with its tensors. */
void ob_optim_describe_routing(const ob_optim *o, const ob_layout *l, char *buf, size_t n);
/* Check the settings that only the update rules judge together (sgd's
 * nesterov with momentum 0, ...), before anything is allocated: the
 * OB_ERR_INPUT that ob_optim_setup would give. */
ob_status ob_optim_check(const ob_optim *o, ob_err *e);
/* Allocate optimizer state on dev for the finalized layout l. */
ob_status ob_optim_setup(ob_optim *o, ob_device *dev, const ob_layout *l, ob_err *e);
/* Step t (1-based): params -= update(grads). loss and rec are device pointers;
 * rec receives loss, grad norm, the scheduled lr and the skip flag. t drives the
 * schedule; the rules count their own updates (bias corrections and the like),
 * which a rollback winds back. With train.on_nonfinite = skip (the default) a
 * bad step is skipped on the device with no host synchronisation (and still
 * counts as an update); rollback and stop read the guard's flag each step. */
ob_status ob_optim_step(ob_optim *o, float *params, const float *grads, const float *loss,
                        int64_t t, ob_step_record *rec, ob_err *e);
/* 1 once the guard has ended the run: on_nonfinite = stop at the first bad
 * step, rollback after max_bad_steps consecutive bad steps. *step gets the
 * step and why a sentence. Later ob_optim_step calls fill rec and change
 * nothing. The caller marks the run diverged at *step. */
int ob_optim_stopped(const ob_optim *o, int64_t *step, char *why, size_t why_n);
/* Steps the run will take (schedules need it); call before the first step. */
void ob_optim_set_total_steps(ob_optim *o, int64_t total_steps);
/* Events the optimizer raised since the last call (rollback, ...): returns 1
 * and fills the fields while one is pending, 0 when none is left. At most
 * OB_OPTIM_MAX_EVENTS are kept between two calls (then the newest): more
 * than 2 per step over the run loop's flush of 64 steps. */
#define OB_OPTIM_MAX_EVENTS 160
int ob_optim_pop_event(ob_optim *o, int64_t *step, char *kind, size_t kind_n, char *detail,
                       size_t detail_n);
/* Learning rate the schedule gives at step t (host arithmetic). */
double ob_optim_lr(const ob_optim *o, int64_t t);
/* Whether train's schedule decays towards train.min_lr (cosine,
 * warmup_cosine, wsd): then every lr a run starts from must be at least
 * min_lr (ob_optim_create refuses a smaller one). */
int ob_schedule_decays(const ob_hp_values *train);
/* The lr in effect at step t: the schedule's, times the optimizer's own
 * factor (schedule-free's warmup) where it has one. */
double ob_optim_lr_in_effect(const ob_optim *o, int64_t t);
/* Bytes of optimizer state (every state role of every group, padding
 * included); workspaces and rollback snapshots are not state. */
size_t ob_optim_state_bytes(const ob_optim *o);

/* Every piece of state a run needs to continue bit for bit (checkpoints):
 * device buffers (on_device = 1) and host-side values (on_device = 0, e.g.
 * running products, bad-step counters). Fills up to max entries and returns
 * how many there are. Names are stable across versions of a checkpoint. */
typedef struct ob_state_blob {
    char name[48];
    void *ptr;
    size_t bytes;
    int on_device;
    /* a checkpoint may lack it (one written before it existed): it is then
     * restored as zeros (host values only) */
    int optional;
} ob_state_blob;
int ob_optim_state_blobs(ob_optim *o, ob_state_blob *out, int max);
/* Where the model is evaluated: the parameters themselves (*at = params),
 * or, for an optimizer with an evaluation point of its own (schedule-free:
 * its average x), that point, computed into a buffer the optimizer owns. */
ob_status ob_optim_eval_params(ob_optim *o, float *params, float **at, ob_err *e);
void ob_optim_destroy(ob_optim *o);

#endif
