"""What the report derives from results before it shows anything: ratio chains, flag effects, pairs and groups.

The tables and the figures show the same derived quantities, so they are computed once, here: each suite's ratio chain
(× previous against the last step that ran, × baseline) with each step's speedup and its interval; each flag's effect
alone and among all flags (one-at-a-time × leave-one-out); the libtorch and PyTorch eager rows of one configuration;
the compile groups (libtorch eager, libtorch with its CUDA graph, PyTorch eager, torch.compile), by the flags in
effect; and distributed scaling pairs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..read.results import LIBTORCH, PYTHON_EAGER, Result, Run, SuiteGroup, implementation_rank, parse_time, ratio_of
from ..stats.speedup import Speedup, speedup

# --- the ratio chain of one suite ----------------------------------------------------------------


@dataclass
class SuiteRow:
    """One configuration of a suite, a row of its ratio chain, with its × previous (the last ok row before it) and
    × baseline. The tables call it a step, as the published tables do; the type is named apart from a training
    step."""

    result: Result
    x_previous: float | None = None
    previous: SuiteRow | None = None
    # Labels of the skipped or failed steps between `previous` and this one: their flags are
    # still in effect here, so × previous spans them.
    spans: list[str] = field(default_factory=list)
    x_baseline: float | None = None
    base: SuiteRow | None = None  # what × baseline is against

    @property
    def index(self) -> int:
        return self.result.index

    @property
    def label(self) -> str:
        return self.result.label

    @property
    def added(self) -> list[str]:
        return self.result.added

    @property
    def ok(self) -> bool:
        return self.result.ok


def build_chain(results: list[Result]) -> list[SuiteRow]:
    """Steps in suite order. Ratios are of tokens/s, so a step that changes the batch compares fairly.

    × previous only exists in cumulative suites (elsewhere the previous configuration is unrelated).
    × baseline is against index 0: the baseline, or all flags for leave-one-out; lone configurations
    (no suite) are measured against the one with no flags, when there is one.
    """
    # Only libtorch rows: a Python row of the same configuration is not a row of the suite.
    steps = [SuiteRow(r) for r in sorted((r for r in results if r.is_libtorch), key=lambda r: (r.index, r.name))]
    if not steps:
        return steps
    kind = steps[0].result.suite_kind
    if kind == "single":
        base = next((s for s in steps if s.ok and not s.result.flags), None)
    else:
        base = steps[0] if steps[0].index == 0 and steps[0].ok else None
    cumulative = kind == "cumulative"
    last_ok: SuiteRow | None = None
    pending: list[str] = []
    for step in steps:
        if not step.ok:
            if last_ok is not None:
                pending.append(step.label)
            continue
        if base is not None:
            step.x_baseline = step.result.tokens_per_s / base.result.tokens_per_s
            step.base = base
        if cumulative and last_ok is not None:
            step.previous = last_ok
            step.x_previous = step.result.tokens_per_s / last_ok.result.tokens_per_s
            step.spans = pending
        last_ok, pending = step, []
    return steps


def x_previous(suite_row: SuiteRow) -> Speedup | None:
    """The step's speedup over the last step that ran before it, with its interval."""
    return speedup(suite_row.previous.result, suite_row.result) if suite_row.previous is not None else None


def x_baseline(suite_row: SuiteRow) -> Speedup | None:
    """The step's speedup over its suite's index-0 configuration, with its interval."""
    return speedup(suite_row.base.result, suite_row.result) if suite_row.base is not None else None


# --- flag interactions: one at a time × leave one out --------------------------------------------


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
    interval_alone: Speedup | None = None  # speedup_alone with its 95% interval
    interval_in_context: Speedup | None = None

    @property
    def interaction(self) -> float | None:
        """>1: the flag gains more among the others than alone (synergy); <1: its gain overlaps theirs."""
        if self.speedup_alone is None or self.speedup_in_context is None:
            return None
        return self.speedup_in_context / self.speedup_alone


