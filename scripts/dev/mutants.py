#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/../python" "$0" "$@"'
"""Mutation testing on demand: does each curated one-line change make a named test fail?

A test that passes whatever the code does guards nothing. tests/mutants/mutants.toml lists mutants — one line of
the source changed the way a plausible bug would change it (the gate's threshold × 1.5, LayerNorm's epsilon 1e-5 →
1e-6, ...) — each with the tests expected to catch it. This script applies each selected mutant in a scratch copy of
the working tree (never in the checkout itself), runs its tests there, records "killed" (they failed) or "survived"
(they passed), and restores the line.

  python mutants: a fresh temporary copy per run; the named pytest node ids run with this interpreter. Fast enough
                  for the test command (tests/scripts/test_mutants.py runs them all).
  cpp mutants:    a persistent copy (--scratch, default ~/.cache/stepwise/mutants: src/ and build/) so that later runs
                  rebuild incrementally with scripts/build.sh (STEPWISE_BUILD_DIR=<scratch>/build), then
                  `ctest -R <regex>`. On demand only (a build takes minutes); the last run is written to
                  tests/mutants/last-cpp-run.json, to be committed.

Before any mutant, the named tests run once on the unmutated copy and must pass: a test that already fails would
"kill" every mutant. Exit status: 0 every selected mutant killed; 1 a mutant survived; 2 bad usage or a malformed
list; 3 nothing survived but something could not be judged — a stale mutant (its original text no longer occurs
exactly once: the message names it), tests failing without any mutant, a mutant that does not build, tests that
could not run.

  scripts/dev/mutants.py                      # the python mutants (the default kind)
  scripts/dev/mutants.py --kind cpp           # the C++ mutants: builds the scratch copy, then ctest
  scripts/dev/mutants.py --only gate-threshold-x1.5 --json-out /tmp/m.json
  scripts/dev/mutants.py --list
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIST = ROOT / "tests" / "mutants" / "mutants.toml"
LAST_CPP_RUN = ROOT / "tests" / "mutants" / "last-cpp-run.json"
KINDS = ("python", "cpp")
FIELDS = ("id", "kind", "file", "original", "replacement", "tests", "why")
EXIT_KILLED, EXIT_SURVIVED, EXIT_USAGE, EXIT_NOT_JUDGED = 0, 1, 2, 3
# Generous: a python run is seconds, a C++ build of the scratch copy minutes (the first one, all of it).
PYTEST_TIMEOUT_S, BUILD_TIMEOUT_S, CTEST_TIMEOUT_S = 900, 7200, 3600


class MutantError(Exception):
    """A usage error or a malformed list: the message names the problem and the valid choices (exit 2)."""


@dataclass(frozen=True)
class Mutant:
    id: str
    kind: str
    file: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    why: str


@dataclass
class Outcome:
    id: str
    kind: str
    file: str
    tests: list[str]
    status: str  # killed, survived, stale, not built, error
    seconds: float = 0.0
    detail: str = ""

    @property
    def judged(self) -> bool:
        return self.status in ("killed", "survived")


# --- the list --------------------------------------------------------------------------------------------------


def load_mutants(path: Path) -> list[Mutant]:
    """The mutants of a list file, each checked for its fields and kind; ids unique."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise MutantError(f"{path}: cannot read the mutant list ({e})") from e
    entries = data.get("mutant")
    if not isinstance(entries, list) or not entries:
        raise MutantError(f"{path}: no [[mutant]] entries")
    mutants, seen = [], set()
    for i, entry in enumerate(entries):
        where = f"{path}: mutant {i} ({entry.get('id', 'no id')})"
        missing = [k for k in FIELDS if k not in entry]
        if missing:
            raise MutantError(f"{where} lacks {', '.join(missing)} (each mutant needs {', '.join(FIELDS)})")
        unknown = sorted(set(entry) - set(FIELDS))
        if unknown:
            raise MutantError(f"{where} has unknown keys {', '.join(unknown)} (valid: {', '.join(FIELDS)})")
        if entry["kind"] not in KINDS:
            raise MutantError(f"{where}: kind {entry['kind']!r} is not one of {', '.join(KINDS)}")
        tests = entry["tests"]
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) and t for t in tests):
            raise MutantError(
                f"{where}: tests must be a non-empty list of pytest node ids (python) or ctest -R "
                f"regular expressions (cpp)"
            )
        if entry["original"] == entry["replacement"]:
            raise MutantError(f"{where}: the replacement equals the original, so nothing would change")
        if entry["id"] in seen:
            raise MutantError(f"{where}: id {entry['id']!r} is used twice")
        seen.add(entry["id"])
        mutants.append(
            Mutant(
                entry["id"],
                entry["kind"],
                entry["file"],
                entry["original"],
                entry["replacement"],
                tuple(tests),
                entry["why"],
            )
        )
    return mutants


def stale_reason(m: Mutant, root: Path) -> str | None:
    """Why the mutant cannot be applied to the tree at `root` (None when it can): its file is gone, or its original
    text does not occur exactly once (the code moved on; update the mutant)."""
    path = root / m.file
    if not path.is_file():
        return f"{m.file} does not exist"
    count = path.read_text(encoding="utf-8").count(m.original)
    if count != 1:
        return (
            f"its original text occurs {count} times in {m.file} (it must occur exactly once): "
            f"{m.original.strip()[:80]!r}"
        )
    return None


def select(mutants: list[Mutant], kind: str, only: list[str] | None) -> list[Mutant]:
    if only:
        ids = [m.id for m in mutants]
        unknown = [i for i in only if i not in ids]
        if unknown:
            raise MutantError(f"no mutant {', '.join(map(repr, unknown))}; valid ids: {', '.join(ids)}")
        return [m for m in mutants if m.id in only]
    return [m for m in mutants if kind == "all" or m.kind == kind]


# --- the scratch copy ------------------------------------------------------------------------------------------


def tree_files(root: Path) -> list[str]:
    """The working tree as git sees it: tracked files and untracked ones that are not ignored (build outputs,
    results and caches stay out)."""
    proc = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise MutantError(f"{root} is not a git checkout, so there is no source tree to copy: {proc.stderr.strip()}")
    return sorted({f for f in proc.stdout.split("\0") if f and (root / f).is_file()})


def sync_tree(root: Path, dest: Path) -> int:
    """Makes `dest` a copy of the working tree, writing only files whose content differs (so a persistent build of
    `dest` rebuilds only what changed) and removing files an earlier sync wrote that are gone. Returns how many
    files were written."""
    dest.mkdir(parents=True, exist_ok=True)
    manifest = dest / ".mutants-manifest"
    files = tree_files(root)
    written = 0
    for rel in files:
        src, dst = root / rel, dest / rel
        data = src.read_bytes()
        if not dst.is_file() or dst.read_bytes() != data:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)  # a fresh mtime: ninja must see the change
            written += 1
        shutil.copymode(src, dst)
    if manifest.is_file():
        for rel in set(manifest.read_text(encoding="utf-8").splitlines()) - set(files):
            (dest / rel).unlink(missing_ok=True)
    manifest.write_text("\n".join(files) + "\n", encoding="utf-8")
    return written


class Applied:
    """A mutant applied to a file of the scratch copy, restored on exit whatever happens inside."""

    def __init__(self, m: Mutant, root: Path):
        self.path, self.m = root / m.file, m

    def __enter__(self):
        self.text = self.path.read_text(encoding="utf-8")
        self.path.write_text(self.text.replace(self.m.original, self.m.replacement, 1), encoding="utf-8")
        return self

    def __exit__(self, *exc):
        self.path.write_text(self.text, encoding="utf-8")
        return False


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# --- python ----------------------------------------------------------------------------------------------------


def _python_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the copy's modules, never the checkout's
    # No bytecode: a mutant of the same length written within a second of the original would reuse a stale .pyc.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("STEPWISE_PYTHON", sys.executable)  # ./report and friends in the copy use this interpreter
    return env


def run_pytest(root: Path, tests: list[str]) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        proc = subprocess.run(
            cmd, cwd=root, env=_python_env(), capture_output=True, text=True, timeout=PYTEST_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {PYTEST_TIMEOUT_S} s"
    return proc.returncode, proc.stdout + proc.stderr


def judge_pytest(rc: int, output: str) -> tuple[str, str]:
    """pytest's exit status as a verdict: 1 is a test failing (killed), 0 all passing (survived); anything else
    (collection errors, no tests, a timeout) means the tests did not run, which judges nothing."""
    if rc == 1:
        failed = [line for line in output.splitlines() if line.startswith("FAILED ")]
        return "killed", (failed[0][len("FAILED ") :] if failed else "a named test failed")
    if rc == 0:
        return "survived", "the named tests passed with the mutant"
    return "error", f"the tests could not run (pytest exit {rc}):\n{_tail(output)}"


def run_python(mutants: list[Mutant], report) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="stepwise-mutants-") as tmp:
        scratch = Path(tmp)
        sync_tree(ROOT, scratch)
        report(f"python: a scratch copy of the working tree in {scratch}")
        tests = list(dict.fromkeys(t for m in mutants for t in m.tests))
        start = time.monotonic()
        rc, output = run_pytest(scratch, tests)
        if rc != 0:
            detail = f"the named tests do not pass without any mutant (pytest exit {rc}):\n{_tail(output)}"
            report(f"  baseline: {detail}")
            return [Outcome(m.id, m.kind, m.file, list(m.tests), "error", 0.0, detail) for m in mutants]
        report(f"  baseline: the named tests pass without mutants ({time.monotonic() - start:.1f} s)")
        outcomes = []
        for m in mutants:
            start = time.monotonic()
            with Applied(m, scratch):
                rc, output = run_pytest(scratch, list(m.tests))
            status, detail = judge_pytest(rc, output)
            outcomes.append(Outcome(m.id, m.kind, m.file, list(m.tests), status, time.monotonic() - start, detail))
            report(line(outcomes[-1]))
        return outcomes


