/* plots/fig_lr.c - the learning-rate sensitivity figure of each workload
 * (lr_WORKLOAD, from lr_sweep.csv and confirm.csv): final loss vs lr, the strip
 * of divergence marks along the top, and its layout for the PDF's width. */
#include "plots/fig_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Is the lr figure's band drawn at p: no seed there diverged or ended
 * without a finite final loss (either is +inf at the band's top, and the
 * survivors' range would flatter the lr); lr_sweep.csv's columns 6 and 15. */
static int band_drawn(const ob_lr_point *p) { return p->n_diverged == 0 && p->n_nonfinite == 0; }

/* The y values of workload w's lr figure (every lr's median and spread, the
 * confirmation runs'): its y axis is logarithmic when they span two decades,
 * and the hyperparameter figures of w follow it. */
/* *any_div: 1 when a sweep seed diverged or finished without a finite loss,
 * 2 when a fresh one diverged (both: 3), plus 4 when a sweep seed finished
 * without a finite loss */
range ob_fig_lr_yrange(const ob_stats *s, int w, int *any, int *any_div, int *any_conf)
{
    range r = {NAN, NAN};
    *any = *any_div = *any_conf = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w) continue;
        for (int i = 0; i < g->n_lr; i++) {
            ob_fig_range_add(&r, g->lrs[i].med);
            /* the band, drawn only where every seed ended finite (elsewhere
             * its top, the worst seed, is +inf) */
            if (band_drawn(&g->lrs[i])) {
                ob_fig_range_add(&r, g->lrs[i].min_finite);
                ob_fig_range_add(&r, g->lrs[i].max_finite);
            }
            if (g->lrs[i].n_diverged > 0) *any_div |= 1;
            if (g->lrs[i].n_nonfinite > 0) *any_div |= 1 | 4;
            *any = 1;
        }
        /* the confirmation runs' median and range at their lr (confirm.csv) */
        if (g->confirm_lr == g->best_lr && g->n_confirm) {
            if (isfinite(g->conf_final.median)) {
                *any_conf = 1;
                ob_fig_range_add(&r, g->conf_final.median);
                ob_fig_range_add(&r, g->conf_final.min);
                ob_fig_range_add(&r, g->conf_max_finite);
            }
            if (g->conf_n_diverged > 0) *any_div |= 2;
        }
    }
    return r;
}

/* The largest first training loss of workload w's runs that did not
 * diverge (NaN when none): the worst point any of them started from. */
static double initial_loss(const ob_dataset *d, int w)
{
    double m = NAN;
    for (int i = 0; i < d->n; i++) {
        const ob_rrun *r = &d->runs[i];
        if (r->wl == w && !r->diverged && isfinite(r->first_loss) && !(r->first_loss <= m)) m = r->first_loss;
    }
    return m;
}

/* The shortest label of lr, 2 to 4 significant digits, that reads back as
 * it (0.0012, 0.00215, 0.464), else 3 digits. */
static int lr_tic_text(double lr, char *buf, size_t n)
{
    if (lr >= 10 && lr < 1e6 && lr == floor(lr)) return snprintf(buf, n, "%.0f", lr); /* 100, not 1e+02 */
    for (int prec = 2; prec <= 4; prec++) {
        int len = snprintf(buf, n, "%.*g", prec, lr);
        if (fabs(strtod(buf, NULL) - lr) <= 1e-9 * fabs(lr)) return len;
    }
    return snprintf(buf, n, "%.3g", lr);
}

/* The lr figure's x axis is laid out in characters of its tic labels: the
 * PNG's (880 px, 11 px a character with the room a label needs around it)
 * is LR_AXIS_PNG of them; a PDF's is measured when gnuplot draws it
 * (lr_pdf_layout): a column's (3.3 inches) about 35, a text width's about
 * 58. */
#define LR_AXIS_PNG 80.0

/* Labels a and b of values va, vb on the log axis from lo to hi, axis
 * characters long, run into each other (or read the same): less than half
 * their widths and 1.6 characters apart. */
static int tics_crowd(double va, double vb, double lo, double hi, double axis)
{
    char ta[32], tb[32];
    int la = lr_tic_text(va, ta, sizeof ta), lb = lr_tic_text(vb, tb, sizeof tb);
    double gap = fabs(log10(va / vb)) / log10(hi / lo) * axis;
    return gap < (la + lb) / 2.0 + 1.6 || !strcmp(ta, tb);
}

/* The same for labels turned 45 degrees, which need only their height
 * apart over sin 45: 2 characters (22 px of the PNG's 880). */
static int tics_crowd_turned(double va, double vb, double lo, double hi, double axis)
{
    char ta[32], tb[32];
    lr_tic_text(va, ta, sizeof ta);
    lr_tic_text(vb, tb, sizeof tb);
    return fabs(log10(va / vb)) / log10(hi / lo) * axis < 2.0 || !strcmp(ta, tb);
}

#define LR_TICS_MAX 40

/* The lrs swept on workload w as the lr figure's x tics, so that the best
 * lr, 0.464 say, reads as such, not between the decades 0.1 and 1: at most
 * LR_TICS_MAX of them, ascending, in vals; labelled[i] says which carry a
 * label: the optimizers' best lrs first, then the grid's two ends (where the
 * axis starts and stops), then every other one whose label does not run into
 * a labelled one's on the log axis from lo to hi (the others are unlabelled
 * tics): where labels crowd, an interior lr that is no optimizer's best goes
 * without. A best lr or an end whose label would still run into one of
 * those (a best lr next to another, or to the grid's end) is labelled on a
 * second line under the first (labelled[i] 2), where it does not run into
 * another there. turned: for labels turned 45 degrees, which need less room
 * and have no second line. Returns how many, 0 to leave the tics at the
 * decades (more lrs than that). The axis is axis characters long. */
static int lr_tics(const ob_stats *s, int w, double lo, double hi, double axis, int turned, double *vals,
                   int *labelled)
{
    int nv = 0;
    for (int k = 0; k < s->n_g; k++)
        for (int i = 0; s->g[k].wl == w && i < s->g[k].n_lr; i++) {
            double v = s->g[k].lrs[i].lr;
            int seen = 0;
            for (int j = 0; j < nv && !seen; j++) seen = vals[j] == v;
            if (seen || !(v > 0)) continue;
            if (nv == LR_TICS_MAX) return 0;
            vals[nv++] = v;
        }
    for (int i = 1; i < nv; i++) /* ascending */
        for (int j = i; j > 0 && vals[j - 1] > vals[j]; j--) {
            double t = vals[j];
            vals[j] = vals[j - 1];
            vals[j - 1] = t;
        }
    for (int i = 0; i < nv; i++) labelled[i] = 0;
    for (int pass = 0; pass < (turned ? 3 : 4); pass++)
        for (int i = 0; i < nv; i++) {
            int best = 0;
            for (int k = 0; k < s->n_g && !best; k++) best = s->g[k].wl == w && s->g[k].best_lr == vals[i];
            const int end = i == 0 || i == nv - 1;
            if (labelled[i] || (pass == 0 && !best) || (pass == 1 && !end) || (pass == 3 && !best && !end))
                continue;
            /* passes 0 to 2: the first line; 3: the second */
            const int line = pass == 3 ? 2 : 1;
            int ok = 1;
            for (int j = 0; j < nv && ok; j++)
                ok = labelled[j] != line || !(turned ? tics_crowd_turned(vals[i], vals[j], lo, hi, axis)
                                                     : tics_crowd(vals[i], vals[j], lo, hi, axis));
            labelled[i] = ok ? line : 0;
        }
    return nv;
}

