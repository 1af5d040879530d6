#pragma once
// Running suites and collecting them into a record: the API the `run`, `ab` and `gate` commands
// call.
//
//   auto config = load_suite_set_config("pr");              // or "nightly", or a file
//   SuiteSetRequest req{.suites = expand_suite_names("all"), .config = config};
//   records::Record rec = run_suite_set(target, req);      // suites, timing, target provenance
//   // the caller adds git/build/machine/model provenance and writes it (records store)
//
// run_suite_set never throws for a failing suite: the suite's error goes into
// record.invalid_reason (record.valid = false) and the other suites still run, so no measured
// data is lost. A suite that completes but reports details["invalid_reason"] (a string) keeps
// its result and makes the record invalid too. Configuration errors (unknown suite, bad config field) do throw SuiteError
// before anything runs.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/record.hpp"
#include "suites/suite_config.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

/// Command-line values that win over the config file's.
struct RunOverrides {
  std::optional<int> warmup;
  std::optional<int> repetitions;
  std::optional<std::uint64_t> seed;
};

/// The options suite `suite` runs with under `config` and `overrides` (defaults: warmup 1,
/// repetitions 3). Throws SuiteError for warmup < 0 or repetitions < 1.
SuiteOptions suite_options(const SuiteSetConfig& config, std::string_view suite, const RunOverrides& overrides,
                           Progress* progress = nullptr);

/// Runs one suite by name (find_suite) and returns its result; errors propagate.
records::SuiteResult run_suite(std::string_view name, Target& target, const SuiteOptions& options);

struct SuiteSetRequest {
  std::vector<std::string> suites;  ///< names as expand_suite_names returns them
  SuiteSetConfig config;
  RunOverrides overrides;
  Progress* progress = nullptr;     ///< null: silent
  std::filesystem::path data_dir;   ///< passed to suites that read data (bfcl)
};

/// Checks every suite's config section (unknown fields, types, ranges, the files it names)
/// without running anything; throws SuiteError naming the file and field. run_suite_set does
/// this first too; callers that build an expensive target call it before.
void check_suite_set(const SuiteSetRequest& request);

/// Runs the suites in order on `target`. Fills: suites, start_utc/end_utc, gate_or_suite (the
/// suite's name for one suite, else the config's name), config {suite_config, suite_config_file,
/// suites, target}, endpoint (the target's provenance when it is an endpoint), run_id
/// (records::new_run_id), valid/invalid_reason.
records::Record run_suite_set(Target& target, const SuiteSetRequest& request);

}  // namespace atlas::suites
