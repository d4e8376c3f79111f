#!/usr/bin/env bash
# Prepares .gpudeps/root.tar.gz: the build dependencies of optbench (SQLite, libyaml,
# OpenBLAS, LAPACKE, libcsv and their runtime libraries) unpacked from the
# Debian packages into a relocatable prefix, for a GPU machine whose image has
# CUDA but not these libraries and cannot reach a package mirror.
# scripts/gpu-check.sh uses .gpudeps/root when the system lacks them. Run it
# here (it uses apt-get download, no root needed), then ship .gpudeps with the
# tree (about 18 MB compressed, 52 MB unpacked).
#
#   scripts/gpu-deps.sh [--prebuilt BUILD_DIR]
#
# --prebuilt BUILD_DIR also packs a CUDA build made here (cmake -DOB_CUDA=ON
# -DCMAKE_CUDA_ARCHITECTURES=90 -DOB_DNNL=OFF; oneDNN would add 11 MB for a
# CPU path the GPU run does not time) into .gpudeps/prebuilt.tar.gz: the optbench
# program, its CUDA backend module (optbench-cuda.so), the test_cuda_*
# programs and the shared libraries they load that
# are neither the C/C++ runtime nor CUDA's own (those come from the GPU
# machine). scripts/gpu-check.sh runs it when every library resolves there,
# which saves the build's minutes of a short device lease; otherwise it builds.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.gpudeps
prebuilt=
if [ "${1:-}" = --prebuilt ]; then
  prebuilt=${2:?--prebuilt needs the build folder}
  [ -x "$prebuilt/optbench" ] || { echo "gpu-deps: no $prebuilt/optbench (build with -DOB_CUDA=ON first)" >&2; exit 2; }
  grep -q '^OB_CUDA:STRING=ON' "$prebuilt/CMakeCache.txt" 2>/dev/null ||
    { echo "gpu-deps: $prebuilt was not configured with -DOB_CUDA=ON" >&2; exit 2; }
  # What would spend the GPU run on the wrong program: another build type, no
  # sm_90 code for the H200, no cuda tests, or sources changed since the build.
  grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$prebuilt/CMakeCache.txt" ||
    { echo "gpu-deps: $prebuilt is not a Release build (-DCMAKE_BUILD_TYPE=Release)" >&2; exit 2; }
  archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$prebuilt/CMakeCache.txt")
  if [ -n "$archs" ] && ! tr ';' '\n' <<<"$archs" | grep -q -E '^(90a?(-real)?|all|all-major)$'; then
    echo "gpu-deps: $prebuilt has no sm_90 code (CMAKE_CUDA_ARCHITECTURES=$archs; the H200 needs 90)" >&2
    exit 2
  fi
  oldest=$prebuilt/optbench
  ntests=0
  for t in "$prebuilt"/tests/test_cuda_*; do
    if [ -x "$t" ]; then
      ntests=$((ntests + 1))
      if [ "$t" -ot "$oldest" ]; then oldest=$t; fi
    fi
  done
  ((ntests > 0)) ||
    { echo "gpu-deps: no $prebuilt/tests/test_cuda_* (build them too: cmake --build $prebuilt --target optbench test_cuda_ops)" >&2; exit 2; }
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$prebuilt/CMakeCache.txt")
  pb_abs=$(cd "$prebuilt" && pwd)
  stale=$(find "$src" \( -path "$src/.git" -o -path "$src/.gpudeps" -o -path "$src/build*" -o -path "$src/fuzz" \
            -o -path "$pb_abs" \) -prune -o -path "$src/tests/*" ! -name 'test_cuda_*' ! -name '*.h' -o \
            -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name CMakeLists.txt \) \
            -newer "$oldest" -print)
  if [ -n "$stale" ]; then
    echo "gpu-deps: $prebuilt is older than its sources; rebuild it first (cmake --build $prebuilt). Newer:" >&2
    sed -n 1,5p <<<"$stale" >&2
    exit 2
  fi
fi
pkgs=(libsqlite3-dev libsqlite3-0 libyaml-dev libyaml-0-2 libcsv-dev libcsv3
      libopenblas-pthread-dev libopenblas0-pthread liblapacke-dev liblapacke libtmglib3
      libgfortran5 libquadmath0)
arch=$(dpkg --print-architecture)
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "${pkgs[@]/%/:$arch}" >/dev/null)
rm -rf "$dest"
mkdir -p "$dest" "$tmp/root"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
root="$tmp/root"
lib="$root/usr/lib/$multi"
# What the build never reads: documentation and static archives.
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian"
find "$root" -name '*.a' -delete
# The update-alternatives links the packages' scripts would have made.
mkdir -p "$lib/pkgconfig"
cp "$lib/openblas-pthread/pkgconfig/openblas.pc" "$lib/pkgconfig/openblas.pc"
cp "$lib/openblas-pthread/pkgconfig/lapack-openblas.pc" "$lib/pkgconfig/lapack.pc"
cp "$lib/openblas-pthread/pkgconfig/blas-openblas.pc" "$lib/pkgconfig/blas.pc"
for so in libblas.so.3 liblapack.so.3; do ln -sf "openblas-pthread/$so" "$lib/$so"; done
{
  echo "multiarch=$multi"
  echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  for deb in "$tmp"/*.deb; do basename "$deb"; done
} >"$dest/MANIFEST"
tar -C "$tmp" -czf "$dest/root.tar.gz" root
echo "gpu-deps: $(du -h "$dest/root.tar.gz" | cut -f1) in $dest/root.tar.gz"

if [ -n "$prebuilt" ]; then
  pb="$tmp/prebuilt"
  mkdir -p "$pb/bin" "$pb/lib"
  [ -f "$prebuilt/optbench-cuda.so" ] ||
    { echo "gpu-deps: no $prebuilt/optbench-cuda.so, the CUDA backend (build the optbench target)" >&2; exit 2; }
  # the CUDA backend module goes beside the programs, where they look for it
  progs=("$prebuilt/optbench" "$prebuilt/optbench-cuda.so")
  for t in "$prebuilt"/tests/test_cuda_*; do [ -x "$t" ] && progs+=("$t"); done
  cp "${progs[@]}" "$pb/bin/"
  # The loaded libraries, less the C/C++ runtime and CUDA's (the GPU machine's
  # own driver-matched copies are used there).
  ldd "${progs[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
      case "$name" in
        libc.so*|libm.so*|libmvec.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
        libcu*|libnv*|libnccl*) ;;
        *) cp -L "$path" "$pb/lib/$name" ;;
      esac
    done
  {
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$prebuilt/CMakeCache.txt")
    echo "source=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo '+changes')"
    # what gpu-check.sh compares with the tree it runs in (scripts/source-hash.sh)
    echo "tree=$(bash "$(dirname "${BASH_SOURCE[0]}")/source-hash.sh" "$src")"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
    grep -E '^(CMAKE_BUILD_TYPE|CMAKE_CUDA_ARCHITECTURES|OB_CUDA):' "$prebuilt/CMakeCache.txt"
    (cd "$pb" && ls bin lib)
  } >"$pb/MANIFEST"
  tar -C "$tmp" -czf "$dest/prebuilt.tar.gz" prebuilt
  echo "gpu-deps: $(du -h "$dest/prebuilt.tar.gz" | cut -f1) in $dest/prebuilt.tar.gz (from $prebuilt)"
fi
