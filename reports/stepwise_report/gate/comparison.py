"""The gate's outcome, as data: everything `./report compare` decided, its exit status and why.

The verdicts of one comparison (gate.py) only become a decision here. `gate_reasons` is the one rule that says what
fails the gate: a gated SLOWER row, a configuration ok in the baseline and missing, skipped or failed in the candidate
(lost), a loss check newly 'math changed'. Comparison.exit_code is the one place the exit status is decided (0 pass,
1 fail, 3 nothing judged, or a possible regression left UNSURE by the noise, whose side's noise it names): the gate
never passes what it could not judge. Runs (run_comparison.py) and micro-benchmark files (micro_comparison.py) are
matched differently but end in the same Comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..read.machine import describe, differences, fingerprint
from ..read.results import Result
from ..render.formats import percent_change
from ..stats.speedup import floor_samples, median_noise, relative_spread
from .gate import FASTER, JUDGED, LOST, NOT_COMPARED, SAME, SLOWER, UNSURE, Settings, Verdict, untested
from .work_comparison import added_work

# Exit status of `./report compare`; the printed verdict is derived from the same value.
EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_NOTHING_JUDGED = 0, 1, 2, 3


# --- the rows behind the decision -----------------------------------------------------------------


def gate_reasons(
    abs_rows: list[dict],
    rel_rows: list[dict],
    loss_rows: list[dict],
    lost: list[dict],
    which: str,
    measure: str,
    work: list[dict] = (),
) -> list[str]:
    """Why the gate fails (empty: it passes), for runs and micro-benchmark files alike: a SLOWER row of a
    comparison `which` gates, a configuration ok in the baseline and missing, skipped or failed in the candidate
    (unless --allow-missing), a loss check newly 'math changed', a step that does more work than the baseline's and
    was not accepted (work_comparison.py). UNSURE never fails; an UNSURE row beyond the threshold the worse way keeps
    the gate from passing instead (`beyond_threshold_unsure`, exit 3)."""
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
    reasons += [f"{r['name']}: more work {r['note']}" for r in added_work(work)]
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


def lost_verdict(row: dict) -> Verdict:
    """A lost row's verdict, the same for runs and micro-benchmark files: LOST, or N/A under --allow-missing."""
    return untested(
        NOT_COMPARED if row["allowed"] else LOST,
        row["note"] + (" (not compared: --allow-missing)" if row["allowed"] else ""),
    )


# --- two machines -------------------------------------------------------------------------------


class DifferentMachines(Exception):
    """The two sides ran on different machines: their step times and speedups are not a like-with-like comparison,
    so the gate refuses (exit 3) rather than call the difference a regression; --across-machines overrides."""

    def __init__(self, base_env: dict, cand_env: dict):
        differs = "; ".join(differences(base_env, cand_env))
        super().__init__(
            f"baseline made on {describe(base_env)} (fingerprint {fingerprint(base_env)}), candidate on "
            f"{describe(cand_env)} (fingerprint {fingerprint(cand_env)}); they differ in {differs}. The gate compares "
            f"runs of one machine: make this runner's baseline with `./run_all.sh --gated` on it (docs/ci.md), or "
            f"pass --across-machines to judge the within-run speedups only"
        )


def refuse_different_machines(base_env: dict, cand_env: dict, across_machines: bool) -> bool:
    """Whether the sides ran on the same machine; raises DifferentMachines when they did not and
    --across-machines was not given."""
    same = fingerprint(base_env) == fingerprint(cand_env)
    if not same and not across_machines:
        raise DifferentMachines(base_env, cand_env)
    return same


