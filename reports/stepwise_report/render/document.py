"""What the report contains: every section, built once as blocks that report.md and dashboard.html both render.

report.md and the dashboard must never disagree, so neither builds its own content: `build_document` lays out every
run, micro-benchmark file, sweep, trend and scaling section as a list of blocks (headings, paragraphs, notes, tables,
figures), and markdown.py and dashboard.py only turn blocks into Markdown or into one self-contained HTML page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..analysis.analysis import (
    SuiteRow,
    attached_rows,
    build_chain,
    compile_groups,
    compile_skipped,
    eager_pairs,
    find_scaling,
    flag_effects,
)
from ..analysis.reference import Reference, align, published_compile
from ..read.budget_file import BudgetSearch
from ..read.micro import MicroFile
from ..read.results import Result, Run, SuiteGroup
from .budget_search import budget_notes, budget_probes_table, budget_table
from .convergence import (
    convergence_figure,
    convergence_notes,
    convergence_table,
    has_convergence,
    load_reference_points,
)
from .flags import flag_table, flags_table
from .formats import Table
from .matrix import MATRIX_NOTES, matrix_table
from .memory import has_memory, memory_notes, memory_table, pareto_figure
from .micro_tables import MICRO_NOTES, case_groups, case_table, micro_header
from .op_counts import counted_configurations, op_count_notes, op_count_table, op_difference_table
from .plots import (
    Plotter,
    compile_figure,
    eager_figure,
    effects_figure,
    memory_figure,
    phase_figure,
    step_time_figure,
    throughput_figure,
    trend_figure,
    trend_series,
)
from .python_rows import (
    compile_heading,
    compile_notes,
    compile_table,
    eager_notes,
    eager_table,
    published_compile_table,
)
from .record_times import record_times_notes, record_times_table
from .run_header import batch_seq, run_header
from .scaling import published_scaling_table, scaling_table
from .suite_tables import (
    has_phases,
    has_trace,
    phase_notes,
    phase_table,
    published_table,
    step_notes,
    step_table,
    trace_table,
    versus_table,
)
from .sweep import Sweep, crossover_table, group_sweeps, points_table, sweep_figure, sweep_notes, versus
from .tables import measurement_notes
from .target_verdicts import has_verdicts, verdict_notes, verdict_table

# --- the blocks -----------------------------------------------------------------------------------


@dataclass
class Heading:
    level: int
    text: str

    @property
    def anchor(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.text.lower()).strip("-")


@dataclass
class Para:
    text: str


@dataclass
class Notes:
    items: list[str]


@dataclass
class TableBlock:
    table: Table
    title: str = ""


@dataclass
class Figure:
    path: str  # relative to the output directory, without suffix (.png and .svg both exist)
    caption: str


@dataclass
class SideBySide:
    """Blocks a wide screen shows next to each other (Markdown shows them in turn)."""

    blocks: list


@dataclass
class Document:
    """The whole report: its intro, a section per run, per micro-benchmark file and per sweep, the trends, then the
    tail (scaling, flags); `messages` are shown above the sections."""

    intro: list = field(default_factory=list)
    runs: list[tuple[Run, list]] = field(default_factory=list)
    micro: list[tuple[MicroFile, list]] = field(default_factory=list)
    sweeps: list[tuple[Sweep, list]] = field(default_factory=list)  # newest first
    trends: list = field(default_factory=list)
    tail: list = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


# --- the document ---------------------------------------------------------------------------------

SUITE_TITLES = {
    "raschka": "Raschka's cumulative steps",
    "karpathy": "Karpathy's cumulative steps",
    "one_at_a_time": "one flag at a time",
    "leave_one_out": "leave one flag out",
    "memory": "memory flags and the batch they buy",
    "single": "single configurations",
}


def _subtitle(run: Run, group_results: list[Result]) -> str:
    r = group_results[0]
    return f"{r.device_name} · {r.preset} · batch×seq {batch_seq(group_results)} · run {run.run_id}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def suite_blocks(
    run: Run,
    group: SuiteGroup,
    refs: dict[str, Reference],
    plotter: Plotter | None,
    dead_band: float,
    multi_device: bool,
) -> list:
    suite_rows = build_chain(group.results)
    title = f"{group.name}: {SUITE_TITLES.get(group.name, group.kind)}"
    if multi_device:
        title += f" on {group.device}"
    if group.incomplete:
        title += f" ({group.incomplete})"
    ref = refs.get(group.name) if group.kind == "cumulative" else None
    # A table of minutes to a target (the speedrun's records) stands beside the time-to-target table instead.
    minutes_ref = ref if ref and ref.minutes else None
    ref = None if minutes_ref else ref
    aligned = align(suite_rows, ref, dead_band) if ref and any(s.ok for s in suite_rows) else None
    ours = TableBlock(step_table(suite_rows), "ours")
    blocks: list = [Heading(3, title)]
    blocks.append(SideBySide([ours, TableBlock(published_table(ref), "published")]) if ref else ours)
    notes = step_notes(suite_rows)
    if group.missing:
        notes.insert(
            0,
            f"{group.incomplete}: missing from this run: {', '.join(group.missing)}"
            + ("." if group.labels else " (by index: these results carry no suite.labels)."),
        )
    if notes:
        blocks.append(Notes(notes))
    if aligned:
        blocks += _reference_blocks(ref, aligned, dead_band)
    if has_phases(suite_rows):
        blocks += [Heading(4, f"{group.name}: where the step goes"), TableBlock(phase_table(suite_rows))]
        blocks.append(Notes(phase_notes(suite_rows)))
    if has_trace(suite_rows):
        blocks += [Heading(4, f"{group.name}: kernel trace"), TableBlock(trace_table(suite_rows))]
    if has_convergence(suite_rows):
        blocks += _convergence_blocks(run, group, suite_rows, plotter, multi_device, minutes_ref)
    if has_memory(suite_rows):
        blocks += _memory_blocks(run, group, suite_rows, plotter, multi_device)
    if plotter is not None and any(s.ok for s in suite_rows):
        blocks += _suite_figures(run, group, suite_rows, aligned, plotter, multi_device)
    return blocks


def _convergence_blocks(
    run: Run,
    group: SuiteGroup,
    suite_rows: list[SuiteRow],
    plotter: Plotter | None,
    multi_device: bool,
    minutes_ref: Reference | None = None,
) -> list:
    """--target-loss: the time-to-target table, the two verdicts (against the baseline, the speedrun's rule), the
    published record times where the suite has them, and the validation loss against steps and timed seconds."""
    python = attached_rows(run, group.device)
    blocks: list = [
        Heading(4, f"{group.name}: time to target"),
        TableBlock(convergence_table(suite_rows, python)),
        Notes(convergence_notes(suite_rows, load_reference_points())),
    ]
    if has_verdicts(suite_rows):
        blocks += [TableBlock(verdict_table(suite_rows, python)), Notes(verdict_notes(suite_rows))]
    if minutes_ref is not None:
        blocks += [
            Heading(4, f"{group.name}: ours vs published records ({minutes_ref.id})"),
            TableBlock(record_times_table(suite_rows, minutes_ref)),
            Notes(record_times_notes(minutes_ref)),
        ]
    if plotter is None:
        return blocks
    sub = _subtitle(run, group.results)
    stem = _safe(group.name + (f"_{group.device}" if multi_device else ""))
    for x_key, noun in (("step", "steps"), ("time_s", "seconds")):
        title = f"{group.name}: validation loss against {noun}"
        fig = convergence_figure(suite_rows, x_key, title, sub)
        blocks.append(Figure(plotter.save(fig, _safe(run.run_id), f"{stem}_convergence_{noun}"), title))
    return blocks


def _memory_blocks(
    run: Run, group: SuiteGroup, suite_rows: list[SuiteRow], plotter: Plotter | None, multi_device: bool
) -> list:
    """Memory flags and max_batch: the memory table and tokens/s against peak memory with the Pareto front."""
    blocks: list = [
        Heading(4, f"{group.name}: peak memory, activations and largest batch"),
        TableBlock(memory_table(suite_rows)),
        Notes(memory_notes(suite_rows)),
    ]
    if plotter is not None and any(s.ok for s in suite_rows):
        title = f"{group.name}: tokens/s against peak memory"
        fig = pareto_figure(suite_rows, title, _subtitle(run, group.results))
        stem = _safe(group.name + (f"_{group.device}" if multi_device else "")) + "_pareto"
        blocks.append(Figure(plotter.save(fig, _safe(run.run_id), stem), title))
    return blocks


def _reference_blocks(ref: Reference, aligned, dead_band: float) -> list:
    differs = [a for a in aligned if a.differs]
    src = ref.source
    lines = [
        f"Published: {ref.title}. Source: {src['repository']} {src['path']} (commit {src['commit']}, {src['url']}).",
        f"Hardware: {ref.hardware}. Software: {ref.software}. Workload: {ref.workload}.",
    ]
    notes = list(ref.metric_notes) + [
        "Published ratios are normalised to the published baseline and ours to ours: the hardware differs, "
        "so only speedups are comparable, never absolute tok/s.",
        f"Direction: ▲ faster / ▼ slower beyond ±{100 * dead_band:.0f}%, = within it. "
        "'published, same span' covers the same flags as our × previous, also when it spans a skipped step.",
    ]
    if differs:
        notes.append(
            "direction differs from the published one at: "
            + ", ".join(f"row {a.step.index} ({a.step.label})" for a in differs)
        )
    return [
        Heading(4, f"ours vs published ({ref.id})"),
        *[Para(t) for t in lines],
        TableBlock(versus_table(aligned)),
        Notes(notes),
    ]


def _suite_figures(
    run: Run, group: SuiteGroup, suite_rows: list[SuiteRow], aligned, plotter: Plotter, multi_device: bool
) -> list:
    sub = _subtitle(run, group.results)
    stem = _safe(group.name + (f"_{group.device}" if multi_device else ""))
    subdir = _safe(run.run_id)
    out = []
    fig = throughput_figure(suite_rows, aligned, f"{group.name}: tokens/s per step", sub)
    out.append(Figure(plotter.save(fig, subdir, f"{stem}_throughput"), f"{group.name}: tokens/s per step"))
    fig = memory_figure(suite_rows, f"{group.name}: peak memory per step", sub)
    out.append(Figure(plotter.save(fig, subdir, f"{stem}_memory"), f"{group.name}: peak memory per step"))
    fig = step_time_figure(suite_rows, f"{group.name}: step-time distribution per configuration", sub)
    out.append(Figure(plotter.save(fig, subdir, f"{stem}_step_times"), f"{group.name}: step-time distributions"))
    if any(s.ok and s.result.phase_medians for s in suite_rows):
        fig = phase_figure(suite_rows, f"{group.name}: where the step's time goes", sub)
        out.append(Figure(plotter.save(fig, subdir, f"{stem}_phases"), f"{group.name}: step phases"))
    return out


def matrix_blocks(run: Run, device: str, plotter: Plotter | None, multi_device: bool) -> list:
    alone, removed = run.suite("one_at_a_time", device), run.suite("leave_one_out", device)
    if alone is None and removed is None:
        return []
    info = flag_table(run.results)
    effects = flag_effects(alone, removed, info)
    title = "flag interactions: one at a time × leave one out" + (f" on {device}" if multi_device else "")
    notes = list(MATRIX_NOTES) + measurement_notes([r for e in effects for r in (e.alone, e.without)])
    if alone is None or removed is None:
        notes.append(f"only the {(alone or removed).name} suite ran, so one side of the matrix is empty.")
    blocks: list = [Heading(3, title), TableBlock(matrix_table(effects, alone, removed)), Notes(notes)]
    if plotter is not None and any(e.speedup_alone or e.speedup_in_context for e in effects):
        members = (alone.results if alone else []) + (removed.results if removed else [])
        fig = effects_figure(effects, "flag effects: alone vs among all flags", _subtitle(run, members))
        stem = "flag_effects" + (f"_{_safe(device)}" if multi_device else "")
        blocks.append(Figure(plotter.save(fig, _safe(run.run_id), stem), "flag effects"))
    return blocks


def python_blocks(
    run: Run, device: str, refs: dict[str, Reference], plotter: Plotter | None, multi_device: bool
) -> list:
    """The same configurations run in PyTorch Python on the same machine: C++ against Python eager, and
    stepwise's CUDA graph against torch.compile, each with its figure."""
    blocks: list = []
    on = f" on {device}" if multi_device else ""
    suffix = f"_{_safe(device)}" if multi_device else ""
    members = [r for r in run.results if r.device_key == device]
    sub = _subtitle(run, members) if members else run.run_id
    pairs = eager_pairs(run, device)
    if pairs:
        blocks += [Heading(3, "C++ vs Python eager" + on), TableBlock(eager_table(pairs)), Notes(eager_notes(pairs))]
        if plotter is not None and any(p.ratio for p in pairs if p.libtorch.ok and p.python.ok):
            fig = eager_figure(pairs, "C++ (libtorch) vs PyTorch eager: Python time ÷ C++ time", sub)
            blocks.append(
                Figure(plotter.save(fig, _safe(run.run_id), "cpp_vs_python_eager" + suffix), "C++ vs Python eager")
            )
    groups = compile_groups(run, device)
    if groups:
        published = published_compile_table(list(refs.values()))
        table = TableBlock(compile_table(groups), "ours")
        blocks += [
            Heading(3, compile_heading(groups) + on),
            SideBySide([table, TableBlock(published, "published")]) if published else table,
            Notes(compile_notes(groups, compile_skipped(run, device))),
        ]
        if plotter is not None and any(g.python_eager is not None for g in groups):
            fig = compile_figure(
                groups,
                published_compile(list(refs.values())),
                "compile: speedup over PyTorch eager of the same configuration",
                sub,
            )
            blocks.append(
                Figure(
                    plotter.save(fig, _safe(run.run_id), "compile_vs_torch_compile" + suffix),
                    compile_heading(groups).split(": ", 1)[1],
                )
            )
    return blocks


def run_blocks(run: Run, refs: dict[str, Reference], plotter: Plotter | None, dead_band: float) -> list:
    blocks: list = [Heading(2, f"run {run.run_id}"), TableBlock(run_header(run))]
    if run.messages:
        blocks.append(Notes(list(run.messages)))
    multi = len(run.devices) > 1
    matrix_done: set[str] = set()
    for group in run.suites:
        if group.name in ("one_at_a_time", "leave_one_out"):
            if group.device not in matrix_done:
                matrix_done.add(group.device)
                blocks += matrix_blocks(run, group.device, plotter, multi)
        blocks += suite_blocks(run, group, refs, plotter, dead_band, multi)
    for device in run.devices:
        if any(r.device_key == device for r in run.others) or any(
            "compile" in r.flags_in_effect for r in run.libtorch if r.device_key == device
        ):
            blocks += python_blocks(run, device, refs, plotter, multi)
        counted = counted_configurations(run, device)
        if counted:
            on = f" on {device}" if multi else ""
            blocks += [
                Heading(3, "What one step dispatches" + on),
                TableBlock(op_count_table(counted)),
                Notes(op_count_notes(counted)),
            ]
            if (differing := op_difference_table(counted)) is not None:
                blocks.append(TableBlock(differing, "operators called a different number of times"))
    return blocks


def sweep_blocks(sweep: Sweep, plotter: Plotter | None) -> list:
    """One sweep: its axes and points, then per suite (and device) the points, the crossover table and the figure."""
    blocks: list = [
        Heading(2, f"sweep {sweep.id}"),
        Para(
            f"axes {sweep.describe()}, the first axis outermost; each point is its own run, with its own section. "
            "Below, each configuration against the baseline of the same point, point by point."
        ),
    ]
    multi = len({s.device for s in sweep.suites}) > 1
    for suite in sweep.suites:
        title = f"{suite.name}: {versus(suite)} across {' × '.join(sweep.axes)}" + (
            f" on {suite.device}" if multi else ""
        )
        blocks += [
            Heading(3, title),
            TableBlock(points_table(sweep, suite)),
            TableBlock(crossover_table(sweep, suite)),
            Notes(sweep_notes(sweep, suite)),
        ]
        if plotter is not None and any(c.speedup for r in suite.rows for c in r.cells):
            sub = f"{suite.device} · sweep {sweep.id} · {sweep.describe()}"
            fig = sweep_figure(sweep, suite, title, sub)
            stem = _safe(suite.name + (f"_{suite.device}" if multi else "")) + "_sweep"
            blocks.append(Figure(plotter.save(fig, _safe(sweep.id), stem), title))
    return blocks


def budget_search_blocks(search: BudgetSearch) -> list:
    """One budget search (./ablate --find-budget): each row's N with its bracket, then every probe."""
    return [
        Heading(2, f"budget search: {search.path.parent.name}"),
        TableBlock(budget_table(search)),
        Notes(budget_notes(search)),
        TableBlock(budget_probes_table(search), "every probe"),
    ]


def micro_title(m: MicroFile) -> str:
    date = f"{m.date:%Y-%m-%d %H:%M}" if m.context.get("date") else m.path.name
    return f"micro-benchmarks {date} on {m.device or m.context.get('host_name') or m.path.name}"


def micro_blocks(m: MicroFile) -> list:
    """One micro-benchmark file: its header, then per family and preset a table of its cases."""
    blocks: list = [Heading(2, micro_title(m)), TableBlock(micro_header(m))]
    if not m.cases:
        return blocks + [Para("no benchmarks in this file.")]
    for title, cases in case_groups(m):
        base = m.baselines.get(cases[0].family)
        blocks += [Heading(3, title + (f" (baseline {base})" if base else "")), TableBlock(case_table(m, cases))]
    notes = (
        MICRO_NOTES
        if m.baselines
        else MICRO_NOTES[:1]
        + MICRO_NOTES[2:]
        + ["no stepwise_baselines in the file's context (not stepwise_micro's output), so no speedups."]
    )
    return blocks + [Notes(list(notes))]


def trend_blocks(runs: list[Run], plotter: Plotter | None) -> list:
    series = trend_series(runs)
    if not series:
        return []
    blocks: list = [
        Heading(2, "trends across runs"),
        Para(
            "tok/s and peak reserved memory per configuration, one point per run "
            "(x: run start and git commit); only runs on the same device are on one plot."
        ),
    ]
    for (device, suite), by_config in sorted(series.items()):
        if plotter is None:
            continue
        fig = trend_figure(by_config, f"{suite}: trend over runs", device)
        blocks.append(Figure(plotter.save(fig, "trends", _safe(f"{suite}_{device}")), f"{suite} on {device}"))
    return blocks


def _intro(
    runs: list[Run],
    results: list[Result],
    shown: list[Run],
    micro: list[MicroFile],
    micro_shown: list[MicroFile],
    sweeps: list[Sweep],
) -> str:
    parts = []
    if runs:
        text = f"{len(results)} result files from {len(runs)} run(s), newest run first."
        if len(shown) < len(runs):
            text += f" Sections for the {len(shown)} newest; the trends cover all {len(runs)}."
        parts.append(text)
    if sweeps:
        parts.append(f"{len(sweeps)} sweep(s) among them, each point a run; their sections follow the runs'.")
    if micro:
        text = f"{len(micro)} micro-benchmark file(s) (google/benchmark JSON), newest first"
        more = len(micro_shown) < len(micro)
        parts.append(text + (f"; sections for the {len(micro_shown)} newest." if more else "."))
    return " ".join(parts)


def build_document(
    runs: list[Run],
    results: list[Result],
    refs: dict[str, Reference],
    plotter: Plotter | None,
    dead_band: float,
    last: int | None = None,
    micro: list[MicroFile] | None = None,
    notes: list[str] | None = None,
    budget_searches: list[BudgetSearch] | None = None,
    with_flags: bool = True,
) -> Document:
    """Sections for the `last` newest runs and micro-benchmark files (all when None); trends and
    scaling always use every run. `notes` (how the inputs were read) head the messages."""
    micro = micro or []
    shown, micro_shown = (runs[:last], micro[:last]) if last else (runs, micro)
    sweeps = group_sweeps(results)
    doc = Document(messages=list(notes or []))
    doc.intro = [Heading(1, "stepwise report"), Para(_intro(runs, results, shown, micro, micro_shown, sweeps))]
    for run in shown:
        doc.runs.append((run, run_blocks(run, refs, plotter, dead_band)))
        doc.messages += run.messages
    doc.micro = [(m, micro_blocks(m)) for m in micro_shown]
    # A sweep's points are runs of their own: --last counts sweeps, and a sweep shown is shown with every point.
    doc.sweeps = [(s, sweep_blocks(s, plotter)) for s in (sweeps[:last] if last else sweeps)]
    doc.trends = trend_blocks(runs, plotter)
    pairs = find_scaling(results)
    published = published_scaling_table(list(refs.values()))
    if pairs or any(r.world_size > 1 for r in results):
        doc.tail.append(Heading(2, "distributed scaling"))
        if pairs:
            doc.tail.append(TableBlock(scaling_table(pairs)))
        else:
            doc.tail.append(
                Para(
                    "distributed results exist, but no result of the same configuration on one rank "
                    "(same device, preset, flags, batch and sequence) to compute the efficiency against."
                )
            )
        doc.tail.append(
            Notes(
                ["scaling efficiency = tok/s on N ranks (global) ÷ (N × tok/s on one rank)."]
                + measurement_notes([p.multi for p in pairs])
            )
        )
        if published is not None:
            doc.tail.append(TableBlock(published, "published"))
    for search in budget_searches or []:
        doc.tail += budget_search_blocks(search)
    # Newest run first, so a flag's newest description is the one shown.
    info = flag_table([r for run in runs for r in run.results]) if with_flags else None
    if info:
        doc.tail += [Heading(2, "flags"), TableBlock(flags_table(info))]
    return doc
