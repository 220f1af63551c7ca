"""gate.py: the regression gate's verdicts and its exit status, for runs and micro-benchmark files."""

import json
import re

import numpy as np
import pytest
import resultgen as g
from conftest import MICRO_FIXTURE, MICRO_RAW, ROOT, micro_rows, null_coverage, run_report, write_json
from stepwise_report.cli import main
from stepwise_report.gate import FASTER, SAME, SLOWER, UNSURE, Settings, classify, compare_samples, compare_speedups
from stepwise_report.speedup import floor_samples, smallest_p

BASE, CAND = "20260301T120000Z_t_h100", "20260302T120000Z_t_h100"


def _noisy(median, cv, n, seed):
    return g.step_times(median, cv, n, seed)


def test_ten_percent_regression_is_slower():
    v = compare_samples(_noisy(100, 0.02, 40, 1), _noisy(110, 0.02, 40, 2), Settings(), "x")
    assert v.verdict == SLOWER and v.ratio == pytest.approx(1.10, rel=0.02)
    assert v.p_value < 1e-6 and v.ci_low > 1.05


def test_ten_percent_improvement_is_faster():
    assert compare_samples(_noisy(100, 0.02, 40, 1), _noisy(90, 0.02, 40, 2), Settings(), "x").verdict == FASTER


def test_identical_samples_are_same():
    a = _noisy(100, 0.05, 30, 1)
    v = compare_samples(a, list(a), Settings(), "x")
    assert v.verdict == SAME and v.ratio == 1.0 and v.p_value == 1.0
    assert compare_samples([5.0] * 20, [5.0] * 20, Settings(), "x").verdict == SAME


@pytest.mark.parametrize("seed", range(8))
def test_noisy_tie_is_never_slower(seed):
    v = compare_samples(_noisy(100, 0.15, 12, seed), _noisy(100, 0.15, 12, seed + 100), Settings(), "x")
    assert v.verdict in (SAME, UNSURE)


def test_significant_change_within_threshold_is_same_with_a_note():
    v = compare_samples(_noisy(100, 0.005, 200, 1), _noisy(102, 0.005, 200, 2), Settings(), "x")
    assert v.verdict == SAME and "within the ±5% threshold" in v.note


def test_too_few_samples_is_the_u_tests_own_floor():
    # With 3 per side the exact U test's smallest two-sided p is 2/C(6,3) = 0.1: no verdict is possible.
    v = compare_samples(_noisy(100, 0.01, 3, 1), _noisy(150, 0.01, 3, 2), Settings(), "x")
    assert v.verdict == UNSURE and "too few samples" in v.note and "fewer than 4 per side" in v.note
    assert v.needed >= 4
    # With 4 per side (smallest p 2/C(8,4) = 0.029) a clear slowdown is decided, not a fixed 9+.
    assert floor_samples(0.05) == 4 and floor_samples(0.01) == 5
    assert compare_samples(_noisy(100, 0.01, 4, 1), _noisy(150, 0.01, 4, 2), Settings(), "x").verdict == SLOWER
    # --min-samples still raises the floor when asked.
    assert (
        compare_samples(_noisy(100, 0.01, 5, 1), _noisy(150, 0.01, 5, 2), Settings(min_samples=9), "x").verdict
        == UNSURE
    )


def test_eight_fully_separated_steps_twice_as_slow_are_decisive():
    a, b = _noisy(100, 0.02, 8, 1), _noisy(200, 0.02, 8, 2)
    assert smallest_p(8, 8) == pytest.approx(1.554e-4, rel=1e-3)
    v = compare_samples(a, b, Settings(), "x")
    assert v.verdict == SLOWER and v.p_value == pytest.approx(1.554e-4, rel=1e-3) and v.ci_low > 1.8


def test_bootstrap_is_seeded():
    a, b = _noisy(100, 0.05, 30, 1), _noisy(103, 0.05, 30, 2)
    assert compare_samples(a, b, Settings(seed=3), "x") == compare_samples(a, b, Settings(seed=3), "x")


def test_classify_needs_significance_and_threshold():
    s = Settings()
    assert classify(1.2, 0.9, 1.5, s, worse_when_above=True)[0] == UNSURE
    assert classify(1.2, 1.1, 1.3, s, worse_when_above=True)[0] == SLOWER
    assert classify(0.8, 0.7, 0.9, s, worse_when_above=False)[0] == SLOWER  # a speedup that shrank
    assert classify(1.01, 0.99, 1.03, s, worse_when_above=True)[0] == SAME


def test_speedup_comparison_is_independent_of_machine_speed():
    # The candidate machine is 30% slower overall, but the flag's speedup (2×) is unchanged.
    base_ref, base_step = _noisy(100, 0.02, 30, 1), _noisy(50, 0.02, 30, 2)
    cand_ref, cand_step = _noisy(130, 0.02, 30, 3), _noisy(65, 0.02, 30, 4)
    v = compare_speedups(base_ref, base_step, cand_ref, cand_step, 1.0, 1.0, Settings(), "x")
    assert v.verdict == SAME
    lost = compare_speedups(base_ref, base_step, cand_ref, _noisy(90, 0.02, 30, 4), 1.0, 1.0, Settings(), "x")
    assert lost.verdict == SLOWER


# --- two runs ---------------------------------------------------------------------------------


def _write_pair(tmp_path, slow_step=None, factor=1.10, cand_kw=None, loss=None, fail=None):
    base = g.cumulative(BASE, "raschka", g.RASCHKA[:6])
    cand = g.cumulative(CAND, "raschka", g.RASCHKA[:6], loss=loss, fail=fail, **(cand_kw or {}))
    if slow_step is not None:
        d = cand[slow_step]
        cand[slow_step] = g.make_result(
            run_id=CAND,
            name=d["name"],
            suite=d["suite"],
            flags=d["config"]["flags"],
            samples=[s["ms"] * factor for s in base[slow_step]["steps"]],
            **(cand_kw or {}),
        )
    for d in base:
        g.write(tmp_path / "base", d)
    for d in cand:
        g.write(tmp_path / "cand", d)
    return str(tmp_path / "base" / BASE), str(tmp_path / "cand" / CAND)


def test_regression_exits_1_and_writes_json(tmp_path, capsys):
    base, cand = _write_pair(tmp_path, slow_step=3)
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
    base, cand = _write_pair(tmp_path, slow_step=3)
    assert main(["compare", base, cand, "--threshold", "15%", "--json-out", str(tmp_path / "c.json")]) == 0


def test_same_run_twice_passes(tmp_path):
    base, _ = _write_pair(tmp_path)
    assert main(["compare", base, base, "--json-out", str(tmp_path / "c.json")]) == 0


def test_other_device_compares_only_within_run_speedups(tmp_path, capsys):
    base, cand = _write_pair(tmp_path, cand_kw={"device_name": "NVIDIA A100-SXM4-40GB"})
    out = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert not report["same_device"] and all(r["verdict"] == "N/A" for r in report["absolute"])
    assert all(r["verdict"] in (SAME, UNSURE) for r in report["relative"]) and report["relative"]
    assert main(["compare", base, cand, "--gate", "absolute", "--json-out", str(out)]) == 2
    assert "use --gate relative" in capsys.readouterr().err


def test_loss_math_changed_and_failures_fail_the_gate(tmp_path, capsys):
    base, cand = _write_pair(tmp_path, loss={2: "math changed"}, fail={4: "illegal memory access"})
    assert main(["compare", base, cand, "--json-out", str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "raschka/02_tf32: loss check newly 'math changed'" in out
    assert "lost: raschka/04_pinned_memory: ok in the baseline, failed in the candidate: illegal memory access" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["compare", "/nonexistent", "/nonexistent"], "no such file"),
        (["compare", "{base}"], "required: CANDIDATE"),
        (["compare", "{base}", "{base}", "--threshold", "abc"], "invalid percent"),
        (["compare", "{base}", "{base}", "--gate", "sometimes"], "invalid choice"),
        (["compare", "{both}", "{base}"], "holds 2 runs"),
    ],
)
def test_bad_input_exits_2(tmp_path, capsys, args, message):
    base, cand = _write_pair(tmp_path)
    both = str(tmp_path)
    argv = [a.format(base=base, both=both) for a in args]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_wrapper_exit_status(tmp_path):
    base, cand = _write_pair(tmp_path, slow_step=2)
    proc = run_report("compare", base, cand, "--json-out", tmp_path / "c.json")
    assert proc.returncode == 1, proc.stderr
    assert "regression: raschka/02_tf32: step time" in proc.stdout
    assert np.isfinite(json.loads((tmp_path / "c.json").read_text())["absolute"][2]["ratio"])


