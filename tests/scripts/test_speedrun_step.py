"""scripts/speedrun_step.py's Muon table, from the muon family's Google Benchmark JSON: each dtype's per-matrix and
batched steps side by side with what one step of each dispatches, the launches column only where the JSON has them
(a GPU run), never a zero standing in for a count a CPU cannot make; Newton-Schulz alone with the GFLOP/s its FLOPs
a pass make of its time."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import speedrun_step  # noqa: E402


def row(variant: str, ms: float, **counters) -> dict:
    base = {"run_name": f"muon/tiny/{variant}/step", "run_type": "iteration", "time_unit": "ms", "real_time": ms}
    return base | counters


def table(capsys, benchmarks: list[dict]) -> list[str]:
    speedrun_step.print_micro({"benchmarks": benchmarks}, ["tiny"])
    return capsys.readouterr().out.splitlines()


def test_per_matrix_and_batched_side_by_side_with_their_aten_ops(capsys):
    out = table(
        capsys,
        [
            row("adamw_forloop", 4.0, aten_ops=300),
            row("adamw_fused", 2.0, aten_ops=20),
            row("per_matrix_fp32", 6.0, aten_ops=420),
            row("per_matrix_fp32", 8.0, aten_ops=420),  # a second repetition: the median of the two
            row("batched_fp32", 5.0, aten_ops=95),
            row("newton_schulz_fp32", 2.5, ns_flops=5e8),  # 5e8 FLOPs in 2.5 ms: 200 GFLOP/s
        ],
    )
    assert "ATen ops" in out[0] and "launches" not in out[0]
    fp32 = next(line for line in out if line.startswith("tiny") and "fp32" in line)
    assert fp32.split()[2:6] == ["4.00", "2.00", "7.00", "5.00"]
    assert fp32.split()[6:] == ["1.40", "2.50", "ms,", "200", "GFLOP/s", "420", "/", "95"]
    assert not any(line.startswith("tiny") and "bf16" in line for line in out)  # no bf16 rows ran: no line


def test_a_gpu_run_adds_the_launches_per_step(capsys):
    out = table(
        capsys,
        [
            row("per_matrix_bf16", 3.0, aten_ops=1200, launches=1100),
            row("batched_bf16", 1.0, aten_ops=150, launches=90),
        ],
    )
    assert "launches" in out[0]
    bf16 = next(line for line in out if line.startswith("tiny") and "bf16" in line)
    assert bf16.split()[-6:] == ["1200", "/", "150", "1100", "/", "90"]


def run(step: float) -> dict:
    return {"step": step, "forward": step / 4, "backward": step / 2, "optimizer": step / 4}


def test_a_row_that_measured_nothing_says_why_and_the_others_keep_their_ratios():
    runs = {
        "baseline": [run(100.0), run(102.0), run(98.0)],
        "+ logit_softcap": [run(101.0), run(103.0), run(99.0)],
        "CPU flags": [run(80.0), {"problem": "failed: the row's process died"}, run(78.0)],
        "speedrun stack": [run(90.0), run(91.8), run(88.2)],
    }
    rows = {r[1]: r for r in speedrun_step.size_rows("tiny", runs)}
    assert rows["CPU flags"][2:] == ["-"] * 5 + ["not measured: failed: the row's process died"]
    assert rows["speedrun stack"][2] == "90.00" and rows["speedrun stack"][-1].startswith("0.900 [0.900-0.900]")
    assert rows["baseline"][-1] == "-"
    runs["baseline"][0] = {"problem": "failed: out of memory"}
    assert all(r[-1] == "-" for r in speedrun_step.size_rows("tiny", runs)[1:] if r[1] != "CPU flags")


def test_the_floor_is_newton_schulz_alone_over_the_stacks_step_of_the_same_matrices(capsys):
    doc = {
        "benchmarks": [
            row("newton_schulz_bf16", 5.0),
            row("newton_schulz_bf16", 7.0),  # the median of the two: 6.00 ms
            {**row("newton_schulz_bf16", 1.0), "run_name": "muon/mini/newton_schulz_bf16/step"},
        ]
    }
    speedrun_step.print_floor({"tiny": 60.0, "nanoGPT": 20.0}, doc)
    out = capsys.readouterr().out
    assert (
        "tiny: Newton-Schulz alone (bf16, tiny's matrices) 6.00 ms, 10.0% of the speedrun stack's step (60.00 ms)"
        in out
    )
    assert "nanoGPT: Newton-Schulz alone (bf16, mini's matrices) 1.00 ms, 5.0% of" in out  # mini's matrices: nanoGPT's
    speedrun_step.print_floor({"nanoGPT": 20.0}, {"benchmarks": [row("newton_schulz_bf16", 5.0)]})
    assert capsys.readouterr().out == ""  # no mini benchmark: nothing to set beside nanoGPT's step
