#!/usr/bin/env bash
# `optbench report` and `optbench history` end to end: a small real matrix,
# the report folder (CSV, scripts, PNG/SVG when gnuplot is installed,
# summary.md, index.html), the same without gnuplot on PATH, a second
# benchmark in the same database for history, and the bad-input paths.
. "$(dirname "$0")/common.bash"
bad_input() { # description, expected stderr part, args...
  local what="$1" want="$2"; shift 2
  "$OPTBENCH" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne 2 ] || ! grep -qF -- "$want" "$tmp/err"; then
    echo "FAIL: $what: rc=$rc (want 2), stderr:"; cat "$tmp/err"; fail=1
  fi
}

db="$tmp/a.db"
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.001,0.01,0.1 \
  --seeds 2 --steps 60 --eval-every 20 --backend cpu --name first --db "$db" >"$tmp/run.log" 2>&1
check "run finishes (see below)" test -f "$db" || cat "$tmp/run.log"

"$OPTBENCH" report --db "$db" --out "$tmp/rep" >"$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
check "report exits 0 (rc $rc)" test $rc -eq 0
check "report prints the ranking" grep -q "^  quadratic  *1 [a-z]*\*\? [0-9.e-]*, 2 " "$tmp/out"
# an optimizer whose best lr is the grid's edge is marked, and the mark explained
check "the ranking marks a best lr at the grid's edge" grep -q "^  quadratic .* [a-z]*\* [0-9.e-]*" "$tmp/out"
check "  ... and says what the mark means" grep -q "^  \*: its best lr is the smallest or largest it ran" "$tmp/out"
check "  ... and how few seeds a place rests on" grep -q "^  a place rests on as few as 2 seeds" "$tmp/out"
check "  ... and so does the loss figure's legend" grep -q 'title "[a-z]* (lr [0-9.e-]*, grid edge)"' "$tmp/rep/loss_quadratic.gp"
for f in runs.csv curves.csv evals.csv summary.csv lr_sweep.csv curves_best.csv time_to_target.csv \
         cost.csv profile.csv summary.md index.html style.gp loss_quadratic.gp lr_quadratic.gp \
         loss_rosenbrock.gp lr_rosenbrock.gp step_time.gp memory_peak.gp profile.gp; do
  check "report wrote $f" test -s "$tmp/rep/$f"
done
check "runs.csv has a row per run (24 + header)" test "$(grep -c '^[0-9]' "$tmp/rep/runs.csv")" -eq 24
check "summary.md ranks the quadratic workload" grep -q '^## Workload quadratic' "$tmp/rep/summary.md"
# evaluated every 20 steps: a held-out time to target per workload, its CSV and --eval-target
check "summary.md has the held-out time to target" grep -q 'Time to the held-out target.*every 20 steps' "$tmp/rep/summary.md"
check "time_to_heldout_target.csv: a row per group (4 + header), eval_every 20" \
  test "$(grep -c ',20,"loss",' "$tmp/rep/time_to_heldout_target.csv")" -eq 4
"$OPTBENCH" report --db "$db" --out "$tmp/rep_ev" --no-render --eval-target quadratic=1e9 >/dev/null 2>&1
check "--eval-target above the loss at step 0: not ranked" \
  grep -q 'held-out target 1e+09 (given) is at or above the held-out loss at step 0' "$tmp/rep_ev/summary.md"
"$OPTBENCH" report --db "$db" --out "$tmp/rep_po" --no-render --profile-on heldout >/dev/null 2>&1
check "--profile-on heldout: the profile is on the held-out target" \
  grep -q 'training time to the held-out target is within a factor tau' "$tmp/rep_po/summary.md"
check "--profile-on heldout: in the figure's title" grep -q "reach each workload's held-out target loss" "$tmp/rep_po/profile.gp"
# the held-out target on the held-out metric: cnn-tiny has one (accuracy), quadratic none
"$OPTBENCH" run --workloads cnn-tiny,quadratic --optimizers sgd,adam --lrs 0.01,0.1 --seeds 2 --steps 40 \
  --eval-every 10 --backend cpu --db "$tmp/m.db" >"$tmp/run_m.log" 2>&1 || { echo "FAIL: run cnn-tiny"; fail=1; }
