"""`./report RESULTS` end to end, and its usage errors."""

import json

import pytest
import resultgen as g
from conftest import NEW_RUN, OLD_RUN, run_report
from stepwise_report.cli import main
from stepwise_report.exports import FILES


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


def test_report_md_sections(report_out):
    md = (report_out / "report.md").read_text()
    # Newest run first, each with its header.
    assert md.index(f"## run {NEW_RUN}") < md.index(f"## run {OLD_RUN}")
    for field in ("| device | NVIDIA H100 80GB HBM3 (cuda) |", "| torch | 2.11.0 |", "| git commit | fedcba98",
                  "| preset | gpt2-tiny", "| batch × sequence | 8 × 64"):
        assert field in md
    assert "skipped: pinned_memory: no data loader on this device" in md
    assert "failed: CUDA graph capture failed" in md
    assert "#### ours vs published (raschka)" in md and "#### ours vs published (karpathy)" in md
    assert "### flag interactions: one at a time × leave one out" in md
    assert "## trends across runs" in md and "## flags" in md
    assert f"![raschka: tokens/s per step](plots/{NEW_RUN}/raschka_throughput.png)" in md
    assert "12,525" in md and "rasbt/LLMs-from-scratch" in md


def test_mixed_devices_get_separate_tables(tmp_path, capsys):
    docs = g.cumulative("20260301T120000Z_t_mixed", "raschka", g.RASCHKA[:4])
    d = docs[2]
    docs[2] = g.make_result(run_id=d["run_id"], name=d["name"], suite=d["suite"], flags=d["config"]["flags"],
                            device_name="NVIDIA A100-SXM4-40GB")
    for doc in docs:
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    assert "2 devices" in capsys.readouterr().err
    md = (tmp_path / "out" / "report.md").read_text()
    assert "### raschka: Raschka's cumulative steps on NVIDIA A100-SXM4-40GB (cuda)" in md
    assert "### raschka: Raschka's cumulative steps on NVIDIA H100 80GB HBM3 (cuda)" in md
    assert "no ratio across devices" in md


def test_cpu_run_with_skips_and_a_distributed_pair(tmp_path):
    run = "20260301T120000Z_t_cpu"
    docs = g.cumulative(run, "raschka", g.RASCHKA[:4], device_kind="cpu", device_name="Test CPU", mfu=None,
                        skip={2: "tf32 needs CUDA"})
    docs.append(g.make_result(run_id=run, name="single/00_ddp", flags=["bf16"], median_ms=110,
                              distributed={"world_size": 4, "backend": "nccl", "bucket_bytes": 25 << 20,
                                           "rank_step_ms_median": [100, 104, 108, 110], "slowest_rank": 3}))
    docs[-1]["summary"]["tokens_per_s"] *= 4  # global, as the engine writes it
    docs.append(g.make_result(run_id=run, name="single/01_one_rank", flags=["bf16"], median_ms=100))
    for doc in docs:
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "(RSS)" in md and "skipped: tf32 needs CUDA" in md
    assert "## distributed scaling" in md and "| 4 | nccl |" in md and "90.9%" in md
    assert "4× A100, DDP" in md  # the published scaling beside ours


def test_rerun_replaces_stale_plots(tmp_path):
    for run in ("20260301T120000Z_a_h100", "20260302T120000Z_b_h100"):
        for doc in g.cumulative(run, "karpathy", g.KARPATHY[:3]):
            g.write(tmp_path / run, doc)
    out = tmp_path / "out"
    assert main([str(tmp_path / "20260301T120000Z_a_h100"), "--out", str(out)]) == 0
    assert main([str(tmp_path / "20260302T120000Z_b_h100"), "--out", str(out)]) == 0
    assert [p.name for p in (out / "plots").iterdir() if p.is_dir()] == ["20260302T120000Z_b_h100"]


@pytest.mark.parametrize("argv, message", [
    ([], "required: RESULTS"),
    (["{dir}", "--dead-band", "lots"], "invalid percent"),
    (["{dir}", "--bogus"], "unrecognized arguments"),
    (["{dir}/missing"], "no such file or directory"),
    (["{dir}"], "no stepwise results found"),
])
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


def test_last_limits_sections_but_not_trends(two_runs, tmp_path):
    assert main([str(two_runs), "--out", str(tmp_path), "--last", "1"]) == 0
    md = (tmp_path / "report.md").read_text()
    assert f"## run {NEW_RUN}" in md and f"## run {OLD_RUN}" not in md
    assert "## trends across runs" in md and "Sections for the 1 newest" in md
