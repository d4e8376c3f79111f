#!/usr/bin/env python3
"""scripts/conformance_torch.py OPTBENCH [--cases N] [--seed S] [--only OPT[:N],...] [--keep DIR]
       scripts/conformance_torch.py --record FILE [--cases N] [--seed S] [--only OPT[:N],...]

Differential conformance against torch.optim: N random cases per optimizer
(hyperparameters drawn across every option optbench shares with torch.optim,
parameter shapes, gradient sequences with zeros, mixed scales and all-zero
steps; some with train.clip_norm against torch.nn.utils.clip_grad_norm_),
each run through `optbench replay` (float32) and through torch.optim in
float64 on the same float32-exact inputs, and compared at every step as the
shared golden cases are: |out - ref| <= tol * max(1, max_i |ref|).

Optimizers: sgd, adam, adamw, nadam, radam, adamax, adagrad, adadelta,
rmsprop, rprop, asgd (its parameters, not the average ax), adafactor where torch.optim.Adafactor exists (PyTorch >= 2.5;
matrices, vectors and 4-D tensors), muon where torch.optim.Muon exists (PyTorch >= 2.9: its
Newton-Schulz casts to bfloat16, and here that cast keeps float64, so the
comparison is of the method, not of bf16 rounding), and adamw_sf
and sgd_sf against schedulefree.AdamWScheduleFree and SGDScheduleFree where
the schedulefree package is installed (their parameters y after every step;
their average x, where optbench evaluates, is checked by tests/test_optim.c).
The optimizers of FILTERED below take filter_bias_and_bn at times (a
vector then against a torch parameter group without decay, as timm's
create_optimizer builds it).
nadam runs with formula=torch1.13 on PyTorch < 2.0 and torch2 after;
decoupled weight decay of nadam/radam where torch has it (>= 2.0).
lamb, lars, ademamix and adabelief, which torch.optim lacks, against
LambRef, LarsRef, AdEMAMixRef and AdaBeliefRef below: the algorithms of
timm's Lamb (apex's FusedLAMB; its built-in global clipping, max_grad_norm,
off, as optbench leaves clipping to train.clip_norm), timm's Lars (after
apex's LARC), the AdEMAMix authors' PyTorch optimizer (with its alpha and
beta3 warmups) and the AdaBelief authors' adabelief-pytorch 0.2 (rectified
or not, its three decays, amsgrad) written out in torch.

Prints one line per optimizer (cases, worst scaled error, the case it came
from) and 'N cases, M failed'; exits 1 on a failure, 77 when torch is missing.
--keep DIR leaves each failing case's CSV files and command there. --only
narrows the optimizers (OPT:N: N cases of OPT in place of --cases).

--record FILE writes the cases and torch's answers (each case's first 10
steps) to FILE as JSON instead of running optbench, for
tests/cli/torch_recorded_check.py, which replays and compares them with
python3 alone: tests/data/torch_recorded.json holds what Debian's PyTorch
1.13 cannot check.
"""
import argparse
import csv
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("skipped: python3 has no torch (Debian: python3-torch, or pip's CPU wheel)")
    sys.exit(77)
import numpy as np
try:
    import schedulefree
except ImportError:
    schedulefree = None

TOL = 1e-4
# muon with ns_dtype=bf16 against torch.optim.Muon as it runs (float32
# parameters, bfloat16 Newton-Schulz): the same roundings, but a float sum
# in another order now and then rounds to the neighbouring bfloat16, which
# moves that step's update by about lr * 2^-8 (and, through A or B, a row
# of it). So each case within TOL_BF16, and most cases (BF16_MATCHED of
# them) within BF16_NEAR at every element and step, which ns_dtype=fp32
# meets in no case (every element off by 1e-5 to 1e-3).
TOL_BF16 = 1e-3
BF16_NEAR = 1e-6
BF16_MATCHED = 0.75
# optimizers whose filter_bias_and_bn is drawn here (a vector then runs
# against a torch parameter group without weight decay); lamb and lars draw
# it themselves, muon's filter concerns its AdamW group, which a replay of
# one matrix does not have
FILTERED = ("sgd", "adam", "adamw", "nadam", "radam", "adamax", "adagrad", "adadelta", "rmsprop", "asgd",
            "adamw_sf", "sgd_sf", "adafactor", "ademamix", "adabelief")
TORCH2 = int(torch.__version__.split(".")[0]) >= 2


