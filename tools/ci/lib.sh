# shellcheck shell=bash
# What the CI scripts share (sourced, not run): the atlas-bench binary and the data directory
# they use, and the record paths a run printed. Each script stays runnable by hand from the
# checkout's root: the workflows (tools/ci/workflows/) only call these scripts.

# The atlas-bench binary: $ATLAS_BENCH, else the `make build` one.
ci_bench() {
  local b=${ATLAS_BENCH:-build/tools/atlas-bench}
  [ -x "$b" ] || { echo "ci: atlas-bench not found at $b (run 'make build' or set ATLAS_BENCH)" >&2; return 3; }
  printf '%s\n' "$b"
}

# shellcheck source=tools/lib/data_dir.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/data_dir.sh"

# The data directory (models/, bfcl/), absolute: the one order of tools/lib/data_dir.sh
# ($ATLAS_DATA_DIR, else ../shared/data beside the checkout, else ./data; docs/environment.md).
ci_data_dir() {
  local d
  d=$(atlas_data_dir)
  [ -d "$d/models" ] || { echo "ci: no data directory at '$d' (set ATLAS_DATA_DIR: models/, bfcl/)" >&2; return 3; }
  (cd "$d" && pwd)
}

# The record files a run named in its output ("record: PATH" lines), each once, in order.
ci_records_in_log() {
  sed -n 's/^record: //p' "$1" | awk '!seen[$0]++' | while IFS= read -r p; do
    [ -f "$p" ] && printf '%s\n' "$p"
  done
}
