"""step.py end to end on the CPU on the tiny preset: request directory in, result.json out, as the C++ harness runs
it; the weights check, the time cap, bad requests; and the loader."""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # model, step, stats, loader

import step  # noqa: E402
from loader import Loader  # noqa: E402
from step_requests import request, result, run_step, write_request  # noqa: E402


@pytest.fixture
def request_dir(tmp_path):
    """Writes a request directory for the tiny preset on the CPU, with these overrides."""
    return lambda **overrides: write_request(tmp_path / "request", request(**overrides))


def test_eager_run_trains_and_reports_everything(request_dir):
    directory = request_dir()  # 3 warm-up + 10 measured steps, lr 5e-4, a 16-token repeating pattern
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    assert list(doc) == [
        "status",
        "reason",
        "implementation",
        "clock",
        "warmup",
        "steps",
        "stop_reason",
        "short",
        "compile_s",
        "optimizer",
        "memory",
        "sdpa_backend_used",
        "versions",
    ]
    assert doc["status"] == "ok" and doc["reason"] is None
    assert doc["implementation"] == "python-eager" and doc["clock"] == "steady_clock"
    assert len(doc["warmup"]) == 3 and len(doc["steps"]) == 10
    assert doc["stop_reason"] == "max_steps" and doc["short"] is False
    assert doc["compile_s"] is None and doc["optimizer"] == "forloop" and doc["sdpa_backend_used"] is None
    losses = [s["loss"] for s in doc["warmup"] + doc["steps"]]
    assert all(math.isfinite(x) for x in losses) and all(s["ms"] > 0 for s in doc["steps"])
    assert 10 < losses[0] < 12  # about ln(50257) = 10.8 at initialisation
    assert all(b < a for a, b in zip(losses, losses[1:])) and losses[-1] < losses[0] - 0.5
    memory = doc["memory"]
    assert memory["kind"] == "process_rss" and memory["peak_rss_bytes"] >= memory["current_reserved_bytes"] > 0
    assert memory["peak_reserved_bytes"] == memory["peak_rss_bytes"] and memory["peak_allocated_bytes"] is None
    assert memory["scope"].startswith("measured steps")
    assert doc["versions"]["torch"] == torch.__version__ and doc["versions"]["python"].startswith("3.")


@pytest.mark.parametrize("optimizer, dropout, expected_sdpa", [("foreach", 0.1, "math"), ("fused", 0.0, "flash")])
def test_optimizer_and_attention_kernel_are_reported(request_dir, optimizer, dropout, expected_sdpa):
    # CPU: a training dropout rules out the flash kernel, so SDPA runs its math path.
    directory = request_dir(
        optimizer=optimizer,
        model={"flash": True, "dropout": dropout},
        timing={"warmup": 1, "min_steps": 2, "max_steps": 2, "check_every": 2},
    )
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    assert doc["status"] == "ok", doc["reason"]
    assert doc["optimizer"] == optimizer and doc["sdpa_backend_used"] == expected_sdpa
    assert len(doc["steps"]) == 2 and all(math.isfinite(s["loss"]) for s in doc["steps"])


def test_weights_must_match_the_model_by_name_and_shape(request_dir):
    directory = request_dir(timing={"warmup": 1, "min_steps": 1, "max_steps": 1})
    weights = load_file(str(directory / "weights.safetensors"))
    weights["h.0.attn.q.weight"] = weights.pop("h.0.attn.query.weight")
    weights["wpe.weight"] = weights["wpe.weight"][:64].clone()
    save_file(weights, str(directory / "weights.safetensors"))
    run = run_step(directory)
    assert run.returncode == 0, run.stderr  # a failure is a result
    doc = result(directory)
    assert doc["status"] == "failed" and doc["stop_reason"] == "failed" and doc["steps"] == []
    assert doc["reason"].startswith("weights.safetensors does not match the model's parameters")
    for part in (
        "missing h.0.attn.query.weight",
        "unexpected h.0.attn.q.weight",
        "shape of wpe.weight: file [64, 64], model [128, 64]",
    ):
        assert part in doc["reason"]


def test_the_time_cap_stops_short_and_says_so(request_dir):
    directory = request_dir(timing={"warmup": 3, "min_steps": 10, "max_steps": 10, "max_time_s": 0.001})
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    assert doc["status"] == "ok" and doc["stop_reason"] == "max_time" and doc["short"] is True
    assert len(doc["warmup"]) == 1 and len(doc["steps"]) == 1  # each phase stops after its first step


