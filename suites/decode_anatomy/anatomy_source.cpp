#include "suites/decode_anatomy/anatomy_source.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "engine/backend.hpp"
#include "suites/decode_anatomy/cpu_anatomy_source.hpp"

namespace atlas::suites {

namespace {
void add(std::optional<double>& to, const std::optional<double>& v) {
  if (to && v) *to += *v;
  else to.reset();
}
std::map<std::string, AnatomySourceFactory>& factories() {
  static std::map<std::string, AnatomySourceFactory> f;
  return f;
}
std::mutex& factories_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void AnatomyWindow::accumulate(const AnatomyWindow& other) {
  if (stages.empty()) {
    stages = other.stages;
    return;
  }
  for (const auto& o : other.stages) {
    auto it = std::find_if(stages.begin(), stages.end(), [&](const StageAnatomy& s) { return s.stage == o.stage; });
    if (it == stages.end()) {
      stages.push_back(o);
      continue;
    }
    add(it->calls, o.calls);
    add(it->launches, o.launches);
    add(it->graph_launches, o.graph_launches);
    add(it->host_syncs, o.host_syncs);
    add(it->copies_h2d, o.copies_h2d);
    add(it->copies_d2h, o.copies_d2h);
    add(it->time_ns, o.time_ns);
  }
}

void register_anatomy_source(std::string backend_name, AnatomySourceFactory factory) {
  std::lock_guard lock(factories_mutex());
  factories()[std::move(backend_name)] = std::move(factory);
}

std::unique_ptr<AnatomySource> make_anatomy_source(engine::Backend& backend) {
  {
    std::lock_guard lock(factories_mutex());
    if (auto it = factories().find(std::string(backend.name())); it != factories().end()) return it->second(backend);
  }
  return std::make_unique<CpuAnatomySource>(backend.stage_timer());
}

}  // namespace atlas::suites
