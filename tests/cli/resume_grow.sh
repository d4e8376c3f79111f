#!/usr/bin/env bash
# --resume of a matrix that grew from an earlier benchmark (another
# optimizer, more lrs, seeds, search trials or studies, its cells listed in
# another order): the benchmark's runs are kept, renumbered to the grown matrix's
# cells, and only the new cells run (--dry-run says so first); the database then equals a fresh run of
# the grown matrix cell by cell. Confirmation runs move with it; where the
# matrix adds runs of their optimizer on their workload, the confirmation
# stage runs again and retires (keeps, at no cell) those at an lr that is
# no longer the best, and one whose seed the grown sweep runs is retired at
# once. For a matrix that drops cells or a shard, a new benchmark starts and
# the message says why. A benchmark another process is running (in a cell, or
# between two: its benchmark's lock) is not
# renumbered under it: bad input, nothing changed.
. "$(dirname "$0")/common.bash"
base=(run --workloads quadratic,rosenbrock --lrs 0.003,0.03 --seeds 2 --steps 300 --eval-every 100 --backend cpu)
ids() { q "$1" "select id || ':' || coalesce(finished_at, '') from runs where benchmark_id = 1 order by id"; }

# another optimizer, with one of the earlier runs left interrupted
"$OPTBENCH" "${base[@]}" --optimizers sgd,adam --db "$tmp/a.db" 2>/dev/null || fail "first run"
q "$tmp/a.db" "update runs set status = 'interrupted', finished_at = null where id = 3" >/dev/null
before=$(ids "$tmp/a.db" | grep -v '^3:')
# the dry run says what --resume would do, and changes nothing
cp "$tmp/a.db" "$tmp/a0.db"
"$OPTBENCH" "${base[@]}" --optimizers sgd,lion,adam --db "$tmp/a.db" --resume --dry-run >"$tmp/dry" 2>&1 ||
  fail "dry run: $(cat "$tmp/dry")"
grep -q "^--resume: it would continue benchmark 1, which holds 16 of this matrix's 24 cells (the matrix grew): 15 of 24 cells finished, 1 to continue, 8 to start$" \
  "$tmp/dry" || fail "the dry run's preview: $(tail -2 "$tmp/dry")"
cmp -s "$tmp/a.db" "$tmp/a0.db" || fail "the dry run changed the database"
"$OPTBENCH" "${base[@]}" --optimizers sgd,adam --db "$tmp/a.db" --resume --dry-run >"$tmp/dry" 2>&1 || fail "dry run 2"
grep -q "^--resume: it would continue benchmark 1: 15 of 16 cells finished, 1 to continue, 0 to start$" "$tmp/dry" ||
  fail "the dry run's preview of the same matrix: $(tail -2 "$tmp/dry")"
"$OPTBENCH" "${base[@]}" --optimizers sgd,adam --db "$tmp/none.db" --resume --dry-run >"$tmp/dry" 2>&1 || fail "dry run 3"
grep -q "^--resume: no database '$tmp/none.db' yet; it would start a new benchmark$" "$tmp/dry" && [ ! -e "$tmp/none.db" ] ||
  fail "the dry run without a database: $(tail -2 "$tmp/dry")"
"$OPTBENCH" "${base[@]}" --optimizers sgd,lion,adam --db "$tmp/a.db" --resume 2>"$tmp/err" >/dev/null ||
  fail "grown by an optimizer: $(cat "$tmp/err")"
grep -q "resume: benchmark 1 holds 16 of this matrix's 24 cells (the matrix grew): the 8 others are added to it" \
  "$tmp/err" || fail "the growth is not announced: $(cat "$tmp/err")"
grep -q "15 of 24 cells finished before, 1 to continue, 8 to start" "$tmp/err" ||
  fail "the plan: $(cat "$tmp/err")"
# its runs were stored by this build: no note of texts kept from another
! grep -q "settings texts\|stored by a build without" "$tmp/err" || fail "a note of other texts: $(cat "$tmp/err")"
[ "$(q "$tmp/a.db" "select count(distinct benchmark_id), count(*), count(distinct cell), max(cell) from runs")" = "1|24|24|23" ] ||
  fail "one benchmark of 24 cells: $(q "$tmp/a.db" "select benchmark_id, count(*) from runs group by 1")"
