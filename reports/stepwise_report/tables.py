"""Every table of the report and of the gate: what each row says, and the notes that explain it.

A table's builder decides what a row says — a skipped step's reason, a ratio that spans it, a speedup with its
interval beside the published one, a short or noisy measurement, bf16 emulated on this CPU, the loss-check legend —
from results and the quantities analysis.py derives; formats.py turns numbers into cells and renders the Table. The
same tables fill report.md, the dashboard and the gate's terminal output.
"""

from __future__ import annotations

import re
from collections import defaultdict

from .analysis import (
    CompileGroup,
    EagerPair,
    FlagEffect,
    Scaling,
    SuiteRow,
    config_name,
    suite_reference,
    x_baseline,
    x_previous,
)
from .formats import (
    DASH,
    NO_INTERVAL,
    Table,
    fmt_duration,
    fmt_duration_range,
    fmt_flags,
    fmt_memory,
    fmt_ms,
    fmt_ms_spread,
    fmt_percent,
    fmt_rate,
    fmt_ratio,
    fmt_signed_percent,
    fmt_speedup,
    fmt_tokens,
    percent_change,
    time_unit,
)
from .micro import TIMING_SUFFIXES, Case, MicroFile
from .reference import Alignment, Reference, published_compile
from .results import Result, Run, SuiteGroup, implementation_rank, loss_check_reason
from .speedup import Speedup, case_speedup

# --- a suite's steps, the published table beside it, kernel traces, flags ------------------------

ARROW = {"up": "▲ faster", "down": "▼ slower", "flat": "= same"}


def _noise_text(r: Result) -> str:
    return f"noise {fmt_percent(r.noise, 0 if r.noise >= 0.1 else 1)}" if r.noise is not None else "noise n/a"


def measurement_mark(r: Result) -> str | None:
    """How far a measurement falls short of what the run asked for, or None: 'short: n=3, noise 12%' when --max-time
    stopped it before --steps steps ('noise n/a' below 2 steps); 'noisy: noise 41%, above --max-noise 2%' when its
    median is less certain than its own --max-noise (both, in one mark, when short and noisy)."""
    if not r.ok or not (r.short or r.noisy):
        return None
    # --max-noise as it was typed (a setting: 2%, 0.5%), the noise as measured.
    above = f", above --max-noise {100 * r.max_noise:g}%" if r.noisy and r.noise is not None and r.max_noise else ""
    if r.short:
        return f"short: n={len(r.samples_ms)}, {_noise_text(r)}{above}"
    return f"noisy: {_noise_text(r)}{above}"


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


def _x_previous_cell(step: SuiteRow) -> str:
    cell = fmt_speedup(x_previous(step))
    return cell + " †" if step.spans else cell


def x_baseline_cell(step: SuiteRow) -> str:
    """A row's × baseline with its interval; the baseline itself reads 1.00×."""
    if step.base is step:
        return fmt_ratio(1.0)  # the reference itself
    return fmt_speedup(x_baseline(step))


def _position(step: SuiteRow) -> str:
    if step.result.suite_kind != "single":
        return str(step.index)
    # Lone configurations have no suite index; their file number (NN_) orders them instead.
    m = re.match(r"(\d+)_", step.result.name.rsplit("/", 1)[-1])
    return str(int(m.group(1))) if m else DASH


def _change_cell(r: Result, kind: str) -> str:
    """What a step changes, by the flags in effect: a flag this device skipped (`config.flags_skipped`) is named
    apart, since it changed nothing here."""
    if kind == "leave_one_out":
        return fmt_flags(r.removed)
    if kind == "single":
        return fmt_flags(r.flags_in_effect)
    skipped = [f for f in r.added if f in r.flags_skipped]
    if not skipped or not r.ok:
        return fmt_flags(r.added if not r.ok else r.added_in_effect)
    cell = fmt_flags(r.added_in_effect) if r.added_in_effect else "nothing"
    return f"{cell} ({', '.join(skipped)} skipped on this device)"


