/* core/ob.c - error values (see ob.h). */
#include "core/ob.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* full into dst (cap bytes): whole when it fits; else its start and its end
 * around " ... (N bytes left out) ... ", cut between UTF-8 characters, so
 * that what a long value pushed out is its middle, not the message's advice
 * at the end. */
static void fit_msg(char *dst, size_t cap, const char *full, size_t len)
{
    if (len < cap) {
        memcpy(dst, full, len + 1);
        return;
    }
    size_t head = cap * 5 / 8, tail = cap / 4;
    while (head > 0 && ((unsigned char)full[head] & 0xC0) == 0x80) head--;
    size_t from = len - tail;
    while (from < len && ((unsigned char)full[from] & 0xC0) == 0x80) from++;
    snprintf(dst, cap, "%.*s ... (%zu bytes left out) ... %s", (int)head, full, from - head, full + from);
}

ob_status ob_fail(ob_err *e, ob_status s, const char *fmt, ...)
{
    if (e) {
        va_list ap, again;
        va_start(ap, fmt);
        va_copy(again, ap);
        int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        if (n >= (int)sizeof e->msg) { /* too long: keep its start and its end */
            char *full = malloc((size_t)n + 1);
            if (full) {
                vsnprintf(full, (size_t)n + 1, fmt, again);
                fit_msg(e->msg, sizeof e->msg, full, (size_t)n);
                free(full);
            }
        }
        va_end(again);
        e->status = s;
    }
    return s;
}

ob_status ob_fail_at(ob_err *e, ob_status s, const char *file, int line,
                     const char *fmt, ...)
{
    if (e) {
        char body[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(body, sizeof body, fmt, ap);
        va_end(ap);
        snprintf(e->msg, sizeof e->msg, "%s (at %s:%d)", body, file, line);
        e->status = s;
    }
    return s;
}

ob_status ob_err_prefix(ob_err *e, const char *fmt, ...)
{
    if (!e) return OB_ERR_INTERNAL;
    char out[2 * sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, sizeof e->msg, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : ((size_t)n < sizeof e->msg ? (size_t)n : sizeof e->msg - 1);
    size_t rest = strlen(e->msg); /* < sizeof e->msg */
    memcpy(out + used, e->msg, rest + 1);
    fit_msg(e->msg, sizeof e->msg, out, used + rest); /* the message's end kept, as ob_fail keeps it */
    return e->status;
}

void ob_err_clear(ob_err *e)
{
    if (e) {
        e->status = OB_OK;
        e->msg[0] = '\0';
    }
}

int ob_exit_code(ob_status s)
{
    switch (s) {
    case OB_OK: return 0;
    case OB_ERR_INPUT: return 2;
    case OB_ERR_INTERRUPTED: return 130;
    default: return 1;
    }
}

const char *ob_status_name(ob_status s)
{
    switch (s) {
    case OB_OK: return "ok";
    case OB_ERR_INTERNAL: return "internal error";
    case OB_ERR_INPUT: return "bad input";
    case OB_ERR_IO: return "i/o error";
    case OB_ERR_DB: return "database error";
    case OB_ERR_BACKEND: return "backend error";
    case OB_ERR_NOMEM: return "out of memory";
    case OB_ERR_UNSUPPORTED: return "unsupported";
    case OB_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}

int ob_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    if (n == 0 || s[0] >= 0xF5) return 0;
    for (int k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0; /* overlong, surrogate */
    if (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0; /* overlong, > U+10FFFF */
    return n;
}

/* Bytes of the character at p as ob_printable writes it: k kept, or 4 (\xNN)
 * for the first byte alone; *keep says which. */
static size_t printable_len(const unsigned char *p, int *keep)
{
    int k = ob_utf8_len(p);
    /* C0 controls, DEL, and the C1 controls U+0080..U+009F (0xC2 0x80..0x9F);
     * and the characters that show as nothing: zero-width space, joiners and
     * direction marks U+200B..U+200F, line and paragraph separators U+2028
     * and U+2029, word joiner U+2060, the byte order mark U+FEFF */
    const int invisible = k == 3 && ((p[0] == 0xE2 && p[1] == 0x80 && ((p[2] >= 0x8B && p[2] <= 0x8F) ||
                                                                        p[2] == 0xA8 || p[2] == 0xA9)) ||
                                     (p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0xA0) ||
                                     (p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF));
    *keep = (k == 1 && *p >= 0x20 && *p != 0x7f) || (k > 1 && !(p[0] == 0xC2 && p[1] < 0xA0) && !invisible);
    return *keep ? (size_t)k : 4;
}

const char *ob_printable(const char *s, char *buf, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t total = 0;
    int keep;
    for (const unsigned char *q = p; *q;) {
        size_t need = printable_len(q, &keep);
        total += need;
        q += keep ? need : 1;
    }
    const int cut = total + 1 > n; /* else it all fits, with its NUL */
    size_t o = 0;
    while (*p) {
        size_t need = printable_len(p, &keep);
        if (cut && o + need + 4 > n) { /* room for "..." and the NUL */
            memcpy(buf + o, "...", 4);
            return buf;
        }
        if (!keep) snprintf(buf + o, 5, "\\x%02x", *p), p++;
        else memcpy(buf + o, p, need), p += need;
        o += need;
    }
    buf[o] = '\0';
    return buf;
}

long ob_utf8_check(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = ob_utf8_len(p);
        if (n == 0) return (long)(p - (const unsigned char *)s);
        p += n;
    }
    return -1;
}
