#pragma once
// Small helpers the device blocks share: typed arena slices and the prefill GEMM.
#include <cublas_v2.h>

#include <cstddef>
#include <string>

#include "engine/cuda/device_memory.hpp"
#include "kernels/check.hpp"
#include "kernels/elem_type.hpp"

#define ATLAS_CUBLAS_CHECK(expr)                                                                  \
  do {                                                                                            \
    const cublasStatus_t st_ = (expr);                                                            \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                             \
      throw ::atlas::kernels::KernelError(std::string(#expr) + " failed: " + cublasGetStatusName(st_)); \
  } while (0)

namespace atlas::engine::cuda {

/// `count` elements of T from the arena (null on a counting pass).
template <typename T>
T* take(Arena& a, std::size_t count) {
  return static_cast<T*>(a.take(sizeof(T) * count));
}
/// `count` elements of the weight type.
inline void* take(Arena& a, kernels::ElemType t, std::size_t count) { return a.take(kernels::elem_size(t) * count); }

inline cudaDataType_t cuda_type(kernels::ElemType t) { return t == kernels::ElemType::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

/// Row-major Y[n][rows] (+)= X[n][k] . W[rows][k]^T through cuBLAS (column-major
/// Y^T = W^T(op T) . X^T). float32 weights use pedantic float32 math (parity tests).
inline void prefill_gemm(cublasHandle_t h, kernels::ElemType wtype, const void* w, int rows, int k, int ldw, const void* x,
                         int ldx, int n, void* y, int ldy, bool y_is_weight_type, float beta) {
  const float alpha = 1.0f;
  const cudaDataType_t wt = cuda_type(wtype);
  const cublasComputeType_t ct = wtype == kernels::ElemType::f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  ATLAS_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, rows, n, k, &alpha, w, wt, ldw, x, wt, ldx, &beta, y,
                                  y_is_weight_type ? wt : CUDA_R_32F, ldy, ct, CUBLAS_GEMM_DEFAULT));
}

}  // namespace atlas::engine::cuda
