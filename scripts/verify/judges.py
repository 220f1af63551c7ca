"""The judges of what ablate and stepwise_micro wrote: each reads a step's result files and says, in lines of verify.md,
whether every path ran, with its figures (tokens/s, speedups, the kernel attention ran, the layers in FP8, the largest
batch, the steps to a target). A row during which the GPU throttled says so on its line (its result's gpu_state,
read defensively: results written before it lack the key). PASS/FAIL assertions about a property of the numbers
belong in tests/gpu, which the gpu_results step runs over the same results."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from verify.line import Line, say
from verify.runner import Outcome, Verifier
from verify.target import ROOT

# The report's reader of result documents (it needs only the standard library, as verify does).
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.read.inputs import read_results  # noqa: E402


def results_under(directory: Path) -> list[dict]:
    """stepwise result documents under directory, by suite and position, as the report's reader finds them (a
    half-written file is passed over). Read key by key where they are, as written: the pass's ./report step checks
    the same results against results/schema.json."""
    docs = [r.data for r in read_results([directory], validate=False)]
    return sorted(
        docs,
        key=lambda d: (
            (d.get("suite") or {}).get("name", ""),
            (d.get("suite") or {}).get("index", 0),
            d.get("implementation", "libtorch"),
        ),
    )


def engine_rows(docs: list[dict]) -> list[dict]:
    return [d for d in docs if d.get("implementation", "libtorch") == "libtorch"]


def fmt_tok(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} tok/s"


def gib(n: float | None) -> str:
    return "?" if n is None else f"{n / 2**30:.2f}"


def label(doc: dict) -> str:
    suite = doc.get("suite") or {}
    return suite.get("label") or doc.get("name", "?")


def throttle_note(doc: dict) -> str:
    """'throttled (reasons)' for a row during which the GPU held its clocks down, else ''."""
    state = doc.get("gpu_state")
    if not isinstance(state, dict) or not state.get("throttled"):
        return ""
    return "throttled (" + ", ".join(state.get("throttle_reasons") or ["no reason given"]) + ")"


def gpu_state_notes(docs: list[dict]) -> str:
    """What a step's rows say of the GPU's state: the rows it throttled during, or why a CUDA row recorded none."""
    throttled = [f"{label(d)} {n}" for d in docs if (n := throttle_note(d))]
    if throttled:
        return f"; GPU THROTTLED during {len(throttled)} row(s): " + "; ".join(throttled)
    unrecorded = [
        d["gpu_state"].get("reason")
        for d in docs
        if str((d.get("config") or {}).get("device", "")).startswith("cuda")
        and isinstance(d.get("gpu_state"), dict)
        and d["gpu_state"].get("status") == "not recorded"
    ]
    return f"; GPU state not recorded ({unrecorded[0]})" if unrecorded else ""


def describe_row(doc: dict) -> str:
    s = doc.get("summary") or {}
    mfu = (s.get("mfu") or {}).get("value")
    mem = (s.get("memory") or {}).get("peak_allocated_bytes")
    parts = [fmt_tok(s.get("tokens_per_s")), f"{s['step_ms']['median']:.1f} ms/step" if s.get("step_ms") else ""]
    if mfu is not None:
        parts.append(f"MFU {100 * mfu:.1f}%")
    if mem:
        parts.append(f"peak {mem / 2**30:.2f} GiB")
    backend = (doc.get("config") or {}).get("sdpa_backend_used")
    if backend:
        parts.append(f"attention: {backend}")
    parts.append(throttle_note(doc))
    return ", ".join(p for p in parts if p)


def suite_lines(v: Verifier, step: str, path: str, outcome: Outcome) -> list[Line]:
    """The step's line: every configuration ran (failed ones named), with the throughput from first to last row."""
    docs = results_under(outcome.directory)
    ok = [d for d in engine_rows(docs) if d["status"] == "ok"]
    skipped = sum(d["status"] == "skipped" for d in docs)
    failed = [d for d in docs if d["status"] == "failed"]
    figure = f"{len(ok)} ok, {skipped} skipped, {len(failed)} failed"
    if ok:
        first, last = ok[0]["summary"].get("tokens_per_s"), ok[-1]["summary"].get("tokens_per_s")
        ratio = f" ({last / first:.2f}x)" if first and last else ""
        figure += f"; {fmt_tok(first)} -> {fmt_tok(last)}{ratio}; last: {describe_row(ok[-1])}"
    figure += gpu_state_notes(engine_rows(docs))
    ran = outcome.last() if outcome.ran else None
    if outcome.over_time:
        during = f"stopped during {docs[-1]['name']} ({docs[-1].get('implementation')})" if docs else "no row finished"
        return [Line(path, "FAIL", figure, f"over its time of {outcome.budget:.0f} s: {during}", step, "time")]
    if ran is not None and ran.code not in (0, 1):
        return [Line(path, "FAIL", figure, f"{ran.status_text()}: {v.log_tail(step)}", step, "ablate")]
    if not docs:
        return [Line(path, "FAIL", figure, "no result files: " + v.log_tail(step), step, "ablate")]
    if failed:
        reason = "; ".join(f"{d['name']} ({d.get('implementation')}): {d.get('reason')}" for d in failed)
        return [Line(path, "FAIL", figure, reason, step, "ablate")]
    return [Line(path, "PASS", figure, "", step)]