after=$(ids "$tmp/a.db" | grep -v '^3:' | head -15)
[ "$before" = "$after" ] || fail "the finished runs were run again"
"$OPTBENCH" "${base[@]}" --optimizers sgd,lion,adam --db "$tmp/ref.db" 2>/dev/null || fail "reference"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/a.db" >"$tmp/cmp" || fail "grown differs from a fresh run: $(tail -3 "$tmp/cmp")"
# the stored configuration is the grown matrix's
cfg=$(q "$tmp/a.db" "select config from benchmarks where id = 1")
grep -q "^optimizers: \[sgd, lion, adam\]" <<<"$cfg" || fail "the benchmark's configuration: $cfg"
# each run records the build and machine that ran it: here the benchmark's
[ "$(q "$tmp/a.db" "select count(*) from runs r join benchmarks b on b.id = r.benchmark_id where r.git_rev = b.git_rev and r.host = b.host")" = 24 ] ||
  fail "the runs' revision and host: $(q "$tmp/a.db" "select distinct git_rev, host from runs")"
# finished: a second --resume has nothing to do
"$OPTBENCH" "${base[@]}" --optimizers sgd,lion,adam --db "$tmp/a.db" --resume 2>"$tmp/err" >/dev/null || fail "again"
grep -q "24 of 24 cells finished before, 0 to continue" "$tmp/err" || fail "again: $(cat "$tmp/err")"

# the same cells in another order: renumbered, nothing run
"$OPTBENCH" "${base[@]}" --optimizers adam,lion,sgd --db "$tmp/a.db" --resume 2>"$tmp/err" >/dev/null || fail "reordered"
grep -q "benchmark 1 holds this matrix's 24 cells in another order: renumbered" "$tmp/err" ||
  fail "reordered: $(cat "$tmp/err")"
[ "$(q "$tmp/a.db" "select count(*) from benchmarks"),$(q "$tmp/a.db" "select optimizer from runs where cell = 0")" = "1,adam" ] ||
  fail "reordered: $(q "$tmp/a.db" "select count(*) from benchmarks")"

# more lrs and seeds
"$OPTBENCH" "${base[@]}" --optimizers sgd --db "$tmp/b.db" 2>/dev/null || fail "b"
more=(run --workloads quadratic,rosenbrock --optimizers sgd --lrs 0.001,0.003,0.03 --seeds 3 --steps 300 --eval-every 100
      --backend cpu)
"$OPTBENCH" "${more[@]}" --db "$tmp/b.db" --resume 2>"$tmp/err" >/dev/null || fail "more lrs and seeds"
grep -q "holds 8 of this matrix's 18 cells" "$tmp/err" || fail "more lrs and seeds: $(cat "$tmp/err")"
"$OPTBENCH" "${more[@]}" --db "$tmp/bref.db" 2>/dev/null || fail "bref"
python3 "$here/resume_compare.py" "$tmp/bref.db" "$tmp/b.db" >"$tmp/cmp" || fail "more lrs and seeds: $(tail -3 "$tmp/cmp")"

# a search with more trials keeps its first trials (the same points)
search=(run --workloads quadratic --optimizers adamw --lrs 0.01 --seeds 1 --steps 200 --backend cpu
        --sweep adamw.beta1=0.8..0.99)
"$OPTBENCH" "${search[@]}" --trials 3 --db "$tmp/s.db" 2>/dev/null || fail "search"
"$OPTBENCH" "${search[@]}" --trials 6 --db "$tmp/s.db" --resume 2>"$tmp/err" >/dev/null || fail "more trials"
grep -q "holds 3 of this matrix's 6 cells" "$tmp/err" || fail "more trials: $(cat "$tmp/err")"
"$OPTBENCH" "${search[@]}" --trials 6 --db "$tmp/sref.db" 2>/dev/null || fail "sref"
python3 "$here/resume_compare.py" "$tmp/sref.db" "$tmp/s.db" >"$tmp/cmp" || fail "more trials: $(tail -3 "$tmp/cmp")"

# confirmation runs move with a matrix that adds another optimizer ...
conf=(--confirm-seeds 2)
"$OPTBENCH" "${base[@]}" "${conf[@]}" --optimizers sgd,adam --db "$tmp/c.db" 2>/dev/null || fail "c"
"$OPTBENCH" "${base[@]}" "${conf[@]}" --optimizers sgd,lion,adam --db "$tmp/c.db" --resume 2>"$tmp/err" >/dev/null ||
  fail "confirmed, grown: $(cat "$tmp/err")"
