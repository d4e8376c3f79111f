/* harness/checkpoint.c - checkpoint files (see checkpoint.h): CRC-32C,
 * encoding, atomic writing with fsync and rename, listing, pruning, and a
 * reader that trusts nothing it has not checked. */
#include "harness/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const unsigned char magic[8] = {'O', 'B', 'C', 'K', 'P', 'T', '\r', '\n'};
static const unsigned char end_magic[4] = {'O', 'B', 'C', 'E'};

/* ---- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), slicing by 8 --- */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        crc_tab[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            crc_tab[k][i] = (crc_tab[k - 1][i] >> 8) ^ crc_tab[0][crc_tab[k - 1][i] & 0xff];
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void wr64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t ob_crc32c(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const unsigned char *p = data;
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = crc ^ rd32(p), hi = rd32(p + 4);
        crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^ crc_tab[5][(lo >> 16) & 0xff] ^
              crc_tab[4][lo >> 24] ^ crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
              crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

/* ---- reading --------------------------------------------------------------- */

/* The header of a checkpoint of len bytes (buf holds at least its
 * OB_CKPT_HEADER_BYTES when len does): its magic, version and length. */
static ob_status check_header(const unsigned char *buf, size_t len, ob_err *e)
{
    if (len < OB_CKPT_HEADER_BYTES + OB_CKPT_TRAILER_BYTES)
        return ob_fail(e, OB_ERR_INPUT, "truncated: %zu bytes, shorter than a header and trailer", len);
    if (memcmp(buf, magic, sizeof magic) != 0)
        return ob_fail(e, OB_ERR_INPUT, "not an optbench checkpoint (bad magic)");
    uint32_t version = rd32(buf + 8);
    uint64_t total = rd64(buf + 24);
    if (version != OB_CKPT_VERSION)
        return ob_fail(e, OB_ERR_INPUT, "checkpoint format version %u; this optbench reads version %d",
                       version, OB_CKPT_VERSION);
    if (total != (uint64_t)len)
        return ob_fail(e, OB_ERR_INPUT, "truncated or padded: the header says %llu bytes, the file has %zu",
                       (unsigned long long)total, len);
    return OB_OK;
}

ob_status ob_ckpt_parse(const unsigned char *buf, size_t len, ob_ckpt *c, ob_err *e)
{
    memset(c, 0, sizeof *c);
    OB_TRY(check_header(buf, len, e));
    uint32_t n = rd32(buf + 12);
    if (memcmp(buf + len - 4, end_magic, 4) != 0)
        return ob_fail(e, OB_ERR_INPUT, "truncated: no end marker");
    uint32_t want = rd32(buf + len - 8), got = ob_crc32c(0, buf, len - 8);
    if (want != got)
        return ob_fail(e, OB_ERR_INPUT, "checksum mismatch (stored %08x, computed %08x): the file is damaged",
                       want, got);
    if (n > OB_CKPT_MAX_SECTIONS)
        return ob_fail(e, OB_ERR_INPUT, "%u sections; at most %d", n, OB_CKPT_MAX_SECTIONS);
    c->step = (int64_t)rd64(buf + 16);
    if (c->step < 0) return ob_fail(e, OB_ERR_INPUT, "negative step %lld", (long long)c->step);
    size_t pos = OB_CKPT_HEADER_BYTES, end = len - OB_CKPT_TRAILER_BYTES;
    for (uint32_t i = 0; i < n; i++) {
        if (end - pos < 4) return ob_fail(e, OB_ERR_INPUT, "section %u: truncated name length", i);
        uint32_t nl = rd32(buf + pos);
        pos += 4;
        if (nl == 0 || nl >= OB_CKPT_NAME_MAX)
            return ob_fail(e, OB_ERR_INPUT, "section %u: name length %u out of range", i, nl);
        if (end - pos < nl) return ob_fail(e, OB_ERR_INPUT, "section %u: truncated name", i);
        ob_ckpt_section *s = &c->sec[i];
        memcpy(s->name, buf + pos, nl);
        s->name[nl] = '\0';
        if (strlen(s->name) != nl) return ob_fail(e, OB_ERR_INPUT, "section %u: NUL byte in its name", i);
        pos += nl;
        if (end - pos < 8) return ob_fail(e, OB_ERR_INPUT, "section '%s': truncated length", s->name);
        uint64_t d = rd64(buf + pos);
        pos += 8;
        if (d > (uint64_t)(end - pos))
            return ob_fail(e, OB_ERR_INPUT, "section '%s': %llu bytes, more than the file holds", s->name,
                           (unsigned long long)d);
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(c->sec[k].name, s->name))
                return ob_fail(e, OB_ERR_INPUT, "section '%s' appears twice", s->name);
        s->data = buf + pos;
        s->bytes = d;
        pos += (size_t)d;
        c->n = (int)i + 1;
    }
    if (pos != end)
        return ob_fail(e, OB_ERR_INPUT, "%zu bytes after the last section", end - pos);
    return OB_OK;
}

ob_status ob_ckpt_read(const char *path, ob_ckpt *c, ob_err *e)
{
    memset(c, 0, sizeof *c);
    /* O_NONBLOCK: a FIFO of that name (put there by mistake) would block
     * the open until a writer came; it is then refused as not a file */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) /* gone (pruned since it was listed) is no checkpoint; anything else, a read that failed */
        return ob_fail(e, errno == ENOENT ? OB_ERR_INPUT : OB_ERR_IO, "checkpoint '%s': cannot open it: %s", path,
                       strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ob_fail(e, OB_ERR_INPUT, "checkpoint '%s': not a regular file", path);
    }
    size_t len = (size_t)sb.st_size;
    /* its header first: a file that is no checkpoint of its size (a stray
     * large file) is not read whole into memory */
    unsigned char head[OB_CKPT_HEADER_BYTES];
    ssize_t hr = len >= sizeof head ? pread(fd, head, sizeof head, 0) : 0;
    if (len >= sizeof head && hr != (ssize_t)sizeof head) {
        const int en = errno;
        close(fd);
        return hr < 0 ? ob_fail(e, OB_ERR_IO, "checkpoint '%s': cannot read it: %s", path, strerror(en))
                      : ob_fail(e, OB_ERR_INPUT, "checkpoint '%s': truncated while read (a short read)", path);
    }
    if (check_header(head, len, e) != OB_OK) {
        close(fd);
        return ob_err_prefix(e, "checkpoint '%s': ", path);
    }
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) {
        close(fd);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory reading checkpoint '%s' (%zu bytes)", path, len);
    }
    size_t got = 0;
    int rerr = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) rerr = errno;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != len) {
        free(buf);
        /* the end reached early: the file was cut since its size was read (damaged, not unreadable) */
        return rerr ? ob_fail(e, OB_ERR_IO, "checkpoint '%s': cannot read it: %s", path, strerror(rerr))
                    : ob_fail(e, OB_ERR_INPUT, "checkpoint '%s': truncated while read (%zu of %zu bytes)", path,
                              got, len);
    }
    ob_status s = ob_ckpt_parse(buf, len, c, e);
    if (s != OB_OK) {
        free(buf);
        memset(c, 0, sizeof *c);
        return ob_err_prefix(e, "checkpoint '%s': ", path);
    }
    c->buf = buf;
    c->len = len;
    return OB_OK;
}

