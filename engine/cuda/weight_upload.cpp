#include "engine/cuda/weight_upload.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.hpp"
#include "kernels/elementwise.hpp"

namespace atlas::engine::cuda {

using kernels::DType;
using kernels::padded_ld;

Uploader::Uploader(DType t) : wtype_(t), staging_(kStagingBytes) {}

void Uploader::rows(const Weight& src, int rows, int cols, void* dst, int ld, int pitch, const char* what) {
  if (src.size() != static_cast<std::size_t>(rows) * cols)
    throw EngineError(std::string("cuda upload: tensor ") + what + " has " + std::to_string(src.size()) +
                      " values, expected " + std::to_string(static_cast<std::size_t>(rows) * cols));
  const std::size_t es = kernels::dtype_size(wtype_);
  if (src.dtype() == engine::DType::bf16 && wtype_ == DType::bf16) {
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
  const int chunk = std::max<int>(1, static_cast<int>(kStagingBytes / (sizeof(float) * std::max(cols, 1))));
  for (int r0 = 0; r0 < rows; r0 += chunk) {
    const int n = std::min(chunk, rows - r0);
    const std::size_t first = static_cast<std::size_t>(r0) * cols, count = static_cast<std::size_t>(n) * cols;
    const float* host = nullptr;
    if (src.is_f32()) {
      host = src.data() + first;
    } else {
      host_.resize(count);
      src.to_f32(first, count, host_.data());
      host = host_.data();
    }
    ATLAS_CUDA_CHECK(cudaMemcpy(staging_.get(), host, count * sizeof(float), cudaMemcpyHostToDevice));
    kernels::convert_rows(wtype_, staging_.as<float>(), n, cols,
                          static_cast<char*>(dst) + static_cast<std::size_t>(r0) * pitch * es, ld, pitch, nullptr);
  }
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
}

void Uploader::f32(const Weight& src, std::size_t n, float* dst, const char* what) {
  if (src.size() != n)
    throw EngineError(std::string("cuda upload: tensor ") + what + " has " + std::to_string(src.size()) +
                      " values, expected " + std::to_string(n));
  host_.resize(n);
  src.to_f32(0, n, host_.data());
  ATLAS_CUDA_CHECK(cudaMemcpy(dst, host_.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

void Uploader::gather_rows(const Weight& src, int src_rows, int cols, const std::vector<int>& row_order, void* dst,
                           int ld, const char* what) {
  if (src.size() != static_cast<std::size_t>(src_rows) * cols)
    throw EngineError(std::string("cuda upload: tensor ") + what + " has " + std::to_string(src.size()) +
                      " values, expected " + std::to_string(static_cast<std::size_t>(src_rows) * cols));
  // Widen to float32 on the host one row at a time into a staging matrix of the new order.
  const std::size_t es = kernels::dtype_size(wtype_);
  const int chunk = std::max<int>(1, static_cast<int>(kStagingBytes / (sizeof(float) * std::max(cols, 1))));
  std::vector<float> rowsbuf;
  const int n_rows = static_cast<int>(row_order.size());
  for (int r0 = 0; r0 < n_rows; r0 += chunk) {
    const int n = std::min(chunk, n_rows - r0);
    rowsbuf.resize(static_cast<std::size_t>(n) * cols);
    for (int i = 0; i < n; ++i) {
      const int r = row_order[static_cast<std::size_t>(r0 + i)];
      if (r < 0 || r >= src_rows) throw EngineError(std::string("cuda upload: row order of ") + what + " out of range");
      src.to_f32(static_cast<std::size_t>(r) * cols, static_cast<std::size_t>(cols), rowsbuf.data() + static_cast<std::size_t>(i) * cols);
    }
    ATLAS_CUDA_CHECK(cudaMemcpy(staging_.get(), rowsbuf.data(), rowsbuf.size() * sizeof(float), cudaMemcpyHostToDevice));
    kernels::convert_rows(wtype_, staging_.as<float>(), n, cols,
                          static_cast<char*>(dst) + static_cast<std::size_t>(r0) * ld * es, ld, ld, nullptr);
  }
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
}

void RandomFill::matrix(void* dst, int rows, int cols, int ld) {
  kernels::random_rows(wtype_, dst, rows, cols, ld, next(), std::sqrt(3.0f / cols), 0.0f, nullptr);
}

void RandomFill::gain(float* dst, int n) { kernels::random_rows(DType::f32, dst, 1, n, padded_ld(n), next(), 0.1f, 1.0f, nullptr); }

void RandomFill::f32(float* dst, int n, float scale, float offset) {
  kernels::random_rows(DType::f32, dst, 1, n, padded_ld(n), next(), scale, offset, nullptr);
}

}  // namespace atlas::engine::cuda
