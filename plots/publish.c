/* plots/publish.c - a report folder replaced whole (see publish.h). */
#include "plots/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The list of the files a report wrote (DIR/REPORT_LIST, a workload's
 * figures after it left the matrix among them); the lock two reports into
 * one folder publish under, one after the other (publish_lock: the second
 * reads the first's list); a stage is REPORT_LIST-PID-XXXXXX. */
#define REPORT_LIST ".optbench-report"
#define REPORT_LOCK ".optbench-report.lock"
#define STAGE_HOST ".host" /* in a stage: the host that made it */

void ob_report_stage_remove(const char *stage)
{
    DIR *dp = opendir(stage);
    if (dp) {
        struct dirent *de;
        while ((de = readdir(dp)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                char p[1400];
                snprintf(p, sizeof p, "%s/%s", stage, de->d_name);
                remove(p);
            }
        closedir(dp);
    }
    rmdir(stage);
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Append a copy of name to the growing list (*list, *n, *cap). */
static ob_status push_name(char ***list, size_t *n, size_t *cap, const char *name, ob_err *e)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        char **l2 = realloc(*list, nc * sizeof **list);
        if (!l2) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        *list = l2;
        *cap = nc;
    }
    if (!((*list)[*n] = strdup(name))) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    (*n)++;
    return OB_OK;
}

/* Appends the names listed in the file at path (a report's list) to the
 * growing list; a missing file adds none. */
static ob_status read_names(const char *path, char ***list, size_t *n, size_t *cap, ob_err *e)
{
    FILE *f = fopen(path, "r");
    char line[1200];
    ob_status st = OB_OK;
    while (f && st == OB_OK && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] && !strchr(line, '/') && strcmp(line, ".") && strcmp(line, ".."))
            st = push_name(list, n, cap, line, e);
    }
    if (f) fclose(f);
    return st;
}

/* A file in dir with the name of one of this report's files that no report
 * wrote (not in dir's list, nor in the list of another report being
 * published there) is someone's own: the report would replace it, so it is
 * refused, nothing changed. A folder without a list that holds a report's
 * four fixed files is a report of an optbench from before the list
 * (2026-12-02): its files are a report's. */
static ob_status check_foreign(const char *dir, const char *stage, char **names, size_t n, ob_err *e)
{
    char **known = NULL;
    size_t nk = 0, capk = 0;
    char p[1400];
    ob_status st = OB_OK;
    /* which of this report's names are there, first: a report that
     * publishes meanwhile writes its list (in its stage) before it moves a
     * file in, and moves the list into dir after, so the list of any file
     * seen here is read below, in one place or the other */
    unsigned char *there = calloc(n + 1, 1);
    if (!there) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    size_t n_there = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        there[i] = lstat(p, &sb) == 0;
        n_there += there[i];
    }
    if (!n_there) {
        free(there);
        return OB_OK;
    }
    struct stat lb;
    snprintf(p, sizeof p, "%s/" REPORT_LIST, dir);
    if (stat(p, &lb) != 0) {
        static const char *const fixed[] = {"style.gp", "index.html", "summary.md", "runs.csv"};
        int all = 1;
        for (int k = 0; k < 4 && all; k++) {
            snprintf(p, sizeof p, "%s/%s", dir, fixed[k]);
            all = lstat(p, &lb) == 0;
        }
        if (all) {
            free(there);
            return OB_OK;
        }
    }
    DIR *dp = opendir(dir);
    const char *mine = strrchr(stage, '/');
    mine = mine ? mine + 1 : stage;
    const size_t pl = strlen(REPORT_LIST "-");
    struct dirent *de;
    while (dp && st == OB_OK && (de = readdir(dp))) {
        if (strncmp(de->d_name, REPORT_LIST "-", pl) || !strcmp(de->d_name, mine)) continue;
        snprintf(p, sizeof p, "%s/%s/" REPORT_LIST, dir, de->d_name);
        st = read_names(p, &known, &nk, &capk, e);
    }
    if (dp) closedir(dp);
    snprintf(p, sizeof p, "%s/" REPORT_LIST, dir);
    if (st == OB_OK) st = read_names(p, &known, &nk, &capk, e);
    if (st == OB_OK && nk) qsort(known, nk, sizeof *known, cmp_name);
    for (size_t i = 0; i < n && st == OB_OK; i++) {
        const char *key = names[i];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (!there[i] || (nk && bsearch(&key, known, nk, sizeof *known, cmp_name))) continue;
        st = ob_fail(e, OB_ERR_INPUT,
                     "'%s' is not a file a report wrote (%s/" REPORT_LIST " does not list it), and this report "
                     "has a file of that name: nothing was written; move that file, or give --out a folder "
                     "of the report's own",
                     p, dir);
    }
    for (size_t i = 0; i < nk; i++) free(known[i]);
    free(known);
    free(there);
    return st;
}

