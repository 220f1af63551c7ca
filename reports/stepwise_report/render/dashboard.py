"""dashboard.html: the newest of each kind of section as one self-contained page (CSS and images inlined, no script,
no network), so it opens anywhere, from CI artifacts included.

The page shows the newest run, the newest micro-benchmark file of each device and the newest sweep, then the trends
and the tail; everything older is in report.md, as its subtitle says.
"""

from __future__ import annotations

import base64
import html
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from .document import Document, Figure, Heading, Notes, Para, SideBySide, TableBlock
from .formats import to_html

CSS = """
:root { --ink:#1d2329; --muted:#5b6570; --line:#d9dee3; --band:#f5f7f9; --accent:#2f6db5; --warn:#fff1e6; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0; }
header { padding: 18px 28px; border-bottom: 1px solid var(--line); background: var(--band); }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: var(--muted); }
main { padding: 8px 28px 40px; max-width: 1700px; }
h2 { margin-top: 34px; padding-bottom: 4px; border-bottom: 2px solid var(--accent); font-size: 19px; }
h3 { margin-top: 26px; font-size: 16px; }
h4 { margin-top: 18px; font-size: 14px; color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 12.5px; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 2px 0 4px; }
th, td { border: 1px solid var(--line); padding: 3px 7px; vertical-align: top; }
th { background: var(--band); text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tr.marked td { background: var(--warn); }
table.header td:first-child { font-weight: 600; color: var(--muted); white-space: nowrap; }
table.header th { display: none; }
.side { display: flex; flex-wrap: wrap; gap: 20px; align-items: flex-start; }
.side > div { flex: 0 1 auto; overflow-x: auto; }
ul.notes { color: var(--muted); font-size: 12.5px; margin: 4px 0 12px; padding-left: 20px; }
figure { margin: 12px 0 18px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12px; }
.msg { background: var(--warn); border-left: 4px solid #e0892b; padding: 6px 10px; margin: 10px 0; }
nav { font-size: 13px; margin-top: 8px; }
nav a { margin-right: 14px; color: var(--accent); }
"""


def _figure(fig: Figure, root: Path) -> str:
    # Inlined so the page stays one file that opens anywhere, with no network and no neighbours.
    data = base64.b64encode((root / f"{fig.path}.png").read_bytes()).decode("ascii")
    cap = html.escape(fig.caption)
    return f'<figure><img alt="{cap}" src="data:image/png;base64,{data}"><figcaption>{cap}</figcaption></figure>'


def _html_block(b, root: Path) -> str:
    if isinstance(b, Heading):
        return f'<h{b.level} id="{b.anchor}">{html.escape(b.text)}</h{b.level}>'
    if isinstance(b, Para):
        return f"<p>{html.escape(b.text)}</p>"
    if isinstance(b, Notes):
        return '<ul class="notes">' + "".join(f"<li>{html.escape(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, TableBlock):
        table = replace(b.table, caption=b.table.caption or b.title)
        return to_html(table)
    if isinstance(b, Figure):
        return _figure(b, root)
    if isinstance(b, SideBySide):
        return '<div class="side">' + "".join(f"<div>{_html_block(x, root)}</div>" for x in b.blocks) + "</div>"
    raise TypeError(f"unknown block {type(b).__name__}")


def newest_micro_per_device(doc: Document) -> list[list]:
    """The newest micro-benchmark file of each device (doc.micro is newest first)."""
    seen: dict[str, list] = {}
    for m, blocks in doc.micro:
        seen.setdefault(m.device or str(m.context.get("host_name")), blocks)
    return list(seen.values())


def render_dashboard(doc: Document, root: Path) -> str:
    """The page; `root` is the output directory the figures were written under."""
    newest = doc.runs[0][1] if doc.runs else []
    older = [run.run_id for run, _ in doc.runs[1:]]
    micro = newest_micro_per_device(doc)
    sweep = doc.sweeps[0][1] if doc.sweeps else []
    sections = [b for b in newest] + [b for blocks in micro for b in blocks] + sweep + doc.trends + doc.tail
    nav = [b for b in sections if isinstance(b, Heading) and b.level <= 3]
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    shown = [f"newest run of {len(doc.runs)}"] if doc.runs else []
    if doc.micro:
        shown.append(f"newest micro-benchmarks per device ({len(micro)} of {len(doc.micro)} files)")
    if doc.sweeps:
        shown.append(f"newest sweep of {len(doc.sweeps)}")
    subtitle = "; ".join(shown) + f"; generated {generated}"
    if older:
        subtitle += f"; older runs ({', '.join(older)}) are in report.md"
    if len(micro) < len(doc.micro):
        subtitle += "; older micro-benchmark files are in report.md"
    if len(doc.sweeps) > 1:
        subtitle += "; older sweeps are in report.md"
    body = [
        "<header><h1>stepwise dashboard</h1>",
        f"<p>{html.escape(subtitle)}</p>",
        "<nav>" + "".join(f'<a href="#{h.anchor}">{html.escape(h.text)}</a>' for h in nav) + "</nav></header>",
        "<main>",
        *[f'<div class="msg">{html.escape(m)}</div>' for m in doc.messages],
        *[_html_block(b, root) for b in sections],
        "</main>",
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            "<title>stepwise dashboard</title>",
            f"<style>{CSS}</style></head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )
