"""The lines of verify.md, from what each step found: the preflight's packages, GPU, clocks and gaps; a row during
which the GPU throttled; the GPU-only GoogleTests run from their binaries and the gpu tests over a pass's results,
one line per test; the speedrun slot; time to target without its corpus; the micro-benchmarks verify keeps; and the
rule that a probe or rehearsal capped in seconds decides nothing it found under time (issue 31)."""

import json
import os
import pathlib
import subprocess
import sys
import tarfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
ABLATE = BUILD / "ablations" / "ablate"
PYTHON = os.environ.get("STEPWISE_PYTHON") or sys.executable
sys.path.insert(0, str(ROOT / "scripts"))

import verify_gpu  # noqa: E402
from verify import binaries, gpu_tests, judges, preflight, steps  # noqa: E402
from verify.line import junit_cases  # noqa: E402
from verify.runner import Outcome, Ran, Verifier  # noqa: E402
from verify.target import GPU, REHEARSAL  # noqa: E402


def verifier(tmp_path, target=GPU, **kw) -> Verifier:
    return Verifier(out=tmp_path, work=tmp_path, target=target, rehearsal=False, deadline=time.monotonic() + 60, **kw)


def test_the_preflight_puts_bundled_python_headers_on_cpath_or_says_what_to_carry(tmp_path, monkeypatch):
    v = verifier(tmp_path)
    info = {"python_h": None, "include": "/nonexistent/include/python3.12", "version": "3.12"}
    monkeypatch.setenv("STEPWISE_DEPS", str(tmp_path / "deps"))
    line = preflight.python_h_line(v, info)
    assert line.status == "SKIP" and line.kind == "python_h" and "CPATH" not in v.extra_env
    assert "a torch.compile Python row (./run_all.sh) would fail" in line.reason
    headers = tmp_path / "deps" / "python3.12" / "include" / "python3.12"
    headers.mkdir(parents=True)
    (headers / "Python.h").write_text("/* bundled */\n")
    line = preflight.python_h_line(v, info)
    assert line.status == "PASS" and v.extra_env["CPATH"].split(os.pathsep)[:2] == [str(headers), str(headers.parent)]


def preflight_probe(**packages) -> Ran:
    info = {
        "python": "/usr/bin/python3",
        "version": "3.12",
        "include": "/usr/include/python3.12",
        "python_h": "/x/Python.h",
        "packages": {"numpy": {"version": "2.1"}, "torch": {"version": "2.11.0"}, **packages},
        "torch": "2.11.0+cu130",
        "torch_cuda": "13.0",
        "lib_dirs": ["/site/torch/lib"],
        "cuda": "NVIDIA H100 80GB HBM3",
        "gpu": {"capability": "9.0", "memory_gib": 79.2, "sms": 132, "count": 1},
    }
    return Ran(["python"], 0, 1.0, "PREFLIGHT " + json.dumps(info))


