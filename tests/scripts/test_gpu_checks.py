"""The gpu tests (tests/gpu) on made-up GPU results: each passes on results that have its property and fails, with
the figures, on results that break it; results from a CPU skip with the reason. And the `gpu` label of ctest holds
every GoogleTest that skips without CUDA, so a GPU machine runs them all first."""

import copy
import json
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = os.environ.get("STEPWISE_PYTHON") or sys.executable


def row(suite, index, added, device="cuda:0", **extra):
    doc = {
        "tool": "stepwise",
        "schema_version": 2,
        "status": "ok",
        "implementation": "libtorch",
        "name": f"{suite}/{index:02}",
        "suite": {"name": suite, "index": index, "label": "+".join(added) or "baseline", "added": added},
        "config": {"device": device, "flags": added, "flags_skipped": [], "sdpa_backend_used": None},
        "summary": {"memory": {"peak_allocated_bytes": 4 * 2**30}, "mfu": {"value": 0.3}},
        "trace": None,
        "distributed": None,
        "max_batch_probe": None,
    }
    for key, value in extra.items():
        doc[key] = {**doc[key], **value} if isinstance(value, dict) and isinstance(doc.get(key), dict) else value
    return doc


def good_results() -> list[dict]:
    probe = {
        "base": 8,
        "chosen": 32,
        "limit": 64,
        "stopped": None,
        "tried": [{"batch": 16, "fit": True}, {"batch": 32, "fit": True}, {"batch": 64, "fit": False}],
    }
    return [
        row("raschka", 7, ["flash"], config={"sdpa_backend_used": "flash"}),
        row("raschka", 8, ["compile"], summary={"memory": {"peak_allocated_bytes": 3 * 2**30}, "mfu": {"value": 0.4}}),
        row("raschka", 10, ["max_batch"], max_batch_probe=probe),
        row("karpathy", 2, ["bf16"], trace={"status": "ok", "kernels_per_step": 400}),
        row("karpathy", 3, ["compile"], trace={"status": "ok", "kernels_per_step": 395}),
        row("karpathy", 4, ["flash"], config={"sdpa_backend_used": "flash"}),
        row("single", 0, ["compile", "bf16"], distributed={"backend": "nccl", "world_size": 1}),
        row("ddp_eager", 0, [], distributed={"backend": "nccl", "world_size": 1}),
        row("fp8", 1, ["bf16", "fp8"], config={"fp8_scaling": "rowwise", "fp8_layers": ["h.0.mlp.c_fc"]}),
        # One run's baseline and each memory flag beside it (verify-gpu.sh's flags step), and the largest-batch probe
        # alone and with each memory flag (its max_batch step).
        *(
            row(
                "verify_flags",
                i,
                f,
                run_id="verify_flags",
                config={"flags_requested": f},
                summary=memory_summary(act, 4),
            )
            for i, (f, act) in enumerate([([], 3), (["checkpoint"], 1), (["chunked_ce"], 2)])
        ),
        *(
            row(
                "max_batch",
                i,
                f,
                config={"flags_requested": f},
                summary=memory_summary(3, 4),
                max_batch_probe={**probe, "chosen": c},
            )
            for i, (f, c) in enumerate(
                [(["max_batch"], 32), (["max_batch", "checkpoint"], 64), (["max_batch", "chunked_ce"], 32)]
            )
        ),
        *counted_results(),
    ]


def counted_row(index, flags, implementation, ops, kernels, calls):
    """A row of verify's pass 3 with its step counted (--count-ops) on a GPU."""
    doc = row("verify_counts", index, flags, run_id="verify_counts", implementation=implementation)
    doc["suite"]["label"] = "CUDA graph" if index else "eager"
    doc["op_counts"] = {
        "status": "ok",
        "steps_counted": 3,
        "same_each_step": True,
        "per_step": {
            "aten_ops": ops,
            "aten_op_total": sum(ops.values()),
            "allocations": {"cpu": {"count": 2, "bytes": 64}, "cuda": {"count": 40, "bytes": 2**24}},
            "device_activities": {"kernel": kernels},
            "device_activity_total": kernels,
            "runtime_calls": calls,
            "runtime_call_total": sum(calls.values()),
            "launch_total": sum(n for c, n in calls.items() if "Launch" in c),
        },
        "varying": {},
    }
    return doc


def counted_results() -> list[dict]:
    """The eager step beside Python eager's (the same work), then the graph's one launch beside torch.compile's."""
    flags = ["tf32", "fused_adamw", "bf16"]
    eager_ops = {"aten::linear": 13, "aten::copy_": 20}
    return [
        counted_row(0, flags, "libtorch", eager_ops, 300, {"cudaLaunchKernel": 300, "cudaMemsetAsync": 4}),
        counted_row(0, flags, "python-eager", {**eager_ops, "aten::item": 1}, 302, {"cudaLaunchKernel": 302}),
        counted_row(1, [*flags, "compile"], "libtorch", {"aten::_fused_adamw_": 1}, 300, {"cudaGraphLaunch": 1}),
        counted_row(1, [*flags, "compile"], "python-compile", {"aten::_fused_adamw_": 1}, 90, {"cuLaunchKernel": 90}),
    ]