def step_table(steps: list[SuiteRow]) -> Table:
    """Our steps. Cumulative suites carry × previous; every suite carries × its index-0 configuration."""
    kind = steps[0].result.suite_kind if steps else "cumulative"
    cumulative = kind == "cumulative"
    vs = {"leave_one_out": "× all flags", "single": "× no flags"}.get(kind, "× baseline")
    change = {"leave_one_out": "removes", "single": "flags"}.get(kind, "adds")
    headers = ["#", "step", change, "status", "tok/s"]
    headers += ["× previous"] if cumulative else []
    headers += [vs, "ms/step median (p10–p90)", "peak reserved", "MFU", "loss check"]
    rows = []
    for s in steps:
        r = s.result
        row = [_position(s), s.label, _change_cell(r, kind), status_cell(r), tokens_cell(r)]
        row += [_x_previous_cell(s)] if cumulative else []
        row += [x_baseline_cell(s), ms_cell(r), memory_cell(r), mfu_cell(r), loss_cell(r)]
        rows.append(row)
    align = ["r", "l", "l", "l", "r"] + (["r"] if cumulative else []) + ["r", "r", "r", "r", "l"]
    return Table(headers, rows, align=align, css_class="steps")


SPEEDUP_NOTE = (
    "× previous and × baseline: the ratio of median step times (times the tokens-per-step ratio "
    "where the batch differs) with its 95% interval, from the same bootstrap as ./report compare; a "
    "speedup whose interval contains 1.00 is no measurable change, not a gain."
)
SHORT_NOTE = (
    "short: the measured phase stopped at --max-time before --steps steps; n is the steps measured and "
    "noise the relative half-width of the median's 95% confidence interval, so its ratios carry wide "
    "intervals."
)
NOISY_NOTE = (
    "noisy: the median's 95% confidence interval is wider than the --max-noise the result was measured with "
    "(noise is its relative half-width; the time or step budget ran out first, or other work disturbed the "
    "steps), so its ratios carry wide intervals and ./report compare may be unable to judge it."
)


def measurement_notes(rows: list[Result | None]) -> list[str]:
    """The notes that explain the measurement marks appearing among `rows`."""
    shown = [r for r in rows if r is not None and measurement_mark(r)]
    return ([SHORT_NOTE] if any(r.short for r in shown) else []) + ([NOISY_NOTE] if any(r.noisy for r in shown) else [])


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


def step_notes(steps: list[SuiteRow]) -> list[str]:
    notes = []
    if any(s.ok for s in steps):
        notes.append(SPEEDUP_NOTE)
    if steps and steps[0].result.suite_kind == "cumulative":
        notes.append(
            "× previous compares with the last step that ran (status ok) before this one; "
            "skipped and failed steps are shown but never used as a denominator."
        )
    for s in steps:
        if s.spans:
            notes.append(
                f"† step {s.index} ({s.label}): × previous is against step {s.previous.index} "
                f"({s.previous.label}), across {', '.join(s.spans)}, which did not run."
            )
    ran = [s for s in steps if s.ok and s.result.suite_kind == "cumulative"]
    for before, after in zip(ran, ran[1:]):
        was, now = before.result.optimizer, after.result.optimizer
        if was and now and was != now and "fused_adamw" not in after.result.added_in_effect:
            notes.append(
                f"step {after.index} ({after.label}) also changes the optimizer, {was} → {now}, "
                "so its gain includes that change."
            )
    if steps and steps[0].result.suite_kind != "single" and not steps[0].ok:
        notes.append(f"the suite's index-0 configuration is {steps[0].result.status}, so no × baseline exists.")
    notes += measurement_notes([s.result for s in steps])
    notes += hardware_notes([(f"step {s.index} ({s.label})", s.result) for s in steps])
    reasons = sorted({s.result.mfu_reason for s in steps if s.ok and s.result.mfu is None and s.result.mfu_reason})
    notes += [f"MFU not given: {reason}" for reason in reasons]
    if any(s.result.memory_kind == "process_rss" for s in steps if s.ok):
        notes.append("on CPU, peak reserved memory is the process's peak resident set size (RSS).")
    notes += loss_legend([(f"step {s.index} ({s.label})", s.result.loss_check) for s in steps if s.ok])
    return notes


