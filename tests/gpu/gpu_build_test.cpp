// Without a CUDA build the GPU tests are not compiled; say so instead of passing silently.
#include <doctest/doctest.h>

#include <cstdio>

#ifndef ATLAS_HAVE_CUDA
TEST_CASE("gpu tests") {
  std::fprintf(stderr, "atlas_tests_gpu: skipped: built without CUDA (ATLAS_CUDA=OFF or no nvcc)\n");
  MESSAGE("skipped: built without CUDA (ATLAS_CUDA=OFF or no nvcc)");
}
#endif
