"""The request step.py runs (bench/python/README.md, "request.json"): the configuration exactly as a result records it
(`config`, written by the one serialiser, ablations/run/result_document.h's config_json, and validated here against
results/schema.json's `config`, whose bounds and choices come from the flags' declarations), and the few values the
engine resolves as it runs. This file keeps no defaults and no bounds of its own: what it adds are the checks across
keys and files. A bad request is a usage error: step.py exits 2 naming the bad or missing key or file, and writes no
result.

read_request returns the settings the step reads (`settings`), taken from the config section in one place.
"""

import json
from functools import cache
from pathlib import Path

import numpy as np
import torch
from jsonschema import Draft202012Validator
from muon import NS_DTYPES

from model import GPTConfig

SCHEMA = Path(__file__).resolve().parents[2] / "results" / "schema.json"
# implementation -> torch.compile mode (None: eager, no compile)
IMPLEMENTATIONS = {
    "python-eager": None,
    "python-compile": "default",
    "python-compile-max-autotune": "max-autotune",
    "python-compile-reduce-overhead": "reduce-overhead",
}
# config.optimizer -> torch.optim.AdamW's arguments that select it. torch::optim::AdamW (reference) has no Python twin:
# its row runs torch.optim's own loop, and its result says so.
OPTIMIZERS = {
    "forloop": dict(foreach=False, fused=False),
    "foreach": dict(foreach=True, fused=False),
    "fused": dict(foreach=False, fused=True),
}
PYTHON_OPTIMIZER = {"reference": "forloop"}
# The flags that switch a part of the model (bench/python/model.py's GPTConfig): on while in config.flags.
MODEL_FLAGS = (
    "dynamic_mask",
    "native_layers",
    "flash",
    "vocab_padding",
    "rotary",
    "qk_norm",
    "relu2",
    "zero_init_proj",
    "logit_softcap",
)
# The config keys the step reads that results written before them may lack (the schema accepts those results): a
# request must have them all.
READS = {
    (): ["lr", "weight_decay", "adamw_beta1", "adamw_beta2", "adamw_eps", "lr_schedule", "target", "sdpa_backend"]
    + ["pinned_mode", "zero_init_head", "softcap", "muon_lr", "muon_momentum", "muon_scale", "muon_adam_beta1"]
    + ["muon_adam_beta2", "muon_adam_wd", "muon_embed_lr", "muon_head_lr"],
    ("model",): ["dropout", "qkv_bias"],
    ("timing",): ["check_every"],
    ("target",): ["step_budget"],
}
# reduce-overhead's CUDA graph trees run a new function once, record it on the second call and replay from the
# third: those steps belong in the warm-up, as the C++ CUDA-graph step raises its warm-up for its capture. The floor
# is the implementation's on any device, since read_request checks the batches against it before a step exists.
REDUCE_OVERHEAD_WARMUP = 3


class UsageError(Exception):
    """A missing or invalid request: exit 2, no result."""


@cache
def config_validator():
    """results/schema.json's `config`, with the keys the step reads required."""
    schema = json.loads(json.dumps(json.loads(SCHEMA.read_text())["properties"]["config"]))
    for path, keys in READS.items():
        node = schema
        for key in path:
            node = node["properties"][key]
        node["required"] = sorted(set(node.get("required", [])) | set(keys))
    return Draft202012Validator(schema)