def published_table(ref: Reference) -> Table:
    """The published figures, with only the columns the source has."""
    headers = ["#", "published step", "adds"]
    align = ["r", "l", "l"]
    has_commit, has_metric = ref.has("commit"), ref.has("metric")
    has_ms, has_mem = ref.has("ms_per_step"), ref.has("reserved_gib")
    derived = not ref.has("tokens_per_s")
    headers += ["commit"] * has_commit + ["metric"] * has_metric
    align += ["l"] * (has_commit + has_metric)
    headers += ["tok/s (derived)" if derived else "tok/s", "× previous", "× baseline"]
    align += ["r", "r", "r"]
    if has_ms:
        headers.append("ms/step")
        align.append("r")
    if has_mem:
        headers.append("reserved (GiB)")
        align.append("r")
    rows = []
    for row in ref.rows:
        cells = [str(row.step), row.label, fmt_flags(list(row.added)) if not row.baseline else "(baseline)"]
        cells += [row.commit or DASH] * has_commit + [row.metric or DASH] * has_metric
        cells += [fmt_tokens(row.throughput), fmt_ratio(ref.x_previous(row)), fmt_ratio(ref.x_baseline(row))]
        if has_ms:
            # As published: no digits the source did not print.
            cells.append(("~" if row.approx else "") + (f"{row.ms_per_step:g}" if row.ms_per_step else DASH))
        if has_mem:
            cells.append(f"{row.reserved_gib:.2f}" if row.reserved_gib is not None else DASH)
        rows.append(cells)
    return Table(headers, rows, align=align, css_class="published")


def _direction_cell(a: Alignment) -> str:
    if a.published_direction is not None and a.ours_direction is None and a.ours_x_previous is not None:
        return f"? ({NO_INTERVAL}) / {ARROW[a.published_direction]}"
    if a.published_direction is None or a.ours_direction is None:
        return DASH
    cell = f"{ARROW[a.ours_direction]} / {ARROW[a.published_direction]}"
    return cell + " ⚠ differs" if a.differs else cell


def versus_table(alignments: list[Alignment]) -> Table:
    """Ours beside published, both as speedups over their own baseline, since the hardware differs."""
    headers = [
        "#",
        "step",
        "published step",
        "ours × previous",
        "published, same span",
        "ours × baseline",
        "published × baseline",
        "direction (ours / published)",
    ]
    rows, marked = [], set()
    for n, a in enumerate(alignments):
        s = a.step
        rows.append(
            [
                str(s.index),
                with_mark(s.label, s.result),
                a.row.label if a.row else "(not published)",
                _x_previous_cell(s),
                fmt_ratio(a.published_x_previous),
                x_baseline_cell(s),
                fmt_ratio(a.published_x_baseline),
                _direction_cell(a),
            ]
        )
        if a.differs:
            marked.add(n)
    return Table(headers, rows, align=["r", "l", "l", "r", "r", "r", "r", "l"], marked=marked, css_class="versus")


def has_trace(steps: list[SuiteRow]) -> bool:
    return any(s.result.trace for s in steps)


def _memcpy_cell(memcpy: dict | None) -> str:
    if not memcpy or not memcpy.get("h2d_count"):
        return "none"
    parts = [f"{memcpy['h2d_count']} H2D", fmt_memory(memcpy.get("h2d_bytes"))]
    if memcpy.get("h2d_source"):
        parts.append(memcpy["h2d_source"])
    if memcpy.get("h2d_gbps") is not None:
        parts.append(f"{memcpy['h2d_gbps']:.1f} GB/s")
    return ", ".join(parts)


def trace_table(steps: list[SuiteRow]) -> Table:
    headers = [
        "#",
        "step",
        "kernels/step",
        "GPU busy",
        "kernel ms/step",
        "idle ms/step",
        "attention kernel",
        "memcpy",
        "top kernel",
    ]
    rows = []
    for s in steps:
        t = s.result.trace
        head = [str(s.index), with_mark(s.label, s.result)]
        if not t:
            rows.append(head + ["not traced"] + [DASH] * 6)
        elif t.get("status") != "ok":
            rows.append(head + [f"trace unavailable: {t.get('reason') or 'no reason given'}"] + [DASH] * 6)
        else:
            top = (t.get("top_kernels") or [{}])[0]
            top_cell = f"{top['name']} ({fmt_ms(top.get('total_ms'))} ms)" if top.get("name") else DASH
            rows.append(
                head
                + [
                    f"{t['kernels_per_step']:.0f}" if t.get("kernels_per_step") is not None else DASH,
                    fmt_percent(t.get("busy_fraction")),
                    fmt_ms(t.get("kernel_ms_per_step")),
                    fmt_ms(t.get("idle_ms_per_step")),
                    t.get("attention_kernel") or DASH,
                    _memcpy_cell(t.get("memcpy")),
                    top_cell,
                ]
            )
    return Table(headers, rows, align=["r", "l", "r", "r", "r", "r", "l", "l", "l"], css_class="trace")


