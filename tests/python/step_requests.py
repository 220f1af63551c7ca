"""Helpers for the tests of bench/python: the tiny preset, and request directories for step.py as the C++ harness
writes them. A plain module (not conftest.py): tests/reports imports its own conftest by name."""

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
STEP = ROOT / "bench" / "python" / "step.py"
sys.path.insert(0, str(ROOT / "bench" / "python"))

from request import READS, settings  # noqa: E402

from model import GPT, GPTConfig  # noqa: E402

# model/config.cpp's tiny preset: 2 layers, 2 heads, width 64, context 128, GPT-2's vocabulary; batch 4 at sequence 64.
TINY = dict(vocab_size=50257, context_length=128, n_embd=64, n_head=2, n_layer=2)
# A time cap no test run reaches (11.6 days): step caps end every run, so how fast the machine is never decides a
# stop reason; run_step's timeout is the hang guard.
NEVER_S = 1e6


def tiny_config(**flags):
    return GPTConfig(**{**TINY, "dropout": 0.0, **flags})


def request(
    flags=(),
    implementation="python-eager",
    dropout_seed=124,
    ns_dtype=None,
    count_steps=0,
    batches_rows=16,
    **config,
):
    """A request.json for the tiny preset on CPU, as bench/python/python_step.cpp writes it: `config` is the result's
    config section (ablations/run/result_document.cpp's config_json) with `flags` in effect; the other keywords update it
    (nested dicts such as model, timing, lr_schedule and target are updated, not replaced)."""
    section = {
        "preset": "tiny",
        "model": {**TINY, "dropout": 0.0, "qkv_bias": False, "parameters": 6540800, "flops_per_token": 19995264.0},
        "batch_size": 4,
        "base_batch_size": 4,
        "seq_len": 64,
        "flags": list(flags),
        "flags_requested": list(flags),
        "flags_skipped": [],
        "bf16_mode": None,
        "optimizer": "forloop",
        "precision": "fp32",
        "device": "cpu",
        "seed": 123,
        "lr": 5e-4,
        "weight_decay": 0.1,
        "adamw_beta1": 0.9,
        "adamw_beta2": 0.999,
        "adamw_eps": 1e-8,
        "timing": {
            "warmup": 3,
            "min_steps": 10,
            "max_steps": 10,
            "max_noise": 0.0,
            "max_time_s": NEVER_S,
            "check_every": 5,
            "host_sync": "lagged",
            "clock": "steady_clock",
        },
        "lr_schedule": {
            "kind": "constant",
            "warmup_steps": 0,
            "decay_steps": 0,
            "min_ratio": 0.1,
            "cooldown_steps": None,
        },
        "target": None,
    }
    # Every other key the step reads is a flag option, null while its flag is off, as the engine writes it.
    section = {**dict.fromkeys(READS[()]), **section}
    for key, value in config.items():
        if isinstance(value, dict) and isinstance(section.get(key), dict):
            section[key] = {**section[key], **value}
        else:
            section[key] = value
    return {
        "implementation": implementation,
        "config": section,
        "dropout_seed": dropout_seed,
        "ns_dtype": ns_dtype,
        "count_steps": count_steps,
        "batches_rows": batches_rows,
    }


def write_request(directory, req, weights=None, seed=123):
    """request.json, weights.safetensors (the model's own seeded initialisation unless given), tokens.bin (a short
    repeating pattern the model learns within a few steps) and batches.bin (rows x B window starts)."""
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "request.json").write_text(json.dumps(req))
    if weights is None:
        torch.manual_seed(seed)
        model = GPT(GPTConfig(**settings(req)["model"]))
        weights = {name: p.detach().clone() for name, p in model.named_parameters()}
    save_file(weights, str(directory / "weights.safetensors"))
    T, B, rows = req["config"]["seq_len"], req["config"]["batch_size"], req["batches_rows"]
    tokens = (np.arange(64 * (T + 1)) * 7 % 16 + 100).astype("<u2")  # 16 distinct ids, period 16
    tokens.tofile(directory / "tokens.bin")
    rng = np.random.default_rng(seed)
    windows = (len(tokens) - 1) // T  # non-overlapping windows of T+1 tokens, as the C++ sampler's
    starts = np.stack([rng.permutation(windows)[:B] * T for _ in range(rows)]).astype("<i8")
    starts.tofile(directory / "batches.bin")
    if req["config"]["target"]:  # held-out text: the same pattern, consecutive windows
        tokens.tofile(directory / "val_tokens.bin")
    return directory


def run_step(directory, timeout=600, env=None, cold=False):
    """step.py on a request directory as the harness runs it on a CPU: in a child of the warm server (serve.py), whose
    stdout and stderr both land in the request's step.log; in a fresh interpreter when `cold` or given an `env`."""
    if cold or env:
        return subprocess.run(
            [sys.executable, str(STEP), str(directory)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    status = WarmServer.shared().run(directory, timeout)
    log_path = Path(directory) / "step.log"
    log = log_path.read_text() if log_path.exists() else ""
    return subprocess.CompletedProcess([str(STEP), str(directory)], status, stdout=log, stderr=log)


class WarmServer:
    """`step.py --serve`, read a line at a time with a hang guard on each."""

    _shared = None

    @classmethod
    def shared(cls):
        if cls._shared is None or cls._shared.process.poll() is not None:
            cls._shared = cls()
        return cls._shared

    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, str(STEP), "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.pending = b""
        self.expect("ready", 600)

    def line(self, timeout):
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.process.stdout], [], [], timeout)
            chunk = os.read(self.process.stdout.fileno(), 4096) if ready else b""
            if not chunk:
                raise RuntimeError(f"step.py --serve: no answer ({'it ended' if ready else f'{timeout} s'})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def expect(self, word, timeout):
        line = self.line(timeout)
        assert line.split(" ", 1)[0] == word, f"step.py --serve answered {line!r}, not {word!r}"
        return line.partition(" ")[2]

    def send(self, directory):
        self.process.stdin.write(f"{directory}\n".encode())
        self.process.stdin.flush()

    def run(self, directory, timeout):
        """Sends a request directory; returns the child's exit status."""
        self.send(directory)
        self.expect("started", timeout)
        return int(self.expect("exited", timeout))


def result(directory):
    return json.loads((Path(directory) / "result.json").read_text())
