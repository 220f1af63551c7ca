"""The engine's flag table as the report shows it."""

from __future__ import annotations

from .formats import DASH, Table


def _applies(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return DASH if value is None else str(value)


def flags_table(flags_info: list[dict]) -> Table:
    rows = [[f.get("name", ""), f.get("summary", ""), _applies(f.get("applies"))] for f in flags_info]
    return Table(["flag", "what it does", "applies"], rows, css_class="flags")
