/* results/compare_out.c - the judgement of compare (see compare.h) as
 * text for the terminal, Markdown for a CI job summary and JUnit XML for a
 * CI's test report: the same verdicts and notes in each. */
#include "results/compare.h"
#include "results/compare_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "results/stats.h"
#include "workloads/workload.h"

static const char *pct(double v, char *buf, size_t n)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "+inf" : "-inf");
    else snprintf(buf, n, "%+.1f%%", 100 * v);
    return buf;
}

void ob_cmp_infinite_text(const ob_cmp_quantity *q, int sign, const char *word, char *buf, size_t n)
{
    if (sign) {
        int k = sign < 0 ? q->n_to_finite : q->n_to_inf;
        char on[48] = "";
        if (k != q->n) snprintf(on, sizeof on, " on %d of %d seeds", k, q->n);
        if (sign < 0) snprintf(buf, n, "now finite%s (%s before)", on, word);
        else snprintf(buf, n, "now %s%s (finite before)", word, on);
        return;
    }
    int len = snprintf(buf, n, "%d of %d seeds now ", q->n_to_finite ? q->n_to_finite : q->n_to_inf, q->n);
    if (len < 0 || (size_t)len >= n) return;
    if (q->n_to_finite && q->n_to_inf) snprintf(buf + len, n - (size_t)len, "finite, %d now %s", q->n_to_inf, word);
    else snprintf(buf + len, n - (size_t)len, "%s", q->n_to_finite ? "finite" : word);
}

/* A quantity's cell: "+1.5% [+0.5%, +2.5%] worse" (relative) or "+0.02
 * [+0.01, +0.03] worse" (absolute). An infinite change (a value not finite
 * on one side: word says what that means, e.g. "diverged") is told in words,
 * never as an infinite percentage. */
static void quantity_text(const ob_cmp_quantity *q, int absolute, const char *word, char *buf, size_t n)
{
    char a[32], b[32], c[32], w[96];
    if (q->v == OB_NODATA) {
        snprintf(buf, n, "-");
        return;
    }
    /* a change beyond the tolerance that the seeds do not settle */
    const char *vn = q->unsure ? "inconclusive" : ob_verdict_name(q->v);
    int dig = absolute ? -1 : 1;
    ob_cmp_change_text(q->effect, dig, a, sizeof a);
    if (isinf(q->effect)) {
        /* the sign of the change that makes a value not finite: +inf for a
         * loss, -inf for the metric (higher is better) */
        const int to_inf = (q->effect > 0) != q->higher_better;
        ob_cmp_infinite_text(q, to_inf ? 1 : -1, word, w, sizeof w);
        if (snprintf(buf, n, "%s %s", w, vn) >= (int)n) buf[n - 1] = '\0';
    } else if (isinf(q->ci_lo) || isinf(q->ci_hi)) {
        ob_cmp_infinite_text(q, 0, word, w, sizeof w);
        if (snprintf(buf, n, "%s (%s) %s", a, w, vn) >= (int)n) buf[n - 1] = '\0';
    } else if (!isnan(q->ci_lo)) {
        if (snprintf(buf, n, "%s [%s, %s] %s", a, ob_cmp_change_text(q->ci_lo, dig, b, sizeof b),
                     ob_cmp_change_text(q->ci_hi, dig, c, sizeof c), vn) >= (int)n)
            buf[n - 1] = '\0'; /* cut to the cell */
    } else
        snprintf(buf, n, "%s %s", pct(q->effect, a, sizeof a), vn);
}

static void memory_text(const ob_cmp_group *g, char *buf, size_t n)
{
    /* peak memory left out for another backend: said, so that "same" is not read as the peak's */
    const int out_b = g->peak_mem.v == OB_NODATA && g->mem_other_backend > 0,
              out_l = g->peak_mem.v == OB_NODATA && !out_b && g->mem_other_layout > 0,
              out_d = g->peak_mem.v == OB_NODATA && !out_b && !out_l && g->mem_other_device > 0;
    const char *peak_out = out_b ? "; peak: other backend"
                         : out_l ? "; peak: other data-parallel layout"
                         : out_d ? "; peak: other devices" : "";
    if (g->peak_mem.v == OB_NODATA && g->state.v == OB_NODATA) {
        snprintf(buf, n, "%s", out_b ? "other backend, not judged" : out_l ? "other data-parallel layout, not judged"
                               : out_d ? "other devices, not judged" : "-");
        return;
    }
    ob_verdict v = g->peak_mem.v == OB_WORSE || g->state.v == OB_WORSE ? OB_WORSE
                 : g->peak_mem.v == OB_BETTER || g->state.v == OB_BETTER ? OB_BETTER : OB_SAME;
    const ob_cmp_quantity *q = g->peak_mem.v != OB_NODATA && g->peak_mem.base != g->peak_mem.cand ? &g->peak_mem
                             : g->state.v != OB_NODATA && g->state.base != g->state.cand ? &g->state : NULL;
    if (q) {
        char a[32], b[32], d[32];
        ob_compare_bytes(q->base, 0, a, sizeof a);
        ob_compare_bytes(q->cand, 0, b, sizeof b);
        ob_compare_bytes(q->cand - q->base, 1, d, sizeof d);
        /* the same rounded value on both sides: the difference says what changed */
        const char *what = q == &g->peak_mem ? "peak" : "state";
        if (!strcmp(a, b)) snprintf(buf, n, "%s %s (%s) %s%s", what, a, d, ob_verdict_name(v), peak_out);
        else snprintf(buf, n, "%s %s -> %s %s%s", what, a, b, ob_verdict_name(v), peak_out);
    } else
        snprintf(buf, n, "%s%s%s", peak_out[0] ? "state " : "", ob_verdict_name(v), peak_out);
}

