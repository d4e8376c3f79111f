#!/usr/bin/env bash
# Quasi-random search (--trials with ranged sweeps): the flags and a config
# file give the same matrix; each trial is a configuration whose ranged keys
# move together, within their ranges, with its own lr sweep; the runs store
# the values the dry run shows; --print-config reads back into the same
# matrix and --resume finds the benchmark finished; the report draws each
# searched key as a scatter of the optimizer's configurations and names the
# best of them. Bad ranges are bad input, with nothing written.
. "$(dirname "$0")/common.bash"
flags=(--workloads quadratic --optimizers sgd,adamw --lrs 0.01,0.03 --seeds 2 --steps 40 --backend cpu
       --sweep adamw.beta1=0.8..0.99 --sweep adamw.weight_decay=log:1e-4..1e-1 --trials 5)
cat >"$tmp/c.yaml" <<'EOF'
workloads: [quadratic]
optimizers: [sgd, adamw]
lrs: [0.01, 0.03]
seeds: 2
steps: 40
backend: cpu
trials: 5
sweep:
  adamw: {weight_decay: "log:1e-4..1e-1", beta1: 0.8..0.99}
EOF
"$OPTBENCH" run "${flags[@]}" --dry-run >"$tmp/dry1" 2>&1 || { cat "$tmp/dry1"; exit 1; }
"$OPTBENCH" run "$tmp/c.yaml" --dry-run >"$tmp/dry2" 2>&1 || { cat "$tmp/dry2"; exit 1; }
strip() { grep -v '(--sweep)\|(--trials)\|c.yaml:\|e.yaml:' "$1"; }
check "the config file gives the flags' matrix" diff <(strip "$tmp/dry1") <(strip "$tmp/dry2")
check "the dry run counts the trials as configurations" \
  grep -qF '24 cells (6 configurations of 1 workload x 2 optimizers and the sweeps below, x 2 lrs x 2 seeds)' "$tmp/dry1"
check "the dry run names the search" grep -qF 'search: 5 trials' "$tmp/dry1"
# the configurations: 5, distinct in every key, within the ranges
grep -E '^ +[0-9]+ +[0-9]+ +quadratic +adamw ' "$tmp/dry1" | sed 's/.*  beta1=/beta1=/' | sort -u >"$tmp/confs"
check "5 configurations of adamw" test "$(wc -l <"$tmp/confs")" = 5
# another search seed: other configurations, the same ones every time
"$OPTBENCH" run "${flags[@]}" --search-seed 3 --dry-run >"$tmp/dry_s3" 2>&1 || { cat "$tmp/dry_s3"; fail=1; }
"$OPTBENCH" run "${flags[@]}" --search-seed 3 --dry-run >"$tmp/dry_s3b" 2>&1
check "--search-seed 3 draws other points" test "$(grep -c 'beta1=' "$tmp/dry_s3")" = 20 -a \
  "$(grep -E ' adamw ' "$tmp/dry1" | sed 's/.*  beta1=/beta1=/' | sort -u | grep -cxFf - <(grep -E ' adamw ' "$tmp/dry_s3" | sed 's/.*  beta1=/beta1=/' | sort -u))" = 0
check "--search-seed 3 again: the same points" cmp -s "$tmp/dry_s3" "$tmp/dry_s3b"
check "every key distinct across the trials, within its range" python3 - "$tmp/confs" <<'PY'
import sys
rows = [dict(kv.split("=") for kv in line.split()) for line in open(sys.argv[1])]
b1 = [float(r["beta1"]) for r in rows]
wd = [float(r["weight_decay"]) for r in rows]
assert len(set(b1)) == 5 and len(set(wd)) == 5, rows
assert all(0.8 <= x <= 0.99 for x in b1) and all(1e-4 <= x <= 1e-1 for x in wd), rows
PY

"$OPTBENCH" run "${flags[@]}" --db "$tmp/s.db" >"$tmp/run" 2>&1 || { cat "$tmp/run"; exit 1; }
check "24 runs" test "$(q "$tmp/s.db" "select count(*) from runs")" = 24
check "the runs ran at the dry run's values" python3 - "$tmp/s.db" "$tmp/confs" <<'PY'
import json, sqlite3, sys
want = {(float(r["beta1"]), float(r["weight_decay"]))
        for r in (dict(kv.split("=") for kv in l.split()) for l in open(sys.argv[2]))}
got = {(h["beta1"], h["weight_decay"]) for (t,) in sqlite3.connect(sys.argv[1]).execute(
       "select hparams from runs where optimizer = 'adamw'") for h in [json.loads(t)]}
