#!/usr/bin/env python3
"""scripts/muon_bf16_cases.py OUT.json [--cases N] [--seed S]

Writes the cases of tests/data/muon_bf16.json: torch.optim.Muon as it runs
(PyTorch >= 2.9: float32 parameters, its Newton-Schulz on a bfloat16 copy of
the update), a few steps on random matrices, wide and tall, and the
parameters after every step. tests/cli/muon_bf16.sh replays them through
`optbench replay --optimizer muon --set ...,ns_dtype=bf16`, so that every
build checks muon's bf16 iteration against PyTorch's own output without
PyTorch installed (Debian 12's PyTorch, 1.13, has no Muon).
Inputs are float32 values; torch's version is recorded in the file.
"""
import argparse
import json
import random
import struct
import sys

import torch


def f32(xs):
    return torch.tensor(xs, dtype=torch.float32).tolist()


def short(v):
    """The shortest text that reads back as the same float32."""
    want = struct.pack("f", v)
    for digits in range(6, 10):
        t = f"{v:.{digits}g}"
        if struct.pack("f", float(t)) == want:
            return t
    return repr(v)


def rows_text(rows):
    return "[" + ",".join("[" + ",".join(short(v) for v in r) + "]" for r in rows) + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--cases", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not hasattr(torch.optim, "Muon"):
        sys.exit(f"torch {torch.__version__} has no torch.optim.Muon (PyTorch >= 2.9 has)")
    rng = random.Random(a.seed)
    cases = []
    for k in range(a.cases):
        rows, cols = rng.randint(2, 12), rng.randint(2, 12)
        n = rows * cols
        s = {"lr": rng.choice([0.01, 0.02, 0.05]), "momentum": rng.choice([0.9, 0.95]),
             "nesterov": rng.random() < 0.7, "weight_decay": rng.choice([0.0, 0.1]),
             "adjust_lr": rng.choice(["original", "match_rms_adamw"])}
        init = f32([rng.gauss(0, 1) for _ in range(n)])
        grads = []
        for _ in range(6):
            scale = 10.0 ** rng.uniform(-3, 1)
            grads.append(f32([rng.gauss(0, 1) * scale for _ in range(n)]))
        p = torch.nn.Parameter(torch.tensor(init, dtype=torch.float32).reshape(rows, cols))
        o = torch.optim.Muon([p], lr=s["lr"], momentum=s["momentum"], nesterov=s["nesterov"],
                             weight_decay=s["weight_decay"], adjust_lr_fn=s["adjust_lr"])
        expected = []
        for g in grads:
            p.grad = torch.tensor(g, dtype=torch.float32).reshape(rows, cols)
            o.step()
            expected.append(p.detach().reshape(-1).tolist())
        settings = ",".join(f"{key}={str(v).lower() if isinstance(v, bool) else v}" for key, v in s.items())
        cases.append(f'{{"shape":"{rows}x{cols}","settings":"{settings},ns_dtype=bf16",\n'
                     f' "init":{rows_text([init])[1:-1]},\n "grads":{rows_text(grads)},\n'
                     f' "expected":{rows_text(expected)}}}')
    with open(a.out, "w") as f:
        f.write(f'{{"torch":{json.dumps(torch.__version__)},"cases":[\n' + ",\n".join(cases) + "]}\n")


if __name__ == "__main__":
    main()
