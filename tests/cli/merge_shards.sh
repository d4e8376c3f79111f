#!/usr/bin/env bash
# optbench merge: shards (one by --shard, one by Slurm's variables) plus an
# overlapping shard, a partial copy and a disagreeing copy merge into one
# database holding each cell once, with the results of the unsharded run,
# duplicates left out, the conflict reported, every input benchmark in the
# provenance and every run's origin. An input of the older schema version
# merges too; an existing output and a foreign file are refused untouched,
# and so are the shards of two different matrices.
. "$(dirname "$0")/common.bash"
M=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.03 --seeds 2 --steps 300 --eval-every 100 --backend cpu --name sweep)
"$OPTBENCH" "${M[@]}" --db "$tmp/ref.db" 2>/dev/null || { echo "reference run failed"; exit 1; }
"$OPTBENCH" "${M[@]}" --shard 0/3 --db "$tmp/s0.db" 2>/dev/null || fail "shard 0/3"
"$OPTBENCH" "${M[@]}" --shard 1/3 --db "$tmp/s1.db" 2>/dev/null || fail "shard 1/3"
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 "$OPTBENCH" "${M[@]}" --db "$tmp/s2.db" 2>"$tmp/err" || fail "shard from Slurm"
grep -q "shard 2/3 (from SLURM_ARRAY_TASK_ID" "$tmp/err" || fail "the Slurm shard is not announced: $(cat "$tmp/err")"
"$OPTBENCH" "${M[@]}" --shard 1/3 --db "$tmp/dup.db" 2>/dev/null || fail "overlapping shard"
cp "$tmp/s2.db" "$tmp/partial.db"
q "$tmp/partial.db" "update runs set status='interrupted', final_loss=null where cell=2" >/dev/null
cp "$tmp/s0.db" "$tmp/conflict.db"
q "$tmp/conflict.db" "update runs set final_loss = final_loss * 1.5 where cell=3" >/dev/null
for s in 0 1 2; do echo "shard $s: cells $(q "$tmp/s$s.db" "select group_concat(cell) from runs"), shard column $(q "$tmp/s$s.db" "select shard from benchmarks")"; done

"$OPTBENCH" merge --out "$tmp/all.db" "$tmp/partial.db" "$tmp/s0.db" "$tmp/s1.db" "$tmp/s2.db" "$tmp/dup.db" "$tmp/conflict.db" 2>"$tmp/merge.err"
rc=$?; cat "$tmp/merge.err"
[ $rc = 0 ] || fail "merge: exit status $rc"
grep -q "conflict: quadratic sgd lr=0.03 seed=1" "$tmp/merge.err" || fail "the conflict is not reported"
grep -q "16 cells, 16 duplicates left out, 1 conflict " "$tmp/merge.err" || fail "unexpected counts"
runs_in=0
for f in partial s0 s1 s2 dup conflict; do runs_in=$((runs_in + $(q "$tmp/$f.db" "select count(*) from runs"))); done
grep -q "merged $runs_in runs of 6 benchmarks in 6 databases into" "$tmp/merge.err" ||
  fail "the runs read: $runs_in in the inputs: $(cat "$tmp/merge.err")"
[ "$(q "$tmp/all.db" "select count(*), count(distinct cell), count(origin) from runs")" = "16|16|16" ] || fail "not each cell once with its origin"
[ "$(q "$tmp/all.db" "select count(*) from runs where status not in ('done','diverged')")" = 0 ] || fail "a partial run was preferred to a finished one"
q "$tmp/all.db" "select origin from runs where cell=2"
q "$tmp/all.db" "select origin from runs where cell=2" | grep -q "s2.db:run" || fail "cell 2 should come from s2.db (partial.db has it interrupted)"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/all.db" || fail "merged results differ from the unsharded run"
python3 - "$tmp/all.db" <<'PY' || fail "provenance"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select name, provenance, finished_at from benchmarks").fetchall()
assert len(rows) == 1, rows
name, prov, fin = rows[0]
p = json.loads(prov)
assert name == "sweep", name
assert fin is not None
assert len(p["sources"]) == 6, len(p["sources"])
assert sorted(s["shard"] for s in p["sources"]) == ["0/3", "0/3", "1/3", "1/3", "2/3", "2/3"], p["sources"]
assert sum(s["taken"] for s in p["sources"]) == 16
assert all(s["git_rev"] and s["host"] and s["created_at"] for s in p["sources"])
assert len(p["conflicts"]) == 1 and "conflict.db" in p["conflicts"][0]["dropped"], p["conflicts"]
assert p["duplicates"] == 16 and p["cells"] == 16
print("provenance ok:", [(s["file"].split("/")[-1], s["shard"], s["taken"]) for s in p["sources"]])
PY

