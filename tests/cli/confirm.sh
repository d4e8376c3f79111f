#!/usr/bin/env bash
# run --confirm-seeds N: after the sweep, N fresh seeds at each pair's best
# lr (the report's rule, recomputed here from the sweep's runs), each the very
# run a plain `run` of that lr and seed gives; a pair with no finite median
# gets none. The report's confirmation table and confirm.csv, runs.csv's
# stage column, compare leaving them out, --resume adding the stage to a
# finished sweep, a stop during the stage continued by --resume bit for bit,
# a shard that does not run it, and the bad values of the setting.
. "$(dirname "$0")/common.bash"
sweep=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03,0.3 --seeds 2 --steps 1000
       --backend cpu)

"$OPTBENCH" "${sweep[@]}" --confirm-seeds 3 --db "$tmp/a.db" 2>"$tmp/a.err" || { cat "$tmp/a.err"; echo "FAIL: run"; exit 1; }
check "the stage is announced" grep -q "confirmation: the best lr of 3 pairs, 3 fresh seeds each (seeds 2..4): 9 runs" "$tmp/a.err"
check "a pair without a finite median is named" grep -q "rosenbrock sgd has no lr with a finite median" "$tmp/a.err"
check "24 sweep runs and 9 confirmation runs" test "$(q "$tmp/a.db" "select count(*), count(stage), sum(stage='confirm') from runs")" = "33|9|9"
check "all finished" test "$(q "$tmp/a.db" "select count(*) from runs where status not in ('done','diverged')")" = 0
check "the benchmark is finished" test "$(q "$tmp/a.db" "select count(*) from benchmarks where finished_at is not null")" = 1
# the stage's runs take turns as the sweep's do: per workload, seed by seed,
# the pairs in turn, every other seed's turn reversed
python3 - "$tmp/a.err" <<'EOF' || { echo "FAIL: the confirmation runs' order"; fail=1; }
import re, sys
err = open(sys.argv[1]).read()
stage = err[err.index("confirmation: the best lr"):]
ran = [m.groups() for m in re.finditer(r"^\[\d+/9\] (\S+) (\S+) lr=\S+ seed=(\d+):", stage, re.M)]
want = [("quadratic", o, str(s)) for s in (2, 3, 4) for o in (("sgd", "adam") if s != 3 else ("adam", "sgd"))]
want += [("rosenbrock", "adam", str(s)) for s in (2, 3, 4)]
if ran != want:
    print("ran", ran, "expected", want)
    sys.exit(1)
EOF

# the best lr of each pair, recomputed from the sweep's runs
python3 - "$tmp/a.db" <<'EOF' || { echo "FAIL: confirmation runs are not at the best lr"; fail=1; }
import sqlite3, statistics, sys, math
db = sqlite3.connect(sys.argv[1])
sweep = {}
for wl, opt, lr, st, f in db.execute("select workload, optimizer, lr, status, final_loss from runs where stage is null"):
    sweep.setdefault((wl, opt), {}).setdefault(lr, []).append(math.inf if st == 'diverged' else f)
conf = {}
for wl, opt, lr, seed in db.execute("select workload, optimizer, lr, seed from runs where stage = 'confirm'"):
    conf.setdefault((wl, opt), []).append((lr, seed))
for pair, lrs in sweep.items():
    med = sorted((statistics.median(v), lr) for lr, v in lrs.items())
    best = med[0][1] if math.isfinite(med[0][0]) else None
    got = sorted(conf.get(pair, []))
    want = [] if best is None else [(best, s) for s in (2, 3, 4)]
    if got != want:
        print(pair, "confirmation runs", got, "expected", want)
        sys.exit(1)
EOF

# each confirmation run is the run a plain `run` of its lr and seed gives
q "$tmp/a.db" "select workload, optimizer, lr from runs where stage='confirm' group by 1,2,3" >"$tmp/pairs"
while IFS='|' read -r wl opt lr; do
  "$OPTBENCH" run --workloads "$wl" --optimizers "$opt" --lrs "$lr" --seeds 2..4 --steps 1000 --backend cpu \
    --db "$tmp/plain.db" 2>/dev/null || { echo "FAIL: plain run of $wl $opt"; fail=1; }
