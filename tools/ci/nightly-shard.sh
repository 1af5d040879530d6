#!/usr/bin/env bash
# One shard of the nightly sweep as CI runs it (workflow nightly.yml, matrix job `shard`).
#   tools/ci/nightly-shard.sh INDEX COUNT OUT_DIR [atlas-bench nightly options, e.g. --config F]
# Runs `atlas-bench nightly --shard INDEX/COUNT` (0-based INDEX, gates/shard.hpp) in the current
# checkout and writes into OUT_DIR, the folder the job uploads: records/ (the shard's record),
# shard.log and exit-code. Exits with the shard's exit code (0 when the machine class has no
# nightly BASELINE: recorded, not judged) once OUT_DIR is complete.
# Environment: ATLAS_BENCH (build/tools/atlas-bench), ATLAS_DATA_DIR (docs/environment.md: ../shared/data beside the checkout, else ./data).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$here/lib.sh"

[ $# -ge 3 ] || { echo "usage: tools/ci/nightly-shard.sh INDEX COUNT OUT_DIR [nightly options]" >&2; exit 3; }
index=$1 count=$2 out=$3
shift 3
bench=$(ci_bench)
data=$(ci_data_dir)
mkdir -p "$out/records"

rc=0
"$bench" --data-dir "$data" nightly --shard "$index/$count" "$@" 2>&1 | tee "$out/shard.log" || rc=${PIPESTATUS[0]}
while IFS= read -r r; do cp "$r" "$out/records/"; done < <(ci_records_in_log "$out/shard.log")
echo "$rc" > "$out/exit-code"
echo "nightly-shard: shard $index/$count exit $rc; $(find "$out/records" -type f | wc -l) record(s) in $out"
exit "$rc"
