"""The regression gate: `./report compare BASELINE CANDIDATE` matches configurations and judges each change."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .results import InputError, Inputs, Result, build_chain, load_inputs
from .stats import FASTER, SAME, SLOWER, UNSURE, Settings, Verdict, compare_samples, compare_speedups
from .tables import absolute_table, change_cell, relative_table, to_text

GATES = ("relative", "absolute", "both")
FAILED, NOT_COMPARED = "FAILED", "N/A"
KIND_NAMES = {"stepwise": "stepwise run (result files)", "micro": "micro-benchmark file (google/benchmark JSON)"}


@dataclass
class Side:
    label: str
    path: str
    results: list[Result]

    @property
    def run_id(self) -> str:
        return self.results[0].run_id

    @property
    def devices(self) -> list[str]:
        return sorted({r.device_key for r in self.results})

    def describe(self) -> dict:
        first = self.results[0]
        return {"path": self.path, "run_id": self.run_id, "device": "; ".join(self.devices),
                "git_commit": first.git_commit, "git_dirty": first.git_dirty, "timestamp": first.timestamp,
                "configurations": len(self.results)}


def side(results: list[Result], path: str, label: str) -> Side:
    runs = sorted({r.run_id for r in results})
    if len(runs) > 1:
        raise InputError(f"{label} {path} holds {len(runs)} runs ({', '.join(runs)}); "
                         f"pass one run directory or result file per side")
    return Side(label, path, results)


def match(base: Side, cand: Side) -> tuple[list[tuple[Result, Result, str]], list[Result], list[Result]]:
    """Pairs by name (suite/NN_label), then the rest by flags + preset + batch + sequence length."""
    by_name = {r.name: r for r in cand.results}
    pairs, left = [], []
    used: set[int] = set()
    for b in base.results:
        c = by_name.get(b.name)
        if c is not None:
            pairs.append((b, c, "name"))
            used.add(id(c))
        else:
            left.append(b)
    rest = [c for c in cand.results if id(c) not in used]
    unmatched_base = []
    for b in left:
        same = [c for c in rest if c.config_key == b.config_key]
        if len(same) == 1:
            pairs.append((b, same[0], "configuration"))
            rest.remove(same[0])
        else:
            unmatched_base.append(b)
    return pairs, unmatched_base, rest


def _config_difference(b: Result, c: Result) -> str | None:
    diffs = [f"{what} {x} vs {y}" for what, x, y in (
        ("preset", b.preset, c.preset), ("seq_len", b.seq_len, c.seq_len),
        ("flags", "+".join(b.flags) or "none", "+".join(c.flags) or "none")) if x != y]
    return "configuration differs: " + "; ".join(diffs) if diffs else None


def absolute(pairs, settings: Settings) -> list[dict]:
    rows = []
    for b, c, how in pairs:
        row = {"name": b.name, "candidate_name": c.name, "matched_by": how,
               "baseline_median_ms": b.median_ms if b.ok else None, "candidate_median_ms": c.median_ms if c.ok else None,
               "baseline_n": len(b.samples_ms), "candidate_n": len(c.samples_ms)}
        if b.ok and not c.ok:
            gated = c.status == "failed"
            verdict = Verdict(FAILED if gated else NOT_COMPARED, None, None, None, None,
                              f"candidate {c.status}: {c.reason or 'no reason given'}")
        elif not b.ok or not c.ok:
            verdict = Verdict(NOT_COMPARED, None, None, None, None,
                              f"baseline {b.status}, candidate {c.status}")
        elif b.device_key != c.device_key:
            verdict = Verdict(NOT_COMPARED, None, None, None, None,
                              f"devices differ ({b.device_key} vs {c.device_key}); see the relative speedups")
        elif (diff := _config_difference(b, c)) is not None:
            verdict = Verdict(NOT_COMPARED, None, None, None, None, diff)
        else:
            # Time per token, so a step whose batch was probed differently (max_batch) still compares.
            tb, tc = b.tokens_per_measured_step, c.tokens_per_measured_step
            verdict = compare_samples([t / tb for t in b.samples_ms], [t / tc for t in c.samples_ms], settings, b.name)
            if b.batch_size != c.batch_size:
                verdict.note += f"; batch {b.batch_size} vs {c.batch_size}, compared per token"
        rows.append({**row, **verdict.as_dict()})
    return rows


def _speedup_specs(steps_b, steps_c) -> list[tuple]:
    """(label, baseline step, baseline reference, candidate reference, candidate step) for every
    within-run speedup both runs measured."""
    by_name_c = {s.result.name: s for s in steps_c}
    kind = steps_b[0].result.suite_kind
    base_b, base_c = steps_b[0], steps_c[0] if steps_c else None
    specs = []
    for sb in steps_b[1:]:
        sc = by_name_c.get(sb.result.name)
        if sc is None or not (sb.ok and sc.ok):
            continue
        if kind == "cumulative":
            specs.append(("× previous", sb, sb.previous, sc.previous, sc))
        if sb.previous is base_b and kind == "cumulative":
            continue  # × baseline would repeat × previous
        if base_c is not None and base_b.ok and base_c.ok and base_b.index == 0 and base_c.index == 0:
            label = "× all flags ÷ without" if kind == "leave_one_out" else "× baseline"
            specs.append((label, sb, base_b, base_c, sc))
    return specs


def relative(base: Side, cand: Side, settings: Settings) -> list[dict]:
    rows = []
    suites = sorted({r.suite_name for r in base.results if r.suite} & {r.suite_name for r in cand.results if r.suite})
    for suite in suites:
        steps_b = build_chain([r for r in base.results if r.suite_name == suite])
        steps_c = build_chain([r for r in cand.results if r.suite_name == suite])
        kind = steps_b[0].result.suite_kind
        for label, sb, ref_b, ref_c, sc in _speedup_specs(steps_b, steps_c):
            row = {"suite": suite, "name": sb.result.name, "speedup": label}
            if ref_b is None or ref_c is None or ref_b.result.name != ref_c.result.name:
                names = [x.result.name if x else "none" for x in (ref_b, ref_c)]
                rows.append({**row, **Verdict(NOT_COMPARED, None, None, None, None,
                                              f"previous ok step differs ({names[0]} vs {names[1]})").as_dict()})
                continue
            # Leave-one-out measures a flag by removing it: its speedup is all ÷ without.
            (rb, xb), (rc, xc) = ((sb, ref_b), (sc, ref_c)) if kind == "leave_one_out" else ((ref_b, sb), (ref_c, sc))
            tok_b = xb.result.tokens_per_measured_step / rb.result.tokens_per_measured_step
            tok_c = xc.result.tokens_per_measured_step / rc.result.tokens_per_measured_step
            verdict = compare_speedups(rb.result.samples_ms, xb.result.samples_ms, rc.result.samples_ms,
                                       xc.result.samples_ms, tok_b, tok_c, settings, f"{sb.result.name} {label}")
            speed_b = xb.result.tokens_per_s / rb.result.tokens_per_s
            speed_c = xc.result.tokens_per_s / rc.result.tokens_per_s
            rows.append({**row, "baseline_speedup": speed_b, "candidate_speedup": speed_c, **verdict.as_dict()})
    return rows


def loss(pairs) -> list[dict]:
    rows = []
    for b, c, _ in pairs:
        if c.ok and c.loss_status == "math changed":
            known = b.ok and b.loss_status == "math changed"
            rows.append({"name": c.name, "baseline": b.loss_status if b.ok else b.status, "candidate": c.loss_status,
                         "regression": not known,
                         "note": "already math changed in the baseline" if known else "newly math changed"})
    return rows


def gate(abs_rows, rel_rows, loss_rows, which: str, measure: str = "step time") -> list[str]:
    """Why the gate fails (empty: it passes)."""
    reasons = []
    if which in ("absolute", "both"):
        reasons += [f"{r['name']}: {measure} {change_cell(r['ratio'])} (SLOWER)" for r in abs_rows
                    if r["verdict"] == SLOWER]
    if which in ("relative", "both"):
        reasons += [f"{r['name']}: {r['speedup']} {change_cell(r['ratio'])} (speedup lost)"
                    for r in rel_rows if r["verdict"] == SLOWER]
    reasons += [f"{r['name']}: {r['note']}" for r in abs_rows if r["verdict"] == FAILED]
    reasons += [f"{r['name']}: loss check newly 'math changed'" for r in loss_rows if r["regression"]]
    return reasons


def finish(abs_rows: list[dict], rel_rows: list[dict], reasons: list[str], report: dict, json_path: Path | None) -> int:
    """Prints the verdict counts and the gate's reasons, writes the JSON report; the exit status."""
    code = 1 if reasons else 0
    counts = {v: sum(r["verdict"] == v for r in abs_rows + rel_rows) for v in (SAME, FASTER, SLOWER, UNSURE)}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    print(f"\ngate: {'FAIL' if code else 'PASS'} ({summary or 'nothing compared'})")
    for reason in reasons:
        print(f"  regression: {reason}")
    if json_path is not None:
        report = {**report, "gate": {"passed": not reasons, "exit_code": code, "regressions": reasons}}
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {json_path}")
    return code


