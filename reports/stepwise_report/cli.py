"""The command line: `report RESULTS... [--out DIR]` and `report compare BASELINE CANDIDATE`.

The commands are put together here, at the top of the package: parsing arguments, deciding which outputs
go where (report.md, plots/, dashboard.html, exports/, compare.json), printing the gate and turning bad input
into exit status 2. The modules that need numpy, scipy or matplotlib are imported only once a command runs,
so a missing package is reported as such (exit 2) rather than as a traceback, and --help always works.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .results import InputError, group_runs, load_inputs, warn

REPORTS_DIR = Path(__file__).resolve().parents[1]
GATES = ("relative", "absolute", "both")
MARKER = ".stepwise-report"

if TYPE_CHECKING:
    from .stats import Comparison


# --- arguments -----------------------------------------------------------------------------------


def _percent(text: str) -> float:
    """'5', '5%' or '2.5' (percent) as a fraction; argparse reports the ValueError as a usage error (exit 2)."""
    value = float(text.strip().rstrip("%"))
    if not 0 <= value < 100:
        raise ValueError(text)
    return value / 100


_percent.__name__ = "percent (0–100)"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive_int.__name__ = "positive integer"


def report_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="report",
        description="Tables, plots, a dashboard and CI exports from stepwise result files, and tables from "
                    "stepwise_micro's micro-benchmark files (google/benchmark JSON).",
        epilog="Regression gate: report compare BASELINE CANDIDATE [--threshold PCT] [--json FILE] "
               "(see `report compare --help`). Details: reports/README.md.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="result files, micro-benchmark files or directories (searched recursively for stepwise "
                        "*.json and stepwise_micro's google/benchmark JSON)")
    p.add_argument("--out", type=Path, default=REPORTS_DIR, metavar="DIR",
                   help="where report.md, dashboard.html, plots/ and exports/ go (default: reports/)")
    p.add_argument("--dead-band", type=_percent, default=0.02, metavar="PCT",
                   help="ratios within ±PCT%% of 1 count as 'no change' when directions are compared "
                        "with the published tables (default: 2)")
    p.add_argument("--last", type=_positive_int, metavar="N",
                   help="sections and figures for the N newest runs (and N newest micro-benchmark files) only; "
                        "trends still use every run (default: all)")
    return p


def compare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="report compare",
        description="Regression gate: compares a candidate run with a baseline run, configuration by configuration "
                    "(or two micro-benchmark files, benchmark by benchmark). "
                    "Exit status: 0 no confirmed regression, 1 confirmed regression, 2 bad input.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="result file, run directory or micro-benchmark file")
    p.add_argument("candidate", metavar="CANDIDATE", help="the same kind as BASELINE")
    p.add_argument("--threshold", type=_percent, default=0.05, metavar="PCT",
                   help="smallest change that counts as a regression, in percent (default: 5)")
    p.add_argument("--gate", choices=GATES, default="both",
                   help="which comparison can fail the gate: speedups measured inside each run (relative; "
                        "for shared CI runners), absolute step times (for a dedicated machine), or both (default)")
    p.add_argument("--json", type=Path, default=REPORTS_DIR / "compare.json", metavar="FILE",
                   help="where the machine-readable comparison goes (default: reports/compare.json)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default: 0.05)")
    p.add_argument("--min-samples", type=_positive_int, default=9, metavar="N",
                   help="fewer measured steps (repetitions, for micro-benchmarks) than this on either side "
                        "gives UNSURE (default: 9)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--resamples", type=_positive_int, default=2000, metavar="N",
                   help="bootstrap resamples (default: 2000)")
    return p


# --- report RESULTS ------------------------------------------------------------------------------


def _fresh(directory: Path) -> None:
    """Empties a folder this tool made before (it carries MARKER), so no stale figure survives; a
    folder without the marker is someone else's and is only added to."""
    if (directory / MARKER).is_file():
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARKER).write_text("written by ./report; emptied on every run\n", encoding="utf-8")