def test_the_preflight_names_each_gap(tmp_path, monkeypatch):
    """A toolkit CUDA runtime on LD_LIBRARY_PATH, an Exclusive_Process GPU, a hanging nvidia-smi, a missing package."""
    toolkit = tmp_path / "cuda" / "lib64"
    toolkit.mkdir(parents=True)
    (toolkit / "libcudart.so.13").write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{tmp_path / 'missing'}:{toolkit}")
    line = preflight.ld_library_path_line()
    assert line.status == "FAIL" and str(toolkit / "libcudart.so.13") in line.reason
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "missing"))
    assert preflight.ld_library_path_line().status == "PASS"

    identity = Ran(["nvidia-smi"], 0, 0.1, "NVIDIA H100 80GB HBM3, 570.86.15, Exclusive_Process\n")
    assert preflight.compute_mode_line(identity).status == "FAIL"
    assert (
        preflight.compute_mode_line(Ran(["nvidia-smi"], 0, 0.1, "NVIDIA H100, 570.86.15, Default\n")).status == "PASS"
    )
    assert preflight.compute_mode_line(Ran(["nvidia-smi"], None, 10.0)).status == "FAIL"
    assert preflight.compute_mode_line(Ran(["nvidia-smi"], 127, 0.0)).status == "SKIP"

    v = verifier(tmp_path)
    scipy = {"scipy": {"error": "ModuleNotFoundError: No module named 'scipy'"}}
    state = Ran(["nvidia-smi"], 0, 0.1, "1980, 2619, 120.5, 700.00, 34, 0x0000000000000000\n")
    v.probe = preflight_probe(**scipy)  # the warm-up's, read by every pass's preflight
    lines = {l.path: l for l in preflight.judge_preflight(v, Outcome([identity, state], 1, 60, tmp_path))}
    assert v.gpu == "NVIDIA H100 80GB HBM3 (torch 2.11.0+cu130, CUDA 13.0)"
    assert v.info["lib_dirs"] == ["/site/torch/lib"]
    missing = lines["python package scipy (for ./report's gate statistics)"]
    assert missing.status == "FAIL" and "No module named 'scipy'" in missing.reason and missing.kind == "package"
    gpu = lines["GPU: name, compute capability, memory, driver"]
    assert (
        gpu.status == "PASS"
        and "compute capability 9.0, 79.2 GiB, 132 SMs" in gpu.figure
        and "driver 570.86.15" in gpu.figure
    )
    clocks = lines["GPU state at the start: clocks, power, temperature, throttle reasons"]
    assert clocks.figure == "SM 1980 MHz, memory 2619 MHz, 120.5 W of 700.00 W, 34 C, reasons: none"
    assert list(preflight.PYTHON_PACKAGES)[:6] == [
        "numpy",
        "scipy",
        "matplotlib",
        "pytest",
        "safetensors",
        "jsonschema",
    ]


def test_a_gpu_held_down_before_the_first_row_says_so(tmp_path):
    state = Ran(["nvidia-smi"], 0, 0.1, "1410, 2619, 699.1, 700.00, 87, 0x0000000000000024\n")
    line = preflight.clocks_line(state)
    assert line.status == "PASS" and "reasons: sw_power_cap, sw_thermal_slowdown" in line.figure
    assert "THROTTLED before the first row (GPU 0: sw_power_cap, GPU 0: sw_thermal_slowdown)" in line.figure
    refused = Ran(["nvidia-smi"], 2, 0.1, 'Field "clocks_throttle_reasons.active" is not a valid field to query.\n')
    assert preflight.clocks_line(refused).status == "SKIP"


def row(index, added, device="cuda:0", gpu_state=None, tok=100_000.0, status="ok"):
    doc = {
        "tool": "stepwise",
        "schema_version": 2,
        "name": f"verify_flags/{index:02}",
        "status": status,
        "reason": None if status == "ok" else "why",
        "implementation": "libtorch",
        "suite": {"name": "verify_flags", "index": index, "label": "+".join(added) or "baseline", "added": added},
        "config": {"device": device, "preset": "gpt2-124m", "flags_requested": added, "sdpa_backend_used": None},
        "summary": {"tokens_per_s": tok, "step_ms": {"median": 80.0}, "memory": {"activation_bytes": 2**30}},
    }
    if gpu_state is not None:
        doc["gpu_state"] = gpu_state
    return doc


