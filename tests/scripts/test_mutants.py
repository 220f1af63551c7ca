"""scripts/dev/mutants.py and tests/mutants/mutants.toml: the list is well formed and current, every Python mutant is
killed by the tests it names, and the script tells a killed mutant from a surviving one, a stale one and bad usage.
(The C++ mutants need a build of a scratch copy: they run on demand, `scripts/dev/mutants.py --kind cpp`, and their last
outcome is tests/mutants/last-cpp-run.json.)"""

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "dev" / "mutants.py"
PYTHON = os.environ.get("STEPWISE_PYTHON") or sys.executable

_spec = importlib.util.spec_from_file_location("mutants", SCRIPT)
mutants = importlib.util.module_from_spec(_spec)
sys.modules["mutants"] = mutants  # its dataclasses look their module up while the file runs
_spec.loader.exec_module(mutants)

LISTED = mutants.load_mutants(mutants.LIST)
# The mutants a mutation audit found surviving, and the C++ ones whose tests exist to catch them: they must stay listed.
REQUIRED = {
    "gate-threshold-x1.5",
    "gate-p-below-alpha-dropped",
    "gate-interval-excluding-1-dropped",
    "gate-interval-95-to-50",
    "gate-minimum-samples-dropped",
    "python-layernorm-eps-1e-6",
    "cpp-layernorm-eps-1e-6",
    "cpp-layernorm-eps-1e-2",
    "cpp-native-gelu-exact",
    "cpp-median-noise-z-1",
    "cpp-sampler-no-reshuffle",
    "target-verdict-gehan-only-when-both-missed",
    "budget-search-takes-not-judged-as-a-pass",
}


def run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


# --- the list --------------------------------------------------------------------------------------------------


def test_the_list_is_well_formed_and_current():
    assert REQUIRED <= {m.id for m in LISTED}
    assert {m.kind for m in LISTED} == set(mutants.KINDS)
    for m in LISTED:
        # Its file exists and its original text occurs exactly once, so the mutant changes one known place.
        assert mutants.stale_reason(m, ROOT) is None, f"{m.id}: {mutants.stale_reason(m, ROOT)}"
        assert m.why.strip()
        for test in m.tests:
            if m.kind == "python":
                path, _, name = test.partition("::")
                name = name.split("[")[0]  # a parametrized case: its function (the baseline run checks the case)
                assert (ROOT / path).is_file(), f"{m.id}: no test file {path}"
                if name:
                    assert re.search(rf"^def {re.escape(name)}\(", (ROOT / path).read_text(), re.M), (
                        f"{m.id}: no test {name} in {path}"
                    )
            else:
                re.compile(test)  # a ctest -R regular expression


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"kind": "ruby"}, "kind 'ruby' is not one of python, cpp"),
        ({"tests": []}, "tests must be a non-empty list"),
        ({"replacement": "x = 1"}, "the replacement equals the original"),
        ({"extra": 1}, "unknown keys extra"),
    ],
)
def test_a_malformed_list_is_refused_with_the_valid_choices(tmp_path, entry, message):
    base = {
        "id": "m",
        "kind": "python",
        "file": "scripts/dev/mutants.py",
        "original": "x = 1",
        "replacement": "x = 2",
        "tests": ["tests/scripts/test_mutants.py"],
        "why": "w",
    }
    (tmp_path / "list.toml").write_text(_toml([{**base, **entry}]))
    with pytest.raises(mutants.MutantError, match=re.escape(message)):
        mutants.load_mutants(tmp_path / "list.toml")


def _toml(entries: list[dict]) -> str:
    def value(v):
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)  # a JSON string or number is a TOML basic string or number

    return "\n".join("[[mutant]]\n" + "\n".join(f"{k} = {value(v)}" for k, v in e.items()) + "\n" for e in entries)


# --- the script ------------------------------------------------------------------------------------------------


