#!/usr/bin/env bash
# scripts/gpu-check.sh - the GPU check of optbench, one command, under 8 minutes
# on an H200:
#   1. configure and build for sm_90 (CUDA backend on) in a fresh build folder,
#      or use the CUDA build carried in .gpudeps/prebuilt.tar.gz (below);
#   2. ctest -L cuda (every op and 20-step trajectories, CUDA against the CPU),
#      or the carried test_cuda_* programs;
#   3. optbench bench-step for sgd, adamw, lion, muon, root at 1M, 100M and 1B
#      parameters and with 1000 small tensors (soap, adafactor, lamb and lars
#      at 1M and 1000 small tensors, lamb and lars also at 100M; adamw with
#      filter_bias_and_bn over matrices with a bias each); the
#      elementwise ones also with train.on_nonfinite=none (statistics summed
#      inside the update), Muon and ROOT also with Newton-Schulz on TF32 /
#      bf16 tensor cores
#      (OPTBENCH_MATMUL_PRECISION), and Muon at torch.optim.Muon's own
#      precision (muon.ns_dtype=bf16);
#   4. where python3 has torch: torch's AdamW(fused=True), the same behind a
#      non-finite guard like optbench's (found_inf), AdamW(foreach) with
#      1000 tensors, AdamW(fused) over two parameter groups (matrices with
#      the decay, biases without), SGD(fused) and torch.optim.Muon (bf16, and with its
#      Newton-Schulz in fp32) on the same shapes (scripts/bench_torch_gpu.py);
#   5. short bert-base and cnn-base training runs (when those workloads exist)
#      and the same BERT's and cnn's training steps in eager PyTorch; then the
#      default benchmark (configs/default.yaml) on CUDA (OB_GPU_DEFAULT=0 skips);
#   6. where Nsight Compute (ncu) is installed, the kernel times of two
#      bert-base steps, summed per kernel (OB_GPU_PROFILE=0 skips it).
# A summary table goes to stdout; logs go to $OUT (at most 8 files) or, without
# $OUT, to out/gpu-check/. Every step runs under `timeout` inside one global
# deadline (OB_GPU_BUDGET seconds, default 460), so the script ends in time
# even when a step hangs; a step that would start too late is skipped.
#
# Dependencies: when the system lacks SQLite, libyaml, OpenBLAS, LAPACKE or
# libcsv development files, the script unpacks .gpudeps/root.tar.gz (made
# beforehand on a Debian machine by scripts/gpu-deps.sh) and builds against
# it (OB_GPU_FORCE_BUNDLE=1 uses the bundle even when the system has them).
# A machine without those libraries can also run a CUDA build made elsewhere:
# scripts/gpu-deps.sh --prebuilt BUILD_DIR packs it into .gpudeps/prebuilt.tar.gz
# (OB_GPU_FORCE_BUILD=1 builds anyway).
# Exit status 0 only when the build, the cuda tests (run, not skipped),
# every bench-step and every training run that ran, and the summary script
# succeeded; steps the global deadline left no time for are listed apart
# ("skipped for time"), except the build, the device probe and the cuda
# tests, which must run. The logs
# are copied to $OUT after every step, so a run cut off brings back what ran.
#
# OB_GPU_DRYRUN=1: the plumbing alone, on a machine without a GPU, in well
# under a minute on two cores: every step runs as above but on the CPU
# backend (--backend cpu) at cut sizes: counts of 1M and less to 4096, larger
# ones to 65536, at most 8 tensors, shapes over 64x64 to 64x64, bench-step
# 1 iteration, 1 repeat; training runs of 7 steps on bert-tiny and cnn-tiny in
# place of bert-base and cnn-base, the data-parallel ones on two CPU
# replicas; 9 runs of the default benchmark (rosenbrock and bert-tiny, adamw
# and muon, 7 steps, 1 seed);
# scripts/bench_torch_gpu.py on --device cpu at the same cut sizes where
# python3 has torch (any torch). The cuda tests are skipped with a line
# (OB_GPU_DRYRUN_TESTS=1 runs them with OB_TEST_PEER=cpu: test_cuda_ops checks
# the CPU backend against itself, minutes on a CPU); there is no kernel
# profile (Nsight Compute needs a GPU): the profiled run's arguments are
# checked by its --dry-run, and the parser reads a sample log.
# OB_GPU_OPTBENCH=PATH uses that optbench (and the test_cuda_* programs beside
# it or in its tests/ folder) in place of the build, which otherwise runs as on
# a GPU. The summary and the logs in $OUT are made as on a GPU; the times mean
# nothing. tests/cli/gpu_check_dryrun.sh (ctest) runs it on the build's program.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
START=$(date +%s)
BUDGET=${OB_GPU_BUDGET:-460}
DEADLINE=$((START + BUDGET))
WORK=${OB_GPU_WORK:-/tmp/optbench-gpu-check}
BUILD=$WORK/build
LOGS=$WORK/logs
DEST=${OUT:-$ROOT/out/gpu-check}
NPROC=$(nproc 2>/dev/null || echo 8)
ARCH=${OB_CUDA_ARCH:-90}
DRY=0 # OB_GPU_DRYRUN (header): the CPU backend at cut sizes
[ -n "${OB_GPU_DRYRUN:-}" ] && [ "$OB_GPU_DRYRUN" != 0 ] && DRY=1
BACKEND=cuda
if ((DRY)); then
  BACKEND=cpu
  export OB_TEST_PEER=cpu # test_cuda_ops compares the CPU backend with itself
fi
rm -rf "$WORK"
mkdir -p "$BUILD" "$LOGS" "$DEST"
FAILED=()
SKIPPED=() # steps the global deadline left no time for: reported, not failures
# torch runs in the environment it is probed in below, without the library
# folders the carried build or the dependency bundle add to LD_LIBRARY_PATH
PY_ENV=(env -u LD_LIBRARY_PATH)
[ -n "${LD_LIBRARY_PATH+set}" ] && PY_ENV=(env LD_LIBRARY_PATH="$LD_LIBRARY_PATH")
STEPS_FILE=$LOGS/steps.txt
: >"$STEPS_FILE"

say() { printf '[%4ss] %s\n' "$(($(date +%s) - START))" "$*"; }

