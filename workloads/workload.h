/* workloads/workload.h - the workload interface.
 *
 * A workload is a model with its synthetic data: it declares its parameters
 * (describe), learns where they live once the layout is final (setup),
 * initialises them from the seed, computes loss and gradient for the batch of
 * a step (train_step, everything on the device, the loss written to a device
 * float), and evaluates held-out metrics (evaluate, host values). BERT-like
 * and CNN workloads implement the same interface.
 *
 * Data and initialisation come from the counter-based generator keyed by the
 * run's seed, so a step's batch depends only on (seed, step).
 */
#ifndef OB_WORKLOADS_WORKLOAD_H
#define OB_WORKLOADS_WORKLOAD_H

#include <stdint.h>

#include "core/hparams.h"
#include "core/layout.h"
#include "kernels/backend.h"

typedef struct ob_workload ob_workload;
typedef struct ob_workload_def ob_workload_def;

typedef struct ob_eval {
    double loss;     /* held-out loss (the exact objective for test functions) */
    double metric;   /* held-out accuracy etc.; NaN when the workload has none */
    double floor;    /* best achievable loss (Bayes / known minimum); NaN if unknown */
} ob_eval;

typedef struct ob_workload_vt {
    ob_status (*describe)(ob_workload *w, ob_layout *l, ob_err *e);
    ob_status (*setup)(ob_workload *w, const ob_layout *l, ob_err *e);
    ob_status (*init_params)(ob_workload *w, float *params, ob_err *e);
    /* grads are overwritten (padding between tensors stays zero). */
    ob_status (*train_step)(ob_workload *w, const float *params, float *grads, int64_t step,
                            float *loss, ob_err *e);
    ob_status (*evaluate)(ob_workload *w, const float *params, ob_eval *out, ob_err *e);
    void (*destroy)(ob_workload *w);
} ob_workload_vt;

struct ob_workload_def {
    const char *name;          /* as in --workloads; presets are their own names */
    const char *summary;
    const ob_hp_def *hp;
    int n_hp;
    const char *metric_name;   /* "accuracy" or NULL */
    const char *items_name;    /* "tokens", "images" or NULL: what items_per_step counts */
    ob_status (*create)(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev,
                        uint64_t seed, ob_workload **out, ob_err *e);
    /* As create, for replica rank (0 <= rank < world) of a data-parallel run:
     * the replica computes its world-th of each step's batch (sequences or
     * images rank*B/world onwards of the batch of B), with its loss and
     * gradient weighted so that their sums over the replicas are the whole
     * batch's loss and gradient; evaluate still covers the whole held-out set,
     * and items_per_step counts the whole batch. NULL: the workload has no
     * batch to split. create_replica(..., 0, 1, ...) is create. */
    ob_status (*create_replica)(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev,
                                uint64_t seed, int rank, int world, ob_workload **out, ob_err *e);
};

struct ob_workload {
    const ob_workload_vt *vt;
    const ob_workload_def *def;
    ob_device *dev;
    uint64_t seed;
    int64_t items_per_step;    /* tokens or images per step (0 when meaningless) */
};

const ob_workload_def *const *ob_workloads(int *n);
const ob_workload_def *ob_workload_find(const char *name);
ob_status ob_workload_unknown(const char *name, ob_err *e);
/* A run's workload parameters (JSON) with every key at its default (see
 * ob_optimizer_defaults_json). */
size_t ob_workload_defaults_json(const ob_workload_def *d, char *buf, size_t n);
/* For create_replica: is rank of world a part of a batch of B? */
ob_status ob_workload_check_part(const ob_workload_def *d, int B, int rank, int world, ob_err *e);

/* The workloads of the registry (workloads/registry.c), each defined in its
 * own file: one definition per size preset of the networks. */
extern const ob_workload_def ob_wl_quadratic;
extern const ob_workload_def ob_wl_rosenbrock;
extern const ob_workload_def ob_wl_bert_tiny, ob_wl_bert_small, ob_wl_bert_base;
extern const ob_workload_def ob_wl_cnn_tiny, ob_wl_cnn_small, ob_wl_cnn_base;

#endif
