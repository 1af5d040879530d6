#pragma once
// The model's weights on the device, in the backend's weight type, in the layout the kernels
// want: rows padded to 16 bytes, q/k/v concatenated into one matrix, gate/up interleaved row by
// row (gate_0, up_0, gate_1, ...) so one GEMV pass yields SwiGLU's inputs side by side.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/cuda/device_memory.hpp"
#include "engine/model.hpp"
#include "kernels/dtype.hpp"

namespace atlas::engine::cuda {

struct DeviceLayer {
  void* attn_norm = nullptr;  ///< [dim]
  void* wqkv = nullptr;       ///< [q_dim + 2 kv_dim][ld_dim]
  void* wo = nullptr;         ///< [dim][ld_q]
  void* q_norm = nullptr;     ///< [head_dim] or null
  void* k_norm = nullptr;
  void* ffn_norm = nullptr;   ///< [dim]
  void* wgu = nullptr;        ///< [2 hidden][ld_dim], gate/up interleaved
  void* wdown = nullptr;      ///< [dim][ld_hidden]
};

struct DeviceWeights {
  ModelConfig config;
  kernels::DType wtype = kernels::DType::bf16;
  int ld_dim = 0, ld_q = 0, ld_hidden = 0;
  void* tok_embd = nullptr;   ///< [vocab][ld_dim]
  std::vector<DeviceLayer> layers;
  void* output_norm = nullptr;
  void* output = nullptr;     ///< [vocab][ld_dim]; == tok_embd when tied
  std::size_t bytes = 0;      ///< weight bytes on the device
  /// Bytes one decode step reads from weights: everything but the embedding table (one row is
  /// read), lm_head included (it is the embedding when tied).
  std::size_t bytes_read_per_token = 0;
};

/// Places the weights in `arena` (a counting arena only sums their sizes).
DeviceWeights layout_weights(const ModelConfig& c, kernels::DType wtype, Arena& arena);

/// Uploads a host model's float32 weights (converted on the device, through a bounded staging
/// buffer; pageable copies are fine at load).
void upload_weights(const Model& model, DeviceWeights& w);

/// Fills every tensor with reproducible pseudo-random values on the device: matrices uniform
/// with std 1/sqrt(fan_in), norm gains 1 +- 0.1. For presets too large to generate on the host.
void random_weights(DeviceWeights& w, std::uint64_t seed);

}  // namespace atlas::engine::cuda
