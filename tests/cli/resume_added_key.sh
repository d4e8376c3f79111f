#!/usr/bin/env bash
# --resume of a benchmark stored by an earlier build, whose runs' texts lack
# settings this build added (here made by removing filter_bias_and_bn and
# quadratic's inject_nan_step from the stored texts): the settings at their
# defaults are the same runs, so the benchmark continues (a note names the
# keys), its cells and confirmation runs keep the texts they were stored
# with, and a cell run again gives the results it gave. A stored setting
# that is not this build's default is still another matrix.
. "$(dirname "$0")/common.bash"
args=(run --workloads quadratic --optimizers sgd,adam --lrs 0.01,0.03 --seeds 2 --steps 60 --backend cpu
      --set sgd.momentum=0.9)
"$OPTBENCH" "${args[@]}" --db "$tmp/a.db" >/dev/null 2>&1 || { echo "the first run failed"; exit 1; }
cp "$tmp/a.db" "$tmp/b.db"
cp "$tmp/a.db" "$tmp/g.db"
cp "$tmp/a.db" "$tmp/new.db"
# an earlier build's texts; and one cell stopped before its first checkpoint
q "$tmp/a.db" "update runs set hparams = json_remove(hparams, '$.filter_bias_and_bn'),
                               workload_params = json_remove(workload_params, '$.inject_nan_step')" >/dev/null
cp "$tmp/a.db" "$tmp/old.db"
rid=$(q "$tmp/a.db" "select id from runs where optimizer = 'adam' and lr = 0.03 and seed = 1")
want=$(q "$tmp/a.db" "select final_loss from runs where id = $rid")
q "$tmp/a.db" "delete from curves where run_id = $rid" >/dev/null
q "$tmp/a.db" "delete from evals where run_id = $rid" >/dev/null
q "$tmp/a.db" "update runs set status = 'interrupted', final_loss = null, steps_done = 12 where id = $rid" >/dev/null
old_hp=$(q "$tmp/a.db" "select hparams from runs where id = $rid")

"$OPTBENCH" "${args[@]}" --db "$tmp/a.db" --resume --dry-run >"$tmp/dry" 2>&1
check "the dry run would continue it, and says why" \
  grep -qF -- "--resume: it would continue benchmark 1: 7 of 8 cells finished, 1 to continue, 0 to start (8 stored without settings this build added, at their defaults)" "$tmp/dry"
"$OPTBENCH" "${args[@]}" --db "$tmp/a.db" --resume --confirm-seeds 2 >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "--resume failed"; }
check "it continues benchmark 1" test "$(q "$tmp/a.db" "select count(*) from benchmarks")" = 1
check "no new benchmark" test "$(grep -c 'starting a new benchmark' "$tmp/err")" = 0
check "the note names the keys" grep -qF \
  "8 of benchmark 1's cells were stored by a build without the settings inject_nan_step, filter_bias_and_bn" "$tmp/err"
check "the stopped cell ran again, to the same result" test "$(q "$tmp/a.db" "select status || ' ' || final_loss from runs where id = $rid")" = "done $want"
check "it kept its stored texts" test "$(q "$tmp/a.db" "select hparams from runs where id = $rid")" = "$old_hp"
check "4 confirmation runs, with the texts of the cells they confirm" test \
  "$(q "$tmp/a.db" "select count(*) from runs where stage = 'confirm' and instr(hparams, 'filter_bias_and_bn') = 0
                    and instr(workload_params, 'inject_nan_step') = 0")" = 4
check "... and nothing else" test "$(q "$tmp/a.db" "select count(*) from runs")" = 12
# a run stopped by an earlier build, its checkpoint written with that build's
# texts: continued from the checkpoint, to the uninterrupted results
# (long enough, about 1 s here, that a machine 10x faster is still training
# when the first checkpoint has been seen and the signal is sent)
cargs=(run --workloads quadratic --optimizers adam --lrs 0.01 --steps 100000 --checkpoint-every 1000 --backend cpu)
"$OPTBENCH" "${cargs[@]}" --db "$tmp/ref.db" >/dev/null 2>&1 || fail "the reference run failed"
"$OPTBENCH" "${cargs[@]}" --db "$tmp/c.db" >/dev/null 2>&1 &
pid=$!
wait_for "$tmp/c.db.ckpt/run-*/ckpt-*.obck" || fail "no checkpoint appeared"
kill -INT $pid || fail "the run ended before it could be stopped"
wait $pid
q "$tmp/c.db" "update runs set hparams = json_remove(hparams, '$.filter_bias_and_bn'),
                               workload_params = json_remove(workload_params, '$.inject_nan_step')" >/dev/null
# the checkpoints' spec section as the earlier build wrote it (CRC-32C trailer redone)
python3 - "$tmp"/c.db.ckpt/run-*/ckpt-*.obck <<'PY' || fail "rewriting the checkpoints failed"
import re, struct, sys
T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    T.append(c)
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    magic, ver, n, step = b[:8], *struct.unpack_from("<IIq", b, 8)
    off, secs = 32, []
    for _ in range(n):
        (ln,) = struct.unpack_from("<I", b, off); name = b[off + 4:off + 4 + ln]; off += 4 + ln
        (dn,) = struct.unpack_from("<Q", b, off); data = b[off + 8:off + 8 + dn]; off += 8 + dn
        if name == b"spec":
            t = data.decode()
            t2 = re.sub(r',"filter_bias_and_bn":(true|false)', "", re.sub(r',"inject_nan_step":[0-9.e+-]+', "", t))
            assert t2 != t, t
            data = t2.encode()
        secs.append((name, data))
    body = b"".join(struct.pack("<I", len(k)) + k + struct.pack("<Q", len(d)) + d for k, d in secs)
    total = 32 + len(body) + 8
    out = magic + struct.pack("<IIqQ", ver, n, step, total) + body
    open(path, "wb").write(out + struct.pack("<I", crc32c(out)) + b"OBCE")
