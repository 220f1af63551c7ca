"""scripts/plan_run.py, ./run_all.sh's plan, on made-up machines: the cost of a row is bounded by the run's caps, a
fast machine runs everything as asked, a slow one is cut in the documented order until the plan fits (each cut
said, the caller's own options never overridden), and time to target never trains bf16 where it is emulated.
The probe and ./ablate --dry-run are replaced by what a machine of each kind would give them; the real ones run in
./run_all.sh (docs/running.md has a measured plan beside the minutes it took). The plans themselves are the built
binary's at the end: read as plan_run reads them, checked against results/plan.schema.json, and one missing a key
refused naming it."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import plan_run  # noqa: E402

TIMING = {"warmup": 2, "min_steps": 10, "max_steps": 100, "max_time_s": 5.0, "max_batch_time_s": 5.0}
SUITES = ["raschka", "karpathy", "one_at_a_time", "leave_one_out", "memory", "fp8"]


def row(i, flags, precision="fp32", skip=None, python=(), max_batch=False):
    return {
        "index": i,
        "label": "+".join(flags) or "baseline",
        "flags": flags,
        "flags_skipped": [],
        "skip_reason": skip,
        "precision": precision,
        "batch_size": 16 if max_batch else 4,
        "seq_len": 64,
        "max_batch": max_batch,
        "max_batch_limit": 16 if max_batch else None,
        "host_allocator": False,
        "implementations": ["libtorch", *python],
    }


def option(args, name, kind):
    return next(kind(a.split("=", 1)[1]) for a in args if a.startswith(name + "="))


def dry_run(ablate, suite, args):
    python = [a.split("=", 1)[1].split(",")[1:] for a in args if a.startswith("--implementations=")]
    ends = python[0] if python else []
    rows = [
        row(0, [], python=ends),
        row(1, ["dynamic_mask"]),
        row(2, ["tf32"], skip="tf32 requires a CUDA device"),
        row(3, ["bf16"], precision="bf16"),
        row(4, ["max_batch"], max_batch=True, python=ends),
    ]
    plan = {"suite": suite, "kind": "cumulative", "timing": TIMING, "configurations": rows}
    if "--find-budget" in args:
        # ./ablate --find-budget --dry-run --json's budget_search: the baseline from scratch, the rest branched at
        # about twice the grid's last budget a seed.
        first, ratio, last = (
            option(args, f"--budget-{k}", t) for k, t in (("first", int), ("ratio", float), ("last", int))
        )
        grid = [first]
        while grid[-1] * ratio < last:
            grid.append(int(-(-grid[-1] * ratio // 1)))
        grid.append(last)
        steps = [{"index": r["index"], "branched": r["index"] > 0, "steps_per_seed": 2 * last} for r in rows]
        plan["budget_search"] = {"grid": grid, "rows": steps}
    return plan


def machine(step_ms, bf16_ms, emulated=False, compile_s=90.0, seed_s=20.0):
    return plan_run.Machine(
        start_s=0.5,
        row_s=0.5,
        step_s={"fp32": step_ms / 1000, "bf16": bf16_ms / 1000},
        python_start_s=4.0,
        python_step_ratio=1.2,
        bf16_emulated=emulated,
        bf16_why="ATen dispatches at AVX2" if emulated else None,
        compile_s=compile_s,
        compile_source="assumed",
        seed_s=seed_s,
    )


# ./ablate --list-flags --json's options, as plan_run.flag_options reads them: two of the flags' and the reference's.
OPTIONS = {
    "--max-batch-limit": {"flag": "max_batch", "type": "integer", "acts_while_off": False},
    "--muon-lr": {"flag": "muon", "type": "number", "acts_while_off": False},
    "--adamw-baseline": {"flag": "fused_adamw", "type": "string", "acts_while_off": True},
}


@pytest.fixture(autouse=True)
def declared_options(monkeypatch):
    monkeypatch.setattr(plan_run, "flag_options", lambda ablate: OPTIONS)


def plan(monkeypatch, capsys, m, budget, *extra, target=True, dry=dry_run):
    monkeypatch.setattr(plan_run, "probe", lambda *a, **k: m)
    monkeypatch.setattr(plan_run, "dry_run", dry)
    argv = ["--ablate=ablate", f"--suites={' '.join(SUITES)}", "--python-rows=python-eager,python-compile"]
    argv += ["--python=python", f"--budget-minutes={budget}"]
    argv += ["--target=--target-loss=6.8 --preset=tiny --max-steps=400"] if target else []
    argv += ["--target-suites=one_at_a_time speedrun", "--budget-search=speedrun"] if target else []
    assert plan_run.main([*argv, "--", *extra]) == 0
    out, err = capsys.readouterr()
    lines = [line.split() for line in out.splitlines()]
    return lines, err


def test_a_rows_cost_is_bounded_by_the_runs_caps():
    m = machine(step_ms=1000, bf16_ms=1000)
    one = row(0, [])
    at_5 = plan_run.row_seconds(m, one, TIMING, 5.0, 4, compile_rows=True)
    at_2 = plan_run.row_seconds(m, one, TIMING, 2.0, 4, compile_rows=True)
    # Warm-up and measured steps each stop at --max-time (plus the step under way): a slow step cannot run away.
    assert at_5 == pytest.approx(m.row_s + 2 * 1.0 + (5.0 + 1.0))
    assert at_2 == pytest.approx(m.row_s + 2 + (2.0 + 1.0))  # two warm-up steps fit under 2 s + a step
    assert plan_run.row_seconds(m, row(1, ["tf32"], skip="no GPU"), TIMING, 5.0, 4, True) == 0, "a skipped row"
    fast = machine(step_ms=10, bf16_ms=10)
    assert plan_run.row_seconds(fast, one, TIMING, 5.0, 4, True) == pytest.approx(fast.row_s + 0.02 + 1.0)
    compiled = row(0, [], python=["python-compile"])
    assert plan_run.row_seconds(m, compiled, TIMING, 5.0, 4, True) - at_5 > m.compile_s
    assert plan_run.row_seconds(m, compiled, TIMING, 5.0, 4, False) == at_5, "left out: costs nothing"


def test_a_fast_machine_runs_everything_as_asked(monkeypatch, capsys):
    lines, err = plan(monkeypatch, capsys, machine(step_ms=20, bf16_ms=15, seed_s=5), 30)
    suites = {line[1]: line[3:] for line in lines if line[0] == "suite"}
    assert list(suites) == SUITES
    assert suites["raschka"] == ["--implementations=libtorch,python-eager,python-compile", "--implementations-at=ends"]
    assert suites["one_at_a_time"] == [], "no cut: nothing added"
    targets = {line[1]: line[3:] for line in lines if line[0] == "target"}
    assert targets == {"one_at_a_time": ["--target-seeds=3"], "speedrun": ["--target-seeds=3"]}, (
        "each suite trained to the target"
    )
    budgets = {line[1]: line[3:] for line in lines if line[0] == "budget"}
    assert budgets == {
        "speedrun": ["--budget-first=40", "--budget-ratio=1.5", "--budget-last=400", "--target-seeds=3"]
    }, "then its search"
    assert lines[-1][0] == "total" and float(lines[-1][1]) < 30 * 60
    assert "  - " not in err, "no cut to say"


def test_time_to_target_never_trains_bf16_where_it_is_emulated(monkeypatch, capsys):
    lines, err = plan(monkeypatch, capsys, machine(step_ms=20, bf16_ms=400, emulated=True), 600)
    for target in [line for line in lines if line[0] == "target"]:
        assert "--disable=bf16" in target
    assert "bf16 is emulated on this CPU (ATen dispatches at AVX2)" in err and "measure the emulation" in err
    throughput = {line[1] for line in lines if line[0] == "suite"}
    assert throughput == set(SUITES), "the throughput suites still measure bf16: what it costs here is the answer"


def test_a_slow_machine_is_cut_in_order_until_the_plan_fits(monkeypatch, capsys):
    cuts = []
    for budget in (60, 30, 12, 8, 5, 1):
        lines, err = plan(monkeypatch, capsys, machine(step_ms=300, bf16_ms=2000, emulated=True, seed_s=40), budget)
        said = [line for line in err.splitlines() if line.startswith("  - ")]
        assert said[: len(cuts)] == cuts, "a tighter budget cuts what a looser one cut, and more"
        cuts = said
        total = float(lines[-1][1])
        if not any("over the budget even so" in line for line in err.splitlines()):
            assert total <= budget * 60 - plan_run.REPORT_RESERVE_S
    order = [
        "leaves out bf16",
        "no budget search of speedrun: its 7-budget grid (40 to 400 steps)",
        "2 seeds",
        "no torch.compile",
        "leaves out max_batch",
        "--max-time=3",
        "--max-time=2",
        "leaves out the speedrun suite",
        "no time to target",
        "suite fp8 left out",
    ]
    text = "\n".join(cuts)
    positions = [text.find(words) for words in order]
    assert all(p >= 0 for p in positions), text
    assert positions == sorted(positions), text


def test_the_callers_own_options_are_never_overridden(monkeypatch, capsys):
    lines, err = plan(monkeypatch, capsys, machine(step_ms=300, bf16_ms=2000, seed_s=40), 4, "--max-time=120")
    assert not any(a.startswith("--max-time") for line in lines for a in line), "--max-time was given: kept"
    assert "--max-time=" not in "".join(line for line in err.splitlines() if line.startswith("  - "))
    assert plan_run.without(["--preset=tiny", "--max-time=120", "--steps", "8", "--seeds=5", "--lr=1"]) == [
        "--preset=tiny",
        "--lr=1",
    ], "an option and its value, in either spelling"


def test_the_budget_search_is_costed_as_ablate_plans_it_row_by_row():
    # ./ablate --find-budget --dry-run says, per row, whether it branches (a seed then trains its steps_per_seed) or
    # trains each budget from scratch down the grid until the rule fails: costed as ending mid-grid.
    m = machine(step_ms=100, bf16_ms=100, seed_s=10)
    m.seed_step_s = 0.05
    target = plan_run.TargetPlan({"s": [row(0, []), row(1, ["muon"])]}, 2, [])
    grid = [40, 60, 90, 135, 203, 304, 400]
    search = {
        "grid": grid,
        "rows": [{"index": 0, "branched": False}, {"index": 1, "branched": True, "steps_per_seed": 733}],
    }
    scan = 135 + 203 + 304 + 400 + 90  # from 135 (mid-grid) up, and the failing budget below it
    expected = m.start_s + 2 * scan * 0.05 + 2 * 733 * 0.05
    assert target.search_seconds(m, "s", search) == pytest.approx(expected)


def test_no_budget_search_without_a_bound_for_its_grid(monkeypatch, capsys):
    monkeypatch.setattr(plan_run, "probe", lambda *a, **k: machine(step_ms=20, bf16_ms=15, seed_s=5))
    monkeypatch.setattr(plan_run, "dry_run", dry_run)
    argv = ["--ablate=ablate", "--suites=raschka", "--target=--target-loss=6.8", "--target-suites=speedrun"]
    assert plan_run.main([*argv, "--budget-search=speedrun", "--budget-minutes=60", "--"]) == 0
    out, err = capsys.readouterr()
    assert not [line for line in out.splitlines() if line.startswith("budget ")]
    assert "no budget search of speedrun: it needs the target's --max-steps" in err


def test_the_search_grid_ends_at_the_suites_own_horizon(monkeypatch, capsys):
    # The speedrun suite's rows train to its declared horizon; its search needs no budget beyond it.
    def with_horizon(ablate, suite, args):
        plan = dry_run(ablate, suite, args)
        return {**plan, "configurations": [{**r, "step_budget": 300} for r in plan["configurations"]]}

    lines, _ = plan(monkeypatch, capsys, machine(step_ms=20, bf16_ms=15, seed_s=5), 60, dry=with_horizon)
    (budget,) = [line for line in lines if line[0] == "budget"]
    assert budget[3:6] == ["--budget-first=40", "--budget-ratio=1.5", "--budget-last=300"]


def test_a_row_on_a_declared_horizon_costs_every_seed_its_n_steps():
    # A row on a declared horizon (--step-budget, or the speedrun suite's own) trains every seed to N steps, crossed
    # or not, so it costs N steps at the probe's pace a step, not the probe's seconds to the target.
    m = machine(step_ms=100, bf16_ms=100, seed_s=10)
    m.seed_step_s = 0.05  # the probe's seed: 200 steps in its 10 s
    rows = [row(0, []), row(1, ["muon"])]
    horizon = [{**r, "step_budget": 600} for r in rows]
    free = plan_run.TargetPlan({"s": rows}, 3, []).suite_seconds(m, "s") - m.start_s
    declared = plan_run.TargetPlan({"s": horizon}, 3, []).suite_seconds(m, "s") - m.start_s
    assert free == pytest.approx(2 * 3 * 10)
    assert declared == pytest.approx(2 * 3 * 600 * 0.05), "three times the probe's 200 steps to the target"


def test_a_flags_options_go_only_to_the_suites_that_run_it_and_one_none_runs_is_a_usage_error(monkeypatch, capsys):
    """./ablate refuses an option whose flag none of its configurations runs: the plan hands each flag option to the
    suites that run the flag (here --muon-lr to the speedrun suite trained to the target and its budget search), says
    where it stood among the arguments so run_all.sh passes the rest to every suite, and refuses one no suite runs."""
    asked = []

    def dry(ablate, suite, args):
        asked.append((suite, args))
        plan = dry_run(ablate, suite, args)
        if suite == "speedrun":
            plan["configurations"].append(row(5, ["muon"]))
        return plan

    extra = ("--max-time=5", "--muon-lr", "0.01", "--max-batch-limit=8", "--adamw-baseline=foreach")
    lines, _ = plan(monkeypatch, capsys, machine(step_ms=20, bf16_ms=15, seed_s=5), 600, *extra, dry=dry)
    assert lines[0] == ["held", "1", "2", "3"], "the flag options' positions; --adamw-baseline acts while off"
    suites = {line[1]: line[3:] for line in lines if line[0] == "suite"}
    assert all(args[-1] == "--max-batch-limit=8" and "--muon-lr" not in args for args in suites.values()), suites
    targets = {line[1]: line[3:] for line in lines if line[0] == "target"}
    assert targets["speedrun"][-3:] == ["--muon-lr", "0.01", "--max-batch-limit=8"], targets
    assert "--muon-lr" not in targets["one_at_a_time"], targets
    assert [line for line in lines if line[0] == "budget"][0][-3:] == ["--muon-lr", "0.01", "--max-batch-limit=8"]
    assert all("--muon-lr" not in args or suite == "speedrun" for suite, args in asked), "no dry run refused"

    monkeypatch.setattr(plan_run, "dry_run", dry_run)  # no suite runs muon
    assert plan_run.main(["--ablate=ablate", "--suites=raschka", "--", "--muon-lr=0.01"]) == 2
    err = capsys.readouterr().err
    assert "--muon-lr=0.01 is an option of the muon flag, which none of this run's suites (raschka) enables" in err


def test_run_all_help_prints_its_own_usage_and_runs_nothing(tmp_path):
    """./run_all.sh --help is run_all's usage (its options, its environment), not ./ablate's help once per suite:
    nothing is built, planned or run, and it exits 0, wherever --help stands among the options."""
    for argv in (["--help"], ["--preset=tiny", "-h"]):
        run = subprocess.run(
            [str(ROOT / "run_all.sh"), *argv],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "STEPWISE_RUN_DIR": str(tmp_path / "run")},
        )
        assert run.returncode == 0, run.stderr
        assert "./run_all.sh --gated" in run.stdout and "STEPWISE_SUITES" in run.stdout
        assert "Flags and their options" not in run.stdout  # ./ablate --help's first section
        assert "[build]" not in run.stdout + run.stderr and not (tmp_path / "run").exists()


# --- the plan as the real binary prints it (results/plan.schema.json) ---------------------------------------

BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
ABLATE = os.environ.get("STEPWISE_BIN") or str(BUILD / "ablations" / "ablate")
CPU = ["--preset=tiny", "--device=cpu"]
TARGET = ["--target-loss=2.8", "--max-steps=400", "--find-budget", "--budget-first=40", "--budget-ratio=1.5"]
needs_jsonschema = pytest.mark.skipif(
    importlib.util.find_spec("jsonschema") is None, reason="jsonschema is not installed: plans are read unchecked"
)


@needs_jsonschema
@pytest.mark.parametrize(
    "suite, extra",
    [
        ("raschka", []),
        ("one_at_a_time", ["--implementations=libtorch,python-eager", "--implementations-at=ends"]),
        ("speedrun", TARGET),  # to a target, with the budget search's plan
    ],
)
def test_the_binarys_plans_match_their_schema_as_plan_run_reads_them(suite, extra):
    """./ablate --dry-run --json as plan_run.dry_run reads it, checked against results/plan.schema.json: every
    configuration, the timing, the machine, and with --find-budget the search's grid and rows; then costed."""
    plan = plan_run.dry_run(ABLATE, suite, [*CPU, *extra])
    rows = plan["configurations"]
    assert plan["suite"] == suite and [r["index"] for r in rows] == list(range(len(rows)))
    assert plan["device"] == "cpu" and plan["env"]["device_kind"] == "cpu"
    assert ("budget_search" in plan) == ("--find-budget" in extra)
    if "--implementations-at=ends" in extra:
        assert rows[0]["implementations"] == rows[-1]["implementations"] == ["libtorch", "python-eager"]
        assert rows[1]["implementations"] == ["libtorch"]
    assert plan_run.SuitePlan(suite, plan).seconds(machine(step_ms=20, bf16_ms=15), 5.0, True) > 0


