"""What ./report reads: the files under RESULTS, checked and held as read-only views.

Every table, figure, export and gate starts from the same few types, so they live here, below everything
else: a Result per configuration (one stepwise result file, of stepwise's libtorch step or of a PyTorch
Python implementation run beside it), Runs and SuiteGroups that group them the way ./run_all.sh wrote them
(suites hold libtorch rows only), each suite's ratio chain (× previous, × baseline: the numbers the report and the gate
both build on), and a MicroFile per google/benchmark JSON file from stepwise_micro. Loading decides what a
file is (result, micro-benchmark file, or someone else's JSON to skip) and refuses what it cannot read with
InputError, the one error the command line turns into exit status 2.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache, cached_property
from pathlib import Path
from statistics import median
from typing import Any

# 1: the window-mean loss check; 2: the drop-and-end loss check (results/README.md). Both read.
SUPPORTED_SCHEMA_VERSIONS = (1, 2)
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "results" / "schema.json"


class InputError(Exception):
    """Bad input or bad usage: the message names the problem and, where there are any, the valid choices."""


def warn(message: str) -> None:
    print(f"report: warning: {message}", file=sys.stderr)


def parse_time(text: str) -> datetime:
    """An ISO 8601 time in UTC (naive times count as UTC); the earliest time when it does not parse."""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


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
    def short(self) -> bool:
        """The measured phase stopped at --max-time before --steps steps (absent in older results: False)."""
        return bool(self.summary.get("short"))

    @property
    def compile_s(self) -> float | None:
        """Seconds of the first, compiling step (Python compiled implementations); None otherwise."""
        return self.summary.get("compile_s")

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
    def world_size(self) -> int:
        return int((self.distributed or {}).get("world_size") or 1)


LIBTORCH = "libtorch"
# The PyTorch Python implementations the engine runs beside its own, in the order tables show them.
PYTHON_EAGER = "python-eager"
IMPLEMENTATIONS = (LIBTORCH, PYTHON_EAGER, "python-compile", "python-compile-max-autotune",
                   "python-compile-reduce-overhead")


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
        return datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
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


def _suite_rank(name: str) -> tuple[int, str]:
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
    for name in sorted(by_suite, key=_suite_rank):
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
        members.sort(key=lambda r: (_suite_rank(r.suite_name), r.index, implementation_rank(r.implementation), r.name))
        suites, messages = group_suites(run_id, members)
        runs.append(Run(run_id, members, run_started(members), suites, messages))
    runs.sort(key=lambda run: (run.started, run.run_id), reverse=True)
    return runs


# --- the ratio chain of one suite ----------------------------------------------------------------


@dataclass
class Step:
    """One configuration of a suite with its × previous (last ok step before it) and × baseline."""

    result: Result
    x_previous: float | None = None
    previous: "Step | None" = None
    # Labels of the skipped or failed steps between `previous` and this one: their flags are
    # still in effect here, so × previous spans them.
    spans: list[str] = field(default_factory=list)
    x_baseline: float | None = None
    base: "Step | None" = None  # what × baseline is against

    @property
    def index(self) -> int:
        return self.result.index

    @property
    def label(self) -> str:
        return self.result.label

    @property
    def added(self) -> list[str]:
        return self.result.added

    @property
    def ok(self) -> bool:
        return self.result.ok


def build_chain(results: list[Result]) -> list[Step]:
    """Steps in suite order. Ratios are of tokens/s, so a step that changes the batch compares fairly.

    × previous only exists in cumulative suites (elsewhere the previous configuration is unrelated).
    × baseline is against index 0: the baseline, or all flags for leave-one-out; lone configurations
    (no suite) are measured against the one with no flags, when there is one.
    """
    # Only libtorch rows: a Python row of the same configuration is not a step of the suite.
    steps = [Step(r) for r in sorted((r for r in results if r.is_libtorch), key=lambda r: (r.index, r.name))]
    if not steps:
        return steps
    kind = steps[0].result.suite_kind
    if kind == "single":
        base = next((s for s in steps if s.ok and not s.result.flags), None)
    else:
        base = steps[0] if steps[0].index == 0 and steps[0].ok else None
    cumulative = kind == "cumulative"
    last_ok: Step | None = None
    pending: list[str] = []
    for step in steps:
        if not step.ok:
            if last_ok is not None:
                pending.append(step.label)
            continue
        if base is not None:
            step.x_baseline = step.result.tokens_per_s / base.result.tokens_per_s
            step.base = base
        if cumulative and last_ok is not None:
            step.previous = last_ok
            step.x_previous = step.result.tokens_per_s / last_ok.result.tokens_per_s
            step.spans = pending
        last_ok, pending = step, []
    return steps


# --- micro-benchmark files (google/benchmark JSON) -----------------------------------------------

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Suffixes google/benchmark appends to a name; they say how it timed, not what it measured.
TIMING_SUFFIXES = ("manual_time", "real_time")
# Keys google/benchmark 1.7 writes itself; any other number on a row is a user counter.
_STANDARD = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
             "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
             "aggregate_unit", "error_occurred", "error_message", "label", "big_o", "rms", "complexity_n",
             "cpu_coefficient", "real_coefficient"}
_AGGREGATES = ("mean", "median", "stddev", "cv")


def is_gbench(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("context"), dict) and isinstance(data.get("benchmarks"), list)


def is_micro(data: object) -> bool:
    """stepwise_micro's output: it names each family's baseline variant in the context."""
    return is_gbench(data) and "stepwise_baselines" in data["context"]


def is_own_export(data: object) -> bool:
    """reports/exports/gbench*.json, which ./report wrote from result files (see exports.py)."""
    return is_gbench(data) and "stepwise_run_id" in data["context"]


@dataclass
class Case:
    """One benchmark name: `family/preset/variant/details.../ARG:value...[/manual_time]`."""

    name: str
    parts: list[str]
    time_unit: str = "ns"
    samples: list[float] = field(default_factory=list)  # real_time per iteration, one per repetition
    aggregates: dict[str, float] = field(default_factory=dict)  # real_time of _mean, _median, _stddev, _cv
    counters: dict[str, list[float]] = field(default_factory=dict)  # per repetition (else the _median row's)
    error: str | None = None

    @property
    def family(self) -> str:
        return self.parts[0]

    @property
    def preset(self) -> str:
        return self.parts[1] if len(self.parts) > 1 else ""

    @property
    def variant(self) -> str | None:
        return self.parts[2] if len(self.parts) > 2 else None

    @property
    def rest(self) -> tuple[str, ...]:
        """Details and arguments after the variant: what a baseline must share to be compared with."""
        return tuple(self.parts[3:])

    @property
    def ok(self) -> bool:
        return self.error is None and self.median is not None

    @property
    def scale(self) -> float:
        return UNIT_SECONDS[self.time_unit]

    @property
    def median(self) -> float | None:
        """Median time per iteration over the repetitions, in time_unit."""
        if self.samples:
            return float(median(self.samples))
        return self.aggregates.get("median", self.aggregates.get("mean"))

    @property
    def median_s(self) -> float | None:
        return None if self.median is None else self.median * self.scale

    @property
    def samples_s(self) -> list[float]:
        return [t * self.scale for t in self.samples]

    @property
    def repetitions(self) -> int:
        return len(self.samples)

    def counter(self, key: str) -> float | None:
        values = self.counters.get(key)
        return float(median(values)) if values else None


@dataclass
class MicroFile:
    """One google/benchmark JSON file (stepwise_micro's, or any other) as cases with their repetitions."""

    path: Path
    context: dict
    cases: list[Case]

    @cached_property
    def baselines(self) -> dict[str, str]:
        """Family → its baseline variant, from `stepwise_baselines` ("attention=explicit,..."); empty for
        other google/benchmark files, which then get no speedups."""
        text = self.context.get("stepwise_baselines") or ""
        pairs = (item.split("=", 1) for item in str(text).split(",") if "=" in item)
        return {k.strip(): v.strip() for k, v in pairs}

    @property
    def device(self) -> str:
        return str(self.context.get("stepwise_device") or "")

    @property
    def date(self) -> datetime:
        """When the run started, in UTC (google/benchmark writes local time with its offset)."""
        return parse_time(str(self.context.get("date") or "")).astimezone(timezone.utc)

    @property
    def manual_time(self) -> bool:
        return any(c.parts[-1] == "manual_time" for c in self.cases)

    def baseline_of(self, case: Case) -> Case | None:
        """The family's baseline variant with the same preset, details and arguments (None for itself)."""
        want = self.baselines.get(case.family)
        if want is None or case.variant is None or case.variant == want:
            return None
        return next((c for c in self.cases if c.family == case.family and c.preset == case.preset
                     and c.variant == want and c.rest == case.rest), None)

    def is_baseline(self, case: Case) -> bool:
        return self.baselines.get(case.family) == case.variant

    def speedup(self, case: Case) -> float | None:
        """Baseline variant's median time ÷ this case's: above 1 is faster than the baseline."""
        base = self.baseline_of(case)
        if base is None or not base.ok or not case.ok:
            return None
        return base.median_s / case.median_s


def _run_name(row: dict) -> str:
    if row.get("run_name"):
        return row["run_name"]
    name, agg = row["name"], row.get("aggregate_name")
    return name[: -len(agg) - 1] if agg and name.endswith("_" + agg) else name


def _check_row(path: Path, i: int, row: object) -> dict:
    if not isinstance(row, dict) or not isinstance(row.get("name"), str):
        raise InputError(f"{path}: benchmarks[{i}] has no name; not google/benchmark JSON")
    if not row.get("error_occurred"):
        if row.get("time_unit") not in UNIT_SECONDS or not isinstance(row.get("real_time"), (int, float)):
            raise InputError(f"{path}: benchmarks[{i}] ({row['name']}) needs a numeric real_time and a "
                             f"time_unit among {', '.join(UNIT_SECONDS)}")
    return row


def _counters(row: dict) -> dict[str, float]:
    return {k: float(v) for k, v in row.items()
            if k not in _STANDARD and isinstance(v, (int, float)) and not isinstance(v, bool)}


def parse_micro(path: Path, data: dict) -> MicroFile:
    """Cases in file order. Times are real_time: wall clock on CPU, the device's own clock with
    manual time (a CPU-time column would only show the launching thread)."""
    cases: dict[str, Case] = {}
    median_counters: dict[str, dict[str, float]] = {}
    for i, raw in enumerate(data["benchmarks"]):
        row = _check_row(path, i, raw)
        name = _run_name(row)
        case = cases.setdefault(name, Case(name, name.split("/")))
        if row.get("error_occurred"):
            # google/benchmark writes a skipped case once per repetition, with no aggregates.
            case.error = case.error or str(row.get("error_message") or "error (no message)")
            continue
        case.time_unit = row["time_unit"]
        if row.get("run_type", "iteration") == "iteration":
            case.samples.append(float(row["real_time"]))
            for k, v in _counters(row).items():
                case.counters.setdefault(k, []).append(v)
        elif row.get("aggregate_name") in _AGGREGATES:
            case.aggregates[row["aggregate_name"]] = float(row["real_time"])
            if row["aggregate_name"] == "median":
                median_counters[name] = _counters(row)
    for name, counters in median_counters.items():
        # Only aggregates in the file (--benchmark_report_aggregates_only): the median row's counters.
        if not cases[name].counters:
            cases[name].counters = {k: [v] for k, v in counters.items()}
    return MicroFile(path, data["context"], list(cases.values()))


# --- finding and checking files ------------------------------------------------------------------


def _read_json(path: Path) -> object:
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not readable as JSON ({e})") from e


NOT_VALIDATED = "results not validated against results/schema.json: jsonschema is not installed"


@cache
def _validator():
    """(validator, note): the results schema's validator, or None where it cannot run, with a note when the
    reader should know. The schema is the contract with the engine; where it cannot be checked (no schema
    beside an installed copy of this package, or no jsonschema, as on the GPU machines) only schema_version
    is. A missing jsonschema is said once per process, on stderr, and in the note."""
    if not SCHEMA_PATH.is_file():
        return None, None
    try:
        import jsonschema
    except ImportError:
        warn(NOT_VALIDATED)
        return None, NOT_VALIDATED
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema), None


