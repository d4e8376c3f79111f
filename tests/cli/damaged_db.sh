#!/usr/bin/env bash
# A database with a damaged page inside a table (a bad disk, a stray write):
# SQLite may read past the damage and return part of a table without an
# error. report, compare, history, merge and run check the file's pages
# first and refuse it (exit 2, a message naming the file), never giving or
# merging numbers from part of the curves; the file is left unchanged.
# OB_DB_CHECK=off skips that check.
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
# OB_DB_CHECK=on is the default; off skips the page check (the user vouches
# for the file), so the damage is not called out; anything else is bad input
OB_DB_CHECK=on try "report, OB_DB_CHECK=on" "$OPTBENCH" report --db "$tmp/b.db" --out "$tmp/rep" --no-render
OB_DB_CHECK=off "$OPTBENCH" history --db "$tmp/b.db" >"$tmp/out" 2>"$tmp/err"
echo "history, OB_DB_CHECK=off: exit $?: $(head -c 200 "$tmp/err")"
! grep -q "is damaged" "$tmp/err" || fail "OB_DB_CHECK=off still checked the pages: $(cat "$tmp/err")"
OB_DB_CHECK=off "$OPTBENCH" history --db "$tmp/a.db" >"$tmp/out" 2>"$tmp/err" || fail "OB_DB_CHECK=off, intact: $(cat "$tmp/err")"
OB_DB_CHECK=yes "$OPTBENCH" history --db "$tmp/a.db" >"$tmp/out" 2>"$tmp/err"; rc=$?
echo "OB_DB_CHECK=yes: exit $rc: $(cat "$tmp/err")"
[ $rc = 2 ] && grep -q "OB_DB_CHECK='yes' is neither on nor off" "$tmp/err" || fail "OB_DB_CHECK=yes: exit $rc"
[ "$sum" = "$(md5sum <"$tmp/b.db")" ] || fail "the damaged database was changed"
# a copy cut short inside its last page: SQLite reads the rest as zeros, and
# its read-only check passed such a file (a run came back empty); refused
# by every command, the file unchanged
head -c $(( $(stat -c %s "$tmp/a.db") - 100 )) "$tmp/a.db" >"$tmp/b.db"
sum=$(md5sum <"$tmp/b.db")
try "report of a cut copy" "$OPTBENCH" report --db "$tmp/b.db" --out "$tmp/rep" --no-render
grep -q "are not a whole number of its 4096-byte pages, so it was cut short" "$tmp/err" || fail "cut copy: $(cat "$tmp/err")"
try "compare of a cut copy" "$OPTBENCH" compare --baseline "$tmp/b.db" --candidate "$tmp/a.db" --time-tol off
try "merge of a cut copy" "$OPTBENCH" merge --out "$tmp/cut.db" "$tmp/a.db" "$tmp/b.db"
try "run --resume into a cut copy" "$OPTBENCH" "${M[@]}" --db "$tmp/b.db" --resume
[ "$sum" = "$(md5sum <"$tmp/b.db")" ] || fail "the cut copy was changed"
# an index out of step with its table (a bit of a row id in the index's page
# flipped): the structure is sound, so SQLite's quick_check passes it and a
# run wrote into it; integrity_check compares the index with its table
cp "$tmp/a.db" "$tmp/b.db"
python3 - "$tmp/b.db" <<'PY'
import sqlite3, sys
p = sys.argv[1]
c = sqlite3.connect(p)
c.execute("pragma wal_checkpoint(truncate)")
root = c.execute("select rootpage from sqlite_master where name = 'runs_by_cell'").fetchone()[0]
ps = c.execute("pragma page_size").fetchone()[0]
c.close()
b = bytearray(open(p, 'rb').read()); b[root * ps - 1] ^= 1  # the page's last cell ends with its row id
open(p, 'wb').write(b)
PY
[ "$(sqlite3 "$tmp/b.db" "pragma quick_check(1)")" = ok ] || echo "note: quick_check sees this damage too"
sum=$(md5sum <"$tmp/b.db")
try "run --resume into a database with an index out of step" "$OPTBENCH" "${M[@]}" --db "$tmp/b.db" --resume
grep -q "missing from index runs_by_cell" "$tmp/err" || fail "index out of step: $(cat "$tmp/err")"
try "report of a database with an index out of step" "$OPTBENCH" report --db "$tmp/b.db" --out "$tmp/rep" --no-render
[ "$sum" = "$(md5sum <"$tmp/b.db")" ] || fail "the database with an index out of step was changed"
# the intact ones still read and merge
cp "$tmp/a.db" "$tmp/c.db"
"$OPTBENCH" merge --out "$tmp/ok.db" "$tmp/a.db" "$tmp/c.db" >/dev/null 2>"$tmp/err" || fail "merge of intact inputs: $(cat "$tmp/err")"
# optbench's ids and version, but a table or column gone (dropped by hand), or
# a version that does not match the tables: refused before anything is
# written (no benchmark, no run, no checkpoint folder), exit 2
schema_gone() { # description, what the message names, SQL
  local what="$1" want="$2"; cp "$tmp/a.db" "$tmp/s.db"; rm -rf "$tmp/s.db.ckpt"
  python3 -c 'import sqlite3, sys
d = sqlite3.connect(sys.argv[1]); d.executescript(sys.argv[2]); d.commit(); d.close()' "$tmp/s.db" "$3"
  local before; before=$(md5sum <"$tmp/s.db")
  "$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.1 --steps 5 --backend cpu --db "$tmp/s.db" \
    >"$tmp/out" 2>"$tmp/err"; local rc=$?
  echo "$what: exit $rc: $(head -c 300 "$tmp/err")"
  [ $rc = 2 ] && grep -qF "$want" "$tmp/err" || fail "$what: exit $rc, $(cat "$tmp/err")"
  [ "$before" = "$(md5sum <"$tmp/s.db")" ] || fail "$what: the database was changed"
  [ ! -e "$tmp/s.db.ckpt" ] || fail "$what: a checkpoint folder was made"
}
schema_gone "run into a database without its events table" "lacks part of optbench's schema (no table 'events')" \
  "DROP TABLE events"
schema_gone "run into a database without runs.stage" "(no column 'stage' in table 'runs')" \
  "ALTER TABLE runs DROP COLUMN stage"
schema_gone "run into a database whose version was set back" "says it is of schema version 1, but its tables do not match" \
  "PRAGMA user_version = 1"

# a database without tables (a run killed as it created it): read, it holds
# no results yet; --resume --dry-run says a new benchmark would start; and
# --resume fills it
python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode = WAL')" "$tmp/e.db"
"$OPTBENCH" report --db "$tmp/e.db" --out "$tmp/erep" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "database '$tmp/e.db' holds no results yet: it is empty (an optbench run stopped as it created it" "$tmp/err" ||
  fail "report of a database without tables: exit $rc, $(cat "$tmp/err")"
e=(run --workloads quadratic --optimizers sgd --lrs 0.1 --steps 5 --backend cpu --db "$tmp/e.db" --resume)
"$OPTBENCH" "${e[@]}" --dry-run >"$tmp/out" 2>"$tmp/err" || fail "--resume --dry-run of it: $(cat "$tmp/err")"
grep -q "^--resume: database '$tmp/e.db' holds no results yet (a run stopped as it created it); it would start a new benchmark$" \
  "$tmp/out" || fail "--resume --dry-run of it: $(tail -1 "$tmp/out")"
"$OPTBENCH" "${e[@]}" >/dev/null 2>"$tmp/err" || fail "--resume into it: $(cat "$tmp/err")"
echo "$fails failed"
[ $fails -eq 0 ]