/* The legend's note after an optimizer in the lr figure: its best lr (", best
 * lr 0.464", "at the grid's edge" when it is the smallest or the largest lr
 * the optimizer ran: the best may lie beyond), or why it has none (no line
 * to see: its x marks are along the top). */
static const char *lr_key_note(const ob_group *g, char *buf, size_t n)
{
    char t[32];
    if (g->best >= 0) {
        lr_tic_text(g->best_lr, t, sizeof t);
        snprintf(buf, n, ", best lr %s%s", t,
                 g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1) ? " (grid edge)" : "");
    } else {
        snprintf(buf, n, "%s", g->n_finished ? " (diverged at every lr)" : " (no run finished)");
    }
    return buf;
}

/* The lr figure's strip of marks along the top, laid out in pixels of the
 * PNG (FIG_W x FIG_H, measured on rendered figures): a row for each
 * optimizer with a mark, LR_ROW_PX apart, so that an x (pt 2 at ps 2, about
 * 14 px tall) and its 8-point k/n label (about 11 px) clear the next row's;
 * LR_STRIP_PAD above the first row and below the last (half a marker and a
 * gap). The 11-point text of the tics is about 8 px a character wide, the
 * 8-point labels about 6. */
#define LR_ROW_PX 18.0
#define LR_STRIP_PAD 14.0
#define LR_CHAR_PX 8.1
#define LR_SMALL_PX 6.0

/* Has group g a mark in the lr figure's strip: an x where a sweep seed
 * diverged or ended without a finite loss, or a square where a fresh seed
 * at the best lr diverged. */
static int lr_sweep_marks(const ob_group *g)
{
    for (int i = 0; i < g->n_lr; i++)
        if (g->lrs[i].n_diverged + g->lrs[i].n_nonfinite > 0) return 1;
    return 0;
}
static int lr_conf_mark(const ob_group *g)
{
    return g->confirm_lr == g->best_lr && g->n_confirm && g->conf_n_diverged > 0;
}

/* The rows of the legend below the plot for n entries up to longest
 * characters, as ob_fig_key_fit lays them out: each takes about 17 px of the PNG
 * from the plot, whose height the strip's rows are measured against. */
static int lr_key_rows(int n, size_t longest)
{
    if (n < 1) return 0;
    int cols = (int)(100 / (longest + 10));
    if (cols < 1) cols = 1;
    if (cols > n) cols = n;
    return (n + cols - 1) / cols;
}

/* The k/n label of lr point p (k of its n finished seeds diverged or ended
 * without a finite loss), as gnuplot's sprintf writes it from lr_sweep.csv. */
static int lr_mark_text(const ob_lr_point *p, char *buf, size_t n)
{
    return snprintf(buf, n, "%d/%d", p->n_diverged + p->n_nonfinite, p->n_finished);
}

/* Append "x == lr" to the gnuplot condition in buf (len characters so far). */
static size_t lr_cond_add(char *buf, size_t n, size_t len, double lr)
{
    if (len + 40 < n) len += (size_t)snprintf(buf + len, n - len, "%sx == %.17g", len ? " || " : "", lr);
    return len;
}

/* The lr figure's strip laid out along its x axis, in one unit: the PNG's
 * pixels, or a PDF's characters (gnuplot's "char", which the offsets use):
 * the axis's length, a character of the k/n labels, the labels' offset
 * from their x, an x's half width and a little room between two labels. */
typedef struct lr_geom {
    double axis, small, off, mark, slack;
} lr_geom;

/* Which x marks of group g carry their k/n label, as the body of a gnuplot
 * function of the lr (column 3) in right and left (each n bytes): right
 * those labelled at their right ("1" where every one is, as where the marks
 * stand apart), left those labelled at their left ("0" where none is). On
 * a dense grid (36 lrs) a label would run into the next x of the row: of a
 * cluster of x's too close for a label each, a run of them that read the
 * same is labelled once, the last run at the right of the cluster's last x,
 * the first (where it reads otherwise, 1/3 before a run of 3/3, say) at the
 * left of the cluster's first x where the row has room for it there; runs
 * between those two go without (lr_sweep.csv has every count). Every label
 * stays inside the plot, clear of the names at its right: where the last
 * one would reach past the axis's end, the cluster's first x is labelled at
 * its left instead, where the row has room for it. x(lr) = gm->axis *
 * log(lr / xlo) / log(xhi / xlo). */
static void lr_mark_labels(const ob_group *g, double xlo, double xhi, const lr_geom *gm, char *right, char *left,
                           size_t n)
{
    size_t nr = 0, nl = 0;
    int all = 1;
    double prev_end = 0; /* where the row's last label so far ends (the axis's start) */
    right[0] = left[0] = 0;
    const double span = log(xhi / xlo);
    for (int a = 0; a < g->n_lr;) {
        if (g->lrs[a].n_diverged + g->lrs[a].n_nonfinite == 0) {
            a++;
            continue;
        }
        /* the cluster a..b: each x too close to the next for its label */
        int b = a, nb = a;
        char tb[32];
        for (;;) {
            int len = lr_mark_text(&g->lrs[b], tb, sizeof tb);
            nb = b + 1;
            while (nb < g->n_lr && g->lrs[nb].n_diverged + g->lrs[nb].n_nonfinite == 0) nb++;
            /* a label starts a character right of its x and must end
             * before the next x begins */
            if (nb == g->n_lr ||
                gm->axis * log(g->lrs[nb].lr / g->lrs[b].lr) / span >= gm->off + len * gm->small + gm->mark + gm->slack)
                break;
            b = nb;
        }
        const double xa = gm->axis * log(g->lrs[a].lr / xlo) / span, xb = gm->axis * log(g->lrs[b].lr / xlo) / span;
        const int lb = lr_mark_text(&g->lrs[b], tb, sizeof tb);
        /* inside the plot (the next x of the row, if any, is inside it too) */
        const int fits = xb + gm->off + lb * gm->small <= gm->axis;
        if (fits) nr = lr_cond_add(right, n, nr, g->lrs[b].lr);
        if (b > a || !fits) {
            all = 0;
            char ta[32];
            int la = lr_mark_text(&g->lrs[a], ta, sizeof ta);
            if ((strcmp(ta, tb) || !fits) && xa - (gm->off + la * gm->small + gm->mark + gm->slack) >= prev_end)
                nl = lr_cond_add(left, n, nl, g->lrs[a].lr);
        }
        prev_end = fits ? xb + gm->off + lb * gm->small : xb + gm->mark;
        a = nb;
    }
    if (all) snprintf(right, n, "1");
    else if (!nr) snprintf(right, n, "0");
    if (!nl) snprintf(left, n, "0");
}

/* The lr figure's y axis where its top is fixed (a strip of marks above the
 * data, or a cap): from bottom bot (the decade below lo on a log axis, a
 * step below it on a linear one) to data_top, the tics stopping there, and
 * frac of the plot's height above it for the strip. Returns bot. */
