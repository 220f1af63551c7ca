"""The report's figures, drawn with matplotlib's Agg backend and written as PNG (for the dashboard, which inlines
them) and SVG (text stays text), with fixed metadata so identical input gives identical files.

Figures only draw what analysis.py and reference.py already computed (the ratio chain, the published alignment,
the flag effects); the one series made here is the trend of each configuration across runs, which no table shows.
"""

from __future__ import annotations

import functools
import textwrap
from collections import defaultdict
from pathlib import Path

from ..analysis.analysis import (
    IMPLEMENTATION_LABELS,
    CompileGroup,
    EagerPair,
    FlagEffect,
    SuiteRow,
    x_baseline,
    x_previous,
)
from ..analysis.reference import Alignment, Reference
from ..read.results import IMPLEMENTATIONS, Run
from ..stats.speedup import Speedup
from .formats import GIB

OURS, PUBLISHED, MUTED = "#2f6db5", "#e0892b", "#9a9a9a"


@functools.cache
def pyplot():
    """matplotlib.pyplot on the Agg backend in the house style, imported when the first figure is drawn: `./report
    show`, which every ./ablate runs for its end-of-run tables, draws none, and matplotlib's import was most of its
    start."""
    import matplotlib

    matplotlib.use("Agg")  # before pyplot's import
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 110,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.grid.axis": "y",
            "grid.alpha": 0.3,
            "font.size": 9,
            # Text stays text in the SVG, and a fixed salt keeps the file identical for identical input.
            "svg.fonttype": "none",
            "svg.hashsalt": "stepwise",
        }
    )
    return plt


def thousands():
    """An axis formatter writing 12,345."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: f"{v:,.0f}")


def tab10() -> tuple:
    """matplotlib's tab10 colours (distinct and colour-blind tolerable): one per configuration or axis value."""
    return pyplot().get_cmap("tab10").colors


class Plotter:
    """Writes figures under `root/plots/<subdir>` and returns their paths relative to `root`, without suffix."""

    def __init__(self, root: Path):
        self.root = root
        self.written: list[Path] = []

    def save(self, fig, subdir: str, stem: str) -> str:
        rel = Path("plots") / subdir / stem
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".png", ".svg"):
            path = (self.root / rel).with_suffix(suffix)
            fig.savefig(path, bbox_inches="tight", metadata={"Date": None} if suffix == ".svg" else None)
            self.written.append(path)
        pyplot().close(fig)
        return rel.as_posix()


def titles(fig, ax, title: str, subtitle: str) -> None:
    """A figure's bold title and its grey subtitle, in the one style every figure of the report shares."""
    fig.suptitle(title, fontsize=11, fontweight="bold", x=0.02, ha="left")
    # Wrapped to the figure's width (about 15 characters an inch at this size) so it never widens it.
    width = int(fig.get_figwidth() * 15)
    ax.set_title(textwrap.fill(subtitle, width), fontsize=8, color="#555555", loc="left")


def panel_titles(fig, title: str, subtitle: str) -> None:
    """`titles` for a figure of several panels, each with its own title: the title and the subtitle above all of them,
    in the same type. Lays the figure out (tight_layout below the two), so call it last."""
    sub = textwrap.fill(subtitle, int(fig.get_figwidth() * 15))
    height = fig.get_figheight()
    head = 0.42 + 0.15 * (sub.count("\n") + 1)  # inches: the title's line, then the subtitle's lines
    fig.tight_layout(rect=(0, 0, 1, 1 - head / height))
    fig.suptitle(title, fontsize=11, fontweight="bold", x=0.02, y=1 - 0.08 / height, ha="left", va="top")
    fig.text(0.02, 1 - 0.36 / height, sub, fontsize=8, color="#555555", ha="left", va="top")


def step_labels(suite_rows: list[SuiteRow]) -> list[str]:
    """A suite's rows as the x axis names them: index and label."""
    return [f"{s.index} {s.label}" for s in suite_rows]


def figure_width(n: int) -> float:
    """Inches wide for `n` rows side by side, so that their labels never overlap."""
    return max(6.0, 0.75 * n + 2.0)


