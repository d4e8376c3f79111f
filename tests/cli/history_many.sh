#!/usr/bin/env bash
# `optbench history` over several databases (--db repeated: a database per
# night, as the nightly recipe keeps them) is the history of one database
# holding all their benchmarks: the same series, labelled over the runs of
# every file (a configuration two nights ran differently gets two series even
# though each night's file alone labels it "adam"), the same values, the
# benchmarks by date whatever the order of --db, each named DATABASE:ID;
# --last N shows the N latest, labelled over their own runs. A
# file given twice, a copy of another, an --out file that is one of them:
# refused (exit 2), nothing written.
. "$(dirname "$0")/common.bash"
r=(--workloads quadratic --lrs 0.01,0.1 --seeds 2 --steps 40 --backend cpu)
night() { # database, optimizers, more args...
  local db=$1 opts=$2; shift 2
  "$OPTBENCH" run "${r[@]}" --optimizers "$opts" --db "$db" "$@" >>"$tmp/run.log" 2>&1 ||
    fail "run $db $opts $*: $(tail -n2 "$tmp/run.log")"
}
hist() { # output file, args...
  local out=$1; shift
  "$OPTBENCH" history "$@" >"$out" 2>&1 || { echo "FAIL: history $*"; cat "$out"; fail=1; }
}
# three nights, each in a file of its own and all in one database; the
# second night's adam with beta2=0.95, the third's with quadratic.noise=2
night "$tmp/n1.db" sgd,adam
night "$tmp/n2.db" sgd,adam --set adam.beta2=0.95
night "$tmp/n3.db" sgd,adam --set quadratic.noise=2
night "$tmp/one.db" sgd,adam
night "$tmp/one.db" sgd,adam --set adam.beta2=0.95
night "$tmp/one.db" sgd,adam --set quadratic.noise=2
# the nights' dates, a day apart, the last first in --db below
for k in 1 2 3; do
  q "$tmp/n$k.db" "update benchmarks set created_at = '2026-12-0${k}T02:00:00Z'" >/dev/null
  q "$tmp/one.db" "update benchmarks set created_at = '2026-12-0${k}T02:00:00Z' where id = $k" >/dev/null
done
hist "$tmp/one.out" --db "$tmp/one.db" --out "$tmp/one"
hist "$tmp/many.out" --db "$tmp/n3.db" --db "$tmp/n1.db" --db "$tmp/n2.db" --out "$tmp/many"
cat "$tmp/many.out"
check "heading: 3 benchmarks in 3 databases" grep -q '^median final training loss at the best lr over 3 benchmarks in 3 databases (lower is better)$' "$tmp/many.out"
check "the databases numbered in --db order" grep -qxF "benchmarks named DATABASE:ID, the databases numbered in --db order: 1 $tmp/n3.db, 2 $tmp/n1.db, 3 $tmp/n2.db" "$tmp/many.out"
check "rows by date, named DATABASE:ID: $(grep -oE '^[0-9]:1 +2026-12-0[0-9]' "$tmp/many.out" | tr -s ' ' | tr '\n' ';')" \
  test "$(grep -oE '^[0-9]:1 +2026-12-0[0-9]' "$tmp/many.out" | tr -s ' ' | tr '\n' ';')" = "2:1 2026-12-01;3:1 2026-12-02;1:1 2026-12-03;"
check "adam's two configurations apart" grep -q 'quadratic noise=0.01 adam beta2=0.95 ' "$tmp/many.out"
python3 - "$tmp/one/history.csv" "$tmp/many/history.csv" <<'PY' || fail=1
import csv, sys
one = list(csv.reader(open(sys.argv[1])))
many = list(csv.reader(open(sys.argv[2])))
# the same series, in the same order, with the same values
assert one[0][:4] == ["benchmark_id", "created_at", "git_rev", "label"], one[0]
assert many[0][:5] == ["benchmark", "created_at", "git_rev", "label", "database"], many[0]
assert one[0][4:] == many[0][5:], ("series differ", one[0][4:], many[0][5:])
assert len(one[0]) == 9, ("adam's 3 series and sgd's 2", one[0])
for a, b in zip(one[1:], many[1:]):
    assert a[4:] == b[5:], ("values differ", a, b)
    assert a[1] == b[1], ("dates differ", a, b)
