#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""A prebuilt stepwise that travels in deps/prebuilt (scripts/setup.sh --bundle), so a lent GPU node held for minutes
runs its checks instead of spending the slot on a build (about 1,800 CPU-seconds of C++ through torch's headers).

A binary is only as good as the match between what it was built from and where it runs, so the bundle carries a
build id (deps/prebuilt/build-id.json): a hash of the C++ sources and CMake files it was built from (the files
themselves, so an edit to docs/ keeps it valid and a dirty tree is told apart from its commit, with or without .git),
the torch it linked (version and CUDA build), the compiler, and the newest GLIBC, GLIBCXX and CXXABI symbol versions
it needs (objdump -T). On the node, `mismatch` holds the id against the checkout, the node's own torch and its C
libraries; `environment` finds libtorch through the node's python at run time, since the binary's RUNPATH names the
building machine's venv, which is not there.

    scripts/prebuilt.py pack [--build DIR] [--deps DIR]   strip and copy the binaries with their id; refuses a build
                                                          that is not up to date with its sources or has no CUDA paths
    scripts/prebuilt.py id [--root DIR]                   the source hash of a checkout
    scripts/prebuilt.py check [--deps DIR]                one line: whether deps/prebuilt fits this checkout and this
                                                          python, so whether a node will build (exit 0 fits, 3 not)
    scripts/prebuilt.py run NAME [ARGS...]                run a bundled binary (ablate, stepwise_micro) from deps/
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ID_FILE = "build-id.json"
# What the binaries are built from: the C++ and CMake files (and what the binary reads from the tree at run time: the
# suites, bench/python). Under tests/ only the GoogleTests' sources count; a Python test's edit keeps the id.
SOURCE_ROOTS = ("CMakeLists.txt", "cmake", "model", "bench", "ablations", "tests")
TEST_SOURCE_SUFFIXES = (".cpp", ".h", ".hpp", ".cmake")
IGNORED_PARTS = ("__pycache__", ".pytest_cache")
# The binaries that travel, by the path the build gives them. The GoogleTests hold the GPU-only tests pass 2 runs.
BINARIES = {
    "ablate": "ablations/ablate",
    "stepwise_micro": "bench/micro/stepwise_micro",
    "stepwise_model_tests": "tests/stepwise_model_tests",
    "stepwise_bench_tests": "tests/stepwise_bench_tests",
    "stepwise_ablations_tests": "tests/stepwise_ablations_tests",
    "stepwise_micro_tests": "tests/stepwise_micro_tests",
}
# The shared libraries they load from their own folder (RUNPATH $ORIGIN): the engine's kernels, which the Python rows
# load too (model/softcap_kernel.h).
LIBRARIES = {"libstepwise_kernels.so": "model/libstepwise_kernels.so"}
# Run by the node's python (and by verify's preflight): where its torch's libraries are, since the binary links
# libtorch and the CUDA runtime by name.
TORCH_PROBE = (
    f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import prebuilt; "
    "print(json.dumps(prebuilt.torch_libraries()))"
)


def torch_libraries() -> dict:
    """This interpreter's torch: its version, its CUDA build, and the directories of its libraries (torch/lib, then
    the nvidia wheels' lib directories: the CUDA runtime, CUPTI, cuDNN, NCCL)."""
    import importlib.util

    import torch

    spec = importlib.util.find_spec("nvidia")
    nvidia = []
    for base in spec.submodule_search_locations if spec and spec.submodule_search_locations else []:
        nvidia += sorted(str(p) for p in Path(base).glob("*/lib") if p.is_dir())
    lib = str(Path(torch.__file__).resolve().parent / "lib")
    return {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "lib_dirs": [lib, *nvidia]}


def deps_dir() -> Path:
    return Path(os.environ.get("STEPWISE_DEPS") or ROOT / "deps")


def counted(rel: Path) -> bool:
    if any(part in IGNORED_PARTS for part in rel.parts) or rel.suffix == ".pyc":
        return False
    return rel.parts[0] != "tests" or rel.name == "CMakeLists.txt" or rel.suffix in TEST_SOURCE_SUFFIXES


def travelling(root: Path) -> list[Path] | None:
    """The files of a git checkout that travel to a node (a lent node's copy, a clone with its edits): tracked and
    untracked files git does not ignore, as they are on disk now, never HEAD's. None without git: then every file,
    which on a node is exactly what travelled."""
    if not (root / ".git").exists():
        return None
    try:
        listed = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                *SOURCE_ROOTS,
            ],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    return [root / r for r in dict.fromkeys(listed.stdout.decode().split("\0")) if r and (root / r).is_file()]


