#include "suites/ttft/ttft_suite.hpp"

#include <algorithm>

#include <map>
#include <string>

#include "suites/cold_request.hpp"
#include "suites/error.hpp"
#include "suites/latency.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"
#include "suites/request_failures.hpp"

namespace atlas::suites {

using records::Better;
using records::MetricKind;

TtftConfig TtftConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "lengths", "decode_tokens", "warm"});
  TtftConfig c;
  c.lengths = s.get_int_list("lengths", c.lengths, 1);
  c.decode_tokens = s.get_int("decode_tokens", c.decode_tokens, 1);
  c.warm = s.get_bool("warm", c.warm);
  return c;
}

nlohmann::json TtftConfig::to_json() const {
  return {{"lengths", lengths}, {"decode_tokens", decode_tokens}, {"warm", warm}};
}

namespace {

std::string len_key(int len) { return "len=" + std::to_string(len); }

void add_decode_metrics(records::SuiteResult& r, const RequestLatency& lat) {
  // Tokens that came in the first read have no times of their own (latency.hpp): counted, and
  // left out of TPOT, ITL and tok/s alike so the three stay consistent (TPOT = 1 / tok/s =
  // mean ITL of the request).
  if (lat.first_read_tokens > 1) {
    auto& n = r.details["first_read_extra_tokens"];
    n = (n.is_number() ? n.get<int>() : 0) + lat.first_read_tokens - 1;
  }
  if (!lat.tpot_ms) {
    if (lat.output_tokens >= 2) {
      // Every token arrived in one read: no decode time to measure; count it, never report 0 ms.
      auto& n = r.details["decode_undefined_requests"];
      n = n.is_number() ? n.get<int>() + 1 : 1;
    }
    return;
  }
  metric(r, "tpot_ms", "ms", Better::lower, MetricKind::timed,
         "time per output token after the first read, (E2E - TTFT)/(n - k), one sample per request")
      .samples.push_back(*lat.tpot_ms);
  auto& itl = metric(r, "itl_ms", "ms", Better::lower, MetricKind::timed,
                     "inter-token latency: every gap between consecutive tokens after the first read");
  itl.samples.insert(itl.samples.end(), lat.itl_ms.begin(), lat.itl_ms.end());
  metric(r, "decode_tok_s", "tok/s", Better::higher, MetricKind::timed,
         "decode throughput of one request, (n - k)/(E2E - TTFT)")
      .samples.push_back(*lat.decode_tok_s);
}

nlohmann::json request_row(const std::string& variant, int len, int rep, const TargetResponse& resp,
                           const RequestLatency& lat) {
  nlohmann::json row = {{"variant", variant},        {"len", len},
                        {"repetition", rep},         {"ttft_ms", lat.ttft_ms},
                        {"e2e_ms", lat.e2e_ms},      {"prompt_tokens", resp.prompt_tokens},
                        {"cached_tokens", resp.cached_tokens}, {"completion_tokens", resp.completion_tokens},
                        {"finish_reason", resp.finish_reason}, {"server_timings", resp.server_timings}};
  // A warm request the target served without its cache (cached_tokens 0: a server with its
  // prompt cache off, a slot that was evicted) timed a second cold request: said on the row.
  if (variant == "warm") row["reused"] = resp.cached_tokens > 0;
  return row;
}

/// Whole-request figures, pooled over every measured request: E2E, and TTFB, which over HTTP
/// separates the server's first byte (headers) from its first token; in-process it is TTFT.
void add_request_metrics(records::SuiteResult& r, const TargetResponse& resp, const RequestLatency& lat) {
  metric(r, "e2e_ms", "ms", Better::lower, MetricKind::timed, "request start to last token (vLLM E2EL), one sample per request")
      .samples.push_back(lat.e2e_ms);
  if (resp.t_first_byte_ns > 0) {
    metric(r, "ttfb_ms", "ms", Better::lower, MetricKind::timed,
           "request start to the first response byte (in-process: the first token), one sample per request")
        .samples.push_back(static_cast<double>(resp.t_first_byte_ns - resp.t_request_ns) / 1e6);
  }
}

}  // namespace