# an existing output is refused and left as it was
sum=$(md5sum <"$tmp/all.db")
"$OPTBENCH" merge --out "$tmp/all.db" "$tmp/s0.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "already exists" "$tmp/err" || fail "existing output: exit $rc, $(cat "$tmp/err")"
[ "$sum" = "$(md5sum <"$tmp/all.db")" ] || fail "the existing output changed"
# a file that is not an optbench database: refused, no output left behind
echo "some notes" >"$tmp/notes.txt"
"$OPTBENCH" merge --out "$tmp/x.db" "$tmp/s0.db" "$tmp/notes.txt" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "^optbench: merge: .*notes.txt" "$tmp/err" && [ ! -e "$tmp/x.db" ] || fail "foreign input: exit $rc, $(cat "$tmp/err")"
"$OPTBENCH" merge --out "$tmp/x.db" 2>"$tmp/err"; [ $? = 2 ] || fail "merge without inputs"
"$OPTBENCH" merge "$tmp/s0.db" 2>"$tmp/err"; [ $? = 2 ] && grep -q -- "--out" "$tmp/err" || fail "merge without --out"
# an empty --name (a shell variable that is not set) is refused, not stored
"$OPTBENCH" merge --out "$tmp/x.db" "$tmp/s0.db" --name "" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "merge: --name is empty" "$tmp/err" && [ ! -e "$tmp/x.db" ] || fail "empty --name: exit $rc, $(cat "$tmp/err")"

# an input of schema version 1, and a merged database merged again (provenance nests)
cp "$tmp/s0.db" "$tmp/v1.db"
python3 - "$tmp/v1.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for sql in ("ALTER TABLE benchmarks DROP COLUMN shard", "ALTER TABLE benchmarks DROP COLUMN provenance",
            "ALTER TABLE runs DROP COLUMN origin", "ALTER TABLE runs DROP COLUMN stage", "ALTER TABLE runs DROP COLUMN device_mem_bytes", "ALTER TABLE runs DROP COLUMN step_ms_mean", "ALTER TABLE runs DROP COLUMN opt_ms_median", "ALTER TABLE runs DROP COLUMN opt_ms_mean", "ALTER TABLE runs DROP COLUMN git_rev", "ALTER TABLE runs DROP COLUMN host", "ALTER TABLE runs DROP COLUMN other_cpu", "PRAGMA user_version = 1"):
    db.execute(sql)
PY
"$OPTBENCH" merge --out "$tmp/again.db" --name again "$tmp/v1.db" "$tmp/all.db" 2>"$tmp/err" || fail "merge of a version-1 input: $(cat "$tmp/err")"
[ "$(q "$tmp/v1.db" "pragma user_version")" = 1 ] || fail "an input was changed (migrated)"
python3 - "$tmp/again.db" <<'PY' || fail "nested provenance"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
name, prov = db.execute("select name, provenance from benchmarks").fetchone()
p = json.loads(prov)
assert name == "again"
inner = [s["provenance"] for s in p["sources"] if s["provenance"]]
assert len(inner) == 1 and len(inner[0]["sources"]) == 6, inner
assert db.execute("select count(*) from runs").fetchone()[0] == 16
o = db.execute("select origin from runs where origin like '%<-%'").fetchall()
assert o, "origins of the merged input are chained"
print("nested provenance ok;", p["duplicates"], "duplicates")
PY
# a shard's database missing from the merge: run --resume (the whole matrix)
# on the merged database adds and runs its cells, and gives the unsharded results
"$OPTBENCH" merge --out "$tmp/part.db" "$tmp/s0.db" "$tmp/s2.db" >/dev/null 2>"$tmp/err" || fail "merge of two shards"
grep -q "note: 1 of the 3 shards was not given (1/3): their cells are not in the merged database" "$tmp/err" ||
  fail "the shard not given is not named: $(cat "$tmp/err")"
