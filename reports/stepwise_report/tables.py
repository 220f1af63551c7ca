"""Builds the report's tables (our steps, the published ones, ours versus published, kernel traces)."""

from __future__ import annotations

import re

from . import fmt
from .results import Result, Step
from .reference import Alignment, Reference
from .table import Table

ARROW = {"up": "▲ faster", "down": "▼ slower", "flat": "= same"}


def status_cell(r: Result) -> str:
    if r.status == "ok":
        return "ok"
    return f"{r.status}: {r.reason}" if r.reason else r.status


def tokens_cell(r: Result) -> str:
    if not r.ok:
        return fmt.DASH
    cell = fmt.tokens(r.tokens_per_s)
    if r.world_size > 1:
        cell += f" ({r.world_size} ranks, global)"
    return cell


def ms_cell(r: Result) -> str:
    s = r.step_ms
    return fmt.ms_spread(s.get("median"), s.get("p10"), s.get("p90")) if r.ok else fmt.DASH


def memory_cell(r: Result) -> str:
    if not r.ok:
        return fmt.DASH
    cell = fmt.memory(r.peak_reserved_bytes)
    return f"{cell} (RSS)" if r.memory_kind == "process_rss" and r.peak_reserved_bytes is not None else cell


def mfu_cell(r: Result) -> str:
    return fmt.percent(r.mfu) if r.ok else fmt.DASH


def loss_cell(r: Result) -> str:
    if not r.ok:
        return fmt.DASH
    check = r.loss_check
    status = check.get("status") or fmt.DASH
    if status == "math changed" and check.get("rel_diff") is not None:
        return f"{status} ({fmt.signed_percent(check['rel_diff'])})"
    return status


def _x_previous_cell(step: Step) -> str:
    cell = fmt.ratio(step.x_previous)
    return cell + " †" if step.spans else cell


def _position(step: Step) -> str:
    if step.result.suite_kind != "single":
        return str(step.index)
    # Lone configurations have no suite index; their file number (NN_) orders them instead.
    m = re.match(r"(\d+)_", step.result.name.rsplit("/", 1)[-1])
    return str(int(m.group(1))) if m else fmt.DASH


def step_table(steps: list[Step]) -> Table:
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
        what = r.removed if kind == "leave_one_out" else (r.flags if kind == "single" else r.added)
        row = [_position(s), s.label, fmt.flags(what), status_cell(r), tokens_cell(r)]
        row += [_x_previous_cell(s)] if cumulative else []
        row += [fmt.ratio(s.x_baseline), ms_cell(r), memory_cell(r), mfu_cell(r), loss_cell(r)]
        rows.append(row)
    align = ["r", "l", "l", "l", "r"] + (["r"] if cumulative else []) + ["r", "r", "r", "r", "l"]
    return Table(headers, rows, align=align, css_class="steps")


def step_notes(steps: list[Step]) -> list[str]:
    notes = []
    if steps and steps[0].result.suite_kind == "cumulative":
        notes.append("× previous compares with the last step that ran (status ok) before this one; "
                     "skipped and failed steps are shown but never used as a denominator.")
    for s in steps:
        if s.spans:
            notes.append(f"† step {s.index} ({s.label}): × previous is against step {s.previous.index} "
                         f"({s.previous.label}), across {', '.join(s.spans)}, which did not run.")
    ran = [s for s in steps if s.ok and s.result.suite_kind == "cumulative"]
    for before, after in zip(ran, ran[1:]):
        was, now = before.result.config.get("optimizer"), after.result.config.get("optimizer")
        if was and now and was != now and "fused_adamw" not in after.result.added:
            notes.append(f"step {after.index} ({after.label}) also changes the optimizer, {was} → {now}: "
                         "a captured step needs a capturable AdamW, so its gain includes that change.")
    if steps and steps[0].result.suite_kind != "single" and not steps[0].ok:
        notes.append(f"the suite's index-0 configuration is {steps[0].result.status}, so no × baseline exists.")
    reasons = sorted({s.result.mfu_reason for s in steps if s.ok and s.result.mfu is None and s.result.mfu_reason})
    notes += [f"MFU not given: {reason}" for reason in reasons]
    if any(s.result.memory_kind == "process_rss" for s in steps if s.ok):
        notes.append("on CPU, peak reserved memory is the process's peak resident set size (RSS).")
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
        cells = [str(row.step), row.label, fmt.flags(list(row.added)) if not row.baseline else "(baseline)"]
        cells += [row.commit or fmt.DASH] * has_commit + [row.metric or fmt.DASH] * has_metric
        cells += [fmt.tokens(row.throughput), fmt.ratio(ref.x_previous(row)), fmt.ratio(ref.x_baseline(row))]
        if has_ms:
            # As published: no digits the source did not print.
            cells.append(("~" if row.approx else "") + (f"{row.ms_per_step:g}" if row.ms_per_step else fmt.DASH))
        if has_mem:
            cells.append(f"{row.reserved_gib:.2f}" if row.reserved_gib is not None else fmt.DASH)
        rows.append(cells)
    return Table(headers, rows, align=align, css_class="published")


