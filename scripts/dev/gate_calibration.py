#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/../python" "$0" "$@"'
"""How often the gate cries wolf on this machine, and whether it still catches a real slowdown: run it on your own
same-commit gated runs before trusting a threshold.

Given interleaved gated runs of one commit (./run_all.sh --gated --against ., each beside its baseline side), it gates
each against its own baseline side as CI would; given runs made one after another (./run_all.sh --gated, then --like
the first), each consecutive pair (`./report compare A B`, as the workflow does), which must PASS,
and then the same pair with a slowdown planted in the candidate: every step of one row made FACTOR slower in every
round (its samples, median and tok/s scaled, as a commit that slowed that flag's path by FACTOR would measure), which
must FAIL naming that row. Prints a Markdown table (docs/ci.md holds this project's) and exits 1 when any pair
raised a false alarm or missed the plant. A copy cannot show the rounds a run with the slowdown would have gone on to
when the gate could not judge it yet; scripts/dev/planted_ablate.py plants the same slowdown while a gated run runs.

  gate_calibration.py RUN1 RUN2 [RUN3 ...] --plant one_at_a_time/03_fused_adamw [--factor 1.2] [--threshold PCT]
      [--note 'RUN3=parallel build beside']
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reports"))

from planted_ablate import is_row, slow_down  # noqa: E402
from stepwise_report.gate.gated_run import MANIFEST, read_manifest  # noqa: E402
from stepwise_report.read.inputs import read_results  # noqa: E402


def gate(base: Path, cand: Path, threshold: str | None) -> dict:
    """The gate as CI runs it: what the run stopped on (its threshold, each row's own time and the speedups, its
    looks' share of the level), unless a threshold is given."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "compare.json"
        cmd = [str(ROOT / "report"), "compare", str(base), str(cand)]
        cmd += ["--threshold", threshold] if threshold else []
        run = subprocess.run([*cmd, "--json-out", str(out)], capture_output=True, text=True)
        if run.returncode == 2:
            raise SystemExit(f"gate_calibration: ./report compare refused {base} {cand}: {run.stderr.strip()}")
        return json.loads(out.read_text())


def planted(run: Path, row: str, factor: float, into: Path) -> Path:
    """A copy of the gated run `run` in which every step of `row` (a result name) is `factor` slower, every round."""
    shutil.copytree(run, into)
    found = 0
    for result in read_results(sorted(into.glob("round-*"))):
        if not is_row(result.data, row):
            continue
        slow_down(result.data, factor)
        result.path.write_text(json.dumps(result.data))
        found += 1
    rounds = read_manifest(into).get("rounds_done", 0)
    if found != rounds:
        raise SystemExit(
            f"gate_calibration: {row} is ok in {found} of {run}'s {rounds} rounds; name a row every round ran"
        )
    return into


def pairs(runs: list[Path]) -> list[tuple[Path, Path]]:
    """What to gate: an interleaved run (gated_run.py --against) against the baseline side it was made with, found
    beside it by run id; runs made apart, each against the one before it."""
    if all((read_manifest(r).get("interleaved") or {}).get("side") == "candidate" for r in runs):
        out = []
        for cand in runs:
            partner = read_manifest(cand)["interleaved"]["with"]
            found = [
                d for d in cand.parent.iterdir() if (d / MANIFEST).is_file() and read_manifest(d)["run_id"] == partner
            ]
            if not found:
                raise SystemExit(
                    f"gate_calibration: {cand}'s baseline side {partner} is not beside it in {cand.parent}"
                )
            out.append((found[0], cand))
        return out
    if len(runs) < 2:
        raise SystemExit("gate_calibration: give at least two gated runs made apart, or interleaved runs")
    return list(zip(runs, runs[1:]))


def counts(verdict: dict) -> str:
    """The gated rows' verdicts, per part: each row's own step time, the speedups."""
    parts = []
    for part, label in (("absolute", "time"), ("relative", "speedups")):
        tally: dict[str, int] = {}
        for r in verdict[part]:
            if r["verdict"] != "N/A":
                tally[r["verdict"]] = tally.get(r["verdict"], 0) + 1
        parts.append(f"{label}: " + ", ".join(f"{n} {v}" for v, n in sorted(tally.items())))
    return "; ".join(parts)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="gate_calibration.py", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="gated runs of one commit, in the order they were made")
    p.add_argument("--plant", required=True, help="the row to slow down, by its result name (suite/NN_label)")
    p.add_argument("--factor", type=float, default=1.2, help="how much slower the planted row's steps are (1.2)")
    p.add_argument("--threshold", default=None, help="the gate's --threshold (default: the one each run stopped on)")
    p.add_argument("--note", action="append", default=[], help="RUN=text: how a run was made (a parallel build ...)")
    args = p.parse_args(argv)
    if not all((r / MANIFEST).is_file() for r in args.runs):
        p.error("give gated runs (directories holding gated-run.json)")
    notes = dict(n.split("=", 1) for n in args.note)
    print(
        f"| pair | made | rounds | same commit: verdict | rows | {args.factor:g}× slower `{args.plant}`: verdict "
        f"| named |"
    )
    print("|---|---|---|---|---|---|---|")
    ok = True
    for base, cand in pairs(args.runs):
        clean = gate(base, cand, args.threshold)
        with tempfile.TemporaryDirectory() as tmp:
            slow = gate(base, planted(cand, args.plant, args.factor, Path(tmp) / "planted"), args.threshold)
        named = any(r.startswith(f"{args.plant}:") for r in slow["gate"]["regressions"])
        ok &= clean["gate"]["exit_code"] == 0 and slow["gate"]["exit_code"] == 1 and named
        made = "; ".join(filter(None, (notes.get(str(base)), notes.get(str(cand))))) or "idle but for this session"
        manifest = read_manifest(cand)
        minutes, done = manifest.get("seconds"), manifest.get("rounds_done")
        made += f" ({minutes / 60:.1f} min)" if minutes else ""
        # An interleaved run stops once the gate judges its own rows; with the plant in it, a gate that could not
        # judge would have had it go on (to max_rounds), which a copy cannot replay: said, not guessed.
        most = manifest["definition"].get("max_rounds", manifest["definition"]["rounds"])
        more = " (the run would have gone on)" if slow["gate"]["exit_code"] == 3 and done < most else ""
        print(
            f"| {base.name} → {cand.name} | {made} | {done} | {clean['gate']['verdict']} "
            f"(exit {clean['gate']['exit_code']}) | {counts(clean)} | {slow['gate']['verdict']} "
            f"(exit {slow['gate']['exit_code']}){more} | {'yes' if named else 'no'} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
