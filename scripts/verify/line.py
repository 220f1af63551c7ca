"""verify.md's lines: one line (a path with its status, figure and reason), what to do when a line of
each kind fails, and the test cases a JUnit file holds, each of which becomes a line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# What a user on an offline GPU node does next when a line of that kind fails: one sentence each, in verify.md.
REMEDIES = {
    "setup": "Point STEPWISE_PYTHON at the python that imports torch and run scripts/verify-gpu.sh again.",
    "package": "On a connected machine run scripts/setup.sh --bundle (STEPWISE_BUNDLE_PYTHON_VERSION=<this python's "
    "X.Y>) and carry deps/ here; ./report, the rows and the tests all read deps/site.",
    "python_h": "Carry Python.h: scripts/setup.sh --bundle with STEPWISE_BUNDLE_PYTHON_VERSION set to this python's "
    "X.Y puts Debian's headers under deps/, and verify points the compiler at them.",
    "tool": "Use an image with cmake >= 3.25 and g++ >= 11 (the build needs C++20 and CMake's CUDA support), or carry "
    "a prebuilt binary: scripts/setup.sh --bundle on a connected machine puts one in deps/prebuilt.",
    "compute_mode": "Ask for the GPU in Default compute mode (nvidia-smi -c DEFAULT as root): the gtests and the "
    "Python rows open a second CUDA context beside ablate's.",
    "ld_library_path": "Unset LD_LIBRARY_PATH (or drop the toolkit's lib directory from it) so the torch wheel's "
    "own CUDA runtime and CUPTI load.",
    "build": "Read logs/build.log in the archive; a missing package means deps/ did not travel: scripts/setup.sh "
    "--bundle on a connected machine (it also carries a prebuilt binary, so the node builds nothing), then carry deps/.",
    "time": "Run that step's command alone (the first line of logs/<step>.log in the archive), or give the whole "
    "call more time with --budget-scale.",
    "ablate": "Read the failed row's reason in its result JSON (results/ in the archive) and rerun its command from "
    "logs/<step>.log.",
    "gtest": "Rerun the named test alone: the binary and filter are the first line of logs/gpu_gtests.log, with "
    "STEPWISE_TEST_DEVICE=cuda.",
    "gpu_test": "The assertion names the row and its figures; rerun STEPWISE_GPU_RESULTS=<results/ from the archive> "
    "python -m pytest -m gpu tests/gpu.",
    "micro": "Run stepwise_micro with the filter from logs/micro.log; a crash there is a bug to report with that log.",
    "corpus": "Carry the corpus: scripts/setup.sh --bundle copies ~/.cache/stepwise/corpus/fortunes into "
    "deps/corpus, which verify-gpu.sh reads when the node has none.",
    "report": "Run ./report on results/ from the archive; a missing package is named in logs/report.log.",
    "verify": "A bug in scripts/verify_gpu.py itself: the traceback is in verify.json; report it.",
}


@dataclass
class Line:
    """One row of verify.md: a path (or a risk) with its status, a figure and the reason."""

    path: str
    status: str  # PASS, FAIL or SKIP
    figure: str = ""
    reason: str = ""
    step: str = ""
    kind: str = ""  # a key of REMEDIES: what to do when it fails
    seconds: float | None = None
    budget_s: float | None = None
    limit_s: float | None = None  # the time the step was given: its budget, or more when earlier steps left some


@dataclass
class Case:
    name: str
    status: str  # passed, failed, skipped
    message: str = ""
    figure: str = ""


def junit_cases(path: Path) -> list[Case]:
    """Test cases of a JUnit file (GoogleTest's or pytest's). A missing or unparsable file raises: the step fails on
    it."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        if case.get("classname") and case.get("classname") != name:
            name = f"{case.get('classname').rsplit('.', 1)[-1]}::{name}"
        out = case.findtext("system-out") or ""
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        skipped = case.find("skipped")
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        if skipped is not None or case.get("result") == "skipped":
            message = skipped.get("message", "") if skipped is not None else ""
            message = re.sub(r"^\S+:\d+\n", "", message)  # GoogleTest's XML: "file:line" before the reason
            gtest = re.search(r"Skipped\n(.+)", out or message)  # GTEST_SKIP's reason follows its "file:line: Skipped"
            if gtest or message in ("", "SKIP_REGULAR_EXPRESSION_MATCHED"):
                message = gtest.group(1).strip() if gtest else out.strip()[-300:]
            cases.append(Case(name, "skipped", message.removeprefix("Skipped: "), props.get("figure", "")))
        elif failure is not None or case.get("status") == "fail":
            text = (failure.get("message", "") if failure is not None else "") or out.strip()[-400:]
            cases.append(Case(name, "failed", text[-400:], props.get("figure", "")))
        else:
            cases.append(Case(name, "passed", "", props.get("figure", "")))
    return cases


def case_lines(cases: list[Case], step: str, kind: str, timed_out: set[str] = frozenset()) -> Iterable[Line]:
    for c in cases:
        status = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[c.status]
        reason = "stopped: the step's time ran out" if c.name in timed_out else c.message
        yield Line(c.name, status, c.figure, "" if status == "PASS" else reason, step, kind)


def say(text: str) -> None:
    """Progress on stdout; a reader that went away (a closed pipe) never stops the run."""
    try:
        print(text, flush=True)
    except (OSError, ValueError):
        pass
