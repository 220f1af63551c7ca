"""What `./report compare` prints: both sides, the settings, the verdict tables, then the verdict and why.

People read the gate's outcome in a CI log, so the printout leads with what was compared and how, shows every row's
verdict with its change, interval and p, and ends with the verdict (always the exit status's: PASS 0, FAIL 1, NOTHING
JUDGED or COULD NOT JUDGE 3) followed by one line per comparison, each lost configuration, each regression and each
possible regression the noise kept from being judged, with whose noise it was. The decision itself is
comparison.py's; nothing here changes it.
"""

from __future__ import annotations

from statistics import median

from ..render.formats import DASH, Table, fmt_duration, fmt_ms, fmt_ratio, percent_change, to_text
from ..stats.speedup import floor_samples
from .comparison import Comparison
from .gate import FASTER, SAME, SLOWER, UNSURE
from .work_comparison import MORE, added_work

# --- the verdict tables ---------------------------------------------------------------------------


def change_cell(ratio: float | None) -> str:
    return percent_change(ratio) if ratio is not None else DASH


def ci_cell(row: dict) -> str:
    if row.get("ci_low") is None:
        return DASH
    return f"{percent_change(row['ci_low'])} … {percent_change(row['ci_high'])}"


def absolute_table(rows: list[dict], kind: str = "stepwise") -> Table:
    """The verdict per configuration (per benchmark for `kind` "micro", whose times are in seconds)."""
    micro = kind == "micro"
    name_header, count_label = ("benchmark", "reps") if micro else ("configuration", "n")

    def time_cell(r: dict, side: str) -> str:
        return fmt_duration(r[f"{side}_median_s"]) if micro else fmt_ms(r[f"{side}_median_ms"])

    body = [
        [
            r["name"],
            f"{time_cell(r, 'baseline')} ({r['baseline_n']})",
            f"{time_cell(r, 'candidate')} ({r['candidate_n']})",
            change_cell(r["ratio"]),
            ci_cell(r),
            f"{r['p_value']:.3g}" if r["p_value"] is not None else DASH,
            r["verdict"],
            r["note"],
        ]
        for r in rows
    ]
    return Table(
        [
            name_header,
            f"baseline ({count_label})",
            f"candidate ({count_label})",
            "change",
            "95% CI",
            "p (t test)" if kind == "gated" else "p (U test)",
            "verdict",
            "note",
        ],
        body,
        align=["l", "r", "r", "r", "r", "r", "l", "l"],
    )


def relative_table(rows: list[dict]) -> Table:
    """Per within-run speedup: baseline's, candidate's, and the verdict on their ratio."""
    body = [
        [
            r["name"],
            r["speedup"],
            fmt_ratio(r.get("baseline_speedup")),
            fmt_ratio(r.get("candidate_speedup")),
            change_cell(r["ratio"]),
            ci_cell(r),
            r["verdict"],
            r["note"],
        ]
        for r in rows
    ]
    return Table(
        ["configuration", "speedup", "baseline", "candidate", "change", "95% CI", "verdict", "note"],
        body,
        align=["l", "l", "r", "r", "r", "r", "l", "l"],
    )


def work_table(rows: list[dict]) -> Table:
    """Per row: the verdict on its work and what changed (every operator whose count moved, bytes by device)."""
    body = [
        [r["name"], r["verdict"] + (" (accepted)" if r["verdict"] == MORE and r["accepted"] else ""), r["note"]]
        for r in rows
    ]
    return Table(["configuration", "work", "what changed"], body, align=["l", "l", "l"])


# --- the printout ---------------------------------------------------------------------------------