def python_lines(docs: list[dict], stopped: bool) -> Iterable[Line]:
    """One line per Python row: its median step time over the C++ row's of the same configuration (the C++ vs Python
    table; >= 1.00: C++ at least as fast) and its losses against the C++ row's. A row its step's time-out stopped is
    a SKIP: the step's own line is the failure."""
    engine = {(d["suite"]["name"], d["suite"]["index"]): d for d in engine_rows(docs) if d["status"] == "ok"}
    table = []
    for d in docs:
        impl = d.get("implementation", "libtorch")
        if impl == "libtorch":
            continue
        cpp = engine.get((d["suite"]["name"], d["suite"]["index"]))
        path = f"{impl} vs C++: {d['suite']['name']} {label(d)}"
        if d["status"] != "ok" or cpp is None:
            status = "FAIL" if d["status"] == "failed" and not stopped else "SKIP"
            yield Line(
                path, status, "", str(d.get("reason") or "no C++ row of this configuration finished"), kind="ablate"
            )
            continue
        py_ms, cpp_ms = d["summary"]["step_ms"]["median"], cpp["summary"]["step_ms"]["median"]
        check = (d["summary"].get("loss") or {}).get("vs_libtorch") or {}
        compile_s = d["summary"].get("compile_s")
        note = throttle_note(d) or throttle_note(cpp)
        figure = (
            f"Python/C++ x{py_ms / cpp_ms:.3f} (C++ {cpp_ms:.1f} ms, {impl} {py_ms:.1f} ms"
            + (f", compiled in {compile_s:.0f} s" if compile_s else "")
            + f"); loss vs C++: {check.get('status')}"
            + (f"; {note}" if note else "")
        )
        changed = check.get("status") == "math changed"
        reason = check.get("reason", "") if changed else ""
        yield Line(path, "FAIL" if changed else "PASS", figure, reason, kind="ablate")
        table.append(
            f"  {label(d)[:28]:<28} {impl:<16} C++ {cpp_ms:8.1f} ms  Python {py_ms:8.1f} ms  Python/C++ x{py_ms / cpp_ms:.3f}"
        )
    if table:
        say("[verify] C++ vs Python (>= 1.00: the C++ step is at least as fast)\n" + "\n".join(table))


def judge_suite(name: str, path: str, python: bool = False) -> Callable[[Verifier, Outcome], Iterable[Line]]:
    def judge(v: Verifier, o: Outcome) -> Iterable[Line]:
        lines = suite_lines(v, name, path, o)
        return lines + (list(python_lines(results_under(o.directory), o.over_time)) if python else [])

    return judge


