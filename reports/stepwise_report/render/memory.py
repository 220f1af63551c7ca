"""What the memory flags buy (checkpoint, chunked_ce, and the larger batch max_batch finds with them): a table per
suite and the one picture a user would rather look at than read, tokens/s against peak memory with the Pareto front.

The step table already shows peak reserved memory and tok/s; it cannot show what a user choosing a memory flag needs
side by side: the tensors' peak, the activation memory the flag frees (measured, and the model's own estimate beside
it), the largest batch the probe found with it, the tokens/s at that batch over the baseline (with its interval), HFU
beside MFU (recompute is work the model's FLOPs do not count), and which configurations nothing else beats on both
speed and memory. Every figure is read from the result's `summary.memory`, `summary.mfu` and `max_batch_probe`
(results/README.md); the Pareto front is the one quantity computed here.
"""

from __future__ import annotations

from ..analysis.analysis import SuiteRow
from .formats import DASH, GIB, MIB, Table, fmt_memory, fmt_percent, fmt_tokens
from .plots import MUTED, OURS, pyplot, thousands, titles
from .tables import measurement_notes, status_cell, x_baseline_cell

# The flags whose rows the section is for: what changes memory, and the batch that memory buys.
MEMORY_FLAGS = ("checkpoint", "chunked_ce", "max_batch")


def _memory(suite_row: SuiteRow) -> dict:
    return suite_row.result.summary.get("memory") or {}


def has_memory(suite_rows: list[SuiteRow]) -> bool:
    """The section applies: the suite is `memory` or one of its configurations runs a memory flag or max_batch, and
    its results carry the activation split (results written before it do not)."""
    ran = [s for s in suite_rows if s.ok]
    relevant = any(s.result.suite_name == "memory" or set(MEMORY_FLAGS) & set(s.result.flags_in_effect) for s in ran)
    return relevant and any("activation_bytes" in _memory(s) for s in ran)


def peak_key(suite_rows: list[SuiteRow]) -> str:
    """The peak the section compares: the tensors' own (peak_allocated_bytes) where every measured row has it; else
    peak reserved (the peak RSS on a CPU), as older CPU results only have that."""
    ran = [s for s in suite_rows if s.ok]
    return (
        "peak_allocated_bytes"
        if all(_memory(s).get("peak_allocated_bytes") is not None for s in ran)
        else ("peak_reserved_bytes")
    )


def _peak_name(suite_rows: list[SuiteRow], key: str) -> str:
    if key == "peak_allocated_bytes":
        return "peak allocated"
    return "peak RSS" if any(s.result.memory_kind == "process_rss" for s in suite_rows if s.ok) else "peak reserved"


def peak_bytes(suite_row: SuiteRow, key: str) -> int | None:
    return _memory(suite_row).get(key) if suite_row.ok else None


def pareto_front(points: list[tuple[float, float]]) -> list[bool]:
    """For each (tokens/s, peak bytes), whether it is on the Pareto front: no other point is at least as fast and
    at most as large with one of the two strictly better. Equal points do not dominate each other: both stay."""
    return [
        not any((t2 >= t1 and m2 <= m1) and (t2 > t1 or m2 < m1) for j, (t2, m2) in enumerate(points) if j != i)
        for i, (t1, m1) in enumerate(points)
    ]


def front_steps(suite_rows: list[SuiteRow], key: str) -> list[tuple[SuiteRow, bool]]:
    """The measured configurations with a peak, each with whether it is on the Pareto front."""
    shown = [s for s in suite_rows if s.ok and s.result.tokens_per_s and peak_bytes(s, key) is not None]
    flags = pareto_front([(s.result.tokens_per_s, peak_bytes(s, key)) for s in shown])
    return list(zip(shown, flags, strict=True))


def _largest_batch_cell(suite_row: SuiteRow) -> str:
    probe = suite_row.result.data.get("max_batch_probe")
    if not suite_row.ok or not probe:
        return DASH
    said = []
    if probe.get("stopped"):
        said.append("time cap")
    elif probe["chosen"] >= probe["limit"]:
        said.append("at its limit")
    estimate = probe.get("estimate") or {}
    if estimate.get("largest_batch") is not None:
        said.append(f"estimate {estimate['largest_batch']:,}")
    return f"{probe['chosen']}" + (f" ({'; '.join(said)})" if said else "")


def _mfu(suite_row: SuiteRow) -> dict:
    return suite_row.result.summary.get("mfu") or {}


def _shows_mfu(suite_rows: list[SuiteRow]) -> bool:
    return any(_mfu(s).get("value") is not None for s in suite_rows if s.ok)


