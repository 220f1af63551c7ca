"""What `./report compare` prints: the gate's verdict tables."""

from __future__ import annotations

from .formats import DASH, Table, fmt_duration, fmt_ms, fmt_ratio, percent_change


def change_cell(ratio: float | None) -> str:
    return percent_change(ratio) if ratio is not None else DASH


def ci_cell(row: dict) -> str:
    if row.get("ci_low") is None:
        return DASH
    return f"{percent_change(row['ci_low'])} … {percent_change(row['ci_high'])}"


def absolute_table(rows: list[dict], kind: str = "stepwise") -> Table:
    """The verdict per configuration (per benchmark for `kind` "micro", whose times are in seconds)."""
    micro = kind == "micro"
    name_header, count_label = ("benchmark", "reps") if micro else ("configuration", "n")

    def time_cell(r: dict, side: str) -> str:
        return fmt_duration(r[f"{side}_median_s"]) if micro else fmt_ms(r[f"{side}_median_ms"])

    body = [
        [
            r["name"],
            f"{time_cell(r, 'baseline')} ({r['baseline_n']})",
            f"{time_cell(r, 'candidate')} ({r['candidate_n']})",
            change_cell(r["ratio"]),
            ci_cell(r),
            f"{r['p_value']:.3g}" if r["p_value"] is not None else DASH,
            r["verdict"],
            r["note"],
        ]
        for r in rows
    ]
    return Table(
        [
            name_header,
            f"baseline ({count_label})",
            f"candidate ({count_label})",
            "change",
            "95% CI",
            "p (U test)",
            "verdict",
            "note",
        ],
        body,
        align=["l", "r", "r", "r", "r", "r", "l", "l"],
    )


def relative_table(rows: list[dict]) -> Table:
    """Per within-run speedup: baseline's, candidate's, and the verdict on their ratio."""
    body = [
        [
            r["name"],
            r["speedup"],
            fmt_ratio(r.get("baseline_speedup")),
            fmt_ratio(r.get("candidate_speedup")),
            change_cell(r["ratio"]),
            ci_cell(r),
            r["verdict"],
            r["note"],
        ]
        for r in rows
    ]
    return Table(
        ["configuration", "speedup", "baseline", "candidate", "change", "95% CI", "verdict", "note"],
        body,
        align=["l", "l", "r", "r", "r", "r", "l", "l"],
    )
