"""A read-only view of one stepwise result file, with the accessors every report needs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, eq=False)
class Result:
    path: Path
    data: dict[str, Any]

    # --- identity -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def run_id(self) -> str:
        return self.data["run_id"]

    @property
    def status(self) -> str:
        return self.data["status"]

    @property
    def reason(self) -> str | None:
        return self.data.get("reason")

    @property
    def ok(self) -> bool:
        # A result that says ok but carries no statistics has nothing to put in a ratio.
        return self.status == "ok" and bool(self.data.get("summary")) and self.tokens_per_s is not None

    # --- suite --------------------------------------------------------------------------------
    @property
    def suite(self) -> dict | None:
        return self.data.get("suite")

    @property
    def suite_name(self) -> str:
        return self.suite["name"] if self.suite else "single"

    @property
    def suite_kind(self) -> str:
        return self.suite["kind"] if self.suite else "single"

    @property
    def index(self) -> int:
        return self.suite["index"] if self.suite else 0

    @property
    def added(self) -> list[str]:
        return list(self.suite.get("added") or []) if self.suite else []

    @property
    def removed(self) -> list[str]:
        return list(self.suite.get("removed") or []) if self.suite else []

    @property
    def label(self) -> str:
        if self.suite and self.suite.get("label"):
            return self.suite["label"]
        return "+".join(self.flags) or "baseline"

    # --- configuration ------------------------------------------------------------------------
    @property
    def config(self) -> dict:
        return self.data["config"]

    @property
    def flags(self) -> list[str]:
        return list(self.config.get("flags") or [])

    @property
    def preset(self) -> str:
        return self.config["preset"]

    @property
    def batch_size(self) -> int:
        return self.config["batch_size"]

    @property
    def seq_len(self) -> int:
        return self.config["seq_len"]

    @property
    def config_key(self) -> tuple:
        """What makes two results the same configuration, whatever their file names."""
        return (self.preset, tuple(sorted(self.flags)), self.batch_size, self.seq_len)

    # --- environment --------------------------------------------------------------------------
    @property
    def env(self) -> dict:
        return self.data["env"]

    @property
    def device_name(self) -> str:
        return self.env["device_name"]

    @property
    def device_kind(self) -> str:
        return self.env["device_kind"]

    @property
    def device_key(self) -> str:
        """Results are only ever put in one ratio when this string is equal."""
        return f"{self.device_name} ({self.device_kind})"

    @property
    def timestamp(self) -> str:
        return self.env.get("timestamp") or ""

    @property
    def git_commit(self) -> str:
        return self.env.get("git_commit") or "unknown"

    @property
    def git_dirty(self) -> bool:
        return bool(self.env.get("git_dirty"))

    @property
    def flags_info(self) -> list[dict]:
        return list(self.data.get("flags_info") or [])

    # --- statistics ---------------------------------------------------------------------------
    @property
    def summary(self) -> dict:
        return self.data.get("summary") or {}

    @property
    def tokens_per_s(self) -> float | None:
        return self.summary.get("tokens_per_s")

    @property
    def tokens_per_step(self) -> int | None:
        return self.summary.get("tokens_per_step")

    @property
    def tokens_per_measured_step(self) -> float | None:
        """Tokens one step stands for in tokens_per_s (global across ranks when distributed)."""
        if self.tokens_per_s is None or not self.median_ms:
            return None
        return self.tokens_per_s * self.median_ms / 1000.0

    @property
    def step_ms(self) -> dict:
        return self.summary.get("step_ms") or {}

    @property
    def median_ms(self) -> float | None:
        return self.step_ms.get("median")

    @property
    def samples_ms(self) -> list[float]:
        return [s["ms"] for s in self.data.get("steps") or [] if s.get("ms") is not None]

    @property
    def peak_reserved_bytes(self) -> int | None:
        return (self.summary.get("memory") or {}).get("peak_reserved_bytes")

    @property
    def memory_kind(self) -> str | None:
        return (self.summary.get("memory") or {}).get("kind")

    @property
    def mfu(self) -> float | None:
        """Model FLOPs utilisation as a fraction of the device's peak (None when the peak is unknown)."""
        return (self.summary.get("mfu") or {}).get("value")

    @property
    def mfu_reason(self) -> str | None:
        return (self.summary.get("mfu") or {}).get("reason")

    @property
    def loss_status(self) -> str | None:
        return ((self.summary.get("loss") or {}).get("check") or {}).get("status")

    # --- optional sections --------------------------------------------------------------------
    @property
    def trace(self) -> dict | None:
        return self.data.get("trace")

    @property
    def distributed(self) -> dict | None:
        return self.data.get("distributed")

    @property
    def world_size(self) -> int:
        return int((self.distributed or {}).get("world_size") or 1)
