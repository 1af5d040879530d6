# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # sourced: test_name and src come from the caller; ci, fails and work are used there
# Sourced by the tests/ci/*_test.sh that drive the CI scripts on a scratch checkout: resolves
# atlas-bench (absolute: the scripts run elsewhere), requires the data directory (make test needs
# it: absent is a failure) and jq (absent: the test reports Skipped, exit 77), and sets up a
# scratch folder removed on exit, a failure flag and a git that commits the same on any box.
# Needs: $src (the checkout) and $test_name (the ctest name after "ci/") set by the caller.
# Sets: ATLAS_BENCH (exported), ci, work, fails; defines fail() and git_().
ATLAS_BENCH=${ATLAS_BENCH_EXE:-$src/build/tools/atlas-bench}
[ -x "$ATLAS_BENCH" ] || { echo "FAIL: no atlas-bench at $ATLAS_BENCH"; exit 1; }
ATLAS_BENCH=$(cd "$(dirname "$ATLAS_BENCH")" && pwd)/$(basename "$ATLAS_BENCH")
export ATLAS_BENCH
[ -f "${ATLAS_DATA_DIR:-}/models/stories260K/stories260K.bin" ] ||
  { echo "FAIL: ATLAS_DATA_DIR (${ATLAS_DATA_DIR:-unset}) has no models/stories260K (make test needs the data directory)"; exit 1; }
command -v jq >/dev/null || { echo "$test_name: skipped: jq is not installed (Debian package jq, tools/install-deps.sh)"; exit 77; }
ci=$src/tools/ci

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }
git_() { git -c user.name=ci-test -c user.email=ci-test@invalid -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }
