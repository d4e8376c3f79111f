/* harness/cmd_ortho.c - `optbench ortho`: how close Newton-Schulz gets to the
 * exact polar factor U V^T, per shape and coefficient set, on Gaussian
 * matrices and on matrices with a heavy-tailed spectrum (the precision study
 * of the ROOT paper); and `--fit RxC`, which searches shape-specific (a, b, c)
 * and can append them to a coefficient file that root reads (coeff_file).
 * The study itself is optimizers/ns_study.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hparams.h"
#include "harness/commands.h"
#include "optimizers/newton_schulz.h"
#include "optimizers/ns_study.h"

static void ortho_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench ortho [--shapes 64x64,128x256] [--coeffs muon,root,polar_express,FILE]\n"
            "                      [--steps 5] [--samples 4] [--seed 0] [--dtype fp32|bf16]\n"
            "                      [--backend cpu|cuda|auto]\n"
            "       optbench ortho --fit RxC [--steps 5] [--samples 4] [--seed 0] [--start muon|root|FILE]\n"
            "                      [--spectrum gaussian|heavy] [--evals 400] [--append FILE]\n\n"
            "Measures Newton-Schulz orthogonalization against the exact polar factor U V^T\n"
            "(SVD, in double): the relative Frobenius error ||NS(A) - U V^T|| / ||U V^T|| and the\n"
            "range of the singular values after the iteration, on Gaussian matrices and on\n"
            "matrices with a heavy-tailed (log-normal) spectrum.\n\n"
            "  --shapes RxC,...   matrix shapes (default 64x64,128x256)\n"
            "  --coeffs SETS      muon (3.4445, -4.7750, 2.0315), root (the ROOT authors' table\n"
            "                     for the shape, Muon's otherwise), polar_express (a triple per\n"
            "                     iteration, arXiv 2505.16932 Algorithm 1, as muon.ns_coeffs=\n"
            "                     polar_express), or a coefficient file (default muon,root)\n"
            "  --steps N          Newton-Schulz iterations (default 5)\n"
            "  --samples N        matrices per shape and spectrum (default 4)\n"
            "  --seed N           seed of the sample matrices (default 0)\n"
            "  --dtype T          the iteration in fp32 (default) or in bf16 as torch.optim.Muon\n"
            "                     runs it (muon.ns_dtype=bf16)\n"
            "  --backend B        cpu (default), cuda or auto (cuda when a device is present)\n"
            "  --fit RxC          search one (a, b, c) for every iteration minimizing the mean\n"
            "                     error on RxC samples (Nelder-Mead from --start, default muon),\n"
            "                     then measure it beside muon, root and polar_express\n"
            "  --start SET        the fit's first (a, b, c): muon (default), root (the authors'\n"
            "                     triple for the shape) or a coefficient file's line for it\n"
            "  --spectrum S       samples of the fit: gaussian (default) or heavy\n"
            "  --evals N          most evaluations of the mean error the fit takes (default 400)\n"
            "  --append FILE      with --fit: append 'rows cols a b c' to FILE (root's coeff_file)\n"
            "--start, --spectrum, --evals and --append need --fit; --shapes, --coeffs and --dtype do not go\n"
            "with it.\n\n"
            "Coefficient files are tab-separated lines 'rows cols a b c'; '#' starts a comment.\n"
            "exit status: 0 ok, 1 failure, 2 bad input\n");
}

static int parse_shape(const char *s, int *rows, int *cols)
{
    char *end;
    long r = strtol(s, &end, 10);
    if (end == s || *end != 'x' || r <= 0 || r > 65536) return -1;
    const char *c0 = end + 1;
    long c = strtol(c0, &end, 10);
    if (end == c0 || *end || c <= 0 || c > 65536) return -1;
    *rows = (int)r;
    *cols = (int)c;
    return 0;
}

typedef struct coeff_set {
    char name[256];
    int is_root, is_file, is_pe;
    ob_ns_coeff *table;
    int n;
} coeff_set;

/* The triples of this set for this shape, one per iteration (the last
 * repeats); returns how many, 0 when a file has no line for the shape. */
static int set_abc(const coeff_set *c, int rows, int cols, float abc[][3], char *note, size_t n)
{
    int64_t dmin = rows < cols ? rows : cols, dmax = rows < cols ? cols : rows;
    note[0] = '\0';
    if (c->is_pe) return ob_ns_polar_express(abc);
    if (c->is_file) return ob_ns_table_lookup(c->table, c->n, dmin, dmax, abc[0]);
    if (c->is_root && ob_ns_root_lookup(dmin, dmax, abc[0])) return 1;
    memcpy(abc[0], ob_ns_muon_abc, sizeof ob_ns_muon_abc);
    if (c->is_root) snprintf(note, n, " (no table entry: Muon's)");
    return 1;
}

