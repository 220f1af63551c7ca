"""budget_search.py and inputs.py: a folder scripts/find_budget.py wrote (budget.json and a run of the suite per
probe) is read as one search, its table in the report, and its probes are not shown as runs of their own."""

import json

import resultgen as g
from stepwise_report.budget_search import budget_notes, budget_table
from stepwise_report.cli import main
from stepwise_report.inputs import load_inputs

RULE = {"n": 5, "mean": 2.7712, "sd": 0.0123, "p": 0.0021, "status": "meets the record rule"}


def _search(root, rows):
    search = root / "budget_speedrun"
    g.write(search / "budget_60", g.make_result(run_id="20260301T120000Z_probe60", name="single/00_baseline"))
    g.write(search / "budget_90", g.make_result(run_id="20260301T120500Z_probe90", name="single/00_baseline"))
    (search / "budget.json").write_text(json.dumps({"grid": [40, 60, 90], "args": [], "rows": rows}))
    return search


def _row(index, label, budget, ratio=None):
    seconds = {"ratio": ratio, "low": ratio and ratio - 0.1, "high": ratio and ratio + 0.1}
    return {
        "index": index,
        "label": label,
        "budget": budget,
        "probed": [90, 60],
        "seconds_at_budget": [3.0, 3.4],
        "steps_ratio": None if index == 0 else budget / 90,
        "seconds_ratio": seconds,
        "published_ratio": None if index == 0 else 0.7,
        "record_rule": RULE,
    }


def test_a_search_folder_is_one_search_and_its_probes_are_no_runs(tmp_path):
    g.standard_run(tmp_path)
    _search(tmp_path, [_row(0, "baseline", 90), _row(1, "#2 trapezoid schedule + rotary", 60, 0.62)])
    found = load_inputs([str(tmp_path)])
    assert len(found.budget_searches) == 1
    assert not [r for r in found.results if "probe" in r.run_id], "a probe is the search's working, not a run"
    assert len(found.results) == 28, "the runs beside it are read as before"


def test_the_table_gives_each_rows_n_seconds_ratio_and_the_rule_there(tmp_path):
    _search(tmp_path, [_row(0, "baseline", 90), _row(1, "#2 trapezoid schedule + rotary", 60, 0.62)])
    (search,) = load_inputs([str(tmp_path)]).budget_searches
    table = budget_table(search)
    assert [table.rows[0][i] for i in (2, 4, 5)] == ["90", "3.2", "baseline"], "the median of two: their mean"
    assert table.rows[1][2:7] == ["60", "×0.67", "3.2", "×0.62 [0.52–0.72]", "×0.70"]
    assert table.rows[1][7] == "2.7712 ± 0.0123 (5), p 0.0021"
    assert not any("did not finish" in n for n in budget_notes(search))


def test_a_search_under_way_says_so(tmp_path):
    _search(tmp_path, None)
    (search,) = load_inputs([str(tmp_path)]).budget_searches
    assert budget_table(search).rows == []
    assert "did not finish" in budget_notes(search)[0]


def test_the_report_shows_the_search_after_the_runs(tmp_path):
    g.standard_run(tmp_path / "run")
    _search(tmp_path / "run", [_row(0, "baseline", 90), _row(1, "#2 trapezoid schedule + rotary", 60, 0.62)])
    assert main([str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## budget search: budget_speedrun" in report and "×0.62 [0.52–0.72]" in report
    assert "probe60" not in report and "probe90" not in report
