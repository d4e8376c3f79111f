#!/usr/bin/env bash
# `optbench history` keeps different problems apart: a night run with another
# workload parameter (--set quadratic.noise=2) or other hyperparameters
# (--set adam.beta2=0.95) starts its own series (labelled as the report labels
# it, and explained in a note) instead of showing as a jump in one line; tick
# labels tell benchmarks of one day apart (time, benchmark id); the plot's
# colours are the report's, one per optimizer configuration. The header and
# the plot title say which way the metric improves, where it has a direction.
. "$(dirname "$0")/common.bash"
db="$tmp/h.db"
run() { # optimizers, more args...
  local opts=$1; shift
  "$OPTBENCH" run --workloads quadratic --optimizers "$opts" --lrs 0.01,0.1 --seeds 2 --steps 40 \
    --backend cpu --db "$db" "$@" >>"$tmp/run.log" 2>&1 || { echo "FAIL: run $*"; cat "$tmp/run.log"; exit 1; }
  # as if on a quiet machine, whatever runs beside this test (the busy
  # machine's mark is tested on planted shares below)
  q "$db" "update runs set other_cpu = null" >/dev/null
}
run sgd,adam
run sgd,adam --set quadratic.noise=2
run sgd,adam
"$OPTBENCH" history --db "$db" --out "$tmp/h" >"$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
check "history exits 0 (rc $rc)" test $rc -eq 0
hdr=$(grep '^bench ' "$tmp/out")
check "a series per workload parameter set" grep -q 'quadratic noise=2 adam' <<<"$hdr"
check "the default set is labelled too" grep -qE 'quadratic noise=[0-9.e-]+ adam' <<<"$(sed 's/quadratic noise=2 adam//' <<<"$hdr")"
check "4 series (2 problems x 2 optimizers)" test "$(head -1 "$tmp/h/history.csv" | tr ',' '\n' | grep -c 'quadratic noise=')" -eq 4
# benchmark 2 has values only in the noise=2 series, 1 and 3 only in the others
python3 - "$tmp/h/history.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[0], rows[1:]
n2 = [i for i, h in enumerate(hdr) if h.startswith("quadratic noise=2 ")]
other = [i for i, h in enumerate(hdr) if h.startswith("quadratic noise=") and i not in n2]
assert len(n2) == 2 and len(other) == 2, hdr
for r in data:
    mine, theirs = (n2, other) if r[0] == "2" else (other, n2)
    assert all(r[i] != "" for i in mine) and all(r[i] == "" for i in theirs), ("mixed series", r)
# tick labels: one per benchmark, all different although the dates are the same
labels = [r[3] for r in data]
assert len(set(labels)) == len(labels), ("tick labels repeat", labels)
assert all("#" + r[0] in r[3] for r in data), labels
PY
check "a note explains the split" grep -q "^note: quadratic ran with different workload parameters" "$tmp/out"
check "ticks: date, time, id and revision" grep -qF 'tick(i, d, r) = d[1:16] . "\n#" . i . " " . r[1:8]' "$tmp/h/history.gp"

# another optimizer configuration: its own series, and the report's colours
run adam --set adam.beta2=0.95
"$OPTBENCH" history --db "$db" --out "$tmp/h2" >"$tmp/out" 2>&1; rc=$?
check "history exits 0 (rc $rc)" test $rc -eq 0
check "a note on the hyperparameters" grep -q "^note: adam ran with different hyperparameters" "$tmp/out"
check "beta2=0.95 is its own series" grep -q 'adam beta2=0.95' <<<"$(grep '^bench ' "$tmp/out")"
"$OPTBENCH" report --db "$db" --out "$tmp/rep" --no-render >/dev/null 2>&1
check "report written" test -s "$tmp/rep/style.gp"
python3 - "$tmp/rep/style.gp" "$tmp/h2/history.gp" "$tmp/h2/history.csv" <<'PY' || fail=1
import csv, re, sys
style = {}
for line in open(sys.argv[1]):
    m = re.match(r'set linetype \d+ lc rgb "(#[0-9a-f]{6})".*#\s*(.+?)\s*$', line)
    if m:
        style[m.group(2)] = m.group(1)
assert len(style) == 3, style   # adam beta2=0.95, adam beta2=0.999, sgd
hdr = next(csv.reader(open(sys.argv[3])))
seen = 0
for m in re.finditer(r'lc rgb "(#[0-9a-f]{6})".*?columnheader\((\d+)\)', open(sys.argv[2]).read()):
    label = hdr[int(m.group(2)) - 1]
    opt = [o for o in style if label.endswith(" " + o)]
    assert len(opt) == 1, (label, style)
    assert style[opt[0]] == m.group(1), (label, m.group(1), "report:", style[opt[0]])
    seen += 1
assert seen == len(hdr) - 4, (seen, hdr)
PY
if command -v gnuplot >/dev/null 2>&1; then check "history.png rendered" test -s "$tmp/h2/history.png"; fi