assert [r[0] for r in many[1:]] == ["2:1", "3:1", "1:1"], [r[0] for r in many[1:]]
assert [r[4].rsplit("/", 1)[-1] for r in many[1:]] == ["n1.db", "n2.db", "n3.db"], many
assert all("#" + r[0] + " " in r[3] for r in many[1:]), [r[3] for r in many[1:]]
PY
# the figure reads the series from history.csv's sixth column on
check "history.gp: the first series is column 6" grep -q "using 0:6:xtic(tick(strcol(1), strcol(2), strcol(3)))" "$tmp/many/history.gp"
check "history.gp: no series at column 5" test "$(grep -c 'using 0:5' "$tmp/many/history.gp")" = 0
if command -v gnuplot >/dev/null 2>&1; then check "history.png rendered" test -s "$tmp/many/history.png"; fi
# a panel per workload past 16 series reads the same columns
for k in 4 5; do
  night "$tmp/p$k.db" sgd,adam,adamw,nadam,radam,adamax,adagrad,rmsprop,lion --set quadratic.noise=$k
done
hist "$tmp/p.out" --db "$tmp/p4.db" --db "$tmp/p5.db" --out "$tmp/p"
check "panels: the first series is column 6" grep -qF "using 0:6:xtic(\"#\" . strcol(1))" "$tmp/p/history.gp"
check "panels: a row per series, a column per benchmark" grep -qE '^bench +1:1 +2:1$' "$tmp/p.out"

# --last N: the N latest benchmarks, whatever the order of --db, their
# series labelled over every night read, so that a label stays as the
# window moves (night 2's adam is "adam beta2=0.95" because night 1 ran
# the default, though night 1 is not shown); of one database too
hist "$tmp/l.out" --db "$tmp/n3.db" --db "$tmp/n1.db" --db "$tmp/n2.db" --last 2 --out "$tmp/l"
check "--last 2: said in the heading" grep -q '^median final training loss at the best lr over the 2 latest of 3 benchmarks in 3 databases' "$tmp/l.out"
check "--last 2: nights 2 and 3: $(cut -d, -f1 "$tmp/l/history.csv" | tr '\n' ' ')" \
  test "$(cut -d, -f1 "$tmp/l/history.csv" | tr '\n' ' ')" = '"benchmark" "3:1" "1:1" '
check "--last 2: adam labelled over every night read" \
  test "$(head -1 "$tmp/l/history.csv" | cut -d, -f6-)" = '"quadratic noise=0.01 adam beta2=0.95","quadratic noise=0.01 sgd","quadratic noise=2 adam beta2=0.999","quadratic noise=2 sgd"'
hist "$tmp/l1.out" --db "$tmp/one.db" --last 1
check "--last 1 of one database: $(sed -n 1p "$tmp/l1.out")" grep -q '^median final training loss at the best lr over the latest of 3 benchmarks in ' "$tmp/l1.out"
check "  ... benchmark 3 alone" test "$(grep -cE '^[0-9]+ ' "$tmp/l1.out")/$(grep -cE '^3 ' "$tmp/l1.out")" = 1/1
hist "$tmp/l9.out" --db "$tmp/one.db" --last 9
check "--last 9 of 3: all three" grep -q '^median final training loss at the best lr over 3 benchmarks in ' "$tmp/l9.out"

# with --last, what the window lacks is said as such: an optimizer only
# an earlier night ran is not "not in the databases"
"$OPTBENCH" history --db "$tmp/n1.db" --db "$tmp/n2.db" --db "$tmp/n3.db" --last 1 --optimizer "adam beta2=0.95" \
  >"$tmp/out" 2>&1
check "--last 1 --optimizer of an earlier night: $(cat "$tmp/out")" grep -qxF "optbench: history: no runs match: the 1 latest benchmarks (--last) have no optimizer 'adam beta2=0.95' (--optimizer; a name or a label); their optimizers: 'adam beta2=0.999', 'sgd'" "$tmp/out"
# a --target of a workload only an earlier night ran is no error with --last
night "$tmp/r.db" sgd,adam --workloads rosenbrock
q "$tmp/r.db" "update benchmarks set created_at = '2026-11-30T02:00:00Z'" >/dev/null
hist "$tmp/t.out" --db "$tmp/r.db" --db "$tmp/n1.db" --db "$tmp/n2.db" --last 2 --metric steps_to_target --target rosenbrock=1
check "--last 2 --target of a night left out: shown" grep -q '^targets fixed by --target: rosenbrock=1;' "$tmp/t.out"
# a --target given as the label the history prints (quadratic noise=2)
# fixes the target of that configuration, which its night's file alone
# calls "quadratic"; the other configuration keeps its night's default
hist "$tmp/t0.out" --db "$tmp/n1.db" --db "$tmp/n3.db" --metric steps_to_target --out "$tmp/t0"
hist "$tmp/t1.out" --db "$tmp/n1.db" --db "$tmp/n3.db" --metric steps_to_target --target "quadratic noise=2=1e-30" \
  --out "$tmp/t1"