"$OPTBENCH" report --db "$tmp/m.db" --out "$tmp/rep_m" --no-render --heldout-on metric >/dev/null 2>&1
check "--heldout-on metric: the target on the held-out accuracy" \
  grep -q 'Time to the held-out target (AlgoPerf.*target held-out accuracy .* at or above it' "$tmp/rep_m/summary.md"
check "--heldout-on metric: a row per cnn-tiny group, on the metric; none for quadratic" \
  test "$(grep -c '^"cnn-tiny".*,10,"metric",' "$tmp/rep_m/time_to_heldout_target.csv")" -eq 2 -a \
  "$(grep -c '^"quadratic"' "$tmp/rep_m/time_to_heldout_target.csv")" -eq 0
check "--heldout-on metric: quadratic has no metric, and the report says so" \
  grep -q 'It is on the held-out metric here (report --heldout-on metric), and quadratic has none' "$tmp/rep_m/summary.md"
bad_input "report --heldout-on misspelt" "report: --heldout-on 'accuracy' is not 'loss' or 'metric'" report --db "$db" --out "$tmp/x" --heldout-on accuracy
bad_input "report --profile-on misspelt" "report: --profile-on 'held' is not 'train' or 'heldout'" report --db "$db" --out "$tmp/x" --profile-on held
check "index.html is a page" grep -q '</html>' "$tmp/rep/index.html"
check "report wrote summary.tex" test -s "$tmp/rep/summary.tex"
# a read-only connection creates NAME-wal and NAME-shm; the report leaves none behind
check "report leaves no -wal/-shm beside the database" test ! -e "$db-wal" -a ! -e "$db-shm"
# an empty -wal and its -shm that a killed reader left: removed, the database unchanged
cp "$db" "$tmp/left.db"
python3 -c 'import sqlite3, os, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True); c.execute("select count(*) from runs").fetchone(); os._exit(0)' "$tmp/left.db"
sum=$(md5sum <"$tmp/left.db")
check "a killed reader left -wal and -shm (the case below)" test -e "$tmp/left.db-shm" -a ! -s "$tmp/left.db-wal"
"$OPTBENCH" report --db "$tmp/left.db" --out "$tmp/rep_left" --no-render >/dev/null 2>&1
check "a killed reader's empty -wal and -shm are removed" test ! -e "$tmp/left.db-wal" -a ! -e "$tmp/left.db-shm"
check "  ... and the database is unchanged" test "$sum" = "$(md5sum <"$tmp/left.db")"
# summary.tex in a LaTeX document, where pdflatex with booktabs is installed (graphicx is LaTeX's own)
# (Debian: texlive-latex-recommended); skipped otherwise
check_tex "summary.tex compiles with pdflatex" "$tmp/rep/summary.tex" ||
  echo "note: pdflatex with booktabs not installed: summary.tex not compiled"
if command -v gnuplot >/dev/null 2>&1; then
  for s in loss_quadratic lr_quadratic loss_rosenbrock lr_rosenbrock step_time profile; do
    check "$s.png is a PNG" sh -c "head -c 4 '$tmp/rep/$s.png' | od -An -c | grep -q 'P   N   G'"
    check "$s.svg is an SVG" grep -q '</svg>' "$tmp/rep/$s.svg"
    check "index.html shows $s" grep -q "src=\"$s.png\"" "$tmp/rep/index.html"
  done
  # a script reruns by hand in the report folder
  rm -f "$tmp/rep/lr_quadratic.png"
  (cd "$tmp/rep" && gnuplot lr_quadratic.gp) >/dev/null 2>&1
  check "lr_quadratic.gp reruns by hand" test -s "$tmp/rep/lr_quadratic.png"
  # PDF_TITLES = 0: the PDF, drawn last, without the title; by default with it
  check "PDF_TITLES=0 leaves the PDF's title out" sh -c \
    "cd '$tmp/rep' && gnuplot -e 'PDF_TITLES = 0' -e 'load \"lr_quadratic.gp\"; show title' 2>&1 | grep -q 'title is \"\",'"
  check "the PDF has its title by default" sh -c \
    "cd '$tmp/rep' && gnuplot -e 'load \"lr_quadratic.gp\"; show title' 2>&1 | grep -q 'title is \"quadratic: final training loss'"
