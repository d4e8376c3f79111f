/* tests/test_checkpoint.c - checkpoint files and the store's resume support:
 * CRC-32C against its check value, encode/parse round trip, atomic writes
 * that keep the newest K, refusal of every truncation and of corrupted
 * bytes (with a message, never a crash) and of files whose checksum matches
 * but whose magic, version, size, section count, names or step are wrong,
 * the listing that resume walks newest first, leftover temporary files,
 * keep 0 and a write that fails part way, and the store calls resume relies on (find the matching
 * benchmark, read a curve's leading losses, drop what follows a step in one
 * transaction), the configuration's checkpoint, shard and device
 * settings, the signal handlers (a second SIGINT stops at once), making
 * a run's folder while another process removes the empty DB.ckpt, and the
 * step times of a run resumed twice (the warm-up of every process left out),
 * also from a checkpoint of an older optbench; the run loop's state across a
 * resume (a streak of non-finite steps, the first loss, the last evaluation),
 * checkpoints with malformed process segments, the step-time statistics and
 * wall time a run records, a stop asked for during the last step, and cells
 * another process finished or failed after this one planned them. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "harness/checkpoint.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/run.h"
#include "harness/signals.h"
#include "kernels/backend.h"
#include "results/store.h"

static char dir[256];

static void test_crc(void)
{
    CHECK(ob_crc32c(0, "123456789", 9) == 0xE3069283u);
    CHECK(ob_crc32c(0, "", 0) == 0);
    /* incremental = one pass, whatever the split (exercises the 8-byte path) */
    char buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (char)(i * 31 + 7);
    uint32_t whole = ob_crc32c(0, buf, sizeof buf);
    for (int cut = 0; cut < 1000; cut += 37) CHECK(ob_crc32c(ob_crc32c(0, buf, (size_t)cut), buf + cut, 1000 - (size_t)cut) == whole);
}

static void make_sections(ob_ckpt_section *s, float *params, int n)
{
    for (int i = 0; i < n; i++) params[i] = (float)i * 0.25f - 3.0f;
    static const char spec[] = "optbench run checkpoint\nrun=1\n";
    static const double run[3] = {1.5, -2.0, 42.0};
    s[0] = (ob_ckpt_section){"spec", spec, sizeof spec - 1};
    s[1] = (ob_ckpt_section){"params", params, (uint64_t)n * sizeof(float)};
    s[2] = (ob_ckpt_section){"run", run, sizeof run};
    s[3] = (ob_ckpt_section){"empty", NULL, 0};
}

static void test_round_trip_and_damage(void)
{
    float params[100];
    ob_ckpt_section s[4];
    make_sections(s, params, 100);
    unsigned char *buf;
    size_t len;
    ob_err e;
    CHECK_OK(ob_ckpt_encode(123, s, 4, &buf, &len, &e), &e);
    ob_ckpt c;
    CHECK_OK(ob_ckpt_parse(buf, len, &c, &e), &e);
    CHECK(c.step == 123 && c.n == 4);
    const ob_ckpt_section *p = ob_ckpt_find(&c, "params");
    CHECK(p && p->bytes == sizeof params && !memcmp(p->data, params, sizeof params));
    CHECK(ob_ckpt_find(&c, "empty") && ob_ckpt_find(&c, "empty")->bytes == 0);
    CHECK(ob_ckpt_find(&c, "nothing") == NULL);

    /* every truncation is refused with a message */
    int refused = 0;
    for (size_t l = 0; l < len; l++) {
        ob_err_clear(&e);
        if (ob_ckpt_parse(buf, l, &c, &e) == OB_ERR_INPUT && e.msg[0]) refused++;
    }
    CHECK(refused == (int)len);
    /* every corrupted byte is refused (CRC-32C catches every error burst of <= 32 bits) */
    refused = 0;
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0x5a;
        if (ob_ckpt_parse(buf, len, &c, &e) == OB_ERR_INPUT) refused++;
        buf[i] ^= 0x5a;
    }
    CHECK(refused == (int)len);
    buf[40] ^= 1;
    ob_ckpt_parse(buf, len, &c, &e);
    CHECK_MSG(strstr(e.msg, "checksum") != NULL, "%s", e.msg);
    buf[40] ^= 1;
    free(buf);
}

/* ---- files that are consistent (their checksum matches) but say what a
 * reader must refuse: the checks besides the checksum ---- */

