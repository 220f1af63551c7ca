"""The regression gate's judgement, as data: what `./report compare` decides before anything is printed.

Step times are noisy and a gate that cries wolf gets switched off, so every change is judged the same way: a
two-sided Mann–Whitney U test on the raw samples and a seeded bootstrap CI of the ratio of medians (speedup.py), then
a SAME/FASTER/SLOWER/UNSURE verdict against a threshold. Too few samples is decided by the U test itself, and an
UNSURE row says how many samples would be enough. The same rule judges two runs (configurations keyed by suite, index,
label and implementation) and two micro-benchmark files (cases keyed by name), on absolute times and on the speedups
measured inside each side; a configuration ok in the baseline and missing, skipped or failed in the candidate is
lost. `gate_reasons` is the one rule that says what fails the gate, and Comparison.exit_code the one place the exit
status (0 pass, 1 fail, 3 nothing judged, or a possible regression UNSURE because of the noise) is decided: the gate
never passes what it could not judge.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .analysis import build_chain
from .formats import percent_change
from .inputs import Inputs
from .micro import Case, MicroFile
from .results import InputError, Result, devices
from .speedup import (
    ALPHA,
    CONFIDENCE,
    MEDIAN_SE,
    RESAMPLES,
    SEED,
    Z95,
    bootstrap_medians,
    enough_samples,
    floor_samples,
    median_noise,
    percentile_interval,
    relative_spread,
    rng_for,
    speedup_point,
    u_test,
)

SAME, FASTER, SLOWER, UNSURE = "SAME", "FASTER", "SLOWER", "UNSURE"
LOST, NOT_COMPARED = "LOST", "N/A"
JUDGED = (SAME, FASTER, SLOWER)
KIND_NAMES = {"stepwise": "stepwise run (result files)", "micro": "micro-benchmark file (google/benchmark JSON)"}
# Exit status of `./report compare`; the printed verdict is derived from the same value.
EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_NOTHING_JUDGED = 0, 1, 2, 3


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


# --- verdicts ---------------------------------------------------------------------------------------


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


def compare_samples(baseline: list[float], candidate: list[float], settings: Settings, key: str) -> Verdict:
    """Step times (lower is better): ratio of medians candidate/baseline, U test and bootstrap CI."""
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
    verdict, note = classify(point, lo, hi, settings, worse_when_above=True, p_value=p)
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


# --- the outcome ---------------------------------------------------------------------------------


def gate_reasons(
    abs_rows: list[dict], rel_rows: list[dict], loss_rows: list[dict], lost: list[dict], which: str, measure: str
) -> list[str]:
    """Why the gate fails (empty: it passes), for runs and micro-benchmark files alike: a SLOWER row of a
    comparison `which` gates, a configuration ok in the baseline and missing, skipped or failed in the candidate
    (unless --allow-missing), a loss check newly 'math changed'. UNSURE never fails; an UNSURE row beyond the
    threshold the worse way keeps the gate from passing instead (`beyond_threshold_unsure`, exit 3)."""
    reasons = []
    if which in ("absolute", "both"):
        reasons += [
            f"{r['name']}: {measure} {percent_change(r['ratio'])} (SLOWER)" for r in abs_rows if r["verdict"] == SLOWER
        ]
    if which in ("relative", "both"):
        reasons += [
            f"{r['name']}: {r['speedup']} {percent_change(r['ratio'])} (speedup lost)"
            for r in rel_rows
            if r["verdict"] == SLOWER
        ]
    reasons += [f"{r['name']}: {r['note']}" for r in lost if not r["allowed"]]
    reasons += [f"{r['name']}: loss check newly 'math changed'" for r in loss_rows if r["regression"]]
    return reasons


def noise_entry(
    side: str, name: str, samples, noise: float | None, max_noise: float | None, noisy: bool | None = None
) -> dict:
    """One side's measurement behind a row: its relative noise (`summary.step_ms.noise`, else the same quantity from
    its samples) against the --max-noise it was measured with (None for micro-benchmark files, which have none)."""
    noise = noise if noise is not None else median_noise(samples)
    if noisy is None:
        noisy = noise is None or (max_noise is not None and noise > max_noise)
    return {
        "side": side,
        "name": name,
        "noise": noise,
        "max_noise": max_noise,
        "noisy": bool(noisy),
        "spread": relative_spread(np.asarray(samples, dtype=float)),
    }


def result_noise(side: str, r: Result) -> dict:
    return noise_entry(side, r.name, r.samples_ms, r.noise, r.max_noise, r.noisy)


def worse_beyond(ratio: float | None, threshold: float, worse_when_above: bool) -> bool:
    """The point estimate lies beyond the threshold in the direction that would be a regression."""
    if ratio is None:
        return False
    return ratio > 1 + threshold if worse_when_above else ratio < 1 - threshold


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.{0 if x >= 0.1 else 1}f}%"


def whose_noise(row: dict) -> str:
    """Why an UNSURE row's interval is too wide to judge: which side's own noise is above the --max-noise it was
    measured with (both, one, or neither, then the noisier side), or too few samples for an interval at all."""
    if row.get("ci_low") is None:
        return row["note"]
    entries = row.get("noise") or []
    if not entries:
        return row["note"]

    def describe(e: dict) -> str:
        limit = (
            f"above its --max-noise {100 * e['max_noise']:g}%"
            if e["noisy"] and e["max_noise"] is not None
            else "unknown"
            if e["noise"] is None
            else f"within its --max-noise {100 * e['max_noise']:g}%"
            if e["max_noise"] is not None
            else "no --max-noise recorded"
        )
        return f"{e['name']} noise {_pct(e['noise'])} ({limit})"

    over = [e for e in entries if e["noisy"]]
    if over:
        sides = list(dict.fromkeys(e["side"] for e in over))
        who = " and the ".join(f"{side}'s" for side in sides)
        return f"the {who} own noise made the interval wide: " + "; ".join(f"{e['side']} {describe(e)}" for e in over)
    worst = max(entries, key=lambda e: e["noise"] if e["noise"] is not None else -1.0)
    if all(e["max_noise"] is None for e in entries):
        return (
            f"the noisier side is the {worst['side']}'s ({worst['name']} noise {_pct(worst['noise'])}; "
            f"no --max-noise is recorded to hold it to): more samples would narrow the interval"
        )
    return (
        f"neither side's noise is above its --max-noise; the noisier is the {worst['side']}'s "
        f"({describe(worst)}): more samples would narrow the interval"
    )


def lost_row(name: str, candidate: str, reason: str | None, allowed: bool) -> dict:
    """A configuration ok in the baseline that the candidate lost: `candidate` is missing, skipped or failed."""
    where = "missing from the candidate" if candidate == "missing" else f"{candidate} in the candidate"
    note = f"ok in the baseline, {where}" + (f": {reason}" if reason else "")
    return {"name": name, "baseline": "ok", "candidate": candidate, "reason": reason, "note": note, "allowed": allowed}


def _lost_verdict(row: dict) -> Verdict:
    return untested(
        NOT_COMPARED if row["allowed"] else LOST,
        row["note"] + (" (not compared: --allow-missing)" if row["allowed"] else ""),
    )


@dataclass
class Comparison:
    """Everything `./report compare` decided; compare.json is `as_dict()`."""

    kind: str  # "stepwise" (two runs) or "micro" (two micro-benchmark files)
    headlines: tuple[str, str]  # one line naming each side, baseline first
    baseline: dict
    candidate: dict
    settings: Settings
    gate: str  # which comparison can fail the gate: relative, absolute or both
    same_device: bool
    absolute: list[dict]
    relative: list[dict]
    loss: list[dict]
    lost: list[dict]  # ok in the baseline, missing/skipped/failed in the candidate
    only_in_baseline: list[str]
    only_in_candidate: list[str]
    reasons: list[str]  # why the gate fails; empty when it passes
    allow_missing: bool = False
    allow_unsure: bool = False  # UNSURE rows beyond the threshold the worse way are listed, not exit 3

    @property
    def gates_absolute(self) -> bool:
        return self.gate in ("absolute", "both") and self.same_device

    @property
    def gates_relative(self) -> bool:
        return self.gate in ("relative", "both")

    @property
    def gated_rows(self) -> list[dict]:
        """The rows whose verdict can fail the gate."""
        return (self.absolute if self.gates_absolute else []) + (self.relative if self.gates_relative else [])

    @property
    def judged(self) -> list[dict]:
        return [r for r in self.gated_rows if r["verdict"] in JUDGED]

    @property
    def measure(self) -> str:
        return "time per iteration" if self.kind == "micro" else "step time"

    @property
    def beyond_threshold_unsure(self) -> list[dict]:
        """Gated UNSURE rows whose point estimate lies beyond the threshold the worse way (slower; a speedup lost):
        a regression the data could not confirm nor rule out. The gate cannot pass them unjudged (exit 3) unless
        --allow-unsure. Each is the row's identity, estimate, interval and why it is unsure."""
        t = self.settings.threshold
        parts = (
            ("absolute", self.absolute, True) if self.gates_absolute else None,
            ("relative", self.relative, False) if self.gates_relative else None,
        )
        out = []
        for part, rows, worse_when_above in filter(None, parts):
            for r in rows:
                if r["verdict"] == UNSURE and worse_beyond(r["ratio"], t, worse_when_above):
                    out.append(
                        {
                            "name": r["name"],
                            "part": part,
                            "speedup": r.get("speedup"),
                            "ratio": r["ratio"],
                            "ci_low": r["ci_low"],
                            "ci_high": r["ci_high"],
                            "why": whose_noise(r),
                        }
                    )
        return out

    def unsure_line(self, u: dict) -> str:
        """One UNSURE-beyond-threshold row in words: which, its estimate, its interval, and why it is unsure."""
        what = self.measure if u["part"] == "absolute" else f"{u['speedup']} speedup"
        ci = (
            f"95% CI {percent_change(u['ci_low'])} … {percent_change(u['ci_high'])}"
            if u["ci_low"] is not None
            else "no interval"
        )
        return (
            f"{u['name']}: {what} {percent_change(u['ratio'])} ({ci}) is beyond the "
            f"±{100 * self.settings.threshold:g}% threshold but UNSURE — {u['why']}"
        )

    @property
    def exit_code(self) -> int:
        """The gate's decision: a confirmed regression or a lost configuration fails (1) before anything else; a
        possible regression it could not judge (UNSURE beyond the threshold the worse way) is 3 even when other rows
        were judged, since passing it would pass what was never judged; else 0 when anything was judged."""
        if self.reasons:
            return EXIT_FAIL
        if self.beyond_threshold_unsure and not self.allow_unsure:
            return EXIT_NOTHING_JUDGED
        return EXIT_PASS if self.judged else EXIT_NOTHING_JUDGED

    @property
    def verdict(self) -> str:
        """What the gate prints; always agrees with exit_code (3 reads NOTHING JUDGED when no gated row was judged,
        COULD NOT JUDGE when some were but a possible regression was not)."""
        if self.exit_code == EXIT_NOTHING_JUDGED:
            return "COULD NOT JUDGE" if self.judged else "NOTHING JUDGED"
        return {EXIT_PASS: "PASS", EXIT_FAIL: "FAIL"}[self.exit_code]

    def counts(self, rows: list[dict]) -> dict[str, int]:
        """How many of `rows` got each verdict (only verdicts that occur)."""
        order = (SAME, FASTER, SLOWER, UNSURE, LOST, NOT_COMPARED)
        return {v: n for v in order if (n := sum(r["verdict"] == v for r in rows))}

    def unit(self) -> tuple[str, str]:
        """(what a sample is, the option that sets how many)."""
        return ("repetitions", "--benchmark_repetitions") if self.kind == "micro" else ("steps", "--steps")

    def nothing_judged(self) -> list[str]:
        """Why nothing could be judged: how many samples each side had and how many would be enough."""
        unit, option = self.unit()
        rows = self.gated_rows
        if not rows:
            what = (
                "no configuration both sides measured on the same device"
                if self.gate == "absolute"
                else "no within-run speedup both sides measured"
                if self.gate == "relative"
                else "nothing both sides measured"
            )
            return [f"nothing could be judged: {what} (gate on: {self.gate})"]
        unsure = [r for r in rows if r["verdict"] == UNSURE]
        lines = [
            f"nothing could be judged: {len(unsure)} of {len(rows)} gated comparisons are UNSURE"
            + (f", {len(rows) - len(unsure)} not comparable" if len(unsure) < len(rows) else "")
        ]
        sizes = [
            (r.get("baseline_n"), r.get("candidate_n"))
            for r in self.absolute
            if r.get("baseline_n") and r.get("candidate_n")
        ]
        if sizes:

            def span(values):
                lo, hi = min(values), max(values)
                return str(lo) if lo == hi else f"{lo}–{hi}"

            lines.append(
                f"samples per configuration: baseline {span([b for b, _ in sizes])} {unit}, "
                f"candidate {span([c for _, c in sizes])} {unit}; the U test cannot reach "
                f"p < {self.settings.alpha:g} with fewer than {floor_samples(self.settings.alpha)} per side"
            )
        needed = [r["needed"] for r in unsure if r.get("needed")]
        if needed:
            lines.append(
                f"{option} {max(needed)} on both sides would be enough for a verdict at "
                f"±{100 * self.settings.threshold:g}% at the noise these {unit} show "
                f"(estimated per configuration; the largest is given)"
            )
        return lines

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "settings": {
                **self.settings.as_dict(self.gate),
                "allow_missing": self.allow_missing,
                "allow_unsure": self.allow_unsure,
            },
            "same_device": self.same_device,
            "absolute": self.absolute,
            "relative": self.relative,
            "loss": self.loss,
            "lost": self.lost,
            "only_in_baseline": self.only_in_baseline,
            "only_in_candidate": self.only_in_candidate,
            "gate": {
                "passed": self.exit_code == EXIT_PASS,
                "verdict": self.verdict,
                "exit_code": self.exit_code,
                "regressions": self.reasons,
                # UNSURE beyond the threshold the worse way: exit 3 unless --allow-unsure ("allowed": listed only).
                "could_not_judge": [
                    {**u, "reason": self.unsure_line(u), "allowed": self.allow_unsure}
                    for u in self.beyond_threshold_unsure
                ],
                "nothing_judged": self.nothing_judged()
                if self.exit_code == EXIT_NOTHING_JUDGED and not self.judged
                else [],
            },
        }


