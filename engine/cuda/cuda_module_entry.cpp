// Entry points of the CUDA module (libatlas-cuda.so, engine/backend_module.hpp); compiled into the
// module only (tools/CMakeLists.txt), never into a binary.
#include <memory>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/backend_module.hpp"

#define ATLAS_MODULE_EXPORT extern "C" __attribute__((visibility("default")))

/// cuda_module_abi() as the module was built; the loader refuses a module whose value differs.
ATLAS_MODULE_EXPORT const char* atlas_cuda_module_abi() {
  static const std::string abi = atlas::engine::cuda_module_abi();
  return abi.c_str();
}

/// make_cuda_backend() (engine/cuda/cuda_backend.hpp). Throws EngineError without a device.
ATLAS_MODULE_EXPORT std::unique_ptr<atlas::engine::Backend> atlas_make_cuda_backend(
    const atlas::engine::Model& model, const atlas::engine::BackendOptions& opts) {
  return atlas::engine::make_cuda_backend(model, opts);
}
