#!/usr/bin/env bash
# The main job: set up and build if needed, run every suite on this machine, then write the report.
#
#   ./run_all.sh                      defaults pick the device: gpt2-124m at sequence 1024 on a GPU,
#                                     the `mini` preset on a CPU (the whole run takes minutes)
#   ./run_all.sh --preset=gpt2-medium any ./ablate option applies to every suite
#
# Results: results/<stamp>_all/<suite>/NN_<step>.json   Report: reports/ (report.md, plots/, dashboard.html, exports/)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITES=(raschka karpathy one_at_a_time leave_one_out)

"$ROOT/scripts/build.sh" --quiet || exit 1
RUN_ID="$(date -u +%Y%m%dT%H%M%SZ)_all"
OUT="$ROOT/results/$RUN_ID"
status=0
for suite in "${SUITES[@]}"; do
  echo
  echo "================ suite $suite ================"
  "$ROOT/ablate" --suite="$suite" --out="$OUT" --run-id="$RUN_ID" "$@"
  rc=$?
  case $rc in
    0) ;;
    1) status=1 ;;                                  # some configuration failed: recorded, go on
    2) echo "run_all: usage error, stopping" >&2; exit 2 ;;
    130) echo "run_all: interrupted; results so far are in $OUT" >&2; exit 130 ;;
    *) echo "run_all: suite $suite ended with status $rc" >&2; status=1 ;;
  esac
done

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
fi

echo
"$ROOT/report" "$OUT" --out "$ROOT/reports" || status=1
echo
echo "results: $OUT"
echo "report:  $ROOT/reports/report.md  (dashboard: $ROOT/reports/dashboard.html)"
exit $status