static void put32le(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64le(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* store buf's checksum again after an edit */
static void reseal(unsigned char *buf, size_t len)
{
    put32le(buf + len - 8, ob_crc32c(0, buf, len - 8));
}

/* A checkpoint of n empty sections, name i being names[i] (lens[i] bytes,
 * which may hold a NUL), built byte by byte: the writer refuses some of
 * these. Returns its length (buf holds enough). */
static size_t forge(unsigned char *buf, int64_t step, int n, const char *const *names, const uint32_t *lens)
{
    size_t pos = OB_CKPT_HEADER_BYTES;
    for (int i = 0; i < n; i++) {
        put32le(buf + pos, lens[i]);
        memcpy(buf + pos + 4, names[i], lens[i]);
        pos += 4 + lens[i];
        put64le(buf + pos, 0);
        pos += 8;
    }
    size_t len = pos + OB_CKPT_TRAILER_BYTES;
    memcpy(buf, "OBCKPT\r\n", 8);
    put32le(buf + 8, OB_CKPT_VERSION);
    put32le(buf + 12, (uint32_t)n);
    put64le(buf + 16, (uint64_t)step);
    put64le(buf + 24, len);
    memcpy(buf + len - 4, "OBCE", 4);
    reseal(buf, len);
    return len;
}

/* buf (len bytes) less the k bytes before its trailer, its header's
 * length and its checksum made to match: a file cut inside its last
 * section but sealed. Returns the new length. */
static size_t cut(unsigned char *buf, size_t len, size_t k)
{
    memmove(buf + len - OB_CKPT_TRAILER_BYTES - k, buf + len - OB_CKPT_TRAILER_BYTES, OB_CKPT_TRAILER_BYTES);
    len -= k;
    put64le(buf + 24, len);
    reseal(buf, len);
    return len;
}

/* parse must refuse buf with a message holding want */
static void refused(const unsigned char *buf, size_t len, const char *want, const char *what)
{
    ob_ckpt c;
    ob_err e;
    ob_err_clear(&e);
    ob_status s = ob_ckpt_parse(buf, len, &c, &e);
    CHECK_MSG(s == OB_ERR_INPUT && strstr(e.msg, want), "%s: status %d, '%s' (want '%s')", what, (int)s, e.msg, want);
}

static void test_sealed_but_wrong(void)
{
    float params[16];
    ob_ckpt_section s[4];
    make_sections(s, params, 16);
    unsigned char *buf;
    size_t len;
    ob_err e;
    ob_ckpt c;
    CHECK_OK(ob_ckpt_encode(9, s, 4, &buf, &len, &e), &e);
    /* another format's magic, another version, a size the file does not
     * have, fewer sections than the file holds */
    buf[6] = '\n';
    reseal(buf, len);
    refused(buf, len, "magic", "another magic");
    buf[6] = '\r';
    put32le(buf + 8, OB_CKPT_VERSION + 1);
    reseal(buf, len);
    refused(buf, len, "version 2", "a newer version");
    put32le(buf + 8, OB_CKPT_VERSION);
    put64le(buf + 24, len - 1);
    reseal(buf, len);
    refused(buf, len, "the header says", "a size smaller than the file");
    put64le(buf + 24, len);
    put32le(buf + 12, 3);
    reseal(buf, len);
    refused(buf, len, "after the last section", "3 sections said, 4 there");
    put32le(buf + 12, 4);
    reseal(buf, len);
    CHECK_OK(ob_ckpt_parse(buf, len, &c, &e), &e);
    free(buf);
    /* a step beyond 32 bits reads back whole */
    CHECK_OK(ob_ckpt_encode((int64_t)1 << 33, s, 4, &buf, &len, &e), &e);
    CHECK_OK(ob_ckpt_parse(buf, len, &c, &e), &e);
    CHECK(c.step == (int64_t)1 << 33);
    free(buf);
    /* no sections at all: written and read back */
    CHECK_OK(ob_ckpt_encode(3, s, 0, &buf, &len, &e), &e);
    CHECK(len == OB_CKPT_HEADER_BYTES + OB_CKPT_TRAILER_BYTES);
    CHECK_OK(ob_ckpt_parse(buf, len, &c, &e), &e);
    CHECK(c.n == 0 && c.step == 3);
    free(buf);
    /* a negative step: the writer writes what it is given, the reader refuses it */
    CHECK_OK(ob_ckpt_encode(-1, s, 4, &buf, &len, &e), &e);
    refused(buf, len, "negative step", "step -1");
    free(buf);

    /* section names: empty, 64 bytes (63 is the longest), a NUL inside, twice */
    static unsigned char fb[OB_CKPT_HEADER_BYTES + OB_CKPT_TRAILER_BYTES + (OB_CKPT_MAX_SECTIONS + 1) * 16];
    char n63[64], n64[65];
    memset(n63, 'a', 63);
    n63[63] = 0;
    memset(n64, 'b', 64);
    n64[64] = 0;
    const char *names[2] = {"x", "x"};
    uint32_t lens[2] = {1, 1};
    refused(fb, forge(fb, 1, 2, names, lens), "appears twice", "a name twice");
    names[1] = "";
    lens[1] = 0;
    refused(fb, forge(fb, 1, 2, names, lens), "name length 0", "an empty name");
    names[1] = "a\0b";
    lens[1] = 3;
    refused(fb, forge(fb, 1, 2, names, lens), "NUL", "a NUL in a name");
    names[1] = n64;
    lens[1] = 64;
    refused(fb, forge(fb, 1, 2, names, lens), "name length 64", "a 64-byte name");
    names[1] = n63;
    lens[1] = 63;
    CHECK_OK(ob_ckpt_parse(fb, forge(fb, 1, 2, names, lens), &c, &e), &e);
    CHECK(c.n == 2 && ob_ckpt_find(&c, n63) != NULL);
    /* the last section's data length cut to 7 bytes */
    names[1] = "y";
    lens[1] = 1;
    len = forge(fb, 1, 2, names, lens);
    memmove(fb + len - 9, fb + len - 8, 8);
    len--;
    put64le(fb + 24, len);
    reseal(fb, len);
    refused(fb, len, "'y': truncated length", "a data length of 7 bytes");
    /* cut in the last section's name, and in its name's length; a data
     * length of 1 where no byte is left */
    names[1] = "yyyyyyyy";
    lens[1] = 8;
    len = cut(fb, forge(fb, 1, 2, names, lens), 8 + 3);
    refused(fb, len, "section 1: truncated name", "a name cut to 5 of its 8 bytes");
    len = cut(fb, forge(fb, 1, 2, names, lens), 8 + 8 + 2);
    refused(fb, len, "section 1: truncated name length", "a name length of 2 bytes");
    len = forge(fb, 1, 2, names, lens);
    put64le(fb + len - OB_CKPT_TRAILER_BYTES - 8, 1);
    reseal(fb, len);
    refused(fb, len, "section 'yyyyyyyy': 1 bytes, more than the file holds", "a byte of data not there");
    /* the writer refuses a 64-byte name, takes a 63-byte one */
    ob_ckpt_section named[1] = {{"", params, sizeof params}};
    snprintf(named[0].name, sizeof named[0].name, "%s", n63);
    CHECK_OK(ob_ckpt_encode(1, named, 1, &buf, &len, &e), &e);
    free(buf);
    ob_ckpt_section *big = calloc(OB_CKPT_MAX_SECTIONS + 1, sizeof *big);
    char (*bn)[8] = calloc(OB_CKPT_MAX_SECTIONS + 1, sizeof *bn);
    const char **bnames = calloc(OB_CKPT_MAX_SECTIONS + 1, sizeof *bnames);
    uint32_t *blens = calloc(OB_CKPT_MAX_SECTIONS + 1, sizeof *blens);
    for (int i = 0; i <= OB_CKPT_MAX_SECTIONS; i++) {
        snprintf(bn[i], sizeof bn[i], "s%d", i);
        snprintf(big[i].name, sizeof big[i].name, "%s", bn[i]);
        bnames[i] = bn[i];
        blens[i] = (uint32_t)strlen(bn[i]);
    }
    /* OB_CKPT_MAX_SECTIONS sections write and read; one more is refused both ways */
    CHECK_OK(ob_ckpt_encode(5, big, OB_CKPT_MAX_SECTIONS, &buf, &len, &e), &e);
    CHECK_OK(ob_ckpt_parse(buf, len, &c, &e), &e);
    CHECK(c.n == OB_CKPT_MAX_SECTIONS && ob_ckpt_find(&c, "s255") != NULL);
    free(buf);
    refused(fb, forge(fb, 1, OB_CKPT_MAX_SECTIONS + 1, bnames, blens), "at most", "257 sections");
    free(big);
    free(bn);
    free(bnames);
    free(blens);
}

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* The database's own id (meta 'database_id'): its folder in a checkpoint_dir. */
static void database_id(const char *db, char *buf, size_t n)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *q = NULL;
    buf[0] = 0;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT value FROM meta WHERE key = 'database_id'", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(h);
}


/* ob_ckpt_list's count, -1 on an error */
static int list_ckpts(const char *d, int64_t *steps, int max)
{
    int n = 0;
    ob_err e;
    return ob_ckpt_list(d, steps, max, &n, &e) == OB_OK ? n : -1;
}

static void test_write_keep_and_list(void)
{
    char d[300], path[400];
    snprintf(d, sizeof d, "%s/run-1/nested", dir);
    float params[64];
    ob_ckpt_section s[4];
    make_sections(s, params, 64);
    ob_err e;
    for (int64_t step = 10; step <= 50; step += 10) CHECK_OK(ob_ckpt_write(d, step, s, 4, 2, &e), &e);
    int64_t steps[8];
    int n = list_ckpts(d, steps, 8);
    CHECK(n == 2 && steps[0] == 50 && steps[1] == 40);
    ob_ckpt_path(d, 30, path, sizeof path);
    CHECK(!exists(path));
    /* a leftover temporary file (a write that was killed) is not a checkpoint, and goes */
    snprintf(path, sizeof path, "%s/ckpt-000000000060.obck.tmp", d);
    FILE *f = fopen(path, "wb");
    fputs("half a checkpoint", f);
    fclose(f);
    CHECK(list_ckpts(d, steps, 8) == 2);
    CHECK_OK(ob_ckpt_write(d, 70, s, 4, 2, &e), &e);
    CHECK(!exists(path));
    n = list_ckpts(d, steps, 8);
    CHECK(n == 2 && steps[0] == 70 && steps[1] == 50);

    /* read back; a damaged newest file is an error naming it, the older one reads */
    ob_ckpt c;
    ob_ckpt_path(d, 70, path, sizeof path);
    CHECK_OK(ob_ckpt_read(path, &c, &e), &e);
    CHECK(c.step == 70 && c.n == 4);
    ob_ckpt_free(&c);
    f = fopen(path, "r+b");
    fseek(f, 60, SEEK_SET);
    fputc('X', f);
    fclose(f);
    CHECK(ob_ckpt_read(path, &c, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "checksum") && strstr(e.msg, "ckpt-000000000070"), "%s", e.msg);
    ob_ckpt_path(d, 50, path, sizeof path);
    CHECK_OK(ob_ckpt_read(path, &c, &e), &e);
    ob_ckpt_free(&c);
    /* truncated on disk */
    truncate(path, 50);
    CHECK(ob_ckpt_read(path, &c, &e) == OB_ERR_INPUT && strstr(e.msg, "truncated"));
    /* to the header's length, and a byte less: read, and refused as short */
    for (int k = 0; k < 2; k++) {
        truncate(path, OB_CKPT_HEADER_BYTES - k);
        ob_status st = ob_ckpt_read(path, &c, &e);
        CHECK_MSG(st == OB_ERR_INPUT && strstr(e.msg, "truncated: ") && strstr(e.msg, "shorter than a header and trailer"),
                  "%d bytes: status %d, %s", OB_CKPT_HEADER_BYTES - k, (int)st, e.msg);
    }

    ob_ckpt_remove_all(d);
    CHECK(!exists(d));
    CHECK(list_ckpts(d, steps, 8) == 0);
    /* a folder that cannot be created is an I/O error, not a crash */
    snprintf(path, sizeof path, "%s/file", dir);
    f = fopen(path, "wb");
    fclose(f);
    snprintf(d, sizeof d, "%s/file/sub", dir);
    CHECK(ob_ckpt_write(d, 1, s, 4, 2, &e) == OB_ERR_IO);
}

/* The writer's folder: a leftover temporary file of the step being written
 * (longer than the new checkpoint) or of a kept one, a name that only looks
 * like a checkpoint's, keep 0, a directory given as a checkpoint, and a
 * write that fails part way (the file size limit): an error, no temporary
 * file left, the previous checkpoints kept. */
static void test_write_leftovers_and_failures(void)
{
    char d[300], path[400], other[400];
    snprintf(d, sizeof d, "%s/run-2", dir);
    float params[1000];
    ob_ckpt_section s[4];
    make_sections(s, params, 1000);
    ob_err e;
    ob_ckpt c;
    CHECK_OK(ob_ckpt_write(d, 10, s, 4, 2, &e), &e);
    /* a killed write of step 20 left a longer temporary file: the new one replaces it whole */
    snprintf(path, sizeof path, "%s/ckpt-000000000020.obck.tmp", d);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 20000; i++) fputc('z', f);
    fclose(f);
    CHECK_OK(ob_ckpt_write(d, 20, s, 4, 2, &e), &e);
    CHECK(!exists(path));
    ob_ckpt_path(d, 20, path, sizeof path);
    CHECK_OK(ob_ckpt_read(path, &c, &e), &e);
    CHECK(c.step == 20 && c.n == 4);
    ob_ckpt_free(&c);
    /* a temporary file of a checkpoint that is kept goes too; a name with
     * letters where the step's digits go is no checkpoint, and stays */
    snprintf(path, sizeof path, "%s/ckpt-000000000020.obck.tmp", d);
    f = fopen(path, "wb");
    fputs("half", f);
    fclose(f);
    snprintf(other, sizeof other, "%s/ckpt-0000000000ab.obck", d);
    f = fopen(other, "wb");
    fputs("mine", f);
    fclose(f);
    char other2[400];
    snprintf(other2, sizeof other2, "%s/ckpt-000000000010.obck.tmp~", d);
    f = fopen(other2, "wb");
    fputs("mine too", f);
    fclose(f);
    int64_t steps[8];
    CHECK(list_ckpts(d, steps, 8) == 2 && steps[0] == 20 && steps[1] == 10);
    CHECK_OK(ob_ckpt_write(d, 30, s, 4, 2, &e), &e);
    CHECK(!exists(path) && exists(other) && exists(other2));
    int n = list_ckpts(d, steps, 8);
    CHECK_MSG(n == 2 && steps[0] == 30 && steps[1] == 20, "%d checkpoints, newest %lld", n, n ? (long long)steps[0] : -1LL);
    unlink(other);
    unlink(other2);
    /* keep 0 keeps the checkpoint just written */
    CHECK_OK(ob_ckpt_write(d, 40, s, 4, 0, &e), &e);
    n = list_ckpts(d, steps, 8);
    CHECK_MSG(n == 1 && steps[0] == 40, "keep 0: %d checkpoints", n);
    /* a file refused part way through its sections leaves nothing behind in c */
    {
        static unsigned char fb[256];
        const char *names[2] = {"x", "x"};
        const uint32_t lens[2] = {1, 1};
        size_t len = forge(fb, 1, 2, names, lens);
        snprintf(path, sizeof path, "%s/twice.obck", d);
        f = fopen(path, "wb");
        fwrite(fb, 1, len, f);
        fclose(f);
        c.n = 99;
        CHECK(ob_ckpt_read(path, &c, &e) == OB_ERR_INPUT && strstr(e.msg, "twice"));
        CHECK(c.n == 0 && c.buf == NULL && ob_ckpt_find(&c, "x") == NULL);
        unlink(path);
    }
    /* a directory is not a checkpoint */
    CHECK(ob_ckpt_read(d, &c, &e) == OB_ERR_INPUT && strstr(e.msg, "not a regular file"));

    /* a write stopped by the file size limit (as by a full disk) */
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {2000, 2000};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
        ob_err ce;
        if (ob_ckpt_write(d, 50, s, 4, 2, &ce) != OB_ERR_IO || !strstr(ce.msg, "previous checkpoints are kept")) _exit(1);
        char t[400];
        snprintf(t, sizeof t, "%s/ckpt-000000000050.obck.tmp", d);
        _exit(exists(t) ? 2 : 0);
    }
    int wst = 0;
    CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid);
    CHECK_MSG(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "failed write: child status %d (1: not an I/O error, 2: its temporary file left)", wst);
    n = list_ckpts(d, steps, 8);
    CHECK(n == 1 && steps[0] == 40);
    ob_ckpt_remove_all(d);
    CHECK(!exists(d));
    /* a folder that is none, or one it cannot read, is an error, not "no
     * checkpoints" (the run would start over, dropping its curve); a missing
     * one has none */
    CHECK(list_ckpts(d, steps, 8) == 0);
    char file[400];
    snprintf(file, sizeof file, "%s.file", d);
    f = fopen(file, "wb");
    fclose(f);
    int k = 7;
    CHECK(ob_ckpt_list(file, steps, 8, &k, &e) == OB_ERR_IO && k == 0 && strstr(e.msg, "cannot list the checkpoints"));
    unlink(file);
    /* the checkpoint just written stays, even when older than those kept */
    for (int64_t step = 20; step <= 30; step += 10) CHECK_OK(ob_ckpt_write(d, step, s, 4, 1, &e), &e);
    CHECK_OK(ob_ckpt_write(d, 10, s, 4, 1, &e), &e);
    n = list_ckpts(d, steps, 8);
    CHECK_MSG(n == 2 && steps[0] == 30 && steps[1] == 10, "%d checkpoints after writing an older one", n);
    ob_ckpt_remove_all(d);
}

