"""Finding result files and refusing what is not a schema-v1 stepwise result."""

import json

import pytest
import resultgen as g
from stepwise_report.results import InputError, group_runs, load_inputs


def _one(tmp_path, **kw):
    doc = g.make_result(run_id="20260301T120000Z_t_h100", name="single/00_baseline", **kw)
    return g.write(tmp_path, doc), doc


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
    doc["schema_version"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"schema_version 2 is not supported.*schema_version 1"):
        load_inputs([str(tmp_path)])


def test_schema_violation_names_the_file_and_key(tmp_path):
    path, doc = _one(tmp_path)
    del doc["config"]["seq_len"]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"00_baseline.json.*config.*seq_len"):
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
