#!/usr/bin/env bash
# The test command: set up what is missing, build, then run every test with ctest — the C++ unit tests, the
# Python tests of ./report, the smoke run of each binary, and one small CPU suite end to end through ./report.
# The end prints the 15 slowest ctest tests and the 15 slowest pytest cases inside them, so the cost is seen.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STEPWISE_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/build.sh" --quiet
cd "$BUILD"
LOG="$(mktemp -t stepwise-ctest.XXXXXX)"
trap 'rm -f "$LOG"' EXIT
status=0
ctest --output-on-failure -j "${STEPWISE_JOBS:-$(nproc)}" "$@" | tee "$LOG" || status=$?

echo
echo "The 15 slowest tests (ctest, seconds):"
sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+.* ([0-9.]+) sec$/\2 \1/p' "$LOG" | sort -rn | head -15 |
  awk '{ printf "  %8.1f  %s\n", $1, $2 }'
# pytest's --durations lines (tests/CMakeLists.txt asks each pytest run for them), from every test's output.
if [[ -f Testing/Temporary/LastTest.log ]]; then
  echo "The 15 slowest pytest cases (seconds):"
  grep -hE '^[0-9.]+s (call|setup|teardown) ' Testing/Temporary/LastTest.log | sort -rn | head -15 |
    awk '{ printf "  %8.1f  %s %s\n", $1, $2, $3 }'
fi
exit $status
