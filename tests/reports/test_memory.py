"""memory.py: the memory table (peak, activations measured and estimated, largest batch, tok/s at it, × baseline with
its interval, HFU beside MFU), the Pareto front of tokens/s against peak memory, and the section the report gives a
suite with memory flags or max_batch whose results carry the activation split (and only those)."""

import resultgen as g
from conftest import chain, column
from stepwise_report.analysis.analysis import x_baseline
from stepwise_report.cli import main as report_main
from stepwise_report.render.formats import fmt_speedup
from stepwise_report.render.memory import (
    front_steps,
    has_memory,
    memory_notes,
    memory_table,
    pareto_figure,
    pareto_front,
)

RUN = "20260301T120000Z_gpt2-124m_h100"
MIB = 2**20
FLAGS_INFO = g.FLAGS_INFO + [
    {"name": "checkpoint", "summary": "recompute activations in the backward", "applies": "cpu+cuda"},
    {"name": "chunked_ce", "summary": "output head and cross-entropy in chunks", "applies": "cpu+cuda"},
]
STATE = 3 * 500 * MIB  # weights, gradients, AdamW's two moments: 500 MiB each (the moments 2 × 500 MiB below)

# (label, flags, median ms, batch, activation MiB, estimated MiB, probe's chosen batch or None, mfu, hfu)
MEMORY = [
    ("baseline", [], 100.0, 16, 6000, 6400, None, 0.30, 0.30),
    ("checkpoint", ["checkpoint"], 130.0, 16, 1000, 1100, None, 0.23, 0.31),
    ("chunked CE", ["chunked_ce"], 105.0, 16, 3000, 3100, None, 0.29, 0.29),
    ("largest batch", ["max_batch"], 190.0, 32, 12000, 12800, 32, 0.32, 0.32),
    ("checkpoint, largest batch", ["checkpoint", "max_batch"], 1040.0, 128, 8000, 8800, 128, 0.23, 0.31),
]


def probe(base: int, chosen: int, limit: int = 1024, stopped: str | None = None) -> dict:
    return {
        "base": base,
        "limit": limit,
        "time_cap_s": 30.0,
        "tried": [{"batch": b, "fit": True, "error": None} for b in (16, 32, 64, 128) if b <= chosen],
        "chosen": chosen,
        "stopped": stopped,
        "estimate": {
            "activation_bytes_per_sequence": 400 * MIB,
            "state_bytes": STATE,
            "memory_bytes": 80 * 2**30,
            "largest_batch": 2 * chosen + 3,
            "largest_power_of_two": min(2 * chosen, limit),
            "chosen_vs_estimate": chosen / min(2 * chosen, limit),
        },
    }


def memory_docs(device_kind: str = "cuda", split: bool = True) -> list[dict]:
    docs = []
    for i, (label, flags, ms, batch, act, est, chosen, mfu, hfu) in enumerate(MEMORY):
        peak = STATE + 500 * MIB + act * MIB  # the state, plus a gradient's worth, plus the activations
        docs.append(
            g.make_result(
                run_id=RUN,
                name=f"memory/{i:02d}_{label.replace(' ', '_').replace(',', '')}",
                suite=g.suite_info("memory", "matrix", i, len(MEMORY), label, flags),
                flags=flags,
                flags_info=FLAGS_INFO,
                median_ms=ms,
                seed=300 + i,
                batch=batch,
                base_batch=16,
                peak_gib=peak / 2**30,
                mfu=mfu if device_kind == "cuda" else None,
                hfu=hfu if device_kind == "cuda" and split else None,
                hardware_flops_per_token=(1.33e9 if "checkpoint" in flags else 1e9) if split else None,
                device_kind=device_kind,
                device_name=g.H100 if device_kind == "cuda" else "Test CPU",
                loss_status="baseline" if i == 0 else ("not comparable" if chosen else "ok"),
                memory=(
                    {
                        "peak_allocated_bytes": peak,
                        "forward_backward_peak_bytes": peak,
                        "weights_bytes": 500 * MIB,
                        "gradients_bytes": 500 * MIB,
                        "optimizer_state_bytes": 1000 * MIB,
                        "activation_bytes": act * MIB,
                        "estimated_activation_bytes": float(est * MIB),
                    }
                    if split
                    else None
                ),
                max_batch_probe=probe(16, chosen) if chosen else None,
            )
        )
    return docs