# a shard's copy given for another shard: named, and its cells kept once
cp "$tmp/s0.db" "$tmp/s0copy.db"
"$OPTBENCH" merge --out "$tmp/copy.db" "$tmp/s0.db" "$tmp/s0copy.db" "$tmp/s2.db" >/dev/null 2>"$tmp/err" || fail "merge with a copy"
grep -q "note: shard 0/3 is in both '$tmp/s0.db' and '$tmp/s0copy.db' (a copy?)" "$tmp/err" ||
  fail "the copied shard is not named: $(cat "$tmp/err")"
# and one merged run left interrupted (its shard died): run again from the start, it loses its origin
q "$tmp/part.db" "update runs set status='interrupted' where cell=0" >/dev/null
"$OPTBENCH" "${M[@]}" --db "$tmp/part.db" --resume 2>"$tmp/err" || fail "resume of a partial merge: $(cat "$tmp/err")"
grep -q "merged benchmark 1 lacks 5 of the 16 cells" "$tmp/err" || fail "the missing cells are not announced: $(cat "$tmp/err")"
[ "$(q "$tmp/part.db" "select count(distinct benchmark_id), count(*), count(distinct cell) from runs")" = "1|16|16" ] ||
  fail "partial merge resumed: $(q "$tmp/part.db" "select count(distinct benchmark_id), count(*), count(distinct cell) from runs")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/part.db" || fail "a partial merge resumed differs from the unsharded run"
[ "$(q "$tmp/part.db" "select origin is null, status from runs where cell=0")" = "1|done" ] ||
  fail "the rerun merged cell: $(q "$tmp/part.db" "select origin, status from runs where cell=0")"
[ "$(q "$tmp/part.db" "select count(origin) from runs")" = 10 ] || fail "origins after the resume: $(q "$tmp/part.db" "select count(origin) from runs")"
# another matrix does not continue it
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.003 --steps 300 --eval-every 100 --backend cpu \
  --db "$tmp/part.db" --resume 2>"$tmp/err" >/dev/null || fail "another matrix"
grep -q "the newest benchmark (1) is not part of this matrix: its run [0-9]* (sgd on quadratic, lr 0.003, seed 1) is not in this matrix; starting a new benchmark" "$tmp/err" || fail "another matrix: $(cat "$tmp/err")"

# shards of another matrix (another --lrs) are refused, and nothing is written
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.003,0.1 --seeds 2 --steps 300 \
  --eval-every 100 --backend cpu --name sweep --shard 1/3 --db "$tmp/other1.db" 2>/dev/null || fail "shard of another matrix"
"$OPTBENCH" merge --out "$tmp/mixed.db" "$tmp/s0.db" "$tmp/other1.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || fail "merging shards of two matrices: rc $rc"
grep -q "are shards of different matrices" "$tmp/err" || fail "two matrices: $(cat "$tmp/err")"
grep -q "their configurations differ: 'lrs: \[0.003, 0.03\]' in the first and 'lrs: \[0.003, 0.1\]' in the second" "$tmp/err" ||
  fail "two matrices: the message names the difference: $(cat "$tmp/err")"
[ ! -e "$tmp/mixed.db" ] || fail "two matrices: an output was written"
# a key one of them lacks is named, not the line after it
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --seeds 2 --steps 300 \
  --eval-every 100 --backend cpu --name sweep --shard 1/3 --db "$tmp/other2.db" 2>/dev/null || fail "shard without lrs"
"$OPTBENCH" merge --out "$tmp/mixed.db" "$tmp/s0.db" "$tmp/other2.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "their configurations differ: 'lrs: \[0.003, 0.03\]' in the first only" "$tmp/err" ||
  fail "a shard without lrs: rc $rc, $(cat "$tmp/err")"
# a merged database keeps its shards' fingerprint: merging it again with
# another matrix's shard is refused too
"$OPTBENCH" merge --out "$tmp/m01.db" "$tmp/s0.db" "$tmp/s1.db" 2>/dev/null || fail "merge of two shards"
"$OPTBENCH" merge --out "$tmp/mixed2.db" "$tmp/m01.db" "$tmp/other1.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "(benchmark 1, merged) and .* are shards of different matrices" "$tmp/err" ||
  fail "a merged database and another matrix's shard: rc $rc: $(cat "$tmp/err")"
"$OPTBENCH" merge --out "$tmp/m012.db" "$tmp/m01.db" "$tmp/s2.db" 2>"$tmp/err" || fail "the merged shards and the last one: $(cat "$tmp/err")"