grep -q "10 runs, 6 finished before" "$tmp/err" || fail "the confirmation runs are kept: $(cat "$tmp/err")"
"$OPTBENCH" "${base[@]}" "${conf[@]}" --optimizers sgd,lion,adam --db "$tmp/cref.db" 2>/dev/null || fail "cref"
python3 "$here/resume_compare.py" "$tmp/cref.db" "$tmp/c.db" >"$tmp/cmp" || fail "confirmed, grown: $(tail -3 "$tmp/cmp")"
# ... and with one that adds lrs where they were chosen: the confirmation
# stage runs again, keeps the runs at an lr it confirms again and retires
# (keeps, at no cell) those at an lr that is no longer the best
more=(--optimizers sgd,lion,adam --lrs 0.003,0.03,0.3)
"$OPTBENCH" "${base[@]}" "${conf[@]}" "${more[@]}" --db "$tmp/c.db" --resume 2>"$tmp/err" >/dev/null ||
  fail "confirmed, more lrs: $(cat "$tmp/err")"
grep -q "benchmark 1 holds 24 of this matrix's 36 cells (the matrix grew)" "$tmp/err" ||
  fail "confirmed, more lrs: not continued: $(cat "$tmp/err")"
"$OPTBENCH" "${base[@]}" "${conf[@]}" "${more[@]}" --db "$tmp/cref2.db" 2>/dev/null || fail "cref2"
python3 "$here/resume_compare.py" "$tmp/cref2.db" "$tmp/c.db" >"$tmp/cmp" || fail "confirmed, more lrs: $(tail -3 "$tmp/cmp")"
retired=$(q "$tmp/c.db" "select count(*) from runs where stage = 'confirm' and cell < 0")
kept=$(q "$tmp/c.db" "select count(*) from runs where benchmark_id = 1")
[ $((kept - retired)) = "$(q "$tmp/cref2.db" "select count(*) from runs")" ] ||
  fail "confirmed, more lrs: $kept runs, $retired retired, against $(q "$tmp/cref2.db" "select count(*) from runs")"
if [ "$retired" -gt 0 ]; then
  grep -q "; $retired earlier runs confirming an lr or configuration that is no longer the best retired (kept in the database, at no cell of the matrix)" \
    "$tmp/err" || fail "the retired runs are not said: $(grep confirmation "$tmp/err")"
else
  fail "no best lr moved with lr 0.3 (the test needs one to move)"
fi
# ... and with one that adds seeds: a confirmation run whose seed the sweep
# runs now is retired when the matrix grows
n2=$(q "$tmp/c.db" "select count(*) from runs where stage = 'confirm' and cell >= 0 and seed = 2")
"$OPTBENCH" "${base[@]}" "${conf[@]}" "${more[@]}" --seeds 3 --db "$tmp/c.db" --resume --dry-run >"$tmp/dry" 2>&1
grep -q "; $n2 confirmation runs whose seed the grown sweep runs would be retired$" "$tmp/dry" ||
  fail "the dry run does not say what growing retires ($n2 runs): $(tail -1 "$tmp/dry")"
"$OPTBENCH" "${base[@]}" "${conf[@]}" "${more[@]}" --seeds 3 --db "$tmp/c.db" --resume 2>"$tmp/err" >/dev/null ||
  fail "confirmed, more seeds: $(cat "$tmp/err")"
grep -q "confirmation runs ran a seed that the grown sweep runs now: retired" "$tmp/err" ||
  fail "confirmed, more seeds: $(cat "$tmp/err")"
"$OPTBENCH" "${base[@]}" "${conf[@]}" "${more[@]}" --seeds 3 --db "$tmp/cref3.db" 2>/dev/null || fail "cref3"
python3 "$here/resume_compare.py" "$tmp/cref3.db" "$tmp/c.db" >"$tmp/cmp" || fail "confirmed, more seeds: $(tail -3 "$tmp/cmp")"
[ "$(q "$tmp/c.db" "select count(distinct benchmark_id) from runs")" = 1 ] || fail "a new benchmark was started"
# the report: runs.csv marks the retired runs, the summary counts them
"$OPTBENCH" report --db "$tmp/c.db" --out "$tmp/crep" --no-render >/dev/null 2>&1 || fail "report of the grown benchmark"
n_ret=$(q "$tmp/c.db" "select count(*) from runs where stage = 'confirm' and cell < 0")
[ "$(python3 -c 'import csv,sys; print(sum(r["retired"] == "1" for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/crep/runs.csv")" = "$n_ret" ] ||
  fail "runs.csv's retired column does not count the $n_ret retired runs"
