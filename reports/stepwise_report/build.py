"""Writes every output of `./report RESULTS`: report.md, plots/, dashboard.html and exports/."""

from __future__ import annotations

import shutil
from pathlib import Path

from .dashboard import render_dashboard
from .document import build_document
from .exports import write_exports
from .results import group_runs, load_inputs, warn
from .markdown import render_markdown
from .plots import Plotter
from .reference import load_references

MARKER = ".stepwise-report"


def _fresh(directory: Path) -> None:
    """Empties a folder this tool made before (it carries MARKER), so no stale figure survives; a
    folder without the marker is someone else's and is only added to."""
    if (directory / MARKER).is_file():
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARKER).write_text("written by ./report; emptied on every run\n", encoding="utf-8")


def build_report(paths: list[str], out: Path, dead_band: float, last: int | None = None) -> dict[str, list[Path]]:
    found = load_inputs(paths)
    results = found.results
    runs = group_runs(results) if results else []
    for run in runs:
        for message in run.messages:
            warn(message)
    refs = load_references()
    out.mkdir(parents=True, exist_ok=True)
    _fresh(out / "plots")
    _fresh(out / "exports")
    plotter = Plotter(out)
    doc = build_document(runs, results, refs, plotter, dead_band, last, found.micro)
    report = out / "report.md"
    report.write_text(render_markdown(doc), encoding="utf-8")
    dashboard = out / "dashboard.html"
    dashboard.write_text(render_dashboard(doc, out), encoding="utf-8")
    # The exports are made from result files; micro-benchmark files already are google/benchmark JSON.
    exports = write_exports(out / "exports", runs[0].results) if runs else []
    written = {"report": [report], "dashboard": [dashboard], "plots": plotter.written, "exports": exports}
    if runs:
        print(f"read {len(results)} results from {len(runs)} run(s); newest: {runs[0].run_id}")
    if found.micro:
        print(f"read {len(found.micro)} micro-benchmark file(s); newest: {found.micro[0].path}")
    print(f"wrote {report}, {dashboard}, {len(plotter.written)} plot files under {out / 'plots'}, "
          f"{len(exports)} exports under {out / 'exports'}" + (" (newest run)" if runs else ""))
    return written