# one series asked for by its workload name keeps both parameter sets
"$OPTBENCH" history --db "$db" --workload quadratic --optimizer sgd >"$tmp/out" 2>&1
check "--workload by name: both sets" test "$(grep '^bench ' "$tmp/out" | grep -o 'quadratic noise=' | wc -l)" -eq 2
# no runs match: the message names the filter that matched nothing and lists
# what there is of that kind; of two that each match, the optimizers run on
# the workload; an empty filter is bad input
nomatch() { # description, pattern, args...
  local what=$1 pat=$2; shift 2
  "$OPTBENCH" history --db "$db" "$@" >"$tmp/out" 2>&1; local rc=$?
  check "$what: exit 2 (rc $rc)" test $rc -eq 2
  check "$what: said: $(cat "$tmp/out")" grep -qF -- "$pat" "$tmp/out"
}
nomatch "an unknown workload with a known optimizer" \
  "history: no runs match: the database has no workload 'nosuch' (--workload; a name or a label); its workloads: 'quadratic noise=0.01', 'quadratic noise=2'" \
  --workload nosuch --optimizer sgd
nomatch "a known workload with an unknown optimizer" \
  "history: no runs match: the database has no optimizer 'nosuch' (--optimizer; a name or a label); its optimizers: 'adam beta2=0.95', 'adam beta2=0.999', 'sgd'" \
  --workload quadratic --optimizer nosuch
nomatch "both unknown" "no workload 'w0' (--workload) and no optimizer 'o0' (--optimizer); its workloads: 'quadratic noise=0.01', 'quadratic noise=2'; its optimizers: 'adam beta2=0.95', " \
  --workload w0 --optimizer o0
nomatch "both known, never together" \
  "history: no runs match: no run of workload 'quadratic noise=2' is of optimizer 'adam beta2=0.95'; the optimizers run on 'quadratic noise=2': 'adam beta2=0.999', 'sgd'" \
  --workload "quadratic noise=2" --optimizer "adam beta2=0.95"
nomatch "--workload ''" "history: --workload is empty: give a workload name or label (e.g. --workload quadratic)" --workload ""
nomatch "--optimizer ''" "history: --optimizer is empty: give an optimizer name or label" --optimizer ""
nomatch "--out ''" "history: --out is empty: give the folder for its files" --out ""
# report's --out and compare's reports alike (an unset shell variable)
"$OPTBENCH" report --db "$db" --out "" >"$tmp/out" 2>&1; rc=$?
check "report --out '': exit 2 (rc $rc)" test $rc -eq 2
check "report --out '': said: $(cat "$tmp/out")" grep -qF "report: --out is empty: give the report's folder" "$tmp/out"
"$OPTBENCH" compare --baseline "$db" --candidate "$db" --junit "" >"$tmp/out" 2>&1; rc=$?
check "compare --junit '': exit 2 (rc $rc)" test $rc -eq 2
check "compare --junit '': said once: $(cat "$tmp/out")" test "$(grep -c -- "--junit is empty: give the path of a file" "$tmp/out")" = 1
# the list ends in ", ..." only where labels were left out: two of 470
# characters fit the message's 1 KiB, three do not
cp "$db" "$tmp/longopt3.db"
q "$tmp/longopt3.db" "update runs set optimizer = substr(replace(hex(zeroblob(470)), '0', substr(optimizer, 1, 1)), 1, 470)" >/dev/null
"$OPTBENCH" history --db "$tmp/longopt3.db" --optimizer nosuch >"$tmp/out" 2>&1
check "three long optimizer labels: two shown, then ', ...'" grep -qE "its optimizers: 'a{470} beta2=0.95', 'a{470} beta2=0.999', \.\.\.$" "$tmp/out"
# two labels of 507 and 508 characters quoted fit the 1 KiB whole, but not
# with room kept for ", ..." after the last: both shown, and no ", ..."
cp "$db" "$tmp/longopt2.db"
q "$tmp/longopt2.db" "delete from runs where optimizer <> 'adam'" >/dev/null
q "$tmp/longopt2.db" "update runs set optimizer = substr(replace(hex(zeroblob(496)), '0', 'a'), 1, 496)" >/dev/null
"$OPTBENCH" history --db "$tmp/longopt2.db" --optimizer nosuch >"$tmp/out" 2>&1
check "two long labels that just fit: both shown, no ', ...'" grep -qE "its optimizers: 'a{496} beta2=0.95', 'a{496} beta2=0.999'$" "$tmp/out"

# the direction a metric improves in, where it has one: the best lr has none;
# the held-out metric is higher-is-better where it is an accuracy
hist() { # args...
  "$OPTBENCH" history --db "$db" "$@" >"$tmp/out" 2>&1 || { echo "FAIL: history $*"; cat "$tmp/out"; fail=1; }
}
hist --out "$tmp/d1" --metric best_lr
check "best_lr: no direction: $(head -1 "$tmp/out")" test "$(grep -c 'is better' "$tmp/out" "$tmp/d1/history.gp" | grep -vc ':0$')" = 0
hist --out "$tmp/d2" --metric final_loss
check "final_loss: lower is better" grep -q '^median final training loss at the best lr over .* (lower is better)$' "$tmp/out"
check "final_loss: in the plot title" grep -q '^set title ".* (lower is better)"$' "$tmp/d2/history.gp"
hist --metric step_ms_mean
check "step_ms_mean: a value per benchmark: $(sed -n 3p "$tmp/out")" \
  grep -Eq '^1 +[0-9-]+ [0-9:]+ +[^ ]+ .* [0-9]+\.[0-9]+( |$)' "$tmp/out"
