"""scripts/verify-gpu.sh and scripts/verify_gpu.py (with its parts in scripts/verify/), as a call: a warm-up, then both
passes within one deadline that fits a lent node's 600 s command; a slow start (a torch import of 20 s more) costs no
step its budget; on a CPU every GPU step is a SKIP naming why; --out/pass<N> receives exactly three files, and
verify.md is rewritten after every step, so a SIGKILL at any moment leaves every finished step's line; a step's
surprise (an exception, an unparsable JUnit, a hang, a missing file) is that step's FAIL line and the pass goes on; a
step never takes the time promised to the steps after it, nor loses its own; the archive is bounded and holds no
weights; --help and bad arguments write nothing. The lines each step writes: tests/scripts/test_verify_gpu_lines.py.

No test here decides by the wall clock: a step made to hang is stopped by construction, and elapsed times are
asserted only as generous hang guards."""

import ast
import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tarfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERIFY = ROOT / "scripts" / "verify-gpu.sh"
BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
ABLATE = BUILD / "ablations" / "ablate"
PYTHON = os.environ.get("STEPWISE_PYTHON") or sys.executable
sys.path.insert(0, str(ROOT / "scripts"))

import verify_gpu  # noqa: E402
from verify import archive, binaries, judges, runner, steps  # noqa: E402
from verify.line import REMEDIES, Line, case_lines, junit_cases  # noqa: E402
from verify.runner import Cmd, Task, Verifier  # noqa: E402
from verify.target import GPU  # noqa: E402

OUTPUTS = ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
GPU_STEPS = {
    1: ("flags", "karpathy_trace", "fp8", "ddp_nccl", "gpu_results"),
    2: ("gpu_gtests", "raschka", "max_batch", "micro", "fp8_sweep", "time_to_target", "speedrun", "gpu_results"),
    3: ("counts", "muon", "gpu_results"),
}


