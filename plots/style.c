/* plots/style.c - see style.h. */
#include "plots/style.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizers/optim.h"

/* One colour per optimizer of the registry, in its order (sgd, adam, adamw,
 * nadam, radam, adamax, adagrad, adadelta, rmsprop, lion, muon, root,
 * adamw_sf, sgd_sf, soap, adafactor, rprop, asgd, lamb, lars, ademamix, adabelief), chosen to stay apart for
 * readers with a colour-vision deficiency as well: distances are Delta E
 * 1976 in CIELAB, under normal vision and under protanopia, deuteranopia
 * and tritanopia as simulated by Machado, Oliveira and Fernandes (2009) at
 * severity 1 (their matrices applied to linear RGB).
 *  - The six of the default benchmark (sgd, adam, adamw, lion, muon, root),
 *    which share nearly every figure, come from well-known palettes: Paul
 *    Tol's vibrant blue, muted wine and olive, bright red and dark green,
 *    and Okabe-Ito's reddish purple. Every pair of them is at least 30.7
 *    apart in normal vision and 22.9 under each simulation (tab10, used
 *    before, put adam's red and adamw's green 7.3 apart for deuteranopes).
 *    adam and adamw, which often lie on top of each other, differ in
 *    lightness as well (L* 32 and 61): 53 or more apart in every vision.
 *  - The other fourteen take well-known colours where these kept their
 *    distances (ColorBrewer Dark2's orange and teal, tab10's and Set1's
 *    browns, Okabe-Ito's sky blue) and #rgb colours (steps of 0x11) otherwise:
 *    all 20 are at least 20.6 apart in normal vision (rmsprop and sgd_sf)
 *    and 10.0 under each simulation (adafactor and rprop under protanopia,
 *    nadam and lion under tritanopia). lamb's, added later, is the #rgb
 *    colour farthest from all the others and the spares below: 23.5 in
 *    normal vision and 10.5 under each simulation (from adafactor's, under
 *    deuteranopia). No colour was left that far from all of these (the
 *    best of a 64-level grid kept 20.5 and 10.2), so lars, added last,
 *    took the first spare, which is farther (21.4 and 11.4), ademamix,
 *    after it, the next one, and adabelief, after that, the next.
 *  - Every one reads on white: CIELAB L* 31-70. No black: the figures draw
 *    their annotations (the loss floor, legend keys of marks) in black.
 * tests/test_report_figures.c (test_series_colours_cvd) checks these
 * bounds. Series differ by marker and dash type as well (ob_series_marks),
 * so the closer pairs of the 22 still tell apart. */
static const char *const palette[] = {"#0077bb", "#882255", "#999933", "#d95f02", "#886699", "#8c564b",
                                      "#bb1177", "#1144aa", "#99aacc", "#ee6677", "#225522", "#cc79a7",
                                      "#1b9e77", "#56b4e9", "#773388", "#997744", "#a65628", "#8899ff",
                                      "#77aa55", "#7766dd", "#991122", "#ff8866"};
#define N_PALETTE (int)(sizeof palette / sizeof palette[0])
/* Colours no optimizer owns, for optimizers the registry does not know
 * (and for the next optimizers added to it, as lars, ademamix and
 * adabelief took the first three): so a colour keeps meaning one optimizer. Each
 * was picked, in this order, from the #rgb colours of moderate lightness
 * and saturation (CIELAB L* 30-70, chroma under 70) as the one farthest from
 * the palette and the spares before it, by the smallest of its distances
 * in the four visions above: every one is at least 21.4 apart from
 * any other colour here in normal vision and 11.4 under each simulation,
 * more than the palette's closest pairs (20.6 and 10.0). */
static const char *const spare[] = {"#cc9999", "#dd9922", "#006677"};
#define N_SPARE (int)(sizeof spare / sizeof spare[0])

/* The registry place of an optimizer name, -1 if unknown. */
static int registry_index(const char *name)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    for (int i = 0; i < n; i++)
        if (name && !strcmp(all[i]->name, name)) return i;
    return -1;
}

