"""Two gated runs compared round by round: each speedup's spread between runs, measured, is the noise the gate tests.

A speedup measured inside one run divides a row by its reference measured minutes apart; on a shared machine the
speed drifts between the two by more than the steps inside a row vary, so a test on one run's step samples calls the
drift significant (two runs of the same commit failed the gate that way). A gated run (gated_run.py) measures every
row once per round, R rounds in a row, so each speedup has R values per side and their spread holds the drift; the
verdict is the ratio of the sides' geometric means with Welch's t-interval on the logs (gate.compare_rounds). Two
runs made apart also differ in what the machine was doing while each ran, and some speedups move with the load (a
parallel build beside one of them shrank several by 10-15%: docs/ci.md); so the workflow makes both sides in one job,
interleaved row by row (gated_run.py --against), and for such partners the verdict pairs round k of one with round k
of the other (the t-interval on the logs of the pairs' ratios), the load each pair shared dropping out. Absolute step
times are compared the same way, on the rounds' median time per token. Configurations are matched by name; one whose
configuration changed between the sides is a "changed" line, never a regression; the baseline's commit, when older,
is named in the notes.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import median

import numpy as np

from ..analysis.analysis import build_chain
from ..read.machine import describe
from ..read.results import InputError, Result
from ..stats.sequential import level_at
from ..stats.speedup import speedup_point
from .comparison import Comparison, gate_reasons, lost_row, lost_verdict, noise_entry, refuse_different_machines
from .gate import FASTER, NOT_COMPARED, SLOWER, UNSURE, Settings, compare_rounds, untested
from .gated_run import DEFAULT_THRESHOLD, GATED, GatedRun
from .run_comparison import config_difference, loss_rows, speedup_specs, stale_notes
from .work_comparison import compare_work

# A configuration across a run's rounds: (name, implementation) -> its result in each round, in round order.
Rounds = dict[tuple[str, str], list[Result]]
# What a per-round value is computed from: each step's process CPU time where every result involved has it (the C++
# engine's CPU rows), else its wall-clock time. On one thread, other work on the machine that preempts a step makes it
# longer on the clock but not in CPU time: measured here under a parallel build, a step's wall time grew 3.3x and its
# CPU time 1.1x (docs/ci.md), so CPU time is what a shared machine can gate on.
CPU_TIME, WALL_TIME = "cpu_ms", "ms"
MEASURE_NAMES = {CPU_TIME: "process CPU time per step", WALL_TIME: "wall-clock time per step"}


def measure_for(results) -> str:
    return CPU_TIME if all(r.samples_cpu_ms is not None for r in results) else WALL_TIME


def samples(r: Result, measure: str) -> list[float]:
    return r.samples_cpu_ms if measure == CPU_TIME else r.samples_ms


def interleaved(base: GatedRun, cand: GatedRun) -> bool:
    """The two runs were made in one job, interleaved row by row, each naming the other (gated_run.py --against):
    their rounds pair."""
    return (
        (base.manifest.get("interleaved") or {}).get("with") == cand.run_id
        and (cand.manifest.get("interleaved") or {}).get("with") == base.run_id
        and len(base.rounds) == len(cand.rounds)
    )


def by_configuration(run: GatedRun) -> Rounds:
    rows: Rounds = defaultdict(list)
    for results in run.rounds:
        for r in results:
            rows[(r.name, r.implementation)].append(r)
    return rows


def round_speedups(results: list[Result], measure: str = WALL_TIME) -> dict[tuple[str, str, str], float]:
    """Every within-run speedup of one round, as the report and the plain gate define them (× previous, × baseline,
    all ÷ without for leave-one-out): (suite, row name, speedup label) -> tokens per unit of `measure` of the step
    over its reference's."""
    out = {}
    libtorch = [r for r in results if r.is_libtorch and r.suite]
    for suite in sorted({r.suite_name for r in libtorch}):
        steps = build_chain([r for r in libtorch if r.suite_name == suite])
        kind = steps[0].result.suite_kind
        for label, step, ref, _, _ in speedup_specs(steps, steps):
            if ref is None:
                continue
            # Leave-one-out measures a flag by removing it: its speedup is all ÷ without.
            slow, fast = (step, ref) if kind == "leave_one_out" else (ref, step)
            tokens = fast.result.tokens_per_step / slow.result.tokens_per_step
            value = speedup_point(
                np.asarray(samples(slow.result, measure)), np.asarray(samples(fast.result, measure)), tokens
            )
            out[(suite, step.result.name, label)] = value
    return out


