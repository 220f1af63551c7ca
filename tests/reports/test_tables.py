"""tables.py: our steps, the published ones, ours versus published, traces, the matrix, micro-benchmark tables."""

import re
from pathlib import Path

import numpy as np
import pytest
import resultgen as g
from conftest import micro_file
from stepwise_report.analysis import build_chain, flag_effects
from stepwise_report.formats import to_html, to_markdown
from stepwise_report.micro import Case, MicroFile
from stepwise_report.reference import align, load_references
from stepwise_report.results import Result, SuiteGroup, group_runs
from stepwise_report.speedup import speedup
from stepwise_report.tables import (
    case_groups,
    case_label,
    case_table,
    matrix_table,
    published_table,
    status_cell,
    step_notes,
    step_table,
    trace_table,
    versus_table,
)

RUN = "20260301T120000Z_t_h100"


def _steps(docs):
    return build_chain([Result(None, d) for d in docs])


def _column(table, header):
    i = table.headers.index(header)
    return [row[i] for row in table.rows]


def test_step_table_shows_status_ratios_spread_memory_mfu_and_loss():
    docs = g.cumulative(
        RUN,
        "raschka",
        g.RASCHKA,
        skip={4: "pinned_memory needs CUDA"},
        fail={8: "capture failed"},
        loss={5: "math changed"},
    )
    steps = _steps(docs)
    table = step_table(steps)
    assert table.headers[:7] == ["#", "step", "adds", "status", "tok/s", "× previous", "× baseline"]
    assert _column(table, "status")[4] == "skipped: pinned_memory needs CUDA"
    assert _column(table, "status")[8] == "failed: capture failed"
    assert _column(table, "tok/s")[4] == "—" and _column(table, "× previous")[5].endswith("†")
    assert _column(table, "× previous")[2].startswith(f"{steps[2].x_previous:.2f}× (")
    assert _column(table, "× previous")[1].endswith(": no measurable change")  # dynamic mask: 1.00×
    assert _column(table, "× baseline")[0] == "1.00×"  # the reference itself
    s = docs[2]["summary"]["step_ms"]
    assert _column(table, "ms/step median (p10–p90)")[2] == f"{s['median']:.2f} ({s['p10']:.2f}–{s['p90']:.2f})"
    assert _column(table, "peak reserved")[0] == "26.00 GiB"
    assert _column(table, "MFU")[0] == "30.0%"
    assert _column(table, "loss check")[0] == "baseline"
    assert _column(table, "loss check")[5] == "math changed (bf16)"
    assert _column(table, "loss check")[2] == "ok (fp32)"
    notes = " ".join(step_notes(steps))
    assert "last step that ran" in notes and "step 5 (bf16)" in notes and "against step 3" in notes
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
    assert "changes the optimizer" not in " ".join(step_notes(_steps(docs)))
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
    notes = " ".join(step_notes(_steps(docs)))
    assert "step 1 (compile (CUDA graph)) also changes the optimizer, foreach → foreach_capturable" in notes
    assert "step 2" not in notes  # fused_adamw's own step changes the optimizer by definition


def test_cpu_results_show_rss_and_why_mfu_is_missing():
    docs = g.cumulative(
        RUN, "raschka", g.RASCHKA[:3], device_kind="cpu", device_name="Test CPU", mfu=None, skip={2: "tf32 needs CUDA"}
    )
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
    table = trace_table(_steps(docs))
    assert table.rows[0][2] == "not traced"
    assert table.rows[1][2:7] == ["412", "94.3%", "18.20", "1.10", "flash"]
    assert "pinned" in table.rows[1][7] and "sm90_xmma_gemm" in table.rows[1][8]
    assert table.rows[2][2] == "trace unavailable: CUPTI subscriber taken (error 39)"


