/* tests/test_optim_ref.c - replay cases beyond the shared golden ones, checked
 * against float64 references written here from the published update rules
 * (torch.optim semantics; Lion, Muon, ROOT as their papers / torch.optim.Muon).
 *
 * Each case writes its initial parameters and gradient sequence as CSV,
 * runs `optbench replay` in process (ob_cmd_replay: CSV parsing, routing, the
 * pipeline on the CPU backend, output), and compares every step with the
 * reference: |out - ref| <= tol * max(1, max_i |ref|), as the golden check does.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/rng.h"
#include "harness/commands.h"
#include "optimizers/rows.h"

#define MAXN 512
#define MAXSTATE 4

/* ---- references (double) ---------------------------------------------------- */

typedef struct ref {
    int n, rows, cols;          /* rows = 0 for vectors */
    double s[MAXSTATE][MAXN];   /* state, zero at the start */
    double prod;                /* nadam: running product */
} ref;

typedef void (*ref_step_fn)(ref *r, double *p, const double *g, int t);

static double get_set(const char *sets, const char *key, double def)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    const char *q = sets;
    while ((q = strstr(q, pat)) != NULL) {
        if (q == sets || q[-1] == ',') {
            const char *v = q + strlen(pat);
            if (!strncmp(v, "true", 4)) return 1;
            if (!strncmp(v, "false", 5)) return 0;
            return atof(v);
        }
        q++;
    }
    return def;
}

static const char *cur_sets; /* settings of the running case */
#define HP(key, def) get_set(cur_sets, key, def)

static void ref_sgd(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 1e-3), mom = HP("momentum", 0), damp = HP("dampening", 0), wd = HP("weight_decay", 0);
    int nest = HP("nesterov", 0) != 0;
    double clip = HP("train.clip_norm", 0), scale = 1;
    if (clip > 0) {
        double ss = 0;
        for (int i = 0; i < r->n; i++) ss += g[i] * g[i];
        scale = fmin(1.0, clip / (sqrt(ss) + 1e-6));
    }
    for (int i = 0; i < r->n; i++) {
        double d = g[i] * scale + wd * p[i];
        if (mom != 0) {
            double *b = &r->s[0][i];
            *b = t == 1 ? d : mom * *b + (1 - damp) * d;
            d = nest ? d + mom * *b : *b;
        }
        p[i] -= lr * d;
    }
}

/* torch's lr schedule is not torch's: this is the documented one of
 * optimizers/schedule.c, used by the adam cases with a schedule. */
static double sched_lr(double lr, int t, int total)
{
    const char *kind = strstr(cur_sets, "train.schedule=");
    if (!kind) return lr;
    kind += strlen("train.schedule=");
    int w = (int)HP("train.warmup_steps", 0);
    double min_lr = HP("train.min_lr", 0);
    int i = t - 1;
    if (!strncmp(kind, "warmup_cosine", 13)) {
        if (i < w) return lr * (i + 1) / w;
        double rr = (double)(i - w) / (total - w);
        return min_lr + (lr - min_lr) * 0.5 * (1 + cos(M_PI * rr));
    }
    return lr;
}
static int cur_steps;

static void adam_like(ref *r, double *p, const double *g, int t, int decoupled, double wd_def)
{
    double lr = sched_lr(HP("lr", 1e-3), t, cur_steps), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.999),
           eps = HP("eps", 1e-8), wd = HP("weight_decay", wd_def);
    int ams = HP("amsgrad", 0) != 0;
    for (int i = 0; i < r->n; i++) {
        double gi = g[i];
        if (decoupled)
            p[i] *= 1 - lr * wd;
        else
            gi += wd * p[i];
        double *m = &r->s[0][i], *v = &r->s[1][i], *vm = &r->s[2][i];
        *m = b1 * *m + (1 - b1) * gi;
        *v = b2 * *v + (1 - b2) * gi * gi;
        double vh = *v;
        if (ams) {
            *vm = fmax(*vm, *v);
            vh = *vm;
        }
        double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
        p[i] -= lr / bc1 * *m / (sqrt(vh) / sqrt(bc2) + eps);
    }
}

