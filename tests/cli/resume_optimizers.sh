#!/usr/bin/env bash
# Bitwise resume for every optimizer: all the elementwise ones (and adafactor) on the
# quadratic (with a warmup-cosine schedule and the rollback guard tripped by
# a planted NaN, so schedule position, update counts and rollback snapshots
# must all come back from the checkpoint), killed with SIGKILL while cells
# are under way; and the matrix optimizers (muon, root: Newton-Schulz on
# the conv net's matrices; soap: its preconditioners and eigenbases, refreshed
# every 2 steps) stopped by SIGINT. Each --resume ends exactly as
# the uninterrupted run.
. "$(dirname "$0")/common.bash"
RANDOM=${OB_KILL_SEED:-$$}

opts=sgd,adam,adamw,nadam,radam,adamax,adagrad,adadelta,rmsprop,lion,adamw_sf,sgd_sf,adafactor,rprop,asgd,ademamix,adabelief
A=(run --workloads quadratic --optimizers $opts --steps 2000 --eval-every 500 --checkpoint-every 25
   --set quadratic.dim=64 --set quadratic.inject_nan_step=130 --set sgd.momentum=0.9 --set sgd.nesterov=true
   --set adam.amsgrad=true --set rmsprop.centered=true --set rmsprop.momentum=0.5
   --set ademamix.alpha_warmup=300 --set ademamix.beta3_warmup=300
   --set train.schedule=warmup_cosine --set train.warmup_steps=50
   --set train.on_nonfinite=rollback --set train.snapshot_every=40 --backend cpu)
"$OPTBENCH" "${A[@]}" --db "$tmp/a_ref.db" --dump-params "$tmp/a_ref" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
grep -c "rollback" "$tmp/err" >/dev/null
# Six of the runs that train to the end (one per optimizer), at random, are
# each killed 0-9 ms after their first checkpoint (runs are numbered in cell
# order, the same in both databases).
targets=$(python3 - "$tmp/a_ref.db" $RANDOM <<'PY'
import random, sqlite3, sys
ids = [r[0] for r in sqlite3.connect(sys.argv[1]).execute("select id from runs where status = 'done'")]
random.seed(int(sys.argv[2]))
print(*sorted(random.sample(ids, min(6, len(ids)))))
PY
)
echo "SIGKILL in runs: $targets"
kills=0 last=0
for r in $targets; do
  "$OPTBENCH" "${A[@]}" --db "$tmp/a.db" --dump-params "$tmp/a" --resume >/dev/null 2>"$tmp/a$r.err" &
  pid=$!
  # killed in run r (or, where a busy machine let it end unseen, a later
  # one), 0-9 ms after its first checkpoint: a run lasts about 50 ms here
  if k=$(signal_in_run $pid "$tmp/a.db" "$tmp/a.db.ckpt" "$(runs_after "$tmp/a_ref.db" $r $last)" KILL \
    "0.00$((RANDOM % 10))"); then
    kills=$((kills+1))
    last=$k
  fi
  wait $pid 2>/dev/null
done
"$OPTBENCH" "${A[@]}" --db "$tmp/a.db" --dump-params "$tmp/a" --resume 2>"$tmp/err" || fail "final resume: $(cat "$tmp/err")"
echo "elementwise optimizers: $kills SIGKILLs; $(tail -2 "$tmp/err" | head -1)"
# A kill lands only while the process runs: on a fast machine the last cell
# of the matrix can end first (the others are followed by more cells).
n_targets=$(echo $targets | wc -w)
[ $kills -ge $((n_targets - 1)) ] || fail "only $kills of $n_targets kills landed while running"
python3 "$here/resume_compare.py" "$tmp/a_ref.db" "$tmp/a.db" || fail "elementwise optimizers: results differ"
for f in "$tmp"/a_ref/*.f32; do cmp -s "$f" "$tmp/a/$(basename "$f")" || fail "parameters differ: $(basename "$f")"; done
python3 - "$tmp/a.db" <<'PY' || fail "the rollback guard did not act"
import sqlite3, sys
n = sqlite3.connect(sys.argv[1]).execute("select count(*) from events where detail like '%rollback%'").fetchone()[0]
assert n > 0, n
PY

# matrix optimizers on the conv net, stopped by SIGINT after the first checkpoint
B=(run --workloads cnn-tiny --optimizers soap,adafactor,muon,root --set soap.precondition_frequency=2 --steps 10
   --checkpoint-every 3 --eval-every 5 --backend cpu)
"$OPTBENCH" "${B[@]}" --db "$tmp/b_ref.db" --dump-params "$tmp/b_ref" 2>/dev/null || fail "conv net reference"
last=0
for round in 1 2; do
  "$OPTBENCH" "${B[@]}" --db "$tmp/b.db" --dump-params "$tmp/b" --resume >/dev/null 2>"$tmp/b.err" &
  pid=$!
  # stopped in a run after the one the round before stopped (a run lasts
  # 30-70 ms: one a busy machine let end unseen is passed over)
  last=$(signal_in_run $pid "$tmp/b.db" "$tmp/b.db.ckpt" "$(runs_after "$tmp/b_ref.db" 1 $last)" INT) ||
    fail "conv net round $round: no run after run $last seen training (the process ended first)"
  wait $pid; rc=$?
  [ $rc = 130 ] || fail "conv net round $round: exit $rc: $(cat "$tmp/b.err")"
done
"$OPTBENCH" "${B[@]}" --db "$tmp/b.db" --dump-params "$tmp/b" --resume 2>"$tmp/err" || fail "conv net resume: $(cat "$tmp/err")"
echo "matrix optimizers: $(tail -2 "$tmp/err" | head -1)"
python3 "$here/resume_compare.py" "$tmp/b_ref.db" "$tmp/b.db" || fail "matrix optimizers: results differ"
for f in "$tmp"/b_ref/*.f32; do cmp -s "$f" "$tmp/b/$(basename "$f")" || fail "parameters differ: $(basename "$f")"; done
echo "$fails failed"
[ $fails -eq 0 ]
