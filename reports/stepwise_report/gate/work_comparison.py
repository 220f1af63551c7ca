"""The gate's count with no noise: what one step dispatches (`./ablate --count-ops`), compared exactly between the
baseline's side and the candidate's, row by row.

A step's time on a shared runner has noise that only rounds and intervals can see through; how many ATen operators a
step calls and how many bytes it allocates has none on a CPU (the same on every run, whatever the load: results'
`op_counts.same_each_step`). So a commit that adds work to the step (an operator more, a copy, a larger temporary) is
named at once, on any runner, before any interval narrows, as CodSpeed names a change in instruction counts. A row
does MORE work when any operator is called more often per step than in the baseline, or is new, or when the bytes it
allocates per step on a device grow by more than BYTES_TOLERANCE; LESS when the counts only fell; SAME when equal.
MORE fails the gate unless the change says it meant it (`--accept-work ROW`, the workflow reads it from a
`Stepwise-Accept-Work:` trailer in the change's commit messages). A side that did not count, or whose counted steps
differed from each other, is NOT COUNTED, never a verdict.
"""

from __future__ import annotations

from ..read.results import Result
from ..render.op_counts import counts_of

MORE, LESS, SAME_WORK, NOT_COUNTED = "MORE", "LESS", "SAME", "NOT COUNTED"
# Bytes allocated per step may move by a few alignment paddings between builds without any new work; more than 1% is
# a larger or an extra buffer.
BYTES_TOLERANCE = 0.01
ACCEPT_ALL = "all"


def _per_step(results: list[Result]) -> tuple[dict | None, str | None]:
    """One side's counts of a row over its rounds: the per-step counts when every round that counted agrees and
    counted the same each step, else (None, why)."""
    counted = [c for c in (counts_of(r) for r in results) if c is not None]
    if not counted:
        asked = [r.data.get("op_counts") for r in results if r.data.get("op_counts")]
        return None, (asked[0].get("reason") if asked else "not counted (--count-ops not in the run's arguments)")
    if not all(c.get("same_each_step", True) for c in counted):
        return None, "its counted steps differed from each other"
    first = counted[0]["per_step"]
    if any(c["per_step"]["aten_ops"] != first["aten_ops"] for c in counted[1:]):
        return None, "its rounds counted different operators"
    return first, None


def _bytes(per_step: dict) -> dict[str, int]:
    return {device: a["bytes"] for device, a in (per_step.get("allocations") or {}).items()}


def work_row(name: str, base: list[Result], cand: list[Result], accepted: set[str]) -> dict:
    """The verdict on one row's work, with what changed: operators called more or less often per step (new ones
    included), bytes per step by device, and whether the change was accepted."""
    b, why_b = _per_step(base)
    c, why_c = _per_step(cand)
    row = {"name": name, "accepted": name in accepted or ACCEPT_ALL in accepted, "more": {}, "less": {}, "bytes": {}}
    if b is None or c is None:
        side, why = ("baseline", why_b) if b is None else ("candidate", why_c)
        return {**row, "verdict": NOT_COUNTED, "note": f"the {side}: {why}"}
    ops_b, ops_c = b["aten_ops"], c["aten_ops"]
    for op in sorted(set(ops_b) | set(ops_c)):
        delta = ops_c.get(op, 0) - ops_b.get(op, 0)
        if delta > 0:
            row["more"][op] = {"baseline": ops_b.get(op, 0), "candidate": ops_c[op]}
        elif delta < 0:
            row["less"][op] = {"baseline": ops_b[op], "candidate": ops_c.get(op, 0)}
    bytes_b, bytes_c = _bytes(b), _bytes(c)
    grew = False
    for device in sorted(set(bytes_b) | set(bytes_c)):
        before, after = bytes_b.get(device, 0), bytes_c.get(device, 0)
        if before != after:
            row["bytes"][device] = {"baseline": before, "candidate": after}
            grew |= after > before * (1 + BYTES_TOLERANCE)
    if row["more"] or grew:
        verdict = MORE
    elif row["less"] or row["bytes"]:
        verdict = LESS
    else:
        verdict = SAME_WORK
    return {**row, "verdict": verdict, "note": describe(row, verdict)}


def describe(row: dict, verdict: str) -> str:
    """What changed, in words: the operators per step, then the bytes per step by device."""
    if verdict == SAME_WORK:
        return "the same operators, as often, and the same bytes per step"
    parts = [
        f"{op} {v['baseline']} -> {v['candidate']}" + (" (new)" if v["baseline"] == 0 else "")
        for op, v in {**row["more"], **row["less"]}.items()
    ]
    for device, v in row["bytes"].items():
        change = (v["candidate"] - v["baseline"]) / v["baseline"] if v["baseline"] else float("inf")
        parts.append(f"{device} bytes {v['baseline']:,} -> {v['candidate']:,} ({100 * change:+.1f}%)")
    return "per step: " + "; ".join(parts)


def compare_work(pairs: list[tuple[str, list[Result], list[Result]]], accepted: set[str]) -> list[dict]:
    """Every row both sides ran: its work compared exactly. `accepted`: rows whose added work the change meant
    (ACCEPT_ALL for all)."""
    return [work_row(name, base, cand, accepted) for name, base, cand in pairs]


def added_work(rows: list[dict]) -> list[dict]:
    """Rows that do more work than the baseline's side and whose change did not say it meant it: the gate fails."""
    return [r for r in rows if r["verdict"] == MORE and not r["accepted"]]
