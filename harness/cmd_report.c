/* harness/cmd_report.c - `optbench report` (not built yet). */
#include "harness/commands.h"

int ob_cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return ob_cli_error(1, "'report' is not available in this build yet");
}
