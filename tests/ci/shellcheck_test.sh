#!/usr/bin/env bash
# ctest ci/shellcheck: shellcheck over the project's shell scripts (tools/**/*.sh, the CI scripts
# in tools/ci/, .ci/run, tests/ and fuzz/ scripts), with the sourced files followed (-x). A
# finding fails; a rule disabled on purpose is disabled on its line with the reason beside it.
# Skipped (exit 77) where shellcheck is not installed (Debian package shellcheck).
#   tests/ci/shellcheck_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v shellcheck >/dev/null ||
  { echo "shellcheck: skipped: shellcheck is not installed (Debian package shellcheck, tools/install-deps.sh)"; exit 77; }
cd "$src"
files=(.ci/run)
while IFS= read -r f; do files+=("$f"); done < <(
  find tools tests fuzz -name node_modules -prune -o -type f -print | sort | while IFS= read -r f; do
    case $f in
      *.sh) echo "$f" ;;
      tools/ci/*) head -1 "$f" | grep -q '^#!.*\bbash\b' && echo "$f" ;;
    esac
  done)
[ ${#files[@]} -ge 20 ] || { echo "shellcheck: found only ${#files[@]} scripts under $src: wrong folder?"; exit 1; }
shellcheck -x "${files[@]}"
echo "shellcheck: ${#files[@]} scripts clean"
