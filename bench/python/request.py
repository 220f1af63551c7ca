"""The request step.py runs: its schema (every key required, no other key accepted, each value checked) and the
checks of the request directory's files against it (bench/python/README.md, "request.json"). A bad request is a
usage error: step.py exits 2 naming the bad or missing key or file, and writes no result.
"""

import json
import math
from pathlib import Path

import numpy as np
import torch
from muon import NS_DTYPES, SCALES

from model import SDPA_BACKENDS, GPTConfig

# implementation -> torch.compile mode (None: eager, no compile)
IMPLEMENTATIONS = {
    "python-eager": None,
    "python-compile": "default",
    "python-compile-max-autotune": "max-autotune",
    "python-compile-reduce-overhead": "reduce-overhead",
}
# optimizer -> torch.optim.AdamW's arguments that select it
OPTIMIZERS = {
    "forloop": dict(foreach=False, fused=False),
    "foreach": dict(foreach=True, fused=False),
    "fused": dict(foreach=False, fused=True),
}
# reduce-overhead's CUDA graph trees run a new function once, record it on the second call and replay from the
# third: those steps belong in the warm-up, as the C++ CUDA-graph step raises its warm-up for its capture. The floor
# is the implementation's on any device, since read_request checks the batches against it before a step exists.
REDUCE_OVERHEAD_WARMUP = 3


class UsageError(Exception):
    """A missing or invalid request: exit 2, no result."""


def integer(minimum, maximum=None):
    what = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    return (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum and (maximum is None or v <= maximum)
    ), what


def number(minimum, strictly=False):
    what = f"a number {'>' if strictly else '>='} {minimum}"
    return (
        lambda v: (
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and math.isfinite(v)
            and (v > minimum if strictly else v >= minimum)
        )
    ), what


def choice(*names):
    return (lambda v: v in names), "one of " + ", ".join(f'"{n}"' for n in names)


BOOLEAN = (lambda v: isinstance(v, bool)), "true or false"


class Nullable(dict):
    """A nested object that may also be null."""


DEVICE = (
    (lambda v: isinstance(v, str) and (v == "cpu" or v == "cuda" or (v.startswith("cuda:") and v[5:].isdigit()))),
    '"cpu", "cuda" or "cuda:N"',
)
REQUEST = {
    "implementation": choice(*IMPLEMENTATIONS),
    "device": DEVICE,
    "model": {
        "vocab_size": integer(1),
        "context_length": integer(1),
        "n_embd": integer(1),
        "n_head": integer(1),
        "n_layer": integer(1),
        "dropout": number(0),
        "qkv_bias": BOOLEAN,
        "dynamic_mask": BOOLEAN,
        "native_layers": BOOLEAN,
        "flash": BOOLEAN,
        "sdpa_backend": choice("auto", *SDPA_BACKENDS),
        "vocab_padding": BOOLEAN,
        "rotary": BOOLEAN,
        "qk_norm": BOOLEAN,
        "relu2": BOOLEAN,
        "zero_init_proj": BOOLEAN,
        "zero_init_head": BOOLEAN,
        "logit_softcap": BOOLEAN,
        "softcap": number(0, strictly=True),
    },
    "batch_size": integer(1),
    "seq_len": integer(1),
    "dropout_seed": integer(0, 2**64 - 1),
    "tf32": BOOLEAN,
    "bf16": BOOLEAN,
    "bf16_mode": choice("pure", "autocast"),
    "pinned_memory": BOOLEAN,
    "pinned_mode": choice("async", "blocking"),
    "optimizer": choice(*OPTIMIZERS),
    "adamw": {"lr": number(0), "beta1": number(0), "beta2": number(0), "eps": number(0), "weight_decay": number(0)},
    # null: AdamW over every parameter; an object: Muon over the blocks' matrices (muon.py), AdamW over the rest
    "muon": Nullable(
        {
            "lr": number(0),
            "momentum": number(0),
            "scale": choice(*SCALES),
            "ns_dtype": choice(*NS_DTYPES),
            # the Adam group Muon pairs with (bench/optim/muon.h's MuonOptions, record #8's by default)
            "adam_beta1": number(0),
            "adam_beta2": number(0),
            "adam_weight_decay": number(0),
            "embed_lr": number(0),
            "head_lr": number(0),
        }
    ),
    "timing": {
        "warmup": integer(0),
        "min_steps": integer(0),
        "max_steps": integer(1),
        "max_noise": number(0),
        "max_time_s": number(0, strictly=True),
        "check_every": integer(1),
    },
    "lr_schedule": {
        "kind": choice("constant", "cosine", "trapezoid"),
        "warmup_steps": integer(0),
        "decay_steps": integer(0),
        "min_ratio": number(0),
        "cooldown_steps": integer(0),
        "cooldown_fraction": number(0),
    },
    # null: measure throughput (timing); an object: train to a target validation loss (bench/measure/convergence.h)
    "target": Nullable(
        {
            "loss": number(0),
            "eval_every": integer(1),
            "eval_batches": integer(1),
            "max_steps": integer(1),
            # the declared horizon: every seed trains to it, crossed or not (null: none; docs/convergence.md)
            "step_budget": ((lambda v: v is None or integer(1)[0](v)), "null or an integer >= 1"),
            "max_time_s": number(0, strictly=True),
            "warmup": integer(0),
        }
    ),
    # --count-ops: steps counted by the profiler after the measured ones (op_counts.py); 0 with a target
    "count_steps": integer(0),
    "batches_rows": integer(1),
}


