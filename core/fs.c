/* core/fs.c - folders (see fs.h). */
#include "core/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The folder path could not be made: say which part failed and, where the
 * cause is the parent's permissions or a file in the way, which parent.
 * errno is left at err. */
static ob_status mkdir_fail(ob_err *e, const char *path, int err)
{
    char parent[1024];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash == parent) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(parent, sizeof parent, ".");
    const char *why = "";
    char hint[1200] = "";
    struct stat sb;
    if (err == EACCES || err == EPERM) {
        why = "the parent folder does not let this user write to or enter it";
    } else if (err == ENOTDIR && stat(parent, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        why = "a file of that name is in the way";
    } else if (err == EROFS) {
        why = "the file system is read-only";
    }
    if (*why) snprintf(hint, sizeof hint, " ('%s': %s)", parent, why);
    ob_fail(e, OB_ERR_IO, "cannot create folder '%s': %s%s", path, strerror(err), hint);
    errno = err;
    return OB_ERR_IO;
}

/* Whether path is a symbolic link whose target does not exist (a scratch
 * file system not mounted, say): its target into target. */
static int dangling_link(const char *path, char *target, size_t n)
{
    struct stat ls, ts;
    if (lstat(path, &ls) != 0 || !S_ISLNK(ls.st_mode) || stat(path, &ts) == 0 || errno != ENOENT) return 0;
    ssize_t k = readlink(path, target, n - 1);
    target[k > 0 ? k : 0] = '\0';
    return 1;
}

/* path cannot be made because a part of it is a link to nothing: say so at
 * once (waiting for it, as for a folder another process removed, would
 * wait in vain). */
static ob_status dangling_fail(ob_err *e, const char *path, const char *link, const char *target)
{
    ob_fail(e, OB_ERR_IO, "cannot create folder '%s': '%s' is a symbolic link to '%s', which does not exist (a "
            "file system not mounted?); create its target, or give another folder", path, link, target);
    errno = ENOENT;
    return OB_ERR_IO;
}

/* A process removing the parent over and over (or a busy machine that
 * schedules the remover between each of our two mkdirs) can win many times
 * in a row: retry for a while, not a fixed handful of tight attempts, with
 * short pauses once the first 100 tries have lost (at most about 10 s). */
#define OB_MKDIR_TRIES 100000
#define OB_MKDIR_REFUSED 1000 /* about 0.1 s of tries */
static void mkdir_pause(int attempt)
{
    if (attempt < 100) return;
    struct timespec ts = {0, 100000}; /* 0.1 ms */
    nanosleep(&ts, NULL);
}

ob_status ob_mkdir_p(const char *path, ob_err *e)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    {
        ob_fail(e, OB_ERR_INPUT, "folder name too long: '%s'", path);
        errno = ENAMETOOLONG;
        return OB_ERR_INPUT;
    }
    /* Another process sharing the database may remove an empty parent (the
     * DB.ckpt folder goes when its last run is finished), or the folder
     * itself (a finished run's), between our mkdirs and our check: the
     * child's mkdir or the check then fails with ENOENT, and the whole path
     * is made again. */
    int refused = 0; /* tries in a row whose ENOENT came with the parent there */
    for (int attempt = 0;; attempt++) {
        int vanished = 0;
        for (char *p = buf + 1;; p++) {
            if (*p == '/' || *p == '\0') {
                char c = *p;
                *p = '\0';
                if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                    const int err = errno;
                    int retry = err == ENOENT && p != buf + 1 && attempt < OB_MKDIR_TRIES;
                    if (retry) {
                        /* the parent: a link to nothing (fail now), gone
                         * meanwhile (made again), or there: a parent being
                         * removed still answers stat for a moment after a
                         * mkdir in it failed, so only many such tries in a row
                         * say that the file system refuses (/proc/x) */
                        char parent[1024], target[1024];
                        snprintf(parent, sizeof parent, "%s", buf);
                        char *slash = strrchr(parent, '/');
                        struct stat ps;
                        if (slash && slash != parent) {
                            *slash = '\0';
                            if (dangling_link(parent, target, sizeof target))
                                return dangling_fail(e, path, parent, target);
                            refused = stat(parent, &ps) == 0 ? refused + 1 : 0;
                            retry = refused < OB_MKDIR_REFUSED;
                        }
                    }
                    *p = c;
                    if (retry) {
                        vanished = 1;
                        break;
                    }
                    *p = '\0';
                    return mkdir_fail(e, buf, err);
                }
                *p = c;
                if (!c) break;
            }
        }
        if (vanished) {
            mkdir_pause(attempt);
            continue;
        }
        /* made, or there: unless it went again since (then make it again) */
        struct stat sb;
        int rc = stat(buf, &sb);
        if (rc == 0 && S_ISDIR(sb.st_mode)) return OB_OK;
        char target[1024];
        if (rc != 0 && dangling_link(buf, target, sizeof target)) return dangling_fail(e, path, buf, target);
        if (rc != 0 && errno == ENOENT && attempt < OB_MKDIR_TRIES) {
            mkdir_pause(attempt);
            continue;
        }
        break;
    }
    errno = ENOTDIR;
    return ob_fail(e, OB_ERR_IO, "'%s' exists and is not a folder", buf);
}
