"""A suite's tables: its steps, the published table beside them, ours versus published, and the kernel trace.

The step table decides what a row says (a skipped step's reason, a × previous that spans it, a speedup with its
interval, what a step changes by the flags in effect) and its notes say why (a step that also changes the optimizer,
an index-0 configuration that did not run, MFU not given). The published table shows only the columns its source has;
ours versus published sets each side's speedups over its own baseline, since the hardware differs.
"""

from __future__ import annotations

import re

from ..analysis.analysis import SuiteRow, x_previous
from ..analysis.reference import Alignment, Reference
from ..read.results import Result
from .formats import (
    DASH,
    NO_INTERVAL,
    Table,
    fmt_flags,
    fmt_memory,
    fmt_ms,
    fmt_percent,
    fmt_ratio,
    fmt_speedup,
    fmt_tokens,
)
from .tables import (
    hardware_notes,
    loss_cell,
    loss_legend,
    measurement_notes,
    memory_cell,
    mfu_cell,
    ms_cell,
    status_cell,
    tokens_cell,
    with_mark,
    x_baseline_cell,
)

ARROW = {"up": "▲ faster", "down": "▼ slower", "flat": "= same"}


def _x_previous_cell(suite_row: SuiteRow) -> str:
    cell = fmt_speedup(x_previous(suite_row))
    return cell + " †" if suite_row.spans else cell


def _position(suite_row: SuiteRow) -> str:
    if suite_row.result.suite_kind != "single":
        return str(suite_row.index)
    # Lone configurations have no suite index; their file number (NN_) orders them instead.
    m = re.match(r"(\d+)_", suite_row.result.name.rsplit("/", 1)[-1])
    return str(int(m.group(1))) if m else DASH


def _change_cell(r: Result, kind: str) -> str:
    """What a step changes, by the flags in effect: a flag this device skipped (`config.flags_skipped`) is named
    apart, since it changed nothing here."""
    if kind == "leave_one_out":
        return fmt_flags(r.removed)
    if kind == "single":
        return fmt_flags(r.flags_in_effect)
    skipped = [f for f in r.added if f in r.flags_skipped]
    if not skipped or not r.ok:
        return fmt_flags(r.added if not r.ok else r.added_in_effect)
    cell = fmt_flags(r.added_in_effect) if r.added_in_effect else "nothing"
    return f"{cell} ({', '.join(skipped)} skipped on this device)"


def step_table(suite_rows: list[SuiteRow]) -> Table:
    """Our steps. Cumulative suites carry × previous; every suite carries × its index-0 configuration."""
    kind = suite_rows[0].result.suite_kind if suite_rows else "cumulative"
    cumulative = kind == "cumulative"
    vs = {"leave_one_out": "× all flags", "single": "× no flags"}.get(kind, "× baseline")
    change = {"leave_one_out": "removes", "single": "flags"}.get(kind, "adds")
    headers = ["#", "row", change, "status", "tok/s"]
    headers += ["× previous"] if cumulative else []
    headers += [vs, "ms/step median (p10–p90)", "peak reserved", "MFU", "loss check"]
    rows = []
    for s in suite_rows:
        r = s.result
        row = [_position(s), s.label, _change_cell(r, kind), status_cell(r), tokens_cell(r)]
        row += [_x_previous_cell(s)] if cumulative else []
        row += [x_baseline_cell(s), ms_cell(r), memory_cell(r), mfu_cell(r), loss_cell(r)]
        rows.append(row)
    align = ["r", "l", "l", "l", "r"] + (["r"] if cumulative else []) + ["r", "r", "r", "r", "l"]
    return Table(headers, rows, align=align, css_class="steps")


SPEEDUP_NOTE = (
    "× previous and × baseline: the ratio of median step times (times the tokens-per-step ratio "
    "where the batch differs) with its 95% interval, from the same bootstrap as ./report compare; a "
    "speedup whose interval contains 1.00 is no measurable change, not a gain."
)


