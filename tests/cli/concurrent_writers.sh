#!/usr/bin/env bash
# Two processes writing one database at once lose nothing: two shards
# started together on a database that does not exist yet (both create it),
# two whole matrices at once, and a second process joining a running one
# with --resume (they share the cells through per-run locks: each cell runs
# once). Also --devices 0,1 on the CPU: two cells at a time in one process.
set -uo pipefail
: "${OPTBENCH:?}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
q() { python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1], isolation_level=None).execute(sys.argv[2]).fetchall(); print('\n'.join('|'.join(str(x) for x in row) for row in r))" "$@"; }
M=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03 --seeds 2 --steps 2000 --eval-every 250 --backend cpu)
"$OPTBENCH" "${M[@]}" --db "$tmp/ref.db" 2>/dev/null || { echo "reference run failed"; exit 1; }

# 1. two shards at once into one new database, three times
for i in 1 2 3; do
  db="$tmp/shards$i.db"
  "$OPTBENCH" "${M[@]}" --shard 0/2 --db "$db" 2>"$tmp/a.err" & a=$!
  "$OPTBENCH" "${M[@]}" --shard 1/2 --db "$db" 2>"$tmp/b.err" & b=$!
  wait $a || fail "shard 0/2 failed: $(cat "$tmp/a.err")"
  wait $b || fail "shard 1/2 failed: $(cat "$tmp/b.err")"
  echo "round $i: $(q "$db" "select count(*) from benchmarks") benchmarks, $(q "$db" "select count(*) from runs") runs, $(q "$db" "select count(*) from curves") curve points"
  python3 "$here/resume_compare.py" "$tmp/ref.db" "$db" >"$tmp/cmp" || { fail "round $i: results differ"; cat "$tmp/cmp"; }
done

# 2. two whole matrices at once: two complete benchmarks
db="$tmp/twice.db"
"$OPTBENCH" "${M[@]}" --db "$db" 2>"$tmp/a.err" & a=$!
"$OPTBENCH" "${M[@]}" --db "$db" 2>"$tmp/b.err" & b=$!
wait $a || fail "first matrix failed: $(cat "$tmp/a.err")"
wait $b || fail "second matrix failed: $(cat "$tmp/b.err")"
r=$(q "$db" "select count(*), sum(steps_done) from runs where status in ('done','diverged')")
c=$(q "$db" "select count(*) from curves")
want=$(q "$tmp/ref.db" "select 2*count(*) from curves")
echo "two matrices: $r finished runs, $c curve points (want $want)"
[ "$c" = "$want" ] || fail "curve points lost or duplicated"
[ "${r%%|*}" = 32 ] || fail "expected 32 finished runs, got $r"

# 3. a second process joins with --resume: each cell runs once, in one process or the other
db="$tmp/join.db"
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" 2>"$tmp/a.err" & a=$!
for _ in $(seq 400); do compgen -G "$db.ckpt/run-1/ckpt-*.obck" >/dev/null && break; sleep 0.05; done
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" --resume 2>"$tmp/b.err" & b=$!
wait $a || fail "first process failed: $(cat "$tmp/a.err")"
wait $b || fail "joining process failed: $(cat "$tmp/b.err")"
na=$(grep -c '^\[' "$tmp/a.err"); nb=$(grep -c '^\[' "$tmp/b.err")
echo "joined: first process ran $na cells, the second $nb; $(grep -h "left to another\|finished before" "$tmp/a.err" "$tmp/b.err" | tr '\n' ' ')"
[ $((na + nb)) = 16 ] || fail "cells were run $((na + nb)) times in all, expected 16"
[ "$(q "$db" "select count(*) from benchmarks")" = 1 ] || fail "the joining process started its own benchmark"
[ "$(q "$db" "select finished_at is not null from benchmarks")" = 1 ] || fail "the shared benchmark is not marked finished"
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$tmp/ref6k.db" 2>/dev/null || fail "reference run failed"
python3 "$here/resume_compare.py" "$tmp/ref6k.db" "$db" >"$tmp/cmp" || { fail "joined results differ"; cat "$tmp/cmp"; }

# 4. --devices on the CPU: two workers in one process, results as the sequential run
"$OPTBENCH" "${M[@]}" --devices 0,1 --db "$tmp/dev.db" 2>"$tmp/err" || fail "--devices 0,1: $(cat "$tmp/err")"
grep -q "devices 0,1" "$tmp/err" && grep -q "share the CPU cores" "$tmp/err" || fail "--devices: unexpected messages: $(cat "$tmp/err")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/dev.db" || fail "--devices: results differ"
echo "$fails failed"
[ $fails -eq 0 ]
