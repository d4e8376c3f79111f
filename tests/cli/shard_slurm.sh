#!/usr/bin/env bash
# Sharding: --shard K/N and Slurm's array variables pick the cells whose
# index is K mod N (every cell in exactly one shard); bad shard specs are
# refused. Then the job-array script of docs/long-sweeps.md (scripts/slurm_array.sbatch)
# runs as three array tasks, one of them preempted (SIGTERM) and requeued,
# and `optbench merge` of the shards equals the unsharded run.
. "$(dirname "$0")/common.bash"
: "${OB_SOURCE_DIR:?}"
M=(--workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03 --seeds 2 --steps 3000 --backend cpu)

# which cells each shard takes
all=""
for k in 0 1 2; do
  cells=$("$OPTBENCH" run "${M[@]}" --shard $k/3 --dry-run | awk '$1 ~ /^[0-9]+$/ && NF == 6 {print $1}' | tr '\n' ' ')
  echo "shard $k/3: $cells"
  for c in $cells; do [ $((c % 3)) = $k ] || fail "shard $k/3 lists cell $c"; done
  all="$all $cells"
done
[ "$(echo $all | tr ' ' '\n' | sort -n | tr '\n' ' ')" = "$(seq 0 15 | tr '\n' ' ')" ] || fail "the shards do not cover each cell once: $all"
cells=$(SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=4 "$OPTBENCH" run "${M[@]}" --dry-run | awk '$1 ~ /^[0-9]+$/ && NF == 6 {print $1}' | tr '\n' ' ')
[ "$cells" = "1 5 9 13 " ] || fail "SLURM_ARRAY_TASK_ID=6 of 5..8: cells '$cells'"
cells=$(SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 "$OPTBENCH" run "${M[@]}" --shard 0/2 --dry-run | awk '$1 ~ /^[0-9]+$/ && NF == 6 {print $1}' | tr '\n' ' ')
[ "$cells" = "0 2 4 6 8 10 12 14 " ] || fail "--shard should win over Slurm's variables: '$cells'"
for bad in 3/3 -1/2 x 1/0 2; do
  "$OPTBENCH" run "${M[@]}" --shard "$bad" --db "$tmp/no.db" 2>"$tmp/err"; rc=$?
  [ $rc = 2 ] && grep -q -- "--shard '$bad'" "$tmp/err" || fail "--shard $bad: exit $rc, $(cat "$tmp/err")"
done
SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_COUNT=4 "$OPTBENCH" run "${M[@]}" --db "$tmp/no.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "SLURM_ARRAY_TASK_ID=9" "$tmp/err" || fail "Slurm task outside the array: exit $rc, $(cat "$tmp/err")"
"$OPTBENCH" run "${M[@]}" --devices 0,0 --db "$tmp/no.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "listed twice" "$tmp/err" || fail "--devices 0,0: exit $rc, $(cat "$tmp/err")"
[ ! -e "$tmp/no.db" ] || fail "bad input wrote a database"

# the job-array script, three tasks; task 1 is preempted and requeued
printf 'name: sweep\nworkloads: [quadratic, rosenbrock]\noptimizers: [sgd, adam]\nlrs: [0.003, 0.03]\nseeds: 2\nsteps: 3000\nbackend: cpu\ncheckpoint_every: 100\n' >"$tmp/sweep.yaml"
"$OPTBENCH" run "$tmp/sweep.yaml" --db "$tmp/ref.db" 2>/dev/null || fail "reference run failed"
script="$OB_SOURCE_DIR/scripts/slurm_array.sbatch"
export OPTBENCH SLURM_ARRAY_TASK_COUNT=3
SLURM_ARRAY_TASK_ID=0 bash "$script" "$tmp/sweep.yaml" "$tmp/results" 2>/dev/null || fail "task 0"
SLURM_ARRAY_TASK_ID=1 bash "$script" "$tmp/sweep.yaml" "$tmp/results" >/dev/null 2>&1 &
pid=$!
wait_for "$tmp/results/shard-1.db.ckpt/run-*/ckpt-*.obck" || fail "task 1: no checkpoint within 20 s"
kill -TERM $pid; wait $pid; rc=$?
echo "task 1 preempted: exit $rc"
[ $rc = 143 ] || fail "task 1: SIGTERM gave exit status $rc"
SLURM_ARRAY_TASK_ID=1 bash "$script" "$tmp/sweep.yaml" "$tmp/results" 2>"$tmp/err" || fail "task 1 requeued"
grep -q "resume: benchmark 1" "$tmp/err" || fail "the requeued task did not continue its benchmark: $(cat "$tmp/err")"
SLURM_ARRAY_TASK_ID=2 bash "$script" "$tmp/sweep.yaml" "$tmp/results" 2>/dev/null || fail "task 2"
"$OPTBENCH" merge --out "$tmp/results/all.db" "$tmp"/results/shard-*.db 2>"$tmp/err" || fail "merge: $(cat "$tmp/err")"
cat "$tmp/err"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/results/all.db" || fail "the merged shards differ from the unsharded run"
echo "$fails failed"
[ $fails -eq 0 ]