grep -q "$n_ret of them were retired when the sweep grew" "$tmp/crep/summary.md" ||
  fail "the report does not count the $n_ret retired runs: $(grep -o '[0-9]* of the runs are confirmation runs[^.]*\.[^.]*\.' "$tmp/crep/summary.md")"

# fewer cells, or a shard: a new benchmark, and why
"$OPTBENCH" "${base[@]}" --optimizers sgd --db "$tmp/b.db" --resume 2>"$tmp/err" >/dev/null || fail "fewer"
grep -q "the newest benchmark (1) is not part of this matrix: its run [0-9]* (sgd on quadratic, lr 0.001, seed 0) is not in this matrix; starting a new benchmark" \
  "$tmp/err" || fail "fewer cells: $(cat "$tmp/err")"
"$OPTBENCH" "${base[@]}" --optimizers sgd,adam --shard 0/2 --db "$tmp/sh.db" 2>/dev/null || fail "shard"
"$OPTBENCH" "${base[@]}" --optimizers sgd,lion,adam --shard 0/2 --db "$tmp/sh.db" --resume 2>"$tmp/err" >/dev/null ||
  fail "grown shard"
grep -q "starting a new benchmark" "$tmp/err" || fail "a shard is not grown: $(cat "$tmp/err")"

# grow_held DB LOCKFILE MODE: the sgd,adam matrix grown from DB (--resume)
# while another process holds LOCKFILE (flock MODE: EX or SH); rc is the
# command's status, DB0 a copy of DB from before, its output in $tmp/err
grow_held() {
  rm -f "$tmp/held"
  python3 -c "
import fcntl, sys, time
f = open(sys.argv[1], 'a'); fcntl.flock(f, getattr(fcntl, 'LOCK_' + sys.argv[3])); open(sys.argv[2], 'w').close()
time.sleep(60)" "$2" "$tmp/held" "$3" &
  local holder=$!
  wait_for "$tmp/held" || fail "the lock holder did not start"
  cp "$1" "${1%.db}0.db"
  "$OPTBENCH" "${base[@]}" --optimizers sgd,adam --db "$1" --resume 2>"$tmp/err" >/dev/null
  rc=$?
  kill $holder 2>/dev/null
  wait $holder 2>/dev/null
}

# a benchmark another process is running is not renumbered
"$OPTBENCH" "${base[@]}" --optimizers sgd --db "$tmp/d.db" 2>/dev/null || fail "d"
mkdir -p "$tmp/d.db.ckpt/run-2"
printf 'pid 4242 host elsewhere\ncheckpoints %s\n' "$tmp/d.db.ckpt/run-2" >"$tmp/d.db.ckpt/run-2/lock"
grow_held "$tmp/d.db" "$tmp/d.db.ckpt/run-2/lock" EX
[ $rc = 2 ] || fail "a running benchmark grown: rc $rc"
grep -q "this matrix grew from benchmark 1 of '$tmp/d.db', which another process is running (pid 4242 host elsewhere runs its run 2)" \
  "$tmp/err" || fail "a running benchmark: $(cat "$tmp/err")"
[ "$(q "$tmp/d.db" "select id, cell, status from runs")" = "$(q "$tmp/d0.db" "select id, cell, status from runs")" ] ||
  fail "a running benchmark was changed"
[ "$(q "$tmp/d.db" "select count(*) from benchmarks")" = 1 ] || fail "a running benchmark: another benchmark started"
[ ! -e "$tmp/d.db.ckpt/benchmark-1.lock" ] || fail "the refused growth left the benchmark's lock file"
# once it is let go, the same command grows it
"$OPTBENCH" "${base[@]}" --optimizers sgd,adam --db "$tmp/d.db" --resume 2>"$tmp/err" >/dev/null || fail "after the holder"
grep -q "holds 8 of this matrix's 16 cells" "$tmp/err" || fail "after the holder: $(cat "$tmp/err")"

