#pragma once
// The CUDA backend and CUPTI live in a module (libatlas-cuda.so) that a process opens the first
// time it needs them, as llama.cpp's dynamic backends do: commands that never touch the GPU
// (`--help`, `diff`, `baseline show`, the CPU backend) do not load cudart, cuBLAS, cuBLASLt or
// CUPTI (about 540 MB of libraries, ~70 ms and ~200 MB of RSS at start-up).
//
// The module is built from this source tree whenever the CUDA backend is (ATLAS_HAVE_CUDA); a
// CPU-only build has none and says so. A binary that links engine/cuda statically (the GPU
// tests, atlas-cuda-bench) uses its own copy instead and never opens the module.
#include <string>

#include "engine/backend.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

/// File name of the module.
inline constexpr const char* kCudaModuleFile = "libatlas-cuda.so";

/// A fingerprint of the types that cross the module boundary (the module and the binary must
/// be built from the same sources): both sides compute it, the loader compares them.
inline std::string cuda_module_abi() {
  return "atlas-cuda-module/1 model=" + std::to_string(sizeof(Model)) + " config=" + std::to_string(sizeof(ModelConfig)) +
         " options=" + std::to_string(sizeof(BackendOptions)) + " backend=" + std::to_string(sizeof(Backend));
}

/// The address of `symbol` (an extern "C" entry point) in the CUDA module, opening the module
/// on the first call (thread-safe). The module is looked for at $ATLAS_CUDA_MODULE, else beside
/// the executable, else in the build tree that built this binary, else on the loader's search
/// path. Throws naming every place tried with dlerror()'s reason: EngineError (the request's
/// error, exit 3) when the build has no CUDA backend or ATLAS_CUDA_MODULE names no file;
/// MachineError (exit 4) when the module does not load, is not an atlas module, was built from
/// other sources (ABI mismatch) or lacks `symbol`, or the build's own module is missing.
void* cuda_module_symbol(const char* symbol);

/// Whether this process has opened the CUDA module (tests: a CPU-only command must not).
bool cuda_module_loaded();

}  // namespace atlas::engine
