"""The interaction matrix: each flag's effect alone (one-at-a-time) beside its effect among all flags (leave-one-out)."""

from __future__ import annotations

from dataclasses import dataclass

from . import fmt
from .results import Result, SuiteGroup
from .table import Table


@dataclass
class FlagEffect:
    flag: str
    summary: str
    alone: Result | None  # the one-at-a-time configuration with only this flag
    without: Result | None  # the leave-one-out configuration without this flag
    speedup_alone: float | None  # tok/s(flag alone) / tok/s(baseline)
    speedup_in_context: float | None  # tok/s(all flags) / tok/s(all but this flag)
    memory_alone: float | None  # peak(flag alone) / peak(baseline)
    memory_in_context: float | None  # peak(all) / peak(all but this flag)

    @property
    def interaction(self) -> float | None:
        """>1: the flag gains more among the others than alone (synergy); <1: its gain overlaps theirs."""
        if self.speedup_alone is None or self.speedup_in_context is None:
            return None
        return self.speedup_in_context / self.speedup_alone


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def _index0(group: SuiteGroup | None) -> Result | None:
    if group is None:
        return None
    first = group.results[0]
    return first if first.index == 0 and first.ok else None


def _by_flag(group: SuiteGroup | None, key: str) -> dict[str, Result]:
    if group is None:
        return {}
    out = {}
    for r in group.results:
        names = r.added if key == "added" else r.removed
        if r.index > 0 and len(names) == 1:
            out[names[0]] = r
    return out


def flag_effects(alone: SuiteGroup | None, removed: SuiteGroup | None, flags_info: list[dict]) -> list[FlagEffect]:
    base, all_on = _index0(alone), _index0(removed)
    singles, leave_outs = _by_flag(alone, "added"), _by_flag(removed, "removed")
    order = [f["name"] for f in flags_info if f.get("name")]
    summaries = {f["name"]: f.get("summary", "") for f in flags_info if f.get("name")}
    names = [n for n in order if n in singles or n in leave_outs]
    names += sorted((set(singles) | set(leave_outs)) - set(names))
    effects = []
    for flag in names:
        a, w = singles.get(flag), leave_outs.get(flag)
        a_ok = a is not None and a.ok and base is not None
        w_ok = w is not None and w.ok and all_on is not None
        effects.append(FlagEffect(
            flag=flag, summary=summaries.get(flag, ""), alone=a, without=w,
            speedup_alone=_ratio(a.tokens_per_s, base.tokens_per_s) if a_ok else None,
            speedup_in_context=_ratio(all_on.tokens_per_s, w.tokens_per_s) if w_ok else None,
            memory_alone=_ratio(a.peak_reserved_bytes, base.peak_reserved_bytes) if a_ok else None,
            memory_in_context=_ratio(all_on.peak_reserved_bytes, w.peak_reserved_bytes) if w_ok else None,
        ))
    return effects


def _cell(value: float | None, r: Result | None, base_ok: bool) -> str:
    if r is None:
        return "not run"
    if not r.ok:
        return f"{r.status}: {r.reason}" if r.reason else r.status
    if not base_ok:
        return "no reference"
    return fmt.ratio(value)


def _loss(r: Result | None) -> str:
    return (r.loss_status or fmt.DASH) if r is not None and r.ok else fmt.DASH


def matrix_table(effects: list[FlagEffect], alone: SuiteGroup | None, removed: SuiteGroup | None) -> Table:
    base_ok, all_ok = _index0(alone) is not None, _index0(removed) is not None
    headers = ["flag", "what it does", "speedup alone (vs baseline)", "speedup among all (all ÷ all without it)",
               "interaction", "peak memory alone", "peak memory among all", "loss check (alone / without)"]
    rows = []
    for e in effects:
        rows.append([
            e.flag, e.summary or fmt.DASH,
            _cell(e.speedup_alone, e.alone, base_ok), _cell(e.speedup_in_context, e.without, all_ok),
            fmt.ratio(e.interaction),
            fmt.ratio(e.memory_alone) if e.memory_alone is not None else fmt.DASH,
            fmt.ratio(e.memory_in_context) if e.memory_in_context is not None else fmt.DASH,
            f"{_loss(e.alone)} / {_loss(e.without)}",
        ])
    return Table(headers, rows, align=["l", "l", "r", "r", "r", "r", "r", "l"], css_class="matrix")


MATRIX_NOTES = [
    "speedup alone = tok/s with only this flag ÷ tok/s of the one-at-a-time baseline (no flags).",
    "speedup among all = tok/s with every flag ÷ tok/s with every flag but this one (leave-one-out).",
    "interaction = speedup among all ÷ speedup alone: above 1 the flag gains more with the others on "
    "(they unlock it); below 1 its gain overlaps theirs. Memory columns are the same ratios of peak reserved memory.",
]