static void time_text(const ob_cmp_group *g, char *buf, size_t n)
{
    char a[32];
    const ob_cmp_quantity *q = &g->time_mean;
    int show_mean; /* the mean where it tells something the median does not: slow steps */
    if (g->time_not_judged || (g->time_cells == 0 && (g->time_other_device > 0 || g->time_fast > 0))) {
        if (g->time_apart) snprintf(buf, n, "%s unsteady across runs, not judged", pct(g->time.effect, a, sizeof a));
        else if (g->time_not_judged && g->time_busy_most)
            snprintf(buf, n, "%s on a busy machine, not judged", pct(g->time.effect, a, sizeof a));
        else if (g->time_not_judged) snprintf(buf, n, "%s unsteady, not judged", pct(g->time.effect, a, sizeof a));
        else if (g->time_other_device > 0) snprintf(buf, n, "other devices, not judged");
        else snprintf(buf, n, "steps under %g ms, not judged", g->time_floor_ms);
        show_mean = q->v == OB_WORSE || q->v == OB_BETTER || q->unsure; /* judged without the median */
    } else {
        quantity_text(&g->time, 0, "not finite", buf, n);
        show_mean = q->v != OB_NODATA && (q->v != g->time.v || q->unsure != g->time.unsure);
    }
    if (show_mean) {
        char mt[96], cells[48] = "";
        quantity_text(q, 0, "not finite", mt, sizeof mt);
        if (q->n < g->time_mean_cells) /* the mean judged over fewer cells than were timed */
            snprintf(cells, sizeof cells, " (%d of %d cells)", q->n, g->time_mean_cells);
        size_t len = strlen(buf);
        if (len + 1 < n && snprintf(buf + len, n - len, "; mean %s%s%s", mt, cells,
                                    g->time_mean_machine ? " (every judged group's)" : "") >= (int)(n - len))
            buf[n - 1] = '\0';
    }
}

/* The lr where final loss and held-out were judged (both sides there):
 * "0.1"; "0.1 (cand best 0.01)" when the candidate's own best lr is another;
 * "0.01 (cand best)" when the baseline had no finite median at any lr;
 * "0.001 (smallest)" when neither side had. */
static void lr_text(const ob_cmp_group *g, char *buf, size_t n)
{
    if (g->lr_from == 3) snprintf(buf, n, "- (baseline not finished)");
    else if (isnan(g->best_lr)) snprintf(buf, n, "-");
    else if (g->lr_from == 1) snprintf(buf, n, "%g (cand best)", g->best_lr);
    else if (g->lr_from == 2) snprintf(buf, n, "%g (smallest)", g->best_lr);
    else if (!isnan(g->base_best_unmatched))
        snprintf(buf, n, "%g (best matched; base best %g unmatched)", g->best_lr, g->base_best_unmatched);
    else if (!isnan(g->cand_best_lr) && g->cand_best_lr != g->best_lr)
        snprintf(buf, n, "%g (cand best %g)", g->best_lr, g->cand_best_lr);
    else snprintf(buf, n, "%g", g->best_lr);
}

/* The cells of one group's row, as the three writers show them. */
typedef struct row_text {
    char lr[64], l[96], m[110], t[192], mem[160];
} row_text;

/* What a workload's held-out metric is ("accuracy"), by its label (the
 * workload's name, maybe followed by its parameters); "metric" for one this
 * build does not know. */
static const char *metric_word(const char *wl_label)
{
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(wl_label, " ("), wl_label);
    const ob_workload_def *wd = ob_workload_find(name);
    return wd && wd->metric_name ? wd->metric_name : "metric";
}

static void row_texts(const ob_cmp_group *g, row_text *r)
{
    char m[96];
    lr_text(g, r->lr, sizeof r->lr);
    /* seeds newly diverged make the group worse (new divergences) whatever
     * the median says: the cells that tell of them say "worse" too, not a
     * "same" beside the verdict */
    ob_cmp_quantity loss = g->loss, metric = g->metric;
    if (ob_cmp_new_divergences(g)) {
        if (loss.v != OB_NODATA && loss.n_to_inf) loss.v = OB_WORSE, loss.unsure = 0;
        if (metric.v != OB_NODATA && metric.n_to_inf) metric.v = OB_WORSE, metric.unsure = 0;
    }
    quantity_text(&loss, 0, "diverged", r->l, sizeof r->l);
    quantity_text(&metric, !g->metric_is_loss, "diverged", m, sizeof m); /* a diverged seed's is infinite */
    /* which held-out quantity: the loss's change is relative, the metric's absolute */
    snprintf(r->m, sizeof r->m, "%s%s%s", g->metric.v == OB_NODATA ? "" : g->metric_is_loss ? "loss" :
             metric_word(g->workload), g->metric.v == OB_NODATA ? "" : " ", m);
    time_text(g, r->t, sizeof r->t);
    memory_text(g, r->mem, sizeof r->mem);
}

/* The note on matched cells run on different devices, without lead or
 * final period: "2 matched cells ran on different devices (baseline: X;
 * candidate: Y): their step times are not compared (...)"; empty when none. */
static void device_note(const ob_compare *c, char *buf, size_t n)
{
    buf[0] = 0;
    int k = c->n_device_differs, one = k == 1, kb = c->n_backend_differs;
    if (!k) return;
    size_t len = 0;
#define ADD(...)                                                                           \
    do {                                                                                   \
        if (len < n) len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__);             \
    } while (0)
    ADD("%d matched cell%s ran on %s (%sbaseline: \"%s\"; candidate: \"%s\")", k, one ? "" : "s",
        one ? "a different device" : "different devices", c->device_mixed ? "e.g. " : "", c->device_base,
        c->device_cand);
    if (c->opts.time_tol < 0)
        ADD(": step time is not judged (--time-tol off)");
    else if (c->opts.time_across_devices)
        ADD(": %s compared anyway (--time-across-devices), so a change there may be the device's",
            one ? "its step time is" : "their step times are");
    else
        ADD(": %s not compared (--time-across-devices compares them anyway)",
            one ? "its step time is" : "their step times are");
    if (kb && c->opts.check_memory) {
        if (kb == k)
            ADD("; %s peak memory is not compared (another backend: CPU and GPU memory figures do not "
                "compare)", one ? "its" : "their");
        else
            ADD("; the peak memory of the %d of them that ran on another backend is not compared (CPU and GPU "
                "memory figures do not compare)", kb);
    }
    if (c->n_memdev_differs && c->opts.check_memory) {
        if (c->n_memdev_differs == k)
            ADD("; nor is %s peak memory (the kernels and workspaces follow the device)", one ? "its" : "their");
        else
            ADD("; the peak memory of the %d of them on other devices of one backend is not compared either (the "
                "kernels and workspaces follow the device)", c->n_memdev_differs);
    }
    if (c->n_layout_differs && c->opts.check_memory)
    {
        if (c->n_layout_differs == k)
            ADD("; %s peak memory is not compared (split over another number of data-parallel replicas: each "
                "side records one replica's peak)", one ? "its" : "their");
        else
            ADD("; the peak memory of the %d of them split over another number of data-parallel replicas is not "
                "compared (each side records one replica's peak)", c->n_layout_differs);
    }