# --- two micro-benchmark files ----------------------------------------------------------------


def _compare(tmp_path, base: dict, cand: dict, *options: str) -> tuple[int, dict]:
    b, c = write_json(tmp_path / "base.json", base), write_json(tmp_path / "cand.json", cand)
    out = tmp_path / "compare.json"
    code = main(["compare", str(b), str(c), "--json-out", str(out), *options])
    return code, json.loads(out.read_text())


def _verdicts(report: dict, part: str = "absolute") -> dict[str, str]:
    return {r["name"]: r["verdict"] for r in report[part]}


def test_ten_percent_slowdown_is_slower(tmp_path, capsys):
    code, report = _compare(tmp_path, micro_rows(MICRO_RAW, 3), micro_rows(MICRO_RAW, 3, lambda name: 1.10))
    assert code == 1 and report["kind"] == "micro" and not report["gate"]["passed"]
    verdicts = _verdicts(report)
    assert verdicts["layernorm/tiny/handwritten/fwd/B:4/T:16"] == "SLOWER"
    assert verdicts["matmul/tiny/fp32/mlp_up/B:4/T:64"] == "SLOWER"
    assert verdicts["matmul/tiny/tf32/qkv/B:4/T:64"] == "N/A"  # skipped on both sides
    assert set(verdicts.values()) <= {"SLOWER", "UNSURE", "N/A"}
    row = next(r for r in report["absolute"] if r["name"] == "layernorm/tiny/handwritten/fwd/B:4/T:16")
    assert row["ratio"] == pytest.approx(1.10) and row["baseline_n"] == 9 and row["p_value"] < 0.01
    # Everything slowed alike, so no variant lost its speedup over the baseline variant.
    assert "SLOWER" not in _verdicts(report, "relative").values()
    assert "time per iteration +10.0% (SLOWER)" in capsys.readouterr().out


def test_same_file_twice_is_same(tmp_path):
    code, report = _compare(tmp_path, micro_rows(MICRO_RAW, 3), micro_rows(MICRO_RAW, 3))
    assert code == 0 and report["gate"]["passed"]
    verdicts = _verdicts(report)
    assert verdicts["layernorm/tiny/handwritten/fwd/B:4/T:16"] == "SAME"
    assert verdicts["matmul/tiny/fp32/mlp_up/B:4/T:64"] == "SAME"
    assert set(verdicts.values()) <= {"SAME", "UNSURE", "N/A"}  # UNSURE: the noisiest cases' CI is wide


def test_single_repetition_judges_nothing_and_exits_3(tmp_path, capsys):
    code, report = _compare(
        tmp_path, micro_rows(MICRO_RAW, first_only=True), micro_rows(MICRO_RAW, first_only=True, scale=lambda n: 1.5)
    )
    assert code == 3 and report["gate"]["verdict"] == "NOTHING JUDGED"
    ok = [r for r in report["absolute"] if r["verdict"] != "N/A"]
    assert ok and all(r["verdict"] == "UNSURE" and "too few samples" in r["note"] for r in ok)
    out = capsys.readouterr().out
    assert "gate: NOTHING JUDGED (exit 3)" in out
    assert "baseline 1 repetitions, candidate 1 repetitions" in out and "--benchmark_repetitions 4" in out


def test_a_variant_that_loses_its_speedup_fails_the_relative_gate(tmp_path):
    slower_native = micro_rows(MICRO_RAW, 3, lambda name: 1.2 if "/native/" in name else 1.0)
    code, report = _compare(tmp_path, micro_rows(MICRO_RAW, 3), slower_native, "--gate", "relative")
    assert code == 1
    rel = {r["name"]: r for r in report["relative"]}
    lost = rel["layernorm/tiny/native/fwd+bwd/B:4/T:16"]
    assert lost["verdict"] == "SLOWER" and lost["speedup"] == "× handwritten"
    assert lost["candidate_speedup"] == pytest.approx(lost["baseline_speedup"] / 1.2)