/* "a, b, c" of a fixed set, or what a schedule is */
static void abc_text(float abc[][3], int n_abc, int steps, int digits, char *t, size_t n)
{
    if (n_abc > 1 && steps <= n_abc)
        snprintf(t, n, "per iteration, %d of %d", steps, n_abc);
    else if (n_abc > 1)
        snprintf(t, n, "per iteration, %d + %d x last", n_abc, steps - n_abc);
    else
        snprintf(t, n, "%.*f, %.*f, %.*f", digits, (double)abc[0][0], digits, (double)abc[0][1], digits,
                 (double)abc[0][2]);
}

static ob_status study(ob_device *dev, char (*shapes)[32], int n_shapes, coeff_set *sets, int n_sets, int steps,
                       int samples, uint64_t seed, int bf16, ob_err *e)
{
    printf("Newton-Schulz%s, %d step%s, %d sample%s per shape and spectrum, on %s\n", bf16 ? " in bf16" : "", steps,
           steps == 1 ? "" : "s", samples, samples == 1 ? "" : "s", dev->desc);
    printf("error = ||NS(A) - U V^T||_F / ||U V^T||_F (mean and max over samples); sv = singular values of NS(A)\n\n");
    int w = 13; /* the coefficient sets' column: as wide as the longest name (a file's path) */
    for (int ci = 0; ci < n_sets; ci++)
        if ((int)strlen(sets[ci].name) > w) w = (int)strlen(sets[ci].name);
    printf("%-11s %-9s %-*s %-30s %10s %10s %8s %8s\n", "shape", "spectrum", w, "coeffs", "a, b, c", "err_mean",
           "err_max", "sv_min", "sv_max");
    for (int si = 0; si < n_shapes; si++) {
        int rows = 0, cols = 0;
        parse_shape(shapes[si], &rows, &cols);
        for (int spec = 0; spec < 2; spec++) {
            ob_ortho_set s;
            OB_TRY(ob_ortho_make(dev, (ob_spectrum)spec, samples, rows, cols, seed, &s, e));
            s.bf16 = bf16;
            for (int ci = 0; ci < n_sets; ci++) {
                float abc[OB_NS_MAX_SCHEDULE][3];
                char note[128], text[64];
                int n_abc = set_abc(&sets[ci], rows, cols, abc, note, sizeof note);
                if (n_abc == 0) {
                    printf("%-11s %-9s %-*s (no line for this shape)\n", shapes[si],
                           spec ? "heavy" : "gaussian", w, sets[ci].name);
                    continue;
                }
                ob_ortho_stats st;
                ob_status r = ob_ortho_measure(&s, &abc[0][0], n_abc, steps, &st, e);
                if (r != OB_OK) {
                    ob_ortho_free(&s);
                    return r;
                }
                abc_text(abc, n_abc, steps, 4, text, sizeof text);
                if (isinf(st.err_max)) { /* the iteration blew up on a sample */
                    const size_t l = strlen(note);
                    snprintf(note + l, sizeof note - l, "  (blew up: inf or NaN in NS(A))");
                }
                printf("%-11s %-9s %-*s %-30s %10.4e %10.4e %8.4f %8.4f%s\n", shapes[si],
                       spec ? "heavy" : "gaussian", w, sets[ci].name, text, st.err_mean, st.err_max,
                       isinf(st.sv_min) ? NAN : st.sv_min, st.sv_max, note);
            }
            ob_ortho_free(&s);
        }
    }
    return OB_OK;
}

