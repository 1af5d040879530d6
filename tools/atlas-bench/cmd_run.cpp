// atlas-bench run: runs suites on the in-process engine and writes one record to the store.
#include "common/build_paths.hpp"
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "engine/backend.hpp"
#include "engine/formats/load_for_backend.hpp"
#include "engine/model.hpp"
#include "records/store.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "suites/engine_target.hpp"
#include "suites/record_provenance.hpp"
#include "suites/registry.hpp"
#include "suites/report.hpp"
#include "runs/gate_suites.hpp"
#include "suites/runner.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

/// Each suite's metrics table, then the tables it attached (details "table" and "extra_tables").
void print_suite_tables(const records::Record& rec, const std::string& format) {
  const auto printer = suites::make_table_printer(format);
  for (const auto& [name, s] : rec.suites) {
    std::cout << "\n";
    printer->print(suites::metrics_table(s), std::cout);
    if (s.details.contains("table")) {
      std::cout << "\n";
      printer->print(suites::table_from_json(s.details["table"]), std::cout);
    }
    if (s.details.contains("extra_tables"))
      for (const auto& t : s.details["extra_tables"]) {
        std::cout << "\n";
        printer->print(suites::table_from_json(t), std::cout);
      }
  }
}

struct RunArgs {
  std::string suite;  ///< "" = all (or load when a load flag is given)
  std::string model;
  std::string tokenizer;
  std::string backend = "cpu";
  int threads = 0;
  std::string config = "pr";
  std::optional<int> warmup, repetitions;
  std::optional<std::uint64_t> seed;
  std::string out_dir = ".benchmarks";
  std::string format = "text";
  bool no_store = false;
  std::string endpoint;     ///< run against an OpenAI-compatible server instead of the engine
  std::string api_key_env;
  std::string served_model;
  int context_length = 0;   ///< endpoint: overrides what the server reports
  std::string server_kind;  ///< endpoint: vllm | sglang | llamacpp | trtllm | atlas-serve | openai
  // The load suite (suites/endpoint/load_suite.hpp), vLLM bench-serve style.
  std::string concurrency, rates, goodput;
  std::optional<double> burstiness, max_send_lag_ms;
  std::optional<int> num_prompts, input_len, output_len, max_concurrency, warmup_requests;
  double inject_decode_delay_us = 0;  ///< test hook (the gate's head side); records with it never become baselines
  bool backend_given = false, threads_given = false;  ///< on the command line (their defaults say nothing)
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t c = s.find(',', pos);
    std::string item = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!item.empty()) out.push_back(item);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

double parse_number(const std::string& flag, const std::string& item) {
  try {
    std::size_t used = 0;
    const double v = std::stod(item, &used);
    if (used == item.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw InputError(flag + ": '" + item + "' is not a number > 0");
}

/// The load flags as the "load" section of the suite config (flags win over the file).
void apply_load_flags(const RunArgs& a, suites::SuiteSetConfig& config) {
  nlohmann::json& sec = config.suites["load"];
  if (!sec.is_object()) sec = nlohmann::json::object();
  if (!a.concurrency.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& x : split_list(a.concurrency)) {
      const double v = parse_number("--concurrency", x);
      if (v != static_cast<int>(v)) throw InputError("--concurrency: '" + x + "' is not a whole number");
      list.push_back(static_cast<int>(v));
    }
    sec["concurrency"] = list;
    sec.erase("rates");
  }
  if (!a.rates.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& x : split_list(a.rates)) list.push_back(parse_number("--rate", x));
    sec["rates"] = list;
    if (a.concurrency.empty()) sec.erase("concurrency");
  }
  if (a.burstiness) sec["burstiness"] = *a.burstiness;
  if (a.max_send_lag_ms) sec["max_send_lag_ms"] = *a.max_send_lag_ms;
  if (a.num_prompts) sec["num_prompts"] = *a.num_prompts;
  if (a.input_len) sec["input_len"] = *a.input_len;
  if (a.output_len) sec["output_len"] = *a.output_len;
  if (a.max_concurrency) sec["max_concurrency"] = *a.max_concurrency;
  if (a.warmup_requests) sec["warmup_requests"] = *a.warmup_requests;
  if (!a.goodput.empty()) {
    nlohmann::json g = nlohmann::json::object();
    for (const auto& kv : split_list(a.goodput)) {
      const auto colon = kv.find(':');
      if (colon == std::string::npos) throw InputError("--goodput: '" + kv + "' is not KEY:MS (ttft_ms:500,tpot_ms:50)");
      g[kv.substr(0, colon)] = parse_number("--goodput", kv.substr(colon + 1));
    }
    sec["goodput"] = g;
  }
}