static double lr_y_axis(FILE *f, int logy, double lo, double data_top, double frac)
{
    if (!(frac < 0.9)) frac = 0.9; /* the data keep a tenth of the plot whatever the strip asks */
    if (logy) {
        double bot = pow(10, floor(log10(lo)));
        double top = data_top * pow(data_top / bot, frac / (1 - frac));
        fprintf(f, "set yrange [%.9g:%.9g]\n", bot, top);
        fprintf(f, "set ytics %.9g, %g, %.9g\n", bot, log10(data_top / bot) > 10 ? 100.0 : 10.0, data_top);
        return bot;
    }
    double raw = (data_top - lo) / 6;
    if (!(raw > 0)) raw = fabs(data_top) > 0 ? fabs(data_top) / 6 : 1;
    double mag = pow(10, floor(log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    /* a little room below the lowest point, whose marker would else sit on the border */
    double bot = floor((lo - 0.03 * (data_top - lo)) / step) * step;
    if (!(data_top > bot)) bot -= step;
    fprintf(f, "set yrange [%.9g:%.9g]\n", bot, data_top + (data_top - bot) * frac / (1 - frac));
    fprintf(f, "set ytics %.9g, %.9g, %.9g\n", bot, step, data_top);
    return bot;
}

/* The lr figure's x tics on an axis `axis` characters long (LR_AXIS_PNG
 * for the PNG): lr_tics' labels, and where labels would run into each
 * other, every lr labelled and the labels turned (*turned) if that leaves
 * them room; else, where turned labels keep every best lr and both ends
 * and label more lrs than the flat ones (a dense grid on a column's
 * width), turned labels thinned as lr_tics thins them. Returns how many
 * tics (0: gnuplot's own at the decades). */
static int lr_tic_layout(const ob_stats *s, int w, double lo, double hi, double axis, double *tics, int *labelled,
                         int *turned)
{
    const int n_tics = lo > 0 ? lr_tics(s, w, lo, hi, axis, 0, tics, labelled) : 0;
    int crowded = 0;
    *turned = 0;
    for (int i = 0; i < n_tics; i++) crowded |= labelled[i] != 1;
    if (!crowded) return n_tics;
    int t = 1;
    for (int i = 1; i < n_tics && t; i++) t = !tics_crowd_turned(tics[i - 1], tics[i], lo, hi, axis);
    if (t) {
        for (int i = 0; i < n_tics; i++) labelled[i] = 1;
        *turned = 1;
        return n_tics;
    }
    int thin[LR_TICS_MAX], n_flat = 0, n_thin = 0, keeps = 1;
    lr_tics(s, w, lo, hi, axis, 1, tics, thin);
    for (int i = 0; i < n_tics; i++) {
        int best = 0;
        for (int k = 0; k < s->n_g && !best; k++) best = s->g[k].wl == w && s->g[k].best_lr == tics[i];
        if ((best || i == 0 || i == n_tics - 1) && thin[i] != 1) keeps = 0;
        n_flat += labelled[i] != 0;
        n_thin += thin[i] == 1;
    }
    if (keeps && n_thin > n_flat) {
        for (int i = 0; i < n_tics; i++) labelled[i] = thin[i];
        *turned = 1;
    }
    return n_tics;
}

/* Tags of the labels of the lr figure's second line of lr labels (one per
 * tic at most), so that a PDF of another width can take them back. */
#define LR_TAG_SECOND 9001

/* Writes the lr figure's x tics (lr_tic_layout's) to f, each line after
 * indent: a swept lr whose label would run into a neighbour's is a tic
 * without one (a minor tic), or with its label on a second line (tagged
 * LR_TAG_SECOND + i) and the x label under it. reset: after another
 * layout, whose rotation, second line and x label's offset it undoes.
 * Returns whether there is a second line. */
static int lr_tics_write(FILE *f, const char *indent, const double *tics, const int *labelled, int n_tics, int turned,
                         int reset)
{
    int second = 0;
    if (n_tics <= 0) return 0;
    fprintf(f, "%sset xtics %s(", indent, turned ? "rotate by 45 right " : reset ? "norotate autojustify " : "");
    for (int i = 0; i < n_tics; i++) {
        char t[32];
        lr_tic_text(tics[i], t, sizeof t);
        fprintf(f, "%s\"%s\" %.17g%s", i ? ", " : "", labelled[i] == 1 ? t : "", tics[i], labelled[i] ? "" : " 1");
        second |= labelled[i] == 2;
    }
    fprintf(f, ")   # the swept lrs%s\n", turned ? ", turned where they would run into each other" : "");
    if (reset) fprintf(f, "%sdo for [t = %d:%d] { unset label t }\n", indent, LR_TAG_SECOND, LR_TAG_SECOND + n_tics - 1);
    for (int i = 0; i < n_tics; i++) {
        char t[32];
        lr_tic_text(tics[i], t, sizeof t);
        if (labelled[i] == 2)
            fprintf(f, "%sset label %d \"%s\" at first %.17g, graph 0 center offset 0, char -2.1   # a second line of lr labels\n",
                    indent, LR_TAG_SECOND + i, t, tics[i]);
    }
    if (second) fprintf(f, "%sset xlabel offset 0, -1   # under the second line of lr labels\n", indent);
    else if (reset) fprintf(f, "%sset xlabel offset 0, 0\n", indent);
    return second;
}

/* The right end of the lr axis (at least xhi) that leaves room inside the
 * plot, between the axis's end and the names at its right, for the k/n
 * label of each row's last x, which stands at its right (lr_mark_labels):
 * a little more axis beyond the grid's end where a label would else reach
 * past it. gm: the axis's geometry (its length, the label's characters);
 * where a label would need more than 12% of the axis (a PDF under about
 * 2.7 inches wide), the axis is left as it is and the label goes at the
 * left of its x instead. */
static double lr_room_right(const ob_stats *s, int w, double xlo, double xhi, const lr_geom *gm)
{
    double hi = xhi;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w) continue;
        for (int i = g->n_lr - 1; i >= 0; i--) {
            if (g->lrs[i].n_diverged + g->lrs[i].n_nonfinite == 0) continue;
            char t[32];
            const double r = (gm->off + lr_mark_text(&g->lrs[i], t, sizeof t) * gm->small + gm->slack) / gm->axis;
            /* the label's share r of the axis from the x to the end:
             * log(hi / x) = r log(hi / xlo) */
            if (r <= 0.12 && g->lrs[i].lr > xlo) {
                const double need = g->lrs[i].lr * exp(r * log(g->lrs[i].lr / xlo) / (1 - r));
                if (need > hi) hi = need;
            }
            break;
        }
    }
    return hi;
}

/* The lr figure's strip along the top, as the PNG lays it out: n_rows
 * rows, the data's axis from bot to data_top (log or not) under it, the
 * strip div_frac of the plot's height (with the room for a cap's
 * triangles when cap). */
typedef struct lr_strip {
    int n_rows, logy;
    double bot, data_top, div_frac;
    int cap;
} lr_strip;

/* A PDF's lr axis in characters of its text (gnuplot's "char": a digit's
 * width), lr_tics' characters (LR_AXIS_PNG) being this many of them: lr_tics
 * counts the room a label needs around it into its characters (the PNG's
 * axis, 880 px, is about 97 of gnuplot's 9 px characters; its labels' text
 * is narrower than gnuplot's character, a PDF's as wide). */
#define LR_PDF_TIC_CH 1.34

/* A PDF's lr axis lengths, in its characters, for which lr_pdf_layout lays
 * the labels out: from 8 (a PDF an inch wide has about 9) to 300 (20
 * inches), 12% apart; a layout is used from its length to the next one's,
 * so on an axis up to 12% longer than it was laid out for. -1 past them. */
static double lr_pdf_ladder(int i)
{
    const double a = 8 * pow(1.12, i);
    return a <= 300 ? floor(a * 10 + 0.5) / 10 : -1;
}

/* What lr_pdf_layout lays out for each length of the axis: the groups of
 * workload w in s, the grid's ends with room beside them (xlo, xhi_grid),
 * the marks' scale, and left_any (set where a layout labels a row's x at
 * its left). */
typedef struct lr_pdf {
    const ob_stats *s;
    int w;
    double xlo, xhi_grid, mark_scale;
    unsigned char *left_any;
} lr_pdf;

