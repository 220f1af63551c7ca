"""The CI workflow (.github/workflows/benchmarks.yml) cannot rot: this parses it and runs its steps locally, in its
order, with its environment, twice — as a new runner's first push (no baseline: the gated run is made and kept as this
runner's baseline) and as its next push (the baseline restored by the runner's fingerprint, the candidate run like
it, the gate passing) — made small (a three-row suite on the tiny preset in four short rounds). The Actions cache is a
folder here, keyed as the workflow keys it. Steps that only exist on GitHub (checkout, the venv cache, artifacts, the
Bencher CLI without a token) are skipped; the dashboards' upload steps are checked for what they would read:
github-action-benchmark's file in its format, Bencher's BMF file."""

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "benchmarks.yml"
SUITE = {
    "name": "ci_small",
    "description": "the workflow test's suite",
    "kind": "cumulative",
    "rows": [
        {"label": "baseline", "add": []},
        {"label": "dynamic mask", "add": ["dynamic_mask"]},
        {"label": "fused AdamW", "add": ["fused_adamw"]},
    ],
}
# The gated run made small: four rounds (the fewest the gate judges), six steps a row, and like ci/gated-run.json it goes
# on, up to `max_rounds`, while the gate at the workflow's threshold (CI_THRESHOLD below) cannot judge a row: four rounds
# under ctest's load sometimes leave a row's interval too wide even at 50%. The real definition is ci/gated-run.json; its
# false alarms and power are measured in docs/ci.md, not here.
CI_THRESHOLD = 0.5
DEFINITION = {
    "description": "the workflow test's gated run",
    "rounds": 4,
    "max_rounds": 10,
    "threshold": CI_THRESHOLD,
    "threads": 1,
    "args": ["--preset=tiny", "--device=cpu", "--warmup=2", "--min-steps=6", "--max-steps=6", "--max-time=120"],
}
SHA = ("1" * 40, "2" * 40)  # the two pushes' commits, as github.sha gives them


def expand(text: str, env: dict, context: dict | None = None) -> str:
    """GitHub's ${{ env.X }}, ${{ secrets.X }}, ${{ steps.ID.outputs.X }} and ${{ github.X }} expressions, as a runner
    without secrets would see them; `context` holds the steps' outputs and the github context."""
    context = context or {}

    def value(match):
        expr = match.group(1)
        if expr.startswith("env."):
            return env.get(expr[4:], "")
        if expr.startswith("secrets."):
            return ""
        if expr in context:
            return context[expr]
        if expr.startswith("steps.") and f"steps.{expr.split('.')[1]}" in context:
            return ""  # an output the step did not write reads as empty, as on GitHub
        raise AssertionError(f"the test does not know the expression ${{{{ {expr} }}}}; teach it")

    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", value, text)


def condition_holds(condition: str | None, env: dict, context: dict) -> bool:
    if condition is None:
        return True
    condition = condition.strip()
    match = re.fullmatch(r"env\.(\w+)\s*!=\s*''", condition)
    if match:
        return env.get(match.group(1), "") != ""
    match = re.fullmatch(r"github\.(\w+)\s*==\s*'([^']*)'", condition)
    if match:
        return context[f"github.{match.group(1)}"] == match.group(2)
    if condition in ("always()", "success()"):
        return True
    raise AssertionError(f"the test does not know how to evaluate `if: {condition}`; teach it")