/// The load flags given on the command line, by name ("" when none).
std::string load_flags_given(const RunArgs& a) {
  std::string names;
  auto add = [&](bool given, const char* flag) {
    if (given) names += (names.empty() ? "" : ", ") + std::string(flag);
  };
  add(!a.concurrency.empty(), "--concurrency");
  add(!a.rates.empty(), "--rate");
  add(!a.goodput.empty(), "--goodput");
  add(a.burstiness.has_value(), "--burstiness");
  add(a.num_prompts.has_value(), "--num-prompts");
  add(a.input_len.has_value(), "--input-len");
  add(a.output_len.has_value(), "--output-len");
  add(a.max_send_lag_ms.has_value(), "--max-send-lag-ms");
  add(a.max_concurrency.has_value(), "--max-concurrency");
  add(a.warmup_requests.has_value(), "--warmup-requests");
  return names;
}

/// A finished run's exit status: a record marked invalid (a suite failed, a request failed, a
/// load level whose client fell behind its schedule) is a measurement that cannot be trusted,
/// inconclusive (2), not a usage error (3: README's exit-code table). The reason is printed and
/// is in the record (invalid_reason).
int run_exit_status(const records::Record& rec) {
  if (rec.valid) return to_int(ExitCode::pass);
  std::cerr << "atlas-bench run: the run is invalid (exit 2, inconclusive): " << rec.invalid_reason << "\n";
  return to_int(ExitCode::inconclusive);
}

/// `run --endpoint URL`: the suites drive a server over HTTP/SSE (docs/serving.md). --model
/// still names the model file, whose tokenizer builds the prompts and counts tokens locally.
int run_endpoint(const RunArgs& a, const engine::EngineOptions& eo, suites::SuiteSetRequest& req, const GlobalOptions& g) {
  engine::LoadOptions lo;
  lo.tokenizer_path = eo.tokenizer;
  // Only the tokenizer is used here: a preset comes back without weights (as for the CUDA
  // backend), so `preset:qwen3-next-e64` is not built as ~48 GB of host floats to count tokens.
  const engine::Model local = engine::load_model_for_backend(eo.model, lo, "cuda");
  suites::endpoint::EndpointOptions opts;
  opts.url = a.endpoint;
  opts.api_key_env = a.api_key_env;
  opts.served_model = a.served_model;
  opts.context_length = a.context_length;
  opts.server_kind = a.server_kind;
  opts.tokenizer = local.tokenizer;
  auto target = suites::endpoint::make_endpoint_target(opts);
  records::Record rec = suites::run_suite_set(*target, req);
  suites::fill_run_provenance(rec, ATLAS_SOURCE_DIR);
  rec.model.path = local.source.path.string();
  rec.model.format = local.source.format;
  rec.config["endpoint"] = target->provenance();
  rec.command_line = g.argv;
  rec.config["env"] = suites::atlas_environment();
  // The API key is never recorded, also when its variable is one of the ATLAS_* ones the
  // environment snapshot keeps.
  if (rec.config["env"].contains(a.api_key_env)) rec.config["env"][a.api_key_env] = "<redacted: --api-key-env>";
  print_suite_tables(rec, a.format);
  if (!a.no_store) std::cout << "\nrecord: " << records::write_to_store(rec, a.out_dir).string() << "\n";
  return run_exit_status(rec);
}

