#!/usr/bin/env bash
# The default benchmark, from a clean clone: installs missing packages, builds,
# runs configs/default.yaml (CUDA when a device is present, else the CPU) into
# results/default.db and writes the report (CSV, gnuplot scripts, PNG plots)
# to results/default-report/. Re-running replaces both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
mkdir -p results
rm -f results/default.db results/default.db-wal results/default.db-shm
rm -rf results/default-report
build/optbench run configs/default.yaml --db results/default.db "$@"
build/optbench report --db results/default.db --out results/default-report
echo "optbench: database results/default.db, report results/default-report/" >&2
