"""What RESULTS hold: finding the files under the paths given, deciding what each is, and checking it; and the plan
of a suite that ./ablate --dry-run --json prints, checked against its own schema.

A path may hold stepwise result files, stepwise_micro's google/benchmark files, our own exports and anything else;
loading decides which is which (our exports and other JSON inside a directory are skipped, a file named explicitly
that is neither is refused), checks each result against results/schema.json (where jsonschema is installed) and its
schema_version, reads each file once, and refuses what it cannot read with InputError.

read_results is the one reader of result documents for everything else: the scripts (scripts/, scripts/dev/,
scripts/verify/) and the tests read them through it, with the same checks. This module needs only the standard
library (jsonschema where it is installed), budget.json's reader (budget_file.py) included, so verify's judges read
results with it on a GPU node whose python may have nothing else. read_plan reads a plan (results/plan.schema.json),
as ./run_all.sh's plan (scripts/plan_run.py) and a gated run (scripts/gated_run.py) do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .budget_file import BUDGET_FILE, BudgetSearch, load_search, search_root
from .micro import MicroFile, is_gbench, is_micro, is_own_export, parse_micro
from .results import InputError, Result, warn

# 1: the window-mean loss check; 2: the drop-and-end loss check (results/README.md). Both read.
SUPPORTED_SCHEMA_VERSIONS = (1, 2)
RESULTS_DIR = Path(__file__).resolve().parents[3] / "results"
SCHEMA_PATH = RESULTS_DIR / "schema.json"
PLAN_SCHEMA_PATH = RESULTS_DIR / "plan.schema.json"


# --- finding and checking files ------------------------------------------------------------------


def _read_json(path: Path) -> object:
    """A JSON file's contents; InputError naming the file when it cannot be read or parsed."""
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not readable as JSON ({e})") from e


NOT_VALIDATED = "results not validated against results/schema.json: jsonschema is not installed"


@cache
def _validator():
    """(validator, note): the results schema's validator, or None where it cannot run, with a note when the
    reader should know. The schema is the contract with the engine; where it cannot be checked (no schema
    beside an installed copy of this package, or no jsonschema, as on the GPU machines) only schema_version
    is. A missing jsonschema is said once per process, on stderr, and in the note."""
    if not SCHEMA_PATH.is_file():
        return None, None
    try:
        import jsonschema
    except ImportError:
        warn(NOT_VALIDATED)
        return None, NOT_VALIDATED
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema), None


