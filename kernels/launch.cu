#include "kernels/launch.hpp"

#include <atomic>

#include "common/env_flag.hpp"

namespace atlas::kernels {
namespace {
std::atomic<int> g_pdl{-1};
}

bool pdl_enabled() {
  int v = g_pdl.load(std::memory_order_relaxed);
  if (v < 0) {
    v = env_flag("ATLAS_NO_PDL") ? 0 : 1;
    g_pdl.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

void set_pdl_enabled(bool on) { g_pdl.store(on ? 1 : 0, std::memory_order_relaxed); }

}  // namespace atlas::kernels
