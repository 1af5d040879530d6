#include "suites/runner.hpp"

#include "records/provenance.hpp"
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

namespace {
std::vector<SuiteOptions> checked_options(const SuiteSetRequest& request) {
  std::vector<SuiteOptions> options;
  for (const auto& name : request.suites) {
    const SuiteInfo& info = find_suite(name);
    options.push_back(suite_options(request.config, name, request.overrides, request.progress));
    options.back().data_dir = request.data_dir;
    if (info.check) info.check(options.back());
  }
  return options;
}

}  // namespace

void check_suite_set(const SuiteSetRequest& request) { (void)checked_options(request); }

records::Record run_suite_set(Target& target, const SuiteSetRequest& request) {
  // Resolve and check every suite's options first: a config error must stop the run before it
  // starts (no suite runs, no record).
  const std::vector<SuiteOptions> options = checked_options(request);
  records::Record rec;
  rec.start_utc = records::utc_now_iso();
  rec.run_id = records::new_run_id();
  rec.gate_or_suite = request.suites.size() == 1 ? request.suites.front() : request.config.name;
  rec.config["suite_config"] = request.config.name;
  rec.config["suite_config_file"] = request.config.source;
  rec.config["suites"] = request.suites;
  rec.config["target_name"] = target.name();
  for (std::size_t i = 0; i < request.suites.size(); ++i) {
    const std::string& name = request.suites[i];
    try {
      rec.suites[name] = run_suite(name, target, options[i]);
      // A suite that measured what it could but must not be trusted (e.g. bfcl entries that
      // failed) says why in details["invalid_reason"]: its data stays, the record is invalid.
      const auto& d = rec.suites[name].details;
      // The data files a suite read (bfcl's question and answer files) join the record's assets.
      if (d.contains("data_files") && d["data_files"].is_object()) {
        for (const auto& [file, sha] : d["data_files"].items())
          if (sha.is_string()) rec.data_assets[file] = sha.get<std::string>();
      }
      if (d.contains("invalid_reason") && d["invalid_reason"].is_string()) {
        rec.valid = false;
        rec.invalid_reason += (rec.invalid_reason.empty() ? "" : "; ") +
                              ("suite " + name + ": " + d["invalid_reason"].get<std::string>());
      }
    } catch (const atlas::Error& e) {
      rec.valid = false;
      rec.invalid_reason += (rec.invalid_reason.empty() ? "" : "; ") + ("suite " + name + ": " + e.what());
    }
  }
  // The target's provenance after the suites ran: it counts what happened (an endpoint's resets
  // asked, skipped or refused; its timestamps' sources), which a snapshot taken first would not.
  rec.config["target"] = target.provenance();
  if (target.name().rfind("endpoint:", 0) == 0) rec.endpoint = target.provenance();
  rec.end_utc = records::utc_now_iso();
  return rec;
}

}  // namespace atlas::suites
