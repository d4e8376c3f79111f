#!/usr/bin/env bash
# Bad input: a one-line message naming the offending value (and the config
# file's line), exit status 2, and nothing written to the database.
set -uo pipefail
: "${OPTBENCH:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # expect "message part" args...
  local want=$1; shift
  "$OPTBENCH" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  # one line, notes aside (a flag given twice, as these calls do, draws one)
  if [ $rc -ne 2 ] || ! grep -qF -- "$want" "$tmp/err" || [ "$(grep -vc '^optbench: note: ' "$tmp/err")" -ne 1 ]; then
    echo "FAIL: optbench $*: rc=$rc, stderr:"; cat "$tmp/err"; fails=$((fails+1))
  else
    echo "ok: $(grep -v '^optbench: note: ' "$tmp/err")"
  fi
}
expect_last() { # as expect, for errors found once the run has begun: the message is the last line
  local want=$1; shift
  "$OPTBENCH" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne 2 ] || ! tail -n1 "$tmp/err" | grep -qF -- "$want"; then
    echo "FAIL: optbench $*: rc=$rc, stderr:"; cat "$tmp/err"; fails=$((fails+1))
  else
    echo "ok: $(tail -n1 "$tmp/err")"
  fi
}
# a database with one finished benchmark, whose bytes must not change
"$OPTBENCH" run --workloads quadratic --optimizers sgd --steps 5 --db "$tmp/keep.db" 2>/dev/null
sum_before=$(cat "$tmp/keep.db"* | md5sum)
base=(run --workloads quadratic --optimizers sgd --steps 5 --db "$tmp/keep.db")
expect "unknown workload 'quadratc' (did you mean 'quadratic'?)" run --workloads quadratc --optimizers sgd --db "$tmp/keep.db"
# the misspelt name first, not the missing optimizers; report's --out told apart
expect "unknown workload 'quadratc' (did you mean 'quadratic'?)" run --workloads quadratc --db "$tmp/keep.db"
expect "unknown option '--out' (run writes a database: --db FILE" run --workloads quadratic --optimizers sgd --out "$tmp/o"
expect "unknown optimizer 'adma' (did you mean 'adam'?)" run --workloads quadratic --optimizers adma --db "$tmp/keep.db"
expect "adam has no hyperparameter 'beta3'" run --workloads quadratic --optimizers adam --set adam.beta3=0.9 --db "$tmp/keep.db"
expect "learning rate '1e-3x' is not a number" "${base[@]}" --lrs 0.1,1e-3x
expect "learning rate '1e999' is out of range (a double holds about 1e-308 to 1e308)" "${base[@]}" --lrs 1e999
expect "learning rate 'inf' is not a finite number" "${base[@]}" --lrs inf
expect "learning rate '0x10' is not a number" "${base[@]}" --lrs 0x10
expect "sgd.momentum: '1e999' is out of range for a double" "${base[@]}" --set sgd.momentum=1e999
expect "learning rate -0.1 must be > 0" "${base[@]}" --lrs -0.1
expect "--steps 'abc'" "${base[@]}" --steps abc
expect "adam.beta2 = 1 is out of range" run --workloads quadratic --optimizers adam --set adam.beta2=1 --db "$tmp/keep.db"
# settings of an optimizer or workload outside the matrix are checked all the same
expect "adam has no hyperparameter 'bta2' (did you mean 'beta2'?)" "${base[@]}" --set adam.bta2=0.9
expect "nadam.formula: 'torch3' is not one of" "${base[@]}" --set nadam.formula=torch3
expect "bert-tiny has no hyperparameter 'dmodel'" "${base[@]}" --set bert-tiny.dmodel=3
expect "root has no setting 'coeff_filex' (did you mean 'coeff_file'?)" "${base[@]}" --set root.coeff_filex=x.tsv
expect "unknown option '--stpes'" "${base[@]}" --stpes 3
printf 'workloads: quadratic\noptimizers: sgd\nlrs: [0.1, 0]\n' >"$tmp/bad.yaml"
expect "bad.yaml:3: learning rate 0 must be > 0" run "$tmp/bad.yaml" --db "$tmp/keep.db"
# one byte-order mark is read past; two are named (libyaml said "did not find expected <document start>")
printf '\xef\xbb\xbfworkloads: [quadratic]\noptimizers: [sgd]\n' >"$tmp/bom.yaml"
"$OPTBENCH" run "$tmp/bom.yaml" --dry-run >/dev/null 2>"$tmp/err" ||
  { echo "FAIL: a config with a byte-order mark: $(cat "$tmp/err")"; fails=$((fails+1)); }
