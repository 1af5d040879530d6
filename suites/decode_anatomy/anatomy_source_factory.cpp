// Which anatomy source measures a backend: a registered factory by the backend's name, the CUDA
// module's CUPTI source for "cuda", else the CPU StageTimer source (anatomy_source.hpp). The
// window arithmetic the sources share is anatomy_source.cpp.
#include <map>
#include <mutex>

#include "engine/backend.hpp"
#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/decode_anatomy/cpu_anatomy_source.hpp"
#include "engine/backend_module.hpp"

namespace atlas::suites {

// suites/decode_anatomy/cupti_anatomy_source.hpp. Defined only in a binary that links the CUDA
// parts statically (GPU tests, atlas-cuda-bench), where the backend came from the same static
// copy; elsewhere null, and the CUDA module (which made the backend) provides the source.
[[gnu::weak]] std::unique_ptr<AnatomySource> make_cupti_anatomy_source(engine::Backend& backend);

namespace {
std::map<std::string, AnatomySourceFactory>& factories() {
  static std::map<std::string, AnatomySourceFactory> f;
  return f;
}
std::mutex& factories_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void register_anatomy_source(std::string backend_name, AnatomySourceFactory factory) {
  std::lock_guard lock(factories_mutex());
  factories()[std::move(backend_name)] = std::move(factory);
}

std::unique_ptr<AnatomySource> make_anatomy_source(engine::Backend& backend) {
  {
    std::lock_guard lock(factories_mutex());
    if (auto it = factories().find(std::string(backend.name())); it != factories().end()) return it->second(backend);
  }
  // The CUDA backend's own source (CUPTI). Only a CUDA backend asks for it: the module is
  // already open then (it made the backend), and a CPU run never opens it.
  if (backend.name() == "cuda") {
    using MakeFn = std::unique_ptr<AnatomySource> (*)(engine::Backend&);
    MakeFn make = &make_cupti_anatomy_source;
    if (make == nullptr) make = reinterpret_cast<MakeFn>(engine::cuda_module_symbol("atlas_make_cupti_anatomy_source"));
    if (auto cupti = make(backend)) return cupti;
  }
  return std::make_unique<CpuAnatomySource>(backend.stage_timer());
}

}  // namespace atlas::suites