def step_notes(suite_rows: list[SuiteRow]) -> list[str]:
    notes = []
    if any(s.ok for s in suite_rows):
        notes.append(SPEEDUP_NOTE)
    if suite_rows and suite_rows[0].result.suite_kind == "cumulative":
        notes.append(
            "× previous compares with the last step that ran (status ok) before this one; "
            "skipped and failed steps are shown but never used as a denominator."
        )
    for s in suite_rows:
        if s.spans:
            notes.append(
                f"† row {s.index} ({s.label}): × previous is against row {s.previous.index} "
                f"({s.previous.label}), across {', '.join(s.spans)}, which did not run."
            )
    ran = [s for s in suite_rows if s.ok and s.result.suite_kind == "cumulative"]
    for before, after in zip(ran, ran[1:]):
        was, now = before.result.optimizer, after.result.optimizer
        if was and now and was != now and "fused_adamw" not in after.result.added_in_effect:
            notes.append(
                f"row {after.index} ({after.label}) also changes the optimizer, {was} → {now}, "
                "so its gain includes that change."
            )
    if suite_rows and suite_rows[0].result.suite_kind != "single" and not suite_rows[0].ok:
        notes.append(f"the suite's index-0 configuration is {suite_rows[0].result.status}, so no × baseline exists.")
    notes += measurement_notes([s.result for s in suite_rows])
    notes += hardware_notes([(f"row {s.index} ({s.label})", s.result) for s in suite_rows])
    reasons = sorted({s.result.mfu_reason for s in suite_rows if s.ok and s.result.mfu is None and s.result.mfu_reason})
    notes += [f"MFU not given: {reason}" for reason in reasons]
    if any(s.result.memory_kind == "process_rss" for s in suite_rows if s.ok):
        notes.append("on CPU, peak reserved memory is the process's peak resident set size (RSS).")
    notes += loss_legend([(f"row {s.index} ({s.label})", s.result.loss_check) for s in suite_rows if s.ok])
    return notes


def published_table(ref: Reference) -> Table:
    """The published figures, with only the columns the source has."""
    headers = ["#", "published step", "adds"]
    align = ["r", "l", "l"]
    has_commit, has_metric = ref.has("commit"), ref.has("metric")
    has_ms, has_mem = ref.has("ms_per_step"), ref.has("reserved_gib")
    derived = not ref.has("tokens_per_s")
    headers += ["commit"] * has_commit + ["metric"] * has_metric
    align += ["l"] * (has_commit + has_metric)
    headers += ["tok/s (derived)" if derived else "tok/s", "× previous", "× baseline"]
    align += ["r", "r", "r"]
    if has_ms:
        headers.append("ms/step")
        align.append("r")
    if has_mem:
        headers.append("reserved (GiB)")
        align.append("r")
    rows = []
    for row in ref.rows:
        cells = [str(row.step), row.label, fmt_flags(list(row.added)) if not row.baseline else "(baseline)"]
        cells += [row.commit or DASH] * has_commit + [row.metric or DASH] * has_metric
        cells += [fmt_tokens(row.throughput), fmt_ratio(ref.x_previous(row)), fmt_ratio(ref.x_baseline(row))]
        if has_ms:
            # As published: no digits the source did not print.
            cells.append(("~" if row.approx else "") + (f"{row.ms_per_step:g}" if row.ms_per_step else DASH))
        if has_mem:
            cells.append(f"{row.reserved_gib:.2f}" if row.reserved_gib is not None else DASH)
        rows.append(cells)
    return Table(headers, rows, align=align, css_class="published")


def _direction_cell(a: Alignment) -> str:
    if a.published_direction is not None and a.ours_direction is None and a.ours_x_previous is not None:
        return f"? ({NO_INTERVAL}) / {ARROW[a.published_direction]}"
    if a.published_direction is None or a.ours_direction is None:
        return DASH
    cell = f"{ARROW[a.ours_direction]} / {ARROW[a.published_direction]}"
    return cell + " ⚠ differs" if a.differs else cell


def versus_table(alignments: list[Alignment]) -> Table:
    """Ours beside published, both as speedups over their own baseline, since the hardware differs."""
    headers = [
        "#",
        "row",
        "published step",
        "ours × previous",
        "published, same span",
        "ours × baseline",
        "published × baseline",
        "direction (ours / published)",
    ]
    rows, marked = [], set()
    for n, a in enumerate(alignments):
        s = a.step
        rows.append(
            [
                str(s.index),
                with_mark(s.label, s.result),
                a.row.label if a.row else "(not published)",
                _x_previous_cell(s),
                fmt_ratio(a.published_x_previous),
                x_baseline_cell(s),
                fmt_ratio(a.published_x_baseline),
                _direction_cell(a),
            ]
        )
        if a.differs:
            marked.add(n)
    return Table(headers, rows, align=["r", "l", "l", "r", "r", "r", "r", "l"], marked=marked, css_class="versus")


