/* harness/cmd_report.c - `optbench report`: turn a results database into a
 * report folder (CSV tables, gnuplot scripts, PNG/SVG figures, summary.md,
 * index.html). The work is in plots/report.c; this file parses the flags. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hparams.h"
#include "harness/commands.h"
#include "harness/signals.h"
#include "plots/figures.h"
#include "plots/report.h"

static void report_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench report --db FILE --out DIR [options]\n\n"
            "Writes CSV tables, one gnuplot script per figure, the figures as PNG, SVG and PDF (when\n"
            "gnuplot is installed), summary.md, index.html and summary.tex (the ranked tables for\n"
            "LaTeX) into DIR, and prints each workload's ranking. Confirmation runs (run\n"
            "--confirm-seeds) get tables of their own.\n\n"
            "options:\n"
            "  --db FILE              results database written by `optbench run`\n"
            "  --out DIR              report folder (created when missing)\n"
            "  --benchmark ID|latest|all  only the runs of benchmark ID, or of the latest\n"
            "                         benchmark; 'all' (the default): every run, the latest run\n"
            "                         of each cell\n"
            "  --target WORKLOAD=LOSS target loss for time to target (repeatable); default: 1.1 x\n"
            "                         the best upper-median final loss (of a majority of seeds), or\n"
            "                         halfway from the loss before training to it when lower\n"
            "  --eval-target WORKLOAD=VALUE  held-out target for the held-out time to target, a\n"
            "                         loss (a metric with --heldout-on metric; workloads evaluated\n"
            "                         during training, eval_every > 0; repeatable); default: as\n"
            "                         --target's, from the final held-out values and those at step 0\n"
            "  --heldout-on loss|metric  what the held-out target is on: the held-out loss\n"
            "                         (default) or the held-out metric (accuracy, higher is better;\n"
            "                         default target 0.9 x the best lower-median final metric)\n"
            "  --tol FRACTION         tolerance of the lr sensitivity range (default 0.1)\n"
            "  --tol-of best|progress what --tol is a fraction of: the best median final loss\n"
            "                         (default), or the progress from the loss before training to\n"
            "                         it, which adding a constant to the loss leaves where it is\n"
            "  --tau-max X            end of the performance profile's tau range (default 4; above 16 the\n"
            "                         figures draw tau on a log2 axis)\n"
            "  --profile-by time|steps  what the performance profile compares (default time)\n"
            "  --profile-on train|heldout  the target of the performance profile: the training\n"
            "                         loss's (default) or the held-out target's (AlgoPerf's, on\n"
            "                         --heldout-on's quantity; only workloads evaluated during\n"
            "                         training enter)\n"
            "  --jobs N               run up to N gnuplot processes at once (default: the number of\n"
            "                         online CPUs, at most 8); gnuplot.log lists their messages in\n"
            "                         figure order all the same\n"
            "  --pdf-width text|column|INCHES\n"
            "                         width of the PDF figures: 'text' (default) 6.5 in, a page's\n"
            "                         text width, with 8-point text; 'column' 3.3 in, a column of a\n"
            "                         two-column paper, with 6-point text, smaller marks, a taller\n"
            "                         frame and no title (style.gp's PDF_TITLES = 1 keeps it); or\n"
            "                         a width in inches from 1 to 20 (under 4.5 laid out as a\n"
            "                         column); style.gp's PDF_WIDTH, which each NAME.gp follows\n"
            "  --no-render            write the scripts but do not run gnuplot\n\n"
            "SIGINT or SIGTERM while the figures render ends gnuplot and exits 130 / 143,\n"
            "leaving DIR as it was; while the files move into DIR it waits until DIR holds\n"
            "the whole report, then exits so.\n");
}

/* every option, for the near-miss hint, those that take a value first;
 * --help and --no-render (no value, the last) are handled before the value
 * is checked */
static const char *const report_opts[] = {"--db",      "--out",  "--benchmark",  "--target", "--eval-target", "--tol",
                                          "--tol-of",  "--tau-max", "--jobs",    "--profile-by", "--profile-on",
                                          "--heldout-on", "--pdf-width",
                                          "--no-render"};
#define N_REPORT_OPTS (int)(sizeof report_opts / sizeof report_opts[0])

/* The targets of one flag (--target, --eval-target): WORKLOAD=LOSS (--eval-target: VALUE) each */
typedef struct report_targets {
    const char *wl[64], *given[64]; /* given: the loss as given */
    double val[64];
    char *owned[64];
    int n;
} report_targets;

