#!/usr/bin/env bash
# The investigation's experiment on a GPU, after tools/gpu-hybrid.sh built build-gpu: the
# decode-anatomy suite on a Qwen3-Next model (default preset:qwen3-next-e64: 64 experts, the
# weights many times the L2) with its three columns (graph / eager / eager with MoE routing on the
# host), a 512-step latency series per column and (default wait only) a 4k depth, once per host wait
# (ATLAS_CUDA_SYNC=stream|spin|blocking), each run a record; then a table of what moved.
#
#   tools/gpu-anatomy.sh OUT DATA_DIR [MODEL]
#
# DEPTH=0 leaves the depth out (each of its repetitions prefills 4k tokens per column: minutes on
# e64); DEPTHS (default 4096) lists the depths, comma-separated; REPS (default 3) the repetitions
# (a depth runs min(REPS, 3) times per column); SERIES (default 512) the latency series' tokens
# (0: none); MODES (default "stream spin blocking") the host waits. OUT gets: anatomy.json (the suite config), sync-<mode>.txt (the run's report) and
# sync-<mode>.record.json, summary.txt (per sync mode and column: tok/s, ITL p50/p99/max, the
# periodic stall, host syncs per token).
set -uo pipefail
OUT=${1:?usage: tools/gpu-anatomy.sh OUT DATA_DIR [MODEL]}
DATA=$2
MODEL=${3:-preset:qwen3-next-e64}
B=${BUILD:-build-gpu}/tools/atlas-bench
mkdir -p "$OUT"
# The depth costs a 4k-token prefill per repetition and column: measured under the default wait only.
for depths in ", \"depths\": [${DEPTHS:-4096}]" ''; do
  name=anatomy; [ -z "$depths" ] && name=anatomy-nodepth
  cat > "$OUT/$name.json" <<JSON
{"name": "gpu-anatomy", "description": "decode anatomy of a hybrid MoE model: three columns, series, depth",
 "seed": 1,
 "suites": {"decode-anatomy": {"warmup": 1, "repetitions": ${REPS:-3}, "prompt_tokens": 32, "decode_tokens": 64,
                               "series_tokens": ${SERIES:-512}$depths}}}
JSON
done
for mode in ${MODES:-stream spin blocking}; do
  store="$OUT/store-$mode" cfg="$OUT/anatomy-nodepth.json"
  [ "$mode" = stream ] && [ "${DEPTH:-1}" = 1 ] && cfg="$OUT/anatomy.json"
  ATLAS_CUDA_SYNC=$mode timeout "${MODE_TIMEOUT:-200}" "$B" --data-dir "$DATA" run --suite decode-anatomy --backend cuda --model "$MODEL" \
    --config "$cfg" --out-dir "$store" > "$OUT/sync-$mode.txt" 2>&1
  echo "sync $mode: exit $?" | tee -a "$OUT/summary.txt"
  # shellcheck disable=SC2012  # the store's paths are atlas-bench's own names (no odd characters)
  rec=$(ls "$store"/*/*/*.json 2>/dev/null | head -1)
  [ -n "$rec" ] && cp "$rec" "$OUT/sync-$mode.record.json"
done
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
print(f"{'sync':9} {'column':20} {'tok/s':>8} {'ITL p50':>8} {'p99':>8} {'max':>8} {'stall us (period)':>18} {'syncs/tok':>9} {'depth tok/s':>11}")
for mode in ("stream", "spin", "blocking"):
    p = os.path.join(out, f"sync-{mode}.record.json")
    if not os.path.exists(p):
        print(mode, "no record"); continue
    r = json.load(open(p))
    s = r["suites"]["decode-anatomy"]
    m = s["metrics"]
    def med(name):
        v = m.get(name, {}).get("samples", [])
        return sorted(v)[len(v) // 2] if v else float("nan")
    series = s.get("details", {}).get("latency_series", {})
    for col in ("graph", "eager", "eager-host-routing"):
        pre = "" if col == "graph" else col + "/"
        syncs = sum(med(k) for k in m if k.startswith(pre + "host_syncs_per_token/"))
        st = (series.get(col) or {}).get("periodic_stall") or {}
        stall = f"{st.get('excess_us', 0):.1f} ({st.get('period', '-')})" if st else "none"
        print(f"{mode:9} {col:20} {med(pre + 'decode_tok_s'):8.1f} {med(pre + 'itl_p50_us'):8.1f} {med(pre + 'itl_p99_us'):8.1f} "
              f"{med(pre + 'itl_max_us'):8.1f} {stall:>18} {syncs:9.1f} {med(pre + 'depth=' + os.environ.get('DEPTHS', '4096').split(',')[0] + '/decode_tok_s'):11.1f}")
    rf = s.get("details", {}).get("roofline")
    if rf: print(f"{mode:9} roofline: {rf['bytes_per_token']/1e6:.1f} MB/token, {rf['achieved_GBps']:.0f} of {rf['bandwidth_GBps']:.0f} GB/s ({100*rf['fraction']:.1f}%)")
    for n in s.get("details", {}).get("notes", [])[:5]: print(f"{mode:9} note: {n}")
PY
