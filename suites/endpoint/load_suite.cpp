#include "suites/endpoint/load_suite.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/number_format.hpp"
#include "records/stats.hpp"
#include "suites/cold_request.hpp"
#include "suites/endpoint/load.hpp"
#include "suites/endpoint/load_level.hpp"
#include "suites/error.hpp"
#include "suites/latency.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"

namespace atlas::suites {

using records::Better;
using records::MetricKind;

namespace {
// Figures in notes and errors: the project's four significant digits (common/number_format.hpp).
std::string fmt(double x) { return format_number(x); }
}  // namespace

LoadSuiteConfig LoadSuiteConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "concurrency", "rates", "burstiness", "num_prompts", "input_len", "output_len",
                "max_duration_s", "max_send_lag_ms", "goodput", "warmup_requests", "max_concurrency",
                "stop_after_connection_failures"});
  LoadSuiteConfig c;
  c.concurrency = s.get_int_list("concurrency", {}, 1);
  const nlohmann::json& j = options.config;
  if (j.is_object() && j.contains("rates")) {
    const auto& r = j["rates"];
    if (!r.is_array() || r.empty()) throw SuiteError(s.source() + ": field 'rates' must be a non-empty list of numbers > 0, got " + r.dump());
    for (const auto& x : r) {
      if (!x.is_number() || !(x.get<double>() > 0)) {
        throw SuiteError(s.source() + ": field 'rates' must be a non-empty list of numbers > 0, got " + r.dump());
      }
      c.rates.push_back(x.get<double>());
    }
  }
  // A sweep runs from the lightest level up, whatever order the list gave, so its table and
  // details.levels read in load order and the first overloaded level is the saturation point.
  std::sort(c.concurrency.begin(), c.concurrency.end());
  std::sort(c.rates.begin(), c.rates.end());
  const auto dup_c = std::adjacent_find(c.concurrency.begin(), c.concurrency.end());
  if (dup_c != c.concurrency.end()) {
    throw SuiteError(s.source() + ": field 'concurrency' lists level " + std::to_string(*dup_c) +
                     " twice (each level is one set of metrics)");
  }
  const auto dup_r = std::adjacent_find(c.rates.begin(), c.rates.end());
  if (dup_r != c.rates.end()) {
    throw SuiteError(s.source() + ": field 'rates' lists level " + fmt(*dup_r) + " twice (each level is one set of metrics)");
  }
  if (c.concurrency.empty() == c.rates.empty()) {
    throw SuiteError(s.source() + ": the load suite needs exactly one of 'concurrency' (closed loop) or 'rates' (open loop)"
                     " (run --concurrency 1,2,4 or --rate 2,8)");
  }
  c.burstiness = s.get_double("burstiness", c.burstiness, 1e-9);
  c.num_prompts = s.get_int("num_prompts", c.num_prompts, 1);
  c.input_len = s.get_int("input_len", c.input_len, 1);
  c.output_len = s.get_int("output_len", c.output_len, 1);
  c.max_duration_s = s.get_double("max_duration_s", c.max_duration_s, 0.001);
  c.max_send_lag_ms = s.get_double("max_send_lag_ms", c.max_send_lag_ms, 0.0);
  c.warmup_requests = s.get_int("warmup_requests", c.warmup_requests, 0);
  c.max_concurrency = s.get_int("max_concurrency", c.max_concurrency, 0);
  c.stop_after_connection_failures = s.get_int("stop_after_connection_failures", c.stop_after_connection_failures, 0);
  if (c.max_concurrency > 0 && c.rates.empty()) {
    throw SuiteError(s.source() + ": field 'max_concurrency' caps an open loop (rates); a closed loop's 'concurrency' is "
                     "its number of requests in flight already");
  }
  if (j.is_object() && j.contains("goodput")) {
    const auto& g = j["goodput"];
    if (!g.is_object()) throw SuiteError(s.source() + ": field 'goodput' must be an object of SLOs in ms, got " + g.dump());
    for (const auto& [k, v] : g.items()) {
      if (k != "ttft_ms" && k != "tpot_ms" && k != "e2e_ms") {
        throw SuiteError(s.source() + ": field 'goodput' has unknown SLO '" + k + "' (ttft_ms, tpot_ms, e2e_ms)");
      }
      if (!v.is_number() || !(v.get<double>() > 0)) {
        throw SuiteError(s.source() + ": field 'goodput." + k + "' must be a number of ms > 0, got " + v.dump());
      }
    }
    c.goodput = g;
  }
  return c;
}