#undef ADD
}

static void md_para(FILE *f, const char *s);

/* Notes below the table, in text (md = 0) or Markdown. */
/* Why a group is worse beyond its columns: " (new failures)", ... */
static const char *verdict_suffix(const ob_cmp_group *g)
{
    return g->n_new_failures       ? " (new failures)"
           : ob_cmp_new_divergences(g) || ob_cmp_new_divergences_below(g) ? " (new divergences)"
           : !g->n_new_unfinished  ? ""
           : g->overall == OB_WORSE ? " (some cells not finished)"
                                    : " (not finished)";
}

/* The verdict column: a group with cells the candidate has not finished and
 * nothing worse has no verdict yet. */
static const char *verdict_word(const ob_cmp_group *g, int md)
{
    if (g->overall == OB_WORSE) return md ? "**worse**" : "WORSE";
    if (g->n_new_unfinished) return "no verdict";
    return ob_verdict_name(g->overall);
}

/* The note on a mean step time that moved the same way in every group where
 * it was judged, in buf; 0 when there is none. */
static int mean_shift_note(const ob_compare *c, char *buf, size_t n)
{
    buf[0] = 0;
    if (isnan(c->time_mean_shift) || (!isnan(c->time_shift) && (c->time_shift > 0) == (c->time_mean_shift > 0)))
        return 0; /* none, or the medians' note says it */
    char a[32];
    const int up = c->time_mean_shift > 0;
    int len = snprintf(buf, n, "the mean step time %s beyond %.0f%% in every group where it was judged (by %s in the "
                               "middle one): short stalls of a busy machine (another process taking a core for a few "
                               "ms, again and again) %s every run's mean alike",
                       up ? "rose" : "fell", 100 * c->opts.time_mean_tol, pct(c->time_mean_shift, a, sizeof a),
                       up ? "on the candidate's machine raise" : "on the baseline's machine raised");
    if (len < 0 || (size_t)len >= n) return 1;
    if (c->n_time_mean_machine)
        snprintf(buf + len, n - (size_t)len,
                 ", and so would a change that makes every optimizer's steps slow now and then; the two cannot be "
                 "told apart here, so the mean's verdict is inconclusive in %d group%s whose median step time did "
                 "not say the same; rerun both on one quiet machine to judge it",
                 c->n_time_mean_machine, c->n_time_mean_machine == 1 ? "" : "s");
    else
        snprintf(buf + len, n - (size_t)len,
                 "; the verdicts stand (%s); compare step times on one quiet machine, else use --time-mean-tol off",
                 c->mean_shift_spread || !isnan(c->time_shift)
                     ? "the median step times moved too"
                     : "the groups judged on their mean are one optimizer's or one workload's, or too few of them");
    return 1;
}

/* The notes on what the verdicts rest on: a baseline not finished, verdicts
 * on few seeds, losses the absolute floor made the same, and a candidate
 * not finished (its matrix or its confirmation stage). lead: each note's
 * start. */
static void notes_verdicts(const ob_compare *c, FILE *f, const char *lead, int md)
{
    if (c->n_base_unfinished) {
        int none = 0; /* groups with no finished baseline cell */
        for (int i = 0; i < c->n_g; i++) none += c->g[i].lr_from == 3;
        char nv[96] = "";
        if (none) snprintf(nv, sizeof nv, "; %d group%s no finished baseline cell and no verdict", none,
                           none == 1 ? " has" : "s have");
        fprintf(f, "%sthe baseline is incomplete: %d matched cell%s did not finish there (failed, pending, running "
                   "or interrupted) and %s not judged; each group is judged on the baseline cells that finished "
                   "(its best lr among them)%s; finish the baseline (optbench run ... --resume) or compare "
                   "against another%s%s\n",
                lead, c->n_base_unfinished, c->n_base_unfinished == 1 ? "" : "s",
                c->n_base_unfinished == 1 ? "is" : "are", nv,
                c->opts.strict ? " (--strict: a failure)" : " (--strict fails such a comparison)", md ? "." : "");
    }
    /* verdicts on few seeds: every seed on one side, which chance gives with
     * probability 2^(1-n), and the median past the tolerance */
    int few = 0, few_min = 0;
    for (int i = 0; i < c->n_g; i++)
        for (int k = 0; k < 2; k++) {
            const ob_cmp_quantity *q = k ? &c->g[i].metric : &c->g[i].loss;
            if ((q->v != OB_WORSE && q->v != OB_BETTER) || q->ci_cover >= 0.95 - 1e-12 || isinf(q->effect)) continue;
            few++;
            if (!few_min || q->n < few_min) few_min = q->n;
        }
    if (few)
        fprintf(f, "%s%d verdict%s on the final loss or held-out metric rest%s on fewer than 6 seeds (down to %d): "
                   "there, worse (or better) means that every seed moved the same way and the median change passed "
                   "the tolerance, which no two-sided test makes significant at 5%% below 6 seeds (every one of n "
                   "seeds on one side happens by chance with probability 2^(1-n): 50%% with 2; on the worse side "
                   "alone 2^-n, 25%% with 2); a change that only reorders "
                   "sums (rounding) does that on chaotic trajectories now and then, so confirm such a verdict with "
                   "more seeds (--seeds 6 or more) before believing it%s\n",
                lead, few, few == 1 ? "" : "s", few == 1 ? "s" : "", few_min, md ? "." : "");
    /* verdicts the absolute floor made "same" */
    int under = 0;
    for (int i = 0; i < c->n_g; i++) under += c->g[i].loss.under_abs + (c->g[i].metric_is_loss && c->g[i].metric.under_abs);
    if (under)
        fprintf(f, "%s%d loss verdict%s counted as the same: the median difference of the seeds' losses is within "
                   "--loss-abs-tol %g, although the relative change passed the tolerance (a loss near float "
                   "rounding moves by percents when sums are reordered)%s\n",
                lead, under, under == 1 ? "" : "s", c->opts.loss_abs_tol, md ? "." : "");
    int unfinished = 0;
    for (int i = 0; i < c->n_g; i++) unfinished += c->g[i].n_new_unfinished;
    if (unfinished)
        fprintf(f, "%s%d matched cell%s finished in the baseline %s not finished in the candidate (pending, running "
                   "or interrupted: a run stopped, a machine died): the candidate's benchmark is incomplete, so its "
                   "groups are judged on what finished, and with nothing worse there is no verdict (exit status "
                   "2); finish it (the same optbench run command with --resume) and compare again%s\n",
                lead, unfinished, unfinished == 1 ? "" : "s", unfinished == 1 ? "is" : "are", md ? "." : "");
    if (c->n_confirm_cand_unfinished)
        fprintf(f, "%s%d confirmation run%s of the candidate %s not finished (its confirmation stage was stopped: "
                   "a run stopped, a machine died): the candidate's benchmark is incomplete, and with nothing "
                   "worse there is no verdict (exit status 2); finish it (the same optbench run command with "
                   "--resume) and compare again%s\n",
                lead, c->n_confirm_cand_unfinished, c->n_confirm_cand_unfinished == 1 ? "" : "s",
                c->n_confirm_cand_unfinished == 1 ? "is" : "are", md ? "." : "");
}

