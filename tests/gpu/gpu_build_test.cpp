// Without a CUDA build the GPU tests are not compiled; say so instead of passing silently.
#include <doctest/doctest.h>

#ifndef ATLAS_HAVE_CUDA
TEST_CASE("gpu tests") { MESSAGE("skipped: built without CUDA (ATLAS_CUDA=OFF or no nvcc)"); }
#endif
