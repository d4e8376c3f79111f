#!/usr/bin/env bash
# The sensitivity figure of a sweep besides the lr: `--sweep adam.beta2=...`
# gives hp_sweep.csv (each beta2 value at its own best lr, one line for adam),
# a figure hp_quadratic_beta2 listed after the lr figure of its workload, and
# nothing of the kind for sgd (one configuration) or without sweeps.
. "$(dirname "$0")/common.bash"
flags=(--workloads quadratic --optimizers sgd,adam --lrs 0.01,0.1 --seeds 2 --steps 30 --backend cpu)
"$OPTBENCH" run "${flags[@]}" --sweep adam.beta2=0.9,0.99,0.999 --db "$tmp/s.db" >"$tmp/run" 2>&1 ||
  { cat "$tmp/run"; exit 1; }
render=--no-render
command -v gnuplot >/dev/null && render=
"$OPTBENCH" report --db "$tmp/s.db" --out "$tmp/r" $render >"$tmp/report" 2>&1 || { cat "$tmp/report"; fail=1; }
r=$tmp/r
check "hp_sweep.csv is written" test -s "$r/hp_sweep.csv"
check "hp_sweep.csv: a row per beta2 value, one line (adam)" \
  test "$(grep -c '^"quadratic","beta2","adam",' "$r/hp_sweep.csv")" = 3
check "hp_sweep.csv: nothing but that line" test "$(tail -n +2 "$r/hp_sweep.csv" | wc -l)" = 3
for v in 0.9 0.99 0.999; do
  check "hp_sweep.csv names the configuration of beta2=$v" grep -q "^\"quadratic\",\"beta2\",\"adam\",$v,.*,\"adam beta2=$v\"$" "$r/hp_sweep.csv"
done
check "the figure's script reads hp_sweep.csv" grep -q "'hp_sweep.csv'" "$r/hp_quadratic_beta2.gp"
check "the figure's title" grep -q 'quadratic: final loss at the best lr vs beta2' "$r/hp_quadratic_beta2.gp"
check "no figure for sgd or the lr" test -z "$(ls "$r" | grep '^hp_.*\.gp$' | grep -v '^hp_quadratic_beta2\.gp$')"
check "summary.md lists it" grep -q 'Sensitivity to beta2' "$r/summary.md"
check "after the lr figure" test "$(grep -n 'lr_quadratic.gp' "$r/summary.md" | head -1 | cut -d: -f1)" -lt \
  "$(grep -n 'hp_quadratic_beta2.gp' "$r/summary.md" | head -1 | cut -d: -f1)"
check "index.html shows it" grep -q 'hp_quadratic_beta2' "$r/index.html"
check "the Files section documents hp_sweep.csv" grep -q '| hp_sweep.csv |' "$r/summary.md"
# each optimizer at its best configuration: adam's of its three (the lowest
# final_median of summary.csv's adam rows), sgd's one; in summary.md too
check "best_configuration.csv: adam (3 configurations) and sgd (1)" \
  test "$(grep -c '^"quadratic","adam",3,"beta2=0.9[9]*",' "$r/best_configuration.csv")" = 1 -a \
  "$(grep -c '^"quadratic","sgd",1,,' "$r/best_configuration.csv")" = 1
check "best_configuration.csv: adam's best is the lowest median of its configurations" python3 - "$r" <<'PY'
import csv, sys
d = sys.argv[1]
rows = [r for r in csv.DictReader(open(d + "/summary.csv")) if r["optimizer"].startswith("adam ")]
best = min(rows, key=lambda r: float(r["final_median"]))
worst = max(rows, key=lambda r: float(r["final_median"]))
b = [r for r in csv.DictReader(open(d + "/best_configuration.csv")) if r["optimizer"] == "adam"][0]
ok = ("adam " + b["best_configuration"] == best["optimizer"] and b["final_median"] == best["final_median"]
      and b["lr"] == best["best_lr"] and "adam " + b["worst_configuration"] == worst["optimizer"]
      and b["worst_final_median"] == worst["final_median"])
sys.exit(0 if ok else 1)
PY
check "summary.md: each optimizer at its best configuration" grep -q '^Each optimizer at its best configuration' "$r/summary.md"
# every configuration diverged: neither is named the best or the worst
"$OPTBENCH" run --workloads quadratic --optimizers adam --lrs 1000 --seeds 2 --steps 30 --backend cpu \
  --sweep adam.beta2=0.9,0.99 --db "$tmp/d.db" >"$tmp/run_d" 2>&1 || { cat "$tmp/run_d"; fail=1; }
"$OPTBENCH" report --db "$tmp/d.db" --out "$tmp/rd" --no-render >/dev/null 2>&1 || fail=1
check "best_configuration.csv: no best when every configuration diverged" \
  grep -q '^"quadratic","adam",2,,.*,,,,$' "$tmp/rd/best_configuration.csv"
check "summary.md: none has a finite median" grep -q '| adam | - (none has a finite median) | 2 |' "$tmp/rd/summary.md"
check "summary.tex: the best-configuration table" grep -q 'label{tab:optbench-quadratic-configs}' "$r/summary.tex"
check_tex "summary.tex with the best-configuration table compiles" "$r/summary.tex" || true
if [ -z "$render" ]; then
  check "the figure is rendered (PNG)" test -s "$r/hp_quadratic_beta2.png"
  check "the figure is rendered (SVG)" test -s "$r/hp_quadratic_beta2.svg"
  check "gnuplot did not fail" grep -q 'Sensitivity to beta2' <(grep -v 'Not rendered' "$r/index.html")
