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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # the modules of bench/python

import step  # noqa: E402
from failure import StepFailure, describe  # noqa: E402
from loader import Loader  # noqa: E402
from lr_schedule import LrSchedule  # noqa: E402
from request import UsageError, read_request  # noqa: E402
from step_requests import NEVER_S, request, result, run_step, write_request  # noqa: E402


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
        "convergence",
        "op_counts",
        "versions",
    ]
    assert doc["status"] == "ok" and doc["reason"] is None
    assert doc["implementation"] == "python-eager" and doc["clock"] == "steady_clock"
    assert len(doc["warmup"]) == 3 and len(doc["steps"]) == 10
    assert doc["stop_reason"] == "max_steps" and doc["short"] is False
    assert doc["compile_s"] is None and doc["optimizer"] == "forloop" and doc["sdpa_backend_used"] is None
    assert doc["convergence"] is None  # a throughput run
    assert doc["op_counts"] is None  # counted only when asked (count_steps)
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
        flags=["flash"],
        sdpa_backend="auto",
        model={"dropout": dropout},
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
    # The smallest positive cap (0 is not a valid one): any step that advances the clock at all reaches it, so every
    # machine stops each phase after its first step, however fast.
    directory = request_dir(timing={"warmup": 3, "min_steps": 10, "max_steps": 10, "max_time_s": math.ulp(0.0)})
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    assert doc["status"] == "ok" and doc["stop_reason"] == "max_time" and doc["short"] is True
    assert len(doc["warmup"]) == 1 and len(doc["steps"]) == 1  # each phase stops after its first step


def test_a_bad_request_exits_2_naming_the_key(request_dir):
    directory = request_dir()
    bad = json.loads((directory / "request.json").read_text())
    del bad["config"]["timing"]["max_noise"]
    (directory / "request.json").write_text(json.dumps(bad))
    run = run_step(directory)
    assert run.returncode == 2
    assert "missing key 'config.timing.max_noise'" in run.stderr
    assert not (directory / "result.json").exists()
    assert run_step(directory / "nowhere").returncode == 2


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.update(implementation="python-jit"), "'implementation' must be one of"),
        (lambda r: r["config"].update(batch_size=0), "'config.batch_size': 0 is less than the minimum of 1"),
        (lambda r: r["config"].update(flags="flash"), "'config.flags': 'flash' is not of type 'array'"),
        (lambda r: r["config"]["model"].update(n_head=3), "'config': n_head (3) must divide n_embd (64)"),
        (lambda r: r["config"]["model"].update(n_head=0), "'config.model.n_head': 0 is less than the minimum of 1"),
        (lambda r: r["config"].update(sdpa_backend="fastest"), "'config.sdpa_backend': 'fastest' is not one of"),
        (lambda r: r["config"]["model"].update(dropout=1.0), "'config.model.dropout': 1.0 is greater than or equal"),
        (lambda r: r["config"].update(lr=float("nan")), "NaN is not a JSON number"),
        (lambda r: r["config"].update(lr=-1), "'config.lr': -1 is less than the minimum of 0"),
        (lambda r: r["config"]["timing"].update(max_time_s=0), "'config.timing.max_time_s': 0 is less than or equal"),
        (lambda r: r["config"].pop("adamw_eps"), "missing key 'config.adamw_eps'"),
        (lambda r: r.update(seed=1), "unknown key 'seed'"),
        (lambda r: r["config"].update(seq_len=129), "'config.seq_len' 129 exceeds 'config.model.context_length' 128"),
        (lambda r: r["config"]["timing"].update(max_steps=14), "'batches_rows' 16 is fewer than the 3 warm-up + 14"),
        (lambda r: r.update(count_steps=4), "+ 4 counted ('count_steps') could use"),
        (lambda r: r.update(count_steps=-1), "'count_steps' must be an integer >= 0, got -1"),
        (lambda r: r["config"].update(flags=["pinned_memory"]), "'config.flags': pinned_memory needs a CUDA device"),
        (lambda r: r["config"].update(flags=["muon"]), "'ns_dtype' must name the dtype Newton-Schulz runs in"),
        (
            lambda r: r.update(implementation="python-compile") or r["config"]["timing"].update(warmup=0),
            "'config.timing.warmup' must be at least 1 for python-compile",
        ),
    ],
)
def test_invalid_requests_are_usage_errors(tmp_path, change, message):
    req = request()
    change(req)
    directory = tmp_path / "request"
    write_request(directory, request())
    (directory / "request.json").write_text(json.dumps(req))
    with pytest.raises(UsageError) as error:
        read_request(directory)
    assert message in str(error.value)


