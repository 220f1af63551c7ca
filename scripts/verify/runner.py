"""The deadline runner: a pass is a table of steps, each a list of commands with a budget in seconds, under one deadline
for the whole call (both passes). A step may use what the steps before it left over, never what the steps after it
(in this pass and the passes after it) were promised: its limit is the time left before the deadline less their
budgets. Its own budget is its floor, so a slow start (a cold torch import, a long warm-up) cannot starve an early
step: the steps at the end lose the time instead, but never a kept step (the preflight, the build, the gpu tests and
the report, which turn the rows into answers): a step that is not kept stops where the kept steps after it begin,
so the last rows that are not kept are the first dropped. A step known to take nothing (the build when the binaries
are had) promises nothing, and neither does a step that will be skipped. A step that raises, runs over its time or
crashes is its own FAIL line and the pass goes on; after every step verify.md and verify.json are rewritten, so a
kill at any moment leaves every finished line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from verify.line import Line, say
from verify.target import ROOT, Target

# A process over its time gets SIGTERM (ablate then records what finished and removes its scratch), then SIGKILL.
KILL_GRACE_S = 5


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
    budget: float  # the time the step was given
    directory: Path  # the step's own results directory

    @property
    def over_time(self) -> bool:
        return any(r.code is None for r in self.ran)

    def last(self) -> Ran:
        return self.ran[-1]


class Stopped(BaseException):
    """verify itself received SIGTERM (or SIGINT): stop the steps, still write the three files."""


@dataclass(frozen=True)
class Task:
    """One step of a pass, a row of its table (a Task, so that Step keeps meaning the timed training step).
    `budget`: the seconds it needs on one H100 (tests hold each pass's budgets to its cap); `commands` may do
    in-process work first (the build step decides there whether to build at all)."""

    name: str
    budget: float
    commands: Callable[[Verifier], list[Cmd]]
    judge: Callable[[Verifier, Outcome], Iterable[Line]]
    gpu: bool = True  # needs a CUDA device (or --rehearse-on-cpu)
    built: bool = True  # needs the binaries
    kept: bool = False  # its budget is held for it against every step before it that is not kept


@dataclass
class Verifier:
    out: Path
    work: Path
    target: Target
    rehearsal: bool
    deadline: float  # time.monotonic() by which this pass's steps end; its closing (and later passes') come after
    table: list[Task] = field(default_factory=list)
    pass_no: int = 1
    scale: float = 1.0  # --budget-scale: every budget and the deadline
    step_budgets: dict[str, float] = field(default_factory=dict)  # --step-budget: one step's own cap
    instant: frozenset = frozenset()  # steps known to take no time (the build when every binary is had)
    later: list = field(default_factory=list)  # the passes after this one in the call: what they were promised
    probe: Ran | None = None  # the warm-up's preflight probe: torch, the packages and the GPU, read before the clock
    python: str = field(default_factory=lambda: os.environ.get("STEPWISE_PYTHON") or sys.executable)
    began: float = field(default_factory=time.monotonic)
    lines: list[Line] = field(default_factory=list)
    gpu: str | None = None  # the CUDA device's name, or None
    no_gpu_reason: str = "no GPU: the preflight did not run"
    info: dict = field(default_factory=dict)  # what the preflight's python found (torch, its libraries, the GPU)
    extra_env: dict = field(default_factory=dict)  # what the preflight and the binaries need in every process
    binaries: dict[str, Path] = field(default_factory=dict)  # name -> the file each step runs
    build_plan: dict = field(default_factory=dict)  # how the build step had each binary (verify.binaries)
    built: bool = False
    build_tried: bool = False
    proc: subprocess.Popen | None = None  # the process now running, stopped whatever ends the run
    step_limit: float = 0.0  # the running step's time
    archive: dict = field(default_factory=dict)
    on_step: Callable[[Verifier], None] = lambda v: None  # after every step: rewrite verify.md and verify.json
    cleanup: list[Callable[[], None]] = field(default_factory=list)  # at the end, whatever happens

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def budget(self, step: Task) -> float:
        """The seconds a step is promised: its budget scaled, none for a step known to take nothing."""
        return 0.0 if step.name in self.instant else step.budget * self.scale

    def promise(self, kept_only: bool = False) -> float:
        """What this pass's runnable steps (or its kept ones) were promised, all together (a later pass's claim)."""
        return sum(self.budget(s) for s in self.table if skip_reason(self, s) is None and (s.kept or not kept_only))

    def bin(self, name: str) -> Path:
        return self.binaries.get(name) or Path(f"<{name} was not found or built>")

    def env(self, extra: dict | None = None) -> dict:
        """The one environment every process gets: the interpreter, PYTHONPATH (deps/site, from verify-gpu.sh), the
        checkout as the source tree, scratch space outside --out (the Python rows' weights go there), and what the
        preflight and the binaries need (CPATH, a prebuilt's LD_LIBRARY_PATH)."""
        return {
            **os.environ,
            "STEPWISE_PYTHON": self.python,
            "STEPWISE_SOURCE_DIR": str(ROOT),
            "STEPWISE_SCRATCH_DIR": str(self.work / "scratch"),
            "TMPDIR": str(self.work / "tmp"),
            **({"STEPWISE_BIN": str(self.binaries["ablate"])} if "ablate" in self.binaries else {}),
            **self.extra_env,
            **(extra or {}),
        }

    def add(self, line: Line) -> None:
        line.reason = str(line.reason)[:600]
        line.figure = str(line.figure)
        self.lines.append(line)
        mark = {"PASS": "ok  ", "FAIL": "FAIL", "SKIP": "skip"}[line.status]
        say(f"[verify] {mark} {line.path}: {line.figure or line.reason}")

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


def skip_reason(v: Verifier, step: Task) -> str | None:
    if step.gpu and not (v.gpu or v.rehearsal):
        return v.no_gpu_reason
    if step.built and v.build_tried and not v.built:
        return "the binaries are missing: the build failed"
    return None


def step_limit(v: Verifier, i: int, runnable: list[Task]) -> float:
    """Step i's time: what is left before the deadline less the budgets of the runnable steps after it (and of the
    passes after this one), so a step that finishes early leaves its time to the next and one that hangs takes none
    of theirs; but never less than its own budget while the deadline allows it, so a slow start is paid for by the
    last steps, not by the first."""
    step = v.table[i]
    promised = sum(v.budget(s) for s in runnable if v.table.index(s) > i) + sum(u.promise() for u in v.later)
    # The floor is the step's own budget even where it promised nothing (an instant build): it still runs.
    limit = min(v.left(), max(step.budget * v.scale, v.left() - promised))
    if not step.kept:  # never into the time of a kept step after it
        kept = sum(v.budget(s) for s in runnable if v.table.index(s) > i and s.kept)
        limit = min(limit, v.left() - kept - sum(u.promise(kept_only=True) for u in v.later))
    return min(limit, v.step_budgets[step.name]) if step.name in v.step_budgets else limit


def run_step(v: Verifier, i: int, runnable: list[Task]) -> None:
    step = v.table[i]
    reason = skip_reason(v, step)
    if reason:
        v.add(Line(step.name, "SKIP", "", reason, step.name))
        return
    limit = step_limit(v, i, runnable)
    if limit < 1:
        held = [s.name for s in runnable if v.table.index(s) > i and s.kept] + [
            f"pass {u.pass_no}'s {s.name}" for u in v.later for s in u.table if s.kept and skip_reason(u, s) is None
        ]
        why = f"out of time: {v.left():.0f} s left before the deadline"
        if not step.kept and held and v.left() >= 1:
            why += f", held for the kept steps after it ({', '.join(held)})"
        v.add(Line(step.name, "SKIP", "", why, step.name, "time"))
        return
    v.step_limit = limit
    began = time.monotonic()
    directory = v.work / "results" / step.name
    try:
        ran = []
        for cmd in step.commands(v):
            left = limit - (time.monotonic() - began)
            ran.append(v.run_cmd(step.name, cmd, left) if left > 1 else Ran([str(a) for a in cmd.argv], None, 0.0))
        lines = list(step.judge(v, Outcome(ran, time.monotonic() - began, limit, directory)))
    except Exception as e:  # one step's surprise is its own FAIL line, never the end of the run
        lines = [Line(step.name, "FAIL", "", f"{type(e).__name__}: {e}", step.name, "verify")]
    for n, line in enumerate(lines):
        line.step = line.step or step.name
        if n == 0:
            given = min(v.budget(step), v.step_budgets.get(step.name, float("inf")))
            line.seconds, line.budget_s = round(time.monotonic() - began, 1), round(given, 1)
            line.limit_s = round(limit, 1)
        v.add(line)


def run_steps(v: Verifier) -> None:
    for i, step in enumerate(v.table):
        # The steps that will not run (no GPU, no binaries) claim no time; the warm-up told the GPU before step 0.
        runnable = [s for s in v.table if skip_reason(v, s) is None]
        run_step(v, i, runnable)
        v.on_step(v)
        # After the files: a reader of this line (a test, a person watching) knows the step is on disk.
        say(f"[verify] pass {v.pass_no}: {step.name} recorded in verify.md")
