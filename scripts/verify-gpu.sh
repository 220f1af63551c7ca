#!/usr/bin/env bash
# One command on a lent GPU machine (offline; carry deps/): build with every core, run every GPU path of stepwise under
# a time budget, and write verify.md, verify.json and verify-artifacts.tar.gz into --out. Under 9 minutes on one H100.
# On a CPU it runs what it can and records every GPU step as SKIP with the reason. See scripts/verify_gpu.py.
#   scripts/verify-gpu.sh --out DIR [--budget-scale F]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="$("$ROOT/scripts/setup.sh" --python)"
exec "$PYTHON" "$ROOT/scripts/verify_gpu.py" "$@"