static void ref_adam(ref *r, double *p, const double *g, int t)
{
    adam_like(r, p, g, t, 0, 0);
}

static void ref_adamw(ref *r, double *p, const double *g, int t)
{
    adam_like(r, p, g, t, 1, 1e-2);
}

/* muon's AdamW group with its adamw_* settings */
static void ref_hybrid_adamw(ref *r, double *p, const double *g, int t)
{
    double lr = HP("adamw_lr", 3e-4), b1 = HP("adamw_beta1", 0.9), b2 = HP("adamw_beta2", 0.95),
           eps = HP("adamw_eps", 1e-10), wd = HP("adamw_wd", 0);
    for (int i = 0; i < r->n; i++) {
        p[i] *= 1 - lr * wd;
        double *m = &r->s[0][i], *v = &r->s[1][i];
        *m = b1 * *m + (1 - b1) * g[i];
        *v = b2 * *v + (1 - b2) * g[i] * g[i];
        p[i] -= lr / (1 - pow(b1, t)) * *m / (sqrt(*v / (1 - pow(b2, t))) + eps);
    }
}

/* the AdamW group with adamw_style=moonlight (root's default), as Moonlight's
 * and the ROOT authors' code write it: the optimizer's lr and weight decay,
 * u = m / (eps + sqrt(v)), p -= lr / (bc1 / sqrt(bc2)) u */
static void ref_moonlight_adamw(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 1e-3), b1 = HP("adamw_beta1", 0.9), b2 = HP("adamw_beta2", 0.95),
           eps = HP("adamw_eps", 1e-8), wd = HP("weight_decay", 0.1);
    double scale = (1 - pow(b1, t)) / sqrt(1 - pow(b2, t));
    for (int i = 0; i < r->n; i++) {
        double *m = &r->s[0][i], *v = &r->s[1][i];
        *m += (1 - b1) * (g[i] - *m);
        *v += (1 - b2) * (g[i] * g[i] - *v);
        double u = *m / (eps + sqrt(*v));
        p[i] *= 1 - lr * wd;
        p[i] -= lr / scale * u;
    }
}

static void ref_nadam(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 2e-3), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.999), eps = HP("eps", 1e-8),
           wd = HP("weight_decay", 0), psi = HP("momentum_decay", 4e-3);
    int torch2 = strstr(cur_sets, "formula=torch2") != NULL;
    if (t == 1) r->prod = 1;
    double mu = b1 * (1 - 0.5 * pow(0.96, t * psi)), mun = b1 * (1 - 0.5 * pow(0.96, (t + 1) * psi));
    r->prod *= mu;
    double prod_next = r->prod * mun * (torch2 ? 1 : mu);
    for (int i = 0; i < r->n; i++) {
        double gi = g[i] + wd * p[i];
        double *m = &r->s[0][i], *v = &r->s[1][i];
        *m = b1 * *m + (1 - b1) * gi;
        *v = b2 * *v + (1 - b2) * gi * gi;
        double den = sqrt(*v / (1 - pow(b2, t))) + eps;
        p[i] -= lr * (1 - mu) / (1 - r->prod) * gi / den;
        p[i] -= lr * mun / (1 - prod_next) * *m / den;
    }
}

