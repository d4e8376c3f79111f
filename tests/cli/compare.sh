#!/usr/bin/env bash
# `optbench compare`, the nightly regression gate, end to end: a
# deterministic rerun passes (exit 0), the baseline itself or a copy of it,
# and a shard, are no verdict (exit 2); a planted regression
# (worse final loss on every seed, a slower step) fails (exit 1), and so do a
# seed newly diverged and a non-finite final loss; microsecond steps are not
# timed; cells on one side only are listed and fail only with --strict; a
# candidate holding two benchmarks gets a note; unusable input, a damaged
# database and an unwritable report exit 2, and
# a workload parameter that differs (--set quadratic.noise=2) is named.
# Every row names the lr judged. --markdown-append adds to a file (a step
# summary) after a blank line; with --markdown it is an input error. A run
# that exits 2 replaces the reports it was given with ones that say why (no
# earlier verdict stays), also when the reason is another report that could
# not be opened or written. A change from or to divergence is told in words.
# A candidate run on another device is not judged on step time (nor on peak
# memory across backends) and every report says so; --time-across-devices
# judges it.
# Every option --help lists is parsed as listed.
# The JUnit XML is validated with python3's xml.etree and counted.
. "$(dirname "$0")/common.bash"
have_py=0
python3 -c 'import sqlite3, xml.etree.ElementTree' 2>/dev/null && have_py=1
junit_counts() { # file -> "tests failures testcases"
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
cases = root.findall("./testsuite/testcase")
fails = [c for c in cases if c.find("failure") is not None]
assert int(root.get("tests")) == len(cases)
assert int(root.get("failures")) == len(fails)
for kind in ("errors", "skipped"):  # where the header has them (the suite's, too)
    for el in [root] + root.findall("./testsuite"):
        if el.get(kind) is not None:
            n = sum(c.find(kind.rstrip("s") if kind == "errors" else kind) is not None for c in el.iter("testcase"))
            assert int(el.get(kind)) == n, (kind, el.get(kind), n)
for el in root.findall("./testsuite"):
    assert int(el.get("tests")) == len(el.findall("testcase")) and \
        int(el.get("failures")) == sum(c.find("failure") is not None for c in el.findall("testcase")), el.attrib
print(len(cases), len(fails), " ".join(c.get("classname") + "/" + c.get("name") for c in fails))
PY
}
junit_error() { # file -> the message of its one test case's <error>, nothing else
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall("./testsuite/testcase")
assert len(cases) == 1 and root.get("tests") == "1" and root.get("errors") == "1", ET.tostring(root)
assert cases[0].find("failure") is None
print(cases[0].find("error").get("message"))
PY
}
stale() { # a report file, as an earlier night left it
  printf 'LAST NIGHT\n' >"$1"
}
no_verdict_reports() { # what, then compare's arguments after the reports: exit 2, both reports say why
  local what=$1; shift
  stale "$tmp/nv.md"; stale "$tmp/nv.xml"
  compare 2 --markdown "$tmp/nv.md" --junit "$tmp/nv.xml" "$@"
  check "$what: markdown says compare could not run: $(head -3 "$tmp/nv.md")" \
    grep -q '^compare could not run: ' "$tmp/nv.md"
  check "$what: markdown heading" grep -q '^## optbench compare: no verdict' "$tmp/nv.md"
  check "$what: no stale markdown" test "$(grep -c 'LAST NIGHT' "$tmp/nv.md")" = 0
  if [ $have_py = 1 ]; then
    local msg; msg=$(junit_error "$tmp/nv.xml"); local rc=$?
    check "$what: JUnit has one <error>: $msg" test $rc -eq 0 -a -n "$msg"
    # (a byte that is not UTF-8 is '?' there, and \xNN on the terminal)
    check "$what: the error is the message printed" grep -qF -- "$msg" <(LC_ALL=C tr '\200-\377' '?' <"$tmp/err" |
                                                                         sed 's/\\x[89a-f][0-9a-f]/?/g')
  else
    check "$what: JUnit error" grep -q '<error type="no verdict"' "$tmp/nv.xml"
  fi
}
compare() { # expected rc, args...
  local want=$1; shift
  "$OPTBENCH" compare "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne "$want" ]; then echo "FAIL: compare $* -> rc $rc (want $want)"; cat "$tmp/out" "$tmp/err"; fail=1; fi
}

sql() { # db, SQL statements: a planted change
  python3 -c 'import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
for q in sys.argv[2:]: d.execute(q)
d.commit()' "$@"
}

run() { # db
  "$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
    --seeds 2 --steps 60 --eval-every 30 --backend cpu --db "$1" >"$tmp/run.log" 2>&1 || return
  # as if on a quiet machine: the planted step times below are judged whatever
  # else ran beside this test (busy_machine.sh tests the busy machine's rule)
  q "$1" "update runs set other_cpu = null" >/dev/null
}
run "$tmp/base.db"
check "baseline written" test -s "$tmp/base.db"
copy_as_rerun "$tmp/base.db" "$tmp/cand.db"
copy_as_rerun "$tmp/base.db" "$tmp/same.db" # kept as it is: a deterministic rerun

compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/ok.md" --junit "$tmp/ok.xml"
check "identical: no regression" grep -q 'no regression' "$tmp/out"
check "markdown written" grep -q '^## optbench compare: no regression' "$tmp/ok.md"
# the lr judged: a column of the table, of the Markdown and in the JUnit
check "table has an lr column: $(head -1 "$tmp/out")" grep -qE '^workload +optimizer +lr +final loss +held-out' "$tmp/out"
check "each row names its lr: $(grep '^quadratic *adam' "$tmp/out")" \
  test "$(grep -cE '^(quadratic|rosenbrock) +(sgd|adam) +[0-9.e-]+ +[-+]' "$tmp/out")" = 4
