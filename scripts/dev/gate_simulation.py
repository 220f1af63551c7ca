#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/../python" "$0" "$@"'
"""How often an interleaved gated run that looks more than once ends in a false FAIL, and how often it still fails a
planted 20% slowdown: the stopping rule simulated with the gate's own verdicts, at the spreads real runs recorded.

A gated run with --against looks at its rounds at the plan's looks (stepwise_report/stats/sequential.py) and stops at
the first that judges (PASS or FAIL); each look is one more chance for noise to cross the line. This replays that rule
many times on simulated rounds: each round gives every row of the definition a paired log difference between its two
sides (its own step time), drawn from a normal with the given spread or resampled from recorded interleaved runs'
pairs (centred, so the null holds, and scaled); the within-run speedups follow from them as they do in a run (a
row's speedup over the baseline row moves by the baseline's difference less its own). Every look judges the rows with
gate.compare_rounds, round_comparison._across_rows and Comparison.exit_code, the gate's own code, at the look's share
of the level. Printed: per spread, the rate of false FAILs (and of exit 3) on unchanged code, the rounds a run took,
and the rate at which each planted slowdown fails naming its row, beside the old rule (a look after every round, each
at the whole level).

  gate_simulation.py [--rows 11] [--spreads 0.03,0.05,0.08,0.11,0.15] [--runs 2000] [--from RUN ...]
      [--rounds 5] [--max-rounds 20] [--threshold 0.1]

--from takes interleaved gated runs (their candidate side; the baseline side is found by the manifest's partner next to
it, or given as BASE:CAND) whose paired differences are resampled instead of a normal.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reports"))

from stepwise_report.gate.comparison import Comparison  # noqa: E402
from stepwise_report.gate.gate import Settings, compare_rounds  # noqa: E402
from stepwise_report.gate.gated_run import load_gated_run  # noqa: E402
from stepwise_report.gate.round_comparison import (  # noqa: E402
    _across_rows,
    _per_token_medians,
    by_configuration,
    measure_for,
)
from stepwise_report.stats.sequential import level_at, looks  # noqa: E402

PLANT = math.log(1.2)


def recorded_differences(pairs: list[tuple[Path, Path]]) -> np.ndarray:
    """Every row's paired log differences of its per-round step time per token over recorded interleaved runs, each
    row centred on its own mean (the null: no change), pooled."""
    pooled = []
    for base_dir, cand_dir in pairs:
        base, cand = load_gated_run(base_dir), load_gated_run(cand_dir)
        b_rows, c_rows = by_configuration(base), by_configuration(cand)
        for key, b in b_rows.items():
            c = c_rows.get(key)
            if c is None or not all(r.ok for r in b + c):
                continue
            measure = measure_for(b + c)
            d = np.log(_per_token_medians(c, measure)) - np.log(_per_token_medians(b, measure))
            pooled.extend(d - d.mean())
    return np.asarray(pooled)


def draw(rng, rounds: int, rows: int, spread: float, pool: np.ndarray | None) -> np.ndarray:
    """(rounds, rows) paired log differences of each row's own step time."""
    if pool is None:
        return rng.normal(0.0, spread, size=(rounds, rows))
    scale = spread / pool.std(ddof=1)
    return rng.choice(pool, size=(rounds, rows)) * scale


def verdict_at(d: np.ndarray, settings: Settings, level: float) -> tuple[int, set[str]]:
    """The gate on the first n rounds of `d` (n, rows): row 0 is the baseline row, each other row has its own time
    and its speedup over row 0. Returns the exit status and the rows named as regressions."""
    n, rows = d.shape
    ones = np.ones(n)
    absolute, relative = [], []
    for j in range(rows):
        v = compare_rounds(ones, np.exp(d[:, j]), settings, worse_when_above=True, paired=True)
        absolute.append({"name": f"row{j}", **v.as_dict()})
        if j:
            v = compare_rounds(ones, np.exp(d[:, 0] - d[:, j]), settings, worse_when_above=False, paired=True)
            relative.append({"name": f"row{j}", "speedup": "× baseline", **v.as_dict()})
    _across_rows(absolute + relative, settings, level)
    from stepwise_report.gate.comparison import gate_reasons

    reasons = gate_reasons(absolute, relative, [], [], "both", "step time")
    c = Comparison(
        kind="gated",
        headlines=("", ""),
        baseline={},
        candidate={},
        settings=settings,
        gate="both",
        same_device=True,
        absolute=absolute,
        relative=relative,
        loss=[],
        lost=[],
        only_in_baseline=[],
        only_in_candidate=[],
        reasons=reasons,
    )
    return c.exit_code, {r.split(":")[0] for r in reasons}


