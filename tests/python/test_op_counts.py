"""count_steps (--count-ops) in step.py: after the measured steps, each counted step's ATen operators, CPU allocations
and (on a CPU, none) device activities, raw, for the C++ side to summarise beside its own row's."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # the modules of bench/python

from step_requests import request, result, run_step, tiny_config, write_request  # noqa: E402

from model import GPT  # noqa: E402

# The tiny preset's linear layers in one forward: per block query, key, value, c_proj, c_fc and the MLP's c_proj;
# then the head.
TINY_LINEARS = 2 * 6 + 1


def test_counted_steps_follow_the_measured_ones_and_count_the_same_each_time(tmp_path):
    timing = {"warmup": 1, "min_steps": 2, "max_steps": 2, "check_every": 2}
    directory = write_request(tmp_path / "r", request(timing=timing, count_steps=2, batches_rows=5))
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    assert doc["status"] == "ok", doc["reason"]
    assert len(doc["warmup"]) == 1 and len(doc["steps"]) == 2  # the counted steps are neither
    counts = doc["op_counts"]
    assert counts["status"] == "ok" and len(counts["steps"]) == 2
    first, second = counts["steps"]
    assert first == second  # a steady step dispatches the same ops and allocates the same bytes each time
    assert first["aten_ops"]["aten::linear"] == TINY_LINEARS
    parameters = len(list(GPT(tiny_config()).parameters()))
    assert first["aten_ops"]["aten::addcdiv_"] == parameters  # the forloop AdamW: one update per parameter
    cpu = first["allocations"]["cpu"]
    assert cpu["count"] > 0 and cpu["bytes"] >= 4 * 64 * 50257 * 4  # at least the (B, T, V) float32 logits
    assert first["device_activities"] is None  # a CPU launches no kernels
    assert first["runtime_calls"] is None  # and makes no CUDA call


def test_a_cuda_api_call_is_known_by_its_name():
    """The same names as tests/bench/trace/op_counts_test.cpp's: both rows sort an event the same way."""
    from op_counts import is_cuda_api_call

    calls = ["cudaLaunchKernel", "cudaLaunchKernelExC_v11060", "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch"]
    calls += ["cudaMemcpyAsync", "cudaStreamSynchronize"]
    others = ["aten::add", "cutlass::Kernel2<cutlass_80_tensorop>", "cuda", "cu", "cudnn::gemm"]
    others += ["Optimizer.step#AdamW.step", "[memory]", "curand_init"]
    assert [n for n in calls if not is_cuda_api_call(n)] == []
    assert [n for n in others if is_cuda_api_call(n)] == []
