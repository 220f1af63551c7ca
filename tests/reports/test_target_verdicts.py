"""The two verdicts of a row trained to a target (target_verdicts.py) and the speedrun suite beside the published
record times (record_times.py, reports/reference/speedrun.json): the tables, the report's and the dashboard's
sections, the record table's figures as the spec gives them, and the reference format's minutes rows."""

import copy
import json

import pytest
import resultgen as g
from conftest import ROOT, column
from stepwise_report.analysis.analysis import build_chain
from stepwise_report.analysis.reference import REFERENCE_DIR, load_references, parse_reference
from stepwise_report.cli import main as report_main
from stepwise_report.read.results import InputError, Result
from stepwise_report.render.record_times import record_times_table
from stepwise_report.render.target_verdicts import has_verdicts, verdict_p_cell, verdict_table
from test_convergence import TARGET, convergence

RUN = "20260301T120000Z_tiny_cpu"
SPEEDRUN_FLAGS = ["trapezoid", "rotary", "muon", "relu2", "zero_init_proj", "qk_norm", "logit_softcap"]
FLAGS_INFO = g.FLAGS_INFO + [{"name": f, "summary": f, "applies": "cpu+cuda"} for f in SPEEDRUN_FLAGS]
SUITE = json.loads((ROOT / "ablations" / "suites" / "speedrun.json").read_text())


def ratio(r, low, high, p, n=5):
    return {"ratio": r, "low": low, "high": high, "p": p, "n": n, "baseline_n": 5}


def rule(status, mean, p, budget=160, source="upper median of steps to target", reruns=0):
    return {
        "test": "one-sided",
        "target_loss": TARGET,
        "record_p": 0.01,
        "budget": budget,
        "budget_from": source,
        "losses": [{"seed": i, "loss": mean, "source": "trained", "reason": None, "rerun_s": 0.0} for i in range(5)],
        "n": 5,
        "mean": mean,
        "sd": 0.0123,
        "t": -4.0,
        "df": 4.0,
        "p": p,
        "reruns": reruns,
        "rerun_s": 1.5 * reruns,
        "status": status,
        "reason": "fewer than 2 seeds" if status == "not judged" else "figures",
    }


def speedrun_docs() -> list[dict]:
    """The speedrun suite on a CPU: a baseline, a row slower to target (shown as it is), and three faster."""
    rows = [(s["label"], s["add"], 1.0, 1.0) for s in SUITE["rows"]]
    docs = g.cumulative(
        RUN, "speedrun", rows, device_kind="cpu", device_name="Test CPU", mfu=None, flags_info=FLAGS_INFO
    )
    to_target = [[150, 160, 170], [200, 210, 220], [120, 130, 140], [100, 110, 120], [90, 100, 110]]
    verdicts = [
        None,
        ratio(1.31, 1.19, 1.44, 0.004),
        ratio(0.81, 0.70, 0.93, 0.02),
        ratio(0.69, 0.60, 0.80, 0.001),
        ratio(0.62, 0.55, 0.70, 0.0004),
    ]
    rules = [
        rule("meets the record rule", 2.79, 0.00031),
        rule("does not meet the record rule", 2.83, 0.9),
        rule("meets the record rule", 2.78, 0.002, reruns=2),
        rule("not judged", None, None),
        rule("meets the record rule", 2.77, 0.0009, budget=150, source="--step-budget"),
    ]
    rules[3].update(mean=None, sd=None, t=None, df=None, n=1)
    for i, doc in enumerate(docs):
        guard = {"status": "baseline"} if i == 0 else {"status": "faster to target", "p": 0.01}
        doc["convergence"] = convergence(to_target[i], 5.0, guard)
        doc["convergence"]["step_budget"] = None
        doc["convergence"]["verdict"] = (
            None if verdicts[i] is None else {"time": verdicts[i], "steps": verdicts[i], "interval": "", "test": ""}
        )
        doc["convergence"]["record_rule"] = rules[i]
        doc["config"]["target"] = {
            "loss": TARGET,
            "eval_every": 10,
            "eval_batches": 4,
            "max_steps": 400,
            "max_time_s": 600,
            "warmup_steps": 2,
            "seeds": 5,
            "step_budget": None,
            "record_p": 0.01,
        }
        if g.VALIDATOR:
            g.VALIDATOR.validate(doc)
    return docs


