/* tests/test_soap.c - SOAP (optimizers/soap.c) against a float64 reference
 * written here from the algorithm of the authors' soap.py, independently of
 * the optimizer's GEMM/LAPACK path: plain loops for the mode products and
 * Gram matrices, LAPACKE dsyevd / dgeqrf + dorgqr for the bases, a stable
 * sort for the eigenvalue order.
 *
 * The tensors are chosen so that every preconditioner is full rank at the
 * first step (a rank-deficient one has an eigenspace whose basis no two
 * eigensolvers agree on, and Adam in that basis is not invariant to the
 * choice): square matrices, a 4-D kernel whose every unfolding is wide, and
 * matrices whose long side exceeds max_precond_dim (one-sided), plus a 1-D
 * tensor (not preconditioned: Adam with SOAP's step rules).
 */
#include <lapacke.h>
#include <string.h>

#include "check.h"
#include "core/layout.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "optimizers/optim.h"
#include "optim_rig.h"

#define NT 5
#define STEPS 40

static const int t_nd[NT] = {2, 2, 4, 2, 1};
static const int64_t t_shape[NT][4] = {{5, 5}, {3, 9}, {2, 3, 2, 2}, {9, 4}, {6}};
static const double LR = 0.02, B1 = 0.9, B2 = 0.99, SB = 0.9, EPS = 1e-8, WD = 0.1;
static const int FREQ = 4, MAXDIM = 6;

/* ---- the reference, in double --------------------------------------------- */

typedef struct ref_tensor {
    int nd;
    int64_t shape[4], numel;
    double *p, *m, *v;
    double *L[4], *Q[4]; /* (n, n) row-major; Q's column j = eigenvector j; NULL: identity */
} ref_tensor;

static void mode_dims(const ref_tensor *t, int k, int64_t *A, int64_t *n, int64_t *B)
{
    *A = *B = 1;
    for (int j = 0; j < k; j++) *A *= t->shape[j];
    for (int j = k + 1; j < t->nd; j++) *B *= t->shape[j];
    *n = t->shape[k];
}

/* y = x x_k Q^T (fwd: y[a,j,b] = sum_i Q[i][j] x[a,i,b]) or x x_k Q (back: y[a,i,b] = sum_j Q[i][j] x[a,j,b]) */
static void ref_mode(const ref_tensor *t, int k, const double *Q, const double *x, double *y, int back)
{
    int64_t A, n, B;
    mode_dims(t, k, &A, &n, &B);
    for (int64_t a = 0; a < A; a++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t b = 0; b < B; b++) {
                double s = 0;
                for (int64_t i = 0; i < n; i++)
                    s += (back ? Q[j * n + i] : Q[i * n + j]) * x[(a * n + i) * B + b];
                y[(a * n + j) * B + b] = s;
            }
}

static void ref_project(const ref_tensor *t, const double *x, double *y, int back)
{
    double *tmp = malloc((size_t)t->numel * sizeof *tmp);
    memcpy(y, x, (size_t)t->numel * sizeof *y);
    for (int k = 0; k < t->nd; k++) {
        if (!t->Q[k]) continue;
        ref_mode(t, k, t->Q[k], y, tmp, back);
        memcpy(y, tmp, (size_t)t->numel * sizeof *y);
    }
    free(tmp);
}

static void ref_gram(const ref_tensor *t, int k, const double *g, double *out)
{
    int64_t A, n, B;
    mode_dims(t, k, &A, &n, &B);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t a = 0; a < A; a++)
                for (int64_t b = 0; b < B; b++) s += g[(a * n + i) * B + b] * g[(a * n + j) * B + b];
            out[i * n + j] = s;
        }
}

static double *est_eig;
static int cmp_desc(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (est_eig[i] != est_eig[j]) return est_eig[i] > est_eig[j] ? -1 : 1;
    return i - j;
}

static void ref_step(ref_tensor *t, const double *g, int call)
{
    const int64_t N = t->numel;
    double *gram = malloc(sizeof(double) * 64 * 64);
    if (call >= 2) {
        const int k = call - 1;
        double *r = malloc((size_t)N * sizeof *r), *u = malloc((size_t)N * sizeof *u);
        ref_project(t, g, r, 0);
        for (int64_t i = 0; i < N; i++) {
            t->m[i] = B1 * t->m[i] + (1 - B1) * r[i];
            t->v[i] = B2 * t->v[i] + (1 - B2) * r[i] * r[i];
            r[i] = t->m[i] / (sqrt(t->v[i]) + EPS);
        }
        ref_project(t, r, u, 1);
        const double ss = LR * sqrt(1 - pow(B2, k)) / (1 - pow(B1, k));
        for (int64_t i = 0; i < N; i++) {
            t->p[i] -= ss * u[i];
            t->p[i] -= LR * WD * t->p[i];
        }
        free(r);
        free(u);
    }
    const int refresh = call >= 2 && (call - 1) % FREQ == 0;
    double *e = malloc((size_t)N * sizeof *e);
    if (refresh) ref_project(t, t->m, e, 1);
    for (int k = 0; k < t->nd; k++) {
        if (!t->L[k]) continue;
        int64_t A, n, B;
        mode_dims(t, k, &A, &n, &B);
        ref_gram(t, k, g, gram);
        for (int64_t i = 0; i < n * n; i++) t->L[k][i] += (1 - SB) * (gram[i] - t->L[k][i]);
        double *Q = t->Q[k];
        if (call == 1) {
            double w[64];
            memcpy(Q, t->L[k], (size_t)(n * n) * sizeof *Q);
            CHECK(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (int)n, Q, (int)n, w) == 0);
            for (int64_t i = 0; i < n; i++) /* columns in descending order */
                for (int64_t j = 0; j < n / 2; j++) {
                    double x = Q[i * n + j];
                    Q[i * n + j] = Q[i * n + n - 1 - j];
                    Q[i * n + n - 1 - j] = x;
                }
        } else if (refresh) {
            double est[64], P[64 * 64], tau[64];
            int perm[64];
            for (int64_t j = 0; j < n; j++) {
                est[j] = 0;
                for (int64_t a = 0; a < n; a++)
                    for (int64_t b = 0; b < n; b++) est[j] += Q[a * n + j] * t->L[k][a * n + b] * Q[b * n + j];
                perm[j] = (int)j;
            }
            est_eig = est;
            qsort(perm, (size_t)n, sizeof *perm, cmp_desc);
            for (int64_t i = 0; i < n; i++) /* P = L Q[:, perm] */
                for (int64_t j = 0; j < n; j++) {
                    double s = 0;
                    for (int64_t a = 0; a < n; a++) s += t->L[k][i * n + a] * Q[a * n + perm[j]];
                    P[i * n + j] = s;
                }
            CHECK(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (int)n, (int)n, P, (int)n, tau) == 0);
            CHECK(LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (int)n, (int)n, (int)n, P, (int)n, tau) == 0);
            memcpy(Q, P, (size_t)(n * n) * sizeof *Q);
            double *v2 = malloc((size_t)N * sizeof *v2); /* v's slices along k in the new order */
            for (int64_t a = 0; a < A; a++)
                for (int64_t j = 0; j < n; j++)
                    for (int64_t b = 0; b < B; b++) v2[(a * n + j) * B + b] = t->v[(a * n + perm[j]) * B + b];
            memcpy(t->v, v2, (size_t)N * sizeof *v2);
            free(v2);
        }
    }
    if (refresh) ref_project(t, e, t->m, 0);
    free(e);
    free(gram);
}