def compare(
    found_b: Inputs,
    found_c: Inputs,
    baseline: str,
    candidate: str,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
    allow_unsure: bool = False,
) -> Comparison:
    """Judges CANDIDATE against BASELINE: two runs, or two micro-benchmark files, never one of each."""
    kind_b, kind_c = _kind(found_b, "baseline", baseline), _kind(found_c, "candidate", candidate)
    if kind_b != kind_c:
        raise InputError(
            f"cannot compare a {KIND_NAMES[kind_b]} (baseline {baseline}) with a "
            f"{KIND_NAMES[kind_c]} (candidate {candidate}); pass two of the same kind"
        )
    if kind_b == "micro":
        c = compare_micro(found_b.micro, found_c.micro, baseline, candidate, settings, which, allow_missing)
    else:
        c = compare_runs(found_b.results, found_c.results, baseline, candidate, settings, which, allow_missing)
    c.allow_unsure = allow_unsure
    return c


def _kind(found: Inputs, label: str, path: str) -> str:
    if found.results and found.micro:
        raise InputError(
            f"{label} {path} holds both stepwise results and micro-benchmark files; "
            f"pass one run or one micro-benchmark file per side"
        )
    return "micro" if found.micro else "stepwise"


# --- two runs ------------------------------------------------------------------------------------


