#!/usr/bin/env bash
# The main job: set up and build if needed, plan the run, run every suite on this machine, then write the report.
#
#   ./run_all.sh                      defaults pick the device: gpt2-124m at sequence 1024 on a GPU,
#                                     the `tiny` preset on a CPU, within 15 minutes there
#   ./run_all.sh --preset=gpt2-medium any ./ablate option applies to every suite; a flag's option
#   ./run_all.sh --softcap=15         only to the suites that run its flag (none does: a usage error)
#   ./run_all.sh --budget-minutes=30  the time the plan must fit (default: 15 on a CPU, none on a GPU)
#   ./run_all.sh --gated              the run a CI gate compares: ci/gated-run.json's suites exactly, in rounds, no
#                                     plan (scripts/gated_run.py, docs/ci.md); extra ./ablate options are recorded
#   ./run_all.sh --like DIR           the same as the gated run in DIR: its definition, arguments and rounds, after
#                                     checking this machine is DIR's and runs every configuration DIR ran
#   ./run_all.sh --gated --against SRC  (or --like DIR --against SRC) the baseline's side too, in this job, from the
#                                     baseline's own build in the checkout SRC, interleaved row by row with this one
#                                     (into STEPWISE_BASELINE_RUN_DIR, default the run's folder + "-baseline")
#   ./run_all.sh --fingerprint        print this machine's fingerprint (what CI keys a runner's baseline by)
#   ./run_all.sh --build-commit       print the commit this build runs (CI builds a baseline's commit when it differs)
#
# Before the first suite it plans the run (scripts/plan_run.py): a short probe of this machine, every step's estimated
# minutes, and what it leaves out to fit the budget, each with the reason. The headers between steps show the
# planned minutes left; the end prints the planned and the actual minutes of every step.
#
# Environment (CI uses these; .github/workflows/benchmarks.yml):
#   STEPWISE_RUN_DIR      where the results go (default: results/<stamp>_all)
#   STEPWISE_REPORT_DIR   where the report goes (default: reports/)
#   STEPWISE_SUITES       the suites, space-separated (default: raschka karpathy one_at_a_time leave_one_out memory fp8)
#   STEPWISE_PYTHON_ROWS  the Python rows beside the baseline and the last configuration of each cumulative suite
#                         (default: python-eager,python-compile; empty: none)
#   STEPWISE_TARGET_LOSS  the validation loss the time-to-target step trains each flag to (default on a CPU without
#                         options: 6.8 at tiny; on a GPU the step runs only when this is set)
#   STEPWISE_TARGET_SUITES the suites trained to that loss, in order (default: one_at_a_time speedrun)
#   STEPWISE_GATED_DEFINITION the definition --gated runs (default: ci/gated-run.json)
#
# Every line of progress is flushed as it happens, so a CI log streams.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# --help: run_all's own usage, the comment above, before anything is built or handed to ./ablate (whose own options
# are ./ablate --help's).
for arg in "$@"; do
  if [[ $arg == -h || $arg == --help ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"
    echo "Any other option is ./ablate's, given to every suite: ./ablate --help lists them."
    exit 0
  fi
done
read -r -a SUITES <<<"${STEPWISE_SUITES:-raschka karpathy one_at_a_time leave_one_out memory fp8}"
PYTHON_ROWS="${STEPWISE_PYTHON_ROWS-python-eager,python-compile}"
BUDGET=""
GATED=""  # run (--gated), like (--like DIR), fingerprint or commit
LIKE=""
AGAINST=""
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --budget-minutes=*) BUDGET="${1#--budget-minutes=}" ;;
    --gated) GATED=run ;;
    --fingerprint) GATED=fingerprint ;;
    --build-commit) GATED=commit ;;
    --like=*) GATED=like LIKE="${1#--like=}" ;;
    --like)
      [[ $# -ge 2 ]] || { echo "run_all: --like needs the gated run to replay: --like DIR" >&2; exit 2; }
      GATED=like LIKE="$2"; shift ;;
    --against=*) AGAINST="${1#--against=}" ;;
    --against)
      [[ $# -ge 2 ]] || { echo "run_all: --against needs the baseline's checkout: --against SRC" >&2; exit 2; }
      AGAINST="$2"; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
set -- "${args[@]+"${args[@]}"}"
if [[ -n "$AGAINST" && ( -z "$GATED" || "$GATED" == fingerprint || "$GATED" == commit ) ]]; then
  echo "run_all: --against makes a gated run's baseline side: add --gated or --like DIR" >&2
  exit 2
fi

"$ROOT/scripts/build.sh" --quiet || exit 1
PYTHON="$("$ROOT/scripts/setup.sh" --python)"
ABLATE="${STEPWISE_BUILD_DIR:-$ROOT/build}/ablations/ablate"
RUN_ID="$(date -u +%Y%m%dT%H%M%SZ)_all"
[[ -n "$GATED" && "$GATED" != fingerprint && "$GATED" != commit ]] && RUN_ID="$(date -u +%Y%m%dT%H%M%SZ)_gated"
OUT="${STEPWISE_RUN_DIR:-$ROOT/results/$RUN_ID}"
RUN_ID="$(basename "$OUT")"
REPORT_DIR="${STEPWISE_REPORT_DIR:-$ROOT/reports}"

# A gated run takes no plan: the definition's suites exactly, in rounds (scripts/gated_run.py), then the report.
if [[ -n "$GATED" ]]; then
  gated=(--ablate="$ABLATE")
  [[ -n "${STEPWISE_GATED_DEFINITION:-}" && "$GATED" != like ]] && gated+=(--definition="$STEPWISE_GATED_DEFINITION")
  [[ "$GATED" == like ]] && gated+=(--like="$LIKE")
  BASE_OUT="${STEPWISE_BASELINE_RUN_DIR:-$OUT-baseline}"
  [[ -n "$AGAINST" ]] && gated+=(--against="$AGAINST" --baseline-out="$BASE_OUT")
  if [[ "$GATED" == fingerprint || "$GATED" == commit ]]; then
    exec "$PYTHON" "$ROOT/scripts/gated_run.py" "$GATED" "${gated[@]}" -- "$@"
  fi
  "$PYTHON" "$ROOT/scripts/gated_run.py" run --out="$OUT" "${gated[@]}" -- "$@"
  status=$?
  case $status in 2|3|130|143) exit $status ;; esac
  echo
  "$ROOT/report" "$OUT" --out "$REPORT_DIR" || status=1
  echo "results: $OUT (a gated run: $OUT/gated-run.json, one directory per round)"
  [[ -n "$AGAINST" ]] && echo "baseline side: $BASE_OUT (gate with: ./report compare $BASE_OUT $OUT --gate relative)"
  echo "report:  $REPORT_DIR/report.md"
  exit $status
fi
GPUS=$(command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)
[[ -z "$BUDGET" && "$GPUS" -eq 0 ]] && BUDGET=15

# Time to a target loss on the built-in corpus (docs/convergence.md): the one-at-a-time flags, then the speedrun's
# techniques in the records' order, trained to a validation loss on several seeds, with the convergence guard. A CPU
# runs the README's example at tiny; on a GPU the target depends on the model chosen, so it runs when
# STEPWISE_TARGET_LOSS says which.
read -r -a TARGET_SUITES <<<"${STEPWISE_TARGET_SUITES:-one_at_a_time speedrun}"
CORPUS_META="${STEPWISE_CORPUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/corpus}/fortunes/meta.json"
TARGET_LOSS="${STEPWISE_TARGET_LOSS:-}"
target_args=()
if [[ -z "$TARGET_LOSS" && "$GPUS" -eq 0 && $# -eq 0 ]]; then
  TARGET_LOSS=6.8
  target_args=(--preset=tiny --device=cpu --eval-every=20 --max-steps=1000 --lr=3e-3)
fi
target_note=""
if [[ ! -f "$CORPUS_META" ]]; then
  target_note="skipped (the fortunes corpus is not built: scripts/setup.sh --corpus fortunes)"
elif [[ -z "$TARGET_LOSS" ]]; then
  target_note="skipped (set STEPWISE_TARGET_LOSS=L to train each flag to L on the corpus)"
else
  target_args=(--data=corpus:fortunes --target-loss="$TARGET_LOSS" "${target_args[@]+"${target_args[@]}"}")
fi

# The plan (scripts/plan_run.py): each step's estimated seconds and the arguments that fit it in the budget. Without
# one (the probe failed), every step runs as asked.
declare -A PLANNED SUITE_ARGS ACTUAL TARGET_PLANNED TARGET_EXTRA BUDGET_PLANNED BUDGET_ARGS
seeds_given=""
for a in "$@"; do [[ $a == --seeds || $a == --seeds=* || $a == --target-seeds || $a == --target-seeds=* ]] && seeds_given=1; done
for t in "${TARGET_SUITES[@]}"; do TARGET_EXTRA[$t]=$([[ -n "$seeds_given" ]] || echo --target-seeds=3); done
PLANNED_TOTAL=""
plan_args=(--ablate="$ABLATE" --suites="${SUITES[*]}" --python-rows="$PYTHON_ROWS" --python="$PYTHON")
[[ -n "$BUDGET" ]] && plan_args+=(--budget-minutes="$BUDGET")
[[ -z "$target_note" ]] && plan_args+=(--target="${target_args[*]}" --target-suites="${TARGET_SUITES[*]}")
# The speedrun's budget search (./ablate --find-budget) after its suite trained to the target, where the plan fits it
[[ -z "$target_note" && " ${TARGET_SUITES[*]} " == *" speedrun "* ]] && plan_args+=(--budget-search=speedrun)
if [[ "$GPUS" -eq 0 ]]; then plan_args+=(--device=cpu --preset=tiny); else plan_args+=(--device=cuda --preset=gpt2-124m); fi
for a in "$@"; do [[ $a == --preset=* ]] && plan_args+=("$a"); done
planning_began=$SECONDS
plan="$("$PYTHON" "$ROOT/scripts/plan_run.py" "${plan_args[@]}" -- "$@")"
[[ $? -eq 2 ]] && exit 2  # an option of a flag none of the suites runs: plan_run.py named it
# A flag's options (--softcap=15) reach only the suites that run the flag: the plan's lines carry them, and COMMON
# is "$@" without them (./ablate refuses an option whose flag no configuration runs). Without a plan, "$@" as given.
COMMON=("$@")
while read -r kind rest; do
  case $kind in
    held) COMMON=(); i=0
          for a in "$@"; do [[ " $rest " == *" $i "* ]] || COMMON+=("$a"); i=$((i + 1)); done ;;
    suite) read -r name seconds extra <<<"$rest"; PLANNED[$name]=$seconds; SUITE_ARGS[$name]="${extra:-}" ;;
    target) read -r name seconds extra <<<"$rest"; TARGET_PLANNED[$name]=$seconds; TARGET_EXTRA[$name]="${extra:-}" ;;
    budget) read -r name seconds extra <<<"$rest"; BUDGET_PLANNED[$name]=$seconds; BUDGET_ARGS[$name]="${extra:-}" ;;
    total) PLANNED_TOTAL=$rest ;;
  esac