records::SuiteResult run_ttft_suite(Target& target, const SuiteOptions& options) {
  const TtftConfig cfg = TtftConfig::from(options);
  records::SuiteResult r = repeated_suite_result("ttft", cfg.to_json(), options);

  const int ctx = target.context_length();
  std::vector<int> lengths, skipped;
  for (int len : cfg.lengths) (len + cfg.decode_tokens <= ctx ? lengths : skipped).push_back(len);
  r.details["context_length"] = ctx;
  r.details["lengths"] = lengths;
  r.details["skipped_lengths"] = skipped;
  if (ctx <= 0) {
    throw SuiteError("ttft: the target did not report its context length (" + target.name() +
                     "): pass --context-length N");
  }
  // Said, not only recorded: a config written for long-context models (nightly asks for up to
  // 32768 tokens) loses most lengths on a 512-token model, and a reader must know why.
  std::string skip_note;
  if (!skipped.empty()) {
    skip_note = "skipped prompt lengths";
    for (std::size_t i = 0; i < skipped.size(); ++i) skip_note += (i ? ", " : " ") + std::to_string(skipped[i]);
    skip_note += ": length + " + std::to_string(cfg.decode_tokens) + " decode tokens exceeds the target's context of " +
                 std::to_string(ctx) + " tokens";
    r.details["notes"].push_back(skip_note);
  }
  if (lengths.empty()) throw SuiteError("ttft: no prompt length fits the target's context of " + std::to_string(ctx) + " tokens");

  const PromptBuilder builder(target.tokenizer());
  std::map<int, std::vector<int>> prompts;
  for (int len : lengths) prompts[len] = builder.prompt(len, mix_seed(options.seed, static_cast<std::uint64_t>(len)));

  Progress& progress = options.progress_or_null();
  const int variants = cfg.warm ? 2 : 1;
  progress.begin("ttft", (options.warmup + options.repetitions) * static_cast<int>(lengths.size()) * variants);

  nlohmann::json warm_counts = nlohmann::json::object();
  nlohmann::json rows = nlohmann::json::array();
  // Cold by construction and checked against cached_tokens (suites/cold_request.hpp).
  ColdRequests cold_requests(target);
  // A failed request is counted and the suite goes on (stopping after 3 in a row): what was
  // measured stays in the record, which is then invalid (suites/request_failures.hpp).
  RequestFailures failures((options.warmup + options.repetitions) * static_cast<int>(lengths.size()) * variants);
  int length_mismatches = 0;
  std::map<int, int> warm_not_reused;  // len -> measured warm requests with cached_tokens 0
  for (int rep = 0; rep < options.warmup + options.repetitions && !failures.should_stop(); ++rep) {
    const bool measured = rep >= options.warmup;
    const std::string rep_label = measured ? "rep " + std::to_string(rep - options.warmup + 1) + "/" +
                                                 std::to_string(options.repetitions)
                                           : "warmup " + std::to_string(rep + 1);
    for (int len : lengths) {
      if (failures.should_stop()) break;
      TargetRequest req;
      req.max_new_tokens = 1 + cfg.decode_tokens;
      req.ignore_eos = true;
      req.reuse_prefix = true;
      // The salt replaces the ids after BOS: the prompt keeps its length `len`.
      const TargetResponse cold = cold_requests.send(
          [&](std::uint64_t salt) {
            req.prompt_ids = cold_requests.salted_ids(prompts[len], salt, prompts[len].size());
            req.prompt_text = decode_ids(target.tokenizer(), req.prompt_ids);
            return req;
          },
          "ttft cold " + len_key(len));
      if (failures.failed(cold, "ttft cold " + len_key(len) + " " + rep_label)) {
        progress.step("cold " + len_key(len) + " " + rep_label + " FAILED");
        continue;  // the warm request times the cold one's cached prefix: without it there is none
      }
      if (cold.completion_tokens != req.max_new_tokens) ++length_mismatches;
      const RequestLatency cl = compute_latency(cold);
      progress.step("cold " + len_key(len) + " " + rep_label);
      if (measured) rows.push_back(request_row("cold", len, rep - options.warmup + 1, cold, cl));
      if (measured) {
        metric(r, "ttft_ms/cold/" + len_key(len), "ms", Better::lower, MetricKind::timed,
               "time to first token with no cached prefix (session reset)")
            .samples.push_back(cl.ttft_ms);
        if (cold.run_queue_wait_first_ns) {
          // TTFT less what a neighbour's CPU use added to it (docs/gates.md, load).
          metric(r, "ttft_ms_less_runqueue/cold/" + len_key(len), "ms", Better::lower, MetricKind::timed,
                 "time to first token with no cached prefix, less the run-queue wait of the thread that ran "
                 "it until then")
              .samples.push_back(std::max(0.0, cl.ttft_ms - static_cast<double>(*cold.run_queue_wait_first_ns) / 1e6));
        }
        metric(r, "prefill_tok_s/cold/" + len_key(len), "tok/s", Better::higher, MetricKind::timed,
               "prompt tokens / TTFT with no cached prefix")
            .samples.push_back(tokens_per_s(static_cast<double>(len - cold.cached_tokens), cl.ttft_ms));
        metric(r, "cached_tokens/cold/" + len_key(len), "tokens", Better::lower, MetricKind::counted,
               "prompt tokens the target reported from its cache on the cold request (0, or 1 for a shared BOS)")
            .samples.push_back(cold.cached_tokens);
        add_decode_metrics(r, cl);
        add_request_metrics(r, cold, cl);
      }
      if (!cfg.warm) continue;
      req.reuse_prefix = true;
      const TargetResponse warm = target.generate(req);
      if (failures.failed(warm, "ttft warm " + len_key(len) + " " + rep_label)) {
        progress.step("warm " + len_key(len) + " " + rep_label + " FAILED");
        continue;
      }
      if (warm.completion_tokens != req.max_new_tokens) ++length_mismatches;
      const RequestLatency wl = compute_latency(warm);
      if (measured) rows.push_back(request_row("warm", len, rep - options.warmup + 1, warm, wl));
      progress.step("warm " + len_key(len) + " " + rep_label);
      if (measured) {
        metric(r, "ttft_ms/warm/" + len_key(len), "ms", Better::lower, MetricKind::timed,
               "time to first token for the same prompt again, its prefix reused")
            .samples.push_back(wl.ttft_ms);
        metric(r, "cached_tokens/warm/" + len_key(len), "tokens", Better::higher, MetricKind::counted,
               "prompt tokens the target reused from its cache on the warm request")
            .samples.push_back(warm.cached_tokens);
        add_decode_metrics(r, wl);
        add_request_metrics(r, warm, wl);
        warm_counts[len_key(len)] = {{"cached_tokens", warm.cached_tokens}, {"prefilled_tokens", warm.prefilled_tokens}};
        if (warm.cached_tokens == 0) ++warm_not_reused[len];
      }
    }
  }
  r.details["warm_counts"] = warm_counts;
  if (!warm_not_reused.empty()) {
    // The metric keeps its name (baselines compare it), the note says what it timed.
    std::string note = "warm requests the target did not reuse (cached_tokens 0), so their ttft_ms/warm rows time a repeated cold prompt:";
    for (const auto& [len, n] : warm_not_reused) {
      note += " " + len_key(len) + " " + std::to_string(n) + " of " + std::to_string(options.repetitions) + ";";
    }
    note.back() = '.';
    r.details["warm_not_reused"] = nlohmann::json::object();
    for (const auto& [len, n] : warm_not_reused) r.details["warm_not_reused"][len_key(len)] = n;
    r.details["notes"].push_back(note);
  }
  failures.add_details(r.details, target.name());
  r.details["requests"] = rows;
  cold_requests.add_details(r.details);
  // ignore_eos asks for exactly max_tokens; a server that stops early (or ignores the field)
  // shows up here, with the server's usage as the count.
  r.details["output_length_mismatches"] = length_mismatches;
  progress.end(std::to_string(lengths.size()) + " lengths x " + std::to_string(options.repetitions) + " repetitions" +
               (skip_note.empty() ? "" : "; " + skip_note) +
               (failures.failures() ? " (INVALID: " + r.details["invalid_reason"].get<std::string>() + ")" : ""));
  return r;
}

}  // namespace atlas::suites
