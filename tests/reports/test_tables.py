"""tables.py: our steps, the published ones, ours versus published, traces, the matrix, micro-benchmark tables."""

from pathlib import Path

import pytest
import resultgen as g
from conftest import micro_file
from stepwise_report.reference import align, load_references
from stepwise_report.results import Case, MicroFile, Result, SuiteGroup, build_chain
from stepwise_report.tables import (case_groups, case_label, flag_effects, matrix_table, published_table, step_notes,
                                    step_table, to_html, to_markdown, trace_table, versus_table)

RUN = "20260301T120000Z_t_h100"


def _steps(docs):
    return build_chain([Result(None, d) for d in docs])


def _column(table, header):
    i = table.headers.index(header)
    return [row[i] for row in table.rows]


def test_step_table_shows_status_ratios_spread_memory_mfu_and_loss():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA, skip={4: "pinned_memory needs CUDA"},
                        fail={8: "capture failed"}, loss={5: "math changed"})
    steps = _steps(docs)
    table = step_table(steps)
    assert table.headers[:7] == ["#", "step", "adds", "status", "tok/s", "× previous", "× baseline"]
    assert _column(table, "status")[4] == "skipped: pinned_memory needs CUDA"
    assert _column(table, "status")[8] == "failed: capture failed"
    assert _column(table, "tok/s")[4] == "—" and _column(table, "× previous")[5].endswith("†")
    assert _column(table, "× previous")[2] == f"{steps[2].x_previous:.2f}×"
    s = docs[2]["summary"]["step_ms"]
    assert _column(table, "ms/step median (p10–p90)")[2] == f"{s['median']:.2f} ({s['p10']:.2f}–{s['p90']:.2f})"
    assert _column(table, "peak reserved")[0] == "26.00 GiB"
    assert _column(table, "MFU")[0] == "30.0%"
    assert _column(table, "loss check")[0] == "baseline"
    assert _column(table, "loss check")[5] == "math changed"
    notes = " ".join(step_notes(steps))
    assert "last step that ran" in notes and "step 5 (bf16)" in notes and "against step 3" in notes
    md = to_markdown(table)
    assert md.count("\n") == len(table.rows) + 1 and "| 10 | max batch |" in md


def test_a_step_that_changes_the_optimizer_says_so():
    # Karpathy's order turns compile on before fused AdamW: the captured step runs capturable foreach AdamW.
    karpathy = [("baseline", [], 1.0, 20.0), ("compile (CUDA graph)", ["compile"], 1.2, 20.0),
                ("fused AdamW", ["fused_adamw"], 1.3, 20.0)]
    docs = g.cumulative(RUN, "karpathy", karpathy)
    d = docs[1]
    docs[1] = g.make_result(run_id=RUN, name=d["name"], suite=d["suite"], flags=d["config"]["flags"],
                            optimizer="foreach_capturable", seed=2)
    notes = " ".join(step_notes(_steps(docs)))
    assert "step 1 (compile (CUDA graph)) also changes the optimizer, foreach → foreach_capturable" in notes
    assert "step 2" not in notes  # fused_adamw's own step changes the optimizer by definition


def test_cpu_results_show_rss_and_why_mfu_is_missing():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:3], device_kind="cpu", device_name="Test CPU", mfu=None,
                        skip={2: "tf32 needs CUDA"})
    steps = _steps(docs)
    table = step_table(steps)
    assert _column(table, "peak reserved")[0].endswith("(RSS)")
    assert _column(table, "MFU")[0] == "—"
    notes = step_notes(steps)
    assert any("peak FLOPs of this CPU are unknown" in n for n in notes)
    assert any("resident set size" in n for n in notes)


def test_published_table_has_only_the_columns_the_source_has():
    refs = load_references()
    raschka, karpathy = published_table(refs["raschka"]), published_table(refs["karpathy"])
    assert "reserved (GiB)" in raschka.headers and "ms/step" not in raschka.headers and "MFU" not in raschka.headers
    assert "ms/step" in karpathy.headers and "reserved (GiB)" not in karpathy.headers
    assert "tok/s (derived)" in karpathy.headers
    assert _column(karpathy, "ms/step")[0] == "~1000"
    assert _column(raschka, "× previous")[2] == "2.21×"


