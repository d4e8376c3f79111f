/* tests/test_spike.c - the spike guard (train.spike_z_loss, spike_z_grad,
 * spike_window): its score against a float64 reference, the window (nothing
 * is scored before it is full, the standard deviation's floor, every finite step
 * enters it, skipped ones too, a non-finite one does not), and the pipeline
 * around it: a flagged step changes nothing, in every guard mode, counts as
 * an update in skip mode and not in rollback mode (which rolls nothing back
 * for it), is skipped with on_nonfinite = none too, and the window is state
 * a checkpoint keeps. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "optim_rig.h"

/* ---- the score -------------------------------------------------------------- */

static double ref_z(const double *win, int n, double x)
{
    double m = 0, v = 0;
    for (int i = 0; i < n; i++) m += win[i];
    m /= n;
    for (int i = 0; i < n; i++) v += (win[i] - m) * (win[i] - m);
    v = sqrt(v / n);
    if (v < 1e-5 * fabs(m)) v = 1e-5 * fabs(m);
    return v > 0 ? (x - m) / v : 0;
}

static void test_score(void)
{
    float ring[7];
    double win[7];
    for (int i = 0; i < 7; i++) {
        ring[i] = 1.0f + 0.25f * (float)((i * 5) % 7);
        win[i] = ring[i];
    }
    const float xs[] = {0.5f, 1.7f, 3.1f, 40.0f};
    for (int k = 0; k < 4; k++)
        CHECK_NEAR(ob_spike_z(ring, 7, xs[k]), ref_z(win, 7, xs[k]), 1e-12 * (1 + fabs(ref_z(win, 7, xs[k]))));
    /* a window of identical values: a jump scores against the floor of the
     * deviation, 1e-5 of the mean (2e-5 here), the mean itself 0 */
    float flat[4] = {2, 2, 2, 2};
    CHECK_NEAR(ob_spike_z(flat, 4, 2.5f), 0.5 / 2e-5, 1e-6);
    CHECK(ob_spike_z(flat, 4, 2.0f) == 0.0);
    float flat_neg[4] = {-2, -2, -2, -2}; /* a loss below 0: the floor is of |mean| */
    CHECK_NEAR(ob_spike_z(flat_neg, 4, -1.5f), 0.5 / 2e-5, 1e-6);
    /* a window of zeros scores 0, whatever comes */
    float zeros[4] = {0, 0, 0, 0};
    CHECK(ob_spike_z(zeros, 4, 1e30f) == 0.0);
    /* a plateau that differs by rounding alone (127 values of 0.693147182
     * and one an ulp above): the next ulp is no spike (it scored 11 without
     * the floor), a rise of 1e-3 is */
    float plateau[128];
    for (int i = 0; i < 128; i++) plateau[i] = 0.693147182f;
    plateau[77] = nextafterf(0.693147182f, 1.0f);
    CHECK(fabs(ob_spike_z(plateau, 128, nextafterf(plateau[77], 1.0f))) < 0.1);
    CHECK(ob_spike_z(plateau, 128, 0.693147182f * 1.001f) > 90);
}

static void test_window(void)
{
    static ob_spike sp;
    float z[2];
    memset(&sp, 0, sizeof sp);
    sp.window = 4;
    sp.z_loss = 2.0f;
    /* not scored before the window is full: a huge value at the 4th step passes */
    const float first[4] = {1.0f, 2.0f, 1.0f, 100.0f};
    for (int i = 0; i < 4; i++) CHECK(ob_spike_check(&sp, first[i], 1.0f, z) == 0);
    CHECK(sp.seen == 4 && isnan(z[0]) && isnan(z[1])); /* not scored */
    /* window {1, 2, 1, 100}: mean 26, sd ~42.7; 100 scores ~1.73, under 2 */
    CHECK(ob_spike_check(&sp, 100.0f, 1.0f, z) == 0);
    /* the ring overwrote its oldest value: {100, 2, 1, 100} */
    CHECK(sp.loss[0] == 100.0f && sp.loss[3] == 100.0f && sp.seen == 5);
    /* lower values score below 0; after four ones the window is {1, 1, 1, 1} */
    for (int i = 0; i < 4; i++) CHECK(ob_spike_check(&sp, 1.0f, 1.0f, z) == 0);
    /* a flat window scores its own value 0; the gradient-norm score is off (z_grad 0) */
    CHECK(ob_spike_check(&sp, 1.0f, 1e6f, z) == 0);
    sp.z_grad = 3.0f;
    /* after the flat window of ones, 1.1 is a jump of 1e4 floors of the
     * deviation (1e-5), flagged; then the window is no longer flat */
    for (int i = 0; i < 4; i++)
        CHECK(ob_spike_check(&sp, 1.0f + 0.1f * (float)(i % 2), 1.0f + 0.1f * (float)(i % 2), z) ==
              (i == 1 ? OB_SPIKE_LOSS : 0));
    /* losses {1, 1.1, 1, 1.1}: mean 1.05, sd 0.05 */
    CHECK(ob_spike_check(&sp, 1.14f, 1.0f, z) == 0); /* z 1.8 */
    CHECK_NEAR(z[0], 1.8, 1e-5);
    CHECK_NEAR(z[1], -1.0, 1e-5); /* norms {1, 1.1, 1, 1.1} */
    CHECK(ob_spike_check(&sp, 1.1f, 1.0f, z) == 0);
    int64_t seen = sp.seen;
    int f = ob_spike_check(&sp, 50.0f, 50.0f, z);
    CHECK(f == (OB_SPIKE_LOSS | OB_SPIKE_GRAD));
    /* the flagged value entered the window */
    CHECK(sp.seen == seen + 1 && sp.loss[seen % 4] == 50.0f && sp.norm[seen % 4] == 50.0f);
    /* more than z deviations above: window {1, 3} (mean 2, sd 1), threshold 2; 4 scores
     * exactly 2, no spike; 4.5 scores 2.5, one */
    for (int x = 0; x < 2; x++) {
        memset(&sp, 0, sizeof sp);
        sp.window = 2;
        sp.z_loss = 2.0f;
        CHECK(ob_spike_check(&sp, 1.0f, 1.0f, z) == 0 && ob_spike_check(&sp, 3.0f, 1.0f, z) == 0);
        f = ob_spike_check(&sp, x ? 4.5f : 4.0f, 1.0f, z);
        CHECK_MSG(f == (x ? OB_SPIKE_LOSS : 0) && z[0] == (x ? 2.5f : 2.0f), "loss %g: score %g, flags %d",
                  x ? 4.5 : 4.0, z[0], f);
    }
}