def _direction_cell(a: Alignment) -> str:
    if a.published_direction is None or a.ours_direction is None:
        return fmt.DASH
    cell = f"{ARROW[a.ours_direction]} / {ARROW[a.published_direction]}"
    return cell + " ⚠ differs" if a.differs else cell


def versus_table(alignments: list[Alignment]) -> Table:
    """Ours beside published, both as speedups over their own baseline, since the hardware differs."""
    headers = ["#", "step", "published step", "ours × previous", "published, same span",
               "ours × baseline", "published × baseline", "direction (ours / published)"]
    rows, marked = [], set()
    for n, a in enumerate(alignments):
        s = a.step
        rows.append([
            str(s.index), s.label, a.row.label if a.row else "(not published)",
            _x_previous_cell(s), fmt.ratio(a.published_x_previous),
            fmt.ratio(s.x_baseline), fmt.ratio(a.published_x_baseline), _direction_cell(a),
        ])
        if a.differs:
            marked.add(n)
    return Table(headers, rows, align=["r", "l", "l", "r", "r", "r", "r", "l"], marked=marked, css_class="versus")


def has_trace(steps: list[Step]) -> bool:
    return any(s.result.trace for s in steps)


def _memcpy_cell(memcpy: dict | None) -> str:
    if not memcpy or not memcpy.get("h2d_count"):
        return "none"
    parts = [f"{memcpy['h2d_count']} H2D", fmt.memory(memcpy.get("h2d_bytes"))]
    if memcpy.get("h2d_source"):
        parts.append(memcpy["h2d_source"])
    if memcpy.get("h2d_gbps") is not None:
        parts.append(f"{memcpy['h2d_gbps']:.1f} GB/s")
    return ", ".join(parts)


def trace_table(steps: list[Step]) -> Table:
    headers = ["#", "step", "kernels/step", "GPU busy", "kernel ms/step", "idle ms/step",
               "attention kernel", "memcpy", "top kernel"]
    rows = []
    for s in steps:
        t = s.result.trace
        head = [str(s.index), s.label]
        if not t:
            rows.append(head + ["not traced"] + [fmt.DASH] * 6)
        elif t.get("status") != "ok":
            rows.append(head + [f"trace unavailable: {t.get('reason') or 'no reason given'}"] + [fmt.DASH] * 6)
        else:
            top = (t.get("top_kernels") or [{}])[0]
            top_cell = f"{top['name']} ({fmt.ms(top.get('total_ms'))} ms)" if top.get("name") else fmt.DASH
            rows.append(head + [
                f"{t['kernels_per_step']:.0f}" if t.get("kernels_per_step") is not None else fmt.DASH,
                fmt.percent(t.get("busy_fraction")),
                fmt.ms(t.get("kernel_ms_per_step")), fmt.ms(t.get("idle_ms_per_step")),
                t.get("attention_kernel") or fmt.DASH, _memcpy_cell(t.get("memcpy")), top_cell,
            ])
    return Table(headers, rows, align=["r", "l", "r", "r", "r", "r", "l", "l", "l"], css_class="trace")


def _applies(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or fmt.DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return fmt.DASH if value is None else str(value)


def flags_table(flags_info: list[dict]) -> Table:
    rows = [[f.get("name", ""), f.get("summary", ""), _applies(f.get("applies"))] for f in flags_info]
    return Table(["flag", "what it does", "applies"], rows, css_class="flags")
