/* harness/cmd_compare.c - `optbench compare`: the nightly regression gate.
 * Exit status 0 (no regression), 1 (regression), 2 (no verdict: unusable
 * input, an unreadable database, a report file not written; the reports
 * given then say why). The judgement is results/compare.c; this file parses
 * flags and writes files. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/hparams.h"
#include "harness/commands.h"
#include "results/compare.h"
#include "results/store.h"

/* The options, the single list that both the parser and --help read: an
 * option added here is parsed (with or without a value, as arg says) and
 * documented at once. */
typedef enum copt_id {
    C_BASELINE, C_CANDIDATE, C_LOSS_TOL, C_LOSS_ABS_TOL, C_METRIC_TOL, C_TIME_TOL, C_TIME_MEAN_TOL, C_TIME_FLOOR, C_TIME_ACROSS, C_NO_MEMORY,
    C_STRICT, C_BASE_BENCH, C_CAND_BENCH, C_MARKDOWN, C_MARKDOWN_APPEND, C_JUNIT, C_QUIET, C_HELP
} copt_id;
#define C_COUNT_ (C_HELP + 1) /* the number of ids */

typedef struct copt {
    const char *name;
    const char *arg;  /* the value, as --help names it; NULL: a flag, which takes none */
    copt_id id;
    const char *help; /* '\n' starts an indented line; NULL: not listed (an alias) */
} copt;

static const copt copts[] = {
    {"--baseline", "A.db", C_BASELINE, "the accepted results database (required)"},
    {"--candidate", "B.db", C_CANDIDATE, "the results database judged against it (required)"},
    {"--loss-tol", "F", C_LOSS_TOL,
     "minimum relative change of final loss that counts (default 0.05;\n"
     "a fraction, or a percentage: 5%; above 1 only as a percentage)"},
    {"--loss-abs-tol", "X", C_LOSS_ABS_TOL,
     "minimum absolute change of final and held-out loss as well: the\n"
     "median of the seeds' differences (default 0: none); for losses\n"
     "that converge to float rounding (a noise-free quadratic at 1e-14)"},
    {"--metric-tol", "F", C_METRIC_TOL, "minimum absolute change of the held-out metric (default 0.01)"},
    {"--time-tol", "F|off", C_TIME_TOL,
     "minimum relative change of step time that counts (default 0.10,\n"
     "or 10%); off: step time is not judged, its mean neither (see above)"},
    {"--time-mean-tol", "F|off", C_TIME_MEAN_TOL,
     "minimum relative change of the mean step time that counts\n"
     "(default 0.20: the mean also carries a busy machine's short\n"
     "stalls); off: the mean is not judged, the median still is"},
    {"--time-floor", "MS", C_TIME_FLOOR,
     "cells whose median step time is under MS milliseconds on both\n"
     "sides are not timed, their mean neither (default 0.05: they\n"
     "time the harness)"},
    {"--time-across-devices", NULL, C_TIME_ACROSS,
     "judge step time also where a cell's two runs ran on different\n"
     "devices (default: left out, with a note)"},
    {"--no-memory", NULL, C_NO_MEMORY, "do not judge memory (default: any increase is worse)"},
    {"--strict", NULL, C_STRICT, "cells on one side only, and matched cells the baseline did not finish, fail the comparison"},
    {"--baseline-benchmark", "ID|latest|all", C_BASE_BENCH, "runs of the baseline to use (default all)"},
    {"--candidate-benchmark", "ID|latest|all", C_CAND_BENCH, "runs of the candidate to use (default all)"},
    {"--markdown", "FILE", C_MARKDOWN, "write a Markdown summary to FILE, replacing it"},
    {"--markdown-append", "FILE", C_MARKDOWN_APPEND,
     "append the Markdown summary to FILE (created if missing),\n"
     "e.g. $GITHUB_STEP_SUMMARY (shared by a CI step's commands)"},
    {"--junit", "FILE", C_JUNIT, "write JUnit XML, one test case per workload x optimizer"},
    {"--quiet", NULL, C_QUIET, "print only the verdict line"},
    {"--help", NULL, C_HELP, "print this text"},
    {"-h", NULL, C_HELP, NULL},
};

static const copt *find_copt(const char *a)
{
    for (size_t k = 0; k < sizeof copts / sizeof copts[0]; k++)
        if (!strcmp(a, copts[k].name)) return &copts[k];
    return NULL;
}

