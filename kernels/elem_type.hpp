#pragma once
// Element types the kernels are instantiated for (kernels::ElemType). Weights, the KV cache and
// the activations that feed a matrix product use the "weight type" (`wtype`); accumulation is
// always float32. Not to be confused with engine::DType (engine/formats/dtype.hpp), the storage
// type of a tensor in a model file (f32, f16, bf16, q8_0): the CUDA upload converts any of those
// to the ElemType the decoder runs in.
#include <cstddef>

namespace atlas::kernels {

enum class ElemType { f32, bf16 };

inline std::size_t elem_size(ElemType t) { return t == ElemType::f32 ? 4 : 2; }
inline const char* to_string(ElemType t) { return t == ElemType::f32 ? "f32" : "bf16"; }

/// Row stride (elements) for a row of `n` elements: a multiple of 8 so that every row of a
/// bf16 or f32 matrix starts on a 16-byte boundary and the GEMV can use 16-byte loads without
/// a tail. Padding elements are zero.
inline int padded_ld(int n) { return (n + 7) / 8 * 8; }

}  // namespace atlas::kernels