/* Hold dir's publishing lock, waiting while another report publishes there:
 * a flock on the folder itself, or, where its file system locks no folders
 * (NFS emulates flock with write locks), on DIR/REPORT_LOCK, kept there.
 * Returns the descriptor to close, or -1 where neither can be locked (the
 * stage lists that check_foreign reads are then all there is). */
static int take_lock(int fd)
{
    int r = 0;
    while (fd >= 0 && (r = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (fd >= 0 && r != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int publish_lock(const char *dir)
{
    int fd = take_lock(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd < 0) {
        char p[1200];
        snprintf(p, sizeof p, "%s/" REPORT_LOCK, dir);
        fd = take_lock(open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    }
    return fd;
}

/* Appends the names of the files in the stage dp, STAGE_HOST aside, to the
 * growing list (*names, *n, *cap), sorted; closes dp. */
static ob_status stage_names(DIR *dp, char ***names, size_t *n, size_t *cap, ob_err *e)
{
    ob_status st = OB_OK;
    struct dirent *de;
    while ((de = readdir(dp)) && st == OB_OK) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, STAGE_HOST)) continue;
        st = push_name(names, n, cap, de->d_name, e);
    }
    closedir(dp);
    if (st == OB_OK && *n) qsort(*names, *n, sizeof **names, cmp_name);
    return st;
}

/* Keeps of the earlier report's n_old files old those that this report,
 * names[0..n-1] (sorted), does not write again: they are to go. Returns
 * how many are kept. */
static size_t not_rewritten(char **old, size_t n_old, char *const *names, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n_old; i++) {
        const char *key = old[i];
        if (n && bsearch(&key, names, n, sizeof *names, cmp_name)) free(old[i]);
        else old[kept++] = old[i];
    }
    return kept;
}

/* Writes this report's list, names[0..n-1], in the stage (one per report:
 * two reports into one folder do not share a temporary file). */
static ob_status write_list(const char *stage, char *const *names, size_t n, ob_err *e)
{
    char from[1400];
    snprintf(from, sizeof from, "%s/%s", stage, REPORT_LIST);
    FILE *g = fopen(from, "w");
    int bad = !g;
    for (size_t i = 0; g && i < n; i++) bad |= fprintf(g, "%s\n", names[i]) < 0;
    if (g && fclose(g) != 0) bad = 1;
    if (bad) return ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", from, strerror(errno));
    return OB_OK;
}

/* Blocks the stops (SIGINT, SIGTERM, SIGHUP), the mask before in *mask.
 * Returns whether they are blocked. */
static int block_stops(sigset_t *mask)
{
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    return sigprocmask(SIG_BLOCK, &stops, mask) == 0;
}

/* Restores the mask block_stops saved: a stop that came meanwhile ends the
 * process when unblocked, so the stage, empty now, goes first. */
static void unblock_stops(const char *stage, const sigset_t *mask)
{
    sigset_t pend;
    if (sigpending(&pend) == 0 &&
        (sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1 || sigismember(&pend, SIGHUP) == 1))
        ob_report_stage_remove(stage);
    sigprocmask(SIG_SETMASK, mask, NULL);
}

/* Moves the stage's files names[0..n-1] into dir, then its list onto dir's
 * list (at list), then removes the earlier report's files old[0..n_old-1]
 * that this one does not write: nothing is removed before all are in place. */
static ob_status move_in(const char *dir, const char *stage, char *const *names, size_t n, const char *list,
                         char *const *old, size_t n_old, ob_err *e)
{
    char p[1400], from[1400];
    ob_status st = OB_OK;
    for (size_t i = 0; i < n && st == OB_OK; i++) {
        snprintf(from, sizeof from, "%s/%s", stage, names[i]);
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (rename(from, p) != 0) st = ob_fail(e, OB_ERR_IO, "cannot move '%s' to '%s': %s", from, p, strerror(errno));
    }
    if (st == OB_OK) {
        snprintf(from, sizeof from, "%s/%s", stage, REPORT_LIST);
        if (rename(from, list) != 0) st = ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", list, strerror(errno));
    }
    for (size_t i = 0; i < n_old && st == OB_OK; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, old[i]);
        remove(p);
    }
    return st;
}

/* Frees the n names of a list and the list. */
static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

