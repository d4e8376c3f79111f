/* harness/cli_util.c - small helpers shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>

#include "harness/commands.h"

int ob_cli_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("optbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}
