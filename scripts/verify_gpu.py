"""Verifies every GPU path of stepwise in one call on a lent GPU machine (scripts/verify-gpu.sh is the entry point).

A lent GPU is offline and held for minutes, so the run is a declared table of steps (STEPS, at the bottom), each a
list of commands with a share of the time that is left, under one deadline for the whole. Each step's outcome is one
or more lines of verify.md: PASS, FAIL or SKIP, with a figure or the reason. A step that raises, runs over its time
or crashes fails on its own line and the run goes on. Whatever happens, --out ends up holding exactly three files:
verify.md, verify.json and verify-artifacts.tar.gz (results, logs, JUnit, the report: never weights, always under
16 MiB). Everything else lives in a work directory outside --out (the system's temp dir) that is removed at the end.

The GPU checks themselves are tests: the C++ GPU-only tests carry ctest's `gpu` label, and the properties only a
GPU run settles (the flash row's kernel, compile's memory, CUPTI across graph captures, MFU, NCCL inside the graph,
the max_batch probe) are the pytest tests in tests/gpu, marked `gpu`, run over this run's own results. On a CPU
every GPU step is a SKIP with the reason; --rehearse-on-cpu runs the same table at --device=cpu --preset=tiny, so a
CPU machine rehearses the call (tests/scripts/test_rehearse_gpu.py), and ablate records the CUDA-only flags as
skipped there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
# The one place the ablation binary's path is named (STEPWISE_BIN overrides it, as in the e2e tests).
ABLATE = Path(os.environ.get("STEPWISE_BIN") or BUILD / "ablations" / "ablate")
MICRO = Path(os.environ.get("STEPWISE_MICRO") or BUILD / "bench" / "micro" / "stepwise_micro")

# The whole call ends within this deadline, so it fits a 10-minute job slot of a shared GPU queue with room to copy the
# three files back. On a node held longer, --budget-scale raises it and every step's share with it.
DEADLINE_S = 525
# Kept back from every step for writing verify.md, verify.json and the archive.
CLOSING_S = 10
# A process over its time gets SIGTERM (ablate then records what finished and removes its scratch), then SIGKILL.
KILL_GRACE_S = 5
# The archive must come back from the lent machine: bounded by construction, never holding weights.
ARCHIVE_LIMIT_BYTES = 16 * 2**20
ARCHIVE_FILE_LIMIT_BYTES = 4 * 2**20
NEVER_ARCHIVED = (".safetensors", ".bin", ".pt", ".pth", ".npy", ".ckpt")
OUTPUTS = ("verify.md", "verify.json", "verify-artifacts.tar.gz")
# What the Python rows, ./report and the gpu tests import, with what each is needed for.
PYTHON_PACKAGES = {
    "torch": "everything",
    "numpy": "the Python rows and ./report",
    "safetensors": "the Python rows (the C++ row's initial weights)",
    "scipy": "./report's gate statistics",
    "matplotlib": "./report's plots",
    "jsonschema": "./report's validation of every result (without it reports run unvalidated)",
    "pytest": "the gpu tests (tests/gpu)",
}
MIN_CMAKE = (3, 25)
MIN_GXX = (11,)


@dataclass(frozen=True)
class Target:
    """Where the steps run: the GPU at GPT-2 size, or a CPU rehearsing the same table at the tiny preset."""

    device: str
    preset: str
    timing: tuple[str, ...]  # short measurements: every path runs and its numbers are sane, not the last digit
    max_batch_time_s: int  # the max_batch probe's own cap (its default is 120 s on CUDA)
    karpathy_batch: int  # Karpathy's video runs B=16
    micro_seq: int  # the sequence length of the micro-benchmarks kept (the preset's longest)
    shape: tuple[str, ...] = ()
    # The memory steps' own options: a shape where activations (and the logits) outweigh weights and AdamW state, so
    # what a memory flag frees shows, and the probe's limit for the largest batch with and without each flag.
    memory: tuple[str, ...] = ()
    # The fp8 sweep's model sizes: from one where torchtitan's small-GEMM filter keeps every layer in bf16 up.
    sweep_presets: tuple[str, ...] = ()

    def ablate(self, *args: str) -> list:
        """ablate's command line on this target; an option the step passes replaces the target's own (a sweep over
        presets replaces --preset)."""
        own = [f"--device={self.device}", f"--preset={self.preset}", *self.shape, *self.timing, "--no-progress"]
        given = {a.split("=")[0] for a in args}
        given |= {"--" + a.split("=")[1].replace("_", "-") for a in args if a.startswith("--sweep=")}
        return [ABLATE, *(a for a in own if a.split("=")[0] not in given), *args]


# The probe's cap: verify needs it past the base batch (16, 32, 64 from 8 take seconds each), not the true largest.
# At gpt2-124m the probe's limit sits above what full checkpoint fits at fp32 on an 80 GB GPU (its estimate: 64).
GPU = Target(
    "cuda",
    "gpt2-124m",
    ("--warmup=3", "--steps=8", "--max-steps=60", "--max-time=2"),
    30,
    16,
    1024,
    memory=("--max-batch-limit=128",),
    sweep_presets=("small", "gpt2-124m", "gpt2-medium"),
)
REHEARSAL = Target(
    "cpu",
    "tiny",
    ("--warmup=1", "--steps=3", "--max-steps=3", "--max-time=2"),
    10,
    2,
    64,
    ("--batch-size=2", "--seq-len=32"),
    # At 2 x 32 one chunk of chunked_ce covers every row and AdamW's state outweighs the activations.
    memory=("--batch-size=4", "--seq-len=64", "--max-batch-limit=16"),
    sweep_presets=("tiny", "mini"),
)

# What a user on an offline GPU node does next when a line of that kind fails: one sentence each, in verify.md.
REMEDIES = {
    "setup": "Point STEPWISE_PYTHON at the python that imports torch and run scripts/verify-gpu.sh again.",
    "package": "On a connected machine run scripts/setup.sh --bundle (STEPWISE_BUNDLE_PYTHON_VERSION=<this python's "
    "X.Y>) and carry deps/ here; ./report, the rows and the tests all read deps/site.",
    "python_h": "Carry Python.h: scripts/setup.sh --bundle with STEPWISE_BUNDLE_PYTHON_VERSION set to this python's "
    "X.Y puts Debian's headers under deps/, and verify points the compiler at them.",
    "tool": "Use an image with cmake >= 3.25 and g++ >= 11 (the build needs C++20 and CMake's CUDA support).",
    "compute_mode": "Ask for the GPU in Default compute mode (nvidia-smi -c DEFAULT as root): ctest and the Python "
    "rows open a second CUDA context beside ablate's.",
    "ld_library_path": "Unset LD_LIBRARY_PATH (or drop the toolkit's lib directory from it) so the torch wheel's "
    "own CUDA runtime and CUPTI load.",
    "build": "Read logs/build.log in the archive; a missing package means deps/ did not travel: scripts/setup.sh "
    "--bundle on a connected machine, then carry deps/.",
    "time": "Run that step's command alone (the first line of logs/<step>.log in the archive), or give the whole "
    "call more time with --budget-scale.",
    "ablate": "Read the failed row's reason in its result JSON (results/ in the archive) and rerun its command from "
    "logs/<step>.log.",
    "ctest": "Rerun the named test alone: ctest --test-dir build -R <name> --output-on-failure, with "
    "STEPWISE_TEST_DEVICE=cuda.",
    "gpu_test": "The assertion names the row and its figures; rerun STEPWISE_GPU_RESULTS=<results/ from the archive> "
    "python -m pytest -m gpu tests/gpu.",
    "micro": "Run build/bench/micro/stepwise_micro with the filter from logs/micro.log; a crash there is a bug to "
    "report with that log.",
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


@dataclass(frozen=True)
class Cmd:
    """One process of a step. `cap`: its own time limit inside the step's (a probe that can hang)."""

    argv: list
    env: dict = field(default_factory=dict)
    cap: float | None = None


