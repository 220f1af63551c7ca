"""The CI workflow (.github/workflows/benchmarks.yml) cannot rot: this parses it and runs its steps locally, in its
order, with its environment — made small (a four-step cumulative suite on the tiny preset, no Python rows) and with a
baseline this test makes first; the gate must pass having judged at least one speedup. Steps that only exist on GitHub (checkout, cache, artifacts, the Bencher CLI without a token) are
skipped; the dashboards' upload steps are checked for what they would read: github-action-benchmark's file in its
format, Bencher's BMF file. The stored baseline the real gate uses must load as results."""

import json
import os
import pathlib
import re
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "benchmarks.yml"
# Enough steps per configuration for the gate's intervals to fit inside its threshold on a quiet 2-core machine.
SMALL = "--preset=tiny --device=cpu --warmup=2 --steps=20 --max-steps=20 --max-time=120"
SUITE = {
    "name": "ci_small",
    "description": "the workflow test's suite",
    "kind": "cumulative",
    "steps": [
        {"label": "baseline", "add": []},
        {"label": "dynamic mask", "add": ["dynamic_mask"]},
        {"label": "fused AdamW", "add": ["fused_adamw"]},
        {"label": "native layers", "add": ["native_layers"]},
    ],
}


def expand(text: str, env: dict) -> str:
    """GitHub's ${{ env.X }} and ${{ secrets.X }} expressions, as a runner without secrets would see them."""

    def value(match):
        scope, name = match.group(1), match.group(2)
        return env.get(name, "") if scope == "env" else ""

    return re.sub(r"\$\{\{\s*(env|secrets)\.(\w+)\s*\}\}", value, text)


def condition_holds(condition: str | None, env: dict) -> bool:
    if condition is None:
        return True
    condition = condition.strip()
    match = re.fullmatch(r"env\.(\w+)\s*!=\s*''", condition)
    if match:
        return env.get(match.group(1), "") != ""
    if condition in ("always()", "success()"):
        return True
    raise AssertionError(f"the test does not know how to evaluate `if: {condition}`; teach it")


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def test_the_workflow_runs_locally_in_its_order(workflow, tmp_path):
    (job,) = workflow["jobs"].values()
    env = {**os.environ}
    env.update({k: expand(str(v), env) for k, v in workflow.get("env", {}).items()})
    env.update({k: expand(str(v), env) for k, v in job.get("env", {}).items()})
    # Tiny, and isolated from the repository's own results, reports and stored baseline.
    suite = tmp_path / "ci_small.json"
    suite.write_text(json.dumps(SUITE))
    env.update(
        STEPWISE_RUN_DIR=str(tmp_path / "ci-results"),
        STEPWISE_REPORT_DIR=str(tmp_path / "ci-report"),
        CI_BASELINE=str(tmp_path / "baseline"),
        CI_COMPARE=str(tmp_path / "ci-compare.json"),
        CI_RUN_ARGS=SMALL,
        STEPWISE_SUITES=str(suite),
        STEPWISE_PYTHON_ROWS="",
        CI_THRESHOLD="25%",
        BENCHER_API_TOKEN="",
    )  # two runs minutes apart on a shared CPU
    base = subprocess.run(
        ["bash", "-c", f"./run_all.sh {SMALL}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        env={**env, "STEPWISE_RUN_DIR": env["CI_BASELINE"], "STEPWISE_REPORT_DIR": str(tmp_path / "baseline-report")},
    )
    assert base.returncode == 0, base.stdout[-3000:] + base.stderr[-3000:]

    ran, checked = [], []
    for step in job["steps"]:
        name = step.get("name", step.get("uses", "?"))
        if not condition_holds(step.get("if"), env):
            continue
        if "run" in step:
            command = expand(step["run"], env)
            run = subprocess.run(
                ["bash", "-eo", "pipefail", "-c", command],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=1200,
                env={**env, **{k: expand(str(v), env) for k, v in step.get("env", {}).items()}},
            )
            assert run.returncode == 0, f"step '{name}' failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
            ran.append(name)
        elif step["uses"].startswith("benchmark-action/github-action-benchmark"):
            path = pathlib.Path(expand(step["with"]["output-file-path"], env))
            entries = json.loads(path.read_text())
            assert step["with"]["tool"] == "customSmallerIsBetter"
            assert entries and all({"name", "unit", "value"} <= set(e) for e in entries)
            checked.append(name)
    assert ran == ["Set up and build", "Run the suites", "Gate against the stored baseline"]
    assert checked == ["Publish to github-action-benchmark"]
    # What the Bencher step would upload: BMF, every benchmark with measures of {value, ...}.
    bmf = json.loads((tmp_path / "ci-report" / "exports" / "bmf.json").read_text())
    assert bmf and all(isinstance(m, dict) and all("value" in v for v in m.values()) for m in bmf.values())
    verdict = json.loads(pathlib.Path(env["CI_COMPARE"]).read_text())
    assert verdict["gate"]["passed"] and verdict["gate"]["exit_code"] == 0, verdict["gate"]
    judged = [r for r in verdict["relative"] if r["verdict"] in ("SAME", "FASTER", "SLOWER")]
    assert judged, [(r["name"], r["verdict"], r["note"]) for r in verdict["relative"]]


def test_the_stored_baseline_is_a_run_the_gate_judges(tmp_path):
    """The workflow gates against ci/baseline: compared with itself it must load, be judged, and pass."""
    baseline = ROOT / "ci" / "baseline"
    assert list(baseline.rglob("*.json")), "ci/baseline holds the results the CI gate compares with"
    out = tmp_path / "self.json"
    run = subprocess.run(
        [str(ROOT / "report"), "compare", str(baseline), str(baseline), "--gate", "relative", "--json-out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    verdict = json.loads(out.read_text())
    verdicts = {r["verdict"] for r in verdict["relative"]}
    assert "SAME" in verdicts and not verdicts & {"FASTER", "SLOWER", "LOST"}, verdict["gate"]
    # Rows left UNSURE (short or noisy rows of the stored run) have their point estimate at 1: nothing moved.
    assert all(
        r["ratio"] is None or abs(r["ratio"] - 1) < 1e-12 for r in verdict["relative"] if r["verdict"] == "UNSURE"
    )
