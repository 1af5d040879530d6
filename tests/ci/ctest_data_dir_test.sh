#!/usr/bin/env bash
# ctest ci/ctest_data_dir: ATLAS_DATA_DIR given to ctest relative to where it is typed
# (`ATLAS_DATA_DIR=../data ctest --test-dir build`) reaches the tests as that folder, though
# ctest runs them in the build tree: the build's data_dir_env.cmake makes it absolute against
# PWD. Runs one golden case through a nested ctest from a scratch folder (about a second).
#   tests/ci/ctest_data_dir_test.sh [SOURCE_DIR]   (ATLAS_BENCH_EXE, ATLAS_DATA_DIR from ctest)
set -euo pipefail
exe=${ATLAS_BENCH_EXE:?run by ctest (ATLAS_BENCH_EXE names the build)}
build=$(cd "$(dirname "$exe")/.." && pwd)
data=${ATLAS_DATA_DIR:?ctest sets ATLAS_DATA_DIR}
[ -d "$data/models/stories260K" ] || { echo "ctest_data_dir: no models/stories260K in $data (the data directory is required)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/here"
# A name that exists only where the command is typed (a link to the data directory), so the
# tests find it only if it was made absolute against that folder.
ln -s "$(cd "$data" && pwd)" "$work/here/the-data"
rel=the-data
out=$(cd "$work/here" && ATLAS_DATA_DIR=$rel ctest --test-dir "$build" -R 'engine/golden: prompt' 2>&1) ||
  { echo "ctest_data_dir: ATLAS_DATA_DIR=$rel from $work/here failed:"; echo "$out"; exit 1; }
grep -q "100% tests passed, 0 tests failed out of 1" <<<"$out" ||
  { echo "ctest_data_dir: not exactly one case passed:"; echo "$out"; exit 1; }
echo "ctest_data_dir: a relative ATLAS_DATA_DIR ($rel) given to ctest reached the tests"
