/* plots/latex.c - summary.tex (see latex.h). */
#include "plots/latex.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/export.h"
#include "workloads/workload.h"

void ob_latex_escape(const char *s, char *out, size_t n)
{
    size_t k = 0;
    if (n == 0) return;
    for (; *s; s++) {
        const char *rep = NULL;
        char one[3] = {0};
        switch (*s) {
        case '\\': rep = "\\textbackslash{}"; break;
        case '~': rep = "\\textasciitilde{}"; break;
        case '^': rep = "\\textasciicircum{}"; break;
        case '&': case '%': case '$': case '#': case '_': case '{': case '}':
            one[0] = '\\';
            one[1] = *s;
            rep = one;
            break;
        case '\n': case '\r': case '\t':
            one[0] = ' ';
            rep = one;
            break;
        default:
            one[0] = *s;
            rep = one;
        }
        size_t l = strlen(rep);
        if (k + l >= n) break;
        memcpy(out + k, rep, l);
        k += l;
    }
    out[k] = '\0';
}

/* A number for a table cell: `digits` significant digits, "$m \times 10^{e}$"
 * for exponent forms, $\infty$ for +inf (diverged), -- when not measured.
 * A measured value (measured != 0) keeps its trailing zeros, so a column's
 * numbers show the same precision (3.700 beside 3.748); a setting (an lr,
 * 0.001) does not. */
static const char *tnum(double v, int digits, int measured, char *buf, size_t n)
{
    if (isnan(v)) return "--";
    if (isinf(v)) return v > 0 ? "$\\infty$" : "$-\\infty$";
    char t[32];
    snprintf(t, sizeof t, measured ? "%#.*g" : "%.*g", digits > 9 ? 9 : digits, v);
    char *x = strchr(t, 'e');
    /* %#g keeps the point of a whole number's digits (2837.): not in print */
    char *dot = strchr(t, '.');
    if (dot && (dot[1] == '\0' || dot + 1 == x)) memmove(dot, dot + 1, strlen(dot + 1) + 1), x = x ? x - 1 : NULL;
    if (!x) {
        snprintf(buf, n, "%s", t);
        return buf;
    }
    *x = '\0';
    int ex = atoi(x + 1);
    if (!strcmp(t, "1") || !strcmp(t, "1.")) snprintf(buf, n, "$10^{%d}$", ex);
    else snprintf(buf, n, "$%s \\times 10^{%d}$", t, ex);
    return buf;
}

/* A label for \label{}: letters, digits and '-'. */
static void slug(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) out[k++] = (char)c;
        else if (k > 0 && out[k - 1] != '-') out[k++] = '-';
    }
    while (k > 0 && out[k - 1] == '-') k--;
    out[k] = '\0';
}

/* The interval of a spread's median: the order statistics that hold it with
 * probability 95% or more ([min, max] up to 8 seeds, which hold it with
 * 50% to 99%), [min, max] itself for one seed. */
static double median_lo(const ob_spread *s) { return isnan(s->ci_lo) ? s->min : s->ci_lo; }
static double median_hi(const ob_spread *s) { return isnan(s->ci_hi) ? s->max : s->ci_hi; }

/* Do the intervals of two spreads' medians overlap? Then these seeds do not
 * tell the medians apart (a diverged seed's +inf included), as time to
 * target's ranks do not. */
static int spreads_overlap(const ob_spread *a, const ob_spread *b)
{
    return a->n > 0 && b->n > 0 && !isnan(a->median) && !isnan(b->median) && median_lo(a) <= median_hi(b) &&
           median_lo(b) <= median_hi(a);
}

/* The fewest seeds two groups must share for summary.tex to compare them
 * seed by seed: an exact two-sided sign test cannot reach 5% with fewer (5
 * of 5: p = 1/16). */
#define TEX_PAIRED_MIN 6

/* Do the seeds tell group k apart from group j, a lowest of its workload
 * (conf: by their confirmation runs)? Seed by seed where they share
 * TEX_PAIRED_MIN seeds or more (*by_pairs = 1): apart when j is lower on
 * so many of them that an exact two-sided sign test puts it apart at 5% (a
 * diverged seed is the higher loss, ties left out); by the intervals of
 * their medians otherwise (*by_pairs = 0). */
