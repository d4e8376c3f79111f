#!/usr/bin/env bash
# Configures and builds optbench into build/ (or $OB_BUILD_DIR). The CUDA
# backend is compiled whenever nvcc is found (OB_CUDA=AUTO), also on machines
# without a GPU; set OB_CUDA=OFF to skip it. OB_JOBS sets the parallel jobs
# (default: every core). Arguments name the targets to build (default: all,
# the tests included); scripts/bench.sh builds only optbench.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${OB_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=${OB_BUILD_TYPE:-RelWithDebInfo} -DOB_CUDA=${OB_CUDA:-AUTO} ${OB_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"${OB_JOBS:-$(nproc)}" ${1:+--target "$@"}