assert got == want, (got, want)
PY
"$OPTBENCH" run "${flags[@]}" --print-config >"$tmp/e.yaml" 2>&1 || { cat "$tmp/e.yaml"; fail=1; }
check "--print-config writes the ranges and the trials" grep -qx 'trials: 5' "$tmp/e.yaml"
"$OPTBENCH" run "$tmp/e.yaml" --dry-run >"$tmp/dry3" 2>&1 || { cat "$tmp/dry3"; fail=1; }
check "--print-config reads back into the same matrix" diff <(strip "$tmp/dry1") <(strip "$tmp/dry3")
"$OPTBENCH" run "${flags[@]}" --db "$tmp/s.db" --resume >"$tmp/resume" 2>&1 || { cat "$tmp/resume"; fail=1; }
check "--resume finds it finished" grep -q '0 done, 0 diverged, 0 failed, 24 finished before' "$tmp/resume"

render=--no-render
command -v gnuplot >/dev/null && render=
"$OPTBENCH" report --db "$tmp/s.db" --out "$tmp/r" $render >"$tmp/report" 2>&1 || { cat "$tmp/report"; fail=1; }
r=$tmp/r
for key in beta1 weight_decay; do
  check "hp_sweep.csv: $key a scatter of adamw's 5 configurations" \
    test "$(grep -c "^\"quadratic\",\"$key\",\"adamw (each configuration)\"," "$r/hp_sweep.csv")" = 5
  check "hp_quadratic_$key is drawn as points with bars" grep -q 'with yerrorbars' "$r/hp_quadratic_$key.gp"
  check "hp_quadratic_$key: no line through the points" \
    test "$(grep -c 'with linespoints' "$r/hp_quadratic_$key.gp")" = 0
done
check "the caption says why there is no line" grep -q 'searched together' "$r/summary.md"
check "best_configuration.csv: adamw's best of its 5, the lowest median" python3 - "$r" <<'PY'
import csv, sys
d = sys.argv[1]
rows = [r for r in csv.DictReader(open(d + "/summary.csv")) if r["optimizer"].startswith("adamw ")]
assert len(rows) == 5, rows
best = min(rows, key=lambda r: float(r["final_median"]))
b = [r for r in csv.DictReader(open(d + "/best_configuration.csv")) if r["optimizer"] == "adamw"][0]
assert b["configurations"] == "5" and "adamw " + b["best_configuration"] == best["optimizer"], (b, best)
PY

# the tuned optimizers' profile: each optimizer on each workload at its
# fastest configuration (a target most configurations reach, so that the
# choice matters), recomputed here from time_to_target.csv
target=$(python3 - "$r/summary.csv" <<'PY'
import csv, statistics, sys
print(statistics.median(float(r["final_median"]) for r in csv.DictReader(open(sys.argv[1]))) * 1.5)
PY
)
"$OPTBENCH" report --db "$tmp/s.db" --out "$tmp/rt" --no-render --target "quadratic=$target" >"$tmp/report2" 2>&1 ||
  { cat "$tmp/report2"; fail=1; }
check "profile_tuned*.csv are written" test -s "$tmp/rt/profile_tuned.csv" -a -s "$tmp/rt/profile_tuned_area.csv" \
  -a -s "$tmp/rt/profile_tuned_picks.csv" -a -s "$tmp/rt/profile_tuned_band.csv"
check "the tuned curves' bands: a row per tau, lo <= hi, both in [0, 1]" python3 - "$tmp/rt" <<'PY'
import csv, sys
d = sys.argv[1]
rho = list(csv.DictReader(open(d + "/profile_tuned.csv")))
band = list(csv.DictReader(open(d + "/profile_tuned_band.csv")))
names = [c for c in rho[0] if c != "tau"]
assert list(band[0]) == ["tau"] + [n + e for n in names for e in (" lo", " hi")], list(band[0])
assert [r["tau"] for r in band] == [r["tau"] for r in rho]
for r in band:
    for n in names:
        lo, hi = float(r[n + " lo"]), float(r[n + " hi"])
        assert 0 <= lo <= hi <= 1, (r, n)
PY
check "  ... drawn under the curves" grep -qF "'profile_tuned_band.csv' skip 1 using 1:2:3 with filledcurves" \
  "$tmp/rt/profile_tuned.gp"
check "the tuned profile: the fastest configuration of each optimizer, and its area" python3 - "$tmp/rt" <<'PY'
import csv, math, sys
d = sys.argv[1]
best = {}
for r in csv.DictReader(open(d + "/time_to_target.csv")):
    name, _, conf = r["optimizer"].partition(" ")
    t = float(r["time_s"])
    if name not in best or t < best[name][0]:
        best[name] = (t, conf if math.isfinite(t) else "")
picks = {r["optimizer"]: r for r in csv.DictReader(open(d + "/profile_tuned_picks.csv"))}
assert set(picks) == set(best) == {"adamw", "sgd"}, picks
reached = [n for n in best if math.isfinite(best[n][0])]
assert len(reached) >= 1, best
for n, (t, conf) in best.items():
    p = picks[n]
    assert p["configurations"] == ("5" if n == "adamw" else "1") and p["study"] == "", p
    assert p["fastest_configuration"] == conf and (float(p["time_s"]) == t or math.isinf(t)), (p, t, conf)
