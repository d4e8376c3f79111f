/* tests/check.h - a minimal test harness: CHECK macros and a closing
 * "N passed, N failed" line. Each test program returns 1 on any failure. */
#ifndef OB_TESTS_CHECK_H
#define OB_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ob_t_pass, ob_t_fail;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            ob_t_pass++;                                                     \
        } else {                                                             \
            ob_t_fail++;                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                    \
    } while (0)

#define CHECK_MSG(cond, ...)                                                 \
    do {                                                                     \
        if (cond) {                                                          \
            ob_t_pass++;                                                     \
        } else {                                                             \
            ob_t_fail++;                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                \
    do {                                                                     \
        double ob_a_ = (double)(a), ob_b_ = (double)(b);                     \
        CHECK_MSG(fabs(ob_a_ - ob_b_) <= (tol), "%s = %.9g, %s = %.9g (tol %g)", #a, ob_a_, #b, ob_b_, (double)(tol)); \
    } while (0)

/* A call returning ob_status that must succeed; prints the error otherwise. */
#define CHECK_OK(call, errp)                                                 \
    do {                                                                     \
        ob_status ob_s_ = (call);                                            \
        CHECK_MSG(ob_s_ == OB_OK, "%s", (errp)->msg);                        \
    } while (0)

/* The whole file at dir/name (dir NULL: name is the path), NUL-terminated;
 * *len (may be NULL) its size. NULL when it cannot be read. Free it. */
static inline char *check_slurp(const char *dir, const char *name, long *len)
{
    char p[1200];
    snprintf(p, sizeof p, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = b ? fread(b, 1, (size_t)n, f) : 0;
    if (b) b[got] = 0;
    fclose(f);
    if (len) *len = (long)got;
    return b;
}

/* Remove an SQLite database and the -wal and -shm files beside it. */
static inline void check_remove_db(const char *path)
{
    char p[1200];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", ob_t_pass, ob_t_fail);
    return ob_t_fail ? 1 : 0;
}

#endif