/* The PDF's labels along the lr axis laid out for an axis `axis`
 * characters long, into c: the x range, with the room at the right in
 * steps of a tenth of a decade (a new layout only every so often along
 * the ladder), the tics, and the k/n functions of each row of the strip
 * (KNR_row, KNL_row). */
static void lr_pdf_at(FILE *c, const lr_pdf *p, double axis)
{
    const ob_stats *s = p->s;
    double tics[LR_TICS_MAX];
    int labelled[LR_TICS_MAX], turned = 0;
    const lr_geom pdf = {axis, 1.0, 1.0, 0.5 * p->mark_scale, 0.3};
    double hi = lr_room_right(s, p->w, p->xlo, p->xhi_grid, &pdf);
    if (hi > p->xhi_grid) hi = p->xhi_grid * pow(10, ceil(log10(hi / p->xhi_grid) * 10 - 1e-9) / 10);
    fprintf(c, "        set xrange [%.6g:%.6g]\n", p->xlo, hi);
    const int n_tics = lr_tic_layout(s, p->w, p->xlo, hi, axis / LR_PDF_TIC_CH, tics, labelled, &turned);
    lr_tics_write(c, "        ", tics, labelled, n_tics, turned, 1);
    for (int k = 0, row = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != p->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        if (lr_sweep_marks(g)) {
            char right[2048], left[2048];
            lr_mark_labels(g, p->xlo, hi, &pdf, right, left, sizeof right);
            fprintf(c, "        KNR_%d(x) = %s\n        KNL_%d(x) = %s\n", row, right, row, left);
            p->left_any[row] |= strcmp(left, "0") != 0;
        }
        row++;
    }
}

/* Writes to o the layout lay, used on axes from `from` characters (0: any
 * shorter) up to `to` (-1: any longer). */
static void lr_pdf_range(FILE *o, const char *lay, double from, double to)
{
    if (from > 0 && to > 0) fprintf(o, "    if (LR_AXIS >= %g && LR_AXIS < %g) {\n", from, to);
    else if (from > 0) fprintf(o, "    if (LR_AXIS >= %g) {\n", from);
    else if (to > 0) fprintf(o, "    if (LR_AXIS < %g) {\n", to);
    else fprintf(o, "    if (1) {\n");
    fprintf(o, "%s    }\n", lay);
}

/* The layouts along the ladder of lengths (lr_pdf_ladder), those of one
 * layout merged, each for its range of lengths, into *blk (malloc'd);
 * *n_layouts how many. Returns 0, -1 out of memory (*blk NULL). */
static int lr_pdf_blocks(const lr_pdf *p, char **blk, int *n_layouts)
{
    size_t n_cur = 0, n_blk = 0;
    char *cur = NULL, *prev = NULL;
    *blk = NULL;
    FILE *o = open_memstream(blk, &n_blk);
    if (!o) return -1;
    double from = 0;
    int bad = 0;
    *n_layouts = 0;
    for (int i = 0; !bad; i++) {
        const double axis = lr_pdf_ladder(i);
        /* the layout for this length */
        FILE *c = axis > 0 ? open_memstream(&cur, &n_cur) : NULL;
        if (axis > 0 && !c) {
            bad = 1;
            break;
        }
        if (c) {
            lr_pdf_at(c, p, axis);
            if (fclose(c) != 0) bad = 1;
        }
        /* a layout of its own: the previous one's range ends here */
        if (!bad && prev && (!cur || strcmp(cur, prev))) {
            (*n_layouts)++;
            lr_pdf_range(o, prev, from, axis);
            from = axis;
        }
        if (!cur) break;
        if (prev && !strcmp(cur, prev)) {
            free(cur);
        } else {
            free(prev);
            prev = cur;
        }
        cur = NULL;
    }
    free(prev);
    free(cur);
    if (fclose(o) != 0) bad = 1;
    if (bad) {
        free(*blk);
        *blk = NULL;
        return -1;
    }
    return 0;
}

/* The start of the PDF's relayout, to o: the right margin the strip's
 * names take (name_len the longest; 0 without a strip), and a first
 * drawing to nowhere that measures the x axis where there are several
 * layouts (n_layouts), or the strip's second drawing (st) follows. */
static void lr_pdf_head(FILE *o, size_t name_len, int n_layouts, const lr_strip *st)
{
    fprintf(o, "    # the labels along the lr axis for this width%s\n",
            n_layouts > 1 ? ": measured on a first drawing, in characters" : "");
    if (name_len)
        fprintf(o, "    set rmargin %.0f   # the names of the strip's rows\n"
                   "    set ylabel YLABEL_SHORT   # not through \"diverged\" beside the strip\n",
                ceil(2 + (double)name_len));
    if (n_layouts > 1 || st->n_rows > 0) fprintf(o, "    set output '/dev/null'\n");
    if (n_layouts > 1)
        fprintf(o, "    replot\n"
                   "    LR_AXIS = (GPVAL_TERM_XMAX - GPVAL_TERM_XMIN) * GPVAL_TERM_SCALE / GPVAL_TERM_HCHAR\n");
}

/* The strip's rows for the PDF's height, to o (nothing without a strip):
 * its rows 1.2 lines apart and 0.7 of a line from the top and the data
 * (0.5 more for the triangles on a cap), all of it at most 45% of the
 * plot: the PNG's strip (div_frac of its height) scaled by LR_S, the
 * labels and marks on the y2 axis, the data's axis stopping that much
 * lower. */
static void lr_pdf_strip(FILE *o, const lr_strip *st)
{
    if (!(st->n_rows > 0 && st->data_top > st->bot)) return;
    fprintf(o, "    # the strip's rows for this height: measured on a second drawing, in lines of text\n"
               "    replot\n"
               "    LR_H = (GPVAL_TERM_YMAX - GPVAL_TERM_YMIN) * GPVAL_TERM_SCALE / GPVAL_TERM_VCHAR\n"
               "    LR_S = (1.4 + %g + %d * 1.2) / LR_H / %.6g\n"
               "    LR_S = LR_S * %.6g > 0.45 ? 0.45 / %.6g : LR_S\n"
               "    LR_F = LR_S * %.6g\n"
               "    set y2range [1 - 1 / LR_S:1]\n"
               "    set ylabel offset 0, -LR_F * LR_H / 2   # beside the data, clear of \"diverged\"\n",
            st->cap ? 0.5 : 0.0, st->n_rows - 1, st->div_frac, st->div_frac, st->div_frac, st->div_frac);
    if (st->logy)
        fprintf(o, "    set yrange [%.9g:%.9g * (%.9g / %.9g) ** (LR_F / (1 - LR_F))]\n", st->bot, st->data_top,
                st->data_top, st->bot);
    else
        fprintf(o, "    set yrange [%.9g:%.9g + (%.9g - %.9g) * LR_F / (1 - LR_F)]\n", st->bot, st->data_top,
                st->data_top, st->bot);
}

/* The PDF's labels along the lr axis, for whatever width it is drawn at:
 * the PNG's layout (lr_tic_layout, lr_mark_labels) counts on its 880 px,
 * where a column's PDF (3.3 inches, 6-point text) has room for about 47
 * characters, so its tic labels ran into each other and a k/n label at the
 * right end into the strip's names. Writes into sc->relayout, for the PDF
 * part (gp_write_pdf): the right margin the names take in the PDF's
 * characters (name_len the longest; 0 without a strip), a first drawing to
 * nowhere that measures the x axis (GPVAL_TERM_XMIN/XMAX over the
 * character's width, GPVAL_TERM_HCHAR), and for each range of lengths the
 * tics and the k/n functions laid out for it, along a ladder of lengths
 * (lr_pdf_ladder), those of one layout merged. Sets left_any[row] where a
 * layout labels a row's x at its left. Returns 0, -1 out of memory. */