def test_a_case_that_stops_running_is_failed(tmp_path):
    cand = micro_rows(MICRO_RAW, 3)
    for b in cand["benchmarks"]:
        if b["name"] == "matmul/tiny/bf16/qkv/B:4/T:64":
            b.update(error_occurred=True, error_message="bf16 matmul failed", real_time=0.0, cpu_time=0.0)
    code, report = _compare(tmp_path, micro_rows(MICRO_RAW, 3), cand)
    assert code == 1 and _verdicts(report)["matmul/tiny/bf16/qkv/B:4/T:64"] == "LOST"
    assert (
        "matmul/tiny/bf16/qkv/B:4/T:64: ok in the baseline, skipped in the candidate: bf16 matmul failed"
        in report["gate"]["regressions"]
    )


def test_micro_file_against_a_stepwise_run_exits_2(two_runs):
    run = sorted(p for p in two_runs.iterdir() if p.is_dir())[-1]
    proc = run_report("compare", MICRO_FIXTURE, run)
    assert proc.returncode == 2
    assert "cannot compare a micro-benchmark file (google/benchmark JSON)" in proc.stderr
    assert "with a stepwise run (result files)" in proc.stderr


# --- the gate's rules: lost configurations, nothing judged, the printed verdict -----------------


def _write_runs(tmp_path, base_docs, cand_docs):
    for d in base_docs:
        g.write(tmp_path / "base", d)
    for d in cand_docs:
        g.write(tmp_path / "cand", d)
    return str(tmp_path / "base" / base_docs[0]["run_id"]), str(tmp_path / "cand" / cand_docs[0]["run_id"])


def _gate_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("gate: "))


def test_a_candidate_missing_9_of_11_configurations_fails(tmp_path, capsys):
    base, cand = _write_runs(
        tmp_path, g.cumulative(BASE, "raschka", g.RASCHKA), g.cumulative(CAND, "raschka", g.RASCHKA)[:2]
    )
    assert main(["compare", base, cand]) == 1
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: FAIL (exit 1)"
    assert "lost: raschka/07_flash: ok in the baseline, missing from the candidate" in out
    assert sum(line.startswith("  lost: ") for line in out.splitlines()) == 9
    # --allow-missing lists them as not compared; the two that ran are judged and pass.
    assert main(["compare", base, cand, "--allow-missing"]) == 0
    out = capsys.readouterr().out
    assert "not compared (--allow-missing" in out and "raschka/10_max_batch: ok in the baseline, missing" in out
    assert _gate_line(out) == "gate: PASS (exit 0)"


