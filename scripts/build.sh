#!/usr/bin/env bash
# Configures (once) and builds stepwise into build/, after scripts/setup.sh has installed what is missing.
#   scripts/build.sh [--quiet]
#   STEPWISE_BUILD_DIR  build directory (default: build/)
#   STEPWISE_JOBS       parallel compile jobs (default: all cores)
#   STEPWISE_CMAKE_ARGS extra cache settings, given to every configure (scripts/dev/mutants.py: -DSTEPWISE_TEST_CASES=ON)
#   --quiet             print the build's output only when it fails
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STEPWISE_BUILD_DIR:-$ROOT/build}"
QUIET=0
case "${1:-}" in
  --quiet) QUIET=1 ;;
  -h | --help) sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "${BASH_SOURCE[0]}"; exit 0 ;;  # the comment above
esac

PYTHON="$("$ROOT/scripts/setup.sh" --python)"
mkdir -p "$BUILD"
LOG="$BUILD/build.log"
if [[ ! -f "$BUILD/build.ninja" ]]; then
  echo "[build] configuring and building stepwise in $BUILD (the first build takes a few minutes)" >&2
elif [[ $QUIET == 1 ]] && ninja -C "$BUILD" -n 2>/dev/null | grep -q '^\['; then
  echo "[build] rebuilding stepwise" >&2
fi
{
  if [[ ! -f "$BUILD/build.ninja" ]]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTEPWISE_PYTHON="$PYTHON" ${STEPWISE_CMAKE_ARGS:-}
  elif [[ -n "${STEPWISE_CMAKE_ARGS:-}" ]]; then
    cmake ${STEPWISE_CMAKE_ARGS} "$BUILD"  # a build configured before keeps these settings too
  fi
  cmake --build "$BUILD" -j "${STEPWISE_JOBS:-$(nproc)}"
} >"$LOG" 2>&1 &
BUILD_PID=$!
if [[ $QUIET == 0 ]]; then tail -n +1 -f "$LOG" --pid=$BUILD_PID; fi
if ! wait $BUILD_PID; then
  [[ $QUIET == 1 ]] && cat "$LOG" >&2
  echo "[build] failed; the log is $LOG" >&2
  exit 1
fi