fastest = min(t for t, _ in best.values())
for r in csv.DictReader(open(d + "/profile_tuned_area.csv")):
    ratio = best[r["optimizer"]][0] / fastest
    want = (4 - max(ratio, 1)) / 3 if ratio < 4 else 0
    assert abs(float(r["area"]) - want) < 1e-9, (r, want)
PY
check "summary.md has the tuned optimizers' table" grep -q '^Tuned optimizers: ' "$tmp/rt/summary.md"
# the pick that is the report's first group (time_to_target.csv's first
# row), made the fastest by its runs' step times, at a target every group
# reaches: its time is written, not taken for never reached
cp "$tmp/s.db" "$tmp/s1.db"
b1=$(python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["optimizer"].split("beta1=")[1].split()[0])' \
  "$tmp/rt/time_to_target.csv")
q "$tmp/s1.db" "update runs set step_ms_median = step_ms_median / 1000, step_ms_mean = step_ms_mean / 1000
                where optimizer = 'adamw' and json_extract(hparams, '\$.beta1') = $b1" >/dev/null
loose=$(python3 -c 'import csv, sys; print(2 * max(float(r["final_max"]) for r in csv.DictReader(open(sys.argv[1]))))' \
  "$r/summary.csv")
"$OPTBENCH" report --db "$tmp/s1.db" --out "$tmp/r1" --no-render --target "quadratic=$loose" >"$tmp/report1" 2>&1 ||
  { cat "$tmp/report1"; fail=1; }
check "the first group's pick: its time" python3 - "$tmp/r1" "$b1" <<'PY'
import csv, math, sys
d, b1 = sys.argv[1], sys.argv[2]
first = next(csv.DictReader(open(d + "/time_to_target.csv")))
assert first["optimizer"].startswith("adamw beta1=" + b1 + " ") and math.isfinite(float(first["time_s"])), first
p = [r for r in csv.DictReader(open(d + "/profile_tuned_picks.csv")) if r["optimizer"] == "adamw"][0]
assert "adamw " + p["fastest_configuration"] == first["optimizer"], (p, first)
assert float(p["time_s"]) == float(first["time_s"]) and p["steps"] == first["steps"], (p, first)
PY
check "one search: no note of several" test "$(grep -c 'searches of other search seeds' "$tmp/rt/summary.md")" = 0
# a second search of another seed in the same database: two studies, scored
# as AlgoPerf does (the median over them of each one's fastest), and
# --benchmark takes one
cp "$tmp/s.db" "$tmp/s2.db"
"$OPTBENCH" run "${flags[@]}" --search-seed 4 --db "$tmp/s2.db" >"$tmp/run_s4" 2>&1 || { cat "$tmp/run_s4"; fail=1; }
"$OPTBENCH" report --db "$tmp/s2.db" --out "$tmp/r2" --no-render >/dev/null 2>&1 || fail=1
check "two searches: two studies" \
  grep -qF "The configurations come from 2 studies (searches of other search seeds: 2 benchmarks whose search seeds are 0, 4): as AlgoPerf scores them" "$tmp/r2/summary.md"
check "  ... the median of the two studies' fastest" python3 - "$tmp/r2" "$tmp/s2.db" <<'PY'
import csv, math, sqlite3, sys
d, db = sys.argv[1], sys.argv[2]
a = {r["optimizer"]: r for r in csv.DictReader(open(d + "/profile_tuned_area.csv"))}
assert a["adamw"]["studies"] == "2" and a["sgd"]["studies"] == "1", a
# each benchmark's adamw configurations (by beta1), their fastest, and of the
# two the slower (the upper of two middle ones)
bench = {}
for b1, bid in sqlite3.connect(db).execute(
        "select distinct json_extract(hparams, '$.beta1'), benchmark_id from runs where optimizer = 'adamw'"):
    bench.setdefault(float(b1), bid)
fast = {}
for r in csv.DictReader(open(d + "/time_to_target.csv")):
    if r["optimizer"].startswith("adamw "):
        bid = bench[float(r["optimizer"].split("beta1=")[1].split()[0])]
        fast[bid] = min(fast.get(bid, math.inf), float(r["time_s"]))
assert len(fast) == 2, fast
p = [r for r in csv.DictReader(open(d + "/profile_tuned_picks.csv")) if r["optimizer"] == "adamw"][0]
want = max(fast.values())
assert float(p["time_s"]) == want or (math.isinf(want) and math.isinf(float(p["time_s"]))), (p, fast)
assert p["study"] == ("0" if math.isfinite(want) else ""), p
# the study's benchmark: the one whose fastest is that median
assert (p["study_benchmark"] in [str(b) for b, v in fast.items() if v == want] if math.isfinite(want)
        else p["study_benchmark"] == ""), (p, fast)