static void compare_usage(FILE *f)
{
    fprintf(f,
            "usage: optbench compare --baseline A.db --candidate B.db [options]\n\n"
            "Matches runs by workload, workload parameters (e.g. --set quadratic.noise=2 makes\n"
            "other cells), optimizer, hyperparameters, lr, seed and steps and reports, per workload x\n"
            "optimizer, whether final loss, held-out metric, step time and memory got worse,\n"
            "better or stayed within noise. Confirmation runs (run --confirm-seeds) are left out.\n"
            "A baseline cell without a match is paired with the one candidate cell, if exactly one,\n"
            "that differs from it only in hyperparameters (a setting added or a default changed\n"
            "between versions); a note names the values that differ.\n\n"
            "Final loss and held-out metric are judged at the baseline's best lr (column lr),\n"
            "paired over seeds: worse when the 95%% interval of the median change (order\n"
            "statistics, distribution-free) lies above 0 and the change exceeds the tolerance\n"
            "(with up to 8 seeds: worse on every seed; below 6 seeds that range is a weaker\n"
            "interval than 95%%, and a note says so). More seeds newly diverged there (or with a\n"
            "non-finite final loss) than newly converged is a regression, and so are more cells\n"
            "newly diverged than newly converged at the lrs below it (a larger lr trains: not the\n"
            "edge of stability moving); above it, a note. A diverged seed counts as the worst\n"
            "value on its side (final and held-out loss +inf, held-out metric -inf, as in the\n"
            "report); diverged on both sides, as no change. The held-out column names\n"
            "its quantity: a metric's change is absolute (accuracy +0.012), the held-out loss's,\n"
            "for a workload without a metric, relative (loss +1.2%%).\n"
            "Step time is each run's median (p50) step time, paired over the matched cells the\n"
            "same way: worse when the median slowdown exceeds --time-tol and shows on the cells\n"
            "together. Cells whose p90 step time is more than %.0f%% above their median on one\n"
            "side only (a busy machine) are left out; a group with mostly such cells is shown as\n"
            "'unsteady, not judged'. So is a group whose runs of one side ran at different\n"
            "speeds (the slowest run's median more than %.0f%% above the fastest's, and more than\n"
            "twice the other side's spread; a step's work does not depend on the lr or the seed):\n"
            "'unsteady across runs, not judged', its mean too. Each run's mean step time is\n"
            "judged alike, with its own --time-mean-tol, over the steady cells and the unsteady\n"
            "ones whose median held (within %.0f%%), so steps that are slow every so often (a\n"
            "sync or a refresh every k steps), which leave the median as it was, still count\n"
            "('; mean +40%% worse'). When every group's mean moved while the medians held, the\n"
            "means' verdicts are inconclusive, not failures: a busy machine's short stalls look\n"
            "like that. Cells under --time-floor are judged on neither. Each run records the\n"
            "share of its CPUs that other processes kept busy while it ran (runs.other_cpu); a\n"
            "cell where it was %.0f%% or more on either side is left out of step time and its\n"
            "mean, and a group with mostly such cells is 'on a busy machine, not judged'. Step\n"
            "times are comparable only between runs on the same, otherwise idle machine. Cells\n"
            "whose two runs recorded different devices (another backend, CPU, GPU or number of\n"
            "devices) are left out of step time, with a note (a group with only such cells:\n"
            "'other devices, not judged'; --time-across-devices judges them), and out of peak\n"
            "memory when the backends differ (CPU and GPU memory do not compare). Else use\n"
            "--time-tol off (or --time-mean-tol off, for the mean alone) when the baseline ran on\n"
            "another machine of the same kind (another runner of one type), when either ran\n"
            "beside work the share does not see (jobs on the host's other CPUs, which share its\n"
            "memory bandwidth; a GPU shared with other jobs), or when the note says every group\n"
            "moved together.\n\n"
            "options:\n",
            100 * OB_TIME_UNSTEADY, 100 * OB_TIME_UNSTEADY, 100 * OB_TIME_MEDIAN_HELD, 100 * OB_BUSY_SHARE);
    for (size_t k = 0; k < sizeof copts / sizeof copts[0]; k++) {
        const copt *op = &copts[k];
        if (!op->help) continue;
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", op->name, op->arg ? " " : "", op->arg ? op->arg : "");
        /* descriptions from column 22; a longer head gets a line of its own */
        if (strlen(head) <= 18) fprintf(f, "  %-18s  ", head);
        else fprintf(f, "  %s\n%22s", head, "");
        for (const char *h = op->help; *h; h++) {
            if (*h == '\n') fprintf(f, "\n%22s", "");
            else fputc(*h, f);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nexit status: 0 no regression, 1 regression, 2 no verdict (unusable input, an\n"
               "unreadable database, a report file or the standard output that could not be\n"
               "written; a side that holds part of its matrix, a shard's database or a merge that\n"
               "lacks a shard; a candidate whose runs are the baseline's own, the same database or\n"
               "a copy; or a candidate with cells not finished, a run stopped or a machine dead,\n"
               "where nothing that finished got worse). With 2 the reports given say why in place\n"
               "of a verdict (an unfinished candidate's keep the table of what finished).\n");
}

static int parse_bench(const char *v, int64_t *out)
{
    double x;
    if (!strcmp(v, "latest")) *out = -1;
    else if (!strcmp(v, "all")) *out = 0;
    else if (ob_parse_double(v, &x) == 0 && x >= 1 && x == (double)(long long)x) *out = (int64_t)x;
    else return -1;
    return 0;
}

/* The first error of a comparison that cannot give a verdict, kept for the
 * reports; later ones are dropped (the first is what a user fixes first). */
static void first_error(char *err, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void first_error(char *err, size_t n, const char *fmt, ...)
{
    if (err[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

typedef struct reports {
    const char *md, *md_append, *junit;
    const char *base, *cand; /* the databases' names, for the Markdown */
} reports;

/* Before appending to f (opened "a+"): a blank line when f holds text that
 * does not end with one, so the summary starts a block of its own. A file
 * that cannot be read back (not seekable) is appended to as it is. */
static void blank_line_before(FILE *f)
{
    char t[4];
    if (fseek(f, 0, SEEK_END) != 0) return;
    long end = ftell(f);
    long k = end < (long)sizeof t ? end : (long)sizeof t;
    if (k <= 0 || fseek(f, -k, SEEK_END) != 0) return;
    size_t got = fread(t, 1, (size_t)k, f);
    if (fseek(f, 0, SEEK_END) != 0 || got != (size_t)k) return; /* a seek between reading and writing */
    int nl = 0; /* newlines that end the file, CRs aside */
    for (long i = k - 1; i >= 0 && nl < 2 && (t[i] == '\n' || t[i] == '\r'); i--) nl += t[i] == '\n';
    if (nl < 2) fputs(nl ? "\n" : "\n\n", f);
}

/* The bytes of file from into file to (truncated, made when missing);
 * 0 when all are there, -1 (errno set) else. */
static int copy_file(const char *from, const char *to)
{
    const int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    const int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int rc = out < 0 ? -1 : 0;
    char buf[1 << 14];
    ssize_t n;
    while (rc == 0 && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno != EINTR) rc = -1;
            continue;
        }
        for (ssize_t off = 0; off < n && rc == 0;) {
            const ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno != EINTR) rc = -1;
            else if (w > 0) off += w;
        }
    }
    const int en = errno;
    if (out >= 0 && close(out) != 0 && rc == 0) rc = -1;
    close(in);
    if (rc) errno = en;
    return rc;
}

/* The working files (PATH.partXXXXXX, see write_reports) of report path
 * that a compare stopped by a SIGKILL or a crash left beside it: removed
 * once older than an hour (a compare renames its own within seconds of
 * making it, so an older one has no writer left, on this machine or
 * another sharing the folder). */
#define STALE_PART_S 3600
static void sweep_stale_parts(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash == dir) dir[1] = '\0'; /* "/x" */
    else if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    const size_t nb = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return;
    const time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (strlen(n) != nb + 11 || strncmp(n, base, nb) || strncmp(n + nb, ".part", 5)) continue;
        int made = 1; /* mkstemp's six letters and digits */
        for (int i = 0; i < 6; i++) made &= isalnum((unsigned char)n[nb + 5 + i]) != 0;
        char full[2100];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", dir, n);
        if (!made || lstat(full, &st) != 0 || !S_ISREG(st.st_mode) || now - st.st_mtime < STALE_PART_S) continue;
        if (unlink(full) == 0)
            fprintf(stderr, "optbench: note: compare: removed '%s', a report's working file that an interrupted "
                            "compare left (last written %.1f h ago)\n", full, (double)(now - st.st_mtime) / 3600.0);
    }
    closedir(d);
}

/* The report files of one compare, as write_reports opens, writes and
 * closes them: [0] --markdown, [1] --markdown-append, [2] --junit. */
typedef struct report_files {
    const char *paths[3];
    FILE *f[3];
    long start[3];   /* where each report starts: the append's earlier content stays */
    int append[3];   /* added to (--markdown-append), not replaced */
    int existed[3];
    int replace[3];  /* a file of its own (not a link, a device or a pipe): written beside, renamed over */
    /* a regular file replaced (--markdown, --junit) is written beside it and
     * renamed over it at the end: killed half way, the file is the earlier
     * night's or this one's, never empty or cut (one of the two reports may
     * be the earlier's still); one that cannot be written is removed, so
     * that it keeps no earlier verdict */
    char tmp[3][1100];
} report_files;

/* Makes the folder of report path when it is not there yet
 * (test-results/x.xml), as report makes its --out. 0 when it is there;
 * -1 (said, and first in why) when it cannot be made. */
static int make_report_folder(const char *path, char *why, size_t nwhy)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    struct stat sd;
    if (slash && slash != dir) {
        *slash = 0;
        ob_err me;
        if (stat(dir, &sd) != 0 && ob_mkdir_p(dir, &me) != OB_OK) {
            /* the reports that can be written say why this one is not, in the same words */
            ob_cli_error(2, "compare: cannot write '%s': %s", path, me.msg);
            first_error(why, nwhy, "cannot write '%s': %s", path, me.msg);
            return -1;
        }
    }
    return 0;
}

