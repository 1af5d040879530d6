#include "suites/ab/parity.hpp"

#include <cstdio>
#include <optional>

#include "engine/routing_fingerprint.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"
#include "suites/suite_options.hpp"

namespace atlas::suites {

nlohmann::json ParityReport::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : mismatches) {
    list.push_back({{"prompt_index", m.prompt_index}, {"prompt_ids", m.prompt_ids}, {"prompt_text", m.prompt_text},
                    {"first_divergence", m.position}, {"a_ids", m.a_ids}, {"b_ids", m.b_ids},
                    {"a_text", m.a_text}, {"b_text", m.b_text}});
  }
  nlohmann::json routing = {{"routed_prompts", routed_prompts}, {"mismatch_count", routing_mismatches.size()}};
  if (routed_prompts > 0) {
    routing["a"] = hex64(routing_a);
    routing["b"] = hex64(routing_b);
    nlohmann::json rl = nlohmann::json::array();
    for (const auto& m : routing_mismatches) rl.push_back({{"prompt_index", m.prompt_index}, {"a", hex64(m.a)}, {"b", hex64(m.b)}});
    routing["mismatches"] = rl;
  } else {
    routing["not_compared"] = routing_not_compared;
  }
  return {{"prompts", prompts}, {"mismatch_count", mismatches.size()}, {"mismatches", list}, {"routing", routing}};
}

std::vector<std::vector<int>> parity_prompts(const engine::Tokenizer& tok, const ParityConfig& cfg) {
  const PromptBuilder builder(tok);
  std::vector<std::vector<int>> out;
  const int span = std::max(1, cfg.max_length - cfg.min_length + 1);
  for (int i = 0; i < cfg.prompts; ++i) {
    const std::uint64_t s = mix_seed(cfg.seed, static_cast<std::uint64_t>(i));
    const int len = cfg.min_length + static_cast<int>(SplitMix64(s).below(static_cast<std::uint64_t>(span)));
    out.push_back(builder.prompt(len, mix_seed(s, 1)));
  }
  return out;
}

int first_divergence(const std::vector<int>& a, const std::vector<int>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<int>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<int>(n);
}

std::string hex64(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

namespace {
std::vector<int> ids_of(Target& t, const TargetResponse& r) {
  if (!r.output_ids.empty() || r.text.empty()) return r.output_ids;
  return t.tokenizer().encode(r.text, false);
}
}  // namespace

ParityReport check_parity(Target& a, Target& b, const ParityConfig& cfg, Progress* progress) {
  NullProgress null;
  Progress& p = progress ? *progress : null;
  const auto prompts = parity_prompts(a.tokenizer(), cfg);
  p.begin("parity", cfg.prompts);
  ParityReport report;
  report.prompts = cfg.prompts;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    TargetRequest req;
    req.prompt_ids = prompts[i];
    req.prompt_text = decode_ids(a.tokenizer(), prompts[i]);
    req.max_new_tokens = cfg.max_new_tokens;
    req.reuse_prefix = false;
    a.reset_session();
    a.reset_routing_fingerprint();
    const TargetResponse ra = generate_checked(a, req, "parity prompt " + std::to_string(i) + " (a)");
    const std::optional<std::uint64_t> fa = a.routing_fingerprint();
    b.reset_session();
    b.reset_routing_fingerprint();
    const TargetResponse rb = generate_checked(b, req, "parity prompt " + std::to_string(i) + " (b)");
    const std::optional<std::uint64_t> fb = b.routing_fingerprint();
    if (fa && fb) {
      ++report.routed_prompts;
      report.routing_a = engine::fold_routing_hashes(report.routing_a, *fa);
      report.routing_b = engine::fold_routing_hashes(report.routing_b, *fb);
      if (*fa != *fb) report.routing_mismatches.push_back({static_cast<int>(i), *fa, *fb});
    } else if (report.routing_not_compared.empty() && (fa || fb)) {
      report.routing_not_compared = std::string("side ") + (fa ? "b" : "a") + " keeps no routing fingerprint (" +
                                    (fa ? b : a).name() + ")";
    }
    const auto ia = ids_of(a, ra), ib = ids_of(b, rb);
    const int pos = first_divergence(ia, ib);
    if (pos >= 0) {
      report.mismatches.push_back({static_cast<int>(i), prompts[i], req.prompt_text, pos, ia, ib,
                                   decode_ids(a.tokenizer(), ia), decode_ids(b.tokenizer(), ib)});
    }
    p.step("prompt " + std::to_string(i) + (pos >= 0 ? " MISMATCH at " + std::to_string(pos) : ""));
  }
  if (report.routed_prompts == 0 && report.routing_not_compared.empty())
    report.routing_not_compared = "neither side keeps a routing fingerprint (no moe layers, or a target that cannot report one)";
  p.end(std::to_string(report.mismatches.size()) + " of " + std::to_string(cfg.prompts) + " prompts differ");
  return report;
}

}  // namespace atlas::suites
