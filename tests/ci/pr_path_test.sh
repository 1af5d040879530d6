#!/usr/bin/env bash
# ctest ci/pr_path: the pull-request workflow's path on one box, through the scripts its two jobs
# call (tools/ci/workflows/pr-gate.yml, pr-gate-comment.yml): tools/ci/pr-gate.sh on a PR branch
# of a scratch checkout whose main holds a gate config (cut to one ttft length and a short decode
# anatomy, no timed judgement: about a second) and its BASELINE, then tools/ci/post-summary.sh
# --dry-run on the artifact it wrote. Asserts:
#   - the artifact: exit-code 0, summary.md headed by the pass, head-sha and the record's commit
#     the PR's head, pr-number from PR_NUMBER, the record under records/;
#   - the target comes from GITHUB_BASE_REF: a PR that edits the gate config is judged with
#     main's copy and the summary says what moved; a shallow clone is refused (exit 2);
#   - the comment body: the marker and this script's header first, the summary after it;
#   - a hostile artifact (as a PR's job can write anything): @mentions made inert, a forged
#     marker dropped, the size cut; a pr-number that is not a number, a symlinked summary, a
#     RUN_HEAD_SHA that is not a commit id: refused (exit 1) and no body written.
#   tests/ci/pr_path_test.sh [SOURCE_DIR]
# Environment: ATLAS_BENCH_EXE (ctest sets it), ATLAS_DATA_DIR.
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
test_name=pr_path
# shellcheck source=tests/ci/scratch_env.sh
. "$src/tests/ci/scratch_env.sh"
gate_opts=(--config gate.json --no-timed --allow-noisy --machine-class cpu-test)

# main: the gate config, its suite config and the BASELINE made from main's own run.
mkdir "$work/repo"
cd "$work/repo"
git_ init -q
jq '.suite_config = "suite.json" | .suites = ["ttft", "decode-anatomy"] | .quiet_box.sample_window_ms = 100' \
  "$src/gates/config/pr.json" > gate.json
cat > suite.json <<'EOF'
{"name": "ci-smoke", "description": "one ttft length, a short decode anatomy", "seed": 1, "suites": {
  "ttft": {"warmup": 0, "repetitions": 2, "lengths": [16], "decode_tokens": 2, "warm": false},
  "decode-anatomy": {"warmup": 0, "repetitions": 2, "prompt_tokens": 8, "decode_tokens": 4}}}
EOF
echo ".benchmarks/" > .gitignore
git_ add -A && git_ commit -q -m "gate config"
"$ATLAS_BENCH" gate "${gate_opts[@]}" > "$work/main-run.log" 2>&1 || true   # exit 3: no baseline yet
"$ATLAS_BENCH" baseline init --config gate.json --machine-class cpu-test --record HEAD --reason "ci test" > /dev/null
git_ add baselines && git_ commit -q -m "baseline"

