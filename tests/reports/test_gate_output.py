"""gate_output.py: the printed verdict always the exit status's, and one line per comparison saying what its counts
mean."""

import json
import re

import pytest
import resultgen as g
from conftest import BASE, CAND, gate_line, write_runs
from stepwise_report.cli import main


@pytest.mark.parametrize("case, code", [("pass", 0), ("slower", 1), ("lost", 1), ("few", 3)])
def test_printed_verdict_always_agrees_with_the_exit_status(tmp_path, capsys, case, code):
    kw = {"few": {"n": 3}}.get(case, {})
    cand = g.cumulative(CAND, "raschka", g.RASCHKA[:4], base_ms=300 if case == "slower" else 200, **kw)
    base, cand = write_runs(
        tmp_path, g.cumulative(BASE, "raschka", g.RASCHKA[:4], **kw), cand[:3] if case == "lost" else cand
    )
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == code
    words = {0: "PASS", 1: "FAIL", 3: "NOTHING JUDGED"}[code]
    assert gate_line(capsys.readouterr().out) == f"gate: {words} (exit {code})"
    gate = json.loads(out_json.read_text())["gate"]
    assert (gate["verdict"], gate["exit_code"], gate["passed"]) == (words, code, code == 0)


def test_gate_relative_does_not_call_a_uniform_slowdown_a_pass_of_slower_rows(tmp_path, capsys):
    base, cand = write_runs(
        tmp_path,
        g.cumulative(BASE, "raschka", g.RASCHKA[:6]),
        g.cumulative(CAND, "raschka", g.RASCHKA[:6], base_ms=240),
    )
    assert main(["compare", base, cand, "--gate", "relative"]) == 0
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: PASS (exit 0)"
    assert not re.search(r"PASS \(.*SLOWER", out)
    absolute = next(line for line in out.splitlines() if line.startswith("  absolute step times"))
    assert "(not gated under --gate relative): 6 SLOWER" in absolute
    assert "the candidate's absolute step times are slower (6 of 6, median +20.0%)" in absolute
    relative = next(line for line in out.splitlines() if line.startswith("  within-run speedups"))
    assert "(gated)" in relative and "the relative speedups are unchanged" in relative
    # Gated on both, the same runs fail.
    assert main(["compare", base, cand]) == 1
