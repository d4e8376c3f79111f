#!/usr/bin/env bash
# The effective configuration: `run --print-config` writes the config file
# and flags as one YAML text; running that text gives the same matrix (the
# same --dry-run, cell for cell), printing it again gives the same text, and
# the benchmark stores it, so a database says what ran.
set -uo pipefail
: "${OPTBENCH:?}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }

# the dry run's lines, without the setting origins (a flag's or a file's line)
cells() { "$OPTBENCH" "$@" --dry-run 2>/dev/null | sed -E 's/  \((--[a-z-]+|[^()]*\.yaml:[0-9]+)\)$//'; }

check() { # check LABEL run-args...
  local label=$1; shift
  "$OPTBENCH" "$@" --print-config >"$tmp/eff.yaml" 2>"$tmp/err" || { fail "$label: --print-config: $(cat "$tmp/err")"; return; }
  "$OPTBENCH" run "$tmp/eff.yaml" --print-config >"$tmp/eff2.yaml" 2>"$tmp/err" ||
    { fail "$label: the printed configuration does not load: $(cat "$tmp/err")"; cat "$tmp/eff.yaml"; return; }
  cmp -s "$tmp/eff.yaml" "$tmp/eff2.yaml" || { fail "$label: printing it again differs"; diff "$tmp/eff.yaml" "$tmp/eff2.yaml"; }
  cells "$@" >"$tmp/a.txt"
  cells run "$tmp/eff.yaml" >"$tmp/b.txt"
  if cmp -s "$tmp/a.txt" "$tmp/b.txt"; then
    echo "ok: $label: $(head -n1 "$tmp/a.txt")"
  else
    fail "$label: the printed configuration runs another matrix"; diff "$tmp/a.txt" "$tmp/b.txt" | head -20
  fi
}

check "default config" run "$root/configs/default.yaml"
check "nightly config" run "$root/configs/nightly.yaml"
check "search config" run "$root/configs/search.yaml"
check "a search of the lr" run --workloads quadratic --optimizers adamw,sgd --trials 5 --search-seed 4 --lrs log:1e-4..1e-1 \
  --sweep adamw.beta1=0.8..0.99
printf 'workloads: [quadratic]\noptimizers: [sgd, adamw]\ntrials: 4\nlrs: {sgd: [0.01, 0.1], adamw: "1e-4..1e-2"}\n' \
  >"$tmp/lrs.yaml"
check "one optimizer's lr searched, another's listed" run "$tmp/lrs.yaml"
check "a search from flags" run --workloads quadratic --optimizers adamw,sgd --trials 6 --confirm-seeds 2 \
  --confirm-configs best \
  --sweep adamw.beta1=0.8..0.99 --sweep adamw.weight_decay=log:1e-4..1e-1 --sweep sgd.momentum=0.5,0.9
check "config and flags" run "$root/configs/default.yaml" --set adam.beta2=0.95 --sweep adam.eps=1e-8,1e-6 \
  --set 'muon.route=tag=matrix -> muon' --set 'muon.route=tag=vector -> adamw' --set train.clip_norm=1 \
  --set quadratic.dim=50 --sweep quadratic.cond=10,100 --exclude quadratic:lion --lrs 0.1,1e-3:1e-2:3 --seeds 4,9
check "flags only" run --workloads quadratic,rosenbrock --optimizers sgd,adam --steps 17 --eval-every 5 \
  --seeds 3 --sweep train.clip_norm=0,1 --name 'a: name # with YAML in it' --checkpoint-every 7
printf 'workloads: [quadratic]\noptimizers: [sgd, adam]\nlrs: {adam: [0.01, 0.02]}\nhparams:\n  sgd: {momentum: "0.5"}\n' >"$tmp/per.yaml"
check "per-optimizer lrs, one optimizer at its default" run "$tmp/per.yaml"
"$OPTBENCH" run "$tmp/per.yaml" --dry-run 2>&1 >/dev/null | grep -qF \
  "per.yaml:3: lrs lists none for sgd: it runs at its lr alone, 0.001 (give sgd: [...] to sweep it)" ||
  fail "per-optimizer lrs: no note on the optimizer at its default lr"
check "per-optimizer lrs replaced by --lrs" run "$root/configs/default.yaml" --lrs 0.5
check "root coefficients from a file" run --workloads cnn-tiny --optimizers root \
  --set "root.coeff_file=$root/configs/root_coeffs.example.tsv"
check "settings of every optimizer (all.KEY), one overridden" run --workloads bert-tiny --optimizers adamw,lion,rprop \
  --set all.filter_bias_and_bn=true --set all.weight_decay=0.1 --set adamw.weight_decay=0.2
# ... and the runs store what each optimizer ran with
"$OPTBENCH" run --workloads quadratic --optimizers adamw,lion,rprop --steps 2 --set all.filter_bias_and_bn=true \
  --set all.weight_decay=0.1 --set adamw.weight_decay=0.2 --db "$tmp/all.db" >/dev/null 2>"$tmp/err" ||
  fail "all.KEY run: $(cat "$tmp/err")"
