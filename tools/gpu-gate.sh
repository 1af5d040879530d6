#!/usr/bin/env bash
# The GPU counted gate in one device call, for a dense model and a hybrid one: build atlas-bench
# with CUDA, then for each gate (pr: stories260K; pr-hybrid: preset qwen3-next-tiny) run its
# decode-anatomy suite on the CUDA backend (a GPU machine class from NVML, e.g. "h200"), judge a
# clean run against the committed BASELINE of that class (exit 0 wanted), derive a fresh
# BASELINE holding only the counted metrics (launches, graph replays, host syncs, copies per
# token, graph captured, output fingerprint: exact on a GPU; timed values on a shared device
# would gate noise), judge a clean run against it (exit 0 wanted) and a run with a planted
# regression: decode graph capture vetoed (ATLAS_CUDA_VETO_LAYER=0) for pr, MoE routing on the
# host (ATLAS_MOE_HOST_ROUTING=1: one host sync per moe layer) for pr-hybrid; exit 1 wanted.
#
#   tools/gpu-gate.sh OUT [DATA_DIR] [DEPS_PREFIX]
#
# OUT gets: summary.txt, build.log, and per gate G: G.record.json, G.BASELINE.json (counted
# metrics only; commit it as baselines/<class>/G.BASELINE.json), G.committed.txt, G.clean.txt,
# G.planted.txt (the judged runs' reports).
set -uo pipefail
OUT=${1:?usage: tools/gpu-gate.sh OUT [DATA_DIR] [DEPS_PREFIX]}
# shellcheck source=tools/lib/data_dir.sh
. "$(dirname "$0")/lib/data_dir.sh"
# DATA_DIR: given, else the one order (docs/environment.md): $ATLAS_DATA_DIR, else ../shared/data
# beside the checkout, else ./data; absolute, since the build and atlas-bench use it.
DATA=$(atlas_data_dir_absolute "${2:-}")
DEPS=${3:-}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1; } > "$OUT/summary.txt"
# shellcheck source=tools/gpu-build.sh
. "$(dirname "$0")/gpu-build.sh"
gpu_build "$OUT" "$DATA" "$DEPS" atlas-bench || exit 4  # the build failed: the program's failure (README, "Exit codes")
B="$(pwd)/$BUILD/tools/atlas-bench"
WORK=$(mktemp -d)
# The judge reads its gate config and BASELINEs from the merge-base with the target branch, never
# from the tree under test (docs/gates.md, threat model): a config or BASELINE written beside the
# checkout would be "outside the checkout" (inconclusive) or "judged in place of" the committed
# file (its history compared with the merge-base's, so a fresh file reads as rewritten history).
# So the rig judges inside a throwaway clone of this checkout whose commits carry the rig's config
# and BASELINEs, with origin/main moved onto them: the merge-base then holds exactly what is
# judged, as on a CI runner after those files landed.
REPO="$WORK/repo"
git clone -q "$(pwd)" "$REPO" || { echo "git clone of the checkout failed" | tee -a "$OUT/summary.txt"; exit 4; }
# what was sent, committed or not, is what is judged
cp -r gates/config/. "$REPO/gates/config/"
cp -r baselines/. "$REPO/baselines/"
rig_commit() {  # rig_commit MESSAGE: commit the clone's files and make the commit the target's tip
  git -C "$REPO" add -A gates/config baselines
  git -C "$REPO" -c user.name=gpu-gate -c user.email=gpu-gate@localhost commit -q --allow-empty -m "$1"
  git -C "$REPO" update-ref refs/remotes/origin/main HEAD
}

# new_counted RECORD BASELINE: the record's counted metrics the BASELINE lacks, comma-separated.
new_counted() {
  python3 - "$1" "$2" <<'PY'
import json, sys
rec, base = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
have = set(base["metrics"])
names = []
for suite, s in rec["suites"].items():
    for name, m in s.get("metrics", {}).items():
        key = suite + "/" + name
        if m.get("kind") != "timed" and key not in have:
            names.append(key)
print(",".join(sorted(names)))
PY
}

