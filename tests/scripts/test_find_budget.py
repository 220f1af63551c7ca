"""scripts/find_budget.py, the budget search's old command line: it runs as a command (its first line runs it with the
project's interpreter, as every Python command's: tests/scripts/test_commands.py) and under any python3 named before
it, as verify's speedrun step runs it on a GPU node (the standard library only, no package of the venv), and hands
its options to ./ablate --find-budget, the search itself (its tests are the engine's:
tests/ablations/judges/budget_verdict_test.cpp, tests/e2e/test_find_budget.py)."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "find_budget.py"
sys.path.insert(0, str(ROOT / "scripts"))
import find_budget  # noqa: E402


def test_it_runs_as_a_command_and_under_the_systems_python(tmp_path):
    assert os.access(SCRIPT, os.X_OK), "executable, as the README's command runs it"
    command = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300)
    assert command.returncode == 0 and "--find-budget" in command.stdout, command.stderr
    python3 = next(p for p in ("/usr/bin/python3", "/bin/python3") if os.access(p, os.X_OK))
    run = subprocess.run(
        [python3, "-S", str(SCRIPT), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert "--find-budget" in run.stdout


def test_its_options_become_find_budgets(tmp_path):
    # A stand-in ablate that records the command line it was started with.
    fake = tmp_path / "ablate"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/argv"\nexit 3\n')
    fake.chmod(0o755)
    args = [f"--ablate={fake}", "--first=40", "--ratio=1.5", "--out=o", "--", "--suite=speedrun", "--max-steps=400"]
    run = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 3, "./ablate's own exit status"
    argv = (tmp_path / "argv").read_text().split()
    assert argv == [
        "--find-budget",
        "--budget-first=40",
        "--budget-ratio=1.5",
        "--out=o",
        "--suite=speedrun",
        "--max-steps=400",
    ]
    assert find_budget.ablate_command(["--out=o", "--last=300", "--", "--x"])[1:] == [
        "--find-budget",
        "--budget-last=300",
        "--out=o",
        "--x",
    ]
