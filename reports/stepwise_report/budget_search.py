"""The speedrun's budget search in the report: scripts/find_budget.py's budget.json (./run_all.sh writes it into
budget_<suite>/), each row's smallest N at which the record rule holds and its seconds there against the baseline's,
beside the record table's published ratio.

A search's probes are whole runs of the suite at each N it tried; they are the search's working, not runs a reader
compares, so the report reads the search's table and leaves its probes out of the run sections (inputs.py).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from .formats import DASH, Table

# The file scripts/find_budget.py writes into its --out directory when it starts (the search under way) and again
# when it ends (with every row's N).
BUDGET_FILE = "budget.json"


@dataclass
class BudgetSearch:
    path: Path
    data: dict

    @property
    def finished(self) -> bool:
        return self.data.get("rows") is not None


def search_root(path: Path, roots: set[Path]) -> bool:
    """Whether `path` lies under one of the budget searches' directories."""
    return any(root in path.parents for root in roots)


def load_search(path: Path) -> BudgetSearch:
    return BudgetSearch(path, json.loads(path.read_text(encoding="utf-8")))


def _ratio(cell: dict | None) -> str:
    if not cell or cell.get("ratio") is None:
        return DASH
    text = f"×{cell['ratio']:.2f}"
    return text + (f" [{cell['low']:.2f}–{cell['high']:.2f}]" if cell.get("low") is not None else "")


def budget_table(search: BudgetSearch) -> Table:
    """Per row: its N (none: the rule does not hold even at the grid's last), N over the baseline's, the median timed
    seconds of its N steps and their ratio to the baseline's with the 95% interval, the published ratio, and the
    rule at N (the seeds' mean loss ± sd, n, the one-sided p)."""
    rows = []
    for row in search.data.get("rows") or []:
        rule = row.get("record_rule") or {}
        seconds = row.get("seconds_at_budget") or []
        at_n = DASH
        if rule.get("mean") is not None:
            p = DASH if rule.get("p") is None else f"{rule['p']:.3g}"
            at_n = f"{rule['mean']:.4f} ± {rule.get('sd') or 0:.4f} ({rule.get('n')}), p {p}"
        rows.append(
            [
                str(row["index"]),
                row["label"],
                str(row["budget"]) if row.get("budget") else "none",
                DASH if row.get("steps_ratio") is None else f"×{row['steps_ratio']:.2f}",
                f"{statistics.median(seconds):.1f}" if seconds else DASH,  # as find_budget's table
                "baseline" if row["index"] == 0 else _ratio(row.get("seconds_ratio")),
                DASH if row.get("published_ratio") is None else f"×{row['published_ratio']:.2f}",
                at_n,
            ]
        )
    return Table(
        ["#", "row", "N", "× base N", "seconds at N", "× base s [95%]", "published", "loss at N (n), p one-sided"],
        rows,
        align=["r", "l", "r", "r", "r", "r", "r", "l"],
    )


def budget_notes(search: BudgetSearch) -> list[str]:
    grid = search.data.get("grid") or []
    notes = [
        f"grid: {', '.join(map(str, grid))} steps (geometric, ending at --last or --max-steps); each probe a whole run of the "
        "suite with every schedule ending at its N and every seed training all N steps; the rows bisect the grid.",
        "N: the smallest budget at which the row's record rule holds (its seeds' mean validation loss at N below the "
        "target, one-sided t-test); seconds: the median over seeds of the timed seconds of those N steps; × base: "
        "against the baseline's at the baseline's own N, 95% percentile bootstrap; published: the record table's "
        "minutes over its baseline's (8× H100), the quantity the records publish.",
    ]
    if not search.finished:
        notes.insert(0, "this search did not finish: no row's N is known yet (its probes so far are in the folder)")
    return notes
