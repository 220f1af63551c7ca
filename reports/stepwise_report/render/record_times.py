"""The speedrun suite's measured time to target beside the record table's published minutes (reports/reference/
speedrun.json), as the raschka and karpathy suites stand beside their published throughput tables.

The hardware, the model's size, the data and the target all differ (a tiny model on a CPU against GPT-2 small on
8× H100 to 3.28), so only ratios against each side's own baseline are set side by side, never seconds against
minutes; and a published record bundles more than its row's flags (the reference's notes say what).
"""

from __future__ import annotations

from ..analysis.analysis import SuiteRow
from ..analysis.reference import PublishedRow, Reference
from .formats import DASH, Table
from .target_verdicts import ratio_cell


def _ours(suite_row: SuiteRow) -> tuple[str, str]:
    c = suite_row.result.data.get("convergence") or {}
    time_s = c.get("time_s")
    seconds = f"{time_s['median']:.2f}" if time_s else DASH
    if suite_row.index == 0:
        return seconds, "baseline" if time_s else DASH
    return seconds, ratio_cell((c.get("verdict") or {}).get("time"))


def _record_cell(row: PublishedRow) -> str:
    """The record's own claim: its before → after minutes, over the record it improved on."""
    if row.before_minutes is None:
        return DASH
    x = row.minutes_to_target / row.before_minutes
    return f"{row.before_minutes:g} → {row.minutes_to_target:g} (×{x:.2f}, from #{row.before_record})"


def record_times_table(suite_rows: list[SuiteRow], ref: Reference) -> Table:
    """Per step of ours: its median seconds to target and × our baseline with the interval; the published record
    that adds the same flags, its minutes, × the published baseline, and the record's own before → after."""
    rows = []
    for step in suite_rows:
        seconds, ours_x = _ours(step)
        row = ref.row_for(step)
        published = (
            [f"#{row.record}", f"{row.minutes_to_target:g}", f"×{ref.x_baseline_minutes(row):.2f}", _record_cell(row)]
            if row is not None
            else [DASH] * 4
        )
        rows.append([str(step.index), step.label, seconds, ours_x, *published])
    return Table(
        headers=[
            "#",
            "row",
            "ours: s to target",
            "ours × base [95%]",
            "record",
            "published min",
            "published × base",
            "record's own",
        ],
        rows=rows,
        caption=f"time to target: ours beside {ref.id}'s published records",
        align=["r", "l", "r", "r", "r", "r", "r", "l"],
    )


def record_times_notes(ref: Reference) -> list[str]:
    src = ref.source
    return [
        f"Published: {ref.title}. Source: {src['repository']} {src['path']} (commit {src['commit']}, {src['url']}); "
        f"transcribed from {src.get('transcribed_from', 'the source')}.",
        f"Hardware: {ref.hardware}. Software: {ref.software}. Workload: {ref.workload}.",
        *ref.metric_notes,
        "Each side's ratio is against its own baseline (ours: median timed seconds, with the 95% bootstrap "
        "interval; published: minutes over the llm.c baseline's); seconds and minutes are never compared.",
    ]