/* sRGB "#rrggbb" and CIELAB (D65), for the shades. */
static const double xyz_white[3] = {0.95047, 1.0, 1.08883};

static void hex_to_lab(const char *hex, double lab[3])
{
    unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
    double l[3], f[3];
    for (int c = 0; c < 3; c++) {
        double u = ((v >> (16 - 8 * c)) & 0xff) / 255.0;
        l[c] = u <= 0.04045 ? u / 12.92 : pow((u + 0.055) / 1.055, 2.4);
    }
    const double x = 0.4124564 * l[0] + 0.3575761 * l[1] + 0.1804375 * l[2];
    const double y = 0.2126729 * l[0] + 0.7151522 * l[1] + 0.0721750 * l[2];
    const double z = 0.0193339 * l[0] + 0.1191920 * l[1] + 0.9503041 * l[2];
    const double t[3] = {x / xyz_white[0], y / xyz_white[1], z / xyz_white[2]};
    for (int c = 0; c < 3; c++) f[c] = t[c] > 216.0 / 24389 ? cbrt(t[c]) : t[c] * 24389.0 / 3132 + 4.0 / 29;
    lab[0] = 116 * f[1] - 16, lab[1] = 500 * (f[0] - f[1]), lab[2] = 200 * (f[1] - f[2]);
}

/* Linear RGB of a CIELAB colour; 0 when it lies outside [0, 1]^3 (sRGB's gamut). */
static int lab_to_linear(const double lab[3], double rgb[3])
{
    const double fy = (lab[0] + 16) / 116, f[3] = {fy + lab[1] / 500, fy, fy - lab[2] / 200};
    double t[3];
    for (int c = 0; c < 3; c++) t[c] = (f[c] > 6.0 / 29 ? f[c] * f[c] * f[c] : (f[c] - 4.0 / 29) * 3132 / 24389) *
                                       xyz_white[c];
    rgb[0] = 3.2404542 * t[0] - 1.5371385 * t[1] - 0.4985314 * t[2];
    rgb[1] = -0.9692660 * t[0] + 1.8760108 * t[1] + 0.0415560 * t[2];
    rgb[2] = 0.0556434 * t[0] - 0.2040259 * t[1] + 1.0572252 * t[2];
    int in = 1;
    for (int c = 0; c < 3; c++) in &= rgb[c] >= -1e-9 && rgb[c] <= 1 + 1e-9;
    return in;
}

static void linear_to_hex(const double rgb[3], ob_colour *out)
{
    int v[3];
    for (int c = 0; c < 3; c++) {
        double u = rgb[c] < 0 ? 0 : rgb[c] > 1 ? 1 : rgb[c];
        u = u <= 0.0031308 ? 12.92 * u : 1.055 * pow(u, 1 / 2.4) - 0.055;
        v[c] = (int)lround(u * 255);
    }
    snprintf(out->hex, sizeof out->hex, "#%02x%02x%02x", v[0], v[1], v[2]);
}

#define SHADE_L_LO 28.0
#define SHADE_L_HI 76.0
#define SHADE_STEP 11.0

