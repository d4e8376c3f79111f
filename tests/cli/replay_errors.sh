#!/usr/bin/env bash
# `optbench replay` on bad input: one line naming the file, line and column
# (or the flag), exit status 2; and a good run writes one row per step with
# enough digits to round-trip float32.
set -uo pipefail
: "${OPTBENCH:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # expect "message part" args...
  local want=$1; shift
  "$OPTBENCH" replay "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne 2 ] || ! grep -qF -- "$want" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: replay $*: rc=$rc, stderr:"; cat "$tmp/err"; fails=$((fails+1))
  else
    echo "ok: $(cat "$tmp/err")"
  fi
}
printf '1,2,3,4,5,6\n' >"$tmp/init.csv"
printf '0.5,0.5,0.5,0.5,0.5,0.5\n0.25,0.25,0.25,0.25,0.25,0.25\n' >"$tmp/grads.csv"
printf '0.5,0.5,0.5\n' >"$tmp/short.csv"
printf '0.5,0.5,0.5,0.5,0.5,0.5\n0.1,0.2,abc,0.4,0.5,0.6\n' >"$tmp/word.csv"
printf '0.5,0.5,0.5,0.5,0.5,0.5\n\n0.1,0.2,0.3,0.4,0.5,nan\n' >"$tmp/nan.csv"
printf '0.5,0.5,0.5,0.5,0.5,0.5\n0.5,0.5,0.5,0.5,0.5\n' >"$tmp/ragged.csv"
ok=(--optimizer sgd --shape 2x3 --init "$tmp/init.csv" --out "$tmp/o.csv")
expect "word.csv:2: column 3: 'abc' is not a number" "${ok[@]}" --grads "$tmp/word.csv"
expect "nan.csv:3: column 6: 'nan' is not finite" "${ok[@]}" --grads "$tmp/nan.csv"
printf '0.5,0.5,0.5,0.5,1e400,0.5\n' >"$tmp/huge.csv"
expect "huge.csv:1: column 5: '1e400' is out of range for a double" "${ok[@]}" --grads "$tmp/huge.csv"
expect "ragged.csv:2: 5 values; the shape 2x3 needs 6" "${ok[@]}" --grads "$tmp/ragged.csv"
expect "short.csv: expected one row of 6 values (shape 2x3); found 1 row that is too short" \
  --optimizer sgd --shape 2x3 --init "$tmp/short.csv" --grads "$tmp/grads.csv" --out "$tmp/o.csv"
expect "--shape '2x' is not a shape" --optimizer sgd --shape 2x --init "$tmp/init.csv" --grads "$tmp/grads.csv" --out "$tmp/o.csv"
expect "--shape '9999999999x9999999999' is not a shape like 8x6 or 40 (of at most 2^31 elements)" --optimizer sgd \
  --shape 9999999999x9999999999 --init "$tmp/init.csv" --grads "$tmp/grads.csv" --out "$tmp/o.csv"
mkdir -p "$tmp/dir.csv"
expect "dir.csv' is a folder, not a file of numbers" "${ok[@]}" --grads "$tmp/dir.csv"
printf '0.5\t0.5\t0.5\t0.5\t0.5\t0.5\n' >"$tmp/tabs.csv"
expect "tabs.csv:1: column 1: '0.5\\x090.5\\x090.5\\x090.5\\x090.5\\x090.5' is not a number (fields are separated by commas, not tabs)" \
  "${ok[@]}" --grads "$tmp/tabs.csv"
expect "dir.csv' is a folder, not a file of numbers: give the comma-separated (CSV) file" "${ok[@]}" --grads "$tmp/dir.csv"
printf '0.5,\001\377ab,0.5,0.5,0.5,0.5\n' >"$tmp/bin.csv"
expect "bin.csv:1: column 2: '\\x01\\xffab' is not a number" "${ok[@]}" --grads "$tmp/bin.csv"
expect "unknown optimizer 'adma' (did you mean 'adam'?)" --optimizer adma --shape 2x3 --init "$tmp/init.csv" --grads "$tmp/grads.csv" --out "$tmp/o.csv"
expect "sgd has no hyperparameter 'mom' (did you mean 'momentum'?)" "${ok[@]}" --grads "$tmp/grads.csv" --set mom=0.9
# a key no other resembles: the list of the optimizer's settings
expect "sgd has no setting 'zeta'; its hyperparameters: lr, momentum, dampening, nesterov, weight_decay, filter_bias_and_bn; its text settings: route" \
  "${ok[@]}" --grads "$tmp/grads.csv" --set zeta=0.9
