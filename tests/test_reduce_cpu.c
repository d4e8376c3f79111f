/* tests/test_reduce_cpu.c - the CPU backend's reductions (dot, and the
 * gradient statistics of grad_stats and elementwise_step_stats) against a
 * scalar reference summing in the order the backend specifies: chunks of
 * 8192 elements added in chunk order; within a chunk, element i in running
 * sum (i - lo) mod 8, the eight combined as ((0+1)+(2+3))+((4+5)+(6+7)),
 * then the tail after the last full eight. Equal bit for bit, on 1, 2 and 3
 * threads, with lengths around every boundary and non-finite values planted
 * in the vector body and in the tail. The values span many binades, so a
 * different order of additions changes the bits (checked by mutation).
 * Every vector path the CPU has is checked in turn (the portable one, and
 * reduce_x86.c's AVX2 and AVX-512 ones), each against the same reference. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu.h"

enum { CHUNK = 8192 };

static double ref_chunk(const float *x, const float *y, int64_t lo, int64_t hi, double *bad)
{
    double lane[8] = {0}, tail = 0;
    const int64_t end = lo + (hi - lo) / 8 * 8;
    for (int64_t i = lo; i < hi; i++) {
        const double v = y ? (double)x[i] * y[i] : (double)x[i] * x[i];
        const int fin = y || fabsf(x[i]) <= FLT_MAX;
        if (!fin) *bad += 1;
        if (i < end)
            lane[(i - lo) % 8] += fin ? v : 0.0;
        else if (fin)
            tail += v;
    }
    return (((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))) + tail;
}

/* y NULL: (sum of squares of the finite x, count of the others); else x.y.
 * Each chunk's sum is added to s0 in turn, as statistics accumulate over
 * parameter groups. */
