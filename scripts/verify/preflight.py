"""The preflight: what a lent node has before anything runs on it. The Python packages the steps import (checked one
by one, never assumed of an image), the GPU (its name, compute capability, memory, driver), the GPU's clocks, power
and throttle reasons at the start, its compute mode, an LD_LIBRARY_PATH that would load the toolkit's CUDA runtime
before the torch wheel's, and Python.h for torch.compile's Triton.

The probe that imports the packages and initialises CUDA runs once, in the warm-up before the passes' clock
(verify/warmup.py), since on a cold node it takes what it takes (a cold torch import, a first device call of 20 s);
the preflight step of each pass reads its answer and asks nvidia-smi for the GPU's state at that pass's start."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from verify.line import Line
from verify.runner import Cmd, Outcome, Ran, Verifier
from verify.target import ROOT

SCRIPTS = ROOT / "scripts"
# What the Python rows, ./report and the gpu tests import, with what each is needed for; torch last, since a missing
# package shows in seconds and torch's import takes them.
PYTHON_PACKAGES = {
    "numpy": "the Python rows and ./report",
    "scipy": "./report's gate statistics",
    "matplotlib": "./report's plots",
    "pytest": "the gpu tests (tests/gpu)",
    "safetensors": "the Python rows (the C++ row's initial weights)",
    "jsonschema": "./report's validation of every result (without it reports run unvalidated)",
    "torch": "everything",
}
# Each import and the first device call are timed: a cold node's slow start is a figure of the warm-up, not a guess.
PREFLIGHT_PY = r"""
import importlib, json, os, sys, sysconfig, time
out = {"python": sys.executable, "version": "%d.%d" % sys.version_info[:2], "packages": {}}
# --as-node: the node's image in front of this interpreter (verify/node_python/sitecustomize.py), with its size
out["as_node"] = getattr(sys.modules.get("sitecustomize"), "IMAGE_SIZE", None)
for name in sys.argv[2:]:
    began = time.monotonic()
    try:
        out["packages"][name] = {"version": str(getattr(importlib.import_module(name), "__version__", "?"))}
    except BaseException as e:
        out["packages"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
    out["packages"][name]["seconds"] = round(time.monotonic() - began, 2)
inc = sysconfig.get_paths().get("include") or ""
out["python_h"] = os.path.join(inc, "Python.h") if os.path.exists(os.path.join(inc, "Python.h")) else None
out["include"] = inc
try:
    import torch
    sys.path.insert(0, sys.argv[1])
    import prebuilt
    out.update(prebuilt.torch_libraries())
    began = time.monotonic()
    if torch.cuda.is_available():
        torch.zeros(1, device="cuda").sum().item()  # the context and a kernel: what the first row would pay
        p = torch.cuda.get_device_properties(0)
        out["cuda"] = p.name
        out["gpu"] = {"capability": "%d.%d" % (p.major, p.minor), "memory_gib": round(p.total_memory / 2**30, 1),
                      "sms": p.multi_processor_count, "count": torch.cuda.device_count()}
    else:
        out["cuda"] = None
    out["cuda_init_s"] = round(time.monotonic() - began, 2)
except BaseException as e:
    out["cuda"] = None
    out["torch_error"] = "%s: %s" % (type(e).__name__, e)
print("PREFLIGHT " + json.dumps(out))
"""
# nvidia-smi's answer, one GPU a line. The state is asked apart: a driver that lacks one of its fields refuses the
# whole query, and the identity must still come back.
SMI_IDENTITY = "name,driver_version,compute_mode"
SMI_STATE = "clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active"
# NVML's clocks-event reasons by bit (nvml.h); the ones that hold clocks below what the GPU would run at throttle.
THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
THROTTLING = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


def probe_cmd(v: Verifier, cap: float) -> Cmd:
    """The warm-up's probe: the packages, torch, and CUDA's initialisation, each timed."""
    return Cmd([v.python, "-c", PREFLIGHT_PY, SCRIPTS, *PYTHON_PACKAGES], cap=cap)


def probe_info(probe: Ran | None) -> dict | None:
    found = re.search(r"^PREFLIGHT (.*)$", probe.output, re.M) if probe else None
    return json.loads(found.group(1)) if found else None


def know(v: Verifier, info: dict | None) -> None:
    """What the probe found, on the pass: its device (or why there is none), before its first step claims time."""
    v.info = info or {}
    if info is None:
        v.no_gpu_reason = f"no GPU: {v.python} could not run the preflight"
    elif info.get("cuda"):
        v.gpu = f"{info['cuda']} (torch {info.get('torch')}, CUDA {info.get('torch_cuda')})"
    else:
        v.no_gpu_reason = (
            "no GPU: " + info["torch_error"]
            if info.get("torch_error")
            else f"no GPU: torch {info.get('torch')} sees no CUDA device (torch.cuda.is_available() is False)"
        )


def preflight_cmds(v: Verifier) -> list[Cmd]:
    return [
        Cmd(["nvidia-smi", f"--query-gpu={SMI_IDENTITY}", "--format=csv,noheader"], cap=10),
        Cmd(["nvidia-smi", f"--query-gpu={SMI_STATE}", "--format=csv,noheader,nounits"], cap=10),
    ]


def judge_preflight(v: Verifier, o: Outcome) -> Iterable[Line]:
    probe = v.probe or Ran(["<the warm-up's probe did not run>"], 127, 0.0)
    identity, state = o.ran
    found = re.search(r"^PREFLIGHT (.*)$", probe.output, re.M)
    if not found:
        v.no_gpu_reason = f"no GPU: {v.python} could not run the preflight"
        yield Line(
            "python: torch and the packages the steps import",
            "FAIL",
            "",
            f"{v.python}: {probe.status_text()}: " + probe.output.strip()[-300:],
            kind="setup",
        )
    else:
        v.info = json.loads(found.group(1))
        yield from package_lines(v, v.info)
        yield python_h_line(v, v.info)
    yield gpu_line(v, identity)
    yield clocks_line(state)
    yield compute_mode_line(identity)
    yield ld_library_path_line()


def package_lines(v: Verifier, info: dict) -> Iterable[Line]:
    packages = info["packages"]
    know(v, info)
    have = [f"{n} {p['version']}" for n, p in packages.items() if "version" in p]
    yield Line(
        f"python {info['version']}: the packages the steps import",
        "PASS" if len(have) == len(packages) else "FAIL",
        f"{info['python']}: " + ", ".join(have),
        "" if len(have) == len(packages) else "missing: " + ", ".join(n for n, p in packages.items() if "error" in p),
        kind="package",
    )
    for name, p in packages.items():
        if "error" in p:
            yield Line(f"python package {name} (for {PYTHON_PACKAGES[name]})", "FAIL", "", p["error"], kind="package")


def python_h_line(v: Verifier, info: dict) -> Line:
    """torch.compile's Triton builds a C launcher against Python.h; an image without python3-dev has none. Headers
    bundled in deps/ (scripts/setup.sh --bundle) are put on CPATH for every later step. Neither pass runs a
    torch.compile Python row, so a missing Python.h is said, not failed."""
    path = "Python.h for torch.compile (Triton compiles its launcher against it)"
    if info.get("python_h"):
        return Line(path, "PASS", info["python_h"])
    version = info["version"]
    bundled = Path(os.environ.get("STEPWISE_DEPS") or ROOT / "deps") / f"python{version}" / "include"
    if (bundled / f"python{version}" / "Python.h").exists():
        v.extra_env["CPATH"] = os.pathsep.join(
            filter(None, [str(bundled / f"python{version}"), str(bundled), os.environ.get("CPATH")])
        )
        return Line(path, "PASS", f"not in {info['include']}; the bundled {bundled} is on CPATH for the steps")
    reason = f"neither {info['include']} nor {bundled} has it: a torch.compile Python row (./run_all.sh) would fail"
    return Line(path, "SKIP", "", reason, kind="python_h")


def smi_rows(ran: Ran) -> list[list[str]]:
    return [
        [f.strip() for f in line.split(",")]
        for line in ran.output.splitlines()
        if "," in line and not line.startswith(("$", "["))
    ]


def gpu_line(v: Verifier, identity: Ran) -> Line:
    """The GPU the passes run on: what a reader of the numbers needs first."""
    path = "GPU: name, compute capability, memory, driver"
    gpu = v.info.get("gpu") or {}
    if not v.gpu:
        return Line(path, "SKIP", "", v.no_gpu_reason)
    rows = smi_rows(identity) if identity.code == 0 else []
    driver = rows[0][1] if rows and len(rows[0]) > 1 else f"nvidia-smi {identity.status_text()}"
    figure = (
        f"{v.info.get('cuda')}: compute capability {gpu.get('capability')}, {gpu.get('memory_gib')} GiB, "
        f"{gpu.get('sms')} SMs ({gpu.get('count')} GPU{'s' if gpu.get('count', 1) > 1 else ''}); driver {driver}; "
        f"torch {v.info.get('torch')}, CUDA {v.info.get('torch_cuda')}"
    )
    return Line(path, "PASS", figure)


def throttle_reasons(mask: int) -> list[str]:
    return [name for bit, name in THROTTLE_BITS.items() if mask & bit]


def clocks_line(state: Ran) -> Line:
    """The GPU's clocks, power, temperature and throttle reasons before the first row: a GPU already held down (by
    power, heat or another tenant) makes every row slower, and each row's own gpu_state says so again."""
    path = "GPU state at the start: clocks, power, temperature, throttle reasons"
    if state.code == 127 and not state.output.strip():
        return Line(path, "SKIP", "", "no nvidia-smi on PATH")
    rows = smi_rows(state) if state.code == 0 else []
    if not rows:
        return Line(path, "SKIP", "", f"nvidia-smi {state.status_text()}: {state.output.strip()[-200:]}")
    parts, throttled = [], []
    for i, r in enumerate(rows):
        sm, mem, power, limit, temp, reasons = (r + [""] * 6)[:6]
        try:
            mask = int(reasons, 16)
        except ValueError:
            mask = 0
        names = throttle_reasons(mask)
        throttled += [f"GPU {i}: {n}" for bit, n in THROTTLE_BITS.items() if mask & bit & THROTTLING]
        parts.append(
            f"{f'GPU {i}: ' if len(rows) > 1 else ''}SM {sm} MHz, memory {mem} MHz, {power} W of {limit} W, "
            f"{temp} C, reasons: {', '.join(names) or 'none'}"
        )
    figure = "; ".join(parts) + (f"; THROTTLED before the first row ({', '.join(throttled)})" if throttled else "")
    return Line(path, "PASS", figure)