PY
"$OPTBENCH" report --db "$tmp/s2.db" --benchmark 2 --out "$tmp/r2b" --no-render >/dev/null 2>&1 || fail=1
check "one of them alone: no note" test "$(grep -c 'searches of other search seeds' "$tmp/r2b/summary.md")" = 0
# a search of seed 0 as builds before 2026-12-06 drew it (search_draws 1)
# beside the one of this build: two searches, each seed saying its draws
cp "$tmp/s.db" "$tmp/s3.db"
"$OPTBENCH" run "${flags[@]}" --search-draws 1 --db "$tmp/s3.db" >"$tmp/run_d1" 2>&1 || { cat "$tmp/run_d1"; fail=1; }
"$OPTBENCH" report --db "$tmp/s3.db" --out "$tmp/r3" --no-render >/dev/null 2>&1 || fail=1
check "the same seed drawn two ways: two searches" grep -qF "come from 2 studies (searches of other search seeds: 2 \
benchmarks whose search seeds are 0 of search_draws 2, 0 of search_draws 1)" "$tmp/r3/summary.md"
# studies (AlgoPerf's): studies: 3 runs three searches, study s of search seed
# s (its points those of --search-seed s); the tuned profile's time on a
# workload is the median over the studies of each study's fastest trial
sflags=(--workloads quadratic --optimizers sgd,adamw --lrs 0.01,0.03 --seeds 1 --steps 40 --backend cpu
        --sweep adamw.beta1=0.8..0.99 --trials 2)
"$OPTBENCH" run "${sflags[@]}" --studies 3 --dry-run >"$tmp/dry_st" 2>&1 || { cat "$tmp/dry_st"; fail=1; }
check "the dry run counts 3 studies of 2 trials" grep -qF '14 cells (7 configurations of 1 workload x 2 optimizers' "$tmp/dry_st"
check "the dry run lists 3 x 2 adamw configurations at 2 lrs" test "$(grep -c ' adamw .*beta1=' "$tmp/dry_st")" = 12
check "the dry run names the studies" grep -qF 'studies: 3 searches of 2 trials each, of search seeds 0 to 2' "$tmp/dry_st"
for k in 1 2; do
  "$OPTBENCH" run "${sflags[@]}" --search-seed $k --dry-run >"$tmp/dry_s$k" 2>&1
  check "study $k draws --search-seed $k's points" test \
    "$(grep -E ' adamw ' "$tmp/dry_s$k" | sed 's/.*  beta1=/beta1=/' | sort -u | tr '\n' ' ')" = \
    "$(grep -E ' adamw ' "$tmp/dry_st" | sed 's/.*  beta1=/beta1=/' | sed -n "$((4 * k + 1)),$((4 * k + 4))p" | sort -u | tr '\n' ' ')"
done
"$OPTBENCH" run "${sflags[@]}" --studies 3 --print-config >"$tmp/st.yaml" 2>&1
check "--print-config writes the studies" grep -qx 'studies: 3' "$tmp/st.yaml"
"$OPTBENCH" run "${sflags[@]}" --studies 3 --db "$tmp/st.db" >"$tmp/run_st" 2>&1 || { cat "$tmp/run_st"; fail=1; }
check "each run records its study" test "$(q "$tmp/st.db" "select group_concat(distinct json_extract(hparams, '\$.search.study')) from runs where optimizer = 'adamw'")" = "0,1,2"
"$OPTBENCH" report --db "$tmp/st.db" --out "$tmp/rst" --no-render >/dev/null 2>&1 || fail=1
check "the tuned profile: the median over the studies of each one's fastest" python3 - "$tmp/rst" <<'PY'
import csv, math, sys
d = sys.argv[1]
best = {}
for r in csv.DictReader(open(d + "/time_to_target.csv")):
    if not r["optimizer"].startswith("adamw "):
        continue
    study = int(r["optimizer"].split("search.study=")[1])
    t = float(r["time_s"])
    if study not in best or t < best[study][0]:
        best[study] = (t, r["optimizer"][len("adamw "):])
assert sorted(best) == [0, 1, 2], best
t, conf = sorted(best.values())[1]
study = sorted((v, k) for k, v in best.items())[1][1]
p = [r for r in csv.DictReader(open(d + "/profile_tuned_picks.csv")) if r["optimizer"] == "adamw"][0]
assert float(p["time_s"]) == t or math.isinf(t), (p, best)
assert p["fastest_configuration"] == (conf if math.isfinite(t) else ""), (p, best)
assert p["study"] == (str(study) if math.isfinite(t) else "") and p["configurations"] == "6", (p, best)
a = {r["optimizer"]: r for r in csv.DictReader(open(d + "/profile_tuned_area.csv"))}
assert a["adamw"]["studies"] == "3" and a["adamw"]["configurations"] == "6" and a["sgd"]["studies"] == "1", a
PY
check "the legend says so" grep -qF "median of 3 studies' best of 2" "$tmp/rst/profile_tuned.gp"
check "the title says so" grep -qF "Tuned optimizers (each at the median over its studies of their fastest)" \
  "$tmp/rst/profile_tuned.gp"
