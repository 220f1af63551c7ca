"""The engine's flag table as the report reads it, and the table that shows it.

The engine declares each flag once (ablations/flags/) and writes its whole table into every result (`flags_info`)
beside the flags that result asked for, so the report reads the table from the results: a flag added to the engine
reaches the report with the first result that knows it, where a copy kept here fell behind (it knew ten of fifteen).
Only when no result carries the table (results written before it) is the built engine asked, `ablate --list-flags
--json`; with neither, what needs the names (checking the published tables' keys) is skipped and the report says so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from ..read.results import Result
from .formats import DASH, Table

ROOT = Path(__file__).resolve().parents[3]
ABLATE = Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build") / "ablations" / "ablate"
# The description of a flag a result ran with that no flag table describes: shown, never dropped.
UNDESCRIBED = "(not described by the results' flag table)"
NOT_CHECKED = (
    "the published tables' flag names were not checked: no result carries the engine's flag table (flags_info) "
    f"and no ablate binary is built at {ABLATE}"
)


def flag_table(results: list[Result]) -> list[dict]:
    """Every flag the results know, once each, in the engine's order: the results' `flags_info` (the first description
    of a name wins, so pass the newest results first), then any flag a result asked for, added, removed or had
    skipped that no table describes, so that nothing a result carries is dropped."""
    table: dict[str, dict] = {}
    for r in results:
        for f in r.flags_info:
            if f.get("name") and f["name"] not in table:
                table[f["name"]] = f
    for r in results:
        for name in (*r.flags_requested, *r.flags, *r.added, *r.removed, *r.flags_skipped):
            if name not in table:
                table[name] = {"name": name, "summary": UNDESCRIBED, "applies": None}
    return list(table.values())


def listed_flags(binary: Path | None = None) -> list[dict] | None:
    """The built engine's own table (`ablate --list-flags --json`; `binary` defaults to ABLATE); None where no binary
    is built or it fails."""
    binary = binary or ABLATE
    if not binary.is_file():
        return None
    try:
        proc = subprocess.run(
            [str(binary), "--list-flags", "--json"], capture_output=True, text=True, timeout=60, check=True
        )
        table = json.loads(proc.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return [f for f in table if isinstance(f, dict) and f.get("name")] if isinstance(table, list) else None


def flag_names(results: list[Result], binary: Path | None = None) -> set[str] | None:
    """The names of the engine's flags as far as the report can know them: the tables the results carry and every
    flag they name, or the built engine's table where no result carries one; None with neither."""
    described = {f["name"] for r in results for f in r.flags_info if f.get("name")}
    if not described:
        described = {f["name"] for f in listed_flags(binary) or []}
    if not described:
        return None
    return described | {f["name"] for f in flag_table(results)}


def _applies(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return DASH if value is None else str(value)


def flags_table(flags_info: list[dict]) -> Table:
    rows = [[f.get("name", ""), f.get("summary", ""), _applies(f.get("applies"))] for f in flags_info]
    return Table(["flag", "what it does", "applies"], rows, css_class="flags")
