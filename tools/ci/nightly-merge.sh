#!/usr/bin/env bash
# Merges the shard records of one nightly into the record store (workflow nightly.yml, job
# `merge`, after every shard's artifact is downloaded into one folder).
#   tools/ci/nightly-merge.sh SHARDS_DIR STORE
# SHARDS_DIR holds what tools/ci/nightly-shard.sh wrote, one folder per shard (any depth): each
# shard's records/*.json and exit-code. It checks that the shards are one run's complete set
# (one count N, every index whose slice is not empty present once: a lost shard would make the
# merged record look like a full sweep that skipped a suite), runs `atlas-bench records merge`
# into STORE (its <machine-class>/<commit>/ layout), and checks that the merged record holds every
# suite of the nightly config before it is written. Prints each shard's exit code; exits 0 when
# the merged record is written (a shard's own regression already fails its job), 1 when the set
# is incomplete or a suite is missing (nothing written), else the merge's exit code.
# Environment: ATLAS_BENCH (build/tools/atlas-bench); GITHUB_OUTPUT (Actions: gets record=PATH).
# Needs jq.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$here/lib.sh"

[ $# -eq 2 ] || { echo "usage: tools/ci/nightly-merge.sh SHARDS_DIR STORE" >&2; exit 3; }
shards_dir=$1 store=$2
bench=$(ci_bench)
command -v jq >/dev/null || { echo "nightly-merge: needs jq (tools/install-deps.sh)" >&2; exit 4; }  # the machine lacks a tool

mapfile -t records < <(find "$shards_dir" -path '*/records/*.json' -type f | sort)
[ ${#records[@]} -gt 0 ] || { echo "nightly-merge: no shard records under $shards_dir" >&2; exit 1; }
while IFS= read -r f; do
  echo "nightly-merge: $(dirname "$f"): exit $(cat "$f")"
done < <(find "$shards_dir" -name exit-code -type f | sort)

# index, count and slice size of each record, and the full suite list they all carry.
listing=$(for r in "${records[@]}"; do
  jq -r --arg f "$r" '"\(.verdicts.shard.index // "none") \(.verdicts.shard.count // "none") \(.config.suites | length) \($f)"' "$r"
done)
counts=$(awk '{print $2}' <<< "$listing" | sort -u)
if [ "$(wc -l <<< "$counts")" -ne 1 ] || [ "$counts" = none ]; then
  echo "nightly-merge: the records are not the shards of one run (shard counts: $(tr '\n' ' ' <<< "$counts"))" >&2
  exit 1
fi
n_suites=$(awk '{print $3}' <<< "$listing" | sort -u | head -1)
expected=$((counts < n_suites ? counts : n_suites))
for ((i = 0; i < expected; i++)); do
  have=$(awk -v i="$i" '$1 == i' <<< "$listing" | wc -l)
  [ "$have" -eq 1 ] || { echo "nightly-merge: shard $i/$counts: $have record(s), expected 1" >&2; exit 1; }
done

# Merged once aside and checked, then into the store: a record lacking a suite never lands there.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bench" records merge --out "$tmp/merged.json" "${records[@]}" > /dev/null
missing=$(jq -r '.config.suites[] as $s | select(.suites | has($s) | not) | $s' "$tmp/merged.json")
[ -z "$missing" ] || { echo "nightly-merge: the merged record lacks suite(s): $missing; nothing written" >&2; exit 1; }
merged=$("$bench" records merge --store "$store" "${records[@]}" | tail -1)  # it prints the path it wrote
echo "nightly-merge: $expected shard(s) of $counts merged into $merged: $(jq -r '.suites | keys | join(" ")' "$merged")"
# The path for later steps of the job (tools/ci/ratchet-pr.sh).
[ -z "${GITHUB_OUTPUT:-}" ] || echo "record=$merged" >> "$GITHUB_OUTPUT"
