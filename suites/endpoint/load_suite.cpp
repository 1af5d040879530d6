#include "suites/endpoint/load_suite.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "records/stats.hpp"
#include "suites/cold_request.hpp"
#include "suites/endpoint/load.hpp"
#include "suites/error.hpp"
#include "suites/latency.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"

namespace atlas::suites {

using records::Better;
using records::MetricKind;

LoadSuiteConfig LoadSuiteConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "concurrency", "rates", "burstiness", "num_prompts", "input_len", "output_len",
                "max_duration_s", "max_send_lag_ms", "goodput"});
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
          {"max_duration_s", max_duration_s}, {"max_send_lag_ms", max_send_lag_ms}, {"goodput", goodput}};
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
  std::string invalid;
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
    const auto samples = endpoint::run_load(
        target,
        [&](int i) {
          TargetRequest q;
          q.prompt_ids = builder.prompt(cfg.input_len, mix_seed(salt, li * 1'000'003ULL + static_cast<std::uint64_t>(i)));
          q.max_new_tokens = cfg.output_len;
          q.ignore_eos = true;
          q.reuse_prefix = true;
          q.cold = true;
          return q;
        },
        lo);

    std::vector<double> ttft, tpot, itl, e2e, lag, srv_prompt_ms, srv_tpot_ms;
    int failed = 0, good = 0, mismatched = 0, first_read_extra = 0, undefined_decode = 0, cached = 0, max_cached = 0;
    // Every load request is cold (a unique random prompt; llama.cpp also skips its cache): a
    // response with more than a shared BOS from the cache measured a cache hit, not prefill.
    const int allowed_cached = ColdRequests::allowed_cached(target.tokenizer(), false, false);
    long long out_tokens = 0;
    std::int64_t t_first = 0, t_last = 0;
    std::string first_error;
    for (const auto& s : samples) {
      progress.step(L + " request " + std::to_string(s.index + 1));  // after the level: Progress is not thread-safe
      const TargetResponse& resp = s.response;
      if (resp.t_request_ns > 0) {
        lag.push_back(static_cast<double>(resp.t_request_ns - s.t_intended_ns) / 1e6);
        t_first = t_first == 0 ? resp.t_request_ns : std::min(t_first, resp.t_request_ns);
      }
      if (!resp.ok || resp.token_t_ns.empty()) {
        ++failed;
        if (first_error.empty()) first_error = resp.ok ? "no token generated" : resp.error.substr(0, 200);
        continue;
      }
      if (resp.cached_tokens > allowed_cached) {
        ++cached;
        max_cached = std::max(max_cached, resp.cached_tokens);
      }
      const RequestLatency lat = compute_latency(resp);
      t_last = std::max(t_last, resp.token_t_ns.back());
      out_tokens += resp.completion_tokens;
      if (resp.completion_tokens != cfg.output_len) ++mismatched;
      first_read_extra += lat.first_read_tokens - 1;
      ttft.push_back(lat.ttft_ms);
      e2e.push_back(lat.e2e_ms);
      itl.insert(itl.end(), lat.itl_ms.begin(), lat.itl_ms.end());
      if (lat.tpot_ms) {
        tpot.push_back(*lat.tpot_ms);
      } else if (lat.output_tokens >= 2) {
        ++undefined_decode;
      }
      bool meets = true;
      if (cfg.goodput.contains("ttft_ms")) meets = meets && lat.ttft_ms <= cfg.goodput["ttft_ms"].get<double>();
      if (cfg.goodput.contains("tpot_ms")) meets = meets && (!lat.tpot_ms || *lat.tpot_ms <= cfg.goodput["tpot_ms"].get<double>());
      if (cfg.goodput.contains("e2e_ms")) meets = meets && lat.e2e_ms <= cfg.goodput["e2e_ms"].get<double>();
      good += meets;
      const auto& st = resp.server_timings;
      if (st.is_object()) {
        if (st.contains("prompt_ms") && st["prompt_ms"].is_number()) srv_prompt_ms.push_back(st["prompt_ms"].get<double>());
        // llama.cpp: predicted_ms runs from the end of the prompt to the last token; the first
        // token is free (the prompt's logits), so its TPOT is predicted_ms / (predicted_n - 1),
        // the same span and count as the client's (E2E - TTFT) / (n - 1).
        if (st.contains("predicted_ms") && st["predicted_ms"].is_number() && st.contains("predicted_n") &&
            st["predicted_n"].is_number() && st["predicted_n"].get<double>() > 1) {
          srv_tpot_ms.push_back(st["predicted_ms"].get<double>() / (st["predicted_n"].get<double>() - 1));
        }
      }
    }
    const double span_s = t_last > t_first ? static_cast<double>(t_last - t_first) / 1e9 : 0.0;
    const int completed = static_cast<int>(samples.size()) - failed;
    auto timed = [&](const std::string& name, const char* unit, Better b, const char* what, const std::vector<double>& v) {
      metric(r, L + "/" + name, unit, b, MetricKind::timed, what).samples = v;
    };
    timed("ttft_ms", "ms", Better::lower, "time to first token, one sample per request", ttft);
    timed("tpot_ms", "ms", Better::lower, "time per output token after the first read, one sample per request", tpot);
    timed("itl_ms", "ms", Better::lower, "inter-token latency, every gap after the first read", itl);
    timed("e2e_ms", "ms", Better::lower, "request start to last token, one sample per request", e2e);
    timed("send_lag_ms", "ms", Better::lower, "actual - intended send time (the client's own lag)", lag);
    if (span_s > 0) {
      timed("request_throughput", "req/s", Better::higher, "completed requests / (last token - first send)",
            {completed / span_s});
      timed("output_tok_s", "tok/s", Better::higher, "server-counted output tokens / (last token - first send)",
            {static_cast<double>(out_tokens) / span_s});
      if (!cfg.goodput.empty()) {
        timed("goodput_req_s", "req/s", Better::higher, "requests meeting every goodput SLO / (last token - first send)",
              {good / span_s});
      }
    }
    metric(r, L + "/failed_requests", "count", Better::lower, MetricKind::counted, "requests that failed at this level")
        .samples = {static_cast<double>(failed)};

    const double lag_p99 = percentile(lag, 99);
    std::string why;
    if (failed > 0) why = std::to_string(failed) + " of " + std::to_string(samples.size()) + " requests failed (first: " + first_error + ")";
    if (!std::isnan(lag_p99) && lag_p99 > cfg.max_send_lag_ms) {
      why += std::string(why.empty() ? "" : "; ") + "the client fell behind its schedule (p99 send lag " +
             std::to_string(lag_p99) + " ms > " + std::to_string(cfg.max_send_lag_ms) + " ms): it measured itself";
    }
    if (cached > 0) {
      why += std::string(why.empty() ? "" : "; ") + std::to_string(cached) + " of " + std::to_string(samples.size()) +
             " requests were served from the prefix cache (cached_tokens up to " + std::to_string(max_cached) + " > " +
             std::to_string(allowed_cached) + "): not cold";
    }
    if (!why.empty()) invalid += (invalid.empty() ? "" : "; ") + L + ": " + why;
    nlohmann::json row = {{"level", L},
                          {"requests", samples.size()},
                          {"completed", completed},
                          {"failed", failed},
                          {"duration_s", span_s},
                          {"request_throughput", span_s > 0 ? completed / span_s : 0.0},
                          {"output_tok_s", span_s > 0 ? static_cast<double>(out_tokens) / span_s : 0.0},
                          {"ttft_ms", pcts(ttft)},
                          {"tpot_ms", pcts(tpot)},
                          {"itl_ms", pcts(itl)},
                          {"e2e_ms", pcts(e2e)},
                          {"send_lag_ms", pcts(lag)},
                          {"output_length_mismatches", mismatched},
                          {"first_read_extra_tokens", first_read_extra},
                          {"decode_undefined_requests", undefined_decode},
                          {"cached_requests", cached},
                          {"valid", why.empty()}};
    if (!cfg.goodput.empty()) row["goodput_req_s"] = span_s > 0 ? good / span_s : 0.0;
    if (!srv_prompt_ms.empty() || !srv_tpot_ms.empty()) {
      row["server"] = {{"prompt_ms", pcts(srv_prompt_ms)}, {"tpot_ms", pcts(srv_tpot_ms)}};
    }
    if (!why.empty()) row["invalid_reason"] = why;
    level_rows.push_back(std::move(row));
  }
  r.details["levels"] = level_rows;
  if (!invalid.empty()) r.details["invalid_reason"] = invalid;
  progress.end(std::to_string(levels.size()) + " levels x " + std::to_string(cfg.num_prompts) + " requests" +
               (invalid.empty() ? "" : " (INVALID: " + invalid + ")"));
  return r;
}

}  // namespace atlas::suites