static double ref_sum(const float *x, const float *y, int64_t n, double s0, double *bad)
{
    double s = s0;
    *bad = 0;
    for (int64_t lo = 0; lo < n; lo += CHUNK) s += ref_chunk(x, y, lo, lo + CHUNK < n ? lo + CHUNK : n, bad);
    return s;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* elementwise_step_batch_sumsq (LAMB's direction and its two norms in one
 * sweep) against elementwise_step_batch, then batched_sumsq of role 2 and
 * of the target: the arrays and the sums bit for bit, on 1 to 3 threads,
 * segments of one chunk, of several and with a tail, spaced apart; with the
 * guard's skip the arrays stay and the sums are still taken. */
static void test_batch_sumsq(ob_device *dev)
{
    ob_err e;
    ob_rule r = {.kind = OB_RULE_LAMB, .n_state = 3, .eps = 1e-6f, .weight_decay = 0.01f};
    ob_rule_betas(&r, 0.9f, 0.999f);
    r.c[0] = 1.0f;
    const ob_rule_step sc = {1e-3f, 3.0f, 0.271f, 0.003f, {1e-3f, 0.0547f, 0, 0}};
    static const int64_t shapes[][2] = {{100, 3}, {8192, 2}, {3 * 8192 + 13, 4}, {40000, 1}};
    for (int threads = 1; threads <= 3; threads++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int skip = 0; skip < 2; skip++) {
                omp_set_num_threads(threads);
                const int64_t n = shapes[si][0], count = shapes[si][1], sp = n + 20;
                /* target u (spacing n), g, m, v and the parameters (spacing sp) */
                const int64_t stride[OB_BATCH_STRIDES] = {n, sp, sp, sp, sp, 0};
                float *a[2][5];
                for (int v = 0; v < 2; v++)
                    for (int k = 0; k < 5; k++) {
                        const int64_t len = count * (k ? sp : n);
                        a[v][k] = malloc((size_t)len * sizeof(float));
                        for (int64_t i = 0; i < len; i++) {
                            const float z = ob_rng_normal(60 + (uint64_t)k, 1, (uint64_t)i);
                            a[v][k][i] = k == 3 ? z * z : z * (k == 1 ? 0.1f : 1.0f);
                        }
                    }
                ob_step_stats st = {0, 0, 0, 0.9f, (float)skip, 0, 0};
                float sq[2][16];
                CHECK_OK(dev->ops->elementwise_step_batch_sumsq(dev, &r, &sc, &st, a[0][0], a[0][1], a[0] + 2, n,
                                                                count, stride, sq[0], &e),
                         &e);
                CHECK_OK(dev->ops->elementwise_step_batch(dev, &r, &sc, &st, a[1][0], a[1][1], a[1] + 2, n, count,
                                                          stride, &e),
                         &e);
                CHECK_OK(dev->ops->batched_sumsq(dev, a[1][4], (int)count, n, sp, sq[1], &e), &e);
                CHECK_OK(dev->ops->batched_sumsq(dev, a[1][0], (int)count, n, n, sq[1] + count, &e), &e);
                for (int k = 0; k < 5; k++)
                    CHECK_MSG(!memcmp(a[0][k], a[1][k], (size_t)(count * (k ? sp : n)) * sizeof(float)),
                              "batch_sumsq n=%lld x %lld threads=%d skip=%d: array %d differs", (long long)n,
                              (long long)count, threads, skip, k);
                CHECK_MSG(!memcmp(sq[0], sq[1], (size_t)(2 * count) * sizeof(float)) && sq[0][0] > 0,
                          "batch_sumsq n=%lld x %lld threads=%d skip=%d: sums %.9g %.9g, batched_sumsq's %.9g %.9g",
                          (long long)n, (long long)count, threads, skip, (double)sq[0][0], (double)sq[0][count],
                          (double)sq[1][0], (double)sq[1][count]);
                for (int v = 0; v < 2; v++)
                    for (int k = 0; k < 5; k++) free(a[v][k]);
            }
    omp_set_num_threads(2);
}

int main(void)
{
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    const int64_t lens[] = {0, 1, 7, 8, 9, 15, 8191, 8192, 8193, 3 * 8192 + 13, 40000, 200003};
    const int64_t nmax = 200003;
    float *x = malloc((size_t)nmax * sizeof *x), *y = malloc((size_t)nmax * sizeof *y);
    CHECK(x && y);
    if (!x || !y) return check_done();
    float *out = malloc((size_t)nmax * sizeof *out);
    CHECK(out != NULL);
    if (!out) return check_done();
    const ob_rule copy_rule = {.kind = OB_RULE_COPY};
    const ob_rule_step no_step = {0};
    float *no_state[OB_RULE_MAX_STATE] = {0};
    static const char *const isa_name[] = {"portable", "avx2", "avx512"};
    int paths = 0;
    for (int isa = OB_CPU_ISA_GENERIC; isa <= OB_CPU_ISA_AVX512; isa++) {
        if (ob_cpu_reduce_isa(isa) != isa) {
            printf("%s path: skipped (this CPU lacks it)\n", isa_name[isa]);
            continue;
        }
        printf("%s path\n", isa_name[isa]);
        paths++;
        for (int64_t i = 0; i < nmax; i++) {
            /* magnitudes over many binades, so the order of additions shows in the bits */
            x[i] = ob_rng_normal(11, 0, (uint64_t)i) * ldexpf(1.0f, (int)(i % 29) - 14);
            y[i] = ob_rng_normal(12, 0, (uint64_t)i);
        }
        x[5] = FLT_TRUE_MIN; /* a subnormal */
        for (int pass = 0; pass < 3; pass++) {
            if (pass == 1) { /* non-finite values in vector bodies and in tails */
                x[2] = INFINITY;
                x[8] = NAN;
                x[8190] = -INFINITY;
                x[8192 + 8192 + 3] = NAN;
                x[3 * 8192 + 10] = -NAN;
                x[199999] = INFINITY;
            }
            if (pass == 2) x[3] = FLT_MAX; /* finite: its square, exact in double, dwarfs the rest */
            for (int threads = 1; threads <= 3; threads++) {
                omp_set_num_threads(threads);
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    const int64_t n = lens[li];
                    double bad, want = ref_sum(x, NULL, n, 0, &bad), bad2, want2 = ref_sum(x, NULL, n, want, &bad2);
                    ob_step_stats st = {0};
                    CHECK_OK(dev.ops->grad_stats(&dev, x, n, &st, &e), &e);
                    CHECK_MSG(same_bits(st.sumsq, want) && st.nonfinite == bad,
                              "grad_stats n=%lld threads=%d: %.17g, %g non-finite; reference %.17g, %g", (long long)n,
                              threads, st.sumsq, st.nonfinite, want, bad);
                    /* statistics accumulate over groups */
                    CHECK_OK(dev.ops->grad_stats(&dev, x, n, &st, &e), &e);
                    CHECK(same_bits(st.sumsq, want2) && st.nonfinite == bad + bad2);
                    /* the same sums inside an update (on_nonfinite = none): a copy rule */
                    ob_step_stats su = {.clip_scale = 1.0f};
                    CHECK_OK(dev.ops->elementwise_step_stats(&dev, &copy_rule, &no_step, &su, out, x, no_state, n, &e),
                             &e);
                    CHECK_MSG(same_bits(su.sumsq, want) && su.nonfinite == bad,
                              "elementwise_step_stats n=%lld threads=%d: %.17g, %g non-finite; reference %.17g, %g",
                              (long long)n, threads, su.sumsq, su.nonfinite, want, bad);
                    CHECK(n == 0 || (memcmp(out, x, (size_t)n * sizeof *x) == 0));
                    if (pass == 0) {
                        double dbad, dwant = ref_sum(x, y, n, 0, &dbad);
                        float got = -1;
                        CHECK_OK(dev.ops->dot(&dev, n, x, y, &got, &e), &e);
                        CHECK_MSG(got == (float)dwant, "dot n=%lld threads=%d: %.9g, reference %.9g", (long long)n,
                                  threads, (double)got, dwant);
                    }
                }
                /* single chunks at many offsets: a chunk's own sum shows its order
                 * more often than a total of many does */
                for (int64_t off = 0; pass == 0 && off + 8192 <= nmax; off += 4099) {
                    const int64_t n = off % 2 ? 8192 : 8000;
                    double bad, want = ref_sum(x + off, NULL, n, 0, &bad);
                    ob_step_stats st = {0};
                    CHECK_OK(dev.ops->grad_stats(&dev, x + off, n, &st, &e), &e);
                    CHECK_MSG(same_bits(st.sumsq, want) && st.nonfinite == bad,
                              "grad_stats at %lld, n=%lld, threads=%d: %.17g; reference %.17g", (long long)off,
                              (long long)n, threads, st.sumsq, want);
                }
            }
        }
    }
    ob_cpu_reduce_isa(OB_CPU_ISA_AUTO);
    CHECK(paths >= 1);
    test_batch_sumsq(&dev);
    omp_set_num_threads(2);
    free(x);
    free(y);
    free(out);
    ob_device_close(&dev);
    return check_done();
}