# a misspelt text setting is suggested like a hyperparameter
expect "root has no setting 'coeff_filex' (did you mean 'coeff_file'?)" --optimizer root --shape 2x3 --init "$tmp/init.csv" \
  --grads "$tmp/grads.csv" --out "$tmp/o.csv" --set coeff_filex=x.tsv
expect "train.schedule: 'cosin' is not one of" "${ok[@]}" --grads "$tmp/grads.csv" --set train.schedule=cosin
expect "cannot open" "${ok[@]}" --grads "$tmp/missing.csv"
expect "--set: root.coeff_file: cannot open '$tmp/missing.tsv'" --optimizer root --shape 2x3 --init "$tmp/init.csv" \
  --grads "$tmp/grads.csv" --out "$tmp/o.csv" --set coeff_file="$tmp/missing.tsv"
expect "replay needs --out" --optimizer sgd --shape 2x3 --init "$tmp/init.csv" --grads "$tmp/grads.csv"
expect "route 'tag=matrx -> adamw': unknown tag 'matrx'" --optimizer muon --shape 2x3 --init "$tmp/init.csv" \
  --grads "$tmp/grads.csv" --out "$tmp/o.csv" --route 'tag=matrx -> adamw'
expect "muon: parameter 'param' (tag vector, shape 6) matches no routing rule (routing = explicit)" \
  --optimizer muon --shape 6 --init "$tmp/init.csv" --grads "$tmp/grads.csv" --out "$tmp/o.csv" \
  --set routing=explicit --route 'tag=matrix -> muon'

# a good run: two rows; sgd lr=0.1: 1 - 0.1*0.5 = 0.95, then 0.95 - 0.1*0.25 (float32 arithmetic)
if "$OPTBENCH" replay "${ok[@]}" --grads "$tmp/grads.csv" --set lr=0.1 && [ "$(wc -l <"$tmp/o.csv")" -eq 2 ] &&
   [ "$(head -1 "$tmp/o.csv" | cut -d, -f1)" = "0.949999988" ] &&
   [ "$(tail -1 "$tmp/o.csv" | cut -d, -f1)" = "0.925000012" ]; then
  echo "ok: good run"
else
  echo "FAIL: good run:"; cat "$tmp/o.csv"; fails=$((fails+1))
fi
# --out never replaces an input, a database or a folder, and names the flag when its folder is missing
cp "$tmp/grads.csv" "$tmp/grads.keep"
expect "--out '$tmp/grads.csv' is the --grads file" --optimizer sgd --shape 2x3 --init "$tmp/init.csv" \
  --grads "$tmp/grads.csv" --out "$tmp/grads.csv"
if cmp -s "$tmp/grads.csv" "$tmp/grads.keep"; then echo "ok: the --grads file is unchanged"
else echo "FAIL: --out over --grads changed it"; fails=$((fails+1)); fi
printf 'SQLite format 3\000rest of a database' >"$tmp/results.db"
cp "$tmp/results.db" "$tmp/results.keep"
expect "--out '$tmp/results.db' is an SQLite database" "${ok[@]/$tmp\/o.csv/$tmp/results.db}" --grads "$tmp/grads.csv"
if cmp -s "$tmp/results.db" "$tmp/results.keep"; then echo "ok: the database is unchanged"
else echo "FAIL: --out over a database changed it"; fails=$((fails+1)); fi
expect "--out '$tmp/dir.csv' is a folder" "${ok[@]/$tmp\/o.csv/$tmp/dir.csv}" --grads "$tmp/grads.csv"
expect "--out: cannot write '$tmp/nodir/o.csv': No such file or directory" \
  "${ok[@]/$tmp\/o.csv/$tmp/nodir/o.csv}" --grads "$tmp/grads.csv"