printf '\xef\xbb\xbf\xef\xbb\xbfworkloads: [quadratic]\noptimizers: [sgd]\n' >"$tmp/bom2.yaml"
expect "bom2.yaml:1:1: the file starts with two byte-order marks (U+FEFF" run "$tmp/bom2.yaml" --db "$tmp/keep.db"
printf 'workloads: quadratic\noptimizers: sgd\nsteps: 10\nsetps: 3\n' >"$tmp/bad2.yaml"
expect "bad2.yaml:4: unknown key 'setps' (did you mean 'steps'?)" run "$tmp/bad2.yaml" --db "$tmp/keep.db"
expect "cannot open config file" run "$tmp/none.yaml"
# of two bad values, the first in the file is told (an optimizer's before a training setting's)
printf 'workloads: [quadratic]\noptimizers: [sgd]\nhparams:\n  sgd: {momentum: high}\ntrain: {clip_norm: -1}\n' >"$tmp/two.yaml"
expect "two.yaml:4: sgd.momentum: 'high' is not a number" run "$tmp/two.yaml" --db "$tmp/keep.db"
# an empty --db, db:, --name or name: (a shell variable that is not set) is
# refused, not a run into ./optbench.db or a benchmark without a name
( cd "$tmp" && "$OPTBENCH" run --workloads quadratic --optimizers sgd --steps 5 --db "" >/dev/null 2>"$tmp/err"; echo $? >"$tmp/rc" )
[ "$(cat "$tmp/rc")" = 2 ] && grep -qF -- "--db is empty: give the database file (e.g. --db results.db), or leave --db out for ./optbench.db" "$tmp/err" &&
  [ ! -e "$tmp/optbench.db" ] || { echo "FAIL: --db '': $(cat "$tmp/err")"; fails=$((fails+1)); }
printf 'workloads: [quadratic]\noptimizers: [sgd]\ndb:\n' >"$tmp/nodb.yaml"
expect "nodb.yaml:3: db is empty: give the database file (e.g. db: results.db), or remove the key" run "$tmp/nodb.yaml" --steps 5 --dry-run
expect "--name is empty: give the benchmark a name" "${base[@]}" --name ""
printf 'name:\nworkloads: [quadratic]\noptimizers: [sgd]\n' >"$tmp/noname.yaml"
expect "noname.yaml:1: name is empty: give the benchmark a name, or remove the key" run "$tmp/noname.yaml" --db "$tmp/keep.db"
# a word that is no file is not taken for a missing config file: a list
# written with spaces, a name without its flag
expect "'adam' is an optimizer name, not a config file: lists are comma-separated, without spaces (--optimizers sgd,adam)" \
  run --workloads quadratic --optimizers sgd adam --steps 5 --db "$tmp/keep.db"
expect "'quadratic' is a workload name, not a config file: give it with --workloads" \
  run quadratic --optimizers sgd --steps 5 --db "$tmp/keep.db"
expect "if '0.01' belongs to --lrs, lists are comma-separated: --lrs 0.1,0.01" "${base[@]}" --lrs 0.1 0.01
expect "'sgd.dampening=0' is not a config file: each setting takes a --set of its own" \
  "${base[@]}" --set sgd.momentum=0.9 sgd.dampening=0
expect "config file 'nightly' does not exist (run takes one CONFIG.yaml; every other argument is an --option)" \
  run nightly --workloads quadratic --optimizers sgd --db "$tmp/keep.db"