def test_an_option_the_step_does_not_read_is_accepted(tmp_path):
    # A new flag's options reach the request's config from their declaration (tests/ablations/flag_table/throwaway_flag_test.cpp)
    # with no line here: results/schema.json lets a reader ignore the keys it does not know.
    directory = write_request(tmp_path / "r", request(throwaway_rows=12, throwaway_mode="blocking"))
    assert read_request(directory)[0]["batch_size"] == 4


def test_invalid_data_files_are_usage_errors(tmp_path):
    directory = write_request(tmp_path / "request", request())
    tokens = np.fromfile(directory / "tokens.bin", dtype="<u2")
    starts = np.fromfile(directory / "batches.bin", dtype="<i8")
    starts[:-1].tofile(directory / "batches.bin")
    with pytest.raises(UsageError, match="expected batches_rows x batch_size int64 = 16 x 4 x 8 = 512"):
        read_request(directory)
    starts[-1] = len(tokens) - 64  # its window would end one token past the stream
    starts.tofile(directory / "batches.bin")
    with pytest.raises(UsageError, match="window starts must lie in"):
        read_request(directory)
    starts[-1] = 0
    starts.tofile(directory / "batches.bin")
    tokens[5] = 50257
    tokens.tofile(directory / "tokens.bin")
    with pytest.raises(UsageError, match="token id 50257 is outside the vocabulary of 50257"):
        read_request(directory)
    (directory / "weights.safetensors").unlink()
    with pytest.raises(UsageError, match="weights.safetensors is missing"):
        read_request(directory)
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
        request(flags=["flash"], sdpa_backend="efficient", timing={"warmup": 0, "min_steps": 1, "max_steps": 1}),
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
        describe(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.\nmore"))
        == "out of memory: CUDA out of memory. Tried to allocate 2.00 GiB."
    )
    assert (
        describe(RuntimeError("backend='inductor' raised:\nCompilationError: bad\n  trace"))
        == "RuntimeError: backend='inductor' raised: CompilationError: bad"
    )
    assert describe(StepFailure("loss is nan at measured step 3")) == "loss is nan at measured step 3"
    assert describe(KeyboardInterrupt()) == "interrupted"


# ---------------------------------------------------------------- the learning-rate schedule and training to a target

TARGET = {
    "loss": 3.0,
    "eval_every": 4,
    "eval_batches": 2,
    "max_steps": 40,
    "step_budget": None,
    "max_time_s": NEVER_S,
    "warmup_steps": 2,
    "seeds": 1,
}


def test_the_cosine_schedule_is_the_engines():
    # bench/lr_schedule.cpp's lr_at: linear warm-up to the base rate over steps 0..1, cosine down to 0.1 x base
    # at step 10, flat after (tests/bench/lr_schedule_test.cpp holds the C++ side to the same points).
    schedule = LrSchedule({"kind": "cosine", "warmup_steps": 2, "decay_steps": 10, "min_ratio": 0.1}, 1.0)
    assert [schedule.lr_at(i) for i in (0, 1, 2)] == pytest.approx([1 / 3, 2 / 3, 1.0], abs=1e-15)
    assert schedule.lr_at(6) == pytest.approx(0.1 + 0.5 * 0.9, abs=1e-15)  # half way: cos(pi / 2) = 0
    assert schedule.lr_at(10) == schedule.lr_at(500) == pytest.approx(0.1, abs=1e-15)
    constant = LrSchedule({"kind": "constant", "warmup_steps": 0, "decay_steps": 0, "min_ratio": 0.1}, 5e-4)
    assert {constant.lr_at(i) for i in range(20)} == {5e-4}


def test_the_schedule_drives_the_optimizer(request_dir):
    # A schedule that decays to zero at once (min_ratio 0, decay at step 0) leaves the weights where they started:
    # every measured loss is the first one. Constant, the model learns.
    frozen = {"kind": "cosine", "warmup_steps": 0, "decay_steps": 0, "min_ratio": 0.0}
    directory = request_dir(lr_schedule=frozen, timing={"warmup": 0})
    assert run_step(directory).returncode == 0
    losses = [s["loss"] for s in result(directory)["steps"]]
    assert max(losses) - min(losses) < 0.05  # batches differ a little, the weights not at all
    directory = request_dir(timing={"warmup": 0})
    assert run_step(directory).returncode == 0
    losses = [s["loss"] for s in result(directory)["steps"]]
    assert losses[-1] < losses[0] - 0.5