check "markdown rows name the lr" test "$(grep -cE '^\| (quadratic|rosenbrock) \| (sgd|adam) \| [0-9.e-]+ \| [-+]' "$tmp/ok.md")" = 4
check "JUnit names the lr" test "$(grep -cE '<system-out>6 matched cells; lr [0-9.e-]+; final loss' "$tmp/ok.xml")" = 4
check "the reports' working files are gone" test -z "$(ls "$tmp" | grep '\.part')"
# killed while writing its reports: each is the earlier one or the new one,
# never empty or cut (written beside it, then renamed over it)
if command -v strace >/dev/null 2>&1; then
  for at in 2 3; do # the first write is the table on stdout; the second and third the reports
    cp "$tmp/ok.md" "$tmp/k.md"
    cp "$tmp/ok.xml" "$tmp/k.xml"
    strace -f -o /dev/null -e trace=write -e inject=write:signal=KILL:when=$at "$OPTBENCH" compare \
      --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/k.md" --junit "$tmp/k.xml" >/dev/null 2>&1
    check "killed at write $at: the Markdown whole" cmp -s "$tmp/ok.md" "$tmp/k.md"
    check "killed at write $at: the JUnit whole" cmp -s "$tmp/ok.xml" "$tmp/k.xml"
  done
  rm -f "$tmp"/k.md.part* "$tmp"/k.xml.part*
fi
# working files a killed compare left: the next compare removes those of
# its reports older than an hour, not a fresh one (maybe another compare's
# at work) nor files of other names
mkdir "$tmp/sw"
touch -d '2 hours ago' "$tmp/sw/n.md.partAb3dE9" "$tmp/sw/n.xml.partQ1w2E3" "$tmp/sw/n.md.part-notes" \
  "$tmp/sw/n.md.partAb3dE" "$tmp/sw/m.md.partAb3dE9"
touch "$tmp/sw/n.md.partZZ9zz9"
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/sw/n.md" \
  --junit "$tmp/sw/n.xml" >/dev/null 2>"$tmp/sw.err"
check "stale working files removed: $(ls "$tmp/sw" | tr '\n' ' ')" \
  test "$(ls "$tmp/sw" | tr '\n' ' ')" = "m.md.partAb3dE9 n.md n.md.part-notes n.md.partAb3dE n.md.partZZ9zz9 n.xml "
check "  ... and said so" grep -qF "removed '$tmp/sw/n.md.partAb3dE9', a report's working file" "$tmp/sw.err"
# a symlink is written through, not replaced (/dev/stdout is one)
echo old >"$tmp/real.md"
ln -s real.md "$tmp/link.md"
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/link.md" >/dev/null 2>&1
check "a symlinked report stays a link" test -L "$tmp/link.md"
check "  ... and its target gets the report" cmp -s "$tmp/ok.md" "$tmp/real.md"
# (a link of the test's own to the standard output: a broken build must not replace the machine's /dev/stdout)
ln -s /proc/self/fd/1 "$tmp/stdout"
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --junit "$tmp/stdout" 2>/dev/null >"$tmp/so.xml"
check "--junit to a link to the standard output writes there (after the table)" \
  grep -q '^<testsuites name="optbench compare"' "$tmp/so.xml"
check "  ... and leaves the link" test -L "$tmp/stdout"

# an incomplete baseline (a night killed midway, kept as the baseline): its
# unfinished cells are not judged and said so; a group with none finished
# has no verdict (not "cand best" of a baseline that "diverged"); --strict
# fails it; the JUnit has the notes
cp "$tmp/base.db" "$tmp/binc.db"
sql "$tmp/binc.db" "update runs set status = 'interrupted', final_loss = null where workload = 'rosenbrock'" \
  "update runs set status = 'pending', final_loss = null where workload = 'quadratic' and optimizer = 'sgd' and lr = 0.1"
compare 0 --baseline "$tmp/binc.db" --candidate "$tmp/cand.db" --junit "$tmp/inc.xml"
check "incomplete baseline: said: $(grep 'incomplete' "$tmp/out")" \
  grep -q "note: the baseline is incomplete: 14 matched cells did not finish there" "$tmp/out"
check "incomplete baseline: no verdict where none finished: $(grep '^rosenbrock' "$tmp/out")" \
  test "$(grep -cE '^rosenbrock +(sgd|adam) +- \(baseline not finished\) .* no data$' "$tmp/out")" = 2
check "incomplete baseline: the summary line counts them" grep -q "14 matched cells not finished in the baseline)" "$tmp/out"
check "JUnit: the baseline's test case passes without --strict" \
  python3 -c 'import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1]).getroot()
c = [x for x in t.iter("testcase") if x.get("classname") == "optbench.baseline"]
n = [x for x in t.iter("testcase") if x.get("classname") == "optbench.notes"]
sys.exit(not (len(c) == 1 and c[0].find("failure") is None and len(n) == 1 and "incomplete" in n[0].find("system-out").text))' "$tmp/inc.xml"
check "JUnit: its counts without --strict" junit_counts "$tmp/inc.xml"
compare 1 --baseline "$tmp/binc.db" --candidate "$tmp/cand.db" --strict --junit "$tmp/inc.xml" --markdown "$tmp/inc.md"
check "--strict: an incomplete baseline fails" grep -q "REGRESSION" "$tmp/out"
check "--strict: a JUnit failure" grep -q '<failure type="incomplete" message="14 matched cells did not finish in the baseline' "$tmp/inc.xml"
check "--strict: the JUnit's counts" junit_counts "$tmp/inc.xml"
check "--strict: the Markdown says so" grep -q "The baseline is incomplete: 14 matched cells did not finish there (--strict: a failure)." "$tmp/inc.md"

# an unfinished candidate (a night killed midway): no regression of the code,
# no verdict either (exit 2), the table of what finished kept; with
# something worse as well, a regression (exit 1)
cp "$tmp/cand.db" "$tmp/cinc.db"
sql "$tmp/cinc.db" "update runs set status = 'interrupted', final_loss = null where workload = 'rosenbrock' and optimizer = 'adam' and seed = 1"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cinc.db" --junit "$tmp/cinc.xml" --markdown "$tmp/cinc.md"
check "unfinished candidate: no verdict: $(tail -1 "$tmp/out")" \
  grep -q "^optbench compare: no verdict (exit status 2): the candidate is not finished, nothing finished got worse (.*; 3 not finished in the candidate)" "$tmp/out"