static int lr_pdf_layout(script *sc, const ob_stats *s, int w, double xlo, double xhi_grid, size_t name_len,
                         double mark_scale, const lr_strip *st, unsigned char *left_any)
{
    const lr_pdf p = {s, w, xlo, xhi_grid, mark_scale, left_any};
    char *blk = NULL, *out = NULL;
    size_t n_out = 0;
    int n_layouts = 0;
    if (lr_pdf_blocks(&p, &blk, &n_layouts) != 0) return -1;
    FILE *o = open_memstream(&out, &n_out);
    if (!o) {
        free(blk);
        return -1;
    }
    lr_pdf_head(o, name_len, n_layouts, st);
    fputs(blk, o);
    free(blk);
    lr_pdf_strip(o, st);
    if (fclose(o) != 0) {
        free(out);
        return -1;
    }
    sc->relayout = out;
    return 0;
}

/* Median final losses above OFF_SCALE x the initial loss (an optimizer that
 * made things worse than any run started) would squeeze every other line
 * into the bottom of the lr figure: the y axis stops there, and such points
 * are marked at the top. */
#define OFF_SCALE 1.5

/* The lr figure of one workload as ob_fig_lr lays it out: its y values (r,
 * whose top is the cap where there is one) and x range, the strip of
 * divergence marks along the top and the legend, in the PNG's pixels
 * where they are measured. */
typedef struct lr_fig {
    int w;
    range r;               /* ob_fig_lr_yrange's, r.hi the cap where there is one */
    int any_div, any_conf; /* ob_fig_lr_yrange's */
    int n_lines, bands;    /* the lines, and whether their min-max bands are drawn */
    double cap;            /* the top of the data area when some lr's median lies above it, else NaN */
    int logy;
    int n_rows;            /* the strip's rows: the optimizers with a mark */
    size_t name_len;       /* the longest of their names */
    double plot_w;         /* the PNG's axis in pixels */
    double xlo, xhi_grid;  /* the grid's ends with room beside them */
    double xhi;            /* xhi_grid, or more for the last k/n label (lr_room_right) */
    int second;            /* a second line of lr labels */
    int n_key;             /* the legend's entries, */
    size_t key_len;        /* the longest of them */
    double plot_h;         /* the plot's height in the PNG */
    double row_px, mark_scale; /* the strip's rows apart, its marks' scale */
    double div_frac, name_px;  /* its share of the plot's height, its names' offset */
    double data_top;       /* the top of the data's axis (NaN: gnuplot's own axis) */
    double y_bot;          /* its bottom where data_top fixes the axis (lr_y_axis) */
} lr_fig;

/* The top of the lr figure's data area when some lr's median lies above
 * OFF_SCALE x the initial loss (and below it some data do), else NaN. */
static double lr_fig_cap(const ob_dataset *d, const ob_stats *s, int w, const range *r)
{
    const double init = initial_loss(d, w);
    double cap = NAN;
    if (init > 0 && r->lo < OFF_SCALE * init)
        for (int k = 0; k < s->n_g && isnan(cap); k++)
            for (int i = 0; s->g[k].wl == w && i < s->g[k].n_lr; i++)
                if (isfinite(s->g[k].lrs[i].med) && s->g[k].lrs[i].med > OFF_SCALE * init) cap = OFF_SCALE * init;
    return cap;
}

/* The lr figure's x axis: room beside the grid's ends (lf->xlo,
 * lf->xhi_grid), the strip's rows and their names' length, the PNG's axis
 * length, and room at its right end for the last k/n label of each row
 * (lf->xhi). xr: the swept lrs. */
static void lr_fig_xaxis(const ob_dataset *d, const ob_stats *s, const range *xr, lr_fig *lf)
{
    /* room beside the grid's ends: a factor 1.5 on a grid over decades, less
     * on a narrow one (0.001 to 0.0018), whose lrs would else crowd the
     * middle of the axis and their labels run into each other */
    double pad = xr->lo > 0 ? pow(xr->hi / xr->lo, 0.08) : 1.5;
    if (!(pad <= 1.5)) pad = 1.5;
    if (pad < 1.05) pad = 1.05;
    /* the strip's rows (an optimizer's with a mark) and their names' length */
    lf->n_rows = 0;
    lf->name_len = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        lf->n_rows++;
        if (strlen(d->opt_labels[g->opt]) > lf->name_len) lf->name_len = strlen(d->opt_labels[g->opt]);
    }
    /* the PNG's axis in pixels, right of it the names; room at its right
     * end for the last k/n label of each row */
    lf->plot_w = FIG_W - 100 - (lf->n_rows > 0 ? LR_CHAR_PX + lf->name_len * LR_SMALL_PX + 10 : 0);
    lf->xlo = xr->lo / pad, lf->xhi_grid = xr->hi * pad;
    const lr_geom png0 = {lf->plot_w, LR_SMALL_PX, LR_CHAR_PX, 7, 2};
    lf->xhi = lr_room_right(s, lf->w, lf->xlo, lf->xhi_grid, &png0);
}

/* The lr figure's title, axis labels, scales and x range, and sel(). */
static void lr_fig_header(FILE *f, const lr_fig *lf, const char *wq)
{
    char band_text[96];
    if (lf->bands) snprintf(band_text, sizeof band_text, "band: min to max where all seeds ended finite");
    else snprintf(band_text, sizeof band_text, "no min-max bands with %d optimizers", lf->n_lines);
    fprintf(f,
            "set title \"%s: final training loss vs learning rate\\n"
            "line: median over seeds (diverged = +inf); %s; "
            "circle: best lr\"\n"
            "set xlabel \"learning rate (log scale)\"\n"
            "set ylabel \"final loss, mean over the last 10%% of steps%s\"\n"
            "YLABEL_SHORT = \"final loss%s\"   # a column-wide PDF's (ob_gp_write_pdf)\n"
            "set logscale x\n"
            "set format x \"%%g\"\n"
            "set xrange [%.6g:%.6g]\n"
            "%s\n"
            "set y2range [0:1]\n"
            "unset y2tics\n"
            "sel(o) = strcol(1) eq \"%s\" && strcol(2) eq o\n",
            wq, band_text, lf->logy ? " (log scale)" : "", lf->logy ? " (log scale)" : "", lf->xlo, lf->xhi,
            lf->logy ? "set logscale y" : "unset logscale y", wq);
}

/* The legend's entries of its own, beside the optimizers' (lr_fig_plot;
 * lr_fig_key sizes the legend's columns by the longest). */
#define LR_KEY_DIV "x k/n at the top: k of n seeds diverged"
#define LR_KEY_NONFINITE " or ended non-finite"
#define LR_KEY_FRESH_DIV "square at the top: a fresh seed diverged"
#define LR_KEY_CAP "triangle: off the scale"
#define LR_KEY_CONF "fresh seeds at the best lr"

/* The lr figure's legend: its entries (the marks' explanations and the
 * optimizers) and their longest, laid out by ob_fig_key_fit. */
