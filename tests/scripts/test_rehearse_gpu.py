"""A rehearsal of the calls on a lent GPU node, on this CPU, as close as a CPU gets: a fresh clone of the committed tree
plus deps/, apt-get and pip that cannot reach anything, and the node's python as the device tool describes its image
(--as-node: this interpreter, importing only the image's packages and deps/site; scripts/verify/node_image.txt).

The first call (passes 1 and 2) meets faults on top: scipy and matplotlib missing, the raschka step stopped over its
time while its first Python row hangs, and stepwise_micro crashing halfway through its JSON. Pass 1 must answer every
one of its lines; scripts/verify-gpu.sh --rehearse-on-cpu runs each pass's own step table at --device=cpu
--preset=tiny; it must end within its deadline, write its three files and nothing else into each --out/pass<N>, keep
the archive small and free of weights, leave no scratch behind, and give each fault its own FAIL line with its reason
(and no other line may fail). The second call (pass 3) meets no fault: every Python part of it (the Python eager row,
the gpu tests, ./report) must pass with what the node's image and the bundle hold.

A rehearsal is capped in steps and batches, and its budgets are scaled up as a guard, so a slow or busy CPU changes
how long it takes, never what it finds. The binaries are deps/prebuilt's when they fit the clone, else the existing
build's (STEPWISE_BUILD_DIR): a fresh offline build is tests/scripts/test_setup.py's point."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from verify import steps  # noqa: E402

BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
PYTHON = (
    os.environ.get("STEPWISE_PYTHON")
    or subprocess.run([str(ROOT / "scripts" / "setup.sh"), "--python"], capture_output=True, text=True).stdout.strip()
)

# Imported by every Python process of the rehearsal (PYTHONPATH): scipy and matplotlib are missing, and the first
# Python row (raschka's python-eager baseline) hangs, as a row that runs past its step's time.
SITECUSTOMIZE = """
import os, sys, time

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("scipy", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r} (the rehearsal's python lacks it)", name=name)
        return None

sys.meta_path.insert(0, _Missing())
if sys.argv and sys.argv[0].endswith(os.path.join("bench", "python", "step.py")) and "REHEARSAL_ROW_STARTED" in os.environ:
    try:
        os.close(os.open(os.environ["REHEARSAL_ROW_STARTED"], os.O_CREAT | os.O_EXCL))
        time.sleep(3600)  # the first Python row never ends: its step's time must stop it
    except FileExistsError:
        pass
"""
# stepwise_micro that writes half its JSON and dies of a segmentation fault.
CRASHING_MICRO = """#!/bin/sh
for a in "$@"; do case "$a" in --benchmark_out=*) out="${a#--benchmark_out=}";; esac; done
printf '{\\n  "context": {"date": "2026-01-01T00:00:00"},\\n  "benchmarks": [\\n    {"name": "attention/tiny/expl' >"$out"
echo "stepwise_micro: crashing halfway through its JSON (the rehearsal's fault)" >&2
kill -SEGV $$
"""
# Scaled budgets: a guard against a hang, not a measure of this CPU.
SCALE = "3"


def executable(path: pathlib.Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture(scope="module")
def deps(tmp_path_factory) -> pathlib.Path:
    """The checkout's deps/, or one made here with scripts/setup.sh --bundle (Debian's registry)."""
    if (ROOT / "deps" / "MANIFEST.txt").exists():
        return ROOT / "deps"
    made = tmp_path_factory.mktemp("bundle") / "deps"
    bundle = subprocess.run(  # the rehearsal's binaries are the test build's (STEPWISE_BUILD_DIR)
        [str(ROOT / "scripts" / "setup.sh"), "--bundle", "--without-prebuilt"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "STEPWISE_DEPS": str(made)},
    )
    if bundle.returncode != 0:
        pytest.skip("no deps/ here and no registry to bundle one: " + bundle.stderr.strip()[-300:])
    return made


@pytest.fixture(scope="module")
def node(tmp_path_factory, deps) -> dict:
    """A fresh clone plus deps/, and the environment of an offline node whose python lacks scipy and matplotlib."""
    base = tmp_path_factory.mktemp("node")
    clone = base / "stepwise"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120)
    shutil.copytree(deps, clone / "deps", symlinks=True)
    offline, hooks = base / "offline-bin", base / "hooks"
    for d in (offline, hooks):
        d.mkdir()
    for tool in ("apt-get", "apt", "pip", "pip3"):
        executable(offline / tool, '#!/bin/sh\necho "$0: network is unreachable (offline rehearsal)" >&2\nexit 100\n')
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("STEPWISE_TEST_DEVICE", "PYTHONPATH", "STEPWISE_DEPS")},
        "PATH": f"{offline}:{os.environ['PATH']}",
        "PYTHONPATH": str(hooks),
        "STEPWISE_PYTHON": PYTHON,
        "STEPWISE_BUILD_DIR": str(BUILD),
    }
    return {"clone": clone, "env": env}


def rehearse(node: dict, tmp_path: pathlib.Path, *args: str, env: dict | None = None, passes=(1, 2)):
    scratch, out = tmp_path / "tmp", tmp_path / "out"
    scratch.mkdir()
    began = time.monotonic()
    run = subprocess.run(
        [
            str(node["clone"] / "scripts" / "verify-gpu.sh"),
            "--passes",
            ",".join(map(str, passes)),
            "--out",
            str(out),
            "--rehearse-on-cpu",
            "--as-node",
            "--budget-scale",
            SCALE,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**node["env"], "TMPDIR": str(scratch), **(env or {})},
        cwd=tmp_path,
    )
    print(f"rehearsal of the call: {time.monotonic() - began:.0f} s\n{run.stdout[-6000:]}")
    assert sorted(p.name for p in out.iterdir()) == [f"pass{n}" for n in passes]
    assert not list(scratch.glob("stepwise-verify-*")), list(scratch.iterdir())
    assert not [p for p in scratch.rglob("*") if p.suffix in (".safetensors", ".bin")]
    reports, names = {}, {}
    for pass_no in passes:
        assert sorted(p.name for p in (out / f"pass{pass_no}").iterdir()) == [
            "verify-artifacts.tar.gz",
            "verify.json",
            "verify.md",
        ]
        report = reports[pass_no] = json.loads((out / f"pass{pass_no}" / "verify.json").read_text())
        assert report["rehearsal"] and report["pass"] == pass_no and report["finished"]
        archive = out / f"pass{pass_no}" / "verify-artifacts.tar.gz"
        assert archive.stat().st_size < 16 * 2**20
        with tarfile.open(archive) as tar:
            names[pass_no] = tar.getnames()
        assert not [n for n in names[pass_no] if n.endswith((".safetensors", ".bin"))], names[pass_no]
        assert "(rehearsal on a CPU)" in (out / f"pass{pass_no}" / "verify.md").read_text()
    # The call ended within its deadline (x the scale), counted from the command's start.
    deadline = (steps.SECOND_CALL_S if passes == (3,) else steps.CALL_S) * float(SCALE)
    assert sum(reports[p]["seconds"] for p in passes) <= deadline, [reports[p]["seconds"] for p in passes]
    # Every process ran as the node's python would: the image's packages and deps/site.
    node_line = next(l for l in reports[passes[0]]["lines"] if l["path"].startswith("the node's python, rehearsed"))
    assert node_line["status"] == "PASS" and "distributions of the image" in node_line["figure"], node_line
    return run, reports, names


def first_lines(report: dict) -> dict:
    by_step = {}
    for line in report["lines"]:
        by_step.setdefault(line["step"], line)
    return by_step


def assert_only_these_failed(report: dict, expected: set[str]) -> None:
    failed = {l["path"]: l for l in report["lines"] if l["status"] == "FAIL"}
    for package in ("scipy", "matplotlib"):
        line = next(l for p, l in failed.items() if p.startswith(f"python package {package} "))
        assert f"No module named '{package}'" in line["reason"] and line["kind"] == "package"
    expected = {"python 3.", "python package scipy", "python package matplotlib", *expected}
    unexpected = [f"{p}: {l['reason']}" for p, l in failed.items() if not any(p.startswith(e) for e in expected)]
    assert not unexpected, unexpected


def test_the_call_rehearsed_offline_answers_every_line_and_gives_each_fault_its_own(node, tmp_path):
    started = tmp_path / "python-row-started"
    executable(tmp_path / "crashing_micro", CRASHING_MICRO)
    faults = {"STEPWISE_MICRO": str(tmp_path / "crashing_micro"), "REHEARSAL_ROW_STARTED": str(started)}
    run, reports, names = rehearse(node, tmp_path, "--step-budget", "raschka=60", env=faults)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]

    # Pass 1: every line answered; only the missing packages fail.
    report = reports[1]
    assert_only_these_failed(report, set())
    by_step = first_lines(report)
    assert by_step["warmup"]["status"] == "PASS", by_step["warmup"]
    for step in ("build", "libraries", "flags", "karpathy_trace", "fp8", "ddp_nccl"):
        assert by_step[step]["status"] == "PASS", by_step[step]
    risks = {l["path"]: l for l in report["lines"] if l["step"] == "gpu_results"}
    assert risks["risk: a memory flag lowers the activation memory[chunked ce]"]["status"] == "PASS", risks
    assert any(l["status"] == "SKIP" and "not on a CUDA device" in l["reason"] for l in risks.values()), risks
    assert "verify-artifacts/logs/flags.log" in names[1] and "verify-artifacts/logs/karpathy_trace.log" in names[1]

    # Pass 2, with the time pass 1 left: each fault its own line.
    report = reports[2]
    assert_only_these_failed(report, {"raschka suite", "micro-benchmarks", "./report"})
    by_step = first_lines(report)
    assert started.exists(), "the raschka Python row never started: the C++ rows took the whole step"
    raschka = by_step["raschka"]
    assert raschka["status"] == "FAIL" and raschka["kind"] == "time" and "over its time of 60 s" in raschka["reason"]
    micro = by_step["micro"]
    assert micro["status"] == "FAIL" and "killed by SIGSEGV" in micro["reason"] and "JSONDecodeError" in micro["reason"]
    report_line = by_step["report"]  # ./report needs matplotlib: the missing package, named
    assert report_line["status"] == "FAIL" and "matplotlib" in report_line["reason"], report_line

    # The rest of the table ran, on the CPU, and said so.
    for step in ("build", "max_batch", "fp8_sweep", "time_to_target"):
        assert by_step[step]["status"] == "PASS", by_step[step]
    assert by_step["gpu_gtests"]["status"] == "PASS" and "skipped" in by_step["gpu_gtests"]["figure"]
    # the speedrun suite to a target on the corpus time_to_target used, two seeds a row: its table exists
    assert by_step["speedrun"]["status"] == "PASS" and "reached" in by_step["speedrun"]["figure"], by_step["speedrun"]
    risks = {l["path"]: l for l in report["lines"] if l["step"] == "gpu_results"}
    assert risks["risk: the max batch probe goes above the base batch"]["status"] == "PASS", risks
    assert risks["risk: a memory flag never lowers the largest batch[checkpoint]"]["status"] == "PASS", risks
    assert "## When a line fails" in (tmp_path / "out" / "pass2" / "verify.md").read_text()
    assert "verify-artifacts/logs/raschka.log" in names[2] and "verify-artifacts/results/micro.json.partial" in names[2]


def test_the_second_call_rehearsed_as_the_node_runs_every_python_part_with_the_image_and_the_bundle(node, tmp_path):
    """Pass 3 on the node's python, no fault: the Python eager row (bench/python, which validates its request with
    jsonschema), the gpu tests and ./report import only what the image holds and deps/site carries, and pass."""
    run, reports, _ = rehearse(node, tmp_path, passes=(3,), env={"PYTHONPATH": ""})
    report = reports[3]
    failed = [f"{l['path']}: {l['reason']}" for l in report["lines"] if l["status"] == "FAIL"]
    assert not failed and run.returncode == 0, failed
    by_step = first_lines(report)
    packages = next(l for l in report["lines"] if l["path"].startswith("python 3."))
    assert "jsonschema" in packages["figure"], packages  # from deps/site: the image has none
    counts = [l for l in report["lines"] if l["step"] == "counts"]
    assert counts and counts[0]["status"] == "PASS" and "python-eager" in json.dumps(counts), counts
    # The gpu tests ran under the node's python (on a CPU each skips, naming why); ./report read and validated the rows.
    risks = [l for l in report["lines"] if l["step"] == "gpu_results"]
    assert risks and all(l["path"].startswith("risk: ") for l in risks), risks
    assert by_step["report"]["status"] == "PASS" and "results validated" in by_step["report"]["figure"], by_step