def test_a_candidate_with_the_flash_step_skipped_fails(tmp_path, capsys):
    base, cand = _write_runs(
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
    base, cand = _write_runs(tmp_path / "runs", g.cumulative(BASE, "raschka", g.RASCHKA[:4]), docs)
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
    base, cand = _write_runs(
        tmp_path,
        g.cumulative(BASE, "raschka", g.RASCHKA, n=8),
        g.cumulative(CAND, "raschka", g.RASCHKA, n=8, base_ms=400),
    )
    assert main(["compare", base, cand]) == 1
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: FAIL (exit 1)" and "UNSURE" not in _gate_line(out)
    assert "regression: raschka/07_flash: step time +100.0% (SLOWER)" in out


def test_too_few_samples_exits_3_with_the_steps_that_would_do(tmp_path, capsys):
    base, cand = _write_runs(
        tmp_path / "a",
        g.cumulative(BASE, "raschka", g.RASCHKA[:4], n=3),
        g.cumulative(CAND, "raschka", g.RASCHKA[:4], n=3, base_ms=240),
    )
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 3
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: NOTHING JUDGED (exit 3)"
    assert "samples per configuration: baseline 3 steps, candidate 3 steps" in out
    assert "the U test cannot reach p < 0.05 with fewer than 4 per side" in out
    hint = re.search(r"--steps (\d+) on both sides would be enough for a verdict at ±5%", out)
    assert hint, out
    report = json.loads(out_json.read_text())
    assert report["gate"]["exit_code"] == 3 and report["gate"]["nothing_judged"]
    # The hint is enough: the same runs with that many steps get a verdict (a 20% slowdown: FAIL).
    n = int(hint.group(1))
    base, cand = _write_runs(
        tmp_path / "b",
        g.cumulative(BASE, "raschka", g.RASCHKA[:4], n=n),
        g.cumulative(CAND, "raschka", g.RASCHKA[:4], n=n, base_ms=240),
    )
    assert main(["compare", base, cand]) == 1


def test_gate_relative_does_not_call_a_uniform_slowdown_a_pass_of_slower_rows(tmp_path, capsys):
    base, cand = _write_runs(
        tmp_path,
        g.cumulative(BASE, "raschka", g.RASCHKA[:6]),
        g.cumulative(CAND, "raschka", g.RASCHKA[:6], base_ms=240),
    )
    assert main(["compare", base, cand, "--gate", "relative"]) == 0
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: PASS (exit 0)"
    assert not re.search(r"PASS \(.*SLOWER", out)
    absolute = next(line for line in out.splitlines() if line.startswith("  absolute step times"))
    assert "(not gated under --gate relative): 6 SLOWER" in absolute
    assert "the candidate's absolute step times are slower (6 of 6, median +20.0%)" in absolute
    relative = next(line for line in out.splitlines() if line.startswith("  within-run speedups"))
    assert "(gated)" in relative and "the relative speedups are unchanged" in relative
    # Gated on both, the same runs fail.
    assert main(["compare", base, cand]) == 1


@pytest.mark.parametrize("case, code", [("pass", 0), ("slower", 1), ("lost", 1), ("few", 3)])
def test_printed_verdict_always_agrees_with_the_exit_status(tmp_path, capsys, case, code):
    kw = {"few": {"n": 3}}.get(case, {})
    cand = g.cumulative(CAND, "raschka", g.RASCHKA[:4], base_ms=300 if case == "slower" else 200, **kw)
    base, cand = _write_runs(
        tmp_path, g.cumulative(BASE, "raschka", g.RASCHKA[:4], **kw), cand[:3] if case == "lost" else cand
    )
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == code
    words = {0: "PASS", 1: "FAIL", 3: "NOTHING JUDGED"}[code]
    assert _gate_line(capsys.readouterr().out) == f"gate: {words} (exit {code})"
    gate = json.loads(out_json.read_text())["gate"]
    assert (gate["verdict"], gate["exit_code"], gate["passed"]) == (words, code, code == 0)


def test_python_rows_are_their_own_configurations_in_the_gate(tmp_path, capsys):
    base_docs = g.cumulative(BASE, "raschka", g.RASCHKA[:4])
    cand_docs = g.cumulative(CAND, "raschka", g.RASCHKA[:4])
    base_docs += [g.python_row(base_docs[3], "python-eager", slower=1.2)]
    cand_docs += [g.python_row(cand_docs[3], "python-eager", slower=1.8)]
    base, cand = _write_runs(tmp_path, base_docs, cand_docs)
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 1
    report = json.loads(out_json.read_text())
    verdicts = {r["name"]: r["verdict"] for r in report["absolute"]}
    assert verdicts["raschka/03_fused_AdamW"] == "SAME" and verdicts["raschka/03_fused_AdamW.python-eager"] == SLOWER
    # Only libtorch rows form the within-run speedups.
    assert not any("python" in r["name"] for r in report["relative"])
    capsys.readouterr()
    base, cand = _write_runs(tmp_path / "2", base_docs, cand_docs[:-1])
    assert main(["compare", base, cand]) == 1
    assert (
        "lost: raschka/03_fused_AdamW.python-eager: ok in the baseline, missing from the candidate"
        in capsys.readouterr().out
    )


def test_compare_writes_nothing_without_json_out(tmp_path):
    # Before: every compare wrote reports/compare.json into the source tree.
    base, cand = _write_pair(tmp_path)
    target = ROOT / "reports" / "compare.json"
    before = target.stat().st_mtime_ns if target.exists() else None
    proc = run_report("compare", base, cand)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = target.stat().st_mtime_ns if target.exists() else None
    assert after == before and "wrote" not in proc.stdout
    assert not list(tmp_path.rglob("compare.json"))


# --- a possible regression the noise hid: never a pass -------------------------------------------

# The disturbed baseline of the bug report: one configuration's first 25 steps at 80 ms, then other work on the
# machine pushed 15 more to 120–300 ms; its own noise (the engine's median rule) is 41%, against --max-noise 2%.
DISTURBED = g.step_times(80, 0.01, 25, 1) + [float(x) for x in np.linspace(120, 300, 15)]
QUIET = g.step_times(80, 0.01, 40, 1)


def _run_with(run_id: str, samples: list[float]) -> list[dict]:
    """raschka's first six steps, 40 quiet steps each, with step 3 measured as `samples`; --max-noise 2%."""
    docs = g.cumulative(run_id, "raschka", g.RASCHKA[:6], n=40, max_noise=0.02)
    d = docs[3]
    docs[3] = g.make_result(
        run_id=run_id, name=d["name"], suite=d["suite"], flags=d["config"]["flags"], samples=samples, max_noise=0.02
    )
    return docs


def _gate_lines(out: str, word: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"  {word}: ")]