@dataclass
class Side:
    """One side of a comparison of runs: the results of one run, and the path they came from."""

    label: str
    path: str
    results: list[Result]

    @property
    def run_id(self) -> str:
        return self.results[0].run_id

    @property
    def devices(self) -> list[str]:
        return devices(self.results)

    def describe(self) -> dict:
        first = self.results[0]
        return {
            "path": self.path,
            "run_id": self.run_id,
            "device": "; ".join(self.devices),
            "git_commit": first.git_commit,
            "git_dirty": first.git_dirty,
            "timestamp": first.timestamp,
            "configurations": len(self.results),
        }

    def headline(self) -> str:
        return f"{self.run_id} ({'; '.join(self.devices)}, commit {self.results[0].git_commit[:12]})"


def side(results: list[Result], path: str, label: str) -> Side:
    runs = sorted({r.run_id for r in results})
    if len(runs) > 1:
        raise InputError(
            f"{label} {path} holds {len(runs)} runs ({', '.join(runs)}); pass one run directory or result file per side"
        )
    return Side(label, path, results)


def match(base: Side, cand: Side) -> tuple[list[tuple[Result, Result, str]], list[Result], list[Result]]:
    """Pairs by name (suite/NN_label[.implementation]) and implementation, then the rest by suite, implementation
    and flags + preset + batch + sequence length (a step renamed inside its suite)."""
    by_name = {(r.name, r.implementation): r for r in cand.results}
    pairs, left = [], []
    used: set[int] = set()
    for b in base.results:
        c = by_name.get((b.name, b.implementation))
        if c is not None:
            pairs.append((b, c, "name"))
            used.add(id(c))
        else:
            left.append(b)
    rest = [c for c in cand.results if id(c) not in used]
    unmatched_base = []
    for b in left:
        same = [c for c in rest if c.suite_name == b.suite_name and c.config_key == b.config_key]
        if len(same) == 1:
            pairs.append((b, same[0], "configuration"))
            rest.remove(same[0])
        else:
            unmatched_base.append(b)
    return pairs, unmatched_base, rest


