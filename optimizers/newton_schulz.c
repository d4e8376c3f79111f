/* optimizers/newton_schulz.c - batched Newton-Schulz through the backend's
 * GEMM slots, the Muon and ROOT coefficient tables, coefficient files. */
#include "optimizers/newton_schulz.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "optimizers/rows.h"

const float ob_ns_muon_abc[3] = {3.4445f, -4.7750f, 2.0315f};

/* Algorithm 1 of arXiv 2505.16932 as printed there, before the safety factor. */
static const double polar_express_raw[8][3] = {
    {8.28721201814563, -23.595886519098837, 17.300387312530933},
    {4.107059111542203, -2.9478499167379106, 0.5448431082926601},
    {3.9486908534822946, -2.908902115962949, 0.5518191394370137},
    {3.3184196573706015, -2.488488024314874, 0.51004894012372},
    {2.300652019954817, -1.6689039845747493, 0.4188073119525673},
    {1.891301407787398, -1.2679958271945868, 0.37680408948524835},
    {1.8750014808534479, -1.2500016453999487, 0.3750001645474248},
    {1.875, -1.25, 0.375},
};

static void fold_scale(const double in[3], double s, float out[3])
{
    out[0] = (float)(in[0] / s);
    out[1] = (float)(in[1] / (s * s * s));
    out[2] = (float)(in[2] / (s * s * s * s * s));
}

void ob_ns_fold_scale(float abc[3], double s)
{
    const double d[3] = {abc[0], abc[1], abc[2]};
    fold_scale(d, s, abc);
}

int ob_ns_polar_express(float abc[][3])
{
    const double safety = 1.01;
    for (int k = 0; k < 8; k++) {
        double t[3];
        /* the safety factor on all but the last, the normalization's 1.01 on the first */
        double s = k == 0 ? safety * safety : k < 7 ? safety : 1.0;
        memcpy(t, polar_express_raw[k], sizeof t);
        fold_scale(t, s, abc[k]);
    }
    return 8;
}

/* He et al. 2025 (ROOT), keyed by (min dim, max dim). */
static const ob_ns_coeff root_table[] = {
    {2048, 2048, {3.4916f, -4.8224f, 2.1095f}},
    {2048, 3072, {3.4509f, -4.5790f, 1.9325f}},
    {2048, 8192, {2.9794f, -3.6674f, 1.6207f}},
    {2048, 16384, {3.1943f, -3.8221f, 1.5322f}},
};

int ob_ns_table_lookup(const ob_ns_coeff *t, int n, int64_t dmin, int64_t dmax, float abc[3])
{
    for (int i = n - 1; i >= 0; i--)
        if (t[i].dmin == dmin && t[i].dmax == dmax) {
            memcpy(abc, t[i].abc, 3 * sizeof(float));
            return 1;
        }
    return 0;
}

int ob_ns_root_lookup(int64_t dmin, int64_t dmax, float abc[3])
{
    return ob_ns_table_lookup(root_table, (int)(sizeof root_table / sizeof root_table[0]), dmin, dmax, abc);
}

