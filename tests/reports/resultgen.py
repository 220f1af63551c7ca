"""Writes synthetic stepwise result files for the report tests, each validated against results/schema.json
(where jsonschema is installed), including the fields of the engine's newer results: `implementation` and the
Python rows beside the libtorch ones, `summary.short`, `summary.noisy`, `summary.compile_s`, `env.cpu_bf16_native`
with `env.cpu_capability` and `env.cpu_bf16_emulated_because`, `suite.labels`, the loss check's new shape with its
`reason`, `config.settings_hash`, and `sweep` (the points of `./ablate --sweep`, `sweep_run`)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np

try:
    import jsonschema
except ImportError:  # as on the GPU machines: the generated results then go unchecked
    jsonschema = None

ROOT = Path(__file__).resolve().parents[2]


def contract_schema() -> dict:
    """results/schema.json, the contract every generated result is validated against."""
    return json.loads((ROOT / "results" / "schema.json").read_text())


SCHEMA = contract_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA) if jsonschema else None
GIB = 1024**3
H100 = "NVIDIA H100 80GB HBM3"

FLAGS_INFO = [
    {"name": "dynamic_mask", "summary": "build the causal mask on the fly", "applies": "cpu+cuda"},
    {"name": "tf32", "summary": "TF32 tensor-core matmuls", "applies": "cuda"},
    {"name": "fused_adamw", "summary": "fused AdamW kernel", "applies": "cpu+cuda"},
    {"name": "pinned_memory", "summary": "pinned host batches, async copy", "applies": "cuda"},
    {"name": "bf16", "summary": "bfloat16 weights and compute", "applies": "cpu+cuda"},
    {"name": "native_layers", "summary": "native LayerNorm and GELU", "applies": "cpu+cuda"},
    {"name": "flash", "summary": "fused scaled-dot-product attention", "applies": "cpu+cuda"},
    {"name": "compile", "summary": "capture the step in a CUDA graph", "applies": "cuda"},
    {"name": "vocab_padding", "summary": "pad the vocabulary to a multiple of 64", "applies": "cpu+cuda"},
    {"name": "max_batch", "summary": "largest batch that fits", "applies": "cpu+cuda"},
]
FLAG_ORDER = [f["name"] for f in FLAGS_INFO]

RASCHKA = [  # (label, added, speed over baseline, peak GiB)
    ("baseline", [], 1.0, 26.0),
    ("dynamic mask", ["dynamic_mask"], 1.0, 26.0),
    ("tf32", ["tf32"], 2.2, 26.0),
    ("fused AdamW", ["fused_adamw"], 2.27, 26.0),
    ("pinned memory", ["pinned_memory"], 2.27, 26.0),
    ("bf16", ["bf16"], 3.6, 13.8),
    ("native layers", ["native_layers"], 4.4, 11.6),
    ("flash", ["flash"], 7.3, 5.9),
    ("compile (CUDA graph)", ["compile"], 8.9, 6.2),
    ("vocab padding", ["vocab_padding"], 10.2, 5.9),
    ("max batch", ["max_batch"], 11.4, 22.5),
]
KARPATHY = [
    ("baseline (native layers)", ["native_layers"], 1.0, 20.0),
    ("tf32", ["tf32"], 3.0, 20.0),
    ("bf16 (autocast)", ["bf16"], 3.3, 14.0),
    ("compile (CUDA graph)", ["compile"], 7.7, 12.0),
    ("flash", ["flash"], 10.4, 8.0),
    ("vocab padding", ["vocab_padding"], 10.8, 8.0),
    ("fused AdamW", ["fused_adamw"], 11.1, 8.0),
]


def step_times(median: float, cv: float, n: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(max(median * 0.2, median * (1 + cv * z))) for z in rng.standard_normal(n)]


def _noise(samples: list[float]) -> float:
    x, n = sorted(samples), len(samples)
    half = 1.96 * math.sqrt(n) / 2
    lo, hi = max(0, int(math.floor(n / 2 - half))), min(n - 1, int(math.ceil(n / 2 + half)))
    return (x[hi] - x[lo]) / 2 / float(np.median(x))


LOSS_REASONS = {
    "baseline": "the suite's baseline: the others are compared with it",
    "ok": "the loss drop and the loss at the last shared step agree with the baseline within the {cls} tolerance",
    "math changed": "the loss at the last shared step is 0.31 above the baseline's (tolerance 0.05, {cls})",
    "too short to judge": "only 3 steps shared with the baseline; the check needs 10",
    "not comparable": "a different batch (32 vs 8), so different data per step",
    "no baseline": "the suite's baseline did not run",
}


def loss_check(status: str, cls: str | None = "fp32", shape: str = "new", reason: str | None = None) -> dict:
    """summary.loss.check: the engine's current shape (status, reason, class, the differences), or the shape of
    results written before it (`shape="old"`: rel_diff, tolerance, baseline_window_mean, no reason)."""
    if shape == "old":
        return {
            "status": status,
            "baseline_window_mean": 7.0,
            "rel_diff": 0.08 if status == "math changed" else 0.001,
            "tolerance": 0.02,
        }
    judged = status in ("ok", "math changed")
    return {
        "status": status,
        "reason": reason or LOSS_REASONS[status].format(cls=cls),
        "class": cls,
        "steps_compared": 20 if judged else 3,
        "start_diff": 0.0 if judged else None,
        "end_diff": (0.31 if status == "math changed" else 0.004) if judged else None,
        "drop": 3.9 if judged else None,
        "baseline_drop": 3.9 if judged else None,
        "tolerance": {"end_rel": 0.01, "drop_ratio": 0.05, "start_rel": 0.001} if judged else None,
    }


def loss_class(flags: list[str]) -> str:
    return "bf16" if "bf16" in flags else ("fp32" if "tf32" in flags else "exact")


def summary(
    samples: list[float],
    tokens_per_step: int,
    peak_bytes: int | None,
    mfu: float | None,
    loss_status: str,
    device_kind: str,
    check: dict | None = None,
) -> dict:
    a = np.asarray(samples)
    median, mean, std = float(np.median(a)), float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0
    memory = (
        {
            "kind": "cuda_caching_allocator",
            "peak_allocated_bytes": int(peak_bytes * 0.8) if peak_bytes else None,
            "peak_reserved_bytes": peak_bytes,
            "current_allocated_bytes": 0,
            "current_reserved_bytes": 0,
        }
        if device_kind == "cuda"
        else {
            "kind": "process_rss",
            "peak_rss_bytes": peak_bytes,
            "peak_allocated_bytes": None,
            "peak_reserved_bytes": peak_bytes,
        }
    )
    return {
        "steps": len(samples),
        "tokens_per_step": tokens_per_step,
        "tokens_per_s": tokens_per_step * 1000.0 / median,
        "step_ms": {
            "median": median,
            "mean": mean,
            "min": float(a.min()),
            "max": float(a.max()),
            "p10": float(np.percentile(a, 10)),
            "p90": float(np.percentile(a, 90)),
            "stddev": std,
            "cv": std / mean,
            "noise": _noise(samples) if len(samples) > 1 else None,
        },
        "stop_reason": "noise",
        "memory": memory,
        "mfu": {
            "value": mfu,
            "precision": "bf16",
            "peak_flops": 989e12 if mfu is not None else None,
            "flops_per_token": 1e9,
            "reason": None if mfu is not None else "peak FLOPs of this CPU are unknown",
        },
        "loss": {
            "first": 10.9,
            "last": 6.1,
            "window": [10, 20],
            "window_mean": 7.0,
            "check": check or loss_check(loss_status),
        },
    }


def make_result(
    *,
    run_id: str,
    name: str,
    suite: dict | None = None,
    status: str = "ok",
    reason: str | None = None,
    flags: list[str] | None = None,
    median_ms: float = 100.0,
    cv: float = 0.02,
    n: int = 30,
    seed: int = 0,
    samples: list[float] | None = None,
    batch: int = 8,
    base_batch: int | None = None,
    seq: int = 64,
    device_kind: str = "cuda",
    device_name: str = H100,
    preset: str = "gpt2-tiny",
    peak_gib: float | None = 2.0,
    mfu: float | None = 0.3,
    loss_status: str = "ok",
    loss_shape: str = "new",
    check: dict | None = None,
    git_commit: str = "0123456789abcdef0123456789abcdef01234567",
    timestamp: str | None = None,
    trace: dict | None = None,
    distributed: dict | None = None,
    optimizer: str | None = None,
    implementation: str | None = None,
    short: bool = False,
    compile_s: float | None = None,
    vs_libtorch: dict | None = None,
    cpu_bf16_native: bool | None = None,
    cpu_bf16_flags: list[str] | None = None,
    cpu_capability: str | None = None,
    bf16_emulated_because: str | None = None,
    cpu_env: str = "new",
    max_noise: float = 0.03,
    write_noisy: bool = True,
    unavailable: dict[str, str] | None = None,
    flags_info: list[dict] | None = None,
    memory: dict | None = None,
    hfu: float | None = None,
    hardware_flops_per_token: float | None = None,
    max_batch_probe: dict | None = None,
    sweep: dict | None = None,
) -> dict:
    """One result. `implementation` None writes no key (libtorch, as older results); `short` stops the
    measured phase at max_time with `n` < min_steps steps; `cpu_bf16_native` (CPU only) writes env.cpu_bf16_native,
    env.cpu_bf16_flags (the hardware's; `cpu_bf16_flags` overrides) and, unless `cpu_env="old"` (results written
    before them), env.cpu_capability and env.cpu_bf16_emulated_because as the engine decides them.
    `max_noise` is config.timing.max_noise: generous by default, so a synthetic row is noisy only where a test
    asks (samples, cv or a lower max_noise); `write_noisy` False leaves out summary.noisy, as older results do.
    `unavailable` maps a flag this device cannot apply to the engine's reason: asked for, it lands in
    config.flags_skipped and not in config.flags (the flags in effect).
    `flags_info` replaces FLAGS_INFO (its order sorts `flags`: name the memory flags there to use them); `memory` adds
    keys to summary.memory (the activation split), `hfu` and `hardware_flops_per_token` to summary.mfu, and
    `max_batch_probe` is written as given, and `sweep` (the point of a sweep, `sweep_info`; null outside one)."""
    flags = sorted(flags or [], key=[f["name"] for f in flags_info or FLAGS_INFO].index)
    unavailable = unavailable or {}
    in_effect = [f for f in flags if f not in unavailable]
    stamp = datetime.strptime(run_id[:16], "%Y%m%dT%H%M%SZ")
    ok = status == "ok"
    times = (samples if samples is not None else step_times(median_ms, cv, n, seed)) if ok else []
    peak = int(peak_gib * GIB) if peak_gib is not None else None
    python = implementation not in (None, "libtorch")
    doc = {
        "schema_version": 1 if loss_shape == "old" else 2,
        "tool": "stepwise",
        "run_id": run_id,
        "name": name,
        "status": status,
        "reason": reason if not ok else None,
        "suite": suite,
        "config": {
            "preset": preset,
            "model": {
                "vocab_size": 50257,
                "padded_vocab_size": 50304,
                "context_length": seq,
                "n_layer": 2,
                "n_head": 2,
                "n_embd": 64,
                "dropout": 0.0,
                "qkv_bias": False,
                "parameters": 7_000_000,
                "flops_per_token": 1e9,
            },
            "batch_size": batch,
            "base_batch_size": base_batch or batch,
            "seq_len": seq,
            # A row that did not run keeps no flags, unless the device skipped some (then: those it would have run).
            "flags": in_effect if ok or unavailable else [],
            "flags_requested": flags,
            "flags_skipped": [{"flag": f, "reason": unavailable[f]} for f in flags if f in unavailable],
            "bf16_mode": "pure" if "bf16" in in_effect else None,
            "optimizer": optimizer or _optimizer(in_effect, device_kind),
            "pinned_mode": "async" if "pinned_memory" in in_effect else None,
            "sdpa_backend": "auto" if "flash" in in_effect else None,
            "precision": "bf16" if "bf16" in in_effect else ("tf32" if "tf32" in in_effect else "fp32"),
            "device": "cuda:0" if device_kind == "cuda" else "cpu",
            "seed": 123,
            "lr": 5e-4,
            "weight_decay": 0.1,
            "data": {"source": "synthetic", "format": "synthetic", "path": None, "tokens": 100000},
            "timing": {
                "warmup": 5,
                "min_steps": 20,
                "max_steps": 200,
                "max_noise": max_noise,
                "max_time_s": 60.0,
                "check_every": 10,
                "clock": "cuda_event" if device_kind == "cuda" else "steady_clock",
            },
            "settings_hash": "5f3c2a91",
        },
        "env": {
            "device_kind": device_kind,
            "device_name": device_name,
            "compute_capability": "9.0",
            "driver_version": "570.00",
            "cuda_runtime_version": "13.0",
            "cudnn_version": "9.10",
            "torch_version": "2.11.0",
            "compiler": "GCC 12.2.0",
            "cpu_model": "Test CPU",
            "cpu_threads": 16,
            "git_commit": git_commit,
            "git_dirty": False,
            "host": "testhost",
            "timestamp": timestamp or stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "summary": (
            summary(
                times,
                batch * seq,
                peak,
                mfu,
                loss_status,
                device_kind,
                check or loss_check(loss_status, loss_class(in_effect), loss_shape),
            )
            if ok
            else None
        ),
        "steps": [{"ms": t, "loss": 7.0 - 0.01 * i} for i, t in enumerate(times)],
        "warmup": [{"ms": 500.0, "loss": 10.9}],
        "max_batch_probe": max_batch_probe,
        "sweep": sweep,
        "trace": trace,
        "distributed": distributed,
        "flags_info": flags_info or FLAGS_INFO,
    }
    if ok and memory:
        doc["summary"]["memory"].update(memory)
    if ok and (hfu is not None or hardware_flops_per_token is not None):
        doc["summary"]["mfu"]["hfu"] = hfu
        doc["summary"]["mfu"]["hardware_flops_per_token"] = hardware_flops_per_token or 1e9
    if implementation is not None:
        doc["implementation"] = implementation
    if python:
        doc["env"]["python"] = {"python": "3.11.2", "torch": "2.11.0+cu130", "triton": "3.6.0"}
    if ok and (python or compile_s is not None):
        doc["summary"]["compile_s"] = compile_s
    if ok and python:
        doc["summary"]["loss"]["vs_libtorch"] = vs_libtorch or loss_check("ok", loss_class(flags))
    if ok:
        # As the engine decides it (ablations/run/result_document.cpp): noise unknown (one step) or above --max-noise.
        noise = doc["summary"]["step_ms"]["noise"]
        noisy = noise is None or noise > max_noise
        if write_noisy:
            doc["summary"]["noisy"] = noisy
        if noisy:
            doc["summary"]["stop_reason"] = "max_steps"
    if ok and short:
        doc["summary"].update(short=True, stop_reason="max_time")
    if device_kind == "cpu":
        for key in ("compute_capability", "driver_version", "cuda_runtime_version", "cudnn_version"):
            del doc["env"][key]
        if cpu_bf16_native is not None:
            flags = (
                cpu_bf16_flags
                if cpu_bf16_flags is not None
                else (["avx512_bf16", "amx_bf16"] if cpu_bf16_native else [])
            )
            doc["env"]["cpu_bf16_native"] = cpu_bf16_native
            doc["env"]["cpu_bf16_flags"] = flags
            if cpu_env == "new":
                capability = cpu_capability or ("AVX512" if cpu_bf16_native else "AVX2")
                because = bf16_emulated_because or (
                    None
                    if cpu_bf16_native
                    else (
                        "the CPU has no avx512_bf16 or amx_bf16"
                        if not flags
                        else f"ATen dispatches at {capability} (ATEN_CPU_CAPABILITY), below AVX512"
                    )
                )
                doc["env"].update(cpu_capability=capability, cpu_isa_caps={}, cpu_bf16_emulated_because=because)
    if VALIDATOR is not None:
        VALIDATOR.validate(doc)
    return doc


def python_row(
    libtorch: dict,
    implementation: str,
    slower: float = 1.0,
    compile_s: float | None = None,
    vs_libtorch: str = "ok",
    **kw,
) -> dict:
    """The row of `implementation` beside a libtorch row: same suite, index and label, the name with
    ".<implementation>" appended, step times `slower` times the libtorch row's."""
    cfg, summ = libtorch["config"], libtorch["summary"]
    ok = libtorch["status"] == "ok" and kw.get("status", "ok") == "ok"
    samples = [s["ms"] * slower for s in libtorch["steps"]] if ok else None
    if compile_s is None and implementation.startswith("python-compile"):
        compile_s = 41.3
    args = dict(
        run_id=libtorch["run_id"],
        name=f"{libtorch['name']}.{implementation}",
        suite=libtorch["suite"],
        flags=cfg["flags_requested"],
        samples=samples,
        batch=cfg["batch_size"],
        base_batch=cfg["base_batch_size"],
        seq=cfg["seq_len"],
        device_kind=libtorch["env"]["device_kind"],
        device_name=libtorch["env"]["device_name"],
        git_commit=libtorch["env"]["git_commit"],
        loss_status=(summ or {}).get("loss", {}).get("check", {}).get("status", "ok"),
        implementation=implementation,
        compile_s=compile_s if ok else None,
        unavailable={f["flag"]: f["reason"] for f in cfg["flags_skipped"]},
        vs_libtorch=loss_check(vs_libtorch, loss_class(cfg["flags_requested"])),
        mfu=None,
        optimizer=cfg["optimizer"] if cfg["optimizer"] != "reference" else "forloop",
    )
    args.update(kw)
    doc = make_result(**args)
    # The same process's environment: the CPU keys exactly as the libtorch row has them.
    for key in ("cpu_bf16_native", "cpu_bf16_flags", "cpu_capability", "cpu_isa_caps", "cpu_bf16_emulated_because"):
        if key in libtorch["env"]:
            doc["env"][key] = libtorch["env"][key]
        else:
            doc["env"].pop(key, None)
    if VALIDATOR is not None:
        VALIDATOR.validate(doc)
    return doc