def _run_lost(pairs, only_base: list[Result], allow_missing: bool) -> list[dict]:
    """Configurations ok in the baseline and missing, skipped or failed in the candidate, in baseline order."""
    lost = {
        b.name: lost_row(b.name, c.status, c.reason or "no reason given", allow_missing)
        for b, c, _ in pairs
        if b.ok and not c.ok
    }
    lost.update({b.name: lost_row(b.name, "missing", None, allow_missing) for b in only_base if b.ok})
    order = {b.name: i for i, (b, _, _) in enumerate(pairs)} | {b.name: len(pairs) + i for i, b in enumerate(only_base)}
    return sorted(lost.values(), key=lambda r: order[r["name"]])


def _config_difference(b: Result, c: Result) -> str | None:
    diffs = [
        f"{what} {x} vs {y}"
        for what, x, y in (
            ("preset", b.preset, c.preset),
            ("seq_len", b.seq_len, c.seq_len),
            ("flags", "+".join(b.flags) or "none", "+".join(c.flags) or "none"),
        )
        if x != y
    ]
    return "configuration differs: " + "; ".join(diffs) if diffs else None


def _run_absolute(pairs, settings: Settings, lost: list[dict]) -> list[dict]:
    """Per matched configuration: candidate's median step time per token ÷ baseline's."""
    lost_by_name = {r["name"]: r for r in lost}
    rows = []
    for b, c, how in pairs:
        row = {
            "name": b.name,
            "candidate_name": c.name,
            "matched_by": how,
            "baseline_median_ms": b.median_ms if b.ok else None,
            "candidate_median_ms": c.median_ms if c.ok else None,
            "baseline_n": len(b.samples_ms),
            "candidate_n": len(c.samples_ms),
        }
        if b.name in lost_by_name:
            verdict = _lost_verdict(lost_by_name[b.name])
        elif not b.ok or not c.ok:
            verdict = untested(NOT_COMPARED, f"baseline {b.status}, candidate {c.status}")
        elif b.device_key != c.device_key:
            verdict = untested(
                NOT_COMPARED, f"devices differ ({b.device_key} vs {c.device_key}); see the relative speedups"
            )
        elif (diff := _config_difference(b, c)) is not None:
            verdict = untested(NOT_COMPARED, diff)
        else:
            # Time per token, so a step whose batch was probed differently (max_batch) still compares.
            tb, tc = b.tokens_per_step, c.tokens_per_step
            verdict = compare_samples([t / tb for t in b.samples_ms], [t / tc for t in c.samples_ms], settings, b.name)
            if b.batch_size != c.batch_size:
                verdict.note += f"; batch {b.batch_size} vs {c.batch_size}, compared per token"
            row["noise"] = [result_noise("baseline", b), result_noise("candidate", c)]
        rows.append({**row, **verdict.as_dict()})
    return rows