ob_status ob_report_publish(const char *dir, const char *stage, ob_err *e)
{
    char **names = NULL, **old = NULL;
    size_t n = 0, cap = 0, n_old = 0, cap_old = 0;
    DIR *dp = opendir(stage);
    if (!dp) return ob_fail(e, OB_ERR_IO, "cannot read '%s': %s", stage, strerror(errno));
    const int lock = publish_lock(dir);
    ob_status st = stage_names(dp, &names, &n, &cap, e);
    if (st == OB_OK) st = check_foreign(dir, stage, names, n, e);
    /* the earlier report's list: its files that this one does not write go,
     * once this one is in place */
    char list[1200];
    snprintf(list, sizeof list, "%s/%s", dir, REPORT_LIST);
    if (st == OB_OK) st = read_names(list, &old, &n_old, &cap_old, e);
    n_old = not_rewritten(old, n_old, names, n);
    if (st == OB_OK) st = write_list(stage, names, n, e);
    /* the files, then the list; nothing is removed before all are in place.
     * A stop (SIGINT, SIGTERM, SIGHUP) waits until then: stopped half way the
     * folder would hold some of the earlier report's files beside this one's
     * (it ends the process as soon as the report is whole; a SIGKILL can
     * still cut it, and the next report into the folder makes it whole) */
    sigset_t mask;
    const int masked = st == OB_OK && block_stops(&mask);
    if (st == OB_OK) st = move_in(dir, stage, names, n, list, old, n_old, e);
    if (masked) unblock_stops(stage, &mask);
    if (lock >= 0) close(lock);
    free_names(names, n);
    free_names(old, n_old);
    return st;
}

/* Who made a stage, as STAGE_HOST holds it: the host name and the process-ID
 * namespace (containers on one host may share its name but not their PIDs),
 * one line; "" when either is unknown. */
static void stage_maker(char *buf, size_t n)
{
    char host[256] = "", ns[128] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    ssize_t k = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ns[k > 0 ? k : 0] = 0;
    if (host[0] && ns[0]) snprintf(buf, n, "%s %s", host, ns);
    else buf[0] = 0;
}

/* Staging folders of reports that were stopped before they finished
 * (".optbench-report-PID-XXXXXX" whose process is gone): removed by the next
 * report into the folder, at once where the stage names this host and PID
 * namespace as its maker (STAGE_HOST), else (a folder shared between machines
 * or containers, whose processes cannot be asked from here) once untouched
 * for ten minutes. */
static void remove_dead_stages(const char *dir)
{
    char me[512];
    stage_maker(me, sizeof me);
    DIR *dp = opendir(dir);
    if (!dp) return;
    const int lock = publish_lock(dir); /* its list is appended to */
    struct dirent *de;
    const size_t pl = strlen(REPORT_LIST "-");
    while ((de = readdir(dp))) {
        if (strncmp(de->d_name, REPORT_LIST "-", pl)) continue;
        char *end;
        long pid = strtol(de->d_name + pl, &end, 10);
        if (pid <= 0 || *end != '-' || (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (lstat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue;
        char hp[1500], maker[512] = "";
        snprintf(hp, sizeof hp, "%s/" STAGE_HOST, p);
        FILE *f = fopen(hp, "r");
        if (f) {
            if (!fgets(maker, sizeof maker, f)) maker[0] = 0;
            maker[strcspn(maker, "\n")] = 0;
            fclose(f);
        }
        if ((me[0] && !strcmp(maker, me)) || time(NULL) - sb.st_mtime > 600) {
            /* a report stopped while it moved its files in: those it moved
             * are a report's (its list is written, and its files checked,
             * before the first moves), so dir's list takes its names */
            char sl[1500], dl[1400], line[1200];
            snprintf(sl, sizeof sl, "%s/" REPORT_LIST, p);
            snprintf(dl, sizeof dl, "%s/" REPORT_LIST, dir);
            FILE *from = fopen(sl, "r"), *to = from ? fopen(dl, "a") : NULL;
            while (to && fgets(line, sizeof line, from)) fputs(line, to);
            if (to) fclose(to);
            if (from) fclose(from);
            ob_report_stage_remove(p);
        }
    }
    closedir(dp);
    if (lock >= 0) close(lock);
}

/* The stage's maker, for remove_dead_stages (not published). */
static void stage_mark(const char *stage)
{
    char me[512], hp[1300];
    stage_maker(me, sizeof me);
    snprintf(hp, sizeof hp, "%s/" STAGE_HOST, stage);
    FILE *f = me[0] ? fopen(hp, "w") : NULL;
    if (f) {
        fprintf(f, "%s\n", me);
        fclose(f);
    }
}

ob_status ob_report_stage_open(const char *dir, char *stage, size_t n, ob_err *e)
{
    remove_dead_stages(dir);
    snprintf(stage, n, "%s/" REPORT_LIST "-%ld-XXXXXX", dir, (long)getpid());
    if (!mkdtemp(stage)) {
        const int denied = errno == EACCES || errno == EPERM || errno == EROFS;
        const ob_status st = ob_fail(e, denied ? OB_ERR_INPUT : OB_ERR_IO, "cannot write into '%s': %s%s", dir,
                                     strerror(errno), denied ? " (give another --out)" : "");
        stage[0] = 0;
        return st;
    }
    stage_mark(stage);
    return OB_OK;
}
