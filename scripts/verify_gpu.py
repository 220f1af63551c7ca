"""Verifies every GPU path of stepwise in one call on a GPU machine (scripts/verify-gpu.sh is the entry point).

A GPU is lent by chance, for minutes, on an offline machine: this builds with every core, runs each path under a time
budget of its own and a deadline for the whole, records PASS / FAIL / SKIP with the reason and a figure for each, and
writes verify.md, verify.json and one archive of everything else (results, logs, the report) into --out: three
files, small enough to come back. On a CPU it runs what a CPU can (the build, the library check, the report) and
every GPU step is a SKIP naming why.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build"))
BIN = BUILD / "ablations" / "stepwise"
MICRO = BUILD / "bench" / "micro" / "stepwise_micro"

# The whole run must end well inside one 10-minute call of a lent machine: 8 min 45 s, start-up included.
DEADLINE_S = 525
# Budgets per step, in seconds, on one H100 (16 cores). A step gets the smaller of its budget and what is left of
# the deadline; a step that would start with less than a quarter of its budget left is skipped as out of time.
BUDGETS = {
    "build": 110,
    "libraries": 15,
    "ctest": 50,
    "all_flags": 120,  # C++, then Python eager and torch.compile (whose first step compiles) on the same weights
    "raschka": 90,     # with Python eager at its two ends
    "karpathy_trace": 50,
    "host_sync": 20,
    "micro": 25,
    "ddp_nccl": 25,
    "report": 20,
}
assert sum(BUDGETS.values()) <= DEADLINE_S, "the budgets must fit the deadline"
# The Python rows beside the C++ ones (bench/python/): eager and torch.compile on the one all-flags configuration,
# eager at the raschka suite's two ends; verify.md gets a line per pair with the ratio and the loss check.
PYTHON_ALL = ["--implementations=libtorch,python-eager,python-compile"]
PYTHON_ENDS = ["--implementations=libtorch,python-eager", "--implementations-at=ends"]# Short measurements: the point here is that every path runs and its numbers are sane, not the last digit.
SHORT = ["--warmup=3", "--steps=10", "--max-steps=60", "--max-time=3", "--no-progress"]


@dataclass
class Line:
    """One row of verify.md: a path (or a risk) with its status, a figure and the reason."""
    path: str
    status: str  # PASS, FAIL or SKIP
    figure: str = ""
    reason: str = ""
    step: str = ""
    seconds: float | None = None
    budget_s: float | None = None


@dataclass
class Verifier:
    out: Path
    python: str
    budget_scale: float = 1.0
    began: float = field(default_factory=time.monotonic)
    lines: list[Line] = field(default_factory=list)
    gpu: str | None = None  # the device name, or None without a GPU
    no_gpu_reason: str = ""

    @property
    def work(self) -> Path:
        return self.out / "work"

    def left(self) -> float:
        return DEADLINE_S * self.budget_scale - (time.monotonic() - self.began)

    def add(self, path, status, figure="", reason="", step="", seconds=None, budget=None):
        line = Line(path, status, figure, reason, step, None if seconds is None else round(seconds, 1), budget)
        self.lines.append(line)
        mark = {"PASS": "ok  ", "FAIL": "FAIL", "SKIP": "skip"}[status]
        print(f"[verify] {mark} {path}: {figure or reason}", flush=True)

    def run(self, name: str, cmd: list[str], budget: float, env: dict | None = None, cwd: Path | None = None):
        """Runs cmd in its own process group with a time limit; returns (exit code or None on time-out, seconds)."""
        log = self.work / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n")
            f.flush()
            proc = subprocess.Popen([str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT, cwd=cwd or ROOT,
                                    env={**os.environ, **(env or {})}, start_new_session=True)
            try:
                code = proc.wait(timeout=budget)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                f.write(f"\n[verify] stopped: over its budget of {budget:.0f} s\n")
                code = None
        return code, time.monotonic() - began

    def budget(self, step: str) -> float | None:
        """This step's time limit, or None when the deadline leaves too little for it."""
        want = BUDGETS[step] * self.budget_scale
        left = self.left()
        return None if left < want / 4 else min(want, left)

    def log_tail(self, name: str, lines: int = 5) -> str:
        log = self.work / "logs" / f"{name}.log"
        if not log.exists():
            return ""
        tail = [l for l in log.read_text(errors="replace").splitlines() if l.strip()][-lines:]
        return " | ".join(tail)[-400:]


