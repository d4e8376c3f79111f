#!/usr/bin/env bash
# A standard output that cannot take what a command prints (a full disk:
# /dev/full; a closed descriptor) is a failure with a message, never exit 0
# with the ranking, comparison or table lost (compare: 2, no verdict).
. "$(dirname "$0")/common.bash"
[ -w /dev/full ] || { echo "skipped: no /dev/full"; exit 77; }
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adam --steps 50 --backend cpu --db "$tmp/a.db" 2>/dev/null ||
  { echo "setup run failed"; exit 1; }
try() { # description, command... (stdout to /dev/full); compare's status is 2, no verdict (1 is a regression)
  local what="$1" want=1; shift
  [ "$what" = compare ] && want=2
  "$@" >/dev/full 2>"$tmp/err"; local rc=$?
  echo "$what: exit $rc: $(grep "standard output" "$tmp/err")"
  [ $rc = $want ] && grep -q "could not write its output to standard output" "$tmp/err" || fail "$what: exit $rc, $(cat "$tmp/err")"
}
try list "$OPTBENCH" list
try report "$OPTBENCH" report --db "$tmp/a.db" --out "$tmp/rep" --no-render
try history "$OPTBENCH" history --db "$tmp/a.db"
copy_as_rerun "$tmp/a.db" "$tmp/a2.db"
try compare "$OPTBENCH" compare --baseline "$tmp/a.db" --candidate "$tmp/a2.db" --time-tol off
"$OPTBENCH" list >&- 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && grep -q "standard output" "$tmp/err" || fail "list with stdout closed: exit $rc, $(cat "$tmp/err")"
# bad input keeps its own status
"$OPTBENCH" history --db "$tmp/none.db" >/dev/full 2>/dev/null; rc=$?
[ $rc = 2 ] || fail "bad input with a full stdout: exit $rc, expected 2"
# an ordinary stdout is not affected
"$OPTBENCH" list >/dev/null || fail "list to /dev/null failed"
echo "$fails failed"
[ $fails -eq 0 ]