/* Opens report k of rf (its path given) for writing: never over a database
 * or a folder, its folder made, never one file for two reports. One that
 * cannot be opened is said, first in why, and left closed. */
static void open_report(report_files *rf, int k, const reports *r, char *why, size_t nwhy)
{
    static const char *const flags[3] = {"--markdown", "--markdown-append", "--junit"};
    const char *const inputs[2] = {r->base, r->cand};
    static const char *const what[2] = {"the baseline database", "the candidate database"};
    const char *path = rf->paths[k];
    char msg[1024];
    /* never over a database (one of the two, or any other) or a folder */
    if (ob_cli_output_check(msg, sizeof msg, flags[k], path, inputs, what, 2)) {
        ob_cli_error(2, "compare: %s", msg);
        first_error(why, nwhy, "%s", msg);
        return;
    }
    if (make_report_folder(path, why, nwhy)) return;
    /* opened without truncating, so that a file two reports name keeps
     * --markdown-append's earlier content */
    rf->append[k] = k == 1;
    struct stat sp;
    rf->existed[k] = lstat(path, &sp) == 0;
    /* a symlink (/dev/stdout is one) is written through, as is a file
     * with other names (a rename would part them) */
    rf->replace[k] = !rf->existed[k] || (S_ISREG(sp.st_mode) && sp.st_nlink == 1);
    /* --markdown-append's with O_APPEND, so that processes appending to
     * one file at once (a CI step summary) do not write over each other */
    const int fd = open(path, (k == 1 ? O_RDWR | O_APPEND : O_WRONLY) | O_CREAT | O_CLOEXEC, 0666);
    rf->f[k] = fd >= 0 ? fdopen(fd, k == 1 ? "a+" : "w") : NULL;
    if (!rf->f[k]) {
        int en = errno;
        if (fd >= 0) close(fd);
        ob_cli_error(2, "compare: cannot write '%s': %s", path, strerror(en));
        first_error(why, nwhy, "cannot write '%s': %s", path, strerror(en));
        return;
    }
    struct stat sk, sj;
    int shared = -1; /* two reports into one file would interleave */
    for (int j = 0; j < k && shared < 0; j++)
        if (rf->f[j] && fstat(fileno(rf->f[k]), &sk) == 0 && fstat(fileno(rf->f[j]), &sj) == 0 &&
            sk.st_dev == sj.st_dev && sk.st_ino == sj.st_ino)
            shared = j;
    if (shared >= 0) {
        snprintf(msg, sizeof msg, "%s and %s name one file '%s': give each report its own", flags[shared],
                 flags[k], path);
        ob_cli_error(2, "compare: %s", msg);
        first_error(why, nwhy, "%s", msg);
        /* the file gets one report, the first's, saying why there is no
         * verdict: added to, where one of the two is --markdown-append */
        fclose(rf->f[k]);
        /* the first is --markdown-append whenever one of the two is (it and --markdown are refused together) */
        rf->f[k] = NULL;
    }
}

