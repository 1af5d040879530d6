// Without a CUDA build the GPU tests are not compiled; this case says so (Skipped, with the
// reason) instead of the folder passing with nothing checked.
#include <doctest/doctest.h>

#include "tests/skip.hpp"

#ifndef ATLAS_HAVE_CUDA
TEST_CASE("gpu tests") { ATLAS_SKIP("built without CUDA (ATLAS_CUDA=OFF or no nvcc)"); }
#endif
