/* optimizers/optim_impl.h - the optimizer object, for files of optimizers/.
 * Not part of the harness's view (optim.h).
 *
 * A group is an elementwise group (one fused rule over its arena range) or a
 * matrix group (Muon, ROOT): its tensors are bucketed by matrix shape, and
 * each bucket runs momentum -> [clamp at a quantile] -> normalize ->
 * Newton-Schulz -> update on a batch of same-shape matrices in a workspace.
 */
#ifndef OB_OPTIMIZERS_OPTIM_IMPL_H
#define OB_OPTIMIZERS_OPTIM_IMPL_H

#include "optimizers/newton_schulz.h"
#include "optimizers/optim.h"

/* How the learning rate of a matrix scales with its shape (torch.optim.Muon's
 * adjust_lr_fn). */
typedef enum ob_lr_adjust {
    OB_LR_ADJUST_ORIGINAL = 0, /* sqrt(max(1, rows/cols)) */
    OB_LR_ADJUST_MATCH_RMS,    /* 0.2 * sqrt(max(rows, cols)) */
    OB_LR_ADJUST_NONE          /* 1 */
} ob_lr_adjust;

/* What a matrix group does between its momentum rule and its update. */
struct ob_matrix_plan {
    float quantile;      /* > 0: clamp u to +-(q-quantile of |u| + quantile_add) (ROOT) */
    float quantile_add;
    float norm_eps;      /* X0 = u / max(||u||_F, eps), or u / (||u||_F + eps) with norm_add_eps */
    int norm_add_eps;
    int ns_bf16;         /* X0 and the iteration in bf16, as torch.optim.Muon (ob_ns_iterate) */
    int ns_steps;
    int lr_adjust;       /* ob_lr_adjust */
    float weight_decay;  /* decoupled: p *= 1 - lr*wd */
    /* Newton-Schulz triples (a, b, c) for a (dmin x dmax) matrix, one per
     * iteration (the last repeats); returns how many, 1..OB_NS_MAX_SCHEDULE. */
    int (*coeffs)(const ob_optim *o, int64_t dmin, int64_t dmax, float abc[][3]);
};

/* A batch of same-shape matrices of a matrix group (at most a workspace full). */
typedef struct ob_bucket {
    int64_t rows, cols;  /* matrix view (conv kernels: out x in*kh*kw) */
    int count;
    int first;           /* index into ob_group.members */
    float abc[OB_NS_MAX_SCHEDULE][3]; /* Newton-Schulz triples per iteration */
    int n_abc;
    float lr_scale;      /* ob_lr_adjust for this shape */
} ob_bucket;

typedef struct ob_group {
    int64_t begin, end;                  /* float range in the arenas */
    ob_rule rule;                        /* elementwise rule, or a matrix group's momentum rule */
    float *state[OB_RULE_MAX_STATE];     /* device arrays over [begin, end), or NULL */
    ob_rule_step *step_dev;              /* per-step scalars in device memory */
    int is_matrix;
    ob_matrix_plan plan;
    int *members;                        /* layout indices, bucket by bucket */
    ob_bucket *buckets;
    int n_buckets;
    /* a group with its own step (ob_optimizer_def.custom_step) */
    int is_custom;
    float *aux;                          /* device: its state beyond the roles */
    int64_t aux_floats;
    float *snap_aux;                     /* rollback: the copy of aux in the snapshot */
    void *priv;                          /* its host tables and scratch */
    /* an elementwise group with weight decay and filter_bias_and_bn on: its
     * runs of consecutive tensors that keep the decay or lose it, in
     * alternation, for elementwise_step_spans: n_span + 1 bounds in device
     * memory, from 0 to the group's size (the padding between tensors, zero,
     * goes with the span before it); span k has no decay when k + span_nd0
     * is odd */
    int64_t *span_bound;
    int n_span, span_nd0;
} ob_group;

typedef struct ob_route_rule {
    unsigned tags;        /* bit per ob_tag; 0: any */
    unsigned ndims;       /* bit per ndim; 0: any */
    char pattern[OB_NAME_MAX]; /* fnmatch on the name; "" any */
    int group;
    char text[160];       /* as written, for messages */
} ob_route_rule;

#define OB_MAX_ROUTES 32

typedef struct ob_queued_event {
    int64_t step;
    char kind[32];
    char detail[192];
} ob_queued_event;