check "unfinished candidate: its row: $(grep '^rosenbrock *adam' "$tmp/out")" grep -qE '^rosenbrock +adam .* no verdict \(not finished\)$' "$tmp/out"
check "unfinished candidate: the Markdown keeps the table" grep -q '^## optbench compare: no verdict (the candidate is not finished)' "$tmp/cinc.md"
check "unfinished candidate: a JUnit error, no failure" grep -q 'failures="0" errors="1"' "$tmp/cinc.xml"
sql "$tmp/cinc.db" "update runs set final_loss = final_loss * 3 where workload = 'quadratic' and optimizer = 'adam'"
compare 1 --baseline "$tmp/base.db" --candidate "$tmp/cinc.db"
check "unfinished candidate with a regression: REGRESSION" grep -q "^optbench compare: REGRESSION" "$tmp/out"

# one file on both sides, or a copy of it (a CI script's variables that came
# out the same): no verdict; another benchmark of one database is compared
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/base.db" --junit "$tmp/self.xml"
check "same database: no verdict" grep -q "the candidate's runs are the baseline's own (the same database, or a copy" "$tmp/err"
check "  ... the JUnit report says so" grep -q "own (the same database, or a copy" "$tmp/self.xml"
cp "$tmp/base.db" "$tmp/basecopy.db"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/basecopy.db"
check "a copy of the baseline: no verdict" grep -q "the candidate's runs are the baseline's own" "$tmp/err"
copy_as_rerun "$tmp/base.db" "$tmp/rerun.db"
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/rerun.db"
# a new failure names its cell and its error
copy_as_rerun "$tmp/base.db" "$tmp/cfail.db"
sql "$tmp/cfail.db" "update runs set status = 'failed', error = 'simulated crash' where id = (select min(id) from runs where workload = 'quadratic' and optimizer = 'adam')"
compare 1 --baseline "$tmp/base.db" --candidate "$tmp/cfail.db"
check "a new failure names its lr, seed and error: $(grep 'failed in the candidate' "$tmp/out")" \
  grep -qE "1 cell finished in the baseline and failed in the candidate \(lr [0-9.e-]+, seed [0-9]+, run [0-9]+: simulated crash\)" "$tmp/out"
# groups with nothing to judge are skipped in the JUnit view
copy_as_rerun "$tmp/base.db" "$tmp/bnone.db"
sql "$tmp/bnone.db" "update runs set status = 'pending', final_loss = null, step_ms_median = null where optimizer = 'adam' and workload = 'quadratic'"
compare 0 --baseline "$tmp/bnone.db" --candidate "$tmp/base.db" --junit "$tmp/skip.xml"
check "a group with no data: JUnit skipped" python3 - "$tmp/skip.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall("./testsuite/testcase")
skipped = [c for c in cases if c.find("skipped") is not None]
assert int(root.get("skipped")) == len(skipped) >= 1, ET.tostring(root)[:400]
assert any(c.get("classname") == "optbench.quadratic" and c.get("name") == "adam" for c in skipped), [c.get("name") for c in skipped]
PY
# a swept value that changed (beta2 0.999 -> 0.99) is another configuration,
# not judged under the old one's label: its cells are on one side only
sw=(run --workloads quadratic --optimizers adam --lrs 0.01 --seeds 2 --steps 30 --backend cpu)
"$OPTBENCH" "${sw[@]}" --sweep adam.beta2=0.95,0.999 --db "$tmp/swb.db" >/dev/null 2>&1 || fail "sweep b"
"$OPTBENCH" "${sw[@]}" --sweep adam.beta2=0.95,0.99 --db "$tmp/swc.db" >/dev/null 2>&1 || fail "sweep c"
compare 0 --baseline "$tmp/swb.db" --candidate "$tmp/swc.db" --time-tol off
check "a changed swept value: 2 cells on each side only: $(tail -1 "$tmp/out")" \
  grep -q "1 group: .*2 cells only in the baseline, 2 only in the candidate" "$tmp/out"
check "  ... not judged under the old label" test -z "$(grep '^quadratic *adam beta2=0.999 ' "$tmp/out" | grep -v 'only')"
# a shard, or a merge that lacks one: no verdict (its missing cells are not the night's)
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.01,0.03 --seeds 2 --steps 40 \
  --backend cpu --shard 0/2 --db "$tmp/sh0.db" >/dev/null 2>&1 || fail "the shard run"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/sh0.db"
