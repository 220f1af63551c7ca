"""The published tables our steps are read against (reports/reference/*.json), and how a step finds its row.

A speedup means more beside the figure its source published, but the hardware, software and measurement
differ, so only speedups over each side's own baseline are ever compared, never absolute tok/s. A published
row is keyed by the flags it adds (names checked against the engine's flag table as the results carry it, see
flags.py, so a misspelt flag cannot silently never align); our × previous, which may span a skipped step, is set
against the published ratio over the same span of flags, and the two directions (faster, slower, same within a dead
band) are compared. Our direction follows the interval of our speedup: one whose 95% interval contains 1 is "same",
never a gain.

A table whose `metric` is "minutes_to_target" (the speedrun's record table) publishes each row's training time to a
target loss instead of a throughput: its rows carry `minutes_to_target` (and the record's own `before_minutes`), and
record_times.py sets our time-to-target rows beside them; the throughput alignment below does not apply to it.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..read.results import InputError, ratio_of
from ..stats.speedup import Speedup, speedup
from .analysis import SuiteRow

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "reference"
SOURCE_KEYS = ("repository", "path", "commit", "url")
TOP_KEYS = ("id", "suite", "title", "source", "hardware", "software", "workload", "metric_notes", "rows")
METRICS = ("throughput", "minutes_to_target")


@dataclass(frozen=True)
class PublishedRow:
    step: int
    added: tuple[str, ...]
    label: str
    baseline: bool
    tokens_per_s: float | None  # as published
    ms_per_step: float | None  # as published
    derived_tokens_per_s: float | None  # tokens per step / ms when only ms is published
    reserved_gib: float | None
    metric: str | None
    commit: str | None
    approx: bool
    minutes_to_target: float | None = None  # a minutes_to_target table: the published time to the target
    record: int | None = None  # the record's number in its table
    before_record: int | None = None  # the record it improved on, and that record's minutes
    before_minutes: float | None = None

    @property
    def throughput(self) -> float | None:
        return self.tokens_per_s if self.tokens_per_s is not None else self.derived_tokens_per_s


@dataclass(frozen=True)
class Reference:
    id: str
    suite: str
    title: str
    source: dict
    hardware: str
    software: str
    workload: str
    metric_notes: list[str]
    rows: list[PublishedRow]
    scaling: list[dict]
    metric: str = "throughput"

    @property
    def minutes(self) -> bool:
        """Whether the table publishes minutes to a target loss (record_times.py) rather than a throughput."""
        return self.metric == "minutes_to_target"

    def x_baseline_minutes(self, row: PublishedRow) -> float | None:
        """The row's published minutes over the baseline's (below 1: sooner)."""
        return ratio_of(row.minutes_to_target, self.baseline.minutes_to_target)

    @property
    def baseline(self) -> PublishedRow:
        return next(r for r in self.rows if r.baseline)

    def has(self, column: str) -> bool:
        return any(getattr(r, column) is not None for r in self.rows)

    def x_baseline(self, row: PublishedRow) -> float | None:
        return ratio_of(row.throughput, self.baseline.throughput)

    def x_previous(self, row: PublishedRow) -> float | None:
        earlier = [r for r in self.rows if r.step < row.step]
        return ratio_of(row.throughput, earlier[-1].throughput) if earlier else None

    def row_adding(self, flag: str) -> PublishedRow | None:
        """The published step that adds `flag` (e.g. torch.compile's), if there is one."""
        return next((r for r in self.rows if not r.baseline and flag in r.added), None)

    def row_for(self, suite_row: SuiteRow) -> PublishedRow | None:
        """Our step's published counterpart: the baseline by position, every other step by the flags it adds in
        effect (a step that ran without a flag this device skipped is not the published step that adds it); a step
        that did not run, by the flags it asked for."""
        if suite_row.index == 0:
            return self.baseline
        key = set(suite_row.result.added_in_effect if suite_row.ok else suite_row.added)
        return next((r for r in self.rows if not r.baseline and set(r.added) == key), None) if key else None

    def span_ratio(self, suite_row: SuiteRow, previous: SuiteRow) -> float | None:
        """The published ratio over the flags our × previous spans, `suite_row`'s flags in effect less `previous`'s: the
        ratio between the two counterpart rows when the published rows between them add exactly those flags (also
        across a row of ours that did not run); when some of them add a flag not in effect here (skipped on this
        device, e.g. tf32 on a CPU), the product of the published × previous of the rows adding only flags in
        effect; None when the published rows do not cover our span."""
        row, prev_row = self.row_for(suite_row), self.row_for(previous)
        if row is None or prev_row is None or prev_row.step >= row.step:
            return None
        span = set(suite_row.result.flags_in_effect) - set(previous.result.flags_in_effect)
        between = [r for r in self.rows if prev_row.step < r.step <= row.step]
        if set().union(*(r.added for r in between)) == span:
            return ratio_of(row.throughput, prev_row.throughput)
        inside = [r for r in between if set(r.added) <= span]
        if not inside or set().union(*(r.added for r in inside)) != span:
            return None
        product = 1.0
        for r in inside:
            x = self.x_previous(r)
            if x is None:
                return None
            product *= x
        return product


def _row(
    data: dict, tokens_per_step: int | None, where: str, flags: Collection[str] | None, metric: str = "throughput"
) -> PublishedRow:
    for key in ("step", "added", "label"):
        if key not in data:
            raise InputError(f"{where}: row without '{key}'")
    unknown = [f for f in data["added"] if flags is not None and f not in flags]
    if unknown:
        raise InputError(f"{where}: unknown flag(s) {unknown}; the engine's flags: {', '.join(sorted(flags))}")
    ms_value = data.get("ms_per_step")
    derived = tokens_per_step * 1000.0 / ms_value if (ms_value and tokens_per_step) else None
    if metric == "minutes_to_target":
        if not isinstance(data.get("minutes_to_target"), int | float) or data["minutes_to_target"] <= 0:
            raise InputError(f"{where}: a minutes_to_target table's row needs a positive minutes_to_target")
    elif data.get("tokens_per_s") is None and derived is None:
        raise InputError(f"{where}: row has neither tokens_per_s nor ms_per_step with tokens_per_step")
    return PublishedRow(
        step=int(data["step"]),
        added=tuple(data["added"]),
        label=data["label"],
        baseline=bool(data.get("baseline")),
        tokens_per_s=data.get("tokens_per_s"),
        ms_per_step=ms_value,
        derived_tokens_per_s=derived,
        reserved_gib=data.get("reserved_gib"),
        metric=data.get("metric"),
        commit=data.get("commit"),
        approx=bool(data.get("approx")),
        minutes_to_target=data.get("minutes_to_target"),
        record=data.get("record"),
        before_record=data.get("before_record"),
        before_minutes=data.get("before_minutes"),
    )


def parse_reference(data: dict, where: str, flags: Collection[str] | None = None) -> Reference:
    """One published table, checked; `flags`, the engine's flag names (flags.flag_names), where known: a row keyed by
    another name is an error (None: the names are not checked)."""
    missing = [k for k in TOP_KEYS if k not in data]
    if missing:
        raise InputError(f"{where}: missing keys {missing}")
    missing_source = [k for k in SOURCE_KEYS if not data["source"].get(k)]
    if missing_source:
        raise InputError(f"{where}: source lacks {missing_source}")
    metric = data.get("metric", "throughput")
    if metric not in METRICS:
        raise InputError(f"{where}: metric {metric!r} is not one of {', '.join(METRICS)}")
    rows = [_row(r, data.get("tokens_per_step"), f"{where} row {i}", flags, metric) for i, r in enumerate(data["rows"])]
    if sum(r.baseline for r in rows) != 1:
        raise InputError(f"{where}: exactly one row must be the baseline")
    keys = [frozenset(r.added) for r in rows if not r.baseline]
    if len(keys) != len(set(keys)):
        raise InputError(f"{where}: two rows add the same flags, so steps cannot be aligned")
    return Reference(
        id=data["id"],
        suite=data["suite"],
        title=data["title"],
        source=data["source"],
        hardware=data["hardware"],
        software=data["software"],
        workload=data["workload"],
        metric_notes=list(data["metric_notes"]),
        rows=sorted(rows, key=lambda r: r.step),
        scaling=list(data.get("scaling") or []),
        metric=metric,
    )


def load_references(directory: Path = REFERENCE_DIR, flags: Collection[str] | None = None) -> dict[str, Reference]:
    """Published tables by the suite they describe, their rows' flags checked against `flags` where given. A table
    none of whose steps the results' flags could make (every row adds a flag they do not know) was published for flags
    newer than the results (the speedrun's, for results written before them): it is left out, not an error. A table
    with any row they know must know every row, so a misspelt or dropped flag still fails."""
    refs: dict[str, Reference] = {}
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        steps = [set(row.get("added", [])) for row in data.get("rows", []) if not row.get("baseline")]
        if flags is not None and steps and all(step - set(flags) for step in steps):
            continue
        ref = parse_reference(data, str(path), flags)
        refs[ref.suite] = ref
    return refs


def published_compile(refs: list[Reference]) -> list[tuple[Reference, float]]:
    """Each published torch.compile step's ratio over the step before it (compile ÷ eager)."""
    out = []
    for ref in refs:
        row = ref.row_adding("compile")
        x = ref.x_previous(row) if row is not None else None
        if x is not None:
            out.append((ref, x))
    return out


def direction(x: float | None, dead_band: float) -> str | None:
    """'up', 'down' or 'flat' (within ±dead_band of no change)."""
    if x is None:
        return None
    if x > 1 + dead_band:
        return "up"
    if x < 1 - dead_band:
        return "down"
    return "flat"


def measured_direction(sp: Speedup | None, dead_band: float) -> str | None:
    """Our direction: 'flat' when the speedup's 95% interval contains 1 (no measurable change), else by the
    dead band as the published one; None without an interval (too few steps to say)."""
    if sp is None or not sp.has_interval:
        return None
    return direction(sp.value, dead_band) if sp.measurable else "flat"


@dataclass
class Alignment:
    """One of our steps beside its published counterpart, over the same span of flags."""

    step: SuiteRow
    row: PublishedRow | None
    published_x_previous: float | None  # published ratio over the same span as our × previous
    published_x_baseline: float | None
    ours_direction: str | None
    published_direction: str | None
    ours_x_previous: Speedup | None = None  # our × previous with its interval

    @property
    def differs(self) -> bool:
        return None not in (self.ours_direction, self.published_direction) and (
            self.ours_direction != self.published_direction
        )


def align(suite_rows: list[SuiteRow], ref: Reference, dead_band: float) -> list[Alignment]:
    out = []
    for step in suite_rows:
        row = ref.row_for(step)
        pub_prev = None
        ours = speedup(step.previous.result, step.result) if step.previous is not None else None
        if row is not None and step.previous is not None:
            # Our × previous may span skipped steps; compare it with the published ratio over the same flags in
            # effect, not over the flags asked for.
            pub_prev = ref.span_ratio(step, step.previous)
        out.append(
            Alignment(
                step=step,
                row=row,
                published_x_previous=pub_prev,
                published_x_baseline=ref.x_baseline(row) if row is not None else None,
                ours_direction=measured_direction(ours, dead_band) if pub_prev is not None else None,
                published_direction=direction(pub_prev, dead_band),
                ours_x_previous=ours,
            )
        )
    return out
