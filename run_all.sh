#!/usr/bin/env bash
# The main job: set up and build if needed, run every suite on this machine, then write the report.
#
#   ./run_all.sh                      defaults pick the device: gpt2-124m at sequence 1024 on a GPU,
#                                     the `tiny` preset on a CPU (minutes; the end prints how long it took)
#   ./run_all.sh --preset=gpt2-medium any ./ablate option applies to every suite
#
# Environment (CI uses these; .github/workflows/benchmarks.yml):
#   STEPWISE_RUN_DIR      where the results go (default: results/<stamp>_all)
#   STEPWISE_REPORT_DIR   where the report goes (default: reports/)
#   STEPWISE_SUITES       the suites, space-separated (default: raschka karpathy one_at_a_time leave_one_out memory fp8)
#   STEPWISE_PYTHON_ROWS  the Python rows beside the baseline and the last configuration of each cumulative suite
#                         (default: python-eager,python-compile; empty: none)
#   STEPWISE_TARGET_LOSS  the validation loss the time-to-target step trains each flag to (default on a CPU without
#                         options: 6.8 at tiny; on a GPU the step runs only when this is set)
#
# Every line of progress is flushed as it happens, so a CI log streams.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
read -r -a SUITES <<<"${STEPWISE_SUITES:-raschka karpathy one_at_a_time leave_one_out memory fp8}"
PYTHON_ROWS="${STEPWISE_PYTHON_ROWS-python-eager,python-compile}"

"$ROOT/scripts/build.sh" --quiet || exit 1
RUN_ID="$(date -u +%Y%m%dT%H%M%SZ)_all"
OUT="${STEPWISE_RUN_DIR:-$ROOT/results/$RUN_ID}"
RUN_ID="$(basename "$OUT")"
REPORT_DIR="${STEPWISE_REPORT_DIR:-$ROOT/reports}"
began=$SECONDS
status=0
for suite in "${SUITES[@]}"; do
  echo
  echo "================ suite $suite ($(( (SECONDS - began) / 60 )) min so far) ================"
  rows=()
  # Python beside C++ at the two ends of each cumulative suite: the same baseline, and everything together.
  if [[ -n "$PYTHON_ROWS" && ( "$suite" == raschka || "$suite" == karpathy ) ]]; then
    rows=(--implementations="libtorch,$PYTHON_ROWS" --implementations-at=ends)
  fi
  "$ROOT/ablate" --suite="$suite" --out="$OUT" --run-id="$RUN_ID" "${rows[@]}" "$@"
  rc=$?
  case $rc in
    0) ;;
    1) status=1 ;;                                  # some configuration failed: recorded, go on
    2) echo "run_all: usage error, stopping" >&2; exit 2 ;;
    130|143) echo "run_all: interrupted; results so far are in $OUT (./ablate --resume $OUT finishes a suite)" >&2
             exit $rc ;;
    *) echo "run_all: suite $suite ended with status $rc" >&2; status=1 ;;
  esac
done

# Time to a target loss on the built-in corpus (docs/convergence.md): the one-at-a-time flags trained to a validation
# loss on three seeds, with the convergence guard. A CPU runs the README's example at tiny; on a GPU the target
# depends on the model chosen, so it runs when STEPWISE_TARGET_LOSS says which.
CORPUS_META="${STEPWISE_CORPUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/corpus}/fortunes/meta.json"
HAS_GPU=$(command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)
TARGET_LOSS="${STEPWISE_TARGET_LOSS:-}"
target_args=()
if [[ -z "$TARGET_LOSS" && "$HAS_GPU" -eq 0 && $# -eq 0 ]]; then
  TARGET_LOSS=6.8
  target_args=(--preset=tiny --device=cpu --eval-every=20 --seeds=3 --max-steps=1000 --lr=3e-3)
fi
echo
if [[ ! -f "$CORPUS_META" ]]; then
  echo "================ time to target: skipped (the fortunes corpus is not built: scripts/setup.sh --corpus fortunes) ================"
elif [[ -z "$TARGET_LOSS" ]]; then
  echo "================ time to target: skipped (set STEPWISE_TARGET_LOSS=L to train each flag to L on the corpus) ================"
else
  echo "================ time to target: loss $TARGET_LOSS on corpus:fortunes ($(( (SECONDS - began) / 60 )) min so far) ================"
  "$ROOT/ablate" --suite=one_at_a_time --data=corpus:fortunes --target-loss="$TARGET_LOSS" --out="$OUT/to_target" \
    --run-id="${RUN_ID}_target" "${target_args[@]}" "$@"
  rc=$?
  case $rc in
    0) ;;
    130|143) echo "run_all: interrupted; results so far are in $OUT" >&2; exit $rc ;;
    *) status=1 ;;
  esac
fi

# Several GPUs: the final configuration of Raschka's table on every GPU (data parallel) and on one, for the
# report's scaling efficiency (his 4x A100 row).
GPUS=$(command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)
if [[ "$GPUS" -gt 1 ]]; then
  ALL_FLAGS="dynamic_mask,tf32,fused_adamw,pinned_memory,bf16,native_layers,flash,compile,vocab_padding"
  for n in 1 "$GPUS"; do
    echo
    echo "================ data parallel: $n GPU(s) ================"
    "$ROOT/ablate" --enable="$ALL_FLAGS" --bf16-mode=pure --nproc-per-node="$n" --out="$OUT/ddp_${n}gpu" \
      --run-id="${RUN_ID}_ddp${n}" "$@" || status=1
  done
  # Beside it, the same with AdamW's state sharded across the GPUs (ZeRO-1): each holds 1/GPUS of the moments.
  echo
  echo "================ data parallel + zero1: $GPUS GPU(s) ================"
  "$ROOT/ablate" --enable="$ALL_FLAGS,zero1" --bf16-mode=pure --nproc-per-node="$GPUS" --out="$OUT/zero1_${GPUS}gpu" \
    --run-id="${RUN_ID}_zero1${GPUS}" "$@" || status=1
fi

echo
"$ROOT/report" "$OUT" --out "$REPORT_DIR" || status=1
echo
echo "results: $OUT"
echo "report:  $REPORT_DIR/report.md  (dashboard: $REPORT_DIR/dashboard.html)"
echo "run_all: $(( (SECONDS - began) / 60 )) min $(( (SECONDS - began) % 60 )) s"
exit $status
