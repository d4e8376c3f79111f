#!/usr/bin/env bash
# The test suite, from a clean clone: installs missing packages, builds (the
# CUDA backend too when nvcc is present) and runs every ctest test. Tests that
# need a GPU report "skipped" on machines without one. OB_JOBS sets the
# parallel jobs of the build and the tests (default: every core).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
cd "${OB_BUILD_DIR:-build}"
ctest --output-on-failure -j"${OB_JOBS:-$(nproc)}" "$@"