def compute_mode_line(identity: Ran) -> Line:
    path = "GPU compute mode (Default lets the gtests and the Python rows open a second context)"
    if identity.code == 127 and not identity.output.strip():
        return Line(path, "SKIP", "", "no nvidia-smi on PATH")
    if identity.code is None:
        return Line(path, "FAIL", "", "nvidia-smi did not answer within its 10 s", kind="compute_mode")
    modes = [r[-1] for r in smi_rows(identity)]
    if identity.code != 0 or not modes:
        return Line(path, "SKIP", "", f"nvidia-smi {identity.status_text()}: {identity.output.strip()[-200:]}")
    bad = [m for m in modes if m != "Default"]
    return Line(
        path,
        "FAIL" if bad else "PASS",
        ", ".join(modes),
        "a second process cannot open a CUDA context on this GPU" if bad else "",
        kind="compute_mode",
    )


def ld_library_path_line() -> Line:
    """The toolkit's libcudart or libcupti on LD_LIBRARY_PATH loads before the torch wheel's own (RUNPATH)."""
    path = "LD_LIBRARY_PATH leaves the torch wheel's CUDA runtime and CUPTI in charge"
    hits = []
    for d in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        hits += [os.path.join(d, n) for n in names if re.match(r"lib(cudart|cupti)\.so", n)]
    if hits:
        return Line(path, "FAIL", "", "would load first: " + ", ".join(sorted(hits)[:4]), kind="ld_library_path")
    return Line(path, "PASS", "no libcudart or libcupti on it")
