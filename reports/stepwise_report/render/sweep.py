"""Sweeps (`./ablate --sweep AXIS=v1,v2,...`): each flag's speedup as a function of size, and where it starts to pay.

A sweep runs one suite once per point of its axes (preset, seq_len, batch_size; several axes form their cartesian
product, the first outermost), each point as its own run, so every per-run table and figure already shows one point.
What no run can show is the same configuration across points: a flag that loses at the tiny preset and wins from mini
on. So the results that carry a `sweep` key are grouped here by sweep, suite and device; at each point every
configuration is set against that point's own baseline exactly as the suite's table does (build_chain, × baseline with
its interval from the shared bootstrap), and its crossover is the first point whose interval lies above 1.00. The
figure draws the same cells: a panel per configuration, the speedup against the axis, the interval as a band.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import product

from ..analysis.analysis import SuiteRow, build_chain, x_baseline
from ..read.results import Result, run_started, suite_rank
from ..stats.speedup import Speedup
from .formats import DASH, Table, fmt_speedup_brief, fmt_tokens
from .plots import MUTED, OURS, panel_titles, pyplot, tab10
from .tables import measurement_notes, with_mark

# --- the sweep and its points ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One point of the sweep: its 0-based position in the product order and its value on each axis."""

    index: int
    values: tuple

    @property
    def label(self) -> str:
        """The values alone ('mini', 'mini · 64'): the axes are named once, above the table."""
        return " · ".join(str(v) for v in self.values)


@dataclass
class Cell:
    """One configuration at one point: its speedup over that point's baseline, or why there is none (`gap`)."""

    point: Point
    result: Result | None
    speedup: Speedup | None = None
    gap: str | None = None  # "missing", "skipped", "failed", "no baseline", "not measured"

    @property
    def above(self) -> bool:
        """The 95% interval lies above 1.00: a measurable gain at this point."""
        return self.speedup is not None and self.speedup.has_interval and self.speedup.lo > 1

    @property
    def below(self) -> bool:
        """Judged, and not a measurable gain: the interval reaches 1.00 or lies under it."""
        return self.speedup is not None and self.speedup.has_interval and not self.above


@dataclass
class Row:
    """One configuration of the suite (matched across points by suite.index and suite.label) at every point."""

    index: int
    label: str
    cells: list[Cell]

    @property
    def crossover(self) -> str:
        return crossover(self.cells)


@dataclass
class SweepSuite:
    """The libtorch rows of one suite of one sweep on one device: per point its ratio chain, and per configuration
    its cells in the sweep's order. Rows of the PyTorch Python implementations are left out (`python`)."""

    name: str
    kind: str
    device: str
    chains: dict[int, list[SuiteRow]]  # point index -> that point's steps
    rows: list[Row]
    python: list[Result] = field(default_factory=list)


@dataclass
class Sweep:
    id: str
    axes: list[str]
    values: dict[str, list]
    points: list[Point]
    suites: list[SweepSuite]
    started: datetime  # its first point's start
    stray: list[Result] = field(default_factory=list)  # results whose point index is not one of the axes' product

    @property
    def count(self) -> int:
        return len(self.points)

    def describe(self) -> str:
        """'preset (tiny, mini) × seq_len (64, 128): 4 points'."""
        axes = " × ".join(f"{a} ({', '.join(str(v) for v in self.values[a])})" for a in self.axes)
        return f"{axes}: {self.count} point{'s' if self.count != 1 else ''}"


def crossover(cells: list[Cell]) -> str:
    """The first point, in the sweep's order, at which the 95% interval's lower end lies above 1.00: 'always' when that
    is the first point, 'never' when there is none ('—' when no point was judged at all). Later points where it is
    not above 1.00 follow in parentheses: 'mini (not at small)', and those with no interval: '(no interval at large)'."""
    first = next((i for i, c in enumerate(cells) if c.above), None)
    if first is None:
        return "never" if any(c.below for c in cells) else DASH
    text = "always" if first == 0 else cells[first].point.label
    later = cells[first + 1 :]
    said = []
    if drops := [c.point.label for c in later if c.below]:
        said.append(f"not at {', '.join(drops)}")
    if unknown := [c.point.label for c in later if not c.above and not c.below]:
        said.append(f"no interval at {', '.join(unknown)}")
    return text + (f" ({'; '.join(said)})" if said else "")


