#pragma once
// Batch-1 matrix-vector products for decode: y = W x with W row-major [rows][ld] (ld a multiple
// of 8, padding zero), read once with 16-byte streaming loads, float32 accumulation.
// Memory-bound: one pass over W is the floor (bytes = rows * ld * sizeof(W)).
#include <cuda_runtime_api.h>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

/// How the input vector is formed before the product.
enum class GemvInput {
  rmsnorm,  ///< x is float32 [k]; the kernel applies RMSNorm (x * rsqrt(mean(x^2)+eps) * g) itself
  plain,    ///< x is already of the weight type [ld] (padding zero)
};

/// What is done with each output row's dot product.
enum class GemvOutput {
  store,     ///< y[r] = dot (float32)
  add,       ///< y[r] += dot (float32): the residual add, fused
  swiglu,    ///< rows interleaved (gate_i, up_i): h[i] = silu(gate_i) * up_i, stored as weight type
};

struct GemvArgs {
  ElemType wtype = ElemType::bf16;
  const void* w = nullptr;  ///< [rows][ld]
  int rows = 0;
  int k = 0;                ///< logical input length
  int ld = 0;               ///< padded_ld(k)
  GemvInput input = GemvInput::plain;
  const void* x = nullptr;  ///< float32 [k] (rmsnorm) or weight type [ld] (plain)
  const float* norm = nullptr;  ///< float32 [k], rmsnorm only (gains stay float32: 1 + w of a
                                ///< zero-centred norm is not representable in bf16)
  float eps = 1e-5f;
  GemvOutput output = GemvOutput::store;
  void* y = nullptr;        ///< float32 [rows] (store/add) or weight type [rows/2] (swiglu)
};

/// Enqueues the product on `stream`. One launch; no allocation; capture-safe. Alignment: w and
/// a plain x 16 bytes (ld is a multiple of 8); an rmsnorm x and norm 16
/// bytes (the prologue loads 4-element vectors). Throws KernelError for ld % 8 != 0,
/// ld < k, or an odd row count with swiglu.
void gemv(const GemvArgs& a, cudaStream_t stream);

/// Reads and checks the GEMV's environment knobs (ATLAS_GEMV_*: docs/environment.md) now rather
/// than at the first launch, where a typo would surface inside a suite run (reported invalid,
/// exit 2) instead of as the input error it is (exit 3). Throws atlas::InputError naming the
/// variable and value.
void gemv_read_env_knobs();

/// Sets the kernels' dynamic shared-memory limit for inputs of up to `max_ld` elements.
/// Call once per device before capture (cudaFuncSetAttribute is not a stream operation).
void gemv_prepare(int max_ld);

}  // namespace atlas::kernels
