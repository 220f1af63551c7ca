"""The command line: `report RESULTS... [--out DIR]` and `report compare BASELINE CANDIDATE`.

The commands are put together here, at the top of the package: parsing arguments, deciding which outputs
go where (report.md, plots/, dashboard.html, exports/; the gate's JSON only with --json-out), printing the
gate's verdict from its exit status and turning bad input into exit status 2. The modules that need numpy, scipy or matplotlib are imported only once a command runs,
so a missing package is reported as such (exit 2) rather than as a traceback, and --help always works.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .inputs import load_inputs
from .results import InputError, group_runs, warn

REPORTS_DIR = Path(__file__).resolve().parents[1]
GATES = ("relative", "absolute", "both")
MARKER = ".stepwise-report"

if TYPE_CHECKING:
    from .gate import Comparison


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
        epilog="Regression gate: report compare BASELINE CANDIDATE [--threshold PCT] [--json-out FILE] "
        "(see `report compare --help`). Details: reports/README.md.",
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="result files, micro-benchmark files or directories (searched recursively for stepwise "
        "*.json and stepwise_micro's google/benchmark JSON)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=REPORTS_DIR,
        metavar="DIR",
        help="where report.md, dashboard.html, plots/ and exports/ go (default: reports/)",
    )
    p.add_argument(
        "--dead-band",
        type=_percent,
        default=0.02,
        metavar="PCT",
        help="ratios within ±PCT%% of 1 count as 'no change' when directions are compared "
        "with the published tables (default: 2)",
    )
    p.add_argument(
        "--last",
        type=_positive_int,
        metavar="N",
        help="sections and figures for the N newest runs (and N newest micro-benchmark files) only; "
        "trends still use every run (default: all)",
    )
    return p


def compare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="report compare",
        description="Regression gate: compares a candidate run with a baseline run, configuration by configuration "
        "(or two micro-benchmark files, benchmark by benchmark). "
        "Exit status: 0 pass; 1 a confirmed regression, or a configuration ok in the baseline that is "
        "missing, skipped or failed in the candidate; 2 bad input or usage; 3 nothing could be judged "
        "(too few samples or too much noise everywhere; the message says how many would do), or a "
        "possible regression could not be judged (UNSURE beyond the threshold the worse way; the message "
        "names whose noise made it so; --allow-unsure lists those instead).",
    )
    p.add_argument("baseline", metavar="BASELINE", help="result file, run directory or micro-benchmark file")
    p.add_argument("candidate", metavar="CANDIDATE", help="the same kind as BASELINE")
    p.add_argument(
        "--threshold",
        type=_percent,
        default=0.05,
        metavar="PCT",
        help="smallest change that counts as a regression, in percent (default: 5)",
    )
    p.add_argument(
        "--gate",
        choices=GATES,
        default="both",
        help="which comparison can fail the gate: speedups measured inside each run (relative; "
        "for shared CI runners), absolute step times (for a dedicated machine), or both (default)",
    )
    p.add_argument(
        "--allow-missing",
        action="store_true",
        help="configurations ok in the baseline and missing, skipped or failed in the candidate are "
        "listed as not compared instead of failing the gate",
    )
    p.add_argument(
        "--allow-unsure",
        action="store_true",
        help="configurations UNSURE beyond the threshold the worse way (a possible regression the noise "
        "hid) are listed instead of making the gate exit 3",
    )
    p.add_argument(
        "--json-out",
        "--json",
        dest="json_out",
        type=Path,
        metavar="FILE",
        help="also write the machine-readable comparison to FILE (default: nothing is written)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default: 0.05)")
    p.add_argument(
        "--min-samples",
        type=_positive_int,
        default=None,
        metavar="N",
        help="require at least N measured steps (repetitions, for micro-benchmarks) on each side; "
        "default: the fewest with which the U test can reach p < alpha (4 at 0.05)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument(
        "--resamples", type=_positive_int, default=2000, metavar="N", help="bootstrap resamples (default: 2000)"
    )
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
    print(
        f"wrote {report}, {dashboard}, {len(plotter.written)} plot files under {out / 'plots'}, "
        f"{len(exports)} exports under {out / 'exports'}" + (" (newest run)" if runs else "")
    )


# --- report compare ------------------------------------------------------------------------------


# What the gate prints around its tables, for two runs and for two micro-benchmark files.
_GATE_TEXT = {
    "stepwise": {
        "unit": "steps",
        "devices": "note: the devices differ, so absolute step times are not compared; within-run speedups are.",
        "absolute": "absolute step time (candidate median vs baseline median; positive = slower):",
        "relative": "speedups measured inside each run (candidate vs baseline; negative = the flags lost gain):",
        "absolute_name": "absolute step times",
        "relative_name": "within-run speedups",
    },
    "micro": {
        "unit": "repetitions",
        "devices": "note: the devices differ, so absolute times are not compared; speedups over each family's "
        "baseline variant are.",
        "absolute": "absolute time per iteration (candidate median vs baseline median; positive = slower):",
        "relative": "speedups over each family's baseline variant, inside each file (negative = the variant lost gain):",
        "absolute_name": "absolute times per iteration",
        "relative_name": "speedups over each family's baseline variant",
    },
}


def _median_change(rows: list[dict], verdict: str) -> str:
    from statistics import median

    from .formats import percent_change

    ratios = [r["ratio"] for r in rows if r["verdict"] == verdict and r["ratio"] is not None]
    return f"median {percent_change(median(ratios))}" if ratios else ""


def _part_line(c: Comparison, part: str) -> str | None:
    """One line per comparison: its verdict counts, whether it is gated, and what the counts mean."""
    from .gate import FASTER, SAME, SLOWER, UNSURE

    text = _GATE_TEXT[c.kind]
    rows = c.absolute if part == "absolute" else c.relative
    if not rows:
        return None
    counts = ", ".join(f"{n} {v}" for v, n in c.counts(rows).items())
    gated = c.gates_absolute if part == "absolute" else c.gates_relative
    if part == "absolute" and not c.same_device:
        status = "not compared: the devices differ"
    else:
        status = "gated" if gated else f"not gated under --gate {c.gate}"
    n = c.counts(rows)
    meaning = []
    doubtful = sum(u["part"] == part for u in c.beyond_threshold_unsure)
    if doubtful:
        meaning.append(f"{doubtful} UNSURE beyond the threshold the worse way (a possible regression not judged)")
    if part == "absolute":
        for verdict, word in ((SLOWER, "slower"), (FASTER, "faster")):
            if n.get(verdict):
                what = (
                    f"the candidate's absolute {'times' if c.kind == 'micro' else 'step times'} are {word} "
                    f"({n[verdict]} of {len(rows)}, {_median_change(rows, verdict)})"
                )
                meaning.append(what)
    else:
        if n.get(SLOWER):
            meaning.append(f"{n[SLOWER]} speedups shrank beyond the threshold")
        if n.get(FASTER):
            meaning.append(f"{n[FASTER]} speedups grew beyond the threshold")
        if not n.get(SLOWER) and not n.get(FASTER) and n.get(SAME) and not doubtful:
            meaning.append(
                "the relative speedups are unchanged"
                + (f" where they could be judged ({n[UNSURE]} UNSURE)" if n.get(UNSURE) else "")
            )
    return f"  {text[part + '_name']} ({status}): {counts}" + (" — " + "; ".join(meaning) if meaning else "")


def print_comparison(c: Comparison) -> None:
    """The gate's outcome for people: both sides, the settings, the verdict tables, then the verdict (which is
    always the exit status's: PASS 0, FAIL 1, NOTHING JUDGED or COULD NOT JUDGE 3) and why."""
    from .formats import to_text
    from .gate_output import absolute_table, relative_table
    from .speedup import floor_samples

    text, s = _GATE_TEXT[c.kind], c.settings
    for label, headline in zip(("baseline: ", "candidate:"), c.headlines):
        print(f"{label} {headline}")
    least = (
        f"at least {s.min_samples} {text['unit']} (--min-samples)"
        if s.min_samples
        else f"at least {floor_samples(s.alpha)} {text['unit']} per side (the U test's floor at alpha {s.alpha:g})"
    )
    print(
        f"threshold ±{100 * s.threshold:g}%, alpha {s.alpha}, {s.resamples} bootstrap resamples (seed {s.seed}), "
        f"{least}; gate on: {c.gate}"
    )
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
    lost = [r for r in c.lost if not r["allowed"]]
    allowed = [r for r in c.lost if r["allowed"]]
    if lost:
        print("\nlost configurations (ok in the baseline; each fails the gate unless --allow-missing):")
        for r in lost:
            print(f"  {r['name']}: {r['note']}")
    if allowed:
        print("\nnot compared (--allow-missing; ok in the baseline, not in the candidate):")
        for r in allowed:
            print(f"  {r['name']}: {r['note']}")
    if c.only_in_candidate:
        print("\nonly in candidate: " + ", ".join(c.only_in_candidate))
    print(f"\ngate: {c.verdict} (exit {c.exit_code})")
    for line in filter(None, (_part_line(c, "absolute"), _part_line(c, "relative"))):
        print(line)
    if c.lost and c.exit_code == 1 and not c.allow_missing:
        print("  (--allow-missing lists lost configurations without failing the gate)")
    lost_text = {f"{r['name']}: {r['note']}" for r in lost}
    for reason in c.reasons:
        print(f"  {'lost' if reason in lost_text else 'regression'}: {reason}")
    _print_unsure(c)
    if c.exit_code == 3 and not c.judged:
        for line in c.nothing_judged():
            print(f"  {line}")


