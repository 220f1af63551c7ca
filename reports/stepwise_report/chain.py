"""The ratio chain of one suite: each step's × previous (last ok step before it) and × baseline."""

from __future__ import annotations

from dataclasses import dataclass, field

from .result import Result


@dataclass
class Step:
    result: Result
    x_previous: float | None = None
    previous: "Step | None" = None
    # Labels of the skipped or failed steps between `previous` and this one: their flags are
    # still in effect here, so × previous spans them.
    spans: list[str] = field(default_factory=list)
    x_baseline: float | None = None

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
    steps = [Step(r) for r in sorted(results, key=lambda r: (r.index, r.name))]
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
        if cumulative and last_ok is not None:
            step.previous = last_ok
            step.x_previous = step.result.tokens_per_s / last_ok.result.tokens_per_s
            step.spans = pending
        last_ok, pending = step, []
    return steps
