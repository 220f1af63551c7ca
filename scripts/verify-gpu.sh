#!/usr/bin/env bash
# One command on a lent GPU machine (offline; carry deps/ from scripts/setup.sh --bundle): a warm-up (setup's checks, a
# cold torch import, CUDA's initialisation), then pass 1 (the essential lines) and pass 2 (the rest, with the time
# pass 1 left), all within --deadline-s of this command's start (default 570: a lent node's command may run 600 s).
# Pass 3 (what one step dispatches: ops, kernels, launches) is a second call, made at once (default deadline 135 s).
# Each pass writes verify.md, verify.json and verify-artifacts.tar.gz into --out/pass<N> (default --out:
# reports/gpu/<date>-<gpu>/, where the reports are committed), verify.md rewritten after every step. The prebuilt
# binary in deps/prebuilt is used when it fits; otherwise a pass builds only what it runs. On a CPU every GPU step is
# a SKIP with the reason. See scripts/verify_gpu.py and docs/offline-gpu.md.
#   scripts/verify-gpu.sh [--passes 1,2|3] [--out DIR] [--deadline-s S] [--budget-scale F] [--step-budget STEP=S]
#                         [--rehearse-on-cpu [--as-node]]
#   scripts/verify-gpu.sh --check-bundle     here, before a call: make deps/ for the tree that travels if it does not
#                                            fit it, and say whether it fits the node (scripts/verify/bundle_check.py)
#
# The bundled packages' path (scripts/setup.sh --pythonpath: deps/site/pythonX.Y, installed by --bundle) is exported
# here, before the first Python process, so the warm-up, the build, the rows, the tests and ./report all import from
# the same places whatever runs first; the interpreter is found in verify's warm-up. --as-node (with
# --rehearse-on-cpu) puts the node's image in front of every Python process as well (scripts/verify/node_python). If
# verify_gpu.py cannot run at all, this script still writes the first pass's three files, saying why; --help and a
# usage error write nothing.
set -uo pipefail
export STEPWISE_VERIFY_STARTED="${STEPWISE_VERIFY_STARTED:-$(date +%s.%N)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="${STEPWISE_DEPS:-$ROOT/deps}"

OUT=""
FIRST=1  # the first pass of the call: where a report of verify_gpu.py's own failure goes
ASKS=0   # --help or --check-bundle: verify answers and runs nothing, so nothing is written for it
AS_NODE=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --out) OUT="${args[$((i + 1))]:-}" ;;
    --out=*) OUT="${args[$i]#--out=}" ;;
    --pass | --passes) FIRST="${args[$((i + 1))]:-1}" ;;
    --pass=* | --passes=*) FIRST="${args[$i]#*=}" ;;
    -h | --help | --check-bundle) ASKS=1 ;;
    --as-node) AS_NODE=1 ;;
  esac
done
FIRST="${FIRST%%,*}"
[[ "$FIRST" =~ ^[0-9]+$ ]] || FIRST=1
# The reports of a call are committed under reports/gpu/<date>-<gpu>/: that is where they go unless --out says
# otherwise. Named here, created only when a pass starts.
if [[ -z "$OUT" && $ASKS == 0 ]]; then
  gpu="$(timeout 10 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  slug="$(echo "${gpu:-cpu}" | tr '[:upper:]' '[:lower:]' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')"
  OUT="$ROOT/reports/gpu/$(date -u +%Y-%m-%d)-${slug:-gpu}"
  set -- "$@" --out "$OUT"
fi

# The corpus the time-to-target step trains on: the node's own cache, else the copy the bundle carries.
if [[ -z "${STEPWISE_CORPUS_DIR:-}" && -f "$DEPS/corpus/fortunes/meta.json" &&
      ! -f "${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/corpus/fortunes/meta.json" ]]; then
  export STEPWISE_CORPUS_DIR="$DEPS/corpus"
fi

# An offline node: a registry that does not answer costs seconds, and any one install half a minute, not the deadline.
export STEPWISE_NET_TIMEOUT="${STEPWISE_NET_TIMEOUT:-5}"
export STEPWISE_SETUP_TIMEOUT="${STEPWISE_SETUP_TIMEOUT:-30}"
LOGS="$(mktemp -d -t stepwise-verify-sh.XXXXXX)"
trap 'rm -rf "$LOGS"' EXIT
# verify_gpu.py needs only the standard library: the interpreter given, else python3 (on a lent node, the image's, with
# torch). Its warm-up finds the one whose torch the steps use (scripts/setup.sh --python) and exports it to them.
PYTHON="${STEPWISE_PYTHON:-python3}"
# The rehearsal of the node's interpreter: its hook first on the path of every Python process (verify's own included).
if [[ $AS_NODE == 1 ]]; then
  export PYTHONPATH="$ROOT/scripts/verify/node_python${PYTHONPATH:+:$PYTHONPATH}"
fi
# The bundle's packages for that interpreter, from the first process of the call: --bundle installed them.
export PYTHONPATH="$("$ROOT/scripts/setup.sh" --pythonpath "$PYTHON" 2>"$LOGS/setup.log")"
[[ -n "$PYTHONPATH" ]] || unset PYTHONPATH

# A SIGTERM or Ctrl-C (a scheduler's time limit) goes to verify, which stops its step and still writes its files.
"$PYTHON" -u "$ROOT/scripts/verify_gpu.py" "$@" > >(tee "$LOGS/verify.log") 2> >(tee "$LOGS/verify.err" >&2) &
VERIFY_PID=$!
trap 'kill -TERM "$VERIFY_PID" 2>/dev/null' TERM INT
wait "$VERIFY_PID"
status=$?
while kill -0 "$VERIFY_PID" 2>/dev/null; do  # wait returned early for the signal: verify is still writing
  wait "$VERIFY_PID"
  status=$?
done
trap - TERM INT

# 0: all passed, 1: a line failed, 2: bad arguments (nothing written). Anything else, or no verify.md for the first
# pass: verify_gpu.py itself could not finish, and that pass's three files say so. An answer (--help,
# --check-bundle) runs no pass and writes nothing, whatever its status.
OUT="${OUT:+$OUT/pass$FIRST}"
if [[ -n "$OUT" && $ASKS == 0 && $status -ne 2 && ( ! -f "$OUT/verify.md" || ! -f "$OUT/verify.json" ) ]]; then
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
  printf '{"pass": '"$FIRST"', "device": null, "seconds": null, "counts": {"PASS": 0, "FAIL": 1, "SKIP": 0}, "error": "scripts/verify_gpu.py exited with status %s before writing its report (python: %s)", "lines": [{"path": "scripts/verify_gpu.py", "status": "FAIL", "figure": "", "reason": "exit %s", "step": "verify", "kind": "verify", "seconds": null, "budget_s": null}]}\n' \
    "$status" "${PYTHON//\"/}" "$status" >"$OUT/verify.json"
  tar -czf "$OUT/verify-artifacts.tar.gz" -C "$LOGS" --transform 's,^,verify-artifacts/logs/,' verify.log verify.err setup.log
  [[ $status -eq 0 ]] && status=1
fi
exit "$status"
