"""Data parallel end to end on the CPU (c10d Gloo on loopback): the JSON of a 2-rank run, and the faults —
a rank that never joins, a port in use, a rank that dies — each ending the run with a clear error, not a hang."""

import json
import os
import pathlib
import re
import signal
import socket
import subprocess

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
FAST = ["--preset=tiny", "--device=cpu", "--warmup=1", "--steps=3", "--max-steps=3", "--no-progress"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def phase_names(doc):
    """The phases the row's step marked, in the order it runs them (results/schema.json `phases`)."""
    return [p["name"] for p in doc["phases"]["phases"]]


def env_without_ranks(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def test_two_ranks_write_one_result_with_world_size_2(tmp_path):
    run = subprocess.run(
        [BIN, "--nproc-per-node=2", "--enable=native_layers", f"--out={tmp_path / 'r.json'}", *FAST],
        capture_output=True,
        text=True,
        timeout=600,
        env=env_without_ranks(),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    dist = doc["distributed"]
    assert dist["world_size"] == 2 and dist["backend"] == "gloo"
    assert len(dist["rank_step_ms_median"]) == 2 and dist["slowest_rank"] in (0, 1)
    assert doc["summary"]["tokens_per_step"] == 2 * 4 * 64  # both ranks' tokens: batch 4 x 64 each
    assert "data parallel: 2 ranks, gloo" in run.stdout
    assert run.stdout.count("[single 1/1]") == 1, "only rank 0 prints"
    # The bucketed all-reduce's wait is a phase of its own, after backward; the split is rank 0's and says so.
    assert phase_names(doc) == ["batch", "forward", "backward", "comm", "optimizer"]
    assert "data parallel" in doc["phases"]["note"]


def test_a_rank_that_never_joins_ends_the_run_within_the_timeout(tmp_path):
    # The rendezvous gives up after --dist-timeout and says so; subprocess's timeout is only a hang guard.
    run = subprocess.run(
        [BIN, "--dist-timeout=3", f"--out={tmp_path}", *FAST],
        capture_output=True,
        text=True,
        timeout=600,
        env=env_without_ranks(RANK=0, WORLD_SIZE=2, MASTER_PORT=free_port()),
    )
    assert run.returncode != 0
    assert "not every rank joined the rendezvous" in run.stderr and "within 3 s" in run.stderr


def test_a_port_in_use_is_named(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = subprocess.run(
            [BIN, "--nproc-per-node=2", "--dist-timeout=10", f"--out={tmp_path}", *FAST],
            capture_output=True,
            text=True,
            timeout=120,
            env=env_without_ranks(MASTER_PORT=port),
        )
    assert run.returncode != 0
    assert f"MASTER_PORT {port} is already in use" in run.stderr


def test_a_rank_that_dies_stops_the_others(tmp_path):
    launcher = subprocess.Popen(
        [
            BIN,
            "--nproc-per-node=2",
            "--dist-timeout=30",
            "--steps=400",
            "--max-steps=400",
            "--max-time=300",
            "--preset=tiny",
            "--device=cpu",
            "--no-progress",
            f"--out={tmp_path}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_without_ranks(),
    )
    # Rank 0 prints this line once both ranks have joined and the suite starts: from then on they train together.
    for line in launcher.stdout:
        if line.startswith("data parallel: 2 ranks"):
            break
    else:
        raise AssertionError(f"the ranks never started: {launcher.communicate()[1][-2000:]}")
    found = subprocess.run(["pgrep", "-P", str(launcher.pid)], capture_output=True, text=True).stdout.split()
    ranks = sorted(int(p) for p in found)
    assert len(ranks) == 2
    os.kill(ranks[1], signal.SIGKILL)
    # Rank 0 would otherwise wait out --dist-timeout in its next collective; the launcher's message says it did not.
    _, stderr = launcher.communicate(timeout=600)  # a hang guard only
    assert launcher.returncode != 0
    assert "was killed by signal 9" in stderr and "stopping the other 1 rank(s)" in stderr
    assert subprocess.run(["pgrep", "-P", str(launcher.pid)], capture_output=True).stdout == b""


def test_a_rank_that_fails_alone_ends_the_run_naming_it_instead_of_hanging(tmp_path):
    # Rank 1 fails its configuration mid-way while rank 0 waits in the next step's all-reduce: an all-reduce to agree
    # on the outcome would hang both. The outcome is agreed through the store, with a timeout, and the run ends.
    run = subprocess.run(
        [
            BIN,
            "--nproc-per-node=2",
            "--dist-timeout=8",
            "--steps=50",
            "--max-steps=50",
            "--max-time=120",
            f"--out={tmp_path}",
            *FAST[:2],
            "--warmup=1",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard only
        env=env_without_ranks(STEPWISE_TEST_FAIL_RANK=1),
    )
    assert run.returncode != 0
    assert "rank 1 failed 'single/0'" in run.stderr and "rank(s) 0 did not report" in run.stderr, run.stderr
    # Whichever rank the launcher reaps first, it stops the other: nobody waits out a collective.
    assert re.search(r"rank [01] exited with status 1; stopping the other 1 rank\(s\)", run.stderr), run.stderr


# Enough shared steps for the loss check's verdict (8 or more, the warm-up counted): 2 + 10.
VERDICT_STEPS = ["--preset=tiny", "--device=cpu", "--warmup=2", "--steps=10", "--max-steps=10", "--max-time=600"]


def test_zero1_shards_adamw_state_across_two_ranks_and_keeps_the_loss(tmp_path):
    run = subprocess.run(
        [BIN, "--nproc-per-node=2", "--enable=zero1", "--vs-baseline", f"--out={tmp_path}", *VERDICT_STEPS],
        capture_output=True,
        text=True,
        timeout=900,
        env=env_without_ranks(),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    docs = [json.loads(p.read_text()) for p in sorted(tmp_path.rglob("*.json"))]
    for doc in docs:
        jsonschema.validate(doc, SCHEMA)
    by_flags = {tuple(d["config"]["flags"]): d for d in docs}
    baseline, zero1 = by_flags[()], by_flags[("zero1",)]
    assert zero1["status"] == "ok", zero1.get("reason")
    check = zero1["summary"]["loss"]["check"]
    assert check["status"] == "ok", check
    assert zero1["config"]["optimizer"] == baseline["config"]["optimizer"]  # the same AdamW, sharded
    dist = zero1["distributed"]
    assert dist["world_size"] == 2 and dist["backend"] == "gloo" and dist["optimizer"] == "zero1"
    assert dist["reduce_scatter"].startswith("all_reduce + slice")  # Gloo has no native reduce-scatter
    assert "bucket_bytes" not in dist and "reduce-scatters" in dist["allreduce"]
    # Each rank holds half the two fp32 moments, give or take the padding of the last shard (under 2 elements).
    per_rank, replicated = dist["optimizer_state_bytes_per_rank"], dist["optimizer_state_bytes_replicated"]
    assert 0 <= 2 * per_rank - replicated < 2 * 2 * 4, dist
    assert zero1["summary"]["memory"]["optimizer_state_bytes"] == per_rank
    assert baseline["distributed"]["bucket_count"] >= 1 and "optimizer" not in baseline["distributed"]
    assert baseline["summary"]["memory"]["optimizer_state_bytes"] == replicated
    # zero1's reduce-scatter and all-gather are comm, the shard's AdamW between them the optimizer.
    assert phase_names(zero1) == ["batch", "forward", "backward", "comm", "optimizer"]
    assert all(ms > 0 for p in zero1["phases"]["phases"] for ms in p["ms"] if p["name"] == "comm")


def test_zero1_on_a_single_process_is_a_planned_skip_naming_nproc_per_node(tmp_path):
    run = subprocess.run(
        [BIN, "--enable=zero1", f"--out={tmp_path}", *FAST],
        capture_output=True,
        text=True,
        timeout=300,
        env=env_without_ranks(),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (doc,) = [json.loads(p.read_text()) for p in tmp_path.rglob("*.json")]
    jsonschema.validate(doc, SCHEMA)
    assert doc["status"] == "skipped" and "--nproc-per-node" in doc["reason"], doc.get("reason")


def test_muon_runs_on_two_ranks_and_with_zero1_is_a_planned_skip_naming_why(tmp_path):
    # Every rank steps Muon on the all-reduced gradients (bench/optim/muon.h); ZeRO-1's flat shards would cut its
    # matrices apart, so that pair is skipped with the reason while the rest of a suite runs.
    run = subprocess.run(
        [BIN, "--nproc-per-node=2", "--enable=muon", f"--out={tmp_path / 'muon.json'}", *FAST],
        capture_output=True,
        text=True,
        timeout=600,  # hang guard only
        env=env_without_ranks(),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    doc = json.loads((tmp_path / "muon.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["status"] == "ok" and doc["distributed"]["world_size"] == 2
    assert doc["config"]["muon_momentum"] == 0.95
    run = subprocess.run(
        [BIN, "--nproc-per-node=2", "--enable=muon,zero1", f"--out={tmp_path / 'pair.json'}", *FAST],
        capture_output=True,
        text=True,
        timeout=600,  # hang guard only
        env=env_without_ranks(),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    doc = json.loads((tmp_path / "pair.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["status"] == "skipped" and "zero1" in doc["reason"] and "Newton-Schulz" in doc["reason"], doc["reason"]
