#!/usr/bin/env bash
# ctest ci/ci_flag: the Makefile reads CI as common/env_flag.hpp's ci_env does
# (tools/lib/ci_flag.sh): unset, empty and 0/false/no/off in any case leave warnings as
# warnings, any other value (true, True, 1, a CI system's name) turns them into errors.
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
# CI is the CI system's variable (AppVeyor sets True, others their own name): never an error.
for v in 1 true yes on True TRUE drone woodpecker; do [ "$(werror "$v")" = ON ] || fail "CI=$v: werror $(werror "$v"), want ON"; done
for v in - '' 0 false no off FALSE False NO Off; do [ "$(werror "$v")" = OFF ] || fail "CI=$v: werror $(werror "$v"), want OFF"; done
# An explicit ATLAS_WERROR needs no CI reading at all.
[ "$(cd "$src" && make -n configure CI=false ATLAS_WERROR=ON 2>&1 | sed -n 's/.*-DATLAS_WERROR=\([A-Z]*\).*/\1/p' | head -1)" = ON ] ||
  fail "ATLAS_WERROR=ON with CI=false was not taken as given"
echo "ci_flag: the Makefile reads CI as common/env_flag.hpp's ci_env does (never an error)"
