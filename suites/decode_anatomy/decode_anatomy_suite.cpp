#include "suites/decode_anatomy/decode_anatomy_suite.hpp"

#include <cstdio>
#include <memory>

#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/decode_anatomy/anatomy_table.hpp"
#include "suites/error.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"

namespace atlas::suites {

using records::Better;
using records::MetricKind;

DecodeAnatomyConfig DecodeAnatomyConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "prompt_tokens", "decode_tokens"});
  DecodeAnatomyConfig c;
  c.prompt_tokens = s.get_int("prompt_tokens", c.prompt_tokens, 1);
  c.decode_tokens = s.get_int("decode_tokens", c.decode_tokens, 2);
  return c;
}

nlohmann::json DecodeAnatomyConfig::to_json() const {
  return {{"prompt_tokens", prompt_tokens}, {"decode_tokens", decode_tokens}};
}

std::uint32_t output_fingerprint(std::span<const int> ids) {
  std::uint32_t h = 2166136261u;
  for (int id : ids) {
    const auto v = static_cast<std::uint32_t>(id);
    for (int b = 0; b < 4; ++b) h = (h ^ ((v >> (8 * b)) & 0xffu)) * 16777619u;
  }
  return h;
}

namespace {

struct DecodeRun {
  std::vector<int> ids;
  double wall_ns = 0;  ///< request start to last token
  int cached = 0;
};

/// The generated ids: the target's, or, from an HTTP endpoint that streams text only, the text
/// encoded by the local tokenizer. Those are stable run to run but need not be the server's ids
/// (an SPM tokenizer adds its dummy-prefix space to the fragment); docs/metrics.md says so.
std::vector<int> generated_ids(const Target& target, const TargetResponse& r) {
  if (!r.output_ids.empty() || r.text.empty()) return r.output_ids;
  return target.tokenizer().encode(r.text, false);
}

// Prefill the prompt (its first token comes back), then decode N tokens as one-token steps.
DecodeRun decode_run(Target& target, const std::vector<int>& prompt, int n, AnatomySource* source,
                     AnatomyWindow* window) {
  target.reset_session();
  TargetRequest pre;
  pre.prompt_ids = prompt;
  pre.prompt_text = decode_ids(target.tokenizer(), prompt);
  pre.max_new_tokens = 1;
  pre.ignore_eos = true;
  pre.reuse_prefix = false;
  const TargetResponse first = generate_checked(target, pre, "decode-anatomy prefill");
  const std::vector<int> first_ids = generated_ids(target, first);
  if (first_ids.empty()) throw SuiteError(target.name() + ": decode-anatomy: the prefill request generated nothing");

  TargetRequest req = pre;
  req.prompt_ids.push_back(first_ids.front());
  req.prompt_text = decode_ids(target.tokenizer(), req.prompt_ids);
  req.max_new_tokens = n;
  req.reuse_prefix = true;
  if (source) source->begin();
  const TargetResponse resp = target.generate(req);
  if (source) *window = source->end();
  if (!resp.ok) throw SuiteError(target.name() + ": decode-anatomy decode: " + resp.error);
  if (static_cast<int>(resp.token_t_ns.size()) != n) {
    throw SuiteError(target.name() + ": decode-anatomy asked for " + std::to_string(n) + " tokens (ignore_eos), got " +
                     std::to_string(resp.token_t_ns.size()));
  }
  DecodeRun r;
  r.ids = generated_ids(target, resp);
  r.wall_ns = static_cast<double>(resp.token_t_ns.back() - resp.t_request_ns);
  r.cached = resp.cached_tokens;
  return r;
}

}  // namespace