# a shard run by an earlier build, before two settings existed (made here by
# removing them from its runs' texts): its texts, and so its fingerprint,
# differ, but this build expands its configuration to the same matrix and
# its runs are that matrix's cells over this build's defaults: merged, and
# its cells are the same cells as another build's (dup.db's copies of shard
# 1/3 are duplicates, not cells of their own)
cp "$tmp/s1.db" "$tmp/old1.db"
q "$tmp/old1.db" "update runs set hparams = json_remove(hparams, '$.filter_bias_and_bn'),
                                  workload_params = json_remove(workload_params, '$.inject_nan_step')" >/dev/null
q "$tmp/old1.db" "update benchmarks set provenance = json_set(provenance, '$.matrix', '0123456789abcdef')" >/dev/null
"$OPTBENCH" merge --out "$tmp/builds.db" "$tmp/s0.db" "$tmp/old1.db" "$tmp/s2.db" "$tmp/dup.db" 2>"$tmp/err" ||
  fail "shards of two builds: $(cat "$tmp/err")"
grep -q "note: the shards record different matrix fingerprints .* merged as one matrix" "$tmp/err" ||
  fail "shards of two builds: no note: $(cat "$tmp/err")"
grep -q "16 cells, [1-9][0-9]* duplicates left out, 0 conflicts" "$tmp/err" || fail "shards of two builds: counts: $(cat "$tmp/err")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/builds.db" || fail "shards of two builds: results differ from the unsharded run"
[ "$(q "$tmp/builds.db" "select json_extract(provenance, '$.matrix') from benchmarks")" = \
  "$(q "$tmp/s0.db" "select json_extract(provenance, '$.matrix') from benchmarks")" ] ||
  fail "shards of two builds: the merged database does not record this build's fingerprint"
# ... but not where a run differs in a setting this build has a default for
cp "$tmp/old1.db" "$tmp/old1b.db"
q "$tmp/old1b.db" "update runs set hparams = json_set(hparams, '$.beta1', 0.8) where optimizer = 'adam' and cell = 7" >/dev/null
"$OPTBENCH" merge --out "$tmp/builds2.db" "$tmp/s0.db" "$tmp/old1b.db" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "are shards of different matrices .*; run [0-9]* of '$tmp/old1b.db' (.*) is not cell 7 of the matrix its configuration gives here" "$tmp/err" &&
  [ ! -e "$tmp/builds2.db" ] || fail "a shard with another setting: rc $rc: $(cat "$tmp/err")"

# a database whose runs were all deleted: merged, with nothing to sort
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.1 --steps 5 --backend cpu --db "$tmp/noruns.db" \
  >/dev/null 2>&1 || fail "the run for noruns.db"
for t in curves evals events runs; do q "$tmp/noruns.db" "delete from $t" >/dev/null; done
"$OPTBENCH" merge --out "$tmp/m-noruns.db" "$tmp/noruns.db" >"$tmp/out" 2>&1 ||
  fail "merging a database without runs: $(cat "$tmp/out")"
grep -q "merged 0 runs" "$tmp/out" || fail "merging a database without runs: $(cat "$tmp/out")"

# a shard still being written is read as it was at one moment: the cells
# merge says are not finished are the unfinished rows it wrote, three times
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01 --seeds 2 --steps 20000 \
  --eval-every 5000 --backend cpu --db "$tmp/live.db" >/dev/null 2>&1 & live=$!
wait_for "$tmp/live.db-wal"
for k in 1 2 3; do
  sleep 0.3
  rm -f "$tmp/mlive.db"
  "$OPTBENCH" merge --out "$tmp/mlive.db" "$tmp/live.db" >"$tmp/out" 2>&1 || fail "merge of a live shard: $(cat "$tmp/out")"
  said=$(grep -o '[0-9]* cells\? not finished' "$tmp/out" | cut -d' ' -f1)
  rows=$(q "$tmp/mlive.db" "select count(*) from runs where status not in ('done', 'diverged', 'failed')")
  [ "${said:-0}" = "$rows" ] || fail "merge of a live shard: it said ${said:-0} not finished, wrote $rows: $(cat "$tmp/out")"
done
kill $live 2>/dev/null; wait $live 2>/dev/null

echo "$fails failed"
[ $fails -eq 0 ]
