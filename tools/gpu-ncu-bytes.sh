#!/usr/bin/env bash
# Cross-checks the decode-anatomy roofline's bytes model (`bytes_per_token`: the dense weights,
# the router, only the selected and shared experts, the recurrent states read and written, the
# attention layers' K/V) against the DRAM bytes Nsight Compute measures for one decode step.
# After tools/gpu-hybrid.sh (or gpu-build) built build-gpu on a GPU machine:
#
#   tools/gpu-ncu-bytes.sh OUT DATA_DIR [MODEL] [STEP]
#
# MODEL defaults to preset:qwen3-next-e64 (weights ~100x the L2, so nearly every byte a step reads
# comes from DRAM), STEP (1-based decode step to profile) to 4. The step runs eagerly (same kernels
# as the graph) between cudaProfilerStart/Stop (ATLAS_CUDA_PROFILE_STEP), so nothing of the load is
# profiled; ncu flushes the caches before each kernel (its default --cache-control all), which is
# what the model assumes: weights are read from DRAM once per step. OUT gets ncu.csv, the
# decode-anatomy record (bytes_per_token) and summary.txt (both figures and their ratio).
set -uo pipefail
OUT=${1:?usage: tools/gpu-ncu-bytes.sh OUT DATA_DIR [MODEL] [STEP]}
DATA=${2:?usage: tools/gpu-ncu-bytes.sh OUT DATA_DIR [MODEL] [STEP]}
MODEL=${3:-preset:qwen3-next-e64}
STEP=${4:-4}
B=${BUILD:-build-gpu}/tools/atlas-bench
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
mkdir -p "$OUT"
cat > "$OUT/anatomy.json" <<JSON
{"name": "ncu-bytes", "description": "bytes model of one decode step", "seed": 1,
 "suites": {"decode-anatomy": {"warmup": 0, "repetitions": 1, "prompt_tokens": 4, "decode_tokens": 8}}}
JSON
timeout "${RUN_TIMEOUT:-150}" "$B" --data-dir "$DATA" run --suite decode-anatomy --backend cuda --model "$MODEL" \
  --config "$OUT/anatomy.json" --out-dir "$OUT/store" > "$OUT/anatomy.txt" 2>&1
echo "decode-anatomy: exit $?" | tee "$OUT/summary.txt"
# shellcheck disable=SC2012  # the store's paths are atlas-bench's own names
rec=$(ls "$OUT"/store/*/*/*.json 2>/dev/null | head -1)
[ -n "$rec" ] && cp "$rec" "$OUT/record.json"
ATLAS_NO_DECODE_GRAPHS=1 ATLAS_CUDA_PROFILE_STEP=$STEP timeout "${NCU_TIMEOUT:-300}" "$NCU" --profile-from-start off \
  --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
  "$B" --data-dir "$DATA" generate --backend cuda --model "$MODEL" --prompt "a b" --max-tokens $((STEP + 2)) --no-warmup \
  > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "ncu: exit $?" | tee -a "$OUT/summary.txt"
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import csv, json, os, sys
out = sys.argv[1]
lines = open(os.path.join(out, "ncu.csv")).read().splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
if start is None:
    print("no ncu table (see ncu.err)"); sys.exit()
read = write = 0.0
kernels = set()
for row in csv.DictReader(lines[start:]):
    v = float(row["Metric Value"].replace(",", ""))
    kernels.add(row["ID"])
    if row["Metric Name"] == "dram__bytes_read.sum": read += v
    elif row["Metric Name"] == "dram__bytes_write.sum": write += v
print(f"ncu, one eager decode step: {len(kernels)} kernels, DRAM read {read / 1e9:.4f} GB, written {write / 1e9:.4f} GB")
p = os.path.join(out, "record.json")
if not os.path.exists(p):
    print("no decode-anatomy record: no bytes model to compare"); sys.exit()
s = json.load(open(p))["suites"]["decode-anatomy"]
roof = s.get("details", {}).get("roofline") or {}
model = roof.get("bytes_per_token")
if not model:
    print("the record has no roofline.bytes_per_token"); sys.exit()
print(f"bytes model (decode-anatomy roofline.bytes_per_token at kv_len {roof.get('kv_len')}): {model / 1e9:.4f} GB")
print(f"measured read / model: {read / model:.4f}; (read + written) / model: {(read + write) / model:.4f}")
PY