else
  echo "gnuplot not installed: rendering not checked"
fi

# --pdf-width: style.gp's PDF_WIDTH (the default a page's text width, 6.5
# inches), which each script's PDF follows; where gnuplot has pdfcairo, a
# column-wide PDF is 3.3 inches (237 points) wide and 0.8 as high
check "style.gp's PDF_WIDTH is 6.5 by default" grep -qxF 'if (!exists("PDF_WIDTH")) PDF_WIDTH = 6.5' "$tmp/rep/style.gp"
"$OPTBENCH" report --db "$db" --out "$tmp/col" --pdf-width column >"$tmp/out" 2>&1; rc=$?
check "report --pdf-width column exits 0 (rc $rc)" test $rc -eq 0
check "--pdf-width column: PDF_WIDTH 3.3" grep -qxF 'if (!exists("PDF_WIDTH")) PDF_WIDTH = 3.3' "$tmp/col/style.gp"
check "--pdf-width column: the page says 3.3 x 2.64 inches" grep -qF "3.3 x 2.64 inches with 6-point text" "$tmp/col/index.html"
"$OPTBENCH" report --db "$db" --out "$tmp/w" --pdf-width 3.25 --no-render >"$tmp/out" 2>&1
check "--pdf-width 3.25: PDF_WIDTH 3.25" grep -qxF 'if (!exists("PDF_WIDTH")) PDF_WIDTH = 3.25' "$tmp/w/style.gp"
mediabox() { grep -a -o '/MediaBox \[ *0 0 [0-9.]* [0-9.]*' "$1" | head -1 | awk '{print int($5 + 0.5) "x" int($6 + 0.5)}'; }
if command -v gnuplot >/dev/null 2>&1 && gnuplot -e 'print GPVAL_TERMINALS' 2>&1 | grep -q pdfcairo; then
  for s in loss_quadratic lr_quadratic step_time profile; do
    check "$s.pdf is 6.5 x 4.03 in by default ($(mediabox "$tmp/rep/$s.pdf") pt)" test "$(mediabox "$tmp/rep/$s.pdf")" = 468x290
    check "$s.pdf is 3.3 x 2.64 in with --pdf-width column ($(mediabox "$tmp/col/$s.pdf") pt)" \
      test "$(mediabox "$tmp/col/$s.pdf")" = 237x190
  done
  # the text's size as drawn (the text matrices of the page's streams): the
  # points the page says, not pdfcairo's two thirds of them
  pdf_pt() {
    python3 - "$1" <<'PY'
import re, sys, zlib
b = open(sys.argv[1], "rb").read()
sizes = set()
# each stream's data read by zlib itself, which stops at the stream's end: a
# pattern up to "endstream" would cut a last data byte of \r (its line break
# is \r?\n), a run in 256, and lose that stream's text
for m in re.finditer(rb"(?<!end)stream\r?\n", b):
    try:
        t = zlib.decompressobj().decompress(b[m.end():])
    except zlib.error:
        continue
    for s in re.findall(rb"([0-9.]+) 0 0 -?([0-9.]+) [-0-9.]+ [-0-9.]+ Tm", t):
        sizes.add(round(float(s[0]), 2))
print(" ".join(str(s) for s in sorted(sizes)))
PY
  }
  check "the text width's PDF text is 8 points ($(pdf_pt "$tmp/rep/step_time.pdf"))" test "$(pdf_pt "$tmp/rep/step_time.pdf")" = 8.0
  check "the column's PDF text is 6 points ($(pdf_pt "$tmp/col/step_time.pdf"))" test "$(pdf_pt "$tmp/col/step_time.pdf")" = 6.0
  check "gnuplot -e 'PDF_WIDTH = 3.3' redraws a column-wide PDF" sh -c \
    "cd '$tmp/rep' && gnuplot -e 'PDF_WIDTH = 3.3' lr_quadratic.gp >/dev/null 2>&1"
  check "... 3.3 in wide ($(mediabox "$tmp/rep/lr_quadratic.pdf") pt)" test "$(mediabox "$tmp/rep/lr_quadratic.pdf")" = 237x190
else
  echo "note: gnuplot without pdfcairo: the PDFs' size not checked"
fi

