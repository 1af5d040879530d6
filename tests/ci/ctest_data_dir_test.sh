#!/usr/bin/env bash
# ctest ci/ctest_data_dir: ATLAS_DATA_DIR given to ctest relative to where it is typed
# (`ATLAS_DATA_DIR=../data ctest --test-dir build`) reaches the tests as that folder, though
# ctest runs them in the build tree: the build's tests/data_dir_env.cmake, which ctest includes
# before any test, makes it absolute against PWD. Runs that file as ctest does (cmake -P, from a
# scratch folder) rather than a nested ctest, which would overwrite the running ctest's log
# (tests/skip_reasons.sh reads it).
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
include=$build/tests/data_dir_env.cmake
[ -f "$include" ] || { echo "ctest_data_dir: no $include"; exit 1; }
# shellcheck disable=SC2016  # cmake's $ENV{}, not the shell's
printf 'include("%s")\nmessage("ATLAS_DATA_DIR=$ENV{ATLAS_DATA_DIR}")\n' "$include" > "$work/probe.cmake"
got=$(cd "$work/here" && PWD=$work/here ATLAS_DATA_DIR=$rel cmake -P "$work/probe.cmake" 2>&1 | sed -n 's/^ATLAS_DATA_DIR=//p')
[ "$got" = "$work/here/$rel" ] || { echo "ctest_data_dir: ATLAS_DATA_DIR=$rel from $work/here reached the tests as '$got'"; exit 1; }
[ -d "$got/models/stories260K" ] || { echo "ctest_data_dir: $got has no models/stories260K"; exit 1; }
# Unset or empty: the build's own data directory.
got=$(cd "$work/here" && env -u ATLAS_DATA_DIR cmake -P "$work/probe.cmake" 2>&1 | sed -n 's/^ATLAS_DATA_DIR=//p')
if [ -z "$got" ] || [ "${got:0:1}" != / ]; then
  echo "ctest_data_dir: unset, the tests got '$got', not the build's absolute folder"
  exit 1
fi
echo "ctest_data_dir: a relative ATLAS_DATA_DIR ($rel) given to ctest reaches the tests as $work/here/$rel"