def memory_summary(activation_gib: float, peak_gib: float) -> dict:
    gib = 2**30
    return {
        "tokens_per_s": 100_000.0,
        "memory": {"peak_allocated_bytes": peak_gib * gib, "activation_bytes": activation_gib * gib},
        "mfu": {"value": 0.3},
    }


def breakers():
    """One way to break each property, by the test that must catch it."""

    def flash(docs):
        docs[0]["config"]["sdpa_backend_used"] = "cudnn"

    def memory(docs):
        docs[1]["summary"]["memory"]["peak_allocated_bytes"] = 1 * 2**30  # under half the eager row's 4 GiB

    def mfu(docs):
        docs[1]["summary"]["mfu"]["value"] = 1.7

    def cupti(docs):
        docs[4]["trace"]["kernels_per_step"] = 150  # the graph's kernels missing from the trace

    def nccl(docs):
        docs[6]["config"]["flags"] = ["bf16"]

    def max_batch(docs):
        docs[2]["max_batch_probe"]["chosen"] = 8

    def nccl_alone(docs):
        docs[7]["status"], docs[7]["reason"] = "failed", "NCCL error: unhandled system error"

    def rowwise(docs):
        docs[8]["config"]["fp8_layers"] = []  # the filter kept every layer in bf16: the rowwise kernel never ran

    def activations(flag):
        def breaker(docs):
            row = next(d for d in docs if d["config"].get("flags_requested") == [flag])
            row["summary"]["memory"]["activation_bytes"] = 3.5 * 2**30  # above the baseline's 3 GiB

        return breaker

    def counted(docs):
        return [d for d in docs if d.get("op_counts")]

    def more_work(docs):
        cpp = counted(docs)[0]["op_counts"]["per_step"]
        cpp["aten_ops"]["aten::contiguous"] = 1  # one op Python eager's step does not make
        cpp["aten_op_total"] += 1

    def no_graph(docs):
        graph = counted(docs)[2]["op_counts"]["per_step"]
        graph["runtime_calls"] = {"cudaGraphLaunch": 2}  # the step split across two graphs, not one
        graph["launch_total"] = 2

    def largest_batch(flag):
        def breaker(docs):
            row = next(d for d in docs if d["config"].get("flags_requested") == ["max_batch", flag])
            row["max_batch_probe"]["chosen"] = 16  # below max_batch alone's 32, and the probe stopped on memory

        return breaker

    return {
        "test_the_flash_rows_run_flash_attention": flash,
        "test_compile_keeps_the_graphs_activations_in_its_peak_memory": memory,
        "test_mfu_is_a_fraction_of_the_peak": mfu,
        "test_cupti_traces_the_kernels_of_the_cuda_graph": cupti,
        "test_nccl_all_reduce_is_captured_in_the_cuda_graph": nccl,
        "test_nccl_data_parallel_runs_alone_before_anything_is_stacked_on_it": nccl_alone,
        "test_fp8_rowwise_runs_its_linears_through_the_rowwise_kernel": rowwise,
        "test_the_max_batch_probe_goes_above_the_base_batch": max_batch,
        "test_the_cpp_step_does_no_more_work_than_python_eager_on_the_gpu": more_work,
        "test_a_cuda_graph_step_is_one_launch_of_its_graph": no_graph,
        **{
            f"test_a_memory_flag_lowers_the_activation_memory[{f}]": activations(f)
            for f in ("checkpoint", "chunked_ce")
        },
        **{
            f"test_a_memory_flag_never_lowers_the_largest_batch[{f}]": largest_batch(f)
            for f in ("checkpoint", "chunked_ce")
        },
    }


@dataclass
class Outcome:
    status: str
    message: str
    figure: str


def junit(path: pathlib.Path) -> dict[str, Outcome]:
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        skipped, failure = case.find("skipped"), case.find("failure")
        status = "skipped" if skipped is not None else "failed" if failure is not None else "passed"
        message = next((e.get("message", "") for e in (skipped, failure) if e is not None), "")
        figure = {p.get("name"): p.get("value") for p in case.iter("property")}.get("figure", "")
        cases[case.get("name")] = Outcome(status, message, figure)
    return cases


def run_gpu_tests(tmp_path, docs) -> tuple[dict, pathlib.Path]:
    results, junit_path = tmp_path / "results", tmp_path / "junit" / "gpu_results.xml"
    results.mkdir()
    for d in docs:
        twin = "" if d["implementation"] == "libtorch" else f".{d['implementation']}"
        path = results / d["suite"]["name"] / f"{d['suite']['index']:02}{twin}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(d))
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
            f"--junitxml={junit_path}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STEPWISE_GPU_RESULTS": str(results)},
    )
    return junit(junit_path), junit_path


