"""The command line: `report RESULTS... [--out DIR]` and `report compare BASELINE CANDIDATE`.

The commands are put together here, at the top of the package: parsing arguments, deciding which outputs
go where (report.md, plots/, dashboard.html, exports/; the gate's JSON only with --json-out), which comparison two
inputs get (two runs or two micro-benchmark files, never one of each), and turning bad input into exit status 2; the
exit status of `compare` is the gate's own. The modules that need numpy, scipy or matplotlib are imported only once a
command runs, so a missing package is reported as such (exit 2) rather than as a traceback, and --help always works.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .read.inputs import load_inputs
from .read.results import InputError, group_runs, warn

REPORTS_DIR = Path(__file__).resolve().parents[1]
GATES = ("relative", "absolute", "both")
SECTIONS = ("runs", "sweeps", "searches")
MARKER = ".stepwise-report"

if TYPE_CHECKING:
    from .gate.comparison import Comparison
    from .gate.gate import Settings
    from .read.inputs import Inputs


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


def show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="report show",
        description="The report's tables as text on stdout, nothing written: what ./ablate prints at the end of a "
        "run (the same tables and intervals as report.md, without figures).",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="result files or directories (searched recursively)")
    p.add_argument(
        "--only",
        choices=SECTIONS,
        help="one kind of section: a run's tables, a sweep's or a budget search's (default: every kind found)",
    )
    p.add_argument(
        "--dead-band",
        type=_percent,
        default=0.02,
        metavar="PCT",
        help="ratios within ±PCT%% of 1 count as 'no change' against the published tables (default: 2)",
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
        default=None,
        metavar="PCT",
        help="smallest change that counts as a regression, in percent (default: 5; for two gated runs, the "
        "threshold the run stopped on, ci/gated-run.json's)",
    )
    p.add_argument(
        "--gate",
        choices=GATES,
        default=None,
        help="which comparison can fail the gate: speedups measured inside each run (relative; "
        "for shared CI runners), absolute step times (for a dedicated machine), or both (default, and what a "
        "gated run stops on)",
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
        "--accept-work",
        default="",
        metavar="ROWS",
        help="for two gated runs that counted what a step dispatches (--count-ops): rows whose step the change meant "
        "to give more work (more ATen ops, or over 1%% more bytes), comma-separated, or 'all'; without it such a row "
        "fails the gate (the workflow reads it from Stepwise-Accept-Work trailers, docs/ci.md)",
    )
    p.add_argument(
        "--across-machines",
        action="store_true",
        help="judge runs made on different machines (by default the gate refuses them with exit 3): the within-run "
        "speedups only, with --gate relative",
    )
    p.add_argument(
        "--json-out",
        "--json",
        dest="json_out",
        type=Path,
        metavar="FILE",
        help="also write the machine-readable comparison to FILE (default: nothing is written)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="significance level of the U test (default: 0.05; for two gated runs, the level the run stopped on, "
        "shared among its looks)",
    )
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
    from .analysis.reference import load_references
    from .render.dashboard import render_dashboard
    from .render.document import build_document
    from .render.exports import write_exports
    from .render.flags import NOT_CHECKED, flag_names
    from .render.markdown import render_markdown
    from .render.plots import Plotter

    found = load_inputs(paths)
    results = found.results
    runs = group_runs(results) if results else []
    for run in runs:
        for message in run.messages:
            warn(message)
    # The published tables' flag names are checked against the engine's flags as these results know them.
    flags = flag_names(results) if results else None
    refs = load_references(flags=flags)
    notes = list(found.notes)
    if results and flags is None:
        warn(NOT_CHECKED)
        notes.append(NOT_CHECKED)
    out.mkdir(parents=True, exist_ok=True)
    _fresh(out / "plots")
    _fresh(out / "exports")
    plotter = Plotter(out)
    doc = build_document(runs, results, refs, plotter, dead_band, last, found.micro, notes, found.budget_searches)
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


# --- report show ---------------------------------------------------------------------------------


def show(paths: list[str], dead_band: float, only: str | None = None) -> None:
    """Prints every table the report would draw for these results (or `only` one kind of section), as text; warnings
    go to stderr as the report's."""
    from .analysis.reference import load_references
    from .render.document import budget_search_blocks, build_document
    from .render.flags import flag_names
    from .render.terminal import render_text

    found = load_inputs(paths)
    results = found.results
    runs = group_runs(results) if results else []
    refs = load_references(flags=flag_names(results) if results else None)
    doc = build_document(
        runs, results, refs, None, dead_band, None, found.micro, list(found.notes), found.budget_searches, False
    )
    if only is not None:
        # One kind of section: ./ablate asks for its run's, its sweep's or its budget search's tables only.
        doc.runs, doc.micro = (doc.runs, doc.micro) if only == "runs" else ([], [])
        doc.sweeps = doc.sweeps if only == "sweeps" else []
        doc.tail = [b for s in found.budget_searches for b in budget_search_blocks(s)] if only == "searches" else []
    sys.stdout.write(render_text(doc))


# --- report compare ------------------------------------------------------------------------------