# a night whose timed runs of a series all met a busy machine: its step
# times marked '*', with a note; the loss is not; history.csv keeps the
# numbers. One busy run of night 1's adam (of its four: 1000, 1, 2 and 3
# ms) is left out of its step time, unmarked: the night's value is 2 ms,
# the median of the other three (not 2.5, the median of all four)
cp "$db" "$tmp/busy.db"
q "$tmp/busy.db" "update runs set other_cpu = 0.6 where benchmark_id = 3 and optimizer = 'adam'" >/dev/null
q "$tmp/busy.db" "update runs set step_ms_median = 1 + (id - (select min(id) from runs r
  where r.benchmark_id = 1 and r.optimizer = 'adam')) where benchmark_id = 1 and optimizer = 'adam'" >/dev/null
q "$tmp/busy.db" "update runs set other_cpu = 0.6, step_ms_median = 1000 where id = (select max(id) from runs
  where benchmark_id = 1 and optimizer = 'adam')" >/dev/null
"$OPTBENCH" history --db "$tmp/busy.db" --metric step_ms --out "$tmp/busy" >"$tmp/out" 2>&1 || fail=1
check "busy: benchmark 3's adam step time marked: $(grep '^3 ' "$tmp/out")" \
  grep -Eq '^3 +.* [0-9.e-]+\* +[0-9.e-]+ +[0-9.e-]+ +[0-9.e-]+ $' "$tmp/out"
check "busy: the others not: $(grep '^1 ' "$tmp/out")" test "$(grep -E '^[12] ' "$tmp/out" | grep -c '\*')" = 0
check "busy: the note" grep -q '^note: \* marks a benchmark whose timed runs of that series all met a busy machine' "$tmp/out"
check "busy: night 1's adam from its quiet runs, 2 ms, unmarked: $(grep '^1 ' "$tmp/out")" \
  grep -Eq '^1 .* 2 +[0-9.e-]+ +- +- $' "$tmp/out"
check "busy: history.csv has numbers only" test "$(grep -c '\*' "$tmp/busy/history.csv")" = 0
# the figure marks the same value (night 3, the plot's third row: x = 2)
# with a '*' above it, and its title says what the mark means
check "busy: the figure's one mark: $(grep 'set label "\*"' "$tmp/busy/history.gp")" \
  test "$(grep -c '^set label "\*" at first 2, first [0-9.e-]* offset 0,0.8 center front tc rgb "#' "$tmp/busy/history.gp")" = 1
check "busy: the figure's title says what it means" grep -q "^set title .*\\\\n\*: that night's timed runs of the series all met a busy machine\"" "$tmp/busy/history.gp"
"$OPTBENCH" history --db "$tmp/busy.db" >"$tmp/out" 2>&1 || fail=1
check "busy: the final loss is not marked" test "$(grep -c '\*' "$tmp/out")" = 0
# steps_to_target: each night's own target unless --target fixes it; a
# target no run reaches leaves every value empty; an unknown workload is bad input
hist --metric steps_to_target
check "steps_to_target: the moving default target is noted" grep -q '^note: each night.s target is that night.s default (1.1 x its best upper-median' "$tmp/out"
check "steps_to_target: values with the default target" grep -Eq '^1 +.* [0-9]+( |$)' "$tmp/out"
hist --metric steps_to_target --target quadratic=1e-30
check "--target: named: $(sed -n 2p "$tmp/out")" grep -q '^targets fixed by --target: quadratic=1e-30;' "$tmp/out"
check "--target 1e-30: never reached, no value" test "$(grep -E '^[0-9]+ ' "$tmp/out" | grep -Ec ' [0-9]+$')" = 0
# more than 16 series draw a panel per workload; one with nothing finite to
# draw (0.5 is reached at noise 0.01, never at noise 2) still renders
# (gnuplot stopped at a plot without a point, "x range is invalid": exit 1,
# no PDF) and says why it is empty
for n in 0.01 2; do
  "$OPTBENCH" run --workloads quadratic --optimizers sgd,adam,adamw,nadam,radam,adamax,adagrad,rmsprop,lion \
    --lrs 0.1 --steps 40 --set quadratic.noise=$n --backend cpu --db "$tmp/panels.db" >/dev/null 2>&1 ||
    fail "the panels' run at noise $n"
done
"$OPTBENCH" history --db "$tmp/panels.db" --out "$tmp/dt" --metric steps_to_target --target quadratic=0.5 \
  >"$tmp/out" 2>&1; rc=$?
check "a panel with no finite value: exit 0 (rc $rc)" test $rc -eq 0
check "--target 0.5: reached at noise 0.01" grep -Eq '^quadratic noise=0.01 adam +[0-9]+ ' "$tmp/out"
check "--target 0.5: the figure is drawn" test -s "$tmp/dt/history.png" -a -s "$tmp/dt/history.pdf"
check "--target 0.5: the noise-2 panel says why it is empty" \
  test "$(grep -c 'set label 1 "no finite value' "$tmp/dt/history.gp" 2>/dev/null)" = 1