void ob_series_shade(const char *hex, int k, int m, ob_colour *out, int *own)
{
    double lab[3];
    hex_to_lab(hex, lab);
    const double l0 = lab[0];
    if (m < 2) m = 1;
    /* the colour's place c among the levels and their step: the largest
     * step up to SHADE_STEP that keeps every level within the span, the
     * colour as near the middle as that allows */
    int c = 0;
    double step = 0;
    for (int p = 0; p < m; p++) {
        double sp = SHADE_STEP;
        if (p > 0 && (l0 - SHADE_L_LO) / p < sp) sp = (l0 - SHADE_L_LO) / p;
        if (p < m - 1 && (SHADE_L_HI - l0) / (m - 1 - p) < sp) sp = (SHADE_L_HI - l0) / (m - 1 - p);
        if (sp > step + 1e-9 || (fabs(sp - step) <= 1e-9 && abs(2 * p - (m - 1)) < abs(2 * c - (m - 1)))) {
            step = sp;
            c = p;
        }
    }
    if (own) *own = c;
    if (k == c || m == 1) {
        snprintf(out->hex, sizeof out->hex, "%.7s", hex);
        return;
    }
    /* the hue and as much of the chroma as sRGB shows at that lightness */
    double t[3] = {l0 + step * (k - c), lab[1], lab[2]}, rgb[3];
    double keep = 1, cut = 0;
    if (!lab_to_linear(t, rgb)) {
        keep = 0, cut = 1; /* bisect the chroma factor: keep shows, cut does not */
        for (int it = 0; it < 30; it++) {
            double mid = (keep + cut) / 2;
            t[1] = lab[1] * mid, t[2] = lab[2] * mid;
            if (lab_to_linear(t, rgb)) keep = mid;
            else cut = mid;
        }
    }
    t[1] = lab[1] * keep, t[2] = lab[2] * keep;
    lab_to_linear(t, rgb);
    linear_to_hex(rgb, out);
}

int ob_series_family(const char *const *opt_names, int n, int i, int *rank, int *count)
{
    const int k = i >= 0 && i < n ? registry_index(opt_names[i]) : -1;
    if (k < 0 || k >= N_PALETTE) {
        if (rank) *rank = 0;
        if (count) *count = 1;
        return i;
    }
    int r = 0, m = 0;
    for (int j = 0; j < n; j++)
        if (opt_names[j] && !strcmp(opt_names[j], opt_names[i])) r += j < i, m++;
    if (rank) *rank = r;
    if (count) *count = m;
    /* the colour's own place among m shades, and the configuration there */
    int c = 0;
    ob_colour tmp;
    ob_series_shade(palette[k], 0, m, &tmp, &c);
    for (int j = 0, q = 0; j < n; j++)
        if (opt_names[j] && !strcmp(opt_names[j], opt_names[i]) && q++ == c) return j;
    return i;
}

void ob_series_colours(const char *const *opt_names, int n, ob_colour *out)
{
    int taken[N_PALETTE] = {0};
    int *place = malloc(((size_t)n + 1) * sizeof *place);
    for (int i = 0; i < n; i++) {
        int k = registry_index(opt_names[i]);
        if (k >= N_PALETTE) k = -1;
        if (place) place[i] = k;
        if (k >= 0) taken[k] = 1;
        out[i].hex[0] = '\0';
    }
    /* each known optimizer's configurations: its shades, dark to light in
     * the order given (by the swept value), the one at its own lightness
     * its own colour (ob_series_family) */
    for (int i = 0; i < n && place; i++) {
        const int k = place[i];
        if (k < 0) continue;
        int r = 0, m = 1;
        ob_series_family(opt_names, n, i, &r, &m);
        ob_series_shade(palette[k], r, m, &out[i], NULL);
    }
    /* the others (optimizers the registry does not know; every series when
     * out of memory): the spare colours, then those of optimizers not in
     * the figure, then every colour again, in order */
    int next_spare = 0, next = 0;
    for (int i = 0; i < n; i++) {
        if (out[i].hex[0]) continue;
        if (next_spare < N_SPARE) {
            snprintf(out[i].hex, sizeof out[i].hex, "%s", spare[next_spare++]);
            continue;
        }
        while (next < N_PALETTE && taken[next]) next++;
        if (next == N_PALETTE) { /* every colour in use: they repeat, in order */
            memset(taken, 0, sizeof taken);
            next = 0;
        }
        taken[next] = 1;
        snprintf(out[i].hex, sizeof out[i].hex, "%s", palette[next++]);
    }
    free(place);
}

