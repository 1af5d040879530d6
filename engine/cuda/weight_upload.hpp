#pragma once
// Filling device weights, tensor by tensor, from one of two sources: a host model's tensors, or a
// preset's synthetic weights generated on the device (engine/formats/synthetic_weights.hpp: the
// values make-model writes on the host for that preset and seed, so a 24 GB preset needs no host
// copy and still equals its file). Each block fills its own tensors through one Uploader, with
// the same calls for either source; the uploader records where each tensor went, so that a
// per-tensor digest of the device bytes can compare two loads.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/cuda/device_memory.hpp"
#include "engine/formats/synthetic_weights.hpp"
#include "engine/model.hpp"
#include "kernels/elem_type.hpp"

namespace atlas::engine::cuda {

/// Where one uploaded tensor lives: `rows` rows of `row_bytes`, `pitch_bytes` apart.
struct DeviceTensor {
  std::string name;
  const void* ptr = nullptr;
  std::size_t rows = 0, row_bytes = 0, pitch_bytes = 0;
};

/// One tensor's device bytes hashed (FNV-1a 64 over its rows, padding included).
struct TensorDigest {
  std::string name;
  std::uint64_t hash = 0;
  std::size_t bytes = 0;
};

/// Copies host rows into device rows of the backend's weight type (or float32 for `f32`), or
/// generates them there. Host bf16 rows bound for bf16 device weights are copied as they are;
/// other rows (float32, f16, Q8_0, or bf16 for float32 device weights) and synthetic rows go
/// through a bounded float32 device staging buffer, converted one chunk at a time (Q8_0 is
/// therefore dequantised once, at load), so the host never holds a float32 copy of a whole
/// tensor. Pageable copies: load time only. Each call names its tensor (`what`, the engine name
/// of synthetic_weights.hpp); errors name it too.
class Uploader {
 public:
  /// From host tensors (the `src` of each call).
  explicit Uploader(kernels::ElemType wtype);
  /// From synthetic weights: each call's `src` is ignored (empty) and the tensor named `what`
  /// is generated. Throws EngineError at a call naming a tensor the table lacks.
  Uploader(kernels::ElemType wtype, std::map<std::string, SyntheticTensor> synthetic);
  kernels::ElemType wtype() const { return wtype_; }
  /// src [rows][cols] -> dst rows of `pitch` elements (zero padding up to ld). Throws EngineError naming `what` when src has the wrong number of values.
  void rows(const Weight& src, int rows, int cols, void* dst, int ld, int pitch, const char* what);
  /// float32 values (small per-channel tensors the kernels read in float32).
  void f32(const Weight& src, std::size_t n, float* dst, const char* what);
  /// Rows `row_order[i]` of src [src_rows][cols] to dst row i (a reordering at load, e.g. the
  /// Gated DeltaNet in_proj un-grouped from the checkpoint's per-key-head layout).
  void gather_rows(const Weight& src, int src_rows, int cols, const std::vector<int>& row_order, void* dst, int ld,
                   const char* what);
  /// Every tensor written so far, in call order.
  const std::vector<DeviceTensor>& written() const { return written_; }

 private:
  static constexpr std::size_t kStagingBytes = 64u << 20;
  const SyntheticTensor& synthetic(const char* what, std::size_t values) const;
  void record(const char* what, const void* dst, std::size_t rows, std::size_t row_bytes, std::size_t pitch_bytes);
  kernels::ElemType wtype_;
  bool synthetic_source_ = false;
  std::map<std::string, SyntheticTensor> synthetic_;
  DeviceBuffer staging_;
  DeviceBuffer row_ids_;
  std::vector<float> host_;
  std::vector<DeviceTensor> written_;
};

/// Digests of `tensors`' device bytes (a device-to-host copy each; load-time and test use).
std::vector<TensorDigest> digest_tensors(const std::vector<DeviceTensor>& tensors);

}  // namespace atlas::engine::cuda
