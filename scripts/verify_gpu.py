"""Verifies the GPU paths of stepwise on a lent GPU machine in one call (scripts/verify-gpu.sh is the entry point).

A lent GPU is offline and held for minutes (15 in all, of which the node's start takes one or two, one command may
run ten, and the machine stays warm only briefly between commands), so both passes run in one command: a warm-up
(setup's checks, a cold torch import, CUDA's initialisation, each timed, before the passes' clock), then pass 1 (the
essential lines), then pass 2 (the rest) with whatever pass 1 left, all before --deadline-s from the command's start;
pass 3 (what one step dispatches, issue 42) is a second call of its own, made at once while the node is still warm.
A pass is a declared table of steps (verify/steps.py), each with a budget, and the call prints the exact table it
will use before the first step. Each step's outcome is one or more lines of verify.md: PASS, FAIL or SKIP, with a
figure or the reason. A step that raises, runs over its time or crashes fails on its own line and the call goes on.
verify.md and verify.json are rewritten after every step, so a kill at any moment leaves every finished line; at the
end --out/pass<N> holds exactly three files: verify.md, verify.json and verify-artifacts.tar.gz (results, logs, JUnit,
the report: never weights, always under 16 MiB). Everything else lives in a work directory outside --out (the
system's temp dir) that is removed at the end. --help and a usage error write nothing; a pass's folder is created
when the pass starts.

The binaries come prebuilt in deps/prebuilt when their build id fits the checkout and the node's torch
(scripts/prebuilt.py); otherwise the pass builds only what it runs. The GPU checks themselves are tests: the
GoogleTests that need CUDA, and the properties only a GPU run settles, the pytest tests in tests/gpu over the pass's
own results. On a CPU every GPU step is a SKIP with the reason; --rehearse-on-cpu runs the same tables at
--device=cpu --preset=tiny, so a CPU machine rehearses both passes (tests/scripts/test_rehearse_gpu.py); with --as-node
every Python process of it imports only what the node's image holds and what deps/site carries (verify/as_node.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify import as_node  # noqa: E402
from verify.archive import write_archive  # noqa: E402
from verify.bundle_check import check_bundle  # noqa: E402
from verify.line import Line, say  # noqa: E402
from verify.preflight import know  # noqa: E402
from verify.runner import Stopped, Verifier, run_steps, stop_group  # noqa: E402
from verify.steps import CALL_S, CLOSING_S, SECOND_CALL_S, TABLES, budget_table  # noqa: E402
from verify.summary import write_reports  # noqa: E402
from verify.target import GPU, REHEARSAL  # noqa: E402
from verify.warmup import build_is_instant, started_at, warm_up, warmup_line  # noqa: E402

OUTPUTS = ("verify.md", "verify.json", "verify-artifacts.tar.gz")


def parse_passes(ap: argparse.ArgumentParser, text: str) -> list[int]:
    try:
        passes = [int(p) for p in text.split(",")]
    except ValueError:
        passes = []
    if not passes or any(p not in TABLES for p in passes) or passes != sorted(set(passes)):
        ap.error(
            f"--passes {text!r}: want one or more of {', '.join(map(str, sorted(TABLES)))}, comma-separated, "
            "in order (1,2: both in one call; 2: pass 2 alone)"
        )
    return passes


def parse_step_budgets(ap: argparse.ArgumentParser, items: list[str], passes: list[int]) -> dict[str, float]:
    names = list(dict.fromkeys(s.name for p in passes for s in TABLES[p]))
    budgets = {}
    for item in items:
        name, _, seconds = item.partition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = -1
        if name not in names or value <= 0:
            which = " and ".join(str(p) for p in passes)
            ap.error(
                f"--step-budget {item!r}: want STEP=SECONDS, SECONDS > 0, STEP one of pass {which}'s {', '.join(names)}"
            )
        budgets[name] = value
    return budgets


def check_out(ap: argparse.ArgumentParser, out: Path) -> None:
    """--out is new, or holds only what an earlier call wrote (pass<N>/ with the three files); it is not created
    here: a pass creates its own folder when it starts, so a usage error or --help leaves nothing behind."""
    if out.exists() and not out.is_dir():
        ap.error(f"--out {out} is a file; give a directory (new or empty)")
    others = []
    for p in sorted(out.iterdir()) if out.is_dir() else []:
        own = p.is_dir() and p.name in {f"pass{n}" for n in TABLES}
        others += [p.name] if not own else [f"{p.name}/{q.name}" for q in p.iterdir() if q.name not in OUTPUTS]
    if others:
        ap.error(
            f"--out {out} holds other files ({', '.join(others[:5])}); give a new or empty directory: it receives "
            f"pass<N>/ with exactly {', '.join(OUTPUTS)} in each"
        )
    parent = next(p for p in [out, *out.parents] if p.exists())
    if not os.access(parent, os.W_OK | os.X_OK):
        ap.error(f"cannot create --out {out}: {parent} is not writable")


def close(v: Verifier, error: str, end: float, node: bool = False) -> None:
    """verify.md and verify.json first (what every finished step found), then the archive, then both again naming
    the archive. `node`: the rehearsal of the node's interpreter, whose last line names what the image lacked."""
    if node:
        v.add(as_node.hidden_line(v))
    if error:
        v.add(Line("verify itself", "FAIL", "", error.splitlines()[0], kind="verify"))
    write_reports(v, error)
    try:
        write_archive(v, end)
    except Exception as e:  # noqa: BLE001
        v.add(Line("verify-artifacts.tar.gz", "FAIL", "", f"{type(e).__name__}: {e}", kind="verify"))
        (v.out / "verify-artifacts.tar.gz").unlink(missing_ok=True)
        with tarfile.open(v.out / "verify-artifacts.tar.gz", "w:gz"):
            pass  # an empty archive: the three files are always there
    write_reports(v, error, closing=True)


