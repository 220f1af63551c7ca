"""How numbers read, and the Table that holds them: one format per quantity, one table, three renderings.

report.md, the dashboard and the gate's terminal output must show the same figures the same way, so every cell is
formatted here — tokens, ratios, a speedup with its interval ("1.06× (0.98–1.15): no measurable change"), times,
memory, percentages, rates — and a Table holds cells already formatted as text, rendered as Markdown, HTML or plain
text without deciding anything. It knows nothing of results or of the gate (only the Speedup type, to annotate).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the annotations only
    from ..stats.speedup import Speedup

# --- number formats ------------------------------------------------------------------------------

DASH = "—"
GIB = 1024**3
MIB = 1024**2


def percent_change(ratio: float) -> str:
    """A ratio as the signed change it stands for: 1.1 → '+10.0%'."""
    return f"{100 * (ratio - 1):+.1f}%"


def fmt_tokens(x: float | None) -> str:
    return DASH if x is None else f"{x:,.0f}"


def fmt_ratio(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}×"


NO_CHANGE = "no measurable change"
NO_INTERVAL = "too few steps for an interval"


def no_interval(sp: Speedup) -> str:
    return f"too few {sp.unit} for an interval"


def fmt_speedup(sp: Speedup | None) -> str:
    """'2.21× (2.15–2.27)'; '1.06× (0.98–1.15): no measurable change' when the 95% interval contains 1, so it
    never reads as a gain; '1.06× (too few steps for an interval)' when there are too few steps for one."""
    if sp is None:
        return DASH
    if not sp.has_interval:
        return f"{sp.value:.2f}× ({no_interval(sp)})"
    cell = f"{sp.value:.2f}× ({sp.lo:.2f}–{sp.hi:.2f})"
    return cell if sp.measurable else f"{cell}: {NO_CHANGE}"


def fmt_speedup_brief(sp: Speedup | None) -> str:
    """A speedup where many stand in one row (a sweep's points): '1.23× [1.10–1.35]'; 'n.s.' after it when the 95%
    interval contains 1 (no measurable change); '1.23× [too few steps for an interval]' without one."""
    if sp is None:
        return DASH
    if not sp.has_interval:
        return f"{sp.value:.2f}× [{no_interval(sp)}]"
    cell = f"{sp.value:.2f}× [{sp.lo:.2f}–{sp.hi:.2f}]"
    return cell if sp.measurable else f"{cell} n.s."


def fmt_ms(x: float | None) -> str:
    if x is None:
        return DASH
    if x >= 100:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_ms_spread(median: float | None, lo: float | None, hi: float | None) -> str:
    if median is None:
        return DASH
    if lo is None or hi is None:
        return fmt_ms(median)
    return f"{fmt_ms(median)} ({fmt_ms(lo)}–{fmt_ms(hi)})"


def fmt_memory(n_bytes: float | None) -> str:
    if n_bytes is None:
        return DASH
    if n_bytes >= GIB:
        return f"{n_bytes / GIB:.2f} GiB"
    return f"{n_bytes / MIB:.0f} MiB"


def fmt_percent(fraction: float | None, digits: int = 1) -> str:
    return DASH if fraction is None else f"{100 * fraction:.{digits}f}%"


def fmt_signed_percent(fraction: float | None, digits: int = 1) -> str:
    return DASH if fraction is None else f"{100 * fraction:+.{digits}f}%"


def fmt_flags(names: list[str]) -> str:
    return ", ".join(names) if names else DASH


_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def time_unit(seconds: float) -> tuple[float, str]:
    """The largest unit in which `seconds` is at least 1 (ns for anything shorter)."""
    return next(((scale, name) for scale, name in _TIME_UNITS if abs(seconds) >= scale), _TIME_UNITS[-1])


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    scale, name = time_unit(seconds)
    return f"{fmt_ms(seconds / scale)} {name}"


def fmt_duration_range(lo: float, hi: float, like: float) -> str:
    """`lo–hi` in the unit `fmt_duration(like)` uses, so a spread reads beside its median."""
    scale, name = time_unit(like)
    return f"{fmt_ms(lo / scale)}–{fmt_ms(hi / scale)} {name}"


def fmt_rate(value: float | None, unit: str, binary: bool = False) -> str:
    """A per-second counter with an SI prefix (binary for bytes): '1.23 TFLOP/s', '715 MiB/s',
    '94.1 M elements/s' (a prefix joins a symbol but not a word)."""
    if value is None:
        return DASH
    base, prefixes = (1024.0, ("", "Ki", "Mi", "Gi", "Ti", "Pi")) if binary else (1000.0, ("", "k", "M", "G", "T", "P"))
    k = 0
    while abs(value) >= base and k < len(prefixes) - 1:
        value /= base
        k += 1
    joined = unit[:1].isupper() or not prefixes[k]
    return f"{fmt_ms(value)} {prefixes[k]}{'' if joined else ' '}{unit}"


# --- the table and its renderings ----------------------------------------------------------------


@dataclass
class Table:
    """Cells already formatted as text, so one table renders the same as Markdown, HTML and plain text."""

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
    lines.append(
        "|" + "|".join("---:" if table.column_align(i) == "r" else "---" for i in range(len(table.headers))) + "|"
    )
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
            c.rjust(w) if table.column_align(i) == "r" else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    # A table of named values (a run's header) has no column headings: no heading line, no rule.
    out = [line(table.headers), "  ".join("-" * w for w in widths)] if any(table.headers) else []
    out += [line(r) for r in table.rows]
    return "\n".join(([table.caption] if table.caption else []) + out)
