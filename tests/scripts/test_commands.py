"""Every command in scripts/ and scripts/dev/ runs as a command: executable in git (so a fresh clone's is), a Python one
through its first line, which runs it with the interpreter ./report uses (scripts/python: scripts/setup.sh --python,
with reports/ and deps/site on its path), and each answers --help with exit 0 and a usage that names it. Run from a
fresh shell, from another folder, by path: no interpreter on the command line, no PYTHONPATH, no venv on PATH."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What a user runs (scripts/), then the developer tooling (scripts/dev/). scripts/verify_gpu.py is not one: it is
# scripts/verify-gpu.sh's body, which that command runs with the node's interpreter after setting up its environment.
USER_COMMANDS = (
    "setup.sh",
    "build.sh",
    "test.sh",
    "verify-gpu.sh",
    "plan_run.py",
    "gated_run.py",
    "find_budget.py",
    "nanogpt_speedrun.py",
    "speedrun_step.py",
    "vs_python.py",
    "corpus.py",
    "prebuilt.py",
)
DEV_COMMANDS = (
    "dev/mutants.py",
    "dev/format.sh",
    "dev/slowest_tests.sh",
    "dev/test_costs.py",
    "dev/results_schema.py",
    "dev/gate_calibration.py",
    "dev/gate_simulation.py",
)
# The first line of every Python command: the interpreter is found from the script's own folder (a symlink to it
# included), never from PATH's python3, which has neither the venv's packages nor reports/ (scripts/python).
LAUNCHER = '#!/usr/bin/env -S sh -c \'exec "$(dirname "$(readlink -f "$0")")/{up}python" "$0" "$@"\''
# Not a command a user runs: a stand-in for ./ablate that gated_run.py runs per row through a link, under any python3
# (the standard library only), as it runs the real binary.
STANDS_IN = {"dev/planted_ablate.py": "#!/usr/bin/env python3"}


def git_mode(path: str) -> str:
    out = subprocess.run(["git", "ls-files", "-s", path], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.split(" ")[0]


def fresh_env() -> dict[str, str]:
    """A login's environment: PATH without a venv, HOME and the cache the venv lives in, and the user's own settings
    of stepwise (STEPWISE_PYTHON where they chose an interpreter, as docs/setup.md has it); no PYTHONPATH."""
    keep = ("HOME", "USER", "LANG", "XDG_CACHE_HOME", "STEPWISE_VENV", "STEPWISE_PYTHON", "STEPWISE_DEPS")
    keep += ("STEPWISE_BUILD_DIR",)
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = ":".join(p for p in os.environ.get("PATH", "").split(":") if "venv" not in p) or "/usr/bin:/bin"
    env["OMP_NUM_THREADS"] = "1"
    return env


def test_every_file_in_scripts_is_a_listed_command_or_a_part_of_one():
    """A new script is listed here (and so tested as a command), or it is a module or data some command uses."""
    parts = {"python", "requirements.txt", "verify_gpu.py"}
    listed = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "scripts"]
    files = subprocess.run(listed, cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    found = {f.removeprefix("scripts/") for f in files if not f.startswith("scripts/verify/") and (ROOT / f).exists()}
    assert found - parts == set(USER_COMMANDS) | set(DEV_COMMANDS) | set(STANDS_IN)


@pytest.mark.parametrize("name", [*USER_COMMANDS, *DEV_COMMANDS, *STANDS_IN, "python"])
def test_every_command_is_executable_in_git(name):
    assert git_mode(f"scripts/{name}") == "100755", f"scripts/{name}: git update-index --chmod=+x scripts/{name}"


@pytest.mark.parametrize("name", [n for n in (*USER_COMMANDS, *DEV_COMMANDS) if n.endswith(".py")])
def test_every_python_command_runs_through_the_projects_interpreter(name):
    first = (ROOT / "scripts" / name).read_text().splitlines()[0]
    assert first == LAUNCHER.format(up="../" if name.startswith("dev/") else "")


@pytest.mark.parametrize("name", [*USER_COMMANDS, *DEV_COMMANDS])
def test_help_from_a_fresh_shell_exits_0_and_names_the_command(name, tmp_path):
    command = ROOT / "scripts" / name
    run = subprocess.run(
        ["bash", "-c", f"{command} --help"],
        cwd=tmp_path,
        env=fresh_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, f"{name} --help: exit {run.returncode}\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
    usage = run.stdout.strip()
    assert usage, f"{name} --help printed nothing on stdout: {run.stderr[-2000:]}"
    assert pathlib.PurePath(name).name in usage, f"{name} --help does not name the command:\n{usage[:2000]}"
    assert not list(tmp_path.iterdir()), f"{name} --help wrote {list(tmp_path.iterdir())}"


def test_a_command_reached_through_a_symlink_finds_the_interpreter_beside_its_target(tmp_path):
    link = tmp_path / "bin" / "find_budget"
    link.parent.mkdir()
    link.symlink_to(ROOT / "scripts" / "find_budget.py")
    run = subprocess.run(
        ["bash", "-c", "find_budget --help"],
        cwd=tmp_path,
        env={**fresh_env(), "PATH": f"{link.parent}:{fresh_env()['PATH']}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and "usage: find_budget" in run.stdout, run.stdout + run.stderr


def test_the_interpreter_is_reports_with_reports_and_the_bundle_on_its_path(tmp_path):
    """scripts/python gives a command what ./report has: the interpreter of scripts/setup.sh --python, and reports/
    first on its path, so a script can import the report's reader (stepwise_report) as the report does."""
    code = "import os, sys, stepwise_report.read.results as r; print(sys.executable); print(os.environ['PYTHONPATH'])"
    run = subprocess.run(
        [str(ROOT / "scripts" / "python"), "-c", code], env=fresh_env(), capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    executable, path = run.stdout.strip().splitlines()
    setup = subprocess.run(
        [str(ROOT / "scripts" / "setup.sh"), "--python"], env=fresh_env(), capture_output=True, text=True, timeout=300
    )
    assert pathlib.Path(executable) == pathlib.Path(setup.stdout.strip())
    assert path.split(":")[0] == str(ROOT / "reports")