def _mark_unmeasured(ax, suite_rows: list[SuiteRow], positions) -> None:
    for x, s in zip(positions, suite_rows):
        if not s.ok:
            ax.text(x, 0, f" {s.result.status}", rotation=90, ha="center", va="bottom", fontsize=8, color=MUTED)


def _paired_bars(ax, positions, first, second, labels, width, label_format, horizontal=False):
    """Two bars per position (ours and the other series), each labelled with its value."""
    bar = ax.barh if horizontal else ax.bar
    b1 = bar([p - width / 2 for p in positions], first, width, color=OURS, label=labels[0])
    b2 = bar([p + width / 2 for p in positions], second, width, color=PUBLISHED, label=labels[1])
    for bars, values in ((b1, first), (b2, second)):
        ax.bar_label(bars, labels=[label_format(v) for v in values], fontsize=7, padding=1 if not horizontal else 2)


def speedup_label(sp: Speedup | None) -> str:
    """A bar label: '×1.23', '×1.06 (n.s.)' when the 95% interval contains 1, '×1.06 (?)' without one."""
    if sp is None:
        return ""
    if not sp.has_interval:
        return f"×{sp.value:.2f} (?)"
    return f"×{sp.value:.2f}" + ("" if sp.measurable else " (n.s.)")


def _error_bars(values: list[float], intervals: list[Speedup | None]) -> list[list[float]]:
    """matplotlib's yerr (lower and upper distances) for bars of `values` with these intervals."""
    lower = [max(0.0, v - sp.lo) if sp is not None and sp.has_interval else 0.0 for v, sp in zip(values, intervals)]
    upper = [max(0.0, sp.hi - v) if sp is not None and sp.has_interval else 0.0 for v, sp in zip(values, intervals)]
    return [lower, upper]


def throughput_figure(suite_rows: list[SuiteRow], aligned: list[Alignment] | None, title: str, subtitle: str):
    """Our tok/s per step labelled with × previous; below it, ours against published as × own baseline."""
    n = len(suite_rows)
    rows = 2 if aligned else 1
    fig, axes = pyplot().subplots(rows, 1, figsize=(figure_width(n), 3.4 * rows + 0.6), squeeze=False, sharex=True)
    xs = list(range(n))
    ax = axes[0][0]
    values = [s.result.tokens_per_s if s.ok else 0 for s in suite_rows]
    bars = ax.bar(xs, values, color=[OURS if s.ok else MUTED for s in suite_rows])
    cumulative = suite_rows[0].result.suite_kind == "cumulative"
    # Cumulative suites read step by step; the others each compare with their index-0 configuration.
    ratios = [
        x_previous(s) if cumulative else (x_baseline(s) if s.base is not None and s.base is not s else None)
        for s in suite_rows
    ]
    ax.bar_label(bars, labels=[speedup_label(x) for x in ratios], fontsize=8, padding=2)
    _mark_unmeasured(ax, suite_rows, xs)
    ax.set_ylabel("tokens/s (higher is better)")
    ax.yaxis.set_major_formatter(thousands())
    ax.set_xticks(xs, step_labels(suite_rows), rotation=30, ha="right")
    ax.margins(y=0.15)
    what = "× previous ok step" if cumulative else "× the suite's first configuration"
    what += "; (n.s.): 95% interval contains 1, no measurable change"
    titles(fig, ax, title, f"{subtitle} · bar labels: {what}")
    if aligned:
        ax2 = axes[1][0]
        w = 0.4
        ours = [s.x_baseline or 0 for s in suite_rows]
        pub = [a.published_x_baseline or 0 for a in aligned]
        _paired_bars(
            ax2,
            xs,
            ours,
            pub,
            ("ours (95% interval)", "published (its own baseline)"),
            w,
            lambda v: f"{v:.2f}" if v else "",
        )
        intervals = [x_baseline(s) if s.base is not None and s.base is not s else None for s in suite_rows]
        ax2.errorbar(
            [x - w / 2 for x in xs],
            ours,
            yerr=_error_bars(ours, intervals),
            fmt="none",
            ecolor="#222222",
            elinewidth=0.8,
            capsize=2,
        )
        for x, a in zip(xs, aligned):
            if a.differs:
                ax2.annotate(
                    "direction differs",
                    (x, max(ours[x], pub[x])),
                    textcoords="offset points",
                    xytext=(0, 12),
                    ha="center",
                    fontsize=7,
                    color="#b00020",
                )
        ax2.axhline(1.0, color="#333333", linewidth=0.8)
        ax2.set_ylabel("× baseline (speedup)")
        ax2.set_xticks(xs, step_labels(suite_rows), rotation=30, ha="right")
        ax2.legend(frameon=False, fontsize=8, loc="upper left")
        ax2.margins(y=0.2)
        ax2.set_title(
            "ours vs published, each normalised to its own baseline (hardware differs)",
            fontsize=8,
            color="#555555",
            loc="left",
        )
    fig.tight_layout()
    return fig


