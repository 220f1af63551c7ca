"""The house rules a reader relies on, checked from the tree so they cannot erode unnoticed.

- No source file is over 600 lines: a grab-bag file holds several concepts. The files over it today are listed
  with their current length in OVER_600, and the list may only shrink: a listed file that grows, or one that is no
  longer over the limit and still listed, fails, as does any other file over it.
- The lists of modules a reader is given match the tree: the README's layout rows for model/ and reports/ name every
  module there; the reports/ row and stepwise_report/__init__.py's docstring name every subpackage and every module,
  and each subpackage's __init__.py names every module it holds.
- Every repository path a comment names (model/gpt.cpp, tests/bench/lr_schedule_test.cpp, ...) exists.

Each checking function also runs on synthetic input that must fail, so a check that silently finds nothing is
itself caught.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 600
SOURCE_SUFFIXES = (".cpp", ".h", ".py", ".sh")
# Files over LIMIT lines today, at their length today: each may only shrink, and leaves the list once under it.
OVER_600: dict[str, int] = {
    "tests/reports/resultgen.py": 681,
}
# ablations/ holds files of one concern each, none over 400 lines (issue 40, item 4); a file over it would be listed
# here at its length, and could only shrink.
ABLATIONS_LIMIT = 400
OVER_400_IN_ABLATIONS: dict[str, int] = {}
# ablations/ by concern: a newcomer finds where to go from the folder's name. ./ablate's main() and the build file
# stay at the top; every other source is in one of these.
ABLATIONS_FOLDERS = {
    "flags": "one file per flag: its declaration (ablations/flags/<name>.cpp)",
    "flag_table": "the table the flags declare themselves into, an option's declaration, the docs generated from it",
    "command_line": "./ablate's options, per group, and what resolves them into a run; the listings, the launcher and the plan's table",
    "run": "running a suite: the plan, the rows, the result documents and where they go, sweeps, interruptions",
    "judges": "the verdicts on a row: the loss check, the convergence guard, time to target, the record rule",
    "tables": "plain-text tables: the aligned columns the plan, the listings and the progress lines share",
    "suites": "the suites' JSON files",
}
ABLATIONS_TOP = {"ablations/ablate.cpp", "ablations/CMakeLists.txt"}
TOP_DIRS = ("model", "bench", "ablations", "reports", "scripts", "tests", "docs", "results", "ci", "cmake")
_PATH = re.compile(
    r"(?<![\w/.<$-])((?:" + "|".join(TOP_DIRS) + r")/[\w./-]*\w\.(?:cpp|h|py|md|json|toml|sh|txt|cuh))\b"
)


def tracked(*patterns: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if (ROOT / p).exists()]


# --- checking functions ----------------------------------------------------------------------------


def size_violations(
    lengths: dict[str, int], allowed: dict[str, int], limit: int = LIMIT, name: str = "OVER_600"
) -> list[str]:
    """What breaks the size rule, one line each: a file over the limit not in `allowed`, an allowed file longer
    than its entry, an allowed file no longer over the limit (its entry must go), an entry for a file that is gone."""
    problems = []
    for path, n in sorted(lengths.items()):
        if n > limit and path not in allowed:
            problems.append(f"{path}: {n} lines, over {limit}: split it by the concepts it holds")
        elif path in allowed and n > allowed[path]:
            problems.append(f"{path}: {n} lines, grown past its allowance of {allowed[path]} (it may only shrink)")
        elif path in allowed and n <= limit:
            problems.append(f"{path}: {n} lines, now within {limit}: take it out of {name}")
        elif path in allowed and n < allowed[path]:
            problems.append(f"{path}: {n} lines, shrunk below its allowance of {allowed[path]}: lower the entry")
    problems += [f"{path}: in {name} but not in the tree" for path in sorted(set(allowed) - set(lengths))]
    return problems


def named_modules(text: str, candidates: set[str]) -> set[str]:
    """The candidates `text` names as whole words (in backticks or not)."""
    return {c for c in candidates if re.search(rf"(?<![\w.]){re.escape(c)}(?!\w|\.\w)", text)}


def module_list_problems(where: str, text: str, modules: set[str]) -> list[str]:
    named = named_modules(text, modules)
    return [f"{where} does not name the module {m}" for m in sorted(modules - named)]


def readme_row(readme: str, folder: str) -> str:
    """The README layout table's row for `folder` with its continuation rows (those whose first cell is empty)."""
    lines = readme.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| `{folder}` |"))
    row = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("| |"):
            break
        row.append(line)
    return "\n".join(row)


