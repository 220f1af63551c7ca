"""The step table of each pass, with each step's budget in seconds on one H100, and the call that runs them: a warm-up,
then pass 1, then pass 2 with the time pass 1 left, all within one command's deadline and planned 30 s short of it
(tests/scripts/test_verify_budgets.py holds the sums to it, and docs/offline-gpu.md's budget table is
budget_table()'s; the whole session's is verify/session.py's).

Pass 1 holds the essential answers: the GPU and its state, every CUDA flag once at gpt2-124m beside the baseline (the
memory flags' activations with them), the karpathy suite with the CUPTI trace, fp8 at gpt2-124m (and its rowwise
kernel, every linear in FP8), one NCCL rank alone and then with every flag and compile, and the gpu tests over those
rows. No cold torch.compile Python row (45-80 s) runs in either pass. Pass 2
runs the rest: the GPU-only GoogleTests, the raschka suite with its Python eager rows at the ends, the largest-batch
probes, the micro-benchmarks, the fp8 size sweep, a short time to target, the speedrun suite with its budget search,
the gpu tests, and ./report. Pass 3, a call of its own when the device time allows (about two and a quarter minutes
after a warm node's first call), counts what one step dispatches (issue 42): ATen ops, kernels and the host's launches,
C++ beside Python eager and torch.compile, and the CUDA graph's one launch beside eager's.

Estimated needs on one H100 (about 5 s a process to load libtorch_cuda and create its context, 3-6 s a gpt2-124m row
at these step counts, a CUDA graph's capture a few seconds): each budget below, with the build's when nothing
prebuilt fits (ablate alone for pass 1 on 16 cores, about 130 s with the configure; pass 2's extra targets reuse
it). Where the binaries are prebuilt, the build promises nothing and its time is the later steps'. Issue 54 cut the
first call's plan from 570 to 540 s (slack for a cold warm-up or a step over its share) and added the eager NCCL row
and the rowwise FP8 row: the steps whose rows stop on their own caps (--max-time) or search within a budget (the
speedrun's) gave up 5-10 s each. The preflight, the build, the gpu tests and the report are kept (verify/runner.py):
what a step over its share costs comes off the last steps that are not kept, pass 2's speedrun first."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

import corpus

from verify.binaries import build_cmds, judge_build, judge_libraries, libraries_cmds
from verify.gpu_tests import gpu_results_cmds, gtest_cmds, judge_gpu_results, judge_gtests
from verify.judges import (
    judge_ddp,
    judge_flags,
    judge_fp8,
    judge_micro,
    judge_muon,
    judge_probes,
    judge_report,
    judge_suite,
    judge_target,
    judge_target_rows,
    results_under,
)
from verify.line import Line
from verify.preflight import judge_preflight, preflight_cmds
from verify.runner import Cmd, Outcome, Task, Verifier
from verify.target import ROOT, SUITES

# The call on a lent node ends, its files written, within CALL_S of its start: the device tool's command may run 600 s,
# and what it writes must still come back (30 s for that). --deadline-s replaces it; --budget-scale multiplies it.
CALL_S = 570
# What the first call's warm-up, steps and closings are planned to take: 30 s short of its deadline, so a cold
# warm-up or a step over its share costs no kept step its time.
CALL_PLAN_S = 540
# Pass 3 alone, the session's second call: what 15 minutes of device time leave after a node's start, the first call
# and 60 s to spare (verify/session.py), when the second call follows at once (a node stays warm 30 s between calls).
SECOND_CALL_S = 135
# What the warm-up is planned to take on a cold node (setup's checks, a cold torch import, CUDA's initialisation):
# not a cap (verify/warmup.py caps each part), the room the budgets leave for it within CALL_S.
WARMUP_S = 60
# The second call's warm-up, on the node the first call left warm (its page cache holds torch): a guess, as the rest.
SECOND_WARMUP_S = 15
# After each pass's last step: a stopped step's grace, the archive, verify.md and verify.json.
CLOSING_S = 15
BUILD_S = 150
# Every CUDA flag once beside the baseline, and the two memory flags (their activations against the same baseline).
FLAGS = (
    "tf32",
    "bf16",
    "fused_adamw",
    "pinned_memory",
    "flash",
    "compile",
    "vocab_padding",
    "checkpoint",
    "chunked_ce",
)
MEMORY_FLAGS = ("chunked_ce", "checkpoint")
# Pass 3's eager step: every flag that changes what a CUDA step launches, the graph row then adds compile.
COUNTED_FLAGS = ("dynamic_mask", "tf32", "fused_adamw", "bf16", "native_layers", "flash", "vocab_padding")
SPEEDRUN = "speedrun"  # issue 34's suite: its step waits for the file


def suite(name: str) -> str:
    """A suite by its file, so a binary built elsewhere reads this checkout's suites."""
    return f"--suite={SUITES / name}.json"