def test_a_bad_request_exits_2_naming_the_key(request_dir):
    directory = request_dir()
    bad = json.loads((directory / "request.json").read_text())
    del bad["timing"]["max_noise"]
    (directory / "request.json").write_text(json.dumps(bad))
    run = run_step(directory)
    assert run.returncode == 2
    assert "missing key 'timing.max_noise'" in run.stderr
    assert not (directory / "result.json").exists()
    assert run_step(directory / "nowhere").returncode == 2


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.update(implementation="python-jit"), "'implementation' must be one of"),
        (lambda r: r.update(batch_size=0), "'batch_size' must be an integer >= 1, got 0"),
        (lambda r: r["model"].update(flash="yes"), "'model.flash' must be true or false"),
        (lambda r: r["model"].update(n_head=3), "'model': n_head (3) must divide n_embd (64)"),
        (lambda r: r["adamw"].update(lr=float("nan")), "'adamw.lr' must be a number"),
        (lambda r: r["timing"].update(max_time_s=0), "'timing.max_time_s' must be a number > 0"),
        (lambda r: r.update(seed=1), "unknown key 'seed'"),
        (lambda r: r.update(seq_len=129), "'seq_len' 129 exceeds 'model.context_length' 128"),
        (lambda r: r["timing"].update(max_steps=14), "'batches_rows' 16 is fewer than the 3 warm-up + 14"),
        (lambda r: r.update(pinned_memory=True), "'pinned_memory' needs a CUDA device"),
        (
            lambda r: r.update(implementation="python-compile", timing={**r["timing"], "warmup": 0}),
            "'timing.warmup' must be at least 1 for python-compile",
        ),
    ],
)
def test_invalid_requests_are_usage_errors(tmp_path, change, message):
    req = request()
    change(req)
    directory = tmp_path / "request"
    write_request(directory, request())
    (directory / "request.json").write_text(json.dumps(req))
    with pytest.raises(step.UsageError) as error:
        step.read_request(directory)
    assert message in str(error.value)


def test_invalid_data_files_are_usage_errors(tmp_path):
    directory = write_request(tmp_path / "request", request())
    tokens = np.fromfile(directory / "tokens.bin", dtype="<u2")
    starts = np.fromfile(directory / "batches.bin", dtype="<i8")
    starts[:-1].tofile(directory / "batches.bin")
    with pytest.raises(step.UsageError, match="expected batches_rows x batch_size int64 = 16 x 4 x 8 = 512"):
        step.read_request(directory)
    starts[-1] = len(tokens) - 64  # its window would end one token past the stream
    starts.tofile(directory / "batches.bin")
    with pytest.raises(step.UsageError, match="window starts must lie in"):
        step.read_request(directory)
    starts[-1] = 0
    starts.tofile(directory / "batches.bin")
    tokens[5] = 50257
    tokens.tofile(directory / "tokens.bin")
    with pytest.raises(step.UsageError, match="token id 50257 is outside the vocabulary of 50257"):
        step.read_request(directory)
    (directory / "weights.safetensors").unlink()
    with pytest.raises(step.UsageError, match="weights.safetensors is missing"):
        step.read_request(directory)
    assert step.main(["step.py", str(directory)]) == 2


def test_loader_stages_the_given_windows_in_order():
    tokens = np.arange(1000, dtype="<u2")
    starts = np.array([[0, 10], [20, 30], [40, 50], [60, 70], [80, 90], [100, 110]], dtype="<i8")
    with Loader(tokens, starts, 8, torch.device("cpu"), prefetch=2) as loader:
        for row in starts:
            x, y = loader.next()
            assert x.dtype == y.dtype == torch.long and x.shape == y.shape == (2, 8)
            assert x.tolist() == [list(range(s, s + 8)) for s in row]
            assert y.tolist() == [list(range(s + 1, s + 9)) for s in row]
        with pytest.raises(RuntimeError, match="all 6 batches were used"):
            loader.next()


def test_an_unavailable_kernel_is_a_failed_result(tmp_path, capsys):
    # The efficient SDPA kernel is CUDA-only: pinned on a CPU, attention has no kernel at all.
    directory = write_request(
        tmp_path / "request",
        request(
            model={"flash": True, "sdpa_backend": "efficient"}, timing={"warmup": 0, "min_steps": 1, "max_steps": 1}
        ),
    )
    assert step.main(["step.py", str(directory)]) == 0
    doc = result(directory)
    assert doc["status"] == "failed" and doc["stop_reason"] == "failed" and doc["memory"] is None
    assert doc["reason"].startswith(
        "scaled_dot_product_attention pinned to efficient on cpu float32 with dropout 0.0: No viable backend"
    )
    assert "Traceback" in capsys.readouterr().err


def test_a_result_that_cannot_be_written_exits_1(tmp_path, monkeypatch, capsys):
    directory = write_request(tmp_path / "request", request(timing={"warmup": 0, "min_steps": 1, "max_steps": 1}))

    def refuse(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(step, "write_atomically", refuse)
    assert step.main(["step.py", str(directory)]) == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and "No space left on device" in err


def test_failure_reasons_are_one_line():
    assert (
        step.describe(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.\nmore"))
        == "out of memory: CUDA out of memory. Tried to allocate 2.00 GiB."
    )
    assert (
        step.describe(RuntimeError("backend='inductor' raised:\nCompilationError: bad\n  trace"))
        == "RuntimeError: backend='inductor' raised: CompilationError: bad"
    )
    assert step.describe(step.StepFailure("loss is nan at measured step 3")) == "loss is nan at measured step 3"
    assert step.describe(KeyboardInterrupt()) == "interrupted"
