#pragma once
// The decode step's token choice on the device: greedy argmax and temperature sampling
// (Gumbel-max), one launch over the logits, parameters read from device memory.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace atlas::kernels {

/// *out = index of the largest of v[0..n) (the lowest index wins a tie; NaN never wins).
/// Many blocks scan slices; the last to finish (an atomic ticket) reduces their partials.
/// `scratch` holds argmax_scratch_bytes(), zeroed once before first use (the kernel leaves it so).
void argmax(const float* v, int n, int* out, void* scratch, cudaStream_t s);
std::size_t argmax_scratch_bytes();

/// Sampling parameters read from device memory at run time, so one captured graph serves any.
struct DeviceSampling {
  float temperature = 0.0f;      ///< T; 0 = greedy
  std::uint32_t reserved = 0;
  std::uint64_t seed = 0;        ///< one fresh value per draw (the host draws it from its sampler's RNG)
};

/// *out = a token drawn from softmax(v / T) by the Gumbel-max trick (Gumbel 1954; Maddison,
/// Tarlow & Minka 2014, "A* Sampling"): argmax_i v_i / T + g_i with g_i i.i.d. standard Gumbel
/// noise from a counter hash of (seed, i) (computed as v_i + T g_i: no overflow at tiny T), one
/// pass, no sort. params null or temperature 0:
/// the argmax of v (as argmax()). params is device memory; scratch as for argmax().
void sample_token(const float* v, int n, const DeviceSampling* params, int* out, void* scratch, cudaStream_t s);

}  // namespace atlas::kernels
