#!/usr/bin/env bash
# The end of the test command: the 15 slowest ctest tests from ctest's console log ($1), and the 15 slowest pytest
# cases from every test's output ($2, where it exists: the run's --output-junit file, or a LastTest.log), so the cost
# of the suite is seen on every run.
# A script of its own so that tests/scripts/test_slowest_tests.py can feed it a log as long as CI's.
#   scripts/dev/slowest_tests.sh CTEST_LOG [JUNIT_OR_LAST_TEST_LOG]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "${BASH_SOURCE[0]}"  # the comment above
  exit 0
fi
CTEST_LOG="$1"
OUTPUTS="${2:-}"

echo "The 15 slowest tests (ctest, seconds):"
# awk, not head, takes the first 15: it reads to the end, so sort never dies of SIGPIPE, which pipefail would
# turn into the test command's exit status (141) after every test had passed.
sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+.* ([0-9.]+) sec$/\2 \1/p' "$CTEST_LOG" | sort -rn |
  awk 'NR <= 15 { printf "  %8.1f  %s\n", $1, $2 }'
# pytest's --durations lines (tests/CMakeLists.txt asks each pytest run for them), from every test's output.
if [[ -n "$OUTPUTS" && -f "$OUTPUTS" ]]; then
  echo "The 15 slowest pytest cases (seconds):"
  { grep -hE '^[0-9.]+s (call|setup|teardown) ' "$OUTPUTS" || true; } | sort -rn |
    awk 'NR <= 15 { printf "  %8.1f  %s %s\n", $1, $2, $3 }'
fi
