"""A speedup with its interval: the seeded bootstrap of a ratio of medians, the U test, and the noise of a sample.

Step times are noisy, so no ratio is shown or judged without its 95% interval, and the report and the gate must agree
on it: both take it from here. A Speedup is tok/s of one configuration over another's from their raw step times (or a
micro-benchmark case's over its baseline variant's, from the repetitions), with the interval of the same seeded
bootstrap the gate resamples; the two-sided Mann–Whitney U test, the fewest samples with which it can say anything
(its own floor, not a fixed count), and the engine's median-noise rule live beside it because the gate builds its
verdicts from these same pieces.
"""

from __future__ import annotations

import importlib.util
import math
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from ..read.micro import Case
from ..read.results import Result

# The engine's statistics in Python, ported once from bench/stats.cpp and held to it by
# tests/fixtures/stop_rule_cases.json: bench/python/stats.py, which the Python rows stop on. The report reads its
# noise and its normal quantile from there, not from a second port.
ENGINE_STATS_PATH = Path(__file__).resolve().parents[3] / "bench" / "python" / "stats.py"


@cache
def engine_stats():
    spec = importlib.util.spec_from_file_location("stepwise_engine_stats", ENGINE_STATS_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Z95 = engine_stats().Z95
# The median's standard error is about 1.2533 σ/√n (normal data): used only to say how many steps would do.
MEDIAN_SE = 1.2533
# Every interval, the report's and the gate's: one confidence, one seeded bootstrap, one significance level.
CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 0
ALPHA = 0.05


# --- how many samples a verdict needs --------------------------------------------------------------


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value the exact Mann–Whitney U test can give for samples of n1 and n2
    (every value of one side below every value of the other): 2 / C(n1+n2, n1). 1 when a side is empty."""
    if n1 < 1 or n2 < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def floor_samples(alpha: float) -> int:
    """The fewest samples per side with which the U test can reach p < alpha at all: 4 at 0.05
    (2/C(8,4) = 0.029; with 3, the smallest p is 0.1), 5 at 0.01."""
    n = 1
    while smallest_p(n, n) >= alpha:
        n += 1
    return n


def enough_samples(sizes: list[int], alpha: float = ALPHA, min_samples: int | None = None) -> bool:
    """Whether samples of these sizes can give a verdict: every pair can reach p < alpha, and none is
    below `min_samples` (--min-samples) when that was given."""
    if not sizes or min(sizes) < 1:
        return False
    lo = sorted(sizes)[:2] if len(sizes) > 1 else sizes * 2
    if smallest_p(lo[0], lo[1]) >= alpha:
        return False
    return min_samples is None or min(sizes) >= min_samples


def relative_spread(samples: np.ndarray) -> float | None:
    """A robust relative standard deviation (1.4826 × MAD ÷ median; the plain one when the MAD is 0)."""
    if len(samples) < 2:
        return None
    med = float(np.median(samples))
    if med == 0:
        return None
    mad = float(np.median(np.abs(samples - med))) * 1.4826
    return (mad if mad > 0 else float(np.std(samples, ddof=1))) / abs(med)


def median_noise(samples) -> float | None:
    """The engine's stopping-rule quantity (bench/stats.cpp `median_noise`, `summary.step_ms.noise`): the
    relative half-width of the median's distribution-free 95% CI, from order statistics; None below two samples
    (where the engine records no noise)."""
    x = sorted(float(v) for v in samples)
    return None if len(x) < 2 else engine_stats().median_noise(x)


# --- the bootstrap and the U test ----------------------------------------------------------------


def rng_for(seed: int, key: str) -> np.random.Generator:
    # One generator per comparison, seeded by its name, so a verdict does not depend on which
    # other configurations happen to be compared in the same call.
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


def bootstrap_medians(samples: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, len(samples), size=(resamples, len(samples)))
    return np.median(samples[idx], axis=1)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def median_interval(samples, key: str, confidence: float = CONFIDENCE) -> tuple[float, float | None, float | None]:
    """The median of `samples` and the percentile bootstrap of it (RESAMPLES, the generator seeded by SEED and `key`);
    no interval below two samples. scripts/vs_python.py's interval of its rounds' ratios."""
    x = np.asarray(samples, dtype=float)
    if len(x) < 2:
        return float(np.median(x)), None, None
    lo, hi = percentile_interval(bootstrap_medians(x, RESAMPLES, rng_for(SEED, key)), confidence)
    return float(np.median(x)), lo, hi


def u_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann–Whitney U p-value (scipy's exact distribution for small samples without ties)."""
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return 1.0 if np.isnan(p) else p  # both samples constant and equal


def log_ratio_interval(base, cand, confidence: float = CONFIDENCE) -> tuple[float, float, float, float]:
    """(ratio, lo, hi, p) of two samples of positive values, cand over base, as a ratio of geometric means: Welch's
    t-interval on the difference of the logs' means and its two-sided p. For a handful of values per side, each already a
    robust summary (a gated run's per-round speedups), where a bootstrap of medians cannot be narrower than the order
    statistics it resamples. Both sides constant: the interval is the point, and p is 1 when they are equal, else 0."""
    from scipy.stats import t as student

    a, b = np.log(np.asarray(base, dtype=float)), np.log(np.asarray(cand, dtype=float))
    diff = float(b.mean() - a.mean())
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return math.exp(diff), math.exp(diff), math.exp(diff), 1.0 if diff == 0 else 0.0
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))  # Welch–Satterthwaite
    half = float(student.ppf((1 + confidence) / 2, df)) * se
    p = float(2 * student.sf(abs(diff) / se, df))
    return math.exp(diff), math.exp(diff - half), math.exp(diff + half), p


