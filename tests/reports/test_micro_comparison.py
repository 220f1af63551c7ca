"""micro_comparison.py: two micro-benchmark files, case by case, on times per iteration and speedups over each
family's baseline variant."""

import json

import pytest
from conftest import MICRO_RAW, micro_rows, write_json
from stepwise_report.cli import main


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