ob_status ob_ns_coeffs_load(const char *path, ob_ns_coeff **out, int *n, ob_err *e)
{
    *out = NULL;
    *n = 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return ob_fail(e, OB_ERR_INPUT,
                       "'%s' is a folder: give the tab-separated coefficient file (e.g. "
                       "configs/root_coeffs.example.tsv)",
                       path);
    ob_rows r;
    OB_TRY(ob_rows_read(path, '\t', &r, e));
    ob_ns_coeff *t = malloc((size_t)(r.n ? r.n : 1) * sizeof *t);
    if (!t) {
        ob_rows_free(&r);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < r.n; i++) {
        const double *v = r.v[i];
        ob_status st = OB_OK;
        if (r.len[i] != 5)
            st = ob_fail(e, OB_ERR_INPUT,
                         "%s:%d: %d field%s where 5 were expected: a line is 'rows<TAB>cols<TAB>a<TAB>b<TAB>c', "
                         "separated by tabs",
                         path, r.line[i], r.len[i], r.len[i] == 1 ? "" : "s");
        for (int k = 0; k < 2 && st == OB_OK; k++)
            if (v[k] < 1 || v[k] > 9e18 || v[k] != (double)(int64_t)v[k])
                st = ob_fail(e, OB_ERR_INPUT, "%s:%d: %s '%g' must be a whole number >= 1 (a line is "
                             "'rows<TAB>cols<TAB>a<TAB>b<TAB>c')",
                             path, r.line[i], k ? "cols" : "rows", v[k]);
        for (int k = 2; k < 5 && st == OB_OK; k++) /* the iteration runs in float */
            if (isinf((float)v[k])) /* rounds past float's largest, 3.40282347e38 */
                st = ob_fail(e, OB_ERR_INPUT, "%s:%d: coefficient %c = %.9g is out of range for a float (the "
                             "iteration runs in float32: at most about 3.4028235e38 in magnitude)",
                             path, r.line[i], 'a' + (k - 2), v[k]);
        if (st != OB_OK) {
            free(t);
            ob_rows_free(&r);
            return st;
        }
        int64_t a = (int64_t)v[0], b = (int64_t)v[1];
        t[i].dmin = a < b ? a : b;
        t[i].dmax = a < b ? b : a;
        for (int k = 0; k < 3; k++) t[i].abc[k] = (float)v[2 + k];
    }
    *out = t;
    *n = r.n;
    ob_rows_free(&r);
    return OB_OK;
}

ob_status ob_ns_coeffs_append(const char *path, int64_t rows, int64_t cols, const float abc[3],
                              const char *comment, ob_err *e)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return ob_fail(e, OB_ERR_IO, "cannot open '%s' for appending: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        const int err = errno;
        close(fd);
        return ob_fail(e, OB_ERR_IO, "cannot read '%s': %s", path, strerror(err));
    }
    /* the lines whole, in one write; a file that does not end its last line
     * gets a line break first, so that the new line stays one of its own */
    char last = '\n';
    if (st.st_size > 0) {
        int rfd = open(path, O_RDONLY | O_CLOEXEC);
        if (rfd < 0 || pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
        if (rfd >= 0) close(rfd);
    }
    char text[1400];
    const int len = snprintf(text, sizeof text, "%s%s%.1000s%s%lld\t%lld\t%.6f\t%.6f\t%.6f\n", last == '\n' ? "" : "\n",
                             comment ? "# " : "", comment ? comment : "", comment ? "\n" : "", (long long)rows,
                             (long long)cols, (double)abc[0], (double)abc[1], (double)abc[2]);
    size_t done = 0;
    int err = 0;
    while (len > 0 && done < (size_t)len && !err) {
        const ssize_t w = write(fd, text + done, (size_t)len - done);
        if (w > 0) done += (size_t)w;
        else if (w < 0 && errno == EINTR) continue;
        else err = w < 0 ? errno : ENOSPC;
    }
    if (!err && fsync(fd) != 0 && errno != EINVAL) err = errno;
    /* a line cut short would read as coefficients (a 2 for 2.031500): the
     * file goes back to what it held */
    if (err && ftruncate(fd, st.st_size) != 0) {
        close(fd);
        return ob_fail(e, OB_ERR_IO, "error writing '%s': %s; its last line may be cut short (it held %lld bytes "
                       "before: cut it back to them)", path, strerror(err), (long long)st.st_size);
    }
    if (err) {
        close(fd);
        return ob_fail(e, OB_ERR_IO, "error writing '%s': %s (the file was left as it was)", path, strerror(err));
    }
    if (close(fd) != 0) return ob_fail(e, OB_ERR_IO, "error writing '%s': %s", path, strerror(errno));
    return OB_OK;
}

