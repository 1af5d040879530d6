#!/usr/bin/env bash
# ctest ci/oracle_skip: the tokenizer oracle's fixture (tests/oracle/setup.sh, registered in
# tests/CMakeLists.txt with SKIP_RETURN_CODE 77) reports Skipped, not Passed, when it cannot
# fetch the oracle, and tests/skip_reasons.sh lists it with the reason. It used to exit 0, so
# ctest said Passed for a fixture that had checked nothing.
# Runs setup.sh with node hidden, then the same registration in a scratch ctest project.
#   tests/ci/oracle_skip_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in cmake ctest; do
  command -v "$tool" > /dev/null 2>&1 || { echo "oracle_skip: skipped: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A PATH with only what setup.sh needs before it looks for node.
mkdir "$tmp/bin"
for tool in dirname mkdir rm; do ln -s "$(command -v "$tool")" "$tmp/bin/$tool"; done
rc=0
out=$(PATH="$tmp/bin" "$BASH" "$src/tests/oracle/setup.sh" "$tmp/oracle") || rc=$?
[ "$rc" -eq 77 ] || { echo "oracle_skip: setup.sh without node exited $rc, not 77 (skipped): $out"; exit 1; }
[ "$out" = "tokenizer_oracle_setup: skipped: node is not installed" ] || { echo "oracle_skip: setup.sh printed: $out"; exit 1; }
[ "$(cat "$tmp/oracle/SKIPPED")" = "node is not installed" ] || { echo "oracle_skip: no reason in $tmp/oracle/SKIPPED"; exit 1; }

# The registration of tests/CMakeLists.txt, in a project of its own: Skipped, the fixture's
# test still runs, and skip_reasons.sh names it with the reason.
if ! grep -A1 'FIXTURES_SETUP tokenizer_oracle ' "$src/tests/CMakeLists.txt" | grep -q 'SKIP_RETURN_CODE 77'; then
  echo "oracle_skip: tests/CMakeLists.txt no longer registers tokenizer_oracle_setup with SKIP_RETURN_CODE 77"
  exit 1
fi
mkdir "$tmp/project"
cat > "$tmp/project/CMakeLists.txt" << CMAKE
cmake_minimum_required(VERSION 3.20)
project(oracle_skip NONE)
enable_testing()
add_test(NAME tokenizer_oracle_setup COMMAND env PATH=$tmp/bin $BASH $src/tests/oracle/setup.sh $tmp/oracle2)
set_tests_properties(tokenizer_oracle_setup PROPERTIES FIXTURES_SETUP tokenizer_oracle SKIP_RETURN_CODE 77)
add_test(NAME tokenizer_user COMMAND true)
set_tests_properties(tokenizer_user PROPERTIES FIXTURES_REQUIRED tokenizer_oracle)
CMAKE
cmake -S "$tmp/project" -B "$tmp/build" > /dev/null
ctest_out=$(ctest --test-dir "$tmp/build" 2>&1) || true
grep -q 'tokenizer_oracle_setup .*Skipped' <<< "$ctest_out" || { echo "oracle_skip: ctest did not report the fixture Skipped:"; echo "$ctest_out"; exit 1; }
grep -q 'tokenizer_user .*Passed' <<< "$ctest_out" || { echo "oracle_skip: the fixture's test did not run:"; echo "$ctest_out"; exit 1; }
reasons=$(bash "$src/tests/skip_reasons.sh" "$tmp/build")
grep -qx 'skipped: tokenizer_oracle_setup: node is not installed' <<< "$reasons" ||
  { echo "oracle_skip: skip_reasons.sh did not list the fixture: $reasons"; exit 1; }
echo "oracle_skip: tokenizer_oracle_setup reports Skipped with its reason, and skip_reasons.sh lists it"