/* Readies open report k of rf for its text: an append notes where its
 * report starts; a regular file replaced gets its working file beside it
 * (PATH.partXXXXXX, of the file's mode), else it is emptied where it can
 * be and written in place. */
static void prepare_report(report_files *rf, int k)
{
    struct stat sk;
    if (rf->append[k]) {
        if (fseek(rf->f[k], 0, SEEK_END) == 0) rf->start[k] = ftell(rf->f[k]);
        return;
    }
    if (rf->replace[k] && fstat(fileno(rf->f[k]), &sk) == 0 && S_ISREG(sk.st_mode)) {
        sweep_stale_parts(rf->paths[k]);
        snprintf(rf->tmp[k], sizeof rf->tmp[k], "%s.partXXXXXX", rf->paths[k]);
        const int fd = mkstemp(rf->tmp[k]);
        if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
        FILE *t = fd >= 0 ? fdopen(fd, "w+") : NULL;
        if (t) {
            fchmod(fd, sk.st_mode & 07777); /* the file's own mode (0666 less the umask when new) */
            fclose(rf->f[k]);
            rf->f[k] = t;
            /* made empty by the open above, and not there before: gone until the rename */
            if (!rf->existed[k]) unlink(rf->paths[k]);
            return;
        }
        /* no file beside it (a folder not writable): written in place */
        if (fd >= 0) {
            close(fd);
            unlink(rf->tmp[k]);
        }
        rf->tmp[k][0] = 0;
    }
    if (ftruncate(fileno(rf->f[k]), 0) != 0) clearerr(rf->f[k]); /* a pipe or a terminal: written from where it is */
}