@dataclass
class Ran:
    """What one command did: its exit status (None: stopped over its time; 127: could not start), time and log."""

    argv: list
    code: int | None
    seconds: float
    output: str = ""  # its output (the last 64 KiB)

    @property
    def signal_name(self) -> str:
        if self.code is not None and self.code < 0:
            try:
                return signal.Signals(-self.code).name
            except ValueError:
                return f"signal {-self.code}"
        return ""

    def status_text(self) -> str:
        if self.code is None:
            return "stopped: over its time"
        if self.code == 127 and not self.output:
            return "could not start"
        return f"killed by {self.signal_name}" if self.signal_name else f"exit {self.code}"


@dataclass
class Outcome:
    ran: list[Ran]
    seconds: float
    budget: float
    directory: Path  # the step's own results directory

    @property
    def over_time(self) -> bool:
        return any(r.code is None for r in self.ran)

    def last(self) -> Ran:
        return self.ran[-1]


def say(text: str) -> None:
    """Progress on stdout; a reader that went away (a closed pipe) never stops the run."""
    try:
        print(text, flush=True)
    except (OSError, ValueError):
        pass


class Stopped(BaseException):
    """verify itself received SIGTERM (or SIGINT): stop the steps, still write the three files."""


# ---------------------------------------------------------------------------------------------------------------
# The run


@dataclass
class Verifier:
    out: Path
    work: Path
    target: Target
    rehearsal: bool
    deadline: float  # time.monotonic() by which the three files are written
    step_budgets: dict[str, float]
    python: str = field(default_factory=lambda: os.environ.get("STEPWISE_PYTHON") or sys.executable)
    began: float = field(default_factory=time.monotonic)
    lines: list[Line] = field(default_factory=list)
    gpu: str | None = None  # the CUDA device's name, or None
    no_gpu_reason: str = "no GPU: the preflight did not run"
    extra_env: dict = field(default_factory=dict)  # what the preflight found the steps need (CPATH)
    built: bool = False
    build_tried: bool = False
    proc: subprocess.Popen | None = None  # the process now running, stopped whatever ends the run
    step_limit: float = 0.0  # the running step's time
    archive: dict = field(default_factory=dict)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def env(self, extra: dict | None = None) -> dict:
        """The one environment every process gets: the interpreter, PYTHONPATH (deps/site, from verify-gpu.sh), scratch
        space outside --out (the Python rows' weights go there), and what the preflight found."""
        return {
            **os.environ,
            "STEPWISE_PYTHON": self.python,
            "STEPWISE_SCRATCH_DIR": str(self.work / "scratch"),
            "TMPDIR": str(self.work / "tmp"),
            **self.extra_env,
            **(extra or {}),
        }

    def add(self, path, status, figure="", reason="", step="", kind="", seconds=None, budget=None) -> None:
        line = Line(
            path,
            status,
            str(figure),
            str(reason)[:600],
            step,
            kind,
            None if seconds is None else round(seconds, 1),
            None if budget is None else round(budget, 1),
        )
        self.lines.append(line)
        mark = {"PASS": "ok  ", "FAIL": "FAIL", "SKIP": "skip"}[status]
        say(f"[verify] {mark} {path}: {figure or reason}")

    def run_cmd(self, step: str, cmd: Cmd, limit: float) -> Ran:
        """Runs one command in its own process group with stdout and stderr into logs/<step>.log."""
        log = self.work / "logs" / f"{step}.log"
        argv = [str(a) for a in cmd.argv]
        limit = min(limit, cmd.cap) if cmd.cap else limit
        began = time.monotonic()
        with open(log, "a") as f:
            f.write(f"$ {' '.join(argv)}\n")
            f.flush()
            start = f.tell()
            try:
                self.proc = subprocess.Popen(
                    argv,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=ROOT,
                    env=self.env(cmd.env),
                    start_new_session=True,
                )
            except OSError as e:
                f.write(f"[verify] could not start: {type(e).__name__}: {e}\n")
                return Ran(argv, 127, time.monotonic() - began)
            try:
                code = self.proc.wait(timeout=max(0.1, limit - KILL_GRACE_S))
            except subprocess.TimeoutExpired:
                stop_group(self.proc)
                f.write(f"\n[verify] stopped: over its time of {limit:.0f} s\n")
                code = None
            except BaseException:  # verify itself is being stopped: so is its child
                stop_group(self.proc)
                raise
            finally:
                self.proc = None
        with open(log, "rb") as f:
            f.seek(max(start, log.stat().st_size - 65536))
            output = f.read().decode(errors="replace")
        return Ran(argv, code, time.monotonic() - began, output)

    def log_tail(self, step: str, lines: int = 4) -> str:
        log = self.work / "logs" / f"{step}.log"
        if not log.exists():
            return ""
        tail = [l for l in log.read_text(errors="replace").splitlines() if l.strip() and not l.startswith("$ ")]
        return " | ".join(tail[-lines:])[-400:]


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group, SIGKILL to what is left after KILL_GRACE_S."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------------------------------------------
# Reading results


def results_under(directory: Path) -> list[dict]:
    """stepwise result documents under directory, by suite and position (a half-written file is passed over: ablate
    writes each atomically, so one that does not parse is not one of its results)."""
    docs = []
    for p in sorted(directory.rglob("*.json")) if directory.exists() else []:
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("tool") == "stepwise":
            docs.append(doc)
    return sorted(
        docs,
        key=lambda d: (
            (d.get("suite") or {}).get("name", ""),
            (d.get("suite") or {}).get("index", 0),
            d.get("implementation", "libtorch"),
        ),
    )


def fmt_tok(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} tok/s"


def describe_row(doc: dict) -> str:
    s = doc.get("summary") or {}
    mfu = (s.get("mfu") or {}).get("value")
    mem = (s.get("memory") or {}).get("peak_allocated_bytes")
    parts = [fmt_tok(s.get("tokens_per_s")), f"{s['step_ms']['median']:.1f} ms/step" if s.get("step_ms") else ""]
    if mfu is not None:
        parts.append(f"MFU {100 * mfu:.1f}%")
    if mem:
        parts.append(f"peak {mem / 2**30:.2f} GiB")
    backend = (doc.get("config") or {}).get("sdpa_backend_used")
    if backend:
        parts.append(f"attention: {backend}")
    return ", ".join(p for p in parts if p)


def suite_lines(v: Verifier, step: str, path: str, outcome: Outcome) -> Iterable[Line]:
    """The step's line: every configuration ran (failed ones named), with the throughput from first to last row."""
    docs = results_under(outcome.directory)
    ok = [d for d in docs if d["status"] == "ok" and d.get("implementation", "libtorch") == "libtorch"]
    skipped = sum(d["status"] == "skipped" for d in docs)
    failed = [d for d in docs if d["status"] == "failed"]
    figure = f"{len(ok)} ok, {skipped} skipped, {len(failed)} failed"
    if ok:
        first, last = ok[0]["summary"].get("tokens_per_s"), ok[-1]["summary"].get("tokens_per_s")
        ratio = f" ({last / first:.2f}x)" if first and last else ""
        figure += f"; {fmt_tok(first)} -> {fmt_tok(last)}{ratio}; last: {describe_row(ok[-1])}"
    ran = outcome.last()
    if outcome.over_time:
        during = f"stopped during {docs[-1]['name']} ({docs[-1].get('implementation')})" if docs else "no row finished"
        return [Line(path, "FAIL", figure, f"over its time of {outcome.budget:.0f} s: {during}", step, "time")]
    if ran.code not in (0, 1):
        return [Line(path, "FAIL", figure, f"{ran.status_text()}: {v.log_tail(step)}", step, "ablate")]
    if not docs:
        return [Line(path, "FAIL", figure, "no result files: " + v.log_tail(step), step, "ablate")]
    if failed:
        return [
            Line(
                path,
                "FAIL",
                figure,
                "; ".join(f"{d['name']} ({d.get('implementation')}): {d.get('reason')}" for d in failed),
                step,
                "ablate",
            )
        ]
    return [Line(path, "PASS", figure, "", step)]