static ob_status told_apart(const ob_dataset *d, const ob_stats *s, int j, int k, int conf, int *apart,
                            int *by_pairs, ob_err *e)
{
    ob_paired pr;
    OB_TRY(ob_stats_pair_neighbours(d, s, j, k, conf, &pr, e));
    *by_pairs = pr.n >= TEX_PAIRED_MIN;
    if (*by_pairs) *apart = pr.a_lower > pr.b_lower && pr.p_sign < 0.05;
    else *apart = !spreads_overlap(conf ? &s->g[j].conf_final : &s->g[j].final,
                                   conf ? &s->g[k].conf_final : &s->g[k].final);
    return OB_OK;
}

/* "median [min, max]" of a spread; the median bold when asked. */
static void spread_cell(const ob_spread *sp, int bold, char *buf, size_t n)
{
    char a[64], b[64], c[64];
    const char *med = tnum(sp->median, 4, 1, a, sizeof a);
    if (sp->n == 0 || isnan(sp->median)) {
        snprintf(buf, n, "--");
        return;
    }
    if (sp->n == 1) snprintf(buf, n, bold ? "\\textbf{%s}" : "%s", med);
    else
        snprintf(buf, n, bold ? "\\textbf{%s} {\\scriptsize [%s, %s]}" : "%s {\\scriptsize [%s, %s]}", med,
                 tnum(sp->min, 4, 1, b, sizeof b), tnum(sp->max, 4, 1, c, sizeof c));
}

/* The swept values of group g's configuration ("beta2=0.95"), "--" with one. */
static const char *config_of(const ob_dataset *d, const ob_group *g, int n_configs)
{
    const char *c = n_configs > 1 ? ob_dataset_opt_config(d, g->opt) : NULL;
    return c ? c : "--";
}

/* Workload w's optimizers at their best configurations, where sweeps made
 * several of some (ob_stats_best_configs); nothing otherwise. */
static void best_config_table(const ob_dataset *d, const ob_stats *s, int w, FILE *f)
{
    ob_best_config rows[256];
    int swept = 0;
    const int n = ob_stats_best_configs(d, s, w, rows, 256, &swept);
    if (!swept) return;
    int any_conf = 0;
    for (int i = 0; i < n; i++) any_conf |= !isnan(s->g[rows[i].best].confirm_lr);
    char wl[512], lab[256];
    ob_latex_escape(d->wl_labels[w], wl, sizeof wl);
    slug(d->wl_labels[w], lab, sizeof lab);
    fprintf(f, "\\begin{table}[htbp]\n  \\centering\n  \\footnotesize\n  \\setlength{\\tabcolsep}{4pt}\n");
    fprintf(f,
            "  \\caption{%s: each optimizer at its best configuration of the swept hyperparameters, the one with "
            "the lowest median final training loss at its best learning rate (median over seeds with [min, max]), "
            "beside its worst configuration's median. Chosen on the sweep's own seeds, so the best is "
            "optimistic%s.}\n  \\label{tab:optbench-%s-configs}\n  \\smallskip\n",
            wl, any_conf ? "; confirmed: the median of fresh seeds at that configuration's best learning rate" : "",
            lab[0] ? lab : "workload");
    fprintf(f, "  \\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%%\n");
    fprintf(f, "  \\begin{tabular}{@{}llrrlr%s@{}}\n    \\toprule\n", any_conf ? "r" : "");
    fprintf(f, "    Optimizer & Best configuration & Best lr & Final loss & Worst configuration & Final loss%s "
               "\\\\\n    \\midrule\n",
            any_conf ? " & Confirmed" : "");
    for (int i = 0; i < n; i++) {
        const ob_group *g = &s->g[rows[i].best], *bad = &s->g[rows[i].worst];
        char opt[256], cb[512], cw[512], a[64], cell[256];
        ob_latex_escape(d->opt_names[g->opt], opt, sizeof opt);
        /* none with a finite median: none is the best or the worst */
        const int none = g->best < 0 || !isfinite(g->final.median);
        ob_latex_escape(config_of(d, g, none ? 1 : rows[i].n_configs), cb, sizeof cb);
        ob_latex_escape(config_of(d, bad, none ? 1 : rows[i].n_configs), cw, sizeof cw);
        spread_cell(&g->final, 0, cell, sizeof cell);
        fprintf(f, "    %s & %s & %s & %s & ", opt, cb, g->best >= 0 ? tnum(g->best_lr, 3, 0, a, sizeof a) : "--",
                g->best >= 0 ? cell : ob_group_no_best(g));
        if (rows[i].n_configs < 2 || none) fprintf(f, "-- & --");
        else fprintf(f, "%s & %s", cw, bad->best >= 0 ? tnum(bad->final.median, 4, 1, a, sizeof a) : ob_group_no_best(bad));
        if (any_conf)
            fprintf(f, " & %s", isnan(g->confirm_lr) || g->confirm_lr != g->best_lr
                                    ? "--"
                                    : tnum(g->conf_final.median, 4, 1, a, sizeof a));
        fprintf(f, " \\\\\n");
    }
    fprintf(f, "    \\bottomrule\n  \\end{tabular}}\n\\end{table}\n\n");
}

