# shellcheck shell=bash
# Sourced by tools/gpu-bench.sh and tools/gpu-ab.sh: configures and builds the CUDA targets.
#   gpu_build OUT DATA DEPS TARGET...
#   cuda_bench_bin BUILD_DIR   prints the path of atlas-cuda-bench in a build directory
# BUILD (default build-gpu) and JOBS (default nproc) come from the environment. DEPS: a folder
# with include/{nlohmann,CLI,doctest,openssl} (and lib/libcrypto.so.3 when the machine has none),
# for GPU boxes without the Debian -dev packages; may be empty. Logs go to OUT/build.log; returns 3
# on failure after printing the errors.
gpu_build() {
  local out=$1 data=$2 deps=$3
  shift 3
  local build=${BUILD:-build-gpu} jobs=${JOBS:-$(nproc)}
  local args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATLAS_CUDA=ON "-DATLAS_DATA_DIR=$data")
  if [ -n "$deps" ]; then
    args+=("-DCMAKE_PREFIX_PATH=$deps" "-DOPENSSL_INCLUDE_DIR=$deps/include")
    local crypto
    # shellcheck disable=SC2012  # system library paths: ls picks the first name, as wanted
    crypto=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so* /usr/lib64/libcrypto.so* 2>/dev/null | head -1)
    # shellcheck disable=SC2012  # as above
    [ -z "$crypto" ] && crypto=$(ls "$deps"/lib/libcrypto.so* 2>/dev/null | head -1)
    [ -n "$crypto" ] && args+=("-DOPENSSL_CRYPTO_LIBRARY=$crypto")
  fi
  cmake "${args[@]}" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; return 3; }
  cmake --build "$build" -j "$jobs" --target "$@" >> "$out/build.log" 2>&1 ||
    { grep -E "error|FAILED" "$out/build.log" | head -40; return 3; }
}

# atlas-cuda-bench is BUILD_DIR/tools/atlas-cuda-bench; a base tree older than its move to
# tools/cuda-bench/ (an A/B against an earlier commit) built it as BUILD_DIR/suites/atlas-cuda-bench.
cuda_bench_bin() {
  if [ -x "$1/tools/atlas-cuda-bench" ] || [ ! -x "$1/suites/atlas-cuda-bench" ]; then
    echo "$1/tools/atlas-cuda-bench"
  else
    echo "$1/suites/atlas-cuda-bench"
  fi
}
