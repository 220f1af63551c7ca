"""stepwise_micro: one quick CPU family with JSON output that parses, skips that say why, usage errors."""

import json
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
MICRO = os.environ.get("STEPWISE_MICRO", str(ROOT / "build" / "bench" / "micro" / "stepwise_micro"))


def micro(*args):
    return subprocess.run(
        [MICRO, "--device=cpu", "--presets=tiny", "--benchmark_min_time=0.01", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def micro_json(tmp_path, *args) -> dict:
    """The JSON a run writes with --benchmark_out, the run having exited 0."""
    out = tmp_path / "micro.json"
    run = micro(*args, f"--benchmark_out={out}", "--benchmark_out_format=json")
    assert run.returncode == 0, run.stderr
    return json.loads(out.read_text())


def test_one_cpu_family_writes_google_benchmark_json(tmp_path):
    doc = micro_json(tmp_path, "--benchmark_filter=^layernorm/", "--benchmark_repetitions=2")
    assert "caches" in doc["context"]  # Bencher's cpp_google adapter requires it
    assert doc["context"]["stepwise_device"].startswith("cpu")
    assert "layernorm=handwritten" in doc["context"]["stepwise_baselines"]
    rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    names = {b["name"] for b in rows}
    assert "layernorm/tiny/handwritten/fwd/B:4/T:64" in names and "layernorm/tiny/native/fwd+bwd/B:4/T:16" in names
    for b in rows:
        assert b["real_time"] > 0 and b["time_unit"] == "us"
        assert b["elements_per_s"] > 0 and b["bytes_per_second"] > 0
    assert {b["aggregate_name"] for b in doc["benchmarks"] if b["run_type"] == "aggregate"} >= {"mean", "median"}


def test_cases_that_cannot_run_on_the_cpu_are_skipped_with_the_reason(tmp_path):
    rows = micro_json(tmp_path, "--benchmark_filter=^(copy/.*/bytes:65536|matmul/tiny/tf32/qkv)")["benchmarks"]
    assert len(rows) == 5
    assert all(b["error_occurred"] for b in rows)
    assert {b["error_message"] for b in rows} == {
        "host-to-device copies need a CUDA device",
        "tf32 needs a CUDA device (tensor cores)",
    }


def test_muons_step_counts_what_it_dispatches_and_batching_dispatches_less(tmp_path):
    """Each muon case counts one more step's ATen ops after its timed ones; one matrix at a time is at least the
    fifteen GEMMs per matrix Newton-Schulz makes, batched by shape fewer ops than that; a CPU launches no kernels, so
    no launch count (not a zero)."""
    doc = micro_json(tmp_path, "--benchmark_filter=^muon/tiny/(per_matrix|batched)_fp32/")
    rows = {b["run_name"].split("/")[2]: b for b in doc["benchmarks"]}
    per, batched = rows["per_matrix_fp32"], rows["batched_fp32"]
    assert per["aten_ops"] >= 15 * per["matrices"]
    assert 0 < batched["aten_ops"] < per["aten_ops"] / 2
    assert "launches" not in per and "launches" not in batched


def test_newton_schulz_alone_counts_its_flops_a_pass(tmp_path):
    """Newton-Schulz alone over tiny's shape stacks (width 64, 2 layers: eight 64 x 64 blocks, the fused c_attn's
    three and c_proj per layer; four 64 x 256, c_fc transposed and the MLP's c_proj), with the FLOPs of a pass as
    counted here by hand: five iterations of X X^T (2 r^2 n), b A + c A^2 (2 r^3) and B X (2 r^2 n)."""
    doc = micro_json(tmp_path, "--benchmark_filter=^muon/tiny/newton_schulz_")
    rows = {b["run_name"].split("/")[2]: b for b in doc["benchmarks"]}
    assert rows.keys() == {"newton_schulz_fp32", "newton_schulz_bf16"}

    def flops(k, r, n):
        return k * 5 * (2 * r * r * n + 2 * r**3 + 2 * r * r * n)

    for row in rows.values():
        assert row["ns_flops"] == flops(8, 64, 64) + flops(4, 64, 256) and row["real_time"] > 0


def test_usage_errors_exit_2():
    assert micro("--benchmark_nope").returncode == 2
    bad = subprocess.run([MICRO, "--presets=gpt5"], capture_output=True, text=True)
    assert bad.returncode == 2 and "gpt2-124m" in bad.stderr