fi

# without the sweep: neither the file nor the figure
"$OPTBENCH" run "${flags[@]}" --db "$tmp/n.db" >"$tmp/run2" 2>&1 || { cat "$tmp/run2"; exit 1; }
"$OPTBENCH" report --db "$tmp/n.db" --out "$tmp/n" --no-render >"$tmp/report2" 2>&1 || { cat "$tmp/report2"; fail=1; }
check "no hp_sweep.csv without sweeps" test ! -e "$tmp/n/hp_sweep.csv"
check "no hp_ figure without sweeps" test -z "$(ls "$tmp/n" | grep '^hp_')"
check "summary.md without the section" test "$(grep -c 'Sensitivity to' "$tmp/n/summary.md")" = 0
check "no best_configuration.csv without sweeps" test ! -e "$tmp/n/best_configuration.csv"
check "summary.md without the best-configuration table" test "$(grep -c '^Each optimizer at its best' "$tmp/n/summary.md")" = 0
# style.gp: an optimizer's configurations take shades of its colour dark to
# light in the order listed (by the swept value), the one at the colour's own
# lightness its own colour (sgd's blue, mid-lightness: its middle one of 3;
# adam's wine red, dark: its first); until 2026-12-06 the first configuration
# took the own colour and the shades went to the others, so sgd's momentum=0
# was mid blue and 0.5 dark
"$OPTBENCH" run --workloads quadratic --optimizers sgd,adam --lrs 0.01 --seeds 1 --steps 10 --backend cpu \
  --sweep sgd.momentum=0,0.5,0.9 --sweep adam.beta2=0.9,0.99,0.999 --db "$tmp/sh.db" >"$tmp/run_sh" 2>&1 ||
  { cat "$tmp/run_sh"; fail=1; }
"$OPTBENCH" report --db "$tmp/sh.db" --out "$tmp/sh" --no-render >/dev/null 2>&1 || fail=1
cat >"$tmp/style_check.py" <<'PY'
import re, sys
def lstar(h):
    v = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    v = [u / 12.92 if u <= 0.04045 else ((u + 0.055) / 1.055) ** 2.4 for u in v]
    y = 0.2126729 * v[0] + 0.7151522 * v[1] + 0.0721750 * v[2]
    return 116 * (y ** (1 / 3) if y > 216 / 24389 else y * 24389 / 3132 + 4 / 29) - 16
# each configuration's linetype (its label in the comment), and the comment
# line above it that says which shade it is ("# sgd momentum=0.5: sgd's
# shade 2 of 3, its own colour, marker and dashes")
lines, note, prev = [], {}, ""
for l in open(sys.argv[1]):
    if l.startswith("set linetype"):
        m = re.match(r'set linetype (\d+) lc rgb "(#[0-9a-f]{6})" lw 2 pt (\d+) dt (\d+)   # (\S+) (.*)$', l)
        if not m:
            sys.exit("unexpected linetype line: " + l)
        lines.append(m)
        note[m.group(1)] = prev if prev.startswith("# " + m.group(5) + " " + m.group(6) + ": ") else ""
    prev = l.rstrip("\n")
what, own = sys.argv[2], {"sgd": "#0077bb", "adam": "#882255"}
ok = True
for opt, colour in own.items():
    fam = [m for m in lines if m.group(5) == opt]
    ls = [lstar(m.group(2)) for m in fam]
    if what == "shades":
        owns = [m for m in fam if note[m.group(1)].endswith("its own colour, marker and dashes")]
        want = 1 if opt == "sgd" else 0
        if len(fam) != 3 or any(b <= a for a, b in zip(ls, ls[1:])) or len(owns) != 1 or \
           owns[0].group(2) != colour or fam[want] is not owns[0]:
            print(opt, [(m.group(2), round(l, 1), m.group(6), note[m.group(1)]) for m, l in zip(fam, ls)])
            ok = False
if what == "marks":
    outline = lambda pt: {4: 4, 5: 4, 6: 6, 7: 6}.get(pt, pt - pt % 2)
    for a in range(len(lines)):
        for b in range(a + 1, len(lines)):
            x, y = lines[a], lines[b]
            if (x.group(2), x.group(3)) == (y.group(2), y.group(3)) or \
               (x.group(5) == y.group(5) and outline(int(x.group(3))) == outline(int(y.group(3)))):
                print(x.group(0), "\n", y.group(0))
                ok = False
sys.exit(0 if ok else 1)
PY
check "style.gp: each optimizer's shades dark to light by the swept value, its own colour at its lightness" \
  python3 "$tmp/style_check.py" "$tmp/sh/style.gp" shades
# and no two share colour and marker, an optimizer's configurations a marker
# outline each (an open shape and its filled twin alike); until 2026-12-06
# adam's beta2=0.9 and 0.99 were both open squares
check "style.gp: every configuration its own colour and marker, an outline each within an optimizer" \
  python3 "$tmp/style_check.py" "$tmp/sh/style.gp" marks
if [ -n "${OB_KEEP_FIG:-}" ]; then cp "$r"/hp_quadratic_beta2.* "$r/hp_sweep.csv" "$OB_KEEP_FIG"/ 2>/dev/null; fi
exit $fail
