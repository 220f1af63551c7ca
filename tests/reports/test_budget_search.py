"""budget_file.py, budget_search.py and inputs.py: a folder ./ablate --find-budget wrote (budget.json and a folder of
result documents per budget probed) is read as one search: each row's N with its bracket, its figures over the
baseline's as intervals, the published ratio matched by the flags a row adds, every probe's verdict; and its probes
are not shown as runs of their own. A search written by scripts/find_budget.py before it still reads, saying what it
lacks."""

import json

import resultgen as g
from stepwise_report.cli import main
from stepwise_report.read.inputs import load_inputs
from stepwise_report.render.budget_search import budget_notes, budget_probes_table, budget_table


def _search(root, rows, version=2):
    search = root / "budget_speedrun"
    g.write(search / "budget_60", g.make_result(run_id="20260301T120000Z_probe60", name="single/00_baseline"))
    g.write(search / "budget_90", g.make_result(run_id="20260301T120500Z_probe90", name="single/00_baseline"))
    head = {"version": version, "suite": "speedrun", "grid": [40, 60, 90], "grid_from": "--budget-grid"}
    head |= {"target_loss": 2.8, "record_p": 0.01, "seeds": 5, "args": [], "rows": rows}
    (search / "budget.json").write_text(json.dumps(head))
    return search


def _probe(n, outcome, mean=None):
    return {
        "budget": n,
        "outcome": outcome,
        "status": {"holds": "meets the record rule", "fails": "does not meet the record rule"}.get(outcome, outcome),
        "mean": mean,
        "sd": 0.0123 if mean else None,
        "n": 5,
        "t": -5.1 if mean else None,
        "p": 0.0021 if mean else None,
        "reason": "fewer than 2 seeds" if mean is None else "figures",
        "seconds": [n / 30, n / 30],
        "seconds_median": n / 30,
    }


def _row(index, label, budget, below, added, monotone=True):
    return {
        "index": index,
        "label": label,
        "added": added,
        "skipped": None,
        "branched": index > 0,
        "from_scratch": None if index else "its cosine schedule decays from its first step",
        "steps_per_seed": 733,
        "search_s": 42.0,
        "budget": budget,
        "below": below,
        "monotone": monotone,
        "summary": f"N {budget}" + ("" if monotone else "; not monotone: holds at 40, fails at 60, holds at 90"),
        "probes": [_probe(40, "holds", 2.79), _probe(60, "fails", 2.81), _probe(90, "holds", 2.7712)],
        "seconds_at_n": {"median": 3.0, "low": 2.0, "high": 3.0},
        "steps_ratio": None if index == 0 else budget / 90,
        "n_ratio": None if index == 0 else {"ratio": 0.67, "low": 0.44, "high": 1.0},
        "seconds_ratio": None if index == 0 else {"ratio": 0.62, "low": 0.41, "high": None},
    }


ROWS = [
    _row(0, "baseline", 90, 60, []),
    _row(1, "#2 trapezoid schedule + rotary", 60, 40, ["rotary", "trapezoid"]),
    _row(2, "#3 Muon", 90, 60, ["muon"], monotone=False),
]


def test_a_search_folder_is_one_search_and_its_probes_are_no_runs(tmp_path):
    g.standard_run(tmp_path)
    _search(tmp_path, ROWS)
    found = load_inputs([str(tmp_path)])
    assert len(found.budget_searches) == 1
    assert not [r for r in found.results if "probe" in r.run_id], "a probe is the search's working, not a run"
    assert len(found.results) == 28, "the runs beside it are read as before"


def test_the_table_gives_each_rows_n_its_bracket_and_its_figures_as_intervals(tmp_path):
    _search(tmp_path, ROWS)
    (search,) = load_inputs([str(tmp_path)]).budget_searches
    table = budget_table(search)
    assert table.rows[0][2:7] == ["90", "(60, 90]", "baseline", "3.0 (2.0–3.0]", "baseline"]
    assert table.rows[1][2:8] == ["60", "(40, 60]", "×0.67 (0.44–1.00]", "3.0 (2.0–3.0]", "×0.62 (0.41–∞]", "×0.70"]
    assert table.rows[1][8] == "42 s, 733 steps a seed, branched"
    assert table.rows[0][8].endswith("from scratch")
    assert table.rows[2][7] == f"×{24.9 / 45:.2f}", "the published row matched by the flags it adds"
    notes = budget_notes(search)
    assert any("2 #3 Muon: N 90; not monotone: holds at 40, fails at 60, holds at 90" in n for n in notes), notes
    assert not any("did not finish" in n for n in notes)


def test_every_probes_verdict_is_shown(tmp_path):
    _search(tmp_path, ROWS)
    (search,) = load_inputs([str(tmp_path)]).budget_searches
    probes = budget_probes_table(search)
    assert len(probes.rows) == 9
    assert probes.rows[2][2:7] == ["90", "holds", "2.7712 ± 0.0123 (5)", "-5.10", "0.0021"]
    assert probes.rows[1][3] == "fails"


def test_a_search_under_way_says_so(tmp_path):
    _search(tmp_path, None)
    (search,) = load_inputs([str(tmp_path)]).budget_searches
    assert budget_table(search).rows == []
    assert "did not finish" in budget_notes(search)[0]


def test_a_search_from_before_the_command_reads_and_says_what_it_lacks(tmp_path):
    old = [{"index": 0, "label": "baseline", "budget": 90}, {"index": 1, "label": "#2", "budget": None}]
    head = {"grid": [40, 60, 90], "args": [], "rows": old}
    (tmp_path / "budget.json").write_text(json.dumps(head))
    (search,) = load_inputs([str(tmp_path)]).budget_searches
    assert budget_table(search).rows == [["0", "baseline", "90"], ["1", "#2", "none"]]
    assert "no bracket" in budget_notes(search)[0]


def test_the_report_shows_the_search_after_the_runs(tmp_path):
    g.standard_run(tmp_path / "run")
    _search(tmp_path / "run", ROWS)
    assert main([str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## budget search: budget_speedrun" in report and "×0.62 (0.41–∞]" in report
    assert "2.7712 ± 0.0123 (5)" in report, "every probe's verdict"
    assert "probe60" not in report and "probe90" not in report