def arguments() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="scripts/verify-gpu.sh", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out",
        type=Path,
        help="a new or empty directory: pass<N>/verify.md, verify.json and verify-artifacts.tar.gz go there, nothing "
        "else (scripts/verify-gpu.sh's default: reports/gpu/<date>-<gpu>/, where the reports are committed)",
    )
    ap.add_argument(
        "--passes",
        "--pass",
        dest="passes",
        default="1,2",
        help="which passes, in one call: 1 (the essential lines), 2 (the rest), or 1,2 (default: pass 2 runs with "
        "the time pass 1 left); 3 (what one step dispatches: ops, kernels and launches) is the second call's",
    )
    ap.add_argument(
        "--deadline-s",
        type=float,
        help=f"seconds from the command's start by which the call ends, its files written (default {CALL_S} x "
        f"--budget-scale: a lent node's command may run 600 s, and --out must still come back; {SECOND_CALL_S} x "
        "--budget-scale for --passes 3, what the device time leaves the second call)",
    )
    ap.add_argument("--budget-scale", type=float, default=1.0, help="multiplies every step's budget and the deadline")
    ap.add_argument(
        "--step-budget",
        action="append",
        default=[],
        metavar="STEP=SECONDS",
        help="cap one step's time (e.g. to rehearse a step that runs over)",
    )
    ap.add_argument(
        "--rehearse-on-cpu",
        action="store_true",
        help="run the GPU steps too, at --device=cpu --preset=tiny: a CPU rehearsal of the GPU call",
    )
    ap.add_argument(
        "--as-node",
        action="store_true",
        help="with --rehearse-on-cpu: every Python process imports only what the node's image holds "
        "(scripts/verify/node_image.txt) and what deps/site carries, as the node's python3 would",
    )
    ap.add_argument(
        "--check-bundle",
        action="store_true",
        help="run no pass: make deps/ for the working tree that travels when it does not fit it (scripts/setup.sh "
        "--bundle), then say when it was made, whether the prebuilt fits, its size against what a call carries, the "
        "node's packages in deps/site and any module the node's Python side imports that it would lack",
    )
    return ap


