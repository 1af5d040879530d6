#include "tools/cuda-bench/token_anatomy.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/cuda/cuda_decoder.hpp"
#include "records/stats.hpp"
#include "suites/decode_anatomy/cupti_tracer.hpp"
#include "suites/decode_anatomy/cupti_kernel_stages.hpp"

namespace atlas::cuda_bench {
namespace {

using suites::CopyCounts;
using suites::CuptiTracer;
using suites::GraphStageMap;
using suites::StageAttribution;
using suites::TraceWindow;
using suites::WindowStageKernels;

struct TokenAnatomy {
  double wall_us = 0, gpu_span_us = 0, gpu_busy_us = 0, gpu_idle_us = 0, launch_latency_us = 0;
  double kernels = 0, api_kernel_launches = 0, api_graph_launches = 0, api_syncs = 0, api_copies = 0, api_total = 0;
  double driver_kernel_launches = 0, driver_graph_launches = 0, driver_syncs = 0;
  double h2d = 0, d2h = 0, h2d_bytes = 0, d2h_bytes = 0, pageable = 0, memsets = 0, sync_records = 0, mallocs = 0;
  std::map<std::string, double> stage_us;
  StageAttribution attribution = StageAttribution::none;
};

TokenAnatomy analyse(const TraceWindow& w, const GraphStageMap& graph, const std::vector<engine::Stage>& stages) {
  TokenAnatomy a;
  a.wall_us = (w.t1 - w.t0) * 1e-3;
  a.kernels = static_cast<double>(w.kernels.size());
  a.api_kernel_launches = w.runtime.kernel_launches;
  a.api_graph_launches = w.runtime.graph_launches;
  a.api_syncs = w.runtime.syncs;
  a.api_copies = w.runtime.copies;
  a.api_total = w.runtime.total;
  a.driver_kernel_launches = w.driver.kernel_launches;
  a.driver_graph_launches = w.driver.graph_launches;
  a.driver_syncs = w.driver.syncs;
  a.mallocs = w.runtime.mallocs + w.driver.mallocs;
  a.memsets = static_cast<double>(w.memsets);
  a.sync_records = static_cast<double>(w.sync_records);
  const CopyCounts copies = count_copies(w);
  a.h2d = copies.h2d;
  a.d2h = copies.d2h;
  a.h2d_bytes = copies.h2d_bytes;
  a.d2h_bytes = copies.d2h_bytes;
  a.pageable = copies.pageable;
  if (!w.busy.empty()) {
    std::uint64_t first = w.busy.front().first, last = 0, busy = 0, cur_s = 0, cur_e = 0;
    for (const auto& [s, e] : w.busy) {
      last = std::max(last, e);
      if (cur_e == 0 || s > cur_e) {
        busy += cur_e - cur_s;
        cur_s = s;
        cur_e = e;
      } else {
        cur_e = std::max(cur_e, e);
      }
    }
    busy += cur_e - cur_s;
    a.gpu_span_us = (last - first) * 1e-3;
    a.gpu_busy_us = busy * 1e-3;
    a.gpu_idle_us = a.gpu_span_us - a.gpu_busy_us;
    a.launch_latency_us = (first - w.t0) * 1e-3;
  }
  const WindowStageKernels ks = stage_kernels(w, graph, stages);
  a.attribution = ks.how;
  for (const auto& [name, k] : ks.by_stage) a.stage_us[name] = k.ns * 1e-3;
  return a;
}

nlohmann::json summarise(const std::vector<TokenAnatomy>& toks, double floor_us) {
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& t : toks) v.push_back(field(t));
    return records::stats::median_or(v, 0.0);
  };
  nlohmann::json j;
  j["tokens"] = toks.size();
  j["wall_us"] = med([](const auto& t) { return t.wall_us; });
  j["gpu_span_us"] = med([](const auto& t) { return t.gpu_span_us; });
  j["gpu_busy_us"] = med([](const auto& t) { return t.gpu_busy_us; });
  j["gpu_idle_gaps_us"] = med([](const auto& t) { return t.gpu_idle_us; });
  j["launch_latency_us"] = med([](const auto& t) { return t.launch_latency_us; });
  nlohmann::json counted;
  counted["host_kernel_launch_calls"] = med([](const auto& t) { return t.api_kernel_launches; });
  counted["graph_launches"] = med([](const auto& t) { return t.api_graph_launches; });
  counted["host_syncs"] = med([](const auto& t) { return t.api_syncs; });
  counted["host_copy_calls"] = med([](const auto& t) { return t.api_copies; });
  counted["runtime_api_calls"] = med([](const auto& t) { return t.api_total; });
  counted["driver_kernel_launch_calls"] = med([](const auto& t) { return t.driver_kernel_launches; });
  counted["kernels_executed"] = med([](const auto& t) { return t.kernels; });
  counted["h2d_copies"] = med([](const auto& t) { return t.h2d; });
  counted["d2h_copies"] = med([](const auto& t) { return t.d2h; });
  counted["h2d_bytes"] = med([](const auto& t) { return t.h2d_bytes; });
  counted["d2h_bytes"] = med([](const auto& t) { return t.d2h_bytes; });
  counted["pageable_copies"] = med([](const auto& t) { return t.pageable; });
  counted["memsets"] = med([](const auto& t) { return t.memsets; });
  counted["sync_activity_records"] = med([](const auto& t) { return t.sync_records; });
  counted["alloc_calls"] = med([](const auto& t) { return t.mallocs; });
  j["per_token"] = counted;
  std::map<std::string, double> stage_sum;
  std::map<std::string, int> how;
  for (const auto& t : toks) {
    ++how[std::string(to_string(t.attribution))];
    for (const auto& [k, v] : t.stage_us) stage_sum[k] += v;
  }
  nlohmann::json st;
  for (const auto& [k, v] : stage_sum) st[k] = v / std::max<std::size_t>(1, toks.size());
  j["stage_gpu_us_mean"] = st;
  // Tokens per attribution method: graph replays should all be "graph_node_id".
  j["stage_attribution"] = how;
  const double wall = j["wall_us"].get<double>();
  j["roofline"] = {{"floor_us", floor_us},
                   {"achieved_pct_of_wall", 100.0 * floor_us / wall},
                   {"achieved_pct_of_gpu_span", 100.0 * floor_us / std::max(1e-9, j["gpu_span_us"].get<double>())}};
  if (100.0 * floor_us / wall > 100.0)
    j["roofline"]["error"] = "achieved above 100% of the copy-bandwidth roofline: a measurement or byte-count error";
  return j;
}

}  // namespace

