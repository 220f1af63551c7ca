"""report.md: the document's blocks as Markdown, with a table of contents and the messages above the sections.

Every section is kept (all runs, micro-benchmark files and sweeps), so report.md is the complete record; figures link
their PNG and SVG files under plots/.
"""

from __future__ import annotations

from .document import Document, Figure, Heading, Notes, Para, SideBySide, TableBlock
from .formats import to_markdown


def _markdown_block(b) -> str:
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
        return "\n\n".join(_markdown_block(x) for x in b.blocks)
    raise TypeError(f"unknown block {type(b).__name__}")


def render_markdown(doc: Document) -> str:
    parts = [_markdown_block(b) for b in doc.intro]
    sections = doc.runs + doc.micro + doc.sweeps
    if len(sections) > 1 or doc.trends or doc.tail:
        heads = [blocks[0] for _, blocks in sections]
        heads += [b for b in doc.trends + doc.tail if isinstance(b, Heading) and b.level == 2]
        toc = [f"- [{h.text}](#{h.anchor})" for h in heads]
        parts.append("\n".join(toc))
    if doc.messages:
        parts.append("\n".join(f"> **note:** {m}" for m in doc.messages))
    for _, blocks in sections:
        parts += [_markdown_block(b) for b in blocks]
    parts += [_markdown_block(b) for b in doc.trends + doc.tail]
    return "\n\n".join(parts) + "\n"
