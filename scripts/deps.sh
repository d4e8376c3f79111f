#!/usr/bin/env bash
# Installs the Debian packages optbench needs to build, test and plot, when
# they are missing. Used by scripts/bench.sh and scripts/test.sh; safe to run
# again (it installs nothing when everything is present). Further package
# names given as arguments are installed the same way (scripts/lint.sh:
# cppcheck).
set -euo pipefail

pkgs=(build-essential cmake pkg-config git python3
      libsqlite3-dev libcsv-dev libyaml-dev libopenblas-dev libopenblas0-openmp liblapacke-dev libdnnl-dev
      ocl-icd-opencl-dev
      gnuplot-nox sqlite3 "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "optbench: installing missing packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "optbench: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
