"""The run header: device, versions, commit, date, preset, batch × sequence and timing of one run."""

from __future__ import annotations

from . import fmt
from .results import Result, Run
from .table import Table


def _distinct(results: list[Result], get) -> str:
    values = []
    for r in results:
        v = get(r)
        if v not in (None, "") and v not in values:
            values.append(v)
    return "; ".join(str(v) for v in values) or fmt.DASH


def batch_seq(results: list[Result]) -> str:
    def one(r: Result) -> str:
        base = r.config.get("base_batch_size") or r.batch_size
        return f"{base} × {r.seq_len}"

    text = _distinct(results, one)
    probed = sorted({r.batch_size for r in results if r.batch_size != (r.config.get("base_batch_size") or r.batch_size)})
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
    return " / ".join(str(r.env.get(k) or fmt.DASH) for k in keys)


def _cpu(r: Result) -> str:
    return f"{r.env.get('cpu_model') or fmt.DASH} ({r.env.get('cpu_threads') or '?'} threads)"


def _timing(r: Result) -> str:
    t = r.config["timing"]
    return (f"{t['clock']}, {t['warmup']} warm-up, {t['min_steps']}–{t['max_steps']} steps, "
            f"max noise {fmt.percent(t.get('max_noise'))}")


def run_header(run: Run) -> Table:
    rs = run.results
    statuses = ", ".join(f"{sum(r.status == s for r in rs)} {s}" for s in ("ok", "skipped", "failed")
                         if any(r.status == s for r in rs))
    pairs = [
        ("device", _distinct(rs, lambda r: r.device_key)),
        ("torch", _distinct(rs, lambda r: r.env.get("torch_version"))),
        ("CUDA runtime / driver / cuDNN", _distinct(rs, _cuda_versions)),
        ("compiler", _distinct(rs, lambda r: r.env.get("compiler"))),
        ("CPU", _distinct(rs, _cpu)),
        ("git commit", _distinct(rs, lambda r: r.git_commit + (" (dirty)" if r.git_dirty else ""))),
        ("date (UTC)", f"{run.started:%Y-%m-%d %H:%M:%S}"),
        ("preset", _distinct(rs, _model)),
        ("batch × sequence", batch_seq(rs)),
        ("timing", _distinct(rs, _timing)),
        ("host", _distinct(rs, lambda r: r.env.get("host"))),
        ("configurations", f"{len(rs)} ({statuses})"),
    ]
    return Table(["", ""], [[k, v] for k, v in pairs], css_class="header")
