#include "suites/runner.hpp"

#include <ctime>
#include <random>

#include "suites/error.hpp"
#include "suites/registry.hpp"

namespace atlas::suites {

SuiteOptions suite_options(const SuiteSetConfig& config, std::string_view suite, const RunOverrides& overrides,
                           Progress* progress) {
  SuiteOptions o;
  o.config = config.section(suite);
  o.config_source = config.source + ": suites." + std::string(suite);
  ConfigSection s(o.config, o.config_source);
  o.warmup = overrides.warmup.value_or(s.get_int("warmup", 1, 0));
  o.repetitions = overrides.repetitions.value_or(s.get_int("repetitions", 3, 1));
  o.seed = overrides.seed.value_or(config.seed);
  if (o.warmup < 0) throw SuiteError("--warmup must be >= 0, got " + std::to_string(o.warmup));
  if (o.repetitions < 1) throw SuiteError("--repetitions must be >= 1, got " + std::to_string(o.repetitions));
  o.progress = progress;
  return o;
}

records::SuiteResult run_suite(std::string_view name, Target& target, const SuiteOptions& options) {
  records::SuiteResult r = find_suite(name).run(target, options);
  r.name = std::string(name);
  return r;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

records::Record run_suite_set(Target& target, const SuiteSetRequest& request) {
  // Resolve every suite's options first: a config error must stop the run before it starts.
  std::vector<SuiteOptions> options;
  for (const auto& name : request.suites) {
    find_suite(name);
    options.push_back(suite_options(request.config, name, request.overrides, request.progress));
  }
  records::Record rec;
  rec.start_utc = utc_now_iso8601();
  {
    std::random_device rd;
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", rd());
    std::string compact;
    for (char c : rec.start_utc) {
      if (c != '-' && c != ':') compact += c;
    }
    rec.run_id = compact + "-" + hex;
  }
  rec.gate_or_suite = request.suites.size() == 1 ? request.suites.front() : request.config.name;
  rec.config["suite_config"] = request.config.name;
  rec.config["suite_config_file"] = request.config.source;
  rec.config["suites"] = request.suites;
  rec.config["target"] = target.provenance();
  rec.config["target_name"] = target.name();
  if (target.name().rfind("endpoint:", 0) == 0) rec.endpoint = target.provenance();
  for (std::size_t i = 0; i < request.suites.size(); ++i) {
    const std::string& name = request.suites[i];
    try {
      rec.suites[name] = run_suite(name, target, options[i]);
    } catch (const atlas::Error& e) {
      rec.valid = false;
      rec.invalid_reason += (rec.invalid_reason.empty() ? "" : "; ") + ("suite " + name + ": " + e.what());
    }
  }
  rec.end_utc = utc_now_iso8601();
  return rec;
}

}  // namespace atlas::suites