# --set takes a key with the optimizer's name, as run writes it
if "$OPTBENCH" replay "${ok[@]}" --grads "$tmp/grads.csv" --set sgd.lr=0.1 &&
   [ "$(head -1 "$tmp/o.csv" | cut -d, -f1)" = "0.949999988" ]; then echo "ok: --set sgd.lr=0.1"
else echo "FAIL: --set sgd.lr=0.1:"; cat "$tmp/o.csv"; fails=$((fails+1)); fi

# a key given twice, an empty item: bad input, as in run
expect "--set: lr is given twice; give each key once" "${ok[@]}" --grads "$tmp/grads.csv" --set lr=0.1 --set sgd.lr=0.2
expect "--set: an empty setting in 'lr=0.1,'" "${ok[@]}" --grads "$tmp/grads.csv" --set lr=0.1,
# a value past float's range (the steps run in float32), a NUL byte inside a
# field (the rest of the field was dropped), a byte-order mark (read past)
printf '1e39,2,3,4,5,6\n' >"$tmp/big.csv"
expect "big.csv:1: column 1: 1e+39 is out of range for a float" "${ok[@]/$tmp\/init.csv/$tmp/big.csv}" --grads "$tmp/grads.csv"
# float32's largest as numpy prints it rounds to it, not past it
printf '3.4028235e38,2,3,4,5,6\n' >"$tmp/fmax.csv"
if "$OPTBENCH" replay "${ok[@]/$tmp\/init.csv/$tmp/fmax.csv}" --grads "$tmp/grads.csv" 2>"$tmp/err"; then echo "ok: float's largest"
else echo "FAIL: float's largest: $(cat "$tmp/err")"; fails=$((fails+1)); fi
# route rules add up: a second one is not a key given twice
if "$OPTBENCH" replay --optimizer muon --shape 2x3 --init "$tmp/init.csv" --grads "$tmp/grads.csv" --out - \
     --set 'lr=0.01,route=tag=matrix -> adamw,route=tag=vector -> adamw' >/dev/null 2>"$tmp/err"; then echo "ok: two route rules"
else echo "FAIL: two route rules: $(cat "$tmp/err")"; fails=$((fails+1)); fi
printf '1,2\0009,3,4,5,6\n' >"$tmp/nul.csv"
expect "nul.csv:1: column 2: a NUL byte in the field" "${ok[@]/$tmp\/init.csv/$tmp/nul.csv}" --grads "$tmp/grads.csv"
printf '\357\273\2771,2,3,4,5,6\n' >"$tmp/bom.csv"
if "$OPTBENCH" replay "${ok[@]/$tmp\/init.csv/$tmp/bom.csv}" --grads "$tmp/grads.csv" 2>"$tmp/err"; then echo "ok: a byte-order mark"
else echo "FAIL: a byte-order mark: $(cat "$tmp/err")"; fails=$((fails+1)); fi

# --out - on a full device: the failed write is an error, not a silent exit 0
if [ -w /dev/full ]; then
  "$OPTBENCH" replay --optimizer sgd --shape 2x3 --init "$tmp/init.csv" --grads "$tmp/grads.csv" --out - \
    >/dev/full 2>"$tmp/err"; rc=$?
  if [ $rc -ne 0 ] && grep -q "error writing the standard output" "$tmp/err"; then echo "ok: $(cat "$tmp/err")"
  else echo "FAIL: --out - to /dev/full: rc=$rc: $(cat "$tmp/err")"; fails=$((fails+1)); fi
fi
# a setting the chosen variant ignores is refused, not dropped
expect "muon.ns_a = 2 has no effect with muon.ns_coeffs = polar_express" --optimizer muon --shape 2x3 \
  --init "$tmp/init.csv" --out "$tmp/o.csv" --grads "$tmp/grads.csv" --set ns_coeffs=polar_express,ns_a=2
echo "$fails failed"
[ "$fails" -eq 0 ]
