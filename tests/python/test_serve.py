"""step.py --serve (bench/python/serve.py), the Python rows' warm start on a CPU: each request runs in a child forked
from the one server, trains as a cold step.py run of the same request does, and a failing or killed row is answered
with its status while the server goes on to the next."""

import os
import shutil
import signal
import subprocess
import sys

from step_requests import STEP, request, result, run_step, write_request


def start_server():
    return subprocess.Popen(
        [sys.executable, str(STEP), "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )


def ask(server, directory):
    """Sends one request; returns (the child's pid, its exit status) from the server's two answers."""
    server.stdin.write(f"{directory}\n")
    server.stdin.flush()
    started, pid = server.stdout.readline().split()
    exited, status = server.stdout.readline().split()
    assert (started, exited) == ("started", "exited")
    return int(pid), int(status)


def test_each_request_runs_in_its_own_child_and_trains_as_a_cold_start(tmp_path):
    cold = write_request(tmp_path / "cold", request())
    assert run_step(cold).returncode == 0
    server = start_server()
    assert server.stdout.readline() == "ready\n"
    warm = [shutil.copytree(cold, tmp_path / f"warm{i}", ignore=shutil.ignore_patterns("result.json")) for i in (0, 1)]
    answers = [ask(server, d) for d in warm]
    assert [status for _, status in answers] == [0, 0]
    assert len({pid for pid, _ in answers} | {server.pid}) == 3, "a fresh child per request"
    losses = [[s["loss"] for s in result(d)["warmup"] + result(d)["steps"]] for d in (cold, *warm)]
    assert losses[0] == losses[1] == losses[2], "the same function, bit for bit, warm or cold"
    assert "forked from the warm server" in result(warm[0])["memory"]["scope"]
    assert "forked" not in result(cold)["memory"]["scope"]
    assert (warm[0] / "step.log").exists(), "the child's output goes to the request's step.log"
    server.stdin.close()
    assert server.wait(timeout=60) == 0, "the end of input ends the server"


def test_a_failing_or_killed_row_is_answered_with_its_status_and_the_next_row_still_runs(tmp_path):
    server = start_server()
    assert server.stdout.readline() == "ready\n"
    bad = write_request(tmp_path / "bad", request(batch_size=0))
    assert ask(server, bad)[1] == 2, "a bad request exits 2, as step.py does"
    assert "invalid request" in (bad / "step.log").read_text()

    hung = tmp_path / "hung"
    hung.mkdir()
    os.mkfifo(hung / "request.json")  # no writer ever comes: the child blocks reading its request until killed
    server.stdin.write(f"{hung}\n")
    server.stdin.flush()
    started, pid = server.stdout.readline().split()
    os.kill(int(pid), signal.SIGKILL)  # what the harness does when a stopped row outlives its grace
    assert server.stdout.readline() == f"exited {128 + signal.SIGKILL}\n"

    good = write_request(tmp_path / "good", request())
    assert ask(server, good)[1] == 0 and result(good)["status"] == "ok"
    server.stdin.close()
    assert server.wait(timeout=60) == 0
