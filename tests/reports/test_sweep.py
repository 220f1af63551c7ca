"""sweep.py: a flag's speedup at every point of a sweep, each against the baseline of its own point with its 95% interval;
the crossover rule; gaps that stay gaps; the figure; and the report's Sweeps section (only for results of a sweep)."""

import math

import pytest
import resultgen as g
from conftest import column
from stepwise_report.analysis.analysis import build_chain, x_baseline
from stepwise_report.cli import main as report_main
from stepwise_report.read.results import Result, group_runs
from stepwise_report.render.formats import fmt_speedup_brief
from stepwise_report.render.sweep import (
    Cell,
    Point,
    crossover,
    crossover_table,
    group_sweeps,
    points_table,
    sweep_figure,
    sweep_notes,
)
from stepwise_report.stats.speedup import Speedup, speedup

PRESETS = ["tiny", "mini", "small", "medium"]
ANCHOR = "sweep-20261125t101500z-sweep-cpu"  # the heading's anchor, as document.Heading makes it
# The flag's speed over the baseline at tiny, mini, small, medium: one crossover of each kind.
SPEEDS = {
    "flash": [0.8, 0.9, 1.3, 1.6],  # crosses over in the middle: small
    "bf16": [1.5, 1.5, 1.5, 1.5],  # a gain at the first point already: always
    "tf32": [0.8, 1.3, 0.9, 1.4],  # crosses at mini, drops back at small
    "compile": [0.9, 0.8, 0.95, 0.9],  # never
}


def _sweeps(docs):
    return group_sweeps([Result(None, d) for d in docs])


def _only(docs):
    (sweep,) = _sweeps(docs)
    (suite,) = sweep.suites
    return sweep, suite


def _row(suite, label):
    return next(r for r in suite.rows if r.label == label)


def _by_point(docs, label):
    """{point index: (that point's baseline, the row labelled `label` there)} as Results."""
    out = {}
    for d in docs:
        if d["suite"]["label"] == label:
            base = next(b for b in docs if b["run_id"] == d["run_id"] and b["suite"]["index"] == 0)
            out[d["sweep"]["index"]] = (Result(None, base), Result(None, d))
    return out


# --- speedups per point ------------------------------------------------------------------------------------------


def test_each_point_is_set_against_its_own_baseline_with_the_shared_interval():
    docs = g.sweep_run(SPEEDS)
    sweep, suite = _only(docs)
    assert sweep.id == g.SWEEP_ID and sweep.axes == ["preset"] and [p.label for p in sweep.points] == PRESETS
    assert [(r.index, r.label) for r in suite.rows] == [(1, "flash"), (2, "bf16"), (3, "tf32"), (4, "compile")]
    for label, speeds in SPEEDS.items():
        pairs = _by_point(docs, label)
        for cell, expected in zip(_row(suite, label).cells, speeds):
            base, row = pairs[cell.point.index]
            # The report's own × baseline with its bootstrap interval, from this point's baseline (each point's
            # baseline runs at a different speed, so another point's would be off by a factor of 2 or more).
            assert cell.speedup == speedup(base, row)
            assert cell.speedup.value == pytest.approx(expected, rel=0.03)
            assert cell.speedup.lo < cell.speedup.value < cell.speedup.hi
    # And the same figure as the × baseline of the point's own run table (build_chain over that run).
    mini = [Result(None, d) for d in docs if d["sweep"]["index"] == 1]
    flash = next(s for s in build_chain(mini) if s.label == "flash")
    assert _row(suite, "flash").cells[1].speedup == x_baseline(flash)


def test_the_table_gives_each_point_with_its_interval_and_the_crossover():
    sweep, suite = _only(g.sweep_run(SPEEDS))
    table = crossover_table(sweep, suite)
    assert table.headers == ["#", "configuration", *PRESETS, "crossover"]
    flash = _row(suite, "flash")
    assert table.rows[0][2:6] == [fmt_speedup_brief(c.speedup) for c in flash.cells]
    assert (
        table.rows[0][4]
        == f"{flash.cells[2].speedup.value:.2f}× [{flash.cells[2].speedup.lo:.2f}–{flash.cells[2].speedup.hi:.2f}]"
    )
    assert column(table, "crossover") == ["small", "always", "mini (not at small)", "never"]
    points = points_table(sweep, suite)
    assert column(points, "run") == [f"{g.SWEEP_ID}_preset-{p}" for p in PRESETS]
    assert column(points, "configurations") == ["5 of 5 ok"] * 4


