#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] [TARGET...] - coverage-guided fuzzing of the
# parsers that read what users hand optbench: the YAML configuration with
# matrix expansion and the flag parsers (config), the checkpoint reader
# (checkpoint), and the numeric-rows reader behind `optbench replay` (rows).
#
# Builds the library with clang, AddressSanitizer, UndefinedBehaviorSanitizer
# and libFuzzer's coverage instrumentation into $OB_FUZZ_BUILD_DIR
# (default build-fuzz), then runs each target for SECONDS (default 60),
# starting from fuzz/seeds/TARGET plus every earlier finding in
# tests/fuzz_regress/TARGET, keeping its corpus in BUILD/corpus/TARGET.
# A crash, sanitizer report, leak or broken invariant stops the target and
# leaves the input as BUILD/crash-TARGET-*; copy it to tests/fuzz_regress/TARGET/
# (test_fuzz_regress replays those in every ctest run). Needs clang with
# libFuzzer (Debian: clang, libclang-rt-dev) and libomp-dev.
# Exit status: 0 nothing found, 1 a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config checkpoint rows)
build=${OB_FUZZ_BUILD_DIR:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz.sh: clang is needed (apt-get install clang libclang-rt-dev libomp-dev)"; exit 2; }
mkdir -p "$build"
if ! { CC=clang cmake -S . -B "$build" -DOB_CUDA=OFF -DOB_DNNL=OFF -DOB_SANITIZE=ON -DBUILD_TESTING=OFF \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" &&
       cmake --build "$build" --target optbench_lib -j"${OB_JOBS:-$(nproc)}"; } >"$build/build.log" 2>&1; then
  tail -30 "$build/build.log"; echo "fuzz.sh: the build failed (log: $build/build.log)"; exit 2
fi
libs=$(pkg-config --libs sqlite3 yaml-0.1 lapacke openblas)
# glibc's vector math library, where the build found it (kernels/cpu/rng_x86.c)
mvec=$(sed -n 's/^MVEC_LIBRARY:FILEPATH=\(.*libmvec.*\)$/\1/p' "$build/CMakeCache.txt")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
found=0
for t in "${targets[@]}"; do
  [ -f "fuzz/fuzz_$t.c" ] || { echo "fuzz.sh: no target '$t' (config, checkpoint, rows)"; exit 2; }
  clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fopenmp \
    -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. "fuzz/fuzz_$t.c" fuzz/targets.c "$build/liboptbench.a" \
    $libs -lcsv $mvec -lm -o "$build/fuzz_$t"
  mkdir -p "$build/corpus/$t" "tests/fuzz_regress/$t"
  echo "fuzz.sh: $t for ${secs}s"
  start=$(date +%s)
  if "$build/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="$build/crash-$t-" "$build/corpus/$t" "fuzz/seeds/$t" "tests/fuzz_regress/$t" \
       >"$build/fuzz_$t.log" 2>&1; then
    echo "fuzz.sh: $t: nothing found in $(( $(date +%s) - start ))s; $(grep -E 'stat::number_of_executed_units' "$build/fuzz_$t.log" | awk '{print $2}') inputs, corpus $(ls "$build/corpus/$t" | wc -l), $(grep -oE 'cov: [0-9]+' "$build/fuzz_$t.log" | tail -1)"
  else
    found=1
    echo "fuzz.sh: $t: FOUND something; see $build/fuzz_$t.log and $build/crash-$t-*"
    grep -E "ERROR|SUMMARY|runtime error" "$build/fuzz_$t.log" | head -5
  fi
done
exit $found