# a second benchmark of 3 studies (search seeds 5 to 7) in the same database:
# 6 searches, not 3 pooled by study number
cp "$tmp/st.db" "$tmp/st2.db"
"$OPTBENCH" run "${sflags[@]}" --studies 3 --search-seed 5 --db "$tmp/st2.db" >"$tmp/run_st2" 2>&1 || { cat "$tmp/run_st2"; fail=1; }
"$OPTBENCH" report --db "$tmp/st2.db" --out "$tmp/rst2" --no-render >/dev/null 2>&1 || fail=1
check "two benchmarks of studies: 6 studies of 2" python3 - "$tmp/rst2" <<'PY'
import csv, sys
a = {r["optimizer"]: r for r in csv.DictReader(open(sys.argv[1] + "/profile_tuned_area.csv"))}
assert a["adamw"]["studies"] == "6" and a["adamw"]["configurations"] == "12", a
PY
check "  ... the legend says so" grep -qF "median of 6 studies' best of 2" "$tmp/rst2/profile_tuned.gp"
check "  ... and the summary" grep -qF "The configurations come from 6 studies (searches of other search seeds: config studies of 2 benchmarks whose first search seeds are 0, 5)" "$tmp/rst2/summary.md"
check "the study is no hyperparameter of the sensitivity figures" test ! -e "$tmp/rst/hp_quadratic_search.study.gp" -a \
  "$(grep -c '"search.study"' "$tmp/rst/hp_sweep.csv")" = 0
# the tuning budget: quartiles of the best of k of adamw's 5 configurations,
# from every draw of k enumerated; sgd (one configuration) has none
check "tuning_budget.csv: the best of k, from every draw of k of 5" python3 - "$r" <<'PY'
import csv, itertools, math, sys
d = sys.argv[1]
loss = sorted(float(r["final_median"]) for r in csv.DictReader(open(d + "/summary.csv"))
              if r["optimizer"].startswith("adamw "))
rows = list(csv.DictReader(open(d + "/tuning_budget.csv")))
assert [r["k"] for r in rows] == ["1", "2", "3", "4", "5"] and {r["optimizer"] for r in rows} == {"adamw"}, rows
for r in rows:
    k = int(r["k"])
    mins = sorted(min(t) for t in itertools.product(loss, repeat=k))
    for q, col in ((0.25, "best_q25"), (0.5, "best_median"), (0.75, "best_q75")):
        want = next(v for v in loss if sum(m <= v for m in mins) >= q * len(mins) - 1e-9)
        assert float(r[col]) == want, (k, col, r[col], want)
PY
check "the tuning budget figure" grep -q "'tuning_budget.csv'" "$r/budget_quadratic.gp"
# on the held-out loss: each configuration at its best lr for it (lr_sweep.csv's
# medians), the best of k from every draw; no metric on quadratic
check "tuning_budget.csv: the held-out best of k, each configuration at its best lr for it" python3 - "$r" <<'PY'
import csv, itertools, math, sys
d = sys.argv[1]
best = {}
for r in csv.DictReader(open(d + "/lr_sweep.csv")):
    if r["optimizer"].startswith("adamw ") and r["eval_loss_median"]:
        v = float(r["eval_loss_median"])
        best[r["optimizer"]] = min(v, best.get(r["optimizer"], math.inf))
loss = sorted(best.values())
assert len(loss) == 5, best
rows = list(csv.DictReader(open(d + "/tuning_budget.csv")))
for r in rows:
    k = int(r["k"])
    mins = sorted(min(t) for t in itertools.product(loss, repeat=k))
    for q, col in ((0.25, "eval_loss_best_q25"), (0.5, "eval_loss_best_median"), (0.75, "eval_loss_best_q75")):
        want = next(v for v in loss if sum(m <= v for m in mins) >= q * len(mins) - 1e-9)
        assert float(r[col]) == want, (k, col, r[col], want)
    assert r["eval_metric_best_median"] == "", r
PY
check "the held-out tuning budget figure" grep -q "'tuning_budget.csv' skip 1 using 4:(sel(\"adamw\") ? \$8 : NaN):10 with filledcurves" \
  "$r/budget_heldout_quadratic.gp"
