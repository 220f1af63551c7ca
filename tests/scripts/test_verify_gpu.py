"""scripts/verify-gpu.sh on the CPU: it runs what a CPU can (build, the library check, the report), records every GPU
step as SKIP naming why, writes verify.md, verify.json and one archive; and a step over its budget is a FAIL."""
import json
import os
import pathlib
import subprocess
import tarfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERIFY = ROOT / "scripts" / "verify-gpu.sh"


def verify(out, *args, timeout=900):
    return subprocess.run([str(VERIFY), "--out", str(out), *args], capture_output=True, text=True, timeout=timeout,
                          env={k: v for k, v in os.environ.items() if k != "STEPWISE_TEST_DEVICE"})


def test_on_the_cpu_every_gpu_step_is_skipped_with_its_reason(tmp_path):
    run = verify(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    report = json.loads((tmp_path / "verify.json").read_text())
    lines = {l["step"] or l["path"]: l for l in report["lines"]}
    assert lines["build"]["status"] == "PASS"
    assert lines["libraries"]["status"] == "PASS", lines["libraries"]
    assert "cudart" in lines["libraries"]["figure"]
    for step in ("ctest", "all_flags", "raschka", "karpathy_trace", "host_sync", "micro", "ddp_nccl"):
        assert lines[step]["status"] == "SKIP" and lines[step]["reason"].startswith("no GPU"), lines[step]
    assert lines["report"]["status"] == "PASS"
    assert report["counts"]["FAIL"] == 0
    md = (tmp_path / "verify.md").read_text()
    assert "| path | status | figure |" in md and "SKIP" in md
    with tarfile.open(tmp_path / "verify-artifacts.tar.gz") as tar:
        names = tar.getnames()
    assert any(n.endswith("logs/build.log") for n in names)
    assert any(n.endswith("report/report.md") for n in names)


def test_a_step_over_its_budget_fails_and_the_deadline_holds(tmp_path):
    began = time.monotonic()
    run = verify(tmp_path, "--budget-scale", "0.02")  # a 10.5 s deadline; the tiny CPU run needs more than 0.4 s
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((tmp_path / "verify.json").read_text())
    failed = [l for l in report["lines"] if l["status"] == "FAIL"]
    assert failed and any("budget" in (l["reason"] + l["figure"]) for l in failed), report["lines"]
    assert time.monotonic() - began < 90
