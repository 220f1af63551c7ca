"""Two micro-benchmark files compared by the gate: cases matched by name, each judged on its time per iteration and
on its speedup over its family's baseline variant.

The same statistics and the same rule as for runs (gate.py, comparison.py), on the repetitions of each case: a file
run without --benchmark_repetitions has one sample per case, so nothing can be judged and the gate says how many
repetitions would do. google/benchmark has no --max-noise, so a case's noise is reported against none.
"""

from __future__ import annotations

from ..read.micro import Case, MicroFile
from ..read.results import InputError
from .comparison import Comparison, gate_reasons, lost_row, lost_verdict, noise_entry
from .gate import NOT_COMPARED, UNSURE, Settings, Verdict, compare_samples, compare_speedups, untested


def _one_file(files: list[MicroFile], path: str, label: str) -> MicroFile:
    if len(files) > 1:
        raise InputError(
            f"{label} {path} holds {len(files)} micro-benchmark files "
            f"({', '.join(str(m.path) for m in files)}); pass one file per side"
        )
    return files[0]


def _describe_micro(m: MicroFile, path: str) -> dict:
    ctx = m.context
    return {
        "path": path,
        "device": m.device,
        "date": ctx.get("date"),
        "host": ctx.get("host_name"),
        "torch_version": ctx.get("torch_version"),
        "presets": ctx.get("stepwise_presets"),
        "cases": len(m.cases),
    }


def _micro_headline(m: MicroFile) -> str:
    ctx = m.context
    return (
        f"{m.path} ({m.device or 'device unknown'}, {ctx.get('date')}, host {ctx.get('host_name')}, "
        f"torch {ctx.get('torch_version') or '?'})"
    )


def _time_verdict(b: Case, c: Case, same_device: bool, settings: Settings, lost: dict | None) -> Verdict:
    if lost is not None:
        return lost_verdict(lost)
    if not b.ok or not c.ok:
        return untested(
            NOT_COMPARED, f"baseline {'ok' if b.ok else 'skipped'}, candidate {'ok' if c.ok else 'skipped'}"
        )
    if not same_device:
        return untested(NOT_COMPARED, "devices differ; see the speedups")
    if not b.samples or not c.samples:
        return untested(UNSURE, "no repetitions in the file (aggregates only), nothing to test")
    return compare_samples(b.samples_s, c.samples_s, settings, b.name)


def case_noise(side: str, c: Case) -> dict:
    """A micro-benchmark case's noise from its repetitions; google/benchmark has no --max-noise to hold it to."""
    return noise_entry(side, c.name, c.samples, None, None, noisy=False)


def _micro_lost(base: MicroFile, cand: MicroFile, allow_missing: bool) -> list[dict]:
    """Cases ok in the baseline and missing or skipped in the candidate: the same rule as for runs."""
    by_name = {c.name: c for c in cand.cases}
    lost = []
    for b in base.cases:
        c = by_name.get(b.name)
        if b.ok and c is None:
            lost.append(lost_row(b.name, "missing", None, allow_missing))
        elif b.ok and not c.ok:
            lost.append(lost_row(b.name, "skipped", c.error or "no measurement", allow_missing))
    return lost


def _micro_absolute(base: MicroFile, cand: MicroFile, settings: Settings, lost: list[dict]) -> list[dict]:
    """Per benchmark name in both files: candidate's median time ÷ baseline's, from the repetitions."""
    by_name = {c.name: c for c in cand.cases}
    lost_by_name = {r["name"]: r for r in lost}
    same_device = base.device == cand.device
    rows = []
    for b in base.cases:
        c = by_name.get(b.name)
        if c is None:
            continue
        row = {
            "name": b.name,
            "baseline_median_s": b.median_s if b.ok else None,
            "candidate_median_s": c.median_s if c.ok else None,
            "baseline_n": len(b.samples),
            "candidate_n": len(c.samples),
        }
        if b.ok and c.ok:
            row["noise"] = [case_noise("baseline", b), case_noise("candidate", c)]
        rows.append({**row, **_time_verdict(b, c, same_device, settings, lost_by_name.get(b.name)).as_dict()})
    return rows


def _micro_relative(base: MicroFile, cand: MicroFile, settings: Settings) -> list[dict]:
    """Each variant's speedup over its family's baseline variant, measured inside each file, compared."""
    by_name = {c.name: c for c in cand.cases}
    rows = []
    for b in base.cases:
        c, ref_b = by_name.get(b.name), base.baseline_of(b)
        ref_c = cand.baseline_of(c) if c is not None else None
        if c is None or ref_b is None or ref_c is None or not all(x.ok for x in (b, c, ref_b, ref_c)):
            continue
        verdict = compare_speedups(
            ref_b.samples_s, b.samples_s, ref_c.samples_s, c.samples_s, 1.0, 1.0, settings, f"{b.name} × baseline"
        )
        n = min(len(x.samples) for x in (b, c, ref_b, ref_c))
        noise = [case_noise("baseline", x) for x in (ref_b, b)] + [case_noise("candidate", x) for x in (ref_c, c)]
        rows.append(
            {
                "suite": b.family,
                "name": b.name,
                "speedup": f"× {ref_b.variant}",
                "baseline_speedup": base.speedup(b),
                "candidate_speedup": cand.speedup(c),
                "n": n,
                "noise": noise,
                **verdict.as_dict(),
            }
        )
    return rows


def compare_micro(
    files_b: list[MicroFile],
    files_c: list[MicroFile],
    baseline: str,
    candidate: str,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
) -> Comparison:
    base, cand = _one_file(files_b, baseline, "baseline"), _one_file(files_c, candidate, "candidate")
    same_device = base.device == cand.device
    if which == "absolute" and not same_device:
        raise InputError(
            f"--gate absolute compares times, but the devices differ ({base.device or '?'} vs "
            f"{cand.device or '?'}); use --gate relative"
        )
    lost = _micro_lost(base, cand, allow_missing)
    abs_rows, rel_rows = _micro_absolute(base, cand, settings, lost), _micro_relative(base, cand, settings)
    if not abs_rows:
        raise InputError(f"no benchmark name of the baseline ({baseline}) is in the candidate ({candidate})")
    names_b, names_c = {c.name for c in base.cases}, {c.name for c in cand.cases}
    return Comparison(
        kind="micro",
        headlines=(_micro_headline(base), _micro_headline(cand)),
        baseline=_describe_micro(base, baseline),
        candidate=_describe_micro(cand, candidate),
        settings=settings,
        gate=which,
        same_device=same_device,
        absolute=abs_rows,
        relative=rel_rows,
        loss=[],
        lost=lost,
        only_in_baseline=[c.name for c in base.cases if c.name not in names_c],
        only_in_candidate=[c.name for c in cand.cases if c.name not in names_b],
        reasons=gate_reasons(abs_rows, rel_rows, [], lost, which, "time per iteration"),
        allow_missing=allow_missing,
    )
