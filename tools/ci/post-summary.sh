#!/usr/bin/env bash
# Posts the pull-request gate's summary as a PR comment (workflow pr-gate-comment.yml, a
# `workflow_run` job that holds the write token and runs only this repository's default-branch
# code: never the PR's). The artifact it reads was written by the PR's job, so every file in it
# is untrusted data: nothing in it is run, sourced or put in a command line.
#   tools/ci/post-summary.sh ARTIFACT_DIR [--dry-run BODY_FILE]
# ARTIFACT_DIR: what tools/ci/pr-gate.sh wrote (summary.md, pr-number). Checks, before posting:
#   - pr-number is a number, and that pull request's head is the commit the gate's run was made
#     for (RUN_HEAD_SHA, from GitHub's workflow_run event, not from the artifact): a PR's job
#     cannot direct its comment to another pull request;
#   - the summary is cut to 60,000 bytes (GitHub's limit is 65,536 characters) and @mentions in it
#     are made inert (a zero-width space after the @), so a PR's job cannot ping people.
# The comment starts with a header this script writes (the commit, the run's link and GitHub's
# conclusion of the job) and a marker; a later run edits that comment instead of adding one.
# --dry-run writes the body to BODY_FILE and calls no API (how the test and a person run it).
# Environment: GITHUB_REPOSITORY, GH_TOKEN (for gh), RUN_HEAD_SHA, RUN_URL, RUN_CONCLUSION.
set -euo pipefail
[ $# -eq 1 ] || { [ $# -eq 3 ] && [ "$2" = --dry-run ]; } ||
  { echo "usage: tools/ci/post-summary.sh ARTIFACT_DIR [--dry-run BODY_FILE]" >&2; exit 3; }
dir=$1 dry=${3:-}
marker='<!-- atlas-bench-gate-summary -->'
max_bytes=60000

# A refused artifact or run is an input error (exit 3, README "Exit codes"): 1 would read as the
# gate's "regression".
die() { echo "post-summary: $*" >&2; exit 3; }
plain_file() { [ -f "$1" ] && [ ! -L "$1" ]; }  # a symlink could read a file of the runner
plain_file "$dir/summary.md" || die "no summary.md in $dir"
plain_file "$dir/pr-number" || die "no pr-number in $dir"
pr=$(head -c 16 "$dir/pr-number" | tr -d '[:space:]')
[[ $pr =~ ^[1-9][0-9]{0,8}$ ]] || die "pr-number is not a pull request number: $(printf '%q' "$pr")"
sha=${RUN_HEAD_SHA:-}
[[ $sha =~ ^[0-9a-f]{40}$ ]] || die "RUN_HEAD_SHA is not a commit id (the workflow passes github.event.workflow_run.head_sha)"
conclusion=${RUN_CONCLUSION:-unknown}
[[ $conclusion =~ ^[a-z_]{1,20}$ ]] || conclusion=unknown

if [ -z "$dry" ]; then
  repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}
  head=$(gh api "repos/$repo/pulls/$pr" --jq .head.sha)
  [ "$head" = "$sha" ] || die "pull request #$pr's head is $head, not the gated commit $sha: not posted"
fi

body=$(mktemp)
trap 'rm -f "$body"' EXIT
{
  echo "$marker"
  echo "**atlas-bench gate** for ${sha:0:12}: job ${conclusion}${RUN_URL:+ ([run]($RUN_URL))}."
  echo "The summary below was written by the pull request's own job (docs/ci.md)."
  echo
  # Bytes past the cap are cut (a cut inside a UTF-8 sequence is dropped by iconv), NULs removed,
  # "@name" becomes "@<ZWSP>name", and the marker cannot be forged from inside.
  head -c "$max_bytes" "$dir/summary.md" | tr -d '\000' | iconv -c -f UTF-8 -t UTF-8 |
    sed -e 's/@\([A-Za-z0-9]\)/@\xe2\x80\x8b\1/g' -e 's/<!-- atlas-bench-gate-summary -->//g'
  [ "$(wc -c < "$dir/summary.md")" -le "$max_bytes" ] || printf '\n\n(summary cut at %s bytes; the artifact has it whole)\n' "$max_bytes"
} > "$body"

[ -z "${GITHUB_STEP_SUMMARY:-}" ] || cat "$body" >> "$GITHUB_STEP_SUMMARY"
if [ -n "$dry" ]; then
  cp "$body" "$dry"
  echo "post-summary: dry run: body for #$pr in $dry"
  exit 0
fi
existing=$(gh api --paginate "repos/$repo/issues/$pr/comments" \
  --jq ".[] | select(.user.login == \"github-actions[bot]\" and (.body | startswith(\"$marker\"))) | .id" | tail -1)
if [ -n "$existing" ]; then
  gh api -X PATCH "repos/$repo/issues/comments/$existing" -F "body=@$body" --jq .html_url
else
  gh api -X POST "repos/$repo/issues/$pr/comments" -F "body=@$body" --jq .html_url
fi
