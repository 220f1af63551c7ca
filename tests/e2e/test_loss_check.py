"""The loss check through the real suite path: a deliberately broken variant (STEPWISE_TEST_BREAK, tests only: a
learning rate of ~0, half of it, or an attention that sees the next token) must come out "math changed", and every
real flag a CPU runs must pass at its class's tolerance on the tiny and mini presets."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
# Enough shared steps for a verdict (8 or more) with the warm-up counted: 2 + 10.
STEPS = ["--device=cpu", "--warmup=2", "--steps=10", "--max-steps=10", "--max-time=600", "--no-progress"]


def run_suite(tmp_path, *args, env=None):
    run = subprocess.run(
        [BIN, *args, f"--out={tmp_path}", *STEPS],
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, **(env or {})},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {p.stem: json.loads(p.read_text()) for p in sorted(tmp_path.rglob("*.json"))}


@pytest.fixture(scope="module")
def one_at_a_time(tmp_path_factory):
    """The one_at_a_time suite at each preset, run once: every real flag's verdict, and the unbroken control of the
    broken variants below (its dynamic_mask row is the same configuration at tiny)."""
    runs = {}

    def run(preset: str, *extra: str) -> dict:
        if preset not in runs:
            out = tmp_path_factory.mktemp(f"one_at_a_time_{preset}")
            runs[preset] = run_suite(out, "--suite=one_at_a_time", f"--preset={preset}", "--max-batch-limit=8", *extra)
        return runs[preset]

    return run


def test_a_broken_variant_is_math_changed_and_the_same_variant_unbroken_is_ok(tmp_path, one_at_a_time):
    args = ["--preset=tiny", "--enable=dynamic_mask", "--vs-baseline"]
    for mode in ("lr0", "half_lr"):
        docs = run_suite(tmp_path / mode, *args, env={"STEPWISE_TEST_BREAK": mode})
        check = docs["01_dynamic_mask"]["summary"]["loss"]["check"]
        assert check["status"] == "math changed", (mode, check)
        assert check["class"] == "exact" and "outside the exact tolerance" in check["reason"]
    # Unbroken, the same configuration against the same baseline (the suite's row, steps and seed): ok.
    clean = one_at_a_time("tiny")
    assert clean["01_dynamic_mask"]["summary"]["loss"]["check"]["status"] == "ok"


def test_an_attention_that_sees_the_next_token_is_math_changed_on_a_cpu(tmp_path):
    # It learns faster, but little in a few steps: inside the loose fp32 bounds, outside the CPU's measured ones.
    docs = run_suite(
        tmp_path, "--preset=tiny", "--enable=flash", "--vs-baseline", env={"STEPWISE_TEST_BREAK": "future_token"}
    )
    check = docs["01_flash"]["summary"]["loss"]["check"]
    assert check["status"] == "math changed" and "fp32 (CPU)" in check["reason"], check


@pytest.mark.parametrize("preset,extra", [("tiny", []), ("mini", ["--batch-size=2", "--seq-len=64"])])
def test_every_real_flag_passes_at_its_tolerance(one_at_a_time, preset, extra):
    # One at a time: every flag a CPU runs alone against the baseline; bf16 in autocast (the suite's choice) and, in
    # the raschka order, pure (tests/e2e/test_suite_report.py runs that suite on tiny).
    docs = one_at_a_time(preset, *extra)
    verdicts = {name: d["summary"]["loss"]["check"] for name, d in docs.items() if d["status"] == "ok"}
    expected = {"00_baseline": "baseline", "10_max_batch": "not comparable"}
    for name, check in verdicts.items():
        assert check["status"] == expected.get(name, "ok"), (name, check["reason"])
    ran = {name.split("_", 1)[1] for name in verdicts}
    assert {"dynamic_mask", "fused_adamw", "bf16", "native_layers", "flash", "vocab_padding"} <= ran
    assert {"checkpoint", "chunked_ce"} <= ran, "the memory flags run on a CPU and keep the loss at the fp32 class"
