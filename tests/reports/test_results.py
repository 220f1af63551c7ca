"""results.py: finding and checking input files, runs and suites, the ratio chain, micro-benchmark files."""

import copy
import importlib.util
import json
import shutil

import pytest
import resultgen as g
from conftest import MICRO_FIXTURE, MICRO_RAW, micro_aggregate, micro_case, micro_file, write_json
from stepwise_report.results import (NOT_VALIDATED, InputError, Result, build_chain, group_runs, load_inputs,
                                     parse_micro)


def _one(tmp_path, **kw):
    doc = g.make_result(run_id="20260301T120000Z_t_h100", name="single/00_baseline", **kw)
    return g.write(tmp_path, doc), doc


# --- result files -----------------------------------------------------------------------------


def test_directory_is_searched_recursively_and_other_json_is_skipped(tmp_path):
    g.standard_run(tmp_path)
    (tmp_path / "exports.json").write_text(json.dumps({"context": {}, "benchmarks": []}))
    (tmp_path / "broken.json").write_text("{not json")
    results = load_inputs([str(tmp_path)]).results
    assert len(results) == 28
    assert {r.suite_name for r in results} == {"raschka", "karpathy", "one_at_a_time", "leave_one_out"}


def test_a_file_given_twice_counts_once(tmp_path):
    path, _ = _one(tmp_path)
    assert len(load_inputs([str(path), str(path), str(tmp_path)]).results) == 1


def test_other_schema_version_names_found_and_supported(tmp_path):
    path, doc = _one(tmp_path)
    doc["schema_version"] = 3
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"schema_version 3 is not supported.*schema_version 1 or 2"):
        load_inputs([str(tmp_path)])


@pytest.mark.skipif(importlib.util.find_spec("jsonschema") is None, reason="jsonschema is not installed")
def test_schema_violation_names_the_file_and_key(tmp_path):
    path, doc = _one(tmp_path)
    del doc["config"]["seq_len"]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"00_baseline.json.*config.*seq_len"):
        load_inputs([str(path)])


def test_without_jsonschema_results_load_unvalidated_and_say_so_once(tmp_path, no_jsonschema, capsys):
    path, doc = _one(tmp_path)
    del doc["config"]["seq_len"]  # only the schema catches this
    path.write_text(json.dumps(doc))
    first, second = load_inputs([str(tmp_path)]), load_inputs([str(path)])  # as ./report compare loads two sides
    assert len(first.results) == len(second.results) == 1
    assert first.notes == second.notes == [NOT_VALIDATED]
    assert NOT_VALIDATED == "results not validated against results/schema.json: jsonschema is not installed"
    assert capsys.readouterr().err.count(NOT_VALIDATED) == 1
    # Micro-benchmark files are not results: nothing went unvalidated.
    assert load_inputs([str(write_json(tmp_path / "m" / "micro.json", MICRO_RAW))]).notes == []
    # The checks that need no schema still apply.
    doc["schema_version"] = 3
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"schema_version 3 is not supported"):
        load_inputs([str(path)])


def test_explicit_non_stepwise_file_is_an_error(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"benchmarks": []}')
    with pytest.raises(InputError, match="not a stepwise result"):
        load_inputs([str(other)])


@pytest.mark.parametrize("make", [lambda p: p, lambda p: p / "missing"])
def test_empty_or_missing_results(tmp_path, make):
    with pytest.raises(InputError, match="no stepwise results|no such file"):
        load_inputs([str(make(tmp_path))])


def test_tokens_per_step_is_the_engines_else_derived_from_tok_s_and_the_median():
    doc = g.make_result(run_id="20260301T120000Z_t_h100", name="single/00_ddp", median_ms=110,
                        distributed={"world_size": 4, "backend": "nccl", "rank_step_ms_median": [110] * 4})
    # As the engine writes a 4-rank run: both count every rank's tokens; tok/s rounded, as a reader might.
    doc["summary"]["tokens_per_step"] *= 4
    doc["summary"]["tokens_per_s"] = round(doc["summary"]["tokens_per_s"] * 4)
    assert Result(None, doc).tokens_per_step == 4 * 8 * 64  # exactly, not tok/s × median
    del doc["summary"]["tokens_per_step"]
    s = doc["summary"]
    assert Result(None, doc).tokens_per_step == pytest.approx(s["tokens_per_s"] * s["step_ms"]["median"] / 1000)


# --- runs and suites --------------------------------------------------------------------------


