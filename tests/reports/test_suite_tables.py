"""suite_tables.py: our steps, the published ones, ours versus published, and the kernel trace."""

import pytest
import resultgen as g
from conftest import CPU, chain, column
from stepwise_report.analysis.analysis import flag_effects
from stepwise_report.analysis.reference import align, load_references
from stepwise_report.read.results import Result, SuiteGroup, group_runs
from stepwise_report.render.formats import to_html, to_markdown
from stepwise_report.render.suite_tables import published_table, step_notes, step_table, trace_table, versus_table
from stepwise_report.stats.speedup import speedup

RUN = "20260301T120000Z_t_h100"


def test_step_table_shows_status_ratios_spread_memory_mfu_and_loss():
    docs = g.cumulative(
        RUN,
        "raschka",
        g.RASCHKA,
        skip={4: "pinned_memory needs CUDA"},
        fail={8: "capture failed"},
        loss={5: "math changed"},
    )
    steps = chain(docs)
    table = step_table(steps)
    assert table.headers[:7] == ["#", "row", "adds", "status", "tok/s", "× previous", "× baseline"]
    assert column(table, "status")[4] == "skipped: pinned_memory needs CUDA"
    assert column(table, "status")[8] == "failed: capture failed"
    assert column(table, "tok/s")[4] == "—" and column(table, "× previous")[5].endswith("†")
    assert column(table, "× previous")[2].startswith(f"{steps[2].x_previous:.2f}× (")
    assert column(table, "× previous")[1].endswith(": no measurable change")  # dynamic mask: 1.00×
    assert column(table, "× baseline")[0] == "1.00×"  # the reference itself
    s = docs[2]["summary"]["step_ms"]
    assert column(table, "ms/step median (p10–p90)")[2] == f"{s['median']:.2f} ({s['p10']:.2f}–{s['p90']:.2f})"
    assert column(table, "peak reserved")[0] == "26.00 GiB"
    assert column(table, "MFU")[0] == "30.0%"
    assert column(table, "loss check")[0] == "baseline"
    assert column(table, "loss check")[5] == "math changed (bf16)"
    assert column(table, "loss check")[2] == "ok (fp32)"
    notes = " ".join(step_notes(steps))
    assert "last step that ran" in notes and "row 5 (bf16)" in notes and "against row 3" in notes
    md = to_markdown(table)
    assert md.count("\n") == len(table.rows) + 1 and "| 10 | max batch |" in md


def test_compile_no_longer_changes_the_optimizer():
    karpathy = [
        ("baseline", [], 1.0, 20.0),
        ("compile (CUDA graph)", ["compile"], 1.2, 20.0),
        ("fused AdamW", ["fused_adamw"], 1.3, 20.0),
    ]
    docs = g.cumulative(RUN, "karpathy", karpathy)
    assert [d["config"]["optimizer"] for d in docs] == ["foreach", "foreach", "fused"]
    assert "changes the optimizer" not in " ".join(step_notes(chain(docs)))
    cpu = g.cumulative(RUN, "karpathy", karpathy, device_kind="cpu", device_name="Test CPU", mfu=None)
    assert cpu[0]["config"]["optimizer"] == "forloop"  # torch.optim's single-tensor loop: the CPU baseline


def test_a_step_that_changes_the_optimizer_says_so():
    # A row written before compile left the optimizer out of the graph: the captured step ran capturable foreach.
    karpathy = [
        ("baseline", [], 1.0, 20.0),
        ("compile (CUDA graph)", ["compile"], 1.2, 20.0),
        ("fused AdamW", ["fused_adamw"], 1.3, 20.0),
    ]
    docs = g.cumulative(RUN, "karpathy", karpathy, optimizer=None)
    d = docs[1]
    docs[1] = g.make_result(
        run_id=RUN, name=d["name"], suite=d["suite"], flags=d["config"]["flags"], optimizer="foreach_capturable", seed=2
    )
    notes = " ".join(step_notes(chain(docs)))
    assert "row 1 (compile (CUDA graph)) also changes the optimizer, foreach → foreach_capturable" in notes
    assert "step 2" not in notes  # fused_adamw's own step changes the optimizer by definition


def test_cpu_results_show_rss_and_why_mfu_is_missing():
    docs = g.cumulative(
        RUN, "raschka", g.RASCHKA[:3], device_kind="cpu", device_name="Test CPU", mfu=None, skip={2: "tf32 needs CUDA"}
    )
    steps = chain(docs)
    table = step_table(steps)
    assert column(table, "peak reserved")[0].endswith("(RSS)")
    assert column(table, "MFU")[0] == "—"
    notes = step_notes(steps)
    assert any("peak FLOPs of this CPU are unknown" in n for n in notes)
    assert any("resident set size" in n for n in notes)


def test_published_table_has_only_the_columns_the_source_has():
    refs = load_references()
    raschka, karpathy = published_table(refs["raschka"]), published_table(refs["karpathy"])
    assert "reserved (GiB)" in raschka.headers and "ms/step" not in raschka.headers and "MFU" not in raschka.headers
    assert "ms/step" in karpathy.headers and "reserved (GiB)" not in karpathy.headers
    assert "tok/s (derived)" in karpathy.headers
    assert column(karpathy, "ms/step")[0] == "~1000"
    assert column(raschka, "× previous")[2] == "2.21×"


def test_versus_table_marks_direction_changes():
    spec = [list(s) for s in g.RASCHKA]
    spec[3][2] = spec[4][2] = 2.0  # fused AdamW slows us down (2.2 → 2.0) while it sped the published run up
    steps = chain(g.cumulative(RUN, "raschka", spec))
    table = versus_table(align(steps, load_references()["raschka"], 0.02))
    assert table.marked == {3}
    assert "differs" in table.rows[3][-1] and "▼ slower / ▲ faster" in table.rows[3][-1]
    assert 'class="marked"' in to_html(table)


