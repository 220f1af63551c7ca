#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""./run_all.sh's plan: how long each suite will take on this machine, and what to leave out to fit a time budget.

On a laptop-class CPU the main job's cost is dominated by things a fast machine never notices: bf16 emulated on AVX2
(one tiny step taking seconds), torch.compile's first compile per Python row, and time to target training every
flag, and the speedrun's techniques, on several seeds. So before the first suite, as nvbench plans within a time
budget, this script probes the machine (a few steps in float32 and in bf16, a Python row's start, the baseline
trained once to the target), asks ./ablate --dry-run which configurations each suite will run, and costs each row
from its precision, batch and the run's caps (--max-time bounds every phase of a row). The budget covers the whole
job: what planning took and a minute for ./report come out of it first. Where the estimate exceeds it, the plan
cuts, in this order, each cut said with its reason: the budget search (./ablate --find-budget: a line per seed
branched at every budget for a trapezoid row, the grid scanned down from scratch for a cosine one); time to target on
2 seeds; no torch.compile Python rows; time to target without max_batch; a shorter --max-
time per row; time to target without the suites after the first (the speedrun suite); no time to target; suites from
the end of the list. An option the caller gave (--target-seeds, --max-time) is never overridden. Time to target
never trains a bf16 row where bf16 is emulated, whatever the budget: it would measure the emulation.

Every estimate is an upper bound from measured figures (a row stops at --max-time or --max-steps, whichever first),
except one: a torch.compile Python row's compile time, taken from the newest such result under results/, else
stated as assumed.

An option of a flag (--softcap, --muon-lr: `./ablate --list-flags --json` says whose) goes only to the suites whose
configurations run that flag, as ./ablate refuses it where none does; one no suite of the run enables is a usage
error (exit 2) naming the flag.

stdout, for run_all.sh (one line each): `held INDEX...` (the positions, among the ./ablate arguments after --, of the
flag options, which each line below carries where its suite runs the flag), `suite NAME SECONDS ARGS...`, `target
SUITE SECONDS ARGS...` (each suite trained to the target), `budget SUITE SECONDS ARGS...` (the budget search of that
suite, when it fits; ARGS for ./ablate --find-budget: its grid and the target's seeds), `total SECONDS`.
stderr: the plan as a table a person reads.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.read.inputs import read_plan, read_results  # noqa: E402
from stepwise_report.read.results import InputError, Result  # noqa: E402

# The caps a CPU run's rows get when the budget is tight: --max-time steps down through these (seconds).
MAX_TIME_STEPS = (3.0, 2.0)
# The fewest seeds Welch's test in the convergence guard can compare.
MIN_SEEDS = 2
# torch.compile's compile of one Python row when no result on this machine says how long it took: an assumption,
# printed as one (inductor compiles the tiny GPT in tens of seconds on a 2-core CPU).
ASSUMED_COMPILE_S = 90.0
# The target probe's cap on its one seed (seconds of training, off the clock for evaluations).
TARGET_PROBE_S = 45.0
# Kept from the budget for ./report at the end (its plots and dashboard over every result of the run).
REPORT_RESERVE_S = 60.0


def say(text: str = "") -> None:
    print(text, file=sys.stderr, flush=True)


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    began = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True)
    return time.monotonic() - began, run


@dataclass
class Machine:
    """What the probe measured: seconds to start ./ablate, per row, per step in each precision, per Python start."""

    start_s: float
    row_s: float
    step_s: dict[str, float]  # "fp32", "bf16"
    python_start_s: float | None
    python_step_ratio: float  # a Python eager step over the engine's
    bf16_emulated: bool
    bf16_why: str | None
    compile_s: float
    compile_source: str
    seed_s: float | None = None  # the baseline trained to the target once, one seed, wall seconds
    seed_step_s: float | None = None  # that seed's wall seconds per step trained (evaluations included)