# a NUL byte (a file saved by a broken editor, or a binary given as the config) says where
printf 'workloads: quadratic\noptimizers: [sgd\000]\n' >"$tmp/nul.yaml"
expect "nul.yaml:2:17: a NUL byte (0x00)" run "$tmp/nul.yaml" --db "$tmp/keep.db"
# a file that is not an optbench database is refused and left as it was
echo "precious text, not a database" >"$tmp/notes.txt"
cp "$tmp/notes.txt" "$tmp/notes.orig"
expect "notes.txt" "${base[@]/$tmp\/keep.db/$tmp/notes.txt}"
cmp -s "$tmp/notes.txt" "$tmp/notes.orig" || { echo "FAIL: a foreign file was modified"; fails=$((fails+1)); }
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()" "$tmp/other.db"
expect "other.db" "${base[@]/$tmp\/keep.db/$tmp/other.db}"
# a flag never takes the next option as its value, and an unknown one is named
expect "unknown option '--bogus' (see optbench run --help)" "${base[@]}" --bogus --db "$tmp/keep.db"
expect "--steps needs a value; the next argument '--db' is an option" run --workloads quadratic --optimizers sgd --steps --db "$tmp/keep.db"
expect "unknown option '--dryrun' (did you mean '--dry-run'?)" "${base[@]}" --dryrun
expect "--db needs a value" "${base[@]}" --db
expect "unknown option '--steps=10' (write '--steps 10')" "${base[@]}" --steps=10
expect "--seeds needs a value" "${base[@]}" --seeds --dry-run
expect "seeds 0: one number is a count of seeds (seeds 0..N-1), at least 1; for seed 0 alone write 0..0" "${base[@]}" --seeds 0
printf 'workloads: quadratic\noptimizers: sgd\nseeds: 0\n' >"$tmp/seeds0.yaml"
expect "seeds0.yaml:3: seeds 0: one number is a count of seeds" run "$tmp/seeds0.yaml" --db "$tmp/keep.db"
expect "unknown option '-x'" "${base[@]}" -x
# lists with an empty item, numbers out of range
expect "--lrs: '0.1,,0.2': item 2 is empty" "${base[@]}" --lrs 0.1,,0.2
expect "--lrs: '1e-3:1e-1' is not a learning-rate grid FROM:TO:N (e.g. 1e-4:1e-1:7)" "${base[@]}" --lrs 1e-3:1e-1
expect "--workloads: 'quadratic,': item 2 is empty" "${base[@]}" --workloads quadratic,
expect "--steps '99999999999999999999': out of range (max 1000000000000)" "${base[@]}" --steps 99999999999999999999
printf 'workloads: quadratic\noptimizers: [sgd, adamm]\n' >"$tmp/bad3.yaml"
expect "bad3.yaml:2: unknown optimizer 'adamm' (did you mean 'adam'?)" run "$tmp/bad3.yaml" --db "$tmp/keep.db"
printf 'workloads: quadratic\noptimizers: sgd\nsteps: 99999999999999999999\n' >"$tmp/bad4.yaml"
expect "bad4.yaml:3: steps 99999999999999999999 is out of range (max 1000000000000)" run "$tmp/bad4.yaml" --db "$tmp/keep.db"
expect "--optimizers: unknown optimizer 'adamm'" run --workloads quadratic --optimizers sgd,adamm --db "$tmp/keep.db"
# exclusions name known workloads and optimizers
printf 'workloads: quadratic\noptimizers: [sgd, muon]\nexclude:\n  quadratic: [sgd,\n    muonn]\n' >"$tmp/bad5.yaml"
expect "bad5.yaml:5: exclude: unknown optimizer 'muonn' (did you mean 'muon'?)" run "$tmp/bad5.yaml" --db "$tmp/keep.db"
expect "--exclude: unknown workload 'quadratc' (did you mean 'quadratic'?)" "${base[@]}" --exclude quadratc:sgd
expect "every (workload, optimizer) pair is excluded" "${base[@]}" --exclude quadratic:sgd
expect "--exclude ':sgd': expected WORKLOAD:OPTIMIZER[,OPTIMIZER...], e.g. quadratic:muon,root" "${base[@]}" --exclude :sgd
expect "--exclude 'quadratic:': expected WORKLOAD:OPTIMIZER" "${base[@]}" --exclude quadratic:
expect "--shard '4': expected K/N, e.g. 0/4 (shard K of N, 0 <= K < N)" "${base[@]}" --shard 4
expect "--shard '1.5/4': expected K/N with whole numbers 0 <= K < N <= 1000000" "${base[@]}" --shard 1.5/4
expect "--shard '0/2.5': expected K/N with whole numbers" "${base[@]}" --shard 0/2.5
expect "--shard '4/4': expected K/N with whole numbers 0 <= K < N" "${base[@]}" --shard 4/4
# a routing rule that fails on a workload is bad input, with --dry-run or not,
# and names the rule: nothing is created
rt=(run --workloads quadratic --optimizers muon --steps 5 --set 'muon.route=tag=vector -> muon')
expect "--set: routing rule 'tag=vector -> muon' of muon fails on quadratic" "${rt[@]}" --dry-run --db "$tmp/new.db"
expect "--set: routing rule 'tag=vector -> muon' of muon fails on quadratic" "${rt[@]}" --db "$tmp/new.db"
printf 'workloads: quadratic\noptimizers: muon\nhparams:\n  muon:\n    route: ["tag=matrix -> muon", "tag=vector -> muon"]\n' >"$tmp/bad6.yaml"
expect "bad6.yaml:5: routing rule 'tag=vector -> muon' of muon fails on quadratic" run "$tmp/bad6.yaml" --db "$tmp/new.db"
expect "routing rule 'tag=vector -> muon'" "${rt[@]}" --db "$tmp/keep.db"
[ ! -e "$tmp/new.db" ] || { echo "FAIL: bad routing created $tmp/new.db"; fails=$((fails+1)); }
expect "unknown option '--bogus'" list --bogus
# a key set and swept on the command line: neither flag silently wins
expect "sgd.momentum is both set (--set) and swept (--sweep)" "${base[@]}" --sweep sgd.momentum=0.5,0.7 --set sgd.momentum=0.3
expect "sgd.momentum is both set (--set) and swept (--sweep)" "${base[@]}" --set sgd.momentum=0.3 --sweep sgd.momentum=0.5,0.7
# a database in a folder that does not exist; a database cut short (a copy
# that did not finish): said so, with what to do, and the file left as it was
expect "the folder '$tmp/nodir' of database '$tmp/nodir/x.db' does not exist: create it" \
  run --workloads quadratic --optimizers sgd --steps 5 --db "$tmp/nodir/x.db"
