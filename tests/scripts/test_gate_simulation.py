"""scripts/dev/gate_simulation.py: the stopping rule replayed with the gate's own verdicts. At a spread far below the
threshold no unchanged run fails and every planted 20% slowdown does, naming its row, under both rules; at a spread far
above it most runs end unjudged (exit 3), and the rule that spends its level across its looks fails fewer unchanged
runs than the one that looked after every round at the whole level."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def simulate(*args: str) -> list[list[str]]:
    python = os.environ.get("STEPWISE_PYTHON", sys.executable)
    run = subprocess.run(
        [python, str(ROOT / "scripts" / "dev" / "gate_simulation.py"), "--rows=4", *args],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard only
    )
    assert run.returncode == 0, run.stderr
    rows = [line.strip("|").split("|") for line in run.stdout.splitlines() if line.startswith("| 0.")]
    return [[cell.strip() for cell in row] for row in rows]


def test_a_quiet_runner_never_fails_an_unchanged_step_and_always_fails_a_planted_one():
    rows = simulate("--runs=40", "--spreads=0.01")
    assert [r[1] for r in rows] == ["every round, whole level", "the plan's looks, spent level"]
    for _, _, false_fail, exit3, rounds, one, baseline, every in rows:
        assert (false_fail, exit3, rounds) == ("0.00%", "0.0%", "5")
        assert one == baseline == "100.0%, 100.0%, 0.0%" and every == "100.0%, 0.0%"


def test_a_runner_far_noisier_than_the_threshold_is_mostly_not_judged_and_the_spent_level_cries_wolf_less():
    old, new = ([float(cell.rstrip("%")) for cell in row[2:4]] for row in simulate("--runs=40", "--spreads=0.6"))
    assert new[1] > 50 and new[0] <= old[0] and new[0] < old[0] + new[1]
