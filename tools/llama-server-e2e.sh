#!/usr/bin/env bash
# End-to-end run of the endpoint suites against llama.cpp's llama-server (a third-party
# OpenAI-compatible server), with the checks of docs/serving.md. Not in CI: building llama.cpp takes
# longer than CI's budget. It does not build llama.cpp; give it a built binary.
#
#   tools/llama-server-e2e.sh [LLAMA_SERVER] [ATLAS_BENCH] [DATA_DIR] [-- SERVER_OPTION...]
#   tools/llama-server-e2e.sh --check OUT_DIR
#
#   LLAMA_SERVER  path to a llama-server binary (its version goes into the report); default
#                 $ATLAS_LLAMA_SERVER; with neither it prints "skipped: ..." and exits 77 (the
#                 ctest `llama_server_e2e` runs it so: skipped unless a binary is given)
#   ATLAS_BENCH   default $E2E_BENCH, else build/tools/atlas-bench
#   DATA_DIR      default the one order of docs/environment.md: $ATLAS_DATA_DIR, else ../shared/data
#                 beside the checkout, else ./data (needs models/stories260K-gguf and bfcl/)
#   SERVER_OPTION words after `--` go to llama-server as given, after the script's own (a later
#                 option wins in llama.cpp), e.g. `-- -np 1 --cache-ram 0` (one slot, no host
#                 prompt cache) or `-- --no-cache-prompt`; $E2E_SERVER_ARGS (split at blanks: for
#                 the ctest entry, which takes no arguments) goes before them. With
#                 --no-cache-prompt the server reuses no prefix, so the reuse checks turn round:
#                 every warm request and later agentic turn must report 0 cached tokens (= the
#                 server's cache_n), warm rows must be labelled not reused and the agentic
#                 suite must charge each later turn's whole expected reuse as shortfall.
#   --check OUT_DIR  the checks alone, on the records a run left in OUT_DIR (E2E_OUT) and the
#                 server options it saved there (server-args.txt): to judge a kept run again.
# Environment: E2E_OUT (default a new temp dir), E2E_PORT (default 18090), E2E_THREADS
# (llama-server threads, default 1), E2E_REPS (default 5; after one unmeasured warm-up
# repetition), E2E_OVERHEAD_MS (the bound on the client's TTFT above the server's prompt_ms,
# default 5), E2E_SERVER_ARGS (above).
#
# It starts llama-server on 127.0.0.1 with the stories260K GGUF (--jinja: the model has no
# template, so the server uses its default one), then runs:
#   1. ttft, agentic and bfcl (prompt mode, 2 entries per category): each must exit 0;
#   2. the load suite at --concurrency 1,2,4.
# and checks, from the records (requests' server `timings` are kept in the records' details):
#   - cold TTFT against the server's own timings.prompt_ms, per prompt length: the overhead
#     (client TTFT - prompt_ms, median of the requests) between 0 and E2E_OVERHEAD_MS for every
#     length, an absolute bound on what HTTP, the slot and the client add; and the ratio within
#     20% only where prefill dominates (median prompt_ms >= 5 x the bound): a ~4 ms prefill
#     cannot absorb a fixed 1-5 ms overhead within 20%, and the median of two samples without a
#     warm-up measured the check's own noise (ratio 1.60-1.64 at 64 tokens in 2 of 2 runs);
#   - reuse figures equal the server's: every warm TTFT request's and agentic turn's cached
#     tokens equal the server's timings.cache_n, and the agentic reuse shortfall is 0 (with a
#     prompt cache; without one, see SERVER_OPTION);
#   - every BFCL entry was cold and unsalted: llama.cpp gets cache_prompt false, so each entry
#     is scored and timed by BFCL's own request (no salted timing request), and its cached_tokens
#     equal the server's cache_n and are at most 1 (a BOS);
#   - the load sweep: per level, the client's median TPOT within 20% of the server's
#     predicted_ms / (predicted_n - 1).
# Prints a summary; exit 0 when every check passes, 1 otherwise, 3 on a usage error or a missing
# file or folder (README, "Exit codes": 2 is the gates' inconclusive), 4 when the machine lacks a
# tool (jq) or llama-server does not start (exits, or answers no /health within 60 s).
set -euo pipefail

