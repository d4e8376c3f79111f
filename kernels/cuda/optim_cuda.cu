/* kernels/cuda/optim_cuda.cu - the fused optimizer step of the CUDA backend.
 *
 * One launch updates a whole group (a contiguous range of the flat arenas,
 * every tensor of the group at once): parameters, gradients and up to
 * OB_RULE_MAX_STATE state roles, with 16-byte (float4) loads and stores when
 * every pointer is 16-byte aligned (the layout aligns groups to 64 bytes) and
 * a scalar tail. The per-element math is ob_rule_apply of optimizers/rules.h,
 * the same function the CPU backend runs. Nothing comes from the host during
 * the step: the clip scale and the skip flag are read from the device
 * statistics, the per-step scalars (lr, bias corrections) from device memory.
 *
 * The kernel is instantiated per rule kind and per number of state roles, so
 * the rule's switch folds away and the state lives in registers; the host
 * picks the instance (every kind below OB_RULE_COUNT has one).
 */
#include "kernels/cuda/cuda_common.cuh"

#define EW_THREADS 256
static_assert(EW_THREADS == OB_CU_RED_THREADS, "the fused step's statistics and sums use cu_block_sum2");

/* Bitwise: did any lane change? */
static __device__ __forceinline__ bool changed4(float4 old, const float *a)
{
    return (__float_as_uint(old.x) ^ __float_as_uint(a[0])) | (__float_as_uint(old.y) ^ __float_as_uint(a[1])) |
           (__float_as_uint(old.z) ^ __float_as_uint(a[2])) | (__float_as_uint(old.w) ^ __float_as_uint(a[3]));
}

/* One element through the shared rule, its state in registers. Rules whose
 * state roles depend on a run-time switch get their roles resolved here at
 * compile time (a pointer that is NULL or not at run time would push the
 * state into local memory); every other kind goes through ob_rule_apply. */
template <int KIND, int NS>
static __device__ __forceinline__ void ew_lane(const ob_rule &rr, const ob_rule_step &step, float clip,
                                               float &p, float g, float &v0, float &v1, float &v2)
{
    if constexpr (KIND == OB_RULE_ADAM && NS == 3) {
        ob_rule_adam(&rr, &step, &p, g * clip, &v0, &v1, &v2); /* vmax is used only with amsgrad */
    } else if constexpr (KIND == OB_RULE_ADAM && NS == 2) {
        ob_rule_adam(&rr, &step, &p, g * clip, &v0, &v1, (float *)0); /* host checked: no amsgrad */
    } else if constexpr (KIND == OB_RULE_ADABELIEF && NS == 3) {
        ob_rule_adabelief(&rr, &step, &p, g * clip, &v0, &v1, &v2); /* amsgrad */
    } else if constexpr (KIND == OB_RULE_ADABELIEF && NS == 2) {
        ob_rule_adabelief(&rr, &step, &p, g * clip, &v0, &v1, (float *)0); /* host checked: no amsgrad */
    } else if constexpr (KIND == OB_RULE_RMSPROP && NS == 1) {
        ob_rule_rmsprop(&rr, &step, &p, g * clip, &v0, (float *)0, (float *)0);
    } else if constexpr (KIND == OB_RULE_RMSPROP && NS == 2) {
        if (rr.flags & OB_RULE_CENTERED)
            ob_rule_rmsprop(&rr, &step, &p, g * clip, &v0, &v1, (float *)0);
        else
            ob_rule_rmsprop(&rr, &step, &p, g * clip, &v0, (float *)0, &v1);
    } else if constexpr (KIND == OB_RULE_RMSPROP && NS == 3) {
        ob_rule_rmsprop(&rr, &step, &p, g * clip, &v0, &v1, &v2);
    } else {
        float *st[OB_RULE_MAX_STATE] = {NS > 0 ? &v0 : (float *)0, NS > 1 ? &v1 : (float *)0,
                                        NS > 2 ? &v2 : (float *)0};
        ob_rule_apply(&rr, &step, clip, &p, &g, st, 0);
    }
}

