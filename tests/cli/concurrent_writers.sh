#!/usr/bin/env bash
# Two processes writing one database at once lose nothing: two shards
# started together on a database that does not exist yet (both create it),
# two whole matrices at once, a second process joining a running one with
# --resume (they share the cells through per-run locks: each cell runs once),
# four --resume processes started together, and a process whose partner is
# killed finishing the partner's cells. Also --devices 0,1 on the CPU: two
# cells at a time in one process.
. "$(dirname "$0")/common.bash"
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
for _ in $(seq 2000); do compgen -G "$db.ckpt/run-1/ckpt-*.obck" >/dev/null && break; sleep 0.05; done
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

# 4. processes started together with --resume on a database that lacks the
#    matrix's benchmark: they agree on one (finding or creating it is one
#    write transaction), and each cell runs once
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.01 --seeds 1 --steps 10 --db "$tmp/base.db" 2>/dev/null
S=(run --workloads quadratic --optimizers sgd,adam --lrs 0.01,0.1 --seeds 2 --steps 300 --backend cpu --resume)
for i in 1 2 3; do
  db="$tmp/together$i.db"
  cp "$tmp/base.db" "$db"
  pids=()
  for k in 1 2 3 4; do "$OPTBENCH" "${S[@]}" --db "$db" 2>"$tmp/t$k.err" & pids+=($!); done
  for k in 1 2 3 4; do wait "${pids[$((k-1))]}" || fail "together $i: process $k failed: $(cat "$tmp/t$k.err")"; done
  nbench=$(q "$db" "select count(*) from benchmarks")
  ran=$(cat "$tmp"/t[1-4].err | grep -c '^\[')
  echo "together $i: $nbench benchmarks (want 2), cells run $ran times (want 8)"
  [ "$nbench" = 2 ] || fail "together $i: processes started $((nbench-1)) benchmarks, not one"
  [ "$ran" = 8 ] || fail "together $i: cells were run $ran times, expected 8"
done

# 5. a process whose partner is killed continues the partner's cells: it
#    waits for the cells it found locked, and nothing is left 'running'
#    (the partner here keeps its checkpoints elsewhere: the lock lives beside
#    the database, so they still exclude each other)
db="$tmp/survive.db"
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" 2>"$tmp/a.err" & a=$!
for _ in $(seq 2000); do compgen -G "$db.ckpt/run-1/ckpt-*.obck" >/dev/null && break; sleep 0.05; done
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" --resume --checkpoint-dir "$tmp/other-ckpt" \
  2>"$tmp/b.err" & b=$!
for _ in $(seq 2000); do grep -q "is being run by pid $a " "$tmp/b.err" && break; sleep 0.05; done
kill -KILL $a; wait $a 2>/dev/null
wait $b || fail "survivor failed: $(cat "$tmp/b.err")"
left=$(q "$db" "select count(*) from runs where status not in ('done','diverged')")
echo "survivor: $(grep -h "waiting for\|benchmark 1 in" "$tmp/b.err" | tr '\n' ' '); $left cells unfinished"
grep -q "waiting for" "$tmp/b.err" || fail "the survivor did not wait for the cells it found locked"
[ "$left" = 0 ] || fail "$left cells left unfinished after the partner was killed"
[ "$(q "$db" "select finished_at is not null from benchmarks")" = 1 ] || fail "the benchmark is not marked finished"
python3 "$here/resume_compare.py" "$tmp/ref6k.db" "$db" >"$tmp/cmp" || { fail "survivor's results differ"; cat "$tmp/cmp"; }
[ ! -e "$db.ckpt" ] && [ -z "$(ls -A "$tmp/other-ckpt" 2>/dev/null)" ] || fail "checkpoints or locks left behind: $(ls -R "$db.ckpt" "$tmp/other-ckpt" 2>&1 | head)"

