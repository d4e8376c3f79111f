#!/usr/bin/env bash
# The spike guard end to end: a run with train.spike_z_loss / spike_z_grad
# skips steps (events "spike_skipped", the run is not diverged), the report
# counts them per run (runs.csv) and says so under the ranking; a run without
# the guard keeps its hyperparameter text free of the guard's keys (its
# identity for resume, compare and history); a SIGKILL after a checkpoint and
# --resume give the same curves, skipped steps and events, bit for bit (the
# window is checkpointed); a rollback restores the window with the snapshot.
. "$(dirname "$0")/common.bash"
args=(run --workloads bert-tiny --optimizers sgd --lrs 0.5 --seeds 1 --steps 150 --backend cpu
      --checkpoint-every 40 --set train.spike_z_loss=3 --set train.spike_z_grad=3 --set train.spike_window=32)
"$OPTBENCH" "${args[@]}" --db "$tmp/ref.db" >"$tmp/ref.out" 2>&1 || { cat "$tmp/ref.out"; exit 1; }
q() { sqlite3 "$tmp/ref.db" "$1"; }
n_spike=$(q "select count(*) from events where kind = 'spike_skipped'")
echo "spike-skipped steps: $n_spike"
check "steps were skipped as spikes" test "$n_spike" -gt 0
check "the run finished, not diverged" test "$(q "select status from runs")" = done
check "the event says what and why" \
  grep -qE '^(loss|gradient norm) [0-9.e+-]+ \(z = [0-9.e+]+ > 3\).*, scored against the last 32 finite steps; update skipped$' \
  <<<"$(q "select detail from events where kind = 'spike_skipped'")"
check "the guard's settings are in the run's hyperparameters" \
  test "$(q "select json_extract(hparams, '\$.train.spike_window') from runs")" = 32

# without the guard: none of its keys in the text
"$OPTBENCH" run --workloads bert-tiny --optimizers sgd --lrs 0.5 --seeds 1 --steps 30 --backend cpu \
  --db "$tmp/off.db" >/dev/null 2>&1 || echo "FAIL: run without the guard"
check "a run without the guard has no spike keys" \
  test "$(sqlite3 "$tmp/off.db" "select instr(hparams, 'spike') from runs")" = 0

# the report
"$OPTBENCH" report --db "$tmp/ref.db" --out "$tmp/r" --no-render >/dev/null 2>&1 || echo "FAIL: report"
check "summary.md says what the guard did at the best lr" \
  grep -qE "The guard at the best lrs: sgd: $n_spike spikes? skipped \(1 of 1 seeds\)" "$tmp/r/summary.md"
check "runs.csv counts them" python3 - "$tmp/r/runs.csv" "$n_spike" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(0 if [r["skipped_spike"] for r in rows] == [sys.argv[2]] and rows[0]["skipped_nonfinite"] == "0" else 1)
PY

# a rollback restores the window with the parameters: the restored step's
# loss is no spike
"$OPTBENCH" run --workloads quadratic --optimizers adam --lrs 0.01 --steps 300 --backend cpu \
  --set quadratic.inject_nan_step=180 --set train.on_nonfinite=rollback --set train.snapshot_every=100 \
  --set train.spike_z_loss=3 --set train.spike_window=32 --db "$tmp/rb.db" >/dev/null 2>&1 || echo "FAIL: rollback run"
check "a rollback happened" test "$(sqlite3 "$tmp/rb.db" "select count(*) from events where detail like 'rollback:%'")" = 1
check "no spike after the rollback" test "$(sqlite3 "$tmp/rb.db" "select count(*) from events where kind = 'spike_skipped'")" = 0

# SIGKILL after the first checkpoint, then --resume: bit for bit
"$OPTBENCH" "${args[@]}" --db "$tmp/k.db" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 3000); do
  compgen -G "$tmp/k.db.ckpt/run-1/ckpt-*.obck" >/dev/null && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.005
done
kill -9 $pid 2>/dev/null && echo "killed after a checkpoint" || echo "the run ended before the kill"
wait $pid 2>/dev/null
"$OPTBENCH" "${args[@]}" --db "$tmp/k.db" --resume >"$tmp/k.out" 2>&1 || { cat "$tmp/k.out"; fail=1; }
grep -h resume "$tmp/k.out" | head -3
check "resumed run equals the uninterrupted one" python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/k.db"
exit $fail