/* The notes on what was judged: the lr (the baseline's best not matched,
 * the candidate's or the smallest), cells matched by relaxed
 * hyperparameters or on one side only, divergences above the lr judged,
 * confirmation runs left out. */
static void notes_judged(const ob_compare *c, FILE *f, const char *lead, int md)
{
    int moved = 0, from_cand = 0, smallest = 0, unmatched = 0;
    const ob_cmp_group *first_unmatched = NULL;
    for (int i = 0; i < c->n_g; i++)
        if (!isnan(c->g[i].base_best_unmatched) && !unmatched++) first_unmatched = &c->g[i];
    if (unmatched)
        fprintf(f, "%s%d group%s judged at the best of the matched lrs, not the baseline's own best lr, whose cells "
                   "have no match in the candidate (%s%s on %s: best %g, judged at %g): another lr grid? A "
                   "regression at the baseline's best lr goes unseen there; run the candidate at the baseline's "
                   "lrs, or keep a new baseline after a deliberate change of the grid%s\n",
                lead, unmatched, unmatched == 1 ? " is" : "s are", unmatched > 1 ? "the first: " : "",
                first_unmatched->optimizer, first_unmatched->workload, first_unmatched->base_best_unmatched,
                first_unmatched->best_lr, md ? "." : "");
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        moved |= g->lr_from == 0 && !isnan(g->cand_best_lr) && g->cand_best_lr != g->best_lr;
        from_cand |= g->lr_from == 1;
        smallest |= g->lr_from == 2 && !isnan(g->best_lr);
    }
    if (moved || from_cand || smallest)
        fprintf(f, "%slr is where final loss and held-out were judged, on both sides: the baseline's best lr%s%s%s%s\n",
                lead, moved ? "; \"cand best X\": the candidate's own best lr is X (its sweep's winner moved)" : "",
                from_cand ? "; \"cand best\": the baseline has no finite final loss at any lr, the candidate's "
                            "best is judged" : "",
                smallest ? "; \"smallest\": neither side has one, the smallest lr is judged (every run diverged on "
                           "both sides: such a group's loss gates nothing until a seed trains; give it lrs that "
                           "train, or exclude it from the matrix)" : "", md ? "." : "");
    if (c->n_relaxed)
        fprintf(f, "%s%d cell%s matched although %s hyperparameters differ%s%s (meant for a hyperparameter "
                   "added, or a default changed, between versions; when you changed one on purpose, the "
                   "verdict compares two configurations)%s\n",
                lead, c->n_relaxed, c->n_relaxed == 1 ? "" : "s", c->n_relaxed == 1 ? "its" : "their",
                c->relaxed_note[0] ? ", " : "", c->relaxed_note, md ? "." : "");
    if (c->only_note[0])
        fprintf(f, "%scells on one side only are not compared; some are the same cells run differently%s "
                   "(the matrix changed: --strict fails such a comparison)%s\n",
                lead, c->only_note, md ? "." : "");
    {
        int nd = 0, ng = 0;
        const ob_cmp_group *first = NULL;
        for (int i = 0; i < c->n_g; i++)
            if (c->g[i].n_new_diverged_other) {
                nd += c->g[i].n_new_diverged_other;
                ng++;
                if (!first) first = &c->g[i];
            }
        if (nd)
            fprintf(f, "%s%d cell%s diverged in the candidate and not in the baseline at lrs above the judged "
                       "one, in %d group%s (e.g. %s on %s): the range of lrs that train narrowed there; not judged, "
                       "as the edge of stability can move with rounding alone, but worth a look%s\n",
                    lead, nd, nd == 1 ? "" : "s", ng, ng == 1 ? "" : "s", first->optimizer, first->workload,
                    md ? "." : "");
    }
    if (c->n_confirm_base || c->n_confirm_cand)
        fprintf(f, "%sconfirmation runs (run --confirm-seeds) are not compared, %d in the baseline and %d in the "
                   "candidate: they sit at whichever lr won each side's sweep, so they match only where the "
                   "winners agree; the sweeps are compared%s\n",
                lead, c->n_confirm_base, c->n_confirm_cand, md ? "." : "");
}

/* A share of CPUs (runs.other_cpu) for a note: "38%", "unknown" for NaN. */
static const char *share_text(double v, char *buf, size_t n)
{
    if (isnan(v)) snprintf(buf, n, "unknown");
    else snprintf(buf, n, "%.0f%%", 100 * v);
    return buf;
}

/* The note on step times of runs that met a busy machine (runs.other_cpu
 * at OB_BUSY_SHARE or more on either side): the groups not judged for it,
 * and the cells left out of the groups judged. */
static void note_busy(const ob_compare *c, FILE *f, const char *lead, int md)
{
    const ob_cmp_group *eg = NULL; /* the first group not judged for it */
    int left_out = 0;              /* cells left out of judged groups */
    for (int k = 0; k < c->n_g; k++) {
        const ob_cmp_group *g = &c->g[k];
        if (g->time_not_judged && g->time_busy_most && !g->time_apart) {
            if (!eg) eg = g;
        } else if (!g->time_not_judged) {
            left_out += g->time_busy;
        }
    }
    if (!eg && !left_out) return;
    char sb[32], sc[32], lim[32];
    share_text(OB_BUSY_SHARE, lim, sizeof lim);
    if (eg) {
        const int one = c->n_time_busy == 1;
        fprintf(f, "%sstep time not judged in %d group%s: most of %s cells ran while other processes kept %s or "
                   "more of the machine's CPUs busy on one side or both (runs.other_cpu; e.g. %s on %s: up to %s "
                   "in the baseline, %s in the candidate), which times their work, not the code's; rerun %s on "
                   "a quiet machine%s\n",
                lead, c->n_time_busy, one ? "" : "s", one ? "its" : "their", lim, eg->optimizer, eg->workload,
                share_text(eg->busy_base, sb, sizeof sb), share_text(eg->busy_cand, sc, sizeof sc),
                one ? "it" : "them", md ? "." : "");
    }
    if (left_out)
        fprintf(f, "%s%d cell%s of the groups judged %s left out of step time: a run of %s met a busy machine "
                   "(other processes kept %s or more of its CPUs busy)%s\n",
                lead, left_out, left_out == 1 ? "" : "s", left_out == 1 ? "was" : "were",
                left_out == 1 ? "it" : "each", lim, md ? "." : "");
}