# without gnuplot: scripts and CSVs, a clear message, exit 0
PATH=/nonexistent "$OPTBENCH" report --db "$db" --out "$tmp/rep2" >"$tmp/out" 2>&1; rc=$?
check "report without gnuplot exits 0 (rc $rc)" test $rc -eq 0
check "says gnuplot is missing" grep -q 'gnuplot not found' "$tmp/out"
check "still writes scripts" test -s "$tmp/rep2/loss_quadratic.gp"
check "no PNG without gnuplot" test ! -e "$tmp/rep2/loss_quadratic.png"
check "page says how to render" grep -q 'Not rendered' "$tmp/rep2/index.html"

# history over two benchmarks
"$OPTBENCH" run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.01,0.1 \
  --seeds 2 --steps 60 --backend cpu --name second --db "$db" >"$tmp/run2.log" 2>&1
"$OPTBENCH" history --db "$db" --out "$tmp/hist" >"$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
check "history exits 0 (rc $rc)" test $rc -eq 0
check "history prints both benchmarks" test "$(grep -cE '^[12] ' "$tmp/out")" -eq 2
check "history.csv has 2 rows" test "$(grep -c '^[0-9]' "$tmp/hist/history.csv")" -eq 2
check "history.gp written" test -s "$tmp/hist/history.gp"
if command -v gnuplot >/dev/null 2>&1; then check "history.png rendered" test -s "$tmp/hist/history.png"; fi
"$OPTBENCH" history --db "$db" --metric step_ms --workload quadratic --optimizer adam >"$tmp/out" 2>&1
check "history of one series" grep -q 'quadratic adam' "$tmp/out"
bad_input "history: unknown metric" "did you mean 'final_loss'" history --db "$db" --metric final_los
bad_input "history: no --db" "--db is required" history

