/* tests/test_rules.c - the per-element rules of optimizers/rules.h against
 * steps computed by hand (the arithmetic is spelled out beside each check),
 * and ob_rule_apply's dispatch against the direct calls. */
#include <string.h>

#include "check.h"
#include "optimizers/rules.h"

static ob_rule rule(int kind)
{
    ob_rule r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    return r;
}

static ob_rule_step step(float lr, float t)
{
    ob_rule_step s;
    memset(&s, 0, sizeof s);
    s.lr = lr;
    s.t = t;
    return s;
}

static void test_sgd(void)
{
    ob_rule r = rule(OB_RULE_SGD);
    ob_rule_step s = step(0.1f, 1);
    float p = 1.0f;
    ob_rule_sgd(&r, &s, &p, 0.5f, NULL);
    CHECK_NEAR(p, 0.95, 1e-7); /* 1 - 0.1*0.5 */
    ob_rule_momentum(&r, 0.9f, 0.5f);
    float buf = 0;
    p = 1.0f;
    ob_rule_sgd(&r, &s, &p, 0.5f, &buf); /* t=1: buf = g = 0.5; p = 1 - 0.05 */
    CHECK_NEAR(buf, 0.5, 1e-7);
    CHECK_NEAR(p, 0.95, 1e-7);
    s.t = 2;
    ob_rule_sgd(&r, &s, &p, 1.0f, &buf); /* buf = 0.9*0.5 + 0.5*1 = 0.95; p = 0.95 - 0.095 */
    CHECK_NEAR(buf, 0.95, 1e-7);
    CHECK_NEAR(p, 0.855, 1e-6);
    ob_rule_momentum(&r, r.momentum, 0);
    r.nesterov = 1;
    r.weight_decay = 0.1f;
    buf = 1.0f;
    p = 2.0f;
    ob_rule_sgd(&r, &s, &p, 0.3f, &buf); /* g = 0.3 + 0.2 = 0.5; buf = 0.9 + 0.5 = 1.4; d = 0.5 + 1.26 = 1.76 */
    CHECK_NEAR(buf, 1.4, 1e-6);
    CHECK_NEAR(p, 2.0 - 0.176, 1e-6);
}

