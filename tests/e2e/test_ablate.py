"""End to end: the built ./ablate binary on the tiny preset; its JSON against results/schema.json; every bad input;
listings, dry runs, the environment it records and the host allocator's own process. Interruptions are in
test_interrupts.py, the caps on memory and time in test_limits.py."""

import json
import os
import pathlib

import pytest
from runs import FAST, ROOT, USAGE, ablate, results


def test_single_configuration_with_baseline_writes_schema_valid_results(tmp_path):
    run = ablate("--enable=bf16,flash", "--vs-baseline", "--bf16-mode=autocast", f"--out={tmp_path}", *FAST)
    assert run.returncode == 0, run.stderr
    baseline, config = results(tmp_path)
    assert baseline["config"]["flags"] == []
    assert config["config"]["flags"] == ["bf16", "flash"]
    assert config["config"]["bf16_mode"] == "autocast"
    assert config["config"]["sdpa_backend"] == "auto"
    for doc in (baseline, config):
        assert doc["schema_version"] == 2 and doc["status"] == "ok"
        assert doc["env"]["torch_version"].startswith("2.")
        assert doc["summary"]["tokens_per_s"] > 0
        assert doc["summary"]["step_ms"]["median"] > 0
        assert len(doc["steps"]) == 3 and all(s["ms"] > 0 and s["loss"] > 0 for s in doc["steps"])
        assert len(doc["warmup"]) == 1
        assert doc["summary"]["memory"]["kind"] == "process_rss"
        assert doc["summary"]["mfu"]["value"] is None and doc["summary"]["mfu"]["reason"]
        assert [f["name"] for f in doc["flags_info"]][:2] == ["dynamic_mask", "tf32"]
        phases = doc["phases"]  # beside the whole step, each measured step split where it runs its phases
        assert [p["name"] for p in phases["phases"]] == ["batch", "forward", "backward", "optimizer"]
        assert all(len(p["ms"]) == 3 for p in phases["phases"])
        assert phases["step_median_ms"] == doc["summary"]["step_ms"]["median"] and phases["clock"] == "steady_clock"
    assert baseline["summary"]["loss"]["check"]["status"] == "baseline"
    # Four shared steps cannot tell a broken flag from a working one: the check says so instead of "ok".
    assert config["summary"]["loss"]["check"]["status"] == "too short to judge"
    assert "shared steps; a verdict needs 8" in config["summary"]["loss"]["check"]["reason"]
    assert "× baseline" in run.stdout and "bf16+flash" in run.stdout  # the report's table (./report show)


def test_out_json_file_writes_exactly_that_file(tmp_path):
    target = tmp_path / "one.json"
    run = ablate("--enable=native_layers", f"--out={target}", *FAST)
    assert run.returncode == 0, run.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["one.json"]
    (doc,) = results(tmp_path)
    assert doc["config"]["flags"] == ["native_layers"]


def test_cuda_only_flags_are_recorded_as_skipped_on_the_cpu(tmp_path):
    run = ablate("--enable=tf32", f"--out={tmp_path / 'a'}", *FAST)
    assert run.returncode == 0, run.stderr
    (doc,) = results(tmp_path / "a")
    assert doc["status"] == "skipped"
    assert "requires a CUDA device" in doc["reason"]
    assert doc["summary"] is None

    run = ablate("--enable=tf32,bf16", f"--out={tmp_path / 'b'}", *FAST)
    assert run.returncode == 0, run.stderr
    (doc,) = results(tmp_path / "b")
    assert doc["status"] == "ok"
    assert doc["config"]["flags"] == ["bf16"]
    assert doc["config"]["flags_requested"] == ["tf32", "bf16"]
    assert doc["config"]["flags_skipped"][0]["flag"] == "tf32"


def test_listings_and_describe():
    flags = ablate("--list-flags", "--json")
    assert flags.returncode == 0
    assert [f["name"] for f in json.loads(flags.stdout)] == [
        "dynamic_mask",
        "tf32",
        "fused_adamw",
        "pinned_memory",
        "bf16",
        "native_layers",
        "flash",
        "compile",
        "vocab_padding",
        "max_batch",
        "checkpoint",
        "chunked_ce",
        "host_allocator",
        "fp8",
        "zero1",
        "rotary",
        "trapezoid",
        "muon",
        "relu2",
        "zero_init_proj",
        "qk_norm",
        "logit_softcap",
    ]
    assert {f["name"] for f in json.loads(flags.stdout) if f["math"] == "learning"} == {
        "rotary",
        "trapezoid",
        "muon",
        "relu2",
        "zero_init_proj",
        "qk_norm",
        "logit_softcap",
    }
    presets = json.loads(ablate("--list-presets", "--json").stdout)
    assert {p["name"]: p["parameters"] for p in presets}["gpt2-124m"] == 163_009_536
    described = json.loads(ablate("--describe", "--preset=gpt2-124m", "--json").stdout)
    assert described["parameters"] == 163_009_536
    assert described["parameters_vocab_padded"] == 163_081_728
    assert ablate("--help").returncode == 0
    assert "raschka" in ablate("--list-suites").stdout


