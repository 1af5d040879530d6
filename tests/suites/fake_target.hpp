#pragma once
// A deterministic in-memory Target for suite tests: a character tokenizer, a KV-cache model of
// prefix reuse identical to engine::Session's (reuse = common prefix, at most prompt - 1; after a
// request the cache holds the prompt and every generated token but the last), scripted
// timestamps, and an optional planted output change for parity tests.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/routing_fingerprint.hpp"
#include "suites/target.hpp"

namespace atlas::test {

/// ids: 0 <unk>, 1 BOS, 2 EOS, 3.. = printable ASCII 0x20..0x7e (id = c - 0x20 + 3).
class CharTokenizer final : public engine::Tokenizer {
 public:
  std::vector<int> encode(std::string_view text, bool add_bos) const override {
    std::vector<int> ids;
    if (add_bos) ids.push_back(1);
    for (unsigned char c : text) ids.push_back(c >= 0x20 && c < 0x7f ? c - 0x20 + 3 : 0);
    return ids;
  }
  std::string token_bytes(int, int id) const override {
    if (id >= 3 && id < vocab_size()) return std::string(1, static_cast<char>(id - 3 + 0x20));
    return id == 0 ? "\x01" : "";
  }
  int vocab_size() const override { return 3 + 95; }
  std::optional<int> bos_id() const override { return 1; }
  std::optional<int> eos_id() const override { return 2; }
  std::vector<int> stop_ids() const override { return {2}; }
  std::optional<int> piece_to_id(std::string_view) const override { return std::nullopt; }
};

struct FakeTiming {
  std::int64_t base_ns = 1'000'000;        ///< fixed cost before the first token
  std::int64_t prefill_ns_per_token = 10'000;
  std::int64_t decode_ns = 250'000;        ///< gap between consecutive tokens
  int stall_every = 0;                     ///< > 0: every stall_every-th gap of a request is longer...
  std::int64_t stall_ns = 0;               ///< ... by this much
  /// >= 0: the response reports this much run-queue wait before the first token and per
  /// generated token after it; < 0: none reported (an HTTP target)
  std::int64_t run_queue_wait_ns = -1;
};

class FakeTarget : public suites::Target {
 public:
  FakeTiming timing;
  int context = 512;
  /// When set, requests whose prompt equals this get their output changed at `plant_position`.
  std::optional<std::vector<int>> plant_prompt;
  int plant_position = 0;
  /// Keeps a routing fingerprint as an engine on a moe model does: each generated token
  /// "routes" to expert (id % 8), folded by engine/routing_fingerprint.hpp's rule.
  bool keeps_routing = false;
  /// When set, requests whose prompt equals this route token 0 to another expert (the output
  /// stays the same: a routing change the text does not show).
  std::optional<std::vector<int>> plant_routing_prompt;
  int requests = 0;

  std::optional<std::uint64_t> routing_fingerprint() override {
    if (!keeps_routing) return std::nullopt;
    return routing_hash_;
  }
  void reset_routing_fingerprint() override { routing_hash_ = 0; }

  std::string name() const override { return "fake"; }
  const engine::Tokenizer& tokenizer() const override { return tok_; }
  int context_length() const override { return context; }
  nlohmann::json provenance() const override { return {{"kind", "fake"}}; }
  void reset_session() override { cached_.clear(); }

  suites::TargetResponse generate(const suites::TargetRequest& req) override {
    ++requests;
    suites::TargetResponse r;
    const int n = static_cast<int>(req.prompt_ids.size());
    if (n == 0 || n + 0 > context) {
      r.ok = false;
      r.error = "prompt does not fit";
      return r;
    }
    int reuse = 0;
    if (req.reuse_prefix) {
      auto mm = std::mismatch(req.prompt_ids.begin(), req.prompt_ids.end(), cached_.begin(), cached_.end());
      reuse = std::min(static_cast<int>(mm.first - req.prompt_ids.begin()), n - 1);
    }
    r.prompt_tokens = n;
    r.cached_tokens = reuse;
    r.prefilled_tokens = n - reuse;
    r.t_request_ns = clock_;
    std::int64_t t = clock_ + timing.base_ns + timing.prefill_ns_per_token * (n - reuse);
    std::vector<int> ctx = req.prompt_ids;
    for (int i = 0; i < req.max_new_tokens && n + i < context; ++i) {
      int next = next_id(ctx);
      if (plant_prompt && *plant_prompt == req.prompt_ids && i == plant_position) next = next == 50 ? 51 : 50;
      if (!req.ignore_eos && next == 2) break;
      r.output_ids.push_back(next);
      if (keeps_routing) {
        const int expert = (plant_routing_prompt && *plant_routing_prompt == req.prompt_ids && i == 0) ? (next + 1) % 8 : next % 8;
        routing_hash_ = engine::fold_expert_ids(routing_hash_, std::span<const int>(&expert, 1));
      }
      r.token_t_ns.push_back(t);
      ctx.push_back(next);
      t += timing.decode_ns;
      if (timing.stall_every > 0 && (i + 1) % timing.stall_every == 0) t += timing.stall_ns;
    }
    r.completion_tokens = static_cast<int>(r.output_ids.size());
    if (timing.run_queue_wait_ns >= 0) {
      r.run_queue_wait_first_ns = timing.run_queue_wait_ns;
      r.run_queue_wait_ns = timing.run_queue_wait_ns * std::max<std::int64_t>(1, r.completion_tokens);
    }
    r.t_first_byte_ns = r.token_t_ns.empty() ? t : r.token_t_ns.front();
    r.t_end_ns = r.token_t_ns.empty() ? t : r.token_t_ns.back();
    for (int id : r.output_ids) r.text += tok_.token_bytes(-1, id);
    cached_ = req.prompt_ids;
    if (!r.output_ids.empty()) cached_.insert(cached_.end(), r.output_ids.begin(), r.output_ids.end() - 1);
    clock_ = t + 1'000'000;
    return r;
  }

 private:
  static int next_id(const std::vector<int>& ctx) {
    std::uint32_t h = 7;
    for (std::size_t i = ctx.size() >= 3 ? ctx.size() - 3 : 0; i < ctx.size(); ++i) h = h * 31 + static_cast<std::uint32_t>(ctx[i]);
    return 3 + static_cast<int>(h % 95);
  }
  CharTokenizer tok_;
  std::vector<int> cached_;
  std::uint64_t routing_hash_ = 0;
  std::int64_t clock_ = 5'000'000'000;
};

}  // namespace atlas::test