static long long q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q;
    long long v = -999;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

static void test_store_resume(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/resume.db", dir);
    ob_store *s;
    ob_err e;
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &s, &e), &e);
    ob_run_spec spec[2] = {
        {.cell = 0, .workload = "quadratic", .workload_params = "{}", .optimizer = "sgd", .hparams = "{\"lr\":0.1}",
         .lr = 0.1, .seed = 0, .steps = 10},
        {.cell = 1, .workload = "quadratic", .workload_params = "{}", .optimizer = "adam",
         .hparams = "{\"lr\":0.01}", .lr = 0.01, .seed = 0, .steps = 10},
    };
    int64_t b1, b2, ids[2], found, fids[2];
    char why[256];
    CHECK_OK(ob_store_begin_benchmark(s, "x", "", "rev", "host", "cpu", "dev", &b1, &e), &e);
    CHECK_OK(ob_store_add_runs(s, b1, spec, 2, ids, &e), &e);
    /* a second benchmark of shard 0/2 with the same cells */
    CHECK_OK(ob_store_begin_benchmark(s, "x", "", "rev", "host", "cpu", "dev", &b2, &e), &e);
    CHECK_OK(ob_store_set_benchmark_origin(s, b2, "0/2", NULL, &e), &e);
    CHECK_OK(ob_store_add_runs(s, b2, spec, 2, fids, &e), &e);

    CHECK_OK(ob_store_find_benchmark(s, NULL, spec, 2, &found, fids, NULL, why, sizeof why, &e), &e);
    CHECK(found == b1 && fids[0] == ids[0] && fids[1] == ids[1]);
    CHECK_OK(ob_store_find_benchmark(s, "0/2", spec, 2, &found, fids, NULL, why, sizeof why, &e), &e);
    CHECK(found == b2);
    CHECK_OK(ob_store_find_benchmark(s, "1/2", spec, 2, &found, fids, NULL, why, sizeof why, &e), &e);
    CHECK(found == 0);
    ob_run_spec other[2] = {spec[0], spec[1]};
    other[1].steps = 20;
    CHECK_OK(ob_store_find_benchmark(s, NULL, other, 2, &found, fids, NULL, why, sizeof why, &e), &e);
    CHECK_MSG(found == 0 && strstr(why, "steps"), "%s", why);
    CHECK_OK(ob_store_find_benchmark(s, NULL, spec, 1, &found, fids, NULL, why, sizeof why, &e), &e);
    CHECK(found == 0);

    /* a build that added a setting (momentum, train.clip) at its default:
     * the same runs where the caller allows it, their cells flagged */
    {
        ob_run_spec grown[2] = {spec[0], spec[1]};
        const char *defs = "{\"lr\":0.001,\"momentum\":0,\"train\":{\"clip\":0}}";
        grown[0].hparams = "{\"lr\":0.1,\"momentum\":0,\"train\":{\"clip\":0}}";
        grown[0].hparams_defaults = grown[1].hparams_defaults = defs;
        grown[0].workload_defaults = grown[1].workload_defaults = "{\"cond\":100}";
        grown[1].workload_params = "{\"cond\":100}";
        unsigned char rel[2] = {9, 9};
        CHECK_OK(ob_store_find_benchmark(s, NULL, grown, 2, &found, fids, NULL, why, sizeof why, &e), &e);
        CHECK_MSG(found == 0 && strstr(why, "cell 0 has other hyperparameters"), "exact texts only without relaxed: %s", why);
        CHECK_OK(ob_store_find_benchmark(s, NULL, grown, 2, &found, fids, rel, why, sizeof why, &e), &e);
        CHECK(found == b1 && fids[0] == ids[0] && fids[1] == ids[1] && rel[0] == 1 && rel[1] == 1);
        grown[0].hparams = "{\"lr\":0.1,\"momentum\":0.9,\"train\":{\"clip\":0}}"; /* not its default */
        CHECK_OK(ob_store_find_benchmark(s, NULL, grown, 2, &found, fids, rel, why, sizeof why, &e), &e);
        CHECK_MSG(found == 0 && strstr(why, "other hyperparameters") && rel[0] == 0 && rel[1] == 0, "%s", why);

        char added[64];
        CHECK(ob_store_equivalent(s, "{\"lr\":0.1}", "{\"lr\":0.1,\"momentum\":0,\"train\":{\"clip\":0}}", defs,
                                  added, sizeof added) &&
              !strcmp(added, "momentum, train.clip"));
        /* a key the build dropped, stored at its default; a value that differs; one at the old default */
        CHECK(ob_store_equivalent(s, "{\"lr\":0.1,\"momentum\":0}", "{\"lr\":0.1}", defs, added, sizeof added) &&
              added[0] == 0);
        CHECK(!ob_store_equivalent(s, "{\"lr\":0.1}", "{\"lr\":0.2}", defs, NULL, 0));
        CHECK(!ob_store_equivalent(s, "{\"lr\":0.1,\"momentum\":0.5}", "{\"lr\":0.1,\"momentum\":0}", defs, NULL, 0));
        CHECK(!ob_store_equivalent(s, "{\"lr\":0.1,\"train\":{\"clip\":1}}", "{\"lr\":0.1}", defs, NULL, 0));
        /* an added key inside another object, values equal as numbers, text that is not JSON */
        CHECK(ob_store_equivalent(s, "{\"lr\":1e-1,\"train\":{}}", "{\"lr\":0.1,\"train\":{\"clip\":0.0}}", defs,
                                  NULL, 0));
        CHECK(!ob_store_equivalent(s, "{\"lr\":0.1", "{\"lr\":0.1}", defs, NULL, 0));
        CHECK(!ob_store_equivalent(s, "{\"lr\":0.1}", "{\"lr\":0.1}", NULL, NULL, 0));

        char w[64], h[64];
        int got = 0;
        CHECK_OK(ob_store_sweep_texts(s, b1, 1, w, sizeof w, h, sizeof h, &got, &e), &e);
        CHECK(got && !strcmp(w, "{}") && !strcmp(h, "{\"lr\":0.01}"));
        CHECK_OK(ob_store_sweep_texts(s, b1, 7, w, sizeof w, h, sizeof h, &got, &e), &e);
        CHECK(!got);
        CHECK_OK(ob_store_sweep_texts(s, b1, 1, w, sizeof w, h, 4, &got, &e), &e);
        CHECK(!got); /* does not fit: not cut */
    }

    /* a run with 8 curve points, evaluations at 0, 4, 8, a skipped step at 6 and a divergence event at 3 */
    ob_curve_point pts[8];
    for (int i = 0; i < 8; i++) pts[i] = (ob_curve_point){i + 1, i == 2 ? NAN : 10.0 - i, 1, 0.1};
    ob_eval_point ev[3] = {{0, 1, NAN}, {4, 2, NAN}, {8, 3, NAN}};
    ob_event evs[2] = {{6, "skipped_step", "x"}, {3, "diverged", "y"}};
    CHECK_OK(ob_store_run_started(s, ids[0], &e), &e);
    CHECK_OK(ob_store_append(s, ids[0], pts, 8, ev, 3, evs, 2, &e), &e);
    double loss[10];
    int64_t n;
    CHECK_OK(ob_store_read_losses(s, ids[0], 5, loss, &n, &e), &e);
    CHECK(n == 5 && loss[0] == 10.0 && isnan(loss[2]) && loss[4] == 6.0);
    CHECK_OK(ob_store_read_losses(s, ids[0], 10, loss, &n, &e), &e);
    CHECK(n == 8);
    char st[32];
    CHECK_OK(ob_store_run_status(s, ids[0], st, sizeof st, &e), &e);
    CHECK(!strcmp(st, "running"));

    CHECK_OK(ob_store_resume_run(s, ids[0], 4, &e), &e);
    sqlite3 *db = ob_store_db(s);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM curves WHERE run_id = %lld", (long long)ids[0]);
    CHECK(q_int(db, sql) == 4);
    snprintf(sql, sizeof sql, "SELECT max(step) FROM evals WHERE run_id = %lld", (long long)ids[0]);
    CHECK(q_int(db, sql) == 4);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM events WHERE run_id = %lld", (long long)ids[0]);
    CHECK(q_int(db, sql) == 0); /* step 6 is after, 'diverged' always goes */
    snprintf(sql, sizeof sql, "SELECT steps_done FROM runs WHERE id = %lld AND status = 'running'", (long long)ids[0]);
    CHECK(q_int(db, sql) == 4);
    /* the rest of the curve arrives again: no duplicate, nothing missing */
    CHECK_OK(ob_store_append(s, ids[0], pts + 4, 4, NULL, 0, NULL, 0, &e), &e);
    CHECK_OK(ob_store_read_losses(s, ids[0], 8, loss, &n, &e), &e);
    CHECK(n == 8);
    /* start over */
    CHECK_OK(ob_store_resume_run(s, ids[0], -1, &e), &e);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM curves WHERE run_id = %lld", (long long)ids[0]);
    CHECK(q_int(db, sql) == 0);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evals WHERE run_id = %lld", (long long)ids[0]);
    CHECK(q_int(db, sql) == 0);
    ob_store_close(s);
}

