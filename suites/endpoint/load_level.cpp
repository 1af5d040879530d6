#include "suites/endpoint/load_level.hpp"

#include <algorithm>

#include "suites/latency.hpp"

namespace atlas::suites {

namespace {
double ms_since(std::int64_t t_ns, std::int64_t origin_ns) { return static_cast<double>(t_ns - origin_ns) / 1e6; }
}  // namespace

bool is_overload_refusal(const TargetResponse& r) { return !r.ok && r.http_status == 429; }

LoadLevelFigures summarize_load_level(const endpoint::LoadRun& run, const LoadLevelInputs& in) {
  LoadLevelFigures f;
  std::int64_t t_first = 0, t_last = 0, first_send = 0, last_send = 0;
  for (const auto& s : run.samples) {
    const TargetResponse& resp = s.response;
    ++f.sent;
    nlohmann::json row = {{"index", s.index}, {"t_intended_ms", ms_since(s.t_intended_ns, run.t_start_ns)}};
    if (resp.t_request_ns > 0) {
      const double lag = static_cast<double>(resp.t_request_ns - s.t_ready_ns) / 1e6;
      f.send_lag_ms.push_back(lag);
      row["t_sent_ms"] = ms_since(resp.t_request_ns, run.t_start_ns);
      row["send_lag_ms"] = lag;
      first_send = first_send == 0 ? resp.t_request_ns : std::min(first_send, resp.t_request_ns);
      last_send = std::max(last_send, resp.t_request_ns);
    }
    if (s.t_ready_ns > s.t_intended_ns) row["cap_wait_ms"] = static_cast<double>(s.t_ready_ns - s.t_intended_ns) / 1e6;
    if (!resp.ok || resp.token_t_ns.empty()) {
      ++f.failed;
      f.connection_failures += endpoint::connection_failed(resp);
      const std::string error = resp.ok ? "no token generated" : resp.error.substr(0, 200);
      if (is_overload_refusal(resp)) {
        ++f.overloaded;
        if (f.first_overload_error.empty()) f.first_overload_error = error;
      } else if (f.first_error.empty()) {
        f.first_error = error;
      }
      row["status"] = "failed";
      row["error"] = error;
      f.requests.push_back(std::move(row));
      continue;
    }
    ++f.completed;
    if (resp.cached_tokens > in.allowed_cached) {
      ++f.cached_requests;
      f.max_cached = std::max(f.max_cached, resp.cached_tokens);
    }
    const RequestLatency lat = compute_latency(resp);
    t_first = t_first == 0 ? resp.t_request_ns : std::min(t_first, resp.t_request_ns);
    t_last = std::max(t_last, resp.token_t_ns.back());
    f.output_tokens += resp.completion_tokens;
    f.input_tokens += resp.prompt_tokens;
    if (resp.completion_tokens != in.output_len) ++f.output_length_mismatches;
    f.first_read_extra_tokens += lat.first_read_tokens - 1;
    f.itl_expected += std::max(in.output_len - 1, 0);
    if (lat.output_tokens < in.output_len) f.output_shortfall_tokens += in.output_len - lat.output_tokens;
    if (lat.output_tokens > in.output_len) f.output_excess_tokens += lat.output_tokens - in.output_len;
    f.ttft_ms.push_back(lat.ttft_ms);
    f.e2e_ms.push_back(lat.e2e_ms);
    f.itl_ms.insert(f.itl_ms.end(), lat.itl_ms.begin(), lat.itl_ms.end());
    if (lat.tpot_ms) {
      f.tpot_ms.push_back(*lat.tpot_ms);
    } else if (lat.output_tokens >= 2) {
      ++f.decode_undefined_requests;
    }
    bool meets = true;
    if (in.goodput.contains("ttft_ms")) meets = meets && lat.ttft_ms <= in.goodput["ttft_ms"].get<double>();
    if (in.goodput.contains("tpot_ms")) {
      // No TPOT (one token, or all in one read): nothing to miss, it meets the SLO (vLLM counts
      // such a request's TPOT as 0; AIPerf leaves it out); counted, so the reader sees how many.
      if (!lat.tpot_ms) ++f.goodput_tpot_undefined;
      meets = meets && (!lat.tpot_ms || *lat.tpot_ms <= in.goodput["tpot_ms"].get<double>());
    }
    if (in.goodput.contains("e2e_ms")) meets = meets && lat.e2e_ms <= in.goodput["e2e_ms"].get<double>();
    f.good += meets;
    const auto& st = resp.server_timings;
    if (st.is_object()) {
      // The row keeps this request's own server figures beside the client's, so one request's
      // TTFT can be set against its prefill on the server (the level keeps their percentiles).
      if (st.contains("prompt_ms") && st["prompt_ms"].is_number()) {
        f.server_prompt_ms.push_back(st["prompt_ms"].get<double>());
        row["server_prompt_ms"] = st["prompt_ms"].get<double>();
      }
      // llama.cpp: predicted_ms runs from the end of the prompt to the last token; the first
      // token is free (the prompt's logits), so its TPOT is predicted_ms / (predicted_n - 1),
      // the same span and count as the client's (E2E - TTFT) / (n - 1).
      if (st.contains("predicted_ms") && st["predicted_ms"].is_number() && st.contains("predicted_n") &&
          st["predicted_n"].is_number() && st["predicted_n"].get<double>() > 1) {
        f.server_tpot_ms.push_back(st["predicted_ms"].get<double>() / (st["predicted_n"].get<double>() - 1));
        row["server_tpot_ms"] = f.server_tpot_ms.back();
      }
    }
    row["status"] = "ok";
    row["ttft_ms"] = lat.ttft_ms;
    row["tpot_ms"] = lat.tpot_ms ? nlohmann::json(*lat.tpot_ms) : nlohmann::json(nullptr);
    row["itl_ms"] = lat.itl_ms;
    row["e2e_ms"] = lat.e2e_ms;
    row["input_tokens"] = resp.prompt_tokens;
    row["output_tokens"] = resp.completion_tokens;
    row["cached_tokens"] = resp.cached_tokens;
    row["first_read_tokens"] = lat.first_read_tokens;
    f.requests.push_back(std::move(row));
  }
  // Rates count completed requests over the span they took (first send, also of a request that
  // failed, to the last token): a level where most requests failed reads as the slow level it was.
  const std::int64_t origin = first_send > 0 ? std::min(first_send, t_first) : t_first;
  f.span_s = t_last > origin ? static_cast<double>(t_last - origin) / 1e9 : 0.0;
  if (f.sent >= 2 && last_send > first_send) f.realized_rate = (f.sent - 1) / (static_cast<double>(last_send - first_send) / 1e9);
  return f;
}

}  // namespace atlas::suites
