/* harness/locks.c - the run and benchmark lock files (see locks.h). */
#include "harness/locks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"

void ob_lock_run_dir(const char *db_path, int64_t run_id, char *buf, size_t n)
{
    snprintf(buf, n, "%s.ckpt/run-%lld", db_path, (long long)run_id);
}

void ob_lock_bench_path(const char *db_path, int64_t bench_id, char *buf, size_t n)
{
    snprintf(buf, n, "%s.ckpt/benchmark-%lld.lock", db_path, (long long)bench_id);
}

ob_status ob_lock_bench(const char *db_path, int64_t bench_id, int exclusive, int *fd, ob_err *e)
{
    char dir[1100], path[1200];
    *fd = -1;
    snprintf(dir, sizeof dir, "%s.ckpt", db_path);
    ob_lock_bench_path(db_path, bench_id, path, sizeof path);
    for (int attempt = 0;; attempt++) {
        OB_TRY(ob_mkdir_p(dir, e));
        int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (f < 0 && errno == ENOENT && attempt < 1000) continue; /* the folder went again */
        if (f < 0) return ob_fail(e, OB_ERR_IO, "cannot create the lock file '%s': %s", path, strerror(errno));
        int r;
        while ((r = flock(f, exclusive ? LOCK_EX | LOCK_NB : LOCK_SH)) != 0 && errno == EINTR) {
        }
        if (r != 0) {
            const int busy = errno == EWOULDBLOCK;
            const int err = errno;
            close(f);
            if (busy) return OB_OK;
            return ob_fail(e, OB_ERR_IO, "cannot lock '%s': %s", path, strerror(err));
        }
        struct stat a, b;
        if (fstat(f, &a) != 0 || stat(path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
            close(f); /* removed by the process that held it last: the new file is the lock */
            if (attempt < 1000) continue;
            return ob_fail(e, OB_ERR_IO, "cannot keep a lock on '%s': it is removed and made again", path);
        }
        *fd = f;
        return OB_OK;
    }
}

void ob_unlock_bench(const char *db_path, int64_t bench_id, int fd)
{
    if (fd < 0) return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        char path[1200];
        ob_lock_bench_path(db_path, bench_id, path, sizeof path);
        unlink(path);
    }
    close(fd);
}

/* dir as an absolute path (for a process started in another folder): the
 * current folder before a relative one; dir as it is when that is unknown. */
static void ob_lock_absolute_dir(const char *dir, char *buf, size_t n)
{

    char cwd[1024];
    if (dir[0] != '/' && getcwd(cwd, sizeof cwd)) snprintf(buf, n, "%s/%s", cwd, dir);
    else snprintf(buf, n, "%s", dir);
}

int ob_lock_cell(const char *dir, const char *ckdir, int *fd, char *owner, size_t n, ob_err *e, ob_status *s)
{
    *fd = -1;
    *s = OB_OK;
    if (n) owner[0] = '\0';
    char path[1200];
    snprintf(path, sizeof path, "%s/lock", dir);
    for (int attempt = 0;; attempt++) {
        if ((*s = ob_mkdir_p(dir, e)) != OB_OK) return 0;
        int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (f < 0 && errno == ENOENT && attempt < 1000) continue; /* the folder went again */
        if (f < 0) {
            *s = ob_fail(e, OB_ERR_IO, "cannot create the lock file '%s': %s", path, strerror(errno));
            return 0;
        }
        int locked = flock(f, LOCK_EX | LOCK_NB) == 0;
        if (!locked && errno != EWOULDBLOCK) {
            *s = ob_fail(e, OB_ERR_IO, "cannot lock '%s': %s", path, strerror(errno));
            close(f);
            return 0;
        }
        if (n) {
            ssize_t got = pread(f, owner, n - 1, 0);
            owner[got > 0 ? got : 0] = '\0';
        }
        if (!locked) {
            close(f);
            return 0;
        }
        struct stat a, b;
        if (fstat(f, &a) != 0 || stat(path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
            close(f);
            if (attempt < 1000) continue;
            *s = ob_fail(e, OB_ERR_IO, "cannot keep a lock on '%s': it is removed and made again", path);
            return 0;
        }
        char me[2600], host[256] = "?", where[2200];
        gethostname(host, sizeof host - 1);
        ob_lock_absolute_dir(ckdir, where, sizeof where);
        int len = snprintf(me, sizeof me, "pid %ld host %s\ncheckpoints %s\n", (long)getpid(), host, where);
        if (ftruncate(f, 0) != 0 || pwrite(f, me, (size_t)len, 0) != len) {
            /* only informative: the flock is the lock */
        }
        *fd = f;
        return 1;
    }
}

void ob_lock_owner_text(const char *owner, char *buf, size_t n)
{
    size_t l = strcspn(owner, "\n");
    if (l == 0) snprintf(buf, n, "another process");
    else snprintf(buf, n, "%.*s", (int)(l < 300 ? l : 300), owner);
}

void ob_lock_owner_ckdir(const char *owner, int64_t run_id, const char *dir, char *buf, size_t n)
{
    buf[0] = '\0';
    const char *p = strstr(owner, "\ncheckpoints ");
    if (!p) return;
    p += strlen("\ncheckpoints ");
    size_t l = strcspn(p, "\n");
    char tail[48];
    int tl = snprintf(tail, sizeof tail, "/run-%lld", (long long)run_id);
    if (l + 1 > n || l < (size_t)tl || memcmp(p + l - (size_t)tl, tail, (size_t)tl) != 0) return;
    snprintf(buf, n, "%.*s", (int)l, p);
    char here[2200];
    ob_lock_absolute_dir(dir, here, sizeof here);
    if (!strcmp(buf, here)) buf[0] = '\0';
}

int ob_lock_run_held(const char *db_path, int64_t run_id, char *owner, size_t n)
{
    char dir[1100], path[1200];
    ob_lock_run_dir(db_path, run_id, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/lock", dir);
    owner[0] = '\0';
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0) return 0;
    int held = flock(f, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (held) {
        ssize_t got = pread(f, owner, n - 1, 0);
        owner[got > 0 ? got : 0] = '\0';
    } else {
        flock(f, LOCK_UN);
    }
    close(f);
    return held;
}