def restore(cache: pathlib.Path, spec: dict, env: dict, context: dict) -> None:
    """actions/cache/restore: the exact key, else the newest entry whose key starts with a restore key."""
    key, prefix = expand(spec["key"], env, context), expand(spec["restore-keys"], env, context)
    entries = sorted(cache.glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
    hit = next((p for p in entries if p.name == key), None) or next(
        (p for p in entries if p.name.startswith(prefix)), None
    )
    if hit is not None:
        shutil.copytree(hit, pathlib.Path(expand(spec["path"], env, context)))


def save(cache: pathlib.Path, spec: dict, env: dict, context: dict) -> None:
    """actions/cache/save: a key is written once."""
    target = cache / expand(spec["key"], env, context)
    if not target.exists():
        shutil.copytree(pathlib.Path(expand(spec["path"], env, context)), target)


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def run_workflow(workflow: dict, tmp: pathlib.Path, cache: pathlib.Path, sha: str) -> dict:
    """One push's job, step by step with its environment; returns what it left (outputs, logs, the steps run)."""
    (job,) = workflow["jobs"].values()
    tmp.mkdir()
    env = {**os.environ}
    env.update({k: expand(str(v), env) for k, v in workflow.get("env", {}).items()})
    env.update({k: expand(str(v), env) for k, v in job.get("env", {}).items()})
    suite, definition = tmp / "ci_small.json", tmp / "gated.json"
    suite.write_text(json.dumps(SUITE))
    definition.write_text(json.dumps({**DEFINITION, "suites": [str(suite)]}))
    # Tiny, and isolated from the repository's own results and reports.
    env.update(
        STEPWISE_RUN_DIR=str(tmp / "ci-results"),
        STEPWISE_REPORT_DIR=str(tmp / "ci-report"),
        CI_BASELINE=str(tmp / "ci-baseline"),
        CI_BASELINE_SRC=str(tmp / "ci-baseline-src"),
        STEPWISE_BASELINE_RUN_DIR=str(tmp / "ci-baseline-now"),
        CI_COMPARE=str(tmp / "ci-compare.json"),
        STEPWISE_GATED_DEFINITION=str(definition),
        # Mechanics, not power: four short rounds under ctest's load judge within a wide threshold (docs/ci.md
        # measures the real definition at 10%).
        CI_THRESHOLD=f"{CI_THRESHOLD:.0%}",
        BENCHER_API_TOKEN="",
    )
    context = {"github.sha": sha, "github.ref": "refs/heads/main"}
    ran, checked, logs = [], [], {}
    for step in job["steps"]:
        name = step.get("name", step.get("uses", "?"))
        if not condition_holds(step.get("if"), env, context):
            continue
        uses = step.get("uses", "")
        if "run" in step:
            outputs = tmp / f"output-{len(ran)}"
            outputs.write_text("")
            command = expand(step["run"], env, context)
            run = subprocess.run(
                ["bash", "-eo", "pipefail", "-c", command],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=1200,
                env={
                    **env,
                    "GITHUB_OUTPUT": str(outputs),
                    **{k: expand(str(v), env) for k, v in step.get("env", {}).items()},
                },
            )
            assert run.returncode == 0, f"step '{name}' failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
            if "id" in step:
                context[f"steps.{step['id']}"] = "ran"
            for line in outputs.read_text().splitlines():
                key, value = line.split("=", 1)
                context[f"steps.{step['id']}.outputs.{key}"] = value
            logs[name] = run.stdout
            ran.append(name)
        elif uses.startswith("actions/cache/restore"):
            restore(cache, step["with"], env, context)
            ran.append(name)
        elif uses.startswith("actions/cache/save"):
            save(cache, step["with"], env, context)
            ran.append(name)
        elif uses.startswith("benchmark-action/github-action-benchmark"):
            path = pathlib.Path(expand(step["with"]["output-file-path"], env, context))
            entries = json.loads(path.read_text())
            assert step["with"]["tool"] == "customSmallerIsBetter"
            assert entries and all({"name", "unit", "value"} <= set(e) for e in entries)
            checked.append(name)
    # What the Bencher step would upload: BMF, every benchmark with measures of {value, ...}.
    bmf = json.loads((tmp / "ci-report" / "exports" / "bmf.json").read_text())
    assert bmf and all(isinstance(m, dict) and all("value" in v for v in m.values()) for m in bmf.values())
    return {"ran": ran, "checked": checked, "logs": logs, "context": context, "env": env}


def test_a_new_runner_makes_its_baseline_then_gates_like_with_like(workflow, tmp_path):
    cache = tmp_path / "actions-cache"
    cache.mkdir()
    first = run_workflow(workflow, tmp_path / "push1", cache, SHA[0])
    steps = [
        "Set up and build",
        "Fingerprint this runner",
        "Restore this runner's baseline",
        "Build the baseline's commit",
        "Run the gated suites",
        "Gate against this runner's baseline",
        "Keep this run as the runner's baseline",
        "Save the runner's baseline",
    ]
    assert first["ran"] == steps and first["checked"] == ["Publish to github-action-benchmark"]
    fingerprint = first["context"]["steps.runner.outputs.fingerprint"]
    assert re.fullmatch(r"[0-9a-f]{12}", fingerprint)
    # No baseline for this runner: the run is made, said so, and kept under the runner's fingerprint.
    assert (
        f"no baseline for this runner (fingerprint {fingerprint})"
        in first["logs"]["Gate against this runner's baseline"]
    )
    assert not (tmp_path / "push1" / "ci-compare.json").exists()
    assert [p.name for p in cache.iterdir()] == [f"stepwise-baseline-{fingerprint}-{SHA[0]}"]
    made = json.loads((tmp_path / "push1" / "ci-results" / "gated-run.json").read_text())
    assert made["fingerprint"] == fingerprint and made["rounds_done"] == DEFINITION["rounds"]

    # The next push: the baseline comes back by fingerprint; its commit is this build's (the pushes' shas are
    # stand-ins), so its ./ablate is this one; the candidate replays it, interleaved row by row with the baseline's side
    # made again in this job, and the gate pairs the two and passes.
    second = run_workflow(workflow, tmp_path / "push2", cache, SHA[1])
    assert second["ran"] == steps
    build = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build"))
    assert second["context"]["steps.baseline.outputs.src"] == str(build / "ablations" / "ablate")
    like = json.loads((tmp_path / "push2" / "ci-results" / "gated-run.json").read_text())
    now = json.loads((tmp_path / "push2" / "ci-baseline-now" / "gated-run.json").read_text())
    assert like["definition"] == made["definition"] and like["definition_source"].startswith("like ")
    assert like["interleaved"]["with"] == now["run_id"] and now["interleaved"]["with"] == like["run_id"]
    verdict = json.loads((tmp_path / "push2" / "ci-compare.json").read_text())
    assert verdict["gate"]["passed"] and verdict["gate"]["exit_code"] == 0, verdict["gate"]
    rounds = verdict["candidate"]["rounds"]
    assert verdict["baseline"]["rounds"] == rounds and DEFINITION["rounds"] <= rounds <= DEFINITION["max_rounds"]
    assert like["rounds_done"] == now["rounds_done"] == rounds
    assert verdict["baseline"]["run_id"] == now["run_id"]
    assert any("interleaved row by row" in n for n in verdict["notes"])
    # Row by row, the side that goes first alternates (a row's first process can find the caches the other warmed).
    sides = re.findall(r"^  (candidate|baseline) ", second["logs"]["Run the gated suites"], re.MULTILINE)
    firsts = sides[0::2]
    assert len(sides) == 2 * rounds * len(SUITE["rows"]) and all(a != b for a, b in zip(sides[0::2], sides[1::2]))
    assert abs(firsts.count("candidate") - firsts.count("baseline")) <= 1  # an odd number of rows: one more
    assert not verdict["lost"] and not verdict["changed"]
    assert any(r["verdict"] in ("SAME", "FASTER", "SLOWER") for r in verdict["relative"]), verdict["relative"]
    assert len(list(cache.iterdir())) == 2
