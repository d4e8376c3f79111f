#!/usr/bin/env bash
# A checkpoint belongs to its run in its database, not to its cell's place
# in the matrix:
#  1. a run stopped in a matrix that then grows (its cell renumbered)
#     continues from its checkpoint, not from the start;
#  2. two databases whose checkpoints share one folder (checkpoint_dir) keep
#     their runs of one id apart: neither removes nor uses the other's;
#  3. a run started over twice (stopped before any checkpoint) says so twice.
. "$(dirname "$0")/common.bash"

# stop the run of $1 (a pid) with signal $2 once a file matching $3 exists
stop_at() { wait_for "$3" || fail "no $3"; kill "-$2" "$1"; wait "$1" 2>/dev/null; }
# the step of the last checkpoint in folder $1 (-1 where none)
last_ckpt() {
  local f n=-1 k
  for f in "$1"/ckpt-*.obck; do
    [ -e "$f" ] || continue
    k=${f##*/ckpt-}; k=$((10#${k%.obck}))
    [ "$k" -gt "$n" ] && n=$k
  done
  echo "$n"
}
events() { q "$1" "select group_concat(kind, ' ') from (select kind from events e join runs r on r.id = e.run_id where r.optimizer = '$2' and kind in ('resumed', 'restarted') order by e.id)"; }

# 1. adam is cell 0 of the first matrix, cell 1 of the grown one
g=(--workloads quadratic --lrs 0.01 --steps 300000 --checkpoint-every 20000 --backend cpu)
"$OPTBENCH" run "${g[@]}" --optimizers adam --db "$tmp/g.db" >/dev/null 2>&1 & pid=$!
stop_at $pid TERM "$tmp/g.db.ckpt/run-1/ckpt-*.obck"
"$OPTBENCH" run "${g[@]}" --optimizers sgd,adam --db "$tmp/g.db" --resume >/dev/null 2>"$tmp/g.err" ||
  fail "the grown matrix: $(tail -n2 "$tmp/g.err")"
echo "grown matrix: adam's run: $(events "$tmp/g.db" adam)"
check "a renumbered cell continues from its checkpoint" test "$(events "$tmp/g.db" adam)" = resumed
check "  ... which it does not call another run's" test "$(grep -c 'written for another run' "$tmp/g.err")" = 0

# 2. run 1 of a.db and run 1 of b.db, checkpoints in one folder
s=(--workloads quadratic --optimizers adam --lrs 0.01 --steps 300000 --checkpoint-every 20000
   --checkpoint-dir "$tmp/shared" --backend cpu)
"$OPTBENCH" run "${s[@]}" --db "$tmp/a.db" >/dev/null 2>&1 & pid=$!
stop_at $pid TERM "$tmp/shared/*/run-1/ckpt-*.obck"
# b is stopped past a's last checkpoint, so that the two resume at steps
# that differ whatever the timing: a run that took the other's checkpoint
# would resume at the other's step
a_id=$(q "$tmp/a.db" "select value from meta where key = 'database_id'")
a_last=$(last_ckpt "$tmp/shared/$a_id/run-1")
"$OPTBENCH" run "${s[@]}" --db "$tmp/b.db" >/dev/null 2>&1 & pid=$!
past=0
for _ in $(seq 2000); do
  for d in "$tmp"/shared/*/run-1; do
    [ "$d" != "$tmp/shared/$a_id/run-1" ] && [ "$(last_ckpt "$d")" -gt "$a_last" ] && { past=1; break 2; }
  done
  sleep 0.01
done
[ $past = 1 ] || fail "b: no checkpoint past step $a_last within 20 s"
kill -TERM $pid; wait $pid 2>/dev/null
check "two databases' runs of one id get folders of their own" test "$(ls "$tmp/shared" | wc -l)" = 2
"$OPTBENCH" run "${s[@]}" --db "$tmp/b.db" --resume >/dev/null 2>"$tmp/b.err" || fail "b: $(tail -n2 "$tmp/b.err")"
check "  ... b finished leaves a's checkpoints" test "$(ls "$tmp/shared")" = "$(q "$tmp/a.db" "select value from meta where key = 'database_id'")"
"$OPTBENCH" run "${s[@]}" --db "$tmp/a.db" --resume >/dev/null 2>"$tmp/a.err" || fail "a: $(tail -n2 "$tmp/a.err")"
echo "shared checkpoint folder: a: $(events "$tmp/a.db" adam); b: $(events "$tmp/b.db" adam)"
check "  ... each continued from its own checkpoint" test "$(events "$tmp/a.db" adam)/$(events "$tmp/b.db" adam)" = resumed/resumed
a_at=$(q "$tmp/a.db" "select step from events where kind = 'resumed'")
b_at=$(q "$tmp/b.db" "select step from events where kind = 'resumed'")
check "  ... at its own step (a: $a_at of $a_last, b: $b_at)" test "$a_at" = "$a_last" -a "$b_at" -gt "$a_last"
check "  ... and the folder is left empty" test -z "$(ls -A "$tmp/shared")"

# 3. stopped twice before any checkpoint (checkpoints only at a clean stop)
r=(--workloads quadratic --optimizers adam --lrs 0.01 --steps 200000 --checkpoint-every 0 --backend cpu
   --db "$tmp/r.db" --resume)
for k in 1 2; do
  "$OPTBENCH" run "${r[@]}" >/dev/null 2>&1 & pid=$!
  # killed once this process trains: its start over recorded (the second
  # time) and curve points of its own written (the first's are dropped then)
  for _ in $(seq 400); do
    [ "$(q "$tmp/r.db" "select (select count(*) from events where kind = 'restarted') = $k - 1 and
                                (select count(*) from curves) > 0" 2>/dev/null)" = 1 ] && break
    sleep 0.05
  done
  kill -KILL $pid; wait $pid 2>/dev/null
done
"$OPTBENCH" run "${r[@]}" >/dev/null 2>"$tmp/r.err" || fail "restarts: $(tail -n2 "$tmp/r.err")"
echo "started over twice: $(events "$tmp/r.db" adam)"
check "a run started over twice counts two starts over" test "$(events "$tmp/r.db" adam)" = "restarted restarted"

echo "$fails failed"
exit $fail