head -c 3000 "$tmp/keep.db" >"$tmp/cut.db"
cut_sum=$(md5sum <"$tmp/cut.db")
expect "are not a whole number of its 4096-byte pages, so it was cut short" report --db "$tmp/cut.db" --out "$tmp/cutrep"
[ "$(md5sum <"$tmp/cut.db")" = "$cut_sum" ] || { echo "FAIL: the cut database changed"; fails=$((fails+1)); }
# two flags that print different things on stdout
expect "--dry-run and --print-config print different things" "${base[@]}" --dry-run --print-config
expect "sgd.momentum is set twice (--set) on the command line" "${base[@]}" --set sgd.momentum=0.3 --set sgd.momentum=0.5
expect "sgd.momentum is swept twice (--sweep) on the command line" "${base[@]}" --sweep sgd.momentum=0.3,0.4 --sweep sgd.momentum=0.5,0.6
# a config file whose name starts with '-' is a file all the same: a flag replaces its setting
printf 'workloads: [quadratic]\noptimizers: [sgd]\nsteps: 5\nhparams: {sgd: {momentum: 0.1}}\n' >"$tmp/-1.yaml"
( cd "$tmp" && "$OPTBENCH" run -1.yaml --sweep sgd.momentum=0.2,0.3 --dry-run >/dev/null 2>"$tmp/err" ) ||
  { echo "FAIL: a flag over the setting of a file named -1.yaml: $(cat "$tmp/err")"; fails=$((fails+1)); }