/* An area (of a performance profile) for a cell: three decimals, as the
 * report's tables give it; -- when there is none. */
static const char *area_text(double v, char *buf, size_t n)
{
    if (isnan(v)) return "--";
    snprintf(buf, n, "%.3f", v);
    return buf;
}

/* A share of resamples for a cell: "34\%", "under 1\%" and "over 99\%"
 * where rounding would say 0 or 100 of a share that is not. */
static const char *share_text(double v, char *buf, size_t n)
{
    if (v > 0 && v < 0.005) return "under 1\\%";
    if (v < 1 && v > 0.995) return "over 99\\%";
    snprintf(buf, n, "%.0f\\%%", 100 * v);
    return buf;
}

/* The performance profile's areas, by rank (ob_stats_profile_rank), with
 * their bootstrap over seeds where there is one (ob_stats.n_boot); none
 * where no workload entered the profile. */
static void profile_table(const ob_dataset *d, const ob_stats *s, FILE *f)
{
    if (s->profile_workloads == 0) return;
    fprintf(f, "\\begin{table}[htbp]\n  \\centering\n  \\footnotesize\n");
    fprintf(f,
            "  \\caption{Performance profile (Dolan and Mor\\'e; AlgoPerf's score): the area under the fraction of "
            "workloads on which an optimizer's %s to the %starget is within a factor $\\tau$ of the fastest, for "
            "$\\tau$ in $[1, %g]$, normalized to $[0, 1]$ (1 = fastest on every workload); over the %d of %d "
            "workloads whose target some optimizer reached. An optimizer not run on a workload counts as not "
            "reaching it there.%s}\n  \\label{tab:optbench-profile}\n  \\smallskip\n",
            s->profile_by_steps ? "number of steps" : "training time", s->profile_heldout ? "held-out " : "",
            s->tau_max, s->profile_workloads, d->n_wl,
            !s->n_boot ? ""
            : s->boot_seeds <= 5
                ? " The seeds' noise: the middle 95\\% of its areas over " OB_PROFILE_BOOT_TEXT " resamples of the "
                  "seeds (paired across optimizers; targets, learning rates and step times held), and the share of "
                  "resamples in which its area was the largest. With 5 seeds or fewer the resamples are few sets "
                  "of seeds: the interval is coarse and narrower than the noise."
                : " The seeds' noise: the middle 95\\% of its areas over " OB_PROFILE_BOOT_TEXT " resamples of the "
                  "seeds (paired across optimizers; targets, learning rates and step times held), and the share of "
                  "resamples in which its area was the largest.");
    fprintf(f, "  \\begin{tabular}{@{}rl%s@{}}\n    \\toprule\n", s->n_boot ? "rcrr" : "rr");
    fprintf(f, "    Rank & Optimizer & Area%s & Workloads won \\\\\n    \\midrule\n",
            s->n_boot ? " & 95\\% (seeds) & Largest in" : "");
    for (int r = 1; r <= d->n_opt; r++)
        for (int op = 0; op < d->n_opt; op++) {
            if (ob_stats_profile_rank(s, op) != r) continue;
            char opt[256], a[64], b[64], c[64];
            ob_latex_escape(d->opt_labels[op], opt, sizeof opt);
            fprintf(f, "    %d & %s & %s", r, opt, area_text(s->area[op], a, sizeof a));
            if (s->n_boot)
                fprintf(f, " & [%s, %s] & %s", area_text(s->area_lo[op], a, sizeof a),
                        area_text(s->area_hi[op], b, sizeof b), share_text(s->area_first[op], c, sizeof c));
            fprintf(f, " & %.0f of %d \\\\\n", isnan(s->rho[op]) ? 0 : s->rho[op] * s->profile_workloads,
                    s->profile_workloads);
        }
    fprintf(f, "    \\bottomrule\n  \\end{tabular}\n\\end{table}\n\n");
}