def f32(a):
    """float32-exact values, as float64."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def draw_grads(rng, steps, n):
    g = []
    for t in range(steps):
        kind = rng.random()
        if kind < 0.08:
            row = np.zeros(n)                                   # a step with no gradient
        else:
            scale = 10.0 ** rng.uniform(-4, 1.5)               # mixed scales across steps
            row = np.array([rng.gauss(0, 1) for _ in range(n)]) * scale
            for i in range(n):
                if rng.random() < 0.1:
                    row[i] = 0.0                                # sparse entries
        g.append(f32(row))
    return g


def pick(rng, *xs):
    return xs[rng.randrange(len(xs))]


def draw_case(rng, opt):
    """(optbench settings dict, torch constructor, torch kwargs)."""
    s = {}
    if opt == "sgd":
        s["lr"] = pick(rng, 0.001, 0.01, 0.1, 0.3)
        s["momentum"] = pick(rng, 0.0, 0.5, 0.9)
        s["nesterov"] = s["momentum"] > 0 and rng.random() < 0.4
        s["dampening"] = 0.0 if s["nesterov"] else pick(rng, 0.0, 0.1, 0.5)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        kw = dict(lr=s["lr"], momentum=s["momentum"], dampening=s["dampening"], nesterov=s["nesterov"],
                  weight_decay=s["weight_decay"])
        return s, torch.optim.SGD, kw
    if opt in ("adam", "adamw"):
        s["lr"] = pick(rng, 1e-4, 1e-3, 1e-2, 0.1)
        s["beta1"] = pick(rng, 0.0, 0.8, 0.9)
        s["beta2"] = pick(rng, 0.9, 0.95, 0.999, 0.99999)  # near 1: 1 - beta2 as torch rounds it
        s["eps"] = pick(rng, 1e-8, 1e-6, 1e-3)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["amsgrad"] = rng.random() < 0.4
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"],
                  amsgrad=s["amsgrad"])
        return s, torch.optim.Adam if opt == "adam" else torch.optim.AdamW, kw
    if opt == "nadam":
        s["lr"] = pick(rng, 1e-3, 2e-3, 1e-2)
        s["beta1"] = pick(rng, 0.8, 0.9)
        s["beta2"] = pick(rng, 0.95, 0.999, 0.99999)
        s["eps"] = pick(rng, 1e-8, 1e-6)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["momentum_decay"] = pick(rng, 0.004, 0.01)
        s["formula"] = "torch2" if TORCH2 else "torch1.13"
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"],
                  momentum_decay=s["momentum_decay"])
        if TORCH2 and rng.random() < 0.4:
            s["decoupled_weight_decay"] = kw["decoupled_weight_decay"] = True
        return s, torch.optim.NAdam, kw
    if opt == "radam":
        s["lr"] = pick(rng, 1e-3, 1e-2)
        s["beta1"] = pick(rng, 0.8, 0.9)
        s["beta2"] = pick(rng, 0.95, 0.999)
        s["eps"] = pick(rng, 1e-8, 1e-6)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"])
        if TORCH2 and rng.random() < 0.4:
            s["decoupled_weight_decay"] = kw["decoupled_weight_decay"] = True
        return s, torch.optim.RAdam, kw
    if opt == "adamax":
        s["lr"] = pick(rng, 1e-3, 2e-3, 1e-2)
        s["beta1"] = pick(rng, 0.0, 0.8, 0.9, 0.9999)
        s["beta2"] = pick(rng, 0.95, 0.999)
        s["eps"] = pick(rng, 1e-8, 1e-6)
        s["weight_decay"] = pick(rng, 0.0, 0.01)
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"])
        return s, torch.optim.Adamax, kw
    if opt == "adagrad":
        s["lr"] = pick(rng, 0.01, 0.1)
        s["lr_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["weight_decay"] = pick(rng, 0.0, 0.01)
        s["initial_accumulator_value"] = pick(rng, 0.0, 0.1)
        s["eps"] = pick(rng, 1e-10, 1e-6)
        return s, torch.optim.Adagrad, dict(s)
    if opt == "adadelta":
        s["lr"] = pick(rng, 0.1, 1.0)
        s["rho"] = pick(rng, 0.9, 0.95, 0.99999)
        s["eps"] = pick(rng, 1e-6, 1e-4)
        s["weight_decay"] = pick(rng, 0.0, 0.01)
        return s, torch.optim.Adadelta, dict(s)
    if opt == "rmsprop":
        s["lr"] = pick(rng, 1e-3, 1e-2)
        s["alpha"] = pick(rng, 0.9, 0.99, 0.99999)
        s["eps"] = pick(rng, 1e-8, 1e-6)
        s["weight_decay"] = pick(rng, 0.0, 0.01)
        s["momentum"] = pick(rng, 0.0, 0.9)
        s["centered"] = rng.random() < 0.5
        return s, torch.optim.RMSprop, dict(s)
    if opt == "adamw_sf":
        s["lr"] = pick(rng, 1e-3, 2.5e-3, 1e-2, 0.1)
        s["beta1"] = pick(rng, 0.5, 0.9, 0.95)
        s["beta2"] = pick(rng, 0.95, 0.999)
        s["eps"] = pick(rng, 1e-8, 1e-6)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["warmup_steps"] = pick(rng, 0, 0, 3, 10)
        s["r"] = pick(rng, 0.0, 0.0, 1.0)
        s["weight_lr_power"] = pick(rng, 2.0, 2.0, 0.0, 1.0)
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"],
                  warmup_steps=s["warmup_steps"], r=s["r"], weight_lr_power=s["weight_lr_power"], foreach=False)
        return s, schedulefree.AdamWScheduleFree, kw
    if opt == "sgd_sf":
        s["lr"] = pick(rng, 0.01, 0.1, 0.5, 1.0)
        s["momentum"] = pick(rng, 0.5, 0.9, 0.95)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["warmup_steps"] = pick(rng, 0, 0, 3, 10)
        s["r"] = pick(rng, 0.0, 0.0, 1.0)
        s["weight_lr_power"] = pick(rng, 2.0, 2.0, 0.0, 1.0)
        kw = dict(lr=s["lr"], momentum=s["momentum"], weight_decay=s["weight_decay"],
                  warmup_steps=s["warmup_steps"], r=s["r"], weight_lr_power=s["weight_lr_power"], foreach=False)
        return s, schedulefree.SGDScheduleFree, kw
    if opt == "rprop":
        s["lr"] = pick(rng, 1e-3, 1e-2, 0.1)
        s["etaminus"] = pick(rng, 0.5, 0.3)
        s["etaplus"] = pick(rng, 1.2, 1.5)
        s["step_size_min"] = pick(rng, 1e-6, 1e-3)
        s["step_size_max"] = pick(rng, 50.0, 0.05)
        kw = dict(lr=s["lr"], etas=(s["etaminus"], s["etaplus"]),
                  step_sizes=(s["step_size_min"], s["step_size_max"]), foreach=False)
        w = pick(rng, 0, 0, 2, 4)  # a warmup: Rprop's step sizes start at the first step's lr
        if w:
            s["train.schedule"], s["train.warmup_steps"] = "warmup", w
        return s, torch.optim.Rprop, kw
    if opt == "asgd":
        s["lr"] = pick(rng, 1e-3, 1e-2, 0.1)
        s["lambd"] = pick(rng, 1e-4, 1e-2, 0.1)
        s["alpha"] = pick(rng, 0.75, 0.5, 1.0)
        s["t0"] = pick(rng, 1e6, 3.0, 0.0)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        kw = dict(lr=s["lr"], lambd=s["lambd"], alpha=s["alpha"], t0=s["t0"], weight_decay=s["weight_decay"],
                  foreach=False)
        return s, torch.optim.ASGD, kw
    if opt == "adafactor":
        s["lr"] = pick(rng, 1e-3, 1e-2, 0.1)
        s["beta2_decay"] = pick(rng, -0.8, -0.5, -1.0)
        s["eps1"] = pick(rng, float(np.finfo(np.float32).eps), 1e-6, 1e-3)  # torch's None is the dtype's eps
        s["eps2"] = pick(rng, 1e-3, 1e-2)
        s["d"] = pick(rng, 1.0, 2.0)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        kw = dict(lr=s["lr"], beta2_decay=s["beta2_decay"], eps=(s["eps1"], s["eps2"]), d=s["d"],
                  weight_decay=s["weight_decay"], foreach=False)
        return s, torch.optim.Adafactor, kw
    if opt == "lamb":
        s["lr"] = pick(rng, 1e-3, 1e-2, 0.1)
        s["beta1"] = pick(rng, 0.0, 0.3, 0.9)
        s["beta2"] = pick(rng, 0.9, 0.99, 0.999)
        s["eps"] = pick(rng, 1e-8, 1e-6, 1e-3)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["bias_correction"] = rng.random() < 0.8
        s["grad_averaging"] = rng.random() < 0.8
        s["trust_clip"] = rng.random() < 0.3
        s["always_adapt"] = rng.random() < 0.3
        s["filter_bias_and_bn"] = rng.random() < 0.3
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"],
                  bias_correction=s["bias_correction"], grad_averaging=s["grad_averaging"],
                  trust_clip=s["trust_clip"], always_adapt=s["always_adapt"],
                  filter_bias_and_bn=s["filter_bias_and_bn"])
        return s, LambRef, kw
    if opt == "lars":
        s["lr"] = pick(rng, 0.01, 0.1, 1.0, 5.0)
        s["momentum"] = pick(rng, 0.0, 0.5, 0.9)
        s["nesterov"] = s["momentum"] > 0 and rng.random() < 0.4
        s["dampening"] = 0.0 if s["nesterov"] else pick(rng, 0.0, 0.1)
        s["weight_decay"] = pick(rng, 0.0, 1e-4, 5e-4, 0.1)
        s["trust_coeff"] = pick(rng, 1e-3, 0.02)
        s["eps"] = pick(rng, 1e-8, 1e-3)
        s["trust_clip"] = rng.random() < 0.3
        s["always_adapt"] = rng.random() < 0.3
        s["filter_bias_and_bn"] = rng.random() < 0.3
        if s["weight_decay"] == 0 and not s["always_adapt"]:
            s["lr"] = pick(rng, 0.001, 0.01)  # plain SGD
        return s, LarsRef, dict(s)
    if opt == "muon":
        s["lr"] = pick(rng, 0.01, 0.02)
        s["momentum"] = pick(rng, 0.9, 0.95)
        s["nesterov"] = rng.random() < 0.7
        s["weight_decay"] = pick(rng, 0.0, 0.1)
        s["adjust_lr"] = pick(rng, "original", "match_rms_adamw")
        s["ns_dtype"] = pick(rng, "fp32", "bf16")
        kw = dict(lr=s["lr"], momentum=s["momentum"], nesterov=s["nesterov"], weight_decay=s["weight_decay"],
                  adjust_lr_fn=s["adjust_lr"])
        return s, torch.optim.Muon, kw
    if opt == "ademamix":
        s["lr"] = pick(rng, 1e-3, 1e-2, 0.1)
        s["beta1"] = pick(rng, 0.0, 0.5, 0.9)
        s["beta2"] = pick(rng, 0.9, 0.99, 0.999)
        s["beta3"] = pick(rng, 0.99, 0.999, 0.9999)
        s["alpha"] = pick(rng, 0.0, 2.0, 8.0)
        s["alpha_warmup"] = pick(rng, 0, 0, 5, 30)
        s["beta3_warmup"] = pick(rng, 0, 0, 7, 30)
        s["eps"] = pick(rng, 1e-8, 1e-6, 1e-3)
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"], s["beta3"]), alpha=s["alpha"],
                  alpha_warmup=s["alpha_warmup"], beta3_warmup=s["beta3_warmup"], eps=s["eps"],
                  weight_decay=s["weight_decay"])
        return s, AdEMAMixRef, kw
    if opt == "adabelief":
        s["lr"] = pick(rng, 1e-4, 1e-3, 1e-2, 0.1)
        # not beta1 = 0: then m = g, g - m = 0, and the denominator is eps
        # alone, steps of g / sqrt(eps) that float32 rounding alone (the
        # package's own float32 run) puts 5e-5 off
        s["beta1"] = pick(rng, 0.5, 0.8, 0.9)
        s["beta2"] = pick(rng, 0.9, 0.99, 0.999, 0.99999)
        s["eps"] = pick(rng, 1e-16, 1e-12, 1e-8, 1e-3)  # the package's default, and eps large enough to show
        s["weight_decay"] = pick(rng, 0.0, 0.01, 0.1)
        s["weight_decouple"] = rng.random() < 0.7
        s["fixed_decay"] = s["weight_decouple"] and rng.random() < 0.3
        s["rectify"] = rng.random() < 0.6
        # optbench refuses the settings the package ignores: degenerated_to_sgd
        # without rectify, amsgrad with it
        s["degenerated_to_sgd"] = not s["rectify"] or rng.random() < 0.7
        s["amsgrad"] = not s["rectify"] and rng.random() < 0.4
        kw = dict(lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], weight_decay=s["weight_decay"],
                  amsgrad=s["amsgrad"], weight_decouple=s["weight_decouple"], fixed_decay=s["fixed_decay"],
                  rectify=s["rectify"], degenerated_to_sgd=s["degenerated_to_sgd"])
        w = pick(rng, 0, 0, 0, 4)  # a warmup: the scheduled lr reaches the decay and the rectified step
        if w:
            s["train.schedule"], s["train.warmup_steps"] = "warmup", w
        return s, AdaBeliefRef, kw
    raise ValueError(opt)


class AdaBeliefRef(torch.optim.Optimizer):
    """AdaBelief (Zhuang et al. 2020) as adabelief-pytorch 0.2's AdaBelief
    steps one tensor: the decay first (weight_decouple: p *= 1 - lr wd, or
    1 - wd with fixed_decay; else g += wd p), m = beta1 m + (1 - beta1) g,
    s = beta2 s + (1 - beta2) (g - m)^2 + eps (the package adds eps in place,
    so s keeps it); without rectify p -= lr / bc1 m / (sqrt(s) / sqrt(bc2) +
    eps) (amsgrad: the maximum of s); with it, once N_sma >= 5, RAdam's
    rectified step p -= lr r m / (sqrt(s) + eps) (the bias corrections in r),
    before that p -= lr / bc1 m (degenerated_to_sgd) or no move."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16, weight_decay=0.0, amsgrad=False,
                 weight_decouple=True, fixed_decay=False, rectify=True, degenerated_to_sgd=True):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      weight_decouple=weight_decouple, fixed_decay=fixed_decay, rectify=rectify,
                                      degenerated_to_sgd=degenerated_to_sgd))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
            for p in group["params"]:
                st = self.state[p]
                if not st:
                    st["t"] = 0
                    st["m"], st["s"], st["smax"] = (torch.zeros_like(p) for _ in range(3))
                g = p.grad
                if group["weight_decouple"]:
                    p.mul_(1.0 - (wd if group["fixed_decay"] else lr * wd))
                elif wd != 0:
                    g = g.add(p, alpha=wd)
                st["t"] += 1
                t, m, s = st["t"], st["m"], st["s"]
                bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
                m.mul_(beta1).add_(g, alpha=1 - beta1)
                d = g - m
                s.mul_(beta2).addcmul_(d, d, value=1 - beta2).add_(eps)
                if not group["rectify"]:
                    v = s
                    if group["amsgrad"]:
                        v = torch.maximum(st["smax"], s, out=st["smax"])
                    p.addcdiv_(m, (v.sqrt() / math.sqrt(bc2)).add_(eps), value=-lr / bc1)
                    continue
                n_max = 2 / (1 - beta2) - 1
                n_sma = n_max - 2 * t * beta2 ** t / bc2
                if n_sma >= 5:
                    r = math.sqrt(bc2 * (n_sma - 4) / (n_max - 4) * (n_sma - 2) / n_sma * n_max / (n_max - 2)) / bc1
                    p.addcdiv_(m, s.sqrt().add_(eps), value=-lr * r)
                elif group["degenerated_to_sgd"]:
                    p.add_(m, alpha=-lr / bc1)


