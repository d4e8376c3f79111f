#!/usr/bin/env bash
# `optbench bench-step` output reads as English: one tensor, one repeat, one
# step are singular ("1 tensor", "1 repeat of 1 step"), several are plural.
. "$(dirname "$0")/common.bash"
one=$("$OPTBENCH" bench-step --optimizer sgd --params 1 --tensors 1 --backend cpu --iters 1 --repeats 1 --warmup 1 2>&1)
echo "$one"
check "1 tensor (singular)" grep -q 'layout     1 tensor of 1x1 = 1 parameter (' <<<"$one"
check "no '1 tensors'" test -z "$(grep -v '^result:' <<<"$one" | grep -E '\b1 (tensors|parameters|repeats|steps)\b')"
check "1 repeat of 1 step" grep -q 'median of 1 repeat of 1 step;' <<<"$one"
check "result line unchanged" grep -q 'tensors=1 shape=1x1 ' <<<"$one"
two=$("$OPTBENCH" bench-step --optimizer sgd --params 2000 --tensors 2 --backend cpu --iters 3 --repeats 2 --warmup 1 2>&1)
echo "$two"
check "2 tensors (plural)" grep -qE 'layout     2 tensors of [0-9]+x[0-9]+ = [0-9]+ parameters \([0-9]+ floats' <<<"$two"
check "2 repeats of 3 steps" grep -q 'median of 2 repeats of 3 steps;' <<<"$two"
exit $fail
