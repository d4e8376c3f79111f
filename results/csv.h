/* results/csv.h - CSV files through libcsv: a header row, text fields
 * quoted by csv_fwrite, numbers plain (the shortest form that reads back
 * exactly), an unknown value an empty field, +-inf "inf"/"-inf". */
#ifndef OB_RESULTS_CSV_H
#define OB_RESULTS_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/ob.h"

/* One CSV file being written. */
typedef struct ob_csv {
    FILE *f;
    int col;                  /* fields written in the current row */
    char path[1024];
} ob_csv;

ob_status ob_csv_open(ob_csv *c, const char *dir, const char *name, const char *const *header,
                      int n_header, ob_err *e);
void ob_csv_str(ob_csv *c, const char *s);     /* quoted by csv_fwrite; NULL is empty */
void ob_csv_num(ob_csv *c, double v);          /* NaN is empty, +-inf is "inf"/"-inf" */
void ob_csv_int(ob_csv *c, int64_t v);
void ob_csv_opt_int(ob_csv *c, int64_t v);     /* negative is empty (unknown) */
void ob_csv_row(ob_csv *c);                    /* end the row */
ob_status ob_csv_close(ob_csv *c, ob_err *e);  /* reports a failed write */

/* Shortest decimal text of v that reads back as v ("" for NaN, "inf"). */
void ob_fmt_num(double v, char *buf, size_t n);

/* A file-name-safe form of a label ("adam beta2=0.95" -> "adam_beta2-0.95"). */
void ob_slug(const char *label, char *out, size_t n);

#endif