static void test_adam_family(void)
{
    ob_rule r = rule(OB_RULE_ADAM);
    ob_rule_betas(&r, 0.9f, 0.99f);
    r.eps = 0;
    ob_rule_step s = step(0.01f, 1);
    s.bc1 = 0.1f;
    s.bc2 = 0.01f;
    float p = 1, m = 0, v = 0, vmax = 0;
    /* m = 0.2, v = 0.04, m/bc1 = 2, sqrt(v/bc2) = 2: p -= 0.01 */
    ob_rule_adam(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(m, 0.2, 1e-7);
    CHECK_NEAR(v, 0.04, 1e-7);
    CHECK_NEAR(p, 0.99, 1e-6);
    /* eps added after the bias correction of the root, as torch: sqrt(v)/sqrt(bc2) + eps =
     * 0.2/0.1 + 0.5 = 2.5; p -= (0.01/0.1) * 0.2/2.5 = 0.008 (not 0.1 * 0.2 / ((0.2 + 0.5)/0.1)) */
    r.eps = 0.5f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adam(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(p, 0.992, 1e-6);
    r.eps = 0;
    /* AdamW: p *= 1 - lr*wd first; amsgrad keeps the max of v */
    r.decoupled_wd = 1;
    r.weight_decay = 0.5f;
    r.amsgrad = 1;
    p = 1;
    m = 0;
    v = 0;
    vmax = 1.0f; /* larger than the new v: denominator sqrt(1/0.01) = 10 */
    ob_rule_adam(&r, &s, &p, 2.0f, &m, &v, &vmax);
    CHECK_NEAR(vmax, 1.0, 0);
    CHECK_NEAR(p, 0.995 - 0.01 * 2.0 / 10.0, 1e-6);

    /* Adamax: u = max(0.99*0.5, |-1| + 0) = 1; m = -0.1; p -= (0.01/0.1) * -0.1/1 */
    ob_rule ax = rule(OB_RULE_ADAMAX);
    ob_rule_betas(&ax, 0.9f, 0.99f);
    float u = 0.5f;
    p = 1;
    m = 0;
    ob_rule_adamax(&ax, &s, &p, -1.0f, &m, &u);
    CHECK_NEAR(u, 1.0, 1e-7);
    CHECK_NEAR(p, 1.01, 1e-6);
    /* ... and eps 0.5 added to |g|: u = max(0.495, 1.5) = 1.5; p -= (0.01/0.1) * -0.1/1.5 */
    ax.eps = 0.5f;
    u = 0.5f;
    p = 1;
    m = 0;
    ob_rule_adamax(&ax, &s, &p, -1.0f, &m, &u);
    CHECK_NEAR(u, 1.5, 1e-7);
    CHECK_NEAR(p, 1 + 0.01 / 1.5, 1e-6);

    /* NAdam: the step sizes are per-step scalars: p -= c0 g/d + c1 m/d, d = sqrt(v/bc2) + eps */
    ob_rule na = rule(OB_RULE_NADAM);
    ob_rule_betas(&na, 0.9f, 0.99f);
    ob_rule_step sn = s;
    sn.c[0] = 0.5f;
    sn.c[1] = 0.25f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_nadam(&na, &sn, &p, 2.0f, &m, &v); /* m = 0.2, d = 2: p -= 0.5*1 + 0.25*0.1 */
    CHECK_NEAR(p, 1 - 0.525, 1e-6);
    /* eps outside the square root, after the bias correction: d = sqrt(0.04/0.01) + 0.5 = 2.5;
     * p -= 0.5*2/2.5 + 0.25*0.2/2.5 */
    na.eps = 0.5f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_nadam(&na, &sn, &p, 2.0f, &m, &v);
    CHECK_NEAR(p, 1 - 0.42, 1e-6);

    /* RAdam: c1 = 0 -> p -= c0 m; c1 = 1 -> p -= c0 m / (sqrt(v) + eps) */
    ob_rule ra = rule(OB_RULE_RADAM);
    ob_rule_betas(&ra, 0.9f, 0.99f);
    ob_rule_step sr = s;
    sr.c[0] = 0.1f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_radam(&ra, &sr, &p, 2.0f, &m, &v); /* m = 0.2: p -= 0.02 */
    CHECK_NEAR(p, 0.98, 1e-6);
    sr.c[1] = 1;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_radam(&ra, &sr, &p, 2.0f, &m, &v); /* m = 0.2, sqrt(v) = 0.2: p -= 0.1 */
    CHECK_NEAR(p, 0.9, 1e-6);
}

static void test_ada(void)
{
    /* Adagrad: sum = 0.1 + 4 = 4.1 (+ wd: g = 2 + 0.1*1 = 2.1 -> sum 0.1 + 4.41) */
    ob_rule r = rule(OB_RULE_ADAGRAD);
    r.weight_decay = 0.1f;
    ob_rule_step s = step(0.1f, 1);
    s.c[0] = 0.1f;
    float p = 1, sum = 0.1f;
    ob_rule_adagrad(&r, &s, &p, 2.0f, &sum);
    CHECK_NEAR(sum, 4.51, 1e-6);
    CHECK_NEAR(p, 1 - 0.1 * 2.1 / sqrt(4.51), 1e-6);

    /* Adadelta, rho 0.5, eps 0: sq = 0.5*4 = 2; delta = sqrt(acc=2)/sqrt(2) * 2 = 2; acc = 1 + 2 = 3 */
    ob_rule d = rule(OB_RULE_ADADELTA);
    ob_rule_betas(&d, 0, 0.5f);
    ob_rule_step s1 = step(1.0f, 1);
    float sq = 0, acc = 2;
    p = 1;
    ob_rule_adadelta(&d, &s1, &p, 2.0f, &sq, &acc);
    CHECK_NEAR(sq, 2.0, 1e-6);
    CHECK_NEAR(acc, 3.0, 1e-6);
    CHECK_NEAR(p, -1.0, 1e-6);

    /* RMSprop alpha 0.75, centered, momentum 0.5: sq = 0.25*4 = 1; ga = 0.5; var = 0.75;
     * buf = 0.5*1 + 2/sqrt(0.75); p -= 0.1 buf */
    ob_rule rm = rule(OB_RULE_RMSPROP);
    ob_rule_betas(&rm, 0, 0.75f);
    ob_rule_momentum(&rm, 0.5f, 0);
    rm.flags = OB_RULE_CENTERED;
    sq = 0;
    float ga = 0, buf = 1;
    p = 1;
    ob_rule_step s2 = step(0.1f, 1);
    ob_rule_rmsprop(&rm, &s2, &p, 2.0f, &sq, &ga, &buf);
    CHECK_NEAR(ga, 0.5, 1e-7);
    CHECK_NEAR(buf, 0.5 + 2 / sqrt(0.75), 1e-6);
    CHECK_NEAR(p, 1 - 0.1 * (0.5 + 2 / sqrt(0.75)), 1e-6);
    /* rounding that makes sq - ga^2 negative gives a zero variance, not NaN */
    sq = 0;
    ga = 1.0f;
    buf = 0;
    p = 0;
    rm.eps = 1.0f;
    ob_rule_rmsprop(&rm, &s2, &p, 1.0f, &sq, &ga, &buf);
    CHECK(isfinite(p));
}

static void test_lion_and_matrix(void)
{
    ob_rule r = rule(OB_RULE_LION);
    ob_rule_betas(&r, 0.9f, 0.99f);
    r.weight_decay = 0.5f;
    ob_rule_step s = step(0.1f, 1);
    float p = 1, m = 1;
    /* c = 0.9 - 0.1*... : lerp(1, -2, 0.1) = 0.7 > 0; p = 1*(1-0.05) - 0.1; m = lerp(1, -2, 0.01) = 0.97 */
    ob_rule_lion(&r, &s, &p, -2.0f, &m);
    CHECK_NEAR(p, 0.85, 1e-6);
    CHECK_NEAR(m, 0.97, 1e-6);
    m = 0;
    p = 1;
    ob_rule_lion(&r, &s, &p, 0.0f, &m); /* sign(0) = 0: only the decay */
    CHECK_NEAR(p, 0.95, 1e-7);

    /* Muon momentum: M = lerp(1, 3, 0.05) = 1.1; nesterov out = lerp(3, 1.1, 0.95) = 1.195 */
    ob_rule mu = rule(OB_RULE_MUON_MOMENTUM);
    ob_rule_momentum(&mu, 0.95f, 0);
    mu.nesterov = 1;
    float out = 0, mb = 1;
    ob_rule_muon_momentum(&mu, &out, 3.0f, &mb);
    CHECK_NEAR(mb, 1.1, 1e-6);
    CHECK_NEAR(out, 1.195, 1e-6);
    /* ROOT momentum: M = 0.5*1 + 3 = 3.5; out = 3 + 0.5*3.5 = 4.75; without nesterov out = M */
    ob_rule ro = rule(OB_RULE_ROOT_MOMENTUM);
    ob_rule_momentum(&ro, 0.5f, 0);
    ro.nesterov = 1;
    mb = 1;
    ob_rule_root_momentum(&ro, &out, 3.0f, &mb);
    CHECK_NEAR(mb, 3.5, 1e-6);
    CHECK_NEAR(out, 4.75, 1e-6);
    ro.nesterov = 0;
    ob_rule_root_momentum(&ro, &out, 1.0f, &mb);
    CHECK_NEAR(out, 2.75, 1e-6);
    /* apply: p = 2*(1 - 0.1*0.5) - 0.1*3*0.5 */
    ob_rule ap = rule(OB_RULE_MATRIX_APPLY);
    ap.weight_decay = 0.5f;
    ap.c[0] = 3.0f;
    float o = 0.5f;
    p = 2;
    ob_rule_matrix_apply(&ap, &s, &p, &o);
    CHECK_NEAR(p, 1.9 - 0.15, 1e-6);
}

/* Schedule-free AdamW, one element by hand: v = 0.9*0.1 + 0.1*0.04 = 0.094;
 * u = 0.2 / (sqrt(0.094/0.3) + 1e-3) + 0.01*1; y = lerp(1, 0.5, 0.02) +
 * 0.01*(0.8*0.98 - 1) u; z = 0.5 - 0.01 u. And torch's lerp from either end. */
static void test_schedule_free_rule(void)
{
    ob_rule r = rule(OB_RULE_ADAMW_SF);
    ob_rule_betas(&r, 0.8f, 0.9f);
    r.eps = 1e-3f;
    r.weight_decay = 0.01f;
    ob_rule_step s = step(0.01f, 3);
    s.bc2 = 0.3f;
    s.c[0] = 0.02f;
    s.c[1] = (float)(0.01 * (0.8 * (1 - 0.02) - 1));
    float p = 1, z = 0.5f, v = 0.1f;
    ob_rule_adamw_sf(&r, &s, &p, 0.2f, &z, &v);
    CHECK_NEAR(v, 0.094, 1e-7);
    CHECK_NEAR(p, 0.9892080194956517, 1e-6);
    CHECK_NEAR(z, 0.49633342359098026, 1e-6);
    CHECK(ob_lerp(2.0f, 4.0f, 0.25f) == 2.5f && ob_lerp(2.0f, 4.0f, 0.75f) == 3.5f);
    CHECK(ob_lerp(2.0f, 4.0f, 1.0f) == 4.0f && ob_lerp(2.0f, 4.0f, 0.0f) == 2.0f);
}

/* Schedule-free SGD, two steps of one element by hand (momentum 0.8, wd 0.01):
 * u = 0.2 + 0.01*1 = 0.21; y = lerp(1, 0.5, 0.02) + 0.01*(0.8*0.98 - 1) u
 * = 0.99 - 0.00045360 = 0.9895464; z = 0.5 - 0.01 u = 0.4979. Then ckp1 0.6
 * (lerp from z's end), lr 0.1, g = -0.4: u = -0.4 + 0.01 y = -0.390104536;
 * y = lerp(0.9895464, 0.4979, 0.6) + 0.1*(0.8*0.4 - 1) u = 0.72108566845;
 * z = 0.4979 - 0.1 u = 0.5369104536. Without decay u is g alone. */
static void test_schedule_free_sgd_rule(void)
{
    ob_rule r = rule(OB_RULE_SGD_SF);
    r.weight_decay = 0.01f;
    ob_rule_step s = step(0.01f, 1);
    s.c[0] = 0.02f;
    s.c[1] = (float)(0.01 * (0.8 * (1 - 0.02) - 1));
    float p = 1, z = 0.5f;
    ob_rule_sgd_sf(&r, &s, &p, 0.2f, &z);
    CHECK_NEAR(p, 0.9895464, 1e-7);
    CHECK_NEAR(z, 0.4979, 1e-7);
    s = step(0.1f, 2);
    s.c[0] = 0.6f;
    s.c[1] = (float)(0.1 * (0.8 * (1 - 0.6) - 1));
    ob_rule_sgd_sf(&r, &s, &p, -0.4f, &z);
    CHECK_NEAR(p, 0.721085668448, 1e-6);
    CHECK_NEAR(z, 0.5369104536, 1e-6);
    r.weight_decay = 0;
    p = 2;
    z = 1;
    ob_rule_sgd_sf(&r, &s, &p, 0.5f, &z); /* y = lerp(2, 1, 0.6) - 0.068*0.5 = 1.366; z = 1 - 0.05 */
    CHECK_NEAR(p, 1.366, 1e-6);
    CHECK_NEAR(z, 0.95, 1e-7);
}

/* SOAP's rules: Adam in the rotated basis, the update, torch.lerp's two branches. */
static void test_soap_rules(void)
{
    ob_rule r = rule(OB_RULE_SOAP_ADAM);
    ob_rule_betas(&r, 0.9f, 0.99f);
    r.eps = 0.01f; /* large enough to show where it enters */
    float out = 0, m = 0.5f, v = 0.04f;
    ob_rule_soap_adam(&r, &out, 2.0f, &m, &v); /* m = 0.45 + 0.2, v = 0.0396 + 0.04 */
    CHECK_NEAR(m, 0.65, 1e-7);
    CHECK_NEAR(v, 0.0796, 1e-7);
    CHECK_NEAR(out, 0.65 / (sqrt(0.0796) + 0.01), 1e-6);
    ob_rule_step s = step(0.1f, 3);
    s.c[0] = 0.05f;
    s.c[1] = 0.01f;
    float p = 1.0f, u = 2.0f;
    ob_rule a = rule(OB_RULE_SOAP_APPLY);
    ob_rule_soap_apply(&a, &s, &p, &u); /* p = 1 - 0.1 = 0.9, then 0.9 - 0.009 */
    CHECK_NEAR(p, 0.891, 1e-7);
    a.flags = OB_RULE_SKIP_DECAY; /* filter_bias_and_bn: the update alone */
    p = 1.0f;
    ob_rule_soap_apply(&a, &s, &p, &u);
    CHECK_NEAR(p, 0.9, 1e-7);
    ob_rule l = rule(OB_RULE_LERP);
    l.c[0] = 0.1f;
    float x = 1.0f;
    ob_rule_lerp(&l, &x, 3.0f);
    CHECK_NEAR(x, 1.2, 1e-7);
    l.c[0] = 0.75f;
    x = 1.0f;
    ob_rule_lerp(&l, &x, 3.0f); /* 3 - 2 * 0.25 */
    CHECK_NEAR(x, 2.5, 1e-7);
    l.c[0] = 1.0f;
    x = 1.0f;
    ob_rule_lerp(&l, &x, 3.0f); /* the end exactly, as torch.lerp */
    CHECK(x == 3.0f);
}

/* Adafactor's rules: the moment's lerp (of g or g^2) by the step's weight,
 * a vector's preconditioned gradient with its floor, the decayed update. */
static void test_adafactor_rules(void)
{
    ob_rule r = rule(OB_RULE_AF_VAR);
    ob_rule_step s = step(0.1f, 4);
    s.c[1] = 0.25f;
    float v = 1.0f;
    ob_rule_af_var(&r, &s, &v, 3.0f); /* lerp(1, 3, 0.25) */
    CHECK_NEAR(v, 1.5, 1e-7);
    r.c[0] = 1.0f;
    v = 1.0f;
    ob_rule_af_var(&r, &s, &v, 3.0f); /* lerp(1, 9, 0.25) */
    CHECK_NEAR(v, 3.0, 1e-7);
    s.c[1] = 1.0f; /* t = 1: 1 - beta2_1 = 1, the first mean exactly */
    ob_rule_af_var(&r, &s, &v, 3.0f);
    CHECK(v == 9.0f);
    ob_rule q = rule(OB_RULE_AF_VEC);
    q.eps = 1e-3f;
    float out = 0, var = 4.0f;
    ob_rule_af_vec(&q, &out, 2.0f, &var);
    CHECK_NEAR(out, 1.0, 1e-7);
    var = 0.0f; /* floored at eps1^2: g / eps1 */
    ob_rule_af_vec(&q, &out, 2e-3f, &var);
    CHECK_NEAR(out, 2.0, 1e-5);
    var = NAN; /* a NaN variance stays NaN (torch's clamp_), not the floor */
    ob_rule_af_vec(&q, &out, 2e-3f, &var);
    CHECK(isnan(out));
    ob_rule a = rule(OB_RULE_AF_APPLY);
    a.weight_decay = 0.5f;
    s.lr = 0.1f;
    s.c[0] = 0.2f;
    float p = 2.0f, u = 1.0f;
    ob_rule_af_apply(&a, &s, &p, &u); /* 2 * 0.95 - 0.2 */
    CHECK_NEAR(p, 1.7, 1e-6);
    /* the scale: alpha = max(eps2, RMS(p)) rho, denom = max(1, RMS(u) / d) */
    ob_rule_step src = step(0.1f, 4), dst;
    src.c[2] = 0.05f;
    src.c[3] = 1e-3f;
    float sq[2] = {16.0f, 64.0f}; /* numel 4: RMS(p) 2, RMS(u) 4 */
    ob_adafactor_scale(&src, sq, 4, 2.0f, &dst);
    CHECK_NEAR(dst.c[0], 2 * 0.05 / 2, 1e-8);
    CHECK(dst.lr == src.lr && dst.t == src.t && dst.c[2] == src.c[2]);
    sq[0] = 0.0f; /* RMS(p) below eps2; RMS(u) / d below 1 */
    sq[1] = 1.0f;
    ob_adafactor_scale(&src, sq, 4, 2.0f, &dst);
    CHECK_NEAR(dst.c[0], 1e-3 * 0.05, 1e-10);
}

/* torch.optim.Rprop: grow on the same sign, shrink and hold on a flip, the
 * bounds; torch.optim.ASGD: the decayed step and the average past t0. */
static void test_rprop_asgd(void)
{
    ob_rule r = rule(OB_RULE_RPROP);
    r.c[0] = 1.2f; /* etaplus */
    r.c[1] = 0.5f; /* etaminus */
    r.c[2] = 1e-6f;
    r.c[3] = 0.05f;
    float p = 1, prev = 0, st = 0.01f;
    ob_rule_rprop(&r, &p, 0.3f, &prev, &st); /* first step: prev 0, factor 1 */
    CHECK_NEAR(p, 0.99, 1e-7);
    CHECK(st == 0.01f && prev == 0.3f);
    ob_rule_rprop(&r, &p, 0.2f, &prev, &st); /* same sign: 0.012 */
    CHECK_NEAR(st, 0.012, 1e-9);
    CHECK_NEAR(p, 0.978, 1e-7);
    ob_rule_rprop(&r, &p, -0.5f, &prev, &st); /* a flip: 0.006, no move, prev 0 */
    CHECK_NEAR(st, 0.006, 1e-9);
    CHECK_NEAR(p, 0.978, 1e-7);
    CHECK(prev == 0.0f);
    ob_rule_rprop(&r, &p, -0.5f, &prev, &st); /* after the flip: factor 1, moves up */
    CHECK_NEAR(st, 0.006, 1e-9);
    CHECK_NEAR(p, 0.984, 1e-7);
    st = 0.049f;
    ob_rule_rprop(&r, &p, -0.5f, &prev, &st); /* grows past the bound: 0.05 */
    CHECK(st == 0.05f);

    ob_rule a = rule(OB_RULE_ASGD);
    a.c[0] = 0.1f; /* lambd */
    a.weight_decay = 0.5f;
    ob_rule_step s = step(0.1f, 3);
    s.c[0] = 0.2f; /* eta */
    s.c[1] = 1.0f; /* mu: ax follows p */
    float q = 2, ax = 7;
    ob_rule_asgd(&a, &s, &q, 1.0f, &ax); /* g = 2; q = 2 * 0.98 - 0.4 */
    CHECK_NEAR(q, 1.56, 1e-6);
    CHECK(ax == q);
    s.c[1] = 0.25f; /* past t0: ax += (p - ax) / 4 */
    ax = 1.0f;
    ob_rule_asgd(&a, &s, &q, 1.0f, &ax);
    CHECK_NEAR(ax, 1.0 + (q - 1.0) * 0.25, 1e-6);
}

/* ob_rule_apply (what the CUDA kernel calls) does what the direct calls do. */
static void test_dispatch(void)
{
    for (int kind = 0; kind < OB_RULE_COUNT; kind++) {
        ob_rule r = rule(kind);
        ob_rule_betas(&r, 0.8f, 0.9f);
        r.eps = 1e-3f;
        ob_rule_momentum(&r, 0.5f, 0);
        r.weight_decay = 0.01f;
        r.flags = OB_RULE_CENTERED;
        r.c[0] = 1.5f;
        r.n_state = 3;
        ob_rule_step s = step(0.01f, 3);
        s.bc1 = 0.5f;
        s.bc2 = 0.3f;
        s.c[0] = 0.02f;
        s.c[1] = 0.01f;
        float pa[1] = {1}, ga[1] = {0.4f}, a0[1] = {0.1f}, a1[1] = {0.2f}, a2[1] = {0.3f};
        float pb = 1, b0 = 0.1f, b1 = 0.2f, b2 = 0.3f;
        float *st[3] = {a0, a1, a2};
        ob_rule_apply(&r, &s, 0.5f, pa, ga, st, 0);
        /* every rule moves the parameter or its state from these values: a
         * kind that changed nothing has no case in ob_rule_apply */
        CHECK_MSG(pa[0] != 1 || a0[0] != 0.1f || a1[0] != 0.2f || a2[0] != 0.3f,
                  "rule kind %d changed nothing: is its case missing from ob_rule_apply?", kind);
        float g = 0.2f; /* 0.4 * clip 0.5 */
        switch ((ob_rule_kind)kind) { /* every kind (-Wswitch) */
        case OB_RULE_SGD: ob_rule_sgd(&r, &s, &pb, g, &b0); break;
        case OB_RULE_ADAM: ob_rule_adam(&r, &s, &pb, g, &b0, &b1, NULL); break;
        case OB_RULE_NADAM: ob_rule_nadam(&r, &s, &pb, g, &b0, &b1); break;
        case OB_RULE_RADAM: ob_rule_radam(&r, &s, &pb, g, &b0, &b1); break;
        case OB_RULE_ADAMAX: ob_rule_adamax(&r, &s, &pb, g, &b0, &b1); break;
        case OB_RULE_ADAGRAD: ob_rule_adagrad(&r, &s, &pb, g, &b0); break;
        case OB_RULE_ADADELTA: ob_rule_adadelta(&r, &s, &pb, g, &b0, &b1); break;
        case OB_RULE_RMSPROP: ob_rule_rmsprop(&r, &s, &pb, g, &b0, &b1, &b2); break;
        case OB_RULE_LION: ob_rule_lion(&r, &s, &pb, g, &b0); break;
        case OB_RULE_MUON_MOMENTUM: ob_rule_muon_momentum(&r, &pb, g, &b0); break;
        case OB_RULE_ROOT_MOMENTUM: ob_rule_root_momentum(&r, &pb, g, &b0); break;
        case OB_RULE_MATRIX_APPLY: ob_rule_matrix_apply(&r, &s, &pb, &b0); break;
        case OB_RULE_ADAMW_SF: ob_rule_adamw_sf(&r, &s, &pb, g, &b0, &b1); break;
        case OB_RULE_SGD_SF: ob_rule_sgd_sf(&r, &s, &pb, g, &b0); break;
        case OB_RULE_COPY: pb = g; break; /* c[0] != 0: clipped */
        case OB_RULE_LERP: ob_rule_lerp(&r, &pb, 0.4f); break; /* SOAP's rules take g as given */
        case OB_RULE_SOAP_ADAM: ob_rule_soap_adam(&r, &pb, 0.4f, &b0, &b1); break;
        case OB_RULE_SOAP_APPLY: ob_rule_soap_apply(&r, &s, &pb, &b0); break;
        case OB_RULE_AF_VAR: ob_rule_af_var(&r, &s, &pb, 0.4f); break; /* Adafactor's rules too */
        case OB_RULE_AF_VEC: ob_rule_af_vec(&r, &pb, 0.4f, &b0); break;
        case OB_RULE_AF_APPLY: ob_rule_af_apply(&r, &s, &pb, &b0); break;
        case OB_RULE_RPROP: ob_rule_rprop(&r, &pb, g, &b0, &b1); break;
        case OB_RULE_ASGD: ob_rule_asgd(&r, &s, &pb, g, &b0); break;
        case OB_RULE_LAMB: ob_rule_lamb(&r, &s, &pb, g, &b0, &b1, &b2); break;
        case OB_RULE_LARS: ob_rule_lars(&r, &s, &pb, g, &b0); break;
        case OB_RULE_ADEMAMIX: ob_rule_ademamix(&r, &s, &pb, g, &b0, &b1, &b2); break;
        case OB_RULE_ADABELIEF: ob_rule_adabelief(&r, &s, &pb, g, &b0, &b1, NULL); break; /* no amsgrad */
        case OB_RULE_COUNT: break;
        }
        CHECK_MSG(pa[0] == pb && a0[0] == b0 && a1[0] == b1 && a2[0] == b2, "rule kind %d: %g vs %g", kind,
                  (double)pa[0], (double)pb);
    }
}

/* AdEMAMix: the three moments and the update worked out by hand, with the
 * decay added to the update; alpha 0 and beta3 = beta1 give Adam's step
 * with that decay (m2 then equals m1). */
static void test_ademamix_rule(void)
{
    ob_rule r = rule(OB_RULE_ADEMAMIX);
    ob_rule_betas(&r, 0.9f, 0.999f);
    r.eps = 0.5f; /* large enough to show where it enters */
    r.weight_decay = 0.1f;
    r.c[0] = 0.1f;
    r.c[1] = 0.001f;
    ob_rule_step s = step(0.01f, 2);
    s.bc1 = 0.19f;
    s.bc2 = 0.001999f;
    s.c[0] = 0.99f; /* beta3_t */
    s.c[1] = 0.01f;
    s.c[2] = 2.0f;  /* alpha_t */
    s.c[3] = sqrtf(0.001999f);
    float p = 1.5f, m1 = 0.2f, m2 = 0.3f, v = 0.04f;
    ob_rule_ademamix(&r, &s, &p, 2.0f, &m1, &m2, &v);
    const double a = 0.2 * 0.9 + 0.1 * 2.0, b = 0.3 * 0.99 + 0.01 * 2.0, vv = 0.04 * 0.999 + 0.001 * 4.0;
    CHECK_NEAR(m1, a, 1e-7);
    CHECK_NEAR(m2, b, 1e-7);
    CHECK_NEAR(v, vv, 1e-8);
    const double u = (a / 0.19 + 2.0 * b) / (sqrt(vv) / sqrt(0.001999) + 0.5) + 0.1 * 1.5;
    CHECK_NEAR(p, 1.5 - 0.01 * u, 2e-6);
    /* alpha 0, beta3 = beta1: Adam's step with the decay in the update */
    s.c[0] = 0.9f;
    s.c[1] = 0.1f;
    s.c[2] = 0.0f;
    p = 1.5f;
    m1 = m2 = 0.2f;
    v = 0.04f;
    ob_rule_ademamix(&r, &s, &p, 2.0f, &m1, &m2, &v);
    CHECK(m1 == m2);
    CHECK_NEAR(p, 1.5 - 0.01 * (a / 0.19 / (sqrt(vv) / sqrt(0.001999) + 0.5) + 0.15), 2e-6);
}

/* AdaBelief: the second moment is the EMA of (g - m)^2 with the new m, eps
 * added into it (and kept), eps again outside the root; the rectified
 * rule's SGD phase and its phase without a move; the three decays; amsgrad. */
static void test_adabelief_rule(void)
{
    ob_rule r = rule(OB_RULE_ADABELIEF);
    ob_rule_betas(&r, 0.9, 0.99);
    ob_rule_step s = step(0.01f, 1);
    s.c[0] = 0.1f;  /* lr / bc1 = 0.01 / 0.1 */
    s.c[1] = 1.0f;  /* adaptive */
    s.c[2] = 1.0f;  /* moves */
    s.c[3] = 0.1f;  /* sqrt(bc2) = sqrt(0.01) */
    float p = 1, m = 0, v = 0;
    /* m = 0.2, g - m = 1.8, v = 0.01 * 3.24 = 0.0324; denom = 0.18 / 0.1 = 1.8
     * (Adam's would be 0.2 / 0.1 = 2); p -= 0.1 * 0.2 / 1.8 */
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(m, 0.2, 1e-7);
    CHECK_NEAR(v, 0.0324, 1e-8);
    CHECK_NEAR(p, 1 - 0.1 * 0.2 / 1.8, 1e-6);
    /* eps = 0.0076 goes into v, which keeps it (0.0324 + 0.0076 = 0.04), and
     * into the denominator after the bias correction: 0.2 / 0.1 + 0.0076 */
    r.eps = 0.0076f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(v, 0.04, 1e-8);
    CHECK_NEAR(p, 1 - 0.1 * 0.2 / 2.0076, 1e-6);
    r.eps = 0;
    /* the rectified rule's SGD phase: p -= c0 m; without degenerated_to_sgd
     * nothing moves p, while m and v still move */
    s.c[1] = 0.0f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(p, 0.98, 1e-6);
    s.c[2] = 0.0f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK(p == 1.0f);
    CHECK_NEAR(m, 0.2, 1e-7);
    CHECK_NEAR(v, 0.0324, 1e-8);
    s.c[1] = s.c[2] = 1.0f;
    /* L2: g = 2 + 0.5 * 1 = 2.5, m = 0.25, v = 0.01 * 2.25^2, denom 2.25 */
    r.weight_decay = 0.5f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(m, 0.25, 1e-7);
    CHECK_NEAR(p, 1 - 0.1 * 0.25 / 2.25, 1e-6);
    /* decoupled: p *= 1 - lr wd = 0.995 first, then the step of g = 2 */
    r.decoupled_wd = 1;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(p, 0.995 - 0.1 * 0.2 / 1.8, 1e-6);
    /* fixed: p *= c[0] = 1 - wd = 0.5, without the lr */
    r.flags = OB_RULE_FIXED_DECAY;
    r.c[0] = 0.5f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(p, 0.5 - 0.1 * 0.2 / 1.8, 1e-6);
    /* no decay where the filter took it (weight_decay 0), the flag set or not */
    r.weight_decay = 0;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, NULL);
    CHECK_NEAR(p, 1 - 0.1 * 0.2 / 1.8, 1e-6);
    /* amsgrad: the maximum 1 > v = 0.0324 divides: denom = 1 / 0.1 = 10 */
    r.flags = 0;
    r.amsgrad = 1;
    float vmax = 1.0f;
    p = 1;
    m = 0;
    v = 0;
    ob_rule_adabelief(&r, &s, &p, 2.0f, &m, &v, &vmax);
    CHECK(vmax == 1.0f);
    CHECK_NEAR(v, 0.0324, 1e-8);
    CHECK_NEAR(p, 1 - 0.1 * 0.2 / 10, 1e-6);
}

/* LAMB's direction (grad averaging or not, the decay added to u) and its
 * trust ratio (both norms > 0, a zero or NaN norm: 1, LAMBC's clip at 1). */
static void test_lamb_rules(void)
{
    ob_rule r = rule(OB_RULE_LAMB);
    ob_rule_betas(&r, 0.9f, 0.999f);
    r.eps = 1e-6f;
    r.weight_decay = 0.01f;
    r.c[0] = 1.0f;
    ob_rule_step s = step(0.1f, 1);
    s.bc1 = 0.1f;
    s.bc2 = 0.001f;
    s.c[1] = sqrtf(0.001f);
    float out = 0, m = 0, v = 0;
    const float p = 3.0f;
    ob_rule_lamb(&r, &s, &out, 2.0f, &m, &v, &p);
    const double v1 = 4.0 * (double)(1.0f - 0.999f); /* float's 1 - beta2, as the rule has it */
    CHECK_NEAR(m, 0.2, 1e-7);
    CHECK_NEAR(v, v1, 1e-10);
    /* (m / bc1) / (sqrt(v) / sqrt(bc2) + eps) + wd p */
    CHECK_NEAR(out, 2.0 / (sqrt(v1) / sqrt((double)0.001f) + 1e-6) + 0.03, 1e-6);
    r.c[0] = 0.0f; /* no grad averaging: m = beta1 m + g */
    r.weight_decay = 0.0f;
    m = 1.0f;
    v = 0.0f;
    s.bc1 = s.bc2 = s.c[1] = 1.0f; /* no bias correction */
    ob_rule_lamb(&r, &s, &out, 2.0f, &m, &v, &p);
    CHECK_NEAR(m, 2.9, 1e-6);
    CHECK_NEAR(out, 2.9 / (sqrt(v1) + 1e-6), 1e-4);
    ob_rule_step src = step(0.1f, 4), dst;
    src.c[0] = 0.1f;
    const ob_trust lamb = {OB_TRUST_LAMB, 0, 0, 0, 0}, lambc = {OB_TRUST_LAMB, 1, 0, 0, 0};
    float sq[2] = {9.0f, 4.0f}; /* ||p|| 3, ||u|| 2 */
    ob_trust_scale(&src, sq, &lamb, 0.5f, &dst); /* LAMB ignores the clip scale */
    CHECK_NEAR(dst.c[0], 0.15, 1e-7);
    CHECK(dst.lr == src.lr && dst.t == src.t && dst.bc1 == src.bc1);
    ob_trust_scale(&src, sq, &lambc, 1.0f, &dst); /* LAMBC: ratio at most 1 */
    CHECK(dst.c[0] == 0.1f);
    sq[0] = 1.0f; /* ratio 0.5 is not clipped */
    ob_trust_scale(&src, sq, &lambc, 1.0f, &dst);
    CHECK_NEAR(dst.c[0], 0.05, 1e-8);
    const float zero_p[2] = {0.0f, 4.0f}, zero_u[2] = {9.0f, 0.0f}, nan_u[2] = {9.0f, NAN};
    ob_trust_scale(&src, zero_p, &lamb, 1.0f, &dst);
    CHECK(dst.c[0] == 0.1f);
    ob_trust_scale(&src, zero_u, &lamb, 1.0f, &dst);
    CHECK(dst.c[0] == 0.1f);
    ob_trust_scale(&src, nan_u, &lamb, 1.0f, &dst);
    CHECK(dst.c[0] == 0.1f);
}

/* LARS: the ratio trust_coeff ||p|| / (||g|| + wd ||p|| + eps) with ||g||
 * scaled by the clip scale, 1 for a zero or NaN norm, LARC's min(r / lr, 1);
 * the rule d = (g + wd p) r through SGD's momentum. */
static void test_lars_rules(void)
{
    ob_rule_step src = step(0.5f, 3), dst;
    const ob_trust lars = {OB_TRUST_LARS, 0, 1e-3f, 0.1f, 1e-8f}, larc = {OB_TRUST_LARS, 1, 1e-3f, 0.1f, 1e-8f};
    const float sq[2] = {16.0f, 9.0f}; /* ||p|| 4, ||g|| 3 */
    ob_trust_scale(&src, sq, &lars, 1.0f, &dst);
    CHECK_NEAR(dst.c[0], 1e-3 * 4 / (3 + 0.4 + 1e-8), 1e-9);
    CHECK(dst.lr == src.lr);
    ob_trust_scale(&src, sq, &lars, 0.5f, &dst); /* the clipped gradient's norm: 1.5 */
    CHECK_NEAR(dst.c[0], 1e-3 * 4 / (1.5 + 0.4 + 1e-8), 1e-9);
    ob_trust_scale(&src, sq, &larc, 1.0f, &dst); /* LARC: r / lr, at most 1 */
    CHECK_NEAR(dst.c[0], 1e-3 * 4 / (3.4 + 1e-8) / 0.5, 1e-9);
    const ob_trust big = {OB_TRUST_LARS, 1, 10.0f, 0.0f, 1e-8f};
    ob_trust_scale(&src, sq, &big, 1.0f, &dst);
    CHECK(dst.c[0] == 1.0f);
    const float zero_g[2] = {16.0f, 0.0f}, nan_p[2] = {NAN, 9.0f};
    ob_trust_scale(&src, zero_g, &lars, 1.0f, &dst);
    CHECK(dst.c[0] == 1.0f);
    ob_trust_scale(&src, nan_p, &lars, 1.0f, &dst);
    CHECK(dst.c[0] == 1.0f);
    ob_rule r = rule(OB_RULE_LARS);
    r.weight_decay = 0.1f;
    ob_rule_momentum(&r, 0.9f, 0.2f);
    ob_rule_step s = step(0.5f, 1);
    s.c[0] = 0.01f;
    float p = 2.0f, buf = 7.0f;
    ob_rule_lars(&r, &s, &p, 3.0f, &buf); /* d = (3 + 0.2) 0.01 = 0.032; the first update copies it */
    CHECK_NEAR(buf, 0.032, 1e-8);
    CHECK_NEAR(p, 2 - 0.5 * 0.032, 1e-7);
    s.t = 2.0f;
    ob_rule_lars(&r, &s, &p, 3.0f, &buf); /* d = (3 + 0.1984) 0.01; buf = 0.9 buf + 0.8 d */
    const double d2 = (3 + 0.1 * (2 - 0.016)) * 0.01, b2 = 0.9 * 0.032 + 0.8 * d2;
    CHECK_NEAR(buf, b2, 1e-8);
    CHECK_NEAR(p, 2 - 0.016 - 0.5 * b2, 1e-7);
    r.nesterov = 1;
    ob_rule_momentum(&r, r.momentum, 0.0f);
    p = 1.0f;
    buf = 1.0f;
    r.weight_decay = 0.0f;
    ob_rule_lars(&r, &s, &p, 2.0f, &buf); /* d = 0.02, buf = 0.9 + 0.02, d + 0.9 buf */
    CHECK_NEAR(p, 1 - 0.5 * (0.02 + 0.9 * 0.92), 1e-7);
}

/* The decays' complements as torch takes them (1 - beta in double, then a
 * float), and a moving average that takes g whole at weight 1 (torch's lerp
 * from the nearer end): 1.0f - (float)0.99999 is 1.36e-3 off 1e-5, and m +
 * 1 (g - m) loses g where m is 2^24 times larger. */
static void test_complements(void)
{
    ob_rule r = rule(OB_RULE_ADAM);
    ob_rule_betas(&r, 0.0, 0.99999);
    CHECK(r.omb2 == (float)1e-5 && r.omb1 == 1.0f);
    ob_rule_step s = step(1.0f, 1);
    s.bc1 = 1.0f;
    s.bc2 = (float)(1.0 - 0.99999);
    float p = 0, m = 0, v = 0;
    ob_rule_adam(&r, &s, &p, 1.0f, &m, &v, NULL); /* v = 1e-5 exactly as float; p -= 1 / sqrt(v / bc2) = 1 */
    CHECK_MSG(v == (float)1e-5, "v = %.9g, not (float)1e-5", v);
    CHECK_NEAR(p, -1.0, 1e-6);
    m = 1e8f;
    ob_rule_adam(&r, &s, &p, 1.0f, &m, &v, NULL); /* beta1 = 0: m = g */
    CHECK_MSG(m == 1.0f, "beta1 = 0: m = %.9g, not g", m);
    ob_rule ax = rule(OB_RULE_ADAMAX);
    ob_rule_betas(&ax, 0.0, 0.9);
    float u = 1;
    m = -1e8f;
    ob_rule_adamax(&ax, &s, &p, 0.5f, &m, &u);
    CHECK(m == 0.5f);
    ob_rule rm = rule(OB_RULE_RMSPROP);
    ob_rule_betas(&rm, 0, 0.99999);
    float sq = 0;
    p = 0;
    ob_rule_rmsprop(&rm, &s, &p, 1.0f, &sq, NULL, NULL);
    CHECK(sq == (float)1e-5);
    ob_rule mu = rule(OB_RULE_MUON_MOMENTUM);
    ob_rule_momentum(&mu, 0.0, 0);
    float out = 0, buf = 1e8f;
    ob_rule_muon_momentum(&mu, &out, 2.0f, &buf);
    CHECK(buf == 2.0f && out == 2.0f);
    ob_rule sg = rule(OB_RULE_SGD);
    ob_rule_momentum(&sg, 0.5, 0.99999);
    CHECK(sg.omd == (float)1e-5 && sg.omm == 0.5f);
}

int main(void)
{
    test_sgd();
    test_adam_family();
    test_complements();
    test_ada();
    test_lion_and_matrix();
    test_soap_rules();
    test_adafactor_rules();
    test_rprop_asgd();
    test_lamb_rules();
    test_lars_rules();
    test_ademamix_rule();
    test_adabelief_rule();
    test_dispatch();
    test_schedule_free_rule();
    test_schedule_free_sgd_rule();
    return check_done();
}
