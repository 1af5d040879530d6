#!/usr/bin/env bash
# ctest ci/cuda_routing: a source whose name routes it out of its layer (a cuda/ folder,
# cuda_*.cpp, cupti_*.cpp; cmake/dependencies.cmake) but that no CUDA library builds fails the
# configure, naming the file; one that a CUDA library claims configures. Configures a copy of the
# tracked files with CUDA off (the check runs without nvcc too), well under a second each, under
# a folder named c++ (a checkout path with regex characters must route the same).
#   tests/ci/cuda_routing_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v cmake > /dev/null || { echo "cuda_routing: skipped: cmake is not installed"; exit 77; }
git -C "$src" rev-parse --git-dir > /dev/null 2>&1 ||
  { echo "cuda_routing: skipped: $src is not a git checkout (the test copies its tracked files)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configure() {  # configure() TREE: cmake's exit status; its output in $work/log
  cmake -S "$1" -B "$1/build" -DATLAS_CUDA=OFF -DBUILD_TESTING=OFF > "$work/log" 2>&1
}
copy() {  # copy() DEST: the checkout's tracked files, as they are on disk
  mkdir -p "$1"
  git -C "$src" ls-files -z | (cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$1"
}
fail=0
copy "$work/c++/unclaimed"
touch "$work/c++/unclaimed/engine/formats/cuda_probe.cpp"
if configure "$work/c++/unclaimed"; then
  echo "cuda_routing: engine/formats/cuda_probe.cpp (claimed by no CUDA library) configured"; fail=1
elif ! grep -q "engine/formats/cuda_probe.cpp: its name routes it out of its layer" "$work/log"; then
  echo "cuda_routing: the configure failed, but not naming engine/formats/cuda_probe.cpp:"; cat "$work/log"; fail=1
fi
copy "$work/c++/claimed"
touch "$work/c++/claimed/suites/decode_anatomy/cuda_probe.cpp" "$work/c++/claimed/engine/cuda/blocks/probe.cpp"
if ! configure "$work/c++/claimed"; then
  echo "cuda_routing: sources a CUDA library claims failed the configure:"; cat "$work/log"; fail=1
fi
[ "$fail" -eq 0 ] && echo "cuda_routing: an unclaimed CUDA-only source fails the configure, naming it; claimed ones configure"
exit "$fail"
