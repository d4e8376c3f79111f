/* harness/commands.h - the subcommands of `optbench`. Each parses its own
 * arguments, prints its own messages and returns the process exit status
 * (0 ok, 1 failure, 2 bad input); only main() exits. */
#ifndef OB_HARNESS_COMMANDS_H
#define OB_HARNESS_COMMANDS_H

#include <stddef.h>

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

/* Option parsing shared by the subcommands, in run's words. The message
 * (into buf, n bytes, starting "cmd: ") says what to write instead, and the
 * functions return 2, the exit status, or 0 when all is well. */
/* arg is none of cmd's options (names, dashes included; the first n_valued
 * take a value, the others none): '--k=v' is written '--k v' (or '--k' for
 * one that takes none), a near name is suggested, else --help. */
int ob_cli_option_error(char *buf, size_t n, const char *cmd, const char *arg, const char *const *names, int n_names,
                        int n_valued);
/* Option argv[i] takes a value: 0 when argv[i + 1] is one, else 2 (the last
 * argument, or followed by another option, which is not taken as its value). */
int ob_cli_value_error(char *buf, size_t n, const char *cmd, int argc, char **argv, int i);
/* The common case: argv[i] must be one of names, and those it may be take a
 * value, which it must have. 0 when so; else prints the message (as
 * ob_cli_error) and returns 2. names may end with options that take no
 * value and are handled before (n_valued of them take one): they only serve
 * the near-miss hint. */
int ob_cli_valued_option(const char *cmd, int argc, char **argv, int i, const char *const *names, int n_names,
                         int n_valued);
/* A file the command is about to write (flag names it, e.g. "--markdown"):
 * 0 when path may be written; else 2, with the reason in buf (n bytes), when
 * it is a folder, the same file as one of the command's inputs (inputs[k],
 * described by what[k]: "the baseline database") or an SQLite database
 * (whose contents a report or table would replace). A path that does not
 * exist yet passes: opening it says what is wrong with its folder. */
int ob_cli_output_check(char *buf, size_t n, const char *flag, const char *path, const char *const *inputs,
                        const char *const *what, int n_inputs);
/* An option that takes one value (single, n of them) given more than once
 * keeps its last value (a script's defaults, then the value of this call),
 * and a note on stderr says so, naming the values: a list written as two
 * options (--workloads a --workloads b) runs one of them. Options that add
 * up when repeated (--set, --target, ...) are not in single. */
void ob_cli_once(const char *cmd, int argc, char **argv, const char *const *single, int n);
/* The number of names in an array of them. */
#define OB_CLI_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif
