"""A gated run on disk: the run a CI gate compares, its definition, its machine and its rounds.

A regression gate that divides one run's speedups by another's must compare like with like, and must know how much
those speedups move between runs of the same code on the same machine. So a gated run is not sized to the machine
(run_all.sh's plan is for ungated runs): it runs a definition (ci/gated-run.json: suites, ./ablate arguments, rounds)
exactly, R rounds of it one after another, each round a run of its own under DIR/round-K/. A row's speedup measured
once per round gives R values per side, whose spread is the noise between runs that the gate's test needs
(round_comparison.py; docs/ci.md says why rounds). The manifest DIR/gated-run.json records the definition, the
machine (machine.py) and the commit, so `./run_all.sh --like DIR` replays exactly what DIR ran and the gate can refuse
to compare two machines. scripts/gated_run.py writes it; this module is the one reader and writer of its format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..read.inputs import load_inputs
from ..read.results import InputError, Result
from ..stats.sequential import SPENDING, looks
from ..stats.speedup import ALPHA, floor_samples

MANIFEST = "gated-run.json"
MANIFEST_KIND = "stepwise gated run"
MANIFEST_VERSION = 1
# What a definition may hold; each is required but the description and threads.
DEFINITION_KEYS = {"description", "rounds", "suites", "args", "threads", "max_rounds", "threshold", "count_ops"}
OPTIONAL_KEYS = {"description", "threads", "max_rounds", "threshold", "count_ops"}
DEFAULT_THRESHOLD = 0.10
# What a gated run stops on and is judged on (report compare --gate): each row's own step time as well as the
# within-run speedups, since a change that slows the shared step (the model, the engine, a dependency) slows the
# baseline row and every row with it and leaves every speedup where it was.
GATED = "both"


def round_dir(root: Path, k: int) -> Path:
    """Where round k (1-based) of a gated run writes its results."""
    return root / f"round-{k}"


def check_definition(definition: object, where: str) -> dict:
    """Raises InputError naming the problem when `definition` cannot define a gated run; returns it."""
    if not isinstance(definition, dict):
        raise InputError(f"{where}: a gated run's definition is a JSON object with {sorted(DEFINITION_KEYS)}")
    unknown = set(definition) - DEFINITION_KEYS
    if unknown:
        raise InputError(f"{where}: unknown key(s) {sorted(unknown)}; a definition holds {sorted(DEFINITION_KEYS)}")
    missing = DEFINITION_KEYS - OPTIONAL_KEYS - set(definition)
    if missing:
        raise InputError(f"{where}: missing {sorted(missing)}; a definition holds {sorted(DEFINITION_KEYS)}")
    rounds, floor = definition["rounds"], floor_samples(ALPHA)
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < floor:
        raise InputError(
            f"{where}: rounds must be an integer of at least {floor} (got {rounds!r}): the gate tests each speedup "
            f"across rounds, and the U test cannot reach p < {ALPHA:g} with fewer than {floor} per side"
        )
    suites, args = definition["suites"], definition["args"]
    if not isinstance(suites, list) or not suites or not all(isinstance(s, str) and s for s in suites):
        raise InputError(f"{where}: suites must be a non-empty list of suite names or paths (got {suites!r})")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InputError(f"{where}: args must be a list of ./ablate arguments as strings (got {args!r})")
    most = definition.get("max_rounds", rounds)
    if not isinstance(most, int) or isinstance(most, bool) or most < rounds:
        raise InputError(
            f"{where}: max_rounds must be an integer of at least rounds ({rounds}) (got {most!r}): an interleaved run "
            f"goes on past rounds, up to it, while the gate cannot judge"
        )
    threshold = definition.get("threshold", DEFAULT_THRESHOLD)
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or not 0 < threshold < 1:
        raise InputError(
            f"{where}: threshold is the gate's, as a fraction (0.10 for 10%), that the run goes on for (got "
            f"{threshold!r})"
        )
    if not isinstance(definition.get("count_ops", False), bool):
        raise InputError(
            f"{where}: count_ops is true or false: whether round 1 counts what each step dispatches (--count-ops), "
            f"which the gate compares exactly (got {definition['count_ops']!r})"
        )
    threads = definition.get("threads")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise InputError(f"{where}: threads must be a positive integer, or absent for the machine's default")
    return definition


def stopping_plan(definition: dict, goes_on: bool) -> dict:
    """What the run stops on and the gate judges with, decided once from the definition and recorded in the manifest:
    the threshold, which comparisons are gated, the level, and the rounds after which the gate looks (sequential.py:
    one look at `rounds` for a run that never goes on; an interleaved run, which goes on while the gate cannot judge,
    looks on a schedule up to max_rounds and spends the level across those looks)."""
    first = definition["rounds"]
    most = definition.get("max_rounds", first) if goes_on else first
    return {
        "threshold": definition.get("threshold", DEFAULT_THRESHOLD),
        "gate": GATED,
        "alpha": ALPHA,
        "looks": looks(first, most),
        "spending": SPENDING,
    }


def run_environment(definition: dict) -> dict[str, str]:
    """The environment every ./ablate of the run gets: the definition's intra-op threads (OMP_NUM_THREADS), which
    the results then record as env.cpu_threads, a part of the machine's fingerprint."""
    threads = definition.get("threads")
    return {"OMP_NUM_THREADS": str(threads)} if threads is not None else {}