def _speedup_specs(steps_b, steps_c) -> list[tuple]:
    """(label, baseline step, baseline reference, candidate reference, candidate step) for every
    within-run speedup both runs measured."""
    by_name_c = {s.result.name: s for s in steps_c}
    kind = steps_b[0].result.suite_kind
    base_b, base_c = steps_b[0], steps_c[0] if steps_c else None
    specs = []
    for sb in steps_b[1:]:
        sc = by_name_c.get(sb.result.name)
        if sc is None or not (sb.ok and sc.ok):
            continue
        if kind == "cumulative":
            specs.append(("× previous", sb, sb.previous, sc.previous, sc))
        if sb.previous is base_b and kind == "cumulative":
            continue  # × baseline would repeat × previous
        if base_c is not None and base_b.ok and base_c.ok and base_b.index == 0 and base_c.index == 0:
            label = "× all flags ÷ without" if kind == "leave_one_out" else "× baseline"
            specs.append((label, sb, base_b, base_c, sc))
    return specs


def _run_relative(base: Side, cand: Side, settings: Settings) -> list[dict]:
    """Per step both runs measured: its speedup inside the candidate run ÷ inside the baseline run."""
    rows = []
    libtorch_b = [r for r in base.results if r.is_libtorch]
    libtorch_c = [r for r in cand.results if r.is_libtorch]
    suites = sorted({r.suite_name for r in libtorch_b if r.suite} & {r.suite_name for r in libtorch_c if r.suite})
    for suite in suites:
        steps_b = build_chain([r for r in libtorch_b if r.suite_name == suite])
        steps_c = build_chain([r for r in libtorch_c if r.suite_name == suite])
        kind = steps_b[0].result.suite_kind
        for label, sb, ref_b, ref_c, sc in _speedup_specs(steps_b, steps_c):
            row = {"suite": suite, "name": sb.result.name, "speedup": label}
            if ref_b is None or ref_c is None or ref_b.result.name != ref_c.result.name:
                names = [x.result.name if x else "none" for x in (ref_b, ref_c)]
                rows.append(
                    {**row, **untested(NOT_COMPARED, f"previous ok step differs ({names[0]} vs {names[1]})").as_dict()}
                )
                continue
            # Leave-one-out measures a flag by removing it: its speedup is all ÷ without.
            (rb, xb), (rc, xc) = ((sb, ref_b), (sc, ref_c)) if kind == "leave_one_out" else ((ref_b, sb), (ref_c, sc))
            tok_b = xb.result.tokens_per_step / rb.result.tokens_per_step
            tok_c = xc.result.tokens_per_step / rc.result.tokens_per_step
            verdict = compare_speedups(
                rb.result.samples_ms,
                xb.result.samples_ms,
                rc.result.samples_ms,
                xc.result.samples_ms,
                tok_b,
                tok_c,
                settings,
                f"{sb.result.name} {label}",
            )
            speed_b = xb.result.tokens_per_s / rb.result.tokens_per_s
            speed_c = xc.result.tokens_per_s / rc.result.tokens_per_s
            n = min(len(x.result.samples_ms) for x in (rb, xb, rc, xc))
            noise = [result_noise("baseline", x.result) for x in (rb, xb)] + [
                result_noise("candidate", x.result) for x in (rc, xc)
            ]
            rows.append(
                {
                    **row,
                    "baseline_speedup": speed_b,
                    "candidate_speedup": speed_c,
                    "n": n,
                    "noise": noise,
                    **verdict.as_dict(),
                }
            )
    return rows


