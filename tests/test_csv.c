/* tests/test_csv.c - the CSV writer (results/csv.h) end to end: a file's
 * exact bytes (text quoted by libcsv, numbers in their shortest form, an
 * unknown value empty, infinities), a close that is safe twice, a write that
 * fails reported at the close, a folder that does not exist; and ob_slug,
 * the file-name form of a label, at the edges of its character classes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "results/csv.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = calloc(1, 4096);
    size_t n = b ? fread(b, 1, 4095, f) : 0;
    (void)n;
    fclose(f);
    return b;
}

static void slug_is(const char *label, size_t n, const char *want)
{
    char out[64];
    memset(out, 'X', sizeof out);
    ob_slug(label, out, n);
    CHECK_MSG(!strcmp(out, want), "ob_slug('%s', %zu) = '%s', want '%s'", label, n, out, want);
}

static void test_slug(void)
{
    /* the first and last letter of each case and digit kept; '=' a '-' */
    slug_is("zZ Az=1 a/b", 64, "zZ_Az-1_a_b");
    slug_is("a0 9z AZ", 64, "a0_9z_AZ");
    slug_is("x.y-z_w", 64, "x.y-z_w");
    /* a run of other bytes one '_', none at the start */
    slug_is("  adam beta2=0.95", 64, "adam_beta2-0.95");
    slug_is("a,; \"b", 64, "a_b");
    slug_is("caf\xc3\xa9 au lait", 64, "caf_au_lait");
    slug_is("@`[{", 64, "");
    /* cut to the buffer, always terminated */
    slug_is("abcdef", 4, "abc");
    slug_is("abcdef", 1, "");
}

static void test_file(const char *dir)
{
    ob_csv c;
    ob_err e = {0};
    static const char *const hdr[] = {"name", "value", "count", "steps"};
    CHECK(ob_csv_open(&c, dir, "t.csv", hdr, 4, &e) == OB_OK);
    ob_csv_str(&c, "a,b \"q\"\nline");
    ob_csv_num(&c, 0.1);
    ob_csv_int(&c, -3);
    ob_csv_opt_int(&c, -1);
    ob_csv_row(&c);
    ob_csv_str(&c, NULL);
    ob_csv_num(&c, NAN);
    ob_csv_num(&c, INFINITY);
    ob_csv_num(&c, -INFINITY);
    ob_csv_row(&c);
    ob_csv_str(&c, "");
    ob_csv_num(&c, 1e-7);
    ob_csv_int(&c, 0);
    ob_csv_opt_int(&c, 12);
    ob_csv_row(&c);
    CHECK(ob_csv_close(&c, &e) == OB_OK);
    /* closed: a second close is nothing */
    CHECK(c.f == NULL);
    CHECK(ob_csv_close(&c, &e) == OB_OK);
    char path[700];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    char *t = slurp(path);
    static const char want[] = "\"name\",\"value\",\"count\",\"steps\"\n"
                               "\"a,b \"\"q\"\"\nline\",0.1,-3,\n"
                               ",,inf,-inf\n"
                               "\"\",1e-07,0,12\n";
    CHECK_MSG(t && !strcmp(t, want), "t.csv is:\n%s", t ? t : "(unreadable)");
    free(t);
}

static void test_failures(const char *dir)
{
    ob_csv c;
    ob_err e = {0};
    static const char *const hdr[] = {"x"};
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no/such/folder", dir);
    CHECK(ob_csv_open(&c, missing, "t.csv", hdr, 1, &e) == OB_ERR_IO);
    CHECK_MSG(strstr(e.msg, "cannot write '") && strstr(e.msg, "no/such/folder/t.csv"), "%s", e.msg);
    /* a device that takes no bytes: the write fails at the latest when the
     * buffer is flushed, and the close says so */
    struct stat st;
    if (stat("/dev/full", &st) != 0) {
        printf("no /dev/full: the failed write not tried\n");
        return;
    }
    memset(&e, 0, sizeof e);
    CHECK(ob_csv_open(&c, "/dev", "full", hdr, 1, &e) == OB_OK);
    for (int i = 0; i < 10; i++) {
        ob_csv_num(&c, i);
        ob_csv_row(&c);
    }
    CHECK(ob_csv_close(&c, &e) == OB_ERR_IO);
    CHECK_MSG(strstr(e.msg, "writing '/dev/full' failed"), "%s", e.msg);
    CHECK(c.f == NULL);
}

int main(void)
{
    char dir[] = "/tmp/ob_test_csv_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_slug();
    test_file(dir);
    test_failures(dir);
    char path[700];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    remove(path);
    rmdir(dir);
    return check_done();
}