done <<<"$plan"
echo "run_all: planning took $(( SECONDS - planning_began )) s"

began=$SECONDS
# Each ./ablate's progress line shows the plan's minutes left (ablations/run/progress_line.h).
[[ -n "$PLANNED_TOTAL" ]] && export STEPWISE_PLAN_END=$(( $(date +%s) + PLANNED_TOTAL ))
planned_done=0
status=0
minutes() { awk -v s="$1" 'BEGIN { printf "%.1f", s / 60 }'; }
header() {  # the step, the minutes so far, and the plan's minutes left
  local left=""
  [[ -n "$PLANNED_TOTAL" ]] && left=", plan: $(minutes $(( PLANNED_TOTAL - planned_done ))) min left"
  echo "================ $1 ($(minutes $(( SECONDS - began ))) min so far$left) ================"
}

for suite in "${SUITES[@]}"; do
  echo
  if [[ -n "$PLANNED_TOTAL" && -z "${PLANNED[$suite]:-}" ]]; then
    echo "================ suite $suite: left out by the plan (above) ================"
    continue
  fi
  header "suite $suite"
  rows=()
  if [[ -n "$PLANNED_TOTAL" ]]; then
    read -r -a rows <<<"${SUITE_ARGS[$suite]}"
  elif [[ -n "$PYTHON_ROWS" && ( "$suite" == raschka || "$suite" == karpathy ) ]]; then
    # Python beside C++ at the two ends of each cumulative suite: the same baseline, and everything together.
    rows=(--implementations="libtorch,$PYTHON_ROWS" --implementations-at=ends)
  fi
  step_began=$SECONDS
  "$ROOT/ablate" --suite="$suite" --out="$OUT" --run-id="$RUN_ID" "${rows[@]+"${rows[@]}"}" "${COMMON[@]+"${COMMON[@]}"}"
  rc=$?
  ACTUAL[$suite]=$(( SECONDS - step_began ))
  planned_done=$(( planned_done + ${PLANNED[$suite]:-0} ))
  case $rc in
    0) ;;
    1) status=1 ;;                                  # some configuration failed: recorded, go on
    2) echo "run_all: usage error, stopping" >&2; exit 2 ;;
    130|143) echo "run_all: interrupted; results so far are in $OUT (./ablate --resume $OUT finishes a suite)" >&2
             exit $rc ;;
    *) echo "run_all: suite $suite ended with status $rc" >&2; status=1 ;;
  esac