static void test_shard_and_devices_parsing(void)
{
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK_OK(ob_config_set_shard(&c, "2/5", "--shard", &e), &e);
    CHECK(c.shard_k == 2 && c.shard_n == 5);
    const char *bad[] = {"5/5", "-1/3", "1", "a/b", "1/0", "1.5/3", "/3", "1/", "1/3/4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ob_err_clear(&e);
        CHECK_MSG(ob_config_set_shard(&c, bad[i], "--shard", &e) == OB_ERR_INPUT && strstr(e.msg, bad[i]), "%s: %s",
                  bad[i], e.msg);
    }
    ob_config_init(&c);
    setenv("SLURM_ARRAY_TASK_ID", "7", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "5", 1);
    int used;
    CHECK_OK(ob_config_shard_from_env(&c, &used, &e), &e);
    CHECK(used && c.shard_k == 2 && c.shard_n == 4);
    ob_config_init(&c);
    setenv("SLURM_ARRAY_TASK_ID", "9", 1);
    CHECK(ob_config_shard_from_env(&c, &used, &e) == OB_ERR_INPUT && strstr(e.msg, "--array"));
    /* a flag wins over the environment */
    ob_config_init(&c);
    CHECK_OK(ob_config_set_shard(&c, "0/2", "--shard", &e), &e);
    CHECK_OK(ob_config_shard_from_env(&c, &used, &e), &e);
    CHECK(!used && c.shard_k == 0 && c.shard_n == 2);
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    unsetenv("SLURM_ARRAY_TASK_MIN");
    ob_config_init(&c);
    CHECK_OK(ob_config_shard_from_env(&c, &used, &e), &e);
    CHECK(!used && c.shard_n == 0);

    CHECK_OK(ob_config_set_devices(&c, "0, 1,3", "--devices", &e), &e);
    CHECK(c.n_devices == 3 && c.devices[2] == 3);
    CHECK(ob_config_set_devices(&c, "0,0", "--devices", &e) == OB_ERR_INPUT && strstr(e.msg, "twice"));
    CHECK(ob_config_set_devices(&c, "x", "--devices", &e) == OB_ERR_INPUT);
    CHECK(ob_config_set_devices(&c, "-1", "--devices", &e) == OB_ERR_INPUT);
    CHECK(ob_config_set_devices(&c, ",", "--devices", &e) == OB_ERR_INPUT && strstr(e.msg, "empty"));

    /* the config keys */
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c, "checkpoint_every: 25\ncheckpoint_keep: 3\ncheckpoint_dir: /x/y\n", "c.yaml", &e), &e);
    CHECK(c.checkpoint_every == 25 && c.checkpoint_keep == 3 && !strcmp(c.checkpoint_dir, "/x/y"));
    ob_config_init(&c);
    CHECK(ob_config_load_text(&c, "checkpoint_keep: 0\n", "c.yaml", &e) == OB_ERR_INPUT && strstr(e.msg, "c.yaml:1"));
    CHECK(ob_config_load_text(&c, "checkpoint_every: -5\n", "c.yaml", &e) == OB_ERR_INPUT);
    CHECK(ob_config_load_text(&c, "checkpoint_evry: 5\n", "c.yaml", &e) == OB_ERR_INPUT &&
          strstr(e.msg, "did you mean 'checkpoint_every'"));
    /* input the loader used to take silently: an empty lrs mapping, a second document */
    ob_config_init(&c);
    CHECK(ob_config_load_text(&c, "workloads: quadratic\nlrs: {}\n", "c.yaml", &e) == OB_ERR_INPUT &&
          strstr(e.msg, "c.yaml:2: lrs is an empty mapping"));
    ob_config_init(&c);
    CHECK(ob_config_load_text(&c, "steps: 5\n---\nsteps: 7\n", "c.yaml", &e) == OB_ERR_INPUT &&
          strstr(e.msg, "c.yaml:2: a second YAML document"));
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c, "---\nsteps: 5\n...\n", "c.yaml", &e), &e);
    CHECK(c.steps == 5);
    ob_config_free(&c);
}