def test_every_python_mutant_is_killed(tmp_path):
    out = tmp_path / "mutants.json"
    proc = run("--kind", "python", "--json-out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    python = [m.id for m in LISTED if m.kind == "python"]
    assert [m["id"] for m in doc["mutants"]] == python
    survivors = [f"{m['id']}: {m['detail']}" for m in doc["mutants"] if m["status"] != "killed"]
    assert not survivors, "\n".join(survivors)
    assert doc["summary"] == {"killed": len(python)} and doc["exit_code"] == 0


def _one(tmp_path, **fields) -> Path:
    entry = {
        "id": "probe",
        "kind": "python",
        "file": "reports/stepwise_report/gate/gate.py",
        "tests": ["tests/reports/test_gate.py::test_identical_samples_are_same"],
        "why": "probe",
        **fields,
    }
    path = tmp_path / "list.toml"
    path.write_text(_toml([entry]))
    return path


def test_a_mutant_no_test_catches_survives_and_fails_the_run(tmp_path):
    # A change to a comment: the named test passes with it, so the mutant survives and the run exits 1.
    listed = _one(tmp_path, original="# --- verdicts ---", replacement="# --- verdicts (mutated) ---")
    proc = run("--mutants", str(listed), "--json-out", str(tmp_path / "o.json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^  SURVIVED  probe ", proc.stdout, re.M)
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["mutants"][0]["status"] == "survived" and doc["summary"] == {"survived": 1}
    # The checkout itself is never touched: the mutant lived in a scratch copy.
    assert "(mutated)" not in (ROOT / "reports" / "stepwise_report" / "gate" / "gate.py").read_text()


def test_a_stale_mutant_is_an_error_naming_it(tmp_path):
    listed = _one(tmp_path, original="this text is in no file", replacement="x")
    proc = run("--mutants", str(listed))
    assert proc.returncode == 3
    assert "stale mutant probe: its original text occurs 0 times in reports/stepwise_report/gate/gate.py" in proc.stderr


def test_tests_that_fail_without_the_mutant_judge_nothing(tmp_path):
    listed = _one(
        tmp_path,
        original="# --- verdicts ---",
        replacement="# --- v ---",
        tests=["tests/reports/test_gate.py::no_such_test"],
    )
    proc = run("--mutants", str(listed))
    assert proc.returncode == 3 and "the named tests do not pass without any mutant" in proc.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--kind", "ruby"], "invalid choice: 'ruby' (choose from 'python', 'cpp', 'all')"),
        (["--only", "no-such-mutant"], "no mutant 'no-such-mutant'; valid ids: gate-threshold-x1.5, "),
    ],
)
def test_usage_errors_exit_2(args, message):
    proc = run(*args)
    assert proc.returncode == 2 and message in proc.stderr


def test_list_names_every_mutant_without_running_any():
    proc = run("--list", "--kind", "all")
    assert proc.returncode == 0
    assert [line.split()[0] for line in proc.stdout.splitlines() if not line.startswith(" ")] == [m.id for m in LISTED]


# --- the C++ path, without a C++ build ---------------------------------------------------------------------------


def test_the_persistent_copy_is_synced_incrementally(tmp_path):
    # A later cpp run rebuilds only what changed: an unchanged file is not rewritten (its mtime stays), a changed one
    # is, and a file gone from the tree is removed.
    files = mutants.tree_files(ROOT)
    assert mutants.sync_tree(ROOT, tmp_path) == len(files)
    kept = tmp_path / "reports" / "stepwise_report" / "gate" / "gate.py"
    before = kept.stat().st_mtime_ns
    assert mutants.sync_tree(ROOT, tmp_path) == 0 and kept.stat().st_mtime_ns == before
    (tmp_path / "model" / "gpt.cpp").write_text("changed")
    manifest = tmp_path / ".mutants-manifest"
    manifest.write_text(manifest.read_text() + "gone.cpp\n")
    (tmp_path / "gone.cpp").write_text("an old file")
    assert mutants.sync_tree(ROOT, tmp_path) == 1
    assert (tmp_path / "model" / "gpt.cpp").read_text() == (ROOT / "model" / "gpt.cpp").read_text()
    assert not (tmp_path / "gone.cpp").exists()


