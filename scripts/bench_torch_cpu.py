#!/usr/bin/env python3
"""scripts/bench_torch_cpu.py - optbench's bert and cnn training steps against
PyTorch eager on the CPU, side by side.

For each workload it runs `optbench run` (SGD, a few steps, one held-out
batch) and reads the median step time from the database, then times the same
architecture, batch and thread count in PyTorch (forward, backward and an SGD
step; the models below mirror workloads/bert.c and workloads/cnn.c, which
scripts/models_torch.py checks: same loss and gradients). The two
are run alternately `--rounds` times and the best median of each is kept, which
damps the noise of a shared machine.

    python3 scripts/bench_torch_cpu.py --optbench build/optbench --threads 2

Requires /usr/bin/python3 with torch (Debian: apt-get install python3-torch).
Prints one line per workload: ms/step of each, items/s and the ratio
(torch time / optbench time; above 1 means optbench is faster).

--openblas-coretype sets OPENBLAS_CORETYPE for both programs (PyTorch's
matrix products go through the same OpenBLAS): Debian's OpenBLAS 0.3.21 does
not recognize AMD Zen 4 and picks its Haswell (AVX2) kernels there; SkylakeX
selects the AVX-512 ones (about twice the sgemm throughput on such a CPU).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Defaults of the presets (workloads/bert.c, workloads/cnn.c).
PRESETS = {
    "bert-small": dict(kind="bert", batch=16, seq=128, vocab=8192, layers=4, dim=256, heads=4, mlp_ratio=4),
    "bert-tiny": dict(kind="bert", batch=32, seq=32, vocab=256, layers=2, dim=64, heads=4, mlp_ratio=4),
    "bert-base": dict(kind="bert", batch=32, seq=128, vocab=30522, layers=12, dim=768, heads=12, mlp_ratio=4),
    "cnn-small": dict(kind="cnn", batch=64, image=32, channels=3, classes=10, width=32, stages=3, depth=2,
                      residual=0, groups=8),
    "cnn-tiny": dict(kind="cnn", batch=32, image=16, channels=3, classes=10, width=16, stages=2, depth=1,
                     residual=0, groups=4),
    "cnn-base": dict(kind="cnn", batch=128, image=32, channels=3, classes=10, width=64, stages=4, depth=2,
                     residual=1, groups=16),
}


def torch_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, C, NH, Fw):
            super().__init__()
            self.NH = NH
            self.ln1 = nn.LayerNorm(C)
            self.qkv = nn.Linear(C, 3 * C)
            self.proj = nn.Linear(C, C)
            self.ln2 = nn.LayerNorm(C)
            self.fc = nn.Linear(C, Fw)
            self.fc2 = nn.Linear(Fw, C)

        def forward(self, x):
            B, T, C = x.shape
            NH, HS = self.NH, C // self.NH
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, NH, HS).transpose(1, 2)
            k = k.view(B, T, NH, HS).transpose(1, 2)
            v = v.view(B, T, NH, HS).transpose(1, 2)
            att = torch.softmax((q @ k.transpose(-2, -1)) * (1.0 / HS ** 0.5), dim=-1)  # bidirectional
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Bert(nn.Module):
        def __init__(self, p):
            super().__init__()
            C = p["dim"]
            self.wte = nn.Embedding(p["vocab"], C)
            self.wpe = nn.Embedding(p["seq"], C)
            self.blocks = nn.ModuleList(Block(C, p["heads"], p["mlp_ratio"] * C) for _ in range(p["layers"]))
            self.lnf = nn.LayerNorm(C)
            # the head: wte (tie_head=1, the presets' default) or its own (V, C); a bias (head_bias=1) or none
            self.head_w = None if p.get("tie_head", 1) else nn.Parameter(torch.zeros(p["vocab"], C))
            self.head_b = nn.Parameter(torch.zeros(p["vocab"])) if p.get("head_bias", 1) else None

        def forward(self, tok, pos_flat, tgt):
            B, T = tok.shape
            x = self.wte(tok) + self.wpe(torch.arange(T))
            for b in self.blocks:
                x = b(x)
            h = self.lnf(x).view(B * T, -1)[pos_flat]  # masked positions only
            logits = h @ (self.wte.weight if self.head_w is None else self.head_w).t()
            if self.head_b is not None:
                logits = logits + self.head_b
            return F.cross_entropy(logits, tgt)

    class Unit(nn.Module):
        def __init__(self, cin, cout, k, stride, groups, relu):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, bias=False)
            self.gn = nn.GroupNorm(groups, cout)
            self.relu = relu

        def forward(self, x):
            x = self.gn(self.conv(x))
            return F.relu(x) if self.relu else x

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride, groups):
            super().__init__()
            self.a = Unit(cin, cout, 3, stride, groups, True)
            self.b = Unit(cout, cout, 3, 1, groups, False)
            self.down = Unit(cin, cout, 1, stride, groups, False) if stride != 1 or cin != cout else None

        def forward(self, x):
            sc = self.down(x) if self.down is not None else x
            return F.relu(self.b(self.a(x)) + sc)

    class Cnn(nn.Module):
        def __init__(self, p):
            super().__init__()
            layers, C, G = [], p["channels"], p["groups"]
            if p["residual"]:
                layers.append(Unit(C, p["width"], 3, 1, G, True))
                C = p["width"]
            for s in range(p["stages"]):
                cs = p["width"] << s
                if not p["residual"] and s > 0:
                    layers.append(nn.MaxPool2d(2))
                for d in range(p["depth"]):
                    if p["residual"]:
                        layers.append(Basic(C, cs, 2 if (s > 0 and d == 0) else 1, G))
                    else:
                        layers.append(Unit(C, cs, 3, 1, G, True))
                    C = cs
            self.body = nn.Sequential(*layers)
            self.fc = nn.Linear(C, p["classes"])

        def forward(self, x, y):
            return F.cross_entropy(self.fc(self.body(x).mean(dim=(2, 3))), y)

    return torch, Bert, Cnn


def time_torch_subprocess(name, threads, steps, warmup, env):
    """Runs time_torch in a fresh interpreter (so OPENBLAS_CORETYPE applies)."""
    code = ("import sys; sys.path.insert(0, %r); import bench_torch_cpu as b; "
            "ms, items = b.time_torch(%r, b.PRESETS[%r], %d, %d, %d); print(ms, items)"
            % (os.path.dirname(os.path.abspath(__file__)), name, name, threads, steps, warmup))
    r = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"torch timing of {name} failed:\n{r.stderr}")
    ms, items = r.stdout.split()
    return float(ms), int(items)


def time_torch(name, p, threads, steps, warmup):
    torch, Bert, Cnn = torch_models()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    B = p["batch"]
    if p["kind"] == "bert":
        model = Bert(p)

        def batch():
            tok = torch.randint(p["vocab"] - 1, (B, p["seq"]))
            mask = torch.rand(B * p["seq"]) < 0.15
            pos = mask.nonzero().squeeze(1)
            return (tok, pos, torch.randint(p["vocab"] - 1, (pos.numel(),)))

        items = B * p["seq"]
    else:
        model = Cnn(p)

        def batch():
            return (torch.randn(B, p["channels"], p["image"], p["image"]), torch.randint(p["classes"], (B,)))

        items = B
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        args = batch()
        opt.zero_grad(set_to_none=True)
        loss = model(*args)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), items


def time_optbench(exe, name, threads, steps, env):
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.db")
        cmd = [exe, "run", "--workloads", name, "--optimizers", "sgd", "--lrs", "0.001", "--seeds", "1",
               "--steps", str(steps + 5), "--backend", "cpu", "--db", db, "--checkpoint-every", "0",
               "--set", name + ".eval_batches=1"]
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
        import sqlite3  # here, not at the top: bench_torch_gpu.py imports this file on pythons without it
        con = sqlite3.connect(db)
        ms, ips = con.execute("select step_ms_median, items_per_sec from runs").fetchone()
        con.close()
        return ms, ips


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--optbench", default="build/optbench", help="the optbench program")
    ap.add_argument("--workloads", default="bert-small,cnn-small")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10, help="timed steps (after 5 warm-up steps)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds; the best median is kept")
    ap.add_argument("--openblas-coretype", default=None, help="OPENBLAS_CORETYPE for both (e.g. SkylakeX)")
    a = ap.parse_args()
    # THP_*: PyTorch's CPU allocator takes huge pages for buffers of 2 MB and
    # more, as optbench's does (THP_MEM_ALLOC_ENABLE; C10_THP_MEM_ALLOC_ENABLE in some versions)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads),
               THP_MEM_ALLOC_ENABLE="1", C10_THP_MEM_ALLOC_ENABLE="1")
    if a.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = a.openblas_coretype
    print("workload    threads  optbench ms/step  torch ms/step  optbench items/s  torch items/s  "
          "ratio (torch/optbench)")
    for name in a.workloads.split(","):
        ob, tt, items = [], [], 0
        for _ in range(a.rounds):
            ob.append(time_optbench(a.optbench, name, a.threads, a.steps, env)[0])
            ms, items = time_torch_subprocess(name, a.threads, a.steps, 5, env)
            tt.append(ms)
        o, t = min(ob), min(tt)
        print(f"{name:<11} {a.threads:>7}  {o:>16.1f}  {t:>13.1f}  {items / o * 1e3:>16.0f}  "
              f"{items / t * 1e3:>13.0f}  {t / o:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
