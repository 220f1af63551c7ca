#!/usr/bin/env bash
# The rows whose added work a change says it meant, for `./report compare --accept-work`: every
# `Stepwise-Accept-Work: <row>[, <row>...]` (or `all`) trailer in the commit messages between the base and HEAD,
# comma-separated on one line (empty when none). The gate compares what each step dispatches exactly
# (docs/ci.md), so a change that adds an operator on purpose names its rows once, in the commit that does it.
#
#   ci/accepted-work.sh BASE
set -euo pipefail
BASE="${1:?usage: ci/accepted-work.sh BASE (the commit the change starts from)}"
git log --format='%(trailers:key=Stepwise-Accept-Work,valueonly,separator=%x2C)' "$BASE..HEAD" |
  tr ',' '\n' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | grep -v '^$' | sort -u | paste -sd, - || true
