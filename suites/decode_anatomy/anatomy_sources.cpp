#include <map>
#include <mutex>

#include "engine/backend.hpp"
#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/decode_anatomy/cpu_anatomy_source.hpp"
#include "suites/decode_anatomy/cupti_anatomy_source.hpp"

namespace atlas::suites {

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
  // The CUDA backend's own source (CUPTI); null without CUDA or for other backends.
  if (auto cupti = make_cupti_anatomy_source(backend)) return cupti;
  return std::make_unique<CpuAnatomySource>(backend.stage_timer());
}

}  // namespace atlas::suites
