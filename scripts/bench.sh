#!/usr/bin/env bash
# The default benchmark, from a clean clone: installs missing packages, builds,
# runs configs/default.yaml (CUDA when a device is present, else the CPU) into
# out/default.db and writes the report (CSV, gnuplot scripts, PNG plots)
# to out/default-report/. Re-running replaces both: out/default.db is
# removed first, with whatever was added to it (copy it elsewhere to keep it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh optbench
mkdir -p out
rm -f out/default.db out/default.db-wal out/default.db-shm
rm -rf out/default-report
# (run's progress line needs its standard error on the terminal: not filtered)
build/optbench run configs/default.yaml --db out/default.db "$@"
echo "optbench: bench.sh writes the report itself, into out/default-report/:" >&2
build/optbench report --db out/default.db --out out/default-report
echo "optbench: database out/default.db, report out/default-report/ (open out/default-report/index.html)" >&2
