"""document.py: what the report says, read from report.md (and the dashboard) as ./report writes them."""

import copy
import shutil

import pytest
import resultgen as g
from conftest import CPU, MICRO_FIXTURE, MICRO_RAW, NEW_RUN, OLD_RUN, cpu_report, write_json
from stepwise_report.analysis.analysis import compile_groups
from stepwise_report.analysis.reference import load_references
from stepwise_report.cli import main
from stepwise_report.read.results import Result, group_runs

# --- runs and micro-benchmark files ---------------------------------------------------------------------------------


def test_report_md_sections(report_out):
    md = (report_out / "report.md").read_text()
    # Newest run first, each with its header.
    assert md.index(f"## run {NEW_RUN}") < md.index(f"## run {OLD_RUN}")
    for field in (
        "| device | NVIDIA H100 80GB HBM3 (cuda) |",
        "| torch | 2.11.0 |",
        "| git commit | fedcba98",
        "| preset | gpt2-tiny",
        "| batch × sequence | 8 × 64",
    ):
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
    docs[2] = g.make_result(
        run_id=d["run_id"],
        name=d["name"],
        suite=d["suite"],
        flags=d["config"]["flags"],
        device_name="NVIDIA A100-SXM4-40GB",
    )
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
    docs = g.cumulative(
        run, "raschka", g.RASCHKA[:4], device_kind="cpu", device_name="Test CPU", mfu=None, skip={2: "tf32 needs CUDA"}
    )
    docs.append(
        g.make_result(
            run_id=run,
            name="single/00_ddp",
            flags=["bf16"],
            median_ms=110,
            distributed={
                "world_size": 4,
                "backend": "nccl",
                "bucket_bytes": 25 << 20,
                "rank_step_ms_median": [100, 104, 108, 110],
                "slowest_rank": 3,
            },
        )
    )
    docs[-1]["summary"]["tokens_per_s"] *= 4  # global, as the engine writes it
    docs.append(g.make_result(run_id=run, name="single/01_one_rank", flags=["bf16"], median_ms=100))
    for doc in docs:
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "(RSS)" in md and "skipped: tf32 needs CUDA" in md
    assert "## distributed scaling" in md and "| 4 | nccl |" in md and "90.9%" in md
    assert "4× A100, DDP" in md  # the published scaling beside ours


def test_results_read_without_jsonschema_say_so_in_the_report(tmp_path, no_jsonschema, capsys):
    for doc in g.cumulative("20260301T120000Z_t_h100", "karpathy", g.KARPATHY[:3]):
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    note = "results not validated against results/schema.json: jsonschema is not installed"
    assert capsys.readouterr().err.count(note) == 1
    md = (tmp_path / "out" / "report.md").read_text()
    assert f"> **note:** {note}" in md and md.index(note) < md.index("## run 20260301T120000Z_t_h100")
    assert note in (tmp_path / "out" / "dashboard.html").read_text()


def test_last_limits_sections_but_not_trends(two_runs, tmp_path):
    assert main([str(two_runs), "--out", str(tmp_path), "--last", "1"]) == 0
    md = (tmp_path / "report.md").read_text()
    assert f"## run {NEW_RUN}" in md and f"## run {OLD_RUN}" not in md
    assert "## trends across runs" in md and "Sections for the 1 newest" in md


def test_report_of_micro_files_only(tmp_path):
    shutil.copy(MICRO_FIXTURE, tmp_path / "micro.json")
    assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    for text in (
        "## micro-benchmarks 2026-11-21 08:24 on cpu: AMD EPYC",
        "| presets | tiny |",
        "| torch | 2.11.0+cu130 |",
        "| host | vm |",
        "| cases | 51 (31 ok, 20 skipped) |",
        "### layernorm · tiny (baseline handwritten)",
        "### copy · host_to_device (baseline pageable_blocking)",
        "| native/fwd/B:4/T:16 | ok | 5.59 µs | 5.02–5.72 µs | 3 | 732.6 M elements/s "
        "| 7.79× (too few repetitions for an interval) |",
        "| handwritten/fwd/B:4/T:16 | ok | 43.53 µs | 43.39–43.60 µs | 3 | 94.09 M elements/s | baseline |",
        "| fused/step | ok | 2.47 ms |",
        "GFLOP/s",
        "| tf32/qkv/B:4/T:64 | skipped: tf32 needs a CUDA device (tensor cores) | — |",
    ):
        assert text in md, text
    page = (tmp_path / "out" / "dashboard.html").read_text()
    assert page.count('<table class="micro">') == 6 and "newest micro-benchmarks per device" in page
    assert "<script" not in page and '<link rel="stylesheet"' not in page
    assert [p.name for p in (tmp_path / "out" / "exports").iterdir()] == [".stepwise-report"]