static ob_status fit(ob_device *dev, const char *shape, ob_spectrum spec, const coeff_set *start_set, int steps,
                     int samples, uint64_t seed, int max_evals, const char *append, ob_err *e)
{
    int rows = 0, cols = 0;
    parse_shape(shape, &rows, &cols);
    float start_f[OB_NS_MAX_SCHEDULE][3];
    char note[64];
    int n_start = set_abc(start_set, rows, cols, start_f, note, sizeof note);
    if (n_start == 0) return ob_fail(e, OB_ERR_INPUT, "--start %s has no line for %s", start_set->name, shape);
    if (n_start > 1)
        return ob_fail(e, OB_ERR_INPUT, "--start %s: the fit starts from one fixed triple (muon, root or a file)",
                       start_set->name);
    ob_ortho_set s;
    OB_TRY(ob_ortho_make(dev, spec, samples, rows, cols, seed, &s, e));
    double start[3] = {start_f[0][0], start_f[0][1], start_f[0][2]}, best[3];
    int evals = ob_ortho_fit(&s, steps, start, max_evals, best);
    /* the fitted triple as the coefficient file keeps it (six decimals): what
     * is measured, printed and appended is one value */
    float best_f[3];
    ob_ortho_file_abc(best, best_f);
    /* measured with the real iteration, beside the reference sets */
    float ref[5][OB_NS_MAX_SCHEDULE][3];
    int n_ref[5];
    const char *names[5] = {"muon", "start", "fitted", "root", "polar_express"};
    memcpy(ref[0][0], ob_ns_muon_abc, sizeof ref[0][0]);
    memcpy(ref[1][0], start_f[0], sizeof ref[1][0]);
    memcpy(ref[2][0], best_f, sizeof ref[2][0]);
    n_ref[0] = n_ref[1] = n_ref[2] = 1;
    n_ref[3] = ob_ns_root_lookup(rows < cols ? rows : cols, rows < cols ? cols : rows, ref[3][0]);
    n_ref[4] = ob_ns_polar_express(ref[4]);
    const char *spec_name = spec == OB_SPECTRUM_HEAVY ? "heavy" : "gaussian";
    printf("fit %s: %d %s sample%s, %d step%s, %d evaluations (Nelder-Mead on the singular values)\n", shape,
           samples, spec_name, samples == 1 ? "" : "s", steps, steps == 1 ? "" : "s", evals);
    printf("%-13s %-32s %12s %12s %8s %8s\n", "coeffs", "a, b, c", "err (model)", "err (NS)", "sv_min", "sv_max");
    double fitted_err = 0;
    for (int i = 0; i < 5; i++) {
        if (n_ref[i] == 0) continue; /* root has no table entry for the shape */
        double d[OB_NS_MAX_SCHEDULE * 3];
        for (int k = 0; k < 3 * n_ref[i]; k++) d[k] = ref[i][k / 3][k % 3];
        ob_ortho_stats st;
        ob_status r = ob_ortho_measure(&s, &ref[i][0][0], n_ref[i], steps, &st, e);
        if (r != OB_OK) {
            ob_ortho_free(&s);
            return r;
        }
        if (i == 2) fitted_err = st.err_mean;
        char t[64];
        abc_text(ref[i], n_ref[i], steps, 6, t, sizeof t);
        printf("%-13s %-32s %12.6e %12.6e %8.4f %8.4f\n", names[i], t, ob_ortho_scalar_error(&s, d, n_ref[i], steps),
               st.err_mean, st.sv_min, st.sv_max);
    }
    ob_ortho_free(&s);
    printf("%d\t%d\t%.6f\t%.6f\t%.6f\n", rows, cols, (double)best_f[0], (double)best_f[1], (double)best_f[2]);
    if (append) {
        char comment[256];
        snprintf(comment, sizeof comment,
                 "optbench ortho --fit %s --spectrum %s --steps %d --samples %d --seed %llu: error %.4e", shape,
                 spec_name, steps, samples, (unsigned long long)seed, fitted_err);
        OB_TRY(ob_ns_coeffs_append(append, rows, cols, best_f, comment, e));
        printf("appended to %s\n", append);
    }
    return OB_OK;
}

/* flag: the flag that gave list ("--coeffs", "--start"), for messages */
static ob_status parse_sets(const char *flag, const char *list, coeff_set *sets, int *n, int max, ob_err *e)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    *n = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == max) return ob_fail(e, OB_ERR_INPUT, "%s: at most %d sets", flag, max);
        coeff_set *c = &sets[(*n)++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", tok);
        if (!strcmp(tok, "muon")) continue;
        if (!strcmp(tok, "root")) {
            c->is_root = 1;
            continue;
        }
        if (!strcmp(tok, "polar_express")) {
            c->is_pe = 1;
            continue;
        }
        c->is_file = 1;
        static const char *const known[] = {"muon", "root", "polar_express"};
        const char *near = ob_closest_name(tok, known, 3);
        if (near && !strchr(tok, '/') && !strchr(tok, '.') && access(tok, F_OK) != 0)
            return ob_fail(e, OB_ERR_INPUT, "%s: unknown coefficient set '%s' (did you mean '%s'?); a "
                           "file of coefficients is named by its path", flag, tok, near);
        ob_status st = ob_ns_coeffs_load(tok, &c->table, &c->n, e);
        if (st != OB_OK) return ob_err_prefix(e, "%s: ", flag);
    }
    if (*n == 0) return ob_fail(e, OB_ERR_INPUT, "%s: no coefficient sets given", flag);
    return OB_OK;
}

