#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""The run a CI gate compares: a definition's suites, exactly as defined, in rounds (./run_all.sh --gated, --like).

An ungated ./run_all.sh sizes itself to the machine (scripts/plan_run.py cuts rows, seeds and --max-time to a budget),
so two machines, or one machine with a warm and a cold cache, run different sets: a gate counting what one cut as
"lost" cries wolf. A gated run takes no plan. It runs a definition (ci/gated-run.json, or the one a baseline recorded)
as written, R rounds one after another, every suite once per round, so the gate can measure how much each speedup
moves between runs (reports/stepwise_report/gate/round_comparison.py, docs/ci.md). With --like DIR it replays the
definition DIR ran, arguments included, after checking that this machine is DIR's (else exit 3, as the gate would say
after ten minutes) and that it would run every configuration DIR ran ok (else exit 2, naming each, before anything
runs). With --against SRC it makes the baseline's side as well, in the same job, from the baseline's own build:
the two ./ablate binaries run each row one after the other, round after round, so the load on the machine weighs on
both sides alike and the gate pairs them (docs/ci.md).

  gated_run.py run --out DIR [--definition FILE | --like BASELINE] [--across-machines]
      [--against SRC --baseline-out DIR] [-- ABLATE_ARGS...]
  gated_run.py fingerprint [--definition FILE | --like BASELINE] [-- ABLATE_ARGS...]
  gated_run.py commit      (the commit this build runs: CI builds the baseline's only when it differs)

Exit status: 0 every configuration ran (or was a planned skip); 1 some configuration failed (recorded, the rounds go
on); 2 bad usage or a configuration this machine cannot run; 3 --like on another machine, or a baseline's build
(--against) that cannot run the definition, so nothing could be judged; 130/143 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reports"))

from stepwise_report.gate.comparison import DifferentMachines  # noqa: E402
from stepwise_report.gate.gated_run import (  # noqa: E402
    check_definition,
    load_gated_run,
    read_definition,
    read_manifest,
    round_dir,
    run_environment,
    stopping_plan,
    write_manifest,
)
from stepwise_report.gate.round_comparison import judge  # noqa: E402
from stepwise_report.read.inputs import load_inputs, read_plan  # noqa: E402
from stepwise_report.read.machine import describe, fingerprint, machine_of  # noqa: E402
from stepwise_report.read.results import InputError  # noqa: E402

DEFAULT_DEFINITION = ROOT / "ci" / "gated-run.json"
EXIT_FAILED, EXIT_USAGE, EXIT_OTHER_MACHINE = 1, 2, 3
ROW_LINE = re.compile(r"^\[\S+ \d+/\d+\] ")  # ./ablate's line for a row: "[one_at_a_time 4/16] fused_adamw: ..."


class Usage(Exception):
    """A usage error: the message names the problem and what to do; exit 2."""


class BaseCannotRun(Exception):
    """The baseline's build (--against) cannot run this definition: it predates --rows, or refuses the definition's
    arguments or suites. Nothing can be judged against it, so the run is not made (exit 3), never passed unjudged;
    the message says how to get past it once (docs/ci.md)."""


# What a user does once when the commit a change starts from cannot be measured (docs/ci.md, "When the base cannot
# run"): gate against another commit, named in the change's commit message or by hand.
PAST_IT = (
    "to gate this change against another commit that can, name it in the change's last commit message as a "
    "trailer line `Stepwise-Base: <commit>`, or run the workflow by hand with that commit as its base input "
    '(docs/ci.md, "When the base cannot run")'
)


def say(text: str = "") -> None:
    print(text, flush=True)


# --- the definition and this machine -------------------------------------------------------------


def resolve(args: argparse.Namespace) -> tuple[dict, str, dict | None]:
    """(definition with the extra ablate arguments folded in, where it came from, the baseline's manifest or None)."""
    if args.like is not None:
        if args.definition is not None:
            raise Usage("--like replays the baseline's own definition; drop --definition")
        if args.ablate_args:
            raise Usage(
                f"--like replays exactly what {args.like} ran; drop the extra ./ablate arguments "
                f"({' '.join(args.ablate_args)}), or make a new baseline with them (--gated)"
            )
        manifest = read_manifest(Path(args.like))
        return manifest["definition"], f"like {args.like}", manifest
    path = Path(args.definition) if args.definition else DEFAULT_DEFINITION
    definition = dict(read_definition(path))
    definition["args"] = list(definition["args"]) + list(args.ablate_args)
    check_definition(definition, str(path))
    return definition, str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path), None