def _applies(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return DASH if value is None else str(value)


def flags_table(flags_info: list[dict]) -> Table:
    rows = [[f.get("name", ""), f.get("summary", ""), _applies(f.get("applies"))] for f in flags_info]
    return Table(["flag", "what it does", "applies"], rows, css_class="flags")


# --- the run header ------------------------------------------------------------------------------


def _distinct(results: list[Result], get) -> str:
    values = []
    for r in results:
        v = get(r)
        if v not in (None, "") and v not in values:
            values.append(v)
    return "; ".join(str(v) for v in values) or DASH


def batch_seq(results: list[Result]) -> str:
    def one(r: Result) -> str:
        base = r.config.get("base_batch_size") or r.batch_size
        return f"{base} × {r.seq_len}"

    text = _distinct(results, one)
    probed = sorted(
        {r.batch_size for r in results if r.batch_size != (r.config.get("base_batch_size") or r.batch_size)}
    )
    return text + (f" (max_batch measured batch {', '.join(map(str, probed))})" if probed else "")


def _model(r: Result) -> str:
    m = r.config.get("model") or {}
    params = m.get("parameters")
    shape = f"{m.get('n_layer')} layers × {m.get('n_embd')} wide, {m.get('n_head')} heads"
    return f"{r.preset} ({params / 1e6:.1f}M parameters; {shape})" if params else r.preset


def _cuda_versions(r: Result) -> str | None:
    keys = ("cuda_runtime_version", "driver_version", "cudnn_version")
    if not any(r.env.get(k) for k in keys):
        return None
    return " / ".join(str(r.env.get(k) or DASH) for k in keys)


def _run_cpu(r: Result) -> str:
    return f"{r.env.get('cpu_model') or DASH} ({r.env.get('cpu_threads') or '?'} threads)"


def _timing(r: Result) -> str:
    t = r.config["timing"]
    return (
        f"{t['clock']}, {t['warmup']} warm-up, {t['min_steps']}–{t['max_steps']} steps, "
        f"max noise {fmt_percent(t.get('max_noise'))}"
    )


def _cpu_bf16(r: Result) -> str | None:
    """Whether this CPU runs bf16 natively, as the engine says (`env.cpu_bf16_native`); None on a GPU or unknown."""
    if r.device_kind != "cpu" or r.cpu_bf16_native is None:
        return None
    at = f"ATen dispatches at {r.cpu_capability}" if r.cpu_capability else None
    if r.cpu_bf16_native:
        details = ", ".join(filter(None, [", ".join(r.env.get("cpu_bf16_flags") or []), at]))
        return f"native ({details})" if details else "native"
    return f"emulated: {r.bf16_emulated_because}; bf16 rows run far slower than fp32 here"


def configuration_counts(run: Run) -> str:
    """How many configurations ran, were skipped or failed; each incomplete suite with what it misses; and the
    rows of other implementations, counted apart."""
    rs = run.libtorch
    statuses = ", ".join(
        f"{sum(r.status == s for r in rs)} {s}" for s in ("ok", "skipped", "failed") if any(r.status == s for r in rs)
    )
    text = f"{len(rs)} ({statuses})" if rs else "0"
    for g in run.suites:
        if g.incomplete:
            text += f"; {g.name}: {g.incomplete} (missing {', '.join(g.missing)})"
    others = run.others
    if others:
        by_impl = defaultdict(int)
        for r in others:
            by_impl[r.implementation] += 1
        impls = ", ".join(f"{by_impl[k]} {k}" for k in sorted(by_impl, key=implementation_rank))
        ok = sum(r.ok for r in others)
        text += f"; plus {len(others)} PyTorch Python rows ({impls}; {ok} ok)"
    return text


def run_header(run: Run) -> Table:
    rs = run.results
    pairs = [
        ("device", _distinct(rs, lambda r: r.device_key)),
        ("torch", _distinct(rs, lambda r: r.env.get("torch_version"))),
        ("CUDA runtime / driver / cuDNN", _distinct(rs, _cuda_versions)),
        ("compiler", _distinct(rs, lambda r: r.env.get("compiler"))),
        ("CPU", _distinct(rs, _run_cpu)),
    ]
    if any(_cpu_bf16(r) for r in rs):
        pairs.append(("CPU bf16", _distinct(rs, _cpu_bf16)))
    python = _distinct(rs, lambda r: ", ".join(f"{k} {v}" for k, v in (r.env.get("python") or {}).items() if v))
    if python != DASH:
        pairs.append(("Python rows", python))
    pairs += [
        ("git commit", _distinct(rs, lambda r: r.git_commit + (" (dirty)" if r.git_dirty else ""))),
        ("date (UTC)", f"{run.started:%Y-%m-%d %H:%M:%S}"),
        ("preset", _distinct(rs, _model)),
        ("batch × sequence", batch_seq(rs)),
        ("timing", _distinct(rs, _timing)),
        ("host", _distinct(rs, lambda r: r.env.get("host"))),
        ("configurations", configuration_counts(run)),
    ]
    sweep = _distinct(rs, _sweep_point)
    if sweep != DASH:
        pairs.append(("sweep", sweep))
    return Table(["", ""], [[k, v] for k, v in pairs], css_class="header")


def _sweep_point(r: Result) -> str | None:
    """'20261125T101500Z_sweep_cpu, point 3 of 4: preset mini, seq_len 64' for a run that is one point of a sweep."""
    s = r.sweep
    if not s:
        return None
    point = ", ".join(f"{axis} {s['point'][axis]}" for axis in s["axes"] if axis in (s.get("point") or {}))
    return f"{s['id']}, point {s['index'] + 1} of {s['count']}" + (f": {point}" if point else "")


# --- flag interactions: one at a time × leave one out --------------------------------------------


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


# --- the same configurations in PyTorch Python ----------------------------------------------------


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


# --- distributed scaling -------------------------------------------------------------------------


def _rank_spread(r: Result) -> str:
    medians = (r.distributed or {}).get("rank_step_ms_median") or []
    if not medians:
        return DASH
    spread = max(medians) / min(medians) - 1 if min(medians) > 0 else None
    slowest = (r.distributed or {}).get("slowest_rank")
    return (
        f"{fmt_signed_percent(spread)} (slowest rank {slowest})" if slowest is not None else fmt_signed_percent(spread)
    )


def scaling_table(pairs: list[Scaling]) -> Table:
    headers = [
        "configuration",
        "device",
        "ranks",
        "backend",
        "tok/s on 1",
        "tok/s on N (global)",
        "per rank",
        "scaling efficiency",
        "rank step-time spread",
    ]
    rows = []
    for p in pairs:
        d = p.multi.distributed or {}
        rows.append(
            [
                with_mark(p.multi.name, p.multi),
                p.multi.device_name,
                str(p.world_size),
                str(d.get("backend") or DASH),
                fmt_tokens(p.single.tokens_per_s),
                fmt_tokens(p.multi.tokens_per_s),
                fmt_tokens(p.multi.tokens_per_s / p.world_size),
                fmt_percent(p.efficiency),
                _rank_spread(p.multi),
            ]
        )
    return Table(headers, rows, align=["l", "l", "r", "l", "r", "r", "r", "r", "r"], css_class="scaling")


def published_scaling_table(refs: list[Reference]) -> Table | None:
    rows = []
    for ref in refs:
        for s in ref.scaling:
            one = next((r for r in ref.rows if r.step == s.get("single_device_step")), None)
            if one is None or one.throughput is None:
                continue
            n = int(s["world_size"])
            rows.append(
                [
                    ref.title,
                    s["label"],
                    str(n),
                    fmt_tokens(one.throughput),
                    fmt_tokens(s["tokens_per_s"]),
                    fmt_percent(s["tokens_per_s"] / (n * one.throughput)),
                ]
            )
    if not rows:
        return None
    return Table(
        ["source", "setup", "ranks", "tok/s on 1", "tok/s on N (global)", "scaling efficiency"],
        rows,
        align=["l", "l", "r", "r", "r", "r"],
        css_class="published",
    )


# --- micro-benchmark files -----------------------------------------------------------------------

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


# --- the regression gate --------------------------------------------------------------------------


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