done

for t in "${TARGET_SUITES[@]}"; do
  echo
  if [[ -n "$target_note" ]]; then
    echo "================ $t to target: $target_note ================"
    continue
  elif [[ -n "$PLANNED_TOTAL" && -z "${TARGET_PLANNED[$t]:-}" ]]; then
    echo "================ $t to target: left out by the plan (above) ================"
    continue
  fi
  header "$t to target: loss $TARGET_LOSS on corpus:fortunes"
  read -r -a extra <<<"${TARGET_EXTRA[$t]:-}"
  step_began=$SECONDS
  # one_at_a_time keeps the directory and run id it always had; each other suite gets its own
  dir="to_target" && id="${RUN_ID}_target"
  [[ "$t" != one_at_a_time ]] && dir="to_target_$t" && id="${RUN_ID}_target_$t"
  "$ROOT/ablate" --suite="$t" --out="$OUT/$dir" --run-id="$id" "${target_args[@]}" "${extra[@]+"${extra[@]}"}" \
    "${COMMON[@]+"${COMMON[@]}"}"
  rc=$?
  ACTUAL["$t to target"]=$(( SECONDS - step_began ))
  planned_done=$(( planned_done + ${TARGET_PLANNED[$t]:-0} ))
  case $rc in
    0) ;;
    130|143) echo "run_all: interrupted; results so far are in $OUT" >&2; exit $rc ;;
    *) status=1 ;;
  esac
  # The budget search, the speedrun's way (docs/convergence.md#the-budget-search): the smallest N at which each row's
  # record rule holds, on the plan's grid (it ends at the suite's own horizon, or --max-steps), into $OUT/budget_$t
  # (budget.json, and a folder per budget probed; the report reads the search from budget.json).
  [[ -z "${BUDGET_PLANNED[$t]:-}" ]] && continue
  echo
  header "$t budget search"
  read -r -a search <<<"${BUDGET_ARGS[$t]}"  # --budget-first=F --budget-ratio=R --budget-last=L, seeds, options
  step_began=$SECONDS
  "$ROOT/ablate" --find-budget --suite="$t" --out="$OUT/budget_$t" --run-id="${RUN_ID}_budget_$t" \
    "${target_args[@]}" "${search[@]}" "${COMMON[@]+"${COMMON[@]}"}"
  rc=$?
  ACTUAL["$t budget"]=$(( SECONDS - step_began ))
  planned_done=$(( planned_done + BUDGET_PLANNED[$t] ))
  case $rc in
    0) ;;
    130|143) echo "run_all: interrupted; results so far are in $OUT" >&2; exit $rc ;;
    *) status=1 ;;
  esac