/* The tuned optimizers, where some optimizer has several configurations
 * (ob_stats.n_tuned): on each workload the median best final loss of one
 * configuration drawn at random and of all of them (the tuning budget's
 * ends, ob_stat_best_of_k), and the area of the tuned optimizers' profile. */
static ob_status tuning_table(const ob_dataset *d, const ob_stats *s, FILE *f, ob_err *e)
{
    if (s->n_tuned == 0) return OB_OK;
    double *v = malloc(((size_t)d->n_opt + 1) * sizeof *v);
    if (!v) return ob_fail(e, OB_ERR_NOMEM, "out of memory writing the LaTeX tables");
    fprintf(f, "\\begin{table}[htbp]\n  \\centering\n  \\footnotesize\n  \\setlength{\\tabcolsep}{4pt}\n");
    fprintf(f,
            "  \\caption{Tuning budget: on each workload, the median over random draws of the best final training "
            "loss among $k$ configurations of the optimizer (each at its best learning rate, median over seeds), "
            "for $k = 1$ (an untuned draw) and $k = n$, the $n$ configurations run (the best of $n$ draws with "
            "replacement; Dodge et al., 2019; the median of a draw from $n$ values is the $\\lceil n/2 \\rceil$-th "
            "smallest, so with an even $n$ the lower of the two middle ones: with 2 configurations, $k = 1$ shows "
            "the better of them); and the area under the performance profile of the tuned optimizers, "
            "each at its fastest configuration on each workload (%s to the %starget; 1 = fastest everywhere)%s. "
            "The more configurations an optimizer had, the more its best was helped by luck.}\n"
            "  \\label{tab:optbench-tuning}\n  \\smallskip\n",
            s->profile_by_steps ? "steps" : "time", s->profile_heldout ? "held-out " : "",
            s->n_boot ? ", with the middle 95\\% of its areas over " OB_PROFILE_BOOT_TEXT
                        " resamples of the seeds (paired across optimizers; targets, learning rates and step times "
                        "held: the seeds' noise alone)"
                      : "");
    fprintf(f, "  \\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%%\n");
    fprintf(f, "  \\begin{tabular}{@{}lr");
    for (int w = 0; w < d->n_wl; w++) fprintf(f, "rr");
    fprintf(f, "r%s@{}}\n    \\toprule\n    &", s->n_boot ? "c" : "");
    for (int w = 0; w < d->n_wl; w++) {
        char wl[512];
        ob_latex_escape(d->wl_labels[w], wl, sizeof wl);
        fprintf(f, " & \\multicolumn{2}{c}{%s}", wl);
    }
    fprintf(f, " &%s \\\\\n   ", s->n_boot ? " &" : "");
    for (int w = 0; w < d->n_wl; w++) fprintf(f, " \\cmidrule(lr){%d-%d}", 3 + 2 * w, 4 + 2 * w);
    fprintf(f, "\n    Optimizer & $n$");
    for (int w = 0; w < d->n_wl; w++) fprintf(f, " & $k = 1$ & $k = n$");
    fprintf(f, " & Profile area%s \\\\\n    \\midrule\n", s->n_boot ? " & 95\\% (seeds)" : "");
    for (int i = 0; i < s->n_tuned; i++) {
        char opt[256], a[64], b[64];
        ob_latex_escape(d->opt_names[s->tuned_first[i]], opt, sizeof opt);
        fprintf(f, "    %s & %d", opt, s->tuned_configs[i]);
        for (int w = 0; w < d->n_wl; w++) {
            const int n = ob_stats_trial_losses(d, s, w, i, v);
            if (n == 0) fprintf(f, " & -- & --");
            else fprintf(f, " & %s & %s", tnum(ob_stat_best_of_k(v, n, 1, 0.5), 4, 1, a, sizeof a),
                         tnum(ob_stat_best_of_k(v, n, n, 0.5), 4, 1, b, sizeof b));
        }
        fprintf(f, " & %s", area_text(s->tuned_area[i], a, sizeof a));
        if (s->n_boot)
            fprintf(f, " & [%s, %s]", area_text(s->tuned_area_lo[i], a, sizeof a),
                    area_text(s->tuned_area_hi[i], b, sizeof b));
        fprintf(f, " \\\\\n");
    }
    fprintf(f, "    \\bottomrule\n  \\end{tabular}}\n\\end{table}\n\n");
    free(v);
    return OB_OK;
}