/* The handlers: the first SIGINT or SIGTERM only raises the flag; a second
 * SIGINT ends the process at once with status 130. */
static void test_signals(void)
{
    CHECK(ob_signal_exit_code(SIGINT) == 130 && ob_signal_exit_code(SIGTERM) == 143);
    ob_signals_install();
    ob_signal_clear();
    CHECK(ob_signal_pending() == 0);
    raise(SIGTERM);
    CHECK(ob_signal_pending() == SIGTERM);
    ob_signal_clear();
    raise(SIGINT);
    CHECK(ob_signal_pending() == SIGINT);
    ob_signal_clear();
    ob_signals_restore();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        ob_signals_install();
        raise(SIGINT);
        if (ob_signal_pending() != SIGINT) _exit(3);
        raise(SIGINT); /* does not return */
        _exit(4);
    }
    int wst = 0;
    CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid);
    CHECK_MSG(WIFEXITED(wst) && WEXITSTATUS(wst) == 130, "status %d", wst);
    pid = fork();
    if (pid == 0) { /* a second SIGTERM does not cut the checkpoint short */
        ob_signals_install();
        raise(SIGTERM);
        raise(SIGTERM);
        _exit(ob_signal_pending() == SIGTERM ? 0 : 5);
    }
    CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid);
    CHECK_MSG(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "status %d", wst);
}

/* Two processes share DB.ckpt: one removes it when empty (its last run is
 * finished) while the other makes a run's folder inside it. The maker must
 * never fail for the parent vanishing under it. */
static void test_mkdir_against_rmdir(void)
{
    char root[300], child[320];
    snprintf(root, sizeof root, "%s/shared.ckpt", dir);
    snprintf(child, sizeof child, "%s/run-11", root);
    pid_t pid = fork();
    if (pid == 0) {
        for (long i = 0; i < 400000; i++) rmdir(root);
        _exit(0);
    }
    CHECK(pid > 0);
    int failed = 0;
    char first[1100] = "";
    for (int i = 0; i < 20000; i++) {
        ob_err e = {0};
        if (ob_mkdir_p(child, &e) != OB_OK) {
            if (!failed) snprintf(first, sizeof first, "%s", e.msg);
            failed++;
        }
        rmdir(child);
    }
    int wst;
    kill(pid, SIGKILL);
    waitpid(pid, &wst, 0);
    CHECK_MSG(failed == 0, "%d of 20000 folder creations failed; first: %s", failed, first);
    rmdir(root);
}

/* A folder under a link to nothing (a scratch file system not mounted), a
 * folder that is itself such a link, and one the file system refuses
 * (ENOENT under a parent that is there): each fails at once, naming the
 * link, where waiting as for a parent another process removed would wait
 * in vain. */
static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_mkdir_dangling(void)
{
    char link[300], under[320], self[300], target[300];
    snprintf(target, sizeof target, "%s/not-there", dir);
    snprintf(link, sizeof link, "%s/scratch", dir);
    snprintf(under, sizeof under, "%s/run-1", link);
    snprintf(self, sizeof self, "%s/self.ckpt", dir);
    CHECK(symlink(target, link) == 0 && symlink(target, self) == 0);
    const char *paths[] = {under, self};
    const char *named[] = {link, self};
    for (int k = 0; k < 2; k++) {
        ob_err e = {0};
        const double t0 = mono_s();
        const ob_status st = ob_mkdir_p(paths[k], &e);
        const double took = mono_s() - t0;
        char want[700];
        snprintf(want, sizeof want, "'%s' is a symbolic link to '%s', which does not exist", named[k], target);
        CHECK_MSG(st == OB_ERR_IO && strstr(e.msg, want), "%s: %s", paths[k], e.msg);
        CHECK_MSG(took < 1.0, "%s: %.2f s to fail", paths[k], took);
    }
    struct stat sb;
    if (stat("/proc/self", &sb) == 0) {
        ob_err e = {0};
        const double t0 = mono_s();
        CHECK(ob_mkdir_p("/proc/optbench-test", &e) != OB_OK);
        CHECK_MSG(mono_s() - t0 < 1.0, "/proc/optbench-test: %.2f s to fail", mono_s() - t0);
    }
    unlink(link);
    unlink(self);
}

/* ---- a resumed run's step times ------------------------------------------- */

/* The CPU backend with a timer that makes the first OB_WARMUP_STEPS steps of
 * each process (each ob_run_matrix call here) take 100 ms (the optimizer 50)
 * and every later one 1 ms (0.5), and that raises SIGINT at the end of the
 * process's step stop_after (0: never), as a user would: the run stops there
 * with a checkpoint. */
static ob_backend_ops fake_ops;
static const ob_backend_ops *real_ops;
static int fake_steps, fake_reads, fake_stop_after;
static int fake_vary; /* after the warm-up, every 4th step read takes 9 ms (the optimizer 4.5), not 1; 2: 0 ms */
static int fake_sleep_at; /* the process's step after which it sleeps 300 ms (0: none) */
static const char *fake_sql, *fake_sql_db; /* run on fake_sql_db after the process's first step (as another
                                            * process writing the database would) */
static const char *fake_block; /* a folder made a file at the end of the process's step fake_block_at */
static int fake_block_at;

static ob_status fake_timer_mark(ob_device *dev, int slot, ob_err *e)
{
    ob_status st = real_ops->timer_mark(dev, slot, e);
    if (st == OB_OK && slot % 3 == 2 && ++fake_steps == fake_stop_after) raise(SIGINT);
    if (st == OB_OK && slot % 3 == 2 && fake_steps == fake_sleep_at) nanosleep(&(struct timespec){0, 300000000}, NULL);
    if (st == OB_OK && slot % 3 == 2 && fake_steps == fake_block_at && fake_block) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && touch '%s'", fake_block, fake_block);
        CHECK(system(cmd) == 0);
    }
    if (st == OB_OK && slot % 3 == 2 && fake_steps == 1 && fake_sql) {
        sqlite3 *db = NULL;
        CHECK(sqlite3_open(fake_sql_db, &db) == SQLITE_OK);
        sqlite3_busy_timeout(db, 5000);
        CHECK(sqlite3_exec(db, fake_sql, NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(db);
    }
    return st;
}

static ob_status fake_timer_read(ob_device *dev, int a, int b, double *ms, ob_err *e)
{
    (void)dev;
    (void)b;
    (void)e;
    if (a % 3 == 0) fake_reads++; /* the whole step: read before its optimizer part */
    const int warm = fake_reads <= OB_WARMUP_STEPS;
    const double slow = fake_vary == 2 ? 0.0 : fake_vary && fake_reads % 4 == 0 ? 9.0 : 1.0;
    *ms = a % 3 == 0 ? (warm ? 100.0 : slow) : (warm ? 50.0 : slow / 2);
    return OB_OK;
}

/* One process of the matrix of yaml (resumed with resume), stopped after
 * its stop_after-th step when stop_after > 0; its summary in *sum when sum.
 * Returns ob_run_matrix's status. */
static ob_status fake_process_of(const char *yaml, const char *db, int resume, int stop_after, ob_run_summary *out)
{
    ob_err e = {0};
    ob_config c;
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c, yaml, "c.yaml", &e), &e);
    snprintf(c.db, sizeof c.db, "%s", db);
    c.resume = resume;
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    ob_device dev;
    memset(&dev, 0, sizeof dev);
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    real_ops = dev.ops;
    fake_ops = *dev.ops;
    fake_ops.timer_mark = fake_timer_mark;
    fake_ops.timer_read = fake_timer_read;
    dev.ops = &fake_ops;
    fake_steps = fake_reads = 0;
    fake_stop_after = stop_after;
    ob_store *store = NULL;
    CHECK_OK(ob_store_open(db, OB_STORE_CREATE, &store, &e), &e);
    ob_run_summary sum = {0};
    ob_signals_install();
    ob_status st = store ? ob_run_matrix(&c, &m, &dev, store, &sum, &e) : OB_ERR_IO;
    ob_signal_clear();
    ob_signals_restore();
    ob_store_close(store);
    dev.ops = real_ops;
    ob_device_close(&dev);
    ob_matrix_free(&m);
    ob_config_free(&c);
    if (out) *out = sum;
    return st;
}

/* The matrix of 30 steps of the step-time tests. */
static ob_status fake_process(const char *db, int resume, int stop_after)
{
    return fake_process_of("workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\n"
                           "steps: 30\ncheckpoint_every: 0\nbackend: cpu\n", db, resume, stop_after, NULL);
}

