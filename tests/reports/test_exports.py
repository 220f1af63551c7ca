"""Each export's shape against the documented fields of its format."""

import json
import re

import pytest
import resultgen as g
from stepwise_report.read.results import Result
from stepwise_report.render.exports import FILES, bench_name, bmf, gbench, github_action_benchmark, write_exports
from stepwise_report.stats.speedup import speedup

RUN = "20260301T120000Z_t_h100"
ITERATION_KEYS = {
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
}
AGGREGATE_KEYS = (ITERATION_KEYS - {"repetition_index"}) | {"aggregate_name", "aggregate_unit"}


@pytest.fixture(scope="module")
def results():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:4], skip={1: "not here"})
    return [Result(None, d) for d in docs]


def test_gbench_rows_repetitions_and_aggregates(results):
    out = gbench(results)
    assert out["context"]["caches"] == [] and "json_schema_version" not in out["context"]
    assert all(isinstance(v, (str, int, list)) for v in out["context"].values())
    rows = out["benchmarks"]
    measured = [r for r in results if r.ok]
    names = [bench_name(r) for r in measured]
    assert names == ["raschka/00_baseline", "raschka/02_tf32", "raschka/03_fused_AdamW"]
    for family, (name, r) in enumerate(zip(names, measured)):
        its = [b for b in rows if b["name"] == name]
        aggs = [b for b in rows if b["run_type"] == "aggregate" and b["run_name"] == name]
        assert len(its) == len(r.samples_ms) == its[0]["repetitions"]
        for i, b in enumerate(its):
            assert ITERATION_KEYS <= b.keys()
            assert (b["run_type"], b["iterations"], b["threads"], b["time_unit"]) == ("iteration", 1, 1, "ms")
            assert b["repetition_index"] == i and b["family_index"] == family
            assert b["real_time"] == r.samples_ms[i]
            assert b["tokens_per_s"] == pytest.approx(r.tokens_per_step * 1000 / r.samples_ms[i])
            assert 0 < b["mfu"] < 1
        assert [a["aggregate_name"] for a in aggs] == ["mean", "median", "stddev", "cv"]
        for a in aggs:
            assert AGGREGATE_KEYS <= a.keys() and a["name"] == f"{name}_{a['aggregate_name']}"
            assert a["aggregate_unit"] == ("percentage" if a["aggregate_name"] == "cv" else "time")
            assert a["iterations"] == len(r.samples_ms)
        assert aggs[1]["real_time"] == r.median_ms
    assert not any(" " in b["name"] for b in rows)


def test_gbench_aggregates_only(results):
    rows = gbench(results, aggregates_only=True)["benchmarks"]
    assert rows and all(b["run_type"] == "aggregate" for b in rows)
    assert len({b["name"] for b in rows}) == len(rows)  # one value per name, as dashboards want


def test_github_action_benchmark_arrays(results):
    bigger, smaller = github_action_benchmark(results)
    assert len([e for e in bigger if e["unit"] == "tok/s"]) == 3 and len(smaller) == 6
    for entry in bigger + smaller:
        assert {"name", "unit", "value"} <= entry.keys()
        assert isinstance(entry["name"], str) and isinstance(entry["unit"], str)
        assert isinstance(entry["value"], float)
        assert isinstance(entry["extra"], str)
        if "range" in entry:
            # The action parses ranges as "± <number>".
            assert re.fullmatch(r"± \d[\d.e+-]*", entry["range"])
    assert {e["unit"] for e in bigger} == {"tok/s", "x"} and {e["unit"] for e in smaller} == {"ms", "MiB"}
    tf32 = next(r for r in results if r.name.endswith("tf32"))
    assert next(e for e in smaller if e["name"] == "raschka/02_tf32/step_ms")["value"] == tf32.median_ms


def test_bmf_measures(results):
    out = bmf(results)
    assert set(out) == {"raschka/00_baseline", "raschka/02_tf32", "raschka/03_fused_AdamW"}
    r = next(r for r in results if r.name == "raschka/02_tf32")
    m = out["raschka/02_tf32"]
    assert m["latency"]["value"] == pytest.approx(r.median_ms * 1e6)  # nanoseconds
    assert m["latency"]["lower_value"] <= m["latency"]["value"] <= m["latency"]["upper_value"]
    assert m["throughput"]["value"] == pytest.approx(r.tokens_per_s)
    assert m["throughput"]["lower_value"] <= m["throughput"]["value"] <= m["throughput"]["upper_value"]
    assert m["peak-memory"]["value"] == r.peak_reserved_bytes
    for measures in out.values():
        for metric in measures.values():
            assert set(metric) <= {"value", "lower_value", "upper_value"}
            assert all(isinstance(v, float) for v in metric.values())


def test_speedups_carry_their_95_percent_interval(results):
    """× baseline and × previous in both CI formats, with the interval of the gate's bootstrap."""
    sp = speedup(results[0], results[2])  # tf32 over the baseline
    bigger, _ = github_action_benchmark(results)
    entries = {e["name"]: e for e in bigger}
    tf32 = entries["raschka/02_tf32/speedup_vs_baseline"]
    assert tf32["value"] == pytest.approx(sp.value) and tf32["unit"] == "x"
    assert tf32["range"] == f"± {sp.halfwidth:.4g}" and f"95% CI {sp.lo:.4g}–{sp.hi:.4g}" in tf32["extra"]
    assert "vs raschka/00_baseline" in tf32["extra"]
    # × previous spans the skipped step 1, so it is against the baseline too; step 3's is against step 2.
    assert entries["raschka/02_tf32/speedup_vs_previous"]["value"] == pytest.approx(sp.value)
    assert "vs raschka/02_tf32" in entries["raschka/03_fused_AdamW/speedup_vs_previous"]["extra"]
    assert "raschka/00_baseline/speedup_vs_baseline" not in entries  # the reference has no speedup
    m = bmf(results)["raschka/02_tf32"]["speedup-vs-baseline"]
    assert m == {
        "value": pytest.approx(sp.value),
        "lower_value": pytest.approx(sp.lo),
        "upper_value": pytest.approx(sp.hi),
    }


def test_a_speedup_without_a_measurable_change_says_so():
    docs = g.cumulative(RUN, "raschka", g.RASCHKA[:2])  # dynamic mask: 1.00×
    bigger, _ = github_action_benchmark([Result(None, d) for d in docs])
    entry = next(e for e in bigger if e["name"] == "raschka/01_dynamic_mask/speedup_vs_baseline")
    assert entry["extra"].endswith("; no measurable change")


def test_files_written(tmp_path, results):
    paths = write_exports(tmp_path, results)
    assert sorted(p.name for p in paths) == sorted(FILES)
    for p in paths:
        json.loads(p.read_text())
