#!/usr/bin/env python3
"""Runs one stepwise configuration in PyTorch Python and writes its raw measurements.

    python bench/python/step.py REQUEST_DIR

REQUEST_DIR holds request.json, weights.safetensors, tokens.bin and batches.bin (and val_tokens.bin when training to
a target), written by the C++ harness; this writes REQUEST_DIR/result.json (formats: bench/python/README.md). The
step and its timing mirror bench/step/train_step.cpp and bench/measure/runner.cpp, training to a target loss mirrors
bench/measure/convergence.cpp; the statistics, MFU, loss checks and the convergence guard are left to the C++ side.
Exit status: 0 when result.json was written (a failed run is a result too), 2 for a bad request, 1 when not even
the result could be written.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `import model` as a script or a module

import contextlib  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from loader import Loader  # noqa: E402
from stats import StopRule, median_noise, should_stop, time_is_up  # noqa: E402
from torch.nn.attention import SDPBackend  # noqa: E402

from model import GPT, SDPA_BACKENDS, GPTConfig, cross_entropy, sdpa_pin  # noqa: E402

USAGE = 2
# implementation -> torch.compile mode (None: eager, no compile)
IMPLEMENTATIONS = {
    "python-eager": None,
    "python-compile": "default",
    "python-compile-max-autotune": "max-autotune",
    "python-compile-reduce-overhead": "reduce-overhead",
}
OPTIMIZERS = {
    "forloop": dict(foreach=False, fused=False),
    "foreach": dict(foreach=True, fused=False),
    "fused": dict(foreach=False, fused=True),
}
# reduce-overhead's CUDA graph trees run a new function once, record it on the second call and replay from the
# third: those steps belong in the warm-up, as the C++ CUDA-graph step raises its warm-up for its capture.
REDUCE_OVERHEAD_WARMUP = 3


class UsageError(Exception):
    """A missing or invalid request: exit 2, no result."""


class StepFailure(Exception):
    """A failure whose message is the whole reason (no exception type in front)."""


# ---------------------------------------------------------------- the request


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
    "timing": {
        "warmup": integer(0),
        "min_steps": integer(0),
        "max_steps": integer(1),
        "max_noise": number(0),
        "max_time_s": number(0, strictly=True),
        "check_every": integer(1),
    },
    "lr_schedule": {
        "kind": choice("constant", "cosine"),
        "warmup_steps": integer(0),
        "decay_steps": integer(0),
        "min_ratio": number(0),
    },
    # null: measure throughput (timing); an object: train to a target validation loss (bench/measure/convergence.h)
    "target": Nullable(
        {
            "loss": number(0),
            "eval_every": integer(1),
            "eval_batches": integer(1),
            "max_steps": integer(1),
            "max_time_s": number(0, strictly=True),
            "warmup": integer(0),
        }
    ),
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
    rows = request["batches_rows"]
    if target:  # the warm-up is undone and training starts again from the first row
        if max(warmup_steps(request), target["max_steps"]) > rows:
            raise UsageError(
                f"'batches_rows' {rows} is fewer than the {warmup_steps(request)} warm-up or the "
                f"{target['max_steps']} training steps ('target.max_steps') could use"
            )
    elif warmup_steps(request) + timing["max_steps"] > rows:
        raise UsageError(
            f"'batches_rows' {rows} is fewer than the {warmup_steps(request)} warm-up + "
            f"{timing['max_steps']} measured steps ('timing.max_steps') could use"
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


# ---------------------------------------------------------------- model, optimizer, precision


def load_weights(model, path):
    """Copies every parameter from the file by name; names and shapes must match exactly, else nothing loads."""
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    params = dict(model.named_parameters())
    problems = [f"missing {n}" for n in params if n not in tensors]
    problems += [f"unexpected {n}" for n in tensors if n not in params]
    problems += [
        f"shape of {n}: file {list(tensors[n].shape)}, model {list(p.shape)}"
        for n, p in params.items()
        if n in tensors and tensors[n].shape != p.shape
    ]
    if problems:
        raise StepFailure(f"{path.name} does not match the model's parameters: " + "; ".join(problems))
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(tensors[name])


def set_precision(tf32, device):
    """TF32 for CUDA float32 matmuls and convolutions, or IEEE (set explicitly either way, as the C++ Tf32Guard).
    CUDA only, as in C++: set_float32_matmul_precision would also switch oneDNN's CPU matmuls."""
    if device.type != "cuda":
        return
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def make_optimizer(model, request):
    a = request["adamw"]
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=a["lr"],
        betas=(a["beta1"], a["beta2"]),
        eps=a["eps"],
        weight_decay=a["weight_decay"],
        **OPTIMIZERS[request["optimizer"]],
    )
    # What torch.optim will run: fused, else foreach, else its single-tensor loop.
    ran = "fused" if optimizer.defaults["fused"] else "foreach" if optimizer.defaults["foreach"] else "forloop"
    return optimizer, ran


