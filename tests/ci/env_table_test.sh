#!/usr/bin/env bash
# ctest ci/env_table: every ATLAS_* environment variable that the code or a script outside
# tests/ reads is listed in docs/environment.md, so the one table of them cannot fall behind the
# code (ATLAS_PREFILL_BY_STEPS and ATLAS_BENCH were read but missing when this check was added).
# Read means: getenv("ATLAS_X"), env_flag, env_int or env_choice("ATLAS_X") in C++/CUDA, ${ATLAS_X} or $ATLAS_X in a
# shell script, os.environ.get("ATLAS_X") / os.environ["ATLAS_X"] in Python. Variables the tests
# themselves set and read are the tests' own business.
#   tests/ci/env_table_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
doc=docs/environment.md
[ -f "$doc" ] || { echo "env_table: no $doc under $src"; exit 1; }

sources() {  # files of one kind outside tests/, build trees and hidden folders (.git, copies of other trees)
  find . \( -path ./tests -o -path './build*' -o -path './.*' -o -path ./fuzz/corpus -o -name node_modules \) -prune \
    -o -type f \( "$@" \) -print
}
names=$(
  {
    sources -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' |
      xargs grep -ohE '(getenv|env_flag|env_int|env_choice)\("ATLAS_[A-Z0-9_]+"' || true
    { sources -name '*.sh'; echo ./.ci/run; } | xargs grep -ohE '\$\{?ATLAS_[A-Z0-9_]+' || true
    sources -name '*.py' | xargs grep -ohE "environ(\.get\(|\[)[\"']ATLAS_[A-Z0-9_]+" || true
  } | grep -oE 'ATLAS_[A-Z0-9_]+' | sort -u
)
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
echo "env_table: all $n ATLAS_* variables read by the code and scripts are in $doc"