def settings_dict(settings: Settings, which: str) -> dict:
    return {"threshold": settings.threshold, "alpha": settings.alpha, "min_samples": settings.min_samples,
            "bootstrap_resamples": settings.resamples, "seed": settings.seed, "confidence": settings.confidence,
            "gate": which}


def print_settings(settings: Settings, which: str, unit: str) -> None:
    print(f"threshold ±{100 * settings.threshold:g}%, alpha {settings.alpha}, {settings.resamples} bootstrap "
          f"resamples (seed {settings.seed}), at least {settings.min_samples} {unit}; gate on: {which}")


def _kind(found: Inputs, label: str, path: str) -> str:
    if found.results and found.micro:
        raise InputError(f"{label} {path} holds both stepwise results and micro-benchmark files; "
                         f"pass one run or one micro-benchmark file per side")
    return "micro" if found.micro else "stepwise"


def run_compare(baseline: str, candidate: str, settings: Settings, which: str, json_path: Path | None) -> int:
    found_b, found_c = load_inputs([baseline]), load_inputs([candidate])
    kind_b, kind_c = _kind(found_b, "baseline", baseline), _kind(found_c, "candidate", candidate)
    if kind_b != kind_c:
        raise InputError(f"cannot compare a {KIND_NAMES[kind_b]} (baseline {baseline}) with a "
                         f"{KIND_NAMES[kind_c]} (candidate {candidate}); pass two of the same kind")
    if kind_b == "micro":
        # microcompare builds on this module's helpers, so it is imported here rather than at the top.
        from .microcompare import run_micro_compare

        return run_micro_compare(found_b.micro, found_c.micro, baseline, candidate, settings, which, json_path)
    base, cand = side(found_b.results, baseline, "baseline"), side(found_c.results, candidate, "candidate")
    same_device = base.devices == cand.devices and len(base.devices) == 1
    if which == "absolute" and not same_device:
        raise InputError(f"--gate absolute compares step times, but the devices differ "
                         f"({'; '.join(base.devices)} vs {'; '.join(cand.devices)}); use --gate relative")
    pairs, only_base, only_cand = match(base, cand)
    if not pairs:
        raise InputError(f"no configuration of the baseline ({base.run_id}) matches one of the candidate "
                         f"({cand.run_id}) by name or by flags + preset + batch + sequence length")
    abs_rows, rel_rows, loss_rows = absolute(pairs, settings), relative(base, cand, settings), loss(pairs)
    reasons = gate(abs_rows, rel_rows, loss_rows, which)

    print(f"baseline:  {base.run_id} ({'; '.join(base.devices)}, commit {base.results[0].git_commit[:12]})")
    print(f"candidate: {cand.run_id} ({'; '.join(cand.devices)}, commit {cand.results[0].git_commit[:12]})")
    print_settings(settings, which, "steps")
    if not same_device:
        print("note: the devices differ, so absolute step times are not compared; within-run speedups are.")
    print("\nabsolute step time (candidate median vs baseline median; positive = slower):")
    print(to_text(absolute_table(abs_rows)))
    if rel_rows:
        print("\nspeedups measured inside each run (candidate vs baseline; negative = the flags lost gain):")
        print(to_text(relative_table(rel_rows)))
    if loss_rows:
        print("\nloss check:")
        for r in loss_rows:
            print(f"  {r['name']}: {r['candidate']} ({r['note']})")
    for label, items in (("only in baseline", only_base), ("only in candidate", only_cand)):
        if items:
            print(f"\n{label}: " + ", ".join(r.name for r in items))
    report = {
        "kind": "stepwise", "baseline": base.describe(), "candidate": cand.describe(),
        "settings": settings_dict(settings, which),
        "same_device": same_device, "absolute": abs_rows, "relative": rel_rows, "loss": loss_rows,
        "only_in_baseline": [r.name for r in only_base], "only_in_candidate": [r.name for r in only_cand],
    }
    return finish(abs_rows, rel_rows, reasons, report, json_path)
