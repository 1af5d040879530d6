#include "suites/decode_anatomy/cpu_anatomy_source.hpp"

#include <string>

namespace atlas::suites {

void CpuAnatomySource::begin() {
  timer_->reset();
  timer_->set_enabled(true);
}

AnatomyWindow CpuAnatomySource::end() {
  timer_->set_enabled(false);
  return window_from_stage_totals(timer_->totals());
}

AnatomyWindow window_from_stage_totals(const engine::StageTimer::Totals& totals) {
  AnatomyWindow w;
  for (int i = 0; i < engine::kStageCount; ++i) {
    // A stage this model's blocks never ran (a gdn_* stage of a dense model) is not reported.
    if (totals.calls[static_cast<std::size_t>(i)] == 0 && totals.ns[static_cast<std::size_t>(i)] == 0) continue;
    StageAnatomy s;
    s.stage = std::string(engine::to_string(static_cast<engine::Stage>(i)));
    s.calls = static_cast<double>(totals.calls[static_cast<std::size_t>(i)]);
    s.time_ns = static_cast<double>(totals.ns[static_cast<std::size_t>(i)]);
    w.stages.push_back(std::move(s));
  }
  return w;
}

}  // namespace atlas::suites