static void ref_radam(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 1e-3), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.999), eps = HP("eps", 1e-8),
           wd = HP("weight_decay", 0);
    int dec = HP("decoupled_weight_decay", 0) != 0;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    double rinf = 2 / (1 - b2) - 1, rt = rinf - 2 * t * pow(b2, t) / bc2;
    for (int i = 0; i < r->n; i++) {
        double gi = g[i];
        if (dec)
            p[i] *= 1 - lr * wd;
        else
            gi += wd * p[i];
        double *m = &r->s[0][i], *v = &r->s[1][i];
        *m = b1 * *m + (1 - b1) * gi;
        *v = b2 * *v + (1 - b2) * gi * gi;
        double mh = *m / bc1;
        if (rt > 5) {
            double rect = sqrt((rt - 4) * (rt - 2) * rinf / ((rinf - 4) * (rinf - 2) * rt));
            p[i] -= mh * lr * sqrt(bc2) / (sqrt(*v) + eps) * rect;
        } else {
            p[i] -= mh * lr;
        }
    }
}

static void ref_adamax(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 2e-3), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.999), eps = HP("eps", 1e-8),
           wd = HP("weight_decay", 0);
    for (int i = 0; i < r->n; i++) {
        double gi = g[i] + wd * p[i];
        double *m = &r->s[0][i], *u = &r->s[1][i];
        *m = b1 * *m + (1 - b1) * gi;
        *u = fmax(b2 * *u, fabs(gi) + eps);
        p[i] -= lr / (1 - pow(b1, t)) * *m / *u;
    }
}

static void ref_adagrad(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 1e-2), dec = HP("lr_decay", 0), wd = HP("weight_decay", 0), eps = HP("eps", 1e-10),
           init = HP("initial_accumulator_value", 0);
    double clr = lr / (1 + (t - 1) * dec);
    for (int i = 0; i < r->n; i++) {
        if (t == 1) r->s[0][i] = init;
        double gi = g[i] + wd * p[i];
        r->s[0][i] += gi * gi;
        p[i] -= clr * gi / (sqrt(r->s[0][i]) + eps);
    }
}

static void ref_adadelta(ref *r, double *p, const double *g, int t)
{
    (void)t;
    double lr = HP("lr", 1.0), rho = HP("rho", 0.9), eps = HP("eps", 1e-6), wd = HP("weight_decay", 0);
    for (int i = 0; i < r->n; i++) {
        double gi = g[i] + wd * p[i];
        double *sq = &r->s[0][i], *acc = &r->s[1][i];
        *sq = rho * *sq + (1 - rho) * gi * gi;
        double d = sqrt(*acc + eps) / sqrt(*sq + eps) * gi;
        *acc = rho * *acc + (1 - rho) * d * d;
        p[i] -= lr * d;
    }
}

static void ref_rmsprop(ref *r, double *p, const double *g, int t)
{
    (void)t;
    double lr = HP("lr", 1e-2), al = HP("alpha", 0.99), eps = HP("eps", 1e-8), wd = HP("weight_decay", 0),
           mom = HP("momentum", 0);
    int cen = HP("centered", 0) != 0;
    for (int i = 0; i < r->n; i++) {
        double gi = g[i] + wd * p[i];
        double *sq = &r->s[0][i], *ga = &r->s[1][i], *b = &r->s[2][i];
        *sq = al * *sq + (1 - al) * gi * gi;
        double var = *sq;
        if (cen) {
            *ga = al * *ga + (1 - al) * gi;
            var -= *ga * *ga;
        }
        double avg = sqrt(var) + eps;
        if (mom > 0) {
            *b = mom * *b + gi / avg;
            p[i] -= lr * *b;
        } else {
            p[i] -= lr * gi / avg;
        }
    }
}

static void ref_lion(ref *r, double *p, const double *g, int t)
{
    (void)t;
    double lr = HP("lr", 1e-4), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.99), wd = HP("weight_decay", 0);
    for (int i = 0; i < r->n; i++) {
        double *m = &r->s[0][i];
        double c = b1 * *m + (1 - b1) * g[i];
        double sg = c > 0 ? 1 : (c < 0 ? -1 : 0);
        p[i] = p[i] * (1 - lr * wd) - lr * sg;
        *m = b2 * *m + (1 - b2) * g[i];
    }
}