def python_lines(docs: list[dict], stopped: bool) -> Iterable[Line]:
    """One line per Python row: its median step time over the C++ row's of the same configuration (the C++ vs Python
    table; >= 1.00: C++ at least as fast) and its losses against the C++ row's. A row its step's time-out stopped is
    a SKIP: the step's own line is the failure."""
    engine = {
        (d["suite"]["name"], d["suite"]["index"]): d
        for d in docs
        if d.get("implementation", "libtorch") == "libtorch" and d["status"] == "ok"
    }
    table = []
    for d in docs:
        impl = d.get("implementation", "libtorch")
        if impl == "libtorch":
            continue
        cpp = engine.get((d["suite"]["name"], d["suite"]["index"]))
        path = f"{impl} vs C++: {d['suite']['name']} {d['suite'].get('label', d['name'])}"
        if d["status"] != "ok" or cpp is None:
            yield Line(
                path,
                "FAIL" if d["status"] == "failed" and not stopped else "SKIP",
                "",
                str(d.get("reason") or "no C++ row of this configuration finished"),
                kind="ablate",
            )
            continue
        py_ms, cpp_ms = d["summary"]["step_ms"]["median"], cpp["summary"]["step_ms"]["median"]
        check = (d["summary"].get("loss") or {}).get("vs_libtorch") or {}
        compile_s = d["summary"].get("compile_s")
        figure = (
            f"Python/C++ x{py_ms / cpp_ms:.3f} (C++ {cpp_ms:.1f} ms, {impl} {py_ms:.1f} ms"
            + (f", compiled in {compile_s:.0f} s" if compile_s else "")
            + f"); loss vs C++: {check.get('status')}"
        )
        changed = check.get("status") == "math changed"
        yield Line(
            path, "FAIL" if changed else "PASS", figure, check.get("reason", "") if changed else "", kind="ablate"
        )
        table.append(
            f"  {d['suite'].get('label', d['name'])[:28]:<28} {impl:<16} C++ {cpp_ms:8.1f} ms  "
            f"Python {py_ms:8.1f} ms  Python/C++ x{py_ms / cpp_ms:.3f}"
        )
    if table:
        say("[verify] C++ vs Python (>= 1.00: the C++ step is at least as fast)\n" + "\n".join(table))


@dataclass
class Case:
    name: str
    status: str  # passed, failed, skipped
    message: str = ""
    figure: str = ""


