"""The budget search, the speedrun's way (issue 37; docs/convergence.md#the-budget-search): for each row of a suite
trained to a target, the smallest step budget N on a stated geometric grid, bounded by --max-steps (ending at --last
where given), at which the speedrun's record rule holds (the seeds' mean validation loss at N below the target by a
one-sided t-test at p < --record-p). Each probe is a whole ./ablate run of the suite with --step-budget=N: every
row's schedule ends at N and every seed of every row trains all N steps, as a record trains its N; the rule each
row's result records there is read back. Rows are searched by bisection on the grid (the rule is taken to hold at
every N above one where it holds), and a probe's run serves every row that asks for the same N.

It ends with each row's N, its seconds at N (the median over its seeds of the timed training seconds of those N
steps) and both as ratios of the baseline's, seconds with a 95% percentile-bootstrap interval: the quantity the
speedrun's record table publishes (minutes to 3.28 with the schedule tuned to end there), beside the published
ratio for the speedrun suite (reports/reference/speedrun.json).

    scripts/find_budget.py --ablate=./ablate --first=40 --ratio=1.5 --out=results/budget -- \\
        --suite=speedrun --preset=tiny --device=cpu --data=corpus:fortunes --target-loss=2.8 --eval-every=5 \\
        --eval-batches=4 --max-steps=400 --lr=3e-3 --target-seeds=5
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEETS = "meets the record rule"
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.speedup import RESAMPLES, SEED, speedup_interval  # noqa: E402


def geometric_grid(first: int, ratio: float, max_steps: int) -> list[int]:
    """first, first·ratio, first·ratio², ... rounded up to whole steps, each at least one more than the last, up to
    and always ending at max_steps."""
    if first < 1 or ratio <= 1 or max_steps < first:
        raise ValueError(f"a grid needs 1 <= first <= max_steps and ratio > 1 (got {first}, {ratio}, {max_steps})")
    grid, n = [], float(first)
    while math.ceil(n) < max_steps:
        step = math.ceil(n)
        if not grid or step > grid[-1]:
            grid.append(step)
        n *= ratio
    return [*grid, max_steps]


def smallest_passing(grid: list[int], meets) -> tuple[int | None, list[int]]:
    """The smallest N of `grid` with meets(N), by bisection (meets taken as monotone: false below some N, true from
    it on), and the Ns probed in order; None when it does not hold even at the grid's last N."""
    probed = []

    def check(i: int) -> bool:
        probed.append(grid[i])
        return meets(grid[i])

    if not check(len(grid) - 1):
        return None, probed
    lo, hi = 0, len(grid) - 1  # the answer is in [lo, hi]; grid[hi] passes
    while lo < hi:
        mid = (lo + hi) // 2
        if check(mid):
            hi = mid
        else:
            lo = mid + 1
    return grid[hi], probed


def seconds_at_budget(doc: dict, budget: int) -> list[float]:
    """Each seed's timed training seconds of its first `budget` steps (its curve's evaluation at the budget)."""
    out = []
    for seed in doc["convergence"]["seeds"]:
        at = [p for p in seed.get("curve", []) if p["step"] == budget]
        if seed.get("status") == "ok" and at:
            out.append(at[0]["time_s"])
    return out


def median_ratio(
    values: list[float], baseline: list[float], key: str
) -> tuple[float | None, float | None, float | None]:
    """median(values) / median(baseline) and its 95% interval: the report's bootstrap (each side resampled apart;
    reports/stepwise_report/speedup.py), none where a side is too small for one."""
    if not values or not baseline:
        return None, None, None
    s = speedup_interval(values, baseline, 1.0, key, "seeds")
    return s.value, s.lo, s.hi


def run_probe(ablate: str, args: list[str], budget: int, out: Path) -> list[dict]:
    """One ./ablate run of the suite with --step-budget=budget; its engine rows' results in suite order."""
    where = out / f"budget_{budget}"
    run = subprocess.run([ablate, *args, f"--step-budget={budget}", "--no-progress", f"--out={where}"], text=True)
    docs = sorted((json.loads(p.read_text()) for p in where.rglob("*.json")), key=lambda d: d["suite"]["index"])
    if run.returncode not in (0, 1) or not docs:  # 1: some row failed, and says so in its result
        raise RuntimeError(f"./ablate --step-budget={budget} exited {run.returncode} with no results in {where}")
    return [d for d in docs if d.get("convergence") and d.get("implementation", "libtorch") == "libtorch"]


def published_ratios() -> dict[int, float]:
    """The speedrun suite's published minutes as ratios of the record table's baseline, by suite row."""
    ref = json.loads((ROOT / "reports" / "reference" / "speedrun.json").read_text())
    rows = ref["rows"]
    base = next(r for r in rows if r.get("baseline"))["minutes_to_target"]
    return {r["step"]: r["minutes_to_target"] / base for r in rows}


