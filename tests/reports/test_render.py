"""A CPU run's report end to end, labelled by the flags in effect.

This test checks document.py (the compile section) and reference.py (the published span); it keeps the file it
had when render.py held the document, because tests/mutants/mutants.toml names it by this path."""

import resultgen as g
from conftest import CPU, cpu_report
from stepwise_report.analysis import compile_groups
from stepwise_report.reference import load_references
from stepwise_report.results import Result, group_runs


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