done <"$tmp/pairs"
a=$(q "$tmp/a.db" "select workload, optimizer, lr, seed, final_loss, eval_loss from runs where stage='confirm' order by 1,2,3,4")
p=$(q "$tmp/plain.db" "select workload, optimizer, lr, seed, final_loss, eval_loss from runs order by 1,2,3,4")
check "confirmation runs equal plain runs of the same lr and seed" test "$a" = "$p"

# the report
"$OPTBENCH" report --db "$tmp/a.db" --out "$tmp/rep" --no-render >/dev/null 2>&1 || { echo "FAIL: report"; fail=1; }
check "summary.md has a confirmation table per confirmed workload" test "$(grep -c '^Confirmation: fresh seeds' "$tmp/rep/summary.md")" = 2
check "summary.md counts the confirmation runs" grep -q "9 of the runs are confirmation runs" "$tmp/rep/summary.md"
check "confirm.csv: a row per confirmed pair" test "$(grep -c '^"' "$tmp/rep/confirm.csv")" = 4
check "the lr figure draws the fresh seeds" grep -q "'confirm.csv' skip 1 using 4:(sel(\"adam\")" "$tmp/rep/lr_quadratic.gp"
check "no fresh seeds drawn where the sweep confirmed none" test "$(grep -c "confirm.csv" "$tmp/rep/lr_rosenbrock.gp")" = 1
check "runs.csv: stage column" test "$(grep -c ',"confirm",' "$tmp/rep/runs.csv")" = 9
# the sweep's statistics do not count the fresh seeds: seeds at the best lr stay 2
check "summary.csv: 2 seeds at the best lr" test "$(python3 -c "import csv,sys; print(sorted({r['seeds'] for r in csv.DictReader(open(sys.argv[1])) if r['best_lr']}))" "$tmp/rep/summary.csv")" = "['2']"
check "confirm.csv: 3 seeds, lr is the best" test "$(python3 -c "import csv,sys; print(sorted({(r['seeds'], r['lr_is_best']) for r in csv.DictReader(open(sys.argv[1]))}))" "$tmp/rep/confirm.csv")" = "[('3', '1')]"

# compare leaves them out, and says so
copy_as_rerun "$tmp/a.db" "$tmp/a2.db"
"$OPTBENCH" compare --baseline "$tmp/a.db" --candidate "$tmp/a2.db" >"$tmp/cmp.out" 2>&1
check "compare of a database with its rerun passes" test $? = 0
check "compare notes the confirmation runs it left out" grep -q "not compared, 9 in the baseline and 9 in the candidate" "$tmp/cmp.out"
check "compare matched the sweep's 24 cells" grep -q "24 matched cells" "$tmp/cmp.out"
# a candidate whose confirmation stage was stopped is not finished: no verdict
cp "$tmp/a.db" "$tmp/stopped.db"
python3 -c "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(\"update runs set status = 'interrupted', final_loss = null where id in (select id from runs where stage = 'confirm' order by id desc limit 2)\"); db.execute('update benchmarks set finished_at = null'); db.commit()" "$tmp/stopped.db"
"$OPTBENCH" compare --baseline "$tmp/a.db" --candidate "$tmp/stopped.db" --strict --junit "$tmp/stopped.xml" >"$tmp/cmp.out" 2>&1
rc=$?
check "a stopped confirmation stage: no verdict, exit 2 (rc $rc)" test $rc = 2
check "  ... and says why" grep -q "note: 2 confirmation runs of the candidate are not finished (its confirmation stage was stopped" "$tmp/cmp.out"
check "  ... a JUnit error" grep -q '<error type="not finished" message="2 confirmation runs of the candidate are not finished' "$tmp/stopped.xml"

# --resume --confirm-seeds on a finished sweep adds the stage; the same runs
"$OPTBENCH" "${sweep[@]}" --db "$tmp/b.db" 2>/dev/null || { echo "FAIL: sweep b"; fail=1; }
check "no confirmation without the setting" test "$(q "$tmp/b.db" "select count(stage) from runs")" = 0
"$OPTBENCH" "${sweep[@]}" --db "$tmp/b.db" --resume --confirm-seeds 3 2>"$tmp/b.err" || { cat "$tmp/b.err"; echo "FAIL: resume b"; fail=1; }
check "--resume adds to the finished benchmark" test "$(q "$tmp/b.db" "select count(distinct benchmark_id), count(stage) from runs")" = "1|9"
b=$(q "$tmp/b.db" "select cell, workload, optimizer, lr, seed, final_loss from runs where stage='confirm' order by cell")
a=$(q "$tmp/a.db" "select cell, workload, optimizer, lr, seed, final_loss from runs where stage='confirm' order by cell")
check "the added stage equals the one run at once" test "$a" = "$b"
# more seeds later: the runs there are kept, two more per pair
"$OPTBENCH" "${sweep[@]}" --db "$tmp/b.db" --resume --confirm-seeds 5 2>"$tmp/b5.err" || { cat "$tmp/b5.err"; echo "FAIL: resume b 5"; fail=1; }
check "5 seeds: 9 finished before, 6 added" grep -q "3 pairs, 5 fresh seeds each (seeds 2..6): 15 runs, 9 finished before" "$tmp/b5.err"
check "5 seeds: 15 confirmation runs" test "$(q "$tmp/b.db" "select count(stage) from runs")" = 15

