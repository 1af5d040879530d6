#pragma once
// The roofline's bandwidth: what a device-to-device copy reaches on this GPU, measured in the
// run that uses it (the decode anatomy's roofline line, atlas-cuda-bench's % of roofline).
#include <cstddef>

namespace atlas::suites {

/// Bytes read+written per second by a device-to-device copy of `bytes` (median of 10 after 2
/// warm-ups). Throws (kernels' CUDA error) when the two buffers cannot be allocated.
double measure_copy_bandwidth(std::size_t bytes = std::size_t{2} << 30);

}  // namespace atlas::suites