/* AdEMAMix as the paper's Algorithm 1 with its schedulers (alpha linear from
 * 0, beta3 linear in half-life from beta1) and the authors' decay added to
 * the update. */
static void ref_ademamix(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 1e-3), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.999), b3 = HP("beta3", 0.9999),
           alpha = HP("alpha", 2.0), ta = HP("alpha_warmup", 0), tb = HP("beta3_warmup", 0), eps = HP("eps", 1e-8),
           wd = HP("weight_decay", 0);
    if (t < ta) alpha *= t / ta;
    if (t < tb) {
        double a = t / tb, h1 = log(0.5) / log(b1 + 1e-8) - 1, h3 = log(0.5) / log(b3 + 1e-8) - 1;
        b3 = pow(0.5, 1 / ((1 - a) * h1 + a * h3 + 1));
    }
    for (int i = 0; i < r->n; i++) {
        double *m1 = &r->s[0][i], *m2 = &r->s[1][i], *v = &r->s[2][i];
        *m1 = b1 * *m1 + (1 - b1) * g[i];
        *m2 = b3 * *m2 + (1 - b3) * g[i];
        *v = b2 * *v + (1 - b2) * g[i] * g[i];
        double u = (*m1 / (1 - pow(b1, t)) + alpha * *m2) / (sqrt(*v / (1 - pow(b2, t))) + eps);
        p[i] -= lr * (u + wd * p[i]);
    }
}

/* AdaBelief (Zhuang et al. 2020, Algorithm 2) as adabelief-pytorch 0.2 runs
 * it: the decay first (decoupled, fixed or L2), s = beta2 s + (1 - beta2)
 * (g - m)^2 + eps with the new m (eps kept in s), then Adam's step (amsgrad:
 * the maximum of s), or with rectify RAdam's rectified step once N_sma >= 5
 * (its denominator sqrt(s) + eps) and SGD with momentum, or nothing, before. */
static void ref_adabelief(ref *r, double *p, const double *g, int t)
{
    double lr = HP("lr", 1e-3), b1 = HP("beta1", 0.9), b2 = HP("beta2", 0.999), eps = HP("eps", 1e-16),
           wd = HP("weight_decay", 0);
    int dec = HP("weight_decouple", 1) != 0, fixed = HP("fixed_decay", 0) != 0, rect = HP("rectify", 1) != 0,
        to_sgd = HP("degenerated_to_sgd", 1) != 0, ams = HP("amsgrad", 0) != 0;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    double nmax = 2 / (1 - b2) - 1, nsma = nmax - 2 * t * pow(b2, t) / bc2;
    for (int i = 0; i < r->n; i++) {
        double gi = g[i];
        if (dec)
            p[i] *= fixed ? 1 - wd : 1 - lr * wd;
        else
            gi += wd * p[i];
        double *m = &r->s[0][i], *s = &r->s[1][i], *smax = &r->s[2][i];
        *m = b1 * *m + (1 - b1) * gi;
        *s = b2 * *s + (1 - b2) * (gi - *m) * (gi - *m) + eps;
        if (!rect) {
            double sh = *s;
            if (ams) sh = *smax = fmax(*smax, *s);
            p[i] -= lr / bc1 * *m / (sqrt(sh / bc2) + eps);
        } else if (nsma >= 5) {
            double rt = sqrt((nsma - 4) * (nsma - 2) * nmax / ((nmax - 4) * (nmax - 2) * nsma));
            p[i] -= lr * rt * sqrt(bc2) / bc1 * *m / (sqrt(*s) + eps);
        } else if (to_sgd) {
            p[i] -= lr / bc1 * *m;
        }
    }
}

/* Polar Express (arXiv 2505.16932, Algorithm 1) as printed; ns_ref applies
 * its safety factor 1.01 to all but the last triple. */
