/* plots/doc.h - the report's writer of summary.md and index.html at once:
 * each paragraph, table and figure goes to both, so the two documents hold
 * the same text (Markdown for a CI job summary or a repository, HTML with
 * the figures inline for a browser). Internal to plots/. */
#ifndef OB_PLOTS_DOC_H
#define OB_PLOTS_DOC_H

#include <stdio.h>

#include "core/ob.h"
#include "plots/figures.h"

typedef struct ob_doc {
    FILE *md, *html;
    int in_row, col;            /* a table row is open; the next cell's column */
} ob_doc;

/* Text escaped for HTML (< > & "). */
void ob_doc_html_esc(FILE *f, const char *s);
/* Text of the user's own (a benchmark's name, a host name) in a Markdown
 * paragraph: the characters that would start emphasis, code, a link, HTML,
 * an entity, math or a table cell escaped with a backslash; a line break is
 * a space. */
void ob_doc_md_text_esc(FILE *f, const char *s);

/* A heading of level 1 to 6. */
void ob_doc_h(ob_doc *d, int level, const char *fmt, ...) OB_PRINTF(3, 4);
/* A paragraph (of any length). */
void ob_doc_p(ob_doc *d, const char *fmt, ...) OB_PRINTF(2, 3);
/* A table of n columns with their headers (the first two left-aligned, the
 * others right-aligned: numbers); then its cells row by row
 * (ob_doc_cell, ob_doc_row_end) and ob_doc_table_end. */
void ob_doc_table(ob_doc *d, int n, const char *const *hdr);
void ob_doc_cell(ob_doc *d, const char *fmt, ...) OB_PRINTF(2, 3);
void ob_doc_row_end(ob_doc *d);
void ob_doc_table_end(ob_doc *d);
/* Figure f with its caption: rendered 1 drawn, 0 not attempted (no
 * gnuplot, --no-render), -1 gnuplot failed (each says so). */
void ob_doc_figure(ob_doc *d, const ob_figure *f, int rendered);
/* A figure not drawn because it would have no data: its note. */
void ob_doc_skipped(ob_doc *d, const ob_figure *f);

#endif