def test_runs_are_newest_first_and_mixed_devices_are_split(tmp_path):
    g.standard_run(tmp_path, "20260301T120000Z_a_h100")
    docs = g.cumulative("20260305T120000Z_b_mixed", "karpathy", g.KARPATHY)
    docs[3] = g.make_result(run_id=docs[3]["run_id"], name=docs[3]["name"], suite=docs[3]["suite"],
                            flags=docs[3]["config"]["flags"], device_name="NVIDIA A100-SXM4-40GB")
    for d in docs:
        g.write(tmp_path, d)
    runs = group_runs(load_inputs([str(tmp_path)]).results)
    assert [r.run_id for r in runs] == ["20260305T120000Z_b_mixed", "20260301T120000Z_a_h100"]
    mixed = runs[0]
    assert len(mixed.suites) == 2 and {s.device for s in mixed.suites} == {
        "NVIDIA H100 80GB HBM3 (cuda)", "NVIDIA A100-SXM4-40GB (cuda)"}
    assert "2 devices" in mixed.messages[0] and "no ratio across devices" in mixed.messages[0]


# --- the ratio chain --------------------------------------------------------------------------


def _results(docs):
    return [Result(None, d) for d in docs]


def test_chain_skips_unmeasured_steps_and_compares_with_the_last_ok_one():
    docs = g.cumulative("20260301T120000Z_t_h100", "raschka", g.RASCHKA,
                        skip={4: "not on this device"}, fail={8: "capture failed"})
    steps = build_chain(_results(docs))
    tps = {s.index: s.result.tokens_per_s for s in steps if s.ok}
    assert steps[0].x_previous is None and steps[0].x_baseline == pytest.approx(1.0)
    assert steps[3].x_previous == pytest.approx(tps[3] / tps[2])
    assert steps[4].x_previous is None and steps[4].x_baseline is None
    # Step 5 is compared with step 3, across the skipped step 4.
    assert steps[5].previous.index == 3 and steps[5].spans == ["pinned memory"]
    assert steps[5].x_previous == pytest.approx(tps[5] / tps[3])
    assert steps[9].previous.index == 7 and steps[9].spans == ["compile (CUDA graph)"]
    assert steps[10].x_baseline == pytest.approx(tps[10] / tps[0])
    # The chain multiplies out to × baseline.
    product = 1.0
    for s in steps:
        product *= s.x_previous or 1.0
    assert product == pytest.approx(steps[10].x_baseline)


def test_failed_baseline_leaves_no_x_baseline_but_keeps_x_previous():
    docs = g.cumulative("20260301T120000Z_t_h100", "karpathy", g.KARPATHY, fail={0: "out of memory"})
    steps = build_chain(_results(docs))
    assert all(s.x_baseline is None for s in steps)
    assert steps[1].x_previous is None and steps[2].x_previous is not None


def test_non_cumulative_suites_have_no_x_previous():
    steps = build_chain(_results(g.one_at_a_time("20260301T120000Z_t_h100", {"tf32": 2.0, "bf16": 3.0})))
    assert all(s.x_previous is None for s in steps)
    assert steps[2].x_baseline == pytest.approx(3.0, rel=0.05)


# --- micro-benchmark files --------------------------------------------------------------------


def test_directory_finds_micro_files_and_skips_our_exports_and_foreign_gbench(tmp_path, report_out):
    shutil.copy(MICRO_FIXTURE, tmp_path / "micro.json")
    shutil.copytree(report_out / "exports", tmp_path / "exports")  # ./report's own google/benchmark JSON
    write_json(tmp_path / "other" / "bm.json", {"context": {"date": "x"}, "benchmarks": []})
    found = load_inputs([str(tmp_path)])
    assert found.results == [] and [m.path.name for m in found.micro] == ["micro.json"]


def test_explicit_plain_gbench_is_read_and_our_export_is_refused(tmp_path, report_out):
    plain = copy.deepcopy(MICRO_RAW)
    del plain["context"]["stepwise_baselines"]
    found = load_inputs([str(write_json(tmp_path / "plain.json", plain))])
    m = found.micro[0]
    assert m.baselines == {} and all(m.speedup(c) is None for c in m.cases)
    with pytest.raises(InputError, match="an export written by ./report"):
        load_inputs([str(report_out / "exports" / "gbench.json")])


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
        / micro_aggregate("layernorm/tiny/native/fwd/B:4/T:16", "median"))
    bf16 = micro_case(m, "matmul/tiny/bf16/attn_proj/B:4/T:64")
    assert m.baseline_of(bf16).name == "matmul/tiny/fp32/attn_proj/B:4/T:64"
    assert m.baseline_of(micro_case(m, "matmul/tiny/fp32/qkv/B:4/T:64")) is None  # the baseline itself
    assert m.speedup(micro_case(m, "matmul/tiny/tf32/qkv/B:4/T:64")) is None  # skipped
    assert m.speedup(micro_case(m, "mask/tiny/dynamic/T:64")) < 1  # slower than the stored mask here
    assert m.speedup(micro_case(m, "adamw/tiny/fused/step")) > 5