/* flag's value v into t; 0, or the exit status of the message printed */
static int parse_target(const char *flag, const char *v, report_targets *t)
{
    const char *eq = strrchr(v, '='); /* a label may hold '=': "quadratic cond=100=0.05" */
    const int ev = !strcmp(flag, "--eval-target");
    double x;
    if (!eq || eq == v || ob_parse_double(eq + 1, &x) != 0)
        return ob_cli_error(2, "report: %s '%s' is not WORKLOAD=%s (e.g. %s quadratic=0.05)", flag, v,
                            ev ? "VALUE" : "LOSS", flag);
    if (!isfinite(x))
        return ob_cli_error(2, "report: %s '%s': the %s must be a finite number (e.g. %s %.*s=0.05)", flag, v,
                            ev ? "target" : "loss", flag, (int)(eq - v), v);
    if (t->n >= 64) return ob_cli_error(2, "report: at most 64 %s", flag);
    for (int k = 0; k < t->n; k++)
        if (strlen(t->wl[k]) == (size_t)(eq - v) && !strncmp(t->wl[k], v, (size_t)(eq - v)))
            return ob_cli_error(2, "report: %s for %s is given twice (%s and %s); give it once", flag, t->wl[k],
                                t->given[k], eq + 1);
    if (!(t->owned[t->n] = strndup(v, (size_t)(eq - v))))
        return ob_cli_error(ob_exit_code(OB_ERR_NOMEM), "report: out of memory");
    t->wl[t->n] = t->owned[t->n];
    t->given[t->n] = eq + 1;
    t->val[t->n++] = x;
    return 0;
}

/* --benchmark's value v into o: a benchmark id, 'latest' (-1) or 'all'
 * (0); 0, or the exit status of the message printed */
static int parse_benchmark(const char *v, ob_report_opts *o)
{
    double x;
    if (!strcmp(v, "latest")) o->benchmark_id = -1;
    else if (!strcmp(v, "all")) o->benchmark_id = 0;
    else if (ob_parse_double(v, &x) == 0 && x >= 1 && x == (double)(long long)x) o->benchmark_id = (int64_t)x;
    else return ob_cli_error(2, "report: --benchmark '%s' is not a benchmark id, 'latest' or 'all'", v);
    return 0;
}

/* The value v of an option a that takes a number (--tol, --tau-max,
 * --jobs; --pdf-width also 'text' or 'column') into o; 0, or the exit
 * status of the message printed */
static int parse_number(const char *a, const char *v, ob_report_opts *o)
{
    double x;
    if (!strcmp(a, "--tol")) {
        if (ob_parse_double(v, &o->stats.tol) != 0 || !(o->stats.tol >= 0) || !isfinite(o->stats.tol))
            return ob_cli_error(2, "report: --tol '%s' is not a finite non-negative number (e.g. 0.1)", v);
    } else if (!strcmp(a, "--tau-max")) {
        if (ob_parse_double(v, &o->stats.tau_max) != 0 || !(o->stats.tau_max > 1) || !isfinite(o->stats.tau_max))
            return ob_cli_error(2, "report: --tau-max '%s' is not a finite number above 1 (e.g. 4)", v);
    } else if (!strcmp(a, "--jobs")) {
        if (ob_parse_double(v, &x) != 0 || !(x >= 1 && x <= 1024) || x != (double)(int)x)
            return ob_cli_error(2, "report: --jobs '%s' is not a whole number from 1 to 1024", v);
        o->jobs = (int)x;
    } else if (!strcmp(a, "--pdf-width")) {
        if (!strcmp(v, "text")) o->pdf_width = OB_PDF_TEXT_WIDTH;
        else if (!strcmp(v, "column")) o->pdf_width = OB_PDF_COLUMN_WIDTH;
        else if (ob_parse_double(v, &x) == 0 && x >= 1 && x <= 20) o->pdf_width = x;
        else
            return ob_cli_error(2, "report: --pdf-width '%s' is not 'text', 'column' or a width in inches from 1 to 20",
                                v);
    }
    return 0;
}

/* The value v of an option a that picks one of two words (--tol-of,
 * --profile-on, --heldout-on, --profile-by) into its switch in st: 0 for
 * the first word, 1 for the second; 0, or the exit status of the message
 * printed */
static int parse_choice(const char *a, const char *v, ob_stats_opts *st)
{
    if (!strcmp(a, "--tol-of")) {
        if (!strcmp(v, "best")) st->tol_of_progress = 0;
        else if (!strcmp(v, "progress")) st->tol_of_progress = 1;
        else return ob_cli_error(2, "report: --tol-of '%s' is not 'best' or 'progress'", v);
    } else if (!strcmp(a, "--profile-on")) {
        if (!strcmp(v, "train")) st->profile_heldout = 0;
        else if (!strcmp(v, "heldout")) st->profile_heldout = 1;
        else return ob_cli_error(2, "report: --profile-on '%s' is not 'train' or 'heldout'", v);
    } else if (!strcmp(a, "--heldout-on")) {
        if (!strcmp(v, "loss")) st->heldout_metric = 0;
        else if (!strcmp(v, "metric")) st->heldout_metric = 1;
        else return ob_cli_error(2, "report: --heldout-on '%s' is not 'loss' or 'metric'", v);
    } else if (!strcmp(a, "--profile-by")) {
        if (!strcmp(v, "time")) st->profile_by_steps = 0;
        else if (!strcmp(v, "steps")) st->profile_by_steps = 1;
        else return ob_cli_error(2, "report: --profile-by '%s' is not 'time' or 'steps'", v);
    }
    return 0;
}

/* Option a, one that takes a value, with its value v into o, tt (--target)
 * and et (--eval-target); 0, or the exit status of the message printed */
