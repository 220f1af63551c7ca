"""A rehearsal of the first call on a lent GPU node, on this CPU, as close as a CPU gets: a fresh clone of the
committed tree plus deps/, apt-get and pip that cannot reach anything, a Python without scipy and matplotlib, the
all_flags step stopped over its time while its Python row runs, and stepwise_micro crashing halfway through its
JSON. scripts/verify-gpu.sh --rehearse-on-cpu runs the GPU call's own step table at --device=cpu --preset=tiny; it must
still write its three files and nothing else into --out, keep the archive small and free of weights, leave no
scratch behind, and give each fault its own FAIL line with its reason (and no other line may fail).

The build is the existing one (STEPWISE_BUILD_DIR): a fresh offline build is tests/scripts/test_setup.py's point."""

import json
import os
import pathlib
import shutil
import subprocess
import tarfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
PYTHON = (
    os.environ.get("STEPWISE_PYTHON")
    or subprocess.run([str(ROOT / "scripts" / "setup.sh"), "--python"], capture_output=True, text=True).stdout.strip()
)

# Imported by every Python process of the rehearsal (PYTHONPATH): scipy and matplotlib are missing, and the first
# Python row (all_flags' python-eager) hangs, as a row that runs past its step's time.
SITECUSTOMIZE = """
import os, sys, time

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("scipy", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r} (the rehearsal's python lacks it)", name=name)
        return None

sys.meta_path.insert(0, _Missing())
if sys.argv and sys.argv[0].endswith(os.path.join("bench", "python", "step.py")):
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


def executable(path: pathlib.Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture(scope="module")
def deps(tmp_path_factory) -> pathlib.Path:
    """The checkout's deps/, or one made here with scripts/setup.sh --bundle (Debian's registry)."""
    if (ROOT / "deps" / "MANIFEST.txt").exists():
        return ROOT / "deps"
    made = tmp_path_factory.mktemp("bundle") / "deps"
    bundle = subprocess.run(
        [str(ROOT / "scripts" / "setup.sh"), "--bundle"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "STEPWISE_DEPS": str(made)},
    )
    if bundle.returncode != 0:
        pytest.skip("no deps/ here and no registry to bundle one: " + bundle.stderr.strip()[-300:])
    return made


def test_the_gpu_call_rehearsed_offline_with_faults_still_brings_back_its_answer(tmp_path, deps):
    began = time.monotonic()
    clone = tmp_path / "stepwise"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120)
    shutil.copytree(deps, clone / "deps", symlinks=True)
    offline, hooks, scratch = tmp_path / "offline-bin", tmp_path / "hooks", tmp_path / "tmp"
    for d in (offline, hooks, scratch):
        d.mkdir()
    for tool in ("apt-get", "apt", "pip", "pip3"):
        executable(offline / tool, '#!/bin/sh\necho "$0: network is unreachable (offline rehearsal)" >&2\nexit 100\n')
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    executable(tmp_path / "crashing_micro", CRASHING_MICRO)
    started = tmp_path / "python-row-started"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("STEPWISE_TEST_DEVICE", "PYTHONPATH")},
        "PATH": f"{offline}:{os.environ['PATH']}",
        "PYTHONPATH": str(hooks),
        "STEPWISE_PYTHON": PYTHON,
        "STEPWISE_BUILD_DIR": str(BUILD),
        "STEPWISE_MICRO": str(tmp_path / "crashing_micro"),
        "REHEARSAL_ROW_STARTED": str(started),
        "TMPDIR": str(scratch),
    }
    out = tmp_path / "out"
    run = subprocess.run(
        [
            str(clone / "scripts" / "verify-gpu.sh"),
            "--out",
            str(out),
            "--rehearse-on-cpu",
            "--step-budget",
            "all_flags=40",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    elapsed = time.monotonic() - began
    print(f"rehearsal: {elapsed:.0f} s\n{run.stdout[-6000:]}")

    assert sorted(p.name for p in out.iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((out / "verify.json").read_text())
    assert report["rehearsal"] and report["seconds"] < 525
    failed = {l["path"]: l for l in report["lines"] if l["status"] == "FAIL"}
    by_step = {}  # each step's own line: its first
    for line in report["lines"]:
        by_step.setdefault(line["step"], line)

    # Each fault is its own FAIL line, with its reason.
    for package in ("scipy", "matplotlib"):
        line = next(l for p, l in failed.items() if p.startswith(f"python package {package} "))
        assert f"No module named '{package}'" in line["reason"] and line["kind"] == "package"
    assert started.exists(), "the all_flags Python row never started: the C++ row took the whole step"
    all_flags = by_step["all_flags"]
    assert (
        all_flags["status"] == "FAIL" and all_flags["kind"] == "time" and "over its time of 40 s" in all_flags["reason"]
    ), all_flags
    micro = by_step["micro"]
    assert (
        micro["status"] == "FAIL" and "killed by SIGSEGV" in micro["reason"] and "JSONDecodeError" in micro["reason"]
    ), micro
    report_line = by_step["report"]  # ./report needs matplotlib: the missing package, named
    assert report_line["status"] == "FAIL" and "matplotlib" in report_line["reason"], report_line
    expected = {
        "python 3.",
        "python package scipy",
        "python package matplotlib",
        "one configuration with every flag",
        "micro-benchmarks",
        "./report",
    }
    unexpected = [f"{p}: {l['reason']}" for p, l in failed.items() if not any(p.startswith(e) for e in expected)]
    assert not unexpected, unexpected

    # The rest of the table ran, on the CPU, and said so.
    for step in ("build", "libraries", "raschka", "karpathy_trace", "host_sync", "ddp_nccl"):
        assert by_step[step]["status"] == "PASS", by_step[step]
    assert by_step["gpu_ctest"]["status"] == "PASS" and "skipped" in by_step["gpu_ctest"]["figure"]
    risks = [l for l in report["lines"] if l["step"] == "gpu_results"]
    assert any(l["status"] == "SKIP" and "not on a CUDA device" in l["reason"] for l in risks), risks
    assert any(
        l["path"] == "risk: the max batch probe goes above the base batch" and l["status"] == "PASS" for l in risks
    ), risks
    md = (out / "verify.md").read_text()
    assert "(rehearsal on a CPU)" in md and "## When a line fails" in md

    # The archive: small, no weights, the logs and the partial micro JSON kept; no scratch left anywhere.
    archive = out / "verify-artifacts.tar.gz"
    assert archive.stat().st_size < 16 * 2**20
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert not [n for n in names if n.endswith((".safetensors", ".bin"))], names
    assert "verify-artifacts/logs/all_flags.log" in names and "verify-artifacts/results/micro.json.partial" in names
    assert not [p for p in scratch.rglob("*") if p.suffix in (".safetensors", ".bin")]
    assert not list(scratch.glob("stepwise-verify-*")), list(scratch.iterdir())
    assert elapsed < 300, f"the rehearsal took {elapsed:.0f} s"