def check_result(path: Path, data: dict, validator) -> None:
    """Raises InputError naming the file when it is not a stepwise result of a schema version this report reads."""
    version = data.get("schema_version")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise InputError(
            f"{path}: schema_version {version!r} is not supported; this report reads schema_version "
            f"{' or '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))} (see results/README.md)"
        )
    if validator is not None:
        error = next(iter(sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise InputError(f"{path}: does not match results/schema.json at {where}: {error.message}")


def is_result(data: object) -> bool:
    """Whether a parsed JSON document is a stepwise result ("tool": "stepwise"), not some other JSON."""
    return isinstance(data, dict) and data.get("tool") == "stepwise"


def read_results(paths: Iterable[str | Path], *, validate: bool = True) -> list[Result]:
    """Every stepwise result under `paths`, in path order, each file once: a directory is searched recursively for
    *.json, a file is read as it is, a path that does not exist holds none. JSON that is not a stepwise result
    (budget.json, google/benchmark files, the report's exports) is passed over, and so is a file that does not parse:
    ./ablate writes each result whole (a temporary file, then a rename), so such a file is none of its results. Each
    result is checked as ./report checks it, InputError naming the file and the key where one fails: its
    schema_version, and with `validate` results/schema.json where jsonschema is installed (said once where it is not).
    `validate=False` is for readers held to made-up documents of a few keys (verify's judges, the gpu tests), whose
    pass's ./report checks the real ones against the schema."""
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(f for f in sorted(p.rglob("*.json")) if f.is_file())
        elif p.is_file():
            files.append(p)
    found: list[Result] = []
    seen: set[Path] = set()
    for path in files:
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        try:
            data = _read_json(path)
        except InputError:
            continue
        if is_result(data):
            check_result(path, data, _validator()[0] if validate else None)
            found.append(Result(path, data))
    return found


def _candidates(paths: list[str]) -> list[tuple[Path, bool]]:
    """(file, named explicitly) pairs; directories are searched recursively for *.json."""
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend((f, False) for f in sorted(p.rglob("*.json")) if f.is_file())
        elif p.is_file():
            found.append((p, True))
        else:
            raise InputError(f"{raw}: no such file or directory")
    return found


@dataclass
class Inputs:
    """What RESULTS hold: stepwise results and micro-benchmark files (google/benchmark JSON)."""

    results: list[Result] = field(default_factory=list)
    micro: list[MicroFile] = field(default_factory=list)
    budget_searches: list[BudgetSearch] = field(default_factory=list)  # scripts/find_budget.py's, probes left out
    notes: list[str] = field(default_factory=list)  # how they were read, for the report's header notes


def _explicit_other(path: Path, data: object) -> InputError:
    if is_own_export(data):
        return InputError(
            f"{path}: an export written by ./report (google/benchmark JSON made from result "
            f"files); pass the result files it came from"
        )
    return InputError(
        f'{path}: not a stepwise result (expected "tool": "stepwise") nor google/benchmark '
        f'JSON (expected "context" and "benchmarks")'
    )


def load_inputs(paths: list[str]) -> Inputs:
    """Every stepwise result and micro-benchmark file under `paths`, each file once. In directories other
    JSON is skipped, our own exports included; google/benchmark files without stepwise_micro's
    `stepwise_baselines` are read only when named explicitly (they are often someone else's). `notes` says
    when results could not be validated against the schema."""
    if not paths:
        raise InputError("no RESULTS given: pass result files or run directories (e.g. results/)")
    found = Inputs()
    seen_files: set[Path] = set()
    seen_names: dict[tuple[str, str], Path] = {}  # (run_id, name) of results
    seen_micro: dict[tuple[str, str], Path] = {}  # (date, host) of micro-benchmark files
    candidates = _candidates(paths)
    # A budget search's probes are its working, not runs to compare: the search is read from its budget.json.
    searches = {p.parent: p for p, explicit in candidates if p.name == BUDGET_FILE and not explicit}
    for path, explicit in candidates:
        if not explicit and searches.get(path.parent) == path:
            found.budget_searches.append(load_search(path))
            continue
        if not explicit and search_root(path, set(searches)):
            continue
        real = path.resolve()
        if real in seen_files:
            continue
        seen_files.add(real)
        try:
            data = _read_json(path)
        except InputError:
            if explicit:
                raise
            warn(f"{path}: skipped, not valid JSON")
            continue
        if is_micro(data) or (explicit and is_gbench(data) and not is_own_export(data)):
            micro = parse_micro(path, data)
            stamp = (str(micro.context.get("date")), str(micro.context.get("host_name")))
            if stamp in seen_micro:
                warn(f"{path}: same date and host as {seen_micro[stamp]}; using the first")
                continue
            seen_micro[stamp] = path
            found.micro.append(micro)
            continue
        if not is_result(data):
            if explicit:
                raise _explicit_other(path, data)
            continue
        validator, note = _validator()
        if note and note not in found.notes:
            found.notes.append(note)
        check_result(path, data, validator)
        result = Result(path, data)
        key = (result.run_id, result.name)
        if key in seen_names:
            # Copies of one run side by side would otherwise count twice in every ratio.
            warn(f"{path}: same run and name as {seen_names[key]}; using the first")
            continue
        seen_names[key] = path
        found.results.append(result)
    if not found.results and not found.micro and not found.budget_searches:
        raise InputError(
            "no stepwise results found in "
            + ", ".join(paths)
            + ' (looked for *.json files with "tool": "stepwise" and stepwise_micro\'s google/benchmark JSON; '
            "run ./ablate, ./run_all.sh or build/bench/micro/stepwise_micro first)"
        )
    found.micro.sort(key=lambda m: m.date, reverse=True)
    return found


# --- the plan of a suite -------------------------------------------------------------------------


@cache
def _plan_validator():
    """The plan schema's validator, with results/schema.json registered for the sections the two share (env,
    precision, implementations); None where jsonschema is not installed, said once on stderr as for results."""
    try:
        import jsonschema
        from referencing import Registry, Resource
    except ImportError:
        warn("plans not validated against results/plan.schema.json: jsonschema is not installed")
        return None
    schemas = [json.loads(p.read_text(encoding="utf-8")) for p in (PLAN_SCHEMA_PATH, SCHEMA_PATH)]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    return jsonschema.Draft202012Validator(schemas[0], registry=registry)


def read_plan(text: str, source: str, *, validate: bool = True) -> dict:
    """./ablate --dry-run --json's plan of one suite, parsed and checked against results/plan.schema.json (where
    jsonschema is installed); InputError naming `source` (what printed it) and the first key that does not match,
    so a reader never meets a missing key halfway through its sums. `validate=False` for another commit's build,
    whose plan answers to that commit's schema (a gated run's baseline side)."""
    try:
        plan = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{source}: printed no JSON plan ({e})") from e
    validator = _plan_validator() if validate else None
    errors = sorted(validator.iter_errors(plan), key=lambda e: list(e.absolute_path)) if validator else []
    if errors:
        error = errors[0]
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise InputError(f"{source}: its plan does not match results/plan.schema.json at {where}: {error.message}")
    return plan