def test_a_throttled_row_says_so_and_an_older_result_without_the_key_reads_as_before(tmp_path):
    throttled = {
        "status": "recorded",
        "reason": None,
        "phases": {},
        "throttled": True,
        "throttle_reasons": ["sw_power_cap", "hw_thermal_slowdown"],
    }
    v = verifier(tmp_path)
    (tmp_path / "results" / "flags").mkdir(parents=True)
    docs = [
        row(0, []),
        row(1, ["tf32"], gpu_state=throttled, tok=150_000.0),
        row(2, ["bf16"], gpu_state={"status": "recorded", "throttled": False}),
    ]
    for d in docs:
        (tmp_path / "results" / "flags" / f"{d['suite']['index']:02}.json").write_text(json.dumps(d))
    lines = {
        l.path: l
        for l in judges.judge_flags(v, Outcome([Ran(["ablate"], 0, 1.0)], 1, 60, tmp_path / "results" / "flags"))
    }
    suite = lines["every flag once at gpt2-124m, beside the baseline"]
    assert (
        suite.status == "PASS"
        and "GPU THROTTLED during 1 row(s): tf32 throttled (sw_power_cap, hw_thermal_slowdown)" in suite.figure
    )
    tf32 = lines["tf32 at gpt2-124m beside the baseline"]
    assert (
        tf32.figure.startswith("1.50x the baseline's tok/s; ")
        and "throttled (sw_power_cap, hw_thermal_slowdown)" in tf32.figure
    )
    assert "throttled" not in lines["bf16 at gpt2-124m beside the baseline"].figure
    assert judges.gpu_state_notes([row(0, [])]) == ""  # no gpu_state key: a result from before it
    unrecorded = row(0, [], gpu_state={"status": "not recorded", "reason": "libnvidia-ml.so.1: cannot open"})
    assert judges.gpu_state_notes([unrecorded]) == "; GPU state not recorded (libnvidia-ml.so.1: cannot open)"
    assert (
        judges.gpu_state_notes([row(0, [], device="cpu", gpu_state={"status": "not recorded", "reason": "cpu"})]) == ""
    )


def test_the_gpu_googletests_are_run_from_their_binaries_one_line_each(tmp_path):
    v = verifier(tmp_path)
    v.binaries = {n: tmp_path / n for n in binaries.GTESTS}
    cmds = gpu_tests.gtest_cmds(v)
    assert [c.argv[0] for c in cmds] == [tmp_path / n for n in binaries.GTESTS]
    gtest_filter = gpu_tests.gpu_gtest_filter()
    assert "CudaGraphStep.ReplayedStepsMatchEagerSteps" in gtest_filter and "PinnedMemory.*" in gtest_filter
    assert all(f"--gtest_filter={gtest_filter}" in c.argv for c in cmds)
    (tmp_path / "junit").mkdir()
    (tmp_path / "junit" / "gtest_stepwise_bench_tests.xml").write_text(
        '<testsuites><testsuite name="CudaGraphStep">'
        '<testcase name="ReplayedStepsMatchEagerSteps" status="run" result="completed" classname="CudaGraphStep"/>'
        '<testcase name="EveryReplayDrawsFreshDropoutMasks" status="run" result="completed" classname="CudaGraphStep">'
        '<failure message="compile_test.cpp:40&#x0A;Expected equality">x</failure></testcase>'
        '<testcase name="Skips" status="run" result="skipped" classname="Streams"><skipped message="device_test.cpp:21'
        '&#x0A;needs a CUDA device (compiled, not run here)"/></testcase></testsuite></testsuites>'
    )
    for name in binaries.GTESTS:
        if name != "stepwise_bench_tests":
            (tmp_path / "junit" / f"gtest_{name}.xml").write_text("<testsuites/>")
    ran = [Ran([n], 0 if n != "stepwise_bench_tests" else 1, 1.0) for n in binaries.GTESTS]
    lines = {l.path: l for l in gpu_tests.judge_gtests(v, Outcome(ran, 3.0, 60, tmp_path))}
    summary = lines["GPU-only GoogleTests (the gpu label's filter, run from their binaries)"]
    assert summary.status == "FAIL" and "gpu.CudaGraphStep.EveryReplayDrawsFreshDropoutMasks" in summary.reason
    assert summary.figure == "1 passed, 1 skipped, 1 failed"
    assert lines["gpu.CudaGraphStep.ReplayedStepsMatchEagerSteps"].status == "PASS"
    assert lines["gpu.Streams.Skips"].reason == "needs a CUDA device (compiled, not run here)"
    assert "Expected equality" in lines["gpu.CudaGraphStep.EveryReplayDrawsFreshDropoutMasks"].reason

    # A binary that died before writing its JUnit is named on the first line.
    (tmp_path / "junit" / "gtest_stepwise_model_tests.xml").unlink()
    ran[0] = Ran(["stepwise_model_tests"], -11, 1.0, "Segmentation fault")
    summary = next(iter(gpu_tests.judge_gtests(v, Outcome(ran, 3.0, 60, tmp_path))))
    assert summary.status == "FAIL" and "stepwise_model_tests: killed by SIGSEGV" in summary.reason


