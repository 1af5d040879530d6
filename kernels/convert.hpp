#pragma once
// Weight conversion on upload: float32 rows to the weight type, padded to the row stride.
#include <cuda_runtime_api.h>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

/// dst[r * pitch + c] (weight type) = src[r][c] (float32, row stride cols) for c < cols, zero for
/// cols <= c < ld. pitch >= ld (pitch > ld interleaves two matrices, e.g. gate and up rows).
void convert_rows(ElemType wtype, const float* src, int rows, int cols, void* dst, int ld, int pitch, cudaStream_t s);

}  // namespace atlas::kernels
