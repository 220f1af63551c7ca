"""plots.py: the trend series across runs, and figures written as PNG and reproducible SVG."""

import resultgen as g
from stepwise_report.analysis import build_chain
from stepwise_report.plots import Plotter, memory_figure, trend_series
from stepwise_report.results import Result, group_runs

RUNS = ("20260301T120000Z_a_h100", "20260302T120000Z_b_h100")


def _results(*run_ids):
    return [Result(None, d) for run in run_ids for d in g.cumulative(run, "karpathy", g.KARPATHY[:3])]


def test_trends_need_two_runs_and_are_oldest_first():
    runs = group_runs(_results(*RUNS))
    series = trend_series(runs)
    assert list(series) == [("NVIDIA H100 80GB HBM3 (cuda)", "karpathy")]
    points = series[("NVIDIA H100 80GB HBM3 (cuda)", "karpathy")]["karpathy/00_baseline"]
    assert [label[:10] for label, _, _ in points] == ["2026-03-01", "2026-03-02"]
    assert all(tps > 0 and peak > 0 for _, tps, peak in points)
    assert trend_series(group_runs(_results(RUNS[0]))) == {}  # one run is no trend


def test_figures_are_png_and_svg_and_identical_input_gives_identical_svg(tmp_path):
    steps = build_chain(_results(RUNS[0]))
    plotter = Plotter(tmp_path)
    first = plotter.save(memory_figure(steps, "title", "subtitle"), "run", "a")
    second = plotter.save(memory_figure(steps, "title", "subtitle"), "run", "b")
    assert (first, second) == ("plots/run/a", "plots/run/b") and len(plotter.written) == 4
    assert (tmp_path / "plots/run/a.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "plots/run/a.svg").read_text() == (tmp_path / "plots/run/b.svg").read_text()
