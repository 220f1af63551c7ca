"""verify.md and verify.json: every line so far, the pass's device and timing, and what to do for each kind of failed
line. Rewritten after every step (each file replaced whole, never half-written), so whatever stops the pass leaves
every finished line."""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

from verify.line import REMEDIES, say
from verify.runner import Verifier
from verify.target import ROOT


@functools.cache
def commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def replace(path: Path, text: str) -> None:
    """Writes beside the file, then renames over it: a reader (or a kill) sees the old file or the new one."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)


def write_reports(v: Verifier, error: str = "", closing: bool = False) -> None:
    counts = {s: sum(l.status == s for l in v.lines) for s in ("PASS", "FAIL", "SKIP")}
    elapsed = time.monotonic() - v.began
    header = {
        "pass": v.pass_no,
        "device": v.gpu or v.no_gpu_reason,
        "rehearsal": v.rehearsal,
        "host": socket.gethostname(),
        "git_commit": commit(),
        "python": v.python,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - elapsed)),
        "seconds": round(elapsed, 1),
        "deadline_s": round(v.deadline - v.began, 1),
        "finished": closing,
        "counts": counts,
        "archive": v.archive,
        "error": error,
    }
    replace(v.out / "verify.json", json.dumps({**header, "lines": [asdict(l) for l in v.lines]}, indent=2) + "\n")
    rows = ["| path | status | figure |", "|---|---|---|"]
    for l in v.lines:
        text = l.figure + (f" — {l.reason}" if l.reason else "")
        timing = f" ({l.seconds:.0f} s of {l.budget_s:.0f})" if l.seconds is not None and l.budget_s else ""
        rows.append(f"| {l.path} | {l.status} | {text.replace('|', '/').replace(chr(10), ' ')}{timing} |")
    kinds = list(dict.fromkeys(l.kind or "verify" for l in v.lines if l.status == "FAIL"))
    todo = ["", "## When a line fails", ""] + [f"- {k}: {REMEDIES.get(k, REMEDIES['verify'])}" for k in kinds]
    if v.archive:
        archive = (
            f"Results, logs, JUnit and the report are in verify-artifacts.tar.gz ({v.archive.get('files', 0)} "
            f"files, {v.archive.get('bytes', 0) / 2**20:.2f} MiB)."
        )
    elif closing:
        archive = "verify-artifacts.tar.gz could not be written (see verify.json's error)."
    else:
        archive = "Still running: the archive is written at the end."
    left_out = v.archive.get("left_out") or []
    md = [
        f"# verify-gpu pass {v.pass_no}: {header['device']}" + (" (rehearsal on a CPU)" if v.rehearsal else ""),
        "",
        f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped in {elapsed:.0f} s "
        f"(deadline {header['deadline_s']:.0f} s); commit {commit()[:12]}, host {header['host']}, {header['started']}.",
        "",
        *rows,
        *(todo if kinds else []),
        "",
        archive,
        *(
            [
                f"Left out: {', '.join(left_out[:10])}"
                + (f" and {len(left_out) - 10} more" if len(left_out) > 10 else "")
                + "."
            ]
            if left_out
            else []
        ),
        *(["", f"verify stopped early: {error}"] if error else []),
    ]
    replace(v.out / "verify.md", "\n".join(md) + "\n")
    if closing:
        say("\n".join(md[2:]))