KIND_NAMES = {"stepwise": "stepwise run (result files)", "micro": "micro-benchmark file (google/benchmark JSON)"}


def compare(
    found_b: Inputs,
    found_c: Inputs,
    baseline: str,
    candidate: str,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
    allow_unsure: bool = False,
    across_machines: bool = False,
) -> Comparison:
    """Judges CANDIDATE against BASELINE: two runs, or two micro-benchmark files, never one of each."""
    from .gate.micro_comparison import compare_micro
    from .gate.run_comparison import compare_runs

    kind_b, kind_c = _kind(found_b, "baseline", baseline), _kind(found_c, "candidate", candidate)
    if kind_b != kind_c:
        raise InputError(
            f"cannot compare a {KIND_NAMES[kind_b]} (baseline {baseline}) with a "
            f"{KIND_NAMES[kind_c]} (candidate {candidate}); pass two of the same kind"
        )
    if kind_b == "micro":
        c = compare_micro(found_b.micro, found_c.micro, baseline, candidate, settings, which, allow_missing)
    else:
        c = compare_runs(
            found_b.results, found_c.results, baseline, candidate, settings, which, allow_missing, across_machines
        )
    c.allow_unsure = allow_unsure
    return c


def _kind(found: Inputs, label: str, path: str) -> str:
    if found.results and found.micro:
        raise InputError(
            f"{label} {path} holds both stepwise results and micro-benchmark files; "
            f"pass one run or one micro-benchmark file per side"
        )
    return "micro" if found.micro else "stepwise"


def run_compare(args: argparse.Namespace) -> int:
    """`report compare`: judges, prints, writes the JSON only where asked; the exit status is the gate's."""
    from .gate.comparison import EXIT_NOTHING_JUDGED, DifferentMachines
    from .gate.gate_output import print_comparison

    try:
        comparison = _comparison(args)
    except DifferentMachines as e:
        print(f"gate: DIFFERENT MACHINES (exit {EXIT_NOTHING_JUDGED})\n  {e}")
        refused = {"passed": False, "verdict": "DIFFERENT MACHINES", "exit_code": EXIT_NOTHING_JUDGED, "reason": str(e)}
        _write_json(args.json_out, {"gate": refused})
        return EXIT_NOTHING_JUDGED
    print_comparison(comparison)
    _write_json(args.json_out, comparison.as_dict())
    return comparison.exit_code


def _comparison(args: argparse.Namespace) -> Comparison:
    """Two gated runs are compared round by round, with what the run stopped on unless told otherwise; anything else
    as plain runs or micro-benchmark files."""
    from .gate.gate import Settings
    from .gate.gated_run import is_gated_run, load_gated_run
    from .gate.round_comparison import judge

    gated = [is_gated_run(p) for p in (args.baseline, args.candidate)]
    if all(gated):
        comparison = judge(
            load_gated_run(args.baseline),
            load_gated_run(args.candidate),
            threshold=args.threshold,
            which=args.gate,
            alpha=args.alpha,
            min_samples=args.min_samples,
            resamples=args.resamples,
            seed=args.seed,
            allow_missing=args.allow_missing,
            across_machines=args.across_machines,
            accepted_work=frozenset(w.strip() for w in args.accept_work.split(",") if w.strip()),
        )
        comparison.allow_unsure = args.allow_unsure
        return comparison
    settings = Settings(
        threshold=Settings.threshold if args.threshold is None else args.threshold,
        alpha=Settings.alpha if args.alpha is None else args.alpha,
        min_samples=args.min_samples,
        resamples=args.resamples,
        seed=args.seed,
    )
    if any(gated):
        which, other = ("baseline", "candidate") if gated[0] else ("candidate", "baseline")
        raise InputError(
            f"the {which} is a gated run (rounds, ./run_all.sh --gated) and the {other} is not: gate two gated runs "
            f"(make the {other} with ./run_all.sh --like DIR), or pass one round's directory (DIR/round-1) to "
            f"compare it as a plain run"
        )
    found_b, found_c = load_inputs([args.baseline]), load_inputs([args.candidate])
    return compare(
        found_b,
        found_c,
        args.baseline,
        args.candidate,
        settings,
        args.gate or "both",
        args.allow_missing,
        args.allow_unsure,
        args.across_machines,
    )


def _write_json(path: Path | None, data: dict) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


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
    from .read.results import Result
    from .render.convergence import POINTS_DIR, against_reference, load_reference_points, make_reference

    if command == "convergence-reference":
        if not args.result.is_file():
            raise InputError(f"{args.result}: no such result file")
        reference = make_reference(Result(args.result, json.loads(args.result.read_text())), args.command)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}: steps to {reference['target_loss']:g} over {len(reference['steps'])} seeds")
        return 0
    references = load_reference_points(args.references or POINTS_DIR)
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
        if argv and argv[0] == "show":
            args = show_parser().parse_args(argv[1:])
            show(args.results, args.dead_band, args.only)
            return 0
        if argv and argv[0] == "compare":
            args = compare_parser().parse_args(argv[1:])
            if args.alpha is not None and not 0 < args.alpha < 1:
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
