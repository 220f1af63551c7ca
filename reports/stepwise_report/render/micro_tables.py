"""The tables of a micro-benchmark file (google/benchmark JSON): its header, then per family and preset its cases.

stepwise_micro's cases come in families with a baseline variant each, so a table puts each baseline above its
variants and gives every variant its speedup over it, with the interval of the gate's bootstrap over the repetitions;
another google/benchmark file is shown too, without speedups. The header shows context keys it does not know rather
than dropping them.
"""

from __future__ import annotations

from ..read.micro import TIMING_SUFFIXES, Case, MicroFile
from ..stats.speedup import case_speedup
from .formats import DASH, Table, fmt_duration, fmt_duration_range, fmt_ms, fmt_rate, fmt_ratio, fmt_speedup, time_unit

# The counter a family is judged by, in order of preference: (key, unit, binary prefixes).
COUNTERS = (
    ("flop_per_s", "FLOP/s", False),
    ("tokens_per_s", "tok/s", False),
    ("elements_per_s", "elements/s", False),
    ("params_per_s", "params/s", False),
    ("items_per_second", "items/s", False),
    ("bytes_per_second", "B/s", True),
)


_SHOWN_CONTEXT = {
    "date",
    "host_name",
    "executable",
    "num_cpus",
    "mhz_per_cpu",
    "cpu_scaling_enabled",
    "caches",
    "load_avg",
    "library_build_type",
    "stepwise_device",
    "stepwise_presets",
    "torch_version",
    "stepwise_baselines",
}


def case_groups(m: MicroFile) -> list[tuple[str, list[Case]]]:
    """(title, cases) per family and preset, in file order; inside one, each configuration's baseline
    variant first and its other variants after it, so a speedup sits under what it is relative to."""
    by_group: dict[str, list[Case]] = {}
    for c in m.cases:
        # Other google/benchmark files have no preset slot: the second part is just an argument.
        title = f"{c.family} · {c.preset}" if m.baselines and c.preset else c.family
        by_group.setdefault(title, []).append(c)
    if not m.baselines:
        return list(by_group.items())
    out = []
    for title, cases in by_group.items():
        rests = list(dict.fromkeys(c.rest for c in cases))
        cases = sorted(cases, key=lambda c: (rests.index(c.rest), not m.is_baseline(c)))
        out.append((title, cases))
    return out


def case_label(m: MicroFile, c: Case) -> str:
    """The name without family and preset (they are the table's title) and without timing suffixes."""
    parts = c.parts[2:] if m.baselines else c.parts[1:]
    while parts and parts[-1] in TIMING_SUFFIXES:
        parts = parts[:-1]
    return "/".join(parts) or c.name


def _speedup_cell(m: MicroFile, c: Case) -> str:
    if not c.ok or not m.baselines:
        return DASH
    if m.is_baseline(c):
        return "baseline"
    base = m.baseline_of(c)
    if base is None:
        return DASH
    if not base.ok:
        return f"{DASH} (baseline skipped)"
    # With repetitions, the interval of the gate's bootstrap; a file of aggregates only has the ratio alone.
    return fmt_speedup(case_speedup(base, c)) if base.samples and c.samples else fmt_ratio(m.speedup(c))


def _spread_cell(c: Case) -> str:
    if not c.ok:
        return DASH
    if len(c.samples) > 1:
        return fmt_duration_range(min(c.samples_s), max(c.samples_s), c.median_s)
    if "stddev" in c.aggregates:
        scale, unit = time_unit(c.median_s)
        return f"± {fmt_ms(c.aggregates['stddev'] * c.scale / scale)} {unit}"
    return DASH


def main_counter(cases: list[Case]) -> tuple[str, str, bool] | None:
    return next((spec for spec in COUNTERS if any(c.ok and spec[0] in c.counters for c in cases)), None)