def test_training_to_a_target_reaches_it_and_records_the_curve(request_dir):
    directory = request_dir(target=TARGET, lr=1e-2, batches_rows=40)
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    conv = doc["convergence"]
    assert doc["status"] == "ok" and doc["stop_reason"] == "target" and conv["reached"] is True
    curve = conv["curve"]
    assert curve[0]["step"] == 0 and curve[0]["train_loss"] is None and curve[0]["time_s"] == 0
    assert 10 < curve[0]["val_loss"] < 12  # the untrained model
    assert [p["step"] for p in curve] == list(range(0, conv["steps"] + 1, TARGET["eval_every"]))
    assert curve[-1]["val_loss"] <= TARGET["loss"] < curve[-2]["val_loss"]  # the first evaluation at the target
    assert conv["tokens"] == conv["steps"] * 4 * 64 and len(doc["steps"]) == conv["steps"]
    # The clock runs only around training steps: the time to target is the sum of the timed steps.
    assert conv["time_s"] == pytest.approx(sum(s["ms"] for s in doc["steps"]) / 1e3)
    assert conv["warmup_s"] > 0 and conv["eval_s"] > 0
    assert json.loads((directory / "progress.json").read_text()) == curve


def test_the_warm_up_is_undone(request_dir, tmp_path):
    # Weights, optimizer state, data order and dropout seed restored: with dropout on, a run warmed up for three
    # steps trains exactly as one with no warm-up at all.
    runs = []
    for warmup in (0, 3):
        directory = write_request(
            tmp_path / f"w{warmup}",
            request(target={**TARGET, "warmup_steps": warmup}, model={"dropout": 0.1}, lr=1e-2, batches_rows=40),
        )
        assert run_step(directory).returncode == 0
        runs.append(result(directory))
    assert [s["loss"] for s in runs[0]["steps"]] == [s["loss"] for s in runs[1]["steps"]]
    assert runs[0]["convergence"]["curve"][1]["val_loss"] == runs[1]["convergence"]["curve"][1]["val_loss"]


def test_a_step_budget_trains_on_past_the_target_to_exactly_the_horizon(request_dir):
    # The declared horizon, as the engine's (bench/measure/convergence.cpp): the first crossing is the time to target,
    # and the seed trains on to step 30, evaluated there off the grid of K; one that has not crossed by a horizon of 3
    # stops there, censored.
    directory = request_dir(target={**TARGET, "step_budget": 30}, lr=1e-2, batches_rows=40)
    assert run_step(directory).returncode == 0
    doc = result(directory)
    conv = doc["convergence"]
    assert conv["reached"] is True and conv["steps"] < 30 and doc["stop_reason"] == "target"
    assert [p["step"] for p in conv["curve"]] == [*range(0, 29, 4), 30] and len(doc["steps"]) == 30
    directory = request_dir(target={**TARGET, "loss": 0.0, "max_steps": 8, "step_budget": 3}, batches_rows=8)
    assert run_step(directory).returncode == 0
    doc = result(directory)
    assert doc["stop_reason"] == "step_budget" and doc["convergence"]["reached"] is False
    assert [p["step"] for p in doc["convergence"]["curve"]] == [0, 3] and len(doc["steps"]) == 3


def test_a_target_out_of_reach_stops_at_the_step_cap(request_dir):
    directory = request_dir(target={**TARGET, "loss": 0.0, "max_steps": 8}, batches_rows=8)
    assert run_step(directory).returncode == 0
    doc = result(directory)
    assert doc["status"] == "ok" and doc["stop_reason"] == "max_steps"
    assert doc["convergence"]["reached"] is False and doc["convergence"]["steps"] is None
    assert [p["step"] for p in doc["convergence"]["curve"]] == [0, 4, 8]


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(target={**TARGET, "max_steps": 50}), "'batches_rows' 16 is fewer than the 2 warm-up or the 50"),
        (dict(target={**TARGET, "eval_every": 0}), "'config.target.eval_every': 0 is less than the minimum of 1"),
        (dict(target=TARGET, count_steps=2), "'count_steps' 2 counts a throughput run's steps"),
        (dict(target={k: v for k, v in TARGET.items() if k != "loss"}), "missing key 'config.target.loss'"),
        (dict(lr_schedule={"kind": "linear"}), "'config.lr_schedule.kind': 'linear' is not one of"),
    ],
)
def test_invalid_targets_are_usage_errors(tmp_path, change, message):
    directory = write_request(tmp_path / "r", request(**change))
    run = run_step(directory)
    assert run.returncode == 2 and message in run.stderr, run.stderr


def test_a_target_needs_the_validation_tokens(tmp_path):
    directory = write_request(tmp_path / "r", request(target=TARGET, batches_rows=40))
    (directory / "val_tokens.bin").unlink()
    run = run_step(directory)
    assert run.returncode == 2 and "val_tokens.bin is missing" in run.stderr, run.stderr
