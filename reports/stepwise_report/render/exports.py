"""The newest run in the formats CI tools already read, so no one needs an adapter for stepwise.

google/benchmark JSON (gbench.json, gbench_aggregates.json) goes into tools/compare.py, github-action-benchmark's
googlecpp tool and Bencher's cpp_google adapter; customBiggerIsBetter/customSmallerIsBetter.json into
github-action-benchmark's custom tools; bmf.json into Bencher. Each measured step is one repetition, and the
formats' units and fields are the ones their readers expect (reports/README.md lists them). Each speedup
(× baseline, × previous) carries its 95% interval, from the same bootstrap as the report and the gate.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ..analysis.analysis import build_chain, x_baseline, x_previous
from ..read.results import Result, group_suites
from ..stats.speedup import Speedup
from .formats import DASH, MIB, fmt_ms
from .tables import measurement_mark

FILES = ("gbench.json", "gbench_aggregates.json", "customBiggerIsBetter.json", "customSmallerIsBetter.json", "bmf.json")


def bench_name(r: Result) -> str:
    """`suite/NN_label` with anything but [A-Za-z0-9_./+-] replaced, so tools that split on spaces cope."""
    return re.sub(r"[^A-Za-z0-9_./+-]+", "_", r.name)


def _per_step(r: Result) -> dict[str, list[float]]:
    """User counters for each measured step, derived from that step's time."""
    tokens, times = r.tokens_per_step, r.samples_ms
    counters = {"tokens_per_s": [tokens * 1000.0 / t for t in times]}
    mfu = r.summary.get("mfu") or {}
    peak, per_token = mfu.get("peak_flops"), mfu.get("flops_per_token") or r.config["model"].get("flops_per_token")
    if mfu.get("value") is not None and peak and per_token:
        # MFU per step, with the summary's own peak and FLOPs per token.
        counters["mfu"] = [per_token * tps / peak for tps in counters["tokens_per_s"]]
    return counters


def _stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    mean = float(a.mean())
    std = float(a.std(ddof=1)) if len(a) > 1 else 0.0
    return {"mean": mean, "median": float(np.median(a)), "stddev": std, "cv": std / mean if mean else 0.0}


def _context(r: Result) -> dict:
    env, cfg = r.env, r.config
    ctx: dict = {
        "date": r.timestamp,
        "host_name": env.get("host") or "",
        "executable": "stepwise ./ablate",
        # Bencher's cpp_google adapter refuses a context without caches; stepwise measures none.
        "caches": [],
        "load_avg": [],
        "library_build_type": "release",
    }
    if env.get("cpu_threads"):
        ctx["num_cpus"] = int(env["cpu_threads"])
    # Extra context is string pairs, as --benchmark_context=k=v would add them.
    extra = {
        "stepwise_run_id": r.run_id,
        "device": r.device_name,
        "device_kind": r.device_kind,
        "torch_version": env.get("torch_version"),
        "cuda_runtime_version": env.get("cuda_runtime_version"),
        "driver_version": env.get("driver_version"),
        "git_commit": r.git_commit,
        "git_dirty": str(r.git_dirty).lower(),
        "preset": r.preset,
        "seq_len": r.seq_len,
        "clock": cfg["timing"].get("clock"),
    }
    ctx.update({k: str(v) for k, v in extra.items() if v is not None})
    return ctx


def gbench(results: list[Result], aggregates_only: bool = False) -> dict:
    """google/benchmark JSON as v1.7 writes it with --benchmark_repetitions=<steps>."""
    measured = [r for r in results if r.ok and r.samples_ms]
    rows: list[dict] = []
    for family, r in enumerate(measured):
        name, times, n = bench_name(r), r.samples_ms, len(r.samples_ms)
        counters = _per_step(r)
        common = {"family_index": family, "per_family_instance_index": 0, "run_name": name}
        if not aggregates_only:
            for i, t in enumerate(times):
                rows.append(
                    {
                        "name": name,
                        **common,
                        "run_type": "iteration",
                        "repetitions": n,
                        "repetition_index": i,
                        "threads": 1,
                        "iterations": 1,
                        "real_time": t,
                        "cpu_time": t,
                        "time_unit": "ms",
                        **{k: v[i] for k, v in counters.items()},
                    }
                )
        if n < 2:
            continue  # google/benchmark reports no aggregates for a single repetition
        own = _stats(times)
        step_ms = r.step_ms
        counter_stats = {k: _stats(v) for k, v in counters.items()}
        for agg in ("mean", "median", "stddev", "cv"):
            # Time aggregates are the engine's own statistics where it wrote them.
            value = step_ms.get(agg) if step_ms.get(agg) is not None else own[agg]
            rows.append(
                {
                    "name": f"{name}_{agg}",
                    **common,
                    "run_type": "aggregate",
                    "repetitions": n,
                    "threads": 1,
                    "aggregate_name": agg,
                    "aggregate_unit": "percentage" if agg == "cv" else "time",
                    "iterations": n,
                    "real_time": value,
                    "cpu_time": value,
                    "time_unit": "ms",
                    **{k: s[agg] for k, s in counter_stats.items()},
                }
            )
    context = _context(measured[0] if measured else results[0])
    return {"context": context, "benchmarks": rows}


