#include "gates/accept.hpp"

#include <utility>

#include "gates/error.hpp"

namespace atlas::gates {

void check_accept_request(const AcceptRequest& request) {
  if (request.metrics.empty() && request.suites.empty()) throw GateError("accept: give --metric (one or more) or --suite");
  if (request.reason.empty()) throw GateError("accept: --reason is required");
  if (request.remove && !request.suites.empty())
    throw GateError("accept --remove: name the metrics with --metric (--suite is not taken)");
}

std::vector<std::string> accept_keys(const AcceptRequest& request, const records::Record& record) {
  std::vector<std::string> keys = request.metrics;
  for (const auto& suite : request.suites) {
    const auto it = record.suites.find(suite);
    if (it == record.suites.end() || it->second.metrics.empty()) {
      throw GateError("accept --suite " + suite + ": the record (run " + record.run_id + ") has no metrics of that suite");
    }
    for (const auto& [name, m] : it->second.metrics)
      if (!m.samples.empty()) keys.push_back(metric_key(suite, name));
  }
  return keys;
}

std::vector<std::string> accept_all(Baseline& b, const AcceptRequest& request, const records::Record& record,
                                    const GateConfig& cfg, const ChangeStamp& stamp) {
  const std::vector<std::string> keys = accept_keys(request, record);
  // Every metric is applied to a copy first, so an error on the fifth leaves `b` as it was.
  Baseline moved = b;
  for (const auto& key : keys) accept(moved, key, record, request.reason, cfg, stamp);
  b = std::move(moved);
  return keys;
}

void remove_all(Baseline& b, const AcceptRequest& request, const ChangeStamp& stamp) {
  Baseline moved = b;
  for (const auto& key : request.metrics) remove_metric(moved, key, request.reason, stamp);
  b = std::move(moved);
}

}  // namespace atlas::gates