/* What one query gives, its rows' columns joined by '|', rows by ' '. */
static void query_text(const char *db, const char *sql, char *buf, size_t n)
{
    sqlite3 *q = NULL;
    sqlite3_stmt *st = NULL;
    size_t l = 0;
    buf[0] = 0;
    CHECK(sqlite3_open(db, &q) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(q, sql, -1, &st, NULL) == SQLITE_OK);
    while (st && sqlite3_step(st) == SQLITE_ROW && l + 1 < n) {
        for (int k = 0; k < sqlite3_column_count(st) && l + 1 < n; k++) {
            const unsigned char *t = sqlite3_column_text(st, k);
            l += (size_t)snprintf(buf + l, n - l, "%s%s", k ? "|" : (l ? " " : ""), t ? (const char *)t : "NULL");
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(q);
}

/* The run's row: status, steps_done, step_ms_median, p90, mean, opt_ms_mean. */
static void run_row(const char *db, char *status, size_t n, long long *steps, double v[4])
{
    sqlite3 *q = NULL;
    sqlite3_stmt *st = NULL;
    status[0] = 0;
    *steps = -1;
    v[0] = v[1] = v[2] = v[3] = -1;
    CHECK(sqlite3_open(db, &q) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(q, "SELECT status, steps_done, step_ms_median, step_ms_p90, step_ms_mean, opt_ms_mean "
                                "FROM runs", -1, &st, NULL) == SQLITE_OK);
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        snprintf(status, n, "%s", (const char *)sqlite3_column_text(st, 0));
        *steps = sqlite3_column_int64(st, 1);
        for (int k = 0; k < 4; k++) v[k] = sqlite3_column_double(st, 2 + k);
    }
    sqlite3_finalize(st);
    sqlite3_close(q);
}

/* Run 1's checkpoint at step of database db into *c (its folder into ck). */
static void read_run1(const char *db, int64_t step, char ck[600], ob_ckpt *c)
{
    char path[1300];
    snprintf(ck, 600, "%s.ckpt/run-1", db);
    ob_ckpt_path(ck, step, path, sizeof path);
    ob_err e = {0};
    CHECK_OK(ob_ckpt_read(path, c, &e), &e);
}

/* Rewrites run 1's checkpoint at step of database db with its section name
 * holding bytes of data instead, or without it (data NULL), as an older
 * optbench or a damaged file would have it. The section must be there. */
static void rewrite_section(const char *db, int64_t step, const char *name, const void *data, uint64_t bytes)
{
    char ck[600];
    ob_ckpt c;
    read_run1(db, step, ck, &c);
    ob_ckpt_section keep[OB_CKPT_MAX_SECTIONS];
    int n = 0, found = 0;
    for (int i = 0; i < c.n; i++) {
        keep[n] = c.sec[i];
        if (strcmp(c.sec[i].name, name)) {
            n++;
            continue;
        }
        found = 1;
        if (!data) continue;
        keep[n].data = data;
        keep[n++].bytes = bytes;
    }
    CHECK_MSG(found, "no section '%s' in run 1's checkpoint at step %lld of %s", name, (long long)step, db);
    ob_err e = {0};
    CHECK_OK(ob_ckpt_write(ck, step, keep, n, 3, &e), &e);
    ob_ckpt_free(&c);
}

/* A run stopped after step 12, resumed and stopped again 3 steps later (within
 * that process's warm-up), then resumed to its end at step 30: the step times
 * count steps 6-12 and 21-30, every one 1 ms; the first steps of each resumed
 * process (13-15 and 16-20, 100 ms) are left out like the run's own first 5,
 * also those of a process that ended before its warm-up did (their being
 * warm-up steps comes back from the checkpoint). A checkpoint of an older
 * optbench (no "segments", no "opt_ms") still resumes, and the resumed
 * process's warm-up is still left out. */
static void test_resume_warmup(void)
{
    char db[300], status[32];
    long long steps;
    double v[4];
    snprintf(db, sizeof db, "%s/warm.db", dir);
    CHECK(fake_process(db, 0, 12) == OB_ERR_INTERRUPTED);
    run_row(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "interrupted") && steps == 12 && v[2] == 1, "%s after %lld steps, mean %g", status,
              steps, v[2]);
    CHECK(fake_process(db, 1, 3) == OB_ERR_INTERRUPTED);
    run_row(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "interrupted") && steps == 15 && v[2] == 1, "%s after %lld steps, mean %g", status,
              steps, v[2]);
    CHECK_OK(fake_process(db, 1, 0), &(ob_err){0});
    run_row(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "done") && steps == 30 && v[0] == 1 && v[1] == 1 && v[2] == 1 && v[3] == 0.5,
              "%s after %lld steps: step ms median %g, p90 %g, mean %g, optimizer ms mean %g", status, steps, v[0],
              v[1], v[2], v[3]);

    /* an older checkpoint: without the segments and the optimizer times */
    snprintf(db, sizeof db, "%s/warm_old.db", dir);
    CHECK(fake_process(db, 0, 12) == OB_ERR_INTERRUPTED);
    rewrite_section(db, 12, "segments", NULL, 0);
    rewrite_section(db, 12, "opt_ms", NULL, 0);
    CHECK_OK(fake_process(db, 1, 0), &(ob_err){0});
    run_row(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "done") && steps == 30 && v[0] == 1 && v[1] == 1 && v[2] == 1 && v[3] == 0.5,
              "older checkpoint: %s after %lld steps: step ms median %g, p90 %g, mean %g, optimizer ms mean %g",
              status, steps, v[0], v[1], v[2], v[3]);
}

/* A checkpoint of NAdam without its host state (the product of the
 * momentum factors; an older optbench wrote none) resumes, the state
 * rebuilt from zeros, and the run ends as the uninterrupted one does. */
static void test_resume_without_host_state(void)
{
    const char *yaml = "workloads: [quadratic]\noptimizers: [nadam]\nlrs: [0.01]\nseeds: 1\nsteps: 30\n"
                       "checkpoint_every: 0\nbackend: cpu\n";
    char ref[300], db[300], a[64], b[64];
    snprintf(ref, sizeof ref, "%s/host_ref.db", dir);
    snprintf(db, sizeof db, "%s/host.db", dir);
    CHECK_OK(fake_process_of(yaml, ref, 0, 0, NULL), &(ob_err){0});
    CHECK(fake_process_of(yaml, db, 0, 12, NULL) == OB_ERR_INTERRUPTED);
    rewrite_section(db, 12, "opt.optim.host", NULL, 0);
    ob_run_summary sum = {0};
    CHECK_OK(fake_process_of(yaml, db, 1, 0, &sum), &(ob_err){0});
    query_text(ref, "SELECT status, steps_done, final_loss FROM runs", a, sizeof a);
    query_text(db, "SELECT status, steps_done, final_loss FROM runs", b, sizeof b);
    CHECK_MSG(sum.resumed == 1 && !strcmp(a, b) && !strncmp(a, "done|30|", 8), "resumed %d: '%s', uninterrupted '%s'",
              sum.resumed, b, a);
}

/* What the runs table holds of a run's times and ending: status, steps_done,
 * step_ms median, p90 and mean, opt_ms median and mean, wall_s. */
static void run_times(const char *db, char *status, size_t n, long long *steps, double v[6])
{
    sqlite3 *q = NULL;
    sqlite3_stmt *st = NULL;
    status[0] = 0;
    *steps = -1;
    for (int k = 0; k < 6; k++) v[k] = -1;
    CHECK(sqlite3_open(db, &q) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(q, "SELECT status, steps_done, step_ms_median, step_ms_p90, step_ms_mean, opt_ms_median, "
                                "opt_ms_mean, wall_s FROM runs", -1, &st, NULL) == SQLITE_OK);
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        snprintf(status, n, "%s", (const char *)sqlite3_column_text(st, 0));
        *steps = sqlite3_column_int64(st, 1);
        for (int k = 0; k < 6; k++) v[k] = sqlite3_column_double(st, 2 + k);
    }
    sqlite3_finalize(st);
    sqlite3_close(q);
}

/* The step-time statistics are each what they are named for: of the 25 steps
 * after the warm-up of a 30-step run, 19 take 1 ms and 6 take 9 ms (the
 * optimizer half of it): median 1, p90 9, mean 2.92; the optimizer's median
 * 0.5 and mean 1.46; items per second are of the median step (none when it
 * took 0 ms). A run resumed after a process that spent 300 ms has a wall
 * time of both processes (and the workload's loss floor). A stop asked for
 * during the last step comes too late for the run: it is done, not
 * interrupted. */