# Enough to read at a glance; every one is in --json-out.
_UNSURE_SHOWN = 10


def _print_unsure(c: Comparison) -> None:
    """The possible regressions the gate could not judge: why each blocks the gate, or that --allow-unsure let it by."""
    unsure = c.beyond_threshold_unsure
    if not unsure:
        return
    word = "unsure (--allow-unsure, not failing)" if c.allow_unsure else "could not judge"
    for u in unsure[:_UNSURE_SHOWN]:
        print(f"  {word}: {c.unsure_line(u)}")
    if len(unsure) > _UNSURE_SHOWN:
        print(f"  … and {len(unsure) - _UNSURE_SHOWN} more (every one is in --json-out)")
    if not c.allow_unsure and not c.reasons:
        unit, option = c.unit()
        print(
            f"  (a possible regression beyond the threshold was neither confirmed nor ruled out: rerun on a quiet "
            f"machine or with more {unit} ({option}); --allow-unsure lists these without blocking the gate)"
        )


def run_compare(args: argparse.Namespace) -> int:
    """`report compare`: judges, prints, writes the JSON only where asked; the exit status is the gate's."""
    from .gate import Settings, compare

    settings = Settings(
        threshold=args.threshold,
        alpha=args.alpha,
        min_samples=args.min_samples,
        resamples=args.resamples,
        seed=args.seed,
    )
    found_b, found_c = load_inputs([args.baseline]), load_inputs([args.candidate])
    comparison = compare(
        found_b, found_c, args.baseline, args.candidate, settings, args.gate, args.allow_missing, args.allow_unsure
    )
    print_comparison(comparison)
    if args.json_out is not None:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(comparison.as_dict(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json_out}")
    return comparison.exit_code


# --- convergence reference points -----------------------------------------------------------------------------


def convergence_parser(command: str) -> argparse.ArgumentParser:
    if command == "convergence-reference":
        parser = argparse.ArgumentParser(
            prog="report convergence-reference",
            description="Writes a reference convergence point (steps to target per seed, with its settings and the "
            "command) from a baseline result written with --target-loss, to commit under "
            "reports/reference/convergence/.",
        )
        parser.add_argument("result", type=Path, help="the baseline's result file")
        parser.add_argument("--command", required=True, help="the ./ablate command that measured it, recorded as is")
        parser.add_argument("--out", type=Path, required=True, help="the reference file to write")
        return parser
    parser = argparse.ArgumentParser(
        prog="report convergence-check",
        description="Holds every baseline written with --target-loss against the committed reference of the same "
        "settings (Welch's t-test on steps to target, alpha 0.05). Exit 0: all the same; 1: one differs; 3: no "
        "baseline had a reference of its settings.",
    )
    parser.add_argument("results", nargs="+", help="result files or directories")
    parser.add_argument("--references", type=Path, default=None, help="default: reports/reference/convergence/")
    return parser


def run_convergence(command: str, args: argparse.Namespace) -> int:
    from .convergence import REFERENCE_DIR, against_reference, load_references, make_reference
    from .results import Result

    if command == "convergence-reference":
        if not args.result.is_file():
            raise InputError(f"{args.result}: no such result file")
        reference = make_reference(Result(args.result, json.loads(args.result.read_text())), args.command)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}: steps to {reference['target_loss']:g} over {len(reference['steps'])} seeds")
        return 0
    references = load_references(args.references or REFERENCE_DIR)
    verdicts = [v for r in load_inputs(args.results).results if (v := against_reference(r, references))]
    for v in verdicts:
        print(v.text)
    if not verdicts:
        print("no baseline written with --target-loss has a reference of its settings", file=sys.stderr)
        return 3
    return 1 if any(v.status == "differs" for v in verdicts) else 0


def main(argv: list[str]) -> int:
    try:
        if argv and argv[0] in ("convergence-reference", "convergence-check"):
            return run_convergence(argv[0], convergence_parser(argv[0]).parse_args(argv[1:]))
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
        print(
            f"report: error: the interpreter {sys.executable} lacks the module '{e.name}'; "
            f"install scripts/requirements.txt (scripts/setup.sh does)",
            file=sys.stderr,
        )
        return 2
