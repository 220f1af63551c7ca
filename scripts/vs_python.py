#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""Is stepwise's C++ step at least as fast as the same step in PyTorch Python eager? Side by side, in one run.

For each configuration (default: every CPU-runnable fp32 configuration of the one-at-a-time suite, plus all of them
together, on the preset the CPU job runs), this runs rounds of `./ablate --implementations=libtorch,python-eager`. A
round is two runs, one in each order (C++ first, then Python first; the next round starts with the other), because the
row that runs second in a run can be the faster one, whichever it is (by several percent in some runs, its size and sign
varying): alternating the order from one round to the next cancels that only on average, and leaves each round's ratio
off by the position effect. A round's ratio is the geometric mean of its two runs' (Python eager median step time / C++
median step time), which cancels the effect within the round; it prints, per configuration, the median over rounds with
a bootstrap 95% interval (the project's own bootstrap: reports/stepwise_report/stats/speedup.py's median_interval),
above 1.00 the C++ step being faster, and beside it the median ratio of the runs with C++ first and of those with Python
first, which show the position effect. A benchmark, not a test: it asserts nothing and exits 0; read the table.

On a CPU both rows run under one explicit host allocator, glibc's malloc with the tunables that keep freed memory in
the process (the host_allocator flag), unless --host-allocator says otherwise. Under the C library's heap as it comes,
the two processes differ in where a logits-sized buffer lands, fresh pages from mmap that the step then faults in, or
a hole its heap already has: that depends on what each process allocated and freed before, not on the step's code,
and moves the ratio by a few percent either way (docs/python-rows.md). `--host-allocator none` measures that heap.

    scripts/vs_python.py [--preset mini] [--rounds 5] [--steps 10] [--device cpu] [--flags a,b ...]
                         [--host-allocator glibc-tunables|jemalloc|tcmalloc|none]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build")) / "ablations" / "ablate"
sys.path.insert(0, str(ROOT / "reports"))
from stepwise_report.read.inputs import read_results  # noqa: E402
from stepwise_report.render.formats import Table, to_text  # noqa: E402
from stepwise_report.stats.speedup import median_interval  # noqa: E402

# The fp32 flags a CPU runs: bf16 is emulated on most CPUs (minutes per configuration), the CUDA-only ones skip.
CPU_FP32_FLAGS = ["dynamic_mask", "fused_adamw", "native_layers", "flash", "vocab_padding"]


# On a CPU, one heap for both rows, the host_allocator flag's default mode (the module's docstring says why); on a
# GPU the step's buffers are the caching allocator's, and each row keeps the heap it starts with.
ONE_HEAP_ON = ("cpu",)
NO_HOST_ALLOCATOR = "none"


def host_allocator_modes() -> tuple[list[str], str]:
    """The host_allocator flag's modes and its default mode, from ./ablate's flag table (its --list-flags)."""
    if not BIN.exists():
        sys.exit(f"vs_python: {BIN} is not built: run ./scripts/build.sh")
    flags = json.loads(subprocess.run([str(BIN), "--list-flags", "--json"], capture_output=True, check=True).stdout)
    (option,) = [o for f in flags if f["name"] == "host_allocator" for o in f["options"]]
    return option["enum"], option["default"]


def ablate_command(flags: str, args, order: list[str], out: str) -> list[str]:
    """One run of ./ablate: the configuration `flags` ('' = the baseline), its rows in `order`."""
    cmd = [
        str(BIN),
        f"--preset={args.preset}",
        f"--device={args.device}",
        f"--warmup={args.warmup}",
        f"--min-steps={args.steps}",
        f"--max-steps={args.steps}",
        "--max-time=600",
        "--no-progress",
        f"--implementations={','.join(order)}",
        f"--out={out}",
    ]
    heap = args.host_allocator != NO_HOST_ALLOCATOR
    enabled = [f for f in (flags, "host_allocator" if heap else "") if f]
    if enabled:
        cmd.append(f"--enable={','.join(enabled)}")
    if heap:
        cmd.append(f"--host-allocator-mode={args.host_allocator}")
    return cmd


@dataclass
class Run:
    """One run of ./ablate, as vs_python reads its results."""

    ms: dict[str, float]  # each measured row's median step, by implementation
    skipped: dict[str, str] = field(default_factory=dict)  # flags this device does not apply, with the engine's reason
    problem: str | None = None  # a row that measured nothing: its implementation, status and reason


def one_run(flags: str, args, order: list[str]) -> Run:
    with tempfile.TemporaryDirectory() as out:
        cmd = ablate_command(flags, args, order, out)
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"vs_python: {' '.join(cmd)} failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
        results = read_results([out])
        failed = [f"{r.implementation} {r.status}: {r.reason}" for r in results if r.status != "ok"]
        return Run(
            ms={r.implementation: statistics.median(r.samples_ms) for r in results if r.status == "ok"},
            skipped={f: why for r in results for f, why in r.flags_skipped.items()},
            problem="; ".join(failed) or None,
        )


