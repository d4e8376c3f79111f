#!/usr/bin/env bash
# scripts/test-sanitize.sh [CTEST ARGS...] - the whole test suite built with
# AddressSanitizer and UndefinedBehaviorSanitizer (-DOB_SANITIZE=ON), CPU
# backend only, in its own build folder ($OB_SAN_BUILD_DIR, default
# build-sanitize). Any sanitizer report fails the test that triggered it
# (UBSan does not recover; ASan aborts; leaks are reported at exit).
# Example: scripts/test-sanitize.sh -L unit    (only the unit tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${OB_SAN_BUILD_DIR:-build-sanitize}
jobs=${OB_JOBS:-$(nproc)}
cmake -S . -B "$build" -DOB_SANITIZE=ON -DOB_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo ${OB_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -f tests/sanitize.supp ]; then export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitize.supp:print_suppressions=0}; fi
cd "$build"
ctest --output-on-failure -j"$jobs" "$@"