done

# Several GPUs: the final configuration of Raschka's table on every GPU (data parallel) and on one, for the
# report's scaling efficiency (his 4x A100 row).
if [[ "$GPUS" -gt 1 ]]; then
  ALL_FLAGS="dynamic_mask,tf32,fused_adamw,pinned_memory,bf16,native_layers,flash,compile,vocab_padding"
  for n in 1 "$GPUS"; do
    echo
    echo "================ data parallel: $n GPU(s) ================"
    "$ROOT/ablate" --enable="$ALL_FLAGS" --bf16-mode=pure --nproc-per-node="$n" --out="$OUT/ddp_${n}gpu" \
      --run-id="${RUN_ID}_ddp${n}" "${COMMON[@]+"${COMMON[@]}"}" || status=1
  done
  # Beside it, the same with AdamW's state sharded across the GPUs (ZeRO-1): each holds 1/GPUS of the moments.
  echo
  echo "================ data parallel + zero1: $GPUS GPU(s) ================"
  "$ROOT/ablate" --enable="$ALL_FLAGS,zero1" --bf16-mode=pure --nproc-per-node="$GPUS" --out="$OUT/zero1_${GPUS}gpu" \
    --run-id="${RUN_ID}_zero1${GPUS}" "${COMMON[@]+"${COMMON[@]}"}" || status=1