class AdEMAMixRef(torch.optim.Optimizer):
    """AdEMAMix (Pagliardini et al. 2024) as its authors' PyTorch optimizer
    steps one tensor: m1 = beta1 m1 + (1 - beta1) g, m2 = beta3_t m2 +
    (1 - beta3_t) g, v = beta2 v + (1 - beta2) g^2, u = (m1 / bc1 + alpha_t m2)
    / (sqrt(v) / sqrt(bc2) + eps) + wd p, p -= lr u; alpha_t rises linearly
    from 0 over alpha_warmup steps, beta3_t from beta1 to beta3 linearly in
    half-life over beta3_warmup steps (0: no warmup)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999, 0.9999), alpha=2.0, alpha_warmup=0, beta3_warmup=0,
                 eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, alpha=alpha, alpha_warmup=alpha_warmup,
                                      beta3_warmup=beta3_warmup, eps=eps, weight_decay=weight_decay))

    @staticmethod
    def _half_life(beta):
        return math.log(0.5) / math.log(beta + 1e-8) - 1

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2, beta3 = group["betas"]
            for p in group["params"]:
                st = self.state[p]
                if not st:
                    st["t"] = 0
                    st["m1"], st["m2"], st["v"] = (torch.zeros_like(p) for _ in range(3))
                st["t"] += 1
                t, g = st["t"], p.grad
                alpha, b3 = group["alpha"], beta3
                if t < group["alpha_warmup"]:
                    alpha = t / group["alpha_warmup"] * alpha
                if t < group["beta3_warmup"]:
                    a = t / group["beta3_warmup"]
                    h = (1 - a) * self._half_life(beta1) + a * self._half_life(beta3)
                    b3 = math.pow(0.5, 1 / (h + 1))
                st["m1"].mul_(beta1).add_(g, alpha=1 - beta1)
                st["m2"].mul_(b3).add_(g, alpha=1 - b3)
                st["v"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
                denom = (st["v"].sqrt() / math.sqrt(1 - beta2 ** t)).add_(group["eps"])
                u = (st["m1"].div(1 - beta1 ** t) + alpha * st["m2"]) / denom
                u.add_(p, alpha=group["weight_decay"])
                p.add_(-group["lr"] * u)


class LambRef(torch.optim.Optimizer):
    """LAMB (You et al. 2020, Algorithm 2) as timm's Lamb and apex's FusedLAMB
    step one tensor, with max_grad_norm off: m = lerp(m, g, 1 - beta1) (or
    beta1 m + g without grad averaging), v = beta2 v + (1 - beta2) g^2,
    u = (m / bc1) / (sqrt(v) / sqrt(bc2) + eps) + wd p, and p -= lr r u with
    the trust ratio r = ||p|| / ||u|| where both are > 0 (else 1), at most 1
    with trust_clip, and r = 1 where wd is 0 unless always_adapt."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, bias_correction=True,
                 grad_averaging=True, trust_clip=False, always_adapt=False, filter_bias_and_bn=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      bias_correction=bias_correction, grad_averaging=grad_averaging,
                                      trust_clip=trust_clip, always_adapt=always_adapt,
                                      filter_bias_and_bn=filter_bias_and_bn))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                # timm's create_optimizer: no decay for 1-D tensors (biases, norms)
                wd = 0.0 if group["filter_bias_and_bn"] and p.ndim <= 1 else group["weight_decay"]
                st = self.state[p]
                if not st:
                    st["t"], st["m"], st["v"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                st["t"] += 1
                t, m, v, g = st["t"], st["m"], st["v"], p.grad
                bc1 = 1 - beta1 ** t if group["bias_correction"] else 1.0
                bc2 = 1 - beta2 ** t if group["bias_correction"] else 1.0
                if group["grad_averaging"]:
                    m.lerp_(g, 1 - beta1)
                else:
                    m.mul_(beta1).add_(g)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                u = (m / bc1) / (v.sqrt() / math.sqrt(bc2) + group["eps"])
                if wd != 0:
                    u.add_(p, alpha=wd)
                if wd != 0 or group["always_adapt"]:
                    pn, un = p.norm(), u.norm()
                    r = pn / un if pn > 0 and un > 0 else torch.ones((), dtype=p.dtype)
                    if group["trust_clip"]:
                        r = torch.clamp(r, max=1.0)
                    u.mul_(r)
                p.add_(u, alpha=-group["lr"])


class LarsRef(torch.optim.Optimizer):
    """LARS (You et al. 2017) as timm's Lars steps one tensor: where
    weight_decay != 0 or always_adapt, r = trust_coeff ||p|| / (||g|| +
    wd ||p|| + eps) where both norms are > 0 (else 1), with trust_clip
    min(r / lr, 1), and d = (g + wd p) r (elsewhere d = g); then
    torch.optim.SGD's momentum on d and p -= lr d."""

    def __init__(self, params, lr=1.0, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 trust_coeff=1e-3, eps=1e-8, trust_clip=False, always_adapt=False, filter_bias_and_bn=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, trust_coeff=trust_coeff, eps=eps, trust_clip=trust_clip,
                                      always_adapt=always_adapt, filter_bias_and_bn=filter_bias_and_bn))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            mom = group["momentum"]
            for p in group["params"]:
                wd = 0.0 if group["filter_bias_and_bn"] and p.ndim <= 1 else group["weight_decay"]
                d = p.grad
                if wd != 0 or group["always_adapt"]:
                    pn, gn = p.norm(), d.norm()
                    r = group["trust_coeff"] * pn / (gn + pn * wd + group["eps"])
                    if not (pn > 0 and gn > 0):
                        r = torch.ones((), dtype=p.dtype)
                    if group["trust_clip"]:
                        r = torch.clamp(r / group["lr"], max=1.0)
                    d = d.add(p, alpha=wd).mul_(r)
                if mom != 0:
                    st = self.state[p]
                    if "buf" not in st:
                        st["buf"] = d.clone()
                    else:
                        st["buf"].mul_(mom).add_(d, alpha=1 - group["dampening"])
                    d = d.add(st["buf"], alpha=mom) if group["nesterov"] else st["buf"]
                p.add_(d, alpha=-group["lr"])