/* Workload w's table of the optimizers at their best lr, as its steps write
 * it: the ranks, and what the caption, the header and the rows share. */
typedef struct ranked_table {
    const ob_dataset *d;
    const ob_stats *s;
    const int *rank, *crank; /* the sweep's ranks and the confirmation's */
    int w;
    int n_conf;              /* the optimizers confirmed at their best lr */
    int smin, smax, cmin, cmax; /* the fewest and most seeds at a best lr, and fresh seeds */
    int has_metric, edge, unmeasured;
    char wl[512], lab[256], metric[128], seeds[64], cseeds[64];
    char apart[512];         /* what the bold does not say, for the caption */
    unsigned char *bold, *cbold; /* (n_g,) a median in bold: the sweep's, the confirmation's (ranked_bold) */
    int by_pairs, by_ranges; /* medians told from the lowest's seed by seed, by their intervals */
} ranked_table;

/* What the workload's groups hold: confirmed ones, their seeds and fresh
 * seeds, a held-out metric, a best lr at the grid's edge, an lr range not
 * measured. */
static void ranked_survey(ranked_table *t)
{
    const ob_stats *s = t->s;
    int first = 1, cfirst = 1;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != t->w) continue;
        t->has_metric |= !isnan(g->eval_metric.median);
        t->edge |= g->best >= 0 && g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1);
        t->unmeasured |= g->width_unmeasured;
        /* an optimizer that diverged at every lr has no seeds at a best lr */
        if (g->final.n > 0) {
            if (first || g->final.n < t->smin) t->smin = g->final.n;
            if (first || g->final.n > t->smax) t->smax = g->final.n;
            first = 0;
        }
        if (g->n_confirm > 0 && g->confirm_lr == g->best_lr) {
            t->n_conf++;
            if (cfirst || g->conf_final.n < t->cmin) t->cmin = g->conf_final.n;
            if (cfirst || g->conf_final.n > t->cmax) t->cmax = g->conf_final.n;
            cfirst = 0;
        }
    }
}

/* Which medians are in bold: a lowest (rank 1; equal lowest medians share
 * it) and every other ranked one that the seeds do not tell apart from a
 * lowest (told_apart), in the sweep's ranking and the confirmation's. */
static ob_status ranked_bold(ranked_table *t, ob_err *e)
{
    const ob_stats *s = t->s;
    for (int conf = 0; conf < 2; conf++) {
        const int *rank = conf ? t->crank : t->rank;
        unsigned char *bold = conf ? t->cbold : t->bold;
        for (int k = 0; k < s->n_g; k++) {
            bold[k] = s->g[k].wl == t->w && rank[k] == 1;
            if (s->g[k].wl != t->w || rank[k] <= 1) continue;
            for (int j = 0; j < s->n_g && !bold[k]; j++) {
                if (s->g[j].wl != t->w || rank[j] != 1) continue;
                int apart = 0, by_pairs = 0;
                OB_TRY(told_apart(t->d, s, j, k, conf, &apart, &by_pairs, e));
                bold[k] = !apart;
                if (by_pairs) t->by_pairs++;
                else t->by_ranges++;
            }
        }
    }
    return OB_OK;
}

