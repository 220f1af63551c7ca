"""Properties only a GPU run settles, read from stepwise results (conftest.py says which): each test is one risk
line of scripts/verify-gpu.sh's verify.md, and records its figure there."""

import pytest
from gpu_results import on_cuda

pytestmark = pytest.mark.gpu
CUMULATIVE = ("raschka", "karpathy")
MEMORY_FLAGS = ("checkpoint", "chunked_ce")


def test_the_flash_rows_run_flash_attention(results, record_property):
    """Both suites pin SDPA's flash kernel on a GPU: every row labelled flash must have run it (pass 1 runs karpathy,
    pass 2 raschka)."""
    rows = [d for suite in CUMULATIVE for d in results.rows(suite, "flash")]
    if not rows:
        pytest.skip(f"no flash row of {' or '.join(CUMULATIVE)} in {results.source}")
    cuda = [d for d in rows if on_cuda(d)]
    if not cuda:
        pytest.skip(f"the flash rows ran on {rows[0]['config'].get('device')}, not on a CUDA device")
    used = {d["suite"]["name"]: d["config"].get("sdpa_backend_used") for d in cuda}
    record_property("figure", "sdpa_backend_used: " + ", ".join(f"{k} {v}" for k, v in used.items()))
    assert all(v == "flash" for v in used.values()), f"a row labelled flash ran another kernel: {used}"


def test_compile_keeps_the_graphs_activations_in_its_peak_memory(results, record_property):
    """The compile row against the eager row before it in each cumulative suite: the graph's private pool holds the
    activations, so its peak cannot be far below the eager row's."""
    pairs = []
    for suite in CUMULATIVE:
        rows = {d["suite"]["index"]: d for d in results.rows(suite)}
        pairs += [(d, rows.get(d["suite"]["index"] - 1)) for d in results.rows(suite, "compile") if on_cuda(d)]
    pairs = [(c, e) for c, e in pairs if e is not None]
    if not pairs:
        pytest.skip(f"no compile row on a CUDA device beside its eager row in {results.source}")
    peaks = {
        c["suite"]["name"]: tuple((d["summary"]["memory"].get("peak_allocated_bytes") or 0) for d in (c, e))
        for c, e in pairs
    }
    record_property(
        "figure",
        "; ".join(
            f"{k}: peak allocated {c / 2**30:.2f} GiB with compile vs {e / 2**30:.2f} GiB eager"
            for k, (c, e) in peaks.items()
        ),
    )
    low = {k: v for k, v in peaks.items() if not (v[1] > 0 and v[0] > 0.5 * v[1])}
    assert not low, f"compile's peak must include the activations its graph pool holds: {low}"


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
        if t.get("profiler_loaded") is False:  # the node's limit (a kernel that refuses CUPTI), not the trace's fault
            pytest.skip(f"CUPTI could not be had for the {name} row, which still ran: {t.get('reason')}")
    for name, t in traces.items():
        assert t.get("status") == "ok", f"no trace for the {name} row: {t.get('reason')}"
    k_compile, k_eager = traces["compile"]["kernels_per_step"], traces["eager"]["kernels_per_step"]
    record_property("figure", f"kernels/step: compile {k_compile:.0f} vs eager {k_eager:.0f}")
    assert k_compile >= 0.5 * k_eager, (
        f"the compile row traced {k_compile:.0f} kernels per step against the eager "
        f"row's {k_eager:.0f}: graph kernels are missing from the trace"
    )


def test_nccl_data_parallel_runs_alone_before_anything_is_stacked_on_it(results, record_property):
    """One NCCL rank with no flag (eager): where the stacked row below fails, this row says whether NCCL itself ran,
    so the failure names the stack, not the all-reduce."""
    ranks = [d for d in results.docs if d.get("distributed") and not (d.get("config") or {}).get("flags")]
    if not ranks:
        pytest.skip(f"no data-parallel result without flags in {results.source}")
    d = ranks[0]
    if not on_cuda(d):
        pytest.skip(f"the data-parallel result ran on {d['config'].get('device')}, not on a CUDA device")
    record_property("figure", f"{d['distributed'].get('backend')}, eager, status {d['status']}")
    assert d["distributed"].get("backend") == "nccl"
    assert d["status"] == "ok", f"data parallel alone failed: {d.get('reason')}"


