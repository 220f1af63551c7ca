"""A suite's tables: its steps, the published table beside them, ours versus published, and the kernel trace.

The step table decides what a row says (a skipped step's reason, a × previous that spans it, a speedup with its
interval, what a step changes by the flags in effect) and its notes say why (a step that also changes the optimizer,
an index-0 configuration that did not run, MFU not given). The published table shows only the columns its source has;
ours versus published sets each side's speedups over its own baseline, since the hardware differs.
"""

from __future__ import annotations

import re

from .analysis import SuiteRow, x_previous
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
from .reference import Alignment, Reference
from .results import Result
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


def _x_previous_cell(step: SuiteRow) -> str:
    cell = fmt_speedup(x_previous(step))
    return cell + " †" if step.spans else cell


def _position(step: SuiteRow) -> str:
    if step.result.suite_kind != "single":
        return str(step.index)
    # Lone configurations have no suite index; their file number (NN_) orders them instead.
    m = re.match(r"(\d+)_", step.result.name.rsplit("/", 1)[-1])
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


def step_table(steps: list[SuiteRow]) -> Table:
    """Our steps. Cumulative suites carry × previous; every suite carries × its index-0 configuration."""
    kind = steps[0].result.suite_kind if steps else "cumulative"
    cumulative = kind == "cumulative"
    vs = {"leave_one_out": "× all flags", "single": "× no flags"}.get(kind, "× baseline")
    change = {"leave_one_out": "removes", "single": "flags"}.get(kind, "adds")
    headers = ["#", "step", change, "status", "tok/s"]
    headers += ["× previous"] if cumulative else []
    headers += [vs, "ms/step median (p10–p90)", "peak reserved", "MFU", "loss check"]
    rows = []
    for s in steps:
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


def step_notes(steps: list[SuiteRow]) -> list[str]:
    notes = []
    if any(s.ok for s in steps):
        notes.append(SPEEDUP_NOTE)
    if steps and steps[0].result.suite_kind == "cumulative":
        notes.append(
            "× previous compares with the last step that ran (status ok) before this one; "
            "skipped and failed steps are shown but never used as a denominator."
        )
    for s in steps:
        if s.spans:
            notes.append(
                f"† step {s.index} ({s.label}): × previous is against step {s.previous.index} "
                f"({s.previous.label}), across {', '.join(s.spans)}, which did not run."
            )
    ran = [s for s in steps if s.ok and s.result.suite_kind == "cumulative"]
    for before, after in zip(ran, ran[1:]):
        was, now = before.result.optimizer, after.result.optimizer
        if was and now and was != now and "fused_adamw" not in after.result.added_in_effect:
            notes.append(
                f"step {after.index} ({after.label}) also changes the optimizer, {was} → {now}, "
                "so its gain includes that change."
            )
    if steps and steps[0].result.suite_kind != "single" and not steps[0].ok:
        notes.append(f"the suite's index-0 configuration is {steps[0].result.status}, so no × baseline exists.")
    notes += measurement_notes([s.result for s in steps])
    notes += hardware_notes([(f"step {s.index} ({s.label})", s.result) for s in steps])
    reasons = sorted({s.result.mfu_reason for s in steps if s.ok and s.result.mfu is None and s.result.mfu_reason})
    notes += [f"MFU not given: {reason}" for reason in reasons]
    if any(s.result.memory_kind == "process_rss" for s in steps if s.ok):
        notes.append("on CPU, peak reserved memory is the process's peak resident set size (RSS).")
    notes += loss_legend([(f"step {s.index} ({s.label})", s.result.loss_check) for s in steps if s.ok])
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
        "step",
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


# --- the kernel trace -----------------------------------------------------------------------------


def has_trace(steps: list[SuiteRow]) -> bool:
    return any(s.result.trace for s in steps)


def _memcpy_cell(memcpy: dict | None) -> str:
    if not memcpy or not memcpy.get("h2d_count"):
        return "none"
    parts = [f"{memcpy['h2d_count']} H2D", fmt_memory(memcpy.get("h2d_bytes"))]
    if memcpy.get("h2d_source"):
        parts.append(memcpy["h2d_source"])
    if memcpy.get("h2d_gbps") is not None:
        parts.append(f"{memcpy['h2d_gbps']:.1f} GB/s")
    return ", ".join(parts)


def trace_table(steps: list[SuiteRow]) -> Table:
    headers = [
        "#",
        "step",
        "kernels/step",
        "GPU busy",
        "kernel ms/step",
        "idle ms/step",
        "attention kernel",
        "memcpy",
        "top kernel",
    ]
    rows = []
    for s in steps:
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