static void test_run_times(void)
{
    char db[300], status[32];
    long long steps;
    double v[6];
    snprintf(db, sizeof db, "%s/vary.db", dir);
    fake_vary = 1;
    CHECK_OK(fake_process(db, 0, 0), &(ob_err){0});
    fake_vary = 0;
    run_times(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "done") && steps == 30 && v[0] == 1 && v[1] == 9 && fabs(v[2] - 2.92) < 1e-12 &&
                  v[3] == 0.5 && fabs(v[4] - 1.46) < 1e-12,
              "%s after %lld steps: step ms median %g, p90 %g, mean %g; optimizer median %g, mean %g", status, steps,
              v[0], v[1], v[2], v[3], v[4]);

    /* items per second from the median step: cnn-tiny's 32 images in 1 ms
     * (steps 6-12: 1, 9, 1, 1, 1, 9, 1 ms) */
    snprintf(db, sizeof db, "%s/items.db", dir);
    fake_vary = 1;
    CHECK(fake_process_of("workloads: [cnn-tiny]\noptimizers: [sgd]\nlrs: [0.01]\nsteps: 12\nbackend: cpu\n", db, 0,
                          0, NULL) == OB_OK);
    fake_vary = 0;
    char got[200];
    query_text(db, "SELECT step_ms_median, items_per_sec FROM runs", got, sizeof got);
    CHECK_MSG(!strcmp(got, "1.0|32000.0"), "step median and items per second: %s", got);
    /* steps too fast for the timer: no items per second (not infinitely many) */
    snprintf(db, sizeof db, "%s/items0.db", dir);
    fake_vary = 2;
    CHECK(fake_process_of("workloads: [cnn-tiny]\noptimizers: [sgd]\nlrs: [0.01]\nsteps: 12\nbackend: cpu\n", db, 0,
                          0, NULL) == OB_OK);
    fake_vary = 0;
    query_text(db, "SELECT step_ms_median, items_per_sec FROM runs", got, sizeof got);
    CHECK_MSG(!strcmp(got, "0.0|NULL"), "step median 0 and items per second: %s", got);

    snprintf(db, sizeof db, "%s/wall.db", dir);
    fake_sleep_at = 3;
    CHECK(fake_process(db, 0, 12) == OB_ERR_INTERRUPTED);
    fake_sleep_at = 0;
    run_times(db, status, sizeof status, &steps, v);
    const double wall_before = v[5];
    CHECK_MSG(!strcmp(status, "interrupted") && wall_before >= 0.3, "%s, wall %g s", status, wall_before);
    CHECK_OK(fake_process(db, 1, 0), &(ob_err){0});
    run_times(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "done") && v[5] >= 0.3, "%s: wall %g s after %g s before the resume", status, v[5],
              wall_before);
    /* and the quadratic's known minimum, 0, as its loss floor */
    query_text(db, "SELECT loss_floor FROM runs", got, sizeof got);
    CHECK_MSG(!strcmp(got, "0.0"), "loss floor '%s'", got);

    snprintf(db, sizeof db, "%s/late_stop.db", dir);
    ob_run_summary sum;
    CHECK(fake_process_of("workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\nsteps: 30\n"
                          "checkpoint_every: 0\nbackend: cpu\n", db, 0, 30, &sum) == OB_ERR_INTERRUPTED);
    run_times(db, status, sizeof status, &steps, v);
    CHECK_MSG(!strcmp(status, "done") && steps == 30 && sum.done == 1 && sum.interrupted == 0,
              "stopped during the last step: %s after %lld steps", status, steps);
}

/* A cell another process finished as diverged, or failed, after this one
 * planned it is left as it is (counted busy), not run again. */
static void test_finished_elsewhere(void)
{
    static const char *const status[] = {"diverged", "failed"};
    for (int k = 0; k < 2; k++) {
        char db[300], sql[200], got[200];
        snprintf(db, sizeof db, "%s/elsewhere%d.db", dir, k);
        snprintf(sql, sizeof sql, "UPDATE runs SET status = '%s', steps_done = 3 WHERE id = 2", status[k]);
        fake_sql = sql;
        fake_sql_db = db;
        ob_run_summary sum;
        CHECK(fake_process_of("workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 2\nsteps: 10\n"
                              "backend: cpu\n", db, 0, 0, &sum) == OB_OK);
        fake_sql = NULL;
        query_text(db, "SELECT id, status, steps_done FROM runs ORDER BY id", got, sizeof got);
        char want[100];
        snprintf(want, sizeof want, "1|done|10 2|%s|3", status[k]);
        CHECK_MSG(!strcmp(got, want) && sum.done == 1 && sum.busy == 1, "%s elsewhere: runs '%s', %d done, %d busy",
                  status[k], got, sum.done, sum.busy);
    }
}

/* A checkpoint whose process segments are not 0 first, then ascending and
 * before its step, is skipped: the run starts over. */
static void test_resume_bad_segments(void)
{
    static const int64_t bad[][3] = {{0, 5, 5}, {0, 7, 5}, {0, 12, -1}, {3, -1, -1}};
    static const int n_bad[] = {3, 3, 2, 1};
    const char *yaml = "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\nsteps: 30\n"
                       "checkpoint_every: 0\nbackend: cpu\n";
    for (int v = 0; v < 4; v++) {
        char db[300];
        snprintf(db, sizeof db, "%s/seg%d.db", dir, v);
        CHECK(fake_process_of(yaml, db, 0, 12, NULL) == OB_ERR_INTERRUPTED);
        rewrite_section(db, 12, "segments", bad[v], (uint64_t)n_bad[v] * sizeof(int64_t));
        ob_run_summary sum;
        CHECK(fake_process_of(yaml, db, 1, 0, &sum) == OB_OK);
        CHECK_MSG(sum.resumed == 0 && sum.done == 1, "segments %d: %d resumed, %d done", v, sum.resumed, sum.done);
    }
}

/* A checkpoint whose optimizer times are not one a step (as no optbench
 * writes them) resumes with those times unknown: the optimizer's statistics
 * are of the steps timed after the resume (0.5 ms each). */
static void test_resume_short_opt_ms(void)
{
    char db[300], status[32];
    snprintf(db, sizeof db, "%s/short_opt.db", dir);
    CHECK(fake_process(db, 0, 12) == OB_ERR_INTERRUPTED);
    static const double one = 7.0;
    rewrite_section(db, 12, "opt_ms", &one, sizeof one);
    ob_run_summary sum;
    CHECK(fake_process_of("workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\nsteps: 30\n"
                          "checkpoint_every: 0\nbackend: cpu\n", db, 1, 0, &sum) == OB_OK);
    long long steps;
    double v[6];
    run_times(db, status, sizeof status, &steps, v);
    CHECK_MSG(sum.resumed == 1 && !strcmp(status, "done") && steps == 30 && v[2] == 1 && v[3] == 0.5 && v[4] == 0.5,
              "%d resumed, %s after %lld steps: step mean %g, optimizer median %g, mean %g", sum.resumed, status,
              steps, v[2], v[3], v[4]);
}

/* A run stopped by a process that kept its checkpoints in a folder of its
 * own (checkpoint_dir) is continued by one that keeps them beside the
 * database: the other folder's checkpoints are used, and go once the run is
 * finished, also when the continuing process wrote none of its own. The last
 * step is not checkpointed. */
static void test_takeover_folder(void)
{
    char db[300], other[300], yaml[700], path[700];
    snprintf(db, sizeof db, "%s/takeover.db", dir);
    snprintf(other, sizeof other, "%s/other-ckpt", dir);
    snprintf(yaml, sizeof yaml, "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\nsteps: 30\n"
                                "checkpoint_every: 0\nbackend: cpu\ncheckpoint_dir: %s\n", other);
    CHECK(fake_process_of(yaml, db, 0, 12, NULL) == OB_ERR_INTERRUPTED);
    char id[40];
    database_id(db, id, sizeof id);
    CHECK_MSG(strlen(id) == 16, "database id '%s'", id);
    snprintf(path, sizeof path, "%s/%s/run-1/ckpt-000000000012.obck", other, id);
    CHECK_MSG(exists(path), "no '%s'", path);
    ob_run_summary sum;
    CHECK(fake_process_of("workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\nsteps: 30\n"
                          "checkpoint_every: 0\nbackend: cpu\n", db, 1, 0, &sum) == OB_OK);
    CHECK_MSG(sum.resumed == 1 && sum.done == 1, "%d resumed, %d done", sum.resumed, sum.done);
    CHECK_MSG(!exists(path), "'%s' is left after the run finished", path);

    /* no checkpoint at the last step (the run is recorded, and its
     * checkpoints go): a checkpoint folder that cannot be written to by then
     * does not matter */
    snprintf(db, sizeof db, "%s/last.db", dir);
    snprintf(other, sizeof other, "%s/last-ckpt", dir);
    snprintf(yaml, sizeof yaml, "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nseeds: 1\nsteps: 20\n"
                                "checkpoint_every: 10\nbackend: cpu\ncheckpoint_dir: %s\n", other);
    snprintf(path, sizeof path, "%s", other); /* the folder of the database's runs is in it */
    fake_block = path;
    fake_block_at = 20;
    CHECK(fake_process_of(yaml, db, 0, 0, &sum) == OB_OK);
    fake_block = NULL;
    CHECK_MSG(sum.done == 1 && sum.interrupted == 0, "%d done, %d interrupted", sum.done, sum.interrupted);
}