check "summary.md shows it" grep -q 'Tuning budget on quadratic (held-out loss)' "$r/summary.md"
check "summary.tex: the tuning table, adamw's ends of the budget" python3 - "$r" <<'PY'
import csv, re, sys
d = sys.argv[1]
tex = open(d + "/summary.tex").read()
assert "tab:optbench-tuning" in tex
rows = {r["k"]: r for r in csv.DictReader(open(d + "/tuning_budget.csv")) if r["optimizer"] == "adamw"}
m = re.search(r"\n    adamw & 5 & ([0-9.e+-]+) & ([0-9.e+-]+) & ", tex)
assert m, tex[-800:]
assert abs(float(m.group(1)) - float(rows["1"]["best_median"])) <= 5e-4 * float(rows["1"]["best_median"]), m.groups()
assert abs(float(m.group(2)) - float(rows["5"]["best_median"])) <= 5e-4 * float(rows["5"]["best_median"]), m.groups()
PY
check_tex "summary.tex with the tuning table compiles" "$r/summary.tex" || echo "note: pdflatex with booktabs not installed: summary.tex not compiled"
check "summary.md shows it" grep -q 'Tuning budget on quadratic' "$r/summary.md"
# without sweeps none, and a report into the same folder removes the old ones
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adamw --lrs 0.01 --steps 20 --backend cpu --db "$tmp/n.db" \
  >"$tmp/run3" 2>&1 || { cat "$tmp/run3"; fail=1; }
"$OPTBENCH" report --db "$tmp/n.db" --out "$tmp/rt" --no-render >"$tmp/report3" 2>&1 || { cat "$tmp/report3"; fail=1; }
check "no tuned profile without sweeps" test -z "$(ls "$tmp/rt" | grep profile_tuned)"
check "nor its table" test "$(grep -c '^Tuned optimizers: ' "$tmp/rt/summary.md")" = 0
check "nor the paragraph on configurations" test "$(grep -c '^Configurations: sweeps or a quasi-random' "$tmp/rt/summary.md")" = 0
check "with them, How to read says how configurations are summed up" \
  grep -q '^Configurations: sweeps or a quasi-random search' "$r/summary.md"

# more configurations on a workload than its curve figures can show apart
# (13 > 12): the loss and lr figures draw each optimizer's best one, the
# one best_configuration.csv names, and their captions say so
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adamw --lrs 0.01,0.03 --steps 20 --backend cpu \
  --sweep adamw.beta1=0.8..0.99 --trials 12 --db "$tmp/m.db" >"$tmp/run4" 2>&1 || { cat "$tmp/run4"; fail=1; }
"$OPTBENCH" report --db "$tmp/m.db" --out "$tmp/rm" --no-render >"$tmp/report4" 2>&1 || { cat "$tmp/report4"; fail=1; }
best=$(python3 -c "import csv,sys; print([r for r in csv.DictReader(open(sys.argv[1])) if r['optimizer'] == 'adamw'][0]['best_configuration'])" "$tmp/rm/best_configuration.csv")
for fig in loss lr; do
  check "$fig figure: sgd and adamw's best configuration alone" \
    test "$(grep -o 'sel("[^"]*")' "$tmp/rm/${fig}_quadratic.gp" | sort -u | tr '\n' ' ')" = "sel(\"adamw $best\") sel(\"sgd\") "
done
check "the captions say why" test "$(grep -c 'It shows each optimizer at its best configuration on quadratic' "$tmp/rm/summary.md")" -ge 2
check "with 6 configurations every one is drawn" test "$(grep -o 'sel("[^"]*")' "$r/lr_quadratic.gp" | sort -u | wc -l)" = 6

# confirm_configs best: fresh seeds at each optimizer's best configuration
# alone, the one the report names best (on each workload)
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adamw --lrs 0.01,0.03 --seeds 2 --steps 40 \
  --backend cpu --sweep adamw.beta1=0.8..0.99 --trials 4 --confirm-seeds 2 --confirm-configs best --db "$tmp/cb.db" \
  >"$tmp/run5" 2>&1 || { cat "$tmp/run5"; fail=1; }
check "the stage says which" grep -q 'confirmation: the best lr of [0-9]* configurations (each optimizer.s best' "$tmp/run5"
"$OPTBENCH" report --db "$tmp/cb.db" --out "$tmp/rcb" --no-render >"$tmp/report5" 2>&1 || { cat "$tmp/report5"; fail=1; }
check "confirmation runs of one configuration per workload and optimizer, the best one" python3 - "$tmp/cb.db" "$tmp/rcb" <<'PY'
import csv, json, sqlite3, sys
db, d = sys.argv[1], sys.argv[2]
rows = sqlite3.connect(db).execute("select workload, optimizer, hparams, seed from runs where stage = 'confirm'").fetchall()
confs = {}
for wl, opt, hp, seed in rows:
    h = json.loads(hp)
    confs.setdefault((wl, opt), set()).add(h.get("beta1") if opt == "adamw" else None)
assert all(len(v) == 1 for v in confs.values()), confs
best = {(r["workload"], r["optimizer"]): r["best_configuration"] for r in csv.DictReader(open(d + "/best_configuration.csv"))}
for (wl, opt), v in confs.items():
    if opt == "adamw":
        assert best[(wl, opt)] == "beta1=%.9g" % next(iter(v)), (wl, best[(wl, opt)], v)
