"""stepwise_micro's output, and google/benchmark JSON in general, as cases with their repetitions.

The micro-benchmarks time each component a flag changes, one family per component with the flag's variants side by
side, in plain google/benchmark JSON (so google/benchmark's own compare.py reads it too). A MicroFile is one such file:
its context (which variant is each family's baseline, which device), and a Case per benchmark name with its
repetitions' real times, its aggregates and counters, or the error it was skipped with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from statistics import median

from .results import InputError, parse_time

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Suffixes google/benchmark appends to a name; they say how it timed, not what it measured.
TIMING_SUFFIXES = ("manual_time", "real_time")
# Keys google/benchmark 1.7 writes itself; any other number on a row is a user counter.
_STANDARD = {
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "error_occurred",
    "error_message",
    "label",
    "big_o",
    "rms",
    "complexity_n",
    "cpu_coefficient",
    "real_coefficient",
}
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
        return parse_time(str(self.context.get("date") or "")).astimezone(UTC)

    @property
    def manual_time(self) -> bool:
        return any(c.parts[-1] == "manual_time" for c in self.cases)

    def baseline_of(self, case: Case) -> Case | None:
        """The family's baseline variant with the same preset, details and arguments (None for itself)."""
        want = self.baselines.get(case.family)
        if want is None or case.variant is None or case.variant == want:
            return None
        return next(
            (
                c
                for c in self.cases
                if c.family == case.family and c.preset == case.preset and c.variant == want and c.rest == case.rest
            ),
            None,
        )

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
            raise InputError(
                f"{path}: benchmarks[{i}] ({row['name']}) needs a numeric real_time and a "
                f"time_unit among {', '.join(UNIT_SECONDS)}"
            )
    return row


def _counters(row: dict) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in row.items()
        if k not in _STANDARD and isinstance(v, (int, float)) and not isinstance(v, bool)
    }


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
