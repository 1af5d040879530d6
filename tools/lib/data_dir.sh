# shellcheck shell=bash
# The data directory (models/, bfcl/) for scripts, in the one order atlas::resolve_data_dir
# (common/data_dir.hpp) uses, described in docs/environment.md "The data directory":
#   1. FLAG (a script's DATA_DIR argument or --data-dir) when not empty;
#   2. $ATLAS_DATA_DIR when set and not empty;
#   3. ../shared/data beside the checkout holding this file, when it is a directory;
#   4. data (the checkout's data/ when run from there).
# Sourced (tools/ci/lib.sh, the GPU scripts, fuzz/run.sh) or run (`bash tools/lib/data_dir.sh
# [FLAG]`: the Makefile, CMakeLists.txt, .ci/run). Prints exactly what resolve_data_dir returns
# (relative values stay relative); atlas_data_dir_absolute makes it absolute. The ctest
# common/"data directory order" checks this file and resolve_data_dir agree.

# atlas_data_dir_for CHECKOUT [FLAG]: the order above, beside the checkout CHECKOUT.
atlas_data_dir_for() {
  local checkout=$1 flag=${2:-} beside
  if [ -n "$flag" ]; then
    printf '%s\n' "$flag"
  elif [ -n "${ATLAS_DATA_DIR:-}" ]; then
    printf '%s\n' "$ATLAS_DATA_DIR"
  elif beside=$(realpath -ms -- "$checkout/../shared/data") && [ -d "$beside" ]; then
    # "checkout/.." dropped as text (realpath -s: no symbolic link resolved), and that path is
    # the one tested, as the C++ side's lexically_normal does: for a symlinked checkout, the
    # parent its path names, not its target's
    printf '%s\n' "$beside"
  else
    printf '%s\n' data
  fi
}

# atlas_data_dir [FLAG]: the order above for this checkout.
atlas_data_dir() {
  atlas_data_dir_for "$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)" "${1:-}"
}

# atlas_data_dir_absolute [FLAG]: atlas_data_dir made absolute against the current directory
# (no symbolic link resolved; the directory need not exist).
atlas_data_dir_absolute() {
  local d
  d=$(atlas_data_dir "${1:-}") || return
  realpath -ms -- "$d"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  atlas_data_dir "${1:-}"
fi
