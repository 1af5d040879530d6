#include "runs/suite_run.hpp"

#include <algorithm>
#include <utility>

#include "common/error.hpp"
#include "engine/backend.hpp"
#include "engine/formats/load_for_backend.hpp"
#include "engine/model.hpp"
#include "runs/gate_suites.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "suites/engine_target.hpp"
#include "suites/record_provenance.hpp"
#include "suites/registry.hpp"
#include "suites/suite_config.hpp"

namespace atlas::runs {
namespace {

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
void apply_load_flags(const SuiteRunOptions& a, suites::SuiteSetConfig& config) {
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

/// The flags whose `given` is true, by name, comma-separated ("" when none).
std::string given_names(std::initializer_list<std::pair<bool, const char*>> flags) {
  std::string names;
  for (const auto& [given, flag] : flags)
    if (given) names += (names.empty() ? "" : ", ") + std::string(flag);
  return names;
}

/// The load flags given on the command line, by name ("" when none).
std::string load_flags_given(const SuiteRunOptions& a) {
  return given_names({{!a.concurrency.empty(), "--concurrency"},
                      {!a.rates.empty(), "--rate"},
                      {!a.goodput.empty(), "--goodput"},
                      {a.burstiness.has_value(), "--burstiness"},
                      {a.num_prompts.has_value(), "--num-prompts"},
                      {a.input_len.has_value(), "--input-len"},
                      {a.output_len.has_value(), "--output-len"},
                      {a.max_send_lag_ms.has_value(), "--max-send-lag-ms"},
                      {a.max_concurrency.has_value(), "--max-concurrency"},
                      {a.warmup_requests.has_value(), "--warmup-requests"}});
}

bool runs_suite(const suites::SuiteSetRequest& req, const std::string& name) {
  return std::find(req.suites.begin(), req.suites.end(), name) != req.suites.end();
}

}  // namespace

engine::EngineOptions suite_run_engine_options(const SuiteRunOptions& a, const std::string& data_dir) {
  engine::EngineOptions eo;
  eo.model = model_to_open(a.model, data_dir);
  eo.tokenizer = a.tokenizer;
  eo.backend.name = a.backend;
  eo.backend.threads = a.threads;
  eo.backend.inject_decode_delay_us = a.inject_decode_delay_us;
  eo.backend = engine::backend_options_from_env(eo.backend);
  return eo;
}

suites::SuiteSetRequest plan_suite_run(const SuiteRunOptions& a, const std::string& data_dir) {
  suites::SuiteSetRequest req;
  // --concurrency/--rate and friends run the load suite unless --suite names others.
  const std::string load_flags = load_flags_given(a);
  req.suites = suites::expand_suite_names(a.suite.empty() ? (load_flags.empty() ? "all" : "load") : a.suite);
  req.config = suites::load_suite_set_config(a.config);
  const bool runs_load = runs_suite(req, "load");
  // A load flag no suite of the run reads would be silently ignored: a usage error instead.
  if (!load_flags.empty() && !runs_load) {
    throw InputError("--suite " + a.suite + " does not run the load suite, so " + load_flags +
                     " would be ignored: add load to --suite (--suite " + a.suite + ",load) or leave --suite out");
  }
  // The same for the endpoint's options without --endpoint, and the engine's hook with it.
  const std::string endpoint_flags = given_names({{!a.api_key_env.empty(), "--api-key-env"},
                                                  {!a.served_model.empty(), "--served-model"},
                                                  {a.context_length > 0, "--context-length"},
                                                  {!a.server_kind.empty(), "--server-kind"}});
  if (!endpoint_flags.empty() && a.endpoint.empty()) {
    throw InputError(endpoint_flags + ": endpoint options, but no --endpoint URL: the suites run in process and would ignore them");
  }
  if (a.inject_decode_delay_us > 0 && !a.endpoint.empty()) {
    throw InputError("--inject-decode-delay-us delays the in-process engine; with --endpoint the server decodes and would ignore it");
  }
  // The in-process engine's options with --endpoint: the server runs the model.
  if (!a.endpoint.empty() && (a.backend_given || a.threads_given)) {
    throw InputError(given_names({{a.backend_given, "--backend"}, {a.threads_given, "--threads"}}) +
                     ": options of the in-process engine; with --endpoint the server runs the model and they would be ignored");
  }
  // --warmup/--repetitions where no suite of the run repeats its measurements: load sends
  // --num-prompts requests per level once, bfcl scores each entry once, instructions counts one
  // run under callgrind (their config sections accept the keys, and ignore them).
  if (a.warmup || a.repetitions) {
    const bool repeats = runs_suite(req, "ttft") || runs_suite(req, "agentic") || runs_suite(req, "decode-anatomy");
    if (!repeats) {
      std::string names;
      for (const auto& s : req.suites) names += (names.empty() ? "" : ",") + s;
      throw InputError(given_names({{a.warmup.has_value(), "--warmup"}, {a.repetitions.has_value(), "--repetitions"}}) +
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
  if (!a.endpoint.empty() && runs_suite(req, "instructions")) {
    throw InputError("--suite instructions counts the in-process engine's instructions under callgrind; with --endpoint the "
                     "server runs the model, whose instructions it cannot count: leave instructions out or drop --endpoint");
  }
  if (runs_load && a.endpoint.empty()) {
    throw InputError("--suite load drives a server: give --endpoint URL");
  }
  req.overrides = {a.warmup, a.repetitions, a.seed};
  req.data_dir = data_dir;
  return req;
}

void stamp_run_record(records::Record& rec, const RunStamp& stamp) {
  suites::fill_run_provenance(rec, stamp.source_dir);
  rec.command_line = stamp.command_line;
  rec.config["env"] = suites::atlas_environment();
  // The API key is never recorded, also when its variable is one of the ATLAS_* ones the
  // environment snapshot keeps.
  if (!stamp.api_key_env.empty() && rec.config["env"].contains(stamp.api_key_env))
    rec.config["env"][stamp.api_key_env] = "<redacted: --api-key-env>";
}

records::Record run_suites_on_engine(const engine::EngineOptions& eo, const suites::SuiteSetRequest& request,
                                     const RunStamp& stamp) {
  suites::EngineTarget target(eo);
  records::Record rec = suites::run_suite_set(target, request);
  stamp_run_record(rec, stamp);
  rec.machine = gate_machine(eo.backend.name, "");  // a CUDA run names its GPU and a GPU machine class
  suites::fill_model_provenance(rec, target, request.data_dir);
  return rec;
}

records::Record run_suites_on_endpoint(const SuiteRunOptions& a, const engine::EngineOptions& eo,
                                       const suites::SuiteSetRequest& request, const RunStamp& stamp) {
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
  records::Record rec = suites::run_suite_set(*target, request);
  stamp_run_record(rec, stamp);
  rec.model.path = local.source.path.string();
  rec.model.format = local.source.format;
  rec.config["endpoint"] = target->provenance();
  return rec;
}

}  // namespace atlas::runs
