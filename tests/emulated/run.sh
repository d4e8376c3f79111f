#!/usr/bin/env bash
# tests/emulated/run.sh - the program of a cross build, run under its
# emulator (scripts/cross-aarch64.sh --test; ctest label "emulated"): `list`
# works, a small matrix (quadratic and cnn-tiny x sgd, adamw and muon, 10
# steps) runs to its end with every run done and a finite final loss in the
# database, and `report --no-render` writes its tables (rendering forks
# gnuplot, which qemu 7.2 does not survive: see tests/CMakeLists.txt).
# Environment: OPTBENCH (the program), OB_EMULATOR (the command that runs it).
set -uo pipefail
: "${OPTBENCH:?}" "${OB_EMULATOR:?}"
export OMP_NUM_THREADS=1 # qemu 7.2 hangs in an OpenMP team of two or more threads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ob() { $OB_EMULATOR "$OPTBENCH" "$@"; }

if ! ob list >"$tmp/list" 2>&1 || ! grep -q "^  cnn-tiny - " "$tmp/list"; then
  echo "FAIL: optbench list"; cat "$tmp/list"; fail=1
fi
if ! ob run --workloads quadratic,cnn-tiny --optimizers sgd,adamw,muon --steps 10 \
     --db "$tmp/x.db" >"$tmp/run.log" 2>&1; then
  echo "FAIL: optbench run"; cat "$tmp/run.log"; fail=1
fi
done_runs=$(python3 -c "import math,sqlite3,sys
rows = sqlite3.connect(sys.argv[1]).execute('select status, final_loss from runs').fetchall()
print(sum(s == 'done' and f is not None and math.isfinite(f) for s, f in rows))" "$tmp/x.db")
if [ "$done_runs" != 6 ]; then echo "FAIL: $done_runs of 6 runs done with a finite final loss"; fail=1; fi
if ! ob report --db "$tmp/x.db" --out "$tmp/rep" --no-render >"$tmp/report.log" 2>&1; then
  echo "FAIL: optbench report --no-render"; cat "$tmp/report.log"; fail=1
fi
for f in index.html summary.md summary.csv lr_sweep.csv runs.csv; do
  [ -s "$tmp/rep/$f" ] || { echo "FAIL: the report has no $f"; fail=1; }
done
[ $fail -eq 0 ] && echo "the emulated program ran, recorded and reported a 6-run matrix"
exit $fail
