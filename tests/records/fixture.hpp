#pragma once
// A small, fully populated record for records-layer tests.
#include <string>
#include <vector>

#include "records/record.hpp"

namespace atlas::test {

inline records::Metric timed_metric(std::vector<double> samples, std::string unit = "ms",
                                    records::Better better = records::Better::lower) {
  records::Metric m;
  m.unit = std::move(unit);
  m.better = better;
  m.kind = records::MetricKind::timed;
  m.samples = std::move(samples);
  m.description = "time to first token";
  return m;
}

inline records::Metric counted_metric(std::vector<double> samples, records::Better better = records::Better::lower) {
  records::Metric m;
  m.unit = "count";
  m.better = better;
  m.kind = records::MetricKind::counted;
  m.samples = std::move(samples);
  m.description = "kernel launches per token";
  return m;
}

inline records::Record sample_record(const std::string& commit = "3f9a0c12b4de5f60718293a4b5c6d7e8f9012345",
                                     const std::string& start = "2026-11-29T14:33:20Z") {
  records::Record r;
  r.run_id = "20261129T143320Z-0123456789ab";
  r.start_utc = start;
  r.end_utc = "2026-11-29T14:35:01Z";
  r.gate_or_suite = "pr";
  r.git = {commit, "records", false, ""};
  r.build = {"GNU 12.2.0", "-O3 -DNDEBUG", "Release", ""};
  r.machine.cpu_model = "AMD EPYC 9654";
  r.machine.cores = 2;
  r.machine.memory_bytes = 8LL << 30;
  r.machine.machine_class = "cpu-2c-x86_64";
  r.machine.hostname = "ci-7";
  r.model = {"models/stories260K/stories260K.bin", "llama2c", "llama", 260032,
             "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696"};
  r.data_assets["models/stories260K/tok512.bin"] = "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312";
  r.config = {{"threads", 2}, {"ATLAS_KV_CACHE", "on"}};
  records::SuiteResult s;
  s.name = "ttft";
  s.config = {{"prompt_tokens", 128}, {"repetitions", 5}};
  s.details = {{"per_request", nlohmann::json::array({1, 2, 3})}};
  s.metrics["ttft_ms"] = timed_metric({10.5, 10.1, 10.9, 10.3, 10.7});
  s.metrics["launches_per_token"] = counted_metric({42, 42, 42});
  r.suites["ttft"] = s;
  return r;
}

}  // namespace atlas::test