def dry_run(ablate: str, suite: str, definition: dict, validate: bool = True) -> dict:
    """./ablate --dry-run --json for one suite: its configurations as this machine would run them, and the machine
    (results/plan.schema.json; a baseline side's build is another commit's, whose plan is only parsed)."""
    ablate_args = definition["args"]
    cmd = [ablate, f"--suite={suite}", *ablate_args, "--dry-run", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **run_environment(definition)})
    if run.returncode == EXIT_USAGE:
        raise Usage(f"the definition's suite {suite} with {' '.join(ablate_args)}: {run.stderr.strip()}")
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return read_plan(run.stdout, " ".join(cmd), validate=validate)


def check_like(baseline_dir: Path, manifest: dict, plans: dict[str, dict], env: dict, across: bool) -> None:
    """Before any run: this machine is the baseline's (else DifferentMachines), and every configuration the baseline
    ran ok runs here too (else a usage error naming each and why this machine would skip it)."""
    base_env = manifest.get("machine") or {}
    if fingerprint(base_env) != fingerprint(env) and not across:
        raise DifferentMachines(base_env, env)
    ran_ok = {(r.suite_name, r.index): r for r in load_inputs([str(round_dir(baseline_dir, 1))]).results if r.ok}
    cannot = []
    for plan in plans.values():
        for row in plan["configurations"]:
            base = ran_ok.get((plan["suite"], row["index"]))
            if base is not None and row["skip_reason"]:
                cannot.append(f"{base.name}: ran in the baseline, would be skipped here: {row['skip_reason']}")
    if cannot:
        raise Usage(
            f"this machine cannot run what {baseline_dir} ran, so the gate would call it lost:\n  "
            + "\n  ".join(cannot)
            + "\nmake this machine's own baseline instead (./run_all.sh --gated), on the machine CI gates on"
        )


def plan_all(ablate: str, definition: dict, validate: bool = True) -> tuple[dict[str, dict], dict]:
    plans = {suite: dry_run(ablate, suite, definition, validate) for suite in definition["suites"]}
    env = next(iter(plans.values()))["env"]
    return plans, env


def against_ablate(src: str) -> str:
    """The baseline's ./ablate: SRC itself, or SRC/build/ablations/ablate for a checkout."""
    path = Path(src)
    binary = path / "build" / "ablations" / "ablate" if path.is_dir() else path
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise Usage(
            f"--against {src}: no ./ablate at {binary}; give the baseline's checkout after building it there "
            f"(cd {src} && ./scripts/build.sh), or its ablate binary"
        )
    help_text = subprocess.run([str(binary), "--help"], capture_output=True, text=True).stdout
    if "--rows" not in help_text:
        raise BaseCannotRun(
            f"--against {src}: that build's ./ablate has no --rows (it predates interleaved gated runs), so it cannot "
            f"run row by row beside this one; {PAST_IT}"
        )
    return str(binary.resolve())


def new_manifest(run_id: str, definition: dict, source: str, env: dict, goes_on: bool) -> dict:
    return {
        "run_id": run_id,
        "definition": definition,
        "definition_source": source,
        "stopping": stopping_plan(definition, goes_on),
        "machine": machine_of(env),
        "fingerprint": fingerprint(env),
        "git_commit": env.get("git_commit"),
        "git_dirty": env.get("git_dirty"),
        "started": now(),
        "rounds_done": 0,
    }


# --- the rounds ----------------------------------------------------------------------------------