def source_hash(root: Path) -> tuple[str, int]:
    """sha256 over every counted file's path and content, in path order; and how many files it covers. The files are
    those that travel (an ignored file in model/ stays here, so it must not count)."""
    digest, count = hashlib.sha256(), 0
    files = travelling(root)
    if files is None:
        files = []
        for top in SOURCE_ROOTS:
            path = root / top
            files += [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else []
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root)
        if counted(rel):
            digest.update(rel.as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
            count += 1
    return digest.hexdigest()[:16], count


def git_state(root: Path) -> dict:
    """The commit and whether the counted files differ from it: for a reader, never for the match."""

    def git(*args: str) -> str:
        try:
            run = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return ""
        return run.stdout.strip() if run.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--", *SOURCE_ROOTS)) if commit else None
    return {"commit": commit or None, "dirty": dirty}


def cache_value(build: Path, key: str) -> str | None:
    found = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", (build / "CMakeCache.txt").read_text(), re.M)
    return found.group(1).strip() if found else None


def compiler(build: Path) -> str:
    for f in sorted(build.glob("CMakeFiles/*/CMakeCXXCompiler.cmake")):
        text = f.read_text()
        ident = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
        version = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
        if ident and version:
            return f"{ident.group(1)} {version.group(1)}"
    return "unknown"


def version_key(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def symbol_versions(binary: Path) -> dict[str, str]:
    """The newest GLIBC, GLIBCXX and CXXABI version the binary's dynamic symbols need (objdump -T)."""
    out = subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True, check=True, timeout=120).stdout
    newest: dict[str, str] = {}
    for lib, version in re.findall(r"\b(GLIBC|GLIBCXX|CXXABI)_(\d+(?:\.\d+)+)\b", out):
        if lib not in newest or version_key(version) > version_key(newest[lib]):
            newest[lib] = version
    return {k.lower(): v for k, v in newest.items()}


# What `ninja -n -d explain` says when a CONFIGURE_DEPENDS glob is all that makes its steps dirty: its check has no
# output, so a dry run always lists it and the CMake re-run after it, which a real build skips when no file came or went.
GLOB_CHECK_ONLY = ("VerifyGlobs.cmake_force", "cmake.verify_globs is dirty")


def stale_steps(build: Path) -> list[str]:
    """What `ninja -n` would still do: a build with work left was not built from the sources it would be named for.
    The glob check (ablations/CMakeLists.txt's flags/*.cpp) is run for real, by CMake's own script, instead of being
    taken for work: it is work only when a file the glob matches came or went."""
    run = subprocess.run(
        ["ninja", "-C", str(build), "-n", "-d", "explain"], capture_output=True, text=True, timeout=300
    )
    if run.returncode != 0:
        return [f"ninja -n failed: {(run.stdout + run.stderr).strip()[-300:]}"]
    steps = [line for line in run.stdout.splitlines() if line.startswith("[")]
    why = [line for line in (run.stdout + run.stderr).splitlines() if line.startswith("ninja explain:")]
    globs = build / "CMakeFiles" / "VerifyGlobs.cmake"
    if steps and why and globs.exists() and all(any(g in w for g in GLOB_CHECK_ONLY) for w in why):
        check = subprocess.run(["cmake", "-P", str(globs)], capture_output=True, text=True, timeout=120)
        if check.returncode == 0 and "GLOB mismatch" not in check.stdout + check.stderr:
            return []
    return steps


class Refused(Exception):
    """The build cannot be packed (or the bundle cannot be used), with the reason."""


def clear_runpath(binary: Path) -> str:
    """Points the binary's RUNPATH at its own folder, in place, as chrpath does (the new string is shorter, ended by
    NUL): the building machine's venv paths it named would never exist on a node, and a binary that finds libtorch
    only through the node's python (LD_LIBRARY_PATH, `environment`) cannot load another torch by accident. Returns
    the RUNPATH it had."""
    dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    found = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dynamic)
    if not found:
        return ""
    old = found.group(1).encode()
    data = bytearray(binary.read_bytes())
    at = data.find(b"\0" + old + b"\0")
    if at < 0 or data.find(b"\0" + old + b"\0", at + 1) >= 0 or len(old) < len(b"$ORIGIN"):
        raise Refused(f"cannot rewrite the RUNPATH of {binary}: {found.group(1)[:80]}")
    data[at + 1 : at + 1 + len(old)] = b"$ORIGIN".ljust(len(old), b"\0")
    binary.write_bytes(bytes(data))
    return found.group(1)


