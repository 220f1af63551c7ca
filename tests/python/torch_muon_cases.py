"""Writes tests/fixtures/torch_muon_cases.json: what torch.optim.Muon (the pinned torch's own) makes of a few matrices
over two steps of fixed gradients. tests/bench/optim/muon_test.cpp holds bench/optim/muon.cpp's Muon to it, and
tests/python/test_torch_muon_cases.py holds bench/python/muon.py's to it and regenerates it, so its numbers are
torch's as measured, not typed.

    $(scripts/setup.sh --python) tests/python/torch_muon_cases.py      # rewrite the fixture

The matrices are the shapes the engine's step meets: a tall one (its rate x2 under sqrt_out_over_in), a wide one of
the same shape once transposed (one shape group in the C++ step), a square one, and a fused QKV (3 row blocks,
orthogonalised separately). torch.optim.Muon cannot split a parameter into blocks, so it steps each block as a
parameter of its own; the fixture records the fused matrix whole.

Where torch.optim.Muon and the engine's Muon may differ, and so how close each case must be:
- torch.optim.Muon runs Newton-Schulz in bf16 only (`grad.bfloat16()`): the engine's side runs it in bf16 too.
- Its momentum is the EMA form (buf.lerp_(g, 1 - mu), update g.lerp(buf, mu)): (1 - mu) times the records' sum form
  (buf = mu buf + g, u = g + mu buf) that the engine runs. Newton-Schulz normalises the scale away, but the bf16 cast
  rounds (1 - mu) u otherwise than u unless 1 - mu is a power of two. At mu = 0.75 it is (1/4): the two casts see the
  same numbers up to float32's last bit, and the steps agree to the bit on an AVX-512 CPU (AMX) and with ATen and
  oneDNN at AVX2; ATen's scalar kernels (ATEN_CPU_CAPABILITY=default) sum the bf16 GEMMs in another order, 2.8e-3 of
  the fused QKV's update away from the same inputs. Tolerance 5e-3 of each matrix's update (Frobenius): a coefficient
  off by 1e-4 moves it 1e-2 or more, a Newton-Schulz step more or fewer 0.3, the fused QKV orthogonalised whole 0.5.
- At the records' mu = 0.95 the rounding differs: up to 2.4e-2 of an update, measured. Tolerance 5e-2, bf16's class
  (tests/support.h's kBf16): it still catches a step more or fewer (0.3), the QKV whole (0.5), mu 0.9 (0.075).
- adjust_lr_fn "original", sqrt(max(1, out / in)), is the engine's sqrt_out_over_in; "match_rms_adamw",
  0.2 sqrt(max(out, in)), is sqrt_max_dim (records #4-#7) at a fifth of the rate, so that case gives torch 5 x lr.
  The engine's `none` (record #3) has no torch spelling.
- weight_decay 0 (the records' Muon has none; torch's default is 0.1), Nesterov on.
"""

import inspect
import json
import math
import sys
from pathlib import Path

import torch

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "torch_muon_cases.json"
# (name, (rows, cols), row blocks)
MATRICES = [("tall", (32, 8), 1), ("wide", (8, 32), 1), ("square", (8, 8), 1), ("fused_qkv", (24, 8), 3)]
STEPS = 2  # the second step's momentum buffer holds the first gradient
MUON_LR = 0.02  # the engine's --muon-lr default (records #8-#10)
CASES = [
    {
        "name": "exact_scaling",
        "momentum": 0.75,
        "muon_scale": "sqrt_out_over_in",
        "adjust_lr_fn": "original",
        "torch_lr": MUON_LR,
        "tolerance": 5e-3,
    },
    {
        "name": "records_momentum",
        "momentum": 0.95,
        "muon_scale": "sqrt_out_over_in",
        "adjust_lr_fn": "original",
        "torch_lr": MUON_LR,
        "tolerance": 5e-2,
    },
    {
        "name": "match_rms_adamw",
        "momentum": 0.75,
        "muon_scale": "sqrt_max_dim",
        "adjust_lr_fn": "match_rms_adamw",
        "torch_lr": 5 * MUON_LR,  # 0.2 x 5 = 1
        "tolerance": 5e-3,
    },
]


