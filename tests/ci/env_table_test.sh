#!/usr/bin/env bash
# ctest ci/env_table: docs/environment.md and the code agree both ways, so the one table of the
# environment variables cannot fall behind the code nor outlive it:
#   - every ATLAS_* variable that the code or a script outside tests/ reads is listed
#     (ATLAS_PREFILL_BY_STEPS and ATLAS_BENCH were read but missing when this check was added);
#   - every variable a table row names (its first cell) is read by some file of the tree, tests/
#     included (ATLAS_DATA_DIR's row once named a reader, .ci/run, that did not read it; a row
#     left behind by a removed knob reads as a knob that works).
# Read means: getenv("X"), env_flag / env_int / env_choice("X") or built_exe_or_skip("X") (tests/built_exe.hpp) in
# C++/CUDA, ${X} or $X in a shell script (.ci/run included), os.environ.get("X") /
# os.environ["X"] in Python, $ENV{X} in CMake. Variables the tests themselves set and read are
# the tests' own business (not required in the table).
#   tests/ci/env_table_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
doc=docs/environment.md
[ -f "$doc" ] || { echo "env_table: no $doc under $src"; exit 1; }

# sources PRUNE_TESTS FIND-TESTS...: files of one kind outside build trees and hidden folders
# (.git, copies of other trees), and outside tests/ when PRUNE_TESTS is yes.
sources() {
  local tests=./tests
  [ "$1" = yes ] || tests=./tests-not-pruned
  shift
  find . \( -path "$tests" -o -path './build*' -o -path './.*' -o -path ./fuzz/corpus -o -name node_modules \) -prune \
    -o -type f \( "$@" \) -print
}
# read_names PRUNE_TESTS PREFIX: the variables named PREFIX* that the files read, one a line.
read_names() {
  local p=$2
  {
    sources "$1" -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' |
      xargs grep -ohE "(getenv|env_flag|env_int|env_choice|find_built_exe|built_exe_or_skip)\\(\"${p}[A-Z0-9_]*\"" || true
    { sources "$1" -name '*.sh'; echo ./.ci/run; } | xargs grep -ohE "\\\$\\{?${p}[A-Z0-9_]*" || true
    sources "$1" -name '*.py' | xargs grep -ohE "environ(\\.get\\(|\\[)[\"']${p}[A-Z0-9_]*" || true
    sources "$1" -name CMakeLists.txt -o -name '*.cmake' | xargs grep -ohE "\\\$ENV\\{${p}[A-Z0-9_]*" || true
  } | grep -oE "${p}[A-Z0-9_]*" | sort -u
}
# stale_rows DOC: the variables DOC's table rows name (first cell) that no file reads.
stale_rows() {
  grep -oE "^\\| \`[A-Z][A-Z0-9_]*\`" "$1" | grep -oE '[A-Z][A-Z0-9_]*' | sort -u | comm -23 - <(read_names no '[A-Z]')
}
names=$(read_names yes ATLAS_)
n=$(printf '%s\n' "$names" | grep -c . || true)
[ "$n" -ge 20 ] || { echo "env_table: found only $n variables read under $src: wrong folder?"; exit 1; }
missing=0
while IFS= read -r v; do
  if ! grep -qF "\`$v\`" "$doc"; then
    echo "env_table: $v is read but not listed in $doc"
    missing=$((missing + 1))
  fi
done <<< "$names"
[ "$missing" -eq 0 ] || { echo "env_table: $missing of $n variables missing from $doc"; exit 1; }

# The check of stale rows finds one: a row no file reads, added to a copy of the page.
planted=$(mktemp)
trap 'rm -f "$planted"' EXIT
{ cat "$doc"; echo "| \`ATLAS_PLANTED_ROW_NOBODY_READS\` | planted by tests/ci/env_table_test.sh | - | nothing |"; } > "$planted"
[ "$(stale_rows "$planted")" = ATLAS_PLANTED_ROW_NOBODY_READS ] ||
  { echo "env_table: the stale-row check missed a planted row (found: $(stale_rows "$planted" | tr '\n' ' '))"; exit 1; }
stale=$(stale_rows "$doc")
if [ -n "$stale" ]; then
  while IFS= read -r v; do echo "env_table: $doc lists $v, which no file in the tree reads (remove or fix the row)"; done <<< "$stale"
  exit 1
fi
rows=$(grep -cE "^\\| \`[A-Z][A-Z0-9_]*\`" "$doc")
echo "env_table: all $n ATLAS_* variables read by the code and scripts are in $doc, and each of its $rows rows is read"