def over(doc: dict | None, base: dict | None) -> str:
    """doc's tokens/s over base's, or - when either did not run."""
    if not (doc and doc["status"] == "ok" and base and base["status"] == "ok"):
        return "-"
    return f"{doc['summary']['tokens_per_s'] / base['summary']['tokens_per_s']:.2f}x"


def judge_flags(v: Verifier, o: Outcome) -> Iterable[Line]:
    """Every flag once beside the baseline of the same process: its speed over the baseline's, what it ran (the
    attention kernel flash picked, compile's capture, the memory a memory flag freed), or why it was skipped."""
    lines = suite_lines(v, "flags", f"every flag once at {v.target.preset}, beside the baseline", o)
    rows = engine_rows(results_under(o.directory))
    base = next((d for d in rows if d["suite"].get("index") == 0), None)
    for d in rows:
        if d is base:
            continue
        flag = "+".join(d["suite"].get("added") or []) or label(d)
        path = f"{flag} at {v.target.preset} beside the baseline"
        if d["status"] != "ok":
            status = "SKIP" if d["status"] == "skipped" else "FAIL"
            lines.append(Line(path, status, "", str(d.get("reason")), "flags", "ablate"))
            continue
        parts = [f"{over(d, base)} the baseline's tok/s", describe_row(d)]
        compile_s = d["summary"].get("compile_s")
        if compile_s:
            parts.append(f"captured in {compile_s:.1f} s")
        m0, m1 = ((x or {}).get("summary", {}).get("memory") or {} for x in (base, d))
        if flag in ("checkpoint", "chunked_ce"):
            parts.append(f"activations {gib(m0.get('activation_bytes'))} -> {gib(m1.get('activation_bytes'))} GiB")
        lines.append(Line(path, "PASS", "; ".join(p for p in parts if p), "", "flags"))
    return lines


def judge_ddp(v: Verifier, o: Outcome) -> Iterable[Line]:
    """Data parallel on one rank (NCCL on a GPU), a line per run: alone (eager, no flag), then with every flag but
    max_batch stacked on it, compile's graph around the all-reduce; a stack that fails is told from NCCL's own."""
    runs = (
        ("eager", "data parallel alone, one rank (NCCL on a GPU), no flag"),
        ("stacked", "data parallel, one rank, every flag but max_batch stacked on it, with compile"),
    )
    lines = []
    for k, (sub, path) in enumerate(runs):
        if k >= len(o.ran):
            lines.append(Line(path, "SKIP", "", "not run: the step's time ran out before it", "ddp_nccl", "time"))
            continue
        lines += suite_lines(v, "ddp_nccl", path, replace(o, ran=o.ran[k : k + 1], directory=o.directory / sub))
    return lines


def judge_fp8(v: Verifier, o: Outcome) -> Iterable[Line]:
    """The fp8 suite at each model size: the suite's line, then per size FP8's speedup over bf16, alone and under
    compile, and the layers that ran in FP8 (none where the small-GEMM filter kept them all in bf16), or why the FP8
    row was skipped."""
    lines = suite_lines(v, o.directory.name, f"fp8 suite at {', '.join(fp8_presets(v, o))}", o)
    points: dict[str, dict[int, dict]] = {}
    for doc in engine_rows(results_under(o.directory)):
        rowwise = str(doc.get("run_id", "")).endswith("_rowwise")  # fp8_cmds' second run
        point = doc["config"]["preset"] + (" (rowwise, every linear)" if rowwise else "")
        points.setdefault(point, {})[doc["suite"]["index"]] = doc
    parts = []
    for preset, rows in points.items():
        base, fp8, compiled = rows.get(0), rows.get(1), rows.get(2)
        if not fp8 or fp8["status"] != "ok":
            parts.append(f"{preset}: {fp8['status'] + ' (' + str(fp8.get('reason')) + ')' if fp8 else 'not run'}")
            continue
        layers = fp8["config"].get("fp8_layers") or []
        parts.append(
            f"{preset}: fp8 {over(fp8, base)}, with compile {over(compiled, base)} bf16, {len(layers)} layers in FP8"
            + (f" ({', '.join(sorted(set(str(x).split('.')[-1] for x in layers)))})" if layers else "")
        )
    if parts:
        lines.append(
            Line("fp8 over bf16, and the layers that ran in FP8", "PASS", "; ".join(parts), "", o.directory.name)
        )
    return lines


def fp8_presets(v: Verifier, o: Outcome) -> list[str]:
    return sorted({d["config"]["preset"] for d in engine_rows(results_under(o.directory))}) or [v.target.preset]


def judge_probes(v: Verifier, o: Outcome) -> Iterable[Line]:
    """The largest-batch probe alone and with each memory flag: the batch each chose and what it estimated. Whether a
    memory flag ever lowers it is a test (tests/gpu), reported by the gpu_results step."""
    path = f"largest-batch probe at {v.target.preset}, alone and with each memory flag"
    lines = suite_lines(v, "max_batch", path, o)
    parts = []
    for d in engine_rows(results_under(o.directory)):
        probe = d.get("max_batch_probe") or {}
        if d["status"] != "ok" or not probe:
            continue
        flags = "+".join(f for f in d["config"].get("flags_requested") or [] if f != "max_batch") or "alone"
        estimate = (probe.get("estimate") or {}).get("largest_batch", "?")
        stopped = f", stopped: {probe['stopped']}" if probe.get("stopped") else ""
        parts.append(
            f"{flags}: {probe.get('base')} -> {probe.get('chosen')} (estimate {estimate}, limit {probe.get('limit')}"
            f"{stopped}), {fmt_tok(d['summary'].get('tokens_per_s'))}"
        )
    if parts and lines[0].status == "PASS":
        lines[0].figure = "; ".join(parts) + gpu_state_notes(engine_rows(results_under(o.directory)))
    return lines


def judge_target(v: Verifier, o: Outcome) -> Iterable[Line]:
    """Each configuration's steps and timed seconds to the target loss on the fortunes corpus, and the guard's word."""
    return judge_target_rows("time_to_target", f"time to a target loss at {v.target.preset} (fortunes corpus)")(v, o)


def judge_target_rows(name: str, path: str) -> Callable[[Verifier, Outcome], Iterable[Line]]:
    """A step that trains to a target (time_to_target, the speedrun suite): its rows' steps and seconds to the target
    and the guard's word, in the step's first line."""
    return lambda v, o: target_lines(suite_lines(v, name, path, o), o)


def target_lines(lines: list[Line], o: Outcome) -> list[Line]:
    """`lines` with the rows of o's results, each reached/runs, steps and seconds to target, the guard's word."""
    parts = []
    for d in engine_rows(results_under(o.directory)):
        c = d.get("convergence") or {}
        if d["status"] != "ok" or not c:
            continue
        steps, secs = (c.get("steps") or {}).get("median"), (c.get("time_s") or {}).get("median")
        guard = c.get("guard") or {}
        reached = f"reached {c.get('reached')}/{c.get('runs')}"
        at = f" at {steps:.0f} steps in {secs:.1f} s" if steps is not None and secs is not None else ""
        verdict = guard.get("status") if guard.get("status") != "baseline" else ""
        parts.append(
            f"{label(d)}: {reached} of loss {c.get('target_loss')}{at}"
            + (f" (x{guard['time_ratio']:.2f} time)" if guard.get("time_ratio") else "")
            + (f", {verdict}" if verdict else "")
            + (f", {throttle_note(d)}" if throttle_note(d) else "")
        )
    if parts and lines[0].status == "PASS":
        lines[0].figure = "; ".join(parts)
    return lines


