#!/usr/bin/env python3
"""scripts/bench_optimizers_cpu.py - the optimizer step of every optimizer
torch.optim also has, optbench against PyTorch on the CPU, side by side.

For each optimizer it runs `optbench bench-step --backend cpu` (median
ms/step of the whole step: gradient statistics, guard and update) and times
the same step in torch.optim on the same number of parameters in the same
number of tensors, with the same hyperparameters (both sides use
torch.optim's defaults, SGD with momentum 0.9), in a process of its own with
the same thread count. Like optbench, torch gets two gradients that
alternate from step to step. The two programs alternate `--rounds` times and
each keeps its best median, which damps the noise of a shared machine.

    python3 scripts/bench_optimizers_cpu.py --optbench build/optbench \\
        [--params 10M] [--tensors 1] [--threads 2] [--rounds 3] [--optimizers adamw,sgd]

torch runs its foreach path (its default for CPU tensors is the single-tensor
loop; with one tensor the two are the same) and, where torch has one, its
fused CPU kernel (Adam, AdamW, SGD, Adagrad: `fused=True`, torch 2.4 and
later). Prints one row per optimizer: optbench's ms/step with its default
guard and with `train.on_nonfinite=none` (the update alone, as torch's step
is), torch's, and torch time / optbench time (above 1: optbench faster).
Needs a python3 with torch (Debian: python3-torch, 1.13, which has no
Adafactor; or pip's CPU wheel in a venv).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

# optbench name -> (torch.optim class, keyword arguments, optbench --set)
CASES = {
    "sgd": ("SGD", dict(lr=1e-3, momentum=0.9), "momentum=0.9"),
    "adam": ("Adam", dict(lr=1e-3), ""),
    "adamw": ("AdamW", dict(lr=1e-3, weight_decay=0.01), ""),
    "nadam": ("NAdam", dict(lr=2e-3), ""),
    "radam": ("RAdam", dict(lr=1e-3), ""),
    "adamax": ("Adamax", dict(lr=2e-3), ""),
    "adagrad": ("Adagrad", dict(lr=1e-2), ""),
    "adadelta": ("Adadelta", dict(lr=1.0), ""),
    "rmsprop": ("RMSprop", dict(lr=1e-2), ""),
    "rprop": ("Rprop", dict(lr=1e-2), ""),
    "asgd": ("ASGD", dict(lr=1e-2), ""),
    "adafactor": ("Adafactor", dict(lr=1e-2), ""),
}
FUSED = {"SGD", "Adam", "AdamW", "Adagrad"}

TORCH_CHILD = r"""
import json, statistics, sys, time
import torch
cls, kw, shapes, threads, mode = json.loads(sys.argv[1])
torch.set_num_threads(threads)
torch.manual_seed(0)
ps = [torch.nn.Parameter(torch.randn(*s)) for s in shapes]
grads = [[torch.randn(*s) * 1e-3 for s in shapes] for _ in range(2)]
if mode != "plain":
    kw[mode] = True
opt = getattr(torch.optim, cls)(ps, **kw)
k = 0
def step():
    global k
    for p, g in zip(ps, grads[k % 2]):
        p.grad = g
    k += 1
    opt.step()
for _ in range(3):
    step()
# as optbench's default: about 50 ms of work per repeat, median of 5 repeats
t = time.perf_counter(); step(); one = time.perf_counter() - t
iters = max(1, min(1000, int(0.05 / max(one, 1e-6))))
ts = []
for _ in range(5):
    t = time.perf_counter()
    for _ in range(iters):
        step()
    ts.append((time.perf_counter() - t) / iters * 1e3)