/* A batch of segments (elementwise_step_batch): segment blockIdx.y starts
 * blockIdx.y strides (floats) past each pointer. All zero for one range. */
struct ew_seg {
    int64_t p, g, s0, s1, s2, sc; /* sc in ob_rule_step units */
};

/* The spans of elementwise_step_spans: bounds in device memory (0 to n),
 * span k without the decay when k + nd0 is odd. */
struct ew_spans {
    const int64_t *bound;
    int n, nd0;
};

/* The span that holds element i: bound[k] <= i < bound[k + 1]. */
static __device__ __forceinline__ int ew_span_at(const int64_t *__restrict__ bound, int n, int64_t i)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) >> 1;
        if (bound[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Sets rr's decay for element i, moving [lo, hi) to the span that holds it
 * when i lies past it (a thread's elements only ever move forward). */
static __device__ __forceinline__ void ew_span_decay(const ew_spans &sp, float wd, int64_t i, int64_t &lo,
                                                     int64_t &hi, ob_rule &rr)
{
    if (i < hi && i >= lo) return;
    const int k = ew_span_at(sp.bound, sp.n, i);
    lo = sp.bound[k];
    hi = sp.bound[k + 1];
    rr.weight_decay = ((k + sp.nd0) & 1) ? 0.0f : wd;
}

/* The kernel's modes, bits: with statistics; a batch; with spans; with the
 * sums of squares of role 2 and of the target. */
enum { EW_PLAIN = 0, EW_STATS = 1, EW_BATCH = 2, EW_SPANS = 4, EW_SUMSQ = 8 };

/* Adds the squares of a float4's lanes to a, in lane order (double). */
static __device__ __forceinline__ void sq4(const float *v, double &a)
{
#pragma unroll
    for (int l = 0; l < 4; l++) a += (double)v[l] * v[l];
}

/* EW_STATS: also sum the gradient statistics of the range (as grad_stats,
 * from the unclipped gradient) into part[2 * block], part[2 * block + 1];
 * the grid is then at most OB_CU_RED_MAX_BLOCKS blocks of
 * OB_CU_RED_THREADS. EW_BATCH: segment blockIdx.y of a batch (seg). A mode
 * of its own, so that the single-range kernels carry no segment arithmetic
 * (registers: the grid is one wave of resident blocks). EW_SPANS (alone or
 * with EW_STATS): the decay of each element from its span (sp), looked up
 * once per float4 (the bounds are multiples of 4, as the op requires).
 * EW_SUMSQ (with EW_BATCH): also sum the squares of role 2 and of the target
 * after the step (before it, unchanged, when the guard skips) into
 * part[2 * (blockIdx.y * gridDim.x + blockIdx.x)] and the entry after (a
 * fixed grid of cu_red_blocks(n) blocks per segment; every thread reaches
 * the block sum, so there is no early return). */
template <int KIND, int NS, int MODE>
static __global__ void __launch_bounds__(EW_THREADS)
    ew_step_kernel(ob_rule r, const ob_rule_step *__restrict__ sc,
                   const ob_step_stats *__restrict__ stats, float *__restrict__ p,
                   const float *__restrict__ g, float *__restrict__ s0, float *__restrict__ s1,
                   float *__restrict__ s2, int64_t n, int vec, double *__restrict__ part, ew_seg seg,
                   ew_spans sp)
{
    constexpr bool STATS = (MODE & EW_STATS) != 0, SPANS = (MODE & EW_SPANS) != 0, SUMSQ = (MODE & EW_SUMSQ) != 0;
    static_assert(!SUMSQ || (NS == 3 && (MODE & EW_BATCH) && !STATS && !SPANS),
                  "EW_SUMSQ: a batch with role 2, without statistics or spans");
    const bool skip = stats->skip != 0.0f; /* the guard: this step changes nothing */
    if (MODE & EW_BATCH) {
        const int64_t b = blockIdx.y;
        p += b * seg.p;
        g += b * seg.g;
        if (NS > 0) s0 += b * seg.s0;
        if (NS > 1) s1 += b * seg.s1;
        if (NS > 2) s2 += b * seg.s2;
        sc += b * seg.sc;
    }
    if (!STATS && !SUMSQ && skip) return;
    const float clip = stats->clip_scale;
    const ob_rule_step step = *sc;
    ob_rule rr = r;
    rr.kind = KIND; /* a compile-time constant for the rule's switch */
    const float wd = r.weight_decay;
    int64_t span_lo = 0, span_hi = 0; /* the span that set rr's decay (none yet) */
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i0 = 0;
    double sq = 0.0, bad = 0.0; /* EW_SUMSQ: the sums of role 2 and of the target */
    if (vec) {
        int64_t n4 = n >> 2;
        for (int64_t j = tid; j < n4; j += stride) {
            if (SUMSQ && skip) {
                const float4 P = reinterpret_cast<const float4 *>(p)[j], S2 = reinterpret_cast<const float4 *>(s2)[j];
                const float pa[4] = {P.x, P.y, P.z, P.w}, a2[4] = {S2.x, S2.y, S2.z, S2.w};
                sq4(a2, sq);
                sq4(pa, bad);
                continue;
            }
            float4 G = reinterpret_cast<const float4 *>(g)[j];
            if (STATS) {
                cu_gstat_one(G.x, sq, bad);
                cu_gstat_one(G.y, sq, bad);
                cu_gstat_one(G.z, sq, bad);
                cu_gstat_one(G.w, sq, bad);
                if (skip) continue;
            }
            float4 P = reinterpret_cast<float4 *>(p)[j];
            float4 S0 = make_float4(0.f, 0.f, 0.f, 0.f), S1 = S0, S2 = S0;
            if (NS > 0) S0 = reinterpret_cast<float4 *>(s0)[j];
            if (NS > 1) S1 = reinterpret_cast<float4 *>(s1)[j];
            if (NS > 2) S2 = reinterpret_cast<float4 *>(s2)[j];
            float pa[4] = {P.x, P.y, P.z, P.w}, ga[4] = {G.x, G.y, G.z, G.w};
            float a0[4] = {S0.x, S0.y, S0.z, S0.w}, a1[4] = {S1.x, S1.y, S1.z, S1.w},
                  a2[4] = {S2.x, S2.y, S2.z, S2.w};
            if (SPANS) ew_span_decay(sp, wd, j << 2, span_lo, span_hi, rr); /* bounds are multiples of 4 */
#pragma unroll
            for (int l = 0; l < 4; l++) ew_lane<KIND, NS>(rr, step, clip, pa[l], ga[l], a0[l], a1[l], a2[l]);
            if (SUMSQ) {
                sq4(a2, sq);
                sq4(pa, bad);
            }
            reinterpret_cast<float4 *>(p)[j] = make_float4(pa[0], pa[1], pa[2], pa[3]);
            /* A role the rule only reads (the orthogonalized update of
             * OB_RULE_MATRIX_APPLY) is not written back: 4 bytes less per element. */
            if (NS > 0 && changed4(S0, a0)) reinterpret_cast<float4 *>(s0)[j] = make_float4(a0[0], a0[1], a0[2], a0[3]);
            if (NS > 1 && changed4(S1, a1)) reinterpret_cast<float4 *>(s1)[j] = make_float4(a1[0], a1[1], a1[2], a1[3]);
            if (NS > 2 && changed4(S2, a2)) reinterpret_cast<float4 *>(s2)[j] = make_float4(a2[0], a2[1], a2[2], a2[3]);
        }
        i0 = n4 << 2;
    }
    float *st[OB_RULE_MAX_STATE] = {NS > 0 ? s0 : (float *)0, NS > 1 ? s1 : (float *)0,
                                    NS > 2 ? s2 : (float *)0};
    for (int64_t i = i0 + tid; i < n; i += stride) {
        if (STATS) cu_gstat_one(g[i], sq, bad);
        if (!skip) {
            if (SPANS) ew_span_decay(sp, wd, i, span_lo, span_hi, rr);
            ob_rule_apply(&rr, &step, clip, p, g, st, i);
        }
        if (SUMSQ) {
            const double a = s2[i], b = p[i];
            sq += a * a;
            bad += b * b;
        }
    }
    if (STATS || SUMSQ) {
        cu_block_sum2(sq, bad);
        const int64_t at = SUMSQ ? (int64_t)blockIdx.y * gridDim.x + blockIdx.x : blockIdx.x;
        if (threadIdx.x == 0) {
            part[2 * at] = sq;
            part[2 * at + 1] = bad;
        }
    }
}

static inline int64_t stride_of(const ew_seg &seg, int k)
{
    return k == 0 ? seg.s0 : k == 1 ? seg.s1 : seg.s2;
}

typedef void (*ew_kernel_fn)(ob_rule, const ob_rule_step *, const ob_step_stats *, float *,
                             const float *, float *, float *, float *, int64_t, int, double *, ew_seg, ew_spans);

/* The instance for (kind, n_state, mode), found by walking the kinds at compile time. */
template <int K>
struct ew_pick {
    template <int MODE>
    static ew_kernel_fn get(int kind, int ns)
    {
        if (kind != K) return ew_pick<K + 1>::template get<MODE>(kind, ns);
        switch (ns) {
        case 0: return ew_step_kernel<K, 0, MODE>;
        case 1: return ew_step_kernel<K, 1, MODE>;
        case 2: return ew_step_kernel<K, 2, MODE>;
        case 3: return ew_step_kernel<K, 3, MODE>;
        default: return (ew_kernel_fn)0;
        }
    }
};
template <>
struct ew_pick<OB_RULE_COUNT> {
    template <int MODE>
    static ew_kernel_fn get(int, int) { return (ew_kernel_fn)0; }
};

/* The EW_SUMSQ instance for a rule kind: LAMB's direction, the one rule
 * that has it (others: NULL, the op composes it from launches). */
static ew_kernel_fn ew_sumsq_fn(int kind, int ns)
{
    if (kind == OB_RULE_LAMB && ns == 3) return ew_step_kernel<OB_RULE_LAMB, 3, EW_BATCH | EW_SUMSQ>;
    return (ew_kernel_fn)0;
}

/* count segments at stride[] (NULL: one range); with_stats only for one.
 * sums (scratch, 2 * count * cu_red_blocks(n) doubles): EW_SUMSQ, its
 * partial sums, block b of segment k at sums[2 * (k * blocks + b)]. */
static ob_status ew_launch(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc, ob_step_stats *stats,
                           float *p, const float *g, float *const *s, int64_t n, int64_t count,
                           const int64_t *stride, bool with_stats, const ew_spans *spans, double *sums,
                           ob_err *e)
{
    if (n <= 0 || count <= 0) return OB_OK;
    if (with_stats && count != 1)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step_stats: %lld segments, not one",
                                (long long)count);
    if (count > 1 && !stride) /* every segment would update the same range at once */
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step_batch: %lld segments without strides",
                                (long long)count);
    int ns = rule->n_state;
    if (ns < 0 || ns > OB_RULE_MAX_STATE || ns > 3)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step: rule kind %d has %d state roles",
                                rule->kind, ns);
    if (spans && count != 1)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step_spans: %lld segments, not one",
                                (long long)count);
    if (sums && (with_stats || spans || !stride))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step_batch_sumsq: a batch only");
    ew_kernel_fn fn = sums    ? ew_sumsq_fn(rule->kind, ns)
                      : spans ? (with_stats ? ew_pick<0>::get<EW_SPANS | EW_STATS>(rule->kind, ns)
                                          : ew_pick<0>::get<EW_SPANS>(rule->kind, ns))
                      : with_stats ? ew_pick<0>::get<EW_STATS>(rule->kind, ns)
                      : count > 1  ? ew_pick<0>::get<EW_BATCH>(rule->kind, ns)
                                   : ew_pick<0>::get<EW_PLAIN>(rule->kind, ns);
    if (!fn)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step: unknown rule kind %d",
                                rule->kind);
    /* The role layouts ew_lane resolves at compile time must match the rule. */
    int centered = (rule->flags & OB_RULE_CENTERED) != 0;
    if (((rule->kind == OB_RULE_ADAM || rule->kind == OB_RULE_ADABELIEF) && ns != 2 + (rule->amsgrad != 0)) ||
        (rule->kind == OB_RULE_RMSPROP && ns != 1 + centered + (rule->momentum != 0.0f)))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL,
                                "cuda elementwise_step: rule kind %d with %d state roles does not match "
                                "its switches",
                                rule->kind, ns);
    float *st[3] = {0, 0, 0};
    static_assert(OB_BATCH_STRIDES == 6 && OB_BATCH_STEP == 5, "ew_seg holds p, g, three roles and the step");
    ew_seg seg = {0, 0, 0, 0, 0, 0};
    if (stride && count > 1) /* (one segment: its strides do not matter) */
        seg = ew_seg{stride[0], stride[1], stride[2], stride[3], stride[4], stride[OB_BATCH_STEP]};
    /* float4 access needs every segment of every pointer 16-byte aligned */
    int vec = cu_aligned16(p) && cu_aligned16(g) && seg.p % 4 == 0 && seg.g % 4 == 0;
    for (int k = 0; k < ns; k++) {
        st[k] = s[k];
        if (!st[k])
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step: state role %d is NULL", k);
        vec = vec && cu_aligned16(st[k]) && stride_of(seg, k) % 4 == 0;
    }
    int64_t work = vec ? (n >> 2) : n;
    unsigned blocks = cu_grid_resident(dev, (const void *)fn, work, EW_THREADS);
    /* With statistics, the partial sums are per block, so their order follows
     * this grid (SM count and the kernel's occupancy), not n alone as the
     * plain reductions' does: repeatable on one GPU and build, and within
     * rounding of grad_stats elsewhere. */
    if (with_stats && blocks > OB_CU_RED_MAX_BLOCKS) blocks = OB_CU_RED_MAX_BLOCKS;
    /* A batch: its segments share the resident blocks (at least one each),
     * gridDim.y <= 65535 segments per launch. */
    if (sums) /* the sums' order: a function of n alone */
        blocks = cu_red_blocks(n);
    else if (count > 1) {
        unsigned share = (unsigned)(cu_grid_resident(dev, (const void *)fn, INT64_MAX / 2, EW_THREADS) / count);
        if (share < 1) share = 1;
        if (blocks > share) blocks = share;
    }
    cuda_impl *c = cu_impl(dev);
    for (int64_t b0 = 0; b0 < count; b0 += 65535) {
        const int64_t nb = count - b0 < 65535 ? count - b0 : 65535;
        float *sb[3] = {st[0] ? st[0] + b0 * seg.s0 : st[0], st[1] ? st[1] + b0 * seg.s1 : st[1],
                        st[2] ? st[2] + b0 * seg.s2 : st[2]};
        fn<<<dim3(blocks, (unsigned)nb), EW_THREADS, 0, c->stream>>>(
            *rule, sc + b0 * seg.sc, stats, p + b0 * seg.p, g + b0 * seg.g, sb[0], sb[1], sb[2], n, vec,
            with_stats ? c->red_part : sums ? sums + 2 * b0 * blocks : (double *)0, seg,
            spans ? *spans : ew_spans{(const int64_t *)0, 0, 0});
        OB_CU_LAUNCHED(e, "elementwise_step");
    }
    if (with_stats)
        return ob_cu_reduce_finish(dev, (int)blocks, CU_RED_ADD_STATS, NULL, stats, "elementwise_step_stats", e);
    return OB_OK;
}