# The options a probe sets itself: the caller's own values of them are left out of the probe's command.
PROBE_OPTIONS = (
    "--warmup",
    "--min-steps",
    "--steps",
    "--max-steps",
    "--max-time",
    "--target-seeds",
    "--seeds",
    "--out",
    "--enable",
    "--implementations",
)


def without(args: list[str], options: tuple[str, ...] = PROBE_OPTIONS) -> list[str]:
    """`args` less `options`, given as --opt=value or as --opt value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in options:
            skip = True
        elif not any(a.startswith(o + "=") for o in options):
            out.append(a)
    return out


def probe_row(ablate: str, out: Path, args: list[str], extra: list[str]) -> tuple[float, Result]:
    out.parent.mkdir(parents=True, exist_ok=True)
    wall, run = timed(
        [
            ablate,
            *args,
            *without(extra),
            "--warmup=1",
            "--min-steps=3",
            "--max-steps=3",
            "--max-time=600",
            "--no-progress",
            f"--out={out}",
        ]
    )
    if run.returncode != 0 or not out.exists():
        raise RuntimeError(f"the probe {' '.join(args)} failed: {(run.stderr or run.stdout).strip()[-300:]}")
    rows = read_results([out])
    if not rows or rows[-1].median_ms is None:
        raise RuntimeError(f"the probe {' '.join(args)} measured no step: {(run.stderr or run.stdout).strip()[-300:]}")
    return wall, rows[-1]


def median_step_s(row: Result) -> float:
    return row.median_ms / 1000.0


def newest_compile_s(preset: str, device: str) -> tuple[float, str]:
    """The compile time of the newest torch.compile Python row under results/ at this preset on this device."""
    newest = None
    for path in (ROOT / "results").rglob("*.python-compile*.json"):
        try:
            rows = read_results([path])
        except InputError:
            continue  # a result this checkout does not read (an older schema): another machine's past, not this one
        for row in rows:
            seconds, config = row.compile_s, row.config
            if seconds and config.get("preset") == preset and str(config.get("device", "")).startswith(device):
                if newest is None or path.stat().st_mtime > newest[0]:
                    newest = (path.stat().st_mtime, float(seconds), str(path.relative_to(ROOT)))
    if newest:
        return newest[1], f"measured: {newest[2]}"
    return ASSUMED_COMPILE_S, "assumed: no torch.compile row has run on this machine yet"


def probe(
    ablate: str, python: str | None, extra: list[str], target: list[str] | None, preset: str, device: str, scratch: Path
) -> Machine:
    say("[plan] probing this machine: a few steps in float32 and bf16, a Python row, the baseline to the target")
    start, run = timed([ablate, "--describe", *without(extra)])
    if run.returncode != 0:
        raise RuntimeError(f"./ablate --describe failed: {run.stderr.strip()[-300:]}")
    wall32, fp32 = probe_row(ablate, scratch / "fp32.json", [], extra)
    _, bf16 = probe_row(ablate, scratch / "bf16.json", ["--enable=bf16"], extra)
    env = fp32.env
    emulated = device == "cpu" and fp32.cpu_bf16_native is False
    steps32 = 4 * median_step_s(fp32)
    python_start, ratio = None, 1.0
    if python:
        wall_py, eager = probe_row(ablate, scratch / "python", ["--implementations=python-eager"], extra)
        ratio = median_step_s(eager) / median_step_s(fp32)
        python_start = max(0.0, wall_py - start - 4 * median_step_s(eager))
    compile_s, compile_source = newest_compile_s(preset, device)
    machine = Machine(
        start_s=start,
        row_s=max(0.2, wall32 - start - steps32),
        step_s={"fp32": median_step_s(fp32), "bf16": median_step_s(bf16)},
        python_start_s=python_start,
        python_step_ratio=ratio,
        bf16_emulated=emulated,
        bf16_why=env.get("cpu_bf16_emulated_because"),
        compile_s=compile_s,
        compile_source=compile_source,
    )
    if target is not None:
        # One seed of the baseline, capped so a slow machine does not spend the budget planning: a seed the cap
        # stopped is costed as if its steps went on at that pace to the seed's own step cap (an upper bound).
        out = scratch / "target"
        wall, run = timed(
            [
                ablate,
                *without(extra),
                *without(target),
                "--target-seeds=1",
                f"--max-time={TARGET_PROBE_S:g}",
                "--no-progress",
                f"--out={out}",
            ]
        )
        rows = read_results([out])
        seeds = ((rows[0].data.get("convergence") or {}).get("seeds") or [{}]) if rows else [{}]
        if rows and seeds[0].get("steps"):
            seconds = max(0.0, wall - start)
            trained = (seeds[0].get("curve") or [{}])[-1].get("step") or seeds[0]["steps"]
            machine.seed_step_s = seconds / trained
            if not seeds[0].get("reached"):
                cap = (rows[0].config.get("target") or {}).get("max_steps") or seeds[0]["steps"]
                seconds *= cap / seeds[0]["steps"]
            machine.seed_s = seconds
    return machine


def flag_options(ablate: str) -> dict[str, dict]:
    """Each flag option's command-line name -> its declaration and its flag (./ablate --list-flags --json)."""
    run = subprocess.run([ablate, "--list-flags", "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"./ablate --list-flags --json failed: {(run.stderr or run.stdout).strip()[-300:]}")
    return {o["cli"]: {**o, "flag": f["name"]} for f in json.loads(run.stdout) for o in f.get("options", [])}


def held_options(args: list[str], options: dict[str, dict]) -> tuple[list[int], list[tuple[str, list[str]]]]:
    """The positions in `args` of the flag options that belong to their flag's suites (all but one that acts while
    its flag is off, --adamw-baseline), and each as (its flag, its arguments: "--x=v", "--x v" or a switch)."""
    held, found, i = [], [], 0
    while i < len(args):
        o = options.get(args[i].split("=", 1)[0])
        if o is None or o["acts_while_off"]:
            i += 1
            continue
        n = 1 if "=" in args[i] or o["type"] == "boolean" else 2
        held += range(i, min(i + n, len(args)))
        found.append((o["flag"], args[i : i + n]))
        i += n
    return held, found


def flags_run(plan: dict) -> set[str]:
    """The flags some configuration of a dry run asks for (in effect, or skipped on this machine)."""
    rows = plan["configurations"]
    return {f for r in rows for f in r["flags"]} | {s["flag"] for r in rows for s in r.get("flags_skipped") or []}


def dry_run(ablate: str, suite: str, args: list[str]) -> dict:
    """The suite's plan (results/plan.schema.json), checked against its schema before any sum reads a key of it."""
    run = subprocess.run([ablate, f"--suite={suite}", *args, "--dry-run", "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"./ablate --suite={suite} --dry-run failed: {(run.stderr or run.stdout).strip()[-300:]}")
    return read_plan(run.stdout, f"./ablate --suite={suite} --dry-run --json")


def step_seconds(m: Machine, row: dict, base_batch: int) -> float:
    precision = "bf16" if row["precision"] in ("bf16", "fp8") else "fp32"
    return m.step_s[precision] * max(1, row["batch_size"]) / max(1, base_batch)


def row_seconds(m: Machine, row: dict, timing: dict, max_time: float, base_batch: int, compile_rows: bool) -> float:
    """An upper bound on one configuration's wall time: each phase stops at --max-time (or its step count)."""
    if row["skip_reason"]:
        return 0.0
    step = step_seconds(m, row, base_batch)
    warmup = min(timing["warmup"] * step, max_time + step)
    measured = min(timing["max_steps"] * step, max_time + step)
    probe = 0.0
    if row["max_batch"] and row.get("max_batch_limit"):
        # Each power of two up to the limit: a fresh model's two steps, until --max-batch-time.
        batches = int(math.log2(max(1, row["max_batch_limit"] // max(1, base_batch)))) + 1
        per = m.step_s["bf16" if row["precision"] in ("bf16", "fp8") else "fp32"]
        probe = min(sum(2 * per * 2**i for i in range(batches)), min(max_time, timing["max_batch_time_s"]) + per)
    seconds = m.row_s + warmup + measured + probe + (m.start_s if row["host_allocator"] else 0.0)
    for implementation in row["implementations"]:
        if implementation == "libtorch":
            continue
        if implementation != "python-eager" and not compile_rows:
            continue
        py_step = step * m.python_step_ratio
        seconds += (m.python_start_s or 0.0) + m.row_s + min(timing["warmup"] * py_step, max_time + py_step)
        seconds += min(timing["max_steps"] * py_step, max_time + py_step)
        if implementation != "python-eager":
            seconds += m.compile_s
    return seconds


@dataclass
class SuitePlan:
    name: str
    plan: dict
    args: list[str] = field(default_factory=list)

    def seconds(self, m: Machine, max_time: float, compile_rows: bool) -> float:
        timing = self.plan["timing"]
        rows = self.plan["configurations"]
        base_batch = rows[0]["batch_size"] if rows else 1
        return m.start_s + sum(row_seconds(m, r, timing, max_time, base_batch, compile_rows) for r in rows)


@dataclass
class TargetPlan:
    rows: dict[str, list[dict]]  # per suite trained to the target (one_at_a_time, speedrun), its configurations
    seeds: int
    left_out: list[str]

    def suite_seconds(self, m: Machine, name: str) -> float:
        """Each row's seeds at the baseline's measured seconds to the target, scaled by the row's step cost: an
        estimate (a learning flag that reaches the target in fewer steps costs less). A row on a declared horizon
        (its step_budget: --step-budget or the suite's own) trains every seed to it, crossed or not: N steps at the
        probe's pace a step."""
        rows = self.rows[name]
        if m.seed_s is None:
            return 0.0
        base_batch = rows[0]["batch_size"] if rows else 1
        base_step = m.step_s["fp32"]
        total = m.start_s
        for row in rows:
            if row["skip_reason"]:
                continue
            budget = row.get("step_budget")
            seed = budget * m.seed_step_s if budget and m.seed_step_s else m.seed_s
            total += self.seeds * seed * step_seconds(m, row, base_batch) / base_step
        return total

    def seconds(self, m: Machine) -> float:
        return sum(self.suite_seconds(m, name) for name in self.rows)

    def search_seconds(self, m: Machine, name: str, search: dict) -> float:
        """The budget search as ./ablate --find-budget --dry-run plans it (`search`: its budget_search, the grid and
        per row the steps a seed trains): a branched row at its steps; a row that trains each budget from scratch
        scans the grid down from its last budget until the rule first fails, unknown before the runs, so costed as
        ending mid-grid (the budgets from there up, and the one below)."""
        if m.seed_s is None:
            return 0.0
        grid = search["grid"]
        mid = len(grid) // 2
        scan = sum(grid[mid:]) + (grid[mid - 1] if mid else 0)
        planned = {r["index"]: r for r in search["rows"]}
        per_step = m.seed_step_s or m.step_s["fp32"]  # evaluations included where the probe measured them
        rows = self.rows[name]
        base_batch = rows[0]["batch_size"] if rows else 1
        total = m.start_s
        for row in rows:
            if row["skip_reason"] or row["index"] not in planned:
                continue
            steps = planned[row["index"]]["steps_per_seed"] if planned[row["index"]]["branched"] else scan
            total += self.seeds * steps * per_step * step_seconds(m, row, base_batch) / m.step_s["fp32"]
        return total

    def keep(self, wanted) -> None:
        """Only the rows `wanted(row)` says, in every suite."""
        self.rows = {name: [r for r in rows if wanted(r)] for name, rows in self.rows.items()}


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ablate", required=True, help="the ablate binary")
    ap.add_argument("--python", help="the interpreter of the Python rows (omit when there are none)")
    ap.add_argument("--suites", required=True, help="space-separated suite names, in run order")
    ap.add_argument("--python-rows", default="", help="python-eager,python-compile: the rows at the suites' ends")
    ap.add_argument("--budget-minutes", type=float, default=None, help="fit the plan within this (default: no cut)")
    ap.add_argument("--target", default=None, help="time-to-target arguments (quoted), if that step runs")
    ap.add_argument("--target-seeds", type=int, default=3)
    ap.add_argument(
        "--target-suites", default="one_at_a_time", help="space-separated suites trained to the target, in run order"
    )
    ap.add_argument(
        "--budget-search",
        default="",
        help="a suite trained to the target whose budget search (./ablate --find-budget) runs after it, if it fits",
    )
    ap.add_argument("--budget-first", type=int, default=40, help="the search grid's first budget (--budget-first)")
    ap.add_argument("--budget-ratio", type=float, default=1.5, help="the search grid's ratio (--budget-ratio)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("extra", nargs=argparse.REMAINDER, help="-- then ./ablate arguments every suite gets")
    a = ap.parse_args(argv)
    extra = [x for x in a.extra if x != "--"]
    try:
        held, by_flag = held_options(extra, flag_options(a.ablate))
    except (RuntimeError, OSError, json.JSONDecodeError, KeyError, InputError) as e:
        say(f"[plan] no plan: {e}; every suite runs as asked")
        return 1
    extra = [x for i, x in enumerate(extra) if i not in held]  # what every suite gets

    def own(plan: dict) -> list[str]:
        """The flag options whose flag this suite's configurations run."""
        return [x for flag, tokens in by_flag if flag in flags_run(plan) for x in tokens]

    def suite_plan(name: str, args: list[str]) -> tuple[dict, list[str]]:
        """A suite's dry run with its own flag options (a second dry run where it has some: they shape its rows)."""
        plan = dry_run(a.ablate, name, args)
        return (dry_run(a.ablate, name, [*args, *own(plan)]), own(plan)) if own(plan) else (plan, [])

    suites = a.suites.split()
    python_rows = [r for r in a.python_rows.split(",") if r]
    target_args = a.target.split() if a.target is not None else None

    def given(*names: str) -> bool:  # the caller's own choice, which the plan never overrides
        return any(x == n or x.startswith(n + "=") for x in extra + (target_args or []) for n in names)

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stepwise-plan-") as scratch:
        try:
            m = probe(
                a.ablate, a.python if python_rows else None, extra, target_args, a.preset, a.device, Path(scratch)
            )
            plans, options, used = [], {}, set()
            for name in suites:
                args = []
                if python_rows and name in ("raschka", "karpathy"):
                    args = [f"--implementations=libtorch,{','.join(python_rows)}", "--implementations-at=ends"]
                plan, options[name] = suite_plan(name, [*args, *extra])
                plans.append(SuitePlan(name, plan, args))
                used |= flags_run(plan)
            target = None
            if target_args is not None:
                rows = {}
                for s in a.target_suites.split():
                    plan, options[f"target {s}"] = suite_plan(s, [*target_args, *extra])
                    rows[s] = plan["configurations"]
                    used |= flags_run(plan)
                target = TargetPlan(rows, a.target_seeds, ["bf16"] if m.bf16_emulated else [])
                target.keep(lambda r: "bf16" not in r["flags"] or not m.bf16_emulated)
        except (RuntimeError, OSError, json.JSONDecodeError, KeyError, InputError) as e:
            say(f"[plan] no plan: {e}; every suite runs as asked")
            return 1
    for flag, tokens in by_flag:
        if flag not in used:
            print(
                f"run_all: {' '.join(tokens)} is an option of the {flag} flag, which none of this run's suites "
                f"({', '.join(suites)}) enables: drop it, or run a suite that has {flag}",
                file=sys.stderr,
            )
            return 2

    max_time = plans[0].plan["timing"]["max_time_s"] if plans else 5.0
    compile_rows = any(r != "python-eager" for r in python_rows)
    cuts: list[str] = []
    if target and target.left_out:
        cuts.append(
            f"time to target leaves out bf16: bf16 is emulated on this CPU ({m.bf16_why}), so training it "
            f"to a loss would measure the emulation ({m.step_s['bf16'] * 1000:,.0f} ms a step against "
            f"{m.step_s['fp32'] * 1000:,.0f} in float32)"
        )
    dropped: list[str] = []
    run_target = target is not None and m.seed_s is not None
    if target is not None and m.seed_s is None:
        cuts.append("time to target: the probe could not train the baseline to the target, so it is not planned")

    # The budget search, on a grid bounded by the target's --max-steps, or by the suite's own horizon where it declares
    # one (its rows train to it as the suite's own run): ./ablate --find-budget --dry-run plans it row by row.
    search, searched = a.budget_search, {}
    if search:
        max_steps = next((x.split("=", 1)[1] for x in target_args or [] if x.startswith("--max-steps=")), None)
        if not run_target or search not in target.rows:
            cuts.append(f"no budget search of {search}: it searches a suite trained to the target, and none is planned")
            search = ""
        elif max_steps is None:
            cuts.append(f"no budget search of {search}: it needs the target's --max-steps, the bound of its grid")
            search = ""
        else:
            horizons = [r["step_budget"] for r in target.rows[search] if r.get("step_budget")]
            last = min(int(max_steps), max(horizons)) if horizons else int(max_steps)
            grid_args = [f"--budget-first={min(a.budget_first, last)}", f"--budget-ratio={a.budget_ratio:g}"]
            grid_args.append(f"--budget-last={last}")
            try:
                own_options = options[f"target {search}"]
                searched = dry_run(a.ablate, search, [*target_args, *extra, *own_options, "--find-budget", *grid_args])
                searched = {**searched["budget_search"], "args": grid_args}
            except (RuntimeError, OSError, json.JSONDecodeError, KeyError, InputError) as e:
                cuts.append(f"no budget search of {search}: ./ablate could not plan it ({e})")
                search = ""
    grid = searched.get("grid", [])

    def total() -> float:
        s = sum(p.seconds(m, max_time, compile_rows) for p in plans if p.name not in dropped)
        s += target.search_seconds(m, search, searched) if search and run_target else 0.0
        return s + (target.seconds(m) if run_target else 0.0)

    # The budget covers the whole job: what planning took and the report at the end come out of it first.
    budget = a.budget_minutes * 60 - (time.monotonic() - began) - REPORT_RESERVE_S if a.budget_minutes else None
    if budget is not None:
        if total() > budget and search:
            cuts.append(
                f"no budget search of {search}: its {len(grid)}-budget grid ({grid[0]} to {grid[-1]} steps) costs "
                f"about {minutes(target.search_seconds(m, search, searched))} min"
            )
            search = ""
        if total() > budget and run_target and target.seeds > MIN_SEEDS and not given("--target-seeds", "--seeds"):
            target.seeds = MIN_SEEDS
            cuts.append(f"time to target on {MIN_SEEDS} seeds, the fewest Welch's test compares")
        if total() > budget and compile_rows:
            compile_rows = False
            cuts.append(
                f"no torch.compile Python rows: their first step compiles for about {m.compile_s:.0f} s each "
                f"({m.compile_source})"
            )
        grown = [r for rows in target.rows.values() for r in rows if r["max_batch"]] if run_target else []
        if total() > budget and grown:
            target.keep(lambda r: not r["max_batch"])
            target.left_out.append("max_batch")
            cuts.append(
                "time to target leaves out max_batch: it trains at the probe's larger batch, so each seed costs "
                "that many times the baseline's, and the convergence guard does not judge it"
            )
        for cap in MAX_TIME_STEPS:
            if total() > budget and cap < max_time and not given("--max-time"):
                max_time = cap
                cuts.append(
                    f"--max-time={cap:g}: each row's phases stop after {cap:g} s (a row that did not "
                    "reach its noise target says short)"
                )
        for name in list(target.rows)[1:] if run_target else []:
            if total() > budget:
                del target.rows[name]
                cuts.append(f"time to target leaves out the {name} suite: it would not fit the budget")
        if total() > budget and run_target:
            run_target = False
            cuts.append("no time to target: it would not fit the budget")
        for p in reversed(plans[1:]):
            if total() <= budget:
                break
            dropped.append(p.name)
            cuts.append(f"suite {p.name} left out: it would not fit the budget")

    # The table a person reads, then the lines run_all.sh reads.
    say(
        f"[plan] this machine: ./ablate starts in {m.start_s:.1f} s, a {a.preset} step takes "
        f"{m.step_s['fp32'] * 1000:,.0f} ms in float32 and {m.step_s['bf16'] * 1000:,.0f} ms in bf16"
        + (" (emulated)" if m.bf16_emulated else "")
    )
    say(f"{'step':<18}{'configurations':>16}{'planned min':>14}")
    extra_args = [f"--max-time={max_time:g}"] if plans and max_time < plans[0].plan["timing"]["max_time_s"] else []
    kept_rows = [r for r in python_rows if compile_rows or r == "python-eager"]
    lines = [" ".join(["held", *map(str, held)])]
    for p in plans:
        if p.name in dropped:
            say(f"{p.name:<18}{'left out':>16}{'-':>14}")
            continue
        rows = sum(1 for r in p.plan["configurations"] if not r["skip_reason"])
        seconds = p.seconds(m, max_time, compile_rows)
        args = []
        if p.args and kept_rows:
            args = [f"--implementations=libtorch,{','.join(kept_rows)}", "--implementations-at=ends"]
        say(f"{p.name:<18}{rows:>16}{minutes(seconds):>14}")
        lines.append(" ".join(["suite", p.name, f"{seconds:.0f}", *args, *extra_args, *options[p.name]]))
    if target is not None:
        for name in a.target_suites.split():
            step = f"{name} to target"
            if not run_target or name not in target.rows:
                say(f"{step:<18}{'left out':>16}{'-':>14}")
                continue
            rows = sum(1 for r in target.rows[name] if not r["skip_reason"])
            seconds = target.suite_seconds(m, name)
            say(f"{step:<18}{f'{rows} x {target.seeds} seeds':>16}{minutes(seconds):>14}")
            disable = ["--disable=" + ",".join(target.left_out)] if target.left_out else []
            seeds = [] if given("--target-seeds", "--seeds") else [f"--target-seeds={target.seeds}"]
            lines.append(" ".join(["target", name, f"{seconds:.0f}", *seeds, *disable, *options[f"target {name}"]]))
    if search and run_target:
        seconds = target.search_seconds(m, search, searched)
        say(f"{search + ' budget':<18}{f'{len(grid)} budgets':>16}{minutes(seconds):>14}")
        seeds = [] if given("--target-seeds", "--seeds") else [f"--target-seeds={target.seeds}"]
        disable = ["--disable=" + ",".join(target.left_out)] if target.left_out else []
        own_options = options[f"target {search}"]
        lines.append(" ".join(["budget", search, f"{seconds:.0f}", *searched["args"], *seeds, *disable, *own_options]))
    planned = total()
    say(f"{'report':<18}{'':>16}{minutes(REPORT_RESERVE_S):>14}")
    say(
        f"{'total':<18}{'':>16}{minutes(planned + REPORT_RESERVE_S):>14}"
        + (
            f"   (budget {a.budget_minutes:g} min, {minutes(time.monotonic() - began)} of them spent planning)"
            if budget
            else ""
        )
    )
    for cut in cuts:
        say(f"  - {cut}")
    if budget and planned > budget:
        say(f"  the plan is {minutes(planned - budget)} min over the budget even so")
    lines.append(f"total {planned:.0f}")
    print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