static const double polar_express[8][3] = {
    {8.28721201814563, -23.595886519098837, 17.300387312530933},
    {4.107059111542203, -2.9478499167379106, 0.5448431082926601},
    {3.9486908534822946, -2.908902115962949, 0.5518191394370137},
    {3.3184196573706015, -2.488488024314874, 0.51004894012372},
    {2.300652019954817, -1.6689039845747493, 0.4188073119525673},
    {1.891301407787398, -1.2679958271945868, 0.37680408948524835},
    {1.8750014808534479, -1.2500016453999487, 0.3750001645474248},
    {1.875, -1.25, 0.375},
};

/* Newton-Schulz on the rows x cols u (in place), tall matrices transposed;
 * X0 = u / max(||u||, eps), or u / (nmul ||u|| + eps) with add_eps. With pe,
 * iteration k uses Polar Express's k-th triple (the last one repeating),
 * else (a, b, c). */
static void ns_ref(double *u, int rows, int cols, double a, double b, double c, int pe, int steps, double eps,
                   int add_eps, double nmul)
{
    int tall = rows > cols, n = tall ? cols : rows, m = tall ? rows : cols;
    static double x[MAXN], x2[MAXN], A[MAXN], B[MAXN];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double v = u[i * cols + j];
            if (tall)
                x[j * m + i] = v;
            else
                x[i * m + j] = v;
        }
    double nrm = 0;
    for (int i = 0; i < n * m; i++) nrm += x[i] * x[i];
    nrm = sqrt(nrm);
    double d = add_eps ? nmul * nrm + eps : fmax(nrm, eps);
    for (int i = 0; i < n * m; i++) x[i] /= d;
    for (int k = 0; k < steps; k++) {
        if (pe) {
            const double *q = polar_express[k < 7 ? k : 7], sf = k < 7 ? 1.01 : 1.0;
            a = q[0] / sf;
            b = q[1] / (sf * sf * sf);
            c = q[2] / (sf * sf * sf * sf * sf);
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int q = 0; q < m; q++) s += x[i * m + q] * x[j * m + q];
                A[i * n + j] = s;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int q = 0; q < n; q++) s += A[i * n + q] * A[q * n + j];
                B[i * n + j] = b * A[i * n + j] + c * s;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++) {
                double s = 0;
                for (int q = 0; q < n; q++) s += B[i * n + q] * x[q * m + j];
                x2[i * m + j] = a * x[i * m + j] + s;
            }
        memcpy(x, x2, sizeof(double) * (size_t)(n * m));
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) u[i * cols + j] = tall ? x[j * m + i] : x[i * m + j];
}

