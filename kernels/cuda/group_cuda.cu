/* kernels/cuda/group_cuda.cu - data-parallel replicas on several GPUs.
 *
 * One process drives every replica from one thread (the harness makes a
 * replica's device current before queuing its work), so the all-reduce is
 * NCCL's single-process form: communicators from ncclCommInitAll, and one
 * ncclAllReduce per device inside ncclGroupStart/End, each on its device's
 * stream. Nothing here waits for the devices.
 *
 * NCCL is loaded when a group is first opened (dlopen of libnccl.so.2), not
 * linked: the program starts, and runs everything but data-parallel runs,
 * on a machine whose CUDA libraries lack NCCL. Only its header is needed to
 * build. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_common.cuh"

#ifdef OB_HAVE_NCCL
#include <dlfcn.h>
#include <nccl.h>
#endif

ob_status ob_cu_make_current(ob_device *dev, ob_err *e)
{
    OB_CU(e, "make_current", cudaSetDevice(dev->index));
    return OB_OK;
}

#ifdef OB_HAVE_NCCL

/* The NCCL functions used, from the library loaded at run time. */
static struct {
    ncclResult_t (*comm_init_all)(ncclComm_t *, int, const int *);
    ncclResult_t (*comm_destroy)(ncclComm_t);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                               cudaStream_t);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
    const char *(*error_string)(ncclResult_t);
} nccl;
static char nccl_missing[512]; /* why it could not be loaded; "" when it was */
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;

static void nccl_load(void)
{
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(nccl_missing, sizeof nccl_missing, "%s", why ? why : "libnccl.so.2 not found");
        return;
    }
    struct {
        const char *name;
        void **slot;
    } fn[] = {{"ncclCommInitAll", (void **)&nccl.comm_init_all}, {"ncclCommDestroy", (void **)&nccl.comm_destroy},
              {"ncclAllReduce", (void **)&nccl.all_reduce},      {"ncclGroupStart", (void **)&nccl.group_start},
              {"ncclGroupEnd", (void **)&nccl.group_end},        {"ncclGetErrorString", (void **)&nccl.error_string}};
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        *fn[i].slot = dlsym(h, fn[i].name);
        if (!*fn[i].slot) {
            snprintf(nccl_missing, sizeof nccl_missing, "libnccl has no %s", fn[i].name);
            dlclose(h);
            return;
        }
    }
}

typedef struct cu_group {
    int n;
    int *ord;         /* ord[r]: the CUDA device of replica r (comm[r] is bound to it) */
    ncclComm_t *comm;
} cu_group;

static ob_status nccl_fail(ob_err *e, ncclResult_t r, const char *call)
{
    return ob_fail(e, OB_ERR_BACKEND, "NCCL: %s failed: %s", call, nccl.error_string(r));
}

ob_status ob_cu_group_open(ob_device *const *devs, int n, void **group, ob_err *e)
{
    *group = NULL;
    if (n < 1) return ob_fail(e, OB_ERR_INPUT, "a replica group needs at least one device");
    pthread_once(&nccl_once, nccl_load);
    if (nccl_missing[0])
        return ob_fail(e, OB_ERR_UNSUPPORTED,
                       "data-parallel runs on CUDA sum gradients with NCCL, which could not be loaded (%s); put "
                       "libnccl.so.2 on the library path (LD_LIBRARY_PATH), or run with data_parallel: 1",
                       nccl_missing);
    int *ord = (int *)calloc((size_t)n, sizeof *ord);
    cu_group *g = (cu_group *)calloc(1, sizeof *g);
    ncclComm_t *comm = (ncclComm_t *)calloc((size_t)n, sizeof *comm);
    if (!ord || !g || !comm) {
        free(ord);
        free(g);
        free(comm);
        return ob_fail(e, OB_ERR_NOMEM, "out of host memory");
    }
    for (int r = 0; r < n; r++) {
        ord[r] = devs[r]->index;
        for (int q = 0; q < r; q++)
            if (ord[q] == ord[r]) {
                const int dup = ord[r]; /* read before ord is freed */
                free(ord);
                free(g);
                free(comm);
                return ob_fail(e, OB_ERR_INPUT,
                               "CUDA device %d holds two replicas of one run; NCCL needs one device per replica",
                               dup);
            }
    }
    ncclResult_t res = nccl.comm_init_all(comm, n, ord);
    if (res != ncclSuccess) {
        free(ord);
        free(g);
        free(comm);
        return nccl_fail(e, res, "ncclCommInitAll");
    }
    g->n = n;
    g->ord = ord;
    g->comm = comm;
    *group = g;
    return OB_OK;
}

ob_status ob_cu_group_sum(void *group, ob_device *const *devs, int n, float *const *bufs, int64_t count,
                          ob_err *e)
{
    cu_group *g = (cu_group *)group;
    if (!g || g->n != n) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "group_sum: %d devices, group of %d", n, g ? g->n : 0);
    for (int r = 0; r < n; r++) /* comm[r] works on device ord[r] only */
        if (devs[r]->index != g->ord[r])
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "group_sum: replica %d on device %d, the group's on %d", r,
                                    devs[r]->index, g->ord[r]);
    if (count <= 0) return OB_OK;
    ncclResult_t res = nccl.group_start();
    if (res != ncclSuccess) return nccl_fail(e, res, "ncclGroupStart");
    for (int r = 0; r < n; r++) {
        res = nccl.all_reduce(bufs[r], bufs[r], (size_t)count, ncclFloat, ncclSum, g->comm[r],
                              cu_impl(devs[r])->stream);
        if (res != ncclSuccess) {
            (void)nccl.group_end();
            return nccl_fail(e, res, "ncclAllReduce");
        }
    }
    res = nccl.group_end();
    if (res != ncclSuccess) return nccl_fail(e, res, "ncclGroupEnd");
    return OB_OK;
}

void ob_cu_group_close(void *group)
{
    cu_group *g = (cu_group *)group;
    if (!g) return;
    for (int r = 0; r < g->n; r++)
        if (g->comm[r]) (void)nccl.comm_destroy(g->comm[r]);
    free(g->comm);
    free(g->ord);
    free(g);
}

#else /* built without NCCL */

ob_status ob_cu_group_open(ob_device *const *devs, int n, void **group, ob_err *e)
{
    (void)devs;
    (void)n;
    *group = NULL;
    return ob_fail(e, OB_ERR_UNSUPPORTED,
                   "data-parallel runs on CUDA sum gradients with NCCL, and this build has none: install NCCL's "
                   "header (nccl.h) and build again, or run with data_parallel: 1");
}

ob_status ob_cu_group_sum(void *group, ob_device *const *devs, int n, float *const *bufs, int64_t count,
                          ob_err *e)
{
    (void)group;
    (void)devs;
    (void)n;
    (void)bufs;
    (void)count;
    return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "group_sum without NCCL");
}

void ob_cu_group_close(void *group)
{
    (void)group;
}

#endif