/* One iteration, x -> x2. bf16: the products through gemm_sb_bf16 (bf16
 * units where the backend has them), and A, B and X2 rounded to bf16 once
 * formed, as torch's matmul and addmm round their float sums (see
 * ob_ns_iterate). */
static ob_status ns_step(ob_device *dev, const float *x, float *x2, float *a, float *b, int batch, int r, int c,
                         int64_t sx, int64_t ss, const float *q, int bf16, ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    const int wide = r <= c, s = wide ? r : c;
    ob_status (*const syrk)(ob_device *, int, int, int, float, const float *, int, int64_t, float, float *, int,
                            int64_t, int, ob_err *) = bf16 ? NULL : ops->syrk_strided_batched;
    ob_status (*const prod)(ob_device *, int, int, int, int, int, float, const float *, int, int64_t, const float *,
                            int, int64_t, float, float *, int, int64_t, int, ob_err *) =
        bf16 ? ops->gemm_sb_bf16 : ops->gemm_strided_batched;
    /* A = X X^T (wide) or X^T X (tall): (s, s); then B = c A A + b A.
     * Both products are symmetric (A A = A A^T): a Gram product (syrk)
     * computes them in about half the flops when the backend has one (in
     * bf16, gemm_sb_bf16 takes A A as A A^T, a Gram product it may do so too). */
    if (syrk)
        OB_TRY(syrk(dev, wide ? 0 : 1, s, wide ? c : r, 1.0f, x, c, sx, 0.0f, a, s, ss, batch, e));
    else
        OB_TRY(prod(dev, !wide, wide, s, s, wide ? c : r, 1.0f, x, c, sx, x, c, sx, 0.0f, a, s, ss, batch, e));
    if (bf16) OB_TRY(ops->round_bf16(dev, a, (int64_t)batch * ss, e));
    if (syrk)
        OB_TRY(syrk(dev, 0, s, s, q[2], a, s, ss, 0.0f, b, s, ss, batch, e));
    else
        OB_TRY(prod(dev, 0, bf16, s, s, s, q[2], a, s, ss, a, s, ss, 0.0f, b, s, ss, batch, e));
    OB_TRY(ops->axpby(dev, (int64_t)batch * ss, q[1], a, 1.0f, b, e));
    if (bf16) OB_TRY(ops->round_bf16(dev, b, (int64_t)batch * ss, e));
    /* X2 = B X (wide) or X B (tall), then X2 += a X */
    if (wide)
        OB_TRY(prod(dev, 0, 0, r, c, r, 1.0f, b, s, ss, x, c, sx, 0.0f, x2, c, sx, batch, e));
    else
        OB_TRY(prod(dev, 0, 0, r, c, c, 1.0f, x, c, sx, b, s, ss, 0.0f, x2, c, sx, batch, e));
    OB_TRY(ops->axpby(dev, (int64_t)batch * sx, q[0], x, 1.0f, x2, e));
    return bf16 ? ops->round_bf16(dev, x2, (int64_t)batch * sx, e) : OB_OK;
}

ob_status ob_ns_iterate(ob_device *dev, float *x, float *x2, float *a, float *b, int batch,
                        int64_t rows, int64_t cols, int64_t sx, int64_t ss, const float *abc,
                        int n_abc, int steps, int bf16, float **out, ob_err *e)
{
    OB_TRY(OB_REQUIRE(dev, gemm_strided_batched, e));
    if (bf16) {
        OB_TRY(OB_REQUIRE(dev, gemm_sb_bf16, e));
        OB_TRY(OB_REQUIRE(dev, round_bf16, e));
    }
    for (int k = 0; k < steps; k++) {
        const float *q = abc + 3 * (k < n_abc ? k : n_abc - 1);
        OB_TRY(ns_step(dev, x, x2, a, b, batch, (int)rows, (int)cols, sx, ss, q, bf16, e));
        float *t = x;
        x = x2;
        x2 = t;
    }
    *out = x;
    return OB_OK;
}
