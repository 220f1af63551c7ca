#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/../python" "$0" "$@"'
"""ctest's COST for the tests that take long, committed (tests/costs.txt), so that a fresh clone starts them first.

ctest -j starts tests in descending COST and keeps each run's timings in the build's
Testing/Temporary/CTestCostData.txt; a fresh clone has none, so it starts them in the order they were declared and
the longest end-to-end test, declared late, ran alone at the end for ten minutes. tests/CMakeLists.txt reads the
committed table into each test's COST. This refreshes it from a build's cost data (after a full ./scripts/test.sh).

  test_costs.py [--from BUILD/Testing/Temporary/CTestCostData.txt] [--min-seconds 5] [--out tests/costs.txt]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = """\
# ctest's COST (seconds, as one machine measured them) for each test that takes long: ctest -j starts the costliest
# first, so the long end-to-end tests do not start last and run alone. tests/CMakeLists.txt reads this file; refresh it
# after a full ./scripts/test.sh with scripts/dev/test_costs.py. Tests not listed cost 0 and fill the gaps.
"""


def read_cost_data(path: Path) -> dict[str, float]:
    """CTestCostData.txt: `name runs average-seconds` per line until a `---` line (then the last run's failures)."""
    costs = {}
    for line in path.read_text().splitlines():
        if line.startswith("---"):
            break
        name, _, seconds = line.rsplit(" ", 2)
        costs[name] = float(seconds)
    return costs


def declared_tests(cmake: Path = ROOT / "tests" / "CMakeLists.txt") -> set[str]:
    """The tests tests/CMakeLists.txt declares: each add_test with a plain name, and each GoogleTest binary's shards
    (`stepwise_test(binary shards ...)` makes unit.<binary>.0 ... unit.<binary>.<shards-1>)."""
    text = cmake.read_text()
    names = {n for n in re.findall(r"add_test\(NAME (\S+)", text) if "$" not in n}
    for binary, shards in re.findall(r"^stepwise_test\((\w+) (\d+)", text, re.M):
        names |= {f"unit.{binary}.{k}" for k in range(int(shards))}
    return names


def table(costs: dict[str, float], min_seconds: float, declared: set[str]) -> str:
    rows = sorted(((c, n) for n, c in costs.items() if c >= min_seconds and n in declared), reverse=True)
    return HEADER + "".join(f"{name} {seconds:.0f}\n" for seconds, name in rows)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="test_costs.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--from", dest="source", type=Path, default=ROOT / "build" / "Testing" / "Temporary" / "CTestCostData.txt"
    )
    p.add_argument("--min-seconds", type=float, default=5.0, help="list the tests at least this long (5)")
    p.add_argument("--out", type=Path, default=ROOT / "tests" / "costs.txt")
    args = p.parse_args(argv)
    if not args.source.is_file():
        print(f"test_costs: no cost data at {args.source}: run ./scripts/test.sh first", file=sys.stderr)
        return 2
    args.out.write_text(table(read_cost_data(args.source), args.min_seconds, declared_tests()))
    print(f"test_costs: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
