#pragma once
// Storage types of weight tensors and their conversion to float32.
//
// A loader keeps F32 tensors and BF16 / F16 / Q8_0 matrices in place in the file mapping (typed
// engine::Weight, engine/model.hpp): the CPU matmul widens bf16 / f16 in registers and Q8_0 a
// block of rows at a time, and the CUDA upload widens a bounded chunk at a time, so loading a
// checkpoint costs no host memory beyond the mapped file. Vectors (norms, biases) are converted
// to float32 once, at load time, into a buffer the Model owns.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace atlas::engine {

enum class DType { f32, f16, bf16, q8_0 };

const char* to_string(DType t);

/// Elements per quantization block (1 for unquantized types; 32 for Q8_0).
std::int64_t block_elements(DType t);
/// Bytes per block: 4 (F32), 2 (F16, BF16), 34 (Q8_0: an F16 scale then 32 int8 values,
/// ggml's block_q8_0).
std::int64_t block_bytes(DType t);
/// Bytes that `n` elements occupy, or nullopt when n is not a whole number of blocks or the
/// size overflows int64.
std::optional<std::int64_t> storage_bytes(DType t, std::int64_t n);

/// IEEE 754 binary16 -> binary32 (exact; subnormals, inf and NaN preserved).
float f16_to_f32(std::uint16_t h);
/// binary32 -> binary16, round to nearest even; overflow gives inf, NaN stays NaN.
std::uint16_t f32_to_f16(float f);
/// bfloat16 (the top 16 bits of a binary32) -> binary32 (exact).
float bf16_to_f32(std::uint16_t b);
/// binary32 -> bfloat16, round to nearest even; NaN stays a quiet NaN.
std::uint16_t f32_to_bf16(float f);

/// Converts `dst.size()` elements stored as `t` in `src` (little-endian) to float32.
/// Q8_0: x = d * q for each block (d the block's F16 scale). Preconditions (checked by the
/// callers against the file): src.size() == storage_bytes(t, dst.size()).
void dequantize(DType t, std::span<const std::byte> src, std::span<float> dst);

}  // namespace atlas::engine