/* The notes on step time not judged (unsteady timing, a busy machine, or
 * runs of one side at different speeds) and, but in the JUnit report
 * (junit), on cells run on different devices. */
static void notes_time(const ob_compare *c, FILE *f, const char *lead, int md, int junit)
{
    int n_apart = 0; /* groups not judged because one side's runs ran at different speeds */
    const ob_cmp_group *apart = NULL;
    for (int k = 0; k < c->n_g; k++)
        if (c->g[k].time_apart) {
            if (!apart) apart = &c->g[k];
            n_apart++;
        }
    note_busy(c, f, lead, md);
    if (c->n_time_not_judged > n_apart + c->n_time_busy) {
        int mean_judged = 0; /* of those groups, with a mean verdict */
        for (int k = 0; k < c->n_g; k++)
            mean_judged += c->g[k].time_not_judged && !c->g[k].time_apart && !c->g[k].time_busy_most &&
                           c->g[k].time_mean.v != OB_NODATA && !c->g[k].time_mean_machine;
        char also[96] = "";
        if (mean_judged)
            snprintf(also, sizeof also, "; the mean step time still is in %d of them (their medians held)",
                     mean_judged);
        const int n_unsteady = c->n_time_not_judged - n_apart - c->n_time_busy, one = n_unsteady == 1;
        fprintf(f, "%sstep time not judged in %d group%s: most of %s cells ran with unsteady step times "
                   "(p90 more than %.0f%% above the median on one side only; a busy machine, or steps slow "
                   "now and then)%s; rerun %s on a quiet machine%s\n", lead, n_unsteady,
                one ? "" : "s", one ? "its" : "their", 100 * OB_TIME_UNSTEADY, also, one ? "it" : "them",
                md ? "." : "");
    }
    if (n_apart) {
        const int one = n_apart == 1;
        const int base_side = apart->time_spread_base > apart->time_spread_cand;
        fprintf(f, "%sstep time not judged in %d group%s whose runs of one side ran at different speeds (the "
                   "slowest run's median step time more than %.0f%% above the fastest's, and more than twice "
                   "the other side's spread: a step's work does not depend on the lr or the seed, so the "
                   "machine changed speed between runs), e.g. %s on %s: %.0f%% in the %s, %.0f%% in the %s; "
                   "rerun %s on a quiet machine%s\n",
                lead, n_apart, one ? "" : "s", 100 * OB_TIME_UNSTEADY, apart->optimizer, apart->workload,
                100 * (base_side ? apart->time_spread_base : apart->time_spread_cand),
                base_side ? "baseline" : "candidate",
                100 * (base_side ? apart->time_spread_cand : apart->time_spread_base),
                base_side ? "candidate" : "baseline", one ? "that side" : "them", md ? "." : "");
    }
    if (c->n_device_differs && !junit) {
        char note[768];
        device_note(c, note, sizeof note);
        fputs(lead, f);
        if (md) md_para(f, note); /* device texts come from drivers: escaped */
        else fputs(note, f);
        fputs(md ? ".\n" : "\n", f);
    }
}

/* The notes on each database's benchmarks and the rows set aside, and on
 * step times that moved in every group (the mean's note but in the JUnit
 * report, junit). */
static void notes_sides(const ob_compare *c, FILE *f, const char *lead, int md, int junit)
{
    for (int k = 0; k < 2; k++) {
        int nb = k ? c->n_bench_cand : c->n_bench_base, ns = k ? c->n_superseded_cand : c->n_superseded_base;
        int nm = k ? c->n_masked_cand : c->n_masked_base;
        const char *side = k ? "candidate" : "baseline";
        if (nb > 1 && ns > 0)
            fprintf(f, "%sthe %s database holds runs of %d benchmarks, and %d of its older rows were set aside "
                       "for a later finished run of the same cell: each cell is its latest finished run, whichever "
                       "benchmark it came from; --%s-benchmark latest judges the last benchmark alone%s\n",
                    lead, side, nb, ns, side, md ? "." : "");
        if (nm > 0)
            fprintf(f, "%s%d later run%s in the %s database failed or did not finish and %s set aside for an "
                       "earlier finished run of the same cell, so %s not judged here (an earlier success stands "
                       "in for %s)%s%s%s%s\n",
                    lead, nm, nm == 1 ? "" : "s", side, nm == 1 ? "was" : "were", nm == 1 ? "its failure is" :
                    "their failures are", nm == 1 ? "it" : "them", nb > 1 ? "; --" : "", nb > 1 ? side : "",
                    nb > 1 ? "-benchmark latest judges the last benchmark alone" : "", md ? "." : "");
    }
    if (!isnan(c->time_shift)) {
        char a[32];
        fprintf(f, "%sstep time moved the same way in every group (median %s): more likely the machine "
                   "(another one, or busier) than an optimizer, unless a change touched all of them; "
                   "compare step times only between runs on one quiet machine, else use --time-tol off%s\n",
                lead, pct(c->time_shift, a, sizeof a), md ? "." : "");
    }
    char msn[768];
    if (!junit && mean_shift_note(c, msn, sizeof msn)) fprintf(f, "%s%s%s\n", lead, msn, md ? "." : "");
}

/* The notes under the table (md: as Markdown); junit: leave out those the
 * JUnit report has a test case of their own for (devices, mean step time). */
static void print_notes(const ob_compare *c, FILE *f, int md, int junit)
{
    const char *lead = md ? "\nNote: " : "note: ";
    notes_verdicts(c, f, lead, md);
    notes_judged(c, f, lead, md);
    notes_time(c, f, lead, md, junit);
    notes_sides(c, f, lead, md, junit);
}