def test_the_table_gives_peak_activations_largest_batch_and_the_speedup_with_its_interval():
    steps = chain(memory_docs())
    assert has_memory(steps)
    table = memory_table(steps)
    assert column(table, "batch") == ["16", "16", "16", "32", "128"]
    assert column(table, "peak allocated") == ["7.81 GiB", "2.93 GiB", "4.88 GiB", "13.67 GiB", "9.77 GiB"]
    assert column(table, "activations") == ["5.86 GiB", "1000 MiB", "2.93 GiB", "11.72 GiB", "7.81 GiB"]
    assert column(table, "estimate") == ["6.25 GiB", "1.07 GiB", "3.03 GiB", "12.50 GiB", "8.59 GiB"]
    assert column(table, "largest batch") == ["—", "—", "—", "32 (estimate 67)", "128 (estimate 259)"]
    tok = column(table, "tok/s")
    assert tok[0] == f"{16 * 64 * 1000 / steps[0].result.median_ms:,.0f}"
    # The speedup with its interval, from the same bootstrap and in the same words as the step table.
    assert column(table, "× baseline") == [
        "1.00×",
        "0.77× (0.76–0.78)",
        "0.95× (0.94–0.96)",
        "1.05× (1.04–1.07)",
        "0.77× (0.76–0.78)",
    ]
    assert column(table, "× baseline")[1:] == [fmt_speedup(x_baseline(s)) for s in steps[1:]]
    assert column(table, "MFU") == ["30.0%", "23.0%", "29.0%", "32.0%", "23.0%"]
    assert column(table, "HFU") == ["30.0%", "31.0%", "29.0%", "32.0%", "31.0%"], "HFU beside MFU: recompute"


def as_fast_as_the_baseline(docs: list[dict]) -> list[dict]:
    """The chunked row with the baseline's step times: no change in speed, less memory."""
    docs[2] = g.make_result(**{**_args(docs[2]), "samples": [s["ms"] for s in docs[0]["steps"]]})
    return docs


def test_no_change_reads_as_no_change_and_a_probe_at_its_limit_or_time_cap_says_so():
    docs = as_fast_as_the_baseline(memory_docs())
    docs[3]["max_batch_probe"] = probe(16, 32, limit=32)
    docs[4]["max_batch_probe"] = probe(16, 128, stopped="--max-batch-time (30 s) reached after batch 128")
    steps = chain(docs)
    table = memory_table(steps)
    assert column(table, "× baseline")[2] == "1.00× (0.99–1.01): no measurable change"
    assert column(table, "largest batch")[3:] == ["32 (at its limit; estimate 67)", "128 (time cap; estimate 259)"]
    notes = memory_notes(steps)
    assert any("row 4 (checkpoint, largest batch): the probe stopped: --max-batch-time (30 s)" in n for n in notes)


def _args(doc: dict) -> dict:
    """make_result's arguments that rebuild `doc` (the ones this file's docs use)."""
    c, s = doc["config"], doc["summary"]
    return dict(
        run_id=doc["run_id"],
        name=doc["name"],
        suite=doc["suite"],
        flags=c["flags_requested"],
        flags_info=FLAGS_INFO,
        batch=c["batch_size"],
        base_batch=c["base_batch_size"],
        peak_gib=s["memory"]["peak_reserved_bytes"] / 2**30,
        mfu=s["mfu"]["value"],
        hfu=s["mfu"].get("hfu"),
        hardware_flops_per_token=s["mfu"].get("hardware_flops_per_token"),
        memory={k: v for k, v in s["memory"].items() if k.endswith("_bytes") and k != "peak_reserved_bytes"},
        max_batch_probe=doc["max_batch_probe"],
        loss_status=s["loss"]["check"]["status"],
    )


def test_the_pareto_front_keeps_what_nothing_beats_on_both_and_keeps_ties():
    # (tokens/s, peak bytes)
    points = [
        (100.0, 10.0),  # 0: fast and large: on the front
        (80.0, 5.0),  # 1: slower and smaller: on the front
        (70.0, 6.0),  # 2: dominated by 1 (slower and larger)
        (80.0, 7.0),  # 3: as fast as 1 but larger: dominated (equal on one, worse on the other)
        (60.0, 5.0),  # 4: as small as 1 but slower: dominated
        (50.0, 2.0),  # 5: the smallest: on the front
        (50.0, 2.0),  # 6: the same point as 5: neither dominates the other, both stay
        (100.0, 10.0),  # 7: the same as 0: both stay
        (120.0, 30.0),  # 8: the fastest: on the front, however large
    ]
    assert pareto_front(points) == [True, True, False, False, False, True, True, True, True]
    assert pareto_front([]) == [] and pareto_front([(1.0, 1.0)]) == [True]


