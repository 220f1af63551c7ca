"""scripts/verify-gpu.sh and scripts/verify_gpu.py: on a CPU every GPU step is a SKIP naming why, on a GPU every GPU
step runs; --out receives exactly three files; a step's surprise (an exception, an unparsable JUnit, a time-out, a
missing file) is that step's FAIL line and the run goes on; the archive is bounded and holds no weights; the
preflight names each gap; bad arguments exit 2."""

import importlib.util
import json
import os
import pathlib
import signal
import subprocess
import sys
import tarfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERIFY = ROOT / "scripts" / "verify-gpu.sh"
GPU_STEPS = (
    "gpu_ctest",
    "all_flags",
    "raschka",
    "karpathy_trace",
    "host_sync",
    "micro",
    "ddp_nccl",
    "fp8_sweep",
    "memory_peak",
    "memory_max_batch",
    "gpu_results",
    "ctest",
)


def verify(out, *args, timeout=900):
    return subprocess.run(
        [str(VERIFY), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={k: v for k, v in os.environ.items() if k != "STEPWISE_TEST_DEVICE"},
    )


@pytest.fixture
def vg(monkeypatch):
    """scripts/verify_gpu.py as a module, for the tests that drive its parts directly."""
    spec = importlib.util.spec_from_file_location("verify_gpu", ROOT / "scripts" / "verify_gpu.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_gpu"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("verify_gpu", None)


def test_every_gpu_step_is_skipped_on_a_cpu_and_runs_on_a_gpu(tmp_path):
    # A GPU machine gets a shorter deadline here: the point is which steps run, not their figures.
    on_gpu = (
        subprocess.run(
            [os.environ.get("STEPWISE_PYTHON", sys.executable), "-c", "import torch; print(torch.cuda.is_available())"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        == "True"
    )
    run = verify(tmp_path, *(["--budget-scale", "0.4"] if on_gpu else []))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    report = json.loads((tmp_path / "verify.json").read_text())
    lines = {l["step"] or l["path"]: l for l in report["lines"]}
    assert lines["build"]["status"] == "PASS"
    assert lines["libraries"]["status"] == "PASS", lines["libraries"]
    assert "cudart" in lines["libraries"]["figure"]
    assert lines["report"]["status"] == "PASS"
    md = (tmp_path / "verify.md").read_text()
    assert "| path | status | figure |" in md
    with tarfile.open(tmp_path / "verify-artifacts.tar.gz") as tar:
        names = tar.getnames()
    assert any(n.endswith("logs/build.log") for n in names)
    assert any(n.endswith("report/report.md") for n in names)
    if on_gpu:
        assert not report["device"].startswith("no GPU"), report["device"]
        for step in GPU_STEPS:
            steps = [l for l in report["lines"] if l["step"] == step]
            assert steps and not any(l["reason"].startswith("no GPU") for l in steps), steps
    else:
        assert run.returncode == 0, run.stdout + run.stderr
        assert report["device"].startswith("no GPU")
        for step in GPU_STEPS:
            assert lines[step]["status"] == "SKIP" and lines[step]["reason"].startswith("no GPU"), lines[step]
        assert report["counts"]["FAIL"] == 0


def test_a_step_over_its_time_fails_and_the_deadline_holds(tmp_path):
    began = time.monotonic()
    run = verify(tmp_path, "--step-budget", "libraries=1.5")  # the tiny CPU run needs more than 1.5 s with torch
    elapsed = time.monotonic() - began
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((tmp_path / "verify.json").read_text())
    (libraries,) = [l for l in report["lines"] if l["step"] == "libraries"]
    assert libraries["status"] == "FAIL" and libraries["kind"] == "time", libraries
    assert "over its time" in libraries["reason"] or "stopped" in libraries["reason"], libraries
    assert report["counts"]["FAIL"] == 1, report["lines"]
    assert elapsed < 120

    # The whole deadline: a 3 s call still ends with its three files, everything after the deadline skipped.
    out = tmp_path / "short"
    began = time.monotonic()
    run = verify(out, "--budget-scale", str(3 / 525))
    assert time.monotonic() - began < 60, run.stdout
    assert sorted(p.name for p in out.iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    report = json.loads((out / "verify.json").read_text())
    assert any(l["status"] == "FAIL" and l["kind"] == "time" for l in report["lines"]) or any(
        "out of time" in l["reason"] for l in report["lines"]
    ), report["lines"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--step-budget", "nosuchstep=5"], "STEP one of preflight, build"),
        (["--step-budget", "build=-1"], "SECONDS > 0"),
        (["--budget-scale", "0"], "--budget-scale must be a positive number"),
    ],
)
def test_bad_arguments_exit_2_naming_the_valid_choices(tmp_path, args, message):
    run = verify(tmp_path / "out", *args, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_out_directory_holding_other_files_is_refused(tmp_path):
    (tmp_path / "keep.txt").write_text("a user's file")
    run = verify(tmp_path, timeout=120)
    assert run.returncode == 2 and "holds other files (keep.txt)" in run.stderr, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_each_surprise_is_its_own_fail_line_and_the_three_files_are_written(vg, tmp_path, monkeypatch):
    """Judges that meet a TimeoutExpired, an unparsable JUnit and a missing file, and a command that cannot start:
    each step fails on its own line with the exception's type and message, and the steps after them still run."""

    def junit_garbage(v, o):
        (v.work / "junit" / "x.xml").write_text("<testsuite><testcase name='a'")  # a JUnit cut short
        return list(vg.case_lines(vg.junit_cases(v.work / "junit" / "x.xml"), "x", "ctest"))

    def timeout(v, o):
        raise subprocess.TimeoutExpired(["nvidia-smi"], 10)

    def missing(v, o):
        return [vg.Line("m", "PASS", (v.work / "results" / "nothing.json").read_text())]

    def fine(v, o):
        return [vg.Line("last step", "PASS", "ran after the others failed")]

    true = lambda v: [vg.Cmd(["true"])]  # noqa: E731
    monkeypatch.setattr(
        vg,
        "STEPS",
        [
            vg.Step("junit", 1, true, junit_garbage, gpu=False, built=False),
            vg.Step("timeout", 1, true, timeout, gpu=False, built=False),
            vg.Step("missing", 1, true, missing, gpu=False, built=False),
            vg.Step(
                "no_binary",
                1,
                lambda v: [vg.Cmd([tmp_path / "no-such-binary"])],
                vg.judge_micro,
                gpu=False,
                built=False,
            ),
            vg.Step("last", 1, true, fine, gpu=False, built=False),
        ],
    )
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(vg.tempfile, "tempdir", str(scratch))  # where verify's work directory goes
    assert vg.main(["--out", str(out)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    lines = {l["step"]: l for l in json.loads((out / "verify.json").read_text())["lines"]}
    assert lines["junit"]["status"] == "FAIL" and lines["junit"]["reason"].startswith("ParseError: ")
    assert lines["timeout"]["status"] == "FAIL" and lines["timeout"]["reason"].startswith("TimeoutExpired: ")
    assert lines["missing"]["status"] == "FAIL" and lines["missing"]["reason"].startswith("FileNotFoundError: ")
    assert lines["no_binary"]["status"] == "FAIL" and "could not start" in lines["no_binary"]["reason"]
    assert lines["last"]["status"] == "PASS"
    md = (out / "verify.md").read_text()
    assert "## When a line fails" in md and vg.REMEDIES["verify"] in md and vg.REMEDIES["micro"] in md
    assert not list(scratch.iterdir()), "the work directory outside --out is removed at the end"


def test_the_archive_is_bounded_by_construction_and_holds_no_weights(vg, tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    for sub in ("logs", "results/all_flags/python", "report"):
        (work / sub).mkdir(parents=True)
    out.mkdir()
    (work / "results/all_flags/python/weights.safetensors").write_bytes(b"\0" * 1000)
    (work / "results/all_flags/python/batches.bin").write_bytes(b"\0" * 1000)
    (work / "results/big.json").write_bytes(os.urandom(5 * 2**20))  # over the per-file limit
    for i in range(20):  # 20 MiB that gzip cannot shrink: more than the archive may hold
        (work / "report" / f"plot{i:02}.png").write_bytes(os.urandom(2**20))
    (work / "logs/build.log").write_text("built\n")
    v = vg.Verifier(out=out, work=work, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 60, step_budgets={})
    vg.write_archive(v)
    size = (out / "verify-artifacts.tar.gz").stat().st_size
    assert size < 16 * 2**20
    with tarfile.open(out / "verify-artifacts.tar.gz") as tar:
        names = tar.getnames()
    assert "verify-artifacts/logs/build.log" in names
    assert not any(n.endswith((".safetensors", ".bin")) for n in names)
    left_out = " ".join(v.archive["left_out"])
    assert "weights.safetensors" in left_out and "batches.bin" in left_out and "weights or token data" in left_out
    assert "big.json (5.0 MiB, over 4 MiB)" in left_out
    assert "the archive is full" in left_out and v.archive["files"] >= 15

    # Past the deadline nothing more is compressed: the archive is written at once, and says what it left out.
    v.deadline = time.monotonic() - 1
    began = time.monotonic()
    vg.write_archive(v)
    assert time.monotonic() - began < 2 and v.archive["files"] == 0
    assert "out of time" in " ".join(v.archive["left_out"])


def test_the_preflight_puts_bundled_python_headers_on_cpath_or_says_what_to_carry(vg, tmp_path, monkeypatch):
    v = vg.Verifier(
        out=tmp_path, work=tmp_path, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 60, step_budgets={}
    )
    info = {"python_h": None, "include": "/nonexistent/include/python3.12", "version": "3.12"}
    monkeypatch.setenv("STEPWISE_DEPS", str(tmp_path / "deps"))
    line = vg.python_h_line(v, info)
    assert line.status == "FAIL" and line.kind == "python_h" and "CPATH" not in v.extra_env
    headers = tmp_path / "deps" / "python3.12" / "include" / "python3.12"
    headers.mkdir(parents=True)
    (headers / "Python.h").write_text("/* bundled */\n")
    line = vg.python_h_line(v, info)
    assert line.status == "PASS" and v.extra_env["CPATH"].split(os.pathsep)[:2] == [str(headers), str(headers.parent)]


def test_the_preflight_names_each_gap(vg, tmp_path, monkeypatch):
    """A toolkit CUDA runtime on LD_LIBRARY_PATH, an Exclusive_Process GPU, a hanging nvidia-smi, an old cmake."""
    toolkit = tmp_path / "cuda" / "lib64"
    toolkit.mkdir(parents=True)
    (toolkit / "libcudart.so.13").write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{tmp_path / 'missing'}:{toolkit}")
    line = vg.ld_library_path_line()
    assert line.status == "FAIL" and str(toolkit / "libcudart.so.13") in line.reason
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "missing"))
    assert vg.ld_library_path_line().status == "PASS"

    smi = vg.Ran(["nvidia-smi"], 0, 0.1, "NVIDIA H100 80GB HBM3, Exclusive_Process\n")
    assert vg.compute_mode_line(smi).status == "FAIL"
    assert vg.compute_mode_line(vg.Ran(["nvidia-smi"], 0, 0.1, "NVIDIA H100 80GB HBM3, Default\n")).status == "PASS"
    assert vg.compute_mode_line(vg.Ran(["nvidia-smi"], None, 10.0)).status == "FAIL"
    assert vg.compute_mode_line(vg.Ran(["nvidia-smi"], 127, 0.0)).status == "SKIP"

    v = vg.Verifier(
        out=tmp_path, work=tmp_path, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 60, step_budgets={}
    )
    probe = vg.Ran(
        ["python"],
        0,
        1.0,
        "PREFLIGHT "
        + json.dumps(
            {
                "python": "/usr/bin/python3",
                "version": "3.12",
                "include": "/usr/include/python3.12",
                "python_h": "/x/Python.h",
                "packages": {
                    "torch": {"version": "2.11.0"},
                    "scipy": {"error": "ModuleNotFoundError: No module named 'scipy'"},
                },
                "torch": "2.11.0",
                "torch_cuda": "13.0",
                "cuda": "NVIDIA H100 80GB HBM3",
            }
        ),
    )
    outcome = vg.Outcome(
        [
            probe,
            vg.Ran(["cmake"], 0, 0.1, "cmake version 3.22.1\n"),
            vg.Ran(["g++"], 0, 0.1, "12.2.0\n"),
            vg.Ran(["nvidia-smi"], 127, 0.0),
        ],
        1.0,
        60,
        tmp_path,
    )
    lines = {l.path: l for l in vg.judge_preflight(v, outcome)}
    assert v.gpu == "NVIDIA H100 80GB HBM3 (torch 2.11.0, CUDA 13.0)"
    scipy = lines["python package scipy (for ./report's gate statistics)"]
    assert scipy.status == "FAIL" and "No module named 'scipy'" in scipy.reason and scipy.kind == "package"
    assert lines["cmake >= 3.25"].status == "FAIL" and lines["g++ >= 11"].status == "PASS"


def test_ctest_lines_come_from_its_junit_or_from_its_log_when_it_was_stopped(vg, tmp_path):
    v = vg.Verifier(
        out=tmp_path, work=tmp_path, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 60, step_budgets={}
    )
    (tmp_path / "junit").mkdir()
    (tmp_path / "junit" / "gpu_ctest.xml").write_text(
        '<testsuite><testcase name="gpu.A.Pass" classname="gpu.A.Pass" status="run"/>'
        '<testcase name="gpu.A.Skip" classname="gpu.A.Skip" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_'
        'MATCHED"/><system-out>x.cpp:9: Skipped\nneeds a CUDA device\n[  SKIPPED ] A.Skip</system-out></testcase>'
        '<testcase name="gpu.A.Fail" classname="gpu.A.Fail" status="fail"><failure message=""/>'
        "<system-out>x.cpp:3: Failure\nExpected equality</system-out></testcase></testsuite>"
    )
    ran = vg.Ran(["ctest"], 8, 3.0, "1/3 Test #1: gpu.A.Pass ....   Passed    0.1 sec\n")
    lines = vg.judge_ctest(v, vg.Outcome([ran], 3.0, 60, tmp_path), "gpu_ctest", "GPU-only C++ tests")
    by = {l.path: l for l in lines}
    assert by["GPU-only C++ tests"].status == "FAIL" and "gpu.A.Fail" in by["GPU-only C++ tests"].reason
    assert by["gpu.A.Pass"].status == "PASS"
    assert by["gpu.A.Skip"].status == "SKIP" and by["gpu.A.Skip"].reason == "needs a CUDA device"
    assert by["gpu.A.Fail"].status == "FAIL" and "Expected equality" in by["gpu.A.Fail"].reason

    # Stopped before its JUnit: the lines come from its progress output, and the stopped test says so.
    (tmp_path / "junit" / "gpu_ctest.xml").unlink()
    ran = vg.Ran(
        ["ctest"],
        None,
        60.0,
        "1/3 Test #1: gpu.A.Pass ....   Passed    0.1 sec\n2/3 Test #2: gpu.A.Slow ....***Timeout  50.0 sec\n",
    )
    lines = vg.judge_ctest(v, vg.Outcome([ran], 60.0, 60, tmp_path), "gpu_ctest", "GPU-only C++ tests")
    by = {l.path: l for l in lines}
    assert by["GPU-only C++ tests"].kind == "time" and "gpu.A.Slow" in by["GPU-only C++ tests"].reason
    assert by["gpu.A.Pass"].status == "PASS" and by["gpu.A.Slow"].reason == "stopped: the step's time ran out"


def test_each_gpu_test_is_one_line_with_its_figure_or_its_assertion(vg, tmp_path):
    v = vg.Verifier(
        out=tmp_path, work=tmp_path, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 60, step_budgets={}
    )
    (tmp_path / "junit").mkdir()
    (tmp_path / "junit" / "gpu_results.xml").write_text(  # pytest's JUnit, as tests/gpu writes it
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="test_gpu_results" name="test_the_flash_rows_run_flash_attention"><properties>'
        '<property name="figure" value="sdpa_backend_used: raschka flash"/></properties></testcase>'
        '<testcase classname="test_gpu_results" name="test_cupti_traces_the_kernels_of_the_cuda_graph"><properties>'
        '<property name="figure" value="kernels/step: compile 150 vs eager 400"/></properties><failure message='
        '"AssertionError: the compile row traced 150 kernels per step against the eager row\'s 400">...</failure>'
        '</testcase><testcase classname="test_gpu_results" name="test_mfu_is_a_fraction_of_the_peak"><skipped '
        'type="pytest.skip" message="no CUDA row with an MFU in STEPWISE_GPU_RESULTS=/r">skip</skipped></testcase>'
        "</testsuite></testsuites>"
    )
    lines = {l.path: l for l in vg.judge_gpu_results(v, vg.Outcome([], 1.0, 10, tmp_path))}
    assert lines["risk: the flash rows run flash attention"].status == "PASS"
    assert lines["risk: the flash rows run flash attention"].figure == "sdpa_backend_used: raschka flash"
    cupti = lines["risk: cupti traces the kernels of the cuda graph"]
    assert cupti.status == "FAIL" and cupti.kind == "gpu_test" and "150 kernels per step" in cupti.reason
    assert cupti.figure == "kernels/step: compile 150 vs eager 400"
    mfu = lines["risk: mfu is a fraction of the peak"]
    assert mfu.status == "SKIP" and mfu.reason == "no CUDA row with an MFU in STEPWISE_GPU_RESULTS=/r"


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
    assert proc.wait(timeout=60) == 1, "".join(seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    report = json.loads((tmp_path / "verify.json").read_text())
    stopped = [l for l in report["lines"] if l["path"] == "verify itself"]
    assert stopped and "SIGTERM" in stopped[0]["reason"], report["lines"]
    assert "SIGTERM" in (tmp_path / "verify.md").read_text()


def test_a_step_gets_its_share_of_what_is_left_so_a_fast_step_leaves_time_to_the_next(vg, tmp_path):
    v = vg.Verifier(
        out=tmp_path, work=tmp_path, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 525, step_budgets={}
    )
    v.gpu = "a GPU"
    steps = vg.STEPS
    total = sum(s.share for s in steps[1:])
    build = vg.step_budget(v, 1, steps)
    assert build == pytest.approx((525 - vg.CLOSING_S) * steps[1].share / total, rel=0.01)
    # The build finished in 20 s instead of ~120: what it left over is shared by the steps after it.
    v.deadline -= 20
    nxt = vg.step_budget(v, 2, steps)
    assert nxt == pytest.approx((505 - vg.CLOSING_S) * steps[2].share / (total - steps[1].share), rel=0.01)
    assert nxt > (525 - vg.CLOSING_S) * steps[2].share / total
    # Never past the deadline, whatever a step's share or a --step-budget says.
    v.deadline = time.monotonic() + 30
    assert vg.step_budget(v, 0, steps) <= 30 - vg.CLOSING_S + 0.1
    v.step_budgets = {"raschka": 1000}
    assert vg.step_budget(v, [s.name for s in steps].index("raschka"), steps) <= 30 - vg.CLOSING_S + 0.1


def test_the_micro_benchmarks_verify_runs_are_one_case_per_family(vg):
    micro = pathlib.Path(os.environ.get("STEPWISE_MICRO") or ROOT / "build" / "bench" / "micro" / "stepwise_micro")
    if not micro.exists():
        pytest.skip(f"{micro} is not built")
    listed = subprocess.run(
        [str(micro), "--presets=gpt2-124m", "--benchmark_list_tests", f"--benchmark_filter={vg.micro_filter(vg.GPU)}"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.split()
    families = {name.split("/")[0] for name in listed}
    assert families == {"attention", "layernorm", "gelu", "adamw", "matmul", "head", "copy", "mask"}, listed
    assert 20 <= len(listed) <= 30, listed  # of 111: every kernel and baseline once, at T=1024
    assert all(n.endswith(("T:1024", "/step", "bytes:16777216")) for n in listed), listed


# --- the memory flags' lines: peak with and without, largest batch with and without ----------------------------------


def memory_doc(flags: list[str], peak_gib: float, tok: float, chosen: int | None = None, status: str = "ok") -> dict:
    """The fields of a result the memory steps read."""
    gib = 2**30
    return {
        "tool": "stepwise",
        "name": "single/" + ("+".join(flags) or "baseline"),
        "status": status,
        "reason": None if status == "ok" else "out of memory",
        "suite": {"name": "single", "index": 1 if flags else 0},
        "config": {"flags_requested": flags},
        "summary": {
            "tokens_per_s": tok,
            "memory": {
                "peak_allocated_bytes": int(peak_gib * gib),
                "activation_bytes": int((peak_gib - 2) * gib),
                "estimated_activation_bytes": (peak_gib - 1.8) * gib,
            },
        }
        if status == "ok"
        else None,
        "max_batch_probe": None
        if chosen is None
        else {
            "base": 8,
            "limit": 128,
            "chosen": chosen,
            "tried": [],
            "stopped": "--max-batch-time (30 s) reached after batch 64" if chosen == 64 else None,
            "estimate": {"largest_batch": 2 * chosen + 1},
        },
    }


def write_docs(directory: pathlib.Path, *docs: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for d in docs:
        (directory / (d["name"].split("/")[1] + ".json")).write_text(json.dumps(d))


def memory_outcome(vg, tmp_path, step: str, over_time: bool = False):
    v = vg.Verifier(
        out=tmp_path, work=tmp_path, target=vg.GPU, rehearsal=False, deadline=time.monotonic() + 60, step_budgets={}
    )
    (tmp_path / "logs").mkdir(exist_ok=True)
    (tmp_path / "logs" / f"{step}.log").write_text("$ ablate\nrow finished\n")
    ran = [vg.Ran(["ablate"], None if over_time else 0, 1.0)]
    return v, vg.Outcome(ran, 1.0, 40.0, tmp_path / "results" / step)


def test_the_peak_lines_say_what_each_flag_frees_and_fail_when_it_frees_nothing(vg, tmp_path):
    v, o = memory_outcome(vg, tmp_path, "memory_peak")
    write_docs(o.directory / "chunked_ce", memory_doc([], 30.0, 100_000), memory_doc(["chunked_ce"], 24.0, 95_000))
    write_docs(o.directory / "checkpoint", memory_doc([], 30.0, 100_000), memory_doc(["checkpoint"], 30.5, 80_000))
    chunked, checkpoint = vg.judge_memory_peak(v, o)
    assert chunked.path == "chunked_ce at gpt2-124m: peak memory with and without"
    assert chunked.status == "PASS", chunked
    assert chunked.figure == (
        "peak allocated 30.00 -> 24.00 GiB (x0.80); activations 28.00 -> 22.00 GiB (estimate 28.20 -> 22.20); "
        "100,000 tok/s -> 95,000 tok/s (x0.95)"
    )
    assert checkpoint.status == "FAIL" and checkpoint.reason == "checkpoint did not lower the activation memory"


def test_the_peak_lines_name_the_row_that_did_not_run(vg, tmp_path):
    v, o = memory_outcome(vg, tmp_path, "memory_peak", over_time=True)
    write_docs(o.directory / "chunked_ce", memory_doc([], 30.0, 100_000))
    write_docs(o.directory / "checkpoint", memory_doc([], 30.0, 1e5), memory_doc(["checkpoint"], 0, 0, status="failed"))
    chunked, checkpoint = vg.judge_memory_peak(v, o)
    assert chunked.status == "FAIL" and chunked.kind == "time"
    assert chunked.reason.startswith("over its time of 40 s; no result of --enable=chunked_ce: row finished")
    assert checkpoint.status == "FAIL" and "single/checkpoint failed: out of memory" in checkpoint.reason
    # Only the flag's row: it is not taken for the baseline.
    (o.directory / "chunked_ce" / "baseline.json").unlink()
    write_docs(o.directory / "chunked_ce", memory_doc(["chunked_ce"], 24.0, 95_000))
    chunked, _ = vg.judge_memory_peak(v, o)
    assert chunked.status == "FAIL" and "no result of --enable=(none)" in chunked.reason, chunked


def test_the_largest_batch_lines_set_each_flag_against_max_batch_alone(vg, tmp_path):
    v, o = memory_outcome(vg, tmp_path, "memory_max_batch")
    write_docs(o.directory / "max_batch", memory_doc(["max_batch"], 70.0, 110_000, chosen=16))
    write_docs(o.directory / "chunked_ce", memory_doc(["max_batch", "chunked_ce"], 60.0, 104_000, chosen=8))
    write_docs(o.directory / "checkpoint", memory_doc(["max_batch", "checkpoint"], 60.0, 99_000, chosen=64))
    chunked, checkpoint = vg.judge_memory_max_batch(v, o)
    assert chunked.path == "chunked_ce at gpt2-124m: largest batch with and without"
    assert chunked.status == "FAIL" and chunked.reason == "chunked_ce lowered the largest batch the probe found"
    assert checkpoint.status == "PASS", checkpoint
    assert checkpoint.figure == (
        "largest batch 16 -> 64 (estimate 33 -> 129, limit 128); 110,000 tok/s -> 99,000 tok/s (x0.90) at it; "
        "probe stopped (checkpoint: --max-batch-time (30 s) reached after batch 64)"
    )
    # max_batch alone did not run: neither line can say anything, and both say why.
    for f in (o.directory / "max_batch").iterdir():
        f.unlink()
    lines = list(vg.judge_memory_max_batch(v, o))
    assert [l.status for l in lines] == ["FAIL", "FAIL"]
    assert all("no result of --enable=max_batch:" in l.reason for l in lines)


def test_the_memory_steps_rehearsed_on_this_cpu_pass_with_their_figures(vg, tmp_path, monkeypatch):
    """The two memory steps alone, as --rehearse-on-cpu runs them (tiny preset, the built ablate), into verify.md."""
    if not vg.ABLATE.exists():
        pytest.skip(f"{vg.ABLATE} is not built")
    monkeypatch.setattr(vg, "STEPS", [s for s in vg.STEPS if s.name.startswith("memory_")])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(vg.tempfile, "tempdir", str(scratch))
    out = tmp_path / "out"
    assert vg.main(["--out", str(out), "--rehearse-on-cpu"]) == 0, (out / "verify.md").read_text()
    lines = json.loads((out / "verify.json").read_text())["lines"]
    assert [l["path"] for l in lines] == [
        "chunked_ce at tiny: peak memory with and without",
        "checkpoint at tiny: peak memory with and without",
        "chunked_ce at tiny: largest batch with and without",
        "checkpoint at tiny: largest batch with and without",
    ]
    assert all(l["status"] == "PASS" for l in lines), lines
    md = (out / "verify.md").read_text()
    assert "| chunked_ce at tiny: peak memory with and without | PASS | peak allocated " in md
    assert "| checkpoint at tiny: largest batch with and without | PASS | largest batch " in md