nlohmann::json run_cuda_decode_anatomy(const engine::ModelConfig& config, const CudaAnatomyOptions& opts,
                                       double copy_bytes_per_s) {
  engine::Model model;
  model.config = config;
  model.source.format = "preset";
  model.source.preset = config.name;
  model.source.seed = 42;
  engine::cuda::DecoderOptions o;
  o.wtype = opts.bf16 ? kernels::ElemType::bf16 : kernels::ElemType::f32;
  o.max_seq = opts.prompt_tokens + 2 * opts.new_tokens + 8;
  engine::cuda::CudaDecoder dec(model, o, 42);
  std::vector<int> prompt(opts.prompt_tokens);
  for (int i = 0; i < opts.prompt_tokens; ++i) prompt[i] = (i * 7919 + 13) % config.vocab_size;

  nlohmann::json out;
  out["model"] = config.name;
  out["dtype"] = opts.bf16 ? "bf16" : "f32";
  out["copy_bandwidth_GBps"] = copy_bytes_per_s / 1e9;
  for (bool graphs : {true, false}) {
    dec.set_graphs(graphs);
    int tok = dec.run(prompt, 0, false);
    // Warm-up outside the trace: captures the buckets this run will meet.
    for (int s = 0; s < opts.new_tokens; ++s) tok = dec.run(std::span<const int>(&tok, 1), opts.prompt_tokens + s, false);
    tok = dec.run(prompt, 0, false);
    const auto captures_before = dec.counters().graph_captures;
    std::vector<TraceWindow> windows;
    GraphStageMap graph;
    {
      CuptiTracer tracer;
      // New executables while subscribed, so the tracer sees each node's clone (its id is what
      // kernel records carry).
      dec.reinstantiate_graphs();
      for (int s = 0; s < opts.new_tokens; ++s) {
        tracer.begin_window();
        tok = dec.run(std::span<const int>(&tok, 1), opts.prompt_tokens + s, false);
        tracer.end_window();
      }
      windows = tracer.finish();
      graph = GraphStageMap(dec, tracer);
    }
    std::vector<TokenAnatomy> toks;
    for (const auto& w : windows) toks.push_back(analyse(w, graph, dec.step_kernel_stages()));
    const int mid_kv = opts.prompt_tokens + opts.new_tokens / 2;
    const double floor_us = dec.bytes_per_token(mid_kv) / copy_bytes_per_s * 1e6;
    nlohmann::json j = summarise(toks, floor_us);
    j["graph_captured"] = graphs && dec.graphs_enabled();
    j["recaptures_during_trace"] = dec.counters().graph_captures - captures_before;
    j["bytes_per_token"] = dec.bytes_per_token(mid_kv);
    std::vector<std::string> veto;
    for (const auto& v : dec.vetoes()) veto.push_back(v.layer + ": " + v.reason);
    j["graph_vetoes"] = veto;
    out[graphs ? "graph" : "eager"] = j;
    const auto& pt = j["per_token"];
    std::printf("anatomy %-11s %-5s wall %7.1f us  gpu span %7.1f  idle %6.1f  kernels %4.0f  launch calls %4.0f  graph "
                "launches %.0f  syncs %.0f  H2D %.0f  D2H %.0f  pageable %.0f  roofline %5.1f%%\n",
                config.name.c_str(), graphs ? "graph" : "eager", j["wall_us"].get<double>(),
                j["gpu_span_us"].get<double>(), j["gpu_idle_gaps_us"].get<double>(),
                pt["kernels_executed"].get<double>(), pt["host_kernel_launch_calls"].get<double>(),
                pt["graph_launches"].get<double>(), pt["host_syncs"].get<double>(), pt["h2d_copies"].get<double>(),
                pt["d2h_copies"].get<double>(), pt["pageable_copies"].get<double>(),
                j["roofline"]["achieved_pct_of_wall"].get<double>());
    std::string stages;
    for (const auto& [k, v] : j["stage_gpu_us_mean"].items()) stages += " " + k + "=" + std::to_string(v.get<double>()).substr(0, 6);
    std::printf("  stage GPU us/token:%s\n", stages.c_str());
    std::fflush(stdout);
  }
  return out;
}

}  // namespace atlas::cuda_bench
