"""speedup.py: the report's speedup intervals and the engine's median-noise rule."""

import json
import math

import numpy as np
import pytest
from conftest import ROOT, null_coverage
from scipy.stats import t as student_t
from scipy.stats import ttest_ind, ttest_rel
from stepwise_report.read.inputs import load_inputs
from stepwise_report.read.micro import Case
from stepwise_report.stats.speedup import (
    CONFIDENCE,
    RESAMPLES,
    case_speedup,
    log_ratio_interval,
    median_interval,
    median_noise,
    paired_log_ratio_interval,
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


def test_the_shared_interval_cases_hold_the_one_implementation_to_its_values():
    # tests/fixtures/speedup_interval_cases.json holds these values: the interval every table draws, the terminal's
    # (./report show, at the end of ./ablate) and report.md's alike.
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


def test_the_rounds_interval_is_welchs_on_the_logs_worked_by_hand():
    # Per-round values whose logs are 0, 0.1, 0.2 (baseline) and 0.3, 0.5, 0.7, 0.9 (candidate). By hand: the means'
    # difference is 0.6 - 0.1 = 0.5; the variances of the means 0.01/3 and (0.2/3)/4, so se^2 = 0.02; Welch and
    # Satterthwaite's degrees of freedom 0.02^2 / ((0.01/3)^2 / 2 + (0.2/12)^2 / 3) = 4.0755, not n - 2 = 5.
    base, cand = np.exp([0.0, 0.1, 0.2]), np.exp([0.3, 0.5, 0.7, 0.9])
    half = student_t.ppf(0.975, 4.0755) * math.sqrt(0.02)
    ratio, lo, hi, p = log_ratio_interval(base, cand)
    assert ratio == pytest.approx(math.exp(0.5))
    assert (lo, hi) == pytest.approx((math.exp(0.5 - half), math.exp(0.5 + half)), rel=1e-4)
    assert p == pytest.approx(2 * student_t.sf(0.5 / math.sqrt(0.02), 4.0755), rel=1e-3)
    # And against scipy's own Welch test on the logs (interval and p).
    welch = ttest_ind(np.log(cand), np.log(base), equal_var=False)
    assert (lo, hi) == pytest.approx(tuple(np.exp(welch.confidence_interval(0.95))), rel=1e-9)
    assert p == pytest.approx(welch.pvalue, rel=1e-9)


def test_the_paired_rounds_interval_is_the_one_sample_t_on_the_pairs_logs():
    base, cand = np.exp([0.0, 0.1, 0.3, 0.2]), np.exp([0.1, 0.3, 0.35, 0.4])
    ratio, lo, hi, p = paired_log_ratio_interval(base, cand)
    paired = ttest_rel(np.log(cand), np.log(base))
    assert ratio == pytest.approx(math.exp(0.1375))
    assert (lo, hi) == pytest.approx(tuple(np.exp(paired.confidence_interval(0.95))), rel=1e-9)
    assert p == pytest.approx(paired.pvalue, rel=1e-9)
