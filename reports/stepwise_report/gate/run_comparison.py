"""Two runs compared by the gate: configurations matched, each judged on its step time and on the speedups measured
inside each run.

A configuration is keyed by suite, index, label and implementation, and one renamed inside its suite is still
matched by flags + preset + batch + sequence length, so renaming a step does not lose its history. Step times are
compared per token (a max_batch step whose batch was probed differently still compares) and only on the same device;
a within-run speedup (× previous, × baseline, all ÷ all without it) travels across machines.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..analysis.analysis import build_chain
from ..read.results import InputError, Result, devices
from .comparison import (
    Comparison,
    gate_reasons,
    lost_row,
    lost_verdict,
    refuse_different_machines,
    result_noise,
)
from .gate import NOT_COMPARED, Settings, compare_samples, compare_speedups, untested

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Side:
    """One side of a comparison of runs: the results of one run, and the path they came from."""

    label: str
    path: str
    results: list[Result]

    @property
    def run_id(self) -> str:
        return self.results[0].run_id

    @property
    def devices(self) -> list[str]:
        return devices(self.results)

    def describe(self) -> dict:
        first = self.results[0]
        return {
            "path": self.path,
            "run_id": self.run_id,
            "device": "; ".join(self.devices),
            "git_commit": first.git_commit,
            "git_dirty": first.git_dirty,
            "timestamp": first.timestamp,
            "configurations": len(self.results),
        }

    def headline(self) -> str:
        return f"{self.run_id} ({'; '.join(self.devices)}, commit {self.results[0].git_commit[:12]})"


def commits_behind(old: str, new: str) -> int | None:
    """How many commits `new` has that `old` lacks, from this checkout's history; None when git cannot say (a
    commit not in this clone, no git)."""
    try:
        run = subprocess.run(
            ["git", "-C", str(ROOT), "rev-list", "--count", f"{old}..{new}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return int(run.stdout) if run.returncode == 0 and run.stdout.strip().isdigit() else None


def stale_notes(base_commit: str, cand_commit: str) -> list[str]:
    """A baseline made from other code than the candidate's, said with the verdict: its commit and how far behind."""
    if base_commit == cand_commit or "unknown" in (base_commit, cand_commit):
        return []
    behind = commits_behind(base_commit, cand_commit)
    if behind is None:
        how_far = f"not an ancestor this checkout knows of the candidate's {cand_commit[:12]}"
    elif behind == 0:
        how_far = f"newer than the candidate's {cand_commit[:12]}"
    else:
        how_far = f"{behind} commit{'s' if behind != 1 else ''} behind the candidate's {cand_commit[:12]}"
    return [
        f"stale baseline: made at commit {base_commit[:12]}, {how_far}; a change may be the code's, not a regression"
    ]


def side(results: list[Result], path: str, label: str) -> Side:
    runs = sorted({r.run_id for r in results})
    if len(runs) > 1:
        raise InputError(
            f"{label} {path} holds {len(runs)} runs ({', '.join(runs)}); pass one run directory or result file per side"
        )
    return Side(label, path, results)


def match(base: Side, cand: Side) -> tuple[list[tuple[Result, Result, str]], list[Result], list[Result]]:
    """Pairs by name (suite/NN_label[.implementation]) and implementation, then the rest by suite, implementation
    and flags + preset + batch + sequence length (a step renamed inside its suite)."""
    by_name = {(r.name, r.implementation): r for r in cand.results}
    pairs, left = [], []
    used: set[int] = set()
    for b in base.results:
        c = by_name.get((b.name, b.implementation))
        if c is not None:
            pairs.append((b, c, "name"))
            used.add(id(c))
        else:
            left.append(b)
    rest = [c for c in cand.results if id(c) not in used]
    unmatched_base = []
    for b in left:
        same = [c for c in rest if c.suite_name == b.suite_name and c.config_key == b.config_key]
        if len(same) == 1:
            pairs.append((b, same[0], "configuration"))
            rest.remove(same[0])
        else:
            unmatched_base.append(b)
    return pairs, unmatched_base, rest


