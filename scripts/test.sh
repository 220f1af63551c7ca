#!/usr/bin/env bash
# The test command: set up what is missing, build, then run every test with ctest — the C++ unit tests, the
# Python tests of ./report, the smoke run of each binary, and one small CPU suite end to end through ./report.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STEPWISE_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/build.sh" --quiet
cd "$BUILD"
ctest --output-on-failure -j "${STEPWISE_JOBS:-$(nproc)}" "$@"
