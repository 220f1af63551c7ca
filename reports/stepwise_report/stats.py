"""The regression gate's statistics: Mann–Whitney U, seeded bootstrap CIs, and the SAME/FASTER/SLOWER/UNSURE verdict."""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass

import numpy as np

SAME, FASTER, SLOWER, UNSURE = "SAME", "FASTER", "SLOWER", "UNSURE"


@dataclass
class Settings:
    threshold: float = 0.05  # relative change that counts as a regression
    alpha: float = 0.05
    min_samples: int = 9  # google/benchmark's compare.py asks for 9+ repetitions for its U test
    resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95


@dataclass
class Verdict:
    verdict: str
    ratio: float | None  # the point estimate, as a ratio (candidate over baseline)
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    note: str

    def as_dict(self) -> dict:
        return asdict(self)


def rng_for(settings: Settings, key: str) -> np.random.Generator:
    # One generator per comparison, seeded by its name, so a verdict does not depend on which
    # other configurations happen to be compared in the same call.
    return np.random.default_rng([settings.seed, zlib.crc32(key.encode())])


def bootstrap_medians(samples: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, len(samples), size=(resamples, len(samples)))
    return np.median(samples[idx], axis=1)


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def classify(ratio: float, lo: float, hi: float, settings: Settings, worse_when_above: bool,
             p_value: float | None = None) -> tuple[str, str]:
    """Verdict and note for a ratio with its CI. A change is significant when the CI excludes 1
    (and, where a U test ran, p < alpha); only a significant change beyond the threshold is a
    regression or improvement."""
    t = settings.threshold
    ci_excludes_one = lo > 1 or hi < 1
    significant = ci_excludes_one and (p_value is None or p_value < settings.alpha)
    change = ratio - 1
    if significant:
        if abs(change) <= t:
            return SAME, f"significant change of {100 * change:+.1f}% within the ±{100 * t:g}% threshold"
        worse = change > 0 if worse_when_above else change < 0
        return (SLOWER if worse else FASTER), f"{100 * change:+.1f}% beyond the ±{100 * t:g}% threshold"
    if 1 - t <= lo and hi <= 1 + t:
        return SAME, "no significant change; the CI lies within the threshold"
    if ci_excludes_one:
        return UNSURE, f"the CI excludes no change but the U test does not (p={p_value:.3g})"
    return UNSURE, "inconclusive: the CI reaches beyond the threshold"


def compare_samples(baseline: list[float], candidate: list[float], settings: Settings, key: str) -> Verdict:
    """Step times (lower is better): ratio of medians candidate/baseline, U test and bootstrap CI."""
    a, b = np.asarray(baseline, dtype=float), np.asarray(candidate, dtype=float)
    point = float(np.median(b) / np.median(a)) if len(a) and len(b) else None
    if min(len(a), len(b)) < settings.min_samples:
        return Verdict(UNSURE, point, None, None, None,
                       f"too few samples (baseline {len(a)}, candidate {len(b)}; need ≥{settings.min_samples})")
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    if np.isnan(p):
        p = 1.0  # both samples constant and equal
    rng = rng_for(settings, key)
    ratios = bootstrap_medians(b, settings.resamples, rng) / bootstrap_medians(a, settings.resamples, rng)
    lo, hi = _interval(ratios, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above=True, p_value=p)
    return Verdict(verdict, point, lo, hi, p, note)


def compare_speedups(base_ref: list[float], base_step: list[float], cand_ref: list[float], cand_step: list[float],
                     token_ratio_base: float, token_ratio_cand: float, settings: Settings, key: str) -> Verdict:
    """A speedup measured inside each run, tok/s(step)/tok/s(ref), compared between the runs.

    The ratio is candidate speedup / baseline speedup (below 1: the flags lost some of their gain);
    its CI bootstraps all four step-time samples independently. token_ratio_* is
    tokens per step of the step over the reference (it differs when a step changes the batch).
    """
    sets = [np.asarray(x, dtype=float) for x in (base_ref, base_step, cand_ref, cand_step)]
    n = min(len(s) for s in sets)

    def speedup(ref, step, tokens) -> float:
        return tokens * float(np.median(ref)) / float(np.median(step))

    point = (speedup(sets[2], sets[3], token_ratio_cand) / speedup(sets[0], sets[1], token_ratio_base)
             if n else None)
    if n < settings.min_samples:
        return Verdict(UNSURE, point, None, None, None, f"too few samples (smallest set {n}; need ≥{settings.min_samples})")
    rng = rng_for(settings, key)
    br, bs, cr, cs = (bootstrap_medians(s, settings.resamples, rng) for s in sets)
    ratios = (token_ratio_cand * cr / cs) / (token_ratio_base * br / bs)
    lo, hi = _interval(ratios, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above=False)
    return Verdict(verdict, point, lo, hi, None, note)
