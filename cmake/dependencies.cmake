# Third-party dependencies, from Debian packages (tools/install-deps.sh installs them).
# Header-only libraries are also found by plain include path so that a machine without the
# Debian packages (the GPU box) can point CMAKE_PREFIX_PATH at a folder holding the headers.
find_package(Threads REQUIRED)

function(atlas_header_only target header)
  find_path(${target}_INCLUDE_DIR ${header} REQUIRED)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} SYSTEM INTERFACE ${${target}_INCLUDE_DIR})
endfunction()

atlas_header_only(atlas_dep_json nlohmann/json.hpp)
atlas_header_only(atlas_dep_cli11 CLI/CLI.hpp)
atlas_header_only(atlas_dep_doctest doctest/doctest.h)

find_package(OpenSSL)            # sha256 for provenance hashes
find_package(CURL)               # endpoint client (optional on the GPU box)
find_package(benchmark CONFIG)   # Google Benchmark binaries (optional on the GPU box)
find_path(ATLAS_HTTPLIB_INCLUDE_DIR httplib.h)  # atlas-serve (optional on the GPU box)

set(ATLAS_HAVE_CURL ${CURL_FOUND})
if(benchmark_FOUND)
  set(ATLAS_HAVE_BENCHMARK ON)
else()
  set(ATLAS_HAVE_BENCHMARK OFF)
endif()
if(ATLAS_HTTPLIB_INCLUDE_DIR)
  set(ATLAS_HAVE_HTTPLIB ON)
else()
  set(ATLAS_HAVE_HTTPLIB OFF)
endif()
message(STATUS "atlas: curl=${ATLAS_HAVE_CURL} benchmark=${ATLAS_HAVE_BENCHMARK} httplib=${ATLAS_HAVE_HTTPLIB} openssl=${OPENSSL_FOUND}")

# In the fuzz build (ATLAS_FUZZ) keeps only the sources the fuzz targets link (fuzz/sources.cmake):
# there the layer libraries exist for the fuzz targets alone, and the other sources' instrumented
# compiles would be wasted. Elsewhere leaves the list as it is.
function(atlas_fuzz_filter var)
  if(NOT ATLAS_FUZZ)
    return()
  endif()
  set(kept "")
  foreach(src IN LISTS ${var})
    file(RELATIVE_PATH rel_src ${PROJECT_SOURCE_DIR} ${src})
    file(RELATIVE_PATH rel_bin ${PROJECT_BINARY_DIR} ${src})
    if(rel_src IN_LIST ATLAS_FUZZ_LIB_SOURCES OR rel_bin IN_LIST ATLAS_FUZZ_LIB_SOURCES)
      list(APPEND kept ${src})
    endif()
  endforeach()
  set(${var} ${kept} PARENT_SCOPE)
endfunction()

# A layer library from every .cpp below `dir` (an INTERFACE library while the layer is empty).
function(atlas_layer_library name dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
  # CUDA-only sources (a cuda/ folder, files named cuda_*.cpp or cupti_*.cpp) build into their own
  # libraries and the CUDA module (engine/, suites/, tools/CMakeLists.txt), never into a layer:
  # binaries open the module on demand (engine/backend_module.hpp).
  # Matched on the path relative to `dir`: the checkout's own path may hold regex characters
  # (~/c++/atlas) or a cuda/ folder, and must change nothing.
  set(cuda_only "")
  set(kept_srcs "")
  foreach(src IN LISTS srcs)
    file(RELATIVE_PATH rel ${dir} ${src})
    if(rel MATCHES "^(.*/)?(cuda/.*|cuda_[^/]*|cupti_[^/]*)$")
      list(APPEND cuda_only ${src})
    else()
      list(APPEND kept_srcs ${src})
    endif()
  endforeach()
  set(srcs ${kept_srcs})
  # Each of these must be claimed by a CUDA library (atlas_claim_cuda_sources), or it would never
  # be compiled: atlas_check_cuda_sources() fails the configure naming it.
  set_property(GLOBAL APPEND PROPERTY ATLAS_CUDA_ONLY_SOURCES ${cuda_only})
  atlas_fuzz_filter(srcs)
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
  endif()
endfunction()

# Marks CUDA-only sources (see atlas_layer_library) as built by a CUDA library or the CUDA module.
# Called whether or not CUDA is found, so a CPU-only configure checks the routing too.
function(atlas_claim_cuda_sources)
  set_property(GLOBAL APPEND PROPERTY ATLAS_CUDA_CLAIMED_SOURCES ${ARGN})
endfunction()

# Fails the configure on a CUDA-only source that no CUDA library claims: the name routing (a
# cuda/ folder, cuda_*.cpp, cupti_*.cpp) keeps a file out of its layer, so an unclaimed one would
# silently never compile. Called once, after every layer is added.
function(atlas_check_cuda_sources)
  get_property(only GLOBAL PROPERTY ATLAS_CUDA_ONLY_SOURCES)
  get_property(claimed GLOBAL PROPERTY ATLAS_CUDA_CLAIMED_SOURCES)
  foreach(src IN LISTS only)
    if(NOT src IN_LIST claimed)
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${src})
      message(FATAL_ERROR "${rel}: its name routes it out of its layer (a cuda/ folder, cuda_*.cpp or "
              "cupti_*.cpp are CUDA-only: docs/architecture.md), but no CUDA library builds it. "
              "Rename it, or add its folder to a CUDA library (engine/CMakeLists.txt, suites/CMakeLists.txt).")
    endif()
  endforeach()
endfunction()

# target_link_libraries that works for both STATIC and INTERFACE layer libraries.
function(atlas_link name)
  get_target_property(type ${name} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_link_libraries(${name} INTERFACE ${ARGN})
  else()
    target_link_libraries(${name} PUBLIC ${ARGN})
  endif()
endfunction()
