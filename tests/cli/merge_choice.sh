#!/usr/bin/env bash
# optbench merge, cell by cell and benchmark by benchmark, on copies of one
# small run edited in place: a failed run is kept over an interrupted one
# (and counts as finished), runs that disagree on their step count are a
# conflict, a confirmation run is another cell than the sweep run of its lr
# and seed, and a run of another step count too; the merged benchmark starts
# with its earliest input and ends with its latest, is unfinished while an
# input is, says "mixed" for names and hosts that differ and that the
# configurations differ when one has none, its runs are in cell order; an
# shard with a matrix fingerprint merges with one without, and the shards not
# given are named; an input given twice (by another
# path) and inputs run with two eval_every settings are refused; no working
# file is left beside the output.
. "$(dirname "$0")/common.bash"
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.003,0.03 --seeds 2 --steps 40 --eval-every 20 \
  --backend cpu --name small --db "$tmp/a.db" >/dev/null 2>&1 || { echo "the run failed"; exit 1; }
# the same benchmark without its matrix fingerprint, as an older optbench wrote it
nofp() { q "$1" "update benchmarks set provenance = null" >/dev/null; }
merge() { # out inputs...
  local out="$1"; shift
  "$OPTBENCH" merge --out "$out" "$@" >"$tmp/out" 2>&1 || fail "merge into $(basename "$out"): $(cat "$tmp/out")"
}

# a failed run beats an interrupted one, whatever the order, and a merge
# whose every cell finished (failed is finished) is finished
cp "$tmp/a.db" "$tmp/int.db"; cp "$tmp/a.db" "$tmp/fail.db"
q "$tmp/int.db" "update runs set status = 'interrupted' where cell = 0" >/dev/null
q "$tmp/fail.db" "update runs set status = 'failed', error = 'planted' where cell = 0" >/dev/null
merge "$tmp/m1.db" "$tmp/int.db" "$tmp/fail.db"
[ "$(q "$tmp/m1.db" "select status from runs where cell = 0")" = failed ] ||
  fail "failed vs interrupted: kept $(q "$tmp/m1.db" "select status, origin from runs where cell = 0")"
[ "$(q "$tmp/m1.db" "select finished_at is not null from benchmarks")" = 1 ] || fail "a failed cell left the merge unfinished"
[ "$(q "$tmp/m1.db" "select group_concat(cell) from (select cell from runs order by id)")" = "0,1,2,3" ] ||
  fail "the merged runs are not in cell order: $(q "$tmp/m1.db" "select group_concat(cell) from (select cell from runs order by id)")"
# an interrupted cell leaves it unfinished, though every input benchmark finished
merge "$tmp/m2.db" "$tmp/int.db"
[ "$(q "$tmp/m2.db" "select finished_at is null from benchmarks")" = 1 ] || fail "an interrupted cell: the merge is finished"

# two finished runs of a cell that disagree on their steps done: a conflict
cp "$tmp/a.db" "$tmp/steps.db"
q "$tmp/steps.db" "update runs set steps_done = steps_done - 1 where cell = 1" >/dev/null
merge "$tmp/m3.db" "$tmp/a.db" "$tmp/steps.db"
grep -q "1 conflict (the first run kept" "$tmp/out" && grep -q "conflict: quadratic sgd" "$tmp/out" || fail "steps done differ: $(cat "$tmp/out")"

# a confirmation run is another cell than the sweep run of its lr and seed; so is a run of other steps
cp "$tmp/a.db" "$tmp/conf.db"
q "$tmp/conf.db" "update runs set stage = 'confirm' where cell = 2" >/dev/null
merge "$tmp/m4.db" "$tmp/a.db" "$tmp/conf.db"
[ "$(q "$tmp/m4.db" "select count(*), sum(stage = 'confirm') from runs")" = "5|1" ] ||
  fail "a confirmation run merged with a sweep run: $(q "$tmp/m4.db" "select count(*), sum(stage = 'confirm') from runs")"