def paired_log_ratio_interval(base, cand, confidence: float = CONFIDENCE) -> tuple[float, float, float, float]:
    """(ratio, lo, hi, p) of paired positive values, cand over base, as the geometric mean of the pairs' ratios: the
    one-sample t-interval on the logs' differences and its two-sided p. For two gated runs interleaved row by row
    (gated_run.py --against), where round k's baseline and candidate values were measured seconds apart, so what the
    machine did in between (a build beside, a neighbour) moves both and drops out of each pair's ratio. Every pair
    the same: the interval is the point, and p is 1 when it is 1, else 0."""
    from scipy.stats import t as student

    a, b = np.log(np.asarray(base, dtype=float)), np.log(np.asarray(cand, dtype=float))
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    d = b - a
    diff = float(d.mean())
    se = float(d.std(ddof=1)) / math.sqrt(len(d))
    if se == 0:
        return math.exp(diff), math.exp(diff), math.exp(diff), 1.0 if diff == 0 else 0.0
    df = len(d) - 1
    half = float(student.ppf((1 + confidence) / 2, df)) * se
    p = float(2 * student.sf(abs(diff) / se, df))
    return math.exp(diff), math.exp(diff - half), math.exp(diff + half), p


def speedup_point(ref: np.ndarray, step: np.ndarray, tokens: float) -> float:
    return tokens * float(np.median(ref)) / float(np.median(step))


# --- a speedup inside one run, with its interval (the report's × previous, × baseline) -------------


@dataclass(frozen=True)
class Speedup:
    """How many times faster `step` is than `ref` in tokens/s, with the 95% interval of the same bootstrap the
    gate uses (ratio of medians of the raw step times, times the tokens-per-step ratio). `lo`/`hi` are None
    when either side has too few steps for an interval."""

    value: float
    lo: float | None
    hi: float | None
    n_ref: int
    n_step: int
    unit: str = "steps"  # what a sample is: steps, or repetitions for micro-benchmarks

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None

    @property
    def measurable(self) -> bool:
        """The interval excludes 1.00: a real gain or loss. Without an interval nothing is measurable."""
        return self.has_interval and (self.lo > 1 or self.hi < 1)

    @property
    def halfwidth(self) -> float | None:
        """The interval's larger distance from the value (for formats that take one ± number)."""
        return max(self.hi - self.value, self.value - self.lo) if self.has_interval else None


def speedup_interval(ref: list[float], step: list[float], tokens: float, key: str, unit: str) -> Speedup:
    a, b = np.asarray(ref, dtype=float), np.asarray(step, dtype=float)
    value = speedup_point(a, b, tokens)
    if not enough_samples([len(a), len(b)]):
        return Speedup(value, None, None, len(a), len(b), unit)
    rng = rng_for(SEED, key)
    ratios = tokens * bootstrap_medians(a, RESAMPLES, rng) / bootstrap_medians(b, RESAMPLES, rng)
    lo, hi = percentile_interval(ratios, CONFIDENCE)
    return Speedup(value, lo, hi, len(a), len(b), unit)


@cache
def speedup(ref: Result, step: Result) -> Speedup | None:
    """tok/s(step) ÷ tok/s(ref) from the raw step times, with its interval; None unless both are measured."""
    if not (ref.ok and step.ok and ref.samples_ms and step.samples_ms and ref.tokens_per_step and step.tokens_per_step):
        return None
    return speedup_interval(
        ref.samples_ms,
        step.samples_ms,
        step.tokens_per_step / ref.tokens_per_step,
        f"{ref.run_id}/{ref.name} {step.run_id}/{step.name}",
        "steps",
    )


def case_speedup(ref: Case, case: Case) -> Speedup | None:
    """A micro-benchmark variant's speedup over its baseline variant (time ratio), with its interval from the
    repetitions; None unless both have repetitions (a file of aggregates only has none to resample)."""
    if not (ref.ok and case.ok and ref.samples and case.samples):
        return None
    return speedup_interval(ref.samples_s, case.samples_s, 1.0, f"{ref.name} {case.name}", "repetitions")