def test_each_gpu_test_is_one_line_with_its_figure_or_its_assertion(tmp_path):
    v = verifier(tmp_path)
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
    lines = {l.path: l for l in gpu_tests.judge_gpu_results(v, Outcome([], 1.0, 10, tmp_path))}
    assert lines["risk: the flash rows run flash attention"].status == "PASS"
    assert lines["risk: the flash rows run flash attention"].figure == "sdpa_backend_used: raschka flash"
    cupti = lines["risk: cupti traces the kernels of the cuda graph"]
    assert cupti.status == "FAIL" and cupti.kind == "gpu_test" and "150 kernels per step" in cupti.reason
    assert cupti.figure == "kernels/step: compile 150 vs eager 400"
    mfu = lines["risk: mfu is a fraction of the peak"]
    assert mfu.status == "SKIP" and mfu.reason == "no CUDA row with an MFU in STEPWISE_GPU_RESULTS=/r"


def test_the_speedrun_slot_skips_until_its_suite_exists(tmp_path, monkeypatch):
    v = verifier(tmp_path, target=REHEARSAL)
    v.binaries = {"ablate": tmp_path / "ablate"}
    suites = tmp_path / "suites"
    suites.mkdir()
    monkeypatch.setattr(steps, "SUITES", suites)
    assert steps.speedrun_cmds(v) == []
    (line,) = steps.judge_speedrun(v, Outcome([], 0.0, 15, tmp_path / "results" / "speedrun"))
    assert line.status == "SKIP" and line.reason.startswith("suite not found: ablations/suites/speedrun.json")
    (suites / "speedrun.json").write_text("{}")
    monkeypatch.setattr(steps, "corpus_missing", lambda: "")
    (cmd,) = steps.speedrun_cmds(v)
    assert f"--suite={suites / 'speedrun.json'}" in cmd.argv and "--device=cpu" in cmd.argv
    # to a target on the fortunes corpus, two seeds a row: the speedrun's techniques are judged by time to target
    assert "--data=corpus:fortunes" in cmd.argv and "--target-seeds=2" in cmd.argv
    assert any(str(a).startswith("--target-loss=") for a in cmd.argv)
    # through the budget search (issue 37): find_budget on the target's grid, each probe setting its own horizon
    assert str(cmd.argv[1]).endswith("scripts/find_budget.py") and "--first=15" in cmd.argv, cmd.argv
    assert not any(str(a).startswith("--step-budget") for a in cmd.argv), "find_budget refuses a horizon of its own"
    assert cmd.argv.count("--no-progress") == 0, "find_budget passes it to each probe"
    for target in (GPU, REHEARSAL):  # the grid's bound: a probe's seeds must train all N steps within their guard
        assert any(o.startswith("--max-steps=") for o in target.speedrun) and target.budget_grid, target


def target_row(index: int, label: str, reached: int) -> dict:
    doc = row(index, [label])
    doc["suite"].update(name="speedrun", label=label)
    doc["convergence"] = {"target_loss": 7.5, "reached": reached, "runs": 2, "steps": {"median": 40.0}}
    doc["convergence"]["time_s"] = {"median": 1.5}
    return doc