cp "$tmp/a.db" "$tmp/steps2.db"; nofp "$tmp/steps2.db"; cp "$tmp/a.db" "$tmp/a2.db"; nofp "$tmp/a2.db"
q "$tmp/steps2.db" "update runs set steps = 80 where cell = 3" >/dev/null
merge "$tmp/m5.db" "$tmp/a2.db" "$tmp/steps2.db"
[ "$(q "$tmp/m5.db" "select count(*) from runs")" = 5 ] || fail "runs of 40 and 80 steps merged into one cell"

# a shard with its matrix fingerprint and a copy without merge (the first
# sets it); the shards not given are all named
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.003,0.03 --seeds 2 --steps 40 --eval-every 20 \
  --backend cpu --name small --shard 0/4 --db "$tmp/s0.db" >/dev/null 2>&1 || fail "the run of shard 0/4"
cp "$tmp/s0.db" "$tmp/s0nofp.db"; nofp "$tmp/s0nofp.db"
merge "$tmp/m8.db" "$tmp/s0.db" "$tmp/s0nofp.db"
[ "$(q "$tmp/m8.db" "select count(*) from runs")" = 1 ] || fail "with and without a fingerprint: $(cat "$tmp/out")"
grep -q "note: 3 of the 4 shards were not given (1/4, 2/4, 3/4)" "$tmp/out" || fail "the shards not given: $(cat "$tmp/out")"

# the merged benchmark: earliest start, latest end, names and hosts that differ are 'mixed'
cp "$tmp/a.db" "$tmp/b.db"
q "$tmp/a.db" "update benchmarks set created_at = '2026-01-02T00:00:00Z', finished_at = '2026-01-02T05:00:00Z'" >/dev/null
q "$tmp/b.db" "update benchmarks set created_at = '2026-01-01T00:00:00Z', finished_at = '2026-01-03T00:00:00Z', name = 'other', host = 'elsewhere', config = null" >/dev/null
merge "$tmp/m6.db" "$tmp/a.db" "$tmp/b.db"
[ "$(q "$tmp/m6.db" "select created_at, finished_at, name, host from benchmarks")" = "2026-01-01T00:00:00Z|2026-01-03T00:00:00Z|mixed|mixed" ] ||
  fail "the merged benchmark: $(q "$tmp/m6.db" "select created_at, finished_at, name, host from benchmarks")"
python3 - "$tmp/m6.db" <<'PY' || fail "provenance of m6"
import json, sqlite3, sys
p = json.loads(sqlite3.connect(sys.argv[1]).execute("select provenance from benchmarks").fetchone()[0])
assert p["configs_differ"] is True, p["configs_differ"]
assert [s["runs"] for s in p["sources"]] == [4, 4], [s["runs"] for s in p["sources"]]
assert [s["taken"] for s in p["sources"]] == [4, 0], [s["taken"] for s in p["sources"]]
PY
# an input that did not finish leaves the merge unfinished
q "$tmp/b.db" "update benchmarks set finished_at = null" >/dev/null
merge "$tmp/m7.db" "$tmp/a.db" "$tmp/b.db"
[ "$(q "$tmp/m7.db" "select finished_at is null from benchmarks")" = 1 ] || fail "an unfinished input: the merge is finished"
# the working file of a merge into the same output that was killed is noted once (its journal is not a second one)
touch "$tmp/m9.db.merging-999999" "$tmp/m9.db.merging-999999-journal"
merge "$tmp/m9.db" "$tmp/a.db"
[ "$(grep -c "is the working file of a merge into" "$tmp/out")" = 1 ] && grep -q "m9.db.merging-999999' is the working" "$tmp/out" ||
  fail "the killed merge's working file: $(cat "$tmp/out")"
rm -f "$tmp/m9.db.merging-999999" "$tmp/m9.db.merging-999999-journal"
ls "$tmp" | grep -q "merging" && fail "working files left: $(ls "$tmp" | grep merging)"

