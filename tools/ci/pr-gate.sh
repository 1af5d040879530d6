#!/usr/bin/env bash
# The pull-request gate as CI runs it (workflow pr-gate.yml, job `gate`); runs the same by hand.
#   tools/ci/pr-gate.sh OUT_DIR [atlas-bench gate options, e.g. --target-branch main]
# Runs `atlas-bench --pull-request-gate-check` in the current checkout and writes into OUT_DIR
# what the posting job reads (it runs none of this code): summary.md (the markdown summary),
# gate.log (the terminal output), exit-code, head-sha, pr-number (when known) and records/ (the
# record the gate wrote). Exits with the gate's exit code once OUT_DIR is complete.
#
# The target branch is the CI's (the gate reads GITHUB_BASE_REF itself, docs/gates.md "Threat
# model"), else --target-branch. The gate needs the target's history: a shallow clone
# (actions/checkout's default fetch-depth: 1) makes it inconclusive (exit 2), so this script
# says so before the gate runs.
# Environment: ATLAS_BENCH (build/tools/atlas-bench), ATLAS_DATA_DIR (docs/environment.md: ../shared/data beside the checkout, else ./data),
# PR_NUMBER (the pull request's number, for the posting job; the workflow sets it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$here/lib.sh"

[ $# -ge 1 ] || { echo "usage: tools/ci/pr-gate.sh OUT_DIR [gate options]" >&2; exit 3; }
out=$1
shift
bench=$(ci_bench)
data=$(ci_data_dir)
mkdir -p "$out/records"

if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
  echo "pr-gate: this checkout is shallow: the gate cannot find the merge-base and fails closed (use fetch-depth: 0)" >&2
fi
if [ -n "${GITHUB_BASE_REF:-}" ]; then
  echo "pr-gate: target branch origin/$GITHUB_BASE_REF (GITHUB_BASE_REF)"
else
  echo "pr-gate: no GITHUB_BASE_REF: the target is --target-branch, else the merge-base gate config's"
fi

rc=0
"$bench" --data-dir "$data" --pull-request-gate-check --summary-md "$out/summary.md" "$@" 2>&1 | tee "$out/gate.log" ||
  rc=${PIPESTATUS[0]}
while IFS= read -r r; do cp "$r" "$out/records/"; done < <(ci_records_in_log "$out/gate.log")
[ -f "$out/summary.md" ] || printf 'The gate wrote no summary (exit %s); see gate.log.\n' "$rc" > "$out/summary.md"
echo "$rc" > "$out/exit-code"
git rev-parse HEAD > "$out/head-sha" 2>/dev/null || true
if [ -n "${PR_NUMBER:-}" ]; then echo "$PR_NUMBER" > "$out/pr-number"; fi
echo "pr-gate: exit $rc; summary, log and $(find "$out/records" -type f | wc -l) record(s) in $out"
exit "$rc"