def memory_table(suite_rows: list[SuiteRow]) -> Table:
    """Per configuration: the batch it ran at, its peak, its activation memory measured and estimated, the largest
    batch its probe found, tok/s at its batch, × baseline with the interval, MFU and HFU where known, and whether it
    is on the Pareto front of tok/s against peak memory."""
    key = peak_key(suite_rows)
    front = {id(s) for s, on in front_steps(suite_rows, key) if on}
    mfu = _shows_mfu(suite_rows)
    headers = ["#", "configuration", "status", "batch", _peak_name(suite_rows, key), "activations", "estimate"]
    headers += ["largest batch", "tok/s", "× baseline"] + (["MFU", "HFU"] if mfu else []) + ["Pareto front"]
    rows = []
    for s in suite_rows:
        m, r = _memory(s), s.result
        row = [str(s.index), s.label, status_cell(r), str(r.batch_size) if s.ok else DASH]
        activations = fmt_memory(m.get("activation_bytes") if s.ok else None)
        if s.ok and m.get("activation_basis") == "measured_peak":
            activations += " †"  # a captured step's: the whole phase's peak, not comparable (memory_notes)
        row += [fmt_memory(peak_bytes(s, key)), activations]
        row += [fmt_memory(m.get("estimated_activation_bytes") if s.ok else None), _largest_batch_cell(s)]
        row += [fmt_tokens(r.tokens_per_s) if s.ok else DASH, x_baseline_cell(s) if s.ok else DASH]
        if mfu:
            row += [fmt_percent(_mfu(s).get("value") if s.ok else None)]
            row += [fmt_percent(_mfu(s).get("hfu") if s.ok else None)]
        row.append("●" if id(s) in front else "")
        rows.append(row)
    align = ["r", "l", "l", "r", "r", "r", "r", "r", "r", "r"] + (["r", "r"] if mfu else []) + ["l"]
    return Table(headers, rows, caption="memory: what each configuration holds and the batch it buys", align=align)


def memory_notes(suite_rows: list[SuiteRow]) -> list[str]:
    key = peak_key(suite_rows)
    ran = [s for s in suite_rows if s.ok]
    if key == "peak_allocated_bytes":
        peak = (
            "peak allocated: the tensors' own peak over the measured steps (CUDA's caching allocator; on a CPU a "
            "counting allocator, since the RSS keeps freed memory and earlier rows' too); the step table's peak "
            "reserved is beside it."
        )
    else:
        peak = f"{_peak_name(suite_rows, key)}: these results carry no tensor peak, so the process's peak is compared."
    notes = [
        peak,
        "activations: the peak inside forward and backward minus weights, gradients and AdamW state (a lower bound: "
        "gradients are freed between steps); estimate: batch × the model's activation bytes per sequence "
        "(GPTConfig), what autograd keeps op by op.",
        "largest batch: the max_batch probe's choice (powers of two from the base batch, up to --max-batch-limit), "
        "with the largest batch the activation estimate says fits in the device's memory; 'at its limit' or "
        "'time cap': the probe stopped there, so the true largest is at least that. tok/s is at the row's batch.",
        "× baseline: tokens/s over the suite's first configuration with its 95% interval, as in the table above "
        "(a different batch compares fairly: it is a ratio of tokens/s); 'no measurable change' when it contains 1.",
        "Pareto front (●): no other configuration is both at least as fast and at most as large, and better on one "
        "of the two; judged on the medians, not their intervals.",
    ]
    if any(_memory(s).get("activation_basis") == "measured_peak" for s in ran):
        notes.append(
            "†: a CUDA-graph (compile) row, whose activations live in the graph's pool: its figure is the whole "
            "measured phase's peak less weights, gradients and AdamW state, optimizer temporaries included, so it "
            "is not comparable with the other rows' forward-and-backward figure."
        )
    if _shows_mfu(suite_rows):
        notes.append(
            "HFU counts the FLOPs the hardware ran, full checkpoint's recomputed forward included, against the same "
            "peak as MFU (the model's FLOPs only): HFU above MFU is recompute."
        )
    else:
        reasons = sorted({_mfu(s).get("reason") for s in ran if _mfu(s).get("reason")})
        notes += [f"MFU and HFU not given: {reason}" for reason in reasons]
    for s in ran:
        probe = s.result.data.get("max_batch_probe") or {}
        if probe.get("stopped"):
            notes.append(f"row {s.index} ({s.label}): the probe stopped: {probe['stopped']}.")
    return notes + measurement_notes([s.result for s in suite_rows])


def pareto_figure(suite_rows: list[SuiteRow], title: str, subtitle: str):
    """Tokens/s against peak memory, one labelled point per configuration; the Pareto front marked and connected
    in order of memory, the dominated points muted."""
    key = peak_key(suite_rows)
    points = front_steps(suite_rows, key)
    scale, unit = (GIB, "GiB") if any(peak_bytes(s, key) >= GIB for s, _ in points) else (MIB, "MiB")
    fig, ax = pyplot().subplots(figsize=(7.5, 4.6))
    front = sorted(((peak_bytes(s, key) / scale, s.result.tokens_per_s) for s, on in points if on))
    if front:
        ax.plot(*zip(*front), color=OURS, linewidth=1.2, zorder=2, label="Pareto front (nothing faster and smaller)")
    for s, on in points:
        x, y = peak_bytes(s, key) / scale, s.result.tokens_per_s
        ax.scatter([x], [y], s=46 if on else 30, color=OURS if on else MUTED, zorder=3, edgecolors="white")
        ax.annotate(
            f"{s.index} {s.label}",
            (x, y),
            textcoords="offset points",
            xytext=(5, 4 if s.index % 2 == 0 else -10),  # neighbours' labels above and below their points
            fontsize=7,
            color="#222222" if on else MUTED,
        )
    if any(not on for _, on in points):
        ax.scatter([], [], s=30, color=MUTED, label="dominated")
    ax.set_xlabel(f"{_peak_name(suite_rows, key)} ({unit}, lower is better)")
    ax.set_ylabel("tokens/s (higher is better)")
    ax.yaxis.set_major_formatter(thousands())
    ax.grid(True, axis="both", alpha=0.3)
    ax.margins(x=0.15, y=0.15)
    ax.legend(frameon=False, fontsize=8, loc="best")
    titles(fig, ax, title, subtitle + " · one point per configuration, tok/s at its own batch")
    fig.tight_layout()
    return fig
