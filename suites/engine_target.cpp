#include "suites/engine_target.hpp"

#include <algorithm>

#include "engine/error.hpp"
#include "suites/error.hpp"
#include "suites/prompt_builder.hpp"
#include "suites/run_queue_wait.hpp"

namespace atlas::suites {

EngineTarget::EngineTarget(const engine::EngineOptions& options)
    : EngineTarget(engine::Engine::open(options), options) {}

EngineTarget::EngineTarget(engine::Engine engine, const engine::EngineOptions& options)
    : engine_(std::move(engine)), options_(options), tokenizer_(&engine_.tokenizer()) {}

std::string EngineTarget::name() const { return "engine:" + options_.backend.name; }

int EngineTarget::context_length() const { return const_cast<engine::Engine&>(engine_).backend().max_seq_len(); }

TargetResponse EngineTarget::generate(const TargetRequest& req) {
  engine::GenerateRequest g;
  g.prompt_ids = req.prompt_ids;
  g.max_new_tokens = req.max_new_tokens;
  g.sampling = req.sampling;
  if (!req.ignore_eos) g.stop_ids = tokenizer_->stop_ids();
  g.reuse_prefix = req.reuse_prefix;
  g.logprobs = req.top_logprobs >= 0;
  g.top_logprobs = std::max(req.top_logprobs, 0);
  TargetResponse out;
  try {
    // The run-queue wait of this thread (the forward runs in it) across the request, read at
    // its start, its first token and its end: what a neighbour's CPU use added to TTFT and to
    // the decode (one small /proc read each).
    const auto wait0 = thread_run_queue_wait_ns();
    std::optional<std::int64_t> wait_first;
    const engine::GenerateResult r = engine_.session().generate(g, [&](const engine::TokenEvent& ev) {
      if (ev.index == 0 && wait0) wait_first = thread_run_queue_wait_ns();
    });
    const auto wait_end = wait0 ? thread_run_queue_wait_ns() : std::nullopt;
    if (wait0 && wait_first) out.run_queue_wait_first_ns = *wait_first - *wait0;
    if (wait0 && wait_end) out.run_queue_wait_ns = *wait_end - *wait0;
    out.output_ids = r.output_ids;
    out.text = decode_ids(*tokenizer_, r.output_ids);
    out.prompt_tokens = static_cast<int>(req.prompt_ids.size());
    out.completion_tokens = static_cast<int>(r.output_ids.size());
    out.cached_tokens = r.prefix_reused;
    out.prefilled_tokens = r.prefilled;
    out.t_request_ns = r.t_start_ns;
    out.t_first_byte_ns = r.token_t_ns.empty() ? r.t_end_ns : r.token_t_ns.front();
    out.token_t_ns = r.token_t_ns;
    out.t_end_ns = r.t_end_ns;
    out.token_count_source = "engine";
    out.finish_reason = r.stop == engine::StopReason::stop_token ? "stop" : "length";
    int prev = req.prompt_ids.empty() ? -1 : req.prompt_ids.back();
    for (std::size_t i = 0; i < r.logprobs.size(); ++i) {
      auto entry = [&](const engine::TokenLogprob& t) {
        return ReportedLogprob{tokenizer_->token_bytes(prev, t.id), static_cast<double>(t.logprob), t.id};
      };
      ReportedTokenLogprobs t{entry(r.logprobs[i].chosen), {}};
      for (const auto& a : r.logprobs[i].top) t.top.push_back(entry(a));
      out.logprobs.push_back(std::move(t));
      prev = r.output_ids[i];
    }
  } catch (const engine::EngineError& e) {
    out.ok = false;
    out.error = e.what();
  }
  return out;
}

void EngineTarget::reset_session() { engine_.session().reset(); }

nlohmann::json engine_options_json(const engine::EngineOptions& o) {
  return {{"model", o.model},
          {"tokenizer", o.tokenizer.string()},
          {"max_seq_len", o.max_seq_len},
          {"backend",
           {{"name", o.backend.name},
            {"max_seq_len", o.backend.max_seq_len},
            {"threads", o.backend.threads},
            {"fp32", o.backend.fp32},
            {"decode_graphs", o.backend.decode_graphs},
            {"inject_decode_delay_us", o.backend.inject_decode_delay_us},
            {"inject_decode_work", o.backend.inject_decode_work}}}};
}

nlohmann::json EngineTarget::provenance() const {
  auto& e = const_cast<engine::Engine&>(engine_);
  const auto& cfg = e.model().config;
  nlohmann::json vetoes = nlohmann::json::array();
  for (const auto& v : e.backend().decode_graph_vetoes()) vetoes.push_back({{"layer", v.layer}, {"reason", v.reason}});
  return {{"kind", "engine"},
          {"backend", std::string(e.backend().name())},
          {"options", engine_options_json(options_)},
          {"context_length", e.backend().max_seq_len()},
          {"model",
           {{"name", cfg.name},
            {"path", e.model().source.path.string()},
            {"format", e.model().source.format},
            {"architecture", engine::to_string(cfg.arch)},
            {"parameter_count", cfg.parameter_count()},
            {"vocab_size", cfg.vocab_size}}},
          {"decode_graph_vetoes", vetoes}};
}

std::unique_ptr<AnatomySource> EngineTarget::make_anatomy_source() {
  return suites::make_anatomy_source(engine_.backend());
}

namespace {
int parse_int(const std::string& key, const std::string& value, int min_value) {
  try {
    std::size_t used = 0;
    const long v = std::stol(value, &used);
    if (used == value.size() && v >= min_value && v <= 1'000'000'000) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  throw SuiteError("engine option " + key + "=" + value + ": expected an integer >= " + std::to_string(min_value));
}
double parse_nonnegative(const std::string& key, const std::string& value) {
  try {
    std::size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size() && v >= 0 && v <= 1e9) return v;
  } catch (const std::exception&) {
  }
  throw SuiteError("engine option " + key + "=" + value + ": expected a number >= 0");
}
bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "1" || value == "true" || value == "on") return true;
  if (value == "0" || value == "false" || value == "off") return false;
  throw SuiteError("engine option " + key + "=" + value + ": expected 0/1/true/false");
}
}  // namespace

void apply_engine_option(engine::EngineOptions& o, const std::string& key, const std::string& value) {
  if (key == "backend") {
    if (value != "cpu" && value != "cuda") throw SuiteError("engine option backend=" + value + ": expected cpu or cuda");
    o.backend.name = value;
  } else if (key == "threads") {
    o.backend.threads = parse_int(key, value, 0);
  } else if (key == "max_seq_len") {
    o.max_seq_len = parse_int(key, value, 0);
  } else if (key == "decode_graphs") {
    o.backend.decode_graphs = parse_bool(key, value);
  } else if (key == "fp32") {
    o.backend.fp32 = parse_bool(key, value);
  } else if (key == "inject_decode_delay_us") {
    o.backend.inject_decode_delay_us = parse_nonnegative(key, value);
  } else if (key == "inject_decode_work") {
    o.backend.inject_decode_work = parse_int(key, value, 0);
  } else if (key == "model") {
    o.model = value;
  } else {
    throw SuiteError("unknown engine option '" + key + "' (known: backend, threads, max_seq_len, decode_graphs, fp32, "
                     "inject_decode_delay_us, inject_decode_work, model)");
  }
}

void apply_engine_options(engine::EngineOptions& o, const std::map<std::string, std::string>& kv) {
  for (const auto& [k, v] : kv) apply_engine_option(o, k, v);
}

}  // namespace atlas::suites
