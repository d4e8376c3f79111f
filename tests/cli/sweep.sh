#!/usr/bin/env bash
# Sweeps besides the lr (--sweep, 'sweep:'): the flags and the config file
# give the same matrix; every configuration has its own lr sweep, best lr,
# ranking row (labelled with its values) and fresh confirmation seeds; a
# --resume finds the benchmark finished; the labels in the report are the
# swept values, and its Setup table (settings.csv) names each
# configuration's settings against the defaults.
. "$(dirname "$0")/common.bash"
flags=(--workloads quadratic --optimizers sgd,adam --lrs 0.01,0.1 --seeds 2 --steps 60 --backend cpu
       --sweep adam.beta2=0.9,0.999 --sweep train.clip_norm=0,1 --confirm-seeds 2)
cat >"$tmp/c.yaml" <<'EOF'
workloads: [quadratic]
optimizers: [sgd, adam]
lrs: [0.01, 0.1]
seeds: 2
steps: 60
backend: cpu
confirm_seeds: 2
sweep:
  adam: {beta2: [0.9, 0.999]}
  train: {clip_norm: [0, 1]}
EOF
"$OPTBENCH" run "${flags[@]}" --dry-run >"$tmp/dry1" 2>&1 || { cat "$tmp/dry1"; exit 1; }
"$OPTBENCH" run "$tmp/c.yaml" --dry-run >"$tmp/dry2" 2>&1 || { cat "$tmp/dry2"; exit 1; }
check "the config file gives the flags' matrix" \
  diff <(grep -v '(--sweep)\|c.yaml:' "$tmp/dry1") <(grep -v '(--sweep)\|c.yaml:' "$tmp/dry2")
check "the dry run counts the configurations" \
  grep -qF '24 cells (6 configurations of 1 workload x 2 optimizers and the sweeps below, x 2 lrs x 2 seeds)' "$tmp/dry1"
check "the dry run shows each cell's configuration" grep -qE '^ +23 +[0-9]+ +quadratic +adam +0.1 +1  beta2=0.999 clip_norm=1$' "$tmp/dry1"

"$OPTBENCH" run "${flags[@]}" --db "$tmp/s.db" >"$tmp/run" 2>&1 || { cat "$tmp/run"; exit 1; }
q() { sqlite3 "$tmp/s.db" "$1"; }
check "24 sweep runs and 12 confirmation runs (2 per configuration)" \
  test "$(q "select count(*) from runs where stage is not 'confirm'") $(q "select count(*) from runs where stage = 'confirm'")" = "24 12"
check "each configuration's fresh seeds ran at its own hyperparameters" \
  test "$(q "select count(distinct json_remove(hparams, '$.lr')) from runs where stage = 'confirm'")" = 6
"$OPTBENCH" run "${flags[@]}" --db "$tmp/s.db" --resume >"$tmp/resume" 2>&1 || { cat "$tmp/resume"; fail=1; }
check "--resume finds it finished" grep -q '0 done, 0 diverged, 0 failed, 36 finished before' "$tmp/resume"

"$OPTBENCH" report --db "$tmp/s.db" --out "$tmp/r" --no-render >"$tmp/report" 2>&1 || { cat "$tmp/report"; fail=1; }
cat "$tmp/report" | head -3
for label in "adam beta2=0.9 clip_norm=0" "adam beta2=0.999 clip_norm=1" "sgd clip_norm=0" "sgd clip_norm=1"; do
  check "the ranking has '$label'" grep -q "$label" <(head -3 "$tmp/report")
  check "summary.md has '$label'" grep -q "| $label |" "$tmp/r/summary.md"
done
check "confirm.csv: 6 configurations" test "$(tail -n +2 "$tmp/r/confirm.csv" | cut -d, -f2 | sort -u | wc -l)" = 6
# the Setup table: each configuration's settings other than the defaults, and its lrs
check "Setup: the workload's steps and seeds" grep -qF 'Workloads: quadratic, 60 steps, 2 seeds (confirmation seeds not counted)' "$tmp/r/summary.md"
check "Setup: adam's swept settings against their defaults" \
  grep -qF '| adam beta2=0.9 clip_norm=1 | beta2 0.9 (default 0.999), train.clip_norm 1 (default 0) | 0.01, 0.1 |' "$tmp/r/summary.md"
check "Setup: a configuration at the defaults" grep -qF '| sgd clip_norm=0 | the defaults | 0.01, 0.1 |' "$tmp/r/summary.md"
check "settings.csv: one row per setting that differs" \
  test "$(grep -c '^"adam beta2=0.9 clip_norm=1","adam",' "$tmp/r/settings.csv") $(grep -c '^"sgd clip_norm=0"' "$tmp/r/settings.csv")" = "2 0"
