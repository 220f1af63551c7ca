"""Series of tok/s and peak memory per configuration across runs, for the trend plots."""

from __future__ import annotations

from collections import defaultdict

from .results import Run

Point = tuple[str, float | None, float | None]  # (run label, tok/s, peak reserved bytes)


def run_label(run: Run) -> str:
    # Dates first so that sorting labels sorts runs; the commit says what changed.
    commit = run.first.git_commit[:7] + ("+dirty" if run.first.git_dirty else "")
    return f"{run.started:%Y-%m-%d %H:%M:%S} {commit}"


def trend_series(runs: list[Run]) -> dict[tuple[str, str], dict[str, list[Point]]]:
    """{(device, suite): {configuration name: points oldest first}}, only where two or more runs contribute."""
    grouped: dict[tuple[str, str], dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    runs_seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in sorted(runs, key=lambda r: r.started):
        label = run_label(run)
        for group in run.suites:
            key = (group.device, group.name)
            for r in group.results:
                if r.ok:
                    grouped[key][r.name].append((label, r.tokens_per_s, r.peak_reserved_bytes))
                    runs_seen[key].add(run.run_id)
    return {k: dict(v) for k, v in grouped.items() if len(runs_seen[k]) >= 2}