assert ("quadratic", "adamw") in confs and ("rosenbrock", "adamw") in confs, confs
PY
"$OPTBENCH" run --workloads quadratic --optimizers sgd --confirm-configs best --db "$tmp/cb2.db" >"$tmp/out" 2>&1
check "confirm_configs best without confirmation seeds: exit 2" test $? = 2
check "... and says what to give" grep -qF 'confirm_configs = best, but no confirmation seeds' "$tmp/out"

# the lr searched too (--lrs LO..HI): sgd, without ranges of its own, is one
# configuration with the trials' lrs (a random lr sweep); adamw's trials each
# run at one lr, drawn with beta1, and the report draws them against it
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adamw --lrs log:1e-3..1e-1 --seeds 2 --steps 30 \
  --backend cpu --sweep adamw.beta1=0.8..0.99 --trials 6 --db "$tmp/lr.db" >"$tmp/run6" 2>&1 || { cat "$tmp/run6"; fail=1; }
check "24 runs: 2 optimizers x 6 trials x 2 seeds" test "$(q "$tmp/lr.db" "select count(*) from runs")" = 24
check "6 distinct lrs per optimizer, within the range" python3 - "$tmp/lr.db" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select optimizer, lr from runs").fetchall()
for o in ("sgd", "adamw"):
    lrs = {lr for opt, lr in rows if opt == o}
    assert len(lrs) == 6 and all(1e-3 <= x <= 1e-1 for x in lrs), (o, lrs)
PY
"$OPTBENCH" report --db "$tmp/lr.db" --out "$tmp/rlr" --no-render >"$tmp/report6" 2>&1 || { cat "$tmp/report6"; fail=1; }
check "lr_sweep.csv: sgd one configuration over 6 lrs" \
  test "$(grep -c '^"quadratic","sgd",' "$tmp/rlr/lr_sweep.csv")" = 6
check "hp_sweep.csv: adamw's 6 configurations against the searched lr" \
  test "$(grep -c '^"quadratic","lr","adamw (each configuration)",' "$tmp/rlr/hp_sweep.csv")" = 6
check "the figure of the searched lr" grep -q 'final loss vs the searched lr' "$tmp/rlr/hp_quadratic_lr.gp"
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adamw --lrs log:1e-3..1e-1 --trials 6 \
  --sweep adamw.beta1=0.8..0.99 --print-config >"$tmp/lr.yaml" 2>&1
check "--print-config writes the lr range" grep -qx 'lrs: log:1e-3..1e-1' "$tmp/lr.yaml"
# the lr searched alone is one configuration at the trials' lrs: its
# confirmation is at the best of them (as the report reads it), not at each
o=(run --workloads quadratic --optimizers adamw --lrs log:1e-4..1e-1 --trials 4 --steps 5 --backend cpu --confirm-seeds 3)
"$OPTBENCH" "${o[@]}" --dry-run >"$tmp/dry_lr" 2>&1
check "an lr searched alone: the dry run counts its trials: $(head -1 "$tmp/dry_lr")" \
  grep -q '^4 cells (1 workload x 1 optimizer x 4 trials, each at the lr it draws, x 1 seed)' "$tmp/dry_lr"
check "  ... and one configuration to confirm" grep -q 'at the best lr of each of 1 pair: up to 3 more runs' "$tmp/dry_lr"
"$OPTBENCH" "${o[@]}" --db "$tmp/lronly.db" >/dev/null 2>&1 || fail=1
check "  ... confirmed at its best lr alone" test "$(q "$tmp/lronly.db" "select count(*), count(distinct lr) from runs where stage = 'confirm'")" = "3|1"
best=$(q "$tmp/lronly.db" "select lr from runs where stage is null order by final_loss limit 1")
check "  ... which is the best trial's ($best)" test "$(q "$tmp/lronly.db" "select distinct lr from runs where stage = 'confirm'")" = "$best"

# bad input: exit 2, the place and what to do, nothing written
bad() { # description, expected text, flags...
  local what="$1" want="$2"; shift 2
  "$OPTBENCH" run --workloads quadratic --optimizers adamw --steps 5 --backend cpu --db "$tmp/bad.db" "$@" \
    >"$tmp/out" 2>&1
  local rc=$?
  check "$what: exit 2" test $rc = 2
  check "$what: the message" grep -qF -- "$want" "$tmp/out"
  check "$what: no database" test ! -e "$tmp/bad.db"
}
bad "a range without trials" "--sweep: adamw.beta1 = 0.8..0.99 is a range: give the number of points" \
  --sweep adamw.beta1=0.8..0.99
