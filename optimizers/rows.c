/* optimizers/rows.c - numeric rows through libcsv (see rows.h). Lines are fed
 * to the parser one at a time so that every message names its line. */
#include "optimizers/rows.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/hparams.h"

typedef struct row_ctx {
    const char *path;
    char delim;
    int line;
    int col;            /* fields seen in this row */
    double *vals;
    int cap;
    ob_err *e;
    ob_status st;
} row_ctx;

static const char *sep_name(char ch)
{
    return ch == '\t' ? "tabs" : ch == ',' ? "commas" : ch == ';' ? "semicolons" : "spaces";
}

/* The separator other than delim that field s holds between its words (a
 * file written with spaces, or tabs in a CSV file), or 0. */
static char other_sep(const char *s, char delim)
{
    size_t a = strspn(s, " \t"), b = strlen(s);
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) b--;
    for (const char *q = delim == '\t' ? " ,;" : "\t ;"; *q; q++)
        if (memchr(s + a, *q, b - a)) return *q;
    return 0;
}

static void on_field(void *field, size_t len, void *data)
{
    row_ctx *c = data;
    c->col++;
    if (c->st != OB_OK) return;
    const char *s = field ? (const char *)field : "";
    if (field && memchr(field, '\0', len)) { /* the text after it would be lost without a word */
        c->st = ob_fail(c->e, OB_ERR_INPUT, "%s:%d: column %d: a NUL byte in the field (a binary file, or "
                        "one damaged?)", c->path, c->line, c->col);
        return;
    }
    double v;
    char q[64]; /* the field as a message may show it (a binary file's bytes escaped) */
    int prc = ob_parse_double(s, &v);
    if (prc == -2) {
        c->st = ob_fail(c->e, OB_ERR_INPUT, "%s:%d: column %d: '%s' is out of range for a double (about 1e-308 "
                        "to 1e308 in magnitude, or 0)", c->path, c->line, c->col, ob_printable(s, q, sizeof q));
        return;
    }
    if (prc != 0) {
        char sep = other_sep(s, c->delim), hint[96] = "";
        if (sep)
            snprintf(hint, sizeof hint, " (fields are separated by %s, not %s)", sep_name(c->delim), sep_name(sep));
        c->st = ob_fail(c->e, OB_ERR_INPUT, "%s:%d: column %d: '%s' is not a number%s", c->path, c->line, c->col,
                        ob_printable(s, q, sizeof q), hint);
        return;
    }
    if (!isfinite(v)) {
        c->st = ob_fail(c->e, OB_ERR_INPUT, "%s:%d: column %d: '%s' is not finite (NaN and inf are not allowed)",
                        c->path, c->line, c->col, ob_printable(s, q, sizeof q));
        return;
    }
    if (c->col > c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        double *nv = realloc(c->vals, (size_t)cap * sizeof *nv);
        if (!nv) {
            c->st = ob_fail(c->e, OB_ERR_NOMEM, "out of memory reading %s", c->path);
            return;
        }
        c->vals = nv;
        c->cap = cap;
    }
    c->vals[c->col - 1] = v;
}

static int blank_or_comment(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return *s == '\0' || *s == '#';
}

static ob_status push_row(ob_rows *r, int *cap, const double *vals, int n, int line, ob_err *e)
{
    if (r->n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        int *len = realloc(r->len, (size_t)nc * sizeof *len);
        if (len) r->len = len;
        int *ln = realloc(r->line, (size_t)nc * sizeof *ln);
        if (ln) r->line = ln;
        double **v = realloc(r->v, (size_t)nc * sizeof *v);
        if (v) r->v = v;
        if (!len || !ln || !v) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d rows", nc);
        *cap = nc;
    }
    double *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
    if (!copy) return ob_fail(e, OB_ERR_NOMEM, "out of memory for a row of %d values", n);
    memcpy(copy, vals, (size_t)n * sizeof *copy);
    r->len[r->n] = n;
    r->line[r->n] = line;
    r->v[r->n] = copy;
    r->n++;
    return OB_OK;
}

ob_status ob_rows_read(const char *path, char delim, ob_rows *out, ob_err *e)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return ob_fail(e, OB_ERR_INPUT, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return ob_fail(e, OB_ERR_INPUT, "'%s' is a folder, not a file of numbers: give the %s file", path,
                       delim == '\t' ? "tab-separated" : "comma-separated (CSV)");
    }
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0) {
        fclose(f);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory for the CSV parser");
    }
    csv_set_delim(&p, (unsigned char)delim);
    row_ctx c = {.path = path, .delim = delim, .e = e, .st = OB_OK};
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    int row_cap = 0;
    while (c.st == OB_OK && (got = getline(&buf, &cap, f)) >= 0) {
        c.line++;
        while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r')) buf[--got] = '\0';
        if (c.line == 1 && got >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) { /* a UTF-8 byte-order mark */
            memmove(buf, buf + 3, (size_t)got - 2);
            got -= 3;
        }
        if (blank_or_comment(buf)) continue;
        c.col = 0;
        if (csv_parse(&p, buf, (size_t)got, on_field, NULL, &c) != (size_t)got ||
            csv_fini(&p, on_field, NULL, &c) != 0) {
            if (c.st == OB_OK)
                c.st = ob_fail(e, OB_ERR_INPUT, "%s:%d: %s", path, c.line, csv_strerror(csv_error(&p)));
            break;
        }
        if (c.st == OB_OK) c.st = push_row(out, &row_cap, c.vals, c.col, c.line, e);
    }
    if (c.st == OB_OK && ferror(f)) c.st = ob_fail(e, OB_ERR_IO, "error reading '%s': %s", path, strerror(errno));
    free(buf);
    free(c.vals);
    csv_free(&p);
    fclose(f);
    if (c.st != OB_OK) ob_rows_free(out);
    return c.st;
}

void ob_rows_free(ob_rows *r)
{
    for (int i = 0; i < r->n; i++) free(r->v[i]);
    free(r->v);
    free(r->len);
    free(r->line);
    memset(r, 0, sizeof *r);
}
