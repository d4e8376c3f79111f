#!/usr/bin/env python3
"""scripts/bench_step_torch_cpu.py - torch.optim.Muon's step on the CPU, to
set beside `optbench bench-step --optimizer muon --shape RxC --backend cpu`
(one RxC matrix, same thread count).

    /usr/bin/python3 scripts/bench_step_torch_cpu.py --muon RxC [THREADS]

Prints the median ms/step (median of 5 repeats of 4 steps after 3 warm-up
steps). Needs torch (Debian: python3-torch). A torch without
torch.optim.Muon (before 2.9; Debian 12 has 1.13) gets the same step written
in torch ops as torch.optim.Muon writes it: lerp momentum, Nesterov, five
Newton-Schulz iterations (3.4445, -4.7750, 2.0315) in fp32 on the wide
orientation, decoupled weight decay, the lr scaled by sqrt(max(1, R/C)).

The elementwise optimizers (SGD, Adam, AdamW, ...) against torch.optim:
scripts/bench_optimizers_cpu.py.
"""
import os
import statistics
import sys
import time

# torch.set_num_threads does not reach OpenBLAS's own pool (Debian's torch
# calls OpenBLAS for matrix products): fix its thread count before it loads
_threads_arg = sys.argv[3] if len(sys.argv) > 3 else "2"
os.environ.setdefault("OPENBLAS_NUM_THREADS", _threads_arg)
os.environ.setdefault("OMP_NUM_THREADS", _threads_arg)

import torch  # noqa: E402


def timed(step, label):
    for _ in range(3):
        step()
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(4):
            step()
        ts.append((time.perf_counter() - t) / 4 * 1e3)
    print(f"torch {torch.__version__} {label}: {statistics.median(ts):.2f} ms/step", flush=True)


def muon_step_ops(p, buf, lr=0.02, wd=0.1, mu=0.95):
    """One torch.optim.Muon step in torch ops (for a torch without it)."""
    g = p.grad
    buf.lerp_(g, 1 - mu)
    u = g.lerp(buf, mu)
    x = u.mT if u.size(0) > u.size(1) else u
    x = x / x.norm().clamp_min(1e-7)
    a, b, c = 3.4445, -4.7750, 2.0315
    for _ in range(5):
        A = x @ x.mT
        B = b * A + c * (A @ A)
        x = a * x + B @ x
    if u.size(0) > u.size(1):
        x = x.mT
    p.data.mul_(1 - lr * wd)
    p.data.add_(x, alpha=-lr * max(1.0, p.size(0) / p.size(1)) ** 0.5)


if len(sys.argv) < 3 or sys.argv[1] != "--muon":
    sys.exit("usage: bench_step_torch_cpu.py --muon RxC [THREADS]")
rows, cols = (int(v) for v in sys.argv[2].split("x"))
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
torch.set_num_threads(threads)
p = torch.nn.Parameter(torch.randn(rows, cols))
p.grad = torch.randn_like(p) * 1e-3
if hasattr(torch.optim, "Muon"):
    opt = torch.optim.Muon([p], lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True)
    timed(opt.step, f"torch.optim.Muon {rows}x{cols} ({threads} threads)")
else:
    buf = torch.zeros_like(p)
    with torch.no_grad():
        timed(lambda: muon_step_ops(p, buf), f"Muon step in torch ops (no torch.optim.Muon) {rows}x{cols} "
              f"({threads} threads)")