"$OPTBENCH" history --db "$db" --metric steps_to_target --target nosuch=1 >"$tmp/out" 2>&1; rc=$?
check "--target of an unknown workload: exit 2 (rc $rc)" test $rc -eq 2
check "--target of an unknown workload: said" grep -q "history: --target 'nosuch=[0-9.e+-]*': the database has no workload 'nosuch'.*; its workloads: " "$tmp/out"
"$OPTBENCH" history --db "$db" --metric steps_to_target --target quadratic=1 --target quadratic=2 >"$tmp/out" 2>&1; rc=$?
check "--target twice: exit 2 (rc $rc)" test $rc -eq 2
check "--target twice: said" grep -q "history: --target for quadratic is given twice (1 and 2); give it once" "$tmp/out"
"$OPTBENCH" history --db "$db" --metric steps_to_target --target quadratic=inf >"$tmp/out" 2>&1; rc=$?
check "--target inf: exit 2 (rc $rc)" test $rc -eq 2
check "--target inf: said" grep -q "history: --target 'quadratic=inf': the loss must be a finite number" "$tmp/out"
# what is wrong with a --target is what it says: a workload label too long
# to take, a number out of a double's range, a word that is not a number
badtarget() { # description, pattern, args...
  local what=$1 pat=$2; shift 2
  "$OPTBENCH" history --db "$db" "$@" >"$tmp/out" 2>&1; local rc=$?
  check "$what: exit 2 (rc $rc)" test $rc -eq 2
  check "$what: said: $(cut -c1-300 "$tmp/out")" grep -qF -- "$pat" "$tmp/out"
}
badtarget "--target of a 256-byte label" "=1': the workload is 256 bytes long; at most 255 (give the workload's name" \
  --metric steps_to_target --target "$(printf 'w%.0s' {1..256})=1"
badtarget "--target 1e999" "history: --target 'quadratic=1e999': the loss '1e999' is beyond the range of a double" \
  --metric steps_to_target --target quadratic=1e999
# --target with a metric that has no target would have no effect: bad input
badtarget "--target with final_loss (the default)" \
  "history: --target sets the target of the steps_to_ metrics (steps_to_target, steps_to_heldout_target, steps_to_metric_target); final_loss (the default metric) has none" \
  --target quadratic=1
badtarget "--target with step_ms" "; --metric step_ms has none (give one of those with --metric, or leave --target out)" \
  --target quadratic=1 --metric step_ms
badtarget "--target abc" "history: --target 'quadratic=abc': the loss 'abc' is not a number (WORKLOAD=LOSS" \
  --metric steps_to_target --target quadratic=abc
# steps_to_heldout_target: runs evaluated every 10 steps; --target fixes the held-out target
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adam --lrs 0.01,0.1 --seeds 2 --steps 40 --eval-every 10 \
  --backend cpu --db "$tmp/ev.db" >>"$tmp/run.log" 2>&1 || { echo "FAIL: run --eval-every 10"; fail=1; }
"$OPTBENCH" history --db "$tmp/ev.db" --metric steps_to_heldout_target >"$tmp/out" 2>&1
check "steps_to_heldout_target: the held-out default noted" grep -q 'its best upper-median final held-out loss' "$tmp/out"
check "steps_to_heldout_target: adam gets there at an evaluation: $(tail -1 "$tmp/out")" \
  grep -Eq '^1 +[0-9-]+ [0-9:]+ +[^ ]+ +[1-4]0 ' "$tmp/out"
"$OPTBENCH" history --db "$tmp/ev.db" --metric steps_to_heldout_target --target quadratic=1e-30 >"$tmp/out" 2>&1
check "steps_to_heldout_target --target 1e-30: never reached" grep -Eq '^1 +.* inf +inf$' "$tmp/out"
# steps_to_metric_target: the held-out target on cnn-tiny's accuracy (a target of 0: met at step 0)
"$OPTBENCH" run --workloads cnn-tiny --optimizers sgd,adam --lrs 0.01,0.1 --seeds 2 --steps 40 --eval-every 10 \
  --backend cpu --db "$tmp/evm.db" >>"$tmp/run.log" 2>&1 || { echo "FAIL: run cnn-tiny --eval-every 10"; fail=1; }
"$OPTBENCH" history --db "$tmp/evm.db" --metric steps_to_metric_target >"$tmp/out" 2>&1
check "steps_to_metric_target: the metric's default noted" grep -q 'its best lower-median final held-out metric' "$tmp/out"
check "steps_to_metric_target: a step count at an evaluation: $(tail -1 "$tmp/out")" \
  grep -Eq '^1 +[0-9-]+ [0-9:]+ +[^ ]+ +([1-4]0|inf) ' "$tmp/out"
"$OPTBENCH" history --db "$tmp/evm.db" --metric steps_to_metric_target --target cnn-tiny=1.5 >"$tmp/out" 2>&1
check "steps_to_metric_target --target 1.5 (above any accuracy): never reached" grep -Eq '^1 +.* inf +inf$' "$tmp/out"
# its target is a value of the metric, and the messages say so, whichever
# comes first of --target and --metric
db="$tmp/evm.db"
badtarget "steps_to_metric_target: --target without =VALUE" \
  "history: --target 'cnn-tiny' is not WORKLOAD=VALUE (e.g. --target cnn-tiny=0.9)" --target cnn-tiny --metric steps_to_metric_target
badtarget "steps_to_metric_target: --target nan" \
  "history: --target 'cnn-tiny=nan': the value must be a finite number" --metric steps_to_metric_target --target cnn-tiny=nan