/* Each optimizer's marker shape (gnuplot point type) and dash type. Five
 * filled shapes (circle 7, triangle 9, down triangle 11, diamond 13,
 * pentagon 15) and five open ones (square 4 and the open triangle 8, down
 * triangle 10, diamond 12, pentagon 14); no filled square, which would cover
 * any marker under it, and none of the marks the figures use for something
 * else (2 x: diverged, 3 star: fresh seeds, 6 open circle: the best lr).
 * Dashes: solid 1, dashed 2, dash-dot 4, dash-dot-dot 5 (not dotted, too
 * faint at the figures' line width). No two optimizers share both, so a
 * figure printed in grey tells them apart, and the six of the default
 * benchmark (sgd, adam, adamw, lion, muon, root) have six shapes, for the
 * dot plots, which have no lines. Series are drawn in label order
 * (alphabetical), and where an open shape's filled twin belongs to another
 * optimizer, that optimizer's name sorts first: a filled marker never covers
 * its open twin drawn before it at the same point (adam and adamw lie
 * exactly on top of each other where weight decay does not matter); an open
 * marker shows the one under it through its middle, and a filled circle,
 * triangle, diamond or pentagon leaves the corners of one under it. */
static const struct mark {
    const char *name;
    int shape, dash;
} marks[] = {
    {"sgd", 7, 1},       {"adam", 4, 2},       {"adamw", 9, 4},    {"nadam", 8, 5},     {"radam", 10, 1},
    {"adamax", 11, 2},   {"adagrad", 7, 2},    {"adadelta", 15, 5}, {"rmsprop", 12, 1},  {"lion", 13, 2},
    {"muon", 15, 4},     {"root", 10, 5},      {"adamw_sf", 9, 1}, {"sgd_sf", 8, 2},    {"soap", 12, 4},
    {"adafactor", 11, 5}, {"rprop", 14, 1},    {"asgd", 13, 4},     {"lamb", 4, 1},
    {"lars", 10, 2},     {"ademamix", 7, 4},  {"adabelief", 4, 5},
};
#define N_MARKS (int)(sizeof marks / sizeof marks[0])
/* the shapes of further configurations, open ones first */
static const int shapes[] = {4, 8, 10, 12, 14, 7, 9, 11, 13, 15};
static const int dash_types[] = {1, 2, 4, 5};
#define N_SHAPES (int)(sizeof shapes / sizeof shapes[0])
#define N_DASH (int)(sizeof dash_types / sizeof dash_types[0])

static int mark_of(const char *name)
{
    for (int k = 0; name && k < N_MARKS; k++)
        if (!strcmp(marks[k].name, name)) return k;
    return -1;
}

/* The outline of shape s: an open shape and its filled twin are one (at the
 * figures' line width a small open triangle drawn with a solid line reads
 * as a filled one), so 6 outlines: square, circle, triangle, down triangle,
 * diamond, pentagon. */
static int outline(int s) { return s == 4 || s == 5 ? 4 : s == 6 || s == 7 ? 6 : s - (s % 2); }

/* The cost of shape s and dash type d for configuration i, given the marks
 * of the others so far (sh[j] 0: none yet) and every colour, as bits, the
 * higher the worse: 64 another series of the same colour has that shape
 * (the two would read the same in the legend, and at a point), 32 another
 * has that shape and dash type (in grey), 16 a filled shape drawn after its
 * open twin (series are drawn in the order given) or an open one before
 * its filled twin (covered where they meet), 8 another configuration of the
 * same optimizer has that outline (its configurations tell apart by marker,
 * not only by shade), 4 not the optimizer's own dashes (its configurations
 * keep its dashes, so the family reads as one line style), 2 a filled shape
 * (open ones hide nothing), 1 another series has that outline. */
static int mark_cost(const char *const *names, const ob_colour *col, const int *sh, const int *da, int n, int i,
                     int own_dash, int s, int d)
{
    int cost = 0;
    const int filled = s % 2 == 1; /* 7, 9, 11, 13, 15 */
    if (own_dash && d != own_dash) cost |= 4;
    if (filled) cost |= 2;
    for (int j = 0; j < n; j++) {
        if (j == i || !sh[j]) continue;
        if (sh[j] == s) {
            if (col && !strcmp(col[j].hex, col[i].hex)) cost |= 64;
            if (da[j] == d) cost |= 32;
        }
        if (outline(sh[j]) == outline(s)) {
            cost |= 1;
            if (names[j] && names[i] && !strcmp(names[j], names[i])) cost |= 8;
        }
        if ((filled && j < i && sh[j] == s - 1) || (!filled && j > i && sh[j] == s + 1)) cost |= 16;
    }
    return cost;
}

