"""`./report compare` on two micro-benchmark files: each case's repetitions, and each variant's speedup."""

from __future__ import annotations

from pathlib import Path

from .compare import FAILED, NOT_COMPARED, finish, gate, print_settings, settings_dict
from .results import Case, InputError, MicroFile
from .stats import UNSURE, Settings, Verdict, compare_samples, compare_speedups
from .tables import micro_absolute_table, relative_table, to_text


def one_file(files: list[MicroFile], path: str, label: str) -> MicroFile:
    if len(files) > 1:
        raise InputError(f"{label} {path} holds {len(files)} micro-benchmark files "
                         f"({', '.join(str(m.path) for m in files)}); pass one file per side")
    return files[0]


def describe(m: MicroFile, path: str) -> dict:
    ctx = m.context
    return {"path": path, "device": m.device, "date": ctx.get("date"), "host": ctx.get("host_name"),
            "torch_version": ctx.get("torch_version"), "presets": ctx.get("stepwise_presets"),
            "cases": len(m.cases)}


def _skip(verdict: str, note: str) -> Verdict:
    return Verdict(verdict, None, None, None, None, note)


def _time_verdict(b: Case, c: Case, same_device: bool, settings: Settings) -> Verdict:
    if b.ok and not c.ok:
        # It ran before on this device and no longer does: something broke.
        return _skip(FAILED if same_device else NOT_COMPARED, f"candidate skipped: {c.error or 'no measurement'}")
    if not b.ok or not c.ok:
        return _skip(NOT_COMPARED, f"baseline {'ok' if b.ok else 'skipped'}, candidate {'ok' if c.ok else 'skipped'}")
    if not same_device:
        return _skip(NOT_COMPARED, "devices differ; see the speedups")
    if not b.samples or not c.samples:
        return _skip(UNSURE, "no repetitions in the file (aggregates only), nothing to test")
    return compare_samples(b.samples_s, c.samples_s, settings, b.name)


def absolute(base: MicroFile, cand: MicroFile, settings: Settings) -> list[dict]:
    """Per benchmark name in both files: candidate's median time ÷ baseline's, from the repetitions."""
    by_name = {c.name: c for c in cand.cases}
    same_device = base.device == cand.device
    rows = []
    for b in base.cases:
        c = by_name.get(b.name)
        if c is None:
            continue
        row = {"name": b.name, "baseline_median_s": b.median_s if b.ok else None,
               "candidate_median_s": c.median_s if c.ok else None, "baseline_n": len(b.samples),
               "candidate_n": len(c.samples)}
        rows.append({**row, **_time_verdict(b, c, same_device, settings).as_dict()})
    return rows


def relative(base: MicroFile, cand: MicroFile, settings: Settings) -> list[dict]:
    """Each variant's speedup over its family's baseline variant, measured inside each file, compared."""
    by_name = {c.name: c for c in cand.cases}
    rows = []
    for b in base.cases:
        c, ref_b = by_name.get(b.name), base.baseline_of(b)
        ref_c = cand.baseline_of(c) if c is not None else None
        if c is None or ref_b is None or ref_c is None or not all(x.ok for x in (b, c, ref_b, ref_c)):
            continue
        verdict = compare_speedups(ref_b.samples_s, b.samples_s, ref_c.samples_s, c.samples_s, 1.0, 1.0,
                                   settings, f"{b.name} × baseline")
        rows.append({"suite": b.family, "name": b.name, "speedup": f"× {ref_b.variant}",
                     "baseline_speedup": base.speedup(b), "candidate_speedup": cand.speedup(c),
                     **verdict.as_dict()})
    return rows


def run_micro_compare(files_b: list[MicroFile], files_c: list[MicroFile], baseline: str, candidate: str,
                      settings: Settings, which: str, json_path: Path | None) -> int:
    base, cand = one_file(files_b, baseline, "baseline"), one_file(files_c, candidate, "candidate")
    same_device = base.device == cand.device
    if which == "absolute" and not same_device:
        raise InputError(f"--gate absolute compares times, but the devices differ ({base.device or '?'} vs "
                         f"{cand.device or '?'}); use --gate relative")
    abs_rows, rel_rows = absolute(base, cand, settings), relative(base, cand, settings)
    if not abs_rows:
        raise InputError(f"no benchmark name of the baseline ({baseline}) is in the candidate ({candidate})")
    names_b, names_c = {c.name for c in base.cases}, {c.name for c in cand.cases}
    only_base = [c.name for c in base.cases if c.name not in names_c]
    only_cand = [c.name for c in cand.cases if c.name not in names_b]
    reasons = gate(abs_rows, rel_rows, [], which, "time per iteration")

    for label, m in (("baseline: ", base), ("candidate:", cand)):
        print(f"{label} {m.path} ({m.device or 'device unknown'}, {m.context.get('date')}, "
              f"host {m.context.get('host_name')}, torch {m.context.get('torch_version') or '?'})")
    print_settings(settings, which, "repetitions")
    if not same_device:
        print("note: the devices differ, so absolute times are not compared; speedups over each family's "
              "baseline variant are.")
    print("\nabsolute time per iteration (candidate median vs baseline median; positive = slower):")
    print(to_text(micro_absolute_table(abs_rows)))
    if rel_rows:
        print("\nspeedups over each family's baseline variant, inside each file (negative = the variant lost gain):")
        print(to_text(relative_table(rel_rows)))
    for label, names in (("only in baseline", only_base), ("only in candidate", only_cand)):
        if names:
            print(f"\n{label}: " + ", ".join(names))
    report = {
        "kind": "micro", "baseline": describe(base, baseline), "candidate": describe(cand, candidate),
        "settings": settings_dict(settings, which), "same_device": same_device,
        "absolute": abs_rows, "relative": rel_rows, "loss": [],
        "only_in_baseline": only_base, "only_in_candidate": only_cand,
    }
    return finish(abs_rows, rel_rows, reasons, report, json_path)
