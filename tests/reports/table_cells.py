"""The cells of a rendered table, read back: the plain-text table `./report show` prints (the terminal's, at the end of
./ablate) and the Markdown one report.md holds, so a test can hold the two to the same cells."""

from __future__ import annotations

import re


def text_rows(text: str, heading: str) -> list[list[str]]:
    """The plain-text table under the line `heading`: its header and rows, each cut at the columns its rule marks."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    spans = [m.start() for m in re.finditer(r"-+", lines[start + 1])]
    rows = []
    for line in [lines[start]] + lines[start + 2 :]:
        if not line.strip():
            break
        rows.append([line[a:b].strip() for a, b in zip(spans, spans[1:] + [None])])
    return rows


def markdown_rows(md: str, heading: str) -> list[list[str]]:
    """The Markdown table after the line `heading` (and a blank line): its header and rows, the rule left out."""
    lines = md.splitlines()
    start = lines.index(heading) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return [rows[0]] + rows[2:]
