#!/usr/bin/env python3
"""An ./ablate with a slowdown planted in one row, to measure the gate's power on a live gated run: it runs the real
./ablate with its arguments, then makes every ok result of the planted row that the run wrote FACTOR slower, as
scripts/dev/gate_calibration.py does to a copy of a finished run. Live, the gated run sees the slowdown round by round
and goes on adding rounds while the gate cannot judge, as it would for a commit that slowed that row's path.

  STEPWISE_PLANT=one_at_a_time/03_fused_adamw:1.2 STEPWISE_PLANT_ABLATE=/path/to/ablate \\
      scripts/gated_run.py run --out=OUT --ablate=scripts/dev/planted_ablate.py --against=SRC --baseline-out=BASE

STEPWISE_PLANT is ROW[:FACTOR] (FACTOR 1.2 unless given; ROW may be a pattern, `one_at_a_time/*` for every row);
FACTOR may be a list, `1.5,0.67`, taken in turn, cycling, by the calls that slow something, counted in the file
STEPWISE_PLANT_TURNS names (one call per round for a row's result in a gated run): planted noise, which no number of
rounds resolves to within a threshold, whatever the machine's own noise.
STEPWISE_PLANT_ABLATE the real binary (default: this checkout's build/ablations/ablate). Each result is slowed
once: the ones done are listed in .planted beside them, in the --out folder. It runs as gated_run.py runs an
./ablate, under any python3: the standard library only; it gives the real binary its own argv[0], so its side's
arguments stay as long as the other side's (gated_run.py's Bench).
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ".planted"
# The report's reader of result documents (the standard library only, as this wrapper is).
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.read.inputs import read_results  # noqa: E402


def slow_down(doc: dict, factor: float) -> None:
    """One result made `factor` slower, as a commit that slowed its path by `factor` would measure: every step's time
    (wall and CPU), the summary's step times and its tokens per second."""
    for step in doc["steps"]:
        step["ms"] *= factor
        if step.get("cpu_ms") is not None:
            step["cpu_ms"] *= factor
    summary = doc["summary"]
    for key in ("median", "mean", "min", "max", "p10", "p90", "q1", "q3"):
        if isinstance(summary["step_ms"].get(key), (int, float)):
            summary["step_ms"][key] *= factor
    summary["tokens_per_s"] /= factor


def is_row(doc: dict, row: str) -> bool:
    """`doc` is an ok result of `row`: a result name (suite/NN_label), or a pattern of them (`one_at_a_time/*`: every
    row, as a change that slowed the step they all share would)."""
    return doc.get("tool") == "stepwise" and fnmatch.fnmatchcase(doc.get("name", ""), row) and doc.get("status") == "ok"


def plant(out: Path, row: str, factor: float) -> list[Path]:
    """Slow every ok result of `row` under `out` not slowed before; the ones slowed now."""
    ledger = out / LEDGER
    done = set(ledger.read_text().splitlines()) if ledger.exists() else set()
    slowed = []
    # Not checked against the schema: what the real binary just wrote, rewritten; the gated run's report checks it.
    for result in read_results([out], validate=False):
        path, doc = result.path, result.data
        if str(path) in done or not is_row(doc, row):
            continue
        slow_down(doc, factor)
        tmp = path.with_name(path.name + ".planting")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)  # whole, as ./ablate writes a result
        with ledger.open("a") as f:
            f.write(f"{path}\n")
        slowed.append(path)
    return slowed


def main(argv: list[str]) -> int:
    spec = os.environ.get("STEPWISE_PLANT")
    if not spec:
        print("planted_ablate: set STEPWISE_PLANT=ROW[:FACTOR], e.g. one_at_a_time/03_fused_adamw:1.2", file=sys.stderr)
        return 2
    row, _, listed = spec.partition(":")
    ablate = os.environ.get("STEPWISE_PLANT_ABLATE", str(ROOT / "build" / "ablations" / "ablate"))
    # The real binary under this wrapper's own name as its argv[0]: gated_run.py gives both sides names of one
    # length (its Bench), and a longer path here would lay out the planted side's heap differently (docs/ci.md).
    rc = subprocess.run([sys.argv[0], *argv], executable=ablate).returncode
    out = next((a.split("=", 1)[1] for a in argv if a.startswith("--out=")), None)
    if "--out" in argv[:-1]:
        out = argv[argv.index("--out") + 1]
    if out and "--dry-run" not in argv:
        factors = [float(f) for f in (listed or "1.2").split(",")]
        turns = Path(os.environ["STEPWISE_PLANT_TURNS"]) if os.environ.get("STEPWISE_PLANT_TURNS") else None
        turn = int(turns.read_text()) if turns and turns.exists() else 0
        factor = factors[turn % len(factors)]
        slowed = plant(Path(out), row, factor)
        for path in slowed:
            print(f"planted_ablate: {path} made {factor}x slower", file=sys.stderr)
        if turns and slowed:
            turns.write_text(str(turn + 1))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
