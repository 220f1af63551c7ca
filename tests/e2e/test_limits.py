"""End to end: the caps that keep a run inside the machine — the max_batch probe's own time cap and its recovery from
a real out-of-memory, an absurd batch failing its configuration with the estimate, and --max-time as a hard cap on
the measured phase, asserted from the step times the result recorded."""

import json
import subprocess

import jsonschema
import pytest
from runs import BIN, FAST, SCHEMA, ablate, results


def test_the_max_batch_probe_has_its_own_time_cap(tmp_path):
    """--max-time bounds the measured steps, not the probe: a short --max-time still probes above the base batch,
    and --max-batch-time stops the probe, saying so."""
    base = [
        "--enable=max_batch",
        "--batch-size=2",
        "--max-batch-limit=8",
        "--preset=tiny",
        "--device=cpu",
        "--warmup=1",
        "--steps=2",
        "--max-steps=2",
        "--no-progress",
    ]
    run = ablate(*base, "--max-time=0.01", "--max-batch-time=600", f"--out={tmp_path / 'long.json'}")
    assert run.returncode == 0, run.stderr
    probe = json.loads((tmp_path / "long.json").read_text())["max_batch_probe"]
    assert probe["time_cap_s"] == 600 and probe["stopped"] is None
    assert probe["chosen"] == 8 > probe["base"], probe
    run = ablate(*base, "--max-time=600", "--max-batch-time=0.01", f"--out={tmp_path / 'short.json'}")
    assert run.returncode == 0, run.stderr
    probe = json.loads((tmp_path / "short.json").read_text())["max_batch_probe"]
    assert probe["chosen"] == 2 and "--max-batch-time" in probe["stopped"], probe


def test_out_of_memory_in_the_max_batch_probe_is_caught_and_the_run_goes_on(tmp_path):
    # Cap the address space so that doubling the batch runs out of memory for real; the probe must keep the last
    # batch that fit. The cap that bites depends on the libraries' mappings, so try a few.
    for gib in (3, 4, 6, 8, 12):
        out = tmp_path / f"as{gib}"
        run = subprocess.run(
            [
                "prlimit",
                f"--as={gib << 30}",
                BIN,
                "--enable=max_batch",
                "--max-batch-limit=4096",
                f"--out={out}",
                *FAST,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if run.returncode != 0:
            continue
        (doc,) = results(out)
        tried = doc["max_batch_probe"]["tried"]
        if doc["status"] == "ok" and not tried[-1]["fit"]:
            assert "allocate" in tried[-1]["error"]
            # The batch run is one that fit, and every larger one tried ran out, in the probe or in the measured run
            # (which then steps down to the next smaller fit, recording why).
            chosen = doc["max_batch_probe"]["chosen"]
            assert doc["config"]["batch_size"] == chosen
            assert any(t["batch"] == chosen and t["fit"] for t in tried)
            for batch in {t["batch"] for t in tried if t["batch"] > chosen}:
                failures = [t["error"] for t in tried if t["batch"] == batch and not t["fit"]]
                assert failures, f"batch {batch} is larger than the one chosen and never failed"
                if any(t["batch"] == batch and t["fit"] for t in tried):
                    assert failures[0].startswith("measured run: ")
            return
    pytest.fail("no address-space cap made the probe run out of memory and recover")


def test_an_absurd_batch_fails_its_configuration_as_out_of_memory_with_the_estimate(tmp_path):
    run = ablate(
        "--batch-size=1000000000",
        "--preset=tiny",
        "--device=cpu",
        "--warmup=1",
        "--steps=2",
        "--max-steps=2",
        "--no-progress",
        f"--out={tmp_path / 'r.json'}",
    )
    assert run.returncode == 1, run.stderr  # recorded as failed, as an out of memory on a GPU is
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["status"] == "failed"
    assert doc["reason"].startswith("out of memory: batch 1000000000 x 64 needs about"), doc["reason"]
    assert "available" in doc["reason"] and "bad_alloc" not in run.stderr + run.stdout


def test_max_time_is_a_hard_cap_and_a_short_run_says_so(tmp_path):
    run = ablate(
        "--preset=tiny",
        "--device=cpu",
        "--warmup=1",
        "--steps=1000",
        "--max-steps=1000",
        "--max-time=2",
        "--no-progress",
        f"--out={tmp_path / 'r.json'}",
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    summary = doc["summary"]
    assert summary["short"] is True and summary["stop_reason"] == "max_time"
    assert 1 <= summary["steps"] < 1000
    # A hard cap: every measured step but the last began before the 2 s were up, on a fast machine or a busy one.
    assert sum(s["ms"] for s in doc["steps"][:-1]) < 2000, [s["ms"] for s in doc["steps"]]
    # The row's line as it ends, then the report's table (./report show) marking the row short, with its n and noise.
    assert "short: --max-time before --min-steps" in run.stdout and "short: n=" in run.stdout
