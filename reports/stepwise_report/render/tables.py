"""What every table's rows and notes share: how a row states its status, its measurement, its loss check and its
× baseline.

One result reads the same in every table it appears in (the steps, ours versus published, the flag matrix, the Python
rows, the memory and sweep tables), so each cell that several tables show is written once, here: a status with its
measurement mark (short, noisy), tokens/s, ms/step, memory, MFU, the loss check with the legend that explains each
verdict, × baseline with its interval, and the notes on short, noisy and bf16-emulated rows. formats.py turns numbers
into cells and renders the Table; each kind of table is built in a module of its own (suite_tables, run_header,
flags, matrix, python_rows, scaling, micro_tables, gate_output).
"""

from __future__ import annotations

from collections import defaultdict

from ..analysis.analysis import SuiteRow, x_baseline
from ..read.results import Result, loss_check_reason
from .formats import (
    DASH,
    fmt_memory,
    fmt_ms_spread,
    fmt_percent,
    fmt_ratio,
    fmt_signed_percent,
    fmt_speedup,
    fmt_tokens,
)


def _noise_text(r: Result) -> str:
    return f"noise {fmt_percent(r.noise, 0 if r.noise >= 0.1 else 1)}" if r.noise is not None else "noise n/a"


def measurement_mark(r: Result) -> str | None:
    """How far a measurement falls short of what the run asked for, or None: 'short: n=3, noise 12%' when --max-time
    stopped it before --min-steps steps ('noise n/a' below 2 steps); 'noisy: noise 41%, above --max-noise 2%' when its
    median is less certain than its own --max-noise (both, in one mark, when short and noisy); 'throttled:
    sw_power_cap' when the GPU held its clocks down during it."""
    if not r.ok or not (r.short or r.noisy or r.throttle_reasons):
        return None
    throttled = f"throttled: {', '.join(r.throttle_reasons)}" if r.throttle_reasons else None
    if not (r.short or r.noisy):
        return throttled
    # --max-noise as it was typed (a setting: 2%, 0.5%), the noise as measured.
    above = f", above --max-noise {100 * r.max_noise:g}%" if r.noisy and r.noise is not None and r.max_noise else ""
    mark = f"short: n={len(r.samples_ms)}, {_noise_text(r)}{above}" if r.short else f"noisy: {_noise_text(r)}{above}"
    return f"{mark}; {throttled}" if throttled else mark


def with_mark(text: str, r: Result | None) -> str:
    """`text`, followed by the row's measurement mark where it was measured short or noisy."""
    mark = measurement_mark(r) if r is not None else None
    return f"{text} ({mark})" if mark else text


def status_cell(r: Result) -> str:
    if r.status == "ok":
        return with_mark("ok", r)
    return f"{r.status}: {r.reason}" if r.reason else r.status


def tokens_cell(r: Result) -> str:
    if not r.ok:
        return DASH
    cell = fmt_tokens(r.tokens_per_s)
    if r.world_size > 1:
        cell += f" ({r.world_size} ranks, global)"
    return cell


def ms_cell(r: Result) -> str:
    s = r.step_ms
    return fmt_ms_spread(s.get("median"), s.get("p10"), s.get("p90")) if r.ok else DASH


def memory_cell(r: Result) -> str:
    if not r.ok:
        return DASH
    cell = fmt_memory(r.peak_reserved_bytes)
    return f"{cell} (RSS)" if r.memory_kind == "process_rss" and r.peak_reserved_bytes is not None else cell


def mfu_cell(r: Result) -> str:
    return fmt_percent(r.mfu) if r.ok else DASH


def check_cell(check: dict) -> str:
    """A loss check's status with its tolerance class ('ok (bf16)'); results written before the class existed
    show their relative difference when the math changed."""
    status = check.get("status") or DASH
    if check.get("class") and status in ("ok", "math changed"):
        return f"{status} ({check['class']})"
    if status == "math changed" and check.get("rel_diff") is not None:
        return f"{status} ({fmt_signed_percent(check['rel_diff'])})"
    return status


def loss_cell(r: Result) -> str:
    return check_cell(r.loss_check) if r.ok else DASH