def main(argv=None) -> int:
    ap = arguments()
    args = ap.parse_args(argv)
    if args.check_bundle:
        return check_bundle()
    if args.out is None:
        ap.error("--out DIR is required (scripts/verify-gpu.sh gives reports/gpu/<date>-<gpu>/)")
    if args.budget_scale <= 0:
        ap.error("--budget-scale must be a positive number")
    if args.as_node and not args.rehearse_on_cpu:
        ap.error("--as-node rehearses the node's python on this machine: give it with --rehearse-on-cpu")
    if args.as_node and str(as_node.HOOK) not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        ap.error("--as-node needs scripts/verify-gpu.sh, which puts scripts/verify/node_python on PYTHONPATH")
    if args.deadline_s is not None and args.deadline_s <= 0:
        ap.error("--deadline-s must be a positive number of seconds")
    passes = parse_passes(ap, args.passes)
    budgets = parse_step_budgets(ap, args.step_budget, passes)
    out = args.out.resolve()
    check_out(ap, out)
    # The clock of the call started with scripts/verify-gpu.sh; the warm-up comes out of it, not out of a step.
    began = started_at(os.environ.get("STEPWISE_VERIFY_STARTED"))
    deadline_s = args.deadline_s or (SECOND_CALL_S if passes == [3] else CALL_S) * args.budget_scale
    end = began + deadline_s
    work = Path(tempfile.mkdtemp(prefix="stepwise-verify-"))  # outside --out: scratch never lands there

    def verifier(pass_no: int) -> Verifier:
        (work / f"pass{pass_no}").mkdir()
        for sub in ("logs", "junit", "results", "scratch", "tmp"):
            (work / f"pass{pass_no}" / sub).mkdir()
        return Verifier(
            out=out / f"pass{pass_no}",
            work=work / f"pass{pass_no}",
            target=REHEARSAL if args.rehearse_on_cpu else GPU,
            rehearsal=args.rehearse_on_cpu,
            deadline=end,
            table=TABLES[pass_no],
            pass_no=pass_no,
            scale=args.budget_scale,
            step_budgets=budgets,
            on_step=write_reports,
        )

    first = verifier(passes[0])
    current, calls = [first], [first]  # the pass now running; every pass of the call

    def stop(signum, _frame):
        raise Stopped(f"{signal.Signals(signum).name} after {time.monotonic() - began:.0f} s of the call")

    handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    error, cleanup = "", []
    try:
        say(
            f"verify-gpu: passes {','.join(map(str, passes))} into {out}, within {deadline_s:.0f} s of the "
            "command's start; the warm-up first"
        )
        if args.as_node:
            as_node.start_pass(first)
        warm = warm_up(first)
        if args.as_node:
            first.add(as_node.rehearsal_line(warm["python"], warm["info"]))
        calls += [verifier(p) for p in passes[1:]]
        for v in calls:
            v.python, v.probe = warm["python"], warm["probe"]
            know(v, warm["info"])
            v.instant = frozenset({"build"}) if build_is_instant(v.pass_no, warm["fits"]) else frozenset()
        # Each pass's steps end before its closing and the closings of the passes after it.
        for i, v in enumerate(calls):
            v.deadline = end - CLOSING_S * (len(calls) - i)
            v.later = calls[i + 1 :]
        warmup_line(first, warm["seconds"], deadline_s, first.deadline - time.monotonic())
        builds = {v.pass_no: "build" not in v.instant for v in calls}
        say(
            f"verify-gpu: the budgets of this call (deadline {deadline_s:.0f} s):\n"
            + budget_table(passes, args.budget_scale, builds, warm["seconds"])
        )
        for v in calls:
            current[0] = v
            if args.as_node:
                as_node.start_pass(v)
            v.began = time.monotonic()
            v.out.mkdir(parents=True, exist_ok=True)
            say(f"verify-gpu: pass {v.pass_no} writes into {v.out}")
            write_reports(v)
            try:
                run_steps(v)
            finally:
                cleanup += v.cleanup
                v.cleanup = []
            if v is not calls[-1]:
                close(v, "", v.deadline + CLOSING_S - 2, args.as_node)
    except Stopped as e:
        error = f"verify received {e}; the steps after it did not run"
    except Exception as e:  # noqa: BLE001 — a bug here must still leave the three files
        error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        v = current[0]
        if v.proc is not None:
            stop_group(v.proc)
        try:
            v.out.mkdir(parents=True, exist_ok=True)  # a stop during the warm-up: the first pass says so
            close(v, error, min(v.deadline + CLOSING_S, end) - 2, args.as_node)
        finally:
            for undo in cleanup + v.cleanup:
                undo()
            shutil.rmtree(work, ignore_errors=True)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return 1 if any(l.status == "FAIL" for v in calls for l in v.lines) else 0


if __name__ == "__main__":
    sys.exit(main())