/* --append's file can be appended to: checked before the fit, which takes a
 * while. Returns 0, or 2 after printing what is wrong. */
static int append_check(const char *path)
{
    struct stat sb;
    if (!path[0]) return ob_cli_error(2, "--append is empty: give the coefficient file (e.g. --append root_coeffs.tsv)");
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return ob_cli_error(2, "--append '%s' is a folder: give the coefficient file (e.g. --append %s%sroot_coeffs.tsv)",
                                path, path, path[strlen(path) - 1] == '/' ? "" : "/");
        if (access(path, W_OK) != 0)
            return ob_cli_error(2, "--append '%s' cannot be written (%s): give a coefficient file you may write", path,
                                strerror(errno));
        char msg[1024];
        if (ob_cli_output_check(msg, sizeof msg, "--append", path, NULL, NULL, 0)) /* a database */
            return ob_cli_error(2, "%s", msg);
        /* another kind of file (a replay's CSV, say): appending would leave
         * it neither, and the next read of it would fail */
        ob_ns_coeff *t = NULL;
        int n = 0;
        ob_err e;
        ob_err_clear(&e);
        const ob_status st = ob_ns_coeffs_load(path, &t, &n, &e);
        free(t);
        if (st != OB_OK)
            return ob_cli_error(2, "--append '%s' is not a coefficient file (%s): give one, or a new file (nothing "
                                "was written)", path, e.msg);
        return 0;
    }
    if (errno != ENOENT)
        return ob_cli_error(2, "--append '%s': %s: give a coefficient file that can be written", path, strerror(errno));
    /* a new file: its folder must exist and be writable */
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return ob_cli_error(2, "--append '%s': the folder '%s' does not exist: make it, or give a file in an existing "
                            "folder", path, dir);
    if (access(dir, W_OK) != 0)
        return ob_cli_error(2, "--append '%s': the folder '%s' cannot be written (%s): give a file in a folder you may "
                            "write", path, dir, strerror(errno));
    return 0;
}

static int parse_int(const char *flag, const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) {
        ob_cli_error(2, "%s '%s' is not a whole number in %d..%d", flag, v, lo, hi);
        return 0;
    }
    *out = (int)x;
    return 1;
}

/* What the command line asked for; study_only and fit_only are the first
 * flag given that belongs to one mode only. */
typedef struct ortho_args {
    const char *shapes, *coeffs, *backend, *fit_shape, *append, *start, *spectrum, *dtype;
    int steps, samples, seed, evals;
    const char *study_only, *fit_only;
} ortho_args;

/* Reads the flags into o; returns -1 to go on, else the exit status (0
 * after --help). */
static int ortho_parse(int argc, char **argv, ortho_args *o)
{
    static const char *const opts[] = {"--shapes",   "--coeffs", "--backend", "--fit",  "--append", "--start",
                                       "--spectrum", "--steps",  "--samples", "--seed", "--evals",  "--dtype"};
    ob_cli_once(NULL, argc, argv, opts, OB_CLI_COUNT(opts));
    *o = (ortho_args){.shapes = "64x64,128x256", .coeffs = "muon,root", .backend = "cpu", .start = "muon",
                      .spectrum = "gaussian", .dtype = "fp32", .steps = 5, .samples = 4, .evals = 400};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ortho_usage(stdout);
            return 0;
        }
        if (ob_cli_valued_option("ortho", argc, argv, i, opts, OB_CLI_COUNT(opts), OB_CLI_COUNT(opts))) return 2;
        const char *v = argv[++i];
        if (!o->study_only && (!strcmp(a, "--shapes") || !strcmp(a, "--coeffs") || !strcmp(a, "--dtype")))
            o->study_only = a;
        if (!o->fit_only && (!strcmp(a, "--start") || !strcmp(a, "--spectrum") || !strcmp(a, "--evals") ||
                             !strcmp(a, "--append")))
            o->fit_only = a;
        const char **text = !strcmp(a, "--shapes")     ? &o->shapes
                            : !strcmp(a, "--coeffs")   ? &o->coeffs
                            : !strcmp(a, "--backend")  ? &o->backend
                            : !strcmp(a, "--fit")      ? &o->fit_shape
                            : !strcmp(a, "--append")   ? &o->append
                            : !strcmp(a, "--start")    ? &o->start
                            : !strcmp(a, "--spectrum") ? &o->spectrum
                            : !strcmp(a, "--dtype")    ? &o->dtype
                                                       : NULL;
        if (text)
            *text = v;
        else if (!strcmp(a, "--steps") ? !parse_int(a, v, 1, 99, &o->steps)
                 : !strcmp(a, "--samples") ? !parse_int(a, v, 1, 1000, &o->samples)
                 : !strcmp(a, "--seed")    ? !parse_int(a, v, 0, 2147483647, &o->seed)
                                           : !parse_int(a, v, 10, 1000000, &o->evals))
            return 2;
    }
    return -1;
}

