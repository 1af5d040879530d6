#ifdef ATLAS_HAVE_CUDA
#include "suites/decode_anatomy/cuda_copy_bandwidth.hpp"

#include <cuda_runtime_api.h>

#include <vector>

#include "kernels/check.hpp"
#include "records/stats.hpp"

namespace atlas::suites {

double measure_copy_bandwidth(std::size_t bytes) {
  void *a = nullptr, *b = nullptr;
  ATLAS_CUDA_CHECK(cudaMalloc(&a, bytes));
  if (cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    ATLAS_CUDA_CHECK(cudaGetLastError());
  }
  ATLAS_CUDA_CHECK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  ATLAS_CUDA_CHECK(cudaEventCreate(&e0));
  ATLAS_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<double> rates;
  for (int i = 0; i < 12; ++i) {
    ATLAS_CUDA_CHECK(cudaEventRecord(e0));
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    ATLAS_CUDA_CHECK(cudaEventRecord(e1));
    ATLAS_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    ATLAS_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 2) rates.push_back(2.0 * bytes / (ms * 1e-3));  // read + write
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  return records::stats::median(rates);
}

}  // namespace atlas::suites
#endif  // ATLAS_HAVE_CUDA
