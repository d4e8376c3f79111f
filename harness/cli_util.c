/* harness/cli_util.c - small helpers shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/hparams.h"
#include "harness/commands.h"

int ob_cli_error(int status, const char *fmt, ...)
{
    /* one line of text: a newline, a control character or a byte that is
     * not UTF-8 that a value brought in is shown as \xNN (ob_printable) */
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    char small[2048], *text = small;
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL) vsnprintf(text, (size_t)n + 1, fmt, again);
    if (!text) text = small; /* cut, when out of memory */
    va_end(again);
    va_end(ap);
    size_t len = strlen(text), cap = 4 * len + 8;
    char *shown = malloc(cap);
    fprintf(stderr, "optbench: %s\n", shown ? ob_printable(text, shown, cap) : text);
    free(shown);
    if (text != small) free(text);
    return status;
}

int ob_cli_option_error(char *buf, size_t n, const char *cmd, const char *arg, const char *const *names, int n_names,
                        int n_valued)
{
    if (strncmp(arg, "--", 2) != 0) {
        snprintf(buf, n, "%s: unexpected argument '%s' (see optbench %s --help)", cmd, arg, cmd);
        return 2;
    }
    const char *eq = strchr(arg, '=');
    if (eq && eq - arg < 64) {
        char head[64];
        memcpy(head, arg, (size_t)(eq - arg));
        head[eq - arg] = '\0';
        for (int k = 0; k < n_names; k++)
            if (!strcmp(head, names[k])) {
                if (k < n_valued) snprintf(buf, n, "%s: unknown option '%s' (write '%s %s')", cmd, arg, head, eq + 1);
                else snprintf(buf, n, "%s: %s takes no value (write '%s' alone)", cmd, head, head);
                return 2;
            }
    }
    const char *near = ob_closest_name(arg, names, n_names);
    if (near) snprintf(buf, n, "%s: unknown option '%s' (did you mean '%s'?)", cmd, arg, near);
    else snprintf(buf, n, "%s: unknown option '%s' (see optbench %s --help)", cmd, arg, cmd);
    return 2;
}

int ob_cli_value_error(char *buf, size_t n, const char *cmd, int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        snprintf(buf, n, "%s: %s needs a value (see optbench %s --help)", cmd, argv[i], cmd);
        return 2;
    }
    const char *v = argv[i + 1];
    if (v[0] == '-' && v[1] == '-' && v[2] != '\0') {
        snprintf(buf, n,
                 "%s: %s needs a value; the next argument '%s' is an option (a file of that name: write './%s')",
                 cmd, argv[i], v, v);
        return 2;
    }
    return 0;
}

int ob_cli_valued_option(const char *cmd, int argc, char **argv, int i, const char *const *names, int n_names,
                         int n_valued)
{
    char msg[512];
    int known = 0;
    for (int k = 0; k < n_valued && !known; k++) known = !strcmp(argv[i], names[k]);
    if (!known) ob_cli_option_error(msg, sizeof msg, cmd, argv[i], names, n_names, n_valued);
    else if (!ob_cli_value_error(msg, sizeof msg, cmd, argc, argv, i)) return 0;
    return ob_cli_error(2, "%s", msg);
}

int ob_cli_output_check(char *buf, size_t n, const char *flag, const char *path, const char *const *inputs,
                        const char *const *what, int n_inputs)
{
    struct stat sp, si;
    if (!*path) { /* an unset shell variable, say */
        snprintf(buf, n, "%s is empty: give the path of a file", flag);
        return 2;
    }
    if (stat(path, &sp) != 0) return 0;
    if (S_ISDIR(sp.st_mode)) {
        snprintf(buf, n, "%s '%s' is a folder: give the path of a file (one in that folder, say)", flag, path);
        return 2;
    }
    for (int k = 0; k < n_inputs; k++)
        if (inputs[k] && stat(inputs[k], &si) == 0 && si.st_dev == sp.st_dev && si.st_ino == sp.st_ino) {
            if (!strcmp(path, inputs[k]))
                snprintf(buf, n, "%s '%s' is %s: give the output a file of its own ('%s' was left as it was)", flag,
                         path, what[k], path);
            else
                snprintf(buf, n, "%s '%s' is %s ('%s'): give the output a file of its own ('%s' was left as it was)",
                         flag, path, what[k], inputs[k], path);
            return 2;
        }
    if (S_ISREG(sp.st_mode)) {
        /* the first 16 bytes of every SQLite 3 database */
        static const char magic[16] = "SQLite format 3";
        char head[16];
        FILE *f = fopen(path, "rb");
        size_t got = f ? fread(head, 1, sizeof head, f) : 0;
        if (f) fclose(f);
        if (got == sizeof head && !memcmp(head, magic, sizeof head)) {
            snprintf(buf, n, "%s '%s' is an SQLite database: give the output a file of its own ('%s' was left as "
                             "it was)", flag, path, path);
            return 2;
        }
    }
    return 0;
}

void ob_cli_once(const char *cmd, int argc, char **argv, const char *const *single, int n)
{
    for (int k = 0; k < n; k++) {
        int first = -1, last = -1, times = 0;
        for (int i = 1; i < argc; i++)
            if (!strcmp(argv[i], single[k])) {
                if (first < 0) first = i;
                last = i;
                times++;
                i++; /* its value */
            }
        if (times < 2) continue;
        char a[96], b[96];
        const char *va = first + 1 < argc ? argv[first + 1] : "", *vb = last + 1 < argc ? argv[last + 1] : "";
        int list = strchr(va, ',') || strchr(vb, ',') || !strcmp(single[k], "--workloads") ||
                   !strcmp(single[k], "--optimizers") || !strcmp(single[k], "--lrs") ||
                   !strcmp(single[k], "--seeds") || !strcmp(single[k], "--shapes") ||
                   !strcmp(single[k], "--coeffs") || !strcmp(single[k], "--devices");
        char n_times[32];
        if (times == 2) snprintf(n_times, sizeof n_times, "twice");
        else snprintf(n_times, sizeof n_times, "%d times", times);
        fprintf(stderr, "optbench: note: %s%s%s is given %s ('%s'%s'%s'): the last is used%s%s%s\n",
                cmd ? cmd : "", cmd ? ": " : "", single[k], n_times, ob_printable(va, a, sizeof a),
                times == 2 ? " and " : ", ..., ", ob_printable(vb, b, sizeof b),
                list ? " (a list is one comma-separated value: " : "", list ? single[k] : "", list ? " A,B)" : "");
    }
}
