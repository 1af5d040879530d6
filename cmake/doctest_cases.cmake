# One ctest entry per doctest test case, so that each case passes, fails or is Skipped on its own
# (tests/skip.hpp), instead of one entry per binary that one skip or one failure speaks for.
#
#   atlas_doctest_cases(<target> PREFIX <folder> [LABELS ...] [ENVIRONMENT ...]
#                       [FIXTURES_REQUIRED ...] [TIMEOUT s] [WORKING_DIRECTORY dir])
#
# After <target> is built, this file runs again in script mode (a build step) and lists the
# binary's cases (--list-test-cases) into <target>_cases.cmake: one line per case. At ctest time
# the include file written here at configure time defines what each line does: an add_test
# running `<binary> --test-case=<name> --atlas-one-case` with the properties given here, and
# SKIP_RETURN_CODE 77. A case's ctest name is "<folder>/<case name>". The properties live in the
# include file, not the list, so a reconfigure (a new ATLAS_DATA_DIR) needs no relink.
#
# The doctest filter escapes ',' and '\' and matches each ';' with '?' (a ';' in the listing
# would split a CMake list); tests/main.cpp fails a filter that matches no case or several.

if(CMAKE_SCRIPT_MODE_FILE)
  # Script mode: cmake -D EXE=<binary> -D PREFIX=<folder> -D OUT=<file> -P doctest_cases.cmake
  foreach(v EXE PREFIX OUT)
    if(NOT DEFINED ${v})
      message(FATAL_ERROR "doctest_cases.cmake: -D ${v}=... is required")
    endif()
  endforeach()
  execute_process(COMMAND "${EXE}" --list-test-cases --no-version=true --no-colors=true
    OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXE} --list-test-cases exited ${rc}: ${err}")
  endif()
  # No case name holds these tokens; they stand for ';', '[' and ']' while the listing is a CMake
  # list (a '[' in an element keeps the list from splitting at the ';' after it, up to a ']').
  set(semi "@ATLAS_SEMICOLON@")
  set(lbr "@ATLAS_LBRACKET@")
  set(rbr "@ATLAS_RBRACKET@")
  string(REPLACE ";" "${semi}" listing "${listing}")
  string(REPLACE "[" "${lbr}" listing "${listing}")
  string(REPLACE "]" "${rbr}" listing "${listing}")
  string(REPLACE "\n" ";" lines "${listing}")
  set(script "# Written by cmake/doctest_cases.cmake from ${EXE} --list-test-cases.\n")
  set(count 0)
  foreach(line IN LISTS lines)
    string(REPLACE "${lbr}" "[" line "${line}")
    string(REPLACE "${rbr}" "]" line "${line}")
    if(line STREQUAL "" OR line MATCHES "^\\[doctest\\] " OR line MATCHES "^=+$")
      continue()
    endif()
    string(REPLACE "${semi}" ";" name "${line}")
    string(REPLACE "\\" "\\\\" filter "${line}")
    string(REPLACE "," "\\," filter "${filter}")
    string(REPLACE "${semi}" "?" filter "${filter}")
    string(APPEND script "atlas_doctest_case([====[${PREFIX}/${name}]====] [====[${filter}]====])\n")
    math(EXPR count "${count} + 1")
  endforeach()
  if(count EQUAL 0)
    message(FATAL_ERROR "${EXE} lists no test cases")
  endif()
  file(WRITE "${OUT}.tmp" "${script}")
  file(RENAME "${OUT}.tmp" "${OUT}")
  return()
endif()

set(ATLAS_DOCTEST_CASES_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

function(atlas_doctest_cases target)
  cmake_parse_arguments(arg "" "PREFIX;TIMEOUT;WORKING_DIRECTORY" "LABELS;ENVIRONMENT;FIXTURES_REQUIRED" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 900)
  endif()
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(cases ${CMAKE_CURRENT_BINARY_DIR}/${target}_cases.cmake)
  set(include ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  # Re-listed whenever the binary or this script changes.
  add_custom_command(OUTPUT ${cases}
    COMMAND ${CMAKE_COMMAND} -D EXE=$<TARGET_FILE:${target}> -D PREFIX=${arg_PREFIX} -D OUT=${cases}
            -P ${ATLAS_DOCTEST_CASES_SCRIPT}
    DEPENDS ${target} ${ATLAS_DOCTEST_CASES_SCRIPT}
    COMMENT "Listing the test cases of ${target}"
    VERBATIM)
  add_custom_target(${target}_cases ALL DEPENDS ${cases})
  # Bracket arguments keep ';' (the ENVIRONMENT list) and quotes as they are.
  file(GENERATE OUTPUT ${include} CONTENT "\
# Written by cmake/doctest_cases.cmake at configure time; ctest includes it.
set(atlas_case_exe [====[$<TARGET_FILE:${target}>]====])
set(atlas_case_env [====[${arg_ENVIRONMENT}]====])
set(atlas_case_labels [====[${arg_LABELS}]====])
set(atlas_case_fixtures [====[${arg_FIXTURES_REQUIRED}]====])
function(atlas_doctest_case name filter)
  add_test(\"\${name}\" \"\${atlas_case_exe}\" \"--test-case=\${filter}\" --atlas-one-case)
  set_tests_properties(\"\${name}\" PROPERTIES
    ENVIRONMENT \"\${atlas_case_env}\" LABELS \"\${atlas_case_labels}\"
    WORKING_DIRECTORY [====[${arg_WORKING_DIRECTORY}]====] TIMEOUT ${arg_TIMEOUT} SKIP_RETURN_CODE 77)
  if(atlas_case_fixtures)
    set_tests_properties(\"\${name}\" PROPERTIES FIXTURES_REQUIRED \"\${atlas_case_fixtures}\")
  endif()
endfunction()
if(EXISTS [====[${cases}]====])
  include([====[${cases}]====])
else()
  add_test([====[${arg_PREFIX}/NOT_BUILT]====] [====[${target}_NOT_BUILT]====])
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include})
endfunction()
