"""speedup.py: the report's speedup intervals and the engine's median-noise rule."""

import json

import pytest
from conftest import ROOT, null_coverage
from stepwise_report.inputs import load_inputs
from stepwise_report.micro import Case
from stepwise_report.speedup import (
    CONFIDENCE,
    RESAMPLES,
    case_speedup,
    median_interval,
    median_noise,
    speedup_interval,
)


def test_the_reports_speedup_interval_covers_no_change_95_percent_of_the_time():
    def report(a, b, seed):
        sp = case_speedup(
            Case(f"f/p/base/{seed}", ["f", "p", "base"], samples=a),
            Case(f"f/p/variant/{seed}", ["f", "p", "variant"], samples=b),
        )
        return sp.lo, sp.hi

    assert 0.90 <= null_coverage(report) <= 0.99
    # Step 4's × previous grew 25% (its reference got slower): UNSURE the better way, so not listed.


def test_median_noise_is_the_engines_own_rule():
    # The gate computes the noise of samples that carry none (micro-benchmark repetitions) with the rule the engine
    # stops on (bench/stats.cpp); on every committed CPU result (a real gated run's rounds) it gives exactly
    # the engine's summary.step_ms.noise.
    real = ROOT / "tests" / "reports" / "fixtures" / "gated" / "interleaved_baseline"
    results = [r for r in load_inputs([str(real)]).results if r.ok and len(r.samples_ms) > 1]
    assert len(results) > 20
    for r in results:
        assert median_noise(r.samples_ms) == pytest.approx(r.noise, rel=1e-12), r.name
    assert median_noise([5.0]) is None


def test_the_shared_interval_cases_hold_the_report_to_its_values_and_so_to_the_engines():
    # tests/fixtures/speedup_interval_cases.json holds these values; tests/bench/stats_test.cpp holds the
    # engine's median_ratio_interval (its end-of-run table's "x base [95%]") within their Monte Carlo error, so the
    # terminal and the report give a speedup one interval.
    cases = json.loads((ROOT / "tests" / "fixtures" / "speedup_interval_cases.json").read_text())
    assert cases["resamples"] == RESAMPLES and cases["confidence"] == CONFIDENCE
    for c in cases["cases"]:
        sp = speedup_interval(c["ref_ms"], c["step_ms"], 1.0, c["name"], "steps")
        assert (sp.value, sp.lo, sp.hi) == (c["value"], c["lo"], c["hi"]), c["name"]


def test_the_median_interval_the_scripts_share_covers_its_median_and_is_the_same_each_time():
    # scripts/vs_python.py's interval of its rounds' ratios: the report's bootstrap, seeded by its key.
    ratios = [0.91, 0.95, 0.97, 1.02, 0.99, 0.93, 0.96, 1.04]
    median, lo, hi = median_interval(ratios, "vs_python flash")
    assert lo <= median <= hi and lo >= min(ratios) and hi <= max(ratios)
    assert median_interval(ratios, "vs_python flash") == (median, lo, hi), "seeded: a table never flickers"
    assert median_interval([1.0, 1.0, 1.0], "k") == (1.0, 1.0, 1.0)
    assert median_interval([0.9], "k") == (0.9, None, None), "one round: no interval"


def test_the_reports_median_noise_matches_the_shared_stop_rule_cases():
    # The third implementation of the noise (bench/stats.cpp and bench/python/stats.py are the others) is held
    # to the same fixture, tests/fixtures/stop_rule_cases.json, whose values are the C++ code's.
    cases = json.loads((ROOT / "tests" / "fixtures" / "stop_rule_cases.json").read_text())["summaries"]
    checked = 0
    for case in cases:
        expected = case["median_noise"]
        got = median_noise(case["samples"])
        if len(case["samples"]) < 2:  # unknown, as the engine's summary says for one step (its raw rule gives 0)
            assert got is None, case["name"]
            continue
        assert got == pytest.approx(expected, rel=1e-12, abs=0), case["name"]
        checked += 1
    assert checked >= 3