void ob_series_marks(const char *const *opt_names, int n, int *shape, int *dash)
{
    int sh_buf[64], da_buf[64];
    ob_colour col_buf[64];
    int *sh = n <= 64 ? sh_buf : malloc((size_t)n * sizeof *sh);
    int *da = n <= 64 ? da_buf : malloc((size_t)n * sizeof *da);
    ob_colour *col = n <= 64 ? col_buf : malloc((size_t)n * sizeof *col);
    if (!sh || !da) { /* out of memory: every series solid with filled circles */
        for (int i = 0; i < n; i++) {
            if (shape) shape[i] = 7;
            if (dash) dash[i] = 1;
        }
        if (sh != sh_buf) free(sh);
        if (da != da_buf) free(da);
        if (col != col_buf) free(col);
        return;
    }
    if (col) ob_series_colours(opt_names, n, col);
    for (int i = 0; i < n; i++) {
        int k = registry_index(opt_names[i]) >= 0 && ob_series_family(opt_names, n, i, NULL, NULL) == i
                    ? mark_of(opt_names[i])
                    : -1;
        sh[i] = k >= 0 ? marks[k].shape : 0;
        da[i] = k >= 0 ? marks[k].dash : 0;
    }
    /* the others (an optimizer's further configurations, unknown
     * optimizers), in order, each the shape and dashes of least cost
     * (mark_cost), the first of those: its optimizer's dashes, open shapes
     * before filled ones. So no two series share colour and shape while
     * there is a shape left for the colour, and up to 6 configurations of
     * an optimizer have an outline each (square, circle, triangle, down
     * triangle, diamond, pentagon: its own and 5 others) */
    for (int i = 0; i < n; i++) {
        if (sh[i]) continue;
        const int k = mark_of(opt_names[i]);
        const int own_dash = k >= 0 ? marks[k].dash : 0;
        int dl[N_DASH], nd = 0; /* the optimizer's own dashes first, then the others in order */
        if (own_dash) dl[nd++] = own_dash;
        for (int q = 0; q < N_DASH; q++)
            if (dash_types[q] != own_dash) dl[nd++] = dash_types[q];
        int best_s = shapes[0], best_d = dl[0], best_cost = -1;
        for (int c = 0; c < nd * N_SHAPES && best_cost != 0; c++) {
            const int s = shapes[c % N_SHAPES], d = dl[c / N_SHAPES];
            const int cost = mark_cost(opt_names, col, sh, da, n, i, own_dash, s, d);
            if (best_cost < 0 || cost < best_cost) best_cost = cost, best_s = s, best_d = d;
        }
        sh[i] = best_s;
        da[i] = best_d;
    }
    for (int i = 0; i < n; i++) {
        if (shape) shape[i] = sh[i];
        if (dash) dash[i] = da[i];
    }
    if (sh != sh_buf) free(sh);
    if (da != da_buf) free(da);
    if (col != col_buf) free(col);
}

const char *ob_series_style_missing(const char **what)
{
    int n;
    const ob_optimizer_def *const *all = ob_optimizers(&n);
    for (int i = 0; i < n; i++) {
        if (i >= N_PALETTE) {
            if (what) *what = "its own colour in palette[] (plots/style.c, in registry order)";
            return all[i]->name;
        }
        if (mark_of(all[i]->name) < 0) {
            if (what) *what = "its own marker and dash type in marks[] (plots/style.c)";
            return all[i]->name;
        }
        for (int k = 0; k < N_SPARE; k++)
            if (!strcmp(palette[i], spare[k])) {
                if (what) *what = "a colour no spare[] keeps: take its colour out of spare[] (plots/style.c)";
                return all[i]->name;
            }
    }
    return NULL;
}

int ob_series_spare_count(void) { return N_SPARE; }