def check_keys(obj, spec, prefix=""):
    if not isinstance(obj, dict):
        raise UsageError(f"'{prefix.rstrip('.') or 'request'}' must be a JSON object")
    for key, rule in spec.items():
        name = prefix + key
        if key not in obj:
            raise UsageError(f"missing key '{name}'")
        if isinstance(rule, Nullable) and obj[key] is None:
            continue
        if isinstance(rule, dict):
            check_keys(obj[key], rule, name + ".")
        elif not rule[0](obj[key]):
            raise UsageError(f"'{name}' must be {rule[1]}, got {json.dumps(obj[key])}")
    unknown = sorted(set(obj) - set(spec))
    if unknown:
        raise UsageError(f"unknown key '{prefix}{unknown[0]}'")


def warmup_steps(request):
    """The warm-up that runs: reduce-overhead needs its CUDA graphs recorded before the measured steps."""
    warmup = request["target"]["warmup"] if request["target"] else request["timing"]["warmup"]
    if request["implementation"] == "python-compile-reduce-overhead":
        return max(warmup, REDUCE_OVERHEAD_WARMUP)
    return warmup


def required_warmup(request):
    """The warm-up steps that run whatever the time cap: reduce-overhead's recording, else the first step."""
    return REDUCE_OVERHEAD_WARMUP if request["implementation"] == "python-compile-reduce-overhead" else 1


def read_request(request_dir):
    """The validated request, the token stream (N,) uint16 and the window starts (rows, B) int64."""
    request_dir = Path(request_dir)
    if not request_dir.is_dir():
        raise UsageError(f"{request_dir} is not a directory")
    try:
        request = json.loads((request_dir / "request.json").read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {request_dir / 'request.json'}: {e}") from e
    check_keys(request, REQUEST)
    if request["muon"] and not request["muon"]["momentum"] < 1:
        raise UsageError(f"'muon.momentum' must be < 1, got {request['muon']['momentum']}")
    try:
        GPTConfig(**request["model"]).validate()
    except ValueError as e:
        raise UsageError(f"'model': {e}") from e
    B, T, timing, target = request["batch_size"], request["seq_len"], request["timing"], request["target"]
    if T > request["model"]["context_length"]:
        raise UsageError(f"'seq_len' {T} exceeds 'model.context_length' {request['model']['context_length']}")
    warmup_key = "target.warmup" if target else "timing.warmup"
    if request["implementation"] != "python-eager" and warmup_steps(request) < 1:
        raise UsageError(f"'{warmup_key}' must be at least 1 for {request['implementation']}: its first step compiles")
    rows, counted = request["batches_rows"], request["count_steps"]
    if target and counted:
        raise UsageError(f"'count_steps' {counted} counts a throughput run's steps: it must be 0 with a 'target'")
    if target:  # the warm-up is undone and training starts again from the first row
        if max(warmup_steps(request), target["max_steps"]) > rows:
            raise UsageError(
                f"'batches_rows' {rows} is fewer than the {warmup_steps(request)} warm-up or the "
                f"{target['max_steps']} training steps ('target.max_steps') could use"
            )
    elif warmup_steps(request) + timing["max_steps"] + counted > rows:
        raise UsageError(
            f"'batches_rows' {rows} is fewer than the {warmup_steps(request)} warm-up + "
            f"{timing['max_steps']} measured steps ('timing.max_steps') + {counted} counted ('count_steps') could use"
        )
    device = request["device"]
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise UsageError(f"'device' {device}: no CUDA device is available here")
        if torch.device(device).index is not None and torch.device(device).index >= torch.cuda.device_count():
            raise UsageError(f"'device' {device}: only {torch.cuda.device_count()} CUDA device(s) present")
    elif request["pinned_memory"]:
        raise UsageError("'pinned_memory' needs a CUDA device")

    if not (request_dir / "weights.safetensors").is_file():
        raise UsageError(f"{request_dir / 'weights.safetensors'} is missing")
    tokens_path, batches_path = request_dir / "tokens.bin", request_dir / "batches.bin"
    for path in (tokens_path, batches_path):
        if not path.is_file():
            raise UsageError(f"{path} is missing")
    size = tokens_path.stat().st_size
    if size < 4 or size % 2:
        raise UsageError(f"{tokens_path}: {size} bytes is not a stream of at least 2 uint16 tokens")
    tokens = np.memmap(tokens_path, dtype="<u2", mode="r")  # never all in memory: only the windows used are read
    if batches_path.stat().st_size != rows * B * 8:
        raise UsageError(
            f"{batches_path}: {batches_path.stat().st_size} bytes, expected batches_rows x batch_size "
            f"int64 = {rows} x {B} x 8 = {rows * B * 8}"
        )
    starts = np.fromfile(batches_path, dtype="<i8").reshape(rows, B)
    if starts.min() < 0 or starts.max() + T + 1 > len(tokens):
        raise UsageError(
            f"{batches_path}: window starts must lie in [0, {len(tokens) - T - 1}] for {len(tokens)} "
            f"tokens and windows of {T + 1}, got [{starts.min()}, {starts.max()}]"
        )
    used = tokens[starts[:, :, None] + np.arange(T + 1)]
    if used.max() >= request["model"]["vocab_size"]:
        raise UsageError(
            f"{tokens_path}: token id {used.max()} is outside the vocabulary of {request['model']['vocab_size']}"
        )
    val_tokens = None
    if target:
        val_path = request_dir / "val_tokens.bin"
        if not val_path.is_file():
            raise UsageError(f"{val_path} is missing ('target' trains to a validation loss)")
        val_tokens = np.fromfile(val_path, dtype="<u2")
        if len(val_tokens) and val_tokens.max() >= request["model"]["vocab_size"]:
            raise UsageError(
                f"{val_path}: token id {val_tokens.max()} is outside the vocabulary of {request['model']['vocab_size']}"
            )
    return request, tokens, starts, val_tokens
