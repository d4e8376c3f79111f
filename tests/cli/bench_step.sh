#!/usr/bin/env bash
# `optbench bench-step` on the CPU: small layouts through the real pipeline,
# the machine-readable result line, and the bad-input paths (exit 2).
. "$(dirname "$0")/common.bash"

out=$("$OPTBENCH" bench-step --optimizer adam --params 20000 --tensors 3 --backend cpu --iters 5 --repeats 3 --warmup 1 2>&1)
rc=$?
echo "$out"
check "adam runs (rc $rc)" test "$rc" -eq 0
res=$(printf '%s\n' "$out" | grep '^result:')
check "a result line" test -n "$res"
check "adam counts 28 B/param" grep -q 'bytes_per_param=28 ' <<<"$res"
check "3 tensors of 81x82" grep -q 'tensors=3 shape=81x82 ' <<<"$res"
check "params = 3*81*82" grep -q 'params=19926 ' <<<"$res"
ms=$(sed -n 's/.* ms=\([0-9.]*\) .*/\1/p' <<<"$res")
check "positive step time ($ms)" awk -v m="$ms" 'BEGIN { exit !(m > 0) }'

for spec in "sgd 12" "sgd:momentum=0.9 20" "adam:amsgrad=true 36" "adamw 28" "lion 20"; do
  set -- $spec
  opt=${1%%:*}; want=$2; sets=()
  [ "$opt" != "$1" ] && sets=(--set "${1#*:}")
  if "$OPTBENCH" list 2>/dev/null | grep -q "^ *$opt\b" || [ "$opt" = sgd ] || [ "$opt" = adam ]; then
    r=$("$OPTBENCH" bench-step --optimizer "$opt" "${sets[@]}" --shape 64x64 --tensors 2 --backend cpu --iters 3 --repeats 1 --warmup 1 2>&1 | grep '^result:')
    check "$1 counts $want B/param: $r" grep -q "bytes_per_param=$want " <<<"$r"
  fi
done

# --biases: a bias of C floats after each tensor, and the filter's spans through the step
r=$("$OPTBENCH" bench-step --optimizer adamw --shape 20x30 --tensors 3 --biases --backend cpu --iters 2 --repeats 1 \
  --warmup 1 --set weight_decay=0.1,filter_bias_and_bn=true 2>&1)
check "--biases: 3 x (20x30 + 30) parameters" grep -q '^result: .* params=1890 .*biases=1' <<<"$r"
check "--biases: the layout line says so" grep -q 'each with a bias of 30' <<<"$r"

# matrix optimizers when this build has them
for opt in muon root; do
  if "$OPTBENCH" bench-step --optimizer "$opt" --shape 32x48 --tensors 4 --backend cpu --iters 2 --repeats 1 --warmup 1 >"$tmp/bs.out" 2>&1; then
    check "$opt result line" grep -q '^result: optimizer='"$opt" "$tmp/bs.out"
  elif grep -q "unknown optimizer" "$tmp/bs.out"; then
    echo "note: no $opt in this build"
  else
    cat "$tmp/bs.out"; echo "FAIL: $opt"; fail=1
  fi
done

# bad input: exit 2 and a message naming the value
bad() { # expected-substring, args...
  local want="$1"; shift
  local msg; msg=$("$OPTBENCH" bench-step "$@" 2>&1); local rc=$?
  if [ $rc -ne 2 ] || ! grep -q -- "$want" <<<"$msg"; then echo "FAIL: bench-step $* -> rc $rc: $msg"; fail=1; fi
}
bad "adamm" --optimizer adamm --params 1000
bad "--set: lr is set twice; give it once" --optimizer sgd --params 1000 --set lr=0.1 --set lr=0.2
bad "--set: lr is set twice; give it once" --optimizer sgd --params 1000 --set lr=0.1,lr=0.2
bad "--params '12x' is not a positive count (a whole number, or one with k, M or G after it: 4096, 10M, 1G)" \
  --optimizer adam --params 12x
bad "--params '1.5'" --optimizer adam --params 1.5
bad "--params N or --shape" --optimizer adam
bad "--optimizer NAME is required" --params 1000
bad "--shape" --optimizer adam --shape 10by10
# sizes past long long, and element counts past int64_t, are refused before anything is allocated
bad "--shape" --optimizer adam --shape 99999999999999999999x2
bad "more than 9e15 parameters" --optimizer adam --shape 4294967296x4294967296
bad "more than 9e15 parameters" --optimizer adam --shape 100000000x100000000 --tensors 2
bad "unknown option" --optimizer adam --params 1000 --paramz 3
bad "fewer than --tensors" --optimizer adam --params 10 --tensors 20
bad "betaX" --optimizer adam --params 1000 --set betaX=0.9 --backend cpu
bad "unknown backend" --optimizer adam --params 1000 --backend tpu
bad "not both" --optimizer adam --params 1000 --shape 10x10
bad "train has no hyperparameter 'bogus'" --optimizer adam --params 1000 --set train.bogus=1 --backend cpu
# --set as in run: a list, and the optimizer's or train's prefix
for set in lr=0.01,weight_decay=0.1 adam.lr=0.01 train.on_nonfinite=none on_nonfinite=none,train.clip_norm=1; do
  "$OPTBENCH" bench-step --optimizer adam --shape 32x32 --backend cpu --repeats 1 --iters 2 --warmup 0 \
    --set "$set" >/dev/null 2>&1 || { echo "FAIL: --set $set"; fail=1; }
done
# text settings as in run: root's coefficient file, muon's routing rules
coeffs="$(dirname "$0")/../../configs/root_coeffs.example.tsv"
for set in "root.coeff_file=$coeffs" ; do
  "$OPTBENCH" bench-step --optimizer root --shape 32x32 --backend cpu --repeats 1 --iters 2 --warmup 0 \
    --set "$set" >/dev/null 2>"$tmp/err" || { echo "FAIL: --set $set: $(cat "$tmp/err")"; fail=1; }
done
"$OPTBENCH" bench-step --optimizer muon --shape 32x32 --backend cpu --repeats 1 --iters 2 --warmup 0 \
  --set 'muon.route=tag=matrix -> adamw' >/dev/null 2>"$tmp/err" || { echo "FAIL: muon.route: $(cat "$tmp/err")"; fail=1; }
bad "--set: root.coeff_file: cannot open 'missing.tsv'" --optimizer root --params 1000 --set root.coeff_file=missing.tsv
bad "unknown tag 'matrx'" --optimizer muon --params 1000 --set 'route=tag=matrx -> adamw'
bad "muon has no setting 'rout' (did you mean 'route'?)" --optimizer muon --params 1000 --set 'rout=tag=matrix -> adamw'
"$OPTBENCH" bench-step --help | grep -q "minimal traffic" || { echo "FAIL: --help"; fail=1; }
exit $fail