/* ---- the optimizer on the CPU backend ---------------------------------------- */

static void run_case(void)
{
    ob_err e;
    char sets[256];
    snprintf(sets, sizeof sets,
             "lr=%g,beta1=%g,beta2=%g,shampoo_beta=%g,eps=%g,weight_decay=%g,precondition_frequency=%d,"
             "max_precond_dim=%d",
             LR, B1, B2, SB, EPS, WD, FREQ, MAXDIM);
    rig r;
    rig_open_tensors(&r, "soap", sets, NT, t_nd, t_shape, STEPS);
    ob_optim *o = r.opt;
    const ob_layout lay = r.lay;
    float *p = r.p, *g = r.g, *loss = r.loss;

    ref_tensor rt[NT];
    for (int i = 0; i < NT; i++) {
        ref_tensor *t = &rt[i];
        memset(t, 0, sizeof *t);
        t->nd = t_nd[i];
        t->numel = 1;
        for (int k = 0; k < t->nd; k++) t->shape[k] = t_shape[i][k], t->numel *= t_shape[i][k];
        t->p = calloc((size_t)t->numel, sizeof(double));
        t->m = calloc((size_t)t->numel, sizeof(double));
        t->v = calloc((size_t)t->numel, sizeof(double));
        for (int k = 0; k < t->nd && t->nd > 1; k++)
            if (t->shape[k] <= MAXDIM) {
                t->L[k] = calloc((size_t)(t->shape[k] * t->shape[k]), sizeof(double));
                t->Q[k] = calloc((size_t)(t->shape[k] * t->shape[k]), sizeof(double));
            }
        const ob_tensor *lt = &lay.t[i];
        for (int64_t j = 0; j < t->numel; j++) {
            p[lt->offset + j] = ob_rng_normal(7, (uint64_t)i, (uint64_t)j);
            t->p[j] = p[lt->offset + j];
        }
    }
    double worst = 0;
    for (int call = 1; call <= STEPS; call++) {
        for (int i = 0; i < NT; i++) {
            const ob_tensor *lt = &lay.t[i];
            double *gd = malloc((size_t)rt[i].numel * sizeof *gd);
            for (int64_t j = 0; j < rt[i].numel; j++) {
                /* a gradient that depends on the parameters, plus noise */
                float gj = 0.5f * p[lt->offset + j] + ob_rng_normal(11 + (uint64_t)call, (uint64_t)i, (uint64_t)j);
                g[lt->offset + j] = gj;
                gd[j] = gj;
            }
            ref_step(&rt[i], gd, call);
            free(gd);
        }
        CHECK_OK(ob_optim_step(o, p, g, loss, call, NULL, &e), &e);
        for (int i = 0; i < NT; i++)
            for (int64_t j = 0; j < rt[i].numel; j++) {
                double dd = fabs(p[lay.t[i].offset + j] - rt[i].p[j]);
                if (dd > worst) worst = dd;
            }
        if (call == 1)
            for (int i = 0; i < NT; i++) /* the first update moves nothing */
                for (int64_t j = 0; j < rt[i].numel; j++)
                    CHECK(p[lay.t[i].offset + j] == (float)ob_rng_normal(7, (uint64_t)i, (uint64_t)j));
    }
    /* 40 steps of lr 0.02: the parameters moved by O(0.5); float32 rounding
     * through eigensolvers and QR stays well below 1e-4 */
    printf("soap vs float64 reference, %d steps: max |p - p_ref| = %.3g\n", STEPS, worst);
    CHECK_MSG(worst < 1e-4, "max |p - p_ref| = %g", worst);
    for (int i = 0; i < NT; i++) {
        free(rt[i].p);
        free(rt[i].m);
        free(rt[i].v);
        for (int k = 0; k < 4; k++) {
            free(rt[i].L[k]);
            free(rt[i].Q[k]);
        }
    }
    rig_close(&r);
}

int main(void)
{
    run_case();
    return check_done();
}
