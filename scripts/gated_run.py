#!/usr/bin/env python3
"""The run a CI gate compares: a definition's suites, exactly as defined, in rounds (./run_all.sh --gated, --like).

An ungated ./run_all.sh sizes itself to the machine (scripts/plan_run.py cuts rows, seeds and --max-time to a budget),
so two machines, or one machine with a warm and a cold cache, run different sets: a gate counting what one cut as
"lost" cries wolf. A gated run takes no plan. It runs a definition (ci/gated-run.json, or the one a baseline recorded)
as written, R rounds one after another, every suite once per round, so the gate can measure how much each speedup
moves between runs (reports/stepwise_report/round_comparison.py, docs/ci.md). With --like DIR it replays the
definition DIR ran, arguments included, after checking that this machine is DIR's (else exit 3, as the gate would say
after ten minutes) and that it would run every configuration DIR ran ok (else exit 2, naming each, before anything
runs).

  gated_run.py run --out DIR [--definition FILE | --like BASELINE] [--across-machines] [-- ABLATE_ARGS...]
  gated_run.py fingerprint [--definition FILE | --like BASELINE] [-- ABLATE_ARGS...]

Exit status: 0 every configuration ran (or was a planned skip); 1 some configuration failed (recorded, the rounds go
on); 2 bad usage or a configuration this machine cannot run; 3 --like on another machine; 130/143 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reports"))

from stepwise_report.comparison import DifferentMachines  # noqa: E402
from stepwise_report.gated_run import (  # noqa: E402
    check_definition,
    read_definition,
    read_manifest,
    round_dir,
    run_environment,
    write_manifest,
)
from stepwise_report.inputs import load_inputs  # noqa: E402
from stepwise_report.machine import describe, fingerprint, machine_of  # noqa: E402
from stepwise_report.results import InputError  # noqa: E402

DEFAULT_DEFINITION = ROOT / "ci" / "gated-run.json"
EXIT_FAILED, EXIT_USAGE, EXIT_OTHER_MACHINE = 1, 2, 3


class Usage(Exception):
    """A usage error: the message names the problem and what to do; exit 2."""


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


def dry_run(ablate: str, suite: str, definition: dict) -> dict:
    """./ablate --dry-run --json for one suite: its configurations as this machine would run them, and the machine."""
    ablate_args = definition["args"]
    cmd = [ablate, f"--suite={suite}", *ablate_args, "--dry-run", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **run_environment(definition)})
    if run.returncode == EXIT_USAGE:
        raise Usage(f"the definition's suite {suite} with {' '.join(ablate_args)}: {run.stderr.strip()}")
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return json.loads(run.stdout)


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


def plan_all(ablate: str, definition: dict) -> tuple[dict[str, dict], dict]:
    plans = {suite: dry_run(ablate, suite, definition) for suite in definition["suites"]}
    env = next(iter(plans.values()))["env"]
    return plans, env


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


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the commands --------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gated_run.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (("run", "run the gated suites in rounds"), ("fingerprint", "print this machine's fingerprint")):
        s = sub.add_parser(name, help=text)
        s.add_argument("--definition", help=f"the definition to run (default: {DEFAULT_DEFINITION.relative_to(ROOT)})")
        s.add_argument("--like", metavar="BASELINE", help="replay the definition this gated run ran")
        s.add_argument("--ablate", default=str(ROOT / "build" / "ablations" / "ablate"), help="the ./ablate binary")
        s.add_argument("ablate_args", nargs="*", help="extra ./ablate arguments for every suite (after --)")
        if name == "run":
            s.add_argument("--out", required=True, type=Path, help="where the gated run goes (must be new or empty)")
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
        out: Path = args.out
        if out.exists() and any(out.iterdir()):
            raise Usage(f"--out {out} is not empty: a gated run writes into a new or empty directory")
        if manifest is not None:
            check_like(Path(args.like), manifest, plans, env, args.across_machines)
        out.mkdir(parents=True, exist_ok=True)
        record = {
            "run_id": f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}_gated",
            "definition": definition,
            "definition_source": source,
            "machine": machine_of(env),
            "fingerprint": fingerprint(env),
            "git_commit": env.get("git_commit"),
            "git_dirty": env.get("git_dirty"),
            "started": now(),
            "rounds_done": 0,
        }
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
        return run_rounds(args.ablate, out, definition, record)
    except DifferentMachines as e:
        print(f"gated_run: {e}", file=sys.stderr)
        return EXIT_OTHER_MACHINE
    except (Usage, InputError) as e:
        print(f"gated_run: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