TAMPERED = """#!{python}
import json, subprocess, sys
run = subprocess.run([{ablate!r}, *sys.argv[1:]], capture_output=True, text=True)
if "--dry-run" in sys.argv and run.returncode == 0:
    plan = json.loads(run.stdout)
    del plan["configurations"][0]["precision"]  # a key plan_run sums with, gone from the engine's plan
    print(json.dumps(plan))
else:
    sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
sys.exit(run.returncode)
"""


@needs_jsonschema
def test_a_plan_that_does_not_match_its_schema_is_no_plan_naming_the_key(tmp_path, monkeypatch, capsys):
    """A plan missing a key is refused when it is read, naming the key, before any sum meets it: the run goes on
    unplanned (exit 1, as for any plan it cannot make)."""
    ablate = tmp_path / "ablate"
    ablate.write_text(TAMPERED.format(python=sys.executable, ablate=ABLATE))
    ablate.chmod(0o755)
    monkeypatch.setattr(plan_run, "probe", lambda *a, **k: machine(step_ms=20, bf16_ms=15))
    assert plan_run.main([f"--ablate={ablate}", "--suites=raschka", "--", *CPU]) == 1
    err = capsys.readouterr().err
    assert "[plan] no plan: " in err and "results/plan.schema.json at configurations/0" in err, err
    assert "'precision' is a required property" in err, err
