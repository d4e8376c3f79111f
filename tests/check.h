/* tests/check.h - a minimal test harness: CHECK macros and a closing
 * "N passed, N failed" line. Each test program returns 1 on any failure. */
#ifndef OB_TESTS_CHECK_H
#define OB_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", ob_t_pass, ob_t_fail);
    return ob_t_fail ? 1 : 0;
}

#endif