def check_config(config):
    errors = sorted(config_validator().iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = ".".join(["config", *map(str, e.absolute_path)])
        if e.validator == "required":
            missing = next(k for k in e.validator_value if k not in e.instance)
            raise UsageError(f"missing key '{where}.{missing}'")
        raise UsageError(f"'{where}': {e.message}")


def integer(minimum, maximum=None):
    what = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    return (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum and (maximum is None or v <= maximum)
    ), what


# The request around the config section: what only the engine knows as it runs.
REQUEST = {
    "implementation": ((lambda v: v in IMPLEMENTATIONS), "one of " + ", ".join(f'"{n}"' for n in IMPLEMENTATIONS)),
    "config": ((lambda v: True), "the result's config section"),
    # each step's dropout seed (bench/step/train_state.h: dropout_seed)
    "dropout_seed": integer(0, 2**64 - 1),
    # with muon: the dtype Newton-Schulz runs in on this device, config.muon_ns_dtype resolved; null without muon
    "ns_dtype": ((lambda v: v is None or v in NS_DTYPES), "null or one of " + ", ".join(NS_DTYPES)),
    # --count-ops: steps counted by the profiler after the measured ones (op_counts.py); 0 with a target
    "count_steps": integer(0),
    "batches_rows": integer(1),
}


def check_request(request):
    if not isinstance(request, dict):
        raise UsageError("the request must be a JSON object")
    for key, (valid, what) in REQUEST.items():
        if key not in request:
            raise UsageError(f"missing key '{key}'")
        if not valid(request[key]):
            raise UsageError(f"'{key}' must be {what}, got {json.dumps(request[key])}")
    unknown = sorted(set(request) - set(REQUEST))
    if unknown:
        raise UsageError(f"unknown key '{unknown[0]}'")
    check_config(request["config"])


def settings(request):
    """What the step reads, from the config section: the model's layout from the flags in effect and their options,
    the optimizer (Muon's groups from its options), the timing, the schedule and the target."""
    c, flags = request["config"], set(request["config"]["flags"])
    model = {k: c["model"][k] for k in ("vocab_size", "context_length", "n_embd", "n_head", "n_layer", "dropout")}
    model.update({flag: flag in flags for flag in MODEL_FLAGS}, qkv_bias=c["model"]["qkv_bias"])
    model.update(sdpa_backend=c["sdpa_backend"] or "auto", zero_init_head=bool(c["zero_init_head"]))
    model.update(softcap=c["softcap"])  # null while logit_softcap is off
    muon = None
    if "muon" in flags:
        muon = {
            "lr": c["muon_lr"],
            "momentum": c["muon_momentum"],
            "scale": c["muon_scale"],
            "ns_dtype": request["ns_dtype"],
            "adam_beta1": c["muon_adam_beta1"],
            "adam_beta2": c["muon_adam_beta2"],
            "adam_weight_decay": c["muon_adam_wd"],
            "embed_lr": c["muon_embed_lr"],
            "head_lr": c["muon_head_lr"],
        }
    return {
        "implementation": request["implementation"],
        "device": c["device"],
        "model": model,
        "batch_size": c["batch_size"],
        "seq_len": c["seq_len"],
        "dropout_seed": request["dropout_seed"],
        "tf32": "tf32" in flags,
        "bf16": "bf16" in flags,
        "bf16_mode": c["bf16_mode"],
        "pinned_memory": "pinned_memory" in flags,
        "pinned_mode": c["pinned_mode"],
        "optimizer": PYTHON_OPTIMIZER.get(c["optimizer"], c["optimizer"]),
        "adamw": {
            "lr": c["lr"],
            "beta1": c["adamw_beta1"],
            "beta2": c["adamw_beta2"],
            "eps": c["adamw_eps"],
            "weight_decay": c["weight_decay"],
        },
        "muon": muon,
        "timing": c["timing"],
        "lr_schedule": c["lr_schedule"],
        "target": c["target"],
        "count_steps": request["count_steps"],
        "batches_rows": request["batches_rows"],
    }


def warmup_steps(request):
    """The warm-up that runs: reduce-overhead needs its CUDA graphs recorded before the measured steps."""
    warmup = request["target"]["warmup_steps"] if request["target"] else request["timing"]["warmup"]
    if request["implementation"] == "python-compile-reduce-overhead":
        return max(warmup, REDUCE_OVERHEAD_WARMUP)
    return warmup


def required_warmup(request):
    """The warm-up steps that run whatever the time cap: reduce-overhead's recording, else the first step."""
    return REDUCE_OVERHEAD_WARMUP if request["implementation"] == "python-compile-reduce-overhead" else 1


def not_json(constant):
    raise ValueError(f"{constant} is not a JSON number")


def read_request(request_dir):
    """The settings the step reads (`settings`) from the validated request, the token stream (N,) uint16, the window
    starts (rows, B) int64 and the validation stream (None without a target)."""
    request_dir = Path(request_dir)
    if not request_dir.is_dir():
        raise UsageError(f"{request_dir} is not a directory")
    try:
        request = json.loads((request_dir / "request.json").read_text(), parse_constant=not_json)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {request_dir / 'request.json'}: {e}") from e
    check_request(request)
    if "muon" in request["config"]["flags"] and request["ns_dtype"] is None:
        raise UsageError("'ns_dtype' must name the dtype Newton-Schulz runs in when muon is in 'config.flags'")
    request = settings(request)
    try:
        GPTConfig(**request["model"]).validate()
    except ValueError as e:
        raise UsageError(f"'config': {e}") from e
    B, T, timing, target = request["batch_size"], request["seq_len"], request["timing"], request["target"]
    if T > request["model"]["context_length"]:
        raise UsageError(
            f"'config.seq_len' {T} exceeds 'config.model.context_length' {request['model']['context_length']}"
        )
    warmup_key = "config.target.warmup_steps" if target else "config.timing.warmup"
    if request["implementation"] != "python-eager" and warmup_steps(request) < 1:
        raise UsageError(f"'{warmup_key}' must be at least 1 for {request['implementation']}: its first step compiles")
    rows, counted = request["batches_rows"], request["count_steps"]
    if target and counted:
        raise UsageError(
            f"'count_steps' {counted} counts a throughput run's steps: it must be 0 with a 'config.target'"
        )
    if target:  # the warm-up is undone and training starts again from the first row
        if max(warmup_steps(request), target["max_steps"]) > rows:
            raise UsageError(
                f"'batches_rows' {rows} is fewer than the {warmup_steps(request)} warm-up or the "
                f"{target['max_steps']} training steps ('config.target.max_steps') could use"
            )
    elif warmup_steps(request) + timing["max_steps"] + counted > rows:
        raise UsageError(
            f"'batches_rows' {rows} is fewer than the {warmup_steps(request)} warm-up + "
            f"{timing['max_steps']} measured steps ('config.timing.max_steps') + {counted} counted ('count_steps') "
            "could use"
        )
    device = request["device"]
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise UsageError(f"'config.device' {device}: no CUDA device is available here")
        if torch.device(device).index is not None and torch.device(device).index >= torch.cuda.device_count():
            raise UsageError(f"'config.device' {device}: only {torch.cuda.device_count()} CUDA device(s) present")
    elif request["pinned_memory"]:
        raise UsageError("'config.flags': pinned_memory needs a CUDA device")

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