check "settings.csv: the value and the default" grep -qF '"sgd clip_norm=1","sgd","train.clip_norm","1","0"' "$tmp/r/settings.csv"
# a run whose hparams are not JSON (a damaged row): the report still comes, and says so
cp "$tmp/s.db" "$tmp/bad.db"
sqlite3 "$tmp/bad.db" "update runs set hparams = 'not json' where id = (select min(id) from runs where optimizer = 'sgd')"
check "a report with a run whose hparams are not JSON" \
  "$OPTBENCH" report --db "$tmp/bad.db" --out "$tmp/rbad" --no-render >/dev/null 2>&1
check "its Setup row says the settings are unknown" grep -qF "| unknown: its runs' hparams are not JSON |" "$tmp/rbad/summary.md"
# a workload's swept parameter: its configurations listed by value (5, 10,
# 20, 100), not as text (10, 100, 20, 5)
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.1 --steps 5 --backend cpu \
  --sweep quadratic.cond=20,5,100,10 --db "$tmp/wl.db" >/dev/null 2>&1 || { echo "the workload sweep failed"; fail=1; }
"$OPTBENCH" report --db "$tmp/wl.db" --out "$tmp/rwl" --no-render >/dev/null 2>&1 || { echo "its report failed"; fail=1; }
check "workload configurations by value: $(cut -d, -f1 "$tmp/rwl/summary.csv" | tr '\n' ' ')" \
  test "$(cut -d, -f1 "$tmp/rwl/summary.csv" | tr -d '"' | tr '\n' ' ')" = \
  "workload quadratic cond=5 quadratic cond=10 quadratic cond=20 quadratic cond=100 "
# every configuration of an optimizer diverged at every lr: its tuning budget
# has no line (gnuplot refused the all-undefined series: the report failed);
# the figure is not drawn and says why, or leaves that optimizer out and says so
"$OPTBENCH" run --workloads quadratic --optimizers adam --lrs 1000 --seeds 2 --steps 30 --backend cpu \
  --sweep adam.beta2=0.9,0.99 --db "$tmp/gone.db" >/dev/null 2>&1 || { echo "the diverging sweep failed"; fail=1; }
"$OPTBENCH" report --db "$tmp/gone.db" --out "$tmp/rgone" >"$tmp/rgone.out" 2>&1 ||
  { echo "FAIL: a report with every configuration diverged: $(cat "$tmp/rgone.out")"; fail=1; }
check "the budget figure not drawn, said: $(grep -o 'Tuning budget on quadratic:</b>[^<]*' "$tmp/rgone/index.html")" \
  grep -q "Tuning budget on quadratic:</b> every configuration of adam diverged at every lr" "$tmp/rgone/index.html"
"$OPTBENCH" run --workloads quadratic --optimizers adam,sgd --lrs 1000 --seeds 2 --steps 30 --backend cpu \
  --sweep adam.beta2=0.9,0.99 --sweep sgd.momentum=0,0.5 --db "$tmp/half.db" >/dev/null 2>&1
"$OPTBENCH" run --workloads quadratic --optimizers adam,sgd --lrs 0.001 --seeds 2 --steps 30 --backend cpu \
  --sweep adam.beta2=0.9,0.99 --sweep sgd.momentum=0,0.5 --db "$tmp/half2.db" >/dev/null 2>&1
python3 - "$tmp/half.db" "$tmp/half2.db" <<'PY'
import sqlite3, sys
# adam's runs of the second database are replaced by diverged ones: sgd keeps a line, adam has none
a, b = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
for col in ("status", "final_loss", "diverged_step"):
    for rid, val in a.execute(f"select cell, {col} from runs where optimizer = 'adam'"):
        b.execute(f"update runs set {col} = ? where cell = ? and optimizer = 'adam'", (val, rid))
b.commit()
PY
# (sgd's momentum figure too: its lr labels' reset sat behind an x undefined
# on the file's first row, adam's beta2, and gnuplot stopped on it)
"$OPTBENCH" report --db "$tmp/half2.db" --out "$tmp/rhalf" >"$tmp/rhalf.out" 2>&1 ||
  { echo "FAIL: a report with one optimizer's configurations all diverged: $(cat "$tmp/rhalf.out")"; fail=1; }
check "the budget figure leaves adam out and says so" \
  grep -q "Not drawn: adam (every configuration diverged at every lr)" "$tmp/rhalf/index.html"
exit $fail