def test_the_front_of_a_suite_and_its_figure_mark_and_connect_it():
    steps = chain(memory_docs())
    on = [s.index for s, front in front_steps(steps, "peak_allocated_bytes") if front]
    # The chunked row is slower than the baseline but smaller; checkpoint smaller still; largest batch the fastest;
    # checkpoint at 128 is slower than largest batch at 32 yet smaller, and faster than the baseline yet larger.
    tok = {s.index: s.result.tokens_per_s for s in steps}
    assert tok[3] > tok[0] > tok[2] > tok[1] > tok[4], tok
    assert on == [0, 1, 2, 3], "checkpoint at 128 is slower and larger than checkpoint at 16"
    fig = pareto_figure(steps, "t", "s")
    ax = fig.axes[0]
    line = ax.get_lines()[0]
    assert len(line.get_xdata()) == len(on), "the front is one line through its points"
    assert list(line.get_xdata()) == sorted(line.get_xdata()), "connected in order of memory"
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted(f"{s.index} {s.label}" for s in steps), "every configuration labelled"
    table = memory_table(steps)
    assert [i for i, c in enumerate(column(table, "Pareto front")) if c == "●"] == on


def test_a_configuration_as_fast_and_larger_is_off_the_front():
    # The chunked row runs the baseline's very steps in less memory: the baseline, equal in speed, is dominated.
    steps = chain(as_fast_as_the_baseline(memory_docs()))
    assert steps[0].result.tokens_per_s == steps[2].result.tokens_per_s
    front = {s.index: f for s, f in front_steps(steps, "peak_allocated_bytes")}
    assert front == {0: False, 1: True, 2: True, 3: True, 4: False}
    assert column(memory_table(steps), "Pareto front") == ["", "●", "●", "●", ""]


def test_results_without_the_split_or_without_memory_flags_have_no_section(tmp_path):
    assert not has_memory(chain(memory_docs(split=False))), "results written before the activation split"
    plain = g.one_at_a_time(RUN, {"flash": 1.5, "bf16": 2.0})
    for doc in plain:  # every result carries the split now: the section is still for memory flags only
        doc["summary"]["memory"].update(activation_bytes=MIB, estimated_activation_bytes=float(MIB))
    assert not has_memory(chain(plain)), "no memory flag and not the memory suite"
    with_batch = g.one_at_a_time(RUN, {"flash": 1.5, "max_batch": 2.0})
    with_batch[2]["summary"]["memory"].update(activation_bytes=MIB)
    assert has_memory(chain(with_batch)), "max_batch in any suite"
    for doc in memory_docs(split=False) + plain:
        g.write(tmp_path / "r", doc)
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "peak memory, activations and largest batch" not in md and "_pareto.png" not in md


def test_a_cpu_run_has_no_mfu_columns_and_says_why():
    steps = chain(memory_docs(device_kind="cpu"))
    table = memory_table(steps)
    assert "MFU" not in table.headers and "HFU" not in table.headers
    assert "peak allocated" in table.headers, "the tensors' peak, not the RSS, where the results have it"
    assert any(n.startswith("MFU and HFU not given: ") for n in memory_notes(steps))


def test_the_report_shows_the_section_with_its_figure(tmp_path):
    for doc in memory_docs():
        g.write(tmp_path / "r", doc)
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "### memory: memory flags and the batch they buy" in md
    assert "#### memory: peak memory, activations and largest batch" in md
    assert "| 4 | checkpoint, largest batch | ok | 128 | 9.77 GiB | 7.81 GiB | 8.59 GiB | 128 (estimate 259) |" in md
    assert f"plots/{RUN}/memory_pareto.png" in md
    assert (tmp_path / "out" / "plots" / RUN / "memory_pareto.svg").exists()
    assert "memory: tokens/s against peak memory" in (tmp_path / "out" / "dashboard.html").read_text()


def test_results_without_the_tensors_peak_compare_the_process_peak():
    docs = memory_docs(device_kind="cpu")
    for doc in docs:
        doc["summary"]["memory"]["peak_allocated_bytes"] = None
    steps = chain(docs)
    table = memory_table(steps)
    assert "peak RSS" in table.headers and "peak allocated" not in table.headers
    assert column(table, "peak RSS")[0] == "7.81 GiB"
    assert memory_notes(steps)[0].startswith("peak RSS: these results carry no tensor peak")


def test_a_captured_rows_activations_are_marked_not_comparable():
    # compile's CUDA-graph step keeps its activations in the graph's pool: its figure is the whole phase's peak.
    docs = memory_docs()
    docs[2]["summary"]["memory"]["activation_basis"] = "measured_peak"
    for i in (0, 1, 3, 4):
        docs[i]["summary"]["memory"]["activation_basis"] = "forward_backward"
    steps = chain(docs)
    assert column(memory_table(steps), "activations") == ["5.86 GiB", "1000 MiB", "2.93 GiB †", "11.72 GiB", "7.81 GiB"]
    assert any(n.startswith("†: a CUDA-graph (compile) row") for n in memory_notes(steps))
    assert not any(n.startswith("†") for n in memory_notes(chain(memory_docs()))), "no captured row, no note"