# between two cells a process holds no run's lock, but its benchmark's
# (DB.ckpt/benchmark-ID.lock, shared): growing is refused while it is held
"$OPTBENCH" "${base[@]}" --optimizers sgd --db "$tmp/e.db" 2>/dev/null || fail "e"
[ ! -e "$tmp/e.db.ckpt" ] || fail "the benchmark's lock left behind: $(ls -A "$tmp/e.db.ckpt")"
mkdir -p "$tmp/e.db.ckpt"
grow_held "$tmp/e.db" "$tmp/e.db.ckpt/benchmark-1.lock" SH
[ $rc = 2 ] || fail "a benchmark held between cells grown: rc $rc"
grep -q "this matrix grew from benchmark 1 of '$tmp/e.db', which another process is running: its cells cannot be renumbered" \
  "$tmp/err" || fail "a benchmark held between cells: $(cat "$tmp/err")"
[ "$(q "$tmp/e.db" "select id, cell, status from runs")" = "$(q "$tmp/e0.db" "select id, cell, status from runs")" ] ||
  fail "a benchmark held between cells was changed"
# a process running the benchmark holds it from start to end (a run of
# about 1 s here, still going on a machine 10x faster when the lock is seen)
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.01 --seeds 2 --steps 50000 --backend cpu --db "$tmp/f.db" \
  >/dev/null 2>&1 &
runner=$!
wait_for "$tmp/f.db.ckpt/benchmark-1.lock" || fail "no benchmark lock while running"
if flock -n -x "$tmp/f.db.ckpt/benchmark-1.lock" true; then fail "the running process does not hold its benchmark's lock"; fi
wait $runner || fail "f"
[ ! -e "$tmp/f.db.ckpt" ] || fail "the benchmark's lock left behind: $(ls -A "$tmp/f.db.ckpt")"

# growth where runs were confirmed, the corners
g=(run --workloads quadratic --optimizers sgd --lrs 0.003,0.03 --steps 100 --backend cpu)
# more seeds, resumed without --confirm-seeds: the confirmation stage the
# benchmark was run with runs again (its run of the seed now swept retired)
"$OPTBENCH" "${g[@]}" --seeds 2 --confirm-seeds 1 --db "$tmp/g1.db" >/dev/null 2>&1 || fail "g1"
"$OPTBENCH" "${g[@]}" --seeds 3 --db "$tmp/g1.db" --resume >/dev/null 2>"$tmp/err" || fail "g1 grown: $(cat "$tmp/err")"
[ "$(q "$tmp/g1.db" "select seed || ':' || (cell >= 0) || ':' || status from runs where stage = 'confirm' order by seed" | tr '\n' ' ')" = "2:0:done 3:1:done " ] ||
  fail "more seeds without --confirm-seeds: $(q "$tmp/g1.db" "select seed, cell, status from runs where stage = 'confirm'")"
[ "$(q "$tmp/g1.db" "select (finished_at is not null) || (config like '%confirm_seeds: 1%') from benchmarks")" = 11 ] ||
  fail "more seeds without --confirm-seeds: the benchmark is not finished, or forgot its confirm_seeds"
# an unfinished confirmation run retired: failed, saying why; the benchmark finishes
"$OPTBENCH" "${g[@]}" --seeds 2 --confirm-seeds 1 --db "$tmp/g4.db" >/dev/null 2>&1 || fail "g4"
q "$tmp/g4.db" "update runs set status = 'interrupted', finished_at = null where stage = 'confirm'" >/dev/null
q "$tmp/g4.db" "update benchmarks set finished_at = null" >/dev/null
"$OPTBENCH" "${g[@]}" --seeds 3 --confirm-seeds 1 --db "$tmp/g4.db" --resume >/dev/null 2>"$tmp/err" || fail "g4 grown"
[ "$(q "$tmp/g4.db" "select status || ':' || error from runs where cell < 0")" = "failed:retired before it finished: the grown sweep runs its seed" ] ||
  fail "an unfinished run retired: $(q "$tmp/g4.db" "select status, error from runs where cell < 0")"
[ "$(q "$tmp/g4.db" "select finished_at is not null from benchmarks")" = 1 ] || fail "an unfinished run retired: the benchmark never finishes"
# a confirmation seed that is neither fresh nor swept (seed lists with gaps): a new benchmark, and why
"$OPTBENCH" "${g[@]}" --seeds 0,1 --confirm-seeds 1 --db "$tmp/g2.db" >/dev/null 2>&1 || fail "g2"
"$OPTBENCH" "${g[@]}" --seeds 0,1,9 --confirm-seeds 1 --db "$tmp/g2.db" --resume >/dev/null 2>"$tmp/err" || fail "g2 grown"
grep -q "(its seed is neither a fresh seed nor one of the sweep's); starting a new benchmark" "$tmp/err" ||
  fail "a confirmation seed in a gap of the seeds: $(cat "$tmp/err")"