ob_status ob_cu_elementwise_step(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                 const ob_step_stats *stats, float *p, const float *g, float *const *s, int64_t n,
                                 ob_err *e)
{
    return ew_launch(dev, rule, sc, (ob_step_stats *)stats, p, g, s, n, 1, NULL, false, NULL, NULL, e);
}

ob_status ob_cu_elementwise_step_batch(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                       const ob_step_stats *stats, float *p, const float *g, float *const *s,
                                       int64_t n, int64_t count, const int64_t *stride, ob_err *e)
{
    return ew_launch(dev, rule, sc, (ob_step_stats *)stats, p, g, s, n, count, stride, false, NULL, NULL, e);
}

ob_status ob_cu_elementwise_step_stats(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                       ob_step_stats *stats, float *p, const float *g, float *const *s, int64_t n,
                                       ob_err *e)
{
    return ew_launch(dev, rule, sc, stats, p, g, s, n, 1, NULL, true, NULL, NULL, e);
}

/* sq[b] and sq[count + b] = segment b's partial sums of role 2 and of the
 * target, added in block order (double), as floats. */
static __global__ void sumsq2_finish_kernel(const double *__restrict__ part, int64_t count, int blocks,
                                            float *__restrict__ sq)
{
    for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < count; b += (int64_t)gridDim.x * blockDim.x) {
        double a = 0.0, t = 0.0;
        for (int k = 0; k < blocks; k++) {
            a += part[2 * (b * blocks + k)];
            t += part[2 * (b * blocks + k) + 1];
        }
        sq[b] = (float)a;
        sq[count + b] = (float)t;
    }
}