/* Any state added to ob_optim or ob_group that changes during a run must be
 * listed by ob_optim_state_blobs (pipeline.c), or checkpoints lose it. An
 * optimizer's own host values go in its host state instead
 * (ob_optimizer_def.host_state_bytes), which the pipeline keeps for it. */
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

    /* routing */
    ob_route_rule routes[OB_MAX_ROUTES];
    int n_routes;

    /* matrix groups: workspace shared by every bucket (sized for the largest) */
    float *ws_x, *ws_x2, *ws_a, *ws_b, *ws_thr;

    /* extra Newton-Schulz coefficients (root's coeff_file) */
    ob_ns_coeff *coeffs;
    int n_coeffs;
    char coeff_file[1024];

    /* the update count the rules see (state that checkpoints and rollback keep) */
    int64_t t;
    /* the optimizer's own host state (def->host_state_bytes, zeroed at
     * creation; NULL when it has none), e.g. nadam.c's struct nadam_host */
    void *host;
    /* the evaluation point of eval_point (layout->total floats), allocated on first use */
    float *eval_buf;

    /* the guard */
    int guard_mode;         /* 0 skip, 1 rollback, 2 stop, 3 none */
    ob_spike *spike_dev;    /* the spike guard's window (device memory), NULL when it is off */
    ob_spike *snap_spike;   /* rollback: the window's copy in the snapshot */
    int64_t bad_streak;     /* consecutive bad steps (rollback, stop) */
    int stopped;
    int64_t stopped_step;
    char stopped_why[192];
    float *snap_params;     /* rollback: copies of the params and every state role */
    float *snap_state[OB_MAX_GROUPS][OB_RULE_MAX_STATE];
    void *snap_host;        /* rollback: the copy of host in the snapshot */
    int64_t snap_t;         /* update count of the snapshot; -1 before the first */
    int64_t snap_step;      /* harness step of the snapshot */
    float *params_seen;     /* params pointer of the first step */

    ob_queued_event events[OB_OPTIM_MAX_EVENTS];
    int n_events;
};

/* Hyperparameter of the optimizer / of training by name (must exist). */
double ob_optim_hp(const ob_optim *o, const char *name);
double ob_optim_train_hp(const ob_optim *o, const char *name);
/* The rule of an Adam-like optimizer: kind, beta1, beta2, eps, weight_decay
 * (decoupled when the optimizer has decoupled_weight_decay set), two state
 * roles. */
void ob_optim_beta_rule(const ob_optim *o, int kind, ob_rule *r);
/* For a group with its own step: rule r (at most one state role, s0) over n
 * elements with the per-step scalars step (device memory), through the
 * guard: nothing happens on a step the guard skips. */
ob_status ob_optim_ew(ob_optim *o, const ob_rule_step *step, const ob_rule *r, float *p, const float *g, float *s0,
                      int64_t n, ob_err *e);
/* ob_optim_ew over count segments of n floats at stride[] apart (state
 * roles s; elementwise_step_batch's strides, OB_BATCH_STRIDES of them): one
 * pass, or one call per segment where the backend has no batch op. */
ob_status ob_optim_ew_batch(ob_optim *o, const ob_rule_step *step, const ob_rule *r, float *p, const float *g,
                            float *const *s, int64_t n, int64_t count, const int64_t *stride, ob_err *e);
/* A run: tensors of one shape lying at constant spacings in the arenas and
 * in a custom group's aux, stepped together (Adafactor, SOAP). */
typedef struct ob_run {
    int first, count; /* positions in the caller's reordered list */
    int64_t sp, sa;   /* spacing in the arenas and in aux (0 for a run of one) */
} ob_run;
/* How a custom group's tensors are cut into runs (ob_make_runs). */
typedef struct ob_run_items {
    void *base;                              /* the items: n of size bytes, in layout order */
    size_t size;
    int n;
    const void *ctx;
    int (*same)(const void *ctx, int i, int j);  /* of one shape (may refuse every j != i) */
    /* where item i lies: its offset in the arenas and in aux, and the floats
     * it takes in the caller's largest per-run workspace (its size) */
    void (*where)(const void *ctx, int i, int64_t *off, int64_t *aux, int64_t *size);
} ob_run_items;
/* total items cut into batches of at most cap, as even as they go: the
 * largest batch's size (18 at most 16 each: 9 and 9, not 16 and 2). */
int ob_balanced_cap(int total, int cap);
/* The most floats a batch of items of item_floats each should span: the
 * backend's batch_floats (the CPU's caches) where it has one, at most limit. */
