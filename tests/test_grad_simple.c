/* tests/test_grad_simple.c - quadratic's and rosenbrock's gradients against
 * central finite differences of their losses (without gradient noise, a
 * directional derivative per tensor as for the models), and the gradient
 * noise: the same loss, a gradient that differs from the noiseless one by
 * independent N(0, noise^2) values, drawn anew at each step and the same
 * again at one step. */
#include "test_wl_rig.h"

static void gradcheck(const char *name, const char *sets, double h, int nh, double rtol)
{
    wl_rig r;
    if (!wl_rig_open(&r, name, sets, 5, NULL, NULL)) {
        wl_rig_close(&r);
        return;
    }
    int bad = wl_rig_gradcheck(&r, 3, h, nh, rtol, 3e-7, getenv("OB_VERBOSE") != NULL);
    CHECK_MSG(bad == 0, "%d checks of %s (%s) disagree with finite differences", bad, name, sets);
    wl_rig_close(&r);
}

/* name with noise = sigma against the same problem without: the loss alike,
 * the gradient's difference of mean about 0 and standard deviation about
 * sigma over its d values, another draw at another step, the same at one. */
static void noise_check(const char *name, const char *sets, int64_t d, double sigma)
{
    char quiet[256], noisy[256];
    snprintf(quiet, sizeof quiet, "%s,noise=0", sets);
    snprintf(noisy, sizeof noisy, "%s,noise=%g", sets, sigma);
    wl_rig a, b;
    const int ok = wl_rig_open(&a, name, quiet, 5, NULL, NULL) & wl_rig_open(&b, name, noisy, 5, NULL, NULL);
    if (ok) {
        CHECK_MSG(a.lay.n == 1 && b.lay.n == 1 && a.lay.t[0].numel == d && b.lay.t[0].numel == d,
                  "%s: %d tensors of %lld parameters, not one of %lld", name, a.lay.n, (long long)a.lay.t[0].numel,
                  (long long)d);
        const int64_t o = a.lay.t[0].offset; /* the same in both: one tensor */
        float *g0 = malloc((size_t)d * sizeof *g0), *g1 = malloc((size_t)d * sizeof *g1);
        const double l0 = wl_rig_loss(&a, 7), l1 = wl_rig_loss(&b, 7);
        CHECK_MSG(l0 == l1, "%s: noise changed the loss (%.9g against %.9g)", name, l1, l0);
        double s1 = 0, s2 = 0;
        for (int64_t j = 0; j < d; j++) {
            g0[j] = b.g[o + j];
            const double x = (double)b.g[o + j] - a.g[o + j];
            s1 += x;
            s2 += x * x;
        }
        const double mean = s1 / (double)d, sd = sqrt(s2 / (double)d - mean * mean);
        /* over d values: the mean's sd is sigma / sqrt(d), the sd's about sigma / sqrt(2 d) */
        CHECK_MSG(fabs(mean) < 5 * sigma / sqrt((double)d), "%s: the noise's mean %g (sigma %g)", name, mean, sigma);
        CHECK_MSG(fabs(sd / sigma - 1) < 5 / sqrt(2.0 * (double)d), "%s: the noise's sd %g, not %g", name, sd, sigma);
        wl_rig_loss(&b, 8);
        int64_t same = 0;
        for (int64_t j = 0; j < d; j++) same += b.g[o + j] == g0[j];
        CHECK_MSG(same < d / 100, "%s: steps 7 and 8 drew the same noise (%lld of %lld values)", name,
                  (long long)same, (long long)d);
        wl_rig_loss(&b, 7);
        for (int64_t j = 0; j < d; j++) g1[j] = b.g[o + j];
        CHECK_MSG(!memcmp(g0, g1, (size_t)d * sizeof *g0), "%s: step 7 drew other noise the second time", name);
        free(g0);
        free(g1);
    }
    wl_rig_close(&a);
    wl_rig_close(&b);
}

int main(void)
{
    /* a quadratic's central difference is exact but for rounding */
    gradcheck("quadratic", "dim=30,cond=100,noise=0", 1e-2, 1, 1e-4);
    gradcheck("quadratic", "dim=7,cond=1e4,init_scale=3,noise=0", 1e-2, 1, 1e-4);
    /* rosenbrock's is off by h^2 f'''/6: smaller steps settle it */
    gradcheck("rosenbrock", "dim=10,noise=0", 1e-2, 4, 1e-4);
    gradcheck("rosenbrock", "dim=3,init_range=1,noise=0", 1e-2, 4, 1e-4);
    noise_check("quadratic", "dim=1000,cond=10", 1000, 0.25); /* its problem's QR is O(dim^3) */
    noise_check("rosenbrock", "dim=4000", 4000, 0.5);
    return check_done();
}
