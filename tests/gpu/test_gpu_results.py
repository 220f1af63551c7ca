"""Properties only a GPU run settles, read from stepwise results (conftest.py says which): each test is one risk
line of scripts/verify-gpu.sh's verify.md, and records its figure there."""

import pytest
from gpu_results import on_cuda

pytestmark = pytest.mark.gpu


def test_the_flash_rows_run_flash_attention(results, record_property):
    """Both suites pin SDPA's flash kernel on a GPU: the row labelled flash must have run it."""
    rows = [results.row("raschka", "flash")] + [d for d in results.rows("karpathy", "flash") if on_cuda(d)]
    used = {d["suite"]["name"]: d["config"].get("sdpa_backend_used") for d in rows}
    record_property("figure", "sdpa_backend_used: " + ", ".join(f"{k} {v}" for k, v in used.items()))
    assert all(v == "flash" for v in used.values()), f"a row labelled flash ran another kernel: {used}"


def test_compile_keeps_the_graphs_activations_in_its_peak_memory(results, record_property):
    compiled = results.row("raschka", "compile")
    eager = results.row("raschka", index=compiled["suite"]["index"] - 1)
    c = compiled["summary"]["memory"].get("peak_allocated_bytes") or 0
    e = eager["summary"]["memory"].get("peak_allocated_bytes") or 0
    record_property("figure", f"peak allocated {c / 2**30:.2f} GiB with compile vs {e / 2**30:.2f} GiB eager")
    assert e > 0 and c > 0.5 * e, "compile's peak must include the activations its graph pool holds"


def test_mfu_is_a_fraction_of_the_peak(results, record_property):
    rows = [d for d in results.rows() if on_cuda(d) and (d["summary"].get("mfu") or {}).get("value") is not None]
    if not rows:
        pytest.skip(f"no CUDA row with an MFU in {results.source}")
    mfus = {f"{d['suite']['name']}/{d['suite']['label']}": d["summary"]["mfu"]["value"] for d in rows}
    record_property("figure", f"max MFU {max(mfus.values()):.3f} over {len(mfus)} rows")
    over = {k: round(v, 3) for k, v in mfus.items() if not 0 < v < 1}
    assert not over, f"MFU outside (0, 1), FLOPs counted twice or the peak wrong: {over}"


def test_cupti_traces_the_kernels_of_the_cuda_graph(results, record_property):
    """CUPTI's activity tracing starts after the graph was instantiated: the replayed kernels must still be in the
    trace. The compile row's kernels per step against the eager row before it (the same model)."""
    compiled = results.row("karpathy", "compile")
    eager = results.row("karpathy", index=compiled["suite"]["index"] - 1)
    traces = {"compile": compiled.get("trace") or {}, "eager": eager.get("trace") or {}}
    for name, t in traces.items():
        assert t.get("status") == "ok", f"no trace for the {name} row: {t.get('reason')}"
    k_compile, k_eager = traces["compile"]["kernels_per_step"], traces["eager"]["kernels_per_step"]
    record_property("figure", f"kernels/step: compile {k_compile:.0f} vs eager {k_eager:.0f}")
    assert k_compile >= 0.5 * k_eager, (
        f"the compile row traced {k_compile:.0f} kernels per step against the eager "
        f"row's {k_eager:.0f}: graph kernels are missing from the trace"
    )


def test_nccl_all_reduce_is_captured_in_the_cuda_graph(results, record_property):
    ranks = [d for d in results.docs if d.get("distributed")]
    if not ranks:
        pytest.skip(f"no data-parallel result in {results.source}")
    d = ranks[0]
    if not on_cuda(d):
        pytest.skip(f"the data-parallel result ran on {d['config'].get('device')}, not on a CUDA device")
    record_property(
        "figure",
        f"{d['distributed'].get('backend')}, {d['distributed'].get('world_size')} rank, "
        f"status {d['status']}, flags {'+'.join(d['config'].get('flags', []))}",
    )
    assert d["distributed"].get("backend") == "nccl"
    assert "compile" in d["config"].get("flags", []), f"compile was not applied: {d['config'].get('flags_skipped')}"
    assert d["status"] == "ok", f"capturing the all-reduce failed: {d.get('reason')}"


def test_the_max_batch_probe_goes_above_the_base_batch(results, record_property):
    """The largest-batch rows: the probe has its own time cap (--max-batch-time), so it must get past the base."""
    rows = [d for d in results.rows() if d.get("max_batch_probe")]
    if not rows:
        pytest.skip(f"no row with the max_batch flag in {results.source}")
    probes = {f"{d['suite']['name']}/{d['suite']['label']}": d["max_batch_probe"] for d in rows}
    record_property("figure", "; ".join(f"{k}: {p['base']} -> {p['chosen']}" for k, p in probes.items()))
    stuck = {
        k: f"base {p['base']}, chosen {p['chosen']}, stopped: {p.get('stopped')}, tried "
        f"{[t['batch'] for t in p.get('tried', [])]}"
        for k, p in probes.items()
        if p["chosen"] <= p["base"]
    }
    assert not stuck, f"the probe did not go above the base batch: {stuck}"
