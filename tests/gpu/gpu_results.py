"""The results the gpu tests read: stepwise result documents, the lookups the tests make, and the small runs a GPU
machine makes of its own when no results are given (tests/gpu/conftest.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The report's reader of result documents (the standard library only: the node's python runs these tests).
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.read.inputs import read_results  # noqa: E402

RESULTS_ENV = "STEPWISE_GPU_RESULTS"
ABLATE = Path(os.environ.get("STEPWISE_BIN") or ROOT / "build" / "ablations" / "ablate")
# The runs a GPU machine makes when no results are given: the rows each test reads, at a small size. Capped in steps
# and batches (--max-steps, --max-batch-limit); the probe's time cap is only a guard against a hang.
SMALL = [
    "--preset=gpt2-124m",
    "--batch-size=4",
    "--seq-len=256",
    "--warmup=3",
    "--steps=5",
    "--max-steps=5",
    "--max-batch-limit=16",
    "--max-batch-time=600",
    "--no-progress",
]
# What one step dispatches (--count-ops) where a GPU step is launch-bound: the eager flags beside Python eager, then
# the same step as a CUDA graph beside torch.compile (scripts/verify/steps.py's pass 3 runs them as one suite).
COUNTED = "dynamic_mask,tf32,fused_adamw,bf16,native_layers,flash,vocab_padding"
COUNTS = [
    "--preset=tiny",
    "--bf16-mode=autocast",
    "--warmup=3",
    "--min-steps=5",
    "--max-steps=5",
    "--count-ops",
    "--no-progress",
]
OWN_RUNS = {
    "raschka": ["--suite=raschka", *SMALL],
    "karpathy": ["--suite=karpathy", "--trace", *SMALL],
    "ddp_eager": [*SMALL],  # data parallel alone, before anything is stacked on it
    "ddp": ["--enable=all", "--disable=max_batch,host_allocator", *SMALL],
    "fp8_rowwise": ["--enable=bf16,fp8", "--bf16-mode=autocast", "--fp8-scaling=rowwise", "--fp8-every-layer", *SMALL],
    "checkpoint": ["--enable=checkpoint", "--vs-baseline", *SMALL],
    "chunked_ce": ["--enable=chunked_ce", "--vs-baseline", *SMALL],
    "max_batch": ["--enable=max_batch", *SMALL],
    "max_batch_checkpoint": ["--enable=max_batch,checkpoint", *SMALL],
    "max_batch_chunked_ce": ["--enable=max_batch,chunked_ce", *SMALL],
    "counts_eager": [f"--enable={COUNTED}", "--implementations=libtorch,python-eager", *COUNTS],
    "counts_graph": [f"--enable={COUNTED},compile", "--implementations=libtorch,python-compile", *COUNTS],
}


@dataclass
class Results:
    """Result documents of one or more runs, with the lookups the gpu tests make."""

    docs: list[dict]
    source: str

    @classmethod
    def load(cls, directory: Path, source: str) -> Results:
        """The result documents under directory, as the report's reader finds them. Each test reads the keys of its
        property where they are (tests/scripts/test_gpu_checks.py holds them to made-up documents of those keys
        alone), so they are not checked against the schema here: the pass's ./report step checks the same results."""
        return cls([r.data for r in read_results([directory], validate=False)], source)

    def rows(self, suite: str | None = None, added: str | None = None) -> list[dict]:
        """The libtorch rows that finished ok, in suite order."""
        found = [
            d
            for d in self.docs
            if d.get("status") == "ok"
            and d.get("implementation", "libtorch") == "libtorch"
            and (suite is None or (d.get("suite") or {}).get("name") == suite)
            and (added is None or added in ((d.get("suite") or {}).get("added") or []))
        ]
        return sorted(found, key=lambda d: d["suite"]["index"])

    def row(self, suite: str, added: str | None = None, index: int | None = None) -> dict:
        """The libtorch row of `suite` that adds `added` (or at `index`), finished ok on a CUDA device; else the test
        skips, saying why (a step that did not finish fails on its own line of verify.md)."""
        found = [
            d
            for d in self.docs
            if d.get("implementation", "libtorch") == "libtorch"
            and (d.get("suite") or {}).get("name") == suite
            and (added is None or added in (d["suite"].get("added") or []))
            and (index is None or d["suite"].get("index") == index)
        ]
        what = f"the {suite} row " + (f"adding {added}" if added else f"at {index}")
        if not found:
            pytest.skip(f"{what} is not in {self.source}")
        d = found[0]
        if d.get("status") != "ok":
            pytest.skip(f"{what} did not run: {d.get('status')}: {d.get('reason')}")
        if not on_cuda(d):
            pytest.skip(f"{what} ran on {d['config'].get('device')}, not on a CUDA device")
        return d

    def counted(self, implementation: str = "libtorch") -> list[dict]:
        """The rows of `implementation` that finished ok on a CUDA device with their steps counted (--count-ops)."""
        return [
            d
            for d in self.docs
            if d.get("status") == "ok"
            and d.get("implementation", "libtorch") == implementation
            and on_cuda(d)
            and (d.get("op_counts") or {}).get("status") == "ok"
        ]

    def with_flags(self, flags: set[str]) -> list[dict]:
        """The libtorch rows that finished ok whose requested flags are exactly `flags`, on any device (a result that
        does not say which flags it requested is none of them)."""
        requested = [(d, (d.get("config") or {}).get("flags_requested")) for d in self.rows()]
        return [d for d, r in requested if r is not None and set(r) == flags]

    def pairs(self, flags: set[str], reference: set[str], same_run: bool) -> list[tuple[dict, dict]]:
        """Each row of `flags` with the row of `reference` it is held against: of the same run (one process's
        baseline: the same shape and allocator), or else of the same preset, device and sequence length (the
        largest-batch probes run one process each)."""

        def key(d: dict) -> tuple:
            c = d.get("config") or {}
            return (d.get("run_id"),) if same_run else (c.get("preset"), c.get("device"), c.get("seq_len"))

        references = {key(d): d for d in self.with_flags(reference)}
        return [(d, references[key(d)]) for d in self.with_flags(flags) if key(d) in references]

    def gpu_side_uncounted(self) -> str | None:
        """Why a counted C++ row could not count its GPU's side (Kineto recorded no kernel: CUPTI did not load on this
        node), or None: the node's limit, which the tests that need those counts skip naming."""
        for d in self.counted("libtorch"):
            reason = d["op_counts"].get("gpu_side_unavailable")
            if reason:
                return f"{d['suite']['label']}: {reason}"
        return None


def on_cuda(doc: dict) -> bool:
    return str((doc.get("config") or {}).get("device", "")).startswith("cuda")


def cuda_unavailable() -> str | None:
    try:
        import torch
    except ImportError as e:
        return f"torch is not importable ({e})"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_own(out: Path) -> Path:
    """OWN_RUNS on the GPU into out."""
    for name, args in OWN_RUNS.items():
        env = {**os.environ, "STEPWISE_TEST_DEVICE": "cuda"}
        if name.startswith("ddp"):
            env.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        run = subprocess.run(
            [str(ABLATE), "--device=cuda", *args, f"--out={out / name}"],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
        assert run.returncode in (0, 1), f"{name}: exit {run.returncode}: {run.stderr[-2000:]}"
    return out
