/* plots/doc.c - the report's two documents written side by side (see
 * doc.h): Markdown and HTML, so they always hold the same text and tables. */
#include "plots/doc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ob_doc_html_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void md_cell_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '\n') fputc(' ', f);
        else fputc(*s, f);
    }
}

/* (CommonMark shows an escaped ASCII punctuation character as itself.) */
void ob_doc_md_text_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r') {
            fputc(' ', f);
            continue;
        }
        if (strchr("\\`*_[]<>|~&!$", *s)) fputc('\\', f);
        fputc(*s, f);
    }
}

/* fmt formatted whole: into small when it fits, else into a buffer of its
 * own (*own, to free); truncated to small only when out of memory. */
static char *doc_vfmt(char *small, size_t n, char **own, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    const int len = vsnprintf(small, n, fmt, ap);
    *own = NULL;
    if (len >= 0 && (size_t)len >= n && (*own = malloc((size_t)len + 1)) != NULL)
        vsnprintf(*own, (size_t)len + 1, fmt, again);
    va_end(again);
    return *own ? *own : small;
}

void ob_doc_h(ob_doc *d, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(d->md, "\n%.*s %s\n\n", level, "######", buf);
    fprintf(d->html, "<h%d>", level);
    ob_doc_html_esc(d->html, buf);
    fprintf(d->html, "</h%d>\n", level);
}

void ob_doc_p(ob_doc *d, const char *fmt, ...)
{
    char small[4096], *own;
    va_list ap;
    va_start(ap, fmt);
    const char *buf = doc_vfmt(small, sizeof small, &own, fmt, ap);
    va_end(ap);
    fprintf(d->md, "%s\n\n", buf);
    fputs("<p>", d->html);
    ob_doc_html_esc(d->html, buf);
    fputs("</p>\n", d->html);
    free(own);
}

void ob_doc_table(ob_doc *d, int n, const char *const *hdr)
{
    fputs("|", d->md);
    for (int i = 0; i < n; i++) {
        fputc(' ', d->md);
        md_cell_esc(d->md, hdr[i]);
        fputs(" |", d->md);
    }
    fputs("\n|", d->md);
    for (int i = 0; i < n; i++) fputs(i < 2 ? " --- |" : " ---: |", d->md);
    fputs("\n", d->md);
    fputs("<table>\n<thead><tr>", d->html);
    for (int i = 0; i < n; i++) {
        fputs("<th>", d->html);
        ob_doc_html_esc(d->html, hdr[i]);
        fputs("</th>", d->html);
    }
    fputs("</tr></thead>\n<tbody>\n", d->html);
}

void ob_doc_cell(ob_doc *d, const char *fmt, ...)
{
    char small[1024], *own;
    va_list ap;
    va_start(ap, fmt);
    const char *buf = doc_vfmt(small, sizeof small, &own, fmt, ap);
    va_end(ap);
    if (!d->in_row) {
        fputs("|", d->md);
        fputs("<tr>", d->html);
        d->in_row = 1;
        d->col = 0;
    }
    fputc(' ', d->md);
    md_cell_esc(d->md, buf);
    fputs(" |", d->md);
    fputs(d->col < 2 ? "<td>" : "<td class=\"n\">", d->html);
    ob_doc_html_esc(d->html, buf);
    fputs("</td>", d->html);
    d->col++;
    free(own);
}

void ob_doc_row_end(ob_doc *d)
{
    fputs("\n", d->md);
    fputs("</tr>\n", d->html);
    d->in_row = 0;
}

void ob_doc_table_end(ob_doc *d)
{
    fputs("\n", d->md);
    fputs("</tbody></table>\n", d->html);
}

/* rendered: 1 drawn, 0 not attempted (no gnuplot, --no-render), -1 gnuplot failed */
void ob_doc_figure(ob_doc *d, const ob_figure *f, int rendered)
{
    if (rendered < 0) {
        fprintf(d->md, "*%s: gnuplot failed on `%s.gp`; its messages are in gnuplot.log.* %s\n\n", f->title,
                f->stem, f->caption);
        fprintf(d->html, "<figure class=\"missing\"><div>Not rendered: gnuplot failed on <code>%s.gp</code>; "
                         "its messages are in <a href=\"gnuplot.log\">gnuplot.log</a>.</div><figcaption><b>",
                f->stem);
    } else if (rendered) {
        fprintf(d->md, "![%s](%s.png)\n\n*%s* (`%s.gp`, [SVG](%s.svg)", f->title, f->stem, f->caption,
                f->stem, f->stem);
        if (f->has_pdf) fprintf(d->md, ", [PDF](%s.pdf)", f->stem);
        fprintf(d->md, ")\n\n");
        fprintf(d->html, "<figure><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", f->stem, f->stem);
        ob_doc_html_esc(d->html, f->title);
        fprintf(d->html, "\"></a><figcaption><b>");
    } else {
        fprintf(d->md, "*%s: not rendered; run `gnuplot %s.gp` in this folder.* %s\n\n", f->title,
                f->stem, f->caption);
        fprintf(d->html, "<figure class=\"missing\"><div>Not rendered: run <code>gnuplot %s.gp</code> "
                         "in this folder.</div><figcaption><b>", f->stem);
    }
    ob_doc_html_esc(d->html, f->title);
    fputs(".</b> ", d->html);
    ob_doc_html_esc(d->html, f->caption);
    fprintf(d->html, " <span class=\"src\">(<a href=\"%s.gp\">%s.gp</a>", f->stem, f->stem);
    if (rendered > 0 && f->has_pdf) fprintf(d->html, ", <a href=\"%s.pdf\">PDF</a>", f->stem);
    fprintf(d->html, ")</span></figcaption></figure>\n");
}

/* A figure that was not drawn because it would have no data: a note. */
void ob_doc_skipped(ob_doc *d, const ob_figure *f)
{
    fprintf(d->md, "*%s: %s*\n\n", f->title, f->caption);
    fputs("<p class=\"skipped\"><b>", d->html);
    ob_doc_html_esc(d->html, f->title);
    fputs(":</b> ", d->html);
    ob_doc_html_esc(d->html, f->caption);
    fputs("</p>\n", d->html);
}
