#pragma once
// Where this build's source and build trees are, for tools and tests that find their own files
// (gate configs, suite configs, test fixtures). The paths live in one generated translation unit
// (build_paths.cpp.in) instead of -D definitions, so every other object file is the same in two
// clones and ccache (base_dir = the checkout) shares it between them: the gate's merge-base build
// and a fresh CI clone then hit the cache.
namespace atlas {
/// Absolute path of the source tree this binary was configured from (CMake's PROJECT_SOURCE_DIR).
const char* build_source_dir() noexcept;
/// Absolute path of the build tree (CMake's PROJECT_BINARY_DIR).
const char* build_binary_dir() noexcept;
}  // namespace atlas