def tensors(document):
    """(initial, gradients) as the document holds them, float32 tensors: the inputs the fixture's steps were made from."""
    matrices = document["matrices"]
    initial = [torch.tensor(m["initial"]).view(m["shape"]) for m in matrices]
    steps = len(matrices[0]["gradients"])
    return initial, [[torch.tensor(m["gradients"][k]).view(m["shape"]) for m in matrices] for k in range(steps)]


def float32s(t):
    """A float32 tensor's values, each written with the 9 significant digits that give it back exactly."""
    return [float(f"{x:.9g}") for x in t.flatten().tolist()]


def defaults():
    """torch.optim.Muon's Newton-Schulz defaults, from its signature: the records' coefficients and steps, its eps."""
    parameters = inspect.signature(torch.optim.Muon).parameters
    return {name: parameters[name].default for name in ("ns_coefficients", "ns_steps", "eps")}


def inputs():
    """Each matrix's initial values and its gradient at each step, N(0, 1) from a generator of their own."""
    generator = torch.Generator().manual_seed(0)
    initial = [torch.randn(shape, generator=generator) for _, shape, _ in MATRICES]
    gradients = [[torch.randn(shape, generator=generator) for _, shape, _ in MATRICES] for _ in range(STEPS)]
    return initial, gradients


def blocks_of(t, blocks):
    return list(t.split(t.size(0) // blocks))


def torch_muon_steps(case, initial, gradients):
    """STEPS of torch.optim.Muon as the case configures it, each row block a parameter; the matrices afterwards."""
    params = [b.clone() for t, (_, _, blocks) in zip(initial, MATRICES) for b in blocks_of(t, blocks)]
    muon = torch.optim.Muon(
        params,
        lr=case["torch_lr"],
        weight_decay=0.0,
        momentum=case["momentum"],
        nesterov=True,
        adjust_lr_fn=case["adjust_lr_fn"],
    )
    for step in gradients:
        grads = [b.clone() for g, (_, _, blocks) in zip(step, MATRICES) for b in blocks_of(g, blocks)]
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        muon.step()
    final, at = [], 0
    for _, _, blocks in MATRICES:
        final.append(torch.cat(params[at : at + blocks]))
        at += blocks
    return final


def cases(given=None):
    """The fixture's document, from `given` (initial, gradients) or inputs()."""
    initial, gradients = given or inputs()
    return {
        "about": (
            "torch.optim.Muon's steps on fixed gradients, written by tests/python/torch_muon_cases.py (its "
            "docstring says why each tolerance): each case's final matrices after two steps from the same initial "
            "values and gradients, with its momentum, the engine's shape rule and torch's adjust_lr_fn and rate for "
            "it, and the tolerance on ||update - torch's update|| / ||torch's update|| per matrix. Newton-Schulz in "
            "bf16 (torch.optim.Muon's only dtype), weight decay 0, Nesterov. Values are float32, in row-major order."
        ),
        "torch": torch.__version__.split("+")[0],  # the pin (requirements), not the wheel's build
        **defaults(),
        "muon_lr": MUON_LR,
        "matrices": [
            {
                "name": name,
                "shape": list(shape),
                "blocks": blocks,
                "initial": float32s(t),
                "gradients": [float32s(step[i]) for step in gradients],
            }
            for i, ((name, shape, blocks), t) in enumerate(zip(MATRICES, initial))
        ],
        "cases": [
            {**case, "final": [float32s(t) for t in torch_muon_steps(case, initial, gradients)]} for case in CASES
        ],
    }


def relative_update_error(final, expected, initial):
    """||final - expected|| / ||expected - initial||, in float64: how far a step lands from torch's, per its size."""
    final, expected, initial = (torch.as_tensor(x, dtype=torch.float32).double() for x in (final, expected, initial))
    return ((final - expected).norm() / (expected - initial).norm()).item()


def dumps(value, indent=""):
    """JSON with a list of numbers on one line (a matrix's values), everything else one item a line."""
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and value and not all(isinstance(x, (int, float)) for x in value):
        return "[\n" + ",\n".join(inner + dumps(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


if __name__ == "__main__":
    if len(sys.argv) != 1:
        sys.exit(f"usage: {sys.argv[0]} (rewrites {FIXTURE.name})")
    document = cases()
    assert all(math.isfinite(x) for c in document["cases"] for f in c["final"] for x in f)
    FIXTURE.write_text(dumps(document) + "\n")
    print(f"wrote {FIXTURE}")
