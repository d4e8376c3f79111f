#!/usr/bin/env bash
# scripts/source-hash.sh [DIR] - a hash of the sources a build of optbench is
# made from (C, CUDA, headers, CMake files and the schema; of the tests only
# the CUDA tests and the headers): gpu-deps.sh writes it into a carried
# build's MANIFEST, and gpu-check.sh uses that build only where the tree it
# runs in hashes the same. Needs no git (the GPU machine's copy has none).
set -euo pipefail
cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}"
{
  find kernels core optimizers workloads harness results plots -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.sql' -o -name CMakeLists.txt \)
  find tests -maxdepth 1 -type f \( -name 'test_cuda_*.c' -o -name '*.h' -o -name CMakeLists.txt \)
  echo CMakeLists.txt
} | LC_ALL=C sort | while read -r f; do printf '%s\n' "$f"; cat "$f"; done | sha256sum | cut -c1-16