/* ---- the guard's state across a resume ------------------------------------ */

#define RUN_SQL "SELECT status, diverged_step, steps_done FROM runs"
#define EVENTS_SQL "SELECT step, kind FROM events WHERE kind <> 'resumed' ORDER BY id"

/* A run of yaml stopped after step `stop` and resumed ends as the uninterrupted
 * run does: its status, diverged step, steps and events; and one event more
 * records the stop (kind 'resumed', at the checkpoint's step). */
static void resume_same(const char *name, const char *yaml, int stop, const char *want_run)
{
    char ref[300], db[300], a[2000], b[2000];
    snprintf(ref, sizeof ref, "%s/%s_ref.db", dir, name);
    snprintf(db, sizeof db, "%s/%s.db", dir, name);
    CHECK(fake_process_of(yaml, ref, 0, 0, NULL) == OB_OK);
    query_text(ref, RUN_SQL, a, sizeof a);
    CHECK_MSG(!strcmp(a, want_run), "%s: the uninterrupted run is '%s', want '%s'", name, a, want_run);
    CHECK(fake_process_of(yaml, db, 0, stop, NULL) == OB_ERR_INTERRUPTED);
    ob_run_summary sum;
    CHECK(fake_process_of(yaml, db, 1, 0, &sum) == OB_OK);
    CHECK_MSG(sum.resumed == 1, "%s: %d runs continued from a checkpoint", name, sum.resumed);
    query_text(db, RUN_SQL, b, sizeof b);
    CHECK_MSG(!strcmp(a, b), "%s: stopped after step %d and resumed: '%s', uninterrupted: '%s'", name, stop, b, a);
    query_text(ref, EVENTS_SQL, a, sizeof a);
    query_text(db, EVENTS_SQL, b, sizeof b);
    CHECK_MSG(!strcmp(a, b), "%s: events after the resume '%s', uninterrupted '%s'", name, b, a);
    char want[64];
    snprintf(want, sizeof want, "%d|resumed", stop);
    query_text(db, "SELECT step, kind FROM events WHERE kind = 'resumed'", b, sizeof b);
    CHECK_MSG(!strcmp(b, want), "%s: the stop's record '%s', want '%s'", name, b, want);
}

/* The run loop's state comes back from the checkpoint: a streak of skipped
 * non-finite steps that began before the stop (sgd at lr 30 on the quadratic
 * overflows at step 15: the run is diverged at step 15 after 10 skipped
 * steps, stopped after step 18 or not), the first loss that divergence is
 * measured against (lr 3: the loss, 1.72 at step 1 and 4.28 at step 2, passes
 * 5000 x the first at step 8, stopped after step 5 or not), and the last
 * evaluation of a run stopped again before its next one. */
static void test_resume_guard_state(void)
{
    resume_same("streak",
                "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [30]\nsteps: 40\ncheckpoint_every: 0\nbackend: cpu\n"
                "workload_params: {quadratic: {dim: 8}}\ntrain: {diverge_factor: 1e38}\n",
                18, "diverged|15|24");
    resume_same("factor",
                "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [3]\nsteps: 40\ncheckpoint_every: 0\nbackend: cpu\n"
                "eval_every: 5\nworkload_params: {quadratic: {dim: 8}}\ntrain: {diverge_factor: 5000}\n",
                5, "diverged|8|8");
    /* a diverged run has no final loss and no evaluation of its end, though
     * it was evaluated at steps 0 and 5; nothing is evaluated after it diverged */
    char ref[300], got[200];
    snprintf(ref, sizeof ref, "%s/factor_ref.db", dir);
    query_text(ref, "SELECT final_loss IS NULL, eval_loss IS NULL, eval_metric IS NULL, (SELECT group_concat(step) "
                    "FROM evals) FROM runs", got, sizeof got);
    CHECK_MSG(!strcmp(got, "1|1|1|0,5"), "diverged run: '%s'", got);
    snprintf(ref, sizeof ref, "%s/streak_ref.db", dir);
    query_text(ref, "SELECT final_loss IS NULL, eval_loss IS NULL, (SELECT count(*) FROM evals) FROM runs", got,
               sizeof got);
    CHECK_MSG(!strcmp(got, "1|1|0"), "diverged run without evaluations: '%s'", got);
    /* nor the metric of its last evaluation (cnn-tiny's accuracy at step 2;
     * sgd at lr 100 diverges at step 3) */
    snprintf(ref, sizeof ref, "%s/metric.db", dir);
    CHECK(fake_process_of("workloads: [cnn-tiny]\noptimizers: [sgd]\nlrs: [100]\nsteps: 20\neval_every: 2\n"
                          "backend: cpu\n", ref, 0, 0, NULL) == OB_OK);
    query_text(ref, "SELECT status, diverged_step, eval_loss IS NULL, eval_metric IS NULL, (SELECT count(metric) "
                    "FROM evals) FROM runs", got, sizeof got);
    CHECK_MSG(!strcmp(got, "diverged|3|1|1|2"), "diverged run with a metric: '%s'", got);

    /* evaluated at 0, 5 and 10, stopped after 12, then after 13: the
     * interrupted run's evaluation is still step 10's */
    const char *yaml = "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [0.01]\nsteps: 30\ncheckpoint_every: 0\n"
                       "eval_every: 5\nbackend: cpu\n";
    char db[300], a[2000], b[2000];
    snprintf(db, sizeof db, "%s/eval.db", dir);
    CHECK(fake_process_of(yaml, db, 0, 12, NULL) == OB_ERR_INTERRUPTED);
    CHECK(fake_process_of(yaml, db, 1, 1, NULL) == OB_ERR_INTERRUPTED);
    query_text(db, "SELECT status, steps_done, eval_loss FROM runs", a, sizeof a);
    query_text(db, "SELECT 'interrupted|13|' || loss FROM evals WHERE step = 10", b, sizeof b);
    CHECK_MSG(b[0] && !strcmp(a, b), "after a second stop: '%s', want '%s'", a, b);
}

/* A checkpoint of an older optbench, whose "run" section did not say where
 * its streak of non-finite steps began (bad_from 0, the section's last
 * field): the streak is taken to have begun bad_streak steps before the
 * checkpoint, and the run of test_resume_guard_state's "streak" (stopped
 * after step 18, 4 steps into the streak) still diverges at step 15. */
static void test_resume_streak_without_start(void)
{
    const char *yaml = "workloads: [quadratic]\noptimizers: [sgd]\nlrs: [30]\nsteps: 40\ncheckpoint_every: 0\n"
                       "backend: cpu\nworkload_params: {quadratic: {dim: 8}}\ntrain: {diverge_factor: 1e38}\n";
    char db[300], ck[600], got[200];
    snprintf(db, sizeof db, "%s/streak_old.db", dir);
    CHECK(fake_process_of(yaml, db, 0, 18, NULL) == OB_ERR_INTERRUPTED);
    ob_ckpt c;
    read_run1(db, 18, ck, &c);
    const ob_ckpt_section *rs = ob_ckpt_find(&c, "run");
    unsigned char run[256];
    int64_t from = -1;
    const uint64_t nb = rs ? rs->bytes : 0;
    CHECK_MSG(nb >= sizeof from && nb <= sizeof run, "run section of %llu bytes", (unsigned long long)nb);
    if (nb >= sizeof from && nb <= sizeof run) {
        memcpy(run, rs->data, nb);
        memcpy(&from, run + nb - sizeof from, sizeof from);
        memset(run + nb - sizeof from, 0, sizeof from);
    }
    ob_ckpt_free(&c);
    CHECK_MSG(from == 15, "the streak's first step in the checkpoint: %lld, want 15 (is bad_from still the "
                          "run section's last field?)", (long long)from);
    rewrite_section(db, 18, "run", run, nb);
    ob_run_summary sum = {0};
    CHECK_OK(fake_process_of(yaml, db, 1, 0, &sum), &(ob_err){0});
    CHECK_MSG(sum.resumed == 1, "%d runs continued from a checkpoint", sum.resumed);
    query_text(db, RUN_SQL, got, sizeof got);
    CHECK_MSG(!strcmp(got, "diverged|15|24"), "resumed from a checkpoint without the streak's start: '%s'", got);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/ob_test_ckpt_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_crc();
    test_round_trip_and_damage();
    test_sealed_but_wrong();
    test_write_keep_and_list();
    test_write_leftovers_and_failures();
    test_store_resume();
    test_shard_and_devices_parsing();
    test_signals();
    test_mkdir_against_rmdir();
    test_mkdir_dangling();
    test_resume_warmup();
    test_resume_without_host_state();
    test_resume_guard_state();
    test_resume_streak_without_start();
    test_finished_elsewhere();
    test_run_times();
    test_resume_bad_segments();
    test_resume_short_opt_ms();
    test_takeover_folder();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