int64_t ob_batch_budget(const ob_device *dev, int64_t item_floats, int64_t limit);
/* Cut the items into runs and reorder them run by run (each run's items
 * consecutive, in layout order): item j joins the open run of the first
 * item i of its shape while the spacings in the arenas and in aux stay what
 * they were and the run holds at most ob_batch_budget(dev, size_i, budget)
 * / size_i items (and 65535). runs: n entries; *n_runs of them are set. */
ob_status ob_make_runs(const ob_device *dev, const ob_run_items *it, int64_t budget, ob_run *runs, int *n_runs,
                       ob_err *e);
/* The tensors of group g cut into runs of one size (ob_make_runs, each run
 * in layout order), for a custom group whose per-tensor scalars come from
 * whole-tensor norms (lamb, lars): its state roles lie where its parameters
 * do, so the arenas' spacing is the roles' too. A run spans at most cap
 * floats (0: the whole group), and always the largest tensor. kind (by
 * layout index, or NULL) keeps tensors of different kinds in different runs. */
typedef struct ob_size_runs {
    int *index;         /* layout indices, run by run */
    int n;
    ob_run *run;
    int n_runs;
    int max_count;      /* most tensors in a run */
    int64_t max_floats; /* most floats in a run */
} ob_size_runs;
ob_status ob_size_runs_make(const ob_optim *o, int g, int64_t cap, const unsigned char *kind, ob_size_runs *sr,
                            ob_err *e);
/* timm's filter_bias_and_bn: a tensor of at most one dimension, or tagged
 * as a bias or a norm, gets no weight decay. The setting belongs to every
 * optimizer with a weight decay; the pipeline applies it to elementwise
 * groups, optimizers with their own step (lamb, lars) through
 * ob_no_decay_marks. */
int ob_no_decay_tensor(const ob_tensor *t);
/* 1 when the optimizer has filter_bias_and_bn and it is on. */
int ob_optim_filters_decay(const ob_optim *o);
#define OB_HP_FILTER_BIAS_AND_BN(what)                                                            \
    {"filter_bias_and_bn", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL,                                        \
     "no " what " for biases, norms and 1-D tensors (timm's create_optimizer)"}
/* With the optimizer's filter_bias_and_bn on, *marks (by layout index,
 * freed by the caller) flags group g's tensors that ob_no_decay_tensor
 * takes the decay from; NULL when the setting is off. */
ob_status ob_no_decay_marks(const ob_optim *o, int g, unsigned char **marks, ob_err *e);
void ob_size_runs_free(ob_size_runs *sr);
/* What lamb and lars share: group g's tensors in runs of one size and one
 * kind (filter_bias_and_bn), the per-tensor sums of squares and step
 * scalars of a trust ratio in device memory, and which kinds take the
 * ratio (a decayed tensor where weight_decay != 0, any with always_adapt).
 * ob_trust_runs_make needs the backend's batched_sumsq and trust_scale; cap
 * as ob_size_runs_make's. */
typedef struct ob_trust_runs {
    ob_size_runs runs;
    unsigned char *no_decay; /* by layout index: filter_bias_and_bn took its decay (NULL: none) */
    int adapt, adapt_nd;     /* a decayed tensor, and one without decay, take the ratio */
    float *sq;               /* per tensor of a run: two sums of squares (||p||^2, then u's or g's) */
    ob_rule_step *tstep;     /* per tensor: the group's step with its scale in c[0] */
} ob_trust_runs;
ob_status ob_trust_runs_make(ob_optim *o, int g, int64_t cap, ob_trust_runs *t, ob_err *e);
void ob_trust_runs_free(ob_optim *o, ob_trust_runs *t);
/* Raise an event for ob_optim_pop_event. */
void ob_optim_event(ob_optim *o, int64_t step, const char *kind, const char *fmt, ...) OB_PRINTF(4, 5);

/* Scheduled learning rate at harness step t (1-based) of total for base lr
 * (schedule.c); train holds the schedule settings. */
double ob_schedule_lr(const ob_hp_values *train, double lr, int64_t t, int64_t total);
/* OB_ERR_INPUT when schedule settings contradict each other (or lr). */
ob_status ob_schedule_check(const ob_hp_values *train, double lr, ob_err *e);

/* The rule of kind `kind` with SGD's momentum, dampening, nesterov and
 * weight_decay (sgd, lars); OB_ERR_INPUT for Nesterov without momentum or
 * with dampening, naming the optimizer's settings. */
