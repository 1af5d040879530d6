// F16 / BF16 / Q8_0 conversion against hand-computed values.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/formats/dtype.hpp"
#include "engine/formats/gguf_writer.hpp"

using namespace atlas::engine;

TEST_CASE("F16 to F32 hand values") {
  CHECK(f16_to_f32(0x3C00) == 1.0f);
  CHECK(f16_to_f32(0xC000) == -2.0f);
  CHECK(f16_to_f32(0x3555) == 0.333251953125f);
  CHECK(f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(f16_to_f32(0x0400) == std::ldexp(1.0f, -14));  // smallest normal
  CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(f16_to_f32(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(std::signbit(f16_to_f32(0x8000)));
  CHECK(f16_to_f32(0x7C00) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f16_to_f32(0x7E00)));
}

TEST_CASE("F32 to F16 rounds to nearest even") {
  for (std::uint32_t h = 0; h < 0x7C00; ++h) REQUIRE(f32_to_f16(f16_to_f32(static_cast<std::uint16_t>(h))) == h);  // exact round trip
  CHECK(f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // halfway: to even (down)
  CHECK(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // halfway: to even (up)
  CHECK(f32_to_f16(65520.0f) == 0x7C00);                          // overflow -> inf
  CHECK(f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);             // halfway below the smallest subnormal: to even (0)
  CHECK(f32_to_f16(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(f32_to_f16(-2.0f) == 0xC000);
}

TEST_CASE("BF16 hand values") {
  CHECK(bf16_to_f32(0x3F80) == 1.0f);
  CHECK(bf16_to_f32(0xC040) == -3.0f);
  CHECK(bf16_to_f32(0x3E80) == 0.25f);
  CHECK(f32_to_bf16(1.0f) == 0x3F80);
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3F808000u)) == 0x3F80);  // halfway: to even
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3F818000u)) == 0x3F82);
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3F808001u)) == 0x3F81);
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("Q8_0 dequantization: d * q per 32-value block") {
  std::byte blk[68] = {};
  const std::uint16_t d0 = 0x3800;  // 0.5
  const std::uint16_t d1 = 0xBC00;  // -1
  std::memcpy(blk, &d0, 2);
  std::memcpy(blk + 34, &d1, 2);
  for (int j = 0; j < 32; ++j) {
    blk[2 + j] = static_cast<std::byte>(static_cast<std::int8_t>(j - 16));
    blk[36 + j] = static_cast<std::byte>(static_cast<std::int8_t>(j == 0 ? -128 : 127));
  }
  float out[64];
  dequantize(DType::q8_0, blk, out);
  CHECK(out[0] == -8.0f);
  CHECK(out[16] == 0.0f);
  CHECK(out[31] == 7.5f);
  CHECK(out[32] == 128.0f);
  CHECK(out[33] == -127.0f);
  CHECK(storage_bytes(DType::q8_0, 64) == 68);
  CHECK_FALSE(storage_bytes(DType::q8_0, 33).has_value());

  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 10) * 0.1f;  // amax 2.1
  std::byte q[34];
  quantize_q8_0_block(x, q);
  float y[32];
  dequantize(DType::q8_0, q, y);
  const float d = f16_to_f32(f32_to_f16(2.1f / 127.0f));
  for (int j = 0; j < 32; ++j) CHECK(std::fabs(y[j] - x[j]) <= d * 0.6f);  // rounding of q, plus 127 x the F16 rounding of d
  CHECK(y[31] == d * 127.0f);
}

TEST_CASE("F16 and BF16 arrays dequantize element by element") {
  const std::uint16_t h[3] = {0x3C00, 0xC000, 0x3555};
  float out[3];
  dequantize(DType::f16, std::as_bytes(std::span(h)), out);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -2.0f);
  CHECK(out[2] == 0.333251953125f);
  const std::uint16_t b[2] = {0x3F80, 0xC040};
  dequantize(DType::bf16, std::as_bytes(std::span(b)), std::span(out, 2));
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -3.0f);
}
