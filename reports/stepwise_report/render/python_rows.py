"""The same configurations in PyTorch Python: C++ against Python eager, and stepwise's CUDA graph against
torch.compile.

The Python rows answer what the libtorch rows cannot: what the C++ step buys over a user's own eager script, and how
stepwise's compile flag compares with torch.compile, beside the published torch.compile steps. Each Python row's loss
is checked against its libtorch row's, so the notes explain the loss check against that row, not the baseline.
"""

from __future__ import annotations

from ..analysis.analysis import CompileGroup, EagerPair, config_name
from ..analysis.reference import Reference, published_compile
from ..read.results import Result
from .formats import DASH, Table, fmt_ratio, fmt_speedup
from .tables import check_cell, hardware_notes, loss_legend, measurement_notes, ms_cell, status_cell, with_mark


def _check_of(r: Result) -> dict:
    return r.loss_vs_libtorch if r.ok else {}


def _vs_libtorch_cell(r: Result) -> str:
    if not r.ok:
        return DASH
    check = r.loss_vs_libtorch
    return check_cell(check) if check else "not checked"


def eager_table(pairs: list[EagerPair]) -> Table:
    headers = [
        "configuration",
        "C++ (libtorch) ms/step",
        "Python eager ms/step",
        "Python ÷ C++ time (95% CI; > 1: C++ faster)",
        "loss vs libtorch",
    ]
    rows = []
    for p in pairs:
        ok = p.libtorch.ok and p.python.ok
        ratio = fmt_speedup(p.ratio) if ok else DASH
        rows.append(
            [
                config_name(p.libtorch),
                with_mark(ms_cell(p.libtorch) if p.libtorch.ok else status_cell(p.libtorch), p.libtorch),
                with_mark(ms_cell(p.python) if p.python.ok else status_cell(p.python), p.python),
                ratio,
                _vs_libtorch_cell(p.python),
            ]
        )
    return Table(headers, rows, align=["l", "r", "r", "r", "l"], css_class="python")


def eager_notes(pairs: list[EagerPair]) -> list[str]:
    notes = [
        "Python ÷ C++: the ratio of median step times per token, Python eager over stepwise's libtorch step, "
        "with its 95% bootstrap interval; the same configuration, weights and batches on the same machine. "
        "An interval that contains 1.00 is no measurable change."
    ]
    if any(p.libtorch.device_kind == "cpu" and p.libtorch.host_allocator_mode == "off" for p in pairs):
        notes.append(
            "one heap for both: on a CPU under the C library's malloc as it comes (host_allocator off), each row's "
            "process puts the logits-sized buffers in fresh pages or in freed ones as its own history has it, which "
            "moves Python ÷ C++ by a few percent either way with neither step changed; scripts/vs_python.py compares "
            "the two under one heap (docs/python-rows.md), as --enable=host_allocator does here."
        )
    notes += measurement_notes([p.python for p in pairs] + [p.libtorch for p in pairs])
    notes += hardware_notes([(config_name(p.libtorch), p.libtorch) for p in pairs])
    notes += loss_legend(
        [
            (f"{config_name(p.python)} (python-eager)", _check_of(p.python))
            for p in pairs
            if p.python.ok and p.python.loss_vs_libtorch
        ],
        against="the libtorch row",
    )
    return notes


# --- torch.compile --------------------------------------------------------------------------------


def compile_table(groups: list[CompileGroup]) -> Table:
    headers = [
        "configuration",
        "implementation",
        "ms/step",
        "× python-eager (95% CI)",
        "× its own eager (95% CI)",
        "compile s",
        "loss vs libtorch",
    ]
    rows = []
    for g in groups:
        for label, r in g.rows():
            if not r.ok:
                rows.append([g.title, label, status_cell(r), DASH, DASH, DASH, DASH])
                continue
            over = g.over_python_eager(r)
            over_cell = (
                "1.00× (reference)"
                if r is g.python_eager
                else (fmt_speedup(over) if g.python_eager is not None else "no python-eager row")
            )
            compile_s = f"{r.compile_s:.1f}" if r.compile_s is not None else DASH
            rows.append(
                [
                    g.title,
                    with_mark(label, r),
                    ms_cell(r),
                    over_cell,
                    fmt_speedup(g.over_own_eager(r)),
                    compile_s,
                    _vs_libtorch_cell(r) if not r.is_libtorch else DASH,
                ]
            )
    return Table(headers, rows, align=["l", "l", "r", "r", "r", "r", "l"], css_class="python")


def published_compile_table(refs: list[Reference]) -> Table | None:
    rows = []
    for ref, x in published_compile(refs):
        row = ref.row_adding("compile")
        rows.append([ref.title, f"step {row.step}: {row.label}", fmt_ratio(x), ref.hardware.split(" (")[0]])
    if not rows:
        return None
    return Table(
        ["source", "published step", "× previous (torch.compile ÷ eager)", "hardware"],
        rows,
        align=["l", "l", "r", "l"],
        css_class="published",
    )


def compile_heading(groups: list[CompileGroup]) -> str:
    """The section's title by what ran: stepwise's CUDA graph only where a row ran with the compile flag."""
    if any(g.graph is not None for g in groups):
        return "compile: stepwise's CUDA graph vs torch.compile"
    return "compile: torch.compile vs eager"


def compile_notes(groups: list[CompileGroup], skipped: str | None = None) -> list[str]:
    """`skipped`: why the compile flag was not in effect on this device (compile_skipped), if it was not."""
    graph = any(g.graph is not None for g in groups)
    own = (
        "libtorch's CUDA graph over libtorch eager, torch.compile over PyTorch eager"
        if graph
        else "torch.compile over PyTorch eager"
    )
    notes = [
        "× python-eager: each row's tokens/s over PyTorch eager of the same configuration on the same machine, "
        f"with its 95% bootstrap interval; × its own eager: {own} — the quantity the published torch.compile "
        "step measures."
    ]
    if graph:
        notes.append(
            "stepwise's compile flag captures forward and backward in one CUDA graph (torch.compile's "
            "reduce-overhead mechanism, without Inductor's fusion); the optimizer steps eagerly in every row."
        )
    else:
        notes.append(
            "stepwise's compile flag (one CUDA graph per step) was not in effect here"
            + (f" ({skipped})" if skipped else "")
            + ", so every libtorch row ran eager."
        )
    notes.append("compile s: seconds of the first, compiling step, outside the timed steps.")
    notes += measurement_notes([r for g in groups for _, r in g.rows()])
    notes += loss_legend(
        [
            (f"{g.title} ({r.implementation})", r.loss_vs_libtorch)
            for g in groups
            for _, r in g.rows()
            if r.ok and not r.is_libtorch and r.loss_vs_libtorch
        ],
        against="the libtorch row",
    )
    return notes
