# Sanitizer and fuzzing builds (make test-sanitize, make fuzz; docs/fuzzing.md).
# ATLAS_SANITIZE=ON: every target with AddressSanitizer + UndefinedBehaviorSanitizer, UB fatal
#   (a finding fails the test that hit it instead of scrolling past).
# ATLAS_FUZZ=ON: the same plus libFuzzer coverage instrumentation (clang only); fuzz/ adds one
#   libFuzzer executable per parser reached by outside input.
option(ATLAS_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(ATLAS_FUZZ "Build the libFuzzer targets in fuzz/ (clang; implies ASan + UBSan)" OFF)

if(ATLAS_SANITIZE OR ATLAS_FUZZ)
  set(_atlas_san -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  if(ATLAS_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
      message(FATAL_ERROR "ATLAS_FUZZ needs clang (libFuzzer): configure with CXX=clang++-16")
    endif()
    list(APPEND _atlas_san -fsanitize=fuzzer-no-link)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_atlas_san}>")
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "atlas: sanitizers=${_atlas_san}")
endif()
