"""scripts/gated_run.py (./run_all.sh --gated, --like): what it refuses before anything runs — another machine's
baseline (exit 3, as the gate would say after the whole run), a configuration the baseline ran that this machine would
skip (exit 2, naming it), extra arguments beside --like, a definition the gate could not judge, an output folder in
use — each without writing a result. Only ./ablate --dry-run runs here."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reports"))
sys.path.insert(0, str(ROOT / "tests" / "reports"))

import resultgen  # noqa: E402
from stepwise_report.gate.gated_run import round_dir, write_manifest  # noqa: E402
from stepwise_report.read.machine import fingerprint, machine_of  # noqa: E402

ABLATE = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build")) / "ablations" / "ablate"
ARGS = ["--preset=tiny", "--device=cpu", "--warmup=1", "--min-steps=1", "--max-steps=1"]
# one_at_a_time's first three rows, so that a run these checks failed to stop ends in seconds.
SUITE = {
    "name": "one_at_a_time",
    "description": "its first rows",
    "kind": "one_at_a_time",
    "flags": ["dynamic_mask", "tf32"],
}


@pytest.fixture(scope="module")
def definition(tmp_path_factory) -> dict:
    suite = tmp_path_factory.mktemp("suite") / "first_rows.json"
    suite.write_text(json.dumps(SUITE))
    return {"rounds": 4, "suites": [str(suite)], "args": ARGS, "threads": 1}


def gated_run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    python = os.environ.get("STEPWISE_PYTHON", sys.executable)
    cmd = [python, str(ROOT / "scripts" / "gated_run.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def this_machine(definition) -> dict:
    run = subprocess.run(
        [str(ABLATE), f"--suite={definition['suites'][0]}", *ARGS, "--dry-run", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["env"]


def baseline(root: pathlib.Path, env: dict, definition: dict, tf32_ran: bool = False) -> pathlib.Path:
    """A finished gated run of one_at_a_time's first rows made on `env`'s machine; `tf32_ran`: its tf32 row ran ok,
    as on a GPU."""
    docs = resultgen.one_at_a_time("20261128T010000Z_gated_r1", {"dynamic_mask": 1.1, "tf32": 1.5}, device_kind="cpu")
    if not tf32_ran:
        docs[2] = resultgen.make_result(
            run_id=docs[2]["run_id"], name=docs[2]["name"], suite=docs[2]["suite"], status="skipped", flags=["tf32"]
        )
    for doc in docs:
        path = round_dir(root, 1) / "one_at_a_time" / resultgen.file_name(doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    write_manifest(root, {"run_id": "b", "definition": definition, "machine": machine_of(env), "rounds_done": 4})
    return root


def test_another_machines_baseline_is_refused_before_anything_runs(tmp_path, this_machine, definition):
    other = {**this_machine, "cpu_capability": "AVX2" if this_machine.get("cpu_capability") != "AVX2" else "AVX512"}
    run = gated_run(
        "run",
        f"--out={tmp_path / 'out'}",
        f"--ablate={ABLATE}",
        f"--like={baseline(tmp_path / 'b', other, definition)}",
    )
    assert run.returncode == 3, run.stdout + run.stderr
    assert "baseline made on" in run.stderr and "cpu_capability" in run.stderr and "./run_all.sh --gated" in run.stderr
    assert fingerprint(other) in run.stderr and fingerprint(this_machine) in run.stderr
    assert not (tmp_path / "out").exists()


def test_a_configuration_this_machine_would_skip_is_a_usage_error_naming_it(tmp_path, this_machine, definition):
    base = baseline(tmp_path / "b", this_machine, definition, tf32_ran=True)
    run = gated_run("run", f"--out={tmp_path / 'out'}", f"--ablate={ABLATE}", f"--like={base}")
    assert run.returncode == 2, run.stdout + run.stderr
    assert (
        "one_at_a_time/02_tf32: ran in the baseline, would be skipped here: tf32 requires a CUDA device" in run.stderr
    )
    assert "one_at_a_time/01_dynamic_mask" not in run.stderr
    assert not (tmp_path / "out").exists()


def test_bad_requests_are_usage_errors(tmp_path, this_machine, definition):
    base = baseline(tmp_path / "b", this_machine, definition)
    out = f"--out={tmp_path / 'out'}"
    extra = gated_run("run", out, f"--ablate={ABLATE}", f"--like={base}", "--", "--min-steps=20")
    assert extra.returncode == 2 and "drop the extra ./ablate arguments (--min-steps=20)" in extra.stderr
    short = tmp_path / "short.json"
    short.write_text(json.dumps({**definition, "rounds": 3}))
    few = gated_run("run", out, f"--ablate={ABLATE}", f"--definition={short}")
    assert few.returncode == 2 and "rounds must be an integer of at least 4" in few.stderr
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("")
    (tmp_path / "ok.json").write_text(json.dumps(definition))
    busy = gated_run("run", f"--out={used}", f"--ablate={ABLATE}", f"--definition={tmp_path / 'ok.json'}")
    assert busy.returncode == 2 and "is not empty" in busy.stderr
    assert not (tmp_path / "out").exists()


def test_against_refuses_what_cannot_run_row_by_row_before_anything_runs(tmp_path, definition):
    (tmp_path / "d.json").write_text(json.dumps(definition))
    common = ("run", f"--out={tmp_path / 'out'}", f"--ablate={ABLATE}", f"--definition={tmp_path / 'd.json'}")
    alone = gated_run(*common, f"--against={ROOT}")
    assert alone.returncode == 2 and "--against SRC and --baseline-out DIR go together" in alone.stderr
    side = f"--baseline-out={tmp_path / 'base'}"
    missing = gated_run(*common, f"--against={tmp_path}", side)
    assert missing.returncode == 2 and f"no ./ablate at {tmp_path}/build/ablations/ablate" in missing.stderr
    # A baseline built before --rows existed cannot run one row at a time: nothing can be judged against it, so the
    # run is not made and says how to get past it (exit 3, as the gate's when it could not judge; never a pass).
    old = tmp_path / "old-ablate"
    old.write_text("#!/bin/sh\necho 'Usage: ablate [OPTIONS]'\n")
    old.chmod(0o755)
    older = gated_run(*common, f"--against={old}", side)
    assert older.returncode == 3 and "has no --rows" in older.stderr and "Stepwise-Base:" in older.stderr
    # One that has --rows but refuses the definition's arguments (an option it predates): the same.
    refusing = tmp_path / "refusing-ablate"
    refusing.write_text(
        "#!/bin/sh\n[ \"$1\" = --help ] && echo '--rows' && exit 0\necho 'unknown option' >&2; exit 2\n"
    )
    refusing.chmod(0o755)
    refused = gated_run(*common, f"--against={refusing}", side)
    assert refused.returncode == 3 and "cannot run this definition" in refused.stderr, refused.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "base").exists()


def test_ablate_rows_runs_only_those_rows_into_the_suites_folder(tmp_path, definition):
    # What an interleaved gated run is made of: one ./ablate per row, each writing its row beside the others.
    suite = definition["suites"][0]
    common = [str(ABLATE), f"--suite={suite}", *ARGS, f"--out={tmp_path}", "--run-id=r", "--no-progress"]

    def rows(which: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*common, f"--rows={which}"],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )

    assert rows("1").returncode == 0
    assert sorted(p.name for p in (tmp_path / "one_at_a_time").iterdir()) == ["01_dynamic_mask.json"]
    assert rows("0,2").returncode == 0
    written = sorted(p.name for p in (tmp_path / "one_at_a_time").iterdir())
    assert written == ["00_baseline.json", "01_dynamic_mask.json", "02_tf32.json"]
    beyond = rows("3")
    assert beyond.returncode == 2 and "--rows 3: the suite one_at_a_time has rows 0..2" in beyond.stderr


def test_an_interleaved_run_goes_on_past_its_rounds_while_the_gate_cannot_judge(tmp_path):
    # tf32 is skipped on a CPU, so this suite has no speedup the gate could judge, and the baseline row's own step time
    # carries planted noise (the candidate's 1.5x slower in odd rounds, 1.5x faster in even ones), which no machine's
    # quiet resolves to within the 10% threshold: the run goes on from its first look (4) to its next (its last,
    # max_rounds 5), and records the plan it stopped on.
    suite = tmp_path / "nothing_to_judge.json"
    suite.write_text(json.dumps({**SUITE, "flags": ["tf32"]}))
    definition = tmp_path / "d.json"
    definition.write_text(
        json.dumps({"rounds": 4, "max_rounds": 5, "threshold": 0.1, "suites": [str(suite)], "args": ARGS, "threads": 1})
    )
    noise = {
        "STEPWISE_PLANT": "one_at_a_time/00_baseline:1.5,0.6667",
        "STEPWISE_PLANT_ABLATE": str(ABLATE),
        "STEPWISE_PLANT_TURNS": str(tmp_path / "turns"),
    }
    run = gated_run(
        "run",
        f"--out={tmp_path / 'cand'}",
        f"--ablate={ROOT / 'scripts' / 'dev' / 'planted_ablate.py'}",
        f"--definition={definition}",
        f"--against={ABLATE}",
        f"--baseline-out={tmp_path / 'base'}",
        env=noise,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "after 4 rounds the gate cannot judge" in run.stdout
    for side in ("cand", "base"):
        manifest = json.loads((tmp_path / side / "gated-run.json").read_text())
        assert manifest["rounds_done"] == 5 and len(manifest["round_seconds"]) == 5
        assert manifest["stopping"]["looks"] == [4, 5] and manifest["stopping"]["gate"] == "both"
        assert sorted(p.name for p in (tmp_path / side).glob("round-*")) == [f"round-{k}" for k in range(1, 6)]


def test_rounds_go_on_from_look_to_look_while_the_gate_cannot_judge_up_to_the_last():
    sys.path.insert(0, str(ROOT / "scripts"))
    import gated_run as g

    asked = []

    def never(k):
        asked.append(k)
        return False

    # The gate is asked only at the plan's looks, never in between: each look spends its share of the level.
    assert list(g.round_numbers([5, 7, 10], never)) == list(range(1, 11)) and asked == [5, 7]
    assert list(g.round_numbers([5, 7, 10], lambda k: k >= 7)) == [1, 2, 3, 4, 5, 6, 7]
    assert list(g.round_numbers([5], never)) == [1, 2, 3, 4, 5]


def test_which_side_runs_a_row_first_alternates_by_round_and_row():
    sys.path.insert(0, str(ROOT / "scripts"))
    import gated_run as g

    row = [("candidate", 3), ("baseline", 3)]
    firsts = [g.in_turn(row, k, j)[0][0] for k in range(1, 5) for j in range(4)]
    assert firsts.count("candidate") == firsts.count("baseline") == 8
    assert g.in_turn(row, 1, 0) != g.in_turn(row, 2, 0) and g.in_turn(row, 1, 0) != g.in_turn(row, 1, 1)
    assert sorted(g.in_turn(row, 2, 0)) == sorted(row)


FAKE_ABLATE = """#!/usr/bin/env python3
import json, pathlib, sys
out = pathlib.Path(next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--out=")))
for name in ("one_at_a_time/01_dynamic_mask", "one_at_a_time/03_fused_adamw"):
    path = out / (name + ".json")
    if path.exists():
        continue
    path.parent.mkdir(parents=True, exist_ok=True)
    steps = [{"ms": 10.0, "cpu_ms": 20.0}, {"ms": 30.0, "cpu_ms": None}]
    summary = {"step_ms": {"median": 20.0, "min": 10.0, "max": 30.0, "cv": 0.5}, "tokens_per_s": 600.0}
    doc = {"tool": "stepwise", "schema_version": 2, "name": name, "status": "ok", "steps": steps, "summary": summary}
    path.write_text(json.dumps(doc))
sys.exit(7)
"""


def test_planted_ablate_slows_the_planted_rows_results_once_each_and_passes_the_status_on(tmp_path):
    """scripts/dev/planted_ablate.py, the live plant of docs/ci.md's power table: the planted row's steps, median and tok/s
    scaled by the factor, the other rows untouched, a second call in the same folder adds no second slowdown."""
    fake = tmp_path / "ablate"
    fake.write_text(FAKE_ABLATE)
    fake.chmod(0o755)
    out = tmp_path / "round-1"
    env = {**os.environ, "STEPWISE_PLANT": "one_at_a_time/03_fused_adamw:1.5", "STEPWISE_PLANT_ABLATE": str(fake)}
    # run as gated_run.py runs an ./ablate: the file itself, under whatever python3 its first line finds
    cmd = [str(ROOT / "scripts" / "dev" / "planted_ablate.py"), "--suite=one_at_a_time", f"--out={out}"]
    for _ in range(2):
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        assert run.returncode == 7, run.stderr  # ./ablate's own status
    slowed = json.loads((out / "one_at_a_time" / "03_fused_adamw.json").read_text())
    assert [s["ms"] for s in slowed["steps"]] == [15.0, 45.0]
    assert [s["cpu_ms"] for s in slowed["steps"]] == [30.0, None]
    assert slowed["summary"]["step_ms"] == {"median": 30.0, "min": 15.0, "max": 45.0, "cv": 0.5}
    assert slowed["summary"]["tokens_per_s"] == 400.0
    other = json.loads((out / "one_at_a_time" / "01_dynamic_mask.json").read_text())
    assert [s["ms"] for s in other["steps"]] == [10.0, 30.0]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env={**env, "STEPWISE_PLANT": ""})
    assert run.returncode == 2 and "STEPWISE_PLANT=ROW[:FACTOR]" in run.stderr
