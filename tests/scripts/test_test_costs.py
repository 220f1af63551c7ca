"""scripts/dev/test_costs.py and tests/costs.txt: each long test's COST reaches ctest (so a fresh clone starts the longest
first), and the refresh keeps only tests tests/CMakeLists.txt declares, costliest first."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "dev"))

import test_costs  # noqa: E402

BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build"))


def committed() -> dict[str, float]:
    rows = [line.split() for line in (ROOT / "tests" / "costs.txt").read_text().splitlines() if line[:1] != "#"]
    return {name: float(cost) for name, cost in rows}


def test_every_listed_cost_is_the_tests_cost_property_in_ctest():
    shown = subprocess.run(
        ["ctest", "--show-only=json-v1"], cwd=BUILD, capture_output=True, text=True, timeout=300, check=True
    )
    costs = {
        t["name"]: next((float(p["value"]) for p in t.get("properties", []) if p["name"] == "COST"), 0.0)
        for t in json.loads(shown.stdout)["tests"]
    }
    table = committed()
    assert table and {name: costs.get(name) for name in table} == table
    # The longest test is listed, an end-to-end one (a pytest through the binaries: e2e.* or scripts.*), and costs more
    # than the short ones ctest starts after it.
    assert max(table, key=table.get).startswith(("e2e.", "scripts."))


def test_the_refresh_keeps_declared_tests_above_the_floor_costliest_first(tmp_path):
    data = tmp_path / "CTestCostData.txt"
    data.write_text(
        "reports 2 120.5\nCli.Listings 1 40.0\ne2e.convergence 1 430.2\nstructure 2 0.6\n"
        "unit.stepwise_bench_tests.5 1 60.0\nunit.stepwise_bench_tests.6 1 61.0\n---\nreports\n"
    )
    declared = test_costs.declared_tests()
    text = test_costs.table(test_costs.read_cost_data(data), 5.0, declared)
    rows = [line for line in text.splitlines() if not line.startswith("#")]
    # A GoogleTest case, a short test and a shard the binary no longer has are left out; a shard it has is kept.
    assert rows == ["e2e.convergence 430", "reports 120", "unit.stepwise_bench_tests.5 60"]