def test_a_speedup_reads_in_brackets_and_says_when_it_is_no_measurable_change():
    assert fmt_speedup_brief(Speedup(1.234, 1.101, 1.352, 30, 30)) == "1.23× [1.10–1.35]"
    assert fmt_speedup_brief(Speedup(1.06, 0.98, 1.15, 30, 30)) == "1.06× [0.98–1.15] n.s."
    assert fmt_speedup_brief(Speedup(1.06, None, None, 3, 3)) == "1.06× [too few steps for an interval]"
    assert fmt_speedup_brief(None) == "—"


# --- the crossover rule ------------------------------------------------------------------------------------------


def _cells(*intervals):
    """Cells at tiny, mini, ...: (lo, hi) a measured interval, None a gap (skipped), "n" a speedup without one."""
    out = []
    for i, iv in enumerate(intervals):
        point = Point(i, (PRESETS[i],))
        if iv is None:
            out.append(Cell(point, None, gap="skipped"))
        elif iv == "n":
            out.append(Cell(point, None, Speedup(1.3, None, None, 3, 3)))
        else:
            out.append(Cell(point, None, Speedup((iv[0] + iv[1]) / 2, iv[0], iv[1], 30, 30)))
    return out


ABOVE, AROUND, BELOW = (1.2, 1.3), (0.95, 1.05), (0.8, 0.9)


def test_crossover_is_the_first_point_whose_interval_lies_above_one():
    assert crossover(_cells(BELOW, AROUND, BELOW, AROUND)) == "never"
    assert crossover(_cells(ABOVE, ABOVE, ABOVE, ABOVE)) == "always"
    assert crossover(_cells(BELOW, AROUND, ABOVE, ABOVE)) == "small"
    assert crossover(_cells(BELOW, ABOVE, AROUND, ABOVE)) == "mini (not at small)"
    assert crossover(_cells(ABOVE, BELOW, ABOVE, BELOW)) == "always (not at mini, medium)"


def test_a_lower_end_at_one_is_not_above_it():
    assert crossover(_cells((1.0, 1.2), ABOVE)) == "mini"
    assert crossover(_cells((1.0, 1.2))) == "never"


def test_gaps_and_missing_intervals_are_neither_a_crossover_nor_a_drop():
    assert crossover(_cells(None, "n", ABOVE, ABOVE)) == "small", "a gap and a point without an interval do not count"
    assert crossover(_cells(ABOVE, None, "n", ABOVE)) == "always (no interval at mini, small)"
    assert crossover(_cells(ABOVE, None, BELOW)) == "always (not at small; no interval at mini)"
    assert crossover(_cells(None, "n")) == "—", "nothing judged: no verdict, not 'never'"


# --- gaps ----------------------------------------------------------------------------------------------------------


def test_a_skipped_configuration_a_missing_baseline_and_a_missing_point_are_gaps_never_zero():
    docs = g.sweep_run(
        SPEEDS,
        skip={("flash", 2): "flash needs a GPU at this size", ("baseline", 1): "out of memory"},
        points=[0, 1, 2],  # medium never ran
    )
    sweep, suite = _only(docs)
    flash = _row(suite, "flash")
    assert [c.gap for c in flash.cells] == [None, "no baseline", "skipped", "missing"]
    assert [c.speedup is None for c in flash.cells] == [False, True, True, True]
    assert [c.gap for c in _row(suite, "bf16").cells] == [None, "no baseline", None, "missing"]
    table = crossover_table(sweep, suite)
    assert table.rows[0][2:6] == [fmt_speedup_brief(flash.cells[0].speedup), "no baseline", "skipped", "missing"]
    assert column(table, "crossover")[:2] == ["never", "always (no interval at mini, medium)"]
    assert column(points_table(sweep, suite), "baseline tok/s")[1:] == ["skipped", "1,695", "—"]
    # In the figure the line breaks at a gap: NaN, never 0, and the gap says what it is at 1.00.
    fig = sweep_figure(sweep, suite, "t", "s")
    ax = fig.axes[0]
    ys = next(line for line in ax.get_lines() if line.get_marker() == "o").get_ydata()
    assert not math.isnan(ys[0]) and all(math.isnan(y) for y in ys[1:])
    assert sorted(t.get_text() for t in ax.texts) == ["missing", "no baseline", "skipped"]