def run_rounds(ablate: str, out: Path, definition: dict, manifest: dict) -> int:
    """Every round, every suite in order; the manifest records each round as it completes."""
    status, rounds, per_round = 0, definition["rounds"], []
    began = time.monotonic()
    for k in range(1, rounds + 1):
        round_began = time.monotonic()
        for suite in definition["suites"]:
            say(
                f"================ gated run: round {k} of {rounds}, suite {suite} "
                f"({(time.monotonic() - began) / 60:.1f} min so far) ================"
            )
            cmd = [
                ablate,
                f"--suite={suite}",
                f"--out={round_dir(out, k)}",
                f"--run-id={manifest['run_id']}_r{k}",
                *definition["args"],
                *counting(ablate, definition, k),
            ]
            rc = subprocess.run(cmd, env={**os.environ, **run_environment(definition)}).returncode
            if rc == EXIT_FAILED:
                status = EXIT_FAILED  # a configuration failed: recorded in its result; the rounds go on
            elif rc in (130, 143):
                say(f"gated_run: interrupted in round {k}; the rounds finished so far are in {out}")
                return rc
            elif rc != 0:
                say(f"gated_run: ./ablate --suite={suite} ended with status {rc}; stopping")
                return EXIT_USAGE if rc == EXIT_USAGE else EXIT_FAILED
        per_round.append(round(time.monotonic() - round_began, 1))
        manifest.update(rounds_done=k, round_seconds=per_round)
        write_manifest(out, manifest)
    manifest.update(finished=now(), seconds=round(time.monotonic() - began, 1))
    write_manifest(out, manifest)
    say()
    say(f"{'round':>5} {'seconds':>8}")
    for k, seconds in enumerate(per_round, 1):
        say(f"{k:>5} {seconds:>8.1f}")
    say(
        f"gated run: {rounds} rounds of {', '.join(definition['suites'])} in {manifest['seconds'] / 60:.1f} min -> {out}"
    )
    return status


def counting(ablate: str, definition: dict, k: int) -> list[str]:
    """--count-ops for round 1 of a definition that asks for it (`count_ops`), where this ./ablate has it: what one
    step dispatches is the same every round on a CPU, so one round's count is the gate's (work_comparison.py) and the
    other rounds do not pay for the profiled steps. A base from before --count-ops is not counted (its work rows say
    so) rather than not run."""
    if not definition.get("count_ops") or k != 1:
        return []
    has = subprocess.run([ablate, "--help"], capture_output=True, text=True).stdout
    return ["--count-ops"] if "--count-ops" in has else []


def row_order(plans: dict[str, dict], base_plans: dict[str, dict]) -> list[tuple[str, list[tuple[str, int]]]]:
    """Per suite, each row label with the sides that run it: (side, its index on that side), candidate's order, then
    rows only the baseline has. A row a side plans to skip is still run by it (its result records the skip)."""
    out = []
    for suite, plan in plans.items():
        mine = {r["label"]: r["index"] for r in plan["configurations"]}
        theirs = {r["label"]: r["index"] for r in base_plans[suite]["configurations"]}
        labels = list(mine) + [label for label in theirs if label not in mine]
        out.append(
            (
                suite,
                [
                    [
                        (side, index[label])
                        for side, index in (("candidate", mine), ("baseline", theirs))
                        if label in index
                    ]
                    for label in labels
                ],
            )
        )
    return out


def round_numbers(looks: list[int], judged) -> Iterator[int]:
    """The rounds to run, each yielded before it runs: up to the first look, then on to the next look while
    `judged(k)` says the gate could not judge the rounds so far, up to the last look. The gate looks only at the
    plan's looks, whose level it shares among them (stepwise_report/stats/sequential.py): a look after every round would
    be one more chance for a same-commit pair to cross the line by chance."""
    for k in range(1, looks[-1] + 1):
        yield k
        if k in looks and (k == looks[-1] or judged(k)):
            return


