#!/usr/bin/env bash
# ctest ci/workflows: the workflow templates (tools/ci/workflows/) parse and pass
# tools/ci/check-workflows.py, and the checker catches each hole it exists for: a copy with one
# planted change each (pull_request_target, a shallow checkout of the gate, an expression inside a
# run: script, a workflow_run job checking out the PR's head, a shard left out of the matrix, a
# script that does not exist, a file that is not YAML) must fail naming it.
# Skipped (exit 77) where python3 or PyYAML is missing (Debian package python3-yaml).
#   tests/ci/workflows_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
check=$src/tools/ci/check-workflows.py
command -v python3 >/dev/null || { echo "workflows: skipped: python3 is not installed"; exit 77; }
python3 -c 'import yaml' 2>/dev/null ||
  { echo "workflows: skipped: PyYAML is not installed (Debian package python3-yaml, tools/install-deps.sh)"; exit 77; }

fails=0
out=$(python3 "$check" "$src/tools/ci/workflows") || { echo "$out"; echo "FAIL: the templates do not pass"; exit 1; }
echo "$out"
grep -q "^check-workflows: 3 file(s), 0 problem(s)$" <<< "$out" || { echo "FAIL: expected 3 files checked"; fails=1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# planted FILE SED_SCRIPT EXPECTED_MESSAGE: a copy of the templates with FILE edited must fail with it.
planted() {
  local file=$1 edit=$2 want=$3
  rm -rf "$work/w" && cp -r "$src/tools/ci/workflows" "$work/w"
  sed -i -e "$edit" "$work/w/$file"
  if cmp -s "$work/w/$file" "$src/tools/ci/workflows/$file"; then
    echo "FAIL: the edit '$edit' changed nothing in $file"; fails=1; return
  fi
  local rc=0 got
  got=$(python3 "$check" "$work/w") || rc=$?
  if [ "$rc" -ne 1 ] || ! grep -qF -- "$want" <<< "$got"; then
    echo "FAIL: $file with '$edit': exit $rc, wanted 1 and '$want'; got:"; echo "$got"; fails=1
  else
    echo "ok: $file with '$edit' -> $want"
  fi
}
planted pr-gate.yml 's/^  pull_request:$/  pull_request_target:/' "pull_request_target runs with the base branch's token"
planted pr-gate.yml 's/fetch-depth: 0/fetch-depth: 1/' "check out with fetch-depth: 0"
# shellcheck disable=SC2016  # a GitHub expression, literal for this shell
planted pr-gate.yml 's|run: tools/ci/pr-gate.sh "$RUNNER_TEMP/gate"|run: tools/ci/pr-gate.sh "$RUNNER_TEMP/gate" --target-branch "${{ github.head_ref }}"|' "expression inside run:"
planted pr-gate.yml 's/^  contents: read$/  contents: write/' "must not hold a write scope"
# shellcheck disable=SC2016  # a GitHub expression, literal for this shell
planted pr-gate-comment.yml 's|^          persist-credentials: false$|          ref: ${{ github.event.workflow_run.head_sha }}|' "checks out its default branch only"
planted nightly.yml 's/shard: \[0, 1, 2\]/shard: [0, 1]/' "is not 0 .. SHARD_COUNT-1"
planted nightly.yml 's|tools/ci/nightly-merge.sh|tools/ci/nightly-merge-all.sh|' "tools/ci/nightly-merge-all.sh does not exist"
planted nightly.yml 's/^jobs:$/jobs: [/' "does not parse as YAML"
exit "$fails"