def settings_text(s):
    out = []
    for k, v in s.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append(f"{k}={v}")
    return ",".join(out)


class no_bf16:
    """torch.optim.Muon's Newton-Schulz runs in bfloat16 (grad.bfloat16() in
    PyTorch 2.9, grad.to(dtype=torch.bfloat16, copy=True) later); within
    this block either cast returns a float64 copy, so torch's own code runs
    in float64 like every other reference here."""

    def __enter__(self):
        self.orig, self.orig_to = torch.Tensor.bfloat16, torch.Tensor.to
        orig_to = self.orig_to

        def to(t, *a, **k):
            if k.get("dtype") is torch.bfloat16:
                k["dtype"] = t.dtype
            a = tuple(t.dtype if x is torch.bfloat16 else x for x in a)
            return orig_to(t, *a, **k)

        torch.Tensor.bfloat16 = lambda t, *a, **k: t.clone()
        torch.Tensor.to = to

    def __exit__(self, *exc):
        torch.Tensor.bfloat16, torch.Tensor.to = self.orig, self.orig_to
        return False


def torch_run(ctor, kw, shape, init, grads, clip, warmup=0, bf16=False):
    """warmup W: optbench's train.schedule=warmup, lr (i + 1) / W at step i < W,
    as torch's LinearLR(start_factor=1/W, total_iters=W-1). bf16: Muon as it
    runs, float32 parameters and its bfloat16 Newton-Schulz (ns_dtype=bf16)."""
    dtype = torch.float32 if bf16 else torch.float64
    p = torch.nn.Parameter(torch.tensor(init, dtype=dtype).reshape(shape))
    o = ctor([p], **kw)
    sched = torch.optim.lr_scheduler.LinearLR(o, start_factor=1 / warmup, total_iters=warmup - 1) if warmup else None
    if hasattr(o, "train"):
        o.train()  # schedule-free: the parameters hold y
    rows = []
    for g in grads:
        p.grad = torch.tensor(g, dtype=dtype).reshape(shape)
        if clip > 0:
            torch.nn.utils.clip_grad_norm_([p], clip)
        if bf16:
            o.step()
        else:
            with no_bf16():
                o.step()
        if sched:
            sched.step()
        rows.append(p.detach().reshape(-1).numpy().copy())
    return rows