def comment_text(path: str, text: str) -> str:
    """The comments of a C++ file (// and /* */) or a Python file (# and docstrings: every string literal)."""
    if path.endswith((".cpp", ".h")):
        return "\n".join(re.findall(r"//[^\n]*|/\*.*?\*/", text, re.S))
    if path.endswith(".py"):
        return "\n".join(re.findall(r"#[^\n]*|\"\"\".*?\"\"\"|'''.*?'''", text, re.S))
    return "\n".join(re.findall(r"#[^\n]*", text))


def missing_paths(path: str, text: str, exists) -> list[str]:
    """The repository paths the comments of `text` name that do not exist."""
    return sorted(
        {f"{path}: names {p}, which does not exist" for p in _PATH.findall(comment_text(path, text)) if not exists(p)}
    )


# --- the tree ---------------------------------------------------------------------------------------


def test_no_source_file_is_over_600_lines_and_the_allowance_only_shrinks():
    lengths = {
        p: len((ROOT / p).read_text(errors="replace").splitlines()) for p in tracked() if p.endswith(SOURCE_SUFFIXES)
    }
    assert not size_violations(lengths, OVER_600), "\n".join(size_violations(lengths, OVER_600))


def test_no_file_in_ablations_is_over_400_lines_and_the_allowance_only_shrinks():
    lengths = {
        p: len((ROOT / p).read_text(errors="replace").splitlines())
        for p in tracked("ablations/*")
        if p.endswith(SOURCE_SUFFIXES)
    }
    assert len(lengths) > 20, "found almost no ablations/ sources: the scan is broken"
    problems = size_violations(lengths, OVER_400_IN_ABLATIONS, ABLATIONS_LIMIT, "OVER_400_IN_ABLATIONS")
    assert not problems, "\n".join(problems)


def misplaced_in_ablations(paths: list[str]) -> list[str]:
    """The ablations/ files outside the concern folders (and the top's own), one line each."""
    return [
        f"{p}: not in one of ablations/'s folders ({', '.join(ABLATIONS_FOLDERS)}): put it where its concern is"
        for p in paths
        if p.startswith("ablations/") and p not in ABLATIONS_TOP and p.split("/")[1] not in ABLATIONS_FOLDERS
    ]


def test_ablations_sources_live_in_the_folder_of_their_concern():
    paths = tracked("ablations/*")
    assert len(paths) > 40, "found almost no ablations/ files: the scan is broken"
    assert misplaced_in_ablations(paths) == []
    assert {p.split("/")[1] for p in paths if p not in ABLATIONS_TOP} == set(ABLATIONS_FOLDERS), "a folder went"
    assert misplaced_in_ablations(["ablations/execute.cpp", "ablations/run/plan.cpp", "ablations/ablate.cpp"]) == [
        "ablations/execute.cpp: not in one of ablations/'s folders (" + ", ".join(ABLATIONS_FOLDERS) + "): put it "
        "where its concern is"
    ]


def test_a_synthetic_long_ablations_file_fails_the_size_rule():
    assert size_violations({"ablations/run/x.cpp": 401}, {}, ABLATIONS_LIMIT, "OVER_400_IN_ABLATIONS") == [
        "ablations/run/x.cpp: 401 lines, over 400: split it by the concepts it holds"
    ]


def report_modules(paths: list[str]) -> dict[str, set[str]]:
    """reports/stepwise_report/'s modules by subpackage ("" for the package's top), __init__ and __main__ left out."""
    found: dict[str, set[str]] = {}
    for p in paths:
        parts = Path(p).relative_to("reports/stepwise_report").parts
        found.setdefault(parts[0] if len(parts) > 1 else "", set())
        if Path(p).stem not in ("__init__", "__main__"):
            found[parts[0] if len(parts) > 1 else ""].add(Path(p).stem)
    return found


