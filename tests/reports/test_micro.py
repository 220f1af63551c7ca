"""Micro-benchmark files (stepwise_micro's google/benchmark JSON): loading, speedups, report and gate."""

import copy
import json
import shutil
from pathlib import Path

import pytest
import resultgen as g
from conftest import run_report
from stepwise_report.cli import main
from stepwise_report.results import Case, InputError, MicroFile, load_inputs, parse_micro
from stepwise_report.tables import case_groups, case_label

FIXTURE = Path(__file__).parent / "fixtures" / "micro_cpu_tiny.json"
RAW = json.loads(FIXTURE.read_text())


def _micro() -> MicroFile:
    return parse_micro(FIXTURE, RAW)


def _aggregate(name: str, which: str) -> float:
    return next(b["real_time"] for b in RAW["benchmarks"] if b["name"] == f"{name}_{which}")


def _case(m: MicroFile, name: str) -> Case:
    return next(c for c in m.cases if c.name == name)


def _rows(doc: dict, times: int = 1, scale=lambda name: 1.0, first_only: bool = False) -> dict:
    """The fixture's repetition rows, each repeated `times` times (so the gate has 9+ samples) and
    scaled by `scale(name)`; aggregates are dropped, as they would not match the scaled times."""
    out = copy.deepcopy(doc)
    rows = []
    for b in doc["benchmarks"]:
        if b["run_type"] != "iteration" or (first_only and b["repetition_index"] > 0):
            continue
        for k in range(times):
            r = dict(b, repetitions=1 if first_only else b["repetitions"] * times,
                     repetition_index=b["repetition_index"] + k * b["repetitions"])
            if not r.get("error_occurred"):
                r["real_time"] *= scale(r["name"])
                r["cpu_time"] *= scale(r["name"])
            rows.append(r)
    out["benchmarks"] = rows
    return out


def _write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


# --- loading ----------------------------------------------------------------------------------


def test_directory_finds_micro_files_and_skips_our_exports_and_foreign_gbench(tmp_path, report_out):
    shutil.copy(FIXTURE, tmp_path / "micro.json")
    shutil.copytree(report_out / "exports", tmp_path / "exports")  # ./report's own google/benchmark JSON
    _write(tmp_path / "other" / "bm.json", {"context": {"date": "x"}, "benchmarks": []})
    found = load_inputs([str(tmp_path)])
    assert found.results == [] and [m.path.name for m in found.micro] == ["micro.json"]


def test_explicit_plain_gbench_is_read_and_our_export_is_refused(tmp_path, report_out):
    plain = copy.deepcopy(RAW)
    del plain["context"]["stepwise_baselines"]
    found = load_inputs([str(_write(tmp_path / "plain.json", plain))])
    m = found.micro[0]
    assert m.baselines == {} and all(m.speedup(c) is None for c in m.cases)
    with pytest.raises(InputError, match="an export written by ./report"):
        load_inputs([str(report_out / "exports" / "gbench.json")])


def test_cases_repetitions_and_skips_of_the_real_file():
    m = _micro()
    assert m.device == "cpu: AMD EPYC" and m.baselines["copy"] == "pageable_blocking"
    assert len(m.cases) == 51 and sum(not c.ok for c in m.cases) == 20
    tf32 = _case(m, "matmul/tiny/tf32/qkv/B:4/T:64")
    assert not tf32.ok and tf32.error == "tf32 needs a CUDA device (tensor cores)" and tf32.samples == []
    copies = [c for c in m.cases if c.family == "copy"]
    assert len(copies) == 16 and {c.error for c in copies} == {"host-to-device copies need a CUDA device"}
    for c in m.cases:
        if c.ok:
            # Our median of the repetitions is google/benchmark's own _median row.
            assert len(c.samples) == 3 and c.time_unit == "us"
            assert c.median == pytest.approx(_aggregate(c.name, "median"), rel=1e-12)


def test_aggregates_only_file_uses_the_median_row(tmp_path):
    doc = copy.deepcopy(RAW)
    doc["benchmarks"] = [b for b in RAW["benchmarks"] if b["run_type"] == "aggregate"]
    c = _case(parse_micro(FIXTURE, doc), "adamw/tiny/fused/step")
    assert c.samples == [] and c.median == _aggregate("adamw/tiny/fused/step", "median")
    assert c.counter("params_per_s") > 0


# --- baseline pairing -------------------------------------------------------------------------


