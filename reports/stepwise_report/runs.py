"""Groups results into runs (newest first) and each run's suites into one group per device."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .result import Result

SUITE_ORDER = ("raschka", "karpathy", "one_at_a_time", "leave_one_out", "single")
_STAMP = re.compile(r"^(\d{8}T\d{6}Z)")


def run_started(results: list[Result]) -> datetime:
    """The run's start: the stamp its id begins with, else its earliest result timestamp."""
    m = _STAMP.match(results[0].run_id)
    if m:
        return datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    stamps = [parse_time(r.timestamp) for r in results]
    return min(stamps)


def parse_time(text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


@dataclass
class SuiteGroup:
    """The results of one suite of one run on one device, in suite order."""

    name: str
    kind: str
    device: str
    results: list[Result]


@dataclass
class Run:
    run_id: str
    results: list[Result]
    started: datetime
    suites: list[SuiteGroup] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def first(self) -> Result:
        return self.results[0]

    @property
    def devices(self) -> list[str]:
        return sorted({r.device_key for r in self.results})

    def suite(self, name: str, device: str) -> SuiteGroup | None:
        return next((s for s in self.suites if s.name == name and s.device == device), None)


def _suite_rank(name: str) -> tuple[int, str]:
    return (SUITE_ORDER.index(name) if name in SUITE_ORDER else len(SUITE_ORDER), name)


def group_suites(run_id: str, results: list[Result]) -> tuple[list[SuiteGroup], list[str]]:
    by_suite: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_suite[r.suite_name].append(r)
    groups: list[SuiteGroup] = []
    messages: list[str] = []
    for name in sorted(by_suite, key=_suite_rank):
        members = by_suite[name]
        by_device: dict[str, list[Result]] = defaultdict(list)
        for r in members:
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
        members.sort(key=lambda r: (_suite_rank(r.suite_name), r.index, r.name))
        suites, messages = group_suites(run_id, members)
        runs.append(Run(run_id, members, run_started(members), suites, messages))
    runs.sort(key=lambda run: (run.started, run.run_id), reverse=True)
    return runs