/* Writes c's verdict (c NULL: err, why compare could not run) into each
 * open report of rf and flushes it to the disk. A report that cannot be
 * written is said, first in why, closed and removed. Returns 1 when one
 * could not be written. */
static int write_each(report_files *rf, const reports *r, const ob_compare *c, const char *err, char *why,
                      size_t nwhy)
{
    int failed = 0;
    for (int k = 0; k < 3; k++) {
        FILE *f = rf->f[k];
        if (!f) continue;
        if (rf->append[k]) blank_line_before(f);
        if (k < 2) {
            if (c) ob_compare_markdown(c, r->base, r->cand, f);
            else ob_compare_markdown_error(err, r->base, r->cand, f);
        } else {
            if (c) ob_compare_junit(c, f);
            else ob_compare_junit_error(err, f);
        }
        /* a file beside its target is on the disk before any is renamed
         * in: one that fails leaves no verdict in the others */
        if (fflush(f) != 0 || ferror(f) || (rf->tmp[k][0] && fsync(fileno(f)) != 0)) {
            int en = errno;
            ob_cli_error(2, "compare: cannot write '%s': %s", rf->paths[k], strerror(en));
            first_error(why, nwhy, "cannot write '%s': %s", rf->paths[k], strerror(en));
            fclose(f);
            rf->f[k] = NULL;
            if (rf->tmp[k][0]) { /* no earlier night's verdict stays in its place either */
                unlink(rf->tmp[k]);
                unlink(rf->paths[k]);
            }
            rf->tmp[k][0] = 0;
            failed = 1;
        }
    }
    return failed;
}

/* Writes the reports' text (write_each): c's verdict, unless a report
 * failed already (why given) or fails now, when every report written says
 * why there is no verdict in its place (emptied back to where it started). */
static void fill_reports(report_files *rf, const reports *r, const ob_compare *c, const char *err, char *why,
                         size_t nwhy)
{
    if (why[0] && c) { /* no verdict after all: the reports that can be written say why */
        c = NULL;
        err = why;
    }
    for (int pass = 0; pass < 2; pass++) {
        int failed = write_each(rf, r, c, err, why, nwhy);
        if (!failed || !c) break;
        /* a report not written beside verdicts written: those are replaced by
         * reports that say why there is no verdict */
        c = NULL;
        err = why;
        for (int k = 0; k < 3; k++) {
            if (!rf->f[k]) continue;
            clearerr(rf->f[k]);
            if (rf->start[k] >= 0 && ftruncate(fileno(rf->f[k]), (off_t)rf->start[k]) == 0)
                fseek(rf->f[k], rf->start[k], SEEK_SET);
        }
    }
}

/* Closes written report k of rf and renames its working file over its
 * path (or copies it in, where a rename cannot). One that fails is said,
 * first in why, and removed. */
