"""The regression gate's judgement, as data: what `./report compare` decides before anything is printed.

Step times are noisy and a gate that cries wolf gets switched off, so every change is judged the same way:
a two-sided Mann–Whitney U test on the raw samples and a seeded bootstrap CI of the ratio of medians, then a
SAME/FASTER/SLOWER/UNSURE verdict against a threshold. The same rule judges two runs (configurations matched
by name, else by flags + preset + batch + sequence length) and two micro-benchmark files (cases matched by
name), on absolute times and on the speedups measured inside each side; `gate_reasons` is the one rule that
says which verdicts fail the gate. The result is a Comparison; the command line prints it and writes its JSON.
"""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass

import numpy as np

from .results import Case, InputError, Inputs, MicroFile, Result, build_chain, devices

SAME, FASTER, SLOWER, UNSURE = "SAME", "FASTER", "SLOWER", "UNSURE"
FAILED, NOT_COMPARED = "FAILED", "N/A"
KIND_NAMES = {"stepwise": "stepwise run (result files)", "micro": "micro-benchmark file (google/benchmark JSON)"}


@dataclass
class Settings:
    threshold: float = 0.05  # relative change that counts as a regression
    alpha: float = 0.05
    min_samples: int = 9  # google/benchmark's compare.py asks for 9+ repetitions for its U test
    resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95

    def as_dict(self, gate: str) -> dict:
        return {"threshold": self.threshold, "alpha": self.alpha, "min_samples": self.min_samples,
                "bootstrap_resamples": self.resamples, "seed": self.seed, "confidence": self.confidence,
                "gate": gate}


@dataclass
class Verdict:
    verdict: str
    ratio: float | None  # the point estimate, as a ratio (candidate over baseline)
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    note: str

    def as_dict(self) -> dict:
        return asdict(self)


def untested(verdict: str, note: str) -> Verdict:
    """A verdict reached without statistics (not comparable, or failed)."""
    return Verdict(verdict, None, None, None, None, note)


def percent_change(ratio: float) -> str:
    """A ratio as the signed change it stands for: 1.1 → '+10.0%'."""
    return f"{100 * (ratio - 1):+.1f}%"


# --- statistics ----------------------------------------------------------------------------------


def rng_for(settings: Settings, key: str) -> np.random.Generator:
    # One generator per comparison, seeded by its name, so a verdict does not depend on which
    # other configurations happen to be compared in the same call.
    return np.random.default_rng([settings.seed, zlib.crc32(key.encode())])


def bootstrap_medians(samples: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, len(samples), size=(resamples, len(samples)))
    return np.median(samples[idx], axis=1)


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def classify(ratio: float, lo: float, hi: float, settings: Settings, worse_when_above: bool,
             p_value: float | None = None) -> tuple[str, str]:
    """Verdict and note for a ratio with its CI. A change is significant when the CI excludes 1
    (and, where a U test ran, p < alpha); only a significant change beyond the threshold is a
    regression or improvement."""
    t = settings.threshold
    ci_excludes_one = lo > 1 or hi < 1
    significant = ci_excludes_one and (p_value is None or p_value < settings.alpha)
    change = ratio - 1
    if significant:
        if abs(change) <= t:
            return SAME, f"significant change of {percent_change(ratio)} within the ±{100 * t:g}% threshold"
        worse = change > 0 if worse_when_above else change < 0
        return (SLOWER if worse else FASTER), f"{percent_change(ratio)} beyond the ±{100 * t:g}% threshold"
    if 1 - t <= lo and hi <= 1 + t:
        return SAME, "no significant change; the CI lies within the threshold"
    if ci_excludes_one:
        return UNSURE, f"the CI excludes no change but the U test does not (p={p_value:.3g})"
    return UNSURE, "inconclusive: the CI reaches beyond the threshold"


def compare_samples(baseline: list[float], candidate: list[float], settings: Settings, key: str) -> Verdict:
    """Step times (lower is better): ratio of medians candidate/baseline, U test and bootstrap CI."""
    a, b = np.asarray(baseline, dtype=float), np.asarray(candidate, dtype=float)
    point = float(np.median(b) / np.median(a)) if len(a) and len(b) else None
    if min(len(a), len(b)) < settings.min_samples:
        return Verdict(UNSURE, point, None, None, None,
                       f"too few samples (baseline {len(a)}, candidate {len(b)}; need ≥{settings.min_samples})")
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    if np.isnan(p):
        p = 1.0  # both samples constant and equal
    rng = rng_for(settings, key)
    ratios = bootstrap_medians(b, settings.resamples, rng) / bootstrap_medians(a, settings.resamples, rng)
    lo, hi = _interval(ratios, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above=True, p_value=p)
    return Verdict(verdict, point, lo, hi, p, note)


