#!/usr/bin/env bash
# Cross-builds optbench for 64-bit Arm Linux (aarch64) with Debian's cross gcc
# and arm64 libraries, compiler warnings as errors, into build-aarch64/ (the
# CPU backend: the x86 kernels are left out there and the portable loops
# compiled); with --test, then runs the unit tests and the program's own test
# (tests/emulated/run.sh) under qemu-aarch64's user mode (ctest -L
# "unit|emulated"; arguments after --test are ctest's, e.g. -E test_soap_ops).
#
#   scripts/cross-aarch64.sh            # build only
#   scripts/cross-aarch64.sh --test     # build, then the tests emulated
#                                       # (CI leaves out test_soap_ops: 13 min there)
#
# Installs what is missing (gcc-aarch64-linux-gnu, qemu-user with --test, and
# the arm64 -dev packages, after adding arm64 to dpkg's architectures). Where
# they cannot be installed it says so and exits 77 (CI goes on without it).
# Under qemu 7.2 (Debian 12) the tests run on one OpenMP thread, and the
# tests that hang there (OpenMP teams of several threads, a child process
# after fork()) are not run (tests/CMakeLists.txt says which and why).
set -euo pipefail
cd "$(dirname "$0")/.."

test=0
if [ "${1:-}" = "--test" ]; then test=1; shift; fi
jobs="${OB_JOBS:-$(nproc)}"

pkgs=(gcc-aarch64-linux-gnu libc6-dev:arm64 libsqlite3-dev:arm64 libcsv-dev:arm64 libyaml-dev:arm64
      libopenblas-dev:arm64 libopenblas0-openmp:arm64 liblapacke-dev:arm64 libgomp1:arm64)
[ $test -eq 1 ] && pkgs+=(qemu-user)
# scripts/deps.sh installs them (with the packages of the native build),
# once dpkg knows the arm64 architecture
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO dpkg --add-architecture arm64 ||
    { echo "cross-aarch64: could not add the arm64 architecture: the aarch64 build is not checked here" >&2; exit 77; }
fi
if ! bash scripts/deps.sh "${pkgs[@]}"; then
  echo "cross-aarch64: could not install ${pkgs[*]}: the aarch64 build is not checked here" >&2
  exit 77
fi

cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOB_CUDA=OFF -DOB_WERROR=ON ${OB_CMAKE_ARGS:-} >/dev/null
cmake --build build-aarch64 -j "$jobs"
echo "cross-aarch64: build-aarch64/optbench built for aarch64 without a warning"
[ $test -eq 1 ] || exit 0
cd build-aarch64
ctest -L "unit|emulated" -j "$jobs" --output-on-failure "$@"
