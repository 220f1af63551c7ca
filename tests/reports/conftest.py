"""Shared fixtures for the report tests: synthetic result trees, one end-to-end ./report run, the real
micro-benchmark file with helpers that reshape it, a suite's rows and a table's column, one disturbed
configuration's steps, two runs for the gate, a CPU run's report, and the coverage of an interval under no change."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reports"))

import resultgen  # noqa: E402  (beside this file)
from stepwise_report.analysis.analysis import build_chain  # noqa: E402
from stepwise_report.cli import main  # noqa: E402
from stepwise_report.read import inputs  # noqa: E402
from stepwise_report.read.micro import Case, MicroFile, parse_micro  # noqa: E402
from stepwise_report.read.results import Result  # noqa: E402

OLD_RUN = "20260301T120000Z_gpt2-tiny_h100"
NEW_RUN = "20260302T120000Z_gpt2-tiny_h100"
# A real stepwise_micro CPU output (three repetitions, some cases skipped).
MICRO_FIXTURE = Path(__file__).parent / "fixtures" / "micro_cpu_tiny.json"
MICRO_RAW = json.loads(MICRO_FIXTURE.read_text())


def run_report(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """./report as a user runs it, on the interpreter running the tests."""
    env = {**os.environ, "STEPWISE_PYTHON": sys.executable}
    return subprocess.run(
        [str(ROOT / "report"), *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT
    )


# One configuration disturbed by other work: its first 25 steps at 80 ms, then other work on the machine pushed 15 more
# to 120–300 ms; its own noise (the engine's median rule) is 41%, against --max-noise 2%.
DISTURBED = resultgen.step_times(80, 0.01, 25, 1) + [float(x) for x in np.linspace(120, 300, 15)]
NOISY_MARK = "noisy: noise 41%, above --max-noise 2%"


def chain(docs: list[dict]):
    """The suite's rows of these result documents, as the report chains them."""
    return build_chain([Result(None, d) for d in docs])


def column(table, header: str) -> list[str]:
    """One column of a Table, by its header."""
    i = table.headers.index(header)
    return [row[i] for row in table.rows]


def micro_file() -> MicroFile:
    return parse_micro(MICRO_FIXTURE, MICRO_RAW)


def micro_aggregate(name: str, which: str) -> float:
    return next(b["real_time"] for b in MICRO_RAW["benchmarks"] if b["name"] == f"{name}_{which}")


def micro_case(m: MicroFile, name: str) -> Case:
    return next(c for c in m.cases if c.name == name)


def micro_rows(doc: dict, times: int = 1, scale=lambda name: 1.0, first_only: bool = False) -> dict:
    """The fixture's repetition rows, each repeated `times` times (so the gate has 9+ samples) and
    scaled by `scale(name)`; aggregates are dropped, as they would not match the scaled times."""
    out = copy.deepcopy(doc)
    rows = []
    for b in doc["benchmarks"]:
        if b["run_type"] != "iteration" or (first_only and b["repetition_index"] > 0):
            continue
        for k in range(times):
            r = dict(
                b,
                repetitions=1 if first_only else b["repetitions"] * times,
                repetition_index=b["repetition_index"] + k * b["repetitions"],
            )
            if not r.get("error_occurred"):
                r["real_time"] *= scale(r["name"])
                r["cpu_time"] *= scale(r["name"])
            rows.append(r)
    out["benchmarks"] = rows
    return out


def write_json(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def no_jsonschema(monkeypatch):
    """As on the GPU machines: `import jsonschema` fails (and the cached validator is forgotten around the test)."""
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    inputs._validator.cache_clear()
    yield
    inputs._validator.cache_clear()


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory) -> Path:
    """results/ with two full runs (all four suites) on one device, from different commits."""
    root = tmp_path_factory.mktemp("results")
    resultgen.standard_run(root, OLD_RUN)
    resultgen.standard_run(root, NEW_RUN, git_commit="fedcba9876543210fedcba9876543210fedcba98")
    # Something a directory scan must skip rather than choke on.
    (root / NEW_RUN / "notes.json").write_text('{"tool": "something else"}')
    return root


