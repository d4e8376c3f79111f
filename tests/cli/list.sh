#!/usr/bin/env bash
# optbench list: one aligned table (name, default, type, meaning) however
# long a name or default is; "1 float"; the text settings that --set takes
# (route, coeff_file) are listed with the hyperparameters; names narrow it
# to those sections, and an unknown name is refused (exit 2, did you mean).
set -uo pipefail
: "${OPTBENCH:?}"
out=$("$OPTBENCH" list) || { echo "FAIL: rc=$?"; exit 1; }
python3 - <<'PY' "$out"
import re, sys
text = sys.argv[1]
rows = [l for l in text.splitlines() if l.startswith("      ") and not l.startswith("      state:")]
assert len(rows) > 100, len(rows)
cols = set()
for l in rows:
    m = re.match(r"^      (\S+)( +)(\S+)( +)(float|int|bool|enum|text|type)(  |$)", l)
    assert m, "not a table row: %r" % l
    cols.add((m.start(3), m.start(5)))
assert len(cols) == 1, "columns do not align: %s" % sorted(cols)
assert "initial_accumulator_value" in text
assert not re.search(r"\b1 floats\b", text), "1 floats"
assert re.search(r"state: 1 float per parameter \(4 bytes\)", text)
blocks = {m.group(1): m.group(2) for m in re.finditer(r"(?ms)^  (\S+) - .*?\n(.*?)(?=^\S|^  \S|\Z)", text)}
for opt in ("muon", "root"):
    assert re.search(r"(?m)^      route +- +text +.*groups: %s, adamw$" % opt, blocks[opt]), opt
assert re.search(r"(?m)^      coeff_file +- +text ", blocks["root"])
assert "route" not in blocks["adam"]
assert re.search(r"(?m)^      formula +torch1\.13 +enum +one of torch1\.13\|torch2; ", blocks["nadam"])
print("list ok: %d rows, columns at %s" % (len(rows), cols.pop()))
PY
# names narrow the listing: only those sections, the same table
sub=$("$OPTBENCH" list lamb train) || { echo "FAIL: list lamb train: rc=$?"; exit 1; }
python3 - <<'PY' "$sub"
import re, sys
text = sys.argv[1]
heads = re.findall(r"(?m)^  (\S+) - ", text)
assert heads == ["lamb"], heads
assert "OPTIMIZERS" in text and "TRAINING SETTINGS" in text and "WORKLOADS" not in text, text[:200]
assert re.search(r"(?m)^      filter_bias_and_bn +false +bool ", text)
assert re.search(r"(?m)^      clip_norm +0 +float ", text)
PY
[ $? -eq 0 ] || { echo "FAIL: list lamb train"; exit 1; }
err=$("$OPTBENCH" list lmab 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] && [[ "$err" == *"unknown workload or optimizer 'lmab' (did you mean 'lamb'?)"* ]] ||
  { echo "FAIL: list lmab: rc=$rc: $err"; exit 1; }
echo "list NAME ok"