def suite_info(
    name: str,
    kind: str,
    index: int,
    count: int,
    label: str,
    added: list[str],
    removed: list[str] | None = None,
    labels: list[str] | None = None,
) -> dict:
    info = {
        "name": name,
        "kind": kind,
        "index": index,
        "count": count,
        "label": label,
        "added": added,
        "removed": removed or [],
    }
    if labels is not None:
        info["labels"] = labels
    return info


def file_name(doc: dict) -> str:
    return doc["name"].split("/", 1)[-1] + ".json"


def write(root: Path, doc: dict) -> Path:
    suite = doc["suite"]["name"] if doc["suite"] else "single"
    path = Path(root) / doc["run_id"] / suite / file_name(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    return path


def _optimizer(flags, device_kind: str = "cuda") -> str:
    """As the engine picks it: fused with fused_adamw; otherwise torch.optim's default of the device, foreach
    on CUDA and the single-tensor loop (forloop) on a CPU. compile does not change it."""
    if "fused_adamw" in flags:
        return "fused"
    return "foreach" if device_kind == "cuda" else "forloop"


def cumulative(
    run_id: str,
    suite: str,
    steps,
    base_ms: float = 200.0,
    skip: dict | None = None,
    fail: dict | None = None,
    loss: dict | None = None,
    short: set | None = None,
    labels: bool = True,
    **kw,
) -> list[dict]:
    """One cumulative suite; `skip`/`fail` map a step index to its reason, `loss` to its loss check, `short`
    holds the indices measured short (3 steps); `labels` writes suite.labels. With `unavailable` (flags the device
    cannot apply), a step whose added flags are all unavailable is skipped with the engine's reason, as on a CPU."""
    skip, fail, loss, short = dict(skip or {}), fail or {}, loss or {}, short or set()
    unavailable = kw.get("unavailable") or {}
    for i, (_, added, *_) in enumerate(steps):
        if added and all(f in unavailable for f in added) and i not in skip:
            skip[i] = f"{added[0]} {unavailable[added[0]]}"
    all_labels = [label for label, *_ in steps] if labels else None
    docs, flags = [], []
    for i, (label, added, speed, peak) in enumerate(steps):
        flags = flags + added
        status = "skipped" if i in skip else ("failed" if i in fail else "ok")
        batch = 32 if "max_batch" in added else 8
        ms = base_ms / speed * batch / 8
        extra = {"short": True, "n": 3} if i in short else {}
        if extra:
            kw = {k: v for k, v in kw.items() if k != "n"}
        docs.append(
            make_result(
                run_id=run_id,
                name=f"{suite}/{i:02d}_{label.split(' (')[0].replace(' ', '_')}",
                suite=suite_info(suite, "cumulative", i, len(steps), label, added, labels=all_labels),
                status=status,
                reason=skip.get(i) or fail.get(i),
                flags=flags,
                median_ms=ms,
                seed=i + 1,
                batch=batch,
                base_batch=8,
                peak_gib=peak,
                loss_status=loss.get(i, "baseline" if i == 0 else "ok"),
                **extra,
                **kw,
            )
        )
    return docs


def one_at_a_time(run_id: str, speeds: dict[str, float], base_ms: float = 200.0, **kw) -> list[dict]:
    docs = [
        make_result(
            run_id=run_id,
            name="one_at_a_time/00_baseline",
            median_ms=base_ms,
            seed=100,
            suite=suite_info("one_at_a_time", "one_at_a_time", 0, len(speeds) + 1, "baseline", []),
            loss_status="baseline",
            **kw,
        )
    ]
    for i, (flag, speed) in enumerate(speeds.items(), start=1):
        docs.append(
            make_result(
                run_id=run_id,
                name=f"one_at_a_time/{i:02d}_{flag}",
                flags=[flag],
                suite=suite_info("one_at_a_time", "one_at_a_time", i, len(speeds) + 1, flag, [flag]),
                median_ms=base_ms / speed,
                seed=100 + i,
                **kw,
            )
        )
    return docs


def leave_one_out(run_id: str, costs: dict[str, float], all_ms: float = 20.0, **kw) -> list[dict]:
    """`costs[flag]` is how much faster all flags are than all but that flag."""
    every = list(costs)
    docs = [
        make_result(
            run_id=run_id,
            name="leave_one_out/00_all",
            flags=every,
            median_ms=all_ms,
            seed=200,
            suite=suite_info("leave_one_out", "leave_one_out", 0, len(every) + 1, "all flags", every),
            loss_status="baseline",
            **kw,
        )
    ]
    for i, (flag, cost) in enumerate(costs.items(), start=1):
        rest = [f for f in every if f != flag]
        docs.append(
            make_result(
                run_id=run_id,
                name=f"leave_one_out/{i:02d}_no_{flag}",
                flags=rest,
                suite=suite_info("leave_one_out", "leave_one_out", i, len(every) + 1, f"all but {flag}", [], [flag]),
                median_ms=all_ms * cost,
                seed=200 + i,
                **kw,
            )
        )
    return docs


def standard_run(root: Path, run_id: str = "20260301T120000Z_gpt2-tiny_h100", **kw) -> list[Path]:
    """A run with all four suites, one skipped step and one failed step, like ./run_all.sh writes."""
    docs = cumulative(
        run_id,
        "raschka",
        RASCHKA,
        skip={4: "pinned_memory: no data loader on this device"},
        fail={8: "CUDA graph capture failed: operation not permitted"},
        **kw,
    )
    docs += cumulative(run_id, "karpathy", KARPATHY, **kw)
    docs += one_at_a_time(run_id, {"tf32": 2.2, "bf16": 2.8, "flash": 1.5, "compile": 1.3}, **kw)
    docs += leave_one_out(run_id, {"tf32": 1.05, "bf16": 1.6, "flash": 1.7, "compile": 1.25}, **kw)
    return [write(root, d) for d in docs]


# --- sweeps (./ablate --sweep AXIS=v1,v2,...) ---------------------------------------------------------------------

SWEEP_ID = "20261125T101500Z_sweep_cpu"


def sweep_points(axes: list[str], values: dict[str, list]) -> list[dict]:
    """Every point of the axes' cartesian product, the first axis outermost, as {axis: value}."""
    points = [{}]
    for axis in axes:
        points = [{**p, axis: v} for p in points for v in values[axis]]
    return points


def sweep_info(sweep_id: str, axes: list[str], values: dict[str, list], index: int) -> dict:
    """The `sweep` key of the result at point `index` of the sweep."""
    points = sweep_points(axes, values)
    return {
        "id": sweep_id,
        "axes": axes,
        "values": values,
        "point": points[index],
        "index": index,
        "count": len(points),
    }


def point_slug(point: dict) -> str:
    return "_".join(f"{axis}-{value}" for axis, value in point.items())


def sweep_run(
    speeds: dict[str, list[float | None]],
    axes: list[str] | None = None,
    values: dict[str, list] | None = None,
    sweep_id: str = SWEEP_ID,
    base_ms: list[float] | None = None,
    skip: dict[tuple[str, int], str] | None = None,
    points: list[int] | None = None,
    **kw,
) -> list[dict]:
    """A one-at-a-time suite run at every point of a sweep (each point its own run, `<sweep id>_<point slug>`):
    `speeds[flag][i]` is the flag's speed over the baseline at point i, `base_ms[i]` the baseline's median there
    (by default 100 ms × (i + 1), so a speedup against another point's baseline would be far off); `skip` maps
    (flag or "baseline", point index) to the engine's reason; `points` lists the points that ran (default: all).
    A point's preset, seq_len or batch_size is the result's own where the axis sweeps it."""
    axes = axes or ["preset"]
    values = values or {"preset": ["tiny", "mini", "small", "medium"]}
    every = sweep_points(axes, values)
    base_ms = base_ms or [100.0 * (i + 1) for i in range(len(every))]
    skip = skip or {}
    docs = []
    for i, point in enumerate(every):
        if points is not None and i not in points:
            continue
        run_id = f"{sweep_id}_{point_slug(point)}"
        shape = {"preset": point.get("preset", "gpt2-tiny"), "seq": point.get("seq_len", 64)}
        shape["batch"] = point.get("batch_size", 8)
        rows = [("baseline", [], 1.0)] + [(flag, [flag], speed[i]) for flag, speed in speeds.items()]
        for k, (label, flags, speed) in enumerate(rows):
            reason = skip.get((label, i))
            docs.append(
                make_result(
                    run_id=run_id,
                    name=f"one_at_a_time/{k:02d}_{label}",
                    suite=suite_info("one_at_a_time", "one_at_a_time", k, len(rows), label, flags),
                    flags=flags,
                    status="skipped" if reason else "ok",
                    reason=reason,
                    median_ms=base_ms[i] / (speed or 1.0),
                    seed=1000 * i + k,
                    loss_status="baseline" if k == 0 else "ok",
                    sweep=sweep_info(sweep_id, axes, values, i),
                    **shape,
                    **kw,
                )
            )
    return docs
