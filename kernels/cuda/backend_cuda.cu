/* kernels/cuda/backend_cuda.cu - the CUDA backend: device detection and
 * opening, memory, copies, timers (CUDA events), and the ops table.
 *
 * The kernels live beside this file by concern (elementwise and reductions,
 * BLAS, the fused optimizer step, workload kernels); this file collects them
 * into one const table. Every CUDA / cuBLAS / cuSOLVER call is checked and a
 * failure becomes an ob_err with the op's name and the library's message.
 * The probe never fails hard: without a driver or a device it says why and
 * returns 0, so `--backend auto` falls back to the CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/module.h"

/* ---- errors ---------------------------------------------------------------- */

ob_status ob_cu_fail(ob_err *e, cudaError_t err, const char *op, const char *call, const char *file,
                     int line)
{
    ob_status s = err == cudaErrorMemoryAllocation ? OB_ERR_NOMEM : OB_ERR_BACKEND;
    /* A failed runtime call (a cudaMalloc out of memory, say) stays the thread's
     * "last error": reset it, or the next op's launch check (cudaGetLastError)
     * would report this failure as its own. Sticky errors persist regardless. */
    (void)cudaGetLastError();
    return ob_fail_at(e, s, file, line, "cuda %s: %s failed: %s (%s)", op, call,
                      cudaGetErrorString(err), cudaGetErrorName(err));
}

ob_status ob_cublas_fail(ob_err *e, cublasStatus_t st, const char *op, const char *call,
                         const char *file, int line)
{
    ob_status s = st == CUBLAS_STATUS_ALLOC_FAILED ? OB_ERR_NOMEM : OB_ERR_BACKEND;
    return ob_fail_at(e, s, file, line, "cuda %s: %s failed: %s (%s, cuBLAS status %d)", op, call,
                      cublasGetStatusString(st), cublasGetStatusName(st), (int)st);
}

ob_status ob_cusolver_fail(ob_err *e, cusolverStatus_t st, const char *op, const char *call,
                           const char *file, int line)
{
    ob_status s = st == CUSOLVER_STATUS_ALLOC_FAILED ? OB_ERR_NOMEM : OB_ERR_BACKEND;
    return ob_fail_at(e, s, file, line, "cuda %s: %s failed: cuSOLVER status %d", op, call, (int)st);
}

/* ---- probe and open -------------------------------------------------------- */

/* A kernel that every build has: used to ask whether this build's machine
 * code (or PTX) can run on the device at all. */
static __global__ void cu_noop_kernel(void) {}

/* Device `index` is the one asked about; it becomes the calling thread's
 * current device, as open would make it. Only it gets a context (from the
 * kernel check), so a process that runs on device 3 leaves device 0 alone.
 * An index past the visible devices is left to open to refuse ("does not
 * exist"), also under --backend auto, rather than falling back to the CPU. */
static int cuda_probe(int index, char *desc, size_t n)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        snprintf(desc, n, "the CUDA runtime reports: %s (%s)", cudaGetErrorString(err),
                 cudaGetErrorName(err));
        (void)cudaGetLastError();
        return 0;
    }
    if (count <= 0) {
        snprintf(desc, n, "no CUDA device is visible (CUDA_VISIBLE_DEVICES=%s)",
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
        return 0;
    }
    if (index < 0 || index >= count) {
        snprintf(desc, n, "cuda: %d device%s, none with index %d", count, count > 1 ? "s" : "", index);
        return count;
    }
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, index);
    if (err != cudaSuccess) {
        snprintf(desc, n, "cudaGetDeviceProperties(%d) failed: %s", index, cudaGetErrorString(err));
        (void)cudaGetLastError();
        return 0;
    }
    cudaFuncAttributes attr;
    err = cudaSetDevice(index); /* makes its context (CUDA 12 and later) */
    if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, cu_noop_kernel);
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction ||
        err == cudaErrorUnsupportedPtxVersion) {
        snprintf(desc, n,
                 "device %d, %s (sm_%d%d), cannot run this build's kernels: %s; rebuild with "
                 "-DCMAKE_CUDA_ARCHITECTURES=%d%d",
                 index, prop.name, prop.major, prop.minor, cudaGetErrorString(err), prop.major, prop.minor);
        (void)cudaGetLastError();
        return 0;
    }
    if (err != cudaSuccess) { /* busy, prohibited, out of memory for a context, ... */
        snprintf(desc, n, "device %d, %s: %s (%s)", index, prop.name, cudaGetErrorString(err),
                 cudaGetErrorName(err));
        (void)cudaGetLastError();
        return 0;
    }
    snprintf(desc, n, "cuda: %d device%s; device %d: %s (sm_%d%d)", count, count > 1 ? "s" : "", index,
             prop.name, prop.major, prop.minor);
    return count;
}

