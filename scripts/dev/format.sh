#!/usr/bin/env bash
# Formats the tree: clang-format for C++ (.clang-format), ruff for Python (ruff.toml). With --check it changes nothing
# and fails naming every file that is not formatted or does not lint; the test command runs that (ctest
# structure.format). Both tools come from scripts/setup.sh: Debian's clang-format, ruff pinned in requirements.txt.
#   scripts/dev/format.sh [--check]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
CHECK=0
case "${1:-}" in
  --check) CHECK=1 ;;
  -h | --help) sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "${BASH_SOURCE[0]}"; exit 0 ;;  # the comment above
  "") ;;
  *) echo "format: unknown option '$1' (valid: --check, --help)" >&2; exit 2 ;;
esac
PYTHON="${STEPWISE_PYTHON:-$("$ROOT/scripts/setup.sh" --python)}"
CLANG_FORMAT="$(command -v clang-format-14 || command -v clang-format || true)"
if [[ -z "$CLANG_FORMAT" ]]; then
  echo "format: clang-format is missing; scripts/setup.sh installs it (Debian's clang-format)" >&2
  exit 1
fi
if ! "$PYTHON" -m ruff --version >/dev/null 2>&1; then
  echo "format: ruff is missing from $PYTHON; scripts/setup.sh installs it (scripts/requirements.txt)" >&2
  exit 1
fi
mapfile -t CXX < <(git ls-files '*.cpp' '*.h')
mapfile -t PY < <(git ls-files '*.py')
if [[ $CHECK == 0 ]]; then
  "$CLANG_FORMAT" -i "${CXX[@]}"
  "$PYTHON" -m ruff check --fix --quiet "${PY[@]}" || true  # what it cannot fix is reported by --check
  "$PYTHON" -m ruff format --quiet "${PY[@]}"
  exit 0
fi
status=0
if ! out="$("$CLANG_FORMAT" --dry-run --Werror "${CXX[@]}" 2>&1)"; then
  grep -oE '^[^: ]+:[0-9]+:[0-9]+: error' <<<"$out" | cut -d: -f1 | sort -u | sed 's/^/format: not formatted: /' >&2
  status=1
fi
"$PYTHON" -m ruff format --check --quiet "${PY[@]}" || status=1
"$PYTHON" -m ruff check --quiet "${PY[@]}" || status=1
if [[ $status != 0 ]]; then echo "format: run scripts/dev/format.sh to format the tree" >&2; fi
exit $status