def memory_figure(suite_rows: list[SuiteRow], title: str, subtitle: str):
    fig, ax = pyplot().subplots(figsize=(figure_width(len(suite_rows)), 3.6))
    xs = list(range(len(suite_rows)))
    gib = [(s.result.peak_reserved_bytes or 0) / GIB if s.ok else 0 for s in suite_rows]
    bars = ax.bar(xs, gib, color=[OURS if s.ok else MUTED for s in suite_rows])
    ax.bar_label(bars, labels=[f"{v:.2f}" if v else "" for v in gib], fontsize=8, padding=2)
    _mark_unmeasured(ax, suite_rows, xs)
    rss = any(s.result.memory_kind == "process_rss" for s in suite_rows if s.ok)
    ax.set_ylabel("peak RSS (GiB)" if rss else "peak reserved (GiB, lower is better)")
    ax.set_xticks(xs, step_labels(suite_rows), rotation=30, ha="right")
    ax.margins(y=0.15)
    titles(fig, ax, title, subtitle)
    fig.tight_layout()
    return fig


def step_time_figure(suite_rows: list[SuiteRow], title: str, subtitle: str):
    """The distribution of every measured step's time, one box per configuration."""
    measured = [s for s in suite_rows if s.ok and s.result.samples_ms]
    fig, ax = pyplot().subplots(figsize=(figure_width(len(suite_rows)), 3.8))
    if measured:
        data = [s.result.samples_ms for s in measured]
        ax.boxplot(
            data,
            showfliers=True,
            widths=0.6,
            medianprops={"color": PUBLISHED},
            flierprops={"markersize": 2, "alpha": 0.5},
        )
        ax.set_xticks(range(1, len(measured) + 1), step_labels(measured), rotation=30, ha="right")
        lo, hi = min(min(d) for d in data), max(max(d) for d in data)
        if lo > 0 and hi / lo > 20:
            ax.set_yscale("log")
    ax.set_ylabel("ms per step")
    counts = sorted({len(s.result.samples_ms) for s in measured})
    if counts:
        n = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        subtitle += f" · {n} measured steps per box"
    titles(fig, ax, title, subtitle)
    fig.tight_layout()
    return fig


# Each phase's colour, in the order a step runs them (bench/phases.h): the same phase has the same colour in
# every bar, and compile's one graph sits where forward and backward would.
PHASE_COLOURS = {
    "batch": "#9a9a9a",
    "forward": "#2f6db5",
    "backward": "#7fa7d9",
    "forward_backward": "#4f86c6",
    "comm": "#c0504d",
    "optimizer": "#e0892b",
}


