"""Distributed scaling: tokens/s on N ranks against N times one rank, beside the published multi-GPU figures.

A data-parallel result alone says nothing of scaling; paired with the same configuration on one rank
(analysis.find_scaling) it gives the efficiency, and the ranks' step-time spread shows whether one rank held the
others back.
"""

from __future__ import annotations

from ..analysis.analysis import Scaling
from ..analysis.reference import Reference
from ..read.results import Result
from .formats import DASH, Table, fmt_percent, fmt_signed_percent, fmt_tokens
from .tables import with_mark


def _rank_spread(r: Result) -> str:
    medians = (r.distributed or {}).get("rank_step_ms_median") or []
    if not medians:
        return DASH
    spread = max(medians) / min(medians) - 1 if min(medians) > 0 else None
    slowest = (r.distributed or {}).get("slowest_rank")
    return (
        f"{fmt_signed_percent(spread)} (slowest rank {slowest})" if slowest is not None else fmt_signed_percent(spread)
    )


def scaling_table(pairs: list[Scaling]) -> Table:
    headers = [
        "configuration",
        "device",
        "ranks",
        "backend",
        "tok/s on 1",
        "tok/s on N (global)",
        "per rank",
        "scaling efficiency",
        "rank step-time spread",
    ]
    rows = []
    for p in pairs:
        d = p.multi.distributed or {}
        rows.append(
            [
                with_mark(p.multi.name, p.multi),
                p.multi.device_name,
                str(p.world_size),
                str(d.get("backend") or DASH),
                fmt_tokens(p.single.tokens_per_s),
                fmt_tokens(p.multi.tokens_per_s),
                fmt_tokens(p.multi.tokens_per_s / p.world_size),
                fmt_percent(p.efficiency),
                _rank_spread(p.multi),
            ]
        )
    return Table(headers, rows, align=["l", "l", "r", "l", "r", "r", "r", "r", "r"], css_class="scaling")


def published_scaling_table(refs: list[Reference]) -> Table | None:
    rows = []
    for ref in refs:
        for s in ref.scaling:
            one = next((r for r in ref.rows if r.step == s.get("single_device_step")), None)
            if one is None or one.throughput is None:
                continue
            n = int(s["world_size"])
            rows.append(
                [
                    ref.title,
                    s["label"],
                    str(n),
                    fmt_tokens(one.throughput),
                    fmt_tokens(s["tokens_per_s"]),
                    fmt_percent(s["tokens_per_s"] / (n * one.throughput)),
                ]
            )
    if not rows:
        return None
    return Table(
        ["source", "setup", "ranks", "tok/s on 1", "tok/s on N (global)", "scaling efficiency"],
        rows,
        align=["l", "l", "r", "r", "r", "r"],
        css_class="published",
    )