def test_speedups_pair_same_preset_details_and_sizes():
    m = _micro()
    native = _case(m, "layernorm/tiny/native/fwd/B:4/T:16")
    assert m.baseline_of(native).name == "layernorm/tiny/handwritten/fwd/B:4/T:16"
    assert m.speedup(native) == pytest.approx(
        _aggregate("layernorm/tiny/handwritten/fwd/B:4/T:16", "median")
        / _aggregate("layernorm/tiny/native/fwd/B:4/T:16", "median"))
    bf16 = _case(m, "matmul/tiny/bf16/attn_proj/B:4/T:64")
    assert m.baseline_of(bf16).name == "matmul/tiny/fp32/attn_proj/B:4/T:64"
    assert m.baseline_of(_case(m, "matmul/tiny/fp32/qkv/B:4/T:64")) is None  # the baseline itself
    assert m.speedup(_case(m, "matmul/tiny/tf32/qkv/B:4/T:64")) is None  # skipped
    assert m.speedup(_case(m, "mask/tiny/dynamic/T:64")) < 1  # slower than the stored mask here
    assert m.speedup(_case(m, "adamw/tiny/fused/step")) > 5


def test_manual_time_names_pair_and_lose_their_suffix():
    ctx = {"stepwise_baselines": "attention=explicit", "stepwise_device": "cuda:0: NVIDIA H100 80GB HBM3"}
    names = ["attention/gpt2-124m/explicit/fwd+bwd/bf16/B:8/T:1024/manual_time",
             "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:1024/manual_time",
             "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:512/manual_time"]
    cases = [Case(n, n.split("/"), "ms", [t]) for n, t in zip(names, (4.0, 1.0, 0.5))]
    m = MicroFile(Path("gpu.json"), ctx, cases)
    assert m.speedup(cases[1]) == 4.0 and m.speedup(cases[2]) is None  # no explicit run at T:512
    assert case_label(m, cases[1]) == "sdpa_flash/fwd+bwd/bf16/B:8/T:1024" and m.manual_time
    assert [t for t, _ in case_groups(m)] == ["attention · gpt2-124m"]


def test_rows_put_each_baseline_above_its_variants():
    (title, cases), = [g for g in case_groups(_micro()) if g[0] == "layernorm · tiny"]
    assert [case_label(_micro(), c) for c in cases[:4]] == [
        "handwritten/fwd/B:4/T:16", "native/fwd/B:4/T:16", "handwritten/fwd/B:4/T:64", "native/fwd/B:4/T:64"]


# --- report.md and the dashboard --------------------------------------------------------------


def test_report_of_micro_files_only(tmp_path):
    shutil.copy(FIXTURE, tmp_path / "micro.json")
    assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    for text in ("## micro-benchmarks 2026-11-21 08:24 on cpu: AMD EPYC", "| presets | tiny |",
                 "| torch | 2.11.0+cu130 |", "| host | vm |", "| cases | 51 (31 ok, 20 skipped) |",
                 "### layernorm · tiny (baseline handwritten)",
                 "### copy · host_to_device (baseline pageable_blocking)",
                 "| native/fwd/B:4/T:16 | ok | 5.59 µs | 5.02–5.72 µs | 3 | 732.6 M elements/s | 7.79× |",
                 "| handwritten/fwd/B:4/T:16 | ok | 43.53 µs | 43.39–43.60 µs | 3 | 94.09 M elements/s "
                 "| baseline |",
                 "| fused/step | ok | 2.47 ms |", "GFLOP/s",
                 "| tf32/qkv/B:4/T:64 | skipped: tf32 needs a CUDA device (tensor cores) | — |"):
        assert text in md, text
    page = (tmp_path / "out" / "dashboard.html").read_text()
    assert page.count('<table class="micro">') == 6 and "newest micro-benchmarks per device" in page
    assert "<script" not in page and "<link rel=\"stylesheet\"" not in page
    assert [p.name for p in (tmp_path / "out" / "exports").iterdir()] == [".stepwise-report"]