def pack(build: Path, deps: Path) -> dict:
    """Strips the binaries of an up-to-date CUDA build into deps/prebuilt/bin and writes their id."""
    if not (build / "CMakeCache.txt").exists():
        raise Refused(f"{build} is not a configured build (no CMakeCache.txt): run scripts/build.sh first")
    source = Path(cache_value(build, "CMAKE_HOME_DIRECTORY") or ROOT)
    stale = stale_steps(build)
    if stale:
        raise Refused(
            f"{build} is not up to date with {source}: ninja -n would run {len(stale)} steps "
            f"({stale[0]}); run scripts/build.sh first"
        )
    if "STEPWISE_WITH_CUDA=1" not in (build / "build.ninja").read_text(errors="replace"):
        raise Refused(f"{build} was built without its CUDA paths (no nvcc here): a GPU node could not use it")
    if (cache_value(build, "CMAKE_BUILD_TYPE") or "") != "Release":
        raise Refused(f"{build} is not a Release build")
    missing = [rel for rel in [*BINARIES.values(), *LIBRARIES.values()] if not (build / rel).is_file()]
    if missing:
        raise Refused(f"{build} lacks {', '.join(missing)}")
    python = cache_value(build, "STEPWISE_PYTHON") or sys.executable
    torch = json.loads(
        subprocess.run([python, "-c", TORCH_PROBE], capture_output=True, text=True, check=True, timeout=300).stdout
    )
    target = deps / "prebuilt"
    shutil.rmtree(target, ignore_errors=True)
    (target / "bin").mkdir(parents=True)
    needs: dict[str, str] = {}
    for name, rel in {**BINARIES, **LIBRARIES}.items():
        out = target / "bin" / name
        subprocess.run(["strip", "--strip-unneeded", "-o", str(out), str(build / rel)], check=True, timeout=120)
        clear_runpath(out)
        for lib, version in symbol_versions(out).items():
            if lib not in needs or version_key(version) > version_key(needs[lib]):
                needs[lib] = version
    sources, files = source_hash(source)
    ident = {
        "sources": sources,
        "source_files": files,
        **git_state(source),
        "source_dir": str(source),
        # A binary that reads STEPWISE_SOURCE_DIR at run time finds the suites and bench/python wherever the checkout
        # is; one that does not reads them from the building machine's path (see source_dir_link).
        "reads_source_dir_env": b"STEPWISE_SOURCE_DIR\0" in (target / "bin" / "ablate").read_bytes(),
        "torch": torch["torch"],
        "torch_cuda": torch["torch_cuda"],
        "compiler": compiler(build),
        "needs": needs,
        "binaries": sorted(BINARIES),
        "libraries": sorted(LIBRARIES),
        "bytes": sum(p.stat().st_size for p in (target / "bin").iterdir()),
        "built_on": socket.gethostname(),
        "packed": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    (target / ID_FILE).write_text(json.dumps(ident, indent=2) + "\n")
    return ident


# ---------------------------------------------------------------------------------------------------------------
# On the node


def load_id(deps: Path) -> dict | None:
    try:
        return json.loads((deps / "prebuilt" / ID_FILE).read_text())
    except (OSError, ValueError):
        return None


def binary(deps: Path, name: str) -> Path:
    return deps / "prebuilt" / "bin" / name


def glibc_version() -> str | None:
    try:
        found = re.search(r"(\d+(?:\.\d+)+)", os.confstr("CS_GNU_LIBC_VERSION") or "")
    except (ValueError, OSError):
        return None
    return found.group(1) if found else None


def libstdcxx(lib_dirs: list[str]) -> Path | None:
    """The libstdc++.so.6 the dynamic loader would give the binary: on LD_LIBRARY_PATH first, else ldconfig's."""
    for d in lib_dirs:
        if (Path(d) / "libstdc++.so.6").exists():
            return Path(d) / "libstdc++.so.6"
    try:
        cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        cache = ""
    found = re.search(r"libstdc\+\+\.so\.6 \(libc6,x86-64\) => (\S+)", cache)
    candidates = [found.group(1)] if found else []
    candidates += ["/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib64/libstdc++.so.6", "/usr/lib/libstdc++.so.6"]
    return next((Path(c) for c in candidates if Path(c).exists()), None)


def provided(library: Path | None) -> dict[str, str]:
    """The newest GLIBCXX and CXXABI versions a libstdc++ defines."""
    if library is None:
        return {}
    data = library.read_bytes()
    newest: dict[str, str] = {}
    for lib, version in re.findall(rb"\b(GLIBCXX|CXXABI)_(\d+(?:\.\d+)+)\b", data):
        key, v = lib.decode().lower(), version.decode()
        if key not in newest or version_key(v) > version_key(newest[key]):
            newest[key] = v
    return newest


def mismatch(ident: dict | None, root: Path, torch: dict, deps: Path) -> list[str]:
    """Why the bundled binaries cannot run here (empty: they can). `torch` is TORCH_PROBE's answer on this node."""
    if ident is None:
        return [f"no {deps / 'prebuilt' / ID_FILE}: scripts/setup.sh --bundle on a connected machine puts one there"]
    reasons = []
    sources, _ = source_hash(root)
    if sources != ident.get("sources"):
        built = f"commit {str(ident.get('commit'))[:12]}" + (", with local changes" if ident.get("dirty") else "")
        reasons.append(f"built from other sources ({built}: {ident.get('sources')}; this checkout: {sources})")
    if torch.get("torch") != ident.get("torch") or torch.get("torch_cuda") != ident.get("torch_cuda"):
        reasons.append(
            f"built against torch {ident.get('torch')} (CUDA {ident.get('torch_cuda')}); this python has "
            f"{torch.get('torch')} (CUDA {torch.get('torch_cuda')})"
        )
    needs = ident.get("needs") or {}
    have = {"glibc": glibc_version(), **provided(libstdcxx(torch.get("lib_dirs") or []))}
    for lib, version in sorted(needs.items()):
        if have.get(lib) is None or version_key(have[lib]) < version_key(version):
            reasons.append(f"needs {lib.upper()}_{version}; this machine has {have.get(lib) or 'none found'}")
    absent = [n for n in ident.get("binaries") or BINARIES if not os.access(binary(deps, n), os.X_OK)]
    absent += [n for n in ident.get("libraries") or LIBRARIES if not binary(deps, n).is_file()]
    if absent:
        reasons.append("missing from deps/prebuilt/bin: " + ", ".join(absent))
    return reasons


def verdict(ident: dict | None, root: Path, torch: dict, deps: Path) -> tuple[bool, str]:
    """Whether the bundled binaries fit here, in the one line `check` prints and verify's warm-up reports."""
    reasons = mismatch(ident, root, torch, deps)
    if not reasons:
        return True, f"prebuilt: fits (sources {ident['sources']}, torch {torch.get('torch')}): the node builds nothing"
    return False, "prebuilt: does not fit, the node will build what it runs: " + "; ".join(reasons)


def environment(torch: dict, deps: Path, base: dict | None = None) -> dict:
    """LD_LIBRARY_PATH for a bundled binary: this python's torch and its CUDA wheels first, then deps/' own Debian
    libraries (libbenchmark for stepwise_micro), then whatever was there."""
    base = os.environ if base is None else base
    multiarch = deps / "root" / "usr" / "lib" / "x86_64-linux-gnu"
    dirs = [*(torch.get("lib_dirs") or []), str(multiarch)]
    path = os.pathsep.join([*dirs, *filter(None, base.get("LD_LIBRARY_PATH", "").split(os.pathsep))])
    return {"LD_LIBRARY_PATH": path}


def source_dir_link(ident: dict, root: Path) -> str:
    """A binary that does not read STEPWISE_SOURCE_DIR finds the suites and bench/python/step.py under the path it
    was built in. When that path is absent here, it is linked to this checkout (and the caller removes the link with
    remove_source_dir_link); what was done, in words."""
    built = Path(ident.get("source_dir") or "")
    if ident.get("reads_source_dir_env") or not built.is_absolute() or built == root:
        return ""
    if built.exists() or built.is_symlink():
        return f"it reads {built} (present here) for bench/python, not this checkout"
    try:
        built.parent.mkdir(parents=True, exist_ok=True)
        built.symlink_to(root, target_is_directory=True)
    except OSError as e:
        return f"it reads bench/python from {built}, which could not be linked here ({e}): Python rows fail"
    return f"linked {built} -> {root} for the duration (the binary reads bench/python there)"


def remove_source_dir_link(ident: dict | None, root: Path) -> None:
    built = Path((ident or {}).get("source_dir") or "")
    if built.is_absolute() and built.is_symlink() and built.resolve() == root.resolve():
        built.unlink()


def torch_here(python: str) -> dict:
    run = subprocess.run([python, "-c", TORCH_PROBE], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise Refused(f"{python} cannot import torch ({last[-200:]}): set STEPWISE_PYTHON to the python that does")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="strip the binaries of an up-to-date build into DEPS/prebuilt with their id")
    p.add_argument("--build", type=Path, default=Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build"))
    p.add_argument("--deps", type=Path, default=deps_dir())
    p = sub.add_parser("id", help="the source hash of a checkout")
    p.add_argument("--root", type=Path, default=ROOT)
    p = sub.add_parser("check", help="whether DEPS/prebuilt fits this checkout and this python")
    p.add_argument("--deps", type=Path, default=deps_dir())
    p = sub.add_parser("run", help="run a bundled binary with this python's torch")
    p.add_argument("name", choices=sorted(BINARIES))
    p.add_argument("args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    try:
        if args.command == "pack":
            ident = pack(args.build.resolve(), args.deps.resolve())
            print(
                f"prebuilt: {len(ident['binaries'])} binaries, {ident['bytes'] / 2**20:.1f} MiB, sources "
                f"{ident['sources']}, torch {ident['torch']}, {ident['compiler']}, needs "
                + ", ".join(f"{k.upper()}_{v}" for k, v in sorted(ident["needs"].items()))
            )
            return 0
        if args.command == "id":
            sources, files = source_hash(args.root.resolve())
            print(f"{sources} ({files} files)")
            return 0
        deps = args.deps.resolve() if args.command == "check" else deps_dir().resolve()
        torch = torch_here(os.environ.get("STEPWISE_PYTHON") or sys.executable)  # the python whose torch runs the rows
        ident = load_id(deps)
        fits, said = verdict(ident, ROOT, torch, deps)
        if args.command == "check":
            print(said)  # one line on stdout either way: the answer, not an error
            return 0 if fits else 3
        if not fits:
            print(said, file=sys.stderr)
            return 3
        note = source_dir_link(ident, ROOT)
        if note:
            print(f"prebuilt: {note}", file=sys.stderr)
        env = {**os.environ, **environment(torch, deps), "STEPWISE_SOURCE_DIR": str(ROOT)}
        env.setdefault("STEPWISE_PYTHON", sys.executable)
        code = subprocess.run([str(binary(deps, args.name)), *args.args], env=env).returncode
        remove_source_dir_link(ident, ROOT)
        return code
    except Refused as e:
        print(f"prebuilt: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
