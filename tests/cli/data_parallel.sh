#!/usr/bin/env bash
# data_parallel on the CPU backend (replicas one after another, gradients
# summed in replica order): a run split over 2 or 4 replicas follows the
# one-device run's loss curve and evaluations to rounding, for the bert and
# cnn workloads and optimizers of three kinds; a run stopped and resumed
# with --resume ends with the same parameters, bit for bit, as one that was
# not stopped (the checkpoint reaches every replica); bad input is refused
# with exit status 2 before anything is written.
. "$(dirname "$0")/common.bash"

base=(run --workloads bert-tiny,cnn-tiny --optimizers adamw,muon,sgd --lrs 0.003 --steps 20 --eval-every 10
      --backend cpu --set sgd.momentum=0.9)
for dp in 1 2 4; do
  check "data_parallel $dp runs" "$OPTBENCH" "${base[@]}" --data-parallel $dp --db "$tmp/dp$dp.db" 2>"$tmp/dp$dp.err" \
    || cat "$tmp/dp$dp.err"
done
# two workers of two replicas each (--devices): each worker opens and closes its own replicas
check "data_parallel 2 on two workers runs" "$OPTBENCH" "${base[@]}" --data-parallel 2 --devices 0,1,2,3 \
  --db "$tmp/dp2w.db" 2>"$tmp/dp2w.err" || cat "$tmp/dp2w.err"
check "runs split over replicas follow the one-device runs" python3 - "$tmp" <<'PY'
import math, sqlite3, sys
tmp = sys.argv[1]
def load(dp):
    db = sqlite3.connect(f"{tmp}/dp{dp}.db")
    runs = {}
    for rid, wl, opt, status, dev in db.execute("select id, workload, optimizer, status, device from runs"):
        curve = [l for (l,) in db.execute("select loss from curves where run_id = ? order by step", (rid,))]
        ev = db.execute("select loss, metric from evals where run_id = ? order by step", (rid,)).fetchall()
        runs[(wl, opt)] = (status, curve, ev, dev)
    return runs
ref = load(1)
bad = 0
assert len(ref) == 6, ref.keys()
for name, dp in (("2", 2), ("4", 4), ("2w", 2)):
    got = load(name)
    for key, (status, curve, ev, dev) in ref.items():
        s2, c2, e2, d2 = got[key]
        if s2 != "done" or status != "done" or len(c2) != 20 or len(curve) != 20:
            print(f"dp {name} {key}: status {s2}/{status}, {len(c2)}/{len(curve)} points"); bad += 1; continue
        if f"data parallel: {dp} " not in d2:  # "2 replicas", or "2 devices per run" (--devices)
            print(f"dp {name} {key}: device text {d2!r} does not say so"); bad += 1
        worst = max(abs(a - b) / max(abs(b), 1e-3) for a, b in zip(c2, curve))
        worst_ev = max(abs(a[0] - b[0]) / abs(b[0]) for a, b in zip(e2, ev))
        metric_ok = all(abs(a[1] - b[1]) <= 2.0 / 1024 for a, b in zip(e2, ev))
        print(f"dp {name:2} {key[0]:9} {key[1]:6} largest relative loss difference {worst:.2e}, eval {worst_ev:.2e}")
        # rounding differences (1e-7 seen) grow over 20 steps; a wrong split, weight or
        # sum moves the curve by 1e-3 and more
        if worst > 5e-6 or worst_ev > 5e-6 or not metric_ok or len(e2) != len(ev):
            print("  FAIL: too far from the one-device run"); bad += 1
sys.exit(1 if bad else 0)
PY

# stopped (SIGTERM after the first checkpoint) and resumed: the same bits
one=(run --workloads bert-tiny --optimizers adamw --lrs 0.003 --steps 120 --checkpoint-every 20 --backend cpu
     --data-parallel 2)
check "uninterrupted reference" "$OPTBENCH" "${one[@]}" --db "$tmp/ref.db" --dump-params "$tmp/ref" 2>"$tmp/ref.err"
"$OPTBENCH" "${one[@]}" --db "$tmp/s.db" --dump-params "$tmp/s" 2>"$tmp/s1.err" &
pid=$!
for _ in $(seq 4000); do
  compgen -G "$tmp/s.db.ckpt/run-1/ckpt-*.obck" >/dev/null && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.005
done
kill -TERM $pid 2>/dev/null
wait $pid
rc=$?
if [ $rc = 143 ]; then
  check "resumed over 2 replicas" "$OPTBENCH" "${one[@]}" --db "$tmp/s.db" --dump-params "$tmp/s" --resume 2>"$tmp/s2.err"
  check "the resume continued from a checkpoint" grep -q "continue" "$tmp/s2.err"
  check "resumed parameters are the uninterrupted run's, bit for bit" cmp "$tmp/ref/cell-0.f32" "$tmp/s/cell-0.f32"
else
  echo "note: the run ended (status $rc) before SIGTERM reached it; the resume case was not exercised"
  check "an unstopped run ends well" test $rc = 0
fi

# bad input: exit 2, nothing written
expect2() { # description, what stderr must hold, args...
  local what="$1" msg="$2"; shift 2
  "$OPTBENCH" "$@" --db "$tmp/bad.db" >/dev/null 2>"$tmp/bad.err"
  local rc=$?
  check "$what: exit 2 (got $rc)" test $rc = 2
  check "$what: says '$msg'" grep -q -- "$msg" "$tmp/bad.err" || cat "$tmp/bad.err"
  check "$what: no database written" test ! -e "$tmp/bad.db"
}
expect2 "batch not divisible" "batch=32, which does not split into 3 equal parts" \
  run --workloads bert-tiny --optimizers adamw --data-parallel 3 --steps 5 --backend cpu
expect2 "workload without a batch" "quadratic has no batch to split" \
  run --workloads quadratic --optimizers adamw --data-parallel 2 --steps 5 --backend cpu
expect2 "devices not a multiple" "lists 3 devices" \
  run --workloads cnn-tiny --optimizers sgd --data-parallel 2 --devices 0,1,2 --steps 5 --backend cpu
expect2 "out of range flag" "--data-parallel" \
  run --workloads cnn-tiny --optimizers sgd --data-parallel 17 --steps 5 --backend cpu
printf 'workloads: [cnn-tiny]\noptimizers: [sgd]\ndata_parallel: 0\n' > "$tmp/dp0.yaml"
expect2 "config key out of range" "dp0.yaml:3: data_parallel must be >= 1" run "$tmp/dp0.yaml"
printf 'workloads: [bert-tiny]\noptimizers: [sgd]\ndata_parallel: 3\n' > "$tmp/dp3.yaml"
expect2 "a config's data_parallel that does not split the batch: its line" \
  "dp3.yaml:3: data_parallel = 3: workload bert-tiny has batch=32" run "$tmp/dp3.yaml" --steps 5 --backend cpu
printf 'workloads: [cnn-tiny]\noptimizers: [sgd]\ndata_parallel: 2\nsteps: 5\n' > "$tmp/dp2.yaml"
check "the effective configuration keeps data_parallel" \
  bash -c '"$0" run "$1" --print-config | grep -qx "data_parallel: 2"' "$OPTBENCH" "$tmp/dp2.yaml"
exit $fail