static void close_report(report_files *rf, int k, char *why, size_t nwhy)
{
    int bad = fclose(rf->f[k]) != 0;
    /* a target that cannot be renamed over (a file mounted on its own
     * into a container: EBUSY) takes the text in place */
    if (!bad && rf->tmp[k][0] && rename(rf->tmp[k], rf->paths[k]) != 0) {
        bad = copy_file(rf->tmp[k], rf->paths[k]) != 0;
        if (!bad) unlink(rf->tmp[k]);
    }
    if (bad) {
        int en = errno;
        ob_cli_error(2, "compare: cannot write '%s': %s", rf->paths[k], strerror(en));
        first_error(why, nwhy, "cannot write '%s': %s", rf->paths[k], strerror(en));
        if (rf->tmp[k][0]) {
            unlink(rf->tmp[k]);
            unlink(rf->paths[k]);
        }
    }
}

/* Writes the reports asked for: c's verdict, or (c NULL) that compare could
 * not run because of err. Every report is opened, and then written and
 * flushed, before any is closed: when one cannot be opened or written, the
 * others say that compare could not run and why in place of the verdict (a
 * verdict never stands beside a report that is missing). Returns rc, or 2
 * when a report was not written; why then gets the first such failure. */
static int write_reports(const reports *r, const ob_compare *c, const char *err, int rc, char *why, size_t nwhy)
{
    report_files rf = {.paths = {r->md, r->md_append, r->junit}};
    why[0] = 0;
    for (int k = 0; k < 3; k++)
        if (rf.paths[k]) open_report(&rf, k, r, why, nwhy);
    for (int k = 0; k < 3; k++)
        if (rf.f[k]) prepare_report(&rf, k);
    fill_reports(&rf, r, c, err, why, nwhy);
    for (int k = 0; k < 3; k++)
        if (rf.f[k]) close_report(&rf, k, why, nwhy);
    return why[0] ? 2 : rc;
}

/* No verdict (exit status 2): the message, and the reports say so, so that a
 * report path never keeps an earlier night's verdict. */
static int no_verdict(const reports *r, const char *err)
{
    char why[1024];
    ob_cli_error(2, "compare: %s", err);
    return write_reports(r, NULL, err, 2, why, sizeof why);
}

/* An argument a that is no option of compare: the message (the options
 * that take a value named first) first in err. */
static void unknown_option(const char *a, char *err, size_t n)
{
    char msg[512];
    const char *names[sizeof copts / sizeof copts[0]];
    int nn = 0, nv = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < sizeof copts / sizeof copts[0]; k++)
            if ((copts[k].arg != NULL) == (pass == 0)) names[nn++] = copts[k].name;
        if (pass == 0) nv = nn;
    }
    ob_cli_option_error(msg, sizeof msg, "compare", a, names, nn, nv);
    first_error(err, n, "%s", msg + strlen("compare: "));
}

/* Tolerance option op (as given, a) of value v into o: a non-negative
 * number, for a relative change a fraction or a percentage (10%), for step
 * time also off (-1). A value that is none of these: first in err. */
static void set_tolerance(const copt *op, const char *a, const char *v, ob_compare_opts *o, char *err, size_t n)
{
    double x = 0;
    const int can_off = op->id == C_TIME_TOL || op->id == C_TIME_MEAN_TOL;
    /* a relative change: a fraction (0.1), or a percentage (10%) */
    const int relative = can_off || op->id == C_LOSS_TOL;
    int prc = 0;
    char num[64];
    const size_t lv = strlen(v);
    const int pct = relative && lv > 1 && lv < sizeof num && v[lv - 1] == '%';
    if (pct) {
        memcpy(num, v, lv - 1);
        num[lv - 1] = '\0';
    }
    if (can_off && !strcmp(v, "off")) x = -1;
    else if ((prc = ob_parse_double(pct ? num : v, &x)) == -2) {
        first_error(err, n, "%s '%s' is out of range (a double holds about 1e-308 to 1e308)", a, v);
        return;
    } else if (prc != 0 || !(x >= 0) || !isfinite(x)) {
        first_error(err, n, "%s '%s' is not a non-negative number%s%s", a, v,
                    relative ? " (a fraction, 0.1, or a percentage, 10%)" : "", can_off ? " or 'off'" : "");
        return;
    } else if (relative && !pct && x > 1) {
        /* 10 for 10%: a tolerance of 1000% would pass nearly anything */
        first_error(err, n, "%s %s is a fraction, %g%%: write %s%% for a percentage (or %g%% for "
                    "that many)", a, v, 100 * x, v, 100 * x);
        return;
    }
    if (pct) x /= 100;
    *(op->id == C_LOSS_TOL ? &o->loss_tol : op->id == C_LOSS_ABS_TOL ? &o->loss_abs_tol
      : op->id == C_METRIC_TOL ? &o->metric_tol
      : op->id == C_TIME_FLOOR ? &o->time_floor_ms : op->id == C_TIME_MEAN_TOL ? &o->time_mean_tol
      : &o->time_tol) = x;
}

