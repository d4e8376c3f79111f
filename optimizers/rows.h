/* optimizers/rows.h - files of numeric rows (replay inputs, Newton-Schulz
 * coefficient files), read through libcsv.
 *
 * Every line is one row; blank lines and lines starting with '#' are
 * skipped. Each field must be a finite number: anything else is
 * OB_ERR_INPUT naming file, line and column ("grads.csv:3: column 5: 'x' is
 * not a number").
 */
#ifndef OB_OPTIMIZERS_ROWS_H
#define OB_OPTIMIZERS_ROWS_H

#include "core/ob.h"

typedef struct ob_rows {
    int n;          /* rows */
    int *len;       /* values in each row */
    int *line;      /* file line of each row (1-based) */
    double **v;     /* values of each row */
} ob_rows;

/* delim: ',' or '\t'. */
ob_status ob_rows_read(const char *path, char delim, ob_rows *out, ob_err *e);
void ob_rows_free(ob_rows *r);

#endif
