#include "gates/monitor_guard.hpp"

namespace atlas::gates {

std::optional<std::string> drop_reason(const MonitorWindow& w) {
  if (!w.throttled()) return std::nullopt;
  std::string names;
  for (const auto& n : w.slowdown_reasons_seen) names += (names.empty() ? "" : ",") + n;
  return "clocks held down (" + names + ") in " + std::to_string(w.slowdown_samples) + " of " +
         std::to_string(w.samples) + " monitor samples";
}

void MonitorAttemptGuard::begin(int) { monitor_.start(); }

std::optional<std::string> MonitorAttemptGuard::end(int attempt) {
  const MonitorWindow w = monitor_.stop();
  auto j = to_json(w);
  j["attempt"] = attempt;
  windows_.push_back(std::move(j));
  return drop_reason(w);
}

}  // namespace atlas::gates
