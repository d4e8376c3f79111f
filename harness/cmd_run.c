/* harness/cmd_run.c - `optbench run` (being built). */
#include "harness/commands.h"

int ob_cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return ob_cli_error(1, "'run' is not available in this build yet");
}

int ob_cmd_list(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return ob_cli_error(1, "'list' is not available in this build yet");
}