static void lr_fig_key(script *sc, const ob_dataset *d, const ob_stats *s, lr_fig *lf)
{
    const int any_div = lf->any_div;
    lf->n_key = (any_div & 1) + ((any_div >> 1) & 1) + !isnan(lf->cap) + lf->any_conf;
    /* the longest of the legend's own entries (lr_fig_plot) */
    lf->key_len = 0;
    if (any_div & 1) lf->key_len = strlen(LR_KEY_DIV) + (any_div & 4 ? strlen(LR_KEY_NONFINITE) : 0);
    if (any_div & 2 && strlen(LR_KEY_FRESH_DIV) > lf->key_len) lf->key_len = strlen(LR_KEY_FRESH_DIV);
    if (!isnan(lf->cap) && strlen(LR_KEY_CAP) > lf->key_len) lf->key_len = strlen(LR_KEY_CAP);
    if (lf->any_conf && strlen(LR_KEY_CONF) > lf->key_len) lf->key_len = strlen(LR_KEY_CONF);
    for (int k = 0; k < s->n_g; k++) {
        if (s->g[k].wl != lf->w) continue;
        char t[96];
        size_t len = strlen(d->opt_labels[s->g[k].opt]) + strlen(lr_key_note(&s->g[k], t, sizeof t));
        lf->n_key++;
        if (len > lf->key_len) lf->key_len = len;
    }
    ob_fig_key_fit(sc, lf->n_key, lf->key_len);
}

/* The strip along the top for the divergence marks: a row for each
 * optimizer that has one (those without get none, so the rows stay far
 * enough apart to read), named at its right in the optimizer's colour,
 * in a right margin as wide as the longest name. With many such rows
 * they close up (and their markers shrink) so that the strip takes at
 * most 45% of the plot, overlapping when they must (dozens of swept
 * configurations under a tall legend) rather than leaving the data no
 * room. The plot's height in the PNG: the title's two lines, tics and
 * labels above and below and 17 px per legend row (and per second line
 * of lr labels) off FIG_H, at least 120 px (a taller legend overflows). */
static void lr_fig_strip(FILE *f, lr_fig *lf)
{
    lf->plot_h = FIG_H - 142 - 17.0 * (lr_key_rows(lf->n_key, lf->key_len) + lf->second);
    if (lf->plot_h < 120) lf->plot_h = 120;
    lf->row_px = LR_ROW_PX, lf->mark_scale = 1, lf->div_frac = 0, lf->name_px = LR_CHAR_PX;
    if (lf->n_rows > 0) {
        const int n_rows = lf->n_rows;
        const double room = 0.45 * lf->plot_h - 2 * LR_STRIP_PAD - (isnan(lf->cap) ? 0 : 7);
        if (n_rows > 1 && (n_rows - 1) * lf->row_px > room) {
            lf->row_px = room / (n_rows - 1);
            lf->mark_scale = lf->row_px / LR_ROW_PX < 0.4 ? 0.4 : lf->row_px / LR_ROW_PX;
        }
        /* with a cap, room under the last row for the triangles on it */
        lf->div_frac = (2 * LR_STRIP_PAD + (isnan(lf->cap) ? 0 : 7) + (n_rows - 1) * lf->row_px) / lf->plot_h;
        /* the names a character right of the plot: the k/n labels stay
         * inside it (lr_mark_labels) */
        fprintf(f, "set rmargin %.0f   # the names of the strip's rows\n",
                ceil((lf->name_px + lf->name_len * LR_SMALL_PX + 10) / LR_CHAR_PX));
    }
}

/* The y axis stops at the top of the data, below the strip, or at the
 * cap: its tics and grid end there, so that no mark reads as a loss,
 * and a line across the plot (the cap's dotted one) parts the two; a
 * small "diverged" stands in the margin beside the strip. Without
 * either, gnuplot's own axis. Writes the axis and cut(), the values as
 * they are drawn (lf->data_top, lf->y_bot). */
static void lr_fig_yaxis(FILE *f, lr_fig *lf)
{
    const range *r = &lf->r;
    const int n_rows = lf->n_rows, logy = lf->logy;
    lf->data_top = NAN, lf->y_bot = 0;
    if (!isnan(lf->cap)) {
        lf->data_top = lf->cap;
    } else if (n_rows > 0 && !isnan(r->lo)) {
        /* a little room above the highest point, whose marker would else
         * touch the line */
        lf->data_top = logy ? r->hi * pow(r->hi / r->lo, 0.05)
                            : r->hi + (r->hi > r->lo ? 0.05 * (r->hi - r->lo) : 0.1 * fabs(r->hi));
        if (!(lf->data_top > r->hi)) lf->data_top = r->hi + 1;
    }
    if (!isnan(lf->data_top)) {
        /* with no strip, a little room above the cap for the triangles */
        lf->y_bot = lr_y_axis(f, logy, r->lo, lf->data_top, n_rows > 0 ? lf->div_frac : 0.06);
    } else if (n_rows > 0) {
        /* nothing finite to draw: an empty data area under the strip */
        lf->data_top = 1 - lf->div_frac;
        fprintf(f, "set yrange [0:1]\nunset ytics\nset lmargin 10   # room for \"diverged\" where no tics make it\n");
    } else {
        /* gnuplot's own axis, with room above and below the points (the best
         * lr's circle at a tic's value would sit on the border) */
        fprintf(f, "set offsets 0, 0, graph 0.05, graph 0.05\n");
        if (logy) fprintf(f, "%s", LOG_NOEXTEND);
    }
    if (!isnan(lf->cap)) {
        /* the lines and bands are cut at the cap (their triangles sit on its
         * dotted line) */
        fprintf(f, "CAP = %.9g\n"
                   "set arrow from graph 0, first CAP to graph 1, first CAP nohead dt 3 lc rgb \"#999999\" back\n"
                   "cut(v) = v > CAP && v < 1e308 ? CAP : v   # a value above the cap is drawn on it\n",
                lf->cap);
    } else {
        if (n_rows > 0)
            fprintf(f, "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead lc rgb \"#999999\" lw 1 back"
                       "   # the top of the data\n",
                    lf->data_top, lf->data_top);
        fprintf(f, "cut(v) = v\n");
    }
}

/* The strip's "diverged" beside it and its rows' names at its right. */
static void lr_fig_row_names(FILE *f, const ob_dataset *d, const ob_stats *s, const lr_fig *lf)
{
    if (lf->n_rows > 0)
        fprintf(f, "set label \"diverged\" at graph 0, second %.4f right offset char -0.8, 0 font \",8\" tc rgb \"#555555\"\n",
                1 - lf->div_frac / 2);
    for (int k = 0, row = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        char oq[512];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        fprintf(f, "set label \"%s\" at graph 1, second %.4f left offset char %.2f, 0 font \",8\" tc lt %d\n", oq,
                1 - (LR_STRIP_PAD + lf->row_px * row++) / lf->plot_h, lf->name_px / LR_CHAR_PX, g->opt + 1);
    }
}

/* The k/n labels of each row: at the right of their x where KNR_row is
 * true of its lr, at the left where KNL_row is (lr_mark_labels); a PDF
 * redefines them for its width (lr_pdf_layout). Sets left_any[row] where
 * a row has labels at the left. */
static void lr_fig_kn_labels(FILE *f, const ob_stats *s, const lr_fig *lf, unsigned char *left_any)
{
    const lr_geom png = {lf->plot_w, LR_SMALL_PX, LR_CHAR_PX, 7 * lf->mark_scale, 2};
    for (int k = 0, row = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        if (lr_sweep_marks(g)) {
            char right[2048], left[2048];
            lr_mark_labels(g, lf->xlo, lf->xhi, &png, right, left, sizeof right);
            fprintf(f, "KNR_%d(x) = %s\nKNL_%d(x) = %s\n", row, right, row, left);
            left_any[row] = strcmp(left, "0") != 0;
        }
        row++;
    }
}

