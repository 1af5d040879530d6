#pragma once
// The quiet-box monitor as an AttemptGuard for run_gate: each attempt is one monitor window; an
// attempt during which a configured slowdown reason (thermal/power) was active is dropped with
// the reason, and every window goes into the record's quiet_box.during.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gates/gate_run.hpp"
#include "gates/quiet_box.hpp"

namespace atlas::gates {

class MonitorAttemptGuard final : public AttemptGuard {
 public:
  explicit MonitorAttemptGuard(const QuietBoxThresholds& t) : monitor_(t) {}
  void begin(int attempt) override;
  std::optional<std::string> end(int attempt) override;
  /// [{attempt, ...MonitorWindow}] for every attempt so far.
  nlohmann::json report() const override { return windows_; }

 private:
  QuietBoxMonitor monitor_;
  nlohmann::json windows_ = nlohmann::json::array();
};

/// The drop reason for a window, or nullopt when no slowdown sample was seen.
std::optional<std::string> drop_reason(const MonitorWindow& w);

}  // namespace atlas::gates