def read_definition(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a readable gated-run definition ({e})") from e
    return check_definition(data, str(path))


def read_manifest(root: Path) -> dict:
    """The manifest of the gated run in `root`; InputError when `root` holds none (the message says how to make one)."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise InputError(
            f"{root} holds no gated run (no {MANIFEST}); make one with ./run_all.sh --gated "
            f"(STEPWISE_RUN_DIR={root}), or pass two plain run directories to compare them without rounds"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not readable as JSON ({e})") from e
    if manifest.get("kind") != MANIFEST_KIND or manifest.get("version") != MANIFEST_VERSION:
        raise InputError(
            f"{path}: not a {MANIFEST_KIND} of version {MANIFEST_VERSION} "
            f"(kind {manifest.get('kind')!r}, version {manifest.get('version')!r})"
        )
    check_definition(manifest.get("definition"), str(path))
    return manifest


def is_gated_run(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def write_manifest(root: Path, manifest: dict) -> None:
    """Atomically: a reader never sees half a manifest, even when the run is killed while writing it."""
    path = Path(root) / MANIFEST
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"kind": MANIFEST_KIND, "version": MANIFEST_VERSION, **manifest}, indent=1) + "\n")
    tmp.replace(path)


@dataclass
class GatedRun:
    """A gated run as the gate reads it: its manifest and, per completed round, that round's results."""

    path: Path
    manifest: dict
    rounds: list[list[Result]]

    @property
    def definition(self) -> dict:
        return self.manifest["definition"]

    @property
    def env(self) -> dict:
        """The machine it ran on: the manifest's, else its first result's."""
        return self.manifest.get("machine") or self.rounds[0][0].env

    @property
    def stopping(self) -> dict | None:
        """The plan the run stopped on (stopping_plan), None for a run made before runs recorded one."""
        return self.manifest.get("stopping")

    @property
    def git_commit(self) -> str:
        return self.manifest.get("git_commit") or self.rounds[0][0].git_commit

    @property
    def run_id(self) -> str:
        return self.manifest.get("run_id") or self.path.name


def load_gated_run(root: str | Path) -> GatedRun:
    """Every completed round of the gated run in `root`; an unfinished run is refused (its rounds are not a sample
    of the definition, and its last round may be cut)."""
    root = Path(root)
    manifest = read_manifest(root)
    want, done = manifest["definition"]["rounds"], manifest.get("rounds_done", 0)
    if done < want:
        raise InputError(f"{root}: the gated run finished {done} of its {want} rounds; rerun it to gate on it")
    rounds = []
    for k in range(1, done + 1):  # an interleaved run can go on past `want` (max_rounds)
        found = load_inputs([str(round_dir(root, k))])
        if not found.results:
            raise InputError(f"{round_dir(root, k)}: no results in this round of the gated run")
        rounds.append(found.results)
    return GatedRun(root, manifest, rounds)
