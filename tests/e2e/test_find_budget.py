"""./ablate --find-budget end to end on real text, at the smallest size that still crosses a target: the baseline (a
cosine, each budget from scratch down the grid) and the trapezoid (one line per seed, every budget branched off it),
three seeds, a four-budget grid. A line per probe as it is judged, the table at the end, budget.json with every
probe's verdict and each row's N consistent with them, each probe a schema-valid result trained to its own budget, the
startup table naming each row's schedule, ./report showing the search, and a usage error naming what is missing.
About ten seconds on two cores: the search's own logic is held by the unit tests (budget_verdict_test.cpp, the
branches' equality with from-scratch runs in budget_branches_test.cpp)."""

import json
import os
import subprocess

import pytest
from runs import BIN, ROOT, USAGE, fortunes_as_bytes, results

GRID = [10, 15, 20, 30]
ARGS = [
    "--find-budget",
    "--enable=trapezoid",
    "--vs-baseline",
    "--preset=tiny",
    "--device=cpu",
    "--data=corpus:fortunes",
    "--target-loss=3.3",
    "--eval-every=5",
    "--eval-batches=1",
    "--max-steps=30",
    "--lr=3e-3",
    "--target-seeds=3",
    f"--budget-grid={','.join(map(str, GRID))}",
    "--no-progress",
]


@pytest.fixture(scope="module")
def search(tmp_path_factory):
    corpus = fortunes_as_bytes(tmp_path_factory.mktemp("corpora"))
    out = tmp_path_factory.mktemp("search")
    run = subprocess.run(
        [BIN, *ARGS, f"--out={out}"],
        capture_output=True,
        text=True,
        timeout=900,  # hang guard only: about ten seconds on two cores
        env={**os.environ, "STEPWISE_CORPUS_DIR": str(corpus)},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run, out, json.loads((out / "budget.json").read_text())


def test_a_line_per_probe_and_the_table_at_the_end(search):
    run, _, doc = search
    probes = [line for line in run.stdout.splitlines() if line.startswith("[") and " at N " in line]
    assert len(probes) == sum(len(r["probes"]) for r in doc["rows"]), "one line per probe as it is judged"
    assert "grid: 10, 15, 20, 30 steps (--budget-grid)" in run.stdout
    assert run.stdout.rindex("× base N") > run.stdout.index(probes[-1]), "the table at the end"
    # The startup table names the schedule each row trains on: the baseline's cosine, the trapezoid row's own.
    assert (
        "(row 0); trapezoid: warm-up 0 steps, flat, linear cool-down over the last 12 of 30 steps (row 1)" in run.stdout
    )


def test_every_probes_verdict_is_kept_and_each_n_follows_from_them(search):
    _, _, doc = search
    assert doc["grid"] == GRID and doc["finished"]
    base, trapezoid = doc["rows"]
    assert not base["branched"] and "cosine" in base["from_scratch"]
    assert trapezoid["branched"] and [p["budget"] for p in trapezoid["probes"]] == GRID, "every budget, branched"
    assert trapezoid["steps_per_seed"] == 30 + 4 + 6 + 8, "the longest budget and each shorter one's cool-down"
    for row in doc["rows"]:
        for p in row["probes"]:
            assert p["n"] == 3 and p["mean"] is not None and p["t"] is not None and 0 <= p["p"] <= 1, p
            assert p["outcome"] == ("holds" if p["p"] < 0.01 and p["mean"] < 3.3 else "fails"), p
        # N: the smallest budget from which every probe holds up to the grid's last; its bracket the budget below.
        held = [p["budget"] for p in row["probes"] if p["outcome"] == "holds"]
        above = [n for n in GRID if all(n2 in held for n2 in GRID if n2 >= n)]
        assert row["budget"] == (above[0] if above else None), row["summary"]
        if row["budget"] is not None:
            i = GRID.index(row["budget"])
            assert row["below"] == (GRID[i - 1] if i else None)
            at_n = next(p for p in row["probes"] if p["budget"] == row["budget"])
            assert row["seconds_at_n"]["median"] == pytest.approx(at_n["seconds_median"])
    # The baseline scanned down from the grid's last budget, stopping at the first budget where the rule failed.
    down = [p["outcome"] for p in reversed(base["probes"])]
    assert all(o == "holds" for o in down[:-1]), down
    assert down[-1] == "fails" or base["probes"][0]["budget"] == GRID[0], down


def test_each_probe_is_a_result_trained_to_its_own_budget(search):
    _, out, doc = search
    for row in doc["rows"]:
        for p in row["probes"]:
            (result,) = [d for d in results(out / f"budget_{p['budget']}") if d["suite"]["index"] == row["index"]]
            target = result["config"]["target"]
            assert target["step_budget"] == p["budget"] == result["config"]["lr_schedule"]["decay_steps"]
            rule = result["convergence"]["record_rule"]
            assert rule["budget"] == p["budget"] and rule["p"] == pytest.approx(p["p"])
            assert all(s["curve"][-1]["step"] == p["budget"] for s in result["convergence"]["seeds"])


def test_the_report_shows_the_search(search, tmp_path):
    _, out, _ = search
    run = subprocess.run([str(ROOT / "report"), str(out), "--out", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    report = (tmp_path / "report.md").read_text()
    assert "## budget search" in report and "every probe" in report


def test_a_search_without_a_target_is_a_usage_error_naming_it(tmp_path):
    run = subprocess.run(
        [BIN, "--find-budget", "--preset=tiny", "--device=cpu", f"--out={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == USAGE
    assert "add --target-loss" in run.stderr
