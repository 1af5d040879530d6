#!/usr/bin/env bash
# ctest ci/nightly_e2e: the nightly workflow's path on one box, through the scripts its jobs call
# (tools/ci/workflows/nightly.yml): for each of two commits of a scratch checkout, 3 shards
# (nightly-shard.sh, each into its own artifact folder as on 3 runners), nightly-merge.sh into a
# checkout of the records branch, store-push.sh to its origin, then nightly-report.sh over the
# store. The nightly gate config is cut to the smallest suite work (stories260K, one ttft length,
# a few decode tokens, one agentic trace, one BFCL entry): about 1 s a shard.
# Asserts: each shard ran its slice (entries i, i+3, ... of the config's suite list) and only it;
# the merged record holds every suite once with the shard's samples; the pushed branch holds
# both merged records; the site's index counts 2 records in 1 line, the class page names both
# commits and each suite has its page; a merge with a shard missing fails and writes nothing;
# ratchet-pr.sh puts a metric missing from the nightly BASELINE on a branch of its own, once.
#   tests/ci/nightly_e2e_test.sh [SOURCE_DIR]
# Environment: ATLAS_BENCH_EXE (ctest sets it), ATLAS_DATA_DIR.
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
test_name=nightly_e2e
# shellcheck source=tests/ci/scratch_env.sh
. "$src/tests/ci/scratch_env.sh"

# The nightly gate config with its suites' work cut to the least each suite accepts.
jq --arg s "$work/suite.json" '.suite_config = $s | .quiet_box.sample_window_ms = 100' "$src/gates/config/nightly.json" > "$work/gate.json"
cat > "$work/suite.json" <<'EOF'
{"name": "ci-smoke", "description": "the least work of each nightly suite", "seed": 1, "suites": {
  "ttft": {"warmup": 0, "repetitions": 2, "lengths": [16], "decode_tokens": 2, "warm": false},
  "decode-anatomy": {"warmup": 0, "repetitions": 2, "prompt_tokens": 8, "decode_tokens": 4},
  "agentic": {"warmup": 0, "repetitions": 1, "traces": ["retrieval-agent"], "think_time_scale": 0},
  "bfcl": {"categories": ["simple_python"], "per_category": 1, "max_new_tokens": 4}}}