bad "trials without a range" "--trials: trials = 3, but no sweep is a range" --trials 3
bad "studies without a search" "--studies: studies = 2, but there is no search (no trials)" --studies 2
bad "a reversed range" "the range '0.99..0.8' is empty or reversed" --sweep adamw.beta1=0.99..0.8 --trials 3
bad "a range past the key's" "(an end of the range 0.8..1.5)" --sweep adamw.beta1=0.8..1.5 --trials 3
bad "a log range from 0" "its LO must be above 0" --sweep adamw.weight_decay=log:0..0.1 --trials 3
bad "an lr range without trials" "the lrs of adamw, log:1e-3..1e-1, are a range" --lrs log:1e-3..1e-1
bad "a range of a workload parameter" "which only an optimizer's settings and train's take" \
  --sweep quadratic.cond=10..100 --trials 3
bad "search draws without a search" "--search-draws: search_draws = 1, but there is no search (no trials)" \
  --search-draws 1
bad "search draws unknown" "--search-draws" --sweep adamw.beta1=0.8..0.99 --trials 3 --search-draws 3
bad "trials that round to one configuration" "two trials of the search drew the same values" \
  --set train.schedule=warmup --sweep train.warmup_steps=1..2 --trials 3
# two studies that draw the same point are two configurations, not one run
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.01 --sweep sgd.momentum=0.8..0.99 --trials 2 \
  --search-seed 7 --studies 3 --dry-run --db "$tmp/same.db" >"$tmp/same" 2>&1
check "two studies drawing one point: 6 configurations" grep -qF '6 cells (6 configurations' "$tmp/same"
# a searched lr with a searched beta1: each configuration at an lr of its
# own, so its hp figure is a scatter, not a line through lrs that differ
"$OPTBENCH" run --workloads quadratic --optimizers adamw --lrs log:1e-3..1 --sweep adamw.beta1=0.8..0.99 --trials 4 \
  --steps 30 --db "$tmp/lrb.db" >/dev/null 2>&1 || { echo "the lr and beta1 search failed"; fail=1; }
"$OPTBENCH" report --db "$tmp/lrb.db" --out "$tmp/lrb" --no-render >/dev/null 2>&1 || { echo "its report failed"; fail=1; }
check "searched lr and beta1: a scatter" grep -q '"quadratic","beta1","adamw (each configuration)"' "$tmp/lrb/hp_sweep.csv"
# a search stored by a build before search_draws (its configuration
# without the key, its points drawn as draws 1) is continued with its own
# draws: --resume finds it, adds the trials it grew by, and says so; a new
# search takes draws 2, which the stored configuration names
o=(run --workloads quadratic --optimizers adamw --lrs log:1e-4..1e-1 --trials 4 --search-seed 17 --steps 5
   --backend cpu)
"$OPTBENCH" "${o[@]}" --search-draws 1 --db "$tmp/old.db" >/dev/null 2>&1 || { echo "the draws-1 search failed"; fail=1; }
q "$tmp/old.db" "update benchmarks set config = replace(config, 'search_draws: 1' || char(10), '')"
check "the stored configuration as an earlier build's" test "$(q "$tmp/old.db" \
  "select count(*) from benchmarks where config like '%search_draws%'")" = 0
"$OPTBENCH" "${o[@]}" --db "$tmp/old.db" --resume --dry-run >"$tmp/dr" 2>&1
check "the dry run continues the earlier draws" grep -qF 'it would continue benchmark 1: 4 of 4 cells finished' "$tmp/dr"
# draws given: those, not the earlier ones (no such search there: a new one)
"$OPTBENCH" "${o[@]}" --search-draws 2 --db "$tmp/old.db" --resume --dry-run >"$tmp/dr" 2>&1
check "--search-draws 2 given: not the draws-1 search" grep -qF 'it would start a new benchmark' "$tmp/dr"
"$OPTBENCH" "${o[@]}" --trials 6 --db "$tmp/old.db" --resume >"$tmp/dr" 2>&1 || { cat "$tmp/dr"; fail=1; }
check "--resume says which draws it continues" grep -qF 'continues with those draws' "$tmp/dr"
check "one benchmark, grown by 2 trials" test "$(q "$tmp/old.db" "select count(*) || ' ' || count(distinct benchmark_id) from runs")" = "6 1"
check "its configuration now names draws 1" test "$(q "$tmp/old.db" \
  "select count(*) from benchmarks where config like '%search_draws: 1%'")" = 1
"$OPTBENCH" "${o[@]}" --trials 6 --db "$tmp/new.db" >/dev/null 2>&1 || { echo "the draws-2 search failed"; fail=1; }
check "a new search stores draws 2" test "$(q "$tmp/new.db" \
  "select count(*) from benchmarks where config like '%search_draws: 2%'")" = 1
check "draws 2 are other lrs" test "$(q "$tmp/new.db" "select group_concat(json_extract(hparams, '$.lr')) from \
  (select hparams from runs order by id)")" != "$(q "$tmp/old.db" "select group_concat(json_extract(hparams, '$.lr')) \
  from (select hparams from runs order by id)")"
exit $fail