# --- the decision ---------------------------------------------------------------------------------


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
    # Said with the verdict, never failing it: how the rows were measured (a gated run's rounds), a stale baseline.
    notes: list[str] = field(default_factory=list)
    # Configurations whose definition changed between the sides (flags, options, preset): listed, not judged.
    changed: list[dict] = field(default_factory=list)
    # What one step dispatches, each row's two sides compared exactly (work_comparison.py); empty when not counted.
    work: list[dict] = field(default_factory=list)

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
        out = []
        for part, rows, worse_when_above in self._gated_parts():
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

    def _gated_parts(self) -> list[tuple[str, list[dict], bool]]:
        """The parts the gate judges: (name, rows, whether a ratio above 1 is the worse way). Absolute rows are step
        times (worse above), relative rows speedups (worse below)."""
        parts = (
            ("absolute", self.absolute, True) if self.gates_absolute else None,
            ("relative", self.relative, False) if self.gates_relative else None,
        )
        return [p for p in parts if p is not None]

    @property
    def unresolved(self) -> list[dict]:
        """Two gated runs' rows the rounds could not resolve: UNSURE with no interval, or one whose 95% interval
        reaches a slowdown of twice the threshold, so that a regression that large could be hiding behind an estimate
        inside the threshold (measured: a planted 20% slowdown read as -9% beside a +11% chance gain, docs/ci.md).
        Only the worse end counts: an interval that is wide towards a gain hides no regression. A gate on rounds
        passes what rules such a slowdown out and exits 3 on these; an interleaved run goes on to more rounds
        (gated_run.py) until there are none. Each is the row's identity, estimate and interval."""
        if self.kind != "gated":
            return []
        worst = 1 + 2 * self.settings.threshold
        out = []
        for part, rows, worse_when_above in self._gated_parts():
            for r in rows:
                lo, hi = r.get("ci_low"), r.get("ci_high")
                if r["verdict"] != UNSURE:
                    continue
                if lo is None or (hi > worst if worse_when_above else lo < 1 / worst):
                    out.append(
                        {
                            "name": r["name"],
                            "part": part,
                            "speedup": r.get("speedup"),
                            "ratio": r["ratio"],
                            "ci_low": lo,
                            "ci_high": hi,
                        }
                    )
        return out

    def unresolved_line(self, u: dict) -> str:
        what = self.measure if u["part"] == "absolute" else f"{u['speedup']} speedup"
        if u["ci_low"] is None:
            return f"{u['name']}: {what}: no interval"
        return (
            f"{u['name']}: {what} {percent_change(u['ratio'])} (95% CI {percent_change(u['ci_low'])} … "
            f"{percent_change(u['ci_high'])}) reaches a slowdown of twice the ±{100 * self.settings.threshold:g}% "
            f"threshold: one that large could have read as one inside it"
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
        if self.kind == "gated":
            # Rounds: an UNSURE row whose estimate is inside the threshold and whose interval could have shown a
            # slowdown of twice it passes; the gate needs no row proven SAME, which the noise between rounds on a
            # shared machine rarely allows (docs/ci.md).
            seen = [r for r in self.gated_rows if r["verdict"] in JUDGED or r.get("ci_low") is not None]
            return EXIT_NOTHING_JUDGED if not seen or self.unresolved else EXIT_PASS
        return EXIT_PASS if self.judged else EXIT_NOTHING_JUDGED

    @property
    def verdict(self) -> str:
        """What the gate prints; always agrees with exit_code (3 reads NOTHING JUDGED when no gated row was judged,
        COULD NOT JUDGE when some were but a possible regression was not)."""
        if self.exit_code == EXIT_NOTHING_JUDGED:
            return "COULD NOT JUDGE" if self.judged or (self.kind == "gated" and self.gated_rows) else "NOTHING JUDGED"
        return {EXIT_PASS: "PASS", EXIT_FAIL: "FAIL"}[self.exit_code]

    def counts(self, rows: list[dict]) -> dict[str, int]:
        """How many of `rows` got each verdict (only verdicts that occur)."""
        order = (SAME, FASTER, SLOWER, UNSURE, LOST, NOT_COMPARED)
        return {v: n for v in order if (n := sum(r["verdict"] == v for r in rows))}

    def unit(self) -> tuple[str, str]:
        """(what a sample is, the option that sets how many)."""
        return {
            "micro": ("repetitions", "--benchmark_repetitions"),
            "gated": ("rounds", '"rounds" in the gated run\'s definition (ci/gated-run.json)'),
        }.get(self.kind, ("steps", "--min-steps"))

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
            "notes": self.notes,
            "changed": self.changed,
            "work": self.work,
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
                if self.exit_code == EXIT_NOTHING_JUDGED and not self.judged and self.kind != "gated"
                else [],
                # Two gated runs: rows whose interval reaches further than the threshold from the estimate (exit 3).
                "unresolved": [{**u, "reason": self.unresolved_line(u)} for u in self.unresolved],
            },
        }