def _cell(point: Point, suite_rows: list[SuiteRow] | None, key: tuple[int, str]) -> Cell:
    step = next((s for s in suite_rows or [] if (s.index, s.label) == key), None)
    if step is None:
        return Cell(point, None, gap="missing")
    if not step.ok:
        return Cell(point, step.result, gap=step.result.status)
    if step.base is None:
        return Cell(point, step.result, gap="no baseline")
    sp = x_baseline(step)
    return Cell(point, step.result, sp, gap=None if sp is not None else "not measured")


def _suite(name: str, device: str, points: list[Point], members: list[Result]) -> SweepSuite:
    libtorch = [r for r in members if r.is_libtorch]
    by_point: dict[int, list[Result]] = defaultdict(list)
    for r in libtorch:
        by_point[r.sweep["index"]].append(r)
    # Each point is set against its own baseline, exactly as the suite's table of that run does.
    chains = {i: build_chain(rs) for i, rs in by_point.items()}
    keys = sorted({(s.index, s.label) for steps in chains.values() for s in steps if s.index != 0})
    rows = [Row(i, label, [_cell(p, chains.get(p.index), (i, label)) for p in points]) for i, label in keys]
    kind = libtorch[0].suite_kind if libtorch else members[0].suite_kind
    return SweepSuite(name, kind, device, chains, rows, [r for r in members if not r.is_libtorch])


def group_sweeps(results: list[Result]) -> list[Sweep]:
    """The results that carry a `sweep` key, by sweep id, newest first; each with a SweepSuite per suite and device
    (a ratio never crosses devices). Axes, values and the product order come from the sweep's own key."""
    by_id: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.sweep:
            by_id[r.sweep["id"]].append(r)
    sweeps = []
    for sweep_id, members in by_id.items():
        meta = min(members, key=lambda r: r.sweep["index"]).sweep
        axes = list(meta["axes"])
        values = {a: list(meta["values"][a]) for a in axes}
        points = [Point(i, combo) for i, combo in enumerate(product(*(values[a] for a in axes)))]
        inside = [r for r in members if 0 <= r.sweep["index"] < len(points)]
        by_suite: dict[tuple[str, str], list[Result]] = defaultdict(list)
        for r in inside:
            by_suite[(r.suite_name, r.device_key)].append(r)
        suites = [
            _suite(name, device, points, by_suite[(name, device)])
            for name, device in sorted(by_suite, key=lambda k: (suite_rank(k[0]), k[1]))
        ]
        stray = [r for r in members if r not in inside]
        sweeps.append(Sweep(sweep_id, axes, values, points, suites, run_started(members), stray))
    sweeps.sort(key=lambda s: (s.started, s.id), reverse=True)
    return sweeps


# --- tables and notes --------------------------------------------------------------------------------------------

VERSUS = {"leave_one_out": "× all flags", "single": "× no flags"}


def versus(suite: SweepSuite) -> str:
    """What each cell is against, named as the suite's step table names it."""
    return VERSUS.get(suite.kind, "× baseline")


def _baseline(suite: SweepSuite, point: Point) -> SuiteRow | None:
    suite_rows = suite.chains.get(point.index) or []
    return next((s for s in suite_rows if s.index == 0), None)


def points_table(sweep: Sweep, suite: SweepSuite) -> Table:
    """Per point: its values, the run that holds it, its baseline's tok/s, and how many configurations ran there."""
    rows = []
    for p in sweep.points:
        suite_rows = suite.chains.get(p.index)
        if not suite_rows:
            rows.append([str(p.index), p.label, "missing: no result at this point", DASH, DASH])
            continue
        base = _baseline(suite, p)
        if base is None:
            tokens = "missing"
        else:
            tokens = with_mark(fmt_tokens(base.result.tokens_per_s), base.result) if base.ok else base.result.status
        ran = f"{sum(s.ok for s in suite_rows)} of {len(suite_rows)} ok"
        rows.append([str(p.index), p.label, suite_rows[0].result.run_id, tokens, ran])
    headers = ["#", " · ".join(sweep.axes), "run", "baseline tok/s", "configurations"]
    return Table(headers, rows, caption="the points, in the order run", align=["r", "l", "l", "r", "r"])