def build_report(paths: list[str], out: Path, dead_band: float, last: int | None = None) -> None:
    """Writes report.md, plots/, dashboard.html and exports/ (the newest run) under `out`."""
    from .exports import write_exports
    from .plots import Plotter
    from .reference import load_references
    from .render import build_document, render_dashboard, render_markdown

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
    doc = build_document(runs, results, refs, plotter, dead_band, last, found.micro, found.notes)
    report = out / "report.md"
    report.write_text(render_markdown(doc), encoding="utf-8")
    dashboard = out / "dashboard.html"
    dashboard.write_text(render_dashboard(doc, out), encoding="utf-8")
    # The exports are made from result files; micro-benchmark files already are google/benchmark JSON.
    exports = write_exports(out / "exports", runs[0].results) if runs else []
    if runs:
        print(f"read {len(results)} results from {len(runs)} run(s); newest: {runs[0].run_id}")
    if found.micro:
        print(f"read {len(found.micro)} micro-benchmark file(s); newest: {found.micro[0].path}")
    print(f"wrote {report}, {dashboard}, {len(plotter.written)} plot files under {out / 'plots'}, "
          f"{len(exports)} exports under {out / 'exports'}" + (" (newest run)" if runs else ""))


# --- report compare ------------------------------------------------------------------------------


# What the gate prints around its tables, for two runs and for two micro-benchmark files.
_GATE_TEXT = {
    "stepwise": {
        "unit": "steps",
        "devices": "note: the devices differ, so absolute step times are not compared; within-run speedups are.",
        "absolute": "absolute step time (candidate median vs baseline median; positive = slower):",
        "relative": "speedups measured inside each run (candidate vs baseline; negative = the flags lost gain):",
    },
    "micro": {
        "unit": "repetitions",
        "devices": "note: the devices differ, so absolute times are not compared; speedups over each family's "
                   "baseline variant are.",
        "absolute": "absolute time per iteration (candidate median vs baseline median; positive = slower):",
        "relative": "speedups over each family's baseline variant, inside each file (negative = the variant lost gain):",
    },
}


def print_comparison(c: Comparison) -> None:
    """The gate's outcome for people: both sides, the settings, the verdict tables, then PASS or FAIL and why."""
    from .tables import absolute_table, relative_table, to_text

    text, s = _GATE_TEXT[c.kind], c.settings
    for label, headline in zip(("baseline: ", "candidate:"), c.headlines):
        print(f"{label} {headline}")
    print(f"threshold ±{100 * s.threshold:g}%, alpha {s.alpha}, {s.resamples} bootstrap resamples (seed {s.seed}), "
          f"at least {s.min_samples} {text['unit']}; gate on: {c.gate}")
    if not c.same_device:
        print(text["devices"])
    print("\n" + text["absolute"])
    print(to_text(absolute_table(c.absolute, c.kind)))
    if c.relative:
        print("\n" + text["relative"])
        print(to_text(relative_table(c.relative)))
    if c.loss:
        print("\nloss check:")
        for r in c.loss:
            print(f"  {r['name']}: {r['candidate']} ({r['note']})")
    for label, names in (("only in baseline", c.only_in_baseline), ("only in candidate", c.only_in_candidate)):
        if names:
            print(f"\n{label}: " + ", ".join(names))
    summary = ", ".join(f"{n} {v}" for v, n in c.counts.items() if n)
    print(f"\ngate: {'FAIL' if c.reasons else 'PASS'} ({summary or 'nothing compared'})")
    for reason in c.reasons:
        print(f"  regression: {reason}")


def run_compare(args: argparse.Namespace) -> int:
    """`report compare`: judges, prints, writes the JSON; the exit status is the gate's."""
    from .stats import Settings, compare

    settings = Settings(threshold=args.threshold, alpha=args.alpha, min_samples=args.min_samples,
                        resamples=args.resamples, seed=args.seed)
    found_b, found_c = load_inputs([args.baseline]), load_inputs([args.candidate])
    comparison = compare(found_b, found_c, args.baseline, args.candidate, settings, args.gate)
    print_comparison(comparison)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(comparison.as_dict(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return comparison.exit_code


def main(argv: list[str]) -> int:
    try:
        if argv and argv[0] == "compare":
            args = compare_parser().parse_args(argv[1:])
            if not 0 < args.alpha < 1:
                compare_parser().error(f"--alpha must be between 0 and 1, got {args.alpha}")
            return run_compare(args)
        args = report_parser().parse_args(argv)
        build_report(args.results, args.out, args.dead_band, args.last)
        return 0
    except InputError as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        print(f"report: error: the interpreter {sys.executable} lacks the module '{e.name}'; "
              f"install scripts/requirements.txt (scripts/setup.sh does)", file=sys.stderr)
        return 2