def in_turn(row: list[tuple[str, int]], k: int, j: int) -> list[tuple[str, int]]:
    """The sides that run row j of round k, in the order they run it: which goes first alternates by round and row,
    so neither side always meets the caches the other warmed."""
    return row if (k + j) % 2 else list(reversed(row))


def judged(sides: dict[str, tuple[str, Path, dict]], looks: list[int], k: int) -> bool:
    """After round k: would the gate judge the two sides (PASS or FAIL), or could it not (exit 3: a possible
    regression neither confirmed nor ruled out, or an interval too wide to see twice the threshold)? The very call CI's
    gate makes on the finished run (round_comparison.judge, with the plan the manifests record), so the run stops on
    the verdict CI will read."""
    base, cand = (load_gated_run(sides[side][1]) for side in ("baseline", "candidate"))
    verdict = judge(base, cand)
    if verdict.exit_code != EXIT_OTHER_MACHINE:
        return True
    open_rows = [u["name"] for u in verdict.beyond_threshold_unsure + verdict.unresolved]
    following = [n for n in looks if n > k]
    say(
        f"gated_run: after {k} rounds the gate cannot judge {len(set(open_rows))} row(s) yet "
        f"({', '.join(sorted(set(open_rows))[:4])}{', …' if len(set(open_rows)) > 4 else ''}): on to round "
        f"{following[0]}, its next look (the last at {looks[-1]})"
        if following
        else f"gated_run: after {k} rounds, the last look, the gate still cannot judge {len(set(open_rows))} row(s)"
    )
    return False


class Bench:
    """Where each side's ./ablate runs from, so that the two sides' processes differ in their build and nothing else.

    Measured here (docs/ci.md, "The side effect"): one binary on both sides of an interleaved run, whose sides differed
    only in the length of their arguments (the output folders `X` and `X-baseline`, the run ids `_gated` and
    `_gated-baseline`), gave a row a step 6-8% slower on one side in every round of three runs, p 0.002 or less;
    with arguments of equal length the offset was gone. A process lays out its heap from what it is given, so the
    same work on another layout runs at another speed, the same on every round: a bias pairing cannot remove. So
    every side runs its binary through a link of the same length (SHORT/ablate), writes into a scratch folder of the
    same length (SHORT/out, kept through a round so the row processes find the baseline row's result, copied to the
    side's round folder after each process) and is given a run id of the same length."""

    SHORT = {"candidate": "cand", "baseline": "base"}

    def __init__(self, sides: dict[str, tuple[str, Path, dict]]):
        self.root = Path(tempfile.mkdtemp(prefix="stepwise-gated-"))
        for side, (ablate, _, _) in sides.items():
            (self.root / self.SHORT[side] / "out").mkdir(parents=True)
            (self.root / self.SHORT[side] / "ablate").symlink_to(Path(ablate).resolve())

    def ablate(self, side: str) -> str:
        return str(self.root / self.SHORT[side] / "ablate")

    def out(self, side: str) -> Path:
        return self.root / self.SHORT[side] / "out"

    def keep(self, side: str, into: Path) -> None:
        """Every file the side's scratch folder holds, copied whole into `into` (a reader never sees half a result)."""
        for path in self.out(side).rglob("*"):
            if path.is_file():
                target = into / path.relative_to(self.out(side))
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(target.name + ".copying")
                shutil.copy2(path, partial)
                partial.replace(target)

    def next_round(self) -> None:
        for side in self.SHORT.values():
            shutil.rmtree(self.root / side / "out")
            (self.root / side / "out").mkdir()

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def run_interleaved(sides: dict[str, tuple[str, Path, dict]], definition: dict, order) -> int:
    """Both sides in one job, every round, row by row: the candidate's and the baseline's ./ablate run each row one
    after the other (which goes first alternates by round and row), so whatever the machine does meanwhile weighs on
    both alike and drops out of the pair (round_comparison.interleaved), from a Bench that makes their processes alike
    but for the build. Each side's manifest records each round."""
    bench = Bench(sides)
    try:
        return _interleave(sides, definition, order, bench)
    finally:
        bench.close()


