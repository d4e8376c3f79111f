#!/usr/bin/env python3
"""scripts/bench_step_torch_cpu.py - torch.optim.AdamW's step on the CPU, to
set beside `optbench bench-step --optimizer adamw --params 10000000 --backend
cpu` (same parameter count, one tensor, same thread count).

    /usr/bin/python3 scripts/bench_step_torch_cpu.py [PARAMS] [THREADS]

Prints the median ms/step of the foreach and single-tensor paths (median of 5
repeats of 4 steps after 3 warm-up steps). Needs torch (Debian: python3-torch).
"""
import statistics
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
torch.set_num_threads(threads)
p = torch.nn.Parameter(torch.randn(n))
p.grad = torch.randn_like(p) * 1e-3
for name, kw in (("foreach", dict(foreach=True)), ("single", dict(foreach=False))):
    opt = torch.optim.AdamW([p], lr=1e-3, **kw)
    for _ in range(3):
        opt.step()
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(4):
            opt.step()
        ts.append((time.perf_counter() - t) / 4 * 1e3)
    print(f"torch {torch.__version__} AdamW {name}: {statistics.median(ts):.2f} ms/step "
          f"({n} params, {threads} threads)", flush=True)
