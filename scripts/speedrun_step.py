#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""Is the speedrun stack's step as fast as the baseline's? A benchmark, not a test: it prints ratios, asserts nothing.

In one run, side by side (issue 57):

1. the step of the baseline, of the baseline with logit_softcap alone, of the CPU flags (dynamic_mask, fused_adamw,
   native_layers, flash) and of the speedrun stack (the CPU flags with rotary, qk_norm, relu2, zero_init_proj,
   logit_softcap and muon), at the tiny preset and
   at nanoGPT's CPU size (4 layers, 4 heads, 128 wide, block 64, batch 12, a vocabulary of 256 as its bytes corpus'):
   each row's median step, its phases and the optimizer's share, and each row's step over the baseline's. A round runs
   every row once, each in its own ./ablate, in one order and the next round in the other (the row that runs later
   can be the faster one, as vs_python found); a row's ratio per round is over that round's baseline, then the median
   over rounds with a bootstrap 95% interval (reports/stepwise_report/stats/speedup.py's median_interval, vs_python's);
2. Muon one matrix at a time against batched by shape: one optimizer step of each, bench/micro's muon family (Google
   Benchmark) at tiny, mini (nanoGPT's matrices: 4 layers, 128 wide) and gpt2-124m, Newton-Schulz in fp32 and bf16
   (at gpt2-124m a step takes seconds: one iteration a repetition), and what one step of each dispatches: its ATen
   ops and, on a GPU, its kernel launches; and Newton-Schulz alone with the GFLOP/s its GEMMs reach, and as a share
   of the stack's step at each size (its floor: what the optimizer's share cannot go below without fewer FLOPs);