def _interleave(sides: dict[str, tuple[str, Path, dict]], definition: dict, order, bench: Bench) -> int:
    status, rounds = 0, definition["rounds"]
    looks = sides["candidate"][2]["stopping"]["looks"]
    most = looks[-1]
    per_round: dict[str, list[float]] = {side: [] for side in sides}
    began = time.monotonic()
    for k in round_numbers(looks, lambda k: judged(sides, looks, k)):
        bench.next_round()
        spent = {side: 0.0 for side in sides}
        for suite, rows in order:
            say(
                f"================ gated run, interleaved: round {k} of {rounds}"
                + (f" (looks after {', '.join(map(str, looks))} while the gate cannot judge)" if most > rounds else "")
                + f", suite {suite} "
                f"({(time.monotonic() - began) / 60:.1f} min so far) ================"
            )
            for j, row in enumerate(rows):
                for side, index in in_turn(row, k, j):
                    _, out, manifest = sides[side]
                    cmd = [
                        bench.ablate(side),
                        f"--suite={suite}",
                        f"--rows={index}",
                        f"--out={bench.out(side)}",
                        f"--run-id={manifest['run_id']}_r{k}",
                        "--no-progress",
                        *definition["args"],
                        *counting(bench.ablate(side), definition, k),
                    ]
                    t0 = time.monotonic()
                    run = subprocess.run(
                        cmd, env={**os.environ, **run_environment(definition)}, capture_output=True, text=True
                    )
                    spent[side] += time.monotonic() - t0
                    bench.keep(side, round_dir(out, k))
                    lines = [line for line in run.stdout.splitlines() if ROW_LINE.match(line)]
                    say(f"  {side:<9} " + (lines[-1] if lines else f"{suite} row {index}"))
                    if run.returncode == EXIT_FAILED:
                        status = EXIT_FAILED  # recorded in the row's result; the rounds go on
                    elif run.returncode in (130, 143):
                        say(
                            f"gated_run: interrupted in round {k}; the rounds finished so far are in each side's folder"
                        )
                        return run.returncode
                    elif run.returncode != 0:
                        say(
                            f"gated_run: the {side}'s ./ablate --suite={suite} --rows={index} ended with status "
                            f"{run.returncode}; stopping:\n{(run.stdout + run.stderr)[-3000:]}"
                        )
                        return EXIT_USAGE if run.returncode == EXIT_USAGE else EXIT_FAILED
        for side, (_, out, manifest) in sides.items():
            per_round[side].append(round(spent[side], 1))
            manifest.update(rounds_done=k, round_seconds=per_round[side])
            write_manifest(out, manifest)
    for _, out, manifest in sides.values():
        manifest.update(finished=now(), seconds=round(time.monotonic() - began, 1))
        write_manifest(out, manifest)
    say()
    say(f"{'round':>5} " + " ".join(f"{side + ' s':>12}" for side in sides))
    for k in range(len(per_round["candidate"])):
        say(f"{k + 1:>5} " + " ".join(f"{per_round[side][k]:>12.1f}" for side in sides))
    say(
        f"gated run, interleaved: {len(per_round['candidate'])} rounds of {', '.join(definition['suites'])} in "
        f"{(time.monotonic() - began) / 60:.1f} min -> "
        + ", ".join(f"{side} {out}" for side, (_, out, _) in sides.items())
    )
    return status


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the commands --------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gated_run.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (
        ("run", "run the gated suites in rounds"),
        ("fingerprint", "print this machine's fingerprint"),
        ("commit", "print the commit this build's ./ablate runs (empty outside git)"),
    ):
        s = sub.add_parser(name, help=text)
        s.add_argument("--definition", help=f"the definition to run (default: {DEFAULT_DEFINITION.relative_to(ROOT)})")
        s.add_argument("--like", metavar="BASELINE", help="replay the definition this gated run ran")
        s.add_argument("--ablate", default=str(ROOT / "build" / "ablations" / "ablate"), help="the ./ablate binary")
        s.add_argument("ablate_args", nargs="*", help="extra ./ablate arguments for every suite (after --)")
        if name == "run":
            s.add_argument("--out", required=True, type=Path, help="where the gated run goes (must be new or empty)")
            s.add_argument(
                "--against",
                metavar="SRC",
                help="make the baseline's side too, in this job, interleaved row by row: SRC is the baseline's "
                "checkout (its build/ablations/ablate, built by its scripts/build.sh) or its ./ablate binary",
            )
            s.add_argument("--baseline-out", type=Path, help="with --against: where the baseline's side goes")
            s.add_argument("--across-machines", action="store_true", help="with --like: run on another machine")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        definition, source, manifest = resolve(args)
        plans, env = plan_all(args.ablate, definition)
        if args.command == "fingerprint":
            print(fingerprint(env))
            return 0
        if args.command == "commit":
            print(env.get("git_commit") or "")
            return 0
        out: Path = args.out
        if (args.against is None) != (args.baseline_out is None):
            raise Usage("--against SRC and --baseline-out DIR go together: the baseline's side needs both")
        for option, where in (("--out", out), ("--baseline-out", args.baseline_out)):
            if where is not None and where.exists() and any(where.iterdir()):
                raise Usage(f"{option} {where} is not empty: a gated run writes into a new or empty directory")
        if manifest is not None:
            check_like(Path(args.like), manifest, plans, env, args.across_machines)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        goes_on = args.against is not None
        # Two sides' run ids of one length (Bench says why): the run itself keeps the plain name.
        record = new_manifest(f"{stamp}_gated" + ("-cand" if goes_on else ""), definition, source, env, goes_on)
        sides = None
        if args.against is not None:
            base_ablate = against_ablate(args.against)
            try:
                base_plans, base_env = plan_all(base_ablate, definition, validate=False)
            except (Usage, RuntimeError, InputError) as e:
                raise BaseCannotRun(
                    f"the baseline's build ({base_ablate}) cannot run this definition: {e}; {PAST_IT}"
                ) from e
            if fingerprint(base_env) != fingerprint(env):
                raise DifferentMachines(base_env, env)
            base_record = new_manifest(f"{stamp}_gated-base", definition, source, base_env, goes_on)
            record["interleaved"] = {"with": base_record["run_id"], "by": "row", "side": "candidate"}
            base_record["interleaved"] = {"with": record["run_id"], "by": "row", "side": "baseline"}
            args.baseline_out.mkdir(parents=True, exist_ok=True)
            write_manifest(args.baseline_out, base_record)
            sides = {"candidate": (args.ablate, out, record), "baseline": (base_ablate, args.baseline_out, base_record)}
            say(f"baseline side: {base_ablate} at commit {str(base_env.get('git_commit'))[:12]} -> {args.baseline_out}")
        out.mkdir(parents=True, exist_ok=True)
        write_manifest(out, record)
        say(
            f"gated run {record['run_id']}: {definition['rounds']} rounds of {', '.join(definition['suites'])} "
            f"({source}), ./ablate {' '.join(definition['args'])}"
        )
        say(f"machine: {describe(env)} (fingerprint {record['fingerprint']})")
        skipped = [
            f"{p['suite']}/{r['label']}: {r['skip_reason']}"
            for p in plans.values()
            for r in p["configurations"]
            if r["skip_reason"]
        ]
        if skipped:
            say(f"planned skips on this machine ({len(skipped)}): " + "; ".join(skipped))
        if sides is not None:
            return run_interleaved(sides, definition, row_order(plans, base_plans))
        return run_rounds(args.ablate, out, definition, record)
    except DifferentMachines as e:
        print(f"gated_run: {e}", file=sys.stderr)
        return EXIT_OTHER_MACHINE
    except BaseCannotRun as e:
        print(f"gated_run: not judged: {e}", file=sys.stderr)
        return EXIT_OTHER_MACHINE
    except (Usage, InputError) as e:
        print(f"gated_run: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
