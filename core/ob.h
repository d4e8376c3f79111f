/* core/ob.h - status codes, error values and the OB_HD portability macro.
 *
 * Every fallible library function returns an ob_status and, on failure, fills
 * an ob_err with a message a user can act on (SQLite style: the code and the
 * message travel together). Only main() turns a status into an exit code:
 * OB_ERR_INPUT (bad input from the user: flags, config, files) exits 2,
 * everything else 1.
 */
#ifndef OB_CORE_OB_H
#define OB_CORE_OB_H

#include <stddef.h>
#include <stdint.h>

/* OB_HD marks the small static inline functions that the CPU and CUDA
 * backends share (the update rules of optimizers/rules.h, the random
 * numbers, ...). On the CPU they are always inlined: the CPU's fused step
 * (rule_span in kernels/cpu/backend_cpu.c) is a switch of many specialized
 * loops, and gcc's inlining budget for one function runs out as cases are
 * added, leaving some rule a call per element that no longer vectorizes
 * (AdamW's and RMSprop's steps ran 8 and 15 times slower that way). */
#if defined(__CUDACC__)
#define OB_HD __host__ __device__
#elif defined(__GNUC__)
#define OB_HD __attribute__((always_inline))
#else
#define OB_HD
#endif

#if defined(__GNUC__)
#define OB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OB_PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ob_status {
    OB_OK = 0,
    OB_ERR_INTERNAL = 1,   /* a bug or an unexpected library failure */
    OB_ERR_INPUT = 2,      /* the user's input is wrong: exit status 2 */
    OB_ERR_IO = 3,         /* a file could not be read or written */
    OB_ERR_DB = 4,         /* SQLite reported an error */
    OB_ERR_BACKEND = 5,    /* the compute backend (CUDA, BLAS) failed */
    OB_ERR_NOMEM = 6,      /* an allocation failed */
    OB_ERR_UNSUPPORTED = 7,/* the backend or build lacks this feature */
    OB_ERR_INTERRUPTED = 8 /* a signal asked us to stop */
} ob_status;

typedef struct ob_err {
    ob_status status;
    char msg[1024];
} ob_err;

/* Fill e (which may be NULL) and return s. */
ob_status ob_fail(ob_err *e, ob_status s, const char *fmt, ...) OB_PRINTF(3, 4);

/* Prepend context ("while reading X: ") to an existing message; returns e->status. */
ob_status ob_err_prefix(ob_err *e, const char *fmt, ...) OB_PRINTF(2, 3);

void ob_err_clear(ob_err *e);

/* Internal failures carry the source location; user-input failures do not. */
#define OB_FAIL_INTERNAL(e, s, ...) \
    ob_fail_at((e), (s), __FILE__, __LINE__, __VA_ARGS__)
ob_status ob_fail_at(ob_err *e, ob_status s, const char *file, int line,
                     const char *fmt, ...) OB_PRINTF(5, 6);

#define OB_TRY(expr)                          \
    do {                                      \
        ob_status ob_try_s_ = (expr);         \
        if (ob_try_s_ != OB_OK) return ob_try_s_; \
    } while (0)

/* Length of the well-formed UTF-8 sequence at s (1 to 4), 0 when it is not
 * one (overlong forms, surrogates and code points past U+10FFFF are not). */
int ob_utf8_len(const unsigned char *s);
/* -1 when s is UTF-8 text, else the offset of its first bad byte. */
long ob_utf8_check(const char *s);
/* s as a message may quote it, in buf (n >= 8): well-formed UTF-8 text kept,
 * control characters and bad bytes as \xNN, cut with "..." to fit. Returns buf. */
const char *ob_printable(const char *s, char *buf, size_t n);

/* Exit status main() uses for a status. */
int ob_exit_code(ob_status s);

const char *ob_status_name(ob_status s);

#ifdef __cplusplus
}
#endif
#endif
