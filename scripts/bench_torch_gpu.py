#!/usr/bin/env python3
"""scripts/bench_torch_gpu.py - PyTorch timings beside `optbench bench-step`.

Times torch's optimizer steps on the same synthetic layouts as bench-step
(K tensors of R x C, R = floor(sqrt(N/K)), C = floor((N/K)/R), or an explicit
shape), on the same GPU, with the same method: warm-up, iterations chosen for
about 50 ms per repeat, CUDA events, median of repeats. Also a device-to-device
copy of the same bytes (read + written) and, on request, a training step of a
BERT-like encoder in eager PyTorch with the sizes of optbench's bert workload
(pre-LayerNorm, tanh GELU, tied head with bias, masked-token cross-entropy),
and one of optbench's cnn presets (--cnn NAME: the model of
scripts/bench_torch_cpu.py, which mirrors workloads/cnn.c; cuDNN's autotuner
on, so torch runs its fastest convolutions). fp32 throughout, TF32 off.

Cases: --case IMPL,PARAMS,TENSORS[,RxC] with IMPL one of
  adamw-fused   torch.optim.AdamW(fused=True)
  adamw-foreach torch.optim.AdamW(foreach=True)
  adamw-fused-guarded  torch.optim.AdamW(fused=True) skipping the step on a
                non-finite gradient as optbench's default guard does: the
                global gradient norm first (torch._foreach_norm, one read of
                the gradients), its finiteness handed to the fused kernel as
                found_inf (what GradScaler hands it), so no host sync
  adamw-fused-groups  torch.optim.AdamW(fused=True) over two parameter groups:
                the matrices with the weight decay, a bias of C floats after
                each (bench-step --biases) without it, as timm's
                create_optimizer groups them (optbench's filter_bias_and_bn)
  sgd-fused     torch.optim.SGD(momentum=0.9, fused=True)
  muon          torch.optim.Muon (2-D parameters; its Newton-Schulz runs in bf16)
  muon-fp32     torch.optim.Muon with the same Newton-Schulz iteration in fp32
                (its module function replaced for the case), to compare at fp32
Writes one JSON object per line to --out (and a readable line per case to
stdout). Without torch or a GPU it says so and exits 0 with no cases.

--device cpu runs the same code on the CPU for scripts/gpu-check.sh's dry run
(OB_GPU_DRYRUN): a check of this script, not a timing (one short repeat per
case; fused=True only where this torch has it on the CPU, the record says
which; a case this torch lacks the API for, torch.optim.Muon or
torch._foreach_norm, is recorded as skipped rather than as an error).
"""
import argparse
import json
import math
import os
import sys
import time


DEVICE = "cuda"  # --device


class Unsupported(RuntimeError):
    """This torch lacks what the case needs: an error on the GPU, skipped on the CPU."""


def make_opt(cls, params, **kw):
    """cls(params, fused=True, **kw); on the CPU without a fused CPU kernel in
    this torch, the default implementation. Returns (optimizer, fused)."""
    if DEVICE == "cuda":
        return cls(params, fused=True, **kw), True
    try:
        return cls(params, fused=True, **kw), True
    except (TypeError, RuntimeError):
        return cls(params, **kw), False


def parse_count(s):
    mult = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "b": 1e9, "B": 1e9}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(float(s))


def layout(params, tensors, shape):
    """The shapes bench-step uses (harness/cmd_bench_step.c)."""
    if shape:
        r, c = (int(v) for v in shape.lower().split("x"))
        return tensors, r, c
    per = params // tensors
    r = max(1, math.isqrt(per))
    return tensors, r, per // r


def timed(torch, fn, target_ms=50.0, repeats=5, warmup=3, max_iters=10000):
    """Median ms per call of fn over repeats, iterations sized to ~target_ms."""
    if DEVICE != "cuda":  # the dry run: one short repeat, on the host's clock
        fn()
        t = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t) * 1e3
        return ms, ms, ms, 1
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    n = 1
    while True:
        start.record()
        for _ in range(n):
            fn()
        end.record()
        end.synchronize()
        total = start.elapsed_time(end)
        if total >= target_ms / 4 or n >= max_iters:
            per = total / n
            break
        n *= 4
    iters = max(1, min(max_iters, int(target_ms / per) if per > 0 else max_iters))
    times = []
    for _ in range(repeats):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / iters)
    times.sort()
    mid = len(times) // 2
    med = times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])
    return med, times[0], times[-1], iters


def ns_fp32(grad, ns_coefficients, ns_steps, eps, use_addmm=False):
    """torch.optim.Muon's Newton-Schulz iteration, kept in fp32 instead of bf16."""
    a, b, c = ns_coefficients
    x = grad.float()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


