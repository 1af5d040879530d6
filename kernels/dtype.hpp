#pragma once
// Element types the kernels are instantiated for. Weights, the KV cache and the activations
// that feed a matrix product use the "weight type"; accumulation is always float32.
#include <cstddef>

namespace atlas::kernels {

enum class DType { f32, bf16 };

inline std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }
inline const char* to_string(DType t) { return t == DType::f32 ? "f32" : "bf16"; }

/// Row stride (elements) for a row of `n` elements: a multiple of 8 so that every row of a
/// bf16 or f32 matrix starts on a 16-byte boundary and the GEMV can use 16-byte loads without
/// a tail. Padding elements are zero.
inline int padded_ld(int n) { return (n + 7) / 8 * 8; }

}  // namespace atlas::kernels