PY
"$OPTBENCH" "${cargs[@]}" --db "$tmp/c.db" --resume >/dev/null 2>"$tmp/cerr" || fail "--resume failed: $(cat "$tmp/cerr")"
check "the stopped run continued from its checkpoint" grep -q "1 continued from a checkpoint" "$tmp/cerr"
check "... to the results of the uninterrupted run" python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/c.db"

# compare: a night of the earlier build against one of this build: every
# cell paired (the hyperparameter that differs named in a note)
"$OPTBENCH" compare --baseline "$tmp/old.db" --candidate "$tmp/new.db" >"$tmp/cmp" 2>&1
check "compare pairs the two builds' runs" grep -qF \
  'no regression (8 matched cells, 2 groups: 0 worse, 0 better; 0 cells only in the baseline, 0 only in the candidate)' "$tmp/cmp"
check "... and names the hyperparameter added" grep -qF 'filter_bias_and_bn (absent) in the baseline' "$tmp/cmp"

# a grown matrix (a third seed) over such a benchmark: continued, its runs
# kept with their texts, the new cells with this build's
q "$tmp/g.db" "update runs set hparams = json_remove(hparams, '$.filter_bias_and_bn')" >/dev/null
gargs=("${args[@]}")
gargs[8]=3 # --seeds 3
"$OPTBENCH" "${gargs[@]}" --db "$tmp/g.db" --resume >/dev/null 2>"$tmp/gerr" ||
  fail "--resume of the grown matrix failed: $(cat "$tmp/gerr")"
check "the grown matrix continues benchmark 1" test "$(q "$tmp/g.db" "select count(distinct benchmark_id) || ' ' || count(*) from runs")" = "1 12"
check "... and says so" grep -qF "were stored by a build without the settings filter_bias_and_bn" "$tmp/gerr"
check "its runs keep their texts, the new ones have this build's" test \
  "$(q "$tmp/g.db" "select seed || ':' || min(instr(hparams, 'filter_bias_and_bn') > 0) || max(instr(hparams, 'filter_bias_and_bn') > 0) from runs group by seed order by seed" | tr '\n' ' ')" = "0:00 1:00 2:11 "

# history over a night stored by an earlier build and one by this build:
# one series per optimizer and workload, not two
"$OPTBENCH" "${args[@]}" --db "$tmp/a.db" >/dev/null 2>&1 || fail "the second benchmark failed"
"$OPTBENCH" history --db "$tmp/a.db" >"$tmp/hist" 2>&1 || fail "history failed: $(cat "$tmp/hist")"
check "history: one series per optimizer" grep -qE '^bench +date \(UTC\) +revision +quadratic adam +quadratic sgd$' "$tmp/hist"
"$OPTBENCH" report --db "$tmp/a.db" --out "$tmp/rep" --no-render >"$tmp/rep.out" 2>&1 || fail "report failed"
check "report over both: the newer of each cell" grep -qF "report of 12 runs" "$tmp/rep.out"
check "report over both: one configuration per optimizer" test \
  "$(python3 -c 'import csv,sys; print(sorted({r["optimizer"] for r in csv.DictReader(open(sys.argv[1]))}))' "$tmp/rep/runs.csv")" = "['adam', 'sgd']"

# a setting stored at a value other than this build's default: another run
q "$tmp/b.db" "update runs set hparams = json_set(hparams, '$.filter_bias_and_bn', json('true'))
               where optimizer = 'adam'" >/dev/null
"$OPTBENCH" "${args[@]}" --db "$tmp/b.db" --resume --dry-run >"$tmp/dry_b" 2>&1
check "a stored non-default value is another matrix" grep -qE \
  "^--resume: .*its run [0-9]+ \(adam on quadratic, .*\) is not in this matrix; it would start a new benchmark" "$tmp/dry_b"

# a key whose default changed what earlier builds did (root's adamw_style,
# moonlight since 2026-12-05; before, its AdamW group was separate): a run
# stored without it ran separate, so it is not this build's default run
# (with adamw_eps pinned, the rest of the texts are the same), and report
# reads it as separate
r=(run --workloads quadratic --optimizers root --lrs 0.01 --seeds 1 --steps 20 --backend cpu --set root.adamw_eps=1e-10)
"$OPTBENCH" "${r[@]}" --db "$tmp/root.db" >/dev/null 2>&1 || fail "root run"
q "$tmp/root.db" "update runs set hparams = json_remove(hparams, '$.adamw_style')" >/dev/null
"$OPTBENCH" "${r[@]}" --db "$tmp/root.db" --resume --dry-run >"$tmp/dry_r" 2>&1
check "an earlier build's root run is not this build's: $(tail -1 "$tmp/dry_r")" \
  grep -qE "^--resume: .*is not in this matrix; it would start a new benchmark" "$tmp/dry_r"
"$OPTBENCH" "${r[@]}" --set root.adamw_style=separate --db "$tmp/root.db" --resume --dry-run >"$tmp/dry_s" 2>&1
check "  ... but is with adamw_style=separate: $(tail -1 "$tmp/dry_s")" \
  grep -qF -- "--resume: it would continue benchmark 1: 1 of 1 cells finished" "$tmp/dry_s"
"$OPTBENCH" report --db "$tmp/root.db" --out "$tmp/rootrep" --no-render >/dev/null 2>&1
check "  ... and report reads it as separate" grep -q 'adamw_style separate (default moonlight)' "$tmp/rootrep/summary.md"
exit $fail
