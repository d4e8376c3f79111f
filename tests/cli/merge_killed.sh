#!/usr/bin/env bash
# A merge killed part way (SIGKILL: a machine that dies) leaves no OUT: the
# merged database is written under OUT.merging-PID and takes OUT's name only
# once complete. So OUT is whole or absent, a second merge is not refused,
# and it names the working file the killed one left. A full disk says so
# and leaves nothing behind.
. "$(dirname "$0")/common.bash"
M=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03 --seeds 2 --steps 20000 --backend cpu)
"$OPTBENCH" "${M[@]}" --shard 0/2 --db "$tmp/s0.db" 2>/dev/null || { echo "setup run failed"; exit 1; }
"$OPTBENCH" "${M[@]}" --shard 1/2 --db "$tmp/s1.db" 2>/dev/null || { echo "setup run failed"; exit 1; }
"$OPTBENCH" merge --out "$tmp/ref.db" "$tmp/s0.db" "$tmp/s1.db" 2>/dev/null || { echo "reference merge failed"; exit 1; }
landed=0
for t in 0.02 0.05 0.1 0.15 0.2 0.3 0.4 0.6; do
  rm -f "$tmp"/all.db*
  "$OPTBENCH" merge --out "$tmp/all.db" "$tmp/s0.db" "$tmp/s1.db" 2>/dev/null & pid=$!
  sleep $t
  kill -9 $pid 2>/dev/null && landed=$((landed+1))
  wait $pid 2>/dev/null
  if [ -e "$tmp/all.db" ]; then   # the merge had finished: it must be whole
    python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/all.db" >"$tmp/cmp" || fail "killed at $t s: all.db is incomplete: $(tail -1 "$tmp/cmp")"
    continue
  fi
  "$OPTBENCH" merge --out "$tmp/all.db" "$tmp/s0.db" "$tmp/s1.db" 2>"$tmp/err" || fail "killed at $t s: the next merge failed: $(cat "$tmp/err")"
  python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/all.db" >"$tmp/cmp" || fail "killed at $t s: the next merge differs: $(tail -1 "$tmp/cmp")"
  if compgen -G "$tmp/all.db.merging-*" >/dev/null; then
    grep -q "all.db.merging-$pid' is the working file of a merge" "$tmp/err" || fail "killed at $t s: no note of the working file left: $(cat "$tmp/err")"
    # its -wal (megabytes, once rows were copied) is named with it
    if [ -e "$tmp/all.db.merging-$pid-wal" ]; then
      grep -q "remove it with its -wal and -shm files" "$tmp/err" || fail "killed at $t s: the note leaves out the -wal: $(cat "$tmp/err")"
    fi
  fi
  echo "killed at $t s: no all.db left; the next merge: $(tail -1 "$tmp/err" | cut -c1-80)"
done
# an empty OUT (made by mktemp) is still taken, as before
rm -f "$tmp"/empty.db*; : >"$tmp/empty.db"
"$OPTBENCH" merge --out "$tmp/empty.db" "$tmp/s0.db" "$tmp/s1.db" 2>"$tmp/err" || fail "merge into an empty file: $(cat "$tmp/err")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/empty.db" >"$tmp/cmp" || fail "merge into an empty file differs"
# a full disk (a file size limit) part way: a message that says so, no output left
rm -f "$tmp"/full.db*
( ulimit -f 2000; trap '' XFSZ; exec "$OPTBENCH" merge --out "$tmp/full.db" "$tmp/s0.db" "$tmp/s1.db" ) 2>"$tmp/err"; rc=$?
echo "full disk: exit $rc: $(cat "$tmp/err")"
[ $rc = 1 ] && grep -q "is the disk full" "$tmp/err" || fail "full disk: exit $rc, $(cat "$tmp/err")"
! compgen -G "$tmp/full.db*" >/dev/null || fail "full disk: left $(ls "$tmp"/full.db*)"
echo "$landed kills landed while merging"
# SIGTERM (a job's end) stops the copy: exit 143, no OUT, no working file
# left (a merge that was done by then finishes, exit 0, OUT whole)
for t in 0.15 0.3; do   # after start-up (before the handler, SIGTERM ends it as any program)
  rm -f "$tmp"/all.db*
  "$OPTBENCH" merge --out "$tmp/all.db" "$tmp/s0.db" "$tmp/s1.db" 2>"$tmp/err" & pid=$!
  sleep $t; kill -TERM $pid 2>/dev/null; wait $pid; rc=$?
  if [ $rc = 0 ]; then
    python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/all.db" >"$tmp/cmp" || fail "SIGTERM at $t s, exit 0: all.db differs"
    continue
  fi
  # (a signal before the handler is installed, on a slow start, ends it silently)
  [ $rc = 143 ] && { [ ! -s "$tmp/err" ] || grep -q "stopped by SIGTERM before it finished: nothing was merged" "$tmp/err"; } ||
    fail "SIGTERM at $t s: exit $rc: $(cat "$tmp/err")"
  [ ! -e "$tmp/all.db" ] || fail "SIGTERM at $t s: all.db was left"
  ! compgen -G "$tmp/all.db.merging-*" >/dev/null || fail "SIGTERM at $t s: left $(ls "$tmp"/all.db.merging-*)"
  echo "SIGTERM at $t s: exit $rc, nothing left"
done
[ $landed -ge 3 ] || fail "only $landed kills landed while the merge ran"
# a working file left by another merge whose number starts with this merge's
# pid is named too (the merge execs in place of the shell: its pid is $$)
rm -f "$tmp"/all.db*
OB_BIN=$OPTBENCH OB_TMP=$tmp bash -c 'touch "$OB_TMP/all.db.merging-${$}7"; exec "$OB_BIN" merge --out "$OB_TMP/all.db" "$OB_TMP/s0.db" "$OB_TMP/s1.db"' \
  2>"$tmp/err" || fail "the merge beside a left working file failed: $(cat "$tmp/err")"
grep -q "all.db.merging-[0-9]*7' is the working file of a merge" "$tmp/err" ||
  fail "a left working file whose number starts with the pid is not named: $(cat "$tmp/err")"
echo "$fails failed"
[ $fails -eq 0 ]
