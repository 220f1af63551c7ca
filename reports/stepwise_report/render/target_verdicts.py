"""The two verdicts of a row trained to a target, under the time-to-target table: its time and steps to target
against the baseline's over every seed (the ratio of Kaplan–Meier medians, a seed that missed censored at the horizon,
with its 95% bootstrap interval, Welch's or Gehan's p and the reached fractions), and the speedrun's own record rule
(the validation loss at the step budget declared before the runs below the target by a one-sided t-test at
p < record_p).

The engine computed both (ablations/judges/target_verdict.h, ablations/judges/record_rule.h) into each result's
convergence.verdict and convergence.record_rule; this module only lays them out. A row slower than the baseline
shows as it is, with its interval.
"""

from __future__ import annotations

from ..analysis.analysis import SuiteRow
from ..read.results import Result, implementation_rank
from .formats import DASH, Table

SHORT_STATUS = {"meets the record rule": "meets", "does not meet the record rule": "does not meet"}


def has_verdicts(suite_rows: list[SuiteRow]) -> bool:
    return any(
        (c := s.result.data.get("convergence")) and (c.get("verdict") or c.get("record_rule")) for s in suite_rows
    )


def ratio_cell(v: dict | None) -> str:
    """'×0.84 [0.71–0.95]': a ratio of Kaplan–Meier medians with its interval (an unbounded side 0 or ∞); '—' without
    one; then, where a seed on either side missed the target, the reached fractions '(2/5 vs 5/5 reached)'."""
    if not v:
        return DASH
    cell = DASH if v.get("ratio") is None else f"×{v['ratio']:.2f}"
    low, high = v.get("low"), v.get("high")
    if v.get("ratio") is not None and (low is not None or high is not None):
        cell += f" [{0 if low is None else low:.2f}–{'∞' if high is None else format(high, '.2f')}]"
    runs, base_runs = v.get("runs"), v.get("baseline_runs")
    if runs and base_runs and (v["n"] < runs or v["baseline_n"] < base_runs):
        cell += f" ({v['n']}/{runs} vs {v['baseline_n']}/{base_runs} reached)"
    return cell


def p_cell(p: float | None) -> str:
    """Three decimals, or two significant digits below 0.001 (the record rule's p are often that small)."""
    if p is None:
        return DASH
    return f"{p:.3f}" if p >= 0.001 or p == 0 else f"{p:.1e}"


def verdict_p_cell(v: dict) -> str:
    """A verdict's p, or "n.j." where its exact test could not go below 0.05 at these seeds at all (min_p), as the
    engine's verdict records (ablations/judges/target_verdict.h)."""
    if v.get("min_p") is not None and v["min_p"] >= 0.05:
        return "n.j."
    return p_cell(v.get("p"))


def budget_cell(rule: dict) -> str:
    if rule.get("budget") is None:
        return DASH
    # Given on the command line, the suite's own, or (a result from before the declared horizon) a row's median.
    source = rule["budget_from"]
    where = (
        "given" if source == "--step-budget" else "median" if source == "upper median of steps to target" else "suite"
    )
    return f"{rule['budget']:,} ({where})"


def loss_cell(rule: dict) -> str:
    if rule.get("mean") is None:
        return DASH
    return f"{rule['mean']:.4f} ± {rule['sd']:.4f} ({rule['n']})"


def rule_cell(rule: dict) -> str:
    status = rule["status"]
    return SHORT_STATUS.get(status, f"{status}: {rule['reason']}")


def _row(index: str, label: str, result: Result) -> list[str] | None:
    c = result.data.get("convergence")
    if not c or not (c.get("verdict") or c.get("record_rule")):
        return None
    v, rule = c.get("verdict"), c.get("record_rule")
    if v:
        cells = [ratio_cell(v["time"]), verdict_p_cell(v["time"]), ratio_cell(v["steps"]), verdict_p_cell(v["steps"])]
    else:
        baseline = (c.get("guard") or {}).get("status") == "baseline"
        cells = ["baseline" if baseline else DASH, "", "", ""]
    if rule:
        cells += [budget_cell(rule), loss_cell(rule), p_cell(rule.get("p")), rule_cell(rule)]
    else:
        cells += [DASH] * 4
    return [index, label, *cells]


def verdict_table(suite_rows: list[SuiteRow], python: dict[tuple[str, int], dict[str, Result]] | None = None) -> Table:
    """One row per configuration (and its Python rows under it), both verdicts side by side."""
    rows = []
    for s in suite_rows:
        if (row := _row(str(s.index), s.label, s.result)) is not None:
            rows.append(row)
        beside = (python or {}).get((s.result.suite_name, s.result.index), {})
        for name in sorted(beside, key=implementation_rank):
            if (row := _row("", f"  {name}", beside[name])) is not None:
                rows.append(row)
    return Table(
        headers=[
            "#",
            "row",
            "time × base [95%]",
            "p",
            "steps × base [95%]",
            "p",
            "budget",
            "loss at budget (n)",
            "p one-sided",
            "speedrun's rule",
        ],
        rows=rows,
        caption="against the baseline, and the speedrun's rule",
        align=["r", "l", "r", "r", "r", "r", "r", "r", "r", "l"],
    )


def verdict_notes(suite_rows: list[SuiteRow]) -> list[str]:
    rules = [r for s in suite_rows if (r := (s.result.data.get("convergence") or {}).get("record_rule"))]
    notes = [
        "× base: the row's Kaplan–Meier median over the baseline's, every seed counted (one that missed the target "
        "censored at the horizon; below 1: sooner), [95% percentile-bootstrap interval, 2000 resamples, seed 0]; "
        "p: Welch's two-sided t-test where every seed reached, Gehan's where any missed.",
    ]
    if rules:
        r = rules[0]
        reruns = sum(x.get("reruns", 0) for x in rules)
        seconds = sum(x.get("rerun_s", 0.0) for x in rules)
        notes.append(
            f"speedrun's rule: the validation loss at the step budget declared before the runs (--step-budget, or the "
            f"suite's own), which every seed trained to, below {r['target_loss']:g} by a one-sided one-sample t-test "
            f"(H0: mean ≥ target) at "
            f"p < {r['record_p']:g}."
        )
        if reruns:
            notes.append(
                f"{reruns} seed(s) had stopped at the target before the budget and were re-run from their initial "
                f"weights to exactly the budget ({seconds:.1f} s in all, off the time-to-target figures)."
            )
    return notes