/* The texts of the caption: the workload's label, the metric's name, the
 * seeds and fresh seeds, and the label for \label{}. */
static void ranked_texts(ranked_table *t)
{
    const int w = t->w;
    const ob_workload_def *wdef = ob_workload_find(t->d->wl_names[w]);
    ob_latex_escape(t->d->wl_labels[w], t->wl, sizeof t->wl);
    slug(t->d->wl_labels[w], t->lab, sizeof t->lab);
    ob_latex_escape(wdef && wdef->metric_name ? wdef->metric_name : "metric", t->metric, sizeof t->metric);
    if (t->smin == t->smax) snprintf(t->seeds, sizeof t->seeds, "%d seed%s", t->smin, t->smin == 1 ? "" : "s");
    else snprintf(t->seeds, sizeof t->seeds, "%d to %d seeds", t->smin, t->smax);
    if (t->cmin == t->cmax)
        snprintf(t->cseeds, sizeof t->cseeds, "%d fresh seed%s", t->cmin, t->cmin == 1 ? "" : "s");
    else snprintf(t->cseeds, sizeof t->cseeds, "%d to %d fresh seeds", t->cmin, t->cmax);
}

/* What the bold does not tell: ranges apart are no test with few seeds, and
 * a diverged seed of the lowest makes every range overlap its. */
static void ranked_apart(ranked_table *t)
{
    const ob_stats *s = t->s;
    const int smin = t->smin;
    if (!t->by_ranges) return; /* every median told seed by seed */
    /* ranges apart are no test either: two optimizers alike, n seeds
     * each, have ranges apart with probability 2 / C(2n, n) (1/3 at 2
     * seeds, 1/10 at 3), more often among several */
    if (smin >= 2 && smin <= 5) {
        double c = 1;
        for (int i = 1; i <= smin; i++) c = c * (smin + i) / i;
        snprintf(t->apart, sizeof t->apart, " (nor are ranges apart a test: with %d seeds two optimizers alike have "
                 "ranges apart 1 time in %.0f, and more often among several; paired.csv compares neighbours "
                 "seed by seed)", smin, c / 2);
    }
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == t->w && t->rank[k] == 1 && s->g[k].final.n > 1 && isinf(median_hi(&s->g[k].final))) {
            const size_t l = strlen(t->apart);
            snprintf(t->apart + l, sizeof t->apart - l, "; a diverged seed makes the lowest's interval unbounded, so "
                     "every optimizer whose interval reaches the lowest's lower end is in bold");
            break;
        }
}

/* The table's opening and its caption, with its label. */
static void ranked_caption(const ranked_table *t, FILE *f)
{
    const ob_stats *s = t->s;
    /* the rule of the bold: seed by seed, by the intervals, or both */
    static const char ranges[] = "whose interval overlaps the lowest's, which these seeds do not tell apart from it "
                                 "(the interval: [min, max] up to 8 seeds, from 9 the order statistics that hold "
                                 "the median with probability 95\\% or more)";
    static const char pairs[] = "these seeds do not tell apart from it seed by seed (a seed's runs share "
                                "initialization and data order; apart: the lowest lower on so many of the seeds "
                                "both ran that an exact two-sided sign test rejects a tie at 5\\%, a diverged seed "
                                "counting as the higher loss)";
    char rule[1600];
    if (!t->by_pairs) snprintf(rule, sizeof rule, "%s%s", ranges, t->apart);
    else if (!t->by_ranges) snprintf(rule, sizeof rule, "%s", pairs);
    else
        snprintf(rule, sizeof rule, "%s; with fewer than %d seeds in common, every median %s%s", pairs,
                 TEX_PAIRED_MIN, ranges, t->apart);
    fprintf(f, "\\begin{table}[htbp]\n  \\centering\n  \\footnotesize\n  \\setlength{\\tabcolsep}{4pt}\n");
    fprintf(f,
            "  \\caption{%s: final training loss of each optimizer at its best learning rate, median over "
            "%s with [min, max], ranked by the median (equal medians share a rank); in bold the lowest and every "
            "median %s; held-out loss%s%s (medians); "
            "lr range: decades of learning rate whose median final loss is within %.3g\\%% of %s "
            "($\\geq$: it reaches the edge of the grid); diverged: runs that diverged, of the runs over every "
            "lr.%s",
            t->wl, t->seeds, rule, t->has_metric ? " and " : "", t->has_metric ? t->metric : "", 100 * s->tol,
            s->tol_of_progress ? "the progress from the loss before training to the best" : "the best",
            t->edge ? " $^\\dagger$: the best lr is the smallest or the largest of the grid, so the best may lie "
                      "beyond it." : "");
    if (t->unmeasured)
        fprintf(f, " $^\\ddagger$: lr range not measured: the best lr is at the edge of the grid and a seed "
                   "diverged at the lr next to it (or the grid has one lr, or its other lrs have no finished run "
                   "yet, or the tolerance is 0: --tol 0 or a best median loss of 0%s).",
                s->tol_of_progress ? ", or the best is not below the loss before training" : "");
    if (t->n_conf)
        fprintf(f, " Confirmed: the median final loss of %s run at the best learning rate after the sweep, "
                   "free of the optimism of picking it on the sweep's own seeds (in bold as above).", t->cseeds);
    else
        fprintf(f, " The median at the best learning rate is optimistic: the seeds that picked that rate "
                   "also score it.");
    /* \smallskip: article's captions above a table leave no room before its rule */
    fprintf(f, "}\n  \\label{tab:optbench-%s}\n  \\smallskip\n", t->lab[0] ? t->lab : "workload");
}