# What the gate prints around its tables, for two runs and for two micro-benchmark files.
_GATE_TEXT = {
    "stepwise": {
        "unit": "steps",
        "devices": "note: the devices differ, so absolute step times are not compared; within-run speedups are.",
        "absolute": "absolute step time (candidate median vs baseline median; positive = slower):",
        "relative": "speedups measured inside each run (candidate vs baseline; negative = the flags lost gain):",
        "absolute_name": "absolute step times",
        "relative_name": "within-run speedups",
    },
    "gated": {
        "unit": "rounds",
        "devices": "note: different machines (--across-machines), so absolute step times are not compared; "
        "within-run speedups are.",
        "absolute": "each row's own step time, ms per step in the measure its verdict tests, the geometric mean of the "
        "rounds' medians (candidate vs baseline; positive = slower):",
        "relative": "speedups measured inside each round, over the rounds (candidate vs baseline; negative = the "
        "flags lost gain):",
        "absolute_name": "absolute step times",
        "relative_name": "within-run speedups",
    },
    "micro": {
        "unit": "repetitions",
        "devices": "note: the devices differ, so absolute times are not compared; speedups over each family's "
        "baseline variant are.",
        "absolute": "absolute time per iteration (candidate median vs baseline median; positive = slower):",
        "relative": "speedups over each family's baseline variant, inside each file (negative = the variant lost gain):",
        "absolute_name": "absolute times per iteration",
        "relative_name": "speedups over each family's baseline variant",
    },
}


def _median_change(rows: list[dict], verdict: str) -> str:
    ratios = [r["ratio"] for r in rows if r["verdict"] == verdict and r["ratio"] is not None]
    return f"median {percent_change(median(ratios))}" if ratios else ""


def _part_line(c: Comparison, part: str) -> str | None:
    """One line per comparison: its verdict counts, whether it is gated, and what the counts mean."""
    text = _GATE_TEXT[c.kind]
    rows = c.absolute if part == "absolute" else c.relative
    if not rows:
        return None
    counts = ", ".join(f"{n} {v}" for v, n in c.counts(rows).items())
    gated = c.gates_absolute if part == "absolute" else c.gates_relative
    if part == "absolute" and not c.same_device:
        status = "not compared: the devices differ"
    else:
        status = "gated" if gated else f"not gated under --gate {c.gate}"
    n = c.counts(rows)
    meaning = []
    doubtful = sum(u["part"] == part for u in c.beyond_threshold_unsure)
    if doubtful:
        meaning.append(f"{doubtful} UNSURE beyond the threshold the worse way (a possible regression not judged)")
    if part == "absolute":
        for verdict, word in ((SLOWER, "slower"), (FASTER, "faster")):
            if n.get(verdict):
                what = (
                    f"the candidate's absolute {'times' if c.kind == 'micro' else 'step times'} are {word} "
                    f"({n[verdict]} of {len(rows)}, {_median_change(rows, verdict)})"
                )
                meaning.append(what)
    else:
        if n.get(SLOWER):
            meaning.append(f"{n[SLOWER]} speedups shrank beyond the threshold")
        if n.get(FASTER):
            meaning.append(f"{n[FASTER]} speedups grew beyond the threshold")
        if not n.get(SLOWER) and not n.get(FASTER) and n.get(SAME) and not doubtful:
            meaning.append(
                "the relative speedups are unchanged"
                + (f" where they could be judged ({n[UNSURE]} UNSURE)" if n.get(UNSURE) else "")
            )
    return f"  {text[part + '_name']} ({status}): {counts}" + (" — " + "; ".join(meaning) if meaning else "")


