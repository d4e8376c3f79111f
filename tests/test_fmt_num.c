/* tests/test_fmt_num.c - ob_fmt_num (the report's shortest round-trip text of
 * a double) against the plain search it replaced, which tries 6 to 17
 * significant digits in turn: the same text for every double tried. Random
 * bit patterns (all exponents, subnormals, NaN payloads), floats widened to
 * double (most recorded losses), doubles in typical loss, lr and time ranges,
 * integers, decimal fractions, every power of two and its neighbours (where
 * the bisection is not used), +-0, +-inf, the extremes, and short buffers. */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "results/csv.h"

/* the algorithm before the bisection, kept as the reference */
static void ref_fmt_num(double v, char *buf, size_t n)
{
    if (isnan(v)) {
        buf[0] = 0;
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, "%s", v > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static uint64_t sm_state = 0x9e3779b97f4a7c15u;

static uint64_t splitmix64(void)
{
    uint64_t z = (sm_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double unit(void) { return (double)(splitmix64() >> 11) * 0x1p-53; }

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static long n_tried, n_differ;

static void try_n(double v, size_t n)
{
    char a[64], b[64];
    memset(a, 'x', sizeof a);
    memset(b, 'x', sizeof b);
    ob_fmt_num(v, a, n);
    ref_fmt_num(v, b, n);
    n_tried++;
    /* the text up to its NUL; what a longer try left after it does not count */
    if (memchr(a, 0, n) == NULL || strcmp(a, b) != 0) {
        if (n_differ++ < 10) {
            uint64_t bits;
            memcpy(&bits, &v, sizeof bits);
            fprintf(stderr, "differs at %016llx (n %zu): '%.*s' against '%.*s'\n", (unsigned long long)bits, n,
                    (int)n, a, (int)n, b);
        }
    }
}

static void try1(double v)
{
    try_n(v, 64);
    try_n(-v, 64);
}

int main(void)
{
    /* specials and extremes */
    const double specials[] = {0.0, INFINITY, NAN, -NAN, DBL_MAX, DBL_MIN, DBL_TRUE_MIN, DBL_EPSILON, 1.0, 0.1,
                               1e-7, 1e22, 1e23, 9007199254740993.0, 5e-324, 2.2250738585072009e-308,
                               1.7976931348623157e308, 0.30000000000000004, 123456.5, 999999.5, 9999995.0};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) try1(specials[i]);
    try_n(from_bits(0x7ff8000000000001u), 64); /* NaN payloads */
    try_n(from_bits(0xfff0000000000123u), 64);
    /* every power of two, normal and subnormal, and its neighbours */
    for (int k = -1074; k <= 1023; k++) {
        double p = ldexp(1.0, k);
        try1(p);
        try1(nextafter(p, 0.0));
        try1(nextafter(p, INFINITY));
    }
    /* powers of ten and their neighbours */
    for (int k = -323; k <= 308; k++) {
        double p = strtod("1", NULL) * pow(10.0, k);
        try1(p);
        try1(nextafter(p, 0.0));
        try1(nextafter(p, INFINITY));
    }
    /* random bit patterns: every exponent, NaNs and infinities among them */
    for (int i = 0; i < 300000; i++) try_n(from_bits(splitmix64()), 64);
    /* subnormals */
    for (int i = 0; i < 50000; i++) try1(from_bits(splitmix64() & ((UINT64_C(1) << 52) - 1)));
    /* floats widened to double: random float bits, and floats of typical losses */
    for (int i = 0; i < 150000; i++) {
        uint32_t fb = (uint32_t)splitmix64();
        float f;
        memcpy(&f, &fb, sizeof f);
        try_n((double)f, 64);
    }
    for (int i = 0; i < 150000; i++) try1((double)(float)(unit() * 10.0));
    /* doubles from loss ranges (log-uniform 1e-8 .. 1e3) and in [0, 10) */
    for (int i = 0; i < 150000; i++) try1(pow(10.0, -8.0 + 11.0 * unit()));
    for (int i = 0; i < 75000; i++) try1(unit() * 10.0);
    /* integers, and decimal fractions such as lrs and step times */
    for (int i = 0; i < 50000; i++) try1((double)i);
    for (int i = 0; i < 20000; i++) try1((double)(splitmix64() >> (splitmix64() % 64)));
    for (int i = 0; i < 75000; i++) {
        int digits = 1 + (int)(splitmix64() % 17), ex = (int)(splitmix64() % 40) - 20;
        char t[64];
        snprintf(t, sizeof t, "%llue%d", (unsigned long long)(splitmix64() % (uint64_t)pow(10.0, digits)), ex);
        try1(strtod(t, NULL));
    }
    /* buffers too short for 17 digits take the plain search; the text is the same */
    for (int i = 0; i < 20000; i++) {
        double v = pow(10.0, -8.0 + 11.0 * unit());
        try_n(v, 8 + (size_t)(splitmix64() % 28));
    }
    CHECK_MSG(n_differ == 0, "%ld of %ld doubles formatted differently", n_differ, n_tried);
    CHECK(n_tried >= 1000000);
    printf("%ld doubles, %ld formatted differently\n", n_tried, n_differ);
    return check_done();
}