def test_a_slowdown_hidden_by_a_disturbed_baseline_is_not_passed(tmp_path, capsys):
    slower = [t * 1.25 for t in DISTURBED]  # the same configuration 25% slower, measured under the same disturbance
    # Quiet baseline: the 25% slowdown is confirmed.
    base, cand = _write_runs(tmp_path / "quiet", _run_with(BASE, QUIET), _run_with(CAND, slower))
    assert main(["compare", base, cand]) == 1
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: FAIL (exit 1)" and "regression: raschka/03_fused_AdamW: step time +25" in out
    # Disturbed baseline: the U test sees it (p ≈ 0.0005) but the interval reaches below 1, so the row is UNSURE
    # with its estimate 25% slower. Before: "gate: PASS (exit 0)". Now: exit 3, and the reason.
    base, cand = _write_runs(tmp_path / "disturbed", _run_with(BASE, DISTURBED), _run_with(CAND, slower))
    out_json = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json-out", str(out_json)]) == 3
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: COULD NOT JUDGE (exit 3)"
    line = next(x for x in _gate_lines(out, "could not judge") if ": step time " in x)
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
    assert _gate_line(out) == "gate: PASS (exit 0)"
    allowed = _gate_lines(out, "unsure (--allow-unsure, not failing)")
    assert any("raschka/03_fused_AdamW: step time +25.0%" in x for x in allowed)
    gate = json.loads(out_json.read_text())["gate"]
    assert gate["passed"] and all(u["allowed"] for u in gate["could_not_judge"])


def test_the_reason_names_whose_noise_made_the_interval_wide(tmp_path, capsys):
    # Only the baseline was disturbed; the candidate ran quietly at 100 ms.
    base, cand = _write_runs(tmp_path, _run_with(BASE, DISTURBED), _run_with(CAND, g.step_times(100, 0.01, 40, 2)))
    assert main(["compare", base, cand, "--gate", "absolute"]) == 3
    line = _gate_lines(capsys.readouterr().out, "could not judge")[0]
    assert (
        "the baseline's own noise made the interval wide: baseline raschka/03_fused_AdamW noise 41% "
        "(above its --max-noise 2%)" in line
    )
    assert "candidate raschka/03_fused_AdamW" not in line
    # The other way round: a quiet baseline at 80 ms, the candidate 20% slower and all over the place (noise 30%).
    wild = g.step_times(100, 0.6, 40, 4)
    base, cand = _write_runs(tmp_path / "2", _run_with(BASE, g.step_times(80, 0.01, 40, 2)), _run_with(CAND, wild))
    assert main(["compare", base, cand, "--gate", "absolute"]) == 3
    line = _gate_lines(capsys.readouterr().out, "could not judge")[0]
    assert "step time +20.5%" in line
    assert "the candidate's own noise made the interval wide: candidate raschka/03_fused_AdamW noise 30%" in line
    assert "baseline raschka/03_fused_AdamW" not in line


def test_unsure_the_better_way_does_not_block_and_a_confirmed_regression_wins(tmp_path, capsys):
    faster = [t * 0.8 for t in DISTURBED]
    base, cand = _write_runs(tmp_path / "a", _run_with(BASE, DISTURBED), _run_with(CAND, faster))
    assert main(["compare", base, cand, "--gate", "absolute"]) == 0  # UNSURE, but only possibly faster
    assert "could not judge" not in capsys.readouterr().out
    # A confirmed SLOWER elsewhere is exit 1 even with the unjudged row beside it.
    cand_docs = _run_with(CAND, [t * 1.25 for t in DISTURBED])
    d = cand_docs[5]
    cand_docs[5] = g.make_result(
        run_id=CAND,
        name=d["name"],
        suite=d["suite"],
        flags=d["config"]["flags"],
        samples=[s["ms"] * 1.3 for s in _run_with(BASE, DISTURBED)[5]["steps"]],
        max_noise=0.02,
    )
    base, cand = _write_runs(tmp_path / "b", _run_with(BASE, DISTURBED), cand_docs)
    assert main(["compare", base, cand, "--gate", "absolute"]) == 1
    out = capsys.readouterr().out
    assert _gate_line(out) == "gate: FAIL (exit 1)" and _gate_lines(out, "could not judge")