def llmc_file(path, magic, declared, tokens):
    """An llm.c token file: 256 int32 header (magic, version 1, declared count), then uint16 tokens."""
    header = [magic, 1, declared] + [0] * 253
    path.write_bytes(b"".join(x.to_bytes(4, "little", signed=True) for x in header) + b"\x01\x00" * tokens)
    return path


@pytest.fixture
def bad_files(tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    a_file = tmp_path / "not_a_dir"
    a_file.write_text("x")
    return {
        "empty": empty,
        "truncated": llmc_file(tmp_path / "truncated.bin", 20240520, 1000, 10),
        "magic": llmc_file(tmp_path / "magic.bin", 1234, 1000, 1000),
        "file": a_file,
        "dir": tmp_path,
        "gpus": gpu_count(),
    }


def gpu_count():
    import torch

    return torch.cuda.device_count()


BAD_INPUT = [
    (["--enable=fp4"], "unknown flag 'fp4'"),
    (["--enable=bf16,bf16"], "named twice"),
    (["--enable=bf16", "--disable=bf16"], "both enabled and disabled"),
    (["--preset=gpt5"], "gpt2-124m"),
    (["--bf16-mode=fp16"], "autocast"),
    (["--turbo"], "--turbo"),
    (["--seq-len=1000"], "longer than preset tiny's context length 128"),
    (["--suite=speedrun_two"], "unknown suite 'speedrun_two'"),
    (["--suite=raschka", "--enable=bf16"], "exclude each other"),
    (["--enable=bf16,,flash"], "empty flag name in 'bf16,,flash'"),
    (["--steps=0"], "--steps must be a positive integer (got '0')"),
    (["--max-time=-1"], "--max-time must be a positive number"),
    (["--implementations=python-jit"], "unknown implementation 'python-jit'"),
    (["--resume={dir}/nowhere"], "no such directory"),
    # One past the last GPU: "no CUDA device" here, "only N CUDA device(s) present" on an N-GPU node.
    (["--device=cuda:{gpus}"], "CUDA device"),
    (["--data={dir}/missing.bin"], "does not exist"),
    (["--data={empty}"], "is empty"),
    (["--data={truncated}"], "header says 1000 tokens, file holds 10"),
    (["--data={magic}", "--data-format=llmc"], "wrong magic 1234"),
    (["--out={file}/results"], "cannot be created"),
]


@pytest.mark.parametrize("args,message", BAD_INPUT, ids=[m for _, m in BAD_INPUT])
def test_bad_input_exits_2_with_a_clear_message(args, message, bad_files):
    args = [a.format(**bad_files) for a in args]
    base = [a for a in FAST if not any(a.startswith(b.split("=")[0]) for b in args)]
    run = ablate(*base, *args)
    assert run.returncode == USAGE, (run.stdout, run.stderr)
    assert message in run.stderr
    assert "Traceback" not in run.stderr and "terminate called" not in run.stderr


def test_a_token_file_is_read_and_recorded(tmp_path):
    import numpy as np

    tokens = np.random.default_rng(0).integers(0, 50257, 20000, dtype=np.uint16)
    path = tmp_path / "train.bin"
    tokens.tofile(path)
    run = ablate(f"--data={path}", f"--out={tmp_path / 'out'}", *FAST)
    assert run.returncode == 0, run.stderr
    (doc,) = results(tmp_path / "out")
    data = doc["config"]["data"]
    assert {k: data[k] for k in ("source", "format", "path")} == {
        "source": "file",
        "format": "nanogpt",
        "path": str(path),
    }
    assert data["provenance"]["files"][0]["tokens"] == 20000  # the rest of provenance: tests/e2e/test_data.py


def test_non_finite_loss_fails_the_configuration_with_its_steps(tmp_path):
    run = ablate(
        "--lr=1e30",
        f"--out={tmp_path}",
        *FAST[:1],
        "--device=cpu",
        "--warmup=0",
        "--steps=6",
        "--max-steps=6",
        "--no-progress",
    )
    assert run.returncode == 1
    (doc,) = results(tmp_path)
    assert doc["status"] == "failed"
    assert "loss is" in doc["reason"]


def write_suite(path, flags):
    path.write_text(json.dumps({"name": "mixed", "description": "test", "kind": "one_at_a_time", "flags": flags}))
    return path


def test_a_failing_configuration_is_recorded_and_the_suite_goes_on(tmp_path):
    # Two windows of 16 tokens hold the base batch of 2, but not the batch max_batch raises it to: that step
    # fails for real in its measured run; the steps around it run.
    import numpy as np

    data = tmp_path / "short.bin"
    np.random.default_rng(0).integers(0, 50257, 40, dtype=np.uint16).tofile(data)
    suite = write_suite(tmp_path / "mixed.json", ["max_batch", "native_layers"])
    run = ablate(
        f"--suite={suite}",
        f"--data={data}",
        "--batch-size=2",
        "--seq-len=16",
        "--max-batch-limit=8",
        f"--out={tmp_path / 'out'}",
        *FAST,
    )
    assert run.returncode == 1, (run.stdout, run.stderr)
    docs = results(tmp_path / "out")
    status = {d["suite"]["label"]: d["status"] for d in docs}
    assert status == {"baseline": "ok", "native_layers": "ok", "max_batch": "failed"}
    assert "fewer than one batch" in [d for d in docs if d["status"] == "failed"][0]["reason"]
    assert "1 failed" in run.stdout


def test_a_pinned_sdpa_backend_without_a_kernel_is_skipped_with_the_reason(tmp_path):
    # On a CPU no "efficient" SDPA kernel exists: the flash step says so instead of failing inside SDPA.
    suite = write_suite(tmp_path / "mixed.json", ["flash", "native_layers"])
    run = ablate(f"--suite={suite}", "--sdpa-backend=efficient", f"--out={tmp_path / 'out'}", *FAST)
    assert run.returncode == 0, (run.stdout, run.stderr)
    docs = results(tmp_path / "out")
    status = {d["suite"]["label"]: d["status"] for d in docs}
    assert status == {"baseline": "ok", "native_layers": "ok", "flash": "skipped"}
    assert [d for d in docs if d["status"] == "skipped"][0]["reason"] == "--sdpa-backend=efficient is CUDA-only"


def test_a_dry_run_plans_the_suite_and_runs_nothing(tmp_path):
    """--dry-run: the configurations a suite would run, which are skipped and why, and who runs each — nothing
    measured, nothing written (./run_all.sh costs its plan from this)."""
    out = tmp_path / "out"
    ends = ["--implementations=libtorch,python-eager", "--implementations-at=ends"]
    run = ablate("--suite=raschka", "--dry-run", "--json", *ends, f"--out={out}", *FAST)
    assert run.returncode == 0, run.stderr
    plan = json.loads(run.stdout)
    rows = plan["configurations"]
    assert plan["suite"] == "raschka" and plan["preset"] == "tiny" and plan["timing"]["max_steps"] == 3
    assert [r["index"] for r in rows] == list(range(11))
    assert rows[2]["skip_reason"] == "tf32 requires a CUDA device (tensor cores)" and rows[1]["skip_reason"] is None
    assert rows[5]["precision"] == "bf16" and rows[10]["max_batch"] and rows[10]["max_batch_limit"] == 16
    assert [r["implementations"] for r in rows if len(r["implementations"]) > 1] == [["libtorch", "python-eager"]] * 2
    assert rows[0]["implementations"] == rows[10]["implementations"], "the Python rows at both ends only"
    assert not out.exists(), "a dry run writes nothing"
    table = ablate("--suite=raschka", "--dry-run", *FAST)
    assert table.returncode == 0 and "(dry run: nothing runs, nothing is written)" in table.stdout
    assert "skipped: tf32 requires a CUDA device" in table.stdout and "tok/s" not in table.stdout


def test_the_readme_flag_table_is_the_flag_table():
    table = json.loads(ablate("--list-flags", "--json").stdout)
    readme = (ROOT / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `") and line.count("|") == 5]
    documented = {}
    for row in rows:
        name, on, off, applies = [c.strip() for c in row.strip("|").split("|")]
        documented[name.strip("`")] = (on, off, applies)
    assert documented == {f["name"]: (f["summary"], f["reference"], f["applies"]) for f in table}


def test_trace_on_the_cpu_records_that_it_is_unavailable(tmp_path):
    run = ablate("--enable=flash", "--trace", f"--out={tmp_path}", *FAST)
    assert run.returncode == 0, run.stderr
    (doc,) = results(tmp_path)
    assert doc["trace"] == {"status": "unavailable", "reason": "trace unavailable: no GPU"}


def test_the_environment_says_whether_this_process_runs_bf16_natively(tmp_path):
    """The hardware's flags, ATen's dispatch level and the ISA caps the process obeys: under ATen's and oneDNN's AVX2
    caps bf16 is emulated whatever the CPU has, and the result says which cap made it so."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
    }
    capped = {**clean, "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    envs = {}
    for name, environment in (("clean", clean), ("capped", capped)):
        run = ablate(
            "--preset=tiny",
            "--device=cpu",
            "--warmup=1",
            "--steps=2",
            "--max-steps=2",
            "--no-progress",
            f"--out={tmp_path / name}.json",
            env=environment,
        )
        assert run.returncode == 0, run.stderr
        envs[name] = json.loads((tmp_path / f"{name}.json").read_text())["env"]
    cpuinfo = pathlib.Path("/proc/cpuinfo").read_text()
    hardware = "avx512_bf16" in cpuinfo or "amx_bf16" in cpuinfo
    avx512 = "avx512f" in cpuinfo
    clean, capped = envs["clean"], envs["capped"]
    assert clean["cpu_isa_caps"] == {}
    assert clean["cpu_capability"].startswith("AVX512") == avx512
    assert clean["cpu_bf16_native"] == (hardware and avx512)
    assert (clean["cpu_bf16_emulated_because"] is None) == clean["cpu_bf16_native"]
    assert capped["cpu_isa_caps"] == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert capped["cpu_capability"] == "AVX2"
    assert capped["cpu_bf16_native"] is False
    assert ("ATEN_CPU_CAPABILITY" if hardware else "no avx512_bf16") in capped["cpu_bf16_emulated_because"]


# Enough steps at a rate that moves the loss for the loss check to give a verdict.
JUDGED = [
    "--preset=tiny",
    "--device=cpu",
    "--warmup=1",
    "--steps=20",
    "--max-steps=20",
    "--max-time=600",
    "--lr=3e-3",
    "--no-progress",
]


@pytest.mark.parametrize("mode", ["glibc-tunables", "jemalloc", "tcmalloc"])
def test_a_host_allocator_row_runs_in_its_own_process_under_its_mode(tmp_path, mode):
    """An allocator is chosen when a process starts: the row runs in a child of ablate started under it, its Python
    row inherits it, the baseline stays on the C library's malloc, and the row computes the same function."""
    python = ["--implementations=libtorch,python-eager"] if mode == "tcmalloc" else []
    run = ablate(
        "--enable=host_allocator",
        f"--host-allocator-mode={mode}",
        "--vs-baseline",
        *python,
        f"--out={tmp_path}",
        *JUDGED,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    docs = {p.name: json.loads(p.read_text()) for p in sorted(tmp_path.rglob("*.json"))}
    results(tmp_path)  # schema-valid
    baseline, row = docs["00_baseline.json"], docs["01_host_allocator.json"]
    assert baseline["env"]["host_allocator"]["mode"] == "off" and baseline["config"]["host_allocator_mode"] is None
    if row["status"] == "skipped":  # its library is not installed here: said, never faked
        assert "scripts/setup.sh installs it" in row["reason"], row["reason"]
        return
    assert row["status"] == "ok" and row["run_id"] == baseline["run_id"]
    assert row["config"]["host_allocator_mode"] == mode
    assert row["env"]["host_allocator"]["mode"] == mode, row["env"]["host_allocator"]
    check = row["summary"]["loss"]["check"]
    assert check["status"] == "ok" and check["class"] == "exact", "checked against the baseline its parent measured"
    shared = min(len(row["steps"]), len(baseline["steps"]))  # a loaded CPU may stop one on its time cap sooner
    assert shared >= 8 and [s["loss"] for s in row["steps"]][:shared] == [s["loss"] for s in baseline["steps"]][:shared]
    assert f"in its own process under host allocator {mode}" in run.stdout
    assert "host_allocator" in run.stdout.split("× baseline")[1], "the parent's table shows the child's row"
    if python:
        assert docs["01_host_allocator.python-eager.json"]["env"]["host_allocator"]["mode"] == mode
        assert docs["00_baseline.python-eager.json"]["env"]["host_allocator"]["mode"] == "off"