def _libtorch(group: SuiteGroup | None) -> list[Result]:
    """The group's libtorch rows: the matrix never mixes in another implementation."""
    return [r for r in group.results if r.is_libtorch] if group is not None else []


def suite_reference(group: SuiteGroup | None) -> Result | None:
    """The group's index-0 configuration (no flags, or all flags for leave-one-out) when it ran: what every effect
    in it is measured against."""
    rows = _libtorch(group)
    if not rows:
        return None
    first = rows[0]
    return first if first.index == 0 and first.ok else None


def _by_flag(group: SuiteGroup | None, key: str) -> dict[str, Result]:
    out = {}
    for r in _libtorch(group):
        names = r.added if key == "added" else r.removed
        if r.index > 0 and len(names) == 1:
            out[names[0]] = r
    return out


def flag_effects(alone: SuiteGroup | None, removed: SuiteGroup | None, flags_info: list[dict]) -> list[FlagEffect]:
    base, all_on = suite_reference(alone), suite_reference(removed)
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
        effects.append(
            FlagEffect(
                flag=flag,
                summary=summaries.get(flag, ""),
                alone=a,
                without=w,
                speedup_alone=ratio_of(a.tokens_per_s, base.tokens_per_s) if a_ok else None,
                speedup_in_context=ratio_of(all_on.tokens_per_s, w.tokens_per_s) if w_ok else None,
                memory_alone=ratio_of(a.peak_reserved_bytes, base.peak_reserved_bytes) if a_ok else None,
                memory_in_context=ratio_of(all_on.peak_reserved_bytes, w.peak_reserved_bytes) if w_ok else None,
                interval_alone=speedup(base, a) if a_ok else None,
                interval_in_context=speedup(w, all_on) if w_ok else None,
            )
        )
    return effects


# --- the same configurations in PyTorch Python ----------------------------------------------------


def attached_rows(run: Run, device: str) -> dict[tuple[str, int], dict[str, Result]]:
    """Rows of other implementations by the (suite, index) of the libtorch row they stand beside."""
    out: dict[tuple[str, int], dict[str, Result]] = defaultdict(dict)
    for r in run.others:
        if r.device_key == device:
            slot = out[(r.suite_name, r.index)]
            if r.implementation not in slot or (r.ok and not slot[r.implementation].ok):
                slot[r.implementation] = r
    return out


def config_name(r: Result) -> str:
    return f"{r.suite_name} {r.index} {r.label}" if r.suite_kind != "single" else r.name


@dataclass
class EagerPair:
    """A configuration run by stepwise's C++ (libtorch) and by PyTorch eager in Python, on one machine."""

    libtorch: Result
    python: Result

    @property
    def ratio(self) -> Speedup | None:
        """Python eager's time per token ÷ C++'s (> 1: C++ is faster), with its 95% interval."""
        return speedup(self.python, self.libtorch)


def eager_pairs(run: Run, device: str) -> list[EagerPair]:
    attached = attached_rows(run, device)
    return [
        EagerPair(r, attached[(r.suite_name, r.index)][PYTHON_EAGER])
        for r in run.libtorch
        if r.device_key == device and PYTHON_EAGER in attached.get((r.suite_name, r.index), {})
    ]


IMPLEMENTATION_LABELS = {LIBTORCH: "libtorch eager", "libtorch-graph": "libtorch CUDA graph (compile flag)"}