# --- where the step goes --------------------------------------------------------------------------

# The phases in the order a step runs them (bench/phases.h's kPhaseNames), as the table's columns.
PHASE_ORDER = ("batch", "forward", "backward", "forward_backward", "comm", "optimizer")
PHASE_HEADERS = {"forward_backward": "fwd+bwd"}


def _phases(r: Result) -> dict | None:
    section = r.data.get("phases")
    return section if r.ok and isinstance(section, dict) and section.get("phases") else None


def has_phases(suite_rows: list[SuiteRow]) -> bool:
    return any(_phases(s.result) for s in suite_rows)


def phase_table(suite_rows: list[SuiteRow]) -> Table:
    """Each phase's median ms with its share of the median step, a row per configuration that marked its phases."""
    marked = [(s, {p["name"]: p for p in _phases(s.result)["phases"]}) for s in suite_rows if _phases(s.result)]
    present = [name for name in PHASE_ORDER if any(name in by_name for _, by_name in marked)]
    headers = ["#", "row"] + [PHASE_HEADERS.get(n, n) for n in present] + ["ms/step"]
    rows = []
    for s, by_name in marked:
        cells = [_position(s), s.label]
        for name in present:
            p = by_name.get(name)
            share = p.get("share") if p else None
            cells.append(DASH if p is None else fmt_ms(p["median_ms"]) + ("" if share is None else f" ({share:.0%})"))
        cells.append(fmt_ms(_phases(s.result).get("step_median_ms")))
        rows.append(cells)
    return Table(headers, rows, align=["r", "l"] + ["r"] * (len(present) + 1), css_class="phases")


def phase_notes(suite_rows: list[SuiteRow]) -> list[str]:
    notes = [
        "where the step goes: each phase's median ms (its share of the median step); medians do not add up to "
        "the step's."
    ]
    if any("forward_backward" in {p["name"] for p in (_phases(s.result) or {}).get("phases", [])} for s in suite_rows):
        notes.append("fwd+bwd: compile replays forward and backward as one CUDA graph, marked as one phase.")
    notes += sorted({n for s in suite_rows if _phases(s.result) and (n := s.result.phase_note)})
    return notes


# --- the kernel trace -----------------------------------------------------------------------------


def has_trace(suite_rows: list[SuiteRow]) -> bool:
    return any(s.result.trace for s in suite_rows)


def _memcpy_cell(memcpy: dict | None) -> str:
    if not memcpy or not memcpy.get("h2d_count"):
        return "none"
    parts = [f"{memcpy['h2d_count']} H2D", fmt_memory(memcpy.get("h2d_bytes"))]
    if memcpy.get("h2d_source"):
        parts.append(memcpy["h2d_source"])
    if memcpy.get("h2d_gbps") is not None:
        parts.append(f"{memcpy['h2d_gbps']:.1f} GB/s")
    return ", ".join(parts)


def trace_table(suite_rows: list[SuiteRow]) -> Table:
    headers = [
        "#",
        "row",
        "kernels/step",
        "GPU busy",
        "kernel ms/step",
        "idle ms/step",
        "attention kernel",
        "memcpy",
        "top kernel",
    ]
    rows = []
    for s in suite_rows:
        t = s.result.trace
        head = [str(s.index), with_mark(s.label, s.result)]
        if not t:
            rows.append(head + ["not traced"] + [DASH] * 6)
        elif t.get("status") != "ok":
            rows.append(head + [f"trace unavailable: {t.get('reason') or 'no reason given'}"] + [DASH] * 6)
        else:
            top = (t.get("top_kernels") or [{}])[0]
            top_cell = f"{top['name']} ({fmt_ms(top.get('total_ms'))} ms)" if top.get("name") else DASH
            rows.append(
                head
                + [
                    f"{t['kernels_per_step']:.0f}" if t.get("kernels_per_step") is not None else DASH,
                    fmt_percent(t.get("busy_fraction")),
                    fmt_ms(t.get("kernel_ms_per_step")),
                    fmt_ms(t.get("idle_ms_per_step")),
                    t.get("attention_kernel") or DASH,
                    _memcpy_cell(t.get("memcpy")),
                    top_cell,
                ]
            )
    return Table(headers, rows, align=["r", "l", "r", "r", "r", "r", "l", "l", "l"], css_class="trace")
