#!/usr/bin/env bash
# Prepares .gpudeps/root.tar.gz: the build dependencies of optbench (SQLite, libyaml,
# OpenBLAS, LAPACKE, libcsv and their runtime libraries) unpacked from the
# Debian packages into a relocatable prefix, for a GPU machine whose image has
# CUDA but not these libraries and cannot reach a package mirror.
# scripts/gpu-check.sh uses .gpudeps/root when the system lacks them. Run it
# here (it uses apt-get download, no root needed), then ship .gpudeps with the
# tree (about 18 MB compressed, 52 MB unpacked).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.gpudeps
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
