#pragma once
// Errors of the kernels layer: a failed CUDA runtime call or a launch with bad shapes. Both are
// failures of the machine or the program (exit 4), never of the input: the engine checks shapes
// against the model before it launches anything.
#include <cuda_runtime_api.h>

#include <string>

#include "common/machine_error.hpp"

namespace atlas::kernels {

class KernelError : public atlas::MachineError {
 public:
  using atlas::MachineError::MachineError;
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
