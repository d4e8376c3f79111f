/* plots/figures.h - gnuplot scripts for the report's figures, and rendering.
 *
 * One script per figure, written next to the CSV tables it reads (the report
 * folder is gnuplot's working directory). Each script loads style.gp (terminal,
 * fonts, one colour, marker shape and dash type per optimizer), draws the
 * figure to NAME.png, then replots it to NAME.svg; a reader can edit and rerun
 * any of them with `gnuplot NAME.gp` inside the report folder.
 */
#ifndef OB_PLOTS_FIGURES_H
#define OB_PLOTS_FIGURES_H

#include <stdio.h>
#include <sys/types.h>

#include "core/ob.h"
#include "results/dataset.h"
#include "results/stats.h"

typedef struct ob_figure {
    char stem[256];    /* file name without extension: STEM.gp, STEM.png, STEM.svg, STEM.pdf */
    char title[256];   /* one line, for the report's text */
    char caption[3072]; /* how to read it (the lr figure's, with every note, takes about 1900; a
                         * figure of each optimizer's best configuration adds a note) */
    int wl;            /* workload label index, -1 for a figure over all workloads */
    int has_pdf;       /* set by the report after rendering: STEM.pdf was written */
} ob_figure;

typedef struct ob_figures {
    ob_figure *f;
    int n;
    /* figures that were not drawn because they would have no data: stem and
     * title as above, caption says why (the report shows it as a note) */
    ob_figure *skipped;
    int n_skipped;
} ob_figures;

/* The PDFs' width in inches: a page's text width, and a column of a
 * two-column paper (report --pdf-width text, column). */
#define OB_PDF_TEXT_WIDTH 6.5
#define OB_PDF_COLUMN_WIDTH 3.3

/* Write style.gp and every figure's script into dir. A figure that would
 * have no data gets no script; it is listed in out->skipped instead.
 * pdf_width: the PDFs' width in inches (style.gp's PDF_WIDTH); 0 for
 * OB_PDF_TEXT_WIDTH. */
ob_status ob_figures_write(const ob_dataset *d, const ob_stats *s, const char *dir, double pdf_width,
                           ob_figures *out, ob_err *e);
void ob_figures_free(ob_figures *f);

/* Path of gnuplot on PATH (buf), or 0 when it is not installed. */
int ob_gnuplot_find(char *buf, size_t n);
/* Appends to a gnuplot script the lines that replot its figure as STEM.pdf
 * (pdfcairo, PDF_WIDTH inches wide where the script set it, else
 * OB_PDF_TEXT_WIDTH) where the gnuplot running it has pdfcairo;
 * extra (NULL: none): gnuplot lines run before the replot, for that size. */
void ob_gp_write_pdf(FILE *f, const char *stem, const char *extra);
/* s as the body of a gnuplot double-quoted string (backslashes and double
 * quotes escaped, a newline as \n) into out, cut to fit n bytes. */
void ob_gp_str(const char *s, char *out, size_t n);
/* Run one script with dir as the working directory; its messages (or why
 * gnuplot could not be started) go to dir/gnuplot.log. Returns 0 on success. */
int ob_gnuplot_run(const char *gnuplot, const char *dir, const char *script_name);

/* At most this many gnuplot processes at once by default, however many CPUs:
 * each figure is one short single-threaded process, and past a few the
 * scripts' reading of the same CSV files is the bound. */
#define OB_GNUPLOT_JOBS_MAX 8
/* Default number of concurrent gnuplot processes: the online CPUs, 1 to
 * OB_GNUPLOT_JOBS_MAX. */
int ob_gnuplot_jobs_default(void);
/* The fork that starts gnuplot (fork; a test replaces it to make it fail). */
extern pid_t (*ob_gnuplot_fork)(void);
/* rc[i] while script i runs (not an exit status) */
#define OB_GNUPLOT_RUNNING (-2)
/* Run n scripts (names in dir, which is the working directory), up to jobs
 * at a time. rc[i]: script i's exit status (0 success, -1 when gnuplot could
 * not be started or was killed). Each process writes its messages to a file
 * of its own; at the end they are appended to dir/gnuplot.log in script
 * order, so the log reads as if the scripts had run one after another.
 * When fork fails with EAGAIN (a limit on processes) or ENOMEM while some of
 * them run, the script is started again once one of those has ended, so
 * fewer run at once; a script that cannot be started otherwise gets rc -1
 * and "SCRIPT: could not start gnuplot: REASON" in its place in the log.
 * SIGINT and SIGTERM (unless ignored) are caught while they run: the running
 * processes are then ended and waited for, *stop_signal is set to the signal
 * and the result is OB_ERR_INTERRUPTED (rc[i] of the scripts not finished:
 * OB_GNUPLOT_RUNNING); the previous handlers are restored before it returns.
 * It reaps any child process that ends meanwhile: call it where the process
 * has no other children to wait for. */
ob_status ob_gnuplot_run_all(const char *gnuplot, const char *dir, char *const *scripts, int n, int jobs, int *rc,
                             int *stop_signal, ob_err *e);

#endif
