#!/usr/bin/env bash
# SIGKILL at random moments, then --resume: the finished database holds the
# same loss curves, evaluations, events and results, bit for bit, as an
# uninterrupted run, no curve point lost or duplicated, and the final
# parameters (--dump-params) are byte-identical. Where and when the kills
# land is random and printed (OB_KILL_SEED=N repeats a choice).
. "$(dirname "$0")/common.bash"
RANDOM=${OB_KILL_SEED:-$$}
args=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.01 --seeds 2 --steps 4000
      --eval-every 100 --checkpoint-every 50 --checkpoint-keep 2
      --set sgd.momentum=0.9 --set quadratic.dim=128 --set quadratic.inject_nan_step=700 --backend cpu)
"$OPTBENCH" "${args[@]}" --db "$tmp/ref.db" --dump-params "$tmp/ref" 2>"$tmp/ref.err" || { cat "$tmp/ref.err"; exit 1; }
# Round 0 kills a random moment after the start (creating the database,
# the benchmark, the first steps); then six of the runs that train to the
# end, chosen at random, are each killed a random moment after their first
# checkpoint (runs are numbered 1..16 in cell order in both databases), in
# the order they run (the reference's, which a resumed process keeps):
# mid-step, mid-flush, mid-write.
targets=$(python3 - "$tmp/ref.db" $RANDOM <<'PY'
import random, sqlite3, sys
# runs that train to the end (the diverging ones stop before a checkpoint)
ids = [r[0] for r in sqlite3.connect(sys.argv[1]).execute(
    "select id from runs where status = 'done' order by started_at, id")]
random.seed(int(sys.argv[2]))
chosen = set(random.sample(ids, 6))
print(*[i for i in ids if i in chosen])
PY
)
echo "SIGKILL at the start, then in runs: $targets"
kills=0 last=0
for r in 0 $targets; do
  "$OPTBENCH" "${args[@]}" --db "$tmp/k.db" --dump-params "$tmp/k" --resume >/dev/null 2>"$tmp/k$r.err" &
  pid=$!
  if [ $r = 0 ]; then
    sleep "0.0$((RANDOM % 5))"
    if kill -9 $pid 2>/dev/null; then kills=$((kills+1)); fi
  else
    # killed in run r (or, where a busy machine let it end unseen, a later
    # one), 0-9 ms after its first checkpoint: inside the run on a fast,
    # idle machine too
    if k=$(signal_in_run $pid "$tmp/k.db" "$tmp/k.db.ckpt" "$(runs_after "$tmp/ref.db" $r $last)" KILL \
      "0.00$((RANDOM % 10))"); then
      kills=$((kills+1))
      last=$k
    fi
  fi
  wait $pid 2>/dev/null
  echo "after run $r: $(ls "$tmp"/k.db.ckpt 2>/dev/null | tr '\n' ' ')"
done
"$OPTBENCH" "${args[@]}" --db "$tmp/k.db" --dump-params "$tmp/k" --resume 2>"$tmp/final.err" || { cat "$tmp/final.err"; exit 1; }
grep -h "resume" "$tmp"/k*.err "$tmp/final.err" | sort | uniq -c | head -20
fails=0
# A kill lands only while the process runs; on a very fast machine the
# remaining matrix can finish first. Most must land for the test to mean much.
echo "$kills of 7 kills landed while running"
[ $kills -ge 5 ] || { echo "FAIL: only $kills kills landed while running"; fails=$((fails+1)); }
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/k.db" || fails=$((fails+1))
for f in "$tmp"/ref/cell-*.f32; do
  cmp -s "$f" "$tmp/k/$(basename "$f")" || { echo "FAIL: parameters differ: $(basename "$f")"; fails=$((fails+1)); }
done
[ "$(ls "$tmp"/ref | wc -l)" = 16 ] || { echo "FAIL: expected 16 parameter dumps"; fails=$((fails+1)); }
nb=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(distinct benchmark_id) from runs').fetchone()[0])" "$tmp/k.db")
[ "$nb" = 1 ] || { echo "FAIL: $nb benchmarks hold runs; resume should continue one"; fails=$((fails+1)); }
[ ! -e "$tmp/k.db.ckpt" ] || { echo "FAIL: checkpoints left after every run finished: $(ls -R "$tmp/k.db.ckpt")"; fails=$((fails+1)); }
echo "$fails failed"
[ $fails -eq 0 ]
