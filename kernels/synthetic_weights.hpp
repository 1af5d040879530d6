#pragma once
// Synthetic weights (engine/formats/synthetic_weights.hpp) generated on the device.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace atlas::kernels {

/// out[i][c] (float32, row stride cols), 0 <= i < rows, 0 <= c < cols: value (row * cols + c) of
/// a synthetic tensor (engine/formats/synthetic_weights.hpp: offset + scale * u from
/// splitmix64(stream + k), bit for bit what the host draws), row = row_ids ? row_ids[i] (device
/// memory) : first_row + i. Weights of a preset generated where they live, with no host copy.
void synthetic_rows(float* out, int rows, int cols, const int* row_ids, std::int64_t first_row, std::uint64_t stream,
                    float scale, float offset, cudaStream_t s);

}  // namespace atlas::kernels
