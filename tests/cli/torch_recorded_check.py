#!/usr/bin/env python3
"""tests/cli/torch_recorded_check.py OPTBENCH CASES.json

Replays the cases recorded from PyTorch (scripts/conformance_torch.py
--record: each a shape, settings, initial parameters, gradients and torch's
parameters after every step) through `optbench replay` and compares them as
conformance_torch.py does, at every step, |out - expected| / max(1, max
|expected|): within 1e-4; muon's cases with ns_dtype=bf16 (torch.optim.Muon
run as it is, float32 parameters and its bfloat16 Newton-Schulz) within
1e-3, and 3 in 4 of them within 1e-6 at every element and step (the same
roundings, but another BLAS sums a product in another order, and now and
then such a sum rounds to the neighbouring bf16; ns_dtype=fp32 meets that in
no case). Plain python3, no packages: the checks PyTorch's newer optimizers
get in every build, where Debian's PyTorch (1.13) lacks them."""
import csv
import json
import os
import subprocess
import sys
import tempfile

TOL, TOL_BF16, NEAR, MATCHED = 1e-4, 1e-3, 1e-6, 0.75


def replay(optbench, c, tmp):
    """optbench's parameters after every step, or an error text."""
    for name, rows in (("init.csv", [c["init"]]), ("grads.csv", c["grads"])):
        with open(os.path.join(tmp, name), "w", newline="") as f:
            csv.writer(f).writerows([[repr(v) for v in r] for r in rows])
    out = os.path.join(tmp, "out.csv")
    r = subprocess.run([optbench, "replay", "--optimizer", c["optimizer"], "--shape", c["shape"], "--init",
                        os.path.join(tmp, "init.csv"), "--grads", os.path.join(tmp, "grads.csv"), "--out", out,
                        "--set", c["settings"]], capture_output=True, text=True)
    if r.returncode != 0:
        return f"exit {r.returncode}: {r.stderr.strip()}"
    with open(out, newline="") as f:
        return [[float(x) for x in row] for row in csv.reader(f) if row]


def scaled_error(got, expected):
    """The worst scaled error over the steps (inf when the step counts
    differ), and whether every element of every step is within NEAR."""
    if len(got) != len(expected):
        return float("inf"), False
    err = 0.0
    for x, y in zip(got, expected):
        scale = max(1.0, max(abs(v) for v in y))
        err = max(err, max(abs(a - b) for a, b in zip(x, y)) / scale)
    return err, err <= NEAR


def main():
    optbench, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        data = json.load(f)
    worst, failed, n_bf16, matched = {}, 0, 0, 0
    for c in data["cases"]:
        opt, bf16 = c["optimizer"], "ns_dtype=bf16" in c["settings"]
        with tempfile.TemporaryDirectory() as tmp:
            got = replay(optbench, c, tmp)
        err, near = scaled_error(got, c["expected"]) if isinstance(got, list) else (float("inf"), False)
        if bf16:
            n_bf16 += 1
            matched += near
        if not err <= (TOL_BF16 if bf16 else TOL):
            failed += 1
            why = got if isinstance(got, str) else f"scaled error {err:.2e}"
            print(f"FAIL {opt} case {c['case']} ({c['shape']}, {c['settings']}): {why}")
        worst[opt] = max(worst.get(opt, 0.0), err)
    for opt, w in worst.items():
        n = sum(1 for c in data["cases"] if c["optimizer"] == opt)
        print(f"{opt:10s} {n} cases, worst scaled error {w:.2e}")
    if n_bf16:
        print(f"muon with ns_dtype=bf16: {matched} of {n_bf16} cases within {NEAR:g} at every element and step")
        if matched < MATCHED * n_bf16:
            print(f"FAIL: fewer than {MATCHED:.0%}: not torch's bfloat16 iteration")
            failed += 1
    print(f"{len(data['cases'])} cases recorded from torch {data['torch']} (seed {data['seed']}), {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