/* The strip as the PDF's layout takes it (lr_pdf_layout). */
static lr_strip lr_fig_pdf_strip(const lr_fig *lf)
{
    const lr_strip strip = {lf->n_rows, lf->logy && !isnan(lf->data_top) && lf->n_rows > 0 && !isnan(lf->r.lo),
                            lf->y_bot, lf->data_top, lf->div_frac, isnan(lf->cap) ? 0 : 1};
    return strip;
}

/* The condition on lr_sweep.csv's lr (column 3) of group g's lrs with a
 * band between lrs without one (or the grid's end), a band of no width,
 * into iso (n bytes; "" where there are none). */
static size_t lr_isolated_bands(const ob_group *g, char *iso, size_t n)
{
    size_t n_iso = 0;
    iso[0] = 0;
    for (int i = 0; i < g->n_lr; i++) {
        const ob_lr_point *p = &g->lrs[i];
        if (!band_drawn(p) || !(p->max_finite > p->min_finite)) continue;
        if ((i > 0 && band_drawn(&g->lrs[i - 1])) || (i + 1 < g->n_lr && band_drawn(&g->lrs[i + 1]))) continue;
        if (n_iso + 40 < n)
            n_iso += (size_t)snprintf(iso + n_iso, n - n_iso, "%s$3 == %.17g", n_iso ? " || " : "", p->lr);
    }
    return n_iso;
}

/* Group g's band, its spread where the band has no width, its line and
 * its best lr's circle in the lr figure's plot command (oq: its label,
 * quoted; lt: its line type; first: the plot's first). */
static void lr_fig_plot_line(FILE *f, const ob_group *g, const lr_fig *lf, const char *oq, int lt, int first)
{
    char note[96];
    /* the band only where no seed diverged (column 6) or ended without a
     * finite loss (column 15): band_drawn; the x along the top says how
     * many of the seeds did either (columns 6 + 15 of column 5, the
     * finished ones) */
    if (lf->bands)
        fprintf(f,
                "%s  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 == 0 && $15 == 0 ? cut($8) : NaN):(sel(\"%s\") && $6 == 0 && $15 == 0 ? cut($9) : NaN) with filledcurves lt %d notitle",
                first ? "" : ", \\\n", oq, oq, lt);
    /* an lr with a band between lrs without one (or the grid's end) has
     * a band of no width: its spread is a bar, drawn before the line so
     * that the line's marker stays on top (the bar's blank point, pt -1,
     * would clear it) */
    char iso[1024];
    if (lf->bands ? lr_isolated_bands(g, iso, sizeof iso) : 0)
        fprintf(f,
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && (%s) ? cut($7) : NaN):"
                "(sel(\"%s\") && (%s) ? cut($8) : NaN):(sel(\"%s\") && (%s) ? cut($9) : NaN) "
                "with yerrorbars lt %d dt 1 pt -1 lw 2 notitle",
                oq, iso, oq, iso, oq, iso, lt);
    fprintf(f,
            "%s  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") ? cut($7) : NaN) with linespoints lt %d title \"%s%s\", \\\n"
            "  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $14 == 1 ? $7 : NaN) with points lt %d pt 6 ps (3 * PS) lw 2 notitle",
            lf->bands ? ", \\\n" : first ? "" : ", \\\n", oq, lt, oq, lr_key_note(g, note, sizeof note), oq, lt);
}

/* Group g's marks in the lr figure's plot command: the x's along the top
 * with their k/n labels (row: its row of the strip, at mark_y), triangles
 * on the cap, and the fresh seeds at the best lr (their bar, a square
 * along the top where one diverged). */
static void lr_fig_plot_marks(FILE *f, const ob_group *g, const lr_fig *lf, const char *oq, int lt, int row,
                              const unsigned char *left_any)
{
    const double mark_y = 1 - (LR_STRIP_PAD + lf->row_px * row) / lf->plot_h;
    /* the x's and their labels only where a seed diverged (or ended
     * without a finite loss): gnuplot 5.4 crashes on labels with no
     * point to draw */
    if (lr_sweep_marks(g)) {
        fprintf(f,
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 + $15 > 0 ? %.4f : NaN) axes x1y2 with points lt %d pt 2 ps (%.3g * PS) lw 3 notitle"
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 + $15 > 0 && KNR_%d($3) ? %.4f : NaN):(sprintf(\"%%d/%%d\", $6 + $15, $5)) "
                "axes x1y2 with labels left offset char 1, 0 font \",8\" tc lt %d notitle",
                oq, mark_y, lt, 2 * lf->mark_scale, oq, row, mark_y, lt);
        if (left_any[row])
            fprintf(f,
                    ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 + $15 > 0 && KNL_%d($3) ? %.4f : NaN):(sprintf(\"%%d/%%d\", $6 + $15, $5)) "
                    "axes x1y2 with labels right offset char -1, 0 font \",8\" tc lt %d notitle",
                    oq, row, mark_y, lt);
    }
    int above = 0;
    for (int i = 0; i < g->n_lr && !isnan(lf->cap); i++) above |= g->lrs[i].med > lf->cap && isfinite(g->lrs[i].med);
    if (above)
        fprintf(f,
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $7 > CAP && $7 < 1e308 ? CAP : NaN) with points lt %d "
                "pt 9 ps (2 * PS) notitle",
                oq, lt);
    if (g->confirm_lr == g->best_lr && g->n_confirm) {
        /* the fresh seeds' median at the best lr, the bar from the best to
         * the worst that did not diverge (confirm.csv: 7 median, 8 min, 29
         * max finite, 28 diverged); a diverged one is an x along the top */
        if (isfinite(g->conf_final.median))
            fprintf(f,
                    ", \\\n  'confirm.csv' skip 1 using 4:(sel(\"%s\") ? $7 : NaN):(sel(\"%s\") ? $8 : NaN):"
                    "(sel(\"%s\") ? (valid(29) ? $29 : $7) : NaN) with yerrorbars lt %d dt 1 pt 3 ps (2.5 * PS) lw 2 "
                    "notitle",
                    oq, oq, oq, lt);
        if (g->conf_n_diverged)
            fprintf(f,
                    ", \\\n  'confirm.csv' skip 1 using 4:(sel(\"%s\") && $28 > 0 ? %.4f : NaN) axes x1y2 "
                    "with points lt %d pt 4 ps (%.3g * PS) lw 2 notitle",
                    oq, mark_y, lt, 2.6 * lf->mark_scale);
    }
}

/* The lr figure's plot command: each optimizer's series, then the legend's
 * entries for the marks. */
static void lr_fig_plot(FILE *f, const ob_dataset *d, const ob_stats *s, const lr_fig *lf,
                        const unsigned char *left_any)
{
    fprintf(f, "plot \\\n");
    int first = 1, nth = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w) continue;
        char oq[512];
        /* its row of marks, as its name's above */
        const int row = lr_sweep_marks(g) || lr_conf_mark(g) ? nth++ : 0;
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        lr_fig_plot_line(f, g, lf, oq, g->opt + 1, first);
        lr_fig_plot_marks(f, g, lf, oq, g->opt + 1, row, left_any);
        first = 0;
    }
    if (lf->any_div & 1)
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 2 ps (2 * PS) lw 3 title \"%s%s\"", LR_KEY_DIV,
                lf->any_div & 4 ? LR_KEY_NONFINITE : "");
    if (lf->any_div & 2)
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 4 ps (2.6 * PS) lw 2 title \"%s\"", LR_KEY_FRESH_DIV);
    if (!isnan(lf->cap))
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 9 ps (2 * PS) title \"%s\"", LR_KEY_CAP);
    if (lf->any_conf)
        /* a legend entry alone (yerrorbars takes no function: keyentry, gnuplot 5.4) */
        fprintf(f, ", \\\n  keyentry with yerrorbars lc rgb \"black\" pt 3 ps (2.5 * PS) lw 2 title \"%s\"", LR_KEY_CONF);
    fprintf(f, "\n");
}