db="$tmp/h.db"
"$OPTBENCH" history --db "$db" --target quadratic >"$tmp/out" 2>&1; rc=$?
check "--target without =LOSS: exit 2 (rc $rc)" test $rc -eq 2
hist --metric eval_metric
check "eval_metric without a metric: no direction: $(head -1 "$tmp/out")" test "$(grep -c 'is better' "$tmp/out")" = 0
hist --out "$tmp/d3" --metric eval_metric
check "eval_metric without a value: the table, no plot (gnuplot has nothing to draw)" \
  grep -q "no plot: no benchmark has a value of eval_metric" "$tmp/out"
# the folder holds only what this run wrote: where nothing is drawn, the
# figure an earlier run drew there goes, and the message says so
hist --out "$tmp/d9" --metric final_loss
for f in png svg pdf; do echo earlier >"$tmp/d9/history.$f"; done
hist --out "$tmp/d9" --metric eval_metric
check "no plot: the earlier figure removed: $(ls "$tmp/d9" | tr '\n' ' ')" \
  test "$(ls "$tmp/d9" | grep -cE '^history\.(gp|png|svg|pdf)$')" = 0
check "  ... and said: $(tail -1 "$tmp/out")" \
  grep -q "; removed the figure of an earlier run (history.gp, history.png, history.svg and history.pdf)$" "$tmp/out"
# a gnuplot that draws no PDF (one without pdfcairo): the earlier history.pdf
# goes, and the message does not count it as written
mkdir -p "$tmp/gp-nopdf"
printf '#!/bin/sh\necho png >history.png\necho svg >history.svg\n' >"$tmp/gp-nopdf/gnuplot"
chmod +x "$tmp/gp-nopdf/gnuplot"
echo earlier >"$tmp/d9/history.pdf"
PATH="$tmp/gp-nopdf:$PATH" "$OPTBENCH" history --db "$db" --out "$tmp/d9" >"$tmp/out" 2>&1
check "no PDF drawn: the earlier one removed" test ! -e "$tmp/d9/history.pdf"
check "  ... and not said to be written: $(tail -1 "$tmp/out")" grep -qxF \
  "optbench: wrote $tmp/d9/history.csv, history.gp, history.png and history.svg; removed the earlier run's history.pdf, which this gnuplot did not draw again" "$tmp/out"
db="$tmp/cls.db"
"$OPTBENCH" run --workloads cnn-tiny --optimizers sgd --lrs 0.1 --seeds 1 --steps 4 --eval-every 2 --backend cpu \
  --db "$db" >>"$tmp/run.log" 2>&1 || { echo "FAIL: run cnn-tiny"; fail=1; }
hist --out "$tmp/d4" --metric eval_metric
check "eval_metric, an accuracy: higher is better: $(head -1 "$tmp/out")" \
  grep -q '^median held-out metric at the best lr over .* (higher is better)$' "$tmp/out"
check "eval_metric: in the plot title" grep -q '^set title ".* (higher is better)"$' "$tmp/d4/history.gp"

# a night run for another number of steps is another problem: its own series
# in history, its own group in compare and its own workload in the report
db="$tmp/steps.db"
for n in 20 30; do
  "$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.01 --seeds 1 --steps $n --backend cpu \
    --db "$db" >>"$tmp/run.log" 2>&1 || { echo "FAIL: run --steps $n"; fail=1; }
done
hist --out "$tmp/d5"
python3 - "$tmp/d5/history.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[0], rows[1:]
s20, s30 = hdr.index("quadratic steps=20 sgd"), hdr.index("quadratic steps=30 sgd")
assert [r[s20] != "" for r in data] == [True, False] and [r[s30] != "" for r in data] == [False, True], data
PY
check "history: a note on the steps" grep -q "^note: quadratic ran with different workload parameters or numbers of steps" "$tmp/out"
copy_as_rerun "$db" "$tmp/db2.db"
"$OPTBENCH" compare --baseline "$db" --candidate "$tmp/db2.db" --time-tol off >"$tmp/out" 2>&1
check "compare: a group per number of steps" test "$(grep -cE '^quadratic steps=(20|30) +sgd' "$tmp/out")" = 2
"$OPTBENCH" report --db "$db" --out "$tmp/d6" --no-render >"$tmp/out" 2>&1
check "report: a workload per number of steps" test "$(grep -cE '^## Workload quadratic steps=(20|30)$' "$tmp/d6/summary.md")" = 2
# the labels listed when none matches: two of 470 characters fit the
# message's 1 KiB, so nothing is left out and the list has no ", ..."
cp "$db" "$tmp/longopt2.db"
q "$tmp/longopt2.db" "update runs set optimizer = substr(replace(hex(zeroblob(470)), '0', char(96 + benchmark_id)), 1, 470)" >/dev/null
"$OPTBENCH" history --db "$tmp/longopt2.db" --optimizer nosuch >"$tmp/out" 2>&1
check "two long optimizer labels: both, and no ', ...': $(tail -c 20 "$tmp/out")" grep -qE "its optimizers: 'a{470}', 'b{470}'$" "$tmp/out"
# more series than one legend holds (the nightly config's 68): a panel per
# workload, each with its own y axis, and one legend of the optimizers below
db="$tmp/many.db"
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam,adamw,nadam,radam,adamax,adagrad,lion,rmsprop,rprop \
  --lrs 0.01,0.1 --seeds 1 --steps 10 --backend cpu --db "$db" >>"$tmp/run.log" 2>&1 || { echo "FAIL: run many"; exit 1; }
