/* harness/commands.h - the subcommands of `optbench`. Each parses its own
 * arguments, prints its own messages and returns the process exit status
 * (0 ok, 1 failure, 2 bad input); only main() exits. */
#ifndef OB_HARNESS_COMMANDS_H
#define OB_HARNESS_COMMANDS_H

int ob_cmd_run(int argc, char **argv);
int ob_cmd_list(int argc, char **argv);
int ob_cmd_report(int argc, char **argv);
int ob_cmd_compare(int argc, char **argv);
int ob_cmd_history(int argc, char **argv);
int ob_cmd_replay(int argc, char **argv);
int ob_cmd_ortho(int argc, char **argv);
int ob_cmd_merge(int argc, char **argv);
int ob_cmd_bench_step(int argc, char **argv);

/* Print "optbench: <msg>" to stderr and return the exit code of status. */
int ob_cli_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
