#!/usr/bin/env bash
# scripts/fresh-debian.sh [--ci] [DIR] - the README's two commands on a fresh
# Debian 12: debootstrap a minimal bookworm into DIR (default
# /var/tmp/optbench-fresh; reused when it is there, so that a second check
# skips the download), clone this repository's HEAD into it and run, as root
# in a chroot, scripts/bench.sh and then scripts/test.sh (with --ci:
# .ci/run instead of both). It finds what a developer's machine hides: a
# package the scripts need but do not install (one another package only
# recommends), a file the host has patched, a library path that only the
# host's ld.so.conf names. Where the host has a CUDA toolkit under
# /usr/local/cuda, it is bound into the chroot as it is (no ld.so.conf entry
# for it: the module must find its libraries itself), so that the CUDA backend
# is compiled there too. Needs root, debootstrap and a Debian mirror.
# Output: DIR/fresh-*.log; exit status that of the last command run.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
ci=0
if [ "${1:-}" = "--ci" ]; then ci=1; shift; fi
dir=${1:-/var/tmp/optbench-fresh}
mirror=${OB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "fresh-debian.sh: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-debian.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }

if [ ! -x "$dir/bin/bash" ]; then
  echo "fresh-debian.sh: debootstrap bookworm into $dir"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
    { tail -20 "$dir.debootstrap.log"; exit 1; }
fi
cp /etc/resolv.conf "$dir/etc/resolv.conf"

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mountpoint -q "$dir/proc" || { mount -t proc proc "$dir/proc"; mounted+=("$dir/proc"); }
for d in sys dev; do
  mountpoint -q "$dir/$d" || { mount --rbind "/$d" "$dir/$d"; mounted+=("$dir/$d"); }
done
if [ -d /usr/local/cuda/bin ]; then
  cuda=$(readlink -f /usr/local/cuda)
  mkdir -p "$dir$cuda"
  mountpoint -q "$dir$cuda" || { mount --bind "$cuda" "$dir$cuda"; mounted+=("$dir$cuda"); }
  [ "$cuda" = /usr/local/cuda ] || ln -sfn "$cuda" "$dir/usr/local/cuda"
fi

rm -rf "$dir/root/optbench"
git clone -q "$src" "$dir/root/optbench"
# the shared conformance cases, where they lie beside the repository
[ -d "$src/../shared" ] && { rm -rf "$dir/root/shared"; cp -r "$src/../shared" "$dir/root/shared"; }

in_chroot() {
  chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb CI="${CI:-}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /root/optbench && $1"
}
step() {
  local name=$1 cmd=$2 start rc=0
  start=$(date +%s)
  echo "fresh-debian.sh: $cmd (log: $dir/fresh-$name.log)"
  in_chroot "$cmd" >"$dir/fresh-$name.log" 2>&1 || rc=$?
  echo "fresh-debian.sh: $cmd: exit $rc in $(( $(date +%s) - start )) s"
  [ $rc -eq 0 ] || { tail -30 "$dir/fresh-$name.log"; exit $rc; }
}
if [ $ci = 1 ]; then
  CI=true step ci "bash .ci/run"
else
  step bench "bash scripts/bench.sh"
  step test "bash scripts/test.sh"
fi
