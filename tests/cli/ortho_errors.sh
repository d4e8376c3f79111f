#!/usr/bin/env bash
# `optbench ortho` on bad input: one line naming the flag, exit status 2, and
# nothing fitted or written. Flags of the study (--shapes, --coeffs, --dtype) and of the
# fit (--start, --spectrum, --evals, --append) are not mixed, and --append's
# file is checked before the fit runs.
set -uo pipefail
: "${OPTBENCH:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # expect "message part" args...
  local want=$1; shift
  "$OPTBENCH" ortho "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne 2 ] || ! grep -qF -- "$want" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -s "$tmp/out" ]; then
    echo "FAIL: ortho $*: rc=$rc, stdout: $(head -c 200 "$tmp/out"), stderr:"; cat "$tmp/err"; fails=$((fails+1))
  else
    echo "ok: $(cat "$tmp/err")"
  fi
}
fit=(--fit 8x8 --evals 10 --samples 1)
# the flag that was given, not another
expect "optbench: --start: unknown coefficient set 'mouns' (did you mean 'muon'?)" "${fit[@]}" --start mouns
expect "optbench: --coeffs: unknown coefficient set 'mouns' (did you mean 'muon'?)" --shapes 8x8 --samples 1 --coeffs mouns
# flags of the other mode
expect "--shapes does not go with --fit: the fit measures its own shape and muon, root and polar_express" \
  "${fit[@]}" --shapes 16x16
expect "--coeffs does not go with --fit" "${fit[@]}" --coeffs polar_express
expect "--dtype does not go with --fit" "${fit[@]}" --dtype bf16
expect "--dtype 'bf17': use fp32 or bf16" --shapes 8x8 --samples 1 --dtype bf17
expect "--start needs --fit RxC" --shapes 8x8 --samples 1 --start root
expect "--spectrum needs --fit RxC" --shapes 8x8 --samples 1 --spectrum heavy
expect "--evals needs --fit RxC" --shapes 8x8 --samples 1 --evals 10
expect "--append needs --fit RxC" --shapes 8x8 --samples 1 --append "$tmp/c.tsv"
# --append: a folder, or a file in a folder that does not exist, is refused before the fit
mkdir "$tmp/adir"
expect "--append '$tmp/adir' is a folder: give the coefficient file (e.g. --append $tmp/adir/root_coeffs.tsv)" \
  "${fit[@]}" --append "$tmp/adir"
expect "--append '$tmp/none/c.tsv': the folder '$tmp/none' does not exist" "${fit[@]}" --append "$tmp/none/c.tsv"
[ ! -e "$tmp/none" ] || { echo "FAIL: a refused --append made a folder"; fails=$((fails+1)); }
# ... and so is an SQLite database, left as it was
printf 'SQLite format 3\000rest of a database' >"$tmp/results.db"
cp "$tmp/results.db" "$tmp/results.keep"
expect "--append '$tmp/results.db' is an SQLite database" "${fit[@]}" --append "$tmp/results.db"
# another kind of file (a replay's CSV) is left as it was
printf 'a,b,c\n1,2,3\n' >"$tmp/init.csv"
expect "--append '$tmp/init.csv' is not a coefficient file ($tmp/init.csv:1: column 1: 'a,b,c' is not a number" \
  "${fit[@]}" --append "$tmp/init.csv"
[ "$(cat "$tmp/init.csv")" = "$(printf 'a,b,c\n1,2,3')" ] || { echo "FAIL: a refused --append changed the file"; fails=$((fails+1)); }
cmp -s "$tmp/results.db" "$tmp/results.keep" || { echo "FAIL: --append changed a database"; fails=$((fails+1)); }
# a good --append writes one line that --coeffs reads back
"$OPTBENCH" ortho "${fit[@]}" --append "$tmp/c.tsv" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: --append: $(cat "$tmp/err")"; fails=$((fails+1)); }
[ "$(grep -vc '^#' "$tmp/c.tsv")" = 1 ] || { echo "FAIL: --append wrote $(cat "$tmp/c.tsv")"; fails=$((fails+1)); }
"$OPTBENCH" ortho --shapes 8x8 --samples 1 --coeffs "$tmp/c.tsv" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: --coeffs of the fitted file: $(cat "$tmp/err")"; fails=$((fails+1)); }
# coefficients past float's range: bad input; ones under which the iteration
# blows up: an infinite error, said so, not LAPACK's error on NaN
printf '8\t8\t1e300\t-1e300\t1e300\n' >"$tmp/huge.tsv"
expect "huge.tsv:1: coefficient a = 1e+300 is out of range for a float" --shapes 8x8 --samples 1 --coeffs "$tmp/huge.tsv"
printf '8\t8\t10\t0\t0\n' >"$tmp/grow.tsv"
"$OPTBENCH" ortho --shapes 8x8 --samples 1 --steps 99 --coeffs "$tmp/grow.tsv" >"$tmp/out" 2>"$tmp/err" ||
  { echo "FAIL: coefficients that blow up: $(cat "$tmp/err")"; fails=$((fails+1)); }
grep -q "inf        inf      nan      inf  (blew up: inf or NaN in NS(A))" "$tmp/out" ||
  { echo "FAIL: coefficients that blow up: $(cat "$tmp/out")"; fails=$((fails+1)); }
# --append that fails part way (a full disk; here the file size limit) leaves
# the file as it was: a line cut short would read as coefficients
{ printf '# padding to just under 2 KiB\n'; for i in $(seq 60); do printf '# %030d\n' $i; done; } >"$tmp/full.tsv"
head -c 2000 "$tmp/full.tsv" >"$tmp/f2.tsv" && printf '\n' >>"$tmp/f2.tsv"
sum=$(md5sum <"$tmp/f2.tsv")
bash -c 'trap "" XFSZ; ulimit -f 2; exec "$@"' _ "$OPTBENCH" ortho --fit 8x8 --samples 1 --evals 10 \
  --append "$tmp/f2.tsv" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "error writing '.*f2.tsv': File too large (the file was left as it was)" "$tmp/err" &&
  [ "$sum" = "$(md5sum <"$tmp/f2.tsv")" ]; then echo "ok: a failed --append left the file as it was"
else echo "FAIL: a failed --append: rc=$rc, $(cat "$tmp/err"), $(tail -c 80 "$tmp/f2.tsv")"; fails=$((fails+1)); fi
echo "$fails failed"
[ $fails -eq 0 ]