usage() { echo "llama-server-e2e: $1 (usage: tools/llama-server-e2e.sh [LLAMA_SERVER] [ATLAS_BENCH] [DATA_DIR] [-- SERVER_OPTION...] | --check OUT_DIR)" >&2; exit 3; }
need_jq() { command -v jq >/dev/null || { echo "llama-server-e2e: needs jq" >&2; exit 4; }; }

check_only=
positional=()
server_opts=()
if [ "${1:-}" = --check ]; then
  [ $# -eq 2 ] || usage "--check takes one folder, the E2E_OUT of a run"
  check_only=$2
  [ -f "$check_only/server-args.txt" ] || usage "--check $check_only: no server-args.txt there (not the output folder of a run)"
  mapfile -t server_opts < "$check_only/server-args.txt"
else
  read -r -a server_opts <<< "${E2E_SERVER_ARGS:-}"
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
      shift
      server_opts+=("$@")
      break
    fi
    positional+=("$1")
    shift
  done
  [ ${#positional[@]} -le 3 ] || usage "${#positional[@]} arguments before --; at most LLAMA_SERVER ATLAS_BENCH DATA_DIR"
fi
opts_text="(none) "
[ ${#server_opts[@]} -eq 0 ] || opts_text=$(printf '%q ' "${server_opts[@]}")
# Without a prompt cache the server reuses nothing; the reuse checks then expect exactly that.
prompt_cache=on
for o in "${server_opts[@]}"; do
  [ "$o" != --no-cache-prompt ] || prompt_cache=off
done

status=0
check() {  # description, jq program over the record that yields true/false, record
  local ok
  ok=$(jq -r "$2" "$3")
  printf '%-4s %s\n' "$([ "$ok" = true ] && echo ok || echo FAIL)" "$1"
  [ "$ok" = true ] || status=1
}

run_checks() {  # suites record, load record
  local rec=$1 load=$2 cold
  echo
  echo "== cold TTFT vs the server's prompt_ms (medians per length)"
  # Per length: the medians of client TTFT, server prompt_ms, their per-request difference (the
  # overhead) and ratio.
  cold='def median: sort | .[(length / 2 | floor)];
    [.suites.ttft.details.requests[] | select(.variant == "cold" and .server_timings != null)]
    | group_by(.len) | map({len: .[0].len, n: length, ttft: (map(.ttft_ms) | median),
        prompt_ms: (map(.server_timings.prompt_ms) | median),
        overhead: (map(.ttft_ms - .server_timings.prompt_ms) | median),
        ratio: (map(.ttft_ms / .server_timings.prompt_ms) | median), cached: (map(.cached_tokens) | max)})'
  jq -r "$cold"' | .[] | "len=\(.len) n=\(.n) client TTFT \(.ttft * 1000 | round / 1000) ms, server prompt_ms \(.prompt_ms * 1000 | round / 1000) ms, overhead \(.overhead * 1000 | round / 1000) ms, ratio \(.ratio * 1000 | round / 1000), max cached \(.cached)"' "$rec"
  check "cold TTFT overhead over prompt_ms within 0..$overhead_ms ms for every length (median per length)" \
    "$cold"' | length > 0 and all(.overhead >= -0.1 and .overhead <= '"$overhead_ms"')' "$rec"
  check "cold TTFT within 20% of prompt_ms where prefill dominates (median prompt_ms >= $((5 * overhead_ms)) ms)" \
    "$cold"' | map(select(.prompt_ms >= 5 * '"$overhead_ms"')) | length > 0 and all(.ratio >= 0.8 and .ratio <= 1.2)' "$rec"
  check "cold requests were cold (server cache_n <= 1)" '[.suites.ttft.details.requests[] | select(.variant == "cold") | .server_timings.cache_n] | all(. <= 1)' "$rec"
  check "warm cached_tokens = the server's cache_n on every request" '[.suites.ttft.details.requests[] | .cached_tokens == .server_timings.cache_n] | all' "$rec"
  check "agentic: reused = the server's cache_n on every turn" '[.suites.agentic.details.traces[].turns[] | .reused == .server_timings.cache_n] | all' "$rec"
  if [ "$prompt_cache" = on ]; then
    check "agentic: reuse shortfall 0, every turn's expectation exact (server token ids)" '(.suites.agentic.metrics.reuse_shortfall_tokens.samples | all(. == 0)) and .suites.agentic.details.turns_without_exact_expectation == 0' "$rec"
  else
    # --no-cache-prompt: what the suites report must be the server's refusal to reuse, exactly.
    check "no prompt cache: every warm request reused 0 (= cache_n) and its row says reused false" '[.suites.ttft.details.requests[] | select(.variant == "warm") | .cached_tokens == 0 and .server_timings.cache_n == 0 and .reused == false] | length > 0 and all' "$rec"
    check "no prompt cache: every agentic turn reused 0 (= cache_n)" '[.suites.agentic.details.traces[].turns[] | .reused == 0 and .server_timings.cache_n == 0] | length > 0 and all' "$rec"
    # shellcheck disable=SC2016  # $d, $want and $got are jq's variables, not the shell's
    check "no prompt cache: each later turn's whole expected reuse is charged as shortfall (first repetition)" '.suites.agentic.details as $d
      | ([$d.traces[].turns[] | select(.turn > 1 and .expected_exact and .expected_reused > 0) | .expected_reused] | sort) as $want
      | ([$d.reuse_shortfalls[] | select(.repetition == 1) | .expected_reused - .reused] | sort) as $got
      | ($want | length > 0) and $want == $got and $d.turns_without_exact_expectation == 0' "$rec"
  fi
  check "bfcl: no failed entry" '.suites.bfcl.metrics.entries_failed.samples[0] == 0' "$rec"
  echo "== bfcl cold entries: $(jq -r '.suites.bfcl.details | "\(.cold_salted_requests) salted requests, \(.cold_timed_separately) entries timed by a separate salted request, \(.cold_reissued) re-issued; cached_tokens per entry \([.entries[] | .cached_tokens])"' "$rec")"
  # llama.cpp gets cache_prompt false on every cold request: no salt, each entry scored and timed by
  # its own (BFCL's) request, which prefilled everything but at most a BOS.
  check "bfcl: every entry cold and unsalted (cached_tokens = the server's cache_n <= 1; nothing salted or timed separately)" '(.suites.bfcl.details.cold_salted_requests == 0) and (.suites.bfcl.details.cold_timed_separately == 0) and ([.suites.bfcl.details.entries[]
    | select(.valid != null) | .cached_tokens == .server_timings.cache_n and .cached_tokens <= 1 and .timed == "scored request"] | length > 0 and all)' "$rec"
  echo
  echo "== load sweep: client vs server (p50)"
  jq -r '.suites.load.details.levels[] | "\(.level): \(.completed) req, \(.request_throughput * 100 | round / 100) req/s, \(.output_tok_s | round) tok/s, TTFT p50 \(.ttft_ms.p50 * 100 | round / 100) ms, TPOT p50 client \(.tpot_ms.p50 * 1000 | round / 1000) ms vs server \(.server.tpot_ms.p50 * 1000 | round / 1000) ms, send lag p99 \(.send_lag_ms.p99 * 100 | round / 100) ms, valid \(.valid)"' "$load"
  check "load: 3 levels, client TPOT p50 within 20% of the server's" '[.suites.load.details.levels[] | .tpot_ms.p50 / .server.tpot_ms.p50] | length == 3 and all(. >= 0.8 and . <= 1.2)' "$load"
}

overhead_ms=${E2E_OVERHEAD_MS:-5}
if [ -n "$check_only" ]; then
  need_jq
  out=$check_only
  echo "llama-server options: $opts_text(prompt cache $prompt_cache); checking the records of $out"
  for name in suites load; do
    [ -f "$(cat "$out/$name.record" 2>/dev/null)" ] || usage "--check $out: $name.record names no record file"
  done
  run_checks "$(cat "$out/suites.record")" "$(cat "$out/load.record")"
  exit $status
fi

server_bin=${positional[0]:-${ATLAS_LLAMA_SERVER:-}}
if [ -z "$server_bin" ]; then
  echo "llama-server-e2e: skipped: no llama-server binary given (argument or ATLAS_LLAMA_SERVER; docs/serving.md says how to build one)"
  exit 77
fi
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${positional[1]:-${E2E_BENCH:-$here/build/tools/atlas-bench}}
# shellcheck source=tools/lib/data_dir.sh
. "$here/tools/lib/data_dir.sh"
data=$(atlas_data_dir "${positional[2]:-}")
data=$(cd "$data" 2>/dev/null && pwd) || usage "DATA_DIR $(atlas_data_dir "${positional[2]:-}"): not a folder"
out=${E2E_OUT:-$(mktemp -d /tmp/llama-server-e2e.XXXXXX)}
port=${E2E_PORT:-18090}
threads=${E2E_THREADS:-1}
reps=${E2E_REPS:-5}
model=$data/models/stories260K-gguf/stories260K.gguf
need_jq
mkdir -p "$out"
for f in "$server_bin" "$bench" "$model"; do
  [ -e "$f" ] || { echo "llama-server-e2e: not found: $f" >&2; exit 3; }
done
# Kept so that --check judges the run with the set-up it had.
: > "$out/server-args.txt"
[ ${#server_opts[@]} -eq 0 ] || printf '%s\n' "${server_opts[@]}" > "$out/server-args.txt"
echo "llama-server options: $opts_text(prompt cache $prompt_cache)"

"$server_bin" --version > "$out/server-version.txt" 2>&1 || true
"$server_bin" -m "$model" --host 127.0.0.1 --port "$port" --jinja -t "$threads" "${server_opts[@]}" > "$out/server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "llama-server exited; log: $out/server.log" >&2; tail -20 "$out/server.log" >&2; exit 4; }
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/v1/models" > "$out/models.json" || {
  echo "llama-server did not answer on port $port within 60 s; log: $out/server.log" >&2; exit 4; }

cat > "$out/suites.json" <<JSON
{"name": "llama-server-e2e", "seed": 1,
 "suites": {"ttft": {"lengths": [16, 64, 128, 256, 448], "decode_tokens": 8, "warm": true},
            "agentic": {"traces": ["coding-agent", "retrieval-agent"], "think_time_scale": 0},
            "bfcl": {"config": "bfcl-pr", "per_category": 2}}}
JSON
endpoint=(--endpoint "http://127.0.0.1:$port/v1" --model "$model")
run() {  # name, args...: runs atlas-bench, keeps its output and exit status
  local name=$1; shift
  set +e
  "$bench" --data-dir "$data" run "$@" "${endpoint[@]}" --out-dir "$out/$name" > "$out/$name.log" 2>&1
  local rc=$?
  set -e
  echo "$rc" > "$out/$name.rc"
  grep -o 'record: .*' "$out/$name.log" | tail -1 | cut -d' ' -f2 > "$out/$name.record" || true
  echo "atlas-bench run $name: exit $rc ($(cat "$out/$name.record"))"
  [ "$rc" = 0 ] || status=1
}
run suites --suite ttft,agentic,bfcl --config "$out/suites.json" --warmup 1 --repetitions "$reps"
run load --concurrency 1,2,4 --num-prompts 12 --input-len 64 --output-len 32 --warmup-requests 2

echo "(ttft: $reps repetitions after a warm-up)"
run_checks "$(cat "$out/suites.record")" "$(cat "$out/load.record")"
echo
echo "llama-server: $(head -5 "$out/server-version.txt" | tr '\n' ' ')"
echo "outputs: $out"
exit $status
