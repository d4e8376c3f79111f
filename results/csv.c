/* results/csv.c - writing CSV files (see csv.h): text quoted by libcsv,
 * numbers as the shortest text that reads back as the same double. */
#include "results/csv.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

ob_status ob_csv_open(ob_csv *c, const char *dir, const char *name, const char *const *header,
                      int n_header, ob_err *e)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
    c->f = fopen(c->path, "w");
    if (!c->f) return ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", c->path, strerror(errno));
    for (int i = 0; i < n_header; i++) ob_csv_str(c, header[i]);
    ob_csv_row(c);
    return OB_OK;
}

static void sep(ob_csv *c)
{
    if (c->col++) fputc(',', c->f);
}

void ob_csv_str(ob_csv *c, const char *s)
{
    sep(c);
    if (s) csv_fwrite(c->f, s, strlen(s));
}

/* The 17 significant digits of v (finite, not 0) as printf rounds them,
 * once per value: "%.16e" gives d.dddddddddddddddde+XX. */
typedef struct digits17 {
    char d[17];
    int exp10, neg;
} digits17;

static void get_digits17(double v, digits17 *g)
{
    char t[40];
    snprintf(t, sizeof t, "%.16e", v);
    const char *c = t;
    g->neg = *c == '-';
    if (g->neg) c++;
    g->d[0] = c[0];
    memcpy(g->d + 1, c + 2, 16);
    g->exp10 = atoi(c + 19);
}

/* v as "%.*g" with prec significant digits (6 to 17) would print it, made
 * from its 17 digits instead of printing it again: rounding them to prec
 * digits gives the digits printf gives (which round the exact binary value)
 * except where the digits dropped read 5000...: the 17 digits may have been
 * rounded up to that tie or be it, and then printf itself is asked (returns
 * 0 there, having printed; 1 otherwise). The text is "%g"'s: fixed notation
 * where the exponent is in [-4, prec), else d.ddde+XX; trailing zeros and a
 * trailing point dropped. */
static void fmt_g_from_digits(const digits17 *g, int prec, char *buf, size_t n, double v)
{
    char d[18];
    int ex = g->exp10;
    memcpy(d, g->d, 17);
    if (prec < 17) {
        int up;
        if (g->d[prec] != '5') up = g->d[prec] > '5';
        else {
            int rest = 0;
            for (int i = prec + 1; i < 17 && !rest; i++) rest = g->d[i] != '0';
            if (!rest) { /* a tie in the 17 digits: printf decides */
                snprintf(buf, n, "%.*g", prec, v);
                return;
            }
            up = 1;
        }
        if (up) {
            int i = prec - 1;
            while (i >= 0 && d[i] == '9') d[i--] = '0';
            if (i >= 0) d[i]++;
            else { /* 9.99 -> 10.0: one more digit before the point */
                d[0] = '1';
                ex++;
            }
        }
    }
    int nd = prec; /* significant digits kept: trailing zeros go */
    while (nd > 1 && d[nd - 1] == '0') nd--;
    char t[48];
    size_t l = 0;
    if (g->neg) t[l++] = '-';
    if (ex < -4 || ex >= prec) {
        t[l++] = d[0];
        if (nd > 1) {
            t[l++] = '.';
            for (int i = 1; i < nd; i++) t[l++] = d[i];
        }
        int ax = ex < 0 ? -ex : ex;
        t[l++] = 'e';
        t[l++] = ex < 0 ? '-' : '+';
        if (ax >= 100) t[l++] = (char)('0' + ax / 100);
        t[l++] = (char)('0' + ax / 10 % 10);
        t[l++] = (char)('0' + ax % 10);
        t[l] = 0;
    } else if (ex < 0) {
        t[l++] = '0';
        t[l++] = '.';
        for (int i = 0; i < -ex - 1; i++) t[l++] = '0';
        for (int i = 0; i < nd; i++) t[l++] = d[i];
        t[l] = 0;
    } else {
        for (int i = 0; i <= ex; i++) t[l++] = i < nd ? d[i] : '0';
        if (nd > ex + 1) {
            t[l++] = '.';
            for (int i = ex + 1; i < nd; i++) t[l++] = d[i];
        }
        t[l] = 0;
    }
    memcpy(buf, t, l + 1); /* l < 32 <= n */
}

