"""op_counts.py: what one step dispatches (--count-ops), as report.md shows it: per configuration the C++ row's ATen
ops, allocations, kernels and launches beside each Python row's, whole numbers, a row that could not count saying
why; and no section for a run that counted nothing."""

import resultgen as g
from stepwise_report.cli import main


def counted(ops: int, cpu_bytes: int, gpu: dict | None = None, same: bool = True) -> dict:
    """An op_counts section as ablate writes it; `gpu` adds the CUDA allocations, kernels and launches."""
    per_step = {
        "aten_ops": {"aten::mm": ops},
        "aten_op_total": ops,
        "allocations": {"cpu": {"count": 3, "bytes": cpu_bytes}},
        "device_activities": None,
        "device_activity_total": None,
        "runtime_calls": None,
        "runtime_call_total": None,
        "launch_total": None,
    }
    if gpu:
        per_step["allocations"]["cuda"] = {"count": 40, "bytes": gpu["bytes"]}
        per_step["device_activities"] = {"kernel": gpu["kernels"]}
        per_step["device_activity_total"] = gpu["kernels"]
        per_step["runtime_calls"] = {"cudaLaunchKernel": gpu["launches"]}
        per_step["runtime_call_total"] = per_step["launch_total"] = gpu["launches"]
    varying = {} if same else {"aten::mm": [ops - 1, ops, ops]}
    return {"status": "ok", "steps_counted": 3, "same_each_step": same, "per_step": per_step, "varying": varying}


def report(tmp_path, docs) -> str:
    for doc in docs:
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    return (tmp_path / "out" / "report.md").read_text()


def test_each_configuration_shows_the_cpp_row_beside_its_python_rows(tmp_path):
    docs = g.cumulative("20260301T120000Z_t_h100", "raschka", g.RASCHKA)[:2]
    docs[0]["op_counts"] = counted(2195, 135_178_120, {"bytes": 2**24, "kernels": 300, "launches": 298})
    twin = g.python_row(docs[0], "python-eager", slower=1.1)
    twin["op_counts"] = counted(2412, 135_179_452, {"bytes": 2**24, "kernels": 302, "launches": 302}, same=False)
    docs[1]["op_counts"] = {"status": "unavailable", "reason": "op counts unavailable: the counted pass failed: OOM"}
    for doc in (*docs, twin):
        g.VALIDATOR is None or g.VALIDATOR.validate(doc)
    md = report(tmp_path, [*docs, twin])
    section = md[md.index("### What one step dispatches") :].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows[0] == (
        "| raschka 0 baseline | libtorch | 2,195 | cpu 3 · cuda 40 | cpu 135,178,120 · cuda 16,777,216 | 300 | 298 |"
    ), rows
    assert rows[1] == (
        "|  | python-eager * | 2,412 | cpu 3 · cuda 40 | cpu 135,179,452 · cuda 16,777,216 | 302 | 302 |"
    ), rows
    assert rows[2].startswith("| raschka 1 ") and "op counts unavailable: the counted pass failed: OOM" in rows[2]
    assert "*: the counted steps differed" in section


def test_a_run_that_counted_nothing_has_no_such_section(tmp_path):
    md = report(tmp_path, g.cumulative("20260301T120000Z_t_h100", "raschka", g.RASCHKA)[:2])
    assert "What one step dispatches" not in md


def test_the_operators_called_a_different_number_of_times_largest_gap_first(tmp_path):
    from stepwise_report.render.op_counts import OPS_SHOWN, op_difference_table

    docs = g.cumulative("20260301T120000Z_t_cpu", "raschka", g.RASCHKA)[:2]
    docs[0]["op_counts"] = counted(2195, 1000)
    docs[0]["op_counts"]["per_step"]["aten_ops"] = {"aten::mm": 10, "aten::item": 0, "aten::copy_": 200}
    twin = g.python_row(docs[0], "python-eager")
    twin["op_counts"] = counted(2412, 1000)
    twin["op_counts"]["per_step"]["aten_ops"] = {"aten::mm": 10, "aten::item": 31, "aten::copy_": 240, "aten::to": 5}
    docs[1]["op_counts"] = counted(2187, 1000)  # counted alone: nothing to hold it against
    from stepwise_report.read.results import Result

    groups = [[Result(None, docs[0]), Result(None, twin)], [Result(None, docs[1])]]
    table = op_difference_table(groups)
    assert table.headers == ["configuration", "ATen operator", "libtorch", "python-eager", "libtorch − eager"]
    assert table.rows == [
        ["raschka 0 baseline", "aten::copy_", "200", "240", "-40"],
        ["", "aten::item", "0", "31", "-31"],
        ["", "aten::to", "0", "5", "-5"],
    ]
    # The same counts on both sides say so; more than OPS_SHOWN operators that differ are counted, not listed.
    twin["op_counts"]["per_step"]["aten_ops"] = dict(docs[0]["op_counts"]["per_step"]["aten_ops"])
    assert op_difference_table(groups).rows[0][1] == "every operator as often in each row"
    twin["op_counts"]["per_step"]["aten_ops"] = {f"aten::op{i}": i + 1 for i in range(OPS_SHOWN + 3)}
    rows = op_difference_table(groups).rows
    assert len(rows) == OPS_SHOWN + 1 and rows[-1][1].startswith("5 more differ")  # op0…op17, mm and copy_: 20
    assert op_difference_table([[Result(None, docs[1])]]) is None