def write_rows(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        for r in rows:
            w.writerow([repr(float(x)) for x in r])


def read_rows(path):
    with open(path, newline="") as f:
        return [[float(x) for x in row] for row in csv.reader(f) if row]


def draw_full_case(rng, opt):
    """One random case of opt: its shape, initial parameters, gradients,
    optbench settings text and torch's parameters after every step."""
    matrix = opt == "muon" or rng.random() < 0.5
    shape = (rng.randint(2, 12), rng.randint(2, 12)) if matrix else (rng.randint(1, 40),)
    if opt == "adafactor" and rng.random() < 0.3:  # factored over the last two dimensions
        shape = (rng.randint(2, 4), rng.randint(1, 3), rng.randint(2, 6), rng.randint(1, 6))
    n = int(np.prod(shape))
    steps = rng.randint(3, 25)
    init = f32([rng.gauss(0, 1) for _ in range(n)])
    grads = draw_grads(rng, steps, n)
    s, ctor, kw = draw_case(rng, opt)
    if opt in FILTERED and rng.random() < 0.25:
        s["filter_bias_and_bn"] = True
    if s.get("filter_bias_and_bn") and len(shape) <= 1 and ctor not in (LambRef, LarsRef):
        kw["weight_decay"] = 0.0  # timm's create_optimizer: a 1-D tensor's group has no decay
    clip = pick(rng, 0.0, 0.0, 0.5, 5.0) if opt != "muon" else 0.0
    bf16 = s.get("ns_dtype") == "bf16"
    ref = torch_run(ctor, kw, shape, init, grads, clip, s.get("train.warmup_steps", 0), bf16)
    settings = settings_text(s) + (f",train.clip_norm={clip}" if clip > 0 else "")
    return "x".join(str(d) for d in shape), init, grads, settings, ref


def short(v, exact):
    """exact: the shortest text that reads back as float32 v (an input);
    else 8 significant digits (torch's float64 answer, within 5e-8 of itself,
    which the check compares at 1e-4)."""
    v = float(v)
    if not exact:
        return f"{v:.8g}"
    for digits in range(6, 10):
        t = f"{v:.{digits}g}"
        if np.float32(float(t)) == np.float32(v):
            return t
    return f"{v:.9g}"


RECORD_STEPS = 10  # a recorded case keeps its first steps (a smaller file)


def record(a, opts):
    """--record FILE: the cases and torch's answers, for
    tests/cli/torch_recorded_check.py to replay without PyTorch."""
    cases = []
    for opt in opts:
        rng = random.Random(f"{a.seed}:{opt}")
        for k in range(a.per_opt.get(opt, a.cases)):
            shape, init, grads, settings, ref = draw_full_case(rng, opt)
            grads, ref = grads[:RECORD_STEPS], ref[:RECORD_STEPS]  # the case's first steps

            def rows(rs, exact=True):
                return "[" + ",".join("[" + ",".join(short(v, exact) for v in r) + "]" for r in rs) + "]"
            cases.append(f'{{"optimizer":"{opt}","case":{k},"shape":"{shape}","settings":"{settings}",\n'
                         f' "init":{rows([init])[1:-1]},\n "grads":{rows(grads)},\n "expected":{rows(ref, False)}}}')
    with open(a.record, "w") as f:
        f.write(f'{{"torch":"{torch.__version__}","seed":{a.seed},"cases":[\n' + ",\n".join(cases) + "]}\n")
    print(f"{len(cases)} cases of {', '.join(opts)} (torch {torch.__version__}, seed {a.seed}) written to {a.record}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("optbench", nargs="?")
    ap.add_argument("--cases", type=int, default=40, help="cases per optimizer (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=None,
                    help="optimizers, comma-separated; OPT:N runs N cases of OPT in place of --cases")
    ap.add_argument("--keep", default=None)
    ap.add_argument("--record", default=None, metavar="FILE",
                    help="write the cases and torch's answers to FILE (JSON) instead of running optbench")
    a = ap.parse_args()
    if not a.optbench and not a.record:
        ap.error("give the optbench program (or --record FILE)")
    opts = ["sgd", "adam", "adamw", "nadam", "radam", "adamax", "adagrad", "adadelta", "rmsprop", "rprop", "asgd",
            "lamb", "lars", "ademamix", "adabelief"]
    if hasattr(torch.optim, "Muon"):
        opts.append("muon")
    if hasattr(torch.optim, "Adafactor"):
        opts.append("adafactor")
    if schedulefree is not None:
        opts += ["adamw_sf", "sgd_sf"]
    a.per_opt = {}
    if a.only:
        only = []
        for item in a.only.split(","):
            name, _, count = item.partition(":")
            only.append(name)
            if count:
                a.per_opt[name] = int(count)
        missing = [o for o in only if o not in opts]
        if missing:
            ap.error(f"--only: {', '.join(missing)} not available here (torch {torch.__version__}"
                     f"{'' if schedulefree else ', no schedulefree'}): {', '.join(opts)}")
        opts = [o for o in opts if o in only]
    torch.manual_seed(0)
    if a.record:
        return record(a, opts)
    print(f"torch {torch.__version__}: {a.cases} random cases per optimizer, seed {a.seed}, tol {TOL:g}")
    total = failed = 0
    for opt in opts:
        rng = random.Random(f"{a.seed}:{opt}")
        worst, worst_case = 0.0, ""
        nfail = 0
        n_bf16 = matched_bf16 = 0
        for k in range(a.per_opt.get(opt, a.cases)):
            shape_text, init, grads, settings, ref = draw_full_case(rng, opt)
            bf16 = "ns_dtype=bf16" in settings
            name = f"{opt}-{k}"
            with tempfile.TemporaryDirectory() as tmp:
                write_rows(os.path.join(tmp, "init.csv"), [init])
                write_rows(os.path.join(tmp, "grads.csv"), grads)
                out = os.path.join(tmp, "out.csv")
                cmd = [a.optbench, "replay", "--optimizer", opt, "--shape", shape_text, "--init",
                       os.path.join(tmp, "init.csv"), "--grads", os.path.join(tmp, "grads.csv"), "--out", out,
                       "--set", settings]
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                err, where, far = 0.0, None, 0.0
                if r.returncode != 0:
                    err, where = float("inf"), f"exit {r.returncode}: {r.stderr.strip()[-200:]}"
                else:
                    got = read_rows(out)
                    for t, (x, y) in enumerate(zip(got, ref)):
                        scale = max(1.0, float(np.max(np.abs(y))))
                        d = np.abs(np.array(x) - y) / scale
                        e = float(np.max(d))
                        far = max(far, float(np.mean(d > BF16_NEAR)))
                        if not e <= err:
                            err, where = e, f"step {t + 1}"
                    if len(got) != len(ref):
                        err, where = float("inf"), f"{len(got)} rows, expected {len(ref)}"
                total += 1
                if bf16:
                    n_bf16 += 1
                    matched_bf16 += far == 0 and err < float("inf")
                if not err <= (TOL_BF16 if bf16 else TOL):
                    nfail += 1
                    print(f"FAIL {name}: scaled error {err:.2e} at {where}: shape {shape_text}, {settings}")
                    if a.keep:
                        d = os.path.join(a.keep, name)
                        os.makedirs(d, exist_ok=True)
                        for fn in ("init.csv", "grads.csv"):
                            shutil.copy(os.path.join(tmp, fn), d)
                        write_rows(os.path.join(d, "expected.csv"), ref)
                        with open(os.path.join(d, "command.txt"), "w") as f:
                            f.write(" ".join(cmd) + "\n")
                if err > worst or worst_case == "":
                    worst, worst_case = err, f"{name} ({shape_text}, {settings})"
        bf16_short = n_bf16 > 0 and matched_bf16 < BF16_MATCHED * n_bf16
        if bf16_short:
            nfail += 1
            print(f"FAIL {opt}: ns_dtype=bf16 matched torch within {BF16_NEAR:g} in {matched_bf16} of {n_bf16} "
                  f"cases, fewer than {BF16_MATCHED:.0%}: not torch's bfloat16 iteration")
        failed += nfail
        print(f"{'ok  ' if nfail == 0 else 'FAIL'} {opt:9s} {a.per_opt.get(opt, a.cases)} cases, worst scaled error {worst:.2e}: "
              f"{worst_case}")
        if n_bf16:
            print(f"     {opt} with ns_dtype=bf16 (tol {TOL_BF16:g}): {matched_bf16} of {n_bf16} cases within "
                  f"{BF16_NEAR:g} at every element and step")
    print(f"{total} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
