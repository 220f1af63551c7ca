"""scripts/setup.sh offline: an unreachable registry costs seconds, not a stall, and says how to bundle; the bundle
(scripts/setup.sh --bundle) holds every build dependency, and a configure with it finds them there, not in /usr."""

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup.sh"
PYTHON = (
    os.environ.get("STEPWISE_PYTHON")
    or subprocess.run([str(SETUP), "--python"], capture_output=True, text=True).stdout.strip()
)


def stub(directory: pathlib.Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


@pytest.fixture
def offline(tmp_path):
    """A PATH on which apt-get hangs (a registry that accepts and never answers) and pip has no index, and on which
    dpkg-query says a bundled package is missing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub(bin_dir, "apt-get", "sleep 3600")
    stub(bin_dir, "pip", "echo 'ERROR: No matching distribution (network unreachable)' >&2; exit 1")
    stub(bin_dir, "pip3", "echo 'ERROR: No matching distribution (network unreachable)' >&2; exit 1")
    stub(bin_dir, "dpkg-query", 'case "$*" in *libcli11-dev*) exit 1;; esac; echo "install ok installed"')
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STEPWISE_PYTHON": PYTHON,
        "STEPWISE_NET_TIMEOUT": "3",
        "TMPDIR": str(tmp_path),
        "STEPWISE_DEPS": str(tmp_path / "no-deps"),
    }
    return env


def test_an_unreachable_registry_gives_up_within_seconds_and_says_how_to_bundle(offline):
    # The registry never answers: a setup that waited for it would run into this timeout, a hang guard only.
    run = subprocess.run([str(SETUP)], capture_output=True, text=True, env=offline, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "no package registry answered within 3 s" in run.stderr
    assert "libcli11-dev" in run.stderr and "scripts/setup.sh --bundle" in run.stderr


def test_the_bundle_holds_every_build_dependency_and_the_build_prefers_it(tmp_path):
    deps = tmp_path / "deps"
    # Python 3.13: a version this machine's Debian release lacks, so its headers come from the release that has it.
    bundle = subprocess.run(  # the dependencies alone: the prebuilt is test_prebuilt.py's, from the test build
        [str(SETUP), "--bundle", "--without-prebuilt"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "STEPWISE_DEPS": str(deps), "STEPWISE_BUNDLE_PYTHON_VERSION": "3.13"},
    )
    if bundle.returncode != 0 and re.search(r"apt-get download failed|pip download failed", bundle.stderr):
        pytest.skip("no package registry reachable here: " + bundle.stderr.strip().splitlines()[-1])
    assert bundle.returncode == 0, bundle.stderr
    manifest = (deps / "MANIFEST.txt").read_text()
    for package in (
        "nlohmann-json3-dev",
        "libcli11-dev",
        "libgtest-dev",
        "libgmock-dev",
        "libbenchmark-dev",
        "libbenchmark1debian",
        "libgloo-dev",
    ):
        assert f"deb {package} " in manifest
    assert re.search(r"^wheel jsonschema-.*\.whl$", manifest, re.M)
    assert re.search(r"^wheel rpds_py-.*-cp313-", manifest, re.M)
    # Installed for that python already: a node imports them from the first process of its call.
    assert (deps / "site" / "python3.13" / ".stepwise-complete").exists() and "site python3.13: jsonschema-" in manifest
    assert list((deps / "site" / "python3.13" / "rpds").glob("*.cpython-313-*.so"))
    # Python.h for torch.compile's Triton launcher, headers only; a compiler finds it through CPATH.
    assert "deb libpython3.13-dev " in manifest
    include = deps / "python3.13" / "include"
    (tmp_path / "launcher.c").write_text("#include <Python.h>\nint main(void) { return PY_MINOR_VERSION; }\n")
    compiled = subprocess.run(
        ["gcc", "-c", str(tmp_path / "launcher.c"), "-o", str(tmp_path / "launcher.o")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CPATH": f"{include / 'python3.13'}:{include}"},
    )
    assert compiled.returncode == 0, compiled.stderr
    assert not (deps / "python3.13" / "lib").exists() and not list(deps.rglob("libpython3.13*.a"))
    size_mb = sum(p.stat().st_size for p in deps.rglob("*") if p.is_file()) / 2**20
    assert size_mb < 40, f"deps/ is {size_mb:.0f} MB; it must travel with the checkout"

    # Configure with the registry out of reach: every dependency must resolve inside the bundle.
    build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", f"-DSTEPWISE_PYTHON={PYTHON}"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "STEPWISE_DEPS": str(deps)},
    )
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    assert "build dependencies from the offline bundle" in configure.stdout
    cache = (build / "CMakeCache.txt").read_text()
    for package in ("nlohmann_json", "CLI11", "GTest", "benchmark"):
        found = re.search(rf"^{package}_DIR:PATH=(.*)$", cache, re.M)
        assert found and found.group(1).startswith(str(deps)), f"{package} resolved to {found and found.group(1)}"
    gloo = re.search(r"^STEPWISE_GLOO_INCLUDE:PATH=(.*)$", cache, re.M)
    assert gloo and gloo.group(1).startswith(str(deps))
    shutil.rmtree(build)


def test_a_bundle_that_cannot_make_the_prebuilt_fails_first_in_one_line(offline, tmp_path):
    """Without the prebuilt a node spends its call building, so --bundle says so and fails, before any download and
    without touching deps/; --without-prebuilt is the way to bundle without it, and anything else is a usage error."""
    stub(tmp_path / "bin", "cmake", "echo 'cmake: configure failed (the rehearsal of a broken build)' >&2; exit 1")
    stub(tmp_path / "bin", "apt-get", "exit 100")  # a bundle that went on past the prebuilt fails at once, not in 600 s
    env = {**offline, "STEPWISE_DEPS": str(tmp_path / "deps"), "STEPWISE_BUILD_DIR": str(tmp_path / "build")}
    run = subprocess.run([str(SETUP), "--bundle"], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 1, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("setup: --bundle made no prebuilt binary: the build failed (its log: "), run.stderr
    assert "--without-prebuilt" in last and not (tmp_path / "deps").exists()
    run = subprocess.run([str(SETUP), "--bundle", "--no-binaries"], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 2 and "--without-prebuilt, not '--no-binaries'" in run.stderr


FAKE_PYTHON = 'case "$1" in -c) echo 3.12;; *) echo "PYTHONPATH=$PYTHONPATH";; esac'
"""A python 3.12 that runs nothing: it prints the path it was given (and answers setup's version question)."""


def test_report_puts_the_bundled_packages_on_its_path_once(offline, tmp_path):
    """deps/site/python3.12 (the bundled wheels, for that interpreter's version) is on ./report's PYTHONPATH, from
    scripts/setup.sh --pythonpath, once, however often the calls nest; another version's never."""
    deps = tmp_path / "deps"
    for version in ("3.12", "3.11"):
        (deps / "site" / f"python{version}").mkdir(parents=True)
        (deps / "site" / f"python{version}" / ".stepwise-complete").touch()
    site = deps / "site" / "python3.12"
    fake = tmp_path / "python"
    stub(tmp_path, "python", FAKE_PYTHON)
    env = {**offline, "STEPWISE_DEPS": str(deps), "STEPWISE_PYTHON": str(fake), "PYTHONPATH": "/elsewhere"}
    report = subprocess.run([str(ROOT / "report"), "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert report.returncode == 0, report.stderr
    assert report.stdout.strip() == f"PYTHONPATH={ROOT / 'reports'}:{site}:/elsewhere"

    nested = {**env, "PYTHONPATH": f"{site}:/elsewhere"}  # ./report run by verify: no second copy
    report = subprocess.run([str(ROOT / "report"), "--help"], capture_output=True, text=True, env=nested, timeout=120)
    assert report.stdout.strip() == f"PYTHONPATH={ROOT / 'reports'}:{site}:/elsewhere"


def test_verify_gpu_gives_every_step_the_same_path_and_answers_even_if_its_python_cannot_run(offline, tmp_path):
    """scripts/verify-gpu.sh exports the bundle's packages for its python (scripts/setup.sh --pythonpath) before its
    first process, for every step it starts; and when the interpreter cannot run scripts/verify_gpu.py, the wrapper
    itself writes the first pass's three files, saying so."""
    deps = tmp_path / "deps"
    site = deps / "site" / "python3.12"
    site.mkdir(parents=True)
    (site / ".stepwise-complete").touch()
    stub(tmp_path, "python", FAKE_PYTHON)  # it runs nothing: verify never writes its files
    env = {
        **offline,
        "STEPWISE_DEPS": str(deps),
        "STEPWISE_PYTHON": str(tmp_path / "python"),
        "PYTHONPATH": "/elsewhere",
    }
    out = tmp_path / "verify"
    verify = subprocess.run(
        [str(ROOT / "scripts" / "verify-gpu.sh"), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert f"PYTHONPATH={site}:/elsewhere" in verify.stdout
    assert verify.returncode == 1
    assert sorted(p.name for p in out.iterdir()) == ["pass1"]
    assert sorted(p.name for p in (out / "pass1").iterdir()) == ["verify-artifacts.tar.gz", "verify.json", "verify.md"]
    assert "scripts/verify_gpu.py did not finish" in (out / "pass1" / "verify.md").read_text()
    assert json.loads((out / "pass1" / "verify.json").read_text())["counts"]["FAIL"] == 1


def test_verify_gpu_installs_the_bundles_packages_before_its_first_process(offline, tmp_path):
    """An interpreter that lacks jsonschema (the node's image, rehearsed: scripts/verify/node_python) and a bundle
    whose packages were not installed for its version: scripts/verify-gpu.sh installs them from deps/wheels before it
    starts anything, so its first process already imports jsonschema from deps/site, whatever the warm-up's order."""
    wheels = ROOT / "deps" / "wheels"
    if not list(wheels.glob("jsonschema-*.whl")):
        pytest.skip(f"no bundled wheels in {wheels}: scripts/setup.sh --bundle makes them")
    deps = tmp_path / "deps"
    shutil.copytree(wheels, deps / "wheels")
    first = tmp_path / "first-process"
    # verify-gpu.sh's first process (python -u verify_gpu.py) says where jsonschema came from; the rest runs as is.
    stub(
        tmp_path,
        "python",
        f'case "$2" in */verify_gpu.py) exec {PYTHON} -c "import jsonschema; print(jsonschema.__file__)" >{first};; '
        f'*) exec {PYTHON} "$@";; esac',
    )
    env = {
        **offline,
        "STEPWISE_DEPS": str(deps),
        "STEPWISE_PYTHON": str(tmp_path / "python"),
        "PYTHONPATH": str(ROOT / "scripts" / "verify" / "node_python"),
    }
    subprocess.run(
        [str(ROOT / "scripts" / "verify-gpu.sh"), "--out", str(tmp_path / "verify")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    version = subprocess.run(
        [PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip()
    assert first.read_text().strip() == str(deps / "site" / f"python{version}" / "jsonschema" / "__init__.py")