def verify(out, *args, timeout=900, env=None):
    return subprocess.run(
        [str(VERIFY), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or {k: v for k, v in os.environ.items() if k != "STEPWISE_TEST_DEVICE"},
    )


def verifier(tmp_path, target=GPU, **kw) -> Verifier:
    return Verifier(out=tmp_path, work=tmp_path, target=target, rehearsal=False, deadline=time.monotonic() + 60, **kw)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """Where verify's work directory goes, so a test sees it removed."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(verify_gpu.tempfile, "tempdir", str(d))
    return d


def on_a_gpu() -> bool:
    probe = [PYTHON, "-c", "import torch; print(torch.cuda.is_available())"]
    return subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "True"


def test_jobs_come_from_the_cpus_allowed_and_the_memory_never_from_cpu_count(monkeypatch):
    monkeypatch.setattr(binaries.os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.setattr(binaries, "cgroup_cpus", lambda: None)
    monkeypatch.setattr(binaries, "available_memory", lambda: 11 * 2**30)
    assert binaries.jobs()[0] == 5  # 11 GiB at 2 GiB a job
    monkeypatch.setattr(binaries, "available_memory", lambda: 120 * 2**30)
    assert binaries.jobs() == (16, "16 CPUs allowed, 120 GiB available at 2 GiB a job")
    monkeypatch.setattr(binaries, "cgroup_cpus", lambda: 4.0)
    assert binaries.jobs()[0] == 4
    monkeypatch.setattr(binaries, "available_memory", lambda: 2**29)
    assert binaries.jobs()[0] == 1
    sources = [ROOT / "scripts" / "verify_gpu.py", *(ROOT / "scripts" / "verify").glob("*.py")]
    calls = [
        p.name
        for p in sources
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "cpu_count"
    ]
    assert not calls, f"-j from os.cpu_count() in {calls}: in a container it can be the host's count"


@pytest.mark.parametrize("passes", ["1,2", "3"])
def test_every_gpu_step_is_skipped_on_a_cpu_and_runs_on_a_gpu(tmp_path, passes):
    """Both passes in one call, as a lent node runs them, then pass 3, the second call; on a GPU, at the scale that
    once lost the preflight."""
    gpu = on_a_gpu()
    # On a CPU every GPU step is skipped and the budgets only guard against a hang: ten times them, so that a busy
    # machine's slow torch import is not taken for a failure.
    run = verify(tmp_path, "--passes", passes, "--budget-scale", "0.5" if gpu else "10")
    numbers = [int(n) for n in passes.split(",")]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"pass{n}" for n in numbers]
    for pass_no in numbers:
        out = tmp_path / f"pass{pass_no}"
        assert sorted(p.name for p in out.iterdir()) == OUTPUTS
        report = json.loads((out / "verify.json").read_text())
        assert report["pass"] == pass_no and report["finished"]
        lines = {}
        for l in report["lines"]:
            lines.setdefault(l["step"] or l["path"], l)
        assert lines["build"]["status"] == "PASS", lines["build"]
        if pass_no == numbers[0]:  # the call's warm-up
            assert lines["warmup"]["status"] == "PASS" and lines["warmup"]["path"].startswith("scripts/setup.sh")
        if pass_no == 1:
            assert lines["libraries"]["status"] == "PASS" and "cudart" in lines["libraries"]["figure"]
        md = (out / "verify.md").read_text()
        assert f"# verify-gpu pass {pass_no}: " in md and "| path | status | figure |" in md
        with tarfile.open(out / "verify-artifacts.tar.gz") as tar:
            assert any(n.endswith("logs/preflight.log") for n in tar.getnames())
        if gpu:
            assert not report["device"].startswith("no GPU"), report["device"]
            for step in GPU_STEPS[pass_no]:
                found = [l for l in report["lines"] if l["step"] == step]
                assert found and not any(l["reason"].startswith(("no GPU", "out of time")) for l in found), found
        else:
            assert report["device"].startswith("no GPU")
            for step in GPU_STEPS[pass_no]:
                assert lines[step]["status"] == "SKIP" and lines[step]["reason"].startswith("no GPU"), lines[step]
            assert report["counts"]["FAIL"] == 0
    assert gpu or run.returncode == 0, run.stdout + run.stderr
    table = run.stdout[run.stdout.index("the budgets of this call") :]
    assert f"| {numbers[-1]} | closing (archive, verify.md) |" in table, "the budget table is printed before the passes"


def no_warm_up(v):
    """The warm-up of a machine with no GPU and no prebuilt, at once: for tests of the schedule alone."""
    return {"python": PYTHON, "probe": None, "info": None, "fits": False, "said": "", "seconds": 0.0}


def fake_table(*entries: tuple[str, float, list]) -> list[Task]:
    """Steps that run the given commands and pass when the last one exits 0."""

    def judge(v, o):
        ok = bool(o.ran) and o.last().code == 0
        reason = "" if ok else f"over its time of {o.budget:.0f} s" if o.over_time else "failed"
        kind = "time" if o.over_time else "verify"
        return [Line(o.directory.name, "PASS" if ok else "FAIL", "", reason, kind=kind)]

    return [
        Task(name, budget, lambda v, argv=argv: [Cmd(argv)], judge, gpu=False, built=False)
        for name, budget, argv in entries
    ]


def test_a_hanging_step_is_stopped_at_its_limit_and_takes_nothing_promised_to_the_steps_after_it(
    tmp_path, scratch, monkeypatch
):
    table = fake_table(
        ("first", 5, ["true"]),
        ("hangs", 3, ["sleep", "600"]),
        ("after", 30, ["true"]),
        ("last", 30, ["true"]),
    )
    monkeypatch.setitem(verify_gpu.TABLES, 1, table)
    monkeypatch.setattr(verify_gpu, "warm_up", no_warm_up)
    monkeypatch.setenv("STEPWISE_VERIFY_STARTED", str(time.time()))
    began = time.monotonic()
    deadline = str(3 + 5 + 3 + 30 + 30 + verify_gpu.CLOSING_S)
    assert verify_gpu.main(["--out", str(tmp_path / "out"), "--passes", "1", "--deadline-s", deadline]) == 1
    assert time.monotonic() - began < 300, "hang guard"
    lines = {l["step"]: l for l in json.loads((tmp_path / "out" / "pass1" / "verify.json").read_text())["lines"]}
    assert lines["hangs"]["status"] == "FAIL" and lines["hangs"]["kind"] == "time", lines["hangs"]
    # What the steps after it were promised, they got: each ran and passed.
    assert [lines[s]["status"] for s in ("first", "after", "last")] == ["PASS", "PASS", "PASS"]
    assert lines["hangs"]["budget_s"] == 3 and "over its time" in lines["hangs"]["reason"]


def test_steps_after_the_deadline_are_recorded_as_skipped_with_the_reason(tmp_path, scratch, monkeypatch):
    table = fake_table(("hangs", 1, ["sleep", "600"]), ("next", 1, ["true"]), ("last", 1, ["true"]))
    monkeypatch.setitem(verify_gpu.TABLES, 1, table)
    monkeypatch.setattr(verify_gpu, "warm_up", no_warm_up)
    # The call began long ago (its warm-up took the whole deadline): nothing is left for any step.
    monkeypatch.setenv("STEPWISE_VERIFY_STARTED", str(time.time() - 60))
    began = time.monotonic()
    deadline = str(verify_gpu.CLOSING_S + 4)
    assert verify_gpu.main(["--out", str(tmp_path / "out"), "--passes", "1", "--deadline-s", deadline]) == 0
    assert time.monotonic() - began < 120, "hang guard"
    assert sorted(p.name for p in (tmp_path / "out" / "pass1").iterdir()) == OUTPUTS
    lines = [l for l in json.loads((tmp_path / "out" / "pass1" / "verify.json").read_text())["lines"] if l["step"]]
    lines = [l for l in lines if l["step"] != "warmup"]
    assert [(l["step"], l["status"]) for l in lines] == [("hangs", "SKIP"), ("next", "SKIP"), ("last", "SKIP")]
    assert all(l["reason"].startswith("out of time: ") and l["kind"] == "time" for l in lines), lines


def test_a_step_may_use_what_earlier_steps_left_never_what_later_steps_were_promised(tmp_path):
    v = verifier(tmp_path, table=fake_table(("a", 10, ["true"]), ("b", 20, ["true"]), ("c", 30, ["true"])))
    v.deadline = time.monotonic() + 100
    assert runner.step_limit(v, 0, v.table) == pytest.approx(100 - 50, abs=1)  # 40 left over from the start
    assert runner.step_limit(v, 1, v.table) == pytest.approx(100 - 30, abs=1)
    assert runner.step_limit(v, 2, v.table) == pytest.approx(100, abs=1)
    # A step that will not run (no GPU) promises nothing; --step-budget caps a step; --budget-scale scales promises.
    assert runner.step_limit(v, 0, v.table[:2]) == pytest.approx(100 - 20, abs=1)
    v.step_budgets = {"a": 7}
    assert runner.step_limit(v, 0, v.table) == 7
    v.step_budgets, v.scale = {}, 1.5
    assert runner.step_limit(v, 0, v.table) == pytest.approx(100 - 75, abs=1)
    # A step known to take nothing (the build with the prebuilt) promises nothing; a later pass promises its steps.
    v.scale, v.instant = 1.0, frozenset({"b"})
    assert runner.step_limit(v, 0, v.table) == pytest.approx(100 - 30, abs=1)
    v.deadline = time.monotonic() + 30  # still its own budget: it runs, promising nothing
    assert runner.step_limit(v, 1, v.table) == pytest.approx(20, abs=1)
    v.deadline = time.monotonic() + 100
    v.later = [verifier(tmp_path, table=fake_table(("d", 25, ["true"])))]
    assert runner.step_limit(v, 0, v.table) == pytest.approx(100 - 55, abs=1)


def test_a_slow_start_costs_no_step_its_own_budget(tmp_path):
    """A warm-up that ate the call (a torch import of 20 s more, a cold node): what is left is less than the steps
    were promised, and still each step gets its own budget while the deadline allows, the first ones first; the
    steps at the end lose the time, and none gets more than is left."""
    v = verifier(tmp_path, table=fake_table(("preflight", 10, ["true"]), ("b", 20, ["true"]), ("c", 30, ["true"])))
    v.later = [verifier(tmp_path, table=fake_table(("d", 25, ["true"])))]
    v.deadline = time.monotonic() + 40  # 85 s promised, 40 left
    assert runner.step_limit(v, 0, v.table) == pytest.approx(10, abs=1)
    assert runner.step_limit(v, 1, v.table) == pytest.approx(20, abs=1)
    v.deadline = time.monotonic() + 5
    assert runner.step_limit(v, 2, v.table) == pytest.approx(5, abs=1), "never more than is left"


# Imported by every Python process of the call (PYTHONPATH): the first import of torch takes 20 s more, as on a cold
# node (a cold page cache, a cold CUDA initialisation), whichever process comes first.
SLOW_START = """
import os, sys, time

class _SlowStart:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and "SLOW_START_MARK" in os.environ:
            try:
                os.close(os.open(os.environ["SLOW_START_MARK"], os.O_CREAT | os.O_EXCL))
                time.sleep(20)
            except FileExistsError:
                pass
        return None

sys.meta_path.insert(0, _SlowStart())
"""


@pytest.mark.parametrize("scale", ["1", "0.5"])  # 0.5: the scale the GPU test uses, where the preflight once lost
def test_a_slow_start_still_passes_the_preflight_and_every_later_step_runs(tmp_path, scale):
    """Both passes rehearsed in one call with a torch import 20 s slower than usual: the warm-up pays it before the
    passes' clock, the preflight of each pass passes, and every later step runs with at least its own budget. The
    binaries are stand-ins that do nothing (the steps' findings are other tests'): the schedule is what is tested."""
    hooks, fakes = tmp_path / "hooks", tmp_path / "bin"
    hooks.mkdir()
    fakes.mkdir()
    (hooks / "sitecustomize.py").write_text(SLOW_START)
    for name in ("ablate", "stepwise_micro", *binaries.GTESTS):
        (fakes / name).write_text("#!/bin/sh\nexit 0\n")
        (fakes / name).chmod(0o755)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("STEPWISE_TEST_DEVICE", "PYTHONPATH")},
        "PYTHONPATH": str(hooks),
        "SLOW_START_MARK": str(tmp_path / "torch-imported"),
        "STEPWISE_BIN": str(fakes / "ablate"),
        "STEPWISE_MICRO": str(fakes / "stepwise_micro"),
        "STEPWISE_GTESTS_DIR": str(fakes),
        "TMPDIR": str(tmp_path),
    }
    out = tmp_path / "out"
    args = ["--passes", "1,2", "--rehearse-on-cpu", "--budget-scale", scale]
    run = subprocess.run([str(VERIFY), "--out", str(out), *args], capture_output=True, text=True, timeout=900, env=env)
    assert (tmp_path / "torch-imported").exists(), run.stdout[-3000:] + run.stderr[-3000:]
    warm = {l["path"]: l for l in json.loads((out / "pass1" / "verify.json").read_text())["lines"]}
    torch = warm["torch import, timed (the first: cold)"]
    assert torch["status"] == "PASS" and float(re.search(r" in ([0-9.]+) s", torch["figure"]).group(1)) >= 20, torch
    for pass_no in (1, 2):
        report = json.loads((out / f"pass{pass_no}" / "verify.json").read_text())
        assert report["finished"], report["error"]
        first = {}
        for l in report["lines"]:
            first.setdefault(l["step"], l)
        assert first["preflight"]["status"] == "PASS", first["preflight"]
        for step in steps.TABLES[pass_no]:
            line = first[step.name]
            assert not line["reason"].startswith(("out of time", "no GPU")), line
            assert line["limit_s"] >= line["budget_s"], f"pass {pass_no}'s {step.name} lost its own budget: {line}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--step-budget", "nosuchstep=5"], "STEP one of pass 1 and 2's preflight, build"),
        (["--passes", "2", "--step-budget", "flags=5"], "STEP one of pass 2's preflight, build, gpu_gtests"),
        (["--step-budget", "build=-1"], "SECONDS > 0"),
        (["--budget-scale", "0"], "--budget-scale must be a positive number"),
        (["--deadline-s", "0"], "--deadline-s must be a positive number"),
        (["--passes", "4"], "--passes '4': want one or more of 1, 2, 3"),
        (["--passes", "2,1"], "in order"),
        (["--as-node"], "--as-node rehearses the node's python on this machine: give it with --rehearse-on-cpu"),
        (["--help"], ""),
    ],
)
def test_help_and_bad_arguments_write_nothing_and_exit_2_naming_the_valid_choices(tmp_path, args, message):
    """Without --out the wrapper names the default (reports/gpu/, where reports are committed): nothing lands there
    either, nor in --out; --help prints and exits 0."""
    gpu_reports = ROOT / "reports" / "gpu"
    before = sorted(gpu_reports.rglob("*")) if gpu_reports.exists() else None
    for out in ([], ["--out", str(tmp_path / "out")]):
        run = subprocess.run([str(VERIFY), *out, *args], capture_output=True, text=True, timeout=120)
        assert run.returncode == (0 if args == ["--help"] else 2), run.stdout + run.stderr
        assert message in run.stderr and ("--passes" in run.stdout if args == ["--help"] else True)
        assert not (tmp_path / "out").exists()
    assert (sorted(gpu_reports.rglob("*")) if gpu_reports.exists() else None) == before


def test_an_out_directory_holding_other_files_is_refused(tmp_path):
    (tmp_path / "keep.txt").write_text("a user's file")
    run = verify(tmp_path, timeout=120)
    assert run.returncode == 2 and "holds other files (keep.txt)" in run.stderr, run.stderr
    (tmp_path / "keep.txt").unlink()
    (tmp_path / "pass1").mkdir()
    (tmp_path / "pass1" / "notes.md").write_text("a user's notes")
    run = verify(tmp_path, timeout=120)
    assert run.returncode == 2 and "holds other files (pass1/notes.md)" in run.stderr, run.stderr
    (tmp_path / "pass1" / "notes.md").unlink()
    (tmp_path / "pass1").rmdir()
    (tmp_path / "keep.txt").write_text("a user's file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_each_surprise_is_its_own_fail_line_and_the_three_files_are_written(tmp_path, scratch, monkeypatch):
    """Judges that meet a TimeoutExpired, an unparsable JUnit and a missing file, and a command that cannot start:
    each step fails on its own line with the exception's type and message, and the steps after them still run."""

    def junit_garbage(v, o):
        (v.work / "junit" / "x.xml").write_text("<testsuite><testcase name='a'")  # a JUnit cut short
        return list(case_lines(junit_cases(v.work / "junit" / "x.xml"), "x", "gtest"))

    def timeout(v, o):
        raise subprocess.TimeoutExpired(["nvidia-smi"], 10)

    def missing(v, o):
        return [Line("m", "PASS", (v.work / "results" / "nothing.json").read_text())]

    def fine(v, o):
        return [Line("last step", "PASS", "ran after the others failed")]

    true = lambda v: [Cmd(["true"])]  # noqa: E731
    table = [
        Task("junit", 1, true, junit_garbage, gpu=False, built=False),
        Task("timeout", 1, true, timeout, gpu=False, built=False),
        Task("missing", 1, true, missing, gpu=False, built=False),
        Task(
            "no_binary", 1, lambda v: [Cmd([tmp_path / "no-such-binary"])], judges.judge_micro, gpu=False, built=False
        ),
        Task("last", 1, true, fine, gpu=False, built=False),
    ]
    monkeypatch.setitem(verify_gpu.TABLES, 1, table)
    monkeypatch.setattr(verify_gpu, "warm_up", no_warm_up)
    out = tmp_path / "out" / "pass1"
    assert verify_gpu.main(["--out", str(out.parent), "--passes", "1"]) == 1
    assert sorted(p.name for p in out.iterdir()) == OUTPUTS
    lines = {l["step"]: l for l in json.loads((out / "verify.json").read_text())["lines"]}
    assert lines["junit"]["status"] == "FAIL" and lines["junit"]["reason"].startswith("ParseError: ")
    assert lines["timeout"]["status"] == "FAIL" and lines["timeout"]["reason"].startswith("TimeoutExpired: ")
    assert lines["missing"]["status"] == "FAIL" and lines["missing"]["reason"].startswith("FileNotFoundError: ")
    assert lines["no_binary"]["status"] == "FAIL" and "could not start" in lines["no_binary"]["reason"]
    assert lines["last"]["status"] == "PASS"
    md = (out / "verify.md").read_text()
    assert "## When a line fails" in md and REMEDIES["verify"] in md and REMEDIES["micro"] in md
    assert not list(scratch.iterdir()), "the work directory outside --out is removed at the end"


def test_the_archive_is_bounded_by_construction_and_holds_no_weights(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    for sub in ("logs", "results/flags/python", "report"):
        (work / sub).mkdir(parents=True)
    out.mkdir()
    (work / "results/flags/python/weights.safetensors").write_bytes(b"\0" * 1000)
    (work / "results/flags/python/batches.bin").write_bytes(b"\0" * 1000)
    (work / "results/big.json").write_bytes(os.urandom(5 * 2**20))  # over the per-file limit
    for i in range(20):  # 20 MiB that gzip cannot shrink: more than the archive may hold
        (work / "report" / f"plot{i:02}.png").write_bytes(os.urandom(2**20))
    (work / "logs/build.log").write_text("built\n")
    v = Verifier(out=out, work=work, target=GPU, rehearsal=False, deadline=time.monotonic() + 60)
    archive.write_archive(v, time.monotonic() + 60)
    assert (out / "verify-artifacts.tar.gz").stat().st_size < 16 * 2**20
    with tarfile.open(out / "verify-artifacts.tar.gz") as tar:
        names = tar.getnames()
    assert "verify-artifacts/logs/build.log" in names
    assert not any(n.endswith((".safetensors", ".bin")) for n in names)
    left_out = " ".join(v.archive["left_out"])
    assert "weights.safetensors" in left_out and "batches.bin" in left_out and "weights or token data" in left_out
    assert "big.json (5.0 MiB, over 4 MiB)" in left_out
    assert "the archive is full" in left_out and v.archive["files"] >= 15

    # Past the end nothing more is compressed: the archive is written at once, and says what it left out.
    archive.write_archive(v, time.monotonic() - 1)
    assert v.archive["files"] == 0 and "out of time" in " ".join(v.archive["left_out"])


def test_a_sigterm_to_the_call_stops_it_and_still_leaves_the_three_files(tmp_path):
    """A scheduler's time limit: SIGTERM to scripts/verify-gpu.sh reaches verify, which stops its running step and
    writes its files, naming the signal."""
    proc = subprocess.Popen(
        [str(VERIFY), "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "STEPWISE_TEST_DEVICE"},
    )
    seen = []
    for line in proc.stdout:  # the first line verify prints: it is running
        seen.append(line)
        if line.startswith("[verify]"):
            break
    proc.send_signal(signal.SIGTERM)
    seen += proc.stdout.readlines()
    assert proc.wait(timeout=120) == 1, "".join(seen)
    assert sorted(p.name for p in (tmp_path / "pass1").iterdir()) == OUTPUTS
    report = json.loads((tmp_path / "pass1" / "verify.json").read_text())
    stopped = [l for l in report["lines"] if l["path"] == "verify itself"]
    assert stopped and "SIGTERM" in stopped[0]["reason"], report["lines"]
    assert "SIGTERM" in (tmp_path / "pass1" / "verify.md").read_text()


def descendants(pid: int) -> list[int]:
    """Every process below pid, by /proc's parent links (the steps run in sessions of their own)."""
    children: dict[int, list[int]] = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def test_the_reports_are_rewritten_after_every_step_before_its_line_is_said(monkeypatch):
    """run_steps rewrites verify.md and verify.json (on_step) after each step, and only then says the step is
    recorded: the line a reader waits on means the step is on disk. The SIGKILL test below shows it on the real
    call, at a random moment; this holds it whatever moment that draws."""
    from types import SimpleNamespace

    events = []
    monkeypatch.setattr(runner, "run_step", lambda v, i, runnable: events.append(f"ran {v.table[i].name}"))
    monkeypatch.setattr(runner, "skip_reason", lambda v, s: None)
    monkeypatch.setattr(runner, "say", events.append)
    table = [SimpleNamespace(name="a"), SimpleNamespace(name="b")]
    runner.run_steps(SimpleNamespace(table=table, pass_no=1, on_step=lambda v: events.append("written")))
    assert events == [
        "ran a",
        "written",
        "[verify] pass 1: a recorded in verify.md",
        "ran b",
        "written",
        "[verify] pass 1: b recorded in verify.md",
    ]


def test_a_sigkill_at_a_random_moment_leaves_every_finished_steps_line(tmp_path):
    """The one call (both passes) rehearsed on this CPU, killed with SIGKILL at a random moment: once a step chosen at
    random is recorded (one of pass 1's before its last, so the kill lands before its closing writes anything more,
    or pass 2's first two), and a random fraction of a second later. Nothing can write after that, and the
    verify.json of each pass holds every step that was said to be recorded."""
    if not ABLATE.exists():
        pytest.skip(f"{ABLATE} is not built")
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    target = rng.choice([f"1:{s.name}" for s in steps.PASS1[:-1]] + ["2:preflight", "2:build"])
    out = tmp_path / "out"
    env = {
        **{k: v for k, v in os.environ.items() if k != "STEPWISE_TEST_DEVICE"},
        "STEPWISE_BIN": str(ABLATE),
        "TMPDIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [str(VERIFY), "--passes", "1,2", "--rehearse-on-cpu", "--budget-scale", "4", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        start_new_session=True,
    )
    recorded, said = [], []
    try:
        for line in proc.stdout:  # the event: the chosen step's line is on disk (ctest's timeout is the hang guard)
            said.append(line)
            found = re.match(r"\[verify\] pass (\d): (\S+) recorded in verify.md", line)
            if found:
                recorded.append(f"{found.group(1)}:{found.group(2)}")
                if recorded[-1] == target:
                    break
        time.sleep(rng.uniform(0, 1.5))
    finally:
        below = descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        for pid in below:  # a step in its own session outlives the group's kill
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=60)
    assert target in recorded, f"seed {seed}: {target} never recorded: {''.join(said[-20:])}"
    for pass_no in sorted({r[0] for r in recorded}):
        report = json.loads((out / f"pass{pass_no}" / "verify.json").read_text())
        on_disk = {l["step"] for l in report["lines"]}
        missing = [r for r in recorded if r[0] == pass_no and r[2:] not in on_disk]
        assert not missing, f"seed {seed}, killed after {target}: {missing} said recorded, not in verify.json"
        assert "| path | status | figure |" in (out / f"pass{pass_no}" / "verify.md").read_text()
        if pass_no == "1" and "1:flags" in recorded:  # the steps really ran (not skipped, not failed at once)
            assert (
                "| every flag once at tiny, beside the baseline | PASS |" in (out / "pass1" / "verify.md").read_text()
            )
    assert (out / "pass1" / "verify.json").exists() and not (out / "pass3").exists()


def test_the_memory_flags_rehearsed_on_this_cpu_are_reported_by_the_gpu_tests(tmp_path, scratch, monkeypatch):
    """The flags step and the largest-batch probes as --rehearse-on-cpu runs them (tiny preset, capped in batches),
    then tests/gpu over their results: each memory flag's activations against the baseline, and its largest batch
    against max_batch alone, each a PASS line with its figures."""
    if not ABLATE.exists():
        pytest.skip(f"{ABLATE} is not built")
    monkeypatch.setenv("STEPWISE_BIN", str(ABLATE))
    by_name = {s.name: s for s in steps.PASS1 + steps.PASS2}
    table = [by_name[n] for n in ("build", "flags", "max_batch", "gpu_results")]
    monkeypatch.setitem(verify_gpu.TABLES, 1, table)
    monkeypatch.setattr(verify_gpu, "warm_up", no_warm_up)
    out = tmp_path / "out"
    verify_gpu.main(["--out", str(out), "--passes", "1", "--rehearse-on-cpu", "--budget-scale", "4"])
    lines = {l["path"]: l for l in json.loads((out / "pass1" / "verify.json").read_text())["lines"]}
    for flag in ("checkpoint", "chunked ce"):
        activations = lines[f"risk: a memory flag lowers the activation memory[{flag}]"]
        assert activations["status"] == "PASS" and activations["figure"].startswith("peak allocated "), activations
        batch = lines[f"risk: a memory flag never lowers the largest batch[{flag}]"]
        assert batch["status"] == "PASS" and batch["figure"].startswith("largest batch 16 -> 16 "), batch
    probe = lines["largest-batch probe at tiny, alone and with each memory flag"]
    assert probe["status"] == "PASS" and "alone: 4 -> 16" in probe["figure"], probe
