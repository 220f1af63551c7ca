#!/usr/bin/env bash
# Makes the gh-pages branch on origin when it is missing, for github-action-benchmark with Pages on
# (vars.STEPWISE_PAGES): the action fetches gh-pages before it does anything, and a fresh repository has none
# (benchmark-action/github-action-benchmark issue #147). An empty orphan commit; the action adds its pages to it.
set -euo pipefail
if git ls-remote --exit-code --heads origin gh-pages >/dev/null; then
  echo "make-gh-pages: origin has gh-pages already"
  exit 0
fi
tree="$(git hash-object -t tree /dev/null)"
commit="$(git -c user.name="${GITHUB_ACTOR:-stepwise}" -c user.email="${GITHUB_ACTOR:-stepwise}@users.noreply.github.com" \
  commit-tree "$tree" -m "gh-pages: made by stepwise's CI for github-action-benchmark's dashboard")"
git push origin "$commit:refs/heads/gh-pages"
echo "make-gh-pages: made gh-pages on origin ($commit)"
