"""The C++ step does no more work than PyTorch eager's (issue 42): for every CPU-runnable configuration of the
one_at_a_time suite and the speedrun suites, at the tiny preset, the engine's step calls no ATen operator more often
and allocates no more bytes per device than the Python eager step of the same configuration, as ./ablate --count-ops
counts them (PyTorch's profiler, one configuration on both sides, bench/trace/op_counts.h) — up to
tests/e2e/op_parity_allowed.toml, whose every entry says why the C++ side needs it and must still be needed. Both
sides count the same ops and bytes at every counted step (deterministic, so it holds on any machine)."""

import collections
import pathlib
import tomllib

import pytest
from runs import ROOT, ablate, results

ALLOWED = pathlib.Path(__file__).with_name("op_parity_allowed.toml")
# The cheapest honest run: one warm-up step, one measured, then --count-ops' counted steps, at the tiny preset on
# (2, 32) batches (the same ops as its (4, 64), fewer FLOPs); max_batch's probe capped at 8 so its row stays small.
CHEAP = [
    "--preset=tiny",
    "--device=cpu",
    "--batch-size=2",
    "--seq-len=32",
    "--warmup=1",
    "--min-steps=1",
    "--max-steps=1",
    "--max-time=600",
    "--no-progress",
    "--implementations=libtorch,python-eager",
    "--count-ops",
]
# Each suite with its own flags' options: max_batch's bound only where a row runs max_batch (./ablate refuses it
# elsewhere).
SUITES = {"one_at_a_time": ["--max-batch-limit=8"], "speedrun": [], "speedrun_one_at_a_time": []}
# The flags the Python model has no twin of (bench/python/python_step.cpp's python_cannot_run): their rows have no
# eager step to hold the engine's to.
NO_PYTHON_TWIN = {"checkpoint", "chunked_ce", "fp8"}


def configuration(doc):
    """A configuration by the flags in effect ("baseline" for none): the same one in two suites is one entry."""
    return "+".join(doc["config"]["flags"]) or "baseline"


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """{configuration: (engine's per_step, eager's per_step)} over the suites, and the configurations left out."""
    pairs, left_out = {}, set()
    for suite, options in SUITES.items():
        out = tmp_path_factory.mktemp(suite)
        run = ablate(f"--suite={suite}", f"--out={out}", *CHEAP, *options, timeout=1800)
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
        rows = collections.defaultdict(dict)
        for doc in results(out):
            rows[doc["name"].split(".")[0]][doc["implementation"]] = doc
        for pair in rows.values():
            engine, eager = pair["libtorch"], pair.get("python-eager")
            if engine["status"] == "skipped":
                continue  # not runnable here (a CUDA flag, zero1 without ranks): --dry-run says why
            assert engine["status"] == "ok", engine["reason"]
            if eager["status"] == "skipped":
                assert set(engine["config"]["flags"]) & NO_PYTHON_TWIN, eager["reason"]
                left_out.add(configuration(engine))
                continue
            assert eager["status"] == "ok", eager["reason"]
            for doc in (engine, eager):
                counts = doc["op_counts"]
                assert counts["status"] == "ok", counts
                assert counts["same_each_step"], (doc["name"], counts["varying"])
            pairs[configuration(engine)] = (engine["op_counts"]["per_step"], eager["op_counts"]["per_step"])
    return pairs, left_out


def excess(engine, eager):
    """What the engine's step does beyond eager's: {aten op or "<device> bytes": how many more calls or bytes}."""
    more = {}
    for op, n in engine["aten_ops"].items():
        if n > eager["aten_ops"].get(op, 0):
            more[op] = n - eager["aten_ops"].get(op, 0)
    for device, a in engine["allocations"].items():
        extra = a["bytes"] - eager["allocations"].get(device, {"bytes": 0})["bytes"]
        if extra > 0:
            more[f"{device} bytes"] = extra
    return more


def allowed_entries(text=None):
    entries = tomllib.loads(ALLOWED.read_text() if text is None else text)["allowed"]
    for e in entries:
        assert set(e) == {"when", "what", "more", "why"}, e
        assert e["why"].strip() and e["more"] > 0, e
    return entries


def applies(entry, config):
    return entry["when"] == "any" or entry["when"] in config.split("+")


def test_every_cpu_configuration_with_a_python_twin_is_counted(counted):
    pairs, left_out = counted
    assert "baseline" in pairs and "fused_adamw" in pairs and "native_layers" in pairs and "muon" in pairs
    assert left_out == {"checkpoint", "chunked_ce"}, left_out  # the CPU flags without a Python twin


def test_the_cpp_step_does_no_more_work_than_python_eager_beyond_the_allowed(counted):
    pairs, _ = counted
    beyond = beyond_allowed(pairs, allowed_entries())
    assert not beyond, f"the C++ step does more than Python eager (fix it, or allow it in {ALLOWED.name}): {beyond}"


def test_every_allowed_difference_is_still_there_and_no_larger_than_needed(counted):
    pairs, _ = counted
    for e in allowed_entries():
        seen = [excess(engine, eager).get(e["what"], 0) for c, (engine, eager) in pairs.items() if applies(e, c)]
        assert seen, f"{ALLOWED.name}: no counted configuration has {e['when']!r}: {e}"
        assert max(seen) == e["more"], f"{ALLOWED.name}: {e['what']} under {e['when']!r} is {max(seen)} now: {e}"


def beyond_allowed(pairs, entries):
    """{configuration: {what: how far beyond its allowance}} for every difference the entries do not cover."""
    beyond = {}
    for config, (engine, eager) in sorted(pairs.items()):
        for what, n in excess(engine, eager).items():
            allowance = max((e["more"] for e in entries if e["what"] == what and applies(e, config)), default=0)
            if n > allowance:
                beyond.setdefault(config, {})[what] = f"{n} more per step (allowed {allowance})"
    return beyond


def test_the_comparison_catches_an_extra_op_or_bytes_and_honours_only_matching_entries():
    step = {"aten_ops": {"aten::mm": 4}, "allocations": {"cpu": {"count": 2, "bytes": 64}}}
    extra = {"aten_ops": {"aten::mm": 4, "aten::clone": 1}, "allocations": {"cpu": {"count": 3, "bytes": 68}}}
    assert excess(step, step) == {} and excess(step, extra) == {}  # doing less than eager is never a finding
    assert excess(extra, step) == {"aten::clone": 1, "cpu bytes": 4}
    pairs = {"baseline": (extra, step), "muon": (extra, step)}
    entries = allowed_entries(
        '[[allowed]]\nwhen = "muon"\nwhat = "aten::clone"\nmore = 1\nwhy = "a test"\n'
        '[[allowed]]\nwhen = "any"\nwhat = "cpu bytes"\nmore = 4\nwhy = "a test"\n'
    )
    assert beyond_allowed(pairs, entries) == {"baseline": {"aten::clone": "1 more per step (allowed 0)"}}


def test_the_allowed_list_is_where_the_docs_say():
    assert ALLOWED.relative_to(ROOT).as_posix() in (ROOT / "docs" / "python-rows.md").read_text()
