"""tables.py: what every table's rows share: the short and noisy marks, × baseline with its interval, the bf16 and
loss-check notes."""

import numpy as np
import pytest
import resultgen as g
from conftest import DISTURBED, NOISY_MARK, chain, column
from stepwise_report.analysis.reference import align, load_references
from stepwise_report.read.results import Result
from stepwise_report.render.suite_tables import step_notes, step_table, versus_table
from stepwise_report.render.tables import status_cell
from stepwise_report.stats.speedup import speedup

RUN = "20260301T120000Z_t_h100"


def test_intervals_come_from_the_gates_bootstrap():
    steps = chain(g.cumulative(RUN, "raschka", g.RASCHKA[:4]))
    sp = speedup(steps[0].result, steps[2].result)
    # The same seeded bootstrap as compare_speedups: ratio of medians of the raw step times.
    a, b = np.asarray(steps[0].result.samples_ms), np.asarray(steps[2].result.samples_ms)
    assert sp.value == pytest.approx(float(np.median(a) / np.median(b)))
    assert sp.lo < sp.value < sp.hi and sp.measurable
    assert step_table(steps).rows[2][6] == f"{sp.value:.2f}× ({sp.lo:.2f}–{sp.hi:.2f})"


# --- short measurements and hardware notes --------------------------------------------------------------------------


def test_a_short_measurement_is_marked_in_every_table():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:4], short={2})
    steps = chain(docs)
    noise = docs[2]["summary"]["step_ms"]["noise"]
    assert noise > 0.03  # three steps are less certain than --max-noise asked: the mark says both
    mark = f"short: n=3, noise {100 * noise:.{0 if noise >= 0.1 else 1}f}%, above --max-noise 3%"
    assert column(step_table(steps), "status")[2] == f"ok ({mark})"
    assert column(versus_table(align(steps, load_references()["raschka"], 0.02)), "row")[2] == f"tf32 ({mark})"
    assert any(n.startswith("short: the measured phase stopped at --max-time") for n in step_notes(steps))
    one = g.make_result(run_id=RUN, name="single/00_x", n=1, short=True)
    assert one["summary"]["step_ms"]["noise"] is None
    assert status_cell(Result(None, one)) == "ok (short: n=1, noise n/a)"


def test_a_row_the_gpu_throttled_during_is_marked_and_explained():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:4])
    docs[1]["gpu_state"] = {
        "status": "recorded",
        "reason": None,
        "throttled": True,
        "throttle_reasons": ["sw_power_cap"],
    }
    docs[2]["gpu_state"] = {"status": "recorded", "reason": None, "throttled": False, "throttle_reasons": []}
    docs[3]["gpu_state"] = {"status": "not recorded", "reason": "not a CUDA device"}
    steps = chain(docs)
    status = column(step_table(steps), "status")
    assert status[1] == "ok (throttled: sw_power_cap)"
    assert status[0] == status[2] == status[3] == "ok", "not throttled, or nothing recorded: no mark"
    assert any(n.startswith("throttled: the GPU held its clocks down") for n in step_notes(steps))
    assert not any(n.startswith("throttled") for n in step_notes(chain(g.cumulative(RUN, "raschka", g.RASCHKA[:4]))))


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
    steps = chain(docs)
    status = column(step_table(steps), "status")
    assert status[3] == f"ok ({NOISY_MARK})"
    assert status[:3] + status[4:] == ["ok"] * 4  # within their --max-noise: no mark
    assert (
        column(versus_table(align(steps, load_references()["raschka"], 0.02)), "row")[3]
        == f"fused AdamW ({NOISY_MARK})"
    )
    notes = step_notes(steps)
    assert any(n.startswith("noisy: the median's 95% confidence interval is wider than the --max-noise") for n in notes)
    assert not any(n.startswith("short:") for n in notes)
    # The quiet steps alone carry neither mark nor note.
    assert not any(n.startswith("noisy:") for n in step_notes(steps[:3]))


def test_bf16_on_a_cpu_that_emulates_it_gets_the_hardware_note():
    cpu = dict(device_kind="cpu", device_name="Test CPU", mfu=None)
    notes = " ".join(step_notes(chain(g.cumulative(RUN, "raschka", g.RASCHKA[:7], cpu_bf16_native=False, **cpu))))
    assert (
        "row 5 (bf16), row 6 (native layers): bf16 is emulated on this CPU (the CPU has no avx512_bf16 or "
        "amx_bf16): a slowdown here comes from the machine, not from a bug."
    ) in notes
    # The CPU has the instructions but ATen is capped below them: the engine's own reason, not the hardware's.
    capped = " ".join(
        step_notes(
            chain(
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
        assert "emulated" not in " ".join(step_notes(chain(g.cumulative(RUN, "raschka", g.RASCHKA[:7], **kw))))


# --- loss-check verdicts explained ----------------------------------------------------------------------------------


def test_the_loss_legend_explains_each_verdict_that_appears_and_each_rows_reason():
    docs = g.cumulative(
        RUN, "raschka", g.RASCHKA[:7], loss={2: "too short to judge", 3: "not comparable", 5: "math changed"}
    )
    notes = step_notes(chain(docs))
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
        "row 5 (bf16): math changed — the loss at the last shared step is 0.31 above the baseline's "
        "(tolerance 0.05, bf16)" in notes
    )
    assert "row 2 (tf32): too short to judge — only 3 steps shared with the baseline; the check needs 10" in notes
    assert not any(n.startswith("row 1 (dynamic mask): ok") for n in notes)  # ok rows need no reason
    no_base = g.cumulative(
        RUN, "raschka", g.RASCHKA[:3], loss={1: "no baseline", 2: "no baseline"}, fail={0: "out of memory"}
    )
    assert any(n.startswith("loss check — no baseline: the baseline did not run") for n in step_notes(chain(no_base)))


def test_results_with_the_old_loss_check_shape_still_read():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:6], loss={5: "math changed"}, loss_shape="old")
    steps = chain(docs)
    assert column(step_table(steps), "loss check")[5] == "math changed (+8.0%)"
    notes = step_notes(steps)
    assert "row 5 (bf16): math changed — window mean loss differs from the baseline's by +8.0% (tolerance 2%)" in notes
    assert (
        "loss check — ok: the loss drop and the loss at the last shared step agree with the baseline within "
        "the tolerance" in notes
    )