int run_command(const RunArgs& a, const GlobalOptions& g) {
  const std::string data_dir = resolve_data_dir(g);
  engine::EngineOptions eo;
  eo.model = runs::model_to_open(a.model, data_dir);
  eo.tokenizer = a.tokenizer;
  eo.backend.name = a.backend;
  eo.backend.threads = a.threads;
  eo.backend.inject_decode_delay_us = a.inject_decode_delay_us;
  eo.backend = engine::backend_options_from_env(eo.backend);

  suites::SuiteSetRequest req;
  // --concurrency/--rate and friends run the load suite unless --suite names others.
  const std::string load_flags = load_flags_given(a);
  req.suites = suites::expand_suite_names(a.suite.empty() ? (load_flags.empty() ? "all" : "load") : a.suite);
  req.config = suites::load_suite_set_config(a.config);
  const bool runs_load = std::find(req.suites.begin(), req.suites.end(), "load") != req.suites.end();
  // A load flag no suite of the run reads would be silently ignored: a usage error instead.
  if (!load_flags.empty() && !runs_load) {
    throw InputError("--suite " + a.suite + " does not run the load suite, so " + load_flags +
                     " would be ignored: add load to --suite (--suite " + a.suite + ",load) or leave --suite out");
  }
  // The same for the endpoint's options without --endpoint, and the engine's hook with it.
  std::string endpoint_flags;
  for (const auto& [given, flag] : {std::pair{!a.api_key_env.empty(), "--api-key-env"},
                                    std::pair{!a.served_model.empty(), "--served-model"},
                                    std::pair{a.context_length > 0, "--context-length"},
                                    std::pair{!a.server_kind.empty(), "--server-kind"}}) {
    if (given) endpoint_flags += (endpoint_flags.empty() ? "" : ", ") + std::string(flag);
  }
  if (!endpoint_flags.empty() && a.endpoint.empty()) {
    throw InputError(endpoint_flags + ": endpoint options, but no --endpoint URL: the suites run in process and would ignore them");
  }
  if (a.inject_decode_delay_us > 0 && !a.endpoint.empty()) {
    throw InputError("--inject-decode-delay-us delays the in-process engine; with --endpoint the server decodes and would ignore it");
  }
  // The in-process engine's options with --endpoint: the server runs the model.
  if (!a.endpoint.empty() && (a.backend_given || a.threads_given)) {
    throw InputError(std::string(a.backend_given && a.threads_given ? "--backend, --threads" : a.backend_given ? "--backend" : "--threads") +
                     ": options of the in-process engine; with --endpoint the server runs the model and they would be ignored");
  }
  // --warmup/--repetitions where no suite of the run repeats its measurements: load sends
  // --num-prompts requests per level once, bfcl scores each entry once, instructions counts one
  // run under callgrind (their config sections accept the keys, and ignore them).
  if (a.warmup || a.repetitions) {
    const bool repeats = std::any_of(req.suites.begin(), req.suites.end(), [](const std::string& s) {
      return s == "ttft" || s == "agentic" || s == "decode-anatomy";
    });
    if (!repeats) {
      std::string names;
      for (const auto& s : req.suites) names += (names.empty() ? "" : ",") + s;
      throw InputError(std::string(a.warmup && a.repetitions ? "--warmup, --repetitions" : a.warmup ? "--warmup" : "--repetitions") +
                       ": no suite of this run (" + names +
                       ") repeats its measurements, so they would be ignored (ttft, agentic and decode-anatomy read them; "
                       "the load suite sends --num-prompts requests per level once)");
    }
  }
  if (!a.concurrency.empty() && !a.rates.empty()) {
    throw InputError("--concurrency and --rate: give one; a load run is either a closed loop (--concurrency: requests in "
                     "flight) or an open loop (--rate: arrivals per second)");
  }
  // --max-concurrency caps an open loop; a closed loop's --concurrency is its cap already.
  if (a.max_concurrency && !a.concurrency.empty()) {
    throw InputError("--max-concurrency caps the requests in flight of an open loop (--rate); with --concurrency the "
                     "closed loop keeps exactly that many in flight, so it would be ignored");
  }
  if (!load_flags.empty()) apply_load_flags(a, req.config);
  // --burstiness shapes open-loop arrival gaps: a closed loop (concurrency) never uses it.
  if (a.burstiness && runs_load) {
    const nlohmann::json& sec = req.config.section("load");
    if (!sec.is_object() || !sec.contains("rates")) {
      throw InputError(std::string("--burstiness shapes the arrival gaps of an open loop (--rate); this load run is a closed loop (") +
                       (!a.concurrency.empty() ? "--concurrency" : req.config.source + ": suites.load.concurrency") +
                       "), which never uses it");
    }
  }
  // instructions counts the in-process engine's instructions under callgrind: a server's
  // cannot be counted from here.
  if (!a.endpoint.empty() && std::find(req.suites.begin(), req.suites.end(), "instructions") != req.suites.end()) {
    throw InputError("--suite instructions counts the in-process engine's instructions under callgrind; with --endpoint the "
                     "server runs the model, whose instructions it cannot count: leave instructions out or drop --endpoint");
  }
  if (runs_load && a.endpoint.empty()) {
    throw InputError("--suite load drives a server: give --endpoint URL");
  }
  req.overrides = {a.warmup, a.repetitions, a.seed};
  req.data_dir = data_dir;
  auto progress = suites::make_progress(std::cerr, STDERR_FILENO);
  req.progress = progress.get();
  // Usage errors before any work: a bad table format or suite config must not cost a run.
  (void)suites::make_table_printer(a.format);
  suites::check_suite_set(req);

  if (!a.endpoint.empty()) return run_endpoint(a, eo, req, g);
  suites::EngineTarget target(eo);
  records::Record rec = suites::run_suite_set(target, req);
  suites::fill_run_provenance(rec, ATLAS_SOURCE_DIR);
  rec.machine = runs::gate_machine(a.backend, "");  // a CUDA run names its GPU and a GPU machine class
  suites::fill_model_provenance(rec, target, data_dir);
  rec.command_line = g.argv;
  rec.config["env"] = suites::atlas_environment();

  print_suite_tables(rec, a.format);
  if (!a.no_store) {
    const auto path = records::write_to_store(rec, a.out_dir);
    std::cout << "\nrecord: " << path.string() << "\n";
  }
  return run_exit_status(rec);
}

