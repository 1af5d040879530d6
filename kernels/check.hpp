#pragma once
// Errors of the kernels layer: a failed CUDA runtime call or a launch with bad shapes.
#include <cuda_runtime_api.h>

#include <string>

#include "common/error.hpp"

namespace atlas::kernels {

class KernelError : public atlas::Error {
 public:
  using atlas::Error::Error;
};

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  throw KernelError(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                    cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

}  // namespace atlas::kernels

#define ATLAS_CUDA_CHECK(expr)                                                          \
  do {                                                                                  \
    const cudaError_t atlas_cuda_err_ = (expr);                                         \
    if (atlas_cuda_err_ != cudaSuccess)                                                 \
      ::atlas::kernels::throw_cuda(atlas_cuda_err_, #expr, __FILE__, __LINE__);         \
  } while (0)