static void cuda_close(ob_device *dev)
{
    cuda_impl *c = cu_impl(dev);
    if (!c) return;
    /* its handles, stream and memory belong to dev's GPU: destroyed there */
    const int prev = ob_cu_enter(dev);
    if (c->stream) (void)cudaStreamSynchronize(c->stream);
    for (int i = 0; i < OB_TIMER_SLOTS; i++)
        if (c->marks[i]) (void)cudaEventDestroy(c->marks[i]);
    for (int i = 0; i < OB_CU_STAGE_SLOTS; i++)
        if (c->stage_ev[i]) (void)cudaEventDestroy(c->stage_ev[i]);
    if (c->stage) (void)cudaFreeHost(c->stage);
    if (c->red_part) (void)cudaFree(c->red_part);
    if (c->scratch) (void)cudaFree(c->scratch);
    if (c->solve_ws) (void)cudaFree(c->solve_ws);
    if (c->solve_info) (void)cudaFree(c->solve_info);
    if (c->solver) (void)cusolverDnDestroy(c->solver);
    if (c->blas) (void)cublasDestroy(c->blas);
    if (c->stream) (void)cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    ob_cu_leave(dev, prev);
    free(c);
    dev->impl = NULL;
}

static ob_status cuda_open_impl(ob_device *dev, int index, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    int count = 0;
    OB_CU(e, "open", cudaGetDeviceCount(&count));
    if (index < 0 || index >= count)
        return ob_fail(e, OB_ERR_INPUT, "CUDA device %d does not exist (%d visible)", index, count);
    OB_CU(e, "open", cudaSetDevice(index));
    cudaDeviceProp prop;
    OB_CU(e, "open", cudaGetDeviceProperties(&prop, index));
    c->sm_count = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    cudaFuncAttributes attr;
    cudaError_t err = cudaFuncGetAttributes(&attr, cu_noop_kernel);
    if (err != cudaSuccess)
        return ob_fail(e, OB_ERR_BACKEND,
                       "cuda open: %s (sm_%d%d) cannot run this build's kernels: %s; rebuild with "
                       "-DCMAKE_CUDA_ARCHITECTURES=%d%d",
                       prop.name, prop.major, prop.minor, cudaGetErrorString(err), prop.major,
                       prop.minor);
    OB_CU(e, "open", cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    OB_CUBLAS(e, "open", cublasCreate(&c->blas));
    OB_CUBLAS(e, "open", cublasSetStream(c->blas, c->stream));
    /* OPTBENCH_MATMUL_PRECISION = highest | high | medium (torch's names for
     * fp32, TF32 and bf16 products of fp32 matrices); OPTBENCH_TF32=1 is high. */
    const char *mp = getenv("OPTBENCH_MATMUL_PRECISION"), *tf = getenv("OPTBENCH_TF32");
    c->matmul = tf && tf[0] == '1' ? 1 : 0;
    if (mp && *mp) {
        if (!strcmp(mp, "highest"))
            c->matmul = 0;
        else if (!strcmp(mp, "high"))
            c->matmul = 1;
        else if (!strcmp(mp, "medium"))
            c->matmul = 2;
        else
            return ob_fail(e, OB_ERR_INPUT,
                           "OPTBENCH_MATMUL_PRECISION='%.40s' is not one of highest (fp32), high (tf32), medium "
                           "(bf16); unset it for fp32",
                           mp);
    }
    OB_CUBLAS(e, "open", cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH));
    OB_CU(e, "open", cudaMalloc((void **)&c->red_part, 2 * OB_CU_RED_MAX_BLOCKS * sizeof(double)));
    /* Pinned staging for small uploads; without it uploads still work. */
    if (cudaHostAlloc((void **)&c->stage, (size_t)OB_CU_STAGE_SLOTS * OB_CU_STAGE_BYTES,
                      cudaHostAllocDefault) != cudaSuccess) {
        c->stage = NULL;
        (void)cudaGetLastError();
    } else {
        for (int i = 0; i < OB_CU_STAGE_SLOTS; i++)
            OB_CU(e, "open", cudaEventCreateWithFlags(&c->stage_ev[i], cudaEventDisableTiming));
    }
    size_t free_b = 0, total_b = 0;
    OB_CU(e, "open", cudaMemGetInfo(&free_b, &total_b));
    snprintf(dev->desc, sizeof dev->desc, "cuda: %.120s (sm_%d%d, %d SMs, %.1f GiB, matmul %s)", prop.name,
             prop.major, prop.minor, prop.multiProcessorCount, (double)total_b / (1024.0 * 1024 * 1024),
             c->matmul == 2 ? "bf16" : c->matmul == 1 ? "tf32" : "fp32");
    return OB_OK;
}

