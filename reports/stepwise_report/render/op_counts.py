"""What one step dispatches (`./ablate --count-ops`): per configuration, the C++ row's ATen ops, allocations, kernels
and launches beside each Python row's of the same configuration.

ablate prints these tables at the end of its run; the report keeps them beside the run's other tables, so a reader
compares the C++ step's work with Python's from the results alone (results/README.md's `op_counts`). Counts are
exact and machine-independent on a CPU, so they are printed whole, never rounded.
"""

from __future__ import annotations

from ..analysis.analysis import attached_rows, config_name
from ..read.results import Result, Run, implementation_rank
from .formats import DASH, Table


def counts_of(r: Result) -> dict | None:
    """A row's op_counts when it counted its steps, else None."""
    counts = r.data.get("op_counts") or {}
    return counts if counts.get("status") == "ok" else None


def counted_configurations(run: Run, device: str) -> list[list[Result]]:
    """Each libtorch row of `device` with the rows of other implementations beside it, where any of them was asked to
    count (an op_counts section, counted or saying why not)."""
    attached = attached_rows(run, device)
    out = []
    for r in run.libtorch:
        if r.device_key != device:
            continue
        beside = attached.get((r.suite_name, r.index), {})
        rows = [r, *(beside[k] for k in sorted(beside, key=implementation_rank))]
        if any(x.data.get("op_counts") for x in rows):
            out.append(rows)
    return out


def _whole(n: int | None) -> str:
    return DASH if n is None else f"{n:,}"


def _per_device(allocations: dict, key: str) -> str:
    """'cpu 592' or 'cpu 592 · cuda 40': every device the allocator reported, cpu first."""
    devices = sorted(allocations, key=lambda d: (d != "cpu", d))
    return " · ".join(f"{d} {allocations[d][key]:,}" for d in devices)


def op_count_table(configurations: list[list[Result]]) -> Table:
    headers = [
        "configuration",
        "implementation",
        "ATen ops",
        "allocations",
        "bytes allocated",
        "kernels, copies, sets",
        "launches",
    ]
    rows = []
    for group in configurations:
        for i, r in enumerate(group):
            name = config_name(group[0]) if i == 0 else ""
            counts = counts_of(r)
            if counts is None:
                why = (r.data.get("op_counts") or {}).get("reason") or ("not counted" if r.ok else r.status)
                rows.append([name, r.implementation, why, DASH, DASH, DASH, DASH])
                continue
            s = counts["per_step"]
            mark = "" if counts.get("same_each_step", True) else " *"
            rows.append(
                [
                    name,
                    r.implementation + mark,
                    _whole(s["aten_op_total"]),
                    _per_device(s["allocations"], "count"),
                    _per_device(s["allocations"], "bytes"),
                    _whole(s.get("device_activity_total")),
                    _whole(s.get("launch_total")),
                ]
            )
    return Table(headers, rows, align=["l", "l", "r", "r", "r", "r", "r"])


def op_count_notes(configurations: list[list[Result]]) -> list[str]:
    steps = sorted({c["steps_counted"] for g in configurations for r in g if (c := counts_of(r))})
    notes = [
        f"Per step, counted by PyTorch's profiler over {' or '.join(map(str, steps)) or 'a few'} steps after the timed "
        "ones, each alone; the same profiler configuration in every implementation. ATen ops include nested calls; "
        "kernels, copies and sets and launches (the host's calls that launch a kernel or a CUDA graph) are counted on "
        f"a GPU only ({DASH} on a CPU). Each result's op_counts has every operator and call by name."
    ]
    if any(not c.get("same_each_step", True) for g in configurations for r in g if (c := counts_of(r))):
        notes.append("*: the counted steps differed; the last one's counts are shown (op_counts.varying has each).")
    return notes


# Operators listed per configuration, the largest gap first; the rest are in each result's op_counts.per_step.aten_ops.
OPS_SHOWN = 15


def _gap(counts: list[int], by_impl: dict[str, int]) -> int:
    """The engine's count minus Python eager's where both counted, else the spread across the rows."""
    if "libtorch" in by_impl and "python-eager" in by_impl:
        return abs(by_impl["libtorch"] - by_impl["python-eager"])
    return max(counts) - min(counts)


def differing_ops(group: list[Result]) -> list[tuple[str, dict[str, int]]]:
    """The ATen operators one step of a configuration calls a different number of times in its rows, each with every
    counted row's count, the largest gap first, then by name; empty with fewer than two counted rows."""
    counted = [(r.implementation, c["per_step"]["aten_ops"]) for r in group if (c := counts_of(r))]
    if len(counted) < 2:
        return []
    names = sorted({name for _, ops in counted for name in ops})
    out = []
    for name in names:
        by_impl = {impl: ops.get(name, 0) for impl, ops in counted}
        if len(set(by_impl.values())) > 1:
            out.append((name, by_impl))
    return sorted(out, key=lambda item: (-_gap(list(item[1].values()), item[1]), item[0]))


def op_difference_table(configurations: list[list[Result]]) -> Table | None:
    """Where the rows of a configuration differ: each operator called a different number of times per step, with every
    implementation's count and the engine's minus eager's; None where no configuration has two counted rows."""
    groups = [(g, differing_ops(g)) for g in configurations if sum(1 for r in g if counts_of(r)) >= 2]
    if not groups:
        return None
    impls = sorted({r.implementation for g, _ in groups for r in g if counts_of(r)}, key=implementation_rank)
    both = "libtorch" in impls and "python-eager" in impls
    headers = ["configuration", "ATen operator", *impls] + (["libtorch − eager"] if both else [])
    rows = []
    for group, ops in groups:
        name = config_name(group[0])
        if not ops:
            rows.append([name, "every operator as often in each row", *[DASH] * (len(headers) - 2)])
        for n, (op, by_impl) in enumerate(ops[:OPS_SHOWN]):
            row = [name if n == 0 else "", op, *(_whole(by_impl.get(i)) for i in impls)]
            if both:
                gap = by_impl.get("libtorch", 0) - by_impl.get("python-eager", 0)
                row.append(f"{gap:+,}")
            rows.append(row)
        if len(ops) > OPS_SHOWN:
            rows.append(
                ["", f"{len(ops) - OPS_SHOWN} more differ (op_counts.per_step.aten_ops)", *[""] * (len(headers) - 2)]
            )
    return Table(headers, rows, align=["l", "l"] + ["r"] * (len(headers) - 2))
