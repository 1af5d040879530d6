#!/usr/bin/env bash
# A/B of two source trees on the CUDA decode benchmark, in one device call: builds
# atlas-cuda-bench in BASE_TREE (e.g. `git archive <commit> | tar -x -C .devtree`, carried) and in
# this checkout side by side, then runs them alternately, base first, ROUNDS times each, and prints
# one line per run and model (graph-mode decode tok/s, % of roofline, ITL p50, TTFT).
# Alternating brackets drift on a shared machine (docs/PERF.md, "how to measure").
#
#   tools/gpu-ab-trees.sh OUT DATA_DIR DEPS_PREFIX BASE_TREE [ROUNDS] [-- BENCH_ARGS...]
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: tools/gpu-ab-trees.sh OUT DATA_DIR DEPS_PREFIX BASE_TREE [ROUNDS] [-- BENCH_ARGS...]" >&2; exit 3; }  # 3: a usage error (README, "Exit codes")
OUT=$1 DATA=$2 DEPS=$3 BASE=$4
shift 4
ROUNDS=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then ROUNDS=$1; shift; fi
[ $# -gt 0 ] && shift
bench_args=("$@")
[ ${#bench_args[@]} -eq 0 ] && bench_args=(--repeats 3 --no-anatomy)
mkdir -p "$OUT/base"
HERE=$(pwd)
# shellcheck source=tools/gpu-build.sh
. "$HERE/tools/gpu-build.sh"
half=$(nproc)  # the head build is usually already done by gpu-bench.sh
( cd "$BASE" && BUILD=build-gpu JOBS=$half gpu_build "$OUT/base" "$DATA" "$DEPS" atlas-cuda-bench ) & pb=$!
BUILD=build-gpu JOBS=$half gpu_build "$OUT" "$DATA" "$DEPS" atlas-cuda-bench; rh=$?
wait $pb; rb=$?
if [ $rb -ne 0 ] || [ $rh -ne 0 ]; then echo "build failed: base $rb head $rh"; exit 4; fi  # the program's failure (README, "Exit codes")
date -u | tee "$OUT/ab-trees.txt"
for r in $(seq 1 "$ROUNDS"); do
  for side in base head; do
    bin=$(cuda_bench_bin "$HERE/build-gpu"); [ $side = base ] && bin=$(cuda_bench_bin "$BASE/build-gpu")
    echo "## round $r $side" | tee -a "$OUT/ab-trees.txt"
    "$bin" "${bench_args[@]}" --out "$OUT/ab-$side-$r.json" > "$OUT/ab-$side-$r.log" 2>&1 ||
      { echo "   failed (exit $?): $(tail -1 "$OUT/ab-$side-$r.log")" | tee -a "$OUT/ab-trees.txt"; continue; }
    grep -E "graph decode|TTFT" "$OUT/ab-$side-$r.log" | tee -a "$OUT/ab-trees.txt"
  done
done