3. scripts/vs_python.py's table: C++ against Python eager, at the presets and rounds given, both rows under one heap
   (vs_python's default on a CPU: docs/python-rows.md).

    scripts/speedrun_step.py                               # everything, vs_python at tiny and mini with 8 rounds
    scripts/speedrun_step.py --rounds 3 --vs-python-rounds 0   # the steps and the micro-benchmark only

The machine's load moves every figure: read the intervals, and run it on an otherwise idle machine to quote it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.read.inputs import read_results  # noqa: E402
from stepwise_report.render.formats import Table, to_text  # noqa: E402
from stepwise_report.stats.speedup import median_interval  # noqa: E402

CPU_FLAGS = ["dynamic_mask", "fused_adamw", "native_layers", "flash"]
SPEEDRUN = ["rotary", "qk_norm", "relu2", "zero_init_proj", "logit_softcap", "muon"]
# the baseline, the cap alone on it (what logit_softcap costs), the CPU flags, and the stack
ROWS = [
    ("baseline", []),
    ("+ logit_softcap", ["logit_softcap"]),
    ("CPU flags", CPU_FLAGS),
    ("speedrun stack", CPU_FLAGS + SPEEDRUN),
]
# nanoGPT's README, "I only have a macbook" (scripts/nanogpt_speedrun.py's size), on synthetic tokens over its bytes
# corpus' vocabulary: the step's shapes without the corpus.
SIZES = {
    "tiny": ["--preset=tiny"],
    "nanoGPT": ["--preset=tiny", "--n-layer=4", "--n-head=4", "--n-embd=128", "--context-length=64", "--seq-len=64"]
    + ["--batch-size=12", "--dropout=0", "--vocab-size=256"],
}
PHASES = ("forward", "backward", "optimizer")


def one_row(size: str, flags: list[str], args, out: Path) -> dict:
    """One row in its own ./ablate: its median step and phases' medians, or the problem of a row that measured
    nothing (its status and the engine's reason)."""
    cmd = [str(BUILD / "ablations" / "ablate"), *SIZES[size], "--device=cpu", f"--warmup={args.warmup}"]
    cmd += [f"--min-steps={args.steps}", f"--max-steps={args.steps}", "--max-time=600", "--no-progress"]
    cmd += [f"--out={out}"] + ([f"--enable={','.join(flags)}"] if flags else [])
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"speedrun_step: {' '.join(cmd)} failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    (row,) = read_results([out])
    if row.status != "ok":
        return {"problem": f"{row.status}: {row.reason}"}
    phases = dict(row.phase_medians)
    return {"step": statistics.median(row.samples_ms), **{p: phases.get(p, 0.0) for p in PHASES}}


def size_rows(size: str, runs: dict[str, list[dict]]) -> list[list[str]]:
    """The table's rows at one size from every round's runs; a row that measured nothing in a round says why."""
    problems = {label: next((run["problem"] for run in runs[label] if "problem" in run), None) for label in runs}
    rows = []
    for label, _ in ROWS:
        if problems[label]:
            rows.append([size, label, "-", "-", "-", "-", "-", f"not measured: {problems[label]}"])
            continue
        med = {k: statistics.median(run[k] for run in runs[label]) for k in ("step", *PHASES)}
        share = statistics.median(run["optimizer"] / run["step"] for run in runs[label])
        interval = "-"
        if label != "baseline" and not problems["baseline"]:
            ratios = [run["step"] / base["step"] for run, base in zip(runs[label], runs["baseline"])]
            ratio, lo, hi = median_interval(ratios, f"speedrun_step {size} {label}")
            interval = f"{ratio:.3f} [{lo:.3f}-{hi:.3f}]" if lo else f"{ratio:.3f}"
        rows.append([size, label, *(f"{med[k]:.2f}" for k in ("step", *PHASES)), f"{share:.1%}", interval])
    return rows


def steps_table(args) -> dict[str, float]:
    """The step table; returns the speedrun stack's median step (ms) at each size where it measured."""
    print(f"\n== the step: {args.rounds} rounds of {args.steps} steps a row, each row in its own ./ablate", flush=True)
    rows, stack_steps = [], {}
    with tempfile.TemporaryDirectory(prefix="stepwise-speedrun-step-") as scratch:
        for size in SIZES:
            runs = {label: [] for label, _ in ROWS}
            for r in range(args.rounds):
                order = ROWS if r % 2 == 0 else ROWS[::-1]
                for label, flags in order:
                    runs[label].append(one_row(size, flags, args, Path(scratch) / f"{size}_{r}_{len(flags)}.json"))
                print(f"  {size}: round {r + 1} of {args.rounds}", flush=True)
            rows += size_rows(size, runs)
            if all("step" in run for run in runs["speedrun stack"]):
                stack_steps[size] = statistics.median(run["step"] for run in runs["speedrun stack"])
    headers = ["size", "row", "ms/step", *PHASES, "opt share", "x baseline [95%]"]
    print("\n" + to_text(Table(headers=headers, rows=rows, align=["l", "l"] + ["r"] * 6)))
    print("ms: medians over the rounds of each run's median; the optimizer's share is its median over the step's, per")
    print("run; x baseline: the row's step over the same round's baseline, median over rounds with its 95% interval.")
    return stack_steps


def micro_table(args) -> dict:
    """bench/micro's muon family: one step of Muon per matrix and batched, beside the AdamW it replaces. Returns the
    family's Google Benchmark JSON."""
    presets = args.micro_presets.split(",")
    print(f"\n== Muon's step, one matrix at a time against batched by shape (bench/micro, {','.join(presets)})")
    with tempfile.TemporaryDirectory(prefix="stepwise-speedrun-micro-") as scratch:
        out = Path(scratch) / "muon.json"
        cmd = [str(BUILD / "bench" / "micro" / "stepwise_micro"), f"--presets={','.join(presets)}"]
        cmd += ["--benchmark_filter=^muon/", f"--benchmark_out={out}", "--benchmark_out_format=json"]
        cmd += [f"--benchmark_min_time={args.micro_min_time}", f"--benchmark_repetitions={args.micro_repetitions}"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"speedrun_step: {' '.join(cmd)} failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
        doc = json.loads(out.read_text())
    print_micro(doc, presets)
    return doc


def micro_times(doc: dict) -> tuple[dict, dict]:
    """(times, counts) from the muon family's Google Benchmark JSON: (preset, variant) -> ms per repetition, and ->
    {"aten_ops": n, "launches": n on a GPU, "ns_flops": n}."""
    times, counts = {}, {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        _, preset, variant = b["run_name"].split("/")[:3]
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        times.setdefault((preset, variant), []).append(b["real_time"] * unit)
        counts[(preset, variant)] = {k: int(b[k]) for k in ("aten_ops", "launches", "ns_flops") if k in b}
    return times, counts


def print_micro(doc: dict, presets: list[str]) -> None:
    """The muon family's table from its Google Benchmark JSON."""
    times, counts = micro_times(doc)
    launches = any("launches" in c for c in counts.values())
    kinds = ("aten_ops", "launches") if launches else ("aten_ops",)
    rows = []
    for preset in presets:
        loop, fused = (times.get((preset, v)) for v in ("adamw_forloop", "adamw_fused"))
        for dtype in ("fp32", "bf16"):
            per, batched = (times.get((preset, f"{form}_{dtype}")) for form in ("per_matrix", "batched"))
            if not per or not batched:
                continue
            cells = [statistics.median(x) if x else float("nan") for x in (loop, fused, per, batched)]
            before, after = (counts.get((preset, f"{form}_{dtype}"), {}) for form in ("per_matrix", "batched"))
            rows.append(
                [preset, dtype, *(f"{c:.2f}" for c in cells), f"{cells[2] / cells[3]:.2f}"]
                + [newton_schulz_cell(times, counts, preset, dtype)]
                + [f"{before.get(k, '-')} / {after.get(k, '-')}" for k in kinds]
            )
    headers = ["preset", "dtype", "AdamW loop", "AdamW fused", "per matrix", "batched", "per matrix / batched"]
    headers += ["Newton-Schulz alone"] + ["ATen ops", "launches"][: len(kinds)]
    print(to_text(Table(headers=headers, rows=rows, align=["l", "l"] + ["r"] * (len(headers) - 2))))
    print("ms of wall time per optimizer step, the median over repetitions: the AdamW over every parameter (the")
    print("baseline's loop, and fused), and Muon with its Adam group fused, Newton-Schulz one matrix at a time or")
    print(
        "batched by shape. ATen ops (and on a GPU the host's kernel launches) of one more step, per matrix / batched,"
    )
    print(
        "counted by the profiler --count-ops uses. Newton-Schulz alone: the batched iteration over every shape stack,"
    )
    print("ms and the GFLOP/s its GEMMs reach (what is left to gain without fewer FLOPs).")


def newton_schulz_cell(times: dict, counts: dict, preset: str, dtype: str) -> str:
    """ "7.81 ms, 320 GFLOP/s": Newton-Schulz alone at a preset, from its median time and its FLOPs a pass."""
    ms, flops = times.get((preset, f"newton_schulz_{dtype}")), counts.get((preset, f"newton_schulz_{dtype}"), {})
    if not ms or "ns_flops" not in flops:
        return "-"
    median_ms = statistics.median(ms)
    return f"{median_ms:.2f} ms, {flops['ns_flops'] / median_ms / 1e6:.0f} GFLOP/s"


# The bench/micro preset whose matrices are a size's: Newton-Schulz sees only the blocks' matrices, and mini's are
# nanoGPT's (4 layers, 128 wide; the vocabulary and the block size differ, which it never sees).
MATRICES_OF = {"tiny": "tiny", "nanoGPT": "mini"}


def print_floor(stack_steps: dict[str, float], doc: dict, dtype: str = "bf16") -> None:
    """Newton-Schulz alone (bench/micro's: the batched iteration over every shape stack) beside the stack's step: the
    share of the step it takes by itself, below which the optimizer's share cannot go without fewer FLOPs or a faster
    Newton-Schulz. Sizes whose stack or micro-benchmark did not measure are left out."""
    times, _ = micro_times(doc)
    lines = []
    for size, step in stack_steps.items():
        ms = times.get((MATRICES_OF[size], f"newton_schulz_{dtype}"))
        if ms:
            alone = statistics.median(ms)
            lines.append(
                f"  {size}: Newton-Schulz alone ({dtype}, {MATRICES_OF[size]}'s matrices) {alone:.2f} ms, "
                f"{alone / step:.1%} of the speedrun stack's step ({step:.2f} ms)"
            )
    if lines:
        print("\n== the optimizer's floor: Newton-Schulz alone beside the stack's step")
        print("\n".join(lines))
        print(
            "the optimizer's share of the step cannot be lower than this without fewer FLOPs or a faster Newton-Schulz;"
        )
        print(
            "the rest of it is the momentum, the stacking, the update, the Adam group and the allocator's page faults."
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the rows at each size")
    ap.add_argument("--steps", type=int, default=10, help="measured steps a row")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--micro-presets", default="tiny,mini,gpt2-124m")
    ap.add_argument(
        "--micro-min-time", default="0.5", help="Google Benchmark's --benchmark_min_time, seconds (a slower step: once)"
    )
    ap.add_argument("--micro-repetitions", type=int, default=3)
    ap.add_argument("--vs-python-rounds", type=int, default=8, help="0: no vs_python table")
    ap.add_argument("--vs-python-presets", default="tiny,mini")
    a = ap.parse_args(argv)
    print("speedrun_step: the speedrun stack's step against the baseline's and the CPU flags' (issue 57)")
    stack_steps = steps_table(a)
    print_floor(stack_steps, micro_table(a))
    if a.vs_python_rounds > 0:
        for preset in a.vs_python_presets.split(","):
            print(f"\n== C++ against Python eager at {preset} (scripts/vs_python.py)", flush=True)
            cmd = [sys.executable, str(ROOT / "scripts" / "vs_python.py"), f"--preset={preset}"]
            subprocess.run([*cmd, f"--rounds={a.vs_python_rounds}"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