def case_table(m: MicroFile, cases: list[Case]) -> Table:
    counter = main_counter(cases)
    rows = []
    for c in cases:
        status = "ok" if c.ok else f"skipped: {c.error or 'no measurement'}"
        reps = str(c.repetitions) if c.samples else f"{DASH} (aggregates)" if c.aggregates else DASH
        rate = fmt_rate(c.counter(counter[0]), counter[1], counter[2]) if counter and c.ok else DASH
        rows.append(
            [
                case_label(m, c),
                status,
                fmt_duration(c.median_s) if c.ok else DASH,
                _spread_cell(c),
                reps if c.ok else DASH,
                rate,
                _speedup_cell(m, c),
            ]
        )
    headers = [
        "case",
        "status",
        "time / iteration (median)",
        "spread over repetitions",
        "reps",
        "throughput",
        "× baseline",
    ]
    return Table(headers, rows, align=["l", "l", "r", "r", "r", "r", "r"], css_class="micro")


# --- the file's header ----------------------------------------------------------------------------


def _micro_cpu(m: MicroFile) -> str:
    ctx = m.context
    cpus, mhz = ctx.get("num_cpus"), ctx.get("mhz_per_cpu")
    text = f"{cpus or '?'} CPUs" + (f" at {mhz} MHz" if mhz else "")
    if ctx.get("cpu_scaling_enabled"):
        text += " (CPU frequency scaling on: host timings are noisier)"
    return text


def _build_type(m: MicroFile) -> str:
    kind = str(m.context.get("library_build_type") or DASH)
    # google/benchmark prints the same warning: its own bookkeeping is slower, the timed code is not.
    return kind + (" (google/benchmark's library was built for debugging)" if kind == "debug" else "")


def _repetitions(m: MicroFile) -> str:
    counts = sorted({c.repetitions for c in m.cases if c.ok})
    if not counts:
        return DASH
    if counts == [0]:
        return "aggregates only (--benchmark_report_aggregates_only)"
    return (str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}") + " per case"


def micro_header(m: MicroFile) -> Table:
    ctx = m.context
    ok = sum(c.ok for c in m.cases)
    pairs = [
        ("device", m.device or DASH),
        ("presets", str(ctx.get("stepwise_presets") or DASH)),
        ("torch", str(ctx.get("torch_version") or DASH)),
        ("date (UTC)", f"{m.date:%Y-%m-%d %H:%M:%S}" if ctx.get("date") else DASH),
        ("host", str(ctx.get("host_name") or DASH)),
        ("CPU", _micro_cpu(m)),
        (
            "timing",
            "real time; /manual_time cases: the device's own clock (SetIterationTime)"
            if m.manual_time
            else "real time (wall clock)",
        ),
        ("repetitions", _repetitions(m)),
        ("cases", f"{len(m.cases)} ({ok} ok, {len(m.cases) - ok} skipped)"),
        ("baselines", ", ".join(f"{k}={v}" for k, v in m.baselines.items()) or "none (not stepwise_micro's output)"),
        ("google/benchmark build", _build_type(m)),
        ("executable", str(ctx.get("executable") or DASH)),
        ("file", str(m.path)),
    ]
    # Context added later (--benchmark_context=k=v, new stepwise keys) is shown rather than dropped.
    pairs += [(k, str(v)) for k, v in ctx.items() if k not in _SHOWN_CONTEXT and isinstance(v, (str, int, float))]
    return Table(["", ""], [[k, v] for k, v in pairs], css_class="header")


MICRO_NOTES = [
    "time / iteration: google/benchmark's real_time per iteration, the median over the repetitions "
    "(the _median row when the file holds only aggregates); spread: min–max over the repetitions "
    "(± the standard deviation when only aggregates are there).",
    "× baseline: the family's baseline variant's median time ÷ this case's, for the same preset, details "
    "and sizes; above 1 is faster than the baseline. In brackets its 95% interval from the repetitions (the "
    "gate's bootstrap; at least 4 repetitions on each side), 'no measurable change' when it contains 1.00.",
    "The throughput column is the case's own counter (median over the repetitions): FLOP/s, tokens/s, "
    "elements/s or parameters/s where the case reports one, else bytes/s.",
]
