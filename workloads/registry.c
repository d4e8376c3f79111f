/* workloads/registry.c - the list of workloads `optbench` knows. */
#include <string.h>

#include "workloads/workload.h"

/* declared in workload.h, defined in quadratic.c, rosenbrock.c, bert.c and cnn.c */
static const ob_workload_def *const registry[] = {
    &ob_wl_quadratic,
    &ob_wl_rosenbrock,
    &ob_wl_bert_tiny,
    &ob_wl_bert_small,
    &ob_wl_bert_base,
    &ob_wl_cnn_tiny,
    &ob_wl_cnn_small,
    &ob_wl_cnn_base,
};

const ob_workload_def *const *ob_workloads(int *n)
{
    *n = (int)(sizeof registry / sizeof registry[0]);
    return registry;
}

const ob_workload_def *ob_workload_find(const char *name)
{
    int n;
    const ob_workload_def *const *all = ob_workloads(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(all[i]->name, name) == 0) return all[i];
    return NULL;
}

size_t ob_workload_defaults_json(const ob_workload_def *d, char *buf, size_t n)
{
    ob_hp_values hv;
    ob_hp_defaults(&hv, d->hp, d->n_hp);
    return ob_hp_to_json(&hv, buf, n);
}

ob_status ob_workload_unknown(const char *name, ob_err *e)
{
    int n;
    const ob_workload_def *const *all = ob_workloads(&n);
    const char *names[64];
    for (int i = 0; i < n && i < 64; i++) names[i] = all[i]->name;
    return ob_fail_unknown(e, "workload", name, names, n < 64 ? n : 64);
}

ob_status ob_workload_check_part(const ob_workload_def *d, int B, int rank, int world, ob_err *e)
{
    if (world < 1 || rank < 0 || rank >= world)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%s: replica %d of %d", d->name, rank, world);
    if (B % world != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "%s: batch=%d cannot be split over %d data-parallel replicas; choose a batch that is a "
                       "multiple of data_parallel",
                       d->name, B, world);
    return OB_OK;
}