# bad input: exit 2, one line naming the problem, nothing changed
printf 'workloads: [quadratic]\n' >"$tmp/config.yaml"
sum=$(cksum <"$tmp/config.yaml")
bad_input "report on a text file" "config.yaml" report --db "$tmp/config.yaml" --out "$tmp/x"
check "text file unchanged" test "$(cksum <"$tmp/config.yaml")" = "$sum"
check "no report folder for bad input" test ! -e "$tmp/x"
bad_input "report on a missing file" "does not exist" report --db "$tmp/missing.db" --out "$tmp/x"
check "missing db not created" test ! -e "$tmp/missing.db"
bad_input "report without --out" "--out DIR is required" report --db "$db"
bad_input "report without --db" "--db FILE is required" report --out "$tmp/x"
bad_input "report without --db and --out" "--db and --out are required" report
# an --out too long for the paths built in it, refused rather than cut short
long="$tmp/$(printf 'd%.0s' {1..200})/$(printf 'd%.0s' {1..200})/$(printf 'd%.0s' {1..200})/$(printf 'd%.0s' {1..200})/$(printf 'd%.0s' {1..200})"
bad_input "report with a long --out" "at most 900" report --db "$db" --out "$long" --no-render
bad_input "history with a long --out" "at most 900" history --db "$db" --out "$long"
check "no folder for a long --out" test ! -e "$tmp/$(printf 'd%.0s' {1..200})"
# a missing flag is one line naming it, not the whole usage
"$OPTBENCH" report --db "$db" >"$tmp/out" 2>"$tmp/err"
check "report without --out: one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
check "report without --out: no usage on stdout" test ! -s "$tmp/out"
"$OPTBENCH" report >"$tmp/out" 2>"$tmp/err"
check "report without flags: one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
"$OPTBENCH" report --help >"$tmp/out" 2>&1; rc=$?
check "report --help exits 0 (rc $rc)" test $rc -eq 0
check "report --help documents --benchmark ID|latest|all" grep -qF -- '--benchmark ID|latest|all' "$tmp/out"
"$OPTBENCH" report --db "$db" --out "$tmp/all" --benchmark all --no-render >"$tmp/out" 2>&1; rc=$?
check "report --benchmark all exits 0 (rc $rc)" test $rc -eq 0
bad_input "report --benchmark x" "--benchmark 'x'" report --db "$db" --out "$tmp/x" --benchmark x
bad_input "report --target without =" "--target 'quadratic'" report --db "$db" --out "$tmp/x" --target quadratic
bad_input "report --target unknown workload" "nosuch" report --db "$db" --out "$tmp/x" --target nosuch=1
bad_input "report --target misspelt workload" "--target 'quadratc=0.1': the database has no workload 'quadratc' (did you mean 'quadratic'?); its workloads: quadratic" report --db "$db" --out "$tmp/x" --target quadratc=0.1
bad_input "report --target twice" "report: --target for quadratic is given twice (0.1 and 0.2); give it once" report --db "$db" --out "$tmp/x" --target quadratic=0.1 --target quadratic=0.2
# numbers that are no numbers: NaN and infinity are refused as strtod would take them
bad_input "report --eval-target misspelt workload" "--eval-target 'quadratc=0.1': the database has no workload 'quadratc' (did you mean 'quadratic'?)" report --db "$db" --out "$tmp/x" --eval-target quadratc=0.1
bad_input "report --eval-target without =" "report: --eval-target 'quadratic' is not WORKLOAD=VALUE" report --db "$db" --out "$tmp/x" --eval-target quadratic
bad_input "report --target nan" "report: --target 'quadratic=nan': the loss must be a finite number (e.g. --target quadratic=0.05)" report --db "$db" --out "$tmp/x" --target quadratic=nan
bad_input "report --tau-max inf" "report: --tau-max 'inf' is not a finite number above 1 (e.g. 4)" report --db "$db" --out "$tmp/x" --tau-max inf
bad_input "report --tol inf" "report: --tol 'inf' is not a finite non-negative number" report --db "$db" --out "$tmp/x" --tol inf
bad_input "history --target nan" "history: --target 'quadratic=nan': the loss must be a finite number" history --db "$db" --target quadratic=nan
bad_input "report unknown flag" "--colour" report --db "$db" --out "$tmp/x" --colour red
bad_input "report --pdf-width wide" "--pdf-width 'wide' is not 'text', 'column' or a width in inches" report --db "$db" --out "$tmp/x" --pdf-width wide
bad_input "report --pdf-width 0.5" "--pdf-width '0.5'" report --db "$db" --out "$tmp/x" --pdf-width 0.5
bad_input "report --tol-of x" "--tol-of 'prog' is not 'best' or 'progress'" report --db "$db" --out "$tmp/x" --tol-of prog
# the lr range's tolerance of the progress: said in summary.md, and a range
# at least as wide on the quadratic, whose loss ends near 0
"$OPTBENCH" report --db "$db" --out "$tmp/prog" --tol-of progress --no-render >"$tmp/out" 2>&1; rc=$?
check "report --tol-of progress exits 0 (rc $rc)" test $rc -eq 0
check "summary.md says what the tolerance is of" grep -qF "of the progress training made" "$tmp/prog/summary.md"
check "the default's summary.md says the best" grep -qF "within 10% of the best (report --tol-of progress" "$tmp/all/summary.md"
check "summary.tex says the progress" grep -qF "of the progress from the loss before training" "$tmp/prog/summary.tex"

