#!/usr/bin/env bash
# Do make-model's synthetic GGUF files load and generate in llama.cpp's llama-server? One file
# per preset kind (llama, qwen3, qwen3next), each with make-model's default synthetic vocabulary
# (engine/tokenizer/synthetic_vocab.hpp): llama-server must start on it, answer a streamed
# /v1/completions of 32 tokens with random weights (ignore_eos) with HTTP 200, well-formed SSE
# events ending in [DONE], valid UTF-8 text and usage.completion_tokens 32, and the same for
# /v1/chat/completions through its default template. Not in CI (llama.cpp is not built there).
#
#   tools/llama-server-presets-check.sh LLAMA_SERVER [ATLAS_BENCH]
#
# Environment: CHECK_OUT (default a new temp dir), CHECK_PORT (default 18190). Exit 0 when every
# preset passes, 1 otherwise, 3 on a usage error or a missing file, 4 when the machine lacks a
# tool (jq, python3) (README, "Exit codes": 2 is the gates' inconclusive).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then echo "usage: $0 LLAMA_SERVER [ATLAS_BENCH]" >&2; exit 3; fi
server_bin=$1
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${2:-$here/build/tools/atlas-bench}
out=${CHECK_OUT:-$(mktemp -d /tmp/llama-server-presets.XXXXXX)}
port=${CHECK_PORT:-18190}
mkdir -p "$out"
for f in "$server_bin" "$bench"; do
  [ -x "$f" ] || { echo "llama-server-presets-check: not found or not executable: $f" >&2; exit 3; }
done
command -v jq >/dev/null || { echo "llama-server-presets-check: needs jq" >&2; exit 4; }
command -v python3 >/dev/null || { echo "llama-server-presets-check: needs python3" >&2; exit 4; }

status=0
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=
}
trap stop_server EXIT

# Checks one streamed answer: every data: line but [DONE] is a JSON object, [DONE] ends it,
# the text is valid UTF-8, and the last usage says 32 tokens.
check_stream() {  # file, field (text | delta)
  python3 - "$1" "$2" <<'PY'
import json, sys
path, field = sys.argv[1], sys.argv[2]
raw = open(path, "rb").read()
try:
    body = raw.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(f"not valid UTF-8: {e}")
events = [l[5:].strip() for l in body.splitlines() if l.startswith("data:")]
if not events or events[-1] != "[DONE]":
    sys.exit(f"no data: [DONE] at the end ({len(events)} events)")
text, usage = "", None
for e in events[:-1]:
    j = json.loads(e)
    if "error" in j:
        sys.exit(f"error event: {j['error']}")
    for c in j.get("choices", []):
        text += c.get("text") or (c.get("delta") or {}).get("content") or ""
    usage = j.get("usage") or usage
if not usage or usage.get("completion_tokens") != 32:
    sys.exit(f"usage.completion_tokens is not 32: {usage}")
print(f"{len(events) - 1} events, {len(text.encode())} bytes of text, completion_tokens 32")
PY
}

for preset in tiny-llama tiny-qwen3 qwen3-next-tiny; do
  gguf=$out/$preset.gguf
  "$bench" make-model --preset "$preset" --seed 5 --out "$gguf" > "$out/$preset.make.log"
  "$server_bin" -m "$gguf" --host 127.0.0.1 --port "$port" --jinja -t 1 -c 512 > "$out/$preset.server.log" 2>&1 &
  server_pid=$!
  up=0
  for _ in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1; then up=1; break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  if [ "$up" != 1 ]; then
    echo "FAIL $preset: llama-server did not start; log: $out/$preset.server.log"; tail -5 "$out/$preset.server.log"
    status=1; stop_server; continue
  fi
  for route in completions chat; do
    result=""
    if [ "$route" = completions ]; then
      url=/v1/completions
      body='{"prompt": "Once upon a time", "max_tokens": 32, "ignore_eos": true, "temperature": 1.0, "seed": 3, "stream": true, "stream_options": {"include_usage": true}}'
    else
      url=/v1/chat/completions
      body='{"messages": [{"role": "user", "content": "hello"}], "max_tokens": 32, "ignore_eos": true, "temperature": 1.0, "seed": 3, "stream": true, "stream_options": {"include_usage": true}}'
    fi
    code=$(curl -s -o "$out/$preset.$route.sse" -w '%{http_code}' -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$port$url" || echo 000)
    if [ "$code" = 200 ] && result=$(check_stream "$out/$preset.$route.sse" "$route" 2>&1); then
      echo "ok   $preset $route: $result"
    else
      echo "FAIL $preset $route: HTTP $code: ${result:-}"; head -c 300 "$out/$preset.$route.sse"; echo
      status=1
    fi
  done
  stop_server
done
echo "llama-server: $("$server_bin" --version 2>&1 | head -3 | tr '\n' ' ')"
echo "outputs: $out"
exit $status