/* The flags that go together, and the shapes (--fit's, or --shapes' into
 * shapes): -1 to go on, else 2 after printing what is wrong. */
static int ortho_check(const ortho_args *o, char (*shapes)[32], int *n_shapes)
{
    int r, c;
    if (o->fit_only && !o->fit_shape)
        return ob_cli_error(2, "%s needs --fit RxC (it is a setting of the fit; the study takes --shapes and --coeffs)",
                            o->fit_only);
    if (o->study_only && o->fit_shape)
        return ob_cli_error(2, "%s does not go with --fit: the fit measures its own shape and muon, root and "
                            "polar_express in fp32; leave out --shapes, --coeffs and --dtype (--start picks the set it "
                            "starts from)",
                            o->study_only);
    if (strcmp(o->dtype, "fp32") && strcmp(o->dtype, "bf16"))
        return ob_cli_error(2, "--dtype '%s': use fp32 or bf16", o->dtype);
    if (strcmp(o->spectrum, "gaussian") && strcmp(o->spectrum, "heavy"))
        return ob_cli_error(2, "--spectrum '%s': use gaussian or heavy", o->spectrum);
    *n_shapes = 0;
    if (o->fit_shape) {
        if (parse_shape(o->fit_shape, &r, &c) != 0)
            return ob_cli_error(2, "--fit '%s' is not a shape like 512x2048", o->fit_shape);
        return o->append && append_check(o->append) ? 2 : -1;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", o->shapes);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (parse_shape(tok, &r, &c) != 0 || strlen(tok) >= sizeof shapes[0])
            return ob_cli_error(2, "--shapes: '%s' is not a shape like 256x256", tok);
        if (*n_shapes == 32) return ob_cli_error(2, "--shapes: at most 32 shapes");
        strcpy(shapes[(*n_shapes)++], tok);
    }
    if (*n_shapes == 0) return ob_cli_error(2, "--shapes: no shapes given");
    return -1;
}

int ob_cmd_ortho(int argc, char **argv)
{
    ortho_args o;
    char shapes[32][32];
    int n_shapes = 0, rc = ortho_parse(argc, argv, &o);
    if (rc < 0) rc = ortho_check(&o, shapes, &n_shapes);
    if (rc >= 0) return rc;
    ob_err e;
    ob_err_clear(&e);
    coeff_set sets[16];
    int n_sets = 0;
    ob_status st = parse_sets(o.fit_shape ? "--start" : "--coeffs", o.fit_shape ? o.start : o.coeffs, sets, &n_sets,
                              16, &e);
    if (st == OB_OK && o.fit_shape && n_sets != 1) st = ob_fail(&e, OB_ERR_INPUT, "--start takes one set");
    ob_device dev = {0};
    if (st == OB_OK) st = ob_device_open(&dev, o.backend, 0, &e);
    if (st == OB_OK && o.fit_shape)
        st = fit(&dev, o.fit_shape, strcmp(o.spectrum, "heavy") ? OB_SPECTRUM_GAUSSIAN : OB_SPECTRUM_HEAVY, &sets[0],
                 o.steps, o.samples, (uint64_t)o.seed, o.evals, o.append, &e);
    else if (st == OB_OK)
        st = study(&dev, shapes, n_shapes, sets, n_sets, o.steps, o.samples, (uint64_t)o.seed,
                   !strcmp(o.dtype, "bf16"), &e);
    if (dev.ops) ob_device_close(&dev);
    for (int i = 0; i < n_sets; i++) free(sets[i].table);
    if (st != OB_OK) return ob_cli_error(ob_exit_code(st), "%s", e.msg);
    return 0;
}