got=$(sqlite3 "$tmp/all.db" "select optimizer || ' ' || coalesce(json_extract(hparams, '$.weight_decay'), '-') || ' ' ||
  coalesce(json_extract(hparams, '$.filter_bias_and_bn'), '-') from runs order by optimizer" | tr '\n' ',')
[ "$got" = "adamw 0.2 1,lion 0.1 1,rprop - -," ] && echo "ok: all.KEY: $got" || fail "all.KEY stored: $got"

# an empty name (an unset shell variable) is bad input, not a benchmark
# without a name; names that need quoting are written back as they were
"$OPTBENCH" run --workloads quadratic --optimizers sgd --steps 3 --name '' --print-config >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q -- "--name is empty" "$tmp/err" || fail "an empty name: $(cat "$tmp/err")"
check "a name that needs quoting" run --workloads quadratic --optimizers sgd --steps 3 --name ': x #y'
# routing rules given around another setting of the optimizer stay in their
# order and together, so the printed YAML (route: [...]) is the same cells;
# the command line's rules replace the file's (flags over file: a rule added
# after the file's could go unused, the first match winning)
printf 'workloads: [cnn-tiny]\noptimizers: [root]\nhparams:\n  root:\n    route: ["tag=head -> root"]\n    coeff_file: %s\n' \
  "$root/configs/root_coeffs.example.tsv" >"$tmp/routes.yaml"
R=(run "$tmp/routes.yaml" --set 'root.route=tag=head -> adamw' --set "root.coeff_file=$root/configs/root_coeffs.example.tsv"
   --set 'root.route=name=s1.* -> adamw' --steps 2 --checkpoint-every 0)
check "routing rules around coeff_file" "${R[@]}"
"$OPTBENCH" "${R[@]}" --print-config 2>/dev/null | grep -qxF '    route: [tag=head -> adamw, name=s1.* -> adamw]' ||
  fail "the command line's routing rules did not replace the file's: $("$OPTBENCH" "${R[@]}" --print-config 2>&1)"
"$OPTBENCH" "${R[@]}" --dry-run 2>&1 | grep -qxF '    group 0 (root, Newton-Schulz on matrices): s0.u0.conv.w[16x3x3x3 conv]' ||
  fail "the command line's routing rules did not route: $("$OPTBENCH" "${R[@]}" --dry-run 2>&1)"
"$OPTBENCH" "${R[@]}" --db "$tmp/routes.db" 2>/dev/null || fail "routes run failed"
"$OPTBENCH" "${R[@]}" --print-config >"$tmp/routes-eff.yaml" 2>/dev/null
"$OPTBENCH" run "$tmp/routes-eff.yaml" --db "$tmp/routes.db" --resume 2>"$tmp/err" || fail "routes resume: $(cat "$tmp/err")"
grep -q "1 of 1 cells finished before" "$tmp/err" || fail "the printed routing rules are other cells: $(cat "$tmp/err")"

# what cannot be stored as YAML (Unicode text) is refused before anything runs
expect2() { # expect2 "message part" args...
  local want=$1; shift
  "$OPTBENCH" "$@" --dry-run >/dev/null 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/err"; then echo "ok: $(tail -n1 "$tmp/err")"
  else fail "optbench $*: rc=$rc, want 2 and '$want': $(cat "$tmp/err")"; fi
}
expect2 "the value of root.coeff_file is not UTF-8 text (byte 3)" run --workloads cnn-tiny --optimizers root \
  --set $'root.coeff_file=ab\xe9.tsv'
expect2 "--name: the name is 128 bytes long; at most 127" run --workloads quadratic --optimizers sgd \
  --name "$(printf 'a%.0s' {1..126})é"
printf 'name: "%s"\nworkloads: [quadratic]\noptimizers: [sgd]\n' "$(printf 'ü%.0s' {1..70})" >"$tmp/long.yaml"
expect2 "long.yaml:1: the name is 140 bytes long; at most 127" run "$tmp/long.yaml"

# what the benchmark stores is that text, and it runs the same cells
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adam --lrs 0.01,0.1 --steps 20 --set adam.beta2=0.9 \
  --db "$tmp/r.db" 2>/dev/null || fail "run failed"
python3 -c "import sqlite3,sys; sys.stdout.write(sqlite3.connect(sys.argv[1]).execute('select config from benchmarks where id = 1').fetchone()[0])" "$tmp/r.db" >"$tmp/stored.yaml"
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adam --lrs 0.01,0.1 --steps 20 --set adam.beta2=0.9 \
  --print-config >"$tmp/want.yaml" 2>/dev/null
cmp -s "$tmp/stored.yaml" "$tmp/want.yaml" || { fail "the stored configuration is not the effective one"; diff "$tmp/stored.yaml" "$tmp/want.yaml"; }
"$OPTBENCH" run "$tmp/stored.yaml" --db "$tmp/r.db" --resume 2>"$tmp/err" || fail "rerunning the stored configuration: $(cat "$tmp/err")"
grep -q "4 of 4 cells finished before" "$tmp/err" ||
  fail "the stored configuration did not continue its own benchmark: $(cat "$tmp/err")"
# a --resume that adds confirmation seeds updates it: the stored text still says what ran
"$OPTBENCH" run "$tmp/stored.yaml" --db "$tmp/r.db" --resume --confirm-seeds 2 2>"$tmp/err" || fail "--confirm-seeds: $(cat "$tmp/err")"
python3 -c "import sqlite3,sys; sys.stdout.write(sqlite3.connect(sys.argv[1]).execute('select config from benchmarks where id = 1').fetchone()[0])" "$tmp/r.db" >"$tmp/stored2.yaml"
grep -q "^confirm_seeds: 2$" "$tmp/stored2.yaml" || fail "the stored configuration lacks confirm_seeds after --resume --confirm-seeds 2"
[ "$("$OPTBENCH" run "$tmp/stored2.yaml" --db "$tmp/r.db" --resume 2>&1 | grep -c '^\[')" = 0 ] ||
  fail "the updated configuration runs cells again"
echo "$fails failed"
[ $fails -eq 0 ]
