#!/usr/bin/env bash
# The test command: set up what is missing, build, then run every test with ctest — the C++ unit tests, the
# Python tests of ./report, the smoke run of each binary, and one small CPU suite end to end through ./report.
# The end prints the 15 slowest ctest tests and the 15 slowest pytest cases inside them, so the cost is seen.
#   ./scripts/test.sh [--quick] [CTEST_ARGUMENTS...]
#   --quick   only the quick tier (ctest -L quick): the unit tests, the smoke runs, the structure and format checks,
#             for the inner loop between edits; CI and the README's test command run everything
# Any other arguments go to ctest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STEPWISE_BUILD_DIR:-$ROOT/build}"
SELECT=()
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "${BASH_SOURCE[0]}"  # the comment above
  exit 0
fi
if [[ "${1:-}" == "--quick" ]]; then
  SELECT=(-L quick)
  shift
fi
"$ROOT/scripts/build.sh" --quiet
cd "$BUILD"
LOG="$(mktemp -t stepwise-ctest.XXXXXX)"
# Every test's output, pytest's --durations lines among them, in a JUnit file of this run's own: CTest's
# Testing/Temporary/LastTest.log is rewritten by any later ctest in the build (tests/scripts/test_test_costs.py runs
# `ctest --show-only`), which once left the pytest summary empty. Passed tests' output kept whole (CTest keeps 1 KiB).
JUNIT="$(mktemp -t stepwise-junit.XXXXXX)"
trap 'rm -f "$LOG" "$JUNIT"' EXIT
status=0
ctest --output-on-failure -j "${STEPWISE_JOBS:-$(nproc)}" --output-junit "$JUNIT" --test-output-size-passed 1048576 \
  "${SELECT[@]}" "$@" | tee "$LOG" || status=$?

echo
# The summary never decides the exit status: that is the tests' alone.
"$ROOT/scripts/dev/slowest_tests.sh" "$LOG" "$JUNIT" || echo "(the slowest-tests summary failed)"
exit $status
