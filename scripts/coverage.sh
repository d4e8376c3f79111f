#!/usr/bin/env bash
# scripts/coverage.sh [BUILD_DIR] - line coverage of the library by the test
# suite: builds the CPU backend with gcc's --coverage (-O1) into BUILD_DIR
# (default build-coverage), runs ctest there, and prints lcov's summary and
# the library's files from the least covered up (BUILD_DIR/coverage.info
# holds the data; `genhtml BUILD_DIR/coverage.info -o DIR` draws pages).
# Counts the library's own objects (liboptbench): code that only the tests'
# binaries compile in (the inline rules of optimizers/rules.h, say) is
# covered there and not counted. cli_history leaves out its out-of-memory
# check (OB_COVERAGE=1: it fails allocations near a run's end, where gcov's
# own dump at exit allocates and cannot survive that), and
# cli_resume_db_faults is left out: it runs optbench as an unprivileged user,
# which cannot write the .gcda files and says so on stderr, which the test
# reads.
# Needs lcov (Debian: lcov). Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh lcov
build=${1:-build-coverage}
jobs=${OB_JOBS:-$(nproc)}
mkdir -p "$build"
cmake -S . -B "$build" -DOB_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-O1 --coverage" \
  -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage >"$build/cmake.log" 2>&1 ||
  { tail -20 "$build/cmake.log"; exit 2; }
cmake --build "$build" -j"$jobs" >"$build/build.log" 2>&1 || { tail -30 "$build/build.log"; exit 2; }
find "$build" -name '*.gcda' -delete
rc=0
(cd "$build" && OB_COVERAGE=1 ctest -j"$jobs" -E '^cli_resume_db_faults$') || rc=$?
lcov -q --capture --directory "$build/CMakeFiles/optbench_lib.dir" --output-file "$build/coverage.info" 2>/dev/null
lcov --summary "$build/coverage.info" 2>&1 | grep -E 'lines|functions' || true
echo "the least covered files (lines, then functions):"
lcov -q --list "$build/coverage.info" 2>/dev/null | awk -F'|' 'NR > 3 && $2 ~ /%/' | sort -t'|' -k2 -n |
  head -15 | sed "s|$(pwd)/||" || true
exit $rc