/* LAMB's direction: one launch that steps every segment and sums the
 * squares of role 2 and of the target while it holds them (40 bytes per
 * parameter instead of 48), then one small launch for the totals; the sums
 * in a fixed order of their own (per thread in index order, then
 * cu_block_sum2, then the blocks in order: bitwise repeatable, within
 * rounding of batched_sumsq's). Other rules: the batch, then batched_sumsq of
 * role 2 and of the target (three launches). */
ob_status ob_cu_elementwise_step_batch_sumsq(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                             const ob_step_stats *stats, float *p, const float *g, float *const *s,
                                             int64_t n, int64_t count, const int64_t *stride, float *sq, ob_err *e)
{
    if (n <= 0 || count <= 0) return OB_OK;
    if (rule->n_state < 3 || !s[2] || !stride || count > INT32_MAX)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL,
                                "cuda elementwise_step_batch_sumsq: rule kind %d, %lld segments", rule->kind,
                                (long long)count);
    if (ew_sumsq_fn(rule->kind, rule->n_state)) {
        const int64_t blocks = cu_red_blocks(n);
        double *part;
        OB_TRY(ob_cu_scratch(dev, (size_t)(2 * count * blocks) * sizeof(double), (void **)&part, e));
        OB_TRY(ew_launch(dev, rule, sc, (ob_step_stats *)stats, p, g, s, n, count, stride, false, NULL, part, e));
        const int64_t fb = (count + 127) / 128;
        sumsq2_finish_kernel<<<(unsigned)(fb < 1024 ? fb : 1024), 128, 0, cu_impl(dev)->stream>>>(part, count,
                                                                                                  (int)blocks, sq);
        OB_CU_LAUNCHED(e, "elementwise_step_batch_sumsq");
        return OB_OK;
    }
    OB_TRY(ew_launch(dev, rule, sc, (ob_step_stats *)stats, p, g, s, n, count, stride, false, NULL, NULL, e));
    for (int64_t b0 = 0; b0 < count; b0 += 65535) { /* batched_sumsq's grid holds 65535 */
        const int nb = (int)(count - b0 < 65535 ? count - b0 : 65535);
        OB_TRY(ob_cu_batched_sumsq(dev, s[2] + b0 * stride[4], nb, n, stride[4], sq + b0, e));
        OB_TRY(ob_cu_batched_sumsq(dev, p + b0 * stride[0], nb, n, stride[0], sq + count + b0, e));
    }
    return OB_OK;
}

ob_status ob_cu_elementwise_step_spans(ob_device *dev, const ob_rule *rule, const ob_rule_step *sc,
                                       ob_step_stats *stats, float *p, const float *g, float *const *s, int64_t n,
                                       const int64_t *bound, int n_span, int nd0, int with_stats, ob_err *e)
{
    if (n_span < 1 || !bound)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda elementwise_step_spans: %d spans", n_span);
    const ew_spans sp = {bound, n_span, nd0};
    return ew_launch(dev, rule, sc, stats, p, g, s, n, 1, NULL, with_stats != 0, &sp, NULL, e);
}