def _loss_rows(pairs) -> list[dict]:
    """Configurations whose loss check says 'math changed' in the candidate; only a new one is a regression."""
    rows = []
    for b, c, _ in pairs:
        if c.ok and c.loss_status == "math changed":
            known = b.ok and b.loss_status == "math changed"
            rows.append(
                {
                    "name": c.name,
                    "baseline": b.loss_status if b.ok else b.status,
                    "candidate": c.loss_status,
                    "regression": not known,
                    "note": "already math changed in the baseline" if known else "newly math changed",
                }
            )
    return rows


def compare_runs(
    results_b: list[Result],
    results_c: list[Result],
    baseline: str,
    candidate: str,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
) -> Comparison:
    base, cand = side(results_b, baseline, "baseline"), side(results_c, candidate, "candidate")
    same_device = base.devices == cand.devices and len(base.devices) == 1
    if which == "absolute" and not same_device:
        raise InputError(
            f"--gate absolute compares step times, but the devices differ "
            f"({'; '.join(base.devices)} vs {'; '.join(cand.devices)}); use --gate relative"
        )
    pairs, only_base, only_cand = match(base, cand)
    if not pairs:
        raise InputError(
            f"no configuration of the baseline ({base.run_id}) matches one of the candidate "
            f"({cand.run_id}) by name or by flags + preset + batch + sequence length"
        )
    lost = _run_lost(pairs, only_base, allow_missing)
    abs_rows, rel_rows = _run_absolute(pairs, settings, lost), _run_relative(base, cand, settings)
    loss_rows = _loss_rows(pairs)
    return Comparison(
        kind="stepwise",
        headlines=(base.headline(), cand.headline()),
        baseline=base.describe(),
        candidate=cand.describe(),
        settings=settings,
        gate=which,
        same_device=same_device,
        absolute=abs_rows,
        relative=rel_rows,
        loss=loss_rows,
        lost=lost,
        only_in_baseline=[r.name for r in only_base],
        only_in_candidate=[r.name for r in only_cand],
        reasons=gate_reasons(abs_rows, rel_rows, loss_rows, lost, which, "step time"),
        allow_missing=allow_missing,
    )


