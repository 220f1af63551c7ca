"""The statistics ported from bench/stats.cpp, on samples whose values are worked out by hand below, and the
measurement protocol's stop rule, hard time cap and warm-up bound (measure.measure with a fake step)."""

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # the modules of bench/python

from failure import StepFailure  # noqa: E402
from measure import measure  # noqa: E402
from result import finite_or_null  # noqa: E402
from stats import (  # noqa: E402
    StopRule,
    median_noise,
    quantile,
    should_stop,
    stop_after_chunk,
    summary_noise,
    time_is_up,
)
from timers import PerfCounterTimer  # noqa: E402


def test_quantile_interpolates_like_numpy():
    x = [1, 2, 3, 4, 10]  # pos = q * 4: 0.4 -> 1 + 0.4*1; 2 -> 3; 3.6 -> 4 + 0.6*6 (numpy.percentile: 1.4, 3.0, 7.6)
    assert quantile(x, 0.1) == pytest.approx(1.4, abs=1e-12)
    assert quantile(x, 0.5) == 3.0
    assert quantile(x, 0.9) == pytest.approx(7.6, abs=1e-12)
    assert quantile(x, 0.0) == 1 and quantile(x, 1.0) == 10  # hi clamps to the last index
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([7.0], 0.9) == 7.0
    with pytest.raises(ValueError):
        quantile([], 0.5)


# median_noise: half = 1.959963984540054 * sqrt(n) / 2, ends at 1-based ranks floor(n/2 - half) and
# ceil(n/2 + 1 + half) clamped to [1, n], noise = (x[hi] - x[lo]) / (2 |median|).
@pytest.mark.parametrize(
    "sample, expected",
    [
        # n=1: half 0.98, ranks floor(-0.48) = -1 -> 1 and ceil(2.48) = 3 -> 1: one sample has no spread
        ([5.0], 0.0),
        # n=5: half 2.191, ranks floor(0.309) = 0 -> 1 and ceil(5.691) = 6 -> 5: the whole range, (13 - 9) / 22
        ([9, 10, 11, 12, 13], 4 / 22),
        # n=10: half 3.099, ranks floor(1.901) = 1 and ceil(9.099) = 10: the whole range, (10 - 1) / (2 * 5.5)
        (list(range(1, 11)), 9 / 11),
        # n=20: half 4.383, ranks floor(5.617) = 5 and ceil(15.383) = 16: (16 - 5) / (2 * 10.5)
        (list(range(1, 21)), 11 / 21),
        # n=100: half 9.800, ranks floor(40.200) = 40 and ceil(60.800) = 61: (61 - 40) / (2 * 50.5)
        (list(range(1, 101)), 21 / 101),
        ([5.0] * 20, 0.0),  # constant: no noise
        ([-1.0, 0.0, 1.0], 0.0),  # a zero median is defined as no noise, not a division by zero
    ],
)
def test_median_noise_hand_checked(sample, expected):
    assert median_noise(sample) == pytest.approx(expected, abs=1e-12)


def test_median_noise_of_an_empty_sample_is_an_error():
    with pytest.raises(ValueError):
        median_noise([])


def test_one_step_has_unknown_noise_not_zero():
    # As the C++ summary: with one step there is no interval at all, so the noise is NaN and never stops a run, while
    # median_noise itself clamps both ends to the one sample.
    assert median_noise([7.0]) == 0.0 and math.isnan(summary_noise([7.0])) and summary_noise([7.0, 8.0]) > 0
    rule = StopRule(min_steps=1, max_steps=100, max_noise=0.01, max_time_s=5)
    assert stop_after_chunk(rule, [7.0], 0.1) is None
    assert stop_after_chunk(rule, [7.0], 5.0) == "max_time"
    assert stop_after_chunk(rule, [7.0, 7.0], 0.1) == "noise"


def test_the_measure_loop_never_stops_on_the_noise_of_one_step():
    # A chunk of one step at min_steps 1: the runner's rule goes on to a second step, whose identical time is no noise.
    clock = FakeClock()
    run, _ = fake_step(clock, [0.125])
    result = empty_result()
    measure_on(clock, result, run, timing(min_steps=1, max_noise=0.01, check_every=1))
    assert result["stop_reason"] == "noise" and len(result["steps"]) == 2


def test_stop_rule_order():
    rule = StopRule(min_steps=10, max_steps=100, max_noise=0.01, max_time_s=5)
    assert should_stop(rule, 100, 0.0, 100.0) == "max_steps"  # first, whatever the noise and the time
    assert should_stop(rule, 10, 0.005, 100.0) == "noise"  # before the time cap
    assert should_stop(rule, 10, 0.01, 0.1) == "noise"  # at most max_noise
    assert should_stop(rule, 10, 0.05, 6.0) == "max_time"
    assert should_stop(rule, 10, 0.05, 0.1) is None
    assert should_stop(rule, 5, 0.0, 0.1) is None  # noise counts only from min_steps on
    # The time cap is hard: it stops below min_steps too (the run is then "short"), once a step was measured.
    assert should_stop(rule, 5, 0.0, 6.0) == "max_time"
    assert should_stop(rule, 0, 0.5, 100.0) is None
    assert not time_is_up(rule, 0, 100.0)  # at least one measured step
    assert time_is_up(rule, 1, 5.0) and not time_is_up(rule, 1, 4.9)


