#include "tools/cuda-bench/decode_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "common/clock.hpp"
#include "engine/cuda/cuda_decoder.hpp"
#include "records/stats.hpp"
#include "suites/decode_anatomy/cupti_tracer.hpp"

namespace atlas::cuda_bench {

namespace {

/// GPU time of one traced prefill of `prompt` by kernel (CUPTI; kernels overlap little in a
/// prefill, so the shares add up to about the GPU span). Printed, largest first, and returned.
nlohmann::json prefill_kernel_breakdown(engine::cuda::CudaDecoder& dec, const std::vector<int>& prompt) {
  std::vector<suites::TraceWindow> windows;
  {
    suites::CuptiTracer tracer;
    tracer.begin_window();
    dec.run(prompt, 0, false);
    tracer.end_window();
    windows = tracer.finish();
  }
  std::map<std::string, std::pair<double, int>> by;
  double total = 0;
  for (const auto& k : windows.at(0).kernels) {
    auto& e = by[suites::short_kernel_name(k.name)];
    e.first += (k.end - k.start) * 1e-6;
    e.second += 1;
    total += (k.end - k.start) * 1e-6;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by.begin(), by.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  nlohmann::json j = nlohmann::json::array();
  std::printf("  prefill of %zu tokens, GPU ms by kernel (CUPTI; sum %.2f ms, wall %.2f ms):\n", prompt.size(), total,
              (windows[0].t1 - windows[0].t0) * 1e-6);
  for (const auto& [name, v] : rows) {
    j.push_back({{"kernel", name}, {"ms", v.first}, {"launches", v.second}});
    std::printf("    %8.2f ms %5.1f%%  x%-5d %s\n", v.first, 100.0 * v.first / total, v.second, name.substr(0, 90).c_str());
  }
  return j;
}

}  // namespace

nlohmann::json run_cuda_decode_bench(const engine::ModelConfig& config, const CudaDecodeBenchOptions& opts,
                                     double copy_bytes_per_s) {
  using engine::cuda::CudaDecoder;
  engine::Model model;
  model.config = config;
  model.source.format = "preset";
  model.source.preset = config.name;
  model.source.seed = 42;
  const int max_seq = std::max(opts.prompt_tokens + opts.new_tokens, opts.ttft_prompt_tokens + 1) + 64;
  nlohmann::json out;
  out["model"] = config.name;
  out["dtype"] = opts.bf16 ? "bf16" : "f32";
  out["prompt_tokens"] = opts.prompt_tokens;
  out["new_tokens"] = opts.new_tokens;
  out["copy_bandwidth_GBps"] = copy_bytes_per_s / 1e9;
  for (bool graphs : {true, false}) {
    engine::cuda::DecoderOptions o;
    o.wtype = opts.bf16 ? kernels::ElemType::bf16 : kernels::ElemType::f32;
    o.max_seq = max_seq;
    o.graphs = graphs;
    const std::int64_t t_load0 = atlas::now_ns();
    CudaDecoder dec(model, o, 42);
    const double load_s = (atlas::now_ns() - t_load0) * 1e-9;
    std::vector<int> prompt(opts.prompt_tokens);
    for (int i = 0; i < opts.prompt_tokens; ++i) prompt[i] = (i * 7919 + 13) % config.vocab_size;
    std::vector<double> tok_s, itl_p50_us, ttft_ms;
    std::int64_t captures = 0;
    // What the prompt asked of the driver (a hybrid's prompt runs as decode steps: one graph
    // launch, copy pair and sync per prompt token), subtracted from the per-token figures.
    engine::cuda::DecodeCounters at_prefill;
    for (int rep = 0; rep < opts.repeats + 1; ++rep) {  // first repetition warms up (captures)
      dec.reset_counters();
      const std::int64_t t0 = atlas::now_ns();
      int tok = dec.run(prompt, 0, false);
      const std::int64_t t1 = atlas::now_ns();
      at_prefill = dec.counters();
      std::vector<double> itl;
      std::int64_t prev = t1;
      for (int s = 0; s < opts.new_tokens; ++s) {
        tok = dec.run(std::span<const int>(&tok, 1), opts.prompt_tokens + s, false);
        const std::int64_t now = atlas::now_ns();
        itl.push_back((now - prev) * 1e-3);
        prev = now;
      }
      if (rep == 0) {
        captures = dec.counters().graph_captures;
        continue;
      }
      ttft_ms.push_back((t1 - t0) * 1e-6);
      tok_s.push_back(opts.new_tokens / ((prev - t1) * 1e-9));
      itl_p50_us.push_back(records::stats::median_or(itl, 0.0));
    }
    const auto& c = dec.counters();
    const int mid_kv = opts.prompt_tokens + opts.new_tokens / 2;
    const double bytes_tok = static_cast<double>(dec.bytes_per_token(mid_kv));
    const double roof_tok_s = copy_bytes_per_s / bytes_tok;
    nlohmann::json r;
    r["load_s"] = load_s;
    r["decode_tok_s"] = records::stats::median_or(tok_s, 0.0);
    r["itl_p50_us"] = records::stats::median_or(itl_p50_us, 0.0);
    r["prefill_ttft_ms"] = records::stats::median_or(ttft_ms, 0.0);
    r["bytes_per_token"] = bytes_tok;
    r["roofline_tok_s"] = roof_tok_s;
    r["roofline_pct"] = 100.0 * records::stats::median_or(tok_s, 0.0) / roof_tok_s;
    r["graph_captures_warmup"] = captures;
    const double steps = static_cast<double>(c.decode_steps);
    r["per_token"] = {{"graph_launches", double(c.graph_launches - at_prefill.graph_launches) / steps},
                      {"kernel_launches", double(c.kernel_launches - at_prefill.kernel_launches) / steps},
                      {"host_syncs", double(c.host_syncs - at_prefill.host_syncs) / steps},
                      {"h2d_copies", double(c.h2d_copies - at_prefill.h2d_copies) / steps},
                      {"d2h_copies", double(c.d2h_copies - at_prefill.d2h_copies) / steps},
                      {"kernels_per_step", dec.step_kernel_stages().size()}};
    const auto& plan = dec.memory_plan();
    r["memory_plan_bytes"] = {{"weights", plan.weights}, {"kv_cache", plan.kv_cache},
                              {"decode_workspace", plan.decode_workspace},
                              {"prefill_workspace", plan.prefill_workspace}, {"total", plan.total},
                              {"prefill_chunk", plan.prefill_chunk}};
    if (graphs && opts.ttft_prompt_tokens > 0) {
      std::vector<int> longp(opts.ttft_prompt_tokens);
      for (int i = 0; i < opts.ttft_prompt_tokens; ++i) longp[i] = (i * 104729 + 7) % config.vocab_size;
      std::vector<double> t;
      for (int rep = 0; rep < opts.repeats + 1; ++rep) {
        const std::int64_t t0 = atlas::now_ns();
        dec.run(longp, 0, false);
        if (rep > 0) t.push_back((atlas::now_ns() - t0) * 1e-6);
      }
      r["ttft_long_prompt_ms"] = records::stats::median_or(t, 0.0);
      r["ttft_long_prompt_tokens"] = opts.ttft_prompt_tokens;
      r["ttft_long_prompt_kernels"] = prefill_kernel_breakdown(dec, longp);
    }
    out[graphs ? "graph" : "eager"] = r;
    std::printf("%-11s %-5s %-5s decode %8.1f tok/s  (roofline %7.1f tok/s at %.1f GB/tok, %5.1f%%)  ITL p50 %7.1f us  "
                "prefill(%d) %7.2f ms%s\n",
                config.name.c_str(), out["dtype"].get<std::string>().c_str(), graphs ? "graph" : "eager",
                r["decode_tok_s"].get<double>(), roof_tok_s, bytes_tok / 1e9, r["roofline_pct"].get<double>(),
                r["itl_p50_us"].get<double>(), opts.prompt_tokens, r["prefill_ttft_ms"].get<double>(),
                r.contains("ttft_long_prompt_ms")
                    ? (" TTFT(" + std::to_string(opts.ttft_prompt_tokens) + ") " +
                       std::to_string(r["ttft_long_prompt_ms"].get<double>()) + " ms")
                          .c_str()
                    : "");
    std::fflush(stdout);
  }
  return out;
}

}  // namespace atlas::cuda_bench