@pytest.fixture(scope="session")
def report_out(two_runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    proc = run_report(two_runs, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


# --- two runs for the gate -------------------------------------------------------------------------------------------

BASE, CAND = "20260301T120000Z_t_h100", "20260302T120000Z_t_h100"


def write_pair(tmp_path, slow_step=None, factor=1.10, cand_kw=None, loss=None, fail=None):
    """A baseline and a candidate run of raschka's first six steps under tmp_path, the candidate's `slow_step` made
    `factor` times slower; returns the two run directories."""
    base = resultgen.cumulative(BASE, "raschka", resultgen.RASCHKA[:6])
    cand = resultgen.cumulative(CAND, "raschka", resultgen.RASCHKA[:6], loss=loss, fail=fail, **(cand_kw or {}))
    if slow_step is not None:
        d = cand[slow_step]
        cand[slow_step] = resultgen.make_result(
            run_id=CAND,
            name=d["name"],
            suite=d["suite"],
            flags=d["config"]["flags"],
            samples=[s["ms"] * factor for s in base[slow_step]["steps"]],
            **(cand_kw or {}),
        )
    for d in base:
        resultgen.write(tmp_path / "base", d)
    for d in cand:
        resultgen.write(tmp_path / "cand", d)
    return str(tmp_path / "base" / BASE), str(tmp_path / "cand" / CAND)


def write_runs(tmp_path, base_docs, cand_docs):
    """Writes two runs under tmp_path; returns their directories."""
    for d in base_docs:
        resultgen.write(tmp_path / "base", d)
    for d in cand_docs:
        resultgen.write(tmp_path / "cand", d)
    return str(tmp_path / "base" / base_docs[0]["run_id"]), str(tmp_path / "cand" / cand_docs[0]["run_id"])


def gate_line(out: str) -> str:
    """The printed verdict line of `./report compare`."""
    return next(line for line in out.splitlines() if line.startswith("gate: "))


# The same configuration measured quietly: 40 steps at 80 ms.
QUIET = resultgen.step_times(80, 0.01, 40, 1)


def run_with(run_id: str, samples: list[float]) -> list[dict]:
    """raschka's first six steps, 40 quiet steps each, with step 3 measured as `samples`; --max-noise 2%."""
    docs = resultgen.cumulative(run_id, "raschka", resultgen.RASCHKA[:6], n=40, max_noise=0.02)
    d = docs[3]
    docs[3] = resultgen.make_result(
        run_id=run_id, name=d["name"], suite=d["suite"], flags=d["config"]["flags"], samples=samples, max_noise=0.02
    )
    return docs


def gate_lines(out: str, word: str) -> list[str]:
    """The lines under the verdict that start with `word` ("lost", "could not judge", ...)."""
    return [line for line in out.splitlines() if line.startswith(f"  {word}: ")]


# --- a CPU run -------------------------------------------------------------------------------------------------------

# What a CPU cannot apply, with the engine's reasons (config.flags_skipped).
CPU_SKIPS = {
    "tf32": "requires a CUDA device (tensor cores)",
    "pinned_memory": "requires a CUDA device (pinned memory only speeds host-to-device copies)",
    "compile": "requires a CUDA device (CUDA graphs)",
}
CPU = dict(device_kind="cpu", device_name="Test CPU", mfu=None, unavailable=CPU_SKIPS)


def cpu_report(root, **kw) -> tuple[str, str]:
    """A CPU run of raschka's eleven steps with Python rows beside steps 0 and 10, as ./run_all.sh writes it:
    report.md and dashboard.html."""
    run = "20260301T120000Z_t_cpu"
    docs = resultgen.cumulative(run, "raschka", resultgen.RASCHKA, **CPU, **kw)
    docs += [resultgen.python_row(docs[i], impl) for i in (0, 10) for impl in ("python-eager", "python-compile")]
    for doc in docs:
        resultgen.write(root / "r", doc)
    assert main([str(root / "r"), "--out", str(root / "out")]) == 0
    return (root / "out" / "report.md").read_text(), (root / "out" / "dashboard.html").read_text()


def pytest_configure(config):
    # matplotlib 3.9 calls pyparsing APIs that newer pyparsing deprecates; not ours to fix.
    config.addinivalue_line("filterwarnings", "ignore:.*deprecated - use:DeprecationWarning")


def null_coverage(interval, seeds: int = 200) -> float:
    """How often `interval(a, b, seed)` -> (lo, hi) contains 1 when a and b come from one distribution (30 steps
    each): about its confidence level, for an honest interval."""
    hits = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        lo, hi = interval(list(100 + 5 * rng.standard_normal(30)), list(100 + 5 * rng.standard_normal(30)), seed)
        hits += lo <= 1 <= hi
    return hits / seeds