static ob_status cuda_open(ob_device *dev, int index, ob_err *e)
{
    dev->impl = calloc(1, sizeof(cuda_impl));
    if (!dev->impl) return ob_fail(e, OB_ERR_NOMEM, "out of host memory");
    ob_status s = cuda_open_impl(dev, index, e);
    if (s != OB_OK) cuda_close(dev);
    return s;
}

/* ---- memory ---------------------------------------------------------------- */

static ob_status cuda_alloc_here(ob_device *dev, size_t bytes, void **out, ob_err *e)
{
    *out = NULL;
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        (void)cudaMemGetInfo(&free_b, &total_b);
        (void)cudaGetLastError();
        return ob_fail(e, err == cudaErrorMemoryAllocation ? OB_ERR_NOMEM : OB_ERR_BACKEND,
                       "cuda alloc: cudaMalloc of %zu bytes failed: %s (%.2f GiB free of %.2f GiB)",
                       bytes, cudaGetErrorString(err), (double)free_b / (1 << 30),
                       (double)total_b / (1 << 30));
    }
    /* The contract of ob_dev_alloc: memory starts zeroed (in stream order). */
    err = cudaMemsetAsync(p, 0, bytes, cu_impl(dev)->stream);
    if (err != cudaSuccess) {
        (void)cudaFree(p);
        return ob_cu_fail(e, err, "alloc", "cudaMemsetAsync", __FILE__, __LINE__);
    }
    *out = p;
    return OB_OK;
}

static ob_status cuda_alloc(ob_device *dev, size_t bytes, void **out, ob_err *e)
{
    const int prev = ob_cu_enter(dev);
    ob_status s = cuda_alloc_here(dev, bytes, out, e);
    ob_cu_leave(dev, prev);
    return s;
}

/* The scratch buffer replaced by one of at least `bytes` (the old one freed
 * once the stream is done with it), on dev's GPU (current: ob_cu_enter). */
static ob_status scratch_grow(ob_device *dev, size_t bytes, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    size_t want = bytes + bytes / 4 + 4096;
    if (c->scratch) {
        OB_CU(e, "scratch", cudaStreamSynchronize(c->stream));
        OB_CU(e, "scratch", cudaFree(c->scratch));
        c->scratch = NULL;
        c->scratch_bytes = 0;
    }
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, want);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ob_fail(e, err == cudaErrorMemoryAllocation ? OB_ERR_NOMEM : OB_ERR_BACKEND,
                       "cuda scratch: cudaMalloc of %zu bytes failed: %s", want, cudaGetErrorString(err));
    }
    c->scratch = p;
    c->scratch_bytes = want;
    return OB_OK;
}

ob_status ob_cu_scratch(ob_device *dev, size_t bytes, void **out, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    if (bytes > c->scratch_bytes) {
        const int prev = ob_cu_enter(dev);
        ob_status s = scratch_grow(dev, bytes, e);
        ob_cu_leave(dev, prev);
        if (s != OB_OK) return s;
    }
    *out = c->scratch;
    return OB_OK;
}