def test_nccl_all_reduce_is_captured_in_the_cuda_graph(results, record_property):
    ranks = [d for d in results.docs if d.get("distributed") and (d.get("config") or {}).get("flags")]
    if not ranks:
        pytest.skip(f"no data-parallel result with flags stacked on it in {results.source}")
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
    """The largest-batch rows: the probe must get past the base batch. A probe its time cap (--max-batch-time)
    stopped at the base found that batch under time, not under memory, and says nothing: it is left out, and the
    test skips when no other probe is left."""
    rows = [d for d in results.rows() if d.get("max_batch_probe")]
    if not rows:
        pytest.skip(f"no row with the max_batch flag in {results.source}")
    probes = {f"{d['suite']['name']}/{d['suite']['label']}": d["max_batch_probe"] for d in rows}
    timed = {k for k, p in probes.items() if p["chosen"] <= p["base"] and p.get("stopped")}
    if timed == set(probes):
        pytest.skip(f"every probe stopped on its time cap at the base batch: {[probes[k]['stopped'] for k in timed]}")
    probes = {k: p for k, p in probes.items() if k not in timed}
    record_property("figure", "; ".join(f"{k}: {p['base']} -> {p['chosen']}" for k, p in probes.items()))
    stuck = {
        k: f"base {p['base']}, chosen {p['chosen']}, stopped: {p.get('stopped')}, tried "
        f"{[t['batch'] for t in p.get('tried', [])]}"
        for k, p in probes.items()
        if p["chosen"] <= p["base"]
    }
    assert not stuck, f"the probe did not go above the base batch: {stuck}"


def gib(n: float | None) -> str:
    return "?" if n is None else f"{n / 2**30:.2f}"


@pytest.mark.parametrize("flag", MEMORY_FLAGS)
def test_a_memory_flag_lowers_the_activation_memory(results, record_property, flag):
    """The flag's row against the baseline of the same run (the same shape, in the same process): what it must lower
    is the activations (the peak inside forward and backward less weights, gradients and AdamW state); the whole peak
    may be the optimizer step's."""
    pairs = results.pairs({flag}, set(), same_run=True)
    if not pairs:
        pytest.skip(f"no --enable={flag} row beside a baseline of the same run in {results.source}")
    row, base = pairs[0]
    m0, m1 = base["summary"]["memory"], row["summary"]["memory"]
    p0, p1 = m0.get("peak_allocated_bytes"), m1.get("peak_allocated_bytes")
    t0, t1 = base["summary"]["tokens_per_s"], row["summary"]["tokens_per_s"]
    record_property(
        "figure",
        f"peak allocated {gib(p0)} -> {gib(p1)} GiB"
        + (f" (x{p1 / p0:.2f})" if p0 and p1 else "")
        + f"; activations {gib(m0.get('activation_bytes'))} -> {gib(m1.get('activation_bytes'))} GiB "
        f"(estimate {gib(m0.get('estimated_activation_bytes'))} -> {gib(m1.get('estimated_activation_bytes'))})"
        f"; {t0:,.0f} -> {t1:,.0f} tok/s (x{t1 / t0:.2f})",
    )
    a0, a1 = m0.get("activation_bytes"), m1.get("activation_bytes")
    assert a0 is not None and a1 is not None, f"a row without its activation memory: {a0}, {a1}"
    assert a1 < a0, f"{flag} did not lower the activation memory: {gib(a0)} -> {gib(a1)} GiB"


