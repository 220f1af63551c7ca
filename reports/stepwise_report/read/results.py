"""A result document as the report reads it: the Result view of one configuration, grouped into runs and suites.

Every table, figure, export and gate starts from the same few types, so they live here, near the bottom: a Result per
configuration (one stepwise result file, of stepwise's libtorch step or of a PyTorch Python implementation run beside
it) with the accessors every report needs — the flags asked for and the flags in effect, the noise against its own
--max-noise, whether the CPU computes bf16 natively — and Runs and SuiteGroups that group results the way
./run_all.sh wrote them (suites hold libtorch rows only). InputError is the one error the command line turns into
exit status 2.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


class InputError(Exception):
    """Bad input or bad usage: the message names the problem and, where there are any, the valid choices."""


def warn(message: str) -> None:
    print(f"report: warning: {message}", file=sys.stderr)


def parse_time(text: str) -> datetime:
    """An ISO 8601 time in UTC (naive times count as UTC); the earliest time when it does not parse."""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


# --- one result file -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Result:
    """A read-only view of one stepwise result file, with the accessors every report needs."""

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

    @property
    def suite_count(self) -> int | None:
        return self.suite.get("count") if self.suite else None

    @property
    def suite_labels(self) -> list[str]:
        """Every step label of the suite, in order (`suite.labels`; empty in results written before it)."""
        return list(self.suite.get("labels") or []) if self.suite else []

    # --- implementation -----------------------------------------------------------------------
    @property
    def implementation(self) -> str:
        """Who ran the step: "libtorch" (stepwise's C++; also every result written before the key existed)
        or one of the PyTorch Python implementations (IMPLEMENTATIONS)."""
        return self.data.get("implementation") or LIBTORCH

    @property
    def is_libtorch(self) -> bool:
        return self.implementation == LIBTORCH

    @property
    def config_id(self) -> tuple:
        """One configuration of a suite, as the gate keys it: suite, index, label and implementation."""
        return (self.suite_name, self.index, self.label, self.implementation)

    # --- configuration ------------------------------------------------------------------------
    @property
    def config(self) -> dict:
        return self.data["config"]

    @property
    def flags(self) -> list[str]:
        return list(self.config.get("flags") or [])

    @property
    def flags_requested(self) -> list[str]:
        """The flags asked for (`config.flags_requested`); `flags` are those in effect."""
        return list(self.config.get("flags_requested") or self.flags)

    @property
    def flags_skipped(self) -> dict[str, str]:
        """Flags asked for but not applicable on this device, with the engine's reason (`config.flags_skipped`)."""
        return {f["flag"]: f.get("reason") or "no reason given" for f in self.config.get("flags_skipped") or []}

    @property
    def flags_in_effect(self) -> list[str]:
        """What labels and groups go by: the flags this configuration ran with (`config.flags`); for one that did not
        run (skipped, failed), the flags it would have run with: those asked for, less those this device skipped."""
        if self.ok:
            return self.flags
        skipped = self.flags_skipped
        return [f for f in self.flags_requested if f not in skipped]

    @property
    def added_in_effect(self) -> list[str]:
        """The flags this step adds (`suite.added`) less those this device skipped: a CPU run's step that adds tf32
        and fused_adamw adds only fused_adamw."""
        skipped = self.flags_skipped
        return [f for f in self.added if f not in skipped]

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
    def optimizer(self) -> str | None:
        return self.config.get("optimizer")

    @property
    def config_key(self) -> tuple:
        """What makes two results the same configuration, whatever their file names (the implementation
        included: a Python row is never the same configuration as the C++ one)."""
        return (self.implementation, self.preset, tuple(sorted(self.flags)), self.batch_size, self.seq_len)

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

    @property
    def cpu_bf16_native(self) -> bool | None:
        """On a CPU run: whether the CPU computes bf16 natively (avx512_bf16 or amx_bf16); None on a GPU or
        in results written before the key existed."""
        value = self.env.get("cpu_bf16_native")
        return None if value is None else bool(value)

    @property
    def host_allocator_mode(self) -> str | None:
        """The host allocator the measuring process ran under: "off" (the C library's malloc as it comes),
        "glibc-tunables", "jemalloc" or "tcmalloc"; None in results written before env.host_allocator."""
        return (self.env.get("host_allocator") or {}).get("mode")

    @property
    def cpu_capability(self) -> str | None:
        """The level ATen's CPU kernels dispatch at (AVX512, AVX2, ...); None in results written before it."""
        return self.env.get("cpu_capability")

    @property
    def bf16_emulated_because(self) -> str | None:
        """Why bf16 is not native on this CPU, when the engine says it is not (`cpu_bf16_native` false): its own
        reason (the hardware, or an ISA cap); for results written before the reason, the hardware's flags.
        None when bf16 is native, on a GPU, or unknown: nothing may then be called emulated."""
        if self.device_kind != "cpu" or self.cpu_bf16_native is not False:
            return None
        if self.env.get("cpu_bf16_emulated_because"):
            return str(self.env["cpu_bf16_emulated_because"])
        if not self.env.get("cpu_bf16_flags"):
            return "the CPU has no avx512_bf16 or amx_bf16"
        return "the engine found no native bf16 path"

    @property
    def bf16_emulated(self) -> bool:
        """bf16 is in effect on a CPU that the engine says emulates it (about 25× slower than fp32 there)."""
        return self.bf16_emulated_because is not None and "bf16" in self.flags

    # --- statistics ---------------------------------------------------------------------------
    @property
    def summary(self) -> dict:
        return self.data.get("summary") or {}

    @property
    def tokens_per_s(self) -> float | None:
        return self.summary.get("tokens_per_s")

    @property
    def tokens_per_step(self) -> float | None:
        """Tokens one step stands for in tokens_per_s (every rank's when distributed), as the engine wrote
        it in summary.tokens_per_step; only a result without that key gets tokens_per_s × median step time."""
        tokens = self.summary.get("tokens_per_step")
        if tokens is not None:
            return tokens
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
    def noise(self) -> float | None:
        """Relative half-width of the median's 95% CI; None when fewer than 2 steps were measured."""
        return self.step_ms.get("noise")

    @property
    def max_noise(self) -> float | None:
        """The noise target this result was measured with (`config.timing.max_noise`, from --max-noise)."""
        return (self.config.get("timing") or {}).get("max_noise")

    @property
    def noisy(self) -> bool:
        """The median is less certain than the run asked for: `summary.noisy` as the engine wrote it, else (results
        written before the key) its noise above its own --max-noise, or unknown (one step), as the engine decides."""
        if not self.ok:
            return False
        if "noisy" in self.summary:
            return bool(self.summary["noisy"])
        if self.noise is None:
            return True
        return self.max_noise is not None and self.noise > self.max_noise

    @property
    def throttle_reasons(self) -> list[str] | None:
        """The reasons the GPU held its clocks down during the row (`gpu_state`, read through NVML at each phase's
        edges), or None where it did not throttle or nothing was recorded (a CPU, no NVML, results before it)."""
        state = self.data.get("gpu_state") or {}
        if not state.get("throttled"):
            return None
        return list(state.get("throttle_reasons") or ["unknown"])

    @property
    def short(self) -> bool:
        """The measured phase stopped at --max-time before --min-steps steps (absent in older results: False)."""
        return bool(self.summary.get("short"))

    @property
    def compile_s(self) -> float | None:
        """Seconds of the first, compiling step (Python compiled implementations); None otherwise."""
        return self.summary.get("compile_s")

    @property
    def samples_ms(self) -> list[float]:
        return [s["ms"] for s in self.data.get("steps") or [] if s.get("ms") is not None]

    @property
    def samples_cpu_ms(self) -> list[float] | None:
        """Each step's process CPU time (`steps[].cpu_ms`, a CPU row of the C++ engine), or None where any step lacks
        it (a GPU, a Python row, results written before it)."""
        steps = self.data.get("steps") or []
        if not steps or any(s.get("cpu_ms") is None for s in steps):
            return None
        return [s["cpu_ms"] for s in steps]

    @property
    def phase_medians(self) -> list[tuple[str, float]]:
        """Where the step's time goes: each phase the step marked, in the order it runs them, with its median ms
        (`phases`, docs/measurement.md#where-the-step-goes); empty where none was recorded (older results, a target
        run, a row that did not run)."""
        section = self.data.get("phases") or {}
        return [(p["name"], p["median_ms"]) for p in section.get("phases") or []]

    @property
    def phase_note(self) -> str | None:
        return (self.data.get("phases") or {}).get("note")

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
    def loss_check(self) -> dict:
        return (self.summary.get("loss") or {}).get("check") or {}

    @property
    def loss_status(self) -> str | None:
        return self.loss_check.get("status")

    @property
    def loss_vs_libtorch(self) -> dict:
        """Python rows: their losses against the libtorch row of the same configuration (same shape as check)."""
        return (self.summary.get("loss") or {}).get("vs_libtorch") or {}

    # --- optional sections --------------------------------------------------------------------
    @property
    def trace(self) -> dict | None:
        return self.data.get("trace")

    @property
    def distributed(self) -> dict | None:
        return self.data.get("distributed")

    @property
    def sweep(self) -> dict | None:
        """The point of a sweep this result belongs to (`sweep`: id, axes, values, point, index, count); None outside a
        sweep and in results written before the key."""
        return self.data.get("sweep")

    @property
    def world_size(self) -> int:
        return int((self.distributed or {}).get("world_size") or 1)


LIBTORCH = "libtorch"
# The PyTorch Python implementations the engine runs beside its own, in the order tables show them.
PYTHON_EAGER = "python-eager"
IMPLEMENTATIONS = (
    LIBTORCH,
    PYTHON_EAGER,
    "python-compile",
    "python-compile-max-autotune",
    "python-compile-reduce-overhead",
)


def implementation_rank(name: str) -> tuple[int, str]:
    return (IMPLEMENTATIONS.index(name) if name in IMPLEMENTATIONS else len(IMPLEMENTATIONS), name)


def loss_check_reason(check: dict) -> str | None:
    """The check's own one-line reason; for results written before it had one, a line made from rel_diff."""
    if check.get("reason"):
        return check["reason"]
    rel, tol = check.get("rel_diff"), check.get("tolerance")
    if rel is None:
        return None
    text = f"window mean loss differs from the baseline's by {100 * rel:+.1f}%"
    return text + (f" (tolerance {100 * tol:g}%)" if isinstance(tol, (int, float)) else "")


def ratio_of(a: float | None, b: float | None) -> float | None:
    """a ÷ b, or None when either is missing or b is zero."""
    return None if a is None or not b else a / b


def devices(results: list[Result]) -> list[str]:
    """The distinct device keys of `results`, sorted."""
    return sorted({r.device_key for r in results})


# --- runs and suites -----------------------------------------------------------------------------

SUITE_ORDER = ("raschka", "karpathy", "one_at_a_time", "leave_one_out", "single")
_STAMP = re.compile(r"^(\d{8}T\d{6}Z)")


def run_started(results: list[Result]) -> datetime:
    """The run's start: the stamp its id begins with, else its earliest result timestamp."""
    m = _STAMP.match(results[0].run_id)
    if m:
        return datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return min(parse_time(r.timestamp) for r in results)


@dataclass
class SuiteGroup:
    """The libtorch results of one suite of one run on one device, in suite order (rows of other
    implementations are the run's `others`: they never enter a suite's tables or ratio chain)."""

    name: str
    kind: str
    device: str
    results: list[Result]

    @property
    def count(self) -> int:
        """How many configurations the suite has (`suite.count`), at least as many as are here."""
        return max([len({r.index for r in self.results})] + [r.suite_count or 0 for r in self.results])

    @property
    def labels(self) -> list[str]:
        return next((r.suite_labels for r in self.results if r.suite_labels), [])

    @property
    def missing(self) -> list[str]:
        """The configurations of the suite with no result in this run: "index label" (labels from
        `suite.labels` where the results carry it, else the index alone)."""
        if self.kind == "single":
            return []
        have, labels = {r.index for r in self.results}, self.labels
        return [f"{i} {labels[i]}" if i < len(labels) else str(i) for i in range(self.count) if i not in have]

    @property
    def incomplete(self) -> str | None:
        """'incomplete: 5 of 11' when configurations are missing, else None."""
        return f"incomplete: {self.count - len(self.missing)} of {self.count}" if self.missing else None


@dataclass
class Run:
    run_id: str
    results: list[Result]  # every implementation
    started: datetime
    suites: list[SuiteGroup] = field(default_factory=list)  # libtorch rows only
    messages: list[str] = field(default_factory=list)

    @property
    def libtorch(self) -> list[Result]:
        return [r for r in self.results if r.is_libtorch]

    @property
    def others(self) -> list[Result]:
        """Rows of the PyTorch Python implementations, run beside the libtorch rows of the same configuration."""
        return [r for r in self.results if not r.is_libtorch]

    @property
    def first(self) -> Result:
        return self.results[0]

    @property
    def devices(self) -> list[str]:
        return devices(self.results)

    def suite(self, name: str, device: str) -> SuiteGroup | None:
        return next((s for s in self.suites if s.name == name and s.device == device), None)


def suite_rank(name: str) -> tuple[int, str]:
    """Where a suite sorts: SUITE_ORDER's suites in that order, any other after them by name."""
    return (SUITE_ORDER.index(name) if name in SUITE_ORDER else len(SUITE_ORDER), name)


def group_suites(run_id: str, results: list[Result]) -> tuple[list[SuiteGroup], list[str]]:
    """One group per suite and device (a ratio never crosses devices) of the libtorch rows, and a message per
    suite that had to be split."""
    by_suite: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.is_libtorch:
            by_suite[r.suite_name].append(r)
    groups: list[SuiteGroup] = []
    messages: list[str] = []
    for name in sorted(by_suite, key=suite_rank):
        by_device: dict[str, list[Result]] = defaultdict(list)
        for r in by_suite[name]:
            by_device[r.device_key].append(r)
        if len(by_device) > 1:
            messages.append(
                f"run {run_id}, suite {name}: results come from {len(by_device)} devices "
                f"({'; '.join(sorted(by_device))}); shown as one table per device, with no ratio across devices"
            )
        for device in sorted(by_device):
            rows = sorted(by_device[device], key=lambda r: (r.index, r.name))
            groups.append(SuiteGroup(name, rows[0].suite_kind, device, rows))
    return groups, messages


def group_runs(results: list[Result]) -> list[Run]:
    """Runs, newest first; each with its suites split by device."""
    by_run: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_run[r.run_id].append(r)
    runs = []
    for run_id, members in by_run.items():
        members.sort(key=lambda r: (suite_rank(r.suite_name), r.index, implementation_rank(r.implementation), r.name))
        suites, messages = group_suites(run_id, members)
        runs.append(Run(run_id, members, run_started(members), suites, messages))
    # The points of a sweep share its stamp; they ran in the sweep's order, so a later point is a newer run.
    runs.sort(key=lambda run: (run.started, (run.first.sweep or {}).get("index", 0), run.run_id), reverse=True)
    return runs
