"""The speedrun's budget search as the report reads it: budget.json, which ./ablate --find-budget writes into its --out
folder (./run_all.sh: budget_<suite>/) when it starts and again when it ends, one search per file. This reads it;
budget_search.py draws it.

The search's probes are result documents of their own (budget_<N>/) under the same folder; inputs.py reads the
search from budget.json and leaves its probes out of the runs (search_root). Standard library only, as inputs.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# The file ./ablate --find-budget writes into its --out directory when it starts (the search under way) and again
# when it ends (with every row's N).
BUDGET_FILE = "budget.json"
# budget.json's version: 2, ./ablate --find-budget's; before it (none), scripts/find_budget.py's: no bracket and no
# probes' verdicts.
VERSION = 2


@dataclass
class BudgetSearch:
    path: Path
    data: dict

    @property
    def finished(self) -> bool:
        # An interrupted search keeps the rows it finished, and says it did not finish.
        return self.data.get("finished", self.data.get("rows") is not None)

    @property
    def old(self) -> bool:
        return self.data.get("version", 1) < VERSION


def search_root(path: Path, roots: set[Path]) -> bool:
    """Whether `path` lies under one of the budget searches' directories."""
    return any(root in path.parents for root in roots)


def load_search(path: Path) -> BudgetSearch:
    return BudgetSearch(path, json.loads(path.read_text(encoding="utf-8")))