/* The tabular's columns and header rows. */
static void ranked_header(const ranked_table *t, FILE *f)
{
    /* scaled down to the text width only when wider (long configuration labels) */
    fprintf(f, "  \\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%%\n");
    fprintf(f, "  \\begin{tabular}{@{}rllrr%sr%s@{}}\n    \\toprule\n", t->has_metric ? "rr" : "r",
            t->n_conf ? "r" : "");
    if (t->has_metric) {
        fprintf(f, "    & & & & \\multicolumn{2}{c}{Held-out} & & %s \\\\\n    \\cmidrule(lr){5-6}\n",
                t->n_conf ? "&" : "");
        fprintf(f, "    & Optimizer & Best lr & Final loss & loss & %s & lr range & Diverged%s \\\\\n    \\midrule\n",
                t->metric, t->n_conf ? " & Confirmed" : "");
    } else {
        fprintf(f, "    & Optimizer & Best lr & Final loss & Held-out loss & lr range & Diverged%s \\\\\n"
                   "    \\midrule\n",
                t->n_conf ? " & Confirmed" : "");
    }
}

/* Group k's confirmed median, in bold as the sweep's, where the table has
 * the column. */
static void ranked_confirmed(const ranked_table *t, int k, FILE *f)
{
    const ob_group *g = &t->s->g[k];
    char a[64];
    if (g->n_confirm > 0 && g->confirm_lr == g->best_lr) {
        fprintf(f, t->cbold[k] ? " & \\textbf{%s}" : " & %s", tnum(g->conf_final.median, 4, 1, a, sizeof a));
        if (g->conf_n_diverged)
            fprintf(f, " {\\scriptsize (%d of %d diverged)}", g->conf_n_diverged, g->n_confirm);
    } else
        fprintf(f, " & --");
}

/* Group k's row: rank, optimizer, best lr, final loss, held-out values, lr
 * range, diverged runs and the confirmed median. */