static void ref_muon(ref *r, double *p, const double *g, int t)
{
    (void)t;
    double lr = HP("lr", 1e-3), mu = HP("momentum", 0.95), wd = HP("weight_decay", 0.1);
    int nest = HP("nesterov", 1) != 0;
    int match = strstr(cur_sets, "adjust_lr=match_rms_adamw") != NULL;
    static double u[MAXN];
    for (int i = 0; i < r->n; i++) {
        double *b = &r->s[0][i];
        *b = *b + (1 - mu) * (g[i] - *b);
        u[i] = nest ? g[i] + mu * (*b - g[i]) : *b;
    }
    int pe = strstr(cur_sets, "ns_coeffs=polar_express") != NULL;
    ns_ref(u, r->rows, r->cols, 3.4445, -4.7750, 2.0315, pe, (int)HP("ns_steps", 5), HP("eps", 1e-7), pe, 1.01);
    double scale = match ? 0.2 * sqrt(fmax(r->rows, r->cols)) : sqrt(fmax(1.0, (double)r->rows / r->cols));
    for (int i = 0; i < r->n; i++) p[i] = p[i] * (1 - lr * wd) - lr * scale * u[i];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void ref_root(ref *r, double *p, const double *g, int t)
{
    (void)t;
    double lr = HP("lr", 1e-3), mu = HP("momentum", 0.95), wd = HP("weight_decay", 0.1),
           q = HP("threshold_quantile", 0.9);
    static double u[MAXN], sorted[MAXN];
    for (int i = 0; i < r->n; i++) {
        double *b = &r->s[0][i];
        *b = mu * *b + g[i];
        u[i] = g[i] + mu * *b;
        sorted[i] = fabs(u[i]);
    }
    qsort(sorted, (size_t)r->n, sizeof sorted[0], cmp_double); /* the reference may sort */
    double pos = q * (r->n - 1);
    int lo = (int)floor(pos);
    double th = lo + 1 < r->n ? sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (pos - lo) : sorted[lo];
    th += 1e-9;
    for (int i = 0; i < r->n; i++) u[i] = fmax(-th, fmin(th, u[i]));
    ns_ref(u, r->rows, r->cols, 3.4445, -4.7750, 2.0315, 0, 5, 1e-7, 1, 1.0);
    double scale = 0.2 * sqrt(fmax(r->rows, r->cols));
    for (int i = 0; i < r->n; i++) p[i] = p[i] * (1 - lr * wd) - lr * scale * u[i];
}

/* ---- cases ----------------------------------------------------------------- */

typedef struct rcase {
    const char *name, *opt, *shape, *sets;
    int steps;
    double tol;
    ref_step_fn ref;
    const char *route; /* optional --route */
} rcase;

static const rcase cases[] = {
    {"adam_amsgrad_l2", "adam", "5x7", "lr=0.01,beta2=0.99,amsgrad=true,weight_decay=0.01", 12, 1e-5, ref_adam, NULL},
    {"adamw_amsgrad", "adamw", "30", "lr=0.005,amsgrad=true,weight_decay=0.05", 12, 1e-5, ref_adamw, NULL},
    {"adamw_default_wd", "adamw", "3x4", "lr=0.01", 8, 1e-5, ref_adamw, NULL},
    {"adam_warmup_cosine", "adam", "20",
     "lr=0.01,train.schedule=warmup_cosine,train.warmup_steps=3,train.min_lr=0.001", 10, 1e-5, ref_adam, NULL},
    {"adamax_wd", "adamax", "4x6", "lr=0.01,weight_decay=0.01", 10, 1e-5, ref_adamax, NULL},
    {"adadelta_rho", "adadelta", "25", "rho=0.95,weight_decay=0.001", 10, 1e-5, ref_adadelta, NULL},
    {"radam_switch", "radam", "6x5", "lr=0.01", 10, 1e-5, ref_radam, NULL},
    {"radam_decoupled", "radam", "17", "lr=0.01,weight_decay=0.1,decoupled_weight_decay=true", 9, 1e-5, ref_radam, NULL},
    {"sgd_dampening", "sgd", "40", "lr=0.05,momentum=0.9,dampening=0.3,weight_decay=0.01", 10, 1e-5, ref_sgd, NULL},
    {"sgd_clip", "sgd", "10", "lr=0.1,momentum=0.5,train.clip_norm=0.5", 8, 1e-5, ref_sgd, NULL},
    {"adagrad_decay", "adagrad", "3x4", "lr=0.1,lr_decay=0.01,weight_decay=0.01,initial_accumulator_value=0.05", 10,
     1e-5, ref_adagrad, NULL},
    {"rmsprop_momentum_wd", "rmsprop", "30", "lr=0.01,alpha=0.9,momentum=0.5,weight_decay=0.01", 10, 1e-5, ref_rmsprop,
     NULL},
    {"rmsprop_centered", "rmsprop", "4x4", "lr=0.003,centered=true", 10, 1e-5, ref_rmsprop, NULL},
    {"nadam_torch2_l2", "nadam", "20", "lr=0.003,formula=torch2,weight_decay=0.01", 10, 1e-5, ref_nadam, NULL},
    {"lion_nowd", "lion", "5x5", "lr=0.01,beta1=0.95,beta2=0.98", 10, 1e-5, ref_lion, NULL},
    {"ademamix_warmups_wd", "ademamix", "6x5", "lr=0.01,beta3=0.999,alpha=5,alpha_warmup=6,beta3_warmup=8,weight_decay=0.1",
     12, 1e-5, ref_ademamix, NULL},
    {"ademamix_default", "ademamix", "17", "lr=0.01", 10, 1e-5, ref_ademamix, NULL},
    /* the package's defaults: rectified, its SGD phase until step 5 */
    {"adabelief_default", "adabelief", "6x5", "lr=0.01", 10, 1e-5, ref_adabelief, NULL},
    /* eps large enough that its adding up in s shows */
    {"adabelief_decoupled_eps", "adabelief", "30", "lr=0.005,beta1=0.8,weight_decay=0.1,eps=0.001", 9, 1e-5,
     ref_adabelief, NULL},
    {"adabelief_fixed_no_sgd", "adabelief", "17", "lr=0.01,weight_decay=0.05,fixed_decay=true,degenerated_to_sgd=false",
     10, 1e-5, ref_adabelief, NULL},
    {"adabelief_l2_amsgrad", "adabelief", "5x7",
     "lr=0.01,beta2=0.99,eps=1e-8,rectify=false,amsgrad=true,weight_decouple=false,weight_decay=0.01", 12, 1e-5,
     ref_adabelief, NULL},
    {"muon_match_rms", "muon", "12x20", "lr=0.02,adjust_lr=match_rms_adamw,nesterov=false,weight_decay=0.05", 5, 1e-4,
     ref_muon, NULL},
    {"muon_tall_default", "muon", "20x12", "lr=0.01", 5, 1e-4, ref_muon, NULL},
    {"muon_polar_express", "muon", "12x20", "lr=0.02,ns_coeffs=polar_express", 5, 1e-4, ref_muon, NULL},
    {"muon_polar_express_tall_9", "muon", "20x12", "lr=0.02,ns_coeffs=polar_express,ns_steps=9,eps=0.001", 5, 1e-4,
     ref_muon, NULL},
    {"muon_vector_to_adamw", "muon", "16", "adamw_lr=0.01,adamw_wd=0.1", 8, 1e-5, ref_hybrid_adamw, NULL},
    {"muon_routed_adamw", "muon", "6x4", "adamw_lr=0.01,adamw_beta2=0.99", 8, 1e-5, ref_hybrid_adamw,
     "tag=matrix -> adamw"},
    /* eps large enough that where it is added shows */
    {"root_vector_moonlight", "root", "16", "lr=0.05,weight_decay=0.2,adamw_eps=0.05", 10, 1e-5, ref_moonlight_adamw,
     NULL},
    {"root_routed_moonlight", "root", "6x4", "lr=0.02", 10, 1e-5, ref_moonlight_adamw, "tag=matrix -> adamw"},
    {"root_vector_separate", "root", "16", "adamw_style=separate,adamw_lr=0.01,adamw_wd=0.1,adamw_eps=0.05", 10, 1e-5,
     ref_hybrid_adamw, NULL},
    {"muon_vector_moonlight", "muon", "16", "adamw_style=moonlight,lr=0.05,weight_decay=0.2,adamw_eps=0.05", 10, 1e-5,
     ref_moonlight_adamw, NULL},
    {"root_tall_q80", "root", "20x12", "lr=0.01,threshold_quantile=0.8", 5, 1e-4, ref_root, NULL},
    {"root_wide_wd", "root", "8x24", "lr=0.02,weight_decay=0.2", 5, 1e-4, ref_root, NULL},
};

static void write_row(FILE *f, const float *v, int n)
{
    for (int i = 0; i < n; i++) fprintf(f, "%s%.9g", i ? "," : "", (double)v[i]);
    fputc('\n', f);
}

static void run_case(const rcase *c, const char *dir, int idx)
{
    int rows = 0, cols = 0, n;
    if (sscanf(c->shape, "%dx%d", &rows, &cols) == 2)
        n = rows * cols;
    else {
        n = atoi(c->shape);
        rows = cols = 0;
    }
    char init[512], grads[512], out[512];
    snprintf(init, sizeof init, "%s/%s.init.csv", dir, c->name);
    snprintf(grads, sizeof grads, "%s/%s.grads.csv", dir, c->name);
    snprintf(out, sizeof out, "%s/%s.out.csv", dir, c->name);
    static float pf[MAXN], gf[64][MAXN];
    FILE *f = fopen(init, "w");
    for (int i = 0; i < n; i++) pf[i] = 0.5f * ob_rng_normal(1000 + idx, 1, (uint64_t)i);
    write_row(f, pf, n);
    fclose(f);
    f = fopen(grads, "w");
    for (int t = 0; t < c->steps; t++) {
        float scale = 1.0f / (1.0f + 0.3f * t); /* shrinking gradients make amsgrad's max matter */
        for (int i = 0; i < n; i++) gf[t][i] = scale * ob_rng_normal(2000 + idx, 2 + t, (uint64_t)i);
        if (t == 2 && n > 3) gf[t][3] = 0.0f; /* an exact zero: sign(0), 0/eps */
        write_row(f, gf[t], n);
    }
    fclose(f);

    char *argv[16];
    int argc = 0;
    argv[argc++] = "replay";
    argv[argc++] = "--optimizer";
    argv[argc++] = (char *)c->opt;
    argv[argc++] = "--shape";
    argv[argc++] = (char *)c->shape;
    argv[argc++] = "--set";
    argv[argc++] = (char *)c->sets;
    argv[argc++] = "--init";
    argv[argc++] = init;
    argv[argc++] = "--grads";
    argv[argc++] = grads;
    argv[argc++] = "--out";
    argv[argc++] = out;
    if (c->route) {
        argv[argc++] = "--route";
        argv[argc++] = (char *)c->route;
    }
    int rc = ob_cmd_replay(argc, argv);
    CHECK_MSG(rc == 0, "%s: replay exit %d", c->name, rc);
    if (rc != 0) return;
    ob_rows got;
    ob_err e;
    CHECK_OK(ob_rows_read(out, ',', &got, &e), &e);
    CHECK_MSG(got.n == c->steps, "%s: %d rows", c->name, got.n);

    static ref r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.rows = rows;
    r.cols = cols;
    cur_sets = c->sets;
    cur_steps = c->steps;
    static double p[MAXN], g[MAXN];
    for (int i = 0; i < n; i++) p[i] = pf[i];
    double worst = 0;
    int worst_t = 0;
    for (int t = 1; t <= c->steps && t <= got.n; t++) {
        for (int i = 0; i < n; i++) g[i] = gf[t - 1][i];
        c->ref(&r, p, g, t);
        double sc = 1;
        for (int i = 0; i < n; i++) sc = fmax(sc, fabs(p[i]));
        for (int i = 0; i < n && i < got.len[t - 1]; i++) {
            double err = fabs(got.v[t - 1][i] - p[i]) / sc;
            if (!(err <= worst)) {
                worst = err;
                worst_t = t;
            }
        }
    }
    CHECK_MSG(worst <= c->tol, "%s: worst scaled error %.3g at step %d (tol %g)", c->name, worst, worst_t, c->tol);
    printf("%-22s worst scaled error %.2e (tol %g)\n", c->name, worst, c->tol);
    ob_rows_free(&got);
    unlink(init);
    unlink(grads);
    unlink(out);
}

int main(void)
{
    char dir[] = "/tmp/ob_optim_ref_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) run_case(&cases[i], dir, i);
    rmdir(dir);
    return check_done();
}
