"""plots.py: the trend series across runs, and figures written as PNG and reproducible SVG."""

import resultgen as g
from stepwise_report.analysis.analysis import build_chain
from stepwise_report.cli import main
from stepwise_report.read.results import Result, group_runs
from stepwise_report.render.plots import Plotter, memory_figure, phase_figure, trend_series

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


def _with_phases(doc, split):
    """`doc` with a phases section whose medians are `split` ({name: ms}, in step order), as the engine writes it."""
    n = len(doc["steps"])
    step = doc["summary"]["step_ms"]["median"]
    doc["phases"] = {
        "clock": "cuda_event",
        "phases": [{"name": name, "median_ms": ms, "share": ms / step, "ms": [ms] * n} for name, ms in split.items()],
        "sum_median_ms": sum(split.values()),
        "step_median_ms": step,
        "note": None,
    }
    return doc


def test_the_phase_figure_stacks_each_rows_phases_in_step_order(tmp_path):
    docs = g.cumulative(RUNS[0], "karpathy", g.KARPATHY[:3])
    splits = [
        {"batch": 1.0, "forward": 30.0, "backward": 60.0, "optimizer": 9.0},
        {"batch": 1.0, "forward": 10.0, "backward": 20.0, "optimizer": 3.0},
        {"batch": 1.0, "forward_backward": 25.0, "comm": 2.0, "optimizer": 3.0},
    ]
    for doc, split in zip(docs, splits):
        g.VALIDATOR.validate(_with_phases(doc, split))  # the section as results/schema.json documents it
    steps = build_chain([Result(None, d) for d in docs])
    fig = phase_figure(steps, "title", "subtitle")
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["batch", "forward", "backward", "forward+backward", "comm", "optimizer"]
    by_phase = dict(zip(labels, ax.containers))
    assert all(len(bars) == len(steps) == 3 for bars in by_phase.values())  # one bar per row, one segment per phase
    for row, split in enumerate(splits):
        top = 0.0
        for label in labels:  # stacked in the order a step runs them, each segment its median's height
            bar = by_phase[label][row]
            assert bar.get_y() == top
            assert bar.get_height() == split.get(label.replace("+", "_"), 0.0)
            top += bar.get_height()
        assert top == sum(split.values())
    written = Plotter(tmp_path).save(fig, "run", "phases")
    assert (tmp_path / f"{written}.png").read_bytes()[:4] == b"\x89PNG"


def test_a_suite_with_phases_links_its_phase_figure(tmp_path):
    for doc in g.cumulative(RUNS[0], "karpathy", g.KARPATHY[:3]):
        g.write(tmp_path / "results", _with_phases(doc, {"forward": 40.0, "backward": 50.0, "optimizer": 10.0}))
    out = tmp_path / "reports"
    assert main([str(tmp_path / "results"), "--out", str(out)]) == 0
    figures = sorted(p.name for p in out.rglob("*_phases.png"))
    assert figures == ["karpathy_phases.png"]
    assert "karpathy_phases.png" in (out / "report.md").read_text()