# one_gate NAME MODEL PLANTED_ENV: the gate NAME restricted to decode-anatomy (its suite config
# is pr's), no settle wait: only counted metrics are judged here.
one_gate() {
  local name=$1 model=$2 planted=$3
  local cfg="gates/config/gpu-rig-$name.json" store="$WORK/store-$name"
  cat > "$REPO/$cfg" <<JSON
{"schema_version": 1, "gate": "$name", "suite_config": "pr", "suites": ["decode-anatomy"],
 "target_branch": "origin/main", "quiet_box": {"settle_max_s": 0}}
JSON
  rig_commit "gpu-gate rig: $cfg"
  local margs=()
  [ -n "$model" ] && margs=(--model "$model")
  gate() { (cd "$REPO" && ATLAS_SUITES_DIR="$REPO/suites" "$B" --data-dir "$DATA" gate --backend cuda --config "$cfg" "${margs[@]}" --no-timed --allow-noisy --store "$store" "$@"); }
  echo "== gate $name (${model:-stories260K})" | tee -a "$OUT/summary.txt"
  gate --baselines-dir "$WORK/none" > "$OUT/$name.first.txt" 2>&1
  echo "first run (no baseline) exit $? (3 wanted)" | tee -a "$OUT/summary.txt"
  local rec
  # shellcheck disable=SC2012  # the store's paths are atlas-bench's own names (no odd characters)
  rec=$(ls "$store"/*/*/"$name"-*.json | head -1)
  cp "$rec" "$OUT/$name.record.json"
  local class
  class=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["machine"]["machine_class"])' "$rec")
  if [ -f "$REPO/baselines/$class/$name.BASELINE.json" ]; then
    gate --baselines-dir baselines > "$OUT/$name.committed.txt" 2>&1
    echo "against the committed baselines/$class/$name.BASELINE.json: exit $? (0 wanted)" | tee -a "$OUT/summary.txt"
    grep -E "regress|changed|result:" "$OUT/$name.committed.txt" | head -12 | tee -a "$OUT/summary.txt"
    # Counted metrics the committed BASELINE lacks (new metrics of the suite) are added with one
    # reason; OUT/NAME.committed.BASELINE.json is then the file to commit.
    local added
    added=$(new_counted "$rec" "$REPO/baselines/$class/$name.BASELINE.json")
    if [ -n "$added" ]; then
      (cd "$REPO" && ATLAS_SUITES_DIR="$REPO/suites" "$B" baseline accept --record "$rec" --config "$cfg" --baselines-dir baselines --metric "$added" \
        --reason "new counted metrics of decode-anatomy, first measured on this machine class (tools/gpu-gate.sh)") \
        >> "$OUT/summary.txt" 2>&1
      echo "added to the committed BASELINE: $added" | tee -a "$OUT/summary.txt"
      cp "$REPO/baselines/$class/$name.BASELINE.json" "$OUT/$name.committed.BASELINE.json"
    fi
  else
    echo "no committed baselines/$class/$name.BASELINE.json" | tee -a "$OUT/summary.txt"
  fi
  "$B" baseline init --record "$rec" --config "$REPO/$cfg" --baselines-dir "$WORK/b" \
    --reason "GPU counted metrics from a device run (tools/gpu-gate.sh)" >> "$OUT/summary.txt" 2>&1
  python3 - "$WORK/b/$class/$name.BASELINE.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
p = sys.argv[1]
b = json.load(open(p))
b["metrics"] = {k: m for k, m in b["metrics"].items() if m["kind"] != "timed"}
json.dump(b, open(p, "w"), indent=2)
print(len(b["metrics"]), "counted metrics kept")
PY
  cp "$WORK/b/$class/$name.BASELINE.json" "$OUT/$name.BASELINE.json"
  # The fresh BASELINE replaces the committed one in a rig commit, so the judge reads it from the
  # merge-base as it would once such a file landed.
  mkdir -p "$REPO/baselines/$class"
  cp "$WORK/b/$class/$name.BASELINE.json" "$REPO/baselines/$class/$name.BASELINE.json"
  rig_commit "gpu-gate rig: a fresh $class/$name.BASELINE.json"
  gate --baselines-dir baselines > "$OUT/$name.clean.txt" 2>&1
  echo "clean run exit $? (0 wanted)" | tee -a "$OUT/summary.txt"
  grep -E "result:" "$OUT/$name.clean.txt" | tee -a "$OUT/summary.txt"
  (cd "$REPO" && env "$planted" ATLAS_SUITES_DIR="$REPO/suites" "$B" --data-dir "$DATA" gate --backend cuda --config "$cfg" "${margs[@]}" --no-timed \
    --allow-noisy --store "$store" --baselines-dir baselines) > "$OUT/$name.planted.txt" 2>&1
  echo "planted ($planted): exit $? (1 wanted)" | tee -a "$OUT/summary.txt"
  grep -E "regression|result:" "$OUT/$name.planted.txt" | head -12 | tee -a "$OUT/summary.txt"
}

one_gate pr "" ATLAS_CUDA_VETO_LAYER=0
one_gate pr-hybrid preset:qwen3-next-tiny ATLAS_MOE_HOST_ROUTING=1
