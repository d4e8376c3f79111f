/* harness/cmd_ortho.c - `optbench ortho` (not built yet). */
#include "harness/commands.h"

int ob_cmd_ortho(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return ob_cli_error(1, "'ortho' is not available in this build yet");
}
