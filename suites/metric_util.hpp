#pragma once
// Small helpers suites use to fill a records::SuiteResult.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "records/metric.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

/// A repeated suite's result, begun: its name and the config its record keeps, the suite's own
/// fields and then the run's warmup, repetitions and seed, so the record says how it was measured
/// (ttft, agentic and decode-anatomy all write these three the same way).
records::SuiteResult repeated_suite_result(std::string name, nlohmann::json config, const SuiteOptions& options);

/// The metric `name` of `r`, created with the given meta data on first use (later calls return
/// the same metric; its meta data is not changed).
records::Metric& metric(records::SuiteResult& r, const std::string& name, std::string_view unit, records::Better better,
                        records::MetricKind kind, std::string_view description);

/// Throws SuiteError("<target>: <what>: <error>") when `resp` failed.
void throw_if_failed(const Target& target, const TargetResponse& resp, std::string_view what);

/// Target::generate, turning a failed response into SuiteError("<target>: <what>: <error>").
TargetResponse generate_checked(Target& target, const TargetRequest& req, std::string_view what);

}  // namespace atlas::suites
