"""step.py --serve (bench/python/serve.py), the Python rows' warm start on a CPU: each request runs in a child forked
from the one server, trains as a cold step.py run of the same request does, and a failing or killed row is answered
with its status while the server goes on to the next. (The other tests of bench/python run their requests through
the same server: step_requests.run_step.)"""

import os
import shutil
import signal

from step_requests import WarmServer, request, result, run_step, write_request


def test_each_request_runs_in_its_own_child_and_trains_as_a_cold_start(tmp_path):
    cold = write_request(tmp_path / "cold", request())
    assert run_step(cold, cold=True).returncode == 0
    server = WarmServer()
    warm = [shutil.copytree(cold, tmp_path / f"warm{i}", ignore=shutil.ignore_patterns("result.json")) for i in (0, 1)]
    pids = set()
    for directory in warm:
        server.send(directory)
        pids.add(int(server.expect("started", 600)))
        assert server.expect("exited", 600) == "0"
    assert len(pids | {server.process.pid}) == 3, "a fresh child per request"
    losses = [[s["loss"] for s in result(d)["warmup"] + result(d)["steps"]] for d in (cold, *warm)]
    assert losses[0] == losses[1] == losses[2], "the same function, bit for bit, warm or cold"
    assert "forked from the warm server" in result(warm[0])["memory"]["scope"]
    assert "forked" not in result(cold)["memory"]["scope"]
    server.process.stdin.close()
    assert server.process.wait(timeout=60) == 0, "the end of input ends the server"


def test_a_failing_or_killed_row_is_answered_with_its_status_and_the_next_row_still_runs(tmp_path):
    server = WarmServer()
    bad = write_request(tmp_path / "bad", request(batch_size=0))
    assert server.run(bad, 600) == 2, "a bad request exits 2, as step.py does"
    assert "invalid request" in (bad / "step.log").read_text(), "the child's stderr goes to the request's step.log"

    hung = tmp_path / "hung"
    hung.mkdir()
    os.mkfifo(hung / "request.json")  # no writer ever comes: the child blocks reading its request until killed
    server.send(hung)
    os.kill(int(server.expect("started", 600)), signal.SIGKILL)  # as the harness stops a row outliving its grace
    assert server.expect("exited", 600) == str(128 + signal.SIGKILL)

    good = write_request(tmp_path / "good", request())
    assert server.run(good, 600) == 0 and result(good)["status"] == "ok"
    server.process.stdin.close()
    assert server.process.wait(timeout=60) == 0