print(json.dumps(statistics.median(ts)))
"""


def parse_count(s):
    m = re.fullmatch(r"([0-9.]+)([kKmMgG]?)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"not a count: {s!r} (e.g. 10M, 4096)")
    mult = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def shapes_of(params, tensors):
    # bench-step's tensors: K of R x C, R = floor(sqrt(N/K)), C = floor((N/K)/R)
    per = params // tensors
    r = max(1, int(per ** 0.5))
    while (r + 1) * (r + 1) <= per:
        r += 1
    while r * r > per:
        r -= 1
    return [(r, per // r)] * tensors


def optbench_ms(args, name, extra_set):
    cmd = [args.optbench, "bench-step", "--optimizer", name, "--params", str(args.params), "--tensors",
           str(args.tensors), "--backend", "cpu"]
    sets = [s for s in (CASES[name][2], extra_set) if s]
    for s in sets:
        cmd += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    line = [ln for ln in out.splitlines() if ln.startswith("result:")][-1]
    return float(re.search(r"\bms=([0-9.eE+-]+)", line).group(1))


def torch_ms(args, cls, kw, shapes, mode):
    # huge pages for buffers of 2 MB and more, as optbench's CPU allocator
    # takes them (THP_MEM_ALLOC_ENABLE; C10_THP_MEM_ALLOC_ENABLE in some versions)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads),
               THP_MEM_ALLOC_ENABLE="1", C10_THP_MEM_ALLOC_ENABLE="1")
    payload = json.dumps([cls, kw, shapes, args.threads, mode])
    r = subprocess.run([args.python, "-c", TORCH_CHILD, payload], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        msg = r.stderr.strip().splitlines()
        return None, (msg[-1] if msg else f"exit {r.returncode}")
    return float(r.stdout.strip()), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--optbench", default="build/optbench")
    ap.add_argument("--python", default=sys.executable, help="python with torch (default: this one)")
    ap.add_argument("--params", type=parse_count, default=parse_count("10M"))
    ap.add_argument("--tensors", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--optimizers", default=",".join(CASES))
    args = ap.parse_args()
    names = [n for n in args.optimizers.split(",") if n]
    for n in names:
        if n not in CASES:
            ap.error(f"--optimizers: {n!r} has no torch.optim counterpart here (one of {', '.join(CASES)})")
    shapes = shapes_of(args.params, args.tensors)
    ver = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                         text=True)
    if ver.returncode != 0:
        sys.exit(f"{args.python} has no torch: {ver.stderr.strip().splitlines()[-1:]}")
    print(f"# torch {ver.stdout.strip()}, {args.threads} threads, {len(shapes)} tensor(s) of "
          f"{shapes[0][0]}x{shapes[0][1]} ({len(shapes) * shapes[0][0] * shapes[0][1]} parameters), "
          f"best of {args.rounds} alternated medians", flush=True)
    print("| optimizer | optbench ms | optbench ms, `on_nonfinite=none` | torch foreach ms | torch fused ms "
          "| torch / optbench (best torch over optbench's default) |")
    print("|---|---|---|---|---|---|")
    for n in names:
        cls, kw, _ = CASES[n]
        best = {"ob": [], "ob_none": [], "foreach": [], "fused": []}
        notes = []
        for _ in range(args.rounds):
            best["ob"].append(optbench_ms(args, n, ""))
            best["ob_none"].append(optbench_ms(args, n, "train.on_nonfinite=none"))
            for mode in ("foreach", "fused") if cls in FUSED else ("foreach",):
                ms, err = torch_ms(args, cls, dict(kw), shapes, mode)
                if ms is None:
                    notes.append(f"torch {mode}: {err}")
                else:
                    best[mode].append(ms)
        b = {k: min(v) if v else None for k, v in best.items()}
        tb = min(x for x in (b["foreach"], b["fused"]) if x is not None) if (b["foreach"] or b["fused"]) else None

        def f(x):
            return f"{x:.2f}" if x is not None else "-"

        ratio = f"{tb / b['ob']:.2f}" if tb is not None else "-"
        print(f"| {n} | {f(b['ob'])} | {f(b['ob_none'])} | {f(b['foreach'])} | {f(b['fused'])} | {ratio} |",
              flush=True)
        for note in sorted(set(notes)):
            print(f"#   {n}: {note}", flush=True)


if __name__ == "__main__":
    main()
