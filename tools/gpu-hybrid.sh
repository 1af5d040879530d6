#!/usr/bin/env bash
# One device call for the CUDA backend as blocks: build the CUDA targets (and, with BASE_TREE, the
# base tree's atlas-cuda-bench beside them), the Hugging Face reference, every GPU test, and the
# decode benchmark on the dense presets and the Qwen3-Next hybrid presets.
#
#   tools/gpu-hybrid.sh OUT DATA_DIR DEPS_PREFIX [BASE_TREE]
# HYBRID_BENCH=0 skips the benchmark, DENSE_HF=0 the dense HF reference; TEST_ARGS: one doctest option for
# the GPU test binary (e.g. '-tc=*Hugging Face*').
set -uo pipefail
OUT=${1:?usage: tools/gpu-hybrid.sh OUT DATA_DIR DEPS_PREFIX [BASE_TREE]}
DATA=$2 DEPS=$3 BASE=${4:-}
export JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
HERE=$(pwd)
. "$HERE/tools/gpu-build.sh"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1; git log -1 --format=%h 2>/dev/null; } | tee "$OUT/summary.txt"
t0=$(date +%s)
if [ -n "$BASE" ]; then
  mkdir -p "$OUT/base"
  ( cd "$BASE" && BUILD=build-gpu JOBS=$((JOBS / 2)) gpu_build "$OUT/base" "$DATA" "$DEPS" atlas-cuda-bench ) & pb=$!
fi
BUILD=build-gpu gpu_build "$OUT" "$DATA" "$DEPS" atlas_tests_gpu atlas-cuda-bench atlas-bench || exit 4  # the build failed: the program's failure (README, "Exit codes")
echo "build $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
HF_DIR=/tmp/atlas-hf-ref
[ "${DENSE_HF:-1}" = 0 ] || PYTHONUNBUFFERED=1 python3 tests/gpu/hf_reference.py "$HF_DIR" > "$OUT/hf-reference.log" 2>&1 ||
  echo "hf_reference.py failed" | tee -a "$OUT/summary.txt"
QN_DIR=/tmp/atlas-hf-qwen3-next
rm -rf "$QN_DIR"
# shellcheck disable=SC2015  # the message is meant for a failure of either step
build-gpu/tools/atlas-bench make-model --preset qwen3-next-tiny --format safetensors --dtype bf16 --seed 11 --out "$QN_DIR" \
  >> "$OUT/hf-reference.log" 2>&1 &&
  PYTHONUNBUFFERED=1 python3 tests/gpu/hf_qwen3_next_reference.py "$QN_DIR" >> "$OUT/hf-reference.log" 2>&1 ||
  echo "the Qwen3-Next HF reference failed (see hf-reference.log)" | tee -a "$OUT/summary.txt"
tail -2 "$OUT/hf-reference.log" | tee -a "$OUT/summary.txt"
ATLAS_DATA_DIR="$DATA" ATLAS_HF_REF_DIR="$HF_DIR" ATLAS_HF_QWEN3_NEXT_DIR="$QN_DIR" timeout 400 build-gpu/tests/atlas_tests_gpu ${TEST_ARGS:+"$TEST_ARGS"} > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests exit $? ($(( $(date +%s) - t0 )) s)" | tee -a "$OUT/summary.txt"
grep -E "ERROR|FAILED|test cases|assertions|skipped" "$OUT/gpu-tests.log" | head -40 | tee -a "$OUT/summary.txt"
if [ -n "$BASE" ]; then wait "$pb" || echo "base build failed" | tee -a "$OUT/summary.txt"; fi
for r in $([ -n "$BASE" ] && echo 1 2); do
  for side in base head; do
    bin=$(cuda_bench_bin build-gpu); [ $side = base ] && bin=$(cuda_bench_bin "$BASE/build-gpu")
    [ -x "$bin" ] || continue
    echo "== $side round $r" >> "$OUT/ab.txt"
    timeout 120 "$bin" --models qwen3-0.6b,qwen3-8b --repeats 3 --no-anatomy 2>&1 | grep -E "tok/s|TTFT|ttft" >> "$OUT/ab.txt"
  done
done
cat "$OUT/ab.txt" 2>/dev/null
[ "${HYBRID_BENCH:-1}" = 0 ] && exit 0
echo "== hybrid decode bench" | tee -a "$OUT/summary.txt"
timeout 200 build-gpu/tools/atlas-cuda-bench --models qwen3-next-tiny,qwen3-next-e64 --repeats 3 --ttft-prompt 0 \
  --anatomy-tokens 32 --out "$OUT/hybrid-bench.json" > "$OUT/hybrid-bench.txt" 2>&1
echo "hybrid bench exit $?" | tee -a "$OUT/summary.txt"
tail -40 "$OUT/hybrid-bench.txt"
echo "total $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