# a stop during the stage, continued by --resume: bit for bit the same
long0=(run --workloads quadratic --optimizers sgd,adam --lrs 0.003,0.01 --seeds 2 --steps 4000 --checkpoint-every 100
       --set quadratic.dim=128 --backend cpu)
long=("${long0[@]}" --confirm-seeds 2)
"$OPTBENCH" "${long[@]}" --db "$tmp/ref.db" 2>/dev/null || { echo "FAIL: reference"; fail=1; }
"$OPTBENCH" "${long[@]}" --db "$tmp/c.db" >/dev/null 2>"$tmp/c.err" &
pid=$!
# runs 1-8 are the sweep; a checkpoint of run 9 or later is the stage under
# way (waited for as long as the run goes on: a busy machine takes longer
# than wait_for's 20 s to get through the sweep)
# (signal_in_run's 60 s, as many times as the sweep needs: the signal goes
# while a run of the stage is under way, not between two)
for _ in $(seq 10); do
  signal_in_run $pid "$tmp/c.db" "$tmp/c.db.ckpt" "9 10 11 12" INT >/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "FAIL: the stage did not start, or ended unseen"; fail=1; break; }
done
wait $pid
rcx=$?
check "stopped during the stage: exit 130 (got $rcx: $(tail -1 "$tmp/c.err"))" test $rcx = 130
check "an interrupted confirmation run" test "$(q "$tmp/c.db" "select count(*) from runs where stage='confirm' and status='interrupted'")" = 1
# resumed without --confirm-seeds: the stage it finds is finished all the same
"$OPTBENCH" "${long0[@]}" --db "$tmp/c.db" --resume 2>"$tmp/c2.err" || { cat "$tmp/c2.err"; echo "FAIL: resume c"; fail=1; }
check "the resume says it finishes the stage" grep -q "has confirmation runs of 2 seeds per pair (confirm_seeds 0): finishing them" "$tmp/c2.err"
check "the resume continued the stage" grep -q "confirmation: the best lr of 2 pairs" "$tmp/c2.err"
check "the stored configuration still says confirm_seeds 2" \
  grep -qx "confirm_seeds: 2" <<<"$(q "$tmp/c.db" "select config from benchmarks")"
r=$(q "$tmp/ref.db" "select cell, lr, seed, status, final_loss, best_loss, eval_loss, stage from runs order by cell")
c=$(q "$tmp/c.db" "select cell, lr, seed, status, final_loss, best_loss, eval_loss, stage from runs order by cell")
check "stopped and resumed = uninterrupted" test "$r" = "$c"
rc=$(q "$tmp/ref.db" "select r.cell, c.step, c.loss from curves c join runs r on r.id = c.run_id where r.stage='confirm' order by 1, 2" | md5sum)
cc=$(q "$tmp/c.db" "select r.cell, c.step, c.loss from curves c join runs r on r.id = c.run_id where r.stage='confirm' order by 1, 2" | md5sum)
check "the confirmation curves are the same" test "$rc" = "$cc"
# a finished confirmation run's files left by a kill between recording it and
# removing them (its lock, a checkpoint) go at the next --resume
cid=$(q "$tmp/c.db" "select min(id) from runs where stage='confirm'")
mkdir -p "$tmp/c.db.ckpt/run-$cid"
echo 999999 >"$tmp/c.db.ckpt/run-$cid/lock"
cp "$tmp/c.db" "$tmp/c.db.ckpt/run-$cid/ckpt-000000000100.obck"
"$OPTBENCH" "${long0[@]}" --db "$tmp/c.db" --resume 2>"$tmp/c3.err" || { cat "$tmp/c3.err"; echo "FAIL: resume c again"; fail=1; }
check "a finished confirmation run's leftover files are removed" test ! -e "$tmp/c.db.ckpt/run-$cid"

