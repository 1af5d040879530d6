# Run at build time (cmake -P, from common/CMakeLists.txt): writes the commit the source tree is
# at, and whether it has changes, into OUT. The file is rewritten only when that changes, so an
# unchanged tree recompiles nothing. Why: the gate checks that a prebuilt base binary
# (--base-bin) was built from the merge-base (docs/gates.md), and a binary can only say that if
# the commit is compiled in; records and `git` at run time see the checkout, not the binary.
# Inputs: SRC (the source tree), OUT (the .cpp to write).
set(_commit "unknown")
set(_dirty "false")
find_program(_git git)
if(_git)
  execute_process(COMMAND ${_git} -C ${SRC} rev-parse --verify -q HEAD^{commit}
                  OUTPUT_VARIABLE _out RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  # Only a checkout whose top is SRC: a tree unpacked inside another repository is not that
  # repository's commit (as records::collect_git).
  execute_process(COMMAND ${_git} -C ${SRC} rev-parse --show-toplevel
                  OUTPUT_VARIABLE _top RESULT_VARIABLE _rc_top ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(_src_real "${SRC}" REALPATH)
  get_filename_component(_top_real "${_top}" REALPATH)
  if(_rc EQUAL 0 AND _rc_top EQUAL 0 AND _out MATCHES "^[0-9a-f]+$" AND _src_real STREQUAL _top_real)
    set(_commit "${_out}")
    # --no-optional-locks: a build must not take the index lock a concurrent git command needs.
    execute_process(COMMAND ${_git} --no-optional-locks -C ${SRC} status --porcelain
                    OUTPUT_VARIABLE _status RESULT_VARIABLE _rc_status ERROR_QUIET)
    if(NOT _rc_status EQUAL 0 OR NOT _status STREQUAL "")
      set(_dirty "true")
    endif()
  endif()
endif()
set(_text "// Generated at build time by cmake/build_commit.cmake: see common/build_commit.hpp.
#include \"common/build_commit.hpp\"

namespace atlas {
const char* build_commit() noexcept { return \"${_commit}\"; }
bool build_tree_dirty() noexcept { return ${_dirty}; }
}  // namespace atlas
")
set(_old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" _old)
endif()
if(NOT _old STREQUAL _text)
  file(WRITE "${OUT}" "${_text}")
endif()
