"""scripts/find_budget.py, the budget search, on synthetic loss curves: the geometric grid is bounded by --max-steps,
bisection finds the smallest grid budget at which the record rule holds (the one a scan of every budget finds) in
about log2 of the grid's probes, and the report holds each row's N and seconds at N against the baseline's. The
probes' ./ablate runs are replaced by results built from the curves; the real ones run in the docs' example."""

import math
import pathlib
import sys

import pytest
from scipy.stats import ttest_1samp

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import find_budget  # noqa: E402

TARGET, RECORD_P = 2.8, 0.01
OFFSETS = (-0.012, 0.004, 0.0, 0.009, -0.003)  # the five seeds' fixed spread around the curve


def losses(curve, n):
    return [curve(n) + e for e in OFFSETS]


def meets(curve, n):
    """The speedrun's rule at N, as the engine computes it (ablations/judges/record_rule.h): a one-sided one-sample t-test."""
    return ttest_1samp(losses(curve, n), TARGET, alternative="less").pvalue < RECORD_P


def test_the_grid_is_geometric_and_ends_at_the_step_cap():
    grid = find_budget.geometric_grid(40, 1.5, 400)
    assert grid == [40, 60, 90, 135, 203, 304, 400]
    assert find_budget.geometric_grid(1, 1.1, 5) == [1, 2, 3, 4, 5], "each budget at least one more than the last"
    with pytest.raises(ValueError):
        find_budget.geometric_grid(50, 1.0, 400)


@pytest.mark.parametrize("scale", [20.0, 60.0, 150.0])
def test_bisection_finds_the_known_n_of_a_synthetic_loss_curve(scale):
    # A power-law curve toward 2.6: the rule holds from some budget on; a scan of every grid budget says which.
    def curve(n):
        return 2.6 + scale / n

    grid = find_budget.geometric_grid(20, 1.25, 2000)
    known = next(n for n in grid if meets(curve, n))
    found, probed = find_budget.smallest_passing(grid, lambda n: meets(curve, n))
    assert found == known
    assert len(probed) <= math.ceil(math.log2(len(grid))) + 1 < len(grid), probed
    # The mean just above the known N's is below the target; at the grid budget before it the rule does not hold.
    assert not meets(curve, grid[grid.index(known) - 1])


def test_a_curve_that_sits_on_the_target_finds_no_budget():
    found, probed = find_budget.smallest_passing([50, 100, 200], lambda n: meets(lambda _: TARGET, n))
    assert found is None and probed == [200], "one probe at the cap says the rule never holds"


def result(index, label, curve, n, step_s):
    """A suite row's result at --step-budget=n, as ./ablate writes it, its rule computed from the curve."""
    values = losses(curve, n)
    p = ttest_1samp(values, TARGET, alternative="less").pvalue
    seeds = [
        {"status": "ok", "curve": [{"step": 0, "time_s": 0.0}, {"step": n, "time_s": n * step_s * (1 + 0.01 * k)}]}
        for k in range(len(values))
    ]
    rule = {"status": find_budget.MEETS if p < RECORD_P else "does not meet the record rule", "p": p, "budget": n}
    return {"suite": {"index": index, "label": label}, "convergence": {"seeds": seeds, "record_rule": rule}}


def test_each_row_is_searched_and_set_against_the_baseline_at_its_own_n():
    rows = [("baseline", lambda n: 2.6 + 60 / n, 0.010), ("faster", lambda n: 2.6 + 20 / n, 0.012)]
    grid = find_budget.geometric_grid(20, 1.25, 1000)
    calls = []

    def probe(n):
        calls.append(n)
        return [result(i, label, curve, n, s) for i, (label, curve, s) in enumerate(rows)]

    found = find_budget.search(probe, grid)
    expected = [next(n for n in grid if meets(curve, n)) for _, curve, _ in rows]
    assert [f["budget"] for f in found] == expected and expected[1] < expected[0]
    assert len(calls) == len(set(calls)), "a budget's probe serves every row that asks for it"
    table, records = find_budget.report(found, grid, "speedrun")
    base_s, row_s = records[0]["seconds_at_budget"], records[1]["seconds_at_budget"]
    assert base_s[2] == pytest.approx(expected[0] * 0.010 * 1.02) and len(row_s) == 5
    ratio = records[1]["seconds_ratio"]
    assert ratio["ratio"] == pytest.approx(expected[1] * 0.012 / (expected[0] * 0.010), rel=1e-9)
    assert ratio["low"] <= ratio["ratio"] <= ratio["high"]
    assert records[1]["steps_ratio"] == pytest.approx(expected[1] / expected[0])
    assert records[1]["published_ratio"] == pytest.approx(31.4 / 45), "the record table's #2 beside the row"
    assert f"{expected[1]:>6}" in table.splitlines()[3]


def test_the_probe_sets_the_horizon_and_the_search_needs_a_bound(tmp_path, capsys):
    assert find_budget.main(["--out", str(tmp_path), "--", "--target-loss=2.8"]) == 2
    assert "--max-steps" in capsys.readouterr().err
    assert (
        find_budget.main(["--out", str(tmp_path), "--", "--target-loss=2.8", "--max-steps=9", "--step-budget=5"]) == 2
    )
    assert "leave --step-budget out" in capsys.readouterr().err


def test_the_grids_last_budget_lies_within_max_steps(tmp_path, capsys):
    args = ["--out", str(tmp_path), "--last=500", "--", "--target-loss=2.8", "--max-steps=400"]
    assert find_budget.main(args) == 2
    assert "--last=500 must lie in [1, --max-steps=400]" in capsys.readouterr().err
