#!/usr/bin/env bash
# Commits and pushes the record store kept on a branch of its own (workflow nightly.yml): the
# store is data, not code, so the nightly keeps its history on a records branch (created once,
# docs/ci.md) instead of committing to main; nothing a pull request runs can push there.
#   tools/ci/store-push.sh CHECKOUT MESSAGE
# CHECKOUT is a checkout of the records branch (actions/checkout with `ref:` and `path:`, which
# keeps the token for the push). Does nothing when nothing changed; retries a rejected push once
# after a rebase (a second nightly may have pushed meanwhile: records never conflict, each is a
# new file).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tools/ci/store-push.sh CHECKOUT MESSAGE" >&2; exit 3; }
dir=$1 message=$2
cd "$dir"
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-atlas-bench nightly} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-nightly@invalid}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
git add -A
if git diff --cached --quiet; then
  echo "store-push: nothing new in $dir"
  exit 0
fi
git commit -q -m "$message"
branch=$(git rev-parse --abbrev-ref HEAD)
git push -q origin "HEAD:$branch" || { git pull -q --rebase origin "$branch" && git push -q origin "HEAD:$branch"; }
echo "store-push: pushed $(git rev-parse --short HEAD) to $branch"