# a shard does not run the stage (it holds part of the sweep)
"$OPTBENCH" "${sweep[@]}" --confirm-seeds 2 --shard 0/2 --db "$tmp/s.db" 2>"$tmp/s.err" || { echo "FAIL: shard"; fail=1; }
check "the shard says why" grep -q "confirm_seeds is not run by a shard" "$tmp/s.err"
check "the shard has no confirmation runs" test "$(q "$tmp/s.db" "select count(stage) from runs")" = 0

# the shards' databases merged, then the whole matrix with --resume: the stage
# runs on the merged benchmark, and gives the runs of the unsharded one
"$OPTBENCH" "${sweep[@]}" --confirm-seeds 3 --shard 1/2 --db "$tmp/s1.db" 2>/dev/null || { echo "FAIL: shard 1"; fail=1; }
"$OPTBENCH" merge --out "$tmp/m.db" "$tmp/s.db" "$tmp/s1.db" >/dev/null 2>&1 || { echo "FAIL: merge"; fail=1; }
"$OPTBENCH" "${sweep[@]}" --confirm-seeds 3 --db "$tmp/m.db" --resume 2>"$tmp/m.err" || { cat "$tmp/m.err"; echo "FAIL: resume merged"; fail=1; }
check "resume continued the merged benchmark" grep -q "resume: benchmark 1: 24 of 24 cells finished before" "$tmp/m.err"
m=$(q "$tmp/m.db" "select cell, workload, optimizer, lr, seed, final_loss from runs where stage='confirm' order by cell")
check "the merged sweep's confirmation = the unsharded one's" test "$a" = "$m"

# a later sweep that moved the best lr (read with --benchmark all): the
# fresh seeds at the earlier best are not the best configuration's estimate
cf=(run --workloads quadratic --optimizers sgd --sweep sgd.momentum=0,0.9 --seeds 2 --steps 30 --db "$tmp/cf.db")
"$OPTBENCH" "${cf[@]}" --lrs 0.001,0.01 --confirm-seeds 2 >/dev/null 2>&1 || { echo "FAIL: cf sweep"; fail=1; }
"$OPTBENCH" "${cf[@]}" --lrs 0.001,0.01,0.05 >/dev/null 2>&1 || { echo "FAIL: cf later sweep"; fail=1; }
"$OPTBENCH" report --db "$tmp/cf.db" --benchmark all --out "$tmp/cf" >/dev/null 2>&1 || { echo "FAIL: cf report"; fail=1; }
check "the later sweep's best lr is 0.05" test "$(python3 -c "import csv,sys; print([r['lr'] for r in csv.DictReader(open(sys.argv[1]))])" "$tmp/cf/best_configuration.csv")" = "['0.05']"
check "best_configuration.csv: no fresh seeds' median at another lr" test "$(python3 -c "import csv,sys; print([(r['confirm_median'], r['confirm_seeds']) for r in csv.DictReader(open(sys.argv[1]))])" "$tmp/cf/best_configuration.csv")" = "[('', '')]"
check "summary.md: the fresh seeds' lr named, not their median" grep -qF "| - (fresh seeds at lr 0.01, not the best) |" "$tmp/cf/summary.md"
check "summary.tex: not confirmed at the best lr" grep -qE '^    sgd & momentum=0\.9 & 0\.05 & .* & -- \\\\$' "$tmp/cf/summary.tex"
check "confirm.csv: both at lr 0.01, not the best" test "$(python3 -c "import csv,sys; print(sorted({(r['lr'], r['lr_is_best']) for r in csv.DictReader(open(sys.argv[1]))}))" "$tmp/cf/confirm.csv")" = "[('0.01', '0')]"

# bad values
for bad in -1 1.5 x 1001; do
  "$OPTBENCH" run --workloads quadratic --optimizers sgd --confirm-seeds "$bad" --db "$tmp/bad.db" 2>"$tmp/bad.err"
  check "--confirm-seeds $bad: exit 2" test $? = 2
  check "--confirm-seeds $bad: named" grep -q -- "--confirm-seeds '$bad'" "$tmp/bad.err"
done
check "nothing written on bad input" test ! -e "$tmp/bad.db"
exit $fail