def test_report_of_runs_and_micro_files_together(tmp_path):
    run = "20260301T120000Z_t_h100"
    for doc in g.cumulative(run, "karpathy", g.KARPATHY[:3]):
        g.write(tmp_path / "results" / run, doc)
    micro = write_json(tmp_path / "micro" / "older.json", MICRO_RAW)
    newer = copy.deepcopy(MICRO_RAW)
    newer["context"]["date"] = "2026-11-22T09:00:00+01:00"
    write_json(tmp_path / "micro" / "newer.json", newer)
    assert main([str(tmp_path / "results"), str(micro.parent), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert (
        md.index(f"## run {run}")
        < md.index("## micro-benchmarks 2026-11-22 08:00")
        < md.index("## micro-benchmarks 2026-11-21 08:24")
    )
    assert "- [micro-benchmarks 2026-11-22 08:00 on cpu: AMD EPYC]" in md  # in the table of contents
    page = (tmp_path / "out" / "dashboard.html").read_text()
    assert f"run {run}" in page and "micro-benchmarks 2026-11-22 08:00" in page
    assert "micro-benchmarks 2026-11-21" not in page  # the dashboard shows the newest file per device
    assert (tmp_path / "out" / "exports" / "gbench.json").is_file()


# --- incomplete suites ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("labels", [True, False])
def test_an_incomplete_suite_says_so_and_names_what_is_missing(tmp_path, labels):
    run = "20260301T120000Z_t_h100"
    docs = [d for i, d in enumerate(g.cumulative(run, "raschka", g.RASCHKA, labels=labels)) if i in (0, 1, 2, 7, 10)]
    for doc in docs:
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    missing = (
        "3 fused AdamW, 4 pinned memory, 5 bf16, 6 native layers, 8 compile (CUDA graph), 9 vocab padding"
        if labels
        else "3, 4, 5, 6, 8, 9"
    )
    assert "### raschka: Raschka's cumulative steps (incomplete: 5 of 11)" in md
    assert f"- incomplete: 5 of 11: missing from this run: {missing}" in md
    assert f"| configurations | 5 (5 ok); raschka: incomplete: 5 of 11 (missing {missing}) |" in md


# --- a CPU's bf16 ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cpu, header",
    [
        (dict(cpu_bf16_native=False), "emulated: the CPU has no avx512_bf16 or amx_bf16; bf16 rows run far slower"),
        # The hardware has avx512_bf16 but ATEN_CPU_CAPABILITY caps ATen at AVX2: emulated, for the engine's reason.
        (
            dict(cpu_bf16_native=False, cpu_bf16_flags=["avx512_bf16"], cpu_capability="AVX2"),
            "emulated: ATen dispatches at AVX2 (ATEN_CPU_CAPABILITY), below AVX512; bf16 rows run far slower",
        ),
        (dict(cpu_bf16_native=False, cpu_env="old"), "emulated: the CPU has no avx512_bf16 or amx_bf16;"),
    ],
)
def test_a_cpu_that_emulates_bf16_says_so_and_why(tmp_path, cpu, header):
    md, page = cpu_report(tmp_path, **cpu)
    assert f"| CPU bf16 | {header}" in md
    because = header.split("emulated: ", 1)[1].split(";")[0]
    assert (
        f"- row 5 (bf16), row 6 (native layers), row 7 (flash), row 9 (vocab padding), row 10 (max batch): "
        f"bf16 is emulated on this CPU ({because}): a slowdown here comes from the machine, not from a bug." in md
    )
    assert "bf16 is emulated on this CPU" in page
    if cpu.get("cpu_bf16_flags"):
        assert "no avx512_bf16" not in md  # the hardware has it: the cap is the reason


@pytest.mark.parametrize("cpu_env", ["new", "old"])
def test_a_cpu_with_native_bf16_says_nothing_of_emulation(tmp_path, cpu_env):
    md, page = cpu_report(tmp_path, cpu_bf16_native=True, cpu_env=cpu_env)
    assert "emulat" not in md.lower() and "emulat" not in page.lower()
    native = (
        "native (avx512_bf16, amx_bf16, ATen dispatches at AVX512)"
        if cpu_env == "new"
        else "native (avx512_bf16, amx_bf16)"
    )
    assert f"| CPU bf16 | {native} |" in md


def test_a_cpu_run_is_labelled_by_the_flags_in_effect(tmp_path):
    # Before: raschka's last step asked for compile (skipped on the CPU), so the compile table and figure called
    # its eager run "libtorch CUDA graph (compile flag)".
    md, page = cpu_report(tmp_path, cpu_bf16_native=False)
    assert "CUDA graph (compile flag)" not in md and "CUDA graph (compile flag)" not in page
    section = md[md.index("### compile: torch.compile vs eager") : md.index("## flags")]
    assert "stepwise's CUDA graph vs torch.compile" not in md
    rows = [line for line in section.splitlines() if line.startswith("| raschka 10 max batch")]
    assert [r.split(" | ")[1] for r in rows] == ["libtorch eager", "python-eager", "python-compile"]
    assert (
        "stepwise's compile flag (one CUDA graph per step) was not in effect here (requires a CUDA device "
        "(CUDA graphs)), so every libtorch row ran eager." in section
    )
    run = group_runs([Result(None, d) for d in g.cumulative("20260301T120000Z_t_cpu", "raschka", g.RASCHKA, **CPU)])[0]
    assert not compile_groups(run, run.devices[0])  # no graph ran and no Python row: no compile section at all
    # The step that asked only for compile is skipped with the engine's reason.
    assert "| 8 | compile (CUDA graph) | compile | skipped: compile requires a CUDA device (CUDA graphs) |" in md
    # Ours vs published: step 3's × previous spans the skipped tf32 step, but tf32 was never in effect here, so the
    # published ratio beside it is fused AdamW's own (2.27 ÷ 2.21), not tf32 and fused AdamW together (2.27 ÷ 1.00).
    ref = load_references()["raschka"]
    fused = ref.row_adding("fused_adamw")
    versus = md[md.index("#### ours vs published (raschka)") : md.index("### compile")]
    row3 = next(line for line in versus.splitlines() if line.startswith("| 3 |"))
    assert row3.split(" | ")[4] == f"{ref.x_previous(fused):.2f}×" and ref.x_baseline(fused) > 2
