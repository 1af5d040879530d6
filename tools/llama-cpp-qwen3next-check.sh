#!/usr/bin/env bash
# Cross-check of our qwen3next GGUF writer and CPU backend against llama.cpp: a GGUF
# that `atlas-bench make-model` writes for a Qwen3-Next model must be read by llama.cpp (its
# `qwen3next` architecture) with matching logits. Not in CI: llama.cpp is built from source and
# is not a dependency of this project.
#
#   tools/llama-cpp-qwen3next-check.sh LLAMA_CPP_DIR [BUILD_DIR]
#
#   LLAMA_CPP_DIR  a llama.cpp source tree. Its static libraries are taken from
#                  LLAMA_CPP_DIR/build-cpu (override: LLAMA_CPP_BUILD); when libllama.a is not
#                  there the script builds it (CPU only, static, -j2).
#   BUILD_DIR      our build (default build/): needs tools/atlas-bench and tools/bench_logits.
# Environment: CHECK_OUT (default a new temp dir), LLAMA_CPP_COMMIT (printed in the report when
# the tree has no .git), CHECK_THREADS (default 1).
#
# For each GGUF (preset qwen3-next-tiny, seed 17: F32 with the legacy fused ssm_in, F32 with
# llama.cpp's current split attn_qkv + attn_gate, and BF16 / Q8_0 fused) and three prompts of 7,
# 70 and 150 token ids (lengths not multiples of the GDN chunk, 64):
#   1. our engine (bench_logits) prefills the prompt and takes 128 greedy steps, writing its
#      logits at every position and the ids it fed;
#   2. llama.cpp (tools/llama-cpp-check/llama_logits.cpp against llama.h) is fed the same ids
#      (teacher forcing) and writes its logits at the same positions;
#   3. compare_logits.py: relative L2 per position and greedy argmax agreement.
# Pass (F32 files): median logits rel L2 <= 1e-3 over the 129 positions of each prompt and every
# decided greedy step equal (our top-2 margin > 1e-3); the worst position is printed too. BF16 /
# Q8_0 files are reported, not judged: llama.cpp rounds activations to bf16 / Q8 blocks in those
# dot products where we keep them in float32, so the logits differ by ~1e-2 by design. Exit 0
# when all F32 checks pass, 1 otherwise, 3 on a usage error or a missing file, 4 when llama.cpp or
# llama_logits does not build (the program's failure; README, "Exit codes": 2 is the gates'
# inconclusive).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then echo "usage: $0 LLAMA_CPP_DIR [BUILD_DIR]" >&2; exit 3; fi
llama=$1
here=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$here/build}
llama=$(cd "$llama" && pwd) || { echo "llama-cpp-qwen3next-check: LLAMA_CPP_DIR $1: not a folder" >&2; exit 3; }
lbuild=${LLAMA_CPP_BUILD:-$llama/build-cpu}
out=${CHECK_OUT:-$(mktemp -d /tmp/llama-cpp-qwen3next.XXXXXX)}
threads=${CHECK_THREADS:-1}
mkdir -p "$out"
for f in "$build/tools/atlas-bench" "$build/tools/bench_logits" "$llama/include/llama.h"; do
  [ -e "$f" ] || { echo "llama-cpp-qwen3next-check: not found: $f" >&2; exit 3; }
done

if [ ! -f "$lbuild/src/libllama.a" ]; then
  echo "building llama.cpp (CPU, static) in $lbuild"
  cmake -S "$llama" -B "$lbuild" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF > "$out/llama-cmake.log" 2>&1 || {
    echo "llama.cpp cmake failed; log: $out/llama-cmake.log" >&2; exit 4; }
  cmake --build "$lbuild" --target llama -j2 > "$out/llama-build.log" 2>&1 || {
    echo "llama.cpp build failed; log: $out/llama-build.log" >&2; exit 4; }
fi
omp=""
grep -q "GGML_OPENMP_ENABLED:INTERNAL=ON" "$lbuild/CMakeCache.txt" 2>/dev/null && omp=-fopenmp
g++ -O2 -std=c++17 -I"$llama/include" -I"$llama/ggml/include" "$here/tools/llama-cpp-check/llama_logits.cpp" -o "$out/llama_logits" \
  "$lbuild/src/libllama.a" "$lbuild/ggml/src/libggml.a" "$lbuild/ggml/src/libggml-cpu.a" "$lbuild/ggml/src/libggml-base.a" \
  $omp -lpthread -ldl || { echo "llama_logits did not build against $llama" >&2; exit 4; }

commit=${LLAMA_CPP_COMMIT:-$(git -C "$llama" rev-parse --short=12 HEAD 2>/dev/null || echo "unknown (no .git; set LLAMA_CPP_COMMIT)")}
echo "llama.cpp: $llama, commit $commit; ours: $(git -C "$here" rev-parse --short=12 HEAD 2>/dev/null || echo unknown); $(date -u '+%Y-%m-%d %H:%M UTC')"

vocab=512
status=0
for variant in f32:fused f32:split bf16:fused q8_0:fused; do
  dtype=${variant%%:*}
  layout=${variant##*:}
  gguf=$out/qwen3-next-tiny-$dtype-$layout.gguf
  "$build/tools/atlas-bench" make-model --preset qwen3-next-tiny --seed 17 --dtype "$dtype" --gdn-layout "$layout" --out "$gguf" > /dev/null
  if [ "$dtype" = f32 ]; then limit=1e-3; margin=1e-3; mode=judge; else limit=5e-2; margin=5e-2; mode=report; fi
  for n in 7 70 150; do
    prompt=$(python3 -c "print(','.join(str((i * 37 + 11) % $vocab) for i in range($n)))")
    tag=$out/$dtype-$layout-$n
    "$build/tools/bench_logits" "$gguf" --prompt "$prompt" --steps 128 --threads "$threads" --max-seq-len 512 --out "$tag.ours" 2> "$tag.ours.log"
    "$out/llama_logits" "$gguf" "$tag.ours.tokens" "$n" "$tag.llama" "$threads" > "$tag.llama.log" 2>&1 || {
      echo "$dtype $layout prompt $n: llama.cpp failed; log: $tag.llama.log" >&2; tail -5 "$tag.llama.log" >&2; status=1; continue; }
    python3 "$here/tools/llama-cpp-check/compare_logits.py" "$tag.ours" "$tag.llama" "$vocab" "$dtype $layout prompt $n" "$limit" "$margin" "$mode" || status=1
  done
done
echo "outputs in $out"
exit $status
