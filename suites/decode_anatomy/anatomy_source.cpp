#include "suites/decode_anatomy/anatomy_source.hpp"

#include <algorithm>

namespace atlas::suites {

namespace {
void add(std::optional<double>& to, const std::optional<double>& v) {
  if (to && v) *to += *v;
  else to.reset();
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

}  // namespace atlas::suites
