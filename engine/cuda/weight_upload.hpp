#pragma once
// Filling device weights: from a host model's tensors (Uploader) or with reproducible synthetic
// values generated on the device (RandomFill). Each block fills its own tensors through these.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/cuda/device_memory.hpp"
#include "engine/model.hpp"
#include "kernels/dtype.hpp"

namespace atlas::engine::cuda {

/// Copies host rows into device rows of the backend's weight type (or float32 for `rows_f32`).
/// bf16 rows bound for bf16 device weights are copied as they are; other rows (float32, f16,
/// Q8_0, or bf16 for float32 device weights) go through a bounded device staging buffer, typed
/// rows widened to float32 one chunk at a time (Q8_0 is therefore dequantised once, at load), so
/// the host never holds a float32 copy of a whole tensor. Pageable copies: load time only.
class Uploader {
 public:
  explicit Uploader(kernels::DType wtype);
  kernels::DType wtype() const { return wtype_; }
  /// src [rows][cols] -> dst rows of `pitch` elements (zero padding up to ld). Throws EngineError naming `what` when src has the wrong number of values.
  void rows(const Weight& src, int rows, int cols, void* dst, int ld, int pitch, const char* what);
  /// float32 values (small per-channel tensors the kernels read in float32).
  void f32(const Weight& src, std::size_t n, float* dst, const char* what);
  /// Rows `row_order[i]` of src [src_rows][cols] to dst row i (a reordering at load, e.g. the
  /// Gated DeltaNet in_proj un-grouped from the checkpoint's per-key-head layout).
  void gather_rows(const Weight& src, int src_rows, int cols, const std::vector<int>& row_order, void* dst, int ld,
                   const char* what);

 private:
  static constexpr std::size_t kStagingBytes = 64u << 20;
  kernels::DType wtype_;
  DeviceBuffer staging_;
  std::vector<float> host_;
};

/// Synthetic weights on the device: every tensor gets the next key of one sequence, so the same
/// model and seed always give the same values (the dense layout's order is the order of the
/// calls). Matrices are uniform with std 1/sqrt(fan_in); norm gains 1 +- 0.1.
class RandomFill {
 public:
  RandomFill(kernels::DType wtype, std::uint64_t seed) : wtype_(wtype), seed_(seed) {}
  /// A [rows][cols] matrix of the weight type, row stride ld.
  void matrix(void* dst, int rows, int cols, int ld);
  /// A norm gain, float32 (1 +- 0.1): gains stay float32 on the device (kernels/gemv.hpp).
  void gain(float* dst, int n);
  /// float32 values: offset + scale * u, u uniform in [-1, 1).
  void f32(float* dst, int n, float scale, float offset);

 private:
  std::uint64_t next() { return seed_ * 0x100000001b3ull + (++tensor_); }
  kernels::DType wtype_;
  std::uint64_t seed_;
  std::uint64_t tensor_ = 0;
};

}  // namespace atlas::engine::cuda
