#!/usr/bin/env bash
# A run that ends inside a streak of non-finite (skipped) steps shorter than
# train.max_bad_steps, with no finite loss in the final stretch its final loss
# is the mean of, has no final loss: it is diverged where the streak began
# (an event says why), not done.
. "$(dirname "$0")/common.bash"
r=(run --workloads quadratic --optimizers sgd --backend cpu)
# lr 1e30: step 1 is finite, every later loss infinite
"$OPTBENCH" "${r[@]}" --lrs 1e30 --steps 10 --db "$tmp/a.db" 2>"$tmp/a.err" || fail "run: $(cat "$tmp/a.err")"
[ "$(q "$tmp/a.db" "select status || '|' || diverged_step || '|' || (final_loss is null) from runs")" = "diverged|2|1" ] ||
  fail "9 non-finite steps of 10 (max_bad_steps 10): $(q "$tmp/a.db" "select status, diverged_step, final_loss from runs")"
[ "$(q "$tmp/a.db" "select detail from events where kind = 'diverged'")" = \
  "9 consecutive non-finite steps at the end of the run: no finite loss in its last step" ] ||
  fail "the event: $(q "$tmp/a.db" "select step, kind, detail from events where kind = 'diverged'")"
grep -q "diverged at step 2" "$tmp/a.err" || fail "the progress line: $(cat "$tmp/a.err")"
"$OPTBENCH" "${r[@]}" --lrs 1e30 --steps 50 --set train.max_bad_steps=100 --db "$tmp/b.db" 2>/dev/null ||
  fail "run b failed"
[ "$(q "$tmp/b.db" "select status || '|' || diverged_step from runs")" = "diverged|2" ] ||
  fail "49 non-finite steps of 50 (max_bad_steps 100): $(q "$tmp/b.db" "select status, diverged_step from runs")"
[ "$(q "$tmp/b.db" "select count(*) from events where kind = 'diverged' and detail like '% in its last 5 steps'")" = 1 ] ||
  fail "the event: $(q "$tmp/b.db" "select detail from events where kind = 'diverged'")"
# the streak that reaches max_bad_steps diverges as before, at its first step
"$OPTBENCH" "${r[@]}" --lrs 1e30 --steps 50 --db "$tmp/c.db" 2>/dev/null || fail "run c failed"
[ "$(q "$tmp/c.db" "select status || '|' || diverged_step || '|' || steps_done from runs")" = "diverged|2|11" ] ||
  fail "max_bad_steps reached: $(q "$tmp/c.db" "select status, diverged_step, steps_done from runs")"
[ "$(q "$tmp/c.db" "select detail from events where kind = 'diverged'")" = "10 consecutive non-finite steps" ] ||
  fail "the event: $(q "$tmp/c.db" "select detail from events where kind = 'diverged'")"
# a run whose losses stay finite is done
"$OPTBENCH" "${r[@]}" --lrs 0.01 --steps 10 --db "$tmp/d.db" 2>/dev/null || fail "run d failed"
[ "$(q "$tmp/d.db" "select status || '|' || (final_loss is not null) from runs")" = "done|1" ] ||
  fail "a finite run: $(q "$tmp/d.db" "select status, final_loss from runs")"
echo "$fails failed"
[ $fails -eq 0 ]
