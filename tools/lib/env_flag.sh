# shellcheck shell=bash
# A boolean environment variable for scripts and the build, read as atlas::env_flag
# (common/env_flag.hpp) reads it: unset or empty, 0, false, no, off: off; 1, true, yes, on: on;
# anything else is an error naming the variable (a typo like CI=ture must mean neither).
# Sourced, or run as `bash tools/lib/env_flag.sh NAME` (the Makefile and CMakeLists.txt read CI
# so). docs/environment.md lists the spellings; the ctest common/"env_flag.sh" checks this file
# and env_flag agree.

# atlas_env_flag NAME: prints 1 (on) or 0 (off); another value: the error on stderr, return 3.
atlas_env_flag() {
  local v=${!1:-}
  case $v in
    '' | 0 | false | no | off) echo 0 ;;
    1 | true | yes | on) echo 1 ;;
    *)
      echo "environment variable $1 = '$v' is not a boolean (1/true/yes/on or 0/false/no/off)" >&2
      return 3
      ;;
  esac
}

# atlas_ci_flag: prints 1 when CI is on, 0 when off, as atlas::ci_env reads it: CI is the CI
# system's variable, not one of ours (GitHub Actions sets true, AppVeyor True, others their
# name), so it is never an error: unset, empty, or 0/false/no/off in any case is off, else on.
atlas_ci_flag() {
  local v=${CI:-}
  case ${v,,} in
    '' | 0 | false | no | off) echo 0 ;;
    *) echo 1 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case ${1:?usage: tools/lib/env_flag.sh NAME (CI: read as atlas_ci_flag)} in
    CI) atlas_ci_flag ;;
    *) atlas_env_flag "$1" ;;
  esac
fi