def search(probe, grid: list[int]) -> list[dict]:
    """Every row's search, probe(N) (cached) giving the suite's results at N: each row's N, the Ns probed for it, and
    its result at N."""
    cache: dict[int, list[dict]] = {}

    def at(n: int) -> list[dict]:
        if n not in cache:
            cache[n] = probe(n)
        return cache[n]

    rows = len(at(grid[-1]))
    found = []
    for i in range(rows):
        budget, probed = smallest_passing(
            grid, lambda n, i=i: at(n)[i]["convergence"]["record_rule"]["status"] == MEETS
        )
        found.append(
            {"index": i, "budget": budget, "probed": probed, "doc": at(budget)[i] if budget else at(grid[-1])[i]}
        )
    return found


def report(found: list[dict], grid: list[int], suite: str) -> tuple[str, list[dict]]:
    """The table a person reads and the records the JSON keeps."""
    published = published_ratios() if suite == "speedrun" else {}
    base = found[0]
    base_s = seconds_at_budget(base["doc"], base["budget"]) if base["budget"] else []
    lines = [
        f"grid: {', '.join(map(str, grid))} (geometric, ending at --last or --max-steps)",
        f"{'#':>2}  {'row':<48}{'N':>6}  {'x base N':>9}  {'seconds':>8}  {'x base s [95%]':>22}  {'published':>9}",
    ]
    records = []
    for row in found:
        doc, n = row["doc"], row["budget"]
        label = doc["suite"]["label"]
        seconds = seconds_at_budget(doc, n) if n else []
        key = f"find_budget {label}"
        ratio, low, high = median_ratio(seconds, base_s, key) if row is not base else (None, None, None)
        steps_ratio = n / base["budget"] if n and base["budget"] and row is not base else None
        pub = published.get(doc["suite"]["index"])
        cell = "-" if ratio is None else f"x{ratio:.2f}" + (f" [{low:.2f}-{high:.2f}]" if low is not None else "")
        lines.append(
            f"{row['index']:>2}  {label[:47]:<48}{n if n else 'none':>6}  "
            f"{'-' if steps_ratio is None else f'x{steps_ratio:.2f}':>9}  "
            f"{'-' if not seconds else f'{statistics.median(seconds):.1f}':>8}  {cell:>22}  "
            f"{'-' if pub is None or row is base else f'x{pub:.2f}':>9}"
        )
        records.append(
            {
                "index": row["index"],
                "label": label,
                "budget": n,
                "probed": row["probed"],
                "seconds_at_budget": seconds,
                "steps_ratio": steps_ratio,
                "seconds_ratio": {"ratio": ratio, "low": low, "high": high},
                "published_ratio": None if row is base else pub,
                "record_rule": doc["convergence"]["record_rule"],
            }
        )
    lines.append(
        "N: the smallest grid budget at which the row's record rule holds (none: not even at --max-steps); seconds: "
        "median timed training seconds of its N steps; x base: against the baseline's at the baseline's own N, "
        f"[95% percentile bootstrap, {RESAMPLES} resamples, seed {SEED}, the report's]; published: the record table's "
        "minutes over #1's (8x H100)"
    )
    return "\n".join(lines), records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ablate", default=str(ROOT / "ablate"), help="the ablate binary")
    ap.add_argument("--first", type=int, default=40, help="the grid's first budget (steps)")
    ap.add_argument("--ratio", type=float, default=1.5, help="the grid's ratio between budgets (above 1)")
    ap.add_argument(
        "--last", type=int, default=None, help="the grid's last budget, at most --max-steps (default: --max-steps)"
    )
    ap.add_argument("--out", type=Path, required=True, help="a directory for each probe's results and budget.json")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the ./ablate arguments of the suite")
    a = ap.parse_args(argv)
    args = [x for x in a.args if x != "--"]
    max_steps = next((int(x.split("=", 1)[1]) for x in args if x.startswith("--max-steps=")), None)
    if max_steps is None or not any(x.startswith("--target-loss=") for x in args):
        print("find_budget: give the suite's --target-loss and --max-steps (the grid's bound)", file=sys.stderr)
        return 2
    if any(x.startswith("--step-budget") for x in args):
        print("find_budget: leave --step-budget out: each probe sets its own", file=sys.stderr)
        return 2
    if a.last is not None and not 1 <= a.last <= max_steps:
        print(f"find_budget: --last={a.last} must lie in [1, --max-steps={max_steps}]", file=sys.stderr)
        return 2
    try:
        grid = geometric_grid(a.first, a.ratio, a.last or max_steps)
    except ValueError as e:
        print(f"find_budget: {e}", file=sys.stderr)
        return 2
    suite = next((x.split("=", 1)[1] for x in args if x.startswith("--suite=")), "")
    # Written now and again at the end: ./report reads the folder as a search (its probes left out of the runs)
    # while it is under way too.
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "budget.json").write_text(json.dumps({"grid": grid, "args": args, "rows": None}, indent=1) + "\n")
    found = search(lambda n: run_probe(a.ablate, args, n, a.out), grid)
    table, records = report(found, grid, suite)
    print(table)
    (a.out / "budget.json").write_text(json.dumps({"grid": grid, "args": args, "rows": records}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