void ob_ckpt_free(ob_ckpt *c)
{
    free(c->buf);
    c->buf = NULL;
    c->n = 0;
}

const ob_ckpt_section *ob_ckpt_find(const ob_ckpt *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->sec[i].name, name)) return &c->sec[i];
    return NULL;
}

/* ---- writing --------------------------------------------------------------- */

static ob_status check_sections(const ob_ckpt_section *secs, int n, uint64_t *total, ob_err *e)
{
    if (n < 0 || n > OB_CKPT_MAX_SECTIONS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%d checkpoint sections; at most %d", n,
                                OB_CKPT_MAX_SECTIONS);
    uint64_t t = OB_CKPT_HEADER_BYTES + OB_CKPT_TRAILER_BYTES;
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(secs[i].name);
        if (nl == 0 || nl >= OB_CKPT_NAME_MAX)
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "checkpoint section name '%s' too long or empty",
                                    secs[i].name);
        t += 4 + nl + 8 + secs[i].bytes;
    }
    *total = t;
    return OB_OK;
}

static void put_header(unsigned char *h, int64_t step, int n, uint64_t total)
{
    memcpy(h, magic, 8);
    wr32(h + 8, OB_CKPT_VERSION);
    wr32(h + 12, (uint32_t)n);
    wr64(h + 16, (uint64_t)step);
    wr64(h + 24, total);
}

