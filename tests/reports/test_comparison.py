"""comparison.py: what fails the gate (a lost configuration, a loss check newly changed), the exit status, and
whose noise kept a possible regression from being judged."""

import json
import re

import pytest
import resultgen as g
from conftest import (
    BASE,
    CAND,
    DISTURBED,
    MICRO_RAW,
    QUIET,
    gate_line,
    gate_lines,
    micro_rows,
    run_with,
    write_json,
    write_pair,
    write_runs,
)
from stepwise_report.cli import main
from stepwise_report.gate.gate import UNSURE


def test_loss_math_changed_and_failures_fail_the_gate(tmp_path, capsys):
    base, cand = write_pair(tmp_path, loss={2: "math changed"}, fail={4: "illegal memory access"})
    assert main(["compare", base, cand, "--json-out", str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "raschka/02_tf32: loss check newly 'math changed'" in out
    assert "lost: raschka/04_pinned_memory: ok in the baseline, failed in the candidate: illegal memory access" in out


def test_a_candidate_missing_9_of_11_configurations_fails(tmp_path, capsys):
    base, cand = write_runs(
        tmp_path, g.cumulative(BASE, "raschka", g.RASCHKA), g.cumulative(CAND, "raschka", g.RASCHKA)[:2]
    )
    assert main(["compare", base, cand]) == 1
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: FAIL (exit 1)"
    assert "lost: raschka/07_flash: ok in the baseline, missing from the candidate" in out
    assert sum(line.startswith("  lost: ") for line in out.splitlines()) == 9
    # --allow-missing lists them as not compared; the two that ran are judged and pass.
    assert main(["compare", base, cand, "--allow-missing"]) == 0
    out = capsys.readouterr().out
    assert "not compared (--allow-missing" in out and "raschka/10_max_batch: ok in the baseline, missing" in out
    assert gate_line(out) == "gate: PASS (exit 0)"


def _drop_case(doc: dict, name: str) -> dict:
    out = dict(doc, benchmarks=[b for b in doc["benchmarks"] if b["name"] != name])
    return out


@pytest.mark.parametrize("how", ["missing", "skipped"])
def test_results_and_micro_gates_treat_a_lost_configuration_alike(tmp_path, capsys, how):
    """One rule for both kinds of input: ok in the baseline and missing or skipped in the candidate fails the gate
    with the same words, and --allow-missing turns it into 'not compared' for both."""
    docs = g.cumulative(CAND, "raschka", g.RASCHKA[:4])
    if how == "missing":
        docs = [d for d in docs if not d["name"].endswith("02_tf32")]
    else:
        docs[2] = g.make_result(
            run_id=CAND,
            name=docs[2]["name"],
            suite=docs[2]["suite"],
            status="skipped",
            reason="tf32 needs CUDA",
            flags=["dynamic_mask", "tf32"],
        )
    base, cand = write_runs(tmp_path / "runs", g.cumulative(BASE, "raschka", g.RASCHKA[:4]), docs)
    case = "layernorm/tiny/native/fwd/B:4/T:16"
    micro_c = micro_rows(MICRO_RAW, 3)
    if how == "missing":
        micro_c = _drop_case(micro_c, case)
    else:
        for b in micro_c["benchmarks"]:
            if b["name"] == case:
                b.update(error_occurred=True, error_message="tf32 needs CUDA")
    mb, mc = write_json(tmp_path / "mb.json", micro_rows(MICRO_RAW, 3)), write_json(tmp_path / "mc.json", micro_c)
    where = "missing from the candidate" if how == "missing" else "skipped in the candidate: tf32 needs CUDA"
    for b, c, name in ((base, cand, "raschka/02_tf32"), (str(mb), str(mc), case)):
        assert main(["compare", b, c]) == 1
        assert f"lost: {name}: ok in the baseline, {where}" in capsys.readouterr().out
        code = main(["compare", b, c, "--allow-missing"])
        out = capsys.readouterr().out
        assert code == 0 and f"  {name}: ok in the baseline, {where}" in out and "lost:" not in out


def test_eight_steps_each_twice_as_slow_fails(tmp_path, capsys):
    # Before: a fixed 9-sample minimum made every row UNSURE and the gate printed "PASS (30 UNSURE)".
    base, cand = write_runs(
        tmp_path,
        g.cumulative(BASE, "raschka", g.RASCHKA, n=8),
        g.cumulative(CAND, "raschka", g.RASCHKA, n=8, base_ms=400),
    )
    assert main(["compare", base, cand]) == 1
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: FAIL (exit 1)" and "UNSURE" not in gate_line(out)
    assert "regression: raschka/07_flash: step time +100.0% (SLOWER)" in out


def test_too_few_samples_exits_3_with_the_steps_that_would_do(tmp_path, capsys):
    base, cand = write_runs(
        tmp_path / "a",
        g.cumulative(BASE, "raschka", g.RASCHKA[:4], n=3),
        g.cumulative(CAND, "raschka", g.RASCHKA[:4], n=3, base_ms=240),
    )
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 3
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: NOTHING JUDGED (exit 3)"
    assert "samples per configuration: baseline 3 steps, candidate 3 steps" in out
    assert "the U test cannot reach p < 0.05 with fewer than 4 per side" in out
    hint = re.search(r"--min-steps (\d+) on both sides would be enough for a verdict at ±5%", out)
    assert hint, out
    report = json.loads(out_json.read_text())
    assert report["gate"]["exit_code"] == 3 and report["gate"]["nothing_judged"]
    # The hint is enough: the same runs with that many steps get a verdict (a 20% slowdown: FAIL).
    n = int(hint.group(1))
    base, cand = write_runs(
        tmp_path / "b",
        g.cumulative(BASE, "raschka", g.RASCHKA[:4], n=n),
        g.cumulative(CAND, "raschka", g.RASCHKA[:4], n=n, base_ms=240),
    )
    assert main(["compare", base, cand]) == 1


# --- a possible regression the noise hid: never a pass --------------------------------------------------------------


def test_the_reason_names_whose_noise_made_the_interval_wide(tmp_path, capsys):
    # Only the baseline was disturbed; the candidate ran quietly at 100 ms.
    base, cand = write_runs(tmp_path, run_with(BASE, DISTURBED), run_with(CAND, g.step_times(100, 0.01, 40, 2)))
    assert main(["compare", base, cand, "--gate", "absolute"]) == 3
    line = gate_lines(capsys.readouterr().out, "could not judge")[0]
    assert (
        "the baseline's own noise made the interval wide: baseline raschka/03_fused_AdamW noise 41% "
        "(above its --max-noise 2%)" in line
    )
    assert "candidate raschka/03_fused_AdamW" not in line
    # The other way round: a quiet baseline at 80 ms, the candidate 20% slower and all over the place (noise 30%).
    wild = g.step_times(100, 0.6, 40, 4)
    base, cand = write_runs(tmp_path / "2", run_with(BASE, g.step_times(80, 0.01, 40, 2)), run_with(CAND, wild))
    assert main(["compare", base, cand, "--gate", "absolute"]) == 3
    line = gate_lines(capsys.readouterr().out, "could not judge")[0]
    assert "step time +20.5%" in line
    assert "the candidate's own noise made the interval wide: candidate raschka/03_fused_AdamW noise 30%" in line
    assert "baseline raschka/03_fused_AdamW" not in line


def test_unsure_the_better_way_does_not_block_and_a_confirmed_regression_wins(tmp_path, capsys):
    faster = [t * 0.8 for t in DISTURBED]
    base, cand = write_runs(tmp_path / "a", run_with(BASE, DISTURBED), run_with(CAND, faster))
    assert main(["compare", base, cand, "--gate", "absolute"]) == 0  # UNSURE, but only possibly faster
    assert "could not judge" not in capsys.readouterr().out
    # A confirmed SLOWER elsewhere is exit 1 even with the unjudged row beside it.
    cand_docs = run_with(CAND, [t * 1.25 for t in DISTURBED])
    d = cand_docs[5]
    cand_docs[5] = g.make_result(
        run_id=CAND,
        name=d["name"],
        suite=d["suite"],
        flags=d["config"]["flags"],
        samples=[s["ms"] * 1.3 for s in run_with(BASE, DISTURBED)[5]["steps"]],
        max_noise=0.02,
    )
    base, cand = write_runs(tmp_path / "b", run_with(BASE, DISTURBED), cand_docs)
    assert main(["compare", base, cand, "--gate", "absolute"]) == 1
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: FAIL (exit 1)" and gate_lines(out, "could not judge")


def test_a_slowdown_hidden_by_a_disturbed_baseline_is_not_passed(tmp_path, capsys):
    slower = [t * 1.25 for t in DISTURBED]  # the same configuration 25% slower, measured under the same disturbance
    # Quiet baseline: the 25% slowdown is confirmed.
    base, cand = write_runs(tmp_path / "quiet", run_with(BASE, QUIET), run_with(CAND, slower))
    assert main(["compare", base, cand]) == 1
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: FAIL (exit 1)" and "regression: raschka/03_fused_AdamW: step time +25" in out
    # Disturbed baseline: the U test sees it (p ≈ 0.0005) but the interval reaches below 1, so the row is UNSURE
    # with its estimate 25% slower. Before: "gate: PASS (exit 0)". Now: exit 3, and the reason.
    base, cand = write_runs(tmp_path / "disturbed", run_with(BASE, DISTURBED), run_with(CAND, slower))
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 3
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: COULD NOT JUDGE (exit 3)"
    line = next(x for x in gate_lines(out, "could not judge") if ": step time " in x)
    assert re.search(
        r"raschka/03_fused_AdamW: step time \+25\.0% \(95% CI -\d+\.\d% … \+\d+\.\d%\) is beyond the "
        r"±5% threshold but UNSURE",
        line,
    ), line
    assert "baseline raschka/03_fused_AdamW noise 41% (above its --max-noise 2%)" in line
    report = json.loads(out_json.read_text())
    row = next(r for r in report["absolute"] if r["name"] == "raschka/03_fused_AdamW")
    assert row["verdict"] == UNSURE and row["p_value"] < 0.001 and row["ci_low"] < 1 < row["ci_high"]
    gate = report["gate"]
    assert (gate["verdict"], gate["exit_code"], gate["passed"]) == ("COULD NOT JUDGE", 3, False)
    assert gate["could_not_judge"][0]["reason"] == line.split("could not judge: ", 1)[1]
    assert not gate["nothing_judged"]  # other rows were judged: this is not "too few samples"
    # --allow-unsure lists it and passes.
    assert main(["compare", base, cand, "--allow-unsure", "--json-out", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert gate_line(out) == "gate: PASS (exit 0)"
    allowed = gate_lines(out, "unsure (--allow-unsure, not failing)")
    assert any("raschka/03_fused_AdamW: step time +25.0%" in x for x in allowed)
    gate = json.loads(out_json.read_text())["gate"]
    assert gate["passed"] and all(u["allowed"] for u in gate["could_not_judge"])


def test_a_lost_speedup_hidden_by_noise_is_not_passed_either(tmp_path, capsys):
    # Gated on the within-run speedups only: step 3's × previous and × baseline lost 20% under the noise.
    base, cand = write_runs(tmp_path, run_with(BASE, DISTURBED), run_with(CAND, [t * 1.25 for t in DISTURBED]))
    assert main(["compare", base, cand, "--gate", "relative"]) == 3
    lines = gate_lines(capsys.readouterr().out, "could not judge")
    assert [line.split(": ", 1)[1].split(" (95% CI")[0] for line in lines] == [
        "raschka/03_fused_AdamW: × previous speedup -20.0%",
        "raschka/03_fused_AdamW: × baseline speedup -20.0%",
    ]


def test_a_candidate_with_the_flash_step_skipped_fails(tmp_path, capsys):
    base, cand = write_runs(
        tmp_path,
        g.cumulative(BASE, "raschka", g.RASCHKA),
        g.cumulative(CAND, "raschka", g.RASCHKA, skip={7: "no flash kernel for sm_70"}),
    )
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 1
    out = capsys.readouterr().out
    assert "lost: raschka/07_flash: ok in the baseline, skipped in the candidate: no flash kernel for sm_70" in out
    report = json.loads(out_json.read_text())
    assert report["lost"] == [
        {
            "name": "raschka/07_flash",
            "baseline": "ok",
            "candidate": "skipped",
            "reason": "no flash kernel for sm_70",
            "allowed": False,
            "note": "ok in the baseline, skipped in the candidate: no flash kernel for sm_70",
        }
    ]
    assert {r["name"]: r["verdict"] for r in report["absolute"]}["raschka/07_flash"] == "LOST"
