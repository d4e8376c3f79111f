#!/usr/bin/env bash
# The README's first example, `optbench run` without --eval-every (one
# held-out evaluation, at the end) and then `optbench report`: the end-of-run
# evaluation is an evals row at the final step, the report exits 0, every
# figure the page shows is a non-empty PNG, and no empty PNG is left. Then a
# database whose evals table is empty (as an older optbench wrote it): the
# held-out figures are not drawn, the page says why, and the report still
# exits 0. --out with a trailing slash gives no double slash in messages.
. "$(dirname "$0")/common.bash"

# every <img src="X.png"> of DIR/index.html is a non-empty file
pngs_of_page_ok() {
  local dir="$1" n=0 f
  for f in $(grep -o 'src="[^"]*\.png"' "$dir/index.html" | sed 's/^src="//; s/"$//'); do
    n=$((n + 1))
    if [ ! -s "$dir/$f" ]; then echo "  $f is missing or empty"; return 1; fi
  done
  [ "$n" -gt 0 ]
}

db="$tmp/results.db"
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
  --seeds 2 --steps 60 --backend cpu --db "$db" >"$tmp/run.log" 2>&1
check "run finishes (see below)" test -f "$db" || cat "$tmp/run.log"

"$OPTBENCH" report --db "$db" --out "$tmp/rep/" >"$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
check "report exits 0 (rc $rc)" test $rc -eq 0
check "no double slash in the messages" test "$(grep -c '//' "$tmp/out")" -eq 0
# the end-of-run evaluation is stored: one evals row at step 60 per run that did not diverge
finished=$(grep -c '^[0-9]*,[0-9]*,"[a-z]*","[a-z]*",[0-9.e-]*,[0-9]*,"done"' "$tmp/rep/runs.csv")
at_end=$(grep -cE '^[0-9]+,"[a-z]+","[a-z]+",[0-9.e-]+,[0-9]+,60,' "$tmp/rep/evals.csv")
check "evals.csv has an end-of-run row per finished run ($at_end of $finished)" \
  test "$at_end" -eq "$finished" -a "$finished" -gt 0
check "evals_best.csv has rows" test "$(wc -l <"$tmp/rep/evals_best.csv")" -gt 1
check "held-out loss figure script written" test -s "$tmp/rep/eval_loss_quadratic.gp"
if command -v gnuplot >/dev/null 2>&1; then
  check "every PNG the page shows is non-empty" pngs_of_page_ok "$tmp/rep"
  check "no empty PNG in the folder" test -z "$(find "$tmp/rep" -name '*.png' -size 0)"
  check "page shows the held-out loss" grep -q 'src="eval_loss_quadratic.png"' "$tmp/rep/index.html"
  check "page has no 'Not rendered'" test "$(grep -c 'Not rendered' "$tmp/rep/index.html")" -eq 0
else
  echo "gnuplot not installed: rendering not checked"
fi

# a database without evals rows (as written before they held the end-of-run evaluation)
if command -v sqlite3 >/dev/null 2>&1; then
  cp "$db" "$tmp/old.db"
  sqlite3 "$tmp/old.db" 'DELETE FROM evals;'
  "$OPTBENCH" report --db "$tmp/old.db" --out "$tmp/old" >"$tmp/out" 2>&1; rc=$?
  cat "$tmp/out"
  check "report without evals rows exits 0 (rc $rc)" test $rc -eq 0
  check "says figures were not drawn" grep -q 'not drawn (index.html says why)' "$tmp/out"
  check "no held-out script without data" test ! -e "$tmp/old/eval_loss_quadratic.gp"
  check "page says why" grep -q 'Held-out loss:</b> Not drawn' "$tmp/old/index.html"
  check "page asks for no gnuplot rerun of it" test "$(grep -c 'gnuplot eval_loss' "$tmp/old/summary.md")" -eq 0
  if command -v gnuplot >/dev/null 2>&1; then
    check "every PNG the page shows is non-empty (old db)" pngs_of_page_ok "$tmp/old"
    check "no empty PNG in the folder (old db)" test -z "$(find "$tmp/old" -name '*.png' -size 0)"
  fi
else
  echo "sqlite3 not installed: the database without evals rows is not checked"
fi

exit $fail