# confirm_configs best: the configuration that is no longer the best has its
# confirmation runs retired (a fresh run of the grown matrix confirms one)
gc=(--seeds 2 --confirm-configs best --confirm-seeds 1)
"$OPTBENCH" "${g[@]}" "${gc[@]}" --sweep sgd.momentum=0,0.5 --db "$tmp/g3.db" >/dev/null 2>&1 || fail "g3"
"$OPTBENCH" "${g[@]}" "${gc[@]}" --sweep sgd.momentum=0,0.5,0.9 --db "$tmp/g3.db" --resume >/dev/null 2>&1 || fail "g3 grown"
"$OPTBENCH" "${g[@]}" "${gc[@]}" --sweep sgd.momentum=0,0.5,0.9 --db "$tmp/g3ref.db" >/dev/null 2>&1 || fail "g3ref"
python3 "$here/resume_compare.py" "$tmp/g3ref.db" "$tmp/g3.db" >"$tmp/cmp" ||
  fail "confirm_configs best, grown: $(tail -3 "$tmp/cmp")"
[ "$(q "$tmp/g3.db" "select count(*) from runs where stage = 'confirm' and cell < 0")" = 1 ] ||
  fail "confirm_configs best, grown: the earlier best's confirmation run is not retired"

# a search of one study grown to --studies 2: its runs are study 0's (the
# same points of the same search seed), kept and named so, its interrupted
# run continued from its checkpoint; only study 1 runs, and the database
# equals a fresh --studies 2, texts and all
st=(run --workloads quadratic --optimizers sgd,adamw --lrs 0.01 --seeds 1 --steps 20000 --backend cpu
    --set quadratic.dim=256 --eval-every 1000 --checkpoint-every 50 --sweep adamw.beta1=0.8..0.99 --trials 2)
"$OPTBENCH" "${st[@]}" --db "$tmp/st.db" >"$tmp/st1" 2>&1 &
pid=$!
wait_for "$tmp/st.db.ckpt/run-2/ckpt-*.obck" || fail "studies: no checkpoint of the first adamw run"
kill -TERM $pid
wait $pid
[ "$(q "$tmp/st.db" "select status from runs where id = 2")" = interrupted ] ||
  fail "studies: the first adamw run was not interrupted (stopped too late?): $(q "$tmp/st.db" "select id, status from runs")"
"$OPTBENCH" "${st[@]}" --studies 2 --db "$tmp/st.db" --resume --dry-run >"$tmp/st2d" 2>&1
grep -qF "it would continue benchmark 1, which holds 3 of this matrix's 5 cells (the matrix grew)" "$tmp/st2d" ||
  fail "studies grown: the dry run: $(grep resume "$tmp/st2d")"
"$OPTBENCH" "${st[@]}" --studies 2 --db "$tmp/st.db" --resume >"$tmp/st2" 2>&1 || fail "studies grown: $(tail -3 "$tmp/st2")"
grep -qF "1 finished before, 1 continued from a checkpoint" "$tmp/st2" ||
  fail "studies grown: the interrupted run did not continue: $(grep -v '^\[' "$tmp/st2")"
[ "$(q "$tmp/st.db" "select count(distinct benchmark_id) from runs")" = 1 ] || fail "studies grown: a new benchmark"
"$OPTBENCH" "${st[@]}" --studies 2 --db "$tmp/stref.db" >/dev/null 2>&1 || fail "studies: the reference"
python3 "$here/resume_compare.py" "$tmp/stref.db" "$tmp/st.db" >"$tmp/cmp" || fail "studies grown: $(tail -3 "$tmp/cmp")"
[ "$(q "$tmp/st.db" "select group_concat(hparams, ' ') from (select hparams from runs order by cell)")" = \
  "$(q "$tmp/stref.db" "select group_concat(hparams, ' ') from (select hparams from runs order by cell)")" ] ||
  fail "studies grown: the runs' settings texts differ from a fresh --studies 2"

echo "$fails failed"
[ "$fails" -eq 0 ]