def test_the_module_lists_match_the_tree():
    readme = (ROOT / "README.md").read_text()
    model = {Path(p).stem for p in tracked("model/*.cpp", "model/*.h")}
    package = ROOT / "reports" / "stepwise_report"
    by_subpackage = report_modules(tracked("reports/stepwise_report/*.py"))
    subpackages = {s for s in by_subpackage if s}
    assert len(subpackages) > 3, "found almost no subpackages of stepwise_report: the scan is broken"
    report = set().union(*by_subpackage.values())
    init = (package / "__init__.py").read_text()
    problems = module_list_problems("README's model/ row", readme_row(readme, "model/"), model)
    problems += module_list_problems("README's reports/ row", readme_row(readme, "reports/"), report)
    problems += module_list_problems("stepwise_report/__init__.py", init, report | subpackages)
    row = readme_row(readme, "reports/")
    problems += [f"README's reports/ row does not name {s}/" for s in sorted(subpackages) if f"`{s}/`" not in row]
    for sub in sorted(subpackages):
        where = f"stepwise_report/{sub}/__init__.py"
        problems += module_list_problems(where, (package / sub / "__init__.py").read_text(), by_subpackage[sub])
    count = re.search(r"in (\d+) modules", readme_row(readme, "reports/"))
    if count and int(count.group(1)) != len(report):
        problems.append(f"README's reports/ row says {count.group(1)} modules; there are {len(report)}")
    assert not problems, "\n".join(problems)


def test_every_path_a_comment_names_exists():
    problems = []
    for path in tracked():
        if path.endswith(SOURCE_SUFFIXES) and not path.startswith("tests/structure/"):
            problems += missing_paths(path, (ROOT / path).read_text(errors="replace"), lambda p: (ROOT / p).exists())
    assert not problems, "\n".join(problems)


# --- the checks fail where they must -----------------------------------------------------------------


def test_synthetic_size_violations_are_reported():
    assert size_violations({"a.cpp": 601}, {}) == ["a.cpp: 601 lines, over 600: split it by the concepts it holds"]
    assert "grown past" in size_violations({"a.cpp": 700}, {"a.cpp": 650})[0]
    assert "now within" in size_violations({"a.cpp": 600}, {"a.cpp": 650})[0]
    assert "lower the entry" in size_violations({"a.cpp": 620}, {"a.cpp": 650})[0]
    assert "not in the tree" in size_violations({}, {"gone.py": 700})[0]
    assert size_violations({"a.cpp": 600, "b.py": 650}, {"b.py": 650}) == []


def test_a_stale_module_list_is_reported():
    row = "| `model/` | the GPT: `config`, `gpt` (forward to loss), `sdpa` |\n| | `weights` |"
    assert module_list_problems("row", row, {"config", "gpt", "sdpa", "weights"}) == []
    assert module_list_problems("row", row, {"config", "gpt", "recompute"}) == [
        "row does not name the module recompute"
    ]
    readme = "| `model/` | `config` |\n| | `gpt` |\n| `bench/` | `runner` |"
    assert readme_row(readme, "model/") == "| `model/` | `config` |\n| | `gpt` |"
    assert named_modules("configuration, gpt.cpp", {"config", "gpt"}) == set(), "whole words, not parts or files"
    paths = [
        "reports/stepwise_report/__init__.py",
        "reports/stepwise_report/__main__.py",
        "reports/stepwise_report/cli.py",
        "reports/stepwise_report/read/__init__.py",
        "reports/stepwise_report/read/results.py",
        "reports/stepwise_report/gate/gate.py",
    ]
    assert report_modules(paths) == {"": {"cli"}, "read": {"results"}, "gate": {"gate"}}


def test_a_comment_naming_a_missing_path_is_reported():
    source = '// See model/loss.cpp and bench/step/train_step.h for why.\nint x; // "model/gpt.cpp" is a string'
    found = missing_paths("a.cpp", source, lambda p: p == "bench/step/train_step.h")
    assert found == [
        "a.cpp: names model/gpt.cpp, which does not exist",
        "a.cpp: names model/loss.cpp, which does not exist",
    ]
    python = '"""Reads tests/mutants.toml."""\npath = "results/x.json"  # and docs/nowhere.md\n'
    assert missing_paths("a.py", python, lambda p: False) == [
        "a.py: names docs/nowhere.md, which does not exist",
        "a.py: names tests/mutants.toml, which does not exist",
    ]
    assert missing_paths("a.cpp", "// results/<run_id>/x.json and $ROOT/model/x.h", lambda p: False) == []
