#include "engine/formats/dtype.hpp"

#include <bit>
#include <cstring>
#include <limits>

namespace atlas::engine {

static_assert(std::endian::native == std::endian::little, "model files are little-endian; a big-endian host needs byte swaps");

const char* to_string(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::q8_0: return "Q8_0";
  }
  return "?";
}

std::int64_t block_elements(DType t) { return t == DType::q8_0 ? 32 : 1; }

std::int64_t block_bytes(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::q8_0: return 34;
  }
  return 0;
}

std::optional<std::int64_t> storage_bytes(DType t, std::int64_t n) {
  if (n < 0 || n % block_elements(t) != 0) return std::nullopt;
  const std::int64_t blocks = n / block_elements(t);
  if (blocks > std::numeric_limits<std::int64_t>::max() / block_bytes(t)) return std::nullopt;
  return blocks * block_bytes(t);
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t mant = h & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise the mantissa
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (mant & 0x3FFu) << 13;
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t f32_to_f16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t exp = (x >> 23) & 0xFFu;
  std::uint32_t mant = x & 0x7FFFFFu;
  if (exp == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (mant ? 0x200u | (mant >> 13) : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1F) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (e <= 0) {
    if (e < -10) return sign;  // rounds to zero
    mant |= 0x800000u;         // implicit leading one
    const int shift = 14 - e;  // 13 + (1 - e)
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t h = static_cast<std::uint32_t>(e) << 10 | mant >> 13;
  const std::uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is correct
  return static_cast<std::uint16_t>(sign | h);
}

float bf16_to_f32(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

void dequantize(DType t, std::span<const std::byte> src, std::span<float> dst) {
  const std::byte* s = src.data();
  const std::size_t n = dst.size();
  switch (t) {
    case DType::f32:
      std::memcpy(dst.data(), s, n * sizeof(float));
      return;
    case DType::f16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, s + 2 * i, 2);
        dst[i] = f16_to_f32(h);
      }
      return;
    case DType::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, s + 2 * i, 2);
        dst[i] = bf16_to_f32(b);
      }
      return;
    case DType::q8_0:
      for (std::size_t blk = 0; blk < n / 32; ++blk) {
        const std::byte* p = s + 34 * blk;
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        const float d = f16_to_f32(h);
        for (int j = 0; j < 32; ++j) dst[blk * 32 + j] = d * static_cast<float>(static_cast<std::int8_t>(p[2 + j]));
      }
      return;
  }
}

}  // namespace atlas::engine