def _per_token_medians(rounds: list[Result], measure: str) -> list[float]:
    return [float(np.median(samples(r, measure))) / r.tokens_per_step for r in rounds]


def _geometric_mean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def _round_noise(side: str, name: str, values: list[float]) -> dict:
    # Between rounds there is no --max-noise to hold the spread to: the entry says how wide it was.
    return noise_entry(side, f"{name} between rounds", values, None, None, noisy=False)


def _absolute(
    pairs, settings: Settings, lost: dict[str, dict], changed_names: set[str], paired: bool = False
) -> list[dict]:
    rows = []
    for (name, _), b_rounds, c_rounds in pairs:
        row = {
            "name": name,
            "candidate_name": name,
            "matched_by": "name",
            "baseline_n": len(b_rounds),
            "candidate_n": len(c_rounds),
            "baseline_median_ms": None,
            "candidate_median_ms": None,
        }
        b_ok, c_ok = all(r.ok for r in b_rounds), all(r.ok for r in c_rounds)
        # Each side's step time in the measure its verdict tests (CPU time where both sides have it): the geometric
        # mean over the rounds of each round's median, whose ratio is the change beside it.
        measure = measure_for([r for r in b_rounds + c_rounds if r.ok])
        if b_ok:
            row["baseline_median_ms"] = _geometric_mean([float(np.median(samples(r, measure))) for r in b_rounds])
        if c_ok:
            row["candidate_median_ms"] = _geometric_mean([float(np.median(samples(r, measure))) for r in c_rounds])
        if name in changed_names:
            verdict = untested(NOT_COMPARED, "configuration changed between the sides (see changed)")
        elif name in lost:
            verdict = lost_verdict(lost[name])
        elif not (b_ok and c_ok):
            verdict = untested(NOT_COMPARED, "not ok in every round of both sides")
        else:
            b, c = _per_token_medians(b_rounds, measure), _per_token_medians(c_rounds, measure)
            verdict = compare_rounds(b, c, settings, worse_when_above=True, paired=paired)
            verdict.note += f" (per-round medians of the {MEASURE_NAMES[measure]}, per token)"
            row["measure"] = measure
            row["noise"] = [_round_noise("baseline", name, b), _round_noise("candidate", name, c)]
        rows.append({**row, **verdict.as_dict()})
    return rows


def relative_measure(base: GatedRun, cand: GatedRun) -> str:
    """The measure the within-run speedups are judged on: CPU time when every ok C++ row of both runs carries it."""
    return measure_for([r for run in (base, cand) for rs in run.rounds for r in rs if r.is_libtorch and r.ok])


def _relative(
    base: GatedRun, cand: GatedRun, settings: Settings, changed_names: set[str], measure: str, paired: bool = False
) -> list[dict]:
    b_rounds = [round_speedups(results, measure) for results in base.rounds]
    c_rounds = [round_speedups(results, measure) for results in cand.rounds]
    keys = [k for k in b_rounds[0] if all(k in r for r in b_rounds)]
    rows = []
    for suite, name, label in keys:
        row = {"suite": suite, "name": name, "speedup": label}
        if name in changed_names:
            rows.append({**row, **untested(NOT_COMPARED, "configuration changed between the sides").as_dict()})
            continue
        if not all((suite, name, label) in r for r in c_rounds):
            rows.append({**row, **untested(NOT_COMPARED, "not measured in every round of the candidate").as_dict()})
            continue
        b = [r[(suite, name, label)] for r in b_rounds]
        c = [r[(suite, name, label)] for r in c_rounds]
        verdict = compare_rounds(b, c, settings, worse_when_above=False, paired=paired)
        rows.append(
            {
                **row,
                "baseline_speedup": median(b),
                "candidate_speedup": median(c),
                "baseline_rounds": b,
                "candidate_rounds": c,
                "n": min(len(b), len(c)),
                "measure": measure,
                "noise": [_round_noise("baseline", name, b), _round_noise("candidate", name, c)],
                **verdict.as_dict(),
            }
        )
    return rows