@pytest.mark.parametrize("flag", MEMORY_FLAGS)
def test_a_memory_flag_never_lowers_the_largest_batch(results, record_property, flag):
    """The largest batch max_batch's probe finds with the flag against max_batch alone, each beside the batch the
    activation estimate predicts. A probe that stopped on its time cap (--max-batch-time) found a batch under time,
    not under memory: a smaller batch from it says nothing of the flag, and the test skips, saying so."""
    pairs = results.pairs({"max_batch", flag}, {"max_batch"}, same_run=False)
    if not pairs:
        pytest.skip(f"no --enable=max_batch,{flag} row beside --enable=max_batch alone in {results.source}")
    row, alone = pairs[0]
    p0, p1 = alone["max_batch_probe"] or {}, row["max_batch_probe"] or {}
    c0, c1 = p0.get("chosen"), p1.get("chosen")
    e0, e1 = ((p.get("estimate") or {}).get("largest_batch", "?") for p in (p0, p1))
    t0, t1 = alone["summary"]["tokens_per_s"], row["summary"]["tokens_per_s"]
    stopped = [f"{name}: {p['stopped']}" for name, p in (("alone", p0), (flag, p1)) if p.get("stopped")]
    record_property(
        "figure",
        f"largest batch {c0} -> {c1} (estimate {e0} -> {e1}, limit {p1.get('limit')}); "
        f"{t0:,.0f} -> {t1:,.0f} tok/s (x{t1 / t0:.2f}) at it"
        + (f"; probe stopped ({'; '.join(stopped)})" if stopped else ""),
    )
    assert c0 is not None and c1 is not None, f"a probe without its chosen batch: {c0}, {c1}"
    if c1 < c0 and p1.get("stopped"):
        pytest.skip(f"the probe with {flag} stopped on its time cap at batch {c1} ({p1['stopped']}), not on memory")
    assert c1 >= c0, f"{flag} lowered the largest batch the probe found: {c0} -> {c1}"


def same_configuration(d: dict) -> tuple:
    """What a row's counts depend on: its model, shape and flags (the rows of one configuration are Python's twins)."""
    c = d["config"]
    return (c.get("preset"), c.get("batch_size"), c.get("seq_len"), tuple(sorted(c.get("flags", []))))


def per_step(d: dict) -> dict:
    return d["op_counts"]["per_step"]


def test_the_cpp_step_does_no_more_work_than_python_eager_on_the_gpu(results, record_property):
    """Issue 42 on a GPU: the engine's step dispatches no ATen operator more often, allocates no more CUDA bytes, runs
    no more kernels and makes no more launches than Python eager's step of the same configuration (e2e.op_parity
    holds the first two on a CPU)."""
    if results.gpu_side_uncounted():
        pytest.skip(f"the GPU's kernels and calls were not counted, the rows still ran: {results.gpu_side_uncounted()}")
    cpp = {same_configuration(d): d for d in results.counted("libtorch")}
    pairs = [(cpp[same_configuration(d)], d) for d in results.counted("python-eager") if same_configuration(d) in cpp]
    if not pairs:
        pytest.skip(f"no C++ row beside a Python eager row, both counted (--count-ops) on a GPU, in {results.source}")
    figures, more = [], {}
    for c, py in pairs:
        a, b = per_step(c), per_step(py)
        totals = {
            "ATen ops": (a["aten_op_total"], b["aten_op_total"]),
            "cuda bytes": (a["allocations"]["cuda"]["bytes"], b["allocations"]["cuda"]["bytes"]),
            "kernels, copies, sets": (a["device_activity_total"], b["device_activity_total"]),
            "launches": (a.get("launch_total"), b.get("launch_total")),
        }
        figures.append(f"{c['suite']['label']}: " + ", ".join(f"{k} {x:,} vs {y:,}" for k, (x, y) in totals.items()))
        over = {k: f"{x:,} > {y:,}" for k, (x, y) in totals.items() if x > y}
        ops = a["aten_ops"]
        over |= {op: f"{n} > {b['aten_ops'].get(op, 0)}" for op, n in ops.items() if n > b["aten_ops"].get(op, 0)}
        if over:
            more[c["suite"]["label"]] = over
    record_property("figure", "C++ vs Python eager per step: " + "; ".join(figures))
    assert not more, f"the C++ step does more than Python eager's: {more}"


