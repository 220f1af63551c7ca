"""The terminal's tables: the document's blocks as plain text, what `./ablate` prints at the end of a run.

The engine prints its plan, its progress and one line per row; every table at the end of a run is this module's
rendering of the same blocks report.md and dashboard.html render, so a row shows the same numbers and the same
interval in all three (docs/design/one-renderer.md). Figures are left out: they are files, listed by `./report`.
"""

from __future__ import annotations

import textwrap

from .document import Document, Figure, Heading, Notes, Para, SideBySide, TableBlock
from .formats import to_text

# Notes and paragraphs wrap at this width; tables keep their own, as wide as their cells.
WIDTH = 118
UNDERLINE = {2: "=", 3: "-"}


def _text_block(b) -> str | None:
    if isinstance(b, Heading):
        rule = UNDERLINE.get(b.level)
        return b.text + (":" if rule is None else "\n" + rule * len(b.text))
    if isinstance(b, Para):
        return textwrap.fill(b.text, WIDTH)
    if isinstance(b, Notes):
        return "\n".join(textwrap.fill(item, WIDTH, initial_indent="- ", subsequent_indent="  ") for item in b.items)
    if isinstance(b, TableBlock):
        return (f"{b.title}:\n" if b.title else "") + to_text(b.table)
    if isinstance(b, Figure):
        return None
    if isinstance(b, SideBySide):
        return "\n\n".join(t for x in b.blocks if (t := _text_block(x)) is not None)
    raise TypeError(f"unknown block {type(b).__name__}")


def render_text(doc: Document) -> str:
    """The messages, each run's, sweep's and micro-benchmark file's section, then the tail (scaling, budget
    searches), as text; the intro, the table of contents and the trends (figures only) are the report's."""
    parts = [f"note: {m}" for m in doc.messages]
    for _, blocks in doc.runs + doc.micro + doc.sweeps:
        parts += [t for b in blocks if (t := _text_block(b)) is not None]
    parts += [t for b in doc.tail if (t := _text_block(b)) is not None]
    return "\n\n".join(parts) + "\n"