def ablate_cmd(v: Verifier, name: str, *args: str, env: dict | None = None, sub: str = "") -> Cmd:
    out = v.work / "results" / name / sub if sub else v.work / "results" / name
    run_id = f"verify_{name}" + (f"_{sub}" if sub else "")
    return Cmd([v.bin("ablate"), *v.target.args(*args, f"--out={out}", f"--run-id={run_id}")], env or {})


def suite_file(v: Verifier, spec: dict) -> Path:
    """A suite written for this pass into its work directory, named by the spec's name."""
    path = v.work / "suites" / f"{spec['name']}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(spec, indent=2))
    return path


def flags_cmds(v: Verifier) -> list[Cmd]:
    """The one-at-a-time suite over FLAGS, written for this pass (bf16 as autocast and pinned copies async, as the
    one_at_a_time suite sets them; attention on the backend SDPA picks)."""
    spec = {
        "name": "verify_flags",
        "description": "scripts/verify-gpu.sh pass 1: every CUDA flag and the memory flags once, beside the baseline",
        "kind": "one_at_a_time",
        "flags": list(FLAGS),
        "options": {"bf16_mode": "autocast", "pinned_mode": "async"},
    }
    return [ablate_cmd(v, "flags", f"--suite={suite_file(v, spec)}", *v.target.memory_shape)]


def counts_cmds(v: Verifier) -> list[Cmd]:
    """Pass 3: the eager flags' step counted (--count-ops) beside Python eager's, then the same step as one CUDA graph
    beside torch.compile's, each a row of one suite written for the pass (the second call finds the first's row as
    its baseline), at a preset small enough that a GPU step is launch-bound."""
    spec = {
        "name": "verify_counts",
        "description": "scripts/verify-gpu.sh pass 3: what one step dispatches, eager and as a CUDA graph",
        "kind": "cumulative",
        "base": list(COUNTED_FLAGS),
        "options": {"bf16_mode": "autocast"},
        "rows": [{"label": "eager", "add": []}, {"label": "CUDA graph", "add": ["compile"]}],
    }
    common = [f"--suite={suite_file(v, spec)}", "--count-ops", *v.target.counts]
    return [
        ablate_cmd(v, "counts", *common, "--rows=0", "--implementations=libtorch,python-eager"),
        ablate_cmd(v, "counts", *common, "--rows=1", f"--implementations={v.target.counts_compiled}"),
    ]


def rank_env() -> dict:
    """One rank of a data-parallel group of one, on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}


def ddp_cmd(v: Verifier) -> list[Cmd]:
    """One NCCL rank twice: data parallel alone (eager, no flag), then every flag but max_batch stacked on it (fp8,
    checkpoint's RNG replica under capture, chunked_ce, compile's graph around the all-reduce, dropout...), so a
    failure of the stack is told from NCCL's own."""
    # host_allocator runs its row in a process of its own, which cannot join the ranks
    stacked = ("--enable=all", "--disable=max_batch,host_allocator")
    return [
        ablate_cmd(v, "ddp_nccl", env=rank_env(), sub="eager"),
        ablate_cmd(v, "ddp_nccl", *stacked, env=rank_env(), sub="stacked"),
    ]


