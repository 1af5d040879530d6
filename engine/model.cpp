#include "engine/model.hpp"

#include <string>

#include "engine/error.hpp"

namespace atlas::engine {

Weight Weight::stored(DType t, std::span<const std::byte> bytes, std::size_t n) {
  if (t != DType::f32 && t != DType::bf16 && t != DType::f16)
    throw EngineError(std::string("weight: storage ") + to_string(t) + " is not kept typed (f32, bf16 and f16 are)");
  if (bytes.size() != n * static_cast<std::size_t>(block_bytes(t)))
    throw EngineError("weight: " + std::to_string(bytes.size()) + " bytes for " + std::to_string(n) + " " + to_string(t) + " elements");
  Weight w;
  w.dtype_ = t;
  w.bytes_ = bytes;
  w.n_ = n;
  return w;
}

const float* Weight::data() const {
  if (dtype_ != DType::f32)
    throw EngineError(std::string("weight: a ") + to_string(dtype_) + " tensor read as float32 (use operator[], to_f32 or the typed matmul)");
  return reinterpret_cast<const float*>(bytes_.data());
}

float Weight::operator[](std::size_t i) const {
  float v;
  to_f32(i, 1, &v);
  return v;
}

Weight Weight::subspan(std::size_t off, std::size_t n) const {
  const std::size_t es = static_cast<std::size_t>(block_bytes(dtype_));
  Weight w = *this;
  w.bytes_ = bytes_.subspan(off * es, n * es);
  w.n_ = n;
  return w;
}

void Weight::to_f32(std::size_t off, std::size_t n, float* out) const {
  const std::size_t es = static_cast<std::size_t>(block_bytes(dtype_));
  dequantize(dtype_, bytes_.subspan(off * es, n * es), std::span<float>(out, n));
}

std::span<const float> Model::own(std::vector<float> values) {
  // A unique_ptr per buffer keeps every span valid when storage_ itself reallocates.
  storage_.push_back(std::make_unique<std::vector<float>>(std::move(values)));
  return {storage_.back()->data(), storage_.back()->size()};
}

}  // namespace atlas::engine
