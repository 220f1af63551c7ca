"""The rehearsal of the node's interpreter (--rehearse-on-cpu --as-node): the lines that say it was on, and which
modules the node's image lacks that the pass's processes asked for. The hiding itself is node_python/sitecustomize.py,
which scripts/verify-gpu.sh puts on the path of every Python process of the call; the image's list is
node_image.txt, kept with its date and source."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from verify.line import Line
from verify.runner import Verifier
from verify.target import ROOT

HOOK = ROOT / "scripts" / "verify" / "node_python"
IMAGE_LIST = ROOT / "scripts" / "verify" / "node_image.txt"
LOG = "as_node.log"  # under the pass's logs/, so the archive carries it


def image() -> set[str]:
    """The image's distributions, named as pip compares them (PEP 503)."""
    lines = IMAGE_LIST.read_text().splitlines()
    return {re.sub(r"[-_.]+", "-", l.strip()).lower() for l in lines if l.strip() and not l.startswith("#")}


def image_date() -> str:
    """The day the image's list was read, as its header says."""
    found = re.search(r"on (\d{4}-\d{2}-\d{2})\.", IMAGE_LIST.read_text())
    return found.group(1) if found else "an unknown day"


def start_pass(v: Verifier) -> None:
    """Every process of this pass notes the modules it was refused into the pass's own log."""
    os.environ["STEPWISE_AS_NODE_LOG"] = str(v.work / "logs" / LOG)


def rehearsal_line(python: str, info: dict | None) -> Line:
    """Whether the warm-up's probe ran with the node's image in front of it (its sitecustomize said how many
    distributions the image has): a rehearsal that silently ran the full interpreter would prove nothing."""
    path = "the node's python, rehearsed (--as-node): the image's packages and deps/site, nothing else"
    size = (info or {}).get("as_node")
    if size:
        figure = f"{python} with the {size} distributions of the image as read on {image_date()} (node_image.txt)"
        return Line(path, "PASS", figure + "; not rehearsed: the node's Python 3.12 and its packages' versions")
    reason = f"the probe ran without {HOOK.relative_to(ROOT)}/sitecustomize.py (PYTHONPATH was replaced?)"
    return Line(path, "FAIL", "", reason if info else "the probe did not run", kind="setup")


def hidden_line(v: Verifier) -> Line:
    """The modules the image lacks that a process of this pass asked for, by the program that asked. A process that
    needed one fails on its step's own line; one that only tried (an optional import) goes on, as on the node."""
    path = f"modules the node's image lacks, asked for in pass {v.pass_no}"
    log = Path(os.environ.get("STEPWISE_AS_NODE_LOG") or v.work / "logs" / LOG)
    try:
        asked = Counter(tuple(l.split("\t", 1)) for l in log.read_text().splitlines() if "\t" in l)
    except OSError:
        asked = Counter()
    if not asked:
        return Line(path, "PASS", "none: every import came from the image or deps/site")
    by_module: dict[str, list[str]] = {}
    for (module, program), n in sorted(asked.items()):
        by_module.setdefault(module, []).append(f"{program} x{n}")
    figure = "; ".join(f"{m} (by {', '.join(p)})" for m, p in by_module.items())
    return Line(path, "PASS", figure + " (each step's own line says whether it needed it)")
