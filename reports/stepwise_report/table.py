"""A table of preformatted cells, rendered as Markdown, HTML or aligned plain text."""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    caption: str = ""
    # Per-column alignment, "l" or "r"; numbers read better right-aligned.
    align: list[str] = field(default_factory=list)
    # Row indices to highlight (e.g. a direction that differs from the published one).
    marked: set[int] = field(default_factory=set)
    css_class: str = ""

    def column_align(self, i: int) -> str:
        return self.align[i] if i < len(self.align) else "l"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(table: Table) -> str:
    lines = []
    if table.caption:
        lines += [f"*{table.caption}*", ""]
    lines.append("| " + " | ".join(_md_cell(h) for h in table.headers) + " |")
    lines.append("|" + "|".join("---:" if table.column_align(i) == "r" else "---"
                                for i in range(len(table.headers))) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    return "\n".join(lines)


def to_html(table: Table) -> str:
    cls = f' class="{table.css_class}"' if table.css_class else ""
    out = [f"<table{cls}>"]
    if table.caption:
        out.append(f"<caption>{html.escape(table.caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in table.headers) + "</tr></thead>")
    out.append("<tbody>")
    for n, row in enumerate(table.rows):
        row_cls = ' class="marked"' if n in table.marked else ""
        cells = "".join(
            f'<td class="{"num" if table.column_align(i) == "r" else "txt"}">{html.escape(c)}</td>'
            for i, c in enumerate(row)
        )
        out.append(f"<tr{row_cls}>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def to_text(table: Table) -> str:
    widths = [len(h) for h in table.headers]
    for row in table.rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if table.column_align(i) == "r" else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [line(table.headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in table.rows]
    return "\n".join(out)
