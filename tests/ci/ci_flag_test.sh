#!/usr/bin/env bash
# ctest ci/ci_flag: the Makefile reads CI as every boolean is read (tools/lib/env_flag.sh, the
# spellings of common/env_flag.hpp): 1/true/yes/on turn warnings into errors, unset, empty and
# 0/false/no/off do not, and a typo stops make naming the variable instead of meaning either.
# `make -n` only prints the configure command; nothing is built.
#   tests/ci/ci_flag_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "ci_flag: $*"; exit 1; }
command -v make >/dev/null || { echo "ci_flag: skipped: make is not installed"; exit 77; }
werror() {  # werror CI-VALUE|-: the -DATLAS_WERROR make's configure passes ("-": CI unset)
  local out
  if [ "$1" = - ]; then out=$(cd "$src" && env -u CI make -n configure 2>&1)
  else out=$(cd "$src" && env -u CI make -n configure CI="$1" 2>&1); fi
  sed -n 's/.*-DATLAS_WERROR=\([A-Z]*\).*/\1/p' <<<"$out" | head -1
}
for v in 1 true yes on; do [ "$(werror "$v")" = ON ] || fail "CI=$v: werror $(werror "$v"), want ON"; done
for v in - '' 0 false no off; do [ "$(werror "$v")" = OFF ] || fail "CI=$v: werror $(werror "$v"), want OFF"; done
for v in ture FALSE True; do
  out=$(cd "$src" && make -n configure CI="$v" 2>&1) && fail "CI=$v: make accepted it"
  grep -q "environment variable CI = '$v' is not a boolean" <<<"$out" || fail "CI=$v: no message naming it: $out"
done
# An explicit ATLAS_WERROR needs no CI reading at all.
[ "$(cd "$src" && make -n configure CI=ture ATLAS_WERROR=ON 2>&1 | sed -n 's/.*-DATLAS_WERROR=\([A-Z]*\).*/\1/p' | head -1)" = ON ] ||
  fail "ATLAS_WERROR=ON with CI=ture was not taken as given"
echo "ci_flag: CI read as a boolean of common/env_flag.hpp by the Makefile"