def test_the_verdict_table_shows_both_verdicts_and_a_slower_row_as_it_is():
    steps = build_chain([Result(None, d) for d in speedrun_docs()])
    assert has_verdicts(steps)
    table = verdict_table(steps)
    assert column(table, "time × base [95%]") == [
        "baseline",
        "×1.31 [1.19–1.44]",
        "×0.81 [0.70–0.93]",
        "×0.69 [0.60–0.80]",
        "×0.62 [0.55–0.70]",
    ]
    assert column(table, "budget") == ["160 (median)", "160 (median)", "160 (median)", "160 (median)", "150 (given)"]
    assert column(table, "p one-sided") == ["3.1e-04", "0.900", "0.002", "—", "9.0e-04"]
    assert column(table, "speedrun's rule") == [
        "meets",
        "does not meet",
        "meets",
        "not judged: fewer than 2 seeds",
        "meets",
    ]
    assert column(table, "loss at budget (n)")[0] == "2.7900 ± 0.0123 (5)"


def test_the_record_times_stand_beside_ours_each_against_its_own_baseline():
    steps = build_chain([Result(None, d) for d in speedrun_docs()])
    ref = load_references(flags=set(g.FLAG_ORDER) | set(SPEEDRUN_FLAGS))["speedrun"]
    table = record_times_table(steps, ref)
    assert column(table, "record") == ["#1", "#2", "#3", "#5", "#9"]
    assert column(table, "published min") == ["45", "31.4", "24.9", "15.2", "8.2"]
    assert column(table, "published × base") == ["×1.00", "×0.70", "×0.55", "×0.34", "×0.18"]
    assert column(table, "record's own")[3] == "22.3 → 15.2 (×0.68, from #4)"
    assert column(table, "ours × base [95%]")[:2] == ["baseline", "×1.31 [1.19–1.44]"]
    assert column(table, "ours: s to target")[0] == "0.80"


def test_the_report_and_the_dashboard_show_both_verdicts_and_the_records(tmp_path):
    for doc in speedrun_docs():
        g.write(tmp_path / "r", doc)
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "#### speedrun: time to target" in md
    assert "speedrun's rule" in md and "| ×1.31 [1.19–1.44] |" in md
    assert "2 seed(s) had stopped at the target before the budget and were re-run" in md
    assert "#### speedrun: ours vs published records (speedrun)" in md
    assert "KellerJordan/modded-nanogpt README.md (the record table) (commit f411b3d" in md
    page = (tmp_path / "out" / "dashboard.html").read_text()
    assert "speedrun&#x27;s rule" in page or "speedrun's rule" in page
    assert "ours vs published records" in page


def test_the_published_record_times_are_the_specs():
    ref = load_references()["speedrun"]
    assert ref.minutes and ref.source["commit"] == "f411b3d"
    assert ref.source["repository"] == "KellerJordan/modded-nanogpt"
    rows = ref.rows
    assert [r.record for r in rows] == [1, 2, 3, 5, 9]
    assert [r.minutes_to_target for r in rows] == [45, 31.4, 24.9, 15.2, 8.2]
    assert [(r.before_record, r.before_minutes) for r in rows] == [
        (None, None),
        (1, 45),
        (2, 31.4),
        (4, 22.3),
        (8, 10.8),
    ]
    # Keyed by the same flags as the suite's rows, so each of our rows finds its record.
    assert [list(r.added) for r in rows] == [s["add"] for s in SUITE["rows"]]


def test_a_minutes_table_needs_minutes_and_results_without_its_flags_leave_it_out():
    data = json.loads((REFERENCE_DIR / "speedrun.json").read_text())
    bad = copy.deepcopy(data)
    del bad["rows"][2]["minutes_to_target"]
    with pytest.raises(InputError, match="minutes_to_target"):
        parse_reference(bad, "bad")
    bad = copy.deepcopy(data)
    bad["metric"] = "hours"
    with pytest.raises(InputError, match="metric"):
        parse_reference(bad, "bad")
    # Results written before the speedrun's flags existed cannot make any of its steps: the table is left out.
    assert "speedrun" not in load_references(flags=set(g.FLAG_ORDER))
    # Results that know some of its steps must know all: a misspelt or dropped name still fails.
    with pytest.raises(InputError, match="unknown flag"):
        load_references(flags=set(g.FLAG_ORDER) | {"muon"})


def test_a_p_its_exact_test_could_not_bring_below_the_level_is_not_judged():
    # Gehan's exact test at 3 vs 3 with a seed censored: its smallest p is 0.1, so its 0.4 decides nothing.
    assert verdict_p_cell({**ratio(0.5, 0.3, None, 0.4, n=2), "min_p": 0.1}) == "n.j."
    assert verdict_p_cell({**ratio(0.5, 0.3, 0.7, 0.029), "min_p": 2 / 70}) == "0.029"
    assert verdict_p_cell(ratio(0.5, 0.3, 0.7, 0.004)) == "0.004", "Welch's: no smallest p"