def check_result(path: Path, data: dict, validator) -> None:
    """Raises InputError naming the file when it is not a stepwise result of a schema version this report reads."""
    version = data.get("schema_version")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise InputError(
            f"{path}: schema_version {version!r} is not supported; this report reads schema_version "
            f"{' or '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))} (see results/README.md)"
        )
    if validator is not None:
        error = next(iter(sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise InputError(f"{path}: does not match results/schema.json at {where}: {error.message}")


def _candidates(paths: list[str]) -> list[tuple[Path, bool]]:
    """(file, named explicitly) pairs; directories are searched recursively for *.json."""
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend((f, False) for f in sorted(p.rglob("*.json")) if f.is_file())
        elif p.is_file():
            found.append((p, True))
        else:
            raise InputError(f"{raw}: no such file or directory")
    return found


@dataclass
class Inputs:
    """What RESULTS hold: stepwise results and micro-benchmark files (google/benchmark JSON)."""

    results: list[Result] = field(default_factory=list)
    micro: list[MicroFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how they were read, for the report's header notes


def _explicit_other(path: Path, data: object) -> InputError:
    if is_own_export(data):
        return InputError(f"{path}: an export written by ./report (google/benchmark JSON made from result "
                          f"files); pass the result files it came from")
    return InputError(f"{path}: not a stepwise result (expected \"tool\": \"stepwise\") nor google/benchmark "
                      f"JSON (expected \"context\" and \"benchmarks\")")


def load_inputs(paths: list[str]) -> Inputs:
    """Every stepwise result and micro-benchmark file under `paths`, each file once. In directories other
    JSON is skipped, our own exports included; google/benchmark files without stepwise_micro's
    `stepwise_baselines` are read only when named explicitly (they are often someone else's). `notes` says
    when results could not be validated against the schema."""
    if not paths:
        raise InputError("no RESULTS given: pass result files or run directories (e.g. results/)")
    found = Inputs()
    seen_files: set[Path] = set()
    seen_names: dict[tuple[str, str], Path] = {}  # (run_id, name) of results
    seen_micro: dict[tuple[str, str], Path] = {}  # (date, host) of micro-benchmark files
    for path, explicit in _candidates(paths):
        real = path.resolve()
        if real in seen_files:
            continue
        seen_files.add(real)
        try:
            data = _read_json(path)
        except InputError:
            if explicit:
                raise
            warn(f"{path}: skipped, not valid JSON")
            continue
        if is_micro(data) or (explicit and is_gbench(data) and not is_own_export(data)):
            micro = parse_micro(path, data)
            stamp = (str(micro.context.get("date")), str(micro.context.get("host_name")))
            if stamp in seen_micro:
                warn(f"{path}: same date and host as {seen_micro[stamp]}; using the first")
                continue
            seen_micro[stamp] = path
            found.micro.append(micro)
            continue
        if not isinstance(data, dict) or data.get("tool") != "stepwise":
            if explicit:
                raise _explicit_other(path, data)
            continue
        validator, note = _validator()
        if note and note not in found.notes:
            found.notes.append(note)
        check_result(path, data, validator)
        result = Result(path, data)
        key = (result.run_id, result.name)
        if key in seen_names:
            # Copies of one run side by side would otherwise count twice in every ratio.
            warn(f"{path}: same run and name as {seen_names[key]}; using the first")
            continue
        seen_names[key] = path
        found.results.append(result)
    if not found.results and not found.micro:
        raise InputError(
            "no stepwise results found in " + ", ".join(paths)
            + " (looked for *.json files with \"tool\": \"stepwise\" and stepwise_micro's google/benchmark JSON; "
              "run ./ablate, ./run_all.sh or build/bench/micro/stepwise_micro first)"
        )
    found.micro.sort(key=lambda m: m.date, reverse=True)
    return found