/* Work queued on the stream may still read p: it is waited for here rather
 * than left to cudaFree's implicit synchronization, which stream-ordered
 * allocators (cudaFreeAsync, pools) would not give. Frees are rare. */
static void cuda_release(ob_device *dev, void *p)
{
    if (!p) return;
    const int prev = ob_cu_enter(dev);
    if (cudaStreamSynchronize(cu_impl(dev)->stream) != cudaSuccess) (void)cudaGetLastError();
    if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
    ob_cu_leave(dev, prev);
}

static ob_status cuda_upload(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e)
{
    if (!bytes) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    if (c->stage && bytes <= (size_t)OB_CU_STAGE_CHUNKS * OB_CU_STAGE_BYTES) {
        for (size_t off = 0; off < bytes; off += OB_CU_STAGE_BYTES) {
            const size_t n = bytes - off < OB_CU_STAGE_BYTES ? bytes - off : OB_CU_STAGE_BYTES;
            int slot = c->stage_next;
            c->stage_next = (slot + 1) % OB_CU_STAGE_SLOTS;
            if (c->stage_pending[slot]) OB_CU(e, "upload", cudaEventSynchronize(c->stage_ev[slot]));
            unsigned char *buf = c->stage + (size_t)slot * OB_CU_STAGE_BYTES;
            memcpy(buf, (const unsigned char *)src + off, n);
            OB_CU(e, "upload",
                  cudaMemcpyAsync((unsigned char *)dst + off, buf, n, cudaMemcpyHostToDevice, c->stream));
            const cudaError_t rec = cudaEventRecord(c->stage_ev[slot], c->stream);
            if (rec != cudaSuccess) {
                /* the slot's event is not this copy's: wait for the copy
                 * here, or the ring would come back to a slot still read */
                if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
                c->stage_pending[slot] = 0;
                return ob_cu_fail(e, rec, "upload", "cudaEventRecord(c->stage_ev[slot], c->stream)", __FILE__,
                                  __LINE__);
            }
            c->stage_pending[slot] = 1;
        }
        return OB_OK;
    }
    /* From pageable memory the call returns once src has been staged (and
     * may wait for the stream: uploads this large are not a step's). */
    OB_CU(e, "upload", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream));
    return OB_OK;
}

static ob_status cuda_download(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e)
{
    if (!bytes) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    OB_CU(e, "download", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream));
    OB_CU(e, "download", cudaStreamSynchronize(c->stream));
    return OB_OK;
}

static ob_status cuda_copy(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e)
{
    if (!bytes || dst == src) return OB_OK;
    OB_CU(e, "copy", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cu_impl(dev)->stream));
    return OB_OK;
}

static ob_status cuda_sync(ob_device *dev, ob_err *e)
{
    OB_CU(e, "sync", cudaStreamSynchronize(cu_impl(dev)->stream));
    return OB_OK;
}

static ob_status cuda_mem_info(ob_device *dev, size_t *free_b, size_t *total_b, ob_err *e)
{
    const int prev = ob_cu_enter(dev);
    cudaError_t err = cudaMemGetInfo(free_b, total_b);
    ob_cu_leave(dev, prev);
    if (err != cudaSuccess) return ob_cu_fail(e, err, "mem_info", "cudaMemGetInfo", __FILE__, __LINE__);
    return OB_OK;
}

/* ---- timers: one event per slot, created on first use ------------------------ */

static ob_status cuda_timer_mark(ob_device *dev, int slot, ob_err *e)
{
    if (slot < 0 || slot >= OB_TIMER_SLOTS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "timer slot %d out of range", slot);
    cuda_impl *c = cu_impl(dev);
    if (!c->marks[slot]) {
        const int prev = ob_cu_enter(dev);
        cudaError_t err = cudaEventCreate(&c->marks[slot]);
        ob_cu_leave(dev, prev);
        if (err != cudaSuccess) {
            c->marks[slot] = NULL;
            return ob_cu_fail(e, err, "timer_mark", "cudaEventCreate", __FILE__, __LINE__);
        }
    }
    OB_CU(e, "timer_mark", cudaEventRecord(c->marks[slot], c->stream));
    return OB_OK;
}