nlohmann::json LoadSuiteConfig::to_json() const {
  return {{"concurrency", concurrency}, {"rates", rates},         {"burstiness", burstiness},
          {"num_prompts", num_prompts}, {"input_len", input_len}, {"output_len", output_len},
          {"max_duration_s", max_duration_s}, {"max_send_lag_ms", max_send_lag_ms}, {"goodput", goodput},
          {"warmup_requests", warmup_requests}, {"max_concurrency", max_concurrency},
          {"stop_after_connection_failures", stop_after_connection_failures}};
}

namespace {

/// Percentile p in [0, 100] of the samples; NaN when empty. The records' own (type 7, numpy's
/// 'linear', records/stats.hpp): the table printed from the metrics and details.levels are one
/// computation and show the same figures for a level.
double percentile(const std::vector<double>& v, double p) { return records::stats::percentile(v, p); }

nlohmann::json pcts(const std::vector<double>& v) {
  auto num = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
  return {{"p50", num(percentile(v, 50))}, {"p90", num(percentile(v, 90))}, {"p99", num(percentile(v, 99))},
          {"n", v.size()}};
}

std::string level_name(bool closed, double x) {
  std::ostringstream o;
  o << (closed ? "concurrency=" : "rate=") << x;
  return o.str();
}

/// Half-width of the 95 % band of realized / requested rate for n gamma(k) gaps: their sum has
/// a coefficient of variation 1/sqrt(n k), so (normal approximation) 1.96/sqrt(n k).
double realized_rate_band(int n, double burstiness) { return n > 0 ? 1.96 / std::sqrt(n * burstiness) : 1.0; }

}  // namespace