/* Option op (as given, a) with its value v (NULL for a flag) into o, rep
 * and *quiet; a bad value first in err. Returns 1 where it was --help with
 * no error before it: the text is printed, and compare is done. */
static int apply_option(const copt *op, const char *a, const char *v, ob_compare_opts *o, reports *rep, int *quiet,
                        char *err, size_t n)
{
    switch (op->id) {
    case C_HELP:
        if (!err[0]) {
            compare_usage(stdout);
            return 1;
        }
        break;
    case C_BASELINE: rep->base = v; break;
    case C_CANDIDATE: rep->cand = v; break;
    case C_MARKDOWN: rep->md = v; break;
    case C_MARKDOWN_APPEND: rep->md_append = v; break;
    case C_JUNIT: rep->junit = v; break;
    case C_NO_MEMORY: o->check_memory = 0; break;
    case C_STRICT: o->strict = 1; break;
    case C_TIME_ACROSS: o->time_across_devices = 1; break;
    case C_QUIET: *quiet = 1; break;
    case C_LOSS_TOL:
    case C_LOSS_ABS_TOL:
    case C_METRIC_TOL:
    case C_TIME_FLOOR:
    case C_TIME_TOL:
    case C_TIME_MEAN_TOL: set_tolerance(op, a, v, o, err, n); break;
    case C_BASE_BENCH:
    case C_CAND_BENCH:
        if (parse_bench(v, op->id == C_BASE_BENCH ? &o->base_bench : &o->cand_bench))
            first_error(err, n, "%s '%s' is not an id, 'latest' or 'all'", a, v);
        break;
    }
    return 0;
}

/* The command line into o, rep and *quiet, the first error into err.
 * A usage error does not stop the scan: the report options after it still
 * name the reports that then say compare could not run. Only a report
 * option whose value is missing (the last argument) names no report. An
 * argument after an unknown option is read as an option or, if it is not
 * one, as the unknown option's value would be: an error either way, and
 * the first error is the one shown. Returns 1 where --help was printed. */
static int read_command_line(int argc, char **argv, ob_compare_opts *o, reports *rep, int *quiet, char *err,
                             size_t n)
{
    /* the value of each option so far: one given twice is an error, and keeps its first value (a report
     * option's first file gets the report that says why there is no verdict) */
    const char *given[C_COUNT_] = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const copt *op = find_copt(a);
        if (!op) {
            unknown_option(a, err, n);
            continue;
        }
        const char *v = NULL;
        if (op->arg) {
            char msg[512];
            if (ob_cli_value_error(msg, sizeof msg, "compare", argc, argv, i)) {
                first_error(err, n, "%s", msg + strlen("compare: "));
                continue;
            }
            v = argv[++i];
            if (given[op->id]) {
                char pa[96], pb[96];
                first_error(err, n, "%s is given twice ('%s' and '%s'): give it once", op->name,
                            ob_printable(given[op->id], pa, sizeof pa), ob_printable(v, pb, sizeof pb));
                continue;
            }
            given[op->id] = v;
        }
        if (apply_option(op, a, v, o, rep, quiet, err, n)) return 1;
    }
    return 0;
}

/* Both databases given, and at most one of --markdown and
 * --markdown-append: else the first error into err. */
static void check_command_line(const reports *rep, char *err, size_t n)
{
    if (!err[0] && (!rep->base || !rep->cand))
        first_error(err, n, "%s (see optbench compare --help)",
                    !rep->base && !rep->cand ? "--baseline and --candidate are required"
                    : !rep->base             ? "--baseline A.db is required (the accepted results database)"
                                             : "--candidate B.db is required (the results database judged)");
    if (rep->md && rep->md_append) /* each still gets the report that says so */
        first_error(err, n, "--markdown and --markdown-append both given: use one (--markdown "
                            "replaces FILE, --markdown-append adds to it)");
}

/* Compares the two databases rep names (opened read-only) with o into *c.
 * Where there is no comparison, the error is first in err. */