void ob_compare_print(const ob_compare *c, FILE *f)
{
    /* columns as wide as their longest cell, so long values keep the verdicts aligned */
    enum { NC = 8 };
    static const char *const head[NC] = {"workload", "optimizer", "lr", "final loss", "held-out",
                                         "step time", "memory", "verdict"};
    int w[NC];
    for (int k = 0; k < NC; k++) w[k] = (int)strlen(head[k]);
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        row_text r;
        row_texts(g, &r);
        const char *cell[NC - 1] = {g->workload, g->optimizer, r.lr, r.l, r.m, r.t, r.mem};
        for (int k = 0; k < NC - 1; k++)
            if ((int)strlen(cell[k]) > w[k]) w[k] = (int)strlen(cell[k]);
    }
    for (int k = 0; k < NC - 1; k++) fprintf(f, "%-*s  ", w[k], head[k]);
    fprintf(f, "%s\n", head[NC - 1]);
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        row_text r; /* the same texts again: no table of them to allocate */
        row_texts(g, &r);
        fprintf(f, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s%s\n", w[0], g->workload, w[1], g->optimizer,
                w[2], r.lr, w[3], r.l, w[4], r.m, w[5], r.t, w[6], r.mem,
                verdict_word(g, 0), verdict_suffix(g));
    }
    print_notes(c, f, 0, 0);
    /* why each worse group is worse, as the Markdown and JUnit say it: the
     * job's log is what the one paged reads first */
    int any = 0;
    for (int i = 0; i < c->n_g; i++)
        if (c->g[i].detail[0]) {
            if (!any) fprintf(f, "what got worse:\n");
            any = 1;
            fprintf(f, "  %s / %s: %s\n", c->g[i].workload, c->g[i].optimizer, c->g[i].detail);
        }
    for (int k = 0; k < 2; k++) {
        const ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        if (!n) continue;
        fprintf(f, "%d cells only in the %s%s:\n", n, k ? "candidate" : "baseline",
                c->opts.strict ? " (strict: a failure)" : "");
        for (int i = 0; i < n; i++)
            fprintf(f, "  %s %s lr=%g seed=%lld (%s)\n", l[i].workload, l[i].optimizer, l[i].lr,
                    (long long)l[i].seed, l[i].status);
    }
}

/* A label in a Markdown table: | escaped, < and & as entities (GitHub would
 * take <a> for HTML). */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

void ob_compare_markdown(const ob_compare *c, const char *base_name, const char *cand_name, FILE *f)
{
    fprintf(f, "## optbench compare: %s\n\n",
            c->regression ? "regression" : c->incomplete ? "no verdict (the candidate is not finished)" : "no regression");
    fprintf(f, "Baseline `%s`, candidate `%s`: %d matched cells in %d workload x optimizer groups; "
               "%d worse, %d better, %d cells only in the baseline, %d only in the candidate%s.\n\n",
            base_name, cand_name, c->n_matched, c->n_g, c->n_worse, c->n_better, c->n_only_base,
            c->n_only_cand,
            c->opts.strict && (c->n_only_base || c->n_only_cand) ? " (--strict: cells on one side only are a failure)"
                                                                 : "");
    if (c->n_base_unfinished)
        fprintf(f, "The baseline is incomplete: %d matched cell%s did not finish there%s.\n\n", c->n_base_unfinished,
                c->n_base_unfinished == 1 ? "" : "s", c->opts.strict ? " (--strict: a failure)" : "");
    fprintf(f, "| workload | optimizer | lr | final loss | held-out | step time | memory | verdict |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        row_text r;
        row_texts(g, &r);
        fputs("| ", f);
        md_text(f, g->workload);
        fputs(" | ", f);
        md_text(f, g->optimizer);
        fprintf(f, " | %s | %s | %s | %s | %s | %s%s |\n", r.lr, r.l, r.m, r.t, r.mem,
                verdict_word(g, 1), verdict_suffix(g));
    }
    print_notes(c, f, 1, 0);
    int any = 0;
    for (int i = 0; i < c->n_g; i++)
        if (c->g[i].detail[0]) {
            if (!any) fprintf(f, "\n### What got worse\n\n");
            any = 1;
            fputs("- ", f);
            md_text(f, c->g[i].workload);
            fputs(" / ", f);
            md_text(f, c->g[i].optimizer);
            fprintf(f, ": %s\n", c->g[i].detail);
        }
    for (int k = 0; k < 2; k++) {
        const ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        if (!n) continue;
        fprintf(f, "\n### Cells only in the %s (%d)\n\n", k ? "candidate" : "baseline", n);
        for (int i = 0; i < n; i++) {
            fputs("- ", f);
            md_text(f, l[i].workload);
            fputs(" / ", f);
            md_text(f, l[i].optimizer);
            fprintf(f, ", lr %g, seed %lld (", l[i].lr, (long long)l[i].seed);
            md_text(f, l[i].status);
            fputs(")\n", f);
        }
    }
    char abs_text[96] = "";
    if (c->opts.loss_abs_tol > 0)
        snprintf(abs_text, sizeof abs_text, " and the median difference %g (absolute, --loss-abs-tol)",
                 c->opts.loss_abs_tol);
    fprintf(f, "\nThresholds: final loss judged paired over seeds at the baseline's best lr, worse when "
               "the distribution-free 95%% interval of the median relative change (order statistics: up to 8 seeds "
               "the range over the seeds, so every seed worse; below 6 seeds that range holds the median with "
               "less than 95%%, 50%% with 2) is above 0 and the change "
               "exceeds %.1f%%%s; held-out metric by more than %g (absolute); ",
            100 * c->opts.loss_tol, abs_text, c->opts.metric_tol);
    if (c->opts.time_tol < 0) fprintf(f, "step time not judged; ");
    else {
        fprintf(f, "step time (each run's median step time, paired over cells like the final loss) beyond +-%.0f%%, "
                   "cells with unsteady timing, on a busy machine (other processes on %.0f%% or more of the "
                   "CPUs) or with steps under %g ms%s left out; ",
                100 * c->opts.time_tol, 100 * OB_BUSY_SHARE, c->opts.time_floor_ms,
                c->opts.time_across_devices ? "" : ", or run on different devices,");
        if (c->opts.time_mean_tol < 0) fprintf(f, "mean step time not judged; ");
        else
            fprintf(f, "mean step time (which sees steps that are slow now and then) the same way beyond +-%.0f%%, "
                       "unsteady cells whose median held within %.0f%% included, inconclusive where every group's "
                       "mean moved while the medians held; ",
                    100 * c->opts.time_mean_tol, 100 * OB_TIME_MEDIAN_HELD);
    }
    fprintf(f, "memory %s.\n", c->opts.check_memory ? "exactly (peak memory not across backends)" : "not judged");
}