def run_lost(pairs, only_base: list[Result], allow_missing: bool) -> list[dict]:
    """Configurations ok in the baseline and missing, skipped or failed in the candidate, in baseline order."""
    lost = {
        b.name: lost_row(b.name, c.status, c.reason or "no reason given", allow_missing)
        for b, c, _ in pairs
        if b.ok and not c.ok
    }
    lost.update({b.name: lost_row(b.name, "missing", None, allow_missing) for b in only_base if b.ok})
    order = {b.name: i for i, (b, _, _) in enumerate(pairs)} | {b.name: len(pairs) + i for i, b in enumerate(only_base)}
    return sorted(lost.values(), key=lambda r: order[r["name"]])


def config_difference(b: Result, c: Result) -> str | None:
    diffs = [
        f"{what} {x} vs {y}"
        for what, x, y in (
            ("preset", b.preset, c.preset),
            ("seq_len", b.seq_len, c.seq_len),
            ("flags", "+".join(b.flags) or "none", "+".join(c.flags) or "none"),
        )
        if x != y
    ]
    return "configuration differs: " + "; ".join(diffs) if diffs else None


def _run_absolute(pairs, settings: Settings, lost: list[dict]) -> list[dict]:
    """Per matched configuration: candidate's median step time per token ÷ baseline's."""
    lost_by_name = {r["name"]: r for r in lost}
    rows = []
    for b, c, how in pairs:
        row = {
            "name": b.name,
            "candidate_name": c.name,
            "matched_by": how,
            "baseline_median_ms": b.median_ms if b.ok else None,
            "candidate_median_ms": c.median_ms if c.ok else None,
            "baseline_n": len(b.samples_ms),
            "candidate_n": len(c.samples_ms),
        }
        if b.name in lost_by_name:
            verdict = lost_verdict(lost_by_name[b.name])
        elif not b.ok or not c.ok:
            verdict = untested(NOT_COMPARED, f"baseline {b.status}, candidate {c.status}")
        elif b.device_key != c.device_key:
            verdict = untested(
                NOT_COMPARED, f"devices differ ({b.device_key} vs {c.device_key}); see the relative speedups"
            )
        elif (diff := config_difference(b, c)) is not None:
            verdict = untested(NOT_COMPARED, diff)
        else:
            # Time per token, so a step whose batch was probed differently (max_batch) still compares.
            tb, tc = b.tokens_per_step, c.tokens_per_step
            verdict = compare_samples([t / tb for t in b.samples_ms], [t / tc for t in c.samples_ms], settings, b.name)
            if b.batch_size != c.batch_size:
                verdict.note += f"; batch {b.batch_size} vs {c.batch_size}, compared per token"
            row["noise"] = [result_noise("baseline", b), result_noise("candidate", c)]
        rows.append({**row, **verdict.as_dict()})
    return rows


def speedup_specs(steps_b, steps_c) -> list[tuple]:
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


