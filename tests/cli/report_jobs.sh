#!/usr/bin/env bash
# `optbench report --jobs N`: figures rendered by several gnuplot processes at
# once give the same report as one at a time (statuses, summary.md,
# index.html, gnuplot.log in figure order however the processes finish), a
# failing script among them is reported as failed, and a SIGTERM or SIGINT
# while they run ends them all, exits 143 / 130 and leaves the folder as it
# was. A stand-in "gnuplot" first on PATH (no gnuplot needed) writes a
# non-empty NAME.png after a random pause and fails on lr_*.gp when told to.
. "$(dirname "$0")/common.bash"

db="$tmp/a.db"
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.01,0.1 \
  --seeds 2 --steps 40 --eval-every 20 --backend cpu --db "$db" >"$tmp/run.log" 2>&1
check "run finishes (see below)" test -f "$db" || cat "$tmp/run.log"

mkdir -p "$tmp/bin" "$tmp/pids"
cat >"$tmp/bin/gnuplot" <<EOF
#!/usr/bin/env bash
echo "\$\$" >"$tmp/pids/\$1"
case "\${FAKE_GNUPLOT:-}" in
  term) kill -TERM \$PPID; exec sleep 30 ;;
  int) kill -INT \$PPID; exec sleep 30 ;;
  fail) case "\$1" in lr_*) echo "error in \$1" >&2; exit 1 ;; esac ;;
esac
sleep 0.0\$((RANDOM % 10))
echo "drew \$1"
echo png >"\${1%.gp}.png"
EOF
chmod +x "$tmp/bin/gnuplot"
report() { # out dir, args... (one time stamp: reports a minute apart compare equal)
  local out="$1"; shift
  SOURCE_DATE_EPOCH=1700000000 PATH="$tmp/bin:$PATH" "$OPTBENCH" report --db "$db" --out "$out" "$@" >"$tmp/out" 2>"$tmp/err"
}

report "$tmp/r1" --jobs 1; rc=$?
check "report --jobs 1 exits 0 (rc $rc)" test $rc -eq 0
n=$(ls "$tmp/r1"/*.gp | grep -vc style.gp)
check "one log line per figure" test "$(grep -c '^drew ' "$tmp/r1/gnuplot.log")" -eq "$n"
report "$tmp/r4" --jobs 4; rc=$?
check "report --jobs 4 exits 0 (rc $rc)" test $rc -eq 0
report "$tmp/rd"; rc=$?
check "report with the default jobs exits 0 (rc $rc)" test $rc -eq 0
for f in gnuplot.log summary.md index.html .optbench-report; do
  check "--jobs 4 writes the same $f as --jobs 1" cmp -s "$tmp/r1/$f" "$tmp/r4/$f"
  check "the default jobs write the same $f as --jobs 1" cmp -s "$tmp/r1/$f" "$tmp/rd/$f"
done
check "no child's own log published" test -z "$(ls -A "$tmp/r4" | grep '^\.gnuplot')"

# two failing scripts among concurrent ones
FAKE_GNUPLOT=fail report "$tmp/f1" --jobs 1
FAKE_GNUPLOT=fail report "$tmp/f4" --jobs 4; rc=$?
check "a failed figure makes report exit 1 (rc $rc)" test $rc -eq 1
check "says gnuplot failed on 2 figures" grep -q "gnuplot failed on 2 of $n figures" "$tmp/out"
check "the page names the failed script" grep -q 'gnuplot failed on `lr_quadratic.gp`' "$tmp/f4/summary.md"
check "no PNG of a failed figure" test ! -e "$tmp/f4/lr_quadratic.png"
check "the other figures are drawn" test -s "$tmp/f4/loss_quadratic.png"
for f in gnuplot.log summary.md index.html; do
  check "with failures, --jobs 4 writes the same $f as --jobs 1" cmp -s "$tmp/f1/$f" "$tmp/f4/$f"
done
check "gnuplot.log has the errors" test "$(grep -c '^error in lr_' "$tmp/f4/gnuplot.log")" -eq 2

# a stop while gnuplot runs: the earlier report stays as it was. SIGINT only
# where this shell was not started with it ignored (a background job of a
# script is; optbench then keeps ignoring it, as a program should)
stops="term:143:SIGTERM"
if [ $(( 0x$(awk '/^SigIgn:/ {print $2}' /proc/$$/status 2>/dev/null || echo 0) & 2 )) -eq 0 ]; then
  stops="$stops int:130:SIGINT"
else
  echo "note: SIGINT is ignored here: the SIGINT stop is not checked"
fi
for s in $stops; do
  IFS=: read -r how want name <<<"$s"
  rm -f "$tmp/pids"/*
  (cd "$tmp/r1" && ls -A && cat gnuplot.log) >"$tmp/before"
  FAKE_GNUPLOT=$how timeout 25 env PATH="$tmp/bin:$PATH" "$OPTBENCH" report --db "$db" --out "$tmp/r1" --jobs 3 \
    >"$tmp/out" 2>"$tmp/err"; rc=$?
  check "$name while rendering: exit $want (rc $rc)" test $rc -eq "$want"
  check "$name: says it stopped" grep -q "stopped by $name" "$tmp/err"
  (cd "$tmp/r1" && ls -A && cat gnuplot.log) >"$tmp/after"
  check "$name: the folder is as it was, no staging folder left" cmp -s "$tmp/before" "$tmp/after"
  left=0
  for p in "$tmp/pids"/*; do kill -0 "$(cat "$p")" 2>/dev/null && left=1; done
  check "$name: no gnuplot left running" test $left -eq 0
done
exit $fail
