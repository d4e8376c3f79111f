/* harness/search.c - quasi-random search over ranges (see search.h). */
#include "harness/search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"

/* The key of the digits' scrambling: fixed, so that every build and every
 * machine makes the same points (a search is part of a matrix's identity). */
#define OB_SEARCH_KEY 0x5ea4c4ull

static const int primes[OB_SEARCH_MAX_DIMS] = {2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47,  53,
                                               59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131};

int ob_range_parse(const char *text, ob_range *r, ob_err *e)
{
    ob_range_scale scale = OB_RANGE_LIN;
    const char *body = text;
    if (!strncmp(text, "log:", 4)) scale = OB_RANGE_LOG, body = text + 4;
    else if (!strncmp(text, "log1m:", 6)) scale = OB_RANGE_LOG1M, body = text + 6;
    else if (!strncmp(text, "lin:", 4)) body = text + 4;
    const char *dots = strstr(body, "..");
    if (!dots && body == text) return 0; /* a plain value */
    if (!dots || dots == body || !dots[2]) {
        ob_fail(e, OB_ERR_INPUT, "the range '%s' is not LO..HI (a range reads 0.8..0.99, log:1e-5..1e-1 or "
                "log1m:0.9..0.9999)", text);
        return -1;
    }
    char lo_text[128];
    size_t k = (size_t)(dots - body);
    if (k >= sizeof lo_text) k = sizeof lo_text - 1;
    memcpy(lo_text, body, k);
    lo_text[k] = '\0';
    double lo, hi;
    if (ob_parse_double(lo_text, &lo) != 0 || ob_parse_double(dots + 2, &hi) != 0 || !isfinite(lo) ||
        !isfinite(hi)) {
        ob_fail(e, OB_ERR_INPUT, "the range '%s': its ends must be numbers (LO..HI, e.g. 0.8..0.99)", text);
        return -1;
    }
    if (!(lo < hi)) {
        ob_fail(e, OB_ERR_INPUT, "the range '%s' is empty or reversed: give LO..HI with LO < HI", text);
        return -1;
    }
    if (scale == OB_RANGE_LOG && !(lo > 0)) {
        ob_fail(e, OB_ERR_INPUT, "the range '%s' is log-uniform, so its LO must be above 0 (or take a linear range, "
                "%s)", text, body);
        return -1;
    }
    if (scale == OB_RANGE_LOG1M && !(hi < 1)) {
        ob_fail(e, OB_ERR_INPUT, "the range '%s' is log-uniform in 1 - value, so its HI must be below 1", text);
        return -1;
    }
    r->scale = scale;
    r->lo = lo;
    r->hi = hi;
    return 1;
}

double ob_search_point(int64_t i, int dim) { return ob_search_point_seeded(i, dim, 0); }

double ob_search_point_seeded(int64_t i, int dim, int64_t seed)
{
    return ob_search_point_drawn(i, dim, seed, OB_SEARCH_DRAWS);
}

double ob_search_point_drawn(int64_t i, int dim, int64_t seed, int draws)
{
    const uint64_t key = OB_SEARCH_KEY ^ ((uint64_t)seed * 0x9e3779b97f4a7c15ull); /* seed 0: the fixed key */
    const int p = primes[dim < 0 ? 0 : dim % OB_SEARCH_MAX_DIMS];
    const double inv = 1.0 / p;
    const uint64_t idx = (uint64_t)(i < 0 ? 0 : i);
    uint64_t n = idx, below = 1; /* below: p^j while it is at most the index, then past it */
    double u = 0, f = inv;
    /* digits until their weight is below 1e-12: past the index's own digits
     * they are 0, which the scrambling maps to b_j, so the sum goes on */
    for (int j = 0; f >= 1e-12; j++, f *= inv) {
        int digit = (int)(n % (uint64_t)p);
        n /= (uint64_t)p;
        ob_u32x4 r;
        if (draws == 1) {
            /* one permutation per digit position: in base 2 it flips the same
             * bits of every point, so the first 2^k points of two seeds are
             * the same 2^k values up to their digits past the k-th */
            r = ob_philox(key, OB_STREAM_MISC | (uint64_t)dim, (uint64_t)j);
        } else {
            /* nested (Owen's): the permutation of digit j depends on the
             * index's digits before it, i mod p^j, which place the point in
             * its stratum of width p^-j; the strata's counts stay one point
             * each, and each point's digits past its index's own are its own
             * draws, so two seeds share no point but by chance */
            const uint64_t prefix = below > idx ? idx : idx % below;
            r = ob_philox(key, OB_STREAM_MISC | (0x5ea00ull + (uint64_t)dim), (prefix << 7) | (uint64_t)j);
            if (below <= idx) below *= (uint64_t)p;
        }
        int a = 1 + (int)(r.v[0] % (uint32_t)(p - 1)), b = (int)(r.v[1] % (uint32_t)p);
        u += (double)((a * digit + b) % p) * f;
    }
    return u < 1 ? u : nextafter(1.0, 0.0);
}

/* x rounded to d significant digits */
static double round_sig(double x, int d)
{
    if (!(x > 0)) return x;
    double q = pow(10, floor(log10(x)) - d + 1);
    return round(x / q) * q;
}

/* significant digits for a log-uniform range of log-width w (natural log):
 * 3, more where half a unit of the last digit would exceed 1% of w */
static int log_digits(double w)
{
    int d = (int)ceil(2.7 - log10(w));
    return d < 3 ? 3 : d > 9 ? 9 : d;
}

void ob_range_value(const ob_range *r, const ob_hp_def *d, double u, char *out, size_t n)
{
    double v;
    const int integer = d && d->kind == OB_HP_INT;
    switch (r->scale) {
    case OB_RANGE_LOG: {
        double w = log(r->hi / r->lo);
        v = r->lo * exp(u * w);
        v = integer ? round(v) : round_sig(v, log_digits(w));
        break;
    }
    case OB_RANGE_LOG1M: {
        double a = 1 - r->hi, b = 1 - r->lo, w = log(b / a);
        double x = b * exp(-u * w); /* 1 - value, log-uniform; u = 0 at lo, as the other scales */
        v = 1 - round_sig(x, log_digits(w));
        if (integer) v = round(v);
        break;
    }
    default:
        if (integer) v = floor(r->lo + u * (r->hi - r->lo + 1));
        else {
            double step = pow(10, floor(log10((r->hi - r->lo) / 100)));
            v = round((r->lo + u * (r->hi - r->lo)) / step) * step;
        }
        break;
    }
    if (v < r->lo) v = r->lo;
    if (v > r->hi) v = r->hi;
    snprintf(out, n, "%.9g", v);
}