fi

echo
"$ROOT/report" "$OUT" --out "$REPORT_DIR" || status=1
echo
echo "results: $OUT"
echo "report:  $REPORT_DIR/report.md  (dashboard: $REPORT_DIR/dashboard.html)"

# What the plan said against what each step took.
echo
printf '%-18s %12s %12s\n' step "planned min" "actual min"
for suite in "${SUITES[@]}"; do
  [[ -n "${ACTUAL[$suite]:-}" ]] &&
    printf '%-18s %12s %12s\n' "$suite" "$(minutes "${PLANNED[$suite]:-0}")" "$(minutes "${ACTUAL[$suite]}")"
done
for t in "${TARGET_SUITES[@]}"; do
  [[ -n "${ACTUAL["$t to target"]:-}" ]] &&
    printf '%-18s %12s %12s\n' "$t to target" "$(minutes "${TARGET_PLANNED[$t]:-0}")" "$(minutes "${ACTUAL["$t to target"]}")"
  [[ -n "${ACTUAL["$t budget"]:-}" ]] &&
    printf '%-18s %12s %12s\n' "$t budget" "$(minutes "${BUDGET_PLANNED[$t]:-0}")" "$(minutes "${ACTUAL["$t budget"]}")"
done
printf '%-18s %12s %12s\n' total "$([[ -n "$PLANNED_TOTAL" ]] && minutes "$PLANNED_TOTAL" || echo -)" \
  "$(minutes $(( SECONDS - began )))"
echo "run_all: $(( (SECONDS - began) / 60 )) min $(( (SECONDS - began) % 60 )) s, planning $(( began - planning_began )) s before"
exit $status