def phase_figure(suite_rows: list[SuiteRow], title: str, subtitle: str):
    """Where each row's step goes: one bar per configuration, its phases' medians stacked in the order the step runs
    them (ms). The phases are measured between marks inside the step; the bars' heights are their medians' sum, which
    the table's whole-step ms/step can differ from slightly."""
    rows = [s for s in suite_rows if s.ok and s.result.phase_medians]
    fig, ax = pyplot().subplots(figsize=(figure_width(len(rows)), 3.8))
    xs = list(range(len(rows)))
    bottoms = [0.0] * len(rows)
    for phase, colour in PHASE_COLOURS.items():
        heights = [dict(s.result.phase_medians).get(phase, 0.0) for s in rows]
        if not any(heights):
            continue
        ax.bar(xs, heights, bottom=bottoms, color=colour, label=phase.replace("_", "+"), width=0.6)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(xs, step_labels(rows), rotation=30, ha="right")
    ax.set_ylabel("ms per step (phase medians)")
    if rows:  # beside the bars, top to bottom as they stack
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.margins(y=0.1)
    titles(fig, ax, title, subtitle)
    fig.tight_layout()
    return fig


def effects_figure(effects: list[FlagEffect], title: str, subtitle: str):
    """Each flag's speedup alone and among all flags, as horizontal bars around 1×."""
    fig, ax = pyplot().subplots(figsize=(7.5, max(2.5, 0.45 * len(effects) + 1.2)))
    ys = list(range(len(effects)))
    h = 0.38
    alone = [e.speedup_alone or 0 for e in effects]
    among = [e.speedup_in_context or 0 for e in effects]
    _paired_bars(
        ax,
        ys,
        alone,
        among,
        ("alone (vs baseline)", "among all (all ÷ all without it)"),
        h,
        lambda v: f"{v:.2f}×" if v else "n/a",
        horizontal=True,
    )
    ax.axvline(1.0, color="#333333", linewidth=0.8)
    ax.set_yticks(ys, [e.flag for e in effects])
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("speedup in tokens/s (×)")
    ax.margins(x=0.15)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    titles(fig, ax, title, subtitle)
    fig.tight_layout()
    return fig


def eager_figure(pairs: list[EagerPair], title: str, subtitle: str):
    """Per configuration, PyTorch eager's time ÷ stepwise's C++ time with its 95% interval; right of 1: C++ faster."""
    shown = [p for p in pairs if p.libtorch.ok and p.python.ok and p.ratio is not None]
    fig, ax = pyplot().subplots(figsize=(7.5, max(2.5, 0.42 * len(shown) + 1.4)))
    ys = list(range(len(shown)))
    values = [p.ratio.value for p in shown]
    bars = ax.barh(ys, values, 0.6, color=OURS)
    ax.errorbar(
        values,
        ys,
        xerr=_error_bars(values, [p.ratio for p in shown]),
        fmt="none",
        ecolor="#222222",
        elinewidth=0.8,
        capsize=2,
    )
    ax.bar_label(bars, labels=[speedup_label(p.ratio) for p in shown], fontsize=7, padding=3)
    ax.axvline(1.0, color="#333333", linewidth=0.8)
    ax.set_yticks(ys, [f"{p.libtorch.suite_name} {p.libtorch.index} {p.libtorch.label}" for p in shown])
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("Python eager time ÷ C++ time (> 1: C++ faster; bars: 95% interval)")
    ax.margins(x=0.2)
    titles(fig, ax, title, subtitle)
    fig.tight_layout()
    return fig


# Bars in the order the table lists them: libtorch eager, its CUDA graph, then the Python implementations.
IMPLEMENTATION_ORDER = [
    IMPLEMENTATION_LABELS["libtorch"],
    IMPLEMENTATION_LABELS["libtorch-graph"],
    *IMPLEMENTATIONS[1:],
]


