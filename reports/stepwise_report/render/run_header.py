"""The run header: what a run measured on, with which software and settings, and how its configurations fared.

It opens every run's section, so a reader knows the device, the software, the commit, the preset, batch × sequence,
the timing settings and how many configurations ran before reading any ratio; a value that differs between a run's
results is listed once per value, never one of them picked.
"""

from __future__ import annotations

from collections import defaultdict

from ..read.results import Result, Run, implementation_rank
from .formats import DASH, Table, fmt_percent


def _distinct(results: list[Result], get) -> str:
    values = []
    for r in results:
        v = get(r)
        if v not in (None, "") and v not in values:
            values.append(v)
    return "; ".join(str(v) for v in values) or DASH


def batch_seq(results: list[Result]) -> str:
    def one(r: Result) -> str:
        base = r.config.get("base_batch_size") or r.batch_size
        return f"{base} × {r.seq_len}"

    text = _distinct(results, one)
    probed = sorted(
        {r.batch_size for r in results if r.batch_size != (r.config.get("base_batch_size") or r.batch_size)}
    )
    return text + (f" (max_batch measured batch {', '.join(map(str, probed))})" if probed else "")


def _model(r: Result) -> str:
    m = r.config.get("model") or {}
    params = m.get("parameters")
    shape = f"{m.get('n_layer')} layers × {m.get('n_embd')} wide, {m.get('n_head')} heads"
    return f"{r.preset} ({params / 1e6:.1f}M parameters; {shape})" if params else r.preset


def _cuda_versions(r: Result) -> str | None:
    keys = ("cuda_runtime_version", "driver_version", "cudnn_version")
    if not any(r.env.get(k) for k in keys):
        return None
    return " / ".join(str(r.env.get(k) or DASH) for k in keys)


def _run_cpu(r: Result) -> str:
    return f"{r.env.get('cpu_model') or DASH} ({r.env.get('cpu_threads') or '?'} threads)"


def _timing(r: Result) -> str:
    t = r.config["timing"]
    return (
        f"{t['clock']}, {t['warmup']} warm-up, {t['min_steps']}–{t['max_steps']} steps, "
        f"max noise {fmt_percent(t.get('max_noise'))}"
    )


def _cpu_bf16(r: Result) -> str | None:
    """Whether this CPU runs bf16 natively, as the engine says (`env.cpu_bf16_native`); None on a GPU or unknown."""
    if r.device_kind != "cpu" or r.cpu_bf16_native is None:
        return None
    at = f"ATen dispatches at {r.cpu_capability}" if r.cpu_capability else None
    if r.cpu_bf16_native:
        details = ", ".join(filter(None, [", ".join(r.env.get("cpu_bf16_flags") or []), at]))
        return f"native ({details})" if details else "native"
    return f"emulated: {r.bf16_emulated_because}; bf16 rows run far slower than fp32 here"


def configuration_counts(run: Run) -> str:
    """How many configurations ran, were skipped or failed; each incomplete suite with what it misses; and the
    rows of other implementations, counted apart."""
    rs = run.libtorch
    statuses = ", ".join(
        f"{sum(r.status == s for r in rs)} {s}" for s in ("ok", "skipped", "failed") if any(r.status == s for r in rs)
    )
    text = f"{len(rs)} ({statuses})" if rs else "0"
    for g in run.suites:
        if g.incomplete:
            text += f"; {g.name}: {g.incomplete} (missing {', '.join(g.missing)})"
    others = run.others
    if others:
        by_impl = defaultdict(int)
        for r in others:
            by_impl[r.implementation] += 1
        impls = ", ".join(f"{by_impl[k]} {k}" for k in sorted(by_impl, key=implementation_rank))
        ok = sum(r.ok for r in others)
        text += f"; plus {len(others)} PyTorch Python rows ({impls}; {ok} ok)"
    return text


def run_header(run: Run) -> Table:
    rs = run.results
    pairs = [
        ("device", _distinct(rs, lambda r: r.device_key)),
        ("torch", _distinct(rs, lambda r: r.env.get("torch_version"))),
        ("CUDA runtime / driver / cuDNN", _distinct(rs, _cuda_versions)),
        ("compiler", _distinct(rs, lambda r: r.env.get("compiler"))),
        ("CPU", _distinct(rs, _run_cpu)),
    ]
    if any(_cpu_bf16(r) for r in rs):
        pairs.append(("CPU bf16", _distinct(rs, _cpu_bf16)))
    python = _distinct(rs, lambda r: ", ".join(f"{k} {v}" for k, v in (r.env.get("python") or {}).items() if v))
    if python != DASH:
        pairs.append(("Python rows", python))
    pairs += [
        ("git commit", _distinct(rs, lambda r: r.git_commit + (" (dirty)" if r.git_dirty else ""))),
        ("date (UTC)", f"{run.started:%Y-%m-%d %H:%M:%S}"),
        ("preset", _distinct(rs, _model)),
        ("batch × sequence", batch_seq(rs)),
        ("timing", _distinct(rs, _timing)),
        ("host", _distinct(rs, lambda r: r.env.get("host"))),
        ("configurations", configuration_counts(run)),
    ]
    sweep = _distinct(rs, _sweep_point)
    if sweep != DASH:
        pairs.append(("sweep", sweep))
    return Table(["", ""], [[k, v] for k, v in pairs], css_class="header")


def _sweep_point(r: Result) -> str | None:
    """'20261125T101500Z_sweep_cpu, point 3 of 4: preset mini, seq_len 64' for a run that is one point of a sweep."""
    s = r.sweep
    if not s:
        return None
    point = ", ".join(f"{axis} {s['point'][axis]}" for axis in s["axes"] if axis in (s.get("point") or {}))
    return f"{s['id']}, point {s['index'] + 1} of {s['count']}" + (f": {point}" if point else "")
