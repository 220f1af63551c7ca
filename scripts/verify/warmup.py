"""The warm-up of a call, before the passes' clock starts: scripts/setup.sh --python (its offline checks, which import
torch once), the probe (every package the steps import, torch, and the first device call, each timed), and whether
the prebuilt binaries fit this node. On a fresh node these are cold (a cold page cache, a cold CUDA initialisation)
and take what they take; inside a step's window they once cost the whole GPU answer (issue 38). Here each is capped
on its own, reported with its time, and what it costs comes out of the call's deadline, so the steps at the end of
the call lose it, never the preflight. Its answer tells each pass, before its first step, whether there is a GPU and
whether the build step has anything to do."""

from __future__ import annotations

import os
import time

import prebuilt

from verify.binaries import NEEDS, deps, given
from verify.line import Line
from verify.preflight import probe_cmd, probe_info
from verify.runner import Cmd, Ran, Verifier
from verify.target import ROOT

# Offline, setup gives up on a registry in 5 s and on any install in 30; its cold torch import is the rest.
SETUP_CAP_S = 120
# A cold torch import and CUDA initialisation on a fresh node: 10-40 s seen, 20 s more injected in the tests.
PROBE_CAP_S = 120


def found_python(ran: Ran) -> str:
    """setup.sh --python prints the interpreter last on stdout (its own words go to stderr, in the same log)."""
    lines = [l.strip() for l in ran.output.splitlines() if l.strip() and not l.startswith(("$ ", "["))]
    last = lines[-1] if lines and ran.code == 0 else ""
    return last if last and os.access(last, os.X_OK) else ""


def build_is_instant(pass_no: int, fits: bool) -> bool:
    """The pass's build step has nothing to do: every binary it needs is given (STEPWISE_BIN, STEPWISE_MICRO,
    STEPWISE_GTESTS_DIR) or prebuilt and fitting this node."""
    return all(given(n) or fits for n in NEEDS[pass_no])


def warm_up(v: Verifier) -> dict:
    """Runs the warm-up on the first pass's verifier (its lines open that pass's verify.md) and returns what it
    found: the interpreter, the probe, whether the prebuilt fits, and its seconds."""
    began = time.monotonic()
    # setup.sh names the interpreter unless one was given (an empty STEPWISE_PYTHON is none): not the one running verify
    given = {"STEPWISE_PYTHON": os.environ.get("STEPWISE_PYTHON", "")}
    setup = v.run_cmd("setup", Cmd([ROOT / "scripts" / "setup.sh", "--python"], given), SETUP_CAP_S)
    python = found_python(setup) or os.environ.get("STEPWISE_PYTHON") or v.python
    os.environ["STEPWISE_PYTHON"] = v.python = python  # every process of the call, both passes
    path = "scripts/setup.sh --python (the interpreter, deps/site, setup's offline checks)"
    figure = f"{python}; PYTHONPATH={os.environ.get('PYTHONPATH', '')}"
    if setup.code == 0:
        v.add(Line(path, "PASS", figure, step="warmup", seconds=round(setup.seconds, 1)))
    else:
        reason = f"{setup.status_text()}; going on with {python}: {v.log_tail('setup', 2)}"
        v.add(Line(path, "FAIL", "", reason, "warmup", "setup", seconds=round(setup.seconds, 1)))

    probe = v.run_cmd("warmup", probe_cmd(v, PROBE_CAP_S), PROBE_CAP_S)
    info = probe_info(probe)
    torch = ((info or {}).get("packages") or {}).get("torch") or {}
    if info is None:
        v.add(
            Line(
                "torch import, timed (the first: cold)",
                "FAIL",
                "",
                f"{python}: {probe.status_text()} after {probe.seconds:.0f} s: {v.log_tail('warmup', 2)}",
                "warmup",
                "setup",
                round(probe.seconds, 1),
            )
        )
    else:
        status = "PASS" if "version" in torch else "FAIL"
        figure = f"torch {torch.get('version')} in {torch.get('seconds', 0):.1f} s" if status == "PASS" else ""
        v.add(Line("torch import, timed (the first: cold)", status, figure, torch.get("error", ""), "warmup", "setup"))
        cuda = "CUDA initialisation and a first kernel, timed"
        if info.get("cuda"):
            v.add(Line(cuda, "PASS", f"{info['cuda']} in {info.get('cuda_init_s', 0):.1f} s", step="warmup"))
        else:
            reason = info.get("torch_error") or "no CUDA device: the GPU steps are skipped (or rehearsed on the CPU)"
            v.add(Line(cuda, "SKIP", "", reason, "warmup"))

    ident = prebuilt.load_id(deps())
    fits, said = prebuilt.verdict(ident, ROOT, info or {}, deps())
    v.add(
        Line(
            "prebuilt binaries for this node (scripts/prebuilt.py check)",
            "PASS" if fits else "SKIP",
            said if fits else "",
            "" if fits else said,
            "warmup",
        )
    )
    seconds = time.monotonic() - began
    return {"python": python, "probe": probe, "info": info, "fits": fits, "said": said, "seconds": seconds}


def warmup_line(v: Verifier, seconds: float, deadline_s: float, left: float) -> None:
    v.add(
        Line(
            "warm-up, before the passes' clock",
            "PASS",
            f"{seconds:.0f} s of the call's {deadline_s:.0f} s; the passes have {left:.0f} s",
            step="warmup",
            seconds=round(seconds, 1),
        )
    )


def started_at(env_value: str | None) -> float:
    """time.monotonic() of the command's start (scripts/verify-gpu.sh's first line), for the call's deadline."""
    started = float(env_value or time.time())
    return time.monotonic() - max(0.0, min(time.time() - started, 600.0))