EOF
mapfile -t suites < <(jq -r '.suites[]' "$work/gate.json")
[ ${#suites[@]} -eq 4 ] || fail "the nightly config lists ${#suites[@]} suites, the test expects 4"

# The checkout the shards run in, and the records branch on its origin (created once, as docs/ci.md says).
mkdir "$work/checkout"
cd "$work/checkout"
git_ init -q
echo ".benchmarks/" > .gitignore
git_ add .gitignore
GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" git_ commit -q -m "first"
git_ init -q --bare "$work/origin.git"
git_ -C "$work/checkout" push -q "$work/origin.git" HEAD:refs/heads/seed
git_ clone -q "$work/origin.git" "$work/records-seed" 2>/dev/null
git_ -C "$work/records-seed" checkout -q --orphan benchmark-records
git_ -C "$work/records-seed" commit -q --allow-empty -m "records branch"
git_ -C "$work/records-seed" push -q origin benchmark-records
git_ clone -q -b benchmark-records "$work/origin.git" "$work/records"
store=$work/records/.benchmarks

# One nightly: 3 shards into their own artifact folders, merged into the records checkout, pushed.
nightly() {
  local tag=$1 i
  for i in 0 1 2; do
    "$ci/nightly-shard.sh" "$i" 3 "$work/artifacts-$tag/nightly-cpu-shard-$i" \
      --config "$work/gate.json" --allow-noisy --machine-class cpu-test > "$work/shard-$tag-$i.log" 2>&1 ||
      { fail "shard $i/3 of $tag exited $?"; tail -20 "$work/shard-$tag-$i.log"; }
  done
  "$ci/nightly-merge.sh" "$work/artifacts-$tag" "$store" > "$work/merge-$tag.log" 2>&1 ||
    { fail "nightly-merge.sh of $tag exited $?"; cat "$work/merge-$tag.log"; }
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=commit.gpgsign GIT_CONFIG_VALUE_0=false \
    GIT_AUTHOR_NAME=ci-test GIT_AUTHOR_EMAIL=ci-test@invalid "$ci/store-push.sh" "$work/records" "nightly $tag" > /dev/null ||
    fail "store-push.sh of $tag exited $?"
}
nightly first
first=$(git rev-parse HEAD)
GIT_COMMITTER_DATE="2026-01-02T00:00:00Z" git_ commit -q --allow-empty -m "second"
second=$(git rev-parse HEAD)
nightly second

# Each shard ran exactly its slice; the merged record has every suite once, with the shard's samples.
for tag in first second; do
  for i in 0 1 2; do
    want=$(for ((k = i; k < ${#suites[@]}; k += 3)); do echo "${suites[$k]}"; done | sort | tr '\n' ' ')
    mapfile -t recs < <(find "$work/artifacts-$tag/nightly-cpu-shard-$i/records" -name '*.json' 2>/dev/null)
    [ ${#recs[@]} -eq 1 ] || { fail "$tag shard $i: ${#recs[@]} records"; continue; }
    got=$(jq -r '.suites | keys[]' "${recs[0]}" | sort | tr '\n' ' ')
    [ "$got" = "$want" ] || fail "$tag shard $i ran '$got', its slice is '$want'"
    [ "$(cat "$work/artifacts-$tag/nightly-cpu-shard-$i/exit-code")" = 0 ] || fail "$tag shard $i: exit-code file"
  done
done
mapfile -t merged < <(find "$store" -name '*.json' | sort)
[ ${#merged[@]} -eq 2 ] || fail "the store holds ${#merged[@]} records, expected the 2 merged ones"
for m in "${merged[@]}"; do
  got=$(jq -r '.suites | keys[]' "$m" | sort | tr '\n' ' ')
  [ "$got" = "$(printf '%s\n' "${suites[@]}" | sort | tr '\n' ' ')" ] || fail "$m holds suites '$got'"
  commit=$(jq -r .git.commit "$m")
  tag=$([ "$commit" = "$first" ] && echo first || echo second)
  [ "$commit" = "$first" ] || [ "$commit" = "$second" ] || fail "$m is of commit $commit"
  shard0=$(find "$work/artifacts-$tag/nightly-cpu-shard-0/records" -name '*.json' | head -1)
  a=$(jq -c '.suites.ttft.metrics["e2e_ms"].samples' "$m")
  b=$(jq -c '.suites.ttft.metrics["e2e_ms"].samples' "$shard0")
  if [ "$a" != "$b" ] || [ "$a" = null ]; then fail "merged ttft e2e_ms samples $a differ from shard 0's $b"; fi
done
pushed=$(git_ -C "$work/origin.git" ls-tree -r --name-only benchmark-records | grep -c '^\.benchmarks/cpu-test/.*/nightly-.*\.json$' || true)
[ "$pushed" -eq 2 ] || fail "the records branch on origin holds $pushed merged records, expected 2"

# A lost shard: refused before anything is written.
rm -rf "$work/artifacts-second/nightly-cpu-shard-1"
rc=0
"$ci/nightly-merge.sh" "$work/artifacts-second" "$work/store-partial" > "$work/merge-partial.log" 2>&1 || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "shard 1/3: 0 record(s), expected 1" "$work/merge-partial.log"; then
  fail "a merge without shard 1 exited $rc"
  cat "$work/merge-partial.log"
fi
[ ! -e "$work/store-partial" ] || fail "a refused merge wrote $(find "$work/store-partial" -type f | wc -l) file(s)"

# The report over the store: the site lists both records on one line, each suite has a page.
rc=0
"$ci/nightly-report.sh" "$store" "$work/site" > "$work/report.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { fail "nightly-report.sh exited $rc"; cat "$work/report.log"; }
grep -q "^result: pass$" "$work/report.log" || fail "report: no 'result: pass'"
grep -qF "<p>2 records in 1 lines." "$work/site/index.html" || fail "index.html does not count 2 records in 1 line"
grep -qF '<a href="cpu-test/index.html">cpu-test</a>' "$work/site/index.html" || fail "index.html does not link the class page"
grep -qF "2 commits, ${first:0:7} to ${second:0:7}" "$work/site/cpu-test/index.html" ||
  fail "the class page does not name the line's 2 commits ${first:0:7} to ${second:0:7}"
for s in "${suites[@]}"; do
  page=$(find "$work/site/cpu-test" -name "$s.html" | head -1)
  [ -n "$page" ] || { fail "no page for suite $s"; continue; }
  if ! grep -qF "${first:0:7}" "$page" || ! grep -qF "${second:0:7}" "$page"; then fail "$page does not name both commits"; fi
done
[ -f "$work/site/report.txt" ] || fail "the site has no report.txt"

# The ratchet's pull request: a nightly BASELINE made from the first nightly, one counted metric
# taken out of it and committed; the second nightly's record adds it back on a branch of its own.
cd "$work/checkout"
git_ remote add origin "$work/origin.git"
first_merged=$(jq -r --arg c "$first" 'select(.git.commit == $c) | input_filename' "${merged[@]}")
"$ATLAS_BENCH" baseline init --gate nightly --record "$first_merged" --machine-class cpu-test --reason "ci test" > /dev/null
key=decode-anatomy/stage_calls_per_token/attention
bfile=baselines/cpu-test/nightly.BASELINE.json
jq --arg k "$key" 'del(.metrics[$k])' "$bfile" > "$work/b.json" && mv "$work/b.json" "$bfile"
git_ add baselines && git_ commit -q -m "nightly baseline"
git_ push -q origin HEAD:main
second_merged=$(jq -r --arg c "$second" 'select(.git.commit == $c) | input_filename' "${merged[@]}")
ratchet() {
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=commit.gpgsign GIT_CONFIG_VALUE_0=false GIT_AUTHOR_NAME=ci-test \
    GIT_AUTHOR_EMAIL=ci-test@invalid "$ci/ratchet-pr.sh" "$second_merged" --dry-run > "$work/ratchet-$1.log" 2>&1
}
rc=0
ratchet 1 || rc=$?
branch=ratchet/nightly-${second:0:12}
if [ "$rc" -ne 0 ] || ! grep -q "ratchet-pr: pushed $branch" "$work/ratchet-1.log"; then
  fail "ratchet-pr.sh exited $rc"
  cat "$work/ratchet-1.log"
fi
changed=$(git_ -C "$work/origin.git" diff --name-only "main..$branch" 2>/dev/null || true)
[ "$changed" = "$bfile" ] || fail "the ratchet branch changes '$changed', expected only $bfile"
got=$(git_ -C "$work/origin.git" show "$branch:$bfile" 2>/dev/null | jq --arg k "$key" '.metrics[$k].value' || true)
[ "$got" = 5 ] || fail "the ratchet branch's $key is '$got', expected 5 (one attention call per layer and token)"
if [ "$(git rev-parse --abbrev-ref HEAD)" != main ] || [ -n "$(git status --porcelain -- baselines)" ]; then
  fail "ratchet-pr.sh left the checkout on $(git rev-parse --abbrev-ref HEAD) with baselines/ changed"
fi
rc=0
ratchet 2 || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "is already on origin: left alone" "$work/ratchet-2.log"; then
  fail "a second ratchet of the same commit exited $rc"
  cat "$work/ratchet-2.log"
fi

[ "$fails" -eq 0 ] && echo "nightly_e2e: 2 nightlies x 3 shards merged, pushed, reported and ratcheted through a branch"
exit "$fails"
