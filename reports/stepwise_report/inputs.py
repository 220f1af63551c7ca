"""What RESULTS hold: finding the files under the paths given, deciding what each is, and checking it.

A path may hold stepwise result files, stepwise_micro's google/benchmark files, our own exports and anything else;
loading decides which is which (our exports and other JSON inside a directory are skipped, a file named explicitly
that is neither is refused), checks each result against results/schema.json (where jsonschema is installed) and its
schema_version, reads each file once, and refuses what it cannot read with InputError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .budget_search import BUDGET_FILE, BudgetSearch, load_search, search_root
from .micro import MicroFile, is_gbench, is_micro, is_own_export, parse_micro
from .results import InputError, Result, warn

# 1: the window-mean loss check; 2: the drop-and-end loss check (results/README.md). Both read.
SUPPORTED_SCHEMA_VERSIONS = (1, 2)
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "results" / "schema.json"


# --- finding and checking files ------------------------------------------------------------------


def _read_json(path: Path) -> object:
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
        if not isinstance(data, dict) or data.get("tool") != "stepwise":
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
