#!/usr/bin/env bash
# One command on a lent GPU machine (offline; carry deps/ from scripts/setup.sh --bundle): pass 1 answers the essential
# questions within 6 minutes of this command's start, pass 2 the rest within 8, each writing verify.md, verify.json
# and verify-artifacts.tar.gz into --out (default reports/gpu/<date>-<gpu>/pass<N>, where the report is committed).
# The prebuilt binary in deps/prebuilt is used when it fits; otherwise the pass builds only what it runs. On a CPU
# every GPU step is a SKIP with the reason. See scripts/verify_gpu.py and docs/offline-gpu.md.
#   scripts/verify-gpu.sh --pass 1|2 [--out DIR] [--budget-scale F] [--step-budget STEP=S] [--rehearse-on-cpu]
#
# The interpreter (scripts/setup.sh --python) and the bundled packages' path (scripts/setup.sh --pythonpath) are
# found once and exported, so the build, the rows, the tests and ./report all use the same ones. If verify_gpu.py
# cannot run at all, this script still writes the three files, saying why.
set -uo pipefail
export STEPWISE_VERIFY_STARTED="${STEPWISE_VERIFY_STARTED:-$(date +%s.%N)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="${STEPWISE_DEPS:-$ROOT/deps}"

OUT=""
PASS=1
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --out) OUT="${args[$((i + 1))]:-}" ;;
    --out=*) OUT="${args[$i]#--out=}" ;;
    --pass) PASS="${args[$((i + 1))]:-1}" ;;
    --pass=*) PASS="${args[$i]#--pass=}" ;;
  esac
done
# The report of a pass is committed under reports/gpu/<date>-<gpu>/: that is where it goes unless --out says otherwise.
if [[ -z "$OUT" ]]; then
  gpu="$(timeout 10 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  slug="$(echo "${gpu:-cpu}" | tr '[:upper:]' '[:lower:]' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')"
  OUT="$ROOT/reports/gpu/$(date -u +%Y-%m-%d)-${slug:-gpu}/pass$PASS"
  set -- "$@" --out "$OUT"
  echo "verify-gpu: writing into $OUT"
fi

# The corpus the time-to-target step trains on: the node's own cache, else the copy the bundle carries.
if [[ -z "${STEPWISE_CORPUS_DIR:-}" && -f "$DEPS/corpus/fortunes/meta.json" &&
      ! -f "${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/corpus/fortunes/meta.json" ]]; then
  export STEPWISE_CORPUS_DIR="$DEPS/corpus"
fi

# An offline node: a registry that does not answer costs seconds, not the deadline.
export STEPWISE_NET_TIMEOUT="${STEPWISE_NET_TIMEOUT:-5}"
LOGS="$(mktemp -d -t stepwise-verify-sh.XXXXXX)"
trap 'rm -rf "$LOGS"' EXIT
STOPPED=0  # a SIGTERM during setup: verify does not start, and the three files say so
trap 'STOPPED=1' TERM INT
PYTHON="$("$ROOT/scripts/setup.sh" --python 2>"$LOGS/setup.log")"
export STEPWISE_VERIFY_SETUP_STATUS=$?
export STEPWISE_VERIFY_SETUP_LOG="$LOGS/setup.log"
[[ -n "$PYTHON" ]] || PYTHON="${STEPWISE_PYTHON:-python3}"
export STEPWISE_PYTHON="$PYTHON"
export PYTHONPATH="$("$ROOT/scripts/setup.sh" --pythonpath 2>>"$LOGS/setup.log")"
[[ -n "$PYTHONPATH" ]] || unset PYTHONPATH

# A SIGTERM or Ctrl-C (a scheduler's time limit) goes to verify, which stops its step and still writes its files.
if [[ $STOPPED == 0 ]]; then
  "$PYTHON" -u "$ROOT/scripts/verify_gpu.py" "$@" > >(tee "$LOGS/verify.log") 2> >(tee "$LOGS/verify.err" >&2) &
  VERIFY_PID=$!
  trap 'kill -TERM "$VERIFY_PID" 2>/dev/null' TERM INT
  wait "$VERIFY_PID"
  status=$?
  while kill -0 "$VERIFY_PID" 2>/dev/null; do  # wait returned early for the signal: verify is still writing
    wait "$VERIFY_PID"
    status=$?
  done
else
  echo "verify-gpu: stopped by a signal during scripts/setup.sh" >"$LOGS/verify.log"
  status=143
fi
trap - TERM INT

# 0: all passed, 1: a line failed, 2: bad arguments (nothing written). Anything else, or no verify.md: verify_gpu.py
# itself could not finish, and the three files say so.
if [[ -n "$OUT" && $status -ne 2 && ( ! -f "$OUT/verify.md" || ! -f "$OUT/verify.json" ) ]]; then
  mkdir -p "$OUT" && rm -f "$OUT/verify.md" "$OUT/verify.json" "$OUT/verify-artifacts.tar.gz"
  {
    echo "# verify-gpu: scripts/verify_gpu.py did not finish"
    echo
    echo "| path | status | figure |"
    echo "|---|---|---|"
    echo "| scripts/verify_gpu.py with $PYTHON | FAIL | exit $status before writing its report; its output ends below |"
    echo
    echo "## When a line fails"
    echo
    echo "- verify: check that $PYTHON runs (scripts/setup.sh --python names the interpreter; STEPWISE_PYTHON overrides it), then send this file with the archive."
    echo
    echo '```'
    tail -n 40 "$LOGS/verify.log" "$LOGS/verify.err" "$LOGS/setup.log" 2>/dev/null
    echo '```'
  } >"$OUT/verify.md"
  printf '{"pass": '"$PASS"', "device": null, "seconds": null, "counts": {"PASS": 0, "FAIL": 1, "SKIP": 0}, "error": "scripts/verify_gpu.py exited with status %s before writing its report (python: %s)", "lines": [{"path": "scripts/verify_gpu.py", "status": "FAIL", "figure": "", "reason": "exit %s", "step": "verify", "kind": "verify", "seconds": null, "budget_s": null}]}\n' \
    "$status" "${PYTHON//\"/}" "$status" >"$OUT/verify.json"
  tar -czf "$OUT/verify-artifacts.tar.gz" -C "$LOGS" --transform 's,^,verify-artifacts/logs/,' verify.log verify.err setup.log
  [[ $status -eq 0 ]] && status=1
fi
exit "$status"
