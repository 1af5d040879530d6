#include "suites/metric_util.hpp"

#include <utility>

#include "suites/error.hpp"

namespace atlas::suites {

records::SuiteResult repeated_suite_result(std::string name, nlohmann::json config, const SuiteOptions& options) {
  records::SuiteResult r;
  r.name = std::move(name);
  r.config = std::move(config);
  r.config["warmup"] = options.warmup;
  r.config["repetitions"] = options.repetitions;
  r.config["seed"] = options.seed;
  return r;
}

records::Metric& metric(records::SuiteResult& r, const std::string& name, std::string_view unit, records::Better better,
                        records::MetricKind kind, std::string_view description) {
  auto [it, inserted] = r.metrics.try_emplace(name);
  if (inserted) {
    it->second.unit = unit;
    it->second.better = better;
    it->second.kind = kind;
    it->second.description = description;
  }
  return it->second;
}

void throw_if_failed(const Target& target, const TargetResponse& resp, std::string_view what) {
  if (!resp.ok) throw SuiteError(target.name() + ": " + std::string(what) + ": " + resp.error);
}

TargetResponse generate_checked(Target& target, const TargetRequest& req, std::string_view what) {
  TargetResponse resp = target.generate(req);
  throw_if_failed(target, resp, what);
  return resp;
}

}  // namespace atlas::suites