/* ---- the pipeline ----------------------------------------------------------- */

/* Step t with loss and a gradient of norm 2 * scale; returns the record's skipped. */
static float rig_step(rig *r, int64_t t, float loss, float scale)
{
    ob_err e;
    for (int i = 0; i < 4; i++) r->g[i] = scale * (i % 2 ? 1.0f : -1.0f);
    *r->loss = loss;
    CHECK_OK(ob_optim_step(r->opt, r->p, r->g, r->loss, t, r->rec, &e), &e);
    return r->rec->skipped;
}

static int64_t blob_t(rig *r, int *has_window)
{
    ob_state_blob b[32];
    int n = ob_optim_state_blobs(r->opt, b, 32);
    int64_t t = -1;
    *has_window = 0;
    for (int i = 0; i < n && i < 32; i++) {
        if (!strcmp(b[i].name, "optim.t")) t = *(int64_t *)b[i].ptr;
        if (!strcmp(b[i].name, "guard.spike_window")) *has_window = b[i].bytes == sizeof(ob_spike);
    }
    return t;
}

/* 8 ordinary steps, a loss spike (9), a gradient spike (10), an ordinary
 * step (11), a non-finite loss (12): per guard mode. */
static void test_pipeline(void)
{
    const char *modes[] = {"skip", "rollback", "none"};
    for (int m = 0; m < 3; m++) {
        char train[200];
        snprintf(train, sizeof train, "spike_z_loss=4,spike_z_grad=4,spike_window=8,on_nonfinite=%s", modes[m]);
        rig r, plain;
        rig_open(&r, "adam", "lr=0.01", train, 4);
        rig_open(&plain, "adam", "lr=0.01", NULL, 4); /* the same steps without the spikes */
        int64_t tp = 0;
        for (int64_t t = 1; t <= 8; t++) {
            float loss = 2.0f + 0.01f * (float)(t % 3), scale = 1.0f + 0.01f * (float)(t % 2);
            CHECK(rig_step(&r, t, loss, scale) == 0.0f);
            CHECK(rig_step(&plain, ++tp, loss, scale) == 0.0f);
        }
        CHECK(memcmp(r.p, plain.p, 4 * sizeof(float)) == 0);
        float before[4];
        memcpy(before, r.p, sizeof before);
        CHECK_MSG(rig_step(&r, 9, 10.0f, 1.0f) == 2.0f, "%s: a loss spike is recorded as 2", modes[m]);
        CHECK(memcmp(r.p, before, sizeof before) == 0);
        CHECK_MSG(rig_step(&r, 10, 2.0f, 30.0f) == 3.0f, "%s: a gradient spike is recorded as 3", modes[m]);
        CHECK(memcmp(r.p, before, sizeof before) == 0);
        int has_window = 0;
        int64_t t = blob_t(&r, &has_window);
        CHECK(has_window);
        /* skip mode cannot know on the host: the update count moves on, as for
         * a non-finite skip; rollback mode reads the flag and takes it back */
        CHECK_MSG(t == (m == 1 ? 8 : 10), "%s: update count %lld", modes[m], (long long)t);
        CHECK(rig_step(&r, 11, 2.0f, 1.0f) == 0.0f);
        CHECK(rig_step(&plain, ++tp, 2.0f, 1.0f) == 0.0f);
        if (m == 1) /* the update count did not move: the same as never having seen the spikes */
            CHECK(memcmp(r.p, plain.p, 4 * sizeof(float)) == 0);
        CHECK(memcmp(r.p, before, sizeof before) != 0);
        /* nothing was rolled back: the rollback mode raised no event */
        int64_t st;
        char kind[32], detail[192];
        CHECK(!ob_optim_pop_event(r.opt, &st, kind, sizeof kind, detail, sizeof detail));
        /* a non-finite loss is the non-finite guard's, and does not enter the window */
        rig_step(&r, 12, NAN, 1.0f);
        CHECK(r.rec->skipped == 1.0f);
        rig_close(&r);
        rig_close(&plain);
    }
    /* off by default: no window, no state */
    rig r;
    rig_open(&r, "sgd", "lr=0.1", NULL, 4);
    int has_window = 1;
    (void)blob_t(&r, &has_window);
    CHECK(!has_window);
    CHECK(rig_step(&r, 1, 1.0f, 1.0f) == 0.0f);
    rig_close(&r);
    /* the keys a run leaves out of its hparams while the guard is off stay last */
    int k = ob_hp_index(ob_train_hp_defs, ob_train_hp_count, "spike_z_loss");
    CHECK(k == ob_train_hp_count - 3);
    CHECK(ob_hp_index(ob_train_hp_defs, ob_train_hp_count, "spike_z_grad") == k + 1);
    CHECK(ob_hp_index(ob_train_hp_defs, ob_train_hp_count, "spike_window") == k + 2);
}

int main(void)
{
    test_score();
    test_window();
    test_pipeline();
    return check_done();
}
