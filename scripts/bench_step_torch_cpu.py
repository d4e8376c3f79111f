#!/usr/bin/env python3
"""scripts/bench_step_torch_cpu.py - torch.optim.Muon's step on the CPU, to
set beside `optbench bench-step --optimizer muon --shape RxC [--tensors K]
--backend cpu` (K RxC matrices, same thread count).

    /usr/bin/python3 scripts/bench_step_torch_cpu.py --muon [Kx]RxC [THREADS]

Prints the median ms/step (median of 5 repeats of 4 steps after 3 warm-up
steps; a step slower than a second: median of 3 single steps after one). Needs torch (Debian: python3-torch). The step written in torch ops
as torch.optim.Muon writes it (lerp momentum, Nesterov, five Newton-Schulz
iterations (3.4445, -4.7750, 2.0315) on the wide orientation, decoupled
weight decay, the lr scaled by sqrt(max(1, R/C))) runs in fp32, optbench's
precision; where torch has torch.optim.Muon (2.9 and later; Debian 12 has
1.13) it is timed too, and it runs Newton-Schulz in bfloat16.

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
# huge pages for buffers of 2 MB and more, as optbench's CPU allocator takes
# them (THP_MEM_ALLOC_ENABLE; C10_THP_MEM_ALLOC_ENABLE in some versions)
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
os.environ.setdefault("C10_THP_MEM_ALLOC_ENABLE", "1")

import torch  # noqa: E402


def timed(step, label):
    t = time.perf_counter()
    step()
    slow = time.perf_counter() - t > 1.0  # bf16 products on a CPU without bf16 units
    warmup, repeats, inner = (0, 3, 1) if slow else (2, 5, 4)
    for _ in range(warmup):
        step()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            step()
        ts.append((time.perf_counter() - t) / inner * 1e3)
    print(f"torch {torch.__version__} {label}: {statistics.median(ts):.2f} ms/step "
          f"(median of {repeats} x {inner} steps)", flush=True)


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
    sys.exit("usage: bench_step_torch_cpu.py --muon [Kx]RxC [THREADS]")
dims = [int(v) for v in sys.argv[2].split("x")]
if len(dims) == 2:
    dims = [1] + dims
if len(dims) != 3 or min(dims) < 1:
    sys.exit(f"bench_step_torch_cpu.py: '{sys.argv[2]}' is not RxC or KxRxC (positive integers)")
count, rows, cols = dims
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
torch.set_num_threads(threads)
params = [torch.nn.Parameter(torch.randn(rows, cols)) for _ in range(count)]
for p in params:
    p.grad = torch.randn_like(p) * 1e-3
what = f"{count} x {rows}x{cols}" if count > 1 else f"{rows}x{cols}"
bufs = [torch.zeros_like(p) for p in params]


def ops_step():
    with torch.no_grad():
        for p, buf in zip(params, bufs):
            muon_step_ops(p, buf)


timed(ops_step, f"Muon step in torch ops, fp32 {what} ({threads} threads)")
if hasattr(torch.optim, "Muon"):
    opt = torch.optim.Muon(params, lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True)
    timed(opt.step, f"torch.optim.Muon (bf16 Newton-Schulz) {what} ({threads} threads)")