def _cell_text(cell: Cell) -> str:
    if cell.gap is not None:
        return cell.gap
    return with_mark(fmt_speedup_brief(cell.speedup), cell.result)


def crossover_table(sweep: Sweep, suite: SweepSuite) -> Table:
    """Per configuration: its speedup over the baseline of each point with the 95% interval, and its crossover."""
    headers = ["#", "configuration"] + [p.label for p in sweep.points] + ["crossover"]
    rows = [[str(r.index), r.label] + [_cell_text(c) for c in r.cells] + [r.crossover] for r in suite.rows]
    align = ["r", "l"] + ["r"] * len(sweep.points) + ["l"]
    caption = f"{versus(suite)} at each point (95% interval); crossover: the first point whose interval lies above 1.00"
    return Table(headers, rows, caption=caption, align=align)


CROSSOVER_NOTE = (
    "crossover: the first point, in the order run, at which the 95% interval's lower end lies above 1.00 — 'always' "
    "when that is the first point, 'never' when no point's does; later points where the interval reaches 1.00 or lies "
    "below it are named in parentheses ('not at …'), and those with no interval ('no interval at …')."
)


def sweep_notes(sweep: Sweep, suite: SweepSuite) -> list[str]:
    notes = [
        f"each cell: tokens/s over the baseline of the same point (suite index 0, measured in that point's run; "
        f"{versus(suite)} in the run's own table), the ratio of median step times with its 95% interval from the same "
        "bootstrap as every speedup in this report; n.s.: the interval contains 1.00, no measurable change.",
        CROSSOVER_NOTE,
    ]
    gaps = [
        f"{c.point.label}, {r.index} {r.label}: {c.gap}"
        + (f": {c.result.reason}" if c.result and c.result.reason else "")
        for r in suite.rows
        for c in r.cells
        if c.gap in ("skipped", "failed")
    ]
    if gaps:
        notes.append("gaps (no speedup, never drawn as 0): " + "; ".join(gaps) + ".")
    no_base = [p.label for p in sweep.points if p.index in suite.chains and not _baseline_ok(suite, p)]
    if no_base:
        notes.append(
            f"no baseline at {', '.join(no_base)}: its index-0 configuration did not run there, so no speedup."
        )
    missing = [p.label for p in sweep.points if p.index not in suite.chains]
    if missing:
        notes.append(f"no result at {', '.join(missing)}: {len(missing)} of {sweep.count} points are missing.")
    if suite.python:
        impls = sorted({r.implementation for r in suite.python})
        notes.append(
            f"{len(suite.python)} PyTorch Python rows ({', '.join(impls)}) are left out: the sweep sets libtorch rows "
            "against the libtorch baseline, as the suite tables do."
        )
    if sweep.stray:
        notes.append(
            f"{len(sweep.stray)} results of this sweep name a point outside its axes (sweep.index ≥ {sweep.count}) "
            "and are left out: " + ", ".join(f"{r.run_id}/{r.name}" for r in sweep.stray) + "."
        )
    return notes + measurement_notes([c.result for r in suite.rows for c in r.cells if c.gap is None])


def _baseline_ok(suite: SweepSuite, point: Point) -> bool:
    base = _baseline(suite, point)
    return base is not None and base.ok


# --- the figure --------------------------------------------------------------------------------------------------


def _series(sweep: Sweep, row: Row) -> tuple[list[str], list[tuple[str | None, list[Cell]]], str]:
    """The panel's x tick labels, its lines (a label and a cell per x) and the x axis's name. Two axes: x is the first,
    one line per value of the second; one axis, or more than two: x is the point, one line."""
    if len(sweep.axes) == 2:
        first, second = (sweep.values[a] for a in sweep.axes)
        lines = [
            (f"{sweep.axes[1]} {v}", [row.cells[i * len(second) + j] for i in range(len(first))])
            for j, v in enumerate(second)
        ]
        return [str(v) for v in first], lines, sweep.axes[0]
    return [p.label for p in sweep.points], [(None, row.cells)], " · ".join(sweep.axes)


