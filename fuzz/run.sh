#!/usr/bin/env bash
# fuzz/run.sh BUILD_DIR SECONDS [TARGET...]: runs each libFuzzer target (fuzz_<name> in
# BUILD_DIR/fuzz) for SECONDS seconds over a scratch copy of its checked-in corpus plus its
# dictionary, and prints one line per target: executions, edge coverage (libFuzzer "cov"),
# features, corpus size, peak RSS and the result. New corpus inputs stay in the scratch copy
# (BUILD_DIR/fuzz-work/<name>/corpus); a crash, leak, timeout or OOM leaves its input under
# BUILD_DIR/fuzz-work/<name>/artifacts/ and makes the script exit 1. Add such an input to
# fuzz/corpus/<name>/ as regress-<what> with the fix and its unit test (docs/fuzzing.md).
#
# Machines with many cores (long runs, docs/fuzzing.md "Results"):
#   FUZZ_PARALLEL=1        all targets at once instead of one after the other
#   FUZZ_FORK="gguf=3 record=2"   libFuzzer -fork=N for those targets (N worker processes that
#                          share one corpus; executions and coverage are the totals over them)
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
secs=${2:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
src=$(cd "$(dirname "$0")" && pwd)
# The seeds of model files (synthetic GGUF and llama2.c checkpoints) and those taken from the data
# directory (the stories260K tokenizer, header prefixes of the real model files) are generated,
# never committed: make them before fuzzing.
# shellcheck source=tools/lib/data_dir.sh
. "$src/../tools/lib/data_dir.sh"
ATLAS_SEEDS_ONLY=generated python3 "$src/make_seeds.py" "$(atlas_data_dir_absolute "")" ||
  echo "run.sh: some generated seeds are missing (above); those targets start from fewer seeds" >&2
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$build"/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("$(basename "$f" | sed 's/^fuzz_//')"); done
fi
# Per-target input size limit: model-file seeds are tens of KiB; text formats stay small.
max_len() {
  case $1 in
    gguf) echo 65536 ;; llama2c) echo 32768 ;; record|baseline|llama2c_tokenizer|tokenizer_json|jinja) echo 16384 ;; *) echo 8192 ;;
  esac
}
dict_for() {
  case $1 in
    gguf) echo gguf ;; jinja) echo jinja ;; bfcl_python) echo python ;; sse_stream) echo sse ;; tool_calls) echo tool_calls ;;
    llama2c|llama2c_tokenizer) echo "" ;; *) echo json ;;
  esac
}
# Per-input time limit (a longer one is a hang). A chat template may run to the render's work
# budget by design: ~1-2 s in a release build, 3-8 s under ASan + UBSan on a loaded 2-core box
# (measured 7.3 s for 55,000 loop iterations at load 5), so jinja gets 30 s.
timeout_for() {
  case $1 in
    jinja) echo 30 ;; *) echo 10 ;;
  esac
}
fork_for() {
  local kv
  for kv in ${FUZZ_FORK:-}; do [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }; done
  echo 0
}
run_one() {
  local t=$1 exe="$build/fuzz/fuzz_$1" work="$build/fuzz-work/$1"
  rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
  local args=(-max_total_time="$secs" -max_len="$(max_len "$t")" -timeout="$(timeout_for "$t")" -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$work/artifacts/")
  local d k
  d=$(dict_for "$t")
  [ -n "$d" ] && args+=(-dict="$src/dict/$d.dict")
  k=$(fork_for "$t")
  ((k > 0)) && args+=(-fork="$k")
  "$exe" "${args[@]}" "$work/corpus" "$src/corpus/$t" >"$work/log.txt" 2>&1
  echo $? >"$work/rc"
}
report_one() {
  local t=$1 work="$build/fuzz-work/$1" rc execs rss last cov ft corp result
  rc=$(cat "$work/rc" 2>/dev/null || echo 99)
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log.txt" | tail -1 | awk '{print $2}')
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$work/log.txt" | tail -1 | awk '{print $2}')
  # Progress lines: "#N  NEW|REDUCE|pulse  cov: C ft: F corp: K/..." (one process) or
  # "#N: cov: C ft: F corp: K exec/s ..." (-fork: N counts every worker's executions).
  last=$(grep -E '^#[0-9]+:?[[:space:]]' "$work/log.txt" | grep ' cov: ' | tail -1)
  [ -z "$execs" ] && execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if ((rc != 0)); then
    # shellcheck disable=SC2012  # names for a message only (libFuzzer's crash-<sha1> names)
    result="FAILED (rc $rc: $(ls "$work/artifacts" | head -3 | tr '\n' ' '))"
    status=1
  fi
  printf '%-18s %12s %8s %8s %7s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$result" | tee -a "$summary"
}
summary="$build/fuzz-work/summary.txt"
mkdir -p "$build/fuzz-work"
status=0
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  for t in "${targets[@]}"; do run_one "$t" & done
  wait
fi
printf '%-18s %12s %8s %8s %7s %8s %s\n' target executions cov ft corpus rss_mb result | tee "$summary"
for t in "${targets[@]}"; do
  [ "${FUZZ_PARALLEL:-0}" = 1 ] || run_one "$t"
  report_one "$t"
done
exit $status