def print_comparison(c: Comparison) -> None:
    """The gate's outcome for people: both sides, the settings, the verdict tables, then the verdict (which is
    always the exit status's: PASS 0, FAIL 1, NOTHING JUDGED or COULD NOT JUDGE 3) and why."""
    text, s = _GATE_TEXT[c.kind], c.settings
    for label, headline in zip(("baseline: ", "candidate:"), c.headlines):
        print(f"{label} {headline}")
    least = (
        f"at least {s.min_samples} {text['unit']} (--min-samples)"
        if s.min_samples
        else f"at least {floor_samples(s.alpha)} {text['unit']} per side (the U test's floor at alpha {s.alpha:g})"
    )
    print(
        f"threshold ±{100 * s.threshold:g}%, alpha {s.alpha}, {s.resamples} bootstrap resamples (seed {s.seed}), "
        f"{least}; gate on: {c.gate}"
    )
    if not c.same_device:
        print(text["devices"])
    for note in c.notes:
        print(f"note: {note}")
    print("\n" + text["absolute"])
    print(to_text(absolute_table(c.absolute, c.kind)))
    if c.relative:
        print("\n" + text["relative"])
        print(to_text(relative_table(c.relative)))
    if c.work:
        print("\nwhat one step dispatches (--count-ops), compared exactly (MORE fails unless --accept-work names it):")
        print(to_text(work_table(c.work)))
    if c.loss:
        print("\nloss check:")
        for r in c.loss:
            print(f"  {r['name']}: {r['candidate']} ({r['note']})")
    lost = [r for r in c.lost if not r["allowed"]]
    allowed = [r for r in c.lost if r["allowed"]]
    if lost:
        print("\nlost configurations (ok in the baseline; each fails the gate unless --allow-missing):")
        for r in lost:
            print(f"  {r['name']}: {r['note']}")
    if allowed:
        print("\nnot compared (--allow-missing; ok in the baseline, not in the candidate):")
        for r in allowed:
            print(f"  {r['name']}: {r['note']}")
    if c.changed:
        print("\nchanged between the sides (listed, not judged):")
        for r in c.changed:
            print(f"  {r['name']}: {r['note']}")
    if c.only_in_candidate:
        print("\nonly in candidate: " + ", ".join(c.only_in_candidate))
    print(f"\ngate: {c.verdict} (exit {c.exit_code})")
    for line in filter(None, (_part_line(c, "absolute"), _part_line(c, "relative"))):
        print(line)
    if c.work:
        tally: dict[str, int] = {}
        for r in c.work:
            tally[r["verdict"]] = tally.get(r["verdict"], 0) + 1
        print("  what each step dispatches (exact): " + ", ".join(f"{n} {v}" for v, n in tally.items()))
    if c.lost and c.exit_code == 1 and not c.allow_missing:
        print("  (--allow-missing lists lost configurations without failing the gate)")
    lost_text = {f"{r['name']}: {r['note']}" for r in lost}
    for reason in c.reasons:
        print(f"  {'lost' if reason in lost_text else 'regression'}: {reason}")
    if added_work(c.work):
        print(
            "  (a change that means to add work says so: --accept-work ROW, or a Stepwise-Accept-Work: ROW trailer "
            "in its commit message for the workflow; docs/ci.md)"
        )
    _print_unsure(c)
    for u in c.unresolved:
        print(f"  could not resolve: {c.unresolved_line(u)}")
    if c.unresolved and not c.reasons:
        print("  (more rounds narrow it: an interleaved gated run goes on to its max_rounds; ci/gated-run.json)")
    if c.exit_code == 3 and not c.judged and c.kind != "gated":
        for line in c.nothing_judged():
            print(f"  {line}")


# Enough to read at a glance; every one is in --json-out.
_UNSURE_SHOWN = 10


def _print_unsure(c: Comparison) -> None:
    """The possible regressions the gate could not judge: why each blocks the gate, or that --allow-unsure let it by."""
    unsure = c.beyond_threshold_unsure
    if not unsure:
        return
    word = "unsure (--allow-unsure, not failing)" if c.allow_unsure else "could not judge"
    for u in unsure[:_UNSURE_SHOWN]:
        print(f"  {word}: {c.unsure_line(u)}")
    if len(unsure) > _UNSURE_SHOWN:
        print(f"  … and {len(unsure) - _UNSURE_SHOWN} more (every one is in --json-out)")
    if not c.allow_unsure and not c.reasons:
        unit, option = c.unit()
        print(
            f"  (a possible regression beyond the threshold was neither confirmed nor ruled out: rerun on a quiet "
            f"machine or with more {unit} ({option}); --allow-unsure lists these without blocking the gate)"
        )