"$OPTBENCH" history --db "$db" --out "$tmp/d7" >"$tmp/out" 2>&1; rc=$?
check "history of 20 series exits 0 (rc $rc)" test $rc -eq 0
check "a row per series, not a column" test "$(grep -cE '^(quadratic|rosenbrock) [a-z]+ ' "$tmp/out")" = 20
check "the benchmarks' header rows" test "$(grep -cE '^(bench|date \(UTC\)|revision) ' "$tmp/out")" = 3
check "a panel per workload" test "$(grep -cE '^    set title "(quadratic|rosenbrock)( \(log scale\))?"$' "$tmp/d7/history.gp")" = 2
check "one legend: each optimizer once" test "$(grep -c 'with lines .* title "' "$tmp/d7/history.gp")" = 10
check "no series titled in the panels" test "$(grep -c 'columnheader' "$tmp/d7/history.gp")" = 0
if command -v gnuplot >/dev/null; then
  check "history.png rendered" test -s "$tmp/d7/history.png"
fi
# the report of those 10 optimizers: medians without their min-max bands,
# which would lie over one another; 8 or fewer keep them
"$OPTBENCH" report --db "$db" --out "$tmp/d8" --no-render >"$tmp/out" 2>&1
check "10 optimizers: no bands in the loss figure" test "$(grep -c filledcurves "$tmp/d8/loss_quadratic.gp")" = 0
check "10 optimizers: the title says so" grep -q 'no min-max bands with 10 optimizers' "$tmp/d8/loss_quadratic.gp"
check "10 optimizers: 10 median lines" test "$(grep -c "using 5:(sel(.*) ? \$6 : NaN) with linespoints" "$tmp/d8/loss_quadratic.gp")" = 10
check "10 optimizers: the seed-by-seed pairs in a table" grep -q '^| optimizer a (rank) | optimizer b (rank) | a lower on | median change, a vs b |$' "$tmp/d8/summary.md"
check "10 optimizers: a row per pair" test "$(sed -n '/^## Workload quadratic/,/^## /p' "$tmp/d8/summary.md" | grep -cE '^\| [a-z]+ \([0-9]+\) \| [a-z]+ \([0-9]+\) \|')" = 9
check "fewer optimizers: a sentence" grep -q '^Seed by seed at the best lrs: ' "$tmp/rep/summary.md"
check "10 optimizers: no bands in the lr figure" test "$(grep -c filledcurves "$tmp/d8/lr_quadratic.gp")" = 0
check "10 optimizers: the lr figure's title says so" grep -q 'no min-max bands with 10 optimizers; circle: best lr' "$tmp/d8/lr_quadratic.gp"
check "fewer optimizers keep their lr bands" test "$(cat "$tmp"/rep/lr_*.gp | grep -c filledcurves)" -gt 0
check "fewer optimizers keep their bands" test "$(cat "$tmp"/rep/loss_*.gp | grep -c filledcurves)" -gt 0
# a revision with edits keeps its "-dirty" in the table and in history.csv
cp "$db" "$tmp/dirty.db"
q "$tmp/dirty.db" "update benchmarks set git_rev = '0123456789abcdef0123-dirty' where id = 1" >/dev/null
"$OPTBENCH" history --db "$tmp/dirty.db" --out "$tmp/hd" >"$tmp/out" 2>&1
check "history keeps -dirty: $(grep -c 0123456789ab "$tmp/out")" grep -q '0123456789ab-dirty' "$tmp/out"
check "  ... in history.csv too" grep -q '"0123456789ab-dirty"' "$tmp/hd/history.csv"
# ... and so does the revision a build records, 12 digits and "-dirty" (18
# characters), and a shorter one
cp "$tmp/h.db" "$tmp/dirty2.db"
q "$tmp/dirty2.db" "update benchmarks set git_rev = case id when 1 then '1a2b3c4d5e6f-dirty' when 2 then 'abcdef12-dirty' else git_rev end" >/dev/null
"$OPTBENCH" history --db "$tmp/dirty2.db" --out "$tmp/hd2" >"$tmp/out" 2>&1
check "history keeps -dirty of 12 digits: $(grep '^1 ' "$tmp/out" | cut -c1-60)" grep -qE '^1 +[0-9-]+ [0-9:]+ +1a2b3c4d5e6f-dirty ' "$tmp/out"
check "  ... in history.csv too" grep -q '^1,"[^"]*","1a2b3c4d5e6f-dirty",' "$tmp/hd2/history.csv"
check "  ... and of fewer digits: $(grep '^2 ' "$tmp/out" | cut -c1-60)" grep -qE '^2 +[0-9-]+ [0-9:]+ +abcdef12-dirty ' "$tmp/out"
# the table's columns line up whatever their cells: a dirty revision (18
# characters), a date with a character of two bytes; a row per benchmark and
# a row per series alike
aligned() { # the table of $tmp/out: its rows from "bench" on, each as many characters long
  python3 - "$tmp/out" <<'PY'
import sys
rows = open(sys.argv[1], encoding="utf-8").read().split("\n")
rows = rows[next(i for i, r in enumerate(rows) if r.startswith("bench ")):]
rows = rows[:next(i for i, r in enumerate(rows) if not r or r.startswith(("note:", "optbench:")))]
assert len(rows) > 2 and len({len(r) for r in rows}) == 1, "\n".join(rows)
PY
}
cp "$tmp/dirty2.db" "$tmp/wide.db"
q "$tmp/wide.db" "update benchmarks set created_at = '2026-é1-02 03:04:05' where id = 2" >/dev/null
"$OPTBENCH" history --db "$tmp/wide.db" >"$tmp/out" 2>&1
check "a row per benchmark: the columns line up" aligned
q "$tmp/dirty.db" "update benchmarks set created_at = '2026-é1-02 03:04:05', git_rev = '1a2b3c4d5e6f-dirty'" >/dev/null
"$OPTBENCH" history --db "$tmp/dirty.db" >"$tmp/out" 2>&1
check "a row per series: the columns line up" aligned
# --out never writes over the database it reads, another database, or a folder
mkdir -p "$tmp/ho"; cp "$db" "$tmp/ho/history.csv"; sum=$(md5sum <"$tmp/ho/history.csv")
"$OPTBENCH" history --db "$tmp/ho/history.csv" --out "$tmp/ho" >"$tmp/out" 2>&1; rc=$?
check "history --out over its own database: exit 2 ($rc)" test $rc = 2
check "  ... says so" grep -q "its file '$tmp/ho/history.csv' is the database it reads (--db)" "$tmp/out"
check "  ... and left it as it was" test "$sum" = "$(md5sum <"$tmp/ho/history.csv")"
mkdir -p "$tmp/ho2"; cp "$db" "$tmp/ho2/history.gp"
"$OPTBENCH" history --db "$db" --out "$tmp/ho2" >"$tmp/out" 2>&1; rc=$?
check "history --out over another database: exit 2 ($rc)" test $rc = 2
check "  ... nothing written" test ! -e "$tmp/ho2/history.csv"
# a write that fails (a full disk; here the file size limit) keeps the
# previous history.csv and history.gp, and says why
cp "$db" "$tmp/hf.db"
python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('pragma journal_mode=delete')" "$tmp/hf.db"
"$OPTBENCH" history --db "$tmp/hf.db" --out "$tmp/hf" >/dev/null 2>&1 || fail "history into hf"
sums=$(cat "$tmp/hf/history.csv" "$tmp/hf/history.gp" | md5sum)
bash -c 'trap "" XFSZ; ulimit -f 2; exec "$@"' _ "$OPTBENCH" history --db "$tmp/hf.db" --metric step_ms \
  --out "$tmp/hf" >"$tmp/out" 2>&1; rc=$?
