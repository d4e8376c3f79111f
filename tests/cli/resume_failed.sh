#!/usr/bin/env bash
# --resume runs a failed run again: from its checkpoint where it has one
# (giving the uninterrupted result bit for bit), else from the start; it says
# so in those words (not as a stop without a checkpoint), keeps the earlier
# failure's error in the run's event (the new result replaces the run's
# error) and counts it in the summary line.
. "$(dirname "$0")/common.bash"
args=(run --workloads quadratic --optimizers sgd,adam --lrs 0.01 --steps 20000 --checkpoint-every 100
      --set quadratic.dim=128 --backend cpu)
"$OPTBENCH" "${args[@]}" --db "$tmp/ref.db" 2>/dev/null || { echo "reference run failed"; exit 1; }

# a failure with no checkpoint (failed before its first): run again from the start
db="$tmp/nock.db"
"$OPTBENCH" "${args[@]}" --db "$db" 2>/dev/null || fail "setup run failed"
q "$db" "update runs set status = 'failed', error = 'planted: no memory' where id = 1" >/dev/null
"$OPTBENCH" "${args[@]}" --db "$db" --resume 2>"$tmp/nock.err" || fail "resume failed: $(cat "$tmp/nock.err")"
grep -q "run 1 failed before (planted: no memory): running it again from the start" "$tmp/nock.err" ||
  fail "no failed-before message: $(cat "$tmp/nock.err")"
grep -q "starting it over" "$tmp/nock.err" &&
  fail "described as a stop without a checkpoint: $(cat "$tmp/nock.err")"
grep -q "1 failed before and run again" "$tmp/nock.err" || fail "summary line: $(grep done, "$tmp/nock.err")"
ev=$(q "$db" "select step || '|' || kind || '|' || detail from events where run_id = 1")
case "$ev" in "0|restarted|run again after it failed (planted: no memory): started over: no usable checkpoint"*) ;;
  *) fail "event of the rerun: '$ev'";; esac
[ "$(q "$db" "select status || '|' || (error is null) from runs where id = 1")" = "done|1" ] ||
  fail "rerun's result: $(q "$db" "select status, error from runs where id = 1")"

# a failure after checkpoints (stopped by SIGINT, then marked failed as a
# crash would leave it): continued from its checkpoint, the result the
# uninterrupted run's
db="$tmp/ck.db"
"$OPTBENCH" "${args[@]}" --db "$db" >/dev/null 2>"$tmp/ck0.err" &
pid=$!
wait_for "$db.ckpt/run-*/ckpt-*.obck" || fail "no checkpoint appeared"
kill -INT $pid
wait $pid
rid=$(q "$db" "select id from runs where status = 'interrupted'")
[ -n "$rid" ] || { fail "no interrupted run: $(q "$db" "select status from runs")"; echo "$fails failed"; exit 1; }
step=$(q "$db" "select steps_done from runs where id = $rid")
q "$db" "update runs set status = 'failed', error = 'planted crash' where id = $rid" >/dev/null
"$OPTBENCH" "${args[@]}" --db "$db" --resume 2>"$tmp/ck.err" || fail "resume failed: $(cat "$tmp/ck.err")"
grep -q "run $rid failed before (planted crash): running it again from its checkpoint at step $step" "$tmp/ck.err" ||
  fail "no failed-before message: $(cat "$tmp/ck.err")"
grep -q "1 failed before and run again" "$tmp/ck.err" || fail "summary line: $(grep done, "$tmp/ck.err")"
ev=$(q "$db" "select step || '|' || kind || '|' || detail from events where run_id = $rid")
case "$ev" in "$step|resumed|run again after it failed (planted crash): continued from its checkpoint at step $step"*) ;;
  *) fail "event of the rerun: '$ev'";; esac
want=$(q "$tmp/ref.db" "select group_concat(hex(final_loss), ',') from (select final_loss from runs order by id)")
got=$(q "$db" "select group_concat(hex(final_loss), ',') from (select final_loss from runs order by id)")
[ "$want" = "$got" ] || fail "final losses differ from the uninterrupted run's: $got vs $want"
[ "$(q "$db" "select count(*) from runs where status = 'done' and error is null")" = 2 ] ||
  fail "runs after the rerun: $(q "$db" "select status, error from runs")"
echo "$fails failed"
[ $fails -eq 0 ]