python3 - "$tmp/t0/history.csv" "$tmp/t1/history.csv" <<'PY' || fail=1
import csv, sys
t0, t1 = (list(csv.DictReader(open(f))) for f in sys.argv[1:3])
for a, b in zip(t0, t1):
    for k in a:
        if k.startswith("quadratic noise=2 ") and a[k] != "":
            assert b[k] in ("inf", ""), ("the noise=2 target was not taken", k, a[k], b[k])
        elif k.startswith("quadratic noise=0.01 "):
            assert a[k] == b[k], ("the other configuration's target moved", k, a[k], b[k])
PY
# one database without the table of its id (an older optbench's) is read
cp "$tmp/n1.db" "$tmp/nometa.db"
q "$tmp/nometa.db" "drop table meta" >/dev/null
hist "$tmp/nm.out" --db "$tmp/nometa.db"
check "a database without its id: read" grep -q '^1 ' "$tmp/nm.out"

# a database without a benchmark with runs is noted and left out
cp "$tmp/n1.db" "$tmp/empty.db"
for sql in "delete from curves" "delete from evals" "delete from events" "delete from runs" \
  "update meta set value = '00000000000000ab' where key = 'database_id'"; do
  q "$tmp/empty.db" "$sql" >/dev/null || fail "empty.db: $sql"
done
hist "$tmp/e.out" --db "$tmp/n1.db" --db "$tmp/empty.db"
check "an empty database: noted" grep -qxF "note: database 2, $tmp/empty.db, holds no benchmark with runs" "$tmp/e.out"
check "  ... the other's benchmark shown" grep -q '^1:1 ' "$tmp/e.out"
# so is, among several, a file a night left empty as it died creating it
: >"$tmp/zero.db"
hist "$tmp/z.out" --db "$tmp/zero.db" --db "$tmp/n1.db"
check "an empty file among several: noted" grep -qxF "note: database 1, $tmp/zero.db, holds no benchmark with runs" "$tmp/z.out"

# refused: exit 2 with the reason, nothing written
refused() { # description, message, args...
  local what=$1 msg=$2; shift 2
  "$OPTBENCH" history "$@" >"$tmp/out" 2>&1; local rc=$?
  check "$what: exit 2 (rc $rc)" test $rc -eq 2
  check "$what: said: $(cat "$tmp/out")" grep -qxF -- "$msg" "$tmp/out"
}
refused "one file twice" "optbench: history: --db '$tmp/./n1.db' is --db '$tmp/n1.db' again (one file given twice); give each database once" \
  --db "$tmp/n1.db" --db "$tmp/./n1.db"
cp "$tmp/n1.db" "$tmp/baseline.db"
refused "a copy" "optbench: history: '$tmp/n1.db' and '$tmp/baseline.db' are copies of one database (database id $(q "$tmp/n1.db" "select value from meta where key = 'database_id'"); a copy keeps it), and their benchmarks would count twice; give one of them (a baseline copied from a night is that night)" \
  --db "$tmp/n1.db" --db "$tmp/n2.db" --db "$tmp/baseline.db"
cp "$tmp/empty.db" "$tmp/empty2.db"
q "$tmp/empty2.db" "update meta set value = '00000000000000cd' where key = 'database_id'" >/dev/null
refused "every database empty" "optbench: history: none of the 2 databases holds a benchmark with runs" \
  --db "$tmp/empty.db" --db "$tmp/empty2.db"
refused "a database that is not there" "optbench: history: database '$tmp/no-such.db' does not exist" \
  --db "$tmp/n1.db" --db "$tmp/no-such.db"
mkdir "$tmp/o"
ln -s "$tmp/n2.db" "$tmp/o/history.csv"
refused "--out holding the second database" "optbench: history: --out '$tmp/o': its file '$tmp/o/history.csv' is a database it reads (--db) ('$tmp/n2.db'): give the output a file of its own ('$tmp/o/history.csv' was left as it was); nothing was written (or give --out another folder)" \
  --db "$tmp/n1.db" --db "$tmp/n2.db" --out "$tmp/o"
check "  ... nothing written" test "$(ls "$tmp/o")" = history.csv
for v in 0 -1 1.5 x; do
  refused "--last $v" "optbench: history: --last '$v' is not a whole number of benchmarks from 1 (e.g. --last 30: the 30 latest)" \
    --db "$tmp/n1.db" --last "$v"
done
refused "a workload none of them ran" "optbench: history: no runs match: the databases have no workload 'nosuch' (--workload; a name or a label); their workloads: 'quadratic noise=0.01', 'quadratic noise=2'" \
  --db "$tmp/n1.db" --db "$tmp/n3.db" --workload nosuch
exit $fail
