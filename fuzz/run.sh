#!/usr/bin/env bash
# fuzz/run.sh BUILD_DIR SECONDS [TARGET...]: runs each libFuzzer target (fuzz_<name> in
# BUILD_DIR/fuzz) for SECONDS seconds over a scratch copy of its checked-in corpus plus its
# dictionary, and prints one line per target: executions, edge coverage (libFuzzer "cov"),
# features, corpus size, peak RSS and the result. New corpus inputs stay in the scratch copy
# (BUILD_DIR/fuzz-work/<name>/corpus); a crash, leak, timeout or OOM leaves its input under
# BUILD_DIR/fuzz-work/<name>/artifacts/ and makes the script exit 1. Add such an input to
# fuzz/corpus/<name>/ as regress-<what> with the fix and its unit test (docs/fuzzing.md).
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
secs=${2:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
src=$(cd "$(dirname "$0")" && pwd)
# The GGUF seeds are small generated model files (never committed): make them from the data
# directory's stories260K tokenizer before fuzzing.
ATLAS_SEEDS_ONLY=gguf python3 "$src/make_seeds.py" "${ATLAS_DATA_DIR:-$src/../../shared/data}" ||
  echo "run.sh: could not generate the GGUF seeds; fuzz_gguf starts from an empty corpus" >&2
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$build"/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("$(basename "$f" | sed 's/^fuzz_//')"); done
fi
# Per-target input size limit: model-file seeds are tens of KiB; text formats stay small.
max_len() {
  case $1 in
    gguf) echo 65536 ;; record|baseline|llama2c) echo 32768 ;; llama2c_tokenizer|tokenizer_json|jinja) echo 16384 ;; *) echo 8192 ;;
  esac
}
dict_for() {
  case $1 in
    gguf) echo gguf ;; jinja) echo jinja ;; bfcl_python) echo python ;; sse_stream) echo sse ;; llama2c|llama2c_tokenizer) echo "" ;; *) echo json ;;
  esac
}
summary="$build/fuzz-work/summary.txt"
mkdir -p "$build/fuzz-work"
printf '%-18s %12s %8s %8s %7s %8s %s\n' target executions cov ft corpus rss_mb result | tee "$summary"
status=0
for t in "${targets[@]}"; do
  exe="$build/fuzz/fuzz_$t"
  work="$build/fuzz-work/$t"
  rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
  args=(-max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")
  d=$(dict_for "$t")
  [ -n "$d" ] && args+=(-dict="$src/dict/$d.dict")
  "$exe" "${args[@]}" "$work/corpus" "$src/corpus/$t" >"$work/log.txt" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log.txt" | tail -1 | awk '{print $2}')
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$work/log.txt" | tail -1 | awk '{print $2}')
  last=$(grep -E '^#[0-9]+' "$work/log.txt" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
  result=ok
  if ((rc != 0)); then
    result="FAILED (rc $rc: $(ls "$work/artifacts" | head -3 | tr '\n' ' '))"
    status=1
  fi
  printf '%-18s %12s %8s %8s %7s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$result" | tee -a "$summary"
done
exit $status
