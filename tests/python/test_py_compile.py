"""One real torch.compile run on the CPU (Inductor's C++ backend) on the tiny preset, beside the eager run of the
same request: same weights and batches, so the same losses up to float rounding, and the compile time kept out
of the step times. Slow on a small CPU: most of it is Inductor compiling the forward and backward graphs."""
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # model, step, stats, loader

from step_requests import request, result, run_step, write_request  # noqa: E402


def test_compiled_run_matches_eager_and_reports_compile_time(tmp_path):
    # dropout 0: Inductor draws its own dropout masks, which would differ from eager's.
    timing = {"warmup": 1, "min_steps": 3, "max_steps": 3, "check_every": 3}
    eager = write_request(tmp_path / "eager", request(timing=timing))
    compiled = write_request(tmp_path / "compiled", request(implementation="python-compile", timing=timing))
    for directory in (eager, compiled):
        run = run_step(directory, timeout=1200)
        assert run.returncode == 0, run.stderr
    e, c = result(eager), result(compiled)
    assert e["status"] == "ok" and c["status"] == "ok", c["reason"]
    assert c["implementation"] == "python-compile" and e["compile_s"] is None
    assert c["compile_s"] > 0 and len(c["warmup"]) == 1 and len(c["steps"]) == 3
    assert c["warmup"][0]["ms"] >= 1000 * c["compile_s"] * 0.9  # the first step is where it compiled
    eager_losses = [s["loss"] for s in e["warmup"] + e["steps"]]
    compiled_losses = [s["loss"] for s in c["warmup"] + c["steps"]]
    assert all(math.isfinite(x) for x in compiled_losses)
    for a, b in zip(eager_losses, compiled_losses):
        assert abs(a - b) <= 1e-3 * abs(a), (eager_losses, compiled_losses)
