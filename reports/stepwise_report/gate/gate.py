"""The regression gate's judgement of one change: SAME, FASTER, SLOWER or UNSURE, with its estimate and interval.

Step times are noisy and a gate that cries wolf gets switched off, so every change is judged the same way: a
two-sided Mann–Whitney U test on the raw samples and a seeded bootstrap CI of the ratio of medians (speedup.py), then
a verdict against a threshold. Too few samples is decided by the U test itself, and an UNSURE verdict says how many
samples would be enough. The same two judgements serve every comparison the gate makes: step or iteration times
(compare_samples) and a speedup measured inside each side (compare_speedups); comparison.py decides from the verdicts
whether the gate passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..render.formats import percent_change
from ..stats.speedup import (
    ALPHA,
    CONFIDENCE,
    MEDIAN_SE,
    RESAMPLES,
    SEED,
    Z95,
    bootstrap_medians,
    enough_samples,
    floor_samples,
    log_ratio_interval,
    paired_log_ratio_interval,
    percentile_interval,
    relative_spread,
    rng_for,
    speedup_point,
    u_test,
)

SAME, FASTER, SLOWER, UNSURE = "SAME", "FASTER", "SLOWER", "UNSURE"
LOST, NOT_COMPARED = "LOST", "N/A"
JUDGED = (SAME, FASTER, SLOWER)


@dataclass
class Settings:
    """What the gate judges with: --threshold, --alpha, --min-samples and the bootstrap (--seed, --resamples)."""

    threshold: float = 0.05  # relative change that counts as a regression
    alpha: float = ALPHA
    # None: the statistical floor (the fewest samples with which the U test can reach p < alpha at all);
    # a number raises that floor.
    min_samples: int | None = None
    # The report's intervals use the same bootstrap (speedup.py); these defaults are its.
    resamples: int = RESAMPLES
    seed: int = SEED
    confidence: float = CONFIDENCE

    def as_dict(self, gate: str) -> dict:
        return {
            "threshold": self.threshold,
            "alpha": self.alpha,
            "min_samples": self.min_samples,
            "min_samples_floor": floor_samples(self.alpha),
            "bootstrap_resamples": self.resamples,
            "seed": self.seed,
            "confidence": self.confidence,
            "gate": gate,
        }


@dataclass
class Verdict:
    """One comparison's outcome: SAME/FASTER/SLOWER/UNSURE (or LOST, N/A) with its estimate, interval and p."""

    verdict: str
    ratio: float | None  # the point estimate, as a ratio (candidate over baseline)
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    note: str
    needed: int | None = None  # UNSURE: samples per side that would be enough for a verdict

    def as_dict(self) -> dict:
        return asdict(self)


def untested(verdict: str, note: str) -> Verdict:
    """A verdict reached without statistics (not comparable, or lost)."""
    return Verdict(verdict, None, None, None, None, note)


# --- verdicts -------------------------------------------------------------------------------------


def steps_needed(sets: list[np.ndarray], settings: Settings, halfwidth: float | None = None) -> int:
    """Samples per side that would be enough for a verdict at the threshold: the U test's floor, and
    enough that the 95% CI of the ratio of medians, whose relative half-width is about
    1.96 × 1.2533 × sqrt(Σ spread²/n), fits within ±threshold. When a CI was measured (`halfwidth` at the
    current size), it is scaled by sqrt(n/n') instead of estimated."""
    floor = max(floor_samples(settings.alpha), settings.min_samples or 0)
    n_now = min(len(s) for s in sets)
    t = settings.threshold or 0.01
    if halfwidth is not None and n_now > 0:
        return max(floor, n_now + 1, math.ceil(n_now * (halfwidth / t) ** 2))
    spreads = [relative_spread(s) for s in sets]
    if any(x is None for x in spreads):
        return floor  # one sample on a side: its spread is unknown
    estimate = (Z95 * MEDIAN_SE) ** 2 * sum(x * x for x in spreads) / (t * t)
    return max(floor, math.ceil(estimate))


def _too_few(sizes: dict[str, int], settings: Settings) -> str:
    text = ", ".join(f"{k} {v}" for k, v in sizes.items())
    floor = floor_samples(settings.alpha)
    if settings.min_samples and min(sizes.values()) >= floor:
        return f"too few samples ({text}; --min-samples {settings.min_samples})"
    return f"too few samples ({text}): the U test cannot reach p < {settings.alpha:g} with fewer than {floor} per side"


def _halfwidth(point: float, lo: float, hi: float) -> float:
    return max(hi - point, point - lo) / point if point else float("inf")