# --- cpp -------------------------------------------------------------------------------------------------------


def build_env(build_dir: Path) -> dict[str, str]:
    """scripts/build.sh's environment for the scratch copy: its own build directory, and the checkout's offline
    bundle (deps/ is ignored by git, so the copy has none) where the checkout has one."""
    # One ctest test per GoogleTest case (tests/CMakeLists.txt's STEPWISE_TEST_CASES), so `ctest -R` runs only the
    # cases a mutant names, not the shards the test command runs.
    env = {**os.environ, "STEPWISE_BUILD_DIR": str(build_dir), "STEPWISE_CMAKE_ARGS": "-DSTEPWISE_TEST_CASES=ON"}
    if "STEPWISE_DEPS" not in env and (ROOT / "deps").is_dir():
        env["STEPWISE_DEPS"] = str(ROOT / "deps")
    return env


def build(src: Path, build_dir: Path) -> tuple[bool, str]:
    env = build_env(build_dir)
    try:
        proc = subprocess.run(
            [str(src / "scripts" / "build.sh"), "--quiet"],
            cwd=src,
            env=env,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return False, f"the build timed out after {BUILD_TIMEOUT_S} s"
    return proc.returncode == 0, _tail(proc.stdout + proc.stderr, 25)


# CMake's regular expressions hold at most 9 groups, so a test list is joined without any and run in chunks.
CTEST_PATTERNS_PER_RUN = 8


def run_ctest(build_dir: Path, tests: list[str]) -> tuple[int, str]:
    """ctest over the tests matching any of `tests`: the first failing chunk's exit status, and every output."""
    outputs = []
    for i in range(0, len(tests), CTEST_PATTERNS_PER_RUN):
        rc, output = run_ctest_chunk(build_dir, tests[i : i + CTEST_PATTERNS_PER_RUN])
        outputs.append(output)
        if rc != 0:
            return rc, "".join(outputs)
    return 0, "".join(outputs)


def run_ctest_chunk(build_dir: Path, tests: list[str]) -> tuple[int, str]:
    regex = "|".join(tests)
    cmd = [
        "ctest",
        "--test-dir",
        str(build_dir),
        "-R",
        regex,
        "--no-tests=error",
        "--output-on-failure",
        "-j",
        os.environ.get("STEPWISE_JOBS", str(os.cpu_count() or 1)),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=CTEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"ctest timed out after {CTEST_TIMEOUT_S} s"
    return proc.returncode, proc.stdout + proc.stderr


def run_cpp(mutants: list[Mutant], scratch: Path, report) -> list[Outcome]:
    src, build_dir = scratch / "src", scratch / "build"
    written = sync_tree(ROOT, src)
    report(
        f"cpp: the persistent scratch copy {src} ({written} files changed since its last sync), built in {build_dir}"
    )
    start = time.monotonic()
    ok, log = build(src, build_dir)
    if not ok:
        detail = f"the unmutated scratch copy does not build:\n{log}"
        report(f"  baseline: {detail}")
        return [Outcome(m.id, m.kind, m.file, list(m.tests), "error", 0.0, detail) for m in mutants]
    tests = list(dict.fromkeys(t for m in mutants for t in m.tests))
    rc, output = run_ctest(build_dir, tests)
    if rc != 0:
        detail = (
            f"the named tests do not pass without any mutant (or no test matches "
            f"{'|'.join(tests)}; ctest exit {rc}):\n{_tail(output)}"
        )
        report(f"  baseline: {detail}")
        return [Outcome(m.id, m.kind, m.file, list(m.tests), "error", 0.0, detail) for m in mutants]
    report(f"  baseline: built and the named tests pass without mutants ({time.monotonic() - start:.0f} s)")
    outcomes = []
    for m in mutants:
        start = time.monotonic()
        with Applied(m, src):
            built, log = build(src, build_dir)
            if built:
                rc, output = run_ctest(build_dir, list(m.tests))
        if not built:
            status, detail = "not built", f"the mutant does not compile, so no test judged it:\n{log}"
        elif rc == 0:
            status, detail = "survived", "the named tests passed with the mutant"
        else:
            failed = re.findall(r"^\s*\d+ - (\S+) \(Failed\)", output, re.M)
            status, detail = "killed", ("failed: " + ", ".join(failed)) if failed else f"ctest exit {rc}"
        outcomes.append(Outcome(m.id, m.kind, m.file, list(m.tests), status, time.monotonic() - start, detail))
        report(line(outcomes[-1]))
    return outcomes


# --- the outcome -----------------------------------------------------------------------------------------------


def line(o: Outcome) -> str:
    word = {"survived": "SURVIVED"}.get(o.status, o.status)
    text = f"  {word:<9} {o.id:<38} {o.seconds:6.1f} s  {o.file}"
    if o.status != "killed":
        text += "\n" + "\n".join("            " + d for d in o.detail.splitlines())
    return text


def exit_code(outcomes: list[Outcome]) -> int:
    if any(o.status == "survived" for o in outcomes):
        return EXIT_SURVIVED
    if any(not o.judged for o in outcomes):
        return EXIT_NOT_JUDGED
    return EXIT_KILLED


def _git(*args: str) -> str:
    proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def document(outcomes: list[Outcome], list_path: Path, kind: str) -> dict:
    counts = {s: sum(o.status == s for o in outcomes) for s in ("killed", "survived", "stale", "not built", "error")}
    return {
        "tool": "stepwise-mutants",
        "list": str(list_path),
        "kind": kind,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain")),
        "finished": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "summary": {k: v for k, v in counts.items() if v},
        "exit_code": exit_code(outcomes),
        "mutants": [asdict(o) for o in outcomes],
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="scripts/dev/mutants.py",
        description=__doc__.split("\n\n")[0],
        epilog="Exit status: 0 every mutant killed; 1 a mutant survived; 2 bad usage or a malformed list; 3 a mutant "
        "could not be judged (stale, tests failing without mutants, not building, tests not running).",
    )
    p.add_argument(
        "--kind",
        choices=(*KINDS, "all"),
        default="python",
        help="which mutants to run (default: python; cpp needs a build of the scratch copy)",
    )
    p.add_argument("--only", action="append", metavar="ID", help="run only this mutant (repeatable; any kind)")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--json-out", type=Path, metavar="FILE", help="also write the outcome as JSON")
    p.add_argument(
        "--mutants",
        type=Path,
        default=LIST,
        metavar="FILE",
        help=f"the mutant list (default: {LIST.relative_to(ROOT)})",
    )
    default_scratch = os.environ.get("STEPWISE_MUTANTS_DIR", Path.home() / ".cache" / "stepwise" / "mutants")
    p.add_argument(
        "--scratch",
        type=Path,
        metavar="DIR",
        default=Path(default_scratch),
        help="cpp: the persistent scratch copy (src/) and its build (build/) "
        "(default: $STEPWISE_MUTANTS_DIR or ~/.cache/stepwise/mutants)",
    )
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        mutants = select(load_mutants(args.mutants), args.kind, args.only)
    except MutantError as e:
        print(f"mutants: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.list:
        for m in mutants:
            print(f"{m.id:<38} {m.kind:<6} {m.file}\n    tests: {', '.join(m.tests)}\n    why:   {m.why}")
        return 0
    if not mutants:
        print(f"mutants: error: no {args.kind} mutant in {args.mutants}", file=sys.stderr)
        return EXIT_USAGE
    stale = [(m, reason) for m in mutants if (reason := stale_reason(m, ROOT))]
    if stale:
        for m, reason in stale:
            print(f"mutants: stale mutant {m.id}: {reason}; update {args.mutants.name}", file=sys.stderr)
        outcomes = [Outcome(m.id, m.kind, m.file, list(m.tests), "stale", 0.0, reason) for m, reason in stale]
    else:
        report = lambda text: print(text, flush=True)  # noqa: E731  (progress as it happens)
        outcomes = []
        python = [m for m in mutants if m.kind == "python"]
        cpp = [m for m in mutants if m.kind == "cpp"]
        if python:
            outcomes += run_python(python, report)
        if cpp:
            outcomes += run_cpp(cpp, args.scratch, report)
            # The C++ run is on demand and slow: its last outcome is kept in the repository.
            cpp_doc = document([o for o in outcomes if o.kind == "cpp"], args.mutants, "cpp")
            LAST_CPP_RUN.write_text(json.dumps(cpp_doc, indent=2) + "\n", encoding="utf-8")
            print(f"wrote {LAST_CPP_RUN.relative_to(ROOT)}")
    doc = document(outcomes, args.mutants, args.kind)
    print("mutants: " + ", ".join(f"{n} {s}" for s, n in doc["summary"].items()) + f" (exit {doc['exit_code']})")
    if args.json_out is not None:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc["exit_code"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