def compile_figure(groups: list[CompileGroup], published: list[tuple[Reference, float]], title: str, subtitle: str):
    """Per configuration, every implementation's speedup over PyTorch eager with its 95% interval; dashed lines
    are the published torch.compile ÷ eager ratios."""
    shown = [g for g in groups if g.python_eager is not None and g.python_eager.ok]
    present = {label for g in shown for label, r in g.rows() if r.ok}
    labels = [label for label in IMPLEMENTATION_ORDER if label in present] + sorted(present - set(IMPLEMENTATION_ORDER))
    fig, ax = pyplot().subplots(figsize=(max(6.5, 1.6 * len(shown) * max(1, len(labels)) / 3 + 3), 4.2))
    width = 0.8 / max(1, len(labels))
    colors = pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    for k, label in enumerate(labels):
        xs, values, intervals = [], [], []
        for i, g in enumerate(shown):
            r = next((r for lab, r in g.rows() if lab == label and r.ok), None)
            sp = g.over_python_eager(r) if r is not None else None
            if sp is None:
                continue
            xs.append(i - 0.4 + width * (k + 0.5))
            values.append(sp.value)
            intervals.append(sp if r is not g.python_eager else None)
        bars = ax.bar(xs, values, width, label=label, color=colors[k % len(colors)])
        ax.errorbar(
            xs, values, yerr=_error_bars(values, intervals), fmt="none", ecolor="#222222", elinewidth=0.8, capsize=2
        )
        ax.bar_label(bars, labels=[f"×{v:.2f}" for v in values], fontsize=7, padding=2)
    for (ref, x), style in zip(published, ("--", ":", "-.")):
        ax.axhline(
            x,
            color="#555555",
            linestyle=style,
            linewidth=1,
            label=f"published torch.compile ÷ eager: {ref.id} ×{x:.2f}",
        )
    ax.axhline(1.0, color="#333333", linewidth=0.8)
    ax.set_xticks(range(len(shown)), [textwrap.fill(g.title, 28) for g in shown], fontsize=7)
    ax.set_ylabel("× python-eager (tokens/s; bars: 95% interval)")
    ax.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.margins(y=0.15)
    titles(fig, ax, title, subtitle)
    fig.tight_layout()
    return fig


def trend_figure(series: dict[str, list[Point]], title: str, subtitle: str):
    """tok/s and peak memory per configuration over runs; x is the run (commit and date)."""
    runs = sorted({x for points in series.values() for x, _, _ in points})
    pos = {x: i for i, x in enumerate(runs)}
    fig, (ax1, ax2) = pyplot().subplots(2, 1, figsize=(max(8.5, 1.1 * len(runs) + 4), 6.4), sharex=True)
    for name, points in series.items():
        xs = [pos[x] for x, t, _ in points if t is not None]
        ax1.plot(xs, [t for _, t, _ in points if t is not None], marker="o", markersize=3, label=name)
        xm = [pos[x] for x, _, m in points if m is not None]
        ax2.plot(xm, [m / GIB for _, _, m in points if m is not None], marker="o", markersize=3)
    ax1.set_ylabel("tokens/s")
    values = [t for points in series.values() for _, t, _ in points if t]
    if values and max(values) / min(values) > 10:
        ax1.set_yscale("log")
    ax1.yaxis.set_major_formatter(thousands())
    ax2.set_ylabel("peak reserved (GiB)")
    ax2.set_xticks(range(len(runs)), runs, rotation=30, ha="right")
    ax1.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    titles(fig, ax1, title, subtitle)
    fig.tight_layout()
    return fig


# --- trends across runs ---------------------------------------------------------------------------

Point = tuple[str, float | None, float | None]  # (run label, tok/s, peak reserved bytes)


def run_label(run: Run) -> str:
    # Dates first so that sorting labels sorts runs; the commit says what changed.
    commit = run.first.git_commit[:7] + ("+dirty" if run.first.git_dirty else "")
    return f"{run.started:%Y-%m-%d %H:%M:%S} {commit}"


def trend_series(runs: list[Run]) -> dict[tuple[str, str], dict[str, list[Point]]]:
    """{(device, suite): {configuration name: points oldest first}}, only where two or more runs contribute. The points
    of a sweep are left out: they are one measurement at several sizes, not a history (the sweep section lines them
    up)."""
    grouped: dict[tuple[str, str], dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    runs_seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in sorted(runs, key=lambda r: r.started):
        label = run_label(run)
        for group in run.suites:
            key = (group.device, group.name)
            for r in group.results:
                if r.ok and not r.sweep:
                    grouped[key][r.name].append((label, r.tokens_per_s, r.peak_reserved_bytes))
                    runs_seen[key].add(run.run_id)
    return {k: dict(v) for k, v in grouped.items() if len(runs_seen[k]) >= 2}