def junit_cases(path: Path) -> list[Case]:
    """Test cases of a JUnit file (ctest's or pytest's). A missing or unparsable file raises: the step fails on it."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        if case.get("classname") and case.get("classname") != name:
            name = f"{case.get('classname').rsplit('.', 1)[-1]}::{name}"
        out = case.findtext("system-out") or ""
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        skipped = case.find("skipped")
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        if skipped is not None:
            message = skipped.get("message", "")
            gtest = re.search(r"Skipped\n(.+)", out)  # GTEST_SKIP's reason follows its "file:line: Skipped"
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


# ---------------------------------------------------------------------------------------------------------------
# Steps: commands

PREFLIGHT_PY = r"""
import importlib, json, os, sys, sysconfig
out = {"python": sys.executable, "version": "%d.%d" % sys.version_info[:2], "packages": {}}
for name in sys.argv[1:]:
    try:
        out["packages"][name] = {"version": str(getattr(importlib.import_module(name), "__version__", "?"))}
    except BaseException as e:
        out["packages"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
inc = sysconfig.get_paths().get("include") or ""
out["python_h"] = os.path.join(inc, "Python.h") if os.path.exists(os.path.join(inc, "Python.h")) else None
out["include"] = inc
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    out["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
except BaseException as e:
    out["cuda"] = None
    out["torch_error"] = "%s: %s" % (type(e).__name__, e)
print("PREFLIGHT " + json.dumps(out))
"""


def preflight_cmds(v: Verifier) -> list[Cmd]:
    return [
        Cmd([v.python, "-c", PREFLIGHT_PY, *PYTHON_PACKAGES], cap=90),
        Cmd(["cmake", "--version"], cap=15),
        Cmd(["g++", "-dumpfullversion", "-dumpversion"], cap=15),
        Cmd(["nvidia-smi", "--query-gpu=name,compute_mode", "--format=csv,noheader"], cap=10),
    ]


def ablate_cmd(v: Verifier, name: str, *args: str, env: dict | None = None) -> list[Cmd]:
    out = v.work / "results" / name
    return [Cmd(v.target.ablate(*args, f"--out={out}", f"--run-id=verify_{name}"), env or {})]


def ctest_cmd(v: Verifier, name: str, *select: str) -> list[Cmd]:
    """ctest over the build, JUnit into junit/<name>.xml; it stops itself before the step's time is out (so the
    JUnit is written), and the GPU runs it with STEPWISE_TEST_DEVICE=cuda."""
    stop = time.strftime("%H:%M:%S", time.gmtime(time.time() + max(1.0, v.step_limit - KILL_GRACE_S - 3)))
    env = {"TZ": "UTC", "STEPWISE_TEST_DEVICE": v.target.device}
    return [
        Cmd(
            [
                "ctest",
                "--test-dir",
                BUILD,
                "-j",
                str(min(8, os.cpu_count() or 2)),
                "--output-on-failure",
                "--output-junit",
                v.work / "junit" / f"{name}.xml",
                "--stop-time",
                stop,
                *select,
            ],
            env,
        )
    ]


def host_sync_cmds(v: Verifier) -> list[Cmd]:
    return [
        Cmd(
            v.target.ablate(
                "--enable=bf16,flash,native_layers",
                "--bf16-mode=autocast",
                f"--host-sync={mode}",
                f"--out={v.work / 'results' / 'host_sync' / mode}.json",
            )
        )
        for mode in ("chunk", "lagged")
    ]


def micro_filter(t: Target) -> str:
    """One case per micro-benchmark family at the preset's longest sequence: what verify reads, not all 111."""
    seq = f"T:{t.micro_seq}$"
    return (
        "^(attention/[^/]+/[^/]+/fwd\\+bwd/bf16/B:[0-9]+/"
        + seq
        + "|(layernorm|gelu)/[^/]+/[^/]+/fwd\\+bwd/B:[0-9]+/"
        + seq
        + "|adamw/|matmul/[^/]+/[^/]+/mlp_up/|head/[^/]+/[^/]+/fwd\\+bwd/bf16/|copy/host_to_device/[^/]+/"
        "bytes:16777216$|mask/[^/]+/[^/]+/" + seq + ")"
    )


def micro_cmd(v: Verifier) -> list[Cmd]:
    return [
        Cmd(
            [
                MICRO,
                f"--device={v.target.device}",
                f"--presets={v.target.preset}",
                "--benchmark_min_time=0.05",
                f"--benchmark_filter={micro_filter(v.target)}",
                f"--benchmark_out={v.work / 'results' / 'micro.json'}",
                "--benchmark_out_format=json",
            ]
        )
    ]


def ddp_cmd(v: Verifier) -> list[Cmd]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return ablate_cmd(
        v,
        "ddp_nccl",
        "--enable=all",
        # host_allocator runs its row in a process of its own, which cannot join the ranks
        "--disable=max_batch,host_allocator",
        env={"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)},
    )


# The memory flags verify at GPT-2 size: each one's peak against the baseline's, and the largest batch with it against
# max_batch's alone.
MEMORY_FLAGS = ("chunked_ce", "checkpoint")


def memory_cmd(v: Verifier, step: str, sub: str, *args: str) -> Cmd:
    """One ablate process of a memory step, into results/<step>/<sub> under a run id of its own (the report keeps
    each process's rows apart)."""
    out = v.work / "results" / step / sub
    return Cmd(v.target.ablate(*v.target.memory, *args, f"--out={out}", f"--run-id=verify_{step}_{sub}"))


def memory_peak_cmds(v: Verifier) -> list[Cmd]:
    return [memory_cmd(v, "memory_peak", f, f"--enable={f}", "--vs-baseline") for f in MEMORY_FLAGS]


def memory_max_batch_cmds(v: Verifier) -> list[Cmd]:
    probe = (f"--max-batch-time={v.target.max_batch_time_s}",)
    return [memory_cmd(v, "memory_max_batch", "max_batch", "--enable=max_batch", *probe)] + [
        memory_cmd(v, "memory_max_batch", f, f"--enable=max_batch,{f}", *probe) for f in MEMORY_FLAGS
    ]


def gpu_tests_cmd(v: Verifier) -> list[Cmd]:
    return [
        Cmd(
            [
                v.python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-m",
                "gpu",
                ROOT / "tests" / "gpu",
                f"--junitxml={v.work / 'junit' / 'gpu_results.xml'}",
            ],
            {"STEPWISE_GPU_RESULTS": str(v.work / "results"), "STEPWISE_BIN": str(ABLATE)},
        )
    ]


def report_cmd(v: Verifier) -> list[Cmd]:
    return [Cmd([ROOT / "report", v.work / "results", "--out", v.work / "report"])]


# ---------------------------------------------------------------------------------------------------------------
# Steps: judging what they did


def version_tuple(text: str) -> tuple[int, ...]:
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(x) for x in found.groups() if x is not None) if found else ()


def judge_preflight(v: Verifier, o: Outcome) -> Iterable[Line]:
    probe, cmake, gxx, smi = o.ran
    found = re.search(r"^PREFLIGHT (.*)$", probe.output, re.M)
    if not found:
        yield Line(
            "python: torch and the packages the steps import",
            "FAIL",
            "",
            f"{v.python}: {probe.status_text()}: " + probe.output.strip()[-300:],
            kind="setup",
        )
        v.no_gpu_reason = f"no GPU: {v.python} could not run the preflight"
    else:
        info = json.loads(found.group(1))
        yield from package_lines(v, info)
        yield python_h_line(v, info)
    for name, ran, least in (("cmake", cmake, MIN_CMAKE), ("g++", gxx, MIN_GXX)):
        have = version_tuple(ran.output) if ran.code == 0 else ()
        want = ".".join(map(str, least))
        ok = bool(have) and have[: len(least)] >= least
        yield Line(
            f"{name} >= {want}",
            "PASS" if ok else "FAIL",
            ".".join(map(str, have)) or "",
            "" if ok else f"{name}: {ran.status_text()} {ran.output.strip()[-200:]}",
            kind="tool",
        )
    yield compute_mode_line(smi)
    yield ld_library_path_line()


def package_lines(v: Verifier, info: dict) -> Iterable[Line]:
    packages = info["packages"]
    if info.get("cuda"):
        v.gpu = f"{info['cuda']} (torch {info.get('torch')}, CUDA {info.get('torch_cuda')})"
    else:
        v.no_gpu_reason = (
            "no GPU: " + info["torch_error"]
            if info.get("torch_error")
            else f"no GPU: torch {info.get('torch')} sees no CUDA device (torch.cuda.is_available() is False)"
        )
    have = [f"{n} {p['version']}" for n, p in packages.items() if "version" in p]
    yield Line(
        f"python {info['version']}: the packages the steps import",
        "PASS" if len(have) == len(packages) else "FAIL",
        f"{info['python']}: " + ", ".join(have),
        "" if len(have) == len(packages) else "missing: " + ", ".join(n for n, p in packages.items() if "error" in p),
        kind="package",
    )
    for name, p in packages.items():
        if "error" in p:
            yield Line(f"python package {name} (for {PYTHON_PACKAGES[name]})", "FAIL", "", p["error"], kind="package")


def python_h_line(v: Verifier, info: dict) -> Line:
    """torch.compile's Triton builds a C launcher against Python.h; an image without python3-dev has none. Headers
    bundled in deps/ (scripts/setup.sh --bundle) are put on CPATH for every later step."""
    path = "Python.h for torch.compile (Triton compiles its launcher against it)"
    if info.get("python_h"):
        return Line(path, "PASS", info["python_h"])
    version = info["version"]
    bundled = Path(os.environ.get("STEPWISE_DEPS") or ROOT / "deps") / f"python{version}" / "include"
    if (bundled / f"python{version}" / "Python.h").exists():
        v.extra_env["CPATH"] = os.pathsep.join(
            filter(None, [str(bundled / f"python{version}"), str(bundled), os.environ.get("CPATH")])
        )
        return Line(path, "PASS", f"not in {info['include']}; the bundled {bundled} is on CPATH for the steps")
    return Line(path, "FAIL", "", f"neither {info['include']} nor {bundled} has it", kind="python_h")


def compute_mode_line(smi: Ran) -> Line:
    path = "GPU compute mode (Default lets ctest and the Python rows open a second context)"
    if smi.code == 127 and not smi.output.strip():
        return Line(path, "SKIP", "", "no nvidia-smi on PATH")
    if smi.code is None:
        return Line(path, "FAIL", "", "nvidia-smi did not answer within its 10 s", kind="compute_mode")
    modes = [l.rsplit(",", 1)[-1].strip() for l in smi.output.splitlines() if "," in l and not l.startswith("$")]
    if smi.code != 0 or not modes:
        return Line(path, "SKIP", "", f"nvidia-smi {smi.status_text()}: {smi.output.strip()[-200:]}")
    bad = [m for m in modes if m != "Default"]
    return Line(
        path,
        "FAIL" if bad else "PASS",
        ", ".join(modes),
        "a second process cannot open a CUDA context on this GPU" if bad else "",
        kind="compute_mode",
    )


def ld_library_path_line() -> Line:
    """The toolkit's libcudart or libcupti on LD_LIBRARY_PATH loads before the torch wheel's own (RUNPATH)."""
    path = "LD_LIBRARY_PATH leaves the torch wheel's CUDA runtime and CUPTI in charge"
    hits = []
    for d in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        hits += [os.path.join(d, n) for n in names if re.match(r"lib(cudart|cupti)\.so", n)]
    if hits:
        return Line(path, "FAIL", "", "would load first: " + ", ".join(sorted(hits)[:4]), kind="ld_library_path")
    return Line(path, "PASS", "no libcudart or libcupti on it")


def judge_build(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "build (scripts/build.sh, every core)"
    ran, ninja = o.last(), BUILD / "build.ninja"
    cuda = ("ON" if "STEPWISE_WITH_CUDA=1" in ninja.read_text(errors="replace") else "OFF") if ninja.exists() else "?"
    figure = f"{o.seconds:.0f} s on {os.cpu_count()} cores; CUDA paths {cuda}"
    v.built, v.build_tried = ran.code == 0 and ABLATE.exists(), True
    if v.built and v.gpu and cuda != "ON":
        return [
            Line(
                path,
                "FAIL",
                figure,
                "built without CUDA on a GPU machine: nvcc or torch's CUDA was not found (see logs/build.log)",
                kind="build",
            )
        ]
    if v.built:
        return [Line(path, "PASS", figure)]
    reason = f"over its time of {o.budget:.0f} s" if o.over_time else v.log_tail("build")
    return [Line(path, "FAIL", figure, reason, kind="time" if o.over_time else "build")]


def judge_libraries(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "CUDA libraries loaded (one runtime, torch's own)"
    docs = results_under(o.directory)
    if not docs:
        return [
            Line(
                path,
                "FAIL",
                "",
                f"{o.last().status_text()}: {v.log_tail('libraries')}",
                kind="time" if o.over_time else "ablate",
            )
        ]
    libs = docs[0]["env"].get("libraries") or {}
    if not libs:
        return [Line(path, "SKIP", "", "this build loads no CUDA library")]
    torch_cuda = (libs.get("torch_cuda") or [""])[0]
    site = Path(torch_cuda).resolve().parents[2] if torch_cuda else None  # site-packages/torch/lib/x -> site-packages
    problems = [f"{k}: {len(p)} files loaded ({', '.join(p)})" for k, p in libs.items() if len(p) > 1]
    for key in ("cudart", "cupti"):
        for p in libs.get(key, []):
            if site and not Path(p).resolve().is_relative_to(site):
                problems.append(f"{key} from {p}, not from torch's wheel under {site}")
    figure = "; ".join(f"{k}: {Path(p[0]).parent}" for k, p in sorted(libs.items()) if k in ("cudart", "cupti"))
    return [Line(path, "FAIL" if problems else "PASS", figure, "; ".join(problems), kind="ld_library_path")]


CTEST_LINE = re.compile(r"Test +#\d+: (\S+) \.+ *(\*+)?(Passed|Failed|Skipped|Timeout|Not Run|Exception)\b")


def ctest_log_cases(output: str) -> list[Case]:
    """ctest's own progress lines, for a run stopped before it wrote its JUnit."""
    status = {"Passed": "passed", "Skipped": "skipped"}
    return [
        Case(name, status.get(word, "failed"), "" if word in status else word)
        for name, _, word in CTEST_LINE.findall(output)
    ]


def judge_ctest(v: Verifier, o: Outcome, name: str, path: str) -> Iterable[Line]:
    """One line for the whole ctest run, and (for the gpu label) one per test: its reason when it skipped or failed.
    ctest stops itself at the step's time (--stop-time) and still writes its JUnit; a test it stopped says so."""
    junit = v.work / "junit" / f"{name}.xml"
    timed_out = set(re.findall(r"Test +#\d+: (\S+) \.+\*+Timeout", o.last().output))
    cases = junit_cases(junit) if junit.exists() or not o.over_time else ctest_log_cases(o.last().output)
    counts = {s: sum(c.status == s for c in cases) for s in ("passed", "skipped", "failed")}
    figure = f"{counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed"
    failed = [c.name for c in cases if c.status == "failed" and c.name not in timed_out]
    if o.over_time or timed_out:
        summary = Line(
            path,
            "FAIL",
            figure,
            f"over its time of {o.budget:.0f} s"
            + ("; stopped: " + ", ".join(sorted(timed_out))[:300] if timed_out else ""),
            kind="time",
        )
    elif failed or o.last().code != 0:
        summary = Line(
            path,
            "FAIL",
            figure,
            "failed: " + ", ".join(failed)[:400] if failed else o.last().status_text() + ": " + v.log_tail(name),
            kind="ctest",
        )
    elif not cases:
        summary = Line(path, "FAIL", figure, "no test ran: " + v.log_tail(name), kind="ctest")
    else:
        summary = Line(path, "PASS", figure)
    return [summary, *(case_lines(cases, name, "ctest", timed_out) if name == "gpu_ctest" else ())]


def judge_gpu_results(v: Verifier, o: Outcome) -> Iterable[Line]:
    """The gpu tests over this run's results: one line per test, named for the property it checks."""
    cases = junit_cases(v.work / "junit" / "gpu_results.xml")
    if not cases:
        return [
            Line(
                "gpu tests over this run's results (tests/gpu)",
                "FAIL",
                "",
                "no test ran: " + v.log_tail("gpu_results"),
                kind="gpu_test",
            )
        ]
    for c in cases:
        c.name = "risk: " + c.name.split("::")[-1].removeprefix("test_").replace("_", " ")
    return list(case_lines(cases, "gpu_results", "gpu_test"))


def judge_host_sync(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "host sync after each chunk vs lagged read-back"
    figures = {}
    for mode in ("chunk", "lagged"):
        f = o.directory / f"{mode}.json"
        summary = (json.loads(f.read_text()).get("summary") or {}) if f.exists() else {}
        if summary.get("step_ms"):
            figures[mode] = summary["step_ms"]
    if len(figures) < 2:
        return [
            Line(
                path,
                "FAIL",
                "",
                ("over its time; " if o.over_time else "")
                + "no step times for "
                + ", ".join(m for m in ("chunk", "lagged") if m not in figures)
                + ": "
                + v.log_tail("host_sync"),
                kind="time" if o.over_time else "ablate",
            )
        ]
    c, l = figures["chunk"], figures["lagged"]
    return [
        Line(
            path,
            "PASS",
            f"mean {c['mean']:.2f} vs {l['mean']:.2f} ms (x{c['mean'] / l['mean']:.3f}), CV "
            f"{100 * c['cv']:.2f}% vs {100 * l['cv']:.2f}%, median {c['median']:.2f} vs {l['median']:.2f} ms "
            "(chunk vs lagged)",
        )
    ]


def judge_micro(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "micro-benchmarks at GPT-2 sizes (one case per family)"
    ran, target = o.last(), v.work / "results" / "micro.json"
    try:
        benchmarks = json.loads(target.read_text())["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        if target.exists():  # kept for the archive, out of ./report's way (it would stop at the broken file)
            target.rename(target.with_suffix(".json.partial"))
        return [
            Line(
                path,
                "FAIL",
                "",
                f"stepwise_micro {ran.status_text()}; its JSON is unreadable "
                f"({type(e).__name__}: {str(e)[:160]}): {v.log_tail('micro', 2)}",
                kind="micro",
            )
        ]
    errors = [b for b in benchmarks if b.get("error_occurred")]
    ran_ok = len(benchmarks) - len(errors)
    figure = f"{ran_ok} cases ran, {len(errors)} skipped with a reason"
    if ran.code != 0 or not ran_ok:
        return [
            Line(
                path,
                "FAIL",
                figure,
                f"stepwise_micro {ran.status_text()}: {v.log_tail('micro', 2)}",
                kind="time" if o.over_time else "micro",
            )
        ]
    return [Line(path, "PASS", figure)]


def judge_suite(name: str, path: str, python: bool = False) -> Callable[[Verifier, Outcome], Iterable[Line]]:
    def judge(v: Verifier, o: Outcome) -> Iterable[Line]:
        lines = list(suite_lines(v, name, path, o))
        return lines + (list(python_lines(results_under(o.directory), o.over_time)) if python else [])

    return judge


def _over(doc: dict | None, base: dict | None) -> str:
    """doc's tokens/s over base's, or - when either did not run."""
    if not (doc and doc["status"] == "ok" and base and base["status"] == "ok"):
        return "-"
    return f"{doc['summary']['tokens_per_s'] / base['summary']['tokens_per_s']:.2f}x"


def judge_fp8_sweep(v: Verifier, o: Outcome) -> Iterable[Line]:
    """The fp8 suite at each model size: the suite's line, then per point FP8's speedup over bf16, alone and under
    compile, and the layers that ran in FP8 (none where the small-GEMM filter kept them all in bf16), or why the FP8
    row was skipped."""
    lines = list(suite_lines(v, "fp8_sweep", "fp8 suite swept over model sizes", o))
    points: dict[str, dict[int, dict]] = {}
    for doc in results_under(o.directory):
        sweep = doc.get("sweep") or {}
        if doc.get("implementation", "libtorch") == "libtorch" and sweep:
            points.setdefault(doc["config"]["preset"], {})[doc["suite"]["index"]] = doc
    parts = []
    for preset, rows in points.items():
        base, fp8, compiled = rows.get(0), rows.get(1), rows.get(2)
        if not fp8 or fp8["status"] != "ok":
            parts.append(f"{preset}: {fp8['status'] + ' (' + str(fp8.get('reason')) + ')' if fp8 else 'not run'}")
            continue
        layers = len(fp8["config"].get("fp8_layers") or [])
        parts.append(
            f"{preset}: fp8 {_over(fp8, base)}, with compile {_over(compiled, base)} bf16, {layers} layers in FP8"
        )
    if parts:
        lines.append(Line("fp8 by model size", "PASS", "; ".join(parts), "", "fp8_sweep"))
    return lines


def judge_report(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "./report over all of it"
    ran = o.last()
    if ran.code == 0 and (v.work / "report" / "report.md").exists():
        unvalidated = "not validated" in ran.output
        return [
            Line(
                path,
                "PASS",
                "report.md, plots, dashboard, exports; results "
                + ("NOT validated: jsonschema is missing" if unvalidated else "validated against the schema"),
            )
        ]
    return [
        Line(path, "FAIL", "", f"{ran.status_text()}: {v.log_tail('report')}", kind="time" if o.over_time else "report")
    ]


def _gib(n: float | None) -> str:
    return "?" if n is None else f"{n / 2**30:.2f}"


def _memory_row(directory: Path, flags: set[str]) -> tuple[dict | None, str]:
    """The libtorch row under `directory` whose flags in effect are exactly `flags`, if it ran; else why not."""
    docs = [d for d in results_under(directory) if d.get("implementation", "libtorch") == "libtorch"]
    doc = next((d for d in docs if set((d.get("config") or {}).get("flags_requested") or []) == flags), None)
    if doc is None:
        return None, f"no result of --enable={','.join(sorted(flags)) or '(none)'}"
    if doc["status"] != "ok":
        return None, f"{doc['name']} {doc['status']}: {doc.get('reason')}"
    return doc, ""


def _memory_failure(v: Verifier, o: Outcome, step: str, path: str, why: list[str]) -> Line:
    over = f"over its time of {o.budget:.0f} s; " if o.over_time else ""
    return Line(path, "FAIL", "", over + "; ".join(why) + f": {v.log_tail(step, 2)}", kind="time" if over else "ablate")


def judge_memory_peak(v: Verifier, o: Outcome) -> Iterable[Line]:
    """Per memory flag, its peak against the baseline's of the same process (--vs-baseline), with the activations
    measured and estimated and the speed beside it. What the flag must lower is the activations (the peak inside
    forward and backward less weights, gradients and AdamW state): the whole peak may be the optimizer step's."""
    for flag in MEMORY_FLAGS:
        path = f"{flag} at {v.target.preset}: peak memory with and without"
        base, why_base = _memory_row(o.directory / flag, set())
        row, why_row = _memory_row(o.directory / flag, {flag})
        if base is None or row is None:
            yield _memory_failure(v, o, "memory_peak", path, [w for w in (why_base, why_row) if w])
            continue
        m0, m1 = base["summary"]["memory"], row["summary"]["memory"]
        p0, p1 = m0.get("peak_allocated_bytes"), m1.get("peak_allocated_bytes")
        t0, t1 = base["summary"]["tokens_per_s"], row["summary"]["tokens_per_s"]
        figure = (
            f"peak allocated {_gib(p0)} -> {_gib(p1)} GiB"
            + (f" (x{p1 / p0:.2f})" if p0 and p1 else "")
            + f"; activations {_gib(m0.get('activation_bytes'))} -> {_gib(m1.get('activation_bytes'))} GiB "
            f"(estimate {_gib(m0.get('estimated_activation_bytes'))} -> {_gib(m1.get('estimated_activation_bytes'))})"
            f"; {fmt_tok(t0)} -> {fmt_tok(t1)} (x{t1 / t0:.2f})"
        )
        a0, a1 = m0.get("activation_bytes"), m1.get("activation_bytes")
        lower = a0 is not None and a1 is not None and a1 < a0
        reason = "" if lower else f"{flag} did not lower the activation memory"
        yield Line(path, "PASS" if lower else "FAIL", figure, reason, kind="ablate")


def judge_memory_max_batch(v: Verifier, o: Outcome) -> Iterable[Line]:
    """Per memory flag, the largest batch max_batch's probe finds with it against max_batch alone, each beside the
    batch the activation estimate predicts, with the tokens/s at it: a memory flag must never lower it."""
    alone, why_alone = _memory_row(o.directory / "max_batch", {"max_batch"})
    for flag in MEMORY_FLAGS:
        path = f"{flag} at {v.target.preset}: largest batch with and without"
        row, why_row = _memory_row(o.directory / flag, {"max_batch", flag})
        if alone is None or row is None:
            yield _memory_failure(v, o, "memory_max_batch", path, [w for w in (why_alone, why_row) if w])
            continue
        p0, p1 = alone.get("max_batch_probe") or {}, row.get("max_batch_probe") or {}
        c0, c1 = p0.get("chosen"), p1.get("chosen")
        e0, e1 = ((p.get("estimate") or {}).get("largest_batch", "?") for p in (p0, p1))
        t0, t1 = alone["summary"]["tokens_per_s"], row["summary"]["tokens_per_s"]
        stopped = [f"{name}: {p['stopped']}" for name, p in (("alone", p0), (flag, p1)) if p.get("stopped")]
        figure = (
            f"largest batch {c0} -> {c1} (estimate {e0} -> {e1}, limit {p1.get('limit')}); "
            f"{fmt_tok(t0)} -> {fmt_tok(t1)} (x{t1 / t0:.2f}) at it"
            + (f"; probe stopped ({'; '.join(stopped)})" if stopped else "")
        )
        ok = c0 is not None and c1 is not None and c1 >= c0
        reason = "" if ok else f"{flag} lowered the largest batch the probe found"
        yield Line(path, "PASS" if ok else "FAIL", figure, reason, kind="ablate")


# ---------------------------------------------------------------------------------------------------------------
# The table: the way torchtitan lists its H100 integration runs. `share`: the seconds a step needs on one H100; a step
# gets that share of the time left (over the steps still to come), with the deadline as the hard limit, so what a
# fast step leaves over goes to the ones after it. GPU-only tests run first so their lines exist even if ctest is cut.


@dataclass(frozen=True)
class Step:
    name: str
    share: float
    commands: Callable[[Verifier], list[Cmd]]
    judge: Callable[[Verifier, Outcome], Iterable[Line]]
    gpu: bool = True  # needs a CUDA device (or --rehearse-on-cpu)
    built: bool = True  # needs the build
    least_s: float = 0  # its time never drops below this (the preflight's torch import)


PYTHON_ALL = "--implementations=libtorch,python-eager,python-compile"
STEPS = [
    Step("preflight", 10, preflight_cmds, judge_preflight, gpu=False, built=False, least_s=60),
    Step(
        "build",
        120,
        lambda v: [Cmd([ROOT / "scripts" / "build.sh"], {"STEPWISE_JOBS": str(os.cpu_count() or 2)})],
        judge_build,
        gpu=False,
        built=False,
    ),
    Step(
        "libraries",
        10,
        lambda v: [
            Cmd(
                [
                    ABLATE,
                    "--preset=tiny",
                    "--device=cpu",
                    "--warmup=1",
                    "--steps=2",
                    "--max-steps=2",
                    "--no-progress",
                    f"--out={v.work / 'results' / 'libraries'}",
                ]
            )
        ],
        judge_libraries,
        gpu=False,
    ),
    Step(
        "gpu_ctest",
        15,
        lambda v: ctest_cmd(v, "gpu_ctest", "-L", "gpu", "-LE", "python"),
        lambda v, o: judge_ctest(v, o, "gpu_ctest", "GPU-only C++ tests (ctest -L gpu)"),
    ),
    Step(
        "all_flags",
        125,
        lambda v: ablate_cmd(
            v,
            "all_flags",
            "--enable=all",
            # The Python model has no twin of the memory flags or of fp8 (their Python rows would be skipped): the
            # memory steps verify those at GPT-2 size, and fp8_sweep verifies fp8, with compile, over model sizes.
            "--disable=checkpoint,chunked_ce,fp8",
            "--max-batch-limit=64",
            f"--max-batch-time={v.target.max_batch_time_s}",
            PYTHON_ALL,
        ),
        judge_suite("all_flags", "one configuration with every flag, C++ then Python eager and torch.compile", True),
    ),
    Step(
        "raschka",
        110,
        lambda v: ablate_cmd(
            v,
            "raschka",
            "--suite=raschka",
            "--max-batch-limit=64",
            f"--max-batch-time={v.target.max_batch_time_s}",
            "--implementations=libtorch,python-eager",
            "--implementations-at=ends",
        ),
        judge_suite("raschka", "raschka suite, Python eager at its two ends", True),
    ),
    Step(
        "karpathy_trace",
        45,
        lambda v: ablate_cmd(
            v, "karpathy_trace", "--suite=karpathy", "--trace", f"--batch-size={v.target.karpathy_batch}"
        ),
        judge_suite("karpathy_trace", "karpathy suite with --trace on every row"),
    ),
    Step("host_sync", 20, host_sync_cmds, judge_host_sync),
    Step("micro", 20, micro_cmd, judge_micro),
    Step(
        "ddp_nccl",
        20,
        ddp_cmd,
        judge_suite("ddp_nccl", "data parallel, one rank (NCCL on a GPU), all flags but max_batch"),
    ),
    Step(
        "fp8_sweep",
        70,
        lambda v: ablate_cmd(v, "fp8_sweep", "--suite=fp8", f"--sweep=preset={','.join(v.target.sweep_presets)}"),
        lambda v, o: judge_fp8_sweep(v, o),
    ),
    Step("memory_peak", 30, memory_peak_cmds, judge_memory_peak),
    Step("memory_max_batch", 75, memory_max_batch_cmds, judge_memory_max_batch),
    Step("gpu_results", 10, gpu_tests_cmd, judge_gpu_results, built=False),
    Step(
        "ctest",
        35,
        lambda v: ctest_cmd(
            v,
            "ctest",
            "-LE",
            "gpu",
            *(["-R", r"^smoke\."] if v.rehearsal else ["-E", r"^(e2e\.|reports|structure|scripts\.|python)"]),
        ),
        lambda v, o: judge_ctest(v, o, "ctest", "the other C++ tests on the device (ctest -LE gpu)"),
    ),
    Step("report", 15, report_cmd, judge_report, gpu=False, built=False),
]


def step_budget(v: Verifier, i: int, runnable: list[Step]) -> float:
    """Step i's time: its share of what is left over the runnable steps from it on, never past the deadline."""
    step = STEPS[i]
    if step.name in v.step_budgets:
        return min(v.step_budgets[step.name], v.left() - CLOSING_S)
    left = v.left() - CLOSING_S
    weights = sum(s.share for s in runnable if STEPS.index(s) >= i)
    return min(left, max(left * step.share / weights, step.least_s))


def skip_reason(v: Verifier, step: Step) -> str | None:
    if step.gpu and not (v.gpu or v.rehearsal):
        return v.no_gpu_reason
    if step.built and v.build_tried and not v.built:
        return "the build failed"
    if step.name == "report" and not results_under(v.work / "results"):
        return "no results to report"
    return None


def run_step(v: Verifier, i: int, runnable: list[Step]) -> None:
    step = STEPS[i]
    reason = skip_reason(v, step)
    if reason:
        v.add(step.name, "SKIP", "", reason, step.name)
        return
    budget = step_budget(v, i, runnable)
    if budget < 1:
        v.add(step.name, "SKIP", "", f"out of time: {v.left():.0f} s left before the deadline", step.name, "time")
        return
    v.step_limit = budget
    began = time.monotonic()
    directory = v.work / "results" / step.name
    try:
        ran = []
        for cmd in step.commands(v):
            left = budget - (time.monotonic() - began)
            ran.append(v.run_cmd(step.name, cmd, left) if left > 1 else Ran([str(a) for a in cmd.argv], None, 0.0))
        outcome = Outcome(ran, time.monotonic() - began, budget, directory)
        lines = list(step.judge(v, outcome))
    except Exception as e:  # one step's surprise is its own FAIL line, never the end of the run
        v.add(step.name, "FAIL", "", f"{type(e).__name__}: {e}", step.name, "verify", time.monotonic() - began, budget)
        return
    for n, line in enumerate(lines):
        line.step = line.step or step.name
        if n == 0:
            line.seconds, line.budget_s = round(time.monotonic() - began, 1), round(budget, 1)
        v.add(
            **{k: getattr(line, k) for k in ("path", "status", "figure", "reason", "step", "kind", "seconds")},
            budget=line.budget_s,
        )


# ---------------------------------------------------------------------------------------------------------------
# The three files


def write_archive(v: Verifier) -> None:
    """Logs, JUnit, results and the report, in that order, as long as they fit: never a weights or token file, no file
    over ARCHIVE_FILE_LIMIT_BYTES, the whole under ARCHIVE_LIMIT_BYTES (counted uncompressed, so the gzip can only be
    smaller), and nothing added once the deadline is reached. What was left out is listed in verify.md."""
    left_out, size, count = [], 1024, 0  # tar's end-of-archive blocks
    target = v.out / "verify-artifacts.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        for top in ("logs", "junit", "results", "report"):
            for p in sorted((v.work / top).rglob("*")) if (v.work / top).exists() else []:
                if not p.is_file() or p.is_symlink():
                    continue
                rel, bytes_ = p.relative_to(v.work), p.stat().st_size
                cost = 512 + (bytes_ + 511) // 512 * 512
                why = (
                    "weights or token data"
                    if p.suffix in NEVER_ARCHIVED
                    else f"over {ARCHIVE_FILE_LIMIT_BYTES // 2**20} MiB"
                    if bytes_ > ARCHIVE_FILE_LIMIT_BYTES
                    else "the archive is full"
                    if size + cost > ARCHIVE_LIMIT_BYTES - 65536
                    else "out of time"
                    if v.deadline - time.monotonic() < 1
                    else ""
                )
                if why:
                    left_out.append(f"{rel} ({bytes_ / 2**20:.1f} MiB, {why})")
                    continue
                tar.add(p, arcname=f"verify-artifacts/{rel}")
                size, count = size + cost, count + 1
    v.archive = {"files": count, "bytes": target.stat().st_size, "left_out": left_out}


def write_reports(v: Verifier, error: str = "") -> None:
    counts = {s: sum(l.status == s for l in v.lines) for s in ("PASS", "FAIL", "SKIP")}
    elapsed = time.monotonic() - v.began
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    header = {
        "device": v.gpu or v.no_gpu_reason,
        "rehearsal": v.rehearsal,
        "host": socket.gethostname(),
        "git_commit": commit,
        "python": v.python,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - elapsed)),
        "seconds": round(elapsed, 1),
        "deadline_s": round(v.deadline - v.began, 1),
        "counts": counts,
        "archive": v.archive,
        "error": error,
    }
    (v.out / "verify.json").write_text(json.dumps({**header, "lines": [asdict(l) for l in v.lines]}, indent=2) + "\n")
    rows = ["| path | status | figure |", "|---|---|---|"]
    for l in v.lines:
        text = l.figure + (f" — {l.reason}" if l.reason else "")
        timing = f" ({l.seconds:.0f} s of {l.budget_s:.0f})" if l.seconds is not None and l.budget_s else ""
        rows.append(f"| {l.path} | {l.status} | {text.replace('|', '/').replace(chr(10), ' ')}{timing} |")
    kinds = list(dict.fromkeys(l.kind or "verify" for l in v.lines if l.status == "FAIL"))
    todo = ["", "## When a line fails", ""] + [f"- {k}: {REMEDIES.get(k, REMEDIES['verify'])}" for k in kinds]
    archive = (
        f"Results, logs, JUnit and the report are in verify-artifacts.tar.gz ({v.archive.get('files', 0)} "
        f"files, {v.archive.get('bytes', 0) / 2**20:.2f} MiB)."
        if v.archive
        else "verify-artifacts.tar.gz could not be written (see verify.json's error)."
    )
    left_out = v.archive.get("left_out") or []
    md = [
        f"# verify-gpu: {header['device']}" + (" (rehearsal on a CPU)" if v.rehearsal else ""),
        "",
        f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped in {elapsed:.0f} s "
        f"(deadline {header['deadline_s']:.0f} s); commit {commit[:12]}, host {header['host']}, {header['started']}.",
        "",
        *rows,
        *(todo if kinds else []),
        "",
        archive,
        *(
            [
                f"Left out: {', '.join(left_out[:10])}"
                + (f" and {len(left_out) - 10} more" if len(left_out) > 10 else "")
                + "."
            ]
            if left_out
            else []
        ),
        *(["", f"verify stopped early: {error}"] if error else []),
    ]
    (v.out / "verify.md").write_text("\n".join(md) + "\n")
    say("\n".join(md[2:]))


def parse_step_budgets(ap: argparse.ArgumentParser, items: list[str]) -> dict[str, float]:
    names = [s.name for s in STEPS]
    budgets = {}
    for item in items:
        name, _, seconds = item.partition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = -1
        if name not in names or value <= 0:
            ap.error(f"--step-budget {item!r}: want STEP=SECONDS, SECONDS > 0, STEP one of {', '.join(names)}")
        budgets[name] = value
    return budgets


def check_out(ap: argparse.ArgumentParser, out: Path) -> None:
    if out.exists() and not out.is_dir():
        ap.error(f"--out {out} is a file; give a directory (new or empty)")
    others = sorted(p.name for p in out.iterdir() if p.name not in OUTPUTS) if out.is_dir() else []
    if others:
        ap.error(
            f"--out {out} holds other files ({', '.join(others[:5])}); give a new or empty directory: it "
            f"receives exactly {', '.join(OUTPUTS)}"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"cannot create --out {out}: {e}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out",
        required=True,
        type=Path,
        help="a new or empty directory: verify.md, verify.json and verify-artifacts.tar.gz go there, nothing else",
    )
    ap.add_argument("--budget-scale", type=float, default=1.0, help="multiplies the deadline (default 1: 525 s)")
    ap.add_argument(
        "--step-budget",
        action="append",
        default=[],
        metavar="STEP=SECONDS",
        help="cap one step's time (e.g. to rehearse a step that runs over)",
    )
    ap.add_argument(
        "--rehearse-on-cpu",
        action="store_true",
        help="run the GPU steps too, at --device=cpu --preset=tiny: a CPU rehearsal of the GPU call",
    )
    args = ap.parse_args(argv)
    if args.budget_scale <= 0:
        ap.error("--budget-scale must be a positive number")
    budgets = parse_step_budgets(ap, args.step_budget)
    out = args.out.resolve()
    check_out(ap, out)
    # The clock started with scripts/verify-gpu.sh (its setup counts against the deadline).
    started = float(os.environ.get("STEPWISE_VERIFY_STARTED") or time.time())
    began = time.monotonic() - max(0.0, min(time.time() - started, 120.0))
    work = Path(tempfile.mkdtemp(prefix="stepwise-verify-"))  # outside --out: scratch never lands there
    for sub in ("logs", "junit", "results", "scratch", "tmp"):
        (work / sub).mkdir()
    v = Verifier(
        out=out,
        work=work,
        target=REHEARSAL if args.rehearse_on_cpu else GPU,
        rehearsal=args.rehearse_on_cpu,
        deadline=began + DEADLINE_S * args.budget_scale,
        step_budgets=budgets,
        began=began,
    )

    def stop(signum, _frame):
        raise Stopped(f"{signal.Signals(signum).name} after {time.monotonic() - v.began:.0f} s")

    handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    error = ""
    try:
        setup_line(v)
        for i in range(len(STEPS)):
            # After the preflight, the steps that will not run (no GPU, no build) no longer claim time.
            runnable = [s for s in STEPS if i == 0 or skip_reason(v, s) is None or s.name == "report"]
            run_step(v, i, runnable)
    except Stopped as e:
        error = f"verify received {e}; the steps after it did not run"
    except Exception as e:  # noqa: BLE001 — a bug here must still leave the three files
        import traceback

        error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if v.proc is not None:
            stop_group(v.proc)
        if error:
            v.add("verify itself", "FAIL", "", error.splitlines()[0], kind="verify")
        try:
            write_archive(v)
        except Exception as e:  # noqa: BLE001
            v.add("verify-artifacts.tar.gz", "FAIL", "", f"{type(e).__name__}: {e}", kind="verify")
            (v.out / "verify-artifacts.tar.gz").unlink(missing_ok=True)
            with tarfile.open(v.out / "verify-artifacts.tar.gz", "w:gz"):
                pass  # an empty archive: the three files are always there
        try:
            write_reports(v, error)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return 1 if any(l.status == "FAIL" for l in v.lines) else 0


def setup_line(v: Verifier) -> None:
    """scripts/verify-gpu.sh ran scripts/setup.sh --python before verify; its status and log come along."""
    status, log = os.environ.get("STEPWISE_VERIFY_SETUP_STATUS"), os.environ.get("STEPWISE_VERIFY_SETUP_LOG")
    if log and Path(log).is_file():
        shutil.copy(log, v.work / "logs" / "setup.log")
    if status is None:
        return
    path = "scripts/setup.sh --python (the interpreter and deps/site)"
    if status == "0":
        v.add(path, "PASS", f"{v.python}; PYTHONPATH={os.environ.get('PYTHONPATH', '')}", step="setup")
    else:
        v.add(path, "FAIL", "", f"exit {status}; going on with {v.python}: {v.log_tail('setup', 2)}", "setup", "setup")


if __name__ == "__main__":
    sys.exit(main())
