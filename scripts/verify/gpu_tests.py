"""The tests verify runs on the device: the GoogleTests that need CUDA (tests/CMakeLists.txt's STEPWISE_GPU_GTESTS,
the `gpu` label), run straight from their binaries with that filter rather than as one ctest process per test (each
would load libtorch_cuda again: about 300 of them took 90-150 s), and the pytest tests in tests/gpu over this pass's
own results. Each test case is one line of verify.md, named for the property it checks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from verify.binaries import GTESTS
from verify.line import Line, case_lines, junit_cases
from verify.runner import Cmd, Outcome, Verifier
from verify.target import ROOT


def gpu_gtest_filter() -> str:
    """The GoogleTest filter of the GPU-only tests, from the one place that lists them."""
    cmake = (ROOT / "tests" / "CMakeLists.txt").read_text()
    found = re.search(r'set\(STEPWISE_GPU_GTESTS "((?:[^"\\]|\\\n)*)"\)', cmake)
    if not found:
        raise ValueError("tests/CMakeLists.txt has no set(STEPWISE_GPU_GTESTS ...)")
    return found.group(1).replace("\\\n", "")


def gtest_cmds(v: Verifier) -> list[Cmd]:
    junit = v.work / "junit"
    return [
        Cmd(
            [v.bin(name), f"--gtest_filter={gpu_gtest_filter()}", f"--gtest_output=xml:{junit / f'gtest_{name}.xml'}"],
            {"STEPWISE_TEST_DEVICE": v.target.device},
        )
        for name in GTESTS
    ]


def judge_gtests(v: Verifier, o: Outcome) -> Iterable[Line]:
    """A line for the whole run, then one per test: its reason when it skipped or failed. A binary that crashed or ran
    out of time before writing its JUnit is named on the first line."""
    cases, broken = [], []
    for name, ran in zip(GTESTS, o.ran):
        junit = v.work / "junit" / f"gtest_{name}.xml"
        if junit.exists():
            cases += junit_cases(junit)
        else:
            broken.append(f"{name}: {ran.status_text()}")
    for c in cases:
        c.name = "gpu." + c.name.replace("::", ".")
    counts = {s: sum(c.status == s for c in cases) for s in ("passed", "skipped", "failed")}
    figure = f"{counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed"
    path = "GPU-only GoogleTests (the gpu label's filter, run from their binaries)"
    failed = [c.name for c in cases if c.status == "failed"]
    if o.over_time or broken:
        kind = "time" if o.over_time else "gtest"
        summary = Line(path, "FAIL", figure, "; ".join(broken) + ": " + v.log_tail("gpu_gtests"), kind=kind)
    elif failed:
        summary = Line(path, "FAIL", figure, "failed: " + ", ".join(failed)[:400], kind="gtest")
    elif not cases:
        summary = Line(path, "FAIL", figure, "no test ran: " + v.log_tail("gpu_gtests"), kind="gtest")
    else:
        summary = Line(path, "PASS", figure)
    return [summary, *case_lines(cases, "gpu_gtests", "gtest")]


def gpu_results_cmds(v: Verifier) -> list[Cmd]:
    argv = [v.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", ROOT / "tests" / "gpu"]
    junit = f"--junitxml={v.work / 'junit' / 'gpu_results.xml'}"
    return [Cmd([*argv, junit], {"STEPWISE_GPU_RESULTS": str(v.work / "results")})]


def judge_gpu_results(v: Verifier, o: Outcome) -> Iterable[Line]:
    """The gpu tests over this pass's results: one line per test, named for the property it checks; a test whose
    rows this pass does not make skips, saying which rows it wanted."""
    cases = junit_cases(v.work / "junit" / "gpu_results.xml")
    if not cases:
        reason = "no test ran: " + v.log_tail("gpu_results")
        return [Line("gpu tests over this pass's results (tests/gpu)", "FAIL", "", reason, kind="gpu_test")]
    for c in cases:
        c.name = "risk: " + c.name.split("::")[-1].removeprefix("test_").replace("_", " ")
    return list(case_lines(cases, "gpu_results", "gpu_test"))