def fp8_cmds(v: Verifier) -> list[Cmd]:
    """The fp8 suite at the target's size (tensorwise, the small-GEMM filter on), then its bf16 and FP8 rows again at
    rowwise with every linear in FP8: no 124M layer passes the rowwise filter, and only so do the forward GEMMs reach
    _scaled_mm's rowwise kernel on a GPU (model/fp8_linear.cpp)."""
    rowwise = ("--rows=0,1", "--fp8-scaling=rowwise", "--fp8-every-layer")
    return [ablate_cmd(v, "fp8", suite("fp8")), ablate_cmd(v, "fp8", suite("fp8"), *rowwise, sub="rowwise")]


def probe_cmds(v: Verifier) -> list[Cmd]:
    """max_batch alone and with each memory flag, each a process (and run id) of its own."""
    probes = [("max_batch", "--enable=max_batch")] + [(f, f"--enable=max_batch,{f}") for f in MEMORY_FLAGS]
    return [
        ablate_cmd(v, "max_batch", flags, *v.target.memory_shape, *v.target.probe, sub=sub) for sub, flags in probes
    ]


def micro_filter(seq: int) -> str:
    """One case per micro-benchmark family at the preset's longest sequence: what verify reads, not all of them (Muon's
    family has its own step in pass 3)."""
    t = f"T:{seq}$"
    return (
        f"^(attention/[^/]+/[^/]+/fwd\\+bwd/bf16/B:[0-9]+/{t}|(layernorm|gelu)/[^/]+/[^/]+/fwd\\+bwd/B:[0-9]+/{t}"
        "|adamw/|matmul/[^/]+/[^/]+/mlp_up/|head/[^/]+/[^/]+/fwd\\+bwd/bf16/|copy/host_to_device/[^/]+/"
        f"bytes:16777216$|mask/[^/]+/[^/]+/{t})"
    )


def stepwise_micro_cmd(v: Verifier, step: str, pattern: str, min_time: float) -> Cmd:
    """stepwise_micro on the target's device and preset, the cases `pattern` matches, its JSON in results/<step>.json
    (where judges.micro_benchmarks reads it)."""
    out = v.work / "results" / f"{step}.json"
    args = [f"--device={v.target.device}", f"--presets={v.target.preset}", f"--benchmark_min_time={min_time}"]
    args += [f"--benchmark_filter={pattern}", f"--benchmark_out={out}", "--benchmark_out_format=json"]
    return Cmd([v.bin("stepwise_micro"), *args])


def micro_cmd(v: Verifier) -> list[Cmd]:
    return [stepwise_micro_cmd(v, "micro", micro_filter(v.target.micro_seq), 0.05)]


def muon_cmd(v: Verifier) -> list[Cmd]:
    """Pass 3: one Muon step with Newton-Schulz in bf16 one matrix at a time, and one batched by shape (bench/micro's
    muon family), each counting what one more step launches after its timed ones (issue 57)."""
    return [stepwise_micro_cmd(v, "muon", "^muon/[^/]+/(per_matrix|batched)_bf16/", 0.01)]


def corpus_missing() -> str:
    """Why --data=corpus:fortunes would not load here, or ''."""
    if corpus.built_meta("fortunes") is not None:
        return ""
    return f"the fortunes corpus is not in {corpus.corpus_root()} (nor carried in deps/corpus)"


def target_cmds(v: Verifier) -> list[Cmd]:
    if corpus_missing():
        return []
    return [ablate_cmd(v, "time_to_target", *v.target.to_target, "--vs-baseline", "--data=corpus:fortunes")]


def judge_time_to_target(v: Verifier, o: Outcome):
    missing = corpus_missing()
    if missing and not o.ran:
        status = "SKIP" if v.rehearsal else "FAIL"
        return [Line(f"time to a target loss at {v.target.preset}", status, "", missing, kind="corpus")]
    return judge_target(v, o)