static ob_status cuda_timer_read(ob_device *dev, int a, int b, double *ms, ob_err *e)
{
    if (a < 0 || a >= OB_TIMER_SLOTS || b < 0 || b >= OB_TIMER_SLOTS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "timer slot out of range");
    cuda_impl *c = cu_impl(dev);
    if (!c->marks[a] || !c->marks[b])
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "timer slot %d or %d was never marked", a, b);
    float f = 0;
    OB_CU(e, "timer_read", cudaEventSynchronize(c->marks[b]));
    OB_CU(e, "timer_read", cudaEventElapsedTime(&f, c->marks[a], c->marks[b]));
    *ms = f;
    return OB_OK;
}

/* ---- the table --------------------------------------------------------------- */

/* Filled by assignment rather than designated initializers: C++ requires
 * those in declaration order, and slots are added to backend.h over time. */
static ob_backend_ops cuda_make_ops(void)
{
    ob_backend_ops o;
    memset(&o, 0, sizeof o);
    o.name = "cuda";
    o.probe = cuda_probe;
    o.open = cuda_open;
    o.close = cuda_close;
    o.alloc = cuda_alloc;
    o.release = cuda_release;
    o.upload = cuda_upload;
    o.download = cuda_download;
    o.copy = cuda_copy;
    o.sync = cuda_sync;
    o.mem_info = cuda_mem_info;
    o.make_current = ob_cu_make_current;
    o.group_open = ob_cu_group_open;
    o.group_sum = ob_cu_group_sum;
    o.group_close = ob_cu_group_close;
    o.timer_mark = cuda_timer_mark;
    o.timer_read = cuda_timer_read;
    o.fill = ob_cu_fill;
    o.axpby = ob_cu_axpby;
    o.round_bf16 = ob_cu_round_bf16;
    o.rng_normal = ob_cu_rng_normal;
    o.dot = ob_cu_dot;
    o.gemm = ob_cu_gemm;
    o.gemm_strided_batched = ob_cu_gemm_sb;
    o.gemm_sb_bf16 = ob_cu_gemm_sb_bf16;
    o.grad_stats = ob_cu_grad_stats;
    o.finish_stats = ob_cu_finish_stats;
    o.elementwise_step = ob_cu_elementwise_step;
    o.elementwise_step_stats = ob_cu_elementwise_step_stats;
    o.elementwise_step_batch = ob_cu_elementwise_step_batch;
    o.elementwise_step_spans = ob_cu_elementwise_step_spans;
    o.elementwise_step_batch_sumsq = ob_cu_elementwise_step_batch_sumsq;
    o.batched_normalize = ob_cu_batched_normalize;
    o.batched_sumsq = ob_cu_batched_sumsq;
    o.abs_quantile = ob_cu_abs_quantile;
    o.clamp_abs = ob_cu_clamp_abs;
    o.svd_polar = ob_cu_svd_polar;
    o.swap01 = ob_cu_swap01;
    o.sym_eigvecs = ob_cu_sym_eigvecs;
    o.qr_orth = ob_cu_qr_orth;
    o.eig_order = ob_cu_eig_order;
    o.rows_sumsq = ob_cu_rows_sumsq;
    o.cols_sumsq = ob_cu_cols_sumsq;
    o.adafactor_precond = ob_cu_adafactor_precond;
    o.adafactor_scale = ob_cu_adafactor_scale;
    o.trust_scale = ob_cu_trust_scale;
    o.rosenbrock = ob_cu_rosenbrock;
    ob_cu_fill_nn_ops(&o);
    ob_cu_fill_conv_ops(&o);
    return o;
}

/* The module's one export (kernels/cuda/module.h): the table, for the
 * program of the same build only. */
extern "C" __attribute__((visibility("default"))) const ob_backend_ops *ob_cuda_module_ops(const char *stamp,
                                                                                          size_t ops_size,
                                                                                          size_t device_size)
{
    if (!stamp || strcmp(stamp, OB_CUDA_MODULE_STAMP) != 0 || ops_size != sizeof(ob_backend_ops) ||
        device_size != sizeof(ob_device))
        return NULL;
    static const ob_backend_ops ops = cuda_make_ops(); /* initialised once, thread-safe */
    return &ops;
}