def bench_case(torch, impl, params, tensors, shape):
    k, r, c = layout(params, tensors, shape)
    ps = [torch.nn.Parameter(torch.randn(r, c, device=DEVICE) * 0.02) for _ in range(k)]
    bs = [torch.nn.Parameter(torch.randn(c, device=DEVICE) * 0.02) for _ in range(k)] if impl.endswith("-groups") else []
    n = k * r * c + len(bs) * c
    for p in ps + bs:
        p.grad = torch.randn_like(p) * 1e-3
    fused = False
    if impl == "adamw-fused-groups":
        opt, fused = make_opt(torch.optim.AdamW, [{"params": ps, "weight_decay": 0.01},
                                                  {"params": bs, "weight_decay": 0.0}], lr=1e-3)
        bpp = 28
    elif impl == "adamw-fused":
        (opt, fused), bpp = make_opt(torch.optim.AdamW, ps, lr=1e-3, weight_decay=0.01), 28
    elif impl == "adamw-fused-guarded":
        if not hasattr(torch, "_foreach_norm"):
            raise Unsupported("this torch has no torch._foreach_norm")
        (opt, fused), bpp = make_opt(torch.optim.AdamW, ps, lr=1e-3, weight_decay=0.01), 28
    elif impl == "adamw-foreach":
        opt, bpp = torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.01, foreach=True), 28
    elif impl == "sgd-fused":
        (opt, fused), bpp = make_opt(torch.optim.SGD, ps, lr=1e-3, momentum=0.9), 20
    elif impl in ("muon", "muon-fp32"):
        if not hasattr(torch.optim, "Muon"):
            raise Unsupported("this torch has no torch.optim.Muon")
        opt, bpp = torch.optim.Muon(ps, lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True), 20
    else:
        raise ValueError("unknown impl " + impl)
    patched = None
    if impl == "muon-fp32":
        import torch.optim._muon as muon_mod
        patched = (muon_mod, muon_mod._zeropower_via_newtonschulz)
        muon_mod._zeropower_via_newtonschulz = ns_fp32
    step = opt.step
    if impl == "adamw-fused-guarded":
        grads = [p.grad for p in ps]

        def step():
            total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
            opt.found_inf = (~torch.isfinite(total)).to(torch.float32)  # read by the fused kernel
            opt.step()
    try:
        ms, lo, hi, iters = timed(torch, step)
    finally:
        if patched:
            patched[0]._zeropower_via_newtonschulz = patched[1]
    # copy of the same bytes (read + written): bpp * n / 2 bytes each way
    words = max(1024, (bpp * n // 2) // 4)
    try:
        a = torch.empty(words, device=DEVICE, dtype=torch.float32).fill_(1.0)
        b = torch.empty_like(a)
        cms, _, _, _ = timed(torch, lambda: b.copy_(a))
        copy_gbps = 2.0 * words * 4 / (cms * 1e-3) / 1e9
        del a, b
    except RuntimeError:  # out of memory: skip the copy
        copy_gbps = float("nan")
    gbps = bpp * n / (ms * 1e-3) / 1e9
    del opt, ps, bs
    torch.cuda.empty_cache()
    rec = {"kind": "optim", "impl": impl, "params": n, "tensors": k, "shape": "%dx%d" % (r, c), "ms": ms,
           "ms_min": lo, "ms_max": hi, "iters": iters, "bytes_per_param": bpp, "gbps": gbps,
           "copy_gbps": copy_gbps, "fraction": gbps / copy_gbps if copy_gbps == copy_gbps else None}
    if DEVICE != "cuda":
        rec.update(device=DEVICE, fused=fused)
    return rec


def bert_encoder_model(torch, T, V, L, C, H, F):
    """The bert workload's model (workloads/bert.c) written as a PyTorch user
    would, in nn.TransformerEncoderLayers (pre-LN, tanh GELU, tied head with a
    bias): the model timed here. scripts/models_torch.py checks its loss and
    gradients against optbench's on the CPU."""
    nn, fn = torch.nn, torch.nn.functional

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Parameter(torch.randn(V, C) * 0.02)
            self.wpe = nn.Parameter(torch.randn(T, C) * 0.02)
            act = lambda x: fn.gelu(x, approximate="tanh")  # noqa: E731
            self.blocks = nn.ModuleList(
                [nn.TransformerEncoderLayer(C, H, F, dropout=0.0, activation=act, batch_first=True,
                                            norm_first=True) for _ in range(L)])
            self.lnf = nn.LayerNorm(C)
            self.head_bias = nn.Parameter(torch.zeros(V))

        def forward(self, tokens, pos, targets):
            x = self.wte[tokens] + self.wpe[None, :, :]
            for blk in self.blocks:
                x = blk(x)
            h = self.lnf(x).reshape(-1, C)[pos]
            logits = h @ self.wte.t() + self.head_bias
            return fn.cross_entropy(logits, targets)

    return Model()


def bench_bert(torch, spec):
    """One training step (forward, backward, fused AdamW) of the bert workload's model."""
    B, T, V, L, C, H = (int(v) for v in spec.split(","))
    model = bert_encoder_model(torch, T, V, L, C, H, 4 * C).to(DEVICE)
    n_params = sum(p.numel() for p in model.parameters())
    opt, _ = make_opt(torch.optim.AdamW, model.parameters(), lr=1e-4)
    g = torch.Generator(device=DEVICE).manual_seed(0)
    tokens = torch.randint(0, V, (B, T), device=DEVICE, generator=g)
    M = int(0.15 * B * T)
    pos = torch.randperm(B * T, device=DEVICE, generator=g)[:M]
    targets = torch.randint(0, V, (M,), device=DEVICE, generator=g)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = model(tokens, pos, targets)
        loss.backward()
        opt.step()

    ms, lo, hi, iters = timed(torch, step, target_ms=500.0, repeats=3, warmup=3, max_iters=50)
    return {"kind": "bert", "impl": "torch-eager-fp32", "spec": spec, "params": n_params, "ms": ms, "ms_min": lo,
            "ms_max": hi, "iters": iters, "tokens_per_s": B * T / (ms * 1e-3)}


def cnn_step(torch, name, device):
    """(step function, parameter count, images per step) of a training step
    (forward, backward, AdamW, fused on CUDA) of the cnn preset NAME on one
    fixed batch on device."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_torch_cpu

    p = bench_torch_cpu.PRESETS[name]
    if p["kind"] != "cnn":
        raise ValueError("%s is not a cnn preset" % name)
    _, _, Cnn = bench_torch_cpu.torch_models()
    torch.manual_seed(0)
    model = Cnn(p).to(device)
    n_params = sum(q.numel() for q in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **({"fused": True} if device == "cuda" else {}))
    B = p["batch"]
    x = torch.randn(B, p["channels"], p["image"], p["image"], device=device)
    y = torch.randint(p["classes"], (B,), device=device)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = model(x, y)
        loss.backward()
        opt.step()

    return step, n_params, B


def bench_cnn(torch, name):
    torch.backends.cudnn.benchmark = True
    step, n_params, items = cnn_step(torch, name, DEVICE)
    ms, lo, hi, iters = timed(torch, step, target_ms=500.0, repeats=3, warmup=5, max_iters=50)
    return {"kind": "cnn", "impl": "torch-eager-fp32", "spec": name, "params": n_params, "ms": ms, "ms_min": lo,
            "ms_max": hi, "iters": iters, "images_per_s": items / (ms * 1e-3)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", default=[], help="IMPL,PARAMS,TENSORS[,RxC]")
    ap.add_argument("--bert", help="B,T,V,L,C,H of the bert model to time")
    ap.add_argument("--cnn", help="name of the cnn preset to time (e.g. cnn-base)")
    ap.add_argument("--out", help="JSON lines file")
    ap.add_argument("--budget", type=float, default=150.0, help="seconds; later cases are skipped past it")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a check of this script (gpu-check.sh's dry run), not a timing")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    t0 = time.time()
    out = open(args.out, "w") if args.out else None

    def emit(rec):
        line = json.dumps(rec)
        if out:
            out.write(line + "\n")
            out.flush()
        print("torch:", line, flush=True)

    try:
        import torch
    except Exception as ex:  # no torch here
        emit({"kind": "info", "available": False, "why": "import torch failed: %s" % ex})
        return 0
    if DEVICE == "cuda" and not torch.cuda.is_available():
        emit({"kind": "info", "available": False, "why": "torch sees no CUDA device"})
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    emit({"kind": "info", "available": True, "torch": torch.__version__,
          "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else DEVICE})
    status = 0
    def run(label, fn):
        """emit fn()'s record, or why there is none; 1 on an error."""
        if time.time() - t0 > args.budget:
            emit({"kind": "skipped", "case": label, "why": "time budget"})
            return 0
        try:
            emit(fn())
            return 0
        except Unsupported as ex:
            if DEVICE != "cuda":  # the dry run: this torch is older than the GPU machine's
                emit({"kind": "skipped", "case": label, "why": str(ex)[:300]})
                return 0
            emit({"kind": "error", "case": label, "why": str(ex)[:300]})
            torch.cuda.empty_cache()
            return 1
        except Exception as ex:
            emit({"kind": "error", "case": label, "why": str(ex)[:300]})
            torch.cuda.empty_cache()
            return 1

    for case in args.case:
        parts = case.split(",")
        status |= run(case, lambda: bench_case(torch, parts[0], parse_count(parts[1]), int(parts[2]),
                                               parts[3] if len(parts) > 3 else None))
    if args.bert:
        status |= run("bert " + args.bert, lambda: bench_bert(torch, args.bert))
    if args.cnn:
        status |= run("cnn " + args.cnn, lambda: bench_cnn(torch, args.cnn))
    return status


if __name__ == "__main__":
    sys.exit(main())