def speedrun_cmds(v: Verifier) -> list[Cmd]:
    """The speedrun suite's budget search (scripts/find_budget.py) into the step's folder: a probe's run of the suite
    per N of the target's grid, under budget_<N>/, and budget.json, which ./report reads as one search."""
    if not (SUITES / f"{SPEEDRUN}.json").exists() or corpus_missing():
        return []
    suite_args = v.target.args(
        suite(SPEEDRUN), *v.target.speedrun, "--data=corpus:fortunes", "--run-id=verify_speedrun"
    )
    suite_args = [a for a in suite_args if a != "--no-progress"]  # find_budget gives each probe its own
    search = [ROOT / "scripts" / "find_budget.py", f"--ablate={v.bin('ablate')}", *v.target.budget_grid]
    return [Cmd([v.python, *search, f"--out={v.work / 'results' / SPEEDRUN}", "--", *suite_args])]


def judge_speedrun(v: Verifier, o: Outcome):
    if not o.ran:
        reason = (
            f"suite not found: ablations/suites/{SPEEDRUN}.json is not in this checkout (ablate --list-suites lists "
            "that folder; issue 34 adds it)"
        )
        missing = corpus_missing()
        if missing and (SUITES / f"{SPEEDRUN}.json").exists():
            return [
                Line(f"{SPEEDRUN} suite to a target", "SKIP" if v.rehearsal else "FAIL", "", missing, kind="corpus")
            ]
        return [Line(f"{SPEEDRUN} suite", "SKIP", "", reason)]
    search = read_search(o.directory)
    grid = search.get("grid") or []
    # The rows trained to the target: the largest probe, the suite on a horizon of the grid's bound.
    top = replace(o, directory=o.directory / f"budget_{grid[-1]}") if grid else o
    path = f"{SPEEDRUN} suite to a target at {v.target.preset} (fortunes corpus)"
    return [*judge_target_rows(SPEEDRUN, path)(v, top), budget_line(v, o, search)]


def read_search(directory: Path) -> dict:
    try:
        return json.loads((directory / "budget.json").read_text())
    except (OSError, ValueError):
        return {}


def budget_line(v: Verifier, o: Outcome, search: dict) -> Line:
    """The budget search's line: each row's N on the grid (none: its rule held nowhere on it) and its steps and
    seconds at N against the baseline's; or where the search stopped."""
    grid = search.get("grid") or []
    path = f"{SPEEDRUN} budget search at {v.target.preset} (grid {', '.join(map(str, grid)) or '?'})"
    rows = search.get("rows")
    if rows is None:
        probed = sorted(int(p.name.split("_")[1]) for p in o.directory.glob("budget_*") if p.name[7:].isdigit())
        where = f"probes run: {', '.join(map(str, probed)) or 'none'}"
        if o.over_time:
            return Line(path, "FAIL", "", f"over its time of {o.budget:.0f} s; {where}", SPEEDRUN, "time")
        return Line(path, "FAIL", "", f"{o.last().status_text()}; {where}: {v.log_tail(SPEEDRUN)}", kind="ablate")
    parts = []
    for r in rows:
        n = r.get("budget")
        ratio = (r.get("seconds_ratio") or {}).get("ratio")
        against = f" (x{r['steps_ratio']:.2f} steps, x{ratio:.2f} s)" if r.get("steps_ratio") and ratio else ""
        parts.append(f"{r.get('label', '?')}: N {n if n else 'none'}{against}")
    return Line(path, "PASS", "; ".join(parts), step=SPEEDRUN)


def report_cmd(v: Verifier) -> list[Cmd]:
    if not results_under(v.work / "results"):
        return []
    return [Cmd([ROOT / "report", v.work / "results", "--out", v.work / "report"])]


PREFLIGHT = Task("preflight", 10, preflight_cmds, judge_preflight, gpu=False, built=False, kept=True)
BUILD = Task("build", BUILD_S, build_cmds, judge_build, gpu=False, built=False, kept=True)
GPU_RESULTS = Task("gpu_results", 10, gpu_results_cmds, judge_gpu_results, built=False, kept=True)
REPORT = Task("report", 15, report_cmd, judge_report, gpu=False, built=False, kept=True)