records::SuiteResult run_load_suite(Target& target, const SuiteOptions& options) {
  const LoadSuiteConfig cfg = LoadSuiteConfig::from(options);
  if (target.name().rfind("endpoint:", 0) != 0) {
    throw SuiteError("load: drives a server with concurrent requests; target " + target.name() +
                     " is not one (use --endpoint URL)");
  }
  records::SuiteResult r;
  r.name = "load";
  r.config = cfg.to_json();
  r.config["seed"] = options.seed;
  const int ctx = target.context_length();
  if (ctx > 0 && cfg.input_len + cfg.output_len > ctx) {
    throw SuiteError("load: input_len + output_len = " + std::to_string(cfg.input_len + cfg.output_len) +
                     " exceeds the target's context of " + std::to_string(ctx) + " tokens");
  }
  const bool closed = !cfg.concurrency.empty();
  std::vector<double> levels;
  for (int c : cfg.concurrency) levels.push_back(c);
  for (double x : cfg.rates) levels.push_back(x);

  const PromptBuilder builder(target.tokenizer());
  target.reset_session();
  // Unique prompts (seeded by level and index, salted where the cache cannot be emptied): a
  // load test measures prefill and decode, not a prefix cache hit on a repeated prompt.
  const std::uint64_t salt = mix_seed(options.seed, target.cold_salt());
  Progress& progress = options.progress_or_null();
  progress.begin("load", cfg.num_prompts * static_cast<int>(levels.size()));

  nlohmann::json level_rows = nlohmann::json::array();
  std::vector<std::string> notes;
  std::string invalid;
  std::vector<std::string> overloaded_levels;
  std::string served_in_full;  ///< the last level (ascending) with no failure and no refusal
  // Every load request is cold (a unique random prompt; llama.cpp also skips its cache): a
  // response with more than a shared BOS from the cache measured a cache hit, not prefill.
  const int allowed_cached = ColdRequests::allowed_cached(target.tokenizer(), false, false);
  for (std::size_t li = 0; li < levels.size(); ++li) {
    const std::string L = level_name(closed, levels[li]);
    endpoint::LoadOptions lo;
    lo.arrival = closed ? endpoint::Arrival::fixed_concurrency : endpoint::Arrival::poisson;
    lo.concurrency = closed ? static_cast<int>(levels[li]) : 1;
    lo.rate_per_s = closed ? 1.0 : levels[li];
    lo.burstiness = cfg.burstiness;
    lo.seed = mix_seed(options.seed, li);
    lo.max_requests = cfg.num_prompts;
    lo.max_duration = std::chrono::milliseconds(static_cast<long long>(cfg.max_duration_s * 1000));
    lo.max_concurrency = closed ? 0 : cfg.max_concurrency;
    lo.stop_after_connection_failures = cfg.stop_after_connection_failures;
    auto request = [&](int i) {
      TargetRequest q;
      q.prompt_ids = builder.prompt(cfg.input_len, mix_seed(salt, li * 1'000'003ULL + static_cast<std::uint64_t>(i)));
      q.max_new_tokens = cfg.output_len;
      q.ignore_eos = true;
      q.reuse_prefix = true;
      q.cold = true;
      return q;
    };
    // Warm-up: requests at this level's load whose figures are dropped (connections, the
    // server's first batches); their prompts are unique too (indices past the measured ones).
    int warmup_failed = 0;
    if (cfg.warmup_requests > 0) {
      endpoint::LoadOptions wo = lo;
      wo.max_requests = cfg.warmup_requests;
      wo.seed = mix_seed(lo.seed, 0x5741524dULL);
      const endpoint::LoadRun warm = endpoint::run_load(target, [&](int i) { return request(cfg.num_prompts + i); }, wo);
      for (const auto& w : warm.samples) warmup_failed += !w.response.ok;
    }
    const endpoint::LoadRun run = endpoint::run_load(target, request, lo);
    for (const auto& s : run.samples) progress.step(L + " request " + std::to_string(s.index + 1));  // after the level: Progress is not thread-safe

    const LoadLevelFigures f = summarize_load_level(run, {cfg.output_len, cfg.goodput, allowed_cached});
    auto timed = [&](const std::string& name, const char* unit, Better b, const char* what, const std::vector<double>& v) {
      metric(r, L + "/" + name, unit, b, MetricKind::timed, what).samples = v;
    };
    timed("ttft_ms", "ms", Better::lower, "time to first token, one sample per request", f.ttft_ms);
    timed("tpot_ms", "ms", Better::lower, "time per output token after the first read, one sample per request", f.tpot_ms);
    timed("itl_ms", "ms", Better::lower, "inter-token latency, every gap after the first read", f.itl_ms);
    timed("e2e_ms", "ms", Better::lower, "request start to last token, one sample per request", f.e2e_ms);
    timed("send_lag_ms", "ms", Better::lower, "actual - intended send time (the client's own lag)", f.send_lag_ms);
    if (f.span_s > 0) {
      timed("request_throughput", "req/s", Better::higher, "completed requests / (last token - first send)",
            {f.per_s(f.completed)});
      timed("output_tok_s", "tok/s", Better::higher, "server-counted output tokens of completed requests / (last token - first send)",
            {f.per_s(static_cast<double>(f.output_tokens))});
      timed("total_tok_s", "tok/s", Better::higher,
            "server-counted input + output tokens of completed requests / (last token - first send)",
            {f.per_s(static_cast<double>(f.input_tokens + f.output_tokens))});
      if (!cfg.goodput.empty()) {
        timed("goodput_req_s", "req/s", Better::higher, "requests meeting every goodput SLO / (last token - first send)",
              {f.per_s(f.good)});
      }
    }
    metric(r, L + "/failed_requests", "count", Better::lower, MetricKind::counted, "requests that failed at this level")
        .samples = {static_cast<double>(f.failed)};
    metric(r, L + "/total_input_tokens", "tokens", Better::higher, MetricKind::counted,
           "server-counted prompt tokens of the completed requests")
        .samples = {static_cast<double>(f.input_tokens)};
    metric(r, L + "/total_output_tokens", "tokens", Better::higher, MetricKind::counted,
           "server-counted output tokens of the completed requests")
        .samples = {static_cast<double>(f.output_tokens)};

    const int not_sent = cfg.num_prompts - f.sent;
    const double lag_p99 = percentile(f.send_lag_ms, 99);
    std::string why;
    // Refusals for load (HTTP 429) are what a level past the server's saturation point measures:
    // the level is marked overloaded, not invalid, so the levels below it stay a valid sweep.
    // Any other failure invalidates the level.
    const int other_failed = f.failed - f.overloaded;
    if (other_failed > 0) {
      why = std::to_string(other_failed) + " of " + std::to_string(f.sent) + " requests failed (" +
            std::to_string(f.connection_failures) + " without a response byte; first: " + f.first_error + ")";
      if (f.overloaded > 0) why += " besides " + std::to_string(f.overloaded) + " refused for load (HTTP 429)";
      if (run.stopped_on_connection_failures) {
        why += ", stopped after " + std::to_string(cfg.stop_after_connection_failures) + " connection failures in a row (" +
               std::to_string(not_sent) + " requests not sent)";
      }
    }
    if (!std::isnan(lag_p99) && lag_p99 > cfg.max_send_lag_ms) {
      why += std::string(why.empty() ? "" : "; ") + "the client fell behind its schedule (p99 send lag " +
             std::to_string(lag_p99) + " ms > " + std::to_string(cfg.max_send_lag_ms) + " ms): it measured itself";
    }
    if (f.cached_requests > 0) {
      why += std::string(why.empty() ? "" : "; ") + std::to_string(f.cached_requests) + " of " + std::to_string(f.sent) +
             " requests were served from the prefix cache (cached_tokens up to " + std::to_string(f.max_cached) + " > " +
             std::to_string(allowed_cached) + "): not cold";
    }
    if (!why.empty()) invalid += (invalid.empty() ? "" : "; ") + L + ": " + why;
    std::string overload;
    if (f.overloaded > 0) {
      overload = std::to_string(f.overloaded) + " of " + std::to_string(f.sent) +
                 " requests refused by the server for load (HTTP 429; first: " + f.first_overload_error + ")";
      overloaded_levels.push_back(L);
    }
    // Printed under the table, beside the rates: a level where requests failed must not read
    // as a healthy one.
    const std::string rates = ": its rates (" + fmt(f.per_s(f.completed)) + " req/s, " +
                              fmt(f.per_s(static_cast<double>(f.output_tokens))) + " tok/s) count the " +
                              std::to_string(f.completed) + " that completed";
    if (other_failed > 0) {
      notes.push_back(L + ": " + std::to_string(f.failed) + " of " + std::to_string(f.sent) + " requests FAILED" +
                      (f.overloaded > 0 ? " (" + std::to_string(f.overloaded) + " of them refused for load, HTTP 429)" : "") +
                      (not_sent > 0 ? " (" + std::to_string(not_sent) + " not sent)" : "") + rates);
    } else if (f.overloaded > 0) {
      notes.push_back(L + ": OVERLOADED: " + overload + rates);
    }
    // Fewer ITL samples than completed x (output_len - 1) is expected over HTTP (docs/metrics.md):
    // say which tokens have no gap of their own, so the count is not read as lost samples.
    const auto itl_n = static_cast<long long>(f.itl_ms.size());
    if (itl_n != f.itl_expected) {
      std::string parts;
      auto part = [&](long long n, const std::string& what) {
        if (n != 0) parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
      };
      part(f.first_read_extra_tokens, "tokens came in their request's first read (no gap of their own)");
      part(f.output_shortfall_tokens, "tokens fewer than asked were returned");
      part(f.output_excess_tokens, "tokens beyond those asked were returned (gaps of their own)");
      notes.push_back(L + ": " + std::to_string(itl_n) + " ITL samples, not " + std::to_string(f.completed) + " x " +
                      std::to_string(cfg.output_len - 1) + " = " + std::to_string(f.itl_expected) + ": " + parts);
    }
    const double band = realized_rate_band(f.sent, cfg.burstiness);
    if (!closed && f.realized_rate > 0) {
      notes.push_back(L + ": realized arrival rate " + fmt(f.realized_rate) + " req/s for " + fmt(levels[li]) +
                      " requested (" + std::to_string(f.sent) + " arrivals: a schedule that size lands within +-" +
                      format_fraction_percent(band, false) + " of the requested rate 95% of the time; more --num-prompts narrow it)");
    }
    if (f.goodput_tpot_undefined > 0) {
      notes.push_back(L + ": " + std::to_string(f.goodput_tpot_undefined) +
                      " requests have no TPOT (one output token, or every token in one read) and count as meeting the "
                      "tpot_ms SLO (vLLM's rule)");
    }
    nlohmann::json row = {{"level", L},
                          {"requests", f.sent},
                          {"completed", f.completed},
                          {"failed", f.failed},
                          {"connection_failures", f.connection_failures},
                          {"not_sent", not_sent},
                          {"stopped_on_connection_failures", run.stopped_on_connection_failures},
                          {"warmup_requests", cfg.warmup_requests},
                          {"warmup_failed", warmup_failed},
                          {"duration_s", f.span_s},
                          {"request_throughput", f.per_s(f.completed)},
                          {"output_tok_s", f.per_s(static_cast<double>(f.output_tokens))},
                          {"total_tok_s", f.per_s(static_cast<double>(f.input_tokens + f.output_tokens))},
                          {"total_input_tokens", f.input_tokens},
                          {"total_output_tokens", f.output_tokens},
                          {"ttft_ms", pcts(f.ttft_ms)},
                          {"tpot_ms", pcts(f.tpot_ms)},
                          {"itl_ms", pcts(f.itl_ms)},
                          {"e2e_ms", pcts(f.e2e_ms)},
                          {"send_lag_ms", pcts(f.send_lag_ms)},
                          {"output_length_mismatches", f.output_length_mismatches},
                          {"first_read_extra_tokens", f.first_read_extra_tokens},
                          {"decode_undefined_requests", f.decode_undefined_requests},
                          {"cached_requests", f.cached_requests},
                          {"itl_expected", f.itl_expected},
                          {"output_shortfall_tokens", f.output_shortfall_tokens},
                          {"output_excess_tokens", f.output_excess_tokens},
                          {"overloaded", f.overloaded > 0},
                          {"overloaded_requests", f.overloaded},
                          {"valid", why.empty()},
                          {"request_rows", f.requests}};
    if (!closed) {
      row["requested_rate"] = levels[li];
      row["realized_rate"] = f.realized_rate;
      row["realized_rate_band_95"] = band;
      if (cfg.max_concurrency > 0) row["max_concurrency"] = cfg.max_concurrency;
    }
    if (!cfg.goodput.empty()) {
      row["goodput_req_s"] = f.per_s(f.good);
      row["goodput_tpot_undefined_requests"] = f.goodput_tpot_undefined;
    }
    if (!f.server_prompt_ms.empty() || !f.server_tpot_ms.empty()) {
      row["server"] = {{"prompt_ms", pcts(f.server_prompt_ms)}, {"tpot_ms", pcts(f.server_tpot_ms)}};
    }
    if (!why.empty()) row["invalid_reason"] = why;
    if (!overload.empty()) row["overload_reason"] = overload;
    if (why.empty() && overload.empty()) served_in_full = L;
    level_rows.push_back(std::move(row));
  }
  r.details["levels"] = level_rows;
  std::string saturation;
  if (!overloaded_levels.empty()) {
    r.details["overloaded_levels"] = overloaded_levels;
    // Levels run in ascending order: the saturation point lies between the last level served in
    // full below the first overloaded one and that one.
    std::string joined;
    for (const auto& l : overloaded_levels) joined += (joined.empty() ? "" : ", ") + l;
    saturation = "saturation: the server refused requests for load (HTTP 429) at " + joined +
                 (served_in_full.empty() ? "; no level was served in full"
                                         : "; the highest level served in full was " + served_in_full);
    notes.push_back(saturation);
  }
  for (const auto& n : notes) r.details["notes"].push_back(n);
  if (!invalid.empty()) r.details["invalid_reason"] = invalid;
  progress.end(std::to_string(levels.size()) + " levels x " + std::to_string(cfg.num_prompts) + " requests" +
               (invalid.empty() ? "" : " (INVALID: " + invalid + ")") + (saturation.empty() ? "" : " (" + saturation + ")"));
  return r;
}

}  // namespace atlas::suites