const RegisterCommand kRun{{
    "run",
    "Run benchmark suites on the in-process engine and write a record",
    [](CLI::App& sub, const GlobalOptions& g) -> std::function<int()> {
      auto a = std::make_shared<RunArgs>();
      sub.add_option("--suite", a->suite,
                     "ttft | agentic | decode-anatomy | bfcl | load | instructions | all, or a comma list (default: "
                     "all = the first four; load when --concurrency/--rate is given)");
      sub.add_option("--model", a->model, "Model file (default <data-dir>/models/stories260K/stories260K.bin)");
      sub.add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer (tok*.bin), or a tokenizer.json for a safetensors model directory; for a GGUF file either one replaces its own (default: beside the model / in the file)");
      CLI::Option* backend =
          sub.add_option("--backend", a->backend, "cpu | cuda (in process only)")->capture_default_str()->check(CLI::IsMember({"cpu", "cuda"}));
      CLI::Option* threads = sub.add_option("--threads", a->threads, "CPU threads (0: all; env ATLAS_THREADS; in process only)");
      sub.add_option("--config", a->config, "pr | nightly | a suite-config JSON file")->capture_default_str();
      sub.add_option("--warmup", a->warmup, "Unmeasured repetitions per suite (overrides the config)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--repetitions", a->repetitions, "Measured repetitions per suite (overrides the config)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--seed", a->seed, "Seed of every synthetic input (overrides the config)");
      sub.add_option("--out-dir,--store", a->out_dir, "Record store directory (.benchmarks)")->capture_default_str();
      sub.add_option("--format", a->format, "Tables: text | markdown")->capture_default_str();
      sub.add_flag("--no-store", a->no_store, "Print results without writing a record");
      sub.add_option("--endpoint", a->endpoint,
                     "Drive an OpenAI-compatible server at this base URL (e.g. http://127.0.0.1:8000/v1) instead of "
                     "the in-process engine; --model gives the local tokenizer");
      sub.add_option("--api-key-env", a->api_key_env, "Environment variable holding the endpoint's API key");
      sub.add_option("--inject-decode-delay-us", a->inject_decode_delay_us,
                     "Test hook: sleep this many microseconds (fractions allowed) per decoded token")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--served-model", a->served_model, "Model name to request (default: the first /v1/models lists)");
      sub.add_option("--context-length", a->context_length,
                     "Endpoint context in tokens (default: max_model_len, llama.cpp meta.n_ctx or /props)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--server-kind", a->server_kind, "Endpoint family for its extensions (default: from /v1/models owned_by)")
          ->check(CLI::IsMember({"vllm", "sglang", "llamacpp", "trtllm", "atlas-serve", "openai"}));
      sub.add_option("--concurrency", a->concurrency, "Load suite: closed-loop levels, requests in flight (e.g. 1,2,4)");
      sub.add_option("--rate", a->rates, "Load suite: open-loop levels, requests per second (e.g. 2,8)");
      sub.add_option("--burstiness", a->burstiness, "Load suite: gamma shape of arrival gaps (1 = Poisson)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--num-prompts", a->num_prompts, "Load suite: requests per level")->check(CLI::PositiveNumber);
      sub.add_option("--input-len", a->input_len, "Load suite: prompt tokens per request")->check(CLI::PositiveNumber);
      sub.add_option("--output-len", a->output_len, "Load suite: output tokens per request (exactly: ignore_eos)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--goodput", a->goodput, "Load suite: SLOs for goodput, e.g. ttft_ms:500,tpot_ms:50");
      sub.add_option("--max-concurrency", a->max_concurrency,
                     "Load suite, with --rate: most requests in flight; an arrival beyond it waits for a slot (vLLM's --max-concurrency)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--warmup-requests", a->warmup_requests,
                     "Load suite: unmeasured requests per level before its measured ones, at the level's load (default 0)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--max-send-lag-ms", a->max_send_lag_ms,
                     "Load suite: a level whose p99 send lag exceeds this is invalid (default 10)")
          ->check(CLI::NonNegativeNumber);
      return [a, &g, backend, threads] {
        a->backend_given = backend->count() > 0;
        a->threads_given = threads->count() > 0;
        return run_command(*a, g);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