# refused: one file given twice (another path to it), two eval_every settings
"$OPTBENCH" merge --out "$tmp/twice.db" "$tmp/a.db" "$tmp/../$(basename "$tmp")/a.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "is given twice" "$tmp/err" && [ ! -e "$tmp/twice.db" ] || fail "an input twice: rc $rc: $(cat "$tmp/err")"
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.003,0.03 --seeds 2 --steps 40 --eval-every 10 \
  --backend cpu --name small --db "$tmp/e10.db" >/dev/null 2>&1 || fail "the run with eval_every 10"
nofp "$tmp/e10.db"
"$OPTBENCH" merge --out "$tmp/evals.db" "$tmp/e10.db" "$tmp/a2.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "eval_every 10 and .* with eval_every 20" "$tmp/err" && [ ! -e "$tmp/evals.db" ] ||
  fail "two eval_every settings: rc $rc: $(cat "$tmp/err")"
# ... where the first is eval_every 0 (no evaluations: a setting, not its absence)
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.003,0.03 --seeds 2 --steps 40 --eval-every 0 \
  --backend cpu --name small --db "$tmp/e0.db" >/dev/null 2>&1 || fail "the run with eval_every 0"
nofp "$tmp/e0.db"
"$OPTBENCH" merge --out "$tmp/evals0.db" "$tmp/e0.db" "$tmp/e10.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "eval_every 0 and .* with eval_every 10" "$tmp/err" && [ ! -e "$tmp/evals0.db" ] ||
  fail "eval_every 0 and 10: rc $rc: $(cat "$tmp/err")"

# a row report would refuse (an lr of 0, edited by hand) is not merged into
# a database report would then refuse: exit 2, nothing written
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.003,0.03 --steps 10 --backend cpu \
  --db "$tmp/edited.db" >/dev/null 2>&1 || fail "setup run"
q "$tmp/edited.db" "update runs set lr = 0 where id = 2" >/dev/null
"$OPTBENCH" merge --out "$tmp/medited.db" "$tmp/edited.db" >"$tmp/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "'$tmp/edited.db': run 2 has lr '0.0', not a learning rate" "$tmp/out" ||
  fail "merge of an edited lr: exit $rc: $(cat "$tmp/out")"
[ ! -e "$tmp/medited.db" ] || fail "merge of an edited lr wrote its output"
# a status outside the schema's list (written past its CHECK) is refused up
# front, not by the CHECK half way through writing the output (exit 1)
q "$tmp/edited.db" "update runs set lr = 0.003 where id = 2" >/dev/null
python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).executescript(sys.argv[2])" "$tmp/edited.db" \
  "pragma ignore_check_constraints = 1; update runs set status = 'bogus' where id = 1;" || fail "planting a status"
"$OPTBENCH" merge --out "$tmp/medited.db" "$tmp/edited.db" >"$tmp/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "'$tmp/edited.db': run 1 has the status 'bogus', not one of pending" "$tmp/out" ||
  fail "merge of an edited status: exit $rc: $(cat "$tmp/out")"
[ ! -e "$tmp/medited.db" ] || fail "merge of an edited status wrote its output"
# an input without one of optbench's tables: bad input (exit 2), not a failure
cp "$tmp/a.db" "$tmp/noevals.db"; q "$tmp/noevals.db" "drop table evals" >/dev/null
"$OPTBENCH" merge --out "$tmp/mnoevals.db" "$tmp/noevals.db" >"$tmp/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "lacks part of optbench's schema" "$tmp/out" || fail "merge of a dropped table: exit $rc: $(cat "$tmp/out")"
# --name as run holds a name (at most 127 bytes of UTF-8), --out not empty
for bad in "--name $(printf 'a\377b')" "--name $(printf '%0500d' 0)" "--out="; do
  if [ "$bad" = "--out=" ]; then set -- --out ""; else set -- --out "$tmp/mname.db" "${bad%% *}" "${bad#* }"; fi
  "$OPTBENCH" merge "$@" "$tmp/a.db" >"$tmp/out" 2>&1; rc=$?
  [ $rc = 2 ] || fail "merge $1 $2 ${3:0:20}: exit $rc: $(cat "$tmp/out")"
done
[ ! -e "$tmp/mname.db" ] || fail "a refused --name wrote the output"
echo "$fails failed"
[ $fails -eq 0 ]
