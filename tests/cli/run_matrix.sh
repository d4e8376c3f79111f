#!/usr/bin/env bash
# The example matrix of the README: every cell has a row, done with its full
# curve or diverged with the step; adam at lr 0.01 ends far below its start.
set -euo pipefail
: "${OPTBENCH:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
  --seeds 3 --steps 200 --db "$tmp/r.db" >"$tmp/out" 2>"$tmp/err"
grep -q "backend auto -> cpu" "$tmp/err"
[ "$(grep -c '^\[[0-9]*/36\]' "$tmp/err")" = 36 ]   # one plain line per cell in a pipe
# the run order: a workload's runs seed by seed, every optimizer and lr in
# turn, every other seed's turn reversed
python3 - "$tmp/err" <<'PY'
import re, sys
turns = [m.groups() for m in re.finditer(r"^\[\d+/36\] (\S+) (\S+) lr=(\S+) seed=(\d+):", open(sys.argv[1]).read(), re.M)]
first = [(o, lr) for o in ("sgd", "adam") for lr in ("0.001", "0.01", "0.1")]
want = [(w, o, lr, str(s)) for w in ("quadratic", "rosenbrock") for s in range(3)
        for o, lr in (first if s % 2 == 0 else first[::-1])]
assert turns == want, turns
PY
# --dry-run's turn column gives the same order
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
  --seeds 3 --steps 200 --dry-run >"$tmp/dry"
python3 - "$tmp/err" "$tmp/dry" <<'PY'
import re, sys
ran = [m.groups() for m in re.finditer(r"^\[\d+/36\] (\S+) (\S+) lr=(\S+) seed=(\d+):", open(sys.argv[1]).read(), re.M)]
rows = [l.split() for l in open(sys.argv[2]) if re.match(r"^\s+\d+\s+\d+\s+(quadratic|rosenbrock)\s", l)]
assert len(rows) == 36, rows
listed = [tuple(r[2:6]) for r in sorted(rows, key=lambda r: int(r[1]))]
assert [(w, o, "%g" % float(lr), s) for w, o, lr, s in ran] == [(w, o, "%g" % float(lr), s) for w, o, lr, s in listed], listed
PY
python3 - "$tmp/r.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchall()
assert q("select count(*) from runs")[0][0] == 36, "one row per cell"
bad = q("select id, status from runs where status not in ('done','diverged')")
assert not bad, bad
for rid, steps_done in q("select id, steps_done from runs where status='done'"):
    n = q(f"select count(*), min(step), max(step) from curves where run_id={rid}")[0]
    assert n == (200, 1, 200), (rid, n)
for rid, ds in q("select id, diverged_step from runs where status='diverged'"):
    assert ds is not None and ds >= 1, rid
    assert q(f"select count(*) from events where run_id={rid} and kind='diverged'")[0][0] == 1
for w in ("quadratic", "rosenbrock"):
    for rid, final in q(f"select id, final_loss from runs where workload='{w}' and optimizer='adam' and lr=0.01"):
        first = q(f"select loss from curves where run_id={rid} and step=1")[0][0]
        assert final < first / 10, (w, rid, first, final)
assert q("select count(*) from benchmarks")[0][0] == 1
assert q("select count(*) from runs where step_ms_median is null and status='done'")[0][0] == 0
# the mean and the optimizer's part of the same steps: each step's optimizer
# part lies within it, so its median and mean are at most the step's
for med, mean, om, omean in q("select step_ms_median, step_ms_mean, opt_ms_median, opt_ms_mean "
                              "from runs where status='done'"):
    assert None not in (med, mean, om, omean) and 0 < om <= med and 0 < omean <= mean, (med, mean, om, omean)
print("matrix ok")
PY
# the benchmark records the revision the binary was built from (read at build
# time: a commit after the configure step still shows), where the source is a
# git checkout
if [ -n "${OB_SOURCE_DIR:-}" ] && head=$(git -C "$OB_SOURCE_DIR" rev-parse --short=12 HEAD 2>/dev/null); then
  rev=$(sqlite3 "$tmp/r.db" "select git_rev from benchmarks" 2>/dev/null ||
        python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select git_rev from benchmarks").fetchone()[0])' "$tmp/r.db")
  dirty=$(git -C "$OB_SOURCE_DIR" status --porcelain --untracked-files=no 2>/dev/null)
  want=$head${dirty:+-dirty}
  [ "$rev" = "$want" ] || { echo "FAIL: git_rev '$rev', the source is at '$want' (a binary built before the last commit or edit records the revision it was built from: rebuild)"; exit 1; }
  echo "git_rev ok ($rev)"
fi
# a run that ends within the 5 warm-up steps records no step time (not a warm-up figure)
tmp2=$(mktemp -d)
"$OPTBENCH" run --workloads quadratic --optimizers sgd --steps 3 --db "$tmp2/short.db" --backend cpu >/dev/null 2>&1 || exit 1
"$OPTBENCH" run --workloads quadratic --optimizers sgd --steps 6 --db "$tmp2/short.db" --backend cpu >/dev/null 2>&1 || exit 1
python3 - "$tmp2/short.db" <<'PY' || { rm -rf "$tmp2"; exit 1; }
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select steps, step_ms_median from runs order by steps").fetchall()
assert rows[0] == (3, None) and rows[1][0] == 6 and rows[1][1] is not None, rows
print("warm-up rule ok")
PY
rm -rf "$tmp2"
