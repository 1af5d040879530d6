#!/usr/bin/env bash
# The trends site over the record store (workflow nightly.yml, job `merge`, after the merge).
#   tools/ci/nightly-report.sh STORE SITE_DIR [atlas-bench report options]
# Runs `atlas-bench report` (docs/trends.md) over STORE with the checkout's baselines/ and git
# history (commits ordered by committer date: needs the history, fetch-depth: 0), writes the
# static site into SITE_DIR and its terminal output into SITE_DIR/report.txt. Exits with the
# report's code: 1 when a metric drifted past its tolerance since its BASELINE last moved, so
# the nightly fails on drift; the site is complete either way.
# Environment: ATLAS_BENCH (build/tools/atlas-bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$here/lib.sh"

[ $# -ge 2 ] || { echo "usage: tools/ci/nightly-report.sh STORE SITE_DIR [report options]" >&2; exit 3; }
store=$1 site=$2
shift 2
bench=$(ci_bench)
mkdir -p "$site"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

rc=0
"$bench" report --store "$store" --baselines baselines --repo . --out "$site" "$@" > "$log" 2>&1 || rc=$?
cat "$log"
cp "$log" "$site/report.txt"
[ -f "$site/index.html" ] || { echo "nightly-report: no $site/index.html (exit $rc)" >&2; [ "$rc" -ne 0 ] || rc=1; }
echo "nightly-report: exit $rc; site in $site"
exit "$rc"
