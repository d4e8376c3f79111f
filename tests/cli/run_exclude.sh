#!/usr/bin/env bash
# muon and root send 2-D hidden weights to Newton-Schulz (their lr) and the
# rest to their AdamW group: muon's has an lr of its own (adamw_lr), so on a
# workload without hidden matrices muon's lr reaches no parameter, which run
# says at --dry-run and at run time; root's AdamW group takes root's lr
# (adamw_style=moonlight, as the authors' code), so root's lr is used, unless
# it is given a group of its own (adamw_style=separate);
# 'exclude' (config) / --exclude (flag) leaves such pairs out of the matrix,
# and the shipped configs do, with run counts in their comments that match.
. "$(dirname "$0")/common.bash"
: "${OB_SOURCE_DIR:?}"

m=(run --workloads quadratic,cnn-tiny --optimizers muon,root,sgd --lrs 0.01,0.02 --steps 3 --backend cpu)
"$OPTBENCH" "${m[@]}" --dry-run >"$tmp/out" 2>"$tmp/err" || fail "dry run: rc=$?"
grep -q "^optbench: warning: quadratic x muon: muon's lr reaches no parameter (1 tensor went to its 'adamw' group, which uses muon.adamw_lr = 0.0003), so its lrs 0.01, 0.02 give identical runs; tune muon.adamw_lr instead.*--exclude quadratic:muon)$" "$tmp/err" \
  || fail "no warning for quadratic x muon at --dry-run: $(cat "$tmp/err")"
[ "$(grep -c warning "$tmp/err")" = 1 ] || fail "warnings for other pairs (root's lr reaches its AdamW group): $(cat "$tmp/err")"
"$OPTBENCH" "${m[@]}" --set root.adamw_style=separate --dry-run >/dev/null 2>"$tmp/err" || fail "separate: rc=$?"
grep -q "^optbench: warning: quadratic x root: root's lr reaches no parameter (1 tensor went to its 'adamw' group, which uses root.adamw_lr = 0.0003)" "$tmp/err" \
  || fail "no warning for quadratic x root with adamw_style=separate: $(cat "$tmp/err")"
grep -q "^12 cells" "$tmp/out" || fail "dry run: $(head -1 "$tmp/out")"

# at run time too, before anything runs
"$OPTBENCH" "${m[@]}" --workloads quadratic --db "$tmp/r.db" >/dev/null 2>"$tmp/err" || fail "run: rc=$?"
[ "$(grep -c "lr reaches no parameter" "$tmp/err")" = 1 ] || fail "run time: $(cat "$tmp/err")"
[ "$(grep -n "lr reaches no parameter" "$tmp/err" | head -1 | cut -d: -f1)" -lt "$(grep -n '^\[1/' "$tmp/err" | cut -d: -f1)" ] \
  || fail "the warning comes after the first cell"

# one lr (the default): no identical runs, but the lr shown is still not used
"$OPTBENCH" run --workloads rosenbrock --optimizers muon --dry-run >/dev/null 2>"$tmp/err"
grep -q "rosenbrock x muon: muon's lr reaches no parameter .*its lr 0.001 is not used by its runs" "$tmp/err" \
  || fail "one lr: $(cat "$tmp/err")"

# a routing rule that matches no parameter of any workload is warned about, once
"$OPTBENCH" run --workloads bert-tiny,cnn-tiny --optimizers muon --set 'muon.route=name=*.bias -> adamw' \
  --set 'muon.route=tag=head -> muon' --dry-run >/dev/null 2>"$tmp/err" || fail "rule warning: rc=$?"
[ "$(grep -c "routing rule 'name=\*.bias -> adamw' of muon matches no parameter of any workload" "$tmp/err")" = 1 ] \
  || fail "rule warning: $(cat "$tmp/err")"
grep -q "tag=head" "$tmp/err" && fail "a rule that matches (tag=head) was warned about"
# its example of a parameter name: one with a dot where there is one, else the first
"$OPTBENCH" run --workloads quadratic --optimizers muon --set 'muon.route=name=foo -> adamw' --dry-run >/dev/null \
  2>"$tmp/err" || fail "rule warning, quadratic: rc=$?"
grep -qF "routing rule 'name=foo -> adamw' of muon matches no parameter of quadratic (parameter names look like 'x';" \
  "$tmp/err" || fail "rule warning, quadratic: $(cat "$tmp/err")"

# --exclude leaves the pairs out: no warning, 4 cells fewer each
"$OPTBENCH" "${m[@]}" --exclude quadratic:muon --exclude quadratic:root --dry-run >"$tmp/out" 2>"$tmp/err" || fail "exclude: rc=$?"
[ ! -s "$tmp/err" ] || fail "exclude: stderr: $(cat "$tmp/err")"
grep -q "^8 cells (2 workloads x 3 optimizers x 2 lrs x 1 seed, less 2 excluded (workload, optimizer) pairs)" "$tmp/out" \
  || fail "exclude: $(head -1 "$tmp/out")"
grep -Eq "quadratic +(muon|root) " "$tmp/out" && fail "an excluded pair has cells"
grep -Eq "cnn-tiny +muon " "$tmp/out" || fail "cnn-tiny x muon is gone too"

# the same in a config file, and lrs for an optimizer outside the matrix is noted
cat >"$tmp/x.yaml" <<'Y'
workloads: [quadratic, cnn-tiny]
optimizers: [muon, sgd]
lrs: {muon: [0.01, 0.02], sgd: [0.1], adam: [0.001]}
exclude:
  quadratic: [muon]
  rosenbrock: [sgd]
Y
"$OPTBENCH" run "$tmp/x.yaml" --steps 2 --backend cpu --db "$tmp/x.db" >/dev/null 2>"$tmp/err" || fail "config: rc=$?"
grep -q "^optbench: note: .*x.yaml:3: 'adam' is not in this matrix; its lrs are unused$" "$tmp/err" || fail "no lrs note: $(cat "$tmp/err")"
grep -q "^optbench: note: .*x.yaml:6: 'rosenbrock' is not in this matrix; exclusion of rosenbrock x sgd is unused$" "$tmp/err" \
  || fail "no exclusion note: $(cat "$tmp/err")"
grep -q warning "$tmp/err" && fail "config: a warning: $(cat "$tmp/err")"
python3 - "$tmp/x.db" <<'PY' || fail "config: the database"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select workload, optimizer, count(*) from runs group by 1, 2 order by 1, 2").fetchall()
assert rows == [("cnn-tiny", "muon", 2), ("cnn-tiny", "sgd", 1), ("quadratic", "sgd", 1)], rows
PY

# the shipped configs: no pair whose lr reaches no parameter, and the run
# count their comments give
for cfg in default nightly; do
  f="$OB_SOURCE_DIR/configs/$cfg.yaml"
  "$OPTBENCH" run "$f" --dry-run >"$tmp/out" 2>"$tmp/err" || fail "$cfg: rc=$?"
  grep -q "lr reaches no parameter" "$tmp/err" && fail "$cfg.yaml: $(cat "$tmp/err")"
  n=$(sed -n '1s/^\([0-9]*\) cells.*/\1/p' "$tmp/out")
  said=$(grep -o '[0-9]* runs' "$f" | head -1 | cut -d' ' -f1)
  [ -n "$n" ] && [ "$n" = "$said" ] || fail "$cfg.yaml: the comment says '$said runs', the matrix has $n cells"
  echo "ok: $cfg.yaml: $n runs"
done
echo "$fails failed"
[ $fails -eq 0 ]