# copy_logs: the logs so far into $DEST (at most 8 files), after every step:
# when the machine is taken back mid-run, what ran still comes back.
copy_logs() {
  {
    # the steps so far, until the summary (which lists them too) is written
    if [ -f "$LOGS/summary.txt" ]; then cp "$LOGS/summary.txt" "$DEST/summary.txt"
    else { echo "(cut off before the summary: the steps that ran)"; cat "$STEPS_FILE"; } >"$DEST/summary.txt"; fi
    cp "$LOGS/env.log" "$DEST/env.log" 2>/dev/null
    cat "$LOGS"/configure.log "$LOGS"/build.log "$LOGS"/prebuilt.log >"$DEST/build.log" 2>/dev/null
    cat "$LOGS"/ctest-cuda.log "$LOGS"/ctest-cuda-detail.log "$LOGS"/test_cuda_*.log "$LOGS"/gpu-probe.log \
      >"$DEST/tests.log" 2>/dev/null
    for f in "$LOGS"/bench-*.log; do [ -f "$f" ] && { echo "==== $(basename "$f")"; cat "$f"; }; done >"$DEST/bench.log" 2>/dev/null
    for f in "$LOGS"/run-*.log "$LOGS"/default-bench.log "$LOGS"/profile-*.log; do
      [ -f "$f" ] && { echo "==== $(basename "$f")"; cat "$f"; }
    done >"$DEST/runs.log" 2>/dev/null
    { cat "$LOGS"/torch-*.log 2>/dev/null; echo "==== torch.jsonl"; cat "$LOGS/torch.jsonl" 2>/dev/null; } >"$DEST/torch.log"
  } || true
}

# run_step NAME LIMIT_S CMD... : output to $LOGS/NAME.log, bounded by LIMIT_S and
# the global deadline; prints one status line (and the log's tail on failure).
run_step() {
  local name=$1 limit=$2
  shift 2
  local now left t0 rc=0 st
  now=$(date +%s)
  left=$((DEADLINE - now))
  if ((left < 15)); then
    say "SKIP  $name (global time budget spent)"
    echo "$name SKIP 0" >>"$STEPS_FILE"
    case $name in # without the program, the device or the cuda tests nothing was checked
      configure | build | gpu-probe | ctest-cuda | test_cuda_*) FAILED+=("$name(skipped)") ;;
      *) SKIPPED+=("$name") ;;
    esac
    return 3
  fi
  ((limit > left)) && limit=$left
  t0=$(date +%s)
  timeout -k 10 "$limit" "$@" >"$LOGS/$name.log" 2>&1 || rc=$?
  local dt=$(($(date +%s) - t0))
  if ((rc == 0)); then st=ok; elif ((rc == 124 || rc == 137)); then st="TIMEOUT(${limit}s)"; else st="FAIL(rc=$rc)"; fi
  echo "$name $st $dt" >>"$STEPS_FILE"
  say "$(printf '%-6s %-34s %4ss' "${st%%(*}" "$name" "$dt")"
  copy_logs # a run cut off later still brings back what ran
  if ((rc != 0)); then
    FAILED+=("$name")
    echo "---- last lines of $name.log ----"
    tail -n 25 "$LOGS/$name.log" || true
    echo "----"
  fi
  return $rc
}