# every subcommand's flags as run's: a near miss is named, a flag without its
# value says so (also when the next argument is another flag), '--k=v' is
# written '--k v'
bad_input "report: near miss" "did you mean '--benchmark'?" report --db "$db" --out "$tmp/x" --benchmrk 1
bad_input "report: --k=v" "write '--db $db'" report --db="$db" --out "$tmp/x"
bad_input "report: value is a flag" "--db needs a value; the next argument '--out' is an option" report --db --out "$tmp/x"
bad_input "history: value missing" "history: --db needs a value" history --db
bad_input "history: near miss" "did you mean '--optimizer'?" history --db "$db" --optimzer sgd
bad_input "compare: near miss" "did you mean '--loss-tol'?" compare --baseline "$db" --candidate "$db" --loss-tl 0.1
bad_input "compare: no candidate" "--candidate B.db is required" compare --baseline "$db"
check "compare without --candidate: one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
bad_input "merge: near miss" "did you mean '--out'?" merge --ot "$tmp/m.db" "$db"
bad_input "bench-step: value is a flag" "--optimizer needs a value; the next argument '--params'" bench-step --optimizer --params 1k
bad_input "bench-step: unknown last flag" "unknown option '--quiet'" bench-step --optimizer adam --params 1k --quiet
bad_input "ortho: near miss" "did you mean '--shapes'?" ortho --shaps 8x8
bad_input "replay: value is a flag" "--init needs a value" replay --optimizer adam --shape 2x3 --init --grads g.csv
# an --out that cannot be made is bad input (2), and no ranking is printed
touch "$tmp/plain"
bad_input "report: --out under a file" "cannot create folder '$tmp/plain/rep': Not a directory ('$tmp/plain': a file of that name is in the way) (give --out a folder that can be written)" report --db "$db" --out "$tmp/plain/rep"
check "report: no ranking before the error" test ! -s "$tmp/out"
bad_input "history: --out under a file" "cannot create folder" history --db "$db" --out "$tmp/plain/hist"
check "history: no table before the error" test ! -s "$tmp/out"
bad_input "report --benchmark 99" "has no benchmark 99" report --db "$db" --out "$tmp/x" --benchmark 99
# runs without their benchmark row (an edited file): the latest is none, said once
cp "$db" "$tmp/nobench.db"
q "$tmp/nobench.db" "delete from benchmarks" >/dev/null
bad_input "report --benchmark latest without benchmarks" "database '$tmp/nobench.db': its table of benchmarks is empty, so no benchmark is the latest" report --db "$tmp/nobench.db" --out "$tmp/x" --benchmark latest

# a database damaged where only the analysis reads (a page of the curves
# table; its header and schema intact): bad input naming the file, for
# report and history alike, and the earlier report stays as it was
cp "$db" "$tmp/dmg.db"
python3 - "$tmp/dmg.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
page = c.execute("PRAGMA page_size").fetchone()[0]
roots = [r for r, in c.execute("SELECT rootpage FROM sqlite_master WHERE name IN ('curves', 'runs')")]
c.execute("PRAGMA journal_mode=DELETE"); c.close()
with open(sys.argv[1], "r+b") as f:
    for r in roots:
        f.seek((r - 1) * page)
        f.write(b"\xa5" * page)