def bounds(lo: float | None, hi: float | None) -> str:
    return "[-]" if lo is None else f"[{lo:.3f}-{hi:.3f}]"


def compare(flags: str, args, skipped: dict[str, str]) -> list[str]:
    """The configuration's rounds, as its row of the table; the flags the device did not apply go into `skipped`.
    A row that measured nothing ends the configuration: its table row says why, and the next one runs."""
    ratios, cpp, py = [], [], []
    by_first = {"libtorch": [], "python-eager": []}  # each run's ratio, by the implementation that ran first
    name = flags or "(baseline)"
    for r in range(args.rounds):
        orders = [["libtorch", "python-eager"], ["python-eager", "libtorch"]]
        run_ratios = []
        for order in orders if r % 2 == 0 else orders[::-1]:
            run = one_run(flags, args, order)
            skipped |= run.skipped
            if run.problem:
                return [name, "-", "-", "-", "-", "-", f"not measured: {run.problem}"]
            cpp.append(run.ms["libtorch"])
            py.append(run.ms["python-eager"])
            run_ratios.append(run.ms["python-eager"] / run.ms["libtorch"])
            by_first[order[0]].append(run_ratios[-1])
        ratios.append(math.sqrt(run_ratios[0] * run_ratios[1]))  # the position effect cancels within the round
    ratio, lo, hi = median_interval(ratios, f"vs_python {flags}")
    verdict = (
        "one round: no interval"
        if lo is None
        else "C++ faster"
        if lo > 1
        else "Python faster"
        if hi < 1
        else "no measurable difference"
    )
    firsts = [f"{statistics.median(by_first[first]):.3f}" for first in ("libtorch", "python-eager")]
    ms = [f"{statistics.median(x):.1f}" for x in (cpp, py)]
    return [name, *ms, f"{ratio:.3f} {bounds(lo, hi)}", *firsts, verdict]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="mini")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--flags", nargs="*", help="configurations as comma-separated flag sets ('' = the baseline)")
    ap.add_argument(
        "--host-allocator",
        metavar="MODE",
        help="both rows under this host allocator (the host_allocator flag, ./ablate's --host-allocator-mode: "
        f"glibc-tunables, jemalloc, tcmalloc), or '{NO_HOST_ALLOCATOR}': each row's process under the C library's "
        "heap as it comes, where a logits-sized buffer lands in fresh pages or freed ones as that process's history "
        "has it (default: glibc-tunables on a CPU, none on a GPU)",
    )
    args = ap.parse_args(argv)
    modes, default_mode = host_allocator_modes()
    if args.host_allocator is None:
        args.host_allocator = default_mode if args.device in ONE_HEAP_ON else NO_HOST_ALLOCATOR
    if args.host_allocator not in (*modes, NO_HOST_ALLOCATOR):
        ap.error(
            f"--host-allocator: unknown mode {args.host_allocator!r} (valid: {', '.join(modes)}, {NO_HOST_ALLOCATOR})"
        )
    configs = args.flags if args.flags is not None else ["", *CPU_FP32_FLAGS, ",".join(CPU_FP32_FLAGS)]
    heap = (
        "each row under the C library's heap as it comes"
        if args.host_allocator == NO_HOST_ALLOCATOR
        else f"both rows under {args.host_allocator}"
    )
    print(
        f"stepwise (C++) vs PyTorch Python eager: {args.preset} on {args.device}, {args.rounds} rounds of "
        f"{args.steps} steps each, a run in each order per round, {heap}",
        flush=True,
    )
    rows, skipped = [], {}
    for flags in configs:
        rows.append(compare(flags, args, skipped))
        print(f"  {rows[-1][0]:<60} {rows[-1][3]}  {rows[-1][6]}", flush=True)
    table = Table(
        headers=["configuration", "C++ ms", "Python ms", "Python/C++ [95%]", "C++ first", "Py first", "verdict"],
        rows=rows,
        align=["l", "r", "r", "l", "r", "r", "l"],
    )
    print("\n" + to_text(table))
    for flag, why in skipped.items():
        print(f"{flag}: not applied on {args.device} ({why}); its rows ran without it")
    print(
        "\nPython/C++ is Python eager's median step time over the C++ engine's: per round the geometric mean of its two"
    )
    print(
        "runs (C++ first and Python first), then the median over rounds: >= 1.00 means the C++ step is at least as fast."
    )
    print(
        "'C++ first' and 'Py first' are the median ratios of the runs in each order: their gap is the position effect"
    )
    print("(the second row of a run can be the faster one), which the rounds cancel.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