# ---- the dry run's sizes (OB_GPU_DRYRUN) ----
# dry_count N: a count (4096, 1M, 1G) cut for the CPU: 0 stays 0, 1M and less
# become at most 4096, larger ones 65536
dry_count() {
  local v=$1 n
  case $v in
    *[kK]) n=${v%?}000 ;;
    *[mM]) n=${v%?}000000 ;;
    *[gGbB]) n=${v%?}000000000 ;;
    *) n=$v ;;
  esac
  [[ $n =~ ^[0-9]+$ ]] || n=1000000000 # a count written otherwise ("1.5M"): the large cut
  n=$((10#$n))
  if ((n <= 4096)); then echo "$n"; elif ((n <= 1000000)); then echo 4096; else echo 65536; fi
}
dry_tensors() { if (($1 > 8)); then echo 8; else echo "$1"; fi; }
dry_shape() { # RxC: 64x64 where it holds more than 4096 values
  local r=${1%%[xX]*} c=${1#*[xX]}
  if ((r * c > 4096)); then echo 64x64; else echo "$1"; fi
}
# dry_bench_args ARGS...: bench-step's arguments with the sizes cut and one
# timed iteration (its --iters, --repeats and --warmup dropped), in DARGS
dry_bench_args() {
  DARGS=()
  while (($#)); do
    case $1 in
      --params) DARGS+=(--params "$(dry_count "$2")"); shift 2 ;;
      --tensors) DARGS+=(--tensors "$(dry_tensors "$2")"); shift 2 ;;
      --shape) DARGS+=(--shape "$(dry_shape "$2")"); shift 2 ;;
      --iters | --repeats | --warmup) shift 2 ;;
      *) DARGS+=("$1"); shift ;;
    esac
  done
  DARGS+=(--iters 1 --repeats 1 --warmup 1)
}
# dry_torch_args ARGS...: bench_torch_gpu.py's arguments for the CPU, in DARGS:
# each --case IMPL,PARAMS,TENSORS[,RxC] cut as bench-step's, the bert and cnn
# models at bert-tiny's and cnn-tiny's sizes
dry_torch_args() {
  DARGS=(--device cpu)
  local f
  while (($#)); do
    case $1 in
      --case)
        IFS=, read -r -a f <<<"$2"
        f[1]=$(dry_count "${f[1]}")
        f[2]=$(dry_tensors "${f[2]}")
        ((${#f[@]} > 3)) && f[3]=$(dry_shape "${f[3]}")
        DARGS+=(--case "$(IFS=,; echo "${f[*]}")")
        shift 2 ;;
      --bert) DARGS+=(--bert 8,32,256,2,64,4); shift 2 ;; # B,T,V,L,C,H of bert-tiny (batch cut)
      --cnn) DARGS+=(--cnn cnn-tiny); shift 2 ;;
      *) DARGS+=("$1"); shift ;;
    esac
  done
}

# ---- 0. the machine ----------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname 2>/dev/null || echo unknown), $NPROC cpus"
  echo "tree: $(cd "$ROOT" && (git rev-parse --short HEAD 2>/dev/null || echo 'no git')) $(cd "$ROOT" && (git status --porcelain 2>/dev/null | wc -l) || true) changed files"
  (timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv 2>&1) || echo "nvidia-smi failed"
  (command -v nvcc >/dev/null && nvcc --version | tail -n 2) || (test -x /usr/local/cuda/bin/nvcc && /usr/local/cuda/bin/nvcc --version | tail -n 2) || echo "no nvcc on PATH"
  cmake --version 2>&1 | head -n 1 || true
  (c++ --version 2>&1 || gcc --version 2>&1) | head -n 1 || true
  (timeout 60 python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' 2>&1) || echo "python3/torch: unavailable"
} >"$LOGS/env.log" 2>&1 || true
say "machine: $(grep -m1 -i -E 'h100|h200|nvidia|failed' "$LOGS/env.log" || echo '?')"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

# ---- 1. the program: a carried build, else build here ------------------------------------
# .gpudeps/prebuilt.tar.gz (scripts/gpu-deps.sh --prebuilt BUILD) holds a CUDA
# build made elsewhere with its non-CUDA libraries; it is used when every
# library it loads resolves here (CUDA's from this machine), which saves the
# build's minutes. OB_GPU_FORCE_BUILD=1 builds even then.
OPTBENCH=
TEST_CUDA=()
MODE=none
# prebuilt_ready: unpacks the carried build, completes LD_LIBRARY_PATH with the
# folders that hold the CUDA libraries it needs, and checks that it starts.
prebuilt_ready() {
  [ -z "${OB_GPU_FORCE_BUILD:-}" ] && [ -f "$ROOT/.gpudeps/prebuilt.tar.gz" ] || return 1
  tar -C "$WORK" -xzf "$ROOT/.gpudeps/prebuilt.tar.gz" || return 1
  local P=$WORK/prebuilt so d dirs missing prev='' names want have
  # only a build of these very sources (scripts/source-hash.sh): a fix made
  # after it was packed would otherwise be "checked" by the old binaries
  want=$(sed -n 's/^tree=//p' "$P/MANIFEST")
  have=$(bash "$ROOT/scripts/source-hash.sh" "$ROOT" 2>/dev/null || echo none)
  if [ -z "$want" ] || [ "$want" != "$have" ]; then
    say "prebuilt: built from other sources (tree ${want:-unrecorded}, here $have): building here"
    return 1
  fi
  export LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # One search for all the missing names (the first folder found per name);
  # ldd shows a library's own dependencies (cublasLt under cublas) only once
  # it resolves, so look again while that changes what is missing.
  for _ in 1 2 3; do
    missing=$(ldd "$P"/bin/* 2>/dev/null | awk '/not found/ {print $1}' | sort -u)
    [ -n "$missing" ] && [ "$missing" != "$prev" ] || break
    prev=$missing
    names=()
    for so in $missing; do names+=(-o -name "$so"); done
    dirs=$(timeout 60 find /usr/local /usr/lib /usr/lib64 /opt \( "${names[@]:1}" \) \( -type f -o -type l \) 2>/dev/null |
      awk '{ n = $0; sub(/.*\//, "", n); d = $0; sub(/\/[^\/]*$/, "", d); if (!seen[n]++ && !dd[d]++) print d }')
    [ -n "$dirs" ] || break
    for d in $dirs; do LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d; done
  done
  missing=$(ldd "$P"/bin/* 2>/dev/null | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
  if [ -n "$missing" ]; then
    say "prebuilt: unresolved libraries: $missing"
    return 1
  fi
  "$P/bin/optbench" --version >"$LOGS/prebuilt.log" 2>&1 || { say "prebuilt: does not start: $(head -c 300 "$LOGS/prebuilt.log")"; return 1; }
  {
    cat "$P/MANIFEST"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    ldd "$P/bin/optbench" "$P/bin/optbench-cuda.so"
  } >>"$LOGS/prebuilt.log" 2>&1
  OPTBENCH=$P/bin/optbench
  for f in "$P"/bin/test_cuda_*; do [ -x "$f" ] && TEST_CUDA+=("$f"); done
  return 0
}
BUILD_OK=0
if ((DRY)) && [ -n "${OB_GPU_OPTBENCH:-}" ]; then
  # the dry run on a program built beforehand: its test_cuda_* beside it (a
  # carried build's bin/) or in its tests/ folder (a build folder's)
  if "$OB_GPU_OPTBENCH" --version >"$LOGS/prebuilt.log" 2>&1; then
    BUILD_OK=1
    MODE=given
    OPTBENCH=$OB_GPU_OPTBENCH
    for f in "$(dirname "$OPTBENCH")"/test_cuda_* "$(dirname "$OPTBENCH")"/tests/test_cuda_*; do
      [ -f "$f" ] && [ -x "$f" ] && TEST_CUDA+=("$f")
    done
    say "program: $OPTBENCH (dry run: OB_GPU_OPTBENCH, not built here)"
  else
    say "FAIL   program: OB_GPU_OPTBENCH=$OB_GPU_OPTBENCH does not start: $(head -c 300 "$LOGS/prebuilt.log")"
    FAILED+=("program(OB_GPU_OPTBENCH)")
  fi
elif prebuilt_ready; then
  BUILD_OK=1
  MODE=prebuilt
  say "program: carried build ($(sed -n 's/^source=//p' "$WORK/prebuilt/MANIFEST"), $(sed -n 's/^built=//p' "$WORK/prebuilt/MANIFEST"))"
else
  CMAKE_EXTRA=()
  have_system_deps() {
    command -v pkg-config >/dev/null && pkg-config --exists sqlite3 yaml-0.1 openblas lapacke 2>/dev/null &&
      { [ -f /usr/include/csv.h ] || [ -f /usr/local/include/csv.h ]; }
  }
  if [ -z "${OB_GPU_FORCE_BUNDLE:-}" ] && have_system_deps; then
    say "dependencies: from the system"
  elif [ -f "$ROOT/.gpudeps/root.tar.gz" ]; then
    D=$WORK/deps
    mkdir -p "$D"
    tar -C "$D" -xzf "$ROOT/.gpudeps/root.tar.gz" || say "warning: .gpudeps/root.tar.gz did not unpack; the configure step will fail"
    D=$D/root
    MA=$(sed -n 's/^multiarch=//p' "$ROOT/.gpudeps/MANIFEST" 2>/dev/null || true)
    MA=${MA:-x86_64-linux-gnu}
    L=$D/usr/lib/$MA
    export PKG_CONFIG_LIBDIR=$L/pkgconfig:$D/usr/share/pkgconfig
    export PKG_CONFIG_SYSROOT_DIR=$D
    export CPATH=$D/usr/include${CPATH:+:$CPATH}
    export LIBRARY_PATH=$L:$L/openblas-pthread${LIBRARY_PATH:+:$LIBRARY_PATH}
    export LD_LIBRARY_PATH=$L:$L/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    CMAKE_EXTRA+=(-DCSV_INCLUDE_DIR="$D/usr/include" -DCSV_LIBRARY="$L/libcsv.so"
                  -DCBLAS_INCLUDE_DIR="$D/usr/include/$MA/openblas-pthread")
    command -v pkg-config >/dev/null || say "warning: no pkg-config on this machine; the configure step will fail"
    say "dependencies: unpacked .gpudeps ($(sed -n 2p "$ROOT/.gpudeps/MANIFEST" 2>/dev/null))"
  else
    say "dependencies: MISSING (no system SQLite/libyaml/OpenBLAS/LAPACKE/libcsv and no .gpudeps/root.tar.gz;"
    say "              run scripts/gpu-deps.sh on a Debian machine and ship .gpudeps with the tree)"
  fi
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  if run_step configure 150 cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DOB_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" "${CMAKE_EXTRA[@]}"; then
    # only what this check runs: the program and the cuda tests (not the ~40 unit tests)
    TARGETS=(optbench)
    for f in "$ROOT"/tests/test_cuda_*.c; do [ -f "$f" ] && TARGETS+=("$(basename "$f" .c)"); done
    if run_step build 300 cmake --build "$BUILD" -j "$NPROC" --target "${TARGETS[@]}"; then
      BUILD_OK=1
      MODE=built
      OPTBENCH=$BUILD/optbench
    fi
  fi
fi
# NCCL is loaded at run time by data-parallel runs (and the group_sum test):
# put the folder of a libnccl.so.2 on the path when none is found there.
# (grep reads all of ldconfig's list: with -q it would stop at the match, and
# under pipefail ldconfig's SIGPIPE made the test fail at random. find exits
# non-zero for a missing or unreadable folder or at its timeout, which under
# set -e would end the whole check here: hence || true.)
# Each search gets at most 60 s and a tenth of the time left, so that it
# cannot push the device checks past the budget.
if ((BUILD_OK)) && ! ldconfig -p 2>/dev/null | grep 'libnccl\.so\.2 ' >/dev/null; then
  nccl_t=$(((DEADLINE - $(date +%s)) / 10))
  ((nccl_t > 60)) && nccl_t=60
  ((nccl_t < 1)) && nccl_t=1
  nccl_lib=$(timeout "$nccl_t" find /usr/local /usr/lib /usr/lib64 /opt -name 'libnccl.so.2' \( -type f -o -type l \) 2>/dev/null | head -n 1 || true)
  if [ -z "$nccl_lib" ]; then # the copy in torch's wheel (nvidia-nccl), wherever its environment lives
    d=$(timeout "$nccl_t" "${PY_ENV[@]}" python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null || true)
    [ -n "$d" ] && [ -e "$d/libnccl.so.2" ] && nccl_lib=$d/libnccl.so.2
  fi
  if [ -n "$nccl_lib" ]; then
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$nccl_lib")
    say "NCCL: $nccl_lib"
  else
    say "NCCL: no libnccl.so.2 on this machine (data-parallel checks fail)"
  fi
fi
GPU_OK=0
if ((BUILD_OK)); then
  if run_step gpu-probe 60 "$OPTBENCH" bench-step --optimizer sgd --params 4096 --backend "$BACKEND" --iters 1 \
    --repeats 1 --warmup 0; then
    GPU_OK=1
    say "device: $(sed -n 's/^bench-step: sgd on //p' "$LOGS/gpu-probe.log")"
  else
    say "optbench sees no usable GPU: the benchmark and training steps are skipped ($(tail -n 1 "$LOGS/gpu-probe.log" | cut -c1-300))"
  fi
fi

# ---- 2. the cuda tests -----------------------------------------------------------------------
if ((BUILD_OK && DRY)) && [ "${OB_GPU_DRYRUN_TESTS:-0}" = 0 ]; then
  # test_cuda_ops with OB_TEST_PEER=cpu takes minutes on a CPU
  say "skip   cuda tests (dry run; OB_GPU_DRYRUN_TESTS=1 runs them with OB_TEST_PEER=cpu, minutes on a CPU)"
elif ((BUILD_OK)) && [ "$MODE" = built ]; then
  if run_step ctest-cuda 240 ctest --test-dir "$BUILD" -L cuda --output-on-failure --no-tests=error; then
    if grep -q -E 'Skipped|No tests were found' "$LOGS/ctest-cuda.log"; then
      say "FAIL   ctest-cuda: tests were skipped, so the tests did not see a usable GPU"
      FAILED+=("ctest-cuda(skipped)")
    fi
  fi
  # the test's own output (per-op lines), kept with the logs
  cp "$BUILD/Testing/Temporary/LastTest.log" "$LOGS/ctest-cuda-detail.log" 2>/dev/null || true
elif ((BUILD_OK)); then
  # the carried test programs, run as ctest runs them (exit 77: skipped, a failure here)
  if ((${#TEST_CUDA[@]} == 0)); then
    if [ "$MODE" = given ]; then
      say "FAIL   cuda tests: no test_cuda_* programs beside $OPTBENCH or in its tests/ folder"
    else
      say "FAIL   cuda tests: the carried build has no test_cuda_* programs"
    fi
    FAILED+=("cuda-tests(none carried)")
  fi
  for t in ${TEST_CUDA[@]+"${TEST_CUDA[@]}"}; do
    rc=0
    run_step "$(basename "$t")" 240 env OB_SOURCE_DIR="$ROOT" OMP_NUM_THREADS="$NPROC" "$t" || rc=$?
    ((rc == 77)) && say "FAIL   $(basename "$t"): skipped, so the test did not see a usable GPU"
  done
fi

# the data-parallel sum skips itself where NCCL cannot be loaded; here NCCL is
# part of what is checked (looked for above)
if ((BUILD_OK)) && grep -qs 'group_sum: skipped' "$LOGS/ctest-cuda.log" "$LOGS"/test_cuda_*.log \
  "$BUILD/Testing/Temporary/LastTest.log"; then
  say "FAIL   group_sum: NCCL could not be loaded, so the data-parallel sum was not tested"
  FAILED+=("group_sum(no NCCL)")
fi

# ---- 3. bench-step ---------------------------------------------------------------------------
BENCH=$LOGS/bench-results.txt
: >"$BENCH"
BENCH_ENV=(OPTBENCH_TF32=0)
bench() { # NAME LIMIT ARGS...  (environment for the program: BENCH_ENV)
  local name=$1 limit=$2
  shift 2
  local args=(--backend cuda --repeats 3 --warmup 2 "$@")
  if ((DRY)); then
    dry_bench_args "$@"
    args=(--backend cpu "${DARGS[@]}")
  fi
  if run_step "bench-$name" "$limit" env "${BENCH_ENV[@]}" "$OPTBENCH" bench-step "${args[@]}"; then
    grep '^result:' "$LOGS/bench-$name.log" | sed "s/^result:/result: case=$name/" >>"$BENCH" || true
  fi
  return 0
}
if ((GPU_OK)); then
  for opt in adamw sgd lion; do
    sets=()
    [ "$opt" = sgd ] && sets=(--set momentum=0.9)
    [ "$opt" = adamw ] && sets=(--set weight_decay=0.01)
    bench "$opt-1M" 40 --optimizer "$opt" "${sets[@]}" --params 1M
    bench "$opt-100M" 60 --optimizer "$opt" "${sets[@]}" --params 100M
    bench "$opt-1B" 90 --optimizer "$opt" "${sets[@]}" --params 1G
    bench "$opt-1000x64x64" 40 --optimizer "$opt" "${sets[@]}" --tensors 1000 --shape 64x64
  done
  # no guard (train.on_nonfinite = none, torch.optim's behaviour): the
  # gradient statistics are summed inside the update, one read of the gradient
  for opt in adamw sgd lion; do
    sets=(--set on_nonfinite=none)
    [ "$opt" = sgd ] && sets+=(--set momentum=0.9)
    [ "$opt" = adamw ] && sets+=(--set weight_decay=0.01)
    bench "$opt-100M-noguard" 60 --optimizer "$opt" "${sets[@]}" --params 100M
    bench "$opt-1B-noguard" 90 --optimizer "$opt" "${sets[@]}" --params 1G
    bench "$opt-1000x64x64-noguard" 40 --optimizer "$opt" "${sets[@]}" --tensors 1000 --shape 64x64
  done
  for opt in muon root; do
    bench "$opt-1M" 40 --optimizer "$opt" --shape 1000x1000
    bench "$opt-1000x64x64" 60 --optimizer "$opt" --tensors 1000 --shape 64x64
    bench "$opt-100M" 90 --optimizer "$opt" --tensors 96 --shape 1024x1024
  done
  # the preconditioned optimizers, new since the last run on a GPU (tensor by
  # tensor: launch-bound on small tensors)
  for opt in soap adafactor lamb lars; do
    sets=()
    [ "$opt" = lars ] && sets=(--set momentum=0.9,weight_decay=5e-4) # adapted only with weight decay
    bench "$opt-1M" 40 --optimizer "$opt" "${sets[@]}" --shape 1000x1000
    bench "$opt-1000x64x64" 40 --optimizer "$opt" "${sets[@]}" --tensors 1000 --shape 64x64
  done
  # LAMB's two passes (the update u, then p -= lr r u) against AdamW's one;
  # LARS's norms, then its update, against SGD's one pass
  bench "lamb-100M" 40 --optimizer lamb --params 100M
  bench "lars-100M" 40 --optimizer lars --set momentum=0.9,weight_decay=5e-4 --params 100M
  # filter_bias_and_bn: matrices with a bias each, decayed and undecayed spans
  # in one launch (torch: two parameter groups, adamw-fused-groups)
  for g in "" -noguard; do
    sets=(--set weight_decay=0.01,filter_bias_and_bn=true)
    [ "$g" = -noguard ] && sets+=(--set on_nonfinite=none)
    bench "adamw-1000x64x64+b-filter$g" 40 --optimizer adamw "${sets[@]}" --tensors 1000 --shape 64x64 --biases
    bench "adamw-100M+b-filter$g" 60 --optimizer adamw "${sets[@]}" --params 100M --tensors 100 --biases
  done
  # the same layout without the filter: one range, no span lookups (the spans' own cost)
  bench "adamw-1000x64x64+b" 40 --optimizer adamw --set weight_decay=0.01 --tensors 1000 --shape 64x64 --biases
  # Newton-Schulz products on tensor cores: TF32, and bf16 (torch.optim.Muon's precision)
  BENCH_ENV=(OPTBENCH_MATMUL_PRECISION=high)
  bench "muon-100M-tf32" 60 --optimizer muon --tensors 96 --shape 1024x1024
  BENCH_ENV=(OPTBENCH_MATMUL_PRECISION=medium)
  for opt in muon root; do
    bench "$opt-1M-bf16" 40 --optimizer "$opt" --shape 1000x1000
    bench "$opt-1000x64x64-bf16" 60 --optimizer "$opt" --tensors 1000 --shape 64x64
    bench "$opt-100M-bf16" 60 --optimizer "$opt" --tensors 96 --shape 1024x1024
  done
  # muon.ns_dtype=bf16: torch.optim.Muon's precision itself (bf16 values,
  # products on tensor cores, each result rounded), whatever the run's matmul
  # precision; the summary sets it beside torch.optim.Muon (cases ending -bf16)
  BENCH_ENV=(OPTBENCH_TF32=0)
  bench "muon-1M-ns-bf16" 40 --optimizer muon --set ns_dtype=bf16 --shape 1000x1000
  bench "muon-1000x64x64-ns-bf16" 60 --optimizer muon --set ns_dtype=bf16 --tensors 1000 --shape 64x64
  bench "muon-100M-ns-bf16" 60 --optimizer muon --set ns_dtype=bf16 --tensors 96 --shape 1024x1024
  for opt in muon root; do # the slowest last: 954 matrices of 1024x1024 = 1.0B
    bench "$opt-1B" 120 --optimizer "$opt" --tensors 954 --shape 1024x1024 --warmup 1 --iters 1
  done
fi

# ---- 4. torch's optimizer steps, side by side ------------------------------------------------------
TORCH=$LOGS/torch.jsonl
: >"$TORCH"
HAVE_TORCH=0
# the probe of step 0 (importing torch again would take seconds, unbounded by the deadline)
if grep -q -E '^torch .* True$' "$LOGS/env.log"; then
  HAVE_TORCH=1
elif ((DRY)) && grep -q -E '^torch ' "$LOGS/env.log"; then
  HAVE_TORCH=1 # the dry run times torch on the CPU
elif ((DRY)); then
  say "skip   torch (dry run: python3 has no torch)"
else
  say "skip   torch (python3 with a CUDA torch is not available)"
fi
torch_run() { # NAME MAX_S ARGS... : bench_torch_gpu.py within MAX_S and the deadline
  local name=$1 max=$2 left
  shift 2
  left=$((DEADLINE - $(date +%s) - 15))
  ((left > max)) && left=$max
  if ((left < 25)); then
    say "skip   $name (global time budget spent)"
    return 0
  fi
  if ((DRY)); then
    dry_torch_args "$@"
    set -- "${DARGS[@]}"
  fi
  run_step "$name" "$left" "${PY_ENV[@]}" PYTHONUNBUFFERED=1 python3 "$ROOT/scripts/bench_torch_gpu.py" --out "$LOGS/$name.jsonl" \
    --budget "$((left - 20))" "$@" || true
  cat "$LOGS/$name.jsonl" >>"$TORCH" 2>/dev/null || true
}
if ((HAVE_TORCH)); then
  torch_run torch-optim 150 \
    --case adamw-fused,1M,1 --case adamw-fused,100M,1 --case adamw-foreach,0,1000,64x64 \
    --case adamw-fused,0,1000,64x64 --case sgd-fused,1M,1 --case sgd-fused,100M,1 \
    --case muon,0,1,1000x1000 --case muon,0,1000,64x64 --case muon,0,96,1024x1024 \
    --case muon-fp32,0,1,1000x1000 --case muon-fp32,0,96,1024x1024 --case muon-fp32,0,1000,64x64 \
    --case adamw-fused,1G,1 --case sgd-fused,1G,1 \
    --case adamw-fused-guarded,100M,1 --case adamw-fused-guarded,1G,1 \
    --case adamw-fused-groups,0,1000,64x64 --case adamw-fused-groups,100M,100
fi

# ---- 5. training runs ---------------------------------------------------------------------------
RUNS=$LOGS/runs-results.txt
: >"$RUNS"
train() { # NAME WORKLOAD OPTIMIZER STEPS LIMIT [ARGS...]
  local name=$1 wl=$2 opt=$3 steps=$4 limit=$5 db=$WORK/$1.db
  shift 5
  if ((DRY)); then # the tiny presets; 7 steps, the first 5 untimed (a median step time from 2)
    wl=${wl/%-base/-tiny}
    steps=7
  fi
  if ! grep -q -E "^  $wl( |$)" <<<"$LIST"; then
    say "skip   run-$name (no workload $wl in this build)"
    return 0
  fi
  if run_step "run-$name" "$limit" "$OPTBENCH" run --workloads "$wl" --optimizers "$opt" --steps "$steps" \
    --seeds 1 --backend "$BACKEND" --db "$db" --checkpoint-every 0 --name "gpu-check-$name" "$@"; then
    echo "run: name=$name db=$db" >>"$RUNS"
  fi
  return 0
}
LIST=$( ((BUILD_OK)) && "$OPTBENCH" list 2>/dev/null || true)
if ((GPU_OK)); then
  train bert-base-adamw bert-base adamw 200 90
  # as torch's loop does it: no guard, so no separate gradient-statistics pass
  train bert-base-adamw-noguard bert-base adamw 200 90 --set train.on_nonfinite=none
  train cnn-base-adamw cnn-base adamw 200 90
fi
# the same BERT model in eager PyTorch (sizes of the bert-base preset)
if ((HAVE_TORCH)) && grep -q -E "^  bert-base( |$)" <<<"$LIST"; then
  torch_run torch-bert 60 --bert 32,128,30522,12,768,12
fi
# the same cnn in eager PyTorch (the cnn-base preset; cuDNN autotuned)
if ((HAVE_TORCH)) && grep -q -E "^  cnn-base( |$)" <<<"$LIST"; then
  torch_run torch-cnn 60 --cnn cnn-base
fi
if ((GPU_OK)); then
  train bert-base-muon bert-base muon 200 60
fi
# data parallel over two GPUs (NCCL), where the machine has them: the same
# bert-base run split in two, and bert-tiny on 1 and 2 replicas (their final
# and eval losses, compared in the summary, agree to rounding)
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if ((GPU_OK)) && ((NGPU >= 2 || DRY)); then # the dry run: two replicas on the CPU
  train bert-base-adamw-dp2 bert-base adamw 200 90 --data-parallel 2
  train bert-tiny-dp1 bert-tiny adamw 50 60
  train bert-tiny-dp2 bert-tiny adamw 50 60 --data-parallel 2
elif ((GPU_OK)); then
  say "skip   data-parallel runs ($NGPU GPU visible; they need 2)"
fi

# ---- 5b. the default benchmark on the GPU -----------------------------------------------------
# scripts/bench.sh's matrix (configs/default.yaml: small workloads, where launch
# latency rather than arithmetic sets the step time) through the whole harness
# on CUDA; the summary gives runs per status and the median step per workload.
# OB_GPU_DEFAULT=0 skips it.
DEFAULT_DB=$WORK/default.db
if ((GPU_OK)) && [ "${OB_GPU_DEFAULT:-1}" != 0 ]; then
  # the sweep alone (--confirm-seeds 0): the confirmation runs would add half again to the budget
  # never timed on a GPU: a sweep cut off by its limit (timeout's SIGTERM
  # stops it cleanly, the finished runs stored) is reported with the steps
  # left for time, not as a failure; the summary counts the runs it finished
  rc=0
  DEFAULT_ARGS=(--backend cuda)
  # the dry run: 9 of its runs (rosenbrock and bert-tiny, adamw and muon; muon is excluded on rosenbrock)
  ((DRY)) && DEFAULT_ARGS=(--backend cpu --workloads rosenbrock,bert-tiny --optimizers adamw,muon --steps 7 --seeds 1)
  run_step default-bench 120 "$OPTBENCH" run "$ROOT/configs/default.yaml" "${DEFAULT_ARGS[@]}" --db "$DEFAULT_DB" \
    --checkpoint-every 0 --confirm-seeds 0 || rc=$?
  if ((rc == 124 || rc == 137)); then # 137: the sweep outlived timeout's grace after SIGTERM
    unset 'FAILED[${#FAILED[@]}-1]'
    SKIPPED+=("default-bench(cut at its limit)")
  fi
fi

# ---- 6. where a bert-base step spends its time (Nsight Compute, when present) -------------------
# Kernel durations of two training steps and one held-out batch, one metric
# (gpu__time_duration), the clocks left as they are; the CSV stays in the logs
# archive and the largest kernels are summed into the log. OB_GPU_PROFILE=0 skips it.
# NCU_SUM_PY CSV: the kernel times of Nsight Compute's CSV log, summed per kernel
NCU_SUM_PY=$(
  cat <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    sys.exit("no kernel rows in the Nsight Compute log")
hdr, body = rows[0], rows[1:]
ki, vi, ii = hdr.index("Kernel Name"), hdr.index("Metric Value"), hdr.index("ID")
tot = collections.Counter(); cnt = collections.Counter()
for r in body:
    try:
        ns = float(r[vi].replace(",", ""))
    except ValueError:
        continue
    name = r[ki].split("(")[0][:90]
    tot[name] += ns; cnt[name] += 1
all_ns = sum(tot.values())
print("kernel time over the profiled launches: %.2f ms in %d launches" % (all_ns / 1e6, sum(cnt.values())))
for name, ns in tot.most_common(40):
    print("%9.3f ms %5.1f%% %6d  %s" % (ns / 1e6, 100 * ns / all_ns, cnt[name], name))
PY
)
# the profiled run (less its backend)
PROFILED=(run --workloads bert-base --optimizers adamw --steps 2 --seeds 1 --set bert-base.eval_batches=1
  --db "$WORK/profile.db" --checkpoint-every 0)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1 || true)
if ((DRY && GPU_OK)) && [ "${OB_GPU_PROFILE:-1}" != 0 ]; then
  # no kernels to profile on the CPU: the parser on a log in Nsight Compute's CSV form
  say "skip   profile-bert-base (dry run: no GPU; its run's arguments checked by --dry-run, the parser reads a sample log)"
  if grep -q -E "^  bert-base( |$)" <<<"$LIST"; then
    run_step profile-args 30 "$OPTBENCH" "${PROFILED[@]}" --backend cpu --dry-run || true
  fi
  {
    echo '==PROF== Connected to process 1'
    echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
    echo '"0","1","optbench","127.0.0.1","adamw_kernel(float *, const float *, long)","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,536,000"'
    echo '"1","1","optbench","127.0.0.1","sgemm_128x64_nn","1","7","(128, 1, 1)","(64, 8, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","20480000"'
    echo '"2","1","optbench","127.0.0.1","adamw_kernel(float *, const float *, long)","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,600,000"'
  } >"$LOGS/ncu-sample.csv"
  if run_step profile-sample 30 python3 -c "$NCU_SUM_PY" "$LOGS/ncu-sample.csv" &&
    ! grep -q '^kernel time over the profiled launches: 23.62 ms in 3 launches' "$LOGS/profile-sample.log"; then
    say "FAIL   profile-sample: the parser's total is not the sample's (23.62 ms in 3 launches)"
    FAILED+=("profile-sample(total)")
  fi
elif ((GPU_OK)) && [ "${OB_GPU_PROFILE:-1}" != 0 ] && [ -n "$NCU" ] && grep -q -E "^  bert-base( |$)" <<<"$LIST"; then
  run_step profile-bert-base 150 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
    --print-units base --launch-count 1500 --log-file "$LOGS/ncu-bert-base.csv" \
    "$OPTBENCH" "${PROFILED[@]}" --backend cuda || true
  if [ -s "$LOGS/ncu-bert-base.csv" ] && command -v python3 >/dev/null; then
    python3 -c "$NCU_SUM_PY" "$LOGS/ncu-bert-base.csv" >>"$LOGS/profile-bert-base.log" 2>&1 || true
    tail -n 42 "$LOGS/profile-bert-base.log" || true
  fi
fi

# ---- summary -------------------------------------------------------------------------------------
SUMMARY=$LOGS/summary.txt
if command -v python3 >/dev/null; then
  python3 - "$BENCH" "$TORCH" "$RUNS" "$STEPS_FILE" "$DEFAULT_DB" "$BACKEND" >"$SUMMARY" 2>&1 <<'PY' || { echo "(summary script failed)" >>"$SUMMARY"; FAILED+=("summary"); }
import json, os, statistics, sys
bench_f, torch_f, runs_f, steps_f, default_db, backend = sys.argv[1:7]
if backend != "cuda":
    print("DRY RUN (OB_GPU_DRYRUN): every step on the %s backend at cut sizes; the times mean nothing" % backend)
    print()
try:
    import sqlite3
except ImportError as ex:  # a python without it still prints the bench-step table
    sqlite3 = None
    print("(python3 has no sqlite3 module: %s; the run tables are left out)" % ex)

def kv(line):
    out = {}
    for tok in line.split()[1:]:
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out

ours = [kv(l) for l in open(bench_f) if l.startswith("result:")]
torch = []
for l in open(torch_f):
    try:
        torch.append(json.loads(l))
    except ValueError:
        pass
info = [t for t in torch if t.get("kind") == "info"]
tor = {}
for t in torch:
    if t.get("kind") == "optim":
        tor[(t["impl"], int(t["params"]), int(t["tensors"]), t["shape"])] = t
peer = {"adamw": ["adamw-fused", "adamw-fused-guarded", "adamw-foreach", "adamw-fused-groups"], "sgd": ["sgd-fused"], "muon": ["muon-fp32", "muon"]}

print("optbench bench-step (CUDA, fp32; step = the whole pipeline incl. the gradient-statistics pass;")
print("  'of copy' = minimal traffic / step time / copy bandwidth; 'upd only' = the same without the stats pass)")
cw = max([22] + [len(r.get("case", r["optimizer"])) for r in ours])  # the case column's width
hdr = "%-*s %12s %-14s %10s %9s %9s %9s %8s %8s  %s" % (cw, "case", "params", "shape", "ms/step", "stats ms", "GB/s", "copy GB/s", "of copy", "upd only", "torch (ms, ours/torch time)")
print(hdr)
print("-" * len(hdr))
for r in ours:
    key_p, key_k, key_s = int(r["params"]), int(r["tensors"]), r["shape"]
    cmp = []
    impls = peer.get(r["optimizer"], [])
    if r.get("case", "").endswith("-bf16"):
        impls = [i for i in impls if i == "muon"]  # torch.optim.Muon's own precision is bf16
    for impl in impls:
        t = tor.get((impl, key_p, key_k, key_s))
        if t:
            label = "muon-bf16" if impl == "muon" else impl
            cmp.append("%s %.4f (x%.2f)" % (label, t["ms"], float(r["ms"]) / t["ms"]))
    ms, sms = float(r["ms"]), float(r.get("stats_ms", "nan"))
    upd = float(r["fraction"]) * ms / (ms - sms) if ms > sms else float("nan")
    print("%-*s %12s %-14s %10.4f %9.4f %9.1f %9.1f %8.3f %8.3f  %s" % (
        cw, r.get("case", r["optimizer"]), r["params"], "%sx%s" % (r["tensors"], r["shape"]), ms, sms,
        float(r["gbps"]), float(r["copy_gbps"]), float(r["fraction"]), upd, "; ".join(cmp) or "-"))
if not ours:
    print("(no bench-step results)")

print()
print("training runs (optbench run, CUDA)")
torch_bert = [t for t in torch if t.get("kind") == "bert"]
torch_cnn = [t for t in torch if t.get("kind") == "cnn" and t.get("spec") == "cnn-base"]
losses = {}  # run name -> (final loss, eval loss)
for l in open(runs_f) if sqlite3 else []:
    r = kv(l)
    try:
        db = sqlite3.connect(r["db"])
        cols = [c[1] for c in db.execute("PRAGMA table_info(runs)")]
        for row in db.execute("SELECT workload, optimizer, status, steps_done, step_ms_median, step_ms_p90, "
                              "items_per_sec, final_loss, eval_loss, eval_metric, peak_mem_bytes, %s FROM runs"
                              % ("device_mem_bytes" if "device_mem_bytes" in cols else "NULL")):
            wl, opt, st, steps, med, p90, ips, fl, el, em, peak, drv = row
            losses[r.get("name", "")] = (fl, el)
            extra = ""
            tw = torch_bert if wl == "bert-base" else torch_cnn if wl == "cnn-base" else []
            if tw and med:
                extra = "  torch eager %.2f ms/step -> ours/torch time x%.2f" % (tw[0]["ms"], med / tw[0]["ms"])
            print("  %-24s %-10s %-6s %-8s steps %-4s %8.2f ms/step (p90 %.2f)  %10.0f items/s  loss %.4g  eval %.4g  metric %s  peak %.2f GB (driver %s)%s" % (
                r.get("name", ""), wl, opt, st, steps, med or float("nan"), p90 or float("nan"), ips or 0, fl if fl is not None else float("nan"),
                el if el is not None else float("nan"), "%.4g" % em if em is not None else "-", (peak or 0) / 1e9,
                "%.2f GB" % (drv / 1e9) if drv else "-", extra))
    except Exception as ex:
        print("  %s: cannot read %s: %s" % (r.get("name"), r.get("db"), ex))
dp1, dp2 = losses.get("bert-tiny-dp1"), losses.get("bert-tiny-dp2")
if dp1 and dp2 and None not in dp1 + dp2:
    rel = lambda a, b: abs(a - b) / max(abs(a), 1e-30)  # noqa: E731
    print("  data parallel: bert-tiny on 2 replicas against 1: final loss %.7g vs %.7g (rel %.1e), eval %.7g vs %.7g (rel %.1e)"
          % (dp1[0], dp2[0], rel(dp1[0], dp2[0]), dp1[1], dp2[1], rel(dp1[1], dp2[1])))
if torch_bert:
    tb = torch_bert[0]
    print("  torch eager BERT step (%s, %d params): %.2f ms/step, %.0f tokens/s" % (tb["spec"], tb["params"], tb["ms"], tb["tokens_per_s"]))
if torch_cnn:
    tc = torch_cnn[0]
    print("  torch eager cnn step (%s, %d params): %.2f ms/step, %.0f images/s" % (tc["spec"], tc["params"], tc["ms"], tc["images_per_s"]))
for t in torch:
    if t.get("kind") in ("error", "skipped"):
        print("  torch %s: %s (%s)" % (t["kind"], t.get("case"), t.get("why")))
for t in info:
    print("  torch: %s" % ({k: v for k, v in t.items() if k != "kind"}))

if sqlite3 and os.path.exists(default_db):
    print()
    print("default benchmark (configs/default.yaml, CUDA)")
    try:
        db = sqlite3.connect(default_db)
        by = db.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall()
        print("  runs: " + ", ".join("%d %s" % (n, st) for st, n in by))
        for wl, in db.execute("SELECT DISTINCT workload FROM runs ORDER BY workload").fetchall():
            meds = [m for m, in db.execute("SELECT step_ms_median FROM runs WHERE workload = ? AND step_ms_median "
                                           "IS NOT NULL", (wl,))]
            if meds:
                print("  %-12s median step %.3f ms (min %.3f, max %.3f over %d runs)" % (
                    wl, statistics.median(meds), min(meds), max(meds), len(meds)))
    except Exception as ex:
        print("  cannot read %s: %s" % (default_db, ex))

print()
print("steps")
for l in open(steps_f):
    p = l.split()
    if len(p) >= 3:
        print("  %-34s %-16s %5ss" % (p[0], p[1], p[2]))
PY
else
  { echo "(no python3: raw results)"; cat "$BENCH" "$STEPS_FILE"; } >"$SUMMARY"
fi
echo
echo "==================== optbench gpu-check summary ===================="
cat "$SUMMARY"
TOTAL=$(($(date +%s) - START))
SKIPNOTE=
((${#SKIPPED[@]})) && SKIPNOTE="; skipped for time: ${SKIPPED[*]}"
((DRY)) && SKIPNOTE="$SKIPNOTE; DRY RUN on the CPU, no GPU checked"
if ((${#FAILED[@]})); then
  echo "RESULT: FAILED steps: ${FAILED[*]}${SKIPNOTE}   (total ${TOTAL}s)"
else
  echo "RESULT: all steps that ran passed${SKIPNOTE}   (total ${TOTAL}s)"
fi

# ---- logs: at most 8 files in the destination ---------------------------------------------------
copy_logs
tar -C "$WORK" -czf "$DEST/all.tar.gz" logs $(cd "$WORK" && ls ./*.db 2>/dev/null) 2>/dev/null || true
echo "logs: $DEST"
((${#FAILED[@]} == 0))