/* The lr figure's caption's note on the strip along the top ("" without). */
static const char *lr_fig_strip_note(int any_div)
{
    return any_div & 4 ? " In a strip along the top, above a line at the top of the data (the y tics stop "
                         "under it), each optimizer with marks has a row, named at its right: an x marks a learning "
                         "rate where at least one seed of the sweep diverged or finished without a finite loss "
                         "(every step of its last 10% skipped), labelled k/n: k of its n seeds did (x's too close "
                         "for a label each that read the same share one, at the end of their run; lr_sweep.csv has "
                         "every count, diverged and nonfinite apart); where half the seeds or more did the median "
                         "is infinite and the line has a gap." :
           any_div & 1 ? " In a strip along the top, above a line at the top of the data (the y tics stop "
                         "under it), each optimizer with marks has a row, named at its right: an x marks a learning "
                         "rate where at least one seed of the sweep diverged, labelled k/n: k of its n seeds "
                         "diverged (x's too close for a label each that read the same share one, at the end of "
                         "their run; lr_sweep.csv has every count); where half the seeds or more diverged the "
                         "median is infinite and the line has a gap." :
           any_div     ? " The strip along the top, above a line at the top of the data, has a row for each "
                         "optimizer with a square there, named at its right." : "";
}

/* The lr figure in the report, with its caption. */
static ob_status lr_fig_caption(ob_figures *out, ob_err *e, const char *stem, const lr_fig *lf)
{
    return ob_fig_add(out, e, stem, lf->w, "Learning-rate sensitivity",
                   "Final training loss (mean over the last 10%% of steps) against the learning rate, "
                   "one line per optimizer: the median over seeds, a diverged seed counting as +inf as in the "
                   "tables%s The open circle marks each optimizer's best lr, "
                   "which the legend gives (\"grid edge\": the smallest or largest lr tried, so the best may lie "
                   "beyond).%s%s%s%s A flat, wide valley means the optimizer is easy to tune.",
                   lf->bands ? ", with a band from the best to the worst seed where no seed diverged or ended without "
                               "a finite loss (where one did, the worst is +inf and the band is left out)."
                             : ". With this many optimizers their min-max bands, drawn over one another, would hide the "
                               "lines: they are left out (lr_sweep.csv has final_min and final_max at each lr).",
                   !isnan(lf->cap) ? " The y axis stops at 1.5 times the initial loss (the largest first loss of the "
                                     "workload's runs that did not diverge): a learning rate whose median final loss is "
                                     "finite but above it, worse than where any run started, is a triangle on the dotted "
                                     "line at that height, and the lines stop there; lr_sweep.csv has its value." : "",
                   lf->any_conf ? " The star is the median final loss of the fresh seeds run at the best lr after the "
                                  "sweep (its bar from the best to the worst of those that did not diverge; one that "
                                  "diverged is a square in the strip along the top, around the x of the sweep's seeds where "
                                  "those diverged there too): a star above its circle shows how much picking the lr on the "
                                  "sweep's own seeds flattered it." : "",
                   lr_fig_strip_note(lf->any_div),
                   lf->logy ? " Both axes are logarithmic." : " The x axis is logarithmic.");
}

/* The lr figure's script from its axes on (lf laid out up to its x axis):
 * the tics, legend, strip and y axis, the k/n labels and the PDF's layout,
 * and the plot command. Out of memory, it closes the script. */
static ob_status lr_fig_body(script *sc, const ob_dataset *d, const ob_stats *s, lr_fig *lf, ob_err *e)
{
    FILE *f = sc->f;
    double tics[LR_TICS_MAX];
    int labelled[LR_TICS_MAX], turned = 0;
    int n_tics = lr_tic_layout(s, lf->w, lf->xlo, lf->xhi, LR_AXIS_PNG, tics, labelled, &turned);
    lf->second = lr_tics_write(f, "", tics, labelled, n_tics, turned, 0);
    lr_fig_key(sc, d, s, lf);
    lr_fig_strip(f, lf);
    lr_fig_yaxis(f, lf);
    lr_fig_row_names(f, d, s, lf);
    unsigned char *left_any = calloc((size_t)lf->n_rows + 1, 1);
    if (!left_any) {
        ob_fig_script_close(sc, e);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    lr_fig_kn_labels(f, s, lf, left_any);
    const lr_strip strip = lr_fig_pdf_strip(lf);
    if (lr_pdf_layout(sc, s, lf->w, lf->xlo, lf->xhi_grid, lf->n_rows > 0 ? lf->name_len : 0, lf->mark_scale, &strip,
                      left_any) != 0) {
        free(left_any);
        ob_fig_script_close(sc, e);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    lr_fig_plot(f, d, s, lf, left_any);
    free(left_any);
    return OB_OK;
}

/* Final loss against the lr on workload w (lr_WORKLOAD, from
 * lr_sweep.csv and confirm.csv): a line per optimizer with its min-max
 * band, its best lr circled, the fresh seeds at the best lr, and a strip
 * along the top marking where seeds diverged. */
ob_status ob_fig_lr(const ob_dataset *d, const ob_stats *s, int w, const char *dir,
                 const char *slug, ob_figures *out, ob_err *e)
{
    lr_fig lf;
    memset(&lf, 0, sizeof lf);
    lf.w = w;
    range xr = {NAN, NAN};
    int any;
    lf.r = ob_fig_lr_yrange(s, w, &any, &lf.any_div, &lf.any_conf);
    int most_lrs = 0;
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == w) {
            for (int i = 0; i < s->g[k].n_lr; i++) ob_fig_range_add(&xr, s->g[k].lrs[i].lr);
            if (s->g[k].n_lr > most_lrs) most_lrs = s->g[k].n_lr;
            lf.n_lines++;
        }
    if (!any) return OB_OK;
    char stem[300], wq[512];
    snprintf(stem, sizeof stem, "lr_%s", slug);
    /* one lr per optimizer (one for all, or each at its own default): points
     * side by side would pass for a sensitivity */
    if (most_lrs <= 1)
        return ob_fig_add_skipped(out, e, stem, w, "Learning-rate sensitivity",
                           "Not drawn: each optimizer ran at one learning rate, so there is no sensitivity to show; "
                           "the table above has each optimizer's final loss there (run --lrs with several values "
                           "to measure it; where a search drew each configuration's lr, --lrs LO..HI with --trials, "
                           "the figure of final loss against the searched lr draws every configuration).");
    ob_gp_str(d->wl_labels[w], wq, sizeof wq);
    lf.bands = lf.n_lines <= BAND_MAX_LINES; /* as on the loss figure */
    lf.cap = lr_fig_cap(d, s, w, &lf.r);
    if (!isnan(lf.cap)) lf.r.hi = lf.cap;
    lf.logy = ob_fig_spans_decades(&lf.r);
    lr_fig_xaxis(d, s, &xr, &lf);
    script sc;
    OB_TRY(ob_fig_script_open(&sc, dir, stem, "final loss vs learning rate (sensitivity)",
                       "lr_sweep.csv (workload, optimizer, lr, runs, finished, diverged, "
                       "final_median, final_min, final_max, ..., is_best in column 14, nonfinite in 15)", e));
    lr_fig_header(sc.f, &lf, wq);
    OB_TRY(lr_fig_body(&sc, d, s, &lf, e));
    OB_TRY(ob_fig_script_close(&sc, e));
    return lr_fig_caption(out, e, stem, &lf);
}
