#include "engine/model.hpp"

#include <algorithm>
#include <string>

#include "engine/error.hpp"

namespace atlas::engine {

Weight Weight::stored(DType t, std::span<const std::byte> bytes, std::size_t n) {
  const auto need = storage_bytes(t, static_cast<std::int64_t>(n));
  if (!need || bytes.size() != static_cast<std::size_t>(*need))
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
  const std::size_t be = static_cast<std::size_t>(block_elements(dtype_)), bb = static_cast<std::size_t>(block_bytes(dtype_));
  if (off % be != 0 || n % be != 0 || off + n > n_)
    throw EngineError("weight: elements [" + std::to_string(off) + ", " + std::to_string(off + n) + ") of a " + to_string(dtype_) + " tensor of " +
                      std::to_string(n_) + " (a view must cover whole blocks of " + std::to_string(be) + ")");
  Weight w = *this;
  w.bytes_ = bytes_.subspan(off / be * bb, n / be * bb);
  w.n_ = n;
  return w;
}

void Weight::to_f32(std::size_t off, std::size_t n, float* out) const {
  const std::size_t be = static_cast<std::size_t>(block_elements(dtype_)), bb = static_cast<std::size_t>(block_bytes(dtype_));
  // Whole blocks straight into out; a partial first / last block (Q8_0 only) through a block buffer.
  while (n > 0) {
    const std::size_t blk = off / be, in_blk = off % be;
    if (in_blk == 0 && n >= be) {
      const std::size_t whole = n / be * be;
      dequantize(dtype_, bytes_.subspan(blk * bb, whole / be * bb), std::span<float>(out, whole));
      off += whole, out += whole, n -= whole;
      continue;
    }
    float tmp[64];
    dequantize(dtype_, bytes_.subspan(blk * bb, bb), std::span<float>(tmp, be));
    const std::size_t take = std::min(n, be - in_blk);
    std::copy(tmp + in_blk, tmp + in_blk + take, out);
    off += take, out += take, n -= take;
  }
}

std::size_t Weight::row_bytes(std::size_t cols) const {
  return cols / static_cast<std::size_t>(block_elements(dtype_)) * static_cast<std::size_t>(block_bytes(dtype_));
}

std::span<const float> Model::own(std::vector<float> values) {
  // A unique_ptr per buffer keeps every span valid when storage_ itself reallocates.
  storage_.push_back(std::make_unique<std::vector<float>>(std::move(values)));
  return {storage_.back()->data(), storage_.back()->size()};
}

}  // namespace atlas::engine