def test_a_cuda_graph_step_is_one_launch_of_its_graph(results, record_property):
    """The compile row's counted step replays its forward and backward as one cudaGraphLaunch, its launches far fewer
    than the eager row's of the same flags, and its kernels still counted inside the graph; beside it torch.compile's
    kernels and launches where its row was counted."""
    if results.gpu_side_uncounted():
        pytest.skip(f"the GPU's kernels and calls were not counted, the rows still ran: {results.gpu_side_uncounted()}")
    graphs = [d for d in results.counted("libtorch") if "compile" in d["config"].get("flags", [])]
    if not graphs:
        pytest.skip(f"no compile row counted (--count-ops) on a GPU in {results.source}")

    def without_compile(d: dict) -> tuple:
        preset, batch, seq, flags = same_configuration(d)
        return preset, batch, seq, tuple(f for f in flags if f != "compile")

    eager = {same_configuration(d): d for d in results.counted("libtorch") if "compile" not in d["config"]["flags"]}
    compiled = {without_compile(d): d for d in results.counted("python-compile")}
    figures, wrong = [], {}
    for g in graphs:
        s = per_step(g)
        graph_launches = (s.get("runtime_calls") or {}).get("cudaGraphLaunch", 0)
        figure = f"graph: {graph_launches} graph launch(es), {s['launch_total']:,} launches, "
        figure += f"{s['device_activity_total']:,} kernels, copies and sets"
        problems = [] if graph_launches == 1 else [f"{graph_launches} cudaGraphLaunch calls a step, not 1"]
        e = eager.get(without_compile(g))
        if e is not None:
            es = per_step(e)
            figure += f"; eager: {es['launch_total']:,} launches, {es['device_activity_total']:,} kernels"
            if s["launch_total"] >= es["launch_total"]:
                problems.append(f"{s['launch_total']} launches a step, no fewer than eager's {es['launch_total']}")
            if s["device_activity_total"] < 0.5 * es["device_activity_total"]:
                problems.append("the graph's kernels are missing from the counts")
        t = compiled.get(without_compile(g))
        if t is not None:
            ts = per_step(t)
            figure += f"; torch.compile: {ts['launch_total']:,} launches, {ts['device_activity_total']:,} kernels"
        figures.append(figure)
        if problems:
            wrong[g["suite"]["label"]] = problems
    record_property("figure", "; ".join(figures))
    assert not wrong, f"a CUDA graph step is not one launch of its graph: {wrong}"


def test_fp8_rowwise_runs_its_linears_through_the_rowwise_kernel(results, record_property):
    """FP8's rowwise recipe with every linear in FP8 (no 124M layer passes the small-GEMM filter): its forward GEMMs
    take _scaled_mm's rowwise kernel on a GPU (model/fp8_linear.cpp, row scales with fast accumulation), a path no
    other row reaches. The row must have run with its layers in FP8."""
    rows = [
        d
        for d in results.docs
        if d.get("implementation", "libtorch") == "libtorch"
        and (d.get("config") or {}).get("fp8_scaling") == "rowwise"
        and "fp8" in ((d.get("config") or {}).get("flags") or [])
    ]
    if not rows:
        pytest.skip(f"no row with fp8 at --fp8-scaling=rowwise in {results.source}")
    d = rows[0]
    if d.get("status") == "skipped" or not on_cuda(d):
        pytest.skip(f"the rowwise fp8 row did not run on a CUDA device: {d.get('reason') or d['config'].get('device')}")
    layers = d["config"].get("fp8_layers") or []
    record_property("figure", f"{d['config'].get('preset')}: {len(layers)} layers in FP8 (rowwise), {d['status']}")
    assert d["status"] == "ok", f"the rowwise fp8 row failed: {d.get('reason')}"
    assert layers, "no linear ran in FP8: the rowwise kernel was never reached"
