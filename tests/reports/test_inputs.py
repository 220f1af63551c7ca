"""inputs.py: finding the files under RESULTS, deciding what each is, checking results against the schema."""

import copy
import importlib.util
import json
import shutil

import pytest
import resultgen as g
from conftest import MICRO_FIXTURE, MICRO_RAW, write_json
from stepwise_report.inputs import NOT_VALIDATED, load_inputs
from stepwise_report.results import InputError


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
