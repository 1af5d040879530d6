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
    # Only what the fuzz targets link is compiled (cmake/dependencies.cmake, atlas_fuzz_filter).
    include(${PROJECT_SOURCE_DIR}/fuzz/sources.cmake)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_atlas_san}>")
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "atlas: sanitizers=${_atlas_san}")

  # Optimisation and debug info of the instrumented builds (both are RelWithDebInfo), instead of
  # CMake's -O2 -g. Line tables only: they keep every file:line and inlined frame of an ASan/UBSan
  # report (frame pointers stay, above); only variable locations go, which a CI log never shows.
  # gcc (make test-sanitize) also at -O1, the level ASan's documentation recommends: there -O1 is
  # most of the saving. clang (make fuzz) stays at -O2: there -O1 saves little more compile time,
  # and the fuzz pass runs for a fixed time, so slower code would run fewer inputs. NDEBUG stays as
  # RelWithDebInfo has it, so the same asserts run. Measured 2026-12-07 (README "Fuzzing and
  # sanitizers"): the sanitizer build's 369 translation units took 3,919 CPU-s at -O2 -g and
  # 2,158 at -O1 -g1 (gcc 13); sampled clang units 11 % less at -O2 -gline-tables-only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(_atlas_inst_default "-O2 -gline-tables-only -DNDEBUG")
  else()
    set(_atlas_inst_default "-O1 -g1 -DNDEBUG")
  endif()
  set(ATLAS_INSTRUMENTED_FLAGS "${_atlas_inst_default}" CACHE STRING
      "CMAKE_CXX_FLAGS_RELWITHDEBINFO of the sanitizer and fuzz builds (ATLAS_SANITIZE / ATLAS_FUZZ)")
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "${ATLAS_INSTRUMENTED_FLAGS}")
  message(STATUS "atlas: instrumented build flags (RelWithDebInfo)=${CMAKE_CXX_FLAGS_RELWITHDEBINFO}")
endif()