def test_a_result_outside_the_axes_is_named_not_dropped():
    docs = g.sweep_run(SPEEDS)
    stray = docs[-1]
    stray["sweep"] = dict(stray["sweep"], index=7)
    sweep, suite = _only(docs)
    assert sweep.stray and sweep.stray[0].name == stray["name"]
    assert _row(suite, "compile").cells[3].gap == "missing"
    assert any(f"{stray['run_id']}/{stray['name']}" in n and "outside its axes" in n for n in sweep_notes(sweep, suite))


# --- the figure --------------------------------------------------------------------------------------------------


def test_the_figure_has_a_panel_per_configuration_with_its_band_and_the_line_at_one():
    sweep, suite = _only(g.sweep_run(SPEEDS))
    fig = sweep_figure(sweep, suite, "t", "s")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(suite.rows) == 4
    for ax, row in zip(panels, suite.rows):
        assert ax.get_title(loc="left") == f"{row.index} {row.label} · crossover: {row.crossover}"
        assert [t.get_text() for t in ax.get_xticklabels()] == PRESETS
        (line,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
        assert list(line.get_ydata()) == [c.speedup.value for c in row.cells]
        assert any(list(line.get_ydata()) == [1.0, 1.0] for line in ax.get_lines()), "the line at 1.00"
        (band,) = ax.collections
        ys = band.get_paths()[0].vertices[:, 1]
        assert min(ys) == pytest.approx(min(c.speedup.lo for c in row.cells))
        assert max(ys) == pytest.approx(max(c.speedup.hi for c in row.cells))


def test_two_axes_put_the_first_on_x_and_draw_a_line_per_value_of_the_second():
    values = {"preset": ["tiny", "mini"], "seq_len": [64, 128, 256]}
    speeds = {"flash": [0.8, 0.9, 1.1, 1.2, 1.4, 1.7]}  # product order: (tiny, 64), (tiny, 128), ... (mini, 256)
    sweep, suite = _only(g.sweep_run(speeds, axes=["preset", "seq_len"], values=values))
    assert [p.values for p in sweep.points][:4] == [("tiny", 64), ("tiny", 128), ("tiny", 256), ("mini", 64)]
    assert [p.label for p in sweep.points][1] == "tiny · 128"
    assert [c.point.index for c in suite.rows[0].cells] == list(range(6))
    assert crossover_table(sweep, suite).rows[0][-1] == "tiny · 256"
    ax = sweep_figure(sweep, suite, "t", "s").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tiny", "mini"] and ax.get_xlabel() == "preset"
    lines = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert [line.get_label() for line in lines] == ["seq_len 64", "seq_len 128", "seq_len 256"]
    for j, line in enumerate(lines):
        assert list(line.get_ydata()) == pytest.approx([speeds["flash"][j], speeds["flash"][3 + j]], rel=0.03)


def test_three_axes_put_the_points_on_x_with_combined_labels():
    values = {"preset": ["tiny", "mini"], "seq_len": [64], "batch_size": [4, 8]}
    sweep, suite = _only(g.sweep_run({"flash": [1.2] * 4}, axes=list(values), values=values))
    ax = sweep_figure(sweep, suite, "t", "s").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "tiny · 64 · 4",
        "tiny · 64 · 8",
        "mini · 64 · 4",
        "mini · 64 · 8",
    ]


# --- the report ----------------------------------------------------------------------------------------------------


