/* harness/cmd_replay.c - `optbench replay` (not built yet). */
#include "harness/commands.h"

int ob_cmd_replay(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return ob_cli_error(1, "'replay' is not available in this build yet");
}
