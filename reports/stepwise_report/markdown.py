"""Renders the report document as Markdown (report.md)."""

from __future__ import annotations

from .document import Document, Figure, Heading, Notes, Para, SideBySide, TableBlock
from .tables import to_markdown


def _block(b) -> str:
    if isinstance(b, Heading):
        return "#" * b.level + " " + b.text
    if isinstance(b, Para):
        return b.text
    if isinstance(b, Notes):
        return "\n".join(f"- {item}" for item in b.items)
    if isinstance(b, TableBlock):
        return (f"**{b.title}**\n\n" if b.title else "") + to_markdown(b.table)
    if isinstance(b, Figure):
        return f"![{b.caption}]({b.path}.png)  \n[SVG]({b.path}.svg)"
    if isinstance(b, SideBySide):
        return "\n\n".join(_block(x) for x in b.blocks)
    raise TypeError(f"unknown block {type(b).__name__}")


def render_markdown(doc: Document) -> str:
    parts = [_block(b) for b in doc.intro]
    sections = doc.runs + doc.micro
    if len(sections) > 1 or doc.trends or doc.tail:
        heads = [blocks[0] for _, blocks in sections]
        heads += [b for b in doc.trends + doc.tail if isinstance(b, Heading) and b.level == 2]
        toc = [f"- [{h.text}](#{h.anchor})" for h in heads]
        parts.append("\n".join(toc))
    if doc.messages:
        parts.append("\n".join(f"> **note:** {m}" for m in doc.messages))
    for _, blocks in sections:
        parts += [_block(b) for b in blocks]
    parts += [_block(b) for b in doc.trends + doc.tail]
    return "\n\n".join(parts) + "\n"
