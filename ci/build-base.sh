#!/usr/bin/env bash
# Builds the commit a change starts from (ci/pick-base.sh chose it) where CI can run it beside the change, and prints
# `src=<its checkout or ./ablate>` for $GITHUB_OUTPUT: the argument `./run_all.sh --gated --against` takes.
#
#   ci/build-base.sh SHA
#
# When nothing the build reads differs between SHA and HEAD (a change to docs, tests, reports or CI only), this
# checkout's own build is the base's: the same ./ablate, built once. Otherwise SHA is checked out in a worktree beside
# this one ($CI_BASE_SRC, default ci-base-src) and built there by its own scripts (the compiler cache makes the files
# both share quick). A base that cannot be built cannot be measured: that is said with the way past it (docs/ci.md,
# "When the base cannot run") and the exit status is 3, as the gate's is when it could not judge, so the job is never
# green without a verdict. (A base that builds but cannot run the definition, say one from before --rows, is
# scripts/gated_run.py's to refuse, with the same exit status.)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHA="${1:?usage: ci/build-base.sh SHA (the base commit, from ci/pick-base.sh)}"
SRC="${CI_BASE_SRC:-ci-base-src}"
EXIT_NOT_JUDGED=3
# What does not change the ./ablate a base would build: prose, tests, the report and gate (run from this checkout
# for both sides), and CI's own files. Everything else (model/, bench/, ablations/, CMake, scripts/, the pins) does.
NOT_BUILT=(':(exclude)docs' ':(exclude)*.md' ':(exclude)tests' ':(exclude)reports' ':(exclude)ci'
  ':(exclude).github' ':(exclude)results')
PAST_IT="to gate against another commit that can, add a trailer line 'Stepwise-Base: <commit>' to this change's last
commit message, or run the workflow by hand with that commit as its base input (docs/ci.md, \"When the base cannot
run\")"

not_judged() {
  echo "::error title=gate not judged::$1" >&2
  echo "build-base: not judged: $1; $PAST_IT" >&2
  exit $EXIT_NOT_JUDGED
}

cd "$ROOT"
git cat-file -e "$SHA^{commit}" 2>/dev/null || not_judged "the base $SHA is not a commit in this clone (fetch-depth 0?)"
if git diff --quiet "$SHA" HEAD -- . "${NOT_BUILT[@]}"; then
  echo "build-base: nothing the build reads differs between the base ${SHA:0:12} and this commit: this build is the" \
    "base's too" >&2
  echo "src=${STEPWISE_BUILD_DIR:-$ROOT/build}/ablations/ablate"
  exit 0
fi
echo "build-base: building the base ${SHA:0:12} in $SRC with its own scripts" >&2
rm -rf "$SRC"
git worktree prune
git worktree add --detach "$SRC" "$SHA" >&2
# The base's build goes to its own build/ (its scripts' default), never this checkout's.
if ! (cd "$SRC" && env -u STEPWISE_BUILD_DIR ./scripts/build.sh --quiet) >&2; then
  not_judged "the base ${SHA:0:12} does not build (its own ./scripts/build.sh failed above)"
fi
echo "src=$(cd "$SRC" && pwd)"