ob_status ob_sgd_momentum_rule(const ob_optim *o, int kind, ob_rule *r, ob_err *e);
/* Shared by adam, adamw and the AdamW group of the hybrid optimizers. */
void ob_adam_rule(ob_rule *r, double beta1, double beta2, double eps, double wd, int decoupled,
                  int amsgrad);
void ob_adam_step(ob_rule_step *s, double lr, int64_t t, double beta1, double beta2);
/* The AdamW group of muon/root: hyperparameters adamw_style, adamw_lr,
 * adamw_beta1/2, adamw_eps, adamw_wd. With adamw_style=moonlight it takes the
 * optimizer's lr and weight_decay (adamw_lr or adamw_wd given: bad input). */
ob_status ob_hybrid_adamw_rule(const ob_optim *o, ob_rule *r, ob_err *e);
void ob_hybrid_adamw_step(const ob_optim *o, int64_t t, double lr_scale, ob_rule_step *s);
/* Group 0's lr is the optimizer's, and the AdamW group's with adamw_style=moonlight. */
int ob_hybrid_group_takes_lr(const ob_optim *o, int g);
/* Hybrid routing: 2-D matrices and 4-D conv kernels to the main group, the rest to adamw. */
extern const char *const ob_hybrid_routes[];
/* Hyperparameters of the hybrid optimizers' routing and AdamW group: style
 * 0 (separate) is the reference hybrid Muon's group (Keller Jordan's
 * MuonWithAuxAdam: lr 3e-4, eps 1e-10, no decay), 1 (moonlight) Moonlight's
 * (the ROOT authors' code: the optimizer's lr and weight decay, eps 1e-8
 * before the bias correction); betas (0.9, 0.95) in both. */
#define OB_HYBRID_HP(style, eps)                                                                   \
    {"routing", OB_HP_ENUM, 0, 0, 1, 0, 0, "hybrid|explicit",                                      \
     "hybrid: 2-D hidden weights (and conv kernels) here, the rest to AdamW; explicit: only "      \
     "the routes given"},                                                                          \
    {"adamw_style", OB_HP_ENUM, (style), 0, 1, 0, 0, "separate|moonlight",                         \
     "the AdamW group: separate: its own adamw_lr and adamw_wd (hybrid Muon); moonlight: this "    \
     "optimizer's lr and weight_decay, eps added to sqrt(v) before the bias correction "           \
     "(Moonlight, the ROOT authors' code)"},                                                       \
    {"adamw_lr", OB_HP_FLOAT, 3e-4, 0, INFINITY, 1, 0, NULL,                                       \
     "learning rate of the AdamW group (adamw_style=separate)"},                                   \
    {"adamw_beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "AdamW group: decay of the first moment"}, \
    {"adamw_beta2", OB_HP_FLOAT, 0.95, 0, 1, 0, 1, NULL, "AdamW group: decay of the second moment"}, \
    {"adamw_eps", OB_HP_FLOAT, (eps), 0, INFINITY, 0, 0, NULL, "AdamW group: added to the denominator"}, \
    {"adamw_wd", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL,                                        \
     "AdamW group: decoupled weight decay (adamw_style=separate)"}

/* Optimizers of the library, defined in their own files. */
extern const ob_optimizer_def ob_opt_sgd;
extern const ob_optimizer_def ob_opt_adam;
extern const ob_optimizer_def ob_opt_adamw;
extern const ob_optimizer_def ob_opt_nadam;
extern const ob_optimizer_def ob_opt_radam;
extern const ob_optimizer_def ob_opt_adamax;
extern const ob_optimizer_def ob_opt_adagrad;
extern const ob_optimizer_def ob_opt_adadelta;
extern const ob_optimizer_def ob_opt_rmsprop;
extern const ob_optimizer_def ob_opt_lion;
extern const ob_optimizer_def ob_opt_muon;
extern const ob_optimizer_def ob_opt_root;
extern const ob_optimizer_def ob_opt_adamw_sf;
extern const ob_optimizer_def ob_opt_sgd_sf;
extern const ob_optimizer_def ob_opt_soap;
extern const ob_optimizer_def ob_opt_adafactor;
extern const ob_optimizer_def ob_opt_rprop;
extern const ob_optimizer_def ob_opt_asgd;
extern const ob_optimizer_def ob_opt_lamb;
extern const ob_optimizer_def ob_opt_lars;
extern const ob_optimizer_def ob_opt_ademamix;
extern const ob_optimizer_def ob_opt_adabelief;

#endif