def test_report_of_runs_and_micro_files_together(tmp_path):
    run = "20260301T120000Z_t_h100"
    for doc in g.cumulative(run, "karpathy", g.KARPATHY[:3]):
        g.write(tmp_path / "results" / run, doc)
    micro = _write(tmp_path / "micro" / "older.json", RAW)
    newer = copy.deepcopy(RAW)
    newer["context"]["date"] = "2026-11-22T09:00:00+01:00"
    _write(tmp_path / "micro" / "newer.json", newer)
    assert main([str(tmp_path / "results"), str(micro.parent), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert md.index(f"## run {run}") < md.index("## micro-benchmarks 2026-11-22 08:00") \
        < md.index("## micro-benchmarks 2026-11-21 08:24")
    assert "- [micro-benchmarks 2026-11-22 08:00 on cpu: AMD EPYC]" in md  # in the table of contents
    page = (tmp_path / "out" / "dashboard.html").read_text()
    assert f"run {run}" in page and "micro-benchmarks 2026-11-22 08:00" in page
    assert "micro-benchmarks 2026-11-21" not in page  # the dashboard shows the newest file per device
    assert (tmp_path / "out" / "exports" / "gbench.json").is_file()


# --- the gate ---------------------------------------------------------------------------------


def _compare(tmp_path, base: dict, cand: dict, *options: str) -> tuple[int, dict]:
    b, c = _write(tmp_path / "base.json", base), _write(tmp_path / "cand.json", cand)
    out = tmp_path / "compare.json"
    code = main(["compare", str(b), str(c), "--json", str(out), *options])
    return code, json.loads(out.read_text())


def _verdicts(report: dict, part: str = "absolute") -> dict[str, str]:
    return {r["name"]: r["verdict"] for r in report[part]}


def test_ten_percent_slowdown_is_slower(tmp_path, capsys):
    code, report = _compare(tmp_path, _rows(RAW, 3), _rows(RAW, 3, lambda name: 1.10))
    assert code == 1 and report["kind"] == "micro" and not report["gate"]["passed"]
    verdicts = _verdicts(report)
    assert verdicts["layernorm/tiny/handwritten/fwd/B:4/T:16"] == "SLOWER"
    assert verdicts["matmul/tiny/fp32/mlp_up/B:4/T:64"] == "SLOWER"
    assert verdicts["matmul/tiny/tf32/qkv/B:4/T:64"] == "N/A"  # skipped on both sides
    assert set(verdicts.values()) <= {"SLOWER", "UNSURE", "N/A"}
    row = next(r for r in report["absolute"] if r["name"] == "layernorm/tiny/handwritten/fwd/B:4/T:16")
    assert row["ratio"] == pytest.approx(1.10) and row["baseline_n"] == 9 and row["p_value"] < 0.01
    # Everything slowed alike, so no variant lost its speedup over the baseline variant.
    assert "SLOWER" not in _verdicts(report, "relative").values()
    assert "time per iteration +10.0% (SLOWER)" in capsys.readouterr().out


def test_same_file_twice_is_same(tmp_path):
    code, report = _compare(tmp_path, _rows(RAW, 3), _rows(RAW, 3))
    assert code == 0 and report["gate"]["passed"]
    verdicts = _verdicts(report)
    assert verdicts["layernorm/tiny/handwritten/fwd/B:4/T:16"] == "SAME"
    assert verdicts["matmul/tiny/fp32/mlp_up/B:4/T:64"] == "SAME"
    assert set(verdicts.values()) <= {"SAME", "UNSURE", "N/A"}  # UNSURE: the noisiest cases' CI is wide


def test_single_repetition_is_unsure(tmp_path):
    code, report = _compare(tmp_path, _rows(RAW, first_only=True), _rows(RAW, first_only=True, scale=lambda n: 1.5))
    assert code == 0
    ok = [r for r in report["absolute"] if r["verdict"] != "N/A"]
    assert ok and all(r["verdict"] == "UNSURE" and "too few samples" in r["note"] for r in ok)


def test_a_variant_that_loses_its_speedup_fails_the_relative_gate(tmp_path):
    slower_native = _rows(RAW, 3, lambda name: 1.2 if "/native/" in name else 1.0)
    code, report = _compare(tmp_path, _rows(RAW, 3), slower_native, "--gate", "relative")
    assert code == 1
    rel = {r["name"]: r for r in report["relative"]}
    lost = rel["layernorm/tiny/native/fwd+bwd/B:4/T:16"]
    assert lost["verdict"] == "SLOWER" and lost["speedup"] == "× handwritten"
    assert lost["candidate_speedup"] == pytest.approx(lost["baseline_speedup"] / 1.2)


def test_a_case_that_stops_running_is_failed(tmp_path):
    cand = _rows(RAW, 3)
    for b in cand["benchmarks"]:
        if b["name"] == "matmul/tiny/bf16/qkv/B:4/T:64":
            b.update(error_occurred=True, error_message="bf16 matmul failed", real_time=0.0, cpu_time=0.0)
    code, report = _compare(tmp_path, _rows(RAW, 3), cand)
    assert code == 1 and _verdicts(report)["matmul/tiny/bf16/qkv/B:4/T:64"] == "FAILED"


def test_micro_file_against_a_stepwise_run_exits_2(two_runs):
    run = sorted(p for p in two_runs.iterdir() if p.is_dir())[-1]
    proc = run_report("compare", FIXTURE, run)
    assert proc.returncode == 2
    assert "cannot compare a micro-benchmark file (google/benchmark JSON)" in proc.stderr
    assert "with a stepwise run (result files)" in proc.stderr