def test_the_speedrun_step_reads_its_largest_probe_and_the_search(tmp_path):
    """The rows trained to the target are the largest probe's (not every probe's twice over), and the budget search's
    line gives each row's N, or says where a search that did not finish stopped."""
    v = verifier(tmp_path)
    folder = tmp_path / "results" / "speedrun"
    for n, reached in ((25, 0), (50, 1), (100, 2)):
        (folder / f"budget_{n}").mkdir(parents=True)
        for i, label in enumerate(("baseline", "#2")):
            (folder / f"budget_{n}" / f"{i}.json").write_text(json.dumps(target_row(i, label, reached)))
    (folder / "budget.json").write_text(json.dumps({"grid": [25, 50, 100], "rows": None}))
    stopped = Outcome([Ran(["find_budget"], None, 40.0)], 40.0, 40, folder)
    first, search = steps.judge_speedrun(v, stopped)
    assert search.status == "FAIL" and search.kind == "time" and "probes run: 25, 50, 100" in search.reason, search

    rows = [
        {"label": "baseline", "budget": 100, "steps_ratio": None, "seconds_ratio": {"ratio": None}},
        {"label": "#2", "budget": 50, "steps_ratio": 0.5, "seconds_ratio": {"ratio": 0.55}},
        {"label": "#3", "budget": None, "steps_ratio": None, "seconds_ratio": {"ratio": None}},
    ]
    (folder / "budget.json").write_text(json.dumps({"grid": [25, 50, 100], "rows": rows}))
    first, search = steps.judge_speedrun(v, Outcome([Ran(["find_budget"], 0, 30.0)], 30.0, 40, folder))
    assert first.status == "PASS" and first.figure.count("reached 2/2") == 2 and "0/2" not in first.figure, first
    assert search.status == "PASS" and "(grid 25, 50, 100)" in search.path, search
    assert search.figure == "baseline: N 100; #2: N 50 (x0.50 steps, x0.55 s); #3: N none", search.figure