DODGE = 0.06  # x offset between the lines of one panel, in points


def _isolated_intervals(ax, xs: list[float], value: list[float], lo: list[float], hi: list[float], colour) -> None:
    """A band needs two neighbours: a point between gaps gets its interval as an error bar instead."""
    for i, x in enumerate(xs):
        alone = all(k < 0 or k >= len(xs) or math.isnan(lo[k]) for k in (i - 1, i + 1))
        if alone and not math.isnan(lo[i]):
            yerr = [[value[i] - lo[i]], [hi[i] - value[i]]]
            ax.errorbar([x], [value[i]], yerr=yerr, fmt="none", ecolor=colour, elinewidth=1.0, capsize=3)


def sweep_figure(sweep: Sweep, suite: SweepSuite, title: str, subtitle: str):
    """A panel per configuration: its speedup over each point's baseline against the swept axis, the 95% interval as a
    band, 1.00 as a line; gaps stay gaps (the line breaks; the reason is written at 1.00)."""
    n = max(1, len(suite.rows))
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    fig, axes = pyplot().subplots(nrows, ncols, figsize=(4.3 * ncols, 2.9 * nrows + 1.0), squeeze=False)
    flat = [ax for line in axes for ax in line]
    colours = tab10()  # one per value of the second axis
    for ax in flat[len(suite.rows) :]:
        ax.set_visible(False)
    for k, (ax, row) in enumerate(zip(flat, suite.rows)):
        ticks, lines, xname = _series(sweep, row)
        xs = list(range(len(ticks)))
        gaps: dict[int, list[str]] = defaultdict(list)
        for j, (name, cells) in enumerate(lines):
            colour = OURS if name is None else colours[j % len(colours)]
            shifted = [x + DODGE * (j - (len(lines) - 1) / 2) for x in xs]  # lines at one x side by side
            sps = [c.speedup if c.gap is None else None for c in cells]
            value = [math.nan if sp is None else sp.value for sp in sps]
            ax.plot(shifted, value, marker="o", markersize=3.5, color=colour, label=name)
            lo = [sp.lo if sp is not None and sp.has_interval else math.nan for sp in sps]
            hi = [sp.hi if sp is not None and sp.has_interval else math.nan for sp in sps]
            ax.fill_between(shifted, lo, hi, color=colour, alpha=0.18, linewidth=0)
            _isolated_intervals(ax, shifted, value, lo, hi, colour)
            for x, c in zip(xs, cells):
                if c.gap is not None:
                    gaps[x].append(c.gap if name is None else f"{name}: {c.gap}")
        for x, said in gaps.items():
            ax.text(x, 1.0, "\n".join(said), ha="center", va="bottom", fontsize=6.5, color=MUTED)
        ax.axhline(1.0, color="#333333", linewidth=0.8)
        ax.set_xticks(
            xs, ticks, rotation=30 if len(sweep.axes) > 2 else 0, ha="right" if len(sweep.axes) > 2 else "center"
        )
        ax.set_xlim(-0.5, len(xs) - 0.5)
        ax.margins(y=0.2)
        ax.set_title(f"{row.index} {row.label} · crossover: {row.crossover}", fontsize=8.5, loc="left")
        if k % ncols == 0:
            ax.set_ylabel(f"{versus(suite)} (tokens/s)")
        if k >= len(suite.rows) - ncols:
            ax.set_xlabel(xname)
        if len(lines) > 1 and k == 0:
            ax.legend(frameon=False, fontsize=7, loc="best")
    if not suite.rows:
        flat[0].set_visible(True)
        flat[0].text(0.5, 0.5, "no configuration besides the baseline", ha="center", transform=flat[0].transAxes)
    panel_titles(fig, title, subtitle + " · band: 95% interval; line at 1.00: as fast as the baseline")
    return fig
