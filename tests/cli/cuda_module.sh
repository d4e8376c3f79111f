#!/usr/bin/env bash
# The CUDA backend is a module (optbench-cuda.so beside the program) loaded
# when a command first asks for a CUDA device: the program itself links no
# CUDA library, commands that open no device never load it, and a module that
# is missing or cannot be loaded is a clear message for --backend cuda (exit
# 2, nothing stored) and a note for --backend auto, which runs on the CPU.
. "$(dirname "$0")/common.bash"
small=(run --workloads quadratic --optimizers sgd --steps 5)
module="$(dirname "$OPTBENCH")/optbench-cuda.so"

if command -v ldd >/dev/null; then
  ldd "$OPTBENCH" | grep -E 'libcudart|libcublas|libcusolver' && fail "the program links CUDA libraries itself"
fi

if [ ! -f "$module" ]; then
  # a build without CUDA
  "$OPTBENCH" "${small[@]}" --backend cuda --db "$tmp/none.db" 2>"$tmp/none.err"; rc=$?
  [ $rc = 2 ] || fail "--backend cuda without a CUDA build: exit $rc"
  grep -q "this build has no CUDA backend (rebuild with -DOB_CUDA=ON" "$tmp/none.err" ||
    fail "--backend cuda without a CUDA build: $(cat "$tmp/none.err")"
  "$OPTBENCH" --version | grep -qx "CUDA backend: none in this build (CPU only)" ||
    fail "--version: $("$OPTBENCH" --version)"
  echo "$fails failed (a build without the CUDA backend)"
  [ $fails -eq 0 ]
  exit
fi

# commands that open no device do not load it (glibc's loader says what it opens)
"$OPTBENCH" "${small[@]}" --backend cpu --db "$tmp/cpu.db" 2>/dev/null || fail "cpu run failed"
"$OPTBENCH" --version | grep -q "^CUDA backend: optbench-cuda.so beside the program" ||
  fail "--version: $("$OPTBENCH" --version)"
for cmd in "--version" "list" "report --db $tmp/cpu.db --out $tmp/rep" "run ${small[*]:1} --backend cpu --db $tmp/cpu2.db"; do
  # shellcheck disable=SC2086 # the words of the command
  LD_DEBUG=files "$OPTBENCH" $cmd >/dev/null 2>"$tmp/ld.err" || fail "$cmd failed: $(grep -v '^ *[0-9]*:' "$tmp/ld.err" | tail -3)"
  grep -q "optbench-cuda\|libcudart" "$tmp/ld.err" && fail "'optbench $cmd' loaded the CUDA backend"
done

# auto and cuda load it (the program's own folder)
LD_DEBUG=files "$OPTBENCH" "${small[@]}" --db "$tmp/auto.db" >/dev/null 2>"$tmp/ld.err" || fail "auto run failed"
grep -q "file=.*optbench-cuda.so" "$tmp/ld.err" || fail "--backend auto did not look for the CUDA backend"
"$OPTBENCH" "${small[@]}" --backend cuda --db "$tmp/cuda.db" 2>"$tmp/cuda.err"; rc=$?
if grep -q "no usable CUDA device" "$tmp/cuda.err"; then
  [ $rc = 2 ] || fail "--backend cuda without a device: exit $rc"
  [ -e "$tmp/cuda.db" ] && [ "$(q "$tmp/cuda.db" "select count(*) from runs")" != 0 ] && fail "runs stored without a device"
else
  [ $rc = 0 ] || fail "--backend cuda: exit $rc: $(cat "$tmp/cuda.err")"
fi
grep -q "cannot be loaded\|not beside\|not this program" "$tmp/cuda.err" && fail "the module was not loaded: $(cat "$tmp/cuda.err")"

# OPTBENCH_CUDA_MODULE naming nothing, or a file that is no module
OPTBENCH_CUDA_MODULE=$tmp/none.so "$OPTBENCH" "${small[@]}" --backend cuda --db "$tmp/m1.db" 2>"$tmp/m1.err"; rc=$?
[ $rc = 2 ] || fail "a missing module: exit $rc"
grep -q "the CUDA backend OPTBENCH_CUDA_MODULE names ($tmp/none.so) does not exist" "$tmp/m1.err" ||
  fail "a missing module: $(cat "$tmp/m1.err")"
echo "not a module" >"$tmp/junk.so"
OPTBENCH_CUDA_MODULE=$tmp/junk.so "$OPTBENCH" "${small[@]}" --backend cuda --db "$tmp/m2.db" 2>"$tmp/m2.err"; rc=$?
[ $rc = 2 ] || fail "a file that is no module: exit $rc"
grep -q "the CUDA backend ($tmp/junk.so) cannot be loaded: .*are the CUDA libraries installed" "$tmp/m2.err" ||
  fail "a file that is no module: $(cat "$tmp/m2.err")"
# auto: a note, and the run goes on on the CPU
OPTBENCH_CUDA_MODULE=$tmp/junk.so "$OPTBENCH" "${small[@]}" --db "$tmp/m3.db" 2>"$tmp/m3.err" ||
  fail "auto with an unloadable module failed: $(cat "$tmp/m3.err")"
grep -q "backend auto -> cpu" "$tmp/m3.err" || fail "auto with an unloadable module: $(cat "$tmp/m3.err")"
grep -q "note: the CUDA backend ($tmp/junk.so) cannot be loaded" "$tmp/m3.err" ||
  fail "auto with an unloadable module says nothing: $(cat "$tmp/m3.err")"
[ "$(q "$tmp/m3.db" "select status from runs")" = done ] || fail "auto with an unloadable module: run not done"

# a copy of the program without its module beside it
mkdir -p "$tmp/bin" && cp "$OPTBENCH" "$tmp/bin/optbench"
"$tmp/bin/optbench" "${small[@]}" --backend cuda --db "$tmp/m4.db" 2>"$tmp/m4.err"; rc=$?
[ $rc = 2 ] || fail "a program without its module: exit $rc"
grep -q "the CUDA backend optbench-cuda.so is not beside the program (in $tmp/bin)" "$tmp/m4.err" ||
  fail "a program without its module: $(cat "$tmp/m4.err")"
# ... and with it copied beside it
cp "$module" "$tmp/bin/"
"$tmp/bin/optbench" "${small[@]}" --backend cuda --db "$tmp/m5.db" 2>"$tmp/m5.err"
grep -q "cannot be loaded\|not beside\|not this program" "$tmp/m5.err" && fail "the copied module: $(cat "$tmp/m5.err")"
echo "$fails failed"
[ $fails -eq 0 ]