def _range(r: Result, value: float) -> str | None:
    noise = r.step_ms.get("noise")
    # github-action-benchmark parses "± <number>"; the half-width of the median's 95% CI.
    return f"± {noise * value:.6g}" if noise is not None else None


def _extra(r: Result) -> str:
    s = r.step_ms
    loss = (
        f"loss vs libtorch {r.loss_vs_libtorch.get('status') or DASH}"
        if not r.is_libtorch
        else f"loss check {r.loss_status or DASH}"
    )
    mark = measurement_mark(r)
    return (
        f"n={len(r.samples_ms)} steps{f' ({mark})' if mark else ''}; "
        f"p10–p90 {fmt_ms(s.get('p10'))}–{fmt_ms(s.get('p90'))} ms; "
        f"{r.device_name}; {r.preset} batch {r.batch_size}×{r.seq_len}; {r.implementation}; "
        f"commit {r.git_commit[:12]}; {loss}"
    )


def _entry(name: str, unit: str, value: float, rng: str | None, extra: str) -> dict:
    e = {"name": name, "unit": unit, "value": value, "extra": extra}
    if rng is not None:
        e["range"] = rng
    return e


SPEEDUPS = (
    ("speedup_vs_baseline", "speedup-vs-baseline", x_baseline),
    ("speedup_vs_previous", "speedup-vs-previous", x_previous),
)


def speedups(results: list[Result]) -> dict[str, dict[str, tuple[Speedup, Result]]]:
    """{result name: {metric: (speedup with its interval, what it is against)}}, from each suite's ratio chain
    (libtorch rows only; a suite's reference itself has no speedup)."""
    out: dict[str, dict[str, tuple[Speedup, Result]]] = {}
    groups, _ = group_suites(results[0].run_id if results else "", results)
    for group in groups:
        for step in build_chain(group.results):
            for metric, _, get in SPEEDUPS:
                ref = step.base if metric == "speedup_vs_baseline" else step.previous
                sp = get(step) if ref is not None and ref is not step else None
                if sp is not None:
                    out.setdefault(step.result.name, {})[metric] = (sp, ref.result)
    return out


def _speedup_extra(sp: Speedup, ref: Result) -> str:
    if not sp.has_interval:
        return f"vs {ref.name}; too few steps for an interval"
    text = f"vs {ref.name}; 95% CI {sp.lo:.4g}–{sp.hi:.4g}"
    return text + ("" if sp.measurable else "; no measurable change")


def github_action_benchmark(results: list[Result]) -> tuple[list[dict], list[dict]]:
    """(customBiggerIsBetter, customSmallerIsBetter) arrays."""
    bigger, smaller = [], []
    ratios = speedups(results)
    for r in (r for r in results if r.ok):
        name, extra = bench_name(r), _extra(r)
        bigger.append(_entry(f"{name}/tokens_per_s", "tok/s", r.tokens_per_s, _range(r, r.tokens_per_s), extra))
        for metric, (sp, ref) in ratios.get(r.name, {}).items():
            # The action takes one ± number: the interval's larger side; extra has the interval itself.
            rng = f"± {sp.halfwidth:.4g}" if sp.has_interval else None
            bigger.append(_entry(f"{name}/{metric}", "x", sp.value, rng, _speedup_extra(sp, ref)))
        smaller.append(_entry(f"{name}/step_ms", "ms", r.median_ms, _range(r, r.median_ms), extra))
        if r.peak_reserved_bytes is not None:
            smaller.append(_entry(f"{name}/peak_reserved", "MiB", r.peak_reserved_bytes / MIB, None, extra))
    return bigger, smaller


def bmf(results: list[Result]) -> dict:
    """Bencher Metric Format: latency in ns (Bencher's unit), throughput in tokens/s, peak memory in bytes."""
    out: dict = {}
    ratios = speedups(results)
    for r in (r for r in results if r.ok):
        s, tokens = r.step_ms, r.tokens_per_step
        metrics: dict = {"latency": {"value": s["median"] * 1e6}, "throughput": {"value": r.tokens_per_s}}
        if s.get("p10") is not None and s.get("p90") is not None:
            metrics["latency"].update(lower_value=s["p10"] * 1e6, upper_value=s["p90"] * 1e6)
            metrics["throughput"].update(lower_value=tokens * 1000.0 / s["p90"], upper_value=tokens * 1000.0 / s["p10"])
        if r.peak_reserved_bytes is not None:
            metrics["peak-memory"] = {"value": float(r.peak_reserved_bytes)}
        for metric, slug, _ in SPEEDUPS:
            if metric in ratios.get(r.name, {}):
                sp, _ref = ratios[r.name][metric]
                metrics[slug] = {"value": float(sp.value)}
                if sp.has_interval:
                    metrics[slug].update(lower_value=float(sp.lo), upper_value=float(sp.hi))
        out[bench_name(r)] = metrics
    return out


def write_exports(directory: Path, results: list[Result]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    bigger, smaller = github_action_benchmark(results)
    payloads = dict(zip(FILES, (gbench(results), gbench(results, aggregates_only=True), bigger, smaller, bmf(results))))
    paths = []
    for name, payload in payloads.items():
        path = directory / name
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
