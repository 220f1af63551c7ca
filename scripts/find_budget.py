#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""The budget search's old command line, kept for the callers that still use it: it runs ./ablate --find-budget, which
is the search now (docs/convergence.md#the-budget-search). Its options become --find-budget's: --first, --ratio and
--last the grid's (--budget-first, --budget-ratio, --budget-last), --out the search's folder, and the ./ablate
arguments after -- pass as they are. Standard library only, so any python3 runs it.

    scripts/find_budget.py --first=40 --ratio=1.5 --out=results/budget -- --suite=speedrun --preset=tiny \\
        --device=cpu --data=corpus:fortunes --target-loss=2.8 --eval-every=5 --eval-batches=4 --max-steps=400 \\
        --lr=3e-3 --target-seeds=5
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ablate_command(argv: list[str]) -> list[str]:
    """The ./ablate --find-budget command these old options ask for."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ablate", default=str(ROOT / "ablate"), help="the ablate binary")
    ap.add_argument("--first", type=int, help="the grid's first budget (--budget-first)")
    ap.add_argument("--ratio", type=float, help="the grid's ratio between budgets (--budget-ratio)")
    ap.add_argument("--last", type=int, help="the grid's last budget, at most --max-steps (--budget-last)")
    ap.add_argument("--out", required=True, help="the search's folder: budget.json and budget_<N>/ (--out)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the ./ablate arguments of the suite")
    a = ap.parse_args(argv)
    given = (("first", a.first), ("ratio", a.ratio), ("last", a.last))
    grid = [f"--budget-{name}={value:g}" for name, value in given if value is not None]
    return [a.ablate, "--find-budget", *grid, f"--out={a.out}", *(x for x in a.args if x != "--")]


def main(argv: list[str] | None = None) -> int:
    command = ablate_command(sys.argv[1:] if argv is None else argv)
    print("find_budget: " + " ".join(command), file=sys.stderr, flush=True)
    os.execv(command[0], command)  # its exit status is ./ablate's: 2 a usage error, 1 a probe failed


if __name__ == "__main__":
    sys.exit(main())