def compare_speedups(base_ref: list[float], base_step: list[float], cand_ref: list[float], cand_step: list[float],
                     token_ratio_base: float, token_ratio_cand: float, settings: Settings, key: str) -> Verdict:
    """A speedup measured inside each run, tok/s(step)/tok/s(ref), compared between the runs.

    The ratio is candidate speedup / baseline speedup (below 1: the flags lost some of their gain);
    its CI bootstraps all four step-time samples independently. token_ratio_* is
    tokens per step of the step over the reference (it differs when a step changes the batch).
    """
    sets = [np.asarray(x, dtype=float) for x in (base_ref, base_step, cand_ref, cand_step)]
    n = min(len(s) for s in sets)

    def speedup(ref, step, tokens) -> float:
        return tokens * float(np.median(ref)) / float(np.median(step))

    point = (speedup(sets[2], sets[3], token_ratio_cand) / speedup(sets[0], sets[1], token_ratio_base)
             if n else None)
    if n < settings.min_samples:
        return Verdict(UNSURE, point, None, None, None, f"too few samples (smallest set {n}; need ≥{settings.min_samples})")
    rng = rng_for(settings, key)
    br, bs, cr, cs = (bootstrap_medians(s, settings.resamples, rng) for s in sets)
    ratios = (token_ratio_cand * cr / cs) / (token_ratio_base * br / bs)
    lo, hi = _interval(ratios, settings.confidence)
    verdict, note = classify(point, lo, hi, settings, worse_when_above=False)
    return Verdict(verdict, point, lo, hi, None, note)


# --- the outcome ---------------------------------------------------------------------------------


def gate_reasons(abs_rows: list[dict], rel_rows: list[dict], loss_rows: list[dict], which: str,
                 measure: str) -> list[str]:
    """Why the gate fails (empty: it passes), for runs and micro-benchmark files alike: a SLOWER row of a
    comparison `which` gates, a FAILED configuration, a loss check newly 'math changed'. UNSURE never fails."""
    reasons = []
    if which in ("absolute", "both"):
        reasons += [f"{r['name']}: {measure} {percent_change(r['ratio'])} (SLOWER)" for r in abs_rows
                    if r["verdict"] == SLOWER]
    if which in ("relative", "both"):
        reasons += [f"{r['name']}: {r['speedup']} {percent_change(r['ratio'])} (speedup lost)"
                    for r in rel_rows if r["verdict"] == SLOWER]
    reasons += [f"{r['name']}: {r['note']}" for r in abs_rows if r["verdict"] == FAILED]
    reasons += [f"{r['name']}: loss check newly 'math changed'" for r in loss_rows if r["regression"]]
    return reasons


@dataclass
class Comparison:
    """Everything `./report compare` decided; compare.json is `as_dict()`."""

    kind: str  # "stepwise" (two runs) or "micro" (two micro-benchmark files)
    headlines: tuple[str, str]  # one line naming each side, baseline first
    baseline: dict
    candidate: dict
    settings: Settings
    gate: str  # which comparison can fail the gate: relative, absolute or both
    same_device: bool
    absolute: list[dict]
    relative: list[dict]
    loss: list[dict]
    only_in_baseline: list[str]
    only_in_candidate: list[str]
    reasons: list[str]  # why the gate fails; empty when it passes

    @property
    def exit_code(self) -> int:
        return 1 if self.reasons else 0

    @property
    def counts(self) -> dict[str, int]:
        """How many rows got each statistical verdict."""
        rows = self.absolute + self.relative
        return {v: sum(r["verdict"] == v for r in rows) for v in (SAME, FASTER, SLOWER, UNSURE)}

    def as_dict(self) -> dict:
        return {
            "kind": self.kind, "baseline": self.baseline, "candidate": self.candidate,
            "settings": self.settings.as_dict(self.gate), "same_device": self.same_device,
            "absolute": self.absolute, "relative": self.relative, "loss": self.loss,
            "only_in_baseline": self.only_in_baseline, "only_in_candidate": self.only_in_candidate,
            "gate": {"passed": not self.reasons, "exit_code": self.exit_code, "regressions": self.reasons},
        }