def _across_rows(rows: list[dict], settings: Settings, level: float | None = None) -> None:
    """A change is called (SLOWER, FASTER) only when its p stays below the look's level across every row the gate
    tests (Bonferroni): ten speedups tested at 0.05 each would call one of ten same-commit pairs a regression by chance
    alone. `level` is this look's share of alpha when the run looked more than once (sequential.py), else alpha. A
    call that does not hold becomes UNSURE, which beyond the threshold keeps the gate from passing (exit 3) and an
    interleaved run answers with more rounds."""
    level = settings.alpha if level is None else level
    tested = [r for r in rows if r.get("p_value") is not None]
    bar = level / max(len(tested), 1)
    for r in tested:
        if r["verdict"] in (SLOWER, FASTER) and r["p_value"] >= bar:
            r["note"] = (
                f"{r['note']}, but p {r['p_value']:.2g} is not below {level:.3g}/{len(tested)} across the "
                f"{len(tested)} rows the gate tests"
            )
            r["verdict"] = UNSURE


def looked_at(base: GatedRun, cand: GatedRun) -> list[int]:
    """The rounds after which the run's gate looked (its recorded plan); a run that recorded none looked once, at the
    end: it is judged at the whole level, as it was before runs kept a plan."""
    plan = cand.stopping or base.stopping
    return list(plan["looks"]) if plan else [len(cand.rounds)]


def _changed(base: GatedRun, cand: GatedRun, pairs) -> tuple[list[dict], set[str]]:
    """What differs between the two definitions and between matched configurations: listed, never judged."""
    changed = []
    for key in ("suites", "args", "rounds"):
        b, c = base.definition[key], cand.definition[key]
        if b != c:
            changed.append({"name": f"definition: {key}", "note": f"{b} vs {c}"})
    names = set()
    for (name, _), b_rounds, c_rounds in pairs:
        diff = config_difference(b_rounds[0], c_rounds[0])
        if diff is not None:
            changed.append({"name": name, "note": diff})
            names.add(name)
    return changed, names


def _headline(run: GatedRun) -> str:
    return f"{run.run_id} ({describe(run.env)}; commit {run.git_commit[:12]}; {len(run.rounds)} rounds)"


def _describe(run: GatedRun) -> dict:
    first = run.rounds[0][0]
    return {
        "path": str(run.path),
        "run_id": run.run_id,
        "device": first.device_key,
        "machine": describe(run.env),
        "git_commit": run.git_commit,
        "git_dirty": first.git_dirty,
        "timestamp": run.manifest.get("started") or first.timestamp,
        "configurations": len({(r.name, r.implementation) for r in run.rounds[0]}),
        "rounds": len(run.rounds),
    }


