"""run_header.py: what a run measured on and with, and how its configurations fared, before any ratio."""

import resultgen as g
from stepwise_report.read.results import Result, group_runs
from stepwise_report.render.run_header import run_header

RUN = "20260301T120000Z_t_h100"


def _header(docs: list[dict]) -> dict[str, str]:
    return dict(run_header(group_runs([Result(None, d) for d in docs])[0]).rows)


def test_the_header_names_the_machine_the_software_and_the_settings():
    header = _header(g.cumulative(RUN, "raschka", g.RASCHKA[:3]))
    assert header["device"] == "NVIDIA H100 80GB HBM3 (cuda)"
    assert header["CUDA runtime / driver / cuDNN"] == "13.0 / 570.00 / 9.10"
    assert header["preset"] == "gpt2-tiny (7.0M parameters; 2 layers × 64 wide, 2 heads)"
    assert header["timing"] == "cuda_event, 5 warm-up, 20–200 steps, max noise 3.0%"
    assert header["date (UTC)"] == "2026-03-01 12:00:00"
    assert "Python rows" not in header and "CPU bf16" not in header and "sweep" not in header  # only where they apply


def test_the_header_counts_outcomes_and_python_rows_and_the_batch_max_batch_measured():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:4], skip={2: "tf32 needs CUDA"})
    docs.append(g.python_row(docs[0], "python-eager"))
    docs.append(g.make_result(run_id=RUN, name="single/00_big", flags=["max_batch"], batch=32, base_batch=8))
    header = _header(docs)
    assert header["configurations"] == "5 (4 ok, 1 skipped); plus 1 PyTorch Python rows (1 python-eager; 1 ok)"
    assert header["batch × sequence"] == "8 × 64 (max_batch measured batch 32)"
    assert header["Python rows"] == "python 3.11.2, torch 2.11.0+cu130, triton 3.6.0"