# several values of a setting in a config file: the message names the sweep
printf 'workloads: [quadratic]\noptimizers: [adam]\nsteps: 5\nhparams: {adam: {beta2: [0.9, 0.99]}}\n' >"$tmp/list.yaml"
expect "list.yaml:4: adam.beta2 must be a single value, not a list (to run each value, sweep it" run "$tmp/list.yaml" --db "$tmp/keep.db"
# --resume with another eval_every than the benchmark was run with: its runs
# would mix two evaluation schedules
expect_last "was run with eval_every 0, this command has 2" "${base[@]}" --resume --eval-every 2
ev=(run --workloads quadratic --optimizers sgd,adam --steps 30 --db "$tmp/ev.db")
"$OPTBENCH" "${ev[@]}" --eval-every 10 2>/dev/null
ev_before=$(cat "$tmp/ev.db"* | md5sum)
expect_last "was run with eval_every 10, this command has 5" "${ev[@]}" --resume --eval-every 5
expect_last "give --eval-every 10 (eval_every: 10 in a config) to continue it" "${ev[@]}" --resume --eval-every 0
[ "$ev_before" = "$(cat "$tmp/ev.db"* | md5sum)" ] || { echo "FAIL: a refused --resume changed the database"; fails=$((fails+1)); }
"$OPTBENCH" "${ev[@]}" --resume --eval-every 10 2>/dev/null || { echo "FAIL: --resume with the same eval_every"; fails=$((fails+1)); }
"$OPTBENCH" "${ev[@]/ev.db/ev0.db}" --eval-every 0 2>/dev/null
expect_last "was run with eval_every 0, this command has 10" "${ev[@]/ev.db/ev0.db}" --resume --eval-every 10
"$OPTBENCH" "${ev[@]/ev.db/ev50.db}" --eval-every 50 2>/dev/null   # 30 steps: evaluated at 0 and 30 only
expect_last "was run with eval_every 50, this command has 10" "${ev[@]/ev.db/ev50.db}" --resume --eval-every 10
# a database whose benchmark does not store its effective configuration (an
# older optbench's): the evaluations tell
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update benchmarks set config = null'); c.commit()" "$tmp/ev50.db"
expect_last "was run with an eval_every above 10, this command has 10" "${ev[@]/ev.db/ev50.db}" --resume --eval-every 10
expect_last "was run with an eval_every above 0, this command has 0" "${ev[@]/ev.db/ev50.db}" --resume --eval-every 0
# ... but eval_every 30 evaluates 30 steps at 0 and 30 as well: let through
"$OPTBENCH" "${ev[@]/ev.db/ev50.db}" --resume --eval-every 30 2>"$tmp/err" ||
  { echo "FAIL: --resume --eval-every 30 of runs evaluated at 0 and 30 only: $(cat "$tmp/err")"; fails=$((fails+1)); }
# no run has a curve or an evaluation yet (a process stopped before its first
# step): nothing tells, and the resume goes ahead
cp "$tmp/ev.db" "$tmp/evnone.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update benchmarks set config = null, finished_at = null'); c.execute('delete from evals'); c.execute('delete from curves'); c.execute('delete from events'); c.execute(\"update runs set status = 'pending'\"); c.commit()" "$tmp/evnone.db"
"$OPTBENCH" "${ev[@]/ev.db/evnone.db}" --resume --eval-every 10 2>"$tmp/err" ||
  { echo "FAIL: --resume of a benchmark without curves or evaluations: $(cat "$tmp/err")"; fails=$((fails+1)); }
grep -q "benchmark 1: 0 of 2 cells finished before, 0 to continue, 2 to start" "$tmp/err" ||
  { echo "FAIL: the plan of a resume whose runs are all pending: $(cat "$tmp/err")"; fails=$((fails+1)); }
cp "$tmp/ev.db" "$tmp/ev10.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update benchmarks set config = null'); c.commit()" "$tmp/ev10.db"
expect_last "was run with eval_every 10, this command has 5" "${ev[@]/ev.db/ev10.db}" --resume --eval-every 5
# a folder where a file belongs, a file where the checkpoints' folder belongs,
# a sweep written flat in a config
mkdir -p "$tmp/cfgdir.yaml"
expect "config file '$tmp/cfgdir.yaml' is a folder" run "$tmp/cfgdir.yaml" --db "$tmp/keep.db"
touch "$tmp/ckfile"
expect "the checkpoints' folder '$tmp/ckfile' is a file" run --workloads quadratic --optimizers sgd --steps 5 \
  --checkpoint-dir "$tmp/ckfile" --db "$tmp/ck.db"
[ ! -e "$tmp/ck.db" ] || { echo "FAIL: a refused run made its database"; fails=$((fails+1)); }
# a checkpoints' or dump folder that cannot be made: refused before any run
for flag in --checkpoint-dir --dump-params; do
  expect "cannot create folder '$tmp/ckfile/sub': Not a directory ('$tmp/ckfile': a file of that name is in the way); give " run --workloads quadratic --optimizers sgd \
    --steps 5 $flag "$tmp/ckfile/sub" --db "$tmp/ck.db"
  [ ! -e "$tmp/ck.db" ] || { echo "FAIL: $flag: a refused run made its database"; fails=$((fails+1)); }
