"""stats.py: the regression gate's statistics, its verdicts and its exit status, for runs and micro-benchmark files."""

import json

import numpy as np
import pytest
import resultgen as g
from conftest import MICRO_FIXTURE, MICRO_RAW, micro_rows, run_report, write_json
from stepwise_report.cli import main
from stepwise_report.stats import FASTER, SAME, SLOWER, UNSURE, Settings, classify, compare_samples, compare_speedups


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


def test_too_few_samples_is_unsure():
    v = compare_samples(_noisy(100, 0.01, 5, 1), _noisy(150, 0.01, 5, 2), Settings(), "x")
    assert v.verdict == UNSURE and "too few samples" in v.note


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
        cand[slow_step] = g.make_result(run_id=CAND, name=d["name"], suite=d["suite"], flags=d["config"]["flags"],
                                        samples=[s["ms"] * factor for s in base[slow_step]["steps"]],
                                        **(cand_kw or {}))
    for d in base:
        g.write(tmp_path / "base", d)
    for d in cand:
        g.write(tmp_path / "cand", d)
    return str(tmp_path / "base" / BASE), str(tmp_path / "cand" / CAND)


def test_regression_exits_1_and_writes_json(tmp_path, capsys):
    base, cand = _write_pair(tmp_path, slow_step=3)
    out = tmp_path / "compare.json"
    assert main(["compare", base, cand, "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "raschka/03_fused_AdamW" in text and "SLOWER" in text and "gate: FAIL" in text
    report = json.loads(out.read_text())
    rows = {r["name"]: r for r in report["absolute"]}
    assert rows["raschka/03_fused_AdamW"]["verdict"] == SLOWER
    assert rows["raschka/00_baseline"]["verdict"] == SAME
    assert report["gate"]["exit_code"] == 1 and report["settings"]["threshold"] == 0.05
    rel = [r for r in report["relative"] if r["name"] == "raschka/03_fused_AdamW"]
    assert {r["speedup"] for r in rel} == {"× previous", "× baseline"} and all(r["verdict"] == SLOWER for r in rel)


def test_regression_below_threshold_passes(tmp_path):
    base, cand = _write_pair(tmp_path, slow_step=3)
    assert main(["compare", base, cand, "--threshold", "15%", "--json", str(tmp_path / "c.json")]) == 0


def test_same_run_twice_passes(tmp_path):
    base, _ = _write_pair(tmp_path)
    assert main(["compare", base, base, "--json", str(tmp_path / "c.json")]) == 0


def test_other_device_compares_only_within_run_speedups(tmp_path, capsys):
    base, cand = _write_pair(tmp_path, cand_kw={"device_name": "NVIDIA A100-SXM4-40GB"})
    out = tmp_path / "c.json"
    assert main(["compare", base, cand, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert not report["same_device"] and all(r["verdict"] == "N/A" for r in report["absolute"])
    assert all(r["verdict"] in (SAME, UNSURE) for r in report["relative"]) and report["relative"]
    assert main(["compare", base, cand, "--gate", "absolute", "--json", str(out)]) == 2
    assert "use --gate relative" in capsys.readouterr().err


def test_loss_math_changed_and_failures_fail_the_gate(tmp_path, capsys):
    base, cand = _write_pair(tmp_path, loss={2: "math changed"}, fail={4: "illegal memory access"})
    assert main(["compare", base, cand, "--json", str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "raschka/02_tf32: loss check newly 'math changed'" in out
    assert "raschka/04_pinned_memory: candidate failed: illegal memory access" in out


@pytest.mark.parametrize("args, message", [
    (["compare", "/nonexistent", "/nonexistent"], "no such file"),
    (["compare", "{base}"], "required: CANDIDATE"),
    (["compare", "{base}", "{base}", "--threshold", "abc"], "invalid percent"),
    (["compare", "{base}", "{base}", "--gate", "sometimes"], "invalid choice"),
    (["compare", "{both}", "{base}"], "holds 2 runs"),
])
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
    proc = run_report("compare", base, cand, "--json", tmp_path / "c.json")
    assert proc.returncode == 1, proc.stderr
    assert "regression: raschka/02_tf32: step time" in proc.stdout
    assert np.isfinite(json.loads((tmp_path / "c.json").read_text())["absolute"][2]["ratio"])


# --- two micro-benchmark files ----------------------------------------------------------------


def _compare(tmp_path, base: dict, cand: dict, *options: str) -> tuple[int, dict]:
    b, c = write_json(tmp_path / "base.json", base), write_json(tmp_path / "cand.json", cand)
    out = tmp_path / "compare.json"
    code = main(["compare", str(b), str(c), "--json", str(out), *options])
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


def test_single_repetition_is_unsure(tmp_path):
    code, report = _compare(tmp_path, micro_rows(MICRO_RAW, first_only=True), micro_rows(MICRO_RAW, first_only=True, scale=lambda n: 1.5))
    assert code == 0
    ok = [r for r in report["absolute"] if r["verdict"] != "N/A"]
    assert ok and all(r["verdict"] == "UNSURE" and "too few samples" in r["note"] for r in ok)


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
    assert code == 1 and _verdicts(report)["matmul/tiny/bf16/qkv/B:4/T:64"] == "FAILED"


def test_micro_file_against_a_stepwise_run_exits_2(two_runs):
    run = sorted(p for p in two_runs.iterdir() if p.is_dir())[-1]
    proc = run_report("compare", MICRO_FIXTURE, run)
    assert proc.returncode == 2
    assert "cannot compare a micro-benchmark file (google/benchmark JSON)" in proc.stderr
    assert "with a stepwise run (result files)" in proc.stderr