def test_trace_table_per_step_and_unavailable_reason():
    trace = {
        "status": "ok",
        "reason": None,
        "steps_traced": 5,
        "kernels_per_step": 412.0,
        "kernel_ms_per_step": 18.2,
        "idle_ms_per_step": 1.1,
        "busy_fraction": 0.943,
        "top_kernels": [{"name": "sm90_xmma_gemm", "count": 60, "total_ms": 40.0, "mean_us": 666.0}],
        "attention_kernel": "flash",
        "memcpy": {"h2d_count": 2, "h2d_bytes": 4096, "h2d_gbps": 12.5, "h2d_source": "pinned"},
    }
    docs = g.cumulative(RUN, "karpathy", g.KARPATHY[:3])
    docs[1] = g.make_result(run_id=RUN, name=docs[1]["name"], suite=docs[1]["suite"], trace=trace)
    docs[2] = g.make_result(
        run_id=RUN,
        name=docs[2]["name"],
        suite=docs[2]["suite"],
        trace={"status": "unavailable", "reason": "CUPTI subscriber taken (error 39)"},
    )
    table = trace_table(chain(docs))
    assert table.rows[0][2] == "not traced"
    assert table.rows[1][2:7] == ["412", "94.3%", "18.20", "1.10", "flash"]
    assert "pinned" in table.rows[1][7] and "sm90_xmma_gemm" in table.rows[1][8]
    assert table.rows[2][2] == "trace unavailable: CUPTI subscriber taken (error 39)"


# --- rows of other implementations ----------------------------------------------------------------------------------


def _with_python(docs, indices, **kw):
    out = list(docs)
    for i in indices:
        out.append(g.python_row(docs[i], "python-eager", slower=1.2, **kw))
        out.append(g.python_row(docs[i], "python-compile", slower=0.9, **kw))
    return out


def test_python_rows_never_enter_the_chain_or_the_step_tables():
    libtorch = g.cumulative(RUN, "raschka", g.RASCHKA[:4])
    steps = chain(_with_python(libtorch, [0, 2, 3]))
    assert [s.result.name for s in steps] == [d["name"] for d in libtorch]
    assert len(step_table(steps).rows) == 4
    assert steps[3].x_previous == pytest.approx(chain(libtorch)[3].x_previous)
    runs = group_runs([Result(None, d) for d in _with_python(libtorch, [0, 2])])
    assert [len(g_.results) for g_ in runs[0].suites] == [4] and len(runs[0].others) == 4
    alone = g.one_at_a_time(RUN, {"bf16": 2.0})
    group = SuiteGroup("one_at_a_time", "one_at_a_time", "d", [Result(None, d) for d in _with_python(alone, [0, 1])])
    effects = flag_effects(group, None, g.FLAGS_INFO)
    assert [(e.flag, e.alone.implementation) for e in effects] == [("bf16", "libtorch")]


def test_a_step_names_the_flags_it_asked_for_that_were_skipped():
    steps = [("baseline", [], 1.0, 1.0), ("tf32 and fused AdamW", ["tf32", "fused_adamw"], 1.1, 1.0)]
    docs = g.cumulative("20260301T120000Z_t_cpu", "raschka", steps, **CPU)
    table = step_table(chain(docs))
    assert table.rows[1][2] == "fused_adamw (tf32 skipped on this device)"


def test_a_noisy_speedup_within_its_interval_reads_same_in_the_versus_table():
    # Fused AdamW measured 3% faster, but the steps are so noisy that the interval contains 1.
    spec = [list(s) for s in g.RASCHKA[:5]]
    docs = g.cumulative(RUN, "raschka", spec)
    d = docs[3]
    docs[3] = g.make_result(
        run_id=RUN,
        name=d["name"],
        suite=d["suite"],
        flags=d["config"]["flags"],
        samples=[t * 0.97 for t in g.step_times(200 / 2.2, 0.25, 30, 9)],
    )
    steps = chain(docs)
    sp = speedup(steps[2].result, steps[3].result)
    assert sp.lo < 1 < sp.hi
    table = versus_table(align(steps, load_references()["raschka"], 0.02))
    assert table.rows[3][3].endswith(": no measurable change")
    assert table.rows[3][-1].startswith("= same / ▲ faster")  # ours is not a gain, the published one is


def test_the_phase_table_gives_each_marked_phase_its_median_and_share():
    from stepwise_report.render.suite_tables import has_phases, phase_notes, phase_table

    docs = g.cumulative("20260301T120000Z_t_cpu", "raschka", g.RASCHKA)[:3]
    docs[0]["phases"] = {
        "phases": [
            {"name": "forward", "median_ms": 40.0, "share": 0.4},
            {"name": "backward", "median_ms": 50.0, "share": 0.5},
        ],
        "step_median_ms": 100.0,
    }
    docs[2]["phases"] = {
        "phases": [{"name": "forward_backward", "median_ms": 9.0, "share": 0.9}],
        "step_median_ms": 10.0,
    }
    steps = chain(docs)
    assert has_phases(steps) and not has_phases(steps[1:2])
    table = phase_table(steps)
    # Columns in the order a step runs its phases, only those some row marked; a row without one shows a dash.
    assert table.headers == ["#", "row", "forward", "backward", "fwd+bwd", "ms/step"]
    assert table.rows == [
        ["0", steps[0].label, "40.00 (40%)", "50.00 (50%)", "—", "100.0"],
        ["2", steps[2].label, "—", "—", "9.00 (90%)", "10.00"],
    ]
    assert any(n.startswith("fwd+bwd: compile replays") for n in phase_notes(steps))