SDPA_NAMES = {
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.MATH: "math",
}


def sdpa_backend_used(config, batch_size, seq_len, dtype, device):
    """The kernel scaled_dot_product_attention dispatches to for the flash layout's real q/k/v (shape, strides,
    dtype, requires_grad, training dropout) under the pin; None for the reference layout. On CPU a training
    dropout > 0 rules the flash kernel out, so it is "math" there."""
    if not config.flash:
        return None
    B, T, C, H = batch_size, seq_len, config.n_embd, config.n_head
    qkv = torch.empty(B, T, 3, H, C // H, dtype=dtype, device=device, requires_grad=True)
    q, k, v = qkv.permute(2, 0, 3, 1, 4)  # (B, H, T, D) views, strided as the model's
    try:
        with sdpa_pin(config.sdpa_backend):
            choice_ = torch._fused_sdp_choice(q, k, v, None, config.dropout, True)
    except RuntimeError as e:  # the pinned kernel cannot run these inputs (SDPA would raise the same in the step)
        raise StepFailure(
            f"scaled_dot_product_attention pinned to {config.sdpa_backend} on {device.type} "
            f"{str(dtype).removeprefix('torch.')} with dropout {config.dropout}: "
            f"{str(e).splitlines()[0]}"
        ) from e
    backend = SDPBackend(choice_)
    return SDPA_NAMES.get(backend, backend.name.lower())


# ---------------------------------------------------------------- the step and its clock


class LrSchedule:
    """The rate of each optimizer step: bench/step/lr_schedule.cpp's lr_at (nanoGPT's get_lr), set before each
    optimizer step as bench/step/train_state.cpp's optimizer_step does. `steps` counts the optimizer steps taken."""

    def __init__(self, spec, base_lr):
        self.spec, self.base_lr, self.steps = spec, base_lr, 0

    def lr_at(self, step):
        s, base = self.spec, self.base_lr
        if s["kind"] == "constant":
            return base
        warmup, decay = s["warmup_steps"], s["decay_steps"]
        if step < warmup:
            return base * (step + 1) / (warmup + 1)
        min_lr = base * s["min_ratio"]
        if step >= decay or decay <= warmup:
            return min_lr
        ratio = (step - warmup) / (decay - warmup)
        coefficient = 0.5 * (1.0 + math.cos(math.pi * min(max(ratio, 0.0), 1.0)))
        return min_lr + coefficient * (base - min_lr)

    def apply(self, optimizer):
        if self.spec["kind"] != "constant":
            for group in optimizer.param_groups:
                group["lr"] = self.lr_at(self.steps)
        self.steps += 1


def autocast_context(autocast, device):
    return (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if autocast else contextlib.nullcontext


def make_step(forward, optimizer, loader, autocast, device, schedule, graphed=False):
    """batch -> copy -> forward -> loss -> backward -> optimizer step -> zero grads; nothing in it waits for the
    device. Returns the detached loss, still on the device."""
    cast = autocast_context(autocast, device)

    def step():
        if graphed:
            torch.compiler.cudagraph_mark_step_begin()  # a new iteration: the previous replay's outputs may go
        x, y = loader.next()  # (B, T) each, on the device
        with cast():
            _, loss = forward(x, y)
        loss.backward()
        schedule.apply(optimizer)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        # A replay overwrites its static outputs, so a graphed step hands out a copy (as the C++ CUDA-graph step).
        return loss.detach().clone() if graphed else loss.detach()

    return step


class CudaEventTimer:
    """A pair of events per step on the current (compute) stream; collect() waits for the last one only."""

    clock = "cuda_event"

    def __init__(self):
        self.pairs = []

    def start(self):
        self.pairs.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
        self.pairs[-1][0].record()

    def stop(self):
        self.pairs[-1][1].record()

    def collect(self):
        if not self.pairs:
            return []
        self.pairs[-1][1].synchronize()
        ms = [begin.elapsed_time(end) for begin, end in self.pairs]
        self.pairs = []
        return ms


class PerfCounterTimer:
    # time.perf_counter is CLOCK_MONOTONIC on Linux, the clock std::chrono::steady_clock reads: one name in the schema
    clock = "steady_clock"

    def __init__(self):
        self.pending = []

    def start(self):
        self.began = time.perf_counter()

    def stop(self):
        self.pending.append((time.perf_counter() - self.began) * 1e3)

    def collect(self):
        ms, self.pending = self.pending, []
        return ms


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---------------------------------------------------------------- memory


def proc_status_bytes():
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) * 1024  # kB
    return fields


def reset_peak_memory(device):
    """Starts the peak window of the measured steps; returns the `scope` the result states."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return "measured steps (CUDA caching allocator peaks reset after the warm-up)"
    before = proc_status_bytes()
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError as e:
        return f"whole process: resetting the peak RSS through /proc/self/clear_refs failed ({e})"
    after = proc_status_bytes()
    if after.get("VmHWM", 0) > after.get("VmRSS", 0) and after.get("VmHWM") == before.get("VmHWM"):
        return "whole process: writing /proc/self/clear_refs did not reset VmHWM"
    return "measured steps (VmHWM reset through /proc/self/clear_refs after the warm-up)"


def read_memory(device, scope):
    if device.type == "cuda":
        return {
            "kind": "cuda_caching_allocator",
            "peak_allocated_bytes": torch.cuda.max_memory_allocated(device),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(device),
            "current_allocated_bytes": torch.cuda.memory_allocated(device),
            "current_reserved_bytes": torch.cuda.memory_reserved(device),
            "peak_rss_bytes": None,
            "scope": scope,
        }
    status = proc_status_bytes()
    # As the C++ side: on a CPU the "reserved" columns are the process's peak and current RSS.
    return {
        "kind": "process_rss",
        "peak_allocated_bytes": None,
        "peak_reserved_bytes": status.get("VmHWM"),
        "current_allocated_bytes": None,
        "current_reserved_bytes": status.get("VmRSS"),
        "peak_rss_bytes": status.get("VmHWM"),
        "scope": scope,
    }


# ---------------------------------------------------------------- the measurement protocol


def record(records, ms, losses):
    """Pairs a chunk's step times with its losses (one device->host copy); returns the losses."""
    if not losses:
        return []
    values = torch.stack(losses).float().cpu().double().tolist()
    losses.clear()
    records.extend({"ms": m, "loss": v} for m, v in zip(ms, values))
    return values


def append(records, ms, losses, phase):
    """record(), and a non-finite loss fails the run."""
    first = len(records)
    record(records, ms, losses)
    for i in range(first, len(records)):
        if not math.isfinite(records[i]["loss"]):
            raise StepFailure(f"loss is {records[i]['loss']} at {phase} step {i}")


def measure(result, step, timer, timing, device, compiled=False, min_warmup=1, warmup=None):
    """Warm-up, then measured chunks of check_every steps until a stop reason; fills `result` as it goes, so a
    failure keeps what was measured. `warmup` overrides timing["warmup"]."""
    rule = StopRule(timing["min_steps"], timing["max_steps"], timing["max_noise"], timing["max_time_s"])
    warmup = timing["warmup"] if warmup is None else warmup
    losses = []

    # Warm-up: compilation, allocator growth, kernel heuristics. Recorded, never summarised. Bounded by max_time_s
    # once min_warmup steps ran; the first step's compile time is reported as compile_s and not counted.
    began, compile_s = time.perf_counter(), 0.0
    for i in range(warmup):
        if i >= min_warmup and time.perf_counter() - began - compile_s >= rule.max_time_s:
            break
        if i == 0:
            synchronize(device)  # the first step may sync: it is warm-up, and its wall time is the compile time
            first_began = time.perf_counter()
        timer.start()
        losses.append(step())
        timer.stop()
        if i == 0:
            synchronize(device)
            if compiled:
                compile_s = result["compile_s"] = time.perf_counter() - first_began
    append(result["warmup"], timer.collect(), losses, "warm-up")

    synchronize(device)
    scope = reset_peak_memory(device)
    began, times = time.perf_counter(), []
    while True:
        done = 0
        while done < timing["check_every"] and len(times) + done < rule.max_steps:
            if time_is_up(rule, len(times) + done, time.perf_counter() - began):
                break  # the hard cap: a slow step never overshoots by a whole chunk
            # ---------------- TIMED REGION BEGIN ----------------
            timer.start()
            loss = step()
            timer.stop()
            # ---------------- TIMED REGION END ------------------
            losses.append(loss)
            done += 1
        chunk = timer.collect()  # waits for the chunk's last step: the only host sync of the measured phase
        append(result["steps"], chunk, losses, "measured")
        times.extend(chunk)
        stop = should_stop(rule, len(times), median_noise(sorted(times)), time.perf_counter() - began)
        if stop:
            break
    result["stop_reason"] = stop
    result["short"] = stop == "max_time" and len(times) < rule.min_steps
    result["memory"] = read_memory(device, scope)


def prepare(request, request_dir, result):
    """The model on its device with the request's weights, in training mode, the dropout seed set; the forward the
    step calls (compiled or not), and the step's timer."""
    device = torch.device(request["device"])
    if device.type == "cuda":
        torch.cuda.set_device(device)
    set_precision(request["tf32"], device)
    config = GPTConfig(**request["model"])
    model = GPT(config)
    load_weights(model, Path(request_dir) / "weights.safetensors")
    model.to(device)
    if request["bf16"] and request["bf16_mode"] == "pure":
        model.to(torch.bfloat16)
    dtype = torch.bfloat16 if request["bf16"] else torch.float32  # autocast runs attention in bf16 too
    result["sdpa_backend_used"] = sdpa_backend_used(config, request["batch_size"], request["seq_len"], dtype, device)
    # Dropout draws from here on, in the C++ model's order, as the C++ run after its own reseed.
    torch.manual_seed(request["dropout_seed"])
    model.train()
    mode = IMPLEMENTATIONS[request["implementation"]]
    forward = model if mode is None else torch.compile(model, mode=mode)  # the model, not the optimizer
    timer = CudaEventTimer() if device.type == "cuda" else PerfCounterTimer()
    result["clock"] = timer.clock
    return device, model, forward, timer


def loader_for(request, tokens, starts, device):
    return Loader(tokens, starts, request["seq_len"], device, request["pinned_memory"], request["pinned_mode"])


def step_for(request, forward, optimizer, loader, device, schedule):
    mode = IMPLEMENTATIONS[request["implementation"]]
    autocast = request["bf16"] and request["bf16_mode"] == "autocast"
    return make_step(
        forward, optimizer, loader, autocast, device, schedule, mode == "reduce-overhead" and device.type == "cuda"
    )


def run(request, request_dir, tokens, starts, result):
    device, model, forward, timer = prepare(request, request_dir, result)
    optimizer, result["optimizer"] = make_optimizer(model, request)
    schedule = LrSchedule(request["lr_schedule"], request["adamw"]["lr"])
    mode = IMPLEMENTATIONS[request["implementation"]]
    with loader_for(request, tokens, starts, device) as loader:
        measure(
            result,
            step_for(request, forward, optimizer, loader, device, schedule),
            timer,
            request["timing"],
            device,
            compiled=mode is not None,
            min_warmup=REDUCE_OVERHEAD_WARMUP if mode == "reduce-overhead" else 1,
            warmup=warmup_steps(request),
        )


# ---------------------------------------------------------------- training to a target loss


def validation_set(val_tokens, batches, batch_size, seq_len, device):
    """The first `batches` batches of consecutive windows of the validation stream, in order, as
    bench/measure/convergence.cpp's validation_set: the same ones at every evaluation and in every run."""
    B, T = batch_size, seq_len
    windows = (len(val_tokens) - 1) // T if len(val_tokens) > T else 0
    if windows < B:
        raise StepFailure(
            f"the validation stream holds {windows} windows of {T + 1} tokens, fewer than one batch of {B}"
        )
    out = []
    for b in range(min(batches, windows // B)):
        starts = (b * B + np.arange(B)) * T
        w = torch.from_numpy(val_tokens[starts[:, None] + np.arange(T + 1)].astype(np.int64))  # (B, T+1)
        out.append((w[:, :-1].contiguous().to(device), w[:, 1:].contiguous().to(device)))
    return out


def validation_loss(model, validation, autocast, device):
    """The mean loss over the set: eval mode (no dropout), no gradients, the run's autocast, the loss in float32
    (pure bf16 would round the loss itself); one host sync. The eager model: compiling evaluation is not measured."""
    model.eval()
    total = None
    with torch.no_grad(), autocast_context(autocast, device)():
        for x, y in validation:
            logits, _ = model(x)
            loss = cross_entropy(logits.float(), y)
            total = loss if total is None else total + loss
    model.train()
    return total.item() / len(validation)


def write_progress(request_dir, convergence):
    """The curve so far, for the C++ side's progress line."""
    write_atomically(Path(request_dir) / "progress.json", json.dumps(finite_or_null(convergence["curve"])))


def train_to_target(request, request_dir, tokens, starts, val_tokens, result):
    """bench/measure/convergence.cpp's train_to_target: warm up and undo it, then train with the clock around each
    step and evaluate every eval_every steps off the clock, until the validation loss reaches the target or a cap
    stops the run."""
    target, B, T = request["target"], request["batch_size"], request["seq_len"]
    conv = result["convergence"] = {
        "reached": False,
        "steps": None,
        "tokens": None,
        "time_s": None,
        "warmup_s": 0.0,
        "eval_s": 0.0,
        "curve": [],
    }
    device, model, forward, timer = prepare(request, request_dir, result)
    validation = validation_set(val_tokens, target["eval_batches"], B, T, device)
    initial = [p.detach().clone() for p in model.parameters()]
    mode = IMPLEMENTATIONS[request["implementation"]]

    # Warm-up (allocator growth, kernel selection, compilation): timed apart, then undone.
    optimizer, result["optimizer"] = make_optimizer(model, request)
    schedule = LrSchedule(request["lr_schedule"], request["adamw"]["lr"])
    n_warmup = warmup_steps(request)
    synchronize(device)
    began = time.perf_counter()
    with loader_for(request, tokens, starts[: max(n_warmup, 1)], device) as loader:
        step = step_for(request, forward, optimizer, loader, device, schedule)
        for i in range(n_warmup):
            step()
            if i == 0 and mode is not None:
                synchronize(device)
                result["compile_s"] = time.perf_counter() - began
    synchronize(device)
    conv["warmup_s"] = time.perf_counter() - began
    # Undone: the initial weights copied back in place (graphs keep reading the same addresses), a fresh optimizer
    # and schedule, the data order from its start, and dropout's seed.
    with torch.no_grad():
        for p, p0 in zip(model.parameters(), initial):
            p.copy_(p0)
    optimizer, _ = make_optimizer(model, request)
    schedule = LrSchedule(request["lr_schedule"], request["adamw"]["lr"])
    torch.manual_seed(request["dropout_seed"])
    synchronize(device)

    autocast = request["bf16"] and request["bf16_mode"] == "autocast"

    def evaluate(steps, time_s, train_loss):
        began = time.perf_counter()
        loss = validation_loss(model, validation, autocast, device)
        conv["eval_s"] += time.perf_counter() - began
        conv["curve"].append(
            {"step": steps, "tokens": steps * B * T, "time_s": time_s, "val_loss": loss, "train_loss": train_loss}
        )
        write_progress(request_dir, conv)
        return loss

    evaluate(0, 0.0, None)
    steps, timed_s = 0, 0.0
    with loader_for(request, tokens, starts, device) as loader:
        step = step_for(request, forward, optimizer, loader, device, schedule)
        while True:
            stretch_began, losses = time.perf_counter(), []  # host time of this stretch: a bound on max_time_s
            for i in range(target["eval_every"]):
                if steps >= target["max_steps"]:
                    break
                if i > 0 and timed_s + time.perf_counter() - stretch_began >= target["max_time_s"]:
                    break
                # ---------------- TIMED REGION BEGIN ----------------
                timer.start()
                loss = step()
                timer.stop()
                # ---------------- TIMED REGION END ------------------
                losses.append(loss)
                steps += 1
            ms = timer.collect()  # waits for the stretch's last step
            values = record(result["steps"], ms, losses)
            timed_s += sum(ms) / 1e3
            train_loss = sum(values) / len(values)
            if not math.isfinite(train_loss):
                result["stop_reason"] = "diverged"
                result["reason"] = f"the training loss is {train_loss} by step {steps}"
                break
            if evaluate(steps, timed_s, train_loss) <= target["loss"]:
                conv.update(reached=True, steps=steps, tokens=steps * B * T, time_s=timed_s)
                result["stop_reason"] = "target"
                break
            if steps >= target["max_steps"]:
                result["stop_reason"] = "max_steps"
                break
            if timed_s >= target["max_time_s"]:
                result["stop_reason"] = "max_time"
                break


# ---------------------------------------------------------------- the result


def versions():
    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = None
    return {"python": platform.python_version(), "torch": torch.__version__, "triton": triton}


def new_result(request):
    return {
        "status": "ok",
        "reason": None,
        "implementation": request["implementation"],
        "clock": "cuda_event" if request["device"].startswith("cuda") else "perf_counter",
        "warmup": [],
        "steps": [],
        "stop_reason": None,
        "short": False,
        "compile_s": None,
        "optimizer": request["optimizer"],
        "memory": None,
        "sdpa_backend_used": None,
        "convergence": None,
        "versions": versions(),
    }


def is_out_of_memory(e):
    text = str(e)
    return isinstance(e, torch.OutOfMemoryError) or any(
        s in text for s in ("can't allocate memory", "out of memory", "ALLOC_FAILED")
    )


def describe(e):
    """One line for the result: the first line of the message (and the next one when the first only announces it,
    as torch.compile's "backend='inductor' raised:")."""
    if isinstance(e, KeyboardInterrupt):
        return "interrupted"
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text += " " + lines[1]
    text = text[:1000]
    if is_out_of_memory(e):
        return "out of memory: " + text
    return text if isinstance(e, StepFailure) else f"{type(e).__name__}: {text}"


def finite_or_null(obj):
    """JSON has no NaN or inf: they become null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite_or_null(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite_or_null(v) for v in obj]
    return obj


def write_atomically(path, text):
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return USAGE
    request_dir = Path(argv[1])
    try:
        request, tokens, starts, val_tokens = read_request(request_dir)
    except UsageError as e:
        print(f"step.py: invalid request: {e}", file=sys.stderr)
        return USAGE
    result = new_result(request)
    try:
        if request["target"]:
            train_to_target(request, request_dir, tokens, starts, val_tokens, result)
        else:
            run(request, request_dir, tokens, starts, result)
    except (Exception, KeyboardInterrupt) as e:  # a failure is a result: out of memory, compile error, NaN loss
        traceback.print_exc()
        result.update(status="failed", reason=describe(e), stop_reason="failed", short=False)
    try:
        write_atomically(request_dir / "result.json", json.dumps(finite_or_null(result), indent=1, allow_nan=False))
    except (OSError, ValueError) as e:
        print(f"step.py: cannot write {request_dir / 'result.json'}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