def test_the_noise_of_older_results_is_judged_from_their_own_fields():
    from stepwise_report.results import Result

    noisy = g.make_result(run_id=BASE, name="single/00_x", samples=DISTURBED, max_noise=0.02, write_noisy=False)
    assert "noisy" not in noisy["summary"] and Result(None, noisy).noisy  # 41% > 2%
    calm = g.make_result(run_id=BASE, name="single/00_x", samples=QUIET, max_noise=0.02, write_noisy=False)
    assert not Result(None, calm).noisy
    # Where the engine wrote summary.noisy, its word stands.
    calm["summary"]["noisy"] = True
    assert Result(None, calm).noisy


# --- each rule of the gate on its decision boundary ----------------------------------------------
# Each test below fails when its one rule is changed alone (tests/mutants.toml lists those changes and
# scripts/mutants.py checks that they are caught): the threshold, alpha, the interval excluding 1, the interval's
# confidence, the minimum samples.


@pytest.mark.parametrize("change, verdict", [(1.04, SAME), (1.06, SLOWER), (0.96, SAME), (0.94, FASTER)])
def test_the_threshold_decides_between_4_and_6_percent_at_low_noise(change, verdict):
    # 40 steps at 0.2% spread: every one of these changes is significant (p < 1e-10, CI far from 1), so only the
    # 5% threshold tells a 4% change (SAME, with a note) from a 6% one (SLOWER / FASTER).
    v = compare_samples(_noisy(100, 0.002, 40, 1), _noisy(100 * change, 0.002, 40, 2), Settings(), "x")
    assert v.p_value < 1e-10 and (v.ci_low > 1 or v.ci_high < 1)
    assert v.verdict == verdict, v
    if verdict == SAME:
        assert "within the ±5% threshold" in v.note


@pytest.mark.parametrize("kept, verdict", [(0.96, SAME), (0.94, SLOWER)])
def test_the_threshold_decides_a_lost_speedup_between_4_and_6_percent(kept, verdict):
    # A flag's 2× speedup keeps 96% or 94% of itself in the candidate.
    base_ref, base_step = _noisy(100, 0.002, 40, 1), _noisy(50, 0.002, 40, 2)
    cand_ref, cand_step = _noisy(100, 0.002, 40, 3), _noisy(50 / kept, 0.002, 40, 4)
    v = compare_speedups(base_ref, base_step, cand_ref, cand_step, 1.0, 1.0, Settings(), "x")
    assert v.ci_high < 1 and v.verdict == verdict, v


def test_the_threshold_option_reaches_the_gate(tmp_path):
    base = g.cumulative(BASE, "raschka", g.RASCHKA[:3], n=40, cv=0.002)
    for factor, code in ((1.04, 0), (1.06, 1)):
        cand = g.cumulative(CAND, "raschka", g.RASCHKA[:3], n=40, cv=0.002, base_ms=200 * factor)
        b, c = _write_runs(tmp_path / str(factor), base, cand)
        assert main(["compare", b, c, "--threshold", "5", "--gate", "absolute"]) == code


# 5 steps a side. Exact two-sided U-test p-values for 5 vs 5 are 2·k/C(10,5) for the k arrangements at least as
# extreme: 3 pairs out of order gives p = 14/252 = 0.056, 2 pairs gives 8/252 = 0.032. The order of the steps is
# kept as measured: the seeded bootstrap resamples by position, and this order's interval excludes 1.
P06_BASE, P06_CAND = [102.5, 96.5, 106.6, 105.0, 100.3], [104.9, 108.6, 106.5, 108.5, 108.0]
P03_BASE, P03_CAND = [100.0, 101.0, 102.0, 103.0, 104.0], [102.5, 110.0, 111.0, 112.0, 113.0]


