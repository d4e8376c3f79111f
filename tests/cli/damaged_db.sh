#!/usr/bin/env bash
# A database with a damaged page inside a table (a bad disk, a stray write):
# SQLite may read past the damage and return part of a table without an
# error. report, compare, history, merge and run check the file's pages
# first and refuse it (exit 2, a message naming the file), never giving or
# merging numbers from part of the curves; the file is left unchanged.
. "$(dirname "$0")/common.bash"
M=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03 --steps 3000 --eval-every 500 --backend cpu)
"$OPTBENCH" "${M[@]}" --db "$tmp/a.db" 2>/dev/null || { echo "setup run failed"; exit 1; }
"$OPTBENCH" "${M[@]}" --db "$tmp/b.db" 2>/dev/null || { echo "setup run failed"; exit 1; }
# damage 300 bytes in the middle of the file: a page of the curves table
python3 - "$tmp/b.db" <<'PY'
import os, sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); o = len(b) // 2
for i in range(o, o + 300): b[i] ^= 0x5a
open(p, 'wb').write(b)
PY
sum=$(md5sum <"$tmp/b.db")
try() { # description, command...
  local what="$1"; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  echo "$what: exit $rc: $(head -c 200 "$tmp/err")"
  [ $rc = 2 ] && grep -q "'$tmp/b.db' is damaged" "$tmp/err" || fail "$what: exit $rc, $(cat "$tmp/err")"
}
try merge "$OPTBENCH" merge --out "$tmp/all.db" "$tmp/a.db" "$tmp/b.db"
[ ! -e "$tmp/all.db" ] || fail "merge wrote its output from a damaged input"
try report "$OPTBENCH" report --db "$tmp/b.db" --out "$tmp/rep" --no-render
try compare "$OPTBENCH" compare --baseline "$tmp/a.db" --candidate "$tmp/b.db" --time-tol off
try history "$OPTBENCH" history --db "$tmp/b.db"
try "run --resume" "$OPTBENCH" "${M[@]}" --db "$tmp/b.db" --resume
[ "$sum" = "$(md5sum <"$tmp/b.db")" ] || fail "the damaged database was changed"
# the intact ones still read and merge
cp "$tmp/a.db" "$tmp/c.db"
"$OPTBENCH" merge --out "$tmp/ok.db" "$tmp/a.db" "$tmp/c.db" >/dev/null 2>"$tmp/err" || fail "merge of intact inputs: $(cat "$tmp/err")"
echo "$fails failed"
[ $fails -eq 0 ]