def test_matrix_shows_alone_vs_among_all_and_skips():
    alone_docs = g.one_at_a_time(RUN, {"tf32": 2.0, "bf16": 3.0, "flash": 1.5})
    alone_docs[1] = g.make_result(
        run_id=RUN, name=alone_docs[1]["name"], suite=alone_docs[1]["suite"], status="skipped", reason="tf32 needs CUDA"
    )
    removed_docs = g.leave_one_out(RUN, {"tf32": 1.0, "bf16": 1.5, "flash": 2.0})
    groups = [
        SuiteGroup(name, name, "d", [Result(None, d) for d in docs])
        for name, docs in (("one_at_a_time", alone_docs), ("leave_one_out", removed_docs))
    ]
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
    names = [
        "attention/gpt2-124m/explicit/fwd+bwd/bf16/B:8/T:1024/manual_time",
        "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:1024/manual_time",
        "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:512/manual_time",
    ]
    cases = [Case(n, n.split("/"), "ms", [t]) for n, t in zip(names, (4.0, 1.0, 0.5))]
    m = MicroFile(Path("gpu.json"), ctx, cases)
    assert m.speedup(cases[1]) == 4.0 and m.speedup(cases[2]) is None  # no explicit run at T:512
    assert case_label(m, cases[1]) == "sdpa_flash/fwd+bwd/bf16/B:8/T:1024" and m.manual_time
    assert [t for t, _ in case_groups(m)] == ["attention · gpt2-124m"]


def test_rows_put_each_baseline_above_its_variants():
    ((title, cases),) = [g for g in case_groups(micro_file()) if g[0] == "layernorm · tiny"]
    assert [case_label(micro_file(), c) for c in cases[:4]] == [
        "handwritten/fwd/B:4/T:16",
        "native/fwd/B:4/T:16",
        "handwritten/fwd/B:4/T:64",
        "native/fwd/B:4/T:64",
    ]


def test_intervals_come_from_the_gates_bootstrap():
    steps = _steps(g.cumulative(RUN, "raschka", g.RASCHKA[:4]))
    sp = speedup(steps[0].result, steps[2].result)
    # The same seeded bootstrap as compare_speedups: ratio of medians of the raw step times.
    a, b = np.asarray(steps[0].result.samples_ms), np.asarray(steps[2].result.samples_ms)
    assert sp.value == pytest.approx(float(np.median(a) / np.median(b)))
    assert sp.lo < sp.value < sp.hi and sp.measurable
    assert step_table(steps).rows[2][6] == f"{sp.value:.2f}× ({sp.lo:.2f}–{sp.hi:.2f})"


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
    steps = _steps(docs)
    sp = speedup(steps[2].result, steps[3].result)
    assert sp.lo < 1 < sp.hi
    table = versus_table(align(steps, load_references()["raschka"], 0.02))
    assert table.rows[3][3].endswith(": no measurable change")
    assert table.rows[3][-1].startswith("= same / ▲ faster")  # ours is not a gain, the published one is


# --- short measurements and hardware notes -----------------------------------------------------


def test_a_short_measurement_is_marked_in_every_table():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:4], short={2})
    steps = _steps(docs)
    noise = docs[2]["summary"]["step_ms"]["noise"]
    assert noise > 0.03  # three steps are less certain than --max-noise asked: the mark says both
    mark = f"short: n=3, noise {100 * noise:.{0 if noise >= 0.1 else 1}f}%, above --max-noise 3%"
    assert _column(step_table(steps), "status")[2] == f"ok ({mark})"
    assert _column(versus_table(align(steps, load_references()["raschka"], 0.02)), "step")[2] == f"tf32 ({mark})"
    assert any(n.startswith("short: the measured phase stopped at --max-time") for n in step_notes(steps))
    one = g.make_result(run_id=RUN, name="single/00_x", n=1, short=True)
    assert one["summary"]["step_ms"]["noise"] is None
    assert status_cell(Result(None, one)) == "ok (short: n=1, noise n/a)"


# One configuration disturbed by other work: 25 steps at 80 ms, then 15 at 120–300 ms (noise 41%).
DISTURBED = g.step_times(80, 0.01, 25, 1) + [float(x) for x in np.linspace(120, 300, 15)]
NOISY_MARK = "noisy: noise 41%, above --max-noise 2%"