def compare(found_b: Inputs, found_c: Inputs, baseline: str, candidate: str, settings: Settings,
            which: str) -> Comparison:
    """Judges CANDIDATE against BASELINE: two runs, or two micro-benchmark files, never one of each."""
    kind_b, kind_c = _kind(found_b, "baseline", baseline), _kind(found_c, "candidate", candidate)
    if kind_b != kind_c:
        raise InputError(f"cannot compare a {KIND_NAMES[kind_b]} (baseline {baseline}) with a "
                         f"{KIND_NAMES[kind_c]} (candidate {candidate}); pass two of the same kind")
    if kind_b == "micro":
        return compare_micro(found_b.micro, found_c.micro, baseline, candidate, settings, which)
    return compare_runs(found_b.results, found_c.results, baseline, candidate, settings, which)


def _kind(found: Inputs, label: str, path: str) -> str:
    if found.results and found.micro:
        raise InputError(f"{label} {path} holds both stepwise results and micro-benchmark files; "
                         f"pass one run or one micro-benchmark file per side")
    return "micro" if found.micro else "stepwise"


# --- two runs ------------------------------------------------------------------------------------


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
        return {"path": self.path, "run_id": self.run_id, "device": "; ".join(self.devices),
                "git_commit": first.git_commit, "git_dirty": first.git_dirty, "timestamp": first.timestamp,
                "configurations": len(self.results)}

    def headline(self) -> str:
        return f"{self.run_id} ({'; '.join(self.devices)}, commit {self.results[0].git_commit[:12]})"


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


def _run_absolute(pairs, settings: Settings) -> list[dict]:
    """Per matched configuration: candidate's median step time per token ÷ baseline's."""
    rows = []
    for b, c, how in pairs:
        row = {"name": b.name, "candidate_name": c.name, "matched_by": how,
               "baseline_median_ms": b.median_ms if b.ok else None, "candidate_median_ms": c.median_ms if c.ok else None,
               "baseline_n": len(b.samples_ms), "candidate_n": len(c.samples_ms)}
        if b.ok and not c.ok:
            verdict = untested(FAILED if c.status == "failed" else NOT_COMPARED,
                               f"candidate {c.status}: {c.reason or 'no reason given'}")
        elif not b.ok or not c.ok:
            verdict = untested(NOT_COMPARED, f"baseline {b.status}, candidate {c.status}")
        elif b.device_key != c.device_key:
            verdict = untested(NOT_COMPARED,
                               f"devices differ ({b.device_key} vs {c.device_key}); see the relative speedups")
        elif (diff := _config_difference(b, c)) is not None:
            verdict = untested(NOT_COMPARED, diff)
        else:
            # Time per token, so a step whose batch was probed differently (max_batch) still compares.
            tb, tc = b.tokens_per_step, c.tokens_per_step
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


def _run_relative(base: Side, cand: Side, settings: Settings) -> list[dict]:
    """Per step both runs measured: its speedup inside the candidate run ÷ inside the baseline run."""
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
                rows.append({**row, **untested(NOT_COMPARED,
                                               f"previous ok step differs ({names[0]} vs {names[1]})").as_dict()})
                continue
            # Leave-one-out measures a flag by removing it: its speedup is all ÷ without.
            (rb, xb), (rc, xc) = ((sb, ref_b), (sc, ref_c)) if kind == "leave_one_out" else ((ref_b, sb), (ref_c, sc))
            tok_b = xb.result.tokens_per_step / rb.result.tokens_per_step
            tok_c = xc.result.tokens_per_step / rc.result.tokens_per_step
            verdict = compare_speedups(rb.result.samples_ms, xb.result.samples_ms, rc.result.samples_ms,
                                       xc.result.samples_ms, tok_b, tok_c, settings, f"{sb.result.name} {label}")
            speed_b = xb.result.tokens_per_s / rb.result.tokens_per_s
            speed_c = xc.result.tokens_per_s / rc.result.tokens_per_s
            rows.append({**row, "baseline_speedup": speed_b, "candidate_speedup": speed_c, **verdict.as_dict()})
    return rows


def _loss_rows(pairs) -> list[dict]:
    """Configurations whose loss check says 'math changed' in the candidate; only a new one is a regression."""
    rows = []
    for b, c, _ in pairs:
        if c.ok and c.loss_status == "math changed":
            known = b.ok and b.loss_status == "math changed"
            rows.append({"name": c.name, "baseline": b.loss_status if b.ok else b.status, "candidate": c.loss_status,
                         "regression": not known,
                         "note": "already math changed in the baseline" if known else "newly math changed"})
    return rows


def compare_runs(results_b: list[Result], results_c: list[Result], baseline: str, candidate: str,
                 settings: Settings, which: str) -> Comparison:
    base, cand = side(results_b, baseline, "baseline"), side(results_c, candidate, "candidate")
    same_device = base.devices == cand.devices and len(base.devices) == 1
    if which == "absolute" and not same_device:
        raise InputError(f"--gate absolute compares step times, but the devices differ "
                         f"({'; '.join(base.devices)} vs {'; '.join(cand.devices)}); use --gate relative")
    pairs, only_base, only_cand = match(base, cand)
    if not pairs:
        raise InputError(f"no configuration of the baseline ({base.run_id}) matches one of the candidate "
                         f"({cand.run_id}) by name or by flags + preset + batch + sequence length")
    abs_rows, rel_rows = _run_absolute(pairs, settings), _run_relative(base, cand, settings)
    loss_rows = _loss_rows(pairs)
    return Comparison(
        kind="stepwise", headlines=(base.headline(), cand.headline()),
        baseline=base.describe(), candidate=cand.describe(), settings=settings, gate=which, same_device=same_device,
        absolute=abs_rows, relative=rel_rows, loss=loss_rows,
        only_in_baseline=[r.name for r in only_base], only_in_candidate=[r.name for r in only_cand],
        reasons=gate_reasons(abs_rows, rel_rows, loss_rows, which, "step time"),
    )


# --- two micro-benchmark files -------------------------------------------------------------------


def _one_file(files: list[MicroFile], path: str, label: str) -> MicroFile:
    if len(files) > 1:
        raise InputError(f"{label} {path} holds {len(files)} micro-benchmark files "
                         f"({', '.join(str(m.path) for m in files)}); pass one file per side")
    return files[0]


def _describe_micro(m: MicroFile, path: str) -> dict:
    ctx = m.context
    return {"path": path, "device": m.device, "date": ctx.get("date"), "host": ctx.get("host_name"),
            "torch_version": ctx.get("torch_version"), "presets": ctx.get("stepwise_presets"),
            "cases": len(m.cases)}


def _micro_headline(m: MicroFile) -> str:
    ctx = m.context
    return (f"{m.path} ({m.device or 'device unknown'}, {ctx.get('date')}, host {ctx.get('host_name')}, "
            f"torch {ctx.get('torch_version') or '?'})")


def _time_verdict(b: Case, c: Case, same_device: bool, settings: Settings) -> Verdict:
    if b.ok and not c.ok:
        # It ran before on this device and no longer does: something broke.
        return untested(FAILED if same_device else NOT_COMPARED, f"candidate skipped: {c.error or 'no measurement'}")
    if not b.ok or not c.ok:
        return untested(NOT_COMPARED, f"baseline {'ok' if b.ok else 'skipped'}, candidate {'ok' if c.ok else 'skipped'}")
    if not same_device:
        return untested(NOT_COMPARED, "devices differ; see the speedups")
    if not b.samples or not c.samples:
        return untested(UNSURE, "no repetitions in the file (aggregates only), nothing to test")
    return compare_samples(b.samples_s, c.samples_s, settings, b.name)


def _micro_absolute(base: MicroFile, cand: MicroFile, settings: Settings) -> list[dict]:
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


def _micro_relative(base: MicroFile, cand: MicroFile, settings: Settings) -> list[dict]:
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


def compare_micro(files_b: list[MicroFile], files_c: list[MicroFile], baseline: str, candidate: str,
                  settings: Settings, which: str) -> Comparison:
    base, cand = _one_file(files_b, baseline, "baseline"), _one_file(files_c, candidate, "candidate")
    same_device = base.device == cand.device
    if which == "absolute" and not same_device:
        raise InputError(f"--gate absolute compares times, but the devices differ ({base.device or '?'} vs "
                         f"{cand.device or '?'}); use --gate relative")
    abs_rows, rel_rows = _micro_absolute(base, cand, settings), _micro_relative(base, cand, settings)
    if not abs_rows:
        raise InputError(f"no benchmark name of the baseline ({baseline}) is in the candidate ({candidate})")
    names_b, names_c = {c.name for c in base.cases}, {c.name for c in cand.cases}
    return Comparison(
        kind="micro", headlines=(_micro_headline(base), _micro_headline(cand)),
        baseline=_describe_micro(base, baseline), candidate=_describe_micro(cand, candidate), settings=settings,
        gate=which, same_device=same_device, absolute=abs_rows, relative=rel_rows, loss=[],
        only_in_baseline=[c.name for c in base.cases if c.name not in names_c],
        only_in_candidate=[c.name for c in cand.cases if c.name not in names_b],
        reasons=gate_reasons(abs_rows, rel_rows, [], which, "time per iteration"),
    )