def one_run(rng, plan: list[int], rows: int, spread: float, pool, settings: Settings, plant: str | None, every_look):
    """One gated run under the stopping rule: (exit status, rounds run, rows named). `every_look`: the old rule."""
    d = draw(rng, plan[-1], rows, spread, pool)
    if plant == "one row":
        d[:, 1] += PLANT
    elif plant == "baseline row":
        d[:, 0] += PLANT
    elif plant == "every row":
        d += PLANT
    points = list(range(plan[0], plan[-1] + 1)) if every_look else plan
    for n in points:
        level = settings.alpha if every_look else level_at(settings.alpha, plan, n)
        code, named = verdict_at(d[:n], settings, level)
        if code != 3 or n == points[-1]:
            return code, n, named
    raise AssertionError("unreachable")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=11, help="rows of the definition, the baseline row included (11)")
    p.add_argument("--spreads", default="0.03,0.05,0.08,0.11,0.15", help="sd of a row's paired log difference")
    p.add_argument("--runs", type=int, default=2000, help="simulated runs per spread and case (2000)")
    p.add_argument("--rounds", type=int, default=5, help="the definition's rounds, its first look (5)")
    p.add_argument("--max-rounds", type=int, default=20, help="the definition's max_rounds, its last look (20)")
    p.add_argument("--threshold", type=float, default=0.10, help="the gate's threshold as a fraction (0.10)")
    p.add_argument(
        "--from",
        dest="recorded",
        nargs="*",
        default=[],
        metavar="BASE:CAND",
        help="interleaved gated runs whose paired differences are resampled (BASE:CAND directories)",
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    pool = None
    if args.recorded:
        pool = recorded_differences([tuple(Path(x) for x in pair.split(":", 1)) for pair in args.recorded])
        print(f"resampled from {len(pool)} recorded paired differences (their sd {pool.std(ddof=1):.3f}), scaled")
    settings = Settings(threshold=args.threshold)
    plan = looks(args.rounds, args.max_rounds)
    print(
        f"looks at rounds {', '.join(map(str, plan))}; {args.rows} rows; threshold ±{100 * args.threshold:g}%; "
        f"{args.runs} runs per cell"
    )
    print()
    print(
        "| spread | rule | false FAIL | exit 3 | rounds (median) | 20% on one row: FAIL, named, PASS | 20% on the "
        "baseline row: FAIL, named, PASS | 20% on every row: FAIL, PASS |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for spread in (float(s) for s in args.spreads.split(",")):
        for every_look, name in ((True, "every round, whole level"), (False, "the plan's looks, spent level")):
            rng = np.random.default_rng([args.seed, int(spread * 1000)])
            null = [one_run(rng, plan, args.rows, spread, pool, settings, None, every_look) for _ in range(args.runs)]
            cells = [
                f"{spread:.2f}",
                name,
                f"{100 * np.mean([c == 1 for c, _, _ in null]):.2f}%",
                f"{100 * np.mean([c == 3 for c, _, _ in null]):.1f}%",
                f"{np.median([n for _, n, _ in null]):.0f}",
            ]
            for plant, row in (("one row", "row1"), ("baseline row", "row0"), ("every row", None)):
                runs = [
                    one_run(rng, plan, args.rows, spread, pool, settings, plant, every_look)
                    for _ in range(args.runs // 4)
                ]
                fails = np.mean([c == 1 for c, _, _ in runs])
                named = np.mean([c == 1 and (row is None or row in named) for c, _, named in runs])
                passed = np.mean([c == 0 for c, _, _ in runs])  # a planted slowdown gone green: the worst outcome
                cells.append(
                    f"{100 * fails:.1f}%" + (f", {100 * named:.1f}%" if row else "") + f", {100 * passed:.1f}%"
                )
            print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