static void ranked_row(const ranked_table *t, int k, FILE *f)
{
    const int *rank = t->rank;
    const ob_group *g = &t->s->g[k];
    char opt[512], a[64], cell[256];
    ob_latex_escape(t->d->opt_labels[g->opt], opt, sizeof opt);
    if (rank[k] > 0) fprintf(f, "    %d & %s & ", rank[k], opt);
    else fprintf(f, "    -- & %s & ", opt);
    if (g->best < 0) fprintf(f, "none (%s) & ", ob_group_no_best(g));
    else fprintf(f, "%s%s & ", tnum(g->best_lr, 3, 0, a, sizeof a),
                 g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1) ? "$^\\dagger$" : "");
    spread_cell(&g->final, t->bold[k], cell, sizeof cell);
    fprintf(f, "%s", cell);
    if (g->best >= 0 && g->lrs[g->best].n_diverged)
        fprintf(f, " {\\scriptsize (%d of %d diverged)}", g->lrs[g->best].n_diverged,
                g->lrs[g->best].n_finished);
    fprintf(f, " & ");
    fprintf(f, "%s & ", tnum(g->eval_loss.median, 4, 1, a, sizeof a));
    if (t->has_metric) fprintf(f, "%s & ", tnum(g->eval_metric.median, 4, 1, a, sizeof a));
    if (g->width_unmeasured) fprintf(f, "--$^\\ddagger$");
    else if (isnan(g->width_decades)) fprintf(f, "--");
    else fprintf(f, "%s%s", g->width_open_lo || g->width_open_hi ? "$\\geq$ " : "",
                 tnum(g->width_decades, 3, 0, a, sizeof a));
    fprintf(f, " & %d / %d", g->n_diverged, g->n_finished);
    if (t->n_conf) ranked_confirmed(t, k, f);
    fprintf(f, " \\\\\n");
}

/* Workload w's table of the optimizers at their best lr, ranked by rank
 * (the unranked last), with the confirmed medians by crank where some are. */
static ob_status ranked_table_write(const ob_dataset *d, const ob_stats *s, const int *rank, const int *crank,
                                    unsigned char *bold, unsigned char *cbold, int w, FILE *f, ob_err *e)
{
    ranked_table t = {.d = d, .s = s, .rank = rank, .crank = crank, .w = w, .bold = bold, .cbold = cbold};
    ranked_survey(&t);
    ranked_texts(&t);
    OB_TRY(ranked_bold(&t, e));
    ranked_apart(&t);
    ranked_caption(&t, f);
    ranked_header(&t, f);
    for (int r = 1; r <= s->n_g + 1; r++)
        for (int k = 0; k < s->n_g; k++)
            if (s->g[k].wl == w && rank[k] == (r <= s->n_g ? r : 0)) ranked_row(&t, k, f);
    fprintf(f, "    \\bottomrule\n  \\end{tabular}}\n\\end{table}\n\n");
    return OB_OK;
}

ob_status ob_latex_tables(const ob_dataset *d, const ob_stats *s, FILE *f, ob_err *e)
{
    const size_t n = (size_t)s->n_g + 1;
    int *rank = malloc(n * sizeof *rank), *crank = malloc(n * sizeof *crank);
    unsigned char *bold = malloc(2 * n);
    ob_status st = OB_OK;
    if (!rank || !crank || !bold) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory writing the LaTeX tables");
        goto done;
    }
    ob_stats_rank(s, rank);
    ob_stats_confirm_rank(s, crank);
    fputs("% optbench report: the summary tables for LaTeX. \\input{summary.tex} in a document that loads\n"
          "% booktabs and graphicx (\\usepackage{booktabs,graphicx}; a table wider than the text is scaled\n"
          "% down to its width). Final loss: the mean training loss over the last 10% of a\n"
          "% run's steps; median over seeds at each optimizer's best lr, [min, max] over seeds; $\\infty$: a\n"
          "% diverged seed; --: not measured. summary.md and the CSV files hold every statistic.\n\n",
          f);
    for (int w = 0; w < d->n_wl && st == OB_OK; w++) {
        st = ranked_table_write(d, s, rank, crank, bold, bold + n, w, f, e);
        if (st == OB_OK) best_config_table(d, s, w, f);
    }
    if (st == OB_OK) profile_table(d, s, f);
    if (st == OB_OK) st = tuning_table(d, s, f, e);
done:
    free(rank);
    free(crank);
    free(bold);
    return st;
}

ob_status ob_latex_write(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/summary.tex", dir);
    FILE *f = fopen(p, "w");
    if (!f) return ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", p, strerror(errno));
    ob_status st = ob_latex_tables(d, s, f, e);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (st != OB_OK) {
        remove(p); /* an empty summary.tex would pass for tables */
        return st;
    }
    if (bad) return ob_fail(e, OB_ERR_IO, "writing '%s' failed", p);
    return OB_OK;
}