# 5b. a killed process's checkpoints are used by the one that takes its cell
#    over, also when the two keep them in different folders (the lock file
#    names the owner's)
db="$tmp/takeover.db"
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" --checkpoint-dir "$tmp/ck-a" 2>"$tmp/a.err" & a=$!
# killed in its first run, or the first it is seen training (runs last 60 to
# 100 ms: a busy machine can let one end unseen)
wait_for "$tmp/ck-a/*/run-*" || fail "takeover: no checkpoint of the first process within 20 s"
ck_a=$(printf '%s\n' "$tmp"/ck-a/* | head -n1)
k=$(signal_in_run $a "$db" "$ck_a" "$(seq -s ' ' 1 16)" KILL) || fail "takeover: the first process ended unkilled"
wait $a 2>/dev/null
# the process that takes over is itself stopped once it has a checkpoint of
# its own: the killed one's folder goes then (the lock file names the new one)
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" --resume 2>"$tmp/b1.err" & b=$!
# (where run k went by unseen, the process finishes the matrix: exit 0)
stopped=0
signal_in_run $b "$db" "$db.ckpt" "$k" TERM >/dev/null && stopped=1
wait $b; rc=$?
[ $rc = 143 ] || { [ $stopped = 0 ] && [ $rc = 0 ]; } ||
  fail "takeover: the stopped process exited $rc: $(tail -n2 "$tmp/b1.err")"
! grep -q "run $k: no usable checkpoint" "$tmp/b1.err" || fail "the killed process's checkpoints were not found: $(cat "$tmp/b1.err")"
[ -z "$(ls -A "$ck_a/run-$k" 2>/dev/null)" ] ||
  fail "the killed process's checkpoints stayed after the takeover wrote its own: $(ls -R "$tmp/ck-a")"
"$OPTBENCH" "${M[@]}" --steps 6000 --checkpoint-every 200 --db "$db" --resume 2>"$tmp/b.err" || fail "takeover: $(cat "$tmp/b.err")"
echo "takeover: $(grep -h "benchmark 1 in" "$tmp/b.err" | tr '\n' ' ')"
cat "$tmp/b1.err" "$tmp/b.err" | grep -q "1 continued from a checkpoint" || fail "the cell was not continued from a checkpoint"
python3 "$here/resume_compare.py" "$tmp/ref6k.db" "$db" >"$tmp/cmp" || { fail "takeover results differ"; cat "$tmp/cmp"; }
[ -z "$(ls -A "$tmp/ck-a" 2>/dev/null)" ] || fail "the killed process's checkpoints were left: $(ls -R "$tmp/ck-a" | head)"

# 5c. many short cells, four processes: one finishes and removes a cell's
#    lock folder while another opens it; no process may fail for that
S2=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03 --seeds 25 --steps 30
    --checkpoint-every 10 --backend cpu --resume)
for i in 1 2 3; do
  db="$tmp/short$i.db"
  pids=()
  for k in 1 2 3 4; do "$OPTBENCH" "${S2[@]}" --db "$db" 2>"$tmp/s$k.err" & pids+=($!); done
  for k in 1 2 3 4; do wait "${pids[$((k-1))]}" || fail "short cells $i: process $k failed: $(tail -n2 "$tmp/s$k.err")"; done
  echo "short cells $i: $(q "$db" "select count(*), sum(status in ('done','diverged')) from runs") runs (all finished)"
  [ "$(q "$db" "select count(*) from runs where status not in ('done','diverged')")" = 0 ] || fail "short cells $i: unfinished runs"
  [ ! -e "$db.ckpt" ] || fail "short cells $i: $db.ckpt left behind"
done

# 5d. a cell another process failed since this one planned it is not run
#    again here (it would fail the same way; --resume runs it again)
# (cells of two to three seconds: the second process must plan before the
# first has failed its first cell, or it would rightly run that cell again,
# as --resume runs failed cells; 10,000 steps left too little time on a busy
# machine, and 60,000 (1.3 s) left it short now and then)
bad=(run --workloads quadratic --optimizers sgd,adam --lrs 0.003,0.03 --seeds 2 --steps 120000 --backend cpu
     --dump-params "$tmp/dump")
# each cell's dump file is a folder: the cells fail at their end (a dump
# folder that cannot be made is refused before any run)
for k in $(seq 0 7); do mkdir -p "$tmp/dump/cell-$k.f32"; done
"$OPTBENCH" "${bad[@]}" --db "$tmp/failed.db" 2>"$tmp/a.err" & a=$!
for _ in $(seq 2000); do [ -d "$tmp/failed.db.ckpt/run-1" ] && break; sleep 0.02; done   # its benchmark exists
"$OPTBENCH" "${bad[@]}" --db "$tmp/failed.db" --resume 2>"$tmp/b.err" & b=$!
wait $a; wait $b
runs=$(cat "$tmp/a.err" "$tmp/b.err" | grep -c '^\[')
echo "failing cells, two processes: cells run $runs times (want 8)"
[ "$runs" = 8 ] || fail "failed cells were run again by the other process ($runs runs of 8 cells)"

# 5e. a process that waits tries each cell held elsewhere in turn: the cell
#    of a killed process is continued while another holder is stalled. The
#    stalled holder is a process that holds run 1's lock and does nothing (a
#    SIGSTOPped optbench may be stopped inside a write transaction, which
#    blocks every writer)
db="$tmp/stall.db"
L=(run --workloads quadratic --optimizers sgd,adam,adamw --lrs 0.003 --steps 40000 --checkpoint-every 1000 --backend cpu)
mkdir -p "$db.ckpt/run-1"
printf 'pid 4242 host stalled-host\ncheckpoints %s/nowhere/run-1\n' "$tmp" >"$db.ckpt/run-1/lock"
python3 -c "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], 'w').close(); time.sleep(600)" \
  "$db.ckpt/run-1/lock" "$tmp/held" & holder=$!
for _ in $(seq 2000); do [ -e "$tmp/held" ] && break; sleep 0.05; done
"$OPTBENCH" "${L[@]}" --db "$db" 2>"$tmp/c.err" & c=$!
for _ in $(seq 2000); do compgen -G "$db.ckpt/run-2/ckpt-*.obck" >/dev/null && break; sleep 0.05; done
"$OPTBENCH" "${L[@]}" --db "$db" --resume 2>"$tmp/b.err" & b=$!
for _ in $(seq 2000); do grep -q "is being run by pid $c " "$tmp/b.err" && break; sleep 0.05; done
kill -KILL $c; wait $c 2>/dev/null
# b holds everything but run 1 (held by the stalled holder): it must not wait
# on run 1 before continuing c's cell
others=1
for _ in $(seq 3000); do
  others=$(q "$db" "select count(*) from runs where id <> 1 and status not in ('done','diverged')")
  [ "$others" = 0 ] && break; sleep 0.1
done
echo "stalled holder: $others other cells unfinished while run 1 is held; $(grep -c "waiting for" "$tmp/b.err") waiting notes"
[ "$others" = 0 ] || fail "the waiting process blocked on the stalled cell; $others other cells left"
grep -q "cell 0 (run 1): pid 4242 host stalled-host, at step 0 of 40000" "$tmp/b.err" ||
  fail "the waiting note does not name the holder of run 1: $(cat "$tmp/b.err")"
kill $holder; wait $holder 2>/dev/null
wait $b || fail "the waiting process failed: $(tail -n2 "$tmp/b.err")"
[ "$(q "$db" "select count(*) from runs where status not in ('done','diverged')")" = 0 ] || fail "stalled holder: cells left unfinished"
[ ! -e "$db.ckpt" ] || fail "stalled holder: $db.ckpt left behind: $(ls -R "$db.ckpt" | head)"

# 5f. a run taken over into another checkpoint folder keeps its lock: the
#    folder beside the database holds the lock and the first process's
#    checkpoints, and the takeover removes only the checkpoints; the lock
#    file names the new folder, where a later process without
#    --checkpoint-dir continues from
db="$tmp/moved.db"
L=(run --workloads quadratic --optimizers sgd --lrs 0.01 --steps 30000000 --checkpoint-every 5000 --backend cpu
   --db "$db")
"$OPTBENCH" "${L[@]}" 2>"$tmp/a.err" & a=$!
wait_for "$db.ckpt/run-1/ckpt-*.obck" || fail "moved: no checkpoint of the first process within 20 s"
kill -TERM $a; wait $a
"$OPTBENCH" "${L[@]}" --resume --checkpoint-dir "$tmp/moved" 2>"$tmp/b.err" & b=$!
wait_for "$tmp/moved/*/run-1/ckpt-*.obck" || fail "moved: no checkpoint in the new folder within 20 s"
for _ in $(seq 2000); do compgen -G "$db.ckpt/run-1/ckpt-*.obck" >/dev/null || break; sleep 0.01; done
! compgen -G "$db.ckpt/run-1/ckpt-*.obck" >/dev/null || fail "moved: the first folder's checkpoints stayed"
[ -e "$db.ckpt/run-1/lock" ] || fail "moved: the lock file went with the first folder's checkpoints"
"$OPTBENCH" "${L[@]}" --resume --checkpoint-dir "$tmp/moved" 2>"$tmp/c.err" & c=$!
for _ in $(seq 2000); do grep -q "is being run by pid $b " "$tmp/c.err" && break; sleep 0.01; done
grep -q "is being run by pid $b " "$tmp/c.err" || fail "moved: a third process did not find the cell locked: $(cat "$tmp/c.err")"
kill -TERM $c $b; wait $c; wait $b
grep -q "^checkpoints $tmp/moved/" "$db.ckpt/run-1/lock" || fail "moved: the lock file does not name the new folder: $(cat "$db.ckpt/run-1/lock")"
"$OPTBENCH" "${L[@]}" --resume 2>"$tmp/d.err" & d=$!
wait_for "$db.ckpt/run-1/ckpt-*.obck" || fail "moved: no checkpoint of the last process within 20 s"
kill -TERM $d; wait $d
! grep -q "no usable checkpoint" "$tmp/d.err" || fail "moved: the checkpoints in the new folder were not found: $(cat "$tmp/d.err")"
echo "moved: $(grep -h "interrupted:" "$tmp/d.err")"

# 6. --devices on the CPU: two workers in one process, results as the sequential run
"$OPTBENCH" "${M[@]}" --devices 0,1 --db "$tmp/dev.db" 2>"$tmp/err" || fail "--devices 0,1: $(cat "$tmp/err")"
grep -q "devices 0,1" "$tmp/err" && grep -q "share the CPU cores" "$tmp/err" || fail "--devices: unexpected messages: $(cat "$tmp/err")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/dev.db" || fail "--devices: results differ"
# a benchmark continued on another device (here: the same cells with
# --devices, another thread count per cell) says so, and keeps its device
"$OPTBENCH" "${M[@]}" --db "$tmp/ref.db" --resume 2>"$tmp/err" || fail "--resume of ref: $(cat "$tmp/err")"
grep -q "note: --resume" "$tmp/err" && fail "--resume on the same device: a device note: $(cat "$tmp/err")"
"$OPTBENCH" "${M[@]}" --devices 0,1 --db "$tmp/ref.db" --resume 2>"$tmp/err" || fail "--resume --devices: $(cat "$tmp/err")"
grep -q "note: --resume: benchmark 1 was started on 'cpu: " "$tmp/err" || fail "--resume on another device: no note: $(cat "$tmp/err")"
# each cell's share of the threads is its device: the bits of bert and cnn follow it
dv=$(q "$tmp/dev.db" "select device from runs limit 1")
case "$dv" in "cpu: "*" thread"*"; devices 0,1: 2 cells at once") ;; *) fail "--devices: runs record '$dv'" ;; esac
echo "$fails failed"
[ $fails -eq 0 ]
