#include "engine/cuda/weight_upload.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "engine/error.hpp"
#include "kernels/convert.hpp"
#include "kernels/synthetic_weights.hpp"

namespace atlas::engine::cuda {

using kernels::ElemType;

namespace {

void check_count(std::size_t have, std::size_t want, const char* what) {
  if (have != want)
    throw EngineError(std::string("cuda upload: tensor ") + what + " has " + std::to_string(have) + " values, expected " +
                      std::to_string(want));
}

/// Rows per chunk of the float32 staging buffer.
int chunk_rows(std::size_t staging_bytes, int cols) {
  return std::max<int>(1, static_cast<int>(staging_bytes / (sizeof(float) * static_cast<std::size_t>(std::max(cols, 1)))));
}

}  // namespace

Uploader::Uploader(ElemType t) : wtype_(t), staging_(kStagingBytes) {}

Uploader::Uploader(ElemType t, std::map<std::string, SyntheticTensor> synthetic)
    : wtype_(t), synthetic_source_(true), synthetic_(std::move(synthetic)), staging_(kStagingBytes) {}

const SyntheticTensor& Uploader::synthetic(const char* what, std::size_t values) const {
  const auto it = synthetic_.find(what);
  if (it == synthetic_.end())
    throw EngineError(std::string("cuda upload: synthetic weights have no tensor ") + what + " (" +
                      std::to_string(synthetic_.size()) + " tensors in the preset's table)");
  check_count(static_cast<std::size_t>(it->second.values), values, what);
  return it->second;
}

void Uploader::record(const char* what, const void* dst, std::size_t rows, std::size_t row_bytes, std::size_t pitch_bytes) {
  written_.push_back({what, dst, rows, row_bytes, pitch_bytes});
}

void Uploader::rows(const Weight& src, int rows, int cols, void* dst, int ld, int pitch, const char* what) {
  const std::size_t count = static_cast<std::size_t>(rows) * cols, es = kernels::elem_size(wtype_);
  record(what, dst, static_cast<std::size_t>(rows), static_cast<std::size_t>(ld) * es, static_cast<std::size_t>(pitch) * es);
  const SyntheticTensor* gen = synthetic_source_ ? &synthetic(what, count) : nullptr;
  if (gen != nullptr && gen->map != SyntheticTensor::Map::none)
    throw EngineError(std::string("cuda upload: tensor ") + what + " is a mapped (per-channel) tensor, uploaded as a matrix");
  if (gen == nullptr) check_count(src.size(), count, what);
  if (gen == nullptr && src.dtype() == engine::DType::bf16 && wtype_ == ElemType::bf16) {
    // The file's bf16 rows are the device's bf16 rows: one pitched copy straight from the
    // (mapped) file bytes, no float32 detour on the host or the device.
    ATLAS_CUDA_CHECK(cudaMemcpy2D(dst, static_cast<std::size_t>(pitch) * es, src.bytes().data(),
                                  static_cast<std::size_t>(cols) * es, static_cast<std::size_t>(cols) * es,
                                  static_cast<std::size_t>(rows), cudaMemcpyHostToDevice));
    // Columns [cols, ld) are zero, as convert_rows leaves them: the GEMV's 16-byte loads read them.
    if (ld > cols)
      ATLAS_CUDA_CHECK(cudaMemset2D(static_cast<char*>(dst) + static_cast<std::size_t>(cols) * es,
                                    static_cast<std::size_t>(pitch) * es, 0, static_cast<std::size_t>(ld - cols) * es,
                                    static_cast<std::size_t>(rows)));
    return;
  }
  const int chunk = chunk_rows(kStagingBytes, cols);
  for (int r0 = 0; r0 < rows; r0 += chunk) {
    const int n = std::min(chunk, rows - r0);
    const std::size_t first = static_cast<std::size_t>(r0) * cols, part = static_cast<std::size_t>(n) * cols;
    if (gen != nullptr) {
      kernels::synthetic_rows(staging_.as<float>(), n, cols, nullptr, r0, gen->stream, gen->scale, gen->offset, nullptr);
    } else {
      const float* host = nullptr;
      if (src.is_f32()) {
        host = src.data() + first;
      } else {
        host_.resize(part);
        src.to_f32(first, part, host_.data());
        host = host_.data();
      }
      ATLAS_CUDA_CHECK(cudaMemcpy(staging_.get(), host, part * sizeof(float), cudaMemcpyHostToDevice));
    }
    kernels::convert_rows(wtype_, staging_.as<float>(), n, cols,
                          static_cast<char*>(dst) + static_cast<std::size_t>(r0) * pitch * es, ld, pitch, nullptr);
  }
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
}

void Uploader::f32(const Weight& src, std::size_t n, float* dst, const char* what) {
  record(what, dst, 1, n * sizeof(float), n * sizeof(float));
  host_.resize(n);
  if (synthetic_source_) {
    // Per-channel tensors are drawn on the host with the function make-model uses: -exp and the
    // other maps then round exactly as they do there.
    synthetic_engine_values(synthetic(what, n), 0, static_cast<std::int64_t>(n), host_.data());
  } else {
    check_count(src.size(), n, what);
    src.to_f32(0, n, host_.data());
  }
  ATLAS_CUDA_CHECK(cudaMemcpy(dst, host_.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

void Uploader::gather_rows(const Weight& src, int src_rows, int cols, const std::vector<int>& row_order, void* dst,
                           int ld, const char* what) {
  const std::size_t es = kernels::elem_size(wtype_);
  const int n_rows = static_cast<int>(row_order.size());
  record(what, dst, static_cast<std::size_t>(n_rows), static_cast<std::size_t>(ld) * es, static_cast<std::size_t>(ld) * es);
  const std::size_t count = static_cast<std::size_t>(src_rows) * cols;
  const SyntheticTensor* gen = synthetic_source_ ? &synthetic(what, count) : nullptr;
  if (gen != nullptr && gen->map != SyntheticTensor::Map::none)
    throw EngineError(std::string("cuda upload: tensor ") + what + " is a mapped (per-channel) tensor, uploaded as a matrix");
  if (gen == nullptr) check_count(src.size(), count, what);
  for (int r : row_order)
    if (r < 0 || r >= src_rows) throw EngineError(std::string("cuda upload: row order of ") + what + " out of range");
  const int chunk = chunk_rows(kStagingBytes, cols);
  if (gen != nullptr && row_ids_.bytes() < sizeof(int) * static_cast<std::size_t>(std::min(chunk, n_rows)))
    row_ids_ = DeviceBuffer(sizeof(int) * static_cast<std::size_t>(std::min(chunk, n_rows)));
  std::vector<float> rowsbuf;
  for (int r0 = 0; r0 < n_rows; r0 += chunk) {
    const int n = std::min(chunk, n_rows - r0);
    if (gen != nullptr) {
      // The chosen source rows drawn straight into the staging matrix of the new order.
      ATLAS_CUDA_CHECK(cudaMemcpy(row_ids_.get(), row_order.data() + r0, sizeof(int) * static_cast<std::size_t>(n),
                                  cudaMemcpyHostToDevice));
      kernels::synthetic_rows(staging_.as<float>(), n, cols, row_ids_.as<int>(), 0, gen->stream, gen->scale, gen->offset,
                              nullptr);
    } else {
      // Widened to float32 on the host one row at a time into a staging matrix of the new order.
      rowsbuf.resize(static_cast<std::size_t>(n) * cols);
      for (int i = 0; i < n; ++i) {
        const int r = row_order[static_cast<std::size_t>(r0 + i)];
        src.to_f32(static_cast<std::size_t>(r) * cols, static_cast<std::size_t>(cols), rowsbuf.data() + static_cast<std::size_t>(i) * cols);
      }
      ATLAS_CUDA_CHECK(cudaMemcpy(staging_.get(), rowsbuf.data(), rowsbuf.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    kernels::convert_rows(wtype_, staging_.as<float>(), n, cols,
                          static_cast<char*>(dst) + static_cast<std::size_t>(r0) * ld * es, ld, ld, nullptr);
  }
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<TensorDigest> digest_tensors(const std::vector<DeviceTensor>& tensors) {
  std::vector<TensorDigest> out;
  std::vector<unsigned char> host;
  for (const DeviceTensor& t : tensors) {
    host.resize(t.rows * t.row_bytes);
    if (!host.empty())
      ATLAS_CUDA_CHECK(cudaMemcpy2D(host.data(), t.row_bytes, t.ptr, t.pitch_bytes, t.row_bytes, t.rows, cudaMemcpyDeviceToHost));
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
    for (unsigned char b : host) {
      h ^= b;
      h *= 0x100000001b3ull;
    }
    out.push_back({t.name, h, host.size()});
  }
  return out;
}

}  // namespace atlas::engine::cuda
