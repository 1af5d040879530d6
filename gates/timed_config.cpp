#include "gates/timed_config.hpp"

#include <algorithm>
#include <set>

#include "records/paired_judgement.hpp"

namespace atlas::gates {

TimedJudgementConfig parse_timed_config(const FieldReader& r, const nlohmann::json& j, const std::string& p) {
  if (!j.is_object()) r.fail(p, "expected an object", j);
  const std::set<std::string> known = {"suite_config", "suites",     "metrics",    "threads",
                                       "looks",        "max_rounds", "time_cap_s", "confidence",
                                       "power",        "max_wait_share", "max_wait_gap", "max_disturbed_share"};
  for (const auto& [key, value] : j.items()) {
    if (key == "min_rounds")
      r.fail(FieldReader::child(p, key),
             "replaced by \"looks\" (the rounds at which the data are judged; the first is the minimum), docs/gates.md",
             value);
    if (!known.count(key)) r.fail(FieldReader::child(p, key), "unknown field", value);
  }
  TimedJudgementConfig c;
  c.enabled = true;
  c.suite_config = r.optional_string(j, p, "suite_config").value_or(c.suite_config);
  const auto& suites = r.array(j, p, "suites");
  if (suites.empty()) r.fail(FieldReader::child(p, "suites"), "must name at least one suite", suites);
  for (std::size_t i = 0; i < suites.size(); ++i) {
    if (!suites[i].is_string() || suites[i].get<std::string>().empty())
      r.fail(FieldReader::index(FieldReader::child(p, "suites"), i), "expected a suite name", suites[i]);
    c.suites.push_back(suites[i].get<std::string>());
  }
  const auto& metrics = r.object(j, p, "metrics");
  if (metrics.empty()) r.fail(FieldReader::child(p, "metrics"), "must name at least one metric", metrics);
  const std::string mp = FieldReader::child(p, "metrics");
  for (const auto& [key, value] : metrics.items()) {
    const auto slash = key.find('/');
    if (slash == std::string::npos || std::find(c.suites.begin(), c.suites.end(), key.substr(0, slash)) == c.suites.end())
      r.fail(FieldReader::child(mp, key), "expected \"<suite>/<metric>\" of one of the section's suites", key);
    const double tol = r.number(metrics, mp, key);
    if (!(tol > 0 && tol < 1)) r.fail(FieldReader::child(mp, key), "relative tolerance must be in (0, 1)", value);
    c.metrics.push_back({key, tol});
  }
  if (j.contains("threads")) c.threads = static_cast<int>(r.integer(j, p, "threads"));
  if (c.threads < 1) r.fail(FieldReader::child(p, "threads"), "must be >= 1", c.threads);
  c.paired.confidence = r.optional_number(j, p, "confidence").value_or(c.paired.confidence);
  if (!(c.paired.confidence > 0 && c.paired.confidence < 1))
    r.fail(FieldReader::child(p, "confidence"), "must be in (0, 1)", c.paired.confidence);
  c.paired.power = r.optional_number(j, p, "power").value_or(c.paired.power);
  if (!(c.paired.power > 0 && c.paired.power < 1)) r.fail(FieldReader::child(p, "power"), "must be in (0, 1)", c.paired.power);
  if (j.contains("looks")) {
    const auto& looks = r.array(j, p, "looks");
    c.looks.clear();
    for (std::size_t i = 0; i < looks.size(); ++i) {
      if (!looks[i].is_number_integer() || looks[i].get<long long>() < 1)
        r.fail(FieldReader::index(FieldReader::child(p, "looks"), i), "expected a number of rounds >= 1", looks[i]);
      c.looks.push_back(looks[i].get<int>());
    }
  }
  if (const std::string why = records::check_looks(c.looks, c.paired.confidence); !why.empty())
    r.fail(FieldReader::child(p, "looks"), why, j.contains("looks") ? j["looks"] : nlohmann::json(c.looks));
  c.min_rounds = c.looks.front();
  c.max_rounds = c.looks.back();
  if (j.contains("max_rounds")) c.max_rounds = static_cast<int>(r.integer(j, p, "max_rounds"));
  if (c.max_rounds < c.looks.back())
    r.fail(FieldReader::child(p, "max_rounds"), "must be >= the last look (" + std::to_string(c.looks.back()) + ")",
           c.max_rounds);
  c.time_cap_s = r.optional_number(j, p, "time_cap_s").value_or(c.time_cap_s);
  if (!(c.time_cap_s > 0)) r.fail(FieldReader::child(p, "time_cap_s"), "must be > 0", c.time_cap_s);
  c.max_wait_share = r.optional_number(j, p, "max_wait_share").value_or(c.max_wait_share);
  if (!(c.max_wait_share > 0 && c.max_wait_share < 1))
    r.fail(FieldReader::child(p, "max_wait_share"), "must be in (0, 1)", c.max_wait_share);
  c.max_wait_gap = r.optional_number(j, p, "max_wait_gap").value_or(c.max_wait_gap);
  if (!(c.max_wait_gap > 0 && c.max_wait_gap < 1)) r.fail(FieldReader::child(p, "max_wait_gap"), "must be in (0, 1)", c.max_wait_gap);
  c.max_disturbed_share = r.optional_number(j, p, "max_disturbed_share").value_or(c.max_disturbed_share);
  if (!(c.max_disturbed_share >= 0 && c.max_disturbed_share < 1))
    r.fail(FieldReader::child(p, "max_disturbed_share"), "must be in [0, 1)", c.max_disturbed_share);
  return c;
}

nlohmann::json to_json(const TimedJudgementConfig& c) {
  if (!c.enabled) return nullptr;
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& m : c.metrics) metrics[m.key] = m.tolerance;
  return {{"suite_config", c.suite_config}, {"suites", c.suites},
          {"metrics", metrics},             {"threads", c.threads},
          {"looks", c.looks},               {"max_rounds", c.max_rounds},
          {"time_cap_s", c.time_cap_s},     {"confidence", c.paired.confidence},
          {"power", c.paired.power},        {"max_wait_share", c.max_wait_share},
          {"max_wait_gap", c.max_wait_gap}, {"max_disturbed_share", c.max_disturbed_share}};
}

InterleavedSettings interleaved_settings(const TimedJudgementConfig& c) {
  InterleavedSettings s;
  s.metrics = c.metrics;
  s.paired = c.paired;
  s.max_wait_share = c.max_wait_share;
  s.max_wait_gap = c.max_wait_gap;
  s.max_disturbed_share = c.max_disturbed_share;
  return s;
}

records::GroupSequential stopping_rule(const TimedJudgementConfig& c) {
  return records::GroupSequential(records::Question::regression, c.looks, c.max_rounds, c.time_cap_s, c.paired.confidence);
}

}  // namespace atlas::gates
