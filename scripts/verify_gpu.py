"""Verifies the GPU paths of stepwise on a lent GPU machine in two passes (scripts/verify-gpu.sh is the entry point).

A lent GPU is offline and held for minutes (15 in all, of which the node's start takes one or two, and one command
may run ten), so a pass is a declared table of steps (verify/steps.py), each with a budget, under one deadline: pass
1 answers the essential questions within 6 minutes from the command's start, pass 2 the rest within 8. Each step's
outcome is one or more lines of verify.md: PASS, FAIL or SKIP, with a figure or the reason. A step that raises, runs
over its time or crashes fails on its own line and the pass goes on. verify.md and verify.json are rewritten after
every step, so a kill at any moment leaves every finished line; at the end --out holds exactly three files:
verify.md, verify.json and verify-artifacts.tar.gz (results, logs, JUnit, the report: never weights, always under
16 MiB). Everything else lives in a work directory outside --out (the system's temp dir) that is removed at the end.

The binaries come prebuilt in deps/prebuilt when their build id fits the checkout and the node's torch
(scripts/prebuilt.py); otherwise the pass builds only what it runs. The GPU checks themselves are tests: the
GoogleTests that need CUDA, and the properties only a GPU run settles, the pytest tests in tests/gpu over the pass's
own results. On a CPU every GPU step is a SKIP with the reason; --rehearse-on-cpu runs the same tables at
--device=cpu --preset=tiny, so a CPU machine rehearses both passes (tests/scripts/test_rehearse_gpu.py).
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

from verify.archive import write_archive  # noqa: E402
from verify.record import Line  # noqa: E402
from verify.runner import Stopped, Verifier, run_steps, stop_group  # noqa: E402
from verify.steps import CAPS, CLOSING_S, TABLES  # noqa: E402
from verify.summary import write_reports  # noqa: E402
from verify.target import GPU, REHEARSAL  # noqa: E402

OUTPUTS = ("verify.md", "verify.json", "verify-artifacts.tar.gz")


def parse_step_budgets(ap: argparse.ArgumentParser, items: list[str], pass_no: int) -> dict[str, float]:
    names = [s.name for s in TABLES[pass_no]]
    budgets = {}
    for item in items:
        name, _, seconds = item.partition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = -1
        if name not in names or value <= 0:
            ap.error(
                f"--step-budget {item!r}: want STEP=SECONDS, SECONDS > 0, STEP one of pass {pass_no}'s "
                f"{', '.join(names)}"
            )
        budgets[name] = value
    return budgets


def check_out(ap: argparse.ArgumentParser, out: Path) -> None:
    if out.exists() and not out.is_dir():
        ap.error(f"--out {out} is a file; give a directory (new or empty)")
    others = sorted(p.name for p in out.iterdir() if p.name not in OUTPUTS) if out.is_dir() else []
    if others:
        ap.error(
            f"--out {out} holds other files ({', '.join(others[:5])}); give a new or empty directory: it "
            f"receives exactly {', '.join(OUTPUTS)}"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"cannot create --out {out}: {e}")


def setup_line(v: Verifier) -> None:
    """scripts/verify-gpu.sh ran scripts/setup.sh --python before verify; its status and log come along."""
    status, log = os.environ.get("STEPWISE_VERIFY_SETUP_STATUS"), os.environ.get("STEPWISE_VERIFY_SETUP_LOG")
    if log and Path(log).is_file():
        shutil.copy(log, v.work / "logs" / "setup.log")
    if status is None:
        return
    path = "scripts/setup.sh --python (the interpreter and deps/site)"
    if status == "0":
        v.add(Line(path, "PASS", f"{v.python}; PYTHONPATH={os.environ.get('PYTHONPATH', '')}", step="setup"))
    else:
        reason = f"exit {status}; going on with {v.python}: {v.log_tail('setup', 2)}"
        v.add(Line(path, "FAIL", "", reason, "setup", "setup"))


def close(v: Verifier, error: str, end: float) -> None:
    """verify.md and verify.json first (what every finished step found), then the archive, then both again naming
    the archive."""
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out",
        required=True,
        type=Path,
        help="a new or empty directory: verify.md, verify.json and verify-artifacts.tar.gz go there, nothing else "
        "(scripts/verify-gpu.sh's default: reports/gpu/<date>-<gpu>/pass<N>, where the report is committed)",
    )
    ap.add_argument(
        "--pass",
        dest="pass_no",
        type=int,
        choices=sorted(TABLES),
        default=1,
        help=f"1: the essential lines, within {CAPS[1]} s; 2: the rest, within {CAPS[2]} s (default 1)",
    )
    ap.add_argument("--budget-scale", type=float, default=1.0, help="multiplies the cap and every step's budget")
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
    args = ap.parse_args(argv)
    if args.budget_scale <= 0:
        ap.error("--budget-scale must be a positive number")
    budgets = parse_step_budgets(ap, args.step_budget, args.pass_no)
    out = args.out.resolve()
    check_out(ap, out)
    # The clock started with scripts/verify-gpu.sh: its setup counts against the cap.
    started = float(os.environ.get("STEPWISE_VERIFY_STARTED") or time.time())
    began = time.monotonic() - max(0.0, min(time.time() - started, 600.0))
    cap = CAPS[args.pass_no] * args.budget_scale
    work = Path(tempfile.mkdtemp(prefix="stepwise-verify-"))  # outside --out: scratch never lands there
    for sub in ("logs", "junit", "results", "scratch", "tmp"):
        (work / sub).mkdir()
    v = Verifier(
        out=out,
        work=work,
        target=REHEARSAL if args.rehearse_on_cpu else GPU,
        rehearsal=args.rehearse_on_cpu,
        deadline=began + cap - CLOSING_S,
        table=TABLES[args.pass_no],
        pass_no=args.pass_no,
        scale=args.budget_scale,
        step_budgets=budgets,
        began=began,
        on_step=write_reports,
    )

    def stop(signum, _frame):
        raise Stopped(f"{signal.Signals(signum).name} after {time.monotonic() - v.began:.0f} s")

    handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    error = ""
    try:
        setup_line(v)
        write_reports(v)
        run_steps(v)
    except Stopped as e:
        error = f"verify received {e}; the steps after it did not run"
    except Exception as e:  # noqa: BLE001 — a bug here must still leave the three files
        error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if v.proc is not None:
            stop_group(v.proc)
        try:
            close(v, error, began + cap - 2)
        finally:
            for undo in v.cleanup:
                undo()
            shutil.rmtree(work, ignore_errors=True)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return 1 if any(l.status == "FAIL" for l in v.lines) else 0


if __name__ == "__main__":
    sys.exit(main())
