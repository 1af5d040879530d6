#pragma once
// `atlas-bench run` as a library: its options checked against each other and turned into the
// suite-set request, and the record it writes assembled, for the in-process engine and for an
// OpenAI-compatible endpoint alike. tools/atlas-bench/cmd_run.cpp only parses the flags into
// SuiteRunOptions, prints the tables and stores the record.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "records/record.hpp"
#include "suites/runner.hpp"

namespace atlas::runs {

/// The flags of `atlas-bench run` that choose what runs (how results are shown and stored stay
/// the command's).
struct SuiteRunOptions {
  std::string suite;  ///< "" = all (or load when a load flag is given)
  std::string model;
  std::string tokenizer;
  std::string backend = "cpu";
  int threads = 0;
  bool backend_given = false, threads_given = false;  ///< on the command line (their defaults say nothing)
  std::string config = "pr";
  std::optional<int> warmup, repetitions;
  std::optional<std::uint64_t> seed;
  std::string endpoint;  ///< run against an OpenAI-compatible server instead of the engine
  std::string api_key_env;
  std::string served_model;
  int context_length = 0;   ///< endpoint: overrides what the server reports
  std::string server_kind;  ///< endpoint: vllm | sglang | llamacpp | trtllm | atlas-serve | openai
  // The load suite (suites/endpoint/load_suite.hpp), vLLM bench-serve style.
  std::string concurrency, rates, goodput;
  std::optional<double> burstiness, max_send_lag_ms;
  std::optional<int> num_prompts, input_len, output_len, max_concurrency, warmup_requests;
  double inject_decode_delay_us = 0;  ///< test hook (the gate's head side); records with it never become baselines
};

/// The engine's options: the model (runs::model_to_open: throws naming a missing file), the
/// tokenizer, the backend with ATLAS_* environment overrides applied.
engine::EngineOptions suite_run_engine_options(const SuiteRunOptions& o, const std::string& data_dir);

/// The suites to run, their config with the load flags applied (flags win over the file), the
/// overrides and the data directory; progress is left to the caller. Throws atlas::InputError
/// naming the flags when one would be ignored (a load flag without the load suite, an endpoint
/// option without --endpoint, an engine option with it, --warmup/--repetitions where no suite
/// repeats, --burstiness on a closed loop: naming the config file and field that made it one),
/// when two contradict each other, or when a list item is not a number; SuiteError for a bad
/// suite config file.
suites::SuiteSetRequest plan_suite_run(const SuiteRunOptions& o, const std::string& data_dir);

/// How a run was made, beyond what run_suite_set fills in.
struct RunStamp {
  std::filesystem::path source_dir;      ///< the checkout whose git state is recorded
  std::vector<std::string> command_line; ///< as typed
  std::string api_key_env;               ///< the endpoint's key variable: its value is never recorded
};

/// The one record assembly of both targets: git, build and machine provenance
/// (suites::fill_run_provenance), the command line, and config.env (the ATLAS_* environment),
/// where the API key's variable, when it is one of those, reads "<redacted: --api-key-env>".
void stamp_run_record(records::Record& rec, const RunStamp& stamp);

/// Runs `request` on the in-process engine and assembles the record: stamp_run_record, the
/// machine as a gate sees it (a CUDA run names its GPU and a GPU machine class), the model's
/// provenance (suites::fill_model_provenance).
records::Record run_suites_on_engine(const engine::EngineOptions& eo, const suites::SuiteSetRequest& request,
                                     const RunStamp& stamp);

/// `run --endpoint URL`: the suites drive a server over HTTP/SSE (docs/serving.md); the model
/// file of `eo` gives only the tokenizer that builds the prompts and counts tokens locally.
/// The record: stamp_run_record, model.path and model.format of the local file, config.endpoint
/// (the target's provenance).
records::Record run_suites_on_endpoint(const SuiteRunOptions& o, const engine::EngineOptions& eo,
                                       const suites::SuiteSetRequest& request, const RunStamp& stamp);

}  // namespace atlas::runs