records::SuiteResult run_decode_anatomy_suite(Target& target, const SuiteOptions& options) {
  const DecodeAnatomyConfig cfg = DecodeAnatomyConfig::from(options);
  if (cfg.prompt_tokens + 1 + cfg.decode_tokens > target.context_length()) {
    throw SuiteError(options.config_source + ": prompt_tokens + 1 + decode_tokens = " +
                     std::to_string(cfg.prompt_tokens + 1 + cfg.decode_tokens) + " exceeds the target's context of " +
                     std::to_string(target.context_length()));
  }
  records::SuiteResult r;
  r.name = "decode-anatomy";
  r.config = cfg.to_json();
  r.config["warmup"] = options.warmup;
  r.config["repetitions"] = options.repetitions;
  r.config["seed"] = options.seed;

  const std::vector<int> prompt = PromptBuilder(target.tokenizer()).prompt(cfg.prompt_tokens, options.seed);
  auto* provider = dynamic_cast<AnatomyProvider*>(&target);
  std::unique_ptr<AnatomySource> source = provider ? provider->make_anatomy_source() : nullptr;

  Progress& progress = options.progress_or_null();
  progress.begin("decode-anatomy", (options.warmup + options.repetitions) * (source ? 2 : 1));
  AnatomyWindow total;
  double instrumented_wall_ns = 0;
  int instrumented_tokens = 0;
  std::vector<int> reference_ids;
  nlohmann::json notes = nlohmann::json::array();
  for (int rep = 0; rep < options.warmup + options.repetitions; ++rep) {
    const bool measured = rep >= options.warmup;
    const std::string label = measured ? "rep " + std::to_string(rep - options.warmup + 1) : "warmup";
    const DecodeRun plain = decode_run(target, prompt, cfg.decode_tokens, nullptr, nullptr);
    progress.step("plain " + label);
    if (reference_ids.empty()) reference_ids = plain.ids;
    if (plain.ids != reference_ids) notes.push_back("repetition " + std::to_string(rep) + ": greedy output differs from the first run");
    if (plain.cached != cfg.prompt_tokens) {
      notes.push_back("decode request reused " + std::to_string(plain.cached) + " cached tokens, expected " +
                      std::to_string(cfg.prompt_tokens) + ": the first step was not a one-token forward");
    }
    if (measured) {
      const double us = plain.wall_ns / cfg.decode_tokens / 1e3;
      metric(r, "us_per_token", "us", Better::lower, MetricKind::timed,
             "decode wall time per generated token, counters off")
          .samples.push_back(us);
      metric(r, "decode_tok_s", "tok/s", Better::higher, MetricKind::timed, "decode tokens per second, counters off")
          .samples.push_back(1e6 / us);
      metric(r, "output_fingerprint", "fnv1a32", Better::lower, MetricKind::counted,
             "FNV-1a 32 hash of the greedy output ids (any change means the output changed)")
          .samples.push_back(static_cast<double>(output_fingerprint(plain.ids)));
    }
    if (!source) continue;
    AnatomyWindow w;
    const DecodeRun inst = decode_run(target, prompt, cfg.decode_tokens, source.get(), &w);
    progress.step("instrumented " + label);
    if (inst.ids != plain.ids) notes.push_back("repetition " + std::to_string(rep) + ": instrumented output differs from the plain run");
    if (!measured) continue;
    total.accumulate(w);
    instrumented_wall_ns += inst.wall_ns;
    instrumented_tokens += cfg.decode_tokens;
    for (const auto& s : w.stages) {
      const double n = cfg.decode_tokens;
      if (s.time_ns) {
        metric(r, "stage_us_per_token/" + s.stage, "us", Better::lower, MetricKind::timed,
               "stage time per generated token (" + source->time_basis() + ")")
            .samples.push_back(*s.time_ns / n / 1e3);
      }
      if (s.calls) {
        metric(r, "stage_calls_per_token/" + s.stage, "count", Better::lower, MetricKind::counted,
               "times the stage ran per generated token")
            .samples.push_back(*s.calls / n);
      }
      auto counted = [&](const char* what, const std::optional<double>& v, const char* desc) {
        if (v) metric(r, std::string(what) + "/" + s.stage, "count", Better::lower, MetricKind::counted, desc).samples.push_back(*v / n);
      };
      counted("launches_per_token", s.launches, "kernel launches per generated token");
      counted("graph_launches_per_token", s.graph_launches, "kernel launches replayed from a CUDA graph per token");
      counted("host_syncs_per_token", s.host_syncs, "host waits on the device per generated token");
      counted("copies_h2d_per_token", s.copies_h2d, "host-to-device copies per generated token");
      counted("copies_d2h_per_token", s.copies_d2h, "device-to-host copies per generated token");
    }
  }
  r.details["fingerprint_hex"] = [&] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", output_fingerprint(reference_ids));
    return std::string(buf);
  }();
  r.details["output_ids"] = reference_ids;
  r.details["notes"] = notes;
  if (source && instrumented_tokens > 0) {
    Table t = anatomy_table(total, instrumented_tokens, instrumented_wall_ns, source->name(), source->time_basis());
    r.details["source"] = source->name();
    r.details["instrumented_us_per_token"] = instrumented_wall_ns / instrumented_tokens / 1e3;
    r.details["table"] = table_to_json(t);
  } else {
    r.details["source"] = nullptr;
    AnatomyWindow none;
    const auto& m = r.metrics["us_per_token"].samples;
    double sum = 0;
    for (double v : m) sum += v;
    const double tokens = static_cast<double>(cfg.decode_tokens) * static_cast<double>(m.size());
    r.details["table"] = table_to_json(anatomy_table(none, tokens, sum * cfg.decode_tokens * 1e3, "wall clock only",
                                                  "request timestamps; this target exposes no stage counters"));
  }
  progress.end(cfg.decode_tokens == 0 ? "" : "fingerprint " + r.details["fingerprint_hex"].get<std::string>());
  return r;
}

}  // namespace atlas::suites
