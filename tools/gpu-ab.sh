#!/usr/bin/env bash
# A/B runs of the CUDA decode benchmark under environment knobs, in one device call: builds
# atlas-cuda-bench, then runs it once per setting, in the order given, and prints one line per
# model and setting (graph-mode decode tok/s, % of the copy-bandwidth roofline, ITL p50).
#
#   tools/gpu-ab.sh OUT DATA_DIR DEPS_PREFIX SETTING... [-- BENCH_ARGS...]
#
# A SETTING is a space-separated list of KNOB=VALUE ("" = the defaults), e.g.
#   tools/gpu-ab.sh $OUT $PWD/.data $PWD/.devdeps "" "ATLAS_ATTN_KERNEL=split" "" -- --models qwen3-0.6b
# Repeating "" first and last brackets the others with the defaults (these machines drift).
# BENCH_ARGS default to --no-anatomy --repeats 3 --ttft-prompt 0. Knobs: docs/PERF.md.
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: tools/gpu-ab.sh OUT DATA_DIR DEPS_PREFIX SETTING... [-- BENCH_ARGS...]" >&2; exit 3; }  # 3: a usage error (README, "Exit codes")
OUT=$1 DATA=$2 DEPS=$3
shift 3
settings=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do settings+=("$1"); shift; done
[ $# -gt 0 ] && shift
bench_args=("$@")
[ ${#bench_args[@]} -eq 0 ] && bench_args=(--no-anatomy --repeats 3 --ttft-prompt 0)
mkdir -p "$OUT"
# shellcheck source=tools/gpu-build.sh
. "$(dirname "$0")/gpu-build.sh"
gpu_build "$OUT" "$DATA" "$DEPS" atlas-cuda-bench || exit 4  # the build failed: the program's failure (README, "Exit codes")
BUILD=${BUILD:-build-gpu}
date -u | tee "$OUT/ab.txt"
i=0
for s in "${settings[@]}"; do
  i=$((i + 1))
  read -r -a env_args <<< "$s"
  echo "## $i: ${s:-defaults}" | tee -a "$OUT/ab.txt"
  env "${env_args[@]}" "$BUILD/tools/atlas-cuda-bench" "${bench_args[@]}" --out "$OUT/ab-$i.json" > "$OUT/ab-$i.log" 2>&1 ||
    { echo "   failed (exit $?): $(tail -1 "$OUT/ab-$i.log")" | tee -a "$OUT/ab.txt"; continue; }
  grep "graph decode" "$OUT/ab-$i.log" | awk '{gsub(/\)/, "", $13); printf "   %-11s %8s tok/s  %6s of roofline  ITL p50 %s us\n", $1, $5, $13, $16}' | tee -a "$OUT/ab.txt"
done