# --- two micro-benchmark files -------------------------------------------------------------------


def _one_file(files: list[MicroFile], path: str, label: str) -> MicroFile:
    if len(files) > 1:
        raise InputError(
            f"{label} {path} holds {len(files)} micro-benchmark files "
            f"({', '.join(str(m.path) for m in files)}); pass one file per side"
        )
    return files[0]


def _describe_micro(m: MicroFile, path: str) -> dict:
    ctx = m.context
    return {
        "path": path,
        "device": m.device,
        "date": ctx.get("date"),
        "host": ctx.get("host_name"),
        "torch_version": ctx.get("torch_version"),
        "presets": ctx.get("stepwise_presets"),
        "cases": len(m.cases),
    }


def _micro_headline(m: MicroFile) -> str:
    ctx = m.context
    return (
        f"{m.path} ({m.device or 'device unknown'}, {ctx.get('date')}, host {ctx.get('host_name')}, "
        f"torch {ctx.get('torch_version') or '?'})"
    )


def _time_verdict(b: Case, c: Case, same_device: bool, settings: Settings, lost: dict | None) -> Verdict:
    if lost is not None:
        return _lost_verdict(lost)
    if not b.ok or not c.ok:
        return untested(
            NOT_COMPARED, f"baseline {'ok' if b.ok else 'skipped'}, candidate {'ok' if c.ok else 'skipped'}"
        )
    if not same_device:
        return untested(NOT_COMPARED, "devices differ; see the speedups")
    if not b.samples or not c.samples:
        return untested(UNSURE, "no repetitions in the file (aggregates only), nothing to test")
    return compare_samples(b.samples_s, c.samples_s, settings, b.name)


def case_noise(side: str, c: Case) -> dict:
    """A micro-benchmark case's noise from its repetitions; google/benchmark has no --max-noise to hold it to."""
    return noise_entry(side, c.name, c.samples, None, None, noisy=False)