# ---------------------------------------------------------------------------------------------------------------
# Reading results

def results_under(directory: Path) -> list[dict]:
    docs = []
    for p in sorted(directory.rglob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("tool") == "stepwise":
            docs.append(doc)
    return sorted(docs, key=lambda d: (d.get("suite", {}).get("name", ""), d.get("suite", {}).get("index", 0),
                                       d.get("implementation", "libtorch")))


def tok_s(doc: dict) -> float | None:
    summary = doc.get("summary") or {}
    return summary.get("tokens_per_s")


def fmt_tok(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} tok/s"


def describe_row(doc: dict) -> str:
    s = doc.get("summary") or {}
    mfu = (s.get("mfu") or {}).get("value")
    mem = (s.get("memory") or {}).get("peak_allocated_bytes")
    parts = [fmt_tok(tok_s(doc)), f"{s['step_ms']['median']:.1f} ms/step" if s.get("step_ms") else ""]
    if mfu is not None:
        parts.append(f"MFU {100 * mfu:.1f}%")
    if mem:
        parts.append(f"peak {mem / 2**30:.2f} GiB")
    backend = (doc.get("config") or {}).get("sdpa_backend_used")
    if backend:
        parts.append(f"attention: {backend}")
    return ", ".join(p for p in parts if p)


def suite_verdict(docs: list[dict]) -> tuple[str, str]:
    failed = [d for d in docs if d["status"] == "failed"]
    if not docs:
        return "FAIL", "no result files"
    if failed:
        return "FAIL", "; ".join(f"{d['name']}: {d.get('reason')}" for d in failed)[:400]
    return "PASS", ""


def suite_figure(docs: list[dict]) -> str:
    ok = [d for d in docs if d["status"] == "ok" and d.get("implementation", "libtorch") == "libtorch"]
    if len(ok) < 1:
        return f"{len(docs)} configurations, none ok"
    first, last = tok_s(ok[0]), tok_s(ok[-1])
    skipped = sum(d["status"] == "skipped" for d in docs)
    ratio = f" ({last / first:.2f}x)" if first and last else ""
    return (f"{len(ok)} ok, {skipped} skipped; {fmt_tok(first)} -> {fmt_tok(last)}{ratio}; "
            f"final: {describe_row(ok[-1])}")


# ---------------------------------------------------------------------------------------------------------------
# Steps

def detect_gpu(v: Verifier) -> None:
    probe = subprocess.run([v.python, "-c", "import torch; import sys; ok = torch.cuda.is_available(); "
                            "print(torch.cuda.get_device_name(0) if ok else 'torch ' + torch.__version__ + "
                            "' sees no CUDA device (torch.cuda.is_available() is False)')"],
                           capture_output=True, text=True, timeout=120)
    text = (probe.stdout.strip() or probe.stderr.strip()).splitlines()[-1:] or ["python probe failed"]
    if probe.returncode == 0 and "sees no CUDA device" not in text[0]:
        v.gpu = text[0]
    else:
        v.no_gpu_reason = "no GPU: " + text[0]


def step_build(v: Verifier) -> None:
    budget = v.budget("build")
    if budget is None:
        v.add("build (scripts/build.sh, every core)", "SKIP", "", "out of time", "build")
        return
    jobs = str(os.cpu_count() or 2)
    code, secs = v.run("build", [ROOT / "scripts" / "build.sh"], budget, env={"STEPWISE_JOBS": jobs})
    log = (BUILD / "build.log").read_text(errors="replace") if (BUILD / "build.log").exists() else ""
    cuda = re.search(r"stepwise CUDA paths: (\w+)", log)
    figure = f"{secs:.0f} s on {jobs} cores; CUDA paths {cuda.group(1) if cuda else '?'}"
    if code == 0 and BIN.exists():
        v.add("build (scripts/build.sh, every core)", "PASS", figure, step="build", seconds=secs, budget=budget)
    else:
        reason = "over its budget" if code is None else v.log_tail("build") or log[-400:]
        v.add("build (scripts/build.sh, every core)", "FAIL", figure, reason, "build", secs, budget)


def step_libraries(v: Verifier) -> dict | None:
    """A tiny CPU run: every result's env.libraries names the CUDA libraries the process really loaded."""
    budget = v.budget("libraries")
    target = v.work / "libraries" / "tiny.json"
    code, secs = v.run("libraries", [BIN, "--preset=tiny", "--device=cpu", "--warmup=1", "--steps=2", "--max-steps=2",
                                     "--no-progress", f"--out={target}"], budget)
    if code is None or not target.exists():
        v.add("CUDA libraries loaded (one runtime, torch's own)", "FAIL", "", v.log_tail("libraries"), "libraries",
              secs, budget)
        return None
    libs = json.loads(target.read_text())["env"].get("libraries", {})
    torch_cuda = (libs.get("torch_cuda") or [""])[0]
    site = Path(torch_cuda).resolve().parents[2] if torch_cuda else None  # site-packages/torch/lib/x -> site-packages
    problems = [f"{k}: {len(p)} files loaded ({', '.join(p)})" for k, p in libs.items() if len(p) > 1]
    for key in ("cudart", "cupti"):
        for path in libs.get(key, []):
            if site and not Path(path).resolve().is_relative_to(site):
                problems.append(f"{key} from {path}, not from torch's wheel under {site}")
    figure = "; ".join(f"{k}: {Path(p[0]).parent}" for k, p in sorted(libs.items()) if k in ("cudart", "cupti"))
    if not libs:
        v.add("CUDA libraries loaded (one runtime, torch's own)", "SKIP", "", "this build loads no CUDA library",
              "libraries", secs, budget)
    else:
        v.add("CUDA libraries loaded (one runtime, torch's own)", "FAIL" if problems else "PASS", figure,
              "; ".join(problems), "libraries", secs, budget)
    return json.loads(target.read_text())


def step_ctest(v: Verifier) -> dict[str, str]:
    """STEPWISE_TEST_DEVICE=cuda ctest over the C++ tests (the Python end-to-end tests exercise the CPU paths CI
    already covers). Returns each test's status by name, for the risk lines."""
    budget = v.budget("ctest")
    junit = v.work / "ctest.xml"
    code, secs = v.run("ctest", ["ctest", "--test-dir", BUILD, "-j", str(min(8, os.cpu_count() or 2)),
                                 "--output-on-failure", "--output-junit", junit, "-E", r"^(e2e\.|reports|structure|scripts\.|"
                                 r"python)"], budget, env={"STEPWISE_TEST_DEVICE": "cuda"})
    statuses: dict[str, str] = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name", "")
            status = "skipped" if case.find("skipped") is not None else \
                "failed" if case.find("failure") is not None or case.get("status") == "fail" else "passed"
            statuses[name] = status
    counts = {s: sum(1 for x in statuses.values() if x == s) for s in ("passed", "skipped", "failed")}
    figure = f"{counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed"
    failed = [n for n, s in statuses.items() if s == "failed"]
    if code is None:
        v.add("ctest with STEPWISE_TEST_DEVICE=cuda", "FAIL", figure, "over its budget", "ctest", secs, budget)
    elif failed or code != 0:
        v.add("ctest with STEPWISE_TEST_DEVICE=cuda", "FAIL", figure, "failed: " + ", ".join(failed)[:400], "ctest",
              secs, budget)
    else:
        v.add("ctest with STEPWISE_TEST_DEVICE=cuda", "PASS", figure, step="ctest", seconds=secs, budget=budget)
    return statuses


def test_line(v: Verifier, statuses: dict[str, str], path: str, test: str, what: str) -> None:
    status = statuses.get(test)
    if status is None:
        v.add(path, "SKIP", "", f"{test} did not run (ctest out of time or filtered)")
    elif status == "passed":
        v.add(path, "PASS", f"{test}: {what}")
    elif status == "skipped":
        v.add(path, "SKIP", "", f"{test} skipped itself")
    else:
        v.add(path, "FAIL", "", f"{test} failed (see work/logs/ctest.log)")


def ablate_step(v: Verifier, step: str, path: str, args: list[str], env: dict | None = None) -> list[dict]:
    budget = v.budget(step)
    out = v.work / "results" / step
    code, secs = v.run(step, [BIN, *args, f"--out={out}", f"--run-id=verify_{step}"], budget, env=env)
    docs = results_under(out)
    status, reason = suite_verdict(docs)
    if code is None:
        status, reason = "FAIL", f"over its budget of {budget:.0f} s; " + reason
    elif code not in (0, 1):
        status, reason = "FAIL", f"exit {code}: " + v.log_tail(step)
    v.add(path, status, suite_figure(docs), reason, step, secs, budget)
    return docs


def step_host_sync(v: Verifier) -> None:
    """The same configuration read back lagged and chunk by chunk: what an idle GPU at every chunk costs."""
    budget = v.budget("host_sync")
    figures = {}
    began = time.monotonic()
    for mode in ("chunk", "lagged"):
        out = v.work / "results" / f"host_sync_{mode}.json"
        v.run("host_sync", [BIN, "--preset=gpt2-124m", "--enable=bf16,flash,native_layers", "--bf16-mode=autocast",
                            "--warmup=5", "--steps=40", "--max-steps=40", "--max-time=8", "--no-progress",
                            f"--host-sync={mode}", f"--out={out}"], budget / 2)
        if out.exists():
            s = json.loads(out.read_text()).get("summary") or {}
            if s.get("step_ms"):
                figures[mode] = s["step_ms"]
    secs = time.monotonic() - began
    if len(figures) < 2:
        v.add("host sync after each chunk vs lagged read-back", "FAIL", "", v.log_tail("host_sync"), "host_sync", secs,
              budget)
        return
    c, l = figures["chunk"], figures["lagged"]
    v.add("host sync after each chunk vs lagged read-back", "PASS",
          f"mean {c['mean']:.2f} vs {l['mean']:.2f} ms (x{c['mean'] / l['mean']:.3f}), CV {100 * c['cv']:.2f}% vs "
          f"{100 * l['cv']:.2f}%, median {c['median']:.2f} vs {l['median']:.2f} ms (chunk vs lagged)",
          step="host_sync", seconds=secs, budget=budget)


def step_micro(v: Verifier) -> None:
    budget = v.budget("micro")
    target = v.work / "results" / "micro.json"
    code, secs = v.run("micro", [MICRO, "--presets=gpt2-124m", "--benchmark_min_time=0.05",
                                 f"--benchmark_out={target}", "--benchmark_out_format=json"], budget)
    if code is None or not target.exists():
        v.add("micro-benchmarks at GPT-2 sizes", "FAIL", "", f"exit {code}: " + v.log_tail("micro"), "micro", secs,
              budget)
        return
    benchmarks = json.loads(target.read_text()).get("benchmarks", [])
    errors = [b for b in benchmarks if b.get("error_occurred")]
    ran = len(benchmarks) - len(errors)
    v.add("micro-benchmarks at GPT-2 sizes", "PASS" if ran and code == 0 else "FAIL",
          f"{ran} cases ran, {len(errors)} skipped with a reason", "" if code == 0 else f"exit {code}", "micro", secs,
          budget)


def python_lines(v: Verifier, docs: list[dict]) -> None:
    """One verify.md line per Python row: its median step time over the C++ row's of the same configuration (the
    C++ vs Python table; >= 1.00: C++ at least as fast) and its losses against the C++ row's."""
    engine = {(d["suite"]["name"], d["suite"]["index"]): d for d in docs
              if d.get("implementation", "libtorch") == "libtorch" and d["status"] == "ok"}
    table = []
    for d in docs:
        impl = d.get("implementation", "libtorch")
        if impl == "libtorch":
            continue
        cpp = engine.get((d["suite"]["name"], d["suite"]["index"]))
        path = f"{impl} vs C++: {d['suite']['name']} {d['suite'].get('label', d['name'])}"
        if d["status"] != "ok" or cpp is None:
            v.add(path, "FAIL" if d["status"] == "failed" else "SKIP", "",
                  str(d.get("reason") or "no C++ row of this configuration finished"))
            continue
        py_ms, cpp_ms = d["summary"]["step_ms"]["median"], cpp["summary"]["step_ms"]["median"]
        check = (d["summary"].get("loss") or {}).get("vs_libtorch") or {}
        compile_s = d["summary"].get("compile_s")
        figure = (f"Python/C++ x{py_ms / cpp_ms:.3f} (C++ {cpp_ms:.1f} ms, {impl} {py_ms:.1f} ms"
                  + (f", compiled in {compile_s:.0f} s" if compile_s else "") + f"); loss vs C++: {check.get('status')}")
        v.add(path, "FAIL" if check.get("status") == "math changed" else "PASS", figure,
              check.get("reason", "") if check.get("status") == "math changed" else "")
        table.append(f"  {d['suite'].get('label', d['name']):<28} {impl:<16} C++ {cpp_ms:8.1f} ms  "
                     f"Python {py_ms:8.1f} ms  Python/C++ x{py_ms / cpp_ms:.3f}")
    if table:
        print("[verify] C++ vs Python on this GPU (>= 1.00: the C++ step is at least as fast)\n" + "\n".join(table),
              flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------------------------
# Risk lines: each a property only a GPU settles, read from what the steps above produced

def risk_lines(v: Verifier, statuses: dict[str, str], raschka: list[dict], karpathy: list[dict],
               ddp: list[dict]) -> None:
    test_line(v, statuses, "risk: TF32 engages (a float32 matmul differs from IEEE at ~1e-3)",
              "PrecisionSwitches.Tf32EngagesOnAFloat32Matmul", "relative difference in (1e-4, 1e-2)")
    test_line(v, statuses, "risk: copy and graph streams are created once, apart from PyTorch's pool",
              "Streams.DedicatedStreamsAreCreatedOnceAndNeverComeFromThePool", "same stream per role, none pooled")
    test_line(v, statuses, "risk: CUDA-graph replay equals eager (every optimizer)",
              "CudaGraphStep.ReplayedStepsMatchEagerSteps", "parameters after 8 steps within 1e-4")
    test_line(v, statuses, "risk: each replay of stepwise's graph draws fresh dropout masks",
              "CudaGraphStep.EveryReplayDrawsFreshDropoutMasks", "distinct losses on a frozen model")
    test_line(v, statuses, "risk: data-parallel ranks draw their own dropout streams",
              "DataParallel.EveryRankDrawsItsOwnDropoutStream", "seed + 1 + rank")

    traced = [d for d in karpathy if d["status"] == "ok"]
    if not traced:
        v.add("risk: CUPTI across CUDA-graph captures (subscribed once, at start-up)", "SKIP", "",
              "the traced karpathy suite produced no result")
    else:
        bad = [d["name"] for d in traced if (d.get("trace") or {}).get("status") != "ok"]
        kernels = [(d["suite"]["label"], (d.get("trace") or {}).get("kernels_per_step")) for d in traced]
        v.add("risk: CUPTI across CUDA-graph captures (subscribed once, at start-up)", "FAIL" if bad else "PASS",
              "kernels/step: " + ", ".join(f"{label} {k}" for label, k in kernels),
              ("no trace for " + ", ".join(bad) + ": " + str((traced[0].get("trace") or {}).get("reason")))
              if bad else "")

    flash = [d for d in raschka if d["status"] == "ok" and "flash" in (d["suite"].get("added") or [])]
    if flash:
        used = flash[0]["config"].get("sdpa_backend_used")
        v.add("risk: the FlashAttention row runs FlashAttention", "PASS" if used == "flash" else "FAIL",
              f"sdpa_backend_used = {used}", "" if used == "flash" else "the row is labelled flash")
    by_added = {tuple(d["suite"].get("added") or []): d for d in raschka if d["status"] == "ok"}
    compiled, eager = by_added.get(("compile",)), by_added.get(("flash",))
    if compiled and eager:
        c = compiled["summary"]["memory"].get("peak_allocated_bytes") or 0
        e = eager["summary"]["memory"].get("peak_allocated_bytes") or 0
        v.add("risk: compile's peak memory includes the graph's activations", "PASS" if e and c > 0.5 * e else "FAIL",
              f"peak allocated {c / 2**30:.2f} GiB with compile vs {e / 2**30:.2f} GiB eager")
    mfus = [(d["name"], d["summary"]["mfu"].get("value")) for d in raschka + karpathy
            if d["status"] == "ok" and d["summary"].get("mfu")]
    over = [f"{n} {m:.2f}" for n, m in mfus if m is not None and m >= 1.0]
    if mfus:
        v.add("risk: MFU is a fraction of the peak (FLOPs counted once)", "FAIL" if over else "PASS",
              "max " + f"{max((m or 0) for _, m in mfus):.3f}", "; ".join(over))
    if ddp:
        d = ddp[0]
        ok = d["status"] == "ok" and "compile" in d["config"].get("flags", [])
        v.add("risk: NCCL all-reduce captured inside the CUDA graph (1 rank)", "PASS" if ok else "FAIL",
              describe_row(d) if d["status"] == "ok" else "", "" if ok else str(d.get("reason")))
    try:
        subprocess.run([v.python, "-c", "import jsonschema"], check=True, capture_output=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "deps" / "site")})
        v.add("risk: reports validate results (jsonschema)", "PASS", "jsonschema importable (bundled in deps/ or installed)")
    except subprocess.CalledProcessError:
        v.add("risk: reports validate results (jsonschema)", "SKIP", "",
              "jsonschema is not installed and deps/ has no wheels for this python: reports run unvalidated")