/* At a byte >= 0x80: writes the UTF-8 character that starts at *s (or '?'
 * for a byte that starts none) and moves *s to its last byte. */
static void put_utf8(FILE *f, const char **s)
{
    int n = ob_utf8_len((const unsigned char *)*s);
    const unsigned char *u = (const unsigned char *)*s;
    /* U+FFFE and U+FFFF are not XML characters either */
    if (n == 3 && u[0] == 0xEF && u[1] == 0xBF && (u[2] == 0xBE || u[2] == 0xBF)) {
        fputc('?', f);
        *s += 2;
    } else if (n == 0) {
        fputc('?', f);
    } else {
        fwrite(*s, 1, (size_t)n, f);
        *s += n - 1;
    }
}

/* Text for XML: markup escaped, control characters and bytes that are not
 * UTF-8 (a hand-edited database) as '?' or ' ', so the file stays well-formed. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s >= 0x80) {
            put_utf8(f, &s);
            continue;
        }
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') fputc(' ', f);
            else fputc(*s, f);
        }
    }
}

/* What the JUnit report holds besides the groups: its notes, the test
 * cases of its own they make, and the counts of its header. */
typedef struct junit_report {
    char msn[768];               /* the note on mean step time moved in every group */
    int mean_note;               /* msn holds it */
    char *notes;                 /* every other note (print_notes), NULL where none could be written */
    size_t notes_len;
    int one_sided;               /* cells on one side only */
    int base_unfinished;         /* matched cells the baseline did not finish */
    int confirm_unfinished;      /* confirmation runs the candidate did not finish */
    int any_notes;               /* notes holds some */
    int tests, failures, errors, skipped;
} junit_report;

/* A group a CI's test view shows as skipped: nothing judged (no quantity
 * has a verdict), nothing worse and nothing unfinished. */
static int junit_skipped(const ob_cmp_group *g)
{
    if (g->overall == OB_WORSE || g->n_new_unfinished > 0) return 0;
    const ob_cmp_quantity *q[] = {&g->loss, &g->metric, &g->time, &g->peak_mem, &g->state};
    for (int k = 0; k < 5; k++)
        if (q[k]->v != OB_NODATA) return 0;
    return 1;
}

/* The report's notes, and which test cases it has besides the groups', into jr. */
static void junit_gather(const ob_compare *c, junit_report *jr)
{
    jr->one_sided = c->n_only_base + c->n_only_cand > 0;
    jr->mean_note = mean_shift_note(c, jr->msn, sizeof jr->msn);
    /* every note, where a CI's test view shows it: they change what a
     * verdict means (cells set aside, hyperparameters that differ, ...) */
    jr->notes = NULL;
    jr->notes_len = 0;
    FILE *nf = open_memstream(&jr->notes, &jr->notes_len);
    if (nf) {
        print_notes(c, nf, 0, 1);
        fclose(nf);
    }
    jr->base_unfinished = c->n_base_unfinished > 0;
    jr->any_notes = jr->notes && jr->notes_len > 0;
    jr->confirm_unfinished = c->n_confirm_cand_unfinished > 0;
}

/* The counts of the header: test cases, failures, errors and skipped. */
static void junit_count(const ob_compare *c, junit_report *jr)
{
    jr->tests = c->n_g + (jr->one_sided ? 1 : 0) + (c->n_device_differs ? 1 : 0) + jr->mean_note +
                jr->base_unfinished + jr->any_notes + jr->confirm_unfinished;
    jr->failures = c->n_worse + (jr->one_sided && c->opts.strict ? 1 : 0) +
                   (jr->base_unfinished && c->opts.strict ? 1 : 0);
    /* groups with cells the candidate has not finished, nothing worse, and a
     * stopped confirmation stage: no verdict */
    jr->errors = jr->confirm_unfinished;
    jr->skipped = 0;
    for (int i = 0; i < c->n_g; i++) {
        jr->errors += c->g[i].overall != OB_WORSE && c->g[i].n_new_unfinished > 0;
        jr->skipped += junit_skipped(&c->g[i]);
    }
}

/* The XML declaration and the opening tags with the counts. */
static void junit_header(const junit_report *jr, FILE *f)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"optbench compare\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n"
               "  <testsuite name=\"optbench compare\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
            jr->tests, jr->failures, jr->errors, jr->skipped, jr->tests, jr->failures, jr->errors, jr->skipped);
}

/* A group's test case opened: its classname from the workload, its name the optimizer. */
static void junit_group_open(const ob_cmp_group *g, FILE *f)
{
    /* JUnit readers split a classname at its last '.' (package.class):
     * a label's own dots ("noise=0.01") become '_' there */
    fputs("    <testcase classname=\"optbench.", f);
    char *cls = strdup(g->workload);
    if (cls)
        for (char *q = cls; *q; q++)
            if (*q == '.') *q = '_';
    xml_text(f, cls ? cls : g->workload);
    free(cls);
    fputs("\" name=\"", f);
    xml_text(f, g->optimizer);
    fputs("\" time=\"0\">\n", f);
}

/* A group's outcome: a failure where worse, an error where the candidate
 * has cells unfinished, skipped where nothing was judged; nothing else. */
static void junit_group_outcome(const ob_cmp_group *g, FILE *f)
{
    if (g->overall == OB_WORSE) {
        fputs("      <failure type=\"regression\" message=\"", f);
        xml_text(f, g->detail);
        fputs("\">", f);
        xml_text(f, g->detail);
        fputs("</failure>\n", f);
    } else if (g->n_new_unfinished) {
        char msg[256];
        snprintf(msg, sizeof msg, "%d cell%s finished in the baseline %s not finished in the candidate (a run "
                 "stopped, a machine died): no verdict; finish it with the same run command and --resume",
                 g->n_new_unfinished, g->n_new_unfinished == 1 ? "" : "s", g->n_new_unfinished == 1 ? "is" : "are");
        fputs("      <error type=\"not finished\" message=\"", f);
        xml_text(f, msg);
        fputs("\">", f);
        xml_text(f, msg);
        fputs("</error>\n", f);
    } else if (junit_skipped(g)) {
        fputs("      <skipped message=\"", f);
        xml_text(f, g->lr_from == 3 ? "no verdict: no matched cell finished in the baseline"
                                    : "no verdict: nothing of this group could be judged (no data on one side)");
        fputs("\"/>\n", f);
    }
}