PY
"$OPTBENCH" report --db "$db" --out "$tmp/dmgrep" --no-render >/dev/null 2>&1
sum=$(cat "$tmp/dmgrep"/* | md5sum)
bad_input "report of a damaged database" "database '$tmp/dmg.db'" report --db "$tmp/dmg.db" --out "$tmp/dmgrep" --no-render
check "  ... says it is damaged" grep -q "is damaged\|is malformed" "$tmp/err"
check "  ... the earlier report is unchanged" test "$sum" = "$(cat "$tmp/dmgrep"/* | md5sum)"
bad_input "history of a damaged database" "dmg.db" history --db "$tmp/dmg.db"

# a folder holding files of the user's: one with a report file's name that no
# report wrote is refused (exit 2), nothing written, nothing printed; the
# others stay as they are
mkdir -p "$tmp/mine"
echo keep >"$tmp/mine/notes.txt"
echo mine >"$tmp/mine/summary.md"
bad_input "a file of the user's named like a report file" \
  "'$tmp/mine/summary.md' is not a file a report wrote ($tmp/mine/.optbench-report does not list it), and this report has a file of that name: nothing was written" \
  report --db "$db" --out "$tmp/mine" --no-render
check "  ... the file is kept" test "$(cat "$tmp/mine/summary.md")" = mine
check "  ... nothing written" test "$(ls -A "$tmp/mine" | tr '\n' ' ')" = "notes.txt summary.md "
check "  ... no ranking printed" test "$(grep -c '^ranking' "$tmp/out")" = 0
rm "$tmp/mine/summary.md"
"$OPTBENCH" report --db "$db" --out "$tmp/mine" --no-render >"$tmp/out" 2>"$tmp/err" || fail "report beside a file of the user's"
check "  ... beside it, once the name is free" test "$(cat "$tmp/mine/notes.txt")" = keep
check "  ... the ranking printed" grep -q '^ranking' "$tmp/out"
# two reports into one folder publish one after the other: a report waits
# while another holds the folder's lock (a flock on the folder), so the
# second reads the first's list and no file is left unlisted
python3 -c "import fcntl, os, sys, time; f = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], 'w').close(); time.sleep(600)" \
  "$tmp/mine" "$tmp/held" & holder=$!
for _ in $(seq 2000); do [ -e "$tmp/held" ] && break; sleep 0.05; done
"$OPTBENCH" report --db "$db" --out "$tmp/mine" --no-render >"$tmp/out" 2>"$tmp/err" & waiter=$!
for _ in $(seq 2000); do compgen -G "$tmp/mine/.optbench-report-*/summary.md" >/dev/null && break; sleep 0.05; done
sleep 0.5
check "a report waits while another publishes into its folder" test "$(grep -c '^ranking' "$tmp/out")" = 0
kill $holder; wait $holder 2>/dev/null
wait $waiter || fail "the waiting report failed: $(cat "$tmp/err")"
check "  ... and publishes once it is free" grep -q '^ranking' "$tmp/out"
check "  ... leaving no lock file of its own" test "$(ls -A "$tmp/mine" | grep -c lock)" = 0
# a report folder of an optbench from before the list (.optbench-report): its
# files are a report's, reported over
"$OPTBENCH" report --db "$db" --out "$tmp/old" --no-render >/dev/null 2>&1
rm "$tmp/old/.optbench-report"
"$OPTBENCH" report --db "$db" --out "$tmp/old" --no-render >"$tmp/out" 2>"$tmp/err" ||
  fail "a report folder from before the list: $(cat "$tmp/err")"
check "  ... and it gets a list" test -s "$tmp/old/.optbench-report"
# a newline in a value is shown as \x0a: the message stays one line
bad_input "a newline in --target" "--target 'quad\x0aratic=0.1'" report --db "$db" --out "$tmp/nl" --target $'quad\nratic=0.1'
check "  ... on one line" test "$(wc -l <"$tmp/err")" = 1
# a benchmark's name is the user's text: escaped for Markdown (no emphasis,
# HTML, math or table cell from it) and for HTML
"$OPTBENCH" run --workloads quadratic --optimizers sgd --lrs 0.1 --seeds 1 --steps 5 --backend cpu \
  --name 'a_b *c* <i>d</i> $x$ |p| [l](u) & \' --db "$tmp/name.db" >/dev/null 2>&1
"$OPTBENCH" report --db "$tmp/name.db" --out "$tmp/namerep" --no-render >/dev/null 2>&1
check "summary.md escapes the benchmark's name" grep -qF \
  'Benchmark #1 a\_b \*c\* \<i\>d\</i\> \$x\$ \|p\| \[l\](u) \& \\: revision' "$tmp/namerep/summary.md"
check "index.html escapes the benchmark's name" grep -qF \
  '<p>Benchmark #1 a_b *c* &lt;i&gt;d&lt;/i&gt; $x$ |p| [l](u) &amp; \: revision' "$tmp/namerep/index.html"

# a stop (SIGTERM, SIGINT) while the report moves its files into the folder
# waits until they are all there: the folder is the new report whole, never
# part old and part new, and the process then ends by the signal
if command -v strace >/dev/null 2>&1; then
  export SOURCE_DATE_EPOCH=1
  "$OPTBENCH" report --db "$tmp/name.db" --out "$tmp/st_old" --no-render >/dev/null 2>&1
  "$OPTBENCH" report --db "$db" --out "$tmp/st_new" --no-render >/dev/null 2>&1
  for sig in TERM INT; do
    rm -rf "$tmp/st"
    cp -a "$tmp/st_old" "$tmp/st"
    strace -f -o /dev/null -e trace=rename -e inject=rename:signal=$sig:when=5 \
      "$OPTBENCH" report --db "$db" --out "$tmp/st" --no-render >/dev/null 2>&1
    rcs=$?
    check "SIG$sig while the files move: ends by it (got $rcs)" test $rcs = $([ $sig = TERM ] && echo 143 || echo 130)
    check "SIG$sig while the files move: the folder is the new report whole" \
      test -z "$(diff -r -x '.optbench-report*' "$tmp/st_new" "$tmp/st")"
    check "SIG$sig while the files move: no stage left" test -z "$(ls -a "$tmp/st" | grep '^\.optbench-report-')"
  done
  unset SOURCE_DATE_EPOCH
fi

exit $fail