ob_status ob_ckpt_encode(int64_t step, const ob_ckpt_section *secs, int n, unsigned char **out,
                         size_t *len, ob_err *e)
{
    uint64_t total = 0;
    OB_TRY(check_sections(secs, n, &total, e));
    unsigned char *b = malloc((size_t)total);
    if (!b) return ob_fail(e, OB_ERR_NOMEM, "out of memory for a checkpoint of %llu bytes",
                           (unsigned long long)total);
    put_header(b, step, n, total);
    size_t pos = OB_CKPT_HEADER_BYTES;
    for (int i = 0; i < n; i++) {
        uint32_t nl = (uint32_t)strlen(secs[i].name);
        wr32(b + pos, nl);
        memcpy(b + pos + 4, secs[i].name, nl);
        pos += 4 + nl;
        wr64(b + pos, secs[i].bytes);
        pos += 8;
        if (secs[i].bytes) memcpy(b + pos, secs[i].data, (size_t)secs[i].bytes);
        pos += (size_t)secs[i].bytes;
    }
    wr32(b + pos, ob_crc32c(0, b, pos));
    memcpy(b + pos + 4, end_magic, 4);
    *out = b;
    *len = (size_t)total;
    return OB_OK;
}

/* Write all of p, feeding the checksum. */
static int write_all(int fd, const void *p, size_t n, uint32_t *crc)
{
    if (crc) *crc = ob_crc32c(*crc, p, n);
    const unsigned char *b = p;
    while (n) {
        ssize_t w = write(fd, b, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

void ob_ckpt_path(const char *dir, int64_t step, char *buf, size_t n)
{
    snprintf(buf, n, "%s/ckpt-%012lld.obck", dir, (long long)step);
}

static int parse_name(const char *name, int64_t *step, int *tmp)
{
    size_t l = strlen(name);
    if (l < 22 || strncmp(name, "ckpt-", 5) != 0 || strncmp(name + 17, ".obck", 5) != 0) return 0;
    if (l == 22) *tmp = 0;
    else if (!strcmp(name + 22, ".tmp")) *tmp = 1;
    else return 0;
    int64_t s = 0;
    for (int i = 5; i < 17; i++) {
        if (name[i] < '0' || name[i] > '9') return 0;
        s = s * 10 + (name[i] - '0');
    }
    *step = s;
    return 1;
}

static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

ob_status ob_ckpt_list(const char *dir, int64_t *steps, int max, int *count, ob_err *e)
{
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return OB_OK; /* no folder: no checkpoints */
        return ob_fail(e, OB_ERR_IO, "cannot list the checkpoints in '%s': %s", dir, strerror(errno));
    }
    int n = 0, cap = 64, err = 0;
    int64_t *all = malloc((size_t)cap * sizeof *all);
    if (!all) err = ENOMEM;
    struct dirent *de;
    while (!err) {
        errno = 0;
        if ((de = readdir(d)) == NULL) {
            err = errno; /* 0 at the end of the folder */
            break;
        }
        int64_t s;
        int tmp;
        if (!parse_name(de->d_name, &s, &tmp) || tmp) continue;
        if (n == cap) {
            int64_t *na = realloc(all, (size_t)(cap *= 2) * sizeof *all);
            if (!na) {
                err = ENOMEM;
                break;
            }
            all = na;
        }
        all[n++] = s;
    }
    closedir(d);
    if (err) {
        free(all);
        return ob_fail(e, err == ENOMEM ? OB_ERR_NOMEM : OB_ERR_IO, "cannot list the checkpoints in '%s': %s", dir,
                       strerror(err));
    }
    qsort(all, (size_t)n, sizeof *all, cmp_desc);
    int k = n < max ? n : max;
    memcpy(steps, all, (size_t)k * sizeof *steps);
    free(all);
    *count = k;
    return OB_OK;
}

/* Delete temporary files other than keep_tmp, and checkpoints beyond the
 * newest `keep`, never the one of step `written` (-1: none). Where the
 * folder cannot be listed whole, nothing is deleted (keep > 0): which are the
 * newest is not known. */
static void prune(const char *dir, int keep, int64_t written)
{
    int64_t newest[OB_CKPT_MAX_SECTIONS];
    int nk = 0;
    if (keep > 0) {
        ob_err le;
        ob_err_clear(&le);
        if (ob_ckpt_list(dir, newest, keep < OB_CKPT_MAX_SECTIONS ? keep : OB_CKPT_MAX_SECTIONS, &nk, &le) != OB_OK)
            return;
    }
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    char path[1200];
    while ((de = readdir(d)) != NULL) {
        int64_t s;
        int tmp, kept = 0;
        if (!parse_name(de->d_name, &s, &tmp)) continue;
        for (int i = 0; i < nk && !tmp; i++) kept |= newest[i] == s;
        if (kept || (!tmp && s == written)) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

ob_status ob_ckpt_write(const char *dir, int64_t step, const ob_ckpt_section *secs, int n, int keep,
                        ob_err *e)
{
    uint64_t total = 0;
    OB_TRY(check_sections(secs, n, &total, e));
    OB_TRY(ob_mkdir_p(dir, e));
    char path[1100], tmp[1110];
    ob_ckpt_path(dir, step, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return ob_fail(e, OB_ERR_IO, "cannot write checkpoint '%s': %s", tmp, strerror(errno));
    unsigned char h[OB_CKPT_HEADER_BYTES], t[OB_CKPT_TRAILER_BYTES];
    put_header(h, step, n, total);
    uint32_t crc = 0;
    int bad = write_all(fd, h, sizeof h, &crc);
    for (int i = 0; i < n && !bad; i++) {
        unsigned char sh[OB_CKPT_NAME_MAX + 12];
        uint32_t nl = (uint32_t)strlen(secs[i].name);
        wr32(sh, nl);
        memcpy(sh + 4, secs[i].name, nl);
        wr64(sh + 4 + nl, secs[i].bytes);
        bad = write_all(fd, sh, 12 + nl, &crc);
        if (!bad && secs[i].bytes) bad = write_all(fd, secs[i].data, (size_t)secs[i].bytes, &crc);
    }
    if (!bad) {
        wr32(t, crc);
        memcpy(t + 4, end_magic, 4);
        bad = write_all(fd, t, sizeof t, NULL);
    }
    if (!bad) bad = fsync(fd);
    int err = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        unlink(tmp);
        return ob_fail(e, OB_ERR_IO, "cannot write checkpoint '%s': %s (the previous checkpoints are kept)",
                       tmp, strerror(err));
    }
    if (rename(tmp, path) != 0) {
        err = errno;
        unlink(tmp);
        return ob_fail(e, OB_ERR_IO, "cannot rename checkpoint '%s': %s", tmp, strerror(err));
    }
    fsync_dir(dir);
    prune(dir, keep < 1 ? 1 : keep, step);
    return OB_OK;
}

void ob_ckpt_remove_checkpoints(const char *dir)
{
    prune(dir, 0, -1);
    rmdir(dir); /* fails while not empty: a run's lock file in it stays */
}

void ob_ckpt_remove_all(const char *dir)
{
    prune(dir, 0, -1);
    DIR *d = opendir(dir);
    if (!d) return;
    /* the run's lock file, if any */
    char path[1200];
    snprintf(path, sizeof path, "%s/lock", dir);
    unlink(path);
    closedir(d);
    rmdir(dir);
}