@pytest.mark.parametrize("write_noisy", [True, False])  # summary.noisy as the engine writes it; absent in older results
def test_a_noisy_measurement_is_marked_where_its_speedups_appear(write_noisy):
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:5], max_noise=0.02, write_noisy=write_noisy)
    d = docs[3]
    docs[3] = g.make_result(
        run_id=RUN,
        name=d["name"],
        suite=d["suite"],
        flags=d["config"]["flags"],
        samples=DISTURBED,
        max_noise=0.02,
        write_noisy=write_noisy,
    )
    steps = _steps(docs)
    status = _column(step_table(steps), "status")
    assert status[3] == f"ok ({NOISY_MARK})"
    assert status[:3] + status[4:] == ["ok"] * 4  # within their --max-noise: no mark
    assert (
        _column(versus_table(align(steps, load_references()["raschka"], 0.02)), "step")[3]
        == f"fused AdamW ({NOISY_MARK})"
    )
    notes = step_notes(steps)
    assert any(n.startswith("noisy: the median's 95% confidence interval is wider than the --max-noise") for n in notes)
    assert not any(n.startswith("short:") for n in notes)
    # The quiet steps alone carry neither mark nor note.
    assert not any(n.startswith("noisy:") for n in step_notes(steps[:3]))


def test_a_noisy_measurement_is_marked_in_the_flag_matrix():
    alone = g.one_at_a_time(RUN, {"bf16": 2.0}, max_noise=0.02)
    alone[1] = g.make_result(
        run_id=RUN, name=alone[1]["name"], suite=alone[1]["suite"], flags=["bf16"], samples=DISTURBED, max_noise=0.02
    )
    removed = g.leave_one_out(RUN, {"bf16": 1.5}, max_noise=0.02)
    groups = [
        SuiteGroup(n, n, "d", [Result(None, d) for d in docs])
        for n, docs in (("one_at_a_time", alone), ("leave_one_out", removed))
    ]
    table = matrix_table(flag_effects(groups[0], groups[1], g.FLAGS_INFO), *groups)
    assert table.rows[0][2].endswith(f"({NOISY_MARK})") and "noisy" not in table.rows[0][3]


def test_short_marks_in_the_flag_matrix():
    alone = g.one_at_a_time(RUN, {"bf16": 2.0})
    alone[1] = g.make_result(
        run_id=RUN, name=alone[1]["name"], suite=alone[1]["suite"], flags=["bf16"], median_ms=100, n=3, short=True
    )
    removed = g.leave_one_out(RUN, {"bf16": 1.5})
    groups = [
        SuiteGroup(n, n, "d", [Result(None, d) for d in docs])
        for n, docs in (("one_at_a_time", alone), ("leave_one_out", removed))
    ]
    table = matrix_table(flag_effects(groups[0], groups[1], g.FLAGS_INFO), *groups)
    assert "(short: n=3, noise" in table.rows[0][2] and "short" not in table.rows[0][3]


def test_bf16_on_a_cpu_that_emulates_it_gets_the_hardware_note():
    cpu = dict(device_kind="cpu", device_name="Test CPU", mfu=None)
    notes = " ".join(step_notes(_steps(g.cumulative(RUN, "raschka", g.RASCHKA[:7], cpu_bf16_native=False, **cpu))))
    assert (
        "step 5 (bf16), step 6 (native layers): bf16 is emulated on this CPU (the CPU has no avx512_bf16 or "
        "amx_bf16): a slowdown here comes from the machine, not from a bug."
    ) in notes
    # The CPU has the instructions but ATen is capped below them: the engine's own reason, not the hardware's.
    capped = " ".join(
        step_notes(
            _steps(
                g.cumulative(
                    RUN,
                    "raschka",
                    g.RASCHKA[:7],
                    cpu_bf16_native=False,
                    cpu_bf16_flags=["avx512_bf16"],
                    cpu_capability="AVX2",
                    **cpu,
                )
            )
        )
    )
    assert "bf16 is emulated on this CPU (ATen dispatches at AVX2 (ATEN_CPU_CAPABILITY), below AVX512)" in capped
    assert "no avx512_bf16" not in capped
    for kw in ({"cpu_bf16_native": True, **cpu}, cpu, {}):  # native bf16, unknown (written before the key), a GPU
        assert "emulated" not in " ".join(step_notes(_steps(g.cumulative(RUN, "raschka", g.RASCHKA[:7], **kw))))


# --- loss-check verdicts explained ---------------------------------------------------------------