check "a failed write: exit 1 ($rc)" test $rc = 1
check "  ... names the cause" grep -q "history.gp' failed: File too large (the previous history.csv and history.gp" "$tmp/out"
check "  ... the previous files kept" test "$sums" = "$(cat "$tmp/hf/history.csv" "$tmp/hf/history.gp" | md5sum)"
check "  ... no working file left" test -z "$(ls -A "$tmp/hf" | grep part)"
# history.gp's working file that cannot be opened (here a folder in its
# way): named as such, and the previous files kept
mkdir "$tmp/hf/.history.gp.part"
"$OPTBENCH" history --db "$tmp/hf.db" --metric step_ms --out "$tmp/hf" >"$tmp/out" 2>&1; rc=$?
check "history.gp's working file not opened: exit 1 ($rc)" test $rc = 1
check "  ... said: $(grep '^optbench: ' "$tmp/out")" grep -qxF "optbench: history: cannot write history.gp: opening its working file '$tmp/hf/.history.gp.part' failed: Is a directory (the previous history.csv and history.gp, if any, are kept)" "$tmp/out"
check "  ... the previous files kept" test "$sums" = "$(cat "$tmp/hf/history.csv" "$tmp/hf/history.gp" | md5sum)"
check "  ... no working file of history.csv left" test ! -e "$tmp/hf/.history.csv.part"
rmdir "$tmp/hf/.history.gp.part"
# out of memory is an internal error (exit 1), never bad input (exit 2), in
# the --target check too: the program's own last allocations of a run that
# stops there (a --target naming no workload) fail in turn, each run from
# its Nth on (an LD_PRELOAD library; skipped without a C compiler or where
# preloading does not take, e.g. under a sanitizer)
cat >"$tmp/failalloc.c" <<'C'
/* LD_PRELOAD: the allocations the program itself makes (malloc, calloc,
 * realloc, strdup, strndup called from its own code, not from a library's)
 * are counted; those numbered OB_FAIL_FROM and after fail with ENOMEM.
 * OB_COUNT=FILE: the count, written at exit. OB_FAIL_RENAME: see rename. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
static long n, from = -1;
static uintptr_t lo, hi; /* the program's code */
static int first(struct dl_phdr_info *i, size_t size, void *data)
{
    (void)size, (void)data;
    for (int k = 0; k < i->dlpi_phnum; k++)
        if (i->dlpi_phdr[k].p_type == PT_LOAD && (i->dlpi_phdr[k].p_flags & PF_X)) {
            lo = i->dlpi_addr + i->dlpi_phdr[k].p_vaddr;
            hi = lo + i->dlpi_phdr[k].p_memsz;
        }
    return 1; /* the first is the program */
}
static int fail(void *caller)
{
    if (from < 0) {
        const char *s = getenv("OB_FAIL_FROM");
        from = s ? atol(s) : 0;
        dl_iterate_phdr(first, NULL);
    }
    if ((uintptr_t)caller < lo || (uintptr_t)caller >= hi) return 0;
    long k = __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED);
    if (from > 0 && k >= from) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}
