#!/usr/bin/env bash
# Damaged or unusable checkpoints: a checksum mismatch, a truncated file,
# garbage, a checkpoint of another run, a checkpoint newer than the curve
# the database holds. Each is reported and skipped; the run continues from
# the newest usable one (or from the start) and ends bit for bit as the
# uninterrupted run. Also runs two cells at once with --devices on the CPU.
. "$(dirname "$0")/common.bash"
args=(run --workloads quadratic --optimizers sgd,adam --lrs 0.01 --steps 12000 --eval-every 1000
      --checkpoint-every 100 --checkpoint-keep 3 --set sgd.momentum=0.9 --set quadratic.dim=128 --backend cpu)
"$OPTBENCH" "${args[@]}" --db "$tmp/ref.db" 2>/dev/null || { echo "reference run failed"; exit 1; }
db="$tmp/t.db"

# Start (or continue) with two cells at a time and stop both with SIGINT
# once each has written a few checkpoints.
interrupt() {
  "$OPTBENCH" "${args[@]}" --db "$db" --devices 0,1 --resume >/dev/null 2>"$tmp/int.err" &
  local pid=$! seen=0
  for _ in $(seq 1200); do
    [ "$(ls "$db".ckpt/run-1 "$db".ckpt/run-2 2>/dev/null | grep -c 'obck$')" -ge 4 ] && { seen=1; break; }
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
  done
  [ $seen = 1 ] || fail "interrupt: 4 checkpoints of runs 1 and 2 not seen (the process ended first, or 60 s went by)"
  kill -INT $pid; wait $pid; local rc=$?
  [ $rc = 130 ] || fail "interrupt: exit status $rc: $(cat "$tmp/int.err")"
}
newest() { ls "$db.ckpt/run-$1"/ckpt-*.obck | tail -1; }
resume() { # resume WHAT-TO-EXPECT-IN-STDERR
  "$OPTBENCH" "${args[@]}" --db "$db" --resume >/dev/null 2>"$tmp/res.err" || fail "resume failed: $(cat "$tmp/res.err")"
  grep -q -- "$1" "$tmp/res.err" || fail "resume: expected '$1' in: $(cat "$tmp/res.err")"
  grep "skipping" "$tmp/res.err" | sed 's/^/  /'
  python3 "$here/resume_compare.py" "$tmp/ref.db" "$db" >"$tmp/cmp.out" || { fail "results differ"; cat "$tmp/cmp.out"; }
  rm -rf "$db" "$db"-* "$db.ckpt"
}

# 1. the newest checkpoint of each run is damaged: the one before is used
interrupt
echo "interrupted: $(q "$db" "select id, status, steps_done from runs" | tr '\n' ' ')"
for r in 1 2; do
  f=$(newest $r); python3 - "$f" <<'PY'
import sys; p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[len(b) // 2] ^= 0x40; open(p, 'wb').write(b)
PY
done
resume "checksum mismatch"

# 2. every checkpoint truncated, or garbage: the runs start over
interrupt
for f in "$db".ckpt/run-1/ckpt-*.obck; do truncate -s 100 "$f"; done
for f in "$db".ckpt/run-2/ckpt-*.obck; do printf "not a checkpoint at all, just text that is long enough to have a header %.0s" 1 2 >"$f"; done
resume "bad magic"
grep -q "truncated" "$tmp/res.err" || fail "no message about the truncated checkpoints"

# 3. a checkpoint of the other run, placed as the newest: refused by its identity
interrupt
s=$(basename "$(newest 2)"); s=${s#ckpt-}; s=$((10#${s%.obck} + 7))
cp "$(newest 1)" "$(printf '%s.ckpt/run-2/ckpt-%012d.obck' "$db" $s)"
resume "written for another run"

# 4. the database lost the tail of a curve (a power cut with synchronous=NORMAL):
#    a checkpoint past what the curve holds is skipped
interrupt
st=$(q "$db" "select steps_done from runs where id=1")
q "$db" "delete from curves where run_id=1 and step > $((st - 1))" >/dev/null
resume "holds the curve only up to step $((st - 1))"

# 5. a FIFO named as the newest checkpoint of run 1 (it blocked the open,
#    and SIGTERM could not end the wait), and a checkpoint of run 2 with a
#    valid checksum but its optimizer's update count out of range (forged,
#    or a bug): each is skipped, and the runs continue from the ones before
interrupt
f=$(newest 1); rm -f "$f"; mkfifo "$f"
python3 - "$(newest 2)" <<'PY'
import struct, sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
tab = []
for i in range(256):
    c = i
    for _ in range(8): c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    tab.append(c)
def crc32c(data):
    c = 0xffffffff
    for x in data: c = (c >> 8) ^ tab[(c ^ x) & 0xff]
    return c ^ 0xffffffff
n, = struct.unpack_from('<I', b, 12); pos = 32
for _ in range(n):
    nl, = struct.unpack_from('<I', b, pos); name = bytes(b[pos + 4:pos + 4 + nl]).decode(); pos += 4 + nl
    d, = struct.unpack_from('<Q', b, pos); pos += 8
    if name == 'opt.optim.t': struct.pack_into('<q', b, pos, 2**63 - 1)
    pos += d
struct.pack_into('<I', b, len(b) - 8, crc32c(bytes(b[:len(b) - 8])))
open(p, 'wb').write(b)
PY
timeout 300 "$OPTBENCH" "${args[@]}" --db "$db" --resume >/dev/null 2>"$tmp/res.err"; rc=$?
[ $rc = 0 ] || fail "resume past a FIFO and a forged count: exit $rc: $(cat "$tmp/res.err")"
grep -q "skipping checkpoint .*: not a regular file" "$tmp/res.err" || fail "no message about the FIFO: $(cat "$tmp/res.err")"
grep -q "its counters are out of range" "$tmp/res.err" || fail "no message about the count: $(cat "$tmp/res.err")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$db" >"$tmp/cmp.out" || { fail "results differ"; cat "$tmp/cmp.out"; }

echo "$fails failed"
[ $fails -eq 0 ]
