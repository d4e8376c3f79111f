#!/usr/bin/env bash
# The default benchmark, from a clean clone: installs missing packages, builds,
# runs configs/default.yaml (CUDA when a device is present, else the CPU) into
# out/default.db and writes the report (CSV, gnuplot scripts, PNG plots)
# to out/default-report/. Re-running replaces both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
mkdir -p out
rm -f out/default.db out/default.db-wal out/default.db-shm
rm -rf out/default-report
build/optbench run configs/default.yaml --db out/default.db "$@"
build/optbench report --db out/default.db --out out/default-report
echo "optbench: database out/default.db, report out/default-report/" >&2
