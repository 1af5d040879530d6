#!/usr/bin/env bash
# Folds the nightly's improvements into its BASELINE through a pull request of its own (workflow
# nightly.yml, job `merge`, on main): a BASELINE is a file the gate trusts, so it changes only by
# review, never by a push to main.
#   tools/ci/ratchet-pr.sh RECORD [--dry-run]
# In the current checkout (main, clean): `atlas-bench baseline ratchet --gate nightly --record
# RECORD` (docs/gates.md: only significant improvements and new metrics move; timed values never
# on a class that is not quiet). Nothing moved: exit 0. Else commits baselines/ on a branch
# ratchet/nightly-<commit12> of the record's commit, pushes it to origin and opens a pull request
# against the branch checked out, its body the ratchet's output. --dry-run stops after the push
# (no API call: how the test runs it). A branch of that name already on origin: left alone, exit 0.
# Needs jq. Environment: ATLAS_BENCH (build/tools/atlas-bench), GH_TOKEN (for gh; a PR opened with the
# workflow's own token starts no workflow, so the gate runs on it only with another token, docs/ci.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$here/lib.sh"

case "$#:${2:-}" in
  1: | 2:--dry-run) ;;
  *) echo "usage: tools/ci/ratchet-pr.sh RECORD [--dry-run]" >&2; exit 3 ;;
esac
record=$1 dry=${2:-}
bench=$(ci_bench)
[ -z "$(git status --porcelain -- baselines)" ] || { echo "ratchet-pr: baselines/ has uncommitted changes" >&2; exit 3; }
base=$(git rev-parse --abbrev-ref HEAD)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$bench" baseline ratchet --gate nightly --record "$record" > "$log" 2>&1 || { cat "$log"; exit 1; }
cat "$log"
if [ -z "$(git status --porcelain -- baselines)" ]; then
  echo "ratchet-pr: nothing moved"
  exit 0
fi
commit=$(jq -r '.git.commit // empty' "$record")
[[ $commit =~ ^[0-9a-f]{40}$ ]] || commit=$(git rev-parse HEAD)
branch=ratchet/nightly-${commit:0:12}
if git ls-remote --exit-code --heads origin "$branch" > /dev/null 2>&1; then
  echo "ratchet-pr: $branch is already on origin: left alone"
  git checkout -q -- baselines
  exit 0
fi
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-atlas-bench nightly} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-nightly@invalid}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
git checkout -q -b "$branch"
git add -- baselines
git commit -q -F - <<MSG
nightly ratchet at ${commit:0:12}

$(cat "$log")
MSG
git push -q origin "$branch"
git checkout -q "$base"
echo "ratchet-pr: pushed $branch"
[ -z "$dry" ] || exit 0
{ echo "The nightly at \`${commit:0:12}\` measured these BASELINE moves (\`atlas-bench baseline ratchet\`):"; echo; echo '```'; cat "$log"; echo '```'; } > "$log.body"
gh pr create --base "$base" --head "$branch" --title "nightly ratchet at ${commit:0:12}" --body-file "$log.body"
rm -f "$log.body"