# The PR: one commit on a branch; the gate as the workflow runs it.
git_ checkout -q -b pr
git_ commit -q --allow-empty -m "a change"
head=$(git rev-parse HEAD)
rc=0
GITHUB_BASE_REF=main PR_NUMBER=7 "$ci/pr-gate.sh" "$work/art" "${gate_opts[@]}" > "$work/pr.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { fail "pr-gate.sh exited $rc"; tail -30 "$work/pr.log"; }
[ "$(cat "$work/art/exit-code" 2>/dev/null)" = 0 ] || fail "exit-code file"
[ "$(cat "$work/art/pr-number" 2>/dev/null)" = 7 ] || fail "pr-number file"
[ "$(cat "$work/art/head-sha" 2>/dev/null)" = "$head" ] || fail "head-sha file"
# shellcheck disable=SC2016  # literal text, not an expansion
head -1 "$work/art/summary.md" | grep -qF '### atlas-bench gate `pr`: **pass**' || fail "summary.md does not open with the pass"
mapfile -t recs < <(find "$work/art/records" -name '*.json')
if [ ${#recs[@]} -ne 1 ]; then fail "${#recs[@]} records in the artifact"
elif [ "$(jq -r .git.commit "${recs[0]}")" != "$head" ]; then fail "the record is of $(jq -r .git.commit "${recs[0]}"), not $head"; fi
grep -q "target branch origin/main (GITHUB_BASE_REF)" "$work/pr.log" || fail "pr-gate.sh did not say the target"

# A shallow clone cannot find the merge-base: refused, not passed.
git_ clone -q --depth 1 --branch pr "file://$work/repo" "$work/shallow" 2>/dev/null
cd "$work/shallow"
rc=0
GITHUB_BASE_REF=main PR_NUMBER=7 "$ci/pr-gate.sh" "$work/art-shallow" "${gate_opts[@]}" > "$work/pr-shallow.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a shallow clone's gate exited $rc, wanted 2 (inconclusive)"
grep -q "this checkout is shallow" "$work/pr-shallow.log" || fail "pr-gate.sh did not name the shallow clone"
cd "$work/repo"

# A PR that drops a suite from the gate config: judged with main's copy, and the summary says so.
jq '.suites = ["ttft"]' gate.json > gate.tmp && mv gate.tmp gate.json
git_ commit -q -am "drop a suite from the gate"
rc=0
GITHUB_BASE_REF=main PR_NUMBER=7 "$ci/pr-gate.sh" "$work/art-edit" "${gate_opts[@]}" > "$work/pr-edit.log" 2>&1 || rc=$?
[ "$(cat "$work/art-edit/exit-code" 2>/dev/null)" = "$rc" ] || fail "exit-code file of the edited run"
grep -q "gate config .*gate.json changed since the merge-base" "$work/art-edit/summary.md" ||
  fail "the summary of a PR that edits the gate config does not list the change"
[ "$(jq -r '.suites | keys | join(",")' "$(find "$work/art-edit/records" -name '*.json' | head -1)")" = "decode-anatomy,ttft" ] ||
  fail "the edited gate config was obeyed: main's copy runs both suites"
cd "$work"

# The posting job's body, from the artifact of the first run.
rc=0
RUN_HEAD_SHA=$head RUN_URL=https://example.invalid/run/1 RUN_CONCLUSION=success \
  "$ci/post-summary.sh" "$work/art" --dry-run "$work/body.md" > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "post-summary.sh --dry-run exited $rc"
[ "$(head -1 "$work/body.md")" = "<!-- atlas-bench-gate-summary -->" ] || fail "the body does not start with the marker"
sed -n 2p "$work/body.md" | grep -qF "**atlas-bench gate** for ${head:0:12}: job success ([run](https://example.invalid/run/1))." ||
  fail "the body's header: $(sed -n 2p "$work/body.md")"
# shellcheck disable=SC2016  # literal text, not an expansion
grep -qF '### atlas-bench gate `pr`: **pass**' "$work/body.md" || fail "the body lacks the summary"

# Hostile artifacts.
mkdir "$work/hostile"
{
  echo "### atlas-bench gate \`pr\`: **pass** cc @octo-org/reviewers and @alice"
  echo "<!-- atlas-bench-gate-summary -->"
  head -c 70000 /dev/zero | tr '\0' x
} > "$work/hostile/summary.md"
echo 7 > "$work/hostile/pr-number"
RUN_HEAD_SHA=$head "$ci/post-summary.sh" "$work/hostile" --dry-run "$work/hostile-body.md" > /dev/null 2>&1 ||
  fail "post-summary.sh refused a long summary"
if grep -qE '@(octo-org|alice)' "$work/hostile-body.md"; then fail "an @mention reached the body"; fi
grep -qF "@$(printf '\xe2\x80\x8b')octo-org/reviewers" "$work/hostile-body.md" || fail "the mention is not kept as inert text"
[ "$(grep -c '<!-- atlas-bench-gate-summary -->' "$work/hostile-body.md")" -eq 1 ] || fail "a forged marker reached the body"
size=$(wc -c < "$work/hostile-body.md")
[ "$size" -le 61000 ] || fail "the body is $size bytes: not cut"
grep -q "summary cut at 60000 bytes" "$work/hostile-body.md" || fail "the cut is not said"
refused() {  # refused WHAT ENV... : post-summary.sh must exit 3 (input error) and write no body
  local what=$1 rc=0
  shift
  rm -f "$work/refused.md"
  env "$@" "$ci/post-summary.sh" "$work/bad" --dry-run "$work/refused.md" > "$work/refused.log" 2>&1 || rc=$?
  if [ "$rc" -ne 3 ] || [ -e "$work/refused.md" ]; then fail "$what: exit $rc (wanted 3, no body)"; cat "$work/refused.log"; fi
}
mkdir "$work/bad"
echo "hello" > "$work/bad/summary.md"
printf '7; curl https://evil.invalid\n' > "$work/bad/pr-number"
refused "a pr-number with a command" RUN_HEAD_SHA="$head"
echo 7 > "$work/bad/pr-number"
# shellcheck disable=SC2016  # literal text, not an expansion
refused "a RUN_HEAD_SHA that is not a commit id" RUN_HEAD_SHA='$(id)'
rm "$work/bad/summary.md"
ln -s /etc/passwd "$work/bad/summary.md"
refused "a symlinked summary" RUN_HEAD_SHA="$head"

[ "$fails" -eq 0 ] && echo "pr_path: gate artifact, trusted target, shallow refusal and comment body checked"
exit "$fails"