def micro_benchmarks(v: Verifier, o: Outcome, step: str, path: str) -> tuple[list[dict], Line | None]:
    """A stepwise_micro step's google/benchmark JSON (results/<step>.json), or the FAIL line saying why it has none;
    an unreadable file is kept for the archive, out of ./report's way (it would stop at the broken file)."""
    ran, target = o.last(), v.work / "results" / f"{step}.json"
    try:
        return json.loads(target.read_text())["benchmarks"], None
    except (OSError, ValueError, KeyError, TypeError) as e:
        if target.exists():
            target.rename(target.with_suffix(".json.partial"))
        reason = (
            f"stepwise_micro {ran.status_text()}; its JSON is unreadable "
            f"({type(e).__name__}: {str(e)[:160]}): {v.log_tail(step, 2)}"
        )
        return [], Line(path, "FAIL", "", reason, kind="time" if o.over_time else "micro")


def judge_micro(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "micro-benchmarks at GPT-2 sizes (one case per family)"
    benchmarks, failed = micro_benchmarks(v, o, "micro", path)
    if failed:
        return [failed]
    ran = o.last()
    errors = [b for b in benchmarks if b.get("error_occurred")]
    ran_ok = len(benchmarks) - len(errors)
    figure = f"{ran_ok} cases ran, {len(errors)} skipped with a reason"
    if ran.code != 0 or not ran_ok:
        reason = f"stepwise_micro {ran.status_text()}: {v.log_tail('micro', 2)}"
        return [Line(path, "FAIL", figure, reason, kind="time" if o.over_time else "micro")]
    return [Line(path, "PASS", figure)]


def judge_muon(v: Verifier, o: Outcome) -> Iterable[Line]:
    """Issue 57 on a GPU: what one Muon step launches with Newton-Schulz one matrix at a time and batched by shape,
    as the muon family counts it after its timed iterations (with its ATen ops; a CPU rehearsal has only those)."""
    path = "Muon's step, one matrix at a time and batched by shape: what it launches"
    benchmarks, failed = micro_benchmarks(v, o, "muon", path)
    if failed:
        return [failed]
    rows = {}  # variant -> its case: muon/<preset>/<variant>/step
    for b in benchmarks:
        parts = b.get("run_name", "").split("/")
        if len(parts) > 2:
            rows[parts[2]] = b
    ran, cases = o.last(), [rows.get(f"{form}_bf16") for form in ("per_matrix", "batched")]
    if ran.code != 0 or not all(c and not c.get("error_occurred") and "aten_ops" in c for c in cases):
        why = "; ".join(c.get("error_message") or c.get("label", "") for c in cases if c) or "no case ran"
        reason = f"stepwise_micro {ran.status_text()}: {why}: {v.log_tail('muon', 2)}"
        return [Line(path, "FAIL", "", reason, kind="time" if o.over_time else "micro")]
    per, batched = cases
    ops = f"ATen ops {int(per['aten_ops'])} / {int(batched['aten_ops'])}"
    if "launches" in per and "launches" in batched:
        launches = f"launches {int(per['launches'])} / {int(batched['launches'])}"
        return [Line(path, "PASS", f"per matrix / batched, one step: {launches}, {ops}")]
    if v.rehearsal:
        return [Line(path, "PASS", f"per matrix / batched, one step: {ops} (a CPU launches no kernels)")]
    return [Line(path, "SKIP", ops, per.get("label") or "the launches were not counted")]


def judge_report(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "./report over this pass's results"
    if not o.ran:
        return [Line(path, "SKIP", "", "no results to report")]
    ran = o.last()
    if ran.code == 0 and (v.work / "report" / "report.md").exists():
        validated = "NOT validated: jsonschema is missing" if "not validated" in ran.output else "validated"
        return [Line(path, "PASS", f"report.md, plots, dashboard, exports; results {validated}")]
    kind = "time" if o.over_time else "report"
    return [Line(path, "FAIL", "", f"{ran.status_text()}: {v.log_tail('report')}", kind=kind)]