@dataclass
class CompileGroup:
    """One configuration without compile, and every way of running it: libtorch eager, libtorch with its
    CUDA graph (the compile flag), PyTorch eager and each torch.compile mode."""

    title: str
    eager: Result | None = None  # libtorch, compile off
    graph: Result | None = None  # libtorch, compile on
    python: dict[str, Result] = field(default_factory=dict)

    def rows(self) -> list[tuple[str, Result]]:
        out = [(IMPLEMENTATION_LABELS[LIBTORCH], self.eager)] if self.eager else []
        out += [(IMPLEMENTATION_LABELS["libtorch-graph"], self.graph)] if self.graph else []
        out += [(k, self.python[k]) for k in sorted(self.python, key=implementation_rank)]
        return out

    @property
    def python_eager(self) -> Result | None:
        return self.python.get(PYTHON_EAGER)

    def over_python_eager(self, r: Result) -> Speedup | None:
        ref = self.python_eager
        return speedup(ref, r) if ref is not None else None

    def over_own_eager(self, r: Result) -> Speedup | None:
        """A compiled row over the eager row of its own implementation (what compiling bought)."""
        if r is self.graph and self.eager is not None:
            return speedup(self.eager, r)
        if r.implementation.startswith("python-compile") and self.python_eager is not None:
            return speedup(self.python_eager, r)
        return None


def compile_groups(run: Run, device: str) -> list[CompileGroup]:
    """Per configuration with the compile flag in effect or a python-compile* row: its libtorch eager and CUDA-graph
    rows (same flags in effect but compile; same preset, base batch and sequence) and the Python rows beside either.
    A row that asked for compile on a device that skipped it ran eager, and is grouped and labelled so."""
    attached = attached_rows(run, device)
    lib = [r for r in run.libtorch if r.device_key == device]

    def key(r: Result) -> tuple:
        return (
            r.preset,
            r.seq_len,
            r.config.get("base_batch_size") or r.batch_size,
            frozenset(set(r.flags_in_effect) - {"compile"}),
        )

    relevant = {
        key(r)
        for r in lib
        if "compile" in r.flags_in_effect
        or any(k.startswith("python-compile") for k in attached.get((r.suite_name, r.index), {}))
    }
    groups: dict[tuple, CompileGroup] = {}
    for r in lib:
        k = key(r)
        if k not in relevant:
            continue
        g = groups.setdefault(k, CompileGroup(config_name(r)))
        slot = "graph" if "compile" in r.flags_in_effect else "eager"
        current = getattr(g, slot)
        if current is None or (r.ok and not current.ok):
            setattr(g, slot, r)
        for impl, p in attached.get((r.suite_name, r.index), {}).items():
            if impl not in g.python or (p.ok and not g.python[impl].ok):
                g.python[impl] = p
    for g in groups.values():
        names = [config_name(x) for x in (g.eager, g.graph) if x is not None]
        g.title = " / ".join(names)
    return list(groups.values())


def compile_skipped(run: Run, device: str) -> str | None:
    """Why stepwise's compile flag was not in effect on `device` (the engine's reason from `config.flags_skipped`),
    when some row asked for it and none ran it; None when a row ran it or none asked."""
    lib = [r for r in run.libtorch if r.device_key == device]
    if any("compile" in r.flags_in_effect for r in lib):
        return None
    return next((r.flags_skipped["compile"] for r in lib if "compile" in r.flags_skipped), None)


# --- distributed scaling -------------------------------------------------------------------------


@dataclass
class Scaling:
    single: Result
    multi: Result

    @property
    def world_size(self) -> int:
        return self.multi.world_size

    @property
    def efficiency(self) -> float:
        # tokens_per_s of a distributed result is global (all ranks), so this is the usual
        # weak-scaling efficiency: 1.0 means N ranks did N times the work of one.
        return self.multi.tokens_per_s / (self.world_size * self.single.tokens_per_s)


def _newest(results: list[Result]) -> Result:
    return max(results, key=lambda r: parse_time(r.timestamp))


def find_scaling(results: list[Result]) -> list[Scaling]:
    """Pairs of the same configuration on the same device model, on 1 and on N ranks."""
    groups: dict[tuple, dict[int, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.ok:
            groups[(r.device_key, r.config_key)][r.world_size].append(r)
    pairs = []
    for by_size in groups.values():
        if 1 not in by_size:
            continue
        single = _newest(by_size[1])
        for size in sorted(s for s in by_size if s > 1):
            pairs.append(Scaling(single, _newest(by_size[size])))
    return sorted(pairs, key=lambda p: (p.multi.name, p.world_size))
