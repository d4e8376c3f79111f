#!/usr/bin/env python3
"""scripts/models_torch.py - optbench's bert and cnn models against PyTorch
autograd: the same parameters, the same batch, the loss and every parameter's
gradient compared.

    python3 scripts/models_torch.py --wl-export build/tests/wl_export

For each case it runs wl_export (tests/wl_export.c: one float32 train_step of
the workload on the CPU backend, with the 1-D tensors perturbed away from 0
and 1, written out with its batch), builds a PyTorch model in float64 (those
of scripts/bench_torch_cpu.py, torch_models, and for one bert case the
nn.TransformerEncoderLayer model of scripts/bench_torch_gpu.py,
bert_encoder_model), copies the parameters in by name, computes the loss on the same batch and its gradient by
autograd, and compares:
  - the loss: |loss_ob - loss_torch| / |loss_torch| <= --loss-tol (1e-6);
  - every tensor's gradient: ||g_ob - g_torch||_2 / ||g_torch||_2 <= --grad-tol
    (2e-5).
optbench's float32 rounding alone gave at most 9.5e-8 (loss) and 2.1e-6
(gradient, a group-norm shift of the residual cnn, whose gradient is small)
over these cases at 8 seeds and steps each, so the tolerances leave a factor
of about 10. A wrong formula, layout or index gives errors of order 1; the
erf GELU in place of the tanh one, a difference of at most 5e-4 in an
activation, gives 1.5e-6 and more in bert's loss and 3.5e-4 in its gradients.
The worst error of each case is printed.
--scale-grad NAME=X multiplies one optbench gradient by X before the
comparison, in every case that has that tensor (to see that the check fails).

Exit status: 0 all cases agree, 1 a mismatch (or wl_export failed), 77 no
torch (PyTorch is not a dependency of optbench).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (workload, settings, seed, step, torch model): small enough for a few
# seconds in all. "mirror": torch_models() of scripts/bench_torch_cpu.py;
# "encoder": bert_encoder_model() of scripts/bench_torch_gpu.py, the same
# model in nn.TransformerEncoderLayers (tied head with a bias only), which the
# GPU check times against optbench.
CASES = [
    ("bert-tiny", "batch=4,seq=8,vocab=29,layers=2,dim=16,heads=2,mask_prob=0.3,branch=4,eval_batches=1,"
                  "tie_head=1,head_bias=1", 3, 2, "mirror"),
    ("bert-tiny", "batch=4,seq=8,vocab=29,layers=2,dim=16,heads=2,mask_prob=0.3,branch=4,eval_batches=1,"
                  "tie_head=0,head_bias=0", 5, 1, "mirror"),
    ("bert-tiny", "batch=4,seq=8,vocab=29,layers=2,dim=16,heads=2,mask_prob=0.3,branch=4,eval_batches=1,"
                  "tie_head=1,head_bias=1", 4, 3, "encoder"),
    ("cnn-tiny", "batch=4,image=8,classes=5,width=4,stages=2,depth=1,groups=2,residual=0,eval_batches=1", 7, 3,
     "mirror"),
    ("cnn-tiny", "batch=3,image=8,classes=5,width=4,stages=2,depth=2,groups=2,residual=1,eval_batches=1", 9, 1,
     "mirror"),
]


def torch_params(model, kind, s):
    """optbench tensor name -> the torch parameter it is, following the names
    of workloads/bert.c and workloads/cnn.c."""
    out = {}
    if kind == "encoder":
        out["wte"] = model.wte
        out["wpe"] = model.wpe
        for l, b in enumerate(model.blocks):
            out[f"h{l}.attn.qkv.w"] = b.self_attn.in_proj_weight  # q, k, v stacked, as optbench's qkv
            out[f"h{l}.attn.qkv.b"] = b.self_attn.in_proj_bias
            for ob, mod in (("ln1", b.norm1), ("attn.proj", b.self_attn.out_proj), ("ln2", b.norm2),
                            ("mlp.fc", b.linear1), ("mlp.proj", b.linear2)):
                out[f"h{l}.{ob}.w"] = mod.weight
                out[f"h{l}.{ob}.b"] = mod.bias
        out["lnf.w"] = model.lnf.weight
        out["lnf.b"] = model.lnf.bias
        out["head.b"] = model.head_bias
        return out
    if kind == "bert":
        out["wte"] = model.wte.weight
        out["wpe"] = model.wpe.weight
        for l, b in enumerate(model.blocks):
            for ob, mod in (("ln1", b.ln1), ("attn.qkv", b.qkv), ("attn.proj", b.proj), ("ln2", b.ln2),
                            ("mlp.fc", b.fc), ("mlp.proj", b.fc2)):
                out[f"h{l}.{ob}.w"] = mod.weight
                out[f"h{l}.{ob}.b"] = mod.bias
        out["lnf.w"] = model.lnf.weight
        out["lnf.b"] = model.lnf.bias
        if model.head_w is not None:
            out["head.w"] = model.head_w
        if model.head_b is not None:
            out["head.b"] = model.head_b
        return out

    def unit(prefix, u):
        out[f"{prefix}.conv.w"] = u.conv.weight
        out[f"{prefix}.gn.w"] = u.gn.weight
        out[f"{prefix}.gn.b"] = u.gn.bias

    mods = list(model.body)
    if s["residual"]:
        unit("stem", mods.pop(0))
    for st in range(s["stages"]):
        if not s["residual"] and st > 0:
            mods.pop(0)  # the max pool
        for d in range(s["depth"]):
            m = mods.pop(0)
            if s["residual"]:
                unit(f"s{st}.b{d}.a", m.a)
                unit(f"s{st}.b{d}.b", m.b)
                if m.down is not None:
                    unit(f"s{st}.b{d}.down", m.down)
            else:
                unit(f"s{st}.u{d}", m)
    assert not mods, "modules left over"
    out["fc.w"] = model.fc.weight
    out["fc.b"] = model.fc.bias
    return out


def check_case(torch, models, exe, wl, sets, seed, step, impl, a, tmp):
    import numpy as np
    d = os.path.join(tmp, f"{wl}-{seed}-{impl}")
    os.makedirs(d, exist_ok=True)
    cmd = [exe, wl, d, "--set", sets, "--seed", str(seed), "--step", str(step), "--perturb", str(a.perturb)]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        print(f"FAIL cannot run {exe}: {e}")
        return False
    if r.returncode != 0:
        print(f"FAIL {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
        return False
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    s = {k: int(v) if isinstance(v, bool) else v for k, v in meta["settings"].items()}
    kind = "bert" if wl.startswith("bert") else "cnn"
    params = np.fromfile(os.path.join(d, "params.f32"), dtype=np.float32)
    grads = np.fromfile(os.path.join(d, "grads.f32"), dtype=np.float32)
    assert params.size == grads.size == meta["total"]
    for spec in a.scale_grad:
        name, x = spec.split("=")
        for t in meta["tensors"]:
            if t["name"] == name:  # in the cases that have it
                grads[t["offset"]:t["offset"] + t["numel"]] *= float(x)
    torch.manual_seed(0)
    Bert, Cnn, encoder = models
    if impl == "encoder":
        model = encoder(torch, s["seq"], s["vocab"], s["layers"], s["dim"], s["heads"], s["mlp_ratio"] * s["dim"])
    else:
        model = Bert(s) if kind == "bert" else Cnn(s)
    model = model.double()
    tp = torch_params(model, "encoder" if impl == "encoder" else kind, s)
    names = [t["name"] for t in meta["tensors"]]
    if sorted(names) != sorted(tp) or len(set(id(p) for p in tp.values())) != len(list(model.parameters())):
        print(f"FAIL {wl} {sets}: optbench tensors {names} do not map one to one onto the torch parameters "
              f"{sorted(tp)}")
        return False
    with torch.no_grad():
        for t in meta["tensors"]:
            v = params[t["offset"]:t["offset"] + t["numel"]].astype(np.float64).reshape(t["shape"])
            p = tp[t["name"]]
            if tuple(p.shape) != tuple(t["shape"]):
                print(f"FAIL {wl}: {t['name']} has shape {t['shape']} in optbench, {tuple(p.shape)} in torch")
                return False
            p.copy_(torch.from_numpy(v))
    if kind == "bert":
        B, T = s["batch"], s["seq"]
        tok = torch.from_numpy(np.fromfile(os.path.join(d, "tokens.i32"), dtype=np.int32).astype(np.int64))
        pos = torch.from_numpy(np.fromfile(os.path.join(d, "pos.i32"), dtype=np.int32).astype(np.int64))
        tgt = torch.from_numpy(np.fromfile(os.path.join(d, "tgt.i32"), dtype=np.int32).astype(np.int64))
        assert pos.numel() == meta["M"] > 0
        loss = model(tok.view(B, T), pos, tgt)
    else:
        B, S, C = s["batch"], s["image"], s["channels"]
        img = np.fromfile(os.path.join(d, "images.f32"), dtype=np.float32).astype(np.float64)
        x = torch.from_numpy(img.reshape(B, S, S, C)).permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW
        y = torch.from_numpy(np.fromfile(os.path.join(d, "labels.i32"), dtype=np.int32).astype(np.int64))
        loss = model(x, y)
    loss.backward()
    lt = loss.item()
    lerr = abs(meta["loss"] - lt) / abs(lt)
    ok = lerr <= a.loss_tol
    worst, wname = 0.0, ""
    lines = []
    for t in meta["tensors"]:
        go = grads[t["offset"]:t["offset"] + t["numel"]].astype(np.float64)
        gt = tp[t["name"]].grad.detach().numpy().reshape(-1)
        nt = np.linalg.norm(gt)
        err = np.linalg.norm(go - gt) / nt if nt > 0 else np.linalg.norm(go)
        if err > worst:
            worst, wname = err, t["name"]
        bad = not err <= a.grad_tol
        ok = ok and not bad
        if bad or a.verbose:
            lines.append(f"    {t['name']:<18} |g| {nt:.3e}  rel err {err:.2e}{'  <-- MISMATCH' if bad else ''}")
    print(f"{'ok  ' if ok else 'FAIL'} {wl} {sets} seed {seed} step {step} ({impl}): loss {meta['loss']:.7f} "
          f"(torch {lt:.7f}, rel err {lerr:.1e}{'' if lerr <= a.loss_tol else ' <-- MISMATCH'}); worst gradient rel err {worst:.2e} ({wname}) "
          f"over {len(names)} tensors")
    for ln in lines:
        print(ln)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wl-export", default="build/tests/wl_export", help="the wl_export program")
    ap.add_argument("--perturb", type=float, default=0.1, help="std of the noise added to the 1-D tensors")
    ap.add_argument("--loss-tol", type=float, default=1e-6)
    ap.add_argument("--grad-tol", type=float, default=2e-5)
    ap.add_argument("--scale-grad", action="append", default=[], metavar="NAME=X",
                    help="multiply optbench's gradient of tensor NAME by X first (a check that fails)")
    ap.add_argument("--verbose", action="store_true", help="print every tensor's error")
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        print("skipped: no torch and numpy for this python (Debian: python3-torch)")
        return 77
    sys.path.insert(0, HERE)
    from bench_torch_cpu import torch_models
    from bench_torch_gpu import bert_encoder_model
    torch, Bert, Cnn = torch_models()
    torch.set_num_threads(1)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for wl, sets, seed, step, impl in CASES:
            ok = check_case(torch, (Bert, Cnn, bert_encoder_model), a.wl_export, wl, sets, seed, step, impl, a,
                            tmp) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