def test_p_of_0_06_is_not_significant_at_alpha_0_05():
    v = compare_samples(P06_BASE, P06_CAND, Settings(), "x")
    # The bootstrap interval alone would call it a 5.4% slowdown; the U test does not, so it is not significant.
    assert v.p_value == pytest.approx(14 / 252) and v.ci_low > 1 and v.ratio > 1.05
    assert v.verdict == UNSURE and "the U test does not (p=0.0556)" in v.note
    # The same with a made-up interval: only p decides.
    assert classify(1.08, 1.02, 1.12, Settings(), True, p_value=14 / 252)[0] == UNSURE
    assert classify(1.08, 1.02, 1.12, Settings(alpha=0.1), True, p_value=14 / 252)[0] == SLOWER


def test_p_of_0_03_is_significant_at_alpha_0_05():
    v = compare_samples(P03_BASE, P03_CAND, Settings(), "x")
    assert v.p_value == pytest.approx(8 / 252) and v.ci_low > 1
    assert v.verdict == SLOWER, v
    assert classify(1.08, 1.02, 1.12, Settings(), True, p_value=8 / 252)[0] == SLOWER
    assert classify(1.08, 1.02, 1.12, Settings(alpha=0.01), True, p_value=8 / 252)[0] == UNSURE


def test_a_significant_u_test_is_not_enough_when_the_interval_contains_1():
    # The disturbed baseline: p ≈ 0.0005, but the interval of the ratio of medians reaches below 1.
    v = compare_samples(DISTURBED, [t * 1.25 for t in DISTURBED], Settings(), "x")
    assert v.p_value < 0.001 and v.ci_low < 1 < v.ci_high
    assert v.verdict == UNSURE
    # A speedup comparison has no U test: the interval is all there is.
    assert classify(0.8, 0.6, 1.1, Settings(), False)[0] == UNSURE
    assert classify(0.8, 0.7, 0.9, Settings(), False)[0] == SLOWER


def test_the_gates_interval_covers_no_change_95_percent_of_the_time():
    # A 95% interval contains the true ratio (1) about 95% of the time; a 50% one about half the time.
    def gate(a, b, seed):
        v = compare_samples(a, b, Settings(), f"coverage {seed}")
        return v.ci_low, v.ci_high

    assert 0.90 <= null_coverage(gate) <= 0.99
    narrow = Settings(confidence=0.5)
    a, b = _noisy(100, 0.05, 30, 1), _noisy(100, 0.05, 30, 2)
    wide, half = compare_samples(a, b, Settings(), "x"), compare_samples(a, b, narrow, "x")
    # Normal-ish data: the 95% interval is about 1.96 / 0.67 ≈ 2.9 times as wide as the 50% one.
    assert 2 < (wide.ci_high - wide.ci_low) / (half.ci_high - half.ci_low) < 4.5


def test_too_few_samples_leave_a_speedup_unjudged_however_clear():
    # Three steps per set: a flag lost 30% of its gain, and the bootstrap alone would call that decisive, but the
    # U test's floor (4 per side at alpha 0.05) holds for speedups too.
    three = [g.step_times(m, 0.01, 3, s) for m, s in ((100, 1), (50, 2), (100, 3), (70, 4))]
    v = compare_speedups(*three, 1.0, 1.0, Settings(), "x")
    assert v.verdict == UNSURE and v.ci_low is None and "too few samples (smallest set 3)" in v.note
    assert v.needed == 4
    four = [g.step_times(m, 0.01, 4, s) for m, s in ((100, 1), (50, 2), (100, 3), (70, 4))]
    assert compare_speedups(*four, 1.0, 1.0, Settings(), "x").verdict == SLOWER


def test_a_lost_speedup_hidden_by_noise_is_not_passed_either(tmp_path, capsys):
    # Gated on the within-run speedups only: step 3's × previous and × baseline lost 20% under the noise.
    base, cand = _write_runs(tmp_path, _run_with(BASE, DISTURBED), _run_with(CAND, [t * 1.25 for t in DISTURBED]))
    assert main(["compare", base, cand, "--gate", "relative"]) == 3
    lines = _gate_lines(capsys.readouterr().out, "could not judge")
    assert [line.split(": ", 1)[1].split(" (95% CI")[0] for line in lines] == [
        "raschka/03_fused_AdamW: × previous speedup -20.0%",
        "raschka/03_fused_AdamW: × baseline speedup -20.0%",
    ]