#define CALLER __builtin_return_address(0)
void *malloc(size_t s) { return fail(CALLER) ? NULL : __libc_malloc(s); }
void *calloc(size_t a, size_t b) { return fail(CALLER) ? NULL : __libc_calloc(a, b); }
void *realloc(void *p, size_t s) { return fail(CALLER) ? NULL : __libc_realloc(p, s); }
char *strdup(const char *s)
{
    size_t l = strlen(s) + 1;
    char *d = fail(CALLER) ? NULL : __libc_malloc(l);
    return d ? memcpy(d, s, l) : NULL;
}
char *strndup(const char *s, size_t m)
{
    size_t l = strnlen(s, m);
    char *d = fail(CALLER) ? NULL : __libc_malloc(l + 1);
    if (d) memcpy(d, s, l), d[l] = 0;
    return d;
}
/* OB_FAIL_RENAME=S: a rename to a path that ends in S fails (EXDEV) */
int rename(const char *from, const char *to)
{
    const char *f = getenv("OB_FAIL_RENAME");
    size_t lt = strlen(to), lf = f ? strlen(f) : 0;
    if (lf && lt >= lf && !strcmp(to + lt - lf, f)) {
        errno = EXDEV;
        return -1;
    }
    return renameat(AT_FDCWD, from, AT_FDCWD, to);
}
__attribute__((destructor)) static void count(void)
{
    const char *f = getenv("OB_COUNT");
    FILE *o = f ? fopen(f, "w") : NULL;
    if (o) fprintf(o, "%ld\n", n), fclose(o);
}
C
# (under coverage, OB_COVERAGE=1 from scripts/coverage.sh, left out: gcov's
# own dump at exit allocates, and cannot survive the failures)
if [ -n "${OB_COVERAGE:-}" ]; then
  echo "note: under coverage the out-of-memory check is skipped"
elif "${CC:-cc}" -shared -fPIC -O1 -o "$tmp/failalloc.so" "$tmp/failalloc.c" >"$tmp/cc.log" 2>&1; then
  oomrun() { # N, then the run's exit status and its output in $tmp/out
    OB_FAIL_FROM=$1 OB_COUNT="$tmp/count" LD_PRELOAD="$tmp/failalloc.so" "$OPTBENCH" history --db "$tmp/h.db" \
      --metric steps_to_target --target nosuch=1 >"$tmp/out" 2>&1
  }
  oomrun 0 2>/dev/null; n_alloc=$(cat "$tmp/count" 2>/dev/null || echo 0)
  if [ "$n_alloc" -gt 20 ]; then
    n_oom=0
    for n in $(seq $((n_alloc - 20)) "$n_alloc"); do
      oomrun "$n"; rc=$?
      grep -q 'out of memory' "$tmp/out" || continue
      n_oom=$((n_oom + 1))
      check "out of memory at allocation $n of $n_alloc: exit 1 (rc $rc): $(cat "$tmp/out")" test $rc = 1
    done
    check "out of memory: some of the last allocations said so ($n_oom)" test $n_oom -gt 0
    # a rename into place that fails says so plainly, and what is kept
    renamefail() { # the name whose rename fails, the message, args...
      local name=$1 msg=$2; shift 2
      OB_FAIL_RENAME=$name LD_PRELOAD="$tmp/failalloc.so" "$OPTBENCH" history --db "$tmp/hf.db" --out "$tmp/hf" "$@" \
        >"$tmp/out" 2>&1; local rc=$?
      check "rename to $name fails: exit 1 ($rc)" test $rc = 1
      check "  ... said: $(grep '^optbench: ' "$tmp/out")" grep -qxF "optbench: history: $msg" "$tmp/out"
      check "  ... no working file left" test -z "$(ls -A "$tmp/hf" | grep part)"
    }
    renamefail /history.csv "cannot rename '$tmp/hf/.history.csv.part' to '$tmp/hf/history.csv': Invalid cross-device link (the previous history.csv and history.gp, if any, are kept)" --metric step_ms
    check "  ... the previous files kept" test "$sums" = "$(cat "$tmp/hf/history.csv" "$tmp/hf/history.gp" | md5sum)"
    renamefail /history.csv "cannot rename '$tmp/hf/.history.csv.part' to '$tmp/hf/history.csv': Invalid cross-device link (the previous history.csv, if any, is kept)" --metric eval_metric
    check "  ... the previous files kept" test "$sums" = "$(cat "$tmp/hf/history.csv" "$tmp/hf/history.gp" | md5sum)"
    renamefail /history.gp "cannot rename '$tmp/hf/.history.gp.part' to '$tmp/hf/history.gp': Invalid cross-device link (history.csv is the new one; history.gp, if any, is the previous)" --metric step_ms
  else
    echo "note: allocations not counted under LD_PRELOAD; the out-of-memory check is skipped"
  fi
else
  echo "note: no C compiler (${CC:-cc}): the out-of-memory check is skipped"
fi
exit $fail
