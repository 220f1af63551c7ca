"""The binaries a pass runs, and how it got them: given (STEPWISE_BIN, STEPWISE_MICRO), prebuilt (deps/prebuilt, when
its build id matches this checkout, this node's torch and its C libraries: scripts/prebuilt.py), or built here.
Building is the last resort on a lent node: only the targets the pass needs, with a fixed budget, and `-j` from the
CPUs this process may run on, capped by the memory it may use (a compiler through torch's headers takes up to 2 GB),
never from os.cpu_count(), which in a container can be the host's count. Then the libraries the binary really loads."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import prebuilt

from verify.judges import results_under
from verify.line import Line
from verify.runner import Cmd, Outcome, Verifier
from verify.target import BUILD, ROOT

GTESTS = tuple(n for n in prebuilt.BINARIES if n.endswith("_tests"))
# What each pass runs: pass 1 needs ablate alone; pass 2 the micro-benchmarks and the GoogleTests that need CUDA; pass
# 3 ablate and the micro-benchmarks (Muon's launches).
NEEDS = {1: ("ablate",), 2: ("ablate", "stepwise_micro", *GTESTS), 3: ("ablate", "stepwise_micro")}
# Binaries of one's own instead: a file each, and for the GoogleTests the folder that holds them.
GIVEN_BY = {"ablate": "STEPWISE_BIN", "stepwise_micro": "STEPWISE_MICRO", **{n: "STEPWISE_GTESTS_DIR" for n in GTESTS}}


def given(name: str) -> Path | None:
    value = os.environ.get(GIVEN_BY.get(name, ""))
    if not value:
        return None
    return Path(value) / name if GIVEN_BY[name].endswith("_DIR") else Path(value)


JOB_BYTES = 2 * 2**30
MIN_CMAKE = (3, 25)
MIN_GXX = (11,)


def deps() -> Path:
    return Path(os.environ.get("STEPWISE_DEPS") or ROOT / "deps").resolve()


def cgroup_cpus() -> float | None:
    """The CPU quota of this process's cgroup (v2 cpu.max: "max 100000" or "400000 100000"), in CPUs."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def available_memory() -> int | None:
    """Bytes this process may still take: MemAvailable, or less where its cgroup's memory.max says so."""
    found = []
    try:
        meminfo = Path("/proc/meminfo").read_text()
        m = re.search(r"^MemAvailable:\s+(\d+) kB", meminfo, re.M)
        if m:
            found.append(int(m.group(1)) * 1024)
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            found.append(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def jobs() -> tuple[int, str]:
    """Parallel compile jobs, and why that many."""
    cpus = len(os.sched_getaffinity(0))
    quota = cgroup_cpus()
    memory = available_memory()
    limits = [cpus] + ([int(quota)] if quota else []) + ([memory // JOB_BYTES] if memory is not None else [])
    n = max(1, min(limits))
    why = f"{cpus} CPUs allowed" + (f", a quota of {quota:g}" if quota else "")
    why += f", {memory / 2**30:.0f} GiB available at 2 GiB a job" if memory is not None else ", memory unknown"
    return n, why


def version_tuple(text: str) -> tuple[int, ...]:
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(x) for x in found.groups() if x is not None) if found else ()


def build_cmds(v: Verifier) -> list[Cmd]:
    """Decides how each binary the pass needs is had; returns the commands of a build, or none."""
    needed = NEEDS[v.pass_no]
    plan = {"given": {}, "prebuilt": [], "refused": [], "absent": False, "build": [], "note": "", "ident": None}
    v.build_plan = plan
    for name in needed:
        if given(name):
            v.binaries[name] = given(name)
            plan["given"][name] = GIVEN_BY[name]
    rest = [n for n in needed if n not in v.binaries]
    ident = prebuilt.load_id(deps())
    plan["absent"] = bool(rest) and ident is None
    if rest and ident is not None:
        plan["refused"] = prebuilt.mismatch(ident, ROOT, v.info, deps())
        if not plan["refused"]:
            plan["ident"], plan["prebuilt"] = ident, rest
            v.binaries.update({n: prebuilt.binary(deps(), n) for n in rest})
            v.extra_env.update(prebuilt.environment(v.info, deps()))
            plan["note"] = prebuilt.source_dir_link(ident, ROOT)
            v.cleanup.append(lambda: prebuilt.remove_source_dir_link(ident, ROOT))
            rest = []
    if not rest:
        return []
    plan["build"] = rest
    v.binaries.update({n: BUILD / prebuilt.BINARIES[n] for n in rest})
    n, plan["jobs"] = jobs()
    plan["j"] = n
    configure = [
        Cmd(
            [
                "cmake",
                "-S",
                ROOT,
                "-B",
                BUILD,
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DSTEPWISE_PYTHON={v.python}",
            ]
        )
    ]
    return [
        Cmd(["cmake", "--version"], cap=15),
        Cmd(["g++", "-dumpfullversion", "-dumpversion"], cap=15),
        *(configure if not (BUILD / "build.ninja").exists() else []),
        Cmd(["cmake", "--build", BUILD, "--target", *rest, "-j", str(n)]),
    ]


def judge_build(v: Verifier, o: Outcome) -> Iterable[Line]:
    plan = v.build_plan
    v.build_tried = True
    how = [f"{n}: given by {e}" for n, e in plan["given"].items()]
    ident = plan["ident"]
    if ident:
        needs = ", ".join(f"{k.upper()}_{x}" for k, x in sorted((ident.get("needs") or {}).items()))
        how.append(
            f"{', '.join(plan['prebuilt'])}: prebuilt in deps/prebuilt (sources {ident['sources']}, torch "
            f"{ident['torch']}, {ident['compiler']}, needs {needs})" + (f"; {plan['note']}" if plan["note"] else "")
        )
    lines = []
    if plan["refused"]:
        lines.append(Line("prebuilt binaries in deps/prebuilt", "SKIP", "", "not used: " + "; ".join(plan["refused"])))
    elif plan["absent"]:
        lines.append(
            Line("prebuilt binaries in deps/prebuilt", "SKIP", "", "none (scripts/setup.sh --bundle carries them)")
        )
    if plan["build"]:
        lines += list(tool_lines(o))
        how.append(build_figure(v, o))
    missing = [f"{n} ({p})" for n, p in v.binaries.items() if n in NEEDS[v.pass_no] and not p.is_file()]
    v.built = not missing
    path = f"binaries for pass {v.pass_no}"
    if not missing:
        status, reason, kind = "PASS", "", ""
        ninja = BUILD / "build.ninja"
        if (
            plan["build"]
            and v.gpu
            and ninja.exists()
            and "STEPWISE_WITH_CUDA=1" not in ninja.read_text("utf-8", "replace")
        ):
            status, kind = "FAIL", "build"
            reason = "built without CUDA on a GPU machine: nvcc or torch's CUDA was not found (see logs/build.log)"
    else:
        status, kind = "FAIL", "time" if o.over_time else "build"
        reason = ("over its time; " if o.over_time else "") + "missing: " + ", ".join(missing)
        reason += f": {v.log_tail('build')}" if plan["build"] else ""
    return [Line(path, status, "; ".join(how), reason, kind=kind), *lines]


def build_figure(v: Verifier, o: Outcome) -> str:
    ninja = BUILD / "build.ninja"
    text = ninja.read_text(errors="replace") if ninja.exists() else ""
    cuda = "ON" if "STEPWISE_WITH_CUDA=1" in text else "OFF" if text else "?"
    return (
        f"{', '.join(v.build_plan['build'])}: built in {o.seconds:.0f} s with -j {v.build_plan['j']} "
        f"({v.build_plan['jobs']}); CUDA paths {cuda}"
    )


def tool_lines(o: Outcome) -> Iterable[Line]:
    """cmake and g++ only matter when something is built; a line only when one is missing or too old."""
    for ran, name, least in zip(o.ran[:2], ("cmake", "g++"), (MIN_CMAKE, MIN_GXX)):
        have = version_tuple(ran.output) if ran.code == 0 else ()
        if not have or have[: len(least)] < least:
            want = ".".join(map(str, least))
            reason = f"{name}: {ran.status_text()} {ran.output.strip()[-200:]}"
            yield Line(f"{name} >= {want}", "FAIL", ".".join(map(str, have)), reason, kind="tool")


def libraries_cmds(v: Verifier) -> list[Cmd]:
    """A two-step CPU row: its result names the CUDA libraries the process loaded."""
    args = ["--preset=tiny", "--device=cpu", "--warmup=1", "--min-steps=2", "--max-steps=2", "--no-progress"]
    return [Cmd([v.bin("ablate"), *args, f"--out={v.work / 'results' / 'libraries'}"])]


def judge_libraries(v: Verifier, o: Outcome) -> Iterable[Line]:
    path = "CUDA libraries loaded (one runtime, torch's own)"
    docs = results_under(o.directory)
    if not docs:
        reason = f"{o.last().status_text()}: {v.log_tail('libraries')}"
        return [Line(path, "FAIL", "", reason, kind="time" if o.over_time else "ablate")]
    libs = docs[0]["env"].get("libraries") or {}
    if not libs:
        return [Line(path, "SKIP", "", "this build loads no CUDA library")]
    torch_cuda = (libs.get("torch_cuda") or [""])[0]
    site = Path(torch_cuda).resolve().parents[2] if torch_cuda else None  # site-packages/torch/lib/x -> site-packages
    problems = [f"{k}: {len(p)} files loaded ({', '.join(p)})" for k, p in libs.items() if len(p) > 1]
    for key in ("cudart", "cupti"):
        for p in libs.get(key, []):
            if site and not Path(p).resolve().is_relative_to(site):
                problems.append(f"{key} from {p}, not from torch's wheel under {site}")
    figure = "; ".join(f"{k}: {Path(p[0]).parent}" for k, p in sorted(libs.items()) if k in ("cudart", "cupti"))
    return [Line(path, "FAIL" if problems else "PASS", figure, "; ".join(problems), kind="ld_library_path")]