def test_cpp_mutants_are_judged_by_their_build_and_ctest(tmp_path, monkeypatch):
    # The build and ctest stand in: a mutated kZ95 fails "Stats", a mutant that does not compile is not judged.
    listed = {m.id: m for m in LISTED}
    z, sampler = listed["cpp-median-noise-z-1"], listed["cpp-sampler-no-reshuffle"]
    unbuildable = mutants.Mutant(
        "cpp-unbuildable", "cpp", z.file, z.original, "constexpr double kZ95 = ;", ("Stats",), "does not compile"
    )
    src = tmp_path / "src"
    calls = []

    def build(root, build_dir):
        calls.append("build")
        return ("= ;" not in (root / z.file).read_text()), "stats.cpp:16: error: expected expression"

    def ctest(build_dir, tests):
        calls.append(f"ctest {'|'.join(tests)}")
        broken = z.replacement in (src / z.file).read_text()
        return (8, "The following tests FAILED:\n\t  7 - Stats.MedianNoise (Failed)\n") if broken else (0, "")

    monkeypatch.setattr(mutants, "build", build)
    monkeypatch.setattr(mutants, "run_ctest", ctest)
    outcomes = mutants.run_cpp([z, sampler, unbuildable], tmp_path, lambda text: None)
    assert [(o.id, o.status) for o in outcomes] == [
        ("cpp-median-noise-z-1", "killed"),
        ("cpp-sampler-no-reshuffle", "survived"),
        ("cpp-unbuildable", "not built"),
    ]
    assert outcomes[0].detail == "failed: Stats.MedianNoise"
    assert calls[:2] == ["build", "ctest Stats|BatchSampler"]  # the unmutated copy first, every named test
    assert mutants.exit_code(outcomes) == 1
    # Every mutant was undone in the copy.
    assert (src / z.file).read_text() == (ROOT / z.file).read_text()
    assert (src / sampler.file).read_text() == (ROOT / sampler.file).read_text()


def test_the_scratch_build_uses_its_own_directory_and_the_checkouts_bundle(tmp_path, monkeypatch):
    monkeypatch.delenv("STEPWISE_DEPS", raising=False)
    env = mutants.build_env(tmp_path / "build")
    assert env["STEPWISE_BUILD_DIR"] == str(tmp_path / "build")  # never the checkout's build/
    assert "-DSTEPWISE_TEST_CASES=ON" in env["STEPWISE_CMAKE_ARGS"]  # ctest -R finds each case, not the shards
    assert env.get("STEPWISE_DEPS") == (str(ROOT / "deps") if (ROOT / "deps").is_dir() else None)


def test_ctest_gets_every_named_test_in_chunks_its_regular_expressions_can_hold(tmp_path, monkeypatch):
    # CMake's regular expressions hold at most 9 groups: the baseline of twenty C++ mutants once asked ctest for one
    # expression of 26 groups, which matched nothing ("Too many parentheses"), and every mutant was an error.
    names = [m.tests[0] for m in LISTED if m.kind == "cpp"]
    assert len(names) > mutants.CTEST_PATTERNS_PER_RUN, "the list is long enough to need chunks"
    asked = []

    def run(cmd, **kwargs):
        asked.append(cmd[cmd.index("-R") + 1])
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(mutants.subprocess, "run", run)
    assert mutants.run_ctest(tmp_path, names)[0] == 0
    assert all("(" not in regex for regex in asked), asked
    assert len(asked) == -(-len(names) // mutants.CTEST_PATTERNS_PER_RUN) and "|".join(asked) == "|".join(names)