static ob_status compare_files(const reports *rep, ob_compare_opts *o, ob_compare *c, char *err, size_t n)
{
    ob_err e = {0};
    ob_store *sb = NULL, *sc = NULL;
    ob_status st = ob_store_open(rep->base, OB_STORE_READONLY, &sb, &e);
    if (st != OB_OK) {
        first_error(err, n, "baseline: %s", e.msg);
        return st;
    }
    st = ob_store_open(rep->cand, OB_STORE_READONLY, &sc, &e);
    if (st != OB_OK) {
        ob_store_close(sb);
        first_error(err, n, "candidate: %s", e.msg);
        return st;
    }
    /* one file on both sides (a CI script's variables that came out the
     * same): compare says so whether or not the file has a database id */
    struct stat s1, s2;
    o->same_file = stat(rep->base, &s1) == 0 && stat(rep->cand, &s2) == 0 && s1.st_dev == s2.st_dev &&
                   s1.st_ino == s2.st_ino;
    st = ob_compare_dbs(ob_store_db(sb), ob_store_db(sc), o, c, &e);
    ob_store_close(sb);
    ob_store_close(sc);
    if (st != OB_OK) first_error(err, n, "%s", e.msg); /* no verdict: never 1, a regression */
    return st;
}

/* The verdict line on the standard output: c's verdict and counts, or, a
 * report not written (why), no verdict and why. */
static void print_verdict(const ob_compare *c, const char *why)
{
    if (why[0]) {
        printf("optbench compare: no verdict (exit status 2): %s\n", why);
        return;
    }
    char unf[192] = "";
    if (c->n_base_unfinished)
        snprintf(unf, sizeof unf, "; %d matched cell%s not finished in the baseline", c->n_base_unfinished,
                 c->n_base_unfinished == 1 ? "" : "s");
    if (c->n_cand_unfinished) {
        const size_t l = strlen(unf);
        snprintf(unf + l, sizeof unf - l, "; %d not finished in the candidate", c->n_cand_unfinished);
    }
    printf("optbench compare: %s (%d matched cell%s, %d group%s: %d worse, %d better; %d cell%s only in the "
           "baseline, %d only in the candidate%s)\n",
           c->regression ? "REGRESSION"
           : c->incomplete ? "no verdict (exit status 2): the candidate is not finished, nothing finished got worse"
                           : "no regression", c->n_matched, c->n_matched == 1 ? "" : "s", c->n_g,
           c->n_g == 1 ? "" : "s", c->n_worse, c->n_better, c->n_only_base, c->n_only_base == 1 ? "" : "s",
           c->n_only_cand, unf);
}

int ob_cmd_compare(int argc, char **argv)
{
    /* the exit status is the verdict: a reader of the standard output that
     * stops early (`| head`) makes a write fail (no verdict, the reports say
     * so) rather than end the process with SIGPIPE's 141 */
    signal(SIGPIPE, SIG_IGN);
    ob_compare_opts o;
    ob_compare_opts_default(&o);
    reports rep = {0};
    int quiet = 0;
    char err[1024] = "";
    if (read_command_line(argc, argv, &o, &rep, &quiet, err, sizeof err)) return 0;
    check_command_line(&rep, err, sizeof err);
    if (err[0]) return no_verdict(&rep, err);
    ob_compare c;
    if (compare_files(&rep, &o, &c, err, sizeof err) != OB_OK) return no_verdict(&rep, err);
    /* the table first: standard output that cannot be written (a full
     * disk, a closed pipe) is no verdict, and the reports say so */
    if (!quiet) {
        ob_compare_print(&c, stdout);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            const int en = errno;
            ob_compare_free(&c);
            first_error(err, sizeof err, "cannot write the standard output: %s", strerror(en));
            return no_verdict(&rep, err);
        }
    }
    /* a report that cannot be written makes the status 2, and the reports
     * written then say why: the line says so in place of the verdict */
    char why[1024];
    int rc = write_reports(&rep, &c, NULL, c.regression ? 1 : c.incomplete ? 2 : 0, why, sizeof why);
    print_verdict(&c, why);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        /* the table went out, the reports and the status give the verdict:
         * only its line is lost (a reader that stopped reading) */
        const int en = errno;
        fprintf(stderr, "optbench: compare: the verdict line could not be written to the standard output (%s); the "
                        "exit status (%d) and the reports give the verdict\n", strerror(en), rc);
        clearerr(stdout);
    }
    ob_compare_free(&c);
    return rc;
}
