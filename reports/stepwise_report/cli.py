"""Command line: `report RESULTS... [--out DIR]` and `report compare BASELINE CANDIDATE`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .results import InputError, load_inputs

REPORTS_DIR = Path(__file__).resolve().parents[1]
GATES = ("relative", "absolute", "both")


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


def print_comparison(c) -> None:
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
        from .build import build_report

        build_report(args.results, args.out, args.dead_band, args.last)
        return 0
    except InputError as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        print(f"report: error: the interpreter {sys.executable} lacks the module '{e.name}'; "
              f"install scripts/requirements.txt (scripts/setup.sh does)", file=sys.stderr)
        return 2