/* A group's test case: its outcome and the row of the table as its output. */
static void junit_group(const ob_cmp_group *g, FILE *f)
{
    junit_group_open(g, f);
    row_text r;
    row_texts(g, &r);
    junit_group_outcome(g, f);
    fputs("      <system-out>", f);
    char line[768];
    snprintf(line, sizeof line, "%d matched cells; lr %s; final loss %s; held-out %s; step time %s; memory %s",
             g->n_matched, r.lr, r.l, r.m, r.t, r.mem);
    xml_text(f, line);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the cells on one side only, a failure with --strict,
 * each cell a line of its output. */
static void junit_one_sided(const ob_compare *c, FILE *f)
{
    fputs("    <testcase classname=\"optbench.cells\" name=\"cells on one side only\" time=\"0\">\n", f);
    char msg[256];
    snprintf(msg, sizeof msg, "%d cells only in the baseline, %d only in the candidate", c->n_only_base,
             c->n_only_cand);
    if (c->opts.strict) {
        fputs("      <failure type=\"missing\" message=\"", f);
        xml_text(f, msg);
        fputs("\"/>\n", f);
    }
    fputs("      <system-out>", f);
    xml_text(f, msg);
    fputs("\n", f);
    for (int k = 0; k < 2; k++) {
        const ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        for (int i = 0; i < n; i++) {
            snprintf(msg, sizeof msg, "only in the %s: %s %s lr=%g seed=%lld (%s)\n",
                     k ? "candidate" : "baseline", l[i].workload, l[i].optimizer, l[i].lr,
                     (long long)l[i].seed, l[i].status);
            xml_text(f, msg);
        }
    }
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the note on matched cells run on different devices. */
static void junit_devices(const ob_compare *c, FILE *f)
{
    char note[768];
    device_note(c, note, sizeof note);
    fputs("    <testcase classname=\"optbench.devices\" name=\"cells run on different devices\" time=\"0\">\n"
          "      <system-out>note: ", f);
    xml_text(f, note);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the note msn: why some means read "inconclusive". */
static void junit_mean_shift(const char *msn, FILE *f)
{
    fputs("    <testcase classname=\"optbench.step_time\" name=\"mean step time moved in every group\" "
          "time=\"0\">\n      <system-out>note: ", f);
    xml_text(f, msn);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the candidate's confirmation runs not finished, an error. */
static void junit_confirm_unfinished(const ob_compare *c, FILE *f)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%d confirmation run%s of the candidate %s not finished (its confirmation stage "
             "was stopped): no verdict; finish it with the same run command and --resume",
             c->n_confirm_cand_unfinished, c->n_confirm_cand_unfinished == 1 ? "" : "s",
             c->n_confirm_cand_unfinished == 1 ? "is" : "are");
    fputs("    <testcase classname=\"optbench.confirm\" name=\"confirmation runs not finished\" time=\"0\">\n"
          "      <error type=\"not finished\" message=\"", f);
    xml_text(f, msg);
    fputs("\">", f);
    xml_text(f, msg);
    fputs("</error>\n    </testcase>\n", f);
}

/* The test case of the matched cells the baseline did not finish, a failure with --strict. */
static void junit_base_unfinished(const ob_compare *c, FILE *f)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%d matched cells did not finish in the baseline: not judged",
             c->n_base_unfinished);
    fputs("    <testcase classname=\"optbench.baseline\" name=\"baseline cells not finished\" time=\"0\">\n", f);
    if (c->opts.strict) {
        fputs("      <failure type=\"incomplete\" message=\"", f);
        xml_text(f, msg);
        fputs("\"/>\n", f);
    }
    fputs("      <system-out>", f);
    xml_text(f, msg);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the notes. */
static void junit_notes(const char *notes, FILE *f)
{
    fputs("    <testcase classname=\"optbench.notes\" name=\"notes\" time=\"0\">\n      <system-out>", f);
    xml_text(f, notes);
    fputs("</system-out>\n    </testcase>\n", f);
}

void ob_compare_junit(const ob_compare *c, FILE *f)
{
    junit_report jr;
    junit_gather(c, &jr);
    junit_count(c, &jr);
    junit_header(&jr, f);
    for (int i = 0; i < c->n_g; i++) junit_group(&c->g[i], f);
    if (jr.one_sided) junit_one_sided(c, f);
    /* notes, where a CI's test view shows them: the devices, and why some means read "inconclusive" */
    if (c->n_device_differs) junit_devices(c, f);
    if (jr.mean_note) junit_mean_shift(jr.msn, f);
    if (jr.confirm_unfinished) junit_confirm_unfinished(c, f);
    if (jr.base_unfinished) junit_base_unfinished(c, f);
    if (jr.any_notes) junit_notes(jr.notes, f);
    free(jr.notes);
    fputs("  </testsuite>\n</testsuites>\n", f);
}

/* Free text in a Markdown paragraph: the characters GitHub would take for
 * markup backslash-escaped, < and & as entities, control characters and bytes
 * that are not UTF-8 as ' ' and '?'. */
static void md_para(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char u = (unsigned char)*s;
        if (u >= 0x80) {
            put_utf8(f, &s);
        } else if (u < 0x20 || u == 0x7F) {
            fputc(' ', f);
        } else if (*s == '<') {
            fputs("&lt;", f);
        } else if (*s == '&') {
            fputs("&amp;", f);
        } else {
            if (strchr("\\`*_[]|~", *s)) fputc('\\', f);
            fputc(*s, f);
        }
    }
}

void ob_compare_markdown_error(const char *msg, const char *base_name, const char *cand_name, FILE *f)
{
    fputs("## optbench compare: no verdict\n\ncompare could not run: ", f);
    md_para(f, msg);
    fputs("\n\n", f);
    if (base_name || cand_name) {
        fputs("Baseline ", f);
        md_para(f, base_name ? base_name : "(not given)");
        fputs(", candidate ", f);
        md_para(f, cand_name ? cand_name : "(not given)");
        fputs(". ", f);
    }
    fputs("Nothing was judged (exit status 2).\n", f);
}

void ob_compare_junit_error(const char *msg, FILE *f)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<testsuites name=\"optbench compare\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
          "  <testsuite name=\"optbench compare\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
          "    <testcase classname=\"optbench.compare\" name=\"compare could not run\" time=\"0\">\n"
          "      <error type=\"no verdict\" message=\"",
          f);
    xml_text(f, msg);
    fputs("\">", f);
    xml_text(f, msg);
    fputs("</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n", f);
}
