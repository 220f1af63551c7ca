"""Distributed scaling: tok/s on N ranks against N × tok/s of the same configuration on one."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from . import fmt
from .reference import Reference
from .results import Result, parse_time
from .table import Table


@dataclass
class Scaling:
    single: Result
    multi: Result

    @property
    def world_size(self) -> int:
        return self.multi.world_size

    @property
    def efficiency(self) -> float:
        # tokens_per_s of a distributed result is global (all ranks), so this is the usual
        # weak-scaling efficiency: 1.0 means N ranks did N times the work of one.
        return self.multi.tokens_per_s / (self.world_size * self.single.tokens_per_s)


def _newest(results: list[Result]) -> Result:
    return max(results, key=lambda r: parse_time(r.timestamp))


def find_scaling(results: list[Result]) -> list[Scaling]:
    """Pairs of the same configuration on the same device model, on 1 and on N ranks."""
    groups: dict[tuple, dict[int, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.ok:
            groups[(r.device_key, r.config_key)][r.world_size].append(r)
    pairs = []
    for by_size in groups.values():
        if 1 not in by_size:
            continue
        single = _newest(by_size[1])
        for size in sorted(s for s in by_size if s > 1):
            pairs.append(Scaling(single, _newest(by_size[size])))
    return sorted(pairs, key=lambda p: (p.multi.name, p.world_size))


def _rank_spread(r: Result) -> str:
    medians = (r.distributed or {}).get("rank_step_ms_median") or []
    if not medians:
        return fmt.DASH
    spread = max(medians) / min(medians) - 1 if min(medians) > 0 else None
    slowest = (r.distributed or {}).get("slowest_rank")
    return f"{fmt.signed_percent(spread)} (slowest rank {slowest})" if slowest is not None else fmt.signed_percent(spread)


def scaling_table(pairs: list[Scaling]) -> Table:
    headers = ["configuration", "device", "ranks", "backend", "tok/s on 1", "tok/s on N (global)",
               "per rank", "scaling efficiency", "rank step-time spread"]
    rows = []
    for p in pairs:
        d = p.multi.distributed or {}
        rows.append([
            p.multi.name, p.multi.device_name, str(p.world_size), str(d.get("backend") or fmt.DASH),
            fmt.tokens(p.single.tokens_per_s), fmt.tokens(p.multi.tokens_per_s),
            fmt.tokens(p.multi.tokens_per_s / p.world_size), fmt.percent(p.efficiency), _rank_spread(p.multi),
        ])
    return Table(headers, rows, align=["l", "l", "r", "l", "r", "r", "r", "r", "r"], css_class="scaling")


def published_scaling_table(refs: list[Reference]) -> Table | None:
    rows = []
    for ref in refs:
        for s in ref.scaling:
            one = next((r for r in ref.rows if r.step == s.get("single_device_step")), None)
            if one is None or one.throughput is None:
                continue
            n = int(s["world_size"])
            rows.append([ref.title, s["label"], str(n), fmt.tokens(one.throughput), fmt.tokens(s["tokens_per_s"]),
                         fmt.percent(s["tokens_per_s"] / (n * one.throughput))])
    if not rows:
        return None
    return Table(["source", "setup", "ranks", "tok/s on 1", "tok/s on N (global)", "scaling efficiency"],
                 rows, align=["l", "l", "r", "r", "r", "r"], css_class="published")
