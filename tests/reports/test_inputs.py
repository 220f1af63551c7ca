"""inputs.py: finding the files under RESULTS, deciding what each is, checking results against the schema; the one
reader of result documents the scripts and tests use (read_results), and the plan ./ablate --dry-run --json prints
(read_plan; tests/scripts/test_plan_run.py holds it to the real binary's plans)."""

import copy
import importlib.util
import json
import shutil
import subprocess
import sys

import pytest
import resultgen as g
from conftest import MICRO_FIXTURE, MICRO_RAW, write_json
from stepwise_report.read import inputs
from stepwise_report.read.inputs import NOT_VALIDATED, load_inputs, read_plan, read_results
from stepwise_report.read.results import InputError


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


# --- read_results: the reader of the scripts and tests ---------------------------------------------


def test_read_results_finds_the_results_and_passes_over_everything_else(tmp_path):
    g.standard_run(tmp_path)
    (tmp_path / "budget.json").write_text(json.dumps({"grid": [40, 60], "rows": None}))  # a search's, not a result
    write_json(tmp_path / "micro.json", MICRO_RAW)
    (tmp_path / "half.json").write_text('{"tool": "stepwise", "sche')  # never one of ablate's: it writes whole files
    results = read_results([tmp_path, tmp_path / "nowhere"])
    assert len(results) == 28 and all(r.path.suffix == ".json" for r in results)
    assert [r.path for r in results] == sorted(r.path for r in results), "in path order"
    path, _ = _one(tmp_path / "one")
    assert [r.path for r in read_results([path, tmp_path / "one"])] == [path], "each file once"
    assert read_results([tmp_path / "nowhere"]) == []


def test_read_results_checks_each_result_as_the_report_does(tmp_path):
    path, doc = _one(tmp_path)
    doc["schema_version"] = 3
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"schema_version 3 is not supported"):
        read_results([tmp_path])
    with pytest.raises(InputError, match=r"schema_version 3 is not supported"):
        read_results([tmp_path], validate=False)  # a version it does not know is never read


@pytest.mark.skipif(importlib.util.find_spec("jsonschema") is None, reason="jsonschema is not installed")
def test_read_results_validates_against_the_schema_unless_told_the_documents_are_partial(tmp_path):
    path, doc = _one(tmp_path)
    del doc["config"]["seq_len"]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"00_baseline.json.*config.*seq_len"):
        read_results([tmp_path])
    partial = {"tool": "stepwise", "schema_version": 2, "name": "flags/01", "status": "ok"}
    write_json(tmp_path / "partial.json", partial)
    assert [r.data for r in read_results([tmp_path / "partial.json"], validate=False)] == [partial]


def test_read_results_without_jsonschema_reads_unvalidated_and_says_so(tmp_path, no_jsonschema, capsys):
    path, doc = _one(tmp_path)
    del doc["config"]["seq_len"]
    path.write_text(json.dumps(doc))
    assert len(read_results([tmp_path])) == 1
    assert capsys.readouterr().err.count(NOT_VALIDATED) == 1


def test_inputs_imports_only_the_standard_library():
    """verify's judges read results with it under a GPU node's python, which may have nothing else: importing
    inputs pulls in no third-party module (budget.json's reader, budget_file, included; budget_search draws it)."""
    code = (
        "import sys; before = set(sys.modules); import stepwise_report.read.inputs; "
        "print(sorted(m.split('.')[0] for m in set(sys.modules) - before))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=inputs.RESULTS_DIR.parent / "reports"
    )
    loaded = set(eval(run.stdout)) - {"stepwise_report"}
    assert run.returncode == 0 and loaded <= set(sys.stdlib_module_names), sorted(loaded - sys.stdlib_module_names)


# --- read_plan ---------------------------------------------------------------------------------------


def a_plan() -> dict:
    """A plan as ./ablate --dry-run --json prints one (the real binary's: tests/scripts/test_plan_run.py)."""
    env = g.make_result(run_id="20260301T120000Z_t_h100", name="single/00_baseline")["env"]
    row = {"index": 0, "label": "baseline", "flags": [], "flags_skipped": [], "skip_reason": None, "precision": "fp32"}
    row |= {"batch_size": 4, "seq_len": 64, "max_batch": False, "max_batch_limit": None, "host_allocator": False}
    row |= {"step_budget": None, "implementations": ["libtorch"]}
    timing = {"warmup": 2, "min_steps": 10, "max_steps": 100, "max_time_s": 5.0, "max_batch_time_s": 5.0}
    return {"suite": "raschka", "kind": "cumulative", "configurations": [row], "preset": "tiny", "device": "cpu"} | {
        "timing": timing,
        "env": env,
    }


@pytest.mark.skipif(importlib.util.find_spec("jsonschema") is None, reason="jsonschema is not installed")
@pytest.mark.parametrize(
    "break_it, where",
    [
        (lambda p: p["configurations"][0].pop("precision"), r"configurations/0: 'precision' is a required"),
        (lambda p: p["configurations"][0].update(precision="fp4"), r"configurations/0/precision: 'fp4' is not one"),
        (lambda p: p["configurations"][0].update(implementations=["jax"]), r"configurations/0/implementations/0"),
        (lambda p: p["env"].pop("device_name"), r"env: 'device_name' is a required"),
        (lambda p: p["timing"].update(max_steps=0), r"timing/max_steps: 0 is less than the minimum"),
        (lambda p: p.update(budget_search={"grid": [40], "rows": [{"index": 0}]}), r"budget_search/rows/0"),
    ],
)
def test_a_plan_that_does_not_match_its_schema_is_refused_naming_the_key(break_it, where):
    plan = a_plan()
    assert read_plan(json.dumps(plan), "ablate --dry-run") == plan
    break_it(plan)
    with pytest.raises(
        InputError, match=r"^ablate --dry-run: its plan does not match results/plan.schema.json at " + where
    ):
        read_plan(json.dumps(plan), "ablate --dry-run")


def test_a_plan_that_is_not_json_is_refused_and_one_read_without_jsonschema_is_said(monkeypatch, capsys):
    with pytest.raises(InputError, match="ablate --dry-run: printed no JSON plan"):
        read_plan("[build] rebuilding stepwise", "ablate --dry-run")
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    inputs._plan_validator.cache_clear()
    try:
        plan = a_plan()
        del plan["configurations"][0]["precision"]  # only the schema catches this
        assert read_plan(json.dumps(plan), "x") == plan
        assert "plans not validated against results/plan.schema.json" in capsys.readouterr().err
    finally:
        inputs._plan_validator.cache_clear()