class FakeClock:
    """Seconds that pass only when a fake step says so: the measure loop's time caps and compile_s read this clock,
    so what they decide is exact on any machine, however slow or loaded. Durations are sums of powers of two, exact
    in binary floating point."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def fake_step(clock, seconds, losses=None):
    """A step that takes `seconds` of the fake clock (a list: one per call, the last repeating) and returns a CPU
    loss."""
    calls = []

    def run():
        clock.now += seconds[min(len(calls), len(seconds) - 1)]
        loss = losses[len(calls)] if losses else 1.0
        calls.append(loss)
        return torch.tensor(loss)

    return run, calls


def measure_on(clock, result, run, timing, **kw):
    """measure() with the step timer and the time caps on the fake clock."""
    measure(result, run, PerfCounterTimer(clock), timing, torch.device("cpu"), now=clock, **kw)


def empty_result():
    return {"warmup": [], "steps": [], "compile_s": None}


def timing(**kw):
    return {
        "warmup": 1,
        "min_steps": 100,
        "max_steps": 100,
        "max_noise": 0.0,
        "max_time_s": 60.0,
        "check_every": 100,
        **kw,
    }


def test_time_cap_stops_inside_a_chunk_and_the_run_is_short():
    clock = FakeClock()
    run, calls = fake_step(clock, [0.125])
    result = empty_result()
    measure_on(clock, result, run, timing(max_time_s=0.5))
    # The cap is checked before each step: 4 steps of 0.125 s reach 0.5 s, not 100 steps of a 100-step chunk.
    assert len(calls) == 1 + 4 and clock.now == 0.625
    assert result["stop_reason"] == "max_time" and result["short"] is True
    assert len(result["steps"]) == 4 and len(result["warmup"]) == 1
    assert all(s["ms"] == 125.0 and s["loss"] == 1.0 for s in result["steps"])
    assert result["memory"]["kind"] == "process_rss" and result["memory"]["peak_rss_bytes"] > 0


def test_a_step_slower_than_the_cap_is_measured_once():
    clock = FakeClock()
    run, _ = fake_step(clock, [2.0])
    result = empty_result()
    measure_on(clock, result, run, timing(max_time_s=0.5, check_every=5))
    assert result["stop_reason"] == "max_time" and result["short"] is True
    assert [s["ms"] for s in result["steps"]] == [2000.0]


def test_max_steps_and_noise_stop_after_a_chunk():
    clock = FakeClock()
    run, _ = fake_step(clock, [0.25, 0.5] * 10)  # times that differ: the noise never reaches max_noise 0
    result = empty_result()
    measure_on(clock, result, run, timing(min_steps=3, max_steps=7, check_every=5))
    assert result["stop_reason"] == "max_steps" and len(result["steps"]) == 7 and not result["short"]
    run, _ = fake_step(clock, [0.25])  # identical times: no noise at all
    result = empty_result()
    measure_on(clock, result, run, timing(min_steps=3, check_every=4))
    assert result["stop_reason"] == "noise" and len(result["steps"]) == 4


def test_warmup_is_bounded_by_the_time_cap_but_not_by_the_compile_step():
    clock = FakeClock()
    run, _ = fake_step(clock, [0.125])
    result = empty_result()
    measure_on(clock, result, run, timing(warmup=50, max_time_s=0.5, min_steps=1, max_steps=1))
    # The bound is checked before each warm-up step after the first: steps start at 0, 0.125, 0.25 and 0.375 s.
    assert len(result["warmup"]) == 4 and result["compile_s"] is None
    # compiled: the first step's 0.75 s is compile_s and does not count against the warm-up's 0.5 s
    clock = FakeClock()
    run, _ = fake_step(clock, [0.75, 0.125])
    result = empty_result()
    measure_on(clock, result, run, timing(warmup=3, max_time_s=0.5, min_steps=1, max_steps=1), compiled=True)
    assert len(result["warmup"]) == 3 and result["compile_s"] == 0.75


def test_a_non_finite_loss_fails_and_keeps_what_was_measured():
    clock = FakeClock()
    run, _ = fake_step(clock, [0.125], losses=[2.0, 1.5, 1.0, math.nan, 0.5, 0.4])
    result = empty_result()
    with pytest.raises(StepFailure, match="loss is nan at measured step 2"):
        measure_on(clock, result, run, timing(check_every=5))
    assert [s["loss"] for s in result["warmup"]] == [2.0]
    assert len(result["steps"]) == 5 and math.isnan(result["steps"][2]["loss"])
    assert finite_or_null(result["steps"])[2]["loss"] is None
