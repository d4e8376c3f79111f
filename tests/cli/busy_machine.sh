#!/usr/bin/env bash
# A benchmark run beside other work (a busy loop for every CPU optbench may
# use): each run records the share of its CPUs that other processes kept
# busy (runs.other_cpu, 25% or more here; runs too short to be measured
# alone, from an earlier run's start); run's last lines and the report
# say its step times are a busy machine's; compare leaves such runs out of
# step time: a candidate twice as slow is "on a busy machine, not judged"
# and no regression, while the same candidate recorded as quiet is one. A
# run continued from a checkpoint records the share of both its parts.
. "$(dirname "$0")/common.bash"
spinners=()
trap 'kill "${spinners[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
# about 0.5 s a run here: long enough for the share to be measured (0.25 s)
args=(run --workloads rosenbrock --optimizers adam --lrs 0.001,0.003 --seeds 2 --steps 40
      --set rosenbrock.dim=1000000 --backend cpu)
for _ in $(seq "$(nproc)"); do
  sh -c 'while :; do :; done' &
  spinners+=($!)
done
"$OPTBENCH" "${args[@]}" --db "$tmp/busy.db" >/dev/null 2>"$tmp/err" || fail "the run failed: $(cat "$tmp/err")"
# short runs (tens of ms here) are measured from an earlier run's start, at
# least 0.25 s before their end: each run that ended that long after the
# process's first began has a share, and it is a busy machine's
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.003,0.01 --seeds 4 \
  --steps 3000 --backend cpu --db "$tmp/short.db" >/dev/null 2>"$tmp/short.err" || fail "the short runs failed: $(cat "$tmp/short.err")"
kill "${spinners[@]}"
wait "${spinners[@]}" 2>/dev/null
spinners=()
echo "other_cpu, wall_s: $(q "$tmp/busy.db" "select round(other_cpu, 3) || ', ' || round(wall_s, 2) from runs" | tr '\n' ' ')"
check "every run measured the other processes' share, 25% or more" \
  test "$(q "$tmp/busy.db" "select count(*) from runs where other_cpu >= 0.25 and other_cpu <= 1")" = 4
check "short runs: a share for each that ended 0.25 s after the first began, a busy one" python3 -c "
import sqlite3, sys
from datetime import datetime
t = lambda x: datetime.strptime(x, '%Y-%m-%dT%H:%M:%S.%fZ').timestamp()
rows = sqlite3.connect(sys.argv[1]).execute('select started_at, finished_at, wall_s, other_cpu from runs').fetchall()
t0 = min(t(r[0]) for r in rows)
late = [r for r in rows if t(r[1]) - t0 > 0.3]
short = [r for r in late if r[2] < 0.2]
print(f'short runs: {len(rows)} runs, {len(late)} ended 0.3 s after the first began, {len(short)} of them under 0.2 s')
assert late and all(r[3] is not None and r[3] >= 0.25 for r in late), late" "$tmp/short.db"
check "run's last lines say so" grep -q \
  "^optbench: note: 4 of the runs met a busy machine: other processes kept 25% or more of its CPUs busy (up to [0-9]*%; runs.other_cpu)" \
  "$tmp/err"

"$OPTBENCH" report --db "$tmp/busy.db" --out "$tmp/rep" --no-render >/dev/null 2>&1 || fail "report failed"
check "the report says the step times are a busy machine's" grep -q \
  "^4 of the finished runs ran while other processes kept 25% or more of the machine's CPUs busy (up to [0-9]*%; runs.csv's other_cpu" \
  "$tmp/rep/summary.md"
check "the cost table marks the group" grep -qE '^\| rosenbrock \| adam \| .*\((unsteady, )?busy\) \|' "$tmp/rep/summary.md"
check "runs.csv has the share" python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4 and all(float(r['other_cpu']) >= 0.25 for r in rows), rows" "$tmp/rep/runs.csv"

# the baseline: these runs, recorded as on a quiet machine; the candidate:
# twice as slow, on the busy one
copy_as_rerun "$tmp/busy.db" "$tmp/base.db"
q "$tmp/base.db" "update runs set other_cpu = 0" >/dev/null
copy_as_rerun "$tmp/busy.db" "$tmp/cand.db"
q "$tmp/cand.db" "update runs set step_ms_median = 2 * step_ms_median, step_ms_p90 = 2 * step_ms_p90,
                                  step_ms_mean = 2 * step_ms_mean" >/dev/null
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-floor 0 >"$tmp/out" 2>&1
rc=$?
check "busy: no regression (exit $rc)" test $rc = 0
check "busy: the row says why: $(grep '^rosenbrock' "$tmp/out")" grep -q '^rosenbrock .*+100.0% on a busy machine, not judged' "$tmp/out"
check "busy: the note names the shares" grep -q \
  "note: step time not judged in 1 group: most of its cells ran while other processes kept 25% or more of the machine's CPUs busy on one side or both (runs.other_cpu; e.g. adam on rosenbrock: up to 0% in the baseline, [0-9]*% in the candidate)" \
  "$tmp/out"
# the same candidate recorded quiet: a regression
q "$tmp/cand.db" "update runs set other_cpu = null" >/dev/null
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-floor 0 >"$tmp/out" 2>&1
rc=$?
check "quiet: a regression (exit $rc): $(grep '^rosenbrock' "$tmp/out")" test $rc = 1
check "quiet: step time worse" grep -q '^rosenbrock .*+100.0% .*worse' "$tmp/out"

# a run stopped (SIGTERM) and continued from its checkpoint: its share joins
# the part before the stop (recorded then; planted here as 1, a machine busy
# all along) and the part after, weighted by their wall times, so it is at
# least the first part's share of the run's time (about 0.5; on a quiet
# machine the second part alone records a few %). About 2 s of training
# here, stopped at the first checkpoint seen of steps 140000 to 199999.
db="$tmp/resumed.db"
rargs=(run --workloads quadratic --optimizers sgd --lrs 0.01 --seeds 1 --steps 300000 --checkpoint-every 20000
       --set quadratic.dim=128 --backend cpu --db "$db")
"$OPTBENCH" "${rargs[@]}" >/dev/null 2>"$tmp/stop.err" &
pid=$!
wait_for "$db.ckpt/run-*/ckpt-0000001[4-9]*.obck" || fail "resumed: no checkpoint appeared"
kill -TERM $pid
wait $pid
check "resumed: the run was stopped: $(tail -1 "$tmp/stop.err")" test "$(q "$db" "select status from runs")" = interrupted
first=$(q "$db" "select wall_s from runs")
q "$db" "update runs set other_cpu = 1" >/dev/null
"$OPTBENCH" "${rargs[@]}" --resume >/dev/null 2>"$tmp/resume.err" || fail "resumed: --resume failed: $(cat "$tmp/resume.err")"
check "resumed: continued from its checkpoint" grep -q "1 continued from a checkpoint" "$tmp/resume.err"
row=$(q "$db" "select status, other_cpu, wall_s from runs")
echo "resumed: status, other_cpu, wall_s: $row (the first part: ${first} s)"
check "resumed: the share joins both parts: $row, first part $first s" python3 -c "
import sys
status, share, wall = sys.argv[1].split('|')
first = float(sys.argv[2])
assert status == 'done' and 0 < first < float(wall), (status, first, wall)
assert first / float(wall) - 0.05 <= float(share) <= 1, (share, first / float(wall))" "$row" "$first"
exit $fail