def compare_gated_runs(
    base: GatedRun,
    cand: GatedRun,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
    across_machines: bool = False,
    accepted_work: frozenset[str] = frozenset(),
) -> Comparison:
    """CANDIDATE's gated run against BASELINE's, round by round. Two machines are refused
    (comparison.DifferentMachines) unless `across_machines`, which judges the within-run speedups only. Where the
    rows counted what a step dispatches, their counts are compared exactly (work_comparison.py); `accepted_work`
    names the rows whose added work the change meant."""
    same_machine = refuse_different_machines(base.env, cand.env, across_machines)
    if not same_machine and which != "relative":
        raise InputError(
            "--across-machines judges the within-run speedups only: pass --gate relative (absolute step times of "
            "two machines are not a comparison)"
        )
    b_rows, c_rows = by_configuration(base), by_configuration(cand)
    pairs = [(key, b_rows[key], c_rows[key]) for key in b_rows if key in c_rows]
    only_base = [key for key in b_rows if key not in c_rows]
    if not pairs:
        raise InputError(f"no configuration of the baseline ({base.run_id}) is in the candidate ({cand.run_id})")
    changed, changed_names = _changed(base, cand, pairs)
    lost = []
    for (name, _), b_rounds, c_rounds in pairs:
        if name not in changed_names and all(r.ok for r in b_rounds):
            bad = next((r for r in c_rounds if not r.ok), None)
            if bad is not None or len(c_rounds) < len(b_rounds):
                status = bad.status if bad is not None else "missing"
                lost.append(lost_row(name, status, bad.reason if bad is not None else None, allow_missing))
    lost += [lost_row(key[0], "missing", None, allow_missing) for key in only_base if all(r.ok for r in b_rows[key])]
    paired = interleaved(base, cand)
    counted = [
        (name, b_rounds, c_rounds)
        for (name, _), b_rounds, c_rounds in pairs
        if name not in changed_names and any(r.data.get("op_counts") for r in b_rounds + c_rounds)
    ]
    work = compare_work(counted, set(accepted_work)) if same_machine else []
    abs_rows = _absolute(pairs, settings, {r["name"]: r for r in lost}, changed_names, paired)
    measure = relative_measure(base, cand)
    rel_rows = _relative(base, cand, settings, changed_names, measure, paired)
    plan = looked_at(base, cand)
    level = level_at(settings.alpha, plan, len(cand.rounds))
    _across_rows(
        (abs_rows if which in ("absolute", "both") and same_machine else [])
        + (rel_rows if which in ("relative", "both") else []),
        settings,
        level,
    )
    losses: dict[str, dict] = {}
    for b_results, c_results in zip(base.rounds, cand.rounds):
        b_by_name = {(r.name, r.implementation): r for r in b_results}
        round_pairs = [
            (b_by_name[(c.name, c.implementation)], c, "name")
            for c in c_results
            if (c.name, c.implementation) in b_by_name
        ]
        for row in loss_rows(round_pairs):
            losses.setdefault(row["name"], row)
    loss = list(losses.values())
    notes = [
        f"rounds: each row measured once per round ({len(base.rounds)} baseline, {len(cand.rounds)} candidate); a "
        f"verdict tests the per-round values, so the noise between runs is in its interval"
        + (
            "; the two runs were interleaved row by row, so round k of each pairs with round k of the other"
            if paired
            else ""
        ),
        f"measure: the within-run speedups are judged on the {MEASURE_NAMES[measure]}"
        + (
            " (one thread: other work that preempts a step lengthens it on the clock, not in CPU time)"
            if measure == CPU_TIME
            else ""
        ),
    ]
    if len(plan) > 1:
        notes.append(
            f"looks: the run looked after rounds {', '.join(map(str, plan))} and stops at the first that judges; "
            f"at {len(cand.rounds)} rounds a change is called below {level:.3g} of the level {settings.alpha:g} "
            f"(its share under the spending rule, docs/ci.md), divided among the rows tested"
        )
    if not same_machine:
        notes.append("different machines (--across-machines): only the within-run speedups are judged")
    notes += stale_notes(base.git_commit, cand.git_commit)
    return Comparison(
        kind="gated",
        headlines=(_headline(base), _headline(cand)),
        baseline=_describe(base),
        candidate=_describe(cand),
        settings=settings,
        gate=which,
        same_device=same_machine,
        absolute=abs_rows,
        relative=rel_rows,
        loss=loss,
        lost=lost,
        only_in_baseline=[name for name, _ in only_base],
        only_in_candidate=[key[0] for key in c_rows if key not in b_rows],
        reasons=gate_reasons(abs_rows, rel_rows, loss, lost, which, "step time", work),
        allow_missing=allow_missing,
        notes=notes,
        changed=changed,
        work=work,
    )


def judge(
    base: GatedRun,
    cand: GatedRun,
    threshold: float | None = None,
    which: str | None = None,
    alpha: float | None = None,
    **options,
) -> Comparison:
    """The gate on two gated runs with what the run stopped on (its recorded threshold, gate and level), unless told
    otherwise: the one call the run's own stopping rule (scripts/gated_run.py) and `./report compare` both make, so
    the verdict that ends the run is the verdict CI reads. Anything told otherwise is named in the notes."""
    plan = cand.stopping or base.stopping or {}
    stopped_on = plan.get("threshold", cand.definition.get("threshold", DEFAULT_THRESHOLD))
    settings = Settings(
        threshold=stopped_on if threshold is None else threshold,
        alpha=plan.get("alpha", Settings.alpha) if alpha is None else alpha,
        **{k: options.pop(k) for k in ("min_samples", "resamples", "seed") if options.get(k) is not None},
    )
    options = {k: v for k, v in options.items() if k not in ("min_samples", "resamples", "seed")}
    comparison = compare_gated_runs(base, cand, settings, which or plan.get("gate", GATED), **options)
    if plan and (settings.threshold != stopped_on or comparison.gate != plan.get("gate", GATED)):
        comparison.notes.append(
            f"the run stopped on ±{100 * stopped_on:g}% gating {plan.get('gate', GATED)}; judged here at "
            f"±{100 * settings.threshold:g}% gating {comparison.gate}: its stopping rule's level holds for the former"
        )
    return comparison
