#!/usr/bin/env bash
# ctest ci/cuda_guard: every test source that includes a CUDA-only header (engine/cuda/*,
# kernels/*, suites/decode_anatomy/cupti_*, the CUDA toolkit's own headers) includes it inside
# `#ifdef ATLAS_HAVE_CUDA`. Builds without CUDA (the sanitizer and fuzz builds, a CPU box with no
# nvcc) compile every test folder but have no CUDA include paths, so an unguarded include fails
# those builds only, which `make test` on a machine with nvcc never shows.
#   tests/ci/cuda_guard_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
cuda_inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](engine/cuda/|kernels/|suites/decode_anatomy/cupti_|cuda|cublas|cupti|nvtx)'
bad=0 n=0
while IFS= read -r f; do
  n=$((n + 1))
  # The first CUDA include must come after the first `#ifdef ATLAS_HAVE_CUDA` (or `#if
  # defined(ATLAS_HAVE_CUDA)`), and an `#endif` for it must not close before that include.
  inc=$(grep -nE "$cuda_inc" "$f" | head -1 | cut -d: -f1 || true)
  [ -n "$inc" ] || continue
  guard=$(grep -nE '^[[:space:]]*#[[:space:]]*(ifdef[[:space:]]+ATLAS_HAVE_CUDA|if[[:space:]]+defined\(ATLAS_HAVE_CUDA\))' "$f" | head -1 | cut -d: -f1 || true)
  if [ -z "$guard" ] || [ "$guard" -gt "$inc" ]; then
    echo "cuda_guard: $f:$inc includes a CUDA-only header outside #ifdef ATLAS_HAVE_CUDA:"
    sed -n "${inc}p" "$f"
    bad=$((bad + 1))
  fi
done < <(find tests -name '*.cpp' | sort)
[ "$n" -ge 50 ] || { echo "cuda_guard: found only $n test sources under $src: wrong folder?"; exit 1; }
[ "$bad" -eq 0 ] || { echo "cuda_guard: $bad of $n test sources unguarded"; exit 1; }
echo "cuda_guard: $n test sources, every CUDA include guarded"