# ---------------------------------------------------------------------------------------------------------------

def write_outputs(v: Verifier) -> None:
    counts = {s: sum(1 for l in v.lines if l.status == s) for s in ("PASS", "FAIL", "SKIP")}
    elapsed = time.monotonic() - v.began
    header = {"device": v.gpu or v.no_gpu_reason, "host": socket.gethostname(),
              "git_commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                           text=True).stdout.strip(),
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - elapsed)),
              "seconds": round(elapsed, 1), "deadline_s": DEADLINE_S * v.budget_scale, "counts": counts}
    (v.out / "verify.json").write_text(json.dumps({**header, "lines": [l.__dict__ for l in v.lines]}, indent=2) + "\n")
    rows = ["| path | status | figure |", "|---|---|---|"]
    for l in v.lines:
        text = l.figure + (f" — {l.reason}" if l.reason else "")
        timing = f" ({l.seconds:.0f} s of {l.budget_s:.0f})" if l.seconds is not None and l.budget_s else ""
        rows.append(f"| {l.path} | {l.status} | {text.replace('|', '/')}{timing} |")
    md = [f"# verify-gpu: {header['device']}", "",
          f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped in {elapsed:.0f} s "
          f"(deadline {DEADLINE_S * v.budget_scale:.0f} s); commit {header['git_commit'][:12]}, host {header['host']}, "
          f"{header['started']}.", "", *rows, "",
          "Everything else (results, logs, ctest's JUnit, the report) is in verify-artifacts.tar.gz."]
    (v.out / "verify.md").write_text("\n".join(md) + "\n")
    with tarfile.open(v.out / "verify-artifacts.tar.gz", "w:gz") as tar:
        tar.add(v.work, arcname="verify-artifacts")
    shutil.rmtree(v.work)
    print("\n".join(md[2:-2]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="where verify.md, verify.json and the archive go")
    ap.add_argument("--budget-scale", type=float, default=1.0, help="multiplies every budget and the deadline")
    args = ap.parse_args(argv)
    python = os.environ.get("STEPWISE_PYTHON") or subprocess.run(
        [ROOT / "scripts" / "setup.sh", "--python"], capture_output=True, text=True).stdout.strip() or "python3"
    args.out.mkdir(parents=True, exist_ok=True)
    v = Verifier(out=args.out.resolve(), python=python, budget_scale=args.budget_scale)
    if v.work.exists():
        shutil.rmtree(v.work)
    v.work.mkdir()
    detect_gpu(v)
    print(f"[verify] {v.gpu or v.no_gpu_reason}; deadline {DEADLINE_S * v.budget_scale:.0f} s", flush=True)

    step_build(v)
    built = BIN.exists()
    steps = [
        ("libraries", lambda: step_libraries(v)),
        ("ctest", lambda: step_ctest(v)),
        ("all_flags", lambda: ablate_step(v, "all_flags", "one gpt2-124m configuration, all flags, C++ and Python",
                                          ["--preset=gpt2-124m", "--enable=all", "--max-batch-limit=64", *PYTHON_ALL,
                                           *SHORT])),
        ("raschka", lambda: ablate_step(v, "raschka", "raschka suite at gpt2-124m, Python eager at its ends",
                                        ["--suite=raschka", "--preset=gpt2-124m", "--max-batch-limit=64",
                                         *PYTHON_ENDS, *SHORT])),
        ("karpathy_trace", lambda: ablate_step(v, "karpathy_trace", "karpathy suite at B=16, --trace on every row",
                                               ["--suite=karpathy", "--preset=gpt2-124m", "--batch-size=16",
                                                "--trace", *SHORT])),
        ("host_sync", lambda: step_host_sync(v)),
        ("micro", lambda: step_micro(v)),
        ("ddp_nccl", lambda: ablate_step(v, "ddp_nccl", "data parallel, one rank on NCCL, all flags but max_batch",
                                         ["--preset=gpt2-124m", "--enable=all", "--disable=max_batch", *SHORT],
                                         env={"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0",
                                              "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())})),
    ]
    gpu_only = {"ctest", "all_flags", "raschka", "karpathy_trace", "host_sync", "micro", "ddp_nccl"}
    outputs: dict[str, object] = {}
    for name, fn in steps:
        if not built:
            v.add(name, "SKIP", "", "the build failed", name)
        elif name in gpu_only and not v.gpu:
            v.add(name, "SKIP", "", v.no_gpu_reason, name)
        elif v.budget(name) is None:
            v.add(name, "SKIP", "", f"out of time: {v.left():.0f} s left of the {DEADLINE_S * v.budget_scale:.0f} s "
                                    f"deadline", name)
        else:
            outputs[name] = fn()
    if v.gpu:
        python_lines(v, (outputs.get("all_flags") or []) + (outputs.get("raschka") or []))
    else:
        v.add("Python rows beside C++ (python-eager, python-compile)", "SKIP", "", v.no_gpu_reason, "all_flags")
    if v.gpu:
        risk_lines(v, outputs.get("ctest") or {}, outputs.get("raschka") or [], outputs.get("karpathy_trace") or [],
                   outputs.get("ddp_nccl") or [])
    else:
        v.add("risks only a GPU settles (CUPTI, TF32, streams, graphs, NCCL)", "SKIP", "", v.no_gpu_reason)

    budget = v.budget("report")
    results = v.work / "results"
    if not list(results.rglob("*.json")) and (v.work / "libraries").exists():
        results = v.work / "libraries"
    if budget is None:
        v.add("./report over all of it", "SKIP", "", "out of time", "report")
    elif not list(results.rglob("*.json")):
        v.add("./report over all of it", "SKIP", "", "no results to report", "report")
    else:
        code, secs = v.run("report", [ROOT / "report", results, "--out", v.work / "report"], budget)
        ok = code == 0 and (v.work / "report" / "report.md").exists()
        v.add("./report over all of it", "PASS" if ok else "FAIL", "report.md, plots, dashboard, exports" if ok else "",
              "" if ok else f"exit {code}: " + v.log_tail("report"), "report", secs, budget)
    write_outputs(v)
    return 1 if any(l.status == "FAIL" for l in v.lines) else 0


if __name__ == "__main__":
    sys.exit(main())
