"""--sweep end to end on the CPU: a configuration and its baseline at every point of two axes, each point a run of its
own whose results carry the point, the terminal's table of speedups per point, then ./report's sweep section and
figure over those results; and the usage errors a sweep can meet, each exiting 2 before anything runs."""

import json
import os
import pathlib
import subprocess

import jsonschema
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
QUICK = ["--device=cpu", "--warmup=1", "--steps=4", "--max-steps=4", "--no-progress"]


def test_a_sweep_over_presets_and_lengths_then_the_report(tmp_path):
    results = tmp_path / "sweep"
    run = subprocess.run(
        [BIN, "--sweep=preset=tiny,mini", "--sweep", "seq-len=32,64", "--enable=flash", "--vs-baseline",
         f"--out={results}", "--run-id=sw", *QUICK],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    points = ["preset-tiny_seq-len-32", "preset-tiny_seq-len-64", "preset-mini_seq-len-32", "preset-mini_seq-len-64"]
    assert sorted(p.name for p in results.iterdir()) == sorted(points)
    for index, slug in enumerate(points):
        docs = [json.loads(p.read_text()) for p in sorted((results / slug / "single").glob("*.json"))]
        assert [d["suite"]["label"] for d in docs] == ["baseline", "flash"]
        for doc in docs:
            jsonschema.validate(doc, SCHEMA)
            assert doc["status"] == "ok", doc["reason"]
            assert doc["run_id"] == f"sw_{slug}"
            sweep = doc["sweep"]
            assert sweep["id"] == "sw" and sweep["index"] == index and sweep["count"] == 4
            assert sweep["axes"] == ["preset", "seq_len"]
            assert sweep["values"] == {"preset": ["tiny", "mini"], "seq_len": [32, 64]}
            # The point's values are what ran.
            assert doc["config"]["preset"] == sweep["point"]["preset"]
            assert doc["config"]["seq_len"] == sweep["point"]["seq_len"]
    # The terminal's summary: one row per configuration, a column per point.
    table = run.stdout[run.stdout.rindex("at each point (95% interval)") :]
    assert "mini · 64" in table and "flash" in table, table

    reports = tmp_path / "reports"
    report = subprocess.run(
        [str(ROOT / "report"), str(results), "--out", str(reports)], capture_output=True, text=True, timeout=600
    )
    assert report.returncode == 0, report.stdout + report.stderr
    markdown = (reports / "report.md").read_text()
    section = markdown[markdown.index("## sweep sw") :]
    assert "crossover" in section and "| 1 | flash |" in section, section[:2000]
    assert (reports / "plots" / "sw" / "single_sweep.png").stat().st_size > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sweep=width=1,2"], "unknown axis 'width' (valid: preset, seq_len, batch_size)"),
        (["--sweep=preset=tiny,huge"], "huge"),
        (["--sweep=seq-len=32,0"], "'0' is not a positive integer"),
        (["--sweep=seq-len=32", "--seq-len=64"], "exclude each other"),
        (["--sweep=seq-len=64,4096", "--preset=tiny"], "sweep point seq_len=4096: --seq-len 4096 is longer than"),
        (["--sweep=preset=tiny", "--out=x.json"], "give --out a directory"),
    ],
)
def test_sweep_usage_errors_exit_2_and_name_the_problem(tmp_path, args, message):
    run = subprocess.run([BIN, *args, *QUICK], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in run.stderr, run.stderr
    assert not any(tmp_path.iterdir()), "nothing may run or be written"
