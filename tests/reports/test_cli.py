"""cli.py: `./report RESULTS` and `./report compare` end to end, their outputs on disk, and their usage errors."""

import json

import numpy as np
import pytest
import resultgen as g
from conftest import MICRO_FIXTURE, NEW_RUN, OLD_RUN, ROOT, run_report, write_pair
from stepwise_report.cli import main
from stepwise_report.render.exports import FILES


def test_end_to_end_outputs(report_out):
    assert sorted(p.name for p in report_out.iterdir()) == ["dashboard.html", "exports", "plots", "report.md"]
    for run in (OLD_RUN, NEW_RUN):
        for suite in ("raschka", "karpathy", "one_at_a_time", "leave_one_out"):
            for kind in ("throughput", "memory", "step_times"):
                for suffix in (".png", ".svg"):
                    path = report_out / "plots" / run / f"{suite}_{kind}{suffix}"
                    assert path.stat().st_size > 1000, path
        assert (report_out / "plots" / run / "flag_effects.svg").is_file()
    assert len(list((report_out / "plots" / "trends").glob("*.png"))) == 4
    assert (report_out / "plots" / NEW_RUN / "raschka_throughput.svg").read_text().startswith("<?xml")
    assert sorted(p.name for p in (report_out / "exports").glob("*.json")) == sorted(FILES)
    gbench = json.loads((report_out / "exports" / "gbench.json").read_text())
    assert gbench["context"]["stepwise_run_id"] == NEW_RUN  # exports are the newest run


def test_rerun_replaces_stale_plots(tmp_path):
    for run in ("20260301T120000Z_a_h100", "20260302T120000Z_b_h100"):
        for doc in g.cumulative(run, "karpathy", g.KARPATHY[:3]):
            g.write(tmp_path / run, doc)
    out = tmp_path / "out"
    assert main([str(tmp_path / "20260301T120000Z_a_h100"), "--out", str(out)]) == 0
    assert main([str(tmp_path / "20260302T120000Z_b_h100"), "--out", str(out)]) == 0
    assert [p.name for p in (out / "plots").iterdir() if p.is_dir()] == ["20260302T120000Z_b_h100"]


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "required: RESULTS"),
        (["{dir}", "--dead-band", "lots"], "invalid percent"),
        (["{dir}", "--bogus"], "unrecognized arguments"),
        (["{dir}/missing"], "no such file or directory"),
        (["{dir}"], "no stepwise results found"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, argv, message):
    argv = [a.format(dir=tmp_path) for a in argv]
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_wrong_schema_version_through_the_wrapper(tmp_path):
    doc = g.make_result(run_id="20260301T120000Z_t_h100", name="single/00_x")
    doc["schema_version"] = 3
    (tmp_path / "x.json").write_text(json.dumps(doc))
    proc = run_report(tmp_path, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "schema_version 3 is not supported" in proc.stderr and "schema_version 1" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_help_exits_0():
    proc = run_report("--help")
    assert proc.returncode == 0 and "compare BASELINE CANDIDATE" in proc.stdout


# --- report compare --------------------------------------------------------------------------------------------------


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
    base, cand = write_pair(tmp_path)
    both = str(tmp_path)
    argv = [a.format(base=base, both=both) for a in args]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_wrapper_exit_status(tmp_path):
    base, cand = write_pair(tmp_path, slow_step=2)
    proc = run_report("compare", base, cand, "--json-out", tmp_path / "c.json")
    assert proc.returncode == 1, proc.stderr
    assert "regression: raschka/02_tf32: step time" in proc.stdout
    assert np.isfinite(json.loads((tmp_path / "c.json").read_text())["absolute"][2]["ratio"])


def test_micro_file_against_a_stepwise_run_exits_2(two_runs):
    run = sorted(p for p in two_runs.iterdir() if p.is_dir())[-1]
    proc = run_report("compare", MICRO_FIXTURE, run)
    assert proc.returncode == 2
    assert "cannot compare a micro-benchmark file (google/benchmark JSON)" in proc.stderr
    assert "with a stepwise run (result files)" in proc.stderr


def test_compare_writes_nothing_without_json_out(tmp_path):
    # Before: every compare wrote a compare.json into the source tree's reports/ folder.
    base, cand = write_pair(tmp_path)
    target = ROOT / "reports" / "compare.json"
    before = target.stat().st_mtime_ns if target.exists() else None
    proc = run_report("compare", base, cand)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = target.stat().st_mtime_ns if target.exists() else None
    assert after == before and "wrote" not in proc.stdout
    assert not list(tmp_path.rglob("compare.json"))
