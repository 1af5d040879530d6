#pragma once
// The BFCL suite: function-calling accuracy of a Target, scored exactly as BFCL's AST checker
// (suites/bfcl/checker.hpp), plus decode speed and time per entry.
//
// Metrics (records::Metric):
//   accuracy.<category>, accuracy.overall   accuracy, higher, "fraction": one 0/1 sample per
//                                            scored entry (overall: every scored entry)
//   decode_tokens_per_s                      timed, higher, "tok/s": per entry with >= 2 tokens,
//                                            (tokens - 1) / (last token time - first token time)
//   time_per_entry_ms                        timed, lower, "ms": request start to last token
// Every entry is scored from BFCL's own request, never salted, and timed as a cold request
// (suites/cold_request.hpp, ColdRequests::send_scored): the target is reset first; where the
// reset emptied its cache (in process; a server whose reset route answered; llama.cpp, sent
// cache_prompt false) that scored request is the cold sample. Elsewhere (or when the answer came
// back with cached_tokens above a shared BOS) a second, salted request of the same entry is sent
// and timed, its output not scored: a unique head (after BOS in the ids; at the head of the
// system message in chat), checked against cached_tokens, re-issued and counted when cached
// (details cold_timed_separately, cold_salted_requests, cold_reissued; per row "timed" and
// "timing_request"). A salted chat timing request the server refuses as over its context is
// re-sent as salted ids (details cold_timing_sent_as_ids); any other failed timing request fails
// the entry. Verdicts are the same with and without salting.
//   entries_skipped                          counted, lower: prompts that did not fit the context
//                                            (overflow "skip") - not scored
//   entries_truncated                        counted, lower: prompts cut to fit (overflow
//                                            "truncate": the head is dropped, BOS kept) - scored
//   entries_failed                           counted, lower: requests the target failed - not scored;
//                                            any makes the run invalid (details["invalid_reason"])
//   entries_sent_as_ids                      counted, lower: prompt-mode entries an endpoint refused
//                                            as over its context in its chat rendering, re-sent as
//                                            the local rendering's ids - scored
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/metric.hpp"
#include "suites/bfcl/dataset.hpp"
#include "suites/bfcl/decode.hpp"
#include "suites/progress.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites::bfcl {

/// How requests are built.
enum class BfclMode {
  prompt,     ///< BFCL prompt mode: system prompt with the function docs; the output is decoded
              ///< as "[func(param=value)]". Sets prompt_ids, prompt_text and messages.
  native_fc,  ///< native function calling: the question's messages plus TargetRequest.tools;
              ///< TargetResponse.tool_calls is scored in the "fc" format.
};

struct BfclSuiteConfig {
  std::string name = "bfcl";
  std::vector<std::string> categories;  ///< empty: every category present in the data
  int per_category = 0;                 ///< entries per category (0: all), evenly spaced in id order
  int max_new_tokens = 128;
  BfclMode mode = BfclMode::prompt;
  bool underscore_to_dot = false;       ///< native_fc: tool names with '.' -> '_', and the checker expects that
  bool truncate_overflow = true;        ///< prompt too long: drop its head (true) or skip the entry (false)
  int max_entry_details = 64;           ///< per-entry rows kept in details (outputs truncated to 300 bytes)
};

/// Reads a config object: {"name", "categories", "per_category", "max_new_tokens",
/// "mode": "prompt"|"native_fc", "underscore_to_dot", "overflow": "truncate"|"skip",
/// "max_entry_details"}. Unknown keys and bad values throw BfclError naming `where` and the field.
BfclSuiteConfig bfcl_config_from_json(const nlohmann::json& j, const std::string& where);
/// Loads a config file (suites/config/bfcl-*.json).
BfclSuiteConfig load_bfcl_config(const std::filesystem::path& path);
nlohmann::json to_json(const BfclSuiteConfig& cfg);

/// The entries the config selects from `ds`, in category order then id order.
std::vector<const BfclEntry*> select_entries(const BfclDataset& ds, const BfclSuiteConfig& cfg);

/// Runs the suite against `target` over `<data_dir>/bfcl`. Generation is greedy. `progress`
/// (optional) gets one step per entry.
records::SuiteResult run_bfcl_suite(Target& target, const BfclSuiteConfig& cfg, const std::filesystem::path& data_dir,
                                    Progress* progress = nullptr);

/// The same over an already loaded dataset.
records::SuiteResult run_bfcl_suite(Target& target, const BfclSuiteConfig& cfg, const BfclDataset& ds,
                                    Progress* progress = nullptr);

/// The data directory when neither the config nor --data-dir names one: atlas::resolve_data_dir
/// (common/data_dir.hpp).
std::filesystem::path default_bfcl_data_dir();

/// The suite registry's entry point (suites/registry.cpp): `options.config` is the "bfcl"
/// section of a suite-set config (suites/config/pr.json). It may name a BFCL config file
/// ("config": "bfcl-pr" -> suites/config/bfcl-pr.json) whose fields the section's other keys
/// override, and "data_dir". Warmup and repetitions do not apply: each selected entry is run
/// once (greedy decoding makes the verdicts deterministic; each entry is one timing sample).
/// The suite's config (its section merged over the file its "config" field names, checked) and
/// data directory (the section's data_dir, else --data-dir, else the default lookup).
struct BfclSuiteSetup {
  BfclSuiteConfig config;
  std::filesystem::path data_dir;
};
BfclSuiteSetup bfcl_suite_setup(const SuiteOptions& options);
records::SuiteResult run_bfcl_suite(Target& target, const SuiteOptions& options);

}  // namespace atlas::suites::bfcl