def test_the_report_has_a_sweeps_section_with_its_figure_and_the_dashboard_shows_it(tmp_path):
    docs = g.sweep_run(SPEEDS)
    docs.append(g.python_row(docs[1], "python-eager", sweep=docs[1]["sweep"]))  # tiny's flash, in PyTorch eager
    for doc in docs:
        g.write(tmp_path / "r", doc)
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert f"## sweep {g.SWEEP_ID}" in md and f"- [sweep {g.SWEEP_ID}](#{ANCHOR})" in md
    assert "axes preset (tiny, mini, small, medium): 4 points" in md
    assert "### one_at_a_time: × baseline across preset" in md
    assert "| # | configuration | tiny | mini | small | medium | crossover |" in md
    assert "| mini (not at small) |" in md and "| never |" in md
    assert "crossover: the first point, in the order run, at which the 95% interval's lower end lies above 1.00" in md
    assert "1 PyTorch Python rows (python-eager) are left out" in md
    section = md.split(f"## sweep {g.SWEEP_ID}")[1].split("\n## ")[0]
    assert section.count("| 1 | flash |") == 1, "the Python row is not a configuration of the sweep"
    # Every point is still a run with its sections, and its header names the sweep.
    assert f"## run {g.SWEEP_ID}_preset-mini" in md
    assert f"| sweep | {g.SWEEP_ID}, point 2 of 4: preset mini |" in md
    assert f"![one_at_a_time: × baseline across preset](plots/{g.SWEEP_ID}/one_at_a_time_sweep.png)" in md
    for suffix in ("png", "svg"):
        assert (tmp_path / "out" / "plots" / g.SWEEP_ID / f"one_at_a_time_sweep.{suffix}").is_file()
    page = (tmp_path / "out" / "dashboard.html").read_text()
    assert f'<h2 id="{ANCHOR}">sweep {g.SWEEP_ID}</h2>' in page and "mini (not at small)" in page
    # The points are sizes, not a history: no trend line joins them.
    assert "## trends across runs" not in md and not (tmp_path / "out" / "plots" / "trends").exists()


def test_the_points_of_a_sweep_are_runs_newest_last_point_first():
    # They share the sweep's stamp; the sweep ran them in its order.
    runs = group_runs([Result(None, d) for d in g.sweep_run(SPEEDS)])
    assert [run.run_id.rsplit("-", 1)[1] for run in runs] == ["medium", "small", "mini", "tiny"]


def test_last_counts_sweeps_and_the_dashboard_shows_the_newest(tmp_path):
    older = "20261124T101500Z_sweep_cpu"
    for doc in g.sweep_run(SPEEDS) + g.sweep_run(SPEEDS, sweep_id=older):
        g.write(tmp_path / "r", doc)
    assert [
        s.id for s in group_sweeps([Result(None, d) for d in g.sweep_run(SPEEDS, sweep_id=older) + g.sweep_run(SPEEDS)])
    ] == [
        g.SWEEP_ID,
        older,
    ], "newest first"
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "all")]) == 0
    md = (tmp_path / "all" / "report.md").read_text()
    assert md.index(f"## sweep {g.SWEEP_ID}") < md.index(f"## sweep {older}")
    page = (tmp_path / "all" / "dashboard.html").read_text()
    assert f">sweep {g.SWEEP_ID}</h2>" in page and f">sweep {older}</h2>" not in page
    assert "older sweeps are in report.md" in page
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "last"), "--last", "1"]) == 0
    md = (tmp_path / "last" / "report.md").read_text()
    assert f"## sweep {g.SWEEP_ID}" in md and f"## sweep {older}" not in md
    assert "| 1 | flash | 0.80× [" in md, "a sweep shown is shown with every point, whatever --last leaves of its runs"


def test_results_without_a_sweep_have_no_sweeps_section(report_out, two_runs):
    from stepwise_report.read.inputs import load_inputs

    assert group_sweeps(load_inputs([str(two_runs)]).results) == []
    md = (report_out / "report.md").read_text()
    assert "## sweep" not in md and "sweep(s)" not in md and "| sweep |" not in md
    assert not list((report_out / "plots").rglob("*_sweep.png"))
