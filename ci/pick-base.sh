#!/usr/bin/env bash
# The commit a change starts from, which CI measures beside it in the same job (.github/workflows/benchmarks.yml):
# a pull request's merge base with its target, a push's previous tip (github.event.before), the first push of a branch
# its merge base with the default branch, a run by hand its `base` input (else the commit before). A gate against
# whatever baseline a cache happens to hold judges history, not the change (docs/ci.md). Prints two lines for
# $GITHUB_OUTPUT, `sha=<commit>` and `why=<how it was chosen>`, and says the same on stderr.
#
# Reads, as the workflow passes them: EVENT (github.event_name), PR_BASE (github.event.pull_request.base.sha),
# BEFORE (github.event.before), DISPATCH_BASE (the run's `base` input), DEFAULT_BRANCH
# (github.event.repository.default_branch), REF_NAME (github.ref_name). The candidate is HEAD. A trailer line
# `Stepwise-Base: <commit>` in HEAD's commit message names the base instead, for a change whose own base cannot be
# built or run (docs/ci.md, "When the base cannot run").
# Exit status: 0 chosen; 2 a named base (trailer or input) that is not a commit here.
set -euo pipefail

say() { echo "pick-base: $*" >&2; }

commit_of() { git rev-parse --verify --quiet "$1^{commit}" 2>/dev/null; }

# The commit before HEAD; a root commit has none, and is then gated against itself: a same-commit pair, which shows
# the gate passes an unchanged step on this runner rather than judging nothing.
before_head() {
  if commit_of HEAD^ >/dev/null; then
    echo "$(commit_of HEAD^)|the commit before this one"
  else
    echo "$(commit_of HEAD)|this commit itself: it has no parent, so the gate runs a same-commit pair"
  fi
}

# The first push of a branch: where it left the default branch; the default branch's own first push: the commit
# before its tip.
branch_start() {
  local default="origin/${DEFAULT_BRANCH:-main}"
  if [[ "${REF_NAME:-}" != "${DEFAULT_BRANCH:-main}" ]] && commit_of "$default" >/dev/null; then
    echo "$(git merge-base "$default" HEAD)|where this branch left $default (its merge base)"
  else
    before_head
  fi
}

choose() {
  local named
  named="$(git log -1 --format='%(trailers:key=Stepwise-Base,valueonly,separator=)' HEAD | tr -d '[:space:]')"
  if [[ -n "$named" ]]; then
    commit_of "$named" >/dev/null || { say "the Stepwise-Base trailer names '$named', which is no commit here"; exit 2; }
    echo "$(commit_of "$named")|named by this commit's Stepwise-Base trailer"
    return
  fi
  case "${EVENT:-push}" in
    pull_request | pull_request_target)
      [[ -n "${PR_BASE:-}" ]] || { say "a pull request without PR_BASE (github.event.pull_request.base.sha)"; exit 2; }
      git cat-file -e "$PR_BASE^{commit}" 2>/dev/null || git fetch --quiet origin "$PR_BASE" >&2
      echo "$(git merge-base "$PR_BASE" HEAD)|the pull request's merge base with its target"
      ;;
    workflow_dispatch)
      if [[ -n "${DISPATCH_BASE:-}" ]]; then
        commit_of "$DISPATCH_BASE" >/dev/null || { say "the base input '$DISPATCH_BASE' is no commit here"; exit 2; }
        echo "$(commit_of "$DISPATCH_BASE")|the run's base input"
      else
        before_head
      fi
      ;;
    *)
      # A push: the tip it replaced. All zeros is a new branch; a tip no longer here was force-pushed away.
      if [[ -n "${BEFORE:-}" && ! "$BEFORE" =~ ^0+$ ]] && commit_of "$BEFORE" >/dev/null; then
        echo "$(commit_of "$BEFORE")|the tip this push replaced (github.event.before)"
      else
        branch_start
      fi
      ;;
  esac
}

chosen="$(choose)"
sha="${chosen%%|*}"
why="${chosen#*|}"
say "base $sha: $why"
echo "sha=$sha"
echo "why=$why"