/* v printed with prec significant digits reads back as v */
static int fmt_reads_back(double v, int prec, char *buf, size_t n)
{
    snprintf(buf, n, "%.*g", prec, v);
    return strtod(buf, NULL) == v;
}

/* the same from v's 17 digits (fmt_g_from_digits) */
static int fmt_reads_back_g(double v, const digits17 *g, int prec, char *buf, size_t n)
{
    fmt_g_from_digits(g, prec, buf, n, v);
    return strtod(buf, NULL) == v;
}

/* The fewest significant digits from 6 to 17 that read back as v (17 always
 * do). Trying them in turn took 12 snprintf and strtod pairs for a double
 * that needs 17, as most losses (floats widened to double) do: about half
 * of a report's time. The answer is found by bisection instead: 6 first
 * (lrs and other round numbers), then at most four more tries.
 * Bisection needs digits that read back to keep doing so with more digits:
 * printf rounds correctly, so p + 1 digits land at least as close to v as p
 * digits (the p-digit grid is part of the (p + 1)-digit one), and a text at
 * least as close reads back as v wherever the doubles around v are equally
 * far from it (a tie reads back as v on either side or on neither). Only at
 * a normal power of two is the gap below v half the gap above, so that a
 * closer text on the other side can fail: there the digits are tried in
 * turn as before. tests/test_fmt_num.c compares the
 * result with the sequential search on millions of doubles. */
void ob_fmt_num(double v, char *buf, size_t n)
{
    if (isnan(v)) {
        buf[0] = 0;
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, "%s", v > 0 ? "inf" : "-inf");
        return;
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const int pow2 = (bits & ((UINT64_C(1) << 52) - 1)) == 0 && ((bits >> 52) & 0x7ff) != 0;
    /* 32 bytes hold any double at 17 digits ("-1.2345678901234567e-308");
     * a shorter buffer truncates the text, and the search below assumes the
     * text read back is the whole of it */
    if (pow2 || n < 32) {
        for (int prec = 6; prec <= 17; prec++)
            if (fmt_reads_back(v, prec, buf, n)) return;
        return;
    }
    if (v == 0) {
        snprintf(buf, n, "%.6g", v);
        return;
    }
    /* v printed once at 17 digits, and those rounded for each try rather
     * than v printed again at each precision: a third less CPU time for a
     * report whose curves.csv has a million rows */
    digits17 g;
    get_digits17(v, &g);
    if (fmt_reads_back_g(v, &g, 6, buf, n)) return;
    int lo = 7, hi = 17, printed = 6; /* the answer is in [lo, hi] */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        printed = mid;
        if (fmt_reads_back_g(v, &g, mid, buf, n)) hi = mid;
        else lo = mid + 1;
    }
    if (printed != lo) fmt_g_from_digits(&g, lo, buf, n, v);
}

void ob_csv_num(ob_csv *c, double v)
{
    char buf[64];
    ob_fmt_num(v, buf, sizeof buf);
    sep(c);
    fputs(buf, c->f);
}

void ob_csv_int(ob_csv *c, int64_t v)
{
    sep(c);
    fprintf(c->f, "%lld", (long long)v);
}

void ob_csv_opt_int(ob_csv *c, int64_t v)
{
    if (v < 0) sep(c);
    else ob_csv_int(c, v);
}

void ob_csv_row(ob_csv *c)
{
    fputc('\n', c->f);
    c->col = 0;
}

ob_status ob_csv_close(ob_csv *c, ob_err *e)
{
    if (!c->f) return OB_OK;
    int bad = ferror(c->f);
    if (fclose(c->f) != 0) bad = 1;
    c->f = NULL;
    if (bad) return ob_fail(e, OB_ERR_IO, "writing '%s' failed: %s", c->path, strerror(errno));
    return OB_OK;
}

void ob_slug(const char *label, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = label; *p && k + 1 < n; p++) {
        char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '.' || ch == '-' || ch == '_')
            out[k++] = ch;
        else if (ch == '=')
            out[k++] = '-';
        else if (k > 0 && out[k - 1] != '_')
            out[k++] = '_';
    }
    out[k] = 0;
}
