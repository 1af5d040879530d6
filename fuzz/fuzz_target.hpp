#pragma once
// One harness per parser reached by outside input (docs/fuzzing.md). A harness is written once:
//
//   ATLAS_FUZZ_TARGET(gguf) { ...data, size...; return 0; }
//
// and built two ways. With ATLAS_FUZZ_LIBFUZZER (make fuzz: clang, ASan + UBSan, libFuzzer) it
// is the LLVMFuzzerTestOneInput of its own executable fuzz_<name>. Otherwise every harness is
// compiled into one executable, atlas_fuzz_replay, that runs each file of fuzz/corpus/<name>/
// through it: the checked-in corpus (seeds and every crash ever found) is a regression test of
// the ordinary build (ctest "fuzz_corpus") and of the sanitizer build (make test-sanitize).
//
// Contract of a harness: the parser's documented typed error (atlas::InputError and its
// subclasses, ApiError for request bodies, BFCL's PySyntaxError/PyDecodeError) is an expected
// outcome; any other exception escapes and aborts, as does a violated invariant (check()).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/env_flag.hpp"

namespace atlas::fuzz {

using Harness = int (*)(const std::uint8_t*, std::size_t);

/// Registers a harness for the replay driver (no-op in libFuzzer builds). Returns true.
bool register_harness(const char* name, Harness h);

/// The input as text.
inline std::string_view text(const std::uint8_t* data, std::size_t size) { return {reinterpret_cast<const char*>(data), size}; }

/// Writes the input to a per-process scratch file `name` (the model loaders read files through
/// mmap) and returns its path. /dev/shm when present: no disk traffic per execution.
std::filesystem::path scratch_file(const std::string& name, const std::uint8_t* data, std::size_t size);

/// A per-process scratch directory (created empty on first use).
std::filesystem::path scratch_dir();

/// An expected (typed) error: printed when ATLAS_FUZZ_VERBOSE is on (common/env_flag.hpp), to
/// see how far seeds get.
inline void rejected(const std::exception& e) {
  static const bool verbose = atlas::env_flag("ATLAS_FUZZ_VERBOSE");
  if (verbose) std::fprintf(stderr, "atlas fuzz: rejected: %s\n", e.what());
}

/// Aborts with `what` when `ok` is false: an invariant the parser promises is broken.
inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "atlas fuzz: invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace atlas::fuzz

#ifdef ATLAS_FUZZ_LIBFUZZER
#define ATLAS_FUZZ_ENTRY(name) \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { return atlas_fuzz_##name(data, size); }
#else
#define ATLAS_FUZZ_ENTRY(name) [[maybe_unused]] static const bool atlas_fuzz_registered_##name = ::atlas::fuzz::register_harness(#name, &atlas_fuzz_##name);
#endif

#define ATLAS_FUZZ_TARGET(name)                                              \
  static int atlas_fuzz_##name(const std::uint8_t* data, std::size_t size); \
  ATLAS_FUZZ_ENTRY(name)                                                     \
  static int atlas_fuzz_##name(const std::uint8_t* data, std::size_t size)
