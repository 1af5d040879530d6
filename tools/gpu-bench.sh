#!/usr/bin/env bash
# A whole GPU check in one device call: configure + build the CUDA targets, run the GPU
# tests (with the Hugging Face reference), the decode benchmark + CUPTI anatomy (atlas-cuda-bench)
# and the decode-anatomy suite through atlas-bench on the CUDA backend, writing
# logs and JSON records under OUT.
#
#   tools/gpu-bench.sh OUT [DATA_DIR] [DEPS_PREFIX]
#
# DEPS_PREFIX: a folder with include/{nlohmann,CLI,doctest,openssl} (and lib/libcrypto.so.3 when
# the machine has none), for GPU boxes without the Debian -dev packages.
set -uo pipefail
OUT=${1:?usage: tools/gpu-bench.sh OUT [DATA_DIR] [DEPS_PREFIX]}
# shellcheck source=tools/lib/data_dir.sh
. "$(dirname "$0")/lib/data_dir.sh"
# DATA_DIR: given, else the one order (docs/environment.md): $ATLAS_DATA_DIR, else ../shared/data
# beside the checkout, else ./data; absolute, since the build and atlas-bench use it.
DATA=$(atlas_data_dir_absolute "${2:-}")
DEPS=${3:-}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
  nvcc --version | tail -1
  cmake --version | head -1
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"

log "configure + build"
# shellcheck source=tools/gpu-build.sh
. "$(dirname "$0")/gpu-build.sh"
gpu_build "$OUT" "$DATA" "$DEPS" atlas_tests_gpu atlas-cuda-bench atlas-bench || exit 4  # the build failed: the program's failure (README, "Exit codes")

log "hugging face reference (tests/gpu/hf_reference.py)"
HF_DIR=${HF_DIR:-/tmp/atlas-hf-ref}
PYTHONUNBUFFERED=1 python3 tests/gpu/hf_reference.py "$HF_DIR" > "$OUT/hf-reference.log" 2>&1 || echo "hf_reference.py failed (see hf-reference.log); the HF parity test will fail" | tee -a "$OUT/summary.txt"
tail -3 "$OUT/hf-reference.log" | tee -a "$OUT/summary.txt"
# The Qwen3-Next reference: a bf16 HF directory written by atlas-bench, run by transformers.
QN_DIR=${QN_DIR:-/tmp/atlas-hf-qwen3-next}
rm -rf "$QN_DIR"
# shellcheck disable=SC2015  # the message is meant for a failure of either step
"$BUILD/tools/atlas-bench" make-model --preset qwen3-next-tiny --format safetensors --dtype bf16 --seed 11 --out "$QN_DIR" \
  >> "$OUT/hf-reference.log" 2>&1 &&
  PYTHONUNBUFFERED=1 python3 tests/gpu/hf_qwen3_next_reference.py "$QN_DIR" >> "$OUT/hf-reference.log" 2>&1 ||
  echo "hf_qwen3_next_reference.py failed (see hf-reference.log); the Qwen3-Next HF parity test will fail" | tee -a "$OUT/summary.txt"

log "gpu tests"
ATLAS_DATA_DIR="$DATA" ATLAS_HF_REF_DIR="$HF_DIR" ATLAS_HF_QWEN3_NEXT_DIR="$QN_DIR" "$BUILD/tests/atlas_tests_gpu" > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests exit $?" | tee -a "$OUT/summary.txt"
grep -E "ERROR|FAILED|test cases|assertions|MESSAGE|relative L2|greedy tokens|logit difference" "$OUT/gpu-tests.log" | head -60 | tee -a "$OUT/summary.txt"

log "decode benchmark"
# shellcheck disable=SC2086  # BENCH_ARGS holds several options: split on purpose
"$BUILD/tools/atlas-cuda-bench" --out "$OUT/cuda-bench.json" ${BENCH_ARGS:-} 2>&1 | tee -a "$OUT/summary.txt"

log "decode-anatomy suite through atlas-bench (CUDA backend, CUPTI source, stories260K)"
"$BUILD/tools/atlas-bench" --data-dir "$DATA" run --suite decode-anatomy --backend cuda --no-store --format markdown \
  2>&1 | tee -a "$OUT/summary.txt"

log "CLI: the CUDA backend module opened on demand (engine/backend_module.hpp)"
echo "CUDA libraries loaded by --help (want 0): $(LD_DEBUG=libs "$BUILD/tools/atlas-bench" --help 2>&1 >/dev/null |
  grep -c 'find library=lib\(cudart\|cublas\|cupti\|atlas-cuda\)')" | tee -a "$OUT/summary.txt"
# Set-up (module, kernel loading, cuBLAS, graph capture) in load_ms/warmup_ms, not in ttft_ms.
"$BUILD/tools/atlas-bench" generate --backend cuda --model "$DATA/models/stories260K/stories260K.bin" \
  --prompt "Once upon a time" --max-tokens 64 --json 2>&1 | tee -a "$OUT/summary.txt"
