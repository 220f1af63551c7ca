"""The flag matrix: each flag's speedup alone (one at a time) beside its speedup among all the others (leave one out).

A flag can pay alone and not among the others, or only among them; the interaction column, the ratio of the two,
says which, and the memory columns say the same of peak memory. analysis.flag_effects derives the effects; here is
what each cell says, a configuration that did not run included.
"""

from __future__ import annotations

from ..analysis.analysis import FlagEffect, suite_reference
from ..read.results import Result, SuiteGroup
from ..stats.speedup import Speedup
from .formats import DASH, Table, fmt_ratio, fmt_speedup
from .tables import status_cell, with_mark


def _effect_cell(value: Speedup | None, r: Result | None, base_ok: bool) -> str:
    if r is None:
        return "not run"
    if not r.ok:
        return status_cell(r)
    if not base_ok:
        return "no reference"
    return with_mark(fmt_speedup(value), r)


def _loss_status(r: Result | None) -> str:
    return (r.loss_status or DASH) if r is not None and r.ok else DASH


def matrix_table(effects: list[FlagEffect], alone: SuiteGroup | None, removed: SuiteGroup | None) -> Table:
    base_ok, all_ok = suite_reference(alone) is not None, suite_reference(removed) is not None
    headers = [
        "flag",
        "what it does",
        "speedup alone (vs baseline)",
        "speedup among all (all ÷ all without it)",
        "interaction",
        "peak memory alone",
        "peak memory among all",
        "loss check (alone / without)",
    ]
    rows = []
    for e in effects:
        rows.append(
            [
                e.flag,
                e.summary or DASH,
                _effect_cell(e.interval_alone, e.alone, base_ok),
                _effect_cell(e.interval_in_context, e.without, all_ok),
                fmt_ratio(e.interaction),
                fmt_ratio(e.memory_alone) if e.memory_alone is not None else DASH,
                fmt_ratio(e.memory_in_context) if e.memory_in_context is not None else DASH,
                f"{_loss_status(e.alone)} / {_loss_status(e.without)}",
            ]
        )
    return Table(headers, rows, align=["l", "l", "r", "r", "r", "r", "r", "l"], css_class="matrix")


MATRIX_NOTES = [
    "speedup alone = tok/s with only this flag ÷ tok/s of the one-at-a-time baseline (no flags), with its 95% "
    "interval (the gate's bootstrap); an interval that contains 1.00 is no measurable change.",
    "speedup among all = tok/s with every flag ÷ tok/s with every flag but this one (leave-one-out).",
    "interaction = speedup among all ÷ speedup alone: above 1 the flag gains more with the others on "
    "(they unlock it); below 1 its gain overlaps theirs. Memory columns are the same ratios of peak reserved memory.",
]