def test_on_results_that_have_every_property_every_gpu_test_passes(tmp_path):
    cases, _ = run_gpu_tests(tmp_path, good_results())
    assert set(cases) == set(breakers())
    assert {n: c.status for n, c in cases.items()} == {n: "passed" for n in breakers()}, cases
    assert cases["test_cupti_traces_the_kernels_of_the_cuda_graph"].figure == "kernels/step: compile 395 vs eager 400"
    assert "raschka/max_batch: 8 -> 32" in cases["test_the_max_batch_probe_goes_above_the_base_batch"].figure
    assert cases["test_a_memory_flag_never_lowers_the_largest_batch[checkpoint]"].figure.startswith(
        "largest batch 32 -> 64"
    )
    assert "eager: ATen ops 33 vs 34, cuda bytes 16,777,216 vs 16,777,216, kernels, copies, sets 300 vs 302" in (
        cases["test_the_cpp_step_does_no_more_work_than_python_eager_on_the_gpu"].figure
    )
    assert cases["test_a_cuda_graph_step_is_one_launch_of_its_graph"].figure == (
        "graph: 1 graph launch(es), 1 launches, 300 kernels, copies and sets; eager: 300 launches, 300 kernels; "
        "torch.compile: 90 launches, 90 kernels"
    )


@pytest.mark.parametrize("name", sorted(breakers()))
def test_each_gpu_test_fails_on_results_that_break_its_property(tmp_path, name):
    docs = copy.deepcopy(good_results())
    breakers()[name](docs)
    cases, _ = run_gpu_tests(tmp_path, docs)
    assert cases[name].status == "failed", cases[name]
    assert all(c.status == "passed" for n, c in cases.items() if n != name), cases


def test_results_from_a_cpu_skip_the_cuda_properties_with_the_reason(tmp_path):
    docs = [row(d["suite"]["name"], d["suite"]["index"], d["suite"]["added"], device="cpu") for d in good_results()]
    docs[2]["max_batch_probe"] = good_results()[2]["max_batch_probe"]
    cases, _ = run_gpu_tests(tmp_path, docs)
    assert cases["test_the_flash_rows_run_flash_attention"].status == "skipped"
    assert "ran on cpu, not on a CUDA device" in cases["test_the_flash_rows_run_flash_attention"].message
    assert cases["test_the_max_batch_probe_goes_above_the_base_batch"].status == "passed"  # any device has a probe


def test_a_profiler_that_cannot_load_skips_the_tests_that_need_it_naming_why(tmp_path):
    """A node whose kernel refuses CUPTI (gVisor refused ncu's profiler): the traced and counted rows still ran, and
    the tests that need the GPU's side of the trace or the counts skip, saying why, instead of failing."""
    docs = copy.deepcopy(good_results())
    docs[4]["trace"] = {
        "status": "unavailable",
        "reason": "trace unavailable: cuptiSubscribe failed: CUPTI_ERROR_NOT_INITIALIZED",
        "profiler_loaded": False,
    }
    for d in docs:
        counts = d.get("op_counts")
        if counts and d["implementation"] == "libtorch":
            counts["gpu_side_unavailable"] = "Kineto recorded none of the kernels it watched run: CUPTI did not load"
            counts["per_step"].update(device_activities=None, device_activity_total=None, launch_total=None)
    cases, _ = run_gpu_tests(tmp_path, docs)
    cupti = cases["test_cupti_traces_the_kernels_of_the_cuda_graph"]
    assert cupti.status == "skipped" and "CUPTI_ERROR_NOT_INITIALIZED" in cupti.message, cupti
    for name in (
        "test_the_cpp_step_does_no_more_work_than_python_eager_on_the_gpu",
        "test_a_cuda_graph_step_is_one_launch_of_its_graph",
    ):
        assert cases[name].status == "skipped" and "CUPTI did not load" in cases[name].message, cases[name]


def test_every_googletest_that_skips_without_cuda_carries_the_gpu_label():
    """A test whose first statement skips without a CUDA device must be in tests/CMakeLists.txt's STEPWISE_GPU_GTESTS,
    or a GPU machine would run it only after everything else, and verify.md would have no line for it."""
    cmake = (ROOT / "tests" / "CMakeLists.txt").read_text()
    listed = re.search(r'set\(STEPWISE_GPU_GTESTS "((?:[^"\\]|\\\n)*)"\)', cmake).group(1).replace("\\\n", "")
    patterns = [re.compile(p.replace(".", r"\.").replace("*", ".*") + "$") for p in listed.split(":")]
    gpu_only = []
    for source in (ROOT / "tests").rglob("*_test.cpp"):
        gpu_only += [
            f"{suite}.{name}"
            for suite, name in re.findall(
                r"^TEST(?:_F)?\((\w+), (\w+)\) \{\n\s+if \(!torch::cuda::is_available\(\)\) GTEST_SKIP\(\)",
                source.read_text(),
                re.M,
            )
        ]
    assert len(gpu_only) >= 6, gpu_only  # the scan finds them (a scan that finds nothing would pass anything)
    unlabelled = [t for t in gpu_only if not any(p.match(t) for p in patterns)]
    assert not unlabelled, f"add them to STEPWISE_GPU_GTESTS in tests/CMakeLists.txt: {unlabelled}"
    assert not any(p.match("CudaGraphStep.OnTheCpuItRefusesWithTheReason") for p in patterns)
