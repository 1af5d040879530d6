#pragma once
// The CPU anatomy source: per-stage host wall time and entry counts from the engine's
// StageTimer. Launches, graph capture, host syncs and copies do not exist or are not observed on
// this path: they are reported unknown (n/a).
#include "engine/stage.hpp"
#include "suites/decode_anatomy/anatomy_source.hpp"

namespace atlas::suites {

class CpuAnatomySource final : public AnatomySource {
 public:
  explicit CpuAnatomySource(engine::StageTimer& timer) : timer_(&timer) {}
  std::string name() const override { return "cpu-stage-timer"; }
  std::string time_basis() const override { return "host wall clock (StageTimer)"; }
  void begin() override;
  AnatomyWindow end() override;

 private:
  engine::StageTimer* timer_;
};

/// The window a StageTimer's totals describe (time and calls known, all else unknown).
AnatomyWindow window_from_stage_totals(const engine::StageTimer::Totals& totals);

}  // namespace atlas::suites
