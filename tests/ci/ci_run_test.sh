#!/usr/bin/env bash
# ctest ci/ci_run: .ci/run prints each stage's wall time when it ends and a table of all of them
# at the end, also when a stage fails (a slow stage on a new CI machine must be visible without
# reading the log's clock), stops at the failed stage with its exit code, and its sanitizer and
# fuzz builds leave the CUDA module out (they never run a GPU test, and nvcc's compiles would
# take much of CI's 90 minutes on a cold ccache) and compile with line tables only (gcc at -O1).
# `make` is a stub here: nothing is built.
#   tests/ci/ci_run_test.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "ci_run: $*"; exit 1; }

# .ci/run works from the folder above its own: a copy of it in a scratch tree runs the stub.
mkdir -p "$scratch/tree/.ci" "$scratch/bin"
cp "$src/.ci/run" "$scratch/tree/.ci/run"
cat > "$scratch/bin/make" <<'STUB'
#!/usr/bin/env bash
echo "make $*" >> "$CI_RUN_TEST_LOG"
[ "$1" = test-sanitize ] && exit 5
exit 0
STUB
chmod +x "$scratch/bin/make"
rc=0
out=$(cd "$scratch" && CI_RUN_TEST_LOG="$scratch/make.log" PATH="$scratch/bin:$PATH" bash tree/.ci/run 2>&1) || rc=$?
echo "$out"
[ "$rc" -eq 5 ] || fail "exit $rc, expected the failed stage's 5"
grep -q "^ci: stage 'test' took [0-9]* s (exit 0)$" <<<"$out" || fail "no time for stage test when it ended"
grep -q "^ci: stage 'test-sanitize' took [0-9]* s (exit 5)$" <<<"$out" || fail "no time for the failed stage"
grep -q '^ci: stage times (wall clock, s):$' <<<"$out" || fail "no table of stage times"
grep -q '^ci:   test [0-9]* s$' <<<"$out" || fail "the table lacks stage test"
grep -q '^ci:   test-sanitize [0-9]* s (failed, exit 5)$' <<<"$out" || fail "the table lacks the failed stage"
grep -q '^ci:   total [0-9]* s, exit 5$' <<<"$out" || fail "the table lacks the total"
! grep -q "stage 'fuzz'" <<<"$out" || fail "a stage ran after a failed one"
[ "$(cat "$scratch/make.log")" = $'make test\nmake test-sanitize' ] || fail "make ran: $(cat "$scratch/make.log")"

# The instrumented builds configure without CUDA.
for target in fuzz-build test-sanitize; do
  recipe=$(awk -v t="$target:" '$1 == t {on = 1; next} on && /^[^\t]/ {on = 0} on' "$src/Makefile")
  grep -q -- '-DATLAS_CUDA=OFF' <<<"$recipe" || fail "make $target configures without -DATLAS_CUDA=OFF"
done
# ... with line tables only, not RelWithDebInfo's -g, and the gcc sanitizer build at -O1
# (cmake/sanitizers.cmake; README "Fuzzing and sanitizers": -O2 -g cost it 1.8x the CPU time).
grep -q '_atlas_inst_default "-O1 -g1 -DNDEBUG"' "$src/cmake/sanitizers.cmake" || fail "the gcc sanitizer build is not at -O1 -g1"
grep -q '_atlas_inst_default "-O2 -gline-tables-only -DNDEBUG"' "$src/cmake/sanitizers.cmake" || fail "the clang fuzz build is not at -O2 -gline-tables-only"
echo "ci_run: stage times printed per stage and as a table on failure; sanitizer and fuzz builds without CUDA, with line tables only (gcc at -O1)"