done
# a run refused for its database leaves no folder of its own behind
expect "is not an SQLite database" run --workloads quadratic --optimizers sgd --steps 5 \
  --checkpoint-dir "$tmp/new1/ck" --dump-params "$tmp/new2/a/b" --db "$tmp/notes.txt"
[ ! -e "$tmp/new1" ] && [ ! -e "$tmp/new2" ] || { echo "FAIL: a refused run left folders"; fails=$((fails+1)); }
printf 'workloads: [quadratic]\noptimizers: [sgd]\nsweep: {sgd.momentum: [0.1, 0.2]}\n' >"$tmp/flat.yaml"
expect "flat.yaml:3: sweep: 'sgd.momentum' is OWNER.KEY, which the config writes nested: sweep: {sgd: {momentum: [...]}}" \
  run "$tmp/flat.yaml" --db "$tmp/keep.db"
# an lr that optbench never stores (a row edited by hand): report, history and
# compare say which run, and hang on nothing
cp "$tmp/keep.db" "$tmp/nanlr.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"update runs set lr = 'NaN' where id = (select min(id) from runs)\"); c.commit()" "$tmp/nanlr.db"
for c in "report --db $tmp/nanlr.db --out $tmp/nanrep" "history --db $tmp/nanlr.db" \
         "compare --baseline $tmp/keep.db --candidate $tmp/nanlr.db"; do
  # shellcheck disable=SC2086
  expect "has lr nan, not a learning rate" $c
done
# ... also a run whose id is 0
cp "$tmp/keep.db" "$tmp/zerolr.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('pragma foreign_keys=off'); c.execute(\"update runs set id = 0, lr = 0 where id = (select min(id) from runs)\"); c.commit()" "$tmp/zerolr.db"
expect "run 0 has lr 0, not a learning rate" report --db "$tmp/zerolr.db" --out "$tmp/zerorep"
# a workload's sweep of one value written twice: refused, with the place
expect "--sweep: the sweeps make two configurations of quadratic that are one problem" \
  run --workloads quadratic --optimizers sgd --sweep quadratic.cond=10,1e1 --db "$tmp/wdup.db"
printf 'workloads: [quadratic]\noptimizers: [sgd]\nsweep:\n  quadratic: {cond: [10, 1e1]}\n' >"$tmp/wdup.yaml"
expect "wdup.yaml:4: the sweeps make two configurations of quadratic that are one problem" run "$tmp/wdup.yaml" --db "$tmp/wdup.db"
# a database path too long to hold its checkpoints' names beside it: refused, not cut
long=$(printf 'd/%.0s' $(seq 500))x.db
expect "--db: the path is 1004 bytes long; at most 959" run --workloads quadratic --optimizers sgd --steps 5 --db "$long"
printf 'db: %s\n' "$long" >"$tmp/long.yaml"
expect "long.yaml:1: db: the path is 1004 bytes long" run "$tmp/long.yaml" --workloads quadratic --optimizers sgd
# a flag given twice: the last value is used, and a note says so
"$OPTBENCH" run --workloads quadratic --workloads rosenbrock --optimizers sgd --steps 5 --dry-run >"$tmp/out" 2>"$tmp/err"
if grep -q "note: --workloads is given twice ('quadratic' and 'rosenbrock'): the last is used (a list is one comma-separated value" "$tmp/err" &&
   grep -q rosenbrock "$tmp/out" && ! grep -q quadratic "$tmp/out"
then echo "ok: $(cat "$tmp/err")"; else echo "FAIL: --workloads twice: $(cat "$tmp/err" "$tmp/out")"; fails=$((fails+1)); fi
# an eval_every beyond the run's steps is not an error, but it is said
"$OPTBENCH" run --workloads quadratic --optimizers sgd --steps 5 --eval-every 10 --dry-run >/dev/null 2>"$tmp/err"
if grep -q "note: eval_every 10 is more than the 5 steps of a run: each run is evaluated at its end only" "$tmp/err"
then echo "ok: $(cat "$tmp/err")"; else echo "FAIL: no note for eval_every > steps: $(cat "$tmp/err")"; fails=$((fails+1)); fi
# train.min_lr against the lrs that run: below every one is fine, above one names it and where min_lr was set
"$OPTBENCH" run --workloads quadratic --optimizers adam --lrs 0.1,0.3 --set train.schedule=cosine \
  --set train.min_lr=0.01 --steps 5 --dry-run >/dev/null 2>"$tmp/err" || { echo "FAIL: a min_lr below every lr was refused: $(cat "$tmp/err")"; fails=$((fails+1)); }
expect "--set: train.min_lr = 0.01 is above adam's learning rate 0.003 (of --lrs 0.1,0.003); give a min_lr of at most 0.003" \
  "${base[@]/sgd/adam}" --lrs 0.1,0.003 --set train.schedule=cosine --set train.min_lr=0.01
# an optimizer's own lr where lrs gives its lrs too would be ignored: refused, both places named
printf 'workloads: [quadratic]\noptimizers: [sgd, adam]\nlrs: [0.01]\nhparams: {sgd: {lr: 0.5}}\n' >"$tmp/ownlr.yaml"
expect "ownlr.yaml:4: sgd.lr = 0.5, but the lrs given at $tmp/ownlr.yaml:3 are sgd's learning rates too" \
  run "$tmp/ownlr.yaml" --db "$tmp/keep.db"
expect "--set: adam.lr = 0.3, but the lrs given at --lrs are adam's learning rates too" \
  "${base[@]/sgd/adam}" --lrs 0.1 --set adam.lr=0.3
# ... where lrs leaves it out, it runs at its own
printf 'workloads: [quadratic]\noptimizers: [sgd, adam]\nlrs: {adam: [0.01]}\nhparams: {sgd: {lr: 0.5}}\n' >"$tmp/ownlr2.yaml"
"$OPTBENCH" run "$tmp/ownlr2.yaml" --dry-run 2>/dev/null | grep -qE '^ +0 +[0-9]+ +quadratic +sgd +0\.5 ' ||
  { echo "FAIL: sgd's own lr beside adam's lrs: $("$OPTBENCH" run "$tmp/ownlr2.yaml" --dry-run 2>&1)"; fails=$((fails+1)); }
# settings that do not go together: the place first, the owner once, what to do
expect "optbench: --set: rprop.step_size_min = 10 is above rprop.step_size_max = 1; set them so that" \
  "${base[@]/sgd/rprop}" --set rprop.step_size_min=10 --set rprop.step_size_max=1
printf 'workloads: [bert-tiny]\noptimizers: [adam]\nworkload_params:\n  bert-tiny:\n    dim: 65\n' >"$tmp/dim.yaml"
expect "dim.yaml:5: bert-tiny.dim = 65 is not a multiple of bert-tiny.heads = 4; set dim to a multiple of 4" \
  run "$tmp/dim.yaml" --db "$tmp/keep.db"
expect "optbench: --set: cnn-tiny.groups = 3 does not divide the 16 channels of unit 0; set groups to a divisor of" \
  run --workloads cnn-tiny --optimizers adam --set cnn-tiny.groups=3 --db "$tmp/keep.db"
# the widest stage: width * 2^(stages - 1) channels, 65536 at most (the bound itself is taken)
expect "optbench: --set: cnn-tiny.width = 4096 with cnn-tiny.stages = 6 gives more than 65536 channels" \
  run --workloads cnn-tiny --optimizers sgd --set cnn-tiny.width=4096 --set cnn-tiny.stages=6 --set cnn-tiny.image=64 \
  --db "$tmp/keep.db"
"$OPTBENCH" run --workloads cnn-tiny --optimizers sgd --set cnn-tiny.width=4096 --set cnn-tiny.stages=5 \
  --set cnn-tiny.image=64 --dry-run >/dev/null 2>"$tmp/err" ||
  { echo "FAIL: 65536 channels in the last stage refused: $(cat "$tmp/err")"; fails=$((fails+1)); }
mkdir -p "$tmp/coeffdir"
expect "optbench: --set: root.coeff_file: '$tmp/coeffdir' is a folder: give the tab-separated coefficient file" \
  "${base[@]}" --set root.coeff_file="$tmp/coeffdir"
sum_after=$(cat "$tmp/keep.db"* | md5sum)
[ "$sum_before" = "$sum_after" ] || { echo "FAIL: the database changed"; fails=$((fails+1)); }
echo "$fails failed"
[ $fails -eq 0 ]