def _micro_lost(base: MicroFile, cand: MicroFile, allow_missing: bool) -> list[dict]:
    """Cases ok in the baseline and missing or skipped in the candidate: the same rule as for runs."""
    by_name = {c.name: c for c in cand.cases}
    lost = []
    for b in base.cases:
        c = by_name.get(b.name)
        if b.ok and c is None:
            lost.append(lost_row(b.name, "missing", None, allow_missing))
        elif b.ok and not c.ok:
            lost.append(lost_row(b.name, "skipped", c.error or "no measurement", allow_missing))
    return lost


def _micro_absolute(base: MicroFile, cand: MicroFile, settings: Settings, lost: list[dict]) -> list[dict]:
    """Per benchmark name in both files: candidate's median time ÷ baseline's, from the repetitions."""
    by_name = {c.name: c for c in cand.cases}
    lost_by_name = {r["name"]: r for r in lost}
    same_device = base.device == cand.device
    rows = []
    for b in base.cases:
        c = by_name.get(b.name)
        if c is None:
            continue
        row = {
            "name": b.name,
            "baseline_median_s": b.median_s if b.ok else None,
            "candidate_median_s": c.median_s if c.ok else None,
            "baseline_n": len(b.samples),
            "candidate_n": len(c.samples),
        }
        if b.ok and c.ok:
            row["noise"] = [case_noise("baseline", b), case_noise("candidate", c)]
        rows.append({**row, **_time_verdict(b, c, same_device, settings, lost_by_name.get(b.name)).as_dict()})
    return rows


def _micro_relative(base: MicroFile, cand: MicroFile, settings: Settings) -> list[dict]:
    """Each variant's speedup over its family's baseline variant, measured inside each file, compared."""
    by_name = {c.name: c for c in cand.cases}
    rows = []
    for b in base.cases:
        c, ref_b = by_name.get(b.name), base.baseline_of(b)
        ref_c = cand.baseline_of(c) if c is not None else None
        if c is None or ref_b is None or ref_c is None or not all(x.ok for x in (b, c, ref_b, ref_c)):
            continue
        verdict = compare_speedups(
            ref_b.samples_s, b.samples_s, ref_c.samples_s, c.samples_s, 1.0, 1.0, settings, f"{b.name} × baseline"
        )
        n = min(len(x.samples) for x in (b, c, ref_b, ref_c))
        noise = [case_noise("baseline", x) for x in (ref_b, b)] + [case_noise("candidate", x) for x in (ref_c, c)]
        rows.append(
            {
                "suite": b.family,
                "name": b.name,
                "speedup": f"× {ref_b.variant}",
                "baseline_speedup": base.speedup(b),
                "candidate_speedup": cand.speedup(c),
                "n": n,
                "noise": noise,
                **verdict.as_dict(),
            }
        )
    return rows


def compare_micro(
    files_b: list[MicroFile],
    files_c: list[MicroFile],
    baseline: str,
    candidate: str,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
) -> Comparison:
    base, cand = _one_file(files_b, baseline, "baseline"), _one_file(files_c, candidate, "candidate")
    same_device = base.device == cand.device
    if which == "absolute" and not same_device:
        raise InputError(
            f"--gate absolute compares times, but the devices differ ({base.device or '?'} vs "
            f"{cand.device or '?'}); use --gate relative"
        )
    lost = _micro_lost(base, cand, allow_missing)
    abs_rows, rel_rows = _micro_absolute(base, cand, settings, lost), _micro_relative(base, cand, settings)
    if not abs_rows:
        raise InputError(f"no benchmark name of the baseline ({baseline}) is in the candidate ({candidate})")
    names_b, names_c = {c.name for c in base.cases}, {c.name for c in cand.cases}
    return Comparison(
        kind="micro",
        headlines=(_micro_headline(base), _micro_headline(cand)),
        baseline=_describe_micro(base, baseline),
        candidate=_describe_micro(cand, candidate),
        settings=settings,
        gate=which,
        same_device=same_device,
        absolute=abs_rows,
        relative=rel_rows,
        loss=[],
        lost=lost,
        only_in_baseline=[c.name for c in base.cases if c.name not in names_c],
        only_in_candidate=[c.name for c in cand.cases if c.name not in names_b],
        reasons=gate_reasons(abs_rows, rel_rows, [], lost, which, "time per iteration"),
        allow_missing=allow_missing,
    )
