"""The statistics the measure loop stops on, ported line for line from bench/stats.cpp (same ranks, same
clamping, the same NaN noise below two samples). tests/fixtures/stop_rule_cases.json holds both to the same values."""

import math
from dataclasses import dataclass

# Two-sided 95% normal quantile, used for the binomial order-statistic interval of the median.
Z95 = 1.959963984540054


def quantile(sorted_samples, q):
    """Linear interpolation between closest ranks (numpy's default); `sorted_samples` ascending, non-empty."""
    if not sorted_samples:
        raise ValueError("quantile of an empty sample")
    pos = q * (len(sorted_samples) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_samples) - 1)
    return sorted_samples[lo] + (pos - lo) * (sorted_samples[hi] - sorted_samples[lo])


def median_noise(sorted_samples):
    """Relative half-width of the distribution-free 95% CI of the median, from order statistics.

    With few samples the interval spans the whole range, so the noise stays large until enough steps ran.
    """
    if not sorted_samples:
        raise ValueError("noise of an empty sample")
    n = len(sorted_samples)
    half = Z95 * math.sqrt(n) / 2.0
    # 1-based ranks of the interval's ends, clamped to the sample.
    lo_rank = math.floor(n / 2.0 - half)
    hi_rank = math.ceil(n / 2.0 + 1.0 + half)
    lo = min(max(lo_rank, 1), n) - 1
    hi = min(max(hi_rank, 1), n) - 1
    median = quantile(sorted_samples, 0.5)
    if median == 0:
        return 0.0
    return (sorted_samples[hi] - sorted_samples[lo]) / (2.0 * abs(median))


def summary_noise(sorted_samples):
    """The noise the stop rule reads, bench/stats.cpp's Summary::noise: NaN below two samples (one step has
    no interval at all, and calling that 0% noise would let a run stop on noise after one step), else median_noise."""
    return math.nan if len(sorted_samples) < 2 else median_noise(sorted_samples)


@dataclass
class StopRule:
    min_steps: int = 10  # measured unless the time cap comes first (then the run is "short")
    max_steps: int = 200  # hard cap on measured steps
    max_noise: float = 0.01  # stop once the median's relative CI half-width is at most this
    max_time_s: float = 30.0  # hard wall-clock cap on the measured phase


def should_stop(rule, n, noise, elapsed_s):
    """After a chunk: the stop reason for `n` measured steps with this noise and elapsed time, or None."""
    if n >= rule.max_steps:
        return "max_steps"
    if n >= rule.min_steps and noise <= rule.max_noise:
        return "noise"
    if n >= 1 and elapsed_s >= rule.max_time_s:  # a hard cap, once a step was measured (the run is then short)
        return "max_time"
    return None


def stop_after_chunk(rule, times, elapsed_s):
    """After a chunk, the stop reason for the measured step times so far (any order), or None: as
    bench/measure/runner.cpp's should_stop(rule, n, summarize(times).noise, elapsed)."""
    return should_stop(rule, len(times), summary_noise(sorted(times)), elapsed_s)


def time_is_up(rule, n, elapsed_s):
    """Inside a chunk, before each step: the time cap ends the phase once at least one step was measured."""
    return n > 0 and elapsed_s >= rule.max_time_s