# One line per loss-check verdict; {cls} is the tolerance class, {against} what the losses are compared with.
LOSS_LEGEND = {
    "baseline": "baseline: the configuration the others' losses are compared with",
    "ok": "ok: the loss drop and the loss at the last shared step agree with {against} within the {cls}",
    "math changed": "math changed: the loss drop or the loss at the last shared step differs from {against}'s "
    "beyond the {cls}, so this configuration computes something else and its speed is not a "
    "like-for-like gain",
    "too short to judge": "too short to judge: too few measured steps are shared with {against} for the check "
    "to say ok or changed",
    "not comparable": "not comparable: a different batch, so different data per step",
    "changes the function": "changes the function: a flag of class learning (the speedrun's) means to train another "
    "function, so its loss curve is not held to {against}'s; time to a target loss judges it",
    "no baseline": "no baseline: {against} did not run (or failed), so there is nothing to compare the loss with",
}


def _classes(checks: list[dict]) -> str:
    classes = sorted({c["class"] for c in checks if c.get("class")})
    if not classes:
        return "tolerance"
    if len(classes) == 1:
        return f"{classes[0]} tolerance"
    return f"tolerance of each row's class ({', '.join(classes)})"


def loss_legend(rows: list[tuple[str, dict]], against: str = "the baseline") -> list[str]:
    """Notes for a table's loss-check column: one line per verdict that appears, then each row's own reason
    where it is not ok. `rows` are (row name, check) pairs."""
    by_status: dict[str, list[dict]] = defaultdict(list)
    for _, check in rows:
        if check.get("status"):
            by_status[check["status"]].append(check)
    notes = []
    for status, text in LOSS_LEGEND.items():
        if status in by_status:
            notes.append("loss check — " + text.format(cls=_classes(by_status[status]), against=against))
    notes += [
        f"loss check — {status}: a verdict this report does not know; see each row's reason"
        for status in sorted(set(by_status) - set(LOSS_LEGEND))
    ]
    for name, check in rows:
        status = check.get("status")
        if status in (None, "ok", "baseline"):
            continue
        reason = loss_check_reason(check)
        notes.append(f"{name}: {status}" + (f" — {reason}" if reason else ""))
    return notes


def x_baseline_cell(suite_row: SuiteRow) -> str:
    """A row's × baseline with its interval; the baseline itself reads 1.00×."""
    if suite_row.base is suite_row:
        return fmt_ratio(1.0)  # the reference itself
    return fmt_speedup(x_baseline(suite_row))


SHORT_NOTE = (
    "short: the measured phase stopped at --max-time before --min-steps steps; n is the steps measured and "
    "noise the relative half-width of the median's 95% confidence interval, so its ratios carry wide "
    "intervals."
)


NOISY_NOTE = (
    "noisy: the median's 95% confidence interval is wider than the --max-noise the result was measured with "
    "(noise is its relative half-width; the time or step budget ran out first, or other work disturbed the "
    "steps), so its ratios carry wide intervals and ./report compare may be unable to judge it."
)


THROTTLED_NOTE = (
    "throttled: the GPU held its clocks down during the row (NVML's clocks-event reasons at a phase's start or end: "
    "a power or thermal cap, a hardware slowdown), so its figures are the throttled GPU's; its gpu_state gives the "
    "clocks, power and temperature."
)


def measurement_notes(rows: list[Result | None]) -> list[str]:
    """The notes that explain the measurement marks appearing among `rows`."""
    shown = [r for r in rows if r is not None and measurement_mark(r)]
    notes = [SHORT_NOTE] if any(r.short for r in shown) else []
    notes += [NOISY_NOTE] if any(r.noisy for r in shown) else []
    return notes + ([THROTTLED_NOTE] if any(r.throttle_reasons for r in shown) else [])


def hardware_notes(named: list[tuple[str, Result]]) -> list[str]:
    """Notes on what the machine did to rows (named as the table names them): bf16 emulated on a CPU, only where the
    engine says it is not native (`env.cpu_bf16_native` false), with the engine's reason."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for name, r in named:
        if r.ok and r.bf16_emulated:
            by_reason[r.bf16_emulated_because].append(name)
    return [
        f"{', '.join(names)}: bf16 is emulated on this CPU ({because}): a slowdown here comes from the machine, "
        f"not from a bug."
        for because, names in by_reason.items()
    ]
