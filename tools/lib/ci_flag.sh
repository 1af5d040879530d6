# shellcheck shell=bash
# Whether the build runs under CI, as atlas::ci_env (common/env_flag.hpp) reads the CI variable:
# it is the CI system's, not one of ours (GitHub Actions and GitLab set true, AppVeyor True,
# others their own name), so it is never an error: unset, empty, or 0/false/no/off in any letter
# case is off; anything else is on. Run as `bash tools/lib/ci_flag.sh` (the Makefile and
# CMakeLists.txt, for warnings as errors) or sourced; the ctest common/"ci_env ..." checks this
# file and ci_env agree.

# atlas_ci_flag: prints 1 when CI is on, 0 when off.
atlas_ci_flag() {
  local v=${CI:-}
  case ${v,,} in
    '' | 0 | false | no | off) echo 0 ;;
    *) echo 1 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  atlas_ci_flag
fi