def test_the_loss_legend_explains_each_verdict_that_appears_and_each_rows_reason():
    docs = g.cumulative(
        RUN, "raschka", g.RASCHKA[:7], loss={2: "too short to judge", 3: "not comparable", 5: "math changed"}
    )
    notes = step_notes(_steps(docs))
    legend = [n for n in notes if n.startswith("loss check — ")]
    assert [n.split(" — ")[1].split(":")[0] for n in legend] == [
        "baseline",
        "ok",
        "math changed",
        "too short to judge",
        "not comparable",
    ]
    assert (
        "loss check — ok: the loss drop and the loss at the last shared step agree with the baseline within "
        "the tolerance of each row's class (bf16, exact, fp32)"
    ) in legend
    assert "loss check — not comparable: a different batch, so different data per step" in legend
    assert (
        "loss check — math changed: the loss drop or the loss at the last shared step differs from the "
        "baseline's beyond the bf16 tolerance" in " ".join(legend)
    )
    assert (
        "step 5 (bf16): math changed — the loss at the last shared step is 0.31 above the baseline's "
        "(tolerance 0.05, bf16)" in notes
    )
    assert "step 2 (tf32): too short to judge — only 3 steps shared with the baseline; the check needs 10" in notes
    assert not any(n.startswith("step 1 (dynamic mask): ok") for n in notes)  # ok rows need no reason
    no_base = g.cumulative(
        RUN, "raschka", g.RASCHKA[:3], loss={1: "no baseline", 2: "no baseline"}, fail={0: "out of memory"}
    )
    assert any(n.startswith("loss check — no baseline: the baseline did not run") for n in step_notes(_steps(no_base)))


def test_results_with_the_old_loss_check_shape_still_read():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:6], loss={5: "math changed"}, loss_shape="old")
    steps = _steps(docs)
    assert _column(step_table(steps), "loss check")[5] == "math changed (+8.0%)"
    notes = step_notes(steps)
    assert "step 5 (bf16): math changed — window mean loss differs from the baseline's by +8.0% (tolerance 2%)" in notes
    assert (
        "loss check — ok: the loss drop and the loss at the last shared step agree with the baseline within "
        "the tolerance" in notes
    )


# --- rows of other implementations ---------------------------------------------------------------


def _with_python(docs, indices, **kw):
    out = list(docs)
    for i in indices:
        out.append(g.python_row(docs[i], "python-eager", slower=1.2, **kw))
        out.append(g.python_row(docs[i], "python-compile", slower=0.9, **kw))
    return out


def test_python_rows_never_enter_the_chain_or_the_step_tables():
    libtorch = g.cumulative(RUN, "raschka", g.RASCHKA[:4])
    steps = _steps(_with_python(libtorch, [0, 2, 3]))
    assert [s.result.name for s in steps] == [d["name"] for d in libtorch]
    assert len(step_table(steps).rows) == 4
    assert steps[3].x_previous == pytest.approx(_steps(libtorch)[3].x_previous)
    runs = group_runs([Result(None, d) for d in _with_python(libtorch, [0, 2])])
    assert [len(g_.results) for g_ in runs[0].suites] == [4] and len(runs[0].others) == 4
    alone = g.one_at_a_time(RUN, {"bf16": 2.0})
    group = SuiteGroup("one_at_a_time", "one_at_a_time", "d", [Result(None, d) for d in _with_python(alone, [0, 1])])
    effects = flag_effects(group, None, g.FLAGS_INFO)
    assert [(e.flag, e.alone.implementation) for e in effects] == [("bf16", "libtorch")]


def test_micro_speedups_carry_the_interval_of_their_repetitions():
    from conftest import MICRO_RAW, micro_rows
    from stepwise_report.micro import parse_micro

    m = parse_micro(Path("micro.json"), micro_rows(MICRO_RAW, 3))  # 9 repetitions per case
    ((_, cases),) = [g_ for g_ in case_groups(m) if g_[0] == "layernorm · tiny"]
    native = next(c for c in cases if case_label(m, c) == "native/fwd/B:4/T:16")
    cell = case_table(m, cases).rows[cases.index(native)][-1]
    assert re.fullmatch(r"7\.79× \(\d+\.\d\d–\d+\.\d\d\)", cell), cell