check "a shard as the candidate: no verdict" grep -q "is shard 0/2 of its matrix" "$tmp/err"
# ... but a shard that holds the whole matrix (--shard 0/1, a one-task array),
# and a merge of whole databases (confirmation runs included), are whole
m1=(run --workloads quadratic --optimizers sgd,adam --lrs 0.01,0.03 --seeds 2 --steps 40 --backend cpu)
"$OPTBENCH" "${m1[@]}" --shard 0/1 --db "$tmp/sh01.db" >/dev/null 2>&1 || fail "the 0/1 shard run"
"$OPTBENCH" "${m1[@]}" --db "$tmp/m1.db" --confirm-seeds 2 >/dev/null 2>&1 || fail "the whole run"
compare 0 --baseline "$tmp/m1.db" --candidate "$tmp/sh01.db" --time-tol off
"$OPTBENCH" merge --out "$tmp/m1merged.db" "$tmp/m1.db" >/dev/null 2>&1 || fail "merge of a whole database"
compare 0 --baseline "$tmp/m1merged.db" --candidate "$tmp/sh01.db" --time-tol off
# one file on both sides is no verdict also without a database id (a database
# of an older build); the merged database has one of its own
python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute(\"delete from meta where key = 'database_id'\"); d.commit()" "$tmp/sh01.db"
compare 2 --baseline "$tmp/sh01.db" --candidate "$tmp/sh01.db"
check "the same file without a database id: no verdict" grep -q "the baseline's own" "$tmp/err"
check "a merge has a database id" test -n "$(q "$tmp/m1merged.db" "select value from meta where key = 'database_id'")"

# --markdown-append: adds to a step summary, one blank line apart; creates it
printf '# earlier step\nsome text' >"$tmp/summary.md"
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown-append "$tmp/summary.md"
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown-append "$tmp/summary.md" --quiet
check "appended: earlier content kept" test "$(head -2 "$tmp/summary.md")" = "$(printf '# earlier step\nsome text')"
check "appended twice" test "$(grep -c '^## optbench compare: no regression' "$tmp/summary.md")" = 2
check "a blank line before each summary" \
  test "$(grep -B2 '^## optbench compare' "$tmp/summary.md" | grep -cvE '^(--|## optbench compare.*)$')" = 4
check "exactly one blank line before each" test "$(grep -B2 '^## optbench compare' "$tmp/summary.md" | grep -c '^$')" = 2
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown-append "$tmp/new-summary.md"
check "append creates the file" test "$(head -1 "$tmp/new-summary.md")" = '## optbench compare: no regression'
cp "$tmp/ok.md" "$tmp/replaced.md"
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/replaced.md"
check "--markdown still replaces" test "$(grep -c '^## optbench compare' "$tmp/replaced.md")" = 1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/m1.md" --markdown-append "$tmp/m2.md"
check "both: a clear message: $(cat "$tmp/err")" grep -q -- '--markdown and --markdown-append both given' "$tmp/err"
if [ $have_py = 1 ]; then
  c=$(junit_counts "$tmp/ok.xml"); rc=$?
  check "JUnit XML parses (identical)" test $rc -eq 0
  check "4 test cases, 0 failures: $c" test "${c%% *}" = 4 -a "$(cut -d' ' -f2 <<<"$c")" = 0
fi

# a second, independent run of the same matrix: same losses (deterministic);
# step times of two runs on a shared machine differ, so time is not judged here
run "$tmp/rerun.db"
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/rerun.db" --time-tol off
# with step time judged: these steps take microseconds, under the floor, so
# neither their median nor their mean is judged (a stall of a few ms lifts
# such a mean past any floor, and only the cells that stalled would count).
# A floor of 5 ms: the default, 0.05 ms, is above these steps only in an
# optimized build (under the sanitizers on a busy machine, quadratic's adam
# steps passed it and two runs differed by 170%)
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/rerun.db" --time-floor 5
check "steps under the floor are not timed (rerun)" grep -q 'steps under 5 ms, not judged' "$tmp/out"

if [ $have_py = 1 ]; then
  # plant a regression: adam 50% worse on quadratic on every seed, sgd twice as
  # slow (p50 and p90: a steady slowdown)
  sql "$tmp/cand.db" \
    "UPDATE runs SET final_loss = final_loss * 1.5 WHERE optimizer = 'adam' AND workload = 'quadratic'" \
    "UPDATE runs SET step_ms_median = step_ms_median * 2, step_ms_p90 = step_ms_p90 * 2, step_ms_mean = step_ms_mean * 2 WHERE optimizer = 'sgd'"
  # steps under the floor on both sides are not timed (the default floor, 0.05
  # ms, is above these steps only in an optimized build: a floor of 1 s here)
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --junit "$tmp/floor.xml" --time-floor 1000
  check "steps under the floor are not timed" grep -q 'steps under 1000 ms, not judged' "$tmp/out"
  c=$(junit_counts "$tmp/floor.xml"); rc=$?
  check "only adam's loss fails with the floor: $c" test $rc -eq 0 -a "$(cut -d' ' -f2 <<<"$c")" = 1
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown "$tmp/bad.md" --junit "$tmp/bad.xml" \
    --time-floor 0
  check "says REGRESSION" grep -q 'REGRESSION' "$tmp/out"
  check "markdown: regression" grep -q '^## optbench compare: regression' "$tmp/bad.md"
  check "markdown names the loss" grep -q 'quadratic / adam: final loss at lr' "$tmp/bad.md"
  c=$(junit_counts "$tmp/bad.xml"); rc=$?
  check "JUnit XML parses (regression)" test $rc -eq 0
  check "3 failing cases (adam loss, sgd time x2): $c" test "$(cut -d' ' -f2 <<<"$c")" = 3
  check "adam on quadratic fails" grep -q 'optbench.quadratic/adam' <<<"$c"
  # with time off and a 60% loss tolerance it passes
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-tol off --loss-tol 0.6

  # steps slow now and then: the median step time as it was, the mean 50% up
  # on every cell of adam: a regression, seen through the mean
  cp "$tmp/base.db" "$tmp/slow.db"
  sql "$tmp/slow.db" "UPDATE runs SET step_ms_mean = step_ms_mean * 1.5 WHERE optimizer = 'adam'"
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/slow.db" --markdown "$tmp/slow.md" --time-floor 0
  check "slow steps: the mean's verdict in the row: $(grep '^quadratic *adam' "$tmp/out")" \
    grep -q '^quadratic *adam .*same; mean +50.0% \[+50.0%, +50.0%\] worse .*WORSE' "$tmp/out"
  check "slow steps: markdown says why" grep -q 'mean step time worse: median per-cell change +50%' "$tmp/slow.md"
  # the mean's own tolerance: +50% is within 0.6, and off leaves the median alone
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/slow.db" --time-floor 0 --time-mean-tol 0.6
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/slow.db" --time-floor 0 --time-mean-tol off --markdown "$tmp/moff.md"
  check "--time-mean-tol off: the thresholds say so" grep -q 'mean step time not judged' "$tmp/moff.md"

  # the candidate ran on another device (the CI runner changed), 3x slower and
  # with twice the peak memory: step times of different devices are not
  # compared, nor peak memory across backends; a note says so in every report
  cp "$tmp/base.db" "$tmp/gpu.db"
  gpu='cuda: NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, matmul fp32)'
  sql "$tmp/gpu.db" \
    "UPDATE runs SET backend = 'cuda', device = '$gpu', step_ms_median = step_ms_median * 3, step_ms_p90 = step_ms_p90 * 3, step_ms_mean = step_ms_mean * 3, peak_mem_bytes = peak_mem_bytes * 2"
  cpu=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT device FROM runs LIMIT 1").fetchone()[0])' "$tmp/base.db")
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/gpu.db" --time-floor 0 --markdown "$tmp/dev.md" \
    --junit "$tmp/dev.xml"
  note="24 matched cells ran on different devices (baseline: \"$cpu\"; candidate: \"$gpu\"): their step times are not compared (--time-across-devices compares them anyway); their peak memory is not compared (another backend: CPU and GPU memory figures do not compare)"
  check "other device: the note in stdout: $(grep '^note' "$tmp/out")" grep -qxF "note: $note" "$tmp/out"
  check "other device: each row says why time is not judged" \
    test "$(grep -cE '^(quadratic|rosenbrock) +(sgd|adam) .* other devices, not judged +state same; peak: other backend +same$' "$tmp/out")" = 4
  check "other device: the note in the Markdown: $(grep '^Note' "$tmp/dev.md")" \
    grep -qxF "Note: ${note/sm_90/sm\\_90}." "$tmp/dev.md"
  check "other device: a JUnit case holds the note" grep -qF '<system-out>note: 24 matched cells ran on different devices' "$tmp/dev.xml"
  c=$(junit_counts "$tmp/dev.xml"); rc=$?
  check "other device: JUnit parses, 5 cases, none failing: $c" test $rc -eq 0 -a "$c" = "5 0 "
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/gpu.db" --time-floor 0 --time-across-devices \
    --markdown "$tmp/dev.md"
  check "--time-across-devices: step time judged: $(grep '^rosenbrock *sgd' "$tmp/out")" \
    test "$(grep -cE '^(quadratic|rosenbrock) +(sgd|adam) .* \+200\.0% \[\+200\.0%, \+200\.0%\] worse ' "$tmp/out")" = 4
  check "--time-across-devices: the note says so" grep -q 'their step times are compared anyway (--time-across-devices)' "$tmp/dev.md"
  # the same backend, another CPU, for sgd only: its time is left out, adam's judged, memory judged
  cp "$tmp/base.db" "$tmp/cpu8.db"
  sql "$tmp/cpu8.db" \
    "UPDATE runs SET device = 'cpu: 8 threads', step_ms_median = step_ms_median * 3, step_ms_p90 = step_ms_p90 * 3, step_ms_mean = step_ms_mean * 3 WHERE optimizer = 'sgd'"
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/cpu8.db" --time-floor 0
  check "another CPU for sgd: the note: $(grep '^note' "$tmp/out")" \
    grep -qF "note: 12 matched cells ran on different devices (baseline: \"$cpu\"; candidate: \"cpu: 8 threads\"): their step times are not compared (--time-across-devices compares them anyway)" "$tmp/out"
  check "another CPU for sgd: only sgd's time left out" \
    test "$(grep -cE '^(quadratic|rosenbrock) +sgd .* other devices, not judged ' "$tmp/out")" = 2 -a \
    "$(grep -cE '^(quadratic|rosenbrock) +adam .* other devices' "$tmp/out")" = 0
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/cpu8.db" --time-floor 0 --time-across-devices --quiet
  # the same machine with OpenMP's threads waiting passively (the
  # environment's OMP_WAIT_POLICY, which moves step times 2x idle and far more
  # on a busy machine): the device text says so, its step times are another
  # device's, peak memory still compares
  OMP_WAIT_POLICY=passive run "$tmp/passive.db"
  check "OMP_WAIT_POLICY=passive: in the device text" \
    test "$(q "$tmp/passive.db" "SELECT count(*) FROM runs WHERE device = '$cpu; OpenMP waits: OMP_WAIT_POLICY=passive'")" = 24
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/passive.db" --time-floor 0
  check "OMP_WAIT_POLICY=passive: step times not judged, peak memory judged" \
    test "$(grep -cE '^(quadratic|rosenbrock) +(sgd|adam) .* other devices, not judged +same +same$' "$tmp/out")" = 4
  check "OMP_WAIT_POLICY=passive: the note names the waits, not memory: $(grep '^note' "$tmp/out")" \
    grep -qxF "note: 24 matched cells ran on different devices (baseline: \"$cpu\"; candidate: \"$cpu; OpenMP waits: OMP_WAIT_POLICY=passive\"): their step times are not compared (--time-across-devices compares them anyway)" "$tmp/out"

  # one-sided cells: listed; --strict fails
  cp "$tmp/base.db" "$tmp/fewer.db"
  python3 - "$tmp/fewer.db" <<'PY'
import sys, sqlite3
db = sqlite3.connect(sys.argv[1])
rid = db.execute("SELECT max(id) FROM runs").fetchone()[0]
for t in ("curves", "evals", "events"):
    db.execute(f"DELETE FROM {t} WHERE run_id = ?", (rid,))
db.execute("DELETE FROM runs WHERE id = ?", (rid,))
db.commit()
PY
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/fewer.db" --junit "$tmp/few.xml"
  check "lists the missing cell" grep -q '1 cells only in the baseline' "$tmp/out"
  c=$(junit_counts "$tmp/few.xml"); rc=$?
  check "JUnit with a one-sided case parses: $c" test $rc -eq 0 -a "${c%% *}" = 5
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/fewer.db" --strict

  # a seed newly diverged at the judged lr is a regression, though the median
  # over 2 seeds (0 and +inf) alone would not say so
  cp "$tmp/base.db" "$tmp/div.db"
  sql "$tmp/div.db" \
    "UPDATE runs SET status = 'diverged', diverged_step = 30, final_loss = NULL WHERE optimizer = 'adam' AND workload = 'quadratic' AND seed = 1"
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/div.db" --time-tol off
  check "new divergence fails: $(grep quadratic "$tmp/out" | grep adam)" grep -q 'WORSE (new divergences)' "$tmp/out"
  # a final loss that is not finite (NULL in the database) counts as +inf
  cp "$tmp/base.db" "$tmp/nan.db"
  sql "$tmp/nan.db" \
    "UPDATE runs SET final_loss = NULL, eval_loss = NULL WHERE optimizer = 'sgd' AND workload = 'quadratic'"
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/nan.db" --time-tol off --markdown "$tmp/nan.md"
  check "a non-finite loss fails" grep -q 'seeds at lr .* diverged or ended with a non-finite loss' "$tmp/nan.md"
  # a baseline diverged at every lr and a candidate that converges: better
  sql "$tmp/nan.db" \
    "UPDATE runs SET status = 'diverged', diverged_step = 5, final_loss = NULL WHERE optimizer = 'sgd' AND workload = 'rosenbrock'"
  compare 0 --baseline "$tmp/nan.db" --candidate "$tmp/base.db" --time-tol off
  check "converging now is better: $(grep rosenbrock "$tmp/out" | grep sgd)" \
    grep -qE '^rosenbrock +sgd .* better$' "$tmp/out"
  check "the candidate's best lr is judged and says so" grep -qE '^rosenbrock +sgd +[0-9.e-]+ \(cand best\) ' "$tmp/out"
  # ... said in words, not as an infinite change, in every report
  compare 0 --baseline "$tmp/nan.db" --candidate "$tmp/base.db" --time-tol off --markdown "$tmp/conv.md" \
    --junit "$tmp/conv.xml"
  check "converging now, in words: $(grep rosenbrock "$tmp/out" | grep sgd)" \
    grep -qE '^rosenbrock +sgd .* now finite \(diverged before\) better ' "$tmp/out"
  check "... in the Markdown" grep -qE '^\| rosenbrock \| sgd \| .* \| now finite \(diverged before\) better \|' "$tmp/conv.md"
  check "... in the JUnit" grep -q 'final loss now finite (diverged before) better;' "$tmp/conv.xml"
  check "no infinite change shown" test "$(cat "$tmp/out" "$tmp/conv.md" "$tmp/conv.xml" | grep -c 'inf\b')" = 0
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/nan.db" --time-tol off --markdown "$tmp/conv.md" \
    --junit "$tmp/conv.xml"
  check "diverged now, in words: $(grep rosenbrock "$tmp/out" | grep sgd)" \
    grep -qE '^rosenbrock +sgd .* now diverged \(finite before\) worse ' "$tmp/out"
  check "... in the Markdown" grep -qE '^\| rosenbrock \| sgd \| .* \| now diverged \(finite before\) worse \|' "$tmp/conv.md"
  check "... in the JUnit" grep -q 'final loss now diverged (finite before) worse;' "$tmp/conv.xml"
  check "no infinite change shown" test "$(cat "$tmp/out" "$tmp/conv.md" "$tmp/conv.xml" | grep -c 'inf\b')" = 0
  # a damaged database: no verdict (2, not 1), the side named
  cp "$tmp/base.db" "$tmp/noruns.db"
  sql "$tmp/noruns.db" "DROP TABLE runs"
  compare 2 --baseline "$tmp/base.db" --candidate "$tmp/noruns.db"
  check "names the damaged side: $(cat "$tmp/err")" grep -q 'candidate database' "$tmp/err"
  # ... and the reports given say so, in place of last night's verdict
  no_verdict_reports "damaged database" --baseline "$tmp/base.db" --candidate "$tmp/noruns.db"
  check "damaged: the Markdown names the side" grep -q '^compare could not run: the candidate database' "$tmp/nv.md"
  stale "$tmp/nv.md"
  compare 2 --baseline "$tmp/base.db" --candidate "$tmp/noruns.db" --markdown-append "$tmp/nv.md"
  check "damaged: appended after last night's" test "$(head -1 "$tmp/nv.md")" = 'LAST NIGHT' -a \
    "$(grep -c '^compare could not run: the candidate database' "$tmp/nv.md")" = 1
  # a path that needs escaping: markup and a byte that is not UTF-8 in the message
  odd="$tmp/odd<&\"$(printf '\377')_*.db"
  no_verdict_reports "odd path" --baseline "$tmp/base.db" --candidate "$odd"
  check "odd path: escaped for Markdown" grep -qF 'odd&lt;&amp;"?\_\*.db' "$tmp/nv.md"
  # the same database run twice into one file: a note on the mixed benchmarks
  cp "$tmp/base.db" "$tmp/twice.db"
  run "$tmp/twice.db"
  sql "$tmp/twice.db" \
    "UPDATE runs SET status = 'failed', final_loss = NULL WHERE benchmark_id = 2 AND optimizer = 'adam'"
  compare 0 --baseline "$tmp/base.db" --candidate "$tmp/twice.db" --time-tol off
  check "notes the mixed benchmarks" grep -q 'candidate database holds runs of 2 benchmarks' "$tmp/out"
  compare 1 --baseline "$tmp/base.db" --candidate "$tmp/twice.db" --time-tol off --candidate-benchmark latest
else
  echo "python3 not available: planted-regression and XML checks skipped"
fi

# unusable input: exit 2
printf 'not a database\n' >"$tmp/text.db"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/text.db"
check "names the file" grep -q 'text.db' "$tmp/err"
compare 2 --baseline "$tmp/missing.db" --candidate "$tmp/base.db"
compare 2 --baseline "$tmp/base.db"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --loss-tol -1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-mean-tol often
check "a bad --time-mean-tol is named: $(cat "$tmp/err")" grep -q "time-mean-tol 'often' is not a non-negative number (a fraction, 0.1, or a percentage, 10%) or 'off'" "$tmp/err"
# a relative tolerance is a fraction or a percentage; 10 for 10% is refused, not read as 1000%
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-tol 10
check "--time-tol 10: a fraction, said so: $(cat "$tmp/err")" grep -q "time-tol 10 is a fraction, 1000%: write 10% for a percentage" "$tmp/err"
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/same.db" --time-tol 1000% --loss-tol 5%
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --frobnicate 1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --frobnicate
check "an unknown last option is unknown: $(cat "$tmp/err")" grep -q "unknown option '--frobnicate'" "$tmp/err"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --loss-tol inf
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --candidate-benchmark 99
check "no such benchmark: $(cat "$tmp/err")" grep -q 'has no benchmark 99' "$tmp/err"
# exit 2 with reports given: each says why, whatever the cause (and wherever
# the report options stand)
no_verdict_reports "unreadable database" --baseline "$tmp/base.db" --candidate "$tmp/text.db"
no_verdict_reports "missing database" --baseline "$tmp/missing.db" --candidate "$tmp/base.db"
no_verdict_reports "missing benchmark" --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --candidate-benchmark 99
check "missing benchmark: named" grep -q 'has no benchmark 99' "$tmp/nv.md"
no_verdict_reports "bad value" --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --loss-tol -1
stale "$tmp/nv.xml"
compare 2 --loss-tol nan --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --junit "$tmp/nv.xml"
check "bad value before the report option: reported" grep -q "loss-tol &apos;nan&apos;" "$tmp/nv.xml"
no_verdict_reports "unknown option" --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --frobnicate 1
no_verdict_reports "no candidate" --baseline "$tmp/base.db"
no_verdict_reports "both markdowns" --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --markdown-append "$tmp/m2.md"
# a report that cannot be written (its folder cannot be made: a file is in
# the way): no verdict (2), not a regression (1)
printf 'a file\n' >"$tmp/afile"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-tol off --markdown "$tmp/afile/dir.md"
check "names the report: $(cat "$tmp/err")" grep -q "cannot write '$tmp/afile/dir.md'" "$tmp/err"
# a report's folder that is not there yet is made (test-results/ in a CI job)
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/same.db" --time-tol off --junit "$tmp/made/here/r.xml" \
  --markdown "$tmp/made/r.md" >/dev/null 2>"$tmp/err"
rc=$?
check "reports into folders not there yet: written (rc $rc: $(cat "$tmp/err"))" \
  test $rc = 0 -a -s "$tmp/made/here/r.xml" -a -s "$tmp/made/r.md"
# a reader of the table that stops early (| head): the status is still a
# verdict, 0, 1 or 2 (no verdict when the table itself could not be written),
# never SIGPIPE's 141, and the reports agree with it
"$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/same.db" --time-tol off --markdown "$tmp/pipe.md" 2>"$tmp/err" |
  head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
check "a reader that stops early: a verdict's status (rc $rc)" test $rc = 0 -o $rc = 2
if [ $rc = 0 ]; then want='## optbench compare: no regression'; else want='## optbench compare: no verdict'; fi
check "  ... the report agrees" test "$(head -1 "$tmp/pipe.md")" = "$want"
# an option given twice would judge another database than the one meant: no verdict
no_verdict_reports "--baseline twice" --baseline "$tmp/cand.db" --baseline "$tmp/base.db" --candidate "$tmp/cand.db"
check "--baseline twice: says so: $(cat "$tmp/err")" grep -q "\-\-baseline is given twice ('$tmp/cand.db' and '$tmp/base.db'): give it once" "$tmp/err"
# a report never replaces a database (either of the two, or another) or lands in a folder,
# and two reports are not written into one file
cp "$tmp/base.db" "$tmp/rp-b.db"; cp "$tmp/cand.db" "$tmp/rp-c.db"; cp "$tmp/base.db" "$tmp/rp-other.db"
sums=$(md5sum "$tmp/rp-b.db" "$tmp/rp-c.db" "$tmp/rp-other.db" | cut -d' ' -f1)
compare 2 --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --markdown "$tmp/rp-b.db"
check "--markdown over the baseline: $(cat "$tmp/err")" grep -q "\-\-markdown '$tmp/rp-b.db' is the baseline database" "$tmp/err"
compare 2 --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --junit "$tmp/rp-c.db"
check "--junit over the candidate: $(cat "$tmp/err")" grep -q "\-\-junit '$tmp/rp-c.db' is the candidate database" "$tmp/err"
compare 2 --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --markdown-append "$tmp/rp-other.db"
check "--markdown-append to another database: $(cat "$tmp/err")" grep -q "is an SQLite database" "$tmp/err"
compare 2 --baseline "$tmp/rp-b.db" --markdown "$tmp/rp-b.db"
check "no verdict: its report is not written over the baseline either" grep -q "is the baseline database" "$tmp/err"
check "the databases are unchanged" test "$sums" = "$(md5sum "$tmp/rp-b.db" "$tmp/rp-c.db" "$tmp/rp-other.db" | cut -d' ' -f1)"
mkdir -p "$tmp/rp-dir"
compare 2 --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --markdown "$tmp/rp-dir"
check "--markdown to a folder: $(cat "$tmp/err")" grep -q "\-\-markdown '$tmp/rp-dir' is a folder" "$tmp/err"
compare 2 --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --markdown "$tmp/rp-one.md" --junit "$tmp/rp-one.md"
check "two reports into one file: $(cat "$tmp/err")" grep -q "\-\-markdown and --junit name one file" "$tmp/err"
check "  ... the file says why there is no verdict" grep -q '^compare could not run: --markdown and --junit name one file' "$tmp/rp-one.md"
# with --markdown-append one of the two: added to, its earlier content kept
printf 'an earlier step\n' >"$tmp/rp-app.md"
compare 2 --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --markdown-append "$tmp/rp-app.md" --junit "$tmp/rp-app.md"
check "  ... --markdown-append's earlier content kept" test "$(head -1 "$tmp/rp-app.md")" = "an earlier step"
check "  ... and the reason added after it" grep -q '^compare could not run: --markdown-append and --junit name one file' "$tmp/rp-app.md"
check "  ... once" test "$(grep -c 'compare could not run' "$tmp/rp-app.md")" = 1
# processes appending to one summary at once (a CI step's): every report kept
for i in $(seq 24); do
  "$OPTBENCH" compare --baseline "$tmp/rp-b.db" --candidate "$tmp/rp-c.db" --markdown-append "$tmp/rp-many.md" \
    >/dev/null 2>&1 &
done
wait
check "24 processes appending at once: 24 reports" test "$(grep -c '^## optbench compare' "$tmp/rp-many.md")" = 24
# ... and the reports that could be written say so, in place of the verdict,
# whichever report was not written; the verdict line says there is none
unwritable() { # what, then the report options: exit 2, the reports written say why
  local what=$1; shift
  stale "$tmp/nv.md"; stale "$tmp/nv.xml"
  compare 2 --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-tol off "$@"
  check "$what: the line is no verdict: $(tail -1 "$tmp/out")" \
    grep -qxF "optbench compare: no verdict (exit status 2): cannot write '$bad': $why" "$tmp/out"
  check "$what: no verdict printed" test "$(grep -c 'no regression\|REGRESSION' "$tmp/out")" = 0
}
bad="$tmp/afile/x.xml" why='Not a directory'
unwritable "JUnit not written" --markdown "$tmp/nv.md" --junit "$bad"
check "JUnit not written: the Markdown says why: $(head -3 "$tmp/nv.md")" \
  grep -qxF "compare could not run: cannot write '$bad': $why" "$tmp/nv.md"
check "JUnit not written: no verdict in the Markdown" \
  test "$(grep -c '^## optbench compare: no verdict$' "$tmp/nv.md")" = 1 -a "$(grep -c '| verdict |' "$tmp/nv.md")" = 0
# a report whose folder cannot be made: the written report gives the reason as stderr does
bad="$tmp/afile/sub/x.xml" why="cannot create folder '$tmp/afile/sub': Not a directory ('$tmp/afile': a file of that name is in the way)"
unwritable "JUnit's folder not made" --markdown "$tmp/nv.md" --junit "$bad"
check "JUnit's folder not made: the Markdown says why: $(sed -n 3p "$tmp/nv.md")" \
  grep -qxF "compare could not run: cannot write '$bad': $why" "$tmp/nv.md"
bad="$tmp/afile/x.md" why='Not a directory'
unwritable "Markdown not written" --markdown "$bad" --junit "$tmp/nv.xml"
if [ $have_py = 1 ]; then
  msg=$(junit_error "$tmp/nv.xml"); rc=$?
  check "Markdown not written: the JUnit has one <error>: $msg" test $rc -eq 0 -a "$msg" = "cannot write '$bad': $why"
else
  check "Markdown not written: JUnit error" grep -q '<error type="no verdict"' "$tmp/nv.xml"
fi
if [ -w /dev/full ]; then
  # opened, but the writing fails (a full disk): the verdicts already written
  # are replaced; an appended summary keeps what it held before
  bad=/dev/full why='No space left on device'
  unwritable "JUnit on a full disk" --markdown "$tmp/nv.md" --junit "$bad"
  check "full disk: the Markdown says why" grep -qxF "compare could not run: cannot write '$bad': $why" "$tmp/nv.md"
  check "full disk: no verdict in the Markdown" test "$(grep -c '| verdict |' "$tmp/nv.md")" = 0
  printf '# earlier step\n' >"$tmp/sum.md"
  unwritable "full disk, appended" --markdown-append "$tmp/sum.md" --junit "$bad"
  check "full disk, appended: earlier content kept, one section, no verdict: $(cat "$tmp/sum.md")" \
    test "$(head -1 "$tmp/sum.md")" = '# earlier step' -a "$(grep -c '^## optbench compare' "$tmp/sum.md")" = 1 \
    -a "$(grep -c '^## optbench compare: no verdict$' "$tmp/sum.md")" = 1
fi
stale "$tmp/nv.xml"
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/text.db" --markdown "$tmp/afile/dir.md" --junit "$tmp/nv.xml"
check "no verdict, a report not written: named" grep -q "cannot write '$tmp/afile/dir.md'" "$tmp/err"
check "no verdict, the other report still written" grep -q '<error type="no verdict"' "$tmp/nv.xml"
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.5 --seeds 1 --steps 10 --backend cpu \
  --db "$tmp/other.db" >/dev/null 2>&1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/other.db"
check "says nothing matches" grep -q 'no cell of the candidate matches' "$tmp/err"
check "says workload parameters are matched" grep -q 'same workload, workload parameters, optimizer' "$tmp/err"
check "the message is one line" test "$(wc -l <"$tmp/err")" -eq 1

# the same matrix with one workload parameter changed: nothing matches, and the
# message names the parameter and both values
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
  --seeds 2 --steps 60 --eval-every 30 --backend cpu --set quadratic.noise=2 \
  --db "$tmp/noise.db" >/dev/null 2>&1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/noise.db"
check "names the differing parameter: $(cat "$tmp/err")" \
  grep -qE "quadratic's workload parameters differ: noise [0-9.e-]+ in the baseline, 2 in the candidate" "$tmp/err"
check "still one line" test "$(wc -l <"$tmp/err")" -eq 1
# other lrs and steps (no cell of one workload, optimizer, lr and seed in
# both): the nearest pair's differences are named
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.02 --steps 20 --backend cpu \
  --db "$tmp/lr2.db" >/dev/null 2>&1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/lr2.db"
check "names the lrs and steps that differ: $(cat "$tmp/err")" \
  grep -qE "e.g. quadratic with sgd: lr 0.0?01 in the baseline, 0.02 in the candidate; steps 60 in the baseline, 20 in the candidate" "$tmp/err"
"$OPTBENCH" run --workloads rosenbrock --optimizers lion --lrs 0.02 --steps 20 --backend cpu \
  --db "$tmp/nopair.db" >/dev/null 2>&1
compare 2 --baseline "$tmp/base.db" --candidate "$tmp/nopair.db"
check "says no pair is in both: $(cat "$tmp/err")" grep -q "no workload x optimizer pair is in both" "$tmp/err"
# the same, with another workload that still matches: a note names the change
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
  --seeds 2 --steps 60 --eval-every 30 --backend cpu --set quadratic.noise=2 \
  --db "$tmp/noise2.db" >/dev/null 2>&1
compare 0 --baseline "$tmp/base.db" --candidate "$tmp/noise2.db" --time-tol off
check "notes the cells run differently: $(grep note "$tmp/out")" \
  grep -qE "same cells run differently; e.g. quadratic's workload parameters differ: noise" "$tmp/out"
"$OPTBENCH" compare --help >"$tmp/help" 2>&1
check "--help: workload parameters are matched" grep -q 'workload parameters' "$tmp/help"
check "--help: when to use --time-tol off" grep -qF -- '--time-tol off (or --time-mean-tol off, for the mean alone) when' "$tmp/help"
# --help and the parser read one list: every option listed parses as listed
# (one with a value says it needs one when given last; a flag is known), and
# the list holds every option the usage line names
opts=$(sed -n '/^options:/,/^$/p' "$tmp/help" | grep -oE '^  --[a-z-]+( [^ ]+)?' | sed 's/^  //')
for need in --baseline --candidate --markdown --markdown-append --junit; do
  check "--help lists $need" grep -qE -- "^$need( |\$)" <<<"$opts"
done
while read -r name arg; do
  "$OPTBENCH" compare --baseline "$tmp/base.db" --candidate "$tmp/cand.db" --time-tol off "$name" \
    >"$tmp/out" 2>"$tmp/err"
  if [ -n "$arg" ]; then
    check "$name $arg: needs a value" grep -q -- "$name needs a value" "$tmp/err"
  else
    check "$name: a flag it knows" test "$(grep -c 'unknown option' "$tmp/err")" = 0
  fi
done <<<"$opts"
check "--help: lists --markdown-append" grep -q 'markdown-append FILE' "$tmp/help"

exit $fail
