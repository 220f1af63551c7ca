"""run_comparison.py: two runs, configuration by configuration, on step times and within-run speedups."""

import json

import resultgen as g
from conftest import BASE, CAND, write_pair, write_runs
from stepwise_report.cli import main
from stepwise_report.gate.gate import SAME, SLOWER, UNSURE


def test_regression_exits_1_and_writes_json(tmp_path, capsys):
    base, cand = write_pair(tmp_path, slow_step=3)
    out = tmp_path / "compare.json"
    assert main(["compare", base, cand, "--json-out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "raschka/03_fused_AdamW" in text and "SLOWER" in text and "gate: FAIL" in text
    report = json.loads(out.read_text())
    rows = {r["name"]: r for r in report["absolute"]}
    assert rows["raschka/03_fused_AdamW"]["verdict"] == SLOWER
    assert rows["raschka/00_baseline"]["verdict"] == SAME
    assert report["gate"]["exit_code"] == 1 and report["settings"]["threshold"] == 0.05
    assert report["gate"]["verdict"] == "FAIL" and not report["gate"]["passed"]
    rel = [r for r in report["relative"] if r["name"] == "raschka/03_fused_AdamW"]
    assert {r["speedup"] for r in rel} == {"× previous", "× baseline"} and all(r["verdict"] == SLOWER for r in rel)


def test_regression_below_threshold_passes(tmp_path):
    base, cand = write_pair(tmp_path, slow_step=3)
    assert main(["compare", base, cand, "--threshold", "15%", "--json-out", str(tmp_path / "c.json")]) == 0


def test_same_run_twice_passes(tmp_path):
    base, _ = write_pair(tmp_path)
    assert main(["compare", base, base, "--json-out", str(tmp_path / "c.json")]) == 0


def test_other_device_is_refused_unless_across_machines_asks_for_the_speedups(tmp_path, capsys):
    base, cand = write_pair(tmp_path, cand_kw={"device_name": "NVIDIA A100-SXM4-40GB"})
    out = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out)]) == 3
    assert json.loads(out.read_text())["gate"]["verdict"] == "DIFFERENT MACHINES"
    assert "baseline made on NVIDIA H100" in capsys.readouterr().out
    assert main(["compare", base, cand, "--across-machines", "--json-out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert not report["same_device"] and all(r["verdict"] == "N/A" for r in report["absolute"])
    assert all(r["verdict"] in (SAME, UNSURE) for r in report["relative"]) and report["relative"]
    assert main(["compare", base, cand, "--across-machines", "--gate", "absolute", "--json-out", str(out)]) == 2
    assert "use --gate relative" in capsys.readouterr().err


def test_python_rows_are_their_own_configurations_in_the_gate(tmp_path, capsys):
    base_docs = g.cumulative(BASE, "raschka", g.RASCHKA[:4])
    cand_docs = g.cumulative(CAND, "raschka", g.RASCHKA[:4])
    base_docs += [g.python_row(base_docs[3], "python-eager", slower=1.2)]
    cand_docs += [g.python_row(cand_docs[3], "python-eager", slower=1.8)]
    base, cand = write_runs(tmp_path, base_docs, cand_docs)
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 1
    report = json.loads(out_json.read_text())
    verdicts = {r["name"]: r["verdict"] for r in report["absolute"]}
    assert verdicts["raschka/03_fused_AdamW"] == "SAME" and verdicts["raschka/03_fused_AdamW.python-eager"] == SLOWER
    # Only libtorch rows form the within-run speedups.
    assert not any("python" in r["name"] for r in report["relative"])
    capsys.readouterr()
    base, cand = write_runs(tmp_path / "2", base_docs, cand_docs[:-1])
    assert main(["compare", base, cand]) == 1
    assert (
        "lost: raschka/03_fused_AdamW.python-eager: ok in the baseline, missing from the candidate"
        in capsys.readouterr().out
    )
