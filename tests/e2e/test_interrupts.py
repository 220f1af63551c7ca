"""End to end: a run interrupted — Ctrl-C or SIGTERM mid-suite, SIGTERM while a Python row runs, SIGKILL and then
--resume — keeps what it measured, cleans up after itself and says so; and each configuration's line reaches a pipe
as it ends, so an interrupted log has what finished. Every wait is on the event (tests/e2e/events.py)."""

import json
import os
import signal
import subprocess

import pytest
from events import wait_for
from runs import BIN, ablate, results


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl_c", "sigterm"])
def test_a_signal_mid_suite_keeps_finished_results_and_exits_128_plus_it(tmp_path, sig, status):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            BIN,
            "--suite=one_at_a_time",
            f"--out={out}",
            "--preset=tiny",
            "--device=cpu",
            "--warmup=1",
            "--steps=40",
            "--max-steps=40",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: len(list(out.rglob("*.json"))) >= 2, proc, "two results were written")
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == status, stderr
    docs = results(out)
    assert 2 <= len(docs) < 11
    assert all(d["status"] == "ok" for d in docs[:-1]) or docs[-1]["status"] == "failed"
    interrupted = [d for d in docs if d["status"] == "failed"]
    assert interrupted and "interrupted" in interrupted[-1]["reason"]
    assert not list(out.rglob(".*.tmp.*")), "no temporary files are left behind"


def test_sigterm_while_a_python_row_runs_stops_it_and_leaves_no_scratch(tmp_path):
    """A time limit's SIGTERM (verify-gpu.sh's budget, a scheduler) while the Python step runs: the Python process is
    stopped, the row is recorded as interrupted, its scratch (the weights) is removed, and nothing large was ever
    written beside the results."""
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    scratch.mkdir()
    # The Python row alone: the signal must find it running, and a C++ row before it would only add time.
    proc = subprocess.Popen(
        [
            BIN,
            "--implementations=python-eager",
            f"--out={out}",
            "--preset=tiny",
            "--device=cpu",
            "--warmup=1",
            "--steps=400",
            "--max-steps=400",
            "--max-time=600",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "STEPWISE_SCRATCH_DIR": str(scratch)},
    )
    wait_for(
        lambda: bool(list(scratch.glob("stepwise-python-*/weights.safetensors"))),
        proc,
        "the Python row's scratch directory held its weights",
    )
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert not list(scratch.iterdir()), "the scratch directory is removed"
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written and all(p.suffix == ".json" and p.stat().st_size < 2**20 for p in written), written
    python = [json.loads(p.read_text()) for p in out.rglob("*.python-eager.json")]
    assert python and python[0]["status"] == "failed" and "interrupted" in python[0]["reason"]


def test_each_configuration_line_streams_as_it_ends_even_into_a_pipe(tmp_path):
    proc = subprocess.Popen(
        [
            BIN,
            "--enable=native_layers",
            "--vs-baseline",
            "--preset=tiny",
            "--device=cpu",
            "--warmup=1",
            "--steps=30",
            "--max-steps=30",
            "--no-progress",
            f"--out={tmp_path}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stdout:
        if line.startswith("[single 1/2] baseline:"):
            # The baseline's line arrived while the second configuration still runs: not held in a block buffer.
            assert proc.poll() is None
            break
    else:
        pytest.fail("the baseline's line never came")
    proc.communicate(timeout=300)
    assert proc.returncode == 0


def test_a_killed_suite_resumes_keeping_what_was_measured_under_the_same_settings(tmp_path):
    out = tmp_path / "run"
    args = [
        "--suite=one_at_a_time",
        "--preset=tiny",
        "--device=cpu",
        "--warmup=1",
        "--steps=4",
        "--max-steps=4",
        "--no-progress",
    ]
    proc = subprocess.Popen([BIN, *args, f"--out={out}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: len(list(out.rglob("*.json"))) >= 3, proc, "three results were written")
    proc.send_signal(signal.SIGKILL)  # no chance to clean up, as a CI time-out or a preempted node
    proc.communicate()
    before = {p.name: p.stat().st_mtime_ns for p in out.rglob("*.json")}
    # every flag alone but the learning ones ('all' leaves them to the speedrun suites), and the baseline
    flags = json.loads(ablate("--list-flags", "--json").stdout)
    configurations = sum(1 for f in flags if f["math"] != "learning") + 1
    assert 3 <= len(before) < configurations and not list(out.rglob(".*.tmp.*"))

    resumed = ablate(*args, f"--resume={out}")
    assert resumed.returncode == 0, resumed.stderr
    docs = results(out)
    assert len(docs) == configurations
    kept = [n for n, t in before.items() if (out / "one_at_a_time" / n).stat().st_mtime_ns == t]
    ok_before = [n for n in before if json.loads((out / "one_at_a_time" / n).read_text())["status"] == "ok"]
    # ok results are kept as they are; a skipped configuration is judged again (that costs nothing).
    assert ok_before and set(ok_before) <= set(kept), "finished results are kept, not measured again"
    assert f"({len(ok_before)} kept from before)" in resumed.stdout
    assert len({d["run_id"] for d in docs}) == 1, "the resumed run keeps the run's id"

    # Other settings (more steps) measure everything again.
    more = [{"--steps=4": "--steps=5", "--max-steps=4": "--max-steps=5"}.get(a, a) for a in args]
    again = ablate(*more, f"--resume={out}")
    assert again.returncode == 0, again.stderr
    assert "kept from before" not in again.stdout
