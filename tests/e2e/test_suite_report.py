"""CI's end-to-end run: one small CPU suite through ./ablate, then ./report over its results — the report, the
plots, the exports and the dashboard — exactly as a user would run them."""

import json
import os
import pathlib
import subprocess
import sys

import jsonschema

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reports"))
from table_cells import markdown_rows, text_rows  # noqa: E402  (tests/reports/table_cells.py)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())


def test_raschka_suite_on_the_cpu_then_the_report(tmp_path):
    results = tmp_path / "results"
    run = subprocess.run(
        [
            BIN,
            "--suite=raschka",
            "--preset=tiny",
            "--device=cpu",
            # 2 x 32 tokens a step, a quarter of the preset's: a CPU that emulates bf16 runs the suite's five bf16 rows
            # and the probe's batches in minutes, not many, and every path is the same.
            "--batch-size=2",
            "--seq-len=32",
            "--warmup=2",
            "--steps=5",
            "--max-steps=8",
            "--max-time=600",
            "--max-batch-limit=8",
            f"--out={results}",
            "--run-id=ci",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    docs = [json.loads(p.read_text()) for p in sorted((results / "raschka").glob("*.json"))]
    assert len(docs) == 11
    for doc in docs:
        jsonschema.validate(doc, SCHEMA)
    status = {d["suite"]["index"]: d["status"] for d in docs}
    assert [i for i, s in status.items() if s == "skipped"] == [2, 4, 8]  # tf32, pinned_memory, compile
    assert all(s == "ok" for i, s in status.items() if i not in (2, 4, 8))
    # A generous --max-time (and so --max-batch-time) checks as much on a CPU that emulates bf16 as on one that has
    # it: the probe reaches its limit and every row measures its steps.
    probe = docs[10]["max_batch_probe"]
    assert docs[10]["config"]["batch_size"] == probe["chosen"] == 8 and probe["stopped"] is None, probe
    assert all(not d["summary"]["short"] for d in docs if d["status"] == "ok")
    for doc in docs:
        if doc["status"] == "ok" and doc["suite"]["index"] < 10:
            assert doc["summary"]["loss"]["check"]["status"] in ("baseline", "ok", "too short to judge"), doc["name"]
    assert "× previous" in run.stdout

    reports = tmp_path / "reports"
    report = subprocess.run(
        [str(ROOT / "report"), str(results), "--out", str(reports)], capture_output=True, text=True, timeout=600
    )
    assert report.returncode == 0, report.stdout + report.stderr
    markdown = (reports / "report.md").read_text()
    assert "raschka" in markdown and "12525" in markdown.replace(",", "")  # ours beside the published baseline
    assert list(reports.glob("plots/**/*throughput.png")) and list(reports.glob("plots/**/*throughput.svg"))
    assert (reports / "dashboard.html").stat().st_size > 10_000
    exports = {p.name for p in (reports / "exports").iterdir()}
    assert {"gbench.json", "customBiggerIsBetter.json", "customSmallerIsBetter.json", "bmf.json"} <= exports
    gbench = json.loads((reports / "exports" / "gbench.json").read_text())
    assert gbench["context"]["caches"] == [] and gbench["benchmarks"]
    # One renderer: the table ./ablate printed at its end (./report show's) and report.md's are the same table, cell for
    # cell, every speedup's interval included (docs/design/one-renderer.md).
    terminal = text_rows(run.stdout, "ours:")
    assert len(terminal) == 12 and terminal[0][:2] == ["#", "row"], terminal[:2]
    assert markdown_rows(markdown, "**ours**") == terminal
