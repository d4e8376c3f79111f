#!/usr/bin/env bash
# Static analysis of the library's C code (core, harness, results, plots,
# optimizers, workloads, kernels; not tests/) with cppcheck: its warning,
# portability and performance checks, on the compile commands of a CPU build
# (build-lint/, configured here, not built); and, in every C, CUDA and header
# file, a header included twice. Exits 1 on any finding. The few
# findings that are not defects are suppressed where they occur, each with
# its reason (grep cppcheck-suppress). Installs cppcheck when it is missing.
# About 35 to 45 s on 2 cores; OB_LINT_JOBS sets cppcheck's jobs (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh cppcheck

build=build-lint
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DOB_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
# the library's sources only (and the program's main.c), not the tests
mkdir -p "$build/lint"
python3 - "$build/compile_commands.json" "$build/lint/compile_commands.json" "$PWD" <<'PY'
import json, os, sys
src, dst, root = sys.argv[1:4]
lib = ("core/", "harness/", "results/", "plots/", "optimizers/", "workloads/", "kernels/")
keep = [c for c in json.load(open(src))
        if os.path.relpath(c["file"], root).startswith(lib) and c["file"].endswith(".c")]
json.dump(keep, open(dst, "w"), indent=1)
PY
set +e
cppcheck --project="$build/lint/compile_commands.json" --enable=warning,portability,performance \
  --inline-suppr --error-exitcode=1 -q -j"${OB_LINT_JOBS:-1}" --template=gcc >"$build/lint/findings.txt" 2>&1
rc=$?
set -e
sed 's|^'"$PWD"'/||' "$build/lint/findings.txt"
# a header included twice in one file (harmless behind its guard, but a
# sign of a careless merge): every C, CUDA and header file, tests too
dup=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' | xargs awk '
  FNR == 1 { delete seen }
  /^[ \t]*#[ \t]*include[ \t]/ { k = $0; gsub(/[ \t]+/, " ", k)
    if (k in seen) printf "%s:%d: warning: %s is included twice (first on line %d)\n", FILENAME, FNR, $2 == "include" ? $3 : $2, seen[k]
    else seen[k] = FNR }')
if [ -n "$dup" ]; then echo "$dup"; rc=1; fi
if [ "$rc" -eq 0 ]; then echo "optbench: lint: no findings"; else echo "optbench: lint: findings above" >&2; fi
exit "$rc"