def test_versus_table_marks_direction_changes():
    spec = [list(s) for s in g.RASCHKA]
    spec[3][2] = spec[4][2] = 2.0  # fused AdamW slows us down (2.2 → 2.0) while it sped the published run up
    steps = _steps(g.cumulative(RUN, "raschka", spec))
    table = versus_table(align(steps, load_references()["raschka"], 0.02))
    assert table.marked == {3}
    assert "differs" in table.rows[3][-1] and "▼ slower / ▲ faster" in table.rows[3][-1]
    assert 'class="marked"' in to_html(table)


def test_trace_table_per_step_and_unavailable_reason():
    trace = {"status": "ok", "reason": None, "steps_traced": 5, "kernels_per_step": 412.0,
             "kernel_ms_per_step": 18.2, "idle_ms_per_step": 1.1, "busy_fraction": 0.943,
             "top_kernels": [{"name": "sm90_xmma_gemm", "count": 60, "total_ms": 40.0, "mean_us": 666.0}],
             "attention_kernel": "flash",
             "memcpy": {"h2d_count": 2, "h2d_bytes": 4096, "h2d_gbps": 12.5, "h2d_source": "pinned"}}
    docs = g.cumulative(RUN, "karpathy", g.KARPATHY[:3])
    docs[1] = g.make_result(run_id=RUN, name=docs[1]["name"], suite=docs[1]["suite"], trace=trace)
    docs[2] = g.make_result(run_id=RUN, name=docs[2]["name"], suite=docs[2]["suite"],
                            trace={"status": "unavailable", "reason": "CUPTI subscriber taken (error 39)"})
    table = trace_table(_steps(docs))
    assert table.rows[0][2] == "not traced"
    assert table.rows[1][2:7] == ["412", "94.3%", "18.20", "1.10", "flash"]
    assert "pinned" in table.rows[1][7] and "sm90_xmma_gemm" in table.rows[1][8]
    assert table.rows[2][2] == "trace unavailable: CUPTI subscriber taken (error 39)"


def test_matrix_shows_alone_vs_among_all_and_skips():
    alone_docs = g.one_at_a_time(RUN, {"tf32": 2.0, "bf16": 3.0, "flash": 1.5})
    alone_docs[1] = g.make_result(run_id=RUN, name=alone_docs[1]["name"], suite=alone_docs[1]["suite"],
                                  status="skipped", reason="tf32 needs CUDA")
    removed_docs = g.leave_one_out(RUN, {"tf32": 1.0, "bf16": 1.5, "flash": 2.0})
    groups = [SuiteGroup(name, name, "d", [Result(None, d) for d in docs])
              for name, docs in (("one_at_a_time", alone_docs), ("leave_one_out", removed_docs))]
    effects = flag_effects(groups[0], groups[1], g.FLAGS_INFO)
    assert [e.flag for e in effects] == ["tf32", "bf16", "flash"]  # flag-table order
    flash = effects[2]
    assert flash.speedup_alone == pytest.approx(1.5, rel=0.05)
    assert flash.speedup_in_context == pytest.approx(2.0, rel=0.05)
    assert flash.interaction > 1.2
    table = matrix_table(effects, *groups)
    assert table.rows[0][2] == "skipped: tf32 needs CUDA" and table.rows[0][4] == "—"
    assert table.rows[2][1] == "fused scaled-dot-product attention"  # from flags_info, not hard-coded


# --- micro-benchmark files --------------------------------------------------------------------


def test_manual_time_names_pair_and_lose_their_suffix():
    ctx = {"stepwise_baselines": "attention=explicit", "stepwise_device": "cuda:0: NVIDIA H100 80GB HBM3"}
    names = ["attention/gpt2-124m/explicit/fwd+bwd/bf16/B:8/T:1024/manual_time",
             "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:1024/manual_time",
             "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:512/manual_time"]
    cases = [Case(n, n.split("/"), "ms", [t]) for n, t in zip(names, (4.0, 1.0, 0.5))]
    m = MicroFile(Path("gpu.json"), ctx, cases)
    assert m.speedup(cases[1]) == 4.0 and m.speedup(cases[2]) is None  # no explicit run at T:512
    assert case_label(m, cases[1]) == "sdpa_flash/fwd+bwd/bf16/B:8/T:1024" and m.manual_time
    assert [t for t, _ in case_groups(m)] == ["attention · gpt2-124m"]


def test_rows_put_each_baseline_above_its_variants():
    (title, cases), = [g for g in case_groups(micro_file()) if g[0] == "layernorm · tiny"]
    assert [case_label(micro_file(), c) for c in cases[:4]] == [
        "handwritten/fwd/B:4/T:16", "native/fwd/B:4/T:16", "handwritten/fwd/B:4/T:64", "native/fwd/B:4/T:64"]
