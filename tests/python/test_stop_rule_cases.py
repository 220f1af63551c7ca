"""bench/python/stats.py held to the shared stop-rule cases, tests/fixtures/stop_rule_cases.json, whose expected values
are bench/stats.cpp's; tests/bench/stats_test.cpp holds the C++ code to the same file. So the Python
rows and the C++ rows stop by one rule, and neither can drift from the other unseen (issue 33 §4)."""

import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "python"))  # the modules of bench/python

from stats import StopRule, median_noise, quantile, should_stop, stop_after_chunk, summary_noise  # noqa: E402

CASES = json.loads((ROOT / "tests" / "fixtures" / "stop_rule_cases.json").read_text())
RELATIVE = 1e-12


def same(actual, expected):
    """Within 1e-12 relative; null in the fixture stands for NaN, and an expected 0 must be exactly 0."""
    if expected is None:
        return math.isnan(actual)
    return abs(actual - expected) <= RELATIVE * abs(expected)


def rule_of(case):
    return StopRule(**case["rule"])


def noise_of(case):
    return math.nan if case["noise"] is None else case["noise"]


@pytest.mark.parametrize("case", CASES["summaries"], ids=lambda c: c["name"])
def test_the_stop_rules_statistics_match_the_shared_cases(case):
    # stats.py ports what the stop rule reads: the quantiles (the median among them) and the noise. The summary's
    # mean, stddev and cv are the C++ side's alone (the C++ test checks them).
    ordered = sorted(case["samples"])
    expected = case["summary"]
    assert len(ordered) == expected["n"]
    assert ordered[0] == expected["min"] and ordered[-1] == expected["max"]
    for key, q in (("median", 0.5), ("p10", 0.1), ("p90", 0.9)):
        assert same(quantile(ordered, q), expected[key]), key
    for q, value in case["quantiles"]:
        assert same(quantile(ordered, q), value), q
    assert same(median_noise(ordered), case["median_noise"])
    assert same(summary_noise(ordered), expected["noise"])


@pytest.mark.parametrize("case", CASES["stop_rule"], ids=lambda c: c["name"])
def test_the_stop_rule_matches_the_shared_cases(case):
    assert should_stop(rule_of(case), case["n"], noise_of(case), case["elapsed_s"]) == case["expected"]


@pytest.mark.parametrize("case", CASES["stop_after_samples"], ids=lambda c: c["name"])
def test_the_stop_after_a_chunk_matches_the_shared_cases(case):
    # The measure loop's decision, from the step times themselves, as the C++ runner composes summarize and should_stop.
    assert same(summary_noise(sorted(case["samples"])), case["noise"])
    assert stop_after_chunk(rule_of(case), case["samples"], case["elapsed_s"]) == case["expected"]


def test_the_shared_cases_cover_the_edges():
    # What the file must keep holding, or the comparison above says little: odd and even sizes, n = 1 and 2, ties,
    # every stop reason and none, and the NaN noise.
    sizes = {len(c["samples"]) for c in CASES["summaries"]}
    assert {1, 2} <= sizes and any(n % 2 for n in sizes - {1}) and any(n % 2 == 0 for n in sizes - {2})
    assert any(len(set(c["samples"])) < len(c["samples"]) for c in CASES["summaries"])
    reasons = {c["expected"] for c in CASES["stop_rule"] + CASES["stop_after_samples"]}
    assert reasons == {"max_steps", "noise", "max_time", None}
    assert any(c["noise"] is None for c in CASES["stop_rule"] + CASES["stop_after_samples"])