static int report_option(const char *a, const char *v, ob_report_opts *o, report_targets *tt, report_targets *et)
{
    if (!strcmp(a, "--db")) o->db_path = v;
    else if (!strcmp(a, "--out") && !*v) /* an unset shell variable, say */
        return ob_cli_error(2, "report: --out is empty: give the report's folder (e.g. --out report/)");
    else if (!strcmp(a, "--out")) o->out_dir = v;
    else if (!strcmp(a, "--benchmark")) return parse_benchmark(v, o);
    else if (!strcmp(a, "--target") || !strcmp(a, "--eval-target"))
        return parse_target(a, v, !strcmp(a, "--target") ? tt : et);
    else if (!strcmp(a, "--tol") || !strcmp(a, "--tau-max") || !strcmp(a, "--jobs") || !strcmp(a, "--pdf-width"))
        return parse_number(a, v, o);
    else return parse_choice(a, v, &o->stats);
    return 0;
}

/* The command line into o, tt and et, in order, up to the first bad option
 * or value, or up to --help, whose text is then printed (*help = 1: report
 * is done); 0, or the exit status of the message printed */
static int read_report_flags(int argc, char **argv, ob_report_opts *o, report_targets *tt, report_targets *et,
                             int *help)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            report_usage(stdout);
            *help = 1;
            return 0;
        } else if (!strcmp(a, "--no-render")) {
            o->no_render = 1;
            continue;
        }
        if (ob_cli_valued_option("report", argc, argv, i, report_opts, N_REPORT_OPTS, N_REPORT_OPTS - 1)) return 2;
        i++;
        const int rc = report_option(a, v, o, tt, et);
        if (rc != 0) return rc;
    }
    return 0;
}

/* 0 where o names both the database and the report folder; else the exit
 * status of the message that says which is missing */
static int check_required(const ob_report_opts *o)
{
    if (!o->db_path || !o->out_dir)
        return ob_cli_error(2, "report: %s (see optbench report --help)",
                            !o->db_path && !o->out_dir ? "--db and --out are required"
                            : !o->db_path             ? "--db FILE is required (the results database)"
                                                      : "--out DIR is required (the report folder)");
    return 0;
}

/* The line that says what the report res in out_dir holds, and where to
 * open it */
static void print_summary(const char *out_dir, const ob_report_result *res)
{
    char dir[1024];
    ob_path_trim(out_dir, dir, sizeof dir);
    char skipped[64] = "";
    if (res->n_skipped) snprintf(skipped, sizeof skipped, ", %d not drawn (index.html says why)", res->n_skipped);
    printf("optbench: report of %d runs (%d workload x optimizer groups) in %s: %d figures, %d rendered"
           "%s%s; open %s/index.html\n",
           res->n_runs, res->n_groups, dir, res->n_figures, res->n_rendered, skipped,
           res->gnuplot_found ? "" : " (gnuplot not installed)", dir);
}

/* Writes the report o asks for, with the targets tt and et, and prints its
 * summary line; the exit status: 1 where a figure failed to render, that
 * of the message printed where there is no report */
static int write_report(ob_report_opts *o, report_targets *tt, report_targets *et)
{
    o->ranking = stdout;
    o->stats.n_targets = tt->n;
    o->stats.target_wl = tt->wl;
    o->stats.target_val = tt->val;
    o->stats.n_ev_targets = et->n;
    o->stats.ev_target_wl = et->wl;
    o->stats.ev_target_val = et->val;
    ob_err e = {0};
    ob_report_result res;
    ob_status st = ob_report_write(o, &res, &e);
    if (st == OB_ERR_INTERRUPTED && res.stop_signal)
        /* as `run` does: 128 + the signal, which a shell reads as the stop */
        return ob_cli_error(ob_signal_exit_code(res.stop_signal), "report: %s; %s was left as it was", e.msg,
                            o->out_dir);
    if (st != OB_OK) return ob_cli_error(ob_exit_code(st), "report: %s", e.msg);
    print_summary(o->out_dir, &res);
    return res.n_render_failed ? 1 : 0;
}

int ob_cmd_report(int argc, char **argv)
{
    static const char *const single[] = {"--db", "--out", "--benchmark", "--tol", "--tol-of", "--tau-max",
                                         "--profile-by", "--profile-on", "--heldout-on", "--jobs", "--pdf-width"};
    ob_cli_once("report", argc, argv, single, OB_CLI_COUNT(single));
    ob_report_opts o;
    memset(&o, 0, sizeof o);
    ob_stats_opts_default(&o.stats);
    o.log = stdout;
    report_targets tt, et; /* --target, --eval-target */
    tt.n = et.n = 0;
    int help = 0;
    int rc = read_report_flags(argc, argv, &o, &tt, &et, &help);
    if (rc == 0 && !help) rc = check_required(&o);
    if (rc == 0 && !help) rc = write_report(&o, &tt, &et);
    for (int i = 0; i < tt.n; i++) free(tt.owned[i]);
    for (int i = 0; i < et.n; i++) free(et.owned[i]);
    return rc;
}
