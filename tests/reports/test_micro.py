"""micro.py: stepwise_micro's real output as cases, repetitions, skips, aggregates and baseline pairs."""

import copy

import pytest
from conftest import MICRO_FIXTURE, MICRO_RAW, micro_aggregate, micro_case, micro_file
from stepwise_report.read.micro import parse_micro


def test_cases_repetitions_and_skips_of_the_real_file():
    m = micro_file()
    assert m.device == "cpu: AMD EPYC" and m.baselines["copy"] == "pageable_blocking"
    assert len(m.cases) == 51 and sum(not c.ok for c in m.cases) == 20
    tf32 = micro_case(m, "matmul/tiny/tf32/qkv/B:4/T:64")
    assert not tf32.ok and tf32.error == "tf32 needs a CUDA device (tensor cores)" and tf32.samples == []
    copies = [c for c in m.cases if c.family == "copy"]
    assert len(copies) == 16 and {c.error for c in copies} == {"host-to-device copies need a CUDA device"}
    for c in m.cases:
        if c.ok:
            # Our median of the repetitions is google/benchmark's own _median row.
            assert len(c.samples) == 3 and c.time_unit == "us"
            assert c.median == pytest.approx(micro_aggregate(c.name, "median"), rel=1e-12)


def test_aggregates_only_file_uses_the_median_row(tmp_path):
    doc = copy.deepcopy(MICRO_RAW)
    doc["benchmarks"] = [b for b in MICRO_RAW["benchmarks"] if b["run_type"] == "aggregate"]
    c = micro_case(parse_micro(MICRO_FIXTURE, doc), "adamw/tiny/fused/step")
    assert c.samples == [] and c.median == micro_aggregate("adamw/tiny/fused/step", "median")
    assert c.counter("params_per_s") > 0


def test_speedups_pair_same_preset_details_and_sizes():
    m = micro_file()
    native = micro_case(m, "layernorm/tiny/native/fwd/B:4/T:16")
    assert m.baseline_of(native).name == "layernorm/tiny/handwritten/fwd/B:4/T:16"
    assert m.speedup(native) == pytest.approx(
        micro_aggregate("layernorm/tiny/handwritten/fwd/B:4/T:16", "median")
        / micro_aggregate("layernorm/tiny/native/fwd/B:4/T:16", "median")
    )
    bf16 = micro_case(m, "matmul/tiny/bf16/attn_proj/B:4/T:64")
    assert m.baseline_of(bf16).name == "matmul/tiny/fp32/attn_proj/B:4/T:64"
    assert m.baseline_of(micro_case(m, "matmul/tiny/fp32/qkv/B:4/T:64")) is None  # the baseline itself
    assert m.speedup(micro_case(m, "matmul/tiny/tf32/qkv/B:4/T:64")) is None  # skipped
    assert m.speedup(micro_case(m, "mask/tiny/dynamic/T:64")) < 1  # slower than the stored mask here
    assert m.speedup(micro_case(m, "adamw/tiny/fused/step")) > 5