PASS1 = [
    PREFLIGHT,
    BUILD,
    Task("libraries", 10, libraries_cmds, judge_libraries, gpu=False),
    Task("flags", 50, flags_cmds, judge_flags),
    Task(
        "karpathy_trace",
        35,
        lambda v: [
            ablate_cmd(v, "karpathy_trace", suite("karpathy"), "--trace", f"--batch-size={v.target.karpathy_batch}")
        ],
        judge_suite("karpathy_trace", "karpathy suite with --trace on every row"),
    ),
    Task("fp8", 30, fp8_cmds, judge_fp8),
    Task("ddp_nccl", 35, ddp_cmd, judge_ddp),
    GPU_RESULTS,
]

PASS2 = [
    PREFLIGHT,
    BUILD,
    Task("gpu_gtests", 15, gtest_cmds, judge_gtests),
    Task(
        "raschka",
        55,
        lambda v: [
            ablate_cmd(
                v,
                "raschka",
                suite("raschka"),
                *v.target.probe,
                "--implementations=libtorch,python-eager",
                "--implementations-at=ends",
            )
        ],
        judge_suite("raschka", "raschka suite, Python eager at its two ends", True),
    ),
    Task("max_batch", 40, probe_cmds, judge_probes),
    Task("micro", 15, micro_cmd, judge_micro),
    Task(
        "fp8_sweep",
        40,
        lambda v: [ablate_cmd(v, "fp8_sweep", suite("fp8"), f"--sweep=preset={','.join(v.target.sweep_presets)}")],
        judge_fp8,
    ),
    Task("time_to_target", 40, target_cmds, judge_time_to_target),
    Task("speedrun", 30, speedrun_cmds, judge_speedrun),
    GPU_RESULTS,
    REPORT,
]
PASS3 = [
    PREFLIGHT,
    BUILD,
    Task("counts", 60, counts_cmds, judge_suite("counts", "what one step dispatches, eager and as a CUDA graph", True)),
    Task("muon", 10, muon_cmd, judge_muon),
    GPU_RESULTS,
    REPORT,
]
TABLES = {1: PASS1, 2: PASS2, 3: PASS3}  # the first call runs 1 and 2 (verify_gpu.py's default), the second 3


def planned_warmup(passes) -> float:
    """The first call's warm-up meets a cold node; the second call's, alone, the node the first left warm."""
    return SECOND_WARMUP_S if tuple(passes) == (3,) else WARMUP_S


def planned(passes=(1, 2), builds: bool = False) -> float:
    """What a call of these passes is planned to take: its warm-up, its steps' budgets and its closings."""
    steps = sum(s.budget for p in passes for s in TABLES[p] if builds or s.name != "build")
    return planned_warmup(passes) + steps + CLOSING_S * len(passes)


def budget_table(passes=(1, 2), scale: float = 1.0, builds: dict | None = None, warmup_s: float | None = None) -> str:
    """The call's budgets in seconds, as a Markdown table. `builds` (pass -> whether its build step has work) gives
    the one column a call uses, printed at its start; without it, both columns, as docs/offline-gpu.md shows them."""
    columns = (
        [(f"budget, s (scale {scale:g})", builds)]
        if builds is not None
        else [
            ("budget, s: prebuilt fits", {p: False for p in passes}),
            ("budget, s: the node builds", {p: True for p in passes}),
        ]
    )
    head = "| pass | step | " + " | ".join(c for c, _ in columns) + " |"
    rows = [head, "|---|---|" + "---:|" * len(columns)]

    def row(pass_no, name, values):
        rows.append(f"| {pass_no} | {name} | " + " | ".join(f"{v:g}" for v in values) + " |")

    warm = planned_warmup(passes) if warmup_s is None else round(warmup_s)
    row("", "warm-up" + (" (planned)" if warmup_s is None else " (taken)"), [warm] * len(columns))
    totals = [warm] * len(columns)
    for p in passes:
        for step in TABLES[p]:
            values = [0 if step.name == "build" and not b[p] else step.budget * scale for _, b in columns]
            row(p, step.name + (" (kept)" if step.kept else ""), values)
            totals = [t + v for t, v in zip(totals, values)]
        row(p, "closing (archive, verify.md)", [CLOSING_S] * len(columns))
        totals = [t + CLOSING_S for t in totals]
    rows.append("| | **total** | " + " | ".join(f"**{t:g}**" for t in totals) + " |")
    return "\n".join(rows)
