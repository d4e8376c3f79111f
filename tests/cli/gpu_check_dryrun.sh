#!/usr/bin/env bash
# scripts/gpu-check.sh's plumbing without a GPU: its dry run (OB_GPU_DRYRUN=1)
# on this build's program, every stage on the CPU backend at cut sizes. Checks
# that it exits 0 with no stage failed, that the summary has a row per
# bench-step case and per training run, the default benchmark's runs and the
# steps, and that the logs arrived in $OUT. torch's stages run where a python3
# has torch (Debian: python3-torch) and are checked then; elsewhere the script
# says it skips them. One thread: a busy machine's second core would make
# OpenMP's teams crawl. About 30 s on 2 cores.
. "$(dirname "$0")/common.bash"
command -v python3 >/dev/null || { echo "skipped: no python3 (the summary is a python script)"; exit 77; }

# the python3 the script runs: the first with torch (and sqlite3), else python3
torch=0
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c "import torch, sqlite3" 2>/dev/null; then
    mkdir -p "$tmp/bin"
    ln -s "$(command -v "$py")" "$tmp/bin/python3"
    torch=1
    break
  fi
done

out=$tmp/out
mkdir -p "$out"
env -u OB_GPU_DEFAULT -u OB_GPU_PROFILE -u OB_GPU_BUDGET -u OB_GPU_DRYRUN_TESTS -u OB_GPU_FORCE_BUILD \
  PATH="$tmp/bin:$PATH" OB_GPU_DRYRUN=1 OB_GPU_OPTBENCH="$OPTBENCH" OB_GPU_WORK="$tmp/work" OUT="$out" \
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
  bash "$here/../../scripts/gpu-check.sh" >"$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
check "exit 0 (rc $rc)" test "$rc" -eq 0
check "the result line" grep -q '^RESULT: all steps that ran passed; DRY RUN on the CPU' "$tmp/log"
check "the dry run's first line" grep -q '^DRY RUN (OB_GPU_DRYRUN)' "$out/summary.txt"
check "the summary script ran through" bash -c '! grep -q "summary script failed" "$1"' _ "$out/summary.txt"
check "the cuda tests skipped with a line" grep -q 'skip   cuda tests (dry run' "$tmp/log"

# the steps: none failed or ran out of time, and the ones every dry run has
steps=$(sed -n '/^steps$/,$p' "$out/summary.txt")
if grep -E '^  \S+ +(FAIL|TIMEOUT|SKIP)' <<<"$steps"; then fail "steps not ok (above)"; fi
for s in gpu-probe bench-adamw-1M bench-adamw-1B-noguard bench-adamw-100M+b-filter-noguard bench-muon-1M-ns-bf16 \
  bench-root-1B bench-soap-1000x64x64 bench-lars-100M run-bert-base-adamw run-bert-base-adamw-noguard \
  run-cnn-base-adamw run-bert-base-muon run-bert-base-adamw-dp2 run-bert-tiny-dp1 run-bert-tiny-dp2 default-bench \
  profile-args profile-sample; do
  grep -q -E "^  ${s//+/[+]} +ok " <<<"$steps" || fail "step $s is not listed ok"
done

# a bench-step row per bench-step case, none without its numbers
table=$(sed -n '/^case /,/^$/p' "$out/summary.txt")
n_bench=0
for s in $(awk '$1 ~ /^bench-/ && $2 == "ok" { print substr($1, 7) }' <<<"$steps"); do
  n_bench=$((n_bench + 1))
  awk -v c="$s" '$1 == c && $4 ~ /^[0-9]+\.[0-9]+$/ { found = 1 } END { exit !found }' <<<"$table" ||
    fail "no bench-step row with a step time for $s"
done
check "at least 50 bench-step cases ($n_bench)" test "$n_bench" -ge 50

# the training runs (their median step time needs more steps than the 5 untimed)
for r in bert-base-adamw bert-base-adamw-noguard cnn-base-adamw bert-base-muon bert-base-adamw-dp2 bert-tiny-dp1 \
  bert-tiny-dp2; do
  grep -q -E "^  $r +(bert|cnn)-tiny +[a-z]+ +done +steps 7 +[0-9.]+ ms/step" "$out/summary.txt" ||
    fail "training run $r is not in the summary as done, with its step time"
done
check "1 and 2 replicas compared" grep -q -E '^  data parallel: bert-tiny on 2 replicas against 1: final loss [0-9.]+ vs [0-9.]+' \
  "$out/summary.txt"
runs=$(sed -n 's/^  runs: //p' "$out/summary.txt")
check "the default benchmark's 9 runs, none failed ($runs)" \
  awk -v r="$runs" 'BEGIN { n = split(r, p, ", "); for (i = 1; i <= n; i++) { split(p[i], w, " "); t += w[1]; if (w[2] == "failed") bad = 1 } exit !(t == 9 && !bad) }'
check "the default benchmark's step times" grep -q -E '^  bert-tiny +median step [0-9.]+ ms' "$out/summary.txt"
check "the profile's parser on the sample" grep -q 'kernel time over the profiled launches: 23.62 ms in 3 launches' \
  "$out/runs.log"

if ((torch)); then
  for s in torch-optim torch-bert torch-cnn; do
    grep -q -E "^  $s +ok " <<<"$steps" || fail "torch step $s is not listed ok"
  done
  check "torch's AdamW beside ours" grep -q -E '^adamw-1M .* adamw-fused [0-9.]+ \(x' "$out/summary.txt"
  check "the guarded AdamW beside ours" grep -q -E '^adamw-100M .* adamw-fused-guarded [0-9.]+ \(x' "$out/summary.txt"
  check "the two groups beside the filter" grep -q -E '^adamw-100M\+b-filter .* adamw-fused-groups [0-9.]+ \(x' \
    "$out/summary.txt"
  check "torch's BERT step" grep -q '^  torch eager BERT step' "$out/summary.txt"
  check "torch's cnn step" grep -q -E '"kind": "cnn", .*"spec": "cnn-tiny"' "$out/torch.log"
  if grep -E '^  torch error' "$out/summary.txt"; then fail "torch cases with an error (above)"; fi
else
  echo "note: no python3 with torch here: torch's stages are not checked"
  check "torch skipped with a line" grep -q 'skip   torch (dry run: python3 has no torch)' "$tmp/log"
fi

# the logs in $OUT: at most 8 files, each stage's log in its file
n_out=$(find "$out" -type f | wc -l)
check "at most 8 files in \$OUT ($n_out)" test "$n_out" -le 8
for f in summary.txt env.log build.log tests.log bench.log runs.log torch.log all.tar.gz; do
  check "$f in \$OUT" test -s "$out/$f"
done
check "\$OUT's summary is the one printed" bash -c 'sed -n "/=== optbench gpu-check summary ===/,/^RESULT/p" "$1" |
  sed "1d;\$d" | cmp -s - "$2"' _ "$tmp/log" "$out/summary.txt"
check "bench.log holds each case's log" grep -q '^==== bench-muon-1B.log' "$out/bench.log"
check "runs.log holds the training runs and the default benchmark" \
  bash -c 'grep -q "^==== run-bert-base-muon.log" "$1" && grep -q "^==== default-bench.log" "$1"' _ "$out/runs.log"
check "env.log names the tree" grep -q '^tree: ' "$out/env.log"
check "build.log: the given program" grep -q '^optbench ' "$out/build.log"
check "the archive holds the logs and the databases" \
  bash -c 'tar -tzf "$1" | grep -q "^logs/steps.txt$" && tar -tzf "$1" | grep -q "default.db$"' _ "$out/all.tar.gz"
exit $fail