def test_time_to_target_without_the_corpus_fails_on_a_gpu_and_skips_in_a_rehearsal(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPWISE_CORPUS_DIR", str(tmp_path / "no-corpus"))
    for target, rehearsal, status in ((GPU, False, "FAIL"), (REHEARSAL, True, "SKIP")):
        v = verifier(tmp_path, target=target)
        v.rehearsal = rehearsal
        assert steps.target_cmds(v) == []
        (line,) = steps.judge_time_to_target(v, Outcome([], 0.0, 55, tmp_path))
        assert line.status == status and line.kind == "corpus" and "fortunes corpus is not in" in line.reason
    (tmp_path / "corpus" / "fortunes").mkdir(parents=True)
    (tmp_path / "corpus" / "fortunes" / "meta.json").write_text("{}")
    monkeypatch.setenv("STEPWISE_CORPUS_DIR", str(tmp_path / "corpus"))
    v.binaries = {"ablate": tmp_path / "ablate"}
    (cmd,) = steps.target_cmds(v)
    assert "--data=corpus:fortunes" in cmd.argv and "--max-steps=60" in cmd.argv and "--max-time=600" in cmd.argv


def test_a_rehearsal_is_capped_in_steps_and_batches_never_in_seconds():
    """On a slow or busy CPU a rehearsal takes longer; what it finds stays the same (issue 31)."""
    for options in (REHEARSAL.timing, REHEARSAL.probe, REHEARSAL.to_target):
        caps = dict(o.split("=") for o in options if o.startswith(("--max-time", "--max-batch-time")))
        assert all(float(s) >= 600 for s in caps.values()), options
    assert "--max-steps=3" in REHEARSAL.timing and "--max-batch-limit=16" in REHEARSAL.probe


def test_the_micro_benchmarks_verify_runs_are_one_case_per_family():
    micro = pathlib.Path(os.environ.get("STEPWISE_MICRO") or BUILD / "bench" / "micro" / "stepwise_micro")
    if not micro.exists():
        pytest.skip(f"{micro} is not built")
    listed = subprocess.run(
        [str(micro), "--presets=gpt2-124m", "--benchmark_list_tests", f"--benchmark_filter={steps.micro_filter(1024)}"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.split()
    families = {name.split("/")[0] for name in listed}
    assert families == {"attention", "layernorm", "gelu", "adamw", "matmul", "head", "copy", "mask"}, listed
    assert 20 <= len(listed) <= 30, listed  # of 111: every kernel and baseline once, at T=1024
    assert all(n.endswith(("T:1024", "/step", "bytes:16777216")) for n in listed), listed


def probe_row(index: int, flags: list[str], chosen: int, stopped: str | None) -> dict:
    return {
        "tool": "stepwise",
        "schema_version": 2,
        "status": "ok",
        "implementation": "libtorch",
        "name": f"max_batch/{index:02}",
        "run_id": f"verify_max_batch_{index}",
        "suite": {"name": "single", "index": 0, "label": "+".join(flags), "added": flags},
        "config": {"device": "cuda:0", "preset": "gpt2-124m", "seq_len": 1024, "flags_requested": flags},
        "summary": {"tokens_per_s": 100_000.0, "memory": {}},
        "max_batch_probe": {"base": 8, "limit": 64, "chosen": chosen, "tried": [], "stopped": stopped},
    }


def test_a_probe_stopped_on_its_time_cap_decides_nothing_about_a_memory_flag(tmp_path):
    """Issue 31: a probe capped in seconds that stopped on time found a batch under time, not under memory. A smaller
    batch from it skips the comparison, saying so; a smaller batch from a probe that stopped on memory fails."""
    timed = "--max-batch-time (15 s) reached after batch 16"
    for sub, flags, chosen, stopped in (
        ("alone", ["max_batch"], 32, None),
        ("checkpoint", ["max_batch", "checkpoint"], 16, timed),
        ("chunked_ce", ["max_batch", "chunked_ce"], 16, None),
    ):
        (tmp_path / "results" / sub).mkdir(parents=True)
        (tmp_path / "results" / sub / "row.json").write_text(json.dumps(probe_row(0, flags, chosen, stopped)))
    junit = tmp_path / "gpu.xml"
    subprocess.run(
        [
            PYTHON,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "gpu",
            str(ROOT / "tests" / "gpu"),
            f"--junitxml={junit}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STEPWISE_GPU_RESULTS": str(tmp_path / "results")},
    )
    cases = {c.name.split("::")[-1]: c for c in junit_cases(junit)}
    checkpoint = cases["test_a_memory_flag_never_lowers_the_largest_batch[checkpoint]"]
    assert checkpoint.status == "skipped" and "stopped on its time cap at batch 16" in checkpoint.message, checkpoint
    chunked = cases["test_a_memory_flag_never_lowers_the_largest_batch[chunked_ce]"]
    assert (
        chunked.status == "failed"
        and "chunked_ce lowered the largest batch the probe found: 32 -> 16" in chunked.message
    )
    assert chunked.figure.startswith("largest batch 32 -> 16 (estimate ? -> ?, limit 64)")


def test_pass_3_rehearsed_on_this_cpu_counts_the_eager_step_beside_python_eager(tmp_path, monkeypatch):
    """Pass 3 as --rehearse-on-cpu runs it: the eager row and its Python eager twin each with its steps counted
    (--count-ops; no CUDA call to count on a CPU), the CUDA graph's row a skip naming the device it needs."""
    if not ABLATE.exists():
        pytest.skip(f"{ABLATE} is not built")
    monkeypatch.setenv("STEPWISE_BIN", str(ABLATE))
    monkeypatch.setattr(verify_gpu.tempfile, "tempdir", str(tmp_path))  # its work directory, removed at the end
    # The warm-up of a machine with no GPU and no prebuilt, at once: the step's lines are what is tested.
    warm = {"python": PYTHON, "probe": None, "info": None, "fits": False, "said": "", "seconds": 0.0}
    monkeypatch.setattr(verify_gpu, "warm_up", lambda v: warm)
    out = tmp_path / "out"
    verify_gpu.main(["--out", str(out), "--passes", "3", "--rehearse-on-cpu", "--budget-scale", "4"])
    lines = {l["path"]: l for l in json.loads((out / "pass3" / "verify.json").read_text())["lines"]}
    counts = lines["what one step dispatches, eager and as a CUDA graph"]
    assert counts["status"] == "PASS" and counts["figure"].startswith("1 ok, 1 skipped, 0 failed"), counts
    assert lines["python-eager vs C++: verify_counts eager"]["status"] == "PASS"
    with tarfile.open(out / "pass3" / "verify-artifacts.tar.gz") as tar:
        docs = {
            pathlib.Path(m.name).name: json.load(tar.extractfile(m))
            for m in tar.getmembers()
            if "/results/counts/" in m.name and m.name.endswith(".json")
        }
    assert sorted(docs) == ["00_eager.json", "00_eager.python-eager.json", "01_cuda_graph.json"], sorted(docs)
    for name in ("00_eager.json", "00_eager.python-eager.json"):
        per_step = docs[name]["op_counts"]["per_step"]
        assert per_step["aten_op_total"] > 0 and per_step["runtime_calls"] is None, (name, per_step)
    graph = docs["01_cuda_graph.json"]
    assert graph["status"] == "skipped" and "CUDA" in graph["reason"], graph


def test_the_muon_line_gives_one_steps_launches_per_matrix_and_batched(tmp_path):
    """Issue 57 on a GPU: pass 3's muon step runs the two bf16 cases, and its line gives what one step of each launched;
    a CPU rehearsal's has their ATen ops; a GPU run whose launches were not counted skips naming why; a case that
    failed fails the line with its message."""
    v = verifier(tmp_path)
    (cmd,) = steps.muon_cmd(v)
    assert "--benchmark_filter=^muon/[^/]+/(per_matrix|batched)_bf16/" in cmd.argv and "--presets=gpt2-124m" in cmd.argv

    def line(*rows, code=0):
        (tmp_path / "results").mkdir(exist_ok=True)
        (tmp_path / "results" / "muon.json").write_text(json.dumps({"benchmarks": list(rows)}))
        (found,) = judges.judge_muon(v, Outcome([Ran(["stepwise_micro"], code, 1.0)], 1, 10, tmp_path))
        return found

    per = {"run_name": "muon/gpt2-124m/per_matrix_bf16/step", "aten_ops": 2100.0, "launches": 1900.0}
    batched = {"run_name": "muon/gpt2-124m/batched_bf16/step", "aten_ops": 260.0, "launches": 240.0}
    found = line(per, batched)
    assert found.status == "PASS", found
    assert found.figure == "per matrix / batched, one step: launches 1900 / 240, ATen ops 2100 / 260"
    uncounted = [
        {k: b[k] for k in ("run_name", "aten_ops")} | {"label": "launches not counted: CUPTI"} for b in (per, batched)
    ]
    found = line(*uncounted)
    assert (
        found.status == "SKIP"
        and found.reason == "launches not counted: CUPTI"
        and found.figure == "ATen ops 2100 / 260"
    )
    v.rehearsal = True
    found = line(*uncounted)
    assert found.status == "PASS" and found.figure.endswith("ATen ops 2100 / 260 (a CPU launches no kernels)")
    failed = batched | {"error_occurred": True, "error_message": "CUDA out of memory"}
    found = line(per, failed)
    assert found.status == "FAIL" and "CUDA out of memory" in found.reason
    assert line(per, batched, code=1).status == "FAIL"