def _run_relative(base: Side, cand: Side, settings: Settings) -> list[dict]:
    """Per step both runs measured: its speedup inside the candidate run ÷ inside the baseline run."""
    rows = []
    libtorch_b = [r for r in base.results if r.is_libtorch]
    libtorch_c = [r for r in cand.results if r.is_libtorch]
    suites = sorted({r.suite_name for r in libtorch_b if r.suite} & {r.suite_name for r in libtorch_c if r.suite})
    for suite in suites:
        steps_b = build_chain([r for r in libtorch_b if r.suite_name == suite])
        steps_c = build_chain([r for r in libtorch_c if r.suite_name == suite])
        kind = steps_b[0].result.suite_kind
        for label, sb, ref_b, ref_c, sc in speedup_specs(steps_b, steps_c):
            row = {"suite": suite, "name": sb.result.name, "speedup": label}
            if ref_b is None or ref_c is None or ref_b.result.name != ref_c.result.name:
                names = [x.result.name if x else "none" for x in (ref_b, ref_c)]
                rows.append(
                    {**row, **untested(NOT_COMPARED, f"previous ok step differs ({names[0]} vs {names[1]})").as_dict()}
                )
                continue
            # Leave-one-out measures a flag by removing it: its speedup is all ÷ without.
            (rb, xb), (rc, xc) = ((sb, ref_b), (sc, ref_c)) if kind == "leave_one_out" else ((ref_b, sb), (ref_c, sc))
            tok_b = xb.result.tokens_per_step / rb.result.tokens_per_step
            tok_c = xc.result.tokens_per_step / rc.result.tokens_per_step
            verdict = compare_speedups(
                rb.result.samples_ms,
                xb.result.samples_ms,
                rc.result.samples_ms,
                xc.result.samples_ms,
                tok_b,
                tok_c,
                settings,
                f"{sb.result.name} {label}",
            )
            speed_b = xb.result.tokens_per_s / rb.result.tokens_per_s
            speed_c = xc.result.tokens_per_s / rc.result.tokens_per_s
            n = min(len(x.result.samples_ms) for x in (rb, xb, rc, xc))
            noise = [result_noise("baseline", x.result) for x in (rb, xb)] + [
                result_noise("candidate", x.result) for x in (rc, xc)
            ]
            rows.append(
                {
                    **row,
                    "baseline_speedup": speed_b,
                    "candidate_speedup": speed_c,
                    "n": n,
                    "noise": noise,
                    **verdict.as_dict(),
                }
            )
    return rows


def loss_rows(pairs) -> list[dict]:
    """Configurations whose loss check says 'math changed' in the candidate; only a new one is a regression."""
    rows = []
    for b, c, _ in pairs:
        if c.ok and c.loss_status == "math changed":
            known = b.ok and b.loss_status == "math changed"
            rows.append(
                {
                    "name": c.name,
                    "baseline": b.loss_status if b.ok else b.status,
                    "candidate": c.loss_status,
                    "regression": not known,
                    "note": "already math changed in the baseline" if known else "newly math changed",
                }
            )
    return rows


def compare_runs(
    results_b: list[Result],
    results_c: list[Result],
    baseline: str,
    candidate: str,
    settings: Settings,
    which: str,
    allow_missing: bool = False,
    across_machines: bool = False,
) -> Comparison:
    """Two plain runs (no rounds): each row's step samples against the other's. On two machines it refuses
    (comparison.DifferentMachines) unless `across_machines`."""
    base, cand = side(results_b, baseline, "baseline"), side(results_c, candidate, "candidate")
    refuse_different_machines(base.results[0].env, cand.results[0].env, across_machines)
    same_device = base.devices == cand.devices and len(base.devices) == 1
    if which == "absolute" and not same_device:
        raise InputError(
            f"--gate absolute compares step times, but the devices differ "
            f"({'; '.join(base.devices)} vs {'; '.join(cand.devices)}); use --gate relative"
        )
    pairs, only_base, only_cand = match(base, cand)
    if not pairs:
        raise InputError(
            f"no configuration of the baseline ({base.run_id}) matches one of the candidate "
            f"({cand.run_id}) by name or by flags + preset + batch + sequence length"
        )
    lost = run_lost(pairs, only_base, allow_missing)
    abs_rows, rel_rows = _run_absolute(pairs, settings, lost), _run_relative(base, cand, settings)
    losses = loss_rows(pairs)
    return Comparison(
        kind="stepwise",
        headlines=(base.headline(), cand.headline()),
        baseline=base.describe(),
        candidate=cand.describe(),
        settings=settings,
        gate=which,
        same_device=same_device,
        absolute=abs_rows,
        relative=rel_rows,
        loss=losses,
        lost=lost,
        only_in_baseline=[r.name for r in only_base],
        only_in_candidate=[r.name for r in only_cand],
        reasons=gate_reasons(abs_rows, rel_rows, losses, lost, which, "step time"),
        allow_missing=allow_missing,
        notes=stale_notes(base.results[0].git_commit, cand.results[0].git_commit),
    )
