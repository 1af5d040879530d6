#!/usr/bin/env bash
# ctest ci/workflow_schema: the workflow templates (tools/ci/workflows/) against GitHub's workflow
# schema (SchemaStore's github-workflow.json, as checked by action-validator, pinned below with
# its tarballs' sha256), and the validator catches a planted schema error (a misspelt job key, a
# step with an unknown key). tools/ci/check-workflows.py checks the project's own rules; this
# checks what GitHub would refuse to run. The packages are fetched with `npm pack` into the build
# tree (never committed) once; without node/npm or registry access the test reports Skipped
# (exit 77) with the reason.
#   tests/ci/workflow_schema_test.sh [SOURCE_DIR]   (ATLAS_BENCH_EXE locates the build tree)
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$(cd "$(dirname "${ATLAS_BENCH_EXE:-$src/build/tools/atlas-bench}")/.." 2>/dev/null && pwd || echo "$src/build")
out=$build/ci-tools/action-validator
command -v node >/dev/null || { echo "workflow_schema: skipped: node is not installed"; exit 77; }
command -v npm >/dev/null || { echo "workflow_schema: skipped: npm is not installed"; exit 77; }

declare -A SHA256=(
  ["@action-validator/cli@0.6.0"]=06f45621e8de26d44ae4dee5ab4c9db67b3461f5ef70b73628a4cc729f8fb342
  ["@action-validator/core@0.6.0"]=a48f55be8d76a1d0e66dd9bbdfdd583c09e2bd5110539f1b4cd9512d442843bd
  ["chalk@5.2.0"]=9687d5d17a063e1b2aceaae5b83f8765eaeaf1c4bae8d74a21c1e9aeba1e4862
)
mkdir -p "$out/tarballs"
for spec in "${!SHA256[@]}"; do
  name=${spec%@*}
  tgz="$(echo "${name#@}" | tr / -)-${spec##*@}.tgz"
  if [ ! -f "$out/tarballs/$tgz" ]; then
    (cd "$out/tarballs" && timeout 60 npm pack "$spec" >/dev/null 2>npm-pack.log) ||
      { echo "workflow_schema: skipped: npm pack $spec failed (registry unreachable?): $(tail -n 2 "$out/tarballs/npm-pack.log" | tr '\n' ' ')"; exit 77; }
  fi
  got=$(sha256sum "$out/tarballs/$tgz" | cut -d' ' -f1)
  if [ "$got" != "${SHA256[$spec]}" ]; then
    echo "FAIL: $tgz has sha256 $got, not the pinned ${SHA256[$spec]}"
    rm -f "$out/tarballs/$tgz"
    exit 1
  fi
  rm -rf "$out/node_modules/$name" && mkdir -p "$out/node_modules/$name"
  tar -xzf "$out/tarballs/$tgz" -C "$out/node_modules/$name" --strip-components=1
done
validate() { node "$out/node_modules/@action-validator/cli/cli.mjs" "$1"; }

fails=0 n=0
for f in "$src"/tools/ci/workflows/*.yml; do
  n=$((n + 1))
  if got=$(validate "$f" 2>&1); then
    echo "ok: $(basename "$f") matches GitHub's workflow schema"
  else
    echo "FAIL: $(basename "$f") does not match GitHub's workflow schema:"; echo "$got"; fails=1
  fi
done
[ "$n" -eq 3 ] || { echo "FAIL: expected 3 workflow templates, found $n"; fails=1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# planted FILE SED_SCRIPT EXPECTED_TEXT: a copy of FILE with the edit must fail validation naming it.
planted() {
  local file=$1 edit=$2 want=$3
  sed -e "$edit" "$src/tools/ci/workflows/$file" > "$work/$file"
  if cmp -s "$work/$file" "$src/tools/ci/workflows/$file"; then
    echo "FAIL: the edit '$edit' changed nothing in $file"; fails=1; return
  fi
  local rc=0 got
  got=$(validate "$work/$file" 2>&1) || rc=$?
  if [ "$rc" -eq 0 ] || ! grep -qF -- "$want" <<< "$got"; then
    echo "FAIL: $file with '$edit': exit $rc, wanted non-zero naming '$want'"; echo "$got" | head -20; fails=1
  else
    echo "ok: $file with '$edit' is refused ($want)"
  fi
}
planted pr-gate.yml '0,/runs-on:/s/runs-on:/run-on:/' "Additional property 'run-on' is not allowed"
planted nightly.yml '0,/timeout-minutes:/s/timeout-minutes:/timeout-minute:/' "Additional property 'timeout-minute' is not allowed"
exit "$fails"
