"""The speedrun's budget search in the report: the budget.json that ./ablate --find-budget writes into its --out folder
(./run_all.sh: budget_<suite>/), read as one search. Per row: its N with the bracket that bounds it, N and the
seconds at N over the baseline's as intervals from the two brackets, beside the record table's published ratio; and
every probe's verdict (the record rule at each budget probed: mean ± sd, n, t, p). The figures are the search's own,
computed once by the engine (ablations/run/budget_document.cpp); this draws them, from the BudgetSearch that
budget_file.py reads.

A search's probes are result documents of their own (budget_<N>/); they are the search's working rather than runs a
reader compares, so the report reads the search from budget.json and leaves its probes out of the run sections
(inputs.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..analysis.reference import REFERENCE_DIR
from ..read.budget_file import BudgetSearch
from .formats import DASH, Table


def _interval(cell: dict | None, key: str, decimals: int, prefix: str = "") -> str:
    """ "×0.44 (0.30–0.67]": a figure known to lie in (low, high]; "∞" where nothing bounds it above."""
    if not cell or cell.get(key) is None:
        return DASH
    high = "∞" if cell.get("high") is None else f"{cell['high']:.{decimals}f}"
    return f"{prefix}{cell[key]:.{decimals}f} ({cell.get('low') or 0:.{decimals}f}–{high}]"


def _bracket(row: dict) -> str:
    n = row.get("budget")
    if n is None:
        return DASH
    return f"(0, {n}] below the grid" if row.get("below") is None else f"({row['below']}, {n}]"


def published_ratios(search: BudgetSearch, directory: Path = REFERENCE_DIR) -> dict[int, float]:
    """The record table's minutes over its baseline's for each row of the search that has a published counterpart:
    the baseline by position, every other row by the flags it adds (as reference.py matches a suite's steps)."""
    path = directory / f"{search.data.get('suite')}.json"
    if not path.exists():
        return {}
    ref = json.loads(path.read_text(encoding="utf-8"))
    rows = ref.get("rows", [])
    base = next((r for r in rows if r.get("baseline")), None)
    if not base:
        return {}
    out = {}
    for row in search.data.get("rows") or []:
        added = set(row.get("added") or [])
        match = base if row["index"] == 0 else next((r for r in rows if set(r.get("added", [])) == added), None)
        if match is not None and (added or row["index"] == 0):
            out[row["index"]] = match["minutes_to_target"] / base["minutes_to_target"]
    return out


def budget_table(search: BudgetSearch) -> Table:
    """Per row: N (none: the rule does not hold at the grid's last budget), the bracket N lies in, N and the seconds
    at N over the baseline's as intervals from the two brackets, the published ratio, and what the search cost."""
    if search.old:
        rows = [[str(r["index"]), r["label"], str(r.get("budget") or "none")] for r in search.data.get("rows") or []]
        return Table(["#", "row", "N"], rows, align=["r", "l", "r"])
    published = published_ratios(search)
    rows = []
    for row in search.data.get("rows") or []:
        if row.get("skipped"):
            rows.append([str(row["index"]), row["label"], "skipped", DASH, DASH, DASH, DASH, DASH, row["skipped"]])
            continue
        base = row["index"] == 0
        pub = published.get(row["index"])
        cost = f"{row['search_s']:.0f} s, {row['steps_per_seed']:,} steps a seed"
        rows.append(
            [
                str(row["index"]),
                row["label"],
                DASH if row.get("budget") is None else str(row["budget"]),
                _bracket(row),
                "baseline" if base else _interval(row.get("n_ratio"), "ratio", 2, "×"),
                _interval(row.get("seconds_at_n"), "median", 1),
                "baseline" if base else _interval(row.get("seconds_ratio"), "ratio", 2, "×"),
                DASH if pub is None or base else f"×{pub:.2f}",
                cost + (", branched" if row.get("branched") else ", from scratch"),
            ]
        )
    return Table(
        ["#", "row", "N", "N in", "× base N", "seconds at N", "× base s", "published", "search"],
        rows,
        align=["r", "l", "r", "r", "r", "r", "r", "r", "l"],
    )


def budget_probes_table(search: BudgetSearch) -> Table:
    """Every probe's verdict: the record rule at each budget a row probed, with the figures it rests on."""
    rows = []
    for row in [] if search.old else search.data.get("rows") or []:
        for p in row.get("probes") or []:
            loss = DASH if p.get("mean") is None else f"{p['mean']:.4f} ± {p.get('sd') or 0:.4f} ({p.get('n')})"
            rows.append(
                [
                    str(row["index"]),
                    row["label"],
                    str(p["budget"]),
                    p["outcome"] + ("" if p.get("mean") is not None else f": {p.get('reason', '')}"),
                    loss,
                    DASH if p.get("t") is None else f"{p['t']:.2f}",
                    DASH if p.get("p") is None else f"{p['p']:.3g}",
                    DASH if p.get("seconds_median") is None else f"{p['seconds_median']:.1f}",
                ]
            )
    return Table(
        ["#", "row", "N", "rule", "loss at N ± sd (n)", "t", "p one-sided", "seconds"],
        rows,
        align=["r", "l", "r", "l", "r", "r", "r", "r"],
    )


def budget_notes(search: BudgetSearch) -> list[str]:
    data = search.data
    grid = ", ".join(map(str, data.get("grid") or []))
    if search.old:
        return [
            f"grid: {grid} steps; written by scripts/find_budget.py, before ./ablate --find-budget: no bracket on N "
            "and no probe's verdict (re-run the search for them)."
        ]
    notes = [
        f"grid: {grid} steps ({data.get('grid_from')}); every probe trains each seed all N steps on a schedule that "
        f"ends at N; the rule: the seeds' mean validation loss at N below {data.get('target_loss')} by a one-sided "
        f"t-test at p < {data.get('record_p')}, over {data.get('seeds')} seeds.",
        "N: the smallest budget at which the row's rule holds and holds at every budget probed above it; N in: it "
        "lies above the budget below it, where the rule failed or was not judged (below the grid: under the first); "
        "× base: over the baseline's, each side within its bracket; seconds at N: the median over seeds of the timed "
        "seconds of those N steps, and at the bracket's low end; published: the record table's minutes over its "
        "baseline's (8× H100).",
        "search: a row on the trapezoid trains one line per seed and branches each budget's cool-down off it; a row "
        "whose schedule decays from its first step (the cosine) trains each budget from scratch, from the grid's last "
        "down to the first budget where the rule does not hold.",
    ]
    notes += [
        f"{r['index']} {r['label']}: {r['summary']}" for r in data.get("rows") or [] if not r.get("monotone", True)
    ]
    if not search.finished:
        notes.insert(0, "this search did not finish: no row's N is known yet (its probes so far are in the folder)")
    return notes