def classify(
    ratio: float, lo: float, hi: float, settings: Settings, worse_when_above: bool, p_value: float | None = None
) -> tuple[str, str]:
    """Verdict and note for a ratio with its CI. A change is significant when the CI excludes 1
    (and, where a U test ran, p < alpha); only a significant change beyond the threshold is a
    regression or improvement."""
    t = settings.threshold
    ci_excludes_one = lo > 1 or hi < 1
    significant = ci_excludes_one and (p_value is None or p_value < settings.alpha)
    change = ratio - 1
    if significant:
        if abs(change) <= t:
            return SAME, f"significant change of {percent_change(ratio)} within the ±{100 * t:g}% threshold"
        worse = change > 0 if worse_when_above else change < 0
        return (SLOWER if worse else FASTER), f"{percent_change(ratio)} beyond the ±{100 * t:g}% threshold"
    if 1 - t <= lo and hi <= 1 + t:
        return SAME, "no significant change; the CI lies within the threshold"
    if ci_excludes_one:
        return UNSURE, f"the CI excludes no change but the U test does not (p={p_value:.3g})"
    return UNSURE, "inconclusive: the CI reaches beyond the threshold"


def compare_samples(
    baseline: list[float], candidate: list[float], settings: Settings, key: str, worse_when_above: bool = True
) -> Verdict:
    """Two samples of one measure: ratio of medians candidate/baseline, U test and bootstrap CI. Step times (the
    default) are worse when above 1; a gated run's per-round speedups (round_comparison.py) when below."""
    a, b = np.asarray(baseline, dtype=float), np.asarray(candidate, dtype=float)
    point = float(np.median(b) / np.median(a)) if len(a) and len(b) else None
    if not enough_samples([len(a), len(b)], settings.alpha, settings.min_samples):
        return Verdict(
            UNSURE,
            point,
            None,
            None,
            None,
            _too_few({"baseline": len(a), "candidate": len(b)}, settings),
            steps_needed([a, b], settings) if len(a) and len(b) else None,
        )
    p = u_test(a, b)
    rng = rng_for(settings.seed, key)
    ratios = bootstrap_medians(b, settings.resamples, rng) / bootstrap_medians(a, settings.resamples, rng)
    lo, hi = percentile_interval(ratios, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above, p_value=p)
    needed = steps_needed([a, b], settings, _halfwidth(point, lo, hi)) if verdict == UNSURE else None
    return Verdict(verdict, point, lo, hi, p, note, needed)


def compare_rounds(
    baseline: list[float], candidate: list[float], settings: Settings, worse_when_above: bool, paired: bool = False
) -> Verdict:
    """One measure taken once per round of a gated run (round_comparison.py), a handful of values per side: the
    ratio of their geometric means with Welch's t-interval on the logs and its p (speedup.log_ratio_interval), judged
    against the threshold as every verdict is; `paired` (two runs interleaved row by row, value k of each side
    measured seconds apart): the t-interval on the logs of the pairs' ratios (speedup.paired_log_ratio_interval).
    Too few rounds is the same floor as the U test's, so a definition that passes check_definition is always judged."""
    a, b = np.asarray(baseline, dtype=float), np.asarray(candidate, dtype=float)
    if not enough_samples([len(a), len(b)], settings.alpha, settings.min_samples):
        return Verdict(UNSURE, None, None, None, None, _too_few({"baseline": len(a), "candidate": len(b)}, settings))
    interval = paired_log_ratio_interval if paired else log_ratio_interval
    point, lo, hi, p = interval(a, b, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above, p_value=p)
    needed = steps_needed([a, b], settings, _halfwidth(point, lo, hi)) if verdict == UNSURE else None
    return Verdict(verdict, point, lo, hi, p, note, needed)


def compare_speedups(
    base_ref: list[float],
    base_step: list[float],
    cand_ref: list[float],
    cand_step: list[float],
    token_ratio_base: float,
    token_ratio_cand: float,
    settings: Settings,
    key: str,
) -> Verdict:
    """A speedup measured inside each run, tok/s(step)/tok/s(ref), compared between the runs.

    The ratio is candidate speedup / baseline speedup (below 1: the flags lost some of their gain);
    its CI bootstraps all four step-time samples independently. token_ratio_* is
    tokens per step of the step over the reference (it differs when a step changes the batch).
    """
    sets = [np.asarray(x, dtype=float) for x in (base_ref, base_step, cand_ref, cand_step)]
    n = min(len(s) for s in sets)
    point = (
        speedup_point(sets[2], sets[3], token_ratio_cand) / speedup_point(sets[0], sets[1], token_ratio_base)
        if n
        else None
    )
    if not enough_samples([len(s) for s in sets], settings.alpha, settings.min_samples):
        return Verdict(
            UNSURE,
            point,
            None,
            None,
            None,
            _too_few({"smallest set": n}, settings),
            steps_needed(sets, settings) if n else None,
        )
    rng = rng_for(settings.seed, key)
    br, bs, cr, cs = (bootstrap_medians(s, settings.resamples, rng) for s in sets)
    ratios = (token_ratio_cand * cr / cs) / (token_ratio_base * br / bs)
    lo, hi = percentile_interval(ratios, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above=False)
    needed = steps_needed(sets, settings, _halfwidth(point, lo, hi)) if verdict == UNSURE else None
    return Verdict(verdict, point, lo, hi, None, note, needed)
