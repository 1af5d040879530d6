#!/usr/bin/env bash
# The GPU counted gate in one device call: build atlas-bench with CUDA, run the pr gate's
# decode-anatomy suite on the CUDA backend (a GPU machine class from NVML, e.g. "h200"), derive a
# BASELINE holding only its counted metrics (launches, graph replays, host syncs, copies per
# token, graph captured, output fingerprint: exact on a GPU; timed values on a shared device
# would gate noise), then judge a clean run against it (exit 0 wanted) and a run with decode
# graph capture vetoed (ATLAS_CUDA_VETO_LAYER=0, a test hook: exit 1 wanted).
#
#   tools/gpu-gate.sh OUT [DATA_DIR] [DEPS_PREFIX]
#
# OUT gets: summary.txt, build.log, record.json (the first gate run's record),
# pr.BASELINE.json (counted metrics only; commit it as baselines/<class>/pr.BASELINE.json),
# clean.txt and veto.txt (the two judged runs' reports).
set -uo pipefail
OUT=${1:?usage: tools/gpu-gate.sh OUT [DATA_DIR] [DEPS_PREFIX]}
DATA=${2:-$(pwd)/../shared/data}
DEPS=${3:-}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1; } > "$OUT/summary.txt"
# shellcheck source=tools/gpu-build.sh
. "$(dirname "$0")/gpu-build.sh"
gpu_build "$OUT" "$DATA" "$DEPS" atlas-bench || exit 3
B="$BUILD/tools/atlas-bench"
WORK=$(mktemp -d)
# The pr gate restricted to decode-anatomy (its suite config is pr's), no settle wait: only
# counted metrics are judged here.
cat > "$WORK/gate.json" <<JSON
{"schema_version": 1, "gate": "pr", "suite_config": "pr", "suites": ["decode-anatomy"],
 "quiet_box": {"settle_max_s": 0}}
JSON
gate() { "$B" --data-dir "$DATA" gate --backend cuda --config "$WORK/gate.json" --no-timed --allow-noisy --store "$WORK/store" "$@"; }

gate --baselines-dir "$WORK/none" > "$OUT/first.txt" 2>&1
echo "first run (no baseline) exit $? (3 wanted)" | tee -a "$OUT/summary.txt"
REC=$(ls "$WORK"/store/*/*/pr-*.json | head -1)
cp "$REC" "$OUT/record.json"
python3 - "$REC" >> "$OUT/summary.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("machine:", json.dumps(r["machine"]))
print("valid:", r["valid"], r["invalid_reason"])
PY
CLASS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["machine"]["machine_class"])' "$REC")
"$B" baseline init --record "$REC" --config "$WORK/gate.json" --baselines-dir "$WORK/b" \
  --reason "GPU counted metrics from a device run (tools/gpu-gate.sh)" >> "$OUT/summary.txt" 2>&1
python3 - "$WORK/b/$CLASS/pr.BASELINE.json" <<'PY'
import json, sys
p = sys.argv[1]
b = json.load(open(p))
b["metrics"] = {k: m for k, m in b["metrics"].items() if m["kind"] != "timed"}
json.dump(b, open(p, "w"), indent=2)
print(len(b["metrics"]), "counted metrics kept")
PY
cp "$WORK/b/$CLASS/pr.BASELINE.json" "$OUT/pr.BASELINE.json"
gate --baselines-dir "$WORK/b" > "$OUT/clean.txt" 2>&1
echo "clean run exit $? (0 wanted)" | tee -a "$OUT/summary.txt"
ATLAS_CUDA_VETO_LAYER=0 gate --baselines-dir "$WORK/b" > "$OUT/veto.txt" 2>&1
echo "graph capture vetoed: exit $? (1 wanted)" | tee -a "$OUT/summary.txt"
grep -E "regression|launches|graph|sync|copies" "$OUT/veto.txt" | head -20 | tee -a "$OUT/summary.txt"
