"""scripts/prebuilt.py: the binaries that travel in deps/prebuilt. Their id follows the C++ sources and not the docs;
a build that is not up to date with its sources, or has no CUDA paths, is refused; on the node a mismatch of sources,
torch or C library is named; and a fresh copy of the checkout plus deps/, with no build/ and no compiler on PATH,
runs `ablate --describe` and a CPU step from deps/, finding libtorch only through its own python."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
PYTHON = os.environ.get("STEPWISE_PYTHON") or sys.executable
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "reports"))

import prebuilt  # noqa: E402
from stepwise_report.read.inputs import read_results  # noqa: E402

COMPILERS = re.compile(
    r"^(g\+\+|c\+\+|gcc|cc|cpp|cmake|ninja|ccache|nvcc|clang.*|(x86_64-linux-gnu-)?(g\+\+|gcc|c\+\+|cpp)(-\d+)?)$"
)


def tree(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


SOURCES = {
    "CMakeLists.txt": "project(x)\n",
    "model/gpt.cpp": "int gpt;\n",
    "bench/python/step.py": "print('step')\n",
    "ablations/suites/raschka.json": "{}\n",
    "tests/model/gpt_test.cpp": "int test;\n",
    "tests/scripts/test_x.py": "def test(): pass\n",
    "docs/setup.md": "# setup\n",
}


def test_the_id_follows_the_cpp_sources_and_not_the_docs_or_the_python_tests(tmp_path):
    root = tree(tmp_path / "a", SOURCES)
    first, files = prebuilt.source_hash(root)
    assert files == 5  # CMakeLists.txt, gpt.cpp, step.py, raschka.json, gpt_test.cpp
    (root / "docs" / "setup.md").write_text("# setup, edited\n")
    (root / "tests" / "scripts" / "test_x.py").write_text("def test(): assert True\n")
    (root / "model" / "__pycache__").mkdir()
    (root / "model" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert prebuilt.source_hash(root)[0] == first
    (root / "model" / "gpt.cpp").write_text("int gpt = 1;\n")
    assert prebuilt.source_hash(root)[0] != first
    (root / "model" / "gpt.cpp").write_text("int gpt;\n")
    (root / "tests" / "model" / "gpt_test.cpp").write_text("int test = 2;\n")
    assert prebuilt.source_hash(root)[0] != first
    # The same files elsewhere, without .git: the same id.
    (root / "tests" / "model" / "gpt_test.cpp").write_text("int test;\n")
    assert prebuilt.source_hash(tree(tmp_path / "b", SOURCES))[0] == first


def test_in_a_git_checkout_the_id_is_of_the_working_tree_that_travels(tmp_path):
    """A lent node receives the working tree (tracked and untracked files git does not ignore, as they are on disk),
    not HEAD: an uncommitted edit and a new file count, an ignored file does not."""
    root = tree(tmp_path / "repo", {**SOURCES, ".gitignore": "model/*.orig\n"})
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    subprocess.run([*git, "add", "-A"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-qm", "sources"], check=True, timeout=60)
    first = prebuilt.source_hash(root)
    (root / "model" / "gpt.cpp.orig").write_text("an editor's leftover\n")
    assert prebuilt.source_hash(root) == first, "an ignored file does not travel"
    (root / "model" / "gpt.cpp").write_text("int gpt = 3;\n")  # not committed
    edited = prebuilt.source_hash(root)
    assert edited != first
    (root / "model" / "attention.cpp").write_text("int attention;\n")  # untracked, not ignored
    assert prebuilt.source_hash(root)[1] == edited[1] + 1
    copy = tree(
        tmp_path / "node", {**SOURCES, "model/gpt.cpp": "int gpt = 3;\n", "model/attention.cpp": "int attention;\n"}
    )
    assert prebuilt.source_hash(copy) == prebuilt.source_hash(root), "the node's copy, without .git, hashes the same"


def fake_build(build: pathlib.Path, source: pathlib.Path, ninja: str) -> pathlib.Path:
    build.mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(
        f"CMAKE_HOME_DIRECTORY:INTERNAL={source}\nCMAKE_BUILD_TYPE:STRING=Release\nSTEPWISE_PYTHON:UNINITIALIZED={PYTHON}\n"
    )
    (build / "build.ninja").write_text(ninja)
    return build


def test_a_build_with_work_left_or_without_cuda_is_refused(tmp_path):
    source = tree(tmp_path / "src", SOURCES)
    stale = fake_build(tmp_path / "stale", source, "rule touch\n  command = touch $out\nbuild out.txt: touch\n")
    with pytest.raises(prebuilt.Refused, match=r"not up to date with .*src: ninja -n would run 1 steps"):
        prebuilt.pack(stale, tmp_path / "deps")
    cpu = fake_build(tmp_path / "cpu", source, "build all: phony\ndefault all\n")
    with pytest.raises(prebuilt.Refused, match="without its CUDA paths"):
        prebuilt.pack(cpu, tmp_path / "deps")
    with pytest.raises(prebuilt.Refused, match="not a configured build"):
        prebuilt.pack(tmp_path / "nothing", tmp_path / "deps")
    assert not (tmp_path / "deps").exists()


def test_a_configure_depends_glob_is_work_only_when_a_file_it_matches_came_or_went(tmp_path):
    """ablations/CMakeLists.txt globs flags/*.cpp with CONFIGURE_DEPENDS: `ninja -n` then always lists that check and
    a CMake re-run after it (a dry run cannot run the check), which made every up-to-date build look stale, so
    --bundle refused to pack it and the tests below skipped. The check is run for real instead: a build is stale for
    it only when a file the glob matches came or went. A project of nothing but the glob, configured and built here."""
    src, build = tmp_path / "src", tmp_path / "build"
    (src / "parts").mkdir(parents=True)
    (src / "parts" / "a.txt").write_text("a")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(globbed NONE)\n"
        "file(GLOB PARTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/parts/*.txt)\n"
    )
    for argv in (["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja"], ["ninja", "-C", str(build)]):
        subprocess.run(argv, check=True, capture_output=True, timeout=300)
    dry = subprocess.run(["ninja", "-C", str(build), "-n"], capture_output=True, text=True, timeout=60).stdout
    assert "Re-checking globbed directories" in dry, dry  # what was taken for work left
    assert prebuilt.stale_steps(build) == []
    (src / "parts" / "b.txt").write_text("b")
    assert prebuilt.stale_steps(build), "a new file the glob matches: CMake must run again before the build is fresh"


def test_on_the_node_each_mismatch_is_named(tmp_path):
    root = tree(tmp_path / "src", SOURCES)
    deps = tmp_path / "deps"
    (deps / "prebuilt" / "bin").mkdir(parents=True)
    for name in [*prebuilt.BINARIES, *prebuilt.LIBRARIES]:
        (deps / "prebuilt" / "bin" / name).write_text("#!/bin/sh\n")
        (deps / "prebuilt" / "bin" / name).chmod(0o755)
    ident = {
        "sources": prebuilt.source_hash(root)[0],
        "commit": "0123456789abcdef",
        "dirty": True,
        "torch": "2.11.0+cu130",
        "torch_cuda": "13.0",
        "needs": {"glibc": "2.17"},
        "binaries": sorted(prebuilt.BINARIES),
        "libraries": sorted(prebuilt.LIBRARIES),
    }
    torch = {"torch": "2.11.0+cu130", "torch_cuda": "13.0", "lib_dirs": []}
    assert prebuilt.mismatch(ident, root, torch, deps) == []

    (root / "model" / "gpt.cpp").write_text("int gpt = 2;\n")
    other = {"torch": "2.10.0+cu128", "torch_cuda": "12.8", "lib_dirs": []}
    (deps / "prebuilt" / "bin" / "stepwise_micro").unlink()
    (deps / "prebuilt" / "bin" / "libstepwise_kernels.so").unlink()
    reasons = prebuilt.mismatch({**ident, "needs": {"glibc": "9.99", "glibcxx": "3.4.99"}}, root, other, deps)
    assert reasons[0].startswith("built from other sources (commit 0123456789ab, with local changes: ")
    assert "built against torch 2.11.0+cu130 (CUDA 13.0); this python has 2.10.0+cu128 (CUDA 12.8)" in reasons
    assert any(r.startswith("needs GLIBC_9.99; this machine has ") for r in reasons), reasons
    assert any(r.startswith("needs GLIBCXX_3.4.99; this machine has ") for r in reasons), reasons
    assert "missing from deps/prebuilt/bin: stepwise_micro, libstepwise_kernels.so" in reasons
    assert prebuilt.mismatch(None, root, torch, deps)[0].startswith("no ")


def test_the_library_path_comes_from_the_nodes_python_first(tmp_path):
    torch = {"lib_dirs": ["/node/site-packages/torch/lib", "/node/site-packages/nvidia/cu13/lib"]}
    env = prebuilt.environment(torch, tmp_path / "deps", {"LD_LIBRARY_PATH": "/opt/other"})
    assert env["LD_LIBRARY_PATH"].split(os.pathsep) == [
        "/node/site-packages/torch/lib",
        "/node/site-packages/nvidia/cu13/lib",
        str(tmp_path / "deps" / "root" / "usr" / "lib" / "x86_64-linux-gnu"),
        "/opt/other",
    ]


def fresh_build_or_skip() -> pathlib.Path:
    """The source tree of an up-to-date CUDA build (the test command's own), else the test skips with the reason."""
    if not (BUILD / "CMakeCache.txt").exists():
        pytest.skip(f"no build in {BUILD}")
    stale = prebuilt.stale_steps(BUILD)
    if stale:
        pytest.skip(f"{BUILD} is not up to date with its sources ({len(stale)} steps left): pack would refuse it")
    if "STEPWISE_WITH_CUDA=1" not in (BUILD / "build.ninja").read_text(errors="replace"):
        pytest.skip(f"{BUILD} has no CUDA paths (no nvcc here): pack would refuse it")
    return pathlib.Path(prebuilt.cache_value(BUILD, "CMAKE_HOME_DIRECTORY"))


def copy_checkout(source: pathlib.Path, to: pathlib.Path) -> None:
    """The checkout as a lent node receives it: the tracked files and the untracked ones git does not ignore (so no
    build/ and no deps/), without .git."""
    listed = subprocess.run(
        ["git", "-C", str(source), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.split(b"\0")
    for rel in filter(None, (r.decode() for r in listed)):
        if (source / rel).is_file():
            (to / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, to / rel)


def no_compiler_path(into: pathlib.Path) -> str:
    """A PATH holding every command of this one but the compilers and build tools."""
    into.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        for p in pathlib.Path(d).glob("*") if pathlib.Path(d).is_dir() else []:
            if not COMPILERS.match(p.name) and os.access(p, os.X_OK) and not (into / p.name).exists():
                (into / p.name).symlink_to(p)
    return str(into)


def test_a_fresh_copy_plus_deps_runs_the_prebuilt_binary_with_no_build_and_no_compiler(tmp_path):
    source = fresh_build_or_skip()
    deps = tmp_path / "deps"
    ident = prebuilt.pack(BUILD, deps)
    assert ident["sources"] == prebuilt.source_hash(source)[0]
    assert ident["needs"]["glibc"] and ident["bytes"] < 40 * 2**20
    checkout = tmp_path / "checkout"
    copy_checkout(source, checkout)
    shutil.copytree(deps, checkout / "deps")
    assert not (checkout / "build").exists() and not (checkout / ".git").exists()
    path = no_compiler_path(tmp_path / "bin")
    assert not any(shutil.which(tool, path=path) for tool in ("g++", "c++", "gcc", "cmake", "ninja", "nvcc"))
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "STEPWISE_BUILD_DIR", "STEPWISE_BIN")},
        "PATH": path,
        "STEPWISE_DEPS": str(checkout / "deps"),
    }
    run = [PYTHON, str(checkout / "scripts" / "prebuilt.py"), "run", "ablate"]

    # The binary names no path of the machine that built it: alone it finds no libtorch.
    alone = subprocess.run(
        [str(checkout / "deps" / "prebuilt" / "bin" / "ablate"), "--list-flags"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert alone.returncode != 0 and "libtorch" in alone.stderr, alone.stderr

    describe = subprocess.run(
        [*run, "--describe", "--preset=gpt2-124m"], env=env, capture_output=True, text=True, timeout=300
    )
    assert describe.returncode == 0, describe.stderr
    assert "preset gpt2-124m" in describe.stdout and "parameters" in describe.stdout

    out = tmp_path / "results"
    step = subprocess.run(
        [
            *run,
            "--preset=tiny",
            "--device=cpu",
            "--warmup=1",
            "--steps=2",
            "--max-steps=2",
            "--no-progress",
            # the softcap's loss on a CPU is the bundled kernels' library, which the Python row loads too
            "--enable=logit_softcap",
            "--implementations=libtorch,python-eager",
            f"--out={out}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=checkout,
    )
    assert step.returncode == 0, step.stdout[-2000:] + step.stderr[-2000:]
    results = read_results([out])
    assert sorted(r.implementation for r in results) == ["libtorch", "python-eager"]
    for result in results:
        assert result.status == "ok" and result.config["device"] == "cpu", result.reason
    assert not (checkout / "build").exists()

    # An edit to the C++ sources: the bundled binary no longer fits, and says why.
    gpt = checkout / "model" / "gpt.cpp"
    gpt.write_text(gpt.read_text() + "\n// edited\n")
    refused = subprocess.run([*run, "--list-flags"], env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 3 and "built from other sources" in refused.stderr, refused.stderr
